/* How much of L2 the workload had left dirty when each call of an op
 * started (docs/replay.md, "Dirty L2 before the op"). A kernel that streams
 * more than L2 holds evicts what is there; evicting a dirty line costs a
 * write to HBM, a clean one nothing. How many lines were dirty depends on
 * what ran before the call: the same decode GEMM ran 16.0 us after an
 * RMSNorm (tiny writes) and 18.7 us after the KV-cache concatenation (17 MB
 * written) in one Llama-8B trace on an H100; replayed with L2 as dirty as
 * those contexts left it, its median came within 3 % of the trace's (0.83x
 * with the op's own inputs' bytes dirty).
 *
 * The estimate walks back from the call's first kernel over the GPU
 * activity on its device and stream. Each CPU op met on the way adds the
 * bytes it wrote (its output, estimated from the recorded argument shapes
 * and types: a GEMM's M x N, a concatenation's inputs, an in-place op's
 * self, an elementwise op's broadcast shape, nothing for a reduction), then
 * the bytes it read (its tensor inputs). The L2 is taken to hold the most
 * recent traffic, so for an L2 of G bytes the dirty bytes are the writes
 * among the last G bytes of traffic. Activity with no shapes (a kernel
 * without a cpu_op, an op recorded without shapes) counts as reads at
 * 1.5 MB per microsecond of its duration; memcpy/memset as writes of their
 * "bytes". Reads of lines still in L2 are counted as new traffic (no
 * addresses are recorded), so the estimate errs towards fewer dirty bytes.
 * The walk is done once per stream (build_units: cumulative traffic and
 * writes per run of one op's activity); each call is then a binary search
 * per L2 size, so a trace of 60k small ops costs 0.37 s, not 5 s. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/stats.h>
#include <magpie/trace.h>
#include <magpie/trace_tree.h>

#include "replay_int.h"

const double rp_l2_grid_mib[MP_REPLAY_NGRID] = {2,  4,  6,  8,  16, 24, 32,  40,
                                                48, 50, 60, 64, 72, 96, 128, 256};

#define TX_MAXARG 64
#define TX_BYTES_PER_US 1.5e6 /* activity without shapes: reads at 1.5 TB/s */

/* Elements of a shape (a sequence of ints), -1 when v is not one. */
static double numel(const struct rp_val *v)
{
    if (v->k != RV_SEQ)
        return -1;
    double m = 1;
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].k != RV_INT || v->items[i].i < 0)
            return -1;
        m *= (double)v->items[i].i;
    }
    return m;
}

static double last_dim(const struct rp_val *v, bool first)
{
    if (v->k != RV_SEQ || !v->n)
        return -1;
    const struct rp_val *x = &v->items[first ? 0 : v->n - 1];
    return x->k == RV_INT && x->i > 0 ? (double)x->i : -1;
}

static bool is_reduction(const char *nm)
{
    static const char *const r[] = {
        "sum",          "mean",   "amax",      "amin",     "max",
        "min",          "argmax", "argmin",    "norm",     "linalg_vector_norm",
        "var",          "std",    "var_mean",  "std_mean", "prod",
        "any",          "all",    "logsumexp", "topk",     "nansum",
        "count_nonzero"};
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
        if (strcmp(nm, r[i]) == 0)
            return true;
    return false;
}

/* The output elements of a GEMM-like op: rows of A (all its dims but the
 * last) times the columns of B (its last dim; a linear weight's first),
 * A and B the first two tensors after addmm/baddbmm's bias. -1 unknown. */
static double gemm_out(const char *nm, const struct rp_val *dims)
{
    size_t a = strncmp(nm, "add", 3) == 0 || strncmp(nm, "badd", 4) == 0 ? 1 : 0;
    if (dims->k != RV_SEQ || dims->n < a + 2)
        return -1;
    const struct rp_val *A = &dims->items[a], *B = &dims->items[a + 1];
    double na = numel(A), ka = last_dim(A, false);
    double nb = last_dim(B, strcmp(nm, "linear") == 0);
    if (na < 0 || ka <= 0)
        return -1;
    if (B->k == RV_SEQ && B->n == 1) /* matrix-vector */
        return na / ka;
    return nb > 0 ? na / ka * nb : -1;
}

/* Bytes an op read and wrote, from its recorded Input Dims and Input type. */
static void op_bytes_raw(const char *op, const struct rp_val *dims, const struct rp_val *types,
                         double *rd, double *wr)
{
    double b[TX_MAXARG] = {0};
    size_t n = dims->k == RV_SEQ ? dims->n : 0;
    n = n > TX_MAXARG ? TX_MAXARG : n;
    int first = -1, elt0 = 0;
    double sum = 0, maxne = 0, list = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rp_val *d = &dims->items[i];
        const char *ty = types->k == RV_SEQ && i < types->n && types->items[i].k == RV_STR
                             ? types->items[i].s
                             : "";
        if (d->k != RV_SEQ)
            continue;
        if (d->n && d->items[0].k == RV_SEQ) { /* a list of tensors */
            for (size_t k = 0; k < d->n; k++) {
                double m = numel(&d->items[k]);
                list += m > 0 ? m * (elt0 ? elt0 : 2) : 0;
            }
            continue;
        }
        int e = rp_dtype_bytes(ty);
        double m = numel(d);
        if (!e || m < 0)
            continue;
        b[i] = m * e;
        sum += b[i];
        if (first < 0) {
            first = (int)i;
            elt0 = e;
        }
        maxne = m > maxne ? m : maxne;
    }
    const char *c = strstr(op, "::");
    const char *nm = c ? c + 2 : op;
    size_t l = strlen(nm);
    *rd = sum + list;
    *wr = maxne * elt0; /* elementwise: the broadcast shape, the first input's type */
    if (list > 0 && (strcmp(nm, "cat") == 0 || strcmp(nm, "_cat") == 0 || strcmp(nm, "stack") == 0))
        *wr = list;
    else if (rp_gemm_op(op) && !strstr(nm, "conv")) {
        double o = gemm_out(nm, dims);
        *wr = o > 0 ? o * (strstr(nm, "scaled") ? 2 : (elt0 ? elt0 : 2)) : 0;
    } else if (is_reduction(nm))
        *wr = 0;
    else if (strstr(nm, "attention") || strstr(nm, "flash"))
        *wr = first >= 0 ? b[first] : 0;                /* the output has the query's shape */
    else if (l > 1 && nm[l - 1] == '_' && first >= 0) { /* in place: self written */
        *wr = b[first];
        *rd = sum + list - b[first];
    }
}

#define TX_MAXBYTES 1e15 /* a recorded shape beyond any GPU's memory: capped */

static double sane(double x)
{
    return isfinite(x) && x > 0 ? fmin(x, TX_MAXBYTES) : isinf(x) && x > 0 ? TX_MAXBYTES : 0;
}

void rp_op_bytes(const char *op, const struct rp_val *dims, const struct rp_val *types, double *rd,
                 double *wr)
{
    op_bytes_raw(op ? op : "", dims, types, rd, wr);
    *rd = sane(*rd);
    *wr = sane(*wr);
}

/* The recorded cell of event i as a Python literal, parsed into v. */
static int cell(struct rp_traffic *tr, int32_t i, const char *key, struct rp_val *v)
{
    memset(v, 0, sizeof(*v));
    mp_buf_reset(&tr->tmp);
    if (rp_event_cell(tr->t->s, i, key, &tr->tmp))
        return 0; /* a cell too big or malformed: no shapes */
    struct mp_diag d = {0};
    int rc = rp_val_parse(mp_buf_cstr(&tr->tmp), key, v, &d);
    if (rc == MP_EPARSE) { /* a cell magpie cannot read: no shapes */
        rp_val_fini(v);
        rc = 0;
    }
    return rc;
}

/* rd/wr of CPU op or GPU event i, computed once. */
static int bytes_of(struct rp_traffic *tr, int32_t i)
{
    if (tr->rd[i] >= 0)
        return 0;
    const struct mp_trace_tree *t = tr->t;
    tr->rd[i] = tr->wr[i] = 0;
    if (t->kind[i] == MP_K_MEMCPY || t->kind[i] == MP_K_MEMSET) {
        struct rp_val v;
        int rc = cell(tr, i, "bytes", &v);
        if (!rc && v.k == RV_INT && v.i > 0)
            tr->wr[i] = sane((double)v.i);
        rp_val_fini(&v);
        return rc;
    }
    if (t->kind[i] != MP_K_CPU_OP)
        return 0;
    struct rp_val dims = {0}, types = {0};
    int rc = cell(tr, i, "Input Dims", &dims);
    rc = rc ? rc : cell(tr, i, "Input type", &types);
    if (!rc) {
        const char *name = mp_trace_tree_name(t, i);
        rp_op_bytes(name, &dims, &types, &tr->rd[i], &tr->wr[i]);
    }
    rp_val_fini(&dims);
    rp_val_fini(&types);
    return rc;
}

/* The stream's activity as units: runs of consecutive GPU events with the
 * same launching op (or the event itself, when none), each with the bytes
 * it wrote and read: its op's, counted once, or, without shapes, reads at
 * TX_BYTES_PER_US per microsecond of every event in the run. Units are
 * laid out stream by stream in time order, with the traffic and writes of
 * the stream's units before each (struct rp_unit), so that the walk back
 * from a call is a binary search. */
static int build_units(struct rp_traffic *tr)
{
    const struct mp_trace_tree *t = tr->t;
    size_t n = t->s->n;
    int32_t *next = malloc((n ? n : 1) * sizeof(int32_t));
    if (!next)
        return MP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        next[i] = -1;
        tr->unit[i] = -1;
    }
    for (size_t i = 0; i < n; i++)
        if (tr->prev[i] >= 0)
            next[tr->prev[i]] = (int32_t)i;
    int rc = 0;
    for (size_t h = 0; !rc && h < n; h++) {
        if (!mp_kind_is_gpu(t->kind[h]) || tr->prev[h] >= 0)
            continue; /* not the first activity of a stream */
        int32_t start = (int32_t)tr->nunits, key = -2;
        double traffic = 0, writes = 0, r = 0, w = 0;
        for (int32_t g = (int32_t)h; !rc && g >= 0; g = next[g]) {
            int32_t l = rp_launching_op(t, g);
            int32_t k = l >= 0 ? l : g;
            rc = bytes_of(tr, k);
            if (rc)
                break;
            if (k != key) { /* a new unit: close the one before */
                if (key != -2) {
                    tr->units[tr->nunits - 1].w = w;
                    traffic += w + r;
                    writes += w;
                }
                if (MP_GROW(tr->units, tr->capunits, tr->nunits + 1, 1024)) {
                    rc = MP_ENOMEM;
                    break;
                }
                tr->units[tr->nunits++] = (struct rp_unit){traffic, writes, 0, start};
                key = k;
                r = tr->rd[k]; /* shaped: its op's bytes, once */
                w = tr->wr[k];
            }
            if (tr->rd[k] + tr->wr[k] <= 0) /* no shapes: by duration, every event */
                r += sane(t->s->dur[g] * TX_BYTES_PER_US);
            tr->unit[g] = (int32_t)tr->nunits - 1;
        }
        if (!rc && key != -2) /* the stream's last unit */
            tr->units[tr->nunits - 1].w = w;
    }
    free(next);
    return rc;
}

int rp_traffic_init(struct rp_traffic *tr, const struct mp_trace_tree *t, const int32_t *prev)
{
    memset(tr, 0, sizeof(*tr));
    size_t n = t->s->n ? t->s->n : 1;
    tr->t = t;
    tr->prev = prev;
    tr->rd = malloc(n * sizeof(double));
    tr->wr = malloc(n * sizeof(double));
    tr->unit = malloc(n * sizeof(int32_t));
    if (!tr->rd || !tr->wr || !tr->unit) {
        rp_traffic_fini(tr);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        tr->rd[i] = -1;
    mp_buf_init(&tr->tmp, 1u << 20);
    tr->ready = true;
    int rc = build_units(tr);
    if (rc)
        rp_traffic_fini(tr);
    return rc;
}

void rp_traffic_fini(struct rp_traffic *tr)
{
    free(tr->rd);
    free(tr->wr);
    free(tr->unit);
    free(tr->units);
    if (tr->ready)
        mp_buf_fini(&tr->tmp);
    memset(tr, 0, sizeof(*tr));
}

int rp_traffic_dirty(struct rp_traffic *tr, int32_t first, double dirty[MP_REPLAY_NGRID])
{
    int32_t u = tr->unit[first];
    if (u < 0) {
        memset(dirty, 0, MP_REPLAY_NGRID * sizeof(double));
        return 0;
    }
    /* walking back from the call's unit: the traffic of units j..u-1 is
     * cum[u] - cum[j]; within unit j the writes come first (the most
     * recent), then the reads */
    const struct rp_unit *un = tr->units;
    int32_t s0 = un[u].first;
    for (int k = 0; k < MP_REPLAY_NGRID; k++) {
        double g = rp_l2_grid_mib[k] * 1048576.0;
        /* the largest j in [s0, u) with cum[u] - cum[j] >= g */
        int32_t lo = s0, hi = u - 1, j = -1;
        while (lo <= hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (un[u].cum - un[mid].cum >= g) {
                j = mid;
                lo = mid + 1;
            } else
                hi = mid - 1;
        }
        if (j < 0) { /* fewer bytes than g since the stream began: all its writes */
            dirty[k] = un[u].cumw - un[s0].cumw;
            continue;
        }
        double base = un[u].cum - un[j + 1].cum, wpre = un[u].cumw - un[j + 1].cumw;
        dirty[k] = wpre + (base + un[j].w >= g ? g - base : un[j].w);
    }
    return 0;
}

int rp_dirty_levels(double *v, size_t n, double l2_mib, struct mp_replay_dirty *out)
{
    memset(out, 0, sizeof(*out));
    out->l2_mib = l2_mib;
    if (!n)
        return 0;
    qsort(v, n, sizeof(double), mp_stats_cmp_double);
    /* clusters: sorted values split where they jump by more than an eighth
     * of the L2 (at least 1 MiB) */
    double thr = fmax(1048576.0, l2_mib * 1048576.0 / 8);
    size_t *start = malloc((n + 1) * sizeof(size_t));
    double *cm = malloc(n * sizeof(double)); /* each cluster's median */
    if (!start || !cm) {
        free(start);
        free(cm);
        return MP_ENOMEM;
    }
    size_t nc = 0;
    start[nc++] = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] - v[i - 1] > thr)
            start[nc++] = i;
    start[nc] = n;
    for (size_t c = 0; c < nc; c++) {
        size_t a = start[c], b = start[c + 1];
        cm[c] = (v[a + (b - a - 1) / 2] + v[a + (b - a) / 2]) / 2;
    }
    /* keep the MP_REPLAY_NLEVELS most common; the others' calls go to the
     * nearest kept level */
    int keep[MP_REPLAY_NLEVELS];
    int nk = 0;
    for (; nk < MP_REPLAY_NLEVELS && (size_t)nk < nc; nk++) {
        int best = -1;
        for (size_t c = 0; c < nc; c++) {
            bool taken = false;
            for (int j = 0; j < nk; j++)
                taken = taken || keep[j] == (int)c;
            if (!taken && (best < 0 ||
                           start[c + 1] - start[c] > start[(size_t)best + 1] - start[(size_t)best]))
                best = (int)c;
        }
        keep[nk] = best;
    }
    double cnt[MP_REPLAY_NLEVELS] = {0}, med[MP_REPLAY_NLEVELS];
    for (int j = 0; j < nk; j++)
        med[j] = cm[keep[j]];
    for (size_t c = 0; c < nc; c++) {
        int near = 0;
        for (int j = 1; j < nk; j++)
            if (fabs(med[j] - cm[c]) < fabs(med[near] - cm[c]))
                near = j;
        cnt[near] += (double)(start[c + 1] - start[c]);
    }
    free(start);
    free(cm);
    /* ascending by bytes */
    for (int j = 0; j < nk; j++) {
        int lo = j;
        for (int k = j + 1; k < nk; k++)
            if (med[k] < med[lo])
                lo = k;
        double tm = med[j], tc = cnt[j];
        med[j] = med[lo];
        cnt[j] = cnt[lo];
        med[lo] = tm;
        cnt[lo] = tc;
        out->bytes[j] = med[j];
        out->share[j] = cnt[j] / (double)n;
    }
    out->n = nk;
    return 0;
}
