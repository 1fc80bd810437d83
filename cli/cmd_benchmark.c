/* `magpie benchmark`: three modes behind one subcommand, as in Magpie.
 *   magpie benchmark vllm|sglang|atom|trtllm|lmdeploy --model M ...  or  -b bench.yaml
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
#include "opts.h"

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
    O_GJSON,
    O_FIND,
    O_REPOS,
};

static const struct cli_opt gap_opts[] = {
    {"trace-dir", 0, CLI_ARG, O_TRACE, "DIR",
     "torch_trace directory, or a workspace containing one", 0},
    {"output-dir", 'o', CLI_ARG, 'o', "DIR",
     "output root (default ./results); CSVs go to DIR/gap_analysis", 0},
    {"top-k", 0, CLI_ARG, O_TOPK, "N", "rows kept (default 20)", 0},
    {"start-pct", 0, CLI_ARG, O_START, "P", "window start, 0-100 (default 0)", 0},
    {"end-pct", 0, CLI_ARG, O_END, "P", "window end, 0-100 (default 100)", 0},
    {"min-duration-us", 0, CLI_ARG, O_MIND, "U", "drop events shorter than U us (default 0)", 0},
    {"categories", 0, CLI_NOARG, O_CATS, "[C ...]",
     "category allow list, substring, case-insensitive (default: kernel gpu; given with no "
     "value: all)",
     0},
    {"ignore-categories", 0, CLI_NOARG, O_IGN, "[C ...]",
     "deny list (default: gpu_user_annotation user_annotation; given with no value: none)", 0},
    {"no-rank-csv", 0, CLI_NOARG, O_NORANK, NULL, "do not write per-rank CSVs", 0},
    {"group-by", 0, CLI_ARG, O_GROUP, "name|normalized",
     "aggregate by exact name (Magpie) or by kernel family (template args, hashes, tile sizes "
     "removed)",
     0},
    {"skip-bad-ranks", 0, CLI_NOARG, O_SKIP, NULL,
     "warn about an unreadable rank and go on (Magpie does); default: a bad trace is an error "
     "(exit 2)",
     0},
    {"json", 0, CLI_NOARG, O_GJSON, NULL, "print the gap_analysis JSON object instead of the table",
     0},
    {"find-kernel-sources", 0, CLI_NOARG, O_FIND, NULL,
     "add Magpie's 15 source columns + source_line, source_symbol, source_confidence, "
     "source_candidates",
     0},
    {"kernel-source-repos", 0, CLI_ARG, O_REPOS, "PATH...",
     "source trees to search (docs/sources.md)", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_benchmark_gap = {
    .name = "benchmark --trace-dir",
    .args = "DIR",
    .usage = "       (serving benchmarks: magpie benchmark vllm --help)\n",
    .summary = "gap analysis on existing torch-profiler traces (Magpie-compatible)",
    .intro = "Gap analysis on existing torch-profiler traces (Magpie-compatible): kernel time\n"
             "by name over every rank, written to OUT/gap_analysis/gap_analysis.csv and\n"
             "gap_analysis_rank<N>.csv.\n",
    .opts = gap_opts,
    .outro = "exit status: 0 ok, 1 no kernel events found, 2 usage or input error\n\n"
             "examples:\n"
             "  magpie benchmark --trace-dir results/benchmark_vllm_20260101_120000\n"
             "  magpie benchmark --trace-dir traces/ --top-k 10 --start-pct 20 --end-pct 80\n"
             "  magpie benchmark --trace-dir traces/ --group-by normalized --json\n",
    .flags = CLI_STOP_AT_ARG,
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_benchmark_gap);
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
    if (argc > 1 && strcmp(argv[1], "sweep") == 0)
        return cli_bench_sweep(argc - 1, argv + 1, g);
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

struct gap_args {
    struct mp_gap_config cfg;
    const char **repos; /* --kernel-source-repos PATH... */
    int n_repos;
    const char *trace_dir, *out_root;
    bool rank_csv, json, quiet;
};

/* nargs="*": take following words that are not options */
static void gap_take_words(int argc, char **argv, const char **dst, int max, int *n)
{
    *n = 0;
    while (optind < argc && argv[optind][0] != '-' && *n < max)
        dst[(*n)++] = argv[optind++];
}

/* Parse step; returns -1 to go on, else the exit code. */
static int gap_parse(int argc, char **argv, struct gap_args *a)
{
    static const char *repos[256];
    struct mp_gap_config *cfg = &a->cfg;
    int c, rc, n;
    a->repos = repos;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_benchmark_gap);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case O_TRACE:
            a->trace_dir = optarg;
            break;
        case 'o':
            a->out_root = optarg;
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
            cfg->top_k = (int)v;
            break;
        }
        case O_START:
            if ((rc = cli_parse_double("--start-pct", optarg, &cfg->start_pct)))
                return rc;
            break;
        case O_END:
            if ((rc = cli_parse_double("--end-pct", optarg, &cfg->end_pct)))
                return rc;
            break;
        case O_MIND:
            if ((rc = cli_parse_double("--min-duration-us", optarg, &cfg->min_duration_us)))
                return rc;
            break;
        case O_CATS:
            gap_take_words(argc, argv, cfg->categories, MP_GAP_MAX_PATTERNS, &n);
            cfg->n_categories = n;
            cfg->categories_all = n == 0;
            break;
        case O_IGN:
            gap_take_words(argc, argv, cfg->ignore, MP_GAP_MAX_PATTERNS, &n);
            cfg->n_ignore = n;
            break;
        case O_NORANK:
            a->rank_csv = false;
            break;
        case O_GROUP:
            if (strcmp(optarg, "normalized") == 0) {
                cfg->group_normalized = true;
            } else if (strcmp(optarg, "name") != 0) {
                fprintf(stderr,
                        "magpie: error: --group-by must be 'name' or 'normalized', not "
                        "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_SKIP:
            cfg->skip_bad_ranks = true;
            break;
        case O_GJSON:
            a->json = true;
            break;
        case O_FIND:
            cfg->find_kernel_sources = true;
            break;
        case O_REPOS: /* PATH... : every following word up to the next option */
            if (a->n_repos >= 256)
                break;
            repos[a->n_repos++] = optarg;
            while (optind < argc && argv[optind][0] != '-' && a->n_repos < 256)
                repos[a->n_repos++] = argv[optind++];
            break;
        case 'q':
            a->quiet = true;
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
    if (!a->trace_dir) {
        fprintf(stderr, "magpie: error: Specify --benchmark-config or provide framework and "
                        "--model (or --trace-dir DIR for gap analysis on existing traces)\n");
        return EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    return -1;
}

/* Emit step: the CSVs, then the summary table or the JSON object. */
static int gap_emit(const struct gap_args *a, const struct mp_gap_result *res)
{
    char gap_dir[4200], csv_path[4300];
    snprintf(gap_dir, sizeof(gap_dir), "%s/gap_analysis", a->out_root);
    snprintf(csv_path, sizeof(csv_path), "%s/gap_analysis.csv", gap_dir);
    for (size_t i = 0; i < res->n_ranks; i++)
        if (res->ranks[i].error && !a->json)
            printf("Warning: %s\n", res->ranks[i].error);
    int exit_code = EXIT_OK, rc;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_buf out;
    mp_buf_init(&out, 0);
    if (res->n_merged == 0) {
        if (a->json) {
            mp_gap_json(res, &a->cfg, NULL, gap_dir, &out);
            printf("%s\n", mp_buf_cstr(&out));
        } else {
            printf("No kernel events found in traces.\n");
        }
        exit_code = EXIT_FAIL;
        goto done;
    }
    rc = mp_gap_write_csv(res, &a->cfg, gap_dir, a->rank_csv, &d);
    if (rc) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    rc = a->json ? mp_gap_json(res, &a->cfg, csv_path, gap_dir, &out)
                 : mp_gap_summary(res, &a->cfg, gap_dir, &out);
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting output\n");
        exit_code = EXIT_FAIL;
        goto done;
    }
    fwrite(out.data, 1, out.len, stdout);
    if (a->json)
        fputc('\n', stdout);
done:
    mp_buf_fini(&out);
    return exit_code;
}

static int gap_mode(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    struct gap_args a = {.out_root = "./results", .rank_csv = true};
    mp_gap_config_defaults(&a.cfg);
    int rc = gap_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    struct progress_ctx pc = {cli_progress_new("reading traces", !a.quiet && !a.json)};
    a.cfg.on_progress = on_progress;
    a.cfg.progress_user = &pc;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gap_result *res = NULL;
    rc = mp_gap_analyze(a.trace_dir, &a.cfg, &res, &d);
    cli_progress_finish(pc.p);
    if (rc)
        return cli_report_error(&d, rc);
    struct mp_gap_sources srcs = {0};
    a.cfg.kernel_source_repos = a.repos;
    a.cfg.n_kernel_source_repos = a.n_repos;
    if (a.cfg.find_kernel_sources) {
        rc = mp_gap_find_sources(res, &a.cfg, &srcs, &d);
        if (rc) {
            mp_gap_result_free(res);
            return cli_report_error(&d, rc);
        }
        for (size_t i = 0; i < srcs.n_warnings; i++)
            fprintf(stderr, "magpie: warning: %s\n", srcs.warnings[i]);
        a.cfg.sources = &srcs;
    }
    int exit_code = gap_emit(&a, res);
    mp_gap_sources_fini(&srcs);
    mp_gap_result_free(res);
    return exit_code;
}

/* ---- serving benchmarks ---- */

enum {
    O_TP = 2000,
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
    O_PREFIX,
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
    O_AGENTX,
    O_AGENTX_MODE,
    O_AGENTX_TRACE,
};

static const struct cli_opt serve_opts[] = {
    {"benchmark-config", 'b', CLI_ARG, 'b', "F", "Magpie benchmark YAML (top-level benchmark: key)",
     0},
    {"model", 'm', CLI_ARG, 'm', "M", "HF model id or local directory", 0},
    {"precision", 'p', CLI_ARG, 'p', "P", "fp8 (default), fp16, bf16, fp4, ...", 0},
    {"tp", 0, CLI_ARG, O_TP, "N", "envs.TP (1)", 0},
    {"concurrency", 0, CLI_ARG, O_CONC, "N", "envs.CONC (32)", 0},
    {"input-len", 0, CLI_ARG, O_ISL, "N", "envs.ISL (1024)", 0},
    {"output-len", 0, CLI_ARG, O_OSL, "N", "envs.OSL (512)", 0},
    {"num-prompts", 0, CLI_ARG, O_NP, "N", "envs.NUM_PROMPTS (CONC*10; CONC when profiling)", 0},
    {"env", 0, CLI_ARG, O_ENV, "KEY=VALUE", "any other envs entry (repeatable)", 0},
    {"torch-profiler", 0, CLI_NOARG, O_TORCH, NULL,
     "capture torch-profiler traces (ad-hoc runs; YAML: on unless "
     "profiler.torch_profiler.enabled is false)",
     0},
    {"no-torch-profiler", 0, CLI_NOARG, O_NOTORCH, NULL, "force it off", 0},
    {"system-profiler", 0, CLI_NOARG, O_SYSPROF, NULL,
     "profiler.system_profiler.enabled (recorded only)", 0},
    {"run-mode", 0, CLI_ARG, O_MODE, "local|docker", "default docker, as Magpie", 0},
    {"run-kind", 0, CLI_ARG, O_KIND, "auto|measurement|diagnostic", "the kind of run", 0},
    {"prefix-cache", 0, CLI_ARG, O_PREFIX, "default|on|off",
     "the engine's prefix cache (YAML prefix_cache): default keeps Magpie's argv (SGLang "
     "--disable-radix-cache, vLLM's own default: on); on/off for vLLM and SGLang only",
     0},
    {"docker-image", 0, CLI_ARG, O_IMAGE, "IMG", "image instead of the table's", 0},
    {"privileged", 0, CLI_NOARG, O_PRIV, NULL, "docker: add --privileged (never by default)", 0},
    {"timeout", 0, CLI_ARG, O_TIMEOUT, "S", "timeout_seconds for the whole run (3600)", 0},
    {"ready-timeout", 0, CLI_ARG, O_READY, "S", "how long the engine may take to get ready (2700)",
     0},
    {"stall-timeout", 0, CLI_ARG, O_STALL, "S", "fail a request after S s without data (300)", 0},
    {"max-failed-requests", 0, CLI_ARG, O_MAXFAIL, "N|P%",
     "failed requests the run may have and still succeed: a count or a percentage of the "
     "measured requests (YAML max_failed_requests; default 0)",
     0},
    {"repeat", 0, CLI_ARG, O_REPEAT, "N",
     "N measured runs against one engine start after one warm-up, kept as run_1..N with "
     "their spread (YAML repeat; unprofiled); compare: benchmark compare",
     0},
    {"agentx", 0, CLI_NOARG, O_AGENTX, NULL,
     "agentx: an agentic workload, the replay of --agentx-trace-file (multi-turn sessions, "
     "recorded times; YAML agentx.enabled / `agentx: true`); the torch profiler stays off "
     "unless asked",
     0},
    {"agentx-mode", 0, CLI_ARG, O_AGENTX_MODE, "canonical|fast",
     "agentx.mode (canonical); fast is validation only, never a measurement", 0},
    {"agentx-trace-file", 0, CLI_ARG, O_AGENTX_TRACE, "F",
     "agentx.trace_file: the mooncake / AIPerf JSONL trace replayed (required with --agentx)", 0},
    {"inferencex-path", 0, CLI_ARG, O_IXP, "P", "accepted for compatibility", 0},
    {"benchmark-script", 0, CLI_ARG, O_SCRIPT, "S", "accepted for compatibility", 0},
    {"output-dir", 'o', CLI_ARG, 'o', "DIR", "workspace root (./results)", 0},
    {"json", 0, CLI_NOARG, O_JSON, NULL, "print benchmark_report.json instead of the summary", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_benchmark = {
    .name = "benchmark",
    .args = "vllm|sglang|atom|trtllm|lmdeploy --model M",
    .usage = "       magpie benchmark -b bench.yaml [options]\n"
             "       magpie benchmark --trace-dir DIR ...   (gap analysis: --trace-dir x --help)\n"
             "       magpie benchmark --base-url URL ...    (load generator only: --base-url x "
             "--help)\n",
    .summary = "benchmark a serving engine, gap analysis on traces (--trace-dir), or compare "
               "runs (benchmark compare A B)",
    .intro = "Launches the engine (run mode local: its own process group, output in server.log;\n"
             "docker: `docker run` of the engine image), waits for /health and /v1/models, drives\n"
             "it with magpie's load generator (vLLM's metrics), captures torch-profiler traces\n"
             "between /start_profile and /stop_profile when asked, runs the kernel summary and\n"
             "gap analysis on them, and writes Magpie's workspace\n"
             "OUT/benchmark_<framework>_<YYYYmmdd_HHMMSS>/ (config.yaml, benchmark_report.json,\n"
             "summary.txt, server.log, inferencex_result.json, torch_trace/, gap_analysis/).\n",
    .opts_title = "options (flags override the YAML)",
    .opts = serve_opts,
    .outro =
        "envs read from the environment when the config does not set them: NUM_PROMPTS,\n"
        "NUM_WARMUPS, MAX_MODEL_LEN, GPU_MEMORY_UTILIZATION, PORT (8888), EXTRA_VLLM_ARGS,\n"
        "EXTRA_SGLANG_ARGS, EXTRA_ATOM_ARGS (and the engine's own EXTRA_*_ARGS),\n"
        "RANDOM_RANGE_RATIO, REQUEST_RATE,\n"
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
        "  magpie benchmark -b examples/benchmark/declared_engine.yaml   (an engine magpie\n"
        "      has no row for, declared in the YAML's engine: section)\n"
        "  magpie benchmark sglang -m Qwen/Qwen3-8B --docker-image lmsysorg/sglang:latest\n",
    .words = "vllm sglang atom trtllm lmdeploy",
};

static void serve_usage(FILE *f)
{
    cli_help(f, &cli_cmd_benchmark);
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
    /* and the engine's own EXTRA_*_ARGS (EXTRA_TRTLLM_ARGS, a declared one) */
    const char *ek = mp_serve_config_engine(c)->extra_args_env;
    const char *ev = ek ? getenv(ek) : NULL;
    if (ev && *ev && !mp_serve_config_getenv(c, ek))
        mp_serve_config_setenv(c, ek, ev);
}

/* The flags of a serving run; they are applied over the YAML, so they are
 * collected first. */
struct serve_args {
    const char *yaml, *model, *precision, *mode, *kind, *image, *out_root, *envs[64], *fw_word;
    const char *ixp, *script, *max_failed, *prefix;
    const char *agentx_mode, *agentx_trace;
    bool agentx;
    const char *tp, *conc, *isl, *osl, *np;
    int n_envs, torch;
    bool sysprof, priv, json, quiet;
    double timeout, ready, stall, repeat;
};

/* Parse step of the flags that take a value; returns 0 or the exit code. */
static int serve_parse_value(int c, struct serve_args *a)
{
    int rc = 0;
    switch (c) {
    case O_ENV:
        if (!strchr(optarg, '=') || optarg[0] == '=' || a->n_envs == 64) {
            fprintf(stderr, "magpie: error: --env expects KEY=VALUE, not '%s'\n", optarg);
            return EXIT_USAGE;
        }
        a->envs[a->n_envs++] = optarg;
        break;
    case O_TIMEOUT:
        rc = serve_num("--timeout", optarg, 1, &a->timeout);
        break;
    case O_READY:
        rc = serve_num("--ready-timeout", optarg, 1, &a->ready);
        break;
    case O_STALL:
        rc = serve_num("--stall-timeout", optarg, 0, &a->stall);
        break;
    case O_MAXFAIL: {
        struct mp_loadgen_fail_limit fl;
        struct mp_diag fd;
        mp_diag_clear(&fd);
        if ((rc = mp_loadgen_fail_limit_parse(optarg, &fl, &fd)))
            return cli_report_error(&fd, rc);
        a->max_failed = optarg;
        break;
    }
    case O_REPEAT:
        rc = serve_num("--repeat", optarg, 1, &a->repeat);
        break;
    }
    return rc;
}

/* Parse step; returns -1 to go on, else the exit code. */
static int serve_parse(int argc, char **argv, struct serve_args *a)
{
    int c, rc;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_benchmark);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        const char **str = NULL;
        switch (c) {
        case 'b':
            str = &a->yaml;
            break;
        case 'm':
            str = &a->model;
            break;
        case 'p':
            str = &a->precision;
            break;
        case O_TP:
            str = &a->tp;
            break;
        case O_CONC:
            str = &a->conc;
            break;
        case O_ISL:
            str = &a->isl;
            break;
        case O_OSL:
            str = &a->osl;
            break;
        case O_NP:
            str = &a->np;
            break;
        case O_MODE:
            str = &a->mode;
            break;
        case O_KIND:
            str = &a->kind;
            break;
        case O_PREFIX:
            str = &a->prefix;
            break;
        case O_IMAGE:
            str = &a->image;
            break;
        case O_IXP:
            str = &a->ixp;
            break;
        case O_SCRIPT:
            str = &a->script;
            break;
        case O_AGENTX:
            a->agentx = true;
            break;
        case O_AGENTX_MODE:
            str = &a->agentx_mode;
            break;
        case O_AGENTX_TRACE:
            str = &a->agentx_trace;
            break;
        case 'o':
            str = &a->out_root;
            break;
        case O_TORCH:
            a->torch = 1;
            break;
        case O_NOTORCH:
            a->torch = 0;
            break;
        case O_SYSPROF:
            a->sysprof = true;
            break;
        case O_PRIV:
            a->priv = true;
            break;
        case O_JSON:
            a->json = true;
            break;
        case 'q':
            a->quiet = true;
            break;
        case O_ENV:
        case O_TIMEOUT:
        case O_READY:
        case O_STALL:
        case O_MAXFAIL:
        case O_REPEAT:
            if ((rc = serve_parse_value(c, a)))
                return rc;
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
        if (str)
            *str = optarg;
    }
    if (optind < argc)
        a->fw_word = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    return -1;
}

/* The config from the YAML, or Magpie's ad-hoc one for a framework word. */
static int serve_base_config(struct mp_serve_config *cfg, const struct serve_args *a)
{
    if (a->yaml) {
        struct mp_diag d;
        mp_diag_clear(&d);
        /* --agentx before the YAML is read, so that Magpie's default (an
         * AgentX run is unprofiled unless the YAML or a flag asks) applies */
        if (a->agentx) {
            cfg->agentx.enabled = true;
            if (a->agentx_trace)
                cfg->agentx.trace_file = mp_serve_config_strdup(cfg, a->agentx_trace);
        }
        int rc = mp_serve_config_load(cfg, a->yaml, &d);
        return rc ? cli_report_error(&d, rc) : 0;
    }
    if (!a->fw_word || !a->model) {
        fprintf(stderr, "magpie: error: Specify --benchmark-config or provide framework and "
                        "--model\n");
        return EXIT_USAGE;
    }
    /* Magpie's ad-hoc config: envs TP, CONC, ISL, OSL, RANDOM_RANGE_RATIO 0.5,
     * torch profiler only with --torch-profiler */
    mp_serve_config_setenv(cfg, "TP", "1");
    mp_serve_config_setenv(cfg, "CONC", "32");
    mp_serve_config_setenv(cfg, "ISL", "1024");
    mp_serve_config_setenv(cfg, "OSL", "512");
    const char *rr = getenv("RANDOM_RANGE_RATIO");
    mp_serve_config_setenv(cfg, "RANDOM_RANGE_RATIO", rr && *rr ? rr : "0.5");
    cfg->torch_profiler = false;
    /* the env contract fills TP/CONC/ISL/OSL only when the flags do not */
    static const char *const base[] = {"TP", "CONC", "ISL", "OSL"};
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(base[i]);
        if (v && *v)
            mp_serve_config_setenv(cfg, base[i], v);
    }
    return 0;
}

/* --agentx, --agentx-mode, --agentx-trace-file over the YAML's agentx keys
 * (the library checks that an agentx run has its trace file); returns 0 or
 * the exit code. */
static int serve_apply_agentx(struct mp_serve_config *cfg, const struct serve_args *a)
{
    if (a->agentx_mode && strcmp(a->agentx_mode, "canonical") != 0 &&
        strcmp(a->agentx_mode, "fast") != 0) {
        fprintf(stderr, "magpie: error: --agentx-mode must be canonical or fast, not '%s'\n",
                a->agentx_mode);
        return EXIT_USAGE;
    }
    if (a->agentx_trace && access(a->agentx_trace, R_OK) != 0) {
        fprintf(stderr, "magpie: error: --agentx-trace-file: cannot read '%s'\n", a->agentx_trace);
        return EXIT_USAGE;
    }
    if ((a->agentx_mode || a->agentx_trace) && !a->agentx && !cfg->agentx.enabled) {
        fprintf(stderr,
                "magpie: error: --agentx-%s applies to agentx runs: add --agentx (or "
                "agentx.enabled in the YAML)\n",
                a->agentx_mode ? "mode" : "trace-file");
        return EXIT_USAGE;
    }
    if (a->agentx)
        cfg->agentx.enabled = true;
    if (a->agentx_mode)
        cfg->agentx.fast = strcmp(a->agentx_mode, "fast") == 0;
    if (a->agentx_trace)
        cfg->agentx.trace_file = mp_serve_config_strdup(cfg, a->agentx_trace);
    return 0;
}

/* Validate step: the flags over the config; returns 0 or the exit code. */
static int serve_apply_flags(struct mp_serve_config *cfg, const struct serve_args *a)
{
    int ec;
    if (a->fw_word && cfg->engine) {
        fprintf(stderr,
                "magpie: error: the benchmark config declares the engine '%s' (engine:); leave "
                "out the framework word '%s'\n",
                cfg->engine->name, a->fw_word);
        return EXIT_USAGE;
    }
    if (a->fw_word && mp_serve_framework_parse(a->fw_word, &cfg->framework)) {
        fprintf(stderr, "magpie: error: unknown framework '%s' (expected %s)\n", a->fw_word,
                mp_serve_engine_names());
        return EXIT_USAGE;
    }
    if (a->model)
        cfg->model = mp_serve_config_strdup(cfg, a->model);
    if (a->precision)
        cfg->precision = mp_serve_config_strdup(cfg, a->precision);
    if ((a->tp && (ec = serve_int("--tp", a->tp, "TP", cfg))) ||
        (a->conc && (ec = serve_int("--concurrency", a->conc, "CONC", cfg))) ||
        (a->isl && (ec = serve_int("--input-len", a->isl, "ISL", cfg))) ||
        (a->osl && (ec = serve_int("--output-len", a->osl, "OSL", cfg))) ||
        (a->np && (ec = serve_int("--num-prompts", a->np, "NUM_PROMPTS", cfg))))
        return ec;
    for (int i = 0; i < a->n_envs; i++) {
        char key[256];
        const char *eq = strchr(a->envs[i], '=');
        snprintf(key, sizeof(key), "%.*s", (int)(eq - a->envs[i]), a->envs[i]);
        mp_serve_config_setenv(cfg, key, eq + 1);
    }
    env_contract(cfg);
    if (a->torch >= 0)
        cfg->torch_profiler = a->torch == 1;
    if (a->sysprof)
        cfg->system_profiler = true;
    if (a->mode && mp_serve_mode_parse(a->mode, &cfg->run_mode)) {
        fprintf(stderr, "magpie: error: --run-mode must be local, docker or ray, not '%s'\n",
                a->mode);
        return EXIT_USAGE;
    }
    if (a->kind && mp_serve_run_kind_parse(a->kind, &cfg->run_kind)) {
        fprintf(stderr,
                "magpie: error: --run-kind must be auto, measurement or diagnostic, not '%s'\n",
                a->kind);
        return EXIT_USAGE;
    }
    if (a->prefix && mp_serve_prefix_cache_parse(a->prefix, &cfg->prefix_cache)) {
        fprintf(stderr, "magpie: error: --prefix-cache must be default, on or off, not '%s'\n",
                a->prefix);
        return EXIT_USAGE;
    }
    if (a->image)
        cfg->docker_image = mp_serve_config_strdup(cfg, a->image);
    if (a->ixp)
        cfg->inferencex_path = mp_serve_config_strdup(cfg, a->ixp);
    if (a->script)
        cfg->benchmark_script = mp_serve_config_strdup(cfg, a->script);
    cfg->privileged |= a->priv;
    if (a->timeout > 0)
        cfg->timeout_s = a->timeout;
    if (a->ready > 0)
        cfg->server_ready_timeout_s = a->ready;
    if (a->stall >= 0)
        cfg->stall_timeout_s = a->stall;
    if (a->max_failed)
        (void)mp_loadgen_fail_limit_parse(a->max_failed, &cfg->max_failed, NULL);
    if (a->repeat >= 1)
        cfg->repeat = a->repeat > 1000 ? 1001 : (int)a->repeat; /* validated in the library */
    return serve_apply_agentx(cfg, a);
}

/* Run and emit steps: the run under SIGINT/SIGTERM handling, then the
 * summary or the report JSON. */
static int serve_run(const struct mp_serve_config *cfg, const struct serve_args *a)
{
    bool drawn = false;
    struct mp_serve_run_opts ro = {.output_dir = a->out_root, .magpie_version = MP_VERSION};
    if (!a->quiet && !a->json && isatty(STDERR_FILENO)) {
        ro.on_progress = on_serve_progress;
        ro.progress_user = &drawn;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_serve_result *res = NULL;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int rc = mp_serve_run(cfg, &ro, &res, &d);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (drawn)
        fprintf(stderr, "\r\033[K");
    int exit_code;
    if (rc) {
        exit_code = cli_report_error(&d, rc);
    } else {
        if (a->json)
            fwrite(res->report.data, 1, res->report.len, stdout);
        else
            fwrite(res->summary.data, 1, res->summary.len, stdout);
        exit_code = res->success ? EXIT_OK : EXIT_FAIL;
    }
    mp_serve_result_free(res);
    return exit_code;
}

static int cli_serve(int argc, char **argv, const struct cli_global *g)
{
    struct serve_args a = {.out_root = "./results",
                           .torch = -1,
                           .quiet = g && g->quiet,
                           .timeout = -1,
                           .ready = -1,
                           .stall = -1};
    int exit_code = serve_parse(argc, argv, &a);
    if (exit_code >= 0)
        return exit_code;
    struct mp_serve_config cfg;
    mp_serve_config_init(&cfg);
    exit_code = serve_base_config(&cfg, &a);
    if (!exit_code)
        exit_code = serve_apply_flags(&cfg, &a);
    if (!exit_code) {
        if (cfg.run_mode == MP_SERVE_RAY) /* a Ray job running this on a worker (cmd_ray.c) */
            exit_code = cli_ray_benchmark(&cfg, a.yaml, a.json);
        else
            exit_code = serve_run(&cfg, &a);
    }
    mp_serve_config_fini(&cfg);
    return exit_code;
}
