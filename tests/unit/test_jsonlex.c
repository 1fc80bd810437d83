/* Unit tests for the JSON lexing core (include/magpie/jsonlex.h, src/fmt):
 * hex digits, escapes with surrogate pairs (lone and invalid ones too),
 * strict string/number scanning, skipping values (nested, malformed, the
 * depth limit) and the end of a value in valid text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <magpie/jsonlex.h>

static void test_hex(void **state)
{
    (void)state;
    const char *digits = "0123456789abcdefABCDEF";
    const int want[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                        11, 12, 13, 14, 15, 10, 11, 12, 13, 14, 15};
    for (size_t i = 0; digits[i]; i++)
        assert_int_equal(mp_json_hexval(digits[i]), want[i]);
    assert_int_equal(mp_json_hexval('g'), -1);
    assert_int_equal(mp_json_hexval('G'), -1);
    assert_int_equal(mp_json_hexval('/'), -1);
    assert_int_equal(mp_json_hexval(':'), -1);
    assert_int_equal(mp_json_hexval('"'), -1);
    assert_int_equal(mp_json_hexval('\0'), -1);
    assert_int_equal(mp_json_hex4("00e9"), 0xe9);
    assert_int_equal(mp_json_hex4("FFFF"), 0xffff);
    assert_int_equal(mp_json_hex4("dBfF"), 0xdbff);
    assert_int_equal(mp_json_hex4("12G4"), -1);
    assert_int_equal(mp_json_hex4("123\""), -1);
}

/* Decodes the escape at the start of s (the whole of s is the input). */
static int unesc(const char *s, char out[5], size_t *n)
{
    memset(out, 0, 5);
    *n = 0;
    return mp_json_unescape(s, s + strlen(s), out, n);
}

static void test_unescape_simple(void **state)
{
    (void)state;
    const char *in = "\"\\/bfnrt";
    const char want[] = "\"\\/\b\f\n\r\t";
    for (int i = 0; in[i]; i++) {
        char s[3] = {'\\', in[i], 0}, o[5];
        size_t n;
        assert_int_equal(unesc(s, o, &n), 2);
        assert_int_equal(n, 1);
        assert_int_equal(o[0], want[i]);
        /* validating only: the same count, nothing written */
        assert_int_equal(mp_json_unescape(s, s + 2, NULL, NULL), 2);
    }
    char o[5];
    size_t n;
    assert_int_equal(unesc("\\q", o, &n), MP_JSON_ESC_BAD);
    assert_int_equal(unesc("\\U0041", o, &n), MP_JSON_ESC_BAD);
    assert_int_equal(unesc("\\'", o, &n), MP_JSON_ESC_BAD);
    assert_int_equal(unesc("\\", o, &n), MP_JSON_ESC_END);
    assert_int_equal(mp_json_unescape("\\", (const char *)"\\" + 1, NULL, NULL), MP_JSON_ESC_END);
}

static void test_unescape_u(void **state)
{
    (void)state;
    char o[5];
    size_t n;
    /* 1, 2 and 3 bytes of UTF-8 */
    assert_int_equal(unesc("\\u0041", o, &n), 6);
    assert_int_equal(n, 1);
    assert_string_equal(o, "A");
    assert_int_equal(unesc("\\u0000", o, &n), 6);
    assert_int_equal(n, 1);
    assert_int_equal(o[0], 0);
    assert_int_equal(unesc("\\u00e9rest", o, &n), 6);
    assert_int_equal(n, 2);
    assert_string_equal(o, "\xc3\xa9");
    assert_int_equal(unesc("\\u20AC", o, &n), 6);
    assert_int_equal(n, 3);
    assert_string_equal(o, "\xe2\x82\xac");
    /* a surrogate pair is one code point, four bytes, twelve read */
    assert_int_equal(unesc("\\ud83d\\ude00", o, &n), 12);
    assert_int_equal(n, 4);
    assert_string_equal(o, "\xf0\x9f\x98\x80");
    assert_int_equal(unesc("\\uDBFF\\uDFFFx", o, &n), 12);
    assert_string_equal(o, "\xf4\x8f\xbf\xbf");
    /* lone surrogates stand alone in their 3-byte form (as Python) */
    assert_int_equal(unesc("\\ud800\"", o, &n), 6);
    assert_int_equal(n, 3);
    assert_string_equal(o, "\xed\xa0\x80");
    assert_int_equal(unesc("\\udc00\\udc00", o, &n), 6);
    assert_string_equal(o, "\xed\xb0\x80");
    assert_int_equal(unesc("\\ud800\\ud800\"", o, &n), 6); /* high, high */
    assert_string_equal(o, "\xed\xa0\x80");
    assert_int_equal(unesc("\\ud800\\u0041\"", o, &n), 6); /* high, not a low */
    assert_string_equal(o, "\xed\xa0\x80");
    assert_int_equal(unesc("\\ud800\\uZZZZ\"", o, &n), 6); /* high, bad escape next */
    assert_int_equal(unesc("\\ud800\\n\"", o, &n), 6);
    assert_int_equal(unesc("\\ud800x", o, &n), 6);
    /* bad digits */
    assert_int_equal(unesc("\\u12G4", o, &n), MP_JSON_ESC_BAD_U);
    assert_int_equal(unesc("\\u123\"", o, &n), MP_JSON_ESC_BAD_U);
    assert_int_equal(unesc("\\u-123", o, &n), MP_JSON_ESC_BAD_U);
    /* the input ends inside the escape or before the low surrogate is known */
    assert_int_equal(unesc("\\u", o, &n), MP_JSON_ESC_SHORT);
    assert_int_equal(unesc("\\u123", o, &n), MP_JSON_ESC_SHORT);
    assert_int_equal(unesc("\\ud800", o, &n), MP_JSON_ESC_SHORT);
    assert_int_equal(unesc("\\ud800\\", o, &n), MP_JSON_ESC_SHORT);
    assert_int_equal(unesc("\\ud800\\udc0", o, &n), MP_JSON_ESC_SHORT);
    /* ... but not when the next escape is another one */
    assert_int_equal(unesc("\\ud800\\n", o, &n), 6);
    /* validating only: each \u escape alone, no look beyond it */
    const char *s = "\\ud800";
    assert_int_equal(mp_json_unescape(s, s + 6, NULL, NULL), 6);
    s = "\\ud83d\\ude00";
    assert_int_equal(mp_json_unescape(s, s + 12, NULL, NULL), 6);
    assert_int_equal(mp_json_unescape(s, s + 5, NULL, NULL), MP_JSON_ESC_SHORT);
    s = "\\uXYZW";
    assert_int_equal(mp_json_unescape(s, s + 6, NULL, NULL), MP_JSON_ESC_BAD_U);
}

static void test_utf8(void **state)
{
    (void)state;
    char o[4];
    assert_int_equal(mp_json_utf8(o, 0x7f), 1);
    assert_int_equal(mp_json_utf8(o, 0x80), 2);
    assert_int_equal(mp_json_utf8(o, 0x7ff), 2);
    assert_int_equal(mp_json_utf8(o, 0x800), 3);
    assert_int_equal(mp_json_utf8(o, 0xffff), 3);
    assert_int_equal(mp_json_utf8(o, 0x10000), 4);
    assert_memory_equal(o, "\xf0\x90\x80\x80", 4);
    assert_int_equal(mp_json_utf8(o, 0x10ffff), 4);
    assert_memory_equal(o, "\xf4\x8f\xbf\xbf", 4);
}

static void test_ws(void **state)
{
    (void)state;
    const char *s = " \t\r\n x";
    assert_ptr_equal(mp_json_skip_ws(s, s + strlen(s)), s + 5);
    assert_ptr_equal(mp_json_skip_ws(s, s + 3), s + 3);
    s = "\v\fx"; /* not JSON whitespace */
    assert_ptr_equal(mp_json_skip_ws(s, s + 3), s);
    s = " , \n]";
    assert_ptr_equal(mp_json_next_item(s, s + strlen(s)), s + 4);
    s = "  ]";
    assert_ptr_equal(mp_json_next_item(s, s + strlen(s)), s + 2);
}

static struct mp_json_cur cur(const char *s)
{
    return (struct mp_json_cur){s, s + strlen(s), NULL, NULL};
}

static void test_string(void **state)
{
    (void)state;
    struct mp_json_cur c = cur("\"a\\\"b\\u00e9\\ud800\" x");
    const char *s = NULL;
    size_t n = 0;
    assert_true(mp_json_string(&c, &s, &n));
    assert_int_equal(n, 16);
    assert_memory_equal(s, "a\\\"b\\u00e9\\ud800", n);
    assert_string_equal(c.p, " x");
    assert_null(c.err);

    static const struct {
        const char *in, *err;
    } bad[] = {
        {"x", "expected a string"},
        {"", "expected a string"},
        {"\"abc", "unterminated string"},
        {"\"abc\\", "unterminated string"},
        {"\"a\tb\"", "control character in string"},
        {"\"\\q\"", "bad escape in string"},
        {"\"\\u12", "truncated \\u escape"},
        {"\"\\u12x4\"", "bad \\u escape"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        c = cur(bad[i].in);
        assert_false(mp_json_string(&c, NULL, NULL));
        assert_string_equal(c.err, bad[i].err);
    }
    /* the first error wins */
    c = cur("\"\\q\"");
    assert_false(mp_json_string(&c, NULL, NULL));
    assert_false(mp_json_fail(&c, "later"));
    assert_string_equal(c.err, "bad escape in string");
}

static void test_number(void **state)
{
    (void)state;

    static const struct {
        const char *in;
        int64_t v;
        bool is_int;
        size_t len;
    } ok[] = {
        {"0", 0, true, 1},
        {"-0", 0, true, 2},
        {"42,", 42, true, 2},
        {"-17]", -17, true, 3},
        {"922337203685477580", INT64_MAX / 10, true, 18},
        /* the overflow test is conservative in the last digit below 2^63 */
        {"9223372036854775807", 0, false, 19},
        {"92233720368547758070", 0, false, 20}, /* beyond int64 */
        {"1.5", 0, false, 3},
        {"2e10", 0, false, 4},
        {"-3.25E-7 ", 0, false, 8},
        {"0123", 0, true, 1}, /* the number is "0"; what follows is not its business */
    };

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct mp_json_cur c = cur(ok[i].in);
        int64_t v = -1;
        bool is_int = !ok[i].is_int;
        assert_true(mp_json_number(&c, &v, &is_int));
        assert_int_equal(is_int, ok[i].is_int);
        if (ok[i].is_int)
            assert_int_equal(v, ok[i].v);
        assert_int_equal(c.p - ok[i].in, ok[i].len);
    }

    static const struct {
        const char *in, *err;
    } bad[] = {
        {"-", "bad number"},
        {"x", "bad number"},
        {"+1", "bad number"},
        {"1.", "bad number fraction"},
        {"1.e5", "bad number fraction"},
        {"1e", "bad number exponent"},
        {"1e+", "bad number exponent"},
        {"NaN", "bad number"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct mp_json_cur c = cur(bad[i].in);
        assert_false(mp_json_number(&c, NULL, NULL));
        assert_string_equal(c.err, bad[i].err);
    }
}

/* mp_json_skip over all of s: the error message, or NULL when it read one
 * value and only whitespace follows */
static const char *skip_all(const char *s, const char *eof_msg)
{
    struct mp_json_cur c = cur(s);
    c.eof_msg = eof_msg;
    if (!mp_json_skip(&c, 0))
        return c.err ? c.err : "(no message)";
    mp_json_ws(&c);
    return c.p == c.end ? NULL : "(trailing bytes)";
}

static void test_skip(void **state)
{
    (void)state;
    assert_null(skip_all("{}", NULL));
    assert_null(skip_all(" [ ] ", NULL));
    assert_null(skip_all("{\"a\": [1, 2.5e3, -0, {\"b\": null}], \"c\": \"\\u00e9\\\"\", "
                         "\"d\": [true, false, [[]]], \"e\": {}}",
                         NULL));
    assert_null(skip_all("\"\\ud83d\\ude00\"", NULL));

    static const struct {
        const char *in, *err;
    } bad[] = {
        {"", "unexpected end of JSON text"},
        {"[1, 2", "expected ',' or ']'"},
        {"[1, 2,", "unexpected end of JSON text"},
        {"[1, 2,]", "bad number"},
        {"[1 2]", "expected ',' or ']'"},
        {"{\"a\" 1}", "expected ':'"},
        {"{\"a\": 1,}", "expected a string"},
        {"{\"a\": 1 \"b\": 2}", "expected ',' or '}'"},
        {"{a: 1}", "expected a string"},
        {"{\"a\":", "unexpected end of JSON text"},
        {"[tru]", "bad literal"},
        {"[nul", "bad literal"},
        {"[NaN]", "bad number"},
        {"[\"x\\z\"]", "bad escape in string"},
        {"}", "bad number"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *err = skip_all(bad[i].in, NULL);
        assert_non_null(err);
        assert_string_equal(err, bad[i].err);
    }
    /* the caller's words for "the text ends where a value must start" */
    assert_string_equal(skip_all("[1,", "unexpected end of event data"),
                        "unexpected end of event data");
    /* skipping stops after one value */
    struct mp_json_cur c = cur("[1] [2]");
    assert_true(mp_json_skip(&c, 0));
    assert_string_equal(c.p, " [2]");
}

static void test_skip_depth(void **state)
{
    (void)state;
    /* values nest MP_JSON_MAX_DEPTH levels below the top one, no more */
    char s[2 * (MP_JSON_MAX_DEPTH + 2) + 1];
    for (int levels = MP_JSON_MAX_DEPTH; levels <= MP_JSON_MAX_DEPTH + 2; levels++) {
        int k = 0;
        for (int i = 0; i < levels; i++)
            s[k++] = '[';
        for (int i = 0; i < levels; i++)
            s[k++] = ']';
        s[k] = '\0';
        const char *err = skip_all(s, NULL);
        if (levels <= MP_JSON_MAX_DEPTH + 1)
            assert_null(err);
        else
            assert_string_equal(err, "nesting too deep");
    }
    /* objects count as arrays do */
    char o[8 * (MP_JSON_MAX_DEPTH + 2) + 8];
    int k = 0;
    for (int i = 0; i < MP_JSON_MAX_DEPTH + 2; i++)
        k += snprintf(o + k, sizeof(o) - (size_t)k, "{\"a\":");
    k += snprintf(o + k, sizeof(o) - (size_t)k, "1");
    for (int i = 0; i < MP_JSON_MAX_DEPTH + 2; i++)
        o[k++] = '}';
    o[k] = '\0';
    assert_string_equal(skip_all(o, NULL), "nesting too deep");
}

static void test_key_and_members(void **state)
{
    (void)state;
    struct mp_json_cur c = cur("{ \"k\\\"1\" :  7 , \"k2\":[] }");
    c.p++;
    assert_true(mp_json_first(&c, '}'));
    const char *k;
    size_t kn;
    assert_true(mp_json_key(&c, &k, &kn));
    assert_int_equal(kn, 4);
    assert_memory_equal(k, "k\\\"1", 4);
    assert_int_equal(*c.p, '7');
    assert_true(mp_json_skip(&c, 1));
    assert_int_equal(mp_json_more(&c, '}'), 1);
    assert_true(mp_json_key(&c, &k, &kn));
    assert_memory_equal(k, "k2", 2);
    assert_true(mp_json_skip(&c, 1));
    assert_int_equal(mp_json_more(&c, '}'), 0);
    assert_ptr_equal(c.p, c.end);
    c = cur("[ ]");
    c.p++;
    assert_false(mp_json_first(&c, ']'));
    assert_ptr_equal(c.p, c.end);
    c = cur("1 }");
    c.p++;
    assert_int_equal(mp_json_more(&c, ']'), -1);
    assert_string_equal(c.err, "expected ',' or ']'");
}

static void test_value_end(void **state)
{
    (void)state;

    static const struct {
        const char *in;
        size_t len;
    } cases[] = {
        {"123, 4", 3},
        {"123]", 3},
        {"-1.5e3 ", 6},
        {"true,", 4},
        {"\"a,b]\" ,", 6},
        {"\"a\\\"]\\\\\",", 8},
        {"[1, [2, \"]\"], {\"x\": \"}\"}] ,", 25},
        {"{\"a\": [1, 2]}x", 13},
        {"[[]]", 4},
        {"]", 0},
        {"7", 1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *s = cases[i].in;
        assert_int_equal(mp_json_value_end(s, s + strlen(s)) - s, cases[i].len);
    }
    /* a value cut short ends at the end of the text */
    const char *s = "[1, [2";
    assert_ptr_equal(mp_json_value_end(s, s + strlen(s)), s + strlen(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hex),        cmocka_unit_test(test_unescape_simple),
        cmocka_unit_test(test_unescape_u), cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_ws),         cmocka_unit_test(test_string),
        cmocka_unit_test(test_number),     cmocka_unit_test(test_skip),
        cmocka_unit_test(test_skip_depth), cmocka_unit_test(test_key_and_members),
        cmocka_unit_test(test_value_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
