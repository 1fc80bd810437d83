/* Unit tests for the human views of a report (src/tracelens/views*.c): the
 * terminal summary, report.html (well-formed markup, one circle per plotted
 * op shape, roofs only with an arch, escaping, no NaN/inf text, same bytes
 * for the same report) and the xlsx workbook (a zip with the sheets under
 * Excel-safe names, cells read back from the CSV text). The real report is
 * built from the shared H200 mixtral trace; tests that need it skip when
 * ../shared is absent. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/report.h>

static char tmpdir[64];
static struct mp_report *mixtral; /* built once, NULL when the trace is absent */

static char *trace_path(void)
{
    const char *sh = getenv("MP_SHARED");
    static char p[1024];
    snprintf(p, sizeof(p), "%s/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz",
             sh ? sh : "../shared");
    return access(p, R_OK) == 0 ? p : NULL;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp_views_XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    const char *path = trace_path();
    if (!path)
        return 0;
    struct mp_roofline_arch arch;
    if (mp_roofline_arch_builtin("H200", &arch) != 0)
        return -1;
    struct mp_report_opts o;
    mp_report_opts_defaults(&o);
    o.arch = &arch;
    struct mp_diag d;
    mp_diag_clear(&d);
    return mp_report_build(path, &o, &mixtral, &d) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    mp_report_free(mixtral);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) {
        s[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return s;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0, l = strlen(needle);
    for (const char *p = strstr(s, needle); p; p = strstr(p + l, needle))
        n++;
    return n;
}

/* "nan" / "inf" as a word of their own (not inside "nanosleep",
 * "aten::nan_to_num" or "info"), case-insensitive. */
static bool has_nonfinite_text(const char *s)
{
    static const char *const words[] = {"nan", "inf"};
    for (size_t w = 0; w < 2; w++) {
        for (const char *p = s; *p; p++) {
            if (strncasecmp(p, words[w], 3) != 0)
                continue;
            bool before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
            bool after = isalnum((unsigned char)p[3]) || p[3] == '_';
            if (!before && !after)
                return true;
        }
    }
    return false;
}

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

static void test_summary(void **state)
{
    (void)state;
    if (!mixtral)
        skip();
    struct mp_buf b, b2;
    mp_buf_init(&b, 0);
    mp_buf_init(&b2, 0);
    assert_int_equal(mp_report_summary_text(mixtral, 10, &b), 0);
    const char *s = mp_buf_cstr(&b);
    assert_non_null(strstr(s, "GPU time 1511.117 ms\n"));
    assert_non_null(strstr(s, "  busy                   53.140 ms    3.5%\n"));
    assert_non_null(strstr(s, "    computation          51.904 ms    3.4%\n"));
    assert_non_null(strstr(s, "  idle                 1457.977 ms   96.5%\n"));
    assert_non_null(strstr(s, "Time by category: 53.140 ms of op kernel time in 4 categories"));
    assert_non_null(strstr(s, "  other             28.647   53.9%     1700\n"));
    assert_non_null(strstr(s, "  GEMM               5.045    9.5%      588\n"));
    char want[160];
    snprintf(want, sizeof(want),
             "Top 10 of %zu op shapes by kernel time (roofline: H200, 4.80 TB/s)",
             mixtral->n_points);
    assert_non_null(strstr(s, want));
    assert_non_null(strstr(s, "% roof  bound"));
    assert_non_null(strstr(s, "memory\n"));
    assert_false(has_nonfinite_text(s));
    assert_null(strchr(s, '\x1b')); /* no colour */
    /* deterministic */
    assert_int_equal(mp_report_summary_text(mixtral, 10, &b2), 0);
    assert_int_equal(b.len, b2.len);
    assert_memory_equal(b.data, b2.data, b.len);
    /* top_n 0: every op shape, numbered 1..n */
    mp_buf_reset(&b2);
    assert_int_equal(mp_report_summary_text(mixtral, 0, &b2), 0);
    snprintf(want, sizeof(want), "Top %zu of %zu op shapes", mixtral->n_points, mixtral->n_points);
    assert_non_null(strstr(mp_buf_cstr(&b2), want));
    snprintf(want, sizeof(want), "\n%3zu  ", mixtral->n_points);
    assert_non_null(strstr(mp_buf_cstr(&b2), want));
    /* the 4096x32000x2048 GEMM: 760.6 TFLOP/s, 76.9 % of roofline, compute bound */
    const char *row = strstr(mp_buf_cstr(&b2), "0.706    1.3%     760.6   0.5809     1309    76.9  "
                                               "compute\n     B=1 M=4096 N=32000 K=2048");
    assert_non_null(row);
    assert_non_null(strstr(row - 80, "aten::mm"));
    /* without an arch: no roofline columns */
    mixtral->has_arch = false;
    mp_buf_reset(&b2);
    assert_int_equal(mp_report_summary_text(mixtral, 5, &b2), 0);
    mixtral->has_arch = true;
    assert_null(strstr(mp_buf_cstr(&b2), "% roof"));
    assert_null(strstr(mp_buf_cstr(&b2), "roofline:"));
    /* the buffer's bound is respected */
    struct mp_buf small;
    mp_buf_init(&small, 64);
    assert_int_equal(mp_report_summary_text(mixtral, 10, &small), MP_ENOMEM);
    mp_buf_fini(&small);
    mp_buf_fini(&b);
    mp_buf_fini(&b2);
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

static void test_html(void **state)
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
static void test_html_synthetic(void **state)
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

/* Output of `unzip -p zip member`, NULL when unzip is unavailable. */
static char *unzip_member(const char *zip, const char *member)
{
    if (access("/usr/bin/unzip", X_OK) != 0)
        return NULL;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "unzip -p '%s' '%s'", zip, member);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        assert_int_equal(mp_buf_append(&b, tmp, n), 0);
    pclose(f);
    char *s = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return s;
}

static void test_xlsx(void **state)
{
    (void)state;
    if (!mixtral)
        skip();
    char path[128];
    snprintf(path, sizeof(path), "%s/report.xlsx", tmpdir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_report_write_xlsx(mixtral, path, &d), 0);
    size_t n = 0;
    char *z = slurp(path, &n);
    assert_non_null(z);
    assert_true(n > 1000);
    assert_memory_equal(z, "PK\x03\x04", 4);
    free(z);
    char *wb = unzip_member(path, "xl/workbook.xml");
    if (!wb) {
        skip(); /* no unzip: the integration test reads it with python3 */
        return;
    }
    for (size_t i = 0; i < mixtral->n; i++) {
        char want[128];
        snprintf(want, sizeof(want), "<sheet name=\"%s\"", mixtral->sheets[i].name);
        if (!strstr(wb, want))
            fail_msg("workbook.xml lacks %s", want);
    }
    free(wb);
    /* gpu_timeline is sheet 1: bold header strings, numbers as numbers */
    char *s1 = unzip_member(path, "xl/worksheets/sheet1.xml");
    assert_non_null(s1);
    assert_non_null(strstr(s1, "<t>computation_time</t>"));
    assert_non_null(strstr(s1, "<v>51.9043779296875</v>"));
    assert_non_null(strstr(s1, "<v>100</v>"));
    assert_non_null(strstr(s1, "<c r=\"A1\" s=\"1\" t=\"inlineStr\"><is><t>type</t>"));
    free(s1);
    /* no temp file left beside it */
    DIR *dir = opendir(tmpdir);
    assert_non_null(dir);
    for (struct dirent *e = readdir(dir); e; e = readdir(dir))
        if (strstr(e->d_name, ".tmp"))
            fail_msg("temporary file left: %s", e->d_name);
    closedir(dir);
}

static void add_sheet(struct mp_report_sheet *sh, const char *name, const char *csv)
{
    snprintf(sh->name, sizeof(sh->name), "%s", name);
    mp_buf_init(&sh->csv, 0);
    assert_int_equal(mp_buf_puts(&sh->csv, csv), 0);
}

static void test_xlsx_synthetic(void **state)
{
    (void)state;
    struct mp_report_sheet sheets[4];
    memset(sheets, 0, sizeof(sheets));
    add_sheet(&sheets[0], "a_very_long_sheet_name_over_31_characters_x",
              "name,value,flag,empty,text\r\n"
              "\"a,\"\"b\"\"\",1.5,True,,nan\r\n"
              "\"two\nlines\",-2e-06,False,,0x10\r\n"
              "<&>,7,,,\" 3\"\r\n");
    add_sheet(&sheets[1], "a_very_long_sheet_name_over_31_characters_y", "h\n1\n");
    add_sheet(&sheets[2], "bad[name]:*?/\\", "h\n");
    add_sheet(&sheets[3], "empty", "");
    struct mp_report r;
    memset(&r, 0, sizeof(r));
    r.sheets = sheets;
    r.n = 4;
    char path[128];
    snprintf(path, sizeof(path), "%s/synthetic.xlsx", tmpdir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_report_write_xlsx(&r, path, &d), 0);
    char *wb = unzip_member(path, "xl/workbook.xml");
    char *s1 = wb ? unzip_member(path, "xl/worksheets/sheet1.xml") : NULL;
    if (wb) {
        /* cut to 31 characters, made unique, forbidden characters replaced */
        if (!strstr(wb, "<sheet name=\"a_very_long_sheet_name_over_31_\"") ||
            !strstr(wb, "<sheet name=\"a_very_long_sheet_name_over_3~2\"") ||
            !strstr(wb, "<sheet name=\"bad_name______\"") || !strstr(wb, "<sheet name=\"empty\""))
            fail_msg("workbook.xml: %s", wb);
        assert_non_null(s1);
        assert_true(strstr(s1, "<t>a,\"b\"</t>") || strstr(s1, "<t>a,&quot;b&quot;</t>"));
        assert_non_null(strstr(s1, "<v>1.5</v>"));
        assert_non_null(strstr(s1, "<v>-2E-06</v>"));
        assert_non_null(strstr(s1, "t=\"b\""));
        assert_non_null(strstr(s1, "<t>nan</t>"));
        assert_non_null(strstr(s1, "<t>0x10</t>"));
        assert_non_null(strstr(s1, "<t xml:space=\"preserve\"> 3</t>"));
        assert_non_null(strstr(s1, "two\nlines"));
        assert_non_null(strstr(s1, "<t>&lt;&amp;&gt;</t>"));
        assert_null(strstr(s1, "r=\"D2\"")); /* empty cells stay empty */
    }
    free(wb);
    free(s1);
    /* a directory that does not exist: error naming the file, nothing left */
    mp_diag_clear(&d);
    assert_int_equal(mp_report_write_xlsx(&r, "/nonexistent-dir/r.xlsx", &d), MP_EIO);
    assert_non_null(strstr(d.file, "r.xlsx"));
    for (size_t i = 0; i < 4; i++)
        mp_buf_fini(&sheets[i].csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),        cmocka_unit_test(test_html),
        cmocka_unit_test(test_html_synthetic), cmocka_unit_test(test_xlsx),
        cmocka_unit_test(test_xlsx_synthetic),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
