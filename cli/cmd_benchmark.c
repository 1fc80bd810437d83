/* `magpie benchmark`: three modes behind one subcommand, as in Magpie.
 *   magpie benchmark vllm|sglang|atom --model M ...  or  -b bench.yaml
 *       a serving benchmark: launch the engine, load it, report (serve module);
 *   magpie benchmark --trace-dir DIR ...   gap analysis on existing traces;
 *   magpie benchmark --base-url URL ...    the load generator only
 *       (cmd_bench_client.c; also BENCHMARK_BASE_URL without a framework);
 *   magpie benchmark compare A B ...       run-to-run comparison
 *       (cmd_bench_compare.c).
 * This file parses flags and calls the library; it holds no logic of its own. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/gap.h>
#include <magpie/serve.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: magpie benchmark --trace-dir DIR [options]\n"
        "       (serving benchmarks: magpie benchmark vllm --help)\n\n"
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
        "  --find-kernel-sources    add Magpie's 15 source columns + source_line,\n"
        "                           source_symbol, source_confidence, source_candidates\n"
        "  --kernel-source-repos PATH...  source trees to search (docs/sources.md)\n"
        "  -q, --quiet              no progress display\n\n"
        "exit status: 0 ok, 1 no kernel events found, 2 usage or input error\n\n"
        "examples:\n"
        "  magpie benchmark --trace-dir results/benchmark_vllm_20260101_120000\n"
        "  magpie benchmark --trace-dir traces/ --top-k 10 --start-pct 20 --end-pct 80\n"
        "  magpie benchmark --trace-dir traces/ --group-by normalized --json\n");
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

static bool has_opt(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0 || (strncmp(argv[i], name, n) == 0 && argv[i][n] == '='))
            return true;
    return false;
}

/* A serving run: a framework word or a benchmark config. */
static bool serve_mode(int argc, char **argv)
{
    enum mp_serve_framework fw;
    for (int i = 1; i < argc; i++)
        if (mp_serve_framework_parse(argv[i], &fw) == 0 && argv[i - 1][0] != '-')
            return true;
    return has_opt(argc, argv, "--benchmark-config") || has_opt(argc, argv, "-b");
}

static int gap_mode(int argc, char **argv, const struct cli_global *g);
static int cli_serve(int argc, char **argv, const struct cli_global *g);

int cmd_benchmark(int argc, char **argv, const struct cli_global *g)
{
    if (argc > 1 && strcmp(argv[1], "compare") == 0)
        return cli_bench_compare(argc - 1, argv + 1, g);
    if (has_opt(argc, argv, "--trace-dir"))
        return gap_mode(argc, argv, g);
    if (has_opt(argc, argv, "--base-url"))
        return cli_bench_client(argc, argv, g);
    if (serve_mode(argc, argv))
        return cli_serve(argc, argv, g);
    const char *env = getenv("BENCHMARK_BASE_URL");
    if (env && *env)
        return cli_bench_client(argc, argv, g);
    if (has_opt(argc, argv, "--help") || has_opt(argc, argv, "-h"))
        return cli_serve(argc, argv, g);
    return gap_mode(argc, argv, g);
}

static int gap_mode(int argc, char **argv, const struct cli_global *g)
{
    (void)g;

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
        O_REPOS,
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
        {"kernel-source-repos", required_argument, NULL, O_REPOS},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    static const char *repos[256]; /* --kernel-source-repos PATH... */
    int n_repos = 0;
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
            if ((rc = cli_parse_double("--start-pct", optarg, &cfg.start_pct)))
                return rc;
            break;
        case O_END:
            if ((rc = cli_parse_double("--end-pct", optarg, &cfg.end_pct)))
                return rc;
            break;
        case O_MIND:
            if ((rc = cli_parse_double("--min-duration-us", optarg, &cfg.min_duration_us)))
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
            cfg.find_kernel_sources = true;
            break;
        case O_REPOS: /* PATH... : every following word up to the next option */
            if (n_repos >= 256)
                break;
            repos[n_repos++] = optarg;
            while (optind < argc && argv[optind][0] != '-' && n_repos < 256)
                repos[n_repos++] = argv[optind++];
            break;
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
        fprintf(stderr, "magpie: error: Specify --benchmark-config or provide framework and "
                        "--model (or --trace-dir DIR for gap analysis on existing traces)\n");
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
    struct mp_gap_sources srcs = {0};
    cfg.kernel_source_repos = repos;
    cfg.n_kernel_source_repos = n_repos;
    if (cfg.find_kernel_sources) {
        rc = mp_gap_find_sources(res, &cfg, &srcs, &d);
        if (rc) {
            mp_gap_result_free(res);
            return cli_report_error(&d, rc);
        }
        for (size_t i = 0; i < srcs.n_warnings; i++)
            fprintf(stderr, "magpie: warning: %s\n", srcs.warnings[i]);
        cfg.sources = &srcs;
    }
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
    mp_gap_sources_fini(&srcs);
    mp_gap_result_free(res);
    return exit_code;
}

/* ---- serving benchmarks ---- */

static void serve_usage(FILE *f)
{
    fprintf(f,
            "usage: magpie benchmark vllm|sglang|atom --model M [options]\n"
            "       magpie benchmark -b bench.yaml [options]\n"
            "       magpie benchmark --trace-dir DIR ...   (gap analysis: --trace-dir x --help)\n"
            "       magpie benchmark --base-url URL ...    (load generator only: --base-url x "
            "--help)\n\n"
            "Launches the engine (run mode local: its own process group, output in server.log;\n"
            "docker: `docker run` of the engine image), waits for /health and /v1/models, drives\n"
            "it with magpie's load generator (vLLM's metrics), captures torch-profiler traces\n"
            "between /start_profile and /stop_profile when asked, runs the kernel summary and\n"
            "gap analysis on them, and writes Magpie's workspace\n"
            "OUT/benchmark_<framework>_<YYYYmmdd_HHMMSS>/ (config.yaml, benchmark_report.json,\n"
            "summary.txt, server.log, inferencex_result.json, torch_trace/, gap_analysis/).\n\n"
            "options (flags override the YAML):\n"
            "  -b, --benchmark-config F  Magpie benchmark YAML (top-level benchmark: key)\n"
            "  -m, --model M             HF model id or local directory\n"
            "  -p, --precision P         fp8 (default), fp16, bf16, fp4, ...\n"
            "  --tp N                    envs.TP (1)\n"
            "  --concurrency N           envs.CONC (32)\n"
            "  --input-len N             envs.ISL (1024)\n"
            "  --output-len N            envs.OSL (512)\n"
            "  --num-prompts N           envs.NUM_PROMPTS (CONC*10; CONC when profiling)\n"
            "  --env KEY=VALUE           any other envs entry (repeatable)\n"
            "  --torch-profiler          capture torch-profiler traces (ad-hoc runs; YAML: on\n"
            "                            unless profiler.torch_profiler.enabled is false)\n"
            "  --no-torch-profiler       force it off\n"
            "  --system-profiler         profiler.system_profiler.enabled (recorded only)\n"
            "  --run-mode local|docker   default docker, as Magpie\n"
            "  --run-kind auto|measurement|diagnostic\n"
            "  --docker-image IMG        image instead of the table's\n"
            "  --privileged              docker: add --privileged (never by default)\n"
            "  --timeout S               timeout_seconds for the whole run (3600)\n"
            "  --ready-timeout S         how long the engine may take to get ready (2700)\n"
            "  --stall-timeout S         fail a request after S s without data (300)\n"
            "  --max-failed-requests N|P%%  failed requests the run may have and still\n"
            "                            succeed: a count or a percentage of the measured\n"
            "                            requests (YAML max_failed_requests; default 0)\n"
            "  --repeat N                N measured runs against one engine start after one\n"
            "                            warm-up, kept as run_1..N with their spread (YAML\n"
            "                            repeat; unprofiled); compare: benchmark compare\n"
            "  --inferencex-path P, --benchmark-script S   accepted for compatibility\n"
            "  -o, --output-dir DIR      workspace root (./results)\n"
            "  --json                    print benchmark_report.json instead of the summary\n"
            "  -q, --quiet               no progress display\n\n"
            "envs read from the environment when the config does not set them: NUM_PROMPTS,\n"
            "NUM_WARMUPS, MAX_MODEL_LEN, GPU_MEMORY_UTILIZATION, PORT (8888), EXTRA_VLLM_ARGS,\n"
            "EXTRA_SGLANG_ARGS, EXTRA_ATOM_ARGS, RANDOM_RANGE_RATIO, REQUEST_RATE,\n"
            "BENCHMARK_BASE_URL (benchmark a server magpie did not start), MODEL_REVISION,\n"
            "CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES (pinning).\n\n"
            "exit status: 0 benchmark succeeded, 1 it failed (the report says why), 2 usage or\n"
            "input error (nothing launched)\n\n"
            "examples:\n"
            "  magpie benchmark vllm --model meta-llama/Llama-3.1-8B-Instruct --run-mode local \\\n"
            "      --concurrency 16 --input-len 1024 --output-len 256\n"
            "  magpie benchmark vllm -m ./tiny-llama --run-mode local --torch-profiler \\\n"
            "      --env MAX_MODEL_LEN=1024 --env EXTRA_VLLM_ARGS='--dtype bfloat16' -o results\n"
            "  magpie benchmark -b examples/benchmark/vllm_local.yaml\n"
            "  magpie benchmark sglang -m Qwen/Qwen3-8B --docker-image lmsysorg/sglang:latest\n");
}

static void on_serve_progress(const struct mp_serve_progress *p, void *user)
{
    bool *drawn = user;
    if (p->total)
        fprintf(stderr, "\r\033[K%s: %zu/%zu done (%zu failed), %.0fs", p->stage, p->done, p->total,
                p->failed, p->elapsed_s);
    else
        fprintf(stderr, "\r\033[K%s... %.0fs", p->stage, p->elapsed_s);
    *drawn = true;
}

static void on_signal(int sig)
{
    (void)sig;
    /* async-signal-safe (kill(2) only); the run ends as for a dead engine */
    mp_serve_interrupt(); // NOLINT(bugprone-signal-handler,cert-sig30-c)
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

static int serve_num(const char *opt, const char *v, double lo, double *out)
{
    int rc = cli_parse_double(opt, v, out);
    if (rc == 0 && !(*out >= lo)) {
        fprintf(stderr, "magpie: error: %s expects a number >= %g, not '%s'\n", opt, lo, v);
        return EXIT_USAGE;
    }
    return rc;
}

static int serve_int(const char *opt, const char *v, const char *key, struct mp_serve_config *c)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x <= 0) {
        fprintf(stderr, "magpie: error: %s expects a positive integer, not '%s'\n", opt, v);
        return EXIT_USAGE;
    }
    mp_serve_config_setenv(c, key, v);
    return 0;
}

/* The env contract: these reach the config from the environment unless
 * the config sets them itself. */
static void env_contract(struct mp_serve_config *c)
{
    static const char *const keys[] = {"TP",
                                       "CONC",
                                       "ISL",
                                       "OSL",
                                       "NUM_PROMPTS",
                                       "NUM_WARMUPS",
                                       "MAX_MODEL_LEN",
                                       "GPU_MEMORY_UTILIZATION",
                                       "GPU_MEM_UTIL",
                                       "PORT",
                                       "EXTRA_VLLM_ARGS",
                                       "EXTRA_SGLANG_ARGS",
                                       "EXTRA_ATOM_ARGS",
                                       "RANDOM_RANGE_RATIO",
                                       "REQUEST_RATE",
                                       "BENCHMARK_BASE_URL",
                                       "MODEL_REVISION",
                                       "MAGPIE_BENCHMARK_ENDPOINT",
                                       "MAGPIE_BENCHMARK_BACKEND",
                                       "CUDA_VISIBLE_DEVICES",
                                       "HIP_VISIBLE_DEVICES",
                                       "ROCR_VISIBLE_DEVICES",
                                       NULL};
    for (const char *const *k = keys; *k; k++) {
        const char *v = getenv(*k);
        if (v && *v && !mp_serve_config_getenv(c, *k))
            mp_serve_config_setenv(c, *k, v);
    }
}

static int cli_serve(int argc, char **argv, const struct cli_global *g)
{
    enum {
        O_TP = 1000,
        O_CONC,
        O_ISL,
        O_OSL,
        O_NP,
        O_ENV,
        O_TORCH,
        O_NOTORCH,
        O_SYSPROF,
        O_MODE,
        O_KIND,
        O_IMAGE,
        O_PRIV,
        O_TIMEOUT,
        O_READY,
        O_STALL,
        O_MAXFAIL,
        O_REPEAT,
        O_IXP,
        O_SCRIPT,
        O_JSON,
    };
    static const struct option opts[] = {
        {"benchmark-config", required_argument, NULL, 'b'},
        {"model", required_argument, NULL, 'm'},
        {"precision", required_argument, NULL, 'p'},
        {"tp", required_argument, NULL, O_TP},
        {"concurrency", required_argument, NULL, O_CONC},
        {"input-len", required_argument, NULL, O_ISL},
        {"output-len", required_argument, NULL, O_OSL},
        {"num-prompts", required_argument, NULL, O_NP},
        {"env", required_argument, NULL, O_ENV},
        {"torch-profiler", no_argument, NULL, O_TORCH},
        {"no-torch-profiler", no_argument, NULL, O_NOTORCH},
        {"system-profiler", no_argument, NULL, O_SYSPROF},
        {"run-mode", required_argument, NULL, O_MODE},
        {"run-kind", required_argument, NULL, O_KIND},
        {"docker-image", required_argument, NULL, O_IMAGE},
        {"privileged", no_argument, NULL, O_PRIV},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"ready-timeout", required_argument, NULL, O_READY},
        {"stall-timeout", required_argument, NULL, O_STALL},
        {"max-failed-requests", required_argument, NULL, O_MAXFAIL},
        {"repeat", required_argument, NULL, O_REPEAT},
        {"inferencex-path", required_argument, NULL, O_IXP},
        {"benchmark-script", required_argument, NULL, O_SCRIPT},
        {"output-dir", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, O_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* Flags are applied over the YAML, so collect them first. */
    const char *yaml = NULL, *model = NULL, *precision = NULL, *mode = NULL, *kind = NULL;
    const char *image = NULL, *out_root = "./results", *envs[64], *fw_word = NULL;
    const char *ixp = NULL, *script = NULL;
    int n_envs = 0, torch = -1;
    bool sysprof = false, priv = false, json = false, quiet = g && g->quiet;
    double timeout = -1, ready = -1, stall = -1;
    const char *max_failed = NULL;
    double repeat = 0;
    const char *tp = NULL, *conc = NULL, *isl = NULL, *osl = NULL, *np = NULL;
    int c, rc, exit_code = EXIT_OK;
    opterr = 0;
    optind = 0; /* full re-initialisation: main already ran getopt */
    while ((c = getopt_long(argc, argv, "b:m:p:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            yaml = optarg;
            break;
        case 'm':
            model = optarg;
            break;
        case 'p':
            precision = optarg;
            break;
        case O_TP:
            tp = optarg;
            break;
        case O_CONC:
            conc = optarg;
            break;
        case O_ISL:
            isl = optarg;
            break;
        case O_OSL:
            osl = optarg;
            break;
        case O_NP:
            np = optarg;
            break;
        case O_ENV:
            if (!strchr(optarg, '=') || optarg[0] == '=' || n_envs == 64) {
                fprintf(stderr, "magpie: error: --env expects KEY=VALUE, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
            envs[n_envs++] = optarg;
            break;
        case O_TORCH:
            torch = 1;
            break;
        case O_NOTORCH:
            torch = 0;
            break;
        case O_SYSPROF:
            sysprof = true;
            break;
        case O_MODE:
            mode = optarg;
            break;
        case O_KIND:
            kind = optarg;
            break;
        case O_IMAGE:
            image = optarg;
            break;
        case O_PRIV:
            priv = true;
            break;
        case O_TIMEOUT:
            if ((rc = serve_num("--timeout", optarg, 1, &timeout)))
                return rc;
            break;
        case O_READY:
            if ((rc = serve_num("--ready-timeout", optarg, 1, &ready)))
                return rc;
            break;
        case O_STALL:
            if ((rc = serve_num("--stall-timeout", optarg, 0, &stall)))
                return rc;
            break;
        case O_MAXFAIL: {
            struct mp_loadgen_fail_limit fl;
            struct mp_diag fd;
            mp_diag_clear(&fd);
            if ((rc = mp_loadgen_fail_limit_parse(optarg, &fl, &fd)))
                return cli_report_error(&fd, rc);
            max_failed = optarg;
            break;
        }
        case O_REPEAT:
            if ((rc = serve_num("--repeat", optarg, 1, &repeat)))
                return rc;
            break;
        case O_IXP:
            ixp = optarg;
            break;
        case O_SCRIPT:
            script = optarg;
            break;
        case 'o':
            out_root = optarg;
            break;
        case O_JSON:
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            serve_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s' for benchmark\n",
                    argv[optind - 1]);
            serve_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        fw_word = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    struct mp_serve_config cfg;
    mp_serve_config_init(&cfg);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_serve_result *res = NULL;
    if (yaml) {
        if ((rc = mp_serve_config_load(&cfg, yaml, &d))) {
            exit_code = cli_report_error(&d, rc);
            goto done;
        }
    } else {
        if (!fw_word || !model) {
            fprintf(stderr, "magpie: error: Specify --benchmark-config or provide framework and "
                            "--model\n");
            exit_code = EXIT_USAGE;
            goto done;
        }
        /* Magpie's ad-hoc config: envs TP, CONC, ISL, OSL, RANDOM_RANGE_RATIO 0.5,
         * torch profiler only with --torch-profiler */
        mp_serve_config_setenv(&cfg, "TP", "1");
        mp_serve_config_setenv(&cfg, "CONC", "32");
        mp_serve_config_setenv(&cfg, "ISL", "1024");
        mp_serve_config_setenv(&cfg, "OSL", "512");
        const char *rr = getenv("RANDOM_RANGE_RATIO");
        mp_serve_config_setenv(&cfg, "RANDOM_RANGE_RATIO", rr && *rr ? rr : "0.5");
        cfg.torch_profiler = false;
        /* the env contract fills TP/CONC/ISL/OSL only when the flags do not */
        static const char *const base[] = {"TP", "CONC", "ISL", "OSL"};
        for (int i = 0; i < 4; i++) {
            const char *v = getenv(base[i]);
            if (v && *v)
                mp_serve_config_setenv(&cfg, base[i], v);
        }
    }
    if (fw_word && mp_serve_framework_parse(fw_word, &cfg.framework)) {
        fprintf(stderr, "magpie: error: unknown framework '%s' (expected vllm, sglang or atom)\n",
                fw_word);
        exit_code = EXIT_USAGE;
        goto done;
    }
    if (model)
        cfg.model = mp_serve_config_strdup(&cfg, model);
    if (precision)
        cfg.precision = mp_serve_config_strdup(&cfg, precision);
    if ((tp && (exit_code = serve_int("--tp", tp, "TP", &cfg))) ||
        (conc && (exit_code = serve_int("--concurrency", conc, "CONC", &cfg))) ||
        (isl && (exit_code = serve_int("--input-len", isl, "ISL", &cfg))) ||
        (osl && (exit_code = serve_int("--output-len", osl, "OSL", &cfg))) ||
        (np && (exit_code = serve_int("--num-prompts", np, "NUM_PROMPTS", &cfg))))
        goto done;
    for (int i = 0; i < n_envs; i++) {
        char key[256];
        const char *eq = strchr(envs[i], '=');
        snprintf(key, sizeof(key), "%.*s", (int)(eq - envs[i]), envs[i]);
        mp_serve_config_setenv(&cfg, key, eq + 1);
    }
    env_contract(&cfg);
    if (torch >= 0)
        cfg.torch_profiler = torch == 1;
    if (sysprof)
        cfg.system_profiler = true;
    if (mode && mp_serve_mode_parse(mode, &cfg.run_mode)) {
        fprintf(stderr, "magpie: error: --run-mode must be local, docker or ray, not '%s'\n", mode);
        exit_code = EXIT_USAGE;
        goto done;
    }
    if (kind && mp_serve_run_kind_parse(kind, &cfg.run_kind)) {
        fprintf(stderr,
                "magpie: error: --run-kind must be auto, measurement or diagnostic, not '%s'\n",
                kind);
        exit_code = EXIT_USAGE;
        goto done;
    }
    if (image)
        cfg.docker_image = mp_serve_config_strdup(&cfg, image);
    if (ixp)
        cfg.inferencex_path = mp_serve_config_strdup(&cfg, ixp);
    if (script)
        cfg.benchmark_script = mp_serve_config_strdup(&cfg, script);
    cfg.privileged |= priv;
    if (timeout > 0)
        cfg.timeout_s = timeout;
    if (ready > 0)
        cfg.server_ready_timeout_s = ready;
    if (stall >= 0)
        cfg.stall_timeout_s = stall;
    if (max_failed)
        (void)mp_loadgen_fail_limit_parse(max_failed, &cfg.max_failed, NULL);
    if (repeat >= 1)
        cfg.repeat = repeat > 1000 ? 1001 : (int)repeat; /* validated in the library */
    if (cfg.run_mode == MP_SERVE_RAY) { /* a Ray job running this on a worker (cmd_ray.c) */
        exit_code = cli_ray_benchmark(&cfg, yaml, json);
        goto done;
    }
    bool drawn = false;
    struct mp_serve_run_opts ro = {.output_dir = out_root, .magpie_version = MP_VERSION};
    if (!quiet && !json && isatty(STDERR_FILENO)) {
        ro.on_progress = on_serve_progress;
        ro.progress_user = &drawn;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    rc = mp_serve_run(&cfg, &ro, &res, &d);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (drawn)
        fprintf(stderr, "\r\033[K");
    if (rc) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    if (json)
        fwrite(res->report.data, 1, res->report.len, stdout);
    else
        fwrite(res->summary.data, 1, res->summary.len, stdout);
    exit_code = res->success ? EXIT_OK : EXIT_FAIL;
done:
    mp_serve_result_free(res);
    mp_serve_config_fini(&cfg);
    return exit_code;
}
