/* Unit tests for the engine table (src/serve/engines.c) and the benchmark
 * YAML's `engine:` section (src/serve/config_engine.c): the trtllm-serve
 * and LMDeploy rows as argv goldens from their documented CLIs, names and
 * aliases, Ray placement read from the rows, a YAML-declared engine's argv,
 * env, profiler args, endpoints and config.yaml round trip, and its errors
 * with file:line:col and field. The vLLM, SGLang and ATOM goldens are in
 * test_serve.c and are unchanged by the table. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <magpie/proc.h>
#include <magpie/ray.h>
#include <magpie/serve.h>

static void argv_env(const struct mp_serve_config *c, const struct mp_serve_plan *p, char *argv,
                     char *env, size_t len)
{
    struct mp_serve_cmd cmd;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_serve_engine_cmd(c, p, &cmd, &d);
    if (rc)
        fail_msg("engine_cmd: %d %s", rc, d.msg);
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_proc_join((const char *const *)cmd.argv, &a), 0);
    if (cmd.env)
        assert_int_equal(mp_proc_join((const char *const *)cmd.env, &e), 0);
    snprintf(argv, len, "%s", mp_buf_cstr(&a));
    snprintf(env, len, "%s", mp_buf_cstr(&e));
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_cmd_fini(&cmd);
}

static void test_trtllm(void **state)
{
    (void)state;
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    assert_int_equal(mp_serve_framework_parse("trtllm-serve", &c.framework), 0);
    assert_int_equal(c.framework, MP_SERVE_TRTLLM);
    c.model = "org/model-7b";
    mp_serve_config_setenv(&c, "TP", "4");
    mp_serve_config_setenv(&c, "EXTRA_TRTLLM_ARGS", "--backend pytorch");
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 8000};
    char a[2048], e[2048];
    argv_env(&c, &p, a, e, sizeof(a));
    assert_string_equal(a, "trtllm-serve org/model-7b --host 127.0.0.1 --port 8000 --tp_size 4 "
                           "--max_seq_len 4096 --kv_cache_free_gpu_memory_fraction 0.95 "
                           "--trust_remote_code --backend pytorch");
    assert_string_equal(e, "TP=4 'EXTRA_TRTLLM_ARGS=--backend pytorch' MODEL=org/model-7b "
                           "PRECISION=fp8");
    /* no profiler endpoints: the torch profiler is refused by name */
    c.torch_profiler = true;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "profiler.torch_profiler");
    c.torch_profiler = false;
    assert_int_equal(mp_serve_config_validate(&c, &d), 0);
    const char *img = NULL;
    assert_int_equal(mp_serve_image_for(MP_SERVE_TRTLLM, "sm_90", &img, NULL), 0);
    assert_non_null(strstr(img, "tensorrt-llm"));
    assert_int_equal(mp_serve_image_for(MP_SERVE_TRTLLM, "gfx942", &img, NULL), MP_ENOTFOUND);
    mp_serve_config_fini(&c);
}

static void test_lmdeploy(void **state)
{
    (void)state;
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    c.framework = MP_SERVE_LMDEPLOY;
    c.model = "internlm/internlm2_5-7b-chat";
    mp_serve_config_setenv(&c, "MAX_MODEL_LEN", "8192");
    mp_serve_config_setenv(&c, "GPU_MEMORY_UTILIZATION", "0.8");
    struct mp_serve_plan p = {
        .vendor = MP_GPU_VENDOR_NVIDIA, .port = 23333, .visible_devices = "2"};
    char a[2048], e[2048];
    argv_env(&c, &p, a, e, sizeof(a));
    assert_string_equal(a, "lmdeploy serve api_server internlm/internlm2_5-7b-chat --server-name "
                           "127.0.0.1 --server-port 23333 --tp 1 --session-len 8192 "
                           "--cache-max-entry-count 0.8");
    assert_string_equal(e, "MAX_MODEL_LEN=8192 GPU_MEMORY_UTILIZATION=0.8 "
                           "MODEL=internlm/internlm2_5-7b-chat PRECISION=fp8 "
                           "CUDA_VISIBLE_DEVICES=2 CUDA_DEVICE_ORDER=PCI_BUS_ID");
    /* docker wraps the same argv, the engine listening on 0.0.0.0 inside */
    p.image = "openmmlab/lmdeploy:latest";
    struct mp_serve_cmd cmd;
    assert_int_equal(mp_serve_docker_cmd(&c, &p, &cmd, NULL), 0);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_proc_join((const char *const *)cmd.argv, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b),
                           "--entrypoint lmdeploy openmmlab/lmdeploy:latest serve api_server "
                           "internlm/internlm2_5-7b-chat --server-name 0.0.0.0 "));
    mp_buf_fini(&b);
    mp_serve_cmd_fini(&cmd);
    mp_serve_config_fini(&c);
}

static void test_names_placement(void **state)
{
    (void)state;
    assert_string_equal(mp_serve_engine_names(), "vllm, sglang, atom, trtllm or lmdeploy");
    assert_string_equal(mp_serve_engine_words(), "vllm|sglang|atom|trtllm|lmdeploy");
    enum mp_serve_framework f;
    assert_int_equal(mp_serve_framework_parse("TensorRT-LLM", &f), 0);
    assert_int_equal(f, MP_SERVE_TRTLLM);
    assert_int_equal(mp_serve_framework_parse("tgi", &f), MP_EINVAL);
    for (int i = 0; i < MP_SERVE_N_FW; i++) {
        const struct mp_serve_engine *e = mp_serve_engine_get((enum mp_serve_framework)i);
        assert_non_null(e);
        assert_string_equal(mp_serve_framework_name((enum mp_serve_framework)i), e->name);
        assert_true(e->build_argv || e->command);
        assert_non_null(e->health_path);
    }
    assert_null(mp_serve_engine_get(MP_SERVE_USER));
    /* engines without a multi-node rule are run as given, with a warning */
    struct mp_ray_placement pl;
    mp_ray_tp_placement(MP_SERVE_LMDEPLOY, 16, 8, "--x", &pl);
    assert_true(pl.warn);
    assert_null(pl.extra_key);
    mp_ray_tp_placement(MP_SERVE_LMDEPLOY, 4, 8, NULL, &pl);
    assert_false(pl.warn);
}

static const char USER_YAML[] =
    "benchmark:\n"                                                            /* 1 */
    "  model: tiny\n"                                                         /* 2 */
    "  run_mode: local\n"                                                     /* 3 */
    "  envs:\n"                                                               /* 4 */
    "    TP: 2\n"                                                             /* 5 */
    "  engine:\n"                                                             /* 6 */
    "    name: my-server\n"                                                   /* 7 */
    "    command: \"python3 srv.py serve {model} --port={port} --tp {TP}\"\n" /* 8 */
    "    health_path: /ping\n"                                                /* 9 */
    "    models_path: null\n"                                                 /* 10 */
    "    version_command: echo 1.2.3\n"                                       /* 11 */
    "    stop_signal: SIGINT\n"                                               /* 12 */
    "    extra_args_env: EXTRA_MY_ARGS\n"                                     /* 13 */
    "    env: {MY_FLAG: on}\n"                                                /* 14 */
    "    profiler:\n"                                                         /* 15 */
    "      start: /prof/start\n"                                              /* 16 */
    "      stop: /prof/stop\n"                                                /* 17 */
    "      args: \"--trace-dir {trace_dir}\"\n"                               /* 18 */
    "      dir_env: MY_TRACE_DIR\n";                                          /* 19 */

static void load_text(struct mp_serve_config *c, const char *text, int want, struct mp_diag *d)
{
    mp_serve_config_init(c);
    mp_diag_clear(d);
    int rc = mp_serve_config_load_string(c, text, strlen(text), "e.yaml", d);
    if (rc != want)
        fail_msg("load: %d (want %d) %s field %s\n%s", rc, want, d->msg, d->field, text);
}

static void test_user_engine(void **state)
{
    (void)state;
    struct mp_serve_config c;
    struct mp_diag d;
    load_text(&c, USER_YAML, 0, &d);
    const struct mp_serve_engine *e = mp_serve_config_engine(&c);
    assert_int_equal(c.framework, MP_SERVE_USER);
    assert_string_equal(e->name, "my-server");
    assert_string_equal(e->health_path, "/ping");
    assert_null(e->models_path);
    assert_int_equal(e->stop_signal, SIGINT);
    assert_string_equal(e->profile_start, "/prof/start");
    mp_serve_config_setenv(&c, "EXTRA_MY_ARGS", "--fast 'a b'");
    struct mp_serve_plan p = {.port = 9100, .trace_dir = "/ws/torch_trace"};
    char a[2048], env[2048];
    argv_env(&c, &p, a, env, sizeof(a));
    assert_string_equal(a, "python3 srv.py serve tiny --port=9100 --tp 2 --trace-dir "
                           "/ws/torch_trace --fast 'a b'");
    assert_non_null(strstr(env, "MY_FLAG=on"));
    assert_non_null(strstr(env, "VLLM_TORCH_PROFILER_DIR=/ws/torch_trace"));
    assert_non_null(strstr(env, "MY_TRACE_DIR=/ws/torch_trace"));
    assert_int_equal(mp_serve_config_validate(&c, &d), 0);
    /* config.yaml reads back to the same engine */
    struct mp_buf y;
    mp_buf_init(&y, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y), 0);
    struct mp_serve_config c2;
    load_text(&c2, mp_buf_cstr(&y), 0, &d);
    char a2[2048], env2[2048];
    argv_env(&c2, &p, a2, env2, sizeof(a2));
    assert_string_equal(a, a2);
    assert_int_equal(mp_serve_config_engine(&c2)->stop_signal, SIGINT);
    assert_null(mp_serve_config_engine(&c2)->models_path);
    mp_buf_fini(&y);
    mp_serve_config_fini(&c2);
    /* the version command's first line */
    char ev[64], tv[64];
    assert_int_equal(mp_serve_probe_engine_versions(e, NULL, NULL, ev, sizeof(ev), tv, sizeof(tv)),
                     0);
    assert_string_equal(ev, "1.2.3");
    assert_string_equal(tv, "");
    mp_serve_config_fini(&c);
}

/* an engine section of lines (from line 4); the error's line, col, field */
static void expect_engine_error(const char *lines, long line, long col, const char *field,
                                const char *needle)
{
    char text[2048];
    snprintf(text, sizeof(text), "benchmark:\n  model: tiny\n  engine:\n%s", lines);
    struct mp_serve_config c;
    struct mp_diag d;
    load_text(&c, text, MP_EINVAL, &d);
    if (d.line != line || d.col != col || strcmp(d.field, field) != 0 || !strstr(d.msg, needle))
        fail_msg("line %ld col %ld field '%s' msg '%s'", d.line, d.col, d.field, d.msg);
    assert_string_equal(d.file, "e.yaml");
    mp_serve_config_fini(&c);
}

static void test_user_engine_errors(void **state)
{
    (void)state;
#define N7 "    name: x\n"
    expect_engine_error(N7 "    command: \"srv {modle}\"\n", 5, 14, "engine.command", "{modle}");
    expect_engine_error(N7 "    command: [a, b]\n", 5, 14, "engine.command", "");
    expect_engine_error(N7 "    command:\n", 5, 13, "engine.command", "needs a command");
    expect_engine_error("    command: srv\n", 4, 5, "engine.name", "needs a name");
    expect_engine_error("    name: vllm\n    command: srv\n", 4, 11, "engine.name", "built-in");
    expect_engine_error("    name: A b\n    command: srv\n", 4, 11, "engine.name", "lower-case");
    expect_engine_error(N7 "    command: srv\n    health_path: health\n", 6, 18,
                        "engine.health_path", "'/'");
    expect_engine_error(N7 "    command: srv\n    stop_signal: SIGUSR9\n", 6, 18,
                        "engine.stop_signal", "SIGUSR9");
    expect_engine_error(N7 "    command: srv\n    profiler: {start: /a}\n", 6, 15,
                        "engine.profiler", "both start and stop");
#undef N7
    /* framework must be the engine's own name */
    struct mp_serve_config c;
    struct mp_diag d;
    char text[2048];
    snprintf(text, sizeof(text), "%s  framework: vllm\n", USER_YAML);
    load_text(&c, text, MP_EINVAL, &d);
    assert_string_equal(d.field, "framework");
    assert_int_equal(d.line, 20);
    mp_serve_config_fini(&c);
    snprintf(text, sizeof(text), "%s  framework: my-server\n", USER_YAML);
    load_text(&c, text, 0, &d);
    mp_serve_config_fini(&c);
}

/* Magpie's default (torch profiler on when the YAML does not say) only for
 * engines with profiler endpoints; said explicitly, it is an error there */
static void test_profiler_default(void **state)
{
    (void)state;
    static const char *const yaml[] = {
        "benchmark: {framework: trtllm, model: m, run_mode: local}\n",
        "benchmark: {framework: vllm, model: m, run_mode: local}\n",
        "benchmark: {model: m, run_mode: local, engine: {name: x, command: srv}}\n",
        "benchmark: {framework: lmdeploy, model: m, run_mode: local,\n"
        "            profiler: {torch_profiler: {enabled: true}}}\n"};
    const bool want[] = {false, true, false, true};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct mp_serve_config c;
        struct mp_diag d;
        load_text(&c, yaml[i], 0, &d);
        assert_int_equal(c.torch_profiler, want[i]);
        mp_diag_clear(&d);
        assert_int_equal(mp_serve_config_validate(&c, &d), i == 3 ? MP_EINVAL : 0);
        mp_serve_config_fini(&c);
    }
}

/* examples/benchmark/declared_engine.yaml declares vLLM by hand: its argv
 * is the built-in row's */
static void test_declared_vllm(void **state)
{
    (void)state;
    const char *src = getenv("MP_SRC");
    char path[2048];
    snprintf(path, sizeof(path), "%s/examples/benchmark/declared_engine.yaml", src ? src : ".");
    struct mp_serve_config u, b;
    struct mp_diag d;
    mp_serve_config_init(&u);
    mp_diag_clear(&d);
    if (mp_serve_config_load(&u, path, &d))
        fail_msg("%s: %s", path, d.msg);
    assert_string_equal(mp_serve_config_engine(&u)->name, "my-vllm");
    mp_serve_config_init(&b);
    b.framework = MP_SERVE_VLLM;
    b.model = u.model;
    mp_serve_config_setenv(&b, "MAX_MODEL_LEN", "4096");
    mp_serve_config_setenv(&b, "EXTRA_VLLM_ARGS", "--dtype bfloat16");
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 8888};
    char au[2048], ab[2048], eu[2048], eb[2048];
    argv_env(&u, &p, au, eu, sizeof(au));
    argv_env(&b, &p, ab, eb, sizeof(ab));
    assert_string_equal(au, ab);
    mp_serve_config_fini(&u);
    mp_serve_config_fini(&b);
}

/* the one flag matcher of serve and ray */
static void test_args_have_flag(void **state)
{
    (void)state;
    const char *a = " --dtype bfloat16\t--enable-prefix-caching --tp=2 ";
    assert_true(mp_serve_args_have_flag(a, "--dtype"));
    assert_true(mp_serve_args_have_flag(a, "--enable-prefix-caching"));
    assert_true(mp_serve_args_have_flag(a, "--tp"));      /* --tp=2 */
    assert_true(mp_serve_args_have_flag(a, "--tp 4"));    /* the flag's first word */
    assert_false(mp_serve_args_have_flag(a, "--enable")); /* a prefix is not the word */
    assert_false(mp_serve_args_have_flag(a, "bfloat"));
    assert_false(mp_serve_args_have_flag("--no-enable-prefix-caching", "--enable-prefix-caching"));
    assert_false(mp_serve_args_have_flag(NULL, "--dtype"));
    assert_false(mp_serve_args_have_flag("", "--dtype"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trtllm),
        cmocka_unit_test(test_lmdeploy),
        cmocka_unit_test(test_names_placement),
        cmocka_unit_test(test_user_engine),
        cmocka_unit_test(test_user_engine_errors),
        cmocka_unit_test(test_declared_vllm),
        cmocka_unit_test(test_profiler_default),
        cmocka_unit_test(test_args_have_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
