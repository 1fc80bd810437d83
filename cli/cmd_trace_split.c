/* `magpie trace split`: cuts a serving trace into per-step and steady-state
 * sub-traces, with TraceLens_split_inference_trace's options and outputs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/steps.h>

#include "cli.h"

static void split_usage(FILE *f)
{
    fprintf(f,
            "usage: magpie trace split TRACE -o DIR [options]\n\n"
            "Splits a vLLM / SGLang / ATOM serving trace at its step annotations\n"
            "(user_annotation events such as execute_context_2(512)_generation_30(30),\n"
            "step[DECODE bs=32], decode[bs=64 tok=64 d=64]) into gzip sub-traces, and writes\n"
            "DIR/execution_details.json and .csv, as TraceLens_split_inference_trace does.\n\n"
            "options (TraceLens's names):\n"
            "  -o, --output-dir DIR      where sub-traces and execution_details go\n"
            "  -i, --iterations R        steps to use: all (default), N, or START:END\n"
            "  --store-single-iteration  one sub-trace per step\n"
            "  --find-steady-state       three windows from the steady state: mixed (prefill-\n"
            "                            decode ratio closest to the reference), decode_only,\n"
            "                            prefilldecode\n"
            "  --divide-phases           every steady-state run of same-phase steps into\n"
            "                            DIR/prefilldecodemix/ or DIR/decode_only/\n"
            "  --num-steps N             steady-state window length (default 32)\n"
            "  --CONC N --OSL L --R R    expected concurrency, output length and OSL range\n"
            "                            ratio: the ideal prefill-decode ratio 2*CONC/(OSL*(1+R))\n"
            "                            becomes the mixed window's reference\n"
            "  --gzip-level N            1 (default, fast) .. 9 (TraceLens's level)\n"
            "  -q, --quiet               no progress display\n\n"
            "exit status: 0 ok, 2 usage or input error (also: no step annotations found)\n\n"
            "examples:\n"
            "  magpie trace split rank0.pt.trace.json.gz -o split --find-steady-state \\\n"
            "      --store-single-iteration --num-steps 32 --CONC 64 --OSL 1024 --R 0.8\n"
            "  magpie trace split trace.json.gz -o split -i 10:20\n");
}

int cli_trace_split(int argc, char **argv)
{
    enum { S_SINGLE = 1000, S_SS, S_DIV, S_NSTEPS, S_CONC, S_OSL, S_R, S_GZ };
    static const struct option opts[] = {
        {"output-dir", required_argument, NULL, 'o'},
        {"iterations", required_argument, NULL, 'i'},
        {"store-single-iteration", no_argument, NULL, S_SINGLE},
        {"find-steady-state", no_argument, NULL, S_SS},
        {"divide-phases", no_argument, NULL, S_DIV},
        {"num-steps", required_argument, NULL, S_NSTEPS},
        {"CONC", required_argument, NULL, S_CONC},
        {"OSL", required_argument, NULL, S_OSL},
        {"R", required_argument, NULL, S_R},
        {"gzip-level", required_argument, NULL, S_GZ},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct mp_trace_split_opts o = {.num_steps = 32};
    bool quiet = false;
    double v;
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "o:i:qh", opts, NULL)) != -1) {
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
