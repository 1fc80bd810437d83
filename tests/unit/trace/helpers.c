/* Fixtures of the trace tests: events collected or checksummed as the
 * parser delivers them, a temporary directory per run, gzip in memory, the
 * shared traces, and a small trace with every feature. */
#include "helpers.h"

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

char *xstrndup(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    assert_non_null(r);
    if (n)
        memcpy(r, s, n);
    r[n] = 0;
    return r;
}

int collect_cb(const struct mp_trace_event *ev, void *user)
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

int meta_cb(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct coll *c = user;
    assert_int_equal(mp_buf_append(&c->meta, key.p, key.n), 0);
    assert_int_equal(mp_buf_putc(&c->meta, '='), 0);
    assert_int_equal(mp_buf_append(&c->meta, raw.p, raw.n), 0);
    assert_int_equal(mp_buf_putc(&c->meta, '\n'), 0);
    return 0;
}

void coll_init(struct coll *c)
{
    memset(c, 0, sizeof(*c));
    mp_buf_init(&c->meta, 0);
}

void coll_fini(struct coll *c)
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
int parse_mem(const void *text, size_t len, size_t chunk, struct coll *c,
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

uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t mix_view(uint64_t h, struct mp_strview v)
{
    h = mix(h, &v.n, sizeof(v.n));
    return v.n ? mix(h, v.p, v.n) : h;
}

int sum_cb(const struct mp_trace_event *ev, void *user)
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

int parse_sum(const void *text, size_t len, size_t chunk, struct sum *s,
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

/* temp files */
char tmp_root[256];

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int setup_tmp(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmp_root, sizeof(tmp_root), "%s/mp_test_trace.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmp_root))
        return -1;
    return 0;
}

int teardown_tmp(void **state)
{
    (void)state;
    if (tmp_root[0])
        nftw(tmp_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* Writes data to tmp_root/rel (creating directories); returns the path. */
char *write_tmp(const char *rel, const void *data, size_t len)
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
unsigned char *gzip_mem(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

/* Inflates a .json.gz file into memory with zlib (not magpie's reader). */
char *gunzip_file(const char *path, size_t *len)
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

const char *shared_trace(char *buf, size_t len, const char *rel)
{
    const char *sh = getenv("MP_SHARED");
    if (!sh || !*sh)
        return NULL;
    snprintf(buf, len, "%s/data/traces/%s", sh, rel);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

/* a small trace with every feature, used by several tests */
const char small_trace[] =
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
uint64_t nth_offset(const char *hay, const char *needle, int n)
{
    const char *p = hay;
    for (int i = 0; i <= n; i++) {
        p = strstr(i ? p + 1 : p, needle);
        assert_non_null(p);
    }
    return (uint64_t)(p - hay);
}

void check_small_trace(const struct coll *c)
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
