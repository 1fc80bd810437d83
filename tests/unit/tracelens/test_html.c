/* report.html: well-formed markup, one circle per plotted op shape, roofs
 * only with an arch, escaping, no NaN/inf text, the same bytes for the same
 * report. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <magpie/tracelens.h>

#include "area.h"
#include "helpers.h"

static bool plottable(const struct mp_report_point *p)
{
    return p->has_ai && isfinite(p->flops_per_byte) && p->flops_per_byte > 0 &&
           isfinite(p->tflops_s) && p->tflops_s > 0;
}

/* Tag balance of an HTML document: every element is closed in order, except
 * <meta>, <wbr> and self-closing "/>" tags; <style> content is skipped. A raw '<'
 * in text (unescaped) shows up as an unknown or unbalanced tag. Returns
 * NULL when well-formed, else a description. */
static const char *check_markup(const char *s, char *why, size_t whylen)
{
    char stack[64][16];
    int depth = 0;
    const char *p = s;
    while ((p = strchr(p, '<')) != NULL) {
        if (strncmp(p, "<!DOCTYPE", 9) == 0) {
            p = strchr(p, '>');
            if (!p)
                return "unterminated doctype";
            continue;
        }
        bool closing = p[1] == '/';
        const char *n = p + 1 + closing;
        size_t nl = 0;
        while (isalnum((unsigned char)n[nl]))
            nl++;
        if (nl == 0 || nl >= 16) {
            snprintf(why, whylen, "bad tag at byte %ld: %.20s", (long)(p - s), p);
            return why;
        }
        const char *e = strchr(n, '>');
        if (!e)
            return "unterminated tag";
        char name[16];
        memcpy(name, n, nl);
        name[nl] = '\0';
        if (closing) {
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0) {
                snprintf(why, whylen, "</%s> at byte %ld closes <%s>", name, (long)(p - s),
                         depth ? stack[depth - 1] : "(nothing)");
                return why;
            }
            depth--;
        } else if (e[-1] != '/' && strcmp(name, "meta") != 0 && strcmp(name, "wbr") != 0) {
            if (depth == 64)
                return "too deep";
            snprintf(stack[depth++], 16, "%s", name);
            if (strcmp(name, "style") == 0) {
                e = strstr(e, "</style>");
                if (!e)
                    return "unterminated style";
                e--;
            }
        }
        p = e + 1;
    }
    if (depth) {
        snprintf(why, whylen, "<%s> never closed", stack[depth - 1]);
        return why;
    }
    return NULL;
}

static void check_html(const char *html, const struct mp_report *r)
{
    char why[160];
    const char *bad = check_markup(html, why, sizeof(why));
    if (bad)
        fail_msg("markup: %s", bad);
    assert_int_equal(strncmp(html, "<!DOCTYPE html>\n", 16), 0);
    assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
    assert_int_equal(count(html, "<svg"), r->n_cats ? 3 : 2);
    assert_false(has_nonfinite_text(html));
    /* self-contained: no script, no external resource */
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "href="));
    assert_null(strstr(html, "url(http"));
    assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    size_t plotted = 0;
    for (size_t i = 0; i < r->n_points; i++)
        plotted += plottable(&r->points[i]);
    assert_int_equal(count(html, "<circle class=\"pt\""), plotted);
}

/* Distinct compute specs of the points that the report's arch rates. */
static size_t n_specs(const struct mp_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        double tf;
        if (!r->points[i].spec[0] || !mp_roofline_arch_tflops(&r->arch, r->points[i].spec, &tf))
            continue;
        size_t j = 0;
        while (j < i && strcmp(r->points[j].spec, r->points[i].spec) != 0)
            j++;
        n += j == i;
    }
    return n;
}

void test_html(void **state)
{
    (void)state;
    if (!mixtral)
        skip();
    char path[128], path2[128];
    snprintf(path, sizeof(path), "%s/report.html", tmpdir);
    snprintf(path2, sizeof(path2), "%s/report2.html", tmpdir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_report_write_html(mixtral, path, "mixtral <&> \"trace\".json.gz", &d), 0);
    assert_int_equal(mp_report_write_html(mixtral, path2, "mixtral <&> \"trace\".json.gz", &d), 0);
    size_t n = 0, n2 = 0;
    char *html = slurp(path, &n), *html2 = slurp(path2, &n2);
    assert_non_null(html);
    assert_non_null(html2);
    assert_int_equal(n, n2); /* same report, same bytes */
    assert_memory_equal(html, html2, n);
    check_html(html, mixtral);

    assert_non_null(strstr(html, "<title>magpie report: mixtral &lt;&amp;&gt; "
                                 "&quot;trace&quot;.json.gz</title>"));
    /* roofs: memory, and one compute roof per spec among the points */
    assert_int_equal(count(html, "<line class=\"roof-mem\""), 2); /* plot + legend */
    assert_int_equal(count(html, "<line class=\"roof\""), n_specs(mixtral) + 1);
    assert_true(n_specs(mixtral) >= 1);
    assert_non_null(strstr(html, ">matrix_bf16 989 TFLOP/s</text>"));
    assert_non_null(strstr(html, ">ridge 206 FLOP/B</text>"));
    assert_non_null(strstr(html, ">memory 4.8 TB/s</text>"));
    assert_non_null(strstr(html, "Arithmetic intensity (FLOP/byte)"));
    assert_non_null(strstr(html, "Achieved TFLOP/s"));
    assert_non_null(strstr(html, "<th class=\"n\">% roofline</th>"));
    /* a tooltip: name, params, throughput, time, roofline */
    assert_non_null(strstr(html, "<title>aten::mm [GEMM]\nB=1 M=4096 N=32000 K=2048"));
    assert_non_null(strstr(html, "760.6 TFLOP/s, 0.5809 TB/s, 1309 FLOP/B\nkernel time 0.706 ms"));
    assert_non_null(strstr(html, "76.9% of roofline, compute bound (matrix_bf16)</title>"));
    /* category bars and the busy/idle bar */
    assert_non_null(strstr(html, ">28.647 ms (53.9%)</text>"));
    assert_non_null(strstr(html, "<title>idle: 1457.977 ms (96.5%)</title>"));
    free(html);
    free(html2);

    /* the same report without an arch: no roofs, a note saying why */
    mixtral->has_arch = false;
    assert_int_equal(mp_report_write_html(mixtral, path, NULL, &d), 0);
    mixtral->has_arch = true;
    html = slurp(path, NULL);
    assert_non_null(html);
    check_html(html, mixtral);
    assert_null(strstr(html, "<line class=\"roof-mem\""));
    assert_null(strstr(html, "<line class=\"roof\""));
    assert_null(strstr(html, "% roofline"));
    assert_non_null(strstr(html, "No GPU architecture was given"));
    free(html);
}

/* A hand-made report: hostile text, missing values, no categories. */
void test_html_synthetic(void **state)
{
    (void)state;
    char name0[] = "op<script>alert('x')</script>&", params0[] = "M=1 \xff\xfe dtype=\"bf16\"";
    char name1[] = "aten::nan_to_num", params1[] = "";
    char name2[] = "no_ai", params2[] = "x=1";
    struct mp_report_point pts[3];
    memset(pts, 0, sizeof(pts));
    pts[0] = (struct mp_report_point){.name = name0,
                                      .params = params0,
                                      .has_ai = true,
                                      .flops_per_byte = 3,
                                      .tflops_s = 1.5,
                                      .tb_s = 0.5,
                                      .kernel_us = 100,
                                      .count = 2,
                                      .has_roofline = true,
                                      .pct_roofline = NAN};
    snprintf(pts[0].sheet, sizeof(pts[0].sheet), "Weird&Sheet");
    snprintf(pts[0].spec, sizeof(pts[0].spec), "matrix_bf16");
    pts[1] = (struct mp_report_point){.name = name1,
                                      .params = params1,
                                      .has_ai = true,
                                      .flops_per_byte = 0.25,
                                      .tflops_s = 0.001,
                                      .tb_s = NAN,
                                      .kernel_us = 5,
                                      .count = 1};
    snprintf(pts[1].sheet, sizeof(pts[1].sheet), "UnaryElementwise");
    snprintf(pts[1].spec, sizeof(pts[1].spec), "vector_bf16");
    pts[2] = (struct mp_report_point){.name = name2,
                                      .params = params2,
                                      .has_ai = false,
                                      .flops_per_byte = NAN,
                                      .tflops_s = INFINITY,
                                      .tb_s = NAN,
                                      .kernel_us = NAN,
                                      .count = 1};
    snprintf(pts[2].sheet, sizeof(pts[2].sheet), "Other");
    struct mp_report r;
    memset(&r, 0, sizeof(r));
    r.points = pts;
    r.n_points = 3;
    r.timeline = (struct mp_gpu_timeline){.computation = 80, .busy = 80, .idle = 20, .total = 100};
    assert_int_equal(mp_roofline_arch_builtin("MI300X", &r.arch), 0);
    r.has_arch = true;

    char path[128];
    snprintf(path, sizeof(path), "%s/synthetic.html", tmpdir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_report_write_html(&r, path, "t", &d), 0);
    char *html = slurp(path, NULL);
    assert_non_null(html);
    check_html(html, &r);
    assert_int_equal(count(html, "<circle class=\"pt\""), 2);
    assert_non_null(strstr(html, "op&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"));
    assert_non_null(strstr(html, "M=1 \xEF\xBF\xBD\xEF\xBF\xBD dtype=&quot;bf16&quot;"));
    assert_non_null(strstr(html, "Weird&amp;Sheet"));
    assert_non_null(strstr(html, "1 of 3 op shapes are not plotted"));
    assert_non_null(strstr(html, "No CPU ops launching GPU kernels"));
    /* two specs among the points, both in MI300X: two compute roofs */
    assert_int_equal(count(html, "<line class=\"roof\""), 2 + 1);
    free(html);

    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_report_summary_text(&r, 0, &b), 0);
    assert_false(has_nonfinite_text(mp_buf_cstr(&b)));
    assert_non_null(strstr(mp_buf_cstr(&b), "Time by category: none"));
    assert_null(strchr(mp_buf_cstr(&b), '\xff'));
    mp_buf_fini(&b);

    /* an empty report still renders */
    struct mp_report e;
    memset(&e, 0, sizeof(e));
    assert_int_equal(mp_report_write_html(&e, path, NULL, &d), 0);
    html = slurp(path, NULL);
    assert_non_null(html);
    check_html(html, &e);
    assert_non_null(strstr(html, "no op shape with a known FLOP/byte"));
    free(html);

    /* unwritable path: an error naming the file */
    assert_int_equal(mp_report_write_html(&e, "/nonexistent-dir/x/report.html", NULL, &d), MP_EIO);
    assert_non_null(strstr(d.file, "report.html"));
}
