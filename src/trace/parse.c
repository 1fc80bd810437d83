/* Streaming parser for PyTorch-profiler (Kineto) Chrome traces.
 *
 * The input is consumed through a window buffer. Each "unit" (one event of
 * traceEvents, or one top-level key/value pair) is parsed by a plain
 * recursive descent that is not resumable: when it runs out of bytes it
 * reports INCOMPLETE, the window is compacted so the unit starts at offset 0,
 * more input is read, and the unit is parsed again from its start. Units
 * almost never straddle a read boundary, so the cost of the retry is
 * negligible, and the code stays a simple descent. INCOMPLETE at the end of
 * the input is a truncation error, never a partial result.
 *
 * Values the analyses need (ph, name, cat, pid, tid, ts, dur, id and the args
 * "External id", "correlation", "Input Dims") are extracted during the scan;
 * everything else is skipped while its syntax is still validated, so any
 * input this parser accepts is valid JSON (up to UTF-8 validation and the
 * NaN/Infinity literals that Python's json module also accepts).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <magpie/jsonlex.h>
#include <magpie/trace.h>

#define DEFAULT_CHUNK ((size_t)4 << 20)
#define DEFAULT_MAX_UNIT ((size_t)256 << 20)
#define MAX_DEPTH 256

enum { ST_OK = 0, ST_INCOMPLETE = 1, ST_ERROR = 2 };

struct parser {
    struct mp_io_reader *r;
    const struct mp_trace_parse_opts *o;
    struct mp_diag *d;
    char *buf;
    size_t cap, len;
    uint64_t base; /* absolute offset of buf[0] */
    bool eof;
    char *scratch; /* decoded strings of the current unit; same capacity as buf */
    size_t scratch_len;
    int st;
    const char *err_at;
    char err_msg[256];
    uint64_t nevents;
    size_t max_unit, chunk;
    struct spl *sp; /* the pipelined parse's chunks (NULL: one window) */
};

struct spl;
static int spl_refill(struct parser *ps, size_t from, bool *more);
static int spl_splice(struct parser *ps, size_t *pos);
static struct mp_trace_event *spl_slot(struct parser *ps);
static void spl_slot_done(struct parser *ps, bool scanned);
static void spl_stage(struct parser *ps);
static int spl_take(struct parser *ps, char *dst, size_t want, size_t *got, uint64_t *raw_pos,
                    uint64_t *raw_size);

/* ---- character classes ---- */
static unsigned char str_special[256]; /* '"', '\\' or control character */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void fill_tables(void)
{
    for (int c = 0; c < 0x20; c++)
        str_special[c] = 1;
    str_special['"'] = 1;
    str_special['\\'] = 1;
}

/* Once per process, whichever thread parses first (worker threads too). */
static void init_tables(void)
{
    pthread_once(&tables_once, fill_tables);
}

static void set_error(struct parser *ps, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(struct parser *ps, const char *at, const char *fmt, ...)
{
    if (ps->st == ST_OK) {
        ps->st = ST_ERROR;
        ps->err_at = at;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err_msg, sizeof(ps->err_msg), fmt, ap);
        va_end(ap);
    }
}

/* Records the first error and evaluates to NULL. A macro so that the NULL is
 * visible at each call: clang's analyzer does not inline variadic functions. */
#define fail(ps, at, ...) (set_error((ps), (at), __VA_ARGS__), (const char *)NULL)

static const char *incomplete(struct parser *ps)
{
    if (ps->st == ST_OK)
        ps->st = ST_INCOMPLETE;
    return NULL;
}

static inline const char *skip_ws(const char *p, const char *end)
{
    return mp_json_skip_ws(p, end);
}

/* Scans a string starting at p ('"'). With out != NULL the decoded text is
 * returned: a view into the input when there are no escapes, else a copy in
 * scratch. Returns the position after the closing quote. */
/* First byte in [p, end) that is '"', '\\' or a control character, or end.
 * Trace strings are long (kernel names, shapes), so 16 bytes are tested at a
 * time where SSE2 exists (every x86-64). */
static inline const char *skip_plain(const char *p, const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash));
        /* unsigned v <= 0x1f exactly when min(v, 0x1f) == v */
        m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (p < end && !str_special[(unsigned char)*p])
        p++;
    return p;
}

static const char *scan_string(struct parser *ps, const char *p, const char *end,
                               struct mp_strview *out)
{
    const char *start = ++p;
    for (;;) {
        p = skip_plain(p, end);
        if (p >= end)
            return incomplete(ps);
        if (*p == '"') {
            if (out) {
                out->p = start;
                out->n = (size_t)(p - start);
            }
            return p + 1;
        }
        if (*p != '\\')
            return fail(ps, p, "control character 0x%02x inside a string", (unsigned char)*p);
        break; /* escapes: slow path below */
    }
    /* Slow path: decode into scratch (always large enough: decoded text is
     * never longer than its encoding, and scratch is as large as the window). */
    char *o = out ? ps->scratch + ps->scratch_len : NULL;
    size_t on = 0;
    if (o) {
        memcpy(o, start, (size_t)(p - start));
        on = (size_t)(p - start);
    }
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            if (out) {
                out->p = o;
                out->n = on;
                ps->scratch_len += on;
            }
            return p + 1;
        }
        if (c < 0x20)
            return fail(ps, p, "control character 0x%02x inside a string", c);
        if (c != '\\') {
            if (o)
                o[on++] = (char)c;
            p++;
            continue;
        }
        /* a lone surrogate (allowed by Python) comes out in its 3-byte form */
        size_t n = 0;
        int used = mp_json_unescape(p, end, o ? o + on : NULL, &n);
        if (used == MP_JSON_ESC_END || used == MP_JSON_ESC_SHORT)
            return incomplete(ps);
        if (used == MP_JSON_ESC_BAD_U)
            return fail(ps, p, "bad \\u escape in string");
        if (used < 0)
            return fail(ps, p, "bad escape '\\%c' in string", p[1]);
        on += n;
        p += used;
    }
    return incomplete(ps);
}

/* Fast exact decimal -> double for the common case (Clinger): mantissa below
 * 2^53 and a power of ten that is exact in a double. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

struct num {
    double d;
    int64_t i;
    bool is_int;   /* no fraction, no exponent, fits int64 */
    bool integral; /* value is an integer (also e.g. 5.0) within int64 */
};

/* The value of mant * 10^total_exp (neg: negated), exactly rounded: the
 * fast exact case when it applies, else strtod on the text [s, p). */
static bool num_value(struct parser *ps, const char *s, const char *p, uint64_t mant, bool neg,
                      bool overflow, bool is_int, int total_exp, struct num *out)
{
    double d;
    if (!overflow && mant < ((uint64_t)1 << 53) && total_exp >= -22 && total_exp <= 22) {
        d = (double)mant;
        d = total_exp < 0 ? d / pow10_exact[-total_exp] : d * pow10_exact[total_exp];
        if (neg)
            d = -d;
    } else {
        char tmp[128];
        size_t n = (size_t)(p - s);
        if (n < sizeof(tmp)) {
            memcpy(tmp, s, n);
            tmp[n] = '\0';
            d = strtod(tmp, NULL);
        } else {
            char *big = mp_strndup(s, n);
            if (!big) {
                set_error(ps, s, "out of memory");
                return false;
            }
            d = strtod(big, NULL);
            free(big);
        }
    }
    out->d = d;
    /* integers outside int64 are kept as doubles, as Python would compare them */
    out->is_int =
        is_int && !overflow && mant <= (neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX);
    if (out->is_int) {
        out->i = neg ? (int64_t)(0u - mant) : (int64_t)mant;
        out->integral = true;
    } else {
        /* below 2^63 in magnitude, d is integral exactly when truncation keeps it */
        out->integral = isfinite(d) && fabs(d) < 9.2e18 && d == (double)(int64_t)d;
        out->i = out->integral ? (int64_t)d : 0;
    }
    return true;
}

static const char *scan_number_slow(struct parser *ps, const char *p, const char *end,
                                    struct num *out);

/* Numbers of a trace are short: an integer or a plain decimal of at most 19
 * digits in all (timestamps have 16 or 17). Those take one tight pass here;
 * anything else (an exponent, more digits, Infinity, an error, the end of the
 * window) goes through scan_number_slow, which gives the same value. */
static const char *scan_number(struct parser *ps, const char *p, const char *end, struct num *out)
{
    const char *s = p, *q = p;
    bool neg = q < end && *q == '-';
    q += neg;
    if (q < end && (unsigned)(*q - '0') < 10u) {
        uint64_t mant = 0;
        const char *d0 = q;
        if (*q == '0')
            q++;
        else
            for (; q < end && (unsigned)(*q - '0') < 10u; q++)
                mant = mant * 10 + (uint64_t)(*q - '0');
        ptrdiff_t nd = q - d0, fd = 0;
        bool is_int = true;
        if (q < end && *q == '.') {
            const char *f0 = ++q;
            for (; q < end && (unsigned)(*q - '0') < 10u; q++)
                mant = mant * 10 + (uint64_t)(*q - '0');
            fd = q - f0;
            is_int = false;
        }
        if (q < end && nd + fd <= 19 && (is_int || fd > 0) && *q != 'e' && *q != 'E') {
            if (!out)
                return q;
            return num_value(ps, s, q, mant, neg, false, is_int, -(int)fd, out) ? q : NULL;
        }
    }
    return scan_number_slow(ps, s, end, out);
}

static const char *scan_number_slow(struct parser *ps, const char *p, const char *end,
                                    struct num *out)
{
    const char *s = p;
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= end)
        return incomplete(ps);
    if (*p == 'I') { /* -Infinity / Infinity (Python json accepts them) */
        static const char inf[] = "Infinity";
        size_t k = 0;
        while (k < 8 && p + k < end && p[k] == inf[k])
            k++;
        if (k < 8 && p + k >= end)
            return incomplete(ps);
        if (k < 8)
            return fail(ps, s, "invalid literal");
        if (out) {
            out->d = neg ? -INFINITY : INFINITY;
            out->is_int = out->integral = false;
        }
        return p + 8;
    }
    if (*p < '0' || *p > '9')
        return fail(ps, s, "invalid number");
    uint64_t mant = 0;
    int digits = 0, frac_digits = 0;
    bool overflow = false;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && *p >= '0' && *p <= '9') {
            if (digits < 19)
                mant = mant * 10 + (uint64_t)(*p - '0');
            else
                overflow = true;
            digits += (mant != 0 || digits > 0);
            p++;
        }
    }
    bool is_int = true;
    int exp10 = 0;
    if (p < end && *p == '.') {
        is_int = false;
        p++;
        if (p >= end)
            return incomplete(ps);
        if (*p < '0' || *p > '9')
            return fail(ps, p, "invalid number: digit expected after '.'");
        while (p < end && *p >= '0' && *p <= '9') {
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                frac_digits++;
                digits += (mant != 0);
            } else {
                overflow = true;
            }
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = false;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end)
            return incomplete(ps);
        if (*p < '0' || *p > '9')
            return fail(ps, p, "invalid number: digit expected in exponent");
        int e = 0;
        bool eneg = p[-1] == '-';
        while (p < end && *p >= '0' && *p <= '9') {
            if (e < 100000)
                e = e * 10 + (*p - '0');
            p++;
        }
        exp10 = eneg ? -e : e;
    }
    if (p >= end)
        return incomplete(ps); /* the number might continue in the next block */
    if (!out)
        return p;
    return num_value(ps, s, p, mant, neg, overflow, is_int, exp10 - frac_digits, out) ? p : NULL;
}

/* Validates a number without computing its value (skipped args values). */
static const char *skip_number(struct parser *ps, const char *p, const char *end)
{
    const char *s = p;
    if (*p == '-')
        p++;
    if (p >= end)
        return incomplete(ps);
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && (unsigned)(*p - '0') < 10u)
            p++;
    } else {
        return scan_number(ps, s, end, NULL); /* Infinity or an error */
    }
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
        return scan_number(ps, s, end, NULL);
    if (p >= end)
        return incomplete(ps);
    return p;
}

static const char *scan_literal(struct parser *ps, const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    for (size_t k = 0; k < n; k++) {
        if (p + k >= end)
            return incomplete(ps);
        if (p[k] != word[k])
            return fail(ps, p, "invalid literal");
    }
    return p + n;
}

static const char *skip_value(struct parser *ps, const char *p, const char *end, int depth);
static const char *scan_key(struct parser *ps, const char *p, const char *end,
                            struct mp_strview *key);

static const char *skip_container(struct parser *ps, const char *p, const char *end, int depth)
{
    bool obj = *p == '{';
    char close = obj ? '}' : ']';
    if (depth > MAX_DEPTH)
        return fail(ps, p, "nesting deeper than %d levels", MAX_DEPTH);
    p = skip_ws(p + 1, end);
    if (p >= end)
        return incomplete(ps);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (obj && !(p = scan_key(ps, p, end, NULL)))
            return NULL;
        if (p >= end)
            return incomplete(ps);
        p = skip_value(ps, p, end, depth + 1);
        if (!p)
            return NULL;
        p = skip_ws(p, end);
        if (p >= end)
            return incomplete(ps);
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return fail(ps, p,
                        obj ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
        p = skip_ws(p + 1, end);
        if (p >= end)
            return incomplete(ps);
        if (*p == close)
            return fail(ps, p, "trailing comma");
    }
}

static const char *skip_value(struct parser *ps, const char *p, const char *end, int depth)
{
    switch (*p) {
    case '"':
        return scan_string(ps, p, end, NULL);
    case '{':
    case '[':
        return skip_container(ps, p, end, depth);
    case 't':
        return scan_literal(ps, p, end, "true");
    case 'f':
        return scan_literal(ps, p, end, "false");
    case 'n':
        return scan_literal(ps, p, end, "null");
    case 'N':
        return scan_literal(ps, p, end, "NaN");
    default:
        if (*p == '-' || *p == 'I' || (*p >= '0' && *p <= '9'))
            return skip_number(ps, p, end);
        return fail(ps, p, "unexpected character '%c' (0x%02x), expected a JSON value",
                    (*p >= 0x20 && *p < 0x7f) ? *p : '?', (unsigned char)*p);
    }
}

/* Reads a key string and the following ':'; returns the position of the value. */
static const char *scan_key(struct parser *ps, const char *p, const char *end,
                            struct mp_strview *key)
{
    if (*p != '"')
        return fail(ps, p, "expected a string key in object");
    p = scan_string(ps, p, end, key);
    if (!p)
        return NULL;
    p = skip_ws(p, end);
    if (p >= end)
        return incomplete(ps);
    if (*p != ':')
        return fail(ps, p, "expected ':' after object key");
    p = skip_ws(p + 1, end);
    if (p >= end)
        return incomplete(ps);
    return p;
}

static inline bool key_is(struct mp_strview k, const char *lit, size_t n)
{
    return k.n == n && memcmp(k.p, lit, n) == 0;
}

#define KEY_IS(k, lit) key_is((k), (lit), sizeof(lit) - 1)

/* Scans the "args" object, picking out the keys the analyses use. */
static const char *scan_args(struct parser *ps, const char *p, const char *end, int depth,
                             struct mp_trace_event *ev)
{
    const char *start = p;
    /* a repeated "args" replaces the earlier one entirely */
    ev->flags &= ~(uint32_t)(MP_EV_EXTID | MP_EV_CORR | MP_EV_DIMS | MP_EV_STREAM);
    ev->input_dims.n = 0;
    ev->n_id_members = 0;
    p = skip_ws(p + 1, end);
    if (p >= end)
        return incomplete(ps);
    if (*p != '}') {
        for (;;) {
            struct mp_strview k;
            const char *member = p;
            p = scan_key(ps, p, end, &k);
            if (!p)
                return NULL;
            const char *v = p;
            if (KEY_IS(k, "External id") || KEY_IS(k, "correlation")) {
                bool ext = k.p[0] == 'E';
                if (*p == '-' || (*p >= '0' && *p <= '9')) {
                    struct num nm;
                    p = scan_number(ps, p, end, &nm);
                    if (!p)
                        return NULL;
                    uint32_t fl = ext ? MP_EV_EXTID : MP_EV_CORR;
                    if (nm.integral) {
                        ev->flags |= fl;
                        if (ext)
                            ev->external_id = nm.i;
                        else
                            ev->correlation = nm.i;
                    } else {
                        ev->flags &= ~fl;
                    }
                } else {
                    p = skip_value(ps, p, end, depth + 1);
                    ev->flags &= ~(uint32_t)(ext ? MP_EV_EXTID : MP_EV_CORR);
                }
            } else if (KEY_IS(k, "stream")) {
                if (*p == '-' || (*p >= '0' && *p <= '9')) {
                    struct num nm;
                    p = scan_number(ps, p, end, &nm);
                    if (!p)
                        return NULL;
                    if (nm.integral) {
                        ev->stream = nm.i;
                        ev->flags |= MP_EV_STREAM;
                    } else {
                        ev->flags &= ~(uint32_t)MP_EV_STREAM;
                    }
                } else {
                    p = skip_value(ps, p, end, depth + 1);
                    ev->flags &= ~(uint32_t)MP_EV_STREAM;
                }
            } else if (KEY_IS(k, "Input Dims")) {
                p = skip_value(ps, p, end, depth + 1);
                if (p) {
                    ev->input_dims.p = v;
                    ev->input_dims.n = (size_t)(p - v);
                    ev->flags |= MP_EV_DIMS;
                }
            } else {
                p = skip_value(ps, p, end, depth + 1);
            }
            if (!p)
                return NULL;
            if ((KEY_IS(k, "External id") || KEY_IS(k, "Ev Idx") ||
                 KEY_IS(k, "Record function id")) &&
                ev->n_id_members < sizeof(ev->id_members) / sizeof(ev->id_members[0]))
                ev->id_members[ev->n_id_members++] =
                    (struct mp_strview){member, (size_t)(p - member)};
            p = skip_ws(p, end);
            if (p >= end)
                return incomplete(ps);
            if (*p == '}')
                break;
            if (*p != ',')
                return fail(ps, p, "expected ',' or '}' in \"args\"");
            p = skip_ws(p + 1, end);
            if (p >= end)
                return incomplete(ps);
        }
    }
    p++;
    ev->args.p = start;
    ev->args.n = (size_t)(p - start);
    ev->flags |= MP_EV_ARGS;
    return p;
}

/* pid / tid: an integer or a string; both kept as text too. */
static const char *scan_id_field(struct parser *ps, const char *p, const char *end, int64_t *num,
                                 struct mp_strview *text, uint32_t *flags, uint32_t has,
                                 uint32_t is_str)
{
    if (*p == '"') {
        p = scan_string(ps, p, end, text);
        if (!p)
            return NULL;
        *flags |= has | is_str;
        *num = 0;
        return p;
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        struct num nm;
        const char *s = p;
        p = scan_number(ps, p, end, &nm);
        if (!p)
            return NULL;
        text->p = s;
        text->n = (size_t)(p - s);
        *num = nm.integral ? nm.i : 0;
        *flags = (*flags | has) & ~is_str;
        return p;
    }
    *flags &= ~(has | is_str); /* a later value of another type replaces it */
    return skip_value(ps, p, end, 1);
}

static const char *scan_event(struct parser *ps, const char *p, const char *end,
                              struct mp_trace_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->offset = ps->base + (uint64_t)(p - ps->buf);
    p = skip_ws(p + 1, end);
    if (p >= end)
        return incomplete(ps);
    if (*p == '}')
        return p + 1;
    for (;;) {
        struct mp_strview k;
        p = scan_key(ps, p, end, &k);
        if (!p)
            return NULL;
        struct num nm;
        switch (k.n) {
        case 2:
            if (KEY_IS(k, "ph") && *p == '"') {
                struct mp_strview v;
                p = scan_string(ps, p, end, &v);
                if (p)
                    ev->ph = v.n ? v.p[0] : 0;
                goto next;
            }
            if ((KEY_IS(k, "ts") || KEY_IS(k, "id")) && (*p == '-' || (*p >= '0' && *p <= '9'))) {
                p = scan_number(ps, p, end, &nm);
                if (!p)
                    return NULL;
                if (k.p[0] == 't') {
                    ev->ts = nm.d;
                    ev->flags |= MP_EV_TS;
                } else if (nm.integral) {
                    ev->id = nm.i;
                    ev->flags |= MP_EV_ID;
                } else {
                    ev->flags &= ~(uint32_t)MP_EV_ID;
                }
                goto next;
            }
            break;
        case 3:
            if (KEY_IS(k, "cat") && *p == '"') {
                p = scan_string(ps, p, end, &ev->cat);
                ev->flags |= MP_EV_CAT;
                goto next;
            }
            if (KEY_IS(k, "dur") && (*p == '-' || (*p >= '0' && *p <= '9'))) {
                p = scan_number(ps, p, end, &nm);
                if (!p)
                    return NULL;
                ev->dur = nm.d;
                ev->flags |= MP_EV_DUR;
                goto next;
            }
            if (KEY_IS(k, "pid")) {
                p = scan_id_field(ps, p, end, &ev->pid, &ev->pid_text, &ev->flags, MP_EV_PID,
                                  MP_EV_PID_STR);
                goto next;
            }
            if (KEY_IS(k, "tid")) {
                p = scan_id_field(ps, p, end, &ev->tid, &ev->tid_text, &ev->flags, MP_EV_TID,
                                  MP_EV_TID_STR);
                goto next;
            }
            break;
        case 4:
            if (KEY_IS(k, "name") && *p == '"') {
                p = scan_string(ps, p, end, &ev->name);
                ev->flags |= MP_EV_NAME;
                goto next;
            }
            if (KEY_IS(k, "args") && *p == '{') {
                p = scan_args(ps, p, end, 1, ev);
                goto next;
            }
            break;
        default:
            break;
        }
        /* A known key with a value of another type replaces the earlier
         * occurrence (Python's json keeps the last duplicate key). */
        if (k.n == 2 && KEY_IS(k, "ph"))
            ev->ph = 0;
        else if (k.n == 2 && KEY_IS(k, "ts"))
            ev->flags &= ~(uint32_t)MP_EV_TS;
        else if (k.n == 2 && KEY_IS(k, "id"))
            ev->flags &= ~(uint32_t)MP_EV_ID;
        else if (k.n == 3 && KEY_IS(k, "cat"))
            ev->flags &= ~(uint32_t)MP_EV_CAT;
        else if (k.n == 3 && KEY_IS(k, "dur"))
            ev->flags &= ~(uint32_t)MP_EV_DUR;
        else if (k.n == 4 && KEY_IS(k, "name"))
            ev->flags &= ~(uint32_t)MP_EV_NAME;
        else if (k.n == 4 && KEY_IS(k, "args")) {
            ev->flags &=
                ~(uint32_t)(MP_EV_ARGS | MP_EV_EXTID | MP_EV_CORR | MP_EV_DIMS | MP_EV_STREAM);
            ev->args.n = ev->input_dims.n = 0;
        }
        p = skip_value(ps, p, end, 1);
    next:
        if (!p)
            return NULL;
        p = skip_ws(p, end);
        if (p >= end)
            return incomplete(ps);
        if (*p == '}')
            return p + 1;
        if (*p != ',')
            return fail(ps, p, "expected ',' or '}' in event object");
        p = skip_ws(p + 1, end);
        if (p >= end)
            return incomplete(ps);
    }
}

/* ---- window management ---- */

/* Makes buf[from..] the start of the window, then reads more input. Returns
 * 0 with *more = false at end of input. */
static int refill(struct parser *ps, size_t from, bool *more)
{
    if (ps->sp)
        return spl_refill(ps, from, more);
    MP_ASSERT(from <= ps->len && ps->len <= ps->cap); /* the unit kept lies in the window */
    *more = false;
    if (from > 0) {
        memmove(ps->buf, ps->buf + from, ps->len - from);
        ps->len -= from;
        ps->base += from;
    }
    if (ps->eof)
        return 0;
    if (ps->len == ps->cap) {
        if (ps->cap >= ps->max_unit + ps->chunk) {
            mp_diag_set_pos(ps->d, (long long)ps->base, 0, 0);
            return mp_diag_set(ps->d, MP_ENOMEM,
                               "a single event or value is larger than the %zu-byte limit",
                               ps->max_unit);
        }
        size_t nc = ps->cap * 2;
        char *nb = realloc(ps->buf, nc + 1);
        char *ns = realloc(ps->scratch, nc + 1);
        if (ns)
            ps->scratch = ns;
        if (!nb || !ns) {
            if (nb)
                ps->buf = nb;
            return mp_diag_set(ps->d, MP_ENOMEM, "out of memory growing the read window");
        }
        ps->buf = nb;
        ps->cap = nc;
    }
    size_t want = ps->cap - ps->len;
    if (want > ps->chunk)
        want = ps->chunk;
    size_t got = 0;
    int rc = mp_io_read(ps->r, ps->buf + ps->len, want, &got, ps->d);
    if (rc) {
        /* decompressed bytes that were good up to the failure */
        mp_diag_set_pos(ps->d, (long long)ps->base + (long long)ps->len, 0, 0);
        return rc;
    }
    if (got == 0) {
        ps->eof = true;
        return 0;
    }
    ps->len += got;
    MP_ASSERT(ps->len <= ps->cap); /* buf holds cap + 1 bytes: room for the NUL */
    *more = true;
    if (ps->o && ps->o->on_progress)
        ps->o->on_progress(ps->base + ps->len, mp_io_raw_pos(ps->r), mp_io_raw_size(ps->r),
                           ps->o->progress_user ? ps->o->progress_user : ps->o->user);
    return 0;
}

static int report(struct parser *ps, const char *at)
{
    uint64_t off = at ? ps->base + (uint64_t)(at - ps->buf) : ps->base + ps->len;
    mp_diag_set_file(ps->d, mp_io_name(ps->r));
    mp_diag_set_pos(ps->d, (long long)off, 0, 0);
    return mp_diag_set(ps->d, MP_EPARSE, "%s", ps->err_msg);
}

static int truncated(struct parser *ps, const char *what)
{
    mp_diag_set_file(ps->d, mp_io_name(ps->r));
    mp_diag_set_pos(ps->d, (long long)ps->base + (long long)ps->len, 0, 0);
    return mp_diag_set(ps->d, MP_ETRUNC, "input ends early: %s (file truncated?)", what);
}

enum top_state {
    T_START,     /* before the top-level value */
    T_OBJ_FIRST, /* after '{' */
    T_OBJ_KEY,   /* after ',' in the top-level object */
    T_OBJ_NEXT,  /* after a top-level value: ',' or '}' */
    T_EV_FIRST,  /* after '[' of the events array */
    T_EV_ELEM,   /* after ',' in the events array */
    T_EV_NEXT,   /* after an event: ',' or ']' */
    T_END,       /* after the top-level value: only whitespace */
};

/* parse_serial's steps outside the per-event path (each runs once per input,
 * per top-level key or per chunk; the events array stays in the loop) */

/* buffers, the first read and a UTF-8 byte order mark; *pos is where the
 * trace starts */
static int parser_open(struct parser *ps, struct mp_io_reader *r,
                       const struct mp_trace_parse_opts *opts, struct mp_diag *d, size_t *pos)
{
    ps->r = r;
    ps->o = opts;
    ps->d = d;
    ps->chunk = opts && opts->chunk_bytes ? opts->chunk_bytes : DEFAULT_CHUNK;
    ps->max_unit = opts && opts->max_event_bytes ? opts->max_event_bytes : DEFAULT_MAX_UNIT;
    ps->cap = ps->chunk < 4096 ? 4096 : ps->chunk;
    if (ps->cap < ps->chunk * 2 && ps->chunk >= 4096)
        ps->cap = ps->chunk * 2;
    if (!ps->sp) { /* else the first refill takes a chunk */
        ps->buf = malloc(ps->cap + 1);
        ps->scratch = malloc(ps->cap + 1);
        if (!ps->buf || !ps->scratch)
            return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    bool more = true;
    int rc = refill(ps, 0, &more);
    if (rc)
        return rc;
    /* UTF-8 byte order mark (it may arrive in pieces with tiny reads) */
    while (ps->len < 3 && !ps->eof && ps->len > 0 && (unsigned char)ps->buf[0] == 0xEF) {
        rc = refill(ps, 0, &more);
        if (rc)
            return rc;
    }
    if (ps->len >= 3 && memcmp(ps->buf, "\xEF\xBB\xBF", 3) == 0)
        *pos = 3;
    return 0;
}

/* the input ended in state (not T_END) */
static int parser_ended_early(struct parser *ps, enum top_state state)
{
    if (state == T_START) {
        mp_diag_set_file(ps->d, mp_io_name(ps->r));
        mp_diag_set_pos(ps->d, (long long)ps->base + (long long)ps->len, 0, 0);
        return mp_diag_set(ps->d, MP_EPARSE,
                           "empty input: expected a Chrome trace "
                           "(a JSON object with \"traceEvents\" or a list)");
    }
    return truncated(ps, state >= T_EV_FIRST ? "inside the traceEvents array"
                                             : "inside the top-level object");
}

/* one step outside the events array (T_START, the top-level object,
 * T_END): returns where to go on and sets *next, or NULL for an error or an
 * incomplete unit (ps->st says which) or with *urc set when on_meta stops */
static const char *top_step(struct parser *ps, const char *p, const char *end, enum top_state state,
                            enum top_state *next, int *urc)
{
    switch (state) {
    case T_START:
        if (*p == '{') {
            *next = T_OBJ_FIRST;
            return p + 1;
        }
        if (*p == '[') {
            *next = T_EV_FIRST;
            return p + 1;
        }
        return fail(ps, p, "not a Chrome trace: expected '{' or '[' at the start");
    case T_OBJ_FIRST:
    case T_OBJ_KEY: {
        if (state == T_OBJ_FIRST && *p == '}') {
            *next = T_END;
            return p + 1;
        }
        struct mp_strview key;
        const char *v = scan_key(ps, p, end, &key);
        if (!v)
            return NULL;
        if (KEY_IS(key, "traceEvents")) {
            if (*v != '[')
                return fail(ps, v, "\"traceEvents\" must be an array");
            *next = T_EV_FIRST;
            return v + 1;
        }
        const char *q = skip_value(ps, v, end, 1);
        if (q && ps->o && ps->o->on_meta) {
            struct mp_strview raw = {v, (size_t)(q - v)};
            *urc = ps->o->on_meta(key, raw, ps->o->user);
            if (*urc)
                return NULL;
        }
        if (q)
            *next = T_OBJ_NEXT;
        return q;
    }
    case T_OBJ_NEXT:
        if (*p == ',') {
            *next = T_OBJ_KEY;
            return p + 1;
        }
        if (*p == '}') {
            *next = T_END;
            return p + 1;
        }
        return fail(ps, p, "expected ',' or '}' after a top-level value");
    default: /* T_END */
        return fail(ps, p, "unexpected data after the end of the trace");
    }
}

/* a unit that did not scan: an error, or one cut by the end of the input
 * (0: incomplete, read more) */
static int unit_failed(struct parser *ps, enum top_state state)
{
    if (ps->st == ST_ERROR)
        return report(ps, ps->err_at);
    if (ps->eof)
        return truncated(ps, state >= T_EV_FIRST && state <= T_EV_NEXT
                                 ? "inside an event of traceEvents"
                                 : "inside a top-level value");
    return 0;
}

static int parse_serial(struct mp_io_reader *r, const struct mp_trace_parse_opts *opts,
                        struct mp_trace_parse_stats *stats, struct mp_diag *d, struct spl *sp)
{
    init_tables();
    struct parser ps = {0};
    ps.sp = sp;
    bool bare = false, saw_events = false, in_events_top = false;
    enum top_state state = T_START;
    size_t pos = 0;
    bool more = true;
    int rc = parser_open(&ps, r, opts, d, &pos);
    if (rc)
        goto out;

    for (;;) {
        const char *end = ps.buf + ps.len;
        const char *p = skip_ws(ps.buf + pos, end);
        pos = (size_t)(p - ps.buf);
        if (p >= end) {
            if (!ps.eof) {
                rc = refill(&ps, pos, &more);
                if (rc)
                    goto out;
                pos = 0;
                continue;
            }
            if (state == T_END)
                break;
            rc = parser_ended_early(&ps, state);
            goto out;
        }
        ps.st = ST_OK;
        if (!sp) /* with chunks, decoded strings live as long as the chunk */
            ps.scratch_len = 0;
        const char *q = NULL;
        if (sp && state == T_EV_ELEM) {
            int sr = spl_splice(&ps, &pos);
            if (sr < 0) {
                rc = sr;
                goto out;
            }
            if (sr > 0) {
                state = T_EV_NEXT;
                continue;
            }
        }
        switch (state) {
        case T_EV_FIRST:
        case T_EV_ELEM:
            if (*p == ']' && state == T_EV_FIRST) {
                state = bare ? T_END : T_OBJ_NEXT;
                q = p + 1;
                break;
            }
            if (*p != '{') {
                q = fail(&ps, p,
                         *p == ']' ? "trailing comma in traceEvents"
                                   : "expected an event object in traceEvents");
                break;
            }
            {
                /* the pipeline's worker scans straight into its record list */
                bool in_place = sp && opts->on_event;
                struct mp_trace_event local, *slot = in_place ? spl_slot(&ps) : NULL,
                                             *ev = slot ? slot : &local;
                if (in_place && !slot) {
                    rc = mp_diag_set(d, MP_ENOMEM, "out of memory passing an event on");
                    goto out;
                }
                q = scan_event(&ps, p, end, ev);
                if (slot)
                    spl_slot_done(&ps, q != NULL);
                if (q) {
                    ev->index = ps.nevents++;
                    ev->raw.p = p;
                    ev->raw.n = (size_t)(q - p);
                    if (!slot && opts && opts->on_event) {
                        int urc = opts->on_event(ev, opts->user);
                        if (urc) {
                            rc = urc;
                            goto out;
                        }
                    }
                    state = T_EV_NEXT;
                }
            }
            break;
        case T_EV_NEXT:
            if (*p == ',') {
                state = T_EV_ELEM;
                q = p + 1;
            } else if (*p == ']') {
                state = bare ? T_END : T_OBJ_NEXT;
                in_events_top = false;
                q = p + 1;
            } else {
                q = fail(&ps, p, "expected ',' or ']' after an event");
            }
            break;
        default: {
            enum top_state next = state;
            int urc = 0;
            q = top_step(&ps, p, end, state, &next, &urc);
            if (urc) {
                rc = urc;
                goto out;
            }
            if (next == T_EV_FIRST) { /* the events array starts */
                if (state == T_START) {
                    bare = true;
                } else {
                    saw_events = true;
                    in_events_top = true;
                }
            }
            state = next;
            break;
        }
        }
        if (q) {
            pos = (size_t)(q - ps.buf);
            continue;
        }
        rc = unit_failed(&ps, state);
        if (rc)
            goto out;
        /* incomplete: keep the unit from p, read more, retry */
        rc = refill(&ps, pos, &more);
        if (rc)
            goto out;
        pos = 0;
    }
    if (!bare && !saw_events) {
        mp_diag_set_file(d, mp_io_name(r));
        mp_diag_set_pos(d, 0, 0, 0);
        rc = mp_diag_set(d, MP_EPARSE,
                         "not a Chrome trace: the top-level object has no \"traceEvents\" array");
        goto out;
    }
    (void)in_events_top;
out:
    if (stats) {
        stats->bytes = ps.base + ps.len;
        stats->events = ps.nevents;
        stats->bare_list = bare;
    }
    if (!sp) {
        free(ps.buf);
        free(ps.scratch);
    }
    return rc;
}

/* ---- pipelined parse: two threads share the tokenizing ----
 *
 * A worker thread inflates the input into chunks (a small pool of buffers,
 * each kept until its events have been handed on, so nothing is copied) and
 * tokenizes them with the parse above; the events it scans are recorded as
 * views into the chunk. The calling thread takes the chunks in order. For
 * each it first tokenizes the second half speculatively: it looks for a
 * likely event start there ("}" "," "{" with only whitespace between) and
 * scans events from it until the chunk's data ends. The worker accepts that
 * work only when its own parse arrives exactly at that position as the start
 * of an element of traceEvents: the bytes from an event's start decide its
 * scan alone, so the speculative events are then the ones the worker would
 * have scanned, and it goes on after the last of them (a syntax error there
 * is met again by the worker, with the same diag). Anywhere else the
 * speculation is dropped. The calling thread then hands every event, metadata
 * value and progress report of the chunk to the caller's callbacks in file
 * order, the worker's and its own, so the callbacks run on the calling thread
 * with the same values in the same order as in the serial parse, whatever the
 * timing; only how much of the work each thread did depends on it. */

#define SPL_SLOTS 3
#define SPL_CHUNK ((size_t)1 << 20)
#define SPL_MIN_SPEC ((size_t)32 << 10) /* smaller remainders are not split */
#define SPL_SHARE_ONE 64                /* the unit of spl.share */

enum { REC_EVENT, REC_META, REC_PROGRESS, REC_SPLICE };

enum { SPEC_IDLE, SPEC_RUNNING, SPEC_DONE };

struct pipe_rec {
    int kind;
    /* REC_META: name is the key, raw the value; REC_PROGRESS: index is the
     * decompressed byte count, offset the raw position, id the raw size;
     * REC_SPLICE: the speculative events go here, index is the first one's */
    struct mp_trace_event ev;
};

struct rec_list {
    struct pipe_rec *r;
    size_t n, cap;
};

struct spl_chunk {
    char *buf, *scratch, *cscratch; /* each bufsz + 1 bytes */
    size_t bufsz;
    size_t len;
    uint64_t base;
    struct rec_list w;       /* the worker's records, in order */
    struct rec_list c;       /* the calling thread's speculative events */
    _Atomic size_t w_pos;    /* where the worker is (a hint for choosing the split) */
    _Atomic size_t spec_at;  /* speculative start, SIZE_MAX: none */
    int spec;                /* SPEC_*, under mu */
    size_t spec_n, spec_end; /* events scanned and where the last one ends */
};

struct spl {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct spl_chunk slot[SPL_SLOTS];
    struct spl_chunk *cur; /* the worker's chunk */
    uint64_t cur_k;        /* its number */
    uint64_t posted;       /* chunks with their data read */
    uint64_t finished;     /* chunks the worker is done with */
    uint64_t delivered;    /* chunks handed to the callbacks (their slot is free) */
    bool done;             /* the worker has finished; rc, st and d are final */
    bool stop;             /* the caller's callback failed: the worker should stop */
    bool speculate;
    /* the calling thread's share of what is left of a chunk when it starts
     * speculating, in SPL_SHARE_ONE units; adapted chunk by chunk (under mu)
     * so that neither thread waits for the other: see spl_adapt */
    int share;
    uint64_t split_events; /* spliced events delivered */
    size_t read_size;
    /* the next block of input, read ahead by the worker right after it posts
     * a chunk (spl_stage), so the calling thread can start on that chunk
     * while the block inflates; taken by the next refill (spl_take) */
    char *stage;
    size_t stage_len, stage_off;
    bool staged;
    int stage_rc;
    struct mp_diag stage_d;
    uint64_t stage_raw_pos, stage_raw_size;
    struct mp_io_reader *r;
    struct mp_trace_parse_opts inner;
    struct mp_trace_parse_stats st;
    struct mp_diag d;
    int rc;
};

static struct pipe_rec *rec_add(struct rec_list *l)
{
    if (MP_GROW(l->r, l->cap, l->n + 1, 1024))
        return NULL;
    return &l->r[l->n++];
}

/* One step of the balance between the two threads (under mu): the calling
 * thread takes more of the next chunk when it finished its speculation
 * before the worker reached the start of it, and less when the worker had
 * to wait for the speculation or finished a chunk before the calling thread
 * could start on it. (A wait of the calling thread for the worker to finish
 * a chunk is no signal: the worker always has the chunk's last bytes and its
 * wake-up to do after the speculation.) The worker inflates the next block
 * while this thread delivers the last chunk's events, so the right share
 * depends on their costs (a report's callbacks cost about what inflating
 * does, the gap analysis's far less); the step finds it, and follows the
 * machine (another process on one core), without changing what is parsed. */
static void spl_adapt(struct spl *sp, int step)
{
    int s = sp->share + step;
    if (s >= SPL_SHARE_ONE / 8 && s <= SPL_SHARE_ONE * 7 / 8)
        sp->share = s;
}

static int spl_post(struct spl *sp, uint64_t *counter, uint64_t value)
{
    pthread_mutex_lock(&sp->mu);
    *counter = value;
    pthread_cond_broadcast(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    return 0;
}

/* The worker's refill: the unit from buf[from] and the next read go into a
 * fresh chunk, with the window's size and limits exactly as in refill(). */
static int spl_refill(struct parser *ps, size_t from, bool *more)
{
    struct spl *sp = ps->sp;
    *more = false;
    MP_ASSERT(from <= ps->len); /* the unit kept lies in the window */
    size_t n = ps->len - from, cap = ps->cap;
    if (n == cap && !ps->eof) {
        if (cap >= ps->max_unit + ps->chunk) {
            mp_diag_set_pos(ps->d, (long long)ps->base + (long long)from, 0, 0);
            return mp_diag_set(ps->d, MP_ENOMEM,
                               "a single event or value is larger than the %zu-byte limit",
                               ps->max_unit);
        }
        cap *= 2;
    }
    uint64_t k = sp->cur ? sp->cur_k + 1 : 0;
    pthread_mutex_lock(&sp->mu);
    while (k >= sp->delivered + SPL_SLOTS && !sp->stop)
        pthread_cond_wait(&sp->cv, &sp->mu);
    bool stop = sp->stop;
    pthread_mutex_unlock(&sp->mu);
    if (stop)
        return MP_ECANCEL;
    struct spl_chunk *c = &sp->slot[k % SPL_SLOTS];
    if (c->bufsz < cap) {
        char *nb = realloc(c->buf, cap + 1);
        if (nb)
            c->buf = nb;
        char *ns = realloc(c->scratch, cap + 1);
        if (ns)
            c->scratch = ns;
        char *nx = realloc(c->cscratch, cap + 1);
        if (nx)
            c->cscratch = nx;
        if (!nb || !ns || !nx)
            return mp_diag_set(ps->d, MP_ENOMEM, "out of memory growing the read window");
        c->bufsz = cap;
    }
    MP_ASSERT(n <= cap && cap <= c->bufsz); /* the kept unit fits the chunk */
    if (n)
        memcpy(c->buf, ps->buf + from, n);
    c->base = ps->base + from;
    c->len = n;
    c->w.n = c->c.n = 0;
    c->spec = SPEC_IDLE;
    c->spec_n = c->spec_end = 0;
    atomic_store_explicit(&c->w_pos, 0, memory_order_relaxed);
    atomic_store_explicit(&c->spec_at, SIZE_MAX, memory_order_relaxed);
    if (sp->cur)
        spl_post(sp, &sp->finished, sp->cur_k + 1);
    sp->cur = c;
    sp->cur_k = k;
    ps->buf = c->buf;
    ps->scratch = c->scratch;
    ps->scratch_len = 0;
    ps->cap = cap;
    ps->len = n;
    ps->base = c->base;
    int rc = 0;
    if (!ps->eof) {
        size_t want = cap - n;
        if (want > sp->read_size)
            want = sp->read_size;
        size_t got = 0;
        uint64_t raw_pos = 0, raw_size = 0;
        rc = spl_take(ps, ps->buf + n, want, &got, &raw_pos, &raw_size);
        if (rc) {
            mp_diag_set_pos(ps->d, (long long)ps->base + (long long)ps->len, 0, 0);
        } else if (got == 0) {
            ps->eof = true;
        } else {
            ps->len += got;
            MP_ASSERT(ps->len <= ps->cap); /* the chunk holds cap + 1 bytes */
            c->len = ps->len;
            *more = true;
            if (ps->o && ps->o->on_progress)
                ps->o->on_progress(ps->base + ps->len, raw_pos, raw_size,
                                   ps->o->progress_user ? ps->o->progress_user : ps->o->user);
        }
    }
    spl_post(sp, &sp->posted, k + 1);
    if (!rc && !ps->eof && !sp->staged && sp->stage)
        spl_stage(ps);
    return rc;
}

/* Reads the next block into sp->stage (the worker, after posting a chunk). */
static void spl_stage(struct parser *ps)
{
    struct spl *sp = ps->sp;
    mp_diag_clear(&sp->stage_d);
    sp->stage_off = 0;
    sp->stage_rc = mp_io_read(ps->r, sp->stage, sp->read_size, &sp->stage_len, &sp->stage_d);
    sp->stage_raw_pos = mp_io_raw_pos(ps->r);
    sp->stage_raw_size = mp_io_raw_size(ps->r);
    sp->staged = true;
}

/* Up to want bytes of input into dst: from the block read ahead when there
 * is one (its error, as the read would have returned it then; a block of
 * more than want bytes is taken in parts, only with a window too small for
 * a whole block), else read now. */
static int spl_take(struct parser *ps, char *dst, size_t want, size_t *got, uint64_t *raw_pos,
                    uint64_t *raw_size)
{
    struct spl *sp = ps->sp;
    *got = 0;
    if (!sp->staged) {
        int rc = mp_io_read(ps->r, dst, want, got, ps->d);
        *raw_pos = mp_io_raw_pos(ps->r);
        *raw_size = mp_io_raw_size(ps->r);
        return rc;
    }
    if (sp->stage_rc) {
        sp->staged = false;
        *ps->d = sp->stage_d;
        return sp->stage_rc;
    }
    size_t k = sp->stage_len - sp->stage_off;
    if (k > want)
        k = want;
    if (k)
        memcpy(dst, sp->stage + sp->stage_off, k);
    sp->stage_off += k;
    *got = k;
    *raw_pos = sp->stage_raw_pos;
    *raw_size = sp->stage_raw_size;
    if (sp->stage_off == sp->stage_len)
        sp->staged = false;
    return 0;
}

/* The worker is at *pos, the start of an element of traceEvents. Returns 1
 * when the calling thread's speculative events start there (then *pos is
 * after the last of them), 0 when not, or MP_ECANCEL. */
static int spl_splice(struct parser *ps, size_t *pos)
{
    struct spl *sp = ps->sp;
    struct spl_chunk *c = sp->cur;
    atomic_store_explicit(&c->w_pos, *pos, memory_order_relaxed);
    if (atomic_load_explicit(&c->spec_at, memory_order_acquire) != *pos)
        return 0;
    pthread_mutex_lock(&sp->mu);
    if (c->spec == SPEC_RUNNING)
        spl_adapt(sp, -1);
    while (c->spec == SPEC_RUNNING && !sp->stop)
        pthread_cond_wait(&sp->cv, &sp->mu);
    bool stop = sp->stop;
    size_t n = c->spec_n, e = c->spec_end;
    pthread_mutex_unlock(&sp->mu);
    if (stop)
        return MP_ECANCEL;
    if (!n)
        return 0;
    struct pipe_rec *r = rec_add(&c->w);
    if (!r)
        return mp_diag_set(ps->d, MP_ENOMEM, "out of memory passing an event on");
    memset(r, 0, sizeof(*r));
    r->kind = REC_SPLICE;
    r->ev.index = ps->nevents;
    ps->nevents += n;
    *pos = e;
    return 1;
}

/* A likely event start at or after from: '{' after ',' after '}', with only
 * whitespace between them; SIZE_MAX when there is none. */
static size_t spl_find_start(const char *buf, size_t from, size_t len)
{
    const char *p = buf + from, *end = buf + len;
    while ((p = memchr(p, ',', (size_t)(end - p))) != NULL) {
        const char *a = p;
        while (a > buf && mp_json_ws_table[(unsigned char)a[-1]])
            a--;
        const char *b = skip_ws(p + 1, end);
        if (a > buf && a[-1] == '}' && b < end && *b == '{')
            return (size_t)(b - buf);
        p++;
    }
    return SIZE_MAX;
}

/* The calling thread's share of chunk c: events from a likely start in its
 * second half to the end of its data. */
static void spl_speculate(struct spl *sp, struct spl_chunk *c)
{
    size_t from = atomic_load_explicit(&c->w_pos, memory_order_relaxed);
    if (from >= c->len || c->len - from < SPL_MIN_SPEC)
        return;
    pthread_mutex_lock(&sp->mu);
    size_t share = (size_t)sp->share;
    pthread_mutex_unlock(&sp->mu);
    size_t left = c->len - from;
    size_t s = spl_find_start(c->buf, from + left - left / SPL_SHARE_ONE * share, c->len);
    if (s == SIZE_MAX)
        return;
    pthread_mutex_lock(&sp->mu);
    c->spec = SPEC_RUNNING;
    pthread_mutex_unlock(&sp->mu);
    atomic_store_explicit(&c->spec_at, s, memory_order_release);
    struct parser cp = {0};
    cp.buf = c->buf;
    cp.len = cp.cap = c->len;
    cp.base = c->base;
    cp.scratch = c->cscratch;
    const char *end = c->buf + c->len, *p = c->buf + s, *last = p;
    size_t n = 0;
    for (;;) {
        /* the worker went past the start: the rest would be dropped */
        if ((n & 255) == 255 && atomic_load_explicit(&c->w_pos, memory_order_relaxed) > s)
            break;
        cp.st = ST_OK;
        struct mp_trace_event ev;
        const char *q = scan_event(&cp, p, end, &ev);
        if (!q)
            break;
        struct pipe_rec *r = rec_add(&c->c);
        if (!r)
            break;
        r->kind = REC_EVENT;
        r->ev = ev;
        r->ev.raw.p = p;
        r->ev.raw.n = (size_t)(q - p);
        n++;
        last = q;
        p = skip_ws(q, end);
        if (p >= end || *p != ',')
            break;
        p = skip_ws(p + 1, end);
        if (p >= end || *p != '{')
            break;
    }
    pthread_mutex_lock(&sp->mu);
    c->spec = SPEC_DONE;
    c->spec_n = n;
    c->spec_end = (size_t)(last - c->buf);
    /* done before the worker came to the start: this thread can take more */
    if (atomic_load_explicit(&c->w_pos, memory_order_relaxed) < s)
        spl_adapt(sp, +1);
    pthread_cond_broadcast(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
}

/* The worker's next event record, scanned into in place (pipe_on_event
 * would copy it there); spl_slot_done keeps it when the scan succeeded. */
static struct mp_trace_event *spl_slot(struct parser *ps)
{
    struct pipe_rec *r = rec_add(&ps->sp->cur->w);
    if (!r)
        return NULL;
    r->kind = REC_EVENT;
    return &r->ev;
}

static void spl_slot_done(struct parser *ps, bool scanned)
{
    if (!scanned)
        ps->sp->cur->w.n--;
}

static int pipe_on_event(const struct mp_trace_event *ev, void *user)
{
    struct spl *sp = user;
    struct pipe_rec *r = rec_add(&sp->cur->w);
    if (!r)
        return mp_diag_set(&sp->d, MP_ENOMEM, "out of memory passing an event on");
    r->kind = REC_EVENT;
    r->ev = *ev;
    return 0;
}

static int pipe_on_meta(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct spl *sp = user;
    struct pipe_rec *r = rec_add(&sp->cur->w);
    if (!r)
        return mp_diag_set(&sp->d, MP_ENOMEM, "out of memory passing an event on");
    memset(r, 0, sizeof(*r));
    r->kind = REC_META;
    r->ev.name = key;
    r->ev.raw = raw;
    return 0;
}

static void pipe_on_progress(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user)
{
    struct spl *sp = user;
    struct pipe_rec *r = rec_add(&sp->cur->w);
    if (!r)
        return; /* out of memory: that progress report is lost */
    r->kind = REC_PROGRESS;
    r->ev.index = bytes;
    r->ev.offset = raw_pos;
    r->ev.id = (int64_t)raw_size;
}

static void *pipe_main(void *arg)
{
    struct spl *sp = arg;
    int rc = parse_serial(sp->r, &sp->inner, &sp->st, &sp->d, sp);
    pthread_mutex_lock(&sp->mu);
    if (sp->cur) { /* the last chunk, also on an error: its events came before it */
        sp->finished = sp->cur_k + 1;
        if (sp->posted < sp->finished)
            sp->posted = sp->finished;
    }
    sp->rc = rc;
    sp->done = true;
    pthread_cond_broadcast(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

/* Hands one chunk's records to the caller's callbacks; returns the first
 * non-zero. */
static int pipe_deliver(const struct mp_trace_parse_opts *o, struct spl_chunk *c, uint64_t *split)
{
    void *pu = o->progress_user ? o->progress_user : o->user;
    for (size_t i = 0; i < c->w.n; i++) {
        struct pipe_rec *r = &c->w.r[i];
        int rc = 0;
        if (r->kind == REC_EVENT && o->on_event) {
            rc = o->on_event(&r->ev, o->user);
        } else if (r->kind == REC_SPLICE && o->on_event) {
            *split += c->spec_n;
            for (size_t j = 0; j < c->spec_n && !rc; j++) {
                c->c.r[j].ev.index = r->ev.index + j;
                rc = o->on_event(&c->c.r[j].ev, o->user);
            }
        } else if (r->kind == REC_META && o->on_meta) {
            rc = o->on_meta(r->ev.name, r->ev.raw, o->user);
        } else if (r->kind == REC_PROGRESS && o->on_progress) {
            o->on_progress(r->ev.index, r->ev.offset, (uint64_t)r->ev.id, pu);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static void pipe_free(struct spl *sp)
{
    for (size_t i = 0; i < SPL_SLOTS; i++) {
        free(sp->slot[i].buf);
        free(sp->slot[i].scratch);
        free(sp->slot[i].cscratch);
        free(sp->slot[i].w.r);
        free(sp->slot[i].c.r);
    }
    free(sp->stage);
    pthread_mutex_destroy(&sp->mu);
    pthread_cond_destroy(&sp->cv);
    free(sp);
}

/* Sets *ran = false when the pipeline could not be set up (then nothing was
 * read: the caller runs the serial parse). */
static int parse_pipelined(struct mp_io_reader *r, const struct mp_trace_parse_opts *opts,
                           struct mp_trace_parse_stats *stats, struct mp_diag *d, bool *ran)
{
    *ran = false;
    struct spl *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return 0;
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->cv, NULL);
    for (size_t i = 0; i < SPL_SLOTS; i++) {
        atomic_init(&sp->slot[i].w_pos, 0);
        atomic_init(&sp->slot[i].spec_at, SIZE_MAX);
    }
    mp_diag_clear(&sp->d);
    sp->r = r;
    sp->speculate = opts->on_event != NULL;
    sp->share = SPL_SHARE_ONE / 2;
    sp->inner = (struct mp_trace_parse_opts){
        .on_event = opts->on_event ? pipe_on_event : NULL,
        .on_meta = opts->on_meta ? pipe_on_meta : NULL,
        .on_progress = opts->on_progress ? pipe_on_progress : NULL,
        .user = sp,
        .progress_user = sp,
        .max_event_bytes = opts->max_event_bytes,
        .chunk_bytes = opts->chunk_bytes,
    };
    sp->read_size = opts->chunk_bytes ? opts->chunk_bytes : SPL_CHUNK;
    sp->stage = malloc(sp->read_size); /* NULL only reads each block when it is needed */
    init_tables();
    pthread_t th;
    if (pthread_create(&th, NULL, pipe_main, sp) != 0) {
        pipe_free(sp);
        return 0;
    }
    *ran = true;
    int crc = 0;
    for (uint64_t k = 0;; k++) {
        pthread_mutex_lock(&sp->mu);
        while (sp->posted <= k && !sp->done)
            pthread_cond_wait(&sp->cv, &sp->mu);
        bool have = sp->posted > k, spec = sp->speculate && sp->finished <= k;
        if (have && sp->speculate && !spec)
            spl_adapt(sp, -1); /* the worker got through chunk k alone */
        pthread_mutex_unlock(&sp->mu);
        if (!have)
            break;
        struct spl_chunk *c = &sp->slot[k % SPL_SLOTS];
        if (spec)
            spl_speculate(sp, c);
        pthread_mutex_lock(&sp->mu);
        while (sp->finished <= k && !sp->done)
            pthread_cond_wait(&sp->cv, &sp->mu);
        pthread_mutex_unlock(&sp->mu);
        crc = pipe_deliver(opts, c, &sp->split_events);
        pthread_mutex_lock(&sp->mu);
        sp->delivered = k + 1;
        if (crc)
            sp->stop = true;
        pthread_cond_broadcast(&sp->cv);
        pthread_mutex_unlock(&sp->mu);
        if (crc)
            break;
    }
    pthread_join(th, NULL);
    int rc = crc ? crc : sp->rc;
    if (!crc && sp->rc && d && d->code == 0)
        *d = sp->d;
    if (stats) {
        *stats = sp->st;
        stats->events_split = sp->split_events;
    }
    mp_log(MP_LOG_DEBUG,
           "parse: %llu events, %llu of them scanned by the calling thread (share %d/%d)",
           (unsigned long long)sp->st.events, (unsigned long long)sp->split_events, sp->share,
           SPL_SHARE_ONE);
    pipe_free(sp);
    return rc;
}

int mp_trace_parse(struct mp_io_reader *r, const struct mp_trace_parse_opts *opts,
                   struct mp_trace_parse_stats *stats, struct mp_diag *d)
{
    if (opts && (opts->on_event || opts->on_meta) && !opts->serial) {
        bool ran;
        int rc = parse_pipelined(r, opts, stats, d, &ran);
        if (ran)
            return rc;
    }
    return parse_serial(r, opts, stats, d, NULL);
}

int mp_trace_locate(const char *path, uint64_t offset, long *line, long *col)
{
    struct mp_io_reader *r = NULL;
    *line = 0;
    *col = 0;
    if (strcmp(path, "-") == 0 || mp_io_open(path, &r, NULL) != 0)
        return MP_EIO;
    char *buf = malloc((size_t)1 << 20);
    if (!buf) {
        mp_io_close(r);
        return MP_ENOMEM;
    }
    uint64_t pos = 0, line_start = 0;
    long ln = 1;
    int rc = 0;
    while (pos < offset) {
        size_t got = 0;
        if (mp_io_read(r, buf, (size_t)1 << 20, &got, NULL) != 0 || got == 0)
            break;
        size_t lim = got;
        if (pos + lim > offset)
            lim = (size_t)(offset - pos);
        const char *s = buf;
        const char *e = buf + lim;
        while ((s = memchr(s, '\n', (size_t)(e - s))) != NULL) {
            ln++;
            line_start = pos + (uint64_t)(s - buf) + 1;
            s++;
        }
        pos += got;
    }
    *line = ln;
    *col = (long)(offset - line_start) + 1;
    free(buf);
    mp_io_close(r);
    return rc;
}

int mp_trace_parse_file(const char *path, const struct mp_trace_parse_opts *opts,
                        struct mp_trace_parse_stats *stats, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    int rc = mp_io_open(path, &r, d);
    if (rc)
        return rc;
    rc = mp_trace_parse(r, opts, stats, d);
    mp_io_close(r);
    if ((rc == MP_EPARSE || rc == MP_ETRUNC) && d && d->offset >= 0 && d->line == 0) {
        long line, col;
        if (mp_trace_locate(path, (uint64_t)d->offset, &line, &col) == 0)
            mp_diag_set_pos(d, d->offset, line, col);
    }
    return rc;
}

/* ---- small helpers over raw JSON text (args values) ---- */

static void mem_parser(struct parser *ps, struct mp_strview text, char *scratch)
{
    init_tables();
    memset(ps, 0, sizeof(*ps));
    ps->buf = (char *)text.p; /* only read */
    ps->len = text.n;
    ps->cap = text.n;
    ps->eof = true;
    ps->scratch = scratch;
}

int mp_trace_json_find(struct mp_strview object, const char *key, struct mp_strview *value)
{
    struct parser ps;
    char *scratch = malloc(object.n + 1);
    if (!scratch)
        return MP_ENOMEM;
    mem_parser(&ps, object, scratch);
    const char *p = object.p, *end = object.p + object.n;
    size_t klen = strlen(key);
    int rc = MP_ENOTFOUND;
    p = skip_ws(p, end);
    if (p >= end || *p != '{') {
        rc = MP_EPARSE;
        goto out;
    }
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        goto out;
    while (p && p < end) {
        struct mp_strview k;
        ps.scratch_len = 0;
        p = scan_key(&ps, p, end, &k);
        if (!p)
            break;
        const char *v = p;
        p = skip_value(&ps, p, end, 1);
        if (!p)
            break;
        if (k.n == klen && memcmp(k.p, key, klen) == 0) {
            value->p = v;
            value->n = (size_t)(p - v);
            rc = 0; /* keep going: the last occurrence wins */
        }
        p = skip_ws(p, end);
        if (p >= end)
            break;
        if (*p == '}')
            goto out;
        if (*p != ',')
            break;
        p = skip_ws(p + 1, end);
    }
    rc = MP_EPARSE;
out:
    free(scratch);
    return rc;
}

int mp_trace_json_int(struct mp_strview raw, int64_t *out)
{
    struct parser ps;
    mem_parser(&ps, raw, NULL);
    const char *end = raw.p + raw.n;
    const char *p = skip_ws(raw.p, end);
    if (p >= end || !(*p == '-' || (*p >= '0' && *p <= '9')))
        return MP_EINVAL;
    /* scan_number wants a byte after the number; copy into a padded buffer */
    char tmp[80];
    size_t n = (size_t)(end - p);
    if (n >= sizeof(tmp) - 1)
        return MP_EINVAL;
    memcpy(tmp, p, n);
    tmp[n] = ' ';
    tmp[n + 1] = '\0';
    struct num nm;
    const char *q = scan_number(&ps, tmp, tmp + n + 1, &nm);
    if (!q || !nm.integral)
        return MP_EINVAL;
    q = skip_ws(q, tmp + n + 1);
    if (q != tmp + n + 1)
        return MP_EINVAL;
    *out = nm.i;
    return 0;
}

int mp_trace_json_string(struct mp_strview raw, struct mp_buf *buf)
{
    struct parser ps;
    char *scratch = malloc(raw.n + 1);
    if (!scratch)
        return MP_ENOMEM;
    mem_parser(&ps, raw, scratch);
    const char *end = raw.p + raw.n;
    const char *p = skip_ws(raw.p, end);
    int rc = MP_EINVAL;
    struct mp_strview s;
    if (p < end && *p == '"' && scan_string(&ps, p, end, &s)) {
        mp_buf_reset(buf);
        rc = mp_buf_append(buf, s.p, s.n);
        if (!rc && !buf->data)
            rc = mp_buf_reserve(buf, 0);
    }
    free(scratch);
    return rc;
}
