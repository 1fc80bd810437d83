/* Private helpers of the TraceLens-compatible report (src/tracelens). */
#ifndef MP_TRACELENS_INT_H
#define MP_TRACELENS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

struct mp_trace_store;

/* Python repr() of a float (shortest round trip), appended to b. */
int tl_pyfloat(struct mp_buf *b, double v);
/* Python repr() of a str. */
int tl_pystr_repr(struct mp_buf *b, const char *s, size_t n);
/* Python repr() of a JSON value with lists turned into tuples, as TraceLens's
 * list_to_tuple before printing: [[1, 2], []] -> ((1, 2), ()). */
int tl_json_to_pyrepr(struct mp_buf *b, const char *p, const char *e);
/* Same with lists kept as Python lists ([[1, 2], []]). */
int tl_json_to_pylist_repr(struct mp_buf *b, const char *p, const char *e);
/* The four shape columns of an op (Input Dims, Input type, Input Strides,
 * Concrete Inputs) as Python reprs of their tuples, separated by \x1f, empty
 * for an absent one; one pass over the args text. */
int tl_args_key(struct mp_buf *b, const char *args, size_t len);

/* Memo of tl_args_key per event (the same op is keyed by several sheets). */
struct tl_argkeys {
    struct mp_intern *keys;
    struct mp_i64map by_args; /* args text (its address) -> key id: ops share their args
                                 texts in the store, so there are few */
    struct mp_buf tmp;
};

/* The key of event uid, or NULL when out of memory. Valid until fini. */
const char *tl_argkeys_get(struct tl_argkeys *k, const struct mp_trace_store *s, int32_t uid);
void tl_argkeys_fini(struct tl_argkeys *k);
/* tl_json_to_pyrepr of args[key]; *present tells whether the key exists. */
int tl_args_pyrepr(struct mp_buf *b, const char *args, size_t args_len, const char *key,
                   bool *present);

#include <stdint.h>

#include <magpie/fmt.h>
#include <magpie/trace_tree.h>

struct mp_report;

/* Statistics as pandas/numpy compute them: sums and means with numpy's
 * pairwise summation, median as the midpoint, std with the given ddof. */
struct tl_stats {
    double mean, median, std, min, max, sum;
    bool has_std;
};

int tl_stats(const double *x, size_t n, int ddof, struct tl_stats *s);
/* The same as a pandas groupby aggregation gives them for one group (x its
 * non-missing values in row order): sum and mean by mp_sum_pandas_group
 * (ids_sorted: the column has no NaN and the rows' group ids never
 * decrease), std (ddof 1) by Welford's update as group_var. */
int tl_group_stats(const double *x, size_t n, bool ids_sorted, struct tl_stats *s);
/* Appends ", 'mean_duration_us': m, 'median_duration_us': ..." (mean, median,
 * std_dev, min, max as Python floats): the tail of a kernel-details entry. */
int tl_duration_stats_repr(struct mp_buf *cell, const struct tl_stats *st);
/* One entry of a trunc_kernel_details list (a name cut to 64 characters, its
 * stream, its mean rounded to 2 decimals), preceded by ", " unless first. */
int tl_trunc_detail(struct mp_buf *cell, bool first, const char *name, bool has_stream,
                    long long stream, double mean);
/* A float cell (Python repr), empty when !present or NaN. */
int tl_csv_float(struct mp_csv *csv, struct mp_buf *cell, double v, bool present);

/* What the value functions of a sheet's column table see while one
 * group's row is printed: each sheet's file defines its own (ops.c,
 * category_sheets.c, unified.c); the shared code only passes it on. */
struct tl_emit;

/* Adds an empty sheet to r; its CSV buffer, NULL when out of memory. */
struct mp_buf *tl_new_sheet(struct mp_report *r, const char *name);
void tl_sheets_final(struct mp_report *r);
/* Adds sheet name to r and starts its CSV: csv writes to the sheet, whose
 * header line is the texts that follow (up to a NULL) and a line end. */
int tl_csv_sheet(struct mp_report *r, const char *name, struct mp_csv *csv, ...);

/* One column of a sheet's column table: its header, when it is printed
 * (0: always, else a set of the sheet's flags) and the function printing
 * its cell (NULL: printed by the column before); field, arg and stat tell
 * shared value functions which figure to print (a field offset, an args
 * key, a statistics block). */
struct tl_col {
    const char *head;
    int (*cell)(struct tl_emit *e, const struct tl_col *c);
    size_t field;
    const char *arg;
    unsigned when;
    int stat;
};

#define TL_COL(h, w, f)                                                                            \
    {                                                                                              \
        .head = (h), .when = (w), .cell = (f)                                                      \
    }
#define TL_KEY(h, w)                                                                               \
    {                                                                                              \
        .head = (h), .when = (w)                                                                   \
    }
/* A figure f of statistics block blk, printed by fn. */
#define TL_STAT(h, w, fn, blk, f)                                                                  \
    {                                                                                              \
        .head = (h), .when = (w), .cell = (fn), .stat = (blk),                                     \
        .field = offsetof(struct tl_stats, f)                                                      \
    }
/* Field f of the row struct type, printed by fn. */
#define TL_FIELD(h, fn, type, f)                                                                   \
    {                                                                                              \
        .head = (h), .cell = (fn), .field = offsetof(type, f)                                      \
    }

/* The key columns the ops_unique_args and unified_perf_summary tables
 * share: process and thread names (tl_meta_get), then the four args
 * columns of tl_args_key; their cells come from the key-cells column
 * before them. */
#define TL_META_KEYS TL_KEY("process_name", 0), TL_KEY("process_label", 0), TL_KEY("thread_name", 0)
#define TL_ARGS_KEYS                                                                               \
    TL_KEY("Input Dims", 0), TL_KEY("Input type", 0), TL_KEY("Input Strides", 0),                  \
        TL_KEY("Concrete Inputs", 0)

/* The overlap columns after overlapping_kernels_details (when w), printed
 * with it by tl_overlap_cells. */
#define TL_OVERLAP_KEYS(w)                                                                         \
    TL_KEY("trunc_overlapping_kernels_details", w), TL_KEY("overlap_pct_mean", w),                 \
        TL_KEY("overlap_pct_median", w), TL_KEY("overlap_pct_std", w),                             \
        TL_KEY("overlap_pct_min", w), TL_KEY("overlap_pct_max", w)

static inline bool tl_col_on(const struct tl_col *c, unsigned when)
{
    return c->when == 0 || (c->when & when) != 0;
}

/* The header line of the columns printed under when. */
int tl_cols_header(struct mp_buf *b, const struct tl_col *cols, size_t n, unsigned when);
/* The cells of one row: every printing column under when, in order. */
int tl_cols_cells(struct tl_emit *e, const struct tl_col *cols, size_t n, unsigned when);
/* The fields of a group key (texts joined by \x1f) as CSV cells. */
int tl_csv_key_cells(struct mp_csv *csv, struct mp_buf *key);
/* The figure at offset field of st over cnt values: the sum always, std
 * when there is one, the others over at least one value. */
int tl_stat_cell(struct mp_csv *csv, struct mp_buf *cell, const struct tl_stats *st, size_t cnt,
                 size_t field);

/* A group of a sheet's rows (the per-category sheets, unified_perf_summary),
 * as pandas' groupby forms it. */
struct tl_group {
    size_t *m; /* member rows, in row order */
    size_t n, cap;
    double kt_sum;   /* Kernel Time (µs)_sum as pandas sums it */
    bool ids_sorted; /* pandas' reduceat path */
    int32_t uid;     /* the UID its first row prints (UID_first, ex_UID) */
    /* kl_overlap sheets: the groups of the same keys but the overlap names */
    int32_t base;     /* id of the key without the overlap names */
    double base_kt;   /* their kernel time */
    int32_t base_uid; /* their smallest uid */
    /* the per-category sheets */
    size_t first;    /* row index of the first member */
    int part;        /* _bwd sheets: 0 = backward metrics, 1 = rows moved from _fwd */
    bool all_nested; /* every member sits inside another row of the table */
    /* unified_perf_summary: the key, printed as its cells */
    struct mp_buf key;
};

/* The groups of a sheet, in first-appearance order until sorted. */
struct tl_groups {
    struct tl_group *g;
    size_t ng;
    struct mp_intern *keys;  /* group keys */
    struct mp_intern *bkeys; /* kl_overlap: the keys without the overlap names */
    int32_t *gid;            /* group of each key id, -1 before its first row */
    size_t gcap;
};

/* Room for nrows groups; bkeys only with ov. 0 or MP_ENOMEM. */
int tl_groups_init(struct tl_groups *gs, size_t nrows, bool ov);
void tl_groups_fini(struct tl_groups *gs);
/* Adds row (kernel time kt) to the group of key, a new one (*created, its
 * base bid) at the key's first row; *out the group. */
int tl_groups_add(struct tl_groups *gs, const struct mp_buf *key, int32_t bid, size_t row,
                  double kt, struct tl_group **out, bool *created);
/* Adds row (kernel time kt) to the existing group g of gs, as
 * tl_groups_add does for a key that has one. */
int tl_groups_add_to(struct tl_groups *gs, size_t g, size_t row, double kt);
/* kl_overlap: each group's base totals, the kernel time and smallest uid
 * over the groups sharing its base key. */
int tl_groups_base_order(struct tl_groups *gs);
/* Statistics of the double at offset off of the group's rows (rows[] of
 * stride bytes) over its non-missing values (pandas skipna); *cnt their
 * number. */
int tl_group_stats_over(const struct tl_group *g, const void *rows, size_t stride, size_t off,
                        struct tl_stats *st, size_t *cnt);
/* pandas' "first": the first non-missing value of that double. */
double tl_group_first(const struct tl_group *g, const void *rows, size_t stride, size_t off);

/* The kernels of row r of rows[] (a sheet's own row type): *nk of them. */
typedef const int32_t *tl_kernels_of(const void *rows, size_t r, size_t *nk);
/* The template row of group g: its first member with kernels. */
size_t tl_group_template(const struct tl_group *g, const void *rows, tl_kernels_of *kof);
/* kernel_details_summary and trunc_kernel_details of group g over template
 * row tr: the durations of the members whose kernel list has the
 * template's length; stacks and order as for tl_kernel_details_cells_cs.
 * A template without kernels prints "[]" and an empty cell. */
int tl_group_kernel_details(const struct mp_trace_tree *t, const struct tl_group *g,
                            const void *rows, tl_kernels_of *kof, size_t tr,
                            const char *const *stacks, size_t *order, struct mp_csv *csv,
                            struct mp_buf *cell);

/* process_name / process_labels / thread_name from the metadata events. */
struct tl_meta {
    struct mp_intern *keys;
    char **vals;
    size_t cap;
};

int tl_meta_build(const struct mp_trace_store *s, struct tl_meta *m);
/* The value, or "Unknown" as TraceLens prints a missing one. */
const char *tl_meta_get(const struct tl_meta *m, const char *pid, const char *tid,
                        const char *field);
void tl_meta_fini(struct tl_meta *m);

/* process_name, process_labels and thread_name of events (tl_meta_get with
 * tid "0" for the first two), remembered per (pid, tid) pair: a sheet's rows
 * come from a few threads. Owned by one caller; m must outlive it. */
struct tl_meta_names {
    const struct tl_meta *m;
    struct mp_i64map at; /* (pid id + 1) << 32 | (tid id + 1) -> index in v */
    const char *(*v)[3];
    size_t n, cap;
    int64_t last_key; /* the last pair asked for and its index */
    size_t last;
};

void tl_meta_names_init(struct tl_meta_names *c, const struct tl_meta *m);
/* The three names of event uid (texts of m), NULL when out of memory. */
const char *const *tl_meta_names_of(struct tl_meta_names *c, const struct mp_trace_store *s,
                                    int32_t uid);
void tl_meta_names_fini(struct tl_meta_names *c);

/* args["stream"] of a GPU event. 0 or an error. */
int tl_kernel_stream(const struct mp_trace_store *s, int32_t k, int64_t *out);
/* The kernel_details summary and trunc_kernel_details cells of a group whose
 * template kernel list is tmpl[0..nk) and kdur[i][0..nrows) the durations of
 * position i over the members with the template's length. */
int tl_kernel_details_cells(const struct mp_trace_tree *t, const int32_t *tmpl, size_t nk,
                            double *const *kdur, size_t nrows, struct mp_csv *csv,
                            struct mp_buf *cell);
/* The same with each template kernel's call stack (a Python list repr, or
 * NULL for none) printed as its 'call_stack' key, after 'stream'; order (if
 * not NULL) gets the template positions in the order they are printed. */
int tl_kernel_details_cells_cs(const struct mp_trace_tree *t, const int32_t *tmpl, size_t nk,
                               double *const *kdur, size_t nrows, const char *const *stacks,
                               size_t *order, struct mp_csv *csv, struct mp_buf *cell);
/* TraceLens's pseudo-op extensions after its SGLang name pass (pseudo.c):
 * appends the pseudo ops to s and inserts them into t; *added gets their
 * number. 0 or a negative MP_E* code. */
int tl_pseudo_apply(struct mp_trace_store *s, struct mp_trace_tree *t, size_t *added);

/* Adds ops_summary_by_category, ops_summary and ops_unique_args (ops.c). */
struct mp_report_opts;
struct tl_overlap;
/* ov (may be NULL) adds ops_unique_args_kl_overlap. */
int tl_sheets_ops(struct mp_report *r, const struct mp_trace_tree *t, struct tl_argkeys *ak,
                  const struct mp_report_opts *o, struct tl_overlap *ov,
                  struct mp_buf *(*new_sheet)(struct mp_report *, const char *));

struct mp_roofline_arch;
struct mp_roofline_memo;
/* Adds the per-category perf sheets (GEMM, SDPA_fwd, ...) (category_sheets.c); arch
 * may be NULL (no roofline columns). */
int tl_sheets_perf(struct mp_report *r, const struct mp_trace_tree *t,
                   const struct mp_roofline_arch *arch, const struct mp_report_opts *o,
                   const char *const *annot, struct tl_overlap *ov, struct mp_roofline_memo *memo,
                   struct mp_buf *(*new_sheet)(struct mp_report *, const char *));

/* Adds unified_perf_summary (unified.c); first_kernel[i] is the first
 * direct kernel of launcher i (category fallback), -1 otherwise. */
int tl_sheet_unified(struct mp_report *rep, const struct mp_trace_tree *t,
                     const int32_t *first_kernel, const struct mp_roofline_arch *arch,
                     struct tl_argkeys *ak, const struct mp_report_opts *o,
                     const char *const *annot, struct tl_overlap *ov, struct mp_roofline_memo *memo,
                     struct mp_buf *(*new_sheet)(struct mp_report *, const char *));

/* Adds coll_analysis (coll.c) when the trace has linked collective kernels. */
int tl_sheet_coll(struct mp_report *rep, const struct mp_trace_tree *t);

/* Communication kernel names (nccl, rccl, cross_device_reduce). */
bool mp_report_is_comm_name(const char *name);

/* The kernels an op is timed over, sorted by ts (stable): the op's subtree
 * (forward), or the subtrees of the backward nodes linked to the op or its
 * descendants (bwd). *out is malloc'd. */
int tl_row_kernels(const struct mp_trace_tree *t, int32_t uid, bool bwd, int32_t **out, size_t *n);

struct mp_roofline_result;
/* Models op uid over its kernels (tl_row_kernels): *k / *nk the kernels in
 * ts order (malloc'd), *kt their busy time, *pr the perf model's result
 * (fini it), through memo (may be NULL). On an error code nothing is left
 * allocated. */
int tl_model_op(const struct mp_trace_tree *t, const char *const *annot, int32_t uid, bool bwd,
                struct mp_roofline_memo *memo, int32_t **k, size_t *nk, double *kt,
                struct mp_roofline_result *pr);

/* TraceLens's apply_annotation: for every op whose name starts with one of
 * the attention op names (all of TraceLens's inference list when inference,
 * else vLLM's unified attention only), the name of the first user_annotation
 * (by ts) that encloses it. *out[uid] points into the store's strings (NULL
 * = "NA"); *out itself is malloc'd, or NULL when no op matched. */
int tl_apply_annotation(const struct mp_trace_tree *t, bool inference, const char ***out);

/* An event's start time and an index (a UID or a position): sorted by
 * tl_cmp_ts_idx, by ts with ties in index order. */
struct tl_ts_idx {
    double ts;
    int32_t idx;
};

int tl_cmp_ts_idx(const void *a, const void *b);

/* A memo of tl_op_category (the caller's; all zero to start). */
struct tl_catmemo {
    struct mp_i64map at; /* pair of name ids -> index in cats */
    const char **cats;   /* the few distinct categories */
    size_t n, cap;
};

/* mp_roofline_category of event op's name and its first kernel fk's (-1:
 * none), remembered in m per pair of name ids. */
const char *tl_op_category(struct tl_catmemo *m, const struct mp_trace_tree *t, int32_t op,
                           int32_t fk);
void tl_catmemo_fini(struct tl_catmemo *m);
/* qsort(o, n, sizeof(*o), tl_cmp_ts_idx) (distinct indexes make the order
 * total unless a ts is NaN): short lists by insertion, long ones whose
 * indexes ascend by a stable radix sort on ts, NaN or -0.0 by qsort. */
void tl_sort_ts_idx(struct tl_ts_idx *o, size_t n);

/* The byte length of the first max code points of the UTF-8 text s[0..len)
 * (len when it has no more). */
size_t tl_utf8_prefix(const char *s, size_t len, size_t max);

/* Python's re.sub(r"_\d+", "", s[0..n)) written to out (n + 1 bytes, NUL
 * terminated); returns its length. */
size_t tl_strip_digit_suffixes(const char *s, size_t n, char *out);

/* Python repr of a list of strings ("['a', 'b']"), appended to b. */
int tl_pylist_repr(struct mp_buf *b, const char *const *v, size_t n);

/* Python-like cell of one raw JSON value of a collective's args: strings
 * unquoted, numbers as written (also returned in *numv with *is_num set),
 * lists as tuples, booleans as True/False; NULL for an empty value or null.
 * malloc'd. */
char *tl_json_cell(const char *p, size_t n, bool *is_num, double *numv);

/* Bytes per element of a collective's dtype as the profiler names it
 * ("BFloat16", "Float", ...); 0 when unknown. */
int tl_dtype_bytes(const char *dtype);

/* Orders two rows of key cells field by field: numerically where both
 * cells are numbers, else by text (the grouping order of the collective
 * tables). */
int tl_cmp_cells(char *const *ca, const bool *na, const double *va, char *const *cb, const bool *nb,
                 const double *vb, int n);

/* ---- collective summaries (coll.c, nccl.c) ---- */

/* The key columns of a collective as TraceLens's NcclAnalyser reads them
 * from its kernel's args, in the order its tables print them. */
enum {
    TL_CF_PGN,
    TL_CF_PGR,
    TL_CF_NAME,
    TL_CF_GSIZE,
    TL_CF_DTYPE,
    TL_CF_IN,
    TL_CF_OUT,
    TL_CF_INSPLIT,
    TL_CF_OUTSPLIT,
    TL_CF_STREAM,
    TL_CF_N
};

extern const char *const tl_coll_fields[TL_CF_N];
/* The header of a "long" summary (coll_analysis, nccl_summary_long) up to
 * operation_count, without the line end. */
extern const char tl_coll_summary_head[];

/* A group of equal-key collective rows: its first row (in key order), its
 * size, its dur_sum and its first-appearance order. */
struct tl_coll_grp {
    size_t first, n;
    double sum;
    size_t order;
};

/* qsort order of groups: dur_sum, largest first, then first appearance. */
int tl_cmp_coll_grp(const void *x, const void *y);
/* The cells of a summary row after its key: In/Out msg size (MB)_first,
 * dur_sum, dur_mean, dur_std (empty unless has_std), dur_min, dur_max,
 * operation_count. */
int tl_coll_summary_cells(struct mp_csv *csv, struct mp_buf *cell, double in_mb, double out_mb,
                          double sum, double mean, double std, bool has_std, double min, double max,
                          size_t n);

/* Grows *gid (interned key id -> group index, -1 = no group yet) so that
 * id is a valid index; new slots are -1. 0 or MP_ENOMEM. */
int tl_gid_reserve(int32_t **gid, size_t *cap, int32_t id);

/* ---- --include_overlap_info (overlap.c) ---- */

/* One entry of an op's overlapping_kernels_details: the overlapping kernels
 * of one name, their mean duration and mean share of the op's kernel time
 * (both rounded to 2 decimals as TraceLens does), the first one's stream. */
struct tl_ovdet {
    const char *name; /* borrowed from the store */
    double dur, pct;
    bool has_dur, has_stream;
    int64_t stream;
};

/* An op's overlap columns; names == NULL, ndet == 0 and !has_pct is None. */
struct tl_ovinfo {
    char *names; /* Python list repr of the overlapping kernel names */
    struct tl_ovdet *det;
    size_t ndet;
    bool has_pct;
    double pct; /* overlap_pct */
};

struct tl_overlap;

/* Runs TraceLens's overlap sweep over the GPU timeline's events and the
 * launcher tables' per-op info. tl_overlap_free(NULL) is a no-op. */
int tl_overlap_new(const struct mp_trace_tree *t, bool include_unlinked, struct tl_overlap **out);
void tl_overlap_free(struct tl_overlap *ov);
/* The info of op uid as ops_unique_args and the per-category sheets see it
 * (never NULL; all None unless uid launches kernels). */
const struct tl_ovinfo *tl_overlap_launcher(const struct tl_overlap *ov, int32_t uid);
/* The same as unified_perf_summary sees it (recomputed over the op's
 * subtree GPU events when the launcher pass found no overlap). */
int tl_overlap_unified(struct tl_overlap *ov, int32_t uid, const struct tl_ovinfo **out);
/* The same for a synthetic row of the unified table: the launcher info of
 * parent uid if it found overlaps, else the info over its one kernel. */
int tl_overlap_kernel(struct tl_overlap *ov, int32_t uid, int32_t kernel,
                      const struct tl_ovinfo **out);
/* Test hook for the CPython set emulation: applies ops in order (x >= 0
 * adds x, x < 0 discards -x - 1) to an empty set and returns its elements
 * in iteration order (*out malloc'd). 0 or MP_ENOMEM. */
int tl_pyset_replay(const int64_t *ops, size_t n, int32_t **out, size_t *nout);
/* The names cell ("" for None). */
const char *tl_ovinfo_names(const struct tl_ovinfo *in);
/* A group's overlapping_kernels_details summary, its truncated copy and the
 * five overlap_pct statistics (rounded to 2 decimals, missing std as 0.0,
 * when rounded) over the members m[0..n). */
int tl_overlap_cells(const struct tl_ovinfo *const *m, size_t n, bool rounded, struct mp_csv *csv,
                     struct mp_buf *cell);

/* ---- .xlsx reports for trace compare (compare_xlsx.c) ---- */

/* One worksheet cell as pandas' read_excel sees it through openpyxl. */
enum tl_xc_type { TL_XC_EMPTY, TL_XC_NA, TL_XC_INT, TL_XC_FLOAT, TL_XC_BOOL, TL_XC_STR };

struct tl_xlsx_cell {
    enum tl_xc_type type;
    bool b;
    long long i;
    double v;
    char *s; /* TL_XC_STR, malloc'd */
};
struct tl_xlsx;
/* Reads the workbook at path (whole file, zip directory, sheet list, shared
 * strings). MP_EPARSE with d naming the file when it is not an xlsx. */
int tl_xlsx_open(const char *path, struct tl_xlsx **out, struct mp_diag *d);
void tl_xlsx_close(struct tl_xlsx *x);
size_t tl_xlsx_nsheets(const struct tl_xlsx *x);
const char *tl_xlsx_sheet_name(const struct tl_xlsx *x, size_t i);
/* The cells of sheet as a dense nrows x ncols grid from A1 (row-major,
 * trailing empty rows and columns dropped; free with tl_xlsx_grid_free).
 * MP_ENOTFOUND when the workbook has no such sheet. */
int tl_xlsx_read_sheet(struct tl_xlsx *x, const char *sheet, const char *path,
                       struct tl_xlsx_cell **grid, size_t *nrows, size_t *ncols, struct mp_diag *d);
void tl_xlsx_grid_free(struct tl_xlsx_cell *g, size_t nrows, size_t ncols);

#endif
