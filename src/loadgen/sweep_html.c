/* pareto.html: a sweep's frontier as self-contained SVG (no script): the
 * throughput a load reaches, tok/s per user against tok/s per GPU, and p99
 * TTFT / TPOT against throughput, each point with its intervals as error
 * bars, one colour per sweep; then the table of points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/sweep.h>

#include "loadgen_int.h"

#define W 560
#define H 330
#define ML LOADGEN_SVG_ML
#define MB LOADGEN_SVG_MB
#define MT LOADGEN_SVG_MT

static const char *const COLORS[] = {"#4c78a8", "#e45756", "#54a24b", "#f58518",
                                     "#b279a2", "#9d755d", "#72b7b2", "#ff9da6"};

/* One chart: y metric against x (a metric, or the load when xm < 0). */
struct chart {
    const char *title, *xl, *yl;
    int xm, ym;
    double y_limit; /* an SLA on the y metric, NaN: none */
};

static double xval(const struct mp_sweep *s, const struct mp_sweep_point *p, int xm, int k)
{
    if (xm < 0)
        return k ? NAN : mp_sweep_point_load(p, s->var);
    const struct mp_sweep_est *e = &p->m[xm];
    return k == 0 ? e->v : k == 1 ? e->lo : e->hi;
}

static double yval(const struct mp_sweep_point *p, int ym, int k)
{
    const struct mp_sweep_est *e = &p->m[ym];
    return k == 0 ? e->v : k == 1 ? e->lo : e->hi;
}

static double finite_max(double a, double b)
{
    return isfinite(b) && b > a ? b : a;
}

static void extent(const struct mp_sweep *const *sw, size_t n, const struct chart *c, double *xmax,
                   double *ymax)
{
    *xmax = *ymax = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < sw[i]->n_pts; j++)
            for (int k = 0; k < 3; k++) {
                *xmax = finite_max(*xmax, xval(sw[i], &sw[i]->pts[j], c->xm, k));
                *ymax = finite_max(*ymax, yval(&sw[i]->pts[j], c->ym, k));
            }
    *ymax = finite_max(*ymax, c->y_limit);
    *xmax = loadgen_nice_max(*xmax * 1.02);
    *ymax = loadgen_nice_max(*ymax * 1.02);
}

static int sx(double x, double xmax)
{
    return (int)lround(ML + x / xmax * (W - 10 - ML));
}

static int sy(double y, double ymax)
{
    return (int)lround(H - MB - y / ymax * (H - MB - MT));
}

static int curve(struct mp_buf *b, const struct mp_sweep *s, const struct chart *c, double xmax,
                 double ymax, const char *color)
{
    size_t *order = NULL;
    if (mp_sweep_sorted(s, &order))
        return MP_ENOMEM;
    int rc = mp_buf_printf(b,
                           "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                           "points=\"",
                           color);
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct mp_sweep_point *p = &s->pts[order[i]];
        double x = xval(s, p, c->xm, 0), y = yval(p, c->ym, 0);
        if (isfinite(x) && isfinite(y))
            rc |= mp_buf_printf(b, "%d,%d ", sx(x, xmax), sy(y, ymax));
    }
    rc |= mp_buf_puts(b, "\"/>");
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct mp_sweep_point *p = &s->pts[order[i]];
        double x = xval(s, p, c->xm, 0), y = yval(p, c->ym, 0);
        if (!isfinite(x) || !isfinite(y))
            continue;
        int px = sx(x, xmax), py = sy(y, ymax);
        double ylo = yval(p, c->ym, 1), yhi = yval(p, c->ym, 2);
        if (isfinite(ylo) && isfinite(yhi))
            rc |= mp_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>",
                                px, sy(ylo, ymax), px, sy(yhi, ymax), color);
        double xlo = xval(s, p, c->xm, 1), xhi = xval(s, p, c->xm, 2);
        if (isfinite(xlo) && isfinite(xhi))
            rc |= mp_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>",
                                sx(xlo, xmax), py, sx(xhi, xmax), py, color);
        bool knee = s->knee.found && order[i] == s->knee.index;
        char name[64];
        mp_sweep_point_name(p, name, sizeof(name));
        rc |= mp_buf_printf(b, "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"%s\"%s><title>", px, py,
                            knee ? 5 : 3, knee ? "#fff" : color,
                            knee ? " stroke-width=\"2\" stroke=\"#000\"" : "");
        rc |= loadgen_html_esc(b, name);
        rc |= mp_buf_printf(b, "%s</title></circle>", knee ? " (knee)" : "");
    }
    free(order);
    return rc;
}

static int chart(struct mp_buf *b, const struct mp_sweep *const *sw, size_t n,
                 const struct chart *c)
{
    double xmax, ymax;
    extent(sw, n, c, &xmax, &ymax);
    struct loadgen_axes ax = {W, H, c->title, xmax, ymax, false, c->xl, c->yl};
    int rc = loadgen_svg_axes(b, &ax);
    if (isfinite(c->y_limit))
        rc |= mp_buf_printf(b,
                            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c00\" "
                            "stroke-dasharray=\"5,4\"/><text x=\"%d\" y=\"%d\" class=\"l\" "
                            "text-anchor=\"end\">SLA %g</text>",
                            ML, sy(c->y_limit, ymax), W - 10, sy(c->y_limit, ymax), W - 12,
                            sy(c->y_limit, ymax) - 3, c->y_limit);
    for (size_t i = 0; i < n; i++)
        rc |= curve(b, sw[i], c, xmax, ymax, COLORS[i % 8]);
    return rc | mp_buf_puts(b, "</svg>\n");
}

/* The limit of an SLA on metric m in any of the sweeps (NaN: none). */
static double sla_limit(const struct mp_sweep *const *sw, size_t n, int m)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sw[i]->n_sla; k++)
            if (sw[i]->sla[k].metric == m)
                return sw[i]->sla[k].limit;
    return NAN;
}

static int table(struct mp_buf *b, const struct mp_sweep *s, const char *color)
{
    int rc = mp_buf_printf(b, "<h2><span class=\"sw\" style=\"background:%s\"></span>", color);
    rc |= loadgen_html_esc(b, s->label);
    rc |= mp_buf_puts(b, "</h2><p>");
    rc |= loadgen_html_esc(b, s->target);
    rc |= mp_buf_printf(b, ", %d run%s per point", s->repeat, s->repeat == 1 ? "" : "s");
    if (s->knee.found) {
        char name[64];
        mp_sweep_point_name(&s->pts[s->knee.index], name, sizeof(name));
        rc |= mp_buf_puts(b, "; knee at ");
        rc |= loadgen_html_esc(b, name);
        rc |= mp_buf_puts(b, ": ");
        rc |= loadgen_html_esc(b, s->knee.reason);
    }
    if (s->slares.done && !isnan(s->slares.answer))
        rc |= mp_buf_printf(b, "; SLA met up to %s %g", mp_sweep_var_name(s->slares.search.var),
                            s->slares.answer);
    rc |= mp_buf_puts(b, "</p><table><tr><th>point</th><th>runs</th><th>failed</th>");
    static const int cols[] = {MP_BCMP_OUT_TPS,  MP_SWEEP_TPS_USER, MP_BCMP_TTFT_P99,
                               MP_BCMP_TPOT_P99, MP_BCMP_E2EL_MEAN, MP_SWEEP_CONC_MEAN};
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
        rc |= mp_buf_printf(b, "<th>%s</th>", mp_sweep_metric_name(cols[k]));
    bool eng = false;
    for (size_t i = 0; i < s->n_pts; i++)
        eng |= s->pts[i].engine.have;
    if (eng)
        rc |= mp_buf_puts(b, "<th>engine: waiting max</th><th>KV-cache max</th>"
                             "<th>prefix hits</th>");
    rc |= mp_buf_puts(b, "<th>SLA</th></tr>");
    size_t *order = NULL;
    if (mp_sweep_sorted(s, &order))
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct mp_sweep_point *p = &s->pts[order[i]];
        char name[64];
        mp_sweep_point_name(p, name, sizeof(name));
        rc |= mp_buf_puts(b, "<tr><td class=\"k\">");
        rc |= loadgen_html_esc(b, name);
        rc |= mp_buf_printf(b, "</td><td>%zu</td><td>%zu</td>", p->n_runs, p->failed);
        for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
            const struct mp_sweep_est *e = &p->m[cols[k]];
            if (isnan(e->lo))
                rc |= mp_buf_printf(b, "<td>%.4g</td>", e->v);
            else
                rc |= mp_buf_printf(b, "<td>%.4g <small>[%.4g, %.4g]</small></td>", e->v, e->lo,
                                    e->hi);
        }
        if (eng) {
            const struct mp_bcmp_engine *e = &p->engine;
            const double ev[] = {e->waiting_peak, e->kv_peak, e->hit_rate};
            for (int k = 0; k < 3; k++)
                rc |= e->have && !isnan(ev[k]) ? mp_buf_printf(b, "<td>%.4g</td>", ev[k])
                                               : mp_buf_puts(b, "<td></td>");
        }
        rc |= mp_buf_printf(b, "<td>%s</td></tr>", p->sla ? mp_sweep_sla_state_name(p->sla) : "");
    }
    free(order);
    return rc | mp_buf_puts(b, "</table>\n");
}

int mp_sweep_html(const struct mp_sweep *const *sw, size_t n, const char *title, struct mp_buf *out)
{
    struct mp_buf *b = out;
    if (!n || n > 8)
        return MP_EINVAL;
    int rc = mp_buf_puts(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    rc |= loadgen_html_esc(b, title);
    rc |= mp_buf_puts(b, "</title><style>" LOADGEN_PAGE_CSS "</style></head><body>\n<h1>");
    rc |= loadgen_html_esc(b, title);
    rc |= mp_buf_puts(b, "</h1>\n<p>");
    for (size_t i = 0; i < n; i++) {
        rc |= mp_buf_printf(b, "<span class=\"sw\" style=\"background:%s\"></span>", COLORS[i % 8]);
        rc |= loadgen_html_esc(b, sw[i]->label);
        rc |= mp_buf_puts(b, "&nbsp;&nbsp; ");
    }
    rc |= mp_buf_puts(b, "bars: 95% intervals; ringed point: the knee</p>\n");
    const char *load = mp_sweep_var_name(sw[0]->var);
    const struct chart charts[] = {
        {"Output throughput against the load", load, "output tok/s", -1, MP_BCMP_OUT_TPS, NAN},
        {"Interactivity against throughput per GPU", "output tok/s per GPU",
         "tok/s per user (1000 / mean TPOT)", MP_SWEEP_TPS_GPU, MP_SWEEP_TPS_USER,
         sla_limit(sw, n, MP_SWEEP_TPS_USER)},
        {"p99 TTFT against throughput", "output tok/s", "p99 TTFT (ms)", MP_BCMP_OUT_TPS,
         MP_BCMP_TTFT_P99, sla_limit(sw, n, MP_BCMP_TTFT_P99)},
        {"p99 TPOT against throughput", "output tok/s", "p99 TPOT (ms)", MP_BCMP_OUT_TPS,
         MP_BCMP_TPOT_P99, sla_limit(sw, n, MP_BCMP_TPOT_P99)},
    };
    for (size_t k = 0; k < sizeof(charts) / sizeof(charts[0]); k++)
        rc |= chart(b, sw, n, &charts[k]);
    for (size_t i = 0; i < n; i++)
        rc |= table(b, sw[i], COLORS[i % 8]);
    rc |= mp_buf_puts(b, "</body></html>\n");
    return rc ? MP_ENOMEM : 0;
}
