/* magpie trace tree: TraceLens's view of a trace (docs/tracelens-compat.md).
 *
 * Built over an event store: a host call-stack tree per (pid, tid) of
 * cpu_op / cuda_runtime / cuda_driver (and optionally python_function)
 * events, GPU events (kernel, gpu_memcpy, gpu_memset) attached under the
 * runtime call that launched them (ac2g flows, or the shared link id of a
 * graph launch), and the kernel launcher of every GPU event. TraceLens's
 * quirks are reproduced on purpose (stable sort by ts only, 1 µs "bleed"
 * tolerance, launches without flows left unlinked, `execute` never a
 * launcher).
 */
#ifndef MAGPIE_TRACE_TREE_H
#define MAGPIE_TRACE_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/trace.h>

enum mp_ev_kind {
    MP_K_OTHER = 0,
    MP_K_CPU_OP,
    MP_K_RUNTIME,
    MP_K_DRIVER,
    MP_K_PYFUNC,
    MP_K_KERNEL,
    MP_K_MEMCPY,
    MP_K_MEMSET,
    MP_K_USER_ANNOT, /* user_annotation */
    MP_K_GPU_ANNOT,  /* gpu_user_annotation */
    MP_K_AC2G,
};

static inline bool mp_kind_is_gpu(uint8_t k)
{
    return k == MP_K_KERNEL || k == MP_K_MEMCPY || k == MP_K_MEMSET;
}

struct mp_trace_tree {
    const struct mp_trace_store *s; /* borrowed; must outlive the tree */
    size_t n;                       /* == s->n */
    uint8_t *kind;                  /* enum mp_ev_kind */
    double *t_end;                  /* ts + dur, computed once (TraceLens rounding) */
    int32_t *parent;                /* -1 when none */
    int32_t *child_off;             /* children of i: child[child_off[i] .. child_off[i+1]) */
    int32_t *child;
    uint8_t *in_tree;   /* TraceLens's `tree` flag */
    uint8_t *cpu_root;  /* outermost cpu_op of its thread */
    int32_t *launcher;  /* GPU events: launcher uid (cpu_op or runtime), else -1 */
    uint8_t *comm;      /* GPU events named like a collective (nccl, rccl, ...) */
    int32_t *bwd_of;    /* forward op -> its backward node (evaluate_function), else -1 */
    int32_t *fwd_of;    /* backward node -> its forward op, else -1 */
    size_t n_fwd_bwd;   /* linked pairs */
    uint8_t *recompute; /* NULL unless mp_trace_tree_mark_recompute ran */
    size_t n_recompute_regions;
    bool link_by_correlation; /* linking key: correlation (true) or External id */
    bool python_functions;    /* built with python_function events in the host tree */
    bool has_cpu_ops;         /* any cpu_op / python_function event (else GPU-only trace) */
    size_t n_gpu, n_gpu_linked;
    size_t n_base;   /* events before the first mp_trace_tree_graft (== n when none): TraceLens
                        appends grafted cpu roots after the trace's own, in graft order */
    uint8_t *pseudo; /* NULL unless mp_trace_tree_insert_pseudo ran: 1 for its pseudo ops */
};

struct mp_trace_tree_opts {
    bool python_functions; /* put python_function events in the host tree */
    bool serial;           /* build on the calling thread only */
};

int mp_trace_tree_build(const struct mp_trace_store *s, const struct mp_trace_tree_opts *o,
                        struct mp_trace_tree **out, struct mp_diag *d);
void mp_trace_tree_free(struct mp_trace_tree *t);

/* A graft of copied events into a built tree (TraceLens's graph-capture
 * merge, src/trace/capture.c). The store has grown by n_new events since
 * the tree was built (indices t->n .. t->n + n_new - 1); parent[k],
 * cpu_root[k] and in_tree[k] describe new event t->n + k. moved lists
 * existing events given a new parent (replayed kernels re-attached to a
 * copied launch). edges lists (parent, child) pairs of every new or moved
 * child in the order they join their parent's children, after the parent's
 * remaining old children. All arrays are borrowed. */
struct mp_trace_tree_graft {
    size_t n_new;
    const int32_t *parent;
    const uint8_t *cpu_root;
    const uint8_t *in_tree;
    const int32_t (*moved)[2]; /* (event, new parent) */
    size_t n_moved;
    const int32_t (*edges)[2]; /* (parent, child) */
    size_t n_edges;
};

/* Applies g to t (arrays grown, children rebuilt, launchers recomputed).
 * Returns 0 or MP_ENOMEM / MP_EINVAL; t is unchanged on failure. */
int mp_trace_tree_graft(struct mp_trace_tree *t, const struct mp_trace_tree_graft *g);

/* TraceLens's inject_pseudo_op: the store has grown by n_new events since
 * the tree was last built or grafted (t->n .. t->n + n_new - 1); new event
 * t->n + k becomes a child of wrap[k]'s parent, appended after its other
 * children, and takes wrap[k] (an existing event with a parent, wrapped
 * once) as its only child, wrap[k] leaving that parent's children. As in
 * TraceLens, wrap[k]'s own parent link is left alone, so walks up from a
 * kernel (launchers, call stacks) go around the pseudo op while walks down
 * the children pass through it: children of a pseudo op are followed
 * whatever their parent (mp_trace_tree_is_child). Launchers are not
 * recomputed. Returns 0 or MP_ENOMEM / MP_EINVAL; t is unchanged on
 * failure. */
int mp_trace_tree_insert_pseudo(struct mp_trace_tree *t, const int32_t *wrap, size_t n_new);

/* TraceLens's inject_pseudo_op_wrap_children: new event t->n + k (the store
 * has grown by n_new events) becomes the only child of wrap[k] and the
 * parent of wrap[k]'s children; cpu roots below it stop being roots and
 * the new event becomes one (after all others, in order), and launchers
 * are recomputed (a wrapped launch with no cpu op above it now has the new
 * op as launcher). The wrapped events must be distinct and none inside
 * another's subtree. Returns 0 or MP_ENOMEM / MP_EINVAL; t is unchanged on
 * failure. */
int mp_trace_tree_wrap_children(struct mp_trace_tree *t, const int32_t *wrap, size_t n_new);

/* TraceLens's inject_pseudo_op_above_event: new event t->n + k (the store
 * has grown by n_new events) takes target[k]'s place among its parent's
 * children and becomes target[k]'s parent; launchers are recomputed. The
 * targets must be distinct and have a parent. Returns 0 or MP_ENOMEM /
 * MP_EINVAL; t is unchanged on failure. */
int mp_trace_tree_insert_above(struct mp_trace_tree *t, const int32_t *target, size_t n_new);

/* Whether c, listed among u's children, is walked as u's child: its parent
 * is u (a listed child re-attached elsewhere is stale), or u is a pseudo op. */
static inline bool mp_trace_tree_is_child(const struct mp_trace_tree *t, int32_t u, int32_t c)
{
    return t->parent[c] == u || (t->pseudo && t->pseudo[u]);
}

/* Appends the GPU events in the subtree of uid (TraceLens's gpu_events) to
 * *buf (grown with realloc; *cap updated). Returns the number appended or a
 * negative MP_E* code. */
long mp_trace_tree_gpu_events(const struct mp_trace_tree *t, int32_t uid, int32_t **buf, size_t *n,
                              size_t *cap);

/* Appends to *buf the backward nodes linked to uid or to any of its
 * descendants (TraceLens's get_subtree_bwd_events), ascending. Returns the
 * number appended or a negative MP_E* code. */
long mp_trace_tree_subtree_bwd(const struct mp_trace_tree *t, int32_t uid, int32_t **buf, size_t *n,
                               size_t *cap);

/* TraceLens's --detect_recompute: every python_function event whose name
 * holds both "torch/utils/checkpoint.py" and "recompute_fn" marks itself and
 * its whole subtree (GPU events included) in t->recompute. Meaningful only
 * on a tree built with python_functions. */
int mp_trace_tree_mark_recompute(struct mp_trace_tree *t);

/* Busy time of a set of GPU events: total length of the union of their
 * [ts, t_end) intervals (touching intervals merge), in TraceLens's order of
 * arithmetic. idx is left unchanged. */
double mp_trace_tree_busy(const struct mp_trace_tree *t, const int32_t *idx, size_t n);

/* True when a kernel name is a collective's (case-insensitive nccl, rccl or
 * cross_device_reduce), TraceLens's communication test
 * (TraceEventUtils.is_communication_string). The _n form takes a name that
 * is not NUL-terminated. */
bool mp_trace_is_comm_name(const char *name);
bool mp_trace_is_comm_name_n(const char *name, size_t n);

/* Name of event i ("" when absent). */
const char *mp_trace_tree_name(const struct mp_trace_tree *t, int32_t i);

#endif
