/* `magpie trace stages`: Magpie's inference post-processing of a serving
 * trace directory (split, one step per stage, per-stage inference reports,
 * compact roofline CSVs, tracelens_analysis JSON), natively. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/pipeline.h>
#include <magpie/tracelens.h>

#include "cli.h"
#include "opts.h"
#include "trace_arch.h"

enum { T_FW = 1000, T_ST, T_NS, T_ISL, T_OSL, T_CONC, T_RR, T_ARCH, T_ARCHJ, T_JSON };

static const struct cli_opt stages_opts[] = {
    {"output-dir", 'o', CLI_ARG, 'o', "DIR", "where tracelens/ goes (default: TRACE_DIR)", 0},
    {"framework", 0, CLI_ARG, T_FW, "NAME", "vllm (default) | sglang | atom: rank-0 file patterns",
     0},
    {"stages", 0, CLI_ARG, T_ST, "LIST",
     "prefilldecode,decode,prefill (default all; aliases pd, mixed, decode_only, "
     "prefill_only, ...)",
     0},
    {"num-steps", 0, CLI_ARG, T_NS, "N", "splitter window (default 32)", 0},
    {"isl", 0, CLI_ARG, T_ISL, "N",
     "the benchmark's input length (default: the ISL environment variable, as Magpie)", 0},
    {"osl", 0, CLI_ARG, T_OSL, "N", "its output length (default: $OSL)", 0},
    {"conc", 0, CLI_ARG, T_CONC, "N", "its concurrency (default: $CONC)", 0},
    {"random-range-ratio", 0, CLI_ARG, T_RR, "R",
     "its length range ratio (default: $RANDOM_RANGE_RATIO)", 0},
    {"gpu-arch", 0, CLI_ARG, T_ARCH, "NAME|auto", "roofline columns with a built-in arch", 0},
    {"gpu-arch-json", 0, CLI_ARG, T_ARCHJ, "FILE", "TraceLens arch JSON", 0},
    {"json", 0, CLI_NOARG, T_JSON, NULL, "print the tracelens_analysis JSON instead of the table",
     0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_stages = {
    .name = "trace stages",
    .args = "TRACE_DIR",
    .summary = "Magpie's inference post-processing: split, one step per stage, per-stage "
               "inference reports and roofline CSVs",
    .intro = "Magpie's inference-mode TraceLens post-processing, natively: finds the rank-0\n"
             "trace in TRACE_DIR (a torch_trace directory), splits it at its step annotations\n"
             "into TRACE_DIR/trace_split (as TraceLens_split_inference_trace --find-steady-state\n"
             "--store-single-iteration), picks one step per stage (largest batch; for decode the\n"
             "concurrency closest to CONC; then the median GPU busy time), and writes\n"
             "  DIR/tracelens/<prefilldecode|decode_only|prefill_only>/  inference report CSVs\n"
             "                                                         and report.html\n"
             "  DIR/tracelens/<stage>_ISL<i>_OSL<o>_CONC<c>_kernel_roofline_simple.csv\n"
             "  DIR/tracelens/tracelens_analysis.json  (Magpie's tracelens_analysis object)\n",
    .opts = stages_opts,
    .outro =
        "exit status: 0 ok, 1 a stage report failed, 2 usage or input error (no trace, no\n"
        "step annotations)\n\n"
        "example:\n"
        "  magpie trace stages results/benchmark_vllm_x/torch_trace -o results/benchmark_vllm_x\n"
        "      --conc 64 --isl 1024 --osl 1024 --gpu-arch H200\n",
};

static void stages_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_stages);
}

/* The picks and outputs, read back from the tracelens_analysis JSON. */
static void print_summary(const struct mp_buf *js, double secs)
{
    json_error_t err;
    json_t *root = json_loadb(js->data, js->len, 0, &err);
    if (!root)
        return;
    printf("rank-0 trace: %s\n", json_string_value(json_object_get(root, "rank0_trace")));
    printf("split: %s\n\n", json_string_value(json_object_get(root, "split_dir")));
    printf("%-14s %-6s %-8s %-10s %-14s %s\n", "stage", "row", "batch", "conc", "GPU busy us",
           "step trace");
    json_t *picks = json_object_get(root, "phase_picks");
    const char *key;
    json_t *v;
    json_object_foreach(picks, key, v)
    {
        const char *tp = json_string_value(json_object_get(v, "trace_path"));
        if (!tp) {
            printf("%-14s (none: %s)\n", key,
                   json_string_value(json_object_get(v, "selection_reason")));
            continue;
        }
        const char *b = strrchr(tp, '/');
        printf("%-14s %-6lld %-8g %-10g %-14.1f %s\n", key,
               (long long)json_integer_value(json_object_get(v, "row_index")),
               json_number_value(json_object_get(v, "batch_size")),
               json_number_value(json_object_get(v, "phase_avg_conc")),
               json_number_value(json_object_get(v, "gpu_busy_duration")), b ? b + 1 : tp);
    }
    json_t *res = json_object_get(root, "stage_results");
    printf("\n");
    json_object_foreach(res, key, v)
    {
        const char *simple = json_string_value(json_object_get(v, "simple_summary_file"));
        printf("%-14s report %s/  roofline CSV %s\n", key,
               json_string_value(json_object_get(v, "output_dir")), simple ? simple : "-");
    }
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(root, "warnings"), i, w)
        printf("warning: %s\n", json_string_value(w));
    json_array_foreach(json_object_get(root, "errors"), i, w)
        printf("error: %s\n", json_string_value(w));
    printf("\ndone in %.3f s; %s/tracelens_analysis.json\n", secs,
           json_string_value(json_object_get(root, "output_dir")));
    json_decref(root);
}

int cli_trace_stages(int argc, char **argv)
{
    struct mp_stages_opts o = {.isl = getenv("ISL"),
                               .osl = getenv("OSL"),
                               .conc = getenv("CONC"),
                               .random_range_ratio = getenv("RANDOM_RANGE_RATIO")};
    const char *arch_name = NULL, *arch_json = NULL;
    bool quiet = false, json = false;
    int c;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_trace_stages);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        char *end;
        switch (c) {
        case 'o':
            o.output_dir = optarg;
            break;
        case T_FW:
            if (strcmp(optarg, "vllm") != 0 && strcmp(optarg, "sglang") != 0 &&
                strcmp(optarg, "atom") != 0) {
                fprintf(stderr, "magpie: error: --framework expects vllm, sglang or atom\n");
                return EXIT_USAGE;
            }
            o.framework = optarg;
            break;
        case T_ST:
            o.stages = optarg;
            break;
        case T_NS: {
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 1000000) {
                fprintf(stderr, "magpie: error: --num-steps expects an integer >= 1\n");
                return EXIT_USAGE;
            }
            o.num_steps = (int)v;
            break;
        }
        case T_ISL:
        case T_OSL:
        case T_CONC:
        case T_RR:
            if (strtod(optarg, &end) < 0 || end == optarg || *end) {
                fprintf(stderr, "magpie: error: %s expects a number >= 0, not '%s'\n",
                        argv[optind - 1], optarg);
                return EXIT_USAGE;
            }
            *(c == T_ISL    ? &o.isl
              : c == T_OSL  ? &o.osl
              : c == T_CONC ? &o.conc
                            : &o.random_range_ratio) = optarg;
            break;
        case T_ARCH:
            arch_name = optarg;
            break;
        case T_ARCHJ:
            arch_json = optarg;
            break;
        case T_JSON:
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            stages_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace stages\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "magpie: error: trace stages takes one TRACE_DIR\n");
        stages_usage(stderr);
        return EXIT_USAGE;
    }
    o.trace_dir = argv[optind];
    struct mp_diag d;
    mp_diag_clear(&d);
    int st[3], nst;
    int rc = mp_stages_parse_list(o.stages, st, &nst, &d);
    if (rc)
        return cli_report_error(&d, rc);
    struct mp_roofline_arch arch;
    rc = cli_trace_arch(arch_name, arch_json, &arch, &o.arch, &o.arch_auto);
    if (rc >= 0)
        return rc;
    if (o.arch)
        o.gpu_arch_platform = o.arch->name;
    struct cli_progress *p = cli_progress_new("reading trace", !quiet && !json);
    o.on_progress = cli_progress_bytes;
    o.progress_user = p;
    struct mp_buf out;
    mp_buf_init(&out, 0);
    uint64_t t0 = mp_time_ns();
    rc = mp_stages_run(&o, &out, &d);
    cli_progress_finish(p);
    double secs = (double)(mp_time_ns() - t0) / 1e9;
    if (json && out.len)
        fwrite(out.data, 1, out.len, stdout);
    int code = EXIT_OK;
    if (rc == MP_ECHILD) {
        fprintf(stderr, "magpie: some stage reports failed; see errors in "
                        "tracelens/tracelens_analysis.json\n");
        code = EXIT_FAIL;
    } else if (rc) {
        code = cli_report_error(&d, rc);
    }
    if (!json && (!rc || rc == MP_ECHILD))
        print_summary(&out, secs);
    mp_buf_fini(&out);
    return code;
}
