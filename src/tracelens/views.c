/* Human views of a TraceLens-compatible report (issue 3, items 4 and 6):
 * the terminal summary, report.html (one self-contained page, inline CSS and
 * SVG: roofline, time by category, GPU busy/idle, top ops) and the xlsx
 * workbook of the CSV sheets (libxlsxwriter).
 *
 * Every view is a pure function of struct mp_report: no clock, locale-free
 * fixed-precision numbers and a total order on every sort, so the same report
 * always gives the same bytes. Non-finite values are printed as "-".
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <xlsxwriter.h>

#include <magpie/report.h>

#include "tracelens_int.h"

#define VIEW_HTML_MAX ((size_t)256 << 20) /* bytes of report.html */
#define VIEW_TOP_OPS_HTML 25              /* rows of the top-ops table */
#define VIEW_TOP_CATS_HTML 15             /* bars of the category chart */
#define XLSX_STR_MAX 32767                /* Excel's cell text limit */

/* ---------------------------------------------------------------- numbers */

/* Value rounded so that it never prints as "-0.000". */
static double unneg(double v, int prec)
{
    return fabs(v) < 0.5 * pow(10, -prec) ? 0.0 : v;
}

static void fmt_fixed(double v, int prec, char *s, size_t n)
{
    if (!isfinite(v))
        snprintf(s, n, "-");
    else
        snprintf(s, n, "%.*f", prec, unneg(v, prec));
}

/* Four significant digits without an exponent between 1e-4 and 1e6:
 * "760.6", "23.34", "0.5809"; "1.234e-05" outside. */
static void fmt_sig(double v, char *s, size_t n)
{
    double a = fabs(v);
    if (!isfinite(v)) {
        snprintf(s, n, "-");
    } else if (a == 0) {
        snprintf(s, n, "0");
    } else if (a >= 1e6 || a < 1e-4) {
        snprintf(s, n, "%.3e", v);
    } else {
        int dec = 3 - (int)floor(log10(a));
        snprintf(s, n, "%.*f", dec < 0 ? 0 : dec, v);
    }
}

/* fmt_sig without trailing zeros: "989", "4.8", "206", "102.9". */
static void fmt_short(double v, char *s, size_t n)
{
    fmt_sig(v, s, n);
    if (!strchr(s, '.') || strchr(s, 'e'))
        return;
    size_t l = strlen(s);
    while (l > 0 && s[l - 1] == '0')
        s[--l] = '\0';
    if (l > 0 && s[l - 1] == '.')
        s[--l] = '\0';
}

static double pct_of(double v, double total)
{
    return total > 0 && isfinite(v) ? v / total * 100 : NAN;
}

/* ----------------------------------------------------------------- text */

/* Code points of s (invalid bytes count one each). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = mp_utf8_len(p, SIZE_MAX);
        p += k ? k : 1;
        w++;
    }
    return w;
}

/* Appends s cut to at most width code points ("..." marks a cut), control
 * characters and invalid bytes as spaces / '?', padded with spaces to width
 * on the right (left-aligned) or on the left (right-aligned). */
static int put_cell(struct mp_buf *b, const char *s, size_t width, bool right)
{
    if (!s)
        s = "";
    size_t w = text_width(s), keep = w <= width ? w : (width > 3 ? width - 3 : width);
    size_t shown = w <= width ? w : (width > 3 ? width : keep);
    int rc = 0;
    for (size_t i = shown; right && i < width && !rc; i++)
        rc = mp_buf_putc(b, ' ');
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < keep && !rc; i++) {
        size_t k = mp_utf8_len(p, SIZE_MAX);
        if (k == 0)
            rc = mp_buf_putc(b, '?');
        else if (k == 1 && *p < 0x20)
            rc = mp_buf_putc(b, ' ');
        else
            rc = mp_buf_append(b, p, k);
        p += k ? k : 1;
    }
    if (w > width && width > 3 && !rc)
        rc = mp_buf_puts(b, "...");
    for (size_t i = shown; !right && i < width && !rc; i++)
        rc = mp_buf_putc(b, ' ');
    return rc;
}

/* Appends the first n bytes of s HTML-escaped (s is NUL-terminated and
 * s[n] is ASCII or NUL); control characters become spaces (newline and tab
 * kept) and invalid UTF-8 becomes U+FFFD, so the page is always valid. */
static int put_esc_n(struct mp_buf *b, const char *s, size_t n)
{
    int rc = 0;
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    static const char special[] = "&<>\"'";
    static const char *const entity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    while (p < end && *p && !rc) {
        unsigned c = *p;
        const char *sp = strchr(special, (int)c);
        size_t k = 1;
        if (sp) {
            rc = mp_buf_puts(b, entity[sp - special]);
        } else if (c < 0x20 && c != '\n' && c != '\t') {
            rc = mp_buf_putc(b, ' ');
        } else if (c < 0x80) {
            rc = mp_buf_putc(b, (char)c);
        } else {
            k = mp_utf8_len(p, SIZE_MAX);
            if (k)
                rc = mp_buf_append(b, p, k);
            else
                rc = mp_buf_puts(b, "\xEF\xBF\xBD");
            k = k ? k : 1;
        }
        p += k;
    }
    return rc;
}

static int put_esc(struct mp_buf *b, const char *s)
{
    return s ? put_esc_n(b, s, strlen(s)) : 0;
}

/* put_esc with a line-break opportunity (<wbr>) after each '_', ':', '.'
 * and ',' so that long op names wrap at their parts. */
static int put_esc_wbr(struct mp_buf *b, const char *s)
{
    int rc = 0;
    const char *p = s ? s : "";
    while (*p && !rc) {
        size_t n = strcspn(p, "_:.,");
        bool sep = p[n] != '\0';
        rc = put_esc_n(b, p, n + sep);
        /* no break inside "::" */
        if (sep && !(p[n] == ':' && p[n + 1] == ':') && !rc)
            rc = mp_buf_puts(b, "<wbr>");
        p += n + sep;
    }
    return rc;
}

/* ------------------------------------------------------- shared analysis */

struct ord {
    double key;
    const char *name;
    size_t i;
};

/* Descending key, then name, then index: a total order. */
static int cmp_ord(const void *a, const void *b)
{
    const struct ord *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    if (c)
        return c;
    return x->i < y->i ? -1 : x->i > y->i;
}

static double finite_or0(double v)
{
    return isfinite(v) ? v : 0;
}

/* The categories by time, or the points by kernel time (descending); NULL
 * on allocation failure. */
static struct ord *sorted_items(const struct mp_report *r, bool cats)
{
    size_t n = cats ? r->n_cats : r->n_points;
    struct ord *o = calloc(n ? n : 1, sizeof(*o));
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        o[i] = cats ? (struct ord){finite_or0(r->cats[i].ms), r->cats[i].name, i}
                    : (struct ord){finite_or0(r->points[i].kernel_us), r->points[i].name, i};
    qsort(o, n, sizeof(*o), cmp_ord);
    return o;
}

static struct ord *sorted_points(const struct mp_report *r)
{
    return sorted_items(r, false);
}

static struct ord *sorted_cats(const struct mp_report *r)
{
    return sorted_items(r, true);
}

/* Total op kernel time in µs: the categories' sum (every launcher), or the
 * points' sum when there are no categories. */
static double ops_total_us(const struct mp_report *r)
{
    double t = 0;
    for (size_t i = 0; i < r->n_cats; i++)
        t += finite_or0(r->cats[i].ms) * 1e3;
    if (t > 0)
        return t;
    for (size_t i = 0; i < r->n_points; i++)
        t += finite_or0(r->points[i].kernel_us);
    return t;
}

static bool arch_bw(const struct mp_report *r, double *tb_s)
{
    if (!r->has_arch || !r->arch.has_mem_bw || !(r->arch.mem_bw_gbps > 0) ||
        !isfinite(r->arch.mem_bw_gbps))
        return false;
    *tb_s = r->arch.mem_bw_gbps / 1e3;
    return true;
}

/* Peak TFLOP/s of the point's compute spec under the report's arch. */
static bool point_peak(const struct mp_report *r, const struct mp_report_point *p, double *tf)
{
    return r->has_arch && p->spec[0] && mp_roofline_arch_tflops(&r->arch, p->spec, tf) && *tf > 0 &&
           isfinite(*tf);
}

/* "compute" / "memory" the way TraceLens decides (compute time >= memory
 * time, i.e. FLOP/byte >= the ridge point), NULL when unknown. */
static const char *point_bound(const struct mp_report *r, const struct mp_report_point *p)
{
    double bw, tf;
    if (!p->has_ai || !isfinite(p->flops_per_byte) || !arch_bw(r, &bw) || !point_peak(r, p, &tf))
        return NULL;
    return p->flops_per_byte >= tf / bw ? "compute" : "memory";
}

/* Percent of the data sheet's peak of a point when the report's ceiling
 * was measured (magpie gpu calibrate); NAN otherwise. */
static double point_pct_peak(const struct mp_report *r, const struct mp_report_point *p)
{
    struct mp_roofline_arch peak;
    if (!r->has_arch || !r->arch.calibrated || !p->has_roofline || !p->has_ai ||
        mp_roofline_arch_datasheet(r->arch.name, &peak) != 0)
        return NAN;
    return p->pct_roofline * mp_roofline_peak_ratio(&r->arch, &peak, p->spec, p->flops_per_byte);
}

/* " (measured ceiling: ...)" after the arch name of a calibrated report */
static int put_origin(struct mp_buf *b, const struct mp_report *r, bool html)
{
    if (!r->has_arch || !r->arch.calibrated)
        return 0;
    int rc = mp_buf_puts(b, html ? " &mdash; measured ceiling, " : ", measured ceiling: ");
    return rc ? rc : html ? put_esc(b, r->arch.origin) : mp_buf_puts(b, r->arch.origin);
}

static bool point_plottable(const struct mp_report_point *p)
{
    return p->has_ai && isfinite(p->flops_per_byte) && p->flops_per_byte > 0 &&
           isfinite(p->tflops_s) && p->tflops_s > 0;
}

/* The figures of a top-ops row as the views print them. */
struct point_text {
    char ms[32], pc[32], tf[32], tb[32], ai[32], pr[32];
    const char *bound; /* "compute" / "memory", "-" when unknown */
};

static void point_text(const struct mp_report *r, const struct mp_report_point *p, double total,
                       struct point_text *x)
{
    fmt_fixed(p->kernel_us / 1e3, 3, x->ms, sizeof(x->ms));
    fmt_fixed(pct_of(p->kernel_us, total), 1, x->pc, sizeof(x->pc));
    fmt_sig(p->tflops_s, x->tf, sizeof(x->tf));
    fmt_sig(p->tb_s, x->tb, sizeof(x->tb));
    fmt_sig(p->has_ai ? p->flops_per_byte : NAN, x->ai, sizeof(x->ai));
    fmt_fixed(p->has_roofline ? p->pct_roofline : NAN, 1, x->pr, sizeof(x->pr));
    x->bound = point_bound(r, p);
    x->bound = x->bound ? x->bound : "-";
}

/* ------------------------------------------------------ terminal summary */

static int sum_row(struct mp_buf *b, const char *label, double us, double total_us)
{
    char ms[32], pc[32];
    fmt_fixed(us / 1e3, 3, ms, sizeof(ms));
    fmt_fixed(pct_of(us, total_us), 1, pc, sizeof(pc));
    int rc = put_cell(b, label, 18, false);
    return rc ? rc : mp_buf_printf(b, " %12s ms %6s%%\n", ms, pc);
}

static int summary_timeline(const struct mp_report *r, struct mp_buf *b)
{
    const struct mp_gpu_timeline *tl = &r->timeline;
    char tot[32];
    fmt_fixed(tl->total / 1e3, 3, tot, sizeof(tot));
    int rc = mp_buf_printf(b, "GPU time %s ms\n", tot);
    rc = rc ? rc : sum_row(b, "  busy", tl->busy, tl->total);
    rc = rc ? rc : sum_row(b, "    computation", tl->computation, tl->total);
    rc = rc ? rc : sum_row(b, "    exposed comm", tl->exposed_comm, tl->total);
    rc = rc ? rc : sum_row(b, "    exposed memcpy", tl->exposed_memcpy, tl->total);
    rc = rc ? rc : sum_row(b, "  idle", tl->idle, tl->total);
    return rc;
}

/* The rows of a summary table: the categories (else the points) sorted
 * (*o, free it), how many are shown (top_n, 0 = all) and the width of the
 * name (else sheet) column: the widest shown, within [lo, hi]. */
static int top_rows(const struct mp_report *r, bool cats, size_t top_n, size_t lo, size_t hi,
                    struct ord **o, size_t *shown, size_t *width)
{
    size_t n = cats ? r->n_cats : r->n_points;
    *o = sorted_items(r, cats);
    if (!*o)
        return MP_ENOMEM;
    *shown = top_n && top_n < n ? top_n : n;
    *width = lo;
    for (size_t i = 0; i < *shown; i++) {
        const char *s = cats ? r->cats[(*o)[i].i].name : r->points[(*o)[i].i].sheet;
        size_t w = text_width(s ? s : "");
        *width = w > *width ? w : *width;
    }
    *width = *width > hi ? hi : *width;
    return 0;
}

static int summary_cats(const struct mp_report *r, size_t top_n, struct mp_buf *b)
{
    if (r->n_cats == 0)
        return mp_buf_puts(b, "\nTime by category: none (no CPU ops launching GPU kernels)\n");
    struct ord *o;
    size_t shown, wname;
    if (top_rows(r, true, top_n, 8, 32, &o, &shown, &wname))
        return MP_ENOMEM;
    double total = ops_total_us(r);
    char tot[32];
    fmt_fixed(total / 1e3, 3, tot, sizeof(tot));
    int rc = mp_buf_printf(b, "\nTime by category: %s ms of op kernel time in %zu categor%s\n", tot,
                           r->n_cats, r->n_cats == 1 ? "y" : "ies");
    rc = rc ? rc : mp_buf_puts(b, "  ");
    rc = rc ? rc : put_cell(b, "category", wname, false);
    rc = rc ? rc : mp_buf_printf(b, " %12s %7s %8s\n", "time ms", "%", "count");
    double rest = 0;
    size_t rest_n = 0;
    for (size_t i = 0; i < r->n_cats && !rc; i++) {
        const struct mp_report_cat *c = &r->cats[o[i].i];
        if (i >= shown) {
            rest += finite_or0(c->ms);
            rest_n++;
            continue;
        }
        char ms[32], pc[32];
        fmt_fixed(c->ms, 3, ms, sizeof(ms));
        fmt_fixed(pct_of(c->ms * 1e3, total), 1, pc, sizeof(pc));
        rc = mp_buf_puts(b, "  ");
        rc = rc ? rc : put_cell(b, c->name, wname, false);
        rc = rc ? rc : mp_buf_printf(b, " %12s %6s%% %8zu\n", ms, pc, c->count);
    }
    if (rest_n && !rc) {
        char ms[32], pc[32];
        fmt_fixed(rest, 3, ms, sizeof(ms));
        fmt_fixed(pct_of(rest * 1e3, total), 1, pc, sizeof(pc));
        rc = mp_buf_printf(b, "  (%zu more) %*s %12s %6s%%\n", rest_n,
                           (int)(wname > 11 + 3 ? wname - 11 : 0), "", ms, pc);
    }
    free(o);
    return rc;
}

static int summary_ops(const struct mp_report *r, size_t top_n, struct mp_buf *b)
{
    if (r->n_points == 0)
        return mp_buf_puts(b, "\nTop ops: none (no op with a TraceLens perf model)\n");
    struct ord *o;
    size_t shown, wsheet;
    if (top_rows(r, false, top_n, 5, 20, &o, &shown, &wsheet))
        return MP_ENOMEM;
    double total = ops_total_us(r), bw = 0;
    bool roof = r->has_arch;
    int rc = mp_buf_printf(b, "\nTop %zu of %zu op shapes by kernel time", shown, r->n_points);
    if (roof && !rc) {
        rc = mp_buf_printf(b, " (roofline: %s", r->arch.name);
        if (arch_bw(r, &bw) && !rc) {
            char s[32];
            fmt_fixed(bw, 2, s, sizeof(s));
            rc = mp_buf_printf(b, ", %s TB/s", s);
        }
        rc = rc ? rc : put_origin(b, r, false);
        rc = rc ? rc : mp_buf_putc(b, ')');
    }
    rc = rc ? rc : mp_buf_puts(b, "\n  #  ");
    rc = rc ? rc : put_cell(b, "op", 32, false);
    rc = rc ? rc : mp_buf_putc(b, ' ');
    rc = rc ? rc : put_cell(b, "sheet", wsheet, false);
    rc = rc ? rc
            : mp_buf_printf(b, " %7s %10s %7s %9s %8s %8s", "count", "time ms", "% time", "TFLOP/s",
                            "TB/s", "FLOP/B");
    if (roof && !rc)
        rc = mp_buf_printf(b, " %7s  %s", "% roof", "bound");
    rc = rc ? rc : mp_buf_putc(b, '\n');
    for (size_t k = 0; k < shown && !rc; k++) {
        const struct mp_report_point *p = &r->points[o[k].i];
        struct point_text x;
        point_text(r, p, total, &x);
        rc = mp_buf_printf(b, "%3zu  ", k + 1);
        rc = rc ? rc : put_cell(b, p->name, 32, false);
        rc = rc ? rc : mp_buf_putc(b, ' ');
        rc = rc ? rc : put_cell(b, p->sheet, wsheet, false);
        rc = rc ? rc
                : mp_buf_printf(b, " %7zu %10s %6s%% %9s %8s %8s", p->count, x.ms, x.pc, x.tf, x.tb,
                                x.ai);
        if (roof && !rc)
            rc = mp_buf_printf(b, " %7s  %s", x.pr, x.bound);
        rc = rc ? rc : mp_buf_putc(b, '\n');
        if (p->params && p->params[0] && !rc) {
            size_t w = text_width(p->params);
            rc = mp_buf_puts(b, "     ");
            rc = rc ? rc : put_cell(b, p->params, w > 100 ? 100 : w, false);
            rc = rc ? rc : mp_buf_putc(b, '\n');
        }
    }
    free(o);
    return rc;
}

int mp_report_summary_text(const struct mp_report *r, size_t top_n, struct mp_buf *out)
{
    if (!r || !out)
        return MP_EINVAL;
    int rc = summary_timeline(r, out);
    rc = rc ? rc : summary_cats(r, top_n, out);
    rc = rc ? rc : summary_ops(r, top_n, out);
    return rc;
}

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
        fmt_short(rf[i].tflops, tf, sizeof(tf));
        fmt_short(rf[i].ridge, ri, sizeof(ri));
        rc = mp_buf_printf(b, "<text class=\"roof-lab\" x=\"%d\" y=\"%.2f\">", RF_L + RF_PW + 8, y);
        rc = rc ? rc : put_esc(b, rf[i].key);
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
                if (!point_plottable(p))
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
        fmt_short(bw, s, sizeof(s));
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
    fmt_sig(p->tflops_s, tf, sizeof(tf));
    fmt_sig(p->tb_s, tb, sizeof(tb));
    fmt_sig(p->flops_per_byte, ai, sizeof(ai));
    fmt_fixed(p->kernel_us / 1e3, 3, ms, sizeof(ms));
    fmt_fixed(share * 100, 1, pc, sizeof(pc));
    int rc = mp_buf_printf(
        b, "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\" stroke=\"%s\">",
        px(g, p->flops_per_byte), py(g, p->tflops_s), rad, colour, colour);
    rc = rc ? rc : mp_buf_puts(b, "<title>");
    rc = rc ? rc : put_esc(b, p->name);
    rc = rc ? rc : mp_buf_puts(b, " [");
    rc = rc ? rc : put_esc(b, p->sheet);
    rc = rc ? rc : mp_buf_puts(b, "]\n");
    if (p->params && p->params[0] && !rc) {
        rc = put_esc(b, p->params);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    rc = rc ? rc
            : mp_buf_printf(b,
                            "%s TFLOP/s, %s TB/s, %s FLOP/B\nkernel time %s ms (%s%% of plotted), "
                            "%zu call%s",
                            tf, tb, ai, ms, pc, p->count, p->count == 1 ? "" : "s");
    if (r->has_arch && !rc) {
        const char *bound = point_bound(r, p);
        fmt_fixed(p->has_roofline ? p->pct_roofline : NAN, 1, pr, sizeof(pr));
        rc = mp_buf_printf(b, "\n%s%% of roofline, %s bound", pr, bound ? bound : "unknown");
        double pk = point_pct_peak(r, p);
        if (isfinite(pk) && !rc) {
            char ps[32];
            fmt_fixed(pk, 1, ps, sizeof(ps));
            rc = mp_buf_printf(b, " (%s%% of the data sheet's peak)", ps);
        }
        if (p->spec[0] && !rc) {
            rc = mp_buf_puts(b, " (");
            rc = rc ? rc : put_esc(b, p->spec);
            rc = rc ? rc : mp_buf_putc(b, ')');
        }
    }
    rc = rc ? rc : mp_buf_puts(b, "</title></circle>\n");
    return rc;
}

static int html_roofline(struct mp_buf *b, const struct mp_report *r, struct sheet_set *ss)
{
    double bw = 0;
    bool has_bw = arch_bw(r, &bw);
    struct roof rf[MP_ROOFLINE_ARCH_MAX_SPECS];
    size_t nrf = 0, nplot = 0;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY, ksum = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        const struct mp_report_point *p = &r->points[i];
        size_t si = sheet_index(ss, p->sheet, true);
        double tf;
        if (has_bw && point_peak(r, p, &tf)) {
            size_t j = 0;
            while (j < nrf && strcmp(rf[j].key, p->spec) != 0)
                j++;
            if (j == nrf && nrf < MP_ROOFLINE_ARCH_MAX_SPECS)
                rf[nrf++] = (struct roof){p->spec, tf, tf / bw};
        }
        if (!point_plottable(p))
            continue;
        ss->count[si]++;
        nplot++;
        xmin = fmin(xmin, p->flops_per_byte);
        xmax = fmax(xmax, p->flops_per_byte);
        ymin = fmin(ymin, p->tflops_s);
        ymax = fmax(ymax, p->tflops_s);
        ksum += finite_or0(p->kernel_us);
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
    struct ord *o = rc ? NULL : sorted_points(r);
    if (!o && !rc)
        rc = MP_ENOMEM;
    rc = rc ? rc : mp_buf_puts(b, "<g class=\"pts\">\n");
    for (size_t k = 0; k < r->n_points && !rc; k++) {
        const struct mp_report_point *p = &r->points[o[k].i];
        if (!point_plottable(p))
            continue;
        double share = ksum > 0 ? finite_or0(p->kernel_us) / ksum : 0;
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
        rc = rc ? rc : put_esc(b, ss->name[i]);
        rc = rc ? rc : mp_buf_printf(b, " (%zu)</text>\n", ss->count[i]);
    }
    if (r->has_arch && !rc) {
        ly += 34;
        rc = mp_buf_printf(b, "<text class=\"lgh\" x=\"%d\" y=\"%d\">Roofs: ", lx, ly);
        rc = rc ? rc : put_esc(b, r->arch.name);
        rc = rc ? rc : mp_buf_puts(b, "</text>\n");
        if (has_bw && !rc) {
            char s[32];
            fmt_short(bw, s, sizeof(s));
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
    fmt_fixed(tl->total / 1e3, 3, tot, sizeof(tot));
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
        fmt_fixed(seg[i].us / 1e3, 3, ms, sizeof(ms));
        fmt_fixed(pct_of(seg[i].us, tl->total), 1, pc, sizeof(pc));
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
    fmt_fixed(tl->busy / 1e3, 3, busy, sizeof(busy));
    fmt_fixed(pct_of(tl->busy, tl->total), 1, bp, sizeof(bp));
    fmt_fixed(tl->total_comm / 1e3, 3, comm, sizeof(comm));
    fmt_fixed(tl->total_memcpy / 1e3, 3, mc, sizeof(mc));
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
    struct ord *o = sorted_cats(r);
    if (!o)
        return MP_ENOMEM;
    double total = ops_total_us(r) / 1e3, rest = 0, maxv = 0;
    size_t shown = r->n_cats > VIEW_TOP_CATS_HTML ? VIEW_TOP_CATS_HTML : r->n_cats, rest_n = 0;
    for (size_t i = shown; i < r->n_cats; i++) {
        rest += finite_or0(r->cats[o[i].i].ms);
        rest_n++;
    }
    for (size_t i = 0; i < shown; i++)
        maxv = fmax(maxv, finite_or0(r->cats[o[i].i].ms));
    maxv = fmax(maxv, rest);
    size_t rows = shown + (rest_n ? 1 : 0);
    char tot[32];
    fmt_fixed(total, 3, tot, sizeof(tot));
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
        double ms = is_rest ? rest : finite_or0(c->ms);
        size_t count = is_rest ? rest_n : c->count;
        double bw = maxv > 0 ? ms / maxv * 560 : 0, y = 6 + (double)i * 26;
        char v[32], pc[32];
        fmt_fixed(ms, 3, v, sizeof(v));
        fmt_fixed(pct_of(ms, total), 1, pc, sizeof(pc));
        rc = mp_buf_printf(b, "<text x=\"222\" y=\"%.2f\" text-anchor=\"end\">", y + 15);
        if (is_rest)
            rc = rc ? rc : mp_buf_printf(b, "(%zu more)", rest_n);
        else
            rc = rc ? rc : put_esc(b, c->name);
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
    struct ord *o = sorted_points(r);
    if (!o)
        return MP_ENOMEM;
    size_t shown = r->n_points > VIEW_TOP_OPS_HTML ? VIEW_TOP_OPS_HTML : r->n_points;
    double total = ops_total_us(r);
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
        struct point_text x;
        point_text(r, p, total, &x);
        bool has_params = p->params && p->params[0];
        rc = mp_buf_printf(b, "<tr%s><td class=\"n\">%zu</td><td class=\"op\">",
                           has_params ? " class=\"hp\"" : "", k + 1);
        rc = rc ? rc : put_esc_wbr(b, p->name);
        rc = rc ? rc
                : mp_buf_printf(b,
                                "</td><td class=\"sh\"><span class=\"sw\" "
                                "style=\"background:%s\"></span>",
                                palette[sheet_index(ss, p->sheet, false) % N_PALETTE]);
        rc = rc ? rc : put_esc(b, p->sheet);
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
            rc = rc ? rc : put_esc(b, p->params);
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
    rc = rc ? rc : put_esc(b, title);
    rc = rc ? rc : mp_buf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", html_css);
    rc = rc ? rc : mp_buf_puts(b, "<h1>magpie trace report</h1>\n<p class=\"meta\">");
    rc = rc ? rc : put_esc(b, title);
    rc = rc ? rc
            : mp_buf_printf(b, " &middot; %zu events, %zu GPU events (%zu linked)", r->events,
                            r->gpu_events, r->gpu_linked);
    if (r->has_arch && !rc) {
        double bw;
        rc = mp_buf_puts(b, " &middot; GPU architecture ");
        rc = rc ? rc : put_esc(b, r->arch.name);
        if (arch_bw(r, &bw) && !rc) {
            char s[32];
            fmt_short(bw, s, sizeof(s));
            rc = mp_buf_printf(b, " (%s TB/s)", s);
        }
        rc = rc ? rc : put_origin(b, r, true);
    }
    rc = rc ? rc : mp_buf_puts(b, "</p>\n");
    rc = rc ? rc : html_timeline(b, r);
    rc = rc ? rc : html_roofline(b, r, &ss);
    rc = rc ? rc : html_cats(b, r);
    rc = rc ? rc : html_top_ops(b, r, &ss);
    rc = rc ? rc : mp_buf_puts(b, "<footer>Written by magpie " MP_VERSION "; sheets: ");
    for (size_t i = 0; i < r->n && !rc; i++) {
        rc = i ? mp_buf_puts(b, ", ") : 0;
        rc = rc ? rc : put_esc(b, r->sheets[i].name);
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

/* ------------------------------------------------------------------ xlsx */

/* A plain decimal number the way pandas writes one ("12", "-0.5", "1e-06",
 * "1.5E+10"); "nan", "inf", hex and padded text stay text. */
static bool csv_number(const char *s, double *v)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return false;
    errno = 0;
    *v = strtod(s, NULL);
    return isfinite(*v);
}

/* Excel sheet title of a sheet name: forbidden characters []:*?/\ become
 * '_', at most 31 characters, unique (case-insensitive) among used[]. */
static void xlsx_title(const char *name, char (*used)[128], size_t n_used, char *out, size_t cap)
{
    char base[128];
    size_t bl = 0, chars = 0;
    const unsigned char *p = (const unsigned char *)name;
    while (*p && chars < 31 && bl + 4 < sizeof(base)) {
        size_t k = mp_utf8_len(p, SIZE_MAX);
        if (k == 0 || (k == 1 && (*p < 0x20 || strchr("[]:*?/\\", *p)))) {
            base[bl++] = '_';
            p++;
        } else {
            memcpy(base + bl, p, k);
            bl += k;
            p += k;
        }
        chars++;
    }
    base[bl] = '\0';
    if (bl == 0)
        snprintf(base, sizeof(base), "Sheet");
    if (base[0] == '\'')
        base[0] = '_';
    if (bl && base[bl - 1] == '\'')
        base[bl - 1] = '_';
    snprintf(out, cap, "%s", base);
    for (unsigned k = 2;; k++) {
        bool clash = false;
        for (size_t i = 0; i < n_used && !clash; i++)
            clash = strcasecmp(used[i], out) == 0;
        if (!clash)
            return;
        char suf[16];
        int sl = snprintf(suf, sizeof(suf), "~%u", k);
        /* cut the base to leave room for the suffix within 31 characters */
        size_t keep = 0, c = 0;
        const unsigned char *q = (const unsigned char *)base;
        while (q[keep] && c + (size_t)sl < 31) {
            size_t n = mp_utf8_len(q + keep, SIZE_MAX);
            keep += n ? n : 1;
            c++;
        }
        snprintf(out, cap, "%.*s%s", (int)keep, base, suf);
    }
}

/* Cuts s (in place) to at most XLSX_STR_MAX bytes at a UTF-8 boundary. */
static void xlsx_cut(char *s)
{
    size_t n = strlen(s);
    if (n <= XLSX_STR_MAX)
        return;
    n = XLSX_STR_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    s[n] = '\0';
}

static int xlsx_sheet(lxw_workbook *wb, lxw_format *bold, const struct mp_report_sheet *sh,
                      const char *title, struct mp_diag *d)
{
    lxw_worksheet *ws = workbook_add_worksheet(wb, title);
    if (!ws)
        return mp_diag_set(d, MP_EINVAL, "cannot add worksheet '%s'", title);
    const char *p = sh->csv.data ? sh->csv.data : "", *end = p + sh->csv.len;
    struct mp_csv_rec rec;
    memset(&rec, 0, sizeof(rec));
    mp_buf_init(&rec.text, 0);
    int rc = 0;
    lxw_error err = LXW_NO_ERROR;
    lxw_row_t row = 0;
    for (;;) {
        int k = mp_csv_next(&p, end, &rec, LXW_COL_MAX);
        if (k <= 0) {
            rc = k;
            break;
        }
        if (row >= LXW_ROW_MAX) {
            rc = mp_diag_set(d, MP_EUNSUP, "sheet '%s' has more than %d rows, Excel's limit",
                             sh->name, LXW_ROW_MAX);
            break;
        }
        for (size_t c = 0; c < rec.n && !err; c++) {
            char *cell = rec.text.data + rec.off[c];
            double v;
            if (!cell[0] && row > 0) {
                continue; /* missing value: an empty cell, as pandas writes NaN */
            } else if (row == 0) {
                double wdt = (double)text_width(cell) + 2;
                err = worksheet_set_column(ws, (lxw_col_t)c, (lxw_col_t)c,
                                           wdt < 10   ? 10
                                           : wdt > 60 ? 60
                                                      : wdt,
                                           NULL);
                xlsx_cut(cell);
                if (cell[0] && !err)
                    err = worksheet_write_string(ws, row, (lxw_col_t)c, cell, bold);
            } else if (csv_number(cell, &v)) {
                err = worksheet_write_number(ws, row, (lxw_col_t)c, v, NULL);
            } else if (strcmp(cell, "True") == 0 || strcmp(cell, "False") == 0) {
                err = worksheet_write_boolean(ws, row, (lxw_col_t)c, cell[0] == 'T', NULL);
            } else {
                xlsx_cut(cell);
                err = worksheet_write_string(ws, row, (lxw_col_t)c, cell, NULL);
            }
        }
        if (err)
            break;
        row++;
    }
    if (rc == MP_EUNSUP && !d->code)
        rc = mp_diag_set(d, rc, "sheet '%s' has more than %d columns, Excel's limit", sh->name,
                         LXW_COL_MAX);
    else if (rc && rc != MP_EUNSUP)
        rc = mp_diag_set(d, rc, "cannot read sheet '%s' back (%s)", sh->name, mp_strerror(rc));
    if (!rc && err)
        rc = mp_diag_set(d, MP_EIO, "cannot write sheet '%s' to the workbook: %s", sh->name,
                         lxw_strerror(err));
    if (!rc && row > 1)
        worksheet_freeze_panes(ws, 1, 0);
    mp_buf_fini(&rec.text);
    free(rec.off);
    return rc;
}

int mp_report_write_xlsx(const struct mp_report *r, const char *path, struct mp_diag *d)
{
    struct mp_diag dummy;
    if (!d) {
        mp_diag_clear(&dummy);
        d = &dummy;
    }
    if (!r || !path || !path[0])
        return mp_diag_set(d, MP_EINVAL, "no report or no path for the xlsx workbook");
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    char(*used)[128] = calloc(r->n ? r->n : 1, sizeof(*used));
    if (!tmp || !used) {
        free(tmp);
        free(used);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    /* the temp file is in the target's directory so that rename is atomic */
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        free(used);
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "cannot create a temporary file in its directory: %s",
                           strerror(e));
    }
    close(fd);
    int rc = 0;
    lxw_workbook_options wo = {.constant_memory = LXW_TRUE, .tmpdir = NULL, .use_zip64 = LXW_FALSE};
    lxw_workbook *wb = workbook_new_opt(tmp, &wo);
    lxw_format *bold = wb ? workbook_add_format(wb) : NULL;
    if (!wb || !bold)
        rc = mp_diag_set(d, MP_ENOMEM, "cannot start the workbook");
    else
        format_set_bold(bold);
    for (size_t i = 0; i < r->n && !rc; i++) {
        xlsx_title(r->sheets[i].name, used, i, used[i], sizeof(used[i]));
        rc = xlsx_sheet(wb, bold, &r->sheets[i], used[i], d);
    }
    if (wb) {
        lxw_error err = workbook_close(wb); /* frees wb even on error */
        if (err && !rc)
            rc = mp_diag_set(d, MP_EIO, "cannot write the workbook: %s", lxw_strerror(err));
    }
    if (!rc) {
        fd = open(tmp, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL) || rename(tmp, path) != 0) {
            int e = errno;
            mp_diag_set_file(d, path);
            rc = mp_diag_set(d, MP_EIO, "cannot write the workbook: %s", strerror(e));
        }
        if (fd >= 0)
            close(fd);
    }
    if (rc) {
        if (!d->file[0])
            mp_diag_set_file(d, path);
        unlink(tmp);
    }
    free(tmp);
    free(used);
    return rc;
}
