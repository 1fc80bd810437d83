/* Report writers: vLLM's --save-result JSON (same keys, same order, so
 * dashboards that read vLLM results read ours), per-request JSONL with raw
 * event timestamps, Magpie's throughput/latency objects, and the terminal
 * summary with vLLM's labels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

static int kd(struct mp_buf *b, bool *first, const char *key, double v)
{
    int rc = mp_buf_printf(b, "%s\"%s\": ", *first ? "" : ", ", key);
    *first = false;
    return rc | mp_json_double(b, v);
}

static int ki(struct mp_buf *b, bool *first, const char *key, long long v)
{
    int rc = mp_buf_printf(b, "%s\"%s\": %lld", *first ? "" : ", ", key, v);
    *first = false;
    return rc;
}

static int ks(struct mp_buf *b, bool *first, const char *key, const char *v)
{
    int rc = mp_buf_printf(b, "%s\"%s\": ", *first ? "" : ", ", key);
    *first = false;
    if (!v)
        return rc | mp_buf_puts(b, "null");
    return rc | mp_json_str(b, v, strlen(v));
}

static int kraw(struct mp_buf *b, bool *first, const char *key, const char *raw)
{
    int rc = mp_buf_printf(b, "%s\"%s\": %s", *first ? "" : ", ", key, raw);
    *first = false;
    return rc;
}

/* Python's str(p) for a percentile: "99", "99.9" */
static void pct_word(double p, char *buf, size_t len)
{
    if (p == floor(p))
        snprintf(buf, len, "%lld", (long long)p);
    else
        mp_fmt_pyfloat(p, buf, len);
}

static double rec_ttft_s(const struct mp_loadgen_record *x)
{
    return x->success ? (double)(x->event_ns[0] - x->start_ns) / 1e9 : 0.0;
}

static double rec_latency_s(const struct mp_loadgen_record *x)
{
    return x->success ? (double)(x->event_ns[x->n_events - 1] - x->start_ns) / 1e9 : 0.0;
}

static double rec_queue_s(const struct mp_loadgen_record *x)
{
    return x->start_ns > x->arrival_ns ? (double)(x->start_ns - x->arrival_ns) / 1e9 : 0.0;
}

static int stat_keys(struct mp_buf *b, bool *first, const struct mp_loadgen_metrics *m, int k)
{
    const struct mp_loadgen_stat *st = &m->stat[k];
    const char *name = mp_loadgen_metric_name(k);
    char key[96], pw[40];
    int rc = 0;
    snprintf(key, sizeof(key), "mean_%s_ms", name);
    rc |= kd(b, first, key, st->mean);
    snprintf(key, sizeof(key), "median_%s_ms", name);
    rc |= kd(b, first, key, st->median);
    snprintf(key, sizeof(key), "std_%s_ms", name);
    rc |= kd(b, first, key, st->std);
    for (int i = 0; i < m->opts.n_pcts; i++) {
        pct_word(m->opts.pcts[i], pw, sizeof(pw));
        snprintf(key, sizeof(key), "p%s_%s_ms", pw, name);
        rc |= kd(b, first, key, st->pct[i]);
    }
    return rc;
}

struct reason {
    const char *s;
    size_t n, count;
};

/* Distinct failure reasons (first 32), most frequent first. */
static size_t reasons(const struct mp_loadgen_result *r, struct reason *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) {
        const char *e = r->recs[i].error;
        if (r->recs[i].success || !e)
            continue;
        size_t n = strlen(e);
        if (n > 160)
            n = 160;
        size_t j;
        for (j = 0; j < k; j++)
            if (out[j].n == n && memcmp(out[j].s, e, n) == 0)
                break;
        if (j < k)
            out[j].count++;
        else if (k < max)
            out[k++] = (struct reason){e, n, 1};
    }
    for (size_t a = 1; a < k; a++)
        for (size_t b2 = a; b2 > 0 && out[b2].count > out[b2 - 1].count; b2--) {
            struct reason t = out[b2];
            out[b2] = out[b2 - 1];
            out[b2 - 1] = t;
        }
    return k;
}

/* the run's settings and totals, as vLLM's result file has them */
static int rj_totals(struct mp_buf *b, bool *f, const struct mp_loadgen_result *r,
                     const struct mp_loadgen_metrics *m, const struct mp_loadgen_report_info *info)
{
    int rc = 0;
    rc |= ks(b, f, "date", info->date);
    rc |= ks(b, f, "endpoint_type", info->backend);
    rc |= ks(b, f, "backend", info->backend);
    rc |= ks(b, f, "label", info->label);
    rc |= ks(b, f, "model_id", info->model_id);
    rc |= ks(b, f, "tokenizer_id", info->tokenizer_id);
    rc |= ki(b, f, "num_prompts", (long long)info->num_prompts);
    for (int i = 0; i < info->n_metadata; i++) {
        const char *kv = info->metadata[i], *eq = strchr(kv, '=');
        if (!eq)
            continue;
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        rc |= mp_buf_puts(b, ", ");
        rc |= mp_json_str(b, key, strlen(key));
        rc |= mp_buf_puts(b, ": ");
        rc |= mp_json_str(b, eq + 1, strlen(eq + 1));
    }
    if (isinf(r->request_rate))
        rc |= ks(b, f, "request_rate", "inf");
    else
        rc |= kd(b, f, "request_rate", r->request_rate);
    rc |= kd(b, f, "burstiness", r->burstiness);
    if (r->max_concurrency > 0)
        rc |= ki(b, f, "max_concurrency", r->max_concurrency);
    else
        rc |= kraw(b, f, "max_concurrency", "null");
    rc |= kd(b, f, "duration", m->duration_s);
    rc |= ki(b, f, "completed", (long long)m->completed);
    rc |= ki(b, f, "failed", (long long)m->failed);
    rc |= ki(b, f, "total_input_tokens", m->total_input);
    rc |= ki(b, f, "total_output_tokens", m->total_output);
    rc |= kd(b, f, "request_throughput", m->request_throughput);
    if (isnan(m->request_goodput))
        rc |= kraw(b, f, "request_goodput", "null");
    else
        rc |= kd(b, f, "request_goodput", m->request_goodput);
    rc |= kd(b, f, "output_throughput", m->output_throughput);
    rc |= kd(b, f, "total_token_throughput", m->total_token_throughput);
    return rc;
}

/* save_detailed: input and output lengths, TTFTs and ITLs per request (rc:
 * the result so far; the ITLs stop at the first failure) */
static int rj_detailed_lens(struct mp_buf *b, const struct mp_loadgen_result *r, int rc)
{
    rc |= mp_buf_puts(b, ", \"input_lens\": [");
    for (size_t i = 0; i < r->n; i++)
        rc |= mp_buf_printf(b, i ? ", %d" : "%d", r->recs[i].prompt_len);
    rc |= mp_buf_puts(b, "], \"output_lens\": [");
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        int nout = !x->success ? 0 : x->output_tokens > 0 ? x->output_tokens : (int)x->n_events;
        rc |= mp_buf_printf(b, i ? ", %d" : "%d", nout);
    }
    rc |= mp_buf_puts(b, "], \"ttfts\": [");
    for (size_t i = 0; i < r->n; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_double(b, rec_ttft_s(&r->recs[i]));
    }
    rc |= mp_buf_puts(b, "], \"itls\": [");
    for (size_t i = 0; i < r->n && !rc; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        rc |= mp_buf_puts(b, i ? ", [" : "[");
        for (uint32_t j = 1; x->success && j < x->n_events; j++) {
            rc |= mp_buf_puts(b, j > 1 ? ", " : "");
            rc |= mp_json_double(b, (double)(x->event_ns[j] - x->event_ns[j - 1]) / 1e9);
        }
        rc |= mp_buf_putc(b, ']');
    }
    rc |= mp_buf_putc(b, ']');
    return rc;
}

/* latencies and queue times per request; with save_detailed also start
 * times, generated texts and errors */
static int rj_per_request(struct mp_buf *b, const struct mp_loadgen_result *r, bool det)
{
    int rc = mp_buf_puts(b, ", \"latencies\": [");
    for (size_t i = 0; i < r->n; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_double(b, rec_latency_s(&r->recs[i]));
    }
    rc |= mp_buf_putc(b, ']');
    if (det) {
        rc |= mp_buf_puts(b, ", \"start_times\": [");
        for (size_t i = 0; i < r->n; i++) {
            rc |= mp_buf_puts(b, i ? ", " : "");
            rc |= mp_json_double(b, (double)r->recs[i].start_ns / 1e9);
        }
        rc |= mp_buf_putc(b, ']');
    }
    rc |= mp_buf_puts(b, ", \"queue_times\": [");
    for (size_t i = 0; i < r->n; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_double(b, rec_queue_s(&r->recs[i]));
    }
    rc |= mp_buf_putc(b, ']');
    if (det) {
        rc |= mp_buf_puts(b, ", \"generated_texts\": [");
        for (size_t i = 0; i < r->n; i++) {
            const char *t = r->recs[i].text;
            /* stored still JSON-escaped, exactly as the server sent it */
            rc |= mp_buf_printf(b, "%s\"%s\"", i ? ", " : "", t ? t : "");
        }
        rc |= mp_buf_puts(b, "], \"errors\": [");
        for (size_t i = 0; i < r->n; i++) {
            const char *e = r->recs[i].error;
            rc |= mp_buf_puts(b, i ? ", " : "");
            rc |= mp_json_str(b, e ? e : "", e ? strlen(e) : 0);
        }
        rc |= mp_buf_putc(b, ']');
    }
    return rc;
}

/* the datasets that came before docs/workloads.md, whose result files keep
 * their keys */
static bool classic(const struct mp_loadgen_result *r, const struct mp_loadgen_report_info *info)
{
    static const char *const old[] = {"random", "sharegpt", "jsonl"};
    bool known = false;
    for (size_t k = 0; k < 3; k++)
        known |= info->dataset && !strcmp(info->dataset, old[k]);
    return known && !r->sessions && !r->fixed_schedule && !r->tokenized && !r->n_scrapes;
}

/* docs/workloads.md: where prompt lengths came from, sessions, the
 * recorded schedule and the engine's metrics (none for the classic runs) */
static int rj_workload(struct mp_buf *b, const struct mp_loadgen_result *r,
                       const struct mp_loadgen_report_info *info)
{
    if (classic(r, info))
        return 0;
    size_t exact = 0, usage = 0, est = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success)
            continue;
        if (x->prompt_exact && (!x->usage_seen || x->prompt_len == x->expected_prompt_len))
            exact++;
        else if (x->usage_seen)
            usage++;
        else
            est++;
    }
    bool f = false;
    int rc = mp_buf_puts(b, ", \"prompt_lengths\": {");
    bool g = true;
    rc |= ki(b, &g, "exact", (long long)exact);
    rc |= ki(b, &g, "from_usage", (long long)usage);
    rc |= ki(b, &g, "estimated", (long long)est);
    rc |= ki(b, &g, "tokenized_by_server", r->tokenized ? (long long)r->tokenized : 0);
    rc |= mp_buf_putc(b, '}');
    rc |= kraw(b, &f, "fixed_schedule", r->fixed_schedule ? "true" : "false");
    if (r->sessions) {
        rc |= mp_buf_puts(b, ", \"sessions\": ");
        rc |= loadgen_sessions_json(r, b);
    }
    if (r->n_scrapes || r->scrape_error[0]) {
        rc |= mp_buf_puts(b, ", \"engine_metrics\": ");
        rc |= loadgen_scrape_json(r, b);
    }
    return rc;
}

/* magpie's additions, in one object so vLLM's keys stay untouched */
static int rj_magpie(struct mp_buf *b, const struct mp_loadgen_result *r,
                     const struct mp_loadgen_metrics *m, const struct mp_loadgen_report_info *info)
{
    int rc = mp_buf_puts(b, ", \"magpie\": {");
    bool g = true;
    rc |= ks(b, &g, "version", MP_VERSION);
    rc |= ks(b, &g, "dataset", info->dataset);
    rc |= ki(b, &g, "warmup_completed", (long long)(r->warmup_done - r->warmup_failed));
    rc |= ki(b, &g, "warmup_failed", (long long)r->warmup_failed);
    rc |= ki(b, &g, "requests_without_usage", (long long)m->usage_missing);
    rc |= ki(b, &g, "prompt_len_mismatches", (long long)m->prompt_mismatch);
    rc |= ki(b, &g, "multi_token_events", (long long)m->multi_token_events);
    rc |= kd(b, &g, "mean_concurrency", m->mean_concurrency);
    rc |= kd(b, &g, "max_dispatch_lag_ms", r->max_dispatch_lag_ms);
    rc |= ki(b, &g, "t0_monotonic_ns", (long long)r->t0_ns);
    for (int k = 0; k < MP_LOADGEN_N_METRICS; k++) /* every metric, selected or not */
        if (m->have[k])
            rc |= stat_keys(b, &g, m, k);
    const struct mp_loadgen_stat *it = &m->itl_per_token;
    rc |= mp_buf_puts(b, ", \"itl_per_token\": {");
    bool h = true;
    rc |= ki(b, &h, "n", (long long)it->n);
    rc |= kd(b, &h, "mean_ms", it->mean);
    rc |= kd(b, &h, "median_ms", it->median);
    rc |= kd(b, &h, "std_ms", it->std);
    rc |= kd(b, &h, "p99_ms", it->p99);
    rc |= mp_buf_puts(b, "}, \"failure_reasons\": [");
    struct reason rs[32];
    size_t nr = reasons(r, rs, 32);
    for (size_t i = 0; i < nr; i++) {
        rc |= mp_buf_puts(b, i ? ", {\"reason\": " : "{\"reason\": ");
        rc |= mp_json_str(b, rs[i].s, rs[i].n);
        rc |= mp_buf_printf(b, ", \"count\": %zu}", rs[i].count);
    }
    struct mp_loadgen_failures fl;
    mp_loadgen_failures(r, &fl);
    rc |= mp_buf_puts(b, "], \"failures\": ");
    rc |= mp_loadgen_failures_json(&fl, info->fail_limit, b);
    rc |= rj_workload(b, r, info);
    rc |= mp_buf_putc(b, '}');
    return rc;
}

int mp_loadgen_result_json(const struct mp_loadgen_result *r, const struct mp_loadgen_metrics *m,
                           const struct mp_loadgen_report_info *info, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = 0;
    bool f = true;
    rc |= mp_buf_putc(b, '{');
    rc |= rj_totals(b, &f, r, m, info);
    bool det = info->save_detailed;
    if (det)
        rc = rj_detailed_lens(b, r, rc);
    rc |= rj_per_request(b, r, det);
    rc |= kd(b, &f, "max_output_tokens_per_s", m->max_output_tokens_per_s);
    rc |= ki(b, &f, "max_concurrent_requests", m->max_concurrent_requests);
    rc |= kd(b, &f, "rtfx", 0.0);
    for (int k = 0; k < MP_LOADGEN_N_METRICS; k++)
        if ((m->opts.selected & (1u << k)) && m->have[k])
            rc |= stat_keys(b, &f, m, k);
    rc |= rj_magpie(b, r, m, info);
    rc |= mp_buf_puts(b, "}\n");
    return rc ? MP_ENOMEM : 0;
}

int mp_loadgen_requests_jsonl(const struct mp_loadgen_result *r, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = 0;
    for (size_t i = 0; i < r->n && !rc; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        uint64_t t0 = r->t0_ns;
        rc |= mp_buf_printf(b, "{\"index\": %zu, \"request_id\": \"%s%zu\", \"success\": %s", i,
                            r->request_id_prefix, i, x->success ? "true" : "false");
        rc |= mp_buf_puts(b, ", \"error\": ");
        if (x->error)
            rc |= mp_json_str(b, x->error, strlen(x->error));
        else
            rc |= mp_buf_puts(b, "null");
        rc |= mp_buf_printf(b,
                            ", \"http_status\": %d, \"prompt_len\": %d, \"expected_prompt_len\": "
                            "%d, \"output_tokens\": %d, \"usage\": %s, \"max_tokens\": %d",
                            x->http_status, x->prompt_len, x->expected_prompt_len, x->output_tokens,
                            x->usage_seen ? "true" : "false", x->max_tokens);
        rc |= mp_buf_printf(
            b,
            ", \"t0_monotonic_ns\": %llu, \"arrival_ns\": %lld, \"start_ns\": "
            "%lld, \"headers_ns\": %lld, \"end_ns\": %lld",
            (unsigned long long)t0, (long long)(x->arrival_ns - t0), (long long)(x->start_ns - t0),
            x->headers_ns ? (long long)(x->headers_ns - t0) : -1LL, (long long)(x->end_ns - t0));
        if (x->success) {
            double ttft = rec_ttft_s(x) * 1e3, e2el = rec_latency_s(x) * 1e3;
            int nout = x->output_tokens > 0 ? x->output_tokens : (int)x->n_events;
            rc |= mp_buf_puts(b, ", \"ttft_ms\": ");
            rc |= mp_json_double(b, ttft);
            rc |= mp_buf_puts(b, ", \"e2el_ms\": ");
            rc |= mp_json_double(b, e2el);
            rc |= mp_buf_puts(b, ", \"tpot_ms\": ");
            if (nout > 1)
                rc |= mp_json_double(b, (e2el - ttft) / (nout - 1));
            else
                rc |= mp_buf_puts(b, "null");
        }
        rc |= mp_buf_printf(b, ", \"n_chunks\": %u, \"events_ns\": [", x->n_chunks);
        for (uint32_t j = 0; j < x->n_events; j++)
            rc |= mp_buf_printf(b, j ? ",%lld" : "%lld", (long long)(x->event_ns[j] - t0));
        rc |= mp_buf_putc(b, ']');
        if (x->event_src) { /* k: kernel receive time, r: read time */
            rc |= mp_buf_puts(b, ", \"events_src\": \"");
            for (uint32_t j = 0; j < x->n_events; j++)
                rc |= mp_buf_putc(b, x->event_src[j] ? 'r' : 'k');
            rc |= mp_buf_putc(b, '"');
        }
        if (x->event_tokens) {
            rc |= mp_buf_puts(b, ", \"event_tokens\": [");
            for (uint32_t j = 0; j < x->n_events; j++)
                rc |= mp_buf_printf(b, j ? ",%u" : "%u", x->event_tokens[j]);
            rc |= mp_buf_putc(b, ']');
        }
        if (r->sessions)
            rc |= mp_buf_printf(b, ", \"session\": %d, \"turn\": %d", x->session, x->turn);
        rc |= mp_buf_puts(b, "}\n");
    }
    return rc ? MP_ENOMEM : 0;
}

int mp_loadgen_magpie_json(const struct mp_loadgen_metrics *m, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = 0;
    bool f = true;
    rc |= mp_buf_puts(b, "{\"throughput\": {");
    rc |= kd(b, &f, "request_throughput", m->request_throughput);
    rc |= kd(b, &f, "output_throughput", m->output_throughput);
    rc |= kd(b, &f, "total_token_throughput", m->total_token_throughput);
    rc |= ki(b, &f, "completed_requests", (long long)m->completed);
    rc |= ki(b, &f, "total_input_tokens", m->total_input);
    rc |= ki(b, &f, "total_output_tokens", m->total_output);
    rc |= kd(b, &f, "duration_seconds", m->duration_s);
    rc |= mp_buf_puts(b, "}, \"latency\": {");
    static const int ks4[4] = {MP_LOADGEN_TTFT, MP_LOADGEN_TPOT, MP_LOADGEN_ITL, MP_LOADGEN_E2EL};
    for (int i = 0; i < 4; i++) {
        const struct mp_loadgen_stat *st = &m->stat[ks4[i]];
        bool g = true;
        rc |= mp_buf_printf(b, "%s\"%s\": {", i ? ", " : "", mp_loadgen_metric_name(ks4[i]));
        rc |= kd(b, &g, "mean_ms", st->mean);
        rc |= kd(b, &g, "median_ms", st->median);
        rc |= kd(b, &g, "p99_ms", st->p99);
        rc |= kd(b, &g, "std_ms", st->std);
        rc |= mp_buf_putc(b, '}');
    }
    rc |= mp_buf_puts(b, "}}");
    return rc ? MP_ENOMEM : 0;
}

static int center(struct mp_buf *b, const char *s, char c)
{
    int n = (int)strlen(s), left = (50 - n) / 2, right = 50 - n - left, rc = 0;
    for (int i = 0; i < left; i++)
        rc |= mp_buf_putc(b, c);
    rc |= mp_buf_puts(b, s);
    for (int i = 0; i < right; i++)
        rc |= mp_buf_putc(b, c);
    return rc | mp_buf_putc(b, '\n');
}

static int line_i(struct mp_buf *b, const char *label, long long v)
{
    char val[32];
    snprintf(val, sizeof(val), "%lld", v);
    return mp_buf_printf(b, "%-40s %-10s\n", label, val);
}

static int line_f(struct mp_buf *b, const char *label, double v)
{
    char val[64];
    snprintf(val, sizeof(val), "%.2f", v);
    return mp_buf_printf(b, "%-40s %-10s\n", label, val);
}

int mp_loadgen_summary(const struct mp_loadgen_result *r, const struct mp_loadgen_metrics *m,
                       struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = 0;
    if (m->failed) {
        rc |= mp_buf_puts(b, "Failed requests during benchmark run detected (capping to 10):\n");
        size_t shown = 0;
        for (size_t i = 0; i < r->n && shown < 10; i++)
            if (!r->recs[i].success)
                rc |= mp_buf_printf(b, "Error %zu: %s\n", shown++,
                                    r->recs[i].error ? r->recs[i].error : "");
    }
    rc |= center(b, " Serving Benchmark Result ", '=');
    rc |= line_i(b, "Successful requests:", (long long)m->completed);
    rc |= line_i(b, "Failed requests:", (long long)m->failed);
    if (r->max_concurrency > 0)
        rc |= line_i(b, "Maximum request concurrency:", r->max_concurrency);
    if (!isinf(r->request_rate))
        rc |= line_f(b, "Request rate configured (RPS):", r->request_rate);
    rc |= line_f(b, "Benchmark duration (s):", m->duration_s);
    rc |= line_i(b, "Total input tokens:", m->total_input);
    rc |= line_i(b, "Total generated tokens:", m->total_output);
    rc |= line_f(b, "Request throughput (req/s):", m->request_throughput);
    if (!isnan(m->request_goodput))
        rc |= line_f(b, "Request goodput (req/s):", m->request_goodput);
    rc |= line_f(b, "Output token throughput (tok/s):", m->output_throughput);
    rc |= line_f(b, "Peak output token throughput (tok/s):", m->max_output_tokens_per_s);
    rc |= line_f(b, "Peak concurrent requests:", m->max_concurrent_requests);
    rc |= line_f(b, "Total token throughput (tok/s):", m->total_token_throughput);
    static const char *const short_names[MP_LOADGEN_N_METRICS] = {
        "TTFT", "TPOT", "ITL", "E2EL", "Client Queue Time", "E2EL incl. Client Queue"};
    static const char *const headers[MP_LOADGEN_N_METRICS] = {
        "Time to First Token",  "Time per Output Token (excl. 1st token)",
        "Inter-token Latency",  "End-to-end Latency",
        "Client-side Queueing", "Queue-inclusive End-to-end Latency"};
    for (int k = 0; k < MP_LOADGEN_N_METRICS; k++) {
        if (!(m->opts.selected & (1u << k)) || !m->have[k])
            continue;
        const struct mp_loadgen_stat *st = &m->stat[k];
        char label[96], pw[40];
        rc |= center(b, headers[k], '-');
        snprintf(label, sizeof(label), "Mean %s (ms):", short_names[k]);
        rc |= line_f(b, label, st->mean);
        snprintf(label, sizeof(label), "Median %s (ms):", short_names[k]);
        rc |= line_f(b, label, st->median);
        for (int i = 0; i < m->opts.n_pcts; i++) {
            pct_word(m->opts.pcts[i], pw, sizeof(pw));
            snprintf(label, sizeof(label), "P%s %s (ms):", pw, short_names[k]);
            rc |= line_f(b, label, st->pct[i]);
        }
    }
    rc |= mp_buf_puts(b, "==================================================\n");
    struct mp_loadgen_failures fl;
    mp_loadgen_failures(r, &fl);
    rc |= mp_loadgen_failures_text(&fl, NULL, b);
    if (m->usage_missing)
        rc |= mp_buf_printf(b,
                            "note: %zu requests had no usage.completion_tokens; their output "
                            "tokens are the number of stream events\n",
                            m->usage_missing);
    if (r->sessions)
        rc |= loadgen_sessions_text(r, b);
    if (r->n_scrapes || r->scrape_error[0])
        rc |= loadgen_scrape_text(r, b);
    if (m->multi_token_events)
        rc |= mp_buf_printf(b,
                            "note: %zu stream events carried several tokens; ITL is per event, "
                            "per-token ITL mean %.2f ms (result JSON: magpie.itl_per_token)\n",
                            m->multi_token_events, m->itl_per_token.mean);
    return rc ? MP_ENOMEM : 0;
}
