/* TraceLens's graph-capture merge (`--capture_folder`, docs/tracelens-compat.md),
 * over event stores and trees.
 *
 * Per capture trace (loaded once, whatever the number of steps using it):
 * each StreamBeginCapture / StreamEndCapture pair gets a synthetic
 * "CaptureRoot" over the cpu_op / python_function subtrees starting inside
 * the window; its subtree (BFS, then stably by ts) and its launch calls are
 * kept. Per step annotation of the replay trace: the graph launches inside
 * it, the smallest captured batch size >= the step's, and per graph launch
 * one capture root (the only one, reused, or the i-th). The replayed GPU
 * events under the launch are aligned with the captured launches (by
 * position, a greedy forward scan, regrouping by name, or per-stream
 * queues), then the capture subtree is copied after the last event with
 * the graph launch's ts and dur, hung under the launch, and each replayed
 * kernel re-attached under its captured launch.
 *
 * Everything is planned first and applied at the end: TraceLens drops the
 * whole merge when one multi-stream graph cannot be aligned for lack of
 * kernel names, and so does this.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <magpie/trace_capture.h>
#include <magpie/trace_steps.h>

#define CAP_MAX_FILES 256

/* one captured launch / memcpy / memset call */
struct cap_launch {
    int32_t uid;
    const char *kname; /* args.kernel, else the event name */
    bool has_kernel;
    bool is_memcpy, is_memset; /* "Memcpy" / "Memset" in the event name */
};

struct cap_root {
    double ts, dur; /* of the synthetic CaptureRoot */
    int32_t *kids;  /* root events, trace order */
    size_t nkids;
    int32_t *ev; /* subtree by ts (stable over BFS); ids >= store n are roots */
    size_t nev;
    struct cap_launch *l; /* launches of the subtree, by ts */
    size_t nl;
};

struct cap_file {
    char *path;
    struct mp_trace_store *s;
    struct mp_trace_tree *t;
    int32_t *cparent; /* parent per event, root events re-parented to their CaptureRoot */
    struct cap_root *roots;
    size_t nroots;
    struct mp_intern *knames;
    int32_t *map;  /* scratch: capture id -> new uid, -1 */
    int32_t *conn; /* scratch: capture launch -> replayed GPU event, -1 */
};

/* one entry of execution_details.json */
struct cap_entry {
    int64_t bs;
    bool piecewise;
    char *path;
};

struct plan_ev {
    int32_t file, src; /* capture file, capture id (>= store n: a CaptureRoot) */
    double ts, dur;
};

struct plan {
    struct plan_ev *ev;
    int32_t *parent;
    uint8_t *cpu_root, *in_tree;
    size_t n, cap;
    int32_t (*moved)[2];
    size_t nm, capm;
    int32_t (*edges)[2];
    size_t ne, cape;
};

/* ---- small helpers ---- */

static const char *ev_name(const struct mp_trace_store *s, int32_t i)
{
    return s->name[i] >= 0 ? mp_intern_str(s->strings, s->name[i]) : "";
}

static bool cat_is(const struct mp_trace_store *s, int32_t i, const char *cat)
{
    return s->cat[i] >= 0 && strcmp(mp_intern_str(s->strings, s->cat[i]), cat) == 0;
}

static double ev_dur(const struct mp_trace_store *s, int32_t i)
{
    return (s->flags[i] & MP_EV_DUR) ? s->dur[i] : 0.0;
}

struct ts_pos {
    double ts;
    int32_t pos;
};

static int cmp_ts_pos(const void *a, const void *b)
{
    const struct ts_pos *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

/* Sorts v[0..n) stably by ts[] of each entry (ts looked up by callback). */
static int sort_by_ts(int32_t *v, size_t n, double (*ts_of)(const void *, int32_t), const void *ctx)
{
    if (n < 2)
        return 0;
    struct ts_pos *o = malloc(n * sizeof(*o));
    int32_t *tmp = malloc(n * sizeof(int32_t));
    if (!o || !tmp) {
        free(o);
        free(tmp);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        o[i] = (struct ts_pos){ts_of(ctx, v[i]), (int32_t)i};
    qsort(o, n, sizeof(*o), cmp_ts_pos);
    for (size_t i = 0; i < n; i++)
        tmp[i] = v[o[i].pos];
    memcpy(v, tmp, n * sizeof(int32_t));
    free(o);
    free(tmp);
    return 0;
}

// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int push_i32(int32_t **v, size_t *n, size_t *cap, int32_t x)
{
    if (MP_GROW(*v, *cap, *n + 1, 64))
        return MP_ENOMEM;
    (*v)[(*n)++] = x;
    return 0;
}

/* ---- capture traces ---- */

struct keep_ctx {
    const struct mp_capture_opts *o;
};

static bool keep_capture_args(const struct mp_trace_event *ev, void *user)
{
    const struct keep_ctx *k = user;
    if ((ev->flags & MP_EV_CAT) &&
        ((ev->cat.n == 12 && memcmp(ev->cat.p, "cuda_runtime", 12) == 0) ||
         (ev->cat.n == 11 && memcmp(ev->cat.p, "cuda_driver", 11) == 0)))
        return true;
    return !k->o->keep_args_for || k->o->keep_args_for(ev, k->o->user);
}

static double cap_ts(const void *ctx, int32_t i)
{
    const struct cap_file *f = ctx;
    if ((size_t)i >= f->s->n)
        return f->roots[(size_t)i - f->s->n].ts;
    return f->s->ts[i];
}

/* ts and end of capture id i (a CaptureRoot for ids >= n) */
static void cap_span(const struct cap_file *f, int32_t i, double *ts, double *te)
{
    if ((size_t)i >= f->s->n) {
        const struct cap_root *r = &f->roots[(size_t)i - f->s->n];
        *ts = r->ts;
        *te = r->ts + r->dur;
        return;
    }
    *ts = f->s->ts[i];
    *te = f->s->ts[i] + ev_dur(f->s, i);
}

static void cap_file_free(struct cap_file *f)
{
    if (!f)
        return;
    for (size_t r = 0; r < f->nroots; r++) {
        free(f->roots[r].kids);
        free(f->roots[r].ev);
        free(f->roots[r].l);
    }
    free(f->roots);
    free(f->cparent);
    free(f->map);
    free(f->conn);
    mp_intern_free(f->knames);
    mp_trace_tree_free(f->t);
    mp_trace_store_free(f->s);
    free(f->path);
    free(f);
}

/* Children of capture id u as TraceLens lists them: a CaptureRoot's root
 * events, else the tree's children still attached to u. */
static int cap_children(const struct cap_file *f, int32_t u, int32_t **v, size_t *n, size_t *cap)
{
    *n = 0;
    if ((size_t)u >= f->s->n) {
        const struct cap_root *r = &f->roots[(size_t)u - f->s->n];
        for (size_t k = 0; k < r->nkids; k++)
            if (push_i32(v, n, cap, r->kids[k]))
                return MP_ENOMEM;
        return 0;
    }
    const struct mp_trace_tree *t = f->t;
    for (int32_t k = t->child_off[u]; k < t->child_off[u + 1]; k++)
        if (t->parent[t->child[k]] == u && push_i32(v, n, cap, t->child[k]))
            return MP_ENOMEM;
    return 0;
}

/* The subtree of CaptureRoot r (BFS, then stably by ts) and its launches. */
static int cap_root_subtree(struct cap_file *f, size_t r)
{
    struct cap_root *R = &f->roots[r];
    const struct mp_trace_store *s = f->s;
    size_t cap = 0, kn = 0, kcap = 0;
    int32_t *kids = NULL;
    int rc = push_i32(&R->ev, &R->nev, &cap, (int32_t)(s->n + r));
    for (size_t q = 0; q < R->nev && !rc; q++) {
        rc = cap_children(f, R->ev[q], &kids, &kn, &kcap);
        for (size_t k = 0; k < kn && !rc; k++)
            rc = push_i32(&R->ev, &R->nev, &cap, kids[k]);
    }
    free(kids);
    rc = rc ? rc : sort_by_ts(R->ev, R->nev, cap_ts, f);
    if (rc)
        return rc;
    R->l = calloc(R->nev ? R->nev : 1, sizeof(*R->l));
    if (!R->l)
        return MP_ENOMEM;
    struct mp_buf kb;
    mp_buf_init(&kb, 0);
    for (size_t q = 0; q < R->nev && !rc; q++) {
        int32_t i = R->ev[q];
        if ((size_t)i >= s->n)
            continue;
        uint8_t k = f->t->kind[i];
        if (k != MP_K_RUNTIME && k != MP_K_DRIVER)
            continue;
        const char *nm = ev_name(s, i);
        if (!mp_str_contains_ci(nm, "launch") && !mp_str_contains_ci(nm, "memcpy") &&
            !mp_str_contains_ci(nm, "memset"))
            continue;
        struct cap_launch *L = &R->l[R->nl++];
        L->uid = i;
        L->kname = nm;
        L->is_memcpy = strstr(nm, "Memcpy") != NULL;
        L->is_memset = strstr(nm, "Memset") != NULL;
        struct mp_strview v;
        if (s->args[i] && mp_trace_json_find((struct mp_strview){s->args[i], s->args_len[i]},
                                             "kernel", &v) == 0) {
            L->has_kernel = true;
            mp_buf_reset(&kb);
            int32_t id;
            if (v.n > 0 && v.p[0] == '"' && mp_trace_json_string(v, &kb) == 0)
                id = mp_intern_add(f->knames, mp_buf_cstr(&kb), kb.len);
            else
                id = mp_intern_add(f->knames, v.p, v.n);
            if (id < 0)
                rc = MP_ENOMEM;
            else
                L->kname = mp_intern_str(f->knames, id);
        }
    }
    mp_buf_fini(&kb);
    return rc;
}

/* TraceLens's find_capture_roots, then each root's subtree. */
static int cap_find_roots(struct cap_file *f)
{
    const struct mp_trace_store *s = f->s;
    int32_t *beg = NULL, *end = NULL;
    size_t nb = 0, ne = 0, cb = 0, ce = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        if (!cat_is(s, (int32_t)i, "cuda_runtime"))
            continue;
        const char *nm = ev_name(s, (int32_t)i);
        if (strstr(nm, "StreamBeginCapture"))
            rc = push_i32(&beg, &nb, &cb, (int32_t)i);
        else if (strstr(nm, "StreamEndCapture"))
            rc = push_i32(&end, &ne, &ce, (int32_t)i);
    }
    size_t nr = nb < ne ? nb : ne;
    f->cparent = rc ? NULL : malloc((s->n + nr + 1) * sizeof(int32_t));
    f->roots = rc ? NULL : calloc(nr ? nr : 1, sizeof(*f->roots));
    f->map = rc ? NULL : malloc((s->n + nr + 1) * sizeof(int32_t));
    f->conn = rc ? NULL : malloc((s->n + nr + 1) * sizeof(int32_t));
    if (!rc && (!f->cparent || !f->roots || !f->map || !f->conn))
        rc = MP_ENOMEM;
    for (size_t i = 0; !rc && i < s->n + nr; i++) {
        f->cparent[i] = i < s->n ? f->t->parent[i] : -1;
        f->map[i] = f->conn[i] = -1;
    }
    for (size_t r = 0; r < nr && !rc; r++) {
        double ts = s->ts[beg[r]] + ev_dur(s, beg[r]), te = s->ts[end[r]];
        struct cap_root *R = &f->roots[r];
        R->ts = ts;
        R->dur = te - ts;
        f->nroots = r + 1;
        size_t kcap = 0;
        for (size_t i = 0; i < s->n && !rc; i++) {
            if (s->ts[i] < ts || s->ts[i] + ev_dur(s, (int32_t)i) > te)
                continue;
            uint8_t k = f->t->kind[i];
            if (k != MP_K_CPU_OP && !(k == MP_K_PYFUNC))
                continue;
            int32_t p = f->cparent[i];
            if (p < 0)
                continue;
            double pts, pte;
            cap_span(f, p, &pts, &pte);
            if (pts >= ts && pte <= te)
                continue; /* its parent is inside the window too */
            rc = push_i32(&R->kids, &R->nkids, &kcap, (int32_t)i);
        }
        for (size_t k = 0; k < R->nkids; k++)
            f->cparent[R->kids[k]] = (int32_t)(s->n + r);
    }
    for (size_t r = 0; r < f->nroots && !rc; r++)
        rc = cap_root_subtree(f, r);
    free(beg);
    free(end);
    return rc;
}

static int cap_file_load(const char *path, const struct mp_capture_opts *o, struct cap_file **out,
                         struct mp_diag *d)
{
    struct cap_file *f = calloc(1, sizeof(*f));
    if (!f)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    struct keep_ctx kc = {o};
    struct mp_trace_store_opts so = {
        .keep_args = true, .keep_args_for = keep_capture_args, .user = &kc};
    struct mp_trace_tree_opts to = {.python_functions = true};
    f->path = mp_strdup(path);
    f->knames = mp_intern_new();
    int rc = f->path && f->knames ? 0 : mp_diag_set(d, MP_ENOMEM, "out of memory");
    rc = rc ? rc : mp_trace_store_load(path, &so, &f->s, d);
    rc = rc ? rc : mp_trace_tree_build(f->s, &to, &f->t, d);
    if (!rc && cap_find_roots(f))
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory finding capture roots in %s", path);
    if (rc) {
        cap_file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

/* ---- alignment (verify_subtree_events / align_streams) ---- */

static bool names_match(const struct cap_launch *c, const char *g)
{
    if ((c->is_memcpy && strstr(g, "Memcpy")) ||
        (c->is_memset && (strstr(g, "Memset") || strstr(g, "fillBuffer"))))
        return true;
    return strcmp(c->kname, g) == 0;
}

struct align {
    int32_t *g, *c; /* pairs: replayed GPU event, index into the launches */
    size_t n;
};

/* greedy forward scan: each replayed event takes the next launch that
 * matches it, skipping the others */
static bool align_greedy(const struct mp_trace_store *s, const struct cap_launch *l, size_t nl,
                         const int32_t *g, size_t ng, struct align *a)
{
    size_t ci = 0;
    for (size_t j = 0; j < ng; j++) {
        const char *gn = ev_name(s, g[j]);
        bool ok = false;
        while (ci < nl && !ok) {
            if (names_match(&l[ci], gn)) {
                a->g[a->n] = g[j];
                a->c[a->n++] = (int32_t)ci;
                ok = true;
            }
            ci++;
        }
        if (!ok)
            return false;
    }
    return true;
}

/* same counts, other order: per name, the k-th launch takes the k-th
 * replayed event of that name */
static int align_group(const struct mp_trace_store *s, const struct cap_launch *l, size_t nl,
                       const int32_t *g, size_t ng, struct align *a, bool *ok)
{
    struct mp_intern *names = mp_intern_new();
    int32_t *gid = malloc((ng ? ng : 1) * sizeof(int32_t));
    int32_t *cid = malloc((nl ? nl : 1) * sizeof(int32_t));
    size_t *cnt_c = NULL, *cnt_g = NULL, *start = NULL, *next = NULL;
    int32_t *byname = NULL;
    int rc = names && gid && cid ? 0 : MP_ENOMEM;
    *ok = false;
    for (size_t i = 0; i < nl && !rc; i++)
        if ((cid[i] = mp_intern_add(names, l[i].kname, strlen(l[i].kname))) < 0)
            rc = MP_ENOMEM;
    for (size_t j = 0; j < ng && !rc; j++) {
        const char *gn = ev_name(s, g[j]);
        if ((gid[j] = mp_intern_add(names, gn, strlen(gn))) < 0)
            rc = MP_ENOMEM;
    }
    size_t nn = rc ? 0 : (size_t)mp_intern_count(names);
    if (!rc) {
        cnt_c = calloc(nn + 1, sizeof(size_t));
        cnt_g = calloc(nn + 1, sizeof(size_t));
        start = calloc(nn + 1, sizeof(size_t));
        next = calloc(nn + 1, sizeof(size_t));
        byname = malloc((ng ? ng : 1) * sizeof(int32_t));
        if (!cnt_c || !cnt_g || !start || !next || !byname)
            rc = MP_ENOMEM;
    }
    if (!rc) {
        for (size_t i = 0; i < nl; i++)
            cnt_c[cid[i]]++;
        for (size_t j = 0; j < ng; j++)
            cnt_g[gid[j]]++;
        bool same = true;
        for (size_t k = 0; k < nn && same; k++)
            same = cnt_c[k] == cnt_g[k];
        if (same) {
            for (size_t k = 1; k <= nn; k++)
                start[k] = start[k - 1] + cnt_g[k - 1];
            for (size_t j = 0; j < ng; j++)
                byname[start[gid[j]] + next[gid[j]]++] = g[j];
            memset(next, 0, (nn + 1) * sizeof(size_t));
            for (size_t i = 0; i < nl; i++) {
                a->g[a->n] = byname[start[cid[i]] + next[cid[i]]++];
                a->c[a->n++] = (int32_t)i;
            }
            *ok = true;
        }
    }
    free(cnt_c);
    free(cnt_g);
    free(start);
    free(next);
    free(byname);
    free(gid);
    free(cid);
    mp_intern_free(names);
    return rc;
}

/* single stream: by position when counts and names agree, else the greedy
 * scan (counts differ) or the regrouping (order differs) */
static int align_single(const struct mp_trace_store *s, const struct cap_launch *l, size_t nl,
                        const int32_t *g, size_t ng, struct align *a, bool *ok)
{
    *ok = false;
    if (nl != ng) {
        *ok = align_greedy(s, l, nl, g, ng, a);
        if (*ok)
            mp_log(MP_LOG_INFO,
                   "capture merge: greedy alignment matched %zu of %zu captured launches", ng, nl);
        return 0;
    }
    for (size_t j = 0; j < ng; j++) {
        if (!l[j].has_kernel)
            continue; /* memcpy / memset, or no kernel name: not checked */
        if (strcmp(ev_name(s, g[j]), l[j].kname) != 0)
            return align_group(s, l, nl, g, ng, a, ok);
    }
    for (size_t j = 0; j < ng; j++) {
        a->g[a->n] = g[j];
        a->c[a->n++] = (int32_t)j;
    }
    *ok = true;
    return 0;
}

struct squeue {
    bool has;
    int64_t stream;
    int32_t *v;
    size_t head, n, cap;
};

static bool stream_of(const struct mp_trace_store *s, int32_t i, int64_t *stream)
{
    *stream = s->stream[i];
    return (s->flags[i] & MP_EV_STREAM) != 0;
}

static bool is_multistream(const struct mp_trace_store *s, const int32_t *g, size_t ng)
{
    int64_t s0, si;
    bool h0 = ng ? stream_of(s, g[0], &s0) : false;
    for (size_t j = 1; j < ng; j++) {
        bool hi = stream_of(s, g[j], &si);
        if (hi != h0 || (hi && si != s0))
            return true;
    }
    return false;
}

/* multi-stream: a FIFO per stream; each launch (program order) takes the
 * head of the stream whose head matches it, ties broken by the longest
 * run of following launches matching that stream's queue */
static int align_streams(const struct mp_trace_store *s, const struct cap_launch *l, size_t nl,
                         const int32_t *g, size_t ng, struct align *a, bool *ok)
{
    struct squeue *q = NULL;
    size_t nq = 0;
    int32_t *map = malloc((ng ? ng : 1) * sizeof(int32_t));
    int rc = map ? 0 : MP_ENOMEM;
    *ok = false;
    q = rc ? NULL : calloc(ng ? ng : 1, sizeof(*q));
    if (!rc && !q)
        rc = MP_ENOMEM;
    for (size_t j = 0; j < ng && !rc; j++) {
        int64_t st;
        bool has = stream_of(s, g[j], &st);
        size_t k = 0;
        while (k < nq && !(q[k].has == has && (!has || q[k].stream == st)))
            k++;
        if (k == nq) {
            q[nq].has = has;
            q[nq].stream = st;
            nq++;
        }
        map[j] = -1;
        rc = push_i32(&q[k].v, &q[k].n, &q[k].cap, (int32_t)j);
    }
    for (size_t ci = 0; ci < nl && !rc; ci++) {
        size_t best = nq;
        long best_run = -1;
        size_t ncand = 0;
        for (size_t k = 0; k < nq; k++) {
            if (q[k].head >= q[k].n || !names_match(&l[ci], ev_name(s, g[q[k].v[q[k].head]])))
                continue;
            ncand++;
            long run = 0;
            while (
                q[k].head + (size_t)run < q[k].n && ci + (size_t)run < nl &&
                names_match(&l[ci + (size_t)run], ev_name(s, g[q[k].v[q[k].head + (size_t)run]])))
                run++;
            if (run > best_run) {
                best_run = run;
                best = k;
            }
        }
        if (ncand == 0)
            continue;
        map[q[best].v[q[best].head++]] = (int32_t)ci;
    }
    bool all = !rc;
    for (size_t j = 0; j < ng && all; j++)
        all = map[j] >= 0;
    if (all) {
        for (size_t j = 0; j < ng; j++) {
            a->g[a->n] = g[j];
            a->c[a->n++] = map[j];
        }
        *ok = true;
    }
    for (size_t k = 0; k < nq; k++)
        free(q[k].v);
    free(q);
    free(map);
    return rc;
}

/* ---- the replay side ---- */

static double rep_ts(const void *ctx, int32_t i)
{
    return ((const struct mp_trace_store *)ctx)->ts[i];
}

/* GPU events of the graph launch's subtree (BFS), by ts */
static int graph_gpu_events(const struct mp_trace_tree *t, int32_t root, int32_t **out, size_t *n)
{
    int32_t *q = NULL;
    size_t nq = 0, cq = 0, cap = 0;
    int rc = push_i32(&q, &nq, &cq, root);
    *n = 0;
    for (size_t h = 0; h < nq && !rc; h++) {
        int32_t u = q[h];
        if (u != root && mp_kind_is_gpu(t->kind[u]))
            rc = push_i32(out, n, &cap, u);
        for (int32_t k = t->child_off[u]; k < t->child_off[u + 1] && !rc; k++)
            if (t->parent[t->child[k]] == u)
                rc = push_i32(&q, &nq, &cq, t->child[k]);
    }
    free(q);
    return rc ? rc : sort_by_ts(*out, *n, rep_ts, t->s);
}

/* ---- plan ---- */

static int plan_push_ev(struct plan *p, struct plan_ev e, int32_t parent, uint8_t cpu_root,
                        uint8_t in_tree)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 4096;
        struct plan_ev *ne = mp_reallocarray(p->ev, nc, sizeof(*ne));
        if (ne)
            p->ev = ne;
        int32_t *np = mp_reallocarray(p->parent, nc, sizeof(int32_t));
        if (np)
            p->parent = np;
        uint8_t *nr = realloc(p->cpu_root, nc);
        if (nr)
            p->cpu_root = nr;
        uint8_t *nt = realloc(p->in_tree, nc);
        if (nt)
            p->in_tree = nt;
        if (!ne || !np || !nr || !nt)
            return MP_ENOMEM;
        p->cap = nc;
    }
    p->ev[p->n] = e;
    p->parent[p->n] = parent;
    p->cpu_root[p->n] = cpu_root;
    p->in_tree[p->n] = in_tree;
    p->n++;
    return 0;
}

// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int push_pair(int32_t (**v)[2], size_t *n, size_t *cap, int32_t a, int32_t b)
{
    if (MP_GROW(*v, *cap, *n + 1, 1024))
        return MP_ENOMEM;
    (*v)[*n][0] = a;
    (*v)[*n][1] = b;
    (*n)++;
    return 0;
}

static void plan_fini(struct plan *p)
{
    free(p->ev);
    free(p->parent);
    free(p->cpu_root);
    free(p->in_tree);
    free(p->moved);
    free(p->edges);
}

/* Copies capture root R of file fi under graph launch groot (new uids from
 * n0 + p->n) and re-attaches the aligned replayed events. */
static int plan_graft(struct plan *p, size_t n0, struct cap_file *f, int32_t fi,
                      const struct cap_root *R, const struct mp_trace_store *rs, int32_t groot,
                      const struct align *a)
{
    const struct mp_trace_store *cs = f->s;
    size_t base = n0 + p->n;
    if (base + R->nev > INT32_MAX)
        return MP_ENOMEM;
    for (size_t k = 0; k < R->nev; k++)
        f->map[R->ev[k]] = (int32_t)(base + k);
    for (size_t j = 0; j < a->n; j++)
        f->conn[R->l[a->c[j]].uid] = a->g[j];
    int32_t *kids = NULL;
    size_t kn = 0, kcap = 0;
    int rc = 0;
    double ts = rs->ts[groot], dur = ev_dur(rs, groot);
    for (size_t k = 0; k < R->nev && !rc; k++) {
        int32_t c = R->ev[k];
        bool croot = (size_t)c >= cs->n;
        int32_t par = croot ? groot : (f->cparent[c] >= 0 ? f->map[f->cparent[c]] : -1);
        if (k == 0)
            par = groot; /* the subtree's first event hangs under the launch */
        rc = plan_push_ev(p, (struct plan_ev){fi, c, ts, dur}, par, croot ? 0 : f->t->cpu_root[c],
                          croot ? 0 : f->t->in_tree[c]);
    }
    rc = rc ? rc : push_pair(&p->edges, &p->ne, &p->cape, groot, (int32_t)base);
    for (size_t k = 0; k < R->nev && !rc; k++) {
        int32_t c = R->ev[k], nu = (int32_t)(base + k);
        if (f->conn[c] >= 0) { /* a connected launch keeps only its replayed event */
            rc = push_pair(&p->edges, &p->ne, &p->cape, nu, f->conn[c]);
            rc = rc ? rc : push_pair(&p->moved, &p->nm, &p->capm, f->conn[c], nu);
            continue;
        }
        rc = cap_children(f, c, &kids, &kn, &kcap);
        for (size_t q = 0; q < kn && !rc; q++)
            if (f->map[kids[q]] >= 0)
                rc = push_pair(&p->edges, &p->ne, &p->cape, nu, f->map[kids[q]]);
    }
    free(kids);
    for (size_t k = 0; k < R->nev; k++)
        f->map[R->ev[k]] = -1;
    for (size_t j = 0; j < a->n; j++)
        f->conn[R->l[a->c[j]].uid] = -1;
    return rc;
}

/* ---- applying the plan ---- */

static int32_t reintern(struct mp_trace_store *dst, const struct mp_trace_store *src, int32_t id)
{
    if (id < 0)
        return -1;
    return mp_intern_add(dst->strings, mp_intern_str(src->strings, id),
                         mp_intern_len(src->strings, id));
}

static int plan_apply(struct plan *p, struct cap_file **files, struct mp_trace_store *s,
                      struct mp_trace_tree *t)
{
    size_t n0 = s->n;
    if (mp_trace_store_reserve(s, n0 + p->n))
        return MP_ENOMEM;
    for (size_t k = 0; k < p->n; k++) {
        const struct plan_ev *e = &p->ev[k];
        const struct mp_trace_store *cs = files[e->file]->s;
        size_t i = n0 + k;
        s->ts[i] = e->ts;
        s->dur[i] = e->dur;
        s->args[i] = NULL;
        s->args_len[i] = 0;
        if ((size_t)e->src >= cs->n) { /* a CaptureRoot */
            s->ph[i] = 0;
            s->flags[i] = MP_EV_NAME | MP_EV_CAT | MP_EV_TS | MP_EV_DUR | MP_EV_ARGS;
            s->name[i] = mp_intern_add(s->strings, "CaptureRoot", 11);
            s->cat[i] = mp_intern_add(s->strings, "cuda_runtime", 12);
            s->pid[i] = s->tid[i] = -1;
            s->id[i] = s->external_id[i] = s->correlation[i] = s->stream[i] = 0;
            s->args[i] = mp_arena_strndup(s->arena, "{}", 2);
            s->args_len[i] = 2;
            if (s->name[i] < 0 || s->cat[i] < 0 || !s->args[i])
                return MP_ENOMEM;
            s->n++;
            continue;
        }
        int32_t c = e->src;
        s->ph[i] = cs->ph[c];
        s->flags[i] = cs->flags[c] | MP_EV_TS | MP_EV_DUR;
        s->name[i] = reintern(s, cs, cs->name[c]);
        s->cat[i] = reintern(s, cs, cs->cat[c]);
        s->pid[i] = reintern(s, cs, cs->pid[c]);
        s->tid[i] = reintern(s, cs, cs->tid[c]);
        if (s->name[i] < -1 || s->cat[i] < -1 || s->pid[i] < -1 || s->tid[i] < -1)
            return MP_ENOMEM;
        s->id[i] = cs->id[c];
        s->external_id[i] = cs->external_id[c];
        s->correlation[i] = cs->correlation[c];
        s->stream[i] = cs->stream[c];
        if (cs->args[c]) {
            s->args[i] = mp_arena_strndup(s->arena, cs->args[c], cs->args_len[c]);
            if (!s->args[i])
                return MP_ENOMEM;
            s->args_len[i] = cs->args_len[c];
        }
        s->n++;
    }
    /* a replayed GPU event takes the correlation id of its captured launch */
    for (size_t k = 0; k < p->nm; k++) {
        int32_t g = p->moved[k][0];
        const struct plan_ev *e = &p->ev[(size_t)p->moved[k][1] - n0];
        const struct mp_trace_store *cs = files[e->file]->s;
        s->correlation[g] = cs->correlation[e->src];
        s->flags[g] = (s->flags[g] & ~(uint32_t)MP_EV_CORR) | (cs->flags[e->src] & MP_EV_CORR);
    }
    struct mp_trace_tree_graft gr = {
        .n_new = p->n,
        .parent = p->parent,
        .cpu_root = p->cpu_root,
        .in_tree = p->in_tree,
        .moved = (const int32_t(*)[2])p->moved,
        .n_moved = p->nm,
        .edges = (const int32_t(*)[2])p->edges,
        .n_edges = p->ne,
    };
    return mp_trace_tree_graft(t, &gr);
}

/* ---- execution_details.json ---- */

static void entries_free(struct cap_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(e[i].path);
    free(e);
}

/* The index's entries (root: the parsed execution_details list, consumed):
 * those with a FULL / PIECEWISE mode and an integer batch size count for
 * the batch-size search; those whose file exists also get a path. */
static int read_details(const char *folder, const char *jpath, json_t *root, struct cap_entry **out,
                        size_t *n, struct mp_diag *d)
{
    if (!json_is_array(root)) {
        json_decref(root);
        mp_diag_set_file(d, jpath);
        return mp_diag_set(d, MP_EPARSE, "expected a list of {file, batch_size, mode} objects");
    }
    size_t m = json_array_size(root);
    struct cap_entry *e = calloc(m ? m : 1, sizeof(*e));
    if (!e) {
        json_decref(root);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        json_t *o = json_array_get(root, i);
        json_t *jf = json_object_get(o, "file"), *jb = json_object_get(o, "batch_size"),
               *jm = json_object_get(o, "mode");
        const char *mode = json_string_value(jm);
        if (!jf || !jb || !jm) {
            json_decref(root);
            entries_free(e, k);
            mp_diag_set_file(d, jpath);
            return mp_diag_set(d, MP_EPARSE, "entry %zu: expected keys file, batch_size, mode", i);
        }
        if (!mode || (strcmp(mode, "FULL") != 0 && strcmp(mode, "PIECEWISE") != 0) ||
            !(json_is_integer(jb) || json_is_boolean(jb))) {
            mp_log(MP_LOG_WARN, "capture merge: invalid batch size or mode, skipping entry %zu", i);
            continue;
        }
        e[k].bs = json_is_integer(jb) ? (int64_t)json_integer_value(jb) : json_is_true(jb);
        e[k].piecewise = mode[0] == 'P';
        const char *fn = json_string_value(jf);
        char *path = fn ? mp_fs_join(folder, fn) : NULL;
        struct stat st;
        if (path && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            e[k].path = path;
        } else {
            mp_log(MP_LOG_WARN, "capture merge: capture file not found, skipping: %s",
                   path ? path : "(not a string)");
            free(path);
        }
        k++;
    }
    json_decref(root);
    *out = e;
    *n = k;
    return 0;
}

/* ---- execution_details.json when absent (classify_graph_capture_trace) ---- */

static bool is_trace_name(const char *n)
{
    size_t l = strlen(n);
    return (l >= 5 && strcmp(n + l - 5, ".json") == 0) ||
           (l >= 8 && strcmp(n + l - 8, ".json.gz") == 0);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* vLLM's warm-up frames, "vllm/v1/worker/gpu_model_runner.py(<n>): _dummy_run..." */
static bool is_dummy_run(const char *n)
{
    static const char pfx[] = "vllm/v1/worker/gpu_model_runner.py(";
    if (strncmp(n, pfx, sizeof(pfx) - 1) != 0)
        return false;
    n += sizeof(pfx) - 1;
    if (*n < '0' || *n > '9')
        return false;
    while (*n >= '0' && *n <= '9')
        n++;
    return strncmp(n, "): _dummy_run", 13) == 0;
}

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* end of the JSON value starting at p (strings and nesting skipped) */
static const char *skip_value(const char *p, const char *e)
{
    int depth = 0;
    for (; p < e; p++) {
        if (*p == '"') {
            for (p++; p < e && *p != '"'; p++)
                if (*p == '\\')
                    p++;
            if (depth == 0)
                return p + 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (--depth <= 0)
                return p + 1;
        } else if (depth == 0 && (*p == ',')) {
            return p;
        }
    }
    return e;
}

struct dim_count {
    int64_t v;
    size_t n;
};

/* the first integer of each non-empty list in an Input Dims value */
// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int count_first_dims(struct mp_strview dims, struct dim_count **dc, size_t *n, size_t *cap)
{
    const char *p = dims.p, *e = dims.p + dims.n;
    p = skip_ws(p, e);
    if (p >= e || *p != '[')
        return 0;
    p++;
    while (p < e) {
        p = skip_ws(p, e);
        if (p >= e || *p == ']')
            break;
        const char *v = p, *ve = skip_value(p, e);
        if (*v == '[') {
            const char *q = skip_ws(v + 1, ve), *qs = q;
            if (q < ve && *q == '-')
                q++;
            const char *dg = q;
            while (q < ve && *q >= '0' && *q <= '9')
                q++;
            q = q > dg ? skip_ws(q, ve) : q;
            if (q > dg && q < ve && (*q == ',' || *q == ']')) {
                int64_t x = strtoll(qs, NULL, 10);
                size_t k = 0;
                while (k < *n && (*dc)[k].v != x)
                    k++;
                if (k == *n) {
                    if (MP_GROW(*dc, *cap, *n + 1, 64))
                        return MP_ENOMEM;
                    (*dc)[(*n)++] = (struct dim_count){x, 0};
                }
                (*dc)[k].n++;
            }
        }
        p = skip_ws(ve, e);
        if (p < e && *p == ',')
            p++;
    }
    return 0;
}

/* One trace's {file, batch_size, mode}: from its capture_<bs>_<mode>
 * annotation when there are as many as vLLM _dummy_run frames, else FULL
 * for at most one StreamBeginCapture (PIECEWISE otherwise) and the most
 * common first dimension of the cpu ops' Input Dims (null when none). */
static int classify_trace(const char *path, const char *base, const struct mp_step_patterns *pat,
                          json_t *arr, struct mp_diag *d)
{
    struct mp_trace_store *s = NULL;
    struct mp_trace_store_opts so = {.keep_args = true};
    int rc = mp_trace_store_load(path, &so, &s, d);
    if (rc)
        return rc;
    size_t ndummy = 0, nann = 0, ncap = 0;
    int32_t first_ann = -1;
    struct dim_count *dc = NULL;
    size_t ndc = 0, cdc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        const char *nm = ev_name(s, (int32_t)i);
        if (is_dummy_run(nm))
            ndummy++;
        int64_t bs;
        if (cat_is(s, (int32_t)i, "user_annotation") &&
            mp_step_parse_capture(pat, nm, &bs, NULL, 0)) {
            if (first_ann < 0 || s->ts[i] < s->ts[first_ann])
                first_ann = (int32_t)i;
            nann++;
        }
        if (cat_is(s, (int32_t)i, "cuda_runtime") && strstr(nm, "StreamBeginCapture"))
            ncap++;
        struct mp_strview dims;
        if (cat_is(s, (int32_t)i, "cpu_op") && s->args[i] &&
            mp_trace_json_find((struct mp_strview){s->args[i], s->args_len[i]}, "Input Dims",
                               &dims) == 0)
            rc = count_first_dims(dims, &dc, &ndc, &cdc);
    }
    json_t *o = json_object();
    json_t *bsv = NULL, *modev = NULL;
    if (!rc && nann > 0 && nann == ndummy) {
        int64_t bs = 0;
        char mode[256];
        mp_step_parse_capture(pat, ev_name(s, first_ann), &bs, mode, sizeof(mode));
        bsv = json_integer(bs);
        modev = json_string(mode);
    } else if (!rc) {
        size_t best = 0;
        for (size_t k = 1; k < ndc; k++)
            if (dc[k].n > dc[best].n)
                best = k;
        bsv = ndc ? json_integer(dc[best].v) : json_null();
        modev = json_string(ncap <= 1 ? "FULL" : "PIECEWISE");
    }
    if (!rc) {
        mp_log(MP_LOG_INFO, "capture merge: %s: batch_size %lld, mode %s (%s)", base,
               json_is_integer(bsv) ? (long long)json_integer_value(bsv) : -1LL,
               json_string_value(modev),
               nann > 0 && nann == ndummy ? "capture annotation" : "inferred");
        if (!o || !bsv || !modev || json_object_set_new(o, "file", json_string(base)) ||
            json_object_set_new(o, "batch_size", bsv) || json_object_set_new(o, "mode", modev) ||
            json_array_append_new(arr, o))
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        o = NULL;
        bsv = modev = NULL;
    }
    json_decref(o);
    json_decref(bsv);
    json_decref(modev);
    free(dc);
    mp_trace_store_free(s);
    return rc;
}

/* TraceLens's classify_graph_capture_trace, in memory: the index of the
 * folder's *.json / *.json.gz traces (sorted by name). TraceLens also
 * writes it to the folder; magpie leaves the folder as it is. */
static int infer_details(const char *folder, const struct mp_step_patterns *pat, json_t **out,
                         struct mp_diag *d)
{
    DIR *dir = opendir(folder);
    if (!dir) {
        mp_diag_set_file(d, folder);
        return mp_diag_set(d, MP_EIO, "cannot read the capture folder");
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *de; !rc && (de = readdir(dir)) != NULL;) {
        if (!is_trace_name(de->d_name))
            continue;
        if (MP_GROW(names, cap, n + 1, 16)) {
            rc = MP_ENOMEM;
            break;
        }
        if (!(names[n] = mp_strdup(de->d_name)))
            rc = MP_ENOMEM;
        else
            n++;
    }
    closedir(dir);
    if (!rc && n > 1)
        qsort(names, n, sizeof(char *), cmp_cstr);
    json_t *arr = rc ? NULL : json_array();
    if (!rc && !arr)
        rc = MP_ENOMEM;
    if (rc)
        rc = mp_diag_set(d, rc, "out of memory");
    if (!rc && n == 0) {
        mp_diag_set_file(d, folder);
        rc = mp_diag_set(d, MP_ENOTFOUND,
                         "no execution_details.json and no *.json / *.json.gz capture traces");
    }
    for (size_t k = 0; k < n && !rc; k++) {
        char *path = mp_fs_join(folder, names[k]);
        rc = path ? classify_trace(path, names[k], pat, arr, d)
                  : mp_diag_set(d, MP_ENOMEM, "out of memory");
        free(path);
    }
    for (size_t k = 0; k < n; k++)
        free(names[k]);
    free(names);
    if (rc) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

/* ---- the merge ---- */

struct step_root {
    int32_t uid;
    double ts, te;
    int64_t bs;
    bool has_bs;
};

static int cmp_step_root(const void *a, const void *b)
{
    const struct step_root *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->uid < y->uid ? -1 : (x->uid > y->uid);
}

/* TraceLens's find_execution_details: the annotation's batch size, else a
 * number after the first '_' */
static bool step_batch(const struct mp_step_patterns *pat, const char *name, int64_t *bs)
{
    struct mp_step st;
    if (mp_step_parse(pat, name, &st) != MP_STEP_UNMATCHED) {
        *bs = st.batch_size;
        return true;
    }
    const char *u = strchr(name, '_');
    if (!u)
        return false;
    const char *p = u + 1, *e = strchr(p, '_');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *q = p;
    while (q < p + len && *q == '-')
        q++;
    if (q == p + len)
        return false;
    for (const char *r = q; r < p + len; r++)
        if (*r < '0' || *r > '9')
            return false;
    char buf[32];
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, p, len);
    buf[len] = 0;
    *bs = strtoll(buf, NULL, 10);
    return true;
}

static int find_steps(const struct mp_trace_store *s, const struct mp_step_patterns *pat,
                      struct step_root **out, size_t *n)
{
    struct step_root *v = NULL;
    size_t nv = 0, cap = 0;
    int32_t ua = mp_intern_find(s->strings, "user_annotation", 15);
    for (int tier = 1; tier <= 2 && nv == 0; tier++) {
        for (size_t i = 0; i < s->n; i++) {
            if (ua < 0 || s->cat[i] != ua)
                continue;
            const char *nm = ev_name(s, (int32_t)i);
            if (mp_step_tier(pat, nm) != tier)
                continue;
            if (MP_GROW(v, cap, nv + 1, 64)) {
                free(v);
                return MP_ENOMEM;
            }
            struct step_root *r = &v[nv++];
            r->uid = (int32_t)i;
            r->ts = s->ts[i];
            r->te = s->ts[i] + ev_dur(s, (int32_t)i);
            r->has_bs = step_batch(pat, nm, &r->bs);
        }
    }
    if (nv > 1)
        qsort(v, nv, sizeof(*v), cmp_step_root);
    *out = v;
    *n = nv;
    return 0;
}

struct merge_ctx {
    struct mp_trace_store *s;
    struct mp_trace_tree *t;
    const struct mp_capture_opts *o;
    struct mp_capture_stats *st;
    struct cap_entry *ent;
    size_t nent;
    struct cap_file *files[CAP_MAX_FILES];
    size_t nfiles;
    struct plan plan;
    struct mp_diag *d;
};

static int get_file(struct merge_ctx *m, const char *path, int32_t *fi)
{
    for (size_t k = 0; k < m->nfiles; k++)
        if (strcmp(m->files[k]->path, path) == 0) {
            *fi = (int32_t)k;
            return 0;
        }
    if (m->nfiles == CAP_MAX_FILES)
        return mp_diag_set(m->d, MP_EINVAL, "more than %d capture traces", CAP_MAX_FILES);
    int rc = cap_file_load(path, m->o, &m->files[m->nfiles], m->d);
    if (rc)
        return rc;
    *fi = (int32_t)m->nfiles++;
    m->st->capture_files++;
    return 0;
}

/* The capture file for a step: smallest captured batch size >= bs, FULL
 * or PIECEWISE (both present: FULL only for a single graph launch). */
static const char *pick_capture(const struct merge_ctx *m, int64_t bs, size_t nlaunch)
{
    bool found = false;
    int64_t best = 0;
    for (size_t k = 0; k < m->nent; k++)
        if (m->ent[k].bs >= bs && (!found || m->ent[k].bs < best)) {
            best = m->ent[k].bs;
            found = true;
        }
    if (!found) {
        mp_log(MP_LOG_WARN, "capture merge: no capture batch size found for batch size %lld",
               (long long)bs);
        return NULL;
    }
    /* the last entry of a key wins, as in TraceLens's dict */
    const char *full = NULL, *piece = NULL;
    for (size_t k = 0; k < m->nent; k++) {
        if (m->ent[k].bs != best || !m->ent[k].path)
            continue;
        if (m->ent[k].piecewise)
            piece = m->ent[k].path;
        else
            full = m->ent[k].path;
    }
    if (full && piece)
        return nlaunch != 1 ? piece : full;
    if (!full && !piece)
        mp_log(MP_LOG_WARN, "capture merge: no capture trace for batch size %lld", (long long)best);
    return full ? full : piece;
}

static int merge_step(struct merge_ctx *m, const struct step_root *sr, const int32_t *launches,
                      size_t nlaunches)
{
    const struct mp_trace_store *s = m->s;
    int32_t *g = NULL;
    size_t ng = 0, nl = 0, lcap = 0;
    int32_t *gl = NULL;
    int rc = 0;
    for (size_t k = 0; k < nlaunches && !rc; k++) {
        int32_t i = launches[k];
        if (s->ts[i] >= sr->ts && s->ts[i] + ev_dur(s, i) <= sr->te)
            rc = push_i32(&gl, &nl, &lcap, i);
    }
    if (rc || nl == 0) {
        free(gl);
        return rc;
    }
    rc = sort_by_ts(gl, nl, rep_ts, s);
    m->st->graph_launches += nl;
    int32_t fi = -1;
    const char *path = NULL;
    if (!sr->has_bs)
        mp_log(MP_LOG_WARN, "capture merge: no batch size for step %s", ev_name(s, sr->uid));
    else
        path = pick_capture(m, sr->bs, nl);
    if (!rc && path)
        rc = get_file(m, path, &fi);
    if (rc || !path) {
        free(gl);
        return rc;
    }
    struct cap_file *f = m->files[fi];
    if (f->nroots != 1 && f->nroots != nl) {
        mp_log(MP_LOG_WARN,
               "capture merge: %zu capture roots for %zu graph launches in step %s, skipped",
               f->nroots, nl, ev_name(s, sr->uid));
        free(gl);
        return 0;
    }
    for (size_t k = 0; k < nl && !rc && !m->st->failed; k++) {
        const struct cap_root *R = &f->roots[f->nroots == 1 ? 0 : k];
        ng = 0;
        rc = graph_gpu_events(m->t, gl[k], &g, &ng);
        if (rc)
            break;
        if (ng == 0) {
            mp_log(MP_LOG_WARN, "capture merge: no GPU events under graph launch %d", gl[k]);
            continue;
        }
        size_t na = ng > R->nl ? ng : R->nl;
        struct align a = {malloc(na * sizeof(int32_t)), malloc(na * sizeof(int32_t)), 0};
        bool ok = false;
        if (!a.g || !a.c) {
            rc = MP_ENOMEM;
        } else if (is_multistream(s, g, ng)) {
            bool names = true;
            for (size_t j = 0; j < R->nl && names; j++)
                names = R->l[j].is_memcpy || R->l[j].is_memset || R->l[j].has_kernel;
            if (!names) {
                mp_log(MP_LOG_WARN,
                       "capture merge failed: multi-stream graph launch %d but the "
                       "captured launches carry no kernel names",
                       gl[k]);
                m->st->failed = true;
            } else {
                rc = align_streams(s, R->l, R->nl, g, ng, &a, &ok);
            }
        } else {
            rc = align_single(s, R->l, R->nl, g, ng, &a, &ok);
        }
        if (!rc && !ok && !m->st->failed)
            mp_log(MP_LOG_WARN,
                   "capture merge: %zu captured launches do not align with the %zu GPU events "
                   "of graph launch %d, skipped",
                   R->nl, ng, gl[k]);
        if (!rc && ok) {
            rc = plan_graft(&m->plan, s->n, f, fi, R, s, gl[k], &a);
            m->st->merged++;
            m->st->kernels_linked += a.n;
        }
        free(a.g);
        free(a.c);
    }
    free(g);
    free(gl);
    return rc;
}

int mp_capture_merge(struct mp_trace_store *s, struct mp_trace_tree *t,
                     const struct mp_capture_opts *o, struct mp_capture_stats *st,
                     struct mp_diag *d)
{
    struct mp_capture_stats st0;
    if (!st)
        st = &st0;
    memset(st, 0, sizeof(*st));
    if (t->n != s->n)
        return mp_diag_set(d, MP_EINVAL, "capture merge: tree and store differ");
    struct merge_ctx m = {.s = s, .t = t, .o = o, .st = st, .d = d};
    struct mp_step_patterns *pat = NULL;
    struct step_root *steps = NULL;
    int32_t *launches = NULL;
    size_t nsteps = 0, nlaunch = 0, lcap = 0;
    char *jpath = mp_fs_join(o->folder, "execution_details.json");
    struct stat sb;
    int rc = 0;
    if (!jpath) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    if (stat(o->folder, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        mp_diag_set_file(d, o->folder);
        rc = mp_diag_set(d, MP_EINVAL, "capture folder not found or not a directory");
        goto out;
    }
    if (mp_step_patterns_new(&pat)) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    json_t *details = NULL;
    if (stat(jpath, &sb) == 0) {
        json_error_t err;
        details = json_load_file(jpath, 0, &err);
        if (!details) {
            mp_diag_set_file(d, jpath);
            mp_diag_set_pos(d, -1, err.line, err.column);
            rc = mp_diag_set(d, MP_EPARSE, "%s", err.text);
            goto out;
        }
    } else {
        rc = infer_details(o->folder, pat, &details, d);
        if (rc)
            goto out;
        st->details_generated = true;
    }
    rc = read_details(o->folder, jpath, details, &m.ent, &m.nent, d);
    if (rc)
        goto out;
    rc = find_steps(s, pat, &steps, &nsteps);
    for (size_t i = 0; i < s->n && !rc; i++)
        if (mp_str_contains_ci(ev_name(s, (int32_t)i), "graphlaunch"))
            rc = push_i32(&launches, &nlaunch, &lcap, (int32_t)i);
    if (rc) {
        rc = mp_diag_set(d, rc, "out of memory");
        goto out;
    }
    st->exec_roots = nsteps;
    for (size_t k = 0; k < nsteps && !rc && !st->failed; k++)
        rc = merge_step(&m, &steps[k], launches, nlaunch);
    if (rc) {
        if (rc == MP_ENOMEM)
            mp_diag_set(d, rc, "out of memory merging capture traces");
        goto out;
    }
    if (st->failed) {
        st->merged = st->kernels_linked = 0;
        goto out;
    }
    if (m.plan.n > 0) {
        st->events_added = m.plan.n;
        rc = plan_apply(&m.plan, m.files, s, t);
        if (rc)
            rc = mp_diag_set(d, rc, "out of memory applying the capture merge");
    }
out:
    for (size_t k = 0; k < m.nfiles; k++)
        cap_file_free(m.files[k]);
    plan_fini(&m.plan);
    entries_free(m.ent, m.nent);
    mp_step_patterns_free(pat);
    free(steps);
    free(launches);
    free(jpath);
    return rc;
}
