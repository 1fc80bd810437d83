/* Kernel-launcher sheets of the TraceLens report: ops_summary_by_category,
 * ops_summary and ops_unique_args (docs/tracelens-compat.md, Op sheets).
 *
 * A launcher is the cpu_op (or, without one, the runtime call) that launched
 * a GPU event; launchers are ordered by start time, each with its direct
 * kernels (busy time of their union) and its whole subtree's GPU events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/roofline.h>
#include <magpie/stats.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

struct launcher {
    int32_t uid;
    int32_t *k; /* direct kernels, sorted by ts (stable) */
    size_t nk, capk;
    double direct, subtree;
    const char *category;
    char *stack;  /* --group_by_parent_module: Python repr of its call stack */
    char *module; /* parent_module */
    char *key;    /* grouping key of the module summaries (scratch) */
};

struct lset {
    struct launcher *v;
    size_t n;
};

static void lset_fini(struct lset *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].k);
        free(l->v[i].stack);
        free(l->v[i].module);
        free(l->v[i].key);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Builds the launcher list in TraceLens's order. */
static int build_launchers(const struct mp_trace_tree *t, struct lset *out)
{
    memset(out, 0, sizeof(*out));
    int32_t *slot = malloc((t->n ? t->n : 1) * sizeof(int32_t));
    struct tl_ts_idx *first = NULL;
    int rc = 0;
    if (!slot)
        return MP_ENOMEM;
    size_t nl = 0, capl = 0;
    struct launcher *v = NULL;
    for (size_t i = 0; i < t->n; i++)
        slot[i] = -1;
    for (size_t i = 0; i < t->n && !rc; i++) {
        int32_t l = t->launcher[i];
        if (l < 0 || t->comm[i])
            continue;
        if (slot[l] < 0) {
            if (MP_GROW(v, capl, nl + 1, 256)) {
                rc = MP_ENOMEM;
                break;
            }
            memset(&v[nl], 0, sizeof(v[nl]));
            v[nl].uid = l;
            slot[l] = (int32_t)nl++;
        }
        struct launcher *L = &v[slot[l]];
        if (MP_GROW(L->k, L->capk, L->nk + 1, 4)) {
            rc = MP_ENOMEM;
            break;
        }
        L->k[L->nk++] = (int32_t)i;
    }
    free(slot);
    /* order launchers by their ts (stable over first-kernel order) */
    if (!rc) {
        first = malloc((nl ? nl : 1) * sizeof(*first));
        if (!first) {
            rc = MP_ENOMEM;
        } else {
            for (size_t i = 0; i < nl; i++)
                first[i] = (struct tl_ts_idx){t->s->ts[v[i].uid], (int32_t)i};
            tl_sort_ts_idx(first, nl);
            /* v[i] = old v[first[i].idx], in place: follow each cycle of
             * the permutation, marking placed slots with -1 */
            for (size_t i = 0; i < nl; i++) {
                if (first[i].idx < 0)
                    continue;
                struct launcher tmp = v[i];
                size_t j = i;
                for (;;) {
                    size_t from = (size_t)first[j].idx;
                    first[j].idx = -1;
                    if (from == i) {
                        v[j] = tmp;
                        break;
                    }
                    v[j] = v[from];
                    j = from;
                }
            }
        }
    }
    int32_t *buf = NULL;
    size_t bcap = 0;
    struct tl_catmemo cats = {0};
    for (size_t i = 0; i < nl && !rc; i++) {
        struct launcher *L = &v[i];
        /* kernels by ts, stable over UID order */
        struct tl_ts_idx small[16];
        struct tl_ts_idx *o = L->nk <= 16 ? small : malloc(L->nk * sizeof(*o));
        if (!o) {
            rc = MP_ENOMEM;
            break;
        }
        for (size_t k = 0; k < L->nk; k++)
            o[k] = (struct tl_ts_idx){t->s->ts[L->k[k]], L->k[k]};
        tl_sort_ts_idx(o, L->nk);
        for (size_t k = 0; k < L->nk; k++)
            L->k[k] = o[k].idx;
        if (o != small)
            free(o);
        L->direct = mp_trace_tree_busy(t, L->k, L->nk);
        size_t bn = 0;
        long got = mp_trace_tree_gpu_events(t, L->uid, &buf, &bn, &bcap);
        if (got < 0) {
            rc = (int)got;
            break;
        }
        L->subtree = bn ? mp_trace_tree_busy(t, buf, bn) : 0.0;
        L->category = tl_op_category(&cats, t, L->uid, L->nk ? L->k[0] : -1);
    }
    tl_catmemo_fini(&cats);
    free(buf);
    free(first);
    out->v = v;
    out->n = nl;
    if (rc)
        lset_fini(out);
    return rc;
}

/* ---- ops_summary_by_category and ops_summary ---- */
struct cgroup {
    const char *key;
    size_t first;      /* launcher index of the group's first member */
    uint8_t recompute; /* second grouping column under --detect_recompute */
    double sum, sub;
    struct mp_kahan ksum, ksub; /* pandas' groupby sums (Kahan, row order) */
    uint64_t count;
    size_t order;
    /* categories of a name group (sorted, distinct) */
    const char *cats[16];
    int ncats;
};

static int cmp_cgroup_key(const void *a, const void *b)
{
    const struct cgroup *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (int)x->recompute - (int)y->recompute;
}

static int cmp_cgroup_sum(const void *a, const void *b)
{
    const struct cgroup *x = a, *y = b;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

/* When the launchers already come in key order pandas (>= 3.1) sums each
 * group with np.add.reduceat: the sums are redone so over the runs of rows
 * of one group (gid[i] the group of launcher i). */
static int reduceat_sums(struct cgroup *g, const struct lset *ls, const int32_t *gid)
{
    double *d = malloc((ls->n ? ls->n : 1) * sizeof(double));
    double *u = malloc((ls->n ? ls->n : 1) * sizeof(double));
    if (!d || !u) {
        free(d);
        free(u);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < ls->n;) {
        size_t j = i;
        for (; j < ls->n && gid[j] == gid[i]; j++) {
            d[j - i] = ls->v[j].direct;
            u[j - i] = ls->v[j].subtree;
        }
        g[gid[i]].sum = mp_sum_reduceat(d, j - i);
        g[gid[i]].sub = mp_sum_reduceat(u, j - i);
        i = j;
    }
    free(d);
    free(u);
    return 0;
}

/* Series.sum of the sorted total_direct_kernel_time_ms column: numpy's
 * pairwise sum. 0 or MP_ENOMEM. */
static int total_ms(const struct cgroup *g, size_t ng, double *out)
{
    double *v = malloc((ng ? ng : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    for (size_t i = 0; i < ng; i++)
        v[i] = g[i].sum / 1000;
    *out = mp_sum_pairwise(v, ng);
    free(v);
    return 0;
}

/* Groups launchers by category (by_name false) or name, sorted by key then
 * stably by direct-time sum descending. Members join their group in
 * launcher order (the order pandas sums them in); only the groups are
 * allocated, not a slot per launcher. */
static struct cgroup *group_launchers(const struct mp_trace_tree *t, const struct lset *ls,
                                      bool by_name, bool by_module, size_t *ng_out)
{
    struct mp_intern *ids = mp_intern_new(); /* (key, recompute) -> group index */
    struct mp_i64map by_ptr;                 /* (key's address, recompute) -> group index */
    mp_i64map_init(&by_ptr);
    struct cgroup *g = NULL;
    size_t w = 0, cap = 0;
    struct mp_buf kb;
    mp_buf_init(&kb, 0);
    int32_t *gid = malloc((ls->n ? ls->n : 1) * sizeof(int32_t));
    bool ok = ids != NULL && gid != NULL;
    bool ids_sorted = true; /* every launcher's (key, recompute) >= the previous one's */
    const char *prev_key = NULL;
    uint8_t prev_rec = 0;
    for (size_t i = 0; i < ls->n && ok; i++) {
        struct launcher *L = &ls->v[i];
        const char *key = by_name ? mp_trace_tree_name(t, L->uid) : L->category;
        if (by_module) {
            /* (key, parent_module): '\x1f' sorts below every printable
             * character, so the joined text orders like the tuple */
            free(L->key);
            size_t a = strlen(key), b = strlen(L->module);
            L->key = malloc(a + b + 2);
            if (!L->key) {
                ok = false;
                break;
            }
            memcpy(L->key, key, a);
            L->key[a] = '\x1f';
            memcpy(L->key + a + 1, L->module, b + 1);
            key = L->key;
        }
        uint8_t rec = t->recompute ? t->recompute[L->uid] : 0;
        /* without modules key is an interned name or a static category: the
         * same pointer is the same text, so its id is looked up once */
        int64_t pk = (int64_t)((uint64_t)(uintptr_t)key << 1 | rec);
        const int64_t *known = by_module ? NULL : mp_i64map_get(&by_ptr, pk);
        int32_t id = known ? (int32_t)*known : -1;
        if (!known) {
            mp_buf_reset(&kb);
            ok = mp_buf_puts(&kb, key) == 0 && mp_buf_putc(&kb, rec ? '1' : '0') == 0;
            id = ok ? mp_intern_add(ids, kb.data, kb.len) : -1;
            if (id >= 0 && !by_module && mp_i64map_put(&by_ptr, pk, id))
                id = -1;
        }
        if (id < 0) {
            ok = false;
            break;
        }
        if (prev_key) {
            int c = prev_key == key ? 0 : strcmp(prev_key, key);
            if (c > 0 || (c == 0 && prev_rec > rec))
                ids_sorted = false;
        }
        prev_key = key;
        prev_rec = rec;
        gid[i] = id;
        if ((size_t)id < w) { /* ids are handed out in order: an existing group */
            struct cgroup *a = &g[id];
            mp_kahan_add(&a->ksum, L->direct);
            mp_kahan_add(&a->ksub, L->subtree);
            a->count++;
            bool have = false;
            for (int c = 0; c < a->ncats && !have; c++)
                have = a->cats[c] == L->category ||
                       (a->cats[c] && L->category && strcmp(a->cats[c], L->category) == 0);
            if (!have && a->ncats < 16)
                a->cats[a->ncats++] = L->category;
            continue;
        }
        if (MP_GROW(g, cap, w + 1, 64)) {
            ok = false;
            break;
        }
        memset(&g[w], 0, sizeof(g[w]));
        g[w].key = key;
        g[w].first = i;
        g[w].recompute = rec;
        mp_kahan_add(&g[w].ksum, L->direct);
        mp_kahan_add(&g[w].ksub, L->subtree);
        g[w].count = 1;
        g[w].cats[0] = L->category;
        g[w].ncats = 1;
        w++;
    }
    mp_buf_fini(&kb);
    mp_intern_free(ids);
    mp_i64map_fini(&by_ptr);
    for (size_t i = 0; i < w && ok; i++) {
        g[i].sum = g[i].ksum.sum;
        g[i].sub = g[i].ksub.sum;
    }
    if (ok && ids_sorted && w > 0)
        ok = reduceat_sums(g, ls, gid) == 0;
    free(gid);
    if (!ok) {
        free(g);
        return NULL;
    }
    if (!g && !(g = calloc(1, sizeof(*g))))
        return NULL;
    /* ties on the sum keep key order ((key, recompute) pairs are distinct) */
    qsort(g, w, sizeof(*g), cmp_cgroup_key);
    for (size_t i = 0; i < w; i++)
        g[i].order = i;
    qsort(g, w, sizeof(*g), cmp_cgroup_sum);
    *ng_out = w;
    return g;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int pct_cells(struct mp_csv *csv, struct mp_buf *cell, double ms, double total, double *cum)
{
    double pct = ms / total * 100;
    *cum += pct;
    int rc = tl_csv_float(csv, cell, pct, true);
    return rc ? rc : tl_csv_float(csv, cell, *cum, true);
}

/* Time by category for the human views (report.h's mp_report_cat). */
static int fill_cats(struct mp_report *r, const struct cgroup *g, size_t ng)
{
    r->cats = calloc(ng ? ng : 1, sizeof(*r->cats));
    if (!r->cats)
        return MP_ENOMEM;
    for (size_t i = 0; i < ng; i++) {
        r->cats[i].name = mp_strdup(g[i].key);
        r->cats[i].ms = g[i].sum / 1000;
        r->cats[i].count = (size_t)g[i].count;
        r->n_cats++;
        if (!r->cats[i].name)
            return MP_ENOMEM;
    }
    return 0;
}

/* The cells of one group of a launcher summary sheet, before its
 * percentages (modules: the inference report's parent_module columns). */
typedef int summary_row_fn(const struct mp_trace_tree *t, const struct lset *ls, struct cgroup *g,
                           bool modules, struct mp_csv *csv, struct mp_buf *cell);

/* A launcher summary sheet: the groups by name (else by category) [and
 * parent module], the header h1 h2 h3, each group's cells, then its
 * Percentage and Cumulative Percentage of the total direct kernel time;
 * r (if not NULL) gets the groups as the views' time by category. */
static int launcher_summary(struct mp_report *r, const struct mp_trace_tree *t,
                            const struct lset *ls, bool by_name, bool modules, const char *h1,
                            const char *h2, const char *h3, summary_row_fn *row, struct mp_buf *b)
{
    size_t ng;
    struct cgroup *g = group_launchers(t, ls, by_name, modules, &ng);
    if (!g)
        return MP_ENOMEM;
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    int rc = mp_buf_puts(b, h1);
    rc = rc ? rc : mp_buf_puts(b, h2);
    rc = rc ? rc : mp_buf_puts(b, h3);
    double tot = 0, cum = 0;
    rc = rc ? rc : total_ms(g, ng, &tot);
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    rc = rc || !r ? rc : fill_cats(r, g, ng);
    for (size_t i = 0; i < ng && !rc; i++) {
        rc = row(t, ls, &g[i], modules, &csv, &cell);
        rc = rc ? rc : pct_cells(&csv, &cell, g[i].sum / 1000, tot, &cum);
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    free(g);
    return rc;
}

/* The Categories cell: the group's categories, sorted, as a Python list. */
static int cats_cell(struct cgroup *g, struct mp_csv *csv, struct mp_buf *cell)
{
    qsort(g->cats, (size_t)g->ncats, sizeof(char *), cmp_str_ptr);
    mp_buf_reset(cell);
    int rc = tl_pylist_repr(cell, g->cats, (size_t)g->ncats);
    return rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
}

static int key_cells(const struct mp_trace_tree *t, const struct cgroup *g, struct mp_csv *csv)
{
    int rc = mp_csv_str(csv, g->key);
    if (t->recompute)
        rc = rc ? rc : mp_csv_str(csv, g->recompute ? "True" : "False");
    return rc;
}

static int by_category_row(const struct mp_trace_tree *t, const struct lset *ls, struct cgroup *g,
                           bool modules, struct mp_csv *csv, struct mp_buf *cell)
{
    (void)ls;
    (void)modules;
    int rc = key_cells(t, g, csv);
    rc = rc ? rc : mp_csv_fmt(csv, "%llu", (unsigned long long)g->count);
    return rc ? rc : tl_csv_float(csv, cell, g->sum / 1000, true);
}

static int sheet_by_category(struct mp_report *r, const struct mp_trace_tree *t,
                             const struct lset *ls, struct mp_buf *b)
{
    return launcher_summary(r, t, ls, false, false,
                            t->recompute ? "op category,is_recompute," : "op category,",
                            "Count,total_direct_kernel_time_ms,Percentage (%),"
                            "Cumulative Percentage (%)\n",
                            "", by_category_row, b);
}

static int ops_summary_row(const struct mp_trace_tree *t, const struct lset *ls, struct cgroup *g,
                           bool modules, struct mp_csv *csv, struct mp_buf *cell)
{
    (void)ls;
    (void)modules;
    int rc = key_cells(t, g, csv);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sum, true);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sub, true);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sum / 1000, true);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sub / 1000, true);
    rc = rc ? rc : mp_csv_fmt(csv, "%llu", (unsigned long long)g->count);
    return rc ? rc : cats_cell(g, csv, cell);
}

static int sheet_ops_summary(const struct mp_trace_tree *t, const struct lset *ls, struct mp_buf *b)
{
    return launcher_summary(NULL, t, ls, true, false, t->recompute ? "name,is_recompute," : "name,",
                            "total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
                            "total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,"
                            "Categories,Percentage (%),Cumulative Percentage (%)\n",
                            "", ops_summary_row, b);
}

/* ---- inference report: module summaries ---- */

/* Python's re.sub(r"_\d+", "", s). malloc'd. */
static char *strip_digit_suffixes(const char *s)
{
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r)
        tl_strip_digit_suffixes(s, n, r);
    return r;
}

/* TraceLens's traverse_parents_and_get_callstack(filter=("nn.Module",)):
 * the op's name, then each ancestor whose name (cut to 256 characters plus
 * "..") holds "nn.Module"; parent_module is the second entry (or "NA") with
 * "_<digits>" removed. */
static int launcher_stacks(const struct mp_trace_tree *t, struct lset *ls)
{
    struct mp_buf b, nm;
    mp_buf_init(&b, 0);
    mp_buf_init(&nm, 0);
    const char **frames = NULL;
    size_t capf = 0;
    char **owned = NULL;
    int rc = 0;
    for (size_t i = 0; i < ls->n && !rc; i++) {
        struct launcher *L = &ls->v[i];
        size_t nf = 0, depth = 0;
        for (int32_t p = L->uid; p >= 0; p = t->parent[p])
            depth++;
        if (depth + 1 > capf) {
            const char **nfr = mp_reallocarray(frames, depth + 1, sizeof(char *));
            char **no = mp_reallocarray(owned, depth + 1, sizeof(char *));
            if (nfr)
                frames = nfr;
            if (no)
                owned = no;
            if (!nfr || !no) {
                rc = MP_ENOMEM;
                break;
            }
            capf = depth + 1;
        }
        size_t nown = 0;
        frames[nf++] = mp_trace_tree_name(t, L->uid);
        for (int32_t p = t->parent[L->uid]; p >= 0 && !rc; p = t->parent[p]) {
            const char *name = mp_trace_tree_name(t, p);
            size_t len = strlen(name), cut = tl_utf8_prefix(name, len, 256);
            if (cut < len) {
                char *c = malloc(cut + 3);
                if (!c) {
                    rc = MP_ENOMEM;
                    break;
                }
                memcpy(c, name, cut);
                memcpy(c + cut, "..", 3);
                owned[nown++] = c;
                name = c;
            }
            if (strstr(name, "nn.Module"))
                frames[nf++] = name;
        }
        mp_buf_reset(&b);
        rc = rc ? rc : tl_pylist_repr(&b, frames, nf);
        L->stack = rc ? NULL : mp_strdup(mp_buf_cstr(&b));
        L->module = rc ? NULL : strip_digit_suffixes(nf > 1 ? frames[1] : "NA");
        if (!rc && (!L->stack || !L->module))
            rc = MP_ENOMEM;
        for (size_t j = 0; j < nown; j++)
            free(owned[j]);
    }
    free(frames);
    free(owned);
    mp_buf_fini(&b);
    mp_buf_fini(&nm);
    return rc;
}

static int by_category_module_row(const struct mp_trace_tree *t, const struct lset *ls,
                                  struct cgroup *g, bool modules, struct mp_csv *csv,
                                  struct mp_buf *cell)
{
    (void)t;
    const struct launcher *L = &ls->v[g->first];
    int rc = mp_csv_str(csv, L->category);
    if (modules)
        rc = rc ? rc : mp_csv_str(csv, L->module);
    rc = rc ? rc : mp_csv_fmt(csv, "%llu", (unsigned long long)g->count);
    if (modules)
        rc = rc ? rc : mp_csv_str(csv, L->stack);
    return rc ? rc : tl_csv_float(csv, cell, g->sum / 1000, true);
}

/* get_df_kernel_launchers_summary_by_category_module */
static int sheet_by_category_module(struct mp_report *r, const struct mp_trace_tree *t,
                                    struct lset *ls, bool modules, struct mp_buf *b)
{
    size_t nc;
    struct cgroup *cg = group_launchers(t, ls, false, false, &nc); /* for the views */
    if (!cg)
        return MP_ENOMEM;
    int rc = fill_cats(r, cg, nc);
    free(cg);
    return rc ? rc
              : launcher_summary(NULL, t, ls, false, modules,
                                 modules ? "op category,parent_module,Count,call_stack_first,"
                                         : "op category,Count,",
                                 "total_direct_kernel_time_ms,Percentage (%),"
                                 "Cumulative Percentage (%)\n",
                                 "", by_category_module_row, b);
}

static int ops_summary_module_row(const struct mp_trace_tree *t, const struct lset *ls,
                                  struct cgroup *g, bool modules, struct mp_csv *csv,
                                  struct mp_buf *cell)
{
    const struct launcher *L = &ls->v[g->first];
    int rc = mp_csv_str(csv, mp_trace_tree_name(t, L->uid));
    if (modules)
        rc = rc ? rc : mp_csv_str(csv, L->module);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sum, true);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sub, true);
    rc = rc ? rc : mp_csv_fmt(csv, "%llu", (unsigned long long)g->count);
    rc = rc ? rc : tl_csv_float(csv, cell, g->sum / 1000, true);
    rc = rc ? rc : mp_csv_fmt(csv, "%llu", (unsigned long long)g->count);
    rc = rc ? rc : cats_cell(g, csv, cell);
    if (modules)
        rc = rc ? rc : mp_csv_str(csv, L->stack);
    return rc;
}

/* get_df_kernel_launchers_summary_module */
static int sheet_ops_summary_module(const struct mp_trace_tree *t, struct lset *ls, bool modules,
                                    struct mp_buf *b)
{
    return launcher_summary(NULL, t, ls, true, modules, modules ? "name,parent_module," : "name,",
                            "total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
                            "total_subtree_kernel_time_count,total_direct_kernel_time_ms,Count,"
                            "Categories,",
                            modules ? "call_stack_first,Percentage (%),Cumulative Percentage (%)\n"
                                    : "Percentage (%),Cumulative Percentage (%)\n",
                            ops_summary_module_row, b);
}

/* ---- ops_unique_args ---- */

struct ugroup {
    struct mp_buf key; /* cells of the grouping columns, \x1f separated */
    int32_t ex_uid;
    size_t first; /* launcher index of the first member */
    double *direct, *sub;
    size_t n, nsub, capd, caps;
    /* kernel details: per position durations of members with the template's length */
    size_t nk;     /* template length */
    double **kdur; /* [nk][n] */
    size_t nkrows;
    double sum_direct;
    double ts_min; /* earliest launcher ts (first_occurrence_time) */
    int32_t *mem;  /* --include_overlap_info: member launchers (uids) */
    size_t nmem, capm;
};

static int cmp_ugroup(const void *a, const void *b)
{
    const struct ugroup *x = a, *y = b;
    if (x->sum_direct != y->sum_direct)
        return x->sum_direct > y->sum_direct ? -1 : 1;
    return x->ex_uid < y->ex_uid ? -1 : (x->ex_uid > y->ex_uid ? 1 : 0);
}

// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int ug_push(double **v, size_t *n, size_t *cap, double x)
{
    if (MP_GROW(*v, *cap, *n + 1, 8))
        return MP_ENOMEM;
    (*v)[(*n)++] = x;
    return 0;
}

/* The groups of ops_unique_args, in first-appearance order until sorted. */
struct ugroups {
    struct ugroup *g;
    size_t ng;
    struct mp_intern *keys;
    int32_t *gid; /* group of each key id, -1 before its first row */
    size_t gcap;
    int32_t last_gid; /* the group of the previous row */
    bool ids_sorted;  /* pandas sums by np.add.reduceat */
    double total;     /* the sorted sum column's sum */
    double ts0;       /* earliest launcher ts */
    /* a launcher's key parts (ua_parts) -> its key id, -1 before the parts'
     * first launcher, the only one whose text key is built */
    struct mp_intern *parts;
    int32_t *pkey;
    size_t cap_pkey;
};

static void ugroups_fini(struct ugroups *gs)
{
    for (size_t i = 0; i < gs->ng; i++) {
        struct ugroup *G = &gs->g[i];
        mp_buf_fini(&G->key);
        free(G->direct);
        free(G->sub);
        free(G->mem);
        for (size_t k = 0; k < G->nk; k++)
            free(G->kdur ? G->kdur[k] : NULL);
        free(G->kdur);
    }
    free(gs->g);
    free(gs->gid);
    mp_intern_free(gs->keys);
    mp_intern_free(gs->parts);
    free(gs->pkey);
}

/* Launcher L's group key: name [, overlapping kernel names], category
 * [, parent module], process/thread names, args [, num_kernels]
 * [, is_recompute], joined by \x1f as they are printed. */
static int ua_key(const struct mp_trace_tree *t, const struct launcher *L, struct tl_argkeys *ak,
                  const struct mp_report_opts *o, struct tl_meta_names *m, struct tl_overlap *ov,
                  struct mp_buf *key)
{
    const struct mp_trace_store *s = t->s;
    int32_t u = L->uid;
    const char *const *mn = tl_meta_names_of(m, s, u);
    if (!mn)
        return MP_ENOMEM;
    mp_buf_reset(key);
    const char *cells[7] = {mp_trace_tree_name(t, u)};
    int ncell = 1;
    if (ov)
        cells[ncell++] = tl_ovinfo_names(tl_overlap_launcher(ov, u));
    cells[ncell++] = L->category;
    if (o->group_by_parent_module)
        cells[ncell++] = L->module;
    for (int q = 0; q < 3; q++)
        cells[ncell++] = mn[q];
    int rc = 0;
    for (int c = 0; c < ncell && !rc; c++) {
        rc = c ? mp_buf_putc(key, '\x1f') : 0;
        rc = rc ? rc : mp_buf_puts(key, cells[c]);
    }
    const char *ak4 = rc ? NULL : tl_argkeys_get(ak, s, u);
    if (!rc && !ak4)
        rc = MP_ENOMEM;
    rc = rc ? rc : mp_buf_putc(key, '\x1f');
    rc = rc ? rc : mp_buf_puts(key, ak4);
    if (o->group_by_num_kernels) /* direct kernels, as len(kernel_details) */
        rc = rc ? rc : mp_buf_printf(key, "\x1f%zu", L->nk);
    if (t->recompute)
        rc = rc ? rc
                : mp_buf_puts(key, t->recompute[u] ? "\x1fTrue"
                                                   : "\x1f"
                                                     "False");
    return rc;
}

/* Appends the durations of L's kernels to G's kernel details when L has
 * the template's kernel count. */
static int ua_add_kernels(const struct mp_trace_store *s, struct ugroup *G,
                          const struct launcher *L)
{
    if (L->nk != G->nk)
        return 0;
    for (size_t k = 0; k < G->nk; k++) {
        size_t kn = G->nkrows;
        double *arr = G->kdur[k];
        /* capacity doubles whenever the row count reaches a power of two */
        if (kn == 0 || (kn & (kn - 1)) == 0) {
            size_t nc = kn ? kn * 2 : 1;
            double *na = mp_reallocarray(arr, nc, sizeof(double));
            if (!na)
                return MP_ENOMEM;
            arr = na;
            G->kdur[k] = arr;
        }
        int32_t ku = L->k[k];
        arr[kn] = (s->flags[ku] & MP_EV_DUR) ? s->dur[ku] : 0.0;
    }
    G->nkrows++;
    return 0;
}

/* What ua_key is made of without overlap info: texts that stay put while
 * the groups are made (equal pointers, equal texts) and ids, so equal parts
 * make equal keys. */
struct ua_parts {
    const char *name, *category, *module, *args;
    int32_t pid, tid;
    size_t nk;
    uint8_t recompute;
};

/* The id of launcher L's key (ua_key) in gs->keys; the text key is built
 * only for the first launcher of its parts. */
static int ua_key_id(const struct mp_trace_tree *t, const struct launcher *L, struct tl_argkeys *ak,
                     const struct mp_report_opts *o, struct tl_meta_names *m, struct ugroups *gs,
                     struct mp_buf *key, int32_t *id)
{
    const struct mp_trace_store *s = t->s;
    int32_t u = L->uid;
    struct ua_parts p = {.name = mp_trace_tree_name(t, u),
                         .category = L->category,
                         .module = o->group_by_parent_module ? L->module : NULL,
                         .args = tl_argkeys_get(ak, s, u),
                         .pid = s->pid[u],
                         .tid = s->tid[u],
                         .nk = o->group_by_num_kernels ? L->nk : 0,
                         .recompute = t->recompute ? t->recompute[u] : 0};
    if (!p.args)
        return MP_ENOMEM;
    char pb[4 * sizeof(char *) + 2 * sizeof(int32_t) + sizeof(size_t) + 1];
    char *q = pb; /* packed: no padding bytes in the key */
    const char *ptrs[4] = {p.name, p.category, p.module, p.args};
    memcpy(q, ptrs, sizeof(ptrs));
    q += sizeof(ptrs);
    memcpy(q, &p.pid, sizeof(p.pid));
    q += sizeof(p.pid);
    memcpy(q, &p.tid, sizeof(p.tid));
    q += sizeof(p.tid);
    memcpy(q, &p.nk, sizeof(p.nk));
    q += sizeof(p.nk);
    *q = (char)p.recompute;
    int32_t part_id = mp_intern_add(gs->parts, pb, sizeof(pb));
    if (part_id < 0 || tl_gid_reserve(&gs->pkey, &gs->cap_pkey, part_id))
        return MP_ENOMEM;
    if (gs->pkey[part_id] >= 0) {
        *id = gs->pkey[part_id];
        return 0;
    }
    int rc = ua_key(t, L, ak, o, m, NULL, key);
    *id = rc ? -1 : mp_intern_add(gs->keys, key->data, key->len);
    if (!rc && *id < 0)
        rc = MP_ENOMEM;
    if (!rc)
        gs->pkey[part_id] = *id;
    return rc;
}

/* Adds launcher i to the group of key id (its text in key at the key's
 * first row, the only one that reads it), a new group at that row. */
static int ua_add(const struct mp_trace_tree *t, struct ugroups *gs, const struct lset *ls,
                  size_t i, int32_t id, const struct mp_buf *key, bool ov)
{
    const struct mp_trace_store *s = t->s;
    const struct launcher *L = &ls->v[i];
    int32_t u = L->uid;
    if (id < 0 || tl_gid_reserve(&gs->gid, &gs->gcap, id))
        return MP_ENOMEM;
    struct ugroup *G;
    int rc = 0;
    if (gs->gid[id] >= 0 && gs->gid[id] < gs->last_gid)
        gs->ids_sorted = false; /* a row of an earlier group after a later one */
    if (gs->gid[id] < 0) {
        gs->gid[id] = (int32_t)gs->ng;
        G = &gs->g[gs->ng++];
        mp_buf_init(&G->key, 0);
        rc = mp_buf_append(&G->key, key->data, key->len);
        G->ex_uid = u;
        G->first = i;
        G->ts_min = s->ts[u];
        G->nk = L->nk;
        G->kdur = calloc(G->nk ? G->nk : 1, sizeof(double *));
        if (!G->kdur)
            rc = MP_ENOMEM;
    } else {
        G = &gs->g[gs->gid[id]];
    }
    gs->last_gid = (int32_t)(G - gs->g);
    rc = rc ? rc : ug_push(&G->direct, &G->n, &G->capd, L->direct);
    rc = rc ? rc : ug_push(&G->sub, &G->nsub, &G->caps, L->subtree);
    if (ov && !rc && MP_GROW(G->mem, G->capm, G->nmem + 1, 4))
        rc = MP_ENOMEM;
    if (ov && !rc)
        G->mem[G->nmem++] = u;
    if (s->ts[u] < G->ts_min)
        G->ts_min = s->ts[u];
    return rc ? rc : ua_add_kernels(s, G, L);
}

static int ua_group(const struct mp_trace_tree *t, const struct lset *ls, struct tl_argkeys *ak,
                    const struct mp_report_opts *o, const struct tl_meta *m, struct tl_overlap *ov,
                    struct ugroups *gs)
{
    gs->keys = mp_intern_new();
    gs->parts = mp_intern_new();
    gs->g = calloc(ls->n ? ls->n : 1, sizeof(*gs->g));
    if (!gs->keys || !gs->parts || !gs->g)
        return MP_ENOMEM;
    struct mp_buf key;
    mp_buf_init(&key, 0);
    struct tl_meta_names mn;
    tl_meta_names_init(&mn, m);
    int rc = 0;
    for (size_t i = 0; i < ls->n && !rc; i++) {
        int32_t id = -1;
        if (ov) {
            rc = ua_key(t, &ls->v[i], ak, o, &mn, ov, &key);
            id = rc ? -1 : mp_intern_add(gs->keys, key.data, key.len);
        } else {
            rc = ua_key_id(t, &ls->v[i], ak, o, &mn, gs, &key, &id);
        }
        rc = rc ? rc : ua_add(t, gs, ls, i, id, &key, ov != NULL);
    }
    tl_meta_names_fini(&mn);
    mp_buf_fini(&key);
    return rc;
}

/* Sorts by total_direct_kernel_time_sum as pandas' groupby(sort=False)
 * sums it; the total is Series.sum of the sorted column (numpy's pairwise
 * sum). */
static int ua_sort(struct ugroups *gs)
{
    struct ugroup *g = gs->g;
    size_t ng = gs->ng;
    for (size_t i = 0; i < ng; i++)
        g[i].sum_direct = mp_sum_pandas_group(g[i].direct, g[i].n, gs->ids_sorted);
    qsort(g, ng, sizeof(*g), cmp_ugroup);
    double *sorted_sums = malloc((ng ? ng : 1) * sizeof(double));
    if (!sorted_sums)
        return MP_ENOMEM;
    gs->ts0 = INFINITY;
    for (size_t i = 0; i < ng; i++) {
        sorted_sums[i] = g[i].sum_direct;
        if (g[i].ts_min < gs->ts0)
            gs->ts0 = g[i].ts_min;
    }
    gs->total = mp_sum_pairwise(sorted_sums, ng);
    free(sorted_sums);
    return 0;
}

/* What the value functions of the column table see while one group's row is
 * printed. */
struct tl_emit {
    const struct mp_trace_tree *t;
    const struct lset *ls;
    struct tl_overlap *ov;
    const struct ugroups *gs;
    struct ugroup *G;
    struct mp_csv *csv;
    struct mp_buf *cell;
    struct tl_stats st[2]; /* total_direct_kernel_time, total_subtree_kernel_time */
    double cum;            /* percentage so far */
};

enum { UA_OV = 1, UA_MOD = 2, UA_NK = 4, UA_RECOMP = 8, UA_FIRST = 16 };

/* Every key cell (see ua_key). */
static int ua_keycells(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return tl_csv_key_cells(e->csv, &e->G->key);
}

static int ua_count(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%zu", e->G->n);
}

static int ua_first_time(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return tl_csv_float(e->csv, e->cell, e->G->ts_min - e->gs->ts0, true);
}

/* A figure of direct then subtree kernel time; std is left empty for both
 * when the direct one has none. */
static int ua_stats(struct tl_emit *e, const struct tl_col *c)
{
    bool present = c->field != offsetof(struct tl_stats, std) || e->st[0].has_std;
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++)
        rc = tl_csv_float(e->csv, e->cell, *(const double *)((const char *)&e->st[k] + c->field),
                          present);
    return rc;
}

static int ua_ex_uid(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%d", e->G->ex_uid);
}

static int ua_stack(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, e->ls->v[e->G->first].stack);
}

static int ua_kernel_details(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    const struct ugroup *G = e->G;
    return tl_kernel_details_cells(e->t, e->ls->v[G->first].k, G->nk, G->kdur, G->nkrows, e->csv,
                                   e->cell);
}

static int ua_overlap(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    const struct ugroup *G = e->G;
    const struct tl_ovinfo **mi =
        malloc((G->nmem ? G->nmem : 1) * sizeof(*mi)); // NOLINT(bugprone-sizeof-expression)
    if (!mi)
        return MP_ENOMEM;
    for (size_t q = 0; q < G->nmem; q++)
        mi[q] = tl_overlap_launcher(e->ov, G->mem[q]);
    int rc = tl_overlap_cells(mi, G->nmem, false, e->csv, e->cell);
    free(mi);
    return rc;
}

static int ua_pct(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    double pct = e->G->sum_direct / e->gs->total * 100;
    e->cum += pct;
    int rc = tl_csv_float(e->csv, e->cell, pct, true);
    return rc ? rc : tl_csv_float(e->csv, e->cell, e->cum, true);
}

#define UASTAT(h, f) TL_FIELD(h, ua_stats, struct tl_stats, f)

/* The columns of ops_unique_args and its kl_overlap twin. */
static const struct tl_col uacols[] = {
    TL_COL("name", 0, ua_keycells),
    TL_KEY("overlapping_kernel_names", UA_OV),
    TL_KEY("op category", 0),
    TL_KEY("parent_module", UA_MOD),
    TL_META_KEYS,
    TL_ARGS_KEYS,
    TL_KEY("num_kernels", UA_NK),
    TL_KEY("is_recompute", UA_RECOMP),
    TL_COL("operation_count", 0, ua_count),
    TL_COL("first_occurrence_time", UA_FIRST, ua_first_time),
    UASTAT("total_direct_kernel_time_mean", mean),
    TL_KEY("total_subtree_kernel_time_mean", 0),
    UASTAT("total_direct_kernel_time_median", median),
    TL_KEY("total_subtree_kernel_time_median", 0),
    UASTAT("total_direct_kernel_time_std", std),
    TL_KEY("total_subtree_kernel_time_std", 0),
    UASTAT("total_direct_kernel_time_min", min),
    TL_KEY("total_subtree_kernel_time_min", 0),
    UASTAT("total_direct_kernel_time_max", max),
    TL_KEY("total_subtree_kernel_time_max", 0),
    UASTAT("total_direct_kernel_time_sum", sum),
    TL_KEY("total_subtree_kernel_time_sum", 0),
    TL_COL("ex_UID", 0, ua_ex_uid),
    TL_COL("call_stack", UA_MOD, ua_stack),
    TL_COL("kernel_details_summary", 0, ua_kernel_details),
    TL_KEY("trunc_kernel_details", 0),
    TL_COL("overlapping_kernels_details_summary", UA_OV, ua_overlap),
    TL_OVERLAP_KEYS(UA_OV),
    TL_COL("Percentage (%)", 0, ua_pct),
    TL_KEY("Cumulative Percentage (%)", 0),
};

#define N_UACOLS (sizeof(uacols) / sizeof(uacols[0]))

/* One group's row, column by column. */
static int ua_emit(struct tl_emit *e, unsigned when)
{
    const struct ugroup *G = e->G;
    int rc = tl_group_stats(G->direct, G->n, e->gs->ids_sorted, &e->st[0]);
    rc = rc ? rc : tl_group_stats(G->sub, G->n, e->gs->ids_sorted, &e->st[1]);
    rc = rc ? rc : tl_cols_cells(e, uacols, N_UACOLS, when);
    return rc ? rc : mp_csv_end_row(e->csv);
}

/* ops_unique_args; with ov, ops_unique_args_kl_overlap: the groups also
 * split by the overlapping kernel names, three more column blocks */
static int sheet_unique_args(const struct mp_trace_tree *t, const struct lset *ls,
                             struct tl_argkeys *ak, const struct mp_report_opts *o,
                             struct tl_overlap *ov, struct mp_buf *b)
{
    unsigned when = (ov ? UA_OV : 0) | (o->group_by_parent_module ? UA_MOD : 0) |
                    (o->group_by_num_kernels ? UA_NK : 0) | (t->recompute ? UA_RECOMP : 0) |
                    (o->first_occurrence_time ? UA_FIRST : 0);
    struct tl_meta m;
    struct ugroups gs = {.last_gid = -1, .ids_sorted = true};
    int rc = tl_meta_build(t->s, &m) ? MP_ENOMEM : 0;
    rc = rc ? rc : ua_group(t, ls, ak, o, &m, ov, &gs);
    rc = rc ? rc : ua_sort(&gs);
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    rc = rc ? rc : tl_cols_header(b, uacols, N_UACOLS, when);
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    struct tl_emit e = {.t = t, .ls = ls, .ov = ov, .gs = &gs, .csv = &csv, .cell = &cell};
    for (size_t i = 0; i < gs.ng && !rc; i++) {
        e.G = &gs.g[i];
        rc = ua_emit(&e, when);
    }
    mp_buf_fini(&cell);
    ugroups_fini(&gs);
    tl_meta_fini(&m);
    return rc;
}

int tl_sheets_ops(struct mp_report *r, const struct mp_trace_tree *t, struct tl_argkeys *ak,
                  const struct mp_report_opts *o, struct tl_overlap *ov,
                  struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    struct lset ls;
    int rc = build_launchers(t, &ls);
    if (rc)
        return rc;
    if (!rc && o->group_by_parent_module)
        rc = launcher_stacks(t, &ls);
    if (!rc && ls.n > 0 && o->inference) {
        bool mods = o->group_by_parent_module;
        struct mp_buf *b = new_sheet(r, "ops_summary_by_category");
        rc = b ? sheet_by_category_module(r, t, &ls, mods, b) : MP_ENOMEM;
        b = rc ? NULL : new_sheet(r, "ops_summary");
        rc = rc ? rc : (b ? sheet_ops_summary_module(t, &ls, mods, b) : MP_ENOMEM);
        b = rc ? NULL : new_sheet(r, "ops_unique_args");
        rc = rc ? rc : (b ? sheet_unique_args(t, &ls, ak, o, NULL, b) : MP_ENOMEM);
        b = rc || !ov ? NULL : new_sheet(r, "ops_unique_args_kl_overlap");
        if (!rc && ov)
            rc = b ? sheet_unique_args(t, &ls, ak, o, ov, b) : MP_ENOMEM;
    } else if (!rc && ls.n > 0) {
        struct mp_buf *b = new_sheet(r, "ops_summary_by_category");
        rc = b ? sheet_by_category(r, t, &ls, b) : MP_ENOMEM;
        b = rc ? NULL : new_sheet(r, "ops_summary");
        rc = rc ? rc : (b ? sheet_ops_summary(t, &ls, b) : MP_ENOMEM);
        b = rc ? NULL : new_sheet(r, "ops_unique_args");
        rc = rc ? rc : (b ? sheet_unique_args(t, &ls, ak, o, NULL, b) : MP_ENOMEM);
        b = rc || !ov ? NULL : new_sheet(r, "ops_unique_args_kl_overlap");
        if (!rc && ov)
            rc = b ? sheet_unique_args(t, &ls, ak, o, ov, b) : MP_ENOMEM;
    }
    lset_fini(&ls);
    return rc;
}
