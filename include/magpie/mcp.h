/* magpie mcp: magpie's tools for AI agents over the Model Context Protocol.
 *
 * JSON-RPC 2.0 over stdio (one message per line) or streamable HTTP
 * (libmicrohttpd, POST/GET/DELETE on /mcp). Both protocol eras are served:
 * the initialize handshake (revisions 2024-11-05 .. 2025-11-25) and the
 * stateless per-request envelope of 2026-07-28 (server/discover). Every tool
 * call runs in a child process (`magpie mcp --worker`) in its own process
 * group, so a cancelled call ends with everything it started.
 *
 * The tool table (src/mcp/tooltab.c) is the one source of the JSON Schemas
 * served by tools/list, the argument checks, the dispatch and docs/mcp.md.
 */
#ifndef MAGPIE_MCP_H
#define MAGPIE_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

struct mp_mcp_opts {
    const char *self_exe;   /* magpie executable for tool workers (default /proc/self/exe) */
    const char *host;       /* HTTP: address to bind (default 127.0.0.1) */
    int port;               /* HTTP: port (default 8000; 0 = any free port) */
    const char *auth_token; /* HTTP: required bearer token, NULL = none */
    const char *port_file;  /* HTTP: write the bound port here once listening (tests) */
    int max_sessions;       /* HTTP: legacy sessions kept at once (default 256) */
    /* Bounds (0 = the default in parentheses; docs/mcp.md "Security model"). */
    const char *const *allowed_hosts; /* HTTP: extra Host/Origin names, NULL-terminated */
    int max_connections;              /* HTTP: open connections in all (256) */
    int max_connections_per_client;   /* HTTP: open connections per client address (64) */
    double header_timeout_s;          /* HTTP: a request's headers must arrive within (10) */
    double body_timeout_s;            /* HTTP: its body within (60) */
    double idle_timeout_s;            /* HTTP: an idle keep-alive connection is closed after (60) */
    double session_timeout_s;         /* HTTP: a session idle this long is ended (3600) */
    size_t max_message;               /* one message's bytes (16 MiB) */
    size_t max_buffered;              /* HTTP: request bodies buffered at once (64 MiB) */
    int max_calls;                    /* tool calls running at once, in all (16) */
    int max_calls_per_session;        /* tool calls running at once per session (8) */
    int max_queued;                   /* tool calls waiting for a slot, in all (64) */
    int max_batch;                    /* messages in one JSON-RPC batch (32) */
};

/* The defaults of the bounds above. */
#define MP_MCP_DEF_MAX_CONNECTIONS 256
#define MP_MCP_DEF_MAX_CONN_PER_CLIENT 64
#define MP_MCP_DEF_HEADER_TIMEOUT_S 10.0
#define MP_MCP_DEF_BODY_TIMEOUT_S 60.0
#define MP_MCP_DEF_IDLE_TIMEOUT_S 60.0
#define MP_MCP_DEF_SESSION_TIMEOUT_S 3600.0
#define MP_MCP_DEF_MAX_MESSAGE ((size_t)16 << 20)
#define MP_MCP_DEF_MAX_BUFFERED ((size_t)64 << 20)
#define MP_MCP_DEF_MAX_CALLS 16
#define MP_MCP_DEF_MAX_CALLS_PER_SESSION 8
#define MP_MCP_DEF_MAX_QUEUED 64
#define MP_MCP_DEF_MAX_BATCH 32
#define MP_MCP_DEF_MAX_SESSIONS 256

/* Fills every zero bound of o with its default. */
void mp_mcp_opts_defaults(struct mp_mcp_opts *o);
/* True when host (a numeric address) is a loopback address. */
bool mp_mcp_host_is_loopback(const char *host);

/* Serves one client on stdin/stdout until stdin ends. Returns 0 or MP_E*. */
int mp_mcp_serve_stdio(const struct mp_mcp_opts *o, struct mp_diag *d);
/* Serves streamable HTTP until SIGINT/SIGTERM. Returns 0 or MP_E*. */
int mp_mcp_serve_http(const struct mp_mcp_opts *o, struct mp_diag *d);
/* Body of the hidden `magpie mcp --worker TOOL ARGS_FILE`: runs one tool on
 * the arguments in ARGS_FILE, prints its JSON result on stdout; exit status
 * 0 ok, 1 the tool failed (stdout holds {"error": ...}), 2 bad call. */
int mp_mcp_worker_main(const char *tool, const char *args_path);
/* docs/mcp.md's tool reference, generated from the tool table. */
int mp_mcp_tools_markdown(struct mp_buf *out);
/* The JSON array of tools/list. */
int mp_mcp_tools_json(struct mp_buf *out);

/* For tests and the fuzz target: feeds one stdio-framed message (a line
 * without its newline) to an in-memory session that never starts tools;
 * the replies (zero or more lines) are appended to out. */
struct mp_mcp_session;
struct mp_mcp_session *mp_mcp_session_new_dry(void);
void mp_mcp_session_free(struct mp_mcp_session *s);
int mp_mcp_session_feed(struct mp_mcp_session *s, const char *msg, size_t len, struct mp_buf *out);

#endif
