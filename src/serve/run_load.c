/* The load phases of one benchmark run: the dataset, warm-up, the torch
 * profiler window (start, the measured load, stop, traces collected), the
 * measured repeats kept as run_1..N with their spread, and a caller's own
 * load (mp_serve_run_opts.load) in place of the configured one. Behaviour as
 * before the split of run.c (docs/metrics.md, docs/magpie-compat.md).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>
#include <magpie/gpu.h>
#include <magpie/loadgen.h>
#include <magpie/pipeline.h>
#include <magpie/proc.h>
#include <magpie/serve.h>
#include <magpie/tracelens.h>

#include "serve_int.h"
#include "serve_run_int.h"

/* ---- load ---- */

static void on_load_progress(const struct mp_loadgen_progress *p, void *user)
{
    struct serve_run *r = user;
    r->last = *p;
    if ((r->srv || r->detached) && !r->died && !serve_run_engine_alive(r)) {
        serve_engine_pgid = 0;
        r->died = true; /* remaining requests fail fast: connection refused */
    }
    if (!r->deadline_hit && serve_run_remaining_s(r) <= 0) {
        r->deadline_hit = true;
        if (r->srv)
            mp_proc_terminate(r->srv); /* in-flight requests fail now, not at their timeout */
        else if (r->detached)
            serve_group_stop(r->det_pid, r->det_pgid, 0); /* SIGTERM now, SIGKILL later */
    }
    serve_run_progress(r, p->warmup ? "warm-up" : "benchmark", p->done, p->failed, p->total);
}

static int profile_call(struct serve_run *r, const char *what, double timeout_s)
{
    char url[800], err[256];
    long st = 0;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (!what) {
        serve_run_error_log(r, "the engine has no profiler endpoints");
        return MP_EUNSUP;
    }
    snprintf(url, sizeof(url), "%s%s", r->base_url, what);
    int rc = serve_http("POST", url, timeout_s, &st, &b, err, sizeof(err));
    if (rc || st < 200 || st >= 300) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "POST %s failed: %s", what,
                 rc ? err : (snprintf(err, sizeof(err), "HTTP %ld", st), err));
        serve_run_error_log(r, msg);
        rc = rc ? rc : MP_EIO;
    }
    mp_buf_fini(&b);
    return rc;
}

/* Waits until trace files exist and their sizes hold still for 2 s. */
static size_t wait_traces(const char *dir, double limit_s)
{
    uint64_t until = mp_time_ns() + (uint64_t)(limit_s * 1e9);
    long long last = -1;
    int stable = 0;
    size_t n = 0;
    while (mp_time_ns() < until) {
        struct mp_trace_rank_list l;
        long long total = 0;
        n = 0;
        if (mp_trace_find_ranks(dir, &l, NULL) == 0) {
            n = l.n;
            for (size_t i = 0; i < l.n; i++) {
                struct stat st;
                if (stat(l.files[i].path, &st) == 0)
                    total += st.st_size;
            }
            mp_trace_rank_list_fini(&l);
        }
        if (n && total == last) {
            if (++stable >= 4)
                break;
        } else {
            stable = 0;
        }
        last = total;
        usleep(500000);
    }
    return n;
}

/* ---- repeat: N measured runs against one engine, kept as run_1..N ---- */

enum { REP_N = 8 };

static const char *const REP_KEYS[REP_N] = {
    "output_throughput", "request_throughput", "ttft_mean_ms", "ttft_p99_ms",
    "tpot_mean_ms",      "itl_mean_ms",        "e2el_mean_ms", "e2el_p99_ms"};

/* Writes run k's client result and per-request JSONL into run_k/ and keeps
 * its headline metrics for the spread. */
static void keep_repeat(struct serve_run *r, const struct mp_loadgen_result *res,
                        const struct mp_loadgen_metrics *m,
                        const struct mp_loadgen_report_info *info, int k, struct serve_load_out *lo)
{
    char dir[64], name[128];
    snprintf(dir, sizeof(dir), "run_%d", k);
    char *path = mp_fs_join(r->ws, dir);
    struct mp_diag d;
    mp_diag_clear(&d);
    if (!path || mp_fs_mkdirs(path, &d)) {
        serve_run_error(r, "cannot create %s: %s", dir, d.msg);
        free(path);
        return;
    }
    free(path);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    snprintf(name, sizeof(name), "%s/inferencex_result.json", dir);
    if (mp_loadgen_result_json(res, m, info, &b) == 0)
        serve_run_write_file(r, name, &b);
    mp_buf_reset(&b);
    snprintf(name, sizeof(name), "%s/inferencex_result.requests.jsonl", dir);
    if (mp_loadgen_requests_jsonl(res, &b) == 0)
        serve_run_write_file(r, name, &b);
    mp_buf_fini(&b);
    if (m->failed) {
        char w[96];
        snprintf(w, sizeof(w), "repeat run %d: %zu failed request(s)", k, m->failed);
        serve_run_warning(r, w);
    }
    double *v = lo->rep ? lo->rep + (size_t)(k - 1) * REP_N : NULL;
    if (!v)
        return;
    const double x[REP_N] = {m->output_throughput,          m->request_throughput,
                             m->stat[MP_LOADGEN_TTFT].mean, m->stat[MP_LOADGEN_TTFT].p99,
                             m->stat[MP_LOADGEN_TPOT].mean, m->stat[MP_LOADGEN_ITL].mean,
                             m->stat[MP_LOADGEN_E2EL].mean, m->stat[MP_LOADGEN_E2EL].p99};
    memcpy(v, x, sizeof(x));
    lo->n_rep = k;
}

/* "repeats": every run's headline metrics and their spread. */
void serve_run_repeats_json(const struct serve_load_out *lo, struct mp_buf *b)
{
    mp_buf_printf(b, ", \"repeats\": {\"n\": %d, \"runs\": [", lo->n_rep);
    for (int k = 0; k < lo->n_rep; k++) {
        mp_buf_printf(b, "%s{\"run\": %d, \"dir\": \"run_%d\"", k ? ", " : "", k + 1, k + 1);
        for (int j = 0; j < REP_N; j++) {
            mp_buf_printf(b, ", \"%s\": ", REP_KEYS[j]);
            mp_json_double(b, lo->rep[k * REP_N + j]);
        }
        mp_buf_putc(b, '}');
    }
    mp_buf_puts(b, "], \"spread\": {");
    for (int j = 0; j < REP_N; j++) {
        double lo_v = INFINITY, hi_v = -INFINITY, sum = 0, ss = 0;
        for (int k = 0; k < lo->n_rep; k++) {
            double x = lo->rep[k * REP_N + j];
            lo_v = fmin(lo_v, x);
            hi_v = fmax(hi_v, x);
            sum += x;
        }
        double mean = sum / lo->n_rep;
        for (int k = 0; k < lo->n_rep; k++)
            ss += (lo->rep[k * REP_N + j] - mean) * (lo->rep[k * REP_N + j] - mean);
        double sd = lo->n_rep > 1 ? sqrt(ss / (lo->n_rep - 1)) : 0;
        mp_buf_printf(b, "%s\"%s\": {\"min\": ", j ? ", " : "", REP_KEYS[j]);
        mp_json_double(b, lo_v);
        mp_buf_puts(b, ", \"max\": ");
        mp_json_double(b, hi_v);
        mp_buf_puts(b, ", \"mean\": ");
        mp_json_double(b, mean);
        mp_buf_puts(b, ", \"cov\": ");
        mp_json_double(b, mean != 0 ? sd / mean : NAN);
        mp_buf_putc(b, '}');
    }
    mp_buf_puts(b, "}}");
}

/* agentx: the user's agentic trace (mooncake / AIPerf JSONL with sessions),
 * NUM_PROMPTS records of it when set, else all (docs/workloads.md) */
static int build_agentx(struct serve_run *r, struct mp_loadgen_dataset **ds, bool chat)
{
    const struct mp_serve_config *c = r->c;
    struct mp_loadgen_trace_opts to;
    mp_loadgen_trace_opts_default(&to);
    long np = 0, nw, conc;
    mp_serve_config_intenv(c, "NUM_PROMPTS", 0, &np, NULL);
    mp_serve_config_intenv(c, "CONC", 32, &conc, NULL);
    mp_serve_config_intenv(c, "NUM_WARMUPS", 2 * conc, &nw, NULL);
    to.path = c->agentx.trace_file;
    to.max_prompts = np > 0 ? (size_t)np : 0;
    to.block_size = c->agentx.block_size;
    to.slowdown = c->agentx.slowdown;
    to.text = chat;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_loadgen_dataset_mooncake(&to, ds, &d);
    if (rc) {
        serve_run_error(r, "cannot read agentx.trace_file: %s", d.msg);
        return rc;
    }
    r->dataset = "mooncake";
    r->num_prompts = (*ds)->n;
    r->warmups = (size_t)(nw > 0 ? nw : 0);
    return 0;
}

static int build_dataset(struct serve_run *r, struct mp_loadgen_dataset **ds, bool chat)
{
    if (r->c->agentx.enabled)
        return build_agentx(r, ds, chat);
    const struct mp_serve_config *c = r->c;
    struct mp_diag d;
    mp_diag_clear(&d);
    long isl, osl, conc, np, nw;
    mp_serve_config_intenv(c, "ISL", 1024, &isl, NULL);
    mp_serve_config_intenv(c, "OSL", 512, &osl, NULL);
    mp_serve_config_intenv(c, "CONC", 32, &conc, NULL);
    /* Magpie's scripts: NUM_PROMPTS or CONC*10, and CONC when profiling */
    /* with TraceLens the profiler window is the steady state inside the whole
     * load, so the load is not cut to CONC (Magpie patches this the same way) */
    mp_serve_config_intenv(c, "NUM_PROMPTS",
                           r->profiling && !mp_serve_tracelens_inference(c) ? conc : conc * 10, &np,
                           NULL);
    mp_serve_config_intenv(c, "NUM_WARMUPS", 2 * conc, &nw, NULL);
    const char *rr = mp_serve_config_getenv(c, "RANDOM_RANGE_RATIO");
    struct mp_loadgen_random_opts ro;
    mp_loadgen_random_opts_default(&ro);
    ro.input_len = (int)isl;
    ro.output_len = (int)osl;
    ro.range_ratio = rr ? strtod(rr, NULL) : 0.5;
    ro.text = chat;
    r->num_prompts = (size_t)(np > 0 ? np : 1);
    r->warmups = (size_t)(nw > 0 ? nw : 0);
    r->dataset = "random";
    int rc = mp_loadgen_dataset_random(&ro, r->num_prompts, ds, &d);
    if (rc)
        serve_run_error(r, "cannot build the random dataset: %s", d.msg);
    return rc;
}

static void first_failure(const struct mp_loadgen_result *res, char *out, size_t len)
{
    for (size_t i = 0; res && i < res->n; i++)
        if (!res->recs[i].success) {
            snprintf(out, len, "%s", res->recs[i].error ? res->recs[i].error : "failed");
            return;
        }
}

/* the load generator's settings from the config and its env */
static void load_config(struct serve_run *r, struct mp_loadgen_config *lc, const char *ep,
                        bool chat)
{
    const struct mp_serve_config *c = r->c;
    long conc = 32;
    mp_serve_config_intenv(c, "CONC", 32, &conc, NULL);
    mp_loadgen_config_default(lc);
    lc->base_url = r->base_url;
    lc->endpoint = ep ? ep : (chat ? "/v1/chat/completions" : "/v1/completions");
    lc->api = chat ? MP_LOADGEN_API_CHAT : MP_LOADGEN_API_COMPLETIONS;
    lc->model = r->served[0] ? r->served : c->model;
    lc->ignore_eos = true;
    lc->max_concurrency = (int)conc;
    lc->request_id_prefix = "magpie-bench-";
    lc->stall_timeout_s = c->stall_timeout_s;
    /* with TraceLens, vLLM stops the profiler itself after max_iterations and
     * exports the trace while requests wait; Magpie allows 1200 s for that
     * (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS), so a stall must not end it sooner */
    if (mp_serve_tracelens_inference(c) && lc->stall_timeout_s > 0 && lc->stall_timeout_s < 1500)
        lc->stall_timeout_s = 1500;
    lc->on_progress = on_load_progress;
    lc->progress_user = r;
    const char *rate = mp_serve_config_getenv(c, "REQUEST_RATE");
    if (rate && strcmp(rate, "inf") != 0)
        lc->request_rate = strtod(rate, NULL);
    lc->fixed_schedule = c->agentx.enabled && c->agentx.fixed_schedule;
}

/* warm-up: copies of the first prompt, as vLLM's --num-warmups */
static int load_warmup(struct serve_run *r, struct mp_loadgen_config *lc,
                       const struct mp_loadgen_dataset *ds, struct serve_load_out *lo)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc;
    struct mp_loadgen_prompt *warm = calloc(r->warmups, sizeof(*warm));
    if (!warm) {
        rc = MP_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < r->warmups; i++)
        warm[i] = ds->prompts[0];
    struct mp_loadgen_dataset wds = *ds;
    wds.prompts = warm;
    wds.n = r->warmups;
    /* the copies are independent requests: no recorded times or sessions */
    wds.arrival_s = wds.think_s = NULL;
    wds.prev = wds.session = NULL;
    wds.exact = NULL;
    wds.history = false;
    bool fixed = lc->fixed_schedule;
    lc->fixed_schedule = false;
    struct mp_loadgen_result *wres = NULL;
    lc->request_timeout_s = serve_run_remaining_s(r) > 1 ? serve_run_remaining_s(r) : 1;
    lc->request_id_prefix = "magpie-warmup-";
    rc = mp_loadgen_run(lc, &wds, &wres, &d);
    lc->request_id_prefix = "magpie-bench-";
    lc->fixed_schedule = fixed;
    if (rc) {
        serve_run_error(r, "warm-up could not run: %s", d.msg);
        goto out;
    }
    for (size_t i = 0; i < wres->n; i++)
        lo->failed_warmups += !wres->recs[i].success;
    if (lo->failed_warmups == wres->n) {
        char fe[512] = "";
        first_failure(wres, fe, sizeof(fe));
        mp_loadgen_result_free(wres);
        serve_run_error_log(r, r->died ? "engine exited during the warm-up"
                                       : (snprintf(r->path, sizeof(r->path),
                                                   "every warm-up request failed: %s", fe),
                                          r->path));
        rc = MP_EIO;
        goto out;
    }
    mp_loadgen_result_free(wres);
out:
    free(warm);
    return rc;
}

/* repeat: runs 1..N-1 are kept in run_k/; run N goes on in run_load as the
 * run of the report (and is kept as run_N too); the warm-up was once */
static int load_repeats(struct serve_run *r, const struct mp_loadgen_config *lc,
                        const struct mp_loadgen_dataset *ds,
                        const struct mp_loadgen_metrics_opts *mo, bool chat,
                        struct serve_load_out *lo)
{
    const struct mp_serve_config *c = r->c;
    struct mp_loadgen_config rlc = *lc;
    struct mp_diag d;
    mp_diag_clear(&d);
    if (c->repeat > 1 && !(lo->rep = calloc((size_t)c->repeat * REP_N, sizeof(double))))
        serve_run_warning(r, "repeat: out of memory for the spread");
    for (int k = 1; k < c->repeat && !r->died && !r->deadline_hit; k++) {
        struct mp_loadgen_result *rr = NULL;
        struct mp_loadgen_metrics rm;
        rlc.request_timeout_s = serve_run_remaining_s(r) > 1 ? serve_run_remaining_s(r) : 1;
        int rc = mp_loadgen_run(&rlc, ds, &rr, &d);
        if (rc) {
            serve_run_error(r, "benchmark run %d could not run: %s", k, d.msg);
            return rc;
        }
        struct mp_loadgen_report_info ri = {.date = "",
                                            .backend = chat ? "openai-chat" : "vllm",
                                            .model_id = c->model,
                                            .dataset = r->dataset,
                                            .num_prompts = r->num_prompts,
                                            .fail_limit = &c->max_failed};
        if (mp_loadgen_metrics_compute(rr, mo, &rm) == 0)
            keep_repeat(r, rr, &rm, &ri, k, lo);
        mp_loadgen_result_free(rr);
    }
    return 0;
}

/* the vLLM-format client result, as InferenceX's inferencex_result.json,
 * the client's page and the per-request JSONL */
static void load_write_results(struct serve_run *r, struct serve_load_out *lo, bool chat)
{
    const struct mp_serve_config *c = r->c;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char date[32];
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tmv);
    struct mp_loadgen_report_info info = {.date = date,
                                          .backend = chat ? "openai-chat" : "vllm",
                                          .model_id = c->model,
                                          .dataset = r->dataset,
                                          .num_prompts = r->num_prompts,
                                          .fail_limit = &c->max_failed};
    if (lo->have && mp_loadgen_result_json(lo->res, &lo->m, &info, &b) == 0)
        serve_run_write_file(r, "inferencex_result.json", &b);
    mp_buf_reset(&b); /* the client's page: distributions, and failures by reason */
    if (lo->have && mp_loadgen_html(lo->res, &lo->m, &info, &b) == 0)
        serve_run_write_file(r, "inferencex_result.html", &b);
    mp_buf_reset(&b);
    if (mp_loadgen_requests_jsonl(lo->res, &b) == 0)
        serve_run_write_file(r, "inferencex_result.requests.jsonl", &b);
    mp_buf_fini(&b);
    if (c->repeat > 1 && lo->have)
        keep_repeat(r, lo->res, &lo->m, &info, c->repeat, lo);
}

static void load_stop_profiler(struct serve_run *r)
{
    serve_run_progress(r, "stopping profiler", 0, 0, 0);
    double lim = r->c->stop_profile_timeout_s;
    if (lim > serve_run_remaining_s(r) + 60)
        lim = serve_run_remaining_s(r) + 60; /* a trace flush may overrun the deadline a little */
    if (profile_call(r, mp_serve_config_engine(r->c)->profile_stop, lim) == 0) {
        serve_run_progress(r, "collecting traces", 0, 0, 0);
        if (wait_traces(r->trace_dir, 120) == 0)
            serve_run_error(r, "no torch traces appeared in torch_trace/ after /stop_profile");
    }
}

static int run_load(struct serve_run *r, struct serve_load_out *lo)
{
    const struct mp_serve_config *c = r->c;
    const char *ep = mp_serve_config_getenv(c, "MAGPIE_BENCHMARK_ENDPOINT");
    const char *be = mp_serve_config_getenv(c, "MAGPIE_BENCHMARK_BACKEND");
    bool chat = (ep && strstr(ep, "chat")) || (be && strstr(be, "chat"));
    struct mp_loadgen_dataset *ds = NULL;
    int rc = build_dataset(r, &ds, chat);
    if (rc)
        return rc;
    struct mp_loadgen_config lc;
    load_config(r, &lc, ep, chat);
    struct mp_diag d;
    mp_diag_clear(&d);
    if (r->warmups && (rc = load_warmup(r, &lc, ds, lo)))
        goto out;
    if (r->died || r->deadline_hit) {
        rc = MP_ECHILD;
        goto out;
    }
    bool sched = r->profiling && !r->client_only && mp_serve_captures_on(r->c);
    if (r->profiling && !r->client_only && !sched) {
        serve_run_progress(r, "starting profiler", 0, 0, 0);
        if ((rc = profile_call(r, mp_serve_config_engine(r->c)->profile_start, 300)))
            goto out;
    }
    struct mp_loadgen_metrics_opts mo;
    mp_loadgen_metrics_opts_default(&mo);
    mo.selected = (1u << MP_LOADGEN_TTFT) | (1u << MP_LOADGEN_TPOT) | (1u << MP_LOADGEN_ITL) |
                  (1u << MP_LOADGEN_E2EL);
    if ((rc = load_repeats(r, &lc, ds, &mo, chat, lo)))
        goto out;
    lc.request_timeout_s = serve_run_remaining_s(r) > 1 ? serve_run_remaining_s(r) : 1;
    if (sched && (rc = serve_captures_start(r)))
        goto out;
    rc = mp_loadgen_run(&lc, ds, &lo->res, &d);
    serve_captures_finish(r); /* the capture in progress ends with the load */
    if (rc) {
        serve_run_error(r, "benchmark could not run: %s", d.msg);
        goto out;
    }
    r->measured = true;
    if (mp_loadgen_metrics_compute(lo->res, &mo, &lo->m) == 0)
        lo->have = true;
    mp_loadgen_failures(lo->res, &lo->fails);
    first_failure(lo->res, lo->first_error, sizeof(lo->first_error));
    load_write_results(r, lo, chat);
    if (r->profiling && !r->client_only && !sched && !r->died && !r->deadline_hit)
        load_stop_profiler(r);
out:
    mp_loadgen_dataset_free(ds);
    return rc;
}

/* The caller's load (a sweep) instead of the configured one. */
static void run_hook(struct serve_run *r)
{
    char err[512] = "";
    r->hooked = true;
    r->hook_rc = r->o->load(r->base_url, r->o->load_user, err, sizeof(err));
    r->measured = r->hook_rc == 0;
    if (r->hook_rc)
        serve_run_error_str(r, err[0] ? err : "the load failed");
}

void serve_run_measure(struct serve_run *r, struct serve_load_out *lo)
{
    if (r->o->load)
        run_hook(r);
    else
        (void)run_load(r, lo); /* its errors are in the report */
}
