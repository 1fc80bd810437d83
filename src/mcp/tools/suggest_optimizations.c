/* MCP tool suggest_optimizations: Magpie's optimisation hints from an
 * analyze() result (src/kernel suggest.c, also `magpie suggest`): AMD
 * rocprof-compute rules, NVIDIA Nsight Compute rules, launch overhead;
 * each hint names the metric and value behind it. */
#include <stdio.h>
#include <stdlib.h>

#include <magpie/suggest.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    struct mp_diag d;
    mp_diag_clear(&d);
    json_t *out = NULL;
    const char *ncu = mcp_str(args, "ncu_csv_path");
    int rc;
    if (ncu) {
        rc = mp_suggest_ncu_file(ncu, mcp_str(args, "kernel_id"), &out, &d);
    } else {
        const char *text = mcp_str(args, "analysis_result");
        json_t *in = json_loads(text ? text : "", 0, NULL);
        if (!in)
            return mcp_fail(result, "Invalid JSON input");
        rc = mp_suggest_json(in, &out, &d);
        json_decref(in);
    }
    if (rc)
        return mcp_fail(result, "%s", d.msg);
    *result = out;
    return 0;
}

static const struct mcp_param params[] = {
    {"analysis_result", MT_STR, true, NULL, NULL, 0, 0,
     "JSON string from analyze() (or a magpie analyze/compare report)"},
    {"ncu_csv_path", MT_STR, false, NULL, NULL, 0, 0,
     "magpie: read the metrics from `ncu --csv` output instead (analysis_result is then "
     "ignored and may be \"\")"},
    {"kernel_id", MT_STR, false, NULL, NULL, 0, 0, "magpie: kernel_id reported with ncu_csv_path"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_suggest_optimizations = {
    .name = "suggest_optimizations",
    .title = "Suggest optimizations",
    .desc = "Bottlenecks and optimisation suggestions from a kernel's profiler metrics: "
            "Magpie's rocprof-compute rules (CU occupancy, MFMA, VALU, VMEM), Nsight Compute "
            "rules (speed of light compute/memory, occupancy, tensor pipe) and launch overhead "
            "of many short kernels; each names the metric and value that triggered it.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{kernel_id, overall_score, bottlenecks[{type, severity, value, description, "
                   "metric, metric_value, threshold}], suggestions[{category, suggestion, impact, "
                   "details, metric, metric_value}] (high impact first), "
                   "summary{total_bottlenecks, total_suggestions, high_impact_suggestions}, "
                   "vendor, [note]}`; for a report with several kernels `{kernels[...]}`.",
};
