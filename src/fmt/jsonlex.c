/* The JSON lexing core (include/magpie/jsonlex.h): the whitespace table,
 * strict scanning of a flat buffer (strings, numbers, keys, one skipped
 * value with a nesting limit) and the end of a value in text already known
 * to be valid. The small per-byte helpers are inline in the header. */
#include <string.h>

#include <magpie/jsonlex.h>

const unsigned char mp_json_ws_table[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

bool mp_json_fail(struct mp_json_cur *c, const char *msg)
{
    if (!c->err)
        c->err = msg;
    return false;
}

bool mp_json_string(struct mp_json_cur *c, const char **s, size_t *n)
{
    if (c->p >= c->end || *c->p != '"')
        return mp_json_fail(c, "expected a string");
    const char *start = ++c->p;
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '"') {
            if (s)
                *s = start;
            if (n)
                *n = (size_t)(c->p - start);
            c->p++;
            return true;
        }
        if (ch < 0x20)
            return mp_json_fail(c, "control character in string");
        if (ch != '\\') {
            c->p++;
            continue;
        }
        int used = mp_json_unescape(c->p, c->end, NULL, NULL);
        switch (used) {
        case MP_JSON_ESC_END:
            return mp_json_fail(c, "unterminated string");
        case MP_JSON_ESC_SHORT:
            return mp_json_fail(c, "truncated \\u escape");
        case MP_JSON_ESC_BAD_U:
            return mp_json_fail(c, "bad \\u escape");
        case MP_JSON_ESC_BAD:
            return mp_json_fail(c, "bad escape in string");
        default:
            c->p += used;
        }
    }
    return mp_json_fail(c, "unterminated string");
}

static bool is_digit(const char *p, const char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

bool mp_json_number(struct mp_json_cur *c, int64_t *iv, bool *is_int)
{
    const char *p = c->p, *end = c->end;
    bool neg = false, integral = true, overflow = false;
    int64_t v = 0;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (!is_digit(p, end))
        return mp_json_fail(c, "bad number");
    if (*p == '0') {
        p++;
    } else {
        for (; is_digit(p, end); p++) {
            if (v > (INT64_MAX - 9) / 10)
                overflow = true;
            else
                v = v * 10 + (*p - '0');
        }
    }
    if (p < end && *p == '.') {
        integral = false;
        if (!is_digit(++p, end))
            return mp_json_fail(c, "bad number fraction");
        while (is_digit(p, end))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integral = false;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!is_digit(p, end))
            return mp_json_fail(c, "bad number exponent");
        while (is_digit(p, end))
            p++;
    }
    c->p = p;
    if (is_int)
        *is_int = integral && !overflow;
    if (iv)
        *iv = neg ? -v : v;
    return true;
}

static bool literal(struct mp_json_cur *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return mp_json_fail(c, "bad literal");
    c->p += n;
    return true;
}

bool mp_json_key(struct mp_json_cur *c, const char **k, size_t *kn)
{
    mp_json_ws(c);
    if (!mp_json_string(c, k, kn))
        return false;
    mp_json_ws(c);
    if (c->p >= c->end || *c->p != ':')
        return mp_json_fail(c, "expected ':'");
    c->p++;
    mp_json_ws(c);
    return true;
}

bool mp_json_first(struct mp_json_cur *c, char close)
{
    mp_json_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return false;
    }
    return true;
}

int mp_json_more(struct mp_json_cur *c, char close)
{
    mp_json_ws(c);
    if (c->p < c->end && (*c->p == ',' || *c->p == close))
        return *c->p++ == ',' ? 1 : 0;
    mp_json_fail(c, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    return -1;
}

bool mp_json_skip(struct mp_json_cur *c, int depth)
{
    if (depth > MP_JSON_MAX_DEPTH)
        return mp_json_fail(c, "nesting too deep");
    mp_json_ws(c);
    if (c->p >= c->end)
        return mp_json_fail(c, c->eof_msg ? c->eof_msg : "unexpected end of JSON text");
    switch (*c->p) {
    case '"':
        return mp_json_string(c, NULL, NULL);
    case '{':
    case '[': {
        char close = *c->p++ == '{' ? '}' : ']';
        int more = mp_json_first(c, close);
        for (; more > 0; more = mp_json_more(c, close))
            if ((close == '}' && !mp_json_key(c, NULL, NULL)) || !mp_json_skip(c, depth + 1))
                return false;
        return more == 0;
    }
    case 't':
        return literal(c, "true");
    case 'f':
        return literal(c, "false");
    case 'n':
        return literal(c, "null");
    default:
        return mp_json_number(c, NULL, NULL);
    }
}

const char *mp_json_value_end(const char *p, const char *end)
{
    int depth = 0;
    bool in_str = false;
    for (; p < end; p++) {
        char ch = *p;
        if (in_str) {
            if (ch == '\\') {
                p++;
            } else if (ch == '"') {
                in_str = false;
                if (depth == 0)
                    return p + 1;
            }
            continue;
        }
        if (ch == '"') {
            in_str = true;
        } else if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            if (--depth <= 0)
                return depth == 0 ? p + 1 : p;
        } else if (depth == 0 && (ch == ',' || mp_json_ws_table[(unsigned char)ch])) {
            return p;
        }
    }
    return p;
}
