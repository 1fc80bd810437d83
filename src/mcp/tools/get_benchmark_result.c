/* MCP tool get_benchmark_result: one benchmark workspace in detail, from its
 * benchmark_report.json, summary.txt and the trace and TraceLens files beside
 * them (src/mcp/bench_ws.c). */
#include <stdio.h>
#include <stdlib.h>

#include "../bench_ws_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    const char *ws = mcp_str(args, "workspace_dir");
    char err[600];
    json_t *o = mcp_ws_summary(ws, false, err, sizeof(err));
    if (!o)
        return mcp_fail(result, "Benchmark report not found: %s", err);
    json_t *rep = json_incref(json_object_get(o, "_report"));
    json_object_del(o, "_report");
    if (mcp_bool(args, "include_kernel_summary")) {
        json_t *ks = json_object_get(rep, "kernel_summary");
        json_object_set(o, "kernel_summary", ks ? ks : json_null());
    }
    char p[8192];
    if (mcp_bool(args, "include_raw_result")) {
        snprintf(p, sizeof(p), "%s/inferencex_result.json", ws);
        json_t *raw = json_load_file(p, 0, NULL);
        json_object_set_new(o, "raw_inferencex_result", raw ? raw : json_null());
    }
    snprintf(p, sizeof(p), "%s/summary.txt", ws);
    FILE *f = fopen(p, "r");
    if (f) {
        struct mp_buf b;
        mp_buf_init(&b, (size_t)4 << 20);
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && mp_buf_append(&b, chunk, n) == 0)
            ;
        fclose(f);
        json_object_set_new(o, "summary_text", json_string(mp_buf_cstr(&b)));
        mp_buf_fini(&b);
    }
    if (mcp_bool(args, "include_tracelens_files")) {
        json_t *tl = json_object();
        snprintf(p, sizeof(p), "%s/tracelens_rank0_csvs", ws);
        json_object_set_new(tl, "rank0_csvs", mcp_ws_files(p, ".csv"));
        snprintf(p, sizeof(p), "%s/tracelens_collective_csvs", ws);
        json_object_set_new(tl, "collective_csvs", mcp_ws_files(p, ".csv"));
        json_object_set_new(o, "tracelens_files", tl);
    }
    snprintf(p, sizeof(p), "%s/torch_trace", ws);
    json_t *tt = mcp_ws_files(p, ".json.gz");
    json_t *plain = mcp_ws_files(p, ".json");
    json_array_extend(tt, plain);
    json_decref(plain);
    json_object_set_new(o, "torch_trace_files", tt);
    json_decref(rep);
    *result = o;
    return 0;
}

static const struct mcp_param params[] = {
    {"workspace_dir", MT_STR, true, NULL, NULL, 0, 0, "a benchmark workspace directory"},
    {"include_kernel_summary", MT_BOOL, false, "true", NULL, 0, 0, "add kernel_summary"},
    {"include_raw_result", MT_BOOL, false, "false", NULL, 0, 0,
     "add the raw benchmark result (inferencex_result.json)"},
    {"include_tracelens_files", MT_BOOL, false, "true", NULL, 0, 0, "list the TraceLens CSVs"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_get_benchmark_result = {
    .name = "get_benchmark_result",
    .title = "Get a benchmark result",
    .desc = "Details of one benchmark workspace: report metrics, top bottlenecks, kernel "
            "summary, summary text and the trace and TraceLens files it holds.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{workspace, config, success, framework, model, execution_time, throughput, "
                   "latency, top_bottlenecks, errors, [kernel_summary], [raw_inferencex_result], "
                   "[summary_text], [tracelens_files{rank0_csvs, collective_csvs}], "
                   "torch_trace_files}`.",
};
