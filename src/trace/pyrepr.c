/* Python's repr() of JSON values, as json.loads then repr() print them: the
 * one writer for TraceLens's CSV cells (lists as tuples, its list_to_tuple)
 * and the gap analysis's Input Dims (lists as lists). Strings take Python's
 * quote choice and escapes, true/false/null become True/False/None, floats
 * Python's shortest round trip, and the NaN / Infinity / -Infinity literals
 * that Python's json accepts become nan / inf / -inf. */
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/jsonlex.h>
#include <magpie/trace.h>

int mp_trace_pystr_repr(struct mp_buf *b, const char *s, size_t n)
{
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    int rc = mp_buf_putc(b, q);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t run = i; /* a run of bytes printed as they are, copied at once */
        while (run < n && (unsigned char)s[run] >= 0x20 && s[run] != 0x7f && s[run] != q &&
               s[run] != '\\')
            run++;
        if (run > i) {
            rc = mp_buf_append(b, s + i, run - i);
            i = run - 1;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == (unsigned char)q || c == '\\') {
            rc = mp_buf_putc(b, '\\');
            rc = rc ? rc : mp_buf_putc(b, (char)c);
        } else if (c == '\n')
            rc = mp_buf_puts(b, "\\n");
        else if (c == '\r')
            rc = mp_buf_puts(b, "\\r");
        else if (c == '\t')
            rc = mp_buf_puts(b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            rc = mp_buf_printf(b, "\\x%02x", c);
        else
            rc = mp_buf_putc(b, (char)c);
    }
    return rc ? rc : mp_buf_putc(b, q);
}

static int repr_value(struct mp_buf *b, const char *p, const char *e, bool tuples)
{
    p = mp_json_skip_ws(p, e);
    if (p >= e)
        return mp_buf_puts(b, "None");
    switch (*p) {
    case '[': {
        /* list -> tuple (TraceLens's list_to_tuple) or list */
        int rc = mp_buf_putc(b, tuples ? '(' : '[');
        p = mp_json_skip_ws(p + 1, e);
        int count = 0;
        while (!rc && p < e && *p != ']') {
            const char *ve = mp_json_value_end(p, e);
            if (count)
                rc = mp_buf_puts(b, ", ");
            if (!rc)
                rc = repr_value(b, p, ve, tuples);
            count++;
            p = mp_json_next_item(ve, e);
        }
        if (!rc && count == 1 && tuples)
            rc = mp_buf_putc(b, ',');
        return rc ? rc : mp_buf_putc(b, tuples ? ')' : ']');
    }
    case '{': {
        int rc = mp_buf_putc(b, '{');
        p = mp_json_skip_ws(p + 1, e);
        int count = 0;
        while (!rc && p < e && *p != '}') {
            const char *ke = mp_json_value_end(p, e);
            if (count)
                rc = mp_buf_puts(b, ", ");
            if (!rc)
                rc = repr_value(b, p, ke, tuples);
            p = mp_json_skip_ws(ke, e);
            if (p < e && *p == ':')
                p = mp_json_skip_ws(p + 1, e);
            const char *ve = mp_json_value_end(p, e);
            if (!rc)
                rc = mp_buf_puts(b, ": ");
            if (!rc)
                rc = repr_value(b, p, ve, tuples);
            count++;
            p = mp_json_next_item(ve, e);
        }
        return rc ? rc : mp_buf_putc(b, '}');
    }
    case '"': {
        /* most strings have no escapes: repr straight from the raw text */
        if (e - p >= 2 && memchr(p + 1, '\\', (size_t)(e - p - 2)) == NULL)
            return mp_trace_pystr_repr(b, p + 1, (size_t)(e - p - 2));
        struct mp_buf s;
        mp_buf_init(&s, 0);
        struct mp_strview raw = {p, (size_t)(e - p)};
        int rc = mp_trace_json_string(raw, &s);
        if (!rc)
            rc = mp_trace_pystr_repr(b, s.data ? s.data : "", s.len);
        mp_buf_fini(&s);
        return rc;
    }
    case 't':
        return mp_buf_puts(b, "True");
    case 'f':
        return mp_buf_puts(b, "False");
    case 'n':
        return mp_buf_puts(b, "None");
    default: {
        bool flt = false; /* NaN, Infinity, -Infinity too: Python's nan, inf, -inf */
        for (const char *q = p; q < e; q++)
            if (*q == '.' || *q == 'e' || *q == 'E' || *q == 'N' || *q == 'I')
                flt = true;
        if (!flt)
            return mp_buf_append(b, p, (size_t)(e - p));
        char tmp[128];
        size_t n = (size_t)(e - p) < sizeof(tmp) - 1 ? (size_t)(e - p) : sizeof(tmp) - 1;
        memcpy(tmp, p, n);
        tmp[n] = '\0';
        char out[64];
        mp_fmt_pyfloat(strtod(tmp, NULL), out, sizeof(out));
        return mp_buf_puts(b, out);
    }
    }
}

int mp_trace_json_pyrepr(struct mp_buf *b, const char *p, const char *e, bool tuples)
{
    return repr_value(b, p, e, tuples);
}
