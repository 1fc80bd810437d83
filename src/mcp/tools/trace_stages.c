/* MCP tool trace_stages: Magpie's inference-stage post-processing
 * (src/pipeline/stages.c): rank-0 trace split, one step per stage
 * (prefill-decode, decode-only, prefill-only), an inference report per
 * stage and the tracelens_analysis object. */
#include <string.h>

#include <magpie/pipeline.h>
#include <magpie/roofline.h>
#include <magpie/tracelens.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    struct mp_stages_opts o = {
        .trace_dir = mcp_str(args, "trace_dir"),
        .output_dir = mcp_str(args, "output_dir"),
        .framework = mcp_str(args, "framework"),
        .stages = mcp_str(args, "stages"),
        .num_steps = (int)mcp_int(args, "num_steps"),
        .on_progress = mcp_trace_progress,
        .progress_user = w,
    };
    char isl[32], osl[32], conc[32];
    json_t *v;
    if ((v = json_object_get(args, "input_len")) && json_is_integer(v)) {
        snprintf(isl, sizeof(isl), "%lld", (long long)json_integer_value(v));
        o.isl = isl;
    }
    if ((v = json_object_get(args, "output_len")) && json_is_integer(v)) {
        snprintf(osl, sizeof(osl), "%lld", (long long)json_integer_value(v));
        o.osl = osl;
    }
    if ((v = json_object_get(args, "concurrency")) && json_is_integer(v)) {
        snprintf(conc, sizeof(conc), "%lld", (long long)json_integer_value(v));
        o.conc = conc;
    }
    struct mp_roofline_arch arch;
    const char *an = mcp_str(args, "gpu_arch");
    if (an && strcmp(an, "auto") != 0) {
        if (mp_roofline_arch_builtin(an, &arch) != 0)
            return mcp_fail(result, "unknown gpu_arch '%s'", an);
        o.arch = &arch;
        o.gpu_arch_platform = an;
    }
    o.arch_auto = an && strcmp(an, "auto") == 0;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_stages_run(&o, &b, &d);
    json_t *j = mcp_parse_buf(&b);
    mp_buf_fini(&b);
    if (rc && rc != MP_ECHILD) {
        json_decref(j);
        return mcp_fail_diag(result, "inference stages failed", &d);
    }
    if (!j)
        return mcp_fail(result, "inference stages: no result");
    *result = j;
    return rc ? 1 : 0;
}

static const struct mcp_param params[] = {
    {"trace_dir", MT_STR, true, NULL, NULL, 0, 0, "the torch_trace directory of a run"},
    {"output_dir", MT_STR, false, NULL, NULL, 0, 0,
     "where tracelens/ is written; null = trace_dir"},
    {"framework", MT_STR, false, "\"vllm\"", "vllm|sglang|atom", 0, 0,
     "engine whose step annotations the trace has"},
    {"stages", MT_STR, false, NULL, NULL, 0, 0,
     "comma list of prefilldecode, decode, prefill (aliases pd, d, p); null = all"},
    {"num_steps", MT_INT, false, "32", NULL, 0, 0, "splitter window"},
    {"input_len", MT_INT, false, NULL, NULL, 0, 0, "workload ISL (file names, window choice)"},
    {"output_len", MT_INT, false, NULL, NULL, 0, 0, "workload OSL"},
    {"concurrency", MT_INT, false, NULL, NULL, 0, 0, "workload concurrency"},
    {"gpu_arch", MT_STR, false, NULL, NULL, 0, 0, "roofline columns: a built-in GPU or \"auto\""},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_trace_stages = {
    .name = "trace_stages",
    .title = "Inference stage reports",
    .desc = "Magpie's TraceLens inference post-processing: split the rank-0 trace, pick one "
            "step per stage (prefill-decode, decode-only, prefill-only) and write an inference "
            "report per stage plus kernel roofline CSVs under <output_dir>/tracelens/.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA,
    .result_desc = "the `tracelens_analysis` object (also written to "
                   "tracelens/tracelens_analysis.json): per stage the step picked, report "
                   "directory and files, errors.",
};
