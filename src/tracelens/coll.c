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
#include <magpie/report.h>
#include <magpie/stats.h>

#include "tracelens_int.h"

#define NFIELDS 10

static const char *const fields[NFIELDS] = {
    "Process Group Name", "Process Group Ranks", "Collective name", "Group size",     "dtype",
    "In msg nelems",      "Out msg nelems",      "In split size",   "Out split size", "stream",
};

struct crow {
    char *cell[NFIELDS]; /* CSV text of each key column */
    bool num[NFIELDS];   /* compares as a number */
    double numv[NFIELDS];
    double dur, in_mb, out_mb;
    bool has_mb;
};

static int cmp_key(const struct crow *a, const struct crow *b)
{
    return tl_cmp_cells(a->cell, a->num, a->numv, b->cell, b->num, b->numv, NFIELDS);
}

static int cmp_rows(const void *x, const void *y)
{
    return cmp_key(x, y);
}

struct cgrp {
    size_t first, n;
    double sum;
    size_t order;
};

static int cmp_cgrp(const void *x, const void *y)
{
    const struct cgrp *a = x, *b = y;
    if (a->sum != b->sum)
        return a->sum > b->sum ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

int tl_sheet_coll(struct mp_report *rep, const struct mp_trace_tree *t,
                  struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    const struct mp_trace_store *s = t->s;
    struct crow *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        if (t->kind[i] != MP_K_KERNEL || !t->comm[i] || !s->args[i] ||
            !(s->flags[i] & (MP_EV_CORR | MP_EV_EXTID)))
            continue;
        struct crow r = {0};
        struct mp_strview obj = {s->args[i], s->args_len[i]}, v;
        bool missing = false;
        for (int f = 0; f < NFIELDS && !rc; f++) {
            if (mp_trace_json_find(obj, fields[f], &v) == 0)
                r.cell[f] = tl_json_cell(v.p, v.n, &r.num[f], &r.numv[f]);
            if (!r.cell[f] && f == 2 &&
                strstr(mp_trace_tree_name(t, (int32_t)i), "cross_device_reduce"))
                r.cell[f] = mp_strdup("allreduce"); /* TraceLens's inferred name */
            if (!r.cell[f])
                missing = true; /* groupby drops keys with a missing value */
        }
        r.dur = (s->flags[i] & MP_EV_DUR) ? s->dur[i] : NAN;
        int bpe = tl_dtype_bytes(r.cell[4]);
        if (bpe && r.num[5] && r.num[6]) {
            r.has_mb = true;
            r.in_mb = r.numv[5] * bpe / (1024.0 * 1024.0);
            r.out_mb = r.numv[6] * bpe / (1024.0 * 1024.0);
        }
        if (missing) {
            for (int f = 0; f < NFIELDS; f++)
                free(r.cell[f]);
            continue;
        }
        if (MP_GROW(rows, cap, n + 1, 64)) {
            for (int f = 0; f < NFIELDS; f++)
                free(r.cell[f]);
            rc = MP_ENOMEM;
            break;
        }
        rows[n++] = r;
    }
    if (!rc && n > 0) {
        size_t *idx = malloc(n * sizeof(size_t));
        struct cgrp *g = calloc(n, sizeof(*g));
        if (!idx || !g)
            rc = MP_ENOMEM;
        if (!rc) {
            /* merge sort keeps equal keys in kernel order */
            for (size_t i = 0; i < n; i++)
                idx[i] = i;
            for (size_t w = 1; w < n; w *= 2) {
                size_t *tmp = malloc(n * sizeof(size_t));
                if (!tmp) {
                    rc = MP_ENOMEM;
                    break;
                }
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
        }
        size_t ng = 0;
        for (size_t k = 0; k < n && !rc; k++) {
            if (ng > 0 && cmp_key(&rows[idx[g[ng - 1].first]], &rows[idx[k]]) == 0) {
                g[ng - 1].n++;
            } else {
                g[ng].first = k;
                g[ng].n = 1;
                g[ng].order = ng;
                ng++;
            }
        }
        /* dur_sum as pandas' groupby(sort=True) sums it: np.add.reduceat
         * when the rows already come in key order (the stable sort left
         * them in place), else Kahan in row order */
        bool ids_sorted = true;
        for (size_t k = 0; k < n && ids_sorted; k++)
            ids_sorted = idx[k] == k;
        double *d = rc ? NULL : malloc((n ? n : 1) * sizeof(double));
        if (!rc && !d)
            rc = MP_ENOMEM;
        for (size_t gi = 0; gi < ng && !rc; gi++) {
            for (size_t k = 0; k < g[gi].n; k++)
                d[k] = rows[idx[g[gi].first + k]].dur;
            g[gi].sum = mp_sum_pandas_group(d, g[gi].n, ids_sorted);
        }
        free(d);
        if (!rc)
            qsort(g, ng, sizeof(*g), cmp_cgrp);
        struct mp_buf *b = rc ? NULL : new_sheet(rep, "coll_analysis");
        if (!rc && !b)
            rc = MP_ENOMEM;
        struct mp_csv csv;
        struct mp_buf cell;
        mp_buf_init(&cell, 0);
        if (!rc) {
            mp_csv_init(&csv, b, "\n");
            rc = mp_buf_puts(b, "rank,Process Group Name,Process Group Ranks,Collective name,"
                                "Group size,dtype,In msg nelems,Out msg nelems,In split size,"
                                "Out split size,stream,In msg size (MB)_first,"
                                "Out msg size (MB)_first,dur_sum,dur_mean,dur_std,dur_min,"
                                "dur_max,operation_count\n");
        }
        for (size_t gi = 0; gi < ng && !rc; gi++) {
            const struct cgrp *G = &g[gi];
            const struct crow *r0 = &rows[idx[G->first]];
            rc = mp_csv_str(&csv, "0"); /* the report's trace is rank 0 of its analyser */
            for (int f = 0; f < NFIELDS && !rc; f++)
                rc = mp_csv_str(&csv, r0->cell[f]);
            double in_mb = NAN, out_mb = NAN;
            double *dv = malloc(G->n * sizeof(double));
            if (!dv)
                rc = MP_ENOMEM;
            for (size_t k = 0; k < G->n && !rc; k++) {
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
            rc = rc ? rc : tl_csv_float(&csv, &cell, in_mb, true);
            rc = rc ? rc : tl_csv_float(&csv, &cell, out_mb, true);
            rc = rc ? rc : tl_csv_float(&csv, &cell, G->sum, true);
            rc = rc ? rc : tl_csv_float(&csv, &cell, st.mean, true);
            rc = rc ? rc : tl_csv_float(&csv, &cell, st.std, st.has_std);
            rc = rc ? rc : tl_csv_float(&csv, &cell, st.min, true);
            rc = rc ? rc : tl_csv_float(&csv, &cell, st.max, true);
            rc = rc ? rc : mp_csv_fmt(&csv, "%zu", G->n);
            rc = rc ? rc : mp_csv_end_row(&csv);
        }
        mp_buf_fini(&cell);
        free(idx);
        free(g);
    }
    for (size_t i = 0; i < n; i++)
        for (int f = 0; f < NFIELDS; f++)
            free(rows[i].cell[f]);
    free(rows);
    return rc;
}
