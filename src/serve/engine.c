/* Engine command lines: the benchmark config's defaults and env table, the
 * launch argv and env of the config's engine (its row of the engine table,
 * engines.c: shared env, the row's env rules, its builder or command
 * template, EXTRA_*_ARGS), the `docker run` argv
 * that wraps it, runner types and idle-GPU
 * picking from nvidia-smi output (docs/magpie-compat.md). Pure functions of
 * their inputs, so tests check them as argv goldens. Also how a running
 * engine is stopped (main process first, then its group) and how its
 * version and torch's are read from the engine's own Python.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/fmt.h>
#include <magpie/proc.h>
#include <magpie/serve.h>

/* ---- names ---- */

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

static const char *const MODE_NAMES[] = {"docker", "local", "ray"};

const char *mp_serve_mode_name(enum mp_serve_mode m)
{
    return (unsigned)m < 3 ? MODE_NAMES[m] : "unknown";
}

int mp_serve_mode_parse(const char *s, enum mp_serve_mode *out)
{
    int i = lookup(s, MODE_NAMES, 3);
    if (i < 0)
        return MP_EINVAL;
    *out = (enum mp_serve_mode)i;
    return 0;
}

static const char *const KIND_NAMES[] = {"auto", "measurement", "diagnostic"};

const char *mp_serve_run_kind_name(enum mp_serve_run_kind k)
{
    return (unsigned)k < 3 ? KIND_NAMES[k] : "unknown";
}

int mp_serve_run_kind_parse(const char *s, enum mp_serve_run_kind *out)
{
    int i = lookup(s, KIND_NAMES, 3);
    if (i < 0)
        return MP_EINVAL;
    *out = (enum mp_serve_run_kind)i;
    return 0;
}

/* ---- config basics ---- */

void mp_serve_config_init(struct mp_serve_config *c)
{
    memset(c, 0, sizeof(*c));
    c->arena = mp_arena_new(16384);
    c->framework = MP_SERVE_SGLANG; /* Magpie's from_dict default */
    c->model = "";
    c->precision = "fp8";
    c->run_mode = MP_SERVE_DOCKER;
    c->run_kind = MP_SERVE_KIND_AUTO;
    c->torch_profiler = true; /* Magpie: on when the profiler block is absent */
    c->gpu_monitor = true;
    c->tracelens_num_steps = 32;
    c->tracelens_perf_report = true;
    c->tracelens_multi_rank = true;
    c->gpu_monitor_interval_s = 2.0;
    c->gpu_monitor_device = -1;
    mp_gap_config_defaults(&c->gap);
    c->timeout_s = 3600;
    c->gpu_auto = true;
    c->gpu_min_free_gb = 8.0;
    c->server_ready_timeout_s = 2700;
    c->stall_timeout_s = 300;
    c->repeat = 1;
    c->stop_profile_timeout_s = 1800;
    c->stop_drain_s = 30;
    c->stop_grace_s = 20;
    /* Magpie's AgentX profiler defaults; duration_s is magpie's */
    c->capture.num_steps = 20;
    c->capture.num_profiles = 1;
    c->capture.interval_s = 200;
    c->capture.duration_s = 30;
    c->capture.capture_timeout_s = 300;
    c->capture.flush_timeout_s = 1800;
    c->agentx.fixed_schedule = true;
    c->agentx.slowdown = 1;
    c->agentx.block_size = 512;
}

bool mp_serve_captures_on(const struct mp_serve_config *c)
{
    return c->torch_profiler && (c->capture.set || c->agentx.enabled);
}

void mp_serve_config_fini(struct mp_serve_config *c)
{
    if (!c)
        return;
    mp_arena_free(c->arena);
    memset(c, 0, sizeof(*c));
}

const char *mp_serve_config_strdup(struct mp_serve_config *c, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *p = c->arena ? mp_arena_alloc(c->arena, n + 1) : NULL;
    if (!p)
        return NULL;
    memcpy(p, s, n + 1);
    return p;
}

static int env_index(const struct mp_serve_config *c, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < c->n_envs; i++)
        if (strncasecmp(c->envs[i], key, kl) == 0 && c->envs[i][kl] == '=')
            return i;
    return -1;
}

int mp_serve_config_setenv(struct mp_serve_config *c, const char *key, const char *val)
{
    size_t kl = strlen(key), vl = strlen(val);
    if (kl == 0 || strchr(key, '='))
        return MP_EINVAL;
    char *s = c->arena ? mp_arena_alloc(c->arena, kl + vl + 2) : NULL;
    if (!s)
        return MP_ENOMEM;
    for (size_t i = 0; i < kl; i++)
        s[i] = (char)toupper((unsigned char)key[i]);
    s[kl] = '=';
    memcpy(s + kl + 1, val, vl + 1);
    int i = env_index(c, key);
    if (i >= 0) {
        c->envs[i] = s;
        return 0;
    }
    if (c->n_envs >= MP_SERVE_MAX_ENVS)
        return MP_ENOMEM;
    c->envs[c->n_envs++] = s;
    return 0;
}

const char *mp_serve_config_getenv(const struct mp_serve_config *c, const char *key)
{
    int i = env_index(c, key);
    return i < 0 ? NULL : c->envs[i] + strlen(key) + 1;
}

int mp_serve_config_intenv(const struct mp_serve_config *c, const char *key, long def, long *out,
                           struct mp_diag *d)
{
    const char *v = mp_serve_config_getenv(c, key);
    *out = def;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno) {
        mp_diag_set_field(d, key);
        return mp_diag_set(d, MP_EINVAL, "envs.%s must be an integer, not '%s'", key, v);
    }
    *out = x;
    return 0;
}

bool mp_serve_config_heavy(const struct mp_serve_config *c)
{
    return c->torch_profiler || c->system_profiler || c->tracelens || c->gap_enabled;
}

enum mp_serve_run_kind mp_serve_config_run_kind(const struct mp_serve_config *c)
{
    if (c->run_kind != MP_SERVE_KIND_AUTO)
        return c->run_kind;
    /* AgentX fast mode is validation only, never a publishable measurement */
    return mp_serve_config_heavy(c) || (c->agentx.enabled && c->agentx.fast)
               ? MP_SERVE_KIND_DIAGNOSTIC
               : MP_SERVE_KIND_MEASUREMENT;
}

int mp_serve_config_validate(const struct mp_serve_config *c, struct mp_diag *d)
{
    if (!c->model || !*c->model) {
        mp_diag_set_field(d, "model");
        return mp_diag_set(d, MP_EINVAL, "no model: set benchmark.model or --model");
    }
    /* the image is one argument of docker pull / image inspect: never an option */
    if (c->docker_image) {
        int rc = mp_proc_image_check(c->docker_image, "docker_image", d);
        if (rc)
            return rc;
    }
    if (c->run_mode == MP_SERVE_RAY) {
        mp_diag_set_field(d, "run_mode");
        return mp_diag_set(d, MP_EUNSUP,
                           "run_mode 'ray' is not supported by magpie benchmark "
                           "yet (use local or docker)");
    }
    if (c->run_kind == MP_SERVE_KIND_MEASUREMENT && mp_serve_config_heavy(c)) {
        mp_diag_set_field(d, "run_kind");
        return mp_diag_set(d, MP_EINVAL,
                           "run_kind 'measurement' cannot be combined with the torch profiler, "
                           "system profiler, TraceLens or gap analysis (use diagnostic or auto)");
    }
    if (c->agentx.enabled && (!c->agentx.trace_file || !*c->agentx.trace_file)) {
        mp_diag_set_field(d, "agentx.trace_file");
        return mp_diag_set(
            d, MP_EINVAL,
            "agentx needs agentx.trace_file: the agentic trace to replay (mooncake / "
            "AIPerf JSONL); magpie does not resolve InferenceX recipes");
    }
    if (c->run_kind == MP_SERVE_KIND_MEASUREMENT && c->agentx.enabled && c->agentx.fast) {
        mp_diag_set_field(d, "agentx.mode");
        return mp_diag_set(d, MP_EINVAL,
                           "agentx mode 'fast' is validation only: it cannot be run_kind "
                           "'measurement' (use canonical)");
    }
    int prc = mp_serve_prefix_cache_check(c, d);
    if (prc)
        return prc;
    const struct mp_serve_engine *e = mp_serve_config_engine(c);
    if (e->only_vendor && strcmp(e->only_vendor, "amd") == 0 && c->run_mode == MP_SERVE_DOCKER &&
        c->gpu_arch && strncmp(c->gpu_arch, "sm_", 3) == 0) {
        mp_diag_set_field(d, "framework");
        return mp_diag_set(d, MP_EINVAL, "%s runs on AMD GPUs only (gpu_arch %s)", e->label,
                           c->gpu_arch);
    }
    if (c->torch_profiler && (!e->profile_start || !e->profile_stop)) {
        mp_diag_set_field(d, "profiler.torch_profiler");
        return mp_diag_set(d, MP_EINVAL,
                           "%s has no profiler start/stop endpoints: turn the torch profiler "
                           "off (profiler.torch_profiler.enabled: false, or no --torch-profiler)",
                           e->label);
    }
    if (c->reuse && c->run_mode != MP_SERVE_LOCAL) {
        mp_diag_set_field(d, "server_lifecycle");
        return mp_diag_set(d, MP_EINVAL, "server_lifecycle needs run_mode: local");
    }
    if (c->reuse && c->torch_profiler && !c->reuse_cleanup) {
        mp_diag_set_field(d, "server_lifecycle");
        return mp_diag_set(d, MP_EINVAL,
                           "server_lifecycle with the torch profiler needs cleanup: true (a "
                           "profiled server must not be reused)");
    }
    if (c->gap.start_pct < 0 || c->gap.end_pct > 100 || c->gap.start_pct >= c->gap.end_pct) {
        mp_diag_set_field(d, "gap_analysis");
        return mp_diag_set(d, MP_EINVAL,
                           "gap_analysis window must satisfy 0 <= trace_start_pct < "
                           "trace_end_pct <= 100");
    }
    if (c->repeat < 1 || c->repeat > 1000) {
        mp_diag_set_field(d, "repeat");
        return mp_diag_set(d, MP_EINVAL, "repeat must be 1..1000, not %d", c->repeat);
    }
    if (c->repeat > 1 && c->torch_profiler) {
        mp_diag_set_field(d, "repeat");
        return mp_diag_set(d, MP_EINVAL,
                           "repeat > 1 measures; it cannot be combined with the torch profiler "
                           "(profile one run, repeat unprofiled ones)");
    }
    if (c->timeout_s <= 0) {
        mp_diag_set_field(d, "timeout_seconds");
        return mp_diag_set(d, MP_EINVAL, "timeout_seconds must be positive");
    }
    static const char *const ints[] = {"TP",          "CONC", "ISL",          "OSL",
                                       "NUM_PROMPTS", "PORT", "MAX_MODEL_LEN"};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        long v;
        int rc = mp_serve_config_intenv(c, ints[i], 1, &v, d);
        if (rc)
            return rc;
        if (v < 0 || (v == 0 && strcmp(ints[i], "NUM_PROMPTS") != 0)) {
            mp_diag_set_field(d, ints[i]);
            return mp_diag_set(d, MP_EINVAL, "envs.%s must be positive", ints[i]);
        }
    }
    return 0;
}

/* ---- command building ---- */

static int vec_push(char ***v, int *n, int *cap, const char *s)
{
    size_t c = (size_t)*cap; /* room for s and the NULL after it */
    if (MP_GROW(*v, c, (size_t)*n + 2, 32))
        return MP_ENOMEM;
    *cap = (int)c;
    char *dup = strdup(s);
    if (!dup)
        return MP_ENOMEM;
    (*v)[(*n)++] = dup;
    (*v)[*n] = NULL;
    return 0;
}

void mp_serve_cmd_fini(struct mp_serve_cmd *cmd)
{
    if (!cmd)
        return;
    for (int i = 0; cmd->argv && i < cmd->argc; i++)
        free(cmd->argv[i]);
    for (int i = 0; cmd->env && i < cmd->n_env; i++)
        free(cmd->env[i]);
    free(cmd->argv);
    free(cmd->env);
    memset(cmd, 0, sizeof(*cmd));
}

int mp_serve_cmd_arg(struct mp_serve_cmd *cmd, const char *arg)
{
    return vec_push(&cmd->argv, &cmd->argc, &cmd->argv_cap, arg);
}

int mp_serve_cmd_env(struct mp_serve_cmd *cmd, const char *key, const char *val)
{
    size_t kl = strlen(key);
    /* replace an earlier value of the same key */
    for (int i = 0; i < cmd->n_env; i++) {
        if (strncmp(cmd->env[i], key, kl) == 0 && cmd->env[i][kl] == '=') {
            free(cmd->env[i]);
            cmd->env[i] = NULL;
            for (int j = i; j < cmd->n_env - 1; j++)
                cmd->env[j] = cmd->env[j + 1];
            cmd->n_env--;
            cmd->env[cmd->n_env] = NULL;
            break;
        }
    }
    size_t n = kl + strlen(val) + 2;
    char *s = malloc(n);
    if (!s)
        return MP_ENOMEM;
    snprintf(s, n, "%s=%s", key, val);
    int rc = vec_push(&cmd->env, &cmd->n_env, &cmd->env_cap, s);
    free(s);
    return rc;
}

/* Appends the words of an EXTRA_*_ARGS value (shlex rules). */
static int extra_args(struct mp_serve_cmd *cmd, const char *s, const char *name, struct mp_diag *d)
{
    if (!s || !*s)
        return 0;
    char **words = NULL;
    int n = 0, rc = mp_proc_split(s, &words, &n, d);
    if (rc) {
        mp_diag_set_field(d, name);
        return rc;
    }
    for (int i = 0; i < n && !rc; i++)
        rc = mp_serve_cmd_arg(cmd, words[i]);
    mp_proc_argv_free(words);
    return rc;
}

static const char *envd(const struct mp_serve_config *c, const char *key, const char *def)
{
    const char *v = mp_serve_config_getenv(c, key);
    return v && *v ? v : def;
}

bool mp_serve_tracelens_inference(const struct mp_serve_config *c)
{
    return c->tracelens && c->tracelens_mode == MP_SERVE_TL_INFERENCE;
}

void mp_serve_tracelens_window(const struct mp_serve_config *c, long *max_iters, long *delay)
{
    long osl = 512, conc = 32;
    mp_serve_config_intenv(c, "OSL", 512, &osl, NULL);
    mp_serve_config_intenv(c, "CONC", 32, &conc, NULL);
    const char *rs = mp_serve_config_getenv(c, "RANDOM_RANGE_RATIO");
    double rr = rs && *rs ? strtod(rs, NULL) : 1.0;
    long m = conc > 0 ? osl * 16 / conc : 256;
    *max_iters = m < 256 ? 256 : (m > 1024 ? 1024 : m);
    double dl = (double)osl * (rr + 1) * 3 - (double)*max_iters / 2;
    *delay = dl > 0 ? (long)dl : 0;
}

/* rules[0..n): each set unless it keeps the user's value and the config has one */
static int env_rules(const struct mp_serve_config *c, const struct mp_serve_env_rule *rules,
                     size_t n, struct mp_serve_cmd *out)
{
    int rc = 0;
    for (size_t i = 0; i < n && rules[i].key; i++)
        if (!rules[i].keep_user || !mp_serve_config_getenv(c, rules[i].key))
            rc |= mp_serve_cmd_env(out, rules[i].key, rules[i].val);
    return rc;
}

/* the engine's environment: every config env (as Magpie exports them all),
 * the visible devices and the profiler's */
static int engine_env(const struct mp_serve_config *c, const struct mp_serve_plan *p, bool amd,
                      struct mp_serve_cmd *out)
{
    int rc = 0;
    for (int i = 0; i < c->n_envs && !rc; i++) {
        const char *eq = strchr(c->envs[i], '=');
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - c->envs[i]), c->envs[i]);
        rc = mp_serve_cmd_env(out, key, eq + 1);
    }
    rc |= mp_serve_cmd_env(out, "MODEL", c->model);
    rc |= mp_serve_cmd_env(out, "PRECISION", c->precision);
    if (p->visible_devices) {
        if (amd) {
            char seq[256] = "";
            int k = 1;
            for (const char *s = p->visible_devices; *s; s++)
                k += *s == ',';
            for (int i = 0; i < k; i++)
                snprintf(seq + strlen(seq), sizeof(seq) - strlen(seq), "%s%d", i ? "," : "", i);
            rc |= mp_serve_cmd_env(out, "ROCR_VISIBLE_DEVICES", p->visible_devices);
            rc |= mp_serve_cmd_env(out, "HIP_VISIBLE_DEVICES", seq);
        } else {
            rc |= mp_serve_cmd_env(out, "CUDA_VISIBLE_DEVICES", p->visible_devices);
            if (!mp_serve_config_getenv(c, "CUDA_DEVICE_ORDER"))
                rc |= mp_serve_cmd_env(out, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        }
    }
    if (p->trace_dir) {
        rc |= mp_serve_cmd_env(out, "PROFILE", "1");
        /* every engine's profiler dir, as Magpie exports them all */
        const struct mp_serve_engine *e = mp_serve_config_engine(c);
        bool own = !e->profiler_dir_env;
        for (int f = 0; f < MP_SERVE_N_FW; f++) {
            const char *k = mp_serve_engine_get((enum mp_serve_framework)f)->profiler_dir_env;
            own |= k && e->profiler_dir_env && strcmp(k, e->profiler_dir_env) == 0;
            if (k)
                rc |= mp_serve_cmd_env(out, k, p->trace_dir);
        }
        if (!own)
            rc |= mp_serve_cmd_env(out, e->profiler_dir_env, p->trace_dir);
        if (mp_serve_tracelens_inference(c)) /* Magpie's preprocessing */
            rc |= env_rules(c, e->tracelens_env, 3, out);
    }
    return rc;
}

int mp_serve_engine_cmd(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                        struct mp_serve_cmd *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    const struct mp_serve_engine *e = mp_serve_config_engine(c);
    struct mp_serve_engine_args a;
    snprintf(a.port, sizeof(a.port), "%d", p->port > 0 ? p->port : 8888);
    a.tp = envd(c, "TP", "1");
    a.mml = envd(c, "MAX_MODEL_LEN", "4096");
    a.gmu = envd(c, "GPU_MEMORY_UTILIZATION", envd(c, "GPU_MEM_UTIL", "0.95"));
    /* loopback unless asked: an engine benchmarked here is nobody else's */
    a.host = p->host && *p->host ? p->host : "127.0.0.1";
    a.amd = p->vendor == MP_GPU_VENDOR_AMD;
    a.extra = e->extra_args_env ? mp_serve_config_getenv(c, e->extra_args_env) : NULL;
    int rc = engine_env(c, p, a.amd, out);
    if (!rc && a.amd)
        rc = env_rules(c, e->amd_env, 2, out);
    if (rc)
        goto fail;
    if (e->build_argv) {
        rc = e->build_argv(c, p, e, &a, out, d);
    } else {
        rc = mp_serve_engine_template(c, p, e->command, &a, out, "engine.command", d);
        if (!rc && p->trace_dir && e->profiler_args)
            rc = mp_serve_engine_template(c, p, e->profiler_args, &a, out, "engine.profiler.args",
                                          d);
    }
    if (!rc)
        rc = extra_args(out, a.extra, e->extra_args_env, d);
    if (rc)
        goto fail;
    return 0;
fail:
    mp_serve_cmd_fini(out);
    if (rc == MP_ENOMEM)
        mp_diag_set(d, rc, "out of memory building the engine command");
    return rc;
}

int mp_serve_docker_cmd(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                        struct mp_serve_cmd *out, struct mp_diag *d)
{
    struct mp_serve_cmd eng;
    memset(out, 0, sizeof(*out));
    if (!p->image || !*p->image)
        return mp_diag_set(d, MP_EINVAL, "no docker image");
    /* inside the container the engine listens on every interface of the
     * container's own network; only the published port reaches the host */
    struct mp_serve_plan inner = *p;
    inner.host = "0.0.0.0";
    int rc = mp_serve_engine_cmd(c, &inner, &eng, d);
    if (rc)
        return rc;
    if (!eng.argv || eng.argc == 0) {
        mp_serve_cmd_fini(&eng);
        return mp_diag_set(d, MP_EINVAL, "empty engine command");
    }
    char buf[4400];
    rc |= mp_serve_cmd_arg(out, "docker");
    rc |= mp_serve_cmd_arg(out, "run");
    rc |= mp_serve_cmd_arg(out, "--rm");
    rc |= mp_serve_cmd_arg(out, "--ipc=host");
    rc |= mp_serve_cmd_arg(out, "--shm-size=16g");
    snprintf(buf, sizeof(buf), "%s:%d:%d", p->host && *p->host ? p->host : "127.0.0.1",
             p->port > 0 ? p->port : 8888, p->port > 0 ? p->port : 8888);
    rc |= mp_serve_cmd_arg(out, "-p");
    rc |= mp_serve_cmd_arg(out, buf);
    if (p->container) {
        rc |= mp_serve_cmd_arg(out, "--name");
        rc |= mp_serve_cmd_arg(out, p->container);
    }
    if (p->vendor == MP_GPU_VENDOR_AMD) {
        rc |= mp_serve_cmd_arg(out, "--device=/dev/kfd");
        rc |= mp_serve_cmd_arg(out, "--device=/dev/dri");
        rc |= mp_serve_cmd_arg(out, "--group-add=video");
        rc |= mp_serve_cmd_arg(out, "--cap-add=SYS_PTRACE");
        rc |= mp_serve_cmd_arg(out, "--security-opt=seccomp=unconfined");
    } else if (p->vendor == MP_GPU_VENDOR_NVIDIA) {
        rc |= mp_serve_cmd_arg(out, "--gpus=all");
    }
    if (c->privileged)
        rc |= mp_serve_cmd_arg(out, "--privileged");
    if (p->hf_cache) {
        snprintf(buf, sizeof(buf), "%s:/root/.cache/huggingface", p->hf_cache);
        rc |= mp_serve_cmd_arg(out, "-v");
        rc |= mp_serve_cmd_arg(out, buf);
    }
    if (p->model_dir) {
        snprintf(buf, sizeof(buf), "%s:%s", p->model_dir, p->model_dir);
        rc |= mp_serve_cmd_arg(out, "-v");
        rc |= mp_serve_cmd_arg(out, buf);
    }
    if (p->workspace) {
        snprintf(buf, sizeof(buf), "%s:/workspace", p->workspace);
        rc |= mp_serve_cmd_arg(out, "-v");
        rc |= mp_serve_cmd_arg(out, buf);
    }
    for (int i = 0; i < eng.n_env; i++) {
        rc |= mp_serve_cmd_arg(out, "-e");
        rc |= mp_serve_cmd_arg(out, eng.env[i]);
    }
    const char *tok = getenv("HF_TOKEN");
    if (tok && *tok) { /* passed by name: the value never appears in argv */
        rc |= mp_serve_cmd_arg(out, "-e");
        rc |= mp_serve_cmd_arg(out, "HF_TOKEN");
    }
    rc |= mp_serve_cmd_arg(out, "-w");
    rc |= mp_serve_cmd_arg(out, "/workspace");
    rc |= mp_serve_cmd_arg(out, "--entrypoint");
    rc |= mp_serve_cmd_arg(out, eng.argv[0]);
    rc |= mp_serve_cmd_arg(out, p->image);
    for (int i = 1; i < eng.argc; i++)
        rc |= mp_serve_cmd_arg(out, eng.argv[i]);
    mp_serve_cmd_fini(&eng);
    if (rc) {
        mp_serve_cmd_fini(out);
        return mp_diag_set(d, MP_ENOMEM, "out of memory building the docker command");
    }
    return 0;
}

/* ---- images and runners ---- */

const char *mp_serve_runner_for(const char *arch)
{
    static const char *const map[][2] = {
        {"gfx942", "mi300x"}, {"gfx950", "mi355x"}, {"gfx1100", "gfx11"}, {"gfx1101", "gfx11"},
        {"gfx1102", "gfx11"}, {"gfx1103", "gfx11"}, {"gfx1150", "gfx11"}, {"gfx1151", "gfx11"},
        {"gfx1152", "gfx11"}, {"gfx1153", "gfx11"}, {"sm_80", "a100"},    {"sm_90", "h100"},
        {"sm_90a", "h200"},   {"sm_100", "b200"},
    };
    for (size_t i = 0; arch && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i][0], arch) == 0)
            return map[i][1];
    return NULL;
}

/* ---- idle GPUs ---- */

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    size_t k = 0;
    while (s[k] && isspace((unsigned char)s[k]))
        k++;
    memmove(s, s + k, n - k + 1);
}

/* Splits a CSV line into at most max trimmed fields in place. */
static int csv_fields(char *line, char **f, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save)) {
        trim(t);
        f[n++] = t;
    }
    return n;
}

int mp_serve_pick_idle_nvidia(const char *gpus_csv, const char *apps_csv, double min_free_gb,
                              const int *cand, int n_cand, int want, int *ids, int max_ids)
{
    char busy[64][96];
    int n_busy = 0, picked = 0;
    char *apps = strdup(apps_csv ? apps_csv : ""), *save = NULL;
    char *gpus = strdup(gpus_csv ? gpus_csv : "");
    if (!apps || !gpus) {
        free(apps);
        free(gpus);
        return MP_ENOMEM;
    }
    for (char *ln = strtok_r(apps, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        char *f[4];
        if (csv_fields(ln, f, 4) >= 1 && n_busy < 64 && strncmp(f[0], "GPU-", 4) == 0)
            snprintf(busy[n_busy++], sizeof(busy[0]), "%s", f[0]);
    }
    save = NULL;
    for (char *ln = strtok_r(gpus, "\n", &save); ln && picked < want && picked < max_ids;
         ln = strtok_r(NULL, "\n", &save)) {
        char *f[6];
        if (csv_fields(ln, f, 6) < 4)
            continue;
        char *end;
        long idx = strtol(f[0], &end, 10);
        if (end == f[0] || *end)
            continue; /* header or junk */
        double used = strtod(f[2], NULL), total = strtod(f[3], NULL);
        bool ok = (total - used) / 1024.0 >= min_free_gb;
        for (int i = 0; ok && i < n_busy; i++)
            if (strcmp(busy[i], f[1]) == 0)
                ok = false;
        if (ok && n_cand > 0) {
            ok = false;
            for (int i = 0; i < n_cand; i++)
                ok |= cand[i] == idx;
        }
        if (ok)
            ids[picked++] = (int)idx;
    }
    free(apps);
    free(gpus);
    return picked;
}

/* ---- stopping an engine ---- */

static bool group_has_members(pid_t pgid)
{
    return pgid > 1 && !(kill(-pgid, 0) != 0 && errno == ESRCH);
}

static double since_s(uint64_t t0)
{
    return (double)(mp_time_ns() - t0) / 1e9;
}

/* Waits up to limit_s for the group to be gone; true when it is. */
static bool wait_group_gone(pid_t pgid, double limit_s)
{
    uint64_t until = mp_time_ns() + (uint64_t)(limit_s * 1e9);
    while (group_has_members(pgid)) {
        if (mp_time_ns() >= until)
            return false;
        usleep(50000);
    }
    return true;
}

void mp_serve_stop_engine(pid_t pid, pid_t pgid, struct mp_serve_stop *st)
{
    double drain = st->drain_s > 0 ? st->drain_s : 30;
    double grace = st->grace_s > 0 ? st->grace_s : 20;
    st->main_signalled = st->group_signalled = st->killed = false;
    st->main_exit_s = -1;
    st->stop_s = 0;
    uint64_t t0 = mp_time_ns();
    bool running = pid > 1 && st->main_running && st->main_running(st->user, 0);
    if (running) {
        st->main_signalled = kill(pid, st->signal > 0 ? st->signal : SIGTERM) == 0;
        uint64_t until = t0 + (uint64_t)(drain * 1e9);
        while ((running = st->main_running(st->user, 200)) && mp_time_ns() < until)
            ;
        if (!running)
            st->main_exit_s = since_s(t0);
        /* what the main process started gets the rest of the drain time to
         * go on its own: the main process may exit before its children do */
        double left = drain - since_s(t0);
        if (!running && left > 0)
            wait_group_gone(pgid, left);
    }
    if (group_has_members(pgid)) {
        st->group_signalled = kill(-pgid, SIGTERM) == 0;
        uint64_t until = mp_time_ns() + (uint64_t)(grace * 1e9);
        /* the main process (a child of ours) must be reaped for the group
         * check to mean the others */
        while (mp_time_ns() < until && group_has_members(pgid)) {
            if (st->main_running && st->main_running(st->user, 100))
                continue;
            usleep(50000);
        }
    }
    if (group_has_members(pgid)) {
        st->killed = kill(-pgid, SIGKILL) == 0;
        for (int i = 0; i < 100 && group_has_members(pgid); i++) {
            if (st->main_running)
                st->main_running(st->user, 0);
            usleep(50000);
        }
    }
    if (st->main_running)
        st->main_running(st->user, 0);
    st->stop_s = since_s(t0);
}

void mp_serve_stop_json(const struct mp_serve_stop *st, struct mp_buf *b)
{
    mp_buf_printf(b,
                  "{\"order\": \"main process, then group, then SIGKILL\", \"drain_s\": %g, "
                  "\"grace_s\": %g, \"main_signalled\": %s, \"main_exit_s\": ",
                  st->drain_s > 0 ? st->drain_s : 30, st->grace_s > 0 ? st->grace_s : 20,
                  st->main_signalled ? "true" : "false");
    mp_json_double(b, st->main_exit_s >= 0 ? st->main_exit_s : NAN);
    mp_buf_printf(b, ", \"group_signalled\": %s, \"killed\": %s, \"stop_s\": ",
                  st->group_signalled ? "true" : "false", st->killed ? "true" : "false");
    mp_json_double(b, st->stop_s);
    mp_buf_puts(b, "}");
}

/* ---- versions ---- */

/* The interpreter a `vllm` console script runs: its "#!" line when that
 * names a python, else NULL. */
static int shebang_python(const char *script, char *out, size_t len)
{
    FILE *f = fopen(script, "r");
    if (!f)
        return MP_ENOTFOUND;
    char line[1024] = "";
    bool got = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    if (!got || strncmp(line, "#!", 2) != 0)
        return MP_ENOTFOUND;
    char *s = line + 2;
    s += strspn(s, " \t");
    size_t n = strcspn(s, " \t\r\n");
    s[n] = 0;
    const char *base = strrchr(s, '/');
    base = base ? base + 1 : s;
    if (strncmp(base, "python", 6) != 0 || (size_t)snprintf(out, len, "%s", s) >= len)
        return MP_ENOTFOUND;
    return 0;
}

int mp_serve_probe_versions(enum mp_serve_framework f, const struct mp_serve_cmd *cmd,
                            const char *container, char *engine, size_t engine_len, char *torch,
                            size_t torch_len)
{
    const struct mp_serve_engine *e = mp_serve_engine_get(f);
    if (!e) {
        if (engine_len)
            engine[0] = 0;
        if (torch_len)
            torch[0] = 0;
        return MP_EINVAL;
    }
    return mp_serve_probe_engine_versions(e, cmd, container, engine, engine_len, torch, torch_len);
}

/* The engine's version_command through sh (from "/", in the engine's env). */
static int probe_command(const char *command, const struct mp_serve_cmd *cmd, char *engine,
                         size_t engine_len)
{
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    struct mp_proc_opts po = {.cwd = "/",
                              .timeout_s = 60,
                              .grace_s = 2,
                              .env = cmd ? (const char *const *)cmd->env : NULL,
                              .out_mode = MP_PROC_CAPTURE,
                              .err_mode = MP_PROC_DISCARD,
                              .capture_max = 4096};
    struct mp_proc_result pr;
    int rc = mp_proc_run(argv, &po, &pr, NULL);
    if (rc == 0 && mp_proc_result_ok(&pr)) {
        const char *out = mp_buf_cstr(&pr.out);
        out += strspn(out, " \t\r\n");
        if (engine_len)
            snprintf(engine, engine_len, "%.*s", (int)strcspn(out, "\r\n"), out);
    } else if (rc == 0) {
        rc = MP_EIO;
    }
    mp_proc_result_fini(&pr);
    return rc;
}

int mp_serve_probe_engine_versions(const struct mp_serve_engine *e, const struct mp_serve_cmd *cmd,
                                   const char *container, char *engine, size_t engine_len,
                                   char *torch, size_t torch_len)
{
    if (engine_len)
        engine[0] = 0;
    if (torch_len)
        torch[0] = 0;
    if (!container && e->version_command)
        return probe_command(e->version_command, cmd, engine, engine_len);
    if (!e->version_dists)
        return MP_ENOTFOUND;
    char script[512];
    snprintf(script, sizeof(script),
             "import importlib.metadata as m\n"
             "def v(*names):\n"
             "    for n in names:\n"
             "        try:\n"
             "            return m.version(n)\n"
             "        except Exception:\n"
             "            pass\n"
             "    return ''\n"
             "print(v(%s) + '\\t' + v('torch'))\n",
             e->version_dists);
    char py[4096] = "python3";
    const char *path_env = NULL;
    for (int i = 0; cmd && i < cmd->n_env; i++)
        if (strncmp(cmd->env[i], "PATH=", 5) == 0)
            path_env = cmd->env[i] + 5;
    if (!path_env)
        path_env = getenv("PATH");
    if (!container && cmd && cmd->argc > 0) {
        char exe[4096];
        if (mp_proc_which_in(cmd->argv[0], path_env, exe, sizeof(exe)) == 0 &&
            shebang_python(exe, py, sizeof(py)) != 0 &&
            mp_proc_which_in("python3", path_env, py, sizeof(py)) != 0)
            snprintf(py, sizeof(py), "python3");
    }
    const char *argv_local[] = {py, "-c", script, NULL};
    const char *argv_docker[] = {"docker", "exec", container, "python3", "-c", script, NULL};
    /* from "/": python -c puts its working directory first on sys.path, so a
     * stray select.py or json.py where magpie runs would break the probe */
    struct mp_proc_opts po = {.cwd = "/",
                              .timeout_s = 60,
                              .grace_s = 2,
                              .env = container || !cmd ? NULL : (const char *const *)cmd->env,
                              .out_mode = MP_PROC_CAPTURE,
                              .err_mode = MP_PROC_DISCARD,
                              .capture_max = 4096};
    struct mp_proc_result pr;
    int rc = mp_proc_run(container ? argv_docker : argv_local, &po, &pr, NULL);
    if (rc == 0 && mp_proc_result_ok(&pr)) {
        const char *out = mp_buf_cstr(&pr.out);
        size_t a = strcspn(out, "\t\n");
        if (engine_len)
            snprintf(engine, engine_len, "%.*s", (int)a, out);
        if (out[a] == '\t') {
            const char *t = out + a + 1;
            if (torch_len)
                snprintf(torch, torch_len, "%.*s", (int)strcspn(t, "\r\n"), t);
        }
    } else if (rc == 0) {
        rc = MP_EIO;
    }
    mp_proc_result_fini(&pr);
    return rc;
}
