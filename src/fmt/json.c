/* JSON text helpers: string escaping and shortest round-trip doubles. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>

/* s[0..n) escaped for inside a JSON string literal (no quotes). */
static int escape_run(struct mp_buf *b, const char *s, size_t n)
{
    int rc = 0;
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
    return rc ? rc : mp_buf_append(b, s + start, n - start);
}

int mp_json_str(struct mp_buf *b, const char *s, size_t n)
{
    int rc = mp_buf_putc(b, '"');
    rc = rc ? rc : escape_run(b, s, n);
    return rc ? rc : mp_buf_putc(b, '"');
}

int mp_json_str_ascii(struct mp_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    int rc = mp_buf_putc(b, '"');
    while (p < end && !rc) {
        const unsigned char *q = p;
        while (q < end && *q < 0x7F)
            q++;
        rc = escape_run(b, (const char *)p, (size_t)(q - p));
        if (rc || q >= end)
            break;
        /* one code point from UTF-8; an invalid byte stands for U+FFFD */
        uint32_t cp = *q;
        size_t len = 1;
        int extra = *q >= 0xF0 ? 3 : *q >= 0xE0 ? 2 : *q >= 0xC0 ? 1 : 0;
        if (extra && (size_t)(end - q) > (size_t)extra) {
            cp = extra == 3 ? *q & 0x07u : extra == 2 ? *q & 0x0Fu : *q & 0x1Fu;
            bool ok = true;
            for (int k = 1; k <= extra && ok; k++) {
                ok = (q[k] & 0xC0) == 0x80;
                cp = (cp << 6) | (q[k] & 0x3Fu);
            }
            if (ok)
                len = (size_t)extra + 1;
            else
                cp = 0xFFFD;
        } else if (*q >= 0x80) {
            cp = 0xFFFD;
        }
        if (cp >= 0x10000)
            rc = mp_buf_printf(b, "\\u%04x\\u%04x", 0xD800 + ((cp - 0x10000) >> 10),
                               0xDC00 + ((cp - 0x10000) & 0x3FF));
        else
            rc = mp_buf_printf(b, "\\u%04x", cp);
        p = q + len;
    }
    return rc ? rc : mp_buf_putc(b, '"');
}

/* Writes the decimal digits of m > 0 without its trailing zeros (they are
 * not digits of the repr) to digits, NUL-terminated (at most 21 bytes);
 * returns how many digits m has, trailing zeros included. */
static int put_digits(uint64_t m, char *digits)
{
    char tmp[20];
    int n = 0;
    for (uint64_t u = m; u; u /= 10)
        tmp[n++] = (char)('0' + (int)(u % 10)); /* least significant first */
    int first = 0;
    while (first < n - 1 && tmp[first] == '0')
        first++;
    size_t o = 0;
    for (int i = n - 1; i >= first; i--)
        digits[o++] = tmp[i];
    digits[o] = '\0';
    return n;
}

/* The fast path of shortest_digits for the values reports are made of
 * (durations, percentages, shapes): |v| in [1e-4, 1e15) with at most 15
 * significant digits. For k = 0, 1, ... fractional digits, m = v*10^k
 * rounded is the only k-digit candidate (the product's error is below 0.2
 * while m < 1e15), and m / 10^k == v is exact IEEE division of two exact
 * values, i.e. exactly what reading the decimal back gives. Decimals of up
 * to 15 digits map to distinct doubles, so the first k that reads back is
 * the shortest round trip, the one Python's repr prints. Returns INT_MIN
 * when the value is outside that range (the caller then uses the slow
 * search), MORE_THAN_15_DIGITS when it is inside but has no decimal of up to
 * 15 significant digits: every k whose m stays below 1e15 was tried. */
#define MORE_THAN_15_DIGITS (INT_MIN + 1)

static int shortest_digits_fixed(double v, char *digits, size_t len)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
                                 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 1e15) || len < 17)
        return INT_MIN;
    for (int k = 0; k < 20; k++) { /* a >= 1e-4: x reaches 1e15 by k = 19 */
        double x = a * p10[k];
        if (x >= 1e15)
            return MORE_THAN_15_DIGITS;
        double m = nearbyint(x);
        if (m == 0 || m / p10[k] != a)
            continue;
        /* decimal exponent of the first digit */
        return put_digits((uint64_t)m, digits) - 1 - k;
    }
    return INT_MIN;
}

/* The exact path for the rest of [1e-4, 1e15): a = M * 2^E (M the 53-bit
 * significand, -67 <= E <= -2 there), so a * 10^k = M * 5^k * 2^(E+k) and
 * both the correctly rounded p-digit decimal and the test that it reads
 * back as a are integer arithmetic in 128 bits, as printf's %.*e and strtod
 * would do them (ties to even both ways), without either. */
__extension__ typedef unsigned __int128 fmt_u128;

static fmt_u128 pow_u128(unsigned base, int k)
{
    fmt_u128 r = 1;
    while (k-- > 0)
        r *= base;
    return r;
}

/* The p-digit decimal D nearest a (ties to even), with *e the decimal
 * exponent of its first digit; false if e cannot be placed (not expected). */
static bool round_digits(uint64_t M, int E, int p, int *e, uint64_t *D)
{
    for (int tries = 0; tries < 4; tries++) {
        int k = p - 1 - *e;
        if (k < 0 || k > 20)
            return false;
        fmt_u128 n = (fmt_u128)M * pow_u128(5, k), fl, d;
        int sh = E + k;
        if (sh >= 0) {
            fl = d = n << sh;
        } else {
            fl = n >> -sh;
            fmt_u128 rem = n - (fl << -sh), half = (fmt_u128)1 << (-sh - 1);
            d = fl + (rem > half || (rem == half && (fl & 1)));
        }
        fmt_u128 lo = pow_u128(10, p - 1), hi = lo * 10;
        if (fl < lo) {
            (*e)--;
            continue;
        }
        if (fl >= hi) {
            (*e)++;
            continue;
        }
        if (d == hi) { /* 9.99...95 rounds up to the next power of ten */
            d = lo;
            (*e)++;
        }
        *D = (uint64_t)d;
        return true;
    }
    return false;
}

/* Does D * 10^-k read back as M * 2^E (E < 0)? Inside the half-ulp
 * interval around it, a tie on its edge going to the even significand; the
 * interval below a power of two is half as wide. */
static bool reads_back(uint64_t D, int k, uint64_t M, int E)
{
    fmt_u128 lhs = (fmt_u128)D << (1 - E), tk = pow_u128(10, k);
    bool even = (M & 1) == 0;
    fmt_u128 up = (fmt_u128)(2 * M + 1) * tk;
    if (lhs > up || (lhs == up && !even))
        return false;
    if (M == (uint64_t)1 << 52) {
        fmt_u128 lo = (fmt_u128)(4 * M - 1) * tk;
        return (lhs << 1) > lo || ((lhs << 1) == lo && even);
    }
    fmt_u128 lo = (fmt_u128)(2 * M - 1) * tk;
    return lhs > lo || (lhs == lo && even);
}

/* shortest_digits for |v| in [1e-4, 1e15): the correctly rounded p-digit
 * decimal for p = p0..17, the first that reads back; INT_MIN outside. */
static int shortest_digits_exact(double v, int p0, char *digits, size_t len)
{
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 1e15) || len < 18)
        return INT_MIN;
    int E;
    double fr = frexp(a, &E);
    uint64_t M = (uint64_t)ldexp(fr, 53);
    E -= 53;
    int e = (int)floor(log10(a)), p = p0;
    uint64_t D = 0;
    for (; p <= 17; p++) {
        if (!round_digits(M, E, p, &e, &D))
            return INT_MIN;
        if (p == 17 || reads_back(D, p - 1 - e, M, E))
            break;
    }
    put_digits(D, digits);
    return e;
}

/* Shortest round-trip digits of a finite, non-zero v: the correctly rounded
 * 15-, 16- or 17-digit decimal, whichever is the first to read back as v
 * (a shorter shortest form is the 15-digit one with its trailing zeros
 * dropped). Writes the digits (no dot, no sign) and returns the decimal
 * exponent of the first digit. */
static int shortest_digits(double v, char *digits, size_t len)
{
    int fe = shortest_digits_fixed(v, digits, len);
    if (fe != INT_MIN && fe != MORE_THAN_15_DIGITS)
        return fe;
    int ex = shortest_digits_exact(v, fe == MORE_THAN_15_DIGITS ? 16 : 15, digits, len);
    if (ex != INT_MIN)
        return ex;
    char buf[40];
    /* subnormals carry fewer digits: search from 1 digit up for them; the
     * 15-digit decimal is known not to read back when the fast path says so */
    int p0 = fe == MORE_THAN_15_DIGITS ? 16 : fabs(v) < DBL_MIN ? 1 : 15;
    for (int p = p0; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v || p == 17)
            break;
    }
    /* buf: [-]d.ddddde[+-]xx */
    const char *q = buf + (buf[0] == '-');
    size_t n = 0;
    for (; *q && *q != 'e'; q++)
        if (*q != '.' && n + 1 < len)
            digits[n++] = *q;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return atoi(q + 1);
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
    if (v == 0) {
        snprintf(buf, len, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char d[40] = {0}, out[64]; /* d zeroed: the analyzer cannot follow snprintf */
    int e = shortest_digits(v, d, sizeof(d));
    int nd = (int)strlen(d);
    size_t o = 0;
    if (v < 0)
        out[o++] = '-';
    if (e < -4 || e >= 16) {
        /* Python repr: d[.ddd]e[+-]XX with at least two exponent digits */
        out[o++] = d[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++)
                out[o++] = d[i];
        }
        snprintf(out + o, sizeof(out) - o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (e < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = -1; i > e; i--)
            out[o++] = '0';
        for (int i = 0; i < nd; i++)
            out[o++] = d[i];
        out[o] = '\0';
    } else {
        for (int i = 0; i <= e; i++)
            out[o++] = i < nd ? d[i] : '0';
        out[o++] = '.';
        if (nd > e + 1) {
            for (int i = e + 1; i < nd; i++)
                out[o++] = d[i];
        } else {
            out[o++] = '0';
        }
        out[o] = '\0';
    }
    size_t on = strlen(out);
    if (len) {
        on = on < len - 1 ? on : len - 1;
        memcpy(buf, out, on);
        buf[on] = '\0';
    }
}

int mp_json_double(struct mp_buf *b, double v)
{
    if (!isfinite(v))
        return mp_buf_puts(b, "null");
    char tmp[64];
    mp_fmt_pyfloat(v, tmp, sizeof(tmp));
    return mp_buf_puts(b, tmp);
}
