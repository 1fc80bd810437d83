/* MCP tool benchmark_sweep: `magpie benchmark sweep` against a running
 * server (serve/sweep.c): a grid of loads, the saturation knee, the SLA
 * search, or interleaved baseline/candidate runs. The workload is given as
 * fields, each mapped onto one flag of `benchmark --base-url` (no free-form
 * arguments reach the runs). Returns sweep.json (and the candidate's, and
 * the paired comparison). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <magpie/serve.h>
#include <magpie/sweep.h>

#include "../mcp_int.h"

#define MAX_LOADS 64

/* The workload fields and the client flag each one becomes. */
static const struct {
    const char *key, *flag;
} WORKLOAD[] = {
    {"model", "--model"},
    {"endpoint", "--endpoint"},
    {"backend", "--backend"},
    {"dataset_name", "--dataset-name"},
    {"dataset_path", "--dataset-path"},
    {"num_prompts", "--num-prompts"},
    {"random_input_len", "--random-input-len"},
    {"random_output_len", "--random-output-len"},
    {"seed", "--seed"},
    {"num_warmups", "--num-warmups"},
    {"engine_metrics_interval", "--engine-metrics-interval"},
};

#define N_WORKLOAD (sizeof(WORKLOAD) / sizeof(WORKLOAD[0]))

struct sweep_call {
    struct mp_serve_sweep_opts o;
    int conc[MAX_LOADS];
    double rates[MAX_LOADS];
    struct mp_sweep_sla sla[MP_SWEEP_MAX_SLA];
    const char *fwd[2 * N_WORKLOAD];
    char vals[N_WORKLOAD][32];
};

static int workload_args(json_t *args, struct sweep_call *c)
{
    for (size_t i = 0; i < N_WORKLOAD; i++) {
        json_t *v = json_object_get(args, WORKLOAD[i].key);
        if (!v || json_is_null(v))
            continue;
        c->fwd[c->o.n_client_args++] = WORKLOAD[i].flag;
        if (json_is_string(v)) {
            c->fwd[c->o.n_client_args++] = json_string_value(v);
        } else if (json_is_real(v)) {
            snprintf(c->vals[i], sizeof(c->vals[i]), "%.17g", json_real_value(v));
            c->fwd[c->o.n_client_args++] = c->vals[i];
        } else {
            snprintf(c->vals[i], sizeof(c->vals[i]), "%lld", (long long)json_integer_value(v));
            c->fwd[c->o.n_client_args++] = c->vals[i];
        }
    }
    return 0;
}

static int load_lists(json_t *args, struct sweep_call *c, json_t **result)
{
    json_t *conc = json_object_get(args, "max_concurrency"),
           *rates = json_object_get(args, "request_rate");
    for (size_t i = 0; i < json_array_size(conc); i++) {
        double v = json_number_value(json_array_get(conc, i));
        if (!(v >= 0 && v <= 1e6 && v == floor(v)))
            return mcp_fail(result, "max_concurrency[%zu]: want a whole number 0..1000000", i);
        c->conc[c->o.n_conc++] = (int)v;
    }
    for (size_t i = 0; i < json_array_size(rates); i++) {
        double v = json_number_value(json_array_get(rates, i));
        if (!(v > 0) || !isfinite(v))
            return mcp_fail(result,
                            "request_rate[%zu]: want a rate > 0 (leave it out for all "
                            "at once)",
                            i);
        c->rates[c->o.n_rates++] = v;
    }
    json_t *sla = json_object_get(args, "sla");
    for (size_t i = 0; i < json_array_size(sla); i++) {
        struct mp_diag d;
        mp_diag_clear(&d);
        if (mp_sweep_sla_parse(json_string_value(json_array_get(sla, i)), &c->sla[c->o.n_sla], &d))
            return mcp_fail_diag(result, "sla", &d);
        c->o.n_sla++;
    }
    const char *search = mcp_str(args, "search");
    if (search) {
        struct mp_sweep_search s;
        struct mp_diag d;
        mp_diag_clear(&d);
        if (mp_sweep_search_parse(search, &s, &d))
            return mcp_fail_diag(result, "search", &d);
        c->o.search = true;
        c->o.search_var = s.var;
        c->o.search_lo = s.lo;
        c->o.search_hi = s.hi;
    }
    return 0;
}

static json_t *read_json(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return json_load_file(path, 0, NULL);
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    struct sweep_call *c = calloc(1, sizeof(*c));
    if (!c)
        return mcp_fail(result, "out of memory");
    mp_serve_sweep_opts_default(&c->o);
    c->o.exe = mcp_self_exe();
    c->o.base_url = mcp_str(args, "base_url");
    c->o.cand_url = mcp_str(args, "candidate_url");
    c->o.out_dir = mcp_str(args, "output_dir");
    c->o.conc = c->conc;
    c->o.rates = c->rates;
    c->o.sla = c->sla;
    c->o.client_args = c->fwd;
    c->o.repeat = (int)mcp_int(args, "repeat");
    c->o.gpus = (int)mcp_int(args, "gpus");
    c->o.min_gain_pct = mcp_num(args, "min_gain_pct");
    c->o.run_all = mcp_bool(args, "run_all");
    c->o.on_line = mcp_line_progress;
    c->o.user = w;
    char dflt[128];
    if (!c->o.out_dir) {
        time_t now = time(NULL);
        struct tm tmv;
        localtime_r(&now, &tmv);
        strftime(dflt, sizeof(dflt), "./results/sweeps/sweep_%Y%m%d_%H%M%S", &tmv);
        c->o.out_dir = dflt;
    }
    int rc = load_lists(args, c, result);
    if (!rc)
        rc = workload_args(args, c);
    const char *limit = mcp_str(args, "max_failed_requests");
    struct mp_diag d;
    mp_diag_clear(&d);
    if (!rc && limit && mp_loadgen_fail_limit_parse(limit, &c->o.fail_limit, &d))
        rc = mcp_fail_diag(result, "max_failed_requests", &d);
    if (!rc && (rc = mp_serve_sweep_run(&c->o, NULL, NULL, &d)))
        rc = mcp_fail_diag(result, "sweep", &d);
    if (!rc) {
        json_t *res = json_object();
        json_object_set_new(res, "success", json_true());
        json_object_set_new(res, "output_dir", json_string(c->o.out_dir));
        if (c->o.cand_url) {
            char b[4200];
            snprintf(b, sizeof(b), "%s/baseline", c->o.out_dir);
            json_object_set_new(res, "sweep", read_json(b, "sweep.json"));
            snprintf(b, sizeof(b), "%s/candidate", c->o.out_dir);
            json_object_set_new(res, "candidate_sweep", read_json(b, "sweep.json"));
            json_object_set_new(res, "compare", read_json(c->o.out_dir, "compare.json"));
        } else {
            json_object_set_new(res, "sweep", read_json(c->o.out_dir, "sweep.json"));
        }
        *result = res;
    }
    free(c);
    return rc;
}

static const struct mcp_param params[] = {
    {"base_url", MT_STR, true, NULL, NULL, 0, 0, "the running OpenAI-compatible server"},
    {"candidate_url", MT_STR, false, NULL, NULL, 0, 0,
     "a second server, run interleaved with the first (paired verdicts in compare)"},
    {"output_dir", MT_STR, false, NULL, NULL, 0, 0,
     "where the sweep goes (default ./results/sweeps/sweep_<date>); must not hold one"},
    {"max_concurrency", MT_NUMLIST, false, NULL, NULL, 0, MAX_LOADS,
     "concurrency caps to climb, e.g. [1, 2, 4, 8, 16]"},
    {"request_rate", MT_NUMLIST, false, NULL, NULL, 0, MAX_LOADS,
     "request rates (req/s); left out: all at once"},
    {"repeat", MT_INT, false, "1", NULL, 0, 0, "runs per point (1..1000)"},
    {"run_all", MT_BOOL, false, "false", NULL, 0, 0, "run the whole grid, past saturation too"},
    {"min_gain_pct", MT_NUM, false, "5", NULL, 0, 0,
     "a climb step still rises when output throughput grows by more than this"},
    {"max_failed_requests", MT_STR, false, NULL, NULL, 0, 0,
     "failed requests a point may have: N or P% (default 0)"},
    {"sla", MT_STRLIST, false, NULL, NULL, 0, MP_SWEEP_MAX_SLA,
     "limits such as \"p99_ttft_ms<=150\" (with search)"},
    {"search", MT_STR, false, NULL, NULL, 0, 0,
     "max_concurrency:LO:HI or request_rate:LO:HI: the highest load meeting every sla"},
    {"gpus", MT_INT, false, "1", NULL, 0, 0, "GPUs serving, for tok/s per GPU"},
    {"model", MT_STR, false, NULL, NULL, 0, 0, "model name (default: the server's first)"},
    {"endpoint", MT_STR, false, NULL, NULL, 0, 0, "/v1/completions or /v1/chat/completions"},
    {"backend", MT_STR, false, NULL, NULL, 0, 0, "openai, openai-chat, vllm, vllm-chat"},
    {"dataset_name", MT_STR, false, NULL, NULL, 0, 0, "random (default), sharegpt, jsonl, ..."},
    {"dataset_path", MT_STR, false, NULL, NULL, 0, 0, "for file datasets"},
    {"num_prompts", MT_INT, false, NULL, NULL, 0, 0, "requests per run (default 1000)"},
    {"random_input_len", MT_INT, false, NULL, NULL, 0, 0, "prompt tokens (random dataset)"},
    {"random_output_len", MT_INT, false, NULL, NULL, 0, 0, "output tokens (random dataset)"},
    {"seed", MT_INT, false, NULL, NULL, 0, 0, "arrival schedule and dataset seed"},
    {"num_warmups", MT_INT, false, NULL, NULL, 0, 0, "unmeasured requests before each run"},
    {"engine_metrics_interval", MT_NUM, false, NULL, NULL, 0, 0,
     "scrape the server's /metrics every this many seconds during each run; each point then "
     "has engine_metrics (queue, KV-cache, prefix hits)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_benchmark_sweep = {
    .name = "benchmark_sweep",
    .title = "Serving sweep: knee, SLA point, frontier",
    .desc = "A serving benchmark over a grid of loads against a running server "
            "(`magpie benchmark sweep`): every metric per point with a bootstrap interval, the "
            "saturation knee (throughput stops rising while latency grows), the highest load "
            "meeting latency SLAs (bisection), and with candidate_url interleaved A/B runs "
            "with paired verdicts. Writes sweep.json, sweep.csv and pareto.html.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_GRACEFUL,
    .result_desc = "`{success, output_dir, sweep}` (sweep.json: points[{name, max_concurrency, "
                   "request_rate, runs, metrics{NAME: {value, ci_lo, ci_hi}}, sla}], knee, sla, "
                   "notes); with candidate_url also `candidate_sweep` and `compare`.",
};
