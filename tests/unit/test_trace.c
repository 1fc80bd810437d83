/* Unit tests of the trace module (include/magpie/trace.h): the streaming
 * Chrome-trace parser (fields, escapes, numbers, both top-level forms,
 * metadata, chunk-boundary independence on a real trace and on every split
 * of a small one, malformed inputs and their positions), the raw-JSON
 * helpers, rank discovery on directory layouts, the event store, and the
 * graph-capture merge. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include <magpie/base.h>
#include <magpie/capture.h>
#include <magpie/io.h>
#include <magpie/trace.h>
#include <magpie/tree.h>

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static char *xstrndup(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    assert_non_null(r);
    if (n)
        memcpy(r, s, n);
    r[n] = 0;
    return r;
}

/* A copy of one delivered event. */
struct cev {
    uint64_t index, offset;
    uint32_t flags;
    char ph;
    char *name, *cat, *pid_text, *tid_text, *args, *dims;
    size_t name_n;
    double ts, dur;
    int64_t pid, tid, id, ext, corr;
};

struct coll {
    struct cev *v;
    size_t n, cap;
    struct mp_buf meta; /* "key=raw\n" per top-level key */
    size_t stop_after;  /* return MP_ECANCEL after this many events (0 = never) */
};

static int collect_cb(const struct mp_trace_event *ev, void *user)
{
    struct coll *c = user;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->v = realloc(c->v, c->cap * sizeof(*c->v));
        assert_non_null(c->v);
    }
    struct cev *e = &c->v[c->n++];
    e->index = ev->index;
    e->offset = ev->offset;
    e->flags = ev->flags;
    e->ph = ev->ph;
    e->name = xstrndup(ev->name.p, ev->name.n);
    e->name_n = ev->name.n;
    e->cat = xstrndup(ev->cat.p, ev->cat.n);
    e->pid_text = xstrndup(ev->pid_text.p, ev->pid_text.n);
    e->tid_text = xstrndup(ev->tid_text.p, ev->tid_text.n);
    e->args = xstrndup(ev->args.p, ev->args.n);
    e->dims = xstrndup(ev->input_dims.p, ev->input_dims.n);
    e->ts = ev->ts;
    e->dur = ev->dur;
    e->pid = ev->pid;
    e->tid = ev->tid;
    e->id = ev->id;
    e->ext = ev->external_id;
    e->corr = ev->correlation;
    if (c->stop_after && c->n >= c->stop_after)
        return MP_ECANCEL;
    return 0;
}

static int meta_cb(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct coll *c = user;
    assert_int_equal(mp_buf_append(&c->meta, key.p, key.n), 0);
    assert_int_equal(mp_buf_putc(&c->meta, '='), 0);
    assert_int_equal(mp_buf_append(&c->meta, raw.p, raw.n), 0);
    assert_int_equal(mp_buf_putc(&c->meta, '\n'), 0);
    return 0;
}

static void coll_init(struct coll *c)
{
    memset(c, 0, sizeof(*c));
    mp_buf_init(&c->meta, 0);
}

static void coll_fini(struct coll *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].name);
        free(c->v[i].cat);
        free(c->v[i].pid_text);
        free(c->v[i].tid_text);
        free(c->v[i].args);
        free(c->v[i].dims);
    }
    free(c->v);
    mp_buf_fini(&c->meta);
    memset(c, 0, sizeof(*c));
}

/* Parses len bytes of text from memory into c. */
static int parse_mem(const void *text, size_t len, size_t chunk, struct coll *c,
                     struct mp_trace_parse_stats *st, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    mp_diag_clear(d);
    int rc = mp_io_open_mem(text, len, "mem", &r, d);
    assert_int_equal(rc, 0);
    struct mp_trace_parse_opts o = {0};
    o.on_event = c ? collect_cb : NULL;
    o.on_meta = c ? meta_cb : NULL;
    o.user = c;
    o.chunk_bytes = chunk;
    rc = mp_trace_parse(r, &o, st, d);
    mp_io_close(r);
    return rc;
}

/* Order-sensitive checksum over everything the parser delivers. */
struct sum {
    uint64_t h;
    uint64_t n;
    uint64_t want_offset_of; /* record the offset of this event index */
    uint64_t offset_found;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t mix_view(uint64_t h, struct mp_strview v)
{
    h = mix(h, &v.n, sizeof(v.n));
    return v.n ? mix(h, v.p, v.n) : h;
}

static int sum_cb(const struct mp_trace_event *ev, void *user)
{
    struct sum *s = user;
    uint64_t h = s->h;
    h = mix(h, &ev->index, sizeof(ev->index));
    h = mix(h, &ev->offset, sizeof(ev->offset));
    h = mix(h, &ev->flags, sizeof(ev->flags));
    h = mix(h, &ev->ph, 1);
    h = mix_view(h, ev->name);
    h = mix_view(h, ev->cat);
    h = mix(h, &ev->ts, sizeof(ev->ts));
    h = mix(h, &ev->dur, sizeof(ev->dur));
    if (ev->flags & MP_EV_EXTID)
        h = mix(h, &ev->external_id, sizeof(ev->external_id));
    if (ev->flags & MP_EV_CORR)
        h = mix(h, &ev->correlation, sizeof(ev->correlation));
    if (ev->flags & MP_EV_ID)
        h = mix(h, &ev->id, sizeof(ev->id));
    h = mix_view(h, ev->pid_text);
    h = mix_view(h, ev->tid_text);
    h = mix_view(h, ev->args);
    h = mix_view(h, ev->input_dims);
    if (ev->flags & MP_EV_STREAM)
        h = mix(h, &ev->stream, sizeof(ev->stream));
    for (unsigned i = 0; i < ev->n_id_members; i++)
        h = mix_view(h, ev->id_members[i]);
    h = mix_view(h, ev->raw);
    s->h = h;
    if (s->n == s->want_offset_of)
        s->offset_found = ev->offset;
    s->n++;
    return 0;
}

static int parse_sum(const void *text, size_t len, size_t chunk, struct sum *s,
                     struct mp_trace_parse_stats *st, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    mp_diag_clear(d);
    assert_int_equal(mp_io_open_mem(text, len, "mem", &r, d), 0);
    struct mp_trace_parse_opts o = {0};
    o.on_event = sum_cb;
    o.user = s;
    o.chunk_bytes = chunk;
    s->h = 1469598103934665603ull;
    s->n = 0;
    int rc = mp_trace_parse(r, &o, st, d);
    mp_io_close(r);
    return rc;
}

/* ---- temp files ---- */
static char tmp_root[256];

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup_tmp(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmp_root, sizeof(tmp_root), "%s/mp_test_trace.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmp_root))
        return -1;
    return 0;
}

static int teardown_tmp(void **state)
{
    (void)state;
    if (tmp_root[0])
        nftw(tmp_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* Writes data to tmp_root/rel (creating directories); returns the path. */
static char *write_tmp(const char *rel, const void *data, size_t len)
{
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/%s", tmp_root, rel);
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    *slash = 0;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_fs_mkdirs(dir, &d), 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* gzip-compresses data in memory (zlib, gzip wrapper). */
static unsigned char *gzip_mem(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

/* Inflates a .json.gz file into memory with zlib (not magpie's reader). */
static char *gunzip_file(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = (size_t)1 << 24, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - n < ((size_t)1 << 20)) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        int got = gzread(f, buf + n, (unsigned)(cap - n));
        assert_true(got >= 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(f);
    *len = n;
    return buf;
}

static const char *shared_trace(char *buf, size_t len, const char *rel)
{
    const char *sh = getenv("MP_SHARED");
    if (!sh || !*sh)
        return NULL;
    snprintf(buf, len, "%s/data/traces/%s", sh, rel);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

static const struct mp_trace_parse_opts no_opts;

#define TP2_RANK0 "h200-tp2/torch_trace/tp2-rank-0.1796011317.pt.trace.json.gz"

/* ------------------------------------------------------------------ */
/* a small trace with every feature, used by several tests             */
/* ------------------------------------------------------------------ */
static const char small_trace[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", "
    "\"totalGlobalMem\": 150109880320}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 651, \"tid\": 652,"
    " \"ts\": 5154289800660.636, \"dur\": 2857.302,\n"
    "   \"args\": {\"External id\": 1, \"Input Dims\": [[8, 512], []], \"Concrete Inputs\": "
    "[\"\", \"\\\"q\\\"\"]}},\n"
    "  {\"ph\":\"X\",\"cat\":\"ker\\u006eel\",\"name\":\"caf\\u00e9 \\\"k\\\" \\\\ \\/ "
    "\\ud83d\\ude00\\t\",\"pid\":0,\"tid\":7,\"ts\":1.5e3,\"dur\":2.5E-1,"
    "\"args\":{\"External id\":1.0,\"correlation\":-12,\"nested\":{\"a\":[1,{\"b\":null}],"
    "\"c\":true,\"d\":false,\"e\":-0.5e-3}}},\n"
    "  {\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\","
    "\"args\":{\"name\":\"Spans\"}},\n"
    "\t{\"ph\":\"s\",\"id\":42,\"pid\":1,\"tid\":2,\"ts\":0,\"cat\":\"ac2g\",\"name\":\"flow\","
    "\"bp\":\"e\"},\r\n"
    "  {}\n"
    " ],\n"
    " \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1790857026000000000}\n";

/* Offset of the n-th (0-based) occurrence of needle in hay. */
static uint64_t nth_offset(const char *hay, const char *needle, int n)
{
    const char *p = hay;
    for (int i = 0; i <= n; i++) {
        p = strstr(i ? p + 1 : p, needle);
        assert_non_null(p);
    }
    return (uint64_t)(p - hay);
}

static void check_small_trace(const struct coll *c)
{
    assert_int_equal(c->n, 5);
    for (size_t i = 0; i < c->n; i++)
        assert_int_equal(c->v[i].index, i);

    const struct cev *e = &c->v[0];
    assert_int_equal(e->offset, nth_offset(small_trace, "{\"ph\"", 0));
    assert_int_equal(e->ph, 'X');
    assert_string_equal(e->name, "aten::mm");
    assert_string_equal(e->cat, "cpu_op");
    assert_true(e->ts == 5154289800660.636);
    assert_true(e->dur == 2857.302);
    assert_int_equal(e->pid, 651);
    assert_int_equal(e->tid, 652);
    assert_string_equal(e->pid_text, "651");
    assert_string_equal(e->tid_text, "652");
    assert_int_equal(e->ext, 1);
    uint32_t want = MP_EV_NAME | MP_EV_CAT | MP_EV_TS | MP_EV_DUR | MP_EV_PID | MP_EV_TID |
                    MP_EV_ARGS | MP_EV_EXTID | MP_EV_DIMS;
    assert_int_equal(e->flags, want);
    assert_string_equal(e->dims, "[[8, 512], []]");
    assert_string_equal(e->args, "{\"External id\": 1, \"Input Dims\": [[8, 512], []], "
                                 "\"Concrete Inputs\": [\"\", \"\\\"q\\\"\"]}");

    e = &c->v[1];
    assert_int_equal(e->offset, nth_offset(small_trace, "{\"ph\"", 1));
    assert_string_equal(e->cat, "kernel");
    const char want_name[] = "caf\xc3\xa9 \"k\" \\ / \xf0\x9f\x98\x80\t";
    assert_int_equal(e->name_n, sizeof(want_name) - 1);
    assert_memory_equal(e->name, want_name, sizeof(want_name) - 1);
    assert_true(e->ts == 1500.0);
    assert_true(e->dur == 0.25);
    assert_int_equal(e->pid, 0);
    assert_int_equal(e->tid, 7);
    assert_int_equal(e->ext, 1); /* 1.0: an integral float */
    assert_int_equal(e->corr, -12);
    assert_true(e->flags & MP_EV_EXTID);
    assert_true(e->flags & MP_EV_CORR);
    assert_false(e->flags & MP_EV_DIMS);
    assert_false(e->flags & (MP_EV_PID_STR | MP_EV_TID_STR));
    assert_int_equal(e->dims[0], 0);

    e = &c->v[2];
    assert_int_equal(e->ph, 'M');
    assert_true(e->flags & MP_EV_PID);
    assert_true(e->flags & MP_EV_PID_STR);
    assert_true(e->flags & MP_EV_TID);
    assert_true(e->flags & MP_EV_TID_STR);
    assert_string_equal(e->pid_text, "Spans");
    assert_string_equal(e->tid_text, "PyTorch Profiler");
    assert_false(e->flags & (MP_EV_TS | MP_EV_DUR | MP_EV_CAT | MP_EV_EXTID));
    assert_string_equal(e->args, "{\"name\":\"Spans\"}");

    e = &c->v[3];
    assert_int_equal(e->ph, 's');
    assert_true(e->flags & MP_EV_ID);
    assert_int_equal(e->id, 42);
    assert_true(e->flags & MP_EV_TS);
    assert_true(e->ts == 0.0);
    assert_false(e->flags & (MP_EV_DUR | MP_EV_ARGS));
    assert_string_equal(e->name, "flow");

    e = &c->v[4];
    assert_int_equal(e->offset, (uint64_t)(strstr(small_trace, "{}") - small_trace));
    assert_int_equal(e->ph, 0);
    assert_int_equal(e->flags, 0);

    const char *meta = c->meta.data ? c->meta.data : "";
    assert_non_null(strstr(meta, "schemaVersion=1\n"));
    assert_non_null(strstr(meta, "deviceProperties=[{\"id\": 0, \"name\": \"NVIDIA H200\", "
                                 "\"totalGlobalMem\": 150109880320}]\n"));
    assert_non_null(strstr(meta, "displayTimeUnit=\"ms\"\n"));
    assert_non_null(strstr(meta, "baseTimeNanoseconds=1790857026000000000\n"));
    assert_null(strstr(meta, "traceEvents"));
}

/* ------------------------------------------------------------------ */
/* parser: well-formed inputs                                          */
/* ------------------------------------------------------------------ */

static void test_object_form(void **state)
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

static void test_bare_list(void **state)
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

static void test_duplicate_keys_last_wins(void **state)
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

/* Decoding of every number form must equal strtod's correctly rounded value. */
static void test_numbers(void **state)
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
        if (memcmp(&c.v[0].ts, &want, sizeof(want)) != 0 ||
            memcmp(&c.v[0].dur, &want, sizeof(want)) != 0)
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
static void test_numbers_random(void **state)
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
            if (memcmp(&c.v[i].ts, &want, sizeof(want)) != 0 ||
                memcmp(&c.v[i].dur, &want, sizeof(want)) != 0)
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
static void test_integer_fields(void **state)
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
static void test_integer_int64_min(void **state)
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

static void test_string_escapes(void **state)
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

static void test_cancel_and_callbacks(void **state)
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

static void test_progress(void **state)
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

static void test_max_event_bytes(void **state)
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
static void test_nesting(void **state)
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

/* ------------------------------------------------------------------ */
/* chunk boundaries                                                    */
/* ------------------------------------------------------------------ */

/* Every split position of the small trace gives the same events. */
static void test_every_split(void **state)
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
static void test_bom(void **state)
{
    (void)state;
    size_t len = strlen(small_trace) + 3;
    char *t = malloc(len + 1);
    assert_non_null(t);
    memcpy(t, "\xEF\xBB\xBF", 3);
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
static void test_chunks_real_trace(void **state)
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
    memcpy(slice + slen, "\n]}\n", 4);
    slen += 4;
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

/* ------------------------------------------------------------------ */
/* malformed inputs                                                    */
/* ------------------------------------------------------------------ */

#define CP (1 << 0) /* MP_EPARSE allowed */
#define CT (1 << 1) /* MP_ETRUNC allowed */
#define END 100000  /* "up to the end of the input" */

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

static void test_malformed(void **state)
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
static void test_gzip_damage(void **state)
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

/* ------------------------------------------------------------------ */
/* raw JSON helpers                                                    */
/* ------------------------------------------------------------------ */

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

static void test_json_find(void **state)
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

static void test_json_int_string(void **state)
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
static void test_json_pyrepr(void **state)
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

/* ------------------------------------------------------------------ */
/* rank discovery                                                      */
/* ------------------------------------------------------------------ */

static void touch(const char *rel)
{
    free(write_tmp(rel, "[]", 2));
}

/* Checks that the ranks found under tmp_root/dir are exactly ranks[i] with
 * paths ending in ends[i]. */
static void expect_ranks(const char *dir, size_t n, const int *ranks, const char *const *ends)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", tmp_root, dir);
    struct mp_trace_rank_list l;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_trace_find_ranks(path, &l, &d);
    if (rc)
        fail_msg("%s: rc %d (%s)", dir, rc, d.msg);
    bool ok = l.n == n;
    for (size_t i = 0; ok && i < n; i++) {
        size_t pl = strlen(l.files[i].path), el = strlen(ends[i]);
        ok = l.files[i].rank == ranks[i] && pl >= el &&
             strcmp(l.files[i].path + pl - el, ends[i]) == 0;
    }
    if (!ok) {
        char got[2048] = "";
        for (size_t i = 0; i < l.n; i++) {
            size_t k = strlen(got);
            snprintf(got + k, sizeof(got) - k, " (%d, %s)", l.files[i].rank, l.files[i].path);
        }
        fail_msg("%s: found %zu:%s", dir, l.n, got);
    }
    mp_trace_rank_list_fini(&l);
}

static void test_find_ranks(void **state)
{
    (void)state;
    /* vLLM names: rank from "-rank-N.", sorted numerically */
    touch("fr/flat/x-rank-1.123.pt.trace.json.gz");
    touch("fr/flat/x-rank-10.123.pt.trace.json.gz");
    touch("fr/flat/x-rank-0.123.pt.trace.json.gz");
    touch("fr/flat/x-rank-2.123.pt.trace.json.gz");
    touch("fr/flat/notes.txt");
    touch("fr/flat/benchmark_report.json");
    {
        const int r[] = {0, 1, 2, 10};
        const char *e[] = {"/x-rank-0.123.pt.trace.json.gz", "/x-rank-1.123.pt.trace.json.gz",
                           "/x-rank-2.123.pt.trace.json.gz", "/x-rank-10.123.pt.trace.json.gz"};
        expect_ranks("fr/flat", 4, r, e);
    }
    /* plain .pt.trace.json with ranks */
    touch("fr/plain/y-rank-1.9.pt.trace.json");
    touch("fr/plain/y-rank-0.9.pt.trace.json");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/y-rank-0.9.pt.trace.json", "/y-rank-1.9.pt.trace.json"};
        expect_ranks("fr/plain", 2, r, e);
    }
    /* .json.gz rank files win over .json ones */
    touch("fr/pref/x-rank-0.1.pt.trace.json.gz");
    touch("fr/pref/z-rank-5.1.pt.trace.json");
    {
        const int r[] = {0};
        const char *e[] = {"/x-rank-0.1.pt.trace.json.gz"};
        expect_ranks("fr/pref", 1, r, e);
    }
    /* per-rank directories */
    touch("fr/dirs/rank_1/b.json.gz");
    touch("fr/dirs/rank_0/a.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/rank_0/a.json.gz", "/rank_1/b.json.gz"};
        expect_ranks("fr/dirs", 2, r, e);
    }
    touch("fr/dirs2/rank-1/t.json.gz");
    touch("fr/dirs2/rank2/t.json.gz");
    touch("fr/dirs2/rank_0/t.json.gz");
    {
        const int r[] = {0, 1, 2};
        const char *e[] = {"/rank_0/t.json.gz", "/rank-1/t.json.gz", "/rank2/t.json.gz"};
        expect_ranks("fr/dirs2", 3, r, e);
    }
    /* Magpie's own test: rank 0 by name, rank 1 by directory */
    touch("fr/mixed/trace-rank-0.pt.trace.json.gz");
    touch("fr/mixed/rank_1/trace.pt.trace.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/trace-rank-0.pt.trace.json.gz", "/rank_1/trace.pt.trace.json.gz"};
        expect_ranks("fr/mixed", 2, r, e);
    }
    /* TP rank in a directory name */
    touch("fr/tp/pp0_dp0_tp1/t.json.gz");
    touch("fr/tp/pp0_dp0_tp0/t.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/pp0_dp0_tp0/t.json.gz", "/pp0_dp0_tp1/t.json.gz"};
        expect_ranks("fr/tp", 2, r, e);
    }
    /* a workspace holding torch_trace/ is descended into */
    touch("fr/ws/torch_trace/m-rank-1.1.pt.trace.json.gz");
    touch("fr/ws/torch_trace/m-rank-0.1.pt.trace.json.gz");
    touch("fr/ws/benchmark_report.json");
    touch("fr/ws/other.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/torch_trace/m-rank-0.1.pt.trace.json.gz",
                           "/torch_trace/m-rank-1.1.pt.trace.json.gz"};
        expect_ranks("fr/ws", 2, r, e);
        char path[4200];
        snprintf(path, sizeof(path), "%s/fr/ws/", tmp_root);
        struct mp_trace_rank_list l;
        struct mp_diag d;
        mp_diag_clear(&d);
        assert_int_equal(mp_trace_find_ranks(path, &l, &d), 0);
        assert_non_null(l.dir);
        size_t dl = strlen(l.dir);
        assert_true(dl >= 12 && strcmp(l.dir + dl - 12, "/torch_trace") == 0);
        mp_trace_rank_list_fini(&l);
    }
    /* capture_traces/ is ignored while anything else exists */
    touch("fr/cap/sglang_decode.json.gz");
    touch("fr/cap/capture_traces/bs_32_rank0.json.gz");
    touch("fr/cap/capture_traces/graph_capture_rank_0.1.pt.trace.json.gz");
    {
        const int r[] = {0};
        const char *e[] = {"/cap/sglang_decode.json.gz"};
        expect_ranks("fr/cap", 1, r, e);
    }
    touch("fr/caponly/capture_traces/graph-rank-0.1.pt.trace.json.gz");
    {
        const int r[] = {0};
        const char *e[] = {"/capture_traces/graph-rank-0.1.pt.trace.json.gz"};
        expect_ranks("fr/caponly", 1, r, e);
    }
    /* fallback: every *.json.gz, then every *.json, enumerated */
    touch("fr/fb/b.json.gz");
    touch("fr/fb/a.json.gz");
    touch("fr/fb/c.json");
    touch("fr/fb/readme.md");
    {
        const int r[] = {0, 1, 2};
        const char *e[] = {"/fb/a.json.gz", "/fb/b.json.gz", "/fb/c.json"};
        expect_ranks("fr/fb", 3, r, e);
    }
    /* a rank-like name ABOVE the searched directory says nothing about
     * the files in it: they are pseudo-ranks 0 and 1, not both rank 4 */
    touch("fr/job_tp4/traces/a.json.gz");
    touch("fr/job_tp4/traces/b.json.gz");
    touch("fr/rank_3/traces/a.json.gz");
    touch("fr/rank_3/traces/b.json.gz");
    {
        const int r[] = {0, 1};
        const char *e[] = {"/traces/a.json.gz", "/traces/b.json.gz"};
        expect_ranks("fr/job_tp4/traces", 2, r, e);
        expect_ranks("fr/rank_3/traces", 2, r, e);
    }

    /* errors */
    struct mp_trace_rank_list l;
    struct mp_diag d;
    char path[4200];
    snprintf(path, sizeof(path), "%s/fr/empty", tmp_root);
    assert_int_equal(mkdir(path, 0755), 0);
    mp_diag_clear(&d);
    int rc = mp_trace_find_ranks(path, &l, &d);
    assert_true(rc != 0);
    assert_int_equal(l.n, 0);
    snprintf(path, sizeof(path), "%s/fr/nonexistent", tmp_root);
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_find_ranks(path, &l, &d), MP_ENOTFOUND);
    assert_int_equal(l.n, 0);
    mp_trace_rank_list_fini(&l);

    /* the real two-rank workspace */
    char pb[4096];
    if (shared_trace(pb, sizeof(pb), "h200-tp2")) {
        mp_diag_clear(&d);
        assert_int_equal(mp_trace_find_ranks(pb, &l, &d), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.files[0].rank, 0);
        assert_int_equal(l.files[1].rank, 1);
        assert_non_null(strstr(l.files[0].path, "torch_trace/tp2-rank-0."));
        assert_non_null(strstr(l.files[1].path, "torch_trace/tp2-rank-1."));
        mp_trace_rank_list_fini(&l);
    }
}

struct seen {
    char got[1024];
};

static int note_file(const char *path, bool under_capture, void *user)
{
    struct seen *s = user;
    const char *rel = strstr(path, "/fw/") + 4;
    size_t k = strlen(s->got);
    snprintf(s->got + k, sizeof(s->got) - k, "%s%s%s", k ? " " : "", rel,
             under_capture ? "(c)" : "");
    return strcmp(rel, "stop.json") == 0 ? MP_ECANCEL : 0;
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the walk's files, sorted (readdir order is the file system's) */
static void expect_walk(bool hidden, const char *want)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/fw", tmp_root);
    struct seen s = {{0}};
    assert_int_equal(mp_trace_files_each(path, hidden, note_file, &s), 0);
    char *w[16];
    size_t n = 0;
    for (char *t = strtok(s.got, " "); t && n < 16; t = strtok(NULL, " "))
        w[n++] = t;
    qsort(w, n, sizeof(*w), cmp_word);
    char got[1024] = "";
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(got);
        snprintf(got + k, sizeof(got) - k, "%s%s", i ? " " : "", w[i]);
    }
    assert_string_equal(got, want);
}

static void test_files_each(void **state)
{
    (void)state;
    touch("fw/a.json");
    touch("fw/b.json.gz");
    touch("fw/c.txt");
    touch("fw/.h.json");
    touch("fw/.hd/x.json");
    touch("fw/d/e/f.json");
    touch("fw/d/capture_traces/g.json.gz");
    touch("fw/d/capture_traces/sub/h.json");
    expect_walk(false, "a.json b.json.gz d/capture_traces/g.json.gz(c) "
                       "d/capture_traces/sub/h.json(c) d/e/f.json");
    expect_walk(true, ".h.json .hd/x.json a.json b.json.gz d/capture_traces/g.json.gz(c) "
                      "d/capture_traces/sub/h.json(c) d/e/f.json");
    /* fn's nonzero return stops the walk and is returned */
    touch("fw/stop.json");
    char path[4200];
    snprintf(path, sizeof(path), "%s/fw", tmp_root);
    struct seen s = {{0}};
    assert_int_equal(mp_trace_files_each(path, false, note_file, &s), MP_ECANCEL);
    snprintf(path, sizeof(path), "%s/fw/none", tmp_root);
    assert_int_equal(mp_trace_files_each(path, false, note_file, &s), MP_ENOTFOUND);
}

/* ------------------------------------------------------------------ */
/* event store                                                         */
/* ------------------------------------------------------------------ */

static const char store_trace[] =
    "{\"deviceProperties\":[{\"id\":0,\"name\":\"H200\"}],\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1.5,\"dur\":2,"
    "\"args\":{\"External id\":3,\"correlation\":9}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":4,\"dur\":1},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\","
    "\"args\":{\"name\":\"x\"}},\n"
    "{\"ph\":\"f\",\"id\":77,\"pid\":1,\"tid\":1,\"ts\":5,\"cat\":\"ac2g\",\"name\":\"flow\"}\n"
    "]}\n";

static void check_store(const struct mp_trace_store *s, bool keep_args)
{
    assert_int_equal(s->n, 4);
    assert_int_equal(s->ph[0], 'X');
    assert_int_equal(s->ph[2], 'M');
    assert_int_equal(s->ph[3], 'f');
    assert_true(s->name[0] >= 0);
    assert_int_equal(s->name[0], s->name[1]); /* interned */
    assert_string_equal(mp_intern_str(s->strings, s->name[0]), "k");
    assert_string_equal(mp_intern_str(s->strings, s->name[2]), "process_name");
    assert_int_equal(s->cat[0], s->cat[1]);
    assert_string_equal(mp_intern_str(s->strings, s->cat[0]), "kernel");
    assert_int_equal(s->cat[2], -1);
    assert_string_equal(mp_intern_str(s->strings, s->pid[2]), "Spans");
    assert_string_equal(mp_intern_str(s->strings, s->tid[2]), "PyTorch Profiler");
    assert_string_equal(mp_intern_str(s->strings, s->tid[0]), "7");
    assert_int_equal(s->pid[0], s->pid[1]);
    assert_true(s->ts[0] == 1.5 && s->dur[0] == 2.0 && s->ts[1] == 4.0 && s->dur[1] == 1.0);
    assert_true(s->flags[0] & MP_EV_EXTID);
    assert_int_equal(s->external_id[0], 3);
    assert_true(s->flags[0] & MP_EV_CORR);
    assert_int_equal(s->correlation[0], 9);
    assert_false(s->flags[1] & (MP_EV_EXTID | MP_EV_ARGS));
    assert_true(s->flags[2] & MP_EV_PID_STR);
    assert_true(s->flags[3] & MP_EV_ID);
    assert_int_equal(s->id[3], 77);
    assert_false(s->flags[3] & MP_EV_DUR);
    assert_non_null(s->meta_device_properties);
    assert_string_equal(s->meta_device_properties, "[{\"id\":0,\"name\":\"H200\"}]");
    if (keep_args) {
        assert_non_null(s->args[0]);
        assert_string_equal(s->args[0], "{\"External id\":3,\"correlation\":9}");
        assert_int_equal(s->args_len[0], strlen(s->args[0]));
        assert_null(s->args[1]);
        assert_string_equal(s->args[2], "{\"name\":\"x\"}");
    } else {
        for (size_t i = 0; i < s->n; i++)
            assert_null(s->args[i]);
    }
    assert_true(mp_trace_store_bytes(s) > 0);
}

static void test_store(void **state)
{
    (void)state;
    char *plain = write_tmp("store/t.json", store_trace, sizeof(store_trace) - 1);
    size_t zlen;
    unsigned char *z = gzip_mem(store_trace, sizeof(store_trace) - 1, &zlen);
    char *gz = write_tmp("store/t.json.gz", z, zlen);
    free(z);

    struct mp_trace_store *s = NULL;
    struct mp_diag d;
    struct mp_trace_store_opts o = {0};
    o.keep_args = true;
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_store_load(plain, &o, &s, &d), 0);
    check_store(s, true);
    assert_string_equal(s->path, plain);
    mp_trace_store_free(s);

    o.keep_args = false;
    s = NULL;
    assert_int_equal(mp_trace_store_load(gz, &o, &s, &d), 0);
    check_store(s, false);
    mp_trace_store_free(s);

    s = NULL;
    assert_int_equal(mp_trace_store_load(gz, NULL, &s, &d), 0);
    assert_int_equal(s->n, 4);
    mp_trace_store_free(s);
    mp_trace_store_free(NULL);

    /* a malformed file: error with position, no store */
    const char *badtext = "{\"traceEvents\":[{\"ph\":\"X\"},\n{\"ph\":}]}";
    char *bad = write_tmp("store/bad.json", badtext, strlen(badtext));
    s = (struct mp_trace_store *)1;
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_store_load(bad, &o, &s, &d), MP_EPARSE);
    assert_null(s);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 7);
    free(plain);
    free(gz);
    free(bad);
}

/* Forward/backward linking and recompute marking on a hand-made autograd
 * trace: forward ops on tid 1 (an outer op and the leaf that shares its
 * sequence number), the backward node on tid 2, a python frame of
 * torch.utils.checkpoint's recompute_fn wrapping a recomputed op. */
static const char fwdbwd_trace[] =
    "{\"traceEvents\":[\n"
    /* 0: outer forward op, seq 7 */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,"
    "\"dur\":50,\"args\":{\"Sequence number\":7}},\n"
    /* 1: leaf forward op, seq 7, later ts: the forward side of the pair */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":20,"
    "\"dur\":10,\"args\":{\"Sequence number\":7}},\n"
    /* 2: backward node on the autograd thread */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: "
    "AddmmBackward0\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":30,"
    "\"args\":{\"Sequence number\":7}},\n"
    /* 3: same-thread member of seq 7 after the node: never the forward */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"AddmmBackward0\",\"pid\":1,\"tid\":2,"
    "\"ts\":101,\"dur\":20,\"args\":{\"Sequence number\":7}},\n"
    /* 4: seq 9 has no backward node: no link */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":70,"
    "\"dur\":5,\"args\":{\"Sequence number\":9}},\n"
    /* 5: recompute frame and 6: an op inside it */
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"torch/utils/checkpoint.py(1): "
    "recompute_fn\",\"pid\":1,\"tid\":2,\"ts\":140,\"dur\":20,\"args\":{\"Python id\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":2,\"ts\":145,"
    "\"dur\":5,\"args\":{}}\n"
    "]}\n";

static void test_fwd_bwd_link(void **state)
{
    (void)state;
    char *path = write_tmp("tree/fwdbwd.json", fwdbwd_trace, sizeof(fwdbwd_trace) - 1);
    struct mp_trace_store *s = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_trace_store_opts o = {.keep_args = true};
    assert_int_equal(mp_trace_store_load(path, &o, &s, &d), 0);
    struct mp_trace_tree_opts to = {.python_functions = true};
    struct mp_trace_tree *t = NULL;
    assert_int_equal(mp_trace_tree_build(s, &to, &t, &d), 0);
    assert_int_equal(t->n_fwd_bwd, 1);
    assert_int_equal(t->bwd_of[1], 2);
    assert_int_equal(t->fwd_of[2], 1);
    assert_int_equal(t->bwd_of[0], -1);
    assert_int_equal(t->bwd_of[3], -1);
    assert_int_equal(t->bwd_of[4], -1);
    /* the outer op reaches the backward node through its child */
    int32_t *buf = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(mp_trace_tree_subtree_bwd(t, 0, &buf, &n, &cap), 1);
    assert_int_equal(buf[0], 2);
    free(buf);
    assert_null(t->recompute);
    assert_int_equal(mp_trace_tree_mark_recompute(t), 0);
    assert_int_equal(t->n_recompute_regions, 1);
    assert_int_equal(t->recompute[5], 1);
    assert_int_equal(t->recompute[6], 1);
    assert_int_equal(t->recompute[4], 0);
    assert_int_equal(t->recompute[2], 0);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(path);
}

/* Graph-capture merge (capture.h) on a hand-made replay trace (one step,
 * one graph launch replaying a GEMM, an add and a memcpy) and its capture
 * trace (the ops and their launch calls between StreamBeginCapture and
 * StreamEndCapture, under a python frame that starts before the window). */
static const char cap_replay[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step[DECODE bs=%d]\",\"pid\":1,"
    "\"tid\":1,\"ts\":0,\"dur\":1000,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"graphs.py(1): replay\",\"pid\":1,"
    "\"tid\":1,\"ts\":10,\"dur\":500,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipGraphLaunch\",\"pid\":1,\"tid\":1,"
    "\"ts\":20,\"dur\":50,\"args\":{\"correlation\":77}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_k\",\"pid\":0,\"tid\":7,\"ts\":100,"
    "\"dur\":10,\"args\":{\"correlation\":77,\"stream\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"add_k\",\"pid\":0,\"tid\":7,\"ts\":120,"
    "\"dur\":5,\"args\":{\"correlation\":77,\"stream\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD\",\"pid\":0,\"tid\":7,"
    "\"ts\":130,\"dur\":2,\"args\":{\"correlation\":77,\"stream\":7}}\n"
    "]}\n";

static const char cap_capture[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipStreamBeginCapture\",\"pid\":1,"
    "\"tid\":1,\"ts\":100,\"dur\":2,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"runner.py(1): capture\",\"pid\":1,"
    "\"tid\":1,\"ts\":50,\"dur\":1000,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"nn.Module: Net_0\",\"pid\":1,"
    "\"tid\":1,\"ts\":110,\"dur\":100,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":111,"
    "\"dur\":20,\"args\":{\"Input Dims\":[[2,8],[8,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":112,\"dur\":5,\"args\":{\"correlation\":5,\"kernel\":\"gemm_k\"}},\n"
    "%s"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":140,"
    "\"dur\":20,\"args\":{\"Input Dims\":[[2,4],[2,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":141,\"dur\":5,\"args\":{\"correlation\":6,\"kernel\":\"add_k\"}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":1,\"tid\":1,\"ts\":170,"
    "\"dur\":20,\"args\":{\"Input Dims\":[[2,4],[2,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpyAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":171,\"dur\":5,\"args\":{\"correlation\":8}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipStreamEndCapture\",\"pid\":1,"
    "\"tid\":1,\"ts\":300,\"dur\":2,\"args\":{}}\n"
    "]}\n";

/* a launch inside aten::mm that the graph does not replay */
static const char cap_extra[] =
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":120,\"dur\":2,\"args\":{\"correlation\":9,\"kernel\":\"noop_k\"}},\n";

/* Writes the replay trace (step batch size bs) and a capture folder
 * (with execution_details.json unless details is NULL) under tmp/dir;
 * returns the replay path and fills folder. */
static char *write_capture_case(const char *dir, int bs, bool extra, const char *details,
                                char *folder, size_t flen)
{
    char rel[256], *text = malloc(8192);
    assert_non_null(text);
    int n = snprintf(text, 8192, cap_replay, bs);
    snprintf(rel, sizeof(rel), "%s/replay.json", dir);
    char *replay = write_tmp(rel, text, (size_t)n);
    n = snprintf(text, 8192, cap_capture, extra ? cap_extra : "");
    snprintf(rel, sizeof(rel), "%s/cap/c2.json", dir);
    free(write_tmp(rel, text, (size_t)n));
    if (details) {
        snprintf(rel, sizeof(rel), "%s/cap/execution_details.json", dir);
        free(write_tmp(rel, details, strlen(details)));
    }
    snprintf(folder, flen, "%s/%s/cap", tmp_root, dir);
    free(text);
    return replay;
}

static void load_tree(const char *path, struct mp_trace_store **s, struct mp_trace_tree **t)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_trace_store_opts so = {.keep_args = true};
    assert_int_equal(mp_trace_store_load(path, &so, s, &d), 0);
    struct mp_trace_tree_opts to = {.python_functions = true};
    assert_int_equal(mp_trace_tree_build(*s, &to, t, &d), 0);
}

static const char cap_details[] =
    "[{\"file\": \"c2.json\", \"batch_size\": 2, \"mode\": \"FULL\"}]";

static void test_capture_merge(void **state)
{
    (void)state;
    char folder[512];
    char *replay = write_capture_case("cap_pos", 2, false, cap_details, folder, sizeof(folder));
    struct mp_trace_store *s = NULL;
    struct mp_trace_tree *t = NULL;
    load_tree(replay, &s, &t);
    assert_int_equal(t->n, 6);
    assert_int_equal(t->launcher[3], 2); /* before: the graph launch launches everything */
    struct mp_capture_opts co = {.folder = folder};
    struct mp_capture_stats st;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_int_equal(st.exec_roots, 1);
    assert_int_equal(st.graph_launches, 1);
    assert_int_equal(st.merged, 1);
    assert_int_equal(st.kernels_linked, 3);
    assert_false(st.details_generated);
    assert_false(st.failed);
    /* CaptureRoot, Net_0, mm, launch, add, launch, copy_, memcpy call */
    assert_int_equal(st.events_added, 8);
    assert_int_equal(t->n, 14);
    assert_int_equal(s->n, 14);
    assert_string_equal(mp_trace_tree_name(t, 6), "CaptureRoot");
    assert_int_equal(t->parent[6], 2);
    assert_int_equal(t->child_off[3] - t->child_off[2], 1); /* launch -> [CaptureRoot] */
    assert_int_equal(t->child[t->child_off[2]], 6);
    assert_string_equal(mp_trace_tree_name(t, 7), "nn.Module: Net_0");
    assert_int_equal(t->parent[7], 6);
    assert_string_equal(mp_trace_tree_name(t, 8), "aten::mm");
    assert_int_equal(t->parent[8], 7);
    /* every copy takes the graph launch's ts and dur */
    for (int i = 6; i < 14; i++) {
        assert_true(s->ts[i] == 20.0);
        assert_true(s->dur[i] == 50.0);
    }
    /* replayed events hang under their captured launch calls */
    assert_int_equal(t->parent[3], 9);
    assert_int_equal(t->launcher[3], 8);
    assert_int_equal(t->parent[4], 11);
    assert_string_equal(mp_trace_tree_name(t, t->launcher[4]), "aten::add");
    assert_int_equal(t->parent[5], 13);
    assert_string_equal(mp_trace_tree_name(t, t->launcher[5]), "aten::copy_");
    assert_int_equal(s->correlation[3], 5);
    /* the outermost captured cpu ops become cpu roots */
    assert_true(t->cpu_root[8] && t->cpu_root[10] && t->cpu_root[12]);
    assert_false(t->cpu_root[7]);
    assert_int_equal(t->n_gpu, 3);
    assert_int_equal(t->n_gpu_linked, 3);
    int32_t *buf = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(mp_trace_tree_gpu_events(t, 1, &buf, &n, &cap), 3);
    free(buf);
    assert_non_null(s->args[8]);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
}

static void test_capture_merge_variants(void **state)
{
    (void)state;
    char folder[512];
    struct mp_trace_store *s = NULL;
    struct mp_trace_tree *t = NULL;
    struct mp_capture_stats st;
    struct mp_diag d;
    struct mp_capture_opts co = {.folder = folder};
    /* an extra captured launch: the greedy scan skips it */
    char *replay = write_capture_case("cap_greedy", 2, true, cap_details, folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_int_equal(st.merged, 1);
    assert_int_equal(st.events_added, 9);
    assert_string_equal(mp_trace_tree_name(t, t->launcher[4]), "aten::add");
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
    /* no execution_details.json: batch size 2 (most common first dim) and
     * FULL (one capture) are inferred */
    replay = write_capture_case("cap_infer", 2, false, NULL, folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_true(st.details_generated);
    assert_int_equal(st.merged, 1);
    assert_int_equal(t->n, 14);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
    /* a step larger than every captured batch size: nothing merged */
    replay = write_capture_case("cap_big", 64, false, cap_details, folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_int_equal(st.merged, 0);
    assert_int_equal(t->n, 6);
    assert_int_equal(s->n, 6);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
    /* an index that is not a list of objects is an input error */
    replay = write_capture_case("cap_bad", 2, false, "{\"file\": 1}", folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), MP_EPARSE);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
}

/* The parse pipeline (worker thread + batches) against the serial parse:
 * the same events with the same values in the same order, metadata too,
 * on the real Mixtral trace and on a small trace with escapes in every
 * string field, with tiny and default windows; a callback that stops at
 * event k sees exactly k + 1 events either way; a syntax error arrives
 * after the same events with the same diag. */
struct stop_sum {
    struct sum s;
    uint64_t stop_at;
    uint64_t meta;
};

static int stop_cb(const struct mp_trace_event *ev, void *user)
{
    struct stop_sum *x = user;
    sum_cb(ev, &x->s);
    return x->s.n == x->stop_at + 1 ? MP_ECANCEL : 0;
}

static int stop_meta_cb(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct stop_sum *x = user;
    x->meta = mix_view(mix_view(x->meta ? x->meta : 7, key), raw);
    return 0;
}

static int run_both(const char *text, size_t len, size_t chunk, bool serial, uint64_t stop_at,
                    struct stop_sum *x, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    mp_diag_clear(d);
    assert_int_equal(mp_io_open_mem(text, len, "mem", &r, d), 0);
    memset(x, 0, sizeof(*x));
    x->s.h = 1469598103934665603ull;
    x->s.want_offset_of = UINT64_MAX;
    x->stop_at = stop_at;
    struct mp_trace_parse_opts o = {.on_event = stop_cb,
                                    .on_meta = stop_meta_cb,
                                    .user = x,
                                    .chunk_bytes = chunk,
                                    .serial = serial};
    int rc = mp_trace_parse(r, &o, NULL, d);
    mp_io_close(r);
    return rc;
}

static void expect_same(const char *text, size_t len, size_t chunk, uint64_t stop_at)
{
    struct stop_sum a, b;
    struct mp_diag da, db;
    int ra = run_both(text, len, chunk, true, stop_at, &a, &da);
    int rb = run_both(text, len, chunk, false, stop_at, &b, &db);
    assert_int_equal(ra, rb);
    assert_true(a.s.n == b.s.n);
    assert_true(a.s.h == b.s.h);
    assert_true(a.meta == b.meta);
    assert_int_equal(da.code, db.code);
    assert_true(da.offset == db.offset);
    assert_string_equal(da.msg, db.msg);
}

static void test_parse_pipeline(void **state)
{
    (void)state;
    static const char esc[] =
        "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\\u00e9\\\"b\\n\", "
        "\"cat\": \"c\\/d\", \"pid\": \"p\\tq\", \"tid\": 7, \"ts\": 1.5, \"dur\": 2e0, "
        "\"args\": {\"External id\": 3, \"Ev Idx\": 4, \"Input Dims\": [[1, 2]], "
        "\"correlation\": 9}}, {\"ph\": \"i\", \"name\": \"\\ud83d\\ude00\", \"ts\": "
        "12345678901234.567, \"id\": -5}], \"deviceProperties\": [{\"name\": \"x\\u0041\"}]}";
    for (size_t chunk = 1; chunk <= 64; chunk *= 4)
        expect_same(esc, sizeof(esc) - 1, chunk, UINT64_MAX);
    expect_same(esc, sizeof(esc) - 1, 0, 0);
    expect_same(esc, sizeof(esc) - 20, 0, UINT64_MAX); /* truncated */
    static const char bad[] = "[{\"ph\": \"X\"}, {\"ts\": 1.}]";
    expect_same(bad, sizeof(bad) - 1, 0, UINT64_MAX);
    char pb[4096];
    const char *path = shared_trace(pb, sizeof(pb), "h200/mixtral_shape_l8_bs16_p256_d12.json.gz");
    if (!path) {
        skip();
        return;
    }
    size_t len = 0;
    char *text = gunzip_file(path, &len);
    assert_non_null(text);
    expect_same(text, len, 0, UINT64_MAX);
    expect_same(text, len, 100000, UINT64_MAX);
    expect_same(text, len, 0, 5000); /* the caller stops mid-batch */
    expect_same(text, len / 2, 0, UINT64_MAX);
    free(text);
}

/* The calling thread scans the second half of each chunk from a likely
 * event start ("}" "," "{"); here such patterns also sit inside strings and
 * args arrays of objects, some strings have escapes, and errors sit deep in
 * the input: the events, their order, the metadata and the diag must be the
 * serial parse's whatever was speculated. */
static char *spec_trace(size_t nev, size_t *len)
{
    struct mp_buf b = {0};
    assert_int_equal(mp_buf_puts(&b, "{\"meta\": {\"a\": [1, {\"b\": 2}]}, \"traceEvents\": [\n"),
                     0);
    for (size_t i = 0; i < nev; i++) {
        const char *tail = i % 3 == 0   ? "\"x}, {y\""
                           : i % 3 == 1 ? "[{\"u\": 1}, {\"v\": \"w\\\"}, {\"}]"
                                        : "\"\\u00e9\"";
        assert_int_equal(
            mp_buf_printf(&b,
                          "%s  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                          "\"k%zu}, {\\\"n\\\": 1}\", \"pid\": %zu, \"tid\": \"t%zu\", "
                          "\"ts\": %zu.%03zu, \"dur\": 1.5, \"args\": {\"External id\": %zu, "
                          "\"correlation\": %zu, \"stream\": 7, \"Input Dims\": [[%zu, 2]], "
                          "\"t\": %s, \"Ev Idx\": %zu}}",
                          i ? ",\n" : "", i, i % 5, i % 7, 1000 + i, i % 1000, i, i, i % 9, tail,
                          i),
            0);
    }
    assert_int_equal(mp_buf_puts(&b, "\n], \"after\": \"z\"}\n"), 0);
    *len = b.len;
    return b.data;
}

/* a cheap digest (the speculative split only happens when the callbacks
 * keep up with the worker): the scalars and each view's place in the event */
struct cheap {
    uint64_t h, n;
};

static uint64_t cheap_view(uint64_t h, struct mp_strview raw, struct mp_strview v)
{
    uint64_t at = v.p && v.p >= raw.p && v.p <= raw.p + raw.n ? (uint64_t)(v.p - raw.p) : ~0ull;
    h = (h ^ at) * 1099511628211ull;
    h = (h ^ v.n) * 1099511628211ull;
    if (v.n)
        h = (h ^ (unsigned char)v.p[0] ^ ((uint64_t)(unsigned char)v.p[v.n - 1] << 8)) *
            1099511628211ull;
    return h;
}

static int cheap_cb(const struct mp_trace_event *ev, void *user)
{
    struct cheap *c = user;
    uint64_t h = c->h, v[8];
    memcpy(&v[0], &ev->ts, 8);
    memcpy(&v[1], &ev->dur, 8);
    v[2] = ev->index;
    v[3] = ev->offset;
    v[4] = ev->flags | (uint64_t)(unsigned char)ev->ph << 32;
    v[5] = (uint64_t)(ev->external_id ^ ev->correlation * 31 ^ ev->stream * 7);
    v[6] = (uint64_t)(ev->pid ^ ev->tid * 131 ^ ev->id * 17);
    v[7] = ev->n_id_members;
    for (int i = 0; i < 8; i++)
        h = (h ^ v[i]) * 1099511628211ull;
    const struct mp_strview *views[] = {&ev->name,     &ev->cat,  &ev->pid_text,
                                        &ev->tid_text, &ev->args, &ev->input_dims};
    for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
        h = cheap_view(h, ev->raw, *views[i]);
    for (unsigned i = 0; i < ev->n_id_members; i++)
        h = cheap_view(h, ev->raw, ev->id_members[i]);
    h = (h ^ ev->raw.n) * 1099511628211ull;
    c->h = h;
    c->n++;
    return c->n == UINT64_MAX ? MP_ECANCEL : 0;
}

static int cheap_run(const char *text, size_t len, size_t chunk, bool serial, struct cheap *c,
                     struct mp_trace_parse_stats *st, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    mp_diag_clear(d);
    assert_int_equal(mp_io_open_mem(text, len, "mem", &r, d), 0);
    c->h = 7;
    c->n = 0;
    struct mp_trace_parse_opts o = {
        .on_event = cheap_cb, .user = c, .chunk_bytes = chunk, .serial = serial};
    memset(st, 0, sizeof(*st));
    int rc = mp_trace_parse(r, &o, st, d);
    mp_io_close(r);
    return rc;
}

/* the same digest, event count and diag as the serial parse; returns the
 * events the calling thread tokenized */
static uint64_t expect_same_cheap(const char *text, size_t len, size_t chunk)
{
    struct cheap a, b;
    struct mp_diag da, db;
    struct mp_trace_parse_stats sa, sb;
    int ra = cheap_run(text, len, chunk, true, &a, &sa, &da);
    int rb = cheap_run(text, len, chunk, false, &b, &sb, &db);
    assert_int_equal(ra, rb);
    assert_true(a.n == b.n);
    assert_true(a.h == b.h);
    /* after an error, how far the input was read depends on the read size */
    assert_true(sa.events == sb.events && (ra || sa.bytes == sb.bytes));
    assert_true(sa.events_split == 0);
    assert_int_equal(da.code, db.code);
    assert_true(da.offset == db.offset);
    assert_string_equal(da.msg, db.msg);
    return sb.events_split;
}

static void test_parse_speculative(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = spec_trace(40000, &len);
    assert_true(len > ((size_t)4 << 20));
    expect_same(text, len, 0, UINT64_MAX);
    expect_same(text, len, 0, 30000); /* the caller stops in a later chunk */
    expect_same(text, len, 0, 2500);  /* ... in the first one */
    uint64_t split = 0;
    for (int i = 0; i < 4; i++) {
        split += expect_same_cheap(text, len, 0);
        split += expect_same_cheap(text, len, 65536);
        split += expect_same_cheap(text, len, 100003);
        split += expect_same_cheap(text, len - 4000, 0); /* truncated */
    }
    /* a syntax error late in the input, then one earlier */
    for (size_t at = len - len / 7; at > len / 3; at -= len / 5) {
        char *bad = malloc(len);
        assert_non_null(bad);
        memcpy(bad, text, len);
        char *q = strstr(bad + at, "\"dur\"");
        assert_non_null(q);
        q[5] = ';';
        expect_same(bad, len, 0, UINT64_MAX);
        for (int i = 0; i < 4; i++) {
            split += expect_same_cheap(bad, len, 0);
            split += expect_same_cheap(bad, len, 65536);
        }
        free(bad);
    }
    /* how the work was shared depends on timing: reported, not asserted */
    print_message("speculative parse: %llu events tokenized by the calling thread\n",
                  (unsigned long long)split);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_form),
        cmocka_unit_test(test_bare_list),
        cmocka_unit_test(test_duplicate_keys_last_wins),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_numbers_random),
        cmocka_unit_test(test_integer_fields),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_cancel_and_callbacks),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_max_event_bytes),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_bom),
        cmocka_unit_test(test_chunks_real_trace),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_gzip_damage),
        cmocka_unit_test(test_json_find),
        cmocka_unit_test(test_json_int_string),
        cmocka_unit_test(test_json_pyrepr),
        cmocka_unit_test(test_find_ranks),
        cmocka_unit_test(test_files_each),
        cmocka_unit_test(test_store),
        cmocka_unit_test(test_fwd_bwd_link),
        cmocka_unit_test(test_capture_merge),
        cmocka_unit_test(test_capture_merge_variants),
        /* last: a signed-overflow bug here aborts the process under UBSan */
        cmocka_unit_test(test_integer_int64_min),
        cmocka_unit_test(test_parse_pipeline),
        cmocka_unit_test(test_parse_speculative),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
