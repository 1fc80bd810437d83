/* magpie trace compare: side-by-side comparison of two or more
 * TraceLens-compatible performance reports (directories of per-sheet CSV
 * files or .xlsx workbooks, as `magpie trace report` and TraceLens write
 * them), with the
 * sheets, columns, row order and cell text of TraceLens's
 * TraceLens_compare_perf_reports_pytorch (src/tracelens/report_compare.c;
 * docs/trace-compare.md). */
#ifndef MAGPIE_TRACELENS_COMPARE_H
#define MAGPIE_TRACELENS_COMPARE_H

#include <stddef.h>

#include <magpie/base.h>
#include <magpie/tracelens.h>

/* Sheet groups (TraceLens's --sheets choices). */
enum {
    MP_TLCMP_GPU_TIMELINE = 1 << 0,
    MP_TLCMP_OPS_SUMMARY = 1 << 1,
    MP_TLCMP_KERNEL_SUMMARY = 1 << 2,
    MP_TLCMP_OPS_ALL = 1 << 3,
    MP_TLCMP_ROOFLINE = 1 << 4,
    MP_TLCMP_ALL = 0x1f,
};

struct mp_tlcmp_opts {
    const char *const *reports; /* report directories or .xlsx files; the first is the
                                   baseline */
    size_t n_reports;           /* >= 2 */
    const char *const *names;   /* one tag per report, or NULL: the file names without
                                   their extension */
    unsigned sheets;            /* MP_TLCMP_* bits; 0 = all */
    /* one line per skipped sheet (TraceLens prints them), may be NULL */
    void (*on_note)(const char *line, void *user);
    void *note_user;
};

/* Parses one --sheets word (gpu_timeline, ops_summary, kernel_summary,
 * ops_all, roofline, all) into its MP_TLCMP_* bits; 0 when unknown. */
unsigned mp_tlcmp_sheet_bits(const char *word);

/* The comparison: sheets in TraceLens's order, each as CSV text the way
 * pandas' to_csv writes it. Sheet names are TraceLens's (any length; a
 * workbook cuts them to 31 characters as pandas does). */
struct mp_tlcmp_result {
    char **names;
    struct mp_buf *csv;
    size_t n;
};

/* Builds the comparison into *out (free with mp_tlcmp_free). MP_EINVAL (with
 * d naming the report, sheet and column) for a missing sheet or key column,
 * repeated tags or a non-numeric compared column; MP_EIO / MP_EPARSE for
 * unreadable reports (a report that is not a directory is read as an .xlsx
 * workbook). */
int mp_tlcmp_build(const struct mp_tlcmp_opts *o, struct mp_tlcmp_result **out, struct mp_diag *d);
/* Writes each sheet as <dir>/<name>.csv (atomically; dir is made). */
int mp_tlcmp_write_csvs(const struct mp_tlcmp_result *r, const char *dir, struct mp_diag *d);
/* Writes one workbook (mp_report_write_xlsx: one worksheet per sheet). */
int mp_tlcmp_write_xlsx(const struct mp_tlcmp_result *r, const char *path, struct mp_diag *d);
void mp_tlcmp_free(struct mp_tlcmp_result *r);

/* The tag TraceLens gives a report path by default:
 * os.path.splitext(os.path.basename(path))[0], into buf. */
void mp_tlcmp_default_tag(const char *path, char *buf, size_t len);

#endif
