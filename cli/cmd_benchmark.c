/* `magpie benchmark`: with --trace-dir, Magpie's standalone gap analysis on
 * existing torch traces; serving benchmarks are a later addition. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/analysis.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: magpie benchmark --trace-dir DIR [options]\n"
        "       magpie benchmark [framework] --model M ...   (serving benchmark: not yet)\n\n"
        "Gap analysis on existing torch-profiler traces (Magpie-compatible): kernel time\n"
        "by name over every rank, written to OUT/gap_analysis/gap_analysis.csv and\n"
        "gap_analysis_rank<N>.csv.\n\n"
        "options:\n"
        "  --trace-dir DIR          torch_trace directory, or a workspace containing one\n"
        "  -o, --output-dir DIR     output root (default ./results); CSVs go to DIR/gap_analysis\n"
        "  --top-k N                rows kept (default 20)\n"
        "  --start-pct P            window start, 0-100 (default 0)\n"
        "  --end-pct P              window end, 0-100 (default 100)\n"
        "  --min-duration-us U      drop events shorter than U us (default 0)\n"
        "  --categories [C ...]     category allow list, substring, case-insensitive\n"
        "                           (default: kernel gpu; given with no value: all)\n"
        "  --ignore-categories [C ...]  deny list (default: gpu_user_annotation\n"
        "                           user_annotation; given with no value: none)\n"
        "  --no-rank-csv            do not write per-rank CSVs\n"
        "  --group-by name|normalized  aggregate by exact name (Magpie) or by kernel\n"
        "                           family (template args, hashes, tile sizes removed)\n"
        "  --skip-bad-ranks         warn about an unreadable rank and go on (Magpie does);\n"
        "                           default: a bad trace is an error (exit 2)\n"
        "  --json                   print the gap_analysis JSON object instead of the table\n"
        "  -q, --quiet              no progress display\n\n"
        "exit status: 0 ok, 1 no kernel events found, 2 usage or input error\n\n"
        "examples:\n"
        "  magpie benchmark --trace-dir results/benchmark_vllm_20260101_120000\n"
        "  magpie benchmark --trace-dir traces/ --top-k 10 --start-pct 20 --end-pct 80\n"
        "  magpie benchmark --trace-dir traces/ --group-by normalized --json\n");
}

static int parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end) {
        fprintf(stderr, "magpie: error: %s expects a number, not '%s'\n", opt, s);
        return EXIT_USAGE;
    }
    *out = v;
    return 0;
}

struct progress_ctx {
    struct cli_progress *p;
};

static void on_progress(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user)
{
    (void)bytes;
    struct progress_ctx *pc = user;
    cli_progress_update(pc->p, raw_pos, raw_size, "B");
}

/* Client-only mode (Magpie's BENCHMARK_BASE_URL): --base-url on the command
 * line, or the variable set and no --trace-dir. */
static bool client_mode(int argc, char **argv)
{
    bool trace = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--base-url") == 0 || strncmp(argv[i], "--base-url=", 11) == 0)
            return true;
        if (strcmp(argv[i], "--trace-dir") == 0 || strncmp(argv[i], "--trace-dir=", 12) == 0)
            trace = true;
    }
    const char *env = getenv("BENCHMARK_BASE_URL");
    return !trace && env && *env;
}

int cmd_benchmark(int argc, char **argv, const struct cli_global *g)
{
    if (client_mode(argc, argv))
        return cli_bench_client(argc, argv, g);

    enum {
        O_TRACE = 1000,
        O_TOPK,
        O_START,
        O_END,
        O_MIND,
        O_CATS,
        O_IGN,
        O_NORANK,
        O_GROUP,
        O_SKIP,
        O_JSON,
        O_FIND,
    };
    static const struct option opts[] = {
        {"trace-dir", required_argument, NULL, O_TRACE},
        {"output-dir", required_argument, NULL, 'o'},
        {"top-k", required_argument, NULL, O_TOPK},
        {"start-pct", required_argument, NULL, O_START},
        {"end-pct", required_argument, NULL, O_END},
        {"min-duration-us", required_argument, NULL, O_MIND},
        {"categories", no_argument, NULL, O_CATS},
        {"ignore-categories", no_argument, NULL, O_IGN},
        {"no-rank-csv", no_argument, NULL, O_NORANK},
        {"group-by", required_argument, NULL, O_GROUP},
        {"skip-bad-ranks", no_argument, NULL, O_SKIP},
        {"json", no_argument, NULL, O_JSON},
        {"find-kernel-sources", no_argument, NULL, O_FIND},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    const char *trace_dir = NULL, *out_root = "./results";
    bool rank_csv = true, json = false, quiet = false;
    int c, rc;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
        switch (c) {
        case O_TRACE:
            trace_dir = optarg;
            break;
        case 'o':
            out_root = optarg;
            break;
        case O_TOPK: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 1000000) {
                fprintf(stderr,
                        "magpie: error: --top-k expects a non-negative integer, not "
                        "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            cfg.top_k = (int)v;
            break;
        }
        case O_START:
            if ((rc = parse_double("--start-pct", optarg, &cfg.start_pct)))
                return rc;
            break;
        case O_END:
            if ((rc = parse_double("--end-pct", optarg, &cfg.end_pct)))
                return rc;
            break;
        case O_MIND:
            if ((rc = parse_double("--min-duration-us", optarg, &cfg.min_duration_us)))
                return rc;
            break;
        case O_CATS:
        case O_IGN: {
            /* nargs="*": take following words that are not options */
            const char **dst = c == O_CATS ? cfg.categories : cfg.ignore;
            int n = 0;
            while (optind < argc && argv[optind][0] != '-' && n < MP_GAP_MAX_PATTERNS)
                dst[n++] = argv[optind++];
            if (c == O_CATS) {
                cfg.n_categories = n;
                cfg.categories_all = n == 0;
            } else {
                cfg.n_ignore = n;
            }
            break;
        }
        case O_NORANK:
            rank_csv = false;
            break;
        case O_GROUP:
            if (strcmp(optarg, "normalized") == 0) {
                cfg.group_normalized = true;
            } else if (strcmp(optarg, "name") != 0) {
                fprintf(stderr,
                        "magpie: error: --group-by must be 'name' or 'normalized', not "
                        "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_SKIP:
            cfg.skip_bad_ranks = true;
            break;
        case O_JSON:
            json = true;
            break;
        case O_FIND:
            fprintf(stderr, "magpie: error: --find-kernel-sources is not implemented yet\n");
            return EXIT_USAGE;
        case 'q':
            quiet = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s' for benchmark\n",
                    argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!trace_dir) {
        fprintf(stderr, "magpie: error: serving benchmarks are not implemented yet; use "
                        "--trace-dir DIR for gap analysis on existing traces\n");
        return EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    struct progress_ctx pc = {cli_progress_new("reading traces", !quiet && !json)};
    cfg.on_progress = on_progress;
    cfg.progress_user = &pc;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gap_result *res = NULL;
    rc = mp_gap_analyze(trace_dir, &cfg, &res, &d);
    cli_progress_finish(pc.p);
    if (rc)
        return cli_report_error(&d, rc);
    int exit_code = EXIT_OK;
    char gap_dir[4200], csv_path[4300];
    snprintf(gap_dir, sizeof(gap_dir), "%s/gap_analysis", out_root);
    snprintf(csv_path, sizeof(csv_path), "%s/gap_analysis.csv", gap_dir);
    for (size_t i = 0; i < res->n_ranks; i++)
        if (res->ranks[i].error && !json)
            printf("Warning: %s\n", res->ranks[i].error);
    struct mp_buf out;
    mp_buf_init(&out, 0);
    if (res->n_merged == 0) {
        if (json) {
            mp_gap_json(res, &cfg, NULL, gap_dir, &out);
            printf("%s\n", mp_buf_cstr(&out));
        } else {
            printf("No kernel events found in traces.\n");
        }
        exit_code = EXIT_FAIL;
        goto done;
    }
    rc = mp_gap_write_csv(res, &cfg, gap_dir, rank_csv, &d);
    if (rc) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    rc = json ? mp_gap_json(res, &cfg, csv_path, gap_dir, &out)
              : mp_gap_summary(res, &cfg, gap_dir, &out);
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting output\n");
        exit_code = EXIT_FAIL;
        goto done;
    }
    fwrite(out.data, 1, out.len, stdout);
    if (json)
        fputc('\n', stdout);
done:
    mp_buf_fini(&out);
    mp_gap_result_free(res);
    return exit_code;
}
