/* Reads the Python literals of the report's argument cells ("((16, 2048),
 * (2048, 2048))", "('c10::BFloat16', '')", "('', '[-1]', 'True')"): ints,
 * floats, quoted strings, None/True/False and nested tuples or lists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_int.h"

#define MAX_DEPTH 16

struct pstate {
    const char *s, *p;
    const char *field;
    struct mp_diag *d;
};

static int perr(struct pstate *ps, const char *what)
{
    mp_diag_set(ps->d, MP_EPARSE, "%s at column %ld of '%.80s'", what, (long)(ps->p - ps->s) + 1,
                ps->s);
    mp_diag_set_field(ps->d, ps->field);
    return MP_EPARSE;
}

static void skip_ws(struct pstate *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
        ps->p++;
}

static int parse_str(struct pstate *ps, struct rp_val *v)
{
    char q = *ps->p++;
    struct mp_buf b;
    mp_buf_init(&b, 1 << 20);
    int rc = 0;
    while (!rc && *ps->p && *ps->p != q) {
        char ch = *ps->p++;
        if (ch == '\\' && *ps->p)
            ch = *ps->p++;
        rc = mp_buf_putc(&b, ch);
    }
    if (!rc && *ps->p != q)
        rc = perr(ps, "unterminated string");
    if (rc) {
        mp_buf_fini(&b);
        return rc;
    }
    ps->p++;
    v->k = RV_STR;
    v->s = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return v->s ? 0 : MP_ENOMEM;
}

static int parse_word(struct pstate *ps, struct rp_val *v)
{
    const char *st = ps->p;
    while (*ps->p && !strchr(",)] \t\n", *ps->p))
        ps->p++;
    size_t n = (size_t)(ps->p - st);
    if (!n)
        return perr(ps, "expected a value");
    v->s = mp_strndup(st, n);
    if (!v->s)
        return MP_ENOMEM;
    if (strcmp(v->s, "None") == 0) {
        v->k = RV_NONE;
        return 0;
    }
    char *end;
    errno = 0;
    long long i = strtoll(v->s, &end, 10);
    if (!*end && !errno) {
        v->k = RV_INT;
        v->i = i;
        return 0;
    }
    double f = strtod(v->s, &end);
    v->k = !*end ? RV_FLOAT : RV_STR; /* True/False and other words stay text */
    v->f = f;
    return 0;
}

static int parse_value(struct pstate *ps, struct rp_val *v, int depth)
{
    skip_ws(ps);
    if (*ps->p == '\'' || *ps->p == '"')
        return parse_str(ps, v);
    if (*ps->p != '(' && *ps->p != '[')
        return parse_word(ps, v);
    if (depth >= MAX_DEPTH)
        return perr(ps, "nesting too deep");
    char close = *ps->p == '(' ? ')' : ']';
    ps->p++;
    v->k = RV_SEQ;
    size_t cap = 0;
    for (;;) {
        skip_ws(ps);
        if (*ps->p == close) {
            ps->p++;
            return 0;
        }
        if (MP_GROW(v->items, cap, v->n + 1, 4))
            return MP_ENOMEM;
        memset(&v->items[v->n], 0, sizeof(v->items[0]));
        int rc = parse_value(ps, &v->items[v->n++], depth + 1);
        if (rc)
            return rc;
        skip_ws(ps);
        if (*ps->p == ',')
            ps->p++;
        else if (*ps->p != close)
            return perr(ps, "expected ',' or a closing bracket");
    }
}

int rp_val_parse(const char *text, const char *field, struct rp_val *v, struct mp_diag *d)
{
    memset(v, 0, sizeof(*v));
    struct pstate ps = {text ? text : "", text ? text : "", field, d};
    skip_ws(&ps);
    if (!*ps.p) {
        v->k = RV_NONE;
        return 0;
    }
    int rc = parse_value(&ps, v, 0);
    skip_ws(&ps);
    if (!rc && *ps.p)
        rc = perr(&ps, "text after the value");
    return rc;
}

void rp_val_fini(struct rp_val *v)
{
    for (size_t i = 0; v->items && i < v->n; i++)
        rp_val_fini(&v->items[i]);
    free(v->items);
    free(v->s);
    memset(v, 0, sizeof(*v));
}

int rp_cells_parse(const char *dims, const char *types, const char *strides, const char *concrete,
                   struct rp_val v[4], struct mp_diag *d)
{
    static const char *const field[4] = {"Input Dims", "Input type", "Input Strides",
                                         "Concrete Inputs"};
    const char *text[4] = {dims, types, strides, concrete};
    memset(v, 0, 4 * sizeof(v[0]));
    int rc = 0;
    for (int i = 0; !rc && i < 4; i++)
        rc = rp_val_parse(text[i], field[i], &v[i], d);
    return rc;
}

void rp_cells_fini(struct rp_val v[4])
{
    for (int i = 0; i < 4; i++)
        rp_val_fini(&v[i]);
}
