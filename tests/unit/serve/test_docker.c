/* docker run command lines, the image and runner tables, idle-GPU picking. */
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

void test_docker(void **state)
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

void test_images_runners(void **state)
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

void test_pick_idle(void **state)
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
