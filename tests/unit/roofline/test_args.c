/* The args reader of the perf model. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

/* The args reader: escapes, unicode, Python's NaN/Infinity, duplicate keys
 * (the last wins, as in Python), big integers, and malformed text. */
void test_args_json(void **state)
{
    (void)state;
    struct mp_roofline_result r;
    /* a dtype spelled with escapes still reads as c10::BFloat16 */
    run("aten::neg",
        "{\"Input Dims\": [[3]], \"Input type\": [\"c10::BFloa\\u0074\\u00316\"], \"Input "
        "Strides\": "
        "[[1]], \"Input Dims\": [[4, 2]]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "op_shape"), "(4, 2)");
    assert_string_equal(ptext(&r, "dtype_in_out"), "('c10::BFloat16', None)");
    assert_true(r.bytes == 32);
    mp_roofline_result_fini(&r);
    /* strings in params print as Python reprs, non-ASCII kept */
    run("aten::copy_",
        "{\"Input Dims\": [[2], [2]], \"Input type\": [\"it's \\\"q\\\"\", "
        "\"\\u00e9\\ud83d\\ude00\"], "
        "\"Input Strides\": [[NaN, -Infinity, 1.5, 12345678901234567890], [1]]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "dtype_in_out"), "('it\\'s \"q\"', '\xc3\xa9\xf0\x9f\x98\x80')");
    assert_string_equal(ptext(&r, "stride_input"), "(nan, -inf, 1.5, 1.2345678901234567e+19)");
    assert_false(r.has_bytes); /* unknown dtypes: bytes() is None */
    assert_string_equal(r.compute_spec, "");
    mp_roofline_result_fini(&r);
    /* 1-tuples keep their comma; empty shapes print () */
    run("aten::add",
        "{\"Input Dims\": [[559], []], \"Input type\": [\"float\", \"Scalar\"], \"Input Strides\": "
        "[[1], []]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "shape_in1"), "(559,)");
    assert_string_equal(ptext(&r, "shape_in2"), "()");
    assert_string_equal(ptext(&r, "stride_output"), "<None>");
    assert_true(r.bytes == 559 * 4 + 4 + 559 * 4);
    mp_roofline_result_fini(&r);
    /* malformed args fail the row, whatever the op */
    static const char *const bad[] = {"{\"Input Dims\": [[1, 2]", "[1, 2]",       "{\"a\": tru}",
                                      "{\"a\": \"\\x\"}",         "{\"a\": 1} x", "{\"a\": 01e}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        run("aten::mm", bad[i], &r);
        assert_int_equal(r.status, MP_ROOFLINE_FAILED);
        assert_int_equal(r.status_bwd, MP_ROOFLINE_FAILED);
        assert_string_equal(r.category, "GEMM");
        mp_roofline_result_fini(&r);
    }
    /* deep nesting is refused, not a stack overflow */
    char deep[400];
    size_t n = 0;
    deep[n++] = '{';
    memcpy(deep + n, "\"a\":", 4);
    n += 4;
    for (int i = 0; i < 150; i++)
        deep[n++] = '[';
    for (int i = 0; i < 150; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    deep[n] = '\0';
    run("aten::mm", deep, &r);
    assert_int_equal(r.status, MP_ROOFLINE_FAILED);
    mp_roofline_result_fini(&r);
    /* large args move to the heap */
    size_t big = 200000;
    char *a = malloc(big + 128);
    assert_non_null(a);
    size_t m = (size_t)sprintf(a, "{\"Input Dims\": [[2]], \"pad\": [");
    while (m < big) {
        strcpy(a + m, "\"xxxxxxxx\", ");
        m += 12;
    }
    m += (size_t)sprintf(a + m, "1], \"Input type\": [\"float\"], \"Input Strides\": [[1]]}");
    struct mp_roofline_op op = {"aten::neg", a, m, NULL, NULL, 0, NULL};
    assert_int_equal(mp_roofline_model(&op, &r), 0);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_true(r.bytes == 16);
    mp_roofline_result_fini(&r);
    free(a);
    /* API misuse */
    struct mp_roofline_op none = {NULL, NULL, 0, NULL, NULL, 0, NULL};
    assert_int_equal(mp_roofline_model(&none, &r), MP_EINVAL);
    assert_int_equal(mp_roofline_model(NULL, &r), MP_EINVAL);
    assert_int_equal(mp_roofline_model(&none, NULL), MP_EINVAL);
    mp_roofline_result_fini(NULL);
}
