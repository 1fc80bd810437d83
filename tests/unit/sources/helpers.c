/* Fixtures of the sources tests: the fixture trees (MP_FIXTURES/sources),
 * an index cache of their own per run, resolving a name. */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/sources.h>

#include "area.h"

char g_fix[1024];

char g_cache[1024];

const char *fix(const char *sub, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", g_fix, sub);
    return buf;
}

struct mp_src_index *open_fix(const char *const *subs, size_t n)
{
    char paths[8][1200];
    const char *roots[8];
    for (size_t i = 0; i < n; i++)
        roots[i] = fix(subs[i], paths[i], sizeof(paths[i]));
    struct mp_src_index_opts o = {.cache_dir = g_cache};
    struct mp_src_index *ix = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_src_index_open(roots, n, &o, &ix, &d), 0);
    return ix;
}

void resolve(const struct mp_src_index *ix, const char *name, const struct mp_src_evidence *ev,
             struct mp_src_result *r)
{
    assert_int_equal(mp_src_resolve(ix, name, ev, r), 0);
}

/* Resolves name with the evidence and context given (either may be NULL)
 * and asserts that file is claimed, with notes holding note when given. */
void expect_file(const struct mp_src_index *ix, const char *name, const struct mp_src_evidence *ev,
                 const struct mp_src_context *ctx, const char *file, const char *note)
{
    struct mp_src_result r;
    assert_int_equal(mp_src_resolve_ctx(ix, name, ev, ctx, &r), 0);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, file);
    if (note)
        assert_non_null(strstr(r.notes, note));
    mp_src_result_fini(&r);
}

/* the fixture root and a cache directory of this process */
int setup(void **state)
{
    (void)state;
    const char *f = getenv("MP_FIXTURES");
    snprintf(g_fix, sizeof(g_fix), "%s/sources", f ? f : "tests/fixtures");
    snprintf(g_cache, sizeof(g_cache), "/tmp/magpie-test-sources-%d", (int)getpid());
    return 0;
}

int teardown(void **state)
{
    (void)state;
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_cache);
    return system(cmd) == 0 ? 0 : -1; // NOLINT(cert-env33-c): removes the test's own directory
}
