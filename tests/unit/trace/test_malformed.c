/* Malformed inputs: the error code and its position, and damaged gzip. */
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

static const struct mp_trace_parse_opts no_opts;

#define CP (1 << 0) /* MP_EPARSE allowed */

#define CT (1 << 1) /* MP_ETRUNC allowed */

#define END 100000 /* "up to the end of the input" */

struct bad {
    const char *text;
    size_t len;         /* 0: strlen(text) */
    int codes;          /* CP / CT */
    const char *marker; /* offsets are relative to its first occurrence; NULL: absolute */
    long lo, hi;        /* allowed diag.offset range (hi END = input length) */
};

static const struct bad bad_inputs[] = {
    {"", 0, CP, NULL, 0, 0},
    {"  \n\t  \r\n", 0, CP, NULL, 0, END},
    {"{", 0, CT, NULL, 0, END},
    {"[", 0, CT, NULL, 0, END},
    {"{\"traceEvents\": [{\"ph\":\"X\"", 0, CT, NULL, 16, END},
    {"{\"traceEvents\": [{\"ph\":\"X\"}]", 0, CT, NULL, 16, END},
    {"{\"traceEvents\": [{\"ph\":\"X\"}],", 0, CT, NULL, 16, END},
    {"[{\"ph\":\"X\"}", 0, CT, NULL, 0, END},
    {"[{\"ph\":\"X\"},", 0, CT, NULL, 0, END},
    {"{\"traceEvents\": [{\"name\":\"\\ud83d\\ude0", 0, CT, NULL, 16, END},
    {"{\"traceEvents\": [{\"ph\":\"X\"},]}", 0, CP, ",]", 0, 1},
    {"{\"traceEvents\": [{\"ph\":\"X\",}]}", 0, CP, ",}", 0, 1},
    {"{\"traceEvents\": [{\"args\":{\"a\":1,}}]}", 0, CP, ",}", 0, 1},
    {"{\"traceEvents\": [{\"args\":[1,]}]}", 0, CP, ",]", 0, 1},
    {"{\"traceEvents\": [{\"ph\":\"X\"}], }", 0, CP, ", }", 0, 2},
    {"{\"traceEvents\": [{\"name\":\"abc}]}", 0, CP | CT, "\"abc", 0, END},
    {"{\"traceEvents\": [{\"name\":\"a\\qb\"}]}", 0, CP, "\\q", 0, 1},
    {"{\"traceEvents\": [{\"name\":\"a\\x\"}]}", 0, CP, "\\x", 0, 1},
    {"{\"traceEvents\": [{\"x\":\"\\u12\"}]}", 0, CP, "\\u12", 0, 4},
    {"{\"traceEvents\": [{\"x\":\"\\uzzzz\"}]}", 0, CP, "\\uzzzz", 0, 2},
    {"{\"traceEvents\": [{\"name\":\"a\x01"
     "b\"}]}",
     0, CP, "\x01", 0, 0},
    {"{\"traceEvents\": [{\"name\":\"a\nb\"}]}", 0, CP, "\nb", 0, 0},
    {"{\"traceEvents\": [{\"name\":\"a\0b\"}]}", 33, CP, NULL, 27, 27},
    {"{\"traceEvents\": 5}", 0, CP, "5", 0, 0},
    {"{\"traceEvents\": {}}", 0, CP, "{}", 0, 0},
    {"{\"traceEvents\": [1]}", 0, CP, "1]", 0, 0},
    {"{\"traceEvents\": [[]]}", 0, CP, "[]]", 0, 0},
    {"[{\"ph\":\"X\"}, \"s\"]", 0, CP, "\"s", 0, 0},
    {"[null]", 0, CP, "null", 0, 0},
    {"{\"traceEvents\": []} x", 0, CP, " x", 1, 1},
    {"{\"traceEvents\": [{\"ph\":\"X\"}]}}", 0, CP, "}}", 1, 1},
    {"[{}] {\"traceEvents\": []}", 0, CP, " {", 1, 1},
    {"{\"traceEvents\": [{\"ts\":1.}]}", 0, CP, "1.", 0, 2},
    {"{\"traceEvents\": [{\"ts\":-}]}", 0, CP, "-}", 0, 1},
    {"{\"traceEvents\": [{\"ts\":01}]}", 0, CP, "01", 0, 1},
    {"{\"traceEvents\": [{\"ts\":1e}]}", 0, CP, "1e", 0, 2},
    {"{\"traceEvents\": [{\"ts\":1e+}]}", 0, CP, "1e+", 0, 3},
    {"{\"traceEvents\": [{\"ts\":.5}]}", 0, CP, ".5", 0, 0},
    {"{\"traceEvents\": [{\"ts\":+1}]}", 0, CP, "+1", 0, 0},
    {"{\"traceEvents\": [{\"dur\":1.5.2}]}", 0, CP, "1.5.2", 0, 3},
    {"{\"traceEvents\": [{\"x\":-}]}", 0, CP, "-}", 0, 1},
    {"{\"traceEvents\": [{\"x\":1.}]}", 0, CP, "1.", 0, 2},
    {"{\"traceEvents\": [{\"ph\":\"X\"} {\"ph\":\"X\"}]}", 0, CP, "} {", 1, 2},
    {"{\"traceEvents\": [{\"ph\" \"X\"}]}", 0, CP, " \"X", 0, 1},
    {"{\"traceEvents\": [{ph:\"X\"}]}", 0, CP, "ph:", 0, 0},
    {"{\"traceEvents\": [{\"x\":tru}]}", 0, CP, "tru", 0, 3},
    {"{\"traceEvents\": [{\"x\":nul}]}", 0, CP, "nul", 0, 3},
    {"{\"traceEvents\": [{\"a\":NaX}]}", 0, CP, "NaX", 0, 2},
    {"{\"traceEvents\": [{\"a\":-Inf}]}", 0, CP, "-Inf", 0, 3},
    {"{\"traceEvents\": [{\"a\":[1 2]}]}", 0, CP, " 2", 0, 1},
    {"{\"traceEvents\": [{\"a\":{\"b\":1 \"c\":2}}]}", 0, CP, " \"c", 0, 1},
    {"{\"traceEvents\": [{\"ph\":\"X\"}] \"x\":1}", 0, CP, "] \"x", 1, 2},
    {"{\"a\" 1, \"traceEvents\": []}", 0, CP, " 1", 0, 1},
    {"{1: 2, \"traceEvents\": []}", 0, CP, "1:", 0, 0},
    {"true", 0, CP, NULL, 0, 0},
    {"\"traceEvents\"", 0, CP, NULL, 0, 0},
    {"5", 0, CP, NULL, 0, 0},
    {"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10", 20, CP, NULL, 0, 0},
};

/* 1-based line and column of offset in text (the column counts bytes). */
static void line_col(const char *text, size_t len, long long off, long *line, long *col)
{
    long ln = 1;
    long long last_nl = -1;
    for (long long i = 0; i < off && (size_t)i < len; i++)
        if (text[i] == '\n') {
            ln++;
            last_nl = i;
        }
    *line = ln;
    *col = (long)(off - last_nl);
}

void test_malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
        const struct bad *b = &bad_inputs[i];
        size_t len = b->len ? b->len : strlen(b->text);
        long base = 0;
        if (b->marker) {
            const char *m = strstr(b->text, b->marker);
            assert_non_null(m);
            base = (long)(m - b->text);
        }
        long lo = base + b->lo, hi = b->hi == END ? (long)len : base + b->hi;

        struct mp_diag d0, d;
        int rc0 = 0;
        static const size_t chunks[] = {0, 1, 2, 5};
        for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
            struct coll c;
            coll_init(&c);
            int rc = parse_mem(b->text, len, chunks[k], &c, NULL, &d);
            coll_fini(&c);
            bool ok = (rc == MP_EPARSE && (b->codes & CP)) || (rc == MP_ETRUNC && (b->codes & CT));
            if (!ok)
                fail_msg("bad input #%zu %.40s (chunk %zu): rc %d (%s), want %s%s", i, b->text,
                         chunks[k], rc, d.msg, (b->codes & CP) ? "EPARSE " : "",
                         (b->codes & CT) ? "ETRUNC" : "");
            if (d.code != rc || !d.msg[0])
                fail_msg("bad input #%zu: diag code %d msg '%s'", i, d.code, d.msg);
            if (d.offset < lo || d.offset > hi)
                fail_msg("bad input #%zu %.40s (chunk %zu): offset %lld not in [%ld, %ld] (%s)", i,
                         b->text, chunks[k], d.offset, lo, hi, d.msg);
            if (k == 0) {
                d0 = d;
                rc0 = rc;
            } else if (rc != rc0 || d.offset != d0.offset) {
                fail_msg("bad input #%zu %.40s: chunk %zu gives rc %d offset %lld, default "
                         "chunk rc %d offset %lld",
                         i, b->text, chunks[k], rc, d.offset, rc0, d0.offset);
            }
        }

        /* from a file: line and column too */
        char rel[64];
        snprintf(rel, sizeof(rel), "bad/%zu.json", i);
        char *path = write_tmp(rel, b->text, len);
        mp_diag_clear(&d);
        int rc = mp_trace_parse_file(path, &no_opts, NULL, &d);
        if (rc != rc0 || d.offset != d0.offset)
            fail_msg("bad input #%zu from file: rc %d offset %lld, from memory rc %d offset %lld",
                     i, rc, d.offset, rc0, d0.offset);
        long want_line, want_col;
        line_col(b->text, len, d.offset, &want_line, &want_col);
        if (d.line != want_line || d.col != want_col)
            fail_msg("bad input #%zu: line:col %ld:%ld, want %ld:%ld (offset %lld)", i, d.line,
                     d.col, want_line, want_col, d.offset);
        if (strstr(d.file, rel) == NULL)
            fail_msg("bad input #%zu: diag file '%s'", i, d.file);
        free(path);
    }
}

/* A gzip file cut in the middle, a corrupted one, and bare gzip magic. */
void test_gzip_damage(void **state)
{
    (void)state;
    /* a valid trace of ~30 KB */
    struct mp_buf t;
    mp_buf_init(&t, 0);
    assert_int_equal(mp_buf_puts(&t, "{\"traceEvents\": [\n"), 0);
    for (int i = 0; i < 300; i++)
        assert_int_equal(mp_buf_printf(&t,
                                       "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\","
                                       "\"ts\":%d.5,\"dur\":%d,\"args\":{\"External id\":%d}}\n",
                                       i ? "," : "", i % 17, i * 10, i % 5, i),
                         0);
    assert_int_equal(mp_buf_puts(&t, "]}\n"), 0);
    size_t zlen = 0;
    unsigned char *z = gzip_mem(t.data, t.len, &zlen);
    assert_true(zlen > 200);

    /* intact: parses, same as the plain text */
    char *full = write_tmp("gz/full.json.gz", z, zlen);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_trace_parse_stats st;
    assert_int_equal(mp_trace_parse_file(full, &no_opts, &st, &d), 0);
    assert_int_equal(st.events, 300);
    assert_int_equal(st.bytes, t.len);
    free(full);

    /* truncated in the middle */
    char *cut = write_tmp("gz/cut.json.gz", z, zlen / 2);
    mp_diag_clear(&d);
    int rc = mp_trace_parse_file(cut, &no_opts, &st, &d);
    if (rc != MP_ETRUNC && rc != MP_EPARSE)
        fail_msg("truncated gzip: rc %d (%s)", rc, d.msg);
    if (d.offset < 0 || d.offset > (long long)t.len)
        fail_msg("truncated gzip: offset %lld not in [0, %zu] (%s)", d.offset, t.len, d.msg);
    if (d.line < 1 || d.col < 1)
        fail_msg("truncated gzip: line/col %ld:%ld not set (offset %lld, %s)", d.line, d.col,
                 d.offset, d.msg);
    free(cut);

    /* and from memory */
    rc = parse_mem(z, zlen / 2, 0, NULL, NULL, &d);
    assert_true(rc == MP_ETRUNC || rc == MP_EPARSE);
    assert_true(d.offset >= 0 && d.offset <= (long long)t.len);

    /* corrupted deflate data or CRC */
    unsigned char *bad = malloc(zlen);
    assert_non_null(bad);
    memcpy(bad, z, zlen);
    for (size_t i = zlen / 3; i < zlen / 3 + 8; i++)
        bad[i] ^= 0x5a;
    rc = parse_mem(bad, zlen, 0, NULL, NULL, &d);
    assert_true(rc == MP_EPARSE || rc == MP_ETRUNC);
    memcpy(bad, z, zlen);
    bad[zlen - 6] ^= 0xff; /* CRC32 of the member */
    rc = parse_mem(bad, zlen, 0, NULL, NULL, &d);
    if (rc != MP_EPARSE && rc != MP_ETRUNC)
        fail_msg("gzip with a bad CRC: rc %d", rc);
    free(bad);

    /* only the gzip magic */
    rc = parse_mem("\x1f\x8b", 2, 0, NULL, NULL, &d);
    assert_true(rc == MP_EPARSE || rc == MP_ETRUNC);
    char *magic = write_tmp("gz/magic.json.gz", "\x1f\x8b", 2);
    mp_diag_clear(&d);
    rc = mp_trace_parse_file(magic, &no_opts, NULL, &d);
    assert_true(rc == MP_EPARSE || rc == MP_ETRUNC);
    assert_true(d.offset >= 0);
    free(magic);

    /* an empty file */
    char *empty = write_tmp("gz/empty.json", "", 0);
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_parse_file(empty, &no_opts, NULL, &d), MP_EPARSE);
    assert_int_equal(d.offset, 0);
    assert_int_equal(d.line, 1);
    assert_int_equal(d.col, 1);
    free(empty);

    /* a missing file is an I/O error, not a parse error */
    char missing[4200];
    snprintf(missing, sizeof(missing), "%s/gz/none.json", tmp_root);
    mp_diag_clear(&d);
    rc = mp_trace_parse_file(missing, &no_opts, NULL, &d);
    assert_true(rc != 0 && rc != MP_EPARSE && rc != MP_ETRUNC);

    free(z);
    mp_buf_fini(&t);
}
