/* libcurl, opened at first use (lazy_int.h): the curl_* functions magpie
 * calls, each forwarding to libcurl.so.4's own. When the library cannot be
 * opened, the first call prints why (lazy.c) and every call fails the way
 * libcurl reports failure (CURLE_FAILED_INIT, NULL handles), so the callers'
 * existing error paths end the command cleanly.
 *
 * curl_easy_setopt and curl_multi_setopt are variadic with exactly one
 * argument, whose type libcurl fixes by the option's number: below
 * CURLOPTTYPE_OBJECTPOINT a long, then a data pointer (object, string, slist
 * and callback-data options), below CURLOPTTYPE_OFF_T a function pointer,
 * then a curl_off_t, and from CURLOPTTYPE_BLOB a struct curl_blob pointer;
 * the shim reads the argument as that type and passes it on.
 * curl_easy_getinfo's one argument is always a pointer. */
#define CURL_DISABLE_TYPECHECK 1 /* the functions are defined here, not called */
#include <stdarg.h>

#include <curl/curl.h>

#include "lazy_int.h"

/* The entry points, looked up by these names. */
#define CURL_FNS(X)                                                                                \
    X(curl_global_init)                                                                            \
    X(curl_global_cleanup)                                                                         \
    X(curl_easy_init)                                                                              \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_strerror)                                                                          \
    X(curl_multi_init)                                                                             \
    X(curl_multi_cleanup)                                                                          \
    X(curl_multi_setopt)                                                                           \
    X(curl_multi_add_handle)                                                                       \
    X(curl_multi_remove_handle)                                                                    \
    X(curl_multi_assign)                                                                           \
    X(curl_multi_socket_action)                                                                    \
    X(curl_multi_info_read)                                                                        \
    X(curl_multi_strerror)                                                                         \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)

static struct {
/* f is a function's name, used as the member's name too */
#define CURL_FIELD(f) __typeof__(&f) f; // NOLINT(bugprone-macro-parentheses)
    CURL_FNS(CURL_FIELD)
#undef CURL_FIELD
} fn;

static void load(void)
{
    lazy_open(&lazy_curl);
    if (!lazy_curl.handle)
        return;
    bool ok = true;
#define CURL_SYM(f) ok = lazy_sym(&lazy_curl, #f, &fn.f, sizeof(fn.f)) && ok;
    CURL_FNS(CURL_SYM)
#undef CURL_SYM
    lazy_curl.ok = ok;
}

/* True once libcurl is loaded; loads it on the first call. */
static bool ready(void)
{
    pthread_once(&lazy_curl.once, load);
    return lazy_curl.ok;
}

static const char not_loaded[] = "libcurl could not be loaded";

/* The type of a setopt argument, by the option's number (see the top). */
enum arg_type { ARG_LONG, ARG_PTR, ARG_FUNC, ARG_OFF, ARG_BLOB, ARG_UNKNOWN };

typedef void (*any_fn)(void);

static enum arg_type opt_arg(long option)
{
    if (option < CURLOPTTYPE_OBJECTPOINT)
        return ARG_LONG;
    if (option < CURLOPTTYPE_FUNCTIONPOINT)
        return ARG_PTR;
    if (option < CURLOPTTYPE_OFF_T)
        return ARG_FUNC;
    if (option < CURLOPTTYPE_BLOB)
        return ARG_OFF;
    if (option < CURLOPTTYPE_BLOB + 10000)
        return ARG_BLOB;
    return ARG_UNKNOWN;
}

CURLcode curl_global_init(long flags)
{
    return ready() ? fn.curl_global_init(flags) : CURLE_FAILED_INIT;
}

void curl_global_cleanup(void)
{
    if (ready())
        fn.curl_global_cleanup();
}

CURL *curl_easy_init(void)
{
    return ready() ? fn.curl_easy_init() : NULL;
}

void curl_easy_cleanup(CURL *curl)
{
    if (ready())
        fn.curl_easy_cleanup(curl);
}

void curl_easy_reset(CURL *curl)
{
    if (ready())
        fn.curl_easy_reset(curl);
}

CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
    if (!ready())
        return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, option);
    CURLcode rc = CURLE_UNKNOWN_OPTION;
    /* the branches differ only in the type va_arg reads */
    // NOLINTBEGIN(bugprone-branch-clone)
    switch (opt_arg(option)) {
    case ARG_LONG:
        rc = fn.curl_easy_setopt(curl, option, va_arg(ap, long));
        break;
    case ARG_PTR:
        rc = fn.curl_easy_setopt(curl, option, va_arg(ap, void *));
        break;
    case ARG_FUNC:
        rc = fn.curl_easy_setopt(curl, option, va_arg(ap, any_fn));
        break;
    case ARG_OFF:
        rc = fn.curl_easy_setopt(curl, option, va_arg(ap, curl_off_t));
        break;
    case ARG_BLOB:
        rc = fn.curl_easy_setopt(curl, option, va_arg(ap, struct curl_blob *));
        break;
    case ARG_UNKNOWN:
        break;
    }
    // NOLINTEND(bugprone-branch-clone)
    va_end(ap);
    return rc;
}

CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
    if (!ready())
        return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, info);
    void *out = va_arg(ap, void *);
    va_end(ap);
    return fn.curl_easy_getinfo(curl, info, out);
}

CURLcode curl_easy_perform(CURL *curl)
{
    return ready() ? fn.curl_easy_perform(curl) : CURLE_FAILED_INIT;
}

const char *curl_easy_strerror(CURLcode code)
{
    return ready() ? fn.curl_easy_strerror(code) : not_loaded;
}

CURLM *curl_multi_init(void)
{
    return ready() ? fn.curl_multi_init() : NULL;
}

CURLMcode curl_multi_cleanup(CURLM *multi)
{
    return ready() ? fn.curl_multi_cleanup(multi) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_setopt(CURLM *multi, CURLMoption option, ...)
{
    if (!ready())
        return CURLM_BAD_HANDLE;
    va_list ap;
    va_start(ap, option);
    CURLMcode rc = CURLM_UNKNOWN_OPTION;
    /* the branches differ only in the type va_arg reads */
    // NOLINTBEGIN(bugprone-branch-clone)
    switch (opt_arg(option)) {
    case ARG_LONG:
        rc = fn.curl_multi_setopt(multi, option, va_arg(ap, long));
        break;
    case ARG_PTR:
        rc = fn.curl_multi_setopt(multi, option, va_arg(ap, void *));
        break;
    case ARG_FUNC:
        rc = fn.curl_multi_setopt(multi, option, va_arg(ap, any_fn));
        break;
    case ARG_OFF:
        rc = fn.curl_multi_setopt(multi, option, va_arg(ap, curl_off_t));
        break;
    case ARG_BLOB:
    case ARG_UNKNOWN:
        break;
    }
    // NOLINTEND(bugprone-branch-clone)
    va_end(ap);
    return rc;
}

CURLMcode curl_multi_add_handle(CURLM *multi, CURL *curl)
{
    return ready() ? fn.curl_multi_add_handle(multi, curl) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *curl)
{
    return ready() ? fn.curl_multi_remove_handle(multi, curl) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_assign(CURLM *multi, curl_socket_t sockfd, void *sockp)
{
    return ready() ? fn.curl_multi_assign(multi, sockfd, sockp) : CURLM_BAD_HANDLE;
}

CURLMcode curl_multi_socket_action(CURLM *multi, curl_socket_t s, int ev_bitmask,
                                   int *running_handles)
{
    return ready() ? fn.curl_multi_socket_action(multi, s, ev_bitmask, running_handles)
                   : CURLM_BAD_HANDLE;
}

CURLMsg *curl_multi_info_read(CURLM *multi, int *msgs_in_queue)
{
    return ready() ? fn.curl_multi_info_read(multi, msgs_in_queue) : NULL;
}

const char *curl_multi_strerror(CURLMcode code)
{
    return ready() ? fn.curl_multi_strerror(code) : not_loaded;
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *data)
{
    return ready() ? fn.curl_slist_append(list, data) : NULL;
}

void curl_slist_free_all(struct curl_slist *list)
{
    if (ready())
        fn.curl_slist_free_all(list);
}
