/* MCP tool list_benchmark_results: the benchmark workspaces (directories
 * named benchmark_*) under output_dir, newest name first, each summarised
 * from its benchmark_report.json (src/mcp/bench_ws.c). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_ws_int.h"

static int by_name_desc(const struct dirent **a, const struct dirent **b)
{
    return -strcmp((*a)->d_name, (*b)->d_name);
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    const char *dir = mcp_str(args, "output_dir");
    long long limit = mcp_int(args, "limit");
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, by_name_desc);
    if (n < 0)
        return mcp_fail(result, "Results directory not found: %s", dir);
    json_t *runs = json_array();
    long long found = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(list[i]->d_name, "benchmark_", 10) == 0) {
            char ws[8192], err[512];
            snprintf(ws, sizeof(ws), "%s/%s", dir, list[i]->d_name);
            json_t *s = mcp_ws_summary(ws, true, err, sizeof(err));
            if (s) {
                found++;
                json_object_del(s, "_report");
                if (limit <= 0 || (long long)json_array_size(runs) < limit)
                    json_array_append(runs, s);
                json_decref(s);
            }
        }
        free(list[i]);
    }
    free(list);
    json_t *r = json_object();
    json_object_set_new(r, "output_dir", json_string(dir));
    json_object_set_new(r, "total_found", json_integer(found));
    json_object_set_new(r, "showing", json_integer((json_int_t)json_array_size(runs)));
    json_object_set_new(r, "runs", runs);
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"output_dir", MT_STR, false, "\"./results\"", NULL, 0, 0, "where the workspaces are"},
    {"limit", MT_INT, false, "20", NULL, 0, 0, "runs returned (newest first)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_list_benchmark_results = {
    .name = "list_benchmark_results",
    .title = "List benchmark results",
    .desc = "List the benchmark workspaces (benchmark_*) under a results directory, newest "
            "first, with each run's framework, model, success, throughput and latency.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{output_dir, total_found, showing, runs[{workspace, name, timestamp, config, "
                   "success, framework, model, execution_time, throughput, latency, "
                   "top_bottlenecks (at most 5), errors, has_torch_trace, has_tracelens}]}` "
                   "(config: the path of the run's config.yaml).",
};
