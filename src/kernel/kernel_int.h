/* Private declarations of the kernel module: the device abstraction the C
 * harness runs on (OpenCL through the ICD loader, CUDA through the driver
 * API, both loaded with dlopen so magpie needs neither at build time), the
 * kernel-signature parser, and helpers shared by the pipeline files. */
#ifndef MAGPIE_KERNEL_INT_H
#define MAGPIE_KERNEL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <magpie/config.h>
#include <magpie/kernel.h>

/* ---- kernel signatures ---- */

enum harg_elem { HE_FLOAT = 0, HE_DOUBLE, HE_HALF, HE_INT, HE_UINT, HE_LONG, HE_ULONG, HE_CHAR };

#define H_MAX_ARGS 32

struct harg {
    char name[64];
    enum harg_elem elem;
    bool pointer;
    bool is_const; /* pointer to const: an input */
};

struct hsig {
    char name[128];
    int nargs;
    struct harg args[H_MAX_ARGS];
};

/* Finds kernel `name` (or the first kernel when name is NULL) in source text
 * (OpenCL `__kernel void`, CUDA `__global__ void`) and parses its
 * parameters. 0, MP_ENOTFOUND or MP_EPARSE with a message in err. */
int kern_harness_parse_signature(const char *src, const char *name, struct hsig *sig, char *err,
                                 size_t errlen);
size_t kern_harness_elem_size(enum harg_elem e);
const char *kern_harness_elem_name(enum harg_elem e);

/* ---- devices ---- */

struct hdev;
struct hbuf;
struct hkern;

/* Launch geometry in work items (OpenCL global size / CUDA threads). */
struct hgeom {
    int ndim;
    size_t global[3];
    size_t local[3];
};

/* One scalar or buffer argument value. */
struct hval {
    struct hbuf *buf; /* pointer arguments */

    union {
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        float f32;
        double f64;
        unsigned char bytes[8];
    } s;

    size_t ssize;
};

/* The time limit (latency.max_time_s) stops sampling only once min_samples
 * are in: the statistics (CI, Mann-Whitney) need them, and a sample count
 * decided by how busy the machine is would make verdicts depend on load.
 * Sampling may run this many times max_time_s to reach min_samples; a kernel
 * that cannot stops there with min_samples_met false and a stop_reason saying
 * so. The C harness and runtime/magpie_runner.py use the same factor, and the
 * pipeline's child timeout allows for it. */
#define K_MIN_SAMPLES_GRACE 4

/* When the C harness stops sampling a kernel (the Python runner has the same
 * rule): noise <= max_noise or a noise plateau once min_samples and
 * min_time_ms are in, max_samples, the time limit once min_samples are in,
 * or K_MIN_SAMPLES_GRACE x the time limit. */
struct kern_stop_rule {
    int min_samples, max_samples;
    double min_time_ms, max_noise, max_time_s;
};

/* true when sampling stops after n samples (sum_ms in all, relative noise
 * nz, plateau from the plateau test) at elapsed_s; reason says why. */
bool kern_timing_stop(const struct kern_stop_rule *r, int n, double sum_ms, double nz, bool plateau,
                      double elapsed_s, char *reason, size_t len);

struct hdev_ops {
    const char *name; /* "opencl", "cuda" */
    int (*open)(struct hdev *dv, char *err, size_t len);
    void (*close)(struct hdev *dv);
    /* src: source text (OpenCL) or the path of a cubin/ptx (CUDA). */
    int (*build)(struct hdev *dv, const char *src, const char *kname, struct hkern **k, char *log,
                 size_t len);
    void (*kfree)(struct hkern *k);
    int (*alloc)(struct hdev *dv, size_t bytes, struct hbuf **b);
    void (*bfree)(struct hbuf *b);
    int (*write)(struct hdev *dv, struct hbuf *b, const void *src, size_t bytes);
    int (*read)(struct hdev *dv, struct hbuf *b, void *dst, size_t bytes);
    int (*fill)(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes);
    /* The same fill queued ahead of the next launch without waiting for it
     * (NULL: use fill). Timing uses it so the device is still busy with the
     * L2 flush when the start event and the kernel arrive: with an idle
     * device the host's launch latency falls inside the timed region. */
    int (*fill_async)(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes);
    /* Runs `batch` launches back to back; *ms = device time of the batch
     * (events), may be NULL when not timing. Waits for completion. */
    int (*launch)(struct hdev *dv, struct hkern *k, const struct hsig *sig, const struct hval *v,
                  const struct hgeom *g, int batch, double *ms);
    /* The power guard's clock probe (NULL: no guard on this device): queue a
     * one-thread spin of `cycles` SM clock cycles, between two events when
     * timed; spin_ms waits for the last timed one and gives its device time. */
    int (*spin)(struct hdev *dv, uint64_t cycles, bool timed);
    int (*spin_ms)(struct hdev *dv, double *ms);
};

struct hdev {
    const struct hdev_ops *ops;
    void *impl;
    char device_name[256];
    size_t l2_bytes; /* last-level cache size, 0 unknown */
    bool used_graph; /* the last timed batch was a CUDA graph replay */
    char err[512];   /* last error of an op */
};

/* The power guard of the harness's timing (pguard.c; the runner has the
 * same in Python): a clock probe before each sample, throttled samples
 * discarded, a cool-down grown until the samples run at the full clock. */
struct kern_pguard {
    bool on;
    double cyc_per_us, overhead_us, ref_mhz; /* calibration; reference clock */
    double ratio;                            /* cool-down, x the kernel's time */
    bool fixed;                              /* ratio given, not adapted */
    int discarded, since_step;
    bool recover, sustained;
    unsigned char at_max[64]; /* capped flags of probes at the largest ratio */
    int nat, at_pos;
    double recent[16]; /* unthrottled probes since the reference was checked */
    int nrecent;
    uint64_t probe;  /* cycles of this sample's probe */
    double last_mhz; /* clock it measured, 0 unknown */
    int streak;      /* low probes in a row */
    void *pending;   /* the caller's owner of the last kept sample */
    bool drop_prev;  /* judge: the caller removes pending's last sample */
};

/* Calibrates on dv when enabled and dv has a spin op; fixed_ratio < 0: adapt. */
int kern_pguard_setup(struct hdev *dv, struct kern_pguard *g, bool enabled, double fixed_ratio);
/* Queues the hold and the timed probe ahead of a sample of ~busy_us. */
int kern_pguard_pre(struct hdev *dv, struct kern_pguard *g, double busy_us);
/* After the sample: reads the probe into last_mhz. */
int kern_pguard_post(struct hdev *dv, struct kern_pguard *g);
/* false: the sample started capped, discard it (and the cool-down grows);
 * with drop_prev set, the sample kept before it (pending's) goes too. */
bool kern_pguard_judge(struct kern_pguard *g);
json_t *kern_pguard_json(const struct kern_pguard *g, const double *clocks, int n);

extern const struct hdev_ops kern_harness_opencl_ops;
extern const struct hdev_ops kern_harness_cuda_ops;

/* ---- the harness child ---- */

/* Runs a harness job (JSON file written by the pipeline) and writes the
 * result JSON. Returns a process exit status. */
int kern_harness_run_job(const char *job_path);

/* ---- pipeline helpers ---- */

/* Sets the latency fields of r from a runner/harness result object. */
void kern_timing_from_json(struct mp_kernel_timing *t, json_t *tj);
/* Whether a timed run counts as throttled: the clock after it well under
 * max_mhz, a hot GPU, a cap in >= 10 % of the monitor's busy samples (unless
 * the power guard dropped the capped samples), or a cap the guard could not
 * get under. */
bool kern_timing_throttled(const struct mp_kernel_timing *t, double max_mhz);
char *kern_strdup_or_null(const char *s);
/* The whole file (NUL-terminated, up to 1 GiB), its length in *len (may be
 * NULL); NULL when it cannot be read. */
char *kern_read_file(const char *path, size_t *len);
/* Appends s to the result's error list. */
void kern_add_error(struct mp_kernel_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Stages and reports (pipeline.c calls these). */

/* The runner's profile job: its candidate's calls inside this NVTX push/pop
 * range (ncu --nvtx --nvtx-include RANGE/), this many of them */
#define K_PROFILE_NVTX_RANGE "magpie_profile"
#define K_PROFILE_CALLS 3

/* What the performance stage profiles when magpie runs the kernel itself:
 * argv of the child (the harness or the Python runner with a job in mode
 * "profile"), and the NVTX range ncu is filtered to (NULL: every kernel of
 * the child; the harness launches only the candidate in that mode). */
struct kern_perf_target {
    const char *const *argv;
    const char *nvtx_range;
};

/* child NULL: the kernel's testcase commands */
int kern_stage_performance(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                           struct mp_kernel_result *r, const struct kern_perf_target *child);
/* After the runner's profiled run: a failure it reported (its result res,
 * NULL when it wrote none) fails the stage or is added to ncu's failure. */
void kern_perf_child_result(struct mp_kernel_result *r, json_t *res, bool runner);
int kern_accordo_run(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                     struct mp_kernel_result *r);
/* Reads Accordo's last JSON line from its stdout into c. */
int kern_accordo_parse(const char *out, struct mp_kernel_correct *c);
void kern_compare_rank(struct mp_kernel_run *run, const struct mp_kernel_config *cfg);
int kern_write_reports(struct mp_kernel_run *run, const struct mp_kernel_config *cfg,
                       struct mp_diag *d);

/* ---- compare's sequential decision (seqtest.c) ---- */

/* the first look of the schedule: 16 samples (or min_samples if more) */
#define K_SEQ_FIRST_LOOK 16

enum kern_seq_decision { K_SEQ_UNDECIDED = 0, K_SEQ_FASTER, K_SEQ_SLOWER, K_SEQ_SAME };

const char *kern_seq_decision_name(enum kern_seq_decision d);
int kern_seq_first_look(int min_samples);
/* L: the looks at first, 2 first, 4 first, ... below max_samples,
 * max_samples itself, and one at the time limit (taken when the time limit
 * stops a candidate between looks) */
int kern_seq_nlooks(int min_samples, int max_samples);
/* whether a candidate with n samples is at a look */
bool kern_seq_is_look(int n, int min_samples, int max_samples);
/* the largest rank l (1-based) with P(Binomial(n, 1/2) <= l - 1) <= a/2:
 * [x_(l), x_(n+1-l)] covers the median with probability >= 1 - a; 0 when
 * n is too small for level a */
int kern_median_ci_rank(int n, double a);
/* One look: the interval of the time ratio median(cand)/median(base) at
 * level 1 - alpha_look (each median's at alpha_look/2) into ratio_lo/hi
 * (NaN when too few samples), and the decision against the band
 * [1 - thr, 1 + thr]. */
enum kern_seq_decision kern_seq_look(const double *base, int nb, const double *cand, int nc,
                                     double alpha_look, double thr, double *ratio_lo,
                                     double *ratio_hi);

/* ---- GPU clock monitor (clockmon.c) ---- */

/* nvidia-smi sampling the SM clock and the clock-event reasons every 50 ms
 * into DIR/gpu_clocks.csv while a timed child runs. */
struct kern_clockmon {
    struct mp_proc *proc; /* NULL: not running */
    char path[4096];
};

/* Starts the monitor for GPU `index` when nvidia-smi is on PATH and
 * MAGPIE_NO_CLOCK_MONITOR is unset; a monitor that cannot start is left off
 * (returns non-zero, m->proc NULL). */
int kern_clockmon_start(struct kern_clockmon *m, const char *dir, int index);
/* Stops it and summarises its samples into c (c->samples stays 0 when
 * there were none). No-op when it was not started. */
void kern_clockmon_stop(struct kern_clockmon *m, struct mp_kernel_clocks *c);
/* Parses `clocks.sm, clocks_event_reasons.active` lines (csv, noheader,
 * nounits) into c. Returns the number of busy samples. */
int kern_clockmon_parse(const char *text, size_t len, struct mp_kernel_clocks *c);

/* Runs the job file `job` (its child's argv, with "-" for the job) in a
 * warm child of the pool at sock (warm.c), keyed by key; the child's
 * output goes to log. 0: the child finished the job (its result file is
 * there, or not: read it as after a cold run); 1: it failed (why);
 * -1: no warm child could be had: run it cold. *warm: the child had run a
 * job before. */
int kern_warm_run(const char *sock, const char *key, const char *const *argv, const char *cwd,
                  const char *job, const char *log, double limit_s, bool *warm, char *why,
                  size_t whylen);

#endif
