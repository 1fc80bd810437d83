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
};

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
