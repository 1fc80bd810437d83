/* Benchmarks on Ray: Magpie's TP placement rules, one benchmark config
 * turned into a `magpie benchmark` job on a worker (config staged in the
 * task directory, results there too), and benchmark_batch over a list of
 * configs, in parallel or one after another. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/ray.h>

#include "ray_int.h"

static void add_flag(char *v, size_t n, const char *flag)
{
    if (mp_serve_args_have_flag(v, flag))
        return;
    size_t l = strlen(v);
    snprintf(v + l, n - l, "%s%s", l ? " " : "", flag);
}

int mp_ray_tp_placement(enum mp_serve_framework fw, int tp, int local_gpus, const char *extra_in,
                        struct mp_ray_placement *out)
{
    memset(out, 0, sizeof(*out));
    if (local_gpus <= 0)
        local_gpus = 8;
    if (tp < 1)
        tp = 1;
    bool spans = tp > local_gpus;
    out->keep_ray_address = spans;
    out->nnodes = (tp + local_gpus - 1) / local_gpus;
    snprintf(out->extra_val, sizeof(out->extra_val), "%s", extra_in ? extra_in : "");
    const struct mp_serve_engine *e = mp_serve_engine_get(fw);
    return mp_ray_engine_placement(e, tp, local_gpus, extra_in, out);
}

int mp_ray_engine_placement(const struct mp_serve_engine *e, int tp, int local_gpus,
                            const char *extra_in, struct mp_ray_placement *out)
{
    memset(out, 0, sizeof(*out));
    if (local_gpus <= 0)
        local_gpus = 8;
    if (tp < 1)
        tp = 1;
    bool spans = tp > local_gpus;
    out->keep_ray_address = spans;
    out->nnodes = (tp + local_gpus - 1) / local_gpus;
    snprintf(out->extra_val, sizeof(out->extra_val), "%s", extra_in ? extra_in : "");
    const char *const *rule = !e ? NULL : spans ? e->ray_span : e->ray_local;
    size_t n_rule = !e ? 0 : spans ? 3 : 2;
    if (spans && (!rule || !rule[0]))
        out->warn = true;
    for (size_t i = 0; rule && i < n_rule && rule[i]; i++) {
        char flag[64];
        snprintf(flag, sizeof(flag), rule[i], out->nnodes);
        out->extra_key = e->extra_args_env;
        add_flag(out->extra_val, sizeof(out->extra_val), flag);
    }
    return 0;
}

static int push(const char ***v, int *n, int *cap, const char *s)
{
    size_t c = (size_t)*cap; /* room for s and the NULL after it */
    if (MP_GROW(*v, c, (size_t)*n + 2, 32))
        return MP_ENOMEM;
    *cap = (int)c;
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
    return 0;
}

int mp_ray_submit_benchmark(const struct mp_ray_config *rc0, const struct mp_serve_config *cfg,
                            const char *yaml_path, struct mp_ray_task *t, struct mp_diag *d)
{
    struct mp_ray_config rc = *rc0; /* shares rc0's arena: additions live as long as rc0 */
    char label[256];
    snprintf(label, sizeof(label), "%s %s", mp_serve_config_engine(cfg)->name,
             cfg->model ? cfg->model : "");
    int r = mp_ray_check_head(&rc, d);
    if (!r)
        r = mp_ray_task_prepare(&rc, "benchmark", label, t, d);
    if (r)
        return r;
    char *staged = NULL;
    if (yaml_path && (r = mp_ray_task_stage(t, yaml_path, &staged, d)))
        return r;
    /* the HF cache under the shared storage unless the job sets one */
    char hf[sizeof(t->shared) + 16];
    snprintf(hf, sizeof(hf), "%s/hf_cache", t->shared);
    if (!mp_ray_config_getenv(&rc, "HF_HOME"))
        mp_ray_config_setenv(&rc, "HF_HOME", cfg->hf_cache_path ? cfg->hf_cache_path : hf);
    if (!mp_ray_config_getenv(&rc, "TRANSFORMERS_CACHE"))
        mp_ray_config_setenv(&rc, "TRANSFORMERS_CACHE",
                             cfg->hf_cache_path ? cfg->hf_cache_path : hf);
    char total[32];
    if (rc.multi_node) {
        snprintf(total, sizeof(total), "%d", rc.total_num_gpus);
        mp_ray_config_setenv(&rc, "MAGPIE_TOTAL_GPUS", total);
    }
    long tp = 1;
    (void)mp_serve_config_intenv(cfg, "TP", 1, &tp, NULL);
    struct mp_ray_placement pl;
    const struct mp_serve_engine *eng = mp_serve_config_engine(cfg);
    mp_ray_engine_placement(
        eng, (int)tp, rc.gpus_per_node,
        eng->extra_args_env ? mp_serve_config_getenv(cfg, eng->extra_args_env) : NULL, &pl);
    if (pl.warn)
        mp_log(MP_LOG_WARN, "TP %ld spans %d nodes; %s has no multi-node rule, run as given", tp,
               pl.nnodes, eng->name);

    const char **argv = NULL;
    int n = 0, cap = 0;
    struct mp_buf keep; /* strings made here */
    mp_buf_init(&keep, 0);
    char *own[MP_SERVE_MAX_ENVS + 16];
    int nown = 0;
#define FMT(...)                                                                                   \
    do {                                                                                           \
        char tmp_[4200];                                                                           \
        snprintf(tmp_, sizeof(tmp_), __VA_ARGS__);                                                 \
        own[nown] = mp_strdup(tmp_);                                                               \
        r |= push(&argv, &n, &cap, own[nown++]);                                                   \
    } while (0)
    r |= push(&argv, &n, &cap, "benchmark");
    if (!cfg->engine) /* a YAML's own engine comes with the staged YAML */
        r |= push(&argv, &n, &cap, mp_serve_framework_name(cfg->framework));
    if (staged) {
        r |= push(&argv, &n, &cap, "-b");
        r |= push(&argv, &n, &cap, staged);
    }
    r |= push(&argv, &n, &cap, "--run-mode");
    r |= push(&argv, &n, &cap, "local");
    r |= push(&argv, &n, &cap, "-o");
    r |= push(&argv, &n, &cap, t->dir);
    r |= push(&argv, &n, &cap, "-q");
    if (cfg->model && *cfg->model) {
        r |= push(&argv, &n, &cap, "--model");
        r |= push(&argv, &n, &cap, cfg->model);
    }
    if (cfg->precision) {
        r |= push(&argv, &n, &cap, "--precision");
        r |= push(&argv, &n, &cap, cfg->precision);
    }
    r |= push(&argv, &n, &cap, "--run-kind");
    r |= push(&argv, &n, &cap, mp_serve_run_kind_name(cfg->run_kind));
    r |= push(&argv, &n, &cap, cfg->torch_profiler ? "--torch-profiler" : "--no-torch-profiler");
    if (cfg->system_profiler)
        r |= push(&argv, &n, &cap, "--system-profiler");
    FMT("--timeout=%g", cfg->timeout_s);
    FMT("--ready-timeout=%g", cfg->server_ready_timeout_s);
    FMT("--stall-timeout=%g", cfg->stall_timeout_s);
    if (cfg->repeat > 1)
        FMT("--repeat=%d", cfg->repeat);
    for (int i = 0; i < cfg->n_envs && nown < MP_SERVE_MAX_ENVS + 8; i++) {
        if (pl.extra_key && strncmp(cfg->envs[i], pl.extra_key, strlen(pl.extra_key)) == 0 &&
            cfg->envs[i][strlen(pl.extra_key)] == '=')
            continue;
        FMT("--env=%s", cfg->envs[i]);
    }
    if (pl.extra_key && *pl.extra_val)
        FMT("--env=%s=%s", pl.extra_key, pl.extra_val);
#undef FMT
    if (!r)
        r = mp_ray_task_submit(&rc, t, argv, pl.keep_ray_address || rc.multi_node, d);
    else
        r = mp_diag_set(d, MP_ENOMEM, "out of memory");
    for (int i = 0; i < nown; i++)
        free(own[i]);
    free((void *)argv);
    free(staged);
    mp_buf_fini(&keep);
    return r;
}

/* One batch entry as a serve config: a YAML path or an object with the MCP
 * benchmark tool's keys. *yaml gets the path (borrowed) or NULL. */
static int batch_cfg(json_t *item, struct mp_serve_config *c, const char **yaml, struct mp_diag *d)
{
    *yaml = NULL;
    const char *path = json_string_value(item);
    if (!path)
        path = json_string_value(json_object_get(item, "benchmark_config"));
    if (path) {
        *yaml = path;
        int r = mp_serve_config_load(c, path, d);
        if (r)
            return r;
        if (!json_is_object(item))
            return 0;
    } else if (!json_is_object(item)) {
        return mp_diag_set(d, MP_EINVAL, "a batch entry must be a config path or an object");
    } else {
        mp_serve_config_setenv(c, "TP", "1");
        mp_serve_config_setenv(c, "CONC", "32");
        mp_serve_config_setenv(c, "ISL", "1024");
        mp_serve_config_setenv(c, "OSL", "512");
        mp_serve_config_setenv(c, "RANDOM_RANGE_RATIO", "0.5");
        c->torch_profiler = false;
    }
    const char *fw = json_string_value(json_object_get(item, "framework"));
    if (fw && mp_serve_framework_parse(fw, &c->framework))
        return mp_diag_set(d, MP_EINVAL, "unknown framework '%s' (expected %s)", fw,
                           mp_serve_engine_names());
    if (!fw && !path)
        return mp_diag_set(d, MP_EINVAL, "a batch entry needs framework and model");
    const char *s;
    if ((s = json_string_value(json_object_get(item, "model"))))
        c->model = mp_serve_config_strdup(c, s);
    if ((s = json_string_value(json_object_get(item, "precision"))))
        c->precision = mp_serve_config_strdup(c, s);
    static const char *const nums[][2] = {{"tp", "TP"},
                                          {"concurrency", "CONC"},
                                          {"input_len", "ISL"},
                                          {"output_len", "OSL"},
                                          {"num_prompts", "NUM_PROMPTS"}};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        json_t *v = json_object_get(item, nums[i][0]);
        if (json_is_integer(v)) {
            char b[32];
            snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
            mp_serve_config_setenv(c, nums[i][1], b);
        }
    }
    json_t *v = json_object_get(item, "torch_profiler");
    if (json_is_boolean(v))
        c->torch_profiler = json_is_true(v);
    v = json_object_get(item, "timeout_seconds");
    if (json_is_number(v) && json_number_value(v) > 0)
        c->timeout_s = json_number_value(v);
    const char *k;
    json_object_foreach(json_object_get(item, "extra_envs"), k, v)
    {
        if (json_is_string(v))
            mp_serve_config_setenv(c, k, json_string_value(v));
        else if (json_is_number(v)) {
            char b[64];
            snprintf(b, sizeof(b), "%g", json_number_value(v));
            mp_serve_config_setenv(c, k, b);
        }
    }
    enum mp_serve_mode m = c->run_mode;
    c->run_mode = MP_SERVE_LOCAL; /* what the worker runs */
    int r = mp_serve_config_validate(c, d);
    c->run_mode = m;
    return r;
}

int mp_ray_benchmark_batch(const struct mp_ray_config *rc, const char *configs_json, bool parallel,
                           double wait_s, char **json, struct mp_diag *d)
{
    *json = NULL;
    json_error_t je;
    json_t *items = json_loads(configs_json, 0, &je);
    if (!json_is_array(items) || json_array_size(items) == 0) {
        json_decref(items);
        mp_diag_set_field(d, "configs");
        return mp_diag_set(d, MP_EINVAL, "configs must be a non-empty list");
    }
    int hr = mp_ray_check_head(rc, d); /* before any directory is made */
    if (hr) {
        json_decref(items);
        return hr;
    }
    json_t *jobs = json_array();
    int submitted = 0, failed = 0;
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item)
    {
        struct mp_serve_config c;
        mp_serve_config_init(&c);
        struct mp_diag d2;
        mp_diag_clear(&d2);
        const char *yaml = NULL;
        struct mp_ray_task t;
        memset(&t, 0, sizeof(t));
        int r = batch_cfg(item, &c, &yaml, &d2);
        if (!r)
            r = mp_ray_submit_benchmark(rc, &c, yaml, &t, &d2);
        json_t *j = json_object();
        json_object_set_new(j, "index", json_integer((json_int_t)i));
        json_object_set_new(j, "framework", json_string(mp_serve_framework_name(c.framework)));
        json_object_set_new(j, "model", json_string(c.model ? c.model : ""));
        if (r) {
            char msg[1600];
            mp_diag_format(&d2, msg, sizeof(msg));
            json_object_set_new(j, "submitted", json_false());
            json_object_set_new(j, "status", json_string("FAILED"));
            json_object_set_new(j, "error", json_string(msg));
            failed++;
            /* the head unreachable: the rest would fail the same way */
            if (r == MP_EIO && strstr(d2.msg, "not reachable")) {
                json_array_append_new(jobs, j);
                mp_serve_config_fini(&c);
                mp_diag_set(d, r, "%s", d2.msg);
                json_decref(items);
                json_decref(jobs);
                return r;
            }
        } else {
            submitted++;
            json_object_set_new(j, "task_id", json_string(t.task_id));
            json_object_set_new(j, "ray_job_id", json_string(t.submission_id));
            json_object_set_new(j, "submitted", json_true());
            json_object_set_new(j, "result_path", json_string(t.dir));
            if (parallel) {
                json_object_set_new(j, "status", json_string("SUBMITTED"));
            } else {
                char st[16];
                double lim = wait_s > 0 ? wait_s : c.timeout_s + 600;
                int w = mp_ray_task_wait(&t, lim, NULL, st, &d2);
                json_object_set_new(j, "status", json_string(w ? "UNKNOWN" : st));
                if (w)
                    json_object_set_new(j, "error", json_string(d2.msg));
                if (!w && strcmp(st, "SUCCEEDED") != 0)
                    failed++;
                json_object_set_new(j, "workspace_dir", json_string(t.dir));
            }
        }
        json_array_append_new(jobs, j);
        mp_serve_config_fini(&c);
    }
    json_decref(items);
    json_t *o = json_object();
    json_object_set_new(o, "parallel", json_boolean(parallel));
    json_object_set_new(o, "submitted", json_integer(submitted));
    json_object_set_new(o, "failed", json_integer(failed));
    json_object_set_new(o, "jobs", jobs);
    *json = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    return *json ? 0 : mp_diag_set(d, MP_ENOMEM, "out of memory");
}
