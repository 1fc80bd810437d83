/* TraceLens's gpu_timeline (docs/tracelens-compat.md, gpu_timeline): GPU events split into
 * computation, communication and memcpy, each merged into disjoint
 * intervals; exposed communication is what computation does not cover,
 * exposed memcpy what neither covers. All devices and streams are pooled. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/tracelens.h>

#include "tracelens_int.h"

struct iv {
    double s, e;
};

struct ivs {
    struct iv *v;
    size_t n, cap;
};

static int push(struct ivs *a, double s, double e)
{
    if (MP_GROW(a->v, a->cap, a->n + 1, 256))
        return MP_ENOMEM;
    a->v[a->n++] = (struct iv){s, e};
    return 0;
}

static int cmp_start(const void *a, const void *b)
{
    const struct iv *x = a, *y = b;
    return x->s < y->s ? -1 : (x->s > y->s ? 1 : 0);
}

/* Whether the merged intervals come out the same whatever the order of
 * equal starts: no NaN, no -0.0 (equal to +0.0 but printed apart), no end
 * before its start. */
static bool ties_harmless(const struct ivs *a)
{
    for (size_t i = 0; i < a->n; i++) {
        double s = a->v[i].s, e = a->v[i].e;
        if (!(e >= s) || (s == 0 && signbit(s)) || (e == 0 && signbit(e)))
            return false;
    }
    return true;
}

_Static_assert(sizeof(struct iv) == 16 && offsetof(struct iv, s) == 0,
               "mp_sort_rec16 sorts 16-byte records keyed at their start");

/* Sorts by start and merges touching or overlapping intervals in place.
 * The merge depends only on the starts' order when ties are harmless: then
 * any sort by start does, else the comparison sort of old. */
static int merge(struct ivs *a)
{
    if (a->n == 0)
        return 0;
    if (a->n > 64 && ties_harmless(a)) {
        if (mp_sort_rec16(a->v, a->n, MP_SORT_F64))
            return MP_ENOMEM;
    } else {
        qsort(a->v, a->n, sizeof(*a->v), cmp_start);
    }
    size_t w = 0;
    for (size_t i = 1; i < a->n; i++) {
        if (a->v[i].s <= a->v[w].e) {
            if (a->v[i].e > a->v[w].e)
                a->v[w].e = a->v[i].e;
        } else {
            a->v[++w] = a->v[i];
        }
    }
    a->n = w + 1;
    return 0;
}

static double length(const struct ivs *a)
{
    double t = 0.0;
    for (size_t i = 0; i < a->n; i++)
        t += a->v[i].e - a->v[i].s;
    return t;
}

/* out = a - b, both sorted and disjoint. */
static int subtract(const struct ivs *a, const struct ivs *b, struct ivs *out)
{
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        double cs = a->v[i].s, ce = a->v[i].e;
        while (j < b->n && b->v[j].e <= cs)
            j++;
        size_t k = j;
        while (k < b->n && b->v[k].s < ce) {
            if (b->v[k].s > cs && push(out, cs, b->v[k].s))
                return MP_ENOMEM;
            if (b->v[k].e > cs)
                cs = b->v[k].e;
            if (cs >= ce)
                break;
            k++;
        }
        if (cs < ce && push(out, cs, ce))
            return MP_ENOMEM;
    }
    return 0;
}

bool mp_report_is_comm_name(const char *name)
{
    return mp_trace_is_comm_name(name);
}

static bool is_rocclr_copy(const char *name)
{
    static const char *const copies[] = {
        "MEMORY_COPY_HOST_TO_DEVICE",         "MEMORY_COPY_DEVICE_TO_HOST",
        "MEMORY_COPY_DEVICE_TO_DEVICE",       "__amd_rocclr_copyBuffer",
        "__amd_rocclr_copyBufferAligned",     "__amd_rocclr_copyBufferRect",
        "__amd_rocclr_copyBufferRectAligned",
    };
    if (name[0] != 'M' && (name[0] != '_' || name[1] != '_')) /* no name of the list */
        return false;
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, ".kd") == 0)
        n -= 3;
    for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++)
        if (strlen(copies[i]) == n && strncmp(name, copies[i], n) == 0)
            return true;
    return false;
}

int mp_report_gpu_timeline_sel(const struct mp_trace_tree *t, bool include_unlinked, int recompute,
                               double micro_idle_thresh_us, struct mp_gpu_timeline *out,
                               size_t *n_out)
{
    memset(out, 0, sizeof(*out));
    *n_out = 0;
    struct ivs comp = {0}, comm = {0}, mem = {0}, all = {0}, x = {0}, y = {0}, z = {0};
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        uint8_t k = t->kind[i];
        if (!mp_kind_is_gpu(k) || (!include_unlinked && !t->in_tree[i]))
            continue;
        if (recompute >= 0 && (t->recompute ? t->recompute[i] : 0) != recompute)
            continue;
        (*n_out)++;
        double s = t->s->ts[i], e = t->t_end[i];
        const char *name = mp_trace_tree_name(t, (int32_t)i);
        struct ivs *dst = &comp;
        if (k == MP_K_MEMCPY || (k == MP_K_KERNEL && is_rocclr_copy(name)))
            dst = &mem;
        else if ((k == MP_K_KERNEL || k == MP_K_MEMSET) && t->comm[i])
            dst = &comm;
        rc = push(dst, s, e);
        if (!rc)
            rc = push(&all, s, e);
    }
    if (rc)
        goto out;
    rc = merge(&comp);
    rc = rc ? rc : merge(&comm);
    rc = rc ? rc : merge(&mem);
    rc = rc ? rc : merge(&all);
    if (rc || all.n == 0)
        goto out;
    out->total = all.v[all.n - 1].e - all.v[0].s;
    out->computation = length(&comp);
    out->total_comm = length(&comm);
    out->total_memcpy = length(&mem);
    out->busy = length(&all);
    rc = subtract(&comm, &comp, &x);
    if (!rc)
        out->exposed_comm = length(&x);
    if (!rc)
        rc = subtract(&mem, &comp, &y);
    if (!rc)
        rc = subtract(&y, &comm, &z);
    if (!rc)
        out->exposed_memcpy = length(&z);
    out->idle = out->total - out->busy;
    /* idle gaps between merged busy intervals, in time order */
    for (size_t i = 1; i < all.n && micro_idle_thresh_us >= 0; i++) {
        double gap = all.v[i].s - all.v[i - 1].e;
        if (gap < micro_idle_thresh_us)
            out->micro_idle += gap;
        else
            out->macro_idle += gap;
    }
out:
    free(comp.v);
    free(comm.v);
    free(mem.v);
    free(all.v);
    free(x.v);
    free(y.v);
    free(z.v);
    return rc;
}
