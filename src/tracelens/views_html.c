/* report.html, one self-contained page of a TraceLens-compatible report
 * (inline CSS and SVG: roofline, time by category, GPU busy/idle, top ops);
 * a pure function of struct mp_report like the other views (views.c). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <magpie/tracelens.h>

#include "tracelens_int.h"
#include "views_int.h"

#define VIEW_HTML_MAX ((size_t)256 << 20) /* bytes of report.html */
#define VIEW_TOP_OPS_HTML 25              /* rows of the top-ops table */
#define VIEW_TOP_CATS_HTML 15             /* bars of the category chart */

/* ------------------------------------------------------------------ HTML */

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6"};
#define N_PALETTE (sizeof(palette) / sizeof(palette[0]))

/* Sheets of the points in order of first appearance (their colours). */
struct sheet_set {
    const char *name[64];
    size_t count[64];
    size_t n;
};

static size_t sheet_index(struct sheet_set *s, const char *name, bool add)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return i;
    if (!add || s->n == 64)
        return s->n ? s->n - 1 : 0; /* beyond 64 sheets colours repeat */
    s->name[s->n] = name;
    s->count[s->n] = 0;
    return s->n++;
}

struct roof {
    const char *key;
    double tflops, ridge; /* TFLOP/s, FLOP/byte */
};

static int cmp_roof(const void *a, const void *b)
{
    const struct roof *x = a, *y = b;
    if (x->tflops != y->tflops)
        return x->tflops > y->tflops ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Log-log plot geometry (SVG user units). */
enum { RF_W = 980, RF_H = 580, RF_L = 78, RF_T = 16, RF_R = 262, RF_B = 58 };

#define RF_PW (RF_W - RF_L - RF_R)
#define RF_PH (RF_H - RF_T - RF_B)

struct plot {
    double xlo, xhi, ylo, yhi; /* log10 of the axis ends */
};

static double pxl(const struct plot *g, double l)
{
    return RF_L + (l - g->xlo) / (g->xhi - g->xlo) * RF_PW;
}

static double pyl(const struct plot *g, double l)
{
    return RF_T + RF_PH - (l - g->ylo) / (g->yhi - g->ylo) * RF_PH;
}

static double px(const struct plot *g, double x)
{
    return pxl(g, log10(x));
}

static double py(const struct plot *g, double y)
{
    return pyl(g, log10(y));
}

/* Axis ends (log10) around [lo, hi] with room for the largest circle
 * (radius 30) at either end of an axis of `pixels`; at least one decade. */
static void log_range(double lo, double hi, int pixels, double *llo, double *lhi)
{
    double a = log10(lo), e = log10(hi), pad = fmax(0.05, (e - a) * 32 / (pixels - 64));
    a -= pad;
    e += pad;
    if (e - a < 1) {
        double m = (a + e) / 2;
        a = m - 0.5;
        e = m + 0.5;
    }
    *llo = a;
    *lhi = e;
}

/* Label of m * 10^k: "0.01", "2", "1000", "1e-5", "5e6". */
static void tick_label(int m, int k, char *s, size_t n)
{
    if (k >= 0 && k <= 5)
        snprintf(s, n, "%.0f", m * pow(10, k));
    else if (k < 0 && k >= -3)
        snprintf(s, n, "%.*f", -k, m * pow(10, k));
    else
        snprintf(s, n, "%de%d", m, k);
}

/* Grid lines and tick labels of one log axis: decades (every step-th one
 * labelled when there are many), 2..9 as light lines when the span is short,
 * and 2 and 5 labelled too when fewer than two decades are visible. */
static int svg_axis(struct mp_buf *b, const struct plot *g, bool is_x)
{
    double lo = is_x ? g->xlo : g->ylo, hi = is_x ? g->xhi : g->yhi, eps = 1e-9;
    int k0 = (int)floor(lo), k1 = (int)ceil(hi), nmaj = 0;
    for (int k = k0; k <= k1; k++)
        nmaj += k >= lo - eps && k <= hi + eps;
    bool minor = hi - lo <= 8, label_minor = nmaj < 2;
    int step = hi - lo > 10 ? (int)ceil((hi - lo) / 10) : 1, rc = 0;
    for (int k = k0; k <= k1 && !rc; k++) {
        for (int m = 1; m <= 9 && !rc; m++) {
            double l = k + log10(m);
            if (l < lo - eps || l > hi + eps || (m > 1 && !minor))
                continue;
            const char *cls = m == 1 ? "g" : "gm";
            if (is_x)
                rc = mp_buf_printf(b,
                                   "<line class=\"%s\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" "
                                   "y2=\"%d\"/>\n",
                                   cls, pxl(g, l), RF_T, pxl(g, l), RF_T + RF_PH);
            else
                rc = mp_buf_printf(b,
                                   "<line class=\"%s\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" "
                                   "y2=\"%.2f\"/>\n",
                                   cls, RF_L, pyl(g, l), RF_L + RF_PW, pyl(g, l));
            bool label =
                m == 1 ? ((k % step) + step) % step == 0 : label_minor && (m == 2 || m == 5);
            if (!label || rc)
                continue;
            char lab[32];
            tick_label(m, k, lab, sizeof(lab));
            if (is_x)
                rc =
                    mp_buf_printf(b, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                                  pxl(g, l), RF_T + RF_PH + 18, lab);
            else
                rc = mp_buf_printf(b, "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                                   RF_L - 8, pyl(g, l) + 4, lab);
        }
    }
    return rc;
}

static int svg_axes(struct mp_buf *b, const struct plot *g)
{
    int rc = svg_axis(b, g, true);
    rc = rc ? rc : svg_axis(b, g, false);
    rc = rc ? rc
            : mp_buf_printf(b,
                            "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" "
                            "height=\"%d\"/>\n"
                            "<text class=\"axt\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
                            "Arithmetic intensity (FLOP/byte)</text>\n"
                            "<text class=\"axt\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
                            "transform=\"rotate(-90 %d %d)\">Achieved TFLOP/s</text>\n",
                            RF_L, RF_T, RF_PW, RF_PH, RF_L + RF_PW / 2, RF_H - 14, 20,
                            RF_T + RF_PH / 2, 20, RF_T + RF_PH / 2);
    return rc;
}

/* Memory roof (y = bw * x) up to the highest compute roof, the compute roofs
 * from their ridge points, and their labels. */
static int svg_roofs(struct mp_buf *b, const struct mp_report *r, const struct plot *g, double bw,
                     const struct roof *rf, size_t nrf, double *label_end)
{
    double xend = nrf ? rf[0].ridge : pow(10, g->xhi);
    double x0 = pow(10, g->xlo);
    int rc = mp_buf_printf(b,
                           "<g clip-path=\"url(#rf-clip)\">\n<line class=\"roof-mem\" x1=\"%.2f\" "
                           "y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                           px(g, x0), py(g, bw * x0), px(g, xend), py(g, bw * xend));
    for (size_t i = 0; i < nrf && !rc; i++)
        rc = mp_buf_printf(b,
                           "<line class=\"roof\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>\n"
                           "<path class=\"ridge\" d=\"M%.2f %.2fl5 5l-5 5l-5 -5z\"/>\n",
                           px(g, rf[i].ridge), py(g, rf[i].tflops), RF_L + RF_PW,
                           py(g, rf[i].tflops), px(g, rf[i].ridge), py(g, rf[i].tflops) - 5);
    rc = rc ? rc : mp_buf_puts(b, "</g>\n");
    /* compute roof labels right of the frame at their line's height (two
     * lines each: spec and peak, ridge point), pushed apart downwards */
    double last = -1e9;
    for (size_t i = 0; i < nrf && !rc; i++) {
        double y = fmax(py(g, rf[i].tflops) + 4, last + 30);
        last = y;
        char tf[32], ri[32];
        tl_view_fmt_short(rf[i].tflops, tf, sizeof(tf));
        tl_view_fmt_short(rf[i].ridge, ri, sizeof(ri));
        rc = mp_buf_printf(b, "<text class=\"roof-lab\" x=\"%d\" y=\"%.2f\">", RF_L + RF_PW + 8, y);
        rc = rc ? rc : tl_view_put_esc(b, rf[i].key);
        rc = rc ? rc
                : mp_buf_printf(b,
                                " %s TFLOP/s</text><text class=\"small\" x=\"%d\" y=\"%.2f\">"
                                "ridge %s FLOP/B</text>\n",
                                tf, RF_L + RF_PW + 8, y + 14, ri);
    }
    *label_end = last + 14;
    /* memory roof label along the visible part of the line, where it covers
     * the fewest points */
    double lbw = log10(bw);
    double a = fmax(g->xlo, g->ylo - lbw), e = fmin(fmin(g->xhi, g->yhi - lbw), log10(xend));
    if (e - a > 0.1 && !rc) {
        double th = -atan2((double)RF_PH / (g->yhi - g->ylo), (double)RF_PW / (g->xhi - g->xlo));
        double ang = th * 180 / M_PI, len = 110; /* label length in px */
        double len_lx = len * cos(th) * (g->xhi - g->xlo) / RF_PW, span = fmax(0, e - len_lx - a);
        double lx = a + 0.05 * span;
        size_t best = SIZE_MAX;
        for (int c = 0; c < 5; c++) {
            double cx = a + (0.05 + 0.2 * c) * span, ax = px(g, pow(10, cx)),
                   ay = py(g, bw * pow(10, cx));
            size_t hits = 0;
            for (size_t i = 0; i < r->n_points; i++) {
                const struct mp_report_point *p = &r->points[i];
                if (!tl_view_point_plottable(p))
                    continue;
                /* distance of the point's centre to the label's segment */
                double qx = px(g, p->flops_per_byte) - ax, qy = py(g, p->tflops_s) - ay;
                double t = fmin(fmax(qx * cos(th) + qy * sin(th), 0), len);
                hits += hypot(qx - t * cos(th), qy - t * sin(th)) < 18;
            }
            if (hits < best) {
                best = hits;
                lx = cx;
            }
        }
        double x = px(g, pow(10, lx)), y = py(g, bw * pow(10, lx));
        char s[32];
        tl_view_fmt_short(bw, s, sizeof(s));
        rc = mp_buf_printf(b,
                           "<text class=\"roof-mem-lab\" x=\"%.2f\" y=\"%.2f\" "
                           "transform=\"rotate(%.2f %.2f %.2f)\">memory %s TB/s</text>\n",
                           x + 4, y - 6, ang, x, y, s);
    }
    return rc;
}

static int svg_point(struct mp_buf *b, const struct mp_report *r, const struct mp_report_point *p,
                     const struct plot *g, double share, const char *colour)
{
    double rad = 3 + 27 * sqrt(share > 0 && isfinite(share) ? share : 0);
    char tf[32], tb[32], ai[32], ms[32], pr[32], pc[32];
    tl_view_fmt_sig(p->tflops_s, tf, sizeof(tf));
    tl_view_fmt_sig(p->tb_s, tb, sizeof(tb));
    tl_view_fmt_sig(p->flops_per_byte, ai, sizeof(ai));
    tl_view_fmt_fixed(p->kernel_us / 1e3, 3, ms, sizeof(ms));
    tl_view_fmt_fixed(share * 100, 1, pc, sizeof(pc));
    int rc = mp_buf_printf(
        b, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\" stroke=\"%s\">",
        px(g, p->flops_per_byte), py(g, p->tflops_s), rad, colour, colour);
    rc = rc ? rc : mp_buf_puts(b, "<title>");
    rc = rc ? rc : tl_view_put_esc(b, p->name);
    rc = rc ? rc : mp_buf_puts(b, " [");
    rc = rc ? rc : tl_view_put_esc(b, p->sheet);
    rc = rc ? rc : mp_buf_puts(b, "]\n");
    if (p->params && p->params[0] && !rc) {
        rc = tl_view_put_esc(b, p->params);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    rc = rc ? rc
            : mp_buf_printf(b,
                            "%s TFLOP/s, %s TB/s, %s FLOP/B\nkernel time %s ms (%s%% of plotted), "
                            "%zu call%s",
                            tf, tb, ai, ms, pc, p->count, p->count == 1 ? "" : "s");
    if (r->has_arch && !rc) {
        const char *bound = tl_view_point_bound(r, p);
        tl_view_fmt_fixed(p->has_roofline ? p->pct_roofline : NAN, 1, pr, sizeof(pr));
        rc = mp_buf_printf(b, "\n%s%% of roofline, %s bound", pr, bound ? bound : "unknown");
        double pk = tl_view_point_pct_peak(r, p);
        if (isfinite(pk) && !rc) {
            char ps[32];
            tl_view_fmt_fixed(pk, 1, ps, sizeof(ps));
            rc = mp_buf_printf(b, " (%s%% of the data sheet's peak)", ps);
        }
        if (p->spec[0] && !rc) {
            rc = mp_buf_puts(b, " (");
            rc = rc ? rc : tl_view_put_esc(b, p->spec);
            rc = rc ? rc : mp_buf_putc(b, ')');
        }
    }
    rc = rc ? rc : mp_buf_puts(b, "</title></circle>\n");
    return rc;
}

static int html_roofline(struct mp_buf *b, const struct mp_report *r, struct sheet_set *ss)
{
    double bw = 0;
    bool has_bw = tl_view_arch_bw(r, &bw);
    struct roof rf[MP_ROOFLINE_ARCH_MAX_SPECS];
    size_t nrf = 0, nplot = 0;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY, ksum = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        const struct mp_report_point *p = &r->points[i];
        size_t si = sheet_index(ss, p->sheet, true);
        double tf;
        if (has_bw && tl_view_point_peak(r, p, &tf)) {
            size_t j = 0;
            while (j < nrf && strcmp(rf[j].key, p->spec) != 0)
                j++;
            if (j == nrf && nrf < MP_ROOFLINE_ARCH_MAX_SPECS)
                rf[nrf++] = (struct roof){p->spec, tf, tf / bw};
        }
        if (!tl_view_point_plottable(p))
            continue;
        ss->count[si]++;
        nplot++;
        xmin = fmin(xmin, p->flops_per_byte);
        xmax = fmax(xmax, p->flops_per_byte);
        ymin = fmin(ymin, p->tflops_s);
        ymax = fmax(ymax, p->tflops_s);
        ksum += tl_view_finite_or0(p->kernel_us);
    }
    qsort(rf, nrf, sizeof(*rf), cmp_roof);
    if (nplot == 0) {
        xmin = 0.1;
        xmax = 1000;
        ymin = 0.01;
        ymax = 100;
    }
    for (size_t i = 0; i < nrf; i++) {
        xmin = fmin(xmin, rf[i].ridge);
        xmax = fmax(xmax, rf[i].ridge);
        ymax = fmax(ymax, rf[i].tflops);
    }
    if (nrf) { /* a decade of the memory roof's slope left of the top ridge */
        xmin = fmin(xmin, rf[0].ridge / 10);
        ymin = fmin(ymin, rf[0].tflops / 10);
    }
    struct plot g;
    double label_end = 0; /* bottom of the roof labels right of the frame */
    log_range(xmin, xmax, RF_PW, &g.xlo, &g.xhi);
    log_range(ymin, ymax, RF_PH, &g.ylo, &g.yhi);

    int rc = mp_buf_puts(b, "<h2>Roofline</h2>\n<p class=\"note\">One circle per op shape of the "
                            "per-category sheets: arithmetic intensity against mean achieved "
                            "throughput; circle area is proportional to the shape's total kernel "
                            "time. Hover a circle for details.");
    if (!r->has_arch && !rc)
        rc = mp_buf_puts(b, " No GPU architecture was given, so no roofs are drawn "
                            "(<code>--gpu-arch NAME</code> or <code>--gpu-arch-json FILE</code>).");
    if (nplot < r->n_points && !rc)
        rc = mp_buf_printf(b,
                           " %zu of %zu op shapes are not plotted (no FLOP/byte or zero "
                           "throughput).",
                           r->n_points - nplot, r->n_points);
    rc = rc ? rc : mp_buf_puts(b, "</p>\n");
    rc = rc ? rc
            : mp_buf_printf(b,
                            "<svg class=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" "
                            "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
                            "aria-label=\"Roofline plot\">\n<defs><clipPath id=\"rf-clip\"><rect "
                            "x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath></defs>\n",
                            RF_W, RF_H, RF_W, RF_H, RF_L, RF_T, RF_PW, RF_PH);
    rc = rc ? rc : svg_axes(b, &g);
    if (has_bw && !rc)
        rc = svg_roofs(b, r, &g, bw, rf, nrf, &label_end);
    /* largest circles first so that small ones stay on top */
    struct tl_view_ord *o = rc ? NULL : tl_view_sorted_points(r);
    if (!o && !rc)
        rc = MP_ENOMEM;
    rc = rc ? rc : mp_buf_puts(b, "<g class=\"pts\">\n");
    for (size_t k = 0; k < r->n_points && !rc; k++) {
        const struct mp_report_point *p = &r->points[o[k].i];
        if (!tl_view_point_plottable(p))
            continue;
        double share = ksum > 0 ? tl_view_finite_or0(p->kernel_us) / ksum : 0;
        rc = svg_point(b, r, p, &g, share, palette[sheet_index(ss, p->sheet, false) % N_PALETTE]);
    }
    free(o);
    rc = rc ? rc : mp_buf_puts(b, "</g>\n");
    if (nplot == 0 && !rc)
        rc = mp_buf_printf(b,
                           "<text class=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no op "
                           "shape with a known FLOP/byte</text>\n",
                           RF_L + RF_PW / 2, RF_T + RF_PH / 2);
    /* legend */
    int lx = RF_L + RF_PW + 22, ly = label_end > 0 ? (int)ceil(label_end) + 30 : RF_T + 10;
    rc = rc ? rc : mp_buf_printf(b, "<text class=\"lgh\" x=\"%d\" y=\"%d\">Sheet</text>\n", lx, ly);
    for (size_t i = 0; i < ss->n && !rc; i++) {
        ly += 20;
        rc = mp_buf_printf(b,
                           "<circle class=\"lg\" cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"%s\" "
                           "stroke=\"%s\"/><text x=\"%d\" y=\"%d\">",
                           lx + 6, ly - 4, palette[i % N_PALETTE], palette[i % N_PALETTE], lx + 18,
                           ly);
        rc = rc ? rc : tl_view_put_esc(b, ss->name[i]);
        rc = rc ? rc : mp_buf_printf(b, " (%zu)</text>\n", ss->count[i]);
    }
    if (r->has_arch && !rc) {
        ly += 34;
        rc = mp_buf_printf(b, "<text class=\"lgh\" x=\"%d\" y=\"%d\">Roofs: ", lx, ly);
        rc = rc ? rc : tl_view_put_esc(b, r->arch.name);
        rc = rc ? rc : mp_buf_puts(b, "</text>\n");
        if (has_bw && !rc) {
            char s[32];
            tl_view_fmt_short(bw, s, sizeof(s));
            ly += 20;
            rc = mp_buf_printf(b,
                               "<line class=\"roof-mem\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                               "<text x=\"%d\" y=\"%d\">memory %s TB/s</text>\n",
                               lx, ly - 4, lx + 14, ly - 4, lx + 18, ly, s);
            ly += 20;
            rc = rc ? rc
                    : mp_buf_printf(b,
                                    "<line class=\"roof\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                                    "y2=\"%d\"/><text x=\"%d\" y=\"%d\">compute, per spec "
                                    "(%zu)</text>\n",
                                    lx, ly - 4, lx + 14, ly - 4, lx + 18, ly, nrf);
            ly += 20;
            rc = rc ? rc
                    : mp_buf_printf(b,
                                    "<path class=\"ridge\" d=\"M%d %dl5 5l-5 5l-5 -5z\"/>"
                                    "<text x=\"%d\" y=\"%d\">ridge point</text>\n",
                                    lx + 7, ly - 9, lx + 18, ly);
        } else if (!rc) {
            ly += 20;
            rc = mp_buf_printf(b, "<text x=\"%d\" y=\"%d\">no memory bandwidth</text>\n", lx, ly);
        }
    }
    if (!rc) {
        ly += 34;
        rc = mp_buf_printf(b,
                           "<text class=\"small\" x=\"%d\" y=\"%d\">larger circle: more "
                           "kernel time</text>\n",
                           lx, ly);
    }
    rc = rc ? rc : mp_buf_puts(b, "</svg>\n");
    return rc;
}

static int html_timeline(struct mp_buf *b, const struct mp_report *r)
{
    const struct mp_gpu_timeline *tl = &r->timeline;

    struct {
        const char *name, *colour;
        double us;
    } seg[] = {{"computation", "#59a14f", tl->computation},
               {"exposed comm", "#f28e2b", tl->exposed_comm},
               {"exposed memcpy", "#b07aa1", tl->exposed_memcpy},
               {"idle", "#d0d7de", tl->idle}};

    char tot[32];
    tl_view_fmt_fixed(tl->total / 1e3, 3, tot, sizeof(tot));
    int rc = mp_buf_printf(b,
                           "<h2>GPU time</h2>\n<p class=\"note\">%s ms from the first to the "
                           "last GPU event (TraceLens gpu_timeline).</p>\n",
                           tot);
    rc = rc ? rc
            : mp_buf_puts(b, "<svg class=\"busy\" xmlns=\"http://www.w3.org/2000/svg\" "
                             "viewBox=\"0 0 980 86\" width=\"980\" height=\"86\" role=\"img\" "
                             "aria-label=\"GPU busy and idle time\">\n");
    double x = 10, w = 960;
    for (size_t i = 0; i < 4 && !rc; i++) {
        double f =
            tl->total > 0 && isfinite(seg[i].us) && seg[i].us > 0 ? seg[i].us / tl->total : 0;
        double sw = fmin(f * w, 10 + w - x);
        char ms[32], pc[32];
        tl_view_fmt_fixed(seg[i].us / 1e3, 3, ms, sizeof(ms));
        tl_view_fmt_fixed(tl_view_pct_of(seg[i].us, tl->total), 1, pc, sizeof(pc));
        if (sw > 0)
            rc = mp_buf_printf(b,
                               "<rect x=\"%.2f\" y=\"8\" width=\"%.2f\" height=\"30\" "
                               "fill=\"%s\"><title>%s: %s ms (%s%%)</title></rect>\n",
                               x, sw, seg[i].colour, seg[i].name, ms, pc);
        x += sw > 0 ? sw : 0;
        rc = rc ? rc
                : mp_buf_printf(b,
                                "<rect x=\"%zu\" y=\"56\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                                "<text x=\"%zu\" y=\"67\">%s %s ms (%s%%)</text>\n",
                                10 + i * 240, seg[i].colour, 28 + i * 240, seg[i].name, ms, pc);
    }
    rc = rc ? rc
            : mp_buf_puts(b,
                          "<rect class=\"frame\" x=\"10\" y=\"8\" width=\"960\" height=\"30\"/>\n");
    rc = rc ? rc : mp_buf_puts(b, "</svg>\n");
    char busy[32], bp[32], comm[32], mc[32];
    tl_view_fmt_fixed(tl->busy / 1e3, 3, busy, sizeof(busy));
    tl_view_fmt_fixed(tl_view_pct_of(tl->busy, tl->total), 1, bp, sizeof(bp));
    tl_view_fmt_fixed(tl->total_comm / 1e3, 3, comm, sizeof(comm));
    tl_view_fmt_fixed(tl->total_memcpy / 1e3, 3, mc, sizeof(mc));
    rc = rc ? rc
            : mp_buf_printf(b,
                            "<p class=\"note\">busy %s ms (%s%%); all communication %s ms and "
                            "all memcpy %s ms, including the parts hidden under computation.</p>\n",
                            busy, bp, comm, mc);
    return rc;
}

static int html_cats(struct mp_buf *b, const struct mp_report *r)
{
    int rc = mp_buf_puts(b, "<h2>Time by category</h2>\n");
    if (r->n_cats == 0)
        return rc ? rc
                  : mp_buf_puts(b, "<p class=\"note\">No CPU ops launching GPU kernels in "
                                   "this trace.</p>\n");
    struct tl_view_ord *o = tl_view_sorted_cats(r);
    if (!o)
        return MP_ENOMEM;
    double total = tl_view_ops_total_us(r) / 1e3, rest = 0, maxv = 0;
    size_t shown = r->n_cats > VIEW_TOP_CATS_HTML ? VIEW_TOP_CATS_HTML : r->n_cats, rest_n = 0;
    for (size_t i = shown; i < r->n_cats; i++) {
        rest += tl_view_finite_or0(r->cats[o[i].i].ms);
        rest_n++;
    }
    for (size_t i = 0; i < shown; i++)
        maxv = fmax(maxv, tl_view_finite_or0(r->cats[o[i].i].ms));
    maxv = fmax(maxv, rest);
    size_t rows = shown + (rest_n ? 1 : 0);
    char tot[32];
    tl_view_fmt_fixed(total, 3, tot, sizeof(tot));
    rc = rc ? rc
            : mp_buf_printf(b,
                            "<p class=\"note\">Direct kernel time of the ops by TraceLens "
                            "category (ops_summary_by_category): %s ms in total.</p>\n"
                            "<svg class=\"cats\" xmlns=\"http://www.w3.org/2000/svg\" "
                            "viewBox=\"0 0 980 %zu\" width=\"980\" height=\"%zu\" role=\"img\" "
                            "aria-label=\"Time by category\">\n",
                            tot, rows * 26 + 12, rows * 26 + 12);
    for (size_t i = 0; i < rows && !rc; i++) {
        bool is_rest = i == shown;
        const struct mp_report_cat *c = is_rest ? NULL : &r->cats[o[i].i];
        double ms = is_rest ? rest : tl_view_finite_or0(c->ms);
        size_t count = is_rest ? rest_n : c->count;
        double bw = maxv > 0 ? ms / maxv * 560 : 0, y = 6 + (double)i * 26;
        char v[32], pc[32];
        tl_view_fmt_fixed(ms, 3, v, sizeof(v));
        tl_view_fmt_fixed(tl_view_pct_of(ms, total), 1, pc, sizeof(pc));
        rc = mp_buf_printf(b, "<text x=\"222\" y=\"%.2f\" text-anchor=\"end\">", y + 15);
        if (is_rest)
            rc = rc ? rc : mp_buf_printf(b, "(%zu more)", rest_n);
        else
            rc = rc ? rc : tl_view_put_esc(b, c->name);
        rc = rc ? rc
                : mp_buf_printf(b,
                                "</text><rect class=\"bar\" x=\"230\" y=\"%.2f\" width=\"%.2f\" "
                                "height=\"20\"><title>%s ms, %s%%, %zu %s</title></rect>"
                                "<text x=\"%.2f\" y=\"%.2f\">%s ms (%s%%)</text>\n",
                                y, fmax(bw, 1), v, pc, count,
                                is_rest ? "categories" : (count == 1 ? "op" : "ops"),
                                236 + fmax(bw, 1), y + 15, v, pc);
    }
    free(o);
    rc = rc ? rc : mp_buf_puts(b, "</svg>\n");
    return rc;
}

static int td_num(struct mp_buf *b, const char *s)
{
    return mp_buf_printf(b, "<td class=\"n\">%s</td>", s);
}

static int html_top_ops(struct mp_buf *b, const struct mp_report *r, struct sheet_set *ss)
{
    int rc = mp_buf_puts(b, "<h2>Top ops by kernel time</h2>\n");
    if (r->n_points == 0)
        return rc ? rc
                  : mp_buf_puts(b, "<p class=\"note\">No op with a TraceLens perf model in "
                                   "this trace.</p>\n");
    struct tl_view_ord *o = tl_view_sorted_points(r);
    if (!o)
        return MP_ENOMEM;
    size_t shown = r->n_points > VIEW_TOP_OPS_HTML ? VIEW_TOP_OPS_HTML : r->n_points;
    double total = tl_view_ops_total_us(r);
    rc = rc ? rc
            : mp_buf_printf(b,
                            "<p class=\"note\">%zu of %zu op shapes; %% time is the share of "
                            "all op kernel time; TFLOP/s and TB/s are means over the calls.</p>\n"
                            "<table>\n<thead><tr><th class=\"n\">#</th><th>op</th><th>sheet</th>"
                            "<th class=\"n\">count</th><th class=\"n\">time ms</th>"
                            "<th class=\"n\">%% time</th><th class=\"n\">TFLOP/s</th>"
                            "<th class=\"n\">TB/s</th><th class=\"n\">FLOP/B</th>",
                            shown, r->n_points);
    if (r->has_arch && !rc)
        rc = mp_buf_puts(b, "<th class=\"n\">% roofline</th><th>bound</th>");
    rc = rc ? rc : mp_buf_puts(b, "</tr></thead>\n<tbody>\n");
    for (size_t k = 0; k < shown && !rc; k++) {
        const struct mp_report_point *p = &r->points[o[k].i];
        struct tl_view_point_text x;
        tl_view_point_text(r, p, total, &x);
        bool has_params = p->params && p->params[0];
        rc = mp_buf_printf(b, "<tr%s><td class=\"n\">%zu</td><td class=\"op\">",
                           has_params ? " class=\"hp\"" : "", k + 1);
        rc = rc ? rc : tl_view_put_esc_wbr(b, p->name);
        rc = rc ? rc
                : mp_buf_printf(b,
                                "</td><td class=\"sh\"><span class=\"sw\" "
                                "style=\"background:%s\"></span>",
                                palette[sheet_index(ss, p->sheet, false) % N_PALETTE]);
        rc = rc ? rc : tl_view_put_esc(b, p->sheet);
        rc = rc ? rc : mp_buf_printf(b, "</td><td class=\"n\">%zu</td>", p->count);
        rc = rc ? rc : td_num(b, x.ms);
        rc = rc ? rc : td_num(b, x.pc);
        rc = rc ? rc : td_num(b, x.tf);
        rc = rc ? rc : td_num(b, x.tb);
        rc = rc ? rc : td_num(b, x.ai);
        if (r->has_arch && !rc) {
            rc = td_num(b, x.pr);
            rc = rc ? rc : mp_buf_printf(b, "<td>%s</td>", x.bound);
        }
        rc = rc ? rc : mp_buf_puts(b, "</tr>\n");
        if (has_params && !rc) {
            /* the shape's parameters on their own row, under the name */
            rc = mp_buf_printf(b, "<tr class=\"pr\"><td></td><td class=\"params\" colspan=\"%d\">",
                               r->has_arch ? 10 : 8);
            rc = rc ? rc : tl_view_put_esc(b, p->params);
            rc = rc ? rc : mp_buf_puts(b, "</td></tr>\n");
        }
    }
    free(o);
    rc = rc ? rc : mp_buf_puts(b, "</tbody>\n</table>\n");
    return rc;
}

static const char html_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Helvetica,Arial,sans-serif;"
    "color:#1f2328;background:#fff;max-width:1000px;margin:24px auto;padding:0 16px}\n"
    "h1{font-size:22px;margin:0 0 4px}\n"
    "h2{font-size:17px;margin:30px 0 6px;padding-bottom:4px;border-bottom:1px solid #d0d7de}\n"
    ".meta,.note{color:#57606a;margin:4px 0 8px}\n"
    ".note{font-size:13px}\n"
    "code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\n"
    "svg{display:block;max-width:100%;height:auto}\n"
    "svg text{font:12px system-ui,-apple-system,\"Segoe UI\",Helvetica,Arial,sans-serif;"
    "fill:#1f2328}\n"
    "svg .axt,svg .lgh{font-weight:600;font-size:13px}\n"
    "svg .small,svg .empty{fill:#57606a}\n"
    "svg .frame{fill:none;stroke:#8c959f;stroke-width:1}\n"
    "svg .g{stroke:#d8dee4;stroke-width:1}\n"
    "svg .gm{stroke:#f0f3f6;stroke-width:1}\n"
    "svg .roof{stroke:#24292f;stroke-width:2}\n"
    "svg .roof-mem{stroke:#cf222e;stroke-width:2}\n"
    "svg .ridge{fill:#24292f}\n"
    "svg .roof-lab{fill:#24292f;font-weight:600}\n"
    "svg .roof-mem-lab{fill:#cf222e;font-weight:600}\n"
    "svg .pt{fill-opacity:.55;stroke-width:1.2}\n"
    "svg .pt:hover{fill-opacity:.9;stroke:#1f2328}\n"
    "svg .bar{fill:#4e79a7}\n"
    "table{border-collapse:collapse;width:100%;font-size:13px}\n"
    "th,td{padding:4px 6px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}\n"
    "th{background:#f6f8fa;font-weight:600}\n"
    ".n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".op{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;"
    "overflow-wrap:anywhere}\n"
    ".sh{white-space:nowrap}\n"
    "tr.hp td{border-bottom:0;padding-bottom:0}\n"
    ".params{color:#57606a;font-size:12px;word-break:break-word;padding-top:0}\n"
    ".sw{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:6px}\n"
    "footer{margin:30px 0 10px;color:#57606a;font-size:12px}\n";

static int html_page(struct mp_buf *b, const struct mp_report *r, const char *title)
{
    struct sheet_set ss;
    memset(&ss, 0, sizeof(ss));
    int rc = mp_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
                            "charset=\"utf-8\">\n<meta name=\"viewport\" "
                            "content=\"width=device-width, initial-scale=1\">\n"
                            "<title>magpie report: ");
    rc = rc ? rc : tl_view_put_esc(b, title);
    rc = rc ? rc : mp_buf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", html_css);
    rc = rc ? rc : mp_buf_puts(b, "<h1>magpie trace report</h1>\n<p class=\"meta\">");
    rc = rc ? rc : tl_view_put_esc(b, title);
    rc = rc ? rc
            : mp_buf_printf(b, " &middot; %zu events, %zu GPU events (%zu linked)", r->events,
                            r->gpu_events, r->gpu_linked);
    if (r->has_arch && !rc) {
        double bw;
        rc = mp_buf_puts(b, " &middot; GPU architecture ");
        rc = rc ? rc : tl_view_put_esc(b, r->arch.name);
        if (tl_view_arch_bw(r, &bw) && !rc) {
            char s[32];
            tl_view_fmt_short(bw, s, sizeof(s));
            rc = mp_buf_printf(b, " (%s TB/s)", s);
        }
        rc = rc ? rc : tl_view_put_origin(b, r, true);
    }
    rc = rc ? rc : mp_buf_puts(b, "</p>\n");
    rc = rc ? rc : html_timeline(b, r);
    rc = rc ? rc : html_roofline(b, r, &ss);
    rc = rc ? rc : html_cats(b, r);
    rc = rc ? rc : html_top_ops(b, r, &ss);
    rc = rc ? rc : mp_buf_puts(b, "<footer>Written by magpie " MP_VERSION "; sheets: ");
    for (size_t i = 0; i < r->n && !rc; i++) {
        rc = i ? mp_buf_puts(b, ", ") : 0;
        rc = rc ? rc : tl_view_put_esc(b, r->sheets[i].name);
        rc = rc ? rc : mp_buf_puts(b, ".csv");
    }
    rc = rc ? rc : mp_buf_puts(b, "</footer>\n</body>\n</html>\n");
    return rc;
}

int mp_report_write_html(const struct mp_report *r, const char *path, const char *title,
                         struct mp_diag *d)
{
    if (!r || !path)
        return mp_diag_set(d, MP_EINVAL, "no report or no path for the HTML view");
    struct mp_buf b;
    mp_buf_init(&b, VIEW_HTML_MAX);
    int rc = html_page(&b, r, title ? title : "trace");
    if (rc)
        rc = mp_diag_set(d, rc, "cannot render the HTML report (%s)", mp_strerror(rc));
    else
        rc = mp_fs_write_atomic(path, b.data, b.len, d);
    mp_buf_fini(&b);
    return rc;
}
