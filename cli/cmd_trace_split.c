/* `magpie trace split`: cuts a serving trace into per-step and steady-state
 * sub-traces, with TraceLens_split_inference_trace's options and outputs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/trace_steps.h>

#include "cli.h"
#include "opts.h"

enum { S_SINGLE = 1000, S_SS, S_DIV, S_NSTEPS, S_CONC, S_OSL, S_R, S_GZ };

static const struct cli_opt split_opts[] = {
    {"output-dir", 'o', CLI_ARG, 'o', "DIR", "where sub-traces and execution_details go", 0},
    {"iterations", 'i', CLI_ARG, 'i', "R", "steps to use: all (default), N, or START:END", 0},
    {"store-single-iteration", 0, CLI_NOARG, S_SINGLE, NULL, "one sub-trace per step", 0},
    {"find-steady-state", 0, CLI_NOARG, S_SS, NULL,
     "three windows from the steady state: mixed (prefill-decode ratio closest to the "
     "reference), decode_only, prefilldecode",
     0},
    {"divide-phases", 0, CLI_NOARG, S_DIV, NULL,
     "every steady-state run of same-phase steps into DIR/prefilldecodemix/ or "
     "DIR/decode_only/",
     0},
    {"num-steps", 0, CLI_ARG, S_NSTEPS, "N", "steady-state window length (default 32)", 0},
    {"CONC", 0, CLI_ARG, S_CONC, "N",
     "expected concurrency; with --OSL and --R the ideal prefill-decode ratio "
     "2*CONC/(OSL*(1+R)) becomes the mixed window's reference",
     0},
    {"OSL", 0, CLI_ARG, S_OSL, "L", "expected output length (see --CONC)", 0},
    {"R", 0, CLI_ARG, S_R, "R", "OSL range ratio (see --CONC)", 0},
    {"gzip-level", 0, CLI_ARG, S_GZ, "N", "1 (default, fast) .. 9 (TraceLens's level)", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_split = {
    .name = "trace split",
    .args = "TRACE -o DIR",
    .summary = "split a serving trace at its step annotations into per-step and "
               "steady-state sub-traces (TraceLens's splitter)",
    .intro = "Splits a vLLM / SGLang / ATOM serving trace at its step annotations\n"
             "(user_annotation events such as execute_context_2(512)_generation_30(30),\n"
             "step[DECODE bs=32], decode[bs=64 tok=64 d=64]) into gzip sub-traces, and writes\n"
             "DIR/execution_details.json and .csv, as TraceLens_split_inference_trace does.\n",
    .opts_title = "options (TraceLens's names)",
    .opts = split_opts,
    .outro = "exit status: 0 ok, 2 usage or input error (also: no step annotations found)\n\n"
             "examples:\n"
             "  magpie trace split rank0.pt.trace.json.gz -o split --find-steady-state \\\n"
             "      --store-single-iteration --num-steps 32 --CONC 64 --OSL 1024 --R 0.8\n"
             "  magpie trace split trace.json.gz -o split -i 10:20\n",
};

static void split_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_split);
}

int cli_trace_split(int argc, char **argv)
{
    struct mp_trace_split_opts o = {.num_steps = 32};
    bool quiet = false;
    double v;
    int c;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_trace_split);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case 'o':
            o.out_dir = optarg;
            break;
        case 'i':
            o.iterations = optarg;
            break;
        case S_SINGLE:
            o.store_single_iteration = true;
            break;
        case S_SS:
            o.find_steady_state = true;
            break;
        case S_DIV:
            o.divide_phases = true;
            break;
        case S_NSTEPS:
            if (cli_parse_double("--num-steps", optarg, &v) || v < 1 || v > 1e6 || v != (int)v) {
                fprintf(stderr, "magpie: error: --num-steps wants an integer >= 1\n");
                return EXIT_USAGE;
            }
            o.num_steps = (int)v;
            break;
        case S_CONC:
            if (cli_parse_double("--CONC", optarg, &v) || v != (long long)v) {
                fprintf(stderr, "magpie: error: --CONC wants an integer\n");
                return EXIT_USAGE;
            }
            o.workload.have_conc = true;
            o.workload.conc = (int64_t)v;
            break;
        case S_OSL:
            if (cli_parse_double("--OSL", optarg, &v) || !(v > 0)) {
                fprintf(stderr, "magpie: error: --OSL wants a positive number\n");
                return EXIT_USAGE;
            }
            o.workload.have_osl = true;
            o.workload.osl = v;
            break;
        case S_R:
            if (cli_parse_double("--R", optarg, &v))
                return EXIT_USAGE;
            o.workload.have_r = true;
            o.workload.r = v;
            break;
        case S_GZ:
            if (cli_parse_double("--gzip-level", optarg, &v) || v < 1 || v > 9 || v != (int)v) {
                fprintf(stderr, "magpie: error: --gzip-level wants 1..9\n");
                return EXIT_USAGE;
            }
            o.gzip_level = (int)v;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            split_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace split\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || !o.out_dir) {
        fprintf(stderr, "magpie: error: trace split takes one TRACE and -o DIR\n");
        split_usage(stderr);
        return EXIT_USAGE;
    }
    struct cli_progress *p = cli_progress_new("reading trace", !quiet);
    o.on_progress = cli_progress_bytes;
    o.progress_user = p;
    struct mp_trace_split_result r;
    struct mp_diag d;
    mp_diag_clear(&d);
    uint64_t t0 = mp_time_ns();
    int rc = mp_trace_split(argv[optind], &o, &r, &d);
    cli_progress_finish(p);
    if (rc)
        return cli_report_error(&d, rc);
    printf("%zu steps (%s annotations) in %llu events; wrote %zu sub-trace(s) to %s in %.3f s\n",
           r.nroots, r.root_tier == 1 ? "detailed" : "native", (unsigned long long)r.events_in, r.n,
           o.out_dir, (double)(mp_time_ns() - t0) / 1e9);
    if (r.nregions) {
        printf("steady-state regions:");
        for (size_t i = 0; i < r.nregions; i++)
            printf(" [%zu, %zu)", r.regions[i][0], r.regions[i][1]);
        printf("\n");
    }
    for (size_t i = 0; i < r.n; i++) {
        const struct mp_trace_split_entry *e = &r.entries[i];
        const char *b = strrchr(e->output_path, '/');
        printf("  %-4zu %3zu step(s) prefill %lld / mixed %lld / decode %lld  bs %-5lld gpu busy "
               "%10.1f us  %s\n",
               i, e->nsteps, (long long)e->phase.num_prefill, (long long)e->phase.num_prefilldecode,
               (long long)e->phase.num_decode, (long long)e->phase.avg_bs, e->gpu_busy_duration,
               b ? b + 1 : e->output_path);
    }
    mp_trace_split_result_fini(&r);
    return EXIT_OK;
}
