/* Unit tests for the agent-facing kernel helpers: kernel discovery
 * (src/kernel/find_kernels.c) on examples/kernels and on small trees written
 * here (templates, __launch_bounds__, declarations, macros, comments,
 * Triton decorator stacks, executables), optimisation suggestions
 * (src/kernel/suggest.c) on the real ncu recordings in tests/fixtures/kernel
 * and /work/shared/data/gpu and on Magpie-shaped rocprof-compute summaries,
 * window-clamped traces (src/gap/gap_clamp.c) and the bounded shallow
 * clone of auto_clone_repos (src/sources/clone.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/gap.h>
#include <magpie/io.h>
#include <magpie/kernel_discover.h>
#include <magpie/sources.h>
#include <magpie/suggest.h>

static char g_src[1024], g_fix[1024], g_shared[1024], g_tmp[256];

static void write_file(const char *dir, const char *name, const char *text, int mode)
{
    char p[1400];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    char *sl = strrchr(p, '/');
    *sl = 0;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_fs_mkdirs(p, &d), 0);
    *sl = '/';
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    if (mode)
        chmod(p, (mode_t)mode);
}

static const struct mp_disc_entry *entry(const struct mp_disc_result *r, const char *rel)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->e[i].rel, rel))
            return &r->e[i];
    return NULL;
}

static bool has_kernel(const struct mp_disc_entry *e, const char *name, long line)
{
    for (size_t i = 0; e && i < e->n_kernels; i++)
        if (!strcmp(e->kernels[i].name, name) && (line == 0 || e->kernels[i].line == line))
            return true;
    return false;
}

static void test_discover_examples(void **state)
{
    (void)state;
    char root[1200];
    snprintf(root, sizeof(root), "%s/examples/kernels", g_src);
    struct mp_disc_opts o = {.types = MP_DISC_ALL, .include_tests = true, .include_examples = true};
    struct mp_disc_result r;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), 0);
    const struct mp_disc_entry *e = entry(&r, "cuda/vadd.cu");
    assert_non_null(e);
    assert_string_equal(e->type, "cuda");
    assert_true(has_kernel(e, "vadd", 2));
    assert_non_null(e->reference);
    assert_non_null(strstr(e->reference, "cuda/vadd_ref.cu"));
    bool yaml = false;
    for (size_t i = 0; i < e->n_configs; i++)
        yaml |= strstr(e->configs[i], "cuda/compare.yaml") != NULL;
    assert_true(yaml);
    e = entry(&r, "cuda/vadd_slow.cu");
    assert_non_null(e);
    assert_non_null(strstr(e->reference, "vadd_ref.cu")); /* stem cut at '_' */
    e = entry(&r, "opencl/matmul_tiled.cl");
    assert_non_null(e);
    assert_string_equal(e->type, "opencl");
    assert_true(has_kernel(e, "matmul", 3));
    e = entry(&r, "hip/vadd_test.hip");
    assert_non_null(e);
    assert_string_equal(e->type, "hip");
    assert_true(e->has_main);
    assert_string_equal(e->compile_command, "make"); /* its directory has a Makefile */
    e = entry(&r, "lowprec/softmax_triton.py");
    assert_non_null(e);
    assert_string_equal(e->type, "triton");
    assert_true(e->n_kernels >= 1);
    /* a PyTorch-only file has no Triton kernel */
    assert_null(entry(&r, "pytorch/softmax_naive.py"));
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_disc_json(&r, &b), 0);
    json_t *j = json_loads(mp_buf_cstr(&b), 0, NULL);
    assert_non_null(j);
    assert_true(json_is_array(j));
    json_t *e0 = json_array_get(j, 0);
    assert_non_null(json_object_get(e0, "source_file"));
    assert_true(json_is_array(json_object_get(e0, "possible_binaries")));
    assert_non_null(json_object_get(json_object_get(e0, "suggested_config"), "kernel_path"));
    json_decref(j);
    mp_buf_fini(&b);
    mp_disc_result_fini(&r);

    /* kernel_type filters; tests and examples can be skipped */
    o.types = MP_DISC_OPENCL;
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), 0);
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.e[i].type, "opencl");
    assert_true(r.n >= 10);
    mp_disc_result_fini(&r);
    assert_int_equal(mp_discover_kernels("/nonexistent/x", &o, &r, &d), MP_ENOTFOUND);
    o.types = 0;
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), MP_EINVAL);
}

static void test_discover_lexing(void **state)
{
    (void)state;
    char root[300];
    snprintf(root, sizeof(root), "%s/proj", g_tmp);
    write_file(
        root, "csrc/attn.cu",
        "// __global__ void commented_out(int x) {}\n"
        "#include <cuda_runtime.h>\n"
        "/* __global__ void also_comment(int) { } */\n"
        "const char *s = \"__global__ void in_string(int) {}\";\n"
        "template <typename T, int N>\n"
        "__global__ void __launch_bounds__(256, 2) paged_attention_kernel(T *out,\n"
        "                                                               const T *q) {\n"
        "}\n"
        "__global__ void declared_only(float *x);\n"
        "#define DEF(n) __global__ void n##_k(float *x) {}\n"
        "namespace ns {\n"
        "__global__ void rms_norm_kernel(float *x, int n) { x[0] = n; }\n"
        "}\n"
        "template __global__ void paged_attention_kernel<float, 4>(float *, const float *);\n",
        0);
    write_file(root, "csrc/ops.cpp",
               "#include <hip/hip_runtime.h>\n__global__ void hip_kernel(int *p) { *p = 1; }\n", 0);
    write_file(root, "python/kern.py",
               "import triton\nimport triton.language as tl\n\n"
               "@triton.autotune(configs=[\n    triton.Config({'B': 64}),\n], key=['n'])\n"
               "@triton.jit\ndef fused_moe_kernel(x_ptr, n, B: tl.constexpr):\n    pass\n\n"
               "def helper():\n    pass\n\n@triton.jit\ndef _fwd(x):\n    pass\n",
               0);
    write_file(root, "tests/test_kern.py", "from python.kern import fused_moe_kernel\n", 0);
    write_file(root, "tests/attn_test.cu",
               "__global__ void t(int *p) { }\nint main() { return 0; }\n", 0);
    /* an ELF executable named after the source (a copy of /bin/true) */
    FILE *in = fopen("/bin/true", "rb");
    assert_non_null(in);
    char exe[400];
    snprintf(exe, sizeof(exe), "%s/build/attn", root);
    write_file(root, "build/attn", "", 0);
    FILE *out = fopen(exe, "wb");
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
        fwrite(buf, 1, got, out);
    fclose(in);
    fclose(out);
    chmod(exe, 0755);

    struct mp_disc_opts o = {.types = MP_DISC_ALL, .include_tests = true, .include_examples = true};
    struct mp_disc_result r;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), 0);
    const struct mp_disc_entry *e = entry(&r, "csrc/attn.cu");
    assert_non_null(e);
    assert_int_equal(e->n_kernels, 2);
    assert_true(has_kernel(e, "paged_attention_kernel", 6));
    assert_true(has_kernel(e, "rms_norm_kernel", 12));
    assert_int_equal(e->n_binaries, 1);
    assert_non_null(strstr(e->binaries[0], "build/attn"));
    assert_string_equal(e->testcase_command, e->binaries[0]);
    e = entry(&r, "csrc/ops.cpp");
    assert_non_null(e);
    assert_string_equal(e->type, "hip");
    e = entry(&r, "python/kern.py");
    assert_non_null(e);
    assert_int_equal(e->n_kernels, 2);
    assert_true(has_kernel(e, "fused_moe_kernel", 8));
    assert_true(has_kernel(e, "_fwd", 15));
    assert_int_equal(e->n_binaries, 1);
    assert_non_null(strstr(e->binaries[0], "tests/test_kern.py"));
    assert_non_null(entry(&r, "tests/attn_test.cu"));
    mp_disc_result_fini(&r);
    o.include_tests = false;
    o.types = MP_DISC_CUDA;
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), 0);
    assert_int_equal(r.n, 1); /* attn.cu; tests/ skipped, ops.cpp is HIP */
    mp_disc_result_fini(&r);
}

static json_t *find_by(json_t *arr, const char *key, const char *val)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(json_object_get(v, key));
        if (s && !strcmp(s, val))
            return v;
    }
    return NULL;
}

static void test_suggest_ncu_real(void **state)
{
    (void)state;
    char p[1200];
    snprintf(p, sizeof(p), "%s/kernel/ncu_h200_harness_base_units.csv", g_fix);
    json_t *o = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_suggest_ncu_file(p, "vadd", &o, &d), 0);
    /* H200 vadd, 3 launches: memory ~62.6 % of peak, SM ~50.7 %, occupancy ~74.7 % */
    json_t *b = find_by(json_object_get(o, "bottlenecks"), "type", "memory_bound");
    assert_non_null(b);
    assert_string_equal(json_string_value(json_object_get(b, "severity")), "medium");
    assert_string_equal(json_string_value(json_object_get(b, "metric")),
                        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
    double v = json_real_value(json_object_get(b, "metric_value"));
    assert_true(v > 62.0 && v < 63.0);
    assert_null(find_by(json_object_get(o, "bottlenecks"), "type", "low_occupancy"));
    /* 3 launches of ~63 us: no launch-overhead hint */
    assert_null(find_by(json_object_get(o, "bottlenecks"), "type", "kernel_launch_overhead"));
    assert_string_equal(json_string_value(json_object_get(o, "vendor")), "nvidia");
    assert_string_equal(json_string_value(json_object_get(o, "kernel_id")), "vadd");
    json_decref(o);

    /* the shared recording (default units: thousands separators) */
    snprintf(p, sizeof(p), "%s/data/gpu/ncu_vadd.csv", g_shared);
    if (access(p, R_OK) == 0) {
        assert_int_equal(mp_suggest_ncu_file(p, NULL, &o, &d), 0);
        /* it measured SM throughput but no memory throughput percentage:
         * no speed-of-light verdict, a note says why */
        assert_int_equal(json_array_size(json_object_get(o, "bottlenecks")), 0);
        assert_non_null(strstr(json_string_value(json_object_get(o, "note")),
                               "need a memory throughput metric"));
        json_decref(o);
    }
    assert_int_equal(mp_suggest_ncu_file("/nonexistent.csv", NULL, &o, &d), MP_ENOTFOUND);
}

static json_t *analysis(const char *summary, const char *kernels)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "{\"kernel_id\": \"k\", \"score\": 0.5, \"performance_state\": \"SUCCESS\", "
             "\"performance_result\": {\"summary\": %s, \"kernels\": %s}}",
             summary, kernels);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    return j;
}

static void test_suggest_rules(void **state)
{
    (void)state;
    struct mp_diag d;
    mp_diag_clear(&d);
    /* Magpie's rocprof-compute rules */
    json_t *in = analysis("{\"Active CUs\": {\"value\": 20, \"pct_of_peak\": 18.5}, "
                          "\"MFMA_Util\": {\"value\": 5}, \"MFMA_FLOPs_F16\": {\"value\": 1e9}, "
                          "\"VALU_Util\": {\"value\": 64.2}, \"VMEM_Util\": {\"value\": 71}}",
                          "[{\"kernel_name\": \"a\", \"duration_ns\": {\"avg\": 4000}}, "
                          "{\"kernel_name\": \"b\", \"duration_ns\": {\"avg\": 9000}}, "
                          "{\"kernel_name\": \"c\", \"duration_ns\": {\"avg\": 90000}}]");
    json_t *o = NULL;
    assert_int_equal(mp_suggest_json(in, &o, &d), 0);
    json_t *bn = json_object_get(o, "bottlenecks");
    json_t *b = find_by(bn, "type", "low_cu_occupancy");
    assert_non_null(b);
    assert_string_equal(json_string_value(json_object_get(b, "severity")), "high");
    assert_string_equal(json_string_value(json_object_get(b, "value")), "18.5% CU utilization");
    assert_non_null(find_by(bn, "type", "low_mfma_utilization"));
    b = find_by(bn, "type", "memory_bound");
    assert_string_equal(json_string_value(json_object_get(b, "value")), "71% VMEM utilization");
    b = find_by(bn, "type", "kernel_launch_overhead");
    assert_string_equal(json_string_value(json_object_get(b, "value")),
                        "2 short kernels (<10\xc2\xb5s)");
    json_t *sg = json_object_get(o, "suggestions");
    assert_non_null(find_by(sg, "category", "vectorization"));
    /* high impact first */
    assert_string_equal(json_string_value(json_object_get(json_array_get(sg, 0), "impact")),
                        "high");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(sg, json_array_size(sg) - 1), "impact")),
        "medium");
    json_t *sm = json_object_get(o, "summary");
    assert_int_equal(json_integer_value(json_object_get(sm, "total_bottlenecks")), 4);
    assert_int_equal(json_integer_value(json_object_get(sm, "high_impact_suggestions")), 3);
    assert_string_equal(json_string_value(json_object_get(o, "vendor")), "amd");
    json_decref(o);
    json_decref(in);

    /* NVIDIA: compute-bound with an idle tensor pipe, low occupancy */
    in = analysis("{\"sm__throughput.avg.pct_of_peak_sustained_elapsed\": {\"value\": 85}, "
                  "\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\": "
                  "{\"value\": 30}, \"sm__warps_active.avg.pct_of_peak_sustained_active\": "
                  "{\"value\": 20}, \"launch__registers_per_thread\": {\"value\": 128}, "
                  "\"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active\": "
                  "{\"value\": 2.5}, \"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\": "
                  "{\"value\": 1e9}}",
                  "[]");
    assert_int_equal(mp_suggest_json(in, &o, &d), 0);
    bn = json_object_get(o, "bottlenecks");
    b = find_by(bn, "type", "compute_bound");
    assert_string_equal(json_string_value(json_object_get(b, "severity")), "high");
    b = find_by(bn, "type", "low_occupancy");
    assert_string_equal(json_string_value(json_object_get(b, "severity")), "high");
    assert_non_null(find_by(bn, "type", "low_tensor_pipe_utilization"));
    assert_non_null(strstr(json_string_value(json_object_get(
                               find_by(json_object_get(o, "suggestions"), "metric",
                                       "sm__warps_active.avg.pct_of_peak_sustained_active"),
                               "details")),
                           "128 registers per thread"));
    json_decref(o);
    json_decref(in);

    /* latency-bound */
    in = analysis("{\"sm__throughput.avg.pct_of_peak_sustained_elapsed\": {\"value\": 12}, "
                  "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\": {\"value\": 9}}",
                  "[]");
    assert_int_equal(mp_suggest_json(in, &o, &d), 0);
    assert_non_null(find_by(json_object_get(o, "bottlenecks"), "type", "latency_bound"));
    json_decref(o);
    json_decref(in);

    /* no metrics a rule reads: a note, no bottleneck */
    in = analysis("{}", "[]");
    assert_int_equal(mp_suggest_json(in, &o, &d), 0);
    assert_int_equal(json_array_size(json_object_get(o, "bottlenecks")), 0);
    assert_non_null(json_object_get(o, "note"));
    json_decref(o);
    json_decref(in);

    /* performance stage failed: Magpie's error */
    in = json_loads("{\"performance_state\": \"FAILED\", \"performance_result\": {}, "
                    "\"errors\": [\"ncu not found\"]}",
                    0, NULL);
    assert_int_equal(mp_suggest_json(in, &o, &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "Performance analysis not available"));
    json_decref(in);

    /* a magpie report with several kernels */
    in = json_loads("{\"results\": [{\"kernel_id\": \"a\", \"performance_state\": \"SUCCESS\", "
                    "\"performance_result\": {\"summary\": {}, \"kernels\": []}}, "
                    "{\"kernel_id\": \"b\", \"performance_state\": \"SKIPPED\"}]}",
                    0, NULL);
    mp_diag_clear(&d);
    assert_int_equal(mp_suggest_json(in, &o, &d), 0);
    json_t *ks = json_object_get(o, "kernels");
    assert_int_equal(json_array_size(ks), 2);
    assert_non_null(json_object_get(json_array_get(ks, 1), "error"));
    json_decref(o);
    json_decref(in);
}

static char *gunzip(const char *path)
{
    struct mp_io_reader *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open(path, &r, &d), 0);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char chunk[4096];
    size_t got;
    do {
        assert_int_equal(mp_io_read(r, chunk, sizeof(chunk), &got, &d), 0);
        mp_buf_append(&b, chunk, got);
    } while (got);
    mp_io_close(r);
    mp_buf_cstr(&b);
    return b.data;
}

static void test_clamp(void **state)
{
    (void)state;
    char dir[300], out[300];
    snprintf(dir, sizeof(dir), "%s/clamp/torch_trace", g_tmp);
    snprintf(out, sizeof(out), "%s/clamp/gap_analysis", g_tmp);
    /* span 100..300; window 25-75 % = 150..250 */
    write_file(dir, "w-rank-0.1.pt.trace.json",
               "{\"schemaVersion\": 1, \"traceEvents\": [\n"
               "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 100, \"dur\": 60, \"args\": {\"x\": 1}},\n"
               "{\"ph\": \"X\", \"name\": \"b\", \"ts\": 160.5, \"dur\": 10},\n"
               "{\"ph\": \"X\", \"name\": \"c\", \"ts\": 240, \"dur\": 60},\n"
               "{\"ph\": \"i\", \"name\": \"d\", \"ts\": 200},\n"
               "{\"ph\": \"X\", \"name\": \"e\", \"ts\": 100, \"dur\": 10},\n"
               "{\"ph\": \"M\", \"name\": \"meta\", \"args\": {}}\n"
               "], \"deviceProperties\": [1]}\n",
               0);
    struct mp_gap_clamped cl;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_clamped_traces(dir, 25, 75, out, &cl, &d), 0);
    assert_int_equal(cl.n, 1);
    assert_int_equal(cl.n_errors, 0);
    assert_non_null(
        strstr(cl.paths[0], "gap_analysis/w-rank-0.1.pt.trace_clamped_25.0_75.0.trace.json.gz"));
    char *text = gunzip(cl.paths[0]);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents");
    assert_int_equal(json_array_size(ev), 4); /* e ends before the window, M has no ts */
    json_t *a = json_array_get(ev, 0);
    assert_true(json_is_real(json_object_get(a, "ts")));
    assert_true(json_real_value(json_object_get(a, "ts")) == 150.0);
    assert_true(json_real_value(json_object_get(a, "dur")) == 10.0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "args"), "x")), 1);
    json_t *b = json_array_get(ev, 1);
    assert_true(json_real_value(json_object_get(b, "ts")) == 160.5);
    assert_true(json_real_value(json_object_get(b, "dur")) == 10.0);
    json_t *c = json_array_get(ev, 2);
    assert_true(json_is_integer(json_object_get(c, "ts")));
    assert_true(json_real_value(json_object_get(c, "dur")) == 10.0);
    json_t *dd = json_array_get(ev, 3);
    assert_true(json_is_integer(json_object_get(dd, "dur"))); /* added: ts int, dur 0 */
    assert_int_equal(json_integer_value(json_object_get(dd, "dur")), 0);
    assert_non_null(json_object_get(j, "schemaVersion"));
    assert_non_null(json_object_get(j, "deviceProperties"));
    json_decref(j);
    free(text);
    mp_gap_clamped_fini(&cl);
    char *p = NULL;
    assert_int_equal(mp_gap_clamp_trace("/nonexistent.json", 0, 100, out, &p, &d), MP_ENOTFOUND);
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_clamp_trace("/nonexistent.json", 50, 40, out, &p, &d), MP_EINVAL);
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void test_clone(void **state)
{
    (void)state;
    char cmd[2000], up[400], dest[400], bin[400];
    /* a local upstream repository (file://), cloned shallow */
    snprintf(up, sizeof(up), "%s/up/vllm", g_tmp);
    snprintf(cmd, sizeof(cmd),
             "mkdir -p %s/csrc && cd %s && git init -q && printf 'namespace vllm {\n__global__ "
             "void k(int *p) { }\n}\n' > csrc/k.cu && git add csrc/k.cu && git -c "
             "user.name=t -c user.email=t@t commit -qm one",
             up, up);
    assert_int_equal(sh(cmd), 0);
    char url[600], buf[600];
    snprintf(url, sizeof(url), "file://%s/up", g_tmp);
    setenv("MAGPIE_REPOS_URL_BASE", url, 1);
    assert_non_null(mp_src_upstream_url("vllm", buf, sizeof(buf)));
    assert_non_null(strstr(buf, "/up/vllm"));
    unsetenv("MAGPIE_REPOS_URL_BASE");
    assert_string_equal(mp_src_upstream_url("aiter", buf, sizeof(buf)),
                        "https://github.com/ROCm/aiter.git");
    assert_null(mp_src_upstream_url("nope", buf, sizeof(buf)));
    snprintf(dest, sizeof(dest), "%s/cache/vllm", g_tmp);
    snprintf(url, sizeof(url), "file://%s", up);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_src_clone(url, dest, 120, &d), 0);
    snprintf(cmd, sizeof(cmd), "test -f %s/csrc/k.cu", dest);
    assert_int_equal(sh(cmd), 0);
    assert_int_equal(mp_src_clone(url, dest, 120, &d), 0); /* already there */
    /* a failing clone leaves nothing behind */
    snprintf(dest, sizeof(dest), "%s/cache/gone", g_tmp);
    assert_int_equal(mp_src_clone("file:///nonexistent/repo", dest, 120, &d), MP_EIO);
    assert_false(mp_fs_exists(dest));
    /* a clone that hangs is killed at its time limit (a git that sleeps) */
    snprintf(bin, sizeof(bin), "%s/bin", g_tmp);
    snprintf(cmd, sizeof(cmd),
             "mkdir -p %s && printf '#!/bin/sh\nexec sleep 60\n' > %s/git && chmod +x %s/git", bin,
             bin, bin);
    assert_int_equal(sh(cmd), 0);
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "/usr/bin:/bin");
    char np[2400];
    snprintf(np, sizeof(np), "%s:%s", bin, saved);
    setenv("PATH", np, 1);
    mp_diag_clear(&d);
    snprintf(dest, sizeof(dest), "%s/cache/slow", g_tmp);
    assert_int_equal(mp_src_clone("https://example.invalid/x.git", dest, 1, &d), MP_ETIMEOUT);
    setenv("PATH", saved, 1);
    free(saved);
    assert_non_null(strstr(d.msg, "did not finish within 1 s"));
    assert_false(mp_fs_exists(dest));
    /* the kind -> repo map */
    const char *names[4];
    assert_int_equal(mp_src_repos_for_kind("triton_jit", "x", names, 4), 1);
    assert_string_equal(names[0], "triton");
    assert_int_equal(mp_src_repos_for_kind("hip_cpp", "void vllm::k<float>()", names, 4), 2);
    assert_string_equal(names[1], "vllm");
}

int main(void)
{
    const char *s = getenv("MP_SRC"), *f = getenv("MP_FIXTURES"), *sh = getenv("MP_SHARED");
    snprintf(g_src, sizeof(g_src), "%s", s ? s : ".");
    snprintf(g_fix, sizeof(g_fix), "%s", f ? f : "tests/fixtures");
    snprintf(g_shared, sizeof(g_shared), "%s", sh ? sh : "../shared");
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/magpie-test-kadvise-%d", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discover_examples),
        cmocka_unit_test(test_discover_lexing),
        cmocka_unit_test(test_suggest_ncu_real),
        cmocka_unit_test(test_suggest_rules),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_clone),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
