/* Fixtures shared by the sources tests (helpers.c). */
#ifndef MP_TEST_SOURCES_HELPERS_H
#define MP_TEST_SOURCES_HELPERS_H

#include <stddef.h>

#include <magpie/sources.h>

/* MP_FIXTURES/sources, and the index cache of this run (the group setup
 * sets both; the teardown removes the cache) */
extern char g_fix[1024];
extern char g_cache[1024];

/* g_fix/sub in buf */
const char *fix(const char *sub, char *buf, size_t n);
/* the index of the fixture trees subs[0..n) (cached in g_cache) */
struct mp_src_index *open_fix(const char *const *subs, size_t n);
/* mp_src_resolve, which must not fail */
void resolve(const struct mp_src_index *ix, const char *name, const struct mp_src_evidence *ev,
             struct mp_src_result *r);
/* Resolves name with the evidence and context given (either may be NULL)
 * and asserts that file is claimed, with notes holding note when given. */
void expect_file(const struct mp_src_index *ix, const char *name, const struct mp_src_evidence *ev,
                 const struct mp_src_context *ctx, const char *file, const char *note);

#endif
