/* magpie replay: from a trace's bottleneck ops to runnable experiments
 * (`magpie trace replay`, docs/replay.md). The ops are the rows of the
 * TraceLens-compatible unified_perf_summary (one row per op name and
 * argument signature, ranked by kernel time as ops_summary ranks them);
 * each selected row's recorded arguments (Input Dims, Input type, Input
 * Strides, Concrete Inputs) are matched against a table of ATen schemas and
 * written as TraceLens's EventReplay IR, a standalone PyTorch reference in
 * the form `magpie analyze --type pytorch --reference` takes, a candidate
 * template and a compare config. With run set, the references are timed on
 * this machine's GPU by runtime/magpie_replay.py (the analyze runner's
 * timing) and the replay columns are filled.
 *
 * It does not guess values the trace does not hold: an argument the trace
 * left out (a tensor list recorded empty, an unknown type) makes the op
 * "not rebuilt", with the reason. */
#ifndef MAGPIE_REPLAY_H
#define MAGPIE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>
#include <magpie/roofline.h>

struct mp_replay_opts {
    const char *trace;    /* trace file (required) */
    const char *out_dir;  /* output directory (required) */
    const char *op;       /* keep rows of this op name only (NULL: all) */
    const char *category; /* keep rows whose op category is this (NULL: all) */
    const char *kernel;   /* keep rows of ops that launched this exact kernel name (NULL: all) */
    long row;             /* 1-based row of the ranking to keep alone (0: off) */
    /* CUDA/HIP-graph capture traces merged into the trace first (NULL: none) */
    const char *capture_folder;
    long top;                            /* rows kept after the filters (default 20; 0 = all) */
    const struct mp_roofline_arch *arch; /* roofline figures; NULL with arch_auto: from the trace */
    bool arch_auto;
    bool run;       /* time the references on this machine's GPU */
    bool warm_l2;   /* run: the same as l2 "warm" */
    const char *l2; /* run: state of the figure: "flushed", "warm", "idle", "cold", NULL/"auto" */
    double max_time_s;       /* run: sampling time per op of the CUDA-graph figure (<= 0: 5) */
    const char *runtime_dir; /* runtime/ (NULL: mp_kernel_runtime_find) */
    const char *python;      /* interpreter for run (NULL: $MAGPIE_PYTHON or python3) */
    double run_timeout_s;    /* per run of the helper (<= 0: 1800); past it the ops timed so far
                                are kept and run_failed is set */
    bool serial;             /* report on one thread */
    bool quiet;
};

void mp_replay_opts_defaults(struct mp_replay_opts *o);

/* One selected op row and what became of it. */
/* The L2 sizes (MiB) dirty bytes are worked out for: the helper takes the
 * largest not above its GPU's L2 */
#define MP_REPLAY_NGRID 16
#define MP_REPLAY_NLEVELS 3

struct mp_replay_dirty {
    double l2_mib;
    int n;                           /* levels */
    double bytes[MP_REPLAY_NLEVELS]; /* dirty bytes of each level, ascending */
    double share[MP_REPLAY_NLEVELS]; /* share of the op's calls at it */
};

struct mp_replay_op {
    int n;                                   /* 1-based number in the output (ref_<n>.py) */
    long rank;                               /* 1-based row in the unified_perf_summary ranking */
    char *name;                              /* op name as recorded ("aten::mm") */
    char *category;                          /* TraceLens op category */
    char *shape_key;                         /* Input Dims cell */
    char *dims, *types, *strides, *concrete; /* the recorded argument cells */
    long calls;                              /* operation_count */
    double trace_mean_us, trace_median_us, trace_sum_us; /* kernel time per call, from the trace */
    char *trace_kernels;                                 /* kernel names, ' | '-joined */
    /* roofline figures (cell text of the report, "" when unmodelled) */
    char *gflops, *data_mb, *flops_per_byte, *compute_spec, *roofline_bound, *roofline_us,
        *pct_roofline;
    char *schema; /* matched schema ("aten::mm(Tensor self, Tensor mat2)"), "" none */
    bool rebuilt; /* ref_<n>.py written */
    /* a TraceLens-split row ("aten::sort->KERNEL"): rebuilt as its whole op,
     * and --run times only the records of its one kernel (trace_kernels),
     * per launch, as the row counts them */
    bool one_kernel;
    bool in_ir;   /* an entry of event_replay_ir.json */
    char *reason; /* why not rebuilt / not in the IR ("" when both) */
    char *note;   /* remarks on the rebuild (values invented, device) */
    /* where the values of the tensors whose values matter (offsets, indices)
     * came from: "trace", "derived", "default", "" when none matter */
    char values_from[8];
    /* before the op in the trace (producer.c): the CPU op that launched the
     * GPU activity that ran last on the op's device and stream before the
     * op's first kernel, the most common over the op's calls (NULL: none
     * found), with its argument cells; the share of the op's calls it
     * preceded; the median idle gap on the stream (us; -1: none);
     * prev_calls: the op's calls with a kernel found in the trace */
    char *prev_op, *prev_dims, *prev_types, *prev_strides, *prev_concrete;
    double prev_share, prev_gap_us;
    long prev_calls;
    /* dirty L2 before the op in the trace (traffic.c): for each L2 size of
     * the grid, the bytes the ops before each call wrote on its stream
     * within the last that many bytes of their traffic, as up to
     * MP_REPLAY_NLEVELS levels with the share of calls at each; NULL: no
     * call with a kernel found */
    struct mp_replay_dirty *dirty; /* MP_REPLAY_NGRID entries */
    bool prev_rebuilt;             /* prev_<n>.py written (an ATen op magpie can rebuild) */
    /* replay (run) */
    bool replayed;
    /* per-call kernel time from the profiler's kernel records in the L2
     * state replay_l2, its CI; both states' medians; the CUDA-graph figure */
    double replay_median_us, replay_ci_lo_us, replay_ci_hi_us, ratio;
    double replay_flushed_us, replay_warm_us, replay_graph_us; /* 0: not measured */
    double replay_idle_us; /* the GPU drained before each call (L2 warm), 0: not measured */
    double replay_cold_us; /* L2 flushed, inputs read back, GPU drained; 0: not measured */
    /* the op's state (flushed or cold) with L2 emptied by reads only (all
     * clean) and by a rewrite (all dirty): the helper's probes, for the
     * note; 0: not measured */
    double replay_l2_clean_us, replay_l2_dirty_us;
    /* the "after" state: L2 emptied by reads, prev_<n>.py called, then the
     * op (its input wired to the producer's output when one matches);
     * 0: not measured */
    double replay_after_us;
    double replay_sm_mhz; /* runner's spin probe, 0 unknown */
    char replay_l2[12];   /* "flushed", "warm", "idle", "cold", "none" */
    long replay_samples;
    char *replay_kernels;
    int kernels_match; /* 1 same names, 0 differ, -1 unknown */
    char *replay_note;
    char *replay_clocks; /* nvidia-smi before/after */
};

struct mp_replay_result {
    struct mp_replay_op *ops;
    size_t n;
    size_t n_rows; /* rows in the ranking before selection */
    size_t n_rebuilt, n_in_ir;
    bool ran;           /* the replay ran on a GPU */
    bool run_failed;    /* the helper crashed or ran out of time (ops done before are kept) */
    char run_note[512]; /* why it did not run, or on what device it ran */
    char arch_name[64];
    /* with capture_folder: what the merge did ("" without one) */
    char capture_note[256];
};

/* Selects, writes DIR/{event_replay_ir.json, event_replay_skipped.json,
 * ref_<n>.py, cand_<n>.py, compare_<n>.yaml, replay_summary.csv,
 * replay_summary.json} and with o->run times the references. Returns 0 (the
 * run not happening for want of a GPU or torch is not an error: see
 * run_note), or MP_E* with d set (bad trace, bad selection, write failure). */
int mp_replay(const struct mp_replay_opts *o, struct mp_replay_result **out, struct mp_diag *d);
void mp_replay_result_free(struct mp_replay_result *r);

/* replay_summary.json's text (also what --json prints). */
int mp_replay_summary_json(const struct mp_replay_result *r, struct mp_buf *b);

#endif
