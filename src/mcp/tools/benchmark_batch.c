/* MCP tool benchmark_batch: several benchmark configs submitted to a Ray
 * cluster, all at once (parallel) or one after another, each waited for
 * (Magpie's parameter names and result keys; the work is
 * mp_ray_benchmark_batch in src/ray). */
#include <stdlib.h>

#include <magpie/ray.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    const char *addr = mcp_str(args, "ray_cluster_address");
    const char *shared = mcp_str(args, "ray_shared_storage_path");
    bool parallel = mcp_bool(args, "parallel");
    struct mp_ray_config rc;
    mp_ray_config_init(&rc);
    mp_ray_config_from_env(&rc);
    if (addr && *addr)
        rc.cluster_address = mp_ray_config_strdup(&rc, addr);
    if (shared && *shared)
        rc.shared_storage_path = mp_ray_config_strdup(&rc, shared);
    char *configs = json_dumps(json_object_get(args, "configs"), JSON_COMPACT);
    struct mp_diag d;
    mp_diag_clear(&d);
    char *out = NULL;
    mcp_progress(w, 0, (double)json_array_size(json_object_get(args, "configs")),
                 parallel ? "submitting" : "running one after another");
    int r = configs ? mp_ray_benchmark_batch(&rc, configs, parallel, 0, &out, &d)
                    : mp_diag_set(&d, MP_ENOMEM, "out of memory");
    free(configs);
    mp_ray_config_fini(&rc);
    if (r)
        return mcp_fail_diag(result, "benchmark_batch", &d);
    *result = json_loads(out, 0, NULL);
    free(out);
    return *result ? 0 : mcp_fail(result, "benchmark_batch: bad answer");
}

static const struct mcp_param params[] = {
    {"configs", MT_OBJLIST, true, NULL, NULL, 1, 0,
     "benchmark configs: objects with framework and model (and tp, concurrency, input_len, "
     "output_len, num_prompts, precision, torch_profiler, timeout_seconds, extra_envs), or "
     "{benchmark_config: PATH} for a benchmark YAML"},
    {"ray_cluster_address", MT_STR, false, "\"\"", NULL, 0, 0,
     "Ray Jobs API address (http://host:8265, host:6379, auto); \"\" = RAY_ADDRESS, then "
     "http://127.0.0.1:8265"},
    {"ray_shared_storage_path", MT_STR, false, "\"\"", NULL, 0, 0,
     "shared storage root; \"\" = MAGPIE_RAY_SHARED_STORAGE or /shared_nfs/magpie"},
    {"parallel", MT_BOOL, false, "false", NULL, 0, 0,
     "submit all at once and return (else run one after another, each waited for)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_benchmark_batch = {
    .name = "benchmark_batch",
    .title = "Batch of benchmarks on Ray",
    .desc = "Runs several serving benchmarks as Ray jobs (magpie benchmark on the workers, results "
            "under <shared>/results/<task_id>/): in parallel (submitted, then followed with "
            "ray_task_status) or one after another.",
    .params = params,
    .run = run,
    .flags = MCP_LONG,
    .result_desc = "`{parallel, submitted, failed, jobs[…]}`; parallel jobs `{index, framework, "
                   "model, task_id, ray_job_id, status:\"SUBMITTED\", submitted, result_path}`; "
                   "sequential jobs `{index, framework, model, task_id, ray_job_id, status "
                   "(final), submitted, workspace_dir}`.",
};
