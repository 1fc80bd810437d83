/* `magpie trace collective`: the multi-rank collective report (TraceLens's
 * NcclAnalyser) over a directory of rank traces. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/gap.h>
#include <magpie/trace_capture.h>
#include <magpie/tracelens.h>

#include "cli.h"
#include "opts.h"

enum { C_GLOB = 1000, C_WS, C_RX, C_GPN, C_DET, C_NODET };

static const struct cli_opt collective_opts[] = {
    {"output-csvs-dir", 'o', CLI_ARG, 'o', "DIR",
     "[--output_csvs_dir] where the CSVs go (required)", 0},
    {"trace-glob", 0, CLI_ARG, C_GLOB, "GLOB",
     "[--trace_glob] same as a PATH argument; so are --trace-dir [--trace_dir] and "
     "--trace-pattern [--trace_pattern] (its * is read as a glob)",
     0},
    {"trace-dir", 0, CLI_ARG, C_GLOB, "DIR", "same as --trace-glob", CLI_HIDDEN},
    {"trace-pattern", 0, CLI_ARG, C_GLOB, "PATTERN", "same as --trace-glob", CLI_HIDDEN},
    {"world-size", 0, CLI_ARG, C_WS, "N",
     "[--world_size] number of ranks; every rank 0..N-1 needs a file (default: highest rank "
     "+ 1)",
     0},
    {"rank-regex", 0, CLI_ARG, C_RX, "RE",
     "[--rank_regex] regex whose group (?P<rank>...) or group 1 is the rank (default "
     "'rank[\\[\\-_/]?(?P<rank>\\d+)', TraceLens's)",
     0},
    {"gpus-per-node", 0, CLI_ARG, C_GPN, "N",
     "[--gpus_per_node] node_id/node_span columns (default: deviceProperties of rank 0's "
     "trace)",
     0},
    {"detailed-analysis", 0, CLI_NOARG, C_DET, NULL,
     "[--detailed_analysis] nccl_long and nccl_implicit_sync (on by default, as in "
     "TraceLens)",
     0},
    {"no-detailed-analysis", 0, CLI_NOARG, C_NODET, NULL,
     "only the summaries and straggler_summary", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_collective = {
    .name = "trace collective",
    .args = "PATH... -o DIR",
    .summary = "multi-rank collective (NCCL/RCCL) report, TraceLens's "
               "multi_rank_collective_report (CSV sheets)",
    .intro = "TraceLens-compatible multi-rank collective report: the NCCL/RCCL kernels of every\n"
             "rank's torch-profiler trace, matched across ranks by process group and start\n"
             "order. Writes DIR/nccl_long.csv, nccl_summary_long.csv, nccl_implicit_sync.csv,\n"
             "nccl_summary_implicit_sync.csv and straggler_summary.csv with the columns, rows\n"
             "and number formatting of TraceLens_generate_multi_rank_collective_report_pytorch.\n\n"
             "PATH is a directory (its *.json.gz and *.json files), a glob pattern (quote it)\n"
             "or a trace file; the rank of each file comes from --rank-regex.\n",
    .opts_title = "options (TraceLens name in brackets)",
    .opts = collective_opts,
    .outro = "examples:\n"
             "  magpie trace collective results/run/torch_trace -o nccl/\n"
             "  magpie trace collective --trace-glob 'traces/*.pt.trace.json.gz' --world-size 8 "
             "\\\n"
             "      --rank-regex 'rank-(\\d+)\\.' -o nccl/\n",
};

static void collective_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_collective);
}

int cli_trace_collective(int argc, char **argv)
{
    const char *out_dir = NULL, *rank_regex = "rank[\\[\\-_/]?(?P<rank>\\d+)";
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!inputs) {
        fprintf(stderr, "magpie: error: out of memory\n");
        return EXIT_FAIL;
    }
    size_t n_in = 0;
    long world = 0, gpn = 0;
    bool quiet = false, detailed = true;
    int c;
    char *end;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_trace_collective);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case 'o':
            out_dir = optarg;
            break;
        case C_GLOB:
            inputs[n_in++] = optarg;
            break;
        case C_WS:
            world = strtol(optarg, &end, 10);
            if (*end || world <= 0) {
                fprintf(stderr, "magpie: error: --world-size wants a positive integer\n");
                free(inputs);
                return EXIT_USAGE;
            }
            break;
        case C_RX:
            rank_regex = optarg;
            break;
        case C_GPN:
            gpn = strtol(optarg, &end, 10);
            if (*end || gpn <= 0 || gpn > 1000000) {
                fprintf(stderr, "magpie: error: --gpus-per-node wants a positive integer\n");
                free(inputs);
                return EXIT_USAGE;
            }
            break;
        case C_DET:
            detailed = true;
            break;
        case C_NODET:
            detailed = false;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            collective_usage(stdout);
            free(inputs);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace collective\n",
                    argv[optind - 1]);
            free(inputs);
            return EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++)
        inputs[n_in++] = argv[i];
    if (n_in == 0 || !out_dir) {
        fprintf(stderr,
                "magpie: error: trace collective takes PATH (or --trace-glob) and -o DIR\n");
        collective_usage(stderr);
        free(inputs);
        return EXIT_USAGE;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    size_t ws = (size_t)world;
    char **paths = NULL;
    int rc = mp_nccl_find_ranks(inputs, n_in, rank_regex, &ws, &paths, &d);
    free(inputs);
    if (rc)
        return cli_report_error(&d, rc);
    struct cli_progress *p = cli_progress_new("reading traces", !quiet);
    struct mp_nccl_opts o = {.paths = (const char *const *)paths,
                             .world_size = ws,
                             .gpus_per_node = (int)gpn,
                             .detailed = detailed,
                             .on_progress = cli_progress_bytes,
                             .progress_user = p};
    struct mp_report *r = NULL;
    uint64_t t0 = mp_time_ns();
    rc = mp_nccl_report_build(&o, &r, &d);
    cli_progress_finish(p);
    mp_nccl_paths_free(paths, ws);
    if (!rc)
        rc = mp_report_write_csvs(r, out_dir, &d);
    if (rc) {
        mp_report_free(r);
        return cli_report_error(&d, rc);
    }
    printf("%zu ranks, %zu collective kernels in %.3f s\n", ws, r->gpu_events,
           (double)(mp_time_ns() - t0) / 1e9);
    printf("wrote %zu sheet(s) to %s\n", r->n, out_dir);
    mp_report_free(r);
    return EXIT_OK;
}
