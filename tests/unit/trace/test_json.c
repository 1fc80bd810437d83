/* The raw-JSON helpers: finding a key, integers in strings, Python reprs. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>
#include <magpie/trace_capture.h>
#include <magpie/trace_tree.h>

#include "area.h"
#include "helpers.h"

static struct mp_strview sv(const char *s)
{
    struct mp_strview v = {s, strlen(s)};
    return v;
}

static void expect_find(const char *obj, const char *key, int want_rc, const char *want)
{
    struct mp_strview v = {0};
    int rc = mp_trace_json_find(sv(obj), key, &v);
    if (rc != want_rc)
        fail_msg("find '%s' in %s: rc %d, want %d", key, obj, rc, want_rc);
    if (want && (v.n != strlen(want) || memcmp(v.p, want, v.n) != 0))
        fail_msg("find '%s' in %s: got '%.*s', want '%s'", key, obj, (int)v.n, v.p, want);
}

void test_json_find(void **state)
{
    (void)state;
    const char *o = "{\"a\":1,\"b\":{\"a\":2,\"x\":[{\"a\":3}]},\"c\":[{\"a\":3},\"a\"],"
                    "\"a\":[4, 5],\"d\":\"s\\\"}\"}";
    expect_find(o, "a", 0, "[4, 5]"); /* last top-level occurrence wins */
    expect_find(o, "b", 0, "{\"a\":2,\"x\":[{\"a\":3}]}");
    expect_find(o, "c", 0, "[{\"a\":3},\"a\"]");
    expect_find(o, "d", 0, "\"s\\\"}\"");
    expect_find(o, "x", MP_ENOTFOUND, NULL); /* nested keys are not top-level */
    expect_find(o, "", MP_ENOTFOUND, NULL);

    /* keys with escapes compare decoded */
    const char *e = "{ \"x\\\"y\" : true , \"caf\\u00e9\":null,\"tab\\t\": -1.5e3 }";
    expect_find(e, "x\"y", 0, "true");
    expect_find(e, "caf\xc3\xa9", 0, "null");
    expect_find(e, "tab\t", 0, "-1.5e3");
    expect_find(e, "cafe", MP_ENOTFOUND, NULL);

    /* real args text */
    const char *args = "{\n      \"External id\": 4,\"Record function id\": 0, \"Concrete "
                       "Inputs\": [\"\", \"\"], \"Input Dims\": [[32000, 4096], []], \"Ev Idx\": "
                       "3\n    }";
    expect_find(args, "External id", 0, "4");
    expect_find(args, "Input Dims", 0, "[[32000, 4096], []]");
    expect_find(args, "Ev Idx", 0, "3");

    expect_find("{}", "a", MP_ENOTFOUND, NULL);
    expect_find("  { }  ", "a", MP_ENOTFOUND, NULL);
    expect_find("{\"a\":}", "a", MP_EPARSE, NULL);
    expect_find("{\"a\":1,}", "b", MP_EPARSE, NULL);
    expect_find("{\"a\":1", "b", MP_EPARSE, NULL);
    expect_find("[1]", "a", MP_EPARSE, NULL);
    expect_find("", "a", MP_EPARSE, NULL);
    expect_find("{\"a\" 1}", "a", MP_EPARSE, NULL);
    expect_find("{\"a\":\"\\q\"}", "a", MP_EPARSE, NULL);
}

void test_json_int_string(void **state)
{
    (void)state;

    static const struct {
        const char *text;
        int ok;
        int64_t v;
    } cases[] = {
        {"42", 1, 42},
        {"-7", 1, -7},
        {"0", 1, 0},
        {"1e3", 1, 1000},
        {"42.0", 1, 42},
        {"2.5e1", 1, 25},
        {" 5 ", 1, 5},
        {"9223372036854775807", 1, INT64_MAX},
        {"1.5", 0, 0},
        {"\"3\"", 0, 0},
        {"abc", 0, 0},
        {"", 0, 0},
        {"1 2", 0, 0},
        {"5x", 0, 0},
        {"-", 0, 0},
        {"1e400", 0, 0},
        {"9223372036854775808", 0, 0},
        {"99999999999999999999", 0, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = 12345;
        int rc = mp_trace_json_int(sv(cases[i].text), &v);
        if ((rc == 0) != cases[i].ok || (cases[i].ok && v != cases[i].v))
            fail_msg("json_int('%s'): rc %d v %lld, want ok=%d v=%lld", cases[i].text, rc,
                     (long long)v, cases[i].ok, (long long)cases[i].v);
    }

    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_trace_json_string(sv("\"a\\nb\\u00e9\\ud83d\\ude00\""), &b), 0);
    assert_string_equal(mp_buf_cstr(&b), "a\nb\xc3\xa9\xf0\x9f\x98\x80");
    assert_int_equal(mp_trace_json_string(sv("\"\""), &b), 0);
    assert_int_equal(b.len, 0);
    assert_string_equal(mp_buf_cstr(&b), "");
    assert_int_equal(mp_trace_json_string(sv("\"\\ud800\""), &b), 0);
    assert_string_equal(mp_buf_cstr(&b), "\xed\xa0\x80");
    assert_true(mp_trace_json_string(sv("42"), &b) != 0);
    assert_true(mp_trace_json_string(sv("\"abc"), &b) != 0);
    assert_true(mp_trace_json_string(sv("\"a\\qc\""), &b) != 0);
    mp_buf_fini(&b);
}

/* mp_trace_json_pyrepr prints what Python prints for repr(json.loads(text))
 * (lists as lists) and for TraceLens's list_to_tuple of it: the expected
 * texts are Python 3's output, NaN / Infinity / -Infinity as nan / inf / -inf. */
void test_json_pyrepr(void **state)
{
    (void)state;
    static const char text[] = "[1, 2.50, 1e300, NaN, Infinity, -Infinity, \"it's\", \"a\\nb\", "
                               "true, null, {\"k\": [1]}, [3]]";

    static const struct {
        bool tuples;
        const char *want;
    } cases[] = {
        {false, "[1, 2.5, 1e+300, nan, inf, -inf, \"it's\", 'a\\nb', True, None, {'k': [1]}, [3]]"},
        {true,
         "(1, 2.5, 1e+300, nan, inf, -inf, \"it's\", 'a\\nb', True, None, {'k': (1,)}, (3,))"},
    };
    struct mp_buf b;
    mp_buf_init(&b, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mp_buf_reset(&b);
        assert_int_equal(mp_trace_json_pyrepr(&b, text, text + strlen(text), cases[i].tuples), 0);
        assert_string_equal(mp_buf_cstr(&b), cases[i].want);
    }
    static const char *const scalars[][2] = {
        {"NaN", "nan"},   {"-Infinity", "-inf"},      {"Infinity", "inf"}, {"-0.0", "-0.0"},
        {"1E2", "100.0"}, {"\"\\u0001\"", "'\\x01'"}, {"", "None"},
    };
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
        mp_buf_reset(&b);
        const char *t = scalars[i][0];
        assert_int_equal(mp_trace_json_pyrepr(&b, t, t + strlen(t), true), 0);
        assert_string_equal(mp_buf_cstr(&b), scalars[i][1]);
    }
    mp_buf_fini(&b);
}
