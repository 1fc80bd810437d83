/* magpie report: TraceLens-compatible performance reports of one
 * torch-profiler trace (TraceLens_generate_perf_report_pytorch), written as
 * CSV files with TraceLens's file names, columns, row order and cell text.
 *
 * Sheets implemented so far: gpu_timeline, kernel_summary,
 * short_kernel_histogram, short_kernels_summary (see docs/compatibility.md for
 * the full list and status).
 */
#ifndef MAGPIE_TRACELENS_H
#define MAGPIE_TRACELENS_H

#include <stdbool.h>

#include <magpie/base.h>
#include <magpie/roofline.h>
#include <magpie/trace_tree.h>

struct mp_capture_stats;

struct mp_report_sheet;

struct mp_report_opts {
    bool kernel_summary;                 /* --enable_kernel_summary */
    bool short_kernel_study;             /* --short_kernel_study */
    double short_kernel_thresh;          /* µs, default 10 */
    int short_kernel_bins;               /* default 100 */
    bool include_unlinked;               /* --include_unlinked_kernels */
    bool python_functions;               /* build the tree with python_function events */
    bool detect_recompute;               /* --detect_recompute (implies python_functions) */
    int micro_idle_thresh_us;            /* --micro_idle_thresh_us; < 0 = off (idle_time row) */
    bool disable_coll_analysis;          /* --disable_coll_analysis */
    bool group_by_num_kernels;           /* --group_by_num_kernels */
    bool first_occurrence_time;          /* --include_first_occurrence_time */
    bool fix_nested_ops;                 /* --fix-nested-ops: per-category sheets keep only the
                                            outermost of nested modelled ops (TraceLens lists
                                            both, counting their kernels twice) */
    bool inference;                      /* TraceLens_generate_perf_report_pytorch_inference: module
                                            summaries, forward-only per-category sheets, annotations
                                            for every inference attention op */
    bool group_by_parent_module;         /* --group_by_parent_module (inference): parent_module and
                                            call_stack columns from the nn.Module frames above each op */
    bool include_call_stack;             /* --include_call_stack: unified call_stack_full and
                                            entry_point columns */
    bool has_topk_short_kernels;         /* --topk_short_kernels given */
    long topk_short_kernels;             /* rows kept in short_kernels_summary, as pandas head():
                                            a negative value drops that many from the end */
    bool include_overlap_info;           /* --include_overlap_info: the *_kl_overlap sheets */
    bool enable_pseudo_ops;              /* --enable_pseudo_ops: TraceLens's SGLang op-name pass
                                            and its pseudo ops (Triton unfused, GPTQ/AWQ, flydsl
                                            and AITER fused MoE, AITER MLA; pseudo.c), not
                                            the DeepSeek-V4 paged-decode family */
    const struct mp_roofline_arch *arch; /* roofline columns when set (borrowed) */
    bool arch_auto; /* pick a built-in arch from the trace's deviceProperties name */
    mp_trace_progress_fn on_progress;
    void *progress_user;
    /* --capture_folder: merge the CUDA/HIP-graph capture traces of this
     * folder into the replay trace first (capture.h); NULL = off */
    const char *capture_folder;
    struct mp_capture_stats *capture_stats; /* filled when set (borrowed), may be NULL */
    /* everything on the calling thread: no parse pipeline (trace.h) and no
     * second thread for sheets; the output is the same either way */
    bool serial;
    /* hand the loaded trace to the caller (mp_report.store and .tree, freed
     * by mp_report_free), with the args of memcpy/memset events kept as
     * well: a caller that walks the trace again need not load it twice */
    bool keep_trace;
    /* Called once with each sheet as soon as its CSV is final, while later
     * sheets are still being built, from the thread that built it (two may
     * call at once); the sheet moves afterwards: copy what is needed. The
     * CLI writes the sheets to disk from here, in the background. */
    void (*on_sheet)(const struct mp_report_sheet *s, void *user);
    void *on_sheet_user;
};

void mp_report_opts_defaults(struct mp_report_opts *o);

/* The GPU timeline of TraceLens (docs/tracelens-compat.md), all values in µs. */
struct mp_gpu_timeline {
    double computation, exposed_comm, exposed_memcpy, busy, idle, total, total_comm, total_memcpy;
    double micro_idle, macro_idle; /* idle gaps shorter / not shorter than the threshold */
};

/* The timeline over the trace's GPU events (linked ones only unless
 * include_unlinked); recompute >= 0 keeps only those whose t->recompute flag
 * equals it (TraceLens's per-block timeline under --detect_recompute);
 * micro_idle_thresh_us >= 0 also splits idle time into micro/macro gaps.
 * *n_out is the number of GPU events counted. */
int mp_report_gpu_timeline_sel(const struct mp_trace_tree *t, bool include_unlinked, int recompute,
                               double micro_idle_thresh_us, struct mp_gpu_timeline *out,
                               size_t *n_out);

/* One sheet in CSV text form. */
struct mp_report_sheet {
    char name[64]; /* file stem, e.g. "gpu_timeline" */
    struct mp_buf csv;
};

/* One op shape of a per-category sheet, for the roofline plot. */
struct mp_report_point {
    char *name;     /* op name */
    char *params;   /* "M=8944 N=2816 K=1024 ..." (param: cells joined) */
    char sheet[80]; /* sheet it comes from, e.g. "GEMM" */
    char spec[48];  /* compute spec, e.g. "matrix_bf16" ("" unknown) */
    bool has_ai;    /* FLOPS/Byte known */
    double flops_per_byte;
    double tflops_s;  /* mean achieved TFLOP/s */
    double tb_s;      /* mean achieved TB/s */
    double kernel_us; /* total kernel time of the group */
    size_t count;     /* ops in the group */
    bool has_roofline;
    double pct_roofline; /* mean percent of roofline */
};

/* Time by op category (ops_summary_by_category). */
struct mp_report_cat {
    char *name;
    double ms;
    size_t count;
};

struct mp_report {
    struct mp_report_sheet *sheets;
    size_t n;
    struct mp_gpu_timeline timeline;
    size_t events, gpu_events, gpu_linked;
    char arch_name[64]; /* arch used for the roofline columns, "" when none */
    bool has_arch;
    struct mp_roofline_arch arch; /* copy of the arch used (valid when has_arch) */
    struct mp_report_point *points;
    size_t n_points;
    struct mp_report_cat *cats;
    size_t n_cats;
    /* mp_report_opts.on_sheet while the sheets are built, NULL after; the
     * sheets before n_final were handed to it (internal) */
    void (*on_sheet)(const struct mp_report_sheet *s, void *user);
    void *on_sheet_user;
    size_t n_final;
    /* keep_trace: the trace the sheets were built from (its tree final:
     * pseudo ops applied, link ids dropped); NULL otherwise */
    struct mp_trace_store *store;
    struct mp_trace_tree *tree;
};

/* Builds every enabled sheet for the trace at path. */
int mp_report_build(const char *path, const struct mp_report_opts *o, struct mp_report **out,
                    struct mp_diag *d);
/* Writes each sheet as <dir>/<name>.csv (atomically). */
int mp_report_write_csvs(const struct mp_report *r, const char *dir, struct mp_diag *d);
/* Queues sheet s on st as <dir>/<name>.csv (for an mp_report_opts.on_sheet
 * callback). 0, MP_ENOMEM or MP_EINVAL (path too long); a sheet not staged
 * is written by the commit. */
int mp_report_stage_sheet(struct mp_fs_stage *st, const char *dir, const struct mp_report_sheet *s);
/* mp_report_write_csvs, except that a sheet staged on st with the same bytes
 * is renamed into place instead of written again (st NULL: the same). */
int mp_report_commit_csvs(const struct mp_report *r, const char *dir, struct mp_fs_stage *st,
                          struct mp_diag *d);
void mp_report_free(struct mp_report *r);

/* ---- multi-rank collective report (src/tracelens/nccl.c) ----
 * TraceLens's NcclAnalyser as TraceLens_generate_multi_rank_collective_report_pytorch
 * runs it: the collective kernels (nccl, rccl, cross_device_reduce; linked to
 * a launch) of every rank, matched across ranks by process group and start
 * order. Sheets: nccl_summary_implicit_sync, nccl_summary_long, then with
 * detailed nccl_long and nccl_implicit_sync, then straggler_summary. */
struct mp_nccl_opts {
    const char *const *paths; /* paths[r] is rank r's trace, r < world_size */
    size_t world_size;
    int gpus_per_node; /* node_id/node_span columns; 0 = len(deviceProperties) of
                          rank 0's trace (none when absent), < 0 = no node columns */
    bool detailed;     /* nccl_long and nccl_implicit_sync */
    mp_trace_progress_fn on_progress;
    void *progress_user;
};

int mp_nccl_report_build(const struct mp_nccl_opts *o, struct mp_report **out, struct mp_diag *d);
/* Finds one trace per rank among inputs (directories: their *.json.gz and
 * *.json files; else glob patterns or files). The rank is the group named
 * "rank" (else group 1) of rank_regex (Python syntax: \d, [...] escapes,
 * (?P<rank>...)) searched in the file name, then the whole path; the first
 * path in sorted order wins for a rank. *world_size 0 = highest rank + 1 (set
 * on return). Every rank below it must have a file. *paths has *world_size
 * entries; free with mp_nccl_paths_free. */
int mp_nccl_find_ranks(const char *const *inputs, size_t n_inputs, const char *rank_regex,
                       size_t *world_size, char ***paths, struct mp_diag *d);
void mp_nccl_paths_free(char **paths, size_t n);

/* The compact kernel_roofline_simple CSV of a report (docs/magpie-compat.md):
 * one row per unified_perf_summary row with its matched per-category
 * param row (param_signature, num_kernels, params_json), times in ms, the
 * roofline columns when the report has an arch; Python csv line ends.
 * MP_ENOTFOUND when the report has no unified_perf_summary. */
int mp_report_roofline_simple(const struct mp_report *r, struct mp_buf *out);

/* ---- human views (src/tracelens/views.c) ----
 * Pure functions of a built report: the same report gives the same bytes.
 * Numbers are printed with fixed precision, non-finite ones as "-". */

/* Appends the terminal summary to out: GPU time (busy, computation, exposed
 * comm, exposed memcpy, idle with percentages), time by op category and the
 * top ops by kernel time with achieved TFLOP/s, TB/s and FLOP/byte, plus
 * percent of roofline and bound when the report has an arch. top_n limits
 * the category and op rows (0 = all). Plain text, no colour. Returns 0,
 * MP_EINVAL or MP_ENOMEM (out's maximum reached). */
int mp_report_summary_text(const struct mp_report *r, size_t top_n, struct mp_buf *out);
/* Writes one self-contained HTML page (inline CSS and SVG, no script, no
 * external resource) to path, atomically: the GPU busy/idle breakdown, a
 * log-log roofline plot of r->points (under the arch's memory and compute
 * roofs when r->has_arch), time by category and the top ops. title (e.g.
 * the trace file name, may be NULL) is HTML-escaped. */
int mp_report_write_html(const struct mp_report *r, const char *path, const char *title,
                         struct mp_diag *d);
/* Writes every sheet to an xlsx workbook at path (libxlsxwriter): one
 * worksheet per sheet, named as the sheet (cut to Excel's 31 characters,
 * []:*?/\ replaced by '_', made unique), cells read back from the CSV text:
 * numbers as numbers, True/False as booleans, empty cells left empty, other
 * text as strings; the header row is bold. Written to a temporary file in
 * the same directory and renamed into place. */
int mp_report_write_xlsx(const struct mp_report *r, const char *path, struct mp_diag *d);

#endif
