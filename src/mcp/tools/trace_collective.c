/* MCP tool trace_collective: TraceLens's multi-rank collective report
 * (src/tracelens/nccl.c) over one trace per rank: collectives matched
 * across ranks, implicit-sync and straggler sheets written as CSVs. */
#include <stdio.h>
#include <stdlib.h>

#include <magpie/tracelens.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    const char *path = mcp_str(args, "trace_dir");
    const char *out_dir = mcp_str(args, "output_dir");
    const char *inputs[1] = {path};
    struct mp_diag d;
    mp_diag_clear(&d);
    size_t ws = (size_t)mcp_int(args, "world_size");
    char **paths = NULL;
    int rc = mp_nccl_find_ranks(inputs, 1, mcp_str(args, "rank_regex"), &ws, &paths, &d);
    if (rc)
        return mcp_fail_diag(result, "cannot find one trace per rank", &d);
    struct mp_nccl_opts o = {.paths = (const char *const *)paths,
                             .world_size = ws,
                             .gpus_per_node = (int)mcp_int(args, "gpus_per_node"),
                             .detailed = mcp_bool(args, "detailed"),
                             .on_progress = mcp_trace_progress,
                             .progress_user = w};
    struct mp_report *r = NULL;
    rc = mp_nccl_report_build(&o, &r, &d);
    json_t *rank_files = json_array();
    for (size_t i = 0; i < ws; i++)
        json_array_append_new(rank_files, json_string(paths[i]));
    mp_nccl_paths_free(paths, ws);
    if (!rc)
        rc = mp_report_write_csvs(r, out_dir, &d);
    if (rc) {
        mp_report_free(r);
        json_decref(rank_files);
        return mcp_fail_diag(result, "collective report failed", &d);
    }
    json_t *j = json_object();
    json_object_set_new(j, "world_size", json_integer((json_int_t)ws));
    json_object_set_new(j, "trace_files", rank_files);
    json_object_set_new(j, "collective_kernels", json_integer((json_int_t)r->gpu_events));
    json_object_set_new(j, "output_dir", json_string(out_dir));
    json_t *files = json_array(), *sheets = json_array();
    for (size_t i = 0; i < r->n; i++) {
        char p[4400];
        snprintf(p, sizeof(p), "%s/%s.csv", out_dir, r->sheets[i].name);
        json_array_append_new(files, json_string(p));
        json_array_append_new(sheets, json_string(r->sheets[i].name));
    }
    json_object_set_new(j, "sheets", sheets);
    json_object_set_new(j, "csv_files", files);
    mp_report_free(r);
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"trace_dir", MT_STR, true, NULL, NULL, 0, 0,
     "directory with one trace per rank (or a glob pattern)"},
    {"output_dir", MT_STR, true, NULL, NULL, 0, 0, "directory for the CSV sheets"},
    {"world_size", MT_INT, false, "0", NULL, 0, 0, "ranks; 0 = highest rank found + 1"},
    {"rank_regex", MT_STR, false, "\"rank[\\\\[\\\\-_/]?(?P<rank>\\\\d+)\"", NULL, 0, 0,
     "Python-syntax regex whose group 'rank' is the rank, searched in the file name"},
    {"gpus_per_node", MT_INT, false, "0", NULL, 0, 0,
     "node columns; 0 = from the trace's deviceProperties"},
    {"detailed", MT_BOOL, false, "true", NULL, 0, 0, "also the nccl_long and implicit-sync sheets"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_trace_collective = {
    .name = "trace_collective",
    .title = "Multi-rank collective report",
    .desc = "TraceLens's multi-rank collective report: NCCL/RCCL collectives matched across "
            "ranks, their implicit synchronisation and stragglers; CSV sheets in output_dir.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA,
    .result_desc = "`{world_size, trace_files, collective_kernels, output_dir, sheets, "
                   "csv_files}`.",
};
