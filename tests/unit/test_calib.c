/* `magpie gpu calibrate` without a GPU: the dtype list, the host decoding
 * the GEMM checks rely on, the arch JSON (TraceLens's keys, read back by
 * the roofline's own loader and by mp_calib_load), the cache and its
 * lookup by GPU name, and NVRTC compiling the calibration kernels for
 * Hopper and Ampere where libnvrtc is installed (the GPU runs are in
 * bench/calibrate_gpu.sh). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/calib.h>
#include <magpie/roofline.h>

#include "calib/calib_int.h"

static void test_dtypes(void **state)
{
    (void)state;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_calib_check_dtypes(NULL, &d), 0);
    assert_int_equal(mp_calib_check_dtypes("bf16,fp8,int8", &d), 0);
    assert_int_equal(mp_calib_check_dtypes("none", &d), 0);
    assert_int_equal(mp_calib_check_dtypes("bf16,fp9", &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "'fp9'"));
    assert_string_equal(d.field, "dtypes");
    mp_diag_clear(&d);
    assert_int_equal(mp_calib_check_dtypes("bf16,", &d), MP_EINVAL);
}

static void test_decode(void **state)
{
    (void)state;
    uint16_t h[] = {0x3c00, 0xc000, 0x3555, 0x0001, 0x7bff};
    assert_true(cal_decode(2, h, 0) == 1.0);
    assert_true(cal_decode(2, h, 1) == -2.0);
    assert_true(fabs(cal_decode(2, h, 2) - 0.333251953125) < 1e-15);
    assert_true(cal_decode(2, h, 3) == ldexp(1, -24)); /* smallest subnormal */
    assert_true(cal_decode(2, h, 4) == 65504.0);
    uint16_t bf[] = {0x3f80, 0xbfc0};
    assert_true(cal_decode(14, bf, 0) == 1.0 && cal_decode(14, bf, 1) == -1.5);
    /* e4m3: 0x38 = 1.0, 0x7e = 448 (largest), 0x01 = 2^-9; e5m2: 0x3c = 1.0, 0x7b = 57344 */
    uint8_t e4[] = {0x38, 0x7e, 0x01, 0xb8}, e5[] = {0x3c, 0x7b, 0x01};
    assert_true(cal_decode(28, e4, 0) == 1.0 && cal_decode(28, e4, 1) == 448.0);
    assert_true(cal_decode(28, e4, 2) == ldexp(1, -9) && cal_decode(28, e4, 3) == -1.0);
    assert_true(cal_decode(29, e5, 0) == 1.0 && cal_decode(29, e5, 1) == 57344.0);
    assert_true(cal_decode(29, e5, 2) == ldexp(1, -16));
    int8_t i8[] = {-128, 127};
    assert_true(cal_decode(3, i8, 0) == -128 && cal_decode(3, i8, 1) == 127);
}

static void summary(void **state)
{
    (void)state;
    double v[] = {10, 12, 11, 13, 9};
    struct mp_calib_item it;
    memset(&it, 0, sizeof(it));
    cal_summarise(v, 5, &it);
    assert_true(it.value == 11 && it.min == 9 && it.max == 13 && it.repeats == 5);
    /* sample standard deviation sqrt(2.5) over the mean 11 */
    assert_true(fabs(it.cov_pct - sqrt(2.5) / 11 * 100) < 1e-9);
}

static void fill_result(struct mp_calib_result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->device_name, sizeof(r->device_name), "NVIDIA H200");
    snprintf(r->uuid, sizeof(r->uuid), "GPU-0123abcd-0000-1111-2222-333344445555");
    snprintf(r->driver, sizeof(r->driver), "580.159.04");
    snprintf(r->arch, sizeof(r->arch), "sm_90");
    snprintf(r->date, sizeof(r->date), "2026-12-05T04:00:00Z");
    r->sms = 132;
    r->memory_gb = 150.1;
    r->power_limit_w = 700;
    r->sm_clock_max_mhz = 1980;
    r->temp_start_c = r->temp_end_c = NAN;
    r->l2_mb = 60;

    struct {
        const char *key;
        enum mp_calib_kind kind;
        enum mp_calib_status st;
        double v;
    } f[] = {{"matrix_bf16", MP_CALIB_GEMM, MP_CALIB_OK, 791.23},
             {"matrix_tf32", MP_CALIB_GEMM, MP_CALIB_OK, 401.5},
             {"matrix_fp4", MP_CALIB_GEMM, MP_CALIB_UNSUPPORTED, 0},
             {"vector_fp32", MP_CALIB_VECTOR, MP_CALIB_OK, 60.5},
             {"hbm_read", MP_CALIB_MEMORY, MP_CALIB_OK, 4210.0},
             {"hbm_copy", MP_CALIB_MEMORY, MP_CALIB_OK, 4230.5},
             {"launch_overhead", MP_CALIB_EXTRA, MP_CALIB_OK, 2.25}};

    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        struct mp_calib_item *it = &r->items[r->n_items++];
        snprintf(it->key, sizeof(it->key), "%s", f[i].key);
        it->kind = f[i].kind;
        it->status = f[i].st;
        it->value = it->min = it->max = f[i].v;
        it->unit = f[i].kind == MP_CALIB_MEMORY  ? "GB/s"
                   : f[i].kind == MP_CALIB_EXTRA ? "us"
                                                 : "TFLOP/s";
        it->sm_clock_mhz = it->power_w = it->temp_c = NAN;
        it->repeats = 5;
        if (f[i].kind == MP_CALIB_GEMM && f[i].st == MP_CALIB_OK) {
            it->m = it->n = it->k = 8192;
            it->checked = true;
            snprintf(it->algo, sizeof(it->algo), "algo 66 tile 20 stages 8 (heuristic #1 of 8)");
        }
        if (f[i].st != MP_CALIB_OK)
            snprintf(it->note, sizeof(it->note), "no fp4 tensor cores before sm_100");
    }
}

static void test_json(void **state)
{
    (void)state;
    struct mp_calib_result r;
    fill_result(&r);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_calib_json(&r, &b), 0);
    /* the roofline's loader reads it as any TraceLens arch file */
    struct mp_roofline_arch a;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_roofline_arch_parse_json(b.data, b.len, "cal.json", &a, &d), 0);
    assert_string_equal(a.name, "NVIDIA H200");
    assert_true(a.has_mem_bw && a.mem_bw_gbps == 4230.5); /* the better of read and copy */
    double t = 0;
    assert_true(mp_roofline_arch_tflops(&a, "matrix_bf16", &t) && t == 791.2);
    assert_true(mp_roofline_arch_tflops(&a, "vector_fp32", &t) && t == 60.5);
    assert_false(mp_roofline_arch_tflops(&a, "matrix_fp4", NULL)); /* not measured: absent */
    assert_true(a.calibrated);
    assert_non_null(strstr(a.origin, "2026-12-05T04:00:00Z"));
    assert_non_null(strstr(a.origin, "GPU-0123abcd"));
    /* and magpie reads its own fields back */
    char path[] = "/tmp/mp_calib_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b.data, b.len), (long)b.len);
    close(fd);
    struct mp_calib_result back;
    assert_int_equal(mp_calib_load(path, &back, &d), 0);
    assert_int_equal(back.n_items, r.n_items);
    assert_string_equal(back.items[0].key, "matrix_bf16");
    assert_int_equal(back.items[0].m, 8192);
    assert_true(back.items[0].checked);
    assert_int_equal(back.items[2].status, MP_CALIB_UNSUPPORTED);
    assert_string_equal(back.items[6].unit, "us");
    assert_true(back.power_limit_w == 700 && isnan(back.temp_start_c));
    unlink(path);
    mp_buf_fini(&b);
}

static void test_text(void **state)
{
    (void)state;
    struct mp_calib_result r;
    fill_result(&r);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_calib_text(&r, NULL, NULL, &b), 0);
    const char *s = mp_buf_cstr(&b);
    assert_non_null(strstr(s, "matrix_bf16"));
    assert_non_null(strstr(s, "791.2 TFLOP/s"));
    assert_non_null(strstr(s, "no fp4 tensor cores"));
    assert_non_null(strstr(s, "mem_bw_gbps = 4230.5 (hbm_copy)"));
    mp_buf_fini(&b);
}

static void test_cache(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_calcache_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[600];
    snprintf(sub, sizeof(sub), "%s/cal", dir); /* made by the save */
    setenv("MAGPIE_CALIBRATION_DIR", sub, 1);
    unsetenv("MAGPIE_NO_CALIBRATION");
    struct mp_roofline_arch a;
    assert_int_equal(mp_roofline_arch_calibrated("NVIDIA H200", &a, NULL, 0), MP_ENOTFOUND);
    struct mp_calib_result r;
    fill_result(&r);
    char path[1400];
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_calib_cache_save(&r, path, sizeof(path), &d), 0);
    assert_non_null(strstr(path, "GPU-0123abcd-0000-1111-2222-333344445555_drv580.159.04_700W"));
    /* a newer calibration of another H200 wins; an H100's is never taken */
    snprintf(r.uuid, sizeof(r.uuid), "GPU-ffff");
    snprintf(r.date, sizeof(r.date), "2026-12-06T00:00:00Z");
    r.items[0].value = 800;
    char p2[1400];
    assert_int_equal(mp_calib_cache_save(&r, p2, sizeof(p2), &d), 0);
    snprintf(r.device_name, sizeof(r.device_name), "NVIDIA H100 80GB HBM3");
    snprintf(r.uuid, sizeof(r.uuid), "GPU-aaaa");
    snprintf(r.date, sizeof(r.date), "2027-01-01T00:00:00Z");
    assert_int_equal(mp_calib_cache_save(&r, p2, sizeof(p2), &d), 0);
    char got[1400];
    assert_int_equal(mp_roofline_arch_calibrated("nvidia h200", &a, got, sizeof(got)), 0);
    assert_non_null(strstr(got, "GPU-ffff"));
    double t;
    assert_true(mp_roofline_arch_tflops(&a, "matrix_bf16", &t) && t == 800);
    assert_true(a.calibrated);
    /* a stray file in the folder is passed over */
    char junk[700];
    snprintf(junk, sizeof(junk), "%s/junk.json", sub);
    FILE *f = fopen(junk, "w");
    assert_non_null(f);
    fputs("{\"magpie\": [1,", f);
    fclose(f);
    assert_int_equal(mp_roofline_arch_calibrated("NVIDIA H200", &a, NULL, 0), 0);
    assert_int_equal(mp_roofline_arch_calibrated("NVIDIA A100-SXM4-80GB", &a, NULL, 0),
                     MP_ENOTFOUND);
    setenv("MAGPIE_NO_CALIBRATION", "1", 1);
    assert_int_equal(mp_roofline_arch_calibrated("NVIDIA H200", &a, NULL, 0), MP_ENOTFOUND);
    unsetenv("MAGPIE_CALIBRATION_DIR");
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* NVRTC turns the kernels into machine code for sm_90 and sm_80 and PTX
 * for sm_75 (no packed bf16 FMA there) */
/* the GEMM search's finalists: the two best screened, then the best of each
 * accumulation mode and of each shape that is not among them, each once
 * (the short screen misranks shapes; the full timing decides) */
static struct cal_cand cand(double tf, long m, long k, bool fast, uint64_t id)
{
    struct cal_cand c;
    memset(&c, 0, sizeof(c));
    c.tflops = tf;
    c.s = (struct cal_shape){m, m, k};
    c.fast = fast;
    memcpy(&c.algo, &id, sizeof(id));
    return c;
}

static void test_finalists(void **state)
{
    (void)state;
    struct cal_screen sc;
    memset(&sc, 0, sizeof(sc));
    struct cal_cand out[CAL_N_FINAL];
    assert_int_equal(cal_gemm_finalists(&sc, out), 0); /* nothing screened */
    /* TF32 on an H100, one run: 8192^3 screened above 16384^3 twice */
    sc.best[0] = cand(405, 8192, 8192, false, 1);
    sc.best[1] = cand(404, 8192, 8192, false, 2);
    sc.shape[0] = sc.best[0];
    sc.shape[1] = cand(399, 16384, 16384, false, 3);
    sc.shape[2] = cand(398, 16384, 8192, false, 4);
    int n = cal_gemm_finalists(&sc, out);
    assert_int_equal(n, 4);
    assert_true(out[0].tflops == 405 && out[1].tflops == 404);
    assert_int_equal(out[2].s.m, 16384);
    assert_int_equal(out[2].s.k, 16384);
    assert_int_equal(out[3].s.k, 8192);
    /* FP8: the best of each accumulation mode, never twice */
    sc.mode[0] = sc.best[0];
    sc.mode[1] = cand(390, 16384, 16384, true, 5);
    n = cal_gemm_finalists(&sc, out);
    assert_int_equal(n, 5);
    assert_true(out[2].fast && out[2].s.m == 16384);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            assert_false(out[i].tflops == out[j].tflops);
    /* the same shape and algorithm, fast accumulation or not: two finalists */
    memset(&sc, 0, sizeof(sc));
    sc.best[0] = cand(1400, 16384, 16384, false, 7);
    sc.best[1] = cand(1390, 16384, 16384, true, 7);
    sc.shape[0] = sc.best[0];
    assert_int_equal(cal_gemm_finalists(&sc, out), 2);
}

static void test_nvrtc(void **state)
{
    (void)state;
    struct cal_nvrtc rtc;
    char err[240];
    if (!cal_nvrtc_open(&rtc, 13, err, sizeof(err))) {
        print_message("skipped: %s\n", err);
        skip();
    }
    static const int archs[][3] = {{9, 0, 1}, {8, 0, 1}, {7, 5, 0}};
    for (size_t i = 0; i < 3; i++) {
        char *img = NULL;
        size_t n = 0;
        int rc = cal_kern_compile(&rtc, archs[i][0], archs[i][1], archs[i][2] != 0, &img, &n, err,
                                  sizeof(err));
        if (rc)
            print_message("%s\n", err);
        assert_int_equal(rc, 0);
        assert_true(n > 1000);
        if (!archs[i][2]) {
            assert_non_null(strstr(img, ".entry mp_fma_f16"));
            assert_null(strstr(img, ".entry mp_fma_bf16"));
            assert_non_null(strstr(img, ".entry mp_read"));
        }
        free(img);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes), cmocka_unit_test(test_decode),
        cmocka_unit_test(summary),     cmocka_unit_test(test_json),
        cmocka_unit_test(test_text),   cmocka_unit_test(test_cache),
        cmocka_unit_test(test_nvrtc),  cmocka_unit_test(test_finalists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
