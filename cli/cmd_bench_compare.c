/* `magpie benchmark compare A B [C ...]`: is a serving benchmark run really
 * faster than the baseline A? Parses the flags, loads the runs and hands
 * them to the comparison in the loadgen library (bench_compare.h), then
 * prints its table or JSON and writes the HTML page. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/bench_compare.h>

#include "cli.h"
#include "opts.h"

#define MAX_SIDES 16

enum {
    O_ALLOW = 1000,
    O_LABEL,
    O_JSON,
    O_HTML,
    O_BOOT,
    O_SEED,
    O_ALPHA,
    O_CI,
    O_MIN,
    O_SINGLE,
    O_FAIL
};

static const struct cli_opt bcmp_opts[] = {
    {"allow-different", 0, CLI_NOARG, O_ALLOW, NULL,
     "compare even when the workloads differ (differences listed)", 0},
    {"label", 0, CLI_ARG, O_LABEL, "L", "label of the next side, in order (repeat the option)", 0},
    {"json", 0, CLI_NOARG, O_JSON, NULL, "print the JSON document instead of the table", 0},
    {"output", 'o', CLI_ARG, 'o', "FILE", "also write the JSON document to FILE", 0},
    {"html", 0, CLI_ARG, O_HTML, "FILE",
     "write an HTML page with the tables and CDFs of TTFT, ITL, E2EL", 0},
    {"bootstrap", 0, CLI_ARG, O_BOOT, "N", "resamples (default 2000)", 0},
    {"seed", 0, CLI_ARG, O_SEED, "S",
     "resampling seed (default 0; same inputs + seed = same result)", 0},
    {"alpha", 0, CLI_ARG, O_ALPHA, "A", "family-wise error rate over the metrics (default 0.05)",
     0},
    {"ci-level", 0, CLI_ARG, O_CI, "L", "level of the intervals shown (default 0.95)", 0},
    {"min-effect", 0, CLI_ARG, O_MIN, "PCT", "changes within +-PCT % count as noise (default 1)",
     0},
    {"single-run-effect", 0, CLI_ARG, O_SINGLE, "PCT",
     "with one run on a side (run-to-run noise unmeasured) a verdict needs a change beyond "
     "+-PCT % and p99 metrics are not judged (default 10, measured: docs/metrics.md; 0 trusts "
     "the within-run intervals); repeats measure the noise instead",
     0},
    {"fail-on-slower", 0, CLI_NOARG, O_FAIL, NULL,
     "exit 1 when any metric of any candidate is SLOWER", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_benchmark_compare = {
    .name = "benchmark compare",
    .args = "BASELINE CANDIDATE [CANDIDATE ...]",
    .summary = "is a serving benchmark run really faster than the baseline? (run-to-run "
               "comparison with confidence intervals)",
    .intro = "Is the candidate really faster? For output and request throughput and the mean,\n"
             "median and p99 of TTFT, TPOT, ITL and E2EL: the change against the baseline with a\n"
             "bootstrap confidence interval, and a verdict FASTER / SLOWER / WITHIN NOISE with\n"
             "Holm's correction over the 14 metrics (docs/metrics.md).\n\n"
             "Each side is a benchmark workspace (magpie benchmark vllm ...), a workspace of\n"
             "repeats (--repeat N: run_1 .. run_N), a result JSON (--save-result; its\n"
             ".requests.jsonl beside it, or vLLM's --save-detailed arrays), or several of\n"
             "these joined by ',' (repeats of one setting). Runs of different workloads (model,\n"
             "dataset, ISL/OSL, concurrency, request rate, engine arguments, magpie version) are\n"
             "refused; engine, image and GPU differences are listed.\n",
    .opts = bcmp_opts,
    .outro = "exit status: 0 compared, 1 --fail-on-slower and something is SLOWER,\n"
             "             2 usage or input error, or the workloads differ\n\n"
             "examples:\n"
             "  magpie benchmark compare results/benchmark_vllm_base results/benchmark_vllm_new\n"
             "  magpie benchmark compare base.json new.json --html compare.html\n"
             "  magpie benchmark compare a1.json,a2.json,a3.json b1.json,b2.json,b3.json --json\n",
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_benchmark_compare);
}

static int write_out(const char *path, const struct mp_buf *b)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_fs_write_atomic(path, b->data ? b->data : "", b->len, &d);
    return rc ? cli_report_error(&d, rc) : 0;
}

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
    int rc = cli_parse_double(opt, s, out);
    if (rc)
        return rc;
    if (!(*out >= lo && *out <= hi)) {
        fprintf(stderr, "magpie: error: %s must be in [%g, %g], not '%s'\n", opt, lo, hi, s);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_bench_compare(int argc, char **argv, const struct cli_global *g)
{
    (void)g;

    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    const char *labels[MAX_SIDES] = {0}, *json_path = NULL, *html_path = NULL;
    int n_labels = 0, c, rc;
    bool json = false, fail_on_slower = false;
    double v;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_benchmark_compare);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case O_ALLOW:
            o.allow_different = true;
            break;
        case O_LABEL:
            if (n_labels == MAX_SIDES) {
                fprintf(stderr, "magpie: error: at most %d labels\n", MAX_SIDES);
                return EXIT_USAGE;
            }
            labels[n_labels++] = optarg;
            break;
        case O_JSON:
            json = true;
            break;
        case 'o':
            json_path = optarg;
            break;
        case O_HTML:
            html_path = optarg;
            break;
        case O_BOOT:
            if ((rc = parse_num("--bootstrap", optarg, 100, 1000000, &v)))
                return rc;
            o.nboot = (int)v;
            break;
        case O_SEED:
            if ((rc = parse_num("--seed", optarg, 0, 9007199254740992.0, &v)))
                return rc;
            o.seed = (uint64_t)v;
            break;
        case O_ALPHA:
            if ((rc = parse_num("--alpha", optarg, 1e-9, 0.5, &o.alpha)))
                return rc;
            break;
        case O_CI:
            if ((rc = parse_num("--ci-level", optarg, 0.5, 0.9999, &o.ci_level)))
                return rc;
            break;
        case O_MIN:
            if ((rc = parse_num("--min-effect", optarg, 0, 100, &o.min_effect_pct)))
                return rc;
            break;
        case O_SINGLE:
            if ((rc = parse_num("--single-run-effect", optarg, 0, 100, &o.single_run_effect_pct)))
                return rc;
            break;
        case O_FAIL:
            fail_on_slower = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    int n_sides = argc - optind;
    if (n_sides < 2 || n_sides > MAX_SIDES) {
        fprintf(stderr, "magpie: error: give a baseline and 1 to %d candidates (got %d paths)\n",
                MAX_SIDES - 1, n_sides);
        usage(stderr);
        return EXIT_USAGE;
    }
    if (n_labels > n_sides) {
        fprintf(stderr, "magpie: error: %d labels for %d sides\n", n_labels, n_sides);
        return EXIT_USAGE;
    }
    struct mp_bcmp_side *sides[MAX_SIDES] = {0};
    struct mp_bcmp_result *res = NULL;
    struct mp_buf out;
    mp_buf_init(&out, 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    int exit_code = EXIT_OK;
    for (int i = 0; i < n_sides; i++) {
        if ((rc = mp_bcmp_load(argv[optind + i], labels[i], &sides[i], &d))) {
            exit_code = cli_report_error(&d, rc);
            goto done;
        }
    }
    rc = mp_bcmp_compare(sides[0], (const struct mp_bcmp_side *const *)sides + 1,
                         (size_t)n_sides - 1, &o, &res, &d);
    if (rc) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    if ((json || json_path) && mp_bcmp_json(res, &out)) {
        exit_code = EXIT_FAIL;
        goto done;
    }
    if (json_path && (exit_code = write_out(json_path, &out)))
        goto done;
    if (!json) {
        mp_buf_reset(&out);
        if (mp_bcmp_text(res, &out)) {
            exit_code = EXIT_FAIL;
            goto done;
        }
    }
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    if (html_path) {
        mp_buf_reset(&out);
        if (mp_bcmp_html(res, &out)) {
            exit_code = EXIT_FAIL;
            goto done;
        }
        if ((exit_code = write_out(html_path, &out)))
            goto done;
    }
    for (size_t i = 0; fail_on_slower && i < res->n_pairs; i++)
        if (res->pairs[i].n_slower)
            exit_code = EXIT_FAIL;
done:
    mp_bcmp_result_free(res);
    for (int i = 0; i < n_sides && i < MAX_SIDES; i++)
        mp_bcmp_side_free(sides[i]);
    mp_buf_fini(&out);
    return exit_code;
}
