/* MCP tool benchmark: one serving benchmark run (src/serve mp_serve_run) from
 * Magpie's benchmark arguments, as `magpie benchmark FRAMEWORK --model M ...`
 * builds it: engine start, load, optional profiling and reports; answered
 * with the benchmark_report.json object plus summary_text. Cancelling
 * interrupts the run (the engine is stopped) before the worker tree is
 * swept. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/ray.h>
#include <magpie/serve.h>

#include "../mcp_int.h"

static void on_term(int sig)
{
    (void)sig;
    /* async-signal-safe (kill(2) only); the run ends as for a dead engine */
    mp_serve_interrupt(); // NOLINT(bugprone-signal-handler,cert-sig30-c)
}

static void on_progress(const struct mp_serve_progress *p, void *user)
{
    char msg[160];
    if (p->total)
        snprintf(msg, sizeof(msg), "%s: %zu/%zu requests (%zu failed), %.0f s", p->stage, p->done,
                 p->total, p->failed, p->elapsed_s);
    else
        snprintf(msg, sizeof(msg), "%s, %.0f s", p->stage, p->elapsed_s);
    mcp_progress(user, p->elapsed_s, 0, msg);
}

static void setnum(struct mp_serve_config *c, const char *key, json_t *args, const char *arg)
{
    json_t *v = json_object_get(args, arg);
    if (json_is_integer(v)) {
        char s[32];
        snprintf(s, sizeof(s), "%lld", (long long)json_integer_value(v));
        mp_serve_config_setenv(c, key, s);
    }
}

static const char *dup_or_null(struct mp_serve_config *c, json_t *args, const char *arg)
{
    const char *s = mcp_str(args, arg);
    return s && *s ? mp_serve_config_strdup(c, s) : NULL;
}

/* With ray_cluster_address: the run as one Ray job (magpie benchmark on a
 * worker, results under <shared>/results/<task_id>/), waited for, through
 * the library call benchmark_batch uses; the answer is that job's record
 * plus its benchmark_report.json when the job succeeded. */
static int run_on_ray(struct mcp_wctx *w, json_t *args, const char *addr, json_t **result)
{
    static const char *const keys[] = {"framework",
                                       "model",
                                       "precision",
                                       "tp",
                                       "concurrency",
                                       "input_len",
                                       "output_len",
                                       "num_prompts",
                                       "torch_profiler",
                                       "timeout_seconds",
                                       "extra_envs",
                                       "run_mode",
                                       "docker_image",
                                       "gap_analysis_enabled",
                                       NULL};
    json_t *one = json_object();
    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(args, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(one, keys[i], v);
    }
    json_t *list = json_array();
    json_array_append_new(list, one);
    char *configs = json_dumps(list, JSON_COMPACT);
    json_decref(list);
    struct mp_ray_config rc;
    mp_ray_config_init(&rc);
    mp_ray_config_from_env(&rc);
    rc.cluster_address = mp_ray_config_strdup(&rc, addr);
    const char *shared = mcp_str(args, "ray_shared_storage_path");
    if (shared && *shared)
        rc.shared_storage_path = mp_ray_config_strdup(&rc, shared);
    rc.entrypoint_num_gpus = (double)mcp_int(args, "ray_num_gpus");
    rc.multi_node = mcp_bool(args, "ray_multi_node");
    rc.total_num_gpus = (int)mcp_int(args, "ray_total_num_gpus");
    rc.num_nodes = (int)mcp_int(args, "ray_num_nodes");
    if (rc.num_nodes > 0 && rc.total_num_gpus > 0) /* Magpie: total // nodes */
        rc.gpus_per_node = rc.total_num_gpus / rc.num_nodes;
    struct mp_diag d;
    mp_diag_clear(&d);
    char *out = NULL;
    mcp_progress(w, 0, 1, "submitted to Ray, waiting");
    int r = configs ? mp_ray_benchmark_batch(&rc, configs, false,
                                             (double)mcp_int(args, "timeout_seconds"), &out, &d)
                    : mp_diag_set(&d, MP_ENOMEM, "out of memory");
    free(configs);
    mp_ray_config_fini(&rc);
    if (r)
        return mcp_fail_diag(result, "benchmark on Ray", &d);
    json_t *batch = json_loads(out, 0, NULL);
    free(out);
    json_t *job = json_array_get(json_object_get(batch, "jobs"), 0);
    if (!json_is_object(job)) {
        json_decref(batch);
        return mcp_fail(result, "benchmark on Ray: no job in the answer");
    }
    json_t *res = json_deep_copy(job);
    json_decref(batch);
    /* the job's benchmark report, as ray_task_result reads it */
    const char *tid = json_string_value(json_object_get(res, "task_id"));
    json_t *rep = NULL;
    char *rj = NULL;
    mp_diag_clear(&d);
    if (tid && mp_ray_task_result(tid, addr, shared && *shared ? shared : NULL, &rj, &d) == 0)
        rep = json_loads(rj, 0, NULL);
    free(rj);
    if (rep)
        json_object_set_new(res, "report", rep);
    json_object_set_new(res, "run_mode", json_string("ray"));
    *result = res;
    return 0;
}

/* agentx / agentx_mode / agentx_trace_file and the torch_profiler_* capture
 * schedule (Magpie's MCP names; docs/workloads.md). 0, or 1 with *result. */
static int agentx_args(struct mp_serve_config *cfg, json_t *args, json_t **result)
{
    struct mp_serve_captures *cp = &cfg->capture;
    cp->num_steps = (int)mcp_int(args, "torch_profiler_steps");
    cp->num_profiles = (int)mcp_int(args, "torch_profiler_count");
    cp->interval_s = (double)mcp_int(args, "torch_profiler_interval_seconds");
    cp->start_s = (double)mcp_int(args, "torch_profiler_start_seconds");
    cp->detailed_annotations = mcp_bool(args, "torch_profiler_detailed_annotations");
    if (cp->num_steps < 1 || cp->num_profiles < 1 || cp->interval_s < 0 || cp->start_s < 0)
        return mcp_fail(result, "torch_profiler_steps and torch_profiler_count must be >= 1, "
                                "the _seconds >= 0");
    /* more than Magpie's one capture from the start asks for a schedule
     * (AgentX runs always have one) */
    cp->set = cp->num_profiles > 1 || cp->start_s > 0;
    if (!mcp_bool(args, "agentx"))
        return 0;
    const char *mode = mcp_str(args, "agentx_mode");
    if (strcmp(mode, "canonical") != 0 && strcmp(mode, "fast") != 0)
        return mcp_fail(result, "agentx_mode must be canonical or fast, not '%s'", mode);
    const char *tf = mcp_str(args, "agentx_trace_file");
    if (!tf || !*tf)
        return mcp_fail(result, "agentx needs agentx_trace_file: the agentic trace to replay "
                                "(mooncake / AIPerf JSONL with session ids)");
    if (access(tf, R_OK) != 0)
        return mcp_fail(result, "agentx_trace_file: cannot read '%s'", tf);
    cfg->agentx.enabled = true;
    cfg->agentx.fast = strcmp(mode, "fast") == 0;
    cfg->agentx.trace_file = mp_serve_config_strdup(cfg, tf);
    return 0;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    const char *ray = mcp_str(args, "ray_cluster_address");
    const char *pc = mcp_str(args, "prefix_cache");
    enum mp_serve_prefix_cache pcv;
    if (mp_serve_prefix_cache_parse(pc, &pcv))
        return mcp_fail(result, "prefix_cache must be default, on or off, not '%s'", pc);
    if (ray && *ray && pcv != MP_SERVE_PC_DEFAULT)
        return mcp_fail(result, "prefix_cache '%s' is not passed to Ray jobs (leave it default)",
                        pc);
    if (ray && *ray)
        return run_on_ray(w, args, ray, result);
    struct mp_serve_config cfg;
    mp_serve_config_init(&cfg);
    if (mp_serve_framework_parse(mcp_str(args, "framework"), &cfg.framework) ||
        mp_serve_mode_parse(mcp_str(args, "run_mode"), &cfg.run_mode)) {
        mp_serve_config_fini(&cfg);
        return mcp_fail(result, "framework must be vllm, sglang, atom, trtllm or lmdeploy and "
                                "run_mode local or docker");
    }
    cfg.prefix_cache = pcv;
    cfg.model = mp_serve_config_strdup(&cfg, mcp_str(args, "model"));
    cfg.precision = mp_serve_config_strdup(&cfg, mcp_str(args, "precision"));
    /* Magpie's MCP defaults: ISL 1024, OSL 512, RANDOM_RANGE_RATIO 0.5 */
    mp_serve_config_setenv(&cfg, "ISL", "1024");
    mp_serve_config_setenv(&cfg, "OSL", "512");
    mp_serve_config_setenv(&cfg, "RANDOM_RANGE_RATIO", "0.5");
    setnum(&cfg, "TP", args, "tp");
    setnum(&cfg, "CONC", args, "concurrency");
    setnum(&cfg, "ISL", args, "input_len");
    setnum(&cfg, "OSL", args, "output_len");
    setnum(&cfg, "NUM_PROMPTS", args, "num_prompts");
    json_t *envs = json_object_get(args, "extra_envs");
    const char *key;
    json_t *v;
    json_object_foreach(envs, key, v)
    {
        char num[64];
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        if (!s && json_is_number(v)) {
            snprintf(num, sizeof(num), "%.17g", json_number_value(v));
            s = num;
        } else if (!s && json_is_boolean(v)) {
            s = json_is_true(v) ? "1" : "0";
        }
        if (s)
            mp_serve_config_setenv(&cfg, key, s);
    }
    if (agentx_args(&cfg, args, result)) {
        mp_serve_config_fini(&cfg);
        return 1;
    }
    json_t *tp = json_object_get(args, "torch_profiler");
    /* null: on for engines with profiler endpoints (Magpie's default), off
     * for AgentX runs (Magpie's too) */
    cfg.torch_profiler =
        json_is_boolean(tp)
            ? json_is_true(tp)
            : mp_serve_config_engine(&cfg)->profile_start != NULL && !cfg.agentx.enabled;
    cfg.system_profiler = mcp_bool(args, "system_profiler");
    cfg.tracelens = mcp_bool(args, "tracelens");
    cfg.tracelens_excel = strcmp(mcp_str(args, "tracelens_export_format"), "excel") == 0;
    cfg.tracelens_multi_rank = mcp_int(args, "tp") > 1;
    cfg.gap_enabled = mcp_bool(args, "gap_analysis_enabled");
    cfg.gap.top_k = (int)mcp_int(args, "gap_analysis_top_k");
    cfg.gap.start_pct = mcp_num(args, "gap_analysis_start_pct");
    cfg.gap.end_pct = mcp_num(args, "gap_analysis_end_pct");
    cfg.gap.min_duration_us = mcp_num(args, "gap_analysis_min_duration_us");
    json_t *cats = json_object_get(args, "gap_analysis_categories");
    if (json_is_array(cats)) {
        cfg.gap.n_categories = mcp_strs(cats, cfg.gap.categories, MP_GAP_MAX_PATTERNS);
        cfg.gap.categories_all = cfg.gap.n_categories == 0;
    }
    json_t *ign = json_object_get(args, "gap_analysis_ignore_categories");
    if (json_is_array(ign))
        cfg.gap.n_ignore = mcp_strs(ign, cfg.gap.ignore, MP_GAP_MAX_PATTERNS);
    cfg.docker_image = dup_or_null(&cfg, args, "docker_image");
    cfg.gpu_arch = dup_or_null(&cfg, args, "gpu_arch");
    cfg.runner_type = dup_or_null(&cfg, args, "runner_type");
    cfg.hf_cache_path = dup_or_null(&cfg, args, "hf_cache_path");
    cfg.inferencex_path = dup_or_null(&cfg, args, "inferencex_path");
    cfg.benchmark_script = dup_or_null(&cfg, args, "benchmark_script");
    cfg.timeout_s = mcp_num(args, "timeout_seconds");
    struct mp_serve_run_opts ro = {.output_dir = mcp_str(args, "output_dir"),
                                   .on_progress = on_progress,
                                   .progress_user = w,
                                   .magpie_version = MP_VERSION};
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    struct mp_serve_result *res = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_serve_run(&cfg, &ro, &res, &d);
    mp_serve_config_fini(&cfg);
    if (rc) {
        mp_serve_result_free(res);
        return mcp_fail_diag(result, "benchmark failed", &d);
    }
    json_t *r = mcp_parse_buf(&res->report);
    if (!json_is_object(r)) {
        json_decref(r);
        r = json_object();
        json_object_set_new(r, "success", json_boolean(res->success));
    }
    json_object_set_new(r, "summary_text", json_string(mp_buf_cstr(&res->summary)));
    if (res->workspace && !json_object_get(r, "workspace_dir"))
        json_object_set_new(r, "workspace_dir", json_string(res->workspace));
    bool ok = res->success;
    mp_serve_result_free(res);
    *result = r;
    return ok ? 0 : 1;
}

static const struct mcp_param params[] = {
    {"framework", MT_STR, true, NULL, "vllm|sglang|atom|trtllm|lmdeploy", 0, 0, "serving engine"},
    {"model", MT_STR, true, NULL, NULL, 0, 0, "model name or path"},
    {"precision", MT_STR, false, "\"fp8\"", NULL, 0, 0, "precision label"},
    {"run_mode", MT_STR, false, "\"docker\"", "docker|local", 0, 0,
     "engine in a container or a local process"},
    {"prefix_cache", MT_STR, false, "\"default\"", "default|on|off", 0, 0,
     "magpie's: the engine's prefix cache (default: Magpie's argv, SGLang with "
     "--disable-radix-cache, vLLM's own default on; on/off: vLLM and SGLang only)"},
    {"tp", MT_INT, false, "1", NULL, 0, 0, "tensor parallel size"},
    {"concurrency", MT_INT, false, "32", NULL, 0, 0, "requests in flight"},
    {"input_len", MT_INT, false, NULL, NULL, 0, 0, "prompt tokens (null = 1024)"},
    {"output_len", MT_INT, false, NULL, NULL, 0, 0, "output tokens (null = 512)"},
    {"num_prompts", MT_INT, false, NULL, NULL, 0, 0,
     "magpie: requests measured (null = Magpie's rule from concurrency)"},
    {"torch_profiler", MT_BOOL, false, NULL, NULL, 0, 0,
     "torch profiler traces (null = true where the engine has profiler endpoints)"},
    {"system_profiler", MT_BOOL, false, "false", NULL, 0, 0, "system profiler"},
    {"tracelens", MT_BOOL, false, "false", NULL, 0, 0, "TraceLens reports after the run"},
    {"tracelens_export_format", MT_STR, false, "\"csv\"", "csv|excel", 0, 0,
     "TraceLens report format"},
    {"gap_analysis_enabled", MT_BOOL, false, "false", NULL, 0, 0, "gap analysis of the traces"},
    {"gap_analysis_top_k", MT_INT, false, "20", NULL, 0, 0, "gap analysis: top kernels"},
    {"gap_analysis_start_pct", MT_NUM, false, "0", NULL, 0, 0, "gap analysis: window start"},
    {"gap_analysis_end_pct", MT_NUM, false, "100", NULL, 0, 0, "gap analysis: window end"},
    {"gap_analysis_min_duration_us", MT_NUM, false, "0", NULL, 0, 0,
     "gap analysis: shortest event kept"},
    {"gap_analysis_categories", MT_STRLIST, false, NULL, NULL, 0, 0,
     "gap analysis: categories kept (null = kernel, gpu)"},
    {"gap_analysis_ignore_categories", MT_STRLIST, false, NULL, NULL, 0, 0,
     "gap analysis: categories dropped (null = gpu_user_annotation)"},
    {"docker_image", MT_STR, false, NULL, NULL, 0, 0, "image (null = from the image table)"},
    {"gpu_arch", MT_STR, false, NULL, NULL, 0, 0, "GPU architecture (null = detected)"},
    {"inferencex_path", MT_STR, false, "\"\"", NULL, 0, 0, "accepted; magpie needs no InferenceX"},
    {"hf_cache_path", MT_STR, false, NULL, NULL, 0, 0, "Hugging Face cache to mount"},
    {"benchmark_script", MT_STR, false, NULL, NULL, 0, 0, "accepted for compatibility"},
    {"runner_type", MT_STR, false, NULL, NULL, 0, 0, "InferenceX runner type"},
    {"timeout_seconds", MT_INT, false, "3600", NULL, 0, 0, "limit for the whole run"},
    {"output_dir", MT_STR, false, "\"./results\"", NULL, 0, 0, "workspace root"},
    {"extra_envs", MT_OBJ, false, NULL, NULL, 0, 0,
     "environment of the run (EXTRA_VLLM_ARGS, MAX_MODEL_LEN, ...)"},
    {"ray_cluster_address", MT_STR, false, "\"\"", NULL, 0, 0,
     "Ray Jobs API address (http://host:8265, host:6379, auto): non-empty runs the benchmark "
     "as a Ray job and waits for it (as benchmark_batch with one config)"},
    {"ray_shared_storage_path", MT_STR, false, "\"\"", NULL, 0, 0, "Ray shared storage"},
    {"ray_num_gpus", MT_INT, false, "0", NULL, 0, 0, "Ray GPUs"},
    {"ray_multi_node", MT_BOOL, false, "false", NULL, 0, 0, "Ray multi-node"},
    {"ray_total_num_gpus", MT_INT, false, "8", NULL, 0, 0, "Ray total GPUs"},
    {"ray_num_nodes", MT_INT, false, "1", NULL, 0, 0, "Ray nodes"},
    {"agentx", MT_BOOL, false, "false", NULL, 0, 0,
     "AgentX workload: replay agentx_trace_file (multi-turn sessions, recorded times); the torch "
     "profiler is off unless torch_profiler is true"},
    {"agentx_mode", MT_STR, false, "\"canonical\"", "canonical|fast", 0, 0,
     "AgentX mode (fast: validation only)"},
    {"agentx_trace_file", MT_STR, false, NULL, NULL, 0, 0,
     "magpie's: the agentic trace replayed (mooncake / AIPerf JSONL with session ids); required "
     "with agentx"},
    {"torch_profiler_steps", MT_INT, false, "20", NULL, 0, 0,
     "engine steps per profiler capture (given: scheduled captures)"},
    {"torch_profiler_count", MT_INT, false, "1", NULL, 0, 0,
     "profiler captures during the measured load (> 1: scheduled captures, each with its own "
     "reports)"},
    {"torch_profiler_interval_seconds", MT_INT, false, "200", NULL, 0, 0,
     "wait after a capture's traces are written before the next capture"},
    {"torch_profiler_start_seconds", MT_INT, false, "0", NULL, 0, 0,
     "from the measured load's start to the first capture"},
    {"torch_profiler_detailed_annotations", MT_BOOL, false, "false", NULL, 0, 0,
     "the engine's detailed step annotations"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_benchmark = {
    .name = "benchmark",
    .title = "Serving benchmark",
    .desc = "Run a serving benchmark: start vLLM, SGLang or ATOM (docker or local), load it with "
            "the workload, optionally profile it (torch profiler, TraceLens, gap analysis), and "
            "write Magpie's workspace with benchmark_report.json. Long: reports progress.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_GRACEFUL,
    .result_desc = "the `benchmark_report.json` object (`success, framework, model, throughput, "
                   "latency, kernel_summary, top_bottlenecks, tracelens_analysis, gap_analysis, "
                   "workspace_dir, execution_time, errors, ...`) plus `summary_text`.",
};
