/* Fixtures shared by the tracelens tests (helpers.c). */
#ifndef MP_TEST_TRACELENS_HELPERS_H
#define MP_TEST_TRACELENS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/tracelens.h>

/* A fresh directory per run (the group fixtures), removed afterwards. */
extern char tmpdir[64];
/* The report of the shared H200 mixtral trace, built by the group setup;
 * NULL when ../shared is absent (the tests that need it skip). */
extern struct mp_report *mixtral;

/* Writes text to tmpdir/rel, creating its directories. */
void write_file(const char *rel, const char *text);
/* A file read whole (NUL-terminated), or NULL. */
char *slurp(const char *path, size_t *len);
/* occurrences of needle in s */
size_t count(const char *s, const char *needle);
/* s holds a NaN or infinity spelled as text */
bool has_nonfinite_text(const char *s);
/* the CSV text of report r's sheet name, or NULL without that sheet */
const char *sheet_csv(const struct mp_report *r, const char *name);

#endif
