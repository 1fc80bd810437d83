/* The xlsx workbook: a zip with the sheets under Excel-safe names, cells
 * read back from the CSV text. */
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

/* Output of `unzip -p zip member`, NULL when unzip is unavailable. */
static char *unzip_member(const char *zip, const char *member)
{
    if (access("/usr/bin/unzip", X_OK) != 0)
        return NULL;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "unzip -p '%s' '%s'", zip, member);
    FILE *f = popen(cmd, "r"); // NOLINT(cert-env33-c): unzip reads the test's own file
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

void test_xlsx(void **state)
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

void test_xlsx_synthetic(void **state)
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
