/* Reading a child's result file (harness or Python runner) as strict JSON.
 * A file that is there but does not parse (bare NaN/Infinity, a cut-off
 * write, stray output) is reported with its path and the byte offset where
 * the parser stopped, so that the kernel's real failure is not lost behind
 * "no output"; non-finite statistics come back from null plus the child's
 * "nonfinite" note. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "kresult_int.h"

json_t *kern_load_result(const char *path, bool *present, char *why, size_t len)
{
    struct stat st;
    bool there = stat(path, &st) == 0 && st.st_size > 0;
    if (present)
        *present = there;
    if (!there) {
        snprintf(why, len, "no output");
        return NULL;
    }
    json_error_t je;
    json_t *r = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!r) {
        snprintf(why, len, "could not parse result %s at byte %d (line %d, column %d): %s", path,
                 je.position, je.line, je.column, je.text);
        return NULL;
    }
    if (!json_is_object(r)) {
        snprintf(why, len, "could not parse result %s at byte 0: expected a JSON object", path);
        json_decref(r);
        return NULL;
    }
    return r;
}

char *kern_tolerance_json(const json_t *correctness)
{
    static const char *const keys[] = {"hp_reference", "hp_ratio",   "hp_factor",
                                       "rms_ratio",    "rms_factor", "ref_ratio"};
    json_t *t = json_object();
    json_t *tol = json_object_get(correctness, "tolerance");
    if (json_is_object(tol))
        json_object_update(t, tol);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(correctness, keys[i]);
        if (json_is_number(v) || json_is_string(v))
            json_object_set(t, keys[i], v);
    }
    char *s = json_object_size(t) ? json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(t);
    return s;
}

double kern_json_real(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_number(v))
        return json_number_value(v);
    if (!json_is_null(v))
        return 0;
    const char *s = json_string_value(json_object_get(json_object_get(obj, "nonfinite"), key));
    if (!s)
        return 0;
    if (!strcmp(s, "inf"))
        return INFINITY;
    if (!strcmp(s, "-inf"))
        return -INFINITY;
    if (!strcmp(s, "nan"))
        return NAN;
    return 0;
}
