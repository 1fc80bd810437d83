/* Fixtures of the tracelens tests: a temporary directory per run, the
 * report of the shared H200 mixtral trace (built once; NULL without
 * ../shared), files and sheets as text. */
#include "helpers.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <magpie/base.h>
#include <magpie/tracelens.h>

#include "area.h"
#include "tracelens/tracelens_int.h"

char tmpdir[64];

struct mp_report *mixtral; /* built once, NULL when the trace is absent */

static char *trace_path(void)
{
    const char *sh = getenv("MP_SHARED");
    static char p[1024];
    snprintf(p, sizeof(p), "%s/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz",
             sh ? sh : "../shared");
    return access(p, R_OK) == 0 ? p : NULL;
}

int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp_tracelens_XXXXXX");
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

int teardown(void **state)
{
    (void)state;
    mp_report_free(mixtral);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1; // NOLINT(cert-env33-c): removes the test's own directory
}

char *slurp(const char *path, size_t *len)
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

size_t count(const char *s, const char *needle)
{
    size_t n = 0, l = strlen(needle);
    for (const char *p = strstr(s, needle); p; p = strstr(p + l, needle))
        n++;
    return n;
}

/* "nan" / "inf" as a word of their own (not inside "nanosleep",
 * "aten::nan_to_num" or "info"), case-insensitive. */
bool has_nonfinite_text(const char *s)
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

void write_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    struct mp_diag d;
    assert_int_equal(mp_fs_mkdirs(path, &d), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* the CSV text of report r's sheet name, or NULL */
const char *sheet_csv(const struct mp_report *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->sheets[i].name, name) == 0)
            return r->sheets[i].csv.data ? r->sheets[i].csv.data : "";
    return NULL;
}
