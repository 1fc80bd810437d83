/* The inference trace splitter (TraceLens_split_inference_trace,
 * docs/tracelens-compat.md, Splitting): finds the step annotations, picks the windows asked
 * for (every step, steady-state windows, same-phase runs), selects each
 * window's events exactly as TraceLens does (the steps' CPU events on their
 * thread, the flows and GPU events sharing their correlation ids, and every
 * event without a timestamp), and writes them as gzip sub-traces with
 * execution_details.json / .csv.
 *
 * Two streaming passes over the input: the first builds the event store
 * and selects each sub-trace's events in TraceLens's order (each step's CPU
 * events in file order, then the flows and the GPU events of its
 * correlation ids in CPython's set order, then the metadata events); the
 * second keeps the raw JSON text of every selected event once, from which
 * each sub-trace is assembled and compressed. So sub-traces list the same
 * events in the same order as TraceLens's (event UIDs line up), nothing is
 * re-serialised, and nothing is written until every sub-trace is complete.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/io.h>
#include <magpie/trace_steps.h>
#include <magpie/trace_tree.h>

#define SPLIT_MAX_OUTPUTS 1000000

static const char *const gpu_cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"};

/* One sub-trace to write. */
struct output {
    size_t *roots; /* indices into the sorted root list */
    size_t nroots;
    long idx;
    char *label;    /* output_label, or NULL for a single-iteration file */
    char *subdir;   /* "" or "prefilldecodemix" / "decode_only" */
    size_t *events; /* selected event indices, ascending */
    size_t nevents;
    struct mp_buf text; /* JSON not yet compressed */
    struct mp_buf gz;   /* gzip members compressed so far */
};

/* One step: an annotation event, or a synthetic span from the generic
 * fallback (a copy of a block's first event stretched to its last). */
struct root {
    double ts, end;
    int32_t pid, tid; /* interned texts, as in the store */
    int32_t name;     /* interned name */
    bool known;       /* the name matches a step annotation pattern */
};

struct split {
    const struct mp_trace_split_opts *o;
    struct mp_trace_store *s;
    struct mp_step_patterns *pat;
    size_t *roots; /* event indices of the step annotations, by ts */
    size_t nroots;
    struct root *r;                  /* per step */
    struct mp_step_details *details; /* per root */
    struct output *out;
    size_t nout, capout;
    /* correlation -> events (flows by id, GPU events by args.correlation),
     * as singly linked lists through next[] */
    struct mp_i64map flow_head, gpu_head;
    int64_t *next;
    /* events with ts and dur, sorted by (thread, ts) */
    size_t *by_thread;
    size_t nby;
    size_t *meta; /* events without ts */
    size_t nmeta;
    /* the copy pass: raw JSON text of every selected event, once */
    uint8_t *selected;
    size_t *raw_off;
    uint32_t *raw_len;
    struct mp_buf arena;
    /* top-level keys of the input, with their place around traceEvents */
    struct mp_buf keys_before, keys_after;
    bool seen_events;
    struct mp_diag *d;
};

static int add_output(struct split *sp, struct output **o)
{
    /* the capacity doubles from 64 and never passes the limit */
    if (sp->nout == sp->capout && sp->capout * 2 > SPLIT_MAX_OUTPUTS)
        return mp_diag_set(sp->d, MP_ENOMEM, "too many sub-traces (> %d)", SPLIT_MAX_OUTPUTS);
    if (MP_GROW(sp->out, sp->capout, sp->nout + 1, 64))
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    *o = &sp->out[sp->nout++];
    memset(*o, 0, sizeof(**o));
    mp_buf_init(&(*o)->text, 0);
    mp_buf_init(&(*o)->gz, 0);
    return 0;
}

static int output_roots(struct split *sp, struct output *o, size_t from, size_t to)
{
    MP_ASSERT(from <= to && to <= sp->nroots);
    o->nroots = to - from;
    o->roots = malloc(sizeof(size_t) * (o->nroots ? o->nroots : 1));
    if (!o->roots)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->nroots; i++)
        o->roots[i] = from + i;
    return 0;
}

static const char *str_of(const struct mp_trace_store *s, int32_t id)
{
    return id >= 0 ? mp_intern_str(s->strings, id) : "";
}

static bool is_gpu_cat(const char *cat)
{
    for (size_t i = 0; i < sizeof(gpu_cats) / sizeof(gpu_cats[0]); i++)
        if (strcmp(cat, gpu_cats[i]) == 0)
            return true;
    return false;
}

static bool wants_dims(const struct mp_trace_event *ev, void *user)
{
    (void)user;
    static const char *const names[] = {"vllm::unified_attention_with_output",
                                        "sgl_kernel::sgl_per_token_group_quant_8bit"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(names[i]);
        if (ev->name.n >= n && memmem(ev->name.p, ev->name.n, names[i], n))
            return true;
    }
    return false;
}

static const struct mp_trace_store *cmp_store;

static int cmp_thread_ts(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct mp_trace_store *s = cmp_store;
    if (s->pid[i] != s->pid[j])
        return s->pid[i] < s->pid[j] ? -1 : 1;
    if (s->tid[i] != s->tid[j])
        return s->tid[i] < s->tid[j] ? -1 : 1;
    if (s->ts[i] != s->ts[j])
        return s->ts[i] < s->ts[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int cmp_root_ts(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct mp_trace_store *s = cmp_store;
    double ti = (s->flags[i] & MP_EV_TS) ? s->ts[i] : 0,
           tj = (s->flags[j] & MP_EV_TS) ? s->ts[j] : 0;
    if (ti != tj)
        return ti < tj ? -1 : 1;
    return i < j ? -1 : i > j; /* stable, as Python's sort */
}

static int cmp_size(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    return i < j ? -1 : i > j;
}

/* Step annotations: user_annotation events matching the detailed patterns,
 * else the native ones; each distinct name is matched once. */
static int find_roots(struct split *sp, struct mp_trace_split_result *res)
{
    const struct mp_trace_store *s = sp->s;
    int32_t nnames = mp_intern_count(s->strings);
    int8_t *tier = malloc((size_t)(nnames > 0 ? nnames : 1));
    size_t *r1 = malloc(sizeof(size_t) * (s->n ? s->n : 1));
    size_t *r2 = malloc(sizeof(size_t) * (s->n ? s->n : 1));
    if (!tier || !r1 || !r2) {
        free(tier), free(r1), free(r2);
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    }
    memset(tier, -1, (size_t)(nnames > 0 ? nnames : 1));
    int32_t ua = mp_intern_find(s->strings, "user_annotation", 15);
    size_t n1 = 0, n2 = 0;
    for (size_t i = 0; ua >= 0 && i < s->n; i++) {
        if (s->cat[i] != ua || s->name[i] < 0)
            continue;
        int32_t nm = s->name[i];
        if (tier[nm] < 0)
            tier[nm] = (int8_t)mp_step_tier(sp->pat, mp_intern_str(s->strings, nm));
        if (tier[nm] == 1)
            r1[n1++] = i;
        else if (tier[nm] == 2)
            r2[n2++] = i;
    }
    free(tier);
    if (n1) {
        sp->roots = r1, sp->nroots = n1, res->root_tier = 1;
        free(r2);
    } else {
        sp->roots = r2, sp->nroots = n2, res->root_tier = n2 ? 2 : 0;
        free(r1);
    }
    cmp_store = s;
    qsort(sp->roots, sp->nroots, sizeof(size_t), cmp_root_ts);
    res->nroots = sp->nroots;
    sp->details = calloc(sp->nroots ? sp->nroots : 1, sizeof(*sp->details));
    if (!sp->details)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    sp->r = calloc(sp->nroots ? sp->nroots : 1, sizeof(*sp->r));
    if (!sp->r)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    for (size_t i = 0; i < sp->nroots; i++) {
        size_t e = sp->roots[i];
        struct mp_step st;
        mp_step_parse(sp->pat, str_of(s, s->name[e]), &st);
        mp_step_details(&st, &sp->details[i]);
        sp->r[i].ts = (s->flags[e] & MP_EV_TS) ? s->ts[e] : 0;
        sp->r[i].end = sp->r[i].ts + ((s->flags[e] & MP_EV_DUR) ? s->dur[e] : 0);
        sp->r[i].pid = s->pid[e];
        sp->r[i].tid = s->tid[e];
        sp->r[i].name = s->name[e];
        sp->r[i].known = true;
    }
    return 0;
}

/* ---- the generic fallback (no step annotation in the trace) ---- */

/* The shortest period of names[] that repeats >= 3 times back to back from
 * some start and covers more than half of the rest (TraceLens's
 * _find_repeating_period); false when none. */
static bool repeating_period(const int32_t *names, size_t n, size_t *period, size_t *start)
{
    for (size_t st = 0; st < n; st++) {
        size_t m = n - st;
        const int32_t *sfx = names + st;
        for (size_t p = 1; p <= m / 2; p++) {
            size_t count = 0, i = 0;
            while (i + p <= m && memcmp(sfx + i, sfx, p * sizeof(int32_t)) == 0) {
                count++;
                i += p;
            }
            if (count >= 3 && (double)(count * p) > (double)m * 0.5) {
                *period = p;
                *start = st;
                return true;
            }
        }
    }
    return false;
}

static int cmp_uid_ts(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    const struct mp_trace_store *s = cmp_store;
    if (s->ts[i] != s->ts[j])
        return s->ts[i] < s->ts[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* TraceLens's find_iteration_roots_generic: from the outermost frames of the
 * host call tree (python functions included), breadth first, the first node
 * whose children repeat a name pattern; each repetition becomes a step. */
static int generic_roots(struct split *sp)
{
    const struct mp_trace_store *s = sp->s;
    struct mp_trace_tree *t = NULL;
    struct mp_trace_tree_opts to = {.python_functions = true};
    int rc = mp_trace_tree_build(s, &to, &t, sp->d);
    if (rc)
        return rc;
    size_t n = t->n ? t->n : 1;
    uint32_t *ngpu = calloc(n, sizeof(uint32_t));
    int32_t *queue = malloc(n * sizeof(int32_t));
    uint8_t *seen = calloc(n, 1);
    int32_t *kids = malloc(n * sizeof(int32_t)), *names = malloc(n * sizeof(int32_t));
    size_t qh = 0, qt = 0;
    if (!ngpu || !queue || !seen || !kids || !names) {
        rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < t->n; i++)
        if (mp_kind_is_gpu(t->kind[i]))
            for (int32_t p = t->parent[i]; p >= 0; p = t->parent[p])
                ngpu[p]++;
    /* seeds: each cpu root (by ts) walked up to its parentless ancestor */
    for (size_t i = 0; i < t->n; i++)
        if (t->cpu_root[i])
            kids[qt++] = (int32_t)i;
    cmp_store = s;
    qsort(kids, qt, sizeof(int32_t), cmp_uid_ts);
    size_t nseed = qt;
    qt = 0;
    for (size_t k = 0; k < nseed; k++) {
        int32_t top = kids[k];
        while (t->parent[top] >= 0)
            top = t->parent[top];
        if (!seen[top]) {
            seen[top] = 1;
            queue[qt++] = top;
        }
    }
    while (qh < qt) {
        int32_t cur = queue[qh++];
        size_t nk = 0;
        bool gpu = false;
        for (int32_t c = t->child_off[cur]; c < t->child_off[cur + 1]; c++) {
            int32_t ch = t->child[c];
            if (t->parent[ch] != cur)
                continue;
            kids[nk] = ch;
            names[nk++] = s->name[ch];
            gpu |= !mp_kind_is_gpu(t->kind[ch]) && ngpu[ch] > 0;
        }
        if (!nk || !gpu)
            continue;
        size_t p, st;
        if (!repeating_period(names, nk, &p, &st)) {
            for (size_t k = 0; k < nk; k++)
                if (!mp_kind_is_gpu(t->kind[kids[k]]) && ngpu[kids[k]] > 0 && qt < n)
                    queue[qt++] = kids[k];
            continue;
        }
        /* the n-th occurrence of the block's first name to the n-th of its last */
        int32_t fname = names[st], lname = names[st + p - 1];
        size_t nf = 0, nl = 0;
        for (size_t k = st; k < nk; k++) {
            nf += names[k] == fname;
            nl += names[k] == lname;
        }
        size_t cnt = nf < nl ? nf : nl;
        sp->r = calloc(cnt ? cnt : 1, sizeof(*sp->r));
        sp->roots = calloc(cnt ? cnt : 1, sizeof(size_t));
        if (!sp->r || !sp->roots) {
            rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
            goto out;
        }
        size_t fi = st, li = st;
        for (size_t b = 0; b < cnt; b++) {
            while (fi < nk && names[fi] != fname)
                fi++;
            while (li < nk && names[li] != lname)
                li++;
            if (fi >= nk || li >= nk || li < fi)
                break;
            int32_t first = kids[fi], last = kids[li];
            struct root *rt = &sp->r[sp->nroots];
            rt->ts = s->ts[first];
            rt->end = rt->ts + ((s->ts[last] + ((s->flags[last] & MP_EV_DUR) ? s->dur[last] : 0)) -
                                s->ts[first]);
            rt->pid = s->pid[first];
            rt->tid = s->tid[first];
            rt->name = s->name[first];
            rt->known =
                rt->name >= 0 && mp_step_tier(sp->pat, mp_intern_str(s->strings, rt->name)) != 0;
            sp->roots[sp->nroots++] = (size_t)first;
            fi++;
            li++;
        }
        break;
    }
    sp->details = calloc(sp->nroots ? sp->nroots : 1, sizeof(*sp->details));
    if (!sp->details) {
        rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < sp->nroots; i++) { /* unmatched names: one decode step each */
        struct mp_step st;
        mp_step_parse(sp->pat, str_of(s, sp->r[i].name), &st);
        mp_step_details(&st, &sp->details[i]);
    }
out:
    free(ngpu);
    free(queue);
    free(seen);
    free(kids);
    free(names);
    mp_trace_tree_free(t);
    return rc;
}

static int link_push(struct split *sp, struct mp_i64map *m, int64_t key, size_t ev)
{
    int64_t *h = mp_i64map_get(m, key);
    sp->next[ev] = h ? *h : -1;
    if (mp_i64map_put(m, key, (int64_t)ev) != 0)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    return 0;
}

/* preprocess_trace: meta events, flows by id, GPU events by correlation,
 * and the events with a duration ordered by thread and time. */
static int index_events(struct split *sp)
{
    const struct mp_trace_store *s = sp->s;
    sp->next = malloc(sizeof(int64_t) * (s->n ? s->n : 1));
    sp->by_thread = malloc(sizeof(size_t) * (s->n ? s->n : 1));
    sp->meta = malloc(sizeof(size_t) * (s->n ? s->n : 1));
    if (!sp->next || !sp->by_thread || !sp->meta)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    int32_t ncat = mp_intern_count(s->strings);
    int8_t *gcat = calloc((size_t)(ncat > 0 ? ncat : 1), 1);
    if (!gcat)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    for (int32_t c = 0; c < ncat; c++)
        gcat[c] = is_gpu_cat(mp_intern_str(s->strings, c));
    /* linked lists are built back to front so that each list runs in file
     * order, as TraceLens's per-correlation lists do */
    int rc = 0;
    for (size_t k = s->n; k-- > 0 && !rc;) {
        uint32_t f = s->flags[k];
        if (!(f & MP_EV_TS))
            continue;
        if (s->ph[k] == 's' || s->ph[k] == 'f') {
            if (f & MP_EV_ID)
                rc = link_push(sp, &sp->flow_head, s->id[k], k);
            continue;
        }
        if (s->cat[k] >= 0 && gcat[s->cat[k]] && (f & MP_EV_CORR))
            rc = link_push(sp, &sp->gpu_head, s->correlation[k], k);
    }
    free(gcat);
    if (rc)
        return rc;
    for (size_t k = 0; k < s->n; k++) {
        uint32_t f = s->flags[k];
        if (!(f & MP_EV_TS))
            sp->meta[sp->nmeta++] = k;
        else if (f & MP_EV_DUR)
            sp->by_thread[sp->nby++] = k;
    }
    cmp_store = s;
    qsort(sp->by_thread, sp->nby, sizeof(size_t), cmp_thread_ts);
    return 0;
}

/* First position in by_thread at or after (pid, tid, ts). */
static size_t lower_bound(const struct split *sp, int32_t pid, int32_t tid, double ts)
{
    const struct mp_trace_store *s = sp->s;
    size_t lo = 0, hi = sp->nby;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t k = sp->by_thread[mid];
        bool less = s->pid[k] != pid   ? s->pid[k] < pid
                    : s->tid[k] != tid ? s->tid[k] < tid
                                       : s->ts[k] < ts;
        if (less)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct selection {
    size_t *ev;
    size_t n, cap;
    uint32_t *stamp; /* per event: output number + 1 that last took it */
    int64_t *corr;   /* correlation ids of one step */
    size_t ncorr, capcorr;
};

static int sel_push(struct selection *x, size_t k, uint32_t tag)
{
    if (x->stamp[k] == tag)
        return 0;
    x->stamp[k] = tag;
    if (MP_GROW(x->ev, x->cap, x->n + 1, 1024))
        return MP_ENOMEM;
    x->ev[x->n++] = k;
    return 0;
}

static int corr_push(struct selection *x, int64_t c)
{
    if (MP_GROW(x->corr, x->capcorr, x->ncorr + 1, 256))
        return MP_ENOMEM;
    x->corr[x->ncorr++] = c;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- CPython's set of ints, emulated ----
 * TraceLens gathers a step's correlation ids in a Python set and walks it
 * to sum the GPU durations; the float sum (and so the "%.2f" cells of
 * execution_details.csv) depends on that order, which is CPython's table
 * order: open addressing with 9 linear probes then perturbed jumps, resized
 * to 4x the used count (2x above 50000) when 3/5 full. Ids are the set's
 * keys; hash(n) = n for 0 <= n < 2**61 - 1. */
#define PYSET_LINEAR_PROBES 9
#define PYSET_PERTURB_SHIFT 5

struct pyset {
    int64_t *key;
    uint8_t *full;
    size_t mask, fill;
};

static uint64_t pyhash(int64_t v)
{
    const int64_t mod = ((int64_t)1 << 61) - 1;
    int64_t h = v >= 0 ? v % mod : -((-(v + 1) % mod) + 1) % mod;
    if (h == -1)
        h = -2;
    return (uint64_t)h;
}

/* CPython's probe sequence: the slot holding k, or the first empty one. */
static size_t pyset_probe(const int64_t *key, const uint8_t *full, size_t mask, int64_t k)
{
    uint64_t h = pyhash(k), perturb = h;
    size_t i = (size_t)(h & mask);
    for (;;) {
        size_t probes = i + PYSET_LINEAR_PROBES <= mask ? PYSET_LINEAR_PROBES : 0;
        for (size_t j = 0; j <= probes; j++)
            if (!full[i + j] || key[i + j] == k)
                return i + j;
        perturb >>= PYSET_PERTURB_SHIFT;
        i = (size_t)((i * 5 + 1 + perturb) & mask);
    }
}

static int pyset_resize(struct pyset *ps, size_t minused)
{
    size_t n = 8;
    while (n <= minused)
        n <<= 1;
    int64_t *key = malloc(n * sizeof(int64_t));
    uint8_t *full = calloc(n, 1);
    if (!key || !full) {
        free(key);
        free(full);
        return MP_ENOMEM;
    }
    for (size_t i = 0; ps->full && i <= ps->mask; i++) /* old table order */
        if (ps->full[i]) {
            size_t at = pyset_probe(key, full, n - 1, ps->key[i]);
            full[at] = 1;
            key[at] = ps->key[i];
        }
    free(ps->key);
    free(ps->full);
    ps->key = key;
    ps->full = full;
    ps->mask = n - 1;
    return 0;
}

static int pyset_add(struct pyset *ps, int64_t k)
{
    if (!ps->full && pyset_resize(ps, 0) != 0)
        return MP_ENOMEM;
    size_t at = pyset_probe(ps->key, ps->full, ps->mask, k);
    if (ps->full[at])
        return 0; /* already there */
    ps->full[at] = 1;
    ps->key[at] = k;
    ps->fill++;
    if (ps->fill * 5 < ps->mask * 3)
        return 0;
    return pyset_resize(ps, ps->fill > 50000 ? ps->fill * 2 : ps->fill * 4);
}

static void pyset_clear(struct pyset *ps)
{
    free(ps->key);
    free(ps->full);
    memset(ps, 0, sizeof(*ps));
}

/* First element of the first list of a raw "Input Dims" value: [[N, ...], ...]. */
static bool dims_first(const char *args, uint32_t len, int64_t *out)
{
    struct mp_strview a = {args, len}, v;
    if (mp_trace_json_find(a, "Input Dims", &v) != 0)
        return false;
    size_t i = 0;
    while (i < v.n && v.p[i] != '[')
        i++;
    i++;
    while (i < v.n && (v.p[i] == ' ' || v.p[i] == '\n' || v.p[i] == '\t' || v.p[i] == '\r'))
        i++;
    if (i >= v.n || v.p[i] != '[')
        return false;
    i++;
    while (i < v.n && (v.p[i] == ' ' || v.p[i] == '\n' || v.p[i] == '\t' || v.p[i] == '\r'))
        i++;
    size_t j = i;
    while (j < v.n && v.p[j] != ',' && v.p[j] != ']')
        j++;
    while (j > i && (v.p[j - 1] == ' ' || v.p[j - 1] == '\n'))
        j--;
    if (j == i)
        return false;
    return mp_trace_json_int((struct mp_strview){v.p + i, j - i}, out) == 0;
}

/* extract_iteration over one output's steps: selects its events and fills
 * the entry's counts; *batches gets the distinct batch sizes TraceLens reads
 * from the attention ops' Input Dims (ascending). */
static int select_output(struct split *sp, struct selection *x, struct output *o, uint32_t tag,
                         struct mp_trace_split_entry *e, int64_t **batches, size_t *nbatches)
{
    const struct mp_trace_store *s = sp->s;
    x->n = 0;
    e->num_gpu_events = 0;
    e->gpu_duration = 0;
    e->gpu_busy_duration = 0;
    for (size_t r = 0; r < o->nroots; r++) {
        const struct root *rt = &sp->r[o->roots[r]];
        double rts = rt->ts, rend = rt->end;
        x->ncorr = 0;
        /* the step's CPU events, in file order as TraceLens lists them */
        size_t first = x->n;
        for (size_t p = lower_bound(sp, rt->pid, rt->tid, rts); p < sp->nby; p++) {
            size_t k = sp->by_thread[p];
            if (s->pid[k] != rt->pid || s->tid[k] != rt->tid || s->ts[k] > rend)
                break;
            if (s->ts[k] + s->dur[k] > rend)
                continue;
            if (sel_push(x, k, tag) != 0)
                return MP_ENOMEM;
        }
        if (x->n - first > 1)
            qsort(x->ev + first, x->n - first, sizeof(size_t), cmp_size);
        for (size_t q = first; q < x->n; q++) {
            size_t k = x->ev[q];
            if ((s->flags[k] & MP_EV_CORR) && corr_push(x, s->correlation[k]) != 0)
                return MP_ENOMEM;
        }
        struct pyset ps = {0};
        for (size_t c = 0; c < x->ncorr; c++)
            if (pyset_add(&ps, x->corr[c]) != 0) {
                pyset_clear(&ps);
                return MP_ENOMEM;
            }
        /* then every flow of those ids, then every GPU event, each walk in
         * the set's order */
        int rc = 0;
        for (size_t slot = 0; ps.full && slot <= ps.mask && !rc; slot++) {
            if (!ps.full[slot])
                continue;
            int64_t *h = mp_i64map_get(&sp->flow_head, ps.key[slot]);
            for (int64_t k = h ? *h : -1; k >= 0 && !rc; k = sp->next[k])
                rc = sel_push(x, (size_t)k, tag);
        }
        double lo = INFINITY, hi = -INFINITY;
        for (size_t slot = 0; ps.full && slot <= ps.mask && !rc; slot++) {
            if (!ps.full[slot])
                continue;
            int64_t *h = mp_i64map_get(&sp->gpu_head, ps.key[slot]);
            for (int64_t k = h ? *h : -1; k >= 0 && !rc; k = sp->next[k]) {
                rc = sel_push(x, (size_t)k, tag);
                double t0 = s->ts[k], t1 = s->ts[k] + s->dur[k];
                lo = t0 < lo ? t0 : lo;
                hi = t1 > hi ? t1 : hi;
                e->gpu_busy_duration += s->dur[k];
                e->num_gpu_events++;
            }
        }
        if (rc) {
            pyset_clear(&ps);
            return MP_ENOMEM;
        }
        pyset_clear(&ps);
        if (lo <= hi)
            e->gpu_duration += hi - lo;
    }
    for (size_t m = 0; m < sp->nmeta; m++)
        if (sel_push(x, sp->meta[m], tag) != 0)
            return MP_ENOMEM;
    *nbatches = 0;
    for (size_t i = 0; i < x->n; i++) {
        size_t k = x->ev[i];
        int64_t b;
        if (!s->args[k] || !dims_first(s->args[k], s->args_len[k], &b))
            continue;
        int64_t *nb = mp_reallocarray(*batches, (*nbatches + 1), sizeof(int64_t));
        if (!nb)
            return MP_ENOMEM;
        *batches = nb;
        (*batches)[(*nbatches)++] = b;
    }
    if (*nbatches > 1)
        qsort(*batches, *nbatches, sizeof(int64_t), cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < *nbatches; i++)
        if (!u || (*batches)[u - 1] != (*batches)[i])
            (*batches)[u++] = (*batches)[i];
    *nbatches = u;
    e->event_count = (long)x->n;
    o->nevents = x->n;
    o->events = malloc(sizeof(size_t) * (x->n ? x->n : 1));
    if (!o->events)
        return MP_ENOMEM;
    if (x->n)
        memcpy(o->events, x->ev, sizeof(size_t) * x->n);
    return 0;
}

/* Base name of the input as TraceLens shortens it. */
static char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    struct mp_buf t;
    mp_buf_init(&t, 0);
    mp_buf_puts(&t, b);
    static const char *const drop[] = {".pt.trace", ".json.gz", ".json"};
    for (size_t i = 0; i < 3; i++) {
        size_t dn = strlen(drop[i]);
        char *p;
        while (t.len && (p = strstr(t.data, drop[i])) != NULL) {
            memmove(p, p + dn, strlen(p + dn) + 1);
            t.len -= dn;
        }
    }
    char *r = mp_strdup(mp_buf_cstr(&t));
    mp_buf_fini(&t);
    return r;
}

/* The file name of one output (extract_and_save's naming rules). */
static void output_name(struct split *sp, const struct output *o,
                        const struct mp_trace_split_entry *e, const char *base, struct mp_buf *nm)
{
    if (o->label) {
        mp_buf_printf(nm,
                      "%s_prefill_%lld_prefilldecode_%lld_decode_%lld_bs%lld_conc%lld_%s.json.gz",
                      o->label, (long long)e->phase.num_prefill,
                      (long long)e->phase.num_prefilldecode, (long long)e->phase.num_decode,
                      (long long)e->phase.avg_bs, (long long)e->phase.avg_conc, base);
        return;
    }
    const struct root *rt = &sp->r[o->roots[0]];
    if (!rt->known) { /* the generic fallback's steps have no name part */
        mp_buf_printf(nm, "%s_annotation_iteration_%ld.json.gz", base, o->idx);
        return;
    }
    const char *rn = str_of(sp->s, rt->name);
    mp_buf_printf(nm, "%s_annotation_iteration_%ld_", base, o->idx);
    for (const char *c = rn; *c; c++) {
        switch (*c) {
        case '/':
        case ' ':
        case '(':
            mp_buf_putc(nm, '_');
            break;
        case ')':
        case ':':
            break;
        default:
            mp_buf_putc(nm, *c);
        }
    }
    mp_buf_puts(nm, ".json.gz");
}

/* ---- the copy pass ---- */

/* Sub-trace text is compressed in chunks of this size, each an independent
 * gzip member (a gzip file may hold several; every reader, Python's gzip
 * and zlib's included, reads them as one stream), so memory holds the
 * compressed sub-traces and at most one chunk of text per sub-trace. */
#define SPLIT_CHUNK ((size_t)256 << 10)

static int flush_chunk(struct split *sp, struct output *o)
{
    if (!o->text.len)
        return 0;
    int rc = mp_io_gzip(o->text.data, o->text.len, sp->o->gzip_level, &o->gz, sp->d);
    mp_buf_reset(&o->text);
    return rc;
}

/* {<keys before traceEvents>"traceEvents": [ */
static int open_doc(struct split *sp, struct output *o)
{
    int rc = mp_buf_putc(&o->text, '{');
    rc = rc ? rc : mp_buf_append(&o->text, sp->keys_before.data, sp->keys_before.len);
    return rc ? rc : mp_buf_puts(&o->text, "\"traceEvents\": [\n");
}

static int copy_event(const struct mp_trace_event *ev, void *user)
{
    struct split *sp = user;
    sp->seen_events = true;
    size_t k = (size_t)ev->index;
    if (k >= sp->s->n || !sp->selected[k])
        return 0;
    if (ev->raw.n > UINT32_MAX)
        return MP_ENOMEM;
    sp->raw_off[k] = sp->arena.len;
    sp->raw_len[k] = (uint32_t)ev->raw.n;
    return mp_buf_append(&sp->arena, ev->raw.p, ev->raw.n);
}

/* One sub-trace: its events in TraceLens's order, compressed as it grows. */
static int render_output(struct split *sp, struct output *o)
{
    int rc = open_doc(sp, o);
    for (size_t j = 0; j < o->nevents && !rc; j++) {
        size_t k = o->events[j];
        if (j)
            rc = mp_buf_append(&o->text, ",\n", 2);
        rc = rc ? rc : mp_buf_append(&o->text, sp->arena.data + sp->raw_off[k], sp->raw_len[k]);
        if (!rc && o->text.len >= SPLIT_CHUNK)
            rc = flush_chunk(sp, o);
    }
    rc = rc ? rc : mp_buf_puts(&o->text, "\n]");
    if (!rc && sp->keys_after.len) {
        rc = mp_buf_puts(&o->text, ",\n");
        rc = rc ? rc : mp_buf_append(&o->text, sp->keys_after.data, sp->keys_after.len - 2);
    }
    rc = rc ? rc : mp_buf_puts(&o->text, "}\n");
    return rc ? rc : flush_chunk(sp, o);
}

static int copy_meta(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct split *sp = user;
    struct mp_buf *b = sp->seen_events ? &sp->keys_after : &sp->keys_before;
    if (mp_json_str(b, key.p, key.n) != 0 || mp_buf_puts(b, ": ") != 0 ||
        mp_buf_append(b, raw.p, raw.n) != 0 || mp_buf_puts(b, ",\n") != 0)
        return MP_ENOMEM;
    return 0;
}

/* ---- execution_details ---- */

static void json_details(struct mp_buf *b, const struct mp_trace_split_result *r)
{
    mp_buf_puts(b, "[");
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_trace_split_entry *e = &r->entries[i];
        mp_buf_puts(b, i ? ",\n  {\n" : "\n  {\n");
        mp_buf_printf(b, "    \"idx\": %ld,\n    \"output_path\": ", e->idx);
        mp_json_str(b, e->output_path, strlen(e->output_path));
        mp_buf_printf(b, ",\n    \"event_count\": %ld,\n    \"num_gpu_events\": %ld,\n",
                      e->event_count, e->num_gpu_events);
        /* without GPU events TraceLens's sums stay the Python int 0 */
        mp_buf_puts(b, "    \"gpu_duration\": ");
        if (e->num_gpu_events)
            mp_json_double(b, e->gpu_duration);
        else
            mp_buf_puts(b, "0");
        mp_buf_puts(b, ",\n    \"gpu_busy_duration\": ");
        if (e->num_gpu_events)
            mp_json_double(b, e->gpu_busy_duration);
        else
            mp_buf_puts(b, "0");
        mp_buf_puts(b, ",\n    \"steps\": [");
        for (size_t s = 0; s < e->nsteps; s++) {
            const struct mp_step_details *t = &e->steps[s];
            mp_buf_printf(
                b,
                "%s\n      {\n        \"batch_size\": %lld,\n        \"num_requests\": %lld,\n"
                "        \"context_requests\": %lld,\n        \"context_sum\": %lld,\n"
                "        \"generation_requests\": %lld,\n        \"generation_sum\": %lld\n      }",
                s ? "," : "", (long long)t->batch_size, (long long)t->num_requests,
                (long long)t->context_requests, (long long)t->context_sum,
                (long long)t->generation_requests, (long long)t->generation_sum);
        }
        mp_buf_puts(b, e->nsteps ? "\n    ],\n" : "],\n");
        mp_buf_printf(
            b,
            "    \"phase\": {\n      \"num_prefill\": %lld,\n      \"num_prefilldecode\": %lld,\n"
            "      \"num_decode\": %lld,\n      \"avg_bs\": %lld,\n      \"avg_conc\": %lld\n    "
            "}\n  }",
            (long long)e->phase.num_prefill, (long long)e->phase.num_prefilldecode,
            (long long)e->phase.num_decode, (long long)e->phase.avg_bs,
            (long long)e->phase.avg_conc);
    }
    mp_buf_puts(b, r->n ? "\n]" : "]");
}

static void csv_details(struct mp_buf *b, const struct mp_trace_split_result *r)
{
    struct mp_csv c;
    mp_csv_init(&c, b, "\n");
    static const char *const cols[] = {"idx",
                                       "output_path",
                                       "event_count",
                                       "num_gpu_events",
                                       "gpu_duration",
                                       "gpu_busy_duration",
                                       "phase_num_prefill",
                                       "phase_num_prefilldecode",
                                       "phase_num_decode",
                                       "phase_avg_bs",
                                       "phase_avg_conc",
                                       "num_steps"};
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
        mp_csv_str(&c, cols[i]);
    mp_csv_end_row(&c);
    bool any_gpu = false;
    for (size_t i = 0; i < r->n; i++)
        any_gpu |= r->entries[i].num_gpu_events > 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_trace_split_entry *e = &r->entries[i];
        mp_csv_fmt(&c, "%ld", e->idx);
        mp_csv_str(&c, e->output_path);
        mp_csv_fmt(&c, "%ld", e->event_count);
        mp_csv_fmt(&c, "%ld", e->num_gpu_events);
        /* pandas applies "%.2f" only to a float column: a column of
         * Python int zeros (no GPU events anywhere) prints as integers */
        mp_csv_fmt(&c, any_gpu ? "%.2f" : "%.0f", e->gpu_duration);
        mp_csv_fmt(&c, any_gpu ? "%.2f" : "%.0f", e->gpu_busy_duration);
        mp_csv_fmt(&c, "%lld", (long long)e->phase.num_prefill);
        mp_csv_fmt(&c, "%lld", (long long)e->phase.num_prefilldecode);
        mp_csv_fmt(&c, "%lld", (long long)e->phase.num_decode);
        mp_csv_fmt(&c, "%lld", (long long)e->phase.avg_bs);
        mp_csv_fmt(&c, "%lld", (long long)e->phase.avg_conc);
        mp_csv_fmt(&c, "%zu", e->nsteps);
        mp_csv_end_row(&c);
    }
}

/* ---- planning ---- */

static int parse_range(const char *spec, size_t n, size_t *start, size_t *end, struct mp_diag *d)
{
    if (!spec || strcmp(spec, "all") == 0) {
        *start = 0, *end = n;
        return 0;
    }
    char *e1;
    long a = strtol(spec, &e1, 10);
    long b = a + 1;
    if (e1 == spec || a < 0)
        goto bad;
    if (*e1 == ':') {
        char *e2;
        b = strtol(e1 + 1, &e2, 10);
        if (e2 == e1 + 1 || *e2 || b < 0)
            goto bad;
    } else if (*e1) {
        goto bad;
    }
    *start = (size_t)a;
    *end = (size_t)b < n ? (size_t)b : n;
    if (*end < *start)
        *end = *start;
    return 0;
bad:
    mp_diag_set_field(d, "--iterations");
    return mp_diag_set(d, MP_EINVAL, "--iterations expects 'all', 'N' or 'START:END', not '%s'",
                       spec);
}

static int plan_window(struct split *sp, const size_t *working, size_t nworking, size_t ws,
                       size_t we, const char *label, const char *subdir)
{
    MP_ASSERT(we <= nworking); /* a window lies in the working steps */
    if (we <= ws)
        return 0;
    struct output *o = NULL;
    int rc = add_output(sp, &o);
    if (rc || !o)
        return rc ? rc : MP_ENOMEM;
    o->nroots = we - ws;
    o->roots = malloc(sizeof(size_t) * o->nroots);
    o->label = mp_strdup(label);
    o->subdir = mp_strdup(subdir);
    if (!o->roots || !o->label || !o->subdir)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->nroots; i++)
        o->roots[i] = working[ws + i];
    return 0;
}

static int plan(struct split *sp, struct mp_trace_split_result *res)
{
    const struct mp_trace_split_opts *op = sp->o;
    int num_steps = op->num_steps > 0 ? op->num_steps : 32;
    size_t start = 0, end = 0;
    int rc = parse_range(op->iterations, sp->nroots, &start, &end, sp->d);
    if (rc)
        return rc;
    if (op->store_single_iteration) {
        for (size_t i = start; i < end; i++) {
            struct output *o = NULL;
            if ((rc = add_output(sp, &o)) != 0 || !o)
                return rc ? rc : MP_ENOMEM;
            o->idx = (long)i;
            o->subdir = mp_strdup("");
            if (!o->subdir || output_roots(sp, o, i, i + 1) != 0)
                return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
        }
    }
    bool all = !op->iterations || strcmp(op->iterations, "all") == 0;
    size_t nw = all ? sp->nroots : end - start;
    size_t *working = malloc(sizeof(size_t) * (nw ? nw : 1));
    struct mp_step_details *wd = malloc(sizeof(*wd) * (nw ? nw : 1));
    if (!working || !wd) {
        free(working), free(wd);
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nw; i++) {
        working[i] = (all ? 0 : start) + i;
        wd[i] = sp->details[working[i]];
    }
    if (!all) {
        res->regions = malloc(sizeof(*res->regions));
        if (!res->regions) {
            rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
            goto out;
        }
        res->regions[0][0] = 0, res->regions[0][1] = nw;
        res->nregions = 1;
    } else if (op->find_steady_state || op->divide_phases) {
        res->nregions = mp_step_steady_regions(wd, nw, num_steps, &res->regions);
    }
    if (op->divide_phases) {
        /* every steady-state step with work, in order, grouped into runs of
         * the same phase (runs continue across region boundaries) */
        size_t *steps = malloc(sizeof(size_t) * (nw + 1));
        int *phase = malloc(sizeof(int) * (nw + 1));
        size_t ns = 0;
        if (!steps || !phase) {
            free(steps), free(phase);
            rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t g = 0; g < res->nregions; g++)
            for (size_t i = res->regions[g][0]; i < res->regions[g][1] && i < nw; i++) {
                int ph = wd[i].context_requests > 0 ? 1 : wd[i].generation_requests > 0 ? 2 : 0;
                if (ph) {
                    steps[ns] = working[i];
                    phase[ns++] = ph;
                }
            }
        long chunk[3] = {0, 0, 0};
        for (size_t i = 0; i < ns && !rc;) {
            size_t j = i;
            while (j < ns && phase[j] == phase[i])
                j++;
            struct mp_step_details *rd = malloc(sizeof(*rd) * (j - i));
            if (!rd) {
                rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
                break;
            }
            for (size_t k = i; k < j; k++)
                rd[k - i] = sp->details[steps[k]];
            struct mp_step_window_phase wp;
            mp_step_window_phase(rd, j - i, &wp);
            free(rd);
            const char *pn = phase[i] == 1 ? "prefilldecodemix" : "decode_only";
            char label[200];
            snprintf(label, sizeof(label), "%s_chunk%ld_steps%zu_bs%lld_conc%lld", pn,
                     chunk[phase[i]]++, j - i, (long long)wp.avg_bs, (long long)wp.avg_conc);
            struct output *o = NULL;
            if ((rc = add_output(sp, &o)) != 0 || !o)
                break;
            o->nroots = j - i;
            o->roots = malloc(sizeof(size_t) * o->nroots);
            o->label = mp_strdup(label);
            o->subdir = mp_strdup(pn);
            if (!o->roots || !o->label || !o->subdir) {
                rc = mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
                break;
            }
            memcpy(o->roots, steps + i, sizeof(size_t) * o->nroots);
            i = j;
        }
        free(steps);
        free(phase);
    } else if (op->find_steady_state && nw) {
        size_t ws, we;
        if (mp_step_window(wd, nw, num_steps, res->regions, res->nregions, MP_WINDOW_MIXED,
                           &op->workload, &ws, &we) &&
            (rc = plan_window(sp, working, nw, ws, we, "mixed_steady_state", "")) != 0)
            goto out;
        if (mp_step_window(wd, nw, num_steps, res->regions, res->nregions, MP_WINDOW_DECODE_ONLY,
                           NULL, &ws, &we) &&
            (rc = plan_window(sp, working, nw, ws, we, "decode_only_steady_state", "")) != 0)
            goto out;
        if (mp_step_window(wd, nw, num_steps, res->regions, res->nregions,
                           MP_WINDOW_MAX_PREFILLDECODE, NULL, &ws, &we) &&
            (rc = plan_window(sp, working, nw, ws, we, "prefilldecode_steady_state", "")) != 0)
            goto out;
    }
out:
    free(working);
    free(wd);
    return rc;
}

static char *join_path(const char *dir, const char *sub, const char *name)
{
    char *d = mp_fs_join(dir, sub);
    char *r = d ? mp_fs_join(d, name) : NULL;
    free(d);
    return r;
}

static int write_file(const char *path, const void *p, size_t n, struct mp_diag *d)
{
    int rc = mp_fs_write_atomic(path, p, n, d);
    if (rc)
        mp_diag_set_file(d, path);
    return rc;
}

/* the step roots: annotations, else a repeating call pattern */
static int split_roots(struct split *sp, const char *path, struct mp_trace_split_result *res,
                       struct mp_diag *d)
{
    int rc = find_roots(sp, res);
    if (rc != 0)
        return rc;
    if (sp->nroots == 0) {
        free(sp->roots);
        free(sp->r);
        free(sp->details);
        sp->roots = NULL;
        sp->r = NULL;
        sp->details = NULL;
        if ((rc = generic_roots(sp)) != 0)
            return rc;
        res->nroots = sp->nroots;
    }
    if (sp->nroots == 0) {
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_ENOTFOUND,
                           "no inference step annotations (vLLM execute_context_..., SGLang "
                           "step[...], ATOM prefill[...]/decode[...]) among the user_annotation "
                           "events, and no repeating call pattern to split at");
    }
    return 0;
}

/* output i's entry: its events, steps, phase and output path */
static int split_entry(struct split *sp, struct selection *x, size_t i, const char *base,
                       int64_t **batches, struct mp_trace_split_entry *e)
{
    struct mp_diag *d = sp->d;
    struct output *o = &sp->out[i];
    size_t nb = 0;
    e->idx = o->idx;
    if (select_output(sp, x, o, (uint32_t)i + 1, e, batches, &nb) != 0)
        return mp_diag_set(d, MP_ENOMEM, "out of memory selecting events");
    e->nsteps = o->nroots;
    e->steps = malloc(sizeof(*e->steps) * (o->nroots ? o->nroots : 1));
    e->step_names = calloc(o->nroots ? o->nroots : 1, sizeof(char *));
    if (!e->steps || !e->step_names)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    for (size_t s = 0; s < o->nroots; s++) {
        e->steps[s] = sp->details[o->roots[s]];
        e->step_names[s] = mp_strdup(str_of(sp->s, sp->r[o->roots[s]].name));
    }
    bool structured = o->label != NULL || o->nroots > 1;
    if (structured && nb == o->nroots)
        for (size_t s = 0; s < nb; s++)
            e->steps[s].batch_size = (*batches)[s];
    mp_step_window_phase(e->steps, e->nsteps, &e->phase);
    struct mp_buf nm;
    mp_buf_init(&nm, 0);
    output_name(sp, o, e, base, &nm);
    e->output_path = join_path(sp->o->out_dir, o->subdir, mp_buf_cstr(&nm));
    mp_buf_fini(&nm);
    if (!e->output_path)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    return 0;
}

/* second pass: keep the text of every selected event */
static int split_copy_text(struct split *sp, const char *path)
{
    sp->selected = calloc(sp->s->n ? sp->s->n : 1, 1);
    sp->raw_off = malloc(sizeof(size_t) * (sp->s->n ? sp->s->n : 1));
    sp->raw_len = malloc(sizeof(uint32_t) * (sp->s->n ? sp->s->n : 1));
    if (!sp->selected || !sp->raw_off || !sp->raw_len)
        return mp_diag_set(sp->d, MP_ENOMEM, "out of memory");
    for (size_t i = 0; i < sp->nout; i++)
        for (size_t j = 0; j < sp->out[i].nevents; j++) {
            /* the first pass selected events of its store */
            MP_ASSERT(sp->out[i].events[j] < sp->s->n);
            sp->selected[sp->out[i].events[j]] = 1;
        }
    struct mp_trace_parse_opts po = {.on_event = copy_event, .on_meta = copy_meta, .user = sp};
    return mp_trace_parse_file(path, &po, NULL, sp->d);
}

/* every output's trace, then execution_details.json and .csv */
static int split_write(struct split *sp, struct mp_trace_split_result *res, struct mp_buf *doc)
{
    const struct mp_trace_split_opts *opts = sp->o;
    struct mp_diag *d = sp->d;
    int rc = mp_fs_mkdirs(opts->out_dir, d);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < sp->nout; i++) {
        struct output *o = &sp->out[i];
        if (o->subdir && *o->subdir) {
            char *sub = join_path(opts->out_dir, o->subdir, NULL);
            rc = sub ? mp_fs_mkdirs(sub, d) : MP_ENOMEM;
            free(sub);
            if (rc)
                return rc;
        }
        if ((rc = render_output(sp, o)) != 0)
            return mp_diag_set(d, rc, "out of memory compressing %s", res->entries[i].output_path);
        if ((rc = write_file(res->entries[i].output_path, o->gz.data, o->gz.len, d)) != 0)
            return rc;
        mp_buf_fini(&o->gz);
    }
    mp_buf_reset(doc);
    json_details(doc, res);
    char *jp = join_path(opts->out_dir, NULL, "execution_details.json");
    rc = jp ? write_file(jp, doc->data, doc->len, d) : MP_ENOMEM;
    free(jp);
    if (rc)
        return rc;
    mp_buf_reset(doc);
    csv_details(doc, res);
    char *cp = join_path(opts->out_dir, NULL, "execution_details.csv");
    rc = cp ? write_file(cp, doc->data, doc->len, d) : MP_ENOMEM;
    free(cp);
    return rc;
}

static void split_fini(struct split *sp)
{
    for (size_t i = 0; i < sp->nout; i++) {
        free(sp->out[i].roots);
        free(sp->out[i].label);
        free(sp->out[i].subdir);
        free(sp->out[i].events);
        mp_buf_fini(&sp->out[i].text);
        mp_buf_fini(&sp->out[i].gz);
    }
    free(sp->out);
    free(sp->roots);
    free(sp->r);
    free(sp->details);
    free(sp->next);
    free(sp->by_thread);
    free(sp->meta);
    free(sp->selected);
    free(sp->raw_off);
    free(sp->raw_len);
    mp_buf_fini(&sp->arena);
    mp_i64map_fini(&sp->flow_head);
    mp_i64map_fini(&sp->gpu_head);
    mp_buf_fini(&sp->keys_before);
    mp_buf_fini(&sp->keys_after);
    mp_step_patterns_free(sp->pat);
    mp_trace_store_free(sp->s);
}

int mp_trace_split(const char *path, const struct mp_trace_split_opts *opts,
                   struct mp_trace_split_result *res, struct mp_diag *d)
{
    memset(res, 0, sizeof(*res));
    struct split sp = {.o = opts, .d = d};
    mp_i64map_init(&sp.flow_head);
    mp_i64map_init(&sp.gpu_head);
    mp_buf_init(&sp.keys_before, 0);
    mp_buf_init(&sp.keys_after, 0);
    mp_buf_init(&sp.arena, (size_t)1 << 40); /* bounded by the input's size */
    struct selection x = {0};
    int64_t *batches = NULL;
    char *base = NULL;
    struct mp_buf gz, doc;
    mp_buf_init(&gz, 0);
    mp_buf_init(&doc, 0);
    int rc = mp_step_patterns_new(&sp.pat);
    if (rc) {
        mp_diag_set(d, rc, "cannot compile the step annotation patterns");
        goto out;
    }
    struct mp_trace_store_opts so = {.keep_args = true,
                                     .keep_args_for = wants_dims,
                                     .on_progress = opts->on_progress,
                                     .user = opts->progress_user};
    if ((rc = mp_trace_store_load(path, &so, &sp.s, d)) != 0)
        goto out;
    res->events_in = sp.s->n;
    if ((rc = split_roots(&sp, path, res, d)) != 0)
        goto out;
    if ((rc = index_events(&sp)) != 0 || (rc = plan(&sp, res)) != 0)
        goto out;
    res->entries = calloc(sp.nout ? sp.nout : 1, sizeof(*res->entries));
    x.stamp = calloc(sp.s->n ? sp.s->n : 1, sizeof(uint32_t));
    base = base_name(path);
    if (!res->entries || !x.stamp || !base) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    res->n = sp.nout;
    for (size_t i = 0; i < sp.nout; i++)
        if ((rc = split_entry(&sp, &x, i, base, &batches, &res->entries[i])) != 0)
            goto out;
    if ((rc = split_copy_text(&sp, path)) != 0)
        goto out;
    rc = split_write(&sp, res, &doc);
out:
    split_fini(&sp);
    free(x.ev);
    free(x.stamp);
    free(x.corr);
    free(batches);
    free(base);
    mp_buf_fini(&gz);
    mp_buf_fini(&doc);
    if (rc)
        mp_trace_split_result_fini(res);
    return rc;
}

void mp_trace_split_result_fini(struct mp_trace_split_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->entries[i].output_path);
        free(r->entries[i].steps);
        if (r->entries[i].step_names)
            for (size_t s = 0; s < r->entries[i].nsteps; s++)
                free(r->entries[i].step_names[s]);
        free(r->entries[i].step_names);
    }
    free(r->entries);
    free(r->regions);
    memset(r, 0, sizeof(*r));
}
