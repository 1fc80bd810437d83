/* Unit tests for the lazily opened libraries (src/lazy/): with each soname
 * pointed at a library that does not exist (the module's test hook, set
 * before the first call), the first use prints one clear message naming the
 * soname and the package, the library functions fail the way the libraries
 * report failure, and magpie's own entry points that use them (Ray client,
 * model listing, .xlsx writer, MCP HTTP server) return an error instead of
 * crashing. The working path, with the real libraries, is covered by the
 * loadgen, serve, MCP and report tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <xlsxwriter.h>

#include <magpie/loadgen.h>
#include <magpie/mcp.h>
#include <magpie/ray.h>
#include <magpie/tracelens.h>

#include "lazy/lazy_int.h"

/* stderr goes to a temporary file between capture_begin and capture_end,
 * which returns what was written (static buffer). */
static int saved_fd = -1;
static FILE *cap;

static void capture_begin(void)
{
    fflush(stderr);
    cap = tmpfile();
    assert_non_null(cap);
    saved_fd = dup(STDERR_FILENO);
    assert_true(saved_fd >= 0);
    assert_true(dup2(fileno(cap), STDERR_FILENO) >= 0);
}

static const char *capture_end(void)
{
    static char text[8192];
    fflush(stderr);
    assert_true(dup2(saved_fd, STDERR_FILENO) >= 0);
    close(saved_fd);
    rewind(cap);
    size_t n = fread(text, 1, sizeof(text) - 1, cap);
    text[n] = '\0';
    fclose(cap);
    fputs(text, stderr); /* still visible in the test log */
    return text;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_curl_missing(void **state)
{
    (void)state;
    capture_begin();
    assert_int_equal(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_FAILED_INIT);
    assert_null(curl_easy_init());
    assert_null(curl_multi_init());
    assert_null(curl_slist_append(NULL, "X: y"));
    assert_non_null(curl_easy_strerror(CURLE_OK));
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_ray_client *c = NULL;
    assert_true(mp_ray_client_new("http://127.0.0.1:9", 1, 1, &c, &d) < 0);
    assert_null(c);
    mp_diag_clear(&d);
    char model[64] = "";
    assert_true(
        mp_loadgen_first_model("http://127.0.0.1:9", NULL, 0, false, model, sizeof(model), &d) < 0);
    const char *err = capture_end();
    assert_int_equal(count(err, "magpie: cannot load libmagpie-test-missing-curl.so.0: "), 1);
    assert_non_null(strstr(err, "; install libcurl4\n"));
}

static void test_xlsx_missing(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_lazy_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof(path), "%s/r.xlsx", dir);
    struct mp_report r;
    memset(&r, 0, sizeof(r));
    struct mp_diag d;
    mp_diag_clear(&d);
    capture_begin();
    assert_true(mp_report_write_xlsx(&r, path, &d) < 0);
    assert_null(workbook_new_opt(path, NULL));
    const char *err = capture_end();
    assert_int_equal(count(err, "magpie: cannot load libmagpie-test-missing-xlsx.so.0: "), 1);
    assert_non_null(strstr(err, "; install libxlsxwriter4\n"));
    assert_int_equal(access(path, F_OK), -1); /* no workbook and no temporary file left */
    assert_int_equal(rmdir(dir), 0);
}

static void test_mhd_missing(void **state)
{
    (void)state;
    struct mp_mcp_opts o;
    memset(&o, 0, sizeof(o));
    o.host = "127.0.0.1";
    o.port = 0;
    struct mp_diag d;
    mp_diag_clear(&d);
    capture_begin();
    assert_true(mp_mcp_serve_http(&o, &d) < 0);
    assert_null(MHD_start_daemon(0, 0, NULL, NULL, NULL, NULL, MHD_OPTION_END));
    const char *err = capture_end();
    assert_int_equal(count(err, "magpie: cannot load libmagpie-test-missing-mhd.so.0: "), 1);
    assert_non_null(strstr(err, "; install libmicrohttpd12\n"));
}

int main(void)
{
    lazy_curl.soname = "libmagpie-test-missing-curl.so.0";
    lazy_mhd.soname = "libmagpie-test-missing-mhd.so.0";
    lazy_xlsx.soname = "libmagpie-test-missing-xlsx.so.0";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curl_missing),
        cmocka_unit_test(test_xlsx_missing),
        cmocka_unit_test(test_mhd_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
