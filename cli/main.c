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
#include <unistd.h>

#include <magpie/base.h>
#include <magpie/kernel.h>

#include "cli.h"
#include "opts.h"

/* For --version: which install the running executable belongs to, from where
 * it lies: a wheel (pyproject.toml: <package>/bin/magpie beside the Python
 * package's __init__.py), a prefix install (<prefix>/bin/magpie with
 * <prefix>/share/magpie/runtime), or else a build tree (docs/packaging.md). */
static void print_install(void)
{
    char bin[PATH_MAX], f[PATH_MAX + 64], top[PATH_MAX];
    char *slash = realpath("/proc/self/exe", bin) ? strrchr(bin, '/') : NULL;
    if (!slash) {
        printf("install: unknown\n");
        return;
    }
    *slash = 0;
    snprintf(f, sizeof(f), "%s/..", bin);
    const char *where = realpath(f, top) ? top : bin;
    snprintf(f, sizeof(f), "%s/../__init__.py", bin);
    if (access(f, F_OK) == 0) {
        printf("install: wheel (%s)\n", where);
        return;
    }
    snprintf(f, sizeof(f), "%s/../share/magpie/runtime/magpie_runner.py", bin);
    if (access(f, F_OK) == 0)
        printf("install: prefix (%s)\n", where);
    else
        printf("install: build tree (%s)\n", bin);
}

struct subcommand {
    const char *name;
    int (*fn)(int argc, char **argv, const struct cli_global *g);
};

static const struct subcommand commands[] = {
    {"analyze", cmd_analyze},     {"compare", cmd_compare}, {"benchmark", cmd_benchmark},
    {"trace", cmd_trace},         {"mcp", cmd_mcp},         {"ray", cmd_ray},
    {"discover", cmd_discover},   {"suggest", cmd_suggest}, {"gpu", cmd_gpu},
    {"warm-pool", cmd_warm_pool},
};

enum { OPT_DOCKER = 1000, OPT_GPU, OPT_JSON, OPT_VERSION, OPT_MAN, OPT_BASH, OPT_ZSH };

static const struct cli_opt global_opts[] = {
    {"config", 'c', CLI_ARG, 'c', "FILE", "framework config YAML (missing file = empty config)", 0},
    {"verbose", 'v', CLI_NOARG, 'v', NULL, "debug logging", 0},
    {"environment", 'e', CLI_ARG, 'e', "ENV", "local | container | ray (analyze/compare)", 0},
    {"workers", 'w', CLI_ARG, 'w', "N", "worker pool size (analyze/compare)", 0},
    {"docker-image", 0, CLI_ARG, OPT_DOCKER, "IMG", "image for the container environment", 0},
    {"gpu-info", 0, CLI_NOARG, OPT_GPU, NULL, "print GPU vendor, architecture, compiler, profiler",
     0},
    {"json", 0, CLI_NOARG, OPT_JSON, NULL, "with --gpu-info: machine-readable output", 0},
    {"version", 0, CLI_NOARG, OPT_VERSION, NULL,
     "print the version, the runtime/ directory in use and the kind of install", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help; `magpie <command> --help` for a command", 0},
    {"help-man", 0, CLI_NOARG, OPT_MAN, NULL, "print the man page (build time)", CLI_HIDDEN},
    {"help-bash", 0, CLI_NOARG, OPT_BASH, NULL, "print the bash completion script", CLI_HIDDEN},
    {"help-zsh", 0, CLI_NOARG, OPT_ZSH, NULL, "print the zsh completion script", CLI_HIDDEN},
    {0},
};

const struct cli_cmd cli_cmd_root = {
    .name = "",
    .usage = "magpie [global options] <command> [options]\n",
    .summary = "GPU performance loop for LLM inference",
    .intro = "GPU performance loop for LLM inference: serving benchmarks, trace analysis,\n"
             "kernel evaluation. Command-line compatible with AMD's Magpie.\n",
    .opts_title = "global options",
    .opts = global_opts,
    .outro = "exit status: 0 success, 1 evaluation failed, 2 usage or input error\n\n"
             "examples:\n"
             "  magpie --gpu-info\n"
             "  magpie benchmark --trace-dir results/benchmark_vllm_x/torch_trace --top-k 10\n"
             "  magpie trace kernels trace.json.gz --json\n",
    .flags = CLI_STOP_AT_ARG | CLI_NO_SYNOPSIS,
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_root);
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

    struct cli_parser p;
    cli_parser_init(&p, &cli_cmd_root);
    int c;
    while ((c = cli_next(&p, argc, argv)) != -1) {
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
            print_install();
            return EXIT_OK;
        }
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case OPT_MAN:
            cli_write_man(stdout);
            return EXIT_OK;
        case OPT_BASH:
            cli_write_bash(stdout);
            return EXIT_OK;
        case OPT_ZSH:
            cli_write_zsh(stdout);
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
