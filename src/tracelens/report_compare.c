/* Comparison of TraceLens-compatible reports (TraceLens_compare_perf_reports_pytorch):
 * each compared sheet of every report is read into a small column table with
 * the column types pandas' read_csv would infer (int, float, bool, text;
 * missing cells from its default NA strings), the tables are outer-joined on
 * the sheet's key columns (rows in key order, missing keys last), the
 * compared columns get <col>__<tag>_diff and <col>__<tag>_pct columns, and
 * the per-op sheets are split per variant into intersect / only_baseline /
 * only_variant tables. Cells are printed as pandas' to_csv prints them:
 * integers as integers while no row of a column is missing, floats as
 * Python's repr, missing cells empty.
 *
 * Row order: TraceLens sorts by one column, descending, with numpy's
 * quicksort, which is not stable; this file keeps rows with equal values in
 * key order (see docs/trace-compare.md). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <magpie/fmt.h>
#include <magpie/tracelens_compare.h>

#include "tracelens_int.h"

enum tc_kind { TC_INT, TC_FLOAT, TC_BOOL, TC_STR, TC_EMPTY };

struct tc_cell {
    const char *s; /* text (bool and text columns) */
    double v;
    long long i;
    bool na;
};

struct tc_col {
    const char *name;
    enum tc_kind kind;
    struct tc_cell *c; /* nrows cells */
};

struct tc_frame {
    struct tc_col *cols;
    size_t ncols, nrows;
};

struct tc_ctx {
    struct tl_xlsx **xl; /* per report: its workbook, NULL for a directory */
    struct mp_arena *ar;
    struct mp_diag *d;
    const struct mp_tlcmp_opts *o;
    const char **tags;
    struct mp_tlcmp_result *rep;
};

/* ---- frames ---- */

static void frame_fini(struct tc_frame *f)
{
    for (size_t j = 0; j < f->ncols; j++)
        free(f->cols[j].c);
    free(f->cols);
    f->cols = NULL;
    f->ncols = f->nrows = 0;
}

static long frame_col(const struct tc_frame *f, const char *name)
{
    for (size_t j = 0; j < f->ncols; j++)
        if (!strcmp(f->cols[j].name, name))
            return (long)j;
    return -1;
}

static int frame_add_col(struct tc_frame *f, const char *name, enum tc_kind kind)
{
    struct tc_col *nc = mp_reallocarray(f->cols, f->ncols + 1, sizeof(*nc));
    if (!nc)
        return MP_ENOMEM;
    f->cols = nc;
    struct tc_cell *cells = calloc(f->nrows ? f->nrows : 1, sizeof(*cells));
    if (!cells)
        return MP_ENOMEM;
    f->cols[f->ncols++] = (struct tc_col){.name = name, .kind = kind, .c = cells};
    return 0;
}

/* Room for one more row in every column of f, which has room for *cap. */
static int frame_grow(struct tc_frame *f, size_t *cap)
{
    if (f->nrows < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    for (size_t j = 0; j < f->ncols; j++) {
        struct tc_cell *c = mp_reallocarray(f->cols[j].c, nc, sizeof(*c));
        if (!c)
            return MP_ENOMEM;
        f->cols[j].c = c;
    }
    *cap = nc;
    return 0;
}

static void frame_drop(struct tc_frame *f, const char *name)
{
    long j = frame_col(f, name);
    if (j < 0)
        return;
    free(f->cols[j].c);
    memmove(&f->cols[j], &f->cols[j + 1], (f->ncols - (size_t)j - 1) * sizeof(*f->cols));
    f->ncols--;
}

/* ---- reading a sheet ---- */

static bool is_na_text(const char *s)
{
    static const char *const na[] = {"",         "#N/A", "#N/A N/A", "#NA",    "-1.#IND",
                                     "-1.#QNAN", "-NaN", "-nan",     "1.#IND", "1.#QNAN",
                                     "<NA>",     "N/A",  "NA",       "NULL",   "NaN",
                                     "None",     "n/a",  "nan",      "null"};
    for (size_t i = 0; i < sizeof(na) / sizeof(na[0]); i++)
        if (!strcmp(s, na[i]))
            return true;
    return false;
}

static bool parse_int(const char *s, long long *out)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    const char *q = p;
    if (*q == '+' || *q == '-')
        q++;
    if (!isdigit((unsigned char)*q))
        return false;
    errno = 0;
    char *e;
    long long v = strtoll(p, &e, 10);
    while (*e == ' ')
        e++;
    if (*e || errno)
        return false;
    *out = v;
    return true;
}

static bool parse_float(const char *s, double *out)
{
    const char *p = s;
    while (*p == ' ')
        p++;
    const char *q = p + (*p == '+' || *p == '-');
    if (!isdigit((unsigned char)*q) && *q != '.' && strncasecmp(q, "inf", 3) != 0)
        return false;
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
        return false;
    char *e;
    double v = strtod(p, &e);
    if (e == p)
        return false;
    while (*e == ' ')
        e++;
    if (*e)
        return false;
    *out = v;
    return true;
}

static bool is_bool_text(const char *s, bool *v)
{
    if (!strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "true")) {
        *v = true;
        return true;
    }
    if (!strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "false")) {
        *v = false;
        return true;
    }
    return false;
}

/* Settles a column's kind from its text cells as read_csv does. */
static void infer_kind(struct tc_col *col, size_t n)
{
    bool all_int = true, all_float = true, all_bool = true;
    size_t present = 0;
    for (size_t i = 0; i < n; i++) {
        struct tc_cell *c = &col->c[i];
        if (c->na)
            continue;
        present++;
        long long iv;
        double fv;
        bool bv;
        if (all_int && !parse_int(c->s, &iv))
            all_int = false;
        if (all_float && !parse_float(c->s, &fv))
            all_float = false;
        if (all_bool && !is_bool_text(c->s, &bv))
            all_bool = false;
    }
    if (!n) {
        col->kind = TC_EMPTY;
        return;
    }
    if (!present) {
        col->kind = TC_FLOAT;
        return;
    }
    if (all_int && present == n) {
        col->kind = TC_INT;
        for (size_t i = 0; i < n; i++) {
            parse_int(col->c[i].s, &col->c[i].i);
            col->c[i].v = (double)col->c[i].i;
        }
    } else if (all_int || all_float) {
        col->kind = TC_FLOAT;
        for (size_t i = 0; i < n; i++)
            if (!col->c[i].na)
                parse_float(col->c[i].s, &col->c[i].v);
    } else if (all_bool) {
        col->kind = TC_BOOL;
        for (size_t i = 0; i < n; i++) {
            bool bv;
            if (!col->c[i].na && is_bool_text(col->c[i].s, &bv))
                col->c[i].s = bv ? "True" : "False";
        }
    } else {
        col->kind = TC_STR;
    }
}

static int read_file(const char *path, struct mp_buf *b, struct mp_diag *d)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "cannot open: %s", strerror(errno));
    }
    char tmp[65536];
    size_t got;
    int rc = 0;
    while (!rc && (got = fread(tmp, 1, sizeof(tmp), fp)) > 0)
        rc = mp_buf_append(b, tmp, got);
    if (!rc && ferror(fp)) {
        mp_diag_set_file(d, path);
        rc = mp_diag_set(d, MP_EIO, "read error");
    }
    fclose(fp);
    return rc;
}

/* Text of a workbook cell as str() of its Python value. */
static const char *xc_text(struct tc_ctx *x, const struct tl_xlsx_cell *c)
{
    char tmp[64];
    switch (c->type) {
    case TL_XC_STR:
        return mp_arena_strndup(x->ar, c->s, strlen(c->s));
    case TL_XC_INT:
        snprintf(tmp, sizeof(tmp), "%lld", c->i);
        break;
    case TL_XC_FLOAT:
        mp_fmt_pyfloat(c->v, tmp, sizeof(tmp));
        break;
    case TL_XC_BOOL:
        return c->b ? "True" : "False";
    default:
        return "";
    }
    return mp_arena_strndup(x->ar, tmp, strlen(tmp));
}

/* Whether a worksheet row has no cell (pandas skips such rows). */
static bool xrow_empty(const struct tl_xlsx_cell *row, size_t ncols)
{
    for (size_t j = 0; j < ncols; j++)
        if (row[j].type != TL_XC_EMPTY)
            return false;
    return true;
}

/* pd.read_excel(report, sheet_name=sheet): the header row, then the data
 * rows (all-empty ones skipped), each column typed as pandas' python parser
 * types an object column: numbers (and numeric strings) to int64, or
 * float64 when one is missing or fractional; booleans; else text. */
static int load_sheet_xlsx(struct tc_ctx *x, size_t r, const char *sheet, struct tc_frame *f)
{
    memset(f, 0, sizeof(*f));
    struct tl_xlsx_cell *g = NULL;
    size_t R = 0, C = 0;
    const char *path = x->o->reports[r];
    int rc = tl_xlsx_read_sheet(x->xl[r], sheet, path, &g, &R, &C, x->d);
    if (rc == MP_ENOTFOUND) {
        mp_diag_set_file(x->d, path);
        return mp_diag_set(x->d, MP_EINVAL, "%s has no sheet named '%s'", path, sheet);
    }
    if (rc)
        return rc;
    for (size_t j = 0; j < C && !rc; j++) {
        const struct tl_xlsx_cell *h = &g[j];
        const char *nm;
        char tmp[32];
        if (h->type == TL_XC_EMPTY || h->type == TL_XC_NA) {
            snprintf(tmp, sizeof(tmp), "Unnamed: %zu", j);
            nm = mp_arena_strndup(x->ar, tmp, strlen(tmp));
        } else {
            nm = xc_text(x, h);
        }
        rc = nm ? frame_add_col(f, nm, TC_STR) : MP_ENOMEM;
    }
    size_t cap = 0;
    for (size_t i = 1; i < R && !rc; i++) {
        const struct tl_xlsx_cell *row = &g[i * C];
        if (xrow_empty(row, C))
            continue;
        rc = frame_grow(f, &cap);
        for (size_t j = 0; j < C && !rc; j++) {
            const struct tl_xlsx_cell *xc = &row[j];
            struct tc_cell *c = &f->cols[j].c[f->nrows];
            memset(c, 0, sizeof(*c));
            c->na = xc->type == TL_XC_EMPTY || xc->type == TL_XC_NA ||
                    (xc->type == TL_XC_STR && is_na_text(xc->s));
            if (!c->na) {
                c->s = xc_text(x, xc);
                c->i = xc->i;
                c->v = xc->type == TL_XC_INT ? (double)xc->i : xc->v;
                if (!c->s)
                    rc = MP_ENOMEM;
            }
        }
        f->nrows++;
    }
    /* column types from the cells' Python types */
    for (size_t j = 0; j < f->ncols && !rc; j++) {
        struct tc_col *col = &f->cols[j];
        bool num = true, boolean = true, anyna = false, anyfloat = false;
        size_t present = 0, k = 0;
        for (size_t i = 1; i < R; i++) {
            const struct tl_xlsx_cell *row = &g[i * C];
            if (xrow_empty(row, C))
                continue;
            struct tc_cell *c = &col->c[k++];
            const struct tl_xlsx_cell *xc = &row[j];
            if (c->na) {
                anyna = true;
                continue;
            }
            present++;
            bool bv;
            if (xc->type == TL_XC_INT) {
                boolean = false;
            } else if (xc->type == TL_XC_FLOAT) {
                boolean = false;
                anyfloat = true;
            } else if (xc->type == TL_XC_BOOL) {
                num = false;
            } else {
                long long iv;
                double fv;
                if (parse_int(xc->s, &iv)) {
                    c->i = iv;
                    c->v = (double)iv;
                } else if (parse_float(xc->s, &fv)) {
                    c->v = fv;
                    anyfloat = true;
                } else {
                    num = false;
                }
                if (!is_bool_text(xc->s, &bv))
                    boolean = false;
                else
                    c->s = bv ? "True" : "False";
            }
        }
        if (!f->nrows)
            col->kind = TC_EMPTY;
        else if (!present)
            col->kind = TC_FLOAT;
        else if (num)
            col->kind = anyna || anyfloat ? TC_FLOAT : TC_INT;
        else if (boolean)
            col->kind = TC_BOOL;
        else
            col->kind = TC_STR;
    }
    tl_xlsx_grid_free(g, R, C);
    if (rc)
        frame_fini(f);
    return rc;
}

/* load_sheet: <dir>/<sheet>.csv into f (an empty file gives an empty frame). */
static int load_sheet(struct tc_ctx *x, const char *dir, const char *sheet, struct tc_frame *f)
{
    memset(f, 0, sizeof(*f));
    char *path = mp_fs_join(dir, sheet);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = path ? 0 : MP_ENOMEM;
    char *csvpath = NULL;
    if (!rc) {
        size_t n = strlen(path) + 5;
        csvpath = malloc(n);
        rc = csvpath ? 0 : MP_ENOMEM;
        if (!rc)
            snprintf(csvpath, n, "%s.csv", path);
    }
    if (!rc && !mp_fs_exists(csvpath)) {
        mp_diag_set_file(x->d, dir);
        rc = mp_diag_set(x->d, MP_EINVAL, "%s has no '%s.csv'", dir, sheet);
    }
    rc = rc ? rc : read_file(csvpath, &b, x->d);
    struct mp_csv_rec hdr = {0}, row = {0};
    const char *p = b.data, *end = b.data ? b.data + b.len : NULL;
    size_t cap = 0;
    if (!rc && b.len) {
        int r = mp_csv_next(&p, end, &hdr, 1u << 16);
        if (r < 0) {
            mp_diag_set_file(x->d, csvpath);
            rc = mp_diag_set(x->d, MP_EPARSE, "bad CSV header");
        }
        for (size_t j = 0; r == 1 && !rc && j < hdr.n; j++) {
            char *nm = mp_arena_strndup(x->ar, mp_csv_rec_field(&hdr, j),
                                        strlen(mp_csv_rec_field(&hdr, j)));
            rc = nm ? frame_add_col(f, nm, TC_STR) : MP_ENOMEM;
        }
        while (!rc) {
            r = mp_csv_next(&p, end, &row, 1u << 16);
            if (r == 0)
                break;
            if (r < 0) {
                mp_diag_set_file(x->d, csvpath);
                mp_diag_set_pos(x->d, -1, (long)f->nrows + 2, 0);
                rc = mp_diag_set(x->d, r == MP_EUNSUP ? MP_EINVAL : MP_EPARSE, "bad CSV record");
                break;
            }
            if (row.n == 1 && !*mp_csv_rec_field(&row, 0) && f->ncols != 1)
                continue; /* blank line */
            if (row.n > f->ncols) {
                mp_diag_set_file(x->d, csvpath);
                mp_diag_set_pos(x->d, -1, (long)f->nrows + 2, 0);
                rc =
                    mp_diag_set(x->d, MP_EINVAL, "%zu fields, the header has %zu", row.n, f->ncols);
                break;
            }
            rc = frame_grow(f, &cap);
            if (rc)
                break;
            for (size_t j = 0; j < f->ncols; j++) {
                struct tc_cell *c = &f->cols[j].c[f->nrows];
                memset(c, 0, sizeof(*c));
                const char *s = j < row.n ? mp_csv_rec_field(&row, j) : "";
                c->na = is_na_text(s);
                if (!c->na) {
                    c->s = mp_arena_strndup(x->ar, s, strlen(s));
                    if (!c->s)
                        rc = MP_ENOMEM;
                }
            }
            f->nrows++;
        }
        for (size_t j = 0; j < f->ncols && !rc; j++)
            infer_kind(&f->cols[j], f->nrows);
    }
    mp_csv_rec_fini(&hdr);
    mp_csv_rec_fini(&row);
    mp_buf_fini(&b);
    free(path);
    free(csvpath);
    if (rc)
        frame_fini(f);
    return rc;
}

/* list_report_sheet_names: the *.csv stems of dir, sorted. */
static int sheet_names(const char *dir, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *dp = opendir(dir);
    if (!dp)
        return MP_EIO;
    int rc = 0;
    size_t cap = 0;
    struct dirent *e;
    while (!rc && (e = readdir(dp))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 4, ".csv") != 0)
            continue;
        if (MP_GROW(*out, cap, *n + 1, 32)) {
            rc = MP_ENOMEM;
            break;
        }
        (*out)[*n] = mp_strndup(e->d_name, l - 4);
        rc = (*out)[*n] ? 0 : MP_ENOMEM;
        if (!rc)
            (*n)++;
    }
    closedir(dp);
    return rc;
}

/* pd.ExcelFile(path).sheet_names: the workbook's order. */
static int xlsx_sheet_names(const struct tl_xlsx *xl, char ***out, size_t *n)
{
    *n = 0;
    *out = calloc(tl_xlsx_nsheets(xl) + 1, sizeof(**out));
    if (!*out)
        return MP_ENOMEM;
    for (size_t i = 0; i < tl_xlsx_nsheets(xl); i++) {
        (*out)[i] = mp_strdup(tl_xlsx_sheet_name(xl, i));
        if (!(*out)[i])
            return MP_ENOMEM;
        (*n)++;
    }
    return 0;
}

static bool has_sheet(char **names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return true;
    return false;
}

/* ---- building the difference table ---- */

static bool is_num(enum tc_kind k)
{
    return k == TC_INT || k == TC_FLOAT;
}

static int cmp_key_cells(const struct tc_cell *a, const struct tc_cell *b, bool num)
{
    if (a->na || b->na)
        return a->na == b->na ? 0 : a->na ? 1 : -1;
    if (num)
        return a->v < b->v ? -1 : a->v > b->v ? 1 : 0;
    return strcmp(a->s, b->s);
}

struct tc_ent {
    int side; /* 0 left, 1 right */
    size_t row;
};

struct tc_sortctx {
    const struct tc_frame *f[2];
    const long *kc[2];
    const bool *knum;
    size_t nk;
};

static const struct tc_cell *ent_key(const struct tc_sortctx *s, const struct tc_ent *e, size_t k)
{
    return &s->f[e->side]->cols[s->kc[e->side][k]].c[e->row];
}

static int ent_cmp(const struct tc_sortctx *s, const struct tc_ent *a, const struct tc_ent *b)
{
    for (size_t k = 0; k < s->nk; k++) {
        int c = cmp_key_cells(ent_key(s, a, k), ent_key(s, b, k), s->knum[k]);
        if (c)
            return c;
    }
    return 0;
}

/* Stable top-down merge sort of the n elements of a (size bytes each) by
 * cmp (ctx passed on), tmp room for n; an element of the right half goes
 * first only when it sorts strictly before. */
static void merge_sort(void *a, void *tmp, size_t n, size_t size,
                       int (*cmp)(const void *x, const void *y, const void *ctx), const void *ctx)
{
    if (n < 2)
        return;
    char *p = a, *t = tmp;
    size_t h = n / 2;
    merge_sort(p, t, h, size, cmp, ctx);
    merge_sort(p + h * size, t, n - h, size, cmp, ctx);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        size_t from = cmp(p + j * size, p + i * size, ctx) < 0 ? j++ : i++;
        memcpy(t + k++ * size, p + from * size, size);
    }
    memcpy(t + k * size, p + i * size, (h - i) * size);
    k += h - i;
    memcpy(t + k * size, p + j * size, (n - j) * size);
    memcpy(p, t, n * size);
}

static int ent_cmp_v(const void *x, const void *y, const void *ctx)
{
    return ent_cmp(ctx, x, y);
}

/* The key columns of the merge in both frames (kc[k] left, kc[nk + k]
 * right), whether each compares as a number (knum) and its merged kind
 * (kkind); a missing key column or one holding numbers in one report and
 * text in the other is an input error. */
static int merge_keys(struct tc_ctx *x, const struct tc_frame *L, const struct tc_frame *R,
                      const char *const *keys, size_t nk, const char *what, long *kc, bool *knum,
                      enum tc_kind *kkind)
{
    for (size_t k = 0; k < nk; k++) {
        for (int s = 0; s < 2; s++) {
            kc[s * nk + k] = frame_col(s ? R : L, keys[k]);
            if (kc[s * nk + k] < 0) {
                mp_diag_set_field(x->d, keys[k]);
                return mp_diag_set(x->d, MP_EINVAL, "%s: a report has no key column '%s'", what,
                                   keys[k]);
            }
        }
        enum tc_kind a = L->cols[kc[k]].kind, b = R->cols[kc[nk + k]].kind;
        bool an = is_num(a) || a == TC_EMPTY, bn = is_num(b) || b == TC_EMPTY;
        if (an && bn) {
            knum[k] = true;
            kkind[k] = a == TC_INT && b == TC_INT ? TC_INT : TC_FLOAT;
            continue;
        }
        if (!is_num(a) && !is_num(b)) {
            kkind[k] = a == TC_BOOL && b == TC_BOOL ? TC_BOOL : TC_STR;
            continue;
        }
        /* text on one side: only a column with no value on the other fits */
        bool ok = true;
        const struct tc_frame *nf = is_num(a) ? L : R;
        long col = is_num(a) ? kc[k] : kc[nk + k];
        for (size_t i = 0; i < nf->nrows && ok; i++)
            ok = nf->cols[col].c[i].na;
        kkind[k] = TC_STR;
        if (!ok) {
            mp_diag_set_field(x->d, keys[k]);
            return mp_diag_set(x->d, MP_EINVAL,
                               "%s: key column '%s' holds numbers in one report and text in "
                               "another",
                               what, keys[k]);
        }
    }
    return 0;
}

/* The merged rows as (left row, right row) pairs, SIZE_MAX for none: the
 * rows sorted by key (ents, n of them), each group of equal keys giving
 * its left rows x right rows, or its rows of the one side alone. */
static int merge_pairs(const struct tc_sortctx *sc, const struct tc_ent *ents, size_t n,
                       size_t **lrow, size_t **rrow, size_t *nout)
{
    size_t cap = 0;
    *nout = 0;
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && !ent_cmp(sc, &ents[g], &ents[e]))
            e++;
        size_t nl = 0, nr = 0;
        for (size_t i = g; i < e; i++)
            *(ents[i].side ? &nr : &nl) += 1;
        size_t need = (nl && nr) ? nl * nr : nl + nr;
        if (MP_GROW2(*lrow, *rrow, cap, *nout + need, 64))
            return MP_ENOMEM;
        for (size_t i = g; i < e; i++) {
            if (ents[i].side)
                continue;
            if (!nr) {
                (*lrow)[*nout] = ents[i].row;
                (*rrow)[(*nout)++] = SIZE_MAX;
                continue;
            }
            for (size_t j = g; j < e; j++)
                if (ents[j].side) {
                    (*lrow)[*nout] = ents[i].row;
                    (*rrow)[(*nout)++] = ents[j].row;
                }
        }
        if (!nl)
            for (size_t j = g; j < e; j++) {
                (*lrow)[*nout] = SIZE_MAX;
                (*rrow)[(*nout)++] = ents[j].row;
            }
        g = e;
    }
    return 0;
}

/* The key columns of the merged frame: the left's type when every row has
 * a left row (the right's when none has, the left's when none has a right
 * row), else the common type. */
static int merge_key_cols(struct tc_frame *out, const struct tc_frame *L, const struct tc_frame *R,
                          const long *kc, const enum tc_kind *kkind, size_t nk, const size_t *lrow,
                          const size_t *rrow, size_t nout)
{
    bool lmiss = false, lall = nout > 0, rall = nout > 0;
    for (size_t i = 0; i < nout; i++) {
        lmiss = lmiss || lrow[i] == SIZE_MAX;
        lall = lall && lrow[i] == SIZE_MAX;
        rall = rall && rrow[i] == SIZE_MAX;
    }
    int rc = 0;
    for (size_t k = 0; k < nk && !rc; k++) {
        enum tc_kind kk = kkind[k];
        if (!lmiss || rall)
            kk = L->cols[kc[k]].kind;
        else if (lall)
            kk = R->cols[kc[nk + k]].kind;
        if (kk == TC_EMPTY)
            kk = kkind[k];
        rc = frame_add_col(out, L->cols[kc[k]].name, kk);
        for (size_t i = 0; i < nout && !rc; i++) {
            const struct tc_cell *c =
                lrow[i] != SIZE_MAX ? &L->cols[kc[k]].c[lrow[i]] : &R->cols[kc[nk + k]].c[rrow[i]];
            out->cols[k].c[i] = *c;
        }
    }
    return rc;
}

/* The other columns of frame f (side s) in the merged frame, missing
 * cells NA (an int column with any becomes float). */
static int merge_side_cols(struct tc_frame *out, const struct tc_frame *f, int s, const long *kc,
                           size_t nk, const size_t *rows, size_t nout)
{
    int rc = 0;
    for (size_t j = 0; j < f->ncols && !rc; j++) {
        bool key = false;
        for (size_t k = 0; k < nk; k++)
            key = key || (long)j == kc[s * nk + k];
        if (key)
            continue;
        bool missing = false;
        for (size_t i = 0; i < nout; i++)
            missing = missing || rows[i] == SIZE_MAX;
        enum tc_kind kind = f->cols[j].kind;
        if (missing && kind == TC_INT)
            kind = TC_FLOAT;
        rc = frame_add_col(out, f->cols[j].name, kind);
        struct tc_col *oc = &out->cols[out->ncols - 1];
        for (size_t i = 0; i < nout && !rc; i++) {
            if (rows[i] == SIZE_MAX)
                oc->c[i] = (struct tc_cell){.na = true};
            else
                oc->c[i] = f->cols[j].c[rows[i]];
        }
    }
    return rc;
}

/* pd.merge(L, R, on=keys, how="outer") with the key columns first. */
static int outer_merge(struct tc_ctx *x, const struct tc_frame *L, const struct tc_frame *R,
                       const char *const *keys, size_t nk, const char *what, struct tc_frame *out)
{
    memset(out, 0, sizeof(*out));
    long *kc = calloc(2 * (nk ? nk : 1), sizeof(*kc));
    bool *knum = calloc(nk ? nk : 1, sizeof(*knum));
    enum tc_kind *kkind = calloc(nk ? nk : 1, sizeof(*kkind));
    int rc = kc && knum && kkind ? 0 : MP_ENOMEM;
    rc = rc ? rc : merge_keys(x, L, R, keys, nk, what, kc, knum, kkind);
    size_t n = L->nrows + R->nrows;
    struct tc_ent *ents = rc ? NULL : calloc(n ? n : 1, sizeof(*ents));
    struct tc_ent *tmp = rc ? NULL : calloc(n ? n : 1, sizeof(*tmp));
    if (!rc && (!ents || !tmp))
        rc = MP_ENOMEM;
    struct tc_sortctx sc = {{L, R}, {kc, kc + nk}, knum, nk};
    size_t *lrow = NULL, *rrow = NULL, nout = 0;
    if (!rc) {
        for (size_t i = 0; i < L->nrows; i++)
            ents[i] = (struct tc_ent){0, i};
        for (size_t i = 0; i < R->nrows; i++)
            ents[L->nrows + i] = (struct tc_ent){1, i};
        merge_sort(ents, tmp, n, sizeof(*ents), ent_cmp_v, &sc);
        rc = merge_pairs(&sc, ents, n, &lrow, &rrow, &nout);
    }
    out->nrows = nout;
    rc = rc ? rc : merge_key_cols(out, L, R, kc, kkind, nk, lrow, rrow, nout);
    /* other columns: left's, then right's */
    rc = rc ? rc : merge_side_cols(out, L, 0, kc, nk, lrow, nout);
    rc = rc ? rc : merge_side_cols(out, R, 1, kc, nk, rrow, nout);
    free(lrow);
    free(rrow);
    free(ents);
    free(tmp);
    free(kc);
    free(knum);
    free(kkind);
    if (rc)
        frame_fini(out);
    return rc;
}

/* re.match(r".*__.*_diff|.*__.*_pct", col) */
static bool is_diff_col(const char *col)
{
    const char *p = strstr(col, "__");
    if (!p || strchr(col, '\n'))
        return false;
    return strstr(p + 2, "_diff") || strstr(p + 2, "_pct");
}

/* re.search(r"__(.+?)_(diff|pct)$", col): the tag into *tag / *tlen */
static bool diff_tag(const char *col, const char **tag, size_t *tlen)
{
    size_t n = strlen(col);
    size_t suf = 0;
    if (n >= 5 && !strcmp(col + n - 5, "_diff"))
        suf = 5;
    else if (n >= 4 && !strcmp(col + n - 4, "_pct"))
        suf = 4;
    if (!suf)
        return false;
    for (const char *p = strstr(col, "__"); p; p = strstr(p + 1, "__")) {
        const char *t = p + 2, *te = col + n - suf;
        if (te <= t)
            return false;
        if (memchr(t, '\n', (size_t)(te - t)))
            continue;
        *tag = t;
        *tlen = (size_t)(te - t);
        return true;
    }
    return false;
}

static char *arena_printf2(struct mp_arena *ar, const char *a, const char *mid, const char *b,
                           const char *c)
{
    size_t n = strlen(a) + strlen(mid) + strlen(b) + strlen(c) + 1;
    char *s = mp_arena_alloc(ar, n);
    if (s)
        snprintf(s, n, "%s%s%s%s", a, mid, b, c);
    return s;
}

/* build_df_dff: prefix, merge, diff and pct columns, reorder. */
static int build_diff(struct tc_ctx *x, struct tc_frame *dfs, size_t n, const char *const *keys,
                      size_t nk, const char *const *diff_cols, size_t ndiff, const char *what,
                      struct tc_frame *out)
{
    int rc = 0;
    memset(out, 0, sizeof(*out));
    for (size_t r = 0; r < n && !rc; r++)
        for (size_t j = 0; j < dfs[r].ncols && !rc; j++) {
            bool key = false;
            for (size_t k = 0; k < nk; k++)
                key = key || !strcmp(dfs[r].cols[j].name, keys[k]);
            if (key)
                continue;
            char *nm = arena_printf2(x->ar, x->tags[r], "::", dfs[r].cols[j].name, "");
            if (!nm)
                rc = MP_ENOMEM;
            else
                dfs[r].cols[j].name = nm;
        }
    struct tc_frame merged = {0};
    if (!rc && n < 2)
        rc = MP_EINVAL;
    if (!rc) {
        struct tc_frame cur = dfs[0];
        for (size_t r = 1; r < n && !rc; r++) {
            struct tc_frame next;
            rc = outer_merge(x, &cur, &dfs[r], keys, nk, what, &next);
            if (r > 1)
                frame_fini(&cur);
            if (!rc)
                cur = next;
        }
        if (!rc)
            merged = cur;
    }
    /* diff and pct columns */
    for (size_t dc = 0; dc < ndiff && !rc; dc++) {
        char base_name[512];
        snprintf(base_name, sizeof(base_name), "%s::%s", x->tags[0], diff_cols[dc]);
        long bj = frame_col(&merged, base_name);
        if (bj < 0) {
            mp_diag_set_field(x->d, diff_cols[dc]);
            rc = mp_diag_set(x->d, MP_EINVAL, "%s: report '%s' has no column '%s'", what,
                             x->tags[0], diff_cols[dc]);
            break;
        }
        for (size_t r = 1; r < n && !rc; r++) {
            char vname[512];
            snprintf(vname, sizeof(vname), "%s::%s", x->tags[r], diff_cols[dc]);
            long vj = frame_col(&merged, vname);
            if (vj < 0) {
                mp_diag_set_field(x->d, diff_cols[dc]);
                rc = mp_diag_set(x->d, MP_EINVAL, "%s: report '%s' has no column '%s'", what,
                                 x->tags[r], diff_cols[dc]);
                break;
            }
            /* merged.cols is set whenever frame_col found a column */
            // NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
            enum tc_kind bk = merged.cols[bj].kind, vk = merged.cols[vj].kind;
            bool bok = is_num(bk) || bk == TC_EMPTY, vok = is_num(vk) || vk == TC_EMPTY;
            if (!bok || !vok) {
                mp_diag_set_field(x->d, diff_cols[dc]);
                rc = mp_diag_set(x->d, MP_EINVAL, "%s: column '%s' is not numeric", what,
                                 diff_cols[dc]);
                break;
            }
            char *dn = arena_printf2(x->ar, diff_cols[dc], "__", x->tags[r], "_diff");
            char *pn = arena_printf2(x->ar, diff_cols[dc], "__", x->tags[r], "_pct");
            if (!dn || !pn) {
                rc = MP_ENOMEM;
                break;
            }
            rc = frame_add_col(&merged, dn, bk == TC_INT && vk == TC_INT ? TC_INT : TC_FLOAT);
            rc = rc ? rc : frame_add_col(&merged, pn, TC_FLOAT);
            if (rc)
                break;
            struct tc_col *b = &merged.cols[bj], *v = &merged.cols[vj];
            struct tc_col *dcol = &merged.cols[merged.ncols - 2];
            struct tc_col *pcol = &merged.cols[merged.ncols - 1];
            for (size_t i = 0; i < merged.nrows; i++) {
                const struct tc_cell *bc = &b->c[i], *vc = &v->c[i];
                struct tc_cell *o = &dcol->c[i], *p = &pcol->c[i];
                if (bc->na || vc->na) {
                    *o = (struct tc_cell){.na = true};
                    *p = (struct tc_cell){.na = true};
                    continue;
                }
                if (dcol->kind == TC_INT) {
                    o->i = vc->i - bc->i;
                    o->v = (double)o->i;
                } else {
                    o->v = vc->v - bc->v;
                }
                if (bc->v == 0.0 || isnan(bc->v) || isnan(o->v))
                    p->na = true;
                else
                    p->v = 100.0 * (o->v / bc->v);
            }
        }
    }
    /* keys, diff columns, the rest */
    if (!rc) {
        struct tc_col *cols = malloc((merged.ncols ? merged.ncols : 1) * sizeof(*cols));
        if (!cols) {
            rc = MP_ENOMEM;
        } else {
            size_t m = 0;
            for (size_t j = 0; j < nk; j++)
                cols[m++] = merged.cols[j];
            for (size_t j = nk; j < merged.ncols; j++)
                if (is_diff_col(merged.cols[j].name))
                    cols[m++] = merged.cols[j];
            for (size_t j = nk; j < merged.ncols; j++)
                if (!is_diff_col(merged.cols[j].name))
                    cols[m++] = merged.cols[j];
            free(merged.cols);
            merged.cols = cols;
            *out = merged;
            return 0;
        }
    }
    frame_fini(&merged);
    return rc;
}

/* Rows descending by column ctx, missing last (merge_sort keeps equal
 * values in their current order): x before y when present and larger, or
 * y missing. */
static int rows_cmp(const void *a, const void *b, const void *ctx)
{
    const struct tc_col *c = ctx;
    const struct tc_cell *x = &c->c[*(const size_t *)a], *y = &c->c[*(const size_t *)b];
    if (!x->na && (y->na || x->v > y->v))
        return -1;
    return !y->na && (x->na || y->v > x->v) ? 1 : 0;
}

/* A new frame with the rows of f picked by keep (all when NULL), sorted
 * descending by column sort_col when given, and only the columns in
 * colkeep (all when NULL); drop_all_na drops columns missing in every row. */
static int frame_select(struct tc_ctx *x, const struct tc_frame *f, const bool *keep,
                        const char *sort_col, const bool *colkeep, bool drop_all_na,
                        struct tc_frame *out)
{
    memset(out, 0, sizeof(*out));
    size_t *rows = malloc((f->nrows ? f->nrows : 1) * sizeof(*rows));
    size_t *tmp = malloc((f->nrows ? f->nrows : 1) * sizeof(*tmp));
    int rc = rows && tmp ? 0 : MP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < f->nrows && !rc; i++)
        if (!keep || keep[i])
            rows[n++] = i;
    if (!rc && sort_col) {
        long sj = frame_col(f, sort_col);
        if (sj < 0) {
            mp_diag_set_field(x->d, sort_col);
            rc = mp_diag_set(x->d, MP_EINVAL, "no column '%s' to sort by", sort_col);
        } else if (!is_num(f->cols[sj].kind) && f->cols[sj].kind != TC_EMPTY && n) {
            mp_diag_set_field(x->d, sort_col);
            rc = mp_diag_set(x->d, MP_EINVAL, "column '%s' to sort by is not numeric", sort_col);
        } else {
            merge_sort(rows, tmp, n, sizeof(*rows), rows_cmp, &f->cols[sj]);
        }
    }
    out->nrows = n;
    for (size_t j = 0; j < f->ncols && !rc; j++) {
        if (colkeep && !colkeep[j])
            continue;
        if (drop_all_na) {
            bool any = false;
            for (size_t i = 0; i < n && !any; i++)
                any = !f->cols[j].c[rows[i]].na;
            if (!any)
                continue;
        }
        rc = frame_add_col(out, f->cols[j].name, f->cols[j].kind);
        for (size_t i = 0; i < n && !rc; i++)
            out->cols[out->ncols - 1].c[i] = f->cols[j].c[rows[i]];
    }
    free(rows);
    free(tmp);
    if (rc)
        frame_fini(out);
    return rc;
}

/* ---- output ---- */

static int frame_csv(const struct tc_frame *f, struct mp_buf *b)
{
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    int rc = 0;
    for (size_t j = 0; j < f->ncols && !rc; j++)
        rc = mp_csv_str(&csv, f->cols[j].name);
    rc = rc ? rc : mp_csv_end_row(&csv);
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    for (size_t i = 0; i < f->nrows && !rc; i++) {
        for (size_t j = 0; j < f->ncols && !rc; j++) {
            const struct tc_col *c = &f->cols[j];
            const struct tc_cell *x = &c->c[i];
            mp_buf_reset(&cell);
            if (x->na || (c->kind != TC_STR && c->kind != TC_BOOL && isnan(x->v)))
                rc = mp_csv_field(&csv, "", 0);
            else if (c->kind == TC_INT)
                rc = mp_csv_fmt(&csv, "%lld", x->i);
            else if (c->kind == TC_FLOAT)
                rc = tl_pyfloat(&cell, x->v) ? MP_ENOMEM
                                             : mp_csv_field(&csv, mp_buf_cstr(&cell), cell.len);
            else
                rc = mp_csv_str(&csv, x->s);
        }
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    return rc;
}

static int emit(struct tc_ctx *x, const char *name, const struct tc_frame *f)
{
    struct mp_tlcmp_result *r = x->rep;
    char **nn = mp_reallocarray(r->names, r->n + 1, sizeof(*nn));
    if (!nn)
        return MP_ENOMEM;
    r->names = nn;
    struct mp_buf *nc = mp_reallocarray(r->csv, r->n + 1, sizeof(*nc));
    if (!nc)
        return MP_ENOMEM;
    r->csv = nc;
    r->names[r->n] = mp_strdup(name);
    mp_buf_init(&r->csv[r->n], 0);
    if (!r->names[r->n])
        return MP_ENOMEM;
    r->n++;
    return frame_csv(f, &r->csv[r->n - 1]);
}

/* ---- sheet groups ---- */

static int load_all(struct tc_ctx *x, const char *sheet, struct tc_frame *dfs)
{
    int rc = 0;
    size_t r = 0;
    for (; r < x->o->n_reports && !rc; r++)
        rc = x->xl[r] ? load_sheet_xlsx(x, r, sheet, &dfs[r])
                      : load_sheet(x, x->o->reports[r], sheet, &dfs[r]);
    if (rc)
        for (size_t i = 0; i + 1 < r; i++)
            frame_fini(&dfs[i]);
    return rc;
}

static void free_all(struct tc_ctx *x, struct tc_frame *dfs)
{
    for (size_t r = 0; r < x->o->n_reports; r++)
        frame_fini(&dfs[r]);
}

/* split_df_diff: <name>_intersect_<tag>, _only_baseline_<tag>, _only_variant_<tag> */
static int split_diff(struct tc_ctx *x, const char *name, const struct tc_frame *df,
                      const char *diff_col, const char *sort_col)
{
    size_t n = x->o->n_reports;
    char bcol[512], bsort[512];
    snprintf(bcol, sizeof(bcol), "%s::%s", x->tags[0], diff_col);
    snprintf(bsort, sizeof(bsort), "%s::%s", x->tags[0], sort_col);
    long bj = frame_col(df, bcol);
    if (bj < 0)
        return mp_diag_set(x->d, MP_EINVAL, "%s: no column '%s'", name, bcol);
    bool *keep = calloc(df->nrows ? df->nrows : 1, sizeof(*keep));
    bool *ck = calloc(df->ncols ? df->ncols : 1, sizeof(*ck));
    int rc = keep && ck ? 0 : MP_ENOMEM;
    for (size_t t = 1; t < n && !rc; t++) {
        const char *tag = x->tags[t];
        char vcol[512], vsort[512];
        snprintf(vcol, sizeof(vcol), "%s::%s", tag, diff_col);
        snprintf(vsort, sizeof(vsort), "%s::%s", tag, sort_col);
        long vj = frame_col(df, vcol);
        if (vj < 0) {
            rc = mp_diag_set(x->d, MP_EINVAL, "%s: no column '%s'", name, vcol);
            break;
        }
        for (int part = 0; part < 3 && !rc; part++) {
            /* kept tags: both, baseline, variant */
            for (size_t i = 0; i < df->nrows; i++) {
                bool b = !df->cols[bj].c[i].na, v = !df->cols[vj].c[i].na;
                keep[i] = part == 0 ? (b && v) : part == 1 ? (b && !v) : (v && !b);
            }
            for (size_t j = 0; j < df->ncols; j++) {
                const char *cn = df->cols[j].name;
                const char *dtag = NULL;
                size_t dlen = 0;
                bool isd = diff_tag(cn, &dtag, &dlen);
                const char *sep = strstr(cn, "::");
                if (!sep && !isd) {
                    ck[j] = true;
                } else if (sep) {
                    size_t tl = (size_t)(sep - cn);
                    bool kb = part != 2 && strlen(x->tags[0]) == tl && !strncmp(cn, x->tags[0], tl);
                    bool kv = part != 1 && strlen(tag) == tl && !strncmp(cn, tag, tl);
                    ck[j] = kb || kv;
                } else {
                    bool kb =
                        part != 2 && strlen(x->tags[0]) == dlen && !strncmp(dtag, x->tags[0], dlen);
                    bool kv = part != 1 && strlen(tag) == dlen && !strncmp(dtag, tag, dlen);
                    ck[j] = kb || kv;
                }
            }
            struct tc_frame sub;
            rc = frame_select(x, df, keep, part == 2 ? vsort : bsort, ck, true, &sub);
            if (rc)
                break;
            static const char *const part_name[] = {"intersect", "only_baseline", "only_variant"};
            char sname[256];
            snprintf(sname, sizeof(sname), "%s_%s_%s", name, part_name[part], tag);
            rc = emit(x, sname, &sub);
            frame_fini(&sub);
        }
    }
    free(keep);
    free(ck);
    return rc;
}

static int do_gpu_timeline(struct tc_ctx *x)
{
    struct tc_frame *dfs = calloc(x->o->n_reports, sizeof(*dfs));
    if (!dfs)
        return MP_ENOMEM;
    int rc = load_all(x, "gpu_timeline", dfs);
    if (!rc) {
        static const char *const keys[] = {"type"};
        static const char *const diff[] = {"time ms"};
        struct tc_frame out;
        rc = build_diff(x, dfs, x->o->n_reports, keys, 1, diff, 1, "gpu_timeline", &out);
        if (!rc) {
            rc = emit(x, "gpu_timeline", &out);
            frame_fini(&out);
        }
        free_all(x, dfs);
    }
    free(dfs);
    return rc;
}

struct summary_cfg {
    const char *keys[1];
    const char *diff[3];
    size_t ndiff;
    const char *del[6];
    size_t ndel;
    const char *sort;
};

static const struct summary_cfg cfg_ops_summary = {
    {"name"}, {"total_direct_kernel_time_ms", "Count"},
    2,        {"total_direct_kernel_time_sum"},
    1,        "total_direct_kernel_time_ms"};
static const struct summary_cfg cfg_kernel_summary = {
    {"Kernel name"},
    {"Kernel duration (µs)_sum", "Kernel duration (µs)_mean", "Kernel duration (µs)_count"},
    3,
    {"Kernel duration (µs)_min", "Kernel duration (µs)_max", "Parent op category"},
    3,
    "Kernel duration (µs)_sum"};
static const struct summary_cfg cfg_kernel_legacy = {
    {"name"},
    {"Total Kernel Time (ms)", "Mean Kernel Time (µs)", "Count"},
    3,
    {"Total Kernel Time (µs)", "Median Kernel Time (µs)", "Std Kernel Time (µs)",
     "Min Kernel Time (µs)", "Max Kernel Time (µs)", "Category"},
    6,
    "Total Kernel Time (ms)"};

static int do_summary(struct tc_ctx *x, const char *sheet, const struct summary_cfg *cfg,
                      char **names0, size_t nnames0)
{
    if (!has_sheet(names0, nnames0, sheet))
        return mp_diag_set(x->d, MP_EINVAL, "%s sheet not found in %s", sheet, x->o->reports[0]);
    struct tc_frame *dfs = calloc(x->o->n_reports, sizeof(*dfs));
    if (!dfs)
        return MP_ENOMEM;
    int rc = load_all(x, sheet, dfs);
    if (rc) {
        free(dfs);
        return rc;
    }
    if (!strcmp(sheet, "kernel_summary") && frame_col(&dfs[0], cfg->keys[0]) < 0)
        cfg = &cfg_kernel_legacy;
    for (size_t r = 0; r < x->o->n_reports; r++) {
        for (size_t k = 0; k < cfg->ndel; k++)
            frame_drop(&dfs[r], cfg->del[k]);
        if (r > 0)
            frame_drop(&dfs[r], "Cumulative Percentage (%)");
    }
    struct tc_frame diff, sorted;
    rc = build_diff(x, dfs, x->o->n_reports, cfg->keys, 1, cfg->diff, cfg->ndiff, sheet, &diff);
    if (!rc) {
        char sc[512];
        snprintf(sc, sizeof(sc), "%s::%s", x->tags[0], cfg->sort);
        rc = frame_select(x, &diff, NULL, sc, NULL, false, &sorted);
        if (!rc) {
            rc = emit(x, sheet, &sorted);
            frame_fini(&sorted);
        }
        frame_fini(&diff);
    }
    free_all(x, dfs);
    free(dfs);
    return rc;
}

static int do_ops_all(struct tc_ctx *x, char **names0, size_t nnames0)
{
    static const char *const sheets[] = {"ops_all", "ops_unique_args", "unified_perf_summary"};
    static const char *const keys[] = {"name", "Input type", "Input Dims", "Input Strides",
                                       "Concrete Inputs"};
    static const char *const diff_ops[] = {"total_direct_kernel_time_sum",
                                           "total_direct_kernel_time_mean", "operation_count"};
    static const char *const diff_uni[] = {"Kernel Time (µs)_sum", "Kernel Time (µs)_mean",
                                           "operation_count"};
    int rc = 0;
    for (size_t s = 0; s < 3 && !rc; s++) {
        if (!has_sheet(names0, nnames0, sheets[s]))
            continue;
        const char *const *diff = s == 2 ? diff_uni : diff_ops;
        struct tc_frame *dfs = calloc(x->o->n_reports, sizeof(*dfs));
        if (!dfs)
            return MP_ENOMEM;
        rc = load_all(x, sheets[s], dfs);
        if (!rc) {
            struct tc_frame df;
            rc = build_diff(x, dfs, x->o->n_reports, keys, 5, diff, 3, sheets[s], &df);
            if (!rc) {
                rc = split_diff(x, sheets[s], &df, diff[0], diff[0]);
                frame_fini(&df);
            }
            free_all(x, dfs);
        }
        free(dfs);
    }
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int do_roofline(struct tc_ctx *x, char **names0, size_t nnames0)
{
    static const char *const sheets[][2] = {
        {"GEMM", "GEMM"},
        {"SDPA_fwd", "SDPA_fwd"},
        {"SDPA_bwd", "SDPA_bwd"},
        {"CONV_fwd", "CONV_fwd"},
        {"CONV_bwd", "CONV_bwd"},
        {"UnaryElementwise", "un_eltwise"},
        {"BinaryElementwise", "bin_eltwise"},
    };
    static const char *const del[] = {
        "GFLOPS_first",     "Data Moved (MB)_first", "FLOPS/Byte_first",     "Input type_first",
        "Input Dims_first", "Input Strides_first",   "Concrete Inputs_first"};
    static const char *const diff[] = {"Kernel Time (µs)_sum", "Kernel Time (µs)_mean",
                                       "name_count", "TFLOPS/s_mean", "TB/s_mean"};
    int rc = 0;
    for (size_t s = 0; s < sizeof(sheets) / sizeof(sheets[0]) && !rc; s++) {
        if (!has_sheet(names0, nnames0, sheets[s][0]))
            continue;
        size_t n = x->o->n_reports;
        struct tc_frame *dfs = calloc(n, sizeof(*dfs));
        if (!dfs)
            return MP_ENOMEM;
        rc = load_all(x, sheets[s][0], dfs);
        if (rc) {
            free(dfs);
            break;
        }
        for (size_t r = 1; r < n; r++)
            for (size_t k = 0; k < sizeof(del) / sizeof(del[0]); k++)
                frame_drop(&dfs[r], del[k]);
        /* keys: name + the param: columns every report has, sorted */
        const char **keys = calloc(dfs[0].ncols + 1, sizeof(*keys));
        size_t nk = 0;
        if (!keys)
            rc = MP_ENOMEM;
        else
            keys[nk++] = "name";
        for (size_t j = 0; j < dfs[0].ncols && !rc; j++) {
            const char *cn = dfs[0].cols[j].name;
            if (strncmp(cn, "param:", 6) != 0)
                continue;
            bool all = true;
            for (size_t r = 1; r < n && all; r++)
                all = frame_col(&dfs[r], cn) >= 0;
            if (all)
                keys[nk++] = cn;
        }
        if (!rc && nk > 2)
            qsort(keys + 1, nk - 1, sizeof(*keys), cmp_str);
        bool empty = false;
        for (size_t r = 0; r < n; r++)
            empty = empty || !dfs[r].nrows || !dfs[r].ncols;
        if (!rc && empty) {
            if (x->o->on_note) {
                char line[256];
                snprintf(line, sizeof(line),
                         "Skipping roofline sheet '%s' because one of the reports is empty.",
                         sheets[s][0]);
                x->o->on_note(line, x->o->note_user);
            }
        } else if (!rc) {
            struct tc_frame df;
            rc = build_diff(x, dfs, n, keys, nk, diff, 5, sheets[s][0], &df);
            if (!rc) {
                rc = split_diff(x, sheets[s][1], &df, diff[0], "Kernel Time (µs)_sum");
                frame_fini(&df);
            }
        }
        free(keys);
        free_all(x, dfs);
        free(dfs);
    }
    return rc;
}

/* ---- entry points ---- */

unsigned mp_tlcmp_sheet_bits(const char *w)
{
    static const struct {
        const char *name;
        unsigned bits;
    } t[] = {{"gpu_timeline", MP_TLCMP_GPU_TIMELINE},
             {"ops_summary", MP_TLCMP_OPS_SUMMARY},
             {"kernel_summary", MP_TLCMP_KERNEL_SUMMARY},
             {"ops_all", MP_TLCMP_OPS_ALL},
             {"roofline", MP_TLCMP_ROOFLINE},
             {"all", MP_TLCMP_ALL}};

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!strcmp(w, t[i].name))
            return t[i].bits;
    return 0;
}

void mp_tlcmp_default_tag(const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    /* splitext: the last dot that is not part of the leading dots */
    const char *p = base;
    while (*p == '.')
        p++;
    const char *dot = strrchr(p, '.');
    if (dot)
        n = (size_t)(dot - base);
    snprintf(buf, len, "%.*s", (int)n, base);
}

int mp_tlcmp_build(const struct mp_tlcmp_opts *o, struct mp_tlcmp_result **out, struct mp_diag *d)
{
    *out = NULL;
    if (!o || o->n_reports < 2)
        return mp_diag_set(d, MP_EINVAL, "need at least two reports");
    for (size_t r = 0; r < o->n_reports; r++)
        if (!mp_fs_exists(o->reports[r])) {
            mp_diag_set_file(d, o->reports[r]);
            return mp_diag_set(d, MP_ENOTFOUND, "no such report");
        }
    struct tc_ctx x = {.d = d, .o = o};
    x.ar = mp_arena_new(1 << 20);
    x.tags = calloc(o->n_reports, sizeof(*x.tags));
    x.rep = calloc(1, sizeof(*x.rep));
    x.xl = calloc(o->n_reports, sizeof(struct tl_xlsx *));
    int rc = x.ar && x.tags && x.rep && x.xl ? 0 : MP_ENOMEM;
    /* a report that is not a directory is an xlsx workbook */
    for (size_t r = 0; r < o->n_reports && !rc; r++)
        if (!mp_fs_is_dir(o->reports[r]))
            rc = tl_xlsx_open(o->reports[r], &x.xl[r], d);
    for (size_t r = 0; r < o->n_reports && !rc; r++) {
        if (o->names) {
            x.tags[r] = o->names[r];
        } else {
            char tag[1024];
            mp_tlcmp_default_tag(o->reports[r], tag, sizeof(tag));
            x.tags[r] = mp_arena_strndup(x.ar, tag, strlen(tag));
            rc = x.tags[r] ? 0 : MP_ENOMEM;
        }
    }
    for (size_t r = 0; r < o->n_reports && !rc; r++)
        for (size_t q = 0; q < r && !rc; q++)
            if (!strcmp(x.tags[r], x.tags[q]))
                rc = mp_diag_set(d, MP_EINVAL,
                                 "Tags must be unique - use --names to "
                                 "disambiguate.");
    unsigned sh = o->sheets ? o->sheets : MP_TLCMP_ALL;
    char **names0 = NULL;
    size_t nn = 0;
    if (!rc && sh & MP_TLCMP_GPU_TIMELINE)
        rc = do_gpu_timeline(&x);
    if (!rc) {
        rc = x.xl[0] ? xlsx_sheet_names(x.xl[0], &names0, &nn)
                     : sheet_names(o->reports[0], &names0, &nn);
        if (rc == MP_EIO) {
            mp_diag_set_file(d, o->reports[0]);
            mp_diag_set(d, rc, "cannot list the report directory");
        }
    }
    if (!rc && sh & MP_TLCMP_OPS_SUMMARY)
        rc = do_summary(&x, "ops_summary", &cfg_ops_summary, names0, nn);
    if (!rc && sh & MP_TLCMP_KERNEL_SUMMARY)
        rc = do_summary(&x, "kernel_summary", &cfg_kernel_summary, names0, nn);
    if (!rc && sh & MP_TLCMP_OPS_ALL)
        rc = do_ops_all(&x, names0, nn);
    if (!rc && sh & MP_TLCMP_ROOFLINE)
        rc = do_roofline(&x, names0, nn);
    for (size_t i = 0; i < nn; i++)
        free(names0[i]);
    free(names0);
    free(x.tags);
    for (size_t r = 0; x.xl && r < o->n_reports; r++)
        tl_xlsx_close(x.xl[r]);
    free(x.xl);
    mp_arena_free(x.ar);
    if (rc) {
        mp_tlcmp_free(x.rep);
        return rc;
    }
    *out = x.rep;
    return 0;
}

void mp_tlcmp_free(struct mp_tlcmp_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->names[i]);
        mp_buf_fini(&r->csv[i]);
    }
    free(r->names);
    free(r->csv);
    free(r);
}

int mp_tlcmp_write_csvs(const struct mp_tlcmp_result *r, const char *dir, struct mp_diag *d)
{
    int rc = mp_fs_mkdirs(dir, d);
    for (size_t i = 0; i < r->n && !rc; i++) {
        size_t l = strlen(dir) + strlen(r->names[i]) + 6;
        char *path = malloc(l);
        if (!path)
            return MP_ENOMEM;
        snprintf(path, l, "%s/%s.csv", dir, r->names[i]);
        rc = mp_fs_write_atomic(path, r->csv[i].data ? r->csv[i].data : "", r->csv[i].len, d);
        free(path);
    }
    return rc;
}

int mp_tlcmp_write_xlsx(const struct mp_tlcmp_result *r, const char *path, struct mp_diag *d)
{
    /* a report of the sheets (names cut to its 63 characters: the workbook
     * keeps 31), sharing the CSV text */
    struct mp_report rep;
    memset(&rep, 0, sizeof(rep));
    rep.sheets = calloc(r->n ? r->n : 1, sizeof(*rep.sheets));
    if (!rep.sheets)
        return MP_ENOMEM;
    rep.n = r->n;
    for (size_t i = 0; i < r->n; i++) {
        snprintf(rep.sheets[i].name, sizeof(rep.sheets[i].name), "%.*s",
                 (int)sizeof(rep.sheets[i].name) - 1, r->names[i]);
        rep.sheets[i].csv = r->csv[i];
    }
    int rc = mp_report_write_xlsx(&rep, path, d);
    free(rep.sheets);
    return rc;
}
