/* The calibration cache: arch files that `magpie gpu calibrate` wrote, one
 * per GPU UUID, driver and power limit, found by the GPU's name so that a
 * trace from a calibrated GPU model gets the measured ceilings. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "roofline_int.h"

int mp_roofline_calibration_dir(char *out, size_t len)
{
    const char *e = getenv("MAGPIE_CALIBRATION_DIR");
    int n;
    if (e && *e) {
        n = snprintf(out, len, "%s", e);
    } else if ((e = getenv("XDG_CACHE_HOME")) != NULL && *e == '/') {
        n = snprintf(out, len, "%s/magpie/calibration", e);
    } else if ((e = getenv("HOME")) != NULL && *e) {
        n = snprintf(out, len, "%s/.cache/magpie/calibration", e);
    } else {
        return MP_ENOTFOUND;
    }
    return n < 0 || (size_t)n >= len ? MP_ENOTFOUND : 0;
}

/* name and date of a calibration file; false when it is not one */
static bool peek(const char *path, char *name, size_t nlen, char *date, size_t dlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *mg = json_object_get(root, "magpie");
    json_t *g = json_object_get(mg, "gpu");
    json_t *n = json_object_get(g, "name"), *d = json_object_get(mg, "date");
    bool ok = json_is_integer(json_object_get(mg, "calibration")) && json_is_string(n);
    if (ok) {
        snprintf(name, nlen, "%s", json_string_value(n));
        snprintf(date, dlen, "%s", json_is_string(d) ? json_string_value(d) : "");
    }
    json_decref(root);
    return ok;
}

int mp_roofline_arch_calibrated(const char *device_name, struct mp_roofline_arch *out, char *path,
                                size_t path_len)
{
    const char *off = getenv("MAGPIE_NO_CALIBRATION");
    char dir[1024];
    if (!device_name || !out || (off && *off && strcmp(off, "0") != 0) ||
        mp_roofline_calibration_dir(dir, sizeof(dir)) != 0)
        return MP_ENOTFOUND;
    DIR *dh = opendir(dir);
    if (!dh)
        return MP_ENOTFOUND;
    char best[1300] = "", best_date[40] = "";
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char p[1300], name[128], date[40];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (!peek(p, name, sizeof(name), date, sizeof(date)) || !roof_same_name(name, device_name))
            continue;
        /* ISO 8601 dates order as text; ties go to the file name */
        int c = strcmp(date, best_date);
        if (!best[0] || c > 0 || (c == 0 && strcmp(p, best) > 0)) {
            snprintf(best, sizeof(best), "%s", p);
            snprintf(best_date, sizeof(best_date), "%s", date);
        }
    }
    closedir(dh);
    if (!best[0])
        return MP_ENOTFOUND;
    struct mp_diag d;
    mp_diag_clear(&d);
    if (mp_roofline_arch_load_json(best, out, &d) != 0)
        return MP_ENOTFOUND;
    if (path)
        snprintf(path, path_len, "%s", best);
    return 0;
}
