/* Unit tests for src/gap and src/tracelens: gap analysis semantics on small traces whose
 * expected results are worked out by hand from Magpie's rules, the kernel
 * summary, and kernel-family normalisation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/gap.h>
#include <magpie/report.h>

#include "tracelens/tracelens_int.h"

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp_analysis_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    struct mp_diag d;
    assert_int_equal(mp_fs_mkdirs(path, &d), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The events of Magpie's own gap-analysis unit test, plus a late cpu_op. */
static const char *const magpie_events =
    "{\"traceEvents\": ["
    "{\"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 0, \"dur\": 5,"
    " \"args\": {\"External id\": 1, \"Input Dims\": [[2, 3], [3, 4]]}},"
    "{\"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 10, \"dur\": 20, \"args\": {\"External "
    "id\": 1}},"
    "{\"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 35, \"dur\": 10, \"args\": {\"External "
    "id\": 1}},"
    "{\"cat\": \"ignored\", \"name\": \"noise\", \"ts\": 50, \"dur\": 5},"
    "{\"name\": \"metadata\"}], \"meta\": 1}";

static void test_gap_basic(void **state)
{
    (void)state;
    write_file("a/trace-rank-0.pt.trace.json", magpie_events);
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    cfg.categories[0] = "kernel";
    cfg.n_categories = 1;
    cfg.ignore[0] = "ignored";
    cfg.n_ignore = 1;
    cfg.top_k = 10;
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/a", tmpdir);
    struct mp_gap_result *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), 0);
    assert_int_equal(r->n_ranks, 1);
    assert_int_equal(r->n_merged, 1);
    assert_string_equal(r->merged[0].name, "gemm");
    assert_int_equal(r->merged[0].calls, 2);
    assert_true(r->merged[0].total_us == 30.0);
    assert_string_equal(r->merged[0].shapes, "[2,3]x[3,4]");
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_gap_csv(r, &cfg, -1, &b), 0);
    assert_string_equal(mp_buf_cstr(&b),
                        "Name,Calls,Self CUDA total (us),Avg time (us),% Total,Input Shapes\r\n"
                        "gemm,2,30.00,15.00,100.00,\"[2,3]x[3,4]\"\r\n");
    mp_buf_fini(&b);
    mp_gap_result_free(r);

    /* window 25-75 %: span 0..55 -> [13.75, 41.25]; the cpu_op (0..5) is
     * outside, so the kernels lose their shape; both gemms overlap */
    cfg.start_pct = 25;
    cfg.end_pct = 75;
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), 0);
    assert_int_equal(r->merged[0].calls, 2);
    assert_string_equal(r->merged[0].shapes, "");
    mp_gap_result_free(r);

    /* min duration keeps dur >= threshold */
    cfg.start_pct = 0;
    cfg.end_pct = 100;
    cfg.min_duration_us = 20;
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), 0);
    assert_int_equal(r->merged[0].calls, 1);
    mp_gap_result_free(r);

    /* bad window */
    cfg.min_duration_us = 0;
    cfg.start_pct = 60;
    cfg.end_pct = 50;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), MP_EINVAL);
    assert_string_equal(d.field, "start-pct");
}

static void test_gap_late_cpu_op_second_pass(void **state)
{
    (void)state;
    /* the kernel comes before the cpu_op that defines its shape, and a second
     * cpu_op redefines id 7: Magpie's map-first order gives the final shape */
    write_file(
        "b/x.json",
        "[{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 2,"
        "  \"args\": {\"External id\": 7}},"
        " {\"cat\": \"cpu_op\", \"name\": \"op\", \"ts\": 0, \"dur\": 5,"
        "  \"args\": {\"External id\": 7, \"Input Dims\": [[1]]}},"
        " {\"cat\": \"cpu_op\", \"name\": \"op\", \"ts\": 0, \"dur\": 5,"
        "  \"args\": {\"External id\": 7, \"Input Dims\": [[], [4, 5], [\"s\"], [1.0]]}},"
        " {\"cat\": \"Kernel\", \"name\": \"k\", \"ts\": 3, \"args\": {\"External id\": 7.0}},"
        " {\"cat\": \"gpu_memcpy\", \"ts\": 4, \"dur\": 1}]");
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/b", tmpdir);
    struct mp_gap_result *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), 0);
    assert_true(r->ranks[0].two_pass);
    assert_int_equal(r->n_merged, 2);
    assert_string_equal(r->merged[0].name, "k");
    assert_int_equal(r->merged[0].calls, 2);   /* "Kernel" matches case-insensitively */
    assert_true(r->merged[0].total_us == 2.0); /* missing dur counts 0 */
    assert_string_equal(r->merged[0].shapes, "[4,5]x[s]x[1.0]");
    assert_string_equal(r->merged[1].name, "<?>"); /* nameless memcpy */
    mp_gap_result_free(r);
}

static void test_gap_ranks_merge(void **state)
{
    (void)state;
    write_file("c/rank_0/t.pt.trace.json",
               "{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"a\", \"dur\": 1.5},"
               "{\"cat\": \"kernel\", \"name\": \"b\", \"dur\": 3}]}");
    write_file("c/rank_1/t.pt.trace.json",
               "{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"b\", \"dur\": 1},"
               "{\"cat\": \"kernel\", \"name\": \"c\", \"dur\": 0.25}]}");
    write_file("c/capture_traces/t-rank-5.pt.trace.json",
               "{\"traceEvents\": [{\"cat\": \"kernel\", \"name\": \"zzz\", \"dur\": 100}]}");
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    cfg.top_k = 2;
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/c", tmpdir);
    struct mp_gap_result *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), 0);
    assert_int_equal(r->n_ranks, 2);
    assert_int_equal(r->ranks[0].rank, 0);
    assert_int_equal(r->ranks[1].rank, 1);
    assert_true(r->total_us == 5.75);
    assert_int_equal(r->n_merged, 2); /* top-k after the merge */
    assert_int_equal(r->n_merged_all, 3);
    assert_string_equal(r->merged[0].name, "b");
    assert_true(r->merged[0].total_us == 4.0);
    assert_string_equal(r->merged[1].name, "a");
    char out[160];
    snprintf(out, sizeof(out), "%s/c-out", tmpdir);
    assert_int_equal(mp_gap_write_csv(r, &cfg, out, true, &d), 0);
    char p[256];
    snprintf(p, sizeof(p), "%s/gap_analysis_rank1.csv", out);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char text[512] = {0};
    assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
    fclose(f);
    assert_string_equal(text,
                        "Name,Calls,Self CUDA total (us),Avg time (us),% Total,Input Shapes\r\n"
                        "b,1,1.00,1.00,80.00,\r\nc,1,0.25,0.25,20.00,\r\n");
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_gap_summary(r, &cfg, "out", &b), 0);
    assert_non_null(
        strstr(mp_buf_cstr(&b), "Gap Analysis (0.0%-100.0% window, category-filtered)"));
    assert_non_null(strstr(mp_buf_cstr(&b), "Total duration: 5.75 us"));
    mp_buf_reset(&b);
    assert_int_equal(mp_gap_json(r, &cfg, "x.csv", "out", &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "\"num_ranks\": 2"));
    assert_non_null(strstr(mp_buf_cstr(&b), "\"categories\": [\"kernel\", \"gpu\"]"));
    mp_buf_fini(&b);
    mp_gap_result_free(r);
}

static void test_gap_bad_rank(void **state)
{
    (void)state;
    write_file("e/x-rank-0.pt.trace.json",
               "{\"traceEvents\": [{\"cat\": \"kernel\", \"dur\": 1}]}");
    write_file("e/x-rank-1.pt.trace.json",
               "{\"traceEvents\": [{\"cat\": \"kernel\",\n \"dur\": }]}");
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/e", tmpdir);
    struct mp_gap_result *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), MP_EPARSE);
    assert_non_null(strstr(d.file, "x-rank-1.pt.trace.json"));
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 9);
    assert_null(r);
    cfg.skip_bad_ranks = true;
    mp_diag_clear(&d);
    assert_int_equal(mp_gap_analyze(dir, &cfg, &r, &d), 0);
    assert_int_equal(r->n_ranks, 2);
    assert_non_null(r->ranks[1].error);
    assert_int_equal(r->n_merged, 1);
    mp_gap_result_free(r);
}

static void test_kernel_summary(void **state)
{
    (void)state;
    write_file("k/t.json", "{\"traceEvents\": ["
                           "{\"cat\": \"kernel\", \"name\": \"x\", \"dur\": 1000},"
                           "{\"cat\": \"kernel\", \"name\": \"y\", \"dur\": 3000},"
                           "{\"cat\": \"gpu_memcpy\", \"name\": \"m\", \"dur\": 9000},"
                           "{\"cat\": \"kernel\", \"name\": \"x\", \"dur\": 1000}]}");
    char path[128];
    snprintf(path, sizeof(path), "%s/k/t.json", tmpdir);
    struct mp_kernel_summary *s = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_kernel_summary_run(path, NULL, NULL, &s, &d), 0);
    assert_int_equal(s->merged.n, 2);
    assert_string_equal(s->merged.rows[0].name, "y");
    assert_true(s->merged.rows[0].time_ms == 3.0);
    assert_true(s->merged.rows[0].percent == 60.0);
    assert_int_equal(s->merged.rows[1].calls, 2);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_kernel_summary_csv(&s->merged, &b), 0);
    assert_string_equal(mp_buf_cstr(&b),
                        "name,time_ms,percent,calls\ny,3.0,60.0,1\nx,2.0,40.0,2\n");
    mp_buf_fini(&b);
    mp_kernel_summary_free(s);
}

static void check_family(const char *name, const char *want)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_kernel_family(name, strlen(name), &b), 0);
    assert_string_equal(mp_buf_cstr(&b), want);
    mp_buf_fini(&b);
}

static void test_family(void **state)
{
    (void)state;
    check_family("void at::native::elementwise_kernel<128, 4, at::native::Foo<float> >(int, "
                 "at::native::Foo<float>)",
                 "at::native::elementwise_kernel");
    check_family("void at::native::(anonymous namespace)::CatArrayBatchedCopy<int, 3>(int*)",
                 "at::native::(anonymous namespace)::CatArrayBatchedCopy");
    check_family("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT", "nvjet_sm90_tst_h_bz_coopB_TNT");
    check_family("_ZN7cutlass13device_kernelIN2at4cuda6detailEEEvNT_6ParamsE",
                 "cutlass::device_kernel");
    check_family("_Z10add_kernelPfS_i", "add_kernel");
    check_family("triton_poi_fused_add_0", "triton_poi_fused_add_0");
    check_family("fmha_fwd_kernel_deadbeef1234", "fmha_fwd_kernel");
    check_family("Memcpy DtoD (Device -> Device)", "Memcpy DtoD");
}

/* A vllm::moe_forward over two matmul_ogs kernels and a matmul_scatter one,
 * its TopK (k = 2) launching a kernel of its own (TraceLens's unfused Triton
 * MoE pseudo ops, pseudo.c). */
#define MOE_LAUNCH(ts, corr, gts, kname)                                                           \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipModuleLaunchKernel\", \"pid\": 1, " \
    "\"tid\": 1, \"ts\": " #ts ", \"dur\": 2, \"args\": {\"correlation\": " #corr "}},"            \
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 1, "       \
    "\"tid\": 1, \"ts\": " #ts "},"                                                                \
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 0, "       \
    "\"tid\": 7, \"ts\": " #gts ", \"bp\": \"e\"},"                                                \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" kname "\", \"pid\": 0, \"tid\": 7, "       \
    "\"ts\": " #gts ", \"dur\": 10, \"args\": {\"correlation\": " #corr ", \"stream\": 7}},"
static const char *const moe_trace =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"vllm::moe_forward\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 100, \"dur\": 100, \"args\": {\"External id\": 1, \"Input Dims\": [[32, 3072], "
    "[32, 32]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": "
    "[[3072, 1], [32, 1]], \"Concrete Inputs\": [\"\", \"\"]}},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"TopK\", \"pid\": 1, \"tid\": 1, \"ts\": 105,"
    " \"dur\": 10, \"args\": {\"External id\": 2, \"Input Dims\": [[32, 32], []], \"Input type\": "
    "[\"c10::BFloat16\", \"Scalar\"], \"Concrete Inputs\": [\"\", \"2\"]}}," MOE_LAUNCH(
        106, 11, 1000, "_topk_forward")
        MOE_LAUNCH(130, 12, 1020, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu")
            MOE_LAUNCH(150, 13, 1040, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1") MOE_LAUNCH(
                170, 14, 1060,
                "_finalize_matmul_scatter_bf16") "{\"ph\": \"M\", \"name\": \"process_name\", "
                                                 "\"pid\": 1, \"args\": {\"name\": \"python\"}}]}";

static const char *sheet_csv(const struct mp_report *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->sheets[i].name, name) == 0)
            return r->sheets[i].csv.data ? r->sheets[i].csv.data : "";
    return NULL;
}

static void test_moe_pseudo_ops(void **state)
{
    (void)state;
    write_file("moe.json", moe_trace);
    char path[256];
    snprintf(path, sizeof(path), "%s/moe.json", tmpdir);
    struct mp_report *plain = NULL, *pseudo = NULL;
    struct mp_report_opts o;
    struct mp_diag d;
    mp_report_opts_defaults(&o);
    o.inference = true;
    assert_int_equal(mp_report_build(path, &o, &plain, &d), 0);
    o.enable_pseudo_ops = true;
    assert_int_equal(mp_report_build(path, &o, &pseudo, &d), 0);
    /* three pseudo ops appended to the store */
    assert_int_equal(pseudo->events, plain->events + 3);
    assert_null(sheet_csv(plain, "MoE_unfused_fwd"));
    const char *moe = sheet_csv(pseudo, "MoE_unfused_fwd");
    assert_non_null(moe);
    /* up: gated (swiglu), topk from the TopK op; down: not gated */
    assert_non_null(strstr(moe, "pseudo_op::moe_triton_unfused_up,32,3072,3072,32,2,True,"));
    assert_non_null(strstr(moe, "pseudo_op::moe_triton_unfused_down,32,3072,3072,32,2,False,"));
    const char *u = sheet_csv(pseudo, "unified_perf_summary");
    assert_non_null(u);
    assert_non_null(strstr(u, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter,"));
    assert_null(strstr(u, "(Synthetic Op)"));
    /* kernel launchers walk around the pseudo ops: ops_summary is unchanged */
    assert_string_equal(sheet_csv(plain, "ops_summary"), sheet_csv(pseudo, "ops_summary"));
    mp_report_free(plain);
    mp_report_free(pseudo);
}

/* CPython 3.11's set order (TraceLens walks sets of event UIDs): adds and
 * discards (-x - 1) drawn at random in Python (random.Random(7), values
 * below 600, 45% discards), and the list(set) CPython printed. The first
 * case shows that an add reuses the last deleted slot it passes. */
static const int64_t pyset_ops[] = {
    331,  404,  74,   96,   -332, 219,  -220, -405, -97,  -75,  228,  596,  590,  50,   47,   136,
    -597, 584,  -585, -137, 192,  -193, 577,  -591, 544,  -48,  464,  -51,  249,  -545, 351,  294,
    74,   -250, -465, -295, -229, 586,  321,  -75,  593,  70,   276,  66,   -594, 456,  -67,  355,
    -356, -71,  -578, -322, -587, -277, -457, -352, 140,  563,  -564, 389,  154,  -141, -390, -155,
    269,  -270, 429,  579,  -430, 527,  55,   572,  -573, -528, 63,   -580, -56,  -64,  104,  -105,
    549,  -550, 26,   -27,  385,  -386, 355,  485,  -486, 477,  319,  -356, 271,  165,  210,  540,
    -541, 27,   305,  93,   267,  171,  -166, 514,  -211, 199,  410,  232,  -172, -478, 286,  198,
    352,  -199, 373,  -272, -94,  -233, 1,    352,  86,   122,  204,  182,  -2,   -205, 405,  86,
    174,  28,   -175, 149,  485,  358,  -359, -320, 105,  142,  -287, 216,  -353, -87,  333,  -106,
    62,   362,  597,  529,  -63,  -200, 19,   187,  153,  -363, 123,  333,  543,  108,  58,   -406,
    -515, 575,  -268, -109, 524,  -486, 546,  519,  535,  265,  207,  140,  -530, -411, 438,  -536,
    -123, 158,  374,  -29,  224,  96,   -576, -439, 165,  527,  -544, -188, -124, -141, 18,   -208,
    524,  115,  234,  107,  -598, -108, -150, 264,  -97,  584,  334,  -306, 187,  -183, -28,  266,
    -525, -334, 347,  427,  274,  44,   244,  165,  -59,  -375, 543,  296,  -428, -528, 256,  -374,
    564,  526,  457,  -527, 506,  402,  315,  235,  -458, 143,  -116, 132,  -245, 261,  -217, -236,
    -348, 288,  300,  -266, -267, -585, 560,  -20,  316,  -225, -45,  -265, 205,  -317, -335, 147,
    -154, -544, -188, -262, 158,  398,  506,  -206, 44,   525,  517,  -289, 582,  16,   598,  235,
    -547, -403, 385,  571,  -143, 250,  3,    71,   515,  94,   67,   485,  -235, 240,  210,  -95,
    391,  -518, 203,  -316, -599, 136,  -19,  101,  501,  -502, -392, 121,  562,  -257, 17,   -297,
    460,  396,  -526, -507, -572, 135,  520,  -301, 236,  497,  -45,  -521, 415,  -399, -122, -204,
    -18,  -386, -133, 296,  -166, -297, 369,  281,  287,  -416, 152,  -17,  -4,   -516, 438,  409,
    567,  82,   -370, -397, 293,  563,  -137, -251, -439, 266,  -583, -237, 122,  -561, -498, 509,
    463,  460,  -288, -275, -410, -68,  -294, -520, 422,  -83,  -211, -565, 588,  128,  541,  221,
    -102, -129, -136, 22,   -267, 484,  501,  -564, 540,  459,  -236, -486, 111,  468,  -144, -563,
    -148, 311,  257,  447,  114,  -464, 596,  -510, -312, -112, -502, -542, 248,  240,  29,   314,
};
static const int32_t pyset_order[] = {
    257, 22,  281, 540, 29,  567, 314, 71,  588, 596, 114, 122,
    152, 158, 422, 447, 459, 460, 468, 221, 484, 240, 248,
};

static void test_pyset_order(void **state)
{
    (void)state;
    const int64_t small[] = {1, 9, 17, -2, -10, 25, 33};
    const int32_t small_order[] = {33, 25, 17};
    int32_t *v = NULL;
    size_t n = 0;
    assert_int_equal(tl_pyset_replay(small, sizeof(small) / sizeof(small[0]), &v, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(v, small_order, sizeof(small_order));
    free(v);
    assert_int_equal(tl_pyset_replay(pyset_ops, sizeof(pyset_ops) / sizeof(pyset_ops[0]), &v, &n),
                     0);
    assert_int_equal(n, sizeof(pyset_order) / sizeof(pyset_order[0]));
    assert_memory_equal(v, pyset_order, sizeof(pyset_order));
    free(v);
}

/* Four ops, one kernel each: k1 (stream 1, 1000-1010) and k2 (stream 2,
 * 1005-1015) overlap by 5 us; k3 (stream 1, inside k1) shares k1's stream;
 * k4 (stream 3) touches k2 for 0.5 us only (TraceLens's 1 us floor). */
#define OV_OP(name, ts, corr, gts, kname, stream, kdur)                                            \
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 1, \"tid\": 1, "        \
    "\"ts\": " #ts ", \"dur\": 10, \"args\": {\"External id\": " #corr ", \"Input Dims\": [[4]], " \
    "\"Input type\": [\"float\"], \"Concrete Inputs\": [\"\"]}},"                                  \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "      \
    "\"tid\": 1, \"ts\": " #ts ".5, \"dur\": 2, \"args\": {\"correlation\": " #corr "}},"          \
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 1, "       \
    "\"tid\": 1, \"ts\": " #ts ".5},"                                                              \
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 0, "       \
    "\"tid\": " #stream ", \"ts\": " #gts ", \"bp\": \"e\"},"                                      \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" kname "\", \"pid\": 0, \"tid\": " #stream  \
    ", \"ts\": " #gts ", \"dur\": " #kdur ", \"args\": {\"correlation\": " #corr                   \
    ", \"stream\": " #stream "}},"
static const char *const overlap_trace =
    "{\"traceEvents\": [" OV_OP("op_a", 100, 11, 1000, "k1", 1, 10)
        OV_OP("op_b", 200, 12, 1005, "k2", 2, 10) OV_OP("op_c", 300, 13, 1002, "k3", 1, 2) OV_OP(
            "op_d", 400, 14, 1014.5, "k4", 3, 5) "{\"ph\": \"M\", \"name\": \"process_name\", "
                                                 "\"pid\": 1, \"args\": {\"name\": \"python\"}}]}";

static void test_overlap_info(void **state)
{
    (void)state;
    write_file("overlap.json", overlap_trace);
    char path[256];
    snprintf(path, sizeof(path), "%s/overlap.json", tmpdir);
    struct mp_report *r = NULL;
    struct mp_report_opts o;
    struct mp_diag d;
    mp_report_opts_defaults(&o);
    assert_int_equal(mp_report_build(path, &o, &r, &d), 0);
    assert_null(sheet_csv(r, "ops_unique_args_kl_overlap"));
    mp_report_free(r);
    o.include_overlap_info = true;
    assert_int_equal(mp_report_build(path, &o, &r, &d), 0);
    const char *u = sheet_csv(r, "ops_unique_args_kl_overlap");
    assert_non_null(u);
    assert_non_null(strstr(u, "name,overlapping_kernel_names,op category,"));
    /* op_a sees k2 for half of its kernel time, op_b k1; op_c and op_d none */
    assert_non_null(strstr(u, "op_a,['k2'],"));
    assert_non_null(strstr(u, "op_b,['k1'],"));
    assert_non_null(strstr(u, "op_c,,"));
    assert_non_null(strstr(u, "op_d,,"));
    assert_non_null(strstr(u, "[{'name': 'k2', 'stream': 2, 'overlap_pct': 0.5, 'count': 1, "
                              "'total_duration_us': 10.0,"));
    assert_non_null(strstr(u, "\"[{'name': 'k2', 'stream': 2, 'mean_duration_us': 10.0}]\","
                              "0.5,0.5,,0.5,0.5,"));
    assert_non_null(sheet_csv(r, "unified_perf_summary_kl_overlap"));
    mp_report_free(r);
}

/* An AITER MLA decode frame over its stage-1 op and a reduce kernel
 * launched by python frames only (TraceLens's MLA decode pseudo op). */
static const char *const mla_trace =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"aiter/mla.py(150): "
    "mla_decode_fwd\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 100, \"args\": {}},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aiter::mla_decode_stage1_asm_fwd\", \"pid\": "
    "1, \"tid\": 1, \"ts\": 105, \"dur\": 20, \"args\": {\"External id\": 1, \"Input Dims\": "
    "[[4, 16, 576], [100, 1, 1, 576]], \"Input type\": [\"c10::BFloat16\", "
    "\"c10::BFloat16\"]}}," MOE_LAUNCH(
        107, 21, 1000,
        "mla_a8w8_qh16_qseqlen1_gqaratio16") "{\"ph\": \"X\", \"cat\": \"python_function\", "
                                             "\"name\": \"triton/runtime/jit.py(574): run\","
                                             " \"pid\": 1, \"tid\": 1, \"ts\": 140, \"dur\": 10, "
                                             "\"args\": {}}," MOE_LAUNCH(
                                                 142, 22, 1020,
                                                 "_fwd_kernel_stage2_asm") "{\"ph\": \"M\", "
                                                                           "\"name\": "
                                                                           "\"process_name\", "
                                                                           "\"pid\": 1, \"args\": "
                                                                           "{\"name\": "
                                                                           "\"python\"}}]}";

static void test_mla_pseudo_ops(void **state)
{
    (void)state;
    write_file("mla.json", mla_trace);
    char path[256];
    snprintf(path, sizeof(path), "%s/mla.json", tmpdir);
    struct mp_report *plain = NULL, *pseudo = NULL, *nopy = NULL;
    struct mp_report_opts o;
    struct mp_diag d;
    mp_report_opts_defaults(&o);
    o.inference = true;
    o.enable_pseudo_ops = true;
    /* python frames are not in the tree: nothing to wrap */
    assert_int_equal(mp_report_build(path, &o, &nopy, &d), 0);
    o.group_by_parent_module = true;
    assert_int_equal(mp_report_build(path, &o, &pseudo, &d), 0);
    o.enable_pseudo_ops = false;
    assert_int_equal(mp_report_build(path, &o, &plain, &d), 0);
    assert_int_equal(pseudo->events, plain->events + 1);
    assert_int_equal(nopy->events, plain->events);
    /* the reduce kernel had no cpu op above it: the pseudo op launches it */
    const char *ops = sheet_csv(pseudo, "ops_summary");
    assert_non_null(ops);
    assert_non_null(strstr(ops, "pseudo_mla_decode_fwd,"));
    assert_null(strstr(sheet_csv(plain, "ops_summary"), "pseudo_mla_decode_fwd"));
    const char *u = sheet_csv(pseudo, "unified_perf_summary");
    assert_non_null(u);
    assert_non_null(strstr(u, "pseudo_mla_decode_fwd,InferenceAttention,"));
    mp_report_free(plain);
    mp_report_free(pseudo);
    mp_report_free(nopy);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A value of a test array: few distinct ones (ties), now and then a
 * zero of either sign, a NaN or an infinity when asked. */
static double pick(unsigned *seed, bool odd)
{
    *seed = *seed * 1103515245u + 12345u;
    unsigned r = (*seed >> 8) % 1000;
    if (odd && r < 20)
        return r < 5 ? NAN : r < 10 ? -0.0 : r < 15 ? 0.0 : INFINITY;
    return (double)(r % 37) * 0.25 - 3.0;
}

/* tl_stats and tl_group_stats take min, max and the median by selection
 * where that gives the bits a sort gives: checked against a sort, with
 * ties, zeros of both signs and NaN (then sorted as before). */
static void test_stats_selection(void **state)
{
    (void)state;
    unsigned seed = 7;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)round % 300;
        double *x = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
        assert_non_null(x);
        assert_non_null(c);
        for (size_t i = 0; i < n; i++)
            x[i] = pick(&seed, round % 3 == 0);
        memcpy(c, x, n * sizeof(double));
        qsort(c, n, sizeof(double), cmp_dbl);
        double med = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
        struct tl_stats st, gst;
        assert_int_equal(tl_stats(x, n, 0, &st), 0);
        assert_int_equal(tl_group_stats(x, n, true, &gst), 0);
        const struct tl_stats *both[2] = {&st, &gst};
        for (int k = 0; k < 2; k++) {
            assert_memory_equal(&both[k]->min, &c[0], sizeof(double));
            assert_memory_equal(&both[k]->max, &c[n - 1], sizeof(double));
            assert_memory_equal(&both[k]->median, &med, sizeof(double));
        }
        assert_int_equal(gst.has_std, n > 1);
        free(x);
        free(c);
    }
}

/* tl_sort_ts_idx gives qsort's order by tl_cmp_ts_idx, short and long
 * lists, ascending indexes or not. */
static void test_sort_ts_idx(void **state)
{
    (void)state;
    unsigned seed = 3;
    for (int round = 0; round < 60; round++) {
        size_t n = round % 2 ? (size_t)round / 2 : 300 + (size_t)round * 40;
        struct tl_ts_idx *a = malloc((n ? n : 1) * sizeof(*a)),
                         *b = malloc((n ? n : 1) * sizeof(*b));
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            int32_t idx = round % 4 == 2 ? (int32_t)(n - i) : (int32_t)i;
            a[i] = (struct tl_ts_idx){1.7e15 + pick(&seed, round % 5 == 0) * 1e3, idx};
        }
        memcpy(b, a, (n ? n : 1) * sizeof(*a));
        tl_sort_ts_idx(a, n);
        qsort(b, n, sizeof(*b), tl_cmp_ts_idx);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(a[i].idx, b[i].idx);
            assert_memory_equal(&a[i].ts, &b[i].ts, sizeof(double));
        }
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gap_basic),       cmocka_unit_test(test_gap_late_cpu_op_second_pass),
        cmocka_unit_test(test_gap_ranks_merge), cmocka_unit_test(test_gap_bad_rank),
        cmocka_unit_test(test_kernel_summary),  cmocka_unit_test(test_family),
        cmocka_unit_test(test_moe_pseudo_ops),  cmocka_unit_test(test_overlap_info),
        cmocka_unit_test(test_pyset_order),     cmocka_unit_test(test_mla_pseudo_ops),
        cmocka_unit_test(test_stats_selection), cmocka_unit_test(test_sort_ts_idx),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
