/* Engine command lines as argv goldens: vLLM (NVIDIA, AMD, with the
 * profiler and TraceLens), SGLang, ATOM. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/proc.h>
#include <magpie/serve.h>

#include "area.h"
#include "helpers.h"

void test_vllm_nvidia(void **state)
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

void test_vllm_amd_profiler(void **state)
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
void test_vllm_tracelens(void **state)
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

/* pytorch mode leaves vLLM's command as a plain profiled run */
void test_vllm_tracelens_pytorch(void **state)
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

void test_sglang(void **state)
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

void test_atom(void **state)
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

/* prefix_cache: default keeps Magpie's argv; on drops SGLang's
 * --disable-radix-cache (vLLM: its default, nothing added); off adds vLLM's
 * --no-enable-prefix-caching unless EXTRA_VLLM_ARGS has a prefix-caching
 * flag. Contradictions and engines without a known flag are refused. */
static void pc_cmd(struct mp_serve_config *c, struct mp_serve_cmd *cmd)
{
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 30000};
    assert_int_equal(mp_serve_engine_cmd(c, &p, cmd, NULL), 0);
}

static const char *pc_argv(struct mp_serve_config *c, struct mp_buf *a)
{
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 30000};
    struct mp_serve_cmd cmd;
    struct mp_buf e;
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_config_validate(c, NULL), 0);
    assert_int_equal(mp_serve_engine_cmd(c, &p, &cmd, NULL), 0);
    joined(&cmd, a, &e);
    mp_serve_cmd_fini(&cmd);
    mp_buf_fini(&e);
    return mp_buf_cstr(a);
}

static void keep_log(enum mp_log_level lvl, const char *msg, void *user)
{
    (void)lvl;
    mp_buf_puts(user, msg);
    mp_buf_puts(user, "\n");
}

void test_prefix_cache(void **state)
{
    (void)state;
    static const char sgl[] = "python3 -m sglang.launch_server --model-path org/model-7b "
                              "--host=127.0.0.1 --port 30000 --trust-remote-code "
                              "--tensor-parallel-size=2 --mem-fraction-static=0.8";
    static const char vll[] = "vllm serve org/model-7b --host 127.0.0.1 --port 30000 "
                              "--tensor-parallel-size=2 --gpu-memory-utilization 0.95 "
                              "--max-model-len 4096 --trust-remote-code";
    struct mp_serve_config c;
    struct mp_buf a;
    struct mp_diag d;
    mp_buf_init(&a, 0);
    char want[512];
    /* SGLang */
    base_cfg(&c, MP_SERVE_SGLANG);
    snprintf(want, sizeof(want), "%s --disable-radix-cache", sgl);
    assert_string_equal(pc_argv(&c, &a), want); /* default */
    c.prefix_cache = MP_SERVE_PC_OFF;
    assert_string_equal(pc_argv(&c, &a), want);
    c.prefix_cache = MP_SERVE_PC_ON;
    assert_string_equal(pc_argv(&c, &a), sgl);
    mp_serve_config_setenv(&c, "EXTRA_SGLANG_ARGS", "--chunked-prefill-size 512");
    snprintf(want, sizeof(want), "%s --chunked-prefill-size 512", sgl);
    assert_string_equal(pc_argv(&c, &a), want);
    /* on with --disable-radix-cache in EXTRA_SGLANG_ARGS: a contradiction */
    mp_serve_config_setenv(&c, "EXTRA_SGLANG_ARGS", "--disable-radix-cache");
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "prefix_cache");
    assert_non_null(strstr(d.msg, "EXTRA_SGLANG_ARGS"));
    c.prefix_cache = MP_SERVE_PC_OFF; /* off / default: the user's flag, once */
    snprintf(want, sizeof(want), "%s --disable-radix-cache", sgl);
    assert_string_equal(pc_argv(&c, &a), want);
    /* agentx without the cache is warned about when the command is built,
     * with it not */
    struct mp_buf log;
    struct mp_serve_cmd cmd;
    mp_buf_init(&log, 0);
    mp_log_set(keep_log, &log, MP_LOG_WARN);
    c.agentx.enabled = true;
    pc_cmd(&c, &cmd);
    mp_serve_cmd_fini(&cmd);
    assert_non_null(strstr(mp_buf_cstr(&log), "agentx replays prompts that share prefixes, but "
                                              "SGLang runs with --disable-radix-cache"));
    mp_buf_reset(&log);
    mp_serve_config_setenv(&c, "EXTRA_SGLANG_ARGS", "");
    c.prefix_cache = MP_SERVE_PC_ON;
    pc_cmd(&c, &cmd);
    mp_serve_cmd_fini(&cmd);
    assert_int_equal(log.len, 0);
    mp_log_set(NULL, NULL, MP_LOG_WARN);
    mp_buf_fini(&log);
    c.agentx.enabled = false;
    mp_serve_config_fini(&c);
    /* vLLM */
    base_cfg(&c, MP_SERVE_VLLM);
    assert_string_equal(pc_argv(&c, &a), vll); /* default */
    c.prefix_cache = MP_SERVE_PC_ON;
    assert_string_equal(pc_argv(&c, &a), vll);
    c.prefix_cache = MP_SERVE_PC_OFF;
    snprintf(want, sizeof(want), "%s --no-enable-prefix-caching", vll);
    assert_string_equal(pc_argv(&c, &a), want);
    /* off with --enable-prefix-caching in EXTRA_VLLM_ARGS: a contradiction
     * (--no-enable-prefix-caching, which contains it, is not) */
    mp_serve_config_setenv(&c, "EXTRA_VLLM_ARGS", "--max-num-seqs 8 --enable-prefix-caching");
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "prefix_cache");
    assert_non_null(strstr(d.msg, "'off' contradicts --enable-prefix-caching in EXTRA_VLLM_ARGS"));
    c.prefix_cache = MP_SERVE_PC_ON;
    snprintf(want, sizeof(want), "%s --max-num-seqs 8 --enable-prefix-caching", vll);
    assert_string_equal(pc_argv(&c, &a), want);
    c.prefix_cache = MP_SERVE_PC_OFF;
    mp_serve_config_setenv(&c, "EXTRA_VLLM_ARGS", "--no-enable-prefix-caching");
    snprintf(want, sizeof(want), "%s --no-enable-prefix-caching", vll);
    assert_string_equal(pc_argv(&c, &a), want);
    c.prefix_cache = MP_SERVE_PC_ON;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "prefix_cache");
    mp_serve_config_fini(&c);

    /* engines without a known prefix-cache flag: default only */
    static const enum mp_serve_framework others[] = {MP_SERVE_ATOM, MP_SERVE_TRTLLM,
                                                     MP_SERVE_LMDEPLOY};

    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        base_cfg(&c, others[i]);
        c.gpu_arch = "gfx942";
        c.torch_profiler = false; /* trtllm / lmdeploy have no profiler endpoints */
        assert_int_equal(mp_serve_config_validate(&c, NULL), 0);
        for (int v = MP_SERVE_PC_ON; v <= MP_SERVE_PC_OFF; v++) {
            c.prefix_cache = (enum mp_serve_prefix_cache)v;
            mp_diag_clear(&d);
            assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
            assert_string_equal(d.field, "prefix_cache");
            assert_non_null(strstr(d.msg, "no prefix-cache flag"));
        }
        mp_serve_config_fini(&c);
    }
    mp_buf_fini(&a);
}
