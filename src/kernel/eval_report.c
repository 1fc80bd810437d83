/* Reports of analyze / compare: analyze_report.json and compare_report.json
 * with Magpie's keys (EvaluationState per kernel, comparison_metrics,
 * winner, rankings, summary) plus magpie's timing statistics, confidence
 * intervals and verdicts under new keys; a config.yaml snapshot; the
 * terminal summary; and report.html with each kernel's latency
 * distribution and the speedup CIs. Every file is written atomically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/proc.h>

#include "kernel_int.h"

const char *mp_stage_state_name(enum mp_stage_state s)
{
    switch (s) {
    case MP_STAGE_NOT_RUN:
        return "NOT_RUN";
    case MP_STAGE_SUCCESS:
        return "SUCCESS";
    case MP_STAGE_FAILED:
        return "FAILED";
    case MP_STAGE_SKIPPED:
        return "SKIPPED";
    }
    return "NOT_RUN";
}

const char *mp_verdict_name(enum mp_verdict v)
{
    static const char *const n[] = {"BASELINE", "FASTER",       "SLOWER",
                                    "SAME",     "INCONCLUSIVE", "INCORRECT"};
    return (unsigned)v < sizeof(n) / sizeof(n[0]) ? n[v] : "?";
}

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* "nan", "inf" or "-inf": what a null from jnum stood for */
static const char *nonfinite_name(double v)
{
    return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

static json_t *perf_json(const struct mp_kernel_perf *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "success", json_boolean(p->success));
    json_object_set_new(o, "errors", jstr_or_null(p->errors));
    json_object_set_new(o, "command", jstr_or_null(p->command));
    json_object_set_new(o, "workload_dir", jstr_or_null(p->workload_dir));
    json_t *s = json_object();
    for (int i = 0; i < p->nmetrics; i++) {
        const struct mp_kernel_metric *m = &p->metrics[i];
        json_t *mo = json_object();
        json_object_set_new(mo, "value", jnum(m->value));
        json_object_set_new(mo, "unit", json_string(m->unit ? m->unit : ""));
        if (isfinite(m->peak))
            json_object_set_new(mo, "peak", json_real(m->peak));
        if (isfinite(m->pct_of_peak))
            json_object_set_new(mo, "pct_of_peak", json_real(m->pct_of_peak));
        json_object_set_new(s, m->name, mo);
    }
    json_object_set_new(o, "summary", s);
    json_t *ks = json_array();
    for (int i = 0; i < p->ndispatch; i++) {
        const struct mp_kernel_dispatch *k = &p->dispatch[i];
        json_t *ko = json_object(), *dn = json_object();
        json_object_set_new(ko, "kernel_name", json_string(k->name));
        json_object_set_new(ko, "dispatch_count", json_integer(k->count));
        json_object_set_new(dn, "avg", jnum(k->avg_ns));
        json_object_set_new(dn, "min", jnum(k->min_ns));
        json_object_set_new(dn, "max", jnum(k->max_ns));
        json_object_set_new(dn, "total", jnum(k->total_ns));
        json_object_set_new(ko, "duration_ns", dn);
        json_array_append_new(ks, ko);
    }
    json_object_set_new(o, "kernels", ks);
    json_object_set_new(o, "backend", jstr_or_null(p->backend));
    return o;
}

static json_t *stats_json(const struct mp_kernel_timing *t)
{
    const struct mp_stats_summary *s = &t->st;
    json_t *o = json_object();
    json_object_set_new(o, "median_ms", jnum(s->median));
    json_object_set_new(o, "p50_ms", jnum(s->median));
    json_object_set_new(o, "p99_ms", jnum(s->p99));
    json_object_set_new(o, "min_ms", jnum(s->min));
    json_object_set_new(o, "max_ms", jnum(s->max));
    json_object_set_new(o, "std_ms", jnum(s->std));
    json_t *sa = json_array();
    for (int i = 0; i < t->nsamples; i++)
        json_array_append_new(sa, json_real(t->samples_ms[i]));
    json_object_set_new(o, "samples_ms", sa);
    json_object_set_new(o, "n_repeat", json_integer(t->batch));
    json_object_set_new(o, "n_retries", json_integer(t->nsamples));
    json_object_set_new(o, "estimate_ms", jnum(s->median));
    /* magpie additions */
    json_object_set_new(o, "mean_ms", jnum(s->mean));
    json_object_set_new(o, "p5_ms", jnum(s->p5));
    json_object_set_new(o, "p95_ms", jnum(s->p95));
    json_object_set_new(o, "cov", jnum(s->cov));
    json_t *ci = json_array();
    json_array_append_new(ci, jnum(s->ci_lo));
    json_array_append_new(ci, jnum(s->ci_hi));
    json_object_set_new(o, "median_ci95_ms", ci);
    return o;
}

static json_t *latency_json(const struct mp_kernel_result *r, const struct mp_kernel_config *cfg)
{
    const struct mp_kernel_timing *t = &r->timing;
    json_t *o = json_object();
    json_object_set_new(o, "success", json_boolean(t->success));
    json_object_set_new(o, "method", json_string(t->method));
    json_object_set_new(o, "primary_metric", json_string("wall_median_ms"));
    json_object_set_new(o, "primary_value_ms", t->nsamples ? jnum(t->st.median) : json_null());
    json_t *c = json_object();
    json_object_set_new(c, "resolved_method", json_string(t->method));
    json_object_set_new(c, "kernel_type", json_string(mp_kernel_type_name(r->type)));
    json_object_set_new(c, "min_samples", json_integer(cfg->latency.min_samples));
    json_object_set_new(c, "max_noise", json_real(cfg->latency.max_noise));
    json_object_set_new(c, "min_time_s", json_real(cfg->latency.min_time_s));
    json_object_set_new(c, "max_time_s", json_real(cfg->latency.max_time_s));
    json_object_set_new(c, "l2_flush", json_boolean(cfg->latency.l2_flush));
    json_object_set_new(c, "power_guard", json_boolean(cfg->latency.power_guard));
    json_object_set_new(o, "config", c);
    json_object_set_new(o, "command", jstr_or_null(t->command));
    json_object_set_new(o, "output_dir", jstr_or_null(r->workdir));
    json_object_set_new(o, "errors", jstr_or_null(t->errors));
    if (t->nsamples)
        json_object_set_new(o, "wall_stats", stats_json(t));
    json_object_set_new(o, "stop_reason", json_string(t->stop_reason));
    json_object_set_new(o, "samples_per_launch_batch", json_integer(t->batch));
    json_object_set_new(o, "l2_flush_bytes", json_real(t->l2_flush_bytes));
    json_object_set_new(o, "device", json_string(t->device));
    json_t *g = json_object();
    json_object_set_new(g, "sm_clock_mhz_before", jnum(t->clock_before_mhz));
    json_object_set_new(g, "sm_clock_mhz_after", jnum(t->clock_after_mhz));
    json_object_set_new(g, "temperature_c_before", jnum(t->temp_before_c));
    json_object_set_new(g, "temperature_c_after", jnum(t->temp_after_c));
    if (t->during.samples > 0) {
        json_t *dg = json_object();
        json_object_set_new(dg, "busy_samples", json_integer(t->during.samples));
        json_object_set_new(dg, "sm_clock_mhz_mean", jnum(t->during.mean_mhz));
        json_object_set_new(dg, "sm_clock_mhz_min", jnum(t->during.min_mhz));
        json_object_set_new(dg, "capped_share", jnum(t->during.capped_share));
        json_object_set_new(g, "during_timing", dg);
    }
    if (t->guard.present) {
        json_t *pg = json_object();
        json_object_set_new(pg, "reference_sm_clock_mhz", jnum(t->guard.ref_mhz));
        json_object_set_new(pg, "sample_sm_clock_mhz_median", jnum(t->guard.clock_mhz));
        json_object_set_new(pg, "cool_ratio", jnum(t->guard.cool_ratio));
        json_object_set_new(pg, "discarded_throttled_samples", json_integer(t->guard.discarded));
        json_object_set_new(pg, "sustained_cap", json_boolean(t->guard.sustained));
        json_object_set_new(g, "power_guard", pg);
    }
    json_object_set_new(g, "throttled", json_boolean(t->throttled));
    json_object_set_new(o, "gpu_state", g);
    if (t->seq.present) {
        const struct mp_kernel_seq *q = &t->seq;
        json_t *sq = json_object();
        json_object_set_new(sq, "decision", json_string(q->decision));
        json_object_set_new(sq, "look", json_integer(q->look));
        json_object_set_new(sq, "looks_max", json_integer(q->looks_max));
        json_object_set_new(sq, "samples", json_integer(q->n));
        json_object_set_new(sq, "baseline_samples", json_integer(q->n_baseline));
        json_object_set_new(sq, "time_ratio_lo", jnum(q->ratio_lo));
        json_object_set_new(sq, "time_ratio_hi", jnum(q->ratio_hi));
        json_object_set_new(sq, "alpha", jnum(q->alpha));
        json_object_set_new(sq, "alpha_per_look", jnum(q->alpha_look));
        json_object_set_new(sq, "threshold", jnum(q->threshold));
        json_object_set_new(o, "sequential", sq);
    }
    return o;
}

static json_t *result_json(const struct mp_kernel_result *r, const struct mp_kernel_config *cfg)
{
    json_t *o = json_object();
    json_object_set_new(o, "compiling_state", json_string(mp_stage_state_name(r->compiling)));
    json_object_set_new(o, "correctness_state", json_string(mp_stage_state_name(r->correctness)));
    json_object_set_new(o, "performance_state", json_string(mp_stage_state_name(r->performance)));
    json_object_set_new(o, "latency_state", json_string(mp_stage_state_name(r->latency)));
    json_t *errs = json_array();
    for (int i = 0; i < r->nerrors; i++)
        json_array_append_new(errs, json_string(r->errors[i]));
    json_object_set_new(o, "errors", errs);
    json_object_set_new(o, "score", json_real(r->score));
    if (r->has_compile) {
        json_t *c = json_object();
        json_object_set_new(c, "success", json_boolean(r->compile_success));
        json_object_set_new(c, "errors", jstr_or_null(r->compile_errors));
        json_object_set_new(o, "compiling_result", c);
    } else {
        json_object_set_new(o, "compiling_result", json_null());
    }
    if (r->has_correct) {
        const struct mp_kernel_correct *k = &r->correct;
        json_t *c = json_object();
        json_object_set_new(c, "success", json_boolean(k->success));
        json_object_set_new(c, "errors", jstr_or_null(k->errors));
        json_object_set_new(c, "verified", json_boolean(k->verified));
        json_object_set_new(c, "mode", json_string(k->mode));
        json_object_set_new(c, "checks", json_integer(k->checks));
        if (!strcmp(k->mode, "reference") || !strcmp(k->mode, "finite_check")) {
            json_object_set_new(c, "max_abs_err", jnum(k->max_abs_err));
            json_object_set_new(c, "max_rel_err", jnum(k->max_rel_err));
            json_object_set_new(c, "mismatches", json_integer(k->mismatches));
            json_object_set_new(c, "input_mutated", json_boolean(k->input_mutated));
            json_object_set_new(c, "recheck_after_timing",
                                k->recheck_done ? json_boolean(k->recheck_ok) : json_null());
            json_t *nf = json_object(); /* what the nulls above were */
            if (!isfinite(k->max_abs_err))
                json_object_set_new(nf, "max_abs_err", json_string(nonfinite_name(k->max_abs_err)));
            if (!isfinite(k->max_rel_err))
                json_object_set_new(nf, "max_rel_err", json_string(nonfinite_name(k->max_rel_err)));
            if (json_object_size(nf))
                json_object_set_new(c, "nonfinite", nf);
            else
                json_decref(nf);
            json_t *tol = k->tolerance ? json_loads(k->tolerance, 0, NULL) : NULL;
            if (tol)
                json_object_set_new(c, "tolerance", tol);
        }
        json_object_set_new(o, "correctness_result", c);
    } else {
        json_object_set_new(o, "correctness_result", json_null());
    }
    json_object_set_new(o, "performance_result", r->has_perf ? perf_json(&r->perf) : json_null());
    json_object_set_new(o, "latency_result", r->has_timing ? latency_json(r, cfg) : json_null());
    json_t *bd = r->breakdown ? json_loads(r->breakdown, 0, NULL) : NULL;
    json_object_set_new(o, "time_breakdown", bd ? bd : json_null());
    json_t *x = json_object();
    json_object_set_new(x, "kernel_id", json_string(r->id));
    json_object_set_new(x, "kernel_type", json_string(mp_kernel_type_name(r->type)));
    json_object_set_new(x, "workdir", jstr_or_null(r->workdir));
    json_object_set_new(o, "extra", x);
    return o;
}

static json_t *summary_entry(const struct mp_kernel_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "kernel_id", json_string(r->id));
    json_object_set_new(o, "kernel_type", json_string(mp_kernel_type_name(r->type)));
    json_object_set_new(o, "compiling_state", json_string(mp_stage_state_name(r->compiling)));
    json_object_set_new(o, "correctness_state", json_string(mp_stage_state_name(r->correctness)));
    json_object_set_new(o, "performance_state", json_string(mp_stage_state_name(r->performance)));
    json_object_set_new(o, "latency_state", json_string(mp_stage_state_name(r->latency)));
    json_object_set_new(o, "score", json_real(r->score));
    json_t *l = json_object();
    json_object_set_new(l, "method", json_string(r->timing.method));
    json_object_set_new(l, "primary_metric", json_string("wall_median_ms"));
    bool have = r->has_timing && r->timing.nsamples > 0;
    json_object_set_new(l, "primary_value_ms", have ? jnum(r->timing.st.median) : json_null());
    json_object_set_new(l, "wall_median_ms", have ? jnum(r->timing.st.median) : json_null());
    json_object_set_new(l, "kernel_median_ms", json_null());
    json_object_set_new(o, "latency", l);
    return o;
}

static int write_json(json_t *root, const char *path, struct mp_diag *d)
{
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    if (!s)
        return mp_diag_set(d, MP_ENOMEM, "cannot serialise the report");
    size_t n = strlen(s);
    s[n] = 0;
    struct mp_buf b;
    mp_buf_init(&b, (size_t)1 << 30);
    mp_buf_append(&b, s, n);
    mp_buf_putc(&b, '\n');
    free(s);
    int rc = mp_fs_write_atomic(path, b.data, b.len, d);
    mp_buf_fini(&b);
    return rc;
}

/* config.yaml snapshot: {kernels: [KernelEvalConfig.to_dict()]} (YAML is a
 * superset of JSON, so the snapshot is written as JSON text). */
static int write_snapshot(const struct mp_kernel_run *run, const struct mp_kernel_config *cfg,
                          struct mp_diag *d)
{
    json_t *root = json_object(), *arr = json_array();
    for (int i = 0; i < cfg->nkernels; i++) {
        const struct mp_kernel_spec *k = &cfg->kernels[i];
        json_t *o = json_object();
        json_object_set_new(o, "kernel_id", json_string(k->id ? k->id : "kernel"));
        json_object_set_new(o, "kernel_type", json_string(mp_kernel_type_name(k->type)));
        json_t *src = json_array();
        for (int j = 0; j < k->nsources; j++)
            json_array_append_new(src, json_string(k->sources[j]));
        json_object_set_new(o, "source_file_path", src);
        json_object_set_new(o, "working_dir", jstr_or_null(k->working_dir));
        json_t *env = json_object();
        for (int j = 0; j < k->nenv; j++) {
            const char *eq = strchr(k->env[j], '=');
            if (!eq)
                continue;
            char key[256];
            snprintf(key, sizeof(key), "%.*s", (int)(eq - k->env[j]), k->env[j]);
            json_object_set_new(env, key, json_string(eq + 1));
        }
        json_object_set_new(o, "env", env);
        const struct mp_cmds *cm[3] = {&k->compile, &k->testcase, &k->prof};
        const char *names[3] = {"compiling_command", "testcase_command", "prof_command"};
        for (int c = 0; c < 3; c++) {
            json_t *l = json_array();
            for (int a = 0; a < cm[c]->n; a++) {
                json_t *argv = json_array();
                for (int w = 0; cm[c]->argv[a][w]; w++)
                    json_array_append_new(argv, json_string(cm[c]->argv[a][w]));
                json_array_append_new(l, argv);
            }
            json_object_set_new(o, names[c], l);
        }
        json_object_set_new(o, "get_inputs_func",
                            json_string(k->get_inputs_func ? k->get_inputs_func : "get_inputs"));
        json_object_set_new(
            o, "get_init_inputs_func",
            json_string(k->get_init_inputs_func ? k->get_init_inputs_func : "get_init_inputs"));
        json_object_set_new(o, "dtype", json_string(k->dtype ? k->dtype : "auto"));
        json_object_set_new(o, "reference", jstr_or_null(k->reference));
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "kernels", arr);
    char path[4200];
    snprintf(path, sizeof(path), "%s/config.yaml", run->workspace);
    int rc = write_json(root, path, d);
    json_decref(root);
    return rc;
}

/* ---- HTML ---- */

static void html_escape(struct mp_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            mp_buf_puts(b, "&lt;");
        else if (*s == '>')
            mp_buf_puts(b, "&gt;");
        else if (*s == '&')
            mp_buf_puts(b, "&amp;");
        else
            mp_buf_putc(b, *s);
    }
}

/* One row per kernel: a strip of samples (jittered dots), the p25-p75 box,
 * the median and its CI, on a shared time axis. */
static void html_latency(struct mp_buf *b, const struct mp_kernel_run *run)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_timing *t = &run->results[i].timing;
        if (!t->nsamples)
            continue;
        if (t->st.p5 < lo)
            lo = t->st.p5;
        if (t->st.p95 > hi)
            hi = t->st.p95;
    }
    if (!isfinite(lo) || !isfinite(hi))
        return;
    double pad = (hi - lo) * 0.15 + hi * 0.01;
    lo = lo - pad > 0 ? lo - pad : 0;
    hi += pad;
    int W = 760, L = 170, rowh = 44, H = 40 + rowh * run->n;
    mp_buf_printf(b,
                  "<h2>Latency distributions (ms per launch, p5..p95 range shown)</h2>\n"
                  "<svg width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
                  W + L + 20, H);
    for (int g = 0; g <= 4; g++) {
        double v = lo + (hi - lo) * g / 4;
        double x = L + W * g / 4.0;
        mp_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"10\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                      "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.4g</text>\n",
                      x, x, H - 20, x, H - 6, v);
    }
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_result *r = &run->results[i];
        double y = 20 + rowh * i + rowh / 2.0;
        mp_buf_printf(b, "<text x=\"4\" y=\"%.1f\">", y + 4);
        html_escape(b, r->id);
        mp_buf_puts(b, "</text>\n");
        const struct mp_kernel_timing *t = &r->timing;
        if (!t->nsamples)
            continue;
#define XP(v) (L + W * (((v) < lo ? lo : (v) > hi ? hi : (v)) - lo) / (hi - lo))
        int step = t->nsamples > 400 ? t->nsamples / 400 : 1;
        for (int s = 0; s < t->nsamples; s += step) {
            double jit = ((s * 7919) % 17 - 8) * 1.2;
            mp_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.5\" fill=\"#89b\"/>",
                          XP(t->samples_ms[s]), y + jit);
        }
        mp_buf_printf(b,
                      "\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" fill=\"none\" "
                      "stroke=\"#345\"/>",
                      XP(t->st.p25), y - 10, XP(t->st.p75) - XP(t->st.p25));
        mp_buf_printf(b,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" fill=\"#e63\" "
                      "fill-opacity=\"0.35\"/>",
                      XP(t->st.ci_lo), y - 10, fmax(XP(t->st.ci_hi) - XP(t->st.ci_lo), 1.0));
        mp_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c20\" "
                      "stroke-width=\"2\"/>\n",
                      XP(t->st.median), y - 12, XP(t->st.median), y + 12);
#undef XP
    }
    mp_buf_puts(b, "</svg>\n<p>Box: p25..p75; red line: median; shaded: 95% bootstrap CI of the "
                   "median; dots: samples.</p>\n");
}

static void html_speedups(struct mp_buf *b, const struct mp_kernel_run *run)
{
    if (!run->vs)
        return;
    double lo = 1, hi = 1;
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_vs *v = &run->vs[i];
        if (i == run->baseline || !isfinite(v->speedup_lo))
            continue;
        lo = fmin(lo, v->speedup_lo);
        hi = fmax(hi, v->speedup_hi);
    }
    double pad = (hi - lo) * 0.15 + 0.01;
    lo -= pad;
    hi += pad;
    int W = 600, L = 170, rowh = 30, H = 40 + rowh * run->n;
    mp_buf_printf(b,
                  "<h2>Speedup vs baseline (95%% CI; &gt; 1 = faster)</h2>\n"
                  "<svg width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
                  W + L + 160, H);
#define XS(v) (L + W * ((v)-lo) / (hi - lo))
    mp_buf_printf(b,
                  "<line x1=\"%.1f\" y1=\"10\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\" "
                  "stroke-dasharray=\"4\"/>\n",
                  XS(1.0), XS(1.0), H - 20);
    mp_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1.0</text>\n", XS(1.0),
                  H - 6);
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_vs *v = &run->vs[i];
        double y = 20 + rowh * i + rowh / 2.0;
        mp_buf_printf(b, "<text x=\"4\" y=\"%.1f\">", y + 4);
        html_escape(b, run->results[i].id);
        mp_buf_puts(b, "</text>");
        if (isfinite(v->speedup_lo) && i != run->baseline) {
            mp_buf_printf(b,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#345\" "
                          "stroke-width=\"6\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                          "fill=\"#c20\"/>",
                          XS(v->speedup_lo), y, XS(v->speedup_hi), y, XS(v->speedup), y);
        }
        mp_buf_printf(b, "<text x=\"%d\" y=\"%.1f\">%s", L + W + 10, y + 4,
                      mp_verdict_name(v->verdict));
        if (isfinite(v->speedup) && i != run->baseline)
            mp_buf_printf(b, " %.3fx [%.3f, %.3f]", v->speedup, v->speedup_lo, v->speedup_hi);
        mp_buf_puts(b, "</text>\n");
    }
#undef XS
    mp_buf_puts(b, "</svg>\n");
}

/* The GPU's state while a kernel was timed, for the HTML table: the clock
 * monitor's summary, what the power guard did, and the throttle flag. */
static void html_gpu_state(struct mp_buf *b, const struct mp_kernel_timing *t)
{
    const char *sep = "";
    if (t->during.samples > 0 && isfinite(t->during.mean_mhz)) {
        mp_buf_printf(b, "SM %.0f MHz, cap in %.0f%%", t->during.mean_mhz,
                      t->during.capped_share * 100);
        sep = "; ";
    }
    const struct mp_kernel_guard *g = &t->guard;
    if (g->present && (g->discarded > 0 || g->cool_ratio > 0)) {
        mp_buf_printf(b, "%sguard: %d dropped, cool-down %.1fx", sep, g->discarded, g->cool_ratio);
        sep = "; ";
    }
    if (t->throttled)
        mp_buf_printf(b, "%sTHROTTLED", sep);
}

static int write_html(struct mp_kernel_run *run, struct mp_diag *d)
{
    struct mp_buf b;
    mp_buf_init(&b, (size_t)64 << 20);
    mp_buf_printf(&b,
                  "<!doctype html><html><head><meta charset=\"utf-8\"><title>magpie %s</title>"
                  "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;"
                  "text-align:left}</style></head><body>\n<h1>magpie %s &mdash; %s</h1>\n"
                  "<table><tr><th>kernel</th><th>type</th><th>compile</th><th>correctness</th>"
                  "<th>performance</th><th>latency</th><th>median ms</th><th>CoV</th>"
                  "<th>GPU while timing</th><th>verdict</th></tr>\n",
                  run->mode, run->mode, run->timestamp);
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_result *r = &run->results[i];
        mp_buf_puts(&b, "<tr><td>");
        html_escape(&b, r->id);
        mp_buf_printf(&b, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
                      mp_kernel_type_name(r->type), mp_stage_state_name(r->compiling),
                      mp_stage_state_name(r->correctness), mp_stage_state_name(r->performance),
                      mp_stage_state_name(r->latency));
        if (r->timing.nsamples)
            mp_buf_printf(&b, "<td>%.5g</td><td>%.2f%%</td>", r->timing.st.median,
                          r->timing.st.cov * 100);
        else
            mp_buf_puts(&b, "<td></td><td></td>");
        mp_buf_puts(&b, "<td>");
        if (r->timing.nsamples)
            html_gpu_state(&b, &r->timing);
        mp_buf_printf(&b, "</td><td>%s</td></tr>\n",
                      run->vs ? mp_verdict_name(run->vs[i].verdict) : "");
    }
    mp_buf_puts(&b, "</table>\n");
    html_latency(&b, run);
    html_speedups(&b, run);
    mp_buf_puts(&b, "</body></html>\n");
    char path[4200];
    snprintf(path, sizeof(path), "%s/report.html", run->workspace);
    int rc = mp_fs_write_atomic(path, b.data, b.len, d);
    mp_buf_fini(&b);
    if (!rc)
        run->html_path = mp_strdup(path);
    return rc;
}

int kern_write_reports(struct mp_kernel_run *run, const struct mp_kernel_config *cfg,
                       struct mp_diag *d)
{
    json_t *root = json_object();
    json_object_set_new(root, "mode", json_string(run->mode));
    json_object_set_new(root, "timestamp", json_string(run->timestamp));
    json_t *summary = json_array();
    json_t *results = json_array();
    for (int i = 0; i < run->n; i++) {
        json_array_append_new(summary, summary_entry(&run->results[i]));
        json_array_append_new(results, result_json(&run->results[i], cfg));
    }
    json_object_set_new(root, "summary", summary);
    if (!strcmp(run->mode, "compare")) {
        json_t *res = json_object();
        json_object_set_new(res, "kernel_results", results);
        json_t *cm = json_object(), *corr = json_array(), *ps = json_array();
        json_t *sp = json_array(), *ver = json_array();
        for (int i = 0; i < run->n; i++) {
            const struct mp_kernel_vs *v = &run->vs[i];
            json_array_append_new(corr,
                                  json_boolean(run->results[i].correctness == MP_STAGE_SUCCESS));
            json_array_append_new(ps, v->has_perf_score ? json_real(v->perf_score) : json_null());
            json_t *so = json_object();
            json_object_set_new(so, "speedup", jnum(v->speedup));
            json_t *ci = json_array();
            json_array_append_new(ci, jnum(v->speedup_lo));
            json_array_append_new(ci, jnum(v->speedup_hi));
            json_object_set_new(so, "ci95", ci);
            bool sq = run->results[i].timing.seq.present && i != run->baseline;
            json_object_set_new(so, "ci_kind", json_string(sq ? "sequential" : "bootstrap"));
            json_object_set_new(so, "p_value", jnum(v->p_value));
            json_object_set_new(so, "p_holm", jnum(v->p_holm));
            json_array_append_new(sp, so);
            json_array_append_new(ver, json_string(mp_verdict_name(v->verdict)));
        }
        json_object_set_new(cm, "correctness", corr);
        json_object_set_new(cm, "all_correct", json_boolean(run->all_correct));
        json_object_set_new(cm, "perf_scores", ps);
        json_object_set_new(cm, "speedup_vs_baseline", sp);
        json_object_set_new(cm, "verdicts", ver);
        json_object_set_new(cm, "alpha", json_real(cfg->compare.alpha));
        json_object_set_new(cm, "threshold", json_real(cfg->compare.threshold));
        json_object_set_new(cm, "timing", json_string(cfg->compare.timing));
        json_object_set_new(res, "comparison_metrics", cm);
        json_object_set_new(res, "baseline", json_integer(run->baseline));
        json_object_set_new(res, "winner",
                            run->winner >= 0 ? json_integer(run->winner) : json_null());
        json_t *rk = json_array();
        for (int i = 0; i < run->n; i++) {
            if (!run->vs[i].has_perf_score)
                continue;
            json_t *pair = json_array();
            json_array_append_new(pair, json_integer(i));
            json_array_append_new(pair, json_real(run->vs[i].perf_score));
            json_array_append_new(rk, pair);
        }
        /* sorted by score, descending (stable insertion) */
        size_t nr = json_array_size(rk);
        for (size_t a = 1; a < nr; a++)
            for (size_t b2 = a; b2 > 0; b2--) {
                double x = json_real_value(json_array_get(json_array_get(rk, b2), 1));
                double y = json_real_value(json_array_get(json_array_get(rk, b2 - 1), 1));
                if (x <= y)
                    break;
                json_t *t = json_incref(json_array_get(rk, b2));
                json_array_set(rk, b2, json_array_get(rk, b2 - 1));
                json_array_set_new(rk, b2 - 1, t);
            }
        json_object_set_new(res, "rankings", rk);
        json_object_set_new(res, "summary", json_string(run->summary ? run->summary : ""));
        json_object_set_new(root, "results", res);
    } else {
        json_object_set_new(root, "results", results);
    }
    json_t *meta = json_object();
    json_object_set_new(meta, "version", json_string(MP_VERSION));
    json_object_set_new(meta, "workspace", json_string(run->workspace));
    json_object_set_new(root, "magpie", meta);
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s_report.json", run->workspace, run->mode);
    int rc = write_json(root, path, d);
    json_decref(root);
    if (!rc)
        run->report_path = mp_strdup(path);
    if (!rc)
        rc = write_snapshot(run, cfg, d);
    if (!rc)
        rc = write_html(run, d);
    return rc;
}

static double bd_num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* " name 1.23 s" when o[k] is a number */
static void bd_item(struct mp_buf *b, const json_t *o, const char *k, const char *name)
{
    double v = bd_num(o, k);
    if (isfinite(v))
        mp_buf_printf(b, ", %s %.2f s", name, v);
}

/* one child process of the breakdown: wall, start, imports, phases */
static void bd_process(struct mp_buf *b, const json_t *p, const char *name)
{
    if (!json_is_object(p))
        return;
    mp_buf_printf(b, "  %s: %.2f s", name, bd_num(p, "wall_s"));
    bd_item(b, p, "start_s", "start");
    bd_item(b, p, "imports_s", "imports");
    bd_item(b, p, "device_open_s", "device open");
    const json_t *ph = json_object_get(p, "phases");
    bd_item(b, ph, "build_s", "build");
    bd_item(b, ph, "load_s", "load");
    bd_item(b, ph, "reference_cache_s", "reference cache");
    json_t *seeds = json_object_get(ph, "seeds");
    for (size_t i = 0; i < json_array_size(seeds); i++) {
        json_t *sd = json_array_get(seeds, i);
        mp_buf_printf(b, "%s%.2f (inputs %.2f, ref %.2f, kernel %.2f, check %.2f)",
                      i ? " + " : ", seeds ",
                      bd_num(sd, "inputs_s") + bd_num(sd, "reference_s") +
                          bd_num(sd, "candidate_s") + bd_num(sd, "check_s"),
                      bd_num(sd, "inputs_s"), bd_num(sd, "reference_s"), bd_num(sd, "candidate_s"),
                      bd_num(sd, "check_s"));
    }
    bd_item(b, ph, "timing_inputs_s", "timing inputs");
    bd_item(b, ph, "warmup_s", "warm-up");
    bd_item(b, ph, "timing_loop_s", "timing loop (shared)");
    bd_item(b, ph, "timed_device_s", "timed samples");
    bd_item(b, ph, "recheck_s", "re-check");
    bd_item(b, ph, "profiled_s", "profiled calls");
    mp_buf_puts(b, "\n");
}

/* the terminal's view of a kernel's time breakdown */
static void breakdown_lines(struct mp_buf *b, const char *bdjson)
{
    json_t *bd = bdjson ? json_loads(bdjson, 0, NULL) : NULL;
    if (!bd)
        return;
    mp_buf_puts(b, "Time:");
    double cs = bd_num(bd, "compile_s");
    if (isfinite(cs))
        mp_buf_printf(b, " compile %.2f s", cs);
    double ps = bd_num(bd, "profile_s");
    if (isfinite(ps))
        mp_buf_printf(b, "%s profile %.2f s (after the verdict)", isfinite(cs) ? "," : "", ps);
    mp_buf_puts(b, "\n");
    bd_process(b, json_object_get(bd, "build_process"), "build process");
    bd_process(b, json_object_get(bd, "correctness_process"), "correctness process");
    bd_process(b, json_object_get(bd, "timed_process"), "timed process");
    bd_process(b, json_object_get(bd, "shared_process_discarded"),
               "shared process (discarded: a kernel in it raised or it failed)");
    bd_process(b, json_object_get(bd, "profile_process"), "profiled process (under the profiler)");
    json_decref(bd);
}

int mp_kernel_run_summary(const struct mp_kernel_run *run, struct mp_buf *b)
{
    static const char bar[] = "============================================================";
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_result *r = &run->results[i];
        mp_buf_printf(b, "%s\nKernel: %s\nType: %s\n", bar, r->id, mp_kernel_type_name(r->type));
        mp_buf_printf(b, "Compiling: %s\nCorrectness: %s", mp_stage_state_name(r->compiling),
                      mp_stage_state_name(r->correctness));
        if (r->has_correct && r->correct.mode[0]) {
            mp_buf_printf(b, " (%s%s", r->correct.mode,
                          !r->correct.success   ? ""
                          : r->correct.verified ? ", verified"
                                                : ", unverified");
            if (!strcmp(r->correct.mode, "reference"))
                mp_buf_printf(b, ", %d inputs, max abs err %.3g", r->correct.checks,
                              r->correct.max_abs_err);
            if (r->correct.recheck_done)
                mp_buf_printf(b, ", re-check after timing %s",
                              r->correct.recheck_ok ? "ok" : "FAILED");
            mp_buf_puts(b, ")");
        }
        mp_buf_printf(b, "\nPerformance: %s\n", mp_stage_state_name(r->performance));
        for (int m = 0; m < r->perf.nmetrics && m < 8; m++)
            mp_buf_printf(b, "  %s = %.6g %s\n", r->perf.metrics[m].name, r->perf.metrics[m].value,
                          r->perf.metrics[m].unit ? r->perf.metrics[m].unit : "");
        mp_buf_printf(b, "Latency: %s\n", mp_stage_state_name(r->latency));
        const struct mp_kernel_timing *t = &r->timing;
        if (t->nsamples) {
            const struct mp_stats_summary *s = &t->st;
            mp_buf_printf(b,
                          "  median %.6g ms [95%% CI %.6g, %.6g]  mean %.6g  std %.3g  CoV "
                          "%.2f%%\n  min %.6g  p5 %.6g  p95 %.6g  max %.6g  (%d samples x %d "
                          "launches%s%s)\n",
                          s->median, s->ci_lo, s->ci_hi, s->mean, s->std, s->cov * 100, s->min,
                          s->p5, s->p95, s->max, t->nsamples, t->batch,
                          t->stop_reason[0] ? ", " : "", t->stop_reason);
            if (isfinite(t->clock_before_mhz) || isfinite(t->temp_after_c))
                mp_buf_printf(b, "  GPU: SM clock %.0f -> %.0f MHz, %.0f -> %.0f C%s\n",
                              t->clock_before_mhz, t->clock_after_mhz, t->temp_before_c,
                              t->temp_after_c, t->throttled ? "  THROTTLED" : "");
            if (t->during.samples > 0)
                mp_buf_printf(b,
                              "  GPU while timing: SM clock %.0f MHz mean, %.0f min over %d busy "
                              "samples; power/thermal cap in %.0f%% of them%s\n",
                              t->during.mean_mhz, t->during.min_mhz, t->during.samples,
                              t->during.capped_share * 100,
                              t->during.capped_share < 0.10 ? ""
                              : t->guard.present && !t->guard.sustained
                                  ? " (the power guard dropped the samples that started capped)"
                                  : " (the median follows the GPU's thermal state: expect "
                                    "run-to-run spread)");
            const struct mp_kernel_guard *pg = &t->guard;
            if (pg->present && (pg->discarded > 0 || pg->cool_ratio > 0))
                mp_buf_printf(b,
                              "  power guard: %d throttled samples discarded, cool-down %.1fx "
                              "the kernel's time; SM clock %.0f MHz before the kept samples "
                              "(reference %.0f)%s\n",
                              pg->discarded, pg->cool_ratio, pg->clock_mhz, pg->ref_mhz,
                              pg->sustained ? "; the cap held even so: samples kept, THROTTLED"
                                            : "");
        } else if (t->errors) {
            mp_buf_printf(b, "  %s\n", t->errors);
        }
        if (run->vs && i != run->baseline) {
            const struct mp_kernel_vs *v = &run->vs[i];
            mp_buf_printf(b, "Verdict: %s", mp_verdict_name(v->verdict));
            const struct mp_kernel_seq *q = &r->timing.seq;
            if (q->present && isfinite(v->speedup))
                mp_buf_printf(b,
                              " (speedup %.4fx, sequential CI [%.4f, %.4f] at look %d of %d, "
                              "%d vs %d samples, alpha %.2g per look; p=%.3g)",
                              v->speedup, v->speedup_lo, v->speedup_hi, q->look, q->looks_max, q->n,
                              q->n_baseline, q->alpha_look, v->p_value);
            else if (isfinite(v->speedup))
                mp_buf_printf(b, " (speedup %.4fx, 95%% CI [%.4f, %.4f], p=%.3g, Holm p=%.3g)",
                              v->speedup, v->speedup_lo, v->speedup_hi, v->p_value, v->p_holm);
            mp_buf_puts(b, "\n");
        } else if (run->vs) {
            mp_buf_puts(b, "Verdict: BASELINE\n");
        }
        breakdown_lines(b, r->breakdown);
        mp_buf_printf(b, "Score: %.2f\n", r->score);
        if (r->nerrors) {
            mp_buf_puts(b, "Errors:\n");
            for (int e = 0; e < r->nerrors; e++)
                mp_buf_printf(b, "  - %s\n", r->errors[e]);
        }
    }
    mp_buf_printf(b, "%s\n", bar);
    if (run->summary)
        mp_buf_printf(b, "%s\n", run->summary);
    mp_buf_printf(b, "Workspace: %s\n", run->workspace ? run->workspace : "");
    if (run->report_path)
        mp_buf_printf(b, "Report: %s\n", run->report_path);
    if (run->html_path)
        mp_buf_printf(b, "HTML: %s\n", run->html_path);
    return 0;
}
