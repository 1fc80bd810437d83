/* MCP tool replay_ops: `magpie trace replay` (src/replay, mp_replay): the
 * trace's top ops rebuilt as TraceLens EventReplay IR and PyTorch references
 * (ref/cand/compare per op) in output_dir, optionally timed on this
 * machine's GPU; returns replay_summary.json. */
#include <stdio.h>
#include <string.h>

#include <magpie/replay.h>
#include <magpie/roofline.h>

#include "../mcp_int.h"

int mcp_replay_run(json_t *args, long row, json_t **summary, json_t **result);

/* Shared with create_testcase: runs mp_replay with the tool's arguments
 * (row > 0: that row; row < 0: the first row the filters keep; 0: top);
 * *summary is replay_summary.json as an object. 0, or 1 with *result set. */
int mcp_replay_run(json_t *args, long row, json_t **summary, json_t **result)
{
    struct mp_replay_opts o;
    mp_replay_opts_defaults(&o);
    o.trace = mcp_str(args, "trace_path");
    o.out_dir = mcp_str(args, "output_dir");
    o.op = mcp_str(args, "op");
    o.category = mcp_str(args, "category");
    o.kernel = mcp_str(args, "kernel");
    o.capture_folder = mcp_str(args, "capture_folder");
    o.row = row > 0 ? row : 0;
    o.top = row != 0 ? 1 : (long)mcp_int(args, "top"); /* row < 0: the top row alone */
    o.run = mcp_bool(args, "run");
    o.warm_l2 = mcp_bool(args, "warm_l2");
    o.l2 = mcp_str(args, "l2");
    o.quiet = true;
    const char *arch_name = mcp_str(args, "gpu_arch");
    struct mp_roofline_arch arch;
    if (arch_name && strcmp(arch_name, "auto") != 0) {
        if (mp_roofline_arch_builtin(arch_name, &arch) != 0)
            return mcp_fail(result, "unknown gpu_arch '%s'", arch_name);
        o.arch = &arch;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_replay_result *r = NULL;
    int rc = mp_replay(&o, &r, &d);
    if (rc)
        return mcp_fail_diag(result, "trace replay failed", &d);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    rc = mp_replay_summary_json(r, &b);
    mp_replay_result_free(r);
    json_error_t je;
    *summary = rc ? NULL : json_loads(mp_buf_cstr(&b), 0, &je);
    mp_buf_fini(&b);
    if (!*summary)
        return mcp_fail(result, "trace replay: out of memory");
    return 0;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    json_t *s = NULL;
    long row = mcp_int(args, "row");
    if (mcp_replay_run(args, row > 0 ? row : 0, &s, result))
        return 1;
    json_object_set_new(s, "output_dir", json_string(mcp_str(args, "output_dir")));
    json_object_set_new(s, "ir", json_string("event_replay_ir.json"));
    json_object_set_new(s, "summary_csv", json_string("replay_summary.csv"));
    *result = s;
    return 0;
}

static const struct mcp_param params[] = {
    {"trace_path", MT_STR, true, NULL, NULL, 0, 0, "torch-profiler trace (.json or .json.gz)"},
    {"output_dir", MT_STR, true, NULL, NULL, 0, 0,
     "directory for event_replay_ir.json, ref_<n>.py, cand_<n>.py, compare_<n>.yaml, "
     "prev_<n>.py (the op that ran before it in the trace) and replay_summary.csv/json"},
    {"op", MT_STR, false, NULL, NULL, 0, 0,
     "only rows of this op name (e.g. aten::mm), its kernels ranked apart (OP->KERNEL) included"},
    {"kernel", MT_STR, false, NULL, NULL, 0, 0,
     "only rows of ops that launched this kernel (its exact name, as gap analysis and "
     "find_kernel_sources give it)"},
    {"category", MT_STR, false, NULL, NULL, 0, 0,
     "only rows of this op category (GEMM, SDPA_fwd, elementwise, reduce, other, ...)"},
    {"capture_folder", MT_STR, false, NULL, NULL, 0, 0,
     "CUDA/HIP-graph capture traces merged into this graph-replay trace first (a serving "
     "run's torch_trace/capture_traces), so kernels that ran inside a graph get their ops"},
    {"row", MT_INT, false, "0", NULL, 0, 0, "only this 1-based row of the ranking (0: off)"},
    {"top", MT_INT, false, "20", NULL, 0, 0, "rows kept after the filters (0 = all)"},
    {"run", MT_BOOL, false, "false", NULL, 0, 0,
     "time the references on this machine's GPU (without one: files only, run_note says so)"},
    {"gpu_arch", MT_STR, false, NULL, NULL, 0, 0,
     "roofline figures for a built-in GPU (e.g. H200) or \"auto\" (default: from the trace)"},
    {"warm_l2", MT_BOOL, false, "false", NULL, 0, 0, "run: the same as l2 \"warm\""},
    {"l2", MT_STR, false, "\"auto\"", "auto|flushed|warm|idle|cold", 0, 0,
     "run: state of each op's figure (auto: cold (L2 flushed, inputs read back, GPU drained) "
     "for ops under 10 us a call in the trace, flushed for longer GEMM/attention/conv, warm "
     "for the rest; idle: GPU drained before each call; all four are measured)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_replay_ops = {
    .name = "replay_ops",
    .title = "Replay a trace's top ops",
    .desc = "Rebuilds a trace's top ops (ranked by kernel time as ops_summary ranks them) at "
            "their recorded shapes, dtypes and strides: TraceLens EventReplay IR, and per op a "
            "PyTorch reference, a candidate template and a compare config in output_dir; "
            "optionally times them on this machine's GPU (docs/replay.md).",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA,
    .result_desc =
        "replay_summary.json: `{rows_in_ranking, selected, rebuilt, in_ir, ran, "
        "run_note, arch, capture_merge, ops[{n, rank, op, shape_key, calls, trace_kernel_us_mean, "
        "trace_kernel_us_median, replay_kernel_us_median (profiler kernel records per call), "
        "replay_l2, replay_kernel_us_l2_flushed/_warm, replay_kernel_us_idle/_cold, "
        "replay_graph_us, "
        "ratio, values_from (trace|derived|default: where index/offset values came from), "
        "kernels_match, replay_note (why a replay is off), replay_clocks, "
        "roofline figures, rebuilt, in_ir, reason, ref, candidate, compare, "
        "command}]}` plus `output_dir`, `ir`, `summary_csv`.",
};
