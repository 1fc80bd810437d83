/* MCP tool create_testcase: one row of a trace's ranking by kernel time
 * (what gap analysis or trace_report points at) -> a runnable experiment:
 * ref_1.py (the op at the trace's arguments), cand_1.py and compare_1.yaml
 * in output_dir, through the same mp_replay as replay_ops. */
#include <stdio.h>
#include <string.h>

#include "../mcp_int.h"

int mcp_replay_run(json_t *args, long row, json_t **summary, json_t **result);

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    json_t *s = NULL;
    long row = (long)mcp_int(args, "row");
    if (row <= 0 && !mcp_str(args, "kernel"))
        return mcp_fail(result, "give row (1-based) or kernel (a kernel name)");
    if (mcp_replay_run(args, row > 0 ? row : -1, &s, result))
        return 1;
    json_t *op = json_array_get(json_object_get(s, "ops"), 0);
    if (!op) {
        json_decref(s);
        return mcp_fail(result, "no op at that row");
    }
    json_t *j = json_deep_copy(op);
    const char *dir = mcp_str(args, "output_dir");
    json_object_set_new(j, "output_dir", json_string(dir));
    json_object_set(j, "run_note", json_object_get(s, "run_note"));
    if (json_is_true(json_object_get(op, "rebuilt"))) {
        char cmd[4400];
        snprintf(cmd, sizeof(cmd), "cd '%s' && magpie compare -k compare_1.yaml", dir);
        json_object_set_new(j, "command", json_string(cmd));
        snprintf(cmd, sizeof(cmd),
                 "cd '%s' && magpie analyze --type pytorch --reference ref_1.py cand_1.py", dir);
        json_object_set_new(j, "analyze_command", json_string(cmd));
    }
    json_decref(s);
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"trace_path", MT_STR, true, NULL, NULL, 0, 0, "torch-profiler trace (.json or .json.gz)"},
    {"row", MT_INT, false, "0", NULL, 0, 0,
     "1-based row of the ranking by kernel time (unified_perf_summary; replay_ops' rank)"},
    {"kernel", MT_STR, false, NULL, NULL, 0, 0,
     "instead of row: the op that launched this kernel (exact name, as gap analysis and "
     "find_kernel_sources give it; the top such row)"},
    {"capture_folder", MT_STR, false, NULL, NULL, 0, 0,
     "graph capture traces merged into the trace first (as replay_ops)"},
    {"output_dir", MT_STR, true, NULL, NULL, 0, 0,
     "directory for ref_1.py, cand_1.py, compare_1.yaml (+ the IR and summary)"},
    {"run", MT_BOOL, false, "false", NULL, 0, 0, "also time the op on this machine's GPU"},
    {"gpu_arch", MT_STR, false, NULL, NULL, 0, 0,
     "roofline figures for a built-in GPU or \"auto\" (default: from the trace)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_create_testcase = {
    .name = "create_testcase",
    .title = "Testcase from a trace row",
    .desc = "Turns one row of a trace's ranking by kernel time (or the op behind a kernel) into "
            "a runnable experiment: a "
            "PyTorch reference of the op at the trace's shapes, dtypes and strides (the form "
            "analyze --reference takes), a candidate template and a compare config with the op "
            "as baseline (docs/replay.md).",
    .params = params,
    .run = run,
    .flags = MCP_EXTRA,
    .result_desc = "the op's replay_summary row (`op, shape_key, calls, trace_kernel_us_median, "
                   "rebuilt, in_ir, reason, ref, candidate, compare, ...`) plus `output_dir`, "
                   "`run_note`, `command` (compare) and `analyze_command`.",
};
