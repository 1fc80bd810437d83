/* MCP tool ray_task_result: the result of a finished Ray task (Magpie's parameter names and result
 * keys; the work is mp_ray_task_result in src/ray). */
#include <stdlib.h>

#include <magpie/ray.h>

#include "../mcp_int.h"

static const char *opt(json_t *args, const char *k)
{
    const char *s = mcp_str(args, k);
    return s && *s ? s : NULL;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    struct mp_diag d;
    mp_diag_clear(&d);
    char *out = NULL;
    int rc = mp_ray_task_result(mcp_str(args, "task_id"), opt(args, "ray_cluster_address"),
                                opt(args, "ray_shared_storage_path"), &out, &d);
    if (rc)
        return mcp_fail_diag(result, "ray_task_result", &d);
    *result = json_loads(out, 0, NULL);
    free(out);
    return *result ? (json_object_get(*result, "_task_id") ? 0 : 1)
                   : mcp_fail(result, "ray_task_result: bad answer");
}

static const struct mcp_param params[] = {
    {"task_id", MT_STR, true, NULL, NULL, 0, 0, "the task id magpie printed at submission"},
    {"ray_cluster_address", MT_STR, false, "\"\"", NULL, 0, 0,
     "Ray Jobs API address (http://host:8265, host:6379, auto); \"\" = the task record's, "
     "then RAY_ADDRESS"},
    {"ray_shared_storage_path", MT_STR, false, "\"\"", NULL, 0, 0,
     "shared storage root; \"\" = MAGPIE_RAY_SHARED_STORAGE or /shared_nfs/magpie"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_ray_task_result = {
    .name = "ray_task_result",
    .title = "Ray task result",
    .desc = "The result of a finished Ray task, read from <shared>/results/<task_id>/: the "
            "benchmark or kernel report, else the worker's output.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc =
        "the result document + `_task_id`, or `{error, status, hint, task_id, [error_tail]}`.",
};
