/* magpie analysis: trace analyses built on the streaming parser.
 *
 * Gap analysis reproduces Magpie's `benchmark --trace-dir` (kernel time by
 * exact name, per rank and merged, with input shapes), streaming every rank
 * in one pass (two when a time window is set) with memory bounded by the
 * number of distinct kernel names and External ids, not by trace size.
 *
 * The kernel summary reproduces Magpie's `kernel_summary` (time per kernel
 * name over events with cat == "kernel"), for every rank and merged.
 */
#ifndef MAGPIE_GAP_H
#define MAGPIE_GAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/sources.h>
#include <magpie/trace.h>

/* ---- kernel-name normalisation (--group-by normalized) ---- */

/* Writes the family key of a kernel name into out: a demangled-looking name
 * with "void " return types, template arguments, parameter lists, hash
 * suffixes and launch-configuration tokens (e.g. 128x128x64) removed.
 * Mangled Itanium names (_Z...) are reduced to their qualified name. */
int mp_kernel_family(const char *name, size_t n, struct mp_buf *out);

/* ---- gap analysis ---- */

#define MP_GAP_MAX_PATTERNS 64

struct mp_gap_config {
    double start_pct;       /* window start, 0..100 (default 0) */
    double end_pct;         /* window end, 0..100 (default 100) */
    int top_k;              /* rows kept in outputs (default 20) */
    double min_duration_us; /* events shorter than this are dropped when > 0 */
    /* allow list (substring, case-insensitive); categories_all = no filter */
    const char *categories[MP_GAP_MAX_PATTERNS];
    int n_categories;
    bool categories_all;
    const char *ignore[MP_GAP_MAX_PATTERNS];
    int n_ignore;
    bool group_normalized; /* group by kernel family instead of exact name */
    bool skip_bad_ranks;   /* Magpie behaviour: warn and go on when a rank fails */
    /* --find-kernel-sources: repos to index (Magpie's kernel_source_repos);
     * sources is set by mp_gap_find_sources and adds the source columns to
     * the merged CSV and the JSON top_kernels */
    bool find_kernel_sources;
    const char *const *kernel_source_repos;
    int n_kernel_source_repos;
    bool auto_clone_repos;      /* Magpie's default true; cloning is not implemented */
    const char *repos_base_dir; /* NULL: ~/.cache/magpie/repos */
    const struct mp_gap_sources *sources;
    mp_trace_progress_fn on_progress;
    void *progress_user;
};

/* Magpie's defaults: 0-100 %, top 20, categories kernel+gpu, ignore
 * gpu_user_annotation+user_annotation. */
void mp_gap_config_defaults(struct mp_gap_config *c);

struct mp_gap_kernel {
    char *name; /* exact name, or family key when grouped */
    uint64_t calls;
    double total_us;
    double min_us, max_us;
    char *shapes;   /* first 10 distinct non-empty shapes joined by "; " */
    char *variants; /* grouped: distinct exact names joined by " | " (first 20) */
    uint32_t n_variants;
};

struct mp_gap_rank {
    int rank;
    char *trace_file;
    double total_us;               /* sum of all kernel totals (before top-k) */
    struct mp_gap_kernel *kernels; /* sorted by total desc, truncated to top_k */
    size_t n_kernels;
    size_t n_kernels_all;   /* distinct names before truncation */
    uint64_t bytes, events; /* parsed */
    bool two_pass;          /* a second pass was needed */
    char *error;            /* set when the rank failed (skip_bad_ranks) */
};

struct mp_gap_result {
    struct mp_gap_rank *ranks;
    size_t n_ranks;
    struct mp_gap_kernel *merged; /* truncated to top_k */
    size_t n_merged;
    size_t n_merged_all;
    double total_us;
    char *trace_dir; /* directory searched */
    uint64_t bytes, events;
    double seconds;
};

/* Kernel-source columns of the merged rows (sources.h), row i for merged[i]. */
struct mp_gap_sources {
    struct mp_src_index *ix;
    struct mp_src_result *rows;
    size_t n;
    char **warnings; /* e.g. a repo that auto_clone_repos could not clone */
    size_t n_warnings;
};

/* Indexes cfg->kernel_source_repos and resolves every merged row. A repo
 * that is missing is a warning (the rows stay unresolved), not an error. */
int mp_gap_find_sources(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                        struct mp_gap_sources *out, struct mp_diag *d);
void mp_gap_sources_fini(struct mp_gap_sources *s);

/* Runs gap analysis on every rank trace under trace_dir (see
 * mp_trace_find_ranks). *out is owned by the caller (mp_gap_result_free).
 * Errors: MP_ENOTFOUND (no dir / no traces), MP_EPARSE / MP_ETRUNC (a bad
 * trace, unless skip_bad_ranks), MP_ENOMEM. */
int mp_gap_analyze(const char *trace_dir, const struct mp_gap_config *cfg,
                   struct mp_gap_result **out, struct mp_diag *d);
/* Same on explicit files; ranks[i] is the rank of files[i]. */
int mp_gap_analyze_files(const char *const *files, const int *ranks, size_t n,
                         const struct mp_gap_config *cfg, struct mp_gap_result **out,
                         struct mp_diag *d);
void mp_gap_result_free(struct mp_gap_result *r);

/* Magpie's generate_clamped_traces for one trace: the events with a
 * timestamp that overlap the start..end % window of the trace's span, ts
 * and dur clipped to it, written gzip as
 * <out_dir>/<stem>_clamped_<start>_<end>.trace.json.gz (percentages in
 * Python float form, "0.0"). *out_path (owned) stays NULL when the trace has
 * no event with a duration (Magpie writes nothing then). */
int mp_gap_clamp_trace(const char *trace, double start_pct, double end_pct, const char *out_dir,
                       char **out_path, struct mp_diag *d);

struct mp_gap_clamped {
    char **paths; /* written files, in rank order */
    size_t n;
    char **errors; /* per-rank failures (Magpie warns and goes on) */
    size_t n_errors;
};

/* The same for every rank trace under trace_dir (mp_trace_find_ranks). */
int mp_gap_clamped_traces(const char *trace_dir, double start_pct, double end_pct,
                          const char *out_dir, struct mp_gap_clamped *out, struct mp_diag *d);
void mp_gap_clamped_fini(struct mp_gap_clamped *c);

/* Writes <dir>/gap_analysis.csv and, when there is more than one rank and
 * rank_csv is set, gap_analysis_rank<N>.csv, each atomically. */
int mp_gap_write_csv(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                     const char *dir, bool rank_csv, struct mp_diag *d);
/* The CSV text of the merged (rank < 0) or one rank's table. */
int mp_gap_csv(const struct mp_gap_result *r, const struct mp_gap_config *cfg, int rank_index,
               struct mp_buf *out);
/* Magpie's `gap_analysis` JSON object (+ "stats" and "ranks"). */
int mp_gap_json(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                const char *csv_path, const char *output_dir, struct mp_buf *b);
/* Magpie's stdout summary table. */
int mp_gap_summary(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                   const char *output_dir, struct mp_buf *b);

/* ---- kernel summary ---- */

struct mp_kernel_row {
    char *name;
    double time_ms;
    double percent;
    uint64_t calls;
};

struct mp_kernel_table {
    int rank; /* -1 for the merged table */
    char *trace_file;
    struct mp_kernel_row *rows; /* sorted by time desc */
    size_t n;
    double total_ms;
};

struct mp_kernel_summary {
    struct mp_kernel_table *ranks;
    size_t n_ranks;
    struct mp_kernel_table merged;
    uint64_t bytes, events;
};

/* Path may be a trace file or a directory (rank discovery). */
int mp_kernel_summary_run(const char *path, mp_trace_progress_fn progress, void *progress_user,
                          struct mp_kernel_summary **out, struct mp_diag *d);
void mp_kernel_summary_free(struct mp_kernel_summary *s);
/* CSV "name,time_ms,percent,calls" (rank -1 = merged). */
int mp_kernel_summary_csv(const struct mp_kernel_table *t, struct mp_buf *out);
/* {"kernel_summary": [...merged...], "top_bottlenecks": [...], "ranks": [...]} */
int mp_kernel_summary_json(const struct mp_kernel_summary *s, struct mp_buf *b);

#endif
