/* Reading trace args and printing parameters the way TraceLens's Python does.
 *
 * TraceLens's perf model classes index the JSON args directly
 * (event["args"]["Input Dims"][1][0]); a missing key, an index out of range
 * or a value of the wrong type raises, and the row is then dropped from the
 * per-category sheets. These helpers reproduce that: every accessor records
 * the first "exception" of the current phase in the context and returns a
 * harmless default, so model code reads like the Python it mirrors and checks
 * roof_ok() where it matters. Parameter values are printed as Python's str(). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <magpie/fmt.h>

#include "roofline_int.h"

void roof_raise(struct roof_ctx *c, int kind, const char *fmt, ...)
{
    if (c->st[c->phase] != MP_ROOFLINE_OK)
        return;
    c->st[c->phase] = kind;
    char *e = c->out->error;
    if (e[0])
        return; /* keep the first message (the forward one) */
    size_t sz = sizeof(c->out->error);
    int n = 0;
    if (c->phase == ROOF_BWD)
        n = snprintf(e, sz, "bwd: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e + n, sz - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- args access ---- */

struct pv *roof_arg_opt(struct roof_ctx *c, const char *key)
{
    return c->args ? roof_pv_object_get(c->args, key) : NULL;
}

struct pv *roof_arg(struct roof_ctx *c, const char *key)
{
    if (!roof_ok(c))
        return NULL;
    struct pv *v = roof_arg_opt(c, key);
    if (!v)
        roof_fail(c, "KeyError: '%s'", key);
    return v;
}

size_t roof_len(struct roof_ctx *c, struct pv *seq)
{
    if (!roof_ok(c))
        return 0;
    if (roof_pv_is_array(seq))
        return roof_pv_array_size(seq);
    if (roof_pv_is_string(seq))
        return roof_pv_string_length(seq);
    if (roof_pv_is_object(seq))
        return roof_pv_object_size(seq);
    roof_fail(c, "TypeError: object has no len()");
    return 0;
}

struct pv *roof_at(struct roof_ctx *c, struct pv *seq, long i)
{
    if (!roof_ok(c))
        return NULL;
    if (!roof_pv_is_array(seq)) {
        roof_fail(c, "TypeError: %s is not subscriptable", seq ? "value" : "None");
        return NULL;
    }
    long n = (long)roof_pv_array_size(seq);
    long j = i < 0 ? n + i : i;
    if (j < 0 || j >= n) {
        roof_fail(c, "IndexError: list index %ld out of range (len %ld)", i, n);
        return NULL;
    }
    return roof_pv_array_get(seq, (size_t)j);
}

struct pv *roof_argi(struct roof_ctx *c, const char *key, long i)
{
    return roof_at(c, roof_arg(c, key), i);
}

int64_t roof_int(struct roof_ctx *c, struct pv *v)
{
    if (!roof_ok(c))
        return 0;
    if (roof_pv_is_integer(v))
        return (int64_t)roof_pv_integer_value(v);
    if (roof_pv_is_boolean(v))
        return roof_pv_is_true(v) ? 1 : 0;
    roof_fail(c, "TypeError: expected an integer");
    return 0;
}

bool roof_shape(struct roof_ctx *c, struct pv *v, struct roof_shape *s)
{
    s->n = 0;
    if (!roof_ok(c))
        return false;
    if (roof_pv_is_object(v) && roof_pv_object_size(v) == 0)
        return true; /* tuple({}) == () */
    if (!roof_pv_is_array(v)) {
        roof_fail(c, "TypeError: shape is not a list");
        return false;
    }
    size_t n = roof_pv_array_size(v);
    if (n > ROOF_MAX_DIMS) {
        roof_fail(c, "shape with %zu dims is not supported", n);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        struct pv *e = roof_pv_array_get(v, i);
        if (!roof_pv_is_integer(e)) {
            roof_fail(c, "TypeError: shape element is not an int");
            return false;
        }
        s->d[i] = (int64_t)roof_pv_integer_value(e);
    }
    s->n = (int)n;
    return true;
}

bool roof_shape_argi(struct roof_ctx *c, const char *key, long i, struct roof_shape *s)
{
    return roof_shape(c, roof_argi(c, key, i), s);
}

const char *roof_str(struct roof_ctx *c, struct pv *v)
{
    if (!roof_ok(c))
        return NULL;
    if (roof_pv_is_string(v))
        return roof_pv_string_value(v);
    if (roof_pv_is_null(v))
        return NULL;
    roof_fail(c, "TypeError: expected a str");
    return NULL;
}

const char *roof_str_argi(struct roof_ctx *c, const char *key, long i)
{
    return roof_str(c, roof_argi(c, key, i));
}

bool roof_truthy(struct pv *v)
{
    if (!v || roof_pv_is_null(v) || roof_pv_is_false(v))
        return false;
    if (roof_pv_is_true(v))
        return true;
    if (roof_pv_is_integer(v))
        return roof_pv_integer_value(v) != 0;
    if (roof_pv_is_real(v))
        return roof_pv_real_value(v) != 0;
    if (roof_pv_is_string(v))
        return roof_pv_string_length(v) > 0;
    if (roof_pv_is_array(v))
        return roof_pv_array_size(v) > 0;
    if (roof_pv_is_object(v))
        return roof_pv_object_size(v) > 0;
    return true;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
        p++;
    return p;
}

/* s without its leading and trailing white space: *p is its start, the
 * return its length */
static size_t strip_ws(const char *s, const char **p)
{
    *p = skip_ws(s);
    size_t n = strlen(*p);
    while (n > 0 && isspace((unsigned char)(*p)[n - 1]))
        n--;
    return n;
}

/* Python int() of a literal token [p, e): digits with optional sign and
 * single underscores between digits. */
static bool parse_int_token(const char *p, const char *e, int64_t *out)
{
    bool neg = false;
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    if (p >= e || !isdigit((unsigned char)*p))
        return false;
    int64_t v = 0;
    bool prev_us = false;
    for (; p < e; p++) {
        if (*p == '_' && !prev_us) {
            prev_us = true;
            continue;
        }
        if (!isdigit((unsigned char)*p))
            return false;
        prev_us = false;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
            return false;
    }
    if (prev_us)
        return false;
    *out = neg ? -v : v;
    return true;
}

bool roof_parse_pyint(const char *s, int64_t *out)
{
    const char *p;
    size_t n = strip_ws(s, &p);
    return parse_int_token(p, p + n, out);
}

/* false when the row failed already, or (failing it) when s is None */
static bool py_arg(struct roof_ctx *c, const char *s, const char *fn)
{
    if (!roof_ok(c))
        return false;
    if (!s) {
        roof_fail(c, "TypeError: %s() of None", fn);
        return false;
    }
    return true;
}

int64_t roof_pyint(struct roof_ctx *c, const char *s)
{
    if (!py_arg(c, s, "int"))
        return 0;
    int64_t v;
    if (!roof_parse_pyint(s, &v)) {
        roof_fail(c, "ValueError: invalid literal for int(): '%.40s'", s);
        return 0;
    }
    return v;
}

bool roof_parse_pyfloat(const char *s, double *out)
{
    const char *p;
    size_t n = strip_ws(s, &p);
    char tmp[64];
    if (n == 0 || n >= sizeof(tmp))
        return false;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    /* Python accepts digits, '.', exponents and inf/nan words; strtod would
     * also take hex floats, which Python does not */
    for (size_t i = 0; i < n; i++)
        if (tmp[i] == 'x' || tmp[i] == 'X')
            return false;
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    if (end != tmp + n)
        return false;
    *out = v;
    return true;
}

double roof_pyfloat(struct roof_ctx *c, const char *s)
{
    if (!py_arg(c, s, "float"))
        return 0;
    double v;
    if (!roof_parse_pyfloat(s, &v)) {
        roof_fail(c, "ValueError: could not convert string to float: '%.40s'", s);
        return 0;
    }
    return v;
}

bool roof_pyeval_bool(struct roof_ctx *c, const char *s, bool *is_none)
{
    *is_none = false;
    if (!roof_ok(c))
        return false;
    if (!s) {
        roof_fail(c, "TypeError: eval() arg must be a string");
        return false;
    }
    const char *p;
    size_t n = strip_ws(s, &p);
    if (n == 4 && !strncmp(p, "True", 4))
        return true;
    if (n == 5 && !strncmp(p, "False", 5))
        return false;
    if (n == 4 && !strncmp(p, "None", 4)) {
        *is_none = true;
        return false;
    }
    roof_fail(c, "eval of '%.40s' is not supported", s);
    return false;
}

/* ast.literal_eval of "[1, 2]" / "(1, 2)" / "(3,)" / "[True, False]". */
bool roof_literal_ints(struct roof_ctx *c, const char *s, struct roof_shape *out)
{
    out->n = 0;
    if (!roof_ok(c))
        return false;
    if (!s) {
        roof_fail(c, "ValueError: malformed node or string: None");
        return false;
    }
    const char *p = skip_ws(s);
    char close;
    if (*p == '[')
        close = ']';
    else if (*p == '(')
        close = ')';
    else
        goto bad;
    p = skip_ws(p + 1);
    if (*p == close)
        goto end;
    for (;;) {
        const char *t = p;
        while (*p && *p != ',' && *p != close && !isspace((unsigned char)*p))
            p++;
        int64_t v;
        size_t tl = (size_t)(p - t);
        if (tl == 4 && !strncmp(t, "True", 4))
            v = 1;
        else if (tl == 5 && !strncmp(t, "False", 5))
            v = 0;
        else if (!parse_int_token(t, p, &v))
            goto bad;
        if (out->n >= ROOF_MAX_DIMS) {
            roof_fail(c, "literal list too long");
            return false;
        }
        out->d[out->n++] = v;
        p = skip_ws(p);
        if (*p == ',') {
            p = skip_ws(p + 1);
            if (*p == close)
                break;
            continue;
        }
        if (*p == close)
            break;
        goto bad;
    }
end:
    p = skip_ws(p + 1);
    if (*p)
        goto bad;
    return true;
bad:
    out->n = 0;
    roof_fail(c, "ValueError: malformed literal '%.40s'", s);
    return false;
}

/* ---- integer arithmetic ---- */

/* r, or 0 with the row failed when the operation that gave it overflowed */
static int64_t checked(struct roof_ctx *c, bool overflow, int64_t r)
{
    if (overflow) {
        roof_fail(c, "integer overflow");
        return 0;
    }
    return r;
}

int64_t roof_mul(struct roof_ctx *c, int64_t a, int64_t b)
{
    int64_t r;
    bool o = __builtin_mul_overflow(a, b, &r);
    return checked(c, o, r);
}

int64_t roof_add(struct roof_ctx *c, int64_t a, int64_t b)
{
    int64_t r;
    bool o = __builtin_add_overflow(a, b, &r);
    return checked(c, o, r);
}

int64_t roof_prod(struct roof_ctx *c, const struct roof_shape *s, int from, int to)
{
    int64_t r = 1;
    for (int i = from < 0 ? 0 : from; i < to && i < s->n; i++)
        r = roof_mul(c, r, s->d[i]);
    return r;
}

/* ---- data types ---- */

int roof_bpe(const char *dtype)
{
    static const struct {
        const char *name;
        int bpe;
    } tab[] = {
        {"double", 8},
        {"long int", 8},
        {"float", 4},
        {"scalar", 4},
        {"int", 4},
        {"c10::half", 2},
        {"c10::bfloat16", 2},
        {"c10::float8_e4m3fnuz", 1},
        {"c10::float8_e4m3fn", 1},
        {"c10::float8_e5m2", 1},
        {"c10::float8_e8m0fnu", 1},
        {"unsigned char", 1},
        {"signed char", 1},
        {"fp8", 1},
        /* two FP4 values per byte; shapes in traces already count bytes */
        {"c10::float4_e2m1fn_x2", 1},
        {"fp4", 1},
    };

    if (!dtype)
        return 0;
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (!strcasecmp(dtype, tab[i].name))
            return tab[i].bpe;
    return 0;
}

const char *roof_precision(const char *dtype)
{
    static const struct {
        const char *name;
        const char *prec;
    } tab[] = {
        {"float", "fp32"},
        {"double", "fp64"},
        {"c10::half", "fp16"},
        {"c10::bfloat16", "bf16"},
        {"c10::float8_e4m3fnuz", "fp8"},
        {"unsigned char", "fp8"},
        {"fp8", "fp8"},
        {"fp4", "fp4"},
        {"mxfp4", "fp4"},
        {"c10::float4_e2m1fn_x2", "fp4"},
        {"c10::float8_e4m3fn", "fp8"},
    };

    if (!dtype || !dtype[0])
        return NULL;
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (!strcasecmp(dtype, tab[i].name))
            return tab[i].prec;
    return NULL;
}

void roof_set_spec(struct roof_ctx *c, const char *maf, const char *dtype)
{
    c->maf = maf;
    c->precision = roof_precision(dtype);
}

/* ---- parameter text ---- */

static bool pbuf_reserve(struct roof_ctx *c, size_t extra)
{
    if (c->oom)
        return false;
    if (MP_GROW(c->pbuf, c->pcap, c->plen + extra, 256)) {
        c->oom = true;
        return false;
    }
    return true;
}

static void put(struct roof_ctx *c, const char *s, size_t n)
{
    if (!pbuf_reserve(c, n + 1))
        return;
    memcpy(c->pbuf + c->plen, s, n);
    c->plen += n;
}

static void puts_(struct roof_ctx *c, const char *s)
{
    put(c, s, strlen(s));
}

static void put_int(struct roof_ctx *c, int64_t v)
{
    /* by hand: printf is a measurable part of a call, and ints are most params */
    char t[24], *e = t + sizeof(t), *p = e;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    put(c, p, (size_t)(e - p));
}

static void put_float(struct roof_ctx *c, double v)
{
    char t[64];
    mp_fmt_pyfloat(v, t, sizeof(t));
    puts_(c, t);
}

/* repr() of a Python str */
static void put_str_repr(struct roof_ctx *c, const char *s, size_t n)
{
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    put(c, &q, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char t[8];
        if (ch == (unsigned char)q || ch == '\\') {
            t[0] = '\\';
            t[1] = (char)ch;
            put(c, t, 2);
        } else if (ch == '\n') {
            puts_(c, "\\n");
        } else if (ch == '\r') {
            puts_(c, "\\r");
        } else if (ch == '\t') {
            puts_(c, "\\t");
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(t, sizeof(t), "\\x%02x", ch);
            puts_(c, t);
        } else {
            put(c, (const char *)&s[i], 1);
        }
    }
    put(c, &q, 1);
}

static void put_repr(struct roof_ctx *c, struct pv *v, int depth)
{
    if (!v) {
        puts_(c, "None");
        return;
    }
    if (depth > 64) {
        puts_(c, "...");
        return;
    }
    switch (v->type) {
    case ROOF_PV_INT:
        put_int(c, (int64_t)roof_pv_integer_value(v));
        break;
    case ROOF_PV_REAL:
        put_float(c, roof_pv_real_value(v));
        break;
    case ROOF_PV_STR:
        put_str_repr(c, roof_pv_string_value(v), roof_pv_string_length(v));
        break;
    case ROOF_PV_TRUE:
        puts_(c, "True");
        break;
    case ROOF_PV_FALSE:
        puts_(c, "False");
        break;
    case ROOF_PV_NULL:
        puts_(c, "None");
        break;
    case ROOF_PV_ARR: {
        puts_(c, "[");
        for (size_t i = 0; i < roof_pv_array_size(v); i++) {
            if (i)
                puts_(c, ", ");
            put_repr(c, roof_pv_array_get(v, i), depth + 1);
        }
        puts_(c, "]");
        break;
    }
    case ROOF_PV_OBJ: {
        puts_(c, "{");
        struct pv *e = roof_pv_child(v, 0);
        for (uint32_t i = 0; i < v->n; i++, e = roof_pv_next(e)) {
            if (i)
                puts_(c, ", ");
            const char *k = roof_pv_key(e);
            put_str_repr(c, k, strlen(k));
            puts_(c, ": ");
            put_repr(c, e, depth + 1);
        }
        puts_(c, "}");
        break;
    }
    }
}

int roof_p_find(struct roof_ctx *c, const char *key)
{
    for (int i = 0; i < c->out->n_params; i++) {
        const char *k = c->out->params[i].key;
        if (k == key || (k[0] == key[0] && !strcmp(k, key)))
            return i;
    }
    return -1;
}

/* Starts the text of param key (a dict assignment: an existing key keeps its
 * place and gets the new value). Returns false when there is no room. */
static bool pbegin(struct roof_ctx *c, const char *key, bool none)
{
    struct mp_roofline_result *r = c->out;
    int i = roof_p_find(c, key);
    if (i < 0) {
        if (r->n_params >= MP_ROOFLINE_MAX_PARAMS) {
            roof_fail(c, "more than %d parameters", MP_ROOFLINE_MAX_PARAMS);
            return false;
        }
        i = r->n_params++;
        r->params[i].key = key;
    }
    r->params[i].none = none;
    c->poff[i] = c->plen;
    return true;
}

static void pend(struct roof_ctx *c)
{
    if (pbuf_reserve(c, 1))
        c->pbuf[c->plen++] = '\0';
}

void roof_p_int(struct roof_ctx *c, const char *key, int64_t v)
{
    if (!pbegin(c, key, false))
        return;
    put_int(c, v);
    pend(c);
}

void roof_p_float(struct roof_ctx *c, const char *key, double v)
{
    if (!pbegin(c, key, false))
        return;
    put_float(c, v);
    pend(c);
}

void roof_p_bool(struct roof_ctx *c, const char *key, bool v)
{
    if (!pbegin(c, key, false))
        return;
    puts_(c, v ? "True" : "False");
    pend(c);
}

void roof_p_none(struct roof_ctx *c, const char *key)
{
    if (!pbegin(c, key, true))
        return;
    pend(c);
}

void roof_p_str(struct roof_ctx *c, const char *key, const char *s)
{
    if (!s) {
        roof_p_none(c, key);
        return;
    }
    if (!pbegin(c, key, false))
        return;
    puts_(c, s);
    pend(c);
}

void roof_p_tuple(struct roof_ctx *c, const char *key, struct pv *list)
{
    if (!roof_ok(c))
        return;
    /* tuple() of a str or a dict iterates its characters or keys */
    if (roof_pv_is_string(list) || roof_pv_is_object(list)) {
        if (!pbegin(c, key, false))
            return;
        size_t n = 0;
        puts_(c, "(");
        if (roof_pv_is_string(list)) {
            const char *t = roof_pv_string_value(list);
            for (size_t i = 0; i < roof_pv_string_length(list); i++, n++) {
                if (i)
                    puts_(c, ", ");
                put_str_repr(c, t + i, 1);
            }
        } else {
            struct pv *e = roof_pv_child(list, 0);
            for (uint32_t i = 0; i < list->n; i++, e = roof_pv_next(e)) {
                if (n++)
                    puts_(c, ", ");
                const char *k = roof_pv_key(e);
                put_str_repr(c, k, strlen(k));
            }
        }
        puts_(c, n == 1 ? ",)" : ")");
        pend(c);
        return;
    }
    if (!roof_pv_is_array(list)) {
        roof_fail(c, "TypeError: object is not iterable");
        return;
    }
    if (!pbegin(c, key, false))
        return;
    size_t n = roof_pv_array_size(list);
    puts_(c, "(");
    for (size_t i = 0; i < n; i++) {
        if (i)
            puts_(c, ", ");
        put_repr(c, roof_pv_array_get(list, i), 1);
    }
    puts_(c, n == 1 ? ",)" : ")");
    pend(c);
}

void roof_p_tuple_slice(struct roof_ctx *c, const char *key, struct pv *list, long from, long to)
{
    if (!roof_ok(c))
        return;
    if (!roof_pv_is_array(list)) {
        roof_fail(c, "TypeError: value is not subscriptable");
        return;
    }
    long n = (long)roof_pv_array_size(list);
    if (to < 0 || to > n)
        to = n;
    if (from > to)
        from = to;
    if (!pbegin(c, key, false))
        return;
    puts_(c, "(");
    for (long i = from; i < to; i++) {
        if (i > from)
            puts_(c, ", ");
        put_repr(c, roof_pv_array_get(list, (size_t)i), 1);
    }
    puts_(c, to - from == 1 ? ",)" : ")");
    pend(c);
}

void roof_p_repr(struct roof_ctx *c, const char *key, struct pv *v)
{
    if (!v || roof_pv_is_null(v)) {
        roof_p_none(c, key);
        return;
    }
    if (!pbegin(c, key, false))
        return;
    if (roof_pv_is_string(v))
        puts_(c, roof_pv_string_value(v)); /* str() of a str is the text itself */
    else
        put_repr(c, v, 0);
    pend(c);
}

void roof_p_shape(struct roof_ctx *c, const char *key, const struct roof_shape *s, bool as_list)
{
    if (!pbegin(c, key, false))
        return;
    puts_(c, as_list ? "[" : "(");
    for (int i = 0; i < s->n; i++) {
        if (i)
            puts_(c, ", ");
        put_int(c, s->d[i]);
    }
    puts_(c, as_list ? "]" : (s->n == 1 ? ",)" : ")"));
    pend(c);
}

void roof_p_strs(struct roof_ctx *c, const char *key, int n, const char *const *s, bool as_list)
{
    if (!pbegin(c, key, false))
        return;
    puts_(c, as_list ? "[" : "(");
    for (int i = 0; i < n; i++) {
        if (i)
            puts_(c, ", ");
        if (s[i])
            put_str_repr(c, s[i], strlen(s[i]));
        else
            puts_(c, "None");
    }
    puts_(c, as_list ? "]" : (n == 1 ? ",)" : ")"));
    pend(c);
}

void roof_p_bools(struct roof_ctx *c, const char *key, int n, const bool *v, bool as_list)
{
    if (!pbegin(c, key, false))
        return;
    puts_(c, as_list ? "[" : "(");
    for (int i = 0; i < n; i++) {
        if (i)
            puts_(c, ", ");
        puts_(c, v[i] ? "True" : "False");
    }
    puts_(c, as_list ? "]" : (n == 1 ? ",)" : ")"));
    pend(c);
}

void roof_p_int_or_none(struct roof_ctx *c, const char *key, bool has, int64_t v)
{
    if (has)
        roof_p_int(c, key, v);
    else
        roof_p_none(c, key);
}

void roof_p_unary_io(struct roof_ctx *c, const struct roof_shape *shape, const char *din,
                     const char *dout, struct pv *sin, struct pv *sout)
{
    roof_p_shape(c, "op_shape", shape, false);
    const char *dio[2] = {din, dout};
    roof_p_strs(c, "dtype_in_out", 2, dio, false);
    roof_p_tuple(c, "stride_input", sin);
    if (sout)
        roof_p_tuple(c, "stride_output", sout);
    else
        roof_p_none(c, "stride_output");
}
