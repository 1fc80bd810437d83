/* Helpers shared by the TraceLens report sheets: numpy-exact statistics,
 * process/thread names from metadata events, and the kernel-details summary
 * cells (kernel_details_summary / trunc_kernel_details). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/roofline.h>
#include <magpie/stats.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

/* ---- sheets ---- */

/* Hands the last sheet of r to r->on_sheet once (sheets are built one after
 * the other: a sheet is final when the next begins, or when its builder ends). */
void tl_sheets_final(struct mp_report *r)
{
    if (r->on_sheet && r->n > r->n_final) {
        r->n_final = r->n;
        r->on_sheet(&r->sheets[r->n - 1], r->on_sheet_user);
    }
}

struct mp_buf *tl_new_sheet(struct mp_report *r, const char *name)
{
    tl_sheets_final(r); /* a new sheet: the last one is complete */
    struct mp_report_sheet *ns = mp_reallocarray(r->sheets, r->n + 1, sizeof(*ns));
    if (!ns)
        return NULL;
    r->sheets = ns;
    struct mp_report_sheet *s = &ns[r->n++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    mp_buf_init(&s->csv, 0);
    return &s->csv;
}

int tl_csv_sheet(struct mp_report *r, const char *name, struct mp_csv *csv, ...)
{
    struct mp_buf *b = tl_new_sheet(r, name);
    if (!b)
        return MP_ENOMEM;
    mp_csv_init(csv, b, "\n");
    va_list ap;
    va_start(ap, csv);
    int rc = 0;
    for (const char *h = va_arg(ap, const char *); h && !rc; h = va_arg(ap, const char *))
        rc = mp_buf_puts(b, h);
    va_end(ap);
    return rc ? rc : mp_buf_putc(b, '\n');
}

/* ---- column tables ---- */

int tl_cols_header(struct mp_buf *b, const struct tl_col *cols, size_t n, unsigned when)
{
    int rc = 0;
    bool first = true;
    for (size_t c = 0; c < n && !rc; c++) {
        if (!tl_col_on(&cols[c], when))
            continue;
        rc = first ? 0 : mp_buf_putc(b, ',');
        rc = rc ? rc : mp_buf_puts(b, cols[c].head);
        first = false;
    }
    return rc ? rc : mp_buf_putc(b, '\n');
}

int tl_cols_cells(struct tl_emit *e, const struct tl_col *cols, size_t n, unsigned when)
{
    int rc = 0;
    for (size_t c = 0; c < n && !rc; c++)
        if (cols[c].cell && tl_col_on(&cols[c], when))
            rc = cols[c].cell(e, &cols[c]);
    return rc;
}

int tl_csv_key_cells(struct mp_csv *csv, struct mp_buf *key)
{
    const char *k = mp_buf_cstr(key), *end = k + key->len;
    for (;;) {
        const char *sep = memchr(k, '\x1f', (size_t)(end - k));
        size_t len = sep ? (size_t)(sep - k) : (size_t)(end - k);
        int rc = mp_csv_field(csv, k, len);
        if (rc || !sep)
            return rc;
        k = sep + 1;
    }
}

int tl_stat_cell(struct mp_csv *csv, struct mp_buf *cell, const struct tl_stats *st, size_t cnt,
                 size_t field)
{
    double v = *(const double *)((const char *)st + field);
    bool present = field == offsetof(struct tl_stats, sum)   ? true
                   : field == offsetof(struct tl_stats, std) ? st->has_std
                                                             : cnt > 0;
    return tl_csv_float(csv, cell, v, present);
}

/* ---- groups of rows ---- */

int tl_groups_init(struct tl_groups *gs, size_t nrows, bool ov)
{
    gs->g = calloc(nrows ? nrows : 1, sizeof(*gs->g));
    gs->keys = mp_intern_new();
    gs->bkeys = ov ? mp_intern_new() : NULL;
    return !gs->g || !gs->keys || (ov && !gs->bkeys) ? MP_ENOMEM : 0;
}

void tl_groups_fini(struct tl_groups *gs)
{
    for (size_t i = 0; gs->g && i < gs->ng; i++) {
        mp_buf_fini(&gs->g[i].key);
        free(gs->g[i].m);
    }
    free(gs->g);
    free(gs->gid);
    mp_intern_free(gs->keys);
    mp_intern_free(gs->bkeys);
}

int tl_groups_add(struct tl_groups *gs, const struct mp_buf *key, int32_t bid, size_t row,
                  double kt, struct tl_group **out, bool *created)
{
    int32_t id = mp_intern_add(gs->keys, key->data, key->len);
    if (id < 0 || tl_gid_reserve(&gs->gid, &gs->gcap, id))
        return MP_ENOMEM;
    *created = gs->gid[id] < 0;
    if (*created) {
        gs->g[gs->ng].base = bid;
        gs->gid[id] = (int32_t)gs->ng++;
    }
    *out = &gs->g[gs->gid[id]];
    return tl_groups_add_to(gs, (size_t)gs->gid[id], row, kt);
}

int tl_groups_add_to(struct tl_groups *gs, size_t g, size_t row, double kt)
{
    struct tl_group *G = &gs->g[g];
    if (MP_GROW(G->m, G->cap, G->n + 1, 8))
        return MP_ENOMEM;
    G->m[G->n++] = row;
    G->kt_sum += kt;
    return 0;
}

int tl_groups_base_order(struct tl_groups *gs)
{
    struct tl_group *g = gs->g;
    size_t nb = (size_t)mp_intern_count(gs->bkeys) + 1;
    double *kt = calloc(nb, sizeof(double));
    int32_t *uid = malloc(nb * sizeof(int32_t));
    if (!kt || !uid) {
        free(kt);
        free(uid);
        return MP_ENOMEM;
    }
    for (size_t q = 0; q < nb; q++)
        uid[q] = INT32_MAX;
    for (size_t q = 0; q < gs->ng; q++) {
        kt[g[q].base] += g[q].kt_sum;
        if (g[q].uid < uid[g[q].base])
            uid[g[q].base] = g[q].uid;
    }
    for (size_t q = 0; q < gs->ng; q++) {
        g[q].base_kt = kt[g[q].base];
        g[q].base_uid = uid[g[q].base];
    }
    free(kt);
    free(uid);
    return 0;
}

/* The double at offset off of row r of rows[] (stride bytes each). */
static double row_num(const void *rows, size_t stride, size_t r, size_t off)
{
    return *(const double *)((const char *)rows + r * stride + off);
}

int tl_group_stats_over(const struct tl_group *g, const void *rows, size_t stride, size_t off,
                        struct tl_stats *st, size_t *cnt)
{
    double *v = malloc((g->n ? g->n : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        double x = row_num(rows, stride, g->m[i], off);
        if (!isnan(x))
            v[k++] = x;
    }
    int rc = tl_group_stats(v, k, g->ids_sorted && k == g->n, st);
    *cnt = k;
    free(v);
    return rc;
}

double tl_group_first(const struct tl_group *g, const void *rows, size_t stride, size_t off)
{
    for (size_t i = 0; i < g->n; i++) {
        double x = row_num(rows, stride, g->m[i], off);
        if (!isnan(x))
            return x;
    }
    return NAN;
}

size_t tl_group_template(const struct tl_group *g, const void *rows, tl_kernels_of *kof)
{
    size_t tr = g->m[0], nk;
    kof(rows, tr, &nk);
    for (size_t i = 0; i < g->n && nk == 0; i++) {
        tr = g->m[i];
        kof(rows, tr, &nk);
    }
    return tr;
}

int tl_group_kernel_details(const struct mp_trace_tree *t, const struct tl_group *g,
                            const void *rows, tl_kernels_of *kof, size_t tr,
                            const char *const *stacks, size_t *order, struct mp_csv *csv,
                            struct mp_buf *cell)
{
    const struct mp_trace_store *s = t->s;
    size_t nk, nrows = 0;
    const int32_t *tk = kof(rows, tr, &nk);
    if (nk == 0) {
        int rc = mp_csv_str(csv, "[]");
        return rc ? rc : mp_csv_str(csv, "");
    }
    double **kd = calloc(nk, sizeof(double *));
    int rc = kd ? 0 : MP_ENOMEM;
    for (size_t q = 0; q < nk && !rc; q++)
        if (!(kd[q] = malloc((g->n ? g->n : 1) * sizeof(double))))
            rc = MP_ENOMEM;
    for (size_t i = 0; i < g->n && !rc; i++) {
        size_t n;
        const int32_t *k = kof(rows, g->m[i], &n);
        if (n != nk)
            continue;
        for (size_t q = 0; q < nk; q++)
            kd[q][nrows] = (s->flags[k[q]] & MP_EV_DUR) ? s->dur[k[q]] : 0.0;
        nrows++;
    }
    if (!rc)
        rc = tl_kernel_details_cells_cs(t, tk, nk, kd, nrows, stacks, order, csv, cell);
    for (size_t q = 0; kd && q < nk; q++)
        free(kd[q]);
    free(kd);
    return rc;
}

/* ---- small statistics ---- */
/* mean, median (midpoint), std (ddof given), min, max, sum; sums and means
 * as numpy computes them */
static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* True when sorting x by mp_stats_cmp_double leaves one sequence of bits
 * whatever the algorithm: no NaN (equal to every value) and no -0.0 (equal
 * to +0.0). Selection then finds the bits qsort would put at a position. */
static bool one_sorted_order(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i]) || (x[i] == 0 && signbit(x[i])))
            return false;
    return true;
}

/* Rearranges c[0..n) (k < n, no NaN) so that c[k] holds the value a sort
 * puts there, with nothing greater before it and nothing smaller after it:
 * three-way partitions around a median of three (durations repeat a lot),
 * short ranges and pathological inputs sorted outright. */
static void select_kth(double *c, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* c[k] is in [lo, hi); c[lo..hi) sits between its neighbours */
    for (int rounds = 0; hi - lo > 16; rounds++) {
        if (rounds == 64) {
            qsort(c + lo, hi - lo, sizeof(double), mp_stats_cmp_double);
            return;
        }
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid] < c[lo])
            swap_d(&c[mid], &c[lo]);
        if (c[hi - 1] < c[lo])
            swap_d(&c[hi - 1], &c[lo]);
        if (c[hi - 1] < c[mid])
            swap_d(&c[hi - 1], &c[mid]);
        double p = c[mid];
        size_t lt = lo, i = lo, gt = hi; /* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
        while (i < gt) {
            if (c[i] < p)
                swap_d(&c[lt++], &c[i++]);
            else if (c[i] > p)
                swap_d(&c[i], &c[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return;
    }
    for (size_t a = lo + 1; a < hi; a++) /* insertion sort of the short rest */
        for (size_t b = a; b > lo && c[b - 1] > c[b]; b--)
            swap_d(&c[b - 1], &c[b]);
}

/* min, max and median (the midpoint for even n) of x[0..n), n > 0, as
 * numpy gives them from a sorted copy; c is scratch of n doubles. */
static void order_stats(const double *x, size_t n, double *c, struct tl_stats *s)
{
    memcpy(c, x, n * sizeof(double));
    if (!one_sorted_order(x, n)) {
        qsort(c, n, sizeof(double), mp_stats_cmp_double);
        s->min = c[0];
        s->max = c[n - 1];
        s->median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
        return;
    }
    double lo = x[0], hi = x[0];
    for (size_t i = 1; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    s->min = lo;
    s->max = hi;
    select_kth(c, n, n / 2);
    if (n % 2) {
        s->median = c[n / 2];
        return;
    }
    double below = c[0]; /* the greatest of c[0 .. n/2), what a sort puts at n/2 - 1 */
    for (size_t i = 1; i < n / 2; i++)
        below = c[i] > below ? c[i] : below;
    s->median = (below + c[n / 2]) / 2.0;
}

/* Scratch for order_stats: buf when n fits, else malloc'd (NULL when out
 * of memory). */
#define TL_STATS_STACK 256

static double *stats_scratch(double *buf, size_t n)
{
    return n <= TL_STATS_STACK ? buf : malloc(n * sizeof(double));
}

int tl_stats(const double *x, size_t n, int ddof, struct tl_stats *s)
{
    memset(s, 0, sizeof(*s));
    if (n == 0)
        return 0;
    double buf[TL_STATS_STACK];
    double *c = stats_scratch(buf, n);
    if (!c)
        return MP_ENOMEM;
    order_stats(x, n, c, s);
    double sum = mp_sum_pairwise(x, n);
    s->sum = sum;
    s->mean = sum / (double)n;
    if (n > (size_t)ddof) {
        for (size_t i = 0; i < n; i++)
            c[i] = (x[i] - s->mean) * (x[i] - s->mean);
        s->std = sqrt(mp_sum_pairwise(c, n) / (double)(n - (size_t)ddof));
        s->has_std = true;
    }
    if (c != buf)
        free(c);
    return 0;
}

int tl_group_stats(const double *x, size_t n, bool ids_sorted, struct tl_stats *s)
{
    memset(s, 0, sizeof(*s));
    if (n == 0)
        return 0;
    double buf[TL_STATS_STACK];
    double *c = stats_scratch(buf, n);
    if (!c)
        return MP_ENOMEM;
    order_stats(x, n, c, s); /* median, min, max as numpy */
    if (c != buf)
        free(c);
    s->sum = mp_sum_pandas_group(x, n, ids_sorted);
    s->mean = s->sum / (double)n;
    s->has_std = n > 1;
    if (s->has_std)
        s->std = mp_std_pandas_group(x, n, 1);
    return 0;
}

int tl_csv_float(struct mp_csv *csv, struct mp_buf *cell, double v, bool present)
{
    mp_buf_reset(cell);
    int rc = present && !isnan(v) ? tl_pyfloat(cell, v) : 0;
    return rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
}

/* process / thread names from the trace's metadata ("M") events */

int tl_meta_build(const struct mp_trace_store *s, struct tl_meta *m)
{
    memset(m, 0, sizeof(*m));
    m->keys = mp_intern_new();
    if (!m->keys)
        return MP_ENOMEM;
    struct mp_buf k, v;
    mp_buf_init(&k, 0);
    mp_buf_init(&v, 0);
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        if (s->ph[i] != 'M' || s->name[i] < 0 || !s->args[i])
            continue;
        const char *field = mp_intern_str(s->strings, s->name[i]);
        const char *arg =
            strcmp(field, "process_labels") == 0                                        ? "labels"
            : (strcmp(field, "process_name") == 0 || strcmp(field, "thread_name") == 0) ? "name"
                                                                                        : NULL;
        if (!arg)
            continue;
        struct mp_strview obj = {s->args[i], s->args_len[i]}, raw;
        if (mp_trace_json_find(obj, arg, &raw) != 0 || mp_trace_json_string(raw, &v) != 0)
            continue;
        mp_buf_reset(&k);
        rc = mp_buf_printf(&k, "%s\x1f%s\x1f%s",
                           s->pid[i] >= 0 ? mp_intern_str(s->strings, s->pid[i]) : "",
                           s->tid[i] >= 0 ? mp_intern_str(s->strings, s->tid[i]) : "", field);
        int32_t id = rc ? -1 : mp_intern_add(m->keys, k.data, k.len);
        if (id < 0) {
            rc = MP_ENOMEM;
            break;
        }
        size_t old = m->cap;
        if (MP_GROW(m->vals, m->cap, (size_t)id + 1, 64)) {
            rc = MP_ENOMEM;
            break;
        }
        memset(m->vals + old, 0, (m->cap - old) * sizeof(char *));
        free(m->vals[id]);
        m->vals[id] = mp_strdup(v.data ? v.data : "");
    }
    mp_buf_fini(&k);
    mp_buf_fini(&v);
    return rc;
}

const char *tl_meta_get(const struct tl_meta *m, const char *pid, const char *tid,
                        const char *field)
{
    /* the key as tl_meta_build writes it, built without snprintf: this runs
     * three times per row of the ops, perf and unified sheets */
    char key[512];
    size_t np = strlen(pid), nt = strlen(tid), nf = strlen(field), n = np + nt + nf + 2;
    if (n >= sizeof(key))
        return "Unknown";
    memcpy(key, pid, np + 1); /* each with its NUL, then overwritten by the separator */
    key[np] = '\x1f';
    memcpy(key + np + 1, tid, nt + 1);
    key[np + 1 + nt] = '\x1f';
    memcpy(key + np + nt + 2, field, nf + 1);
    int32_t id = mp_intern_find(m->keys, key, n);
    return id >= 0 && (size_t)id < m->cap && m->vals[id] ? m->vals[id] : "Unknown";
}

void tl_meta_fini(struct tl_meta *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->vals[i]);
    free(m->vals);
    mp_intern_free(m->keys);
}

void tl_meta_names_init(struct tl_meta_names *c, const struct tl_meta *m)
{
    memset(c, 0, sizeof(*c));
    c->m = m;
    mp_i64map_init(&c->at);
    c->last_key = -1;
}

const char *const *tl_meta_names_of(struct tl_meta_names *c, const struct mp_trace_store *s,
                                    int32_t uid)
{
    int32_t p = s->pid[uid], t = s->tid[uid];
    int64_t key = (int64_t)((uint64_t)(uint32_t)(p + 1) << 32 | (uint32_t)(t + 1));
    if (key == c->last_key)
        return c->v[c->last];
    const int64_t *at = mp_i64map_get(&c->at, key);
    if (!at) {
        const char *pid = p >= 0 ? mp_intern_str(s->strings, p) : "";
        const char *tid = t >= 0 ? mp_intern_str(s->strings, t) : "";
        if (MP_GROW(c->v, c->cap, c->n + 1, 8) || mp_i64map_put(&c->at, key, (int64_t)c->n))
            return NULL;
        c->v[c->n][0] = tl_meta_get(c->m, pid, "0", "process_name");
        c->v[c->n][1] = tl_meta_get(c->m, pid, "0", "process_labels");
        c->v[c->n][2] = tl_meta_get(c->m, pid, tid, "thread_name");
        c->n++;
        at = mp_i64map_get(&c->at, key);
    }
    c->last_key = key;
    c->last = (size_t)*at;
    return c->v[c->last];
}

void tl_meta_names_fini(struct tl_meta_names *c)
{
    mp_i64map_fini(&c->at);
    free(c->v);
}

struct kpos {
    const char *name;
    const char *stack; /* Python list repr, or NULL */
    size_t pos;        /* index in the template */
    bool has_stream;
    int64_t stream;
    struct tl_stats st;
    size_t count;
};

static int cmp_kpos(const void *a, const void *b)
{
    const struct kpos *x = a, *y = b;
    if (x->st.sum != y->st.sum)
        return x->st.sum < y->st.sum ? -1 : 1;
    return strcmp(x->name, y->name);
}

int tl_kernel_stream(const struct mp_trace_store *s, int32_t k, int64_t *out)
{
    if (!(s->flags[k] & MP_EV_STREAM))
        return -1;
    *out = s->stream[k];
    return 0;
}

int tl_kernel_details_cells(const struct mp_trace_tree *t, const int32_t *tmpl, size_t nk,
                            double *const *kdur, size_t nrows, struct mp_csv *csv,
                            struct mp_buf *cell)
{
    return tl_kernel_details_cells_cs(t, tmpl, nk, kdur, nrows, NULL, NULL, csv, cell);
}

size_t tl_utf8_prefix(const char *s, size_t len, size_t max)
{
    size_t chars = 0;
    for (size_t j = 0; j < len; j++) {
        if (((unsigned char)s[j] & 0xC0) != 0x80) {
            if (chars == max)
                return j;
            chars++;
        }
    }
    return len;
}

size_t tl_strip_digit_suffixes(const char *s, size_t n, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '_' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
            i++;
            while (i < n && s[i] >= '0' && s[i] <= '9')
                i++;
            continue;
        }
        out[w++] = s[i++];
    }
    out[w] = '\0';
    return w;
}

/* One entry of a trunc_kernel_details list, ", " first unless it is the
 * first: {'name': <the name's first 64 characters (code points), then "..."
 * when cut>, 'stream': <n or None>, 'mean_duration_us': <round(mean, 2)>}. */
int tl_trunc_detail(struct mp_buf *cell, bool first, const char *name, bool has_stream,
                    long long stream, double mean)
{
    int rc = mp_buf_puts(cell, first ? "{'name': " : ", {'name': ");
    if (rc)
        return rc;
    size_t len = strlen(name), cut = tl_utf8_prefix(name, len, 64);
    if (cut < len) {
        char *tmp = malloc(cut + 4);
        if (!tmp)
            return MP_ENOMEM;
        memcpy(tmp, name, cut);
        memcpy(tmp + cut, "...", 4);
        rc = tl_pystr_repr(cell, tmp, cut + 3);
        free(tmp);
    } else {
        rc = tl_pystr_repr(cell, name, len);
    }
    rc = rc ? rc : mp_buf_puts(cell, ", 'stream': ");
    rc = rc ? rc : (has_stream ? mp_buf_printf(cell, "%lld", stream) : mp_buf_puts(cell, "None"));
    /* round() of a numpy float64: rint(x * 100) / 100, not Python's
     * correctly rounded decimal (8.895 -> 8.9 here, 8.89 in Python) */
    rc = rc ? rc : mp_buf_puts(cell, ", 'mean_duration_us': ");
    rc = rc ? rc : tl_pyfloat(cell, rint(mean * 100.0) / 100.0);
    return rc ? rc : mp_buf_putc(cell, '}');
}

int tl_kernel_details_cells_cs(const struct mp_trace_tree *t, const int32_t *tmpl, size_t nk,
                               double *const *kdur, size_t nrows, const char *const *stacks,
                               size_t *order, struct mp_csv *csv, struct mp_buf *cell)
{
    struct kpos *p = calloc(nk ? nk : 1, sizeof(*p));
    if (!p)
        return MP_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < nk && !rc; i++) {
        p[i].name = mp_trace_tree_name(t, tmpl[i]);
        p[i].stack = stacks ? stacks[i] : NULL;
        p[i].pos = i;
        p[i].has_stream = tl_kernel_stream(t->s, tmpl[i], &p[i].stream) == 0;
        p[i].count = nrows;
        rc = tl_stats(kdur[i], nrows, 0, &p[i].st);
    }
    if (!rc)
        qsort(p, nk, sizeof(*p), cmp_kpos);
    for (size_t i = 0; order && i < nk; i++)
        order[i] = p[i].pos;
    /* kernel_details_summary */
    mp_buf_reset(cell);
    rc = rc ? rc : mp_buf_putc(cell, '[');
    for (size_t i = 0; i < nk && !rc; i++) {
        if (i)
            rc = mp_buf_puts(cell, ", ");
        rc = rc ? rc : mp_buf_puts(cell, "{'name': ");
        rc = rc ? rc : tl_pystr_repr(cell, p[i].name, strlen(p[i].name));
        rc = rc ? rc : mp_buf_puts(cell, ", 'stream': ");
        rc = rc ? rc
                : (p[i].has_stream ? mp_buf_printf(cell, "%lld", (long long)p[i].stream)
                                   : mp_buf_puts(cell, "None"));
        if (p[i].stack) {
            rc = rc ? rc : mp_buf_puts(cell, ", 'call_stack': ");
            rc = rc ? rc : mp_buf_puts(cell, p[i].stack);
        }
        rc = rc ? rc : mp_buf_printf(cell, ", 'count': %zu, 'total_duration_us': ", p[i].count);
        rc = rc ? rc : tl_pyfloat(cell, p[i].st.sum);
        rc = rc ? rc : tl_duration_stats_repr(cell, &p[i].st);
        rc = rc ? rc : mp_buf_putc(cell, '}');
    }
    rc = rc ? rc : mp_buf_putc(cell, ']');
    rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
    /* trunc_kernel_details */
    mp_buf_reset(cell);
    if (nk > 0) {
        rc = rc ? rc : mp_buf_putc(cell, '[');
        for (size_t i = 0; i < nk && !rc; i++) {
            rc = tl_trunc_detail(cell, i == 0, p[i].name, p[i].has_stream, p[i].stream,
                                 p[i].st.mean);
        }
        rc = rc ? rc : mp_buf_putc(cell, ']');
    }
    rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
    free(p);
    return rc;
}

int tl_cmp_ts_idx(const void *a, const void *b)
{
    const struct tl_ts_idx *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

const char *tl_op_category(struct tl_catmemo *m, const struct mp_trace_tree *t, int32_t op,
                           int32_t fk)
{
    const struct mp_trace_store *s = t->s;
    int64_t key = (int64_t)((uint64_t)(uint32_t)(s->name[op] + 1) << 32 |
                            (uint32_t)(fk >= 0 ? s->name[fk] + 1 : 0));
    const int64_t *v = mp_i64map_get(&m->at, key);
    if (v)
        return m->cats[*v];
    const char *cat =
        mp_roofline_category(mp_trace_tree_name(t, op), fk >= 0 ? mp_trace_tree_name(t, fk) : NULL);
    size_t k = 0;
    while (k < m->n && m->cats[k] != cat)
        k++;
    /* out of memory only loses the memo */
    if (k == m->n && MP_GROW(m->cats, m->cap, m->n + 1, 16))
        return cat;
    if (k == m->n)
        m->cats[m->n++] = cat;
    (void)mp_i64map_put(&m->at, key, (int64_t)k);
    return cat;
}

void tl_catmemo_fini(struct tl_catmemo *m)
{
    mp_i64map_fini(&m->at);
    free(m->cats);
}

/* Whether a stable sort by ts of o gives tl_cmp_ts_idx's order: no NaN, no
 * -0.0 (equal to +0.0 there, below it by key) and indexes ascending. */
static bool radix_ok(const struct tl_ts_idx *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(o[i].ts) || (o[i].ts == 0 && signbit(o[i].ts)) || (i && o[i].idx <= o[i - 1].idx))
            return false;
    return true;
}

_Static_assert(sizeof(struct tl_ts_idx) == 16 && offsetof(struct tl_ts_idx, ts) == 0,
               "mp_sort_rec16 sorts 16-byte records keyed at their start");

void tl_sort_ts_idx(struct tl_ts_idx *o, size_t n)
{
    if (n > 256 && radix_ok(o, n) && mp_sort_rec16(o, n, MP_SORT_F64) == 0)
        return;
    bool nan = n > 16;
    for (size_t i = 0; i < n && !nan; i++)
        nan = isnan(o[i].ts);
    if (nan) {
        qsort(o, n, sizeof(*o), tl_cmp_ts_idx);
        return;
    }
    for (size_t a = 1; a < n; a++) {
        struct tl_ts_idx x = o[a];
        size_t b = a;
        for (; b > 0 && (o[b - 1].ts > x.ts || (o[b - 1].ts == x.ts && o[b - 1].idx > x.idx)); b--)
            o[b] = o[b - 1];
        o[b] = x;
    }
}

/* GPU events of the subtrees of roots[0..nroots) in DFS order, then stably
 * sorted by ts. */
static int subtree_kernels(const struct mp_trace_tree *t, const int32_t *roots, size_t nroots,
                           int32_t **out, size_t *n)
{
    int32_t *buf = NULL;
    size_t bn = 0, cap = 0;
    for (size_t r = 0; r < nroots; r++) {
        long got = mp_trace_tree_gpu_events(t, roots[r], &buf, &bn, &cap);
        if (got < 0) {
            free(buf);
            return (int)got;
        }
    }
    struct tl_ts_idx *o = malloc((bn ? bn : 1) * sizeof(*o));
    if (!o) {
        free(buf);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < bn; i++)
        o[i] = (struct tl_ts_idx){t->s->ts[buf[i]], (int32_t)i}; /* DFS position breaks ties */
    tl_sort_ts_idx(o, bn);
    int32_t *sorted = malloc((bn ? bn : 1) * sizeof(int32_t));
    if (!sorted) {
        free(o);
        free(buf);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < bn; i++)
        sorted[i] = buf[o[i].idx];
    free(o);
    free(buf);
    *out = sorted;
    *n = bn;
    return 0;
}

/* The kernels a row is timed over: the op's subtree (forward), or the
 * subtrees of the backward nodes linked to the op or its descendants. */
int tl_row_kernels(const struct mp_trace_tree *t, int32_t uid, bool bwd, int32_t **out, size_t *n)
{
    if (!bwd)
        return subtree_kernels(t, &uid, 1, out, n);
    int32_t *roots = NULL;
    size_t nr = 0, cap = 0;
    long got = mp_trace_tree_subtree_bwd(t, uid, &roots, &nr, &cap);
    int rc = got < 0 ? (int)got : subtree_kernels(t, roots, nr, out, n);
    free(roots);
    return rc;
}

char *tl_json_cell(const char *p, size_t n, bool *is_num, double *numv)
{
    *is_num = false;
    if (n == 0 || (n == 4 && memcmp(p, "null", 4) == 0))
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc;
    if (p[0] == '"') {
        rc = mp_trace_json_string((struct mp_strview){p, n}, &b);
    } else if (p[0] == '[' || p[0] == '{') {
        rc = tl_json_to_pyrepr(&b, p, p + n);
    } else if (p[0] == 't' || p[0] == 'f') {
        rc = mp_buf_puts(&b, p[0] == 't' ? "True" : "False");
    } else {
        char tmp[64];
        size_t k = n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1;
        memcpy(tmp, p, k);
        tmp[k] = '\0';
        *numv = strtod(tmp, NULL);
        *is_num = true;
        rc = mp_buf_append(&b, p, n);
    }
    char *out = rc ? NULL : mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return out;
}

int tl_dtype_bytes(const char *dtype)
{
    static const struct {
        const char *n;
        int b;
    } t[] = {{"Float", 4}, {"Int", 4},    {"Long", 8}, {"BFloat16", 2}, {"Bool", 1},
             {"Byte", 1},  {"Double", 8}, {"Half", 2}, {"Short", 2}};

    for (size_t i = 0; dtype && i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(dtype, t[i].n) == 0)
            return t[i].b;
    return 0;
}

int tl_model_op(const struct mp_trace_tree *t, const char *const *annot, int32_t uid, bool bwd,
                struct mp_roofline_memo *memo, int32_t **k, size_t *nk, double *kt,
                struct mp_roofline_result *pr)
{
    int rc = tl_row_kernels(t, uid, bwd, k, nk);
    if (rc)
        return rc;
    const char **names = malloc((*nk ? *nk : 1) * sizeof(char *));
    if (!names) {
        free(*k);
        *k = NULL;
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < *nk; i++)
        names[i] = mp_trace_tree_name(t, (*k)[i]);
    *kt = mp_trace_tree_busy(t, *k, *nk);
    struct mp_roofline_op op = {.name = mp_trace_tree_name(t, uid),
                                .args = t->s->args[uid],
                                .args_len = t->s->args_len[uid],
                                .annotation = annot ? annot[uid] : NULL,
                                .kernel_names = names,
                                .n_kernels = *nk};
    rc = mp_roofline_model_memo(memo, &op, pr);
    free(names);
    if (rc) {
        free(*k);
        *k = NULL;
    }
    return rc;
}

int tl_cmp_cells(char *const *ca, const bool *na, const double *va, char *const *cb, const bool *nb,
                 const double *vb, int n)
{
    for (int f = 0; f < n; f++) {
        if (na[f] && nb[f]) {
            if (va[f] != vb[f])
                return va[f] < vb[f] ? -1 : 1;
        } else {
            int c = strcmp(ca[f], cb[f]);
            if (c)
                return c;
        }
    }
    return 0;
}

// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
int tl_gid_reserve(int32_t **gid, size_t *cap, int32_t id)
{
    size_t old = *cap;
    if (MP_GROW(*gid, *cap, (size_t)id + 1, 256))
        return MP_ENOMEM;
    for (size_t q = old; q < *cap; q++)
        (*gid)[q] = -1;
    return 0;
}

int tl_pylist_repr(struct mp_buf *b, const char *const *v, size_t n)
{
    int rc = mp_buf_putc(b, '[');
    for (size_t i = 0; i < n && !rc; i++) {
        if (i)
            rc = mp_buf_puts(b, ", ");
        rc = rc ? rc : tl_pystr_repr(b, v[i], strlen(v[i]));
    }
    return rc ? rc : mp_buf_putc(b, ']');
}

/* Attention ops whose perf model reads the step annotation around them
 * (TraceLens's apply_annotation name filters; the plain report uses only the
 * first). */
static const char *const annot_ops[] = {
    "vllm::unified_attention_with_output",
    "aiter::mha_varlen_fwd",
    "pseudo_mla_decode_fwd",
    "pseudo_mla_prefill_fwd",
    "vllm::gdn_attention_core",
    "aiter::fmha_v3_varlen_fwd",
    "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
    "sglang_profiler::attention_paged_attention_ragged",
    "aiter::mha_batch_prefill",
    "aiter::pa_decode_gluon",
    "aiter::v4_attention_with_output",
    "pseudo_v4_paged_decode_swa",
    "pseudo_v4_paged_decode_csa",
    "pseudo_v4_paged_decode_hca",
};

struct ann {
    double ts, end;
    int32_t uid;
};

static int cmp_ann(const void *a, const void *b)
{
    const struct ann *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->uid < y->uid ? -1 : x->uid > y->uid; /* stable, as Python's sort */
}

int tl_apply_annotation(const struct mp_trace_tree *t, bool inference, const char ***out)
{
    const struct mp_trace_store *s = t->s;
    *out = NULL;
    size_t nf = inference ? sizeof(annot_ops) / sizeof(annot_ops[0]) : 1;
    int32_t nn = mp_intern_count(s->strings);
    uint8_t *match = calloc((size_t)nn + 1, 1);
    if (!match)
        return MP_ENOMEM;
    bool any = false;
    for (int32_t id = 0; id < nn; id++) {
        const char *nm = mp_intern_str(s->strings, id);
        for (size_t f = 0; f < nf && !match[id]; f++)
            match[id] = strncmp(nm, annot_ops[f], strlen(annot_ops[f])) == 0;
        any |= match[id];
    }
    if (!any) {
        free(match);
        return 0;
    }
    /* user annotations sorted by ts; a prefix maximum of their ends finds
     * the first one that can enclose an op without scanning them all */
    struct ann *a = malloc(sizeof(*a) * (s->n ? s->n : 1));
    const char **ann = calloc(s->n ? s->n : 1, sizeof(char *));
    double *maxend = malloc(sizeof(double) * (s->n ? s->n : 1));
    if (!a || !ann || !maxend) {
        free(match), free(a), free(ann), free(maxend);
        return MP_ENOMEM;
    }
    size_t na = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->cat[i] < 0 || !strstr(mp_intern_str(s->strings, s->cat[i]), "user_annotation"))
            continue;
        a[na].ts = (s->flags[i] & MP_EV_TS) ? s->ts[i] : 0;
        a[na].end = a[na].ts + ((s->flags[i] & MP_EV_DUR) ? s->dur[i] : 0);
        a[na].uid = (int32_t)i;
        na++;
    }
    qsort(a, na, sizeof(*a), cmp_ann);
    for (size_t k = 0; k < na; k++)
        maxend[k] = k && maxend[k - 1] > a[k].end ? maxend[k - 1] : a[k].end;
    for (size_t i = 0; i < s->n; i++) {
        if (s->name[i] < 0 || !match[s->name[i]] || mp_kind_is_gpu(t->kind[i]))
            continue;
        double ts = s->ts[i], end = s->ts[i] + s->dur[i];
        size_t lo = 0, hi = na;
        while (lo < hi) { /* first k with maxend[k] > end */
            size_t mid = lo + (hi - lo) / 2;
            if (maxend[mid] > end)
                hi = mid;
            else
                lo = mid + 1;
        }
        for (size_t k = lo; k < na && a[k].ts <= ts; k++) {
            if (end < a[k].end) {
                ann[i] = mp_trace_tree_name(t, a[k].uid);
                break;
            }
        }
    }
    free(match);
    free(a);
    free(maxend);
    *out = ann;
    return 0;
}

int tl_duration_stats_repr(struct mp_buf *cell, const struct tl_stats *st)
{
    static const char *const keys[] = {"mean_duration_us", "median_duration_us",
                                       "std_dev_duration_us", "min_duration_us", "max_duration_us"};
    double vals[] = {st->mean, st->median, st->std, st->min, st->max};
    int rc = 0;
    for (int k = 0; k < 5 && !rc; k++) {
        rc = mp_buf_printf(cell, ", '%s': ", keys[k]);
        rc = rc ? rc : tl_pyfloat(cell, vals[k]);
    }
    return rc;
}
