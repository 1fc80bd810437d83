/* Unit tests for the correctness plumbing of the kernel pipeline:
 * kernel/kresult.c (a child's result file that is missing, that is not
 * strict JSON - bare Infinity/NaN as the Python runner once wrote them, a
 * cut-off write - or not an object, and non-finite numbers written as null
 * plus a "nonfinite" note read back as Inf/NaN), and the kernel YAML's
 * dtype and high-precision-reference keys (config/kernel.c). */
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

#include <magpie/base.h>
#include <magpie/config.h>

#include "kernel/kresult_int.h"

static void write_file(char *path, size_t len, const char *text)
{
    snprintf(path, len, "%s/kresult_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

static void test_missing(void **state)
{
    (void)state;
    char why[512];
    bool present = true;
    json_t *r =
        kern_load_result("/nonexistent/dir/runner_run_result.json", &present, why, sizeof(why));
    assert_null(r);
    assert_false(present);
    assert_string_equal(why, "no output");
    char path[256];
    write_file(path, sizeof(path), "");
    r = kern_load_result(path, &present, why, sizeof(why));
    assert_null(r);
    assert_false(present);
    unlink(path);
}

/* The byte offset must point into the file where the parser stopped: at or
 * just after the offending token. */
static void expect_parse_error(const char *text, const char *token)
{
    char path[256], why[1024];
    write_file(path, sizeof(path), text);
    bool present = false;
    json_t *r = kern_load_result(path, &present, why, sizeof(why));
    assert_null(r);
    assert_true(present);
    char want[300];
    snprintf(want, sizeof(want), "could not parse result %s at byte ", path);
    assert_non_null(strstr(why, want));
    long at = strtol(why + strlen(want), NULL, 10);
    long tok = (long)(strstr(text, token) - text);
    assert_true(at >= tok && at <= tok + (long)strlen(token) + 1);
    unlink(path);
}

static void test_not_strict(void **state)
{
    (void)state;
    expect_parse_error(
        "{\"kernels\": [{\"correctness\": {\"ok\": false, \"max_abs_err\": Infinity}}]}",
        "Infinity");
    expect_parse_error("{\"kernels\": [{\"timing\": {\"samples_ms\": [0.5, NaN]}}]}", "NaN");
    expect_parse_error("{\"kernels\": [{\"id\": \"0_k\", \"correctness\": {\"ok\": tr", "tr");
    char path[256], why[1024];
    write_file(path, sizeof(path), "[1, 2]");
    bool present = false;
    assert_null(kern_load_result(path, &present, why, sizeof(why)));
    assert_true(present);
    assert_non_null(strstr(why, "expected a JSON object"));
    unlink(path);
}

static void test_nonfinite(void **state)
{
    (void)state;
    char path[256], why[512];
    write_file(path, sizeof(path),
               "{\"kernels\": [{\"correctness\": {\"max_abs_err\": null, \"max_rel_err\": null, "
               "\"x\": 2.5, \"y\": null, \"nonfinite\": {\"max_abs_err\": \"inf\", "
               "\"max_rel_err\": \"nan\", \"z\": \"-inf\"}}}], \"nonfinite_fields\": "
               "[\"kernels[0].correctness.max_abs_err: inf\"]}");
    json_t *r = kern_load_result(path, NULL, why, sizeof(why));
    assert_non_null(r);
    json_t *c = json_object_get(json_array_get(json_object_get(r, "kernels"), 0), "correctness");
    assert_true(isinf(kern_json_real(c, "max_abs_err")) && kern_json_real(c, "max_abs_err") > 0);
    assert_true(isnan(kern_json_real(c, "max_rel_err")));
    assert_true(kern_json_real(c, "x") == 2.5);
    assert_true(kern_json_real(c, "y") == 0);       /* null without a note */
    assert_true(kern_json_real(c, "missing") == 0); /* absent */
    json_decref(r);
    unlink(path);
}

static void test_dtype_keys(void **state)
{
    (void)state;
    assert_string_equal(mp_kernel_dtype_canonical("bf16"), "bfloat16");
    assert_string_equal(mp_kernel_dtype_canonical("torch.half"), "float16");
    assert_string_equal(mp_kernel_dtype_canonical("FP8"), "float8_e4m3fn");
    assert_string_equal(mp_kernel_dtype_canonical("float8_e5m2"), "float8_e5m2");
    assert_null(mp_kernel_dtype_canonical("float12"));
    assert_null(mp_kernel_dtype_canonical(NULL));

    struct mp_kernel_config c;
    struct mp_diag d;
    mp_kernel_config_init(&c);
    mp_diag_clear(&d);
    const char *y = "kernels:\n"
                    "  - {id: a, type: pytorch, dtype: bf16, hp_factor: 6, rms_factor: 3}\n"
                    "  - {id: b, type: pytorch, hp_reference: false}\n";
    assert_int_equal(mp_config_load_kernel_string(&c, y, "k.yaml", &d), 0);
    assert_int_equal(c.nwarnings, 0);
    assert_string_equal(c.kernels[0].dtype, "bfloat16");
    assert_false(c.kernels[0].hp_off);
    assert_true(c.kernels[0].hp_factor == 6 && c.kernels[0].rms_factor == 3);
    assert_null(c.kernels[1].dtype); /* from the tensors */
    assert_true(c.kernels[1].hp_off);
    assert_true(c.kernels[1].hp_factor == 0 && c.kernels[1].rms_factor == 0);
    mp_kernel_config_fini(&c);

    static const struct {
        const char *yaml;
        long line, col;
    } bad[] = {
        {"kernel: {id: a, dtype: float12}\n", 1, 24},
        {"kernel: {id: a, hp_reference: sometimes}\n", 1, 31},
        {"kernel: {id: a, hp_factor: 0.5}\n", 1, 28},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mp_kernel_config_init(&c);
        mp_diag_clear(&d);
        assert_int_equal(mp_config_load_kernel_string(&c, bad[i].yaml, "b.yaml", &d), MP_EINVAL);
        if (d.line != bad[i].line || d.col != bad[i].col)
            fprintf(stderr, "case %zu: %ld:%ld %s\n", i, d.line, d.col, d.msg);
        assert_int_equal(d.line, bad[i].line);
        assert_int_equal(d.col, bad[i].col);
        mp_kernel_config_fini(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_not_strict),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_dtype_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
