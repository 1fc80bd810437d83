/* The streaming parser on well-formed inputs: both top-level forms,
 * duplicate keys, string escapes, cancelling, progress, the event size limit,
 * nesting. */
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

void test_object_form(void **state)
{
    (void)state;
    struct coll c;
    coll_init(&c);
    struct mp_trace_parse_stats st;
    struct mp_diag d;
    int rc = parse_mem(small_trace, strlen(small_trace), 0, &c, &st, &d);
    if (rc)
        fail_msg("parse failed: %d %s at %lld", rc, d.msg, d.offset);
    check_small_trace(&c);
    assert_int_equal(st.events, 5);
    assert_int_equal(st.bytes, strlen(small_trace));
    assert_false(st.bare_list);
    coll_fini(&c);
}

void test_bare_list(void **state)
{
    (void)state;
    const char *t = " [ {\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2},\n{\"name\":\"b\"} ] \n";
    struct coll c;
    coll_init(&c);
    struct mp_trace_parse_stats st;
    struct mp_diag d;
    assert_int_equal(parse_mem(t, strlen(t), 0, &c, &st, &d), 0);
    assert_true(st.bare_list);
    assert_int_equal(st.events, 2);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.v[0].name, "a");
    assert_int_equal(c.v[0].offset, 3);
    assert_string_equal(c.v[1].name, "b");
    assert_int_equal(c.v[1].ph, 0);
    assert_null(c.meta.data && c.meta.len ? c.meta.data : NULL);
    coll_fini(&c);

    /* empty forms */
    coll_init(&c);
    assert_int_equal(parse_mem("[]", 2, 0, &c, &st, &d), 0);
    assert_int_equal(c.n, 0);
    assert_true(st.bare_list);
    assert_int_equal(parse_mem("{\"traceEvents\":[]}", 18, 0, &c, &st, &d), 0);
    assert_int_equal(c.n, 0);
    assert_false(st.bare_list);
    coll_fini(&c);
}

void test_duplicate_keys_last_wins(void **state)
{
    (void)state;
    /* Python's json keeps the last value of a repeated key */
    const char *t = "[{\"name\":\"first\",\"ph\":\"B\",\"name\":\"second\",\"ph\":\"E\","
                    "\"args\":{\"External id\":5,\"External id\":6,\"correlation\":1,"
                    "\"correlation\":\"x\"}}]";
    struct coll c;
    coll_init(&c);
    struct mp_diag d;
    assert_int_equal(parse_mem(t, strlen(t), 0, &c, NULL, &d), 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.v[0].name, "second");
    assert_int_equal(c.v[0].ph, 'E');
    assert_true(c.v[0].flags & MP_EV_EXTID);
    assert_int_equal(c.v[0].ext, 6);
    assert_false(c.v[0].flags & MP_EV_CORR); /* the last correlation is a string */
    coll_fini(&c);
}

void test_string_escapes(void **state)
{
    (void)state;

    static const struct {
        const char *json; /* the JSON string literal inside "name" */
        const char *want;
        size_t want_n;
    } cases[] = {
        {"\"plain\"", "plain", 5},
        {"\"\"", "", 0},
        {"\"a\\\"b\"", "a\"b", 3},
        {"\"\\\\\"", "\\", 1},
        {"\"\\/\\b\\f\\n\\r\\t\"", "/\b\f\n\r\t", 6},
        {"\"\\u00e9\\u00E9\"", "\xc3\xa9\xc3\xa9", 4},
        {"\"\\u0041\\u20ac\"", "A\xe2\x82\xac", 4},
        {"\"x\\ud83d\\ude00y\"", "x\xf0\x9f\x98\x80y", 6},
        {"\"\\u0000z\"", "\0z", 2},
        {"\"caf\xc3\xa9\"", "caf\xc3\xa9", 5}, /* raw UTF-8 passes through */
        /* lone surrogates are accepted by Python's json; encoded as 3 bytes */
        {"\"\\ud800x\"", "\xed\xa0\x80x", 4},
        {"\"\\udc00\"", "\xed\xb0\x80", 3},
        {"\"\\ud800\"", "\xed\xa0\x80", 3},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char t[256];
        snprintf(t, sizeof(t), "[{\"name\":%s,\"cat\":%s}]", cases[i].json, cases[i].json);
        for (size_t chunk = 0; chunk <= 3; chunk++) {
            struct coll c;
            coll_init(&c);
            struct mp_diag d;
            int rc = parse_mem(t, strlen(t), chunk, &c, NULL, &d);
            if (rc)
                fail_msg("%s (chunk %zu): rc %d (%s) at %lld", cases[i].json, chunk, rc, d.msg,
                         d.offset);
            assert_int_equal(c.n, 1);
            assert_int_equal(c.v[0].name_n, cases[i].want_n);
            assert_memory_equal(c.v[0].name, cases[i].want, cases[i].want_n);
            assert_memory_equal(c.v[0].cat, cases[i].want, cases[i].want_n);
            coll_fini(&c);
        }
    }
}

void test_cancel_and_callbacks(void **state)
{
    (void)state;
    struct coll c;
    coll_init(&c);
    c.stop_after = 2;
    struct mp_diag d;
    int rc = parse_mem(small_trace, strlen(small_trace), 0, &c, NULL, &d);
    assert_int_equal(rc, MP_ECANCEL);
    assert_int_equal(c.n, 2);
    coll_fini(&c);

    /* validate only: no callbacks at all */
    struct mp_trace_parse_stats st;
    assert_int_equal(parse_mem(small_trace, strlen(small_trace), 0, NULL, &st, &d), 0);
    assert_int_equal(st.events, 5);
}

struct prog {
    int calls;
    uint64_t last_bytes;
    void *user_seen;
};

static void prog_cb(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user)
{
    struct prog *p = user;
    (void)raw_pos;
    (void)raw_size;
    assert_true(bytes >= p->last_bytes);
    p->calls++;
    p->last_bytes = bytes;
    p->user_seen = user;
}

void test_progress(void **state)
{
    (void)state;
    struct prog p = {0};
    struct mp_io_reader *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    size_t len = strlen(small_trace);
    assert_int_equal(mp_io_open_mem(small_trace, len, "mem", &r, &d), 0);
    struct mp_trace_parse_opts o = {0};
    o.on_progress = prog_cb;
    o.user = &p;
    o.chunk_bytes = 64;
    assert_int_equal(mp_trace_parse(r, &o, NULL, &d), 0);
    mp_io_close(r);
    assert_true(p.calls >= (int)(len / 64));
    assert_int_equal(p.last_bytes, len);
    assert_ptr_equal(p.user_seen, &p);
}

void test_max_event_bytes(void **state)
{
    (void)state;
    size_t big = 100000;
    char *t = malloc(big + 64);
    assert_non_null(t);
    size_t n = (size_t)sprintf(t, "[{\"ph\":\"X\"},{\"name\":\"");
    memset(t + n, 'a', big);
    n += big;
    n += (size_t)sprintf(t + n, "\"}]");
    struct mp_io_reader *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open_mem(t, n, "mem", &r, &d), 0);
    struct mp_trace_parse_opts o = {0};
    o.max_event_bytes = 1000;
    o.chunk_bytes = 64;
    struct mp_trace_parse_stats st;
    int rc = mp_trace_parse(r, &o, &st, &d);
    mp_io_close(r);
    assert_true(rc < 0);
    assert_int_equal(d.code, rc);
    /* within the limit the same input parses */
    struct coll c;
    coll_init(&c);
    assert_int_equal(parse_mem(t, n, 64, &c, &st, &d), 0);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.v[1].name_n, big);
    coll_fini(&c);
    free(t);
}

/* Deeply nested values inside limits parse; absurd nesting fails cleanly. */
void test_nesting(void **state)
{
    (void)state;
    size_t depth = 200;
    char *t = malloc(2 * depth + 64);
    assert_non_null(t);
    size_t n = (size_t)sprintf(t, "[{\"args\":{\"x\":");
    memset(t + n, '[', depth);
    n += depth;
    memset(t + n, ']', depth);
    n += depth;
    n += (size_t)sprintf(t + n, "}}]");
    struct coll c;
    coll_init(&c);
    struct mp_diag d;
    assert_int_equal(parse_mem(t, n, 0, &c, NULL, &d), 0);
    assert_int_equal(c.n, 1);
    coll_fini(&c);
    free(t);

    depth = 200000;
    t = malloc(depth + 64);
    assert_non_null(t);
    n = (size_t)sprintf(t, "{\"traceEvents\":[{\"args\":{\"x\":");
    memset(t + n, '[', depth);
    n += depth;
    for (size_t chunk = 0; chunk <= 7; chunk += 7) {
        int rc = parse_mem(t, n, chunk, NULL, NULL, &d);
        assert_int_equal(rc, MP_EPARSE);
        assert_true(d.offset > 20 && d.offset < (long long)n);
    }
    /* the same in a top-level metadata value */
    n = (size_t)sprintf(t, "{\"meta\":");
    memset(t + n, '[', depth);
    n += depth;
    assert_int_equal(parse_mem(t, n, 0, NULL, NULL, &d), MP_EPARSE);
    free(t);
}
