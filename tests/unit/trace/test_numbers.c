/* Numbers in the parser: decimal text to double as Python reads it, integer
 * fields and their limits. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdbool.h>
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

/* Decoding of every number form must equal strtod's correctly rounded value. */
/* a and b are the same double, bit for bit (-0.0 is not 0.0) */
static bool same_bits(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof(x));
    memcpy(&y, &b, sizeof(y));
    return x == y;
}

void test_numbers(void **state)
{
    (void)state;
    static const char *nums[] = {"0",
                                 "-0",
                                 "1",
                                 "-1",
                                 "0.1",
                                 "1e-7",
                                 "1.5e3",
                                 "2.5E-1",
                                 "123.456e+2",
                                 "1E2",
                                 "5154289800660.636",
                                 "9007199254740993",
                                 "123456789012345678",
                                 "0.30000000000000004",
                                 "1.7976931348623157e308",
                                 "4.9e-324",
                                 "2.2250738585072014e-308",
                                 "7.2057594037927933e16",
                                 "1.00000000000000011102230246251565404236316680908203125",
                                 "1e22",
                                 "1e23",
                                 "8.5e-5",
                                 "0.000000000000000000000000000000001",
                                 "123456789.123456789123456789",
                                 "-2.5e-10",
                                 "9999999999999999999999",
                                 "3.141592653589793238462643383279502884197"};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        char t[256];
        snprintf(t, sizeof(t), "[{\"ts\":%s,\"dur\":%s}]", nums[i], nums[i]);
        struct coll c;
        coll_init(&c);
        struct mp_diag d;
        int rc = parse_mem(t, strlen(t), 0, &c, NULL, &d);
        if (rc)
            fail_msg("%s: rc %d (%s)", nums[i], rc, d.msg);
        double want = strtod(nums[i], NULL);
        assert_int_equal(c.n, 1);
        if (!same_bits(c.v[0].ts, want) || !same_bits(c.v[0].dur, want))
            fail_msg("%s: got ts %.17g dur %.17g, want %.17g", nums[i], c.v[0].ts, c.v[0].dur,
                     want);
        assert_true(c.v[0].flags & MP_EV_TS);
        assert_true(c.v[0].flags & MP_EV_DUR);
        coll_fini(&c);
    }
}

/* Random numbers of every length from 1 to 22 digits in each part, with and
 * without a fraction or an exponent, each followed by one of the characters
 * that can end a number: the 8-digits-at-a-time scanner must give strtod's
 * value (ts, dur) and strtoll's (External id) for every one. The events are
 * parsed in one window and in small ones, so runs of digits also meet the
 * window's end at every offset. */
void test_numbers_random(void **state)
{
    (void)state;

    enum { N = 3000 };

    uint64_t rng = 0x9e3779b97f4a7c15u;
    struct mp_buf t;
    mp_buf_init(&t, 0);
    char(*ts)[64] = calloc(N, sizeof(*ts));
    char(*ext)[32] = calloc(N, sizeof(*ext));
    assert_non_null(ts);
    assert_non_null(ext);
    assert_int_equal(mp_buf_putc(&t, '['), 0);
    for (size_t i = 0; i < N; i++) {
        char *o = ts[i];
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = rng >> 11;
        int nint = 1 + (int)(r % 22), nfrac = (int)((r >> 5) % 23), form = (int)((r >> 10) % 8);
        if ((r >> 13) & 1)
            *o++ = '-';
        for (int k = 0; k < nint; k++) {
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            *o++ = (char)('0' + (k == 0 && nint > 1 ? 1 + (rng >> 40) % 9 : (rng >> 40) % 10));
        }
        if (form != 0 && nfrac > 0) {
            *o++ = '.';
            for (int k = 0; k < nfrac; k++) {
                rng = rng * 6364136223846793005u + 1442695040888963407u;
                *o++ = (char)('0' + (rng >> 40) % 10);
            }
        }
        if (form == 7)
            o += sprintf(o, "e%d", (int)((r >> 20) % 40) - 20);
        *o = '\0';
        int ndig = 1 + (int)((r >> 30) % 18); /* within int64 */
        char *x = ext[i];
        for (int k = 0; k < ndig; k++) {
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            *x++ = (char)('0' + (k == 0 && ndig > 1 ? 1 + (rng >> 40) % 9 : (rng >> 40) % 10));
        }
        *x = '\0';
        static const char *const sep[] = {",", " ,", "\n,", "\t,", "\r\n,"};
        char ev[256];
        snprintf(ev, sizeof(ev), "%s{\"ts\":%s%s\"dur\":%s}%s\"args\":{\"External id\":%s}}",
                 i ? "," : "", ts[i], sep[(r >> 35) % 5], ts[i], "", ext[i]);
        /* the args object goes inside the event: rewrite "}args" as ",args" */
        char *close = strstr(ev, "}\"args\"");
        assert_non_null(close);
        *close = ',';
        assert_int_equal(mp_buf_append(&t, ev, strlen(ev)), 0);
    }
    assert_int_equal(mp_buf_putc(&t, ']'), 0);
    static const size_t chunks[] = {0, 4096, 251};
    for (size_t ci = 0; ci < sizeof(chunks) / sizeof(chunks[0]); ci++) {
        struct coll c;
        coll_init(&c);
        struct mp_diag d;
        int rc = parse_mem(t.data, t.len, chunks[ci], &c, NULL, &d);
        if (rc)
            fail_msg("chunk %zu: rc %d (%s)", chunks[ci], rc, d.msg);
        assert_int_equal(c.n, N);
        for (size_t i = 0; i < N; i++) {
            double want = strtod(ts[i], NULL);
            if (!same_bits(c.v[i].ts, want) || !same_bits(c.v[i].dur, want))
                fail_msg("chunk %zu, %s: got ts %.17g dur %.17g, want %.17g", chunks[ci], ts[i],
                         c.v[i].ts, c.v[i].dur, want);
            if (!(c.v[i].flags & MP_EV_EXTID) || c.v[i].ext != strtoll(ext[i], NULL, 10))
                fail_msg("chunk %zu, External id %s: got %lld", chunks[ci], ext[i],
                         (long long)c.v[i].ext);
        }
        coll_fini(&c);
    }
    free(ts);
    free(ext);
    mp_buf_fini(&t);
}

/* "External id" / "correlation" / "id" are integers, also as integral floats. */
void test_integer_fields(void **state)
{
    (void)state;

    static const struct {
        const char *text;
        bool flag;
        int64_t value;
    } cases[] = {
        {"7", true, 7},
        {"7.0", true, 7},
        {"1e2", true, 100},
        {"0.5e1", true, 5},
        {"-3", true, -3},
        {"-0", true, 0},
        {"123456789012345678", true, 123456789012345678},
        {"9223372036854775807", true, INT64_MAX},
        {"1.5", false, 0},
        {"\"5\"", false, 0},
        {"null", false, 0},
        {"[5]", false, 0},
        {"1e19", false, 0},
        {"12345678901234567890", false, 0},
        /* 19 digits that overflow int64 */
        {"9223372036854775808", false, 0},
        {"9999999999999999999", false, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char t[256];
        snprintf(t, sizeof(t), "[{\"id\":%s,\"args\":{\"External id\":%s,\"correlation\":%s}}]",
                 cases[i].text, cases[i].text, cases[i].text);
        struct coll c;
        coll_init(&c);
        struct mp_diag d;
        int rc = parse_mem(t, strlen(t), 0, &c, NULL, &d);
        if (rc)
            fail_msg("%s: rc %d (%s)", cases[i].text, rc, d.msg);
        assert_int_equal(c.n, 1);
        const struct cev *e = &c.v[0];
        bool ext = (e->flags & MP_EV_EXTID) != 0, corr = (e->flags & MP_EV_CORR) != 0,
             id = (e->flags & MP_EV_ID) != 0;
        if (ext != cases[i].flag || corr != cases[i].flag || id != cases[i].flag)
            fail_msg("%s: flags ext=%d corr=%d id=%d, want %d (values %lld %lld %lld)",
                     cases[i].text, ext, corr, id, cases[i].flag, (long long)e->ext,
                     (long long)e->corr, (long long)e->id);
        if (cases[i].flag &&
            (e->ext != cases[i].value || e->corr != cases[i].value || e->id != cases[i].value))
            fail_msg("%s: got %lld %lld %lld, want %lld", cases[i].text, (long long)e->ext,
                     (long long)e->corr, (long long)e->id, (long long)cases[i].value);
        coll_fini(&c);
    }
}

/* INT64_MIN is a valid int64 and must not trip signed overflow. */
void test_integer_int64_min(void **state)
{
    (void)state;
    const char *t = "[{\"args\":{\"External id\":-9223372036854775808}}]";
    struct coll c;
    coll_init(&c);
    struct mp_diag d;
    assert_int_equal(parse_mem(t, strlen(t), 0, &c, NULL, &d), 0);
    assert_int_equal(c.n, 1);
    assert_true(c.v[0].flags & MP_EV_EXTID);
    assert_true(c.v[0].ext == INT64_MIN);
    coll_fini(&c);
    int64_t v = 0;
    struct mp_strview raw = {"-9223372036854775808", 20};
    assert_int_equal(mp_trace_json_int(raw, &v), 0);
    assert_true(v == INT64_MIN);
}
