/* The HTML page's sections about realistic workloads (docs/workloads.md):
 * the engine's own metrics over the run (KV-cache usage, running and
 * waiting requests, the prefix-cache hit rate between scrapes) and their
 * deltas, and the per-turn table of a run with sessions. Nothing is written
 * for a run that has neither. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define W 560
#define H 220
#define ML LOADGEN_SVG_ML
#define MB LOADGEN_SVG_MB
#define MT LOADGEN_SVG_MT

/* series k of the scrapes (rate: hits/queries between scrapes) as a line */
static int line(struct mp_buf *b, const struct mp_loadgen_result *r, int k, bool rate, double xmax,
                double ymax, const char *cls)
{
    int rc = mp_buf_printf(b, "<polyline class=\"%s\" points=\"", cls);
    for (size_t i = 0; i < r->n_scrapes; i++) {
        const struct mp_loadgen_scrape *x = &r->scrapes[i];
        double v = x->v[k];
        if (rate) {
            const struct mp_loadgen_scrape *p = &r->scrapes[i ? i - 1 : 0];
            double q = x->v[MP_LOADGEN_EM_PREFIX_QUERIES] - p->v[MP_LOADGEN_EM_PREFIX_QUERIES];
            v = q > 0 ? (x->v[MP_LOADGEN_EM_PREFIX_HITS] - p->v[MP_LOADGEN_EM_PREFIX_HITS]) / q : 0;
        }
        double t = fmax(0, ((double)x->t_ns - (double)r->t0_ns) / 1e9);
        rc |= mp_buf_printf(b, "%.1f,%.1f ", ML + fmin(t / xmax, 1) * (W - 10 - ML),
                            H - MB - fmin(v / ymax, 1) * (H - MB - MT));
    }
    return rc | mp_buf_puts(b, "\"/>");
}

static int engine_plots(struct mp_buf *b, const struct mp_loadgen_result *r)
{
    double tmax = 0, qmax = 1;
    uint32_t have = 0;
    for (size_t i = 0; i < r->n_scrapes; i++) {
        const struct mp_loadgen_scrape *x = &r->scrapes[i];
        tmax = fmax(tmax, ((double)x->t_ns - (double)r->t0_ns) / 1e9);
        qmax = fmax(qmax, fmax(x->v[MP_LOADGEN_EM_RUNNING], x->v[MP_LOADGEN_EM_WAITING]));
        have |= x->have;
    }
    tmax = loadgen_nice_max(tmax);
    qmax = loadgen_nice_max(qmax);
    int rc = 0;
    if (have & (1u << MP_LOADGEN_EM_KV_USAGE)) {
        rc |=
            loadgen_svg_axes(b, &(struct loadgen_axes){W, H, "KV-cache usage (engine /metrics)",
                                                       tmax, 1, true, "s since start", "fraction"});
        rc |= line(b, r, MP_LOADGEN_EM_KV_USAGE, false, tmax, 1, "ln");
        rc |= mp_buf_puts(b, "</svg>\n");
    }
    if (have & ((1u << MP_LOADGEN_EM_RUNNING) | (1u << MP_LOADGEN_EM_WAITING))) {
        rc |= loadgen_svg_axes(b, &(struct loadgen_axes){W, H,
                                                         "Requests running (blue) and waiting "
                                                         "(orange) in the engine",
                                                         tmax, qmax, false, "s since start",
                                                         "requests"});
        rc |= line(b, r, MP_LOADGEN_EM_RUNNING, false, tmax, qmax, "ln");
        rc |= line(b, r, MP_LOADGEN_EM_WAITING, false, tmax, qmax, "ln2");
        rc |= mp_buf_puts(b, "</svg>\n");
    }
    if ((have & (1u << MP_LOADGEN_EM_PREFIX_HITS)) &&
        (have & (1u << MP_LOADGEN_EM_PREFIX_QUERIES))) {
        rc |= loadgen_svg_axes(
            b, &(struct loadgen_axes){W, H, "Prefix-cache hit rate between scrapes", tmax, 1, true,
                                      "s since start", "hits / queried tokens"});
        rc |= line(b, r, 0, true, tmax, 1, "ln");
        rc |= mp_buf_puts(b, "</svg>\n");
    }
    return rc;
}

static int engine_section(struct mp_buf *b, const struct mp_loadgen_result *r)
{
    struct loadgen_em_delta dl;
    loadgen_scrape_delta(r, &dl);
    int rc = mp_buf_printf(b,
                           "<h2>Engine metrics</h2>\n<p>%zu scrapes of the server's /metrics "
                           "(before, during and after the run).",
                           r->n_scrapes);
    if (r->scrape_error[0]) {
        rc |= mp_buf_puts(b, " A scrape failed: ");
        rc |= loadgen_html_esc(b, r->scrape_error);
    }
    rc |= mp_buf_puts(b, "</p><table><tr><th>over the run</th><th>value</th></tr>");
    for (int k = 0; k < MP_LOADGEN_N_EM; k++)
        if (dl.have & (1u << k))
            rc |= mp_buf_printf(b, "<tr><td class=\"k\">%s</td><td>%.0f</td></tr>",
                                mp_loadgen_engine_metric_name(k), dl.v[k]);
    const char *rn[3] = {"prefix_cache_hit_rate", "spec_decode_acceptance_rate",
                         "spec_decode_acceptance_length"};
    double rv[3] = {dl.hit_rate, dl.accept_rate, dl.accept_len};
    for (int k = 0; k < 3; k++)
        if (isfinite(rv[k]))
            rc |= mp_buf_printf(b, "<tr><td class=\"k\">%s</td><td>%.4f</td></tr>", rn[k], rv[k]);
    rc |= mp_buf_puts(b, "</table>\n");
    return rc | engine_plots(b, r);
}

static int sessions_section(struct mp_buf *b, const struct mp_loadgen_result *r)
{
    struct loadgen_sessions s;
    if (loadgen_sessions_stats(r, &s))
        return MP_ENOMEM;
    int rc = mp_buf_printf(b,
                           "<h2>Sessions</h2>\n<p>%zu sessions, %zu with every turn ok; "
                           "duration mean %.1f ms, median %.1f ms, p99 %.1f ms.</p>"
                           "<table><tr><th>turn</th><th>requests</th><th>ok</th><th>mean "
                           "prompt tokens</th><th>mean TTFT (ms)</th><th>median TTFT</th>"
                           "<th>p99 TTFT</th><th>mean E2EL (ms)</th></tr>",
                           s.sessions, s.sessions_completed, s.mean_duration, s.median_duration,
                           s.p99_duration);
    for (int k = 0; k < s.n_turns; k++) {
        const struct loadgen_turn *t = &s.turn[k];
        rc |= mp_buf_printf(b,
                            "<tr><td>%d</td><td>%zu</td><td>%zu</td><td>%.1f</td><td>%.3f</td>"
                            "<td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>",
                            k, t->requests, t->completed, t->mean_prompt_len, t->mean_ttft,
                            t->median_ttft, t->p99_ttft, t->mean_e2el);
    }
    loadgen_sessions_fini(&s);
    return rc | mp_buf_puts(b, "</table>\n");
}

int loadgen_html_workload(struct mp_buf *b, const struct mp_loadgen_result *r)
{
    int rc = 0;
    if (r->n_scrapes || r->scrape_error[0])
        rc |= engine_section(b, r);
    if (r->sessions)
        rc |= sessions_section(b, r);
    return rc;
}
