/* tool_gapref: an independent reference implementation of Magpie's gap
 * analysis (Magpie/modes/benchmark/gap_analysis.py), used by
 * test_gap_diff.sh to check `magpie benchmark --trace-dir` byte for byte.
 *
 * It deliberately shares nothing with magpie's trace code: each trace is
 * inflated with zlib into memory and parsed as a DOM with jansson, and the
 * CSV writer is its own. It follows the Python code step by step, including
 * its float operation order (sums in event order, window bounds computed as
 * t_min + span * (pct / 100.0)) and its str()/repr() of Input Dims values.
 *
 * usage: tool_gapref -o OUT [--top-k N] [--start-pct P] [--end-pct P]
 *            [--min-duration-us U] [--categories [C...]]
 *            [--ignore-categories [C...]] [--no-rank-csv]
 *            --rank N FILE [--rank M FILE ...]
 * Writes OUT/gap_analysis/gap_analysis.csv and, with more than one rank,
 * gap_analysis_rank<N>.csv. Exit status 1 when no kernel survives (as
 * Magpie's standalone CLI), 2 on usage errors.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>
#include <zlib.h>

/* ---- small growable string ---- */
struct sbuf {
    char *p;
    size_t n, cap;
};

static void die_oom(void)
{
    fprintf(stderr, "tool_gapref: out of memory\n");
    exit(3);
}

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            die_oom();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_puts(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof(tmp)) {
        fprintf(stderr, "tool_gapref: formatting overflow\n");
        exit(3);
    }
    sb_add(b, tmp, (size_t)k);
}

/* ---- Python str()/repr() of JSON values (for Input Dims) ---- */

/* repr(float): the shortest digits that read back, laid out as Python does
 * (scientific when the decimal exponent is < -4 or >= 16). */
static void py_float_repr(double v, struct sbuf *b)
{
    if (isnan(v)) {
        sb_puts(b, "nan");
        return;
    }
    if (isinf(v)) {
        sb_puts(b, v < 0 ? "-inf" : "inf");
        return;
    }
    char e[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    /* e = [-]d[.ddd]e[+-]XX */
    const char *s = e;
    bool neg = false;
    if (*s == '-') {
        neg = true;
        s++;
    }
    char digits[32];
    size_t nd = 0;
    const char *q = s;
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q))
            digits[nd++] = *q;
    int exp10 = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    if (neg)
        sb_puts(b, "-");
    if (exp10 < -4 || exp10 >= 16) {
        sb_add(b, digits, 1);
        if (nd > 1) {
            sb_puts(b, ".");
            sb_add(b, digits + 1, nd - 1);
        }
        sb_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        sb_puts(b, "0.");
        for (int i = 0; i < -exp10 - 1; i++)
            sb_puts(b, "0");
        sb_add(b, digits, nd);
    } else {
        size_t ip = (size_t)exp10 + 1; /* digits before the point */
        if (nd <= ip) {
            sb_add(b, digits, nd);
            for (size_t i = nd; i < ip; i++)
                sb_puts(b, "0");
            sb_puts(b, ".0");
        } else {
            sb_add(b, digits, ip);
            sb_puts(b, ".");
            sb_add(b, digits + ip, nd - ip);
        }
    }
}

/* repr(str) for ASCII-ish text; non-ASCII bytes are copied (Python would
 * escape only the non-printable ones). */
static void py_str_repr(const char *s, size_t n, struct sbuf *b)
{
    bool has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char quote = (has_sq && !has_dq) ? '"' : '\'';
    sb_add(b, &quote, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)quote) {
            sb_puts(b, "\\");
            sb_add(b, s + i, 1);
        } else if (c == '\n') {
            sb_puts(b, "\\n");
        } else if (c == '\r') {
            sb_puts(b, "\\r");
        } else if (c == '\t') {
            sb_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            sb_printf(b, "\\x%02x", c);
        } else {
            sb_add(b, s + i, 1);
        }
    }
    sb_add(b, &quote, 1);
}

static void py_repr(const json_t *v, struct sbuf *b);

/* str(v): like repr except that a string is itself. */
static void py_str(const json_t *v, struct sbuf *b)
{
    if (json_is_string(v))
        sb_add(b, json_string_value(v), json_string_length(v));
    else
        py_repr(v, b);
}

static void py_repr(const json_t *v, struct sbuf *b)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        sb_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        py_float_repr(json_real_value(v), b);
        break;
    case JSON_STRING:
        py_str_repr(json_string_value(v), json_string_length(v), b);
        break;
    case JSON_TRUE:
        sb_puts(b, "True");
        break;
    case JSON_FALSE:
        sb_puts(b, "False");
        break;
    case JSON_NULL:
        sb_puts(b, "None");
        break;
    case JSON_ARRAY: {
        sb_puts(b, "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                sb_puts(b, ", ");
            py_repr(json_array_get(v, i), b);
        }
        sb_puts(b, "]");
        break;
    }
    case JSON_OBJECT: {
        sb_puts(b, "{");
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)v, k, x)
        {
            if (!first)
                sb_puts(b, ", ");
            first = false;
            py_str_repr(k, strlen(k), b);
            sb_puts(b, ": ");
            py_repr(x, b);
        }
        sb_puts(b, "}");
        break;
    }
    }
}

/* Python truthiness of a JSON value. */
static bool py_truthy(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return json_object_size(v) > 0;
    case JSON_ARRAY:
        return json_array_size(v) > 0;
    case JSON_STRING:
        return json_string_length(v) > 0;
    case JSON_INTEGER:
        return json_integer_value(v) != 0;
    case JSON_REAL:
        return json_real_value(v) != 0.0;
    case JSON_TRUE:
        return true;
    default:
        return false;
    }
}

/* A JSON number (or bool, which Python treats as int) as a double. */
static bool py_number(const json_t *v, double *out)
{
    if (json_is_integer(v))
        *out = (double)json_integer_value(v);
    else if (json_is_real(v))
        *out = json_real_value(v);
    else if (json_is_true(v))
        *out = 1.0;
    else if (json_is_false(v))
        *out = 0.0;
    else
        return false;
    return true;
}

/* Hash key of a Python value used as a dict key: 5, 5.0 and True are the
 * same key in Python. Returns false for unhashable values. */
static bool py_key(const json_t *v, struct sbuf *b)
{
    double d;
    if (json_is_integer(v)) {
        sb_printf(b, "i%lld", (long long)json_integer_value(v));
    } else if (py_number(v, &d)) {
        if (d == floor(d) && fabs(d) < 9.2e18)
            sb_printf(b, "i%lld", (long long)d);
        else
            sb_printf(b, "r%.17g", d);
    } else if (json_is_string(v)) {
        sb_puts(b, "s");
        sb_add(b, json_string_value(v), json_string_length(v));
    } else {
        return false;
    }
    return true;
}

/* GapAnalyzer._format_input_dims; returns false where Python would raise. */
static bool format_input_dims(const json_t *dims, struct sbuf *out)
{
    if (!py_truthy(dims))
        return true;
    if (json_is_object(dims) || json_is_string(dims))
        return true; /* iterates keys / characters: never lists */
    if (!json_is_array(dims))
        return false; /* iterating a number raises TypeError */
    bool any = false;
    for (size_t i = 0; i < json_array_size(dims); i++) {
        const json_t *dim = json_array_get(dims, i);
        if (!json_is_array(dim) || json_array_size(dim) == 0)
            continue;
        if (any)
            sb_puts(out, "x");
        any = true;
        sb_puts(out, "[");
        for (size_t j = 0; j < json_array_size(dim); j++) {
            if (j)
                sb_puts(out, ",");
            py_str(json_array_get(dim, j), out);
        }
        sb_puts(out, "]");
    }
    return true;
}

/* ---- a tiny string -> index hash map ---- */
struct smap {
    char **keys;
    size_t *lens;
    long *vals;
    size_t cap, n;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static long *smap_slot(struct smap *m, const char *k, size_t n, bool insert)
{
    if (insert && (m->n + 1) * 2 > m->cap) {
        struct smap g = {0};
        g.cap = m->cap ? m->cap * 2 : 64;
        g.keys = calloc(g.cap, sizeof(char *));
        g.lens = calloc(g.cap, sizeof(size_t));
        g.vals = calloc(g.cap, sizeof(long));
        if (!g.keys || !g.lens || !g.vals)
            die_oom();
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = hash_bytes(m->keys[i], m->lens[i]) & (g.cap - 1);
            while (g.keys[j])
                j = (j + 1) & (g.cap - 1);
            g.keys[j] = m->keys[i];
            g.lens[j] = m->lens[i];
            g.vals[j] = m->vals[i];
        }
        g.n = m->n;
        free(m->keys);
        free(m->lens);
        free(m->vals);
        *m = g;
    }
    if (!m->cap)
        return NULL;
    size_t j = hash_bytes(k, n) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->lens[j] == n && memcmp(m->keys[j], k, n) == 0)
            return &m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!insert)
        return NULL;
    m->keys[j] = malloc(n + 1);
    if (!m->keys[j])
        die_oom();
    memcpy(m->keys[j], k, n);
    m->keys[j][n] = 0;
    m->lens[j] = n;
    m->vals[j] = -1;
    m->n++;
    return &m->vals[j];
}

static void smap_free(struct smap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->lens);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* ---- kernel statistics ---- */
struct kstat {
    char *name;
    size_t name_len;
    double total;
    long calls;
    char **shapes; /* non-empty shapes in order */
    size_t nshapes, capshapes;
    size_t order; /* first appearance, for the stable sort */
};

struct klist {
    struct kstat *k;
    size_t n, cap;
    struct smap idx;
};

static struct kstat *klist_get(struct klist *l, const char *name, size_t n)
{
    long *slot = smap_slot(&l->idx, name, n, true);
    if (*slot >= 0)
        return &l->k[*slot];
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->k = realloc(l->k, l->cap * sizeof(*l->k));
        if (!l->k)
            die_oom();
    }
    struct kstat *k = &l->k[l->n];
    memset(k, 0, sizeof(*k));
    k->name = malloc(n + 1);
    if (!k->name)
        die_oom();
    memcpy(k->name, name, n);
    k->name[n] = 0;
    k->name_len = n;
    k->order = l->n;
    *slot = (long)l->n++;
    return k;
}

static void kstat_add_shape(struct kstat *k, const char *s)
{
    if (k->nshapes == k->capshapes) {
        k->capshapes = k->capshapes ? k->capshapes * 2 : 8;
        k->shapes = realloc(k->shapes, k->capshapes * sizeof(char *));
        if (!k->shapes)
            die_oom();
    }
    k->shapes[k->nshapes] = strdup(s);
    if (!k->shapes[k->nshapes])
        die_oom();
    k->nshapes++;
}

static void klist_free(struct klist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->k[i].name);
        for (size_t j = 0; j < l->k[i].nshapes; j++)
            free(l->k[i].shapes[j]);
        free(l->k[i].shapes);
    }
    free(l->k);
    smap_free(&l->idx);
    memset(l, 0, sizeof(*l));
}

/* sorted(key=lambda k: -k.total): descending total, ties keep order. */
static int kstat_cmp(const void *a, const void *b)
{
    const struct kstat *x = a, *y = b;
    double kx = -x->total, ky = -y->total;
    if (kx < ky)
        return -1;
    if (kx > ky)
        return 1;
    return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static void klist_sort(struct klist *l)
{
    if (l->n > 1)
        qsort(l->k, l->n, sizeof(*l->k), kstat_cmp);
    /* the index map is stale after sorting; rebuild it */
    smap_free(&l->idx);
    for (size_t i = 0; i < l->n; i++) {
        l->k[i].order = i;
        *smap_slot(&l->idx, l->k[i].name, l->k[i].name_len, true) = (long)i;
    }
}

/* ---- options ---- */
struct opts {
    const char *out;
    long top_k;
    double start_pct, end_pct, min_dur;
    const char **cats;
    size_t ncats;
    const char **ign;
    size_t nign;
    bool no_rank_csv;

    struct {
        long rank;
        const char *path;
    } files[256];

    size_t nfiles;
};

/* Python's ASCII-safe lower() approximation: only ASCII letters change. */
static char *lower_dup(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (!r)
        die_oom();
    for (size_t i = 0; i < n; i++)
        r[i] = (char)tolower((unsigned char)s[i]);
    r[n] = 0;
    return r;
}

/* `needle in hay` on byte strings (an empty needle is always found). */
static bool contains(const char *hay, size_t hn, const char *needle)
{
    size_t nn = strlen(needle);
    if (nn == 0)
        return true;
    for (size_t i = 0; i + nn <= hn; i++)
        if (memcmp(hay + i, needle, nn) == 0)
            return true;
    return false;
}

/* ---- trace loading ---- */
static json_t *load_trace(const char *path, char *err, size_t errlen)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        die_oom();
    for (;;) {
        if (cap - n < (1 << 16)) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                die_oom();
        }
        int got = gzread(f, buf + n, (unsigned)(cap - n));
        if (got < 0) {
            int zerr;
            snprintf(err, errlen, "%s: gzip error: %s", path, gzerror(f, &zerr));
            gzclose(f);
            free(buf);
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(f);
    json_error_t je;
    json_t *doc = json_loadb(buf, n, JSON_ALLOW_NUL, &je);
    free(buf);
    if (!doc)
        snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    return doc;
}

/* ---- one rank (GapAnalyzer._analyze_single_rank) ---- */
struct rank_result {
    long rank;
    double total;
    struct klist kernels;
};

static const char *dims_key = "Input Dims";
static const char *ext_key = "External id";

/* ev.get("args", {}) — NULL when args is present but not a dict (where
 * Python's .get would raise). */
static bool get_args(const json_t *ev, const json_t **args)
{
    const json_t *a = json_object_get(ev, "args");
    if (!a) {
        *args = NULL;
        return true;
    }
    if (!json_is_object(a))
        return false;
    *args = a;
    return true;
}

static int analyze_rank(const struct opts *o, json_t *doc, struct rank_result *rr, char *err,
                        size_t errlen)
{
    json_t *events;
    if (json_is_object(doc)) {
        events = json_object_get(doc, "traceEvents");
        if (!events)
            return 0; /* no events: empty result */
        if (!json_is_array(events)) {
            snprintf(err, errlen, "traceEvents is not a list");
            return -1;
        }
    } else {
        events = doc;
    }
    size_t n = json_array_size(events);
    for (size_t i = 0; i < n; i++)
        if (!json_is_object(json_array_get(events, i))) {
            snprintf(err, errlen, "event %zu is not an object", i);
            return -1;
        }

    /* 1. time window */
    bool *keep = malloc((n ? n : 1) * sizeof(bool));
    if (!keep)
        die_oom();
    for (size_t i = 0; i < n; i++)
        keep[i] = true;
    if (!(o->start_pct <= 0 && o->end_pct >= 100)) {
        double t_min = INFINITY, t_max = -INFINITY;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            const json_t *ev = json_array_get(events, i);
            const json_t *jts = json_object_get(ev, "ts");
            if (!jts || json_is_null(jts))
                continue;
            const json_t *jdur = json_object_get(ev, "dur");
            double ts, dur = 0;
            if (!py_number(jts, &ts) || (jdur && !py_number(jdur, &dur))) {
                snprintf(err, errlen, "event %zu: bad ts/dur", i);
                free(keep);
                return -1;
            }
            any = true;
            if (ts < t_min)
                t_min = ts;
            if (ts + dur > t_max)
                t_max = ts + dur;
        }
        if (any) {
            double span = t_max - t_min;
            double t_start = t_min + span * (o->start_pct / 100.0);
            double t_end = t_min + span * (o->end_pct / 100.0);
            for (size_t i = 0; i < n; i++) {
                const json_t *ev = json_array_get(events, i);
                const json_t *jts = json_object_get(ev, "ts");
                const json_t *jdur = json_object_get(ev, "dur");
                double ts = 0, dur = 0;
                if (!jts || json_is_null(jts)) {
                    keep[i] = false;
                    continue;
                }
                py_number(jts, &ts);
                if (jdur)
                    py_number(jdur, &dur);
                keep[i] = (ts + dur) >= t_start && ts <= t_end;
            }
        }
    }

    int rc = 0;
    struct smap shape_map = {0};
    char **shape_vals = NULL;
    size_t nshape_vals = 0, capshape_vals = 0;
    struct sbuf key = {0}, shape = {0};

    /* 2. shape map from cpu_op events */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!keep[i])
            continue;
        const json_t *ev = json_array_get(events, i);
        const json_t *jcat = json_object_get(ev, "cat");
        const char *cat = "";
        size_t catn = 0;
        if (jcat && py_truthy(jcat)) {
            if (!json_is_string(jcat)) {
                snprintf(err, errlen, "event %zu: cat is not a string", i);
                rc = -1;
                break;
            }
            cat = json_string_value(jcat);
            catn = json_string_length(jcat);
        }
        char *lc = lower_dup(cat, catn);
        bool is_cpu_op = contains(lc, catn, "cpu_op");
        free(lc);
        if (!is_cpu_op)
            continue;
        const json_t *args;
        if (!get_args(ev, &args)) {
            snprintf(err, errlen, "event %zu: args is not an object", i);
            rc = -1;
            break;
        }
        if (!args)
            continue;
        const json_t *ext = json_object_get(args, ext_key);
        const json_t *dims = json_object_get(args, dims_key);
        if (!ext || json_is_null(ext) || !dims || !py_truthy(dims))
            continue;
        shape.n = 0;
        sb_puts(&shape, "");
        if (!format_input_dims(dims, &shape)) {
            snprintf(err, errlen, "event %zu: Input Dims not iterable", i);
            rc = -1;
            break;
        }
        if (shape.n == 0)
            continue;
        key.n = 0;
        sb_puts(&key, "");
        if (!py_key(ext, &key)) {
            snprintf(err, errlen, "event %zu: External id unhashable", i);
            rc = -1;
            break;
        }
        long *slot = smap_slot(&shape_map, key.p, key.n, true);
        if (*slot < 0) {
            if (nshape_vals == capshape_vals) {
                capshape_vals = capshape_vals ? capshape_vals * 2 : 256;
                shape_vals = realloc(shape_vals, capshape_vals * sizeof(char *));
                if (!shape_vals)
                    die_oom();
            }
            shape_vals[nshape_vals] = NULL;
            *slot = (long)nshape_vals++;
        }
        free(shape_vals[*slot]);
        shape_vals[*slot] = strdup(shape.p);
        if (!shape_vals[*slot])
            die_oom();
    }

    /* lowered filter lists */
    char **cats = calloc(o->ncats + 1, sizeof(char *));
    char **ign = calloc(o->nign + 1, sizeof(char *));
    if (!cats || !ign)
        die_oom();
    for (size_t c = 0; c < o->ncats; c++)
        cats[c] = lower_dup(o->cats[c], strlen(o->cats[c]));
    for (size_t c = 0; c < o->nign; c++)
        ign[c] = lower_dup(o->ign[c], strlen(o->ign[c]));

    /* 3. category filter, 4. min duration, 5. aggregate */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!keep[i])
            continue;
        const json_t *ev = json_array_get(events, i);
        const json_t *jcat = json_object_get(ev, "cat");
        const char *cat = "";
        size_t catn = 0;
        if (jcat && py_truthy(jcat)) {
            if (!json_is_string(jcat)) {
                snprintf(err, errlen, "event %zu: cat is not a string", i);
                rc = -1;
                break;
            }
            cat = json_string_value(jcat);
            catn = json_string_length(jcat);
        }
        char *lc = lower_dup(cat, catn);
        bool drop = false;
        for (size_t c = 0; c < o->nign && !drop; c++)
            if (contains(lc, catn, ign[c]))
                drop = true;
        if (!drop && o->ncats) {
            bool ok = false;
            for (size_t c = 0; c < o->ncats && !ok; c++)
                if (contains(lc, catn, cats[c]))
                    ok = true;
            drop = !ok;
        }
        free(lc);
        if (drop)
            continue;

        const json_t *jname = json_object_get(ev, "name");
        const char *name = "<?>";
        size_t namen = 3;
        if (jname) {
            if (!json_is_string(jname)) {
                snprintf(err, errlen, "event %zu: name is not a string", i);
                rc = -1;
                break;
            }
            name = json_string_value(jname);
            namen = json_string_length(jname);
        }
        const json_t *jdur = json_object_get(ev, "dur");
        double dur = 0.0;
        if (jdur && !py_number(jdur, &dur)) {
            snprintf(err, errlen, "event %zu: dur is not a number", i);
            rc = -1;
            break;
        }
        const char *shape_str = "";
        const json_t *args;
        if (!get_args(ev, &args)) {
            snprintf(err, errlen, "event %zu: args is not an object", i);
            rc = -1;
            break;
        }
        const json_t *ext = args ? json_object_get(args, ext_key) : NULL;
        if (ext && !json_is_null(ext)) {
            key.n = 0;
            sb_puts(&key, "");
            if (!py_key(ext, &key)) {
                snprintf(err, errlen, "event %zu: External id unhashable", i);
                rc = -1;
                break;
            }
            long *slot = smap_slot(&shape_map, key.p, key.n, false);
            if (slot)
                shape_str = shape_vals[*slot];
        }
        if (o->min_dur > 0 && !(dur >= o->min_dur))
            continue;
        struct kstat *k = klist_get(&rr->kernels, name, namen);
        k->total += dur;
        k->calls++;
        if (shape_str[0])
            kstat_add_shape(k, shape_str);
    }

    if (rc == 0) {
        klist_sort(&rr->kernels);
        double total = 0;
        for (size_t i = 0; i < rr->kernels.n; i++)
            total += rr->kernels.k[i].total;
        rr->total = total;
    }

    for (size_t c = 0; c < o->ncats; c++)
        free(cats[c]);
    for (size_t c = 0; c < o->nign; c++)
        free(ign[c]);
    free(cats);
    free(ign);
    for (size_t i = 0; i < nshape_vals; i++)
        free(shape_vals[i]);
    free(shape_vals);
    smap_free(&shape_map);
    free(key.p);
    free(shape.p);
    free(keep);
    return rc;
}

/* ---- CSV (Python csv.writer: QUOTE_MINIMAL, "\r\n") ---- */
static void csv_field(struct sbuf *b, const char *s, size_t n, bool first)
{
    if (!first)
        sb_puts(b, ",");
    bool quote = false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
            quote = true;
    if (!quote) {
        sb_add(b, s, n);
        return;
    }
    sb_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            sb_puts(b, "\"");
        sb_add(b, s + i, 1);
    }
    sb_puts(b, "\"");
}

/* KernelStat.unique_shapes */
static void unique_shapes(const struct kstat *k, struct sbuf *out)
{
    size_t taken = 0;
    for (size_t i = 0; i < k->nshapes && taken < 10; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            if (strcmp(k->shapes[j], k->shapes[i]) == 0)
                seen = true;
        if (seen)
            continue;
        if (taken)
            sb_puts(out, "; ");
        sb_puts(out, k->shapes[i]);
        taken++;
    }
}

static size_t py_slice_len(size_t n, long top_k)
{
    if (top_k >= 0)
        return (size_t)top_k < n ? (size_t)top_k : n;
    long r = (long)n + top_k;
    return r > 0 ? (size_t)r : 0;
}

static int write_csv(const char *path, const struct klist *l, size_t count, double overall)
{
    struct sbuf b = {0}, tmp = {0};
    sb_puts(&b, "Name,Calls,Self CUDA total (us),Avg time (us),% Total,Input Shapes\r\n");
    for (size_t i = 0; i < count; i++) {
        const struct kstat *k = &l->k[i];
        double avg = k->calls ? k->total / (double)k->calls : 0.0;
        double pct = overall > 0 ? k->total / overall * 100.0 : 0.0;
        csv_field(&b, k->name, k->name_len, true);
        tmp.n = 0;
        sb_printf(&tmp, "%ld", k->calls);
        csv_field(&b, tmp.p, tmp.n, false);
        tmp.n = 0;
        sb_printf(&tmp, "%.2f", k->total);
        csv_field(&b, tmp.p, tmp.n, false);
        tmp.n = 0;
        sb_printf(&tmp, "%.2f", avg);
        csv_field(&b, tmp.p, tmp.n, false);
        tmp.n = 0;
        sb_printf(&tmp, "%.2f", pct);
        csv_field(&b, tmp.p, tmp.n, false);
        tmp.n = 0;
        sb_puts(&tmp, "");
        unique_shapes(k, &tmp);
        csv_field(&b, tmp.p, tmp.n, false);
        sb_puts(&b, "\r\n");
    }
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!f || fwrite(b.p, 1, b.n, f) != b.n)
        rc = -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc)
        fprintf(stderr, "tool_gapref: cannot write %s\n", path);
    free(b.p);
    free(tmp.p);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: tool_gapref -o OUT [--top-k N] [--start-pct P] [--end-pct P]\n"
                    "         [--min-duration-us U] [--categories [C...]]\n"
                    "         [--ignore-categories [C...]] [--no-rank-csv]\n"
                    "         --rank N FILE [--rank M FILE ...]\n");
    return 2;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return end != s && !*end && errno == 0;
}

static bool parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return end != s && !*end && errno == 0;
}

static int cmp_rank(const void *a, const void *b)
{
    const long *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static const char *default_cats[] = {"kernel", "gpu"};
static const char *default_ign[] = {"gpu_user_annotation", "user_annotation"};

int main(int argc, char **argv)
{
    struct opts o = {.top_k = 20, .start_pct = 0.0, .end_pct = 100.0, .min_dur = 0.0};
    o.cats = default_cats;
    o.ncats = 2;
    o.ign = default_ign;
    o.nign = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-o") || !strcmp(a, "--output-dir")) && i + 1 < argc) {
            o.out = argv[++i];
        } else if (!strcmp(a, "--top-k") && i + 1 < argc) {
            if (!parse_long(argv[++i], &o.top_k))
                return usage();
        } else if (!strcmp(a, "--start-pct") && i + 1 < argc) {
            if (!parse_double(argv[++i], &o.start_pct))
                return usage();
        } else if (!strcmp(a, "--end-pct") && i + 1 < argc) {
            if (!parse_double(argv[++i], &o.end_pct))
                return usage();
        } else if (!strcmp(a, "--min-duration-us") && i + 1 < argc) {
            if (!parse_double(argv[++i], &o.min_dur))
                return usage();
        } else if (!strcmp(a, "--categories") || !strcmp(a, "--ignore-categories")) {
            /* nargs="*": every following argument up to the next option */
            int j = i + 1;
            while (j < argc && strncmp(argv[j], "--", 2) != 0)
                j++;
            if (!strcmp(a, "--categories")) {
                o.cats = (const char **)(argv + i + 1);
                o.ncats = (size_t)(j - i - 1);
            } else {
                o.ign = (const char **)(argv + i + 1);
                o.nign = (size_t)(j - i - 1);
            }
            i = j - 1;
        } else if (!strcmp(a, "--no-rank-csv")) {
            o.no_rank_csv = true;
        } else if (!strcmp(a, "--rank") && i + 2 < argc) {
            if (o.nfiles == sizeof(o.files) / sizeof(o.files[0]))
                return usage();
            if (!parse_long(argv[i + 1], &o.files[o.nfiles].rank))
                return usage();
            o.files[o.nfiles++].path = argv[i + 2];
            i += 2;
        } else {
            fprintf(stderr, "tool_gapref: unexpected argument '%s'\n", a);
            return usage();
        }
    }
    if (!o.out || o.nfiles == 0)
        return usage();

    /* Magpie sorts the discovered files by rank (stable). */
    long order[256][2];
    for (size_t i = 0; i < o.nfiles; i++) {
        order[i][0] = o.files[i].rank;
        order[i][1] = (long)i;
    }
    qsort(order, o.nfiles, sizeof(order[0]), cmp_rank);

    char gap_dir[4096];
    snprintf(gap_dir, sizeof(gap_dir), "%s/gap_analysis", o.out);
    mkdir(o.out, 0777);
    if (mkdir(gap_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tool_gapref: cannot create %s: %s\n", gap_dir, strerror(errno));
        return 2;
    }

    struct rank_result *rr = calloc(o.nfiles, sizeof(*rr));
    if (!rr)
        die_oom();
    size_t nrr = 0;
    for (size_t i = 0; i < o.nfiles; i++) {
        size_t fi = (size_t)order[i][1];
        char err[1024] = "";
        json_t *doc = load_trace(o.files[fi].path, err, sizeof(err));
        struct rank_result *r = &rr[nrr];
        r->rank = o.files[fi].rank;
        if (!doc || analyze_rank(&o, doc, r, err, sizeof(err)) != 0) {
            printf("Warning: Failed to analyze rank %ld (%s): %s\n", r->rank, o.files[fi].path,
                   err);
            klist_free(&r->kernels);
            memset(r, 0, sizeof(*r));
        } else {
            nrr++;
        }
        json_decref(doc);
    }

    /* 6. merge ranks: rank order, then each rank's sorted list */
    struct klist merged = {0};
    double overall = 0;
    for (size_t i = 0; i < nrr; i++) {
        for (size_t j = 0; j < rr[i].kernels.n; j++) {
            const struct kstat *k = &rr[i].kernels.k[j];
            struct kstat *m = klist_get(&merged, k->name, k->name_len);
            m->total += k->total;
            m->calls += k->calls;
            for (size_t s = 0; s < k->nshapes; s++)
                kstat_add_shape(m, k->shapes[s]);
        }
    }
    klist_sort(&merged);
    for (size_t i = 0; i < nrr; i++)
        overall += rr[i].total;

    int rc = 0;
    size_t nmerged = py_slice_len(merged.n, o.top_k);
    if (nmerged == 0) {
        printf("No kernel events found in traces.\n");
        rc = 1;
    } else {
        char path[4200];
        snprintf(path, sizeof(path), "%s/gap_analysis.csv", gap_dir);
        if (write_csv(path, &merged, nmerged, overall) != 0)
            rc = 2;
        if (nrr > 1 && !o.no_rank_csv) {
            for (size_t i = 0; i < nrr && rc == 0; i++) {
                snprintf(path, sizeof(path), "%s/gap_analysis_rank%ld.csv", gap_dir, rr[i].rank);
                if (write_csv(path, &rr[i].kernels, py_slice_len(rr[i].kernels.n, o.top_k),
                              rr[i].total) != 0)
                    rc = 2;
            }
        }
        if (rc == 0)
            printf("tool_gapref: %zu rank(s), %zu kernel(s), total %.2f us\n", nrr, nmerged,
                   overall);
    }
    for (size_t i = 0; i < nrr; i++)
        klist_free(&rr[i].kernels);
    free(rr);
    klist_free(&merged);
    return rc;
}
