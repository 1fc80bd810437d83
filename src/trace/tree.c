/* TraceLens's trace tree (docs/tracelens-compat.md, Tree), over an event store.
 *
 * Steps, each one pass over compact arrays:
 *   1. classify events by category and compute t_end = ts + dur once;
 *   2. pick the linking key from the first launch-like runtime call;
 *   3. one array of link records (ac2g flow starts and ends, GPU events and
 *      events on a flow end's thread) sorted by link id;
 *   4. host call stacks: events sorted stably by ts, one stack per thread;
 *   5. attach GPU events to the runtime calls that launched them;
 *   6. children lists in CSR form, and each GPU event's launcher.
 * Step 4 and steps 3, 5 (the planning part) and the forward/backward links
 * read only the store and the kinds and write disjoint arrays, so they run
 * on two threads; the plan's links are then applied in the order the serial
 * build uses, so the tree is the same either way.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/trace_tree.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- helpers ---- */
const char *mp_trace_tree_name(const struct mp_trace_tree *t, int32_t i)
{
    int32_t id = t->s->name[i];
    return id < 0 ? "" : mp_intern_str(t->s->strings, id);
}

static uint8_t classify(const char *cat)
{
    switch (cat[0]) {
    case 'c':
        if (strcmp(cat, "cpu_op") == 0)
            return MP_K_CPU_OP;
        if (strcmp(cat, "cuda_runtime") == 0)
            return MP_K_RUNTIME;
        if (strcmp(cat, "cuda_driver") == 0)
            return MP_K_DRIVER;
        break;
    case 'p':
        if (strcmp(cat, "python_function") == 0)
            return MP_K_PYFUNC;
        break;
    case 'k':
        if (strcmp(cat, "kernel") == 0)
            return MP_K_KERNEL;
        break;
    case 'g':
        if (strcmp(cat, "gpu_memcpy") == 0)
            return MP_K_MEMCPY;
        if (strcmp(cat, "gpu_memset") == 0)
            return MP_K_MEMSET;
        if (strcmp(cat, "gpu_user_annotation") == 0)
            return MP_K_GPU_ANNOT;
        break;
    case 'u':
        if (strcmp(cat, "user_annotation") == 0)
            return MP_K_USER_ANNOT;
        break;
    case 'a':
        if (strcmp(cat, "ac2g") == 0)
            return MP_K_AC2G;
        break;
    default:
        break;
    }
    return MP_K_OTHER;
}

static bool contains_launch_ci(const char *s)
{
    for (; *s; s++) {
        if ((s[0] | 0x20) == 'l' && (s[1] | 0x20) == 'a' && (s[2] | 0x20) == 'u' &&
            (s[3] | 0x20) == 'n' && (s[4] | 0x20) == 'c' && (s[5] | 0x20) == 'h')
            return true;
        if (!s[1] || !s[2] || !s[3] || !s[4] || !s[5])
            return false;
    }
    return false;
}

struct sort_ts {
    double ts;
    int32_t uid;
};

/* ---- records sorted by a 64-bit key ----
 * mp_sort_rec16 is stable, so with the records in uid order the result is
 * qsort's by (key, uid), in a fraction of its time (the two sorts here were
 * half of the tree's time). */
struct key_rec {
    int64_t key;
    int32_t uid;
    int32_t aux;
};

_Static_assert(sizeof(struct key_rec) == 16 && offsetof(struct key_rec, key) == 0,
               "mp_sort_rec16 sorts 16-byte records keyed at their start");

/* ts as a key whose signed order is the order of the doubles (-0.0 as 0.0);
 * false for NaN, which has no place in that order */
static bool ts_key(double ts, int64_t *key)
{
    if (ts != ts)
        return false;
    uint64_t b = 0;
    if (ts != 0.0)
        memcpy(&b, &ts, sizeof(b));
    uint64_t u = (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
    *key = (int64_t)(u ^ ((uint64_t)1 << 63));
    return true;
}

static int cmp_ts(const void *a, const void *b)
{
    const struct sort_ts *x = a, *y = b;
    if (x->ts < y->ts)
        return -1;
    if (x->ts > y->ts)
        return 1;
    return x->uid < y->uid ? -1 : (x->uid > y->uid ? 1 : 0); /* stable */
}

struct stack {
    int64_t key; /* pid << 32 | tid */
    int32_t *v;
    size_t n, cap;
    int cpu_ops; /* cpu_ops currently on the stack */
};

struct edge {
    int32_t parent, child;
};

struct edges {
    struct edge *v;
    size_t n, cap;
};

static int add_edge(struct edges *e, int32_t parent, int32_t child)
{
    if (MP_GROW(e->v, e->cap, e->n + 1, 4096))
        return MP_ENOMEM;
    e->v[e->n++] = (struct edge){parent, child};
    return 0;
}

static bool has_link(const struct mp_trace_tree *t, size_t i)
{
    return (t->s->flags[i] & (t->link_by_correlation ? MP_EV_CORR : MP_EV_EXTID)) != 0;
}

static int64_t link_of(const struct mp_trace_tree *t, size_t i)
{
    return t->link_by_correlation ? t->s->correlation[i] : t->s->external_id[i];
}

static int build_host_tree(struct mp_trace_tree *t, const struct mp_trace_tree_opts *o,
                           struct edges *e)
{
    const struct mp_trace_store *s = t->s;
    size_t n = 0;
    struct key_rec *ord = malloc((s->n ? s->n : 1) * sizeof(*ord));
    if (!ord)
        return MP_ENOMEM;
    bool nan = false;
    for (size_t i = 0; i < s->n; i++) {
        uint8_t k = t->kind[i];
        if (k == MP_K_CPU_OP || k == MP_K_RUNTIME || k == MP_K_DRIVER ||
            (k == MP_K_PYFUNC && o && o->python_functions)) {
            ord[n].uid = (int32_t)i;
            nan |= !ts_key(s->ts[i], &ord[n].key);
            n++;
        }
    }
    if (nan) { /* keep qsort's order for a NaN time stamp */
        struct sort_ts *q = malloc((n ? n : 1) * sizeof(*q));
        if (!q) {
            free(ord);
            return MP_ENOMEM;
        }
        for (size_t k = 0; k < n; k++)
            q[k] = (struct sort_ts){s->ts[ord[k].uid], ord[k].uid};
        qsort(q, n, sizeof(*q), cmp_ts);
        for (size_t k = 0; k < n; k++)
            ord[k].uid = q[k].uid;
        free(q);
    } else if (mp_sort_rec16(ord, n, MP_SORT_I64)) {
        free(ord);
        return MP_ENOMEM;
    }
    struct mp_i64map thread_ix;
    mp_i64map_init(&thread_ix);
    struct stack *stacks = NULL;
    size_t nstacks = 0, cap_stacks = 0;
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        int32_t u = ord[k].uid;
        int64_t key = ((int64_t)s->pid[u] << 32) | (uint32_t)s->tid[u];
        int64_t *ix = mp_i64map_get(&thread_ix, key);
        struct stack *st;
        /* a mapped index is always below nstacks; the second test only makes
         * that visible to the analyzer */
        if (!ix || (size_t)*ix >= nstacks) {
            if (MP_GROW(stacks, cap_stacks, nstacks + 1, 16)) {
                rc = MP_ENOMEM;
                break;
            }
            stacks[nstacks] = (struct stack){.key = key};
            if (mp_i64map_put(&thread_ix, key, (int64_t)nstacks)) {
                rc = MP_ENOMEM;
                break;
            }
            st = &stacks[nstacks++];
        } else {
            st = &stacks[*ix];
        }
        t->in_tree[u] = 1;
        double ts = s->ts[u], te = t->t_end[u];
        while (st->n > 0 && ts >= t->t_end[st->v[st->n - 1]]) {
            int32_t top = st->v[--st->n];
            if (t->kind[top] == MP_K_CPU_OP)
                st->cpu_ops--;
        }
        if (st->n > 0 && te > t->t_end[st->v[st->n - 1]]) {
            /* partial overlap ("bleed"): within 1 µs the top is treated as a
             * sibling, otherwise the event is left out of the tree */
            int32_t top = st->v[st->n - 1];
            if (t->t_end[top] - ts < 1.0 && st->n >= 2) {
                st->n--;
                if (t->kind[top] == MP_K_CPU_OP)
                    st->cpu_ops--;
            } else {
                continue;
            }
        }
        if (st->n > 0) {
            int32_t par = st->v[st->n - 1];
            t->parent[u] = par;
            if (add_edge(e, par, u)) {
                rc = MP_ENOMEM;
                break;
            }
        }
        if (MP_GROW(st->v, st->cap, st->n + 1, 64)) {
            rc = MP_ENOMEM;
            break;
        }
        st->v[st->n++] = u;
        if (t->kind[u] == MP_K_CPU_OP) {
            if (st->cpu_ops == 0)
                t->cpu_root[u] = 1;
            st->cpu_ops++;
        }
    }
    for (size_t i = 0; i < nstacks; i++)
        free(stacks[i].v);
    free(stacks);
    mp_i64map_fini(&thread_ix);
    free(ord);
    return rc;
}

/* ---- launch -> GPU event linking ----
 * Every event that takes part, keyed by its link value: the ac2g flow
 * starts and ends (by flow id), and the events with a link id that are GPU
 * events or sit on the thread of a flow end. Sorted by (key, uid), each
 * key's records are one run in file order; a flat array is a fraction of
 * the memory of one hash map per relation. */
enum { LR_START = 1, LR_END = 2, LR_GPU = 4, LR_ON_FLOW_THREAD = 8 };

/* struct key_rec: key, uid (the record's tags are link_tag(uid), found again
 * when needed) and aux, the target: for the first record of a key the GPU
 * event its launch links to, or -1 */

static int64_t thread_key(const struct mp_trace_store *s, size_t i)
{
    return (int64_t)((uint64_t)(uint32_t)s->pid[i] << 32 | (uint32_t)s->tid[i]);
}

/* The LR_* tags of event i (0: not a record) and its key. */
static uint8_t link_tag(const struct mp_trace_tree *t, const struct mp_i64map *f_threads, size_t i,
                        int64_t *key)
{
    const struct mp_trace_store *s = t->s;
    if (t->kind[i] == MP_K_AC2G) {
        if (!(s->flags[i] & MP_EV_ID))
            return 0;
        *key = s->id[i];
        return s->ph[i] == 's' ? LR_START : (s->ph[i] == 'f' ? LR_END : 0);
    }
    if (!(s->flags[i] & MP_EV_ARGS) || !has_link(t, i))
        return 0;
    *key = link_of(t, i);
    uint8_t tag = mp_kind_is_gpu(t->kind[i]) ? LR_GPU : 0;
    if (s->pid[i] >= 0 && s->tid[i] >= 0 && mp_i64map_get(f_threads, thread_key(s, i)))
        tag |= LR_ON_FLOW_THREAD;
    return tag;
}

/* The first record with key, or n. */
static size_t link_lower_bound(const struct key_rec *rec, size_t n, int64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rec[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The launch -> GPU event links, as (launch, event) edges in the order
 * they are applied (apply_gpu); reads only the store and t->kind. */
static int plan_gpu(const struct mp_trace_tree *t, struct edges *e)
{
    const struct mp_trace_store *s = t->s;
    /* (pid, tid, link) -> event is only ever asked for the thread of a flow
     * end (a GPU stream) */
    struct mp_i64map f_threads;
    mp_i64map_init(&f_threads);
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++)
        if (t->kind[i] == MP_K_AC2G && (s->flags[i] & MP_EV_ID) && s->ph[i] == 'f' &&
            s->pid[i] >= 0 && s->tid[i] >= 0)
            rc = mp_i64map_put(&f_threads, thread_key(s, i), 1);
    size_t nrec = 0;
    int64_t key;
    for (size_t i = 0; i < s->n && !rc; i++)
        if (link_tag(t, &f_threads, i, &key))
            nrec++;
    struct key_rec *rec = rc ? NULL : calloc(nrec ? nrec : 1, sizeof(*rec));
    if (!rc && !rec)
        rc = MP_ENOMEM;
    for (size_t i = 0, k = 0; i < s->n && !rc; i++)
        if (link_tag(t, &f_threads, i, &key))
            rec[k++] = (struct key_rec){.key = key, .uid = (int32_t)i, .aux = -1};
    if (rc) {
        mp_i64map_fini(&f_threads);
        free(rec);
        return rc;
    }
    if (mp_sort_rec16(rec, nrec, MP_SORT_I64)) {
        mp_i64map_fini(&f_threads);
        free(rec);
        return MP_ENOMEM;
    }
    /* per key, once: a launch with a flow start and end links to the last
     * event (file order) with the key on the last flow end's thread */
    for (size_t lo = 0, hi; lo < nrec; lo = hi) {
        bool start = false;
        int32_t f = -1;
        for (hi = lo; hi < nrec && rec[hi].key == rec[lo].key; hi++) {
            uint8_t tag = link_tag(t, &f_threads, (size_t)rec[hi].uid, &key);
            start = start || (tag & LR_START);
            if (tag & LR_END)
                f = rec[hi].uid;
        }
        if (!start || f < 0 || s->pid[f] < 0 || s->tid[f] < 0)
            continue;
        for (size_t q = lo; q < hi; q++) {
            int32_t g = rec[q].uid;
            if ((link_tag(t, &f_threads, (size_t)g, &key) & LR_ON_FLOW_THREAD) &&
                s->pid[g] == s->pid[f] && s->tid[g] == s->tid[f])
                rec[lo].aux = g;
        }
    }
    mp_i64map_fini(&f_threads);
    int32_t graph_a = mp_intern_find(s->strings, "cudaGraphLaunch", 15);
    int32_t graph_b = mp_intern_find(s->strings, "hipGraphLaunch", 14);
    for (size_t i = 0; i < s->n && !rc; i++) {
        uint8_t k = t->kind[i];
        if (k != MP_K_RUNTIME && k != MP_K_DRIVER)
            continue;
        if (!(s->flags[i] & MP_EV_ARGS) || !has_link(t, i))
            continue;
        int64_t link = link_of(t, i);
        size_t lo = link_lower_bound(rec, nrec, link);
        bool graph = s->name[i] >= 0 && (s->name[i] == graph_a || s->name[i] == graph_b);
        if (graph) {
            /* every GPU event of the link, in file order */
            for (size_t q = lo; q < nrec && rec[q].key == link && !rc; q++) {
                if (!mp_kind_is_gpu(t->kind[rec[q].uid]))
                    continue;
                rc = add_edge(e, (int32_t)i, rec[q].uid);
            }
            continue;
        }
        int32_t g = lo < nrec && rec[lo].key == link ? rec[lo].aux : -1;
        if (g >= 0)
            rc = add_edge(e, (int32_t)i, g);
    }
    free(rec);
    return rc;
}

/* Applies the plan after the host tree (a later link overrides an earlier
 * parent, as it always has) and appends its edges to e. */
static int apply_gpu(struct mp_trace_tree *t, const struct edges *plan, struct edges *e)
{
    if (MP_GROW(e->v, e->cap, e->n + plan->n, 4096))
        return MP_ENOMEM;
    for (size_t k = 0; k < plan->n; k++) {
        const struct edge *ed = &plan->v[k];
        t->parent[ed->child] = ed->parent;
        t->in_tree[ed->child] = 1;
        e->v[e->n++] = *ed;
    }
    return 0;
}

static int build_children(struct mp_trace_tree *t, const struct edges *e)
{
    t->child_off = calloc(t->n + 1, sizeof(int32_t));
    t->child = malloc((e->n ? e->n : 1) * sizeof(int32_t));
    if (!t->child_off || !t->child)
        return MP_ENOMEM;
    for (size_t k = 0; k < e->n; k++) {
        /* every edge joins two events of this tree (the CSR below indexes by them) */
        MP_ASSERT(e->v[k].parent >= 0 && (size_t)e->v[k].parent < t->n);
        MP_ASSERT(e->v[k].child >= 0 && (size_t)e->v[k].child < t->n);
        t->child_off[e->v[k].parent + 1]++;
    }
    for (size_t i = 0; i < t->n; i++)
        t->child_off[i + 1] += t->child_off[i];
    int32_t *fill = malloc((t->n ? t->n : 1) * sizeof(int32_t));
    if (!fill)
        return MP_ENOMEM;
    memcpy(fill, t->child_off, t->n * sizeof(int32_t));
    /* a GPU event re-attached to a later launch keeps only its last parent */
    for (size_t k = 0; k < e->n; k++) {
        const struct edge *ed = &e->v[k];
        t->child[fill[ed->parent]++] = ed->child;
    }
    MP_ASSERT(t->n == 0 || fill[t->n - 1] == t->child_off[t->n]); /* every slot filled once */
    MP_ASSERT((size_t)t->child_off[t->n] == e->n);
    free(fill);
    return 0;
}

/* TraceLens's collective test in one pass over a kernel name (nccl, rccl,
 * cross_device_reduce, case-insensitive); the report calls it for every
 * kernel while the trace is read, so it avoids copying and repeated scans. Every needle has a
 * 'c' where the test starts (the first c of nccl / rccl, the c of cross), so
 * only those positions are tried, found 16 bytes at a time. */
static bool comm_at(struct mp_strview name, size_t j)
{
    const char *p = name.p;
    if (j >= 1 && j + 2 < name.n && ((p[j - 1] | 0x20) == 'n' || (p[j - 1] | 0x20) == 'r') &&
        (p[j + 1] | 0x20) == 'c' && (p[j + 2] | 0x20) == 'l')
        return true;
    if (name.n - j < 19)
        return false;
    static const char cdr[] = "cross_device_reduce";
    size_t k = 1;
    while (k < 19 && (char)(p[j + k] | (p[j + k] >= 'A' && p[j + k] <= 'Z' ? 0x20 : 0)) == cdr[k])
        k++;
    return k == 19;
}

bool mp_trace_is_comm_name_n(const char *p, size_t n)
{
    struct mp_strview name = {p, n};
    size_t j = 0;
#if defined(__SSE2__)
    /* candidates: a 'c' followed by 'c' (n|r-c-c-l) or 'r' (c-r-oss) */
    const __m128i lower = _mm_set1_epi8(0x20), c = _mm_set1_epi8('c'), r = _mm_set1_epi8('r');
    for (; j + 17 <= name.n; j += 16) {
        __m128i v = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + j)), lower);
        __m128i w =
            _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + j + 1)), lower);
        __m128i next = _mm_or_si128(_mm_cmpeq_epi8(w, c), _mm_cmpeq_epi8(w, r));
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v, c), next));
        for (; mask; mask &= mask - 1)
            if (comm_at(name, j + (size_t)__builtin_ctz(mask)))
                return true;
    }
#endif
    for (; j < name.n; j++)
        if ((p[j] | 0x20) == 'c' && comm_at(name, j))
            return true;
    return false;
}

bool mp_trace_is_comm_name(const char *name)
{
    return mp_trace_is_comm_name_n(name, strlen(name));
}

/* The communication test once per distinct GPU event name. */
static int mark_comm(struct mp_trace_tree *t)
{
    const struct mp_trace_store *s = t->s;
    int32_t nn = mp_intern_count(s->strings);
    uint8_t *memo = calloc((size_t)nn + 1, 1); /* 0 unknown, 1 no, 2 yes */
    if (!memo)
        return MP_ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        int32_t id = s->name[i];
        if (!mp_kind_is_gpu(t->kind[i]) || id < 0)
            continue;
        if (!memo[id])
            memo[id] = mp_trace_is_comm_name(mp_intern_str(s->strings, id)) ? 2 : 1;
        t->comm[i] = memo[id] == 2;
    }
    free(memo);
    return 0;
}

static void find_launchers(struct mp_trace_tree *t)
{
    int32_t exec = mp_intern_find(t->s->strings, "execute", 7);
    for (size_t i = 0; i < t->n; i++) {
        t->launcher[i] = -1;
        if (!mp_kind_is_gpu(t->kind[i]))
            continue;
        t->n_gpu++;
        int32_t rt = t->parent[i];
        if (rt < 0)
            continue;
        t->n_gpu_linked++;
        int32_t l = -1;
        for (int32_t p = t->parent[rt]; p >= 0; p = t->parent[p]) {
            uint8_t k = t->kind[p];
            if (k == MP_K_CPU_OP) {
                if (t->s->name[p] >= 0 && t->s->name[p] == exec)
                    continue;
                l = p;
                break;
            }
            if (k != MP_K_PYFUNC)
                break;
        }
        t->launcher[i] = l >= 0 ? l : rt;
    }
}

/* ---- forward/backward linking (docs/tracelens-compat.md) ----
 * Events sharing args["Sequence number"] form a group. Its backward node is
 * the first member (trace order) named autograd::engine::evaluate_function:*;
 * its forward op is the member with the largest ts (first on ties) that is
 * not on the backward node's (pid, tid). Each event carries one sequence
 * number, so a forward op gets at most one backward node. */
struct seq_group {
    int32_t bwd, fwd;
    double fwd_ts;
};

/* The sequence number of event i. The store shares the args texts of ops,
 * so theirs is looked up once per text (memo: text address -> number, or
 * INT64_MIN for none; a failed memo insert only costs a second lookup). */
static bool seq_number(const struct mp_trace_tree *t, size_t i, struct mp_i64map *memo,
                       int64_t *seq)
{
    const struct mp_trace_store *s = t->s;
    if (!s->args[i] || s->args_len[i] == 0)
        return false;
    if (t->kind[i] != MP_K_CPU_OP && t->kind[i] != MP_K_PYFUNC)
        memo = NULL;
    int64_t addr = (int64_t)(intptr_t)s->args[i];
    const int64_t *m = memo ? mp_i64map_get(memo, addr) : NULL;
    if (m) {
        *seq = *m;
        return *m != INT64_MIN;
    }
    struct mp_strview obj = {s->args[i], s->args_len[i]}, v;
    bool found =
        mp_trace_json_find(obj, "Sequence number", &v) == 0 && mp_trace_json_int(v, seq) == 0;
    if (memo && (!found || *seq != INT64_MIN)) /* INT64_MIN itself is not memoised */
        (void)mp_i64map_put(memo, addr, found ? *seq : INT64_MIN);
    return found;
}

struct seq_member {
    int32_t uid;
    int32_t group;
};

static int link_fwd_bwd(struct mp_trace_tree *t)
{
    const struct mp_trace_store *s = t->s;
    size_t n = s->n ? s->n : 1;
    t->bwd_of = malloc(n * sizeof(int32_t));
    t->fwd_of = malloc(n * sizeof(int32_t));
    if (!t->bwd_of || !t->fwd_of)
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        t->bwd_of[i] = t->fwd_of[i] = -1;
    static const char pfx[] = "autograd::engine::evaluate_function:";
    struct mp_i64map ix, memo;
    mp_i64map_init(&ix);
    mp_i64map_init(&memo);
    struct seq_group *g = NULL;
    struct seq_member *mem = NULL; /* events with a sequence number, trace order */
    size_t ng = 0, cap = 0, nm = 0, capm = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        int64_t seq;
        if (t->kind[i] == MP_K_AC2G || !seq_number(t, i, &memo, &seq))
            continue;
        int64_t *gi = mp_i64map_get(&ix, seq);
        if (!gi) {
            if (MP_GROW(g, cap, ng + 1, 1024)) {
                rc = MP_ENOMEM;
                break;
            }
            g[ng] = (struct seq_group){-1, -1, -1.0};
            if (mp_i64map_put(&ix, seq, (int64_t)ng)) {
                rc = MP_ENOMEM;
                break;
            }
            ng++;
            gi = mp_i64map_get(&ix, seq);
        }
        /* a mapped index is always below ng; the test makes it visible to the analyzer */
        if (!g || !gi || *gi < 0 || (size_t)*gi >= ng)
            continue;
        if (MP_GROW(mem, capm, nm + 1, 1024)) {
            rc = MP_ENOMEM;
            break;
        }
        mem[nm++] = (struct seq_member){(int32_t)i, (int32_t)*gi};
        if (g[*gi].bwd < 0 && strncmp(mp_trace_tree_name(t, (int32_t)i), pfx, sizeof(pfx) - 1) == 0)
            g[*gi].bwd = (int32_t)i;
    }
    /* second pass: the forward member needs the backward node's thread */
    for (size_t m = 0; m < nm && !rc; m++) {
        int32_t i = mem[m].uid;
        struct seq_group *G = &g[mem[m].group];
        if (G->bwd < 0 || (s->pid[i] == s->pid[G->bwd] && s->tid[i] == s->tid[G->bwd]))
            continue;
        double ts = (s->flags[i] & MP_EV_TS) ? s->ts[i] : 0.0;
        if (ts > G->fwd_ts) {
            G->fwd_ts = ts;
            G->fwd = i;
        }
    }
    for (size_t k = 0; k < ng && !rc; k++) {
        if (g[k].bwd < 0 || g[k].fwd < 0)
            continue;
        t->fwd_of[g[k].bwd] = g[k].fwd;
        t->bwd_of[g[k].fwd] = g[k].bwd;
        t->n_fwd_bwd++;
    }
    free(mem);
    free(g);
    mp_i64map_fini(&ix);
    mp_i64map_fini(&memo);
    return rc;
}

/* The second thread's part of the build: forward/backward links and the
 * GPU link plan. */
struct links {
    struct mp_trace_tree *t;
    struct edges plan;
    int rc;
};

static void *links_main(void *arg)
{
    struct links *lk = arg;
    lk->rc = link_fwd_bwd(lk->t);
    if (!lk->rc)
        lk->rc = plan_gpu(lk->t, &lk->plan);
    return NULL;
}

int mp_trace_tree_build(const struct mp_trace_store *s, const struct mp_trace_tree_opts *o,
                        struct mp_trace_tree **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_trace_tree *t = calloc(1, sizeof(*t));
    struct edges e = {0};
    int rc = 0;
    if (!t)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    size_t n = s->n ? s->n : 1;
    t->s = s;
    t->n = s->n;
    t->n_base = s->n;
    t->python_functions = o && o->python_functions;
    t->kind = calloc(n, 1);
    t->t_end = malloc(n * sizeof(double));
    t->parent = malloc(n * sizeof(int32_t));
    t->in_tree = calloc(n, 1);
    t->cpu_root = calloc(n, 1);
    t->launcher = malloc(n * sizeof(int32_t));
    t->comm = calloc(n, 1);
    if (!t->kind || !t->t_end || !t->parent || !t->in_tree || !t->cpu_root || !t->launcher ||
        !t->comm) {
        rc = MP_ENOMEM;
        goto out;
    }
    /* one small table: category string id -> kind */
    int32_t ncat = mp_intern_count(s->strings);
    uint8_t *cat_kind = calloc((size_t)ncat + 1, 1);
    uint8_t *cat_done = calloc((size_t)ncat + 1, 1);
    if (!cat_kind || !cat_done) {
        free(cat_kind);
        free(cat_done);
        rc = MP_ENOMEM;
        goto out;
    }
    bool key_chosen = false;
    for (size_t i = 0; i < s->n; i++) {
        int32_t c = s->cat[i];
        uint8_t k = MP_K_OTHER;
        if (c >= 0) {
            if (!cat_done[c]) {
                cat_kind[c] = classify(mp_intern_str(s->strings, c));
                cat_done[c] = 1;
            }
            k = cat_kind[c];
        }
        t->kind[i] = k;
        t->parent[i] = -1;
        double dur = (s->flags[i] & MP_EV_DUR) ? s->dur[i] : 0.0;
        t->t_end[i] = s->ts[i] + dur;
        if (k == MP_K_CPU_OP || k == MP_K_PYFUNC)
            t->has_cpu_ops = true;
        if (!key_chosen && (k == MP_K_RUNTIME || k == MP_K_DRIVER) && s->name[i] >= 0 &&
            contains_launch_ci(mp_intern_str(s->strings, s->name[i]))) {
            key_chosen = true;
            t->link_by_correlation = (s->flags[i] & MP_EV_CORR) != 0;
        }
    }
    free(cat_kind);
    free(cat_done);
    struct links lk = {.t = t};
    pthread_t th;
    bool two = !(o && o->serial) && pthread_create(&th, NULL, links_main, &lk) == 0;
    rc = build_host_tree(t, o, &e);
    if (two)
        pthread_join(th, NULL);
    else
        links_main(&lk);
    rc = rc ? rc : lk.rc;
    if (!rc)
        rc = apply_gpu(t, &lk.plan, &e);
    free(lk.plan.v);
    if (!rc)
        rc = build_children(t, &e);
    if (!rc)
        rc = mark_comm(t);
    if (!rc)
        find_launchers(t);
out:
    free(e.v);
    if (rc) {
        mp_trace_tree_free(t);
        return mp_diag_set(d, rc, "out of memory building the trace tree");
    }
    *out = t;
    return 0;
}

/* A copy of old (old_n elements of size elem) in a new array of new_n
 * elements, the tail left uninitialised. */
static void *grow_copy(const void *old, size_t old_n, size_t new_n, size_t elem)
{
    size_t bytes = new_n * elem;
    void *p = malloc(bytes ? bytes : 1);
    if (p && old && old_n)
        memcpy(p, old, old_n * elem);
    return p;
}

/* The per-event arrays of a tree, as one unit for growing and swapping. */
struct tree_arrays {
    uint8_t *kind;
    double *t_end;
    int32_t *parent;
    uint8_t *in_tree, *cpu_root;
    int32_t *launcher;
    uint8_t *comm;
    int32_t *bwd_of, *fwd_of;
    uint8_t *recompute; /* NULL when the tree has none */
    int32_t *child_off, *child;
};

static void tree_arrays_free(struct tree_arrays *a)
{
    free(a->kind);
    free(a->t_end);
    free(a->parent);
    free(a->in_tree);
    free(a->cpu_root);
    free(a->launcher);
    free(a->comm);
    free(a->bwd_of);
    free(a->fwd_of);
    free(a->recompute);
    free(a->child_off);
    free(a->child);
}

/* a = t's per-event arrays grown to n1 events (children not included); each
 * new event gets its kind from the store's category, t_end = ts + dur, and
 * no parent, launcher or links. On MP_ENOMEM a holds nothing. */
static int tree_arrays_grow(const struct mp_trace_tree *t, size_t n1, struct tree_arrays *a)
{
    const struct mp_trace_store *s = t->s;
    size_t n0 = t->n;
    *a = (struct tree_arrays){
        .kind = grow_copy(t->kind, n0, n1, 1),
        .t_end = grow_copy(t->t_end, n0, n1, sizeof(double)),
        .parent = grow_copy(t->parent, n0, n1, sizeof(int32_t)),
        .in_tree = grow_copy(t->in_tree, n0, n1, 1),
        .cpu_root = grow_copy(t->cpu_root, n0, n1, 1),
        .launcher = grow_copy(t->launcher, n0, n1, sizeof(int32_t)),
        .comm = grow_copy(t->comm, n0, n1, 1),
        .bwd_of = grow_copy(t->bwd_of, n0, n1, sizeof(int32_t)),
        .fwd_of = grow_copy(t->fwd_of, n0, n1, sizeof(int32_t)),
        .recompute = t->recompute ? grow_copy(t->recompute, n0, n1, 1) : NULL,
    };
    if (!a->kind || !a->t_end || !a->parent || !a->in_tree || !a->cpu_root || !a->launcher ||
        !a->comm || !a->bwd_of || !a->fwd_of || (t->recompute && !a->recompute)) {
        tree_arrays_free(a);
        memset(a, 0, sizeof(*a));
        return MP_ENOMEM;
    }
    for (size_t i = n0; i < n1; i++) {
        int32_t c = s->cat[i];
        a->kind[i] = c >= 0 ? classify(mp_intern_str(s->strings, c)) : MP_K_OTHER;
        a->t_end[i] = ((s->flags[i] & MP_EV_TS) ? s->ts[i] : 0.0) +
                      ((s->flags[i] & MP_EV_DUR) ? s->dur[i] : 0.0);
        a->parent[i] = -1;
        a->in_tree[i] = a->cpu_root[i] = a->comm[i] = 0;
        a->launcher[i] = a->bwd_of[i] = a->fwd_of[i] = -1;
        if (a->recompute)
            a->recompute[i] = 0;
    }
    return 0;
}

/* Replaces t's arrays with a's (the old ones are freed). */
static void tree_install(struct mp_trace_tree *t, const struct tree_arrays *a)
{
    struct tree_arrays old = {t->kind,     t->t_end,     t->parent,    t->in_tree,
                              t->cpu_root, t->launcher,  t->comm,      t->bwd_of,
                              t->fwd_of,   t->recompute, t->child_off, t->child};
    tree_arrays_free(&old);
    t->kind = a->kind;
    t->t_end = a->t_end;
    t->parent = a->parent;
    t->in_tree = a->in_tree;
    t->cpu_root = a->cpu_root;
    t->launcher = a->launcher;
    t->comm = a->comm;
    t->bwd_of = a->bwd_of;
    t->fwd_of = a->fwd_of;
    t->recompute = a->recompute;
    t->child_off = a->child_off;
    t->child = a->child;
}

/* After a pseudo-op insertion: a's arrays, the pseudo flags and the event
 * count n1 become t's. */
static void pseudo_install(struct mp_trace_tree *t, const struct tree_arrays *a, uint8_t *pseudo,
                           size_t n1)
{
    tree_install(t, a);
    free(t->pseudo);
    t->pseudo = pseudo;
    t->n = n1;
}

static bool graft_valid(const struct mp_trace_tree *t, const struct mp_trace_tree_graft *g)
{
    size_t n0 = t->n, n1 = n0 + g->n_new;
    if (t->s->n != n1 || n1 > INT32_MAX)
        return false;
    for (size_t k = 0; k < g->n_new; k++)
        if (g->parent[k] >= (int32_t)n1)
            return false;
    for (size_t k = 0; k < g->n_moved; k++)
        if (g->moved[k][0] < 0 || (size_t)g->moved[k][0] >= n0 || g->moved[k][1] < 0 ||
            (size_t)g->moved[k][1] >= n1)
            return false;
    for (size_t k = 0; k < g->n_edges; k++)
        if (g->edges[k][0] < 0 || (size_t)g->edges[k][0] >= n1 || g->edges[k][1] < 0 ||
            (size_t)g->edges[k][1] >= n1)
            return false;
    return true;
}

/* Children in CSR form after a graft: each old parent keeps the old
 * children still attached to it (stale entries of re-attached events are
 * dropped), then the grafted ones in the order given. */
static int graft_children(const struct mp_trace_tree *t, const struct mp_trace_tree_graft *g,
                          struct tree_arrays *a, size_t n1)
{
    size_t n0 = t->n;
    a->child_off = calloc(n1 + 1, sizeof(int32_t));
    a->child = malloc(((size_t)t->child_off[n0] + g->n_edges + 1) * sizeof(int32_t));
    if (!a->child_off || !a->child)
        return MP_ENOMEM;
    for (size_t u = 0; u < n0; u++)
        for (int32_t k = t->child_off[u]; k < t->child_off[u + 1]; k++)
            if (a->parent[t->child[k]] == (int32_t)u)
                a->child_off[u + 1]++;
    for (size_t k = 0; k < g->n_edges; k++)
        a->child_off[g->edges[k][0] + 1]++;
    for (size_t u = 0; u < n1; u++)
        a->child_off[u + 1] += a->child_off[u];
    /* the lists fit the block: old children still attached, then the grafts */
    MP_ASSERT((size_t)a->child_off[n1] <= (size_t)t->child_off[n0] + g->n_edges);
    int32_t *fill = calloc(n1 + 1, sizeof(int32_t));
    if (!fill)
        return MP_ENOMEM;
    memcpy(fill, a->child_off, (n1 + 1) * sizeof(int32_t));
    for (size_t u = 0; u < n0; u++)
        for (int32_t k = t->child_off[u]; k < t->child_off[u + 1]; k++)
            if (a->parent[t->child[k]] == (int32_t)u)
                a->child[fill[u]++] = t->child[k];
    for (size_t k = 0; k < g->n_edges; k++)
        a->child[fill[g->edges[k][0]]++] = g->edges[k][1];
    for (size_t u = 0; u < n1; u++) /* every slot filled once */
        MP_ASSERT(fill[u] == a->child_off[u + 1]);
    free(fill);
    return 0;
}

int mp_trace_tree_graft(struct mp_trace_tree *t, const struct mp_trace_tree_graft *g)
{
    const struct mp_trace_store *s = t->s;
    if (!graft_valid(t, g))
        return MP_EINVAL;
    size_t n0 = t->n, n1 = n0 + g->n_new;
    struct tree_arrays a;
    if (tree_arrays_grow(t, n1, &a))
        return MP_ENOMEM;
    bool cpu_ops = false;
    for (size_t k = 0; k < g->n_new; k++) {
        size_t i = n0 + k;
        uint8_t kind = a.kind[i];
        a.t_end[i] = s->ts[i] + ((s->flags[i] & MP_EV_DUR) ? s->dur[i] : 0.0);
        a.parent[i] = g->parent[k];
        a.in_tree[i] = g->in_tree ? g->in_tree[k] : 0;
        a.cpu_root[i] = g->cpu_root ? g->cpu_root[k] : 0;
        a.comm[i] = mp_kind_is_gpu(kind) && s->name[i] >= 0 &&
                    mp_trace_is_comm_name(mp_intern_str(s->strings, s->name[i]));
        cpu_ops = cpu_ops || kind == MP_K_CPU_OP || kind == MP_K_PYFUNC;
    }
    for (size_t k = 0; k < g->n_moved; k++)
        a.parent[g->moved[k][0]] = g->moved[k][1];
    if (graft_children(t, g, &a, n1)) {
        tree_arrays_free(&a);
        return MP_ENOMEM;
    }
    tree_install(t, &a);
    if (t->pseudo) { /* grafted events are never pseudo ops */
        uint8_t *np = realloc(t->pseudo, n1);
        if (np) {
            memset(np + n0, 0, n1 - n0);
            t->pseudo = np;
        } else {
            free(t->pseudo); /* cannot fail here: the flags are dropped instead */
            t->pseudo = NULL;
        }
    }
    t->n = n1;
    t->has_cpu_ops = t->has_cpu_ops || cpu_ops;
    t->n_gpu = t->n_gpu_linked = 0;
    find_launchers(t); /* re-attached GPU events now reach the captured cpu ops */
    return 0;
}

/* Children in CSR form after inserting pseudo ops: each old parent keeps
 * its listed children but the wrapped ones, then its new pseudo ops in
 * order; pseudo op n0 + k lists wrap[k] alone. */
static int pseudo_children(const struct mp_trace_tree *t, const int32_t *wrap, size_t n_new,
                           const uint8_t *detached, struct tree_arrays *a, size_t n1)
{
    size_t n0 = t->n;
    a->child_off = calloc(n1 + 1, sizeof(int32_t));
    a->child = malloc(((size_t)t->child_off[n0] + 2 * n_new + 1) * sizeof(int32_t));
    if (!a->child_off || !a->child)
        return MP_ENOMEM;
    for (size_t u = 0; u < n0; u++)
        for (int32_t k = t->child_off[u]; k < t->child_off[u + 1]; k++) {
            int32_t c = t->child[k];
            if (!(detached[c] && t->parent[c] == (int32_t)u))
                a->child_off[u + 1]++;
        }
    for (size_t k = 0; k < n_new; k++) {
        a->child_off[a->parent[n0 + k] + 1]++;
        a->child_off[n0 + k + 1] = 1;
    }
    for (size_t u = 0; u < n1; u++)
        a->child_off[u + 1] += a->child_off[u];
    /* the lists fit the block: each pseudo op adds itself and its one child */
    MP_ASSERT((size_t)a->child_off[n1] <= (size_t)t->child_off[n0] + 2 * n_new);
    int32_t *fill = malloc((n1 + 1) * sizeof(int32_t));
    if (!fill)
        return MP_ENOMEM;
    memcpy(fill, a->child_off, (n1 + 1) * sizeof(int32_t));
    for (size_t u = 0; u < n0; u++)
        for (int32_t k = t->child_off[u]; k < t->child_off[u + 1]; k++) {
            int32_t c = t->child[k];
            if (!(detached[c] && t->parent[c] == (int32_t)u))
                a->child[fill[u]++] = c;
        }
    for (size_t k = 0; k < n_new; k++) {
        a->child[fill[a->parent[n0 + k]]++] = (int32_t)(n0 + k);
        a->child[fill[n0 + k]++] = wrap[k];
    }
    for (size_t u = 0; u < n1; u++) /* every slot filled once */
        MP_ASSERT(fill[u] == a->child_off[u + 1]);
    free(fill);
    return 0;
}

int mp_trace_tree_insert_pseudo(struct mp_trace_tree *t, const int32_t *wrap, size_t n_new)
{
    const struct mp_trace_store *s = t->s;
    size_t n0 = t->n, n1 = n0 + n_new;
    if (s->n != n1 || n1 > INT32_MAX)
        return MP_EINVAL;
    if (n_new == 0)
        return 0;
    uint8_t *detached = calloc(n0 ? n0 : 1, 1);
    if (!detached)
        return MP_ENOMEM;
    for (size_t k = 0; k < n_new; k++) {
        int32_t w = wrap[k];
        if (w < 0 || (size_t)w >= n0 || t->parent[w] < 0 || detached[w] ||
            (t->pseudo && t->pseudo[t->parent[w]])) {
            free(detached);
            return MP_EINVAL;
        }
        detached[w] = 1;
    }
    struct tree_arrays a;
    uint8_t *pseudo = calloc(n1, 1);
    if (pseudo && t->pseudo)
        memcpy(pseudo, t->pseudo, n0);
    if (!pseudo || tree_arrays_grow(t, n1, &a)) {
        free(pseudo);
        free(detached);
        return MP_ENOMEM;
    }
    for (size_t k = 0; k < n_new; k++) {
        a.parent[n0 + k] = t->parent[wrap[k]];
        pseudo[n0 + k] = 1;
    }
    int rc = pseudo_children(t, wrap, n_new, detached, &a, n1);
    free(detached);
    if (rc) {
        tree_arrays_free(&a);
        free(pseudo);
        return rc;
    }
    pseudo_install(t, &a, pseudo, n1);
    return 0;
}

int mp_trace_tree_wrap_children(struct mp_trace_tree *t, const int32_t *wrap, size_t n_new)
{
    const struct mp_trace_store *s = t->s;
    size_t n0 = t->n, n1 = n0 + n_new;
    if (s->n != n1 || n1 > INT32_MAX)
        return MP_EINVAL;
    if (n_new == 0)
        return 0;
    int32_t *new_of = malloc(n0 * sizeof(int32_t)); /* wrapped event -> its pseudo op */
    int32_t *stack = malloc((n0 + 1) * sizeof(int32_t));
    if (!new_of || !stack) {
        free(new_of);
        free(stack);
        return MP_ENOMEM;
    }
    for (size_t u = 0; u < n0; u++)
        new_of[u] = -1;
    int rc = 0;
    for (size_t k = 0; k < n_new && !rc; k++) {
        int32_t w = wrap[k];
        if (w < 0 || (size_t)w >= n0 || new_of[w] >= 0)
            rc = MP_EINVAL;
        else
            new_of[w] = (int32_t)(n0 + k);
    }
    /* no wrapped event inside another's subtree (the walks below assume it) */
    for (size_t k = 0; k < n_new && !rc; k++)
        for (int32_t p = t->parent[wrap[k]]; p >= 0 && !rc; p = t->parent[p])
            if (new_of[p] >= 0)
                rc = MP_EINVAL;
    struct tree_arrays a = {0};
    if (!rc && !(rc = tree_arrays_grow(t, n1, &a))) {
        a.child_off = calloc(n1 + 1, sizeof(int32_t));
        a.child = malloc(((size_t)t->child_off[n0] + n_new + 1) * sizeof(int32_t));
        if (!a.child_off || !a.child)
            rc = MP_ENOMEM;
    }
    uint8_t *pseudo = NULL;
    if (!rc && t->pseudo && !(pseudo = grow_copy(t->pseudo, n0, n1, 1)))
        rc = MP_ENOMEM;
    if (rc) {
        tree_arrays_free(&a);
        free(pseudo);
        free(new_of);
        free(stack);
        return rc;
    }
    for (size_t k = 0; k < n_new; k++) { /* the rest as tree_arrays_grow set it */
        a.parent[n0 + k] = wrap[k];
        a.cpu_root[n0 + k] = 1;
        if (pseudo)
            pseudo[n0 + k] = 0;
    }
    /* children: a wrapped event lists its pseudo op alone, the pseudo op the
     * wrapped event's (attached) children, which it adopts */
    for (size_t u = 0; u < n0; u++) {
        if (new_of[u] >= 0) {
            a.child_off[u + 1] = 1;
            continue;
        }
        a.child_off[u + 1] = t->child_off[u + 1] - t->child_off[u];
    }
    for (size_t k = 0; k < n_new; k++)
        for (int32_t q = t->child_off[wrap[k]]; q < t->child_off[wrap[k] + 1]; q++)
            if (mp_trace_tree_is_child(t, wrap[k], t->child[q]))
                a.child_off[n0 + k + 1]++;
    for (size_t u = 0; u < n1; u++)
        a.child_off[u + 1] += a.child_off[u];
    /* the lists fit the block: a wrapped event's becomes its pseudo op, the
     * pseudo op's holds some of the wrapped event's children */
    MP_ASSERT((size_t)a.child_off[n1] <= (size_t)t->child_off[n0] + n_new);
    for (size_t u = 0; u < n0; u++) {
        int32_t o = a.child_off[u];
        if (new_of[u] >= 0) {
            a.child[o] = new_of[u];
            continue;
        }
        for (int32_t q = t->child_off[u]; q < t->child_off[u + 1]; q++)
            a.child[o++] = t->child[q];
    }
    for (size_t k = 0; k < n_new; k++) {
        int32_t o = a.child_off[n0 + k], w = wrap[k];
        for (int32_t q = t->child_off[w]; q < t->child_off[w + 1]; q++) {
            int32_t c = t->child[q];
            if (!mp_trace_tree_is_child(t, w, c))
                continue;
            a.child[o++] = c;
            a.parent[c] = (int32_t)(n0 + k);
        }
        MP_ASSERT(o == a.child_off[n0 + k + 1]); /* the adopted children, as counted */
    }
    /* the roots below a pseudo op are roots no more */
    for (size_t k = 0; k < n_new; k++) {
        size_t sn = 0;
        int32_t nk = (int32_t)(n0 + k);
        for (int32_t q = a.child_off[nk]; q < a.child_off[nk + 1]; q++)
            stack[sn++] = a.child[q];
        while (sn > 0) {
            int32_t u = stack[--sn];
            a.cpu_root[u] = 0;
            for (int32_t q = a.child_off[u]; q < a.child_off[u + 1]; q++)
                if (a.parent[a.child[q]] == u || (pseudo && pseudo[u]))
                    stack[sn++] = a.child[q];
        }
    }
    free(new_of);
    free(stack);
    pseudo_install(t, &a, pseudo, n1);
    t->n_gpu = t->n_gpu_linked = 0;
    find_launchers(t);
    return 0;
}

int mp_trace_tree_insert_above(struct mp_trace_tree *t, const int32_t *target, size_t n_new)
{
    const struct mp_trace_store *s = t->s;
    size_t n0 = t->n, n1 = n0 + n_new;
    if (s->n != n1 || n1 > INT32_MAX)
        return MP_EINVAL;
    if (n_new == 0)
        return 0;
    int32_t *new_of = malloc(n0 * sizeof(int32_t)); /* target -> its pseudo op */
    if (!new_of)
        return MP_ENOMEM;
    for (size_t u = 0; u < n0; u++)
        new_of[u] = -1;
    for (size_t k = 0; k < n_new; k++) {
        int32_t w = target[k];
        if (w < 0 || (size_t)w >= n0 || new_of[w] >= 0 || t->parent[w] < 0) {
            free(new_of);
            return MP_EINVAL;
        }
        new_of[w] = (int32_t)(n0 + k);
    }
    struct tree_arrays a;
    if (tree_arrays_grow(t, n1, &a)) {
        free(new_of);
        return MP_ENOMEM;
    }
    a.child_off = malloc((n1 + 1) * sizeof(int32_t));
    a.child = malloc(((size_t)t->child_off[n0] + n_new + 1) * sizeof(int32_t));
    uint8_t *pseudo = t->pseudo ? grow_copy(t->pseudo, n0, n1, 1) : NULL;
    if (!a.child_off || !a.child || (t->pseudo && !pseudo)) {
        tree_arrays_free(&a);
        free(pseudo);
        free(new_of);
        return MP_ENOMEM;
    }
    for (size_t k = 0; k < n_new; k++) {
        size_t i = n0 + k;
        a.parent[i] = t->parent[target[k]];
        if (pseudo)
            pseudo[i] = 0;
        a.parent[target[k]] = (int32_t)i;
    }
    /* old lists keep their order with each target replaced by its pseudo
     * op (where the target is attached); a pseudo op lists its target */
    int32_t o = 0;
    for (size_t u = 0; u < n0; u++) {
        a.child_off[u] = o;
        for (int32_t q = t->child_off[u]; q < t->child_off[u + 1]; q++) {
            int32_t c = t->child[q];
            a.child[o++] = new_of[c] >= 0 && t->parent[c] == (int32_t)u ? new_of[c] : c;
        }
    }
    for (size_t k = 0; k < n_new; k++) {
        a.child_off[n0 + k] = o;
        a.child[o++] = target[k];
    }
    a.child_off[n1] = o;
    /* every old slot once and one per pseudo op: the block's size */
    MP_ASSERT((size_t)o == (size_t)t->child_off[n0] + n_new);
    free(new_of);
    pseudo_install(t, &a, pseudo, n1);
    t->n_gpu = t->n_gpu_linked = 0;
    find_launchers(t);
    return 0;
}

void mp_trace_tree_free(struct mp_trace_tree *t)
{
    if (!t)
        return;
    free(t->kind);
    free(t->t_end);
    free(t->parent);
    free(t->child_off);
    free(t->child);
    free(t->in_tree);
    free(t->cpu_root);
    free(t->launcher);
    free(t->comm);
    free(t->bwd_of);
    free(t->fwd_of);
    free(t->recompute);
    free(t->pseudo);
    free(t);
}

/* Pre-order DFS over uid's subtree appending, per node u: u itself when
 * want_bwd is false and u is a GPU event (not uid), else bwd_of[u] when
 * linked. */
static long subtree_collect(const struct mp_trace_tree *t, int32_t uid, bool want_bwd,
                            // NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
                            int32_t **buf, size_t *n, size_t *cap)
{
    /* iterative DFS over children (pre-order) */
    int32_t stack_small[256];
    int32_t *stack = stack_small;
    size_t sn = 0, scap = 256;
    long added = 0;
    stack[sn++] = uid;
    while (sn > 0) {
        int32_t u = stack[--sn];
        int32_t val = want_bwd ? t->bwd_of[u] : (mp_kind_is_gpu(t->kind[u]) && u != uid ? u : -1);
        if (val >= 0) {
            if (MP_GROW(*buf, *cap, *n + 1, 64)) {
                added = MP_ENOMEM;
                break;
            }
            (*buf)[(*n)++] = val;
            added++;
        }
        for (int32_t k = t->child_off[u + 1] - 1; k >= t->child_off[u]; k--) {
            if (!mp_trace_tree_is_child(t, u, t->child[k]))
                continue; /* re-attached elsewhere */
            if (sn == scap) {
                size_t nc = scap * 2;
                int32_t *ns = stack == stack_small ? malloc(nc * sizeof(int32_t))
                                                   : mp_reallocarray(stack, nc, sizeof(int32_t));
                if (!ns) {
                    added = MP_ENOMEM;
                    goto out;
                }
                if (stack == stack_small)
                    memcpy(ns, stack_small, sizeof(stack_small));
                stack = ns;
                scap = nc;
            }
            stack[sn++] = t->child[k];
        }
    }
out:
    if (stack != stack_small)
        free(stack);
    return added;
}

long mp_trace_tree_gpu_events(const struct mp_trace_tree *t, int32_t uid, int32_t **buf, size_t *n,
                              size_t *cap)
{
    return subtree_collect(t, uid, false, buf, n, cap);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

long mp_trace_tree_subtree_bwd(const struct mp_trace_tree *t, int32_t uid, int32_t **buf, size_t *n,
                               size_t *cap)
{
    size_t n0 = *n;
    long got = subtree_collect(t, uid, true, buf, n, cap);
    if (got > 1)
        qsort(*buf + n0, (size_t)got, sizeof(int32_t), cmp_i32);
    return got;
}

int mp_trace_tree_mark_recompute(struct mp_trace_tree *t)
{
    if (!t->recompute && !(t->recompute = calloc(t->n ? t->n : 1, 1)))
        return MP_ENOMEM;
    int32_t *stack = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] != MP_K_PYFUNC)
            continue;
        const char *name = mp_trace_tree_name(t, (int32_t)i);
        if (!strstr(name, "torch/utils/checkpoint.py") || !strstr(name, "recompute_fn"))
            continue;
        t->n_recompute_regions++;
        size_t sn = 0;
        if (MP_GROW(stack, cap, 1, 256))
            return MP_ENOMEM;
        stack[sn++] = (int32_t)i;
        while (sn > 0) {
            int32_t u = stack[--sn];
            t->recompute[u] = 1;
            for (int32_t k = t->child_off[u]; k < t->child_off[u + 1]; k++) {
                if (!mp_trace_tree_is_child(t, u, t->child[k]))
                    continue;
                if (MP_GROW(stack, cap, sn + 1, 256)) {
                    free(stack);
                    return MP_ENOMEM;
                }
                stack[sn++] = t->child[k];
            }
        }
    }
    free(stack);
    return 0;
}

struct iv {
    double s, e;
};

static int cmp_iv(const void *a, const void *b)
{
    const struct iv *x = a, *y = b;
    return x->s < y->s ? -1 : (x->s > y->s ? 1 : 0);
}

double mp_trace_tree_busy(const struct mp_trace_tree *t, const int32_t *idx, size_t n)
{
    if (n == 0)
        return 0.0;
    struct iv small[64];
    struct iv *v = n <= 64 ? small : malloc(n * sizeof(*v));
    if (!v)
        return 0.0;
    for (size_t i = 0; i < n; i++)
        v[i] = (struct iv){t->s->ts[idx[i]], t->t_end[idx[i]]};
    qsort(v, n, sizeof(*v), cmp_iv);
    double busy = 0.0, cs = v[0].s, ce = v[0].e;
    for (size_t i = 1; i < n; i++) {
        if (v[i].s <= ce) {
            if (v[i].e > ce)
                ce = v[i].e;
        } else {
            busy += ce - cs;
            cs = v[i].s;
            ce = v[i].e;
        }
    }
    busy += ce - cs;
    if (v != small)
        free(v);
    return busy;
}
