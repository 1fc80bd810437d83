/* `magpie mcp`: serve magpie's tools over the Model Context Protocol, on
 * stdio (default) or streamable HTTP. Parses Magpie's flags and environment
 * (MAGPIE_HOST, MAGPIE_PORT) plus magpie's own (--auth-token /
 * MAGPIE_MCP_TOKEN), then hands over to the mcp module. Also hosts the
 * hidden `mcp --worker TOOL ARGS` entry that runs one tool call. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/mcp.h>

#include "cli.h"
#include "opts.h"

enum { O_TRANSPORT = 1000, O_HOST, O_PORT, O_TOKEN, O_PORTFILE, O_LIST, O_MD, O_WORKER };

static const struct cli_opt mcp_opts[] = {
    {"transport", 0, CLI_ARG, O_TRANSPORT, "T", "stdio (default) or streamable-http (alias: http)",
     0},
    {"host", 0, CLI_ARG, O_HOST, "H",
     "HTTP bind address (default $MAGPIE_HOST, else 127.0.0.1; any other address prints a "
     "warning)",
     0},
    {"port", 0, CLI_ARG, O_PORT, "P", "HTTP port (default $MAGPIE_PORT, else 8000; 0 = any free)",
     0},
    {"auth-token", 0, CLI_ARG, O_TOKEN, "T",
     "HTTP: require 'Authorization: Bearer T' (default $MAGPIE_MCP_TOKEN)", 0},
    {"port-file", 0, CLI_ARG, O_PORTFILE, "F", "HTTP: write the bound port to F once listening", 0},
    {"list-tools", 0, CLI_NOARG, O_LIST, NULL,
     "print the tools/list JSON (--markdown: the docs table)", 0},
    {"markdown", 0, CLI_NOARG, O_MD, NULL, "with --list-tools: the docs table", 0},
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
             "revisions 2024-11-05 .. 2025-11-25 (initialize handshake) and 2026-07-28.\n",
    .opts = mcp_opts,
    .outro = "HTTP endpoints: POST/GET/DELETE /mcp, GET /health -> {\"status\":\"ok\"}.\n\n"
             "examples:\n"
             "  magpie mcp\n"
             "  magpie mcp --transport streamable-http --port 8000\n"
             "  claude mcp add magpie -- magpie mcp\n",
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_mcp);
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
    o.auth_token = getenv("MAGPIE_MCP_TOKEN");
    bool list = false, md = false;
    int c;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_mcp);
    while ((c = cli_next(&op, argc, argv)) != -1) {
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
            o.auth_token = optarg;
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
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s' for mcp\n",
                    argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (list) {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        int rc = md ? mp_mcp_tools_markdown(&b) : mp_mcp_tools_json(&b);
        fwrite(mp_buf_cstr(&b), 1, b.len, stdout);
        mp_buf_fini(&b);
        return rc ? EXIT_FAIL : EXIT_OK;
    }
    if (o.auth_token && !*o.auth_token)
        o.auth_token = NULL;
    o.port = 8000;
    if (port && *port) {
        char *end;
        long p = strtol(port, &end, 10);
        if (*end || p < 0 || p > 65535) {
            fprintf(stderr, "magpie: error: port must be an integer 0..65535, not '%s'\n", port);
            return EXIT_USAGE;
        }
        o.port = (int)p;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc;
    if (strcmp(transport, "stdio") == 0) {
        rc = mp_mcp_serve_stdio(&o, &d);
    } else if (strcmp(transport, "streamable-http") == 0 || strcmp(transport, "http") == 0) {
        rc = mp_mcp_serve_http(&o, &d);
    } else {
        fprintf(stderr, "magpie: error: --transport must be stdio or streamable-http, not '%s'\n",
                transport);
        return EXIT_USAGE;
    }
    return rc ? cli_report_error(&d, rc) : EXIT_OK;
}
