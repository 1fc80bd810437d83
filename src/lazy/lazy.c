/* The loader under the lazy shims (lazy_int.h): dlopen by soname, dlsym by
 * name, and the one error message a user sees when a library is missing.
 * Libraries are never closed: they stay loaded to the end of the process, as
 * they did when magpie was linked against them. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "lazy_int.h"

struct lazy_lib lazy_curl = {"libcurl.so.4", "libcurl4", PTHREAD_ONCE_INIT, NULL, false};
struct lazy_lib lazy_mhd = {"libmicrohttpd.so.12", "libmicrohttpd12", PTHREAD_ONCE_INIT, NULL,
                            false};
struct lazy_lib lazy_xlsx = {"libxlsxwriter.so.4", "libxlsxwriter4", PTHREAD_ONCE_INIT, NULL,
                             false};

void lazy_open(struct lazy_lib *lib)
{
    lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        const char *e = dlerror();
        size_t n = strlen(lib->soname);
        if (!e)
            e = "unknown error";
        else if (strncmp(e, lib->soname, n) == 0 && strncmp(e + n, ": ", 2) == 0)
            e += n + 2; /* dlerror names the soname too */
        fprintf(stderr, "magpie: cannot load %s: %s; install %s\n", lib->soname, e, lib->package);
    }
}

bool lazy_sym(const struct lazy_lib *lib, const char *name, void *fnptr, size_t size)
{
    dlerror();
    void *p = dlsym(lib->handle, name);
    if (!p) {
        const char *e = dlerror();
        fprintf(stderr, "magpie: %s has no %s (%s); install %s\n", lib->soname, name,
                e ? e : "NULL", lib->package);
        return false;
    }
    memcpy(fnptr, &p, size);
    return true;
}
