/* Private to the lazy module: the libraries magpie opens with dlopen the
 * first time a command uses them (libcurl, libmicrohttpd, libxlsxwriter), so
 * that commands which never touch HTTP or .xlsx do not pay for loading them
 * and their dependencies at start-up. curl.c, mhd.c and xlsx.c define the
 * library functions the rest of magpie calls (same names, same prototypes,
 * from the libraries' own headers) and forward each call through a pointer
 * looked up by name on first use. */
#ifndef MAGPIE_LAZY_INT_H
#define MAGPIE_LAZY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One lazily opened library. */
struct lazy_lib {
    const char *soname;  /* given to dlopen */
    const char *package; /* the Debian package that installs it, for the message */
    pthread_once_t once;
    void *handle; /* set by lazy_open: NULL when it could not be opened */
    bool ok;      /* set by the shim's loader: opened with every entry point */
};

/* The three libraries. The unit test points .soname at a library that does
 * not exist before the first call, to check the failure path; nothing else
 * changes them. */
extern struct lazy_lib lazy_curl, lazy_mhd, lazy_xlsx;

/* dlopens lib->soname into lib->handle; on failure prints
 * "magpie: cannot load SONAME: DLERROR; install PACKAGE" to stderr and leaves
 * it NULL. Called once, from the shim's pthread_once loader. */
void lazy_open(struct lazy_lib *lib);
/* Looks name up in lib->handle and stores it in the function pointer at
 * fnptr (size bytes); on failure prints which entry point is missing and
 * returns false. */
bool lazy_sym(const struct lazy_lib *lib, const char *name, void *fnptr, size_t size);

#endif
