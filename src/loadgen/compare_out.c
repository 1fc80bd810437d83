/* Writers of `benchmark compare`: the terminal table, the JSON document and
 * a self-contained HTML page (inline CSS and SVG, nothing fetched) with the
 * tables and the CDFs of TTFT, ITL and E2EL of every run. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/bench_compare.h>
#include <magpie/fmt.h>
#include <magpie/stats.h>

#include "loadgen_int.h"

static size_t side_requests(const struct mp_bcmp_side *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_runs; i++)
        n += s->runs[i].n_req;
    return n;
}

static int side_line(struct mp_buf *b, const char *role, const struct mp_bcmp_side *s)
{
    int rc = mp_buf_printf(b, "%-10s %s (%zu run%s, %zu requests)\n", role, s->label, s->n_runs,
                           s->n_runs == 1 ? "" : "s", side_requests(s));
    for (size_t i = 0; i < s->n_notes; i++)
        rc |= mp_buf_printf(b, "           note: %s\n", s->notes[i]);
    return rc;
}

static void fmt_val(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (fabs(v) >= 1000)
        snprintf(buf, len, "%.1f", v);
    else if (fabs(v) >= 10)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.3f", v);
}

static void fmt_pct(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%+.2f%%", v);
}

static const char *kernel_status(const struct mp_bcmp_kernel_row *k)
{
    return !k->base ? "only in candidate's top k" : !k->cand ? "only in baseline's top k" : "";
}

static int kernels_text(struct mp_buf *b, const struct mp_bcmp_pair *p)
{
    if (!p->n_kernels)
        return 0;
    int rc = mp_buf_printf(b,
                           "  kernels (gap analysis top k, GPU time over all ranks):\n"
                           "    %-60s %11s %11s %9s %13s %13s\n",
                           "kernel", "base ms", "cand ms", "change", "calls", "share %");
    for (size_t i = 0; i < p->n_kernels; i++) {
        const struct mp_bcmp_kernel_row *k = &p->kernels[i];
        char bt[32], ct[32], ch[32], calls[48], share[48];
        fmt_val(k->base ? k->base->total_us / 1e3 : NAN, bt, sizeof(bt));
        fmt_val(k->cand ? k->cand->total_us / 1e3 : NAN, ct, sizeof(ct));
        fmt_pct(k->change_pct, ch, sizeof(ch));
        snprintf(calls, sizeof(calls), "%llu/%llu", k->base ? k->base->calls : 0ULL,
                 k->cand ? k->cand->calls : 0ULL);
        snprintf(share, sizeof(share), "%.1f/%.1f", k->base ? k->base->pct : 0.0,
                 k->cand ? k->cand->pct : 0.0);
        rc |= mp_buf_printf(b, "    %-60.60s %11s %11s %9s %13s %13s %s\n", k->name, bt, ct, ch,
                            calls, share, kernel_status(k));
    }
    return rc;
}

/* The engine's own /metrics over each side's runs, side by side:
 * descriptive (no verdict: a scrape every few seconds is no sample of
 * requests). */
static const struct {
    const char *key, *label;
    size_t off;
    double scale;
} ENGINE_ROWS[] = {
    {"running_peak", "running (peak)", offsetof(struct mp_bcmp_engine, running_peak), 1},
    {"waiting_peak", "waiting (peak)", offsetof(struct mp_bcmp_engine, waiting_peak), 1},
    {"waiting_mean", "waiting (mean)", offsetof(struct mp_bcmp_engine, waiting_mean), 1},
    {"kv_cache_peak_pct", "KV cache % (peak)", offsetof(struct mp_bcmp_engine, kv_peak), 100},
    {"prefix_hit_rate_pct", "prefix hits %", offsetof(struct mp_bcmp_engine, hit_rate), 100},
    {"preemptions", "preemptions", offsetof(struct mp_bcmp_engine, preemptions), 1},
};

#define N_ENGINE_ROWS (sizeof(ENGINE_ROWS) / sizeof(ENGINE_ROWS[0]))

static double engine_value(const struct mp_bcmp_engine *e, size_t row)
{
    if (!e->have)
        return NAN;
    double v;
    memcpy(&v, (const char *)e + ENGINE_ROWS[row].off, sizeof(v));
    return v * ENGINE_ROWS[row].scale;
}

static int engine_text(struct mp_buf *b, const struct mp_bcmp_side *base,
                       const struct mp_bcmp_side *cand)
{
    if (!base->engine.have && !cand->engine.have)
        return 0;
    int rc = mp_buf_printf(b,
                           "  engine (its /metrics, scraped during the runs; not judged):\n"
                           "    %-18s %11s %11s\n",
                           "", "baseline", "candidate");
    for (size_t i = 0; i < N_ENGINE_ROWS; i++) {
        char bv[32], cv[32];
        fmt_val(engine_value(&base->engine, i), bv, sizeof(bv));
        fmt_val(engine_value(&cand->engine, i), cv, sizeof(cv));
        rc |= mp_buf_printf(b, "    %-18s %11s %11s\n", ENGINE_ROWS[i].label, bv, cv);
    }
    return rc;
}

static int engine_json_side(struct mp_buf *b, const char *key, const struct mp_bcmp_engine *e)
{
    int rc = mp_buf_printf(b, ", \"%s\": ", key);
    if (!e->have)
        return rc | mp_buf_puts(b, "null");
    rc |= mp_buf_putc(b, '{');
    for (size_t i = 0; i < N_ENGINE_ROWS; i++)
        rc |= loadgen_jnum(b, ENGINE_ROWS[i].key, engine_value(e, i), i > 0);
    return rc | mp_buf_putc(b, '}');
}

static int engine_html(struct mp_buf *b, const struct mp_bcmp_side *base,
                       const struct mp_bcmp_side *cand)
{
    if (!base->engine.have && !cand->engine.have)
        return 0;
    int rc = mp_buf_puts(b, "<h3>Engine (its /metrics during the runs; not judged)</h3><table>"
                            "<tr><th></th><th>baseline</th><th>candidate</th></tr>");
    for (size_t i = 0; i < N_ENGINE_ROWS; i++) {
        char bv[32], cv[32];
        fmt_val(engine_value(&base->engine, i), bv, sizeof(bv));
        fmt_val(engine_value(&cand->engine, i), cv, sizeof(cv));
        rc |= mp_buf_printf(b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>", ENGINE_ROWS[i].label,
                            bv, cv);
    }
    return rc | mp_buf_puts(b, "</table>\n");
}

/* Where the intervals' noise came from, and what that means for a verdict. */
static int noise_text(struct mp_buf *b, const struct mp_bcmp_pair *p)
{
    switch (p->noise) {
    case MP_BCMP_NOISE_PAIRED:
        return mp_buf_printf(b,
                             "  noise: interleaved repeats, Student t over %zu pairs (run-to-run "
                             "noise and drift measured)\n",
                             p->cand->n_runs);
    case MP_BCMP_NOISE_RUNS:
        return mp_buf_puts(b, "  noise: repeats on both sides, runs resampled (run-to-run noise "
                              "measured; not interleaved, so a drift between the sides is not "
                              "separated from the change)\n");
    default:
        return mp_buf_printf(b,
                             "  noise: one run on a side: run-to-run noise UNMEASURED; a verdict "
                             "needs a change beyond +-%g%% and p99 metrics are not judged "
                             "(--single-run-effect; repeat with --repeat / interleave to "
                             "measure it)\n",
                             p->effect_pct);
    }
}

static bool any_repeats(const struct mp_bcmp_result *r, const struct mp_bcmp_pair *p)
{
    return r->base->n_runs > 1 || p->cand->n_runs > 1;
}

int mp_bcmp_text(const struct mp_bcmp_result *r, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = side_line(b, "baseline", r->base);
    for (size_t i = 0; i < r->n_pairs; i++)
        rc |= side_line(b, "candidate", r->pairs[i].cand);
    for (size_t i = 0; i < r->n_pairs; i++) {
        const struct mp_bcmp_pair *p = &r->pairs[i];
        rc |= mp_buf_printf(b, "\n%s vs %s\n", p->cand->label, r->base->label);
        if (p->n_workload_diffs)
            rc |= mp_buf_puts(b, "  WORKLOADS DIFFER (compared because of --allow-different):\n");
        for (size_t k = 0; k < p->n_diffs; k++) {
            const struct mp_bcmp_diff *df = &p->diffs[k];
            if (k == p->n_workload_diffs)
                rc |= mp_buf_puts(b, "  differences in where it ran (listed, not refused):\n");
            rc |= mp_buf_printf(b, "    %-22s %s  ->  %s\n", df->name,
                                df->base ? df->base : "(not recorded)",
                                df->cand ? df->cand : "(not recorded)");
        }
        rc |= mp_buf_printf(b, "  %-18s %11s %11s %9s   %-21s %8s  %s\n", "metric", "baseline",
                            "candidate", "change", "CI", "p(Holm)", "verdict");
        for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
            const struct mp_bcmp_metric *x = &p->m[m];
            char bv[32], cv[32], ch[32], lo[32], hi[32], ci[80], pv[32];
            fmt_val(x->base, bv, sizeof(bv));
            fmt_val(x->cand, cv, sizeof(cv));
            fmt_pct(x->change_pct, ch, sizeof(ch));
            fmt_pct(x->ci_lo, lo, sizeof(lo));
            fmt_pct(x->ci_hi, hi, sizeof(hi));
            if (isnan(x->ci_lo))
                snprintf(ci, sizeof(ci), "-");
            else
                snprintf(ci, sizeof(ci), "[%s, %s]", lo, hi);
            if (isnan(x->p_holm))
                snprintf(pv, sizeof(pv), "-");
            else
                snprintf(pv, sizeof(pv), "%.4f", x->p_holm);
            rc |=
                mp_buf_printf(b, "  %-18s %11s %11s %9s   %-21s %8s  %s\n", mp_bcmp_metric_label(m),
                              bv, cv, ch, ci, pv, mp_bcmp_verdict_name(x->verdict));
        }
        if (any_repeats(r, p)) {
            rc |= mp_buf_puts(b, "  spread over runs (min .. max):\n");
            for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
                const struct mp_bcmp_metric *x = &p->m[m];
                char a0[32], a1[32], c0[32], c1[32];
                fmt_val(x->base_spread[0], a0, sizeof(a0));
                fmt_val(x->base_spread[1], a1, sizeof(a1));
                fmt_val(x->cand_spread[0], c0, sizeof(c0));
                fmt_val(x->cand_spread[1], c1, sizeof(c1));
                rc |= mp_buf_printf(b, "    %-18s %10s .. %-10s %10s .. %s\n",
                                    mp_bcmp_metric_label(m), a0, a1, c0, c1);
            }
        }
        rc |= kernels_text(b, p);
        rc |= engine_text(b, r->base, p->cand);
        rc |= noise_text(b, p);
        size_t noise = MP_BCMP_N_METRICS - p->n_faster - p->n_slower;
        rc |= mp_buf_printf(b, "  %zu FASTER, %zu SLOWER, %zu within noise or n/a\n", p->n_faster,
                            p->n_slower, noise);
    }
    rc |= mp_buf_printf(b,
                        "\n%.0f%% intervals of the relative change (%d bootstrap resamples, seed "
                        "%llu); a verdict needs the Holm-adjusted p < %g over the %d metrics and "
                        "a change beyond +-%g%%\n",
                        r->opts.ci_level * 100, r->opts.nboot, (unsigned long long)r->opts.seed,
                        r->opts.alpha, MP_BCMP_N_METRICS, r->opts.min_effect_pct);
    return rc ? MP_ENOMEM : 0;
}

/* ---- JSON ---- */

int loadgen_jnum(struct mp_buf *b, const char *key, double v, bool comma)
{
    int rc = mp_buf_printf(b, "%s\"%s\": ", comma ? ", " : "", key);
    return rc | mp_json_double(b, v);
}

int loadgen_jstr(struct mp_buf *b, const char *key, const char *v, bool comma)
{
    int rc = mp_buf_printf(b, "%s\"%s\": ", comma ? ", " : "", key);
    if (!v)
        return rc | mp_buf_puts(b, "null");
    return rc | mp_json_str(b, v, strlen(v));
}

static int side_json(struct mp_buf *b, const struct mp_bcmp_side *s)
{
    int rc = mp_buf_puts(b, "{");
    rc |= loadgen_jstr(b, "label", s->label, false);
    rc |= loadgen_jstr(b, "source", s->source, true);
    rc |= mp_buf_puts(b, ", \"fields\": {");
    for (size_t i = 0; i < s->n_fields; i++) {
        rc |= loadgen_jstr(b, s->fields[i].name, s->fields[i].value, i > 0);
    }
    rc |= mp_buf_puts(b, "}, \"notes\": [");
    for (size_t i = 0; i < s->n_notes; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_str(b, s->notes[i], strlen(s->notes[i]));
    }
    rc |= mp_buf_puts(b, "], \"runs\": [");
    for (size_t i = 0; i < s->n_runs; i++) {
        const struct mp_bcmp_run *x = &s->runs[i];
        double v[MP_BCMP_N_METRICS];
        if (mp_bcmp_run_metrics(x, v))
            return MP_ENOMEM;
        rc |= mp_buf_puts(b, i ? ", {" : "{");
        rc |= loadgen_jstr(b, "source", x->source, false);
        rc |= mp_buf_printf(b, ", \"completed\": %zu, \"failed\": %zu", x->n_req, x->failed);
        rc |= loadgen_jnum(b, "duration_s", x->duration_s, true);
        for (int m = 0; m < MP_BCMP_N_METRICS; m++)
            rc |= loadgen_jnum(b, mp_bcmp_metric_name(m), v[m], true);
        rc |= mp_buf_putc(b, '}');
    }
    return rc | mp_buf_puts(b, "]}");
}

int mp_bcmp_json(const struct mp_bcmp_result *r, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = mp_buf_puts(b, "{\"settings\": {");
    rc |= mp_buf_printf(b, "\"bootstrap\": %d, \"seed\": %llu", r->opts.nboot,
                        (unsigned long long)r->opts.seed);
    rc |= loadgen_jnum(b, "alpha", r->opts.alpha, true);
    rc |= loadgen_jnum(b, "ci_level", r->opts.ci_level, true);
    rc |= loadgen_jnum(b, "min_effect_pct", r->opts.min_effect_pct, true);
    rc |= loadgen_jnum(b, "single_run_effect_pct", r->opts.single_run_effect_pct, true);
    rc |= mp_buf_printf(b, ", \"allow_different\": %s, \"correction\": \"holm\"}",
                        r->opts.allow_different ? "true" : "false");
    rc |= mp_buf_puts(b, ", \"baseline\": ");
    rc |= side_json(b, r->base);
    rc |= mp_buf_puts(b, ", \"candidates\": [");
    for (size_t i = 0; i < r->n_pairs; i++) {
        const struct mp_bcmp_pair *p = &r->pairs[i];
        rc |= mp_buf_puts(b, i ? ", {\"side\": " : "{\"side\": ");
        rc |= side_json(b, p->cand);
        rc |= mp_buf_puts(b, ", \"workload_differences\": [");
        bool first = true;
        for (int pass = 0; pass < 2; pass++) {
            if (pass)
                rc |= mp_buf_puts(b, "], \"environment_differences\": [");
            first = true;
            for (size_t k = 0; k < p->n_diffs; k++) {
                const struct mp_bcmp_diff *df = &p->diffs[k];
                if (df->workload != (pass == 0))
                    continue;
                rc |= mp_buf_puts(b, first ? "{" : ", {");
                first = false;
                rc |= loadgen_jstr(b, "field", df->name, false);
                rc |= loadgen_jstr(b, "baseline", df->base, true);
                rc |= loadgen_jstr(b, "candidate", df->cand, true);
                rc |= mp_buf_putc(b, '}');
            }
        }
        rc |= mp_buf_puts(b, "], \"metrics\": [");
        for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
            const struct mp_bcmp_metric *x = &p->m[m];
            rc |= mp_buf_puts(b, m ? ", {" : "{");
            rc |= loadgen_jstr(b, "name", mp_bcmp_metric_name(m), false);
            rc |= mp_buf_printf(b, ", \"higher_is_better\": %s",
                                mp_bcmp_metric_higher_better(m) ? "true" : "false");
            rc |= loadgen_jnum(b, "baseline", x->base, true);
            rc |= loadgen_jnum(b, "candidate", x->cand, true);
            rc |= loadgen_jnum(b, "change_pct", x->change_pct, true);
            rc |= loadgen_jnum(b, "ci_lo_pct", x->ci_lo, true);
            rc |= loadgen_jnum(b, "ci_hi_pct", x->ci_hi, true);
            rc |= loadgen_jnum(b, "p_value", x->p, true);
            rc |= loadgen_jnum(b, "p_holm", x->p_holm, true);
            rc |= mp_buf_puts(b, ", \"baseline_runs\": [");
            rc |= mp_json_double(b, x->base_spread[0]);
            rc |= mp_buf_puts(b, ", ");
            rc |= mp_json_double(b, x->base_spread[1]);
            rc |= mp_buf_puts(b, "], \"candidate_runs\": [");
            rc |= mp_json_double(b, x->cand_spread[0]);
            rc |= mp_buf_puts(b, ", ");
            rc |= mp_json_double(b, x->cand_spread[1]);
            rc |= mp_buf_puts(b, "]");
            rc |= loadgen_jstr(b, "verdict", mp_bcmp_verdict_name(x->verdict), true);
            rc |= mp_buf_putc(b, '}');
        }
        rc |= mp_buf_puts(b, "], \"kernels\": [");
        for (size_t k = 0; k < p->n_kernels; k++) {
            const struct mp_bcmp_kernel_row *x = &p->kernels[k];
            rc |= mp_buf_puts(b, k ? ", {" : "{");
            rc |= loadgen_jstr(b, "name", x->name, false);
            rc |= loadgen_jnum(b, "baseline_us", x->base ? x->base->total_us : NAN, true);
            rc |= loadgen_jnum(b, "candidate_us", x->cand ? x->cand->total_us : NAN, true);
            rc |= loadgen_jnum(b, "change_pct", x->change_pct, true);
            rc |= loadgen_jnum(b, "baseline_calls", x->base ? (double)x->base->calls : NAN, true);
            rc |= loadgen_jnum(b, "candidate_calls", x->cand ? (double)x->cand->calls : NAN, true);
            rc |= loadgen_jnum(b, "baseline_pct", x->base ? x->base->pct : NAN, true);
            rc |= loadgen_jnum(b, "candidate_pct", x->cand ? x->cand->pct : NAN, true);
            rc |= loadgen_jstr(b, "status",
                               !x->base   ? "new"
                               : !x->cand ? "vanished"
                                          : "both",
                               true);
            rc |= mp_buf_putc(b, '}');
        }
        rc |= mp_buf_putc(b, ']');
        rc |= engine_json_side(b, "engine_baseline", &r->base->engine);
        rc |= engine_json_side(b, "engine_candidate", &p->cand->engine);
        rc |= mp_buf_printf(b, ", \"faster\": %zu, \"slower\": %zu", p->n_faster, p->n_slower);
        rc |= loadgen_jstr(b, "noise", mp_bcmp_noise_name(p->noise), true);
        rc |= loadgen_jstr(b, "run_to_run_noise",
                           p->noise == MP_BCMP_NOISE_WITHIN_RUN ? "unmeasured" : "measured", true);
        rc |= loadgen_jnum(b, "effect_floor_pct", p->effect_pct, true);
        rc |= mp_buf_putc(b, '}');
    }
    rc |= mp_buf_puts(b, "]}\n");
    return rc ? MP_ENOMEM : 0;
}

/* ---- HTML ---- */

#define W 620
#define H 300
#define ML LOADGEN_SVG_ML
#define MB LOADGEN_SVG_MB
#define MT LOADGEN_SVG_MT
#define CDF_POINTS 300

static const char *const COLORS[] = {"#4c78a8", "#e45756", "#54a24b", "#f58518",
                                     "#b279a2", "#9d755d", "#72b7b2", "#ff9da6"};

enum { S_TTFT, S_ITL, S_E2EL };

/* The sorted sample of kind of run x (malloc'd, *n its size). */
static double *sample(const struct mp_bcmp_run *x, int kind, size_t *n)
{
    size_t k = kind == S_ITL ? x->n_itl : x->n_req;
    double *v = mp_malloc((k + 1) * sizeof(double));
    if (!v)
        return NULL;
    for (size_t i = 0; i < k; i++)
        v[i] = kind == S_ITL ? x->itl[i] : kind == S_TTFT ? x->req[i].ttft_ms : x->req[i].e2el_ms;
    qsort(v, k, sizeof(double), mp_stats_cmp_double);
    *n = k;
    return v;
}

struct curve {
    const struct mp_bcmp_side *side;
    size_t run, color;
};

static int cdf(struct mp_buf *b, const char *title, int kind, const struct curve *cv, size_t nc)
{
    double xmax = 0;
    int rc = 0;
    for (size_t c = 0; c < nc; c++) {
        size_t n;
        double *v = sample(&cv[c].side->runs[cv[c].run], kind, &n);
        if (!v)
            return MP_ENOMEM;
        if (n)
            xmax = fmax(xmax, mp_stats_quantile_sorted(v, n, 0.995));
        free(v);
    }
    xmax = loadgen_nice_max(xmax);
    rc |= loadgen_svg_axes(b, &(struct loadgen_axes){W, H, title, xmax, 1, true,
                                                     "ms (axis ends at the largest p99.5)", NULL});
    for (size_t c = 0; c < nc; c++) {
        size_t n;
        double *v = sample(&cv[c].side->runs[cv[c].run], kind, &n);
        if (!v)
            return MP_ENOMEM;
        rc |= mp_buf_printf(b,
                            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s "
                            "points=\"",
                            COLORS[cv[c].color % 8], cv[c].run ? " stroke-dasharray=\"5 2\"" : "");
        for (int i = 0; n && i < CDF_POINTS; i++) {
            double q = (double)i / (CDF_POINTS - 1);
            double x = mp_stats_quantile_sorted(v, n, q);
            double px = ML + fmin(1, x / xmax) * (W - 10 - ML), py = H - MB - q * (H - MB - MT);
            rc |= mp_buf_printf(b, "%.1f,%.1f ", px, py);
        }
        rc |= mp_buf_puts(b, "\"><title>");
        rc |= loadgen_html_esc(b, cv[c].side->label);
        rc |= mp_buf_printf(b, " run %zu</title></polyline>", cv[c].run + 1);
        free(v);
    }
    return rc | mp_buf_puts(b, "</svg>\n");
}

int mp_bcmp_html(const struct mp_bcmp_result *r, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = mp_buf_puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>magpie "
                            "benchmark compare</title><style>" LOADGEN_PAGE_CSS
                            ".FASTER{background:#dff0d8}.SLOWER{background:#f8d7da}"
                            "</style></head><body>\n<h1>Benchmark comparison</h1>\n<table>"
                            "<tr><th>role</th><th>label</th><th>runs</th><th>requests</th>"
                            "<th>source</th></tr>");
    size_t nsides = r->n_pairs + 1, ncurves = 0;
    for (size_t s = 0; s < nsides; s++) {
        const struct mp_bcmp_side *sd = s ? r->pairs[s - 1].cand : r->base;
        ncurves += sd->n_runs;
        rc |= mp_buf_printf(b,
                            "<tr><td class=\"k\"><span class=\"sw\" "
                            "style=\"background:%s\"></span>%s</td><td class=\"k\">",
                            COLORS[s % 8], s ? "candidate" : "baseline");
        rc |= loadgen_html_esc(b, sd->label);
        rc |= mp_buf_printf(b, "</td><td>%zu</td><td>%zu</td><td class=\"k\">", sd->n_runs,
                            side_requests(sd));
        rc |= loadgen_html_esc(b, sd->source);
        rc |= mp_buf_puts(b, "</td></tr>");
    }
    rc |= mp_buf_puts(b, "</table>\n");
    for (size_t i = 0; i < r->n_pairs; i++) {
        const struct mp_bcmp_pair *p = &r->pairs[i];
        rc |= mp_buf_puts(b, "<h2>");
        rc |= loadgen_html_esc(b, p->cand->label);
        rc |= mp_buf_puts(b, " vs ");
        rc |= loadgen_html_esc(b, r->base->label);
        rc |= mp_buf_puts(b, "</h2>\n");
        if (p->n_diffs) {
            rc |= mp_buf_puts(b, "<table><tr><th>field</th><th>kind</th><th>baseline</th>"
                                 "<th>candidate</th></tr>");
            for (size_t k = 0; k < p->n_diffs; k++) {
                const struct mp_bcmp_diff *df = &p->diffs[k];
                rc |= mp_buf_puts(b, "<tr><td class=\"k\">");
                rc |= loadgen_html_esc(b, df->name);
                rc |= mp_buf_printf(b, "</td><td class=\"k\">%s</td><td class=\"k\">",
                                    df->workload ? "WORKLOAD" : "environment");
                rc |= loadgen_html_esc(b, df->base ? df->base : "(not recorded)");
                rc |= mp_buf_puts(b, "</td><td class=\"k\">");
                rc |= loadgen_html_esc(b, df->cand ? df->cand : "(not recorded)");
                rc |= mp_buf_puts(b, "</td></tr>");
            }
            rc |= mp_buf_puts(b, "</table>\n");
        }
        rc |= mp_buf_printf(b,
                            "<table><tr><th>metric</th><th>baseline</th><th>candidate</th>"
                            "<th>change</th><th>%.0f%% CI</th><th>p (Holm)</th><th>verdict</th>"
                            "</tr>",
                            r->opts.ci_level * 100);
        for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
            const struct mp_bcmp_metric *x = &p->m[m];
            char bv[32], cv[32], ch[32], lo[32], hi[32];
            fmt_val(x->base, bv, sizeof(bv));
            fmt_val(x->cand, cv, sizeof(cv));
            fmt_pct(x->change_pct, ch, sizeof(ch));
            fmt_pct(x->ci_lo, lo, sizeof(lo));
            fmt_pct(x->ci_hi, hi, sizeof(hi));
            const char *v = mp_bcmp_verdict_name(x->verdict);
            rc |= mp_buf_printf(b,
                                "<tr class=\"%s\"><td class=\"k\">%s</td><td>%s</td><td>%s</td>"
                                "<td>%s</td><td>[%s, %s]</td><td>%.4f</td><td class=\"k\">%s"
                                "</td></tr>",
                                x->verdict == MP_BCMP_FASTER   ? "FASTER"
                                : x->verdict == MP_BCMP_SLOWER ? "SLOWER"
                                                               : "",
                                mp_bcmp_metric_label(m), bv, cv, ch, lo, hi,
                                isnan(x->p_holm) ? 1.0 : x->p_holm, v);
        }
        rc |= mp_buf_puts(b, "</table>\n");
        rc |= engine_html(b, r->base, p->cand);
        if (p->n_kernels) {
            rc |= mp_buf_puts(b, "<h3>Kernels (gap analysis top k)</h3><table><tr><th>kernel</th>"
                                 "<th>baseline ms</th><th>candidate ms</th><th>change</th>"
                                 "<th>calls</th><th>share %</th><th></th></tr>");
            for (size_t k = 0; k < p->n_kernels; k++) {
                const struct mp_bcmp_kernel_row *x = &p->kernels[k];
                char bt[32], ct[32], ch[32];
                fmt_val(x->base ? x->base->total_us / 1e3 : NAN, bt, sizeof(bt));
                fmt_val(x->cand ? x->cand->total_us / 1e3 : NAN, ct, sizeof(ct));
                fmt_pct(x->change_pct, ch, sizeof(ch));
                rc |= mp_buf_puts(b, "<tr><td class=\"k\">");
                rc |= loadgen_html_esc(b, x->name);
                rc |= mp_buf_printf(b,
                                    "</td><td>%s</td><td>%s</td><td>%s</td><td>%llu/%llu</td>"
                                    "<td>%.1f/%.1f</td><td class=\"k\">%s</td></tr>",
                                    bt, ct, ch, x->base ? x->base->calls : 0ULL,
                                    x->cand ? x->cand->calls : 0ULL, x->base ? x->base->pct : 0.0,
                                    x->cand ? x->cand->pct : 0.0, kernel_status(x));
            }
            rc |= mp_buf_puts(b, "</table>\n");
        }
    }
    struct curve *cv = calloc(ncurves + 1, sizeof(*cv));
    if (!cv)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t s = 0; s < nsides; s++) {
        const struct mp_bcmp_side *sd = s ? r->pairs[s - 1].cand : r->base;
        for (size_t j = 0; j < sd->n_runs; j++)
            cv[k++] = (struct curve){sd, j, s};
    }
    rc |= mp_buf_puts(b, "<h2>Distributions (CDF per run; repeats dashed)</h2>\n");
    if (!rc)
        rc = cdf(b, "Time to first token (TTFT)", S_TTFT, cv, ncurves);
    if (!rc)
        rc = cdf(b, "Inter-token latency (ITL)", S_ITL, cv, ncurves);
    if (!rc)
        rc = cdf(b, "End-to-end latency (E2EL)", S_E2EL, cv, ncurves);
    free(cv);
    rc |= mp_buf_printf(b,
                        "<p>Intervals: percentile bootstrap of the relative change (%d "
                        "resamples, seed %llu; requests within a run, runs when there are "
                        "repeats, time windows for throughput). Verdict: Holm-adjusted p &lt; "
                        "%g over %d metrics and a change beyond &plusmn;%g%%. docs/metrics.md. "
                        "Generated by magpie " MP_VERSION ".</p></body></html>\n",
                        r->opts.nboot, (unsigned long long)r->opts.seed, r->opts.alpha,
                        MP_BCMP_N_METRICS, r->opts.min_effect_pct);
    return rc ? MP_ENOMEM : 0;
}
