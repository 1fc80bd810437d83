/* MCP tools ray_task_status, ray_task_result, ray_task_cancel and ray_task_list: the tasks
 * submitted to Ray (Magpie's parameter names and result keys). Each is one call of the matching
 * mp_ray_task_* function in src/ray, whose JSON answer is the tool's result. */
#include <stdlib.h>

#include <magpie/ray.h>

#include "../mcp_int.h"

typedef int (*ray_task_fn)(const char *task_id, const char *address, const char *shared,
                           char **json, struct mp_diag *d);

static const char *opt(json_t *args, const char *k)
{
    const char *s = mcp_str(args, k);
    return s && *s ? s : NULL;
}

/* Runs fn (or, with fn NULL, mp_ray_task_list) and parses its answer into *result. */
static int ray_call(json_t *args, json_t **result, const char *tool, ray_task_fn fn)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    char *out = NULL;
    const char *addr = opt(args, "ray_cluster_address");
    const char *shared = opt(args, "ray_shared_storage_path");
    int rc = fn ? fn(mcp_str(args, "task_id"), addr, shared, &out, &d)
                : mp_ray_task_list(addr, shared, &out, &d);
    if (rc)
        return mcp_fail_diag(result, tool, &d);
    *result = json_loads(out, 0, NULL);
    free(out);
    return *result ? 0 : mcp_fail(result, "%s: bad answer", tool);
}

static int run_status(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    return ray_call(args, result, "ray_task_status", mp_ray_task_status);
}

/* A result without _task_id is the task's failure report: an error result. */
static int run_result(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    int rc = ray_call(args, result, "ray_task_result", mp_ray_task_result);
    return rc ? rc : (json_object_get(*result, "_task_id") ? 0 : 1);
}

static int run_cancel(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    return ray_call(args, result, "ray_task_cancel", mp_ray_task_cancel);
}

static int run_list(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    return ray_call(args, result, "ray_task_list", NULL);
}

#define ADDRESS_DESC                                                                               \
    "Ray Jobs API address (http://host:8265, host:6379, auto); \"\" = the task record's, then "    \
    "RAY_ADDRESS"
#define SHARED_DESC "shared storage root; \"\" = MAGPIE_RAY_SHARED_STORAGE or /shared_nfs/magpie"

static const struct mcp_param task_params[] = {
    {"task_id", MT_STR, true, NULL, NULL, 0, 0, "the task id magpie printed at submission"},
    {"ray_cluster_address", MT_STR, false, "\"\"", NULL, 0, 0, ADDRESS_DESC},
    {"ray_shared_storage_path", MT_STR, false, "\"\"", NULL, 0, 0, SHARED_DESC},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_ray_task_status = {
    .name = "ray_task_status",
    .title = "Ray task status",
    .desc = "Status of a Ray task: RUNNING, SUCCEEDED, FAILED or UNKNOWN (with Ray's own status, "
            "its message and, for a failed job, the tail of its log).",
    .params = task_params,
    .run = run_status,
    .flags = MCP_READONLY,
    .result_desc = "`{task_id, status: RUNNING|SUCCEEDED|FAILED|UNKNOWN, ray_status, ray_job_id, "
                   "message, result_path, [error_tail]}`.",
};

const struct mcp_tool mcp_tool_ray_task_result = {
    .name = "ray_task_result",
    .title = "Ray task result",
    .desc = "The result of a finished Ray task, read from <shared>/results/<task_id>/: the "
            "benchmark or kernel report, else the worker's output.",
    .params = task_params,
    .run = run_result,
    .flags = MCP_READONLY,
    .result_desc =
        "the result document + `_task_id`, or `{error, status, hint, task_id, [error_tail]}`.",
};

const struct mcp_tool mcp_tool_ray_task_cancel = {
    .name = "ray_task_cancel",
    .title = "Cancel a Ray task",
    .desc = "Stops the Ray job of a task (its processes get SIGTERM, then SIGKILL).",
    .params = task_params,
    .run = run_cancel,
    .flags = 0,
    .result_desc = "`{task_id, cancelled, message}`.",
};

const struct mcp_tool mcp_tool_ray_task_list = {
    .name = "ray_task_list",
    .title = "List Ray tasks",
    .desc = "The magpie tasks known to a Ray cluster, oldest first.",
    .params = task_params + 1, /* the same without a task id */
    .run = run_list,
    .flags = MCP_READONLY,
    .result_desc = "`{total, tasks[{task_id, status, ray_status, ray_job_id, mode_type, label, "
                   "submitted_at}], ray_cluster}`.",
};
