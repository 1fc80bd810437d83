/* Human views of a TraceLens-compatible report (issue 3, items 4 and 6):
 * the terminal summary here, report.html (one self-contained page, inline
 * CSS and SVG: roofline, time by category, GPU busy/idle, top ops) in
 * views_html.c and the xlsx workbook of the CSV sheets (libxlsxwriter) in
 * views_xlsx.c; what they share is declared in views_int.h.
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

#include <magpie/tracelens.h>

#include "tracelens_int.h"
#include "views_int.h"

/* ---------------------------------------------------------------- numbers */

/* Value rounded so that it never prints as "-0.000". */
static double unneg(double v, int prec)
{
    return fabs(v) < 0.5 * pow(10, -prec) ? 0.0 : v;
}

void tl_view_fmt_fixed(double v, int prec, char *s, size_t n)
{
    if (!isfinite(v))
        snprintf(s, n, "-");
    else
        snprintf(s, n, "%.*f", prec, unneg(v, prec));
}

/* Four significant digits without an exponent between 1e-4 and 1e6:
 * "760.6", "23.34", "0.5809"; "1.234e-05" outside. */
void tl_view_fmt_sig(double v, char *s, size_t n)
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

/* tl_view_fmt_sig without trailing zeros: "989", "4.8", "206", "102.9". */
void tl_view_fmt_short(double v, char *s, size_t n)
{
    tl_view_fmt_sig(v, s, n);
    if (!strchr(s, '.') || strchr(s, 'e'))
        return;
    size_t l = strlen(s);
    while (l > 0 && s[l - 1] == '0')
        s[--l] = '\0';
    if (l > 0 && s[l - 1] == '.')
        s[--l] = '\0';
}

double tl_view_pct_of(double v, double total)
{
    return total > 0 && isfinite(v) ? v / total * 100 : NAN;
}

/* ----------------------------------------------------------------- text */

/* Code points of s (invalid bytes count one each). */
size_t tl_view_text_width(const char *s)
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
    size_t w = tl_view_text_width(s), keep = w <= width ? w : (width > 3 ? width - 3 : width);
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

int tl_view_put_esc(struct mp_buf *b, const char *s)
{
    return s ? put_esc_n(b, s, strlen(s)) : 0;
}

/* tl_view_put_esc with a line-break opportunity (<wbr>) after each '_', ':', '.'
 * and ',' so that long op names wrap at their parts. */
int tl_view_put_esc_wbr(struct mp_buf *b, const char *s)
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

/* Descending key, then name, then index: a total order. */
static int cmp_ord(const void *a, const void *b)
{
    const struct tl_view_ord *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    if (c)
        return c;
    return x->i < y->i ? -1 : x->i > y->i;
}

double tl_view_finite_or0(double v)
{
    return isfinite(v) ? v : 0;
}

/* The categories by time, or the points by kernel time (descending); NULL
 * on allocation failure. */
static struct tl_view_ord *sorted_items(const struct mp_report *r, bool cats)
{
    size_t n = cats ? r->n_cats : r->n_points;
    struct tl_view_ord *o = calloc(n ? n : 1, sizeof(*o));
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        o[i] = cats ? (struct tl_view_ord){tl_view_finite_or0(r->cats[i].ms), r->cats[i].name, i}
                    : (struct tl_view_ord){tl_view_finite_or0(r->points[i].kernel_us),
                                           r->points[i].name, i};
    qsort(o, n, sizeof(*o), cmp_ord);
    return o;
}

struct tl_view_ord *tl_view_sorted_points(const struct mp_report *r)
{
    return sorted_items(r, false);
}

struct tl_view_ord *tl_view_sorted_cats(const struct mp_report *r)
{
    return sorted_items(r, true);
}

/* Total op kernel time in µs: the categories' sum (every launcher), or the
 * points' sum when there are no categories. */
double tl_view_ops_total_us(const struct mp_report *r)
{
    double t = 0;
    for (size_t i = 0; i < r->n_cats; i++)
        t += tl_view_finite_or0(r->cats[i].ms) * 1e3;
    if (t > 0)
        return t;
    for (size_t i = 0; i < r->n_points; i++)
        t += tl_view_finite_or0(r->points[i].kernel_us);
    return t;
}

bool tl_view_arch_bw(const struct mp_report *r, double *tb_s)
{
    if (!r->has_arch || !r->arch.has_mem_bw || !(r->arch.mem_bw_gbps > 0) ||
        !isfinite(r->arch.mem_bw_gbps))
        return false;
    *tb_s = r->arch.mem_bw_gbps / 1e3;
    return true;
}

/* Peak TFLOP/s of the point's compute spec under the report's arch. */
bool tl_view_point_peak(const struct mp_report *r, const struct mp_report_point *p, double *tf)
{
    return r->has_arch && p->spec[0] && mp_roofline_arch_tflops(&r->arch, p->spec, tf) && *tf > 0 &&
           isfinite(*tf);
}

/* "compute" / "memory" the way TraceLens decides (compute time >= memory
 * time, i.e. FLOP/byte >= the ridge point), NULL when unknown. */
const char *tl_view_point_bound(const struct mp_report *r, const struct mp_report_point *p)
{
    double bw, tf;
    if (!p->has_ai || !isfinite(p->flops_per_byte) || !tl_view_arch_bw(r, &bw) ||
        !tl_view_point_peak(r, p, &tf))
        return NULL;
    return p->flops_per_byte >= tf / bw ? "compute" : "memory";
}

/* Percent of the data sheet's peak of a point when the report's ceiling
 * was measured (magpie gpu calibrate); NAN otherwise. */
double tl_view_point_pct_peak(const struct mp_report *r, const struct mp_report_point *p)
{
    struct mp_roofline_arch peak;
    if (!r->has_arch || !r->arch.calibrated || !p->has_roofline || !p->has_ai ||
        mp_roofline_arch_datasheet(r->arch.name, &peak) != 0)
        return NAN;
    return p->pct_roofline * mp_roofline_peak_ratio(&r->arch, &peak, p->spec, p->flops_per_byte);
}

/* " (measured ceiling: ...)" after the arch name of a calibrated report */
int tl_view_put_origin(struct mp_buf *b, const struct mp_report *r, bool html)
{
    if (!r->has_arch || !r->arch.calibrated)
        return 0;
    int rc = mp_buf_puts(b, html ? " &mdash; measured ceiling, " : ", measured ceiling: ");
    return rc ? rc : html ? tl_view_put_esc(b, r->arch.origin) : mp_buf_puts(b, r->arch.origin);
}

bool tl_view_point_plottable(const struct mp_report_point *p)
{
    return p->has_ai && isfinite(p->flops_per_byte) && p->flops_per_byte > 0 &&
           isfinite(p->tflops_s) && p->tflops_s > 0;
}

void tl_view_point_text(const struct mp_report *r, const struct mp_report_point *p, double total,
                        struct tl_view_point_text *x)
{
    tl_view_fmt_fixed(p->kernel_us / 1e3, 3, x->ms, sizeof(x->ms));
    tl_view_fmt_fixed(tl_view_pct_of(p->kernel_us, total), 1, x->pc, sizeof(x->pc));
    tl_view_fmt_sig(p->tflops_s, x->tf, sizeof(x->tf));
    tl_view_fmt_sig(p->tb_s, x->tb, sizeof(x->tb));
    tl_view_fmt_sig(p->has_ai ? p->flops_per_byte : NAN, x->ai, sizeof(x->ai));
    tl_view_fmt_fixed(p->has_roofline ? p->pct_roofline : NAN, 1, x->pr, sizeof(x->pr));
    x->bound = tl_view_point_bound(r, p);
    x->bound = x->bound ? x->bound : "-";
}

/* ------------------------------------------------------ terminal summary */

static int sum_row(struct mp_buf *b, const char *label, double us, double total_us)
{
    char ms[32], pc[32];
    tl_view_fmt_fixed(us / 1e3, 3, ms, sizeof(ms));
    tl_view_fmt_fixed(tl_view_pct_of(us, total_us), 1, pc, sizeof(pc));
    int rc = put_cell(b, label, 18, false);
    return rc ? rc : mp_buf_printf(b, " %12s ms %6s%%\n", ms, pc);
}

static int summary_timeline(const struct mp_report *r, struct mp_buf *b)
{
    const struct mp_gpu_timeline *tl = &r->timeline;
    char tot[32];
    tl_view_fmt_fixed(tl->total / 1e3, 3, tot, sizeof(tot));
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
                    struct tl_view_ord **o, size_t *shown, size_t *width)
{
    size_t n = cats ? r->n_cats : r->n_points;
    *o = sorted_items(r, cats);
    if (!*o)
        return MP_ENOMEM;
    *shown = top_n && top_n < n ? top_n : n;
    *width = lo;
    for (size_t i = 0; i < *shown; i++) {
        const char *s = cats ? r->cats[(*o)[i].i].name : r->points[(*o)[i].i].sheet;
        size_t w = tl_view_text_width(s ? s : "");
        *width = w > *width ? w : *width;
    }
    *width = *width > hi ? hi : *width;
    return 0;
}

static int summary_cats(const struct mp_report *r, size_t top_n, struct mp_buf *b)
{
    if (r->n_cats == 0)
        return mp_buf_puts(b, "\nTime by category: none (no CPU ops launching GPU kernels)\n");
    struct tl_view_ord *o;
    size_t shown, wname;
    if (top_rows(r, true, top_n, 8, 32, &o, &shown, &wname))
        return MP_ENOMEM;
    double total = tl_view_ops_total_us(r);
    char tot[32];
    tl_view_fmt_fixed(total / 1e3, 3, tot, sizeof(tot));
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
            rest += tl_view_finite_or0(c->ms);
            rest_n++;
            continue;
        }
        char ms[32], pc[32];
        tl_view_fmt_fixed(c->ms, 3, ms, sizeof(ms));
        tl_view_fmt_fixed(tl_view_pct_of(c->ms * 1e3, total), 1, pc, sizeof(pc));
        rc = mp_buf_puts(b, "  ");
        rc = rc ? rc : put_cell(b, c->name, wname, false);
        rc = rc ? rc : mp_buf_printf(b, " %12s %6s%% %8zu\n", ms, pc, c->count);
    }
    if (rest_n && !rc) {
        char ms[32], pc[32];
        tl_view_fmt_fixed(rest, 3, ms, sizeof(ms));
        tl_view_fmt_fixed(tl_view_pct_of(rest * 1e3, total), 1, pc, sizeof(pc));
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
    struct tl_view_ord *o;
    size_t shown, wsheet;
    if (top_rows(r, false, top_n, 5, 20, &o, &shown, &wsheet))
        return MP_ENOMEM;
    double total = tl_view_ops_total_us(r), bw = 0;
    bool roof = r->has_arch;
    int rc = mp_buf_printf(b, "\nTop %zu of %zu op shapes by kernel time", shown, r->n_points);
    if (roof && !rc) {
        rc = mp_buf_printf(b, " (roofline: %s", r->arch.name);
        if (tl_view_arch_bw(r, &bw) && !rc) {
            char s[32];
            tl_view_fmt_fixed(bw, 2, s, sizeof(s));
            rc = mp_buf_printf(b, ", %s TB/s", s);
        }
        rc = rc ? rc : tl_view_put_origin(b, r, false);
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
        struct tl_view_point_text x;
        tl_view_point_text(r, p, total, &x);
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
            size_t w = tl_view_text_width(p->params);
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
