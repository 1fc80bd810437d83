/* Chunk boundaries: every split of a small trace, a byte-order mark, and a
 * real trace at several chunk sizes give the same events. */
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

/* Every split position of the small trace gives the same events. */
void test_every_split(void **state)
{
    (void)state;
    size_t len = strlen(small_trace);
    struct sum base = {0};
    struct mp_diag d;
    struct mp_trace_parse_stats st;
    assert_int_equal(parse_sum(small_trace, len, 0, &base, &st, &d), 0);
    assert_int_equal(base.n, 5);
    for (size_t chunk = 1; chunk <= len; chunk++) {
        struct sum s = {0};
        int rc = parse_sum(small_trace, len, chunk, &s, &st, &d);
        if (rc || s.n != base.n || s.h != base.h)
            fail_msg("chunk %zu: rc %d (%s), %llu events, hash %llx vs %llx", chunk, rc, d.msg,
                     (unsigned long long)s.n, (unsigned long long)s.h, (unsigned long long)base.h);
        assert_int_equal(st.bytes, len);
    }
    /* and the full field check at the smallest chunk */
    struct coll c;
    coll_init(&c);
    assert_int_equal(parse_mem(small_trace, len, 1, &c, NULL, &d), 0);
    check_small_trace(&c);
    coll_fini(&c);
}

/* A UTF-8 byte order mark is skipped (or rejected) the same way whatever
 * the read size. */
void test_bom(void **state)
{
    (void)state;
    size_t len = strlen(small_trace) + 3;
    char *t = malloc(len + 1);
    assert_non_null(t);
    static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
    memcpy(t, bom, sizeof(bom));
    memcpy(t + 3, small_trace, len - 3);
    struct sum base = {0};
    struct mp_diag d;
    int rc0 = parse_sum(t, len, 0, &base, NULL, &d);
    long long off0 = d.offset;
    for (size_t chunk = 1; chunk <= 8; chunk++) {
        struct sum s = {0};
        int rc = parse_sum(t, len, chunk, &s, NULL, &d);
        if (rc != rc0 || s.n != base.n || s.h != base.h || (rc && d.offset != off0))
            fail_msg("BOM + trace, chunk %zu: rc %d (%s) offset %lld, %llu events; default "
                     "chunk: rc %d offset %lld, %llu events",
                     chunk, rc, d.msg, d.offset, (unsigned long long)s.n, rc0, off0,
                     (unsigned long long)base.n);
    }
    free(t);
}

/* A real trace: same events and checksum at any chunk size. */
void test_chunks_real_trace(void **state)
{
    (void)state;
    char pb[4096];
    const char *path = shared_trace(pb, sizeof(pb), TP2_RANK0);
    if (!path) {
        skip();
        return;
    }
    size_t len = 0;
    char *data = gunzip_file(path, &len);
    assert_non_null(data);
    assert_true(len > 1000000);

    struct sum base = {0};
    base.want_offset_of = 1500;
    struct mp_diag d;
    struct mp_trace_parse_stats st;
    int rc = parse_sum(data, len, 0, &base, &st, &d);
    if (rc)
        fail_msg("rc %d %s at %lld", rc, d.msg, d.offset);
    /* Python: len(json.load(...)["traceEvents"]) == 43324 */
    assert_int_equal(base.n, 43324);
    assert_int_equal(st.events, 43324);
    assert_int_equal(st.bytes, len);

    static const size_t big_chunks[] = {7, 64, 4093, 1 << 20};
    for (size_t i = 0; i < sizeof(big_chunks) / sizeof(big_chunks[0]); i++) {
        struct sum s = {0};
        s.want_offset_of = UINT64_MAX;
        rc = parse_sum(data, len, big_chunks[i], &s, &st, &d);
        if (rc || s.n != base.n || s.h != base.h)
            fail_msg("chunk %zu: rc %d (%s), %llu events, hash %llx vs %llx", big_chunks[i], rc,
                     d.msg, (unsigned long long)s.n, (unsigned long long)s.h,
                     (unsigned long long)base.h);
    }

    /* Tiny chunks re-scan a unit on every read, so use the first 1500 events
     * (closed into a valid trace) for chunk sizes 1, 2, 3. */
    uint64_t cut = base.offset_found;
    assert_true(cut > 0 && cut < len);
    while (cut > 0 && data[cut] != ',')
        cut--;
    assert_true(cut > 0);
    size_t slen = (size_t)cut;
    char *slice = malloc(slen + 8);
    assert_non_null(slice);
    memcpy(slice, data, slen);
    static const char close[4] = {'\n', ']', '}', '\n'};
    memcpy(slice + slen, close, sizeof(close));
    slen += sizeof(close);
    struct sum sb = {0};
    sb.want_offset_of = UINT64_MAX;
    assert_int_equal(parse_sum(slice, slen, 0, &sb, &st, &d), 0);
    assert_int_equal(sb.n, 1500);
    for (size_t chunk = 1; chunk <= 3; chunk++) {
        struct sum s = {0};
        s.want_offset_of = UINT64_MAX;
        rc = parse_sum(slice, slen, chunk, &s, &st, &d);
        if (rc || s.n != sb.n || s.h != sb.h)
            fail_msg("slice chunk %zu: rc %d (%s), %llu events", chunk, rc, d.msg,
                     (unsigned long long)s.n);
    }
    free(slice);

    /* the same file through mp_trace_parse_file (gzip reader) */
    struct sum sf = {0};
    sf.want_offset_of = UINT64_MAX;
    sf.h = 1469598103934665603ull;
    struct mp_trace_parse_opts o = {0};
    o.on_event = sum_cb;
    o.user = &sf;
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_parse_file(path, &o, &st, &d), 0);
    assert_int_equal(sf.n, base.n);
    assert_true(sf.h == base.h);
    free(data);
}
