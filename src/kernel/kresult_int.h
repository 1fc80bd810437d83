/* Reading the result files that magpie's children write (the C harness's
 * --harness-child and runtime/magpie_runner.py): strict JSON, with a parse
 * failure reported by file and byte offset, and numbers that the child wrote
 * as null because they were not finite (listed in a "nonfinite" object
 * beside them) read back as Inf/NaN. */
#ifndef MAGPIE_KRESULT_INT_H
#define MAGPIE_KRESULT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Loads the result at path. Returns the parsed object (the caller owns it),
 * or NULL with why set to "no output" (the file is missing or empty) or
 * "could not parse result PATH at byte N: TEXT". *present (may be NULL)
 * tells whether the file existed with content. */
json_t *kern_load_result(const char *path, bool *present, char *why, size_t len);

/* obj[key] as a double: a number as it is, null with obj.nonfinite[key]
 * "inf", "-inf" or "nan" as that value, anything else 0. */
double kern_json_real(const json_t *obj, const char *key);

/* The tolerance figures of a runner's correctness object (its "tolerance"
 * object plus hp_reference, hp_ratio, hp_factor, rms_ratio, rms_factor,
 * ref_ratio) as compact JSON text (the caller frees it), or NULL when it
 * has none. */
char *kern_tolerance_json(const json_t *correctness);

#endif
