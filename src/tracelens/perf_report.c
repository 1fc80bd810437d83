/* TraceLens-compatible report assembly (TraceLens_generate_perf_report_pytorch):
 * loads the trace into an event store, builds the tree, and renders each
 * sheet as CSV text the way pandas' to_csv writes TraceLens's DataFrames.
 *
 * Sorting follows TraceLens exactly where it is defined and the goldens
 * where pandas leaves ties open: groups are first ordered by their keys
 * (ascending, missing values last) and then stably by the sort column.
 *
 * Once the tree is final the sheets only read it, so two groups of sheets
 * are computed at the same time: the ops sheets and the per-category perf
 * sheets on a second thread (its own report, shape-key cache and perf-model
 * memo), unified_perf_summary, kernel_summary, the short-kernel sheets and
 * coll_analysis on the calling thread; the sheets are then put in
 * TraceLens's order, the order of the sheet table (SHEETS: name, enabling
 * option, thread side, builder), so the output does not depend on the threads
 * (MAGPIE_THREADS=1 or opts.serial: all on the calling thread). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/roofline.h>
#include <magpie/stats.h>
#include <magpie/trace_capture.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

void mp_report_opts_defaults(struct mp_report_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->kernel_summary = true;
    o->short_kernel_study = true;
    o->short_kernel_thresh = 10.0;
    o->short_kernel_bins = 100;
    o->micro_idle_thresh_us = -1;
    /* MAGPIE_THREADS=1: one thread (for one-core comparisons and machines) */
    const char *th = getenv("MAGPIE_THREADS");
    o->serial = th && strcmp(th, "1") == 0;
}

struct ctx {
    const struct mp_report_opts *o;
    struct mp_trace_store *s;
    struct mp_trace_tree *t;
    struct mp_report *r;
    double total_time_ms;
    /* per event: first direct kernel (by ts) of a launcher, -1 */
    int32_t *first_kernel;
    /* categories, lazily: (name id + 1) << 32 | (first kernel's name id + 1, 0
     * when none) -> index in cats (the category is a function of the two
     * names; there are few) */
    struct mp_i64map category;
    const char **cats;
    size_t ncats, capcats;
    struct tl_argkeys ak;          /* shape columns per op, computed once */
    struct mp_roofline_memo *memo; /* perf model results, shared by the sheets */
};

static const char *ename(const struct ctx *c, int32_t i)
{
    return mp_trace_tree_name(c->t, i);
}

/* ---- gpu_timeline ---- */
static int timeline_rows(struct mp_buf *b, const struct mp_gpu_timeline *g, bool micro,
                         const char *suffix)
{
    struct {
        const char *name;
        double us;
    } rows[] = {
        {"computation_time", g->computation},
        {"exposed_comm_time", g->exposed_comm},
        {"exposed_memcpy_time", g->exposed_memcpy},
        {"busy_time", g->busy},
        {"idle_time", g->idle},
        {"macro_idle_time", g->macro_idle},
        {"total_time", g->total},
        {"total_comm_time", g->total_comm},
        {"total_memcpy_time", g->total_memcpy},
    };

    int rc = 0;
    if (micro) { /* --micro_idle_thresh_us: idle_time becomes micro + macro */
        rows[4].name = "micro_idle_time";
        rows[4].us = g->micro_idle;
    }
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc; i++) {
        if (i == 5 && !micro)
            continue;
        double ms = rows[i].us / 1e3;
        rc = mp_buf_printf(b, "%s,", rows[i].name);
        rc = rc ? rc : tl_pyfloat(b, ms);
        rc = rc ? rc : mp_buf_putc(b, ',');
        /* pandas: time (us) / total_time (us) * 100, bit for bit */
        rc = rc ? rc : tl_pyfloat(b, g->total > 0 ? rows[i].us / g->total * 100 : NAN);
        rc = rc ? rc : mp_buf_puts(b, suffix);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    return rc;
}

/* gpu_timeline; under --detect_recompute one block per is_recompute value
 * (False, then True), each over its own GPU events, empty blocks left out */
static int sheet_timeline(struct ctx *c)
{
    struct mp_buf *b = tl_new_sheet(c->r, "gpu_timeline");
    if (!b)
        return MP_ENOMEM;
    int thr = c->o->micro_idle_thresh_us;
    bool micro = thr >= 0;
    if (!c->t->recompute) { /* the report's whole-trace timeline, computed once */
        int rc = mp_buf_puts(b, "type,time ms,percent\n");
        return rc ? rc : timeline_rows(b, &c->r->timeline, micro, "");
    }
    int rc = mp_buf_puts(b, "type,time ms,percent,is_recompute\n");
    for (int sel = 0; sel < 2 && !rc; sel++) {
        struct mp_gpu_timeline g;
        size_t n;
        rc = mp_report_gpu_timeline_sel(c->t, c->o->include_unlinked, sel, thr, &g, &n);
        if (!rc && n > 0)
            rc = timeline_rows(b, &g, micro, sel ? ",True" : ",False");
    }
    return rc;
}

/* ---- category of a cpu_op (TraceLens's categorize_torch_op on the event) ---- */
static const char *category_of(struct ctx *c, int32_t op)
{
    int32_t fk = c->first_kernel[op];
    const struct mp_trace_store *s = c->t->s;
    int64_t key = (int64_t)((uint64_t)(uint32_t)(s->name[op] + 1) << 32 |
                            (uint32_t)(fk >= 0 ? s->name[fk] + 1 : 0));
    int64_t *v = mp_i64map_get(&c->category, key);
    if (v)
        return c->cats[*v];
    const char *cat = mp_roofline_category(ename(c, op), fk >= 0 ? ename(c, fk) : NULL);
    size_t k = 0;
    while (k < c->ncats && c->cats[k] != cat)
        k++;
    if (MP_GROW(c->cats, c->capcats, k == c->ncats && c->ncats + 1, 32))
        return cat; /* out of memory only loses the memo */
    if (k == c->ncats)
        c->cats[c->ncats++] = cat;
    (void)mp_i64map_put(&c->category, key, (int64_t)k);
    return cat;
}

/* First direct (non-communication) kernel of each launcher, by kernel ts. */
static int index_launchers(struct ctx *c)
{
    const struct mp_trace_tree *t = c->t;
    c->first_kernel = malloc((t->n ? t->n : 1) * sizeof(int32_t));
    if (!c->first_kernel)
        return MP_ENOMEM;
    for (size_t i = 0; i < t->n; i++)
        c->first_kernel[i] = -1;
    for (size_t i = 0; i < t->n; i++) {
        int32_t l = t->launcher[i];
        if (l < 0 || t->comm[i])
            continue;
        int32_t f = c->first_kernel[l];
        if (f < 0 || t->s->ts[i] < t->s->ts[f])
            c->first_kernel[l] = (int32_t)i;
    }
    return 0;
}

/* ---- kernel rows (TraceLens get_df_kernels) ---- */
struct krow {
    int32_t uid;
    int32_t launcher; /* parent runtime event, -1 */
    int32_t cpu_op;   /* nearest cpu_op ancestor, -1 */
    bool has_stream;
    int64_t stream;
    double dur;
};

static int kernel_rows(struct ctx *c, struct krow **out, size_t *n_out, bool *any_cpu_op)
{
    const struct mp_trace_tree *t = c->t;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->kind[i] == MP_K_KERNEL;
    struct krow *v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0;
    *any_cpu_op = false;
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] != MP_K_KERNEL)
            continue;
        struct krow *r = &v[k++];
        r->uid = (int32_t)i;
        r->launcher = t->parent[i];
        r->cpu_op = -1;
        for (int32_t p = r->launcher; p >= 0; p = t->parent[p]) {
            if (t->kind[p] == MP_K_CPU_OP) {
                r->cpu_op = p;
                *any_cpu_op = true;
                break;
            }
        }
        r->dur = (t->s->flags[i] & MP_EV_DUR) ? t->s->dur[i] : NAN;
        r->has_stream = tl_kernel_stream(t->s, (int32_t)i, &r->stream) == 0;
    }
    *out = v;
    *n_out = k;
    return 0;
}

/* ---- kernel_summary ---- */
struct kgroup {
    const char *cat;    /* NULL = NaN */
    const char *parent; /* NULL = NaN */
    const char *name;
    int32_t rank[3]; /* of cat, parent and name among the sheet's strings (kgroup_rank) */
    bool has_stream;
    int64_t stream;
    double sum, min, max;
    uint64_t count;
    size_t order;
};

static int cmp_str_ptr(const void *x, const void *y)
{
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    return strcmp(a, b);
}

/* Gives every key string of the rows its rank in strcmp order (equal text,
 * equal rank; a missing value, NULL, ranks after all), so the rows sort on
 * integers: the names are interned, so there are few distinct pointers. */
static int kgroup_rank(struct kgroup *g, size_t n)
{
    struct mp_i64map seen;
    mp_i64map_init(&seen);
    const char **v = NULL;
    size_t nv = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *k[3] = {g[i].cat, g[i].parent, g[i].name};
        for (int j = 0; j < 3 && !rc; j++) {
            if (!k[j] || mp_i64map_get(&seen, (int64_t)(uintptr_t)k[j]))
                continue;
            rc = MP_GROW(v, cap, nv + 1, 256);
            rc = rc ? rc : mp_i64map_put(&seen, (int64_t)(uintptr_t)k[j], 0);
            if (!rc)
                v[nv++] = k[j];
        }
    }
    if (!rc && nv)
        qsort(v, nv, sizeof(*v), cmp_str_ptr);
    int32_t r = 0;
    for (size_t i = 0; i < nv && !rc; i++) {
        if (i && strcmp(v[i - 1], v[i]) != 0)
            r++;
        rc = mp_i64map_put(&seen, (int64_t)(uintptr_t)v[i], r);
    }
    for (size_t i = 0; i < n && !rc; i++) {
        const char *k[3] = {g[i].cat, g[i].parent, g[i].name};
        for (int j = 0; j < 3; j++)
            g[i].rank[j] =
                k[j] ? (int32_t)*mp_i64map_get(&seen, (int64_t)(uintptr_t)k[j]) : INT32_MAX;
    }
    free(v);
    mp_i64map_fini(&seen);
    return rc;
}

/* by cat, parent, name (their ranks: kgroup_rank), then stream */
static int cmp_kgroup_key(const void *x, const void *y)
{
    const struct kgroup *a = x, *b = y;
    int r = 0;
    for (int j = 0; j < 3 && !r; j++)
        r = (a->rank[j] > b->rank[j]) - (a->rank[j] < b->rank[j]);
    if (!r && a->has_stream != b->has_stream)
        r = a->has_stream ? -1 : 1;
    if (!r && a->has_stream && a->stream != b->stream)
        r = a->stream < b->stream ? -1 : 1;
    return r;
}

/* Folds the rows g[0..*n) of each key into one (the key's first row with
 * the group's min, max, count and sum as pandas sums its durations in row
 * order), the groups in key order; *n becomes their number. The rows are
 * grouped through a hash of their key, not sorted: a group keeps its rows in
 * row order either way. dur is scratch of *n doubles. */
static int kgroup_fold(struct kgroup *g, size_t *n, double *dur, bool ids_sorted)
{
    size_t nr = *n;
    struct mp_intern *keys = mp_intern_new();
    int32_t *gid = malloc((nr ? nr : 1) * sizeof(int32_t));
    size_t *first = malloc((nr ? nr : 1) * sizeof(size_t)), *at = calloc(nr + 1, sizeof(size_t));
    size_t *rows = calloc(nr ? nr : 1, sizeof(size_t)); /* all written before read */
    struct kgroup *rep = malloc((nr ? nr : 1) * sizeof(*rep));
    int rc = keys && gid && first && at && rows && rep ? 0 : MP_ENOMEM;
    size_t ng = 0;
    for (size_t i = 0; i < nr && !rc; i++) { /* cmp_kgroup_key's fields, packed */
        char kb[sizeof(g->rank) + 1 + sizeof(int64_t)];
        int64_t stream = g[i].has_stream ? g[i].stream : 0;
        memcpy(kb, g[i].rank, sizeof(g->rank));
        kb[sizeof(g->rank)] = (char)g[i].has_stream;
        memcpy(kb + sizeof(g->rank) + 1, &stream, sizeof(stream));
        int32_t id = mp_intern_add(keys, kb, sizeof(kb));
        if (id < 0) {
            rc = MP_ENOMEM;
            break;
        }
        if ((size_t)id == ng)
            first[ng++] = i;
        gid[i] = id;
        at[id + 1]++;
    }
    for (size_t q = 0; q < ng && !rc; q++) {
        at[q + 1] += at[q];
        rep[q] = g[first[q]];
        rep[q].order = q; /* the group */
    }
    for (size_t i = 0; i < nr && !rc; i++) /* each group's rows, in row order */
        rows[at[gid[i]]++] = i;
    if (!rc) /* the keys differ: any sort gives one order */
        qsort(rep, ng, sizeof(*rep), cmp_kgroup_key);
    for (size_t q = 0; q < ng && !rc; q++) {
        size_t id = rep[q].order, end = at[id], beg = id ? at[id - 1] : 0;
        struct kgroup *a = &rep[q];
        for (size_t j = beg; j < end; j++) {
            const struct kgroup *r = &g[rows[j]];
            if (r->min < a->min)
                a->min = r->min;
            if (r->max > a->max)
                a->max = r->max;
            dur[j - beg] = r->sum;
        }
        a->count = end - beg;
        a->sum = mp_sum_pandas_group(dur, end - beg, ids_sorted);
    }
    if (!rc) {
        memcpy(g, rep, ng * sizeof(*g));
        *n = ng;
    }
    mp_intern_free(keys);
    free(gid);
    free(first);
    free(at);
    free(rows);
    free(rep);
    return rc;
}

static int cmp_kgroup_sum(const void *x, const void *y)
{
    const struct kgroup *a = x, *b = y;
    if (a->sum != b->sum)
        return a->sum > b->sum ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

static const char *launcher_category(const char *name)
{
    char low[256];
    size_t n = strlen(name);
    if (n >= sizeof(low))
        n = sizeof(low) - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    low[n] = '\0';
    if (strstr(low, "cudagraph") || strstr(low, "graphlaunch"))
        return "graph";
    return n ? "runtime" : NULL;
}

static int sheet_kernel_summary(struct ctx *c, const struct krow *rows, size_t n, bool any_cpu_op)
{
    struct kgroup *g = calloc(n ? n : 1, sizeof(*g));
    double *dur = calloc(n ? n : 1, sizeof(double)); /* calloc: GCC -O2 sees no write for n = 0 */
    if (!g || !dur) {
        free(g);
        free(dur);
        return MP_ENOMEM;
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        const struct krow *r = &rows[i];
        struct kgroup key = {0};
        if (r->cpu_op >= 0) {
            key.cat = category_of(c, r->cpu_op);
            key.parent = ename(c, r->cpu_op);
        } else if (r->launcher >= 0) {
            key.cat = launcher_category(ename(c, r->launcher));
            key.parent = any_cpu_op ? ename(c, r->launcher) : NULL;
        }
        key.name = ename(c, r->uid);
        key.has_stream = r->has_stream;
        key.stream = r->stream;
        dur[i] = r->dur;
        /* linear probe over existing groups is too slow for big traces: keep
         * groups sorted later; here a simple hash on (name ptr, parent ptr) */
        g[ng] = key;
        g[ng].sum = r->dur;
        g[ng].min = r->dur;
        g[ng].max = r->dur;
        g[ng].count = 1;
        g[ng].order = i;
        ng++;
    }
    /* Series.sum: numpy's pairwise sum in row order */
    double total_kernels = mp_sum_pairwise(dur, n);
    if (kgroup_rank(g, ng) != 0) {
        free(g);
        free(dur);
        return MP_ENOMEM;
    }
    /* groupby(sort=True) sums as pandas does: np.add.reduceat when the rows
     * already come in key order, else Kahan in row order */
    bool ids_sorted = true;
    for (size_t i = 1; i < ng && ids_sorted; i++)
        ids_sorted = cmp_kgroup_key(&g[i - 1], &g[i]) <= 0;
    if (kgroup_fold(g, &ng, dur, ids_sorted) != 0) {
        free(g);
        free(dur);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < ng; i++)
        g[i].order = i; /* key order */
    qsort(g, ng, sizeof(*g), cmp_kgroup_sum);
    struct mp_buf *b = tl_new_sheet(c->r, "kernel_summary");
    int rc = b ? 0 : MP_ENOMEM;
    struct mp_csv csv;
    if (b) {
        mp_csv_init(&csv, b, "\n");
        rc = mp_csv_str(&csv, "Parent op category");
        if (any_cpu_op && !rc)
            rc = mp_csv_str(&csv, "Parent cpu_op");
        static const char *const cols[] = {
            "Kernel name",
            "Kernel stream",
            "Kernel duration (µs)_sum",
            "Kernel duration (µs)_count",
            "Kernel duration (µs)_mean",
            "Kernel duration (µs)_min",
            "Kernel duration (µs)_max",
            "Percent of kernels time (%)",
            "Percent of total time (%)",
        };
        for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]) && !rc; i++)
            rc = mp_csv_str(&csv, cols[i]);
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    double total_us = c->total_time_ms * 1e3;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    for (size_t i = 0; i < ng && !rc; i++) {
        const struct kgroup *k = &g[i];
        rc = mp_csv_str(&csv, k->cat ? k->cat : "");
        if (any_cpu_op && !rc)
            rc = mp_csv_str(&csv, k->parent ? k->parent : "");
        rc = rc ? rc : mp_csv_str(&csv, k->name);
        if (!rc)
            rc = k->has_stream ? mp_csv_fmt(&csv, "%lld", (long long)k->stream)
                               : mp_csv_str(&csv, "");
        double vals[] = {k->sum,
                         (double)k->count,
                         k->sum / (double)k->count,
                         k->min,
                         k->max,
                         total_kernels > 0 ? k->sum / total_kernels * 100 : NAN,
                         total_us > 0 ? k->sum / total_us * 100 : NAN};
        for (size_t j = 0; j < 7 && !rc; j++) {
            mp_buf_reset(&cell);
            if (j == 1)
                rc = mp_buf_printf(&cell, "%llu", (unsigned long long)k->count);
            else if (isnan(vals[j]))
                rc = 0;
            else
                rc = tl_pyfloat(&cell, vals[j]);
            rc = rc ? rc : mp_csv_field(&csv, mp_buf_cstr(&cell), cell.len);
        }
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    free(g);
    free(dur);
    return rc;
}

/* ---- short kernels ---- */
struct sgroup {
    int32_t cpu_op; /* representative for the key cells */
    struct mp_buf key;
    double sum;
    uint64_t count;
    size_t order;
};

static int cmp_sgroup(const void *x, const void *y)
{
    const struct sgroup *a = x, *b = y;
    /* sum desc, then count, mean, percent ascending (mean and percent follow
     * from sum and count), then first appearance (stable lexsort) */
    if (a->sum != b->sum)
        return a->sum > b->sum ? -1 : 1;
    if (a->count != b->count)
        return a->count < b->count ? -1 : 1;
    double ma = a->sum / (double)a->count, mb = b->sum / (double)b->count;
    if (ma != mb)
        return ma < mb ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

/* Each group's sum as pandas' groupby gives it: its durations in row order
 * (kg[i] the group of kept row i, kv[i] its duration) summed by
 * np.add.reduceat when ids_sorted, else with Kahan's compensation. */
static int short_group_sums(struct sgroup *g, size_t ng, const int32_t *kg, const double *kv,
                            size_t nk, bool ids_sorted)
{
    size_t *at = calloc(ng + 1, sizeof(size_t));
    double *v = malloc((nk ? nk : 1) * sizeof(double));
    if (!at || !v) {
        free(at);
        free(v);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < ng; i++)
        at[i + 1] = at[i] + g[i].count;
    for (size_t i = 0; i < nk; i++) /* stable: rows of a group stay in order */
        v[at[kg[i]]++] = kv[i];
    for (size_t i = 0, off = 0; i < ng; off += g[i].count, i++)
        g[i].sum = mp_sum_pandas_group(v + off, g[i].count, ids_sorted);
    free(at);
    free(v);
    return 0;
}

/* short_kernel_histogram: numpy.histogram with `bins` equal bins over
 * [min, max] of the durations under thr; *ns = their count. A non-finite
 * duration (a "dur" like -1e999 reads as -inf; with an infinite threshold
 * also +inf) is in no bin and sets no edge: numpy would refuse the whole
 * histogram ("autodetected range ... is not finite"). Finite data whose
 * span overflows a double is binned at half scale (edges exact, doubled
 * back); any other data is binned exactly as before. */
static int short_histogram(struct ctx *c, const struct krow *rows, size_t n, double thr, int bins,
                           size_t *ns)
{
    double lo = INFINITY, hi = -INFINITY;
    size_t nfin = 0;
    *ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].dur < thr) {
            (*ns)++;
            if (!isfinite(rows[i].dur))
                continue;
            nfin++;
            if (rows[i].dur < lo)
                lo = rows[i].dur;
            if (rows[i].dur > hi)
                hi = rows[i].dur;
        }
    }
    struct mp_buf *b = tl_new_sheet(c->r, "short_kernel_histogram");
    if (!b)
        return MP_ENOMEM;
    int rc = mp_buf_puts(b, "bin_start,bin_end,count\n");
    if (nfin == 0 || rc)
        return rc;
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    /* 1, or 0.5 when hi - lo is not a double: lo, hi and x are scaled by
     * it for the arithmetic and the edges scaled back */
    const double sc = isfinite(hi - lo) ? 1.0 : 0.5;
    const double slo = lo * sc, shi = hi * sc;
    double *edges = malloc(((size_t)bins + 1) * sizeof(double));
    uint64_t *cnt = calloc((size_t)bins, sizeof(uint64_t));
    if (!edges || !cnt) {
        free(edges);
        free(cnt);
        return MP_ENOMEM;
    }
    double step = (shi - slo) / bins;
    for (int i = 0; i < bins; i++)
        edges[i] = ((double)i * step + slo) / sc;
    edges[bins] = hi;
    double norm = bins / (shi - slo);
    for (size_t i = 0; i < n; i++) {
        double x = rows[i].dur;
        if (!(x < thr) || !isfinite(x))
            continue;
        /* in [0, bins] for finite data; compared, never cast, out of it */
        double t = (x * sc - slo) * norm;
        long k = t >= bins ? bins - 1 : t > 0 ? (long)t : 0;
        if (k > 0 && x < edges[k])
            k--;
        else if (k + 1 < bins && x >= edges[k + 1])
            k++;
        cnt[k]++;
    }
    for (int i = 0; i < bins && !rc; i++) {
        rc = tl_pyfloat(b, edges[i]);
        rc = rc ? rc : mp_buf_putc(b, ',');
        rc = rc ? rc : tl_pyfloat(b, edges[i + 1]);
        rc = rc ? rc : mp_buf_printf(b, ",%llu\n", (unsigned long long)cnt[i]);
    }
    free(edges);
    free(cnt);
    return rc;
}

/* The short-kernel groups, in first-appearance order until sorted. */
struct sgroups {
    struct sgroup *g;
    size_t ng;
    struct mp_i64map idx; /* key id -> group */
    struct mp_intern *keys;
    /* the kept rows' groups and durations in row order, and whether their
     * group ids never decrease (rows dropped for a missing key only before
     * the first kept one): pandas then sums with np.add.reduceat */
    int32_t *kg;
    double *kv;
    size_t nk;
    bool ids_sorted;
    /* a row's key parts (its args key and names: interned texts, so equal
     * parts make equal keys) -> its group, -2 for a missing key, -1 before
     * the parts' first row, whose text key is the only one built */
    struct mp_intern *parts;
    int32_t *pgroup;
    size_t cap_pgroup;
};

static void sgroups_fini(struct sgroups *gs)
{
    for (size_t i = 0; i < gs->ng; i++)
        mp_buf_fini(&gs->g[i].key);
    free(gs->g);
    free(gs->kg);
    free(gs->kv);
    mp_i64map_fini(&gs->idx);
    mp_intern_free(gs->keys);
    mp_intern_free(gs->parts);
    free(gs->pgroup);
}

/* Row r's key (Parent cpu_op, Input dims, Input strides, Concrete Inputs,
 * Kernel name; the name alone for a GPU-only trace) in key; *drop when a
 * key is missing (pandas groupby drops NaN keys). */
static int short_key(struct ctx *c, const struct krow *r, bool gpu_only, struct mp_buf *key,
                     bool *drop)
{
    mp_buf_reset(key);
    *drop = false;
    int rc = 0;
    if (!gpu_only) {
        if (r->cpu_op < 0) {
            *drop = true;
            return 0;
        }
        /* Input dims, Input strides, Concrete Inputs: fields 0, 2, 3 of
         * the args key (Dims, type, Strides, Concrete) */
        const char *ak4 = tl_argkeys_get(&c->ak, c->s, r->cpu_op);
        if (!ak4)
            return MP_ENOMEM;
        const char *f[4];
        size_t fl[4];
        const char *q = ak4;
        for (int fi = 0; fi < 4; fi++) {
            const char *sep = strchr(q, '\x1f');
            f[fi] = q;
            fl[fi] = sep ? (size_t)(sep - q) : strlen(q);
            q = sep ? sep + 1 : q + fl[fi];
        }
        if (fl[0] == 0 || fl[2] == 0 || fl[3] == 0) {
            *drop = true;
            return 0;
        }
        rc = mp_buf_puts(key, ename(c, r->cpu_op));
        static const int pick[3] = {0, 2, 3};
        for (int fi = 0; fi < 3 && !rc; fi++) {
            rc = mp_buf_putc(key, '\x1f');
            rc = rc ? rc : mp_buf_append(key, f[pick[fi]], fl[pick[fi]]);
        }
        rc = rc ? rc : mp_buf_putc(key, '\x1f');
    }
    return rc ? rc : mp_buf_puts(key, ename(c, r->uid));
}

/* The group of key, a new one (for row r) at the key's first row; *out
 * its index. */
static int short_find(struct sgroups *gs, const struct krow *r, const struct mp_buf *key,
                      int32_t *out)
{
    int32_t kid = mp_intern_add(gs->keys, key->data, key->len);
    if (kid < 0)
        return MP_ENOMEM;
    int64_t *gi = mp_i64map_get(&gs->idx, kid);
    if (gi) {
        *out = (int32_t)*gi;
        return 0;
    }
    struct sgroup *s = &gs->g[gs->ng];
    s->order = gs->ng;
    s->cpu_op = r->cpu_op;
    mp_buf_init(&s->key, 0);
    int rc = mp_buf_append(&s->key, key->data, key->len);
    rc = rc ? rc : mp_i64map_put(&gs->idx, kid, (int64_t)gs->ng);
    *out = (int32_t)gs->ng++;
    return rc;
}

/* The group of row r (short_find of its short_key), -1 when its key is
 * missing, through the row's key parts. */
static int short_gid(struct ctx *c, struct sgroups *gs, const struct krow *r, bool gpu_only,
                     struct mp_buf *key, int32_t *out)
{
    *out = -1;
    if (!gpu_only && r->cpu_op < 0)
        return 0;
    const char *parts[3] = {NULL, NULL, ename(c, r->uid)};
    if (!gpu_only) {
        parts[0] = tl_argkeys_get(&c->ak, c->s, r->cpu_op);
        parts[1] = ename(c, r->cpu_op);
        if (!parts[0])
            return MP_ENOMEM;
    }
    int32_t pid = mp_intern_add(gs->parts, (const char *)parts, sizeof(parts));
    if (pid < 0 || tl_gid_reserve(&gs->pgroup, &gs->cap_pgroup, pid))
        return MP_ENOMEM;
    if (gs->pgroup[pid] != -1) {
        *out = gs->pgroup[pid] >= 0 ? gs->pgroup[pid] : -1;
        return 0;
    }
    bool drop;
    int rc = short_key(c, r, gpu_only, key, &drop);
    if (!rc && !drop)
        rc = short_find(gs, r, key, out);
    if (!rc)
        gs->pgroup[pid] = drop ? -2 : *out;
    return rc;
}

/* Adds row r to group gid. */
static void short_add(struct sgroups *gs, const struct krow *r, int32_t gid)
{
    gs->ids_sorted = gs->ids_sorted && (gs->nk == 0 || gs->kg[gs->nk - 1] <= gid);
    gs->kg[gs->nk] = gid;
    gs->kv[gs->nk++] = r->dur;
    gs->g[gid].count++;
}

/* Groups the ns rows under thr in first-appearance order, missing keys
 * dropped, and sorts the groups (cmp_sgroup). */
static int short_group(struct ctx *c, const struct krow *rows, size_t n, double thr, size_t ns,
                       struct sgroups *gs)
{
    bool gpu_only = !c->t->has_cpu_ops;
    mp_i64map_init(&gs->idx);
    gs->ng = gs->nk = 0;
    gs->ids_sorted = true;
    gs->g = calloc(ns ? ns : 1, sizeof(*gs->g));
    gs->keys = mp_intern_new();
    gs->parts = mp_intern_new();
    gs->kg = malloc((ns ? ns : 1) * sizeof(int32_t));
    gs->kv = malloc((ns ? ns : 1) * sizeof(double));
    if (!gs->g || !gs->keys || !gs->parts || !gs->kg || !gs->kv)
        return MP_ENOMEM;
    struct mp_buf key;
    mp_buf_init(&key, 0);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!(rows[i].dur < thr))
            continue;
        int32_t gid;
        rc = short_gid(c, gs, &rows[i], gpu_only, &key, &gid);
        if (!rc && gid < 0)
            gs->ids_sorted = gs->ids_sorted && gs->nk == 0;
        else if (!rc)
            short_add(gs, &rows[i], gid);
    }
    mp_buf_fini(&key);
    if (!rc)
        rc = short_group_sums(gs->g, gs->ng, gs->kg, gs->kv, gs->nk, gs->ids_sorted);
    if (!rc)
        qsort(gs->g, gs->ng, sizeof(*gs->g), cmp_sgroup);
    return rc;
}

/* --topk_short_kernels: how many rows pandas' head(k) of the sorted table keeps */
static size_t short_topk(const struct mp_report_opts *o, size_t ng)
{
    if (!o->has_topk_short_kernels)
        return ng;
    long k = o->topk_short_kernels;
    if (k >= 0)
        return (size_t)k < ng ? (size_t)k : ng;
    return (size_t)(-(k + 1)) + 1 < ng ? ng - ((size_t)(-(k + 1)) + 1) : 0;
}

/* One row of short_kernels_summary: the key cells, then sum, count, mean
 * and percent of total time. */
static int short_row(struct ctx *c, struct sgroup *g, struct mp_csv *csv, struct mp_buf *cell)
{
    const char *k = mp_buf_cstr(&g->key);
    const char *end = k + g->key.len;
    int rc = 0;
    while (!rc) {
        const char *sep = memchr(k, '\x1f', (size_t)(end - k));
        size_t len = sep ? (size_t)(sep - k) : (size_t)(end - k);
        rc = mp_csv_field(csv, k, len);
        if (!sep)
            break;
        k = sep + 1;
    }
    double vals[] = {g->sum, g->sum / (double)g->count, g->sum / (c->total_time_ms * 1e3) * 100};
    for (int j = 0; j < 3 && !rc; j++) {
        mp_buf_reset(cell);
        rc = tl_pyfloat(cell, vals[j]);
        rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
        if (j == 0 && !rc) {
            mp_buf_reset(cell);
            rc = mp_buf_printf(cell, "%llu", (unsigned long long)g->count);
            rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
        }
    }
    return rc ? rc : mp_csv_end_row(csv);
}

/* short_kernels_summary: the first nshow groups. */
static int short_summary(struct ctx *c, struct sgroups *gs, size_t nshow)
{
    struct mp_buf *b = tl_new_sheet(c->r, "short_kernels_summary");
    if (!b)
        return MP_ENOMEM;
    if (gs->ng == 0)
        return mp_buf_puts(b, "\n"); /* pandas writes an empty DataFrame as one blank line */
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    int rc = 0;
    if (c->t->has_cpu_ops) {
        static const char *const kc[] = {"Parent cpu_op", "Input dims", "Input strides",
                                         "Concrete Inputs"};
        for (int i = 0; i < 4 && !rc; i++)
            rc = mp_csv_str(&csv, kc[i]);
    }
    static const char *const cols[] = {"Kernel name", "Short Kernel duration (µs) sum",
                                       "Short Kernel count", "Short Kernel duration (µs) mean",
                                       "Short Kernel duration (µs) percent of total time"};
    for (int i = 0; i < 5 && !rc; i++)
        rc = mp_csv_str(&csv, cols[i]);
    rc = rc ? rc : mp_csv_end_row(&csv);
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    for (size_t i = 0; i < nshow && !rc; i++)
        rc = short_row(c, &gs->g[i], &csv, &cell);
    mp_buf_fini(&cell);
    return rc;
}

static int sheet_short_kernels(struct ctx *c, const struct krow *rows, size_t n)
{
    const double thr = c->o->short_kernel_thresh;
    const int bins = c->o->short_kernel_bins > 0 ? c->o->short_kernel_bins : 100;
    size_t ns = 0;
    int rc = short_histogram(c, rows, n, thr, bins, &ns);
    if (rc)
        return rc;
    /* summary grouped by (Parent cpu_op, Input dims, Input strides, Concrete
     * Inputs, Kernel name) in first-appearance order; missing keys dropped */
    struct sgroups gs = {0};
    rc = short_group(c, rows, n, thr, ns, &gs);
    rc = rc ? rc : short_summary(c, &gs, short_topk(c->o, gs.ng));
    sgroups_fini(&gs);
    return rc;
}

/* The report reads args of cpu ops (shapes, types), python functions and
 * metadata events; kernels' and runtime calls' args are not needed once the
 * parser has taken their ids and stream, and are most of a trace's bytes. */
static bool report_needs_args(const struct mp_trace_event *ev, void *user)
{
    (void)user;
    if (ev->ph == 'M')
        return true;
    if (!(ev->flags & MP_EV_CAT))
        return false;
    if ((ev->cat.n == 6 && memcmp(ev->cat.p, "cpu_op", 6) == 0) ||
        (ev->cat.n == 15 && memcmp(ev->cat.p, "python_function", 15) == 0))
        return true;
    /* collective kernels: their process-group args feed coll_analysis */
    if (ev->cat.n == 6 && memcmp(ev->cat.p, "kernel", 6) == 0 && (ev->flags & MP_EV_NAME))
        return mp_trace_is_comm_name_n(ev->name.p, ev->name.n);
    return false;
}

/* keep_trace: also memcpy/memset args (their "bytes") */
static bool report_keeps_args(const struct mp_trace_event *ev, void *user)
{
    if (report_needs_args(ev, user))
        return true;
    return (ev->flags & MP_EV_CAT) &&
           ((ev->cat.n == 10 && memcmp(ev->cat.p, "gpu_memcpy", 10) == 0) ||
            (ev->cat.n == 10 && memcmp(ev->cat.p, "gpu_memset", 10) == 0));
}

/* TraceLens's pseudo-op pass starts by renaming SGLang's profiler ops:
 * "sglang_profiler::<op>_<n>" loses the volatile "_<n>" when the name's
 * first event is a cpu_op, so the op meets its perf model and its peers. */
static int normalize_sglang_names(struct mp_trace_store *s)
{
    static const char prefix[] = "sglang_profiler::";
    const size_t pn = sizeof(prefix) - 1;
    int32_t nn = mp_intern_count(s->strings);
    int32_t *to = malloc(sizeof(int32_t) * (size_t)(nn > 0 ? nn : 1));
    int32_t cpu_op = mp_intern_find(s->strings, "cpu_op", 6);
    if (!to)
        return MP_ENOMEM;
    bool any = false;
    for (int32_t id = 0; id < nn; id++) {
        to[id] = -1;
        const char *nm = mp_intern_str(s->strings, id);
        size_t len = strlen(nm), e = len;
        if (len <= pn || strncmp(nm, prefix, pn) != 0)
            continue;
        while (e > pn && nm[e - 1] >= '0' && nm[e - 1] <= '9')
            e--;
        /* "_<digits>" at the end, with at least one character before it */
        if (e == len || e < pn + 2 || nm[e - 1] != '_')
            continue;
        to[id] = -2; /* candidate: decided by the first event of the name */
        any = true;
    }
    for (size_t i = 0; any && i < s->n; i++) {
        int32_t id = s->name[i];
        if (id < 0 || id >= nn || to[id] != -2)
            continue;
        if (s->cat[i] != cpu_op || cpu_op < 0) {
            to[id] = -1;
            continue;
        }
        const char *nm = mp_intern_str(s->strings, id);
        size_t e = strlen(nm);
        while (nm[e - 1] >= '0' && nm[e - 1] <= '9')
            e--;
        int32_t nid = mp_intern_add(s->strings, nm, e - 1);
        if (nid < 0) {
            free(to);
            return MP_ENOMEM;
        }
        to[id] = nid;
    }
    for (size_t i = 0; any && i < s->n; i++)
        if (s->name[i] >= 0 && s->name[i] < nn && to[s->name[i]] >= 0)
            s->name[i] = to[s->name[i]];
    free(to);
    return 0;
}

/* ---- the sheet table ---- */

/* What the builders of one report share: the perf-model inputs, the kernel
 * rows (made once for kernel_summary and the short-kernel sheets) and, per
 * row of the table, the range of its report's sheets it added. */
struct sheet_run {
    const struct mp_roofline_arch *arch;
    const char *const *annot;
    struct tl_overlap *ov; /* NULL whenever the side runs on its own thread */
    struct krow *krows;
    size_t n_krows;
    bool any_cpu_op, krows_done;
    size_t lo[8], hi[8]; /* sheets [lo, hi) of the row's report */
};

/* Which thread builds a row: the calling thread, or the side (its own
 * report, caches and perf-model memo over the same read-only tree; a second
 * thread unless serial or with overlap info, when the side's rows run on
 * the calling thread in table order). */
enum sheet_thread { ON_CALLER, ON_SIDE };

static bool on_always(const struct ctx *c)
{
    (void)c;
    return true;
}

static bool on_cpu_ops(const struct ctx *c)
{
    return c->t->has_cpu_ops;
}

static bool on_kernel_summary(const struct ctx *c)
{
    return c->o->kernel_summary;
}

static bool on_short_kernels(const struct ctx *c)
{
    return c->o->short_kernel_study;
}

static bool on_coll(const struct ctx *c)
{
    return c->t->has_cpu_ops && !c->o->disable_coll_analysis && !c->o->inference;
}

/* the whole-trace GPU timeline (the side's sheets do not read it) */
static int build_timeline(struct ctx *c, struct sheet_run *sr)
{
    (void)sr;
    size_t n_timeline;
    int rc = mp_report_gpu_timeline_sel(c->t, c->o->include_unlinked, -1,
                                        c->o->micro_idle_thresh_us, &c->r->timeline, &n_timeline);
    c->total_time_ms = c->r->timeline.total / 1e3;
    return rc ? rc : sheet_timeline(c);
}

static int build_ops(struct ctx *c, struct sheet_run *sr)
{
    return tl_sheets_ops(c->r, c->t, &c->ak, c->o, sr->ov, tl_new_sheet);
}

static int build_unified(struct ctx *c, struct sheet_run *sr)
{
    return tl_sheet_unified(c->r, c->t, c->first_kernel, sr->arch, &c->ak, c->o, sr->annot, sr->ov,
                            c->memo, tl_new_sheet);
}

static int build_perf(struct ctx *c, struct sheet_run *sr)
{
    return tl_sheets_perf(c->r, c->t, sr->arch, c->o, sr->annot, sr->ov, c->memo, tl_new_sheet);
}

static int krows_once(struct ctx *c, struct sheet_run *sr)
{
    if (sr->krows_done)
        return 0;
    sr->krows_done = true;
    return kernel_rows(c, &sr->krows, &sr->n_krows, &sr->any_cpu_op);
}

static int build_kernel_summary(struct ctx *c, struct sheet_run *sr)
{
    int rc = krows_once(c, sr);
    return rc ? rc : sheet_kernel_summary(c, sr->krows, sr->n_krows, sr->any_cpu_op);
}

static int build_short_kernels(struct ctx *c, struct sheet_run *sr)
{
    int rc = krows_once(c, sr);
    return rc ? rc : sheet_short_kernels(c, sr->krows, sr->n_krows);
}

static int build_coll(struct ctx *c, struct sheet_run *sr)
{
    (void)sr;
    return tl_sheet_coll(c->r, c->t);
}

/* The report's sheets in TraceLens's order: a row's position is its
 * sheets' position in the report, whichever thread builds them. A new
 * sheet is one row here (docs/ARCHITECTURE.md, "Adding a report sheet"). */
static const struct sheet_row {
    const char *name; /* the sheet or sheets it adds */
    const char *flag; /* the option that enables it, "" = none */
    enum sheet_thread thread;
    bool (*enabled)(const struct ctx *c);
    int (*build)(struct ctx *c, struct sheet_run *sr);
} SHEETS[] = {
    {"gpu_timeline", "", ON_CALLER, on_always, build_timeline},
    {"ops_summary, ops_summary_by_category, ops_unique_args", "", ON_SIDE, on_cpu_ops, build_ops},
    {"unified_perf_summary", "", ON_CALLER, on_cpu_ops, build_unified},
    {"GEMM, SDPA_fwd, ... (per category)", "", ON_SIDE, on_cpu_ops, build_perf},
    {"kernel_summary", "--enable_kernel_summary", ON_CALLER, on_kernel_summary,
     build_kernel_summary},
    {"short_kernel_histogram, short_kernels_summary", "--short_kernel_study", ON_CALLER,
     on_short_kernels, build_short_kernels},
    {"coll_analysis", "not --disable_coll_analysis, not inference", ON_CALLER, on_coll, build_coll},
};

#define N_SHEET_ROWS (sizeof(SHEETS) / sizeof(SHEETS[0]))
_Static_assert(N_SHEET_ROWS <= sizeof(((struct sheet_run *)0)->lo) / sizeof(size_t),
               "sheet_run.lo holds a range per row");

/* Runs row i on c (the side's or the caller's context); *rc: that
 * thread's first failure, after which its rows only record empty ranges. */
static void run_row(size_t i, struct ctx *c, struct sheet_run *sr, int *rc)
{
    sr->lo[i] = c->r->n;
    if (!*rc && SHEETS[i].enabled(c))
        *rc = SHEETS[i].build(c, sr);
    sr->hi[i] = c->r->n;
}

/* The side: the ops sheets and the per-category perf sheets. */
struct side {
    struct ctx c; /* a copy of the report's with its own report, caches and memo */
    struct sheet_run *sr;
    struct mp_report out; /* the side's sheets, category totals and points */
    int rc;
};

/* the side's rows in table order; its last sheet handed on at the end */
static void *side_main(void *arg)
{
    struct side *sd = arg;
    for (size_t i = 0; i < N_SHEET_ROWS; i++)
        if (SHEETS[i].thread == ON_SIDE)
            run_row(i, &sd->c, sd->sr, &sd->rc);
    if (!sd->rc)
        tl_sheets_final(sd->c.r);
    return NULL;
}

/* Puts the sheets of r and of the side in the table's order, and moves the
 * side's category totals and points over. */
static int side_merge(struct mp_report *r, const struct sheet_run *sr, struct side *sd)
{
    struct mp_report *x = &sd->out;
    struct mp_report_sheet *ns = malloc((r->n + x->n + 1) * sizeof(*ns));
    if (!ns)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < N_SHEET_ROWS; i++) {
        const struct mp_report *from = SHEETS[i].thread == ON_SIDE ? x : r;
        for (size_t j = sr->lo[i]; j < sr->hi[i]; j++)
            ns[k++] = from->sheets[j];
    }
    MP_ASSERT(k == r->n + x->n); /* every sheet was added by exactly one row */
    free(r->sheets);
    r->sheets = ns;
    r->n = k;
    free(x->sheets);
    x->sheets = NULL;
    x->n = 0;
    if (x->cats) {
        r->cats = x->cats;
        r->n_cats = x->n_cats;
        x->cats = NULL;
        x->n_cats = 0;
    }
    if (x->points) {
        r->points = x->points;
        r->n_points = x->n_points;
        x->points = NULL;
        x->n_points = 0;
    }
    return 0;
}

static void side_fini(struct side *sd)
{
    for (size_t i = 0; i < sd->out.n; i++)
        mp_buf_fini(&sd->out.sheets[i].csv);
    free(sd->out.sheets);
    for (size_t i = 0; i < sd->out.n_cats; i++)
        free(sd->out.cats[i].name);
    free(sd->out.cats);
    for (size_t i = 0; i < sd->out.n_points; i++) {
        free(sd->out.points[i].name);
        free(sd->out.points[i].params);
    }
    free(sd->out.points);
    mp_i64map_fini(&sd->c.category);
    free(sd->c.cats);
    tl_argkeys_fini(&sd->c.ak);
}

/* Builds the tree of the loaded trace, merging the graphs of the capture
 * folder when one is given. */
static int report_tree(struct ctx *c, const struct mp_report_opts *o, struct mp_diag *d)
{
    /* a capture merge builds both trees with python functions, as TraceLens does */
    bool pyf = o->python_functions || o->detect_recompute || o->group_by_parent_module ||
               o->include_call_stack;
    struct mp_trace_tree_opts to = {.python_functions = pyf || o->capture_folder,
                                    .serial = o->serial};
    int rc = mp_trace_tree_build(c->s, &to, &c->t, d);
    if (rc || !o->capture_folder)
        return rc;
    struct mp_capture_opts co = {.folder = o->capture_folder, .keep_args_for = report_needs_args};
    struct mp_capture_stats cst;
    rc = mp_capture_merge(c->s, c->t, &co, &cst, d);
    if (o->capture_stats)
        *o->capture_stats = cst;
    if (rc || !cst.failed || pyf)
        return rc;
    /* TraceLens drops a failed merge and reports the replay trace as if no
     * capture folder had been given */
    mp_trace_tree_free(c->t);
    c->t = NULL;
    to.python_functions = false;
    return mp_trace_tree_build(c->s, &to, &c->t, d);
}

/* The passes over the tree before the sheets: SGLang op names and pseudo
 * ops (--enable_pseudo_ops), recompute regions (--detect_recompute). */
static int report_passes(struct ctx *c, const struct mp_report_opts *o, struct mp_diag *d)
{
    int rc;
    if (o->enable_pseudo_ops && (rc = normalize_sglang_names(c->s)) != 0)
        return mp_diag_set(d, rc, "out of memory renaming ops");
    size_t n_pseudo = 0;
    if (o->enable_pseudo_ops && (rc = tl_pseudo_apply(c->s, c->t, &n_pseudo)) != 0)
        return mp_diag_set(d, rc, "adding pseudo ops failed");
    if (n_pseudo)
        mp_log(MP_LOG_DEBUG, "%zu pseudo op(s) added", n_pseudo);
    /* the tree is final: the sheets never read the link ids */
    mp_trace_store_drop_links(c->s);
    if (o->detect_recompute && (rc = mp_trace_tree_mark_recompute(c->t)) != 0)
        return mp_diag_set(d, rc, "out of memory marking recompute regions");
    return 0;
}

/* The GPU model of the roofline columns: the one given, else with
 * arch_auto the built-in named by the trace's first device (its
 * deviceProperties: [{"name": "NVIDIA H200", ...}, ...]), else NULL. */
static const struct mp_roofline_arch *
report_arch(const struct ctx *c, const struct mp_report_opts *o, struct mp_roofline_arch *detected)
{
    if (o->arch || !o->arch_auto || !c->s->meta_device_properties)
        return o->arch;
    const char *dp = c->s->meta_device_properties, *q = strstr(dp, "\"name\"");
    if (!q)
        return NULL;
    q = strchr(q + 6, '"');
    const char *qe = q ? strchr(q + 1, '"') : NULL;
    char name[128];
    if (!q || !qe || (size_t)(qe - q - 1) >= sizeof(name))
        return NULL;
    memcpy(name, q + 1, (size_t)(qe - q - 1));
    name[qe - q - 1] = '\0';
    return mp_roofline_arch_from_device_name(name, detected) == 0 ? detected : NULL;
}

/* The sheets of the table: the side's rows on a second thread unless
 * serial; with overlap info everything stays on this thread (the overlap
 * index is shared by the ops and unified sheets), and the rows then run in
 * table order. rc: an earlier failure, passed through. */
static int report_sheets(struct ctx *c, const struct mp_roofline_arch *arch, const char **annot,
                         struct tl_overlap *ov, int rc)
{
    struct sheet_run sr = {.arch = arch, .annot = annot, .ov = ov};
    struct side sd = {.c = *c, .sr = &sr};
    sd.c.r = &sd.out;
    sd.c.ak = (struct tl_argkeys){0};
    sd.c.category = (struct mp_i64map){0};
    sd.c.cats = NULL;
    sd.c.ncats = sd.c.capcats = 0;
    sd.out.on_sheet = c->r->on_sheet;
    sd.out.on_sheet_user = c->r->on_sheet_user;
    pthread_t side_th;
    bool side = false;
    if (!rc && !ov && !c->o->serial) {
        sd.c.memo = mp_roofline_memo_new(); /* NULL only models every op afresh */
        side = pthread_create(&side_th, NULL, side_main, &sd) == 0;
        if (!side) {
            mp_roofline_memo_free(sd.c.memo);
            sd.c.memo = c->memo;
        }
    }
    size_t last_side = 0;
    for (size_t i = 0; i < N_SHEET_ROWS; i++)
        if (SHEETS[i].thread == ON_SIDE)
            last_side = i;
    for (size_t i = 0; i < N_SHEET_ROWS; i++) {
        if (SHEETS[i].thread == ON_CALLER) {
            run_row(i, c, &sr, &rc);
        } else if (!side && !rc) {
            run_row(i, &sd.c, &sr, &sd.rc);
            if (i == last_side && !sd.rc)
                tl_sheets_final(sd.c.r);
        }
    }
    if (!rc)
        tl_sheets_final(c->r);
    if (side)
        pthread_join(side_th, NULL);
    if (!rc && !sd.rc)
        rc = side_merge(c->r, &sr, &sd);
    if (!rc)
        rc = sd.rc;
    if (sd.c.memo != c->memo)
        mp_roofline_memo_free(sd.c.memo);
    free(sr.krows);
    side_fini(&sd);
    return rc;
}

int mp_report_build(const char *path, const struct mp_report_opts *o, struct mp_report **out,
                    struct mp_diag *d)
{
    *out = NULL;
    struct ctx c = {.o = o};
    struct mp_trace_store_opts so = {.keep_args = true,
                                     .keep_args_for =
                                         o->keep_trace ? report_keeps_args : report_needs_args,
                                     .on_progress = o->on_progress,
                                     .user = o->progress_user,
                                     .serial = o->serial};
    uint64_t t0 = mp_time_ns();
    int rc = mp_trace_store_load(path, &so, &c.s, d);
    if (rc)
        return rc;
    uint64_t t1 = mp_time_ns();
    rc = report_tree(&c, o, d);
    rc = rc ? rc : report_passes(&c, o, d);
    uint64_t t2 = mp_time_ns();
    if (rc)
        goto out;
    c.r = calloc(1, sizeof(*c.r));
    if (!c.r) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    c.r->on_sheet = o->on_sheet;
    c.r->on_sheet_user = o->on_sheet_user;
    c.r->events = c.s->n;
    c.r->gpu_events = c.t->n_gpu;
    c.r->gpu_linked = c.t->n_gpu_linked;
    rc = index_launchers(&c);
    struct tl_overlap *ov = NULL;
    if (!rc && o->include_overlap_info && c.t->has_cpu_ops)
        rc = tl_overlap_new(c.t, o->include_unlinked, &ov);
    struct mp_roofline_arch detected;
    const struct mp_roofline_arch *arch = report_arch(&c, o, &detected);
    if (arch) {
        snprintf(c.r->arch_name, sizeof(c.r->arch_name), "%s", arch->name);
        c.r->arch = *arch;
        c.r->has_arch = true;
    }
    const char **annot = NULL;
    if (!rc)
        rc = tl_apply_annotation(c.t, o->inference, &annot);
    /* NULL (out of memory) only models every op afresh */
    c.memo = rc ? NULL : mp_roofline_memo_new();
    uint64_t t3 = mp_time_ns();
    rc = report_sheets(&c, arch, annot, ov, rc);
    mp_log(MP_LOG_DEBUG, "report: load %.3f s, tree %.3f s, indexes %.3f s, sheets %.3f s",
           (double)(t1 - t0) / 1e9, (double)(t2 - t1) / 1e9, (double)(t3 - t2) / 1e9,
           (double)(mp_time_ns() - t3) / 1e9);
    c.r->on_sheet = NULL;
    free(annot);
    tl_overlap_free(ov);
    if (rc)
        rc = mp_diag_set(d, rc, "out of memory building the report");
out:
    if (!rc && o->keep_trace && c.r) { /* the caller's now */
        c.r->store = c.s;
        c.r->tree = c.t;
        c.s = NULL;
        c.t = NULL;
    }
    free(c.first_kernel);
    mp_i64map_fini(&c.category);
    mp_roofline_memo_free(c.memo);
    free(c.cats);
    tl_argkeys_fini(&c.ak);
    uint64_t t4 = mp_time_ns();
    mp_trace_tree_free(c.t);
    mp_trace_store_free(c.s);
    mp_log(MP_LOG_DEBUG, "report: free %.3f s", (double)(mp_time_ns() - t4) / 1e9);
    if (rc) {
        mp_report_free(c.r);
        return rc;
    }
    *out = c.r;
    return 0;
}

/* <dir>/<name>.csv into path; false when it does not fit */
static bool sheet_csv_path(const char *dir, const char *name, char *path, size_t cap)
{
    int n = snprintf(path, cap, "%s/%s.csv", dir, name);
    return n >= 0 && (size_t)n < cap;
}

int mp_report_stage_sheet(struct mp_fs_stage *st, const char *dir, const struct mp_report_sheet *s)
{
    char path[4200];
    if (!sheet_csv_path(dir, s->name, path, sizeof(path)))
        return MP_EINVAL; /* not staged: the commit reports it */
    return mp_fs_stage_put(st, path, s->csv.data ? s->csv.data : "", s->csv.len);
}

int mp_report_commit_csvs(const struct mp_report *r, const char *dir, struct mp_fs_stage *st,
                          struct mp_diag *d)
{
    int rc = mp_fs_mkdirs(dir, d);
    for (size_t i = 0; i < r->n && !rc; i++) {
        const struct mp_report_sheet *s = &r->sheets[i];
        const char *data = s->csv.data ? s->csv.data : "";
        char path[4200];
        if (!sheet_csv_path(dir, s->name, path, sizeof(path)))
            rc = mp_diag_set(d, MP_EINVAL, "path too long: '%s/%s.csv'", dir, s->name);
        else if (st)
            rc = mp_fs_stage_commit(st, path, data, s->csv.len, d);
        else
            rc = mp_fs_write_atomic(path, data, s->csv.len, d);
    }
    return rc;
}

int mp_report_write_csvs(const struct mp_report *r, const char *dir, struct mp_diag *d)
{
    return mp_report_commit_csvs(r, dir, NULL, d);
}

void mp_report_free(struct mp_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        mp_buf_fini(&r->sheets[i].csv);
    free(r->sheets);
    for (size_t i = 0; i < r->n_points; i++) {
        free(r->points[i].name);
        free(r->points[i].params);
    }
    free(r->points);
    for (size_t i = 0; i < r->n_cats; i++)
        free(r->cats[i].name);
    free(r->cats);
    mp_trace_tree_free(r->tree);
    mp_trace_store_free(r->store);
    free(r);
}
