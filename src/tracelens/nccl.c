/* Multi-rank collective report (TraceLens's NcclAnalyser as run by
 * TraceLens_generate_multi_rank_collective_report_pytorch): the collective
 * kernels of every rank trace, matched across ranks by process group and
 * order of start time, written as nccl_long, nccl_summary_long,
 * nccl_implicit_sync, nccl_summary_implicit_sync and straggler_summary. */
#include <glob.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <magpie/fmt.h>
#include <magpie/trace.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

struct nrow {
    int rank;
    char *cell[TL_CF_N]; /* CSV text, NULL when missing */
    bool num[TL_CF_N];
    double numv[TL_CF_N];
    double ts, dur;
    bool has_mb;
    double in_mb, out_mb;
    long idx;     /* index_in_group */
    int32_t cid;  /* interned collective_id */
    size_t order; /* position in the long table */
};

struct nctx {
    struct nrow *rows;
    size_t n, cap;
    size_t world;
    struct mp_intern *cids;
    struct mp_report *rep;
    bool simplified;
};

/* Kernel names TraceLens counts as collectives */
static bool comm_name(struct mp_strview name)
{
    return mp_trace_is_comm_name_n(name.p, name.n);
}

static bool is_kernel_cat(struct mp_strview cat)
{
    return cat.n == 6 && memcmp(cat.p, "kernel", 6) == 0;
}

static bool keep_comm_args(const struct mp_trace_event *ev, void *user)
{
    (void)user;
    return (ev->flags & MP_EV_CAT) && (ev->flags & MP_EV_NAME) && is_kernel_cat(ev->cat) &&
           comm_name(ev->name);
}

/* Number of elements of a JSON array text (deviceProperties). */
static long json_array_len(const char *p)
{
    if (!p)
        return 0;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    if (*p != '[')
        return 0;
    long n = 0;
    int depth = 0;
    bool item = false, str = false;
    for (; *p; p++) {
        char c = *p;
        if (str) {
            if (c == '\\' && p[1])
                p++;
            else if (c == '"')
                str = false;
            continue;
        }
        if (c == '"') {
            str = true;
            if (depth == 1)
                item = true;
        } else if (c == '[' || c == '{') {
            if (depth == 1)
                item = true;
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
            if (depth == 0)
                break;
        } else if (c == ',' && depth == 1) {
            n++;
            item = false;
        } else if (depth == 1 && c != ' ' && c != '\n' && c != '\t' && c != '\r') {
            item = true;
        }
    }
    return item ? n + 1 : n;
}

static void row_free(struct nrow *r)
{
    for (int f = 0; f < TL_CF_N; f++)
        free(r->cell[f]);
}

static int add_rank(struct nctx *c, const struct mp_trace_store *s, int rank)
{
    int32_t kcat = mp_intern_find(s->strings, "kernel", 6);
    for (size_t i = 0; i < s->n; i++) {
        if (kcat < 0 || s->cat[i] != kcat || s->name[i] < 0 || !s->args[i])
            continue;
        if (!(s->flags[i] & (MP_EV_CORR | MP_EV_EXTID)))
            continue;
        const char *nm = mp_intern_str(s->strings, s->name[i]);
        struct mp_strview name = {nm, mp_intern_len(s->strings, s->name[i])};
        if (!comm_name(name))
            continue;
        struct nrow r = {.rank = rank, .ts = s->ts[i], .dur = s->dur[i]};
        struct mp_strview obj = {s->args[i], s->args_len[i]}, v;
        for (int f = 0; f < TL_CF_N; f++) {
            if (mp_trace_json_find(obj, tl_coll_fields[f], &v) == 0) {
                r.cell[f] = tl_json_cell(v.p, v.n, &r.num[f], &r.numv[f]);
                if (!r.cell[f] && !(v.n == 4 && memcmp(v.p, "null", 4) == 0)) {
                    row_free(&r);
                    return MP_ENOMEM;
                }
            }
        }
        if (!r.cell[TL_CF_NAME] && strstr(nm, "cross_device_reduce"))
            r.cell[TL_CF_NAME] = mp_strdup("allreduce");
        int bpe = tl_dtype_bytes(r.cell[TL_CF_DTYPE]);
        if (bpe && r.num[TL_CF_IN]) {
            r.has_mb = true;
            r.in_mb = r.numv[TL_CF_IN] * bpe / 1048576.0;
            r.out_mb = r.num[TL_CF_OUT] ? r.numv[TL_CF_OUT] * bpe / 1048576.0 : NAN;
        }
        if (MP_GROW(c->rows, c->cap, c->n + 1, 256)) {
            row_free(&r);
            return MP_ENOMEM;
        }
        r.order = c->n;
        c->rows[c->n++] = r;
    }
    return 0;
}

static const struct nrow *g_rows;

static int cmp_pg_rank_ts(const void *x, const void *y)
{
    const struct nrow *a = &g_rows[*(const size_t *)x], *b = &g_rows[*(const size_t *)y];
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    int c = strcmp(a->cell[TL_CF_PGN] ? a->cell[TL_CF_PGN] : "",
                   b->cell[TL_CF_PGN] ? b->cell[TL_CF_PGN] : "");
    if (c)
        return c;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

/* index_in_group and collective_id, as TraceLens matches collectives. */
static int assign_ids(struct nctx *c)
{
    bool pg_missing = true;
    for (size_t i = 0; i < c->n && pg_missing; i++)
        if (c->rows[i].cell[TL_CF_PGN] && strcmp(c->rows[i].cell[TL_CF_PGN], "Unknown_Group") != 0)
            pg_missing = false;
    bool single_stream = true;
    for (size_t i = 0; i < c->n && single_stream; i++)
        for (size_t j = i + 1; j < c->n; j++) {
            const struct nrow *a = &c->rows[i], *b = &c->rows[j];
            if (a->rank != b->rank)
                continue;
            if ((a->cell[TL_CF_STREAM] == NULL) != (b->cell[TL_CF_STREAM] == NULL) ||
                (a->cell[TL_CF_STREAM] &&
                 strcmp(a->cell[TL_CF_STREAM], b->cell[TL_CF_STREAM]) != 0)) {
                single_stream = false;
                break;
            }
        }
    c->simplified = pg_missing && single_stream;
    for (size_t i = 0; i < c->n; i++) {
        struct nrow *r = &c->rows[i];
        const char *pg =
            c->simplified ? "all" : (r->cell[TL_CF_PGN] ? r->cell[TL_CF_PGN] : "Unknown_Group");
        if (!r->cell[TL_CF_PGN] || strcmp(r->cell[TL_CF_PGN], pg) != 0) {
            free(r->cell[TL_CF_PGN]);
            r->cell[TL_CF_PGN] = mp_strdup(pg);
            r->num[TL_CF_PGN] = false;
            if (!r->cell[TL_CF_PGN])
                return MP_ENOMEM;
        }
    }
    size_t *idx = malloc((c->n ? c->n : 1) * sizeof(size_t));
    if (!idx)
        return MP_ENOMEM;
    for (size_t i = 0; i < c->n; i++)
        idx[i] = i;
    g_rows = c->rows;
    qsort(idx, c->n, sizeof(size_t), cmp_pg_rank_ts);
    long k = 0;
    for (size_t i = 0; i < c->n; i++) {
        struct nrow *r = &c->rows[idx[i]];
        if (i > 0) {
            const struct nrow *p = &c->rows[idx[i - 1]];
            k = (p->rank == r->rank && strcmp(p->cell[TL_CF_PGN], r->cell[TL_CF_PGN]) == 0) ? k + 1
                                                                                            : 0;
        }
        r->idx = k;
    }
    free(idx);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = 0;
    for (size_t i = 0; i < c->n && !rc; i++) {
        struct nrow *r = &c->rows[i];
        mp_buf_reset(&b);
        rc = c->simplified ? mp_buf_printf(&b, "%ld", r->idx)
                           : mp_buf_printf(&b, "%s_%ld", r->cell[TL_CF_PGN], r->idx);
        int32_t id = rc ? -1 : mp_intern_add(c->cids, mp_buf_cstr(&b), b.len);
        if (!rc && id < 0)
            rc = MP_ENOMEM;
        r->cid = id;
    }
    mp_buf_fini(&b);
    return rc;
}

/* An empty DataFrame, as pandas writes it: one empty line. */
static int empty_sheet(struct nctx *c, const char *name)
{
    struct mp_buf *b = tl_new_sheet(c->rep, name);
    return b ? mp_buf_putc(b, '\n') : MP_ENOMEM;
}

/* ---- node_id / node_span ---- */

static const char *node_span(const char *pg_ranks, int gpn)
{
    if (!pg_ranks)
        return "unknown";
    long first = -1;
    bool any = false, multi = false;
    for (const char *p = pg_ranks; *p;) {
        if (*p >= '0' && *p <= '9') {
            long v = strtol(p, (char **)&p, 10);
            long node = v / gpn;
            if (!any)
                first = node;
            else if (node != first)
                multi = true;
            any = true;
        } else {
            p++;
        }
    }
    if (!any)
        return "unknown";
    return multi ? "inter_node" : "intra_node";
}

/* pandas groupby sum and mean: Kahan-compensated, in row order. */
static double kahan_sum(const double *x, size_t n)
{
    double sum = 0, comp = 0;
    for (size_t i = 0; i < n; i++) {
        double y = x[i] - comp;
        double t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    return sum;
}

/* pandas groupby std (ddof 1): Welford's running mean and squared deviations. */
static double welford_std(const double *x, size_t n)
{
    double mean = 0, ssq = 0;
    for (size_t i = 0; i < n; i++) {
        double old = mean;
        mean += (x[i] - old) / (double)(i + 1);
        ssq += (x[i] - mean) * (x[i] - old);
    }
    return n > 1 ? sqrt(ssq / (double)(n - 1)) : NAN;
}

/* ---- nccl_long ---- */

static int put_cell(struct mp_csv *csv, const char *s)
{
    return mp_csv_str(csv, s ? s : "");
}

static int sheet_long(struct nctx *c, int gpn)
{
    struct mp_buf *b = tl_new_sheet(c->rep, "nccl_long");
    if (!b)
        return MP_ENOMEM;
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    int rc = mp_buf_puts(b, "collective_id,index_in_group,rank,Process Group Name,Process Group "
                            "Ranks,Collective name,Group size,dtype,In msg nelems,In msg size "
                            "(MB),Out msg nelems,Out msg size (MB),In split size,Out split "
                            "size,stream,ts,dur");
    if (!rc && gpn > 0)
        rc = mp_buf_puts(b, ",node_id,node_span");
    rc = rc ? rc : mp_buf_putc(b, '\n');
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    for (size_t i = 0; i < c->n && !rc; i++) {
        const struct nrow *r = &c->rows[i];
        rc = mp_csv_str(&csv, mp_intern_str(c->cids, r->cid));
        rc = rc ? rc : mp_csv_fmt(&csv, "%ld", r->idx);
        rc = rc ? rc : mp_csv_fmt(&csv, "%d", r->rank);
        for (int f = TL_CF_PGN; f <= TL_CF_DTYPE && !rc; f++)
            rc = put_cell(&csv, r->cell[f]);
        rc = rc ? rc : put_cell(&csv, r->cell[TL_CF_IN]);
        rc = rc ? rc : tl_csv_float(&csv, &cell, r->in_mb, r->has_mb);
        rc = rc ? rc : put_cell(&csv, r->cell[TL_CF_OUT]);
        rc = rc ? rc : tl_csv_float(&csv, &cell, r->out_mb, r->has_mb);
        rc = rc ? rc : put_cell(&csv, r->cell[TL_CF_INSPLIT]);
        rc = rc ? rc : put_cell(&csv, r->cell[TL_CF_OUTSPLIT]);
        rc = rc ? rc : put_cell(&csv, r->cell[TL_CF_STREAM]);
        rc = rc ? rc : tl_csv_float(&csv, &cell, r->ts, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, r->dur, true);
        if (gpn > 0) {
            rc = rc ? rc : mp_csv_fmt(&csv, "%d", r->rank / gpn);
            rc = rc ? rc : mp_csv_str(&csv, node_span(r->cell[TL_CF_PGR], gpn));
        }
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    return rc;
}

/* ---- nccl_summary_long ---- */

static int cmp_key(const struct nrow *a, const struct nrow *b)
{
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return tl_cmp_cells(a->cell, a->num, a->numv, b->cell, b->num, b->numv, TL_CF_N);
}

static int cmp_key_idx(const void *x, const void *y)
{
    const struct nrow *a = &g_rows[*(const size_t *)x], *b = &g_rows[*(const size_t *)y];
    int k = cmp_key(a, b);
    if (k)
        return k;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

static int sheet_summary_long(struct nctx *c, int gpn)
{
    size_t *idx = malloc((c->n ? c->n : 1) * sizeof(size_t));
    struct tl_coll_grp *g = calloc(c->n ? c->n : 1, sizeof(*g));
    double *d = malloc((c->n ? c->n : 1) * sizeof(double));
    int rc = (!idx || !g || !d) ? MP_ENOMEM : 0;
    size_t m = 0, ng = 0;
    for (size_t i = 0; i < c->n && !rc; i++) {
        bool complete = true;
        for (int f = 0; f < TL_CF_N; f++)
            if (!c->rows[i].cell[f])
                complete = false; /* groupby drops keys with a missing value */
        if (complete)
            idx[m++] = i;
    }
    if (!rc) {
        g_rows = c->rows;
        qsort(idx, m, sizeof(size_t), cmp_key_idx);
        for (size_t k = 0; k < m; k++) {
            const struct nrow *r = &c->rows[idx[k]];
            if (ng > 0 && cmp_key(&c->rows[idx[g[ng - 1].first]], r) == 0) {
                g[ng - 1].n++;
                g[ng - 1].sum += r->dur;
            } else {
                g[ng] = (struct tl_coll_grp){.first = k, .n = 1, .sum = r->dur, .order = ng};
                ng++;
            }
        }
        for (size_t gi = 0; gi < ng; gi++) {
            for (size_t k = 0; k < g[gi].n; k++)
                d[k] = c->rows[idx[g[gi].first + k]].dur;
            g[gi].sum = kahan_sum(d, g[gi].n);
        }
        qsort(g, ng, sizeof(*g), tl_cmp_coll_grp);
    }
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    /* pandas adds no node columns to an empty frame */
    rc = rc ? rc
            : tl_csv_sheet(c->rep, "nccl_summary_long", &csv, tl_coll_summary_head,
                           gpn > 0 && ng > 0 ? ",node_id,node_span" : "", NULL);
    for (size_t gi = 0; gi < ng && !rc; gi++) {
        const struct tl_coll_grp *G = &g[gi];
        const struct nrow *r0 = &c->rows[idx[G->first]];
        rc = mp_csv_fmt(&csv, "%d", r0->rank);
        for (int f = 0; f < TL_CF_N && !rc; f++)
            rc = mp_csv_str(&csv, r0->cell[f]);
        double in_mb = NAN, out_mb = NAN;
        for (size_t k = 0; k < G->n; k++) {
            const struct nrow *r = &c->rows[idx[G->first + k]];
            d[k] = r->dur;
            if (isnan(in_mb) && r->has_mb)
                in_mb = r->in_mb;
            if (isnan(out_mb) && r->has_mb)
                out_mb = r->out_mb;
        }
        struct tl_stats st = {0};
        rc = rc ? rc : tl_stats(d, G->n, 1, &st);
        rc = rc ? rc
                : tl_coll_summary_cells(&csv, &cell, in_mb, out_mb, G->sum, G->sum / (double)G->n,
                                        welford_std(d, G->n), G->n > 1, st.min, st.max, G->n);
        if (gpn > 0) {
            rc = rc ? rc : mp_csv_fmt(&csv, "%d", r0->rank / gpn);
            rc = rc ? rc : mp_csv_str(&csv, node_span(r0->cell[TL_CF_PGR], gpn));
        }
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    free(idx);
    free(g);
    free(d);
    return rc;
}

/* ---- implicit-sync collectives ---- */

static const char *coll_type(const char *name)
{
    static const struct {
        const char *name, *type;
    } t[] = {
        {"allreduce", "allreduce"},
        {"allreduce_coalesced", "allreduce"},
        {"reducescatter", "reducescatter"},
        {"_reduce_scatter_base", "reducescatter"},
        {"reduce_scatter_tensor_coalesced", "reducescatter"},
        {"allgather", "allgather"},
        {"all_gather", "allgather"},
        {"_allgather_base", "allgather"},
        {"all_gather_into_tensor_coalesced", "allgather"},
        {"allgather_into_tensor_coalesced", "allgather"},
        {"all_to_all", "alltoall"},
        {"all_to_allv", "alltoallv"},
    };

    for (size_t i = 0; name && i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(name, t[i].name) == 0)
            return t[i].type;
    return NULL;
}

/* One implicit-sync collective (a row of nccl_implicit_sync). */
struct isync {
    const struct nrow *ref;
    int32_t cid;
    const struct nrow **by_rank; /* world entries, NULL when the rank lacks it */
    double comm_latency, skew_start, avg_wait, skew_end, full_mb, algo_bw, bus_bw;
    int earliest;
    double *wait; /* world entries, NAN when absent */
};

static bool same_cell(const struct nrow *a, const struct nrow *b, int f)
{
    if (!a->cell[f] || !b->cell[f])
        return a->cell[f] == b->cell[f];
    if (a->num[f] && b->num[f])
        return a->numv[f] == b->numv[f];
    return strcmp(a->cell[f], b->cell[f]) == 0;
}

static int build_isync(struct nctx *c, struct isync **out, size_t *nout,
                       const struct nrow ***slots_out, struct mp_diag *d)
{
    int32_t ncid = mp_intern_count(c->cids);
    size_t world = c->world;
    const struct nrow **slots =
        calloc((size_t)(ncid > 0 ? ncid : 1) * world, sizeof(struct nrow *));
    const struct nrow **first = calloc((size_t)(ncid > 0 ? ncid : 1), sizeof(struct nrow *));
    struct isync *v = calloc((size_t)(ncid > 0 ? ncid : 1), sizeof(*v));
    if (!slots || !first || !v) {
        free(slots);
        free(first);
        free(v);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    /* first row of each collective, and each rank's row (the last one wins,
     * as set_index + .loc pick a single rank row) */
    int32_t *seen_order = malloc((size_t)(ncid > 0 ? ncid : 1) * sizeof(int32_t));
    size_t nseen = 0;
    if (!seen_order) {
        free(slots);
        free(first);
        free(v);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct nrow *r = &c->rows[i];
        if (!first[r->cid]) {
            first[r->cid] = r;
            seen_order[nseen++] = r->cid;
        }
        if (r->rank >= 0 && (size_t)r->rank < world)
            slots[(size_t)r->cid * world + (size_t)r->rank] = r;
    }
    size_t nv = 0;
    int rc = 0;
    for (size_t s = 0; s < nseen && !rc; s++) {
        int32_t id = seen_order[s];
        const struct nrow *ref = first[id];
        const char *ct = coll_type(ref->cell[TL_CF_NAME]);
        bool implicit = ct && strcmp(ct, "alltoallv") != 0;
        if (c->simplified ? (ref->cell[TL_CF_NAME] && ct && !implicit) : !implicit)
            continue;
        const struct nrow **br = &slots[(size_t)id * world];
        if (!c->simplified) {
            for (size_t k = 0; k < world; k++) {
                const struct nrow *r = br[k];
                if (!r)
                    continue;
                for (int f = 0; f < TL_CF_N && !rc; f++) {
                    if (f == TL_CF_INSPLIT || f == TL_CF_OUTSPLIT || f == TL_CF_STREAM)
                        continue;
                    if (!same_cell(ref, r, f))
                        rc =
                            mp_diag_set(d, MP_EINVAL, "metadata mismatch in '%s' for collective %s",
                                        tl_coll_fields[f], mp_intern_str(c->cids, id));
                }
                if (!rc && ref->has_mb != r->has_mb)
                    rc = mp_diag_set(d, MP_EINVAL,
                                     "metadata mismatch in message size for collective %s",
                                     mp_intern_str(c->cids, id));
            }
        }
        struct isync *x = &v[nv++];
        x->ref = ref;
        x->cid = id;
        x->by_rank = br;
        double latest_start = -INFINITY, earliest_end = INFINITY, latest_end = -INFINITY;
        double lat = INFINITY;
        size_t cnt = 0;
        for (size_t k = 0; k < world; k++) {
            const struct nrow *r = br[k];
            if (!r)
                continue;
            cnt++;
            if (r->ts > latest_start)
                latest_start = r->ts;
            double e = r->ts + r->dur;
            if (e < earliest_end)
                earliest_end = e;
            if (e > latest_end)
                latest_end = e;
            if (r->dur < lat)
                lat = r->dur;
        }
        x->comm_latency = lat;
        x->wait = malloc((world ? world : 1) * sizeof(double));
        if (!x->wait) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
            break;
        }
        double best = -INFINITY, sum = 0;
        int best_r = -1;
        for (size_t k = 0; k < world; k++) {
            const struct nrow *r = br[k];
            x->wait[k] = NAN;
            if (!r)
                continue;
            double w = latest_start - r->ts;
            x->wait[k] = w;
            sum += w;
            if (w >= best) { /* max over (wait, rank): a tie goes to the larger rank */
                best = w;
                best_r = (int)k;
            }
        }
        x->skew_start = best;
        x->earliest = best_r;
        x->avg_wait = sum / (double)cnt;
        x->skew_end = latest_end - earliest_end;
        x->full_mb = x->algo_bw = x->bus_bw = NAN;
        if (ref->has_mb && ct) {
            x->full_mb = strcmp(ct, "allgather") == 0 ? ref->out_mb : ref->in_mb;
            x->algo_bw = lat > 0 ? (x->full_mb / 1024) / (lat / 1e6) : NAN;
            if (ref->cell[TL_CF_GSIZE] && ref->num[TL_CF_GSIZE] && strcmp(ct, "alltoallv") != 0) {
                double n = ref->numv[TL_CF_GSIZE];
                double sf = strcmp(ct, "allreduce") == 0 ? 2 * (n - 1) / n : (n - 1) / n;
                x->bus_bw = x->algo_bw * sf;
            }
        }
    }
    free(first);
    free(seen_order);
    if (rc) {
        for (size_t i = 0; i < nv; i++)
            free(v[i].wait);
        free(v);
        free(slots);
        return rc;
    }
    *out = v;
    *nout = nv;
    *slots_out = slots;
    return 0;
}

static const char *const isync_general =
    "collective_id,Process Group Name,Process Group Ranks,Collective name,Group size,dtype,In "
    "msg nelems,Out msg nelems,In msg size (MB),Out msg size (MB),Full msg size (MB),"
    "comm_latency,skew in start time,earliest arrival rank,avg_wait_time,skew in end time,algo "
    "bw (GB/s),bus bw (GB/s)";

static int sheet_isync(struct nctx *c, const struct isync *v, size_t nv, int gpn)
{
    if (nv == 0)
        return empty_sheet(c, "nccl_implicit_sync");
    struct mp_buf *b = tl_new_sheet(c->rep, "nccl_implicit_sync");
    if (!b)
        return MP_ENOMEM;
    /* per-rank columns in pandas' order: the union of each row's keys
     * (its ranks' ts and dur, then their wait times) by first appearance */
    size_t world = c->world, ncol = 0;
    bool *seen = calloc(world * 3 + 1, sizeof(bool));
    size_t *cols = malloc((world * 3 + 1) * sizeof(size_t));
    int rc = (!seen || !cols) ? MP_ENOMEM : 0;
    for (size_t i = 0; i < nv && !rc; i++)
        for (int pass = 0; pass < 2; pass++)
            for (size_t k = 0; k < world; k++) {
                if (!v[i].by_rank[k])
                    continue;
                for (size_t kind = pass ? 2 : 0; kind < (pass ? 3u : 2u); kind++)
                    if (!seen[k * 3 + kind]) {
                        seen[k * 3 + kind] = true;
                        cols[ncol++] = k * 3 + kind;
                    }
            }
    static const char *const kind_names[3] = {"ts", "dur", "wait_time"};
    rc = rc ? rc : mp_buf_puts(b, isync_general);
    for (size_t j = 0; j < ncol && !rc; j++)
        rc = mp_buf_printf(b, ",rank_%zu_%s", cols[j] / 3, kind_names[cols[j] % 3]);
    if (!rc && gpn > 0)
        rc = mp_buf_puts(b, ",node_span");
    rc = rc ? rc : mp_buf_putc(b, '\n');
    struct mp_csv csv;
    mp_csv_init(&csv, b, "\n");
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    for (size_t i = 0; i < nv && !rc; i++) {
        const struct isync *x = &v[i];
        const struct nrow *r = x->ref;
        rc = mp_csv_str(&csv, mp_intern_str(c->cids, x->cid));
        for (int f = TL_CF_PGN; f <= TL_CF_OUT && !rc; f++)
            rc = put_cell(&csv, r->cell[f]);
        rc = rc ? rc : tl_csv_float(&csv, &cell, r->in_mb, r->has_mb);
        rc = rc ? rc : tl_csv_float(&csv, &cell, r->out_mb, r->has_mb);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->full_mb, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->comm_latency, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->skew_start, true);
        rc = rc ? rc : mp_csv_fmt(&csv, "%d", x->earliest);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->avg_wait, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->skew_end, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->algo_bw, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, x->bus_bw, true);
        for (size_t j = 0; j < ncol && !rc; j++) {
            size_t k = cols[j] / 3, kind = cols[j] % 3;
            const struct nrow *rk = x->by_rank[k];
            double val = !rk ? NAN : kind == 0 ? rk->ts : kind == 1 ? rk->dur : x->wait[k];
            rc = tl_csv_float(&csv, &cell, val, rk != NULL);
        }
        if (gpn > 0)
            rc = rc ? rc : mp_csv_str(&csv, node_span(r->cell[TL_CF_PGR], gpn));
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    free(seen);
    free(cols);
    return rc;
}

/* nccl_summary_implicit_sync: grouped by collective name, dtype and input
 * size; mean/median/min/max of latency, skews and bandwidths. */
struct sgrp {
    size_t *members;
    size_t n;
    double total;
    size_t order;
};

static const char *nz(const char *s)
{
    return s ? s : "Unknown";
}

static const struct isync *g_iv;

static int cmp_isync_key(const struct isync *a, const struct isync *b)
{
    int k = strcmp(nz(a->ref->cell[TL_CF_NAME]), nz(b->ref->cell[TL_CF_NAME]));
    if (k)
        return k;
    k = strcmp(nz(a->ref->cell[TL_CF_DTYPE]), nz(b->ref->cell[TL_CF_DTYPE]));
    if (k)
        return k;
    const struct nrow *x = a->ref, *y = b->ref;
    if (x->num[TL_CF_IN] && y->num[TL_CF_IN]) {
        if (x->numv[TL_CF_IN] != y->numv[TL_CF_IN])
            return x->numv[TL_CF_IN] < y->numv[TL_CF_IN] ? -1 : 1;
        return 0;
    }
    return strcmp(nz(x->cell[TL_CF_IN]), nz(y->cell[TL_CF_IN]));
}

static int cmp_isync_idx(const void *p, const void *q)
{
    size_t i = *(const size_t *)p, j = *(const size_t *)q;
    int k = cmp_isync_key(&g_iv[i], &g_iv[j]);
    if (k)
        return k;
    return i < j ? -1 : (i > j ? 1 : 0);
}

static int cmp_sgrp(const void *x, const void *y)
{
    const struct sgrp *a = x, *b = y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return a->order < b->order ? -1 : (a->order > b->order ? 1 : 0);
}

static int put_stats4(struct mp_csv *csv, struct mp_buf *cell, const double *x, size_t n)
{
    /* mean, median, min, max over the non-NaN values */
    struct tl_stats st = {0};
    int rc = tl_stats(x, n, 1, &st);
    bool ok = n > 0;
    rc = rc ? rc : tl_csv_float(csv, cell, ok ? kahan_sum(x, n) / (double)n : NAN, ok);
    rc = rc ? rc : tl_csv_float(csv, cell, st.median, ok);
    rc = rc ? rc : tl_csv_float(csv, cell, st.min, ok);
    rc = rc ? rc : tl_csv_float(csv, cell, st.max, ok);
    return rc;
}

static int sheet_summary_isync(struct nctx *c, const struct isync *v, size_t nv)
{
    if (nv == 0)
        return empty_sheet(c, "nccl_summary_implicit_sync");
    size_t *idx = malloc(nv * sizeof(size_t));
    struct sgrp *g = calloc(nv, sizeof(*g));
    double *x = malloc(nv * sizeof(double));
    int rc = (!idx || !g || !x) ? MP_ENOMEM : 0;
    size_t ng = 0;
    bool any_algo = false, any_bus = false;
    if (!rc) {
        for (size_t i = 0; i < nv; i++) {
            idx[i] = i;
            any_algo |= !isnan(v[i].algo_bw);
            any_bus |= !isnan(v[i].bus_bw);
        }
        g_iv = v;
        qsort(idx, nv, sizeof(size_t), cmp_isync_idx);
        for (size_t k = 0; k < nv; k++) {
            if (ng > 0 && cmp_isync_key(&v[g[ng - 1].members[0]], &v[idx[k]]) == 0) {
                g[ng - 1].n++;
            } else {
                g[ng] = (struct sgrp){.members = &idx[k], .n = 1, .order = ng};
                ng++;
            }
        }
        for (size_t gi = 0; gi < ng && !rc; gi++) {
            for (size_t k = 0; k < g[gi].n; k++)
                x[k] = v[g[gi].members[k]].comm_latency;
            struct tl_stats st = {0};
            rc = tl_stats(x, g[gi].n, 1, &st);
            g[gi].total = st.sum / 1000;
        }
        if (!rc)
            qsort(g, ng, sizeof(*g), cmp_sgrp);
    }
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    rc = rc ? rc
            : tl_csv_sheet(c->rep, "nccl_summary_implicit_sync", &csv,
                           "Collective name,dtype,In msg nelems,Process Group Name,Group size,"
                           "Full msg size (MB),comm_latency_mean,comm_latency_median,"
                           "comm_latency_min,comm_latency_max,skew in start time_mean,skew in "
                           "start time_median,skew in start time_min,skew in start time_max,"
                           "skew in end time_mean,skew in end time_median,skew in end time_min,"
                           "skew in end time_max",
                           any_algo ? ",algo bw (GB/s)_mean,algo bw (GB/s)_median,algo bw "
                                      "(GB/s)_min,algo bw (GB/s)_max"
                                    : "",
                           any_bus ? ",bus bw (GB/s)_mean,bus bw (GB/s)_median,bus bw "
                                     "(GB/s)_min,bus bw (GB/s)_max"
                                   : "",
                           ",count,Total comm latency (ms)", NULL);
    for (size_t gi = 0; gi < ng && !rc; gi++) {
        const struct sgrp *G = &g[gi];
        const struct nrow *r0 = v[G->members[0]].ref;
        rc = mp_csv_str(&csv, nz(r0->cell[TL_CF_NAME]));
        rc = rc ? rc : mp_csv_str(&csv, nz(r0->cell[TL_CF_DTYPE]));
        rc = rc ? rc : mp_csv_str(&csv, nz(r0->cell[TL_CF_IN]));
        /* "first" skips missing values */
        const char *pgn = NULL, *gs = NULL;
        double full = NAN;
        for (size_t k = 0; k < G->n; k++) {
            const struct isync *e = &v[G->members[k]];
            if (!pgn)
                pgn = e->ref->cell[TL_CF_PGN];
            if (!gs)
                gs = e->ref->cell[TL_CF_GSIZE];
            if (isnan(full))
                full = e->full_mb;
        }
        rc = rc ? rc : put_cell(&csv, pgn);
        rc = rc ? rc : put_cell(&csv, gs);
        rc = rc ? rc : tl_csv_float(&csv, &cell, full, true);
        for (int m = 0; m < 5 && !rc; m++) {
            if ((m == 3 && !any_algo) || (m == 4 && !any_bus))
                continue;
            size_t cnt = 0;
            for (size_t k = 0; k < G->n; k++) {
                const struct isync *e = &v[G->members[k]];
                double val = m == 0   ? e->comm_latency
                             : m == 1 ? e->skew_start
                             : m == 2 ? e->skew_end
                             : m == 3 ? e->algo_bw
                                      : e->bus_bw;
                if (!isnan(val))
                    x[cnt++] = val;
            }
            rc = put_stats4(&csv, &cell, x, cnt);
        }
        rc = rc ? rc : mp_csv_fmt(&csv, "%zu", G->n);
        rc = rc ? rc : tl_csv_float(&csv, &cell, G->total, true);
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    free(idx);
    free(g);
    free(x);
    return rc;
}

/* ---- straggler_summary ---- */

/* Python round(numpy.float64, 1): numpy rounds x * 10 half to even. */
static double np_round1(double v)
{
    return rint(v * 10.0) / 10.0;
}

struct strag {
    size_t rank;
    double total_wait, mean_wait, pct_last, total_dur;
    size_t last, first;
};

static int cmp_strag(const void *x, const void *y)
{
    const struct strag *a = x, *b = y;
    if (a->total_wait != b->total_wait)
        return a->total_wait < b->total_wait ? -1 : 1;
    return a->rank < b->rank ? -1 : (a->rank > b->rank ? 1 : 0);
}

static int sheet_straggler(struct nctx *c, const struct isync *v, size_t nv, int gpn)
{
    if (nv == 0)
        return 0;
    size_t world = c->world;
    struct strag *s = calloc(world, sizeof(*s));
    double *x = malloc(nv * sizeof(double));
    size_t *last = calloc(world, sizeof(size_t));
    bool *has = calloc(world, sizeof(bool));
    int rc = (!s || !x || !last || !has) ? MP_ENOMEM : 0;
    size_t ns = 0;
    for (size_t i = 0; i < nv && !rc; i++) {
        /* idxmin over the wait columns: the first smallest */
        long best = -1;
        for (size_t k = 0; k < world; k++) {
            if (v[i].by_rank[k])
                has[k] = true;
            if (isnan(v[i].wait[k]))
                continue;
            if (best < 0 || v[i].wait[k] < v[i].wait[best])
                best = (long)k;
        }
        if (best >= 0)
            last[best]++;
    }
    for (size_t k = 0; k < world && !rc; k++) {
        if (!has[k])
            continue;
        size_t cnt = 0, first = 0;
        for (size_t i = 0; i < nv; i++) {
            if (!isnan(v[i].wait[k]))
                x[cnt++] = v[i].wait[k];
            if (v[i].earliest == (int)k)
                first++;
        }
        struct tl_stats st = {0};
        rc = tl_stats(x, cnt, 1, &st);
        double dsum = 0;
        size_t nd = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->rows[i].rank == (int)k)
                nd++;
        double *dd = malloc((nd ? nd : 1) * sizeof(double));
        if (!dd) {
            rc = MP_ENOMEM;
            break;
        }
        nd = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->rows[i].rank == (int)k)
                dd[nd++] = c->rows[i].dur;
        struct tl_stats ds = {0};
        rc = rc ? rc : tl_stats(dd, nd, 1, &ds);
        dsum = nd ? ds.sum : NAN;
        free(dd);
        s[ns++] = (struct strag){.rank = k,
                                 .total_wait = np_round1(cnt ? st.sum : 0),
                                 .mean_wait = cnt ? np_round1(st.mean) : NAN,
                                 .last = last[k],
                                 .first = first,
                                 .pct_last = np_round1(100.0 * (double)last[k] / (double)nv),
                                 .total_dur = np_round1(dsum)};
    }
    if (!rc)
        qsort(s, ns, sizeof(*s), cmp_strag);
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    rc = rc ? rc
            : tl_csv_sheet(c->rep, "straggler_summary", &csv,
                           "rank,total_wait_time_us,mean_wait_time_us,times_arrived_last,"
                           "times_arrived_first,pct_arrived_last,num_collectives,"
                           "total_nccl_dur_us",
                           gpn > 0 ? ",node_id" : "", NULL);
    for (size_t i = 0; i < ns && !rc; i++) {
        rc = mp_csv_fmt(&csv, "%zu", s[i].rank);
        rc = rc ? rc : tl_csv_float(&csv, &cell, s[i].total_wait, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, s[i].mean_wait, true);
        rc = rc ? rc : mp_csv_fmt(&csv, "%zu", s[i].last);
        rc = rc ? rc : mp_csv_fmt(&csv, "%zu", s[i].first);
        rc = rc ? rc : tl_csv_float(&csv, &cell, s[i].pct_last, true);
        rc = rc ? rc : mp_csv_fmt(&csv, "%zu", nv);
        rc = rc ? rc : tl_csv_float(&csv, &cell, s[i].total_dur, true);
        if (gpn > 0)
            rc = rc ? rc : mp_csv_fmt(&csv, "%zu", s[i].rank / (size_t)gpn);
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    free(s);
    free(x);
    free(last);
    free(has);
    return rc;
}

int mp_nccl_report_build(const struct mp_nccl_opts *o, struct mp_report **out, struct mp_diag *d)
{
    *out = NULL;
    struct nctx c = {.world = o->world_size};
    c.cids = mp_intern_new();
    c.rep = calloc(1, sizeof(*c.rep));
    if (!c.cids || !c.rep) {
        mp_intern_free(c.cids);
        free(c.rep);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    int rc = 0;
    int gpn = o->gpus_per_node;
    for (size_t r = 0; r < o->world_size && !rc; r++) {
        struct mp_trace_store_opts so = {.keep_args = true,
                                         .keep_args_for = keep_comm_args,
                                         .on_progress = o->on_progress,
                                         .user = o->progress_user};
        struct mp_trace_store *s = NULL;
        rc = mp_trace_store_load(o->paths[r], &so, &s, d);
        if (rc)
            break;
        if (r == 0 && gpn == 0) {
            long n = json_array_len(s->meta_device_properties);
            gpn = n > 0 ? (int)n : -1;
        }
        rc = add_rank(&c, s, (int)r);
        if (rc)
            rc = mp_diag_set(d, rc, "out of memory reading %s", o->paths[r]);
        c.rep->events += s->n;
        mp_trace_store_free(s);
    }
    if (!rc && c.n == 0)
        rc = mp_diag_set(d, MP_ENOTFOUND, "no collective (nccl/rccl) kernels in the traces");
    rc = rc ? rc : assign_ids(&c);
    struct isync *v = NULL;
    size_t nv = 0;
    const struct nrow **slots = NULL;
    rc = rc ? rc : build_isync(&c, &v, &nv, &slots, d);
    if (!rc && (rc = sheet_summary_isync(&c, v, nv)) == 0 &&
        (rc = sheet_summary_long(&c, gpn)) == 0) {
        if (o->detailed) {
            rc = sheet_long(&c, gpn);
            rc = rc ? rc : sheet_isync(&c, v, nv, gpn);
        }
        rc = rc ? rc : sheet_straggler(&c, v, nv, gpn);
        if (rc)
            rc = mp_diag_set(d, rc, "out of memory");
    }
    for (size_t i = 0; i < nv; i++)
        free(v[i].wait);
    free(v);
    free((void *)slots);
    c.rep->gpu_events = c.n;
    for (size_t i = 0; i < c.n; i++)
        row_free(&c.rows[i]);
    free(c.rows);
    mp_intern_free(c.cids);
    if (rc) {
        mp_report_free(c.rep);
        return rc;
    }
    *out = c.rep;
    return 0;
}

/* ---- rank files ---- */

/* Python regex (the subset rank patterns use) to POSIX ERE: \d \w \s,
 * escapes inside [...], (?P<name>...) and (?:...). *group is the POSIX
 * index of the group named "rank", else of Python's group 1. */
static int py_to_ere(const char *re, struct mp_buf *b, int *group)
{
    int rc = 0, ngroups = 0, first_cap = 0, named = 0;
    for (const char *p = re; *p && !rc; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            rc = *p == 'd'   ? mp_buf_puts(b, "[0-9]")
                 : *p == 'w' ? mp_buf_puts(b, "[A-Za-z0-9_]")
                 : *p == 's' ? mp_buf_puts(b, "[[:space:]]")
                             : mp_buf_printf(b, "\\%c", *p);
        } else if (*p == '[') {
            char lit[256] = {0};
            struct mp_buf ranges;
            mp_buf_init(&ranges, 0);
            bool neg = false;
            p++;
            if (*p == '^') {
                neg = true;
                p++;
            }
            bool start = true;
            for (; *p && !rc && (start || *p != ']'); p++) {
                start = false;
                char ch;
                if (*p == '\\' && p[1]) {
                    p++;
                    if (*p == 'd') {
                        rc = mp_buf_puts(&ranges, "0-9");
                        continue;
                    }
                    if (*p == 'w') {
                        rc = mp_buf_puts(&ranges, "A-Za-z0-9_");
                        continue;
                    }
                    ch = *p;
                } else {
                    ch = *p;
                }
                if (p[1] == '-' && p[2] && p[2] != ']' && ch != '-' && ch != ']') {
                    rc = mp_buf_printf(&ranges, "%c-%c", ch, p[2]);
                    p += 2;
                } else {
                    lit[(unsigned char)ch] = 1;
                }
            }
            if (!*p) {
                mp_buf_fini(&ranges);
                return MP_EINVAL;
            }
            rc = rc ? rc : mp_buf_puts(b, neg ? "[^" : "[");
            if (!rc && lit[']'])
                rc = mp_buf_putc(b, ']');
            for (int ch = 1; ch < 256 && !rc; ch++)
                if (lit[ch] && ch != ']' && ch != '-' && ch != '^')
                    rc = mp_buf_putc(b, (char)ch);
            if (!rc && lit['^'])
                rc = mp_buf_putc(b, '^');
            rc = rc ? rc : mp_buf_puts(b, mp_buf_cstr(&ranges));
            if (!rc && lit['-'])
                rc = mp_buf_putc(b, '-');
            rc = rc ? rc : mp_buf_putc(b, ']');
            mp_buf_fini(&ranges);
        } else if (*p == '(') {
            ngroups++;
            if (strncmp(p, "(?P<", 4) == 0) {
                const char *e = strchr(p, '>');
                if (!e)
                    return MP_EINVAL;
                if (e - p - 4 == 4 && strncmp(p + 4, "rank", 4) == 0)
                    named = ngroups;
                if (!first_cap)
                    first_cap = ngroups;
                p = e;
            } else if (strncmp(p, "(?:", 3) == 0) {
                p += 2;
            } else if (p[1] == '?') {
                return MP_EINVAL;
            } else if (!first_cap) {
                first_cap = ngroups;
            }
            rc = mp_buf_putc(b, '(');
        } else {
            rc = mp_buf_putc(b, *p);
        }
    }
    *group = named ? named : first_cap;
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int match_rank(const regex_t *rx, int group, const char *s, long *rank)
{
    regmatch_t m[16];
    if (regexec(rx, s, 16, m, 0) != 0 || group <= 0 || group >= 16 || m[group].rm_so < 0)
        return -1;
    char tmp[32];
    size_t n = (size_t)(m[group].rm_eo - m[group].rm_so);
    if (n == 0 || n >= sizeof(tmp))
        return -1;
    memcpy(tmp, s + m[group].rm_so, n);
    tmp[n] = '\0';
    char *end;
    *rank = strtol(tmp, &end, 10);
    return *end ? -1 : 0;
}

int mp_nccl_find_ranks(const char *const *inputs, size_t n_inputs, const char *rank_regex,
                       size_t *world_size, char ***paths_out, struct mp_diag *d)
{
    *paths_out = NULL;
    glob_t gl;
    memset(&gl, 0, sizeof(gl));
    int flags = 0;
    struct mp_buf pat;
    mp_buf_init(&pat, 0);
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat st;
        mp_buf_reset(&pat);
        if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            for (int k = 0; k < 2; k++) {
                mp_buf_reset(&pat);
                if (mp_buf_printf(&pat, "%s/*%s", inputs[i], k ? ".json" : ".json.gz"))
                    goto oom;
                glob(mp_buf_cstr(&pat), flags, NULL, &gl);
                flags = GLOB_APPEND;
            }
        } else {
            glob(inputs[i], flags, NULL, &gl);
            flags = GLOB_APPEND;
        }
    }
    mp_buf_fini(&pat);
    if (gl.gl_pathc == 0) {
        globfree(&gl);
        return mp_diag_set(d, MP_ENOTFOUND, "no trace files matched '%s'%s",
                           n_inputs ? inputs[0] : "", n_inputs > 1 ? " (or the other inputs)" : "");
    }
    qsort(gl.gl_pathv, gl.gl_pathc, sizeof(char *), cmp_str);
    struct mp_buf ere;
    mp_buf_init(&ere, 0);
    int group = 0;
    regex_t rx;
    if (py_to_ere(rank_regex, &ere, &group) != 0 || group == 0 ||
        regcomp(&rx, mp_buf_cstr(&ere), REG_EXTENDED) != 0) {
        mp_buf_fini(&ere);
        globfree(&gl);
        return mp_diag_set(d, MP_EINVAL,
                           "--rank-regex '%s': not a usable pattern (it needs a group (...) or "
                           "(?P<rank>...) around the rank number)",
                           rank_regex);
    }
    mp_buf_fini(&ere);
    size_t cap = 64;
    char **by_rank = calloc(cap, sizeof(char *));
    long maxr = -1;
    int rc = 0;
    if (!by_rank) {
        regfree(&rx);
        globfree(&gl);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < gl.gl_pathc && !rc; i++) {
        const char *path = gl.gl_pathv[i];
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        long r;
        if (match_rank(&rx, group, base, &r) != 0 && match_rank(&rx, group, path, &r) != 0)
            continue;
        if (r < 0 || r > 1000000)
            continue;
        if ((size_t)r >= cap) {
            size_t nc = (size_t)r * 2 + 1;
            char **nb = mp_reallocarray(by_rank, nc, sizeof(char *));
            if (!nb) {
                rc = MP_ENOMEM;
                break;
            }
            memset(nb + cap, 0, (nc - cap) * sizeof(char *));
            by_rank = nb;
            cap = nc;
        }
        if (!by_rank[r]) {
            by_rank[r] = mp_strdup(path);
            if (!by_rank[r])
                rc = MP_ENOMEM;
        }
        if (r > maxr)
            maxr = r;
    }
    regfree(&rx);
    size_t nfiles = gl.gl_pathc;
    globfree(&gl);
    if (!rc && maxr < 0)
        rc = mp_diag_set(d, MP_ENOTFOUND, "%zu file(s) matched, but none matched --rank-regex '%s'",
                         nfiles, rank_regex);
    else if (rc)
        rc = mp_diag_set(d, rc, "out of memory");
    size_t world = *world_size ? *world_size : (size_t)(maxr + 1);
    for (size_t r = 0; r < world && !rc; r++)
        if (r >= cap || !by_rank[r])
            rc = mp_diag_set(d, MP_ENOTFOUND,
                             "no trace file for rank %zu of %zu (every rank is needed to match "
                             "collectives)",
                             r, world);
    if (!rc && world > cap) {
        rc = mp_diag_set(d, MP_ENOTFOUND, "no trace file for rank %zu", cap);
    }
    if (rc) {
        for (size_t r = 0; r < cap; r++)
            free(by_rank[r]);
        free(by_rank);
        return rc;
    }
    for (size_t r = world; r < cap; r++) {
        free(by_rank[r]);
        by_rank[r] = NULL;
    }
    *world_size = world;
    *paths_out = by_rank;
    return 0;
oom:
    mp_buf_fini(&pat);
    globfree(&gl);
    return mp_diag_set(d, MP_ENOMEM, "out of memory");
}

void mp_nccl_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}
