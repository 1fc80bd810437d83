/* `magpie mcp`: serve magpie's tools over the Model Context Protocol, on
 * stdio (default) or streamable HTTP. Parses Magpie's flags and environment
 * (MAGPIE_HOST, MAGPIE_PORT) plus magpie's own (the token from
 * --auth-token-file, MAGPIE_MCP_TOKEN or --auth-token; the bounds), then
 * hands over to the mcp module. Also hosts the hidden `mcp --worker TOOL
 * ARGS` entry that runs one tool call. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/mcp.h>

#include "cli.h"
#include "opts.h"

enum {
    O_TRANSPORT = 1000,
    O_HOST,
    O_PORT,
    O_TOKEN,
    O_TOKEN_FILE,
    O_ALLOWED_HOST,
    O_PORTFILE,
    O_LIST,
    O_MD,
    O_WORKER,
    O_MAX_CONN,
    O_MAX_CONN_CLIENT,
    O_HEADER_TIMEOUT,
    O_BODY_TIMEOUT,
    O_IDLE_TIMEOUT,
    O_SESSION_TIMEOUT,
    O_MAX_SESSIONS,
    O_MAX_MESSAGE,
    O_MAX_BUFFERED,
    O_MAX_CALLS,
    O_MAX_CALLS_SESSION,
    O_MAX_QUEUED,
    O_MAX_BATCH,
};

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct cli_opt mcp_opts[] = {
    {"transport", 0, CLI_ARG, O_TRANSPORT, "T", "stdio (default) or streamable-http (alias: http)",
     0},
    {"host", 0, CLI_ARG, O_HOST, "H",
     "HTTP bind address (default $MAGPIE_HOST, else 127.0.0.1); an address other than loopback "
     "needs a token",
     0},
    {"port", 0, CLI_ARG, O_PORT, "P", "HTTP port (default $MAGPIE_PORT, else 8000; 0 = any free)",
     0},
    {"auth-token-file", 0, CLI_ARG, O_TOKEN_FILE, "F",
     "HTTP: require 'Authorization: Bearer TOKEN', TOKEN being F's first line; F must be readable "
     "by its owner only (mode 0600)",
     0},
    {"auth-token", 0, CLI_ARG, O_TOKEN, "T",
     "HTTP: require 'Authorization: Bearer T' (default $MAGPIE_MCP_TOKEN); visible in ps, so "
     "prefer --auth-token-file",
     0},
    {"allowed-host", 0, CLI_ARG, O_ALLOWED_HOST, "NAME",
     "HTTP: also answer requests whose Host (or Origin) is NAME (repeatable; '*' = any); loopback "
     "names and the bound address are always answered",
     0},
    {"port-file", 0, CLI_ARG, O_PORTFILE, "F", "HTTP: write the bound port to F once listening", 0},
    {"list-tools", 0, CLI_NOARG, O_LIST, NULL,
     "print the tools/list JSON (--markdown: the docs table)", 0},
    {"markdown", 0, CLI_NOARG, O_MD, NULL, "with --list-tools: the docs table", 0},
    {NULL, 0, 0, 0, NULL, "limits (docs/mcp.md, Security model)", 0},
    {"max-calls", 0, CLI_ARG, O_MAX_CALLS, "N",
     "tool calls running at once, in all (default " STR(MP_MCP_DEF_MAX_CALLS) ")", 0},
    {"max-calls-per-session", 0, CLI_ARG, O_MAX_CALLS_SESSION, "N",
     "tool calls running at once per session (default " STR(MP_MCP_DEF_MAX_CALLS_PER_SESSION) ")",
     0},
    {"max-queued", 0, CLI_ARG, O_MAX_QUEUED, "N",
     "tool calls waiting for a slot, in all; one more is refused as busy (default " STR(
         MP_MCP_DEF_MAX_QUEUED) ")",
     0},
    {"max-batch", 0, CLI_ARG, O_MAX_BATCH, "N",
     "messages in one JSON-RPC batch (default " STR(MP_MCP_DEF_MAX_BATCH) ")", 0},
    {"max-message", 0, CLI_ARG, O_MAX_MESSAGE, "BYTES", "bytes of one message (default 16 MiB)", 0},
    {"max-sessions", 0, CLI_ARG, O_MAX_SESSIONS, "N",
     "HTTP: sessions open at once (default " STR(MP_MCP_DEF_MAX_SESSIONS) ")", 0},
    {"session-timeout", 0, CLI_ARG, O_SESSION_TIMEOUT, "S",
     "HTTP: end a session idle for S seconds (default 3600)", 0},
    {"max-connections", 0, CLI_ARG, O_MAX_CONN, "N",
     "HTTP: open connections, in all (default " STR(MP_MCP_DEF_MAX_CONNECTIONS) ")", 0},
    {"max-connections-per-client", 0, CLI_ARG, O_MAX_CONN_CLIENT, "N",
     "HTTP: open connections per client address (default " STR(MP_MCP_DEF_MAX_CONN_PER_CLIENT) ")",
     0},
    {"header-timeout", 0, CLI_ARG, O_HEADER_TIMEOUT, "S",
     "HTTP: close a connection whose request headers are not all in after S seconds (default "
     "10)",
     0},
    {"body-timeout", 0, CLI_ARG, O_BODY_TIMEOUT, "S",
     "HTTP: close a connection whose request body is not all in S seconds after its headers "
     "(default 60)",
     0},
    {"idle-timeout", 0, CLI_ARG, O_IDLE_TIMEOUT, "S",
     "HTTP: close a keep-alive connection idle for S seconds (default 60)", 0},
    {"max-buffered", 0, CLI_ARG, O_MAX_BUFFERED, "BYTES",
     "HTTP: request body bytes held at once, all connections together (default 64 MiB)", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {"worker", 0, CLI_NOARG, O_WORKER, "TOOL ARGS",
     "internal: `mcp --worker TOOL ARGS` runs one tool call", CLI_HIDDEN},
    {0},
};

const struct cli_cmd cli_cmd_mcp = {
    .name = "mcp",
    .summary = "serve magpie's tools over the Model Context Protocol",
    .intro = "Serve magpie's tools (hardware_spec, analyze, compare, gap_analysis, benchmark,\n"
             "trace_report, ...) to AI agents over the Model Context Protocol. Protocol\n"
             "revisions 2024-11-05 .. 2025-11-25 (initialize handshake) and 2026-07-28.\n"
             "The tools run commands as you (a kernel's testcase, a compiler, an engine):\n"
             "serve HTTP beyond loopback only with a token (docs/mcp.md, Security model).\n",
    .opts = mcp_opts,
    .outro = "HTTP endpoints: POST/GET/DELETE /mcp, GET /health -> {\"status\":\"ok\"}.\n\n"
             "exit status: 0 served and stopped, 1 failed while serving, 2 bad option or token\n"
             "file, or a non-loopback --host without a token.\n\n"
             "examples:\n"
             "  magpie mcp\n"
             "  magpie mcp --transport streamable-http --port 8000\n"
             "  magpie mcp --transport http --host 0.0.0.0 --auth-token-file ~/.magpie-token\n"
             "  claude mcp add magpie -- magpie mcp\n",
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_mcp);
}

/* The token: F's first line, F owned by us and closed to group and others. */
static int read_token_file(const char *path, char **out)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "magpie: error: --auth-token-file %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return EXIT_USAGE;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid()) {
        fprintf(stderr,
                "magpie: error: --auth-token-file %s: must be a regular file of yours readable "
                "by you only (chmod 600 %s)\n",
                path, path);
        close(fd);
        return EXIT_USAGE;
    }
    char buf[1025];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        n = 0;
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    if (!buf[0] || n == (ssize_t)sizeof(buf) - 1) {
        fprintf(stderr,
                "magpie: error: --auth-token-file %s: the first line must hold the token (1 to "
                "1023 bytes)\n",
                path);
        return EXIT_USAGE;
    }
    *out = mp_strdup(buf);
    return *out ? EXIT_OK : EXIT_FAIL;
}

static int parse_count(const char *opt, const char *s, int *out)
{
    double v;
    if (cli_parse_double(opt, s, &v) != 0)
        return EXIT_USAGE;
    if (v < 1 || v > 1e6 || v != (double)(int)v) {
        fprintf(stderr, "magpie: error: --%s must be a whole number from 1 to 1000000, not '%s'\n",
                opt, s);
        return EXIT_USAGE;
    }
    *out = (int)v;
    return EXIT_OK;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
    if (cli_parse_double(opt, s, out) != 0)
        return EXIT_USAGE;
    if (!(*out > 0 && *out <= 1e7)) {
        fprintf(stderr, "magpie: error: --%s must be a number of seconds above 0, not '%s'\n", opt,
                s);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int parse_bytes(const char *opt, const char *s, size_t *out)
{
    double v;
    if (cli_parse_double(opt, s, &v) != 0)
        return EXIT_USAGE;
    if (!(v >= 1024 && v <= (double)((size_t)1 << 40))) {
        fprintf(stderr, "magpie: error: --%s must be a byte count from 1024 to 2^40, not '%s'\n",
                opt, s);
        return EXIT_USAGE;
    }
    *out = (size_t)v;
    return EXIT_OK;
}

/* A bound option; EXIT_OK, EXIT_USAGE, or -1 when c is not one. */
static int bound_opt(int c, const char *arg, struct mp_mcp_opts *o)
{
    switch (c) {
    case O_MAX_CONN:
        return parse_count("max-connections", arg, &o->max_connections);
    case O_MAX_CONN_CLIENT:
        return parse_count("max-connections-per-client", arg, &o->max_connections_per_client);
    case O_HEADER_TIMEOUT:
        return parse_seconds("header-timeout", arg, &o->header_timeout_s);
    case O_BODY_TIMEOUT:
        return parse_seconds("body-timeout", arg, &o->body_timeout_s);
    case O_IDLE_TIMEOUT:
        return parse_seconds("idle-timeout", arg, &o->idle_timeout_s);
    case O_SESSION_TIMEOUT:
        return parse_seconds("session-timeout", arg, &o->session_timeout_s);
    case O_MAX_SESSIONS:
        return parse_count("max-sessions", arg, &o->max_sessions);
    case O_MAX_MESSAGE:
        return parse_bytes("max-message", arg, &o->max_message);
    case O_MAX_BUFFERED:
        return parse_bytes("max-buffered", arg, &o->max_buffered);
    case O_MAX_CALLS:
        return parse_count("max-calls", arg, &o->max_calls);
    case O_MAX_CALLS_SESSION:
        return parse_count("max-calls-per-session", arg, &o->max_calls_per_session);
    case O_MAX_QUEUED:
        return parse_count("max-queued", arg, &o->max_queued);
    case O_MAX_BATCH:
        return parse_count("max-batch", arg, &o->max_batch);
    default:
        return -1;
    }
}

int cmd_mcp(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    if (argc == 4 && strcmp(argv[1], "--worker") == 0)
        return mp_mcp_worker_main(argv[2], argv[3]);

    const char *transport = "stdio";
    struct mp_mcp_opts o = {0};
    o.host = getenv("MAGPIE_HOST");
    const char *port = getenv("MAGPIE_PORT");
    /* the token is ours alone: no child (tool, compiler, engine) inherits it */
    char *token = getenv("MAGPIE_MCP_TOKEN") ? mp_strdup(getenv("MAGPIE_MCP_TOKEN")) : NULL;
    unsetenv("MAGPIE_MCP_TOKEN");
    const char *token_file = NULL;
    const char *allowed[65];
    int nallowed = 0;
    bool list = false, md = false;
    int c, rc = EXIT_OK;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_mcp);
    while (rc == EXIT_OK && (c = cli_next(&op, argc, argv)) != -1) {
        int b = bound_opt(c, optarg, &o);
        if (b >= 0) {
            rc = b;
            continue;
        }
        switch (c) {
        case O_TRANSPORT:
            transport = optarg ? optarg : transport; /* required_argument: never NULL */
            break;
        case O_HOST:
            o.host = optarg;
            break;
        case O_PORT:
            port = optarg;
            break;
        case O_TOKEN:
            if (!optarg)
                break; /* required_argument: never NULL */
            free(token);
            token = mp_strdup(optarg);
            fprintf(stderr, "magpie: warning: --auth-token shows the token to every user of this "
                            "machine (ps); use --auth-token-file F or $MAGPIE_MCP_TOKEN\n");
            memset(optarg, 'x', strlen(optarg)); /* out of /proc/PID/cmdline from now on */
            break;
        case O_TOKEN_FILE:
            token_file = optarg;
            break;
        case O_ALLOWED_HOST:
            if (nallowed == 64) {
                fprintf(stderr, "magpie: error: at most 64 --allowed-host\n");
                rc = EXIT_USAGE;
            } else {
                allowed[nallowed++] = optarg;
            }
            break;
        case O_PORTFILE:
            o.port_file = optarg;
            break;
        case O_LIST:
            list = true;
            break;
        case O_MD:
            md = true;
            break;
        case 'h':
            usage(stdout);
            free(token);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s' for mcp\n",
                    argv[optind - 1]);
            usage(stderr);
            rc = EXIT_USAGE;
        }
    }
    allowed[nallowed] = NULL;
    o.allowed_hosts = allowed;
    if (rc == EXIT_OK && optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && token_file) {
        free(token);
        token = NULL;
        rc = read_token_file(token_file, &token);
    }
    if (rc != EXIT_OK) {
        free(token);
        return rc;
    }
    if (list) {
        free(token);
        struct mp_buf b;
        mp_buf_init(&b, 0);
        int lr = md ? mp_mcp_tools_markdown(&b) : mp_mcp_tools_json(&b);
        fwrite(mp_buf_cstr(&b), 1, b.len, stdout);
        mp_buf_fini(&b);
        return lr ? EXIT_FAIL : EXIT_OK;
    }
    o.auth_token = token && *token ? token : NULL;
    o.port = 8000;
    if (port && *port) {
        char *end;
        long p = strtol(port, &end, 10);
        if (*end || p < 0 || p > 65535) {
            fprintf(stderr, "magpie: error: port must be an integer 0..65535, not '%s'\n", port);
            free(token);
            return EXIT_USAGE;
        }
        o.port = (int)p;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    if (strcmp(transport, "stdio") == 0) {
        rc = mp_mcp_serve_stdio(&o, &d);
    } else if (strcmp(transport, "streamable-http") == 0 || strcmp(transport, "http") == 0) {
        rc = mp_mcp_serve_http(&o, &d);
    } else {
        fprintf(stderr, "magpie: error: --transport must be stdio or streamable-http, not '%s'\n",
                transport);
        free(token);
        return EXIT_USAGE;
    }
    if (token) {
        memset(token, 0, strlen(token));
        free(token);
    }
    return rc ? cli_report_error(&d, rc) : EXIT_OK;
}
