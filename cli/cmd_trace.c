/* `magpie trace <sub>`: trace analyses, one file per subcommand
 * (cmd_trace_kernels.c, cmd_trace_report.c, cmd_trace_collective.c,
 * cmd_trace_split.c, ...); this file is the `trace` command and its dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"

static const struct cli_opt trace_opts[] = {
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace = {
    .name = "trace",
    .args = "<command>",
    .summary = "analyse torch-profiler traces (kernels, gaps, ...)",
    .opts = trace_opts,
    .outro = "`magpie trace <command> --help` for a command's options.\n",
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace);
}

int cmd_trace(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (strcmp(argv[1], "kernels") == 0)
        return cli_trace_kernels(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return cli_trace_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "collective") == 0)
        return cli_trace_collective(argc - 1, argv + 1);
    if (strcmp(argv[1], "split") == 0)
        return cli_trace_split(argc - 1, argv + 1);
    if (strcmp(argv[1], "stages") == 0)
        return cli_trace_stages(argc - 1, argv + 1);
    if (strcmp(argv[1], "sources") == 0)
        return cli_trace_sources(argc - 1, argv + 1);
    if (strcmp(argv[1], "compare") == 0)
        return cli_trace_compare(argc - 1, argv + 1);
    if (strcmp(argv[1], "replay") == 0)
        return cli_trace_replay(argc - 1, argv + 1);
    fprintf(stderr, "magpie: error: unknown trace command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
