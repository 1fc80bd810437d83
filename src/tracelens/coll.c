/* coll_analysis of the TraceLens report (docs/tracelens-compat.md): TraceLens's
 * NcclAnalyser "long" summary for the one trace of the report. Every linked
 * collective kernel (nccl, rccl, custom all-reduce) is a row with its
 * process-group metadata from args; rows are grouped by that metadata and
 * summarised by duration, largest total first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/stats.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

const char *const tl_coll_fields[TL_CF_N] = {
    "Process Group Name", "Process Group Ranks", "Collective name", "Group size",     "dtype",
    "In msg nelems",      "Out msg nelems",      "In split size",   "Out split size", "stream",
};

const char tl_coll_summary_head[] =
    "rank,Process Group Name,Process Group Ranks,Collective name,Group size,dtype,In msg "
    "nelems,Out msg nelems,In split size,Out split size,stream,In msg size (MB)_first,Out msg "
    "size (MB)_first,dur_sum,dur_mean,dur_std,dur_min,dur_max,operation_count";

int tl_cmp_coll_grp(const void *x, const void *y)
{
    const struct tl_coll_grp *a = x, *b = y;
    if (a->sum != b->sum)
        return a->sum > b->sum ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

int tl_coll_summary_cells(struct mp_csv *csv, struct mp_buf *cell, double in_mb, double out_mb,
                          double sum, double mean, double std, bool has_std, double min, double max,
                          size_t n)
{
    int rc = tl_csv_float(csv, cell, in_mb, true);
    rc = rc ? rc : tl_csv_float(csv, cell, out_mb, true);
    rc = rc ? rc : tl_csv_float(csv, cell, sum, true);
    rc = rc ? rc : tl_csv_float(csv, cell, mean, true);
    rc = rc ? rc : tl_csv_float(csv, cell, std, has_std);
    rc = rc ? rc : tl_csv_float(csv, cell, min, true);
    rc = rc ? rc : tl_csv_float(csv, cell, max, true);
    return rc ? rc : mp_csv_fmt(csv, "%zu", n);
}

struct crow {
    char *cell[TL_CF_N]; /* CSV text of each key column */
    bool num[TL_CF_N];   /* compares as a number */
    double numv[TL_CF_N];
    double dur, in_mb, out_mb;
    bool has_mb;
};

static int cmp_key(const struct crow *a, const struct crow *b)
{
    return tl_cmp_cells(a->cell, a->num, a->numv, b->cell, b->num, b->numv, TL_CF_N);
}

static int cmp_rows(const void *x, const void *y)
{
    return cmp_key(x, y);
}

/* Row r of collective kernel i: its key cells from args; false when a key
 * is missing (groupby drops keys with a missing value; r's cells freed). */
static bool coll_row(const struct mp_trace_tree *t, size_t i, struct crow *r)
{
    const struct mp_trace_store *s = t->s;
    struct mp_strview obj = {s->args[i], s->args_len[i]}, v;
    bool missing = false;
    memset(r, 0, sizeof(*r));
    for (int f = 0; f < TL_CF_N; f++) {
        if (mp_trace_json_find(obj, tl_coll_fields[f], &v) == 0)
            r->cell[f] = tl_json_cell(v.p, v.n, &r->num[f], &r->numv[f]);
        if (!r->cell[f] && f == 2 &&
            strstr(mp_trace_tree_name(t, (int32_t)i), "cross_device_reduce"))
            r->cell[f] = mp_strdup("allreduce"); /* TraceLens's inferred name */
        if (!r->cell[f])
            missing = true;
    }
    r->dur = (s->flags[i] & MP_EV_DUR) ? s->dur[i] : NAN;
    int bpe = tl_dtype_bytes(r->cell[4]);
    if (bpe && r->num[5] && r->num[6]) {
        r->has_mb = true;
        r->in_mb = r->numv[5] * bpe / (1024.0 * 1024.0);
        r->out_mb = r->numv[6] * bpe / (1024.0 * 1024.0);
    }
    if (missing)
        for (int f = 0; f < TL_CF_N; f++)
            free(r->cell[f]);
    return !missing;
}

/* The rows: every linked collective kernel with all its key cells. */
static int coll_rows(const struct mp_trace_tree *t, struct crow **rows, size_t *n)
{
    const struct mp_trace_store *s = t->s;
    size_t cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] != MP_K_KERNEL || !t->comm[i] || !s->args[i] ||
            !(s->flags[i] & (MP_EV_CORR | MP_EV_EXTID)))
            continue;
        struct crow r;
        if (!coll_row(t, i, &r))
            continue;
        if (MP_GROW(*rows, cap, *n + 1, 64)) {
            for (int f = 0; f < TL_CF_N; f++)
                free(r.cell[f]);
            return MP_ENOMEM;
        }
        (*rows)[(*n)++] = r;
    }
    return 0;
}

/* idx: the n rows in key order, a merge sort keeping equal keys in kernel
 * order. */
static int coll_sort(const struct crow *rows, size_t n, size_t *idx)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t w = 1; w < n; w *= 2) {
        size_t *tmp = malloc(n * sizeof(size_t));
        if (!tmp)
            return MP_ENOMEM;
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = cmp_rows(&rows[idx[b]], &rows[idx[a]]) < 0 ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, n * sizeof(size_t));
        free(tmp);
    }
    return 0;
}

/* The groups of equal keys over the sorted rows, with dur_sum as pandas'
 * groupby(sort=True) sums it: np.add.reduceat when the rows already come
 * in key order (the stable sort left them in place, *ids_sorted), else
 * Kahan in row order; sorted by that sum. */
static int coll_group(const struct crow *rows, const size_t *idx, size_t n, struct tl_coll_grp *g,
                      size_t *ng, bool *ids_sorted)
{
    *ng = 0;
    for (size_t k = 0; k < n; k++) {
        if (*ng > 0 && cmp_key(&rows[idx[g[*ng - 1].first]], &rows[idx[k]]) == 0) {
            g[*ng - 1].n++;
        } else {
            g[*ng].first = k;
            g[*ng].n = 1;
            g[*ng].order = *ng;
            (*ng)++;
        }
    }
    *ids_sorted = true;
    for (size_t k = 0; k < n && *ids_sorted; k++)
        *ids_sorted = idx[k] == k;
    double *d = malloc((n ? n : 1) * sizeof(double));
    if (!d)
        return MP_ENOMEM;
    for (size_t gi = 0; gi < *ng; gi++) {
        for (size_t k = 0; k < g[gi].n; k++)
            d[k] = rows[idx[g[gi].first + k]].dur;
        g[gi].sum = mp_sum_pandas_group(d, g[gi].n, *ids_sorted);
    }
    free(d);
    qsort(g, *ng, sizeof(*g), tl_cmp_coll_grp);
    return 0;
}

/* One group's row: rank, the key cells, the first message sizes, the
 * duration statistics and the count. */
static int coll_emit(const struct crow *rows, const size_t *idx, const struct tl_coll_grp *G,
                     bool ids_sorted, struct mp_csv *csv, struct mp_buf *cell)
{
    const struct crow *r0 = &rows[idx[G->first]];
    int rc = mp_csv_str(csv, "0"); /* the report's trace is rank 0 of its analyser */
    for (int f = 0; f < TL_CF_N && !rc; f++)
        rc = mp_csv_str(csv, r0->cell[f]);
    double in_mb = NAN, out_mb = NAN;
    double *dv = malloc((G->n ? G->n : 1) * sizeof(double));
    if (!dv)
        return MP_ENOMEM;
    for (size_t k = 0; k < G->n; k++) {
        const struct crow *r = &rows[idx[G->first + k]];
        dv[k] = r->dur;
        if (isnan(in_mb) && r->has_mb) {
            in_mb = r->in_mb;
            out_mb = r->out_mb;
        }
    }
    struct tl_stats st = {0};
    rc = rc ? rc : tl_group_stats(dv, G->n, ids_sorted, &st);
    free(dv);
    rc = rc ? rc
            : tl_coll_summary_cells(csv, cell, in_mb, out_mb, G->sum, st.mean, st.std, st.has_std,
                                    st.min, st.max, G->n);
    return rc ? rc : mp_csv_end_row(csv);
}

/* coll_analysis of the n rows (none: no sheet). */
static int coll_sheet(struct mp_report *rep, const struct crow *rows, size_t n)
{
    size_t *idx = malloc(n * sizeof(size_t));
    struct tl_coll_grp *g = calloc(n, sizeof(*g));
    size_t ng = 0;
    bool ids_sorted = true;
    int rc = idx && g ? 0 : MP_ENOMEM;
    rc = rc ? rc : coll_sort(rows, n, idx);
    rc = rc ? rc : coll_group(rows, idx, n, g, &ng, &ids_sorted);
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    rc = rc ? rc : tl_csv_sheet(rep, "coll_analysis", &csv, tl_coll_summary_head, NULL);
    for (size_t gi = 0; gi < ng && !rc; gi++)
        rc = coll_emit(rows, idx, &g[gi], ids_sorted, &csv, &cell);
    mp_buf_fini(&cell);
    free(idx);
    free(g);
    return rc;
}

int tl_sheet_coll(struct mp_report *rep, const struct mp_trace_tree *t)
{
    struct crow *rows = NULL;
    size_t n = 0;
    int rc = coll_rows(t, &rows, &n);
    if (!rc && n > 0)
        rc = coll_sheet(rep, rows, n);
    for (size_t i = 0; i < n; i++)
        for (int f = 0; f < TL_CF_N; f++)
            free(rows[i].cell[f]);
    free(rows);
    return rc;
}
