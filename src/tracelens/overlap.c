/* Kernel overlap information of the TraceLens report (--include_overlap_info,
 * the *_kl_overlap sheets; docs/tracelens-compat.md, gpu_timeline).
 *
 * TraceLens finds overlapping GPU events once, in the sweep over the events
 * of the GPU timeline (linked ones, or all with --include_unlinked_kernels;
 * one sweep per is_recompute block under --detect_recompute): two events
 * overlap when they share >= 1 us and are not on the same stream (the
 * intended exclusion of kernels of one cpu_op never takes effect in
 * TraceLens, see sweep()). Each event keeps the others in a
 * Python set, and every later step walks those sets in CPython's table
 * order, which decides the order of names and the float sums; so the sets
 * (and the set of active events of the sweep, with its deletions) are
 * emulated here slot for slot.
 *
 * An op's overlap info is then computed over a list of its kernels: the
 * launcher tables use its direct kernels (UID order, collectives left out),
 * the unified table the GPU events of its subtree when the launcher pass
 * found no overlap. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

/* ---- CPython's set of ints (3.11, TraceLens's interpreter): open
 * addressing, 9 linear probes then perturbed jumps, deleted slots kept as
 * dummies (a later add takes the last dummy it passed), resized to 4x the
 * live count when 3/5 full ---- */
#define PYSET_LINEAR_PROBES 9
#define PYSET_PERTURB_SHIFT 5

enum { SLOT_EMPTY = 0, SLOT_FULL, SLOT_DUMMY };

struct pyset {
    int32_t *key;
    uint8_t *st;
    size_t mask, fill, used;
};

/* hash(n) == n for the small non-negative UIDs used here */
static size_t pyset_find(const struct pyset *ps, int32_t k, size_t *freeslot)
{
    size_t h = (size_t)k, perturb = h, i = h & ps->mask;
    if (freeslot)
        *freeslot = SIZE_MAX;
    for (;;) {
        size_t probes = i + PYSET_LINEAR_PROBES <= ps->mask ? PYSET_LINEAR_PROBES : 0;
        for (size_t j = 0; j <= probes; j++) {
            size_t at = i + j;
            if (ps->st[at] == SLOT_EMPTY || (ps->st[at] == SLOT_FULL && ps->key[at] == k))
                return at;
            if (ps->st[at] == SLOT_DUMMY && freeslot)
                *freeslot = at; /* CPython 3.11 keeps the last dummy passed */
        }
        perturb >>= PYSET_PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & ps->mask;
    }
}

static int pyset_resize(struct pyset *ps, size_t minused)
{
    size_t n = 8;
    while (n <= minused)
        n <<= 1;
    struct pyset nw = {.key = malloc(n * sizeof(int32_t)), .st = calloc(n, 1), .mask = n - 1};
    if (!nw.key || !nw.st) {
        free(nw.key);
        free(nw.st);
        return MP_ENOMEM;
    }
    for (size_t i = 0; ps->st && i <= ps->mask; i++) /* old table order, dummies dropped */
        if (ps->st[i] == SLOT_FULL) {
            size_t at = pyset_find(&nw, ps->key[i], NULL);
            nw.st[at] = SLOT_FULL;
            nw.key[at] = ps->key[i];
            nw.used++;
        }
    nw.fill = nw.used;
    free(ps->key);
    free(ps->st);
    *ps = nw;
    return 0;
}

static int pyset_add(struct pyset *ps, int32_t k)
{
    if (!ps->st && pyset_resize(ps, 0) != 0)
        return MP_ENOMEM;
    if (!ps->st || !ps->key) /* for the analyzer: resize made the table */
        return MP_ENOMEM;
    size_t freeslot;
    size_t at = pyset_find(ps, k, &freeslot);
    if (ps->st[at] == SLOT_FULL)
        return 0;
    if (freeslot != SIZE_MAX) { /* a dummy passed on the way: reused, fill unchanged */
        ps->st[freeslot] = SLOT_FULL;
        ps->key[freeslot] = k;
        ps->used++;
        return 0;
    }
    ps->st[at] = SLOT_FULL;
    ps->key[at] = k;
    ps->fill++;
    ps->used++;
    if (ps->fill * 5 < ps->mask * 3)
        return 0;
    return pyset_resize(ps, ps->used > 50000 ? ps->used * 2 : ps->used * 4);
}

static void pyset_discard(struct pyset *ps, int32_t k)
{
    if (!ps->st)
        return;
    size_t at = pyset_find(ps, k, NULL);
    if (ps->st[at] == SLOT_FULL) {
        ps->st[at] = SLOT_DUMMY;
        ps->used--;
    }
}

static void pyset_fini(struct pyset *ps)
{
    free(ps->key);
    free(ps->st);
    memset(ps, 0, sizeof(*ps));
}

int tl_pyset_replay(const int64_t *ops, size_t n, int32_t **out, size_t *nout)
{
    struct pyset ps = {0};
    int rc = 0;
    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (ops[i] >= 0)
            rc = pyset_add(&ps, (int32_t)ops[i]);
        else
            pyset_discard(&ps, (int32_t)(-ops[i] - 1));
    }
    int32_t *v = rc ? NULL : malloc((ps.used ? ps.used : 1) * sizeof(int32_t));
    if (!rc && !v)
        rc = MP_ENOMEM;
    for (size_t a = 0; !rc && ps.st && a <= ps.mask; a++)
        if (ps.st[a] == SLOT_FULL)
            v[(*nout)++] = ps.key[a];
    pyset_fini(&ps);
    if (rc) {
        free(v);
        *nout = 0;
        return rc;
    }
    *out = v;
    return 0;
}

/* ---- the sweep ---- */

/* Memory: three int32 per event, plus a set per overlapping GPU event and
 * an info per op whose kernels were looked at. */
struct tl_overlap {
    const struct mp_trace_tree *t;
    int32_t *set_of; /* per event: index in sets, -1 = overlaps nothing */
    struct pyset *sets;
    size_t nsets, capsets;
    int32_t *launch_of;       /* per event: its launcher-table info in infos, -1 = none */
    int32_t *unif_of;         /* per event: its unified-table info in infos, -1 = not computed */
    struct tl_ovinfo **infos; /* each allocated once: pointers stay valid */
    size_t ninfos, capinfos;
};

static const struct pyset empty_set;

static const struct pyset *set_of(const struct tl_overlap *ov, int32_t i)
{
    return ov->set_of[i] >= 0 ? &ov->sets[ov->set_of[i]] : &empty_set;
}

/* gives event i a set (none yet); 0 or MP_ENOMEM */
static int set_make(struct tl_overlap *ov, int32_t i)
{
    if (ov->set_of[i] >= 0)
        return 0;
    if (MP_GROW(ov->sets, ov->capsets, ov->nsets + 1, 256))
        return MP_ENOMEM;
    memset(&ov->sets[ov->nsets], 0, sizeof(ov->sets[0]));
    ov->set_of[i] = (int32_t)ov->nsets++;
    return 0;
}

/* a new zeroed info; its index in *idx */
static struct tl_ovinfo *new_info(struct tl_overlap *ov, int32_t *idx)
{
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    if (MP_GROW(ov->infos, ov->capinfos, ov->ninfos + 1, 256))
        return NULL;
    struct tl_ovinfo *in = calloc(1, sizeof(*in));
    if (!in)
        return NULL;
    ov->infos[ov->ninfos] = in;
    *idx = (int32_t)ov->ninfos++;
    return in;
}

struct point {
    double t;
    int type; /* 0 end, 1 start: ends first at equal times */
    int32_t uid;
};

static int cmp_point(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->type != y->type)
        return x->type - y->type;
    return x->uid < y->uid ? -1 : (x->uid > y->uid ? 1 : 0); /* stable: event order */
}

static int sweep(struct tl_overlap *ov, bool include_unlinked, int recompute)
{
    const struct mp_trace_tree *t = ov->t;
    const struct mp_trace_store *s = t->s;
    size_t np = 0;
    for (size_t i = 0; i < t->n; i++)
        if (mp_kind_is_gpu(t->kind[i]) && (include_unlinked || t->in_tree[i]) &&
            (recompute < 0 || (t->recompute ? t->recompute[i] : 0) == recompute) &&
            t->t_end[i] > s->ts[i])
            np += 2;
    if (np == 0)
        return 0;
    struct point *pt = malloc(np * sizeof(*pt));
    if (!pt)
        return MP_ENOMEM;
    np = 0;
    for (size_t i = 0; i < t->n; i++)
        if (mp_kind_is_gpu(t->kind[i]) && (include_unlinked || t->in_tree[i]) &&
            (recompute < 0 || (t->recompute ? t->recompute[i] : 0) == recompute) &&
            t->t_end[i] > s->ts[i]) {
            pt[np++] = (struct point){s->ts[i], 1, (int32_t)i};
            pt[np++] = (struct point){t->t_end[i], 0, (int32_t)i};
        }
    qsort(pt, np, sizeof(*pt), cmp_point);
    struct pyset active = {0};
    int rc = 0;
    for (size_t p = 0; p < np && !rc; p++) {
        int32_t u = pt[p].uid;
        if (pt[p].type == 0) {
            pyset_discard(&active, u);
            continue;
        }
        bool su = (s->flags[u] & MP_EV_STREAM) != 0;
        for (size_t a = 0; active.st && a <= active.mask && !rc; a++) {
            if (active.st[a] != SLOT_FULL)
                continue;
            int32_t v = active.key[a];
            if (su && (s->flags[v] & MP_EV_STREAM) && s->stream[u] == s->stream[v])
                continue;
            /* TraceLens means to skip pairs with the same nearest cpu_op
             * too, but looks the parents up among the GPU events only,
             * finds none, and so never skips: kernels of one op overlap */
            double os = s->ts[u] > s->ts[v] ? s->ts[u] : s->ts[v];
            double oe = t->t_end[u] < t->t_end[v] ? t->t_end[u] : t->t_end[v];
            if (oe - os < 1.0) /* TraceLens skips sub-microsecond overlaps */
                continue;
            rc = set_make(ov, u);
            rc = rc ? rc : set_make(ov, v);
            rc = rc ? rc : pyset_add(&ov->sets[ov->set_of[u]], v);
            rc = rc ? rc : pyset_add(&ov->sets[ov->set_of[v]], u);
        }
        rc = rc ? rc : pyset_add(&active, u);
    }
    pyset_fini(&active);
    free(pt);
    return rc;
}

/* ---- per-op info (TraceLens's _compute_overlap_info) ---- */

/* Python's round(x, 2): correctly rounded to two decimals */
static double pyround2(double x)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%.2f", x);
    return strtod(tmp, NULL);
}

struct ivl {
    double s, e;
};

static int cmp_ivl(const void *a, const void *b)
{
    const struct ivl *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return x->e < y->e ? -1 : (x->e > y->e ? 1 : 0);
}

static void info_fini(struct tl_ovinfo *in)
{
    free(in->names);
    free(in->det);
    memset(in, 0, sizeof(*in));
}

static int compute_info(const struct tl_overlap *ov, const int32_t *k, size_t nk,
                        struct tl_ovinfo *out)
{
    const struct mp_trace_tree *t = ov->t;
    const struct mp_trace_store *s = t->s;
    memset(out, 0, sizeof(*out));
    size_t nall = 0;
    for (size_t i = 0; i < nk; i++)
        nall += set_of(ov, k[i])->used;
    if (nall == 0)
        return 0; /* names, details and overlap_pct all None */
    double total = nk ? mp_trace_tree_busy(t, k, nk) : 0.0;
    /* per overlapping (kernel, event) pair in set order: its name group */
    const char **names = malloc(nall * sizeof(char *));
    struct tl_ovdet *det = calloc(nall, sizeof(*det));
    double *dsum = calloc(nall, sizeof(double)), *psum = calloc(nall, sizeof(double));
    size_t *cnt = calloc(nall, sizeof(size_t));
    struct ivl *iv = malloc(nall * sizeof(*iv));
    int rc = names && det && dsum && psum && cnt && iv ? 0 : MP_ENOMEM;
    size_t nn = 0;
    double total_ov = 0;
    struct mp_i64map byname;
    mp_i64map_init(&byname);
    for (size_t i = 0; i < nk && !rc; i++) {
        const struct pyset *ps = set_of(ov, k[i]);
        size_t ni = 0;
        for (size_t a = 0; ps->st && a <= ps->mask; a++) {
            if (ps->st[a] != SLOT_FULL)
                continue;
            int32_t v = ps->key[a];
            const char *nm = mp_trace_tree_name(t, v);
            /* names are interned: their id is the group key */
            const int64_t *gp = mp_i64map_get(&byname, s->name[v]);
            size_t g = gp ? (size_t)*gp : nn;
            if (!gp && mp_i64map_put(&byname, s->name[v], (int64_t)nn) != 0) {
                rc = MP_ENOMEM;
                break;
            }
            if (g == nn) {
                names[nn++] = nm;
                det[g].name = nm;
                det[g].has_dur = true;
                det[g].has_stream = tl_kernel_stream(s, v, &det[g].stream) == 0;
            }
            double os = s->ts[k[i]] > s->ts[v] ? s->ts[k[i]] : s->ts[v];
            double oe = t->t_end[k[i]] < t->t_end[v] ? t->t_end[k[i]] : t->t_end[v];
            double ot = oe - os > 0 ? oe - os : 0.0;
            double pct = total > 0 ? ot / total : 0.0;
            if (s->flags[v] & MP_EV_DUR)
                dsum[g] += s->dur[v];
            else
                det[g].has_dur = false;
            psum[g] += pyround2(pct);
            cnt[g]++;
            if (oe > os)
                iv[ni++] = (struct ivl){os, oe};
        }
        /* this kernel's overlapped time: the union of its overlaps */
        qsort(iv, ni, sizeof(*iv), cmp_ivl);
        double sum = 0;
        for (size_t a = 0; a < ni;) {
            double cs = iv[a].s, ce = iv[a].e;
            size_t b = a + 1;
            for (; b < ni && iv[b].s <= ce; b++)
                if (iv[b].e > ce)
                    ce = iv[b].e;
            sum += ce - cs;
            a = b;
        }
        total_ov += sum;
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    rc = rc ? rc : tl_pylist_repr(&b, names, nn);
    if (!rc) {
        out->names = mp_strdup(mp_buf_cstr(&b));
        if (!out->names)
            rc = MP_ENOMEM;
    }
    mp_buf_fini(&b);
    for (size_t g = 0; g < nn && !rc; g++) {
        det[g].dur = pyround2(dsum[g] / (double)cnt[g]);
        det[g].pct = pyround2(psum[g] / (double)cnt[g]);
    }
    if (!rc) {
        out->det = det;
        out->ndet = nn;
        det = NULL;
        out->has_pct = true;
        out->pct = pyround2(total > 0 ? total_ov / total : 0.0);
    } else {
        info_fini(out);
    }
    mp_i64map_fini(&byname);
    free(names);
    free(det);
    free(dsum);
    free(psum);
    free(cnt);
    free(iv);
    return rc;
}

int tl_overlap_new(const struct mp_trace_tree *t, bool include_unlinked, struct tl_overlap **out)
{
    *out = NULL;
    size_t n = t->n ? t->n : 1;
    struct tl_overlap *ov = calloc(1, sizeof(*ov));
    if (!ov)
        return MP_ENOMEM;
    ov->t = t;
    ov->set_of = malloc(n * sizeof(int32_t));
    ov->launch_of = malloc(n * sizeof(int32_t));
    ov->unif_of = malloc(n * sizeof(int32_t));
    int rc = ov->set_of && ov->launch_of && ov->unif_of ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        ov->set_of[i] = ov->launch_of[i] = ov->unif_of[i] = -1;
    if (!rc && t->recompute) { /* one timeline (and sweep) per is_recompute block */
        rc = sweep(ov, include_unlinked, 0);
        rc = rc ? rc : sweep(ov, include_unlinked, 1);
    } else if (!rc) {
        rc = sweep(ov, include_unlinked, -1);
    }
    /* launchers: their direct kernels in UID order, collectives left out */
    int32_t *cnt = rc ? NULL : calloc(n + 1, sizeof(int32_t));
    int32_t *lk = NULL;
    if (!rc && !cnt)
        rc = MP_ENOMEM;
    size_t total = 0;
    for (size_t i = 0; i < t->n && !rc; i++)
        if (t->launcher[i] >= 0 && !t->comm[i]) {
            cnt[t->launcher[i] + 1]++;
            total++;
        }
    if (!rc && !(lk = malloc((total ? total : 1) * sizeof(int32_t))))
        rc = MP_ENOMEM;
    for (size_t i = 0; i < t->n && !rc; i++)
        cnt[i + 1] += cnt[i];
    for (size_t i = 0; i < t->n && !rc; i++)
        if (t->launcher[i] >= 0 && !t->comm[i])
            lk[cnt[t->launcher[i]]++] = (int32_t)i;
    /* cnt[l] is now the end of launcher l's run; its start is cnt[l - 1] */
    for (size_t l = 0; l < t->n && !rc; l++) {
        size_t from = l ? (size_t)cnt[l - 1] : 0, to = (size_t)cnt[l];
        if (to == from)
            continue;
        struct tl_ovinfo *in = new_info(ov, &ov->launch_of[l]);
        rc = in ? compute_info(ov, lk + from, to - from, in) : MP_ENOMEM;
    }
    free(cnt);
    free(lk);
    if (rc) {
        tl_overlap_free(ov);
        return rc;
    }
    *out = ov;
    return 0;
}

void tl_overlap_free(struct tl_overlap *ov)
{
    if (!ov)
        return;
    for (size_t i = 0; i < ov->nsets; i++)
        pyset_fini(&ov->sets[i]);
    for (size_t i = 0; i < ov->ninfos; i++) {
        info_fini(ov->infos[i]);
        free(ov->infos[i]);
    }
    free(ov->sets);
    free(ov->infos);
    free(ov->set_of);
    free(ov->launch_of);
    free(ov->unif_of);
    free(ov);
}

static const struct tl_ovinfo none_info;

const struct tl_ovinfo *tl_overlap_launcher(const struct tl_overlap *ov, int32_t uid)
{
    return uid >= 0 && ov->launch_of[uid] >= 0 ? ov->infos[ov->launch_of[uid]] : &none_info;
}

/* the info over kernels k[0..nk), computed once into unif_of[slot] */
static int unif_info(struct tl_overlap *ov, int32_t slot, const int32_t *k, size_t nk,
                     const struct tl_ovinfo **out)
{
    if (ov->unif_of[slot] < 0) {
        struct tl_ovinfo *in = new_info(ov, &ov->unif_of[slot]);
        if (!in)
            return MP_ENOMEM;
        int rc = nk ? compute_info(ov, k, nk, in) : 0;
        if (rc)
            return rc;
    }
    *out = ov->infos[ov->unif_of[slot]];
    return 0;
}

int tl_overlap_unified(struct tl_overlap *ov, int32_t uid, const struct tl_ovinfo **out)
{
    *out = &none_info;
    if (uid < 0)
        return 0;
    const struct tl_ovinfo *l = tl_overlap_launcher(ov, uid);
    if (l->has_pct) {
        *out = l;
        return 0;
    }
    if (ov->unif_of[uid] >= 0) {
        *out = ov->infos[ov->unif_of[uid]];
        return 0;
    }
    /* no GPU events below: None, as the launcher pass left it */
    int32_t *buf = NULL;
    size_t bn = 0, cap = 0;
    long got = mp_trace_tree_gpu_events(ov->t, uid, &buf, &bn, &cap);
    int rc = got < 0 ? (int)got : unif_info(ov, uid, buf, bn, out);
    free(buf);
    return rc;
}

int tl_overlap_kernel(struct tl_overlap *ov, int32_t uid, int32_t kernel,
                      const struct tl_ovinfo **out)
{
    *out = &none_info;
    const struct tl_ovinfo *l = tl_overlap_launcher(ov, uid);
    if (l->has_pct) {
        *out = l;
        return 0;
    }
    if (kernel < 0)
        return 0;
    /* GPU events are never unified rows themselves: their slot holds the
     * info over the event alone */
    return unif_info(ov, kernel, &kernel, 1, out);
}

/* ---- the group cells ---- */

struct dpos {
    const struct tl_ovdet *d;
    size_t pos;
    struct tl_stats st;
};

static int cmp_dpos(const void *a, const void *b)
{
    const struct dpos *x = a, *y = b;
    if (x->st.sum != y->st.sum)
        return x->st.sum < y->st.sum ? -1 : 1;
    int c = strcmp(x->d->name, y->d->name);
    if (c)
        return c;
    return x->pos < y->pos ? -1 : (x->pos > y->pos ? 1 : 0); /* Python's sort is stable */
}

static int put_stream(struct mp_buf *b, const struct tl_ovdet *d)
{
    return d->has_stream ? mp_buf_printf(b, ", 'stream': %lld", (long long)d->stream)
                         : mp_buf_puts(b, ", 'stream': None");
}

static int details_cells(const struct tl_ovinfo *const *m, size_t n, struct mp_csv *csv,
                         struct mp_buf *cell)
{
    const struct tl_ovinfo *tmpl = NULL;
    for (size_t i = 0; i < n && !tmpl; i++)
        if (m[i]->ndet > 0)
            tmpl = m[i];
    if (!tmpl) {
        int rc = mp_csv_str(csv, "[]");
        return rc ? rc : mp_csv_str(csv, "");
    }
    size_t nd = tmpl->ndet, rows = 0;
    struct dpos *p = calloc(nd, sizeof(*p));
    double *v = malloc(nd * (n ? n : 1) * sizeof(double));
    int rc = p && v ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        if (m[i]->ndet != nd)
            continue; /* TraceLens skips lists of another length */
        for (size_t q = 0; q < nd; q++)
            v[q * n + rows] = m[i]->det[q].has_dur ? m[i]->det[q].dur : NAN;
        rows++;
    }
    for (size_t q = 0; q < nd && !rc; q++) {
        p[q].d = &tmpl->det[q];
        p[q].pos = q;
        rc = tl_stats(v + q * n, rows, 0, &p[q].st);
    }
    if (!rc)
        qsort(p, nd, sizeof(*p), cmp_dpos);
    mp_buf_reset(cell);
    rc = rc ? rc : mp_buf_putc(cell, '[');
    for (size_t q = 0; q < nd && !rc; q++) {
        rc = mp_buf_puts(cell, q ? ", {'name': " : "{'name': ");
        rc = rc ? rc : tl_pystr_repr(cell, p[q].d->name, strlen(p[q].d->name));
        rc = rc ? rc : put_stream(cell, p[q].d);
        rc = rc ? rc : mp_buf_puts(cell, ", 'overlap_pct': ");
        rc = rc ? rc : tl_pyfloat(cell, p[q].d->pct);
        rc = rc ? rc : mp_buf_printf(cell, ", 'count': %zu, 'total_duration_us': ", rows);
        rc = rc ? rc : tl_pyfloat(cell, p[q].st.sum);
        if (rows > 0)
            rc = rc ? rc : tl_duration_stats_repr(cell, &p[q].st);
        rc = rc ? rc : mp_buf_putc(cell, '}');
    }
    rc = rc ? rc : mp_buf_putc(cell, ']');
    rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
    /* the truncated copy: 64 characters of the name, the rounded mean */
    mp_buf_reset(cell);
    rc = rc ? rc : mp_buf_putc(cell, '[');
    for (size_t q = 0; q < nd && !rc; q++) {
        const struct tl_ovdet *d = p[q].d;
        rc = tl_trunc_detail(cell, q == 0, d->name, d->has_stream, (long long)d->stream,
                             p[q].st.mean);
    }
    rc = rc ? rc : mp_buf_putc(cell, ']');
    rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
    free(p);
    free(v);
    return rc;
}

int tl_overlap_cells(const struct tl_ovinfo *const *m, size_t n, bool rounded, struct mp_csv *csv,
                     struct mp_buf *cell)
{
    int rc = details_cells(m, n, csv, cell);
    double *v = malloc((n ? n : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (m[i]->has_pct)
            v[k++] = m[i]->pct;
    struct tl_stats st;
    rc = rc ? rc : tl_stats(v, k, 1, &st);
    free(v);
    double vals[] = {st.mean, st.median, st.std, st.min, st.max};
    for (int j = 0; j < 5 && !rc; j++) {
        bool present = k > 0 && (j != 2 || st.has_std);
        double x = vals[j];
        if (rounded && j == 2 && k > 0 && !present) { /* pandas fills a missing std with 0.0 */
            present = true;
            x = 0.0;
        }
        if (rounded && present)
            x = rint(x * 100.0) / 100.0; /* DataFrame.round(2) */
        rc = tl_csv_float(csv, cell, x, present);
    }
    return rc;
}

const char *tl_ovinfo_names(const struct tl_ovinfo *in)
{
    return in && in->names ? in->names : "";
}
