/* magpie trace, graph-capture merge: TraceLens's `--capture_folder`
 * (docs/tracelens-compat.md). A CUDA/HIP-graph replay trace shows each replayed
 * kernel under one graph launch, without the CPU ops that launched it; the
 * capture trace(s) of the same graphs hold those ops. The merge copies the
 * captured CPU subtree under each graph launch of every step and re-attaches
 * each replayed kernel to the captured launch it aligns with, so the report
 * sees ops, shapes and kernel launchers as in an eager trace.
 */
#ifndef MAGPIE_TRACE_CAPTURE_H
#define MAGPIE_TRACE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>
#include <magpie/trace.h>
#include <magpie/trace_tree.h>

struct mp_capture_opts {
    const char *folder; /* holds execution_details.json and the capture traces */
    /* args kept from the capture traces' events, as for the replay store
     * (NULL = all); runtime and driver calls always keep theirs (kernel
     * names for the alignment) */
    bool (*keep_args_for)(const struct mp_trace_event *ev, void *user);
    void *user;
};

struct mp_capture_stats {
    size_t exec_roots;      /* step annotations of the replay trace */
    size_t graph_launches;  /* graph launches inside them */
    size_t merged;          /* graph launches merged */
    size_t events_added;    /* copied capture events */
    size_t kernels_linked;  /* replayed GPU events given a captured launch */
    size_t capture_files;   /* capture traces loaded */
    bool details_generated; /* execution_details.json was absent and inferred */
    bool failed;            /* multi-stream graph without kernel names: nothing merged */
};

/* Merges the capture traces of o->folder into the replay store s and its
 * tree t (built with python_functions): events are appended to s (new
 * indices after the last one) and grafted into t. The replay tree is left
 * as it was when nothing can be merged or the merge fails as TraceLens's
 * does (st->failed). Returns 0 or a negative MP_E* code with d filled
 * (unreadable folder or capture trace, invalid execution_details.json). */
int mp_capture_merge(struct mp_trace_store *s, struct mp_trace_tree *t,
                     const struct mp_capture_opts *o, struct mp_capture_stats *st,
                     struct mp_diag *d);

#endif
