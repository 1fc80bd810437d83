/* magpie loadgen: the serving load generator.
 *
 * Sends OpenAI /v1/completions or /v1/chat/completions streaming requests to
 * a running server (vLLM, SGLang, ATOM, anything OpenAI-compatible), times
 * every server-sent event on CLOCK_MONOTONIC at the read that delivered its
 * first byte, and computes the serving metrics exactly as `vllm bench serve`
 * defines them (docs/metrics.md). One thread, libcurl multi driven by epoll,
 * keep-alive connections.
 *
 * Flow: build a dataset (random / sharegpt / jsonl) -> mp_loadgen_run ->
 * mp_loadgen_metrics_compute -> report writers (vLLM result JSON, per-request
 * JSONL, Magpie throughput/latency objects, terminal summary, HTML).
 *
 * Ownership: every *_new / dataset / run result is owned by the caller and
 * freed with its *_free; *_free(NULL) is a no-op. Config strings are borrowed
 * for the duration of the call that takes them.
 */
#ifndef MAGPIE_LOADGEN_H
#define MAGPIE_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

/* ---- datasets ---- */

struct mp_loadgen_prompt {
    const char *text;   /* UTF-8 prompt (chat content or completions text), or NULL */
    const int32_t *ids; /* token-id prompt (completions only), or NULL */
    uint32_t n_ids;
    int32_t prompt_len; /* expected prompt tokens: exact for ids, estimated for text */
    int32_t output_len; /* max_tokens sent with the request */
};

struct mp_loadgen_dataset {
    struct mp_arena *arena; /* owns prompts and their text/ids */
    struct mp_loadgen_prompt *prompts;
    size_t n;
    bool exact_lengths; /* prompt_len is an exact token count (token-id prompts) */
    char name[32];      /* "random", "sharegpt", "jsonl" */
    /* Added for realistic workloads (docs/workloads.md); all NULL / false in
     * the datasets above. Arrays have n entries and live in the arena. */
    double *arrival_s; /* recorded arrival offsets in s (traces), used with fixed_schedule */
    int32_t *prev;     /* sessions: index of the session's previous turn, -1 for the first;
                          always < the prompt's own index */
    double *think_s;   /* sessions: wait after the previous turn's end before sending */
    int32_t *session;  /* sessions: session number of each prompt */
    bool history;      /* sessions on chat: each turn carries the earlier turns and answers */
    bool *exact;       /* per prompt: prompt_len is exact (e.g. counted by the server's
                          /tokenize); NULL = exact_lengths for all */
};

enum mp_loadgen_range_mode {
    MP_LOADGEN_RANGE_VLLM = 0, /* lengths uniform in [floor(L(1-r)), ceil(L(1+r))], r in [0,1) */
    MP_LOADGEN_RANGE_SGLANG,   /* lengths uniform in [max(1, floor(L r)), L], r in [0,1] */
};

struct mp_loadgen_random_opts {
    int input_len;      /* --random-input-len (1024) */
    int output_len;     /* --random-output-len (128) */
    int prefix_len;     /* --random-prefix-len (0): shared random prefix, same for all */
    double range_ratio; /* --random-range-ratio (0) */
    enum mp_loadgen_range_mode mode;
    uint64_t seed;
    int vocab_first; /* token ids are drawn from [vocab_first, vocab_first + vocab_size) */
    int vocab_size;
    bool text; /* build text prompts of one-token words instead of token ids (chat) */
};

void mp_loadgen_random_opts_default(struct mp_loadgen_random_opts *o);
int mp_loadgen_dataset_random(const struct mp_loadgen_random_opts *o, size_t num_prompts,
                              struct mp_loadgen_dataset **out, struct mp_diag *d);

struct mp_loadgen_file_opts {
    const char *path;
    int output_len;  /* fixed output length (--sharegpt-output-len / --custom-output-len); 0 =
                        from the file (sharegpt: estimated from the reference answer) */
    uint64_t seed;   /* shuffle seed */
    bool shuffle;    /* sharegpt: true like vLLM; jsonl: false (file order) */
    bool oversample; /* repeat samples when the file has fewer than num_prompts */
};

/* ShareGPT JSON: a list of {"conversations": [{"from","value"}, ...]}; turn 0
 * is the prompt, turn 1 the reference completion. Filtered like vLLM
 * (prompt >= 4, output >= 4 tokens, prompt <= 1024, prompt + output <= 2048),
 * lengths estimated without a tokenizer (docs/metrics.md). */
int mp_loadgen_dataset_sharegpt(const struct mp_loadgen_file_opts *o, size_t num_prompts,
                                struct mp_loadgen_dataset **out, struct mp_diag *d);
/* ShareGPT conversations as multi-turn sessions (docs/workloads.md):
 * num_conversations conversations (shuffled as above), every human turn
 * that has a reply a turn sent with the session's history, think_ms after
 * the previous answer; a turn's output length is its reply's estimated
 * length (or o->output_len). */
int mp_loadgen_dataset_sharegpt_sessions(const struct mp_loadgen_file_opts *o,
                                         size_t num_conversations, double think_ms,
                                         struct mp_loadgen_dataset **out, struct mp_diag *d);
/* JSONL, one object per line: "prompt" (string) or "prompt_token_ids" (list of
 * ints), optional "output_len" (alias "max_tokens", "output_tokens"), optional
 * "prompt_len". Errors name the file, line and field. */
int mp_loadgen_dataset_jsonl(const struct mp_loadgen_file_opts *o, size_t num_prompts,
                             struct mp_loadgen_dataset **out, struct mp_diag *d);
void mp_loadgen_dataset_free(struct mp_loadgen_dataset *ds);

/* Groups of prompts sharing a token-identical prefix (docs/workloads.md).
 * Token-id prompts (completions) or, with text, prompts of one-token words
 * (chat) drawn from seed. */
struct mp_loadgen_prefix_opts {
    int prefix_len; /* shared tokens per group (vLLM --prefix-repetition-prefix-len, SGLang
                       --gsp-system-prompt-len) */
    int suffix_len; /* distinct tokens per prompt (-suffix-len, --gsp-question-len) */
    int num_groups; /* prefixes (-num-prefixes, --gsp-num-groups) */
    int output_len; /* max tokens (-output-len, --gsp-output-len) */
    bool ordered;   /* keep prompts grouped (--gsp-ordered); default shuffled like both peers */
    uint64_t seed;
    int vocab_first, vocab_size; /* token-id range, as mp_loadgen_random_opts */
    bool text;
};

void mp_loadgen_prefix_opts_default(struct mp_loadgen_prefix_opts *o);
/* vLLM prefix_repetition: num_prompts prompts, num_prompts / num_groups per
 * prefix (the remainder spread one each over the first groups), shuffled. */
int mp_loadgen_dataset_prefix_repetition(const struct mp_loadgen_prefix_opts *o, size_t num_prompts,
                                         struct mp_loadgen_dataset **out, struct mp_diag *d);
/* SGLang generated-shared-prefix: num_groups x per_group prompts. */
int mp_loadgen_dataset_shared_prefix(const struct mp_loadgen_prefix_opts *o, size_t per_group,
                                     struct mp_loadgen_dataset **out, struct mp_diag *d);

/* Whether the client workload named name (a --dataset-name) sends prompts
 * that share prefixes, so that a server's prefix cache changes what is
 * measured: prefix_repetition, generated-shared-prefix (gsp), multi_turn,
 * mooncake / mooncake_trace. NULL is false. */
bool mp_loadgen_workload_shares_prefixes(const char *name);

/* Timed traces. mooncake / AIPerf mooncake_trace JSONL: one object per line
 * with "timestamp" (ms), "input_length", "output_length", "hash_ids" (blocks
 * of block_size tokens; equal ids are equal token blocks, so lines that start
 * with the same ids share a token-identical prefix), optional "session_id"
 * (turns of a session are sent in order, each after the previous one ended
 * plus its optional "delay" in ms). burstgpt: the BurstGPT CSV (Timestamp in
 * s, Model, Request tokens, Response tokens, ...), rows of one model with a
 * response. Lines are kept in file order, sorted by timestamp. */
struct mp_loadgen_trace_opts {
    const char *path;
    size_t max_prompts; /* the first N records; 0 = all */
    int block_size;     /* tokens per hash id (mooncake 512) */
    double slowdown;    /* recorded offsets are multiplied by it (2 = half the rate) */
    int output_len;     /* > 0: replaces the recorded output length */
    const char *model;  /* burstgpt: rows of this model ("GPT-4"); NULL or "" = all */
    uint64_t seed;
    int vocab_first, vocab_size;
    bool text;
};

void mp_loadgen_trace_opts_default(struct mp_loadgen_trace_opts *o);
int mp_loadgen_dataset_mooncake(const struct mp_loadgen_trace_opts *o,
                                struct mp_loadgen_dataset **out, struct mp_diag *d);
int mp_loadgen_dataset_burstgpt(const struct mp_loadgen_trace_opts *o,
                                struct mp_loadgen_dataset **out, struct mp_diag *d);

/* Synthetic multi-turn chat sessions (AIPerf multi_turn): num_sessions
 * sessions of turns turns (or a drawn number), each turn a prompt of input_len one-token words
 * sent with the session's history (earlier prompts and the answers received),
 * think_ms after the previous answer. */
struct mp_loadgen_session_opts {
    int num_sessions, turns; /* turns: the mean when turns_stddev > 0 */
    int input_len, output_len;
    double think_ms; /* the mean when think_stddev_ms > 0 */
    uint64_t seed;
    /* > 0: each session's turn count is drawn from a normal distribution
     * (rounded, at least 1, at most 65536) and each think time too (at least
     * 0), as AIPerf's --conversation-turn-stddev / -delay-stddev */
    double turns_stddev, think_stddev_ms;
};

int mp_loadgen_dataset_multi_turn(const struct mp_loadgen_session_opts *o,
                                  struct mp_loadgen_dataset **out, struct mp_diag *d);

/* ---- arrivals ---- */

/* vLLM's precomputed schedule: offsets (seconds from the start) of n
 * requests. rate = INFINITY: all 0. Otherwise gamma(shape=burstiness,
 * scale=1/(rate*burstiness)) gaps (burstiness 1 = Poisson, INFINITY =
 * constant 1/rate), cumulated and rescaled so the last offset is n/rate. The
 * draws are numpy's legacy RandomState(seed).gamma, so the same seed gives
 * the same schedule as `vllm bench serve --seed`. */
int mp_loadgen_schedule(size_t n, double rate, double burstiness, uint64_t seed, double *offsets_s,
                        struct mp_diag *d);

/* ---- running ---- */

enum mp_loadgen_api {
    MP_LOADGEN_API_COMPLETIONS = 0, /* prompt, max_tokens */
    MP_LOADGEN_API_CHAT,            /* messages, max_completion_tokens */
};

struct mp_loadgen_progress {
    size_t done, failed, total, in_flight;
    bool warmup;
    double elapsed_s;
};

#define MP_LOADGEN_MAX_HEADERS 32

struct mp_loadgen_config {
    const char *base_url; /* scheme://host:port[/prefix], no trailing '/' needed */
    const char *endpoint; /* "/v1/completions" (default) */
    enum mp_loadgen_api api;
    const char *model;                           /* "model" field of every request */
    const char *headers[MP_LOADGEN_MAX_HEADERS]; /* "Key: value" lines */
    int n_headers;
    const char *extra_body;        /* JSON object whose members are added at top level */
    const char *request_id_prefix; /* x-request-id = prefix + index */
    bool ignore_eos;
    bool continuous_usage;  /* stream_options.continuous_usage_stats: per-event token counts */
    bool insecure;          /* skip TLS verification */
    bool kernel_timestamps; /* stamp events with the kernel receive time (default on) */
    double request_rate;    /* req/s; INFINITY = all at t0 */
    double burstiness;      /* gamma shape, 1 = Poisson */
    int max_concurrency;    /* 0 = unlimited */
    int num_warmups;        /* copies of the first prompt, not measured */
    uint64_t seed;
    double request_timeout_s; /* whole request; <= 0: 6 h like vLLM */
    double stall_timeout_s;   /* no byte for this long fails the request; <= 0: off */
    bool keep_text;           /* keep generated text (for --save-detailed) */
    void (*on_progress)(const struct mp_loadgen_progress *p, void *user); /* ~10/s */
    void *progress_user;
    bool fixed_schedule; /* send at the dataset's recorded arrival_s instead of request_rate */
    /* > 0: GET {base_url}/metrics (Prometheus text) before the run, every this many
     * seconds during it and after it (docs/workloads.md) */
    double scrape_interval_s;
};

void mp_loadgen_config_default(struct mp_loadgen_config *c);

/* Exact prompt lengths from the server (docs/workloads.md): POST
 * {base_url}/tokenize for every text prompt that is sent as it stands (not
 * the later turns of sessions with history), "prompt" for completions,
 * "messages" for chat (the server applies its chat template, as for the
 * request). Each answered prompt gets prompt_len = the server's count and
 * ds->exact[i] = true. A server without /tokenize (the first call fails)
 * leaves the dataset as it was: *counted 0, return 0. Errors are for memory
 * only. */
int mp_loadgen_tokenize(const struct mp_loadgen_config *cfg, struct mp_loadgen_dataset *ds,
                        size_t *counted, struct mp_diag *d);

/* GET {base_url}/v1/models and copy data[0].id into out (what vLLM does when
 * --model is not given). headers: "Key: value" lines, may be NULL. */
int mp_loadgen_first_model(const char *base_url, const char *const *headers, int n_headers,
                           bool insecure, char *out, size_t out_len, struct mp_diag *d);

/* Why a request failed, for grouping failures in reports. */
enum mp_loadgen_fail_kind {
    MP_LOADGEN_FAIL_NONE = 0,
    MP_LOADGEN_FAIL_HTTP,       /* the server answered with a status other than 200 */
    MP_LOADGEN_FAIL_TIMEOUT,    /* request timeout, or a stall (no byte for stall_timeout_s) */
    MP_LOADGEN_FAIL_CONNECTION, /* refused, reset or closed before the stream ended */
    MP_LOADGEN_FAIL_STREAM,     /* 200, but an error event, malformed SSE or no token */
};

/* One request as measured. Times are CLOCK_MONOTONIC ns. */
struct mp_loadgen_record {
    uint32_t index;
    bool success;
    uint8_t fail_kind;           /* enum mp_loadgen_fail_kind */
    bool usage_seen;             /* usage.completion_tokens came from the server */
    int http_status;             /* 0 when no response */
    int32_t expected_prompt_len; /* from the dataset */
    int32_t prompt_len;          /* usage.prompt_tokens when reported, else expected */
    int32_t max_tokens;
    int32_t output_tokens;  /* usage.completion_tokens, else the number of token events */
    uint64_t arrival_ns;    /* scheduled arrival: t0 + offset */
    uint64_t start_ns;      /* request handed to the HTTP engine (vLLM's st) */
    uint64_t headers_ns;    /* response headers complete, 0 if none */
    uint64_t end_ns;        /* transfer finished (stream end or failure) */
    uint32_t n_events;      /* token events (SSE events with non-empty choices) */
    uint64_t *event_ns;     /* first-byte time of each token event */
    uint16_t *event_tokens; /* tokens in each event when known (continuous usage), else 0 */
    uint8_t *event_src;     /* per event: 0 kernel receive time, 1 read time (no kernel time) */
    uint32_t n_chunks;      /* reads (write callbacks) that delivered body bytes */
    char *error;            /* failure reason, NULL on success */
    char *text;             /* generated text, JSON-escaped, when keep_text */
    int32_t session;        /* the dataset's session (result.sessions only) */
    int32_t turn;           /* 0 for a session's first turn (result.sessions only) */
    bool prompt_exact;      /* expected_prompt_len was exact (token ids or /tokenize) */
};

struct mp_loadgen_result {
    struct mp_arena *arena; /* owns records' strings */
    struct mp_loadgen_record *recs;
    size_t n;
    uint64_t t0_ns;    /* benchmark start (just before the first dispatch) */
    uint64_t t_end_ns; /* after the last response */
    double duration_s; /* vLLM's benchmark_duration */
    size_t warmup_done, warmup_failed;
    double max_dispatch_lag_ms; /* worst start - arrival when a slot was free */
    double request_rate, burstiness;
    int max_concurrency;
    bool continuous_usage;
    char request_id_prefix[64];        /* x-request-id of request i = prefix + i */
    bool sessions;                     /* records carry session and turn */
    bool fixed_schedule;               /* arrivals were the dataset's recorded times */
    size_t tokenized;                  /* prompts whose length the server's /tokenize counted */
    struct mp_loadgen_scrape *scrapes; /* the engine's /metrics, in time order */
    size_t n_scrapes;
    char scrape_error[160]; /* the first scrape that failed, "" when none */
};

/* Runs the benchmark. Returns 0 when the run took place (whatever the
 * individual requests did), MP_EINVAL for a bad config, MP_EIO when the
 * event loop cannot be set up. */
int mp_loadgen_run(const struct mp_loadgen_config *cfg, const struct mp_loadgen_dataset *ds,
                   struct mp_loadgen_result **out, struct mp_diag *d);
void mp_loadgen_result_free(struct mp_loadgen_result *r);

/* ---- the engine's own metrics (Prometheus /metrics; docs/workloads.md) ---- */

enum mp_loadgen_engine_metric {
    MP_LOADGEN_EM_RUNNING = 0,     /* requests running (gauge) */
    MP_LOADGEN_EM_WAITING,         /* requests waiting (gauge) */
    MP_LOADGEN_EM_KV_USAGE,        /* KV-cache usage, 0..1 (gauge) */
    MP_LOADGEN_EM_PREFIX_QUERIES,  /* prefix-cache queries, tokens (counter) */
    MP_LOADGEN_EM_PREFIX_HITS,     /* prefix-cache hits, tokens (counter) */
    MP_LOADGEN_EM_PREFIX_HIT_RATE, /* SGLang's cache hit rate, 0..1 (gauge) */
    MP_LOADGEN_EM_PREEMPTIONS,     /* preemptions (counter) */
    MP_LOADGEN_EM_SPEC_DRAFTS,     /* speculative decoding: drafts (counter) */
    MP_LOADGEN_EM_SPEC_DRAFT_TOKENS,
    MP_LOADGEN_EM_SPEC_ACCEPTED,     /* accepted draft tokens (counter) */
    MP_LOADGEN_EM_SPEC_ACCEPT_LEN,   /* SGLang's accept length (gauge) */
    MP_LOADGEN_EM_PROMPT_TOKENS,     /* counter */
    MP_LOADGEN_EM_GENERATION_TOKENS, /* counter */
    MP_LOADGEN_N_EM,
};

/* One scrape: the metrics found (bit k of have), summed over their label
 * sets (gauges of ratios: averaged). */
struct mp_loadgen_scrape {
    uint64_t t_ns; /* CLOCK_MONOTONIC when the answer was complete */
    double v[MP_LOADGEN_N_EM];
    uint32_t have;
};

/* "num_requests_running", "kv_cache_usage", ... */
const char *mp_loadgen_engine_metric_name(int k);

/* Strict parser of the Prometheus text exposition format (0.0.4): calls fn
 * for every sample with its metric name (labels and timestamp skipped) and
 * value. A line that is not a comment, a blank or a well-formed sample is an
 * MP_EPARSE error with its line and column; at most 1 Mi lines. fn returning
 * nonzero stops the parse with that value. */
typedef int (*mp_loadgen_prom_fn)(const char *name, size_t name_len, double value, void *user);
int mp_loadgen_prom_parse(const char *text, size_t n, mp_loadgen_prom_fn fn, void *user,
                          struct mp_diag *d);
/* The vLLM (vllm:*) and SGLang (sglang:*) metrics of one exposition. */
int mp_loadgen_prom_sample(const char *text, size_t n, struct mp_loadgen_scrape *out,
                           struct mp_diag *d);

/* ---- metrics (docs/metrics.md) ---- */

enum mp_loadgen_metric {
    MP_LOADGEN_TTFT = 0,
    MP_LOADGEN_TPOT,
    MP_LOADGEN_ITL,
    MP_LOADGEN_E2EL,
    MP_LOADGEN_CLIENT_QUEUE,    /* start - arrival */
    MP_LOADGEN_E2EL_INCL_QUEUE, /* e2el + client queue time */
    MP_LOADGEN_N_METRICS,
};

#define MP_LOADGEN_MAX_PCTS 16

struct mp_loadgen_stat {
    size_t n;
    double mean, median, std, min, max; /* ms; 0 when n == 0, like vLLM */
    double p99;                         /* always computed (Magpie's objects need it) */
    double pct[MP_LOADGEN_MAX_PCTS];    /* ms, at metrics_opts.pcts */
};

struct mp_loadgen_metrics_opts {
    double pcts[MP_LOADGEN_MAX_PCTS]; /* --metric-percentiles (default 99) */
    int n_pcts;
    unsigned selected; /* bit per mp_loadgen_metric reported (default ttft,tpot,itl) */
    bool slo_set[3];   /* goodput SLOs: ttft, tpot, e2el */
    double slo_ms[3];
};

void mp_loadgen_metrics_opts_default(struct mp_loadgen_metrics_opts *o);
/* "ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue" */
int mp_loadgen_parse_metric_list(const char *s, unsigned *mask, struct mp_diag *d);
/* "25,50,99.9" */
int mp_loadgen_parse_percentiles(const char *s, struct mp_loadgen_metrics_opts *o,
                                 struct mp_diag *d);
/* "ttft:200" (one KEY:VALUE pair; call once per argument) */
int mp_loadgen_parse_goodput(const char *s, struct mp_loadgen_metrics_opts *o, struct mp_diag *d);

struct mp_loadgen_metrics {
    size_t completed, failed;
    long long total_input, total_output;
    double duration_s;
    double request_throughput, output_throughput, total_token_throughput;
    double request_goodput; /* NAN when no SLO given */
    size_t good;
    double max_output_tokens_per_s; /* peak 1-s bucket of token events (vLLM) */
    int max_concurrent_requests;    /* exact peak overlap of successful requests */
    struct mp_loadgen_stat stat[MP_LOADGEN_N_METRICS];
    bool have[MP_LOADGEN_N_METRICS]; /* client queue metrics exist only with a cap */
    /* Magpie additions */
    struct mp_loadgen_stat itl_per_token; /* gaps divided by the event's token count */
    size_t usage_missing;                 /* successful requests without usage.completion_tokens */
    size_t prompt_mismatch;               /* usage.prompt_tokens != expected prompt length */
    size_t multi_token_events;
    double mean_concurrency; /* sum(E2EL)/duration (SGLang's "concurrency") */
    struct mp_loadgen_metrics_opts opts;
};

/* Computes every metric. Needs only the records, so it also works on a
 * result read back from disk. Returns MP_ENOMEM on allocation failure. */
int mp_loadgen_metrics_compute(const struct mp_loadgen_result *r,
                               const struct mp_loadgen_metrics_opts *o,
                               struct mp_loadgen_metrics *m);

/* numpy.percentile (linear interpolation) of sorted v[0..n), p in [0,100]. */
double mp_loadgen_percentile(const double *sorted, size_t n, double p);

/* ---- failures (docs/metrics.md, "Failed requests") ---- */

#define MP_LOADGEN_FAIL_GROUPS 16
#define MP_LOADGEN_FAIL_EXAMPLES 3

/* The failures of one reason: a kind, and for HTTP the status. */
struct mp_loadgen_fail_group {
    enum mp_loadgen_fail_kind kind;
    int http_status; /* MP_LOADGEN_FAIL_HTTP only, else 0 */
    char reason[32]; /* "HTTP 500", "timeout", "connection", "stream" */
    size_t count;
    size_t first_index;                             /* request index of the first one */
    const char *examples[MP_LOADGEN_FAIL_EXAMPLES]; /* distinct messages in request order,
                                                       borrowed from the result */
    size_t n_examples;
};

struct mp_loadgen_failures {
    size_t failed, total; /* measured requests (warm-ups are not counted) */
    double ratio;         /* failed / total; 0 when total is 0 */
    struct mp_loadgen_fail_group groups[MP_LOADGEN_FAIL_GROUPS]; /* most frequent first */
    size_t n_groups;
};

/* Groups the failed records of r by reason. */
void mp_loadgen_failures(const struct mp_loadgen_result *r, struct mp_loadgen_failures *out);
const char *mp_loadgen_fail_kind_name(enum mp_loadgen_fail_kind k); /* "http", "timeout", ... */

/* The most failures a run may have and still be judged: a count ("3") or a
 * percentage of the measured requests ("0.5%"). Default 0. */
struct mp_loadgen_fail_limit {
    bool percent;
    double value; /* count, or percent in [0, 100] */
};

/* "N" (an integer >= 0) or "P%" (0 <= P <= 100). MP_EINVAL otherwise. */
int mp_loadgen_fail_limit_parse(const char *s, struct mp_loadgen_fail_limit *out,
                                struct mp_diag *d);
/* failed <= the limit (for a percentage: failed * 100 <= P * total). */
bool mp_loadgen_fail_limit_ok(const struct mp_loadgen_fail_limit *l, size_t failed, size_t total);
/* "3" or "0.5%" */
void mp_loadgen_fail_limit_format(const struct mp_loadgen_fail_limit *l, char *out, size_t len);
/* {"failed": N, "total": N, "ratio": R[, "max_failed_requests": "L", "within_limit": B],
 *  "by_reason": [{"reason", "kind", "http_status", "count", "first_request",
 *  "examples": [...]}, ...]}; limit may be NULL. */
int mp_loadgen_failures_json(const struct mp_loadgen_failures *f,
                             const struct mp_loadgen_fail_limit *limit, struct mp_buf *out);
/* "Failed requests: 3 of 100 (3.00%)[, limit L: within it|over it]", then
 * per group "  REASON  COUNT  first #INDEX" and its messages indented below;
 * nothing when there is no failure. limit may be NULL. */
int mp_loadgen_failures_text(const struct mp_loadgen_failures *f,
                             const struct mp_loadgen_fail_limit *limit, struct mp_buf *out);

/* ---- reports ---- */

#define MP_LOADGEN_MAX_METADATA 32

struct mp_loadgen_report_info {
    const char *date; /* "YYYYMMDD-HHMMSS" */
    const char *backend;
    const char *label; /* NULL -> null */
    const char *model_id;
    const char *tokenizer_id; /* NULL -> null */
    const char *dataset;
    size_t num_prompts;
    const char *metadata[MP_LOADGEN_MAX_METADATA]; /* "KEY=VALUE" */
    int n_metadata;
    bool save_detailed; /* per-request arrays */
    /* the run's failure limit: recorded in the result JSON's magpie.failures
     * and shown in the HTML (NULL = not judged here) */
    const struct mp_loadgen_fail_limit *fail_limit;
};

/* vLLM --save-result JSON (keys of vllm/benchmarks/serve.py, in its order),
 * plus a "magpie" object with the additions. */
int mp_loadgen_result_json(const struct mp_loadgen_result *r, const struct mp_loadgen_metrics *m,
                           const struct mp_loadgen_report_info *info, struct mp_buf *out);
/* One JSON object per request with raw timestamps (ns since t0) per event. */
int mp_loadgen_requests_jsonl(const struct mp_loadgen_result *r, struct mp_buf *out);
/* Magpie's benchmark_report.json "throughput" and "latency" objects, as one
 * JSON object {"throughput": {...}, "latency": {...}}. */
int mp_loadgen_magpie_json(const struct mp_loadgen_metrics *m, struct mp_buf *out);
/* The terminal summary with vLLM's labels. */
int mp_loadgen_summary(const struct mp_loadgen_result *r, const struct mp_loadgen_metrics *m,
                       struct mp_buf *out);
/* Self-contained HTML page: TTFT/ITL/E2EL/TPOT distributions and latency
 * over time as inline SVG. */
int mp_loadgen_html(const struct mp_loadgen_result *r, const struct mp_loadgen_metrics *m,
                    const struct mp_loadgen_report_info *info, struct mp_buf *out);

/* ---- SSE parsing (exposed for tests and fuzzing) ---- */

enum mp_loadgen_sse_kind {
    MP_LOADGEN_SSE_TOKEN = 0, /* JSON with non-empty "choices" */
    MP_LOADGEN_SSE_USAGE,     /* JSON with "usage" and no choices */
    MP_LOADGEN_SSE_OTHER,     /* JSON with neither (ignored, like vLLM) */
    MP_LOADGEN_SSE_ERROR,     /* JSON with a top-level "error" */
    MP_LOADGEN_SSE_DONE,      /* data: [DONE] */
    MP_LOADGEN_SSE_BAD,       /* data that is not valid JSON */
};

struct mp_loadgen_sse_event {
    enum mp_loadgen_sse_kind kind;
    uint64_t t_ns;             /* time of the read that delivered the event's first byte */
    int64_t prompt_tokens;     /* -1 when absent */
    int64_t completion_tokens; /* -1 when absent */
    const char *text;          /* JSON-escaped text/content of choices[0], not NUL-terminated */
    size_t text_len;
    const char *msg; /* BAD: what is wrong; ERROR: the message (escaped) */
    size_t msg_len;
};

typedef int (*mp_loadgen_sse_fn)(const struct mp_loadgen_sse_event *ev, void *user);

struct mp_loadgen_sse {
    struct mp_buf data; /* data field of the event being read */
    uint64_t ev_t_ns;
    uint64_t first_t_ns; /* when set, the next event to start gets this time, not the feed's */
    int state;
    bool in_event, cr, has_data;
    char field[8];
    int field_len;
    mp_loadgen_sse_fn fn;
    void *user;
};

/* max_event: hard limit of one event's data in bytes. */
void mp_loadgen_sse_init(struct mp_loadgen_sse *s, size_t max_event, mp_loadgen_sse_fn fn,
                         void *user);
void mp_loadgen_sse_reset(struct mp_loadgen_sse *s);
void mp_loadgen_sse_fini(struct mp_loadgen_sse *s);
/* Feeds bytes read at time t_ns. Returns 0, the callback's non-zero return,
 * or MP_ENOMEM when an event exceeds max_event. */
int mp_loadgen_sse_feed(struct mp_loadgen_sse *s, const char *p, size_t n, uint64_t t_ns);
/* End of stream: dispatches a last event that lacked its blank line. */
int mp_loadgen_sse_finish(struct mp_loadgen_sse *s);
/* Classifies one event's data (exposed for tests). */
void mp_loadgen_sse_classify(const char *data, size_t n, struct mp_loadgen_sse_event *ev);

#endif
