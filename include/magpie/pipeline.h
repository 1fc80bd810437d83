/* magpie pipeline: Magpie's inference stages, a module above the trace
 * splitter (src/trace) and the TraceLens-compatible report (src/tracelens):
 * split -> one step picked per stage -> per-stage report -> picks.
 * Implemented in src/pipeline/stages.c. */
#ifndef MAGPIE_PIPELINE_H
#define MAGPIE_PIPELINE_H

#include <stdbool.h>

#include <magpie/base.h>
#include <magpie/roofline.h>
#include <magpie/trace.h>
#include <magpie/tracelens.h>

/* Magpie's inference post-processing (docs/magpie-compat.md) done natively:
 * rank-0 trace in trace_dir (Magpie's patterns for the framework), split
 * into trace_dir/trace_split (steady-state windows and single steps, as
 * TraceLens's splitter with --find-steady-state --store-single-iteration),
 * one step picked per stage, each pick's inference report (with
 * --group_by_parent_module --group_by_num_kernels) and report.html in
 * <output_dir>/tracelens/<prefilldecode|decode_only|prefill_only>/, the
 * <label>_ISL<i>_OSL<o>_CONC<c>_kernel_roofline_simple.csv files in
 * <output_dir>/tracelens/, and the tracelens_analysis JSON object (also
 * written to <output_dir>/tracelens/tracelens_analysis.json). */
struct mp_stages_opts {
    const char *trace_dir;  /* the torch_trace directory */
    const char *output_dir; /* NULL = trace_dir */
    const char *framework;  /* "vllm" (NULL) or "sglang" / "atom" (SGLang's patterns) */
    const char *stages;     /* comma list with Magpie's aliases; NULL = all three */
    int num_steps;          /* splitter window, 0 = 32 */
    /* the workload as Magpie's env strings (NULL = unset; the splitter then
     * gets CONC 32, OSL 512, R 1.0 as Magpie passes) */
    const char *isl, *osl, *conc, *random_range_ratio;
    const struct mp_roofline_arch *arch; /* roofline columns (borrowed), or NULL */
    bool arch_auto;
    const char *gpu_arch_platform; /* name reported in the JSON, or NULL */
    int gzip_level;
    mp_trace_progress_fn on_progress;
    void *progress_user;
};

/* Parses a stage list ("pd,decode", ...) into stage indices (0 prefilldecode,
 * 1 decode, 2 prefill), in order, without repeats. */
int mp_stages_parse_list(const char *list, int *stages, int *n, struct mp_diag *d);

/* Runs the stages; json gets the tracelens_analysis object. Returns 0 when
 * every requested stage with a candidate got its report, MP_ECHILD when some
 * report failed (json lists the errors), or an input error (no trace, no
 * step annotations: d says which) after json has been filled as far as it
 * got. */
int mp_stages_run(const struct mp_stages_opts *o, struct mp_buf *json, struct mp_diag *d);

#endif
