/* The pieces of the report views that views.c (the terminal summary),
 * views_html.c (report.html) and views_xlsx.c (the xlsx workbook) share:
 * locale-free number formats, HTML escaping, the total orders of the
 * categories and the points, and the figures of a point. Private to the
 * tracelens module. */
#ifndef MAGPIE_TL_VIEWS_INT_H
#define MAGPIE_TL_VIEWS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/tracelens.h>

struct tl_view_ord {
    double key;
    const char *name;
    size_t i;
};

/* The figures of a top-ops row as the views print them. */
struct tl_view_point_text {
    char ms[32], pc[32], tf[32], tb[32], ai[32], pr[32];
    const char *bound; /* "compute" / "memory", "-" when unknown */
};

void tl_view_fmt_fixed(double v, int prec, char *s, size_t n);

/* Four significant digits without an exponent between 1e-4 and 1e6:
 * "760.6", "23.34", "0.5809"; "1.234e-05" outside. */
void tl_view_fmt_sig(double v, char *s, size_t n);

/* tl_view_fmt_sig without trailing zeros: "989", "4.8", "206", "102.9". */
void tl_view_fmt_short(double v, char *s, size_t n);

double tl_view_pct_of(double v, double total);

/* Code points of s (invalid bytes count one each). */
size_t tl_view_text_width(const char *s);

/* tl_view_put_esc with a line-break opportunity (<wbr>) after each '_', ':', '.'
 * and ',' so that long op names wrap at their parts. */
int tl_view_put_esc_wbr(struct mp_buf *b, const char *s);

int tl_view_put_esc(struct mp_buf *b, const char *s);

double tl_view_finite_or0(double v);

struct tl_view_ord *tl_view_sorted_points(const struct mp_report *r);

struct tl_view_ord *tl_view_sorted_cats(const struct mp_report *r);

/* Total op kernel time in µs: the categories' sum (every launcher), or the
 * points' sum when there are no categories. */
double tl_view_ops_total_us(const struct mp_report *r);

bool tl_view_arch_bw(const struct mp_report *r, double *tb_s);

/* Peak TFLOP/s of the point's compute spec under the report's arch. */
bool tl_view_point_peak(const struct mp_report *r, const struct mp_report_point *p, double *tf);

/* "compute" / "memory" the way TraceLens decides (compute time >= memory
 * time, i.e. FLOP/byte >= the ridge point), NULL when unknown. */
const char *tl_view_point_bound(const struct mp_report *r, const struct mp_report_point *p);

/* Percent of the data sheet's peak of a point when the report's ceiling
 * was measured (magpie gpu calibrate); NAN otherwise. */
double tl_view_point_pct_peak(const struct mp_report *r, const struct mp_report_point *p);

/* " (measured ceiling: ...)" after the arch name of a calibrated report */
int tl_view_put_origin(struct mp_buf *b, const struct mp_report *r, bool html);

bool tl_view_point_plottable(const struct mp_report_point *p);

void tl_view_point_text(const struct mp_report *r, const struct mp_report_point *p, double total,
                        struct tl_view_point_text *x);

#endif
