/* libmicrohttpd, opened at first use (lazy_int.h): the MHD_* functions the
 * MCP server calls, each forwarding to libmicrohttpd.so.12's own. When the
 * library cannot be opened, the first call prints why (lazy.c) and
 * MHD_start_daemon returns NULL, which the server reports as an error; the
 * other functions are only reached with a daemon, connection or response
 * that a loaded library made.
 *
 * The two variadic ones: MHD_start_daemon passes its option list on through
 * the library's own va_list form, MHD_start_daemon_va, so any options work;
 * MHD_get_daemon_info and MHD_get_connection_info forward the daemon or
 * connection and the info type only, which is all that the info types taking
 * no further argument read (the ones magpie asks for: MHD_DAEMON_INFO_LISTEN_FD,
 * MHD_CONNECTION_INFO_CONNECTION_FD and MHD_CONNECTION_INFO_SOCKET_CONTEXT). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "lazy_int.h"

#define MHD_FNS(X)                                                                                 \
    X(MHD_start_daemon_va)                                                                         \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_add_connection)                                                                          \
    X(MHD_get_daemon_info)                                                                         \
    X(MHD_get_connection_info)                                                                     \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_create_response_from_callback)                                                           \
    X(MHD_add_response_header)                                                                     \
    X(MHD_queue_response)                                                                          \
    X(MHD_destroy_response)

static struct {
/* f is a function's name, used as the member's name too */
#define MHD_FIELD(f) __typeof__(&f) f; // NOLINT(bugprone-macro-parentheses)
    MHD_FNS(MHD_FIELD)
#undef MHD_FIELD
} fn;

static void load(void)
{
    lazy_open(&lazy_mhd);
    if (!lazy_mhd.handle)
        return;
    bool ok = true;
#define MHD_SYM(f) ok = lazy_sym(&lazy_mhd, #f, &fn.f, sizeof(fn.f)) && ok;
    MHD_FNS(MHD_SYM)
#undef MHD_SYM
    lazy_mhd.ok = ok;
}

/* True once libmicrohttpd is loaded; loads it on the first call. */
static bool ready(void)
{
    pthread_once(&lazy_mhd.once, load);
    return lazy_mhd.ok;
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
    if (!ready())
        return NULL;
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = fn.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
    if (ready())
        fn.MHD_stop_daemon(daemon);
}

enum MHD_Result MHD_add_connection(struct MHD_Daemon *daemon, MHD_socket client_socket,
                                   const struct sockaddr *addr, socklen_t addrlen)
{
    return ready() ? fn.MHD_add_connection(daemon, client_socket, addr, addrlen) : MHD_NO;
}

const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon,
                                                enum MHD_DaemonInfoType info_type, ...)
{
    return ready() ? fn.MHD_get_daemon_info(daemon, info_type) : NULL;
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type, ...)
{
    return ready() ? fn.MHD_get_connection_info(connection, info_type) : NULL;
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                        const char *key)
{
    return ready() ? fn.MHD_lookup_connection_value(connection, kind, key) : NULL;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode)
{
    return ready() ? fn.MHD_create_response_from_buffer(size, buffer, mode) : NULL;
}

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size,
                                                       MHD_ContentReaderCallback crc, void *crc_cls,
                                                       MHD_ContentReaderFreeCallback crfc)
{
    return ready() ? fn.MHD_create_response_from_callback(size, block_size, crc, crc_cls, crfc)
                   : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
                                        const char *content)
{
    return ready() ? fn.MHD_add_response_header(response, header, content) : MHD_NO;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response)
{
    return ready() ? fn.MHD_queue_response(connection, status_code, response) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *response)
{
    if (ready())
        fn.MHD_destroy_response(response);
}
