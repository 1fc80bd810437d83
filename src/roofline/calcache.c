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

int mp_roofline_calibration_each(void (*fn)(const char *path, void *user), void *user)
{
    char dir[1024];
    DIR *dh = mp_roofline_calibration_dir(dir, sizeof(dir)) == 0 ? opendir(dir) : NULL;
    if (!dh)
        return MP_ENOTFOUND;
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        if (strlen(e->d_name) < 6 || !mp_str_ends_with(e->d_name, ".json"))
            continue;
        char p[1300];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        fn(p, user);
    }
    closedir(dh);
    return 0;
}

struct newest {
    const char *device_name;
    char best[1300], best_date[40];
};

static void consider(const char *p, void *user)
{
    struct newest *n = user;
    char name[128], date[40];
    if (!peek(p, name, sizeof(name), date, sizeof(date)) || !roof_same_name(name, n->device_name))
        return;
    /* ISO 8601 dates order as text; ties go to the file name */
    int c = strcmp(date, n->best_date);
    if (!n->best[0] || c > 0 || (c == 0 && strcmp(p, n->best) > 0)) {
        snprintf(n->best, sizeof(n->best), "%s", p);
        snprintf(n->best_date, sizeof(n->best_date), "%s", date);
    }
}

int mp_roofline_arch_calibrated(const char *device_name, struct mp_roofline_arch *out, char *path,
                                size_t path_len)
{
    const char *off = getenv("MAGPIE_NO_CALIBRATION");
    if (!device_name || !out || (off && *off && strcmp(off, "0") != 0))
        return MP_ENOTFOUND;
    struct newest n = {.device_name = device_name};
    mp_roofline_calibration_each(consider, &n);
    const char *best = n.best;
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
