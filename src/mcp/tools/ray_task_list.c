/* MCP tool ray_task_list: the magpie tasks a Ray cluster knows (Magpie's parameter names and result
 * keys; the work is mp_ray_task_list in src/ray). */
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
    int rc = mp_ray_task_list(opt(args, "ray_cluster_address"),
                              opt(args, "ray_shared_storage_path"), &out, &d);
    if (rc)
        return mcp_fail_diag(result, "ray_task_list", &d);
    *result = json_loads(out, 0, NULL);
    free(out);
    return *result ? 0 : mcp_fail(result, "ray_task_list: bad answer");
}

static const struct mcp_param params[] = {
    {"ray_cluster_address", MT_STR, false, "\"\"", NULL, 0, 0,
     "Ray Jobs API address (http://host:8265, host:6379, auto); \"\" = the task record's, "
     "then RAY_ADDRESS"},
    {"ray_shared_storage_path", MT_STR, false, "\"\"", NULL, 0, 0,
     "shared storage root; \"\" = MAGPIE_RAY_SHARED_STORAGE or /shared_nfs/magpie"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_ray_task_list = {
    .name = "ray_task_list",
    .title = "List Ray tasks",
    .desc = "The magpie tasks known to a Ray cluster, oldest first.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{total, tasks[{task_id, status, ray_status, ray_job_id, mode_type, label, "
                   "submitted_at}], ray_cluster}`.",
};
