/* Per-category perf sheets of the TraceLens report (docs/tracelens-compat.md):
 * GEMM, UnaryElementwise, BinaryElementwise, Normalization (one table each)
 * and <family>_fwd for the others (SDPA_fwd, CONV_fwd, Reduce_fwd, ...).
 *
 * Every event whose name maps to a perf-model class of the family is a row,
 * at any depth (nested modelled ops are counted twice, as in TraceLens): its
 * kernels are the GPU events of its subtree, its kernel time their busy time,
 * its FLOPs/bytes from src/roofline. Rows are grouped by name and parameter text,
 * aggregated as pandas does, and sorted by total kernel time. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/report.h>
#include <magpie/roofline.h>

#include "tracelens_int.h"

struct prow {
    int32_t uid;
    int32_t *k; /* subtree kernels by ts */
    size_t nk;
    double kt; /* busy time of k */
    double gflops, mb, fpb, tbs, tfs;
    bool has_mb;
    const char *spec; /* compute spec, interned in the sheet's texts */
    struct mp_roofline_roofline rl;
    size_t cell0; /* the row's params: cells[cell0 .. cell0 + ncells) of its sheet */
    uint8_t ncells;
    int32_t group;
    int part; /* _bwd sheets: 0 = backward metrics, 1 = rows moved from _fwd */
    uint8_t recompute;
    uint8_t nested; /* an ancestor event is a row of the same table */
};

/* One param of a row: its column in pkeys and its text (interned: a
 * table's rows repeat a few shapes many times). */
struct pcell {
    int32_t text;
    uint8_t key;
    bool none; /* the value was None (an empty cell, apart in grouping) */
};

struct psheet {
    const char *family;
    struct prow *rows;
    size_t n, cap;
    const char *pkeys[MP_ROOFLINE_MAX_PARAMS * 2]; /* union of param keys, first appearance */
    int npkeys;
    struct pcell *cells; /* the rows' params, back to back */
    size_t ncells, capcells;
    struct mp_intern *texts; /* param texts and compute specs; borrowed, shared by the sheets */
};

/* The text of param column j of row r (the last one given), NULL when the
 * row lacks it; *none tells a None value. */
static const char *row_param(const struct psheet *sh, const struct prow *r, int j, bool *none)
{
    const char *txt = NULL;
    *none = false;
    for (size_t c = r->cell0; c < r->cell0 + r->ncells; c++) {
        if (sh->cells[c].key != j)
            continue;
        txt = mp_intern_str(sh->texts, sh->cells[c].text);
        *none = sh->cells[c].none;
    }
    return txt;
}

/* One sheet for forward and backward ops; the inference report keeps
 * Normalization apart (Normalization_fwd). */
static bool single_table(const char *family, bool inference)
{
    return strcmp(family, "GEMM") == 0 || strcmp(family, "UnaryElementwise") == 0 ||
           strcmp(family, "BinaryElementwise") == 0 ||
           (!inference && strcmp(family, "Normalization") == 0);
}

static int add_row(struct psheet *sh, const struct mp_trace_tree *t, const char *const *annot,
                   struct mp_roofline_memo *memo, int32_t uid, const struct mp_roofline_arch *arch,
                   bool bwd, int part)
{
    struct prow r = {
        .uid = uid, .group = -1, .part = part, .recompute = t->recompute ? t->recompute[uid] : 0};
    struct mp_roofline_result pr;
    int rc = tl_model_op(t, annot, uid, bwd, memo, &r.k, &r.nk, &r.kt, &pr);
    if (rc)
        return rc;
    if (pr.status != MP_ROOFLINE_OK || (bwd && pr.status_bwd != MP_ROOFLINE_OK)) {
        /* NotImplementedError and other failures drop the row, as TraceLens */
        mp_roofline_result_fini(&pr);
        free(r.k);
        return 0;
    }
    bool has_bytes = bwd ? pr.has_bytes_bwd : pr.has_bytes;
    double bytes = bwd ? pr.bytes_bwd : pr.bytes;
    r.gflops = bwd ? pr.gflops_bwd : pr.gflops;
    r.tfs = r.kt > 0 ? (r.gflops / 1e3) / (r.kt / 1e6) : NAN;
    r.has_mb = has_bytes;
    if (has_bytes) {
        r.mb = bytes / (1024.0 * 1024.0);
        r.fpb = bytes > 0 ? (r.gflops * 1e9) / bytes : NAN;
        r.tbs = r.kt > 0 ? (bytes / 1e12) / (r.kt / 1e6) : NAN;
    } else {
        r.mb = r.fpb = r.tbs = NAN;
    }
    const char *spec = pr.compute_spec ? pr.compute_spec : "";
    int32_t spec_id = mp_intern_add(sh->texts, spec, strlen(spec));
    if (spec_id < 0) {
        mp_roofline_result_fini(&pr);
        free(r.k);
        return MP_ENOMEM;
    }
    r.spec = mp_intern_str(sh->texts, spec_id);
    if (arch)
        mp_roofline_roofline(arch, r.spec, r.gflops, has_bytes, bytes, r.kt, &r.rl);
    /* param columns: union in first-appearance order */
    int idx[MP_ROOFLINE_MAX_PARAMS];
    for (int i = 0; i < pr.n_params; i++) {
        int j = 0;
        while (j < sh->npkeys && strcmp(sh->pkeys[j], pr.params[i].key) != 0)
            j++;
        if (j == sh->npkeys) {
            if (sh->npkeys >= (int)(sizeof(sh->pkeys) / sizeof(sh->pkeys[0]))) {
                mp_roofline_result_fini(&pr);
                free(r.k);
                return MP_ENOMEM;
            }
            sh->pkeys[sh->npkeys++] = pr.params[i].key; /* static strings */
        }
        idx[i] = j;
    }
    if (sh->ncells + (size_t)pr.n_params > sh->capcells) {
        size_t nc = sh->capcells ? sh->capcells * 2 : 1024;
        while (nc < sh->ncells + (size_t)pr.n_params)
            nc *= 2;
        struct pcell *ncl = mp_reallocarray(sh->cells, nc, sizeof(*ncl));
        if (!ncl)
            rc = MP_ENOMEM;
        else {
            sh->cells = ncl;
            sh->capcells = nc;
        }
    }
    r.cell0 = sh->ncells;
    for (int i = 0; i < pr.n_params && !rc; i++) {
        const char *txt = pr.params[i].none ? "" : pr.params[i].text;
        int32_t id = mp_intern_add(sh->texts, txt, strlen(txt));
        if (id < 0)
            rc = MP_ENOMEM;
        else
            sh->cells[r.cell0 + r.ncells++] =
                (struct pcell){.text = id, .key = (uint8_t)idx[i], .none = pr.params[i].none};
    }
    mp_roofline_result_fini(&pr);
    if (!rc && MP_GROW(sh->rows, sh->cap, sh->n + 1, 64))
        rc = MP_ENOMEM;
    if (rc) {
        free(r.k);
        return rc;
    }
    sh->ncells += r.ncells;
    sh->rows[sh->n++] = r;
    return 0;
}

static void sheet_fini(struct psheet *sh)
{
    for (size_t i = 0; i < sh->n; i++)
        free(sh->rows[i].k);
    free(sh->rows);
    free(sh->cells);
}

struct pgroup {
    size_t first; /* row index of the first member */
    int part;
    bool all_nested; /* every member sits inside another row of the table */
    size_t *members;
    size_t n, cap;
    double kt_sum;
    bool ids_sorted; /* pandas' reduceat path (one group: its ids are sorted) */
    /* kl_overlap sheets: the groups of the same name and params together */
    int32_t base;     /* id of the key without the overlap names */
    double base_kt;   /* their kernel time */
    int32_t base_uid; /* their smallest UID_first */
};

static int cmp_pgroup(const void *a, const void *b)
{
    const struct pgroup *x = a, *y = b;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    if (x->base_kt != y->base_kt) /* kl_overlap: TraceLens's _group_total_time, */
        return x->base_kt > y->base_kt ? -1 : 1;
    if (x->base_uid != y->base_uid) /* _group_min_uid; equal in the plain sheets */
        return x->base_uid < y->base_uid ? -1 : 1;
    if (x->kt_sum != y->kt_sum)
        return x->kt_sum > y->kt_sum ? -1 : 1;
    return x->first < y->first ? -1 : (x->first > y->first ? 1 : 0); /* UID_first */
}

/* pandas' "first": the first non-missing value of the group */
static double first_num(const struct psheet *sh, const struct pgroup *g, size_t off)
{
    for (size_t i = 0; i < g->n; i++) {
        double v = *(const double *)((const char *)&sh->rows[g->members[i]] + off);
        if (!isnan(v))
            return v;
    }
    return NAN;
}

/* stats over the non-missing values (pandas skipna) */
static int num_stats(const struct psheet *sh, const struct pgroup *g, size_t off,
                     struct tl_stats *st, size_t *count)
{
    double *v = malloc((g->n ? g->n : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        double x = *(const double *)((const char *)&sh->rows[g->members[i]] + off);
        if (!isnan(x))
            v[k++] = x;
    }
    int rc = tl_group_stats(v, k, g->ids_sorted && k == g->n, st);
    *count = k;
    free(v);
    return rc;
}

static int stat_cells(struct mp_csv *csv, struct mp_buf *cell, const struct tl_stats *st,
                      size_t count, bool with_sum)
{
    int rc = tl_csv_float(csv, cell, st->mean, count > 0);
    rc = rc ? rc : tl_csv_float(csv, cell, st->median, count > 0);
    rc = rc ? rc : tl_csv_float(csv, cell, st->std, st->has_std);
    rc = rc ? rc : tl_csv_float(csv, cell, st->min, count > 0);
    rc = rc ? rc : tl_csv_float(csv, cell, st->max, count > 0);
    if (with_sum)
        rc = rc ? rc : tl_csv_float(csv, cell, st->sum, true);
    return rc;
}

static int args_first_cell(const struct mp_trace_tree *t, const struct psheet *sh,
                           const struct pgroup *g, const char *key, struct mp_csv *csv,
                           struct mp_buf *cell)
{
    mp_buf_reset(cell);
    for (size_t i = 0; i < g->n; i++) {
        int32_t u = sh->rows[g->members[i]].uid;
        struct mp_strview obj = {t->s->args[u], t->s->args_len[u]}, v;
        if (obj.p && mp_trace_json_find(obj, key, &v) == 0) {
            const char *p = v.p;
            if (v.n == 4 && memcmp(p, "null", 4) == 0)
                continue; /* None is skipped by "first" */
            int rc = tl_json_to_pylist_repr(cell, v.p, v.p + v.n);
            if (rc)
                return rc;
            break;
        }
    }
    return mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
}

/* Records one group as a roofline-plot point of the report. */
static int add_point(struct mp_report *rep, const struct mp_trace_tree *t, const struct psheet *sh,
                     const struct pgroup *G, const char *sheet_name, double fpb,
                     const struct tl_stats *tfs, const struct tl_stats *tbs,
                     const struct tl_stats *pct, size_t npct)
{
    struct mp_report_point *np = mp_reallocarray(rep->points, rep->n_points + 1, sizeof(*np));
    if (!np)
        return MP_ENOMEM;
    rep->points = np;
    struct mp_report_point *p = &rep->points[rep->n_points];
    memset(p, 0, sizeof(*p));
    const struct prow *r0 = &sh->rows[G->first];
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = 0;
    for (int j = 0; j < sh->npkeys && !rc; j++) {
        bool none;
        const char *txt = row_param(sh, r0, j, &none);
        if (!txt || none)
            continue;
        rc = mp_buf_printf(&b, "%s%s=%s", b.len ? " " : "", sh->pkeys[j], txt);
    }
    p->name = mp_strdup(mp_trace_tree_name(t, r0->uid));
    p->params = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    if (rc || !p->name || !p->params) {
        free(p->name);
        free(p->params);
        return MP_ENOMEM;
    }
    snprintf(p->sheet, sizeof(p->sheet), "%s", sheet_name);
    snprintf(p->spec, sizeof(p->spec), "%s", r0->spec);
    p->has_ai = !isnan(fpb);
    p->flops_per_byte = fpb;
    p->tflops_s = tfs->mean;
    p->tb_s = tbs->mean;
    p->kernel_us = G->kt_sum;
    p->count = G->n;
    p->has_roofline = npct > 0;
    p->pct_roofline = pct->mean;
    rep->n_points++;
    return 0;
}

/* One per-category sheet; with ov its kl_overlap twin: the groups also split
 * by the overlapping kernel names (ordered after the total of their name and
 * params), three more column blocks, no roofline-plot points. */
static int render(struct mp_report *rep, const char *sheet_name, const struct mp_trace_tree *t,
                  struct psheet *sh, const struct tl_meta *meta,
                  const struct mp_roofline_arch *arch, bool by_nk, bool fix_nested,
                  const struct tl_overlap *ov, struct mp_buf *b)
{
    /* group rows by name + param texts (first appearance) */
    struct mp_intern *keys = mp_intern_new(), *bkeys = ov ? mp_intern_new() : NULL;
    struct pgroup *g = calloc(sh->n ? sh->n : 1, sizeof(*g));
    int32_t *gid = NULL;
    size_t ng = 0, gcap = 0;
    struct mp_buf key, cell;
    mp_buf_init(&key, 0);
    mp_buf_init(&cell, 0);
    int rc = keys && g && (!ov || bkeys) ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < sh->n && !rc; i++) {
        struct prow *r = &sh->rows[i];
        if (fix_nested && r->nested)
            continue;
        int32_t bid = -1;
        mp_buf_reset(&key);
        rc = mp_buf_printf(&key, "%d\x1f%s", r->part, mp_trace_tree_name(t, r->uid));
        for (int j = 0; j < sh->npkeys && !rc; j++) {
            rc = mp_buf_putc(&key, '\x1f');
            /* astype(str) with pandas' string dtype keeps missing values
             * (absent column, None) missing: one group, an empty cell */
            bool none;
            const char *txt = row_param(sh, r, j, &none);
            txt = !txt || none ? "\x1e" : txt;
            rc = rc ? rc : mp_buf_puts(&key, txt);
        }
        if (by_nk)
            rc = rc ? rc : mp_buf_printf(&key, "\x1f%zu", r->nk);
        rc = rc ? rc : mp_buf_putc(&key, r->recompute ? '1' : '0');
        if (ov && !rc) {
            if ((bid = mp_intern_add(bkeys, key.data, key.len)) < 0)
                rc = MP_ENOMEM;
            rc = rc ? rc : mp_buf_putc(&key, '\x1d');
            rc = rc ? rc : mp_buf_puts(&key, tl_ovinfo_names(tl_overlap_launcher(ov, r->uid)));
        }
        int32_t id = rc ? -1 : mp_intern_add(keys, key.data, key.len);
        if (id < 0) {
            rc = MP_ENOMEM;
            break;
        }
        if (tl_gid_reserve(&gid, &gcap, id)) {
            rc = MP_ENOMEM;
            break;
        }
        if (gid[id] < 0) {
            gid[id] = (int32_t)ng;
            g[ng].first = i;
            g[ng].part = r->part;
            g[ng].all_nested = true;
            g[ng].base = bid;
            ng++;
        }
        struct pgroup *G = &g[gid[id]];
        if (MP_GROW(G->members, G->cap, G->n + 1, 8)) {
            rc = MP_ENOMEM;
            break;
        }
        G->members[G->n++] = i;
        G->kt_sum += r->kt;
        if (!r->nested)
            G->all_nested = false;
    }
    /* the sort column Kernel Time (µs)_sum as pandas sums it; the rows of a
     * groupby(sort=True) with several groups are taken as not in key order
     * (Kahan), one group's as sorted (np.add.reduceat) */
    for (size_t q = 0; q < ng && !rc; q++) {
        struct tl_stats st = {0};
        size_t cnt = 0;
        g[q].ids_sorted = ng == 1;
        rc = num_stats(sh, &g[q], offsetof(struct prow, kt), &st, &cnt);
        g[q].kt_sum = st.sum;
    }
    if (ov && !rc) {
        size_t nb = (size_t)mp_intern_count(bkeys) + 1;
        double *bkt = calloc(nb, sizeof(double));
        int32_t *buid = malloc(nb * sizeof(int32_t));
        if (!bkt || !buid)
            rc = MP_ENOMEM;
        for (size_t q = 0; q < nb && !rc; q++)
            buid[q] = INT32_MAX;
        for (size_t q = 0; q < ng && !rc; q++) {
            int32_t u0 = sh->rows[g[q].first].uid;
            bkt[g[q].base] += g[q].kt_sum;
            if (u0 < buid[g[q].base])
                buid[g[q].base] = u0;
        }
        for (size_t q = 0; q < ng && !rc; q++) {
            g[q].base_kt = bkt[g[q].base];
            g[q].base_uid = buid[g[q].base];
        }
        free(bkt);
        free(buid);
    }
    if (!rc)
        qsort(g, ng, sizeof(*g), cmp_pgroup);
    /* header */
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    rc = rc ? rc : mp_csv_str(&csv, "name");
    if (ov)
        rc = rc ? rc : mp_csv_str(&csv, "overlapping_kernel_names_first");
    for (int j = 0; j < sh->npkeys && !rc; j++)
        rc = mp_csv_fmt(&csv, "param: %s", sh->pkeys[j]);
    if (by_nk)
        rc = rc ? rc : mp_csv_str(&csv, "num_kernels");
    if (t->recompute)
        rc = rc ? rc : mp_csv_str(&csv, "is_recompute");
    static const char *const mid[] = {
        "GFLOPS_first",
        "Data Moved (MB)_first",
        "FLOPS/Byte_first",
        "TB/s_mean",
        "TB/s_median",
        "TB/s_std",
        "TB/s_min",
        "TB/s_max",
        "TFLOPS/s_mean",
        "TFLOPS/s_median",
        "TFLOPS/s_std",
        "TFLOPS/s_min",
        "TFLOPS/s_max",
        "process_name_first",
        "process_label_first",
        "thread_name_first",
        "Compute Spec",
    };
    for (size_t j = 0; j < sizeof(mid) / sizeof(mid[0]) && !rc; j++)
        rc = mp_csv_str(&csv, mid[j]);
    if (arch) {
        static const char *const rl[] = {"Roofline Time (µs)_first", "Roofline Bound_first",
                                         "Pct Roofline_mean",        "Pct Roofline_median",
                                         "Pct Roofline_std",         "Pct Roofline_min",
                                         "Pct Roofline_max"};
        for (size_t j = 0; j < sizeof(rl) / sizeof(rl[0]) && !rc; j++)
            rc = mp_csv_str(&csv, rl[j]);
    }
    rc = rc ? rc : mp_csv_str(&csv, "kernel_details__summarize_kernel_stats");
    rc = rc ? rc : mp_csv_str(&csv, "trunc_kernel_details");
    static const char *const ovcols[] = {"overlapping_kernels_details__summarize_kernel_stats",
                                         "trunc_overlapping_kernels_details",
                                         "overlap_pct_mean",
                                         "overlap_pct_median",
                                         "overlap_pct_std",
                                         "overlap_pct_min",
                                         "overlap_pct_max"};
    for (size_t j = 0; ov && j < sizeof(ovcols) / sizeof(ovcols[0]) && !rc; j++)
        rc = mp_csv_str(&csv, ovcols[j]);
    static const char *const tail[] = {
        "Input Dims_first",
        "Input type_first",
        "Input Strides_first",
        "Concrete Inputs_first",
        "Kernel Time (µs)_mean",
        "Kernel Time (µs)_median",
        "Kernel Time (µs)_std",
        "Kernel Time (µs)_min",
        "Kernel Time (µs)_max",
        "Kernel Time (µs)_sum",
        "name_count",
        "UID_first",
    };
    for (size_t j = 0; j < sizeof(tail) / sizeof(tail[0]) && !rc; j++)
        rc = mp_csv_str(&csv, tail[j]);
    rc = rc ? rc : mp_csv_end_row(&csv);
    for (size_t gi = 0; gi < ng && !rc; gi++) {
        struct pgroup *G = &g[gi];
        const struct prow *r0 = &sh->rows[G->first];
        rc = mp_csv_str(&csv, mp_trace_tree_name(t, r0->uid));
        if (ov)
            rc = rc ? rc : mp_csv_str(&csv, tl_ovinfo_names(tl_overlap_launcher(ov, r0->uid)));
        for (int j = 0; j < sh->npkeys && !rc; j++) {
            bool none;
            const char *txt = row_param(sh, r0, j, &none);
            txt = !txt || none ? "" : txt;
            rc = mp_csv_str(&csv, txt);
        }
        if (by_nk)
            rc = rc ? rc : mp_csv_fmt(&csv, "%zu", r0->nk);
        if (t->recompute)
            rc = rc ? rc : mp_csv_str(&csv, r0->recompute ? "True" : "False");
        rc = rc ? rc
                : tl_csv_float(&csv, &cell, first_num(sh, G, offsetof(struct prow, gflops)), true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, first_num(sh, G, offsetof(struct prow, mb)), true);
        rc =
            rc ? rc : tl_csv_float(&csv, &cell, first_num(sh, G, offsetof(struct prow, fpb)), true);
        struct tl_stats st, st_tbs, st_tfs, st_pct = {0};
        size_t cnt, npct = 0;
        rc = rc ? rc : num_stats(sh, G, offsetof(struct prow, tbs), &st_tbs, &cnt);
        rc = rc ? rc : stat_cells(&csv, &cell, &st_tbs, cnt, false);
        rc = rc ? rc : num_stats(sh, G, offsetof(struct prow, tfs), &st_tfs, &cnt);
        rc = rc ? rc : stat_cells(&csv, &cell, &st_tfs, cnt, false);
        const struct mp_trace_store *s = t->s;
        const char *pid = s->pid[r0->uid] >= 0 ? mp_intern_str(s->strings, s->pid[r0->uid]) : "";
        const char *tid = s->tid[r0->uid] >= 0 ? mp_intern_str(s->strings, s->tid[r0->uid]) : "";
        rc = rc ? rc : mp_csv_str(&csv, tl_meta_get(meta, pid, "0", "process_name"));
        rc = rc ? rc : mp_csv_str(&csv, tl_meta_get(meta, pid, "0", "process_labels"));
        rc = rc ? rc : mp_csv_str(&csv, tl_meta_get(meta, pid, tid, "thread_name"));
        rc = rc ? rc : mp_csv_str(&csv, r0->spec);
        if (arch && !rc) {
            /* Roofline columns: first non-missing; percent stats over rows */
            const struct prow *rf = NULL;
            for (size_t i = 0; i < G->n && !rf; i++)
                if (sh->rows[G->members[i]].rl.valid)
                    rf = &sh->rows[G->members[i]];
            rc = tl_csv_float(&csv, &cell, rf ? rf->rl.roofline_us : NAN, rf != NULL);
            rc =
                rc ? rc
                   : mp_csv_str(&csv, rf ? (rf->rl.compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND")
                                         : "");
            double *v = malloc((G->n ? G->n : 1) * sizeof(double));
            size_t k = 0;
            if (!v)
                rc = MP_ENOMEM;
            for (size_t i = 0; i < G->n && !rc; i++) {
                const struct prow *r = &sh->rows[G->members[i]];
                if (r->rl.valid && !isnan(r->rl.pct))
                    v[k++] = r->rl.pct;
            }
            rc = rc ? rc : tl_group_stats(v, k, G->ids_sorted && k == G->n, &st_pct);
            rc = rc ? rc : stat_cells(&csv, &cell, &st_pct, k, false);
            npct = k;
            free(v);
        }
        /* kernel details over members whose kernel list has the template's
         * length; the template is the first non-empty list of the group */
        const struct prow *rt = r0;
        for (size_t i = 0; i < G->n && rt->nk == 0; i++)
            rt = &sh->rows[G->members[i]];
        size_t nk = rt->nk;
        double **kd = calloc(nk ? nk : 1, sizeof(double *));
        size_t nrows = 0;
        if (!kd)
            rc = MP_ENOMEM;
        for (size_t q = 0; q < nk && !rc; q++)
            if (!(kd[q] = malloc((G->n ? G->n : 1) * sizeof(double))))
                rc = MP_ENOMEM;
        for (size_t i = 0; i < G->n && !rc; i++) {
            const struct prow *r = &sh->rows[G->members[i]];
            if (r->nk != nk)
                continue;
            for (size_t q = 0; q < nk; q++) {
                int32_t ku = r->k[q];
                kd[q][nrows] = (s->flags[ku] & MP_EV_DUR) ? s->dur[ku] : 0.0;
            }
            nrows++;
        }
        if (!rc && nk > 0) {
            rc = tl_kernel_details_cells(t, rt->k, nk, kd, nrows, &csv, &cell);
        } else if (!rc) {
            rc = mp_csv_str(&csv, "[]");
            rc = rc ? rc : mp_csv_str(&csv, "");
        }
        for (size_t q = 0; kd && q < nk; q++)
            free(kd[q]);
        free(kd);
        if (ov && !rc) {
            const struct tl_ovinfo **mi =
                malloc((G->n ? G->n : 1) * sizeof(*mi)); // NOLINT(bugprone-sizeof-expression)
            if (!mi)
                rc = MP_ENOMEM;
            for (size_t q = 0; q < G->n && !rc; q++)
                mi[q] = tl_overlap_launcher(ov, sh->rows[G->members[q]].uid);
            rc = rc ? rc : tl_overlap_cells(mi, G->n, true, &csv, &cell);
            free(mi);
        }
        static const char *const argk[] = {"Input Dims", "Input type", "Input Strides",
                                           "Concrete Inputs"};
        for (int a = 0; a < 4 && !rc; a++)
            rc = args_first_cell(t, sh, G, argk[a], &csv, &cell);
        rc = rc ? rc : num_stats(sh, G, offsetof(struct prow, kt), &st, &cnt);
        rc = rc ? rc : stat_cells(&csv, &cell, &st, cnt, true);
        rc = rc ? rc : mp_csv_fmt(&csv, "%zu", G->n);
        rc = rc ? rc : mp_csv_fmt(&csv, "%d", r0->uid);
        rc = rc ? rc : mp_csv_end_row(&csv);
        /* the summary and the roofline plot count each kernel once: shapes
         * whose ops all sit inside another op of the table are left out */
        if (!rc && !G->all_nested && !ov)
            rc = add_point(rep, t, sh, G, sheet_name, first_num(sh, G, offsetof(struct prow, fpb)),
                           &st_tfs, &st_tbs, &st_pct, npct);
    }
    for (size_t i = 0; i < ng; i++)
        free(g[i].members);
    free(g);
    free(gid);
    mp_intern_free(keys);
    mp_intern_free(bkeys);
    mp_buf_fini(&key);
    mp_buf_fini(&cell);
    return rc;
}

static bool name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

/* TraceLens's fix-ups of the fwd/bwd split: ops whose own formulas are the
 * backward ones move from <sheet>_fwd to the end of <sheet>_bwd; forward
 * convolutions never appear in <sheet>_bwd. */
static const char *const moved_to_bwd[] = {"flash_attn::_flash_attn_varlen_backward",
                                           "aten::convolution_backward", "ConvBias_Backward",
                                           "ConvBiasReLU_Backward", NULL};
static const char *const never_bwd[] = {"aten::convolution",
                                        "aten::miopen_convolution",
                                        "aten::cudnn_convolution",
                                        "ConvBias_",
                                        "ConvBiasReLU_",
                                        "vllm::unified_attention_with_output",
                                        NULL};

/* Flags the rows of a table whose event has an ancestor that is itself a
 * row of the table (aten::linear over aten::addmm, aten::batch_norm over
 * aten::native_batch_norm): TraceLens lists both with the same kernels.
 * mark is all-zero on entry and on return. */
static int mark_nested(const struct mp_trace_tree *t, struct psheet *sh, uint8_t *mark)
{
    for (size_t i = 0; i < sh->n; i++)
        mark[sh->rows[i].uid] = 1;
    for (size_t i = 0; i < sh->n; i++) {
        struct prow *r = &sh->rows[i];
        r->nested = 0;
        for (int32_t p = t->parent[r->uid]; p >= 0 && !r->nested; p = t->parent[p])
            r->nested = mark[p];
    }
    for (size_t i = 0; i < sh->n; i++)
        mark[sh->rows[i].uid] = 0;
    return 0;
}

enum { MAX_FAMILIES = 32 };

int tl_sheets_perf(struct mp_report *r, const struct mp_trace_tree *t,
                   const struct mp_roofline_arch *arch, const struct mp_report_opts *o,
                   const char *const *annot, struct tl_overlap *ov, struct mp_roofline_memo *memo,
                   struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    bool inf = o->inference;
    const struct mp_trace_store *s = t->s;
    /* sheet family per distinct name, once */
    int32_t nn = mp_intern_count(s->strings);
    const char **fam = calloc((size_t)nn + 1, sizeof(char *));
    uint8_t *done = calloc((size_t)nn + 1, 1);
    struct psheet sheets[MAX_FAMILIES] = {0}, bsheets[MAX_FAMILIES] = {0};
    int32_t *moved = NULL; /* (family, uid) pairs, added to _bwd after its own rows */
    size_t nmoved = 0, cap_moved = 0;
    int nsheets = 0;
    struct mp_intern *texts = mp_intern_new();
    int rc = fam && done && texts ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < s->n && !rc; i++) {
        int32_t id = s->name[i];
        if (id < 0 || t->kind[i] == MP_K_AC2G || mp_kind_is_gpu(t->kind[i]))
            continue;
        if (!done[id]) {
            fam[id] = mp_roofline_sheet(mp_intern_str(s->strings, id));
            done[id] = 1;
        }
        if (!fam[id])
            continue;
        int k = 0;
        while (k < nsheets && strcmp(sheets[k].family, fam[id]) != 0)
            k++;
        if (k == nsheets) {
            if (nsheets == MAX_FAMILIES)
                continue;
            sheets[nsheets].family = bsheets[nsheets].family = fam[id];
            sheets[nsheets].texts = bsheets[nsheets].texts = texts;
            nsheets++;
        }
        const char *name = mp_intern_str(s->strings, id);
        if (single_table(fam[id], inf)) {
            rc = add_row(&sheets[k], t, annot, memo, (int32_t)i, arch, false, 0);
            continue;
        }
        if (inf) {
            /* forward sheets only; the backward ops TraceLens files under
             * the forward family are dropped */
            if (!name_in(name, moved_to_bwd))
                rc = add_row(&sheets[k], t, annot, memo, (int32_t)i, arch, false, 0);
            continue;
        }
        if (name_in(name, moved_to_bwd)) {
            if (nmoved + 2 > cap_moved) {
                size_t nc = cap_moved ? cap_moved * 2 : 64;
                int32_t *nm = mp_reallocarray(moved, nc, sizeof(int32_t));
                if (!nm) {
                    rc = MP_ENOMEM;
                    break;
                }
                moved = nm;
                cap_moved = nc;
            }
            moved[nmoved++] = k;
            moved[nmoved++] = (int32_t)i;
        } else {
            rc = add_row(&sheets[k], t, annot, memo, (int32_t)i, arch, false, 0);
        }
        /* backward metrics only for ops with their own linked backward node */
        if (!rc && t->bwd_of[i] >= 0 && !name_in(name, never_bwd))
            rc = add_row(&bsheets[k], t, annot, memo, (int32_t)i, arch, true, 0);
    }
    for (size_t m = 0; m + 1 < nmoved && !rc; m += 2)
        rc = add_row(&bsheets[moved[m]], t, annot, memo, moved[m + 1], arch, false, 1);
    struct tl_meta meta;
    memset(&meta, 0, sizeof(meta));
    if (!rc)
        rc = tl_meta_build(s, &meta);
    uint8_t *mark = rc ? NULL : calloc(s->n ? s->n : 1, 1);
    if (!rc && !mark)
        rc = MP_ENOMEM;
    for (int k = 0; k < nsheets && !rc; k++) {
        for (int b = 0; b < 2 && !rc; b++) {
            struct psheet *sh = b ? &bsheets[k] : &sheets[k];
            if (sh->n == 0)
                continue;
            char name[80];
            if (single_table(sh->family, inf))
                snprintf(name, sizeof(name), "%s", sh->family);
            else
                snprintf(name, sizeof(name), "%s_%s", sh->family, b ? "bwd" : "fwd");
            rc = mark_nested(t, sh, mark);
            struct mp_buf *buf = rc ? NULL : new_sheet(r, name);
            rc = rc ? rc
                    : (buf ? render(r, name, t, sh, &meta, arch, o->group_by_num_kernels,
                                    o->fix_nested_ops, NULL, buf)
                           : MP_ENOMEM);
        }
        /* --include_overlap_info: <sheet>_kl_overlap after the plain tables */
        for (int b = 0; b < 2 && !rc && ov; b++) {
            struct psheet *sh = b ? &bsheets[k] : &sheets[k];
            if (sh->n == 0)
                continue;
            char name[96];
            if (single_table(sh->family, inf))
                snprintf(name, sizeof(name), "%s_kl_overlap", sh->family);
            else
                snprintf(name, sizeof(name), "%s_%s_kl_overlap", sh->family, b ? "bwd" : "fwd");
            struct mp_buf *buf = new_sheet(r, name);
            rc = buf ? render(r, name, t, sh, &meta, arch, o->group_by_num_kernels,
                              o->fix_nested_ops, ov, buf)
                     : MP_ENOMEM;
        }
    }
    for (int k = 0; k < nsheets; k++) {
        sheet_fini(&sheets[k]);
        sheet_fini(&bsheets[k]);
    }
    free(moved);
    free(mark);
    tl_meta_fini(&meta);
    free(fam);
    free(done);
    mp_intern_free(texts);
    return rc;
}
