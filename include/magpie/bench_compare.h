/* magpie bench_compare: is a serving benchmark run really faster than another?
 *
 * Loads benchmark runs (a `magpie benchmark` workspace, a workspace of
 * repeats run_1..N, a vLLM / magpie --save-result JSON with its per-request
 * data, or several of them as one side), checks that the workloads are the
 * same, and compares every candidate with the baseline: for output and
 * request throughput and the mean, median and p99 of TTFT, TPOT, ITL and
 * E2EL, the relative change with a bootstrap confidence interval (requests
 * resampled within a run, runs resampled when there are repeats), a p-value
 * per metric, Holm's
 * correction over the metrics, and a verdict FASTER / SLOWER / WITHIN NOISE.
 * Resampling is seeded: the same inputs and seed give the same result.
 *
 * Ownership: sides and results are owned by the caller and freed with their
 * *_free (NULL is a no-op). The library never prints; the writers append to
 * an mp_buf.
 */
#ifndef MAGPIE_BENCH_COMPARE_H
#define MAGPIE_BENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

/* One request as the comparison needs it. Times in ms; tpot_ms is NAN for
 * one-token outputs. */
struct mp_bcmp_request {
    double ttft_ms, tpot_ms, e2el_ms;
    uint32_t itl_off, n_itl; /* the request's gaps: run->itl[itl_off .. itl_off + n_itl) */
    int32_t out_tokens, prompt_len;
};

/* One measured run: the successful requests and their gaps. Throughput is
 * written through Little's law, conc_mean * sum(tokens) / sum(E2EL), with
 * conc_mean = sum(E2EL) / duration, which equals tokens / duration exactly
 * and lets the requests be resampled for it too. */
struct mp_bcmp_run {
    char *source; /* the file the requests came from */
    struct mp_bcmp_request *req;
    size_t n_req; /* successful requests */
    size_t failed;
    double *itl; /* ms */
    size_t n_itl;
    double duration_s;
    long long total_out, total_in;
    double conc_mean; /* sum(E2EL) / duration: mean requests in flight */
};

/* A field that must match between runs (workload), or that is listed when
 * it differs (environment: engine version, image, GPU, driver). */
struct mp_bcmp_field {
    char *name;  /* "model", "isl", "max_concurrency", "engine.args", "gpu.name" ... */
    char *value; /* normalised text */
    bool workload;
    bool approx; /* a measured value (mean prompt tokens ...): equal within 5 % */
};

/* One kernel of a profiled workspace's gap analysis (its top-k list). */
struct mp_bcmp_kernel {
    char *name;
    double total_us, pct; /* summed GPU time over the ranks; share of the total */
    unsigned long long calls;
};

/* The engine's own view over a side's runs (or a sweep point's), from
 * their scrapes of its Prometheus /metrics (`benchmark
 * --engine-metrics-interval S`, docs/workloads.md; magpie.engine_metrics of
 * each result JSON). NaN where nothing was published. */
struct mp_bcmp_engine {
    bool have;           /* some run scraped the engine */
    double running_peak; /* requests the engine ran at once, the most seen */
    double waiting_peak; /* requests queued in the engine, the most seen */
    double waiting_mean; /* ... averaged over the scrapes of the runs */
    double kv_peak;      /* KV-cache usage 0..1, the most seen */
    double hit_rate;     /* prefix-cache hits / queries, mean over runs */
    double preemptions;  /* summed over the runs */
};

/* One side of a comparison: one run or several repeats of one setting. */
struct mp_bcmp_side {
    char *label;  /* given or the path */
    char *source; /* the path as given */
    struct mp_bcmp_run *runs;
    size_t n_runs;
    struct mp_bcmp_field *fields;
    size_t n_fields;
    char **notes; /* what a reader should know (failed requests, missing data) */
    size_t n_notes;
    struct mp_bcmp_kernel *kernels; /* gap_analysis.top_kernels of a profiled workspace */
    size_t n_kernels;
    struct mp_bcmp_engine engine; /* the engine's /metrics over the runs */
};

/* Loads PATH: a workspace directory (benchmark_report.json,
 * inferencex_result.json, inferencex_result.requests.jsonl, config.yaml),
 * a workspace with run_1, run_2, ... (repeats), a result JSON (its sibling
 * NAME.requests.jsonl is used when present, else the per-request arrays
 * that --save-detailed writes), or several of these joined by ','. Errors
 * name the file and the field; MP_EINVAL / MP_EPARSE / MP_ENOTFOUND for
 * bad input. */
int mp_bcmp_load(const char *path, const char *label, struct mp_bcmp_side **out, struct mp_diag *d);
void mp_bcmp_side_free(struct mp_bcmp_side *s);

enum mp_bcmp_metric_id {
    MP_BCMP_OUT_TPS = 0, /* output tokens / s */
    MP_BCMP_REQ_PS,      /* requests / s */
    MP_BCMP_TTFT_MEAN,
    MP_BCMP_TTFT_MEDIAN,
    MP_BCMP_TTFT_P99,
    MP_BCMP_TPOT_MEAN,
    MP_BCMP_TPOT_MEDIAN,
    MP_BCMP_TPOT_P99,
    MP_BCMP_ITL_MEAN,
    MP_BCMP_ITL_MEDIAN,
    MP_BCMP_ITL_P99,
    MP_BCMP_E2EL_MEAN,
    MP_BCMP_E2EL_MEDIAN,
    MP_BCMP_E2EL_P99,
    MP_BCMP_N_METRICS,
};

/* "output_throughput", "ttft_mean_ms", ... (the JSON names). */
const char *mp_bcmp_metric_name(int m);
/* "output tok/s", "TTFT mean (ms)", ... */
const char *mp_bcmp_metric_label(int m);
/* true for throughput (higher is better), false for latency. */
bool mp_bcmp_metric_higher_better(int m);
/* true for the p99 metrics. */
bool mp_bcmp_metric_is_tail(int m);

/* Every metric of one run (the point estimates). */
int mp_bcmp_run_metrics(const struct mp_bcmp_run *r, double out[MP_BCMP_N_METRICS]);

struct mp_bcmp_opts {
    int nboot;             /* bootstrap resamples (2000) */
    uint64_t seed;         /* (0) */
    double alpha;          /* family-wise error rate over the metrics (0.05) */
    double ci_level;       /* level of the intervals shown (0.95) */
    double min_effect_pct; /* changes inside +-this are noise (1.0) */
    /* With one run on a side, the spread between runs (a machine whose
     * speed drifts between them) is not in the interval: a verdict then
     * needs a change beyond +-max(min_effect_pct, this), and the p99
     * metrics are shown but not judged (N/A) (MP_BCMP_SINGLE_RUN_EFFECT_PCT,
     * measured: docs/metrics.md). 0: the within-run intervals are trusted. */
    double single_run_effect_pct;
    bool allow_different; /* compare even when the workloads differ */
};

#define MP_BCMP_SINGLE_RUN_EFFECT_PCT 10.0

void mp_bcmp_opts_default(struct mp_bcmp_opts *o);

enum mp_bcmp_verdict {
    MP_BCMP_WITHIN_NOISE = 0,
    MP_BCMP_FASTER,
    MP_BCMP_SLOWER,
    MP_BCMP_NA, /* no data on one side (e.g. no multi-token outputs for TPOT) */
};

const char *mp_bcmp_verdict_name(enum mp_bcmp_verdict v); /* "FASTER", "WITHIN NOISE", ... */

struct mp_bcmp_metric {
    double base, cand;     /* point estimates (pooled over the runs of a side) */
    double change_pct;     /* (cand / base - 1) * 100 */
    double ci_lo, ci_hi;   /* percent, at ci_level */
    double p, p_holm;      /* two-sided bootstrap p-value of |change| <= min effect; Holm */
    double base_spread[2]; /* min and max over the side's runs */
    double cand_spread[2];
    enum mp_bcmp_verdict verdict;
};

struct mp_bcmp_diff {
    const char *name, *base, *cand; /* borrowed from the sides; NULL: not recorded */
    bool workload;
};

/* A kernel side by side: in both top-k lists, or in only one of them. */
struct mp_bcmp_kernel_row {
    const char *name;                         /* borrowed from a side */
    const struct mp_bcmp_kernel *base, *cand; /* NULL: not in that side's top k */
    double change_pct;                        /* time, NAN unless in both */
};

/* Where a pair's intervals get their noise from. */
enum mp_bcmp_noise {
    MP_BCMP_NOISE_WITHIN_RUN = 0, /* one run on a side: requests resampled; run-to-run
                                     noise unmeasured, the larger effect floor applies */
    MP_BCMP_NOISE_RUNS,           /* repeats on both sides: runs, then requests resampled */
    MP_BCMP_NOISE_PAIRED,         /* interleaved repeats: Student t over the per-pair ratios */
};

/* "within-run", "runs", "paired" */
const char *mp_bcmp_noise_name(enum mp_bcmp_noise n);

struct mp_bcmp_pair {
    const struct mp_bcmp_side *cand; /* borrowed */
    enum mp_bcmp_noise noise;
    double effect_pct;                  /* the floor applied: a change within +-this is noise */
    struct mp_bcmp_kernel_row *kernels; /* when both sides have a gap analysis */
    size_t n_kernels;
    struct mp_bcmp_metric m[MP_BCMP_N_METRICS];
    struct mp_bcmp_diff *diffs;
    size_t n_diffs;
    size_t n_workload_diffs;
    size_t n_faster, n_slower;
};

struct mp_bcmp_result {
    const struct mp_bcmp_side *base; /* borrowed */
    struct mp_bcmp_pair *pairs;
    size_t n_pairs;
    struct mp_bcmp_opts opts;
};

/* Lists the fields in which cand differs from base (borrowed strings). The
 * first workload difference is also returned in *first (NULL if none). */
int mp_bcmp_diff_sides(const struct mp_bcmp_side *base, const struct mp_bcmp_side *cand,
                       struct mp_bcmp_diff **out, size_t *n, const struct mp_bcmp_diff **first);

/* Compares every candidate with base. A workload difference without
 * opts->allow_different is an input error (MP_EINVAL, d names the field and
 * both values). The sides must outlive the result. */
int mp_bcmp_compare(const struct mp_bcmp_side *base, const struct mp_bcmp_side *const *cands,
                    size_t n_cands, const struct mp_bcmp_opts *opts, struct mp_bcmp_result **out,
                    struct mp_diag *d);
void mp_bcmp_result_free(struct mp_bcmp_result *r);

/* Interleaved repeats: base run i and cand run i were measured next to each
 * other in time (A B, B A, ...), so a drift of the machine's speed falls on
 * both. Per metric the log ratios of the pairs give a Student t interval
 * with n - 1 degrees of freedom (the spread between pairs is the noise,
 * drift included), a p-value of |change| <= the effect floor, and Holm over
 * the metrics. Needs the same number (>= 2) of runs on both sides;
 * otherwise, and for one run, it is mp_bcmp_compare. */
int mp_bcmp_compare_paired(const struct mp_bcmp_side *base, const struct mp_bcmp_side *cand,
                           const struct mp_bcmp_opts *opts, struct mp_bcmp_result **out,
                           struct mp_diag *d);

/* A side's point estimates (runs pooled, as compare reports them) and nboot
 * seeded bootstrap replicates, boot[b * MP_BCMP_N_METRICS + m] (runs, then
 * requests resampled). boot may be NULL with nboot 0. */
int mp_bcmp_side_bootstrap(const struct mp_bcmp_side *s, int nboot, uint64_t seed,
                           double point[MP_BCMP_N_METRICS], double *boot);

/* Writers. */
int mp_bcmp_text(const struct mp_bcmp_result *r, struct mp_buf *out);
int mp_bcmp_json(const struct mp_bcmp_result *r, struct mp_buf *out);
/* Self-contained page: the tables and CDFs of TTFT, ITL and E2EL per run. */
int mp_bcmp_html(const struct mp_bcmp_result *r, struct mp_buf *out);

/* Builds a run from raw per-request data (used by the loaders, the
 * calibration simulation and tests). ttft_ms[i], e2el_ms[i], out_tokens[i]
 * (and prompt_len[i], may be NULL) for n successful requests; request i's
 * gaps are itl_ms[itl_off[i] .. itl_off[i] + n_itl[i]). Copies everything. */
int mp_bcmp_run_build(const double *ttft_ms, const double *e2el_ms, const int32_t *out_tokens,
                      const int32_t *prompt_len, const double *itl_ms, const uint32_t *itl_off,
                      const uint32_t *n_itl, size_t n, size_t failed, double duration_s,
                      struct mp_bcmp_run *out);
void mp_bcmp_run_fini(struct mp_bcmp_run *r);

/* A side made of runs built by the caller (moved in; *runs is freed). */
int mp_bcmp_side_from_runs(const char *label, struct mp_bcmp_run *runs, size_t n_runs,
                           struct mp_bcmp_side **out);
/* Adds a field (copied). */
int mp_bcmp_side_add_field(struct mp_bcmp_side *s, const char *name, const char *value,
                           bool workload, bool approx);

/* ---- calibration: seeded synthetic runs with the calibration server's
 * timing (tests/calib/calib_server.c) ---- */

/* Every request arrives on an open-loop Poisson schedule (arrival_seed,
 * the same for runs of one workload), gets a TTFT drawn from U[ttft_ms] and
 * out_tokens - 1 gaps drawn from U[itl_ms], each times its scale (the known
 * change), from server_seed (the run's own noise). The client sees each
 * event after a delivery delay: jitter_ms + an exponential of mean
 * jitter_ms, and with probability spike_prob a stall of U[0, spike_ms] (a
 * loaded machine's scheduler). */
struct mp_bcmp_sim {
    size_t n_requests;
    int out_tokens;
    double ttft_ms[2], itl_ms[2];
    double scale_ttft, scale_itl;
    double rate; /* requests / s */
    double jitter_ms, spike_prob, spike_ms;
    uint64_t arrival_seed, server_seed;
};

/* 1000 requests (vllm bench serve's default) of 32 tokens at 40 req/s, TTFT
 * U[40, 60] ms, gaps U[8, 12]
 * ms, 0.05 ms jitter, 0.5 % stalls of up to 4 ms, no change. */
void mp_bcmp_sim_default(struct mp_bcmp_sim *s);
int mp_bcmp_sim_run(const struct mp_bcmp_sim *s, struct mp_bcmp_run *out);

#endif
