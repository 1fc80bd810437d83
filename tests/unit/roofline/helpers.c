/* Fixtures of the roofline tests: a CSV reader for TraceLens's sheets,
 * Python literals read back as JSON, the shared trace directory, and the
 * checks the hand-worked and oracle cases share. */
#include "helpers.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "area.h"

/* ---------------------------------------------------------------- CSV */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    b[n] = '\0';
    if (len)
        *len = (size_t)n;
    return b;
}

bool csv_read(const char *path, struct csv *c)
{
    memset(c, 0, sizeof(*c));
    size_t n;
    char *t = slurp(path, &n);
    if (!t)
        return false;
    size_t cap_rows = 16;
    c->rows = calloc(cap_rows, sizeof(char **));
    size_t i = 0;
    while (i < n) {
        size_t cap = 16, nf = 0;
        char **row = calloc(cap, sizeof(char *));
        for (;;) {
            /* one field */
            size_t fcap = 64, fl = 0;
            char *f = malloc(fcap);
            if (i < n && t[i] == '"') {
                i++;
                while (i < n) {
                    if (t[i] == '"') {
                        if (i + 1 < n && t[i + 1] == '"') {
                            i += 2;
                            if (fl + 2 > fcap)
                                f = realloc(f, fcap *= 2);
                            f[fl++] = '"';
                            continue;
                        }
                        i++;
                        break;
                    }
                    if (fl + 2 > fcap)
                        f = realloc(f, fcap *= 2);
                    f[fl++] = t[i++];
                }
            }
            while (i < n && t[i] != ',' && t[i] != '\n' && t[i] != '\r') {
                if (fl + 2 > fcap)
                    f = realloc(f, fcap *= 2);
                f[fl++] = t[i++];
            }
            f[fl] = '\0';
            if (nf + 1 >= cap)
                row = realloc(row, (cap *= 2) * sizeof(char *));
            row[nf++] = f;
            if (i < n && t[i] == ',') {
                i++;
                continue;
            }
            if (i < n && t[i] == '\r')
                i++;
            if (i < n && t[i] == '\n')
                i++;
            break;
        }
        if (c->nrows + 1 >= cap_rows)
            c->rows = realloc(c->rows, (cap_rows *= 2) * sizeof(char **));
        if (c->nrows == 0)
            c->ncols = nf;
        /* pad short rows so every row has ncols cells */
        if (nf < c->ncols) {
            row = realloc(row, c->ncols * sizeof(char *));
            while (nf < c->ncols)
                row[nf++] = calloc(1, 1);
        }
        c->rows[c->nrows++] = row;
    }
    free(t);
    return c->nrows > 0;
}

void csv_free(struct csv *c)
{
    for (size_t r = 0; r < c->nrows; r++) {
        for (size_t k = 0; k < c->ncols; k++)
            free(c->rows[r][k]);
        free(c->rows[r]);
    }
    free(c->rows);
}

int csv_col(const struct csv *c, const char *name)
{
    for (size_t k = 0; k < c->ncols; k++)
        if (!strcmp(c->rows[0][k], name))
            return (int)k;
    return -1;
}

const char *cell(const struct csv *c, size_t r, const char *name)
{
    int k = csv_col(c, name);
    return k < 0 ? NULL : c->rows[r][k];
}

/* ------------------------------------------------- Python literals -> JSON */

struct lit {
    const char *p;
    bool err;
};

static void lws(struct lit *l)
{
    while (*l->p == ' ' || *l->p == '\n' || *l->p == '\t')
        l->p++;
}

static json_t *lit_value(struct lit *l);

static json_t *lit_seq(struct lit *l, char close)
{
    json_t *a = json_array();
    l->p++;
    lws(l);
    while (!l->err && *l->p && *l->p != close) {
        json_t *v = lit_value(l);
        if (!v)
            break;
        json_array_append_new(a, v);
        lws(l);
        if (*l->p == ',') {
            l->p++;
            lws(l);
        } else if (*l->p != close) {
            l->err = true;
        }
    }
    if (*l->p != close)
        l->err = true;
    else
        l->p++;
    return a;
}

static json_t *lit_dict(struct lit *l)
{
    json_t *o = json_object();
    l->p++;
    lws(l);
    while (!l->err && *l->p && *l->p != '}') {
        json_t *k = lit_value(l);
        lws(l);
        if (!k || !json_is_string(k) || *l->p != ':') {
            l->err = true;
            json_decref(k);
            break;
        }
        l->p++;
        json_t *v = lit_value(l);
        if (!v) {
            json_decref(k);
            break;
        }
        json_object_set_new(o, json_string_value(k), v);
        json_decref(k);
        lws(l);
        if (*l->p == ',') {
            l->p++;
            lws(l);
        }
    }
    if (*l->p == '}')
        l->p++;
    else
        l->err = true;
    return o;
}

static json_t *lit_value(struct lit *l)
{
    lws(l);
    const char *p = l->p;
    if (*p == '[')
        return lit_seq(l, ']');
    if (*p == '(')
        return lit_seq(l, ')');
    if (*p == '{')
        return lit_dict(l);
    if (*p == '\'' || *p == '"') {
        char q = *p++;
        size_t cap = 256, n = 0;
        char *buf = malloc(cap);
        while (*p && *p != q) {
            if (n + 2 > cap)
                buf = realloc(buf, cap *= 2);
            if (*p == '\\' && p[1]) {
                p++;
                char e = *p++;
                buf[n++] = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            } else {
                buf[n++] = *p++;
            }
        }
        if (*p != q) {
            free(buf);
            l->err = true;
            return NULL;
        }
        l->p = p + 1;
        json_t *str = json_stringn(buf, n);
        free(buf);
        return str;
    }
    if (!strncmp(p, "None", 4)) {
        l->p += 4;
        return json_null();
    }
    if (!strncmp(p, "True", 4)) {
        l->p += 4;
        return json_true();
    }
    if (!strncmp(p, "False", 5)) {
        l->p += 5;
        return json_false();
    }
    if (!strncmp(p, "np.float64(", 11)) {
        l->p += 11;
        json_t *v = lit_value(l);
        lws(l);
        if (*l->p == ')')
            l->p++;
        return v;
    }
    if (!strncmp(p, "nan", 3)) {
        l->p += 3;
        return json_real(NAN);
    }
    char *end;
    if ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.') {
        bool real = false;
        for (const char *q = p + 1; *q && strchr("0123456789.eE+-", *q); q++)
            if (*q == '.' || *q == 'e' || *q == 'E')
                real = true;
        if (real || *p == '.') {
            double d = strtod(p, &end);
            l->p = end;
            return json_real(d);
        }
        long long v = strtoll(p, &end, 10);
        l->p = end;
        return json_integer(v);
    }
    l->err = true;
    return NULL;
}

/* The whole text as one literal, or NULL. */
json_t *lit_parse(const char *s)
{
    struct lit l = {s, false};
    json_t *v = lit_value(&l);
    lws(&l);
    if (l.err || *l.p) {
        json_decref(v);
        return NULL;
    }
    return v;
}

bool lit_equal(json_t *a, json_t *b)
{
    double x, y;
    if (json_is_number(a) && json_is_number(b)) {
        x = json_number_value(a);
        y = json_number_value(b);
        if (isnan(x) && isnan(y))
            return true;
        return x == y || fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y));
    }
    if (json_is_boolean(a) && json_is_number(b))
        return (json_is_true(a) ? 1 : 0) == json_number_value(b);
    if (json_is_number(a) && json_is_boolean(b))
        return lit_equal(b, a);
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!lit_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return json_equal(a, b);
}

/* A param cell and a param text mean the same Python value. */
bool param_equal(const char *golden, const char *mine)
{
    json_t *a = lit_parse(golden), *b = lit_parse(mine);
    bool eq;
    if (a && b)
        eq = lit_equal(a, b);
    else
        eq = !strcmp(golden, mine);
    json_decref(a);
    json_decref(b);
    return eq;
}

bool num_close(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b || fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b));
}

bool is_missing(const char *s)
{
    return !s || !s[0] || !strcmp(s, "None") || !strcmp(s, "nan") || !strcmp(s, "NaN");
}

/* ------------------------------------------------------- files in shared */

/* The shared data directory, or NULL (tests that need it are skipped) when
 * MP_SHARED is unset or does not hold the traces. */
const char *shared(void)
{
    const char *s = getenv("MP_SHARED");
    if (!s || !s[0])
        return NULL;
    char p[1100];
    snprintf(p, sizeof(p), "%s/data/traces", s);
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? s : NULL;
}

void find_files(const char *dir, const char *base, struct files *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[2048];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            find_files(p, base, out);
        } else if (!strcmp(e->d_name, base)) {
            if (out->n == out->cap)
                out->v =
                    realloc(out->v, (out->cap = out->cap ? out->cap * 2 : 16) * sizeof(char *));
            out->v[out->n++] = strdup(p);
        }
    }
    closedir(d);
}

void files_free(struct files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i]);
    free(f->v);
}

/* kernel names of a kernel-details summary cell, in listed order */
size_t kernel_names(const char *cellv, char ***out)
{
    *out = NULL;
    json_t *v = cellv ? lit_parse(cellv) : NULL;
    size_t n = 0;
    if (json_is_array(v)) {
        *out = calloc(json_array_size(v) + 1, sizeof(char *));
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *name = json_object_get(json_array_get(v, i), "name");
            if (json_is_string(name))
                (*out)[n++] = strdup(json_string_value(name));
        }
    }
    json_decref(v);
    return n;
}

void names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

const struct mp_roofline_param *find_param(const struct mp_roofline_result *r, const char *key)
{
    for (int i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].key, key))
            return &r->params[i];
    return NULL;
}

/* ------------------------------------------------------------ hand cases */

void run(const char *name, const char *args, struct mp_roofline_result *r)
{
    struct mp_roofline_op op = {name, args, args ? strlen(args) : 0, NULL, NULL, 0, NULL};
    assert_int_equal(mp_roofline_model(&op, r), 0);
}

const char *ptext(const struct mp_roofline_result *r, const char *key)
{
    const struct mp_roofline_param *p = find_param(r, key);
    return p ? (p->none ? "<None>" : p->text) : "<absent>";
}

/* Two results agree in everything a caller reads. */
void assert_same_result(const struct mp_roofline_result *a, const struct mp_roofline_result *b)
{
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->status_bwd, b->status_bwd);
    assert_ptr_equal(a->category, b->category);
    assert_ptr_equal(a->sheet, b->sheet);
    assert_ptr_equal(a->category_bwd, b->category_bwd);
    assert_true(a->gflops == b->gflops && a->bytes == b->bytes);
    assert_true(a->gflops_bwd == b->gflops_bwd && a->bytes_bwd == b->bytes_bwd);
    assert_int_equal(a->has_bytes, b->has_bytes);
    assert_int_equal(a->has_bytes_bwd, b->has_bytes_bwd);
    assert_string_equal(a->compute_spec, b->compute_spec);
    assert_string_equal(a->error, b->error);
    assert_int_equal(a->n_params, b->n_params);
    for (int i = 0; i < a->n_params; i++) {
        assert_ptr_equal(a->params[i].key, b->params[i].key);
        assert_int_equal(a->params[i].none, b->params[i].none);
        if (!a->params[i].text || !b->params[i].text)
            assert_ptr_equal(a->params[i].text, b->params[i].text);
        else
            assert_string_equal(a->params[i].text, b->params[i].text);
    }
}

bool oracle_close(double got, double want)
{
    return got == want || fabs(got - want) <= 1e-9 * fmax(fabs(got), fabs(want));
}

void oracle_check(const struct oracle *cases, size_t n, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const struct oracle *o = &cases[i];
        const char *k[1] = {o->kernel};
        struct mp_roofline_op op = {o->name,
                                    o->args,
                                    strlen(o->args),
                                    o->annotation,
                                    o->kernel ? k : NULL,
                                    o->kernel ? 1 : 0,
                                    o->kv_cache_dtype};
        struct mp_roofline_result r;
        assert_int_equal(mp_roofline_model(&op, &r), 0);
        char why[512] = "";
        if (strcmp(r.category, o->category) != 0)
            snprintf(why, sizeof(why), "category %s", r.category);
        else if (r.status != o->status)
            snprintf(why, sizeof(why), "status %d (%s)", r.status, r.error);
        else if (r.status_bwd != o->status_bwd)
            snprintf(why, sizeof(why), "bwd status %d (%s)", r.status_bwd, r.error);
        else if (o->status == MP_ROOFLINE_OK &&
                 (!oracle_close(r.gflops, o->gflops) || r.has_bytes == isnan(o->bytes) ||
                  (r.has_bytes && !oracle_close(r.bytes, o->bytes))))
            snprintf(why, sizeof(why), "gflops %.17g bytes %.17g", r.gflops, r.bytes);
        else if (o->status == MP_ROOFLINE_OK && strcmp(r.compute_spec, o->spec) != 0)
            snprintf(why, sizeof(why), "spec %s", r.compute_spec);
        else if (o->status_bwd == MP_ROOFLINE_OK &&
                 (!oracle_close(r.gflops_bwd, o->gflops_bwd) ||
                  r.has_bytes_bwd == isnan(o->bytes_bwd) ||
                  (r.has_bytes_bwd && !oracle_close(r.bytes_bwd, o->bytes_bwd))))
            snprintf(why, sizeof(why), "bwd gflops %.17g bytes %.17g", r.gflops_bwd, r.bytes_bwd);
        if (!why[0] && o->params) {
            char buf[2048] = "";
            size_t bl = 0;
            for (int j = 0; j < r.n_params; j++)
                bl += (size_t)snprintf(buf + bl, sizeof(buf) - bl, "%s%s=%s", j ? "\n" : "",
                                       r.params[j].key,
                                       r.params[j].none ? "<None>" : r.params[j].text);
            if (strcmp(buf, o->params) != 0) {
                print_message("params:\n%s\nwant:\n%s\n", buf, o->params);
                snprintf(why, sizeof(why), "params differ");
            }
        }
        if (why[0]) {
            bad++;
            print_message("oracle case %zu %s: %s\n", i, o->name, why);
        }
        mp_roofline_result_fini(&r);
    }
    print_message("TraceLens oracle cases (%s): %zu, mismatches %zu\n", what, n, bad);
    assert_int_equal(bad, 0);
}
