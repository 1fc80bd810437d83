/* JSON text helpers: string escaping and shortest round-trip doubles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>

int mp_json_str(struct mp_buf *b, const char *s, size_t n)
{
    int rc = mp_buf_putc(b, '"');
    size_t start = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        rc = mp_buf_append(b, s + start, i - start);
        start = i + 1;
        if (rc)
            break;
        switch (ch) {
        case '"':
            rc = mp_buf_puts(b, "\\\"");
            break;
        case '\\':
            rc = mp_buf_puts(b, "\\\\");
            break;
        case '\n':
            rc = mp_buf_puts(b, "\\n");
            break;
        case '\r':
            rc = mp_buf_puts(b, "\\r");
            break;
        case '\t':
            rc = mp_buf_puts(b, "\\t");
            break;
        default:
            rc = mp_buf_printf(b, "\\u%04x", ch);
            break;
        }
    }
    if (!rc)
        rc = mp_buf_append(b, s + start, n - start);
    if (!rc)
        rc = mp_buf_putc(b, '"');
    return rc;
}

/* Shortest %.{p}g that round-trips, p in 1..17. */
static int shortest_g(double v, char *buf, size_t len)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, len, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return p;
    }
    return 17;
}

void mp_fmt_pyfloat(double v, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "inf" : "-inf");
        return;
    }
    char g[40];
    shortest_g(v, g, sizeof(g));
    /* Python repr uses exponent form when exp < -4 or exp >= 16, else fixed
     * notation with at least one digit after the point. */
    int exp10 = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    char digits[40];
    snprintf(digits, sizeof(digits), "%.*e", 16, v); /* for exact exponent */
    const char *e = strchr(digits, 'e');
    if (e)
        exp10 = atoi(e + 1);
    if (exp10 < -4 || exp10 >= 16) {
        /* Python: mantissa digits then e+XX / e-XX with at least 2 exponent digits */
        char m[40];
        int p = shortest_g(v, m, sizeof(m));
        snprintf(m, sizeof(m), "%.*e", p - 1, v);
        char *ep = strchr(m, 'e');
        char mant[40];
        size_t ml = ep ? (size_t)(ep - m) : strlen(m);
        memcpy(mant, m, ml);
        mant[ml] = '\0';
        int ex = ep ? atoi(ep + 1) : 0;
        snprintf(buf, len, "%se%c%02d", mant, ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
        return;
    }
    /* fixed notation: find the minimal decimals that round-trip */
    for (int dec = 0; dec <= 20; dec++) {
        char f[64];
        snprintf(f, sizeof(f), "%.*f", dec, v);
        if (strtod(f, NULL) == v) {
            if (dec == 0)
                snprintf(buf, len, "%s.0", f);
            else
                snprintf(buf, len, "%s", f);
            return;
        }
    }
    snprintf(buf, len, "%s", g);
}

int mp_json_double(struct mp_buf *b, double v)
{
    if (!isfinite(v))
        return mp_buf_puts(b, "null");
    char tmp[64];
    mp_fmt_pyfloat(v, tmp, sizeof(tmp));
    return mp_buf_puts(b, tmp);
}
