/* `magpie trace stages`: Magpie's inference post-processing of a serving
 * trace directory (split, one step per stage, per-stage inference reports,
 * compact roofline CSVs, tracelens_analysis JSON), natively. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/pipeline.h>
#include <magpie/report.h>

#include "cli.h"

static void stages_usage(FILE *f)
{
    fprintf(f,
            "usage: magpie trace stages TRACE_DIR [-o DIR] [options]\n\n"
            "Magpie's inference-mode TraceLens post-processing, natively: finds the rank-0\n"
            "trace in TRACE_DIR (a torch_trace directory), splits it at its step annotations\n"
            "into TRACE_DIR/trace_split (as TraceLens_split_inference_trace --find-steady-state\n"
            "--store-single-iteration), picks one step per stage (largest batch; for decode the\n"
            "concurrency closest to CONC; then the median GPU busy time), and writes\n"
            "  DIR/tracelens/<prefilldecode|decode_only|prefill_only>/  inference report CSVs\n"
            "                                                         and report.html\n"
            "  DIR/tracelens/<stage>_ISL<i>_OSL<o>_CONC<c>_kernel_roofline_simple.csv\n"
            "  DIR/tracelens/tracelens_analysis.json  (Magpie's tracelens_analysis object)\n\n");
    fprintf(
        f,
        "options:\n"
        "  -o, --output-dir DIR      where tracelens/ goes (default: TRACE_DIR)\n"
        "  --framework NAME          vllm (default) | sglang | atom: rank-0 file patterns\n"
        "  --stages LIST             prefilldecode,decode,prefill (default all; aliases pd,\n"
        "                            mixed, decode_only, prefill_only, ...)\n"
        "  --num-steps N             splitter window (default 32)\n"
        "  --isl N --osl N --conc N --random-range-ratio R\n"
        "                            the benchmark's workload (default: the ISL, OSL, CONC\n"
        "                            and RANDOM_RANGE_RATIO environment variables, as Magpie)\n"
        "  --gpu-arch NAME|auto      roofline columns with a built-in arch\n"
        "  --gpu-arch-json FILE      TraceLens arch JSON\n"
        "  --json                    print the tracelens_analysis JSON instead of the table\n"
        "  -q, --quiet               no progress display\n\n"
        "exit status: 0 ok, 1 a stage report failed, 2 usage or input error (no trace, no\n"
        "step annotations)\n\n"
        "example:\n"
        "  magpie trace stages results/benchmark_vllm_x/torch_trace -o results/benchmark_vllm_x\n"
        "      --conc 64 --isl 1024 --osl 1024 --gpu-arch H200\n");
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
    enum { T_FW = 1000, T_ST, T_NS, T_ISL, T_OSL, T_CONC, T_RR, T_ARCH, T_ARCHJ, T_JSON };
    static const struct option opts[] = {
        {"output-dir", required_argument, NULL, 'o'},
        {"framework", required_argument, NULL, T_FW},
        {"stages", required_argument, NULL, T_ST},
        {"num-steps", required_argument, NULL, T_NS},
        {"isl", required_argument, NULL, T_ISL},
        {"osl", required_argument, NULL, T_OSL},
        {"conc", required_argument, NULL, T_CONC},
        {"random-range-ratio", required_argument, NULL, T_RR},
        {"gpu-arch", required_argument, NULL, T_ARCH},
        {"gpu-arch-json", required_argument, NULL, T_ARCHJ},
        {"json", no_argument, NULL, T_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct mp_stages_opts o = {.isl = getenv("ISL"),
                               .osl = getenv("OSL"),
                               .conc = getenv("CONC"),
                               .random_range_ratio = getenv("RANDOM_RANGE_RATIO")};
    const char *arch_name = NULL, *arch_json = NULL;
    bool quiet = false, json = false;
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
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
    if (arch_json) {
        rc = mp_roofline_arch_load_json(arch_json, &arch, &d);
        if (rc)
            return cli_report_error(&d, rc);
        o.arch = &arch;
        o.gpu_arch_platform = arch.name;
    } else if (arch_name && strcmp(arch_name, "auto") != 0) {
        if (mp_roofline_arch_builtin(arch_name, &arch) != 0) {
            fprintf(stderr, "magpie: error: unknown --gpu-arch '%s'\n", arch_name);
            return EXIT_USAGE;
        }
        o.arch = &arch;
        o.gpu_arch_platform = arch.name;
    }
    o.arch_auto = arch_name && strcmp(arch_name, "auto") == 0;
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
