/* `magpie benchmark --base-url URL --model M ...`: the native load generator
 * against a running OpenAI-compatible server (Magpie's client-only mode,
 * also entered with BENCHMARK_BASE_URL). Flag names follow `vllm bench
 * serve`; this file only parses them, calls the loadgen library and writes
 * what it returns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/loadgen.h>

#include "cli.h"
#include "opts.h"

enum {
    B_BASE_URL = 1000,
    B_HOST,
    B_PORT,
    B_ENDPOINT,
    B_BACKEND,
    B_MODEL,
    B_SERVED,
    B_TOKENIZER,
    B_HEADER,
    B_EXTRA_BODY,
    B_IGNORE_EOS,
    B_SAMPLING, /* B_SAMPLING + k: SAMPLING[k] */
    B_CONT_USAGE = B_SAMPLING + 7,
    B_INSECURE,
    B_NO_KTS,
    B_DATASET,
    B_DATASET_PATH,
    B_NUM_PROMPTS,
    B_RAND_IN,
    B_RAND_OUT,
    B_RANGE_RATIO,
    B_PREFIX_LEN,
    B_RAND_MODE,
    B_INPUT_LEN,
    B_OUTPUT_LEN,
    B_VOCAB_START,
    B_VOCAB_SIZE,
    B_SHAREGPT_OUT,
    B_CUSTOM_OUT,
    B_NO_SHUFFLE,
    B_NO_OVERSAMPLE,
    B_RATE,
    B_BURST,
    B_MAX_CONC,
    B_WARMUPS,
    B_SEED,
    B_REQ_TIMEOUT,
    B_STALL,
    B_MAX_FAILED,
    B_PCT_METRICS,
    B_METRIC_PCTS,
    B_GOODPUT,
    B_SAVE_RESULT,
    B_SAVE_DETAILED,
    B_RESULT_DIR,
    B_RESULT_FILE,
    B_LABEL,
    B_METADATA,
    B_SAVE_REQUESTS,
    B_HTML,
    B_ID_PREFIX,
    B_JSON,
    B_QUIET,
    /* realistic workloads (docs/workloads.md) */
    B_PR_PREFIX,
    B_PR_SUFFIX,
    B_PR_NUM,
    B_PR_OUT,
    B_GSP_GROUPS,
    B_GSP_PER,
    B_GSP_SYS,
    B_GSP_Q,
    B_GSP_OUT,
    B_GSP_ORDERED,
    B_FIXED,
    B_SLOWDOWN,
    B_BLOCK,
    B_BG_MODEL,
    B_CONV_NUM,
    B_CONV_TURNS,
    B_CONV_DELAY,
    B_SCRAPE,
    B_TOKENIZE,
    B_SG_MULTI,
    B_CONV_TURNS_SD,
    B_CONV_DELAY_SD,
};

static const struct cli_opt client_opts[] = {
    {"base-url", 0, CLI_ARG, B_BASE_URL, "URL", "e.g. http://127.0.0.1:8000 (or --host H --port P)",
     0},
    {"host", 0, CLI_ARG, B_HOST, "H", "server host, with --port instead of --base-url", 0},
    {"port", 0, CLI_ARG, B_PORT, "P", "server port (default 8000 with --host)", 0},
    {"endpoint", 0, CLI_ARG, B_ENDPOINT, "PATH",
     "/v1/completions (default) or /v1/chat/completions", 0},
    {"backend", 0, CLI_ARG, B_BACKEND, "B",
     "openai|vllm (completions), openai-chat|vllm-chat (chat)", 0},
    {"model", 0, CLI_ARG, B_MODEL, "M", "model name; default: first of GET /v1/models", 0},
    {"served-model-name", 0, CLI_ARG, B_SERVED, "N", "name sent in requests (default: --model)", 0},
    {"tokenizer", 0, CLI_ARG, B_TOKENIZER, "T", "recorded in the result as tokenizer_id", 0},
    {"header", 0, CLI_ARG, B_HEADER, "KEY=VALUE ...",
     "extra HTTP headers ($OPENAI_API_KEY adds Authorization)", 0},
    {"extra-body", 0, CLI_ARG, B_EXTRA_BODY, "JSON", "members added to every request body", 0},
    {"ignore-eos", 0, CLI_NOARG, B_IGNORE_EOS, NULL,
     "send ignore_eos (forced on for the random dataset)", 0},
    {"top-p", 0, CLI_ARG, B_SAMPLING + 0, "X", "sampling parameter, as vLLM sends it", 0},
    {"top-k", 0, CLI_ARG, B_SAMPLING + 1, "X", "sampling parameter, as vLLM sends it", 0},
    {"min-p", 0, CLI_ARG, B_SAMPLING + 2, "X", "sampling parameter, as vLLM sends it", 0},
    {"temperature", 0, CLI_ARG, B_SAMPLING + 3, "X", "sampling parameter, as vLLM sends it", 0},
    {"frequency-penalty", 0, CLI_ARG, B_SAMPLING + 4, "X", "sampling parameter, as vLLM sends it",
     0},
    {"presence-penalty", 0, CLI_ARG, B_SAMPLING + 5, "X", "sampling parameter, as vLLM sends it",
     0},
    {"repetition-penalty", 0, CLI_ARG, B_SAMPLING + 6, "X", "sampling parameter, as vLLM sends it",
     0},
    {"continuous-usage-stats", 0, CLI_NOARG, B_CONT_USAGE, NULL,
     "ask for usage in every chunk: per-event token counts", 0},
    {"insecure", 0, CLI_NOARG, B_INSECURE, NULL, "do not verify TLS certificates", 0},
    {"no-kernel-timestamps", 0, CLI_NOARG, B_NO_KTS, NULL,
     "stamp events when read, not when the kernel received them", 0},
    {NULL, 0, CLI_NOARG, 0, NULL, "workload", 0},
    {"dataset-name", 0, CLI_ARG, B_DATASET, "NAME",
     "random (default), sharegpt, jsonl (alias custom), prefix_repetition, "
     "generated-shared-prefix, mooncake, burstgpt, multi_turn",
     0},
    {"dataset-path", 0, CLI_ARG, B_DATASET_PATH, "FILE", "for sharegpt / jsonl", 0},
    {"num-prompts", 0, CLI_ARG, B_NUM_PROMPTS, "N", "requests to send (default 1000)", 0},
    {"random-input-len", 0, CLI_ARG, B_RAND_IN, "N", "(default 1024)", 0},
    {"random-output-len", 0, CLI_ARG, B_RAND_OUT, "N", "(default 128)", 0},
    {"random-range-ratio", 0, CLI_ARG, B_RANGE_RATIO, "R", "(default 0)", 0},
    {"random-prefix-len", 0, CLI_ARG, B_PREFIX_LEN, "N", "(default 0)", 0},
    {"random-mode", 0, CLI_ARG, B_RAND_MODE, "vllm|sglang",
     "length sampling: vllm [L(1-R), L(1+R)], sglang [L R, L]", 0},
    {"range-ratio-mode", 0, CLI_ARG, B_RAND_MODE, "vllm|sglang", "same as --random-mode",
     CLI_HIDDEN},
    {"input-len", 0, CLI_ARG, B_INPUT_LEN, "N", "generic alias of --random-input-len", 0},
    {"output-len", 0, CLI_ARG, B_OUTPUT_LEN, "N",
     "generic alias of the output lengths (random, sharegpt, custom)", 0},
    {"random-vocab-start", 0, CLI_ARG, B_VOCAB_START, "N", "token-id range start (1000)", 0},
    {"random-vocab-size", 0, CLI_ARG, B_VOCAB_SIZE, "N", "token-id range size (31000)", 0},
    {"sharegpt-output-len", 0, CLI_ARG, B_SHAREGPT_OUT, "N", "fixed output length (sharegpt)", 0},
    {"sharegpt-multi-turn", 0, CLI_NOARG, B_SG_MULTI, NULL,
     "sharegpt: --num-prompts conversations as sessions, every turn with its history", 0},
    {"custom-output-len", 0, CLI_ARG, B_CUSTOM_OUT, "N", "fixed output length (jsonl)", 0},
    {"disable-shuffle", 0, CLI_NOARG, B_NO_SHUFFLE, NULL, "keep the dataset order", 0},
    {"prefix-repetition-prefix-len", 0, CLI_ARG, B_PR_PREFIX, "N",
     "prefix_repetition: shared prefix tokens (256)", 0},
    {"prefix-repetition-suffix-len", 0, CLI_ARG, B_PR_SUFFIX, "N",
     "prefix_repetition: tokens of each prompt's own (256)", 0},
    {"prefix-repetition-num-prefixes", 0, CLI_ARG, B_PR_NUM, "N",
     "prefix_repetition: distinct prefixes (10)", 0},
    {"prefix-repetition-output-len", 0, CLI_ARG, B_PR_OUT, "N", "prefix_repetition: (128)", 0},
    {"gsp-num-groups", 0, CLI_ARG, B_GSP_GROUPS, "N", "generated-shared-prefix: groups (64)", 0},
    {"gsp-prompts-per-group", 0, CLI_ARG, B_GSP_PER, "N",
     "generated-shared-prefix: prompts per group (16)", 0},
    {"gsp-system-prompt-len", 0, CLI_ARG, B_GSP_SYS, "N",
     "generated-shared-prefix: shared tokens (2048)", 0},
    {"gsp-question-len", 0, CLI_ARG, B_GSP_Q, "N",
     "generated-shared-prefix: tokens of each prompt's own (128)", 0},
    {"gsp-output-len", 0, CLI_ARG, B_GSP_OUT, "N", "generated-shared-prefix: (256)", 0},
    {"gsp-ordered", 0, CLI_NOARG, B_GSP_ORDERED, NULL,
     "generated-shared-prefix: send group by group, not shuffled", 0},
    {"fixed-schedule", 0, CLI_NOARG, B_FIXED, NULL,
     "mooncake / burstgpt: send at the recorded times, not --request-rate", 0},
    {"slowdown-factor", 0, CLI_ARG, B_SLOWDOWN, "F",
     "multiply recorded times by F (2: half the rate; default 1)", 0},
    {"mooncake-slowdown-factor", 0, CLI_ARG, B_SLOWDOWN, "F", "same as --slowdown-factor",
     CLI_HIDDEN},
    {"trace-block-size", 0, CLI_ARG, B_BLOCK, "N", "mooncake: tokens per hash id (512)", 0},
    {"prompt-input-tokens-block-size", 0, CLI_ARG, B_BLOCK, "N", "same as --trace-block-size",
     CLI_HIDDEN},
    {"burstgpt-model", 0, CLI_ARG, B_BG_MODEL, "M",
     "burstgpt: rows of this Model (GPT-4; \"\" for all)", 0},
    {"conversation-num", 0, CLI_ARG, B_CONV_NUM, "N", "multi_turn: sessions (100)", 0},
    {"conversation-turn-mean", 0, CLI_ARG, B_CONV_TURNS, "N",
     "multi_turn: turns per session (3; the mean with --conversation-turn-stddev); turn "
     "lengths: --random-input/output-len",
     0},
    {"conversation-turn-delay-mean", 0, CLI_ARG, B_CONV_DELAY, "MS",
     "multi_turn: think time before each later turn (0)", 0},
    {"conversation-turn-stddev", 0, CLI_ARG, B_CONV_TURNS_SD, "X",
     "multi_turn: draw each session's turn count, normal with this stddev (0: fixed)", 0},
    {"conversation-turn-delay-stddev", 0, CLI_ARG, B_CONV_DELAY_SD, "MS",
     "multi_turn: draw each think time, normal with this stddev (0: fixed)", 0},
    {"server-tokenize", 0, CLI_NOARG, B_TOKENIZE, NULL,
     "count text prompts with the server's /tokenize before the run (exact lengths)", 0},
    {"engine-metrics-interval", 0, CLI_ARG, B_SCRAPE, "S",
     "scrape the server's /metrics before, every S s during and after the run (0: off)", 0},
    {"no-oversample", 0, CLI_NOARG, B_NO_OVERSAMPLE, NULL,
     "do not repeat entries of a dataset smaller than --num-prompts", 0},
    {NULL, 0, CLI_NOARG, 0, NULL, "load", 0},
    {"request-rate", 0, CLI_ARG, B_RATE, "R", "req/s, inf (default) = all at once", 0},
    {"burstiness", 0, CLI_ARG, B_BURST, "B", "gamma shape, 1 = Poisson (default)", 0},
    {"max-concurrency", 0, CLI_ARG, B_MAX_CONC, "N", "in-flight cap (requests beyond it queue)", 0},
    {"num-warmups", 0, CLI_ARG, B_WARMUPS, "N", "unmeasured requests first (default 0)", 0},
    {"seed", 0, CLI_ARG, B_SEED, "S", "(default 0; same arrival schedule as vLLM's seed)", 0},
    {"request-timeout", 0, CLI_ARG, B_REQ_TIMEOUT, "S", "per request (default 21600)", 0},
    {"stall-timeout", 0, CLI_ARG, B_STALL, "S", "fail a request after S seconds without data (off)",
     0},
    {"max-failed-requests", 0, CLI_ARG, B_MAX_FAILED, "N|P%",
     "failed requests the run may have and still pass: a count or a percentage of "
     "--num-prompts (default 0: any failure is exit 1; metrics cover successes only)",
     0},
    {NULL, 0, CLI_NOARG, 0, NULL, "results", 0},
    {"percentile-metrics", 0, CLI_ARG, B_PCT_METRICS, "L",
     "ttft,tpot,itl (default),e2el,client_queue_time,...", 0},
    {"metric-percentiles", 0, CLI_ARG, B_METRIC_PCTS, "L", "e.g. 50,90,99 (default 99)", 0},
    {"goodput", 0, CLI_ARG, B_GOODPUT, "KEY:MS ...", "SLOs for goodput: ttft, tpot, e2el", 0},
    {"save-result", 0, CLI_NOARG, B_SAVE_RESULT, NULL,
     "write the vLLM-format result JSON (+ .requests.jsonl, .html beside it)", 0},
    {"save-detailed", 0, CLI_NOARG, B_SAVE_DETAILED, NULL,
     "include per-request arrays in the result JSON", 0},
    {"result-dir", 0, CLI_ARG, B_RESULT_DIR, "DIR", "directory of the result JSON", 0},
    {"result-filename", 0, CLI_ARG, B_RESULT_FILE, "NAME", "file name of the result JSON", 0},
    {"label", 0, CLI_ARG, B_LABEL, "L", "label recorded in the result (and its file name)", 0},
    {"metadata", 0, CLI_ARG, B_METADATA, "KEY=VALUE ...", "recorded in the result", 0},
    {"save-requests", 0, CLI_ARG, B_SAVE_REQUESTS, "FILE",
     "per-request JSONL with per-event timestamps", 0},
    {"html", 0, CLI_ARG, B_HTML, "FILE", "HTML report with latency distributions", 0},
    {"request-id-prefix", 0, CLI_ARG, B_ID_PREFIX, "P",
     "x-request-id prefix (default bench-<hex>-)", 0},
    {"json", 0, CLI_NOARG, B_JSON, NULL, "print {throughput, latency, ...} JSON, not the summary",
     0},
    {"disable-tqdm", 0, CLI_NOARG, B_QUIET, NULL, "no progress display", 0},
    {"quiet", 'q', CLI_NOARG, B_QUIET, NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_benchmark_client = {
    .name = "benchmark --base-url",
    .args = "URL [--model M]",
    .summary = "serving benchmark of a running OpenAI-compatible server (the load generator "
               "only; flags of `vllm bench serve`)",
    .intro = "Serving benchmark of a running OpenAI-compatible server (vLLM, SGLang, ATOM, ...)\n"
             "with magpie's native load generator. Metrics are vLLM's (docs/metrics.md); flags\n"
             "follow `vllm bench serve`. BENCHMARK_BASE_URL stands in for --base-url.\n",
    .opts_title = "server",
    .opts = client_opts,
    .outro =
        "exit status: 0 ok, 1 more requests failed than --max-failed-requests allows or the\n"
        "run failed, 2 usage or input error\n\n"
        "examples:\n"
        "  magpie benchmark --base-url http://127.0.0.1:8000 --model meta-llama/Llama-3.1-8B \\\n"
        "      --random-input-len 1024 --random-output-len 128 --max-concurrency 64 \\\n"
        "      --num-prompts 640 --percentile-metrics ttft,tpot,itl,e2el --save-result\n"
        "  magpie benchmark --base-url http://host:8000 --backend openai-chat \\\n"
        "      --endpoint /v1/chat/completions --dataset-name sharegpt \\\n"
        "      --dataset-path ShareGPT_V3.json --request-rate 10 --goodput ttft:500 tpot:50\n",
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_benchmark_client);
}

struct opts {
    struct mp_loadgen_config cfg;
    struct mp_loadgen_random_opts rnd;
    struct mp_loadgen_metrics_opts mo;
    struct mp_loadgen_report_info info;
    struct mp_loadgen_fail_limit fail_limit;
    struct mp_loadgen_prefix_opts pr, gsp;
    struct mp_loadgen_trace_opts tr;
    struct mp_loadgen_session_opts mt;
    size_t gsp_per;
    bool num_prompts_set, tokenize, sg_multi;
    const char *dataset, *dataset_path, *result_dir, *result_filename, *save_requests, *html;
    const char *host, *port, *backend, *served, *extra_body;
    size_t num_prompts;
    int sharegpt_out, custom_out;
    bool save_result, json, quiet, shuffle, oversample, ignore_eos_set;
    double sampling[7];
    bool sampling_set[7];
    /* buffers the config points into */
    char prefix[64], model_buf[512], url_buf[600], date[32], auth[600];
};

static const char *const SAMPLING[7] = {"top_p",
                                        "top_k",
                                        "min_p",
                                        "temperature",
                                        "frequency_penalty",
                                        "presence_penalty",
                                        "repetition_penalty"};

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "magpie: error: %s expects %s, not '%s'\n", opt, want, val ? val : "");
    return EXIT_USAGE;
}

static int num(const char *opt, const char *v, double *out)
{
    char *end;
    if (!v)
        return bad(opt, v, "a number");
    double x = strtod(v, &end);
    if (end == v || *end)
        return bad(opt, v, "a number");
    *out = x;
    return 0;
}

static int inum(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    if (!v)
        return bad(opt, v, "an integer");
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return bad(opt, v, "an integer in range");
    *out = x;
    return 0;
}

/* progress line on stderr (a TTY only): requests done, rate, ETA */
struct prog {
    bool on, drawn;
};

static void on_progress(const struct mp_loadgen_progress *p, void *user)
{
    struct prog *pg = user;
    if (!pg->on)
        return;
    double rate = p->elapsed_s > 0 ? (double)p->done / p->elapsed_s : 0;
    double eta = rate > 0 && p->done < p->total ? (double)(p->total - p->done) / rate : 0;
    fprintf(stderr, "\r\033[K%s %zu/%zu done (%zu failed), %zu in flight, %.1f req/s, ETA %.0fs",
            p->warmup ? "warm-up" : "requests", p->done, p->total, p->failed, p->in_flight, rate,
            eta);
    pg->drawn = true;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* --header / --metadata / --goodput: one value, or the words up to the
 * next "--" option. A header line is owned by o->cfg.headers from then on
 * (freed by cli_bench_client), which the analyzer does not follow. */
// NOLINTBEGIN(clang-analyzer-unix.Malloc)
static int parse_list(int id, char *v, int argc, char **argv, int *i, struct opts *o)
{
    int rc, taken = 0;
    while (v || (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)) {
        char *item = v ? v : argv[++*i];
        v = NULL;
        taken++;
        if (id == B_HEADER) {
            char *e = strchr(item, '=');
            if (!e || o->cfg.n_headers >= MP_LOADGEN_MAX_HEADERS - 2)
                return bad("--header", item, "KEY=VALUE");
            char *line = malloc(strlen(item) + 3);
            if (!line)
                return EXIT_FAIL;
            sprintf(line, "%.*s: %s", (int)(e - item), item, e + 1);
            o->cfg.headers[o->cfg.n_headers++] = line;
        } else if (id == B_METADATA) {
            if (!strchr(item, '=') || o->info.n_metadata >= MP_LOADGEN_MAX_METADATA)
                return bad("--metadata", item, "KEY=VALUE");
            o->info.metadata[o->info.n_metadata++] = item;
        } else {
            struct mp_diag d;
            mp_diag_clear(&d);
            if ((rc = mp_loadgen_parse_goodput(item, &o->mo, &d)))
                return cli_report_error(&d, rc);
        }
    }
    if (!taken && id == B_GOODPUT)
        return bad("--goodput", "", "KEY:VALUE pairs");
    return 0;
}

// NOLINTEND(clang-analyzer-unix.Malloc)

/* The flags without a value; false for any other id. */
static bool parse_flag(int id, struct opts *o)
{
    switch (id) {
    case B_IGNORE_EOS:
        o->cfg.ignore_eos = true;
        return true;
    case B_CONT_USAGE:
        o->cfg.continuous_usage = true;
        return true;
    case B_INSECURE:
        o->cfg.insecure = true;
        return true;
    case B_NO_KTS:
        o->cfg.kernel_timestamps = false;
        return true;
    case B_NO_SHUFFLE:
        o->shuffle = false;
        return true;
    case B_NO_OVERSAMPLE:
        o->oversample = false;
        return true;
    case B_SAVE_RESULT:
        o->save_result = true;
        return true;
    case B_SAVE_DETAILED:
        o->info.save_detailed = true;
        return true;
    case B_JSON:
        o->json = true;
        return true;
    case B_QUIET:
        o->quiet = true;
        return true;
    default:
        return false;
    }
}

/* The string-valued options: where their value goes, or NULL. */
static const char **string_slot(int id, struct opts *o)
{
    switch (id) {
    case B_BASE_URL:
        return &o->cfg.base_url;
    case B_HOST:
        return &o->host;
    case B_PORT:
        return &o->port;
    case B_ENDPOINT:
        return &o->cfg.endpoint;
    case B_BACKEND:
        return &o->backend;
    case B_MODEL:
        return &o->cfg.model;
    case B_SERVED:
        return &o->served;
    case B_TOKENIZER:
        return &o->info.tokenizer_id;
    case B_LABEL:
        return &o->info.label;
    case B_EXTRA_BODY:
        return &o->extra_body;
    case B_DATASET:
        return &o->dataset;
    case B_DATASET_PATH:
        return &o->dataset_path;
    case B_RESULT_DIR:
        return &o->result_dir;
    case B_RESULT_FILE:
        return &o->result_filename;
    case B_SAVE_REQUESTS:
        return &o->save_requests;
    case B_HTML:
        return &o->html;
    case B_ID_PREFIX:
        return &o->cfg.request_id_prefix;
    default:
        return NULL;
    }
}

/* The integer-valued options and their ranges. */
static const struct int_range {
    int id;
    long lo, hi;
} ranges[] = {
    {B_NUM_PROMPTS, 1, 10 << 20},      {B_RAND_IN, 0, 1 << 24},
    {B_INPUT_LEN, 0, 1 << 24},         {B_RAND_OUT, 1, 1 << 24},
    {B_OUTPUT_LEN, 1, 1 << 24},        {B_PREFIX_LEN, 0, 1 << 24},
    {B_VOCAB_START, 0, INT32_MAX / 2}, {B_VOCAB_SIZE, 1, INT32_MAX / 2},
    {B_SHAREGPT_OUT, 1, 1 << 24},      {B_CUSTOM_OUT, 1, 1 << 24},
    {B_MAX_CONC, 1, 1 << 20},          {B_WARMUPS, 0, 1 << 20},
    {B_SEED, 0, 4294967295L},
};

static const struct int_range *find_range(int id)
{
    for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++)
        if (ranges[k].id == id)
            return &ranges[k];
    return NULL;
}

/* An integer-valued option: its range check, then where the value goes. */
static int parse_int_opt(int id, const char *a, const char *v, struct opts *o)
{
    const struct int_range *r = find_range(id);
    long l;
    int rc = inum(a, v, r->lo, r->hi, &l);
    if (rc)
        return rc;
    switch (id) {
    case B_NUM_PROMPTS:
        o->num_prompts = (size_t)l;
        o->num_prompts_set = true;
        break;
    case B_RAND_IN:
    case B_INPUT_LEN:
        o->rnd.input_len = (int)l;
        break;
    case B_RAND_OUT:
    case B_OUTPUT_LEN:
        o->rnd.output_len = (int)l;
        if (id == B_OUTPUT_LEN)
            o->sharegpt_out = o->custom_out = (int)l;
        break;
    case B_PREFIX_LEN:
        o->rnd.prefix_len = (int)l;
        break;
    case B_VOCAB_START:
        o->rnd.vocab_first = (int)l;
        break;
    case B_VOCAB_SIZE:
        o->rnd.vocab_size = (int)l;
        break;
    case B_SHAREGPT_OUT:
        o->sharegpt_out = (int)l;
        break;
    case B_CUSTOM_OUT:
        o->custom_out = (int)l;
        break;
    case B_MAX_CONC:
        o->cfg.max_concurrency = (int)l;
        break;
    case B_WARMUPS:
        o->cfg.num_warmups = (int)l;
        break;
    default: /* B_SEED */
        o->cfg.seed = (uint64_t)l;
        o->rnd.seed = (uint64_t)l;
        break;
    }
    return 0;
}

/* The options with one value that is parsed or checked here; cur is the
 * word the value came from (for messages). */
static int parse_value_opt(int id, const char *a, const char *v, const char *cur, struct opts *o)
{
    int rc;
    struct mp_diag d;
    mp_diag_clear(&d);
    switch (id) {
    case B_MAX_FAILED:
        rc = mp_loadgen_fail_limit_parse(v, &o->fail_limit, &d);
        return rc ? cli_report_error(&d, rc) : 0;
    case B_RANGE_RATIO:
        return num(a, v, &o->rnd.range_ratio);
    case B_RAND_MODE:
        if (v && !strcmp(v, "sglang"))
            o->rnd.mode = MP_LOADGEN_RANGE_SGLANG;
        else if (v && !strcmp(v, "vllm"))
            o->rnd.mode = MP_LOADGEN_RANGE_VLLM;
        else
            return bad(a, v, "vllm or sglang");
        return 0;
    case B_RATE:
        if ((rc = num(a, v, &o->cfg.request_rate)))
            return rc;
        return o->cfg.request_rate > 0 ? 0 : bad(a, cur, "a positive number or inf");
    case B_BURST:
        if ((rc = num(a, v, &o->cfg.burstiness)))
            return rc;
        return o->cfg.burstiness > 0 ? 0 : bad(a, cur, "a positive number");
    case B_REQ_TIMEOUT:
        return num(a, v, &o->cfg.request_timeout_s);
    case B_STALL:
        return num(a, v, &o->cfg.stall_timeout_s);
    case B_PCT_METRICS:
        rc = mp_loadgen_parse_metric_list(v ? v : "", &o->mo.selected, &d);
        return rc ? cli_report_error(&d, rc) : 0;
    case B_METRIC_PCTS:
        rc = mp_loadgen_parse_percentiles(v ? v : "", &o->mo, &d);
        return rc ? cli_report_error(&d, rc) : 0;
    default: { /* the sampling parameters */
        double x;
        int k = id - B_SAMPLING;
        if ((rc = num(a, v, &x)))
            return rc;
        o->sampling[k] = x;
        o->sampling_set[k] = true;
        return 0;
    }
    }
}

/* The workload options of docs/workloads.md: 0 or the exit code when id is
 * one of them, -1 otherwise. */
static int parse_workload_opt(int id, const char *a, const char *v, struct opts *o)
{
    static const struct {
        int id;
        long lo, hi;
    } ints[] = {{B_PR_PREFIX, 0, 1 << 24}, {B_PR_SUFFIX, 0, 1 << 24},  {B_PR_NUM, 1, 1 << 20},
                {B_PR_OUT, 1, 1 << 24},    {B_GSP_GROUPS, 1, 1 << 20}, {B_GSP_PER, 1, 1 << 20},
                {B_GSP_SYS, 0, 1 << 24},   {B_GSP_Q, 0, 1 << 24},      {B_GSP_OUT, 1, 1 << 24},
                {B_BLOCK, 1, 1 << 24},     {B_CONV_NUM, 1, 1 << 20},   {B_CONV_TURNS, 1, 1 << 16}};

    int *dst[] = {&o->pr.prefix_len,  &o->pr.suffix_len,   &o->pr.num_groups,
                  &o->pr.output_len,  &o->gsp.num_groups,  NULL,
                  &o->gsp.prefix_len, &o->gsp.suffix_len,  &o->gsp.output_len,
                  &o->tr.block_size,  &o->mt.num_sessions, &o->mt.turns};
    long l;
    int rc;
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
        if (ints[k].id != id)
            continue;
        if ((rc = inum(a, v, ints[k].lo, ints[k].hi, &l)))
            return rc;
        if (dst[k])
            *dst[k] = (int)l;
        else
            o->gsp_per = (size_t)l;
        return 0;
    }
    switch (id) {
    case B_GSP_ORDERED:
        o->gsp.ordered = true;
        return 0;
    case B_FIXED:
        o->cfg.fixed_schedule = true;
        return 0;
    case B_SLOWDOWN:
        if ((rc = num(a, v, &o->tr.slowdown)))
            return rc;
        return o->tr.slowdown > 0 && !isinf(o->tr.slowdown) ? 0 : bad(a, v, "a positive number");
    case B_BG_MODEL:
        o->tr.model = v ? v : "";
        return 0;
    case B_CONV_DELAY:
        if ((rc = num(a, v, &o->mt.think_ms)))
            return rc;
        return o->mt.think_ms >= 0 ? 0 : bad(a, v, "a non-negative number of ms");
    case B_TOKENIZE:
        o->tokenize = true;
        return 0;
    case B_CONV_TURNS_SD:
    case B_CONV_DELAY_SD: {
        double *x = id == B_CONV_TURNS_SD ? &o->mt.turns_stddev : &o->mt.think_stddev_ms;
        if ((rc = num(a, v, x)))
            return rc;
        return *x >= 0 ? 0 : bad(a, v, "a non-negative number");
    }
    case B_SG_MULTI:
        o->sg_multi = true;
        return 0;
    case B_SCRAPE:
        if ((rc = num(a, v, &o->cfg.scrape_interval_s)))
            return rc;
        return o->cfg.scrape_interval_s >= 0.01 || o->cfg.scrape_interval_s == 0
                   ? 0
                   : bad(a, v, "0 or a number of seconds >= 0.01");
    default:
        return -1;
    }
}

/* Parse step: vLLM-style words ("--flag value", "--flag=value", list
 * options taking the words up to the next option); returns 0, -1 after
 * --help, or the exit code. */
static int parse(int argc, char **argv, struct opts *o)
{
    int rc;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *v = NULL, *eq = NULL, keybuf[64];
        if (strncmp(a, "--", 2) == 0 && (eq = strchr(a, '=')) &&
            (size_t)(eq - a) < sizeof(keybuf)) {
            snprintf(keybuf, sizeof(keybuf), "%.*s", (int)(eq - a), a);
            v = eq + 1;
            a = keybuf;
        }
        const struct cli_opt *opt = cli_find(&cli_cmd_benchmark_client, a);
        if (!opt) {
            fprintf(stderr,
                    "magpie: error: unknown option '%s' for benchmark --base-url "
                    "(see magpie benchmark --base-url X --help)\n",
                    argv[i]);
            return EXIT_USAGE;
        }
        const char **slot = string_slot(opt->id, o);
        if (opt->id == 'h') {
            usage(stdout);
            return -1;
        } else if (parse_flag(opt->id, o)) {
            continue;
        } else if (opt->id == B_GSP_ORDERED || opt->id == B_FIXED || opt->id == B_TOKENIZE ||
                   opt->id == B_SG_MULTI) {
            (void)parse_workload_opt(opt->id, a, NULL, o);
            continue;
        } else if (opt->id == B_HEADER || opt->id == B_METADATA || opt->id == B_GOODPUT) {
            if ((rc = parse_list(opt->id, v, argc, argv, &i, o)))
                return rc;
            continue;
        }
        if (!v)
            v = i + 1 < argc ? argv[++i] : NULL;
        if (slot)
            *slot = v;
        else if ((rc = parse_workload_opt(opt->id, a, v, o)) >= 0) {
            if (rc)
                return rc;
        } else if ((rc = find_range(opt->id) ? parse_int_opt(opt->id, a, v, o)
                                             : parse_value_opt(opt->id, a, v, argv[i], o)))
            return rc;
    }
    return 0;
}

/* Sampling flags as a JSON object, with --extra-body merged over them. */
static int merged_extra(struct opts *o, char **out)
{
    *out = NULL;
    json_t *obj = json_object();
    for (int k = 0; k < 7; k++)
        if (o->sampling_set[k])
            json_object_set_new(obj, SAMPLING[k],
                                k == 1 ? json_integer((json_int_t)o->sampling[k])
                                       : json_real(o->sampling[k]));
    if (o->extra_body) {
        json_error_t je;
        json_t *e = json_loads(o->extra_body, 0, &je);
        if (!json_is_object(e)) {
            json_decref(e);
            json_decref(obj);
            fprintf(stderr, "magpie: error: --extra-body must be a JSON object%s%s\n",
                    e ? "" : ": ", e ? "" : je.text);
            return EXIT_USAGE;
        }
        json_object_update(obj, e);
        json_decref(e);
    }
    if (json_object_size(obj))
        *out = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    return 0;
}

static int write_file(const char *path, const struct mp_buf *b)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_fs_write_atomic(path, b->data ? b->data : "", b->len, &d);
    if (rc)
        return cli_report_error(&d, rc);
    return 0;
}

/* Validate step: server address, API, request ids, credentials, model and
 * request body; returns 0 or the exit code. */
static int client_setup(struct opts *o, bool *chat, const char **model_id)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    if (!o->cfg.base_url) {
        const char *env = getenv("BENCHMARK_BASE_URL");
        if (env && *env) {
            o->cfg.base_url = env;
        } else if (o->host || o->port) {
            snprintf(o->url_buf, sizeof(o->url_buf), "http://%s:%s",
                     o->host ? o->host : "127.0.0.1", o->port ? o->port : "8000");
            o->cfg.base_url = o->url_buf;
        } else {
            fprintf(stderr, "magpie: error: --base-url is required\n");
            return EXIT_USAGE;
        }
    }
    *chat = strstr(o->backend, "chat") != NULL;
    if (!*chat && strcmp(o->backend, "openai") != 0 && strcmp(o->backend, "vllm") != 0 &&
        strcmp(o->backend, "sglang-oai") != 0 && strcmp(o->backend, "sglang") != 0)
        return bad("--backend", o->backend, "openai, vllm, openai-chat or vllm-chat");
    if (o->cfg.endpoint && strstr(o->cfg.endpoint, "chat/completions"))
        *chat = true;
    else if (!o->cfg.endpoint || !strcmp(o->cfg.endpoint, "/v1/completions"))
        o->cfg.endpoint = *chat ? "/v1/chat/completions" : "/v1/completions";
    o->cfg.api = *chat ? MP_LOADGEN_API_CHAT : MP_LOADGEN_API_COMPLETIONS;
    if (!o->cfg.request_id_prefix) {
        /* like vLLM's bench-<8 hex>-: unique per run, no RNG state needed */
        uint64_t seed[2] = {mp_time_ns(), (uint64_t)getpid()};
        uint64_t h = mp_hash_bytes(seed, sizeof(seed));
        snprintf(o->prefix, sizeof(o->prefix), "bench-%08x-", (unsigned)(h ^ (h >> 32)));
        o->cfg.request_id_prefix = o->prefix;
    }
    const char *key = getenv("OPENAI_API_KEY");
    if (key && *key && o->cfg.n_headers < MP_LOADGEN_MAX_HEADERS) {
        snprintf(o->auth, sizeof(o->auth), "Authorization: Bearer %s", key);
        o->cfg.headers[o->cfg.n_headers++] = o->auth;
    }
    if (!o->cfg.model) {
        int rc = mp_loadgen_first_model(o->cfg.base_url, o->cfg.headers, o->cfg.n_headers,
                                        o->cfg.insecure, o->model_buf, sizeof(o->model_buf), &d);
        if (rc)
            return cli_report_error(&d, rc);
        o->cfg.model = o->model_buf;
    }
    *model_id = o->cfg.model;
    if (o->served)
        o->cfg.model = o->served;
    return 0;
}

/* The datasets of docs/workloads.md: 0, an MP_E* code (d says why), or
 * NOT_WORKLOAD for another name. Their output lengths are meant as given: ignore_eos. */
enum { NOT_WORKLOAD = 1 };

static int client_workload(struct opts *o, bool chat, struct mp_loadgen_dataset **ds,
                           struct mp_diag *d)
{
    const char *n = o->dataset;
    bool trace = !strcmp(n, "mooncake") || !strcmp(n, "mooncake_trace") || !strcmp(n, "burstgpt");
    if (trace && !o->dataset_path) {
        mp_diag_set(d, MP_EINVAL, "--dataset-name %s needs --dataset-path", n);
        return MP_EINVAL;
    }
    bool eos = o->cfg.ignore_eos;
    o->cfg.ignore_eos = true;
    o->pr.seed = o->gsp.seed = o->tr.seed = o->mt.seed = o->cfg.seed;
    o->pr.text = o->gsp.text = o->tr.text = chat;
    o->pr.vocab_first = o->gsp.vocab_first = o->tr.vocab_first = o->rnd.vocab_first;
    o->pr.vocab_size = o->gsp.vocab_size = o->tr.vocab_size = o->rnd.vocab_size;
    o->tr.path = o->dataset_path;
    o->tr.max_prompts = o->num_prompts_set ? o->num_prompts : 0;
    o->tr.output_len = o->custom_out;
    if (!strcmp(n, "prefix_repetition"))
        return mp_loadgen_dataset_prefix_repetition(&o->pr, o->num_prompts, ds, d);
    if (!strcmp(n, "generated-shared-prefix") || !strcmp(n, "gsp"))
        return mp_loadgen_dataset_shared_prefix(&o->gsp, o->gsp_per, ds, d);
    if (!strcmp(n, "mooncake") || !strcmp(n, "mooncake_trace"))
        return mp_loadgen_dataset_mooncake(&o->tr, ds, d);
    if (!strcmp(n, "burstgpt"))
        return mp_loadgen_dataset_burstgpt(&o->tr, ds, d);
    if (!strcmp(n, "multi_turn")) {
        o->mt.input_len = o->rnd.input_len;
        o->mt.output_len = o->rnd.output_len;
        return mp_loadgen_dataset_multi_turn(&o->mt, ds, d);
    }
    o->cfg.ignore_eos = eos;
    return NOT_WORKLOAD;
}

/* The request dataset; returns 0 or the exit code. */
static int client_dataset(struct opts *o, bool chat, struct mp_loadgen_dataset **ds)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc;
    if (!strcmp(o->dataset, "random")) {
        o->rnd.text = chat;
        o->cfg.ignore_eos = true; /* vLLM forces it for random on OpenAI backends */
        rc = mp_loadgen_dataset_random(&o->rnd, o->num_prompts, ds, &d);
    } else if (!strcmp(o->dataset, "sharegpt") || !strcmp(o->dataset, "jsonl") ||
               !strcmp(o->dataset, "custom")) {
        if (!o->dataset_path) {
            fprintf(stderr, "magpie: error: --dataset-name %s needs --dataset-path\n", o->dataset);
            return EXIT_USAGE;
        }
        bool sg = !strcmp(o->dataset, "sharegpt");
        struct mp_loadgen_file_opts fo = {o->dataset_path, sg ? o->sharegpt_out : o->custom_out,
                                          o->cfg.seed, sg ? o->shuffle : false, o->oversample};
        if (sg && o->sg_multi)
            rc = mp_loadgen_dataset_sharegpt_sessions(&fo, o->num_prompts, o->mt.think_ms, ds, &d);
        else
            rc = sg ? mp_loadgen_dataset_sharegpt(&fo, o->num_prompts, ds, &d)
                    : mp_loadgen_dataset_jsonl(&fo, o->num_prompts, ds, &d);
    } else if ((rc = client_workload(o, chat, ds, &d)) == NOT_WORKLOAD) {
        return bad("--dataset-name", o->dataset,
                   "random, sharegpt, jsonl, prefix_repetition, generated-shared-prefix, "
                   "mooncake, burstgpt or multi_turn");
    }
    if (!rc && o->cfg.fixed_schedule && !(*ds)->arrival_s) {
        fprintf(stderr,
                "magpie: error: --fixed-schedule needs a dataset with recorded arrival times "
                "(--dataset-name mooncake with timestamps, or burstgpt), not %s\n",
                (*ds)->name);
        return EXIT_USAGE;
    }
    if (!rc && o->tokenize) {
        size_t counted = 0;
        rc = mp_loadgen_tokenize(&o->cfg, *ds, &counted, &d);
    }
    return rc ? cli_report_error(&d, rc) : 0;
}

static void client_print_load(const struct opts *o)
{
    if (isinf(o->cfg.request_rate))
        printf("Traffic request rate: inf\n");
    else
        printf("Traffic request rate: %g\n", o->cfg.request_rate);
    printf("Burstiness factor: %g (%s)\n", o->cfg.burstiness,
           o->cfg.burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
    if (o->cfg.max_concurrency)
        printf("Maximum request concurrency: %d\n", o->cfg.max_concurrency);
    else
        printf("Maximum request concurrency: None\n");
}

/* Emit step on stdout: the JSON object or the summary table. */
static int client_emit(const struct opts *o, const struct mp_loadgen_result *res,
                       const struct mp_loadgen_metrics *m, const struct mp_loadgen_failures *fl,
                       bool judged)
{
    struct mp_buf out;
    mp_buf_init(&out, 0);
    int rc;
    if (o->json) {
        rc = mp_buf_puts(&out, "{\"success\": ");
        rc |= mp_buf_puts(&out, judged ? "true" : "false");
        rc |= mp_buf_printf(
            &out, ", \"completed\": %zu, \"failed\": %zu, \"metrics\": ", m->completed, m->failed);
        rc |= mp_loadgen_magpie_json(m, &out);
        rc |= mp_buf_puts(&out, ", \"failures\": ");
        rc |= mp_loadgen_failures_json(fl, &o->fail_limit, &out);
        rc |= mp_buf_puts(&out, "}\n");
    } else {
        rc = mp_loadgen_summary(res, m, &out);
    }
    if (!rc) {
        fwrite(out.data, 1, out.len, stdout);
        fflush(stdout);
    }
    mp_buf_fini(&out);
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting output\n");
        return EXIT_FAIL;
    }
    return 0;
}

/* One generated document written to path; returns 0 or the exit code. */
typedef int (*client_doc_fn)(const struct mp_loadgen_result *res,
                             const struct mp_loadgen_metrics *m,
                             const struct mp_loadgen_report_info *info, struct mp_buf *b);

static int requests_doc(const struct mp_loadgen_result *res, const struct mp_loadgen_metrics *m,
                        const struct mp_loadgen_report_info *info, struct mp_buf *b)
{
    (void)m;
    (void)info;
    return mp_loadgen_requests_jsonl(res, b);
}

static int write_doc(client_doc_fn fn, const struct mp_loadgen_result *res,
                     const struct mp_loadgen_metrics *m, const struct opts *o, const char *path)
{
    struct mp_buf aux;
    mp_buf_init(&aux, 0);
    int rc = 0;
    if (fn(res, m, &o->info, &aux) || (rc = write_file(path, &aux)))
        rc = rc ? rc : EXIT_FAIL;
    mp_buf_fini(&aux);
    return rc;
}

/* --save-result: the result JSON and, unless written elsewhere, the
 * requests JSONL and the HTML page beside it. */
static int client_save_result(const struct opts *o, const struct mp_loadgen_result *res,
                              const struct mp_loadgen_metrics *m, const char *model_id)
{
    char path[8300], base[4096], side[8400];
    if (o->result_filename) {
        snprintf(base, sizeof(base), "%s", o->result_filename);
    } else {
        const char *bn = strrchr(model_id, '/');
        char rate[64], conc[64] = "";
        if (isinf(o->cfg.request_rate))
            snprintf(rate, sizeof(rate), "inf");
        else
            snprintf(rate, sizeof(rate), "%.17g%s", o->cfg.request_rate,
                     o->cfg.request_rate == floor(o->cfg.request_rate) ? ".0" : "");
        if (o->cfg.max_concurrency)
            snprintf(conc, sizeof(conc), "-concurrency%d", o->cfg.max_concurrency);
        snprintf(base, sizeof(base), "%s-%sqps%s-%s-%s.json",
                 o->info.label ? o->info.label : o->backend, rate, conc, bn ? bn + 1 : model_id,
                 o->date);
    }
    int rc;
    if (o->result_dir) {
        struct mp_diag d;
        mp_diag_clear(&d);
        if ((rc = mp_fs_mkdirs(o->result_dir, &d)))
            return cli_report_error(&d, rc);
        snprintf(path, sizeof(path), "%s/%s", o->result_dir, base);
    } else {
        snprintf(path, sizeof(path), "%s", base);
    }
    if ((rc = write_doc(mp_loadgen_result_json, res, m, o, path)))
        return rc;
    size_t pl = strlen(path);
    if (pl > 5 && !strcmp(path + pl - 5, ".json"))
        path[pl - 5] = 0;
    if (!o->save_requests) {
        snprintf(side, sizeof(side), "%s.requests.jsonl", path);
        if ((rc = write_doc(requests_doc, res, m, o, side)))
            return rc;
    }
    if (!o->html) {
        snprintf(side, sizeof(side), "%s.html", path);
        if ((rc = write_doc(mp_loadgen_html, res, m, o, side)))
            return rc;
    }
    return 0;
}

/* The exit status from the failures and --max-failed-requests. */
static int client_verdict(const struct opts *o, const struct mp_loadgen_metrics *m,
                          const struct mp_loadgen_failures *fl, bool judged)
{
    char ls[48];
    if (m->completed == 0) {
        fprintf(stderr, "magpie: error: all %zu requests failed\n", m->failed);
        return EXIT_FAIL;
    }
    if (!judged) {
        mp_loadgen_fail_limit_format(&o->fail_limit, ls, sizeof(ls));
        fprintf(stderr,
                "magpie: error: %zu of %zu requests failed (%.2f%%), more than "
                "--max-failed-requests %s allows (reasons above)\n",
                fl->failed, fl->total, fl->ratio * 100, ls);
        return EXIT_FAIL;
    }
    if (fl->failed) {
        mp_loadgen_fail_limit_format(&o->fail_limit, ls, sizeof(ls));
        fprintf(stderr,
                "magpie: warning: %zu of %zu requests failed (%.2f%%), within "
                "--max-failed-requests %s; metrics cover the %zu successful ones\n",
                fl->failed, fl->total, fl->ratio * 100, ls, m->completed);
    }
    return EXIT_OK;
}

/* Run, emit and save steps after a successful setup. */
static int client_run(struct opts *o, const struct cli_global *g,
                      const struct mp_loadgen_dataset *ds, const char *model_id,
                      struct mp_loadgen_result **res)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    struct prog pg = {!o->quiet && !o->json && !(g && g->quiet) && isatty(STDERR_FILENO), false};
    o->cfg.on_progress = on_progress;
    o->cfg.progress_user = &pg;
    o->cfg.keep_text = o->info.save_detailed;
    if (!o->json)
        client_print_load(o);
    fflush(stdout);
    int rc = mp_loadgen_run(&o->cfg, ds, res, &d);
    if (pg.drawn)
        fprintf(stderr, "\r\033[K");
    if (rc)
        return cli_report_error(&d, rc);
    struct mp_loadgen_metrics m;
    if (mp_loadgen_metrics_compute(*res, &o->mo, &m)) {
        fprintf(stderr, "magpie: error: out of memory computing metrics\n");
        return EXIT_FAIL;
    }
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(o->date, sizeof(o->date), "%Y%m%d-%H%M%S", &tmv);
    o->info.date = o->date;
    o->info.backend = o->backend;
    o->info.model_id = model_id;
    o->info.dataset = ds->name;
    o->info.num_prompts = ds->n; /* = --num-prompts, except for gsp, traces and sessions */
    o->info.fail_limit = &o->fail_limit;
    struct mp_loadgen_failures fl;
    mp_loadgen_failures(*res, &fl);
    /* with no success there is nothing to judge, whatever the limit */
    bool judged = m.completed > 0 && mp_loadgen_fail_limit_ok(&o->fail_limit, fl.failed, fl.total);
    if ((rc = client_emit(o, *res, &m, &fl, judged)))
        return rc;
    if (o->save_result && (rc = client_save_result(o, *res, &m, model_id)))
        return rc;
    if (o->save_requests && (rc = write_doc(requests_doc, *res, &m, o, o->save_requests)))
        return rc;
    if (o->html && (rc = write_doc(mp_loadgen_html, *res, &m, o, o->html)))
        return rc;
    return client_verdict(o, &m, &fl, judged);
}

int cli_bench_client(int argc, char **argv, const struct cli_global *g)
{
    struct opts o;
    memset(&o, 0, sizeof(o));
    mp_loadgen_config_default(&o.cfg);
    mp_loadgen_random_opts_default(&o.rnd);
    mp_loadgen_metrics_opts_default(&o.mo);
    o.dataset = "random";
    o.num_prompts = 1000;
    o.shuffle = o.oversample = true;
    o.backend = "openai";
    mp_loadgen_prefix_opts_default(&o.pr);
    mp_loadgen_prefix_opts_default(&o.gsp);
    o.gsp.num_groups = 64; /* SGLang's defaults */
    o.gsp_per = 16;
    o.gsp.prefix_len = 2048;
    o.gsp.suffix_len = 128;
    o.gsp.output_len = 256;
    mp_loadgen_trace_opts_default(&o.tr);
    o.mt.num_sessions = 100;
    o.mt.turns = 3;
    char *extra = NULL;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_loadgen_result *res = NULL;
    const char *model_id = NULL;
    bool chat = false;
    int rc = parse(argc, argv, &o), exit_code;
    if (rc) {
        exit_code = rc < 0 ? EXIT_OK : rc;
        goto done;
    }
    raise_nofile();
    if ((exit_code = client_setup(&o, &chat, &model_id)))
        goto done;
    if ((exit_code = merged_extra(&o, &extra)))
        goto done;
    o.cfg.extra_body = extra;
    if ((exit_code = client_dataset(&o, chat, &ds)))
        goto done;
    exit_code = client_run(&o, g, ds, model_id, &res);
done:
    for (int i = 0; i < o.cfg.n_headers; i++)
        if (o.cfg.headers[i] != o.auth)
            free((void *)o.cfg.headers[i]);
    free(extra);
    mp_loadgen_result_free(res);
    mp_loadgen_dataset_free(ds);
    return exit_code;
}
