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

static void usage(FILE *f)
{
    fprintf(f, "usage: magpie mcp [--transport stdio|streamable-http] [--host H] [--port P]\n"
               "                  [--auth-token TOKEN] [--list-tools [--markdown]]\n\n"
               "Serve magpie's tools (hardware_spec, analyze, compare, gap_analysis, benchmark,\n"
               "trace_report, ...) to AI agents over the Model Context Protocol. Protocol\n"
               "revisions 2024-11-05 .. 2025-11-25 (initialize handshake) and 2026-07-28.\n\n"
               "options:\n"
               "  --transport T     stdio (default) or streamable-http (alias: http)\n"
               "  --host H          HTTP bind address (default $MAGPIE_HOST, else 127.0.0.1;\n"
               "                    any other address prints a warning)\n"
               "  --port P          HTTP port (default $MAGPIE_PORT, else 8000; 0 = any free)\n"
               "  --auth-token T    HTTP: require 'Authorization: Bearer T' (default\n"
               "                    $MAGPIE_MCP_TOKEN)\n"
               "  --port-file F     HTTP: write the bound port to F once listening\n"
               "  --list-tools      print the tools/list JSON (--markdown: the docs table)\n"
               "  -h, --help        this help\n\n"
               "HTTP endpoints: POST/GET/DELETE /mcp, GET /health -> {\"status\":\"ok\"}.\n\n"
               "examples:\n"
               "  magpie mcp\n"
               "  magpie mcp --transport streamable-http --port 8000\n"
               "  claude mcp add magpie -- magpie mcp\n");
}

int cmd_mcp(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    if (argc == 4 && strcmp(argv[1], "--worker") == 0)
        return mp_mcp_worker_main(argv[2], argv[3]);

    enum { O_TRANSPORT = 1000, O_HOST, O_PORT, O_TOKEN, O_PORTFILE, O_LIST, O_MD };
    static const struct option opts[] = {
        {"transport", required_argument, NULL, O_TRANSPORT},
        {"host", required_argument, NULL, O_HOST},
        {"port", required_argument, NULL, O_PORT},
        {"auth-token", required_argument, NULL, O_TOKEN},
        {"port-file", required_argument, NULL, O_PORTFILE},
        {"list-tools", no_argument, NULL, O_LIST},
        {"markdown", no_argument, NULL, O_MD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *transport = "stdio";
    struct mp_mcp_opts o = {0};
    o.host = getenv("MAGPIE_HOST");
    const char *port = getenv("MAGPIE_PORT");
    o.auth_token = getenv("MAGPIE_MCP_TOKEN");
    bool list = false, md = false;
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
