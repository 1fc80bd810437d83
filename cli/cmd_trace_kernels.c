/* `magpie trace kernels`: the kernel summary of one trace or a directory of
 * rank traces (table, --json, --csv, per-rank CSVs). */
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

static const struct cli_opt kernels_opts[] = {
    {"json", 0, CLI_NOARG, 'j', NULL, "JSON: kernel_summary (merged), top_bottlenecks, ranks[]", 0},
    {"csv", 0, CLI_NOARG, 'c', NULL, "merged table as CSV (name,time_ms,percent,calls) on stdout",
     0},
    {NULL, 'o', CLI_ARG, 'o', "DIR",
     "also write DIR/kernel_summary.csv and, with several ranks, "
     "DIR/kernel_summary_rank<N>.csv",
     0},
    {"top-k", 0, CLI_ARG, 'k', "N", "rows in the terminal table (default 20; 0 = all)", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_kernels = {
    .name = "trace kernels",
    .args = "PATH",
    .summary = "time per kernel name (Magpie's kernel_summary), per rank and merged; PATH is "
               "a trace file or a directory of rank traces",
    .intro = "Sums the duration and count of every event with cat \"kernel\" by name, for\n"
             "each rank trace and merged over ranks (Magpie reads only its largest file).\n",
    .opts = kernels_opts,
    .outro = "examples:\n"
             "  magpie trace kernels trace.json.gz\n"
             "  magpie trace kernels results/benchmark_vllm_x/torch_trace --json\n",
};

static void kernels_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_kernels);
}

static int write_table(const char *dir, const char *name, const struct mp_kernel_table *t,
                       struct mp_diag *d)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = mp_kernel_summary_csv(t, &b);
    if (!rc)
        rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, d);
    else
        rc = mp_diag_set(d, rc, "out of memory");
    mp_buf_fini(&b);
    return rc;
}

int cli_trace_kernels(int argc, char **argv)
{
    bool json = false, csv = false, quiet = false;
    const char *out_dir = NULL;
    long top_k = 20;
    int c;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_trace_kernels);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'c':
            csv = true;
            break;
        case 'o':
            out_dir = optarg;
            break;
        case 'k': {
            char *end;
            top_k = strtol(optarg, &end, 10);
            if (end == optarg || *end || top_k < 0) {
                fprintf(stderr, "magpie: error: --top-k expects a non-negative integer\n");
                return EXIT_USAGE;
            }
            break;
        }
        case 'q':
            quiet = true;
            break;
        case 'h':
            kernels_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace kernels\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || (json && csv)) {
        fprintf(stderr, "magpie: error: trace kernels takes one PATH and at most one of "
                        "--json/--csv\n");
        kernels_usage(stderr);
        return EXIT_USAGE;
    }
    struct cli_progress *p = cli_progress_new("reading traces", !quiet && !json && !csv);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_kernel_summary *s = NULL;
    int rc = mp_kernel_summary_run(argv[optind], cli_progress_bytes, p, &s, &d);
    cli_progress_finish(p);
    if (rc)
        return cli_report_error(&d, rc);
    int exit_code = EXIT_OK;
    if (out_dir) {
        rc = mp_fs_mkdirs(out_dir, &d);
        if (!rc && s->n_ranks > 1) {
            for (size_t i = 0; i < s->n_ranks && !rc; i++) {
                char name[64];
                snprintf(name, sizeof(name), "kernel_summary_rank%d.csv", s->ranks[i].rank);
                rc = write_table(out_dir, name, &s->ranks[i], &d);
            }
        }
        if (!rc)
            rc = write_table(out_dir, "kernel_summary.csv", &s->merged, &d);
        if (rc) {
            exit_code = cli_report_error(&d, rc);
            goto out;
        }
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (json) {
        rc = mp_kernel_summary_json(s, &b);
        if (!rc)
            rc = mp_buf_putc(&b, '\n');
    } else if (csv) {
        rc = mp_kernel_summary_csv(&s->merged, &b);
    } else {
        rc = mp_buf_printf(&b,
                           "Kernel summary: %zu rank(s), %zu kernel names, %.3f ms of "
                           "kernel time\n",
                           s->n_ranks, s->merged.n, s->merged.total_ms);
        for (size_t i = 0; i < s->n_ranks && !rc; i++)
            rc = mp_buf_printf(&b, "  rank %d: %.3f ms  %s\n", s->ranks[i].rank,
                               s->ranks[i].total_ms, s->ranks[i].trace_file);
        rc = rc ? rc : mp_buf_printf(&b, "\n%12s %8s %8s  %s\n", "time (ms)", "%", "calls", "name");
        for (size_t i = 0; i < s->merged.n && (top_k == 0 || (long)i < top_k) && !rc; i++) {
            const struct mp_kernel_row *r = &s->merged.rows[i];
            rc = mp_buf_printf(&b, "%12.3f %7.2f%% %8llu  %.120s\n", r->time_ms, r->percent,
                               (unsigned long long)r->calls, r->name);
        }
    }
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting output\n");
        exit_code = EXIT_FAIL;
    } else {
        fwrite(b.data, 1, b.len, stdout);
    }
    mp_buf_fini(&b);
    if (!exit_code && s->merged.n == 0) {
        fprintf(stderr, "magpie: no kernel events found\n");
        exit_code = EXIT_FAIL;
    }
out:
    mp_kernel_summary_free(s);
    return exit_code;
}
