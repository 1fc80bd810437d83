/* CSV writer following Python's csv.writer defaults (QUOTE_MINIMAL, doubled
 * quotes, "\r\n" line ends), so files match what Magpie and TraceLens write,
 * and the matching record reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>

void mp_csv_init(struct mp_csv *c, struct mp_buf *out, const char *eol)
{
    c->out = out;
    c->eol = eol ? eol : "\r\n";
    c->row_open = false;
}

int mp_csv_field(struct mp_csv *c, const char *s, size_t n)
{
    int rc = 0;
    if (c->row_open)
        rc = mp_buf_putc(c->out, ',');
    c->row_open = true;
    if (rc)
        return rc;
    bool quote = false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == ',' || ch == '"' || ch == '\r' || ch == '\n') {
            quote = true;
            break;
        }
    }
    if (!quote)
        return mp_buf_append(c->out, s, n);
    rc = mp_buf_putc(c->out, '"');
    size_t start = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (s[i] == '"') {
            rc = mp_buf_append(c->out, s + start, i + 1 - start);
            if (!rc)
                rc = mp_buf_putc(c->out, '"');
            start = i + 1;
        }
    }
    if (!rc)
        rc = mp_buf_append(c->out, s + start, n - start);
    if (!rc)
        rc = mp_buf_putc(c->out, '"');
    return rc;
}

int mp_csv_str(struct mp_csv *c, const char *s)
{
    return mp_csv_field(c, s ? s : "", s ? strlen(s) : 0);
}

int mp_csv_fmt(struct mp_csv *c, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return MP_EINVAL;
    if ((size_t)n >= sizeof(tmp))
        n = (int)sizeof(tmp) - 1;
    return mp_csv_field(c, tmp, (size_t)n);
}

int mp_csv_end_row(struct mp_csv *c)
{
    c->row_open = false;
    return mp_buf_puts(c->out, c->eol);
}

int mp_csv_next(const char **pp, const char *end, struct mp_csv_rec *rec, size_t max_fields)
{
    const char *p = *pp;
    if (p >= end)
        return 0;
    mp_buf_reset(&rec->text);
    rec->n = 0;
    int rc = 0;
    for (;;) {
        if (rec->n == rec->cap) {
            if (rec->cap >= max_fields)
                return MP_EUNSUP;
            if (MP_GROW(rec->off, rec->cap, rec->n + 1, 64))
                return MP_ENOMEM;
        }
        rec->off[rec->n++] = rec->text.len;
        if (p < end && *p == '"') {
            p++;
            for (;;) {
                const char *q = memchr(p, '"', (size_t)(end - p));
                if (!q) { /* unterminated: keep the rest */
                    rc = mp_buf_append(&rec->text, p, (size_t)(end - p));
                    p = end;
                    break;
                }
                rc = mp_buf_append(&rec->text, p, (size_t)(q - p));
                if (rc)
                    return rc;
                if (q + 1 < end && q[1] == '"') {
                    rc = mp_buf_putc(&rec->text, '"');
                    if (rc)
                        return rc;
                    p = q + 2;
                    continue;
                }
                p = q + 1;
                break;
            }
        }
        /* unquoted text (or stray text after a closing quote, kept as Python does) */
        const char *s = p;
        while (p < end && *p != ',' && *p != '\n' && *p != '\r')
            p++;
        rc = rc ? rc : mp_buf_append(&rec->text, s, (size_t)(p - s));
        rc = rc ? rc : mp_buf_putc(&rec->text, '\0');
        if (rc)
            return rc;
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '\r')
            p++;
        if (p < end && *p == '\n')
            p++;
        break;
    }
    *pp = p;
    return 1;
}

void mp_csv_rec_fini(struct mp_csv_rec *rec)
{
    mp_buf_fini(&rec->text);
    free(rec->off);
    rec->off = NULL;
    rec->n = rec->cap = 0;
}
