/* magpie kernel: `analyze` and `compare` of kernel implementations.
 *
 * Each kernel goes through compile -> correctness -> performance ->
 * latency -> score. Every stage starts NOT_RUN; a failed stage leaves all
 * later stages NOT_RUN. Correctness is proven by the testcase's exit codes
 * (Magpie) or, in reference mode, against a reference implementation on
 * several seeded random inputs with dtype-aware tolerances, poisoned
 * outputs, guard zones, an input-mutation check and a re-check of the
 * output produced while timing. Timing (the latency stage) runs on the
 * device with events, warm-up, an L2 flush between samples and NVBench's
 * relative-noise stopping rule; compare interleaves candidates round by
 * round and decides FASTER / SLOWER / INCONCLUSIVE from a bootstrap CI of
 * the ratio of medians and a Holm-corrected Mann-Whitney U test.
 *
 * Backends: cuda (testcase programs, or magpie's C harness over the CUDA
 * driver API for extern "C" kernels compiled with nvcc), opencl (the C
 * harness over the OpenCL ICD), hip (hipcc + testcase; unverified here),
 * pytorch and triton (runtime/magpie_runner.py, KernelBench conventions).
 *
 * Ownership: results own all their strings; mp_kernel_run_fini frees them.
 */
#ifndef MAGPIE_KERNEL_H
#define MAGPIE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>
#include <magpie/config.h>
#include <magpie/stats.h>

enum mp_stage_state {
    MP_STAGE_NOT_RUN = 0,
    MP_STAGE_SUCCESS,
    MP_STAGE_FAILED,
    MP_STAGE_SKIPPED,
};

const char *mp_stage_state_name(enum mp_stage_state s); /* "NOT_RUN", "SUCCESS", ... */

struct mp_kernel_metric {
    char *name;
    char *unit;
    double value;
    double peak;        /* NaN when absent */
    double pct_of_peak; /* NaN when absent */
};

struct mp_kernel_dispatch {
    char *name;
    long long count;
    double avg_ns, min_ns, max_ns, total_ns;
};

/* Magpie's performance_result. */
struct mp_kernel_perf {
    bool success;
    char *errors;
    char *command;
    char *workload_dir;
    char *backend;
    int nmetrics;
    struct mp_kernel_metric *metrics;
    int ndispatch;
    struct mp_kernel_dispatch *dispatch;
};

struct mp_kernel_correct {
    bool success;
    bool verified; /* compared against a reference (or a testcase passed) */
    char mode[32]; /* testcase, reference, finite_check, accordo, harness */
    char *errors;  /* NULL when success */
    int checks;    /* inputs / testcase runs checked */
    double max_abs_err;
    double max_rel_err;
    long long mismatches;
    bool input_mutated;
    bool recheck_done;
    bool recheck_ok; /* output of the timed launches still matches */
    char *tolerance; /* Python runner: the rule applied and its figures (dtype,
                        atol/rtol, hp_ratio, rms_ratio, ...) as JSON object
                        text, or NULL; see docs/correctness.md */
};

/* The GPU while a kernel was timed (NVIDIA: nvidia-smi every 50 ms); busy
 * samples are those without the "GPU idle" clock-event reason. */
struct mp_kernel_clocks {
    int samples;     /* busy samples; 0: not monitored */
    double mean_mhz; /* SM clock over the busy samples */
    double min_mhz;
    double capped_share; /* busy samples with a power or thermal cap reason */
};

/* The power guard of the Python runner (runtime/magpie_runner.py, Timer) and
 * the C harness (src/kernel/pguard.c): the SM clock measured before each
 * sample, throttled samples discarded, a cool-down between samples grown
 * until they run at the full clock. */
struct mp_kernel_guard {
    bool present;      /* the runner or harness reported one */
    double ref_mhz;    /* unthrottled SM clock */
    double clock_mhz;  /* median clock before the kept samples; NaN unknown */
    double cool_ratio; /* cool-down, in multiples of the kernel's time */
    int discarded;     /* samples dropped for a capped clock */
    bool sustained;    /* capped even at the largest ratio: samples kept */
};

/* compare's sequential decision for a candidate (--timing sequential): the
 * last look's interval of the time ratio candidate/baseline, at level
 * 1 - alpha_look per look (bench/kernel_timing.md, "Sequential decision") */
struct mp_kernel_seq {
    bool present;
    char decision[16]; /* FASTER, SLOWER, SAME, UNDECIDED */
    int look, looks_max, n, n_baseline;
    double ratio_lo, ratio_hi; /* NaN: no look had enough samples */
    double alpha, alpha_look, threshold;
};

struct mp_kernel_timing {
    bool success;
    char method[32]; /* harness_events, python_runner, testcase_marker */
    char *errors;
    char *command;
    int nsamples;
    double *samples_ms; /* per launch */
    struct mp_stats_summary st;
    char stop_reason[96];
    int batch;             /* launches per sample */
    double l2_flush_bytes; /* 0: no flush */
    char device[128];
    double clock_before_mhz, clock_after_mhz; /* NaN unknown */
    double temp_before_c, temp_after_c;
    struct mp_kernel_clocks during; /* sampled during the timed run */
    struct mp_kernel_guard guard;
    bool throttled;
    struct mp_kernel_seq seq;
};

struct mp_kernel_result {
    char *id;
    enum mp_kernel_type type;
    enum mp_stage_state compiling, correctness, performance, latency;
    bool has_compile;
    bool compile_success;
    char *compile_errors;
    bool has_correct;
    struct mp_kernel_correct correct;
    bool has_perf;
    struct mp_kernel_perf perf;
    bool has_timing;
    struct mp_kernel_timing timing;
    double score;
    int nerrors;
    char **errors;
    char *workdir; /* this kernel's directory in the workspace */
    /* where the evaluation's wall time went, compact JSON (NULL: none):
     * compile_s, then per child process ("correctness_process",
     * "timed_process", "build_process") its wall_s, start_s, imports_s or
     * device_open_s, and this kernel's phases (build_s / load_s, seeds[]
     * with inputs_s, reference_s, candidate_s, check_s, timing_inputs_s,
     * warmup_s, timing_loop_s, timed_device_s, recheck_s) */
    char *breakdown;
};

enum mp_verdict {
    MP_VERDICT_BASELINE = 0,
    MP_VERDICT_FASTER,
    MP_VERDICT_SLOWER,
    MP_VERDICT_SAME, /* CI inside +-threshold */
    MP_VERDICT_INCONCLUSIVE,
    MP_VERDICT_INCORRECT, /* not compared: failed or unverified */
};

const char *mp_verdict_name(enum mp_verdict v);

struct mp_kernel_vs {
    enum mp_verdict verdict;
    double speedup;    /* baseline median / candidate median (> 1 = faster) */
    double speedup_lo; /* 95 % bootstrap CI (sequential: the last look's interval) */
    double speedup_hi;
    double p_value; /* Mann-Whitney U, two-sided */
    double p_holm;  /* Holm-adjusted over the candidates */
    bool has_perf_score;
    double perf_score; /* Magpie's weighted profiler score */
};

struct mp_kernel_run {
    char mode[16]; /* "analyze" or "compare" */
    char timestamp[32];
    char *workspace;
    char *report_path;
    char *html_path;
    int n;
    struct mp_kernel_result *results;
    /* compare */
    int baseline;
    struct mp_kernel_vs *vs; /* n entries */
    int winner;              /* index, -1 none */
    bool all_correct;
    char *summary; /* Magpie's multi-line compare summary */
};

struct mp_kernel_opts {
    const char *output_dir; /* workspace root, default ./results */
    bool no_perf;
    bool no_latency;
    int baseline; /* compare */
    /* compare: 0 the config's compare.timing, 1 fixed (time every kernel to
     * its noise target, then decide), 2 sequential (stop on a decision) */
    int timing;
    const char *self_exe;    /* magpie executable for harness children (default /proc/self/exe) */
    const char *runtime_dir; /* runtime/ (magpie_runner.py), default: mp_kernel_runtime_find */
    /* a warm runner pool's socket (mp_kernel_warm_pool_main; the MCP server
     * passes its own): Python runner and harness jobs go to a warm child of
     * the same problem there, cold when the pool has none; NULL: cold */
    const char *warm_socket;
    /* progress lines for a terminal ("compiling vadd ..."); may be NULL */
    void (*progress)(const char *line, void *user);
    void *user;
};

/* For a SIGINT / SIGTERM handler (async-signal-safe): stops the container
 * run in progress (environment: container; the container is then removed)
 * and makes every later container run of this process fail at once, so the
 * evaluation ends soon with a report. Local runs are not affected. */
void mp_kernel_interrupt(void);

/* Finds runtime/ (magpie_runner.py, magpie_check.py, magpie_timing.h), the
 * first of, in this order:
 *   1. $MAGPIE_RUNTIME_DIR when set (set without magpie_runner.py: an error);
 *   2. <directory of the executable>/../share/magpie/runtime (installed);
 *   3. the source tree the binary was built from: its path compiled in, or
 *      <directory of the executable>/../../runtime (build/<preset>/magpie of
 *      a checkout moved since).
 * Never the current directory. exe: the magpie executable (NULL:
 * /proc/self/exe). Writes the real path to out[0..n) and to *origin (may be
 * NULL) "MAGPIE_RUNTIME_DIR", "installed" or "source tree". Returns 0, or
 * MP_ENOTFOUND with d naming the places looked in. */
int mp_kernel_runtime_find(const char *exe, char *out, size_t n, const char **origin,
                           struct mp_diag *d);

void mp_kernel_run_init(struct mp_kernel_run *r);
void mp_kernel_run_fini(struct mp_kernel_run *r);

/* Evaluates every kernel of cfg and writes <workspace>/analyze_report.json
 * (+ config.yaml, report.html). Returns 0 when the evaluation ran (whatever
 * the kernels' outcome; see mp_kernel_run_failed), or MP_E* for an input or
 * environment error explained in d. */
int mp_kernel_analyze(const struct mp_kernel_config *cfg, const struct mp_kernel_opts *o,
                      struct mp_kernel_run *out, struct mp_diag *d);
/* Same with ranking against o->baseline; compare_report.json. */
int mp_kernel_compare(const struct mp_kernel_config *cfg, const struct mp_kernel_opts *o,
                      struct mp_kernel_run *out, struct mp_diag *d);
/* True when any kernel failed to compile or to prove correct. */
bool mp_kernel_run_failed(const struct mp_kernel_run *r);
/* Human summary of a finished run (what the CLI prints). */
int mp_kernel_run_summary(const struct mp_kernel_run *run, struct mp_buf *b);

/* ncu --csv --print-units base output (any page) -> performance summary
 * (metrics averaged over launches) and per-kernel dispatch stats. */
int mp_kernel_parse_ncu_csv(const char *text, size_t len, struct mp_kernel_perf *p,
                            struct mp_diag *d);
/* rocprofv3 --kernel-trace --output-format csv (kernel_trace.csv) ->
 * per-kernel dispatch stats (End - Start, ns). Unverified on real output. */
int mp_kernel_parse_rocprof_kernel_trace(const char *text, size_t len, struct mp_kernel_perf *p,
                                         struct mp_diag *d);
/* rocprofv3 --kernel-trace --output-format json (<pid>_results.json):
 * buffer_records.kernel_dispatch named through kernel_symbols (formatted
 * name) -> the same per-kernel dispatch stats. Checked on a recording of the
 * real tool (tests/fixtures/kernel/README.md). */
int mp_kernel_parse_rocprof_json(const char *text, size_t len, struct mp_kernel_perf *p,
                                 struct mp_diag *d);
void mp_kernel_perf_fini(struct mp_kernel_perf *p);
/* The body of the hidden `magpie analyze --harness-child JOB` command. */
int mp_kernel_harness_main(const char *job_path);
/* The warm runner pool (src/kernel/warm.c; docs/kernel-timing.md, "Warm
 * runners"): serves jobs on listen_fd (a listening AF_UNIX socket) until
 * ctl_fd reads end of file, then kills every runner. Single-threaded. */
int mp_kernel_warm_pool_main(int ctl_fd, int listen_fd);

#endif
