/* `magpie benchmark sweep`: a serving benchmark over a grid of loads against
 * a running server (the runs are `benchmark --base-url` children, so every
 * client flag applies), the saturation knee, the SLA search, interleaved
 * candidate runs; and `benchmark sweep compare A B`. The driver is
 * serve/sweep.c, the statistics and documents loadgen/sweep*.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/serve.h>
#include <magpie/sweep.h>

#include "cli.h"
#include "opts.h"

enum {
    S_BASE = 1000,
    S_CAND,
    S_LABEL,
    S_CAND_LABEL,
    S_CONC,
    S_RATE,
    S_REPEAT,
    S_MAX_REPEAT,
    S_RUN_ALL,
    S_MIN_GAIN,
    S_MAX_FAILED,
    S_SLA,
    S_SEARCH,
    S_SEARCH_TOL,
    S_GPUS,
    S_BOOT,
    S_RUN_TIMEOUT,
    S_JSON,
    S_CONFIG,
};

static const struct cli_opt sweep_opts[] = {
    {"base-url", 0, CLI_ARG, S_BASE, "URL", "the server to sweep (running; OpenAI-compatible)", 0},
    {"candidate-url", 0, CLI_ARG, S_CAND, "URL",
     "a second server swept with the first, interleaved: each repeat runs on both back to back, "
     "alternating which goes first, so a drift of the machine falls on both; OUT/baseline, "
     "OUT/candidate and OUT/compare.{txt,json,html} (paired verdicts)",
     0},
    {"benchmark-config", 'b', CLI_ARG, S_CONFIG, "[LABEL=]YAML",
     "instead of --base-url: a benchmark config whose engine magpie starts (a server set); "
     "repeat for several: each engine is started once, swept, stopped, into OUT/LABEL/ "
     "(LABEL: the file name without .yaml), and OUT/engines.json lists them",
     0},
    {"label", 0, CLI_ARG, S_LABEL, "L", "name of the sweep (default: the URL)", 0},
    {"candidate-label", 0, CLI_ARG, S_CAND_LABEL, "L", "name of the candidate's sweep", 0},
    {"output-dir", 'o', CLI_ARG, 'o', "DIR",
     "where the sweep goes (must not hold one): sweep.json, sweep.csv, pareto.html, "
     "points/<point>/run_N.json (+ .requests.jsonl, .html, .log)",
     0},
    {NULL, 0, CLI_NOARG, 0, NULL, "load points", 0},
    {"max-concurrency", 0, CLI_ARG, S_CONC, "N,N,...",
     "concurrency caps to climb, e.g. 1,2,4,8,16,32 (0: no cap)", 0},
    {"request-rate", 0, CLI_ARG, S_RATE, "R,R,...", "request rates, e.g. 1,2,4,inf", 0},
    {"repeat", 0, CLI_ARG, S_REPEAT, "N", "runs per point (default 1)", 0},
    {"run-all", 0, CLI_NOARG, S_RUN_ALL, NULL,
     "run every point of the grid, past saturation too (default: stop climbing at it)", 0},
    {"min-gain", 0, CLI_ARG, S_MIN_GAIN, "PCT",
     "a step of the climb is still rising when output throughput grows by more than PCT % "
     "with confidence (default 5)",
     0},
    {"max-failed-requests", 0, CLI_ARG, S_MAX_FAILED, "N|P%",
     "failed requests a point may have before it counts as saturated (default 0)", 0},
    {"gpus", 0, CLI_ARG, S_GPUS, "N", "GPUs serving, for tok/s per GPU (default 1)", 0},
    {NULL, 0, CLI_NOARG, 0, NULL, "SLA search", 0},
    {"sla", 0, CLI_ARG, S_SLA, "METRIC<=X",
     "a latency (or throughput >=) limit, e.g. 'p99_ttft_ms<=150'; repeat for several", 0},
    {"search", 0, CLI_ARG, S_SEARCH, "VAR:LO:HI",
     "find the highest max_concurrency:LO:HI or request_rate:LO:HI meeting every --sla "
     "(bisection)",
     0},
    {"max-repeat", 0, CLI_ARG, S_MAX_REPEAT, "N",
     "runs at a point too close to its limit to call (default --repeat + 2)", 0},
    {"search-tolerance", 0, CLI_ARG, S_SEARCH_TOL, "PCT",
     "request_rate search: stop when HI / LO <= 1 + PCT % (default 5)", 0},
    {NULL, 0, CLI_NOARG, 0, NULL, "statistics and output", 0},
    {"bootstrap", 0, CLI_ARG, S_BOOT, "N", "bootstrap resamples per point (default 1000)", 0},
    {"run-timeout", 0, CLI_ARG, S_RUN_TIMEOUT, "S", "limit of one run in seconds (none)", 0},
    {"json", 0, CLI_NOARG, S_JSON, NULL, "print sweep.json instead of the table", 0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress lines", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_benchmark_sweep = {
    .name = "benchmark sweep",
    .args = "--base-url URL -o DIR [LOADS] [CLIENT FLAGS]",
    .usage = "usage: magpie benchmark sweep compare BASELINE CANDIDATE [options]",
    .summary = "a serving benchmark over a grid of loads: saturation knee, SLA search, "
               "frontiers with intervals",
    .intro =
        "Runs the same workload at each load point against a running server, each point\n"
        "--repeat times (every run is `magpie benchmark --base-url`, so every client flag of\n"
        "that command applies and is passed on: dataset, lengths, --num-prompts, --seed,\n"
        "headers, ...). Climbing the list that varies, it stops where output throughput no\n"
        "longer rises beyond --min-gain with confidence while TTFT or E2EL grows, or requests\n"
        "fail (the knee). --search bisects for the highest load meeting every --sla, with more\n"
        "runs where a point is too close to call. Per point every metric has a bootstrap\n"
        "interval (docs/sweep.md).\n",
    .opts_title = "server and output",
    .opts = sweep_opts,
    .outro = "exit status: 0 swept, 1 a run failed, 2 usage or input error\n\n"
             "examples:\n"
             "  magpie benchmark sweep --base-url http://127.0.0.1:8000 -o sweep1 \\\n"
             "      --max-concurrency 1,2,4,8,16,32 --repeat 3 --num-prompts 200 \\\n"
             "      --random-input-len 1024 --random-output-len 128\n"
             "  magpie benchmark sweep --base-url http://127.0.0.1:8000 -o sla \\\n"
             "      --sla 'p99_ttft_ms<=150' --sla 'p99_tpot_ms<=20' --search "
             "max_concurrency:1:256\n"
             "  magpie benchmark sweep --base-url http://a:8000 --candidate-url http://b:8000 \\\n"
             "      -o ab --max-concurrency 4,16 --repeat 5\n"
             "  magpie benchmark sweep compare sweep1 sweep2 --html cmp.html\n",
};

static const struct cli_opt cmp_opts[] = {
    {"json", 0, CLI_NOARG, S_JSON, NULL, "print the JSON document instead of the table", 0},
    {"output", 'o', CLI_ARG, 'o', "FILE", "also write the JSON document to FILE", 0},
    {"html", 0, CLI_ARG, S_CAND, "FILE", "both frontiers and the verdicts as a page", 0},
    {"bootstrap", 0, CLI_ARG, S_BOOT, "N", "bootstrap resamples (default 2000)", 0},
    {"min-effect", 0, CLI_ARG, S_MIN_GAIN, "PCT", "changes within +-PCT % are noise (default 1)",
     0},
    {"allow-different", 0, CLI_NOARG, S_RUN_ALL, NULL,
     "compare even when the workloads differ (the differences are listed)", 0},
    {"single-run-effect", 0, CLI_ARG, S_SEARCH_TOL, "PCT",
     "the floor with one run per point (run-to-run noise unmeasured; default 10, p99 not "
     "judged)",
     0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_benchmark_sweep_compare = {
    .name = "benchmark sweep compare",
    .args = "BASELINE CANDIDATE",
    .summary = "two sweeps point by point: verdicts, and the shift of the knee and the SLA point",
    .intro = "Matches the points of two sweeps (directories or their sweep.json) by load and\n"
             "compares each pair with `benchmark compare`'s statistics: paired Student t over\n"
             "the repeats when both come from one interleaved run (--candidate-url), else the\n"
             "bootstrap (with the larger floor for single runs). Then how far the knee and the\n"
             "SLA point moved, with the interval their brackets allow.\n",
    .opts = cmp_opts,
    .outro = "exit status: 0 compared, 2 usage or input error\n",
};

#define MAX_LIST 256
#define MAX_FWD 480
#define MAX_SETS 16

struct sweep_args {
    struct mp_serve_sweep_opts o;
    int conc[MAX_LIST];
    double rates[MAX_LIST];
    struct mp_sweep_sla sla[MP_SWEEP_MAX_SLA];
    const char *fwd[MAX_FWD];
    const char *configs[MAX_SETS];
    size_t n_configs;
    bool json, quiet;
};

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "magpie: error: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n(see magpie benchmark sweep --help)\n");
    return EXIT_USAGE;
}

static int parse_conc_list(const char *s, struct sweep_args *a)
{
    char *dup = strdup(s), *save = NULL;
    if (!dup)
        return EXIT_FAIL;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(t, &end, 10);
        if (*end || end == t || v < 0 || v > 1000000 || a->o.n_conc == MAX_LIST) {
            free(dup);
            return usage_error("--max-concurrency: '%s' is not a list of whole numbers 0..1000000 "
                               "(at most 256)%s",
                               s, "");
        }
        a->conc[a->o.n_conc++] = (int)v;
    }
    free(dup);
    return a->o.n_conc ? 0 : usage_error("--max-concurrency: empty list%s%s", "", "");
}

static int parse_rate_list(const char *s, struct sweep_args *a)
{
    char *dup = strdup(s), *save = NULL;
    if (!dup)
        return EXIT_FAIL;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        double v;
        char *end = t;
        if (!strcmp(t, "inf"))
            v = INFINITY;
        else
            v = strtod(t, &end);
        if ((end == t || *end) || !(v > 0) || a->o.n_rates == MAX_LIST) {
            free(dup);
            return usage_error("--request-rate: '%s' is not a list of rates > 0 or inf (at most "
                               "256)%s",
                               s, "");
        }
        a->rates[a->o.n_rates++] = v;
    }
    free(dup);
    return a->o.n_rates ? 0 : usage_error("--request-rate: empty list%s%s", "", "");
}

static int parse_number(const char *opt, const char *v, double lo, double hi, double *out)
{
    int rc = cli_parse_double(opt, v, out);
    if (rc)
        return rc;
    if (!(*out >= lo && *out <= hi)) {
        fprintf(stderr, "magpie: error: %s must be in [%g, %g], not '%s'\n", opt, lo, hi, v);
        return EXIT_USAGE;
    }
    return 0;
}

/* Options the sweep sets on every run itself. */
static bool reserved(const char *name)
{
    static const char *const r[] = {
        "save-result", "result-dir", "result-filename", "json", "html", "save-requests",
        "label",       "quiet",      "disable-tqdm",    "host", "port", "help"};
    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
        if (!strcmp(name, r[i]))
            return true;
    return false;
}

/* Hands an option of `benchmark --base-url` (and its value or values) on to
 * every run. */
static int forward(int argc, char **argv, int *i, struct sweep_args *a)
{
    char word[64];
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    snprintf(word, sizeof(word), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
    const struct cli_opt *opt = cli_find(&cli_cmd_benchmark_client, word);
    if (!opt || !opt->name || reserved(opt->name))
        return usage_error("'%s' is not an option of benchmark sweep%s", arg,
                           opt ? " (the sweep sets it on every run itself)" : "");
    if (a->o.n_client_args + 2 >= MAX_FWD)
        return usage_error("too many client options%s%s", "", "");
    a->fwd[a->o.n_client_args++] = arg;
    if (opt->arg != CLI_ARG || eq)
        return 0;
    if (*i + 1 >= argc)
        return usage_error("%s needs a value%s", arg, "");
    a->fwd[a->o.n_client_args++] = argv[++*i];
    /* list options (--header K=V ...) take the words up to the next option */
    bool list = opt->metavar && strstr(opt->metavar, "...");
    while (list && *i + 1 < argc && argv[*i + 1][0] != '-' && a->o.n_client_args + 1 < MAX_FWD)
        a->fwd[a->o.n_client_args++] = argv[++*i];
    return 0;
}

static int sweep_value(int id, const char *v, struct sweep_args *a)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    double x;
    int rc = 0;
    switch (id) {
    case S_BASE:
        a->o.base_url = v;
        return 0;
    case S_CAND:
        a->o.cand_url = v;
        return 0;
    case S_LABEL:
        a->o.label = v;
        return 0;
    case S_CAND_LABEL:
        a->o.cand_label = v;
        return 0;
    case 'o':
        a->o.out_dir = v;
        return 0;
    case S_CONC:
        return parse_conc_list(v, a);
    case S_RATE:
        return parse_rate_list(v, a);
    case S_REPEAT:
    case S_MAX_REPEAT:
        if ((rc = parse_number(id == S_REPEAT ? "--repeat" : "--max-repeat", v, 1, 1000, &x)))
            return rc;
        *(id == S_REPEAT ? &a->o.repeat : &a->o.max_repeat) = (int)x;
        return 0;
    case S_MIN_GAIN:
        return parse_number("--min-gain", v, 0, 1000, &a->o.min_gain_pct);
    case S_SEARCH_TOL:
        return parse_number("--search-tolerance", v, 0.01, 100, &a->o.search_tol_pct);
    case S_GPUS:
        rc = parse_number("--gpus", v, 1, 100000, &x);
        a->o.gpus = (int)x;
        return rc;
    case S_BOOT:
        rc = parse_number("--bootstrap", v, 100, 1000000, &x);
        a->o.nboot = (int)x;
        return rc;
    case S_RUN_TIMEOUT:
        return parse_number("--run-timeout", v, 0, 1e7, &a->o.run_timeout_s);
    case S_MAX_FAILED:
        rc = mp_loadgen_fail_limit_parse(v, &a->o.fail_limit, &d);
        break;
    case S_CONFIG:
        if (a->n_configs == MAX_SETS)
            return usage_error("at most 16 -b configs%s%s", "", "");
        a->configs[a->n_configs++] = v;
        return 0;
    case S_SLA:
        if (a->o.n_sla == MP_SWEEP_MAX_SLA)
            return usage_error("at most 16 --sla%s%s", "", "");
        if (!(rc = mp_sweep_sla_parse(v, &a->sla[a->o.n_sla], &d)))
            a->o.n_sla++;
        break;
    case S_SEARCH: {
        struct mp_sweep_search s;
        if (!(rc = mp_sweep_search_parse(v, &s, &d))) {
            a->o.search = true;
            a->o.search_var = s.var;
            a->o.search_lo = s.lo;
            a->o.search_hi = s.hi;
        }
        break;
    }
    default:
        return usage_error("internal: option %s%s", "?", "");
    }
    return rc ? cli_report_error(&d, rc) : 0;
}

static int sweep_parse(int argc, char **argv, struct sweep_args *a)
{
    for (int i = 1; i < argc; i++) {
        char word[64];
        const char *arg = argv[i], *eq = strchr(arg, '=');
        snprintf(word, sizeof(word), "%.*s",
                 eq && arg[1] == '-' ? (int)(eq - arg) : (int)strlen(arg), arg);
        const struct cli_opt *opt = cli_find(&cli_cmd_benchmark_sweep, word);
        if (!opt) {
            int rc = forward(argc, argv, &i, a);
            if (rc)
                return rc;
            continue;
        }
        if (opt->id == 'h') {
            cli_help(stdout, &cli_cmd_benchmark_sweep);
            return -1;
        }
        if (opt->id == S_RUN_ALL || opt->id == S_JSON || opt->id == 'q') {
            *(opt->id == S_RUN_ALL ? &a->o.run_all
              : opt->id == S_JSON  ? &a->json
                                   : &a->quiet) = true;
            continue;
        }
        const char *v = eq && arg[1] == '-' ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v)
            return usage_error("%s needs a value%s", arg, "");
        int rc = sweep_value(opt->id, v, a);
        if (rc)
            return rc;
    }
    return 0;
}

static void on_line(const char *line, void *user)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

static int sweep_compare(int argc, char **argv);

/* The label of "LABEL=FILE", else FILE's name without its directory and .yaml / .yml. */
static void set_label(const char *arg, char *label, size_t len, const char **file)
{
    const char *eq = strchr(arg, '=');
    if (eq && eq != arg && !memchr(arg, '/', (size_t)(eq - arg))) {
        snprintf(label, len, "%.*s", (int)(eq - arg), arg);
        *file = eq + 1;
        return;
    }
    *file = arg;
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".yaml"))
        n -= 5;
    else if (n > 4 && !strcmp(base + n - 4, ".yml"))
        n -= 4;
    snprintf(label, len, "%.*s", (int)n, base);
}

/* -b CONFIG ...: one engine start per config, each swept (serve/sweep.c). */
static int sweep_engines(struct sweep_args *a)
{
    struct mp_serve_config *cfgs[MAX_SETS] = {0};
    char labels[MAX_SETS][128];
    const char *lp[MAX_SETS];
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = 0, exit_code = EXIT_OK;
    for (size_t i = 0; i < a->n_configs && !rc; i++) {
        const char *file;
        set_label(a->configs[i], labels[i], sizeof(labels[i]), &file);
        lp[i] = labels[i];
        if (!(cfgs[i] = calloc(1, sizeof(*cfgs[i])))) {
            rc = mp_diag_set(&d, MP_ENOMEM, "out of memory");
            break;
        }
        mp_serve_config_init(cfgs[i]);
        if (!(rc = mp_serve_config_load(cfgs[i], file, &d)))
            rc = mp_serve_config_validate(cfgs[i], &d);
        if (!rc && cfgs[i]->run_mode == MP_SERVE_RAY) {
            rc = mp_diag_set(&d, MP_EUNSUP,
                             "run_mode ray: a sweep over an engine on a Ray cluster is not "
                             "implemented (docs/sweep.md); use run_mode local or docker");
            mp_diag_set_file(&d, file);
        }
    }
    size_t failed = 0;
    if (!rc) {
        struct mp_serve_run_opts ro = {.magpie_version = MP_VERSION};
        rc = mp_serve_sweep_engines(cfgs, lp, a->n_configs, &a->o, &ro, &failed, &d);
    }
    if (rc)
        exit_code = cli_report_error(&d, rc);
    else if (failed)
        exit_code = EXIT_FAIL;
    if (!rc)
        printf("%zu of %zu server set(s) swept; %s/engines.json lists them\n",
               a->n_configs - failed, a->n_configs, a->o.out_dir);
    for (size_t i = 0; i < a->n_configs; i++) {
        if (cfgs[i])
            mp_serve_config_fini(cfgs[i]);
        free(cfgs[i]);
    }
    return exit_code;
}

int cli_bench_sweep(int argc, char **argv, const struct cli_global *g)
{
    if (argc > 1 && !strcmp(argv[1], "compare"))
        return sweep_compare(argc - 1, argv + 1);
    struct sweep_args *a = calloc(1, sizeof(*a));
    if (!a)
        return EXIT_FAIL;
    mp_serve_sweep_opts_default(&a->o);
    a->o.conc = a->conc;
    a->o.rates = a->rates;
    a->o.sla = a->sla;
    a->o.client_args = a->fwd;
    int rc = sweep_parse(argc, argv, a);
    if (rc) {
        free(a);
        return rc < 0 ? EXIT_OK : rc;
    }
    if (!a->o.out_dir || !a->o.base_url == !a->n_configs) {
        free(a);
        return usage_error("a sweep needs -o DIR and either --base-url URL or -b CONFIG%s%s", "",
                           "");
    }
    if (!a->quiet && !(g && g->quiet))
        a->o.on_line = on_line;
    if (a->n_configs) {
        rc = sweep_engines(a);
        free(a);
        return rc;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_sweep *sa = NULL, *sb = NULL;
    rc = mp_serve_sweep_run(&a->o, &sa, &sb, &d);
    int exit_code = EXIT_OK;
    if (rc) {
        exit_code = cli_report_error(&d, rc);
    } else {
        struct mp_buf out;
        mp_buf_init(&out, 0);
        int w = 0;
        for (int k = 0; k < 2 && !w; k++) {
            const struct mp_sweep *s = k ? sb : sa;
            if (s)
                w = a->json ? mp_sweep_json(s, &out) : mp_sweep_text(s, &out);
        }
        fwrite(mp_buf_cstr(&out), 1, strlen(mp_buf_cstr(&out)), stdout);
        mp_buf_fini(&out);
        if (!a->json)
            printf("sweep written to %s\n", a->o.out_dir);
        exit_code = w ? EXIT_FAIL : EXIT_OK;
    }
    mp_sweep_free(sa);
    mp_sweep_free(sb);
    free(a);
    return exit_code;
}

/* ---- compare ---- */

static int write_file(const char *path, struct mp_buf *b)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_fs_write_atomic(path, mp_buf_cstr(b), strlen(mp_buf_cstr(b)), &d);
    return rc ? cli_report_error(&d, rc) : 0;
}

static int cmp_parse(int argc, char **argv, struct mp_bcmp_opts *o, bool *json,
                     const char **json_path, const char **html)
{
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_benchmark_sweep_compare);
    int c, rc;
    double v;
    while ((c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case S_JSON:
            *json = true;
            break;
        case S_RUN_ALL:
            o->allow_different = true;
            break;
        case 'o':
            *json_path = optarg;
            break;
        case S_CAND:
            *html = optarg;
            break;
        case S_BOOT:
            if ((rc = parse_number("--bootstrap", optarg, 100, 1000000, &v)))
                return rc;
            o->nboot = (int)v;
            break;
        case S_MIN_GAIN:
            if ((rc = parse_number("--min-effect", optarg, 0, 100, &o->min_effect_pct)))
                return rc;
            break;
        case S_SEARCH_TOL:
            if ((rc = parse_number("--single-run-effect", optarg, 0, 100,
                                   &o->single_run_effect_pct)))
                return rc;
            break;
        case 'h':
            cli_help(stdout, &cli_cmd_benchmark_sweep_compare);
            return -1;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s'\n", argv[optind - 1]);
            cli_usage(stderr, &cli_cmd_benchmark_sweep_compare);
            return EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "magpie: error: give two sweeps (directories or sweep.json), not %d\n",
                argc - optind);
        return EXIT_USAGE;
    }
    return 0;
}

static int sweep_compare(int argc, char **argv)
{
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    bool json = false;
    const char *json_path = NULL, *html = NULL;
    int rc = cmp_parse(argc, argv, &o, &json, &json_path, &html);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_sweep *a = NULL, *b = NULL;
    struct mp_sweep_cmp *cmp = NULL;
    struct mp_buf out;
    mp_buf_init(&out, 0);
    int exit_code = EXIT_OK;
    if ((rc = mp_sweep_load(argv[optind], &a, &d)) ||
        (rc = mp_sweep_load(argv[optind + 1], &b, &d)) ||
        (rc = mp_sweep_compare(a, b, &o, &cmp, &d))) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    if (json || json_path) {
        if (mp_sweep_cmp_json(cmp, &out) ||
            (json_path && (exit_code = write_file(json_path, &out))))
            goto done;
    }
    if (!json) {
        mp_buf_reset(&out);
        if (mp_sweep_cmp_text(cmp, &out)) {
            exit_code = EXIT_FAIL;
            goto done;
        }
    }
    fwrite(mp_buf_cstr(&out), 1, strlen(mp_buf_cstr(&out)), stdout);
    if (html) {
        mp_buf_reset(&out);
        if (mp_sweep_cmp_html(cmp, &out)) {
            exit_code = EXIT_FAIL;
            goto done;
        }
        exit_code = write_file(html, &out);
    }
done:
    mp_buf_fini(&out);
    mp_sweep_cmp_free(cmp);
    mp_sweep_free(a);
    mp_sweep_free(b);
    return exit_code;
}
