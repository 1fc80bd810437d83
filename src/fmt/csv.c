/* CSV writer following Python's csv.writer defaults (QUOTE_MINIMAL, doubled
 * quotes, "\r\n" line ends), so files match what Magpie and TraceLens write. */
#include <stdio.h>
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
