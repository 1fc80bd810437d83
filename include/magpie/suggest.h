/* magpie optimisation suggestions: rules over a kernel's profiler metrics
 * (Magpie's suggest_optimizations). AMD rules read rocprof-compute's
 * metrics as Magpie does (Active CUs, MFMA_Util, VALU_Util, VMEM_Util);
 * NVIDIA rules read Nsight Compute's (speed-of-light compute and memory
 * throughput, achieved occupancy, tensor-pipe utilisation); the launch
 * overhead rule reads the per-kernel durations of either. Every bottleneck
 * and suggestion names the metric and the value that triggered it. */
#ifndef MAGPIE_SUGGEST_H
#define MAGPIE_SUGGEST_H

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/kernel.h>

/* Suggestions for an analyze result (Magpie's analyze() JSON: an object
 * with performance_state and performance_result{summary, kernels}), or for
 * a magpie analyze/compare report (results[] or results.kernel_results[]:
 * then {"kernels": [one object per kernel]}). *out is a new object
 * {kernel_id, overall_score, vendor, bottlenecks[{type, severity, value,
 * description, metric, metric_value, threshold}], suggestions[{category,
 * suggestion, impact, details, metric, metric_value}] (high impact first),
 * summary{total_bottlenecks, total_suggestions, high_impact_suggestions}}.
 * Errors (MP_EINVAL with a message in d): no performance result, or the
 * performance stage did not succeed (Magpie's "Performance analysis not
 * available"). */
int mp_suggest_json(json_t *analysis, json_t **out, struct mp_diag *d);

/* The same from a parsed profiler result (e.g. mp_kernel_parse_ncu_csv). */
int mp_suggest_perf(const struct mp_kernel_perf *p, const char *kernel_id, json_t **out,
                    struct mp_diag *d);

/* The same from `ncu --csv` output in a file (any page, units as printed). */
int mp_suggest_ncu_file(const char *path, const char *kernel_id, json_t **out, struct mp_diag *d);

#endif
