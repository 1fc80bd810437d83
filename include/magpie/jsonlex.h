/* magpie jsonlex: the lexing pieces shared by magpie's own JSON readers.
 *
 * Several modules read JSON with a driver of their own, each shaped by its
 * job: the streaming trace parser (src/trace/parse.c, which stops at the end
 * of a read window and tries the unit again), the flat args reader of the
 * roofline model (src/roofline/pjson.c), the SSE event scanner of loadgen
 * (src/loadgen/sse.c) and the Python-repr writers of gap analysis and
 * TraceLens. What they have in common lives here:
 *
 *  - hex digits, backslash escapes with \u surrogate pairs decoded to UTF-8,
 *    and whitespace: static inline, as the trace parser runs them per byte;
 *  - over a flat, complete buffer (struct mp_json_cur): strict scanning of a
 *    string, a number, an object key, and skipping one value with a nesting
 *    limit, each recording the first error as a short static message;
 *  - over text already known to be valid JSON: the end of one value and the
 *    step to the next element of a list or object.
 *
 * Nothing here allocates, and nothing is kept between calls. This is not a
 * JSON reader: it builds no values (jansson does where a tree is wanted).
 */
#ifndef MAGPIE_JSONLEX_H
#define MAGPIE_JSONLEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- bytes ---- */

/* 1 for the four JSON whitespace bytes (' ', '\t', '\n', '\r'), else 0. */
extern const unsigned char mp_json_ws_table[256];

static inline const char *mp_json_skip_ws(const char *p, const char *end)
{
    while (p < end && mp_json_ws_table[(unsigned char)*p])
        p++;
    return p;
}

/* The value of one hex digit, or -1. */
static inline int mp_json_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The four hex digits p[0..3] (the caller has checked that they exist) as
 * one UTF-16 code unit, or -1 when one of them is not a hex digit. */
static inline int32_t mp_json_hex4(const char *p)
{
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = mp_json_hexval(p[i]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

/* cp (below 0x110000) as UTF-8 into o (room for 4 bytes); returns the count
 * of bytes. A surrogate code point is written in its 3-byte form, as Python
 * writes a lone surrogate. */
static inline size_t mp_json_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- backslash escapes ---- */

/* What mp_json_unescape returns for an escape it cannot read. */
enum {
    MP_JSON_ESC_END = -1,   /* the input ends right after the backslash */
    MP_JSON_ESC_SHORT = -2, /* the input ends inside a \u escape (or, when
                               decoding, before it is known whether a low
                               surrogate follows a high one) */
    MP_JSON_ESC_BAD_U = -3, /* \u without four hex digits */
    MP_JSON_ESC_BAD = -4,   /* a backslash before another byte than
                               " \ / b f n r t u */
};

/* The \u escape at p (p[0] == '\\', p[1] == 'u'); see mp_json_unescape. */
static inline int mp_json_unescape_u(const char *p, const char *end, char *o, size_t *n)
{
    if (end - p < 6)
        return MP_JSON_ESC_SHORT;
    int32_t cp = mp_json_hex4(p + 2);
    if (cp < 0)
        return MP_JSON_ESC_BAD_U;
    if (!o)
        return 6;
    int used = 6;
    if (cp >= 0xD800 && cp < 0xDC00) {
        /* a high surrogate: one code point with a low surrogate escape next */
        const char *q = p + 6;
        if (q >= end || (*q == '\\' && (q + 1 >= end || (q[1] == 'u' && end - q < 6))))
            return MP_JSON_ESC_SHORT;
        if (q[0] == '\\' && q[1] == 'u') {
            int32_t lo = mp_json_hex4(q + 2);
            if (lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                used = 12;
            }
        }
    }
    *n = mp_json_utf8(o, (uint32_t)cp);
    return used;
}

/* Reads the escape at p (p[0] == '\\') of a string in [p, end). With o, its
 * text is written to o as UTF-8 (at most 4 bytes; their count in *n): a
 * high-surrogate \u escape followed by a low-surrogate one is one code point
 * (12 input bytes), any other surrogate stands alone. Without o (only
 * validating) each \u escape is read alone. Returns the count of input bytes
 * read (2, 6 or 12) or a negative MP_JSON_ESC_*. The caller tells the cases
 * apart: END and SHORT mean "more input needed" to a streaming reader and an
 * error to one that holds all of it. */
static inline int mp_json_unescape(const char *p, const char *end, char *o, size_t *n)
{
    if (end - p < 2)
        return MP_JSON_ESC_END;
    char lit;
    switch (p[1]) {
    case '"':
        lit = '"';
        break;
    case '\\':
        lit = '\\';
        break;
    case '/':
        lit = '/';
        break;
    case 'b':
        lit = '\b';
        break;
    case 'f':
        lit = '\f';
        break;
    case 'n':
        lit = '\n';
        break;
    case 'r':
        lit = '\r';
        break;
    case 't':
        lit = '\t';
        break;
    case 'u':
        return mp_json_unescape_u(p, end, o, n);
    default:
        return MP_JSON_ESC_BAD;
    }
    if (o) {
        o[0] = lit;
        *n = 1;
    }
    return 2;
}

/* ---- strict scanning of a flat buffer ---- */

/* Nesting that mp_json_skip follows; deeper input is an error. */
#define MP_JSON_MAX_DEPTH 64

/* A complete JSON text being read: the position, the end, and the first
 * error met (a static message; NULL while there is none). eof_msg, when
 * set, replaces the message for "the text ends where a value must start". */
struct mp_json_cur {
    const char *p, *end;
    const char *err;
    const char *eof_msg;
};

static inline void mp_json_ws(struct mp_json_cur *c)
{
    c->p = mp_json_skip_ws(c->p, c->end);
}

/* Records msg as the error unless one is recorded; returns false. */
bool mp_json_fail(struct mp_json_cur *c, const char *msg);

/* At '"': checks the string (control bytes, escapes) and moves past it; the
 * raw content between the quotes, still escaped, goes to *s and *n (either
 * may be NULL). */
bool mp_json_string(struct mp_json_cur *c, const char **s, size_t *n);

/* One number of the JSON grammar (no NaN or Infinity); *iv gets its value
 * and *is_int says whether it is an integer that fits int64 (either may be
 * NULL). */
bool mp_json_number(struct mp_json_cur *c, int64_t *iv, bool *is_int);

/* At a member of an object (after '{' or ','): whitespace, the key string
 * (raw, as mp_json_string), ':' and the whitespace after it. */
bool mp_json_key(struct mp_json_cur *c, const char **k, size_t *kn);

/* Just past the '{' or '[' of a container closed by close: skips whitespace
 * and an immediate close; returns true when a first member follows. */
bool mp_json_first(struct mp_json_cur *c, char close);

/* After a member or element of a container closed by close: skips
 * whitespace, then a ',' (returns 1: another member follows) or close
 * (returns 0, past it); anything else is an error (returns -1). */
int mp_json_more(struct mp_json_cur *c, char close);

/* Checks one value of any type at c->p (after whitespace) and moves past it;
 * depth is the nesting of that value (0 at the top), at most
 * MP_JSON_MAX_DEPTH. */
bool mp_json_skip(struct mp_json_cur *c, int depth);

/* ---- text already known to be valid JSON ---- */

/* The end of the value that starts at p: past its closing quote or bracket,
 * or at the byte that ends a number or literal. Strings are skipped without
 * being checked. */
const char *mp_json_value_end(const char *p, const char *end);

/* From the end of an element of a list or object: past whitespace, one ','
 * and the whitespace after it, at the next element or the closing bracket. */
static inline const char *mp_json_next_item(const char *p, const char *end)
{
    p = mp_json_skip_ws(p, end);
    if (p < end && *p == ',')
        p = mp_json_skip_ws(p + 1, end);
    return p;
}

#endif
