/* What ran just before each selected op in the trace (docs/replay.md,
 * "Before the op"): for every call of the op (a cpu_op event with the row's
 * name and argument cells), the GPU activity that ran last on the same
 * device and stream before the call's first kernel, and the CPU op that
 * launched it. The most common such producer over the op's calls, the share
 * of calls it preceded and the median idle gap on the stream are the op's
 * trace_prev_* figures: what a short op's kernel found in L2 and in the
 * GPU's pipeline in the workload, which no isolated replay state has. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/stats.h>
#include <magpie/trace.h>
#include <magpie/trace_tree.h>

#include "replay_int.h"

struct pr_key {
    char *text; /* name \x1f dims \x1f types \x1f strides \x1f concrete */
    long count;
};

struct pr_op {
    struct pr_key *keys;
    size_t nkeys, capkeys;
    double *gaps;
    size_t ngaps, capgaps;
    long calls;
    double *dirty; /* MP_REPLAY_NGRID per call with a kernel */
    size_t ndirty, capdirty;
};

static const char *const cells[4] = {"Input Dims", "Input type", "Input Strides",
                                     "Concrete Inputs"};

int rp_event_cell(const struct mp_trace_store *s, int32_t i, const char *key, struct mp_buf *b)
{
    struct mp_strview obj = {s->args[i], s->args[i] ? s->args_len[i] : 0}, v;
    if (!obj.p || mp_trace_json_find(obj, key, &v) != 0)
        return 0;
    return mp_trace_json_pyrepr(b, v.p, v.p + v.n, true);
}

/* The event's four argument cells as the report writes them, \x1f-joined
 * after its name, into b. */
static int event_key(const struct mp_trace_store *s, int32_t i, const char *name, struct mp_buf *b)
{
    mp_buf_reset(b);
    int rc = mp_buf_puts(b, name);
    for (int k = 0; k < 4 && !rc; k++) {
        rc = mp_buf_putc(b, '\x1f');
        rc = rc ? rc : rp_event_cell(s, i, cells[k], b);
    }
    return rc;
}

/* The length of the name of the CPU op whose calls are the row's: the
 * row's name, or for a TraceLens-split row its op's, whose calls the replay
 * runs whole (what ran before the op's first kernel is what the replay's
 * states model; the kernels of the op before the row's one run in the
 * replay too). */
static size_t row_op_len(const char *name)
{
    size_t l = rp_split_op_len(name);
    return l ? l : strlen(name);
}

/* The op's own key, from its row's cells. */
static int row_key(const struct mp_replay_op *op, struct mp_buf *b)
{
    const char *v[4] = {op->dims, op->types, op->strides, op->concrete};
    mp_buf_reset(b);
    int rc = mp_buf_append(b, op->name, row_op_len(op->name));
    for (int k = 0; k < 4 && !rc; k++) {
        rc = mp_buf_putc(b, '\x1f');
        rc = rc ? rc : mp_buf_puts(b, v[k] ? v[k] : "");
    }
    return rc;
}

static int count_key(struct pr_op *p, const char *text)
{
    for (size_t i = 0; i < p->nkeys; i++)
        if (strcmp(p->keys[i].text, text) == 0) {
            p->keys[i].count++;
            return 0;
        }
    if (MP_GROW(p->keys, p->capkeys, p->nkeys + 1, 8))
        return MP_ENOMEM;
    p->keys[p->nkeys].text = mp_strdup(text);
    if (!p->keys[p->nkeys].text)
        return MP_ENOMEM;
    p->keys[p->nkeys++].count = 1;
    return 0;
}

static int add_gap(struct pr_op *p, double g)
{
    if (MP_GROW(p->gaps, p->capgaps, p->ngaps + 1, 16))
        return MP_ENOMEM;
    p->gaps[p->ngaps++] = g;
    return 0;
}

/* A GPU event's place: device (pid), stream, start time, file order. */
struct pr_gpu {
    int32_t pid, idx;
    int64_t stream;
    double ts;
};

static int by_stream(const void *a, const void *b)
{
    const struct pr_gpu *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* prev[i] for GPU event i: the GPU event before it on its device and
 * stream, -1 when none (and for every other event). */
static int32_t *stream_prev(const struct mp_trace_tree *t)
{
    const struct mp_trace_store *s = t->s;
    int32_t *prev = malloc((s->n ? s->n : 1) * sizeof(int32_t));
    struct pr_gpu *g = malloc((s->n ? s->n : 1) * sizeof(*g));
    if (!prev || !g) {
        free(prev);
        free(g);
        return NULL;
    }
    size_t ng = 0;
    for (size_t i = 0; i < s->n; i++) {
        prev[i] = -1;
        if (mp_kind_is_gpu(t->kind[i]))
            g[ng++] = (struct pr_gpu){s->pid[i], (int32_t)i,
                                      (s->flags[i] & MP_EV_STREAM) ? s->stream[i] : -1, s->ts[i]};
    }
    qsort(g, ng, sizeof(*g), by_stream);
    for (size_t k = 1; k < ng; k++)
        if (g[k - 1].pid == g[k].pid && g[k - 1].stream == g[k].stream)
            prev[g[k].idx] = g[k - 1].idx;
    free(g);
    return prev;
}

/* (a runtime launch sits under the op that called it) */
int32_t rp_launching_op(const struct mp_trace_tree *t, int32_t g)
{
    int32_t l = t->launcher[g];
    while (l >= 0 && t->kind[l] != MP_K_CPU_OP)
        l = t->parent[l];
    return l;
}

/* One call (cpu_op event u) of the op p tracks. */
static int one_call(const struct mp_trace_tree *t, struct rp_traffic *tr, int32_t u,
                    struct pr_op *p, int32_t **buf, size_t *cap, struct mp_buf *key)
{
    const int32_t *prev = tr->prev;
    size_t n = 0;
    long got = mp_trace_tree_gpu_events(t, u, buf, &n, cap);
    if (got < 0)
        return (int)got;
    const struct mp_trace_store *s = t->s;
    int32_t first = -1;
    for (size_t k = 0; k < n; k++)
        if (first < 0 || s->ts[(*buf)[k]] < s->ts[first])
            first = (*buf)[k];
    if (first < 0)
        return 0;
    p->calls++;
    if (MP_GROW(p->dirty, p->capdirty, (p->ndirty + 1) * MP_REPLAY_NGRID,
                (size_t)16 * MP_REPLAY_NGRID))
        return MP_ENOMEM;
    int rc0 = rp_traffic_dirty(tr, first, p->dirty + p->ndirty * MP_REPLAY_NGRID);
    if (rc0)
        return rc0;
    p->ndirty++;
    int32_t g = prev[first];
    if (g < 0)
        return 0;
    int rc = add_gap(p, s->ts[first] - t->t_end[g]);
    int32_t l = rc ? -1 : rp_launching_op(t, g);
    if (l < 0)
        return rc;
    const char *name = mp_trace_tree_name(t, l);
    rc = event_key(s, l, name ? name : "", key);
    return rc ? rc : count_key(p, mp_buf_cstr(key));
}

/* The op's trace_prev_* from what its calls found. */
static int fill(struct mp_replay_op *op, const struct pr_op *p)
{
    op->prev_calls = p->calls;
    op->prev_gap_us = p->ngaps ? mp_stats_median(p->gaps, p->ngaps) : -1;
    if (p->ndirty) {
        free(op->dirty);
        op->dirty = calloc(MP_REPLAY_NGRID, sizeof(*op->dirty));
        double *v = malloc(p->ndirty * sizeof(double));
        int rc = op->dirty && v ? 0 : MP_ENOMEM;
        for (int k = 0; !rc && k < MP_REPLAY_NGRID; k++) {
            for (size_t c = 0; c < p->ndirty; c++)
                v[c] = p->dirty[c * MP_REPLAY_NGRID + (size_t)k];
            rc = rp_dirty_levels(v, p->ndirty, rp_l2_grid_mib[k], &op->dirty[k]);
        }
        free(v);
        if (rc)
            return rc;
    }
    size_t best = 0;
    for (size_t i = 1; i < p->nkeys; i++)
        if (p->keys[i].count > p->keys[best].count)
            best = i;
    if (!p->nkeys)
        return 0;
    op->prev_share = p->calls ? (double)p->keys[best].count / (double)p->calls : 0;
    char **dst[5] = {&op->prev_op, &op->prev_dims, &op->prev_types, &op->prev_strides,
                     &op->prev_concrete};
    const char *c = p->keys[best].text;
    int rc = 0;
    for (int k = 0; k < 5 && !rc; k++) {
        const char *e = strchr(c, '\x1f');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        free(*dst[k]);
        *dst[k] = mp_strndup(c, n);
        rc = *dst[k] ? 0 : MP_ENOMEM;
        c = e ? e + 1 : c + n;
    }
    return rc;
}

int rp_producers(const struct mp_replay_opts *o, struct mp_replay_result *r,
                 const struct mp_trace_tree *given, struct mp_diag *d)
{
    if (!r->n)
        return 0;
    struct mp_trace_store *own_s = NULL;
    struct mp_trace_tree *own_t = NULL;
    const struct mp_trace_tree *t = given;
    int rc = 0;
    if (!t) { /* no report's tree at hand: load the trace */
        struct mp_trace_store_opts so = {.keep_args = true, .serial = o->serial};
        rc = mp_trace_store_load(o->trace, &so, &own_s, d);
        if (rc)
            return rc;
        struct mp_trace_tree_opts to = {.serial = o->serial};
        rc = mp_trace_tree_build(own_s, &to, &own_t, d);
        t = own_t;
    }
    const struct mp_trace_store *s = t ? t->s : NULL;
    int32_t *prev = rc || !t ? NULL : stream_prev(t);
    struct rp_traffic tr = {0};
    if (!rc && prev)
        rc = rp_traffic_init(&tr, t, prev);
    struct pr_op *p = calloc(r->n, sizeof(*p));
    char **keys = calloc(r->n, sizeof(char *));
    if (!rc && (!prev || !p || !keys))
        rc = MP_ENOMEM;
    struct mp_buf key, pkey;
    mp_buf_init(&key, 1u << 20);
    mp_buf_init(&pkey, 1u << 20);
    for (size_t i = 0; !rc && i < r->n; i++) {
        rc = row_key(&r->ops[i], &key);
        keys[i] = rc ? NULL : mp_strdup(mp_buf_cstr(&key));
        if (!rc && !keys[i])
            rc = MP_ENOMEM;
    }
    int32_t *buf = NULL;
    size_t cap = 0;
    for (size_t u = 0; !rc && u < s->n; u++) {
        if (t->kind[u] != MP_K_CPU_OP)
            continue;
        const char *name = mp_trace_tree_name(t, (int32_t)u);
        bool named = false;
        for (size_t i = 0; name && i < r->n && !named; i++) {
            size_t l = row_op_len(r->ops[i].name);
            named = strncmp(r->ops[i].name, name, l) == 0 && name[l] == 0;
        }
        if (!named)
            continue;
        rc = event_key(s, (int32_t)u, name, &key);
        /* rows that share the cells (an op recomputed under activation
         * checkpointing is a row of its own) each get all their calls */
        for (size_t i = 0; !rc && i < r->n; i++)
            if (strcmp(keys[i], mp_buf_cstr(&key)) == 0)
                rc = one_call(t, &tr, (int32_t)u, &p[i], &buf, &cap, &pkey);
    }
    for (size_t i = 0; !rc && i < r->n; i++)
        rc = fill(&r->ops[i], &p[i]);
    for (size_t i = 0; p && i < r->n; i++) {
        for (size_t k = 0; k < p[i].nkeys; k++)
            free(p[i].keys[k].text);
        free(p[i].keys);
        free(p[i].gaps);
        free(p[i].dirty);
        free(keys ? keys[i] : NULL);
    }
    free(p);
    free(keys);
    free(buf);
    rp_traffic_fini(&tr);
    free(prev);
    mp_buf_fini(&key);
    mp_buf_fini(&pkey);
    mp_trace_tree_free(own_t);
    mp_trace_store_free(own_s);
    if (rc == MP_ENOMEM && d && !d->code)
        mp_diag_set(d, rc, "out of memory");
    return rc;
}
