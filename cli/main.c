/* magpie entry point: global options (Magpie-compatible), then a git-style
 * table of subcommands. */
#include <getopt.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/kernel.h>

#include "cli.h"

struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv, const struct cli_global *g);
    const char *summary;
};

static const struct subcommand commands[] = {
    {"analyze", cmd_analyze, "evaluate kernel implementations (compile, correctness, timing)"},
    {"compare", cmd_compare, "rank two or more kernel implementations against a baseline"},
    {"benchmark", cmd_benchmark,
     "benchmark a serving engine, gap analysis on traces (--trace-dir), or compare "
     "runs (benchmark compare A B)"},
    {"trace", cmd_trace, "analyse torch-profiler traces (kernels, gaps, ...)"},
    {"mcp", cmd_mcp, "serve magpie's tools over the Model Context Protocol"},
    {"ray", cmd_ray, "tasks on a Ray cluster: status, result, cancel, list, logs, submit, batch"},
    {"discover", cmd_discover, "find GPU kernels in a project tree (HIP, CUDA, Triton, OpenCL)"},
    {"suggest", cmd_suggest,
     "optimisation suggestions from profiler metrics (ncu, rocprof-compute)"},
    {"gpu", cmd_gpu, "GPU hardware control: show, set, reset (power limit, locked clocks)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: magpie [-c CONFIG] [-v] [-e ENV] [-w N] [--docker-image IMG] [--gpu-info "
               "[--json]]\n"
               "              <command> [options]\n\n"
               "GPU performance loop for LLM inference: serving benchmarks, trace analysis,\n"
               "kernel evaluation. Command-line compatible with AMD's Magpie.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nglobal options:\n"
               "  -c, --config FILE      framework config YAML (missing file = empty config)\n"
               "  -v, --verbose          debug logging\n"
               "  -e, --environment ENV  local | container | ray (analyze/compare)\n"
               "  -w, --workers N        worker pool size (analyze/compare)\n"
               "      --docker-image IMG image for the container environment\n"
               "      --gpu-info         print GPU vendor, architecture, compiler, profiler\n"
               "      --json             with --gpu-info: machine-readable output\n"
               "      --version          print the version and the runtime/ directory in use\n"
               "  -h, --help             this help; `magpie <command> --help` for a command\n\n"
               "exit status: 0 success, 1 evaluation failed, 2 usage or input error\n\n"
               "examples:\n"
               "  magpie --gpu-info\n"
               "  magpie benchmark --trace-dir results/benchmark_vllm_x/torch_trace --top-k 10\n"
               "  magpie trace kernels trace.json.gz --json\n");
}

int cli_report_error(const struct mp_diag *d, int rc)
{
    char msg[1600];
    mp_diag_format(d, msg, sizeof(msg));
    fprintf(stderr, "magpie: error: %s\n", msg);
    switch (rc) {
    case MP_EINVAL:
    case MP_EPARSE:
    case MP_ETRUNC:
    case MP_ENOTFOUND:
    case MP_EUNSUP:
        return EXIT_USAGE;
    default:
        return EXIT_FAIL;
    }
}

int main(int argc, char **argv)
{
    struct cli_global g = {0};
    bool gpu_info = false, json = false;
#ifdef __GLIBC__
    /* Peak RSS of the trace reports: glibc raises its mmap threshold to the
     * largest block freed so far (the trace parser's 8 MiB buffers), after
     * which every large temporary of the later phases lives in the heap and
     * leaves holes there that are never given back. A fixed threshold (its
     * initial value) keeps them in their own mappings, returned when freed. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif

    enum { OPT_DOCKER = 1000, OPT_GPU, OPT_JSON, OPT_VERSION };
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"verbose", no_argument, NULL, 'v'},
        {"environment", required_argument, NULL, 'e'},
        {"workers", required_argument, NULL, 'w'},
        {"docker-image", required_argument, NULL, OPT_DOCKER},
        {"gpu-info", no_argument, NULL, OPT_GPU},
        {"json", no_argument, NULL, OPT_JSON},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+c:ve:w:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            g.config_path = optarg;
            break;
        case 'v':
            g.verbose = true;
            break;
        case 'e':
            if (strcmp(optarg, "local") != 0 && strcmp(optarg, "container") != 0 &&
                strcmp(optarg, "ray") != 0) {
                fprintf(stderr,
                        "magpie: error: --environment must be local, container or ray, "
                        "not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            g.environment = optarg;
            break;
        case 'w': {
            char *end;
            long w = strtol(optarg, &end, 10);
            if (*end || w < 1 || w > 4096) {
                fprintf(stderr, "magpie: error: --workers expects an integer 1..4096, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            g.workers = (int)w;
            break;
        }
        case OPT_DOCKER:
            g.docker_image = optarg;
            break;
        case OPT_GPU:
            gpu_info = true;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_VERSION: {
            printf("magpie %s\n", MP_VERSION);
            char rt[PATH_MAX]; /* which runtime/ the Python runner would use */
            const char *how = NULL;
            struct mp_diag rd = {0};
            if (mp_kernel_runtime_find(NULL, rt, sizeof(rt), &how, &rd) == 0)
                printf("runtime: %s (%s)\n", rt, how);
            else
                printf("runtime: none: %s\n", rd.msg);
            return EXIT_OK;
        }
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown global option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    mp_log_set(mp_log_stderr, NULL, g.verbose ? MP_LOG_DEBUG : MP_LOG_WARN);
    if (gpu_info)
        return cli_gpu_info(json);
    if (optind >= argc) {
        usage(stdout);
        return EXIT_OK;
    }
    const char *name = argv[optind];
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(name, commands[i].name) == 0) {
            int sub_argc = argc - optind;
            char **sub_argv = argv + optind;
            optind = 0; /* glibc: full re-initialisation for the subcommand */
            return commands[i].fn(sub_argc, sub_argv, &g);
        }
    }
    fprintf(stderr, "magpie: error: unknown command '%s'\n", name);
    usage(stderr);
    return EXIT_USAGE;
}
