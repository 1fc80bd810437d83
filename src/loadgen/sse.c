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
 * The JSON scanner validates the whole event (strings, escapes, numbers,
 * literals, nesting) without building a tree, and extracts only what the
 * metrics need: whether "choices" is non-empty, the text of choices[0],
 * usage.prompt_tokens / usage.completion_tokens, and a top-level "error".
 */
#include <stdint.h>
#include <string.h>

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

/* ---- JSON scanning ---- */

struct js {
    const char *p, *end;
    const char *err;
};

static void js_ws(struct js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool js_fail(struct js *j, const char *msg)
{
    if (!j->err)
        j->err = msg;
    return false;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* At '"': validates the string and returns its raw (still escaped) content. */
static bool js_string(struct js *j, const char **s, size_t *n)
{
    if (j->p >= j->end || *j->p != '"')
        return js_fail(j, "expected a string");
    const char *start = ++j->p;
    while (j->p < j->end) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            if (s)
                *s = start;
            if (n)
                *n = (size_t)(j->p - start);
            j->p++;
            return true;
        }
        if (c < 0x20)
            return js_fail(j, "control character in string");
        if (c == '\\') {
            if (++j->p >= j->end)
                break;
            switch (*j->p) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                j->p++;
                break;
            case 'u':
                if (j->end - j->p < 5)
                    return js_fail(j, "truncated \\u escape");
                for (int k = 1; k <= 4; k++)
                    if (hexval(j->p[k]) < 0)
                        return js_fail(j, "bad \\u escape");
                j->p += 5;
                break;
            default:
                return js_fail(j, "bad escape in string");
            }
            continue;
        }
        j->p++;
    }
    return js_fail(j, "unterminated string");
}

/* JSON number grammar; *iv gets the value when it is an integer that fits. */
static bool js_number(struct js *j, int64_t *iv, bool *is_int)
{
    const char *p = j->p;
    bool neg = false, integral = true, overflow = false;
    int64_t v = 0;
    if (p < j->end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= j->end || *p < '0' || *p > '9')
        return js_fail(j, "bad number");
    if (*p == '0') {
        p++;
    } else {
        while (p < j->end && *p >= '0' && *p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                overflow = true;
            else
                v = v * 10 + (*p - '0');
            p++;
        }
    }
    if (p < j->end && *p == '.') {
        integral = false;
        p++;
        if (p >= j->end || *p < '0' || *p > '9')
            return js_fail(j, "bad number fraction");
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < j->end && (*p == 'e' || *p == 'E')) {
        integral = false;
        p++;
        if (p < j->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= j->end || *p < '0' || *p > '9')
            return js_fail(j, "bad number exponent");
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    j->p = p;
    if (is_int)
        *is_int = integral && !overflow;
    if (iv)
        *iv = neg ? -v : v;
    return true;
}

static bool js_lit(struct js *j, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
        return js_fail(j, "bad literal");
    j->p += n;
    return true;
}

/* Validates and skips one value. */
static bool js_value(struct js *j, int depth)
{
    if (depth > 64)
        return js_fail(j, "nesting too deep");
    js_ws(j);
    if (j->p >= j->end)
        return js_fail(j, "unexpected end of event data");
    switch (*j->p) {
    case '"':
        return js_string(j, NULL, NULL);
    case '{':
        j->p++;
        js_ws(j);
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            return true;
        }
        for (;;) {
            js_ws(j);
            if (!js_string(j, NULL, NULL))
                return false;
            js_ws(j);
            if (j->p >= j->end || *j->p != ':')
                return js_fail(j, "expected ':'");
            j->p++;
            if (!js_value(j, depth + 1))
                return false;
            js_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == '}') {
                j->p++;
                return true;
            }
            return js_fail(j, "expected ',' or '}'");
        }
    case '[':
        j->p++;
        js_ws(j);
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            return true;
        }
        for (;;) {
            if (!js_value(j, depth + 1))
                return false;
            js_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == ']') {
                j->p++;
                return true;
            }
            return js_fail(j, "expected ',' or ']'");
        }
    case 't':
        return js_lit(j, "true");
    case 'f':
        return js_lit(j, "false");
    case 'n':
        return js_lit(j, "null");
    default:
        return js_number(j, NULL, NULL);
    }
}

const char *loadgen_json_skip(const char *p, const char *end, const char **err)
{
    struct js j = {p, end, NULL};
    if (!js_value(&j, 0)) {
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
typedef bool (*member_fn)(struct js *j, const char *k, size_t kn, void *u, int depth);

static bool js_object(struct js *j, int depth, member_fn fn, void *u)
{
    if (depth > 64)
        return js_fail(j, "nesting too deep");
    if (j->p >= j->end || *j->p != '{')
        return js_fail(j, "expected an object");
    j->p++;
    js_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return true;
    }
    for (;;) {
        const char *k = NULL;
        size_t kn = 0;
        js_ws(j);
        if (!js_string(j, &k, &kn))
            return false;
        js_ws(j);
        if (j->p >= j->end || *j->p != ':')
            return js_fail(j, "expected ':'");
        j->p++;
        js_ws(j);
        if (j->p >= j->end) /* the member functions look at the value's first byte */
            return js_fail(j, "unexpected end of event data");
        if (!fn(j, k, kn, u, depth + 1))
            return false;
        js_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            return true;
        }
        return js_fail(j, "expected ',' or '}'");
    }
}

struct scan {
    struct mp_loadgen_sse_event *ev;
    bool choices_nonempty, usage_obj, error;
};

static bool text_member(struct js *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    if (*j->p == '"' && (key_is(k, kn, "text") || key_is(k, kn, "content")))
        return js_string(j, &sc->ev->text, &sc->ev->text_len);
    if (*j->p == '{' && key_is(k, kn, "delta"))
        return js_object(j, depth, text_member, u);
    return js_value(j, depth);
}

static bool usage_member(struct js *j, const char *k, size_t kn, void *u, int depth)
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
        if (!js_number(j, &v, &is_int))
            return false;
        if (is_int && v >= 0)
            *dst = v;
        return true;
    }
    return js_value(j, depth);
}

static bool error_member(struct js *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    if (*j->p == '"' && key_is(k, kn, "message"))
        return js_string(j, &sc->ev->msg, &sc->ev->msg_len);
    return js_value(j, depth);
}

static bool top_member(struct js *j, const char *k, size_t kn, void *u, int depth)
{
    struct scan *sc = u;
    if (key_is(k, kn, "choices") && *j->p == '[') {
        j->p++;
        js_ws(j);
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            return true;
        }
        sc->choices_nonempty = true;
        bool first = true;
        for (;;) {
            js_ws(j);
            bool ok = first && j->p < j->end && *j->p == '{'
                          ? js_object(j, depth + 1, text_member, u)
                          : js_value(j, depth + 1);
            if (!ok)
                return false;
            first = false;
            js_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == ']') {
                j->p++;
                return true;
            }
            return js_fail(j, "expected ',' or ']'");
        }
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
            return js_value(j, depth); /* "error": null is no error */
        sc->error = true;
        if (*j->p == '"')
            return js_string(j, &sc->ev->msg, &sc->ev->msg_len);
        if (*j->p == '{')
            return js_object(j, depth, error_member, u);
    }
    return js_value(j, depth);
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
    struct js j = {data, data + n, NULL};
    struct scan sc = {ev, false, false, false};
    js_ws(&j);
    bool ok = js_object(&j, 0, top_member, &sc);
    if (ok) {
        js_ws(&j);
        if (j.p != j.end)
            ok = js_fail(&j, "trailing bytes after the JSON object");
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
            const char *q = p;
            while (q < end && *q != '\n' && *q != '\r')
                q++;
            if (q > p && mp_buf_append(&s->data, p, (size_t)(q - p)))
                return MP_ENOMEM;
            p = q;
            if (p < end) {
                s->cr = *p == '\r';
                p++;
                s->state = ST_LINE;
            }
            continue;
        }
        case ST_SKIP:
        default: {
            const char *q = p;
            while (q < end && *q != '\n' && *q != '\r')
                q++;
            p = q;
            if (p < end) {
                s->cr = *p == '\r';
                p++;
                s->state = ST_LINE;
            }
            continue;
        }
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
