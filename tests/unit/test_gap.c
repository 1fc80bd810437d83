/* Unit tests for src/gap: gap analysis semantics on small traces whose
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

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp_gap_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1; // NOLINT(cert-env33-c): removes the test's own directory
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gap_basic),       cmocka_unit_test(test_gap_late_cpu_op_second_pass),
        cmocka_unit_test(test_gap_ranks_merge), cmocka_unit_test(test_gap_bad_rank),
        cmocka_unit_test(test_kernel_summary),  cmocka_unit_test(test_family),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
