/* `magpie analyze` (and, through cli_kernel_main, `magpie compare`):
 * parse Magpie's flags, build the kernel config (framework config -c, then
 * -k YAML or positional kernels), call mp_kernel_analyze / _compare and
 * print the summary (or the report JSON with --json). Also hosts the
 * hidden `analyze --harness-child JOB` entry that runs the C harness in a
 * child process. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/config.h>
#include <magpie/kernel.h>
#include <magpie/proc.h>

#include "cmd_kernel.h"
#include "opts.h"

/* SIGINT / SIGTERM during a container run: the container is stopped and
 * removed, the evaluation ends with a report, then the signal is raised
 * again (so the exit status says what ended us). */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
    mp_kernel_interrupt(); // NOLINT(bugprone-signal-handler,cert-sig30-c)
}

enum {
    OPT_TYPE = 1000,
    OPT_COMPILE,
    OPT_NOPERF,
    OPT_NOLAT,
    OPT_LATM,
    OPT_LATREP,
    OPT_JSON,
    OPT_BASE,
    OPT_REF,
    OPT_KNAME,
    OPT_SIZE,
    OPT_NOISE,
    OPT_MAXT,
    OPT_HARNESS,
    OPT_TIMING,
    OPT_MINEFF,
};

/* One table for analyze and compare; --compile-cmd is analyze's only,
 * --baseline compare's only (CLI_MODE bits). */
enum { M_ANALYZE = CLI_MODE(0), M_COMPARE = CLI_MODE(1) };

static const struct cli_opt kernel_opts[] = {
    {"kernel-config", 'k', CLI_ARG, 'k', "FILE",
     "kernel YAML (kernel/kernels entries + overrides); takes precedence over positional "
     "kernels",
     0},
    {"testcase", 't', CLI_ARG, 't', "CMD", "testcase command (split with shell quoting rules)", 0},
    {"type", 0, CLI_ARG, OPT_TYPE, "T", "hip | cuda | pytorch | triton | opencl (default hip)", 0},
    {"reference", 0, CLI_ARG, OPT_REF, "FILE", "reference implementation for positional kernels",
     0},
    {"kernel-name", 0, CLI_ARG, OPT_KNAME, "NAME", "entry point in the source (C harness)", 0},
    {"size", 0, CLI_ARG, OPT_SIZE, "N", "elements per buffer argument (C harness)", 0},
    {"compile-cmd", 0, CLI_ARG, OPT_COMPILE, "CMD", "custom compile command", M_ANALYZE},
    {"baseline", 0, CLI_ARG, OPT_BASE, "I", "index of the baseline kernel (default 0)", M_COMPARE},
    {"no-perf", 0, CLI_NOARG, OPT_NOPERF, NULL, "skip the performance (profiler) stage", 0},
    {"no-latency", 0, CLI_NOARG, OPT_NOLAT, NULL, "skip the latency (timing) stage", 0},
    {"latency-method", 0, CLI_ARG, OPT_LATM, "M", "auto | harness | none", 0},
    {"latency-rep-ms", 0, CLI_ARG, OPT_LATREP, "MS",
     "Magpie's runner knob, accepted and ignored (magpie stops on noise instead)", CLI_HIDDEN},
    {"max-noise", 0, CLI_ARG, OPT_NOISE, "PCT", "relative-noise target in percent (default 0.5)",
     0},
    {"max-time", 0, CLI_ARG, OPT_MAXT, "S", "timing limit per kernel in seconds (default 15)", 0},
    {"timing", 0, CLI_ARG, OPT_TIMING, "MODE",
     "sequential (stop each candidate once its speedup interval decides; default) | fixed "
     "(time every kernel to its noise target, then decide)",
     M_COMPARE},
    {"min-effect", 0, CLI_ARG, OPT_MINEFF, "PCT",
     "decision band: a speedup within +-PCT % is SAME (default 1; compare.threshold)", M_COMPARE},
    {"output-dir", 'o', CLI_ARG, 'o', "DIR", "workspace root (default ./results)", 0},
    {"json", 0, CLI_NOARG, OPT_JSON, NULL, "print the report JSON instead of the summary", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress lines", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {"harness-child", 0, CLI_NOARG, OPT_HARNESS, "JOB",
     "internal: run the C harness of JOB in this child process", CLI_HIDDEN | M_ANALYZE},
    {0},
};

const struct cli_cmd cli_cmd_analyze = {
    .name = "analyze",
    .args = "[KERNEL ...]",
    .summary = "evaluate kernel implementations (compile, correctness, timing)",
    .intro = "Evaluate kernel implementations: compile, prove correctness (testcase or\n"
             "reference mode), profile, time with confidence intervals, score.\n",
    .opts = kernel_opts,
    .mode = M_ANALYZE,
    .outro = "exit status: 0 ok, 1 a kernel failed to compile or to prove correct,\n"
             "             2 usage or input error\n\n"
             "examples:\n"
             "  magpie analyze -k examples/kernels/opencl/analyze.yaml\n"
             "  magpie analyze --type opencl --reference vadd_ref.cl vadd.cl\n"
             "  magpie analyze --type cuda -t './vadd_test' --compile-cmd 'nvcc -o "
             "vadd_test vadd_test.cu' vadd.cu\n"
             "  magpie analyze --type pytorch --reference ref.py candidate.py\n",
};

const struct cli_cmd cli_cmd_compare = {
    .name = "compare",
    .args = "[KERNEL ...]",
    .summary = "rank two or more kernel implementations against a baseline",
    .intro = "Rank two or more kernel implementations against a baseline: correctness\n"
             "gate first, then interleaved timing rounds, speedup with a CI and a\n"
             "FASTER / SLOWER / SAME / INCONCLUSIVE verdict per candidate. By default\n"
             "(--timing sequential) one process checks and times all the kernels and\n"
             "each candidate stops once its speedup interval, spent over a fixed\n"
             "schedule of looks, clears or sits inside the +-min-effect band\n"
             "(docs/kernel-timing.md).\n",
    .opts = kernel_opts,
    .mode = M_COMPARE,
    .outro = "exit status: 0 ok, 1 a kernel failed to compile or to prove correct (compare: or\n"
             "             fewer than 2 kernels), 2 usage or input error\n\n"
             "examples:\n"
             "  magpie compare -k examples/kernels/opencl/compare.yaml\n"
             "  magpie compare --type opencl --baseline 0 vadd.cl vadd_vec4.cl\n"
             "  magpie compare -k examples/kernels/cuda/compare.yaml -o /tmp/results\n",
};

static void usage(FILE *f, bool compare)
{
    cli_help(f, compare ? &cli_cmd_compare : &cli_cmd_analyze);
}

static void progress_line(const char *line, void *user)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

static char *stem_of(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    return mp_strndup(b, n);
}

static char *dir_of(const char *path)
{
    char *abs = realpath(path, NULL);
    if (!abs)
        return NULL;
    char *s = strrchr(abs, '/');
    if (s && s != abs)
        *s = 0;
    return abs;
}

static char *abs_or_copy(const char *p)
{
    char *a = realpath(p, NULL);
    return a ? a : mp_strdup(p);
}

struct kopts {
    const char *kernel_config, *testcase, *type, *compile_cmd, *reference, *kname, *out_dir;
    const char *latency_method;
    long long size;
    double max_noise, max_time, min_effect;
    const char *timing;
    bool no_perf, no_latency, json, quiet;
    int baseline;
};

static int add_positional(struct mp_kernel_config *cfg, const struct kopts *ko, int argc,
                          char **argv, bool compare, struct mp_diag *d)
{
    enum mp_kernel_type type = MP_KERNEL_HIP;
    if (ko->type && mp_kernel_type_parse(ko->type, &type))
        return mp_diag_set(d, MP_EINVAL,
                           "--type must be hip, cuda, pytorch, triton or opencl, not '%s'",
                           ko->type);
    for (int i = 0; i < argc; i++) {
        if (access(argv[i], R_OK) != 0) {
            if (compare)
                return mp_diag_set(d, MP_ENOTFOUND, "kernel file not found: %s", argv[i]);
            fprintf(stderr, "magpie: warning: kernel file not found, skipped: %s\n", argv[i]);
            continue;
        }
        struct mp_kernel_spec k;
        mp_kernel_spec_init(&k);
        char *stem = stem_of(argv[i]);
        if (compare) {
            size_t n = strlen(stem) + 32;
            k.id = mp_malloc(n);
            if (k.id)
                snprintf(k.id, n, "kernel_%d_%s", cfg->nkernels, stem);
            free(stem);
        } else {
            k.id = stem;
        }
        k.type = type;
        k.sources = mp_calloc(1, sizeof(char *));
        if (k.sources) {
            k.sources[0] = abs_or_copy(argv[i]);
            k.nsources = 1;
        }
        k.working_dir = dir_of(argv[i]);
        int rc = 0;
        if (ko->testcase)
            rc = mp_cmds_add_string(&k.testcase, ko->testcase, d);
        if (!rc && ko->compile_cmd)
            rc = mp_cmds_add_string(&k.compile, ko->compile_cmd, d);
        if (!rc && ko->reference)
            k.reference = abs_or_copy(ko->reference);
        if (!rc && ko->kname)
            k.kernel_name = mp_strdup(ko->kname);
        k.size = ko->size;
        if (!rc)
            rc = mp_kernel_config_add(cfg, &k);
        mp_kernel_spec_fini(&k);
        if (rc)
            return rc;
    }
    return 0;
}

/* Parse step: fills ko; returns -1 to go on, else the exit code. */
static int parse_kopts(int argc, char **argv, bool compare, struct kopts *ko)
{
    int c;
    struct cli_parser op;
    cli_parser_init(&op, compare ? &cli_cmd_compare : &cli_cmd_analyze);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'k':
            ko->kernel_config = optarg;
            break;
        case 't':
            ko->testcase = optarg;
            break;
        case OPT_TYPE:
            ko->type = optarg;
            break;
        case OPT_COMPILE:
            ko->compile_cmd = optarg;
            break;
        case OPT_NOPERF:
            ko->no_perf = true;
            break;
        case OPT_NOLAT:
            ko->no_latency = true;
            break;
        case OPT_LATM:
            ko->latency_method = optarg;
            break;
        case OPT_LATREP:
            break; /* Magpie's runner knob; magpie stops on noise instead */
        case 'o':
            ko->out_dir = optarg;
            break;
        case OPT_JSON:
            ko->json = true;
            break;
        case OPT_BASE:
            ko->baseline = (int)strtol(optarg, &end, 10);
            if (*end || ko->baseline < 0) {
                fprintf(stderr, "magpie: error: --baseline expects an index >= 0, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case OPT_REF:
            ko->reference = optarg;
            break;
        case OPT_KNAME:
            ko->kname = optarg;
            break;
        case OPT_SIZE:
            ko->size = strtoll(optarg, &end, 10);
            if (*end || ko->size < 1) {
                fprintf(stderr, "magpie: error: --size expects a positive integer\n");
                return EXIT_USAGE;
            }
            break;
        case OPT_NOISE:
            ko->max_noise = strtod(optarg, &end) / 100;
            if (*end || ko->max_noise <= 0) {
                fprintf(stderr, "magpie: error: --max-noise expects a percentage > 0\n");
                return EXIT_USAGE;
            }
            break;
        case OPT_MAXT:
            ko->max_time = strtod(optarg, &end);
            if (*end || ko->max_time <= 0) {
                fprintf(stderr, "magpie: error: --max-time expects seconds > 0\n");
                return EXIT_USAGE;
            }
            break;
        case OPT_TIMING:
            if (strcmp(optarg, "sequential") != 0 && strcmp(optarg, "fixed") != 0) {
                fprintf(stderr, "magpie: error: --timing expects sequential or fixed, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            ko->timing = optarg;
            break;
        case OPT_MINEFF:
            ko->min_effect = strtod(optarg, &end) / 100;
            if (*end || !(ko->min_effect >= 0) || ko->min_effect >= 1) {
                fprintf(stderr, "magpie: error: --min-effect expects a percentage in [0, 100)\n");
                return EXIT_USAGE;
            }
            break;
        case 'q':
            ko->quiet = true;
            break;
        case 'h':
            usage(stdout, compare);
            return EXIT_OK;
        default: /* also --harness-child anywhere but alone */
            fprintf(stderr, "magpie: error: unknown option '%s' for %s\n", argv[optind - 1],
                    compare ? "compare" : "analyze");
            usage(stderr, compare);
            return EXIT_USAGE;
        }
    }
    return -1;
}

/* Why the file at path cannot be read as a config, or NULL when it can. */
static const char *unreadable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || access(path, R_OK) != 0)
        return strerror(errno);
    return S_ISDIR(st.st_mode) ? "it is a directory" : NULL;
}

/* Validate step: the kernel config from -c, -k or the positional kernels;
 * returns -1 to go on, else the exit code (cfg is then finalised). */
static int load_kernels(struct mp_kernel_config *cfg, const struct kopts *ko, int argc, char **argv,
                        const struct cli_global *g, bool compare)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    mp_kernel_config_init(cfg);
    /* input errors (exit 2) found before anything is loaded: a kernel
     * config that cannot be read (a missing -c is an empty config, as in
     * Magpie), an image docker would take for an option */
    const char *why = ko->kernel_config ? unreadable(ko->kernel_config) : NULL;
    if (why) {
        fprintf(stderr, "magpie: error: -k %s: cannot read the kernel config: %s\n",
                ko->kernel_config, why);
        mp_kernel_config_fini(cfg);
        return EXIT_USAGE;
    }
    if (g->docker_image && mp_proc_image_check(g->docker_image, "--docker-image", &d)) {
        (void)cli_report_error(&d, MP_EINVAL);
        mp_kernel_config_fini(cfg);
        return EXIT_USAGE;
    }
    int rc = mp_config_load_framework(cfg, g->config_path, &d);
    if (!rc && ko->kernel_config)
        rc = mp_config_load_kernel(cfg, ko->kernel_config, &d);
    else if (!rc)
        rc = add_positional(cfg, ko, argc, argv, compare, &d);
    if (rc) {
        int ec = cli_report_error(&d, rc);
        mp_kernel_config_fini(cfg);
        return ec == EXIT_OK ? EXIT_USAGE : ec;
    }
    if (!ko->kernel_config && cfg->nkernels == 0) {
        fprintf(stderr, "magpie: error: no kernels: give kernel files or -k CONFIG (see --help)\n");
        mp_kernel_config_fini(cfg);
        return EXIT_USAGE;
    }
    if (!compare && !ko->kernel_config && !ko->testcase && cfg->nkernels > 0 &&
        cfg->kernels[0].type == MP_KERNEL_HIP) {
        fprintf(stderr, "Error: --testcase is required for analyze mode\n");
        mp_kernel_config_fini(cfg);
        return EXIT_USAGE;
    }
    return -1;
}

/* The local and container runs: the flags over the config (Magpie's
 * precedence: CLI flag > kernel YAML > framework config). */
static void apply_overrides(struct mp_kernel_config *cfg, const struct kopts *ko,
                            const struct cli_global *g)
{
    if (g->docker_image) {
        free(cfg->scheduler.docker_image);
        cfg->scheduler.docker_image = strdup(g->docker_image);
    }
    if (ko->latency_method)
        snprintf(cfg->latency.method, sizeof(cfg->latency.method), "%s", ko->latency_method);
    if (ko->max_noise > 0)
        cfg->latency.max_noise = ko->max_noise;
    if (ko->max_time > 0)
        cfg->latency.max_time_s = ko->max_time;
    if (ko->timing)
        snprintf(cfg->compare.timing, sizeof(cfg->compare.timing), "%s", ko->timing);
    if (ko->min_effect >= 0)
        cfg->compare.threshold = ko->min_effect;
}

/* Emit step: the report JSON or the summary; returns the exit code. */
static int emit_run(const struct mp_kernel_run *run, const struct kopts *ko, bool compare)
{
    if (ko->json && run->report_path) {
        FILE *f = fopen(run->report_path, "r");
        char buf[65536];
        size_t n;
        while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
            fwrite(buf, 1, n, stdout);
        if (f)
            fclose(f);
    } else {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        mp_kernel_run_summary(run, &b);
        fwrite(mp_buf_cstr(&b), 1, b.len, stdout);
        mp_buf_fini(&b);
    }
    int ec = (!compare && mp_kernel_run_failed(run)) ? EXIT_FAIL : EXIT_OK;
    if (compare && run->baseline >= 0 && run->vs &&
        run->vs[run->baseline].verdict == MP_VERDICT_INCORRECT)
        ec = EXIT_FAIL;
    return ec;
}

int cli_kernel_main(int argc, char **argv, const struct cli_global *g, bool compare)
{
    if (!compare && argc == 3 && strcmp(argv[1], "--harness-child") == 0)
        return mp_kernel_harness_main(argv[2]);

    struct kopts ko = {.max_noise = -1, .max_time = -1, .min_effect = -1};
    int ec = parse_kopts(argc, argv, compare, &ko);
    if (ec >= 0)
        return ec;
    struct mp_kernel_config cfg;
    ec = load_kernels(&cfg, &ko, argc - optind, argv + optind, g, compare);
    if (ec >= 0)
        return ec;
    /* Magpie's precedence: CLI flag > kernel YAML > framework config */
    if (g->environment)
        snprintf(cfg.scheduler.environment, sizeof(cfg.scheduler.environment), "%s",
                 g->environment);
    if (g->workers > 0)
        cfg.scheduler.max_workers = g->workers;
    if (strcmp(cfg.scheduler.environment, "ray") == 0) {
        /* the same command as a Ray job on a worker (cmd_ray.c) */
        ec = cli_ray_kernel(argc, argv, g, compare, &cfg, ko.kernel_config, ko.json);
        mp_kernel_config_fini(&cfg);
        return ec;
    }
    apply_overrides(&cfg, &ko, g);
    bool in_container = strcmp(cfg.scheduler.environment, "container") == 0;
    if (in_container) {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
    }
    if (strcmp(cfg.scheduler.environment, "local") != 0 && !in_container)
        fprintf(stderr,
                "magpie: warning: environment '%s' is not supported for kernel evaluation yet; "
                "running locally\n",
                cfg.scheduler.environment);
    struct mp_kernel_opts o = {
        .output_dir = ko.out_dir,
        .no_perf = ko.no_perf,
        .no_latency = ko.no_latency,
        .baseline = ko.baseline,
        .progress = (!ko.quiet && !g->quiet && isatty(2)) ? progress_line : NULL,
    };
    /* `magpie warm-pool`'s socket: jobs to a warm runner of the same problem */
    const char *warm = getenv("MAGPIE_WARM_SOCKET");
    o.warm_socket = warm && *warm ? warm : NULL;
    struct mp_kernel_run run;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc =
        compare ? mp_kernel_compare(&cfg, &o, &run, &d) : mp_kernel_analyze(&cfg, &o, &run, &d);
    if (in_container) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
    }
    ec = rc ? cli_report_error(&d, rc) : emit_run(&run, &ko, compare);
    mp_kernel_run_fini(&run);
    mp_kernel_config_fini(&cfg);
    if (!rc && g_signal)
        raise(g_signal); /* the report is written: now end as the signal asks */
    return ec;
}

int cmd_analyze(int argc, char **argv, const struct cli_global *g)
{
    return cli_kernel_main(argc, argv, g, false);
}
