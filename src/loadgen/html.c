/* HTML report of a serving benchmark: one self-contained page (inline CSS and
 * SVG, no scripts, nothing fetched) with the run's settings, the metric
 * table, histograms of TTFT / TPOT / ITL / E2EL, latency over the run, and
 * output tokens per second with requests in flight. Scatter plots are
 * thinned to a bounded number of points so the page stays small for long
 * runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define W 560
#define H 220
#define ML LOADGEN_SVG_ML
#define MB LOADGEN_SVG_MB
#define MT LOADGEN_SVG_MT
#define MAX_POINTS 4000

int loadgen_html_esc(struct mp_buf *b, const char *s)
{
    int rc = 0;
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            rc |= mp_buf_puts(b, "&lt;");
            break;
        case '>':
            rc |= mp_buf_puts(b, "&gt;");
            break;
        case '&':
            rc |= mp_buf_puts(b, "&amp;");
            break;
        case '"':
            rc |= mp_buf_puts(b, "&quot;");
            break;
        default:
            rc |= mp_buf_putc(b, *s);
        }
    }
    return rc;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double loadgen_nice_max(double v)
{
    if (!(v > 0))
        return 1;
    double p = pow(10, floor(log10(v))), m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

int loadgen_svg_axes(struct mp_buf *b, const struct loadgen_axes *a)
{
    const int w = a->w, h = a->h;
    int rc = mp_buf_printf(b,
                           "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                           "xmlns=\"http://www.w3.org/2000/svg\"><text x=\"%d\" y=\"15\" "
                           "class=\"t\">",
                           w, h, w, h, ML);
    rc |= loadgen_html_esc(b, a->title);
    rc |= mp_buf_printf(b,
                        "</text><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"ax\"/>"
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"ax\"/>",
                        ML, h - MB, w - 10, h - MB, ML, MT, ML, h - MB);
    for (int i = 0; i <= 4; i++) {
        double f = (double)i / 4;
        int y = (int)(h - MB - f * (h - MB - MT)), x = (int)(ML + f * (w - 10 - ML));
        rc |= mp_buf_printf(b,
                            a->y_fixed ? "<text x=\"%d\" y=\"%d\" class=\"l\" "
                                         "text-anchor=\"end\">%.2f</text>"
                                       : "<text x=\"%d\" y=\"%d\" class=\"l\" "
                                         "text-anchor=\"end\">%.4g</text>",
                            ML - 4, y + 4, a->ymax * f);
        rc |=
            mp_buf_printf(b,
                          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"g\"/>"
                          "<text x=\"%d\" y=\"%d\" class=\"l\" text-anchor=\"middle\">%.4g</text>",
                          ML, y, w - 10, y, x, h - MB + 14, a->xmax * f);
    }
    rc |= mp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"l\" text-anchor=\"middle\">",
                        (ML + w) / 2, h - 4);
    rc |= loadgen_html_esc(b, a->xl);
    if (a->yl) {
        rc |= mp_buf_printf(
            b,
            "</text><text x=\"12\" y=\"%d\" class=\"l\" transform=\"rotate(-90 12 %d)\" "
            "text-anchor=\"middle\">",
            (h - MB + MT) / 2, (h - MB + MT) / 2);
        rc |= loadgen_html_esc(b, a->yl);
    }
    return rc | mp_buf_puts(b, "</text>");
}

static int axes(struct mp_buf *b, const char *title, double xmax, double ymax, const char *xl,
                const char *yl)
{
    return loadgen_svg_axes(b, &(struct loadgen_axes){W, H, title, xmax, ymax, false, xl, yl});
}

/* Histogram of v (sorted in place); the range ends at the 99.5th percentile
 * and the last bar counts everything above it. */
static int hist(struct mp_buf *b, const char *title, double *v, size_t n)
{
    int rc = 0;

    enum { NB = 40 };

    if (n == 0)
        return mp_buf_printf(b, "<div class=\"empty\">%s: no data</div>", title);
    qsort(v, n, sizeof(*v), cmpd);
    double lo = 0, hi = mp_loadgen_percentile(v, n, 99.5);
    if (!(hi > lo))
        hi = v[n - 1] > lo ? v[n - 1] : lo + 1;
    hi = loadgen_nice_max(hi);
    size_t cnt[NB] = {0}, maxc = 1;
    for (size_t i = 0; i < n; i++) {
        int k = (int)((v[i] - lo) / (hi - lo) * NB);
        k = k < 0 ? 0 : k >= NB ? NB - 1 : k;
        if (++cnt[k] > maxc)
            maxc = cnt[k];
    }
    rc |= axes(b, title, hi, (double)maxc, "ms", "requests / gaps");
    double bw = (double)(W - 10 - ML) / NB;
    for (int k = 0; k < NB; k++) {
        double h = (double)cnt[k] / (double)maxc * (H - MB - MT);
        rc |= mp_buf_printf(b,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "class=\"bar\"><title>%.4g-%.4g ms: %zu</title></rect>",
                            ML + k * bw + 0.5, H - MB - h, bw - 1, h, lo + (hi - lo) * k / NB,
                            lo + (hi - lo) * (k + 1) / NB, cnt[k]);
    }
    double med = mp_loadgen_percentile(v, n, 50), p99 = mp_loadgen_percentile(v, n, 99);
    double xm = ML + (med - lo) / (hi - lo) * (W - 10 - ML),
           x99 = ML + fmin(1, (p99 - lo) / (hi - lo)) * (W - 10 - ML);
    rc |= mp_buf_printf(b,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"med\"/>"
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"p99\"/>"
                        "<text x=\"%d\" y=\"15\" class=\"l\" text-anchor=\"end\">median %.3f  "
                        "p99 %.3f ms  n=%zu</text></svg>\n",
                        xm, MT, xm, H - MB, x99, MT, x99, H - MB, W - 10, med, p99, n);
    return rc;
}

/* the page's head and style, the run's settings and the metric table */
static int html_settings(struct mp_buf *b, const struct mp_loadgen_result *r,
                         const struct mp_loadgen_metrics *m,
                         const struct mp_loadgen_report_info *info)
{
    int rc = mp_buf_puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>magpie "
                            "serving benchmark</title><style>"
                            "body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
                            "table{border-collapse:collapse;margin:8px 0 16px}"
                            "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
                            "th{background:#f3f3f3}td.k{text-align:left}"
                            ".t{font-weight:600;font-size:13px}.l{font-size:10px;fill:#555}"
                            ".ax{stroke:#333}.g{stroke:#eee}.bar{fill:#4c78a8}"
                            ".med{stroke:#e45756;stroke-dasharray:4 2}.p99{stroke:#f58518;"
                            "stroke-dasharray:2 2}.pt{fill:#4c78a8;fill-opacity:.5}"
                            ".pt2{fill:#e45756;fill-opacity:.5}.ln{fill:none;stroke:#4c78a8}"
                            ".ln2{fill:none;stroke:#f58518}svg{margin:6px 12px 6px 0}"
                            "</style></head><body>\n<h1>Serving benchmark</h1>\n<table>");
    const char *rows[][2] = {{"model", info->model_id},
                             {"backend", info->backend},
                             {"dataset", info->dataset},
                             {"date", info->date}};
    for (size_t i = 0; i < 4; i++) {
        rc |= mp_buf_puts(b, "<tr><td class=\"k\">");
        rc |= loadgen_html_esc(b, rows[i][0]);
        rc |= mp_buf_puts(b, "</td><td class=\"k\">");
        rc |= loadgen_html_esc(b, rows[i][1] ? rows[i][1] : "");
        rc |= mp_buf_puts(b, "</td></tr>");
    }
    char rate[64];
    if (isinf(r->request_rate))
        snprintf(rate, sizeof(rate), "inf");
    else
        snprintf(rate, sizeof(rate), "%g req/s (burstiness %g)", r->request_rate, r->burstiness);
    rc |= mp_buf_printf(b,
                        "<tr><td class=\"k\">request rate</td><td class=\"k\">%s</td></tr>"
                        "<tr><td class=\"k\">max concurrency</td><td class=\"k\">%d</td></tr>"
                        "<tr><td class=\"k\">completed / failed</td><td class=\"k\">%zu / "
                        "%zu</td></tr><tr><td class=\"k\">duration</td><td class=\"k\">%.3f "
                        "s</td></tr><tr><td class=\"k\">request / output / total "
                        "throughput</td><td class=\"k\">%.2f req/s / %.1f tok/s / %.1f "
                        "tok/s</td></tr></table>\n",
                        rate, r->max_concurrency, m->completed, m->failed, m->duration_s,
                        m->request_throughput, m->output_throughput, m->total_token_throughput);
    rc |= mp_buf_puts(b, "<table><tr><th>metric (ms)</th><th>mean</th><th>median</th><th>std"
                         "</th><th>p99</th><th>max</th><th>n</th></tr>");
    static const char *const names[4] = {"TTFT", "TPOT", "ITL", "E2EL"};
    for (int k = 0; k < 4; k++) {
        const struct mp_loadgen_stat *st = &m->stat[k];
        rc |= mp_buf_printf(b,
                            "<tr><td class=\"k\">%s</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
                            "<td>%.3f</td><td>%.3f</td><td>%zu</td></tr>",
                            names[k], st->mean, st->median, st->std, st->p99, st->max, st->n);
    }
    return rc;
}

/* latency over the run: TTFT and E2EL against request start */
static int html_over_time(struct mp_buf *b, const struct mp_loadgen_result *r)
{
    double tmax = r->duration_s > 0 ? r->duration_s : 1;
    int rc = mp_buf_puts(b, "<h2>Over time</h2>\n");
    double lmax = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (x->success)
            lmax = fmax(lmax, (double)(x->event_ns[x->n_events - 1] - x->start_ns) / 1e6);
    }
    lmax = loadgen_nice_max(lmax);
    tmax = loadgen_nice_max(tmax);
    rc |= axes(b, "TTFT (blue) and E2EL (red) by request start", tmax, lmax, "s since start", "ms");
    size_t step = r->n / MAX_POINTS + 1;
    for (size_t i = 0; i < r->n; i += step) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success)
            continue;
        double ts = (double)(x->start_ns - r->t0_ns) / 1e9;
        double px = ML + ts / tmax * (W - 10 - ML);
        double yt = H - MB - (double)(x->event_ns[0] - x->start_ns) / 1e6 / lmax * (H - MB - MT);
        double ye =
            H - MB -
            (double)(x->event_ns[x->n_events - 1] - x->start_ns) / 1e6 / lmax * (H - MB - MT);
        rc |= mp_buf_printf(b,
                            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" class=\"pt\"/>"
                            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" class=\"pt2\"/>",
                            px, yt, px, ye);
    }
    rc |= mp_buf_puts(b, "</svg>\n");
    return rc;
}

/* output token events per second and requests in flight, 1 s buckets;
 * *oom when the buckets cannot be had (nothing written then) */
static int html_throughput(struct mp_buf *b, const struct mp_loadgen_result *r, bool *oom)
{
    size_t nb = (size_t)ceil(r->duration_s) + 1;
    if (nb > 100000)
        nb = 100000;
    int rc = 0;
    double *ev_time = calloc(nb, sizeof(double));
    double *inflight = calloc(nb, sizeof(double));
    if (!ev_time || !inflight) {
        *oom = true;
        goto out;
    }
    loadgen_event_buckets(r, r->t0_ns, ev_time, nb, true);
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success)
            continue;
        size_t s0 = (size_t)((double)(x->start_ns - r->t0_ns) / 1e9),
               s1 = (size_t)((double)(x->event_ns[x->n_events - 1] - r->t0_ns) / 1e9);
        for (size_t k = s0; k <= s1 && k < nb; k++)
            inflight[k] += 1;
    }
    double emax = 1, fmaxv = 1;
    for (size_t k = 0; k < nb; k++) {
        emax = fmax(emax, ev_time[k]);
        fmaxv = fmax(fmaxv, inflight[k]);
    }
    emax = loadgen_nice_max(emax);
    rc |= axes(b, "Output tokens per second (blue) and requests in flight (orange, scaled)",
               (double)nb, emax, "s since start", "tokens/s");
    for (int series = 0; series < 2; series++) {
        rc |= mp_buf_printf(b, "<polyline class=\"%s\" points=\"", series ? "ln2" : "ln");
        for (size_t k = 0; k < nb; k++) {
            double val = series ? inflight[k] / fmaxv * emax : ev_time[k];
            rc |= mp_buf_printf(b, "%.1f,%.1f ", ML + (double)k / (double)nb * (W - 10 - ML),
                                H - MB - val / emax * (H - MB - MT));
        }
        rc |= mp_buf_puts(b, "\"/>");
    }
    rc |= mp_buf_printf(b,
                        "<text x=\"%d\" y=\"15\" class=\"l\" text-anchor=\"end\">peak in "
                        "flight %.0f</text></svg>\n",
                        W - 10, fmaxv);
out:
    free(ev_time);
    free(inflight);
    return rc;
}

/* failed requests: grouped by reason, then the first 50 */
static int html_failures(struct mp_buf *b, const struct mp_loadgen_result *r,
                         const struct mp_loadgen_report_info *info)
{
    struct mp_loadgen_failures fl;
    mp_loadgen_failures(r, &fl);
    int rc = mp_buf_printf(b, "<h2>Failures</h2><p>%zu of %zu requests failed (%.2f%%)", fl.failed,
                           fl.total, fl.ratio * 100);
    if (info->fail_limit) {
        char ls[48];
        mp_loadgen_fail_limit_format(info->fail_limit, ls, sizeof(ls));
        rc |= mp_buf_printf(b, "; limit %s: %s", ls,
                            mp_loadgen_fail_limit_ok(info->fail_limit, fl.failed, fl.total)
                                ? "within it, the run is judged on its successes"
                                : "over it, the run failed");
    }
    rc |= mp_buf_puts(b, ". Latency metrics cover the successful requests only.</p>"
                         "<table><tr><th>reason</th><th>count</th><th>first request</th>"
                         "<th>messages</th></tr>");
    for (size_t g = 0; g < fl.n_groups; g++) {
        rc |= mp_buf_puts(b, "<tr><td>");
        rc |= loadgen_html_esc(b, fl.groups[g].reason);
        rc |= mp_buf_printf(b, "</td><td>%zu</td><td>%zu</td><td class=\"k\">", fl.groups[g].count,
                            fl.groups[g].first_index);
        for (size_t k = 0; k < fl.groups[g].n_examples; k++) {
            rc |= mp_buf_puts(b, k ? "<br>" : "");
            rc |= loadgen_html_esc(b, fl.groups[g].examples[k]);
        }
        rc |= mp_buf_puts(b, "</td></tr>");
    }
    rc |= mp_buf_puts(b, "</table>\n<table><tr><th>request</th><th>reason</th></tr>");
    size_t shown = 0;
    for (size_t i = 0; i < r->n && shown < 50; i++) {
        if (r->recs[i].success)
            continue;
        shown++;
        rc |= mp_buf_printf(b, "<tr><td>%zu</td><td class=\"k\">", i);
        rc |= loadgen_html_esc(b, r->recs[i].error ? r->recs[i].error : "");
        rc |= mp_buf_puts(b, "</td></tr>");
    }
    rc |= mp_buf_puts(b, "</table>\n");
    return rc;
}

int mp_loadgen_html(const struct mp_loadgen_result *r, const struct mp_loadgen_metrics *m,
                    const struct mp_loadgen_report_info *info, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = 0;
    size_t n_itl = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->recs[i].success && r->recs[i].n_events > 1)
            n_itl += r->recs[i].n_events - 1;
    double *ttft = malloc((r->n + 1) * sizeof(double)), *tpot = malloc((r->n + 1) * sizeof(double));
    double *e2el = malloc((r->n + 1) * sizeof(double)), *itl = malloc((n_itl + 1) * sizeof(double));
    if (!ttft || !tpot || !e2el || !itl) {
        rc = MP_ENOMEM;
        goto out;
    }
    size_t nt = 0, np = 0, ni = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success)
            continue;
        double t = (double)(x->event_ns[0] - x->start_ns) / 1e6,
               e = (double)(x->event_ns[x->n_events - 1] - x->start_ns) / 1e6;
        ttft[nt] = t;
        e2el[nt++] = e;
        int nout = x->output_tokens > 0 ? x->output_tokens : (int)x->n_events;
        if (nout > 1)
            tpot[np++] = (e - t) / (nout - 1);
        for (uint32_t j = 1; j < x->n_events; j++)
            itl[ni++] = (double)(x->event_ns[j] - x->event_ns[j - 1]) / 1e6;
    }
    rc |= html_settings(b, r, m, info);
    rc |= mp_buf_puts(b, "</table>\n<h2>Distributions</h2>\n");
    rc |= hist(b, "Time to first token (TTFT)", ttft, nt);
    rc |= hist(b, "Time per output token (TPOT)", tpot, np);
    rc |= hist(b, "Inter-token latency (ITL, per stream event)", itl, ni);
    rc |= hist(b, "End-to-end latency (E2EL)", e2el, nt);
    rc |= html_over_time(b, r);
    bool oom = false;
    rc |= html_throughput(b, r, &oom);
    if (oom) {
        rc = MP_ENOMEM;
        goto out;
    }
    rc |= loadgen_html_workload(b, r);
    if (m->failed)
        rc |= html_failures(b, r, info);
    rc |= mp_buf_puts(b, "<p>Definitions: docs/metrics.md (vLLM's). Generated by magpie " MP_VERSION
                         ".</p></body></html>\n");
out:
    free(ttft);
    free(tpot);
    free(e2el);
    free(itl);
    return rc ? MP_ENOMEM : 0;
}
