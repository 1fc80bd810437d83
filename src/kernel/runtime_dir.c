/* Where runtime/ (magpie_runner.py and the files beside it) is found: an
 * explicit order, the same for the installed binary and a build tree, and
 * never the current directory (see mp_kernel_runtime_find in
 * include/magpie/kernel.h and docs/ARCHITECTURE.md). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/kernel.h>

/* The source tree's runtime/, compiled in by cmake/install.cmake. */
#ifndef MP_SOURCE_RUNTIME_DIR
#define MP_SOURCE_RUNTIME_DIR ""
#endif

/* True when dir holds magpie_runner.py; its real path then goes to out. */
static bool runtime_at(const char *dir, char *out, size_t n)
{
    char f[PATH_MAX + 32], real[PATH_MAX];
    if (!dir || !*dir)
        return false;
    snprintf(f, sizeof(f), "%s/magpie_runner.py", dir);
    if (!mp_fs_exists(f) || !realpath(dir, real) || strlen(real) >= n)
        return false;
    memcpy(out, real, strlen(real) + 1);
    return true;
}

/* The directory of the executable (exe, or /proc/self/exe when NULL) into
 * dir; "" when unknown. */
static void exe_dir(const char *exe, char *dir, size_t n)
{
    dir[0] = 0;
    if (exe)
        snprintf(dir, n, "%s", exe);
    else if (!realpath("/proc/self/exe", dir))
        dir[0] = 0;
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
}

int mp_kernel_runtime_find(const char *exe, char *out, size_t n, const char **origin,
                           struct mp_diag *d)
{
    const char *env = getenv("MAGPIE_RUNTIME_DIR");
    if (env && *env) {
        if (!runtime_at(env, out, n))
            return mp_diag_set(d, MP_ENOTFOUND,
                               "MAGPIE_RUNTIME_DIR=%s has no magpie_runner.py (unset it to use "
                               "the installed runtime/)",
                               env);
        if (origin)
            *origin = "MAGPIE_RUNTIME_DIR";
        return 0;
    }
    char dir[PATH_MAX], installed[PATH_MAX + 32] = "", moved[PATH_MAX + 32] = "";
    exe_dir(exe, dir, sizeof(dir));
    if (dir[0]) {
        snprintf(installed, sizeof(installed), "%s/../share/magpie/runtime", dir);
        /* build/<preset>/magpie in a checkout moved since it was built */
        snprintf(moved, sizeof(moved), "%s/../../runtime", dir);
    }

    const struct {
        const char *path, *how;
    } cand[] = {
        {installed, "installed"},
        {MP_SOURCE_RUNTIME_DIR, "source tree"},
        {moved, "source tree"},
    };

    for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
        if (runtime_at(cand[i].path, out, n)) {
            if (origin)
                *origin = cand[i].how;
            return 0;
        }
    }
    return mp_diag_set(d, MP_ENOTFOUND,
                       "runtime/ (magpie_runner.py) not found in %s, %s or %s; set "
                       "MAGPIE_RUNTIME_DIR",
                       installed[0] ? installed : "<executable>/../share/magpie/runtime",
                       *MP_SOURCE_RUNTIME_DIR ? MP_SOURCE_RUNTIME_DIR : "(no source tree)",
                       moved[0] ? moved : "<executable>/../../runtime");
}
