/* What a benchmark run leaves behind: benchmark_report.json with Magpie's
 * keys in Magpie's order (BenchmarkResult.to_dict, docs/magpie-compat.md,
 * Benchmark report) plus a "magpie" object of additions, summary.txt, the
 * effective config as config.yaml, and the error lines of server.log that
 * go into an error message.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/config.h>
#include <magpie/fmt.h>
#include <magpie/serve.h>

#include "serve_int.h"

/* ---- server.log tail ---- */

static bool error_line(const char *s)
{
    static const char *const pats[] = {"Error", "Exception", "FAILED", "Traceback", "RuntimeError"};
    for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
        if (strstr(s, pats[i]))
            return true;
    return false;
}

int mp_serve_log_tail(const char *path, int n, struct mp_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return MP_ENOTFOUND;
    /* the last 64 KiB is plenty for the last lines of a log */
    char *buf = malloc(65537);
    if (!buf) {
        fclose(f);
        return MP_ENOMEM;
    }
    long start = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        start = sz > 65536 ? sz - 65536 : 0;
    }
    fseek(f, start, SEEK_SET);
    size_t len = fread(buf, 1, 65536, f);
    fclose(f);
    buf[len] = 0;
    /* split into lines, newest last */
    const char *lines[512];
    size_t lens[512];
    int nl = 0;
    for (char *p = buf; *p;) {
        char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l && !(start && p == buf)) { /* the first piece may be a partial line */
            if (nl == 512) {
                memmove(lines, lines + 1, sizeof(lines[0]) * 511);
                memmove(lens, lens + 1, sizeof(lens[0]) * 511);
                nl--;
            }
            lines[nl] = p;
            lens[nl++] = l;
        }
        if (!e)
            break;
        *e = 0;
        p = e + 1;
    }
    /* Magpie: up to n error lines from the last 50; otherwise the last n lines */
    int from = nl > 50 ? nl - 50 : 0, picked[64], np = 0;
    for (int i = from; i < nl; i++)
        if (error_line(lines[i]) && np < 64)
            picked[np++] = i;
    int rc = 0;
    /* the first error line is often the root cause (a worker's exception)
     * while the last ones are its echoes in the API server: keep it too */
    int first = -1;
    for (int i = 0; i < nl && first < 0; i++)
        if ((strstr(lines[i], "Error: ") || strstr(lines[i], "Exception: ")) &&
            !strstr(lines[i], "WARNING"))
            first = i;
    if (np && first >= 0 && first < picked[np > n ? np - n : 0])
        rc |= mp_buf_printf(out, "  %.*s\n  ...\n", (int)lens[first], lines[first]);
    if (np) {
        for (int i = np > n ? np - n : 0; i < np; i++)
            rc |= mp_buf_printf(out, "  %.*s\n", (int)lens[picked[i]], lines[picked[i]]);
    } else {
        for (int i = nl > n ? nl - n : 0; i < nl; i++)
            rc |= mp_buf_printf(out, "  %.*s\n", (int)lens[i], lines[i]);
    }
    free(buf);
    if (out->len && out->data[out->len - 1] == '\n')
        out->data[--out->len] = 0;
    return rc ? MP_ENOMEM : 0;
}

/* ---- benchmark_report.json ---- */

static json_t *parse_or_null(const char *text)
{
    if (!text)
        return json_null();
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    return v ? v : json_null();
}

int serve_report_json(const struct serve_report *r, struct mp_buf *out)
{
    const struct mp_serve_config *c = r->cfg;
    json_t *o = json_object();
    json_t *metrics = parse_or_null(r->metrics_json);
    json_t *kern = parse_or_null(r->kernels_json);
    enum mp_serve_run_kind kind = mp_serve_config_run_kind(c);
    json_object_set_new(o, "success", json_boolean(r->success));
    json_object_set_new(o, "framework", json_string(mp_serve_config_engine(c)->name));
    json_object_set_new(o, "model", json_string(c->model));
    json_t *tp = json_object_get(metrics, "throughput");
    json_t *lat = json_object_get(metrics, "latency");
    json_object_set(o, "throughput", tp ? tp : json_null());
    json_object_set(o, "latency", lat ? lat : json_null());
    json_t *ks = json_object_get(kern, "kernel_summary");
    json_t *tb = json_object_get(kern, "top_bottlenecks");
    json_object_set_new(o, "kernel_summary", ks ? json_incref(ks) : json_array());
    json_object_set_new(o, "top_bottlenecks", tb ? json_incref(tb) : json_array());
    json_object_set_new(o, "tracelens_analysis", parse_or_null(r->tracelens_json));
    json_object_set_new(o, "gap_analysis", parse_or_null(r->gap_json));
    json_object_set_new(o, "targeted_trace", json_null());
    json_object_set_new(o, "gpu_monitor", parse_or_null(r->gpu_monitor_json));
    json_object_set_new(o, "workspace_dir", json_string(r->workspace));
    json_object_set_new(o, "execution_time", json_real(r->execution_time_s));
    json_object_set_new(o, "profiling_enabled", json_boolean(c->torch_profiler));
    json_object_set_new(o, "run_kind", json_string(mp_serve_run_kind_name(kind)));
    json_object_set_new(o, "reward_eligible", json_boolean(kind == MP_SERVE_KIND_MEASUREMENT));
    json_object_set_new(o, "model_revision_receipt", json_null());
    json_object_set_new(o, "inferencex_runtime_receipt", json_null());
    json_object_set_new(o, "lm_eval_runtime_receipt", json_null());
    json_object_set_new(o, "serving_runtime_receipt", parse_or_null(r->serving_receipt_json));
    json_t *errs = json_array();
    for (size_t i = 0; i < r->n_errors; i++)
        json_array_append_new(errs, json_string(r->errors[i]));
    json_object_set_new(o, "errors", errs);
    json_object_set_new(o, "magpie", parse_or_null(r->magpie_json));
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    int rc = text ? mp_buf_puts(out, text) | mp_buf_putc(out, '\n') : MP_ENOMEM;
    free(text);
    json_decref(o);
    json_decref(metrics);
    json_decref(kern);
    return rc ? MP_ENOMEM : 0;
}

/* ---- summary.txt ---- */

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* throughput and latency of the report */
static int sum_metrics(struct mp_buf *b, json_t *rep)
{
    int rc = 0;
    json_t *tp = json_object_get(rep, "throughput");
    if (json_is_object(tp)) {
        rc |= mp_buf_puts(b, "\nThroughput:\n");
        rc |= mp_buf_printf(b, "  Request throughput: %.2f req/s\n", num(tp, "request_throughput"));
        rc |= mp_buf_printf(b, "  Output throughput:  %.2f tok/s\n", num(tp, "output_throughput"));
        rc |= mp_buf_printf(b, "  Total throughput:   %.2f tok/s\n",
                            num(tp, "total_token_throughput"));
        rc |= mp_buf_printf(b, "  Completed requests: %.0f\n", num(tp, "completed_requests"));
        rc |= mp_buf_printf(b, "  Duration:           %.2f s\n", num(tp, "duration_seconds"));
    }
    json_t *lat = json_object_get(rep, "latency");
    if (json_is_object(lat)) {
        rc |= mp_buf_puts(b, "\nLatency (mean / p99):\n");
        static const char *const keys[][2] = {
            {"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2el", "E2EL"}};
        for (int i = 0; i < 4; i++) {
            json_t *m = json_object_get(lat, keys[i][0]);
            rc |= mp_buf_printf(b, "  %-5s %10.2f ms / %10.2f ms\n", keys[i][1], num(m, "mean_ms"),
                                num(m, "p99_ms"));
        }
    }
    return rc;
}

/* the trace analyses: top kernels, TraceLens, gap analysis */
static int sum_traces(struct mp_buf *b, json_t *rep)
{
    int rc = 0;
    json_t *ks = json_object_get(rep, "kernel_summary");
    if (json_array_size(ks)) {
        rc |= mp_buf_puts(b, "\nTop bottleneck kernels:\n");
        for (size_t i = 0; i < json_array_size(ks) && i < 5; i++) {
            json_t *k = json_array_get(ks, i);
            const char *name = json_string_value(json_object_get(k, "name"));
            rc |= mp_buf_printf(b, "  %zu. %.80s (%.1f%%, %.3f ms, %.0f calls)\n", i + 1,
                                name ? name : "?", num(k, "percent"), num(k, "time_ms"),
                                num(k, "calls"));
        }
    }
    json_t *tl = json_object_get(rep, "tracelens_analysis");
    if (json_is_object(tl)) {
        json_t *files = json_object_get(tl, "output_files");
        json_t *tw = json_object_get(tl, "warnings");
        json_t *te = json_object_get(tl, "errors");
        const char *mode = json_string_value(json_object_get(tl, "analysis_mode"));
        size_t nf = json_array_size(files);
        rc |= mp_buf_printf(b, "\nTraceLens (%s): %zu output file(s)\n", mode ? mode : "inference",
                            nf);
        for (size_t i = 0; i < nf && i < 3; i++)
            rc |= mp_buf_printf(b, "  %s\n", json_string_value(json_array_get(files, i)));
        for (size_t i = 0; i < json_array_size(tw) && i < 5; i++)
            rc |= mp_buf_printf(b, "  warning: %s\n", json_string_value(json_array_get(tw, i)));
        for (size_t i = 0; i < json_array_size(te) && i < 5; i++)
            if (json_is_string(json_array_get(te, i)))
                rc |= mp_buf_printf(b, "  error: %s\n", json_string_value(json_array_get(te, i)));
    }
    json_t *gap = json_object_get(rep, "gap_analysis");
    json_t *top = json_object_get(gap, "top_kernels");
    if (json_array_size(top)) {
        json_t *gc = json_object_get(gap, "config");
        rc |= mp_buf_printf(b, "\nGap Analysis (%.1f%%-%.1f%% window, category-filtered):\n",
                            num(gc, "trace_start_pct"), num(gc, "trace_end_pct"));
        rc |= mp_buf_printf(b, "  Total duration: %.2f us over %.0f rank(s)\n",
                            num(gap, "total_duration_us"), num(gap, "num_ranks"));
        for (size_t i = 0; i < json_array_size(top) && i < 5; i++) {
            json_t *k = json_array_get(top, i);
            const char *name = json_string_value(json_object_get(k, "name"));
            rc |= mp_buf_printf(b, "  %zu. %.60s  %.2f%%  %.2f us  %.0f calls\n", i + 1,
                                name ? name : "?", num(k, "pct_total"),
                                num(k, "self_cuda_total_us"), num(k, "calls"));
        }
    }
    return rc;
}

/* the GPU monitor and, with --repeat N, the spread over the runs */
static int sum_gpu_repeats(struct mp_buf *b, json_t *rep)
{
    int rc = 0;
    json_t *gm = json_object_get(rep, "gpu_monitor");
    if (json_is_object(gm)) {
        rc |= mp_buf_printf(b, "\nGPU monitor (%.0f samples, min / max / avg):\n",
                            num(gm, "sample_count"));
        static const char *const gk[][2] = {{"temperature_c", "Temperature (C)"},
                                            {"gpu_clock_mhz", "GPU clock (MHz)"},
                                            {"mem_clock_mhz", "Memory clock (MHz)"},
                                            {"power_watts", "Power (W)"}};
        for (int i = 0; i < 4; i++) {
            json_t *s = json_object_get(gm, gk[i][0]);
            if (json_is_object(s))
                rc |= mp_buf_printf(b, "  %-19s %.1f / %.1f / %.1f\n", gk[i][1], num(s, "min"),
                                    num(s, "max"), num(s, "avg"));
        }
    }
    json_t *mg = json_object_get(rep, "magpie");
    json_t *reps = json_object_get(mg, "repeats"), *sp = json_object_get(reps, "spread");
    if (json_is_object(sp)) { /* --repeat N: the spread over the runs */
        rc |=
            mp_buf_printf(b, "\nRepeats: %.0f runs (run_1 .. run_%.0f; numbers above: the last)\n",
                          num(reps, "n"), num(reps, "n"));
        rc |= mp_buf_printf(b, "  %-22s %12s %12s %8s\n", "", "min", "max", "CoV %");
        const char *k;
        json_t *v;
        json_object_foreach(sp, k, v)
        {
            rc |= mp_buf_printf(b, "  %-22s %12.3f %12.3f %8.2f\n", k, num(v, "min"), num(v, "max"),
                                num(v, "cov") * 100);
        }
    }
    return rc;
}

/* failed requests by reason, and the run's warnings */
static int sum_failures(struct mp_buf *b, json_t *rep)
{
    int rc = 0;
    json_t *mg = json_object_get(rep, "magpie");
    json_t *fl = json_object_get(json_object_get(mg, "requests"), "failures");
    if (num(fl, "failed") > 0) {
        rc |= mp_buf_printf(b, "\nFailed requests: %.0f of %.0f (%.2f%%), limit %s: %s\n",
                            num(fl, "failed"), num(fl, "total"), num(fl, "ratio") * 100,
                            json_string_value(json_object_get(fl, "max_failed_requests")),
                            json_is_true(json_object_get(fl, "within_limit"))
                                ? "within it, metrics over the successful requests"
                                : "over it, the run failed");
        json_t *by = json_object_get(fl, "by_reason");
        for (size_t i = 0; i < json_array_size(by); i++) {
            json_t *g = json_array_get(by, i);
            json_t *ex = json_object_get(g, "examples");
            rc |= mp_buf_printf(b, "  %-11s %6.0f  first #%.0f\n",
                                json_string_value(json_object_get(g, "reason")), num(g, "count"),
                                num(g, "first_request"));
            for (size_t k = 0; k < json_array_size(ex); k++)
                rc |= mp_buf_printf(b, "      %.160s\n", json_string_value(json_array_get(ex, k)));
        }
    }
    json_t *warn = json_object_get(mg, "warnings");
    if (json_array_size(warn)) {
        rc |= mp_buf_puts(b, "\nWarnings:\n");
        for (size_t i = 0; i < json_array_size(warn); i++)
            rc |= mp_buf_printf(b, "  - %s\n", json_string_value(json_array_get(warn, i)));
    }
    return rc;
}

/* the scheduled profiler captures, one line each */
static int sum_captures(struct mp_buf *b, json_t *rep)
{
    json_t *cap = json_object_get(json_object_get(rep, "magpie"), "captures");
    if (!json_is_object(cap))
        return 0;
    int rc = mp_buf_printf(b, "\nProfiler captures: %.0f of %.0f\n", num(cap, "taken"),
                           num(cap, "planned"));
    json_t *p;
    size_t i;
    json_array_foreach(json_object_get(cap, "profiles"), i, p)
    {
        json_t *tb = json_object_get(json_object_get(p, "kernel_summary"), "top_bottlenecks");
        json_t *top = json_array_get(tb, 0);
        rc |= mp_buf_printf(
            b, "  %zu: %.2f s - %.2f s, %.0f file(s) in torch_trace/profile_%03zu%s%s\n", i + 1,
            num(p, "start_s"), num(p, "stop_s"), num(p, "files"), i + 1,
            json_is_string(top) ? ", top kernel " : "",
            json_is_string(top) ? json_string_value(top) : "");
    }
    json_t *why = json_object_get(cap, "stop_reason");
    if (json_is_string(why))
        rc |= mp_buf_printf(b, "  stopped: %s\n", json_string_value(why));
    return rc;
}

int serve_summary_text(const struct serve_report *r, const char *report_json, struct mp_buf *b)
{
    const struct mp_serve_config *c = r->cfg;
    json_error_t je;
    json_t *rep = json_loads(report_json, 0, &je);
    if (!rep)
        return MP_EINVAL;
    char fw[16];
    snprintf(fw, sizeof(fw), "%s", mp_serve_config_engine(c)->name);
    for (char *p = fw; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    enum mp_serve_run_kind kind = mp_serve_config_run_kind(c);
    int rc = 0;
    static const char bar[] = "============================================================\n";
    rc |= mp_buf_puts(b, bar);
    rc |= mp_buf_printf(b, "Benchmark Result: %s\n", fw);
    rc |= mp_buf_puts(b, bar);
    rc |= mp_buf_printf(b, "Model: %s\n", c->model);
    rc |= mp_buf_printf(b, "Status: %s\n", r->success ? "SUCCESS" : "FAILED");
    rc |= mp_buf_printf(b, "Run kind: %s\n", mp_serve_run_kind_name(kind));
    rc |=
        mp_buf_printf(b, "Reward eligible: %s\n", kind == MP_SERVE_KIND_MEASUREMENT ? "yes" : "no");
    rc |= sum_metrics(b, rep);
    rc |= sum_traces(b, rep);
    rc |= sum_captures(b, rep);
    rc |= sum_gpu_repeats(b, rep);
    rc |= sum_failures(b, rep);
    if (r->n_errors) {
        rc |= mp_buf_puts(b, "\nErrors:\n");
        for (size_t i = 0; i < r->n_errors; i++)
            rc |= mp_buf_printf(b, "  - %s\n", r->errors[i]);
    }
    rc |= mp_buf_printf(b, "\nWorkspace: %s\n", r->workspace);
    rc |= mp_buf_printf(b, "Execution time: %.2f s\n", r->execution_time_s);
    rc |= mp_buf_puts(b, bar);
    json_decref(rep);
    return rc ? MP_ENOMEM : 0;
}

/* ---- config.yaml ---- */

/* s as a double-quoted YAML scalar that reads back as s (a value an agent
 * passed through the MCP benchmark tool can hold anything); bytes that are
 * not UTF-8 cannot be YAML text and keep the JSON quoting they had. */
static int yq(struct mp_buf *b, const char *s)
{
    if (!s)
        return mp_buf_puts(b, "null");
    if (mp_config_yaml_str(b, s, strlen(s)) == 0)
        return 0;
    return mp_json_str(b, s, strlen(s));
}

/* An env name as a mapping key: plain when it is an identifier (every name
 * a shell can export: the file stays as before), else quoted like a value. */
static int ykey(struct mp_buf *b, const char *s, size_t n)
{
    bool plain = n > 0 && !(s[0] >= '0' && s[0] <= '9');
    for (size_t i = 0; i < n && plain; i++)
        plain = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
    if (plain)
        return mp_buf_append(b, s, n);
    if (mp_config_yaml_str(b, s, n) == 0)
        return 0;
    return mp_json_str(b, s, n);
}

static int ybool(struct mp_buf *b, const char *key, bool v, int indent)
{
    return mp_buf_printf(b, "%*s%s: %s\n", indent, "", key, v ? "true" : "false");
}

/* A YAML-declared engine's section (its env is in envs already). */
static int yaml_engine(const struct mp_serve_engine *e, struct mp_buf *b)
{
    const char *kv[][2] = {{"name", e->name},
                           {"label", e->label},
                           {"command", e->command},
                           {"health_path", e->health_path},
                           {"models_path", e->models_path},
                           {"version_command", e->version_command},
                           {"extra_args_env", e->extra_args_env},
                           {"trace_layout", e->trace_layout}};
    int rc = mp_buf_puts(b, "  engine:\n");
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        if (!kv[i][1] && strcmp(kv[i][0], "models_path") != 0)
            continue;
        rc |= mp_buf_printf(b, "    %s: ", kv[i][0]);
        rc |= yq(b, kv[i][1]);
        rc |= mp_buf_putc(b, '\n');
    }
    if (e->stop_signal)
        rc |= mp_buf_printf(b, "    stop_signal: %s\n", sigabbrev_np(e->stop_signal));
    if (e->profile_start || e->profiler_args || e->profiler_dir_env) {
        const char *pk[][2] = {{"start", e->profile_start},
                               {"stop", e->profile_stop},
                               {"args", e->profiler_args},
                               {"dir_env", e->profiler_dir_env},
                               {"start_body", e->profile_start_body}};
        rc |= mp_buf_puts(b, "    profiler:\n");
        for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++)
            if (pk[i][1]) {
                rc |= mp_buf_printf(b, "      %s: ", pk[i][0]);
                rc |= yq(b, pk[i][1]);
                rc |= mp_buf_putc(b, '\n');
            }
    }
    if (e->images[0].arch)
        rc |= mp_buf_puts(b, "    images:\n");
    for (size_t i = 0; i < MP_SERVE_MAX_IMAGES && e->images[i].arch; i++) {
        rc |= mp_buf_puts(b, "      ");
        rc |= ykey(b, e->images[i].arch, strlen(e->images[i].arch));
        rc |= mp_buf_puts(b, ": ");
        rc |= yq(b, e->images[i].image);
        rc |= mp_buf_putc(b, '\n');
    }
    return rc;
}

/* the capture schedule under torch_profiler, and agentx, when in use */
static int yaml_captures(const struct mp_serve_config *c, struct mp_buf *b)
{
    const struct mp_serve_captures *k = &c->capture;
    int rc = 0;
    if (k->set || c->agentx.enabled)
        rc |= mp_buf_printf(b,
                            "      num_steps: %d\n      num_profiles: %d\n      start_seconds: %g\n"
                            "      interval_seconds: %g\n      duration_seconds: %g\n"
                            "      capture_timeout_seconds: %g\n      flush_timeout_seconds: %g\n",
                            k->num_steps, k->num_profiles, k->start_s, k->interval_s, k->duration_s,
                            k->capture_timeout_s, k->flush_timeout_s);
    if (k->set || c->agentx.enabled)
        rc |= ybool(b, "detailed_annotations", k->detailed_annotations, 6);
    return rc;
}

static int yaml_agentx(const struct mp_serve_config *c, struct mp_buf *b)
{
    const struct mp_serve_agentx *x = &c->agentx;
    if (!x->enabled)
        return 0;
    int rc = mp_buf_printf(b, "  agentx:\n    enabled: true\n    mode: %s\n    trace_file: ",
                           x->fast ? "fast" : "canonical");
    rc |= yq(b, x->trace_file);
    rc |= mp_buf_putc(b, '\n');
    rc |= ybool(b, "fixed_schedule", x->fixed_schedule, 4);
    rc |= mp_buf_printf(b, "    slowdown_factor: %g\n    block_size: %d\n", x->slowdown,
                        x->block_size);
    return rc;
}

int mp_serve_config_yaml(const struct mp_serve_config *c, struct mp_buf *b)
{
    int rc = 0;
    rc |= mp_buf_puts(b, "# effective benchmark config written by magpie\nbenchmark:\n");
    rc |= mp_buf_printf(b, "  framework: %s\n  model: ", mp_serve_config_engine(c)->name);
    rc |= yq(b, c->model);
    rc |= mp_buf_puts(b, "\n  precision: ");
    rc |= yq(b, c->precision);
    rc |= mp_buf_printf(b, "\n  run_mode: %s\n  run_kind: %s\n", mp_serve_mode_name(c->run_mode),
                        mp_serve_run_kind_name(c->run_kind));
    if (c->prefix_cache != MP_SERVE_PC_DEFAULT) /* default: config.yaml as before */
        rc |= mp_buf_printf(b, "  prefix_cache: %s\n", mp_serve_prefix_cache_name(c->prefix_cache));
    rc |= mp_buf_puts(b, "  envs:\n");
    for (int i = 0; i < c->n_envs; i++) {
        const char *eq = strchr(c->envs[i], '=');
        rc |= mp_buf_puts(b, "    ");
        rc |= ykey(b, c->envs[i], (size_t)(eq - c->envs[i]));
        rc |= mp_buf_puts(b, ": ");
        rc |= yq(b, eq + 1);
        rc |= mp_buf_putc(b, '\n');
    }
    if (c->engine)
        rc |= yaml_engine(c->engine, b);
    rc |= mp_buf_puts(b, "  profiler:\n    torch_profiler:\n");
    rc |= ybool(b, "enabled", c->torch_profiler, 6);
    rc |= yaml_captures(c, b);
    rc |= mp_buf_puts(b, "    system_profiler:\n");
    rc |= ybool(b, "enabled", c->system_profiler, 6);
    rc |= mp_buf_puts(b, "    tracelens:\n");
    rc |= ybool(b, "enabled", c->tracelens, 6);
    rc |= mp_buf_printf(b, "      analysis_mode: %s\n",
                        c->tracelens_mode == MP_SERVE_TL_PYTORCH ? "pytorch" : "inference");
    if (c->tracelens_mode == MP_SERVE_TL_PYTORCH) {
        rc |= mp_buf_printf(b, "      export_format: %s\n", c->tracelens_excel ? "excel" : "csv");
        rc |= ybool(b, "perf_report_enabled", c->tracelens_perf_report, 6);
        rc |= ybool(b, "multi_rank_report_enabled", c->tracelens_multi_rank, 6);
        rc |= mp_buf_puts(b, "      gpu_arch_config: ");
        rc |= yq(b, c->tracelens_gpu_arch_config);
        rc |= mp_buf_putc(b, '\n');
    }
    rc |= mp_buf_puts(b, "    gpu_monitor:\n");
    rc |= ybool(b, "enabled", c->gpu_monitor, 6);
    rc |= mp_buf_printf(b, "      interval_sec: %g\n", c->gpu_monitor_interval_s);
    if (c->gpu_monitor_device >= 0)
        rc |= mp_buf_printf(b, "      device_id: %d\n", c->gpu_monitor_device);
    else
        rc |= mp_buf_puts(b, "      device_id: null\n");
    rc |= mp_buf_puts(b, "  gap_analysis:\n");
    rc |= ybool(b, "enabled", c->gap_enabled, 4);
    rc |= mp_buf_printf(b, "    trace_start_pct: %g\n    trace_end_pct: %g\n    top_k: %d\n",
                        c->gap.start_pct, c->gap.end_pct, c->gap.top_k);
    rc |= mp_buf_printf(b, "    min_duration_us: %g\n    categories:", c->gap.min_duration_us);
    if (c->gap.categories_all)
        rc |= mp_buf_puts(b, " null\n");
    else {
        rc |= mp_buf_puts(b, c->gap.n_categories ? "\n" : " []\n");
        for (int i = 0; i < c->gap.n_categories; i++) {
            rc |= mp_buf_puts(b, "      - ");
            rc |= yq(b, c->gap.categories[i]);
            rc |= mp_buf_putc(b, '\n');
        }
    }
    rc |= mp_buf_puts(b, "    ignore_categories:");
    rc |= mp_buf_puts(b, c->gap.n_ignore ? "\n" : " []\n");
    for (int i = 0; i < c->gap.n_ignore; i++) {
        rc |= mp_buf_puts(b, "      - ");
        rc |= yq(b, c->gap.ignore[i]);
        rc |= mp_buf_putc(b, '\n');
    }
    rc |= mp_buf_puts(b, "  docker_image: ");
    rc |= yq(b, c->docker_image);
    rc |= mp_buf_puts(b, "\n  gpu_arch: ");
    rc |= yq(b, c->gpu_arch);
    rc |= mp_buf_puts(b, "\n  runner_type: ");
    rc |= yq(b, c->runner_type);
    rc |= mp_buf_puts(b, "\n  hf_cache_path: ");
    rc |= yq(b, c->hf_cache_path);
    rc |= mp_buf_printf(b, "\n  timeout_seconds: %g\n  gpu_selection:\n", c->timeout_s);
    rc |= ybool(b, "auto", c->gpu_auto, 4);
    rc |= mp_buf_printf(b, "    min_free_memory_gb: %g\n", c->gpu_min_free_gb);
    if (c->gpu_count > 0)
        rc |= mp_buf_printf(b, "    count: %d\n", c->gpu_count);
    else
        rc |= mp_buf_puts(b, "    count: null\n");
    rc |= mp_buf_puts(b, "    candidates:");
    if (!c->n_gpu_candidates)
        rc |= mp_buf_puts(b, " null\n");
    else {
        rc |= mp_buf_puts(b, " [");
        for (int i = 0; i < c->n_gpu_candidates; i++)
            rc |= mp_buf_printf(b, "%s%d", i ? ", " : "", c->gpu_candidates[i]);
        rc |= mp_buf_puts(b, "]\n");
    }
    rc |= mp_buf_puts(b, "  server_lifecycle:\n");
    rc |= ybool(b, "enabled", c->reuse, 4);
    rc |= ybool(b, "cleanup", c->reuse_cleanup, 4);
    rc |= ybool(b, "force_reuse", c->reuse_force, 4);
    rc |= mp_buf_puts(b, "    pid_dir: ");
    rc |= yq(b, c->reuse_pid_dir);
    rc |= mp_buf_printf(b, "\n    server_ready_timeout_s: %g\n", c->server_ready_timeout_s);
    char lim[48];
    mp_loadgen_fail_limit_format(&c->max_failed, lim, sizeof(lim));
    rc |= mp_buf_printf(b, "  privileged: %s\n  stall_timeout_seconds: %g\n",
                        c->privileged ? "true" : "false", c->stall_timeout_s);
    rc |= mp_buf_printf(b, "  max_failed_requests: \"%s\"\n", lim);
    if (c->repeat > 1)
        rc |= mp_buf_printf(b, "  repeat: %d\n", c->repeat);
    rc |= yaml_agentx(c, b);
    return rc ? MP_ENOMEM : 0;
}
