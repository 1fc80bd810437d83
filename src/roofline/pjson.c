/* A small JSON reader for one op's "args" object.
 *
 * mp_roofline_model runs once per CPU op (tens of thousands per trace), and a
 * general DOM (jansson) spends most of that time allocating a node per value.
 * Args objects are small, so this reader parses into one flat array of nodes
 * in pre-order (each node knows the size of its subtree, so siblings are a
 * jump away) and decodes strings into one character buffer; both start on
 * the caller's stack and move to the heap only for unusually large args.
 * Accepts what Python's json accepts, including NaN / Infinity. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/jsonlex.h>

#include "roofline_int.h"

#define ROOF_PV_MAX_DEPTH 64
/* hard bounds: args beyond these are not ops TraceLens can model anyway */
#define ROOF_PV_MAX_NODES (1u << 20)
#define ROOF_PV_MAX_TEXT ((size_t)64 << 20)

struct parser {
    const char *p, *e;
    struct roof_pv_doc *d;
    bool oom;
};

static void ws(struct parser *ps)
{
    ps->p = mp_json_skip_ws(ps->p, ps->e);
}

static struct pv *new_node(struct parser *ps, uint32_t *idx)
{
    struct roof_pv_doc *d = ps->d;
    if (d->n == d->cap) {
        if (d->cap >= ROOF_PV_MAX_NODES) {
            ps->oom = true;
            return NULL;
        }
        size_t cap = (size_t)d->cap * 2;
        struct pv *nn = d->nodes == d->inline_nodes ? malloc(cap * sizeof(*nn))
                                                    : mp_reallocarray(d->nodes, cap, sizeof(*nn));
        if (!nn) {
            ps->oom = true;
            return NULL;
        }
        if (d->nodes == d->inline_nodes)
            memcpy(nn, d->inline_nodes, d->n * sizeof(*nn));
        d->nodes = nn;
        d->cap = (uint32_t)cap;
    }
    *idx = d->n++;
    struct pv *v = &d->nodes[*idx];
    memset(v, 0, sizeof(*v));
    return v;
}

/* Reserves n bytes of string storage; returns the offset or SIZE_MAX. */
static size_t text_reserve(struct parser *ps, size_t n)
{
    struct roof_pv_doc *d = ps->d;
    if (d->tlen + n > d->tcap) {
        size_t cap = d->tcap;
        while (cap < d->tlen + n)
            cap *= 2;
        if (cap > ROOF_PV_MAX_TEXT) {
            ps->oom = true;
            return SIZE_MAX;
        }
        char *t = d->text == d->inline_text ? malloc(cap) : realloc(d->text, cap);
        if (!t) {
            ps->oom = true;
            return SIZE_MAX;
        }
        if (d->text == d->inline_text)
            memcpy(t, d->inline_text, d->tlen);
        d->text = t;
        d->tcap = cap;
    }
    size_t off = d->tlen;
    d->tlen += n;
    return off;
}

/* Decodes the string at ps->p (opening quote) into the text buffer; returns
 * the text offset and length. Decoded text is never longer than the raw. */
static bool string(struct parser *ps, size_t *off, uint32_t *len)
{
    const char *s = ++ps->p;
    const char *q = s;
    while (q < ps->e && *q != '"') {
        if (*q == '\\')
            q++;
        if (q < ps->e)
            q++;
    }
    if (q >= ps->e)
        return false;
    size_t o = text_reserve(ps, (size_t)(q - s) + 1);
    if (o == SIZE_MAX)
        return false;
    char *w = ps->d->text + o, *w0 = w;
    for (const char *r = s; r < q;) {
        unsigned char c = (unsigned char)*r;
        if (c < 0x20)
            return false;
        if (c != '\\') {
            *w++ = (char)c;
            r++;
            continue;
        }
        /* [r, q] holds the closing quote, so an escape cut by it is an error
         * here as the end of the text is to a streaming reader; at most 4
         * UTF-8 bytes come out of 6 (or 12) escaped ones */
        size_t n = 0;
        int used = mp_json_unescape(r, q + 1, w, &n);
        if (used < 0)
            return false;
        w += n;
        r += used;
    }
    *w = '\0';
    *off = o;
    *len = (uint32_t)(w - w0);
    ps->p = q + 1;
    return true;
}

static bool number(struct parser *ps, struct pv *v)
{
    const char *s = ps->p, *q = s;
    bool real = false;
    if (q < ps->e && *q == '-')
        q++;
    if (ps->e - q >= 8 && !strncmp(q, "Infinity", 8)) {
        v->type = ROOF_PV_REAL;
        v->d = *s == '-' ? -INFINITY : INFINITY;
        ps->p = q + 8;
        return true;
    }
    while (q < ps->e && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' ||
                         *q == '+' || *q == '-')) {
        if (*q == '.' || *q == 'e' || *q == 'E')
            real = true;
        q++;
    }
    size_t n = (size_t)(q - s);
    if (n == 0)
        return false;
    if (!real) {
        /* integers by hand (most values in args); overflow falls to strtod */
        const char *r = s;
        bool neg = *r == '-';
        r += neg;
        uint64_t x = 0;
        bool ok = r < q;
        for (; r < q && ok; r++) {
            if (*r < '0' || *r > '9' || x > (UINT64_MAX - 9) / 10)
                ok = false;
            else
                x = x * 10 + (uint64_t)(*r - '0');
        }
        if (ok && x <= (uint64_t)INT64_MAX) {
            v->type = ROOF_PV_INT;
            v->i = neg ? -(int64_t)x : (int64_t)x;
            ps->p = q;
            return true;
        }
        /* an integer beyond int64 (Python keeps it exact): read as a real */
    }
    char tmp[64];
    if (n >= sizeof(tmp))
        return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    double d = strtod(tmp, &end);
    if (*end != '\0')
        return false;
    v->type = ROOF_PV_REAL;
    v->d = d;
    ps->p = q;
    return true;
}

static bool value(struct parser *ps, int depth, size_t key_off, bool has_key);

static bool lit(struct parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->e - ps->p) < n || strncmp(ps->p, w, n) != 0)
        return false;
    ps->p += n;
    return true;
}

/* Parses one value into a new node; has_key: the node is an object member
 * whose key starts at key_off in the text buffer. */
static bool value(struct parser *ps, int depth, size_t key_off, bool has_key)
{
    if (depth > ROOF_PV_MAX_DEPTH)
        return false;
    ws(ps);
    if (ps->p >= ps->e)
        return false;
    uint32_t idx;
    if (!new_node(ps, &idx))
        return false;
        /* the node array may move while children are added: address by index */
#define V (&ps->d->nodes[idx])
    V->key_off = has_key ? (uint32_t)key_off + 1 : 0;
    char c = *ps->p;
    bool ok = true;
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        V->type = obj ? ROOF_PV_OBJ : ROOF_PV_ARR;
        ps->p++;
        ws(ps);
        uint32_t count = 0;
        if (ps->p < ps->e && *ps->p == (obj ? '}' : ']')) {
            ps->p++;
        } else {
            for (;;) {
                size_t ko = 0;
                if (obj) {
                    ws(ps);
                    uint32_t kl;
                    if (ps->p >= ps->e || *ps->p != '"' || !string(ps, &ko, &kl))
                        return false;
                    ws(ps);
                    if (ps->p >= ps->e || *ps->p != ':')
                        return false;
                    ps->p++;
                }
                if (!value(ps, depth + 1, ko, obj))
                    return false;
                count++;
                ws(ps);
                if (ps->p < ps->e && *ps->p == ',') {
                    ps->p++;
                    continue;
                }
                if (ps->p < ps->e && *ps->p == (obj ? '}' : ']')) {
                    ps->p++;
                    break;
                }
                return false;
            }
        }
        V->n = count;
    } else if (c == '"') {
        size_t off = 0;
        uint32_t len = 0;
        ok = string(ps, &off, &len);
        V->type = ROOF_PV_STR;
        V->str_off = (uint32_t)off;
        V->n = len;
    } else if (lit(ps, "true")) {
        V->type = ROOF_PV_TRUE;
    } else if (lit(ps, "false")) {
        V->type = ROOF_PV_FALSE;
    } else if (lit(ps, "null")) {
        V->type = ROOF_PV_NULL;
    } else if (lit(ps, "NaN")) {
        V->type = ROOF_PV_REAL;
        V->d = NAN;
    } else {
        ok = number(ps, V);
    }
    if (ok)
        V->size = ps->d->n - idx;
#undef V
    return ok;
}

int roof_pv_parse(const char *text, size_t len, struct roof_pv_doc *d)
{
    d->nodes = d->inline_nodes;
    d->cap = ROOF_PV_INLINE_NODES;
    d->n = 0;
    d->text = d->inline_text;
    d->tcap = ROOF_PV_INLINE_TEXT;
    d->tlen = 0;
    struct parser ps = {text, text + len, d, false};
    if (len > ROOF_PV_MAX_TEXT)
        return MP_ENOMEM;
    bool ok = value(&ps, 0, 0, false);
    ws(&ps);
    if (ps.oom)
        return MP_ENOMEM;
    if (!ok || ps.p != ps.e)
        return MP_EPARSE;
    /* the document's address is only final now (nodes may have moved) */
    for (uint32_t i = 0; i < d->n; i++)
        d->nodes[i].doc = d;
    return 0;
}

void roof_pv_free(struct roof_pv_doc *d)
{
    if (d->nodes && d->nodes != d->inline_nodes)
        free(d->nodes);
    if (d->text && d->text != d->inline_text)
        free(d->text);
    d->nodes = NULL;
    d->text = NULL;
    d->n = 0;
}

struct pv *roof_pv_root(struct roof_pv_doc *d)
{
    return d->n ? &d->nodes[0] : NULL;
}

/* ---- access ---- */

struct pv *roof_pv_child(const struct pv *v, size_t i)
{
    if (!v || (v->type != ROOF_PV_ARR && v->type != ROOF_PV_OBJ) || i >= v->n)
        return NULL;
    struct pv *c = (struct pv *)v + 1;
    while (i--)
        c += c->size;
    return c;
}

struct pv *roof_pv_array_get(const struct pv *v, size_t i)
{
    if (!v || v->type != ROOF_PV_ARR || i >= v->n)
        return NULL;
    struct pv *c = (struct pv *)v + 1;
    while (i--)
        c += c->size;
    return c;
}

struct pv *roof_pv_object_get(const struct pv *v, const char *key)
{
    if (!v || v->type != ROOF_PV_OBJ)
        return NULL;
    struct pv *c = (struct pv *)v + 1, *found = NULL;
    for (uint32_t i = 0; i < v->n; i++, c += c->size) {
        const char *k = roof_pv_key(c);
        if (k[0] == key[0] && !strcmp(k, key))
            found = c; /* the last of duplicate keys wins, as in Python */
    }
    return found;
}

struct pv *roof_pv_next(const struct pv *child)
{
    return (struct pv *)child + child->size;
}

const char *roof_pv_key(const struct pv *member)
{
    return member && member->key_off ? member->doc->text + member->key_off - 1 : "";
}

const char *roof_pv_string_value(const struct pv *v)
{
    return v && v->type == ROOF_PV_STR ? v->doc->text + v->str_off : NULL;
}
