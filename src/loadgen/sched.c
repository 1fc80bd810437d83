/* The order in which the engine sends requests (docs/workloads.md).
 *
 * Without sessions it is the dataset's order, each at its precomputed
 * arrival time. With sessions a turn's arrival is known only when the
 * session's previous turn has ended (its end plus the think time, and with
 * a recorded schedule not before the recorded time), so the requests that
 * are due are kept in a heap by (arrival, index): the earliest first, and
 * among equal times the dataset's order, which keeps the first case's order
 * when every arrival is known from the start.
 */
#include <stdlib.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

static bool before(const struct loadgen_sched *s, size_t a, size_t b)
{
    uint64_t x = s->arrival[s->heap[a]], y = s->arrival[s->heap[b]];
    return x != y ? x < y : s->heap[a] < s->heap[b];
}

static void push(struct loadgen_sched *s, uint32_t idx)
{
    size_t i = s->n_heap++;
    s->heap[i] = idx;
    while (i && before(s, i, (i - 1) / 2)) {
        uint32_t t = s->heap[i];
        s->heap[i] = s->heap[(i - 1) / 2];
        s->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

int loadgen_sched_init(struct loadgen_sched *s, const struct mp_loadgen_dataset *ds,
                       uint64_t *arrival, const uint64_t *recorded, struct mp_diag *d)
{
    memset(s, 0, sizeof(*s));
    s->n = ds->n;
    s->arrival = arrival;
    s->recorded = recorded;
    if (!ds->prev)
        return 0;
    s->next = malloc(ds->n * sizeof(int32_t));
    s->heap = malloc(ds->n * sizeof(uint32_t));
    s->think_ns = malloc(ds->n * sizeof(uint64_t));
    if (!s->next || !s->heap || !s->think_ns) {
        loadgen_sched_fini(s);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ds->n; i++)
        s->next[i] = -1;
    for (size_t i = 0; i < ds->n; i++) {
        int32_t p = ds->prev[i];
        double th = ds->think_s ? ds->think_s[i] : 0;
        if (p >= (int32_t)i || p < -1 || (p >= 0 && s->next[p] >= 0) || !(th >= 0) || th > 86400) {
            loadgen_sched_fini(s);
            return mp_diag_set(d, MP_EINVAL,
                               "dataset: bad session link at prompt %zu (previous turn %d, "
                               "think time %g s)",
                               i, (int)p, th);
        }
        s->think_ns[i] = (uint64_t)(th * 1e9);
        if (p >= 0)
            s->next[p] = (int32_t)i;
        else
            push(s, (uint32_t)i);
    }
    return 0;
}

void loadgen_sched_fini(struct loadgen_sched *s)
{
    free(s->next);
    free(s->heap);
    free(s->think_ns);
    s->next = NULL;
    s->heap = NULL;
    s->think_ns = NULL;
}

bool loadgen_sched_peek(const struct loadgen_sched *s, size_t *idx, uint64_t *arrival)
{
    if (!s->heap) {
        if (s->pos >= s->n)
            return false;
        *idx = s->pos;
        *arrival = s->arrival[s->pos];
        return true;
    }
    if (!s->n_heap)
        return false;
    *idx = s->heap[0];
    *arrival = s->arrival[s->heap[0]];
    return true;
}

void loadgen_sched_pop(struct loadgen_sched *s)
{
    if (!s->heap) {
        s->pos++;
        return;
    }
    s->heap[0] = s->heap[--s->n_heap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->n_heap && before(s, l, m))
            m = l;
        if (r < s->n_heap && before(s, r, m))
            m = r;
        if (m == i)
            break;
        uint32_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

void loadgen_sched_ended(struct loadgen_sched *s, size_t idx, uint64_t end_ns)
{
    if (!s->next || s->next[idx] < 0)
        return;
    size_t j = (size_t)s->next[idx];
    uint64_t at = end_ns + s->think_ns[j];
    if (s->recorded && s->recorded[j] > at)
        at = s->recorded[j];
    s->arrival[j] = at;
    push(s, (uint32_t)j);
}
