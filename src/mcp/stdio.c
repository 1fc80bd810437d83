/* The stdio transport: one JSON-RPC message per line on stdin, replies and
 * notifications one per line on stdout (nothing else is ever written
 * there; logs go to stderr). Requests are read while tool calls run, so
 * pings and notifications/cancelled are answered at once. End of input
 * cancels what still runs and ends the server. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_int.h"

int mp_mcp_serve_stdio(const struct mp_mcp_opts *o, struct mp_diag *d)
{
    struct mcp_server srv;
    int rc = mcp_server_init(&srv, o, false, d);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    struct mp_mcp_session *s = mcp_session_new(&srv);
    struct mcp_sink *sink = mcp_sink_new(SINK_STDIO);
    if (!s || !sink) {
        mcp_session_unref(s);
        mcp_sink_unref(sink);
        mcp_server_fini(&srv);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    mcp_reaper_start(&srv);
    struct mp_buf line;
    mp_buf_init(&line, srv.opts.max_message + 1);
    char chunk[65536];
    bool too_long = false;
    for (;;) {
        ssize_t n = read(0, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        size_t start = 0;
        for (size_t i = 0; i < (size_t)n; i++) {
            if (chunk[i] != '\n')
                continue;
            if (!too_long && mp_buf_append(&line, chunk + start, i - start) != 0)
                too_long = true;
            start = i + 1;
            if (too_long) {
                json_t *r = mcp_error(NULL, -32600, "Invalid Request: message too large", NULL);
                mcp_sink_emit(sink, r, true);
                json_decref(r);
            } else {
                size_t len = line.len;
                while (len && (line.data[len - 1] == '\r' || line.data[len - 1] == ' '))
                    len--;
                if (len)
                    mcp_handle_text(s, line.data, len, sink);
            }
            mp_buf_reset(&line);
            too_long = false;
        }
        if (!too_long && start < (size_t)n &&
            mp_buf_append(&line, chunk + start, (size_t)n - start) != 0)
            too_long = true;
    }
    mp_buf_fini(&line);
    mcp_session_cancel_all(s);
    mcp_server_drain(&srv);
    mcp_session_unref(s);
    mcp_sink_unref(sink);
    mcp_server_fini(&srv);
    return 0;
}
