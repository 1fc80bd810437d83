/* libFuzzer target for the loadgen server-sent-events parser and its JSON
 * event scanner (src/loadgen/sse.c), which read an inference server's
 * streaming response.
 *
 * The input is fed to the SSE state machine twice: in one read and in reads
 * of 1..16 bytes (sizes taken from the input). Both runs must deliver the
 * same events (kind, token counts, text, message); every text / message view
 * must lie inside the parser's data buffer and is read in full. The whole
 * input is also classified as one event's data and skipped as one JSON
 * value; the JSON checks are differential against jansson in the direction
 * that holds: a value jansson accepts (ASCII, shallow) must be accepted and
 * consumed to its end, and one our scanner rejects must be rejected by
 * jansson. Any mismatch traps. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/loadgen.h>

#include "fuzz_common.h"
#include "loadgen/loadgen_int.h"

struct rec {
    const struct mp_loadgen_sse *s;
    uint64_t hash;
    size_t n;
    volatile unsigned touch;
};

static void check_view(const struct rec *r, const char *p, size_t n, bool in_data)
{
    if (!n)
        return;
    CHECK(p != NULL);
    if (in_data) {
        const char *b = r->s->data.data;
        CHECK(b != NULL && p >= b && p + n <= b + r->s->data.len);
    }
}

static int on_event(const struct mp_loadgen_sse_event *ev, void *user)
{
    struct rec *r = user;
    CHECK(ev->kind >= MP_LOADGEN_SSE_TOKEN && ev->kind <= MP_LOADGEN_SSE_BAD);
    CHECK(ev->prompt_tokens >= -1 && ev->completion_tokens >= -1);
    /* a BAD event's message is a static string, the others point into the data */
    check_view(r, ev->text, ev->text_len, true);
    check_view(r, ev->msg, ev->msg_len, ev->kind != MP_LOADGEN_SSE_BAD);
    r->touch += fuzz_touch(ev->text, ev->text_len) + fuzz_touch(ev->msg, ev->msg_len);
    uint64_t h = r->hash;
    h = fuzz_mix(h, &ev->kind, sizeof(ev->kind));
    h = fuzz_mix(h, &ev->prompt_tokens, sizeof(ev->prompt_tokens));
    h = fuzz_mix(h, &ev->completion_tokens, sizeof(ev->completion_tokens));
    h = fuzz_mix(h, &ev->text_len, sizeof(ev->text_len));
    if (ev->text_len)
        h = fuzz_mix(h, ev->text, ev->text_len);
    h = fuzz_mix(h, &ev->msg_len, sizeof(ev->msg_len));
    if (ev->msg_len)
        h = fuzz_mix(h, ev->msg, ev->msg_len);
    r->hash = h;
    r->n++;
    return 0;
}

static int feed(const uint8_t *data, size_t size, const uint8_t *steps, size_t nsteps,
                struct rec *r)
{
    struct mp_loadgen_sse s;
    mp_loadgen_sse_init(&s, (size_t)1 << 20, on_event, r);
    r->s = &s;
    r->hash = 1469598103934665603ull;
    r->n = 0;
    int rc = 0;
    size_t off = 0, k = 0;
    while (off < size && !rc) {
        size_t step = nsteps ? 1 + (size_t)(steps[k++ % nsteps] % 16) : size;
        if (step > size - off)
            step = size - off;
        /* an exact-size copy per read: a read past it is an ASan report */
        char *chunk = fuzz_dup(data + off, step);
        rc = mp_loadgen_sse_feed(&s, chunk, step, (uint64_t)k);
        free(chunk);
        off += step;
    }
    if (!rc)
        rc = mp_loadgen_sse_finish(&s);
    mp_loadgen_sse_fini(&s);
    return rc;
}

/* Nesting depth outside strings, and whether all bytes are ASCII. */
static int depth_of(const uint8_t *d, size_t n, bool *ascii)
{
    int depth = 0, max = 0;
    bool in_str = false;
    *ascii = true;
    for (size_t i = 0; i < n; i++) {
        if (d[i] >= 0x80)
            *ascii = false;
        if (in_str) {
            if (d[i] == '\\')
                i++;
            else if (d[i] == '"')
                in_str = false;
        } else if (d[i] == '"') {
            in_str = true;
        } else if (d[i] == '[' || d[i] == '{') {
            if (++depth > max)
                max = depth;
        } else if (d[i] == ']' || d[i] == '}') {
            depth--;
        }
    }
    return max;
}

static bool has_nul_escape(const uint8_t *d, size_t n)
{
    for (size_t i = 0; i + 5 < n; i++)
        if (d[i] == '\\' && d[i + 1] == 'u' && memcmp(d + i + 2, "0000", 4) == 0)
            return true;
    return false;
}

static void check_json(const uint8_t *data, size_t size)
{
    char *buf = fuzz_dup(data, size);
    const char *end = buf + size;
    const char *err = NULL;
    const char *after = loadgen_json_skip(buf, end, &err);
    CHECK(after ? (after > buf && after <= end) : err != NULL);

    struct mp_loadgen_sse_event ev;
    mp_loadgen_sse_classify(buf, size, &ev);
    CHECK(ev.kind >= MP_LOADGEN_SSE_TOKEN && ev.kind <= MP_LOADGEN_SSE_BAD);
    if (ev.kind != MP_LOADGEN_SSE_BAD) {
        if (ev.text_len)
            CHECK(ev.text >= buf && ev.text + ev.text_len <= end);
        if (ev.msg_len && ev.kind != MP_LOADGEN_SSE_DONE)
            CHECK(ev.msg >= buf && ev.msg + ev.msg_len <= end);
    }
    (void)fuzz_touch(ev.text, ev.text_len);
    (void)fuzz_touch(ev.msg, ev.msg_len);

    bool ascii;
    int depth = depth_of(data, size, &ascii);
    /* jansson takes a NUL byte for the end of the input: leave those out */
    if (ascii && depth < 60 && !memchr(data, 0, size)) {
        json_error_t je;
        json_t *j = json_loadb(buf, size, JSON_DECODE_ANY, &je);
        bool known = json_error_code(&je) == json_error_numeric_overflow ||
                     json_error_code(&je) == json_error_invalid_utf8 || has_nul_escape(data, size);
        if (j) {
            /* jansson read one whole value: so must we */
            CHECK(after != NULL);
            while (after < end &&
                   (*after == ' ' || *after == '\t' || *after == '\n' || *after == '\r'))
                after++;
            CHECK(after == end);
            if (json_is_object(j))
                CHECK(ev.kind != MP_LOADGEN_SSE_BAD);
            json_decref(j);
        } else if (after == NULL) {
            /* both reject: fine */
        } else if (!known && (size_t)(after - buf) == size) {
            /* we accepted the whole input as one value, jansson did not:
             * only its own limits (surrogates, NUL) may explain that */
            CHECK(strstr(je.text, "surrogate") || strstr(je.text, "Unicode") ||
                  strstr(je.text, "NUL") || strstr(je.text, "nul"));
        }
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rec a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    int rc1 = feed(data, size, NULL, 0, &a);
    size_t nsteps = size < 8 ? size : 8;
    int rc2 = feed(data, size, data, nsteps, &b);
    CHECK(rc1 == rc2);
    if (rc1 == 0) {
        CHECK(a.n == b.n);
        CHECK(a.hash == b.hash);
    }
    check_json(data, size);
    return 0;
}
