/* Fixtures shared by the roofline tests (helpers.c). The goldens are the
 * CSVs TraceLens itself wrote for the shared traces
 * (../shared/data/traces); the oracle cases are values TraceLens's own perf
 * model classes computed for inputs the goldens do not reach. */
#ifndef MP_TEST_ROOFLINE_HELPERS_H
#define MP_TEST_ROOFLINE_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <magpie/roofline.h>

/* A CSV file read whole, with Python csv.writer's quoting; rows[0] is the
 * header and short rows are padded to ncols empty cells. */
struct csv {
    size_t ncols, nrows;
    char ***rows;
};

bool csv_read(const char *path, struct csv *c);
void csv_free(struct csv *c);
int csv_col(const struct csv *c, const char *name);
/* the cell of row r in the column named name, or NULL without that column */
const char *cell(const struct csv *c, size_t r, const char *name);

/* A Python literal (a cell's repr) as JSON, or NULL. */
json_t *lit_parse(const char *s);
bool lit_equal(json_t *a, json_t *b);
/* A param cell and a param text mean the same Python value. */
bool param_equal(const char *golden, const char *mine);
bool num_close(double a, double b);
/* empty, None or NaN */
bool is_missing(const char *s);

/* MP_SHARED when it holds data/traces, else NULL (the golden tests skip). */
const char *shared(void);

struct files {
    char **v;
    size_t n, cap;
};

/* every file named base under dir, recursively */
void find_files(const char *dir, const char *base, struct files *out);
void files_free(struct files *f);
/* kernel names of a kernel-details summary cell, in listed order */
size_t kernel_names(const char *cellv, char ***out);
void names_free(char **v, size_t n);

const struct mp_roofline_param *find_param(const struct mp_roofline_result *r, const char *key);
/* the model of one op with args and nothing else; it must not fail */
void run(const char *name, const char *args, struct mp_roofline_result *r);
/* a param's text, "<None>" for None, "<absent>" without it */
const char *ptext(const struct mp_roofline_result *r, const char *key);
/* Two results agree in everything a caller reads. */
void assert_same_result(const struct mp_roofline_result *a, const struct mp_roofline_result *b);

/* An oracle case: the values TraceLens's own perf model classes computed
 * (snapshot 171dd747, run in Python on the same args): status, GFLOPS,
 * bytes (NAN for None), compute spec, the param_details as
 * "key=str(value)" lines in order ("<None>" for None), and the backward
 * status and values. */
struct oracle {
    const char *name, *args, *annotation, *kernel, *kv_cache_dtype, *category;
    int status;
    double gflops, bytes;
    const char *spec;
    int status_bwd;
    double gflops_bwd, bytes_bwd;
    const char *params;
};

bool oracle_close(double got, double want);
/* Models every case, prints each mismatch and fails on any; what names the
 * table in the printed count. */
void oracle_check(const struct oracle *cases, size_t n, const char *what);

#endif
