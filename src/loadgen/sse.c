/* Incremental server-sent-events parser and the small JSON scanner that
 * classifies each event of an OpenAI streaming response.
 *
 * The parser is a byte state machine, so an event may be split across any
 * number of reads (down to one byte each) and several events may arrive in
 * one read. Each event carries the time of the read that delivered its first
 * byte: parsing cost never moves a timestamp. The only buffer is the data
 * field of the event being read, reused for every event, so nothing is
 * allocated per token once it has grown to the largest event.
 *
 * The JSON scanner (over the lexing core of magpie/jsonlex.h) validates the
 * whole event (strings, escapes, numbers, literals, nesting) without building
 * a tree, and extracts only what the metrics need: whether "choices" is
 * non-empty, the text of choices[0], usage.prompt_tokens /
 * usage.completion_tokens, and a top-level "error".
 */
#include <stdint.h>
#include <string.h>

#include <magpie/jsonlex.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

enum { ST_LINE = 0, ST_FIELD, ST_VALUE_START, ST_DATA, ST_SKIP };

void mp_loadgen_sse_init(struct mp_loadgen_sse *s, size_t max_event, mp_loadgen_sse_fn fn,
                         void *user)
{
    memset(s, 0, sizeof(*s));
    mp_buf_init(&s->data, max_event ? max_event : ((size_t)16 << 20));
    s->fn = fn;
    s->user = user;
}

void mp_loadgen_sse_reset(struct mp_loadgen_sse *s)
{
    s->data.len = 0;
    s->state = ST_LINE;
    s->in_event = s->cr = s->has_data = false;
    s->field_len = 0;
    s->ev_t_ns = 0;
    s->first_t_ns = 0;
}

void mp_loadgen_sse_fini(struct mp_loadgen_sse *s)
{
    if (s)
        mp_buf_fini(&s->data);
}

/* ---- JSON scanning (the lexing core: magpie/jsonlex.h) ---- */

/* "the event ends where a value must start" in loadgen's words */
static const char eof_msg[] = "unexpected end of event data";

const char *loadgen_json_skip(const char *p, const char *end, const char **err)
{
    struct mp_json_cur j = {p, end, NULL, eof_msg};
    if (!mp_json_skip(&j, 0)) {
        if (err)
            *err = j.err;
        return NULL;
    }
    return j.p;
}

static bool key_is(const char *k, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(k, want, n) == 0;
}

/* Iterates the members of the object at j->p ('{'), calling fn for each with
 * j->p at the value; fn must consume the value. */
typedef bool (*member_fn)(struct mp_json_cur *j, const char *k, size_t kn, void *u, int depth);

static bool js_object(struct mp_json_cur *j, int depth, member_fn fn, void *u)
{
    if (depth > MP_JSON_MAX_DEPTH)
        return mp_json_fail(j, "nesting too deep");
    if (j->p >= j->end || *j->p != '{')
        return mp_json_fail(j, "expected an object");
    j->p++;
    int more = mp_json_first(j, '}');
    for (; more > 0; more = mp_json_more(j, '}')) {
        const char *k = NULL;
        size_t kn = 0;
        if (!mp_json_key(j, &k, &kn))
            return false;
        if (j->p >= j->end) /* the member functions look at the value's first byte */
            return mp_json_fail(j, eof_msg);
        if (!fn(j, k, kn, u, depth + 1))
            return false;
    }
    return more == 0;
}

struct scan {
    struct mp_loadgen_sse_event *ev;
    bool choices_nonempty, usage_obj, error;
};

static bool text_member(struct mp_json_cur *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    if (*j->p == '"' && (key_is(k, kn, "text") || key_is(k, kn, "content")))
        return mp_json_string(j, &sc->ev->text, &sc->ev->text_len);
    if (*j->p == '{' && key_is(k, kn, "delta"))
        return js_object(j, depth, text_member, u);
    return mp_json_skip(j, depth);
}

static bool usage_member(struct mp_json_cur *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    int64_t *dst = NULL;
    if (key_is(k, kn, "prompt_tokens"))
        dst = &sc->ev->prompt_tokens;
    else if (key_is(k, kn, "completion_tokens"))
        dst = &sc->ev->completion_tokens;
    if (dst && j->p < j->end && (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))) {
        int64_t v;
        bool is_int;
        if (!mp_json_number(j, &v, &is_int))
            return false;
        if (is_int && v >= 0)
            *dst = v;
        return true;
    }
    return mp_json_skip(j, depth);
}

static bool error_member(struct mp_json_cur *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    if (*j->p == '"' && key_is(k, kn, "message"))
        return mp_json_string(j, &sc->ev->msg, &sc->ev->msg_len);
    return mp_json_skip(j, depth);
}

static bool top_member(struct mp_json_cur *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    if (key_is(k, kn, "choices") && *j->p == '[') {
        j->p++;
        int more = mp_json_first(j, ']');
        if (more)
            sc->choices_nonempty = true;
        for (bool first = true; more > 0; first = false, more = mp_json_more(j, ']')) {
            mp_json_ws(j);
            bool ok = first && j->p < j->end && *j->p == '{'
                          ? js_object(j, depth + 1, text_member, u)
                          : mp_json_skip(j, depth + 1);
            if (!ok)
                return false;
        }
        return more == 0;
    }
    if (key_is(k, kn, "usage") && *j->p == '{') {
        const char *before = j->p;
        if (!js_object(j, depth, usage_member, u))
            return false;
        /* vLLM tests the dict for truth: {} is no usage */
        sc->usage_obj = j->p - before > 2 || sc->ev->completion_tokens >= 0;
        return true;
    }
    if (key_is(k, kn, "error")) {
        if (*j->p == 'n')
            return mp_json_skip(j, depth); /* "error": null is no error */
        sc->error = true;
        if (*j->p == '"')
            return mp_json_string(j, &sc->ev->msg, &sc->ev->msg_len);
        if (*j->p == '{')
            return js_object(j, depth, error_member, u);
    }
    return mp_json_skip(j, depth);
}

void mp_loadgen_sse_classify(const char *data, size_t n, struct mp_loadgen_sse_event *ev)
{
    ev->prompt_tokens = ev->completion_tokens = -1;
    ev->text = ev->msg = NULL;
    ev->text_len = ev->msg_len = 0;
    if (n == 6 && memcmp(data, "[DONE]", 6) == 0) {
        ev->kind = MP_LOADGEN_SSE_DONE;
        return;
    }
    struct mp_json_cur j = {data, data + n, NULL, eof_msg};
    struct scan sc = {ev, false, false, false};
    mp_json_ws(&j);
    bool ok = js_object(&j, 0, top_member, &sc);
    if (ok) {
        mp_json_ws(&j);
        if (j.p != j.end)
            ok = mp_json_fail(&j, "trailing bytes after the JSON object");
    }
    if (!ok) {
        ev->kind = MP_LOADGEN_SSE_BAD;
        ev->msg = j.err ? j.err : "invalid JSON";
        ev->msg_len = strlen(ev->msg);
        ev->text = NULL;
        ev->text_len = 0;
        return;
    }
    if (sc.choices_nonempty)
        ev->kind = MP_LOADGEN_SSE_TOKEN;
    else if (sc.error)
        ev->kind = MP_LOADGEN_SSE_ERROR;
    else if (sc.usage_obj)
        ev->kind = MP_LOADGEN_SSE_USAGE;
    else
        ev->kind = MP_LOADGEN_SSE_OTHER;
}

/* ---- the SSE state machine ---- */

static int dispatch(struct mp_loadgen_sse *s)
{
    int rc = 0;
    if (s->has_data) {
        struct mp_loadgen_sse_event ev;
        mp_loadgen_sse_classify(s->data.data ? s->data.data : "", s->data.len, &ev);
        ev.t_ns = s->ev_t_ns;
        rc = s->fn ? s->fn(&ev, s->user) : 0;
    }
    s->data.len = 0;
    s->has_data = false;
    s->in_event = false;
    return rc;
}

/* The first '\n' or '\r' in [p, end), or end. */
static const char *line_end(const char *p, const char *end)
{
    while (p < end && *p != '\n' && *p != '\r')
        p++;
    return p;
}

/* At a line's end (p == end: the line goes on in the next read): past the
 * '\n' or '\r' there, with the next line to start. */
static const char *past_line_end(struct mp_loadgen_sse *s, const char *p, const char *end)
{
    if (p < end) {
        s->cr = *p == '\r';
        p++;
        s->state = ST_LINE;
    }
    return p;
}

int mp_loadgen_sse_feed(struct mp_loadgen_sse *s, const char *p, size_t n, uint64_t t_ns)
{
    const char *end = p + n;
    int rc;
    while (p < end) {
        char c = *p;
        if (s->cr) {
            s->cr = false;
            if (c == '\n') { /* second half of a CRLF split across reads */
                p++;
                continue;
            }
        }
        switch (s->state) {
        case ST_LINE:
            if (c == '\n' || c == '\r') { /* blank line: end of event */
                s->cr = c == '\r';
                p++;
                if (s->in_event && (rc = dispatch(s)))
                    return rc;
                s->in_event = false;
                continue;
            }
            if (!s->in_event) {
                s->in_event = true;
                s->ev_t_ns = s->first_t_ns ? s->first_t_ns : t_ns;
                s->first_t_ns = 0;
            }
            if (c == ':') {
                s->state = ST_SKIP;
                p++;
                continue;
            }
            s->field_len = 0;
            s->state = ST_FIELD;
            continue;
        case ST_FIELD:
            if (c == ':') {
                p++;
                if (s->field_len == 4 && memcmp(s->field, "data", 4) == 0) {
                    if (s->has_data && mp_buf_putc(&s->data, '\n'))
                        return MP_ENOMEM;
                    s->has_data = true;
                    s->state = ST_VALUE_START;
                } else {
                    s->state = ST_SKIP;
                }
                continue;
            }
            if (c == '\n' || c == '\r') { /* a field name alone: ignored */
                s->cr = c == '\r';
                p++;
                s->state = ST_LINE;
                continue;
            }
            if (s->field_len < (int)sizeof(s->field))
                s->field[s->field_len] = c;
            s->field_len++;
            p++;
            continue;
        case ST_VALUE_START:
            s->state = ST_DATA;
            if (c == ' ') {
                p++;
                continue;
            }
            continue;
        case ST_DATA: {
            const char *q = line_end(p, end);
            if (q > p && mp_buf_append(&s->data, p, (size_t)(q - p)))
                return MP_ENOMEM;
            p = past_line_end(s, q, end);
            continue;
        }
        case ST_SKIP:
        default:
            p = past_line_end(s, line_end(p, end), end);
            continue;
        }
    }
    return 0;
}

int mp_loadgen_sse_finish(struct mp_loadgen_sse *s)
{
    int rc = 0;
    if (s->in_event)
        rc = dispatch(s);
    s->state = ST_LINE;
    s->cr = false;
    return rc;
}
