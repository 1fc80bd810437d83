/* Unit tests for src/roofline: the perf model against the CSVs TraceLens itself
 * wrote for the shared traces (../shared/data/traces), plus hand-worked
 * cases for what the goldens do not reach.
 *
 * Golden checks: every op name in ops_summary / ops_unique_args gets the
 * golden category; every row of a per-category sheet (GEMM, SDPA_fwd,
 * UnaryElementwise, ...) is rebuilt into an args object from its Input
 * Dims/type/Strides/Concrete Inputs _first cells (Python reprs turned back
 * into JSON) and must give the row's GFLOPS, Data Moved, FLOPS/Byte, every
 * `param: X` cell (compared as Python literals) and Compute Spec; with the
 * H200 arch file also Roofline Time and Roofline Bound. Pass counts per sheet
 * are printed. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include <magpie/roofline.h>

#include "roofline/roofline_int.h"

/* ---------------------------------------------------------------- CSV */

struct csv {
    size_t ncols, nrows;
    char ***rows; /* rows[0] is the header */
};

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

static bool csv_read(const char *path, struct csv *c)
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

static void csv_free(struct csv *c)
{
    for (size_t r = 0; r < c->nrows; r++) {
        for (size_t k = 0; k < c->ncols; k++)
            free(c->rows[r][k]);
        free(c->rows[r]);
    }
    free(c->rows);
}

static int csv_col(const struct csv *c, const char *name)
{
    for (size_t k = 0; k < c->ncols; k++)
        if (!strcmp(c->rows[0][k], name))
            return (int)k;
    return -1;
}

static const char *cell(const struct csv *c, size_t r, const char *name)
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
static json_t *lit_parse(const char *s)
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

static bool lit_equal(json_t *a, json_t *b)
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
static bool param_equal(const char *golden, const char *mine)
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

static bool num_close(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b || fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b));
}

static bool is_missing(const char *s)
{
    return !s || !s[0] || !strcmp(s, "None") || !strcmp(s, "nan") || !strcmp(s, "NaN");
}

/* ------------------------------------------------------- files in shared */

/* The shared data directory, or NULL (tests that need it are skipped) when
 * MP_SHARED is unset or does not hold the traces. */
static const char *shared(void)
{
    const char *s = getenv("MP_SHARED");
    if (!s || !s[0])
        return NULL;
    char p[1100];
    snprintf(p, sizeof(p), "%s/data/traces", s);
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? s : NULL;
}

struct files {
    char **v;
    size_t n, cap;
};

static void find_files(const char *dir, const char *base, struct files *out)
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

static void files_free(struct files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i]);
    free(f->v);
}

/* kernel names of a kernel-details summary cell, in listed order */
static size_t kernel_names(const char *cellv, char ***out)
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

static void names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ------------------------------------------------------------ categories */

static void test_registry_sorted(void **state)
{
    (void)state;
    size_t n;
    const struct pm_entry *t = pm_table(&n);
    assert_true(n > 250);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(t[i - 1].name, t[i].name) >= 0)
            fail_msg("registry out of order at %s / %s", t[i - 1].name, t[i].name);
    }
}

static void test_category_rules(void **state)
{
    (void)state;
    assert_string_equal(mp_roofline_category("aten::mm", NULL), "GEMM");
    assert_string_equal(mp_roofline_category("aten::miopen_convolution", NULL), "CONV_fwd");
    assert_string_equal(mp_roofline_category("vllm::unified_attention_with_output", NULL),
                        "InferenceAttention");
    /* category-only override of a modelled op */
    assert_string_equal(mp_roofline_category("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", NULL),
                        "MoE_aux");
    assert_true(mp_roofline_has_model("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip"));
    assert_string_equal(mp_roofline_category("triton_poi_fused_add_0", NULL), "triton");
    assert_string_equal(mp_roofline_category("tritonfoo", NULL), "triton");
    assert_true(mp_roofline_has_model("triton_red_fused_sum_1"));
    assert_false(mp_roofline_has_model("tritonfoo"));
    assert_string_equal(mp_roofline_category("record_param_comms", NULL), "record_param_comms");
    assert_string_equal(
        mp_roofline_category("aten::index", "void at::native::elementwise_kernel<>"),
        "elementwise");
    assert_string_equal(mp_roofline_category("aten::argmax", "void at::native::reduce_kernel<>"),
                        "reduce");
    assert_string_equal(mp_roofline_category("aten::_foreach_add_",
                                             "void at::native::(anonymous)::multi_tensor_apply_k"),
                        "multi_tensor_apply");
    assert_string_equal(mp_roofline_category("aten::index", "vectorized_elementwise_kernel"),
                        "other");
    assert_string_equal(mp_roofline_category("aten::index", NULL), "other");
    assert_null(mp_roofline_sheet("aten::cat"));
    assert_string_equal(mp_roofline_sheet("aten::add"), "BinaryElementwise");
    assert_string_equal(mp_roofline_sheet("aten::layer_norm"), "Normalization");
    assert_string_equal(mp_roofline_sheet("aten::sum"), "Reduce");
    assert_string_equal(mp_roofline_sheet("aten::_scaled_dot_product_flash_attention"), "SDPA");
}

/* Every name of ops_summary ("Categories", a list repr) and ops_unique_args
 * ("op category") gets the golden category; when the category depends on the
 * first kernel, one of the launcher's kernels must give it (the summary lists
 * kernels by duration, not by time, so the first one is not known). */
static void test_golden_categories(void **state)
{
    (void)state;
    if (!shared())
        skip();
    char root[1024];
    snprintf(root, sizeof(root), "%s/data/traces", shared());
    size_t checked = 0, bad = 0;
    struct files fs = {0};
    find_files(root, "ops_unique_args.csv", &fs);
    for (size_t i = 0; i < fs.n; i++) {
        struct csv c;
        if (!csv_read(fs.v[i], &c))
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *name = cell(&c, r, "name"), *want = cell(&c, r, "op category");
            char **k;
            size_t nk = kernel_names(cell(&c, r, "kernel_details_summary"), &k);
            bool ok = !strcmp(mp_roofline_category(name, nk ? k[0] : NULL), want);
            for (size_t j = 1; j < nk && !ok; j++)
                ok = !strcmp(mp_roofline_category(name, k[j]), want);
            if (!ok) {
                bad++;
                print_message("category %s: want %s, got %s (%s)\n", name, want,
                              mp_roofline_category(name, nk ? k[0] : NULL), fs.v[i]);
            }
            checked++;
            names_free(k, nk);
        }
        csv_free(&c);
    }
    files_free(&fs);
    struct files fo = {0};
    find_files(root, "ops_summary.csv", &fo);
    for (size_t i = 0; i < fo.n; i++) {
        struct csv c;
        if (!csv_read(fo.v[i], &c))
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *name = cell(&c, r, "name");
            json_t *cats = lit_parse(cell(&c, r, "Categories"));
            assert_true(json_is_array(cats));
            /* registry-decided names have exactly that category; the others
             * may mix kernel-decided categories with "other" */
            const char *got = mp_roofline_category(name, NULL);
            bool ok = false;
            for (size_t j = 0; j < json_array_size(cats); j++) {
                const char *w = json_string_value(json_array_get(cats, j));
                if (!strcmp(w, got) || !strcmp(w, "elementwise") || !strcmp(w, "reduce") ||
                    !strcmp(w, "multi_tensor_apply"))
                    ok = true;
            }
            if (!ok) {
                bad++;
                print_message("ops_summary category %s: got %s (%s)\n", name, got, fo.v[i]);
            }
            checked++;
            json_decref(cats);
        }
        csv_free(&c);
    }
    files_free(&fo);
    print_message("golden categories: %zu rows, %zu mismatches\n", checked, bad);
    assert_true(checked > 500);
    assert_int_equal(bad, 0);
}

/* --------------------------------------------------------- sheet goldens */

static const char *const sheets[] = {
    "GEMM",
    "SDPA_fwd",
    "SDPA_bwd",
    "CONV_fwd",
    "CONV_bwd",
    "UnaryElementwise",
    "BinaryElementwise",
    "Normalization",
    "Reduce_fwd",
    "Reduce_bwd",
    "RMSNorm_fwd",
    "RoPE_fwd",
    "InferenceAttention_fwd",
    "MoE_unfused_fwd",
};

struct tally {
    size_t rows, pass, fail, unmodelled;
};

/* args object from the row's Input Dims/type/Strides/Concrete Inputs cells */
static char *row_args(const struct csv *c, size_t r)
{
    static const char *const cols[][2] = {{"Input Dims_first", "Input Dims"},
                                          {"Input type_first", "Input type"},
                                          {"Input Strides_first", "Input Strides"},
                                          {"Concrete Inputs_first", "Concrete Inputs"}};
    json_t *o = json_object();
    for (size_t i = 0; i < 4; i++) {
        const char *v = cell(c, r, cols[i][0]);
        if (!v || !v[0])
            continue;
        json_t *j = lit_parse(v);
        if (j)
            json_object_set_new(o, cols[i][1], j);
    }
    /* what the pseudo-op pass adds to MoE pseudo ops, from the params */
    const char *topk = cell(c, r, "param: topk"), *gated = cell(c, r, "param: gated");
    if (!is_missing(topk) && !is_missing(gated)) {
        json_object_set_new(o, "MoE topk", json_integer(atoll(topk)));
        json_object_set_new(o, "MoE GEMM gated", json_boolean(!strcmp(gated, "True")));
    }
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static const struct mp_roofline_param *find_param(const struct mp_roofline_result *r,
                                                  const char *key)
{
    for (int i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].key, key))
            return &r->params[i];
    return NULL;
}

static size_t cells_compared;

/* A vLLM "detailed" step annotation carrying the row's chunk statistics:
 * the inference-attention models read them from the annotation that
 * enclosed the op, which the CSVs keep only as parameters. */
static bool synth_annotation(double v[8], char *buf, size_t n)
{
    snprintf(buf, n,
             "execute_1_context_1(sq%.0fsk%.0fsqsq%.0fsqsk%.0f)_generation_1(sq%.0fsk%.0fsqsq%."
             "0fsqsk%.0f)",
             v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    return true;
}

static const char *const chunk_keys[8] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk",
                                          "g_sq", "g_sk", "g_sqsq", "g_sqsk"};

/* Checks one golden row; returns NULL when it matches, else what differs. */
static const char *check_row(const struct csv *c, size_t r, const char *sheet,
                             const struct mp_roofline_arch *arch, char *why, size_t whyn)
{
    const char *name = cell(c, r, "name");
    char *args = row_args(c, r);
    char **k;
    size_t nk = kernel_names(cell(c, r, "kernel_details__summarize_kernel_stats"), &k);
    struct mp_roofline_op op = {name, args, strlen(args), NULL, (const char *const *)k, nk, NULL};
    char ann[256];
    const char *csq = cell(c, r, "param: c_sq");
    if (!is_missing(csq)) {
        double v[8];
        for (int i = 0; i < 8; i++) {
            char h[32];
            snprintf(h, sizeof(h), "param: %s", chunk_keys[i]);
            v[i] = atof(cell(c, r, h));
        }
        synth_annotation(v, ann, sizeof(ann));
        op.annotation = ann;
    }
    struct mp_roofline_result res;
    assert_int_equal(mp_roofline_model(&op, &res), 0);
    why[0] = '\0';
    /* bwd tables hold the forward op's bwd metrics, except ops that are
     * themselves backward ops (their forward metrics are the bwd formulas) */
    bool use_bwd = strstr(sheet, "_bwd") && res.category && !strstr(res.category, "_bwd");
    int st = use_bwd ? res.status_bwd : res.status;
    double gf = use_bwd ? res.gflops_bwd : res.gflops;
    bool hb = use_bwd ? res.has_bytes_bwd : res.has_bytes;
    double by = use_bwd ? res.bytes_bwd : res.bytes;
    if (st != MP_ROOFLINE_OK) {
        snprintf(why, whyn, "status %d: %s", st, res.error);
        goto out;
    }
    double want_gf = atof(cell(c, r, "GFLOPS_first"));
    if (!num_close(gf, want_gf)) {
        snprintf(why, whyn, "GFLOPS %.17g != %.17g", gf, want_gf);
        goto out;
    }
    const char *mb = cell(c, r, "Data Moved (MB)_first");
    if (is_missing(mb) ? hb : (!hb || !num_close(by / 1048576.0, atof(mb)))) {
        snprintf(why, whyn, "Data Moved %s != %.17g", mb, hb ? by / 1048576.0 : NAN);
        goto out;
    }
    const char *fpb = cell(c, r, "FLOPS/Byte_first");
    if (!is_missing(fpb) && hb && by > 0 && !num_close(gf * 1e9 / by, atof(fpb))) {
        snprintf(why, whyn, "FLOPS/Byte %s != %.17g", fpb, gf * 1e9 / by);
        goto out;
    }
    const char *spec = cell(c, r, "Compute Spec");
    if (spec && strcmp(spec, res.compute_spec)) {
        snprintf(why, whyn, "Compute Spec '%s' != '%s'", spec, res.compute_spec);
        goto out;
    }
    for (size_t col = 0; col < c->ncols; col++) {
        const char *h = c->rows[0][col];
        if (strncmp(h, "param: ", 7))
            continue;
        const char *g = c->rows[r][col];
        const struct mp_roofline_param *p = find_param(&res, h + 7);
        if (is_missing(g)) {
            if (p && !p->none) {
                snprintf(why, whyn, "%s: golden empty, got '%s'", h, p->text);
                goto out;
            }
            continue;
        }
        if (!p || p->none) {
            snprintf(why, whyn, "%s: missing (golden '%s')", h, g);
            goto out;
        }
        cells_compared++;
        if (!param_equal(g, p->text)) {
            snprintf(why, whyn, "%s: '%s' != golden '%s'", h, p->text, g);
            goto out;
        }
    }
    for (int i = 0; i < res.n_params; i++) {
        char h[96];
        snprintf(h, sizeof(h), "param: %s", res.params[i].key);
        if (csv_col(c, h) < 0) {
            snprintf(why, whyn, "extra param %s", h);
            goto out;
        }
    }
    if (arch && cell(c, r, "Roofline Time (µs)_first")) {
        const char *rt = cell(c, r, "Roofline Time (µs)_first");
        const char *rb = cell(c, r, "Roofline Bound_first");
        struct mp_roofline_roofline rl;
        mp_roofline_roofline(arch, res.compute_spec, gf, hb, by, 1.0, &rl);
        if (is_missing(rt) ? rl.valid : (!rl.valid || !num_close(rl.roofline_us, atof(rt)))) {
            snprintf(why, whyn, "Roofline Time %s != %.17g", rt, rl.valid ? rl.roofline_us : NAN);
            goto out;
        }
        if (!is_missing(rb) && strcmp(rb, rl.compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND")) {
            snprintf(why, whyn, "Roofline Bound %s", rb);
            goto out;
        }
    }
out:
    mp_roofline_result_fini(&res);
    names_free(k, nk);
    free(args);
    return why[0] ? why : NULL;
}

/* Rows whose golden values need context a single op does not carry. */
static bool needs_context(const char *sheet, const char *name)
{
    /* InferenceAttention params come from the step annotation, MoE pseudo
     * ops from args the pseudo-op pass adds (not in the sheet's cells) */
    (void)name;
    (void)sheet;
    return false;
}

static void test_golden_sheets(void **state)
{
    (void)state;
    if (!shared())
        skip();
    char root[1024], archp[1100];
    snprintf(root, sizeof(root), "%s/data/traces", shared());
    snprintf(archp, sizeof(archp), "%s/h200/H200-arch-datasheet.json", root);
    struct mp_roofline_arch h200;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_roofline_arch_load_json(archp, &h200, &d), 0);
    size_t total_fail = 0, total_rows = 0;
    for (size_t s = 0; s < sizeof(sheets) / sizeof(sheets[0]); s++) {
        char base[64];
        snprintf(base, sizeof(base), "%s.csv", sheets[s]);
        struct files fs = {0};
        find_files(root, base, &fs);
        struct tally t = {0};
        for (size_t i = 0; i < fs.n; i++) {
            struct csv c;
            if (!csv_read(fs.v[i], &c))
                continue;
            bool with_arch = csv_col(&c, "Roofline Time (µs)_first") >= 0;
            for (size_t r = 1; r < c.nrows; r++) {
                const char *name = cell(&c, r, "name");
                t.rows++;
                if (needs_context(sheets[s], name)) {
                    t.unmodelled++;
                    continue;
                }
                char why[512];
                if (check_row(&c, r, sheets[s], with_arch ? &h200 : NULL, why, sizeof(why))) {
                    t.fail++;
                    print_message("  FAIL %s %s: %s\n    (%s)\n", sheets[s], name, why,
                                  fs.v[i] + strlen(root) + 1);
                } else {
                    t.pass++;
                }
            }
            csv_free(&c);
        }
        files_free(&fs);
        print_message("sheet %-24s rows %3zu  pass %3zu  fail %3zu  not checked %zu\n", sheets[s],
                      t.rows, t.pass, t.fail, t.unmodelled);
        total_fail += t.fail;
        total_rows += t.rows;
    }
    print_message("param cells compared: %zu\n", cells_compared);
    assert_true(total_rows > 300);
    assert_true(cells_compared > 3000);
    assert_int_equal(total_fail, 0);
}

/* A perf_params dict value and a param text mean the same Python value. */
static bool dict_value_equal(json_t *g, const struct mp_roofline_param *p)
{
    if (json_is_null(g))
        return p->none;
    if (p->none)
        return false;
    if (json_is_string(g))
        return !strcmp(json_string_value(g), p->text);
    json_t *m = lit_parse(p->text);
    bool eq = m && lit_equal(g, m);
    json_decref(m);
    return eq;
}

/* unified_perf_summary rows of ops with their own model: GFLOPS, Data Moved,
 * Compute Spec and perf_params (a dict, so its key order is checked too).
 * Sole-backward rows (the forward op's bwd metrics under the backward op's
 * name) are not ops with a model and are skipped. */
static void test_golden_unified(void **state)
{
    (void)state;
    if (!shared())
        skip();
    char root[1024];
    snprintf(root, sizeof(root), "%s/data/traces", shared());
    struct files fs = {0};
    find_files(root, "unified_perf_summary.csv", &fs);
    size_t rows = 0, pass = 0, fail = 0, skipped = 0;
    for (size_t i = 0; i < fs.n; i++) {
        struct csv c;
        if (!csv_read(fs.v[i], &c))
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *name = cell(&c, r, "name");
            const char *hpm = cell(&c, r, "has_perf_model");
            if (!hpm || strcmp(hpm, "True") || !mp_roofline_has_model(name))
                continue;
            rows++;
            json_t *o = json_object();
            static const char *const cols[] = {"Input Dims", "Input type", "Input Strides",
                                               "Concrete Inputs"};
            for (size_t k = 0; k < 4; k++) {
                const char *v = cell(&c, r, cols[k]);
                json_t *j = v && v[0] ? lit_parse(v) : NULL;
                if (j)
                    json_object_set_new(o, cols[k], j);
            }
            json_t *pp0 = lit_parse(cell(&c, r, "perf_params"));
            if (json_is_object(pp0) && json_object_get(pp0, "topk")) {
                json_object_set(o, "MoE topk", json_object_get(pp0, "topk"));
                json_object_set(o, "MoE GEMM gated", json_object_get(pp0, "gated"));
            }
            json_decref(pp0);
            char *args = json_dumps(o, JSON_COMPACT);
            json_decref(o);
            char **k;
            size_t nk = kernel_names(cell(&c, r, "kernel_details_summary"), &k);
            struct mp_roofline_op op = {name, args, strlen(args), NULL, (const char *const *)k,
                                        nk,   NULL};
            json_t *pp = lit_parse(cell(&c, r, "perf_params"));
            char ann[256];
            if (json_is_object(pp) && json_object_get(pp, "c_sq")) {
                double v[8];
                for (int j = 0; j < 8; j++)
                    v[j] = json_number_value(json_object_get(pp, chunk_keys[j]));
                synth_annotation(v, ann, sizeof(ann));
                op.annotation = ann;
            }
            struct mp_roofline_result res;
            assert_int_equal(mp_roofline_model(&op, &res), 0);
            char why[512] = "";
            const char *mb = cell(&c, r, "Data Moved (MB)");
            if (res.status != MP_ROOFLINE_OK) {
                snprintf(why, sizeof(why), "status %d: %s", res.status, res.error);
            } else if (!num_close(res.gflops, atof(cell(&c, r, "GFLOPS")))) {
                snprintf(why, sizeof(why), "GFLOPS %.17g != %s", res.gflops, cell(&c, r, "GFLOPS"));
            } else if (is_missing(mb)
                           ? res.has_bytes
                           : (!res.has_bytes || !num_close(res.bytes / 1048576.0, atof(mb)))) {
                snprintf(why, sizeof(why), "Data Moved %.17g != %s", res.bytes / 1048576.0, mb);
            } else if (strcmp(cell(&c, r, "Compute Spec"), res.compute_spec)) {
                snprintf(why, sizeof(why), "Compute Spec %s != %s", res.compute_spec,
                         cell(&c, r, "Compute Spec"));
            } else if (!json_is_object(pp) || (int)json_object_size(pp) != res.n_params) {
                snprintf(why, sizeof(why), "perf_params: %d params vs golden %s", res.n_params,
                         cell(&c, r, "perf_params"));
            } else {
                const char *key;
                json_t *val;
                int idx = 0;
                json_object_foreach(pp, key, val)
                {
                    const struct mp_roofline_param *p = &res.params[idx++];
                    if (strcmp(p->key, key) || !dict_value_equal(val, p)) {
                        snprintf(why, sizeof(why), "param %d: %s=%s vs golden %s", idx - 1, p->key,
                                 p->none ? "None" : p->text, key);
                        break;
                    }
                }
            }
            if (why[0]) {
                fail++;
                print_message("  FAIL unified %s: %s\n    (%s)\n", name, why,
                              fs.v[i] + strlen(root) + 1);
            } else {
                pass++;
            }
            json_decref(pp);
            mp_roofline_result_fini(&res);
            names_free(k, nk);
            free(args);
        }
        csv_free(&c);
    }
    files_free(&fs);
    print_message("unified_perf_summary: %zu modelled rows, pass %zu, fail %zu, not checked %zu\n",
                  rows, pass, fail, skipped);
    assert_true(rows > 500);
    assert_int_equal(fail, 0);
}

/* ------------------------------------------------------------ hand cases */

static void run(const char *name, const char *args, struct mp_roofline_result *r)
{
    struct mp_roofline_op op = {name, args, args ? strlen(args) : 0, NULL, NULL, 0, NULL};
    assert_int_equal(mp_roofline_model(&op, r), 0);
}

static const char *ptext(const struct mp_roofline_result *r, const char *key)
{
    const struct mp_roofline_param *p = find_param(r, key);
    return p ? (p->none ? "<None>" : p->text) : "<absent>";
}

/* Two results agree in everything a caller reads. */
static void assert_same_result(const struct mp_roofline_result *a,
                               const struct mp_roofline_result *b)
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

/* The memo answers a repeated input with the model's own result, and tells
 * inputs apart by every text address and the kernel list. */
static void test_model_memo(void **state)
{
    (void)state;
    struct mp_roofline_memo *m = mp_roofline_memo_new();
    assert_non_null(m);
    const char *a = "{\"Input Dims\": [[4, 8], [8, 2]], \"Input type\": [\"float\", \"float\"]}";
    const char *bad = "{\"Input type\": []}";
    const char *k1[] = {"Cijk_Alik_Bljk_BBS_BH_MT64x16x64_MI16x16x1"};
    const char *k2[] = {"nvjet_tst_128x64_64x6_1x2_h_bz_coopA_NT"};
    struct mp_roofline_op ops[] = {
        {"aten::mm", a, strlen(a), NULL, k1, 1, NULL},
        {"aten::mm", a, strlen(a), NULL, k2, 1, NULL},
        {"aten::mm", a, strlen(a), NULL, NULL, 0, NULL},
        {"aten::mm", bad, strlen(bad), NULL, NULL, 0, NULL},
        {"aten::relu", NULL, 0, NULL, NULL, 0, NULL},
    };
    int32_t slot[sizeof(ops) / sizeof(ops[0])];
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            struct mp_roofline_result want, got;
            assert_int_equal(mp_roofline_model(&ops[i], &want), 0);
            assert_int_equal(mp_roofline_model_memo(m, &ops[i], &got), 0);
            assert_same_result(&want, &got);
            /* each input its own entry, the same one every time */
            assert_int_equal(want.memo_slot, 0);
            if (round == 0)
                slot[i] = got.memo_slot;
            assert_int_equal(got.memo_slot, slot[i]);
            assert_int_equal(slot[i], (int32_t)i + 1);
            mp_roofline_result_fini(&want);
            mp_roofline_result_fini(&got);
        }
    }
    /* no memo: the plain model */
    struct mp_roofline_result r;
    assert_int_equal(mp_roofline_model_memo(NULL, &ops[0], &r), 0);
    assert_string_equal(ptext(&r, "transpose"), "(True, False)");
    assert_int_equal(r.memo_slot, 0);
    mp_roofline_result_fini(&r);
    mp_roofline_memo_free(m);
    mp_roofline_memo_free(NULL);
}

static void test_gemm_anchor(void **state)
{
    (void)state;
    struct mp_roofline_result r;
    run("aten::mm",
        "{\"Input Dims\": [[8944, 1024], [1024, 2816]], \"Input type\": [\"c10::BFloat16\", "
        "\"c10::BFloat16\"], \"Input Strides\": [[1024, 1], [1, 1024]], \"Concrete Inputs\": "
        "[\"\", \"\"]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(r.category, "GEMM");
    assert_string_equal(r.sheet, "GEMM");
    assert_true(r.gflops == 51.581550592);
    assert_true(r.bytes / 1048576 == 71.0078125);
    assert_string_equal(r.compute_spec, "matrix_bf16");
    assert_string_equal(r.params[0].key, "M");
    assert_string_equal(ptext(&r, "stride_A"), "(1024, 1)");
    assert_string_equal(ptext(&r, "dtype_A_B"), "('c10::BFloat16', 'c10::BFloat16')");
    assert_string_equal(ptext(&r, "bias"), "False");
    assert_string_equal(r.params[r.n_params - 1].key, "B");
    assert_int_equal(r.status_bwd, MP_ROOFLINE_SKIP);
    mp_roofline_result_fini(&r);

    /* transposes from a Tensile kernel name, after B */
    const char *k[] = {"Memset", "Cijk_Alik_Bljk_BBS_BH_MT64x16x64_MI16x16x1"};
    const char *a = "{\"Input Dims\": [[4, 8], [8, 2]], \"Input type\": [\"float\", \"float\"]}";
    struct mp_roofline_op op = {"aten::mm", a, strlen(a), NULL, k, 2, NULL};
    assert_int_equal(mp_roofline_model(&op, &r), 0);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "transpose"), "(True, False)");
    assert_string_equal(ptext(&r, "stride_A"), "<None>");
    assert_string_equal(r.params[r.n_params - 1].key, "transpose");
    assert_string_equal(r.compute_spec, "matrix_fp32");
    mp_roofline_result_fini(&r);

    /* nvjet names spell the transposes in their last token */
    const char *nk[] = {"nvjet_tst_128x64_64x6_1x2_h_bz_coopA_NT"};
    struct mp_roofline_op op2 = {"aten::mm", a, strlen(a), NULL, nk, 1, NULL};
    assert_int_equal(mp_roofline_model(&op2, &r), 0);
    assert_string_equal(ptext(&r, "transpose"), "(False, True)");
    mp_roofline_result_fini(&r);

    /* bmm puts B first */
    run("aten::bmm",
        "{\"Input Dims\": [[16, 559, 64], [16, 64, 559]], \"Input type\": [\"c10::Half\", "
        "\"c10::Half\"], \"Input Strides\": [[35776, 64, 1], [35776, 1, 64]]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(r.params[0].key, "B");
    assert_true(r.gflops == 16.0 * 2 * 559 * 559 * 64 / 1e9);
    assert_string_equal(r.compute_spec, "matrix_fp16");
    mp_roofline_result_fini(&r);

    /* missing Input Dims: an exception, the row fails */
    run("aten::mm", "{\"Input type\": []}", &r);
    assert_int_equal(r.status, MP_ROOFLINE_FAILED);
    assert_true(strstr(r.error, "KeyError") != NULL);
    mp_roofline_result_fini(&r);
    run("aten::mm", NULL, &r);
    assert_int_equal(r.status, MP_ROOFLINE_FAILED);
    mp_roofline_result_fini(&r);

    /* no model */
    run("aten::cat", "{}", &r);
    assert_int_equal(r.status, MP_ROOFLINE_NONE);
    assert_string_equal(r.category, "other");
    assert_null(r.sheet);
    mp_roofline_result_fini(&r);
}

/* ------------------------------------------------- TraceLens oracle cases */

/* Cases the goldens do not reach (other op classes, exception paths,
 * backward metrics, annotation formats), with the values TraceLens's own
 * perf model classes computed for them (snapshot 171dd747, run in Python on
 * the same args): status, GFLOPS, bytes (NAN for None), compute spec, the
 * param_details as "key=str(value)" lines in order ("<None>" for None), and
 * the backward status and values. */
struct oracle {
    const char *name, *args, *annotation, *kernel, *kv_cache_dtype, *category;
    int status;
    double gflops, bytes;
    const char *spec;
    int status_bwd;
    double gflops_bwd, bytes_bwd;
    const char *params;
};

static const struct oracle oracle_cases[] = {
    {"aten::mm",
     "{\"Input Dims\":[[128,64],[64,2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input Strides\":[[64,1],[1,64]],\"Concrete "
     "Inputs\":[\"\",\"\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"aten::addmm",
     "{\"Input Dims\":[[2816],[128,64],[64,2816],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[64,1],[1,64],[],[]],\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"]}",
     NULL, "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", NULL, "GEMM", MP_ROOFLINE_OK, 0.046497792,
     1103360.0, "matrix_bf16", MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=True\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1\ntranspose=(True, False)"},
    {"aten::_scaled_mm",
     "{\"Input Dims\":[[128,64],[64,2816],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\"],\"Input "
     "Strides\":[[64,1],[1,64],[],[]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"aten::bmm",
     "{\"Input Dims\":[[8,128,64],[8,64,2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[8192,64,1],[180224,2816,1]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.369098752, 8781824.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=8\nM=128\nN=2816\nK=64\nbias=False\nstride_A=(8192, 64, 1)\nstride_B=(180224, 2816, "
     "1)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"aten::baddbmm",
     "{\"Input Dims\":[[8,128,2816],[8,128,64],[8,64,2816],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[8192,64,1],[180224,2816,1],[],[]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.371982336, 8826880.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=8\nM=128\nN=2816\nK=64\nbias=True\nstride_A=(8192, 64, 1)\nstride_B=(180224, 2816, "
     "1)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"_Linear_yfwd_mm",
     "{\"Input Dims\":[[128,64],[64,2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input Strides\":[[64,1],[1,64]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"vllm::gemm_with_dynamic_quant",
     "{\"Input Dims\":[[],[128,64],[2816,32],[2816,4]],\"Input "
     "type\":[\"c10::BFloat16\",\"unsigned char\",\"float\",\"float\"],\"Input "
     "Strides\":[[],[64,1],[32,1],[4,1]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=()\nstride_B=(64, 1)\ndtype_A_B=('c10::BFloat16', "
     "'unsigned char')\nB=1"},
    {"aiter::gemm_a16w16",
     "{\"Input Dims\":[[128,64],[2816,64],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"Scalar\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=128\nN=2816\nK=64\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::BFloat16')"},
    {"vllm::rocm_unquantized_gemm",
     "{\"Input Dims\":[[128,64],[2816,64],[2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046497792, 1103360.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=True\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::BFloat16')\nB=1"},
    {"aten::_scaled_mm",
     "{\"Input Dims\":[[4096,64],[64,32],[],[]],\"Input "
     "type\":[\"bool\",\"bool\",\"float\",\"float\"],\"Input Strides\":[[64,1],[1,64],[],[]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN,
     NULL},
    {"tex_ts::te_gemm_ts",
     "{\"Input "
     "Dims\":[[64,128],[],[],[],[],[256,128],[],[],[],[],[64,256],[],[],[],[],[],[],[],[],[256]],"
     "\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"\",\"\",\"\",\"c10::BFloat16\",\"\",\"\",\"\",\"\",\"c10::"
     "BFloat16\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"c10::BFloat16\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"1\",\"\",\"\",\"\",\"\",\"0\",\"\",\"\",\"\",\"\",\"x\",\"\","
     "\"\",\"\",\"\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.004210688, 115200.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=64\nN=256\nK=128\nbias=True\nstride_A=<None>\nstride_B=<None>\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"aten::mm", "{\"Input Dims\":[[4,8]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"aten::mm", "{\"Input Dims\":[[4,8],[8,2]],\"Input type\":[\"c10::BFloat16\"]}", NULL, NULL,
     NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aten::bmm",
     "{\"Input Dims\":[[4,8],[8,2]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}", NULL,
     NULL, NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN, NULL},
    {"aten::_scaled_dot_product_flash_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,64,32],[2,2,64,32],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\","
     "\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"0.1\",\"True\",\"False\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.1\ncausal=True\nflash_"
     "impl=True\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"aten::_scaled_dot_product_efficient_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,128,32],[2,2,128,16],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"Scalar\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"True\",\"oops\",\"True\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"aten::_scaled_dot_product_cudnn_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,64,32],[2,2,64,32],[],[],[],[],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"float\",\"\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"False\",\"0.0\",\"True\",\"False\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "matrix_fp32",
     MP_ROOFLINE_OK, 0.008400896, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=False\ndtype_A_B=('float', 'float')"},
    {"aten::_scaled_dot_product_efficient_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,128,32],[2,2,128,16],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"Scalar\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"True\",\"oops\",\"False\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.012582912, 147456.0, "matrix_fp16",
     MP_ROOFLINE_OK, 0.025202688, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=128\nH_KV=2\nd_h_qk=32\nd_h_v=16\ndropout=0.0\ncausal=False\nflash_"
     "impl=False\ndtype_A_B=('c10::Half', 'c10::Half')"},
    {"flash_attn::_flash_attn_forward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\","
     "\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[16384,256,32,1],[4096,64,32,1],[4096,64,32,1],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.125\",\"True\",\"-1\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\nq_stride=(16384, 256, 32, "
     "1)\nk_stride=(4096, 64, 32, 1)\nv_stride=(4096, 64, 32, "
     "1)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"FlashAttnFunc",
     "{\"Input Dims\":[[2,64,8,32],[2,80,2,32],[2,80,2,32],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[1],[1],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.125\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"flash_attn::_flash_attn_backward",
     "{\"Input "
     "Dims\":[[2,64,8,32],[2,64,8,32],[2,64,2,32],[2,64,2,32],[],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"\",\"\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[1],[1],[1],[1],[],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"0.1\",\"True\",\"\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\nq_stride=(1,)\nk_stride=(1,)\nv_"
     "stride=(1,)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16')"},
    {"flash_attn::_flash_attn_backward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Input "
     "type\":[\"weird\",\"weird\",\"weird\",\"weird\"],\"Input Strides\":[[1],[1],[1],[1]]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_OK, 0.010498048,
     262144.0, NULL},
    {"flash_attn::_flash_attn_varlen_forward",
     "{\"Input Dims\":[[300,8,64],[300,2,64],[300,2,64],[4],[4],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\",\"int\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[512,64,1],[128,64,1],[128,64,1],[1],[1],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"150\",\"150\",\"0.0\",\"0.1\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.03456, 768000.0, "matrix_bf16", MP_ROOFLINE_OK,
     0.2304576, 1228800.0,
     "B=1\nN_Q=300\nH_Q=8\nN_KV=300\nH_KV=2\nd_h_qk=64\nd_h_v=64\nq_stride=(512, 64, "
     "1)\nk_stride=(128, 64, 1)\nv_stride=(128, 64, "
     "1)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16')\nnum_seqs_q=3\nnum_seqs_kv=3\nmax_seqlen_q=150.0\nmax_seqlen_kv=150.0"},
    {"flash_attn::_flash_attn_varlen_backward",
     "{\"Input "
     "Dims\":[[300,8,64],[300,8,64],[300,2,64],[300,2,64],[],[],[],[],[],[4],[4],[],[],[],[],[]],"
     "\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[1],[1],[1],[1],[],[],[],[],[],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"150\",\"150\",\"0.0\",\"0."
     "1\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.0864576, 1228800.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.2304576, 1228800.0,
     "B=1\nN_Q=300\nH_Q=8\nN_KV=300\nH_KV=2\nd_h_qk=64\nd_h_v=64\nq_stride=(1,)\nk_stride=(1,)\nv_"
     "stride=(1,)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16')\nnum_seqs_q=3\nnum_seqs_kv=3\nmax_seqlen_q=150.0\nmax_seqlen_kv=150.0"},
    {"aiter::_flash_attn_forward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.1\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::_flash_attn_backward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::wrapper_fmha_v3_fwd",
     "{\"Input Dims\":[[],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::wrapper_fmha_v3_bwd",
     "{\"Input Dims\":[[],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::mha_fwd",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::fmha_v3_fwd",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::mha_bwd",
     "{\"Input Dims\":[[],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"flash_attn_3::fwd",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"FlashAttnFunc",
     "{\"Input Dims\":[[2,64,8,32],[2,80,2,32],[2,80,2,32],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[1],[1],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.125\",\"False\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.01048576, 172032.0, "matrix_fp16",
     MP_ROOFLINE_OK, 0.02624512, 278528.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=80\nH_KV=2\nd_h_qk=32\nd_h_v=32\nq_stride=(1,)\nk_stride=(1,)\nv_"
     "stride=(1,)\ndropout=0.0\ncausal=False\nflash_impl=True\ndtype_A_B=('c10::Half', "
     "'c10::Half')"},
    {"EvoformerAttention",
     "{\"Input Dims\":[[1,4,64,8,32],[1,4,64,8,32],[1,4,64,8,32]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.016777216, 524288.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.033554432, 917504.0,
     "B=4\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=8\nd_h_qk=32\nd_h_v=32\ncausal=False\nflash_impl="
     "False\ndtype_A_B=['c10::BFloat16']"},
    {"aten::_scaled_dot_product_flash_attention",
     "{\"Input Dims\":[[2,8,64,32],[3,2,64,32],[2,2,64,32]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"aten::convolution",
     "{\"Input Dims\":[[4,16,100],[32,16,5],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\",\"\",\"\",\"Scalar\",\"\",\"Scalar\"],"
     "\"Input Strides\":[[1600,100,1],[80,5,1],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"[1]\",\"\",\"False\",\"[0]\",\"1\"]}",
     NULL, NULL, NULL, "CONV_fwd", MP_ROOFLINE_OK, 0.00200704, 43008.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.00401408, 86016.0,
     "convNd=conv1d\ninput_shape=(4, 16, 100)\nfilter_shape=(32, 16, "
     "5)\ndtype_input_weight=('c10::BFloat16', 'c10::BFloat16')\ninput_stride=(1600, 100, "
     "1)\nweight_stride=(80, 5, "
     "1)\nbias=False\nstride=(1,)\npadding=(1,)\ndilation=(1,)\ntransposed_conv=False\noutput_"
     "padding=(0,)\ngroups=1"},
    {"aten::convolution_backward",
     "{\"Input Dims\":[[1],[4,16,100],[32,16,5],[32],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"],"
     "\"Input Strides\":[[1],[1600,100,1],[80,5,1],[],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"[16]\",\"[1]\",\"[1]\",\"[1]\",\"False\",\"[0]\",\"1\",\"[True, "
     "True, True]\"]}",
     NULL, NULL, NULL, "CONV_bwd", MP_ROOFLINE_OK, 0.004026624, 98592.0, "matrix_fp16",
     MP_ROOFLINE_OK, 0.004026624, 98592.0,
     "convNd=conv1d\ninput_shape=(4, 16, 100)\nfilter_shape=(32, 16, "
     "5)\ndtype_input_weight=('c10::Half', 'c10::Half')\ninput_stride=(1600, 100, "
     "1)\nweight_stride=(80, 5, "
     "1)\nbias=True\nstride=(1,)\npadding=(1,)\ndilation=(1,)\ntransposed_conv=False\noutput_"
     "padding=(0,)\ngroups=1"},
    {"aten::convolution",
     "{\"Input Dims\":[[2,8,30],[16,8,3],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"float\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"[1]\",\"[1]\",\"[1]\",\"False\",\"[0]\",\"1\"]}",
     NULL, NULL, NULL, "CONV_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"aten::copy_",
     "{\"Input Dims\":[[16,559,1024],[16,559,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"float\",\"Scalar\"],\"Input "
     "Strides\":[[1,2,3],[3,2,1],[]],\"Concrete Inputs\":[\"\",\"\",\"False\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 0.009158656, 54951936.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(16, 559, 1024)\ndtype_in_out=('c10::BFloat16', 'float')\nstride_input=(1, 2, "
     "3)\nstride_output=(3, 2, 1)"},
    {"aten::silu",
     "{\"Input Dims\":[[7,3]],\"Input type\":[\"c10::BFloat16\"],\"Input Strides\":[[3,1]]}", NULL,
     NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2.1e-08, 84.0, "vector_bf16", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "op_shape=(7, 3)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3, "
     "1)\nstride_output=<None>"},
    {"aten::neg",
     "{\"Input Dims\":[[7,3],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Input "
     "Strides\":[[3,1],[]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2.1e-08, 84.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(7, 3)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3, "
     "1)\nstride_output=<None>"},
    {"aten::mul",
     "{\"Input Dims\":[[4,1,8],[3,1],[]],\"Input type\":[\"c10::BFloat16\",\"float\",\"\"],\"Input "
     "Strides\":[[8,8,1],[1,1],[]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 9.6e-08, 460.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 1, 8)\nshape_in2=(3, 1)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "None)\nstride_input1=(8, 8, 1)\nstride_input2=(1, 1)\nstride_output=<None>"},
    {"aten::add",
     "{\"Input Dims\":[[4,5],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input Strides\":[[5,1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"2\",\"1\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2e-08, 84.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 5)\nshape_in2=()\ndtype_in1_in2_out=('c10::BFloat16', 'Scalar', "
     "None)\nstride_input1=(5, 1)\nstride_input2=()\nstride_output=<None>"},
    {"aten::div_",
     "{\"Input Dims\":[[4,5],[4,5],[4,5]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::Half\"],\"Input "
     "Strides\":[[5,1],[5,1],[5,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2e-08, 120.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 5)\nshape_in2=(4, 5)\ndtype_in1_in2_out=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::Half')\nstride_input1=(5, 1)\nstride_input2=(5, 1)\nstride_output=(5, 1)"},
    {"aten::sum",
     "{\"Input Dims\":[[16,559,1024],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"ScalarList\",\"Scalar\",\"\"],\"Concrete "
     "Inputs\":[\"\",\"[-1]\",\"True\",\"\"]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 0.009158656, 18317314.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.009158656, 18317314.0,
     "num_input_elems=9158656\nnum_output_elems=1\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=sum"},
    {"aten::amax",
     "{\"Input Dims\":[[16,559,1024],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Output "
     "type\":[\"float\"]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 0.009158656, 18317316.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.009158656, 18317316.0,
     "num_input_elems=9158656\nnum_output_elems=1\ndtype_in_out=('c10::BFloat16', "
     "'float')\nreduce_type=max"},
    {"aten::cumsum", "{\"Input Dims\":[[16,10]],\"Input type\":[\"c10::BFloat16\"]}", NULL, NULL,
     NULL, "reduce", MP_ROOFLINE_OK, 1.6e-07, 640.0, "vector_bf16", MP_ROOFLINE_OK, 1.6e-07, 640.0,
     "num_input_elems=160\nnum_output_elems=160\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=sum"},
    {"aten::mul",
     "{\"Input Dims\":[[4,3],[5,3]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[3,1],[3,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"aten::mean",
     "{\"Input Dims\":[[4,5,6],[],[]],\"Input type\":[\"c10::BFloat16\",\"\",\"\"],\"Concrete "
     "Inputs\":[\"\",[1,-1],true]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 1.2e-07, 248.0, "vector_bf16", MP_ROOFLINE_OK,
     1.2e-07, 248.0,
     "num_input_elems=120\nnum_output_elems=4\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=mean"},
    {"aten::max",
     "{\"Input Dims\":[[4,5,6],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Concrete "
     "Inputs\":[\"\",1]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 1.2e-07, 288.0, "vector_bf16", MP_ROOFLINE_OK,
     1.2e-07, 288.0,
     "num_input_elems=120\nnum_output_elems=24\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=max"},
    {"aten::replication_pad2d",
     "{\"Input Dims\":[[2,3,10,12],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Input "
     "Strides\":[[360,120,12,1],[]],\"Concrete Inputs\":[\"\",\"[1, 2, 3, 4]\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 1.53e-06, 4500.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "input_shape=(2, 3, 10, 12)\noutput_shape=(2, 3, 17, 15)\npadding=[1, 2, 3, 4]\nop_shape=(2, "
     "3, 17, 15)\ndtype_in_out=('c10::BFloat16', 'c10::BFloat16')\nstride_input=(360, 120, 12, "
     "1)\nstride_output=<None>"},
    {"aten::replication_pad1d",
     "{\"Input Dims\":[[2,3,10],[]],\"Input type\":[\"bool\",\"\"],\"Input "
     "Strides\":[[30,10,1],[]],\"Concrete Inputs\":[\"\",\"[1, 2]\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"aten::upsample_nearest2d",
     "{\"Input Dims\":[[2,3,10,12],[],[]],\"Input type\":[\"float\",\"\",\"\"],\"Input "
     "Strides\":[[360,120,12,1],[],[]],\"Concrete Inputs\":[\"\",\"[20, 24]\",\"\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2.88e-06, 14400.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "input_shape=(2, 3, 10, 12)\noutput_shape=(2, 3, 20, 24)\nop_shape=(2, 3, 20, "
     "24)\ndtype_in_out=('float', 'float')\nstride_input=(360, 120, 12, 1)\nstride_output=<None>"},
    {"aiter::silu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 4.608e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"_C::silu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 4.608e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"sgl_kernel::silu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 4.608e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"aiter::gelu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 7.3728e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"aiter::gelu_tanh_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 9.216e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"LigerSiLUMulFunction",
     "{\"Input Dims\":[[4,9,256],[4,9,256]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input Strides\":[[2304,256,1],[2304,256,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 9.216e-06, 55296.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 9, 256)\nshape_in2=(4, 9, 256)\ndtype_in1_in2_out=('c10::BFloat16', "
     "'c10::BFloat16', None)\nstride_input1=(2304, 256, 1)\nstride_input2=(2304, 256, "
     "1)\nstride_output=<None>"},
    {"aten::batch_norm",
     "{\"Input Dims\":[[8,64,14,14],[64],[64],[64],[64],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[12544,196,14,1],[1],[1],[1],[1],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"True\",\"0.1\",\"1e-05\",\"True\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 0.000502144, 402176.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(12544, 196, "
     "14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::native_batch_norm_backward",
     "{\"Input Dims\":[[8,64,14,14],[8,64,14,14],[64],[64],[64],[64],[64],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"float\",\"float\","
     "\"float\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[1],[12544,196,14,1],[1],[1],[1],[1],[1],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"True\",\"1e-05\",\"[True, True, True]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.000903168, 602624.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.000903168, 602624.0,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(12544, 196, "
     "14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training="
     "True\noutput_mask=[True]"},
    {"aten::instance_norm",
     "{\"Input Dims\":[[8,64,14,14],[64],[64],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"\",\"\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[12544,196,14,1],[1],[1],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"True\",\"0.1\",\"1e-05\",\"False\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 0.000502144, 402176.0, "vector_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::Half', None)\nstride_input=(12544, 196, 14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::miopen_batch_norm_backward",
     "{\"Input Dims\":[[8,64,14,14],[8,64,14,14],[64],[64],[64],[64],[64],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"float\",\"float\","
     "\"float\",\"\"],\"Input "
     "Strides\":[[12544,196,14,1],[12544,196,14,1],[1],[1],[1],[1],[1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"1e-05\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.0004016, 401536.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.0004016, 401536.0,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(12544, 196, "
     "14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training="
     "False\noutput_mask=[True]"},
    {"aten::layer_norm",
     "{\"Input Dims\":[[4,197,768],[],[768],[768],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],"
     "\"Input Strides\":[[151296,768,1],[],[1],[1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"[768]\",\"\",\"\",\"1e-05\",\"True\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 0.003030528, 2429952.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 197, 768)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(151296, 768, "
     "1)\nstride_output=<None>\nnum_channels=768\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::native_layer_norm_backward",
     "{\"Input Dims\":[[4,197,768],[4,197,768],[],[4,197,1],[4,197,1],[768],[768],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"float\",\"float\",\"c10::BFloat16\",\"c10:"
     ":BFloat16\",\"\"],\"Input "
     "Strides\":[[151296,768,1],[151296,768,1],[],[1],[1],[1],[1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"[768]\",\"\",\"\",\"\",\"\",\"[True, True, False]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.005446656, 3635712.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.005446656, 3635712.0,
     "op_shape=(4, 197, 768)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(151296, 768, "
     "1)\nstride_output=<None>\nnum_channels=768\nhas_bias=False\nis_affine=True\nis_training="
     "True\noutput_mask=[True, True, False]"},
    {"aten::group_norm",
     "{\"Input Dims\":[[4,32,8,8],[],[32],[32],[],[]],\"Input "
     "type\":[\"float\",\"Scalar\",\"float\",\"float\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[2048,64,8,1],[],[1],[1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"8\",\"\",\"\",\"1e-05\",\"True\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 4.1152e-05, 66304.0, "vector_fp32",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 32, 8, 8)\ndtype_in_out=('float', None)\nstride_input=(2048, 64, 8, "
     "1)\nstride_output=<None>\nnum_channels=32\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::native_group_norm_backward",
     "{\"Input Dims\":[[4,32,8,8],[4,32,8,8],[4,8],[4,8],[32],[32],[],[],[],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"float\",\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[2048,64,8,1],[2048,64,8,1],[8,1],[8,1],[1],[1],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"4\",\"64\",\"8\",\"[True, True, True]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 7.3728e-05, 98368.0, "vector_fp32",
     MP_ROOFLINE_OK, 7.3728e-05, 98368.0,
     "op_shape=(4, 32, 8, 8)\ndtype_in_out=('float', None)\nstride_input=(2048, 64, 8, "
     "1)\nstride_output=<None>\nnum_channels=4.0\nhas_bias=True\nis_affine=True\nis_training="
     "True\noutput_mask=[True, True, True]"},
    {"aten::_fused_rms_norm",
     "{\"Input Dims\":[[4,7,512],[],[512],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[3584,512,1],[],[1],[]],\"Concrete Inputs\":[\"\",\"[512]\",\"\",\"1e-06\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 5.74e-05, 58368.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7, 512)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3584, 512, "
     "1)\nstride_output=<None>\nnum_channels=512\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aten::_fused_rms_norm_backward",
     "{\"Input Dims\":[[4,7,512],[4,7,512],[],[4,7,1],[512],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"float\",\"c10::BFloat16\",\"\"],\"Input "
     "Strides\":[[3584,512,1],[3584,512,1],[],[7,1,1],[1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"[512]\",\"\",\"\",\"[True, True]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.00014336, 88064.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.00014336, 88064.0,
     "op_shape=(4, 7, 512)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3584, 512, "
     "1)\nstride_output=<None>\nnum_channels=512\nhas_bias=False\nis_affine=True\nis_training="
     "False\noutput_mask=[True, True]"},
    {"aiter::_groupnorm_run",
     "{\"Input Dims\":[[4,32,8,8],[],[32],[32]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[2048,64,8,1],[],[1],[1]]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 4.1152e-05, 33152.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 32, 8, 8)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(2048, 64, 8, "
     "1)\nstride_output=<None>\nnum_channels=32\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::instance_norm_backward", "{\"Input Dims\":[[1]]}", NULL, NULL, NULL, "NORM_bwd",
     MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::rms_norm",
     "{\"Input Dims\":[[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"\"],\"Input "
     "Strides\":[[7168,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000114696, 129024.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm2d_fwd_ck",
     "{\"Input Dims\":[[4,7168],[7168],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"Scalar\",\"\"],\"Input Strides\":[[7168,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000114696, 258048.0, "vector_fp32",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('float', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[1],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000114696, 129024.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,1],[7168],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"c10::BFloat16\",\"Scalar\","
     "\"Scalar\"],\"Input Strides\":[[7168,1],[7168,1],[1,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 100368.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm_quant",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,56],[7168],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[56,1],[1],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"128\",\"False\",\"False\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 101248.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant",
     "{\"Input Dims\":[[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[1],[],[]],\"Concrete Inputs\":[\"\",\"\",\"1e-06\",\"128\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 101248.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm2d_fwd_with_add_ck",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,7168],[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::"
     "BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[7168,1],[7168,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000143368, 243712.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::add_rmsnorm",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,7168],[4,7168],[7168],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::"
     "BFloat16\",\"Scalar\"],\"Input Strides\":[[7168,1],[7168,1],[7168,1],[7168,1],[1],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000143368, 243712.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"1e-06\",\"128\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000200712, 215936.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"vllm::rocm_aiter_triton_add_rmsnorm_pad",
     "{\"Input Dims\":[[64,2880],[2880],[],[64,2880],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[2880,1],[1],[],[2880,1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"1e-05\",\"\",\"256\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000921728, 1504896.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(64, 2880)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(2880, "
     "1)\nstride_output=<None>\nnum_channels=2880\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::fused_add_rmsnorm_pad_",
     "{\"Input Dims\":[[64,2880],[2880],[],[64,2880],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[2880,1],[1],[],[2880,1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"1e-05\",\"\",\"0\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000921728, 1480320.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(64, 2880)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(2880, "
     "1)\nstride_output=<None>\nnum_channels=2880\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant",
     "{\"Input Dims\":[[4,7168],[7168],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"],\"Input Strides\":[[7168,1],[1],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 86912.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"FusedRoPEFunc",
     "{\"Input Dims\":[[128,2,8,64],[128,1,1,64]],\"Input type\":[\"c10::BFloat16\",\"float\"]}",
     NULL, NULL, NULL, "RoPE_fwd", MP_ROOFLINE_OK, 0.000393216, 524288.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "seq_len=128\nbatch=2\nheads=8\nhead_dim=64\nnum_elements=131072"},
    {"aiter::rope_cached_positions_2c_fwd_impl",
     "{\"Input "
     "Dims\":[[2,16,8,64],[2,16,2,64],[2,16,8,64],[2,16,2,64],[4096,1,1,32],[4096,1,1,32],[2,16]],"
     "\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"c10::Half\",\"c10::Half\",\"c10::Half\","
     "\"long int\"]}",
     NULL, NULL, NULL, "RoPE_fwd", MP_ROOFLINE_OK, 6.144e-05, 81920.0, "vector_fp16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "x_shape=(2, 16, 8, 64)\ny_shape=(2, 16, 2, 64)\nnum_elements=20480"},
    {"sgl_kernel::rotary_embedding",
     "{\"Input Dims\":[[32],[32,4096],[32,1024],[],[4096,128],[]],\"Input type\":[\"long "
     "int\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"float\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"128\",\"\",\"True\"]}",
     NULL, NULL, NULL, "RoPE_fwd", MP_ROOFLINE_OK, 0.00049152, 655360.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN, "num_elements=163840"},
    {"sglang::store_cache",
     "{\"Input Dims\":[[32,1024],[32,1024],[835874,1024],[835874,1024],[32],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"float\",\"float\",\"long int\",\"Scalar\",\"Scalar\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.0, 524288.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN, "op_shape=(32, 1024)\nnelems=32768\ndtype=float"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.007897088, 933888.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk=300\ng_sqsq="
     "3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_OK, 0.015794176, 1247232.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.013819904, 1634304.0, "matrix_fp16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.007897088, 1589248.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=320\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.0098304, 718848.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=300\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=3\ng_sk=300\ng_"
     "sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=c10::Float8_e4m3fnuz\nsliding_window="
     "128"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.067125248, 3063808.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, "fp8", "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.000647168, 139264.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_sqsq=1\ng_"
     "sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, "fp8", "InferenceAttention", MP_ROOFLINE_OK, 0.001294336, 249856.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.001132544, 243712.0, "matrix_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.000647168, 180224.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=20\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.000393216, 59392.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=12\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=c10::Float8_e4m3fnuz\nsliding_window=128"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.005500928, 879104.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN,
     NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 890.843406336, 271337472.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk=108745533\ng_sq="
     "0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_OK, 1781.686812672, 542674944.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 1558.975961088, 474840576.0, "matrix_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 890.843406336, 301486080.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=14721\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 7572.168953856, 2082138240.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16\ndtype_KV=c10::"
     "BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 18.253611008, 534773760.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk=258048\ng_sqsq="
     "132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_OK, 36.507222016, 541851648.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 31.943819264, 935854080.0, "matrix_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 18.253611008, 1063256064.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=258048\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 1.610612736, 114032640.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=258048\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=c10::Float8_"
     "e4m3fnuz\nsliding_window=128"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 155.155693568, 614989824.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     NULL, NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "NA", NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"pseudo_op::moe_triton_unfused_up",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", NULL, "MoE_unfused",
     MP_ROOFLINE_OK, 4.831838208, 298763238.17425185, "matrix_fp4", MP_ROOFLINE_SKIP, NAN, NAN,
     "num_tokens=32\nhidden_dim=3072\ninter_dim=3072\nnum_experts=32\ntopk=4\ngated=True\ninput_"
     "dtype=c10::BFloat16\nweight_dtype=FP4"},
    {"pseudo_op::moe_triton_unfused_down",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", NULL, "MoE_unfused",
     MP_ROOFLINE_OK, 2.415919104, 149873139.08712593, "matrix_fp4", MP_ROOFLINE_SKIP, NAN, NAN,
     "num_tokens=32\nhidden_dim=3072\ninter_dim=3072\nnum_experts=32\ntopk=4\ngated=True\ninput_"
     "dtype=c10::BFloat16\nweight_dtype=FP4"},
    {"pseudo_op::moe_triton_unfused_up",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "plain", NULL, "MoE_unfused", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN,
     NAN, NULL},
    {"pseudo_op::moe_triton_unfused_down",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "plain", NULL, "MoE_unfused", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN,
     NAN, NULL},
    {"pseudo_op::moe_triton_unfused_up",
     "{\"Input Dims\":[[32,3072],[32,32]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"MoE topk\":4,\"MoE GEMM gated\":true}",
     NULL, NULL, NULL, "MoE_unfused", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"triton_poi_fused_add_mul_silu_0",
     "{\"Input Dims\":[[8,128],[8,128],[8,128],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::Float\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"1024\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 6.144e-06, 10240.0, "vector_bfloat16",
     MP_ROOFLINE_SKIP, NAN, NAN, "fused_ops=aten.add, aten.mul, aten.silu\nxnumel=1024\nrnumel=1"},
    {"triton_red_fused__to_copy_add_mean_pow_rsqrt_1",
     "{\"Input Dims\":[[8,128],[128],[8,128],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"8\",\"128\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 6.144e-06, 4352.0, "vector_half", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "fused_ops=aten._to_copy, aten.add, aten.mean, aten.pow, aten.rsqrt\nxnumel=8\nrnumel=128"},
    {"triton_per_fused_gelu_native_layer_norm_2",
     "{\"Input Dims\":[[8,128],[],[]],\"Input "
     "type\":[\"c10::Float\",\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"8\",\"128\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 8.192e-06, 4096.0, "vector_float",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "fused_ops=aten.gelu, aten.native_layer_norm\nxnumel=8\nrnumel=128"},
    {"triton_poi_fused_weird_zzz_3",
     "{\"Input Dims\":[[8,128],[]],\"Input type\":[\"c10::Long\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"1024\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 0.0, 16384.0, "vector_long", MP_ROOFLINE_SKIP, NAN,
     NAN, "fused_ops=\nxnumel=1024\nrnumel=1"},
    {"triton_poi_fused_0",
     "{\"Input Dims\":[[8,128],[]],\"Input type\":[\"float\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"1024\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 0.0, 0.0, "", MP_ROOFLINE_SKIP, NAN, NAN,
     "fused_ops=\nxnumel=1024\nrnumel=1"},
    {"triton_poi_fused_add_0", "{\"Input Dims\":[[8,128]],\"Input type\":[\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN,
     NULL},
    {"aten::cat", "{\"Input Dims\":[[[1,2],[3,4]]]}", NULL, NULL, NULL, "other", MP_ROOFLINE_NONE,
     NAN, NAN, NULL, MP_ROOFLINE_NONE, NAN, NAN, NULL},
    {"aten::index", "{}", NULL, "void at::native::vectorized_elementwise_kernel<4>", NULL,
     "elementwise", MP_ROOFLINE_NONE, NAN, NAN, NULL, MP_ROOFLINE_NONE, NAN, NAN, NULL},
    {"aiter::gemm_a8w8_blockscale_ck",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"aiter::gemm_a8w8_bpreshuffle",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"sglang_profiler::fp8_utils_gemm_a8w8_blockscale",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"aiter::gemm_a16w16_atomic_",
     "{\"Input Dims\":[[32,4096],[1024,4096],[32,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"unsigned int\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.268435456, NAN, "matrix_bf16", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "B=1\nM=32\nN=1024\nK=4096\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'unsigned int')"},
    {"sglang_profiler::gemm_kernels_flydsl_hgemm",
     "{\"Input Dims\":[[32,4096],[1024,4096],[32,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"unsigned int\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.268435456, NAN, "matrix_bf16", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "B=1\nM=32\nN=1024\nK=4096\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'unsigned int')"},
    {"aiter::_gemm_a16w16_asm",
     "{\"Input Dims\":[[32,4096],[1024,4096],[32,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"unsigned int\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.268435456, 8716288.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=1024\nK=4096\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::BFloat16')"},
    {"aiter::dynamic_per_token_scaled_quant",
     "{\"Input Dims\":[[32,4096],[32,4096],[32,1],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"\",\"Scalar\"],\"Input "
     "Strides\":[[4096,1],[4096,1],[1,1],[],[]]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000339968, 393344.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(32, 4096)\nshape_in2=(32, 1)\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "'c10::Float8_e4m3fnuz')\nstride_input1=(4096, 1)\nstride_input2=(1, 1)\nstride_output=(4096, "
     "1)"},
    {"aiter::dynamic_per_group_scaled_quant",
     "{\"Input Dims\":[[32,4096],[32,4096],[32,1],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"\",\"Scalar\"],\"Input "
     "Strides\":[[4096,1],[4096,1],[1,1],[],[]]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000339968, 393344.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(32, 4096)\nshape_in2=(32, 1)\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "'c10::Float8_e4m3fnuz')\nstride_input1=(4096, 1)\nstride_input2=(1, 1)\nstride_output=(4096, "
     "1)"},
    {"aiter::dynamic_per_tensor_quant",
     "{\"Input Dims\":[[32,4096],[32,4096],[32,1],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"\",\"Scalar\"],\"Input "
     "Strides\":[[4096,1],[4096,1],[1,1],[],[]]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000339968, 393344.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(32, 4096)\nshape_in2=(32, 1)\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "'c10::Float8_e4m3fnuz')\nstride_input1=(4096, 1)\nstride_input2=(1, 1)\nstride_output=(4096, "
     "1)"},
    {"vllm::triton_per_token_group_quant_fp8",
     "{\"Input Dims\":[[32,4096],[]],\"Input type\":[\"c10::BFloat16\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"128\"]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000786432, 397312.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "M=32\nN=4096\ngroup_size=128\nnum_groups=32\nshape_x=(32, "
     "4096)\ndtype_x=c10::BFloat16\nshape_in1=(32, 4096)\nshape_in2=()\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', None, "
     "'c10::float8_e4m3fn')\nstride_input1=<None>\nstride_input2=<None>\nstride_output=<None>"},
    {"vllm::triton_per_token_group_quant_fp8",
     "{\"Input Dims\":[[4096],[]],\"Input type\":[\"c10::BFloat16\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"0\"]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"aiter::fused_allreduce_rmsnorm",
     "{\"Input Dims\":[[1],[],[4,7168],[4,7168],[4,7168],[4,7168],[7168],[],[],[]],\"Input "
     "type\":[\"long "
     "int\",\"\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::"
     "BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[],[7168,1],[7168,1],[7168,1],[7168,1],[1],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.000143368, 243712.0, "",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)\nnum_channels=7168"},
    {"aiter::fused_allreduce_rmsnorm_",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"\",\"Scalar\","
     "\"Scalar\"],\"Input Strides\":[[7168,1],[7168,1],[1],[],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.000143368, 243712.0, "",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)\nnum_channels=7168"},
    {"_C_custom_ar::all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"sgl_kernel::all_reduce_reg",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"sgl_kernel::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"_C_custom_ar::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"aiter::reduce_scatter",
     "{\"Input Dims\":[[],[8,7168],[4,7168]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 172032.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "op_shape=(8, 7168)\nout_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"aiter::all_gather_reg",
     "{\"Input Dims\":[[],[4,7168],[8,7168]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 172032.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "op_shape=(4, 7168)\nout_shape=(8, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"sglang::reg_all_gather_into_tensor",
     "{\"Input Dims\":[[256,16160],[32,16160],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 9308160.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "out_shape=(256, 16160)\nop_shape=(32, 16160)\ndtype_in=c10::BFloat16"},
    {"aiter::fused_allreduce_rmsnorm",
     "{\"Input Dims\":[[1],[],[4,7168],[4,7168],[4,7168],[4,7168],[7168],[],[],[]],\"Input "
     "type\":[\"long "
     "int\",\"\",\"bogus\",\"bogus\",\"bogus\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Input Strides\":[[1],[],[7168,1],[7168,1],[7168,1],[7168,1],[1],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"aiter::fused_allreduce_rmsnorm_",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[],[],[],[]],\"Input "
     "type\":[\"bogus\",\"bogus\",\"bogus\",\"Scalar\",\"\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[1],[],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"_C_custom_ar::all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"sgl_kernel::all_reduce_reg",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"sgl_kernel::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"_C_custom_ar::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"aiter::reduce_scatter",
     "{\"Input Dims\":[[],[8,7168],[4,7168]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\"],\"Input Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"aiter::all_gather_reg",
     "{\"Input Dims\":[[],[4,7168],[8,7168]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\"],\"Input Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"sglang::reg_all_gather_into_tensor",
     "{\"Input Dims\":[[256,16160],[32,16160],[]],\"Input type\":[\"bogus\",\"bogus\",\"Scalar\"]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,1024,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 77594624.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN, "M=4096\nK=1024\nN=2816\nG=8\nbpe_in=2\nbpe_out=2"},
    {"primus_turbo::grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,100,200]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,1024,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 77594624.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN, "M=4096\nK=1024\nN=2816\nG=8\nbpe_in=2\nbpe_out=2"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,100,200]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[4096,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 37224448.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=4096\nK=1024\nN=2816\nG=1\nbpe_in=2\nbpe_out=2\ngroup_pairs=[((4096, 1024), (1024, "
     "2816))]"},
    {"primus_turbo::grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[[512,1024],[256,512]],[[1024,2816],[511,2816]]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[4096,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 37224448.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=4096\nK=1024\nN=2816\nG=1\nbpe_in=2\nbpe_out=2\ngroup_pairs=[((4096, 1024), (1024, "
     "2816))]"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[[512,1024],[256,512]],[[1024,2816],[511,2816]]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm", "{\"Input type\":[],\"Input Dims\":[[4096,1024],[8,1024,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN,
     NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm",
     "{\"Input type\":[],\"Input Dims\":[[4096,1024],[8,1024,2816]]}", NULL, NULL, NULL,
     "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm_variable_k",
     "{\"Input type\":[],\"Input Dims\":[[4096,1024],[4096,2816]]}", NULL, NULL, NULL,
     "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k",
     "{\"Input type\":[],\"Input Dims\":[[4096,1024],[4096,2816]]}", NULL, NULL, NULL,
     "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"MoEDispatch", "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[4096,7168],[4096,8]]}",
     NULL, NULL, NULL, "MoE_comm_fwd", MP_ROOFLINE_OK, 0.0, 58720256.0, "", MP_ROOFLINE_OK, 0.0,
     58720256.0, "num_tokens=4096\nhidden_dim=7168\nbpe=2"},
    {"MoECombine", "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[4096,7168],[4096,8]]}",
     NULL, NULL, NULL, "MoE_comm_fwd", MP_ROOFLINE_OK, 0.0, 58720256.0, "", MP_ROOFLINE_OK, 0.0,
     58720256.0, "num_tokens=4096\nhidden_dim=7168\nbpe=2"},
    {"DaoAILab::_causal_conv1d_fwd_cpp",
     "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[2,1024,4096],[1024,4],[1024],[]]}", NULL,
     NULL, NULL, "SSM_fwd", MP_ROOFLINE_OK, 0.067108864, 33564672.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "batch=2\nchannels=1024\nseq_len=4096\nkernel_size=4\nhas_bias=True"},
    {"CrossEntropyFunction",
     "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[8,1,32000],[8,1]]}", NULL, NULL, NULL,
     "CrossEntropy_fwd", MP_ROOFLINE_OK, 0.00128, 512096.0, "vector_bf16", MP_ROOFLINE_FAILED, NAN,
     NAN, "batch=8\nvocab_size=32000\nlogits_shape=[8, 1, 32000]"},
    {"DaoAILab::_causal_conv1d_fwd_cpp",
     "{\"Input type\":[],\"Input Dims\":[[2,1024,4096],[1024,4],[1024],[]]}", NULL, NULL, NULL,
     "SSM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN, NULL},
};

static bool oracle_close(double got, double want)
{
    return got == want || fabs(got - want) <= 1e-9 * fmax(fabs(got), fabs(want));
}

static void test_oracle_cases(void **state)
{
    (void)state;
    size_t n = sizeof(oracle_cases) / sizeof(oracle_cases[0]), bad = 0;
    for (size_t i = 0; i < n; i++) {
        const struct oracle *o = &oracle_cases[i];
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
        if (strcmp(r.category, o->category))
            snprintf(why, sizeof(why), "category %s", r.category);
        else if (r.status != o->status)
            snprintf(why, sizeof(why), "status %d (%s)", r.status, r.error);
        else if (r.status_bwd != o->status_bwd)
            snprintf(why, sizeof(why), "bwd status %d (%s)", r.status_bwd, r.error);
        else if (o->status == MP_ROOFLINE_OK &&
                 (!oracle_close(r.gflops, o->gflops) || r.has_bytes == isnan(o->bytes) ||
                  (r.has_bytes && !oracle_close(r.bytes, o->bytes))))
            snprintf(why, sizeof(why), "gflops %.17g bytes %.17g", r.gflops, r.bytes);
        else if (o->status == MP_ROOFLINE_OK && strcmp(r.compute_spec, o->spec))
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
            if (strcmp(buf, o->params)) {
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
    print_message("TraceLens oracle cases: %zu, mismatches %zu\n", n, bad);
    assert_int_equal(bad, 0);
}

/* The args reader: escapes, unicode, Python's NaN/Infinity, duplicate keys
 * (the last wins, as in Python), big integers, and malformed text. */
static void test_args_json(void **state)
{
    (void)state;
    struct mp_roofline_result r;
    /* a dtype spelled with escapes still reads as c10::BFloat16 */
    run("aten::neg",
        "{\"Input Dims\": [[3]], \"Input type\": [\"c10::BFloa\\u0074\\u00316\"], \"Input "
        "Strides\": "
        "[[1]], \"Input Dims\": [[4, 2]]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "op_shape"), "(4, 2)");
    assert_string_equal(ptext(&r, "dtype_in_out"), "('c10::BFloat16', None)");
    assert_true(r.bytes == 32);
    mp_roofline_result_fini(&r);
    /* strings in params print as Python reprs, non-ASCII kept */
    run("aten::copy_",
        "{\"Input Dims\": [[2], [2]], \"Input type\": [\"it's \\\"q\\\"\", "
        "\"\\u00e9\\ud83d\\ude00\"], "
        "\"Input Strides\": [[NaN, -Infinity, 1.5, 12345678901234567890], [1]]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "dtype_in_out"), "('it\\'s \"q\"', '\xc3\xa9\xf0\x9f\x98\x80')");
    assert_string_equal(ptext(&r, "stride_input"), "(nan, -inf, 1.5, 1.2345678901234567e+19)");
    assert_false(r.has_bytes); /* unknown dtypes: bytes() is None */
    assert_string_equal(r.compute_spec, "");
    mp_roofline_result_fini(&r);
    /* 1-tuples keep their comma; empty shapes print () */
    run("aten::add",
        "{\"Input Dims\": [[559], []], \"Input type\": [\"float\", \"Scalar\"], \"Input Strides\": "
        "[[1], []]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "shape_in1"), "(559,)");
    assert_string_equal(ptext(&r, "shape_in2"), "()");
    assert_string_equal(ptext(&r, "stride_output"), "<None>");
    assert_true(r.bytes == 559 * 4 + 4 + 559 * 4);
    mp_roofline_result_fini(&r);
    /* malformed args fail the row, whatever the op */
    static const char *const bad[] = {"{\"Input Dims\": [[1, 2]", "[1, 2]",       "{\"a\": tru}",
                                      "{\"a\": \"\\x\"}",         "{\"a\": 1} x", "{\"a\": 01e}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        run("aten::mm", bad[i], &r);
        assert_int_equal(r.status, MP_ROOFLINE_FAILED);
        assert_int_equal(r.status_bwd, MP_ROOFLINE_FAILED);
        assert_string_equal(r.category, "GEMM");
        mp_roofline_result_fini(&r);
    }
    /* deep nesting is refused, not a stack overflow */
    char deep[400];
    size_t n = 0;
    deep[n++] = '{';
    memcpy(deep + n, "\"a\":", 4);
    n += 4;
    for (int i = 0; i < 150; i++)
        deep[n++] = '[';
    for (int i = 0; i < 150; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    deep[n] = '\0';
    run("aten::mm", deep, &r);
    assert_int_equal(r.status, MP_ROOFLINE_FAILED);
    mp_roofline_result_fini(&r);
    /* large args move to the heap */
    size_t big = 200000;
    char *a = malloc(big + 128);
    assert_non_null(a);
    size_t m = (size_t)sprintf(a, "{\"Input Dims\": [[2]], \"pad\": [");
    while (m < big) {
        memcpy(a + m, "\"xxxxxxxx\", ", 12);
        m += 12;
    }
    m += (size_t)sprintf(a + m, "1], \"Input type\": [\"float\"], \"Input Strides\": [[1]]}");
    struct mp_roofline_op op = {"aten::neg", a, m, NULL, NULL, 0, NULL};
    assert_int_equal(mp_roofline_model(&op, &r), 0);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_true(r.bytes == 16);
    mp_roofline_result_fini(&r);
    free(a);
    /* API misuse */
    struct mp_roofline_op none = {NULL, NULL, 0, NULL, NULL, 0, NULL};
    assert_int_equal(mp_roofline_model(&none, &r), MP_EINVAL);
    assert_int_equal(mp_roofline_model(NULL, &r), MP_EINVAL);
    assert_int_equal(mp_roofline_model(&none, NULL), MP_EINVAL);
    mp_roofline_result_fini(NULL);
}

/* ------------------------------------------------------------ arch */

static void test_arch(void **state)
{
    (void)state;
    struct mp_roofline_arch a;
    const char *const *names = mp_roofline_arch_builtin_names();
    for (size_t i = 0; names[i]; i++) {
        assert_int_equal(mp_roofline_arch_builtin(names[i], &a), 0);
        assert_true(a.has_mem_bw && a.mem_bw_gbps > 0 && a.n_specs > 0 && a.source);
        double t;
        assert_true(mp_roofline_arch_tflops(&a, "matrix_bf16", &t) && t > 0);
    }
    assert_int_equal(mp_roofline_arch_builtin("mi-300x", &a), 0);
    assert_string_equal(a.name, "MI300X");
    assert_int_equal(mp_roofline_arch_builtin("h100_sxm", &a), 0);
    assert_true(a.mem_bw_gbps == 3350);
    assert_int_equal(mp_roofline_arch_builtin("V100", &a), MP_ENOTFOUND);

    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA H200", &a), 0);
    assert_string_equal(a.name, "H200");
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA H100 80GB HBM3", &a), 0);
    assert_string_equal(a.name, "H100");
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA H100 PCIe", &a), MP_ENOTFOUND);
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA A100-SXM4-80GB", &a), 0);
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA A100-SXM4-40GB", &a), MP_ENOTFOUND);
    assert_int_equal(mp_roofline_arch_from_device_name("AMD Instinct MI300X", &a), 0);
    assert_string_equal(a.name, "MI300X");
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA B200", &a), 0);

    /* the built-in H200 is the H200 golden arch file */
    if (shared()) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/data/traces/h200/H200-arch-datasheet.json", shared());
        struct mp_roofline_arch f, b;
        struct mp_diag d;
        mp_diag_clear(&d);
        assert_int_equal(mp_roofline_arch_load_json(p, &f, &d), 0);
        assert_int_equal(mp_roofline_arch_builtin("H200", &b), 0);
        assert_true(f.mem_bw_gbps == b.mem_bw_gbps && f.memory_gb == b.memory_gb);
        assert_int_equal(f.n_specs, b.n_specs);
        for (int i = 0; i < f.n_specs; i++) {
            double t;
            assert_true(mp_roofline_arch_tflops(&b, f.specs[i].key, &t));
            assert_true(t == f.specs[i].tflops);
        }
        assert_null(f.source);
    }

    /* errors name line, column and field */
    struct mp_diag d;
    mp_diag_clear(&d);
    const char *bad = "{\n  \"name\": \"X\",\n  \"mem_bw_gbps\": \"fast\"\n}";
    assert_int_equal(mp_roofline_arch_parse_json(bad, strlen(bad), "x.json", &a, &d), MP_EINVAL);
    assert_string_equal(d.field, "mem_bw_gbps");
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 3);
    assert_string_equal(d.file, "x.json");
    mp_diag_clear(&d);
    const char *bad2 = "{\"max_achievable_tflops\": {\"matrix_bf16\": 1,\n \"vector_fp32\": null}}";
    assert_int_equal(mp_roofline_arch_parse_json(bad2, strlen(bad2), NULL, &a, &d), MP_EINVAL);
    assert_string_equal(d.field, "max_achievable_tflops.vector_fp32");
    assert_int_equal(d.line, 2);
    mp_diag_clear(&d);
    const char *bad3 = "{\"name\": \"X\",\n \"mem_bw_gbps\": 5,,}";
    assert_int_equal(mp_roofline_arch_parse_json(bad3, strlen(bad3), NULL, &a, &d), MP_EPARSE);
    assert_int_equal(d.line, 2);
    assert_true(d.col > 0);
    mp_diag_clear(&d);
    assert_int_equal(mp_roofline_arch_load_json("/nonexistent/arch.json", &a, &d), MP_EIO);
    assert_string_equal(d.file, "/nonexistent/arch.json");

    /* roofline: anchors computed by hand */
    assert_int_equal(mp_roofline_arch_builtin("H200", &a), 0);
    struct mp_roofline_roofline rl;
    mp_roofline_roofline(&a, "matrix_bf16", 989.0, true, 4.8e9, 2000.0, &rl);
    assert_true(rl.valid);
    assert_true(fabs(rl.compute_us - 1000.0) < 1e-9 && fabs(rl.memory_us - 1000.0) < 1e-9);
    assert_true(rl.compute_bound); /* ties are compute bound */
    assert_true(fabs(rl.pct - 50.0) < 1e-9);
    mp_roofline_roofline(&a, "matrix_bf16", 1.0, true, 4.8e9, 0.0, &rl);
    assert_true(rl.valid && !rl.compute_bound && isnan(rl.pct));
    mp_roofline_roofline(&a, "matrix_fp4", 1.0, true, 1.0, 1.0, &rl);
    assert_false(rl.valid);
    mp_roofline_roofline(&a, "matrix_bf16", 0.0, true, 1.0, 1.0, &rl);
    assert_false(rl.valid);
    mp_roofline_roofline(&a, "matrix_bf16", 1.0, false, 0.0, 1.0, &rl);
    assert_false(rl.valid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_sorted),
        cmocka_unit_test(test_category_rules),
        cmocka_unit_test(test_golden_categories),
        cmocka_unit_test(test_gemm_anchor),
        cmocka_unit_test(test_arch),
        cmocka_unit_test(test_golden_sheets),
        cmocka_unit_test(test_golden_unified),
        cmocka_unit_test(test_oracle_cases),
        cmocka_unit_test(test_args_json),
        cmocka_unit_test(test_model_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
