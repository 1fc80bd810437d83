/* Private declarations shared by the loadgen sources: the random number
 * generator (numpy's legacy MT19937 stream, so schedules match vLLM's for the
 * same seed) and small helpers. */
#ifndef MP_LOADGEN_INT_H
#define MP_LOADGEN_INT_H

#include <stdint.h>

#include <jansson.h>

#include <magpie/bench_compare.h>
#include <magpie/loadgen.h>

struct loadgen_mt {
    uint32_t mt[624];
    int pos;
    bool has_gauss;
    double gauss;
};

/* numpy RandomState(seed) seeding (init_genrand with seed & 0xffffffff). */
void loadgen_mt_seed(struct loadgen_mt *m, uint32_t seed);
uint32_t loadgen_mt_u32(struct loadgen_mt *m);
/* numpy random_sample(): 53-bit double in [0, 1). */
double loadgen_mt_double(struct loadgen_mt *m);
/* numpy legacy standard_exponential / standard_gamma / gauss. */
double loadgen_mt_exponential(struct loadgen_mt *m);
double loadgen_mt_gamma(struct loadgen_mt *m, double shape);
/* Unbiased integer in [lo, hi] (not numpy's stream). */
int64_t loadgen_mt_range(struct loadgen_mt *m, int64_t lo, int64_t hi);

/* Validates one JSON value starting at p (leading whitespace allowed) and
 * returns the byte after it, or NULL with *err set (sse.c). */
const char *loadgen_json_skip(const char *p, const char *end, const char **err);
/* Rough token count of text without a tokenizer: word pieces the way BPE
 * pre-tokenisers split them (dataset.c; docs/metrics.md). */
int32_t mp_loadgen_estimate_tokens(const char *s, size_t n);
/* dataset.c, shared with the other dataset sources: a dataset of n empty
 * prompts; a whole file read into b (NUL-terminated); a diag naming the
 * file, the line and column of at in base, and the field (may be NULL);
 * the one-token words of the text prompts. */
struct mp_buf;
int loadgen_ds_new(size_t n, const char *name, struct mp_loadgen_dataset **out, struct mp_diag *d);
int loadgen_read_file(const char *path, struct mp_buf *b, struct mp_diag *d);
int loadgen_file_error(struct mp_diag *d, int code, const char *path, const char *base,
                       const char *at, const char *field, const char *fmt, const char *arg);
const char *loadgen_word(size_t k);
size_t loadgen_n_words(void);
/* dataset_prefix.c: p's prompt from tokens tok[0..n): token ids (copied into
 * the arena) or, with text, the words loadgen_word(tok[k]) joined by spaces;
 * prompt_len n, output_len out. */
int loadgen_prompt_set(struct mp_loadgen_dataset *ds, struct mp_loadgen_prompt *p,
                       const int32_t *tok, size_t n, bool text, int32_t out);
/* Arrays of n zeroed elements of size sz in ds's arena, or NULL. */
void *loadgen_ds_array(struct mp_loadgen_dataset *ds, size_t sz);

/* sched.c: the order of sending. arrival[i] is request i's arrival time
 * (CLOCK_MONOTONIC ns), filled in for a session's later turns when the turn
 * before ended; recorded (may be NULL) the earliest time each may go. */
struct loadgen_sched {
    size_t n, pos;
    uint64_t *arrival;
    const uint64_t *recorded;
    int32_t *next;  /* sessions: the next turn of each request, -1 none; NULL: no sessions */
    uint32_t *heap; /* due requests by (arrival, index) */
    size_t n_heap;
    uint64_t *think_ns;
};

int loadgen_sched_init(struct loadgen_sched *s, const struct mp_loadgen_dataset *ds,
                       uint64_t *arrival, const uint64_t *recorded, struct mp_diag *d);
void loadgen_sched_fini(struct loadgen_sched *s);
/* The next request to send and its arrival; false when none is due yet. */
bool loadgen_sched_peek(const struct loadgen_sched *s, size_t *idx, uint64_t *arrival);
void loadgen_sched_pop(struct loadgen_sched *s);
/* Request idx ended at end_ns: its session's next turn becomes due. */
void loadgen_sched_ended(struct loadgen_sched *s, size_t idx, uint64_t end_ns);

/* session_metrics.c: per-turn and per-session figures of a result with
 * sessions (times in ms). */
struct loadgen_turn {
    size_t requests, completed;
    double mean_prompt_len, mean_ttft, median_ttft, p99_ttft, mean_e2el;
};

struct loadgen_sessions {
    size_t sessions, sessions_completed; /* completed: every turn succeeded */
    double mean_duration, median_duration, p99_duration, max_duration;
    struct loadgen_turn *turn;
    int n_turns;
};

int loadgen_sessions_stats(const struct mp_loadgen_result *r, struct loadgen_sessions *s);
void loadgen_sessions_fini(struct loadgen_sessions *s);
/* {"sessions", "sessions_completed", "session_duration": {...}, "turns": [...]} */
int loadgen_sessions_json(const struct mp_loadgen_result *r, struct mp_buf *b);
/* The summary's lines about sessions. */
int loadgen_sessions_text(const struct mp_loadgen_result *r, struct mp_buf *b);
/* scrape.c: the engine's /metrics on a thread of its own during a run. */
struct loadgen_scraper;
/* Scrapes once now ("before"), then every cfg->scrape_interval_s. */
int loadgen_scrape_start(struct loadgen_scraper **out, const struct mp_loadgen_config *cfg,
                         struct mp_diag *d);
/* Scrapes once more ("after"), stops, and hands the samples to res (may be
 * NULL); frees sc (NULL: nothing). */
void loadgen_scrape_stop(struct loadgen_scraper *sc, struct mp_loadgen_result *res);

/* Counters: last scrape minus first; ratios NAN when not computable. */
struct loadgen_em_delta {
    double v[MP_LOADGEN_N_EM];
    uint32_t have;
    double hit_rate, accept_rate, accept_len;
};

void loadgen_scrape_delta(const struct mp_loadgen_result *r, struct loadgen_em_delta *dl);
/* {"error", "scrapes", "delta": {...}, "series": [{"t_s", ...}, ...]} */
int loadgen_scrape_json(const struct mp_loadgen_result *r, struct mp_buf *b);
int loadgen_scrape_text(const struct mp_loadgen_result *r, struct mp_buf *b);
/* html_workload.c: the HTML sections of the engine metrics and sessions. */
int loadgen_html_workload(struct mp_buf *b, const struct mp_loadgen_result *r);
/* "ttft", "tpot", ... for enum mp_loadgen_metric (metrics.c). */
const char *mp_loadgen_metric_name(int k);
/* Appends s with <, >, & and " escaped for HTML text and attributes (html.c;
 * also the benchmark compare page). Nonzero when out of memory. */
int loadgen_html_esc(struct mp_buf *b, const char *s);

/* `"key": value` members of the JSON writers (compare_out.c), with a
 * leading ", " when comma; NULL / non-finite values as null. */
int loadgen_jnum(struct mp_buf *b, const char *key, double v, bool comma);
int loadgen_jstr(struct mp_buf *b, const char *key, const char *v, bool comma);

/* The style sheet shared by the compare and sweep pages (inside <style>). */
#define LOADGEN_PAGE_CSS                                                                           \
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222}"                                  \
    "table{border-collapse:collapse;margin:8px 0 16px}"                                            \
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"                                \
    "th{background:#f3f3f3}td.k{text-align:left}"                                                  \
    ".t{font-weight:600;font-size:13px}.l{font-size:10px;fill:#555}"                               \
    ".ax{stroke:#333}.g{stroke:#eee}svg{margin:6px 12px 6px 0}"                                    \
    ".sw{display:inline-block;width:14px;height:4px;margin-right:4px}"

/* SVG plots of the HTML pages: margins left, bottom and top inside the svg. */
enum { LOADGEN_SVG_ML = 56, LOADGEN_SVG_MB = 34, LOADGEN_SVG_MT = 24 };

/* The opening of one SVG plot: its title, both axes with a grid of 5 ticks
 * each (0 to xmax, 0 to ymax) and the axis labels; the plot drawn after it
 * then closes the svg. */
struct loadgen_axes {
    int w, h; /* the svg's size */
    const char *title;
    double xmax, ymax;
    bool y_fixed;        /* y ticks as %.2f (fractions) instead of %.4g */
    const char *xl, *yl; /* axis labels; yl NULL for none */
};

int loadgen_svg_axes(struct mp_buf *b, const struct loadgen_axes *a);
/* Adds the token events of r's successful requests into 1-second buckets
 * b[0..nb) counted from origin_ns (events past the last bucket are left out):
 * each event counts its tokens when tokens (1 when not recorded), else 1. */
void loadgen_event_buckets(const struct mp_loadgen_result *r, uint64_t origin_ns, double *b,
                           size_t nb, bool tokens);
/* v rounded up to 1, 2 or 5 times a power of ten (1 when v is not > 0). */
double loadgen_nice_max(double v);

/* ---- the engine's view over runs (engine_view.c) ---- */
struct loadgen_engine_acc {
    struct mp_bcmp_engine *e; /* NULL: nothing is gathered */
    double hit_sum, wait_sum;
    size_t hit_n, wait_n;
};

/* e (may be NULL) to "nothing seen" */
void loadgen_engine_init(struct loadgen_engine_acc *a, struct mp_bcmp_engine *e);
/* one run's magpie.engine_metrics, em (NULL or absent: nothing) */
void loadgen_engine_add(struct loadgen_engine_acc *a, const json_t *em);
/* the means */
void loadgen_engine_end(struct loadgen_engine_acc *a);

#endif
