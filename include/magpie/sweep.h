/* magpie sweep: a serving benchmark over many load points.
 *
 * A sweep runs the same workload at a list of loads (max concurrency and / or
 * request rate), each point repeated, and turns the runs into what a person
 * tuning a deployment draws by hand: per point every metric with a bootstrap
 * interval, the saturation knee (where throughput stops rising while latency
 * grows), the highest load that meets latency SLAs (bisection with repeats
 * where a point is too close to call), and the throughput / latency
 * frontier. Two sweeps compare point by point with bench_compare's verdicts,
 * plus the shift of the knee and of the SLA point.
 *
 * This header is the part that needs no process or network: the statistics
 * of a point (from bench_compare sides), the SLA and search grammar, the
 * saturation rule, and the documents (sweep.json, sweep.csv, pareto.html,
 * the comparison). The driver that runs the points is in serve (serve.h,
 * mp_serve_sweep_run). docs/sweep.md has the long form.
 *
 * Ownership: a struct mp_sweep is owned by the caller (mp_sweep_free).
 * Writers append to an mp_buf. The library never prints.
 */
#ifndef MAGPIE_SWEEP_H
#define MAGPIE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/bench_compare.h>

/* The metrics of a point: bench_compare's 14, then these. */
enum {
    MP_SWEEP_TPS_USER = MP_BCMP_N_METRICS, /* 1000 / mean TPOT: decode tok/s one user sees */
    MP_SWEEP_TPS_GPU,                      /* output tok/s / GPUs */
    MP_SWEEP_CONC_MEAN,                    /* mean requests in flight: sum(E2EL) / duration */
    MP_SWEEP_GOODPUT,                      /* req/s meeting every per-request SLO (vLLM) */
    MP_SWEEP_N_METRICS,
};

/* JSON / CSV name: bench_compare's ("ttft_p99_ms"), then
 * "tokens_per_s_per_user", "tokens_per_s_per_gpu", "mean_concurrency",
 * "request_goodput". */
const char *mp_sweep_metric_name(int m);
/* The metric named s: those names, or vLLM's spelling ("p99_ttft_ms",
 * "mean_tpot_ms", "median_e2el_ms", "output_throughput"). -1 if none. */
int mp_sweep_metric_parse(const char *s);
bool mp_sweep_metric_higher_better(int m);

/* A point estimate and its interval (NaN when there is none). */
struct mp_sweep_est {
    double v, lo, hi;
};

/* SLA judgement of a point. */
enum mp_sweep_sla_state {
    MP_SWEEP_SLA_NONE = 0,  /* not judged */
    MP_SWEEP_SLA_PASS,      /* every limit holds at the far end of its interval */
    MP_SWEEP_SLA_FAIL,      /* a limit is broken at the near end of its interval */
    MP_SWEEP_SLA_PASS_NEAR, /* too close to call: passes on the point estimates */
    MP_SWEEP_SLA_FAIL_NEAR, /* too close to call: fails on the point estimates */
};

const char *mp_sweep_sla_state_name(enum mp_sweep_sla_state s); /* "pass", "fail", ... */

struct mp_sweep_point {
    int max_concurrency; /* 0: no cap */
    double request_rate; /* INFINITY: all at once */
    char *dir;           /* the point's directory, relative to the sweep's */
    char **runs;         /* result JSON of each run, relative to the sweep directory */
    size_t n_runs;
    size_t completed, failed; /* requests over the runs */
    struct mp_sweep_est m[MP_SWEEP_N_METRICS];
    enum mp_sweep_sla_state sla;
    bool searched; /* a point of the SLA search rather than of the grid */
    struct mp_bcmp_engine engine;
};

/* "p99_ttft_ms<=150", "output_throughput>=1000" ('<' and '>' too). */
struct mp_sweep_sla {
    int metric;
    bool upper; /* metric <= limit (latency); false: metric >= limit */
    double limit;
    char text[96]; /* as given */
};

int mp_sweep_sla_parse(const char *s, struct mp_sweep_sla *out, struct mp_diag *d);

enum mp_sweep_var {
    MP_SWEEP_VAR_NONE = 0,
    MP_SWEEP_VAR_CONCURRENCY, /* "max_concurrency" */
    MP_SWEEP_VAR_RATE,        /* "request_rate" */
};

const char *mp_sweep_var_name(enum mp_sweep_var v);

/* "max_concurrency:1:256" or "request_rate:0.5:64". */
struct mp_sweep_search {
    enum mp_sweep_var var;
    double lo, hi;
};

int mp_sweep_search_parse(const char *s, struct mp_sweep_search *out, struct mp_diag *d);

/* The load of point p along var. */
double mp_sweep_point_load(const struct mp_sweep_point *p, enum mp_sweep_var var);

/* Judges p against the SLAs from its estimates. */
enum mp_sweep_sla_state mp_sweep_sla_judge(const struct mp_sweep_sla *sla, size_t n,
                                           const struct mp_sweep_point *p);

/* How a point's estimates are computed. */
struct mp_sweep_stat_opts {
    int nboot;        /* bootstrap resamples (1000) */
    uint64_t seed;    /* (0) */
    double ci_level;  /* (0.95) */
    int gpus;         /* for tok/s per GPU (1) */
    double slo_ms[3]; /* per-request goodput SLOs on TTFT, TPOT, E2EL; NaN: none */
};

void mp_sweep_stat_opts_default(struct mp_sweep_stat_opts *o);

/* Fills p->m, completed and failed from the point's runs (a bench_compare
 * side; requests, then runs, resampled). */
int mp_sweep_point_stats(const struct mp_bcmp_side *s, const struct mp_sweep_stat_opts *o,
                         struct mp_sweep_point *p);

/* The saturation rule between two consecutive points of a climb: still
 * climbing when output throughput grew by more than min_gain_pct
 * (bench_compare's bootstrap p-value of |change| <= the floor below alpha:
 * that metric's own, not Holm's over all 14); saturated when it did not
 * while TTFT or E2EL (mean) grew by more than the floor, or when cur had
 * more failed requests than the limit allows (over_limit). *reason says
 * which, for the document. */
int mp_sweep_saturated(const struct mp_bcmp_side *prev, const struct mp_bcmp_side *cur,
                       bool over_limit, double min_gain_pct, uint64_t seed, bool *saturated,
                       char *reason, size_t reason_len, struct mp_diag *d);

struct mp_sweep_knee {
    bool found;   /* saturation seen */
    size_t index; /* the knee: the last point that still raised throughput */
    size_t next;  /* the first point past it */
    char reason[192];
};

struct mp_sweep_sla_result {
    bool done;
    struct mp_sweep_search search;
    double answer;     /* highest load that met every SLA; NaN: even the lowest failed */
    double first_fail; /* lowest load tried that failed; NaN: none failed */
    bool near;         /* the answer rests on a point too close to call */
    size_t point;      /* index of the answer's point, SIZE_MAX: none */
    size_t tried;      /* points evaluated by the search */
};

#define MP_SWEEP_MAX_SLA 16

struct mp_sweep {
    char *label;
    char *target;          /* base URL, or the engine's description */
    char *interleave;      /* id shared by the two sides of an interleaved run, or NULL */
    char *role;            /* "baseline" / "candidate" in an interleaved run, or NULL */
    enum mp_sweep_var var; /* the load the grid climbs */
    int gpus;
    int repeat;
    double min_gain_pct;
    struct mp_sweep_point *pts;
    size_t n_pts;
    struct mp_sweep_knee knee;
    struct mp_sweep_sla sla[MP_SWEEP_MAX_SLA];
    size_t n_sla;
    struct mp_sweep_sla_result slares;
    char **notes;
    size_t n_notes;
    char *dir; /* where it was loaded from (mp_sweep_load), or NULL */
};

/* A new empty sweep; NULL on out of memory. */
struct mp_sweep *mp_sweep_new(const char *label, const char *target);
void mp_sweep_free(struct mp_sweep *s);
/* Appends a point (copied; runs and dir duplicated). */
int mp_sweep_add_point(struct mp_sweep *s, const struct mp_sweep_point *p);
int mp_sweep_add_note(struct mp_sweep *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The index of the point at this load, SIZE_MAX if none. */
size_t mp_sweep_find(const struct mp_sweep *s, int max_concurrency, double request_rate);
/* "c8", "r2.5", "c8_r2.5", "unbounded" */
void mp_sweep_point_name(const struct mp_sweep_point *p, char *out, size_t len);

/* Points in the order of their load along var (grid and search together). */
int mp_sweep_sorted(const struct mp_sweep *s, size_t **order);

/* The side (bench_compare) of point i: its runs loaded from the sweep
 * directory dir; with engine (may be NULL), in the same reading of the
 * result JSONs, the runs' scrapes of the engine's /metrics
 * (magpie.engine_metrics; have stays false when no run scraped). */
int mp_sweep_point_side(const struct mp_sweep *s, const char *dir, size_t i,
                        struct mp_bcmp_side **out, struct mp_bcmp_engine *engine,
                        struct mp_diag *d);

/* Documents. */
int mp_sweep_json(const struct mp_sweep *s, struct mp_buf *out);
int mp_sweep_csv(const struct mp_sweep *s, struct mp_buf *out);
int mp_sweep_text(const struct mp_sweep *s, struct mp_buf *out);
/* Self-contained page, SVG only: tok/s per user vs tok/s per GPU, and
 * p99 TTFT / p99 TPOT against throughput, with error bars; one curve per
 * sweep (1..8 of them). */
int mp_sweep_html(const struct mp_sweep *const *s, size_t n, const char *title, struct mp_buf *out);
/* Reads DIR/sweep.json (or a sweep.json path). Errors name the file and the
 * field (MP_EPARSE / MP_ENOTFOUND / MP_EINVAL). */
int mp_sweep_load(const char *path, struct mp_sweep **out, struct mp_diag *d);
/* The same from a document in memory (file names it in errors; the runs are
 * relative to dir). */
int mp_sweep_load_text(const char *text, size_t len, const char *file, const char *dir,
                       struct mp_sweep **out, struct mp_diag *d);

/* ---- two sweeps side by side ---- */

struct mp_sweep_cmp_point {
    size_t a, b;                  /* point indices in the two sweeps */
    struct mp_bcmp_result *res;   /* the bench_compare result of the pair */
    struct mp_bcmp_side *sa, *sb; /* owned */
};

struct mp_sweep_cmp {
    const struct mp_sweep *a, *b; /* borrowed */
    struct mp_sweep_cmp_point *pts;
    size_t n_pts;
    size_t only_a, only_b; /* loads one sweep has and the other not */
    bool paired;           /* the two sides of one interleaved run */
    struct mp_bcmp_opts opts;
};

/* Matches the points by load and compares each pair (paired when both
 * sweeps come from one interleaved run). */
int mp_sweep_compare(const struct mp_sweep *a, const struct mp_sweep *b,
                     const struct mp_bcmp_opts *opts, struct mp_sweep_cmp **out, struct mp_diag *d);
void mp_sweep_cmp_free(struct mp_sweep_cmp *c);
int mp_sweep_cmp_text(const struct mp_sweep_cmp *c, struct mp_buf *out);
int mp_sweep_cmp_json(const struct mp_sweep_cmp *c, struct mp_buf *out);
int mp_sweep_cmp_html(const struct mp_sweep_cmp *c, struct mp_buf *out);

#endif
