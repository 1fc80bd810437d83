/* MCP tool ray_task_status: the status of a task submitted to Ray (Magpie's parameter names and
 * result keys; the work is mp_ray_task_status in src/ray). */
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
    int rc = mp_ray_task_status(mcp_str(args, "task_id"), opt(args, "ray_cluster_address"),
                                opt(args, "ray_shared_storage_path"), &out, &d);
    if (rc)
        return mcp_fail_diag(result, "ray_task_status", &d);
    *result = json_loads(out, 0, NULL);
    free(out);
    return *result ? 0 : mcp_fail(result, "ray_task_status: bad answer");
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

const struct mcp_tool mcp_tool_ray_task_status = {
    .name = "ray_task_status",
    .title = "Ray task status",
    .desc = "Status of a Ray task: RUNNING, SUCCEEDED, FAILED or UNKNOWN (with Ray's own status, "
            "its message and, for a failed job, the tail of its log).",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{task_id, status: RUNNING|SUCCEEDED|FAILED|UNKNOWN, ray_status, ray_job_id, "
                   "message, result_path, [error_tail]}`.",
};
