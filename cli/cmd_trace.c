/* `magpie trace <sub>`: trace analyses. `kernels` is the kernel summary;
 * report / split / stages arrive with the TraceLens-compatible reports. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/capture.h>
#include <magpie/gap.h>
#include <magpie/report.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: magpie trace <command> [options]\n\n"
               "commands:\n"
               "  kernels PATH   time per kernel name (Magpie's kernel_summary), per rank and\n"
               "                 merged; PATH is a trace file or a directory of rank traces\n"
               "  report TRACE   TraceLens-compatible performance report (CSV sheets)\n"
               "  collective PATH...  multi-rank collective (NCCL/RCCL) report, TraceLens's\n"
               "                 multi_rank_collective_report (CSV sheets)\n"
               "  split TRACE    split a serving trace at its step annotations into per-step\n"
               "                 and steady-state sub-traces (TraceLens's splitter)\n"
               "  stages DIR     Magpie's inference post-processing: split, one step per\n"
               "                 stage, per-stage inference reports and roofline CSVs\n"
               "  sources [TRACE]  map kernel names (from TRACE or stdin) to the source\n"
               "                 files that define them, with a calibrated confidence\n"
               "  compare A B...  compare TraceLens-compatible reports (CSV directories),\n"
               "                 TraceLens's compare_perf_reports_pytorch\n\n"
               "`magpie trace <command> --help` for a command's options.\n");
}

static void kernels_usage(FILE *f)
{
    fprintf(f, "usage: magpie trace kernels PATH [--json | --csv] [-o DIR] [--top-k N]\n\n"
               "Sums the duration and count of every event with cat \"kernel\" by name, for\n"
               "each rank trace and merged over ranks (Magpie reads only its largest file).\n\n"
               "options:\n"
               "  --json        JSON: kernel_summary (merged), top_bottlenecks, ranks[]\n"
               "  --csv         merged table as CSV (name,time_ms,percent,calls) on stdout\n"
               "  -o DIR        also write DIR/kernel_summary.csv and, with several ranks,\n"
               "                DIR/kernel_summary_rank<N>.csv\n"
               "  --top-k N     rows in the terminal table (default 20; 0 = all)\n"
               "  -q, --quiet   no progress display\n\n"
               "examples:\n"
               "  magpie trace kernels trace.json.gz\n"
               "  magpie trace kernels results/benchmark_vllm_x/torch_trace --json\n");
}

static int write_table(const char *dir, const char *name, const struct mp_kernel_table *t,
                       struct mp_diag *d)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = mp_kernel_summary_csv(t, &b);
    if (!rc)
        rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, d);
    else
        rc = mp_diag_set(d, rc, "out of memory");
    mp_buf_fini(&b);
    return rc;
}

static int cmd_kernels(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},        {"csv", no_argument, NULL, 'c'},
        {"top-k", required_argument, NULL, 'k'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    bool json = false, csv = false, quiet = false;
    const char *out_dir = NULL;
    long top_k = 20;
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'c':
            csv = true;
            break;
        case 'o':
            out_dir = optarg;
            break;
        case 'k': {
            char *end;
            top_k = strtol(optarg, &end, 10);
            if (end == optarg || *end || top_k < 0) {
                fprintf(stderr, "magpie: error: --top-k expects a non-negative integer\n");
                return EXIT_USAGE;
            }
            break;
        }
        case 'q':
            quiet = true;
            break;
        case 'h':
            kernels_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace kernels\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || (json && csv)) {
        fprintf(stderr, "magpie: error: trace kernels takes one PATH and at most one of "
                        "--json/--csv\n");
        kernels_usage(stderr);
        return EXIT_USAGE;
    }
    struct cli_progress *p = cli_progress_new("reading traces", !quiet && !json && !csv);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_kernel_summary *s = NULL;
    int rc = mp_kernel_summary_run(argv[optind], cli_progress_bytes, p, &s, &d);
    cli_progress_finish(p);
    if (rc)
        return cli_report_error(&d, rc);
    int exit_code = EXIT_OK;
    if (out_dir) {
        rc = mp_fs_mkdirs(out_dir, &d);
        if (!rc && s->n_ranks > 1) {
            for (size_t i = 0; i < s->n_ranks && !rc; i++) {
                char name[64];
                snprintf(name, sizeof(name), "kernel_summary_rank%d.csv", s->ranks[i].rank);
                rc = write_table(out_dir, name, &s->ranks[i], &d);
            }
        }
        if (!rc)
            rc = write_table(out_dir, "kernel_summary.csv", &s->merged, &d);
        if (rc) {
            exit_code = cli_report_error(&d, rc);
            goto out;
        }
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (json) {
        rc = mp_kernel_summary_json(s, &b);
        if (!rc)
            rc = mp_buf_putc(&b, '\n');
    } else if (csv) {
        rc = mp_kernel_summary_csv(&s->merged, &b);
    } else {
        rc = mp_buf_printf(&b,
                           "Kernel summary: %zu rank(s), %zu kernel names, %.3f ms of "
                           "kernel time\n",
                           s->n_ranks, s->merged.n, s->merged.total_ms);
        for (size_t i = 0; i < s->n_ranks && !rc; i++)
            rc = mp_buf_printf(&b, "  rank %d: %.3f ms  %s\n", s->ranks[i].rank,
                               s->ranks[i].total_ms, s->ranks[i].trace_file);
        rc = rc ? rc : mp_buf_printf(&b, "\n%12s %8s %8s  %s\n", "time (ms)", "%", "calls", "name");
        for (size_t i = 0; i < s->merged.n && (top_k == 0 || (long)i < top_k) && !rc; i++) {
            const struct mp_kernel_row *r = &s->merged.rows[i];
            rc = mp_buf_printf(&b, "%12.3f %7.2f%% %8llu  %.120s\n", r->time_ms, r->percent,
                               (unsigned long long)r->calls, r->name);
        }
    }
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting output\n");
        exit_code = EXIT_FAIL;
    } else {
        fwrite(b.data, 1, b.len, stdout);
    }
    mp_buf_fini(&b);
    if (!exit_code && s->merged.n == 0) {
        fprintf(stderr, "magpie: no kernel events found\n");
        exit_code = EXIT_FAIL;
    }
out:
    mp_kernel_summary_free(s);
    return exit_code;
}

static void report_usage(FILE *f)
{
    fprintf(
        f,
        "usage: magpie trace report TRACE -o DIR [options]\n"
        "       magpie trace report --profile_json_path TRACE --output_csvs_dir DIR [options]\n\n"
        "TraceLens-compatible performance report of one torch-profiler trace: one CSV per\n"
        "sheet with TraceLens's file names, columns, row order and cell text.\n"
        "Sheets: gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args,\n"
        "unified_perf_summary, the per-category perf sheets (GEMM, SDPA_fwd, CONV_fwd,\n"
        "UnaryElementwise, BinaryElementwise, Normalization, Reduce_fwd, ...),\n"
        "kernel_summary, short_kernel_histogram, short_kernels_summary, coll_analysis,\n"
        "and with --include-overlap-info the *_kl_overlap sheets\n"
        "(see docs/compatibility.md for what matches TraceLens and what is missing).\n\n"
        "options (TraceLens_generate_perf_report_pytorch name in brackets):\n"
        "  -o, --output-csvs-dir DIR     [--output_csvs_dir] where the CSVs go\n"
        "  --no-kernel-summary           [without --enable_kernel_summary] skip kernel_summary\n"
        "  --no-short-kernel-study       [without --short_kernel_study] skip short-kernel sheets\n"
        "  --short-kernel-threshold-us U [--short_kernel_threshold_us] default 10\n"
        "  --short-kernel-histogram-bins N [--short_kernel_histogram_bins] default 100\n"
        "  --include-unlinked-kernels    [--include_unlinked_kernels] in gpu_timeline\n"
        "  --micro-idle-thresh-us U      [--micro_idle_thresh_us] gpu_timeline splits idle time\n"
        "                                into gaps shorter than U us (micro_idle_time) and the\n"
        "                                rest (macro_idle_time)\n"
        "  --disable-coll-analysis       [--disable_coll_analysis] no coll_analysis sheet\n"
        "  --group-by-num-kernels        [--group_by_num_kernels] ops_unique_args and the\n"
        "                                per-category sheets also group by kernel count\n"
        "  --include-first-occurrence-time [--include_first_occurrence_time] ops_unique_args\n"
        "                                gets each group's first launch time (us from the\n"
        "                                earliest)\n"
        "  --detect-recompute            [--detect_recompute] mark ops under\n"
        "                                torch.utils.checkpoint's recompute_fn: an is_recompute\n"
        "                                column in every op sheet, gpu_timeline split in two\n"
        "  --gpu-arch NAME|auto          [--gpu_arch_platform] roofline columns with a built-in\n"
        "                                arch (A100 H100 H200 B200 MI300X MI325X MI355X), or\n"
        "                                auto: from the trace's deviceProperties\n"
        "  --gpu-arch-json FILE          [--gpu_arch_json_path] TraceLens arch JSON\n"
        "  -q, --quiet                   no progress display\n");
    fprintf(
        f,
        "  --inference                   [TraceLens_generate_perf_report_pytorch_inference] the\n"
        "                                inference report: ops summaries by name/category\n"
        "                                (and parent module), forward-only per-category sheets\n"
        "                                (Normalization_fwd ...), step annotations for every\n"
        "                                inference attention op, no coll_analysis\n"
        "  --group-by-parent-module      [--group_by_parent_module] (with --inference)\n"
        "                                parent_module and call_stack columns from the\n"
        "                                nn.Module frames above each op\n"
        "  --include-call-stack          [--include_call_stack] unified_perf_summary gets\n"
        "                                entry_point and call_stack_full\n"
        "  --capture-folder DIR          [--capture_folder] merge the CUDA/HIP-graph capture\n"
        "                                traces of DIR (its execution_details.json, inferred\n"
        "                                when absent) into this replay trace, so replayed\n"
        "                                kernels get their CPU ops, shapes and launchers\n"
        "  --enable-pseudo-ops           [--enable_pseudo_ops] its SGLang op-name pass, the\n"
        "                                unfused Triton MoE pseudo ops (vllm::moe_forward\n"
        "                                matmul_ogs kernels -> pseudo_op::moe_triton_unfused_*),\n"
        "                                the fused AITER, GPTQ/AWQ and flydsl MoE ones\n"
        "                                (pseudo_op::moe_aiter_fused_1stage, _gptq_awq_*,\n"
        "                                _flydsl_*) and the AITER MLA ones\n"
        "                                (pseudo_mla_decode_fwd, pseudo_mla_prefill_fwd); the\n"
        "                                DeepSeek-V4 decode pseudo ops are not made (a warning\n"
        "                                says so); with paged-attention ops in the trace none\n"
        "                                are made, as in TraceLens (its module for them is\n"
        "                                missing)\n"
        "  --fix-nested-ops              (magpie only) per-category sheets drop an op that\n"
        "                                sits inside another op of the same sheet, e.g.\n"
        "                                aten::addmm under aten::linear; TraceLens lists both\n"
        "                                and so counts their kernels twice\n"
        "  --roofline-simple FILE        (Magpie) also write the compact\n"
        "                                *_kernel_roofline_simple.csv of this report\n"
        "  --xlsx FILE                   [--output_xlsx_path] also write the sheets as an\n"
        "                                Excel workbook\n"
        "  --no-summary                  do not print the terminal summary (GPU time, time\n"
        "                                by category, top ops)\n");
    fprintf(
        f,
        "  --profile-json-path TRACE     [--profile_json_path] the trace, instead of the\n"
        "                                TRACE argument\n"
        "  --topk-short-kernels N        [--topk_short_kernels] keep the first N rows of\n"
        "                                short_kernels_summary (pandas head(N): a negative N\n"
        "                                drops |N| rows from the end)\n"
        "  --topk-ops N, --topk-roofline-ops N  [--topk_ops, --topk_roofline_ops] accepted\n"
        "                                and ignored, as TraceLens itself ignores them\n"
        "  --include-overlap-info        [--include_overlap_info] also write\n"
        "                                ops_unique_args_kl_overlap,\n"
        "                                unified_perf_summary_kl_overlap and <sheet>_kl_overlap\n"
        "                                (<sheet>_fwd_kl_overlap, _bwd_kl_overlap): the same\n"
        "                                tables split by the names of the kernels of other\n"
        "                                streams and ops that overlap an op's kernels by >= 1 us,\n"
        "                                with their details and overlap_pct statistics\n"
        "  --inductor-cache-dir DIR      [--inductor_cache_dir] accepted; changes nothing, as\n"
        "                                in TraceLens: Triton ops are modelled from the\n"
        "                                trace's own args only\n"
        "  --python-path PY              [--python_path] accepted; changes nothing, as in\n"
        "                                TraceLens without its external GEMM simulator\n"
        "                                (refused when GEMM_SIMULATOR_PATH is set)\n"
        "  --extension-file, --comparison-json-path  [--extension_file,\n"
        "                                --comparison_json_path] Python extensions and\n"
        "                                TraceDiff: refused with exit status 2\n\n"
        "Underscore spellings (--output_csvs_dir ...) are accepted too.\n"
        "DIR/report.html is always written: one self-contained page with the roofline\n"
        "plot, time by category, GPU busy/idle and the top ops.\n\n"
        "example:\n"
        "  magpie trace report trace.json.gz -o report/\n"
        "  magpie trace report trace.json.gz -o report/ --gpu-arch H200 --xlsx report.xlsx\n"
        "  magpie trace report --profile_json_path trace.json.gz --output_csvs_dir report/ \\\n"
        "      --include_overlap_info --topk_short_kernels 20\n");
}

/* TraceLens options that run Python: user extensions (tree, perf-model and
 * sheet hooks) and TraceDiff against a second trace; nothing to do natively. */
static int report_python_only(const char *opt)
{
    const char *what = strstr(opt, "extension")
                           ? "it loads a Python module into TraceLens (tree, perf-model, "
                             "op-category and extra-sheet hooks)"
                           : "TraceLens's TraceDiff (tree edit distance against a second "
                             "trace: diff_stats sheet, speedup and LCA columns) is not "
                             "implemented";
    fprintf(stderr,
            "magpie: error: --%s is not supported by magpie trace report: %s; run TraceLens "
            "itself for it\n",
            opt, what);
    return EXIT_USAGE;
}

/* --python_path: the interpreter TraceLens runs its external GEMM simulator
 * with, which it does only with GEMM_SIMULATOR_PATH set (and an arch);
 * otherwise it is ignored there too. */
static int report_python_path(const char *opt)
{
    const char *sim = getenv("GEMM_SIMULATOR_PATH");
    if (sim && *sim) {
        fprintf(stderr,
                "magpie: error: --%s: GEMM_SIMULATOR_PATH is set, and TraceLens would run "
                "that GEMM simulator with this interpreter for simulated GEMM times; magpie "
                "does not run it (unset GEMM_SIMULATOR_PATH, or run TraceLens itself)\n",
                opt);
        return EXIT_USAGE;
    }
    fprintf(stderr,
            "magpie: note: --%s does not change the report: TraceLens uses it only for "
            "its external GEMM simulator (GEMM_SIMULATOR_PATH, not set)\n",
            opt);
    return 0;
}

static int cmd_report(int argc, char **argv)
{
    enum {
        R_NOKS = 1000,
        R_NOSK,
        R_THR,
        R_BINS,
        R_UNL,
        R_RECOMP,
        R_MICRO,
        R_NOCOLL,
        R_BYNK,
        R_FIXNEST,
        R_FIRSTOCC,
        R_KS,
        R_SK,
        R_ARCH,
        R_ARCHJ,
        R_XLSX,
        R_NOSUM,
        R_INF,
        R_PMOD,
        R_CSTACK,
        R_PSEUDO,
        R_CAPTURE,
        R_SIMPLE,
        R_PJP,
        R_TOPK_SK,
        R_TOPK_IGN,
        R_OVERLAP,
        R_INDUCTOR,
        R_PYONLY,
        R_PYPATH
    };
    static const struct option opts[] = {
        {"output-csvs-dir", required_argument, NULL, 'o'},
        {"output_csvs_dir", required_argument, NULL, 'o'},
        {"no-kernel-summary", no_argument, NULL, R_NOKS},
        {"enable_kernel_summary", no_argument, NULL, R_KS},
        {"no-short-kernel-study", no_argument, NULL, R_NOSK},
        {"short_kernel_study", no_argument, NULL, R_SK},
        {"short-kernel-threshold-us", required_argument, NULL, R_THR},
        {"short_kernel_threshold_us", required_argument, NULL, R_THR},
        {"short-kernel-histogram-bins", required_argument, NULL, R_BINS},
        {"short_kernel_histogram_bins", required_argument, NULL, R_BINS},
        {"include-unlinked-kernels", no_argument, NULL, R_UNL},
        {"include_unlinked_kernels", no_argument, NULL, R_UNL},
        {"detect-recompute", no_argument, NULL, R_RECOMP},
        {"detect_recompute", no_argument, NULL, R_RECOMP},
        {"micro-idle-thresh-us", required_argument, NULL, R_MICRO},
        {"micro_idle_thresh_us", required_argument, NULL, R_MICRO},
        {"disable-coll-analysis", no_argument, NULL, R_NOCOLL},
        {"disable_coll_analysis", no_argument, NULL, R_NOCOLL},
        {"group-by-num-kernels", no_argument, NULL, R_BYNK},
        {"fix-nested-ops", no_argument, NULL, R_FIXNEST},
        {"group_by_num_kernels", no_argument, NULL, R_BYNK},
        {"include-first-occurrence-time", no_argument, NULL, R_FIRSTOCC},
        {"include_first_occurrence_time", no_argument, NULL, R_FIRSTOCC},
        {"gpu-arch", required_argument, NULL, R_ARCH},
        {"gpu_arch_platform", required_argument, NULL, R_ARCH},
        {"gpu-arch-json", required_argument, NULL, R_ARCHJ},
        {"gpu_arch_json_path", required_argument, NULL, R_ARCHJ},
        {"xlsx", required_argument, NULL, R_XLSX},
        {"output_xlsx_path", required_argument, NULL, R_XLSX},
        {"no-summary", no_argument, NULL, R_NOSUM},
        {"inference", no_argument, NULL, R_INF},
        {"group-by-parent-module", no_argument, NULL, R_PMOD},
        {"group_by_parent_module", no_argument, NULL, R_PMOD},
        {"include-call-stack", no_argument, NULL, R_CSTACK},
        {"include_call_stack", no_argument, NULL, R_CSTACK},
        {"enable-pseudo-ops", no_argument, NULL, R_PSEUDO},
        {"enable_pseudo_ops", no_argument, NULL, R_PSEUDO},
        {"roofline-simple", required_argument, NULL, R_SIMPLE},
        {"profile-json-path", required_argument, NULL, R_PJP},
        {"profile_json_path", required_argument, NULL, R_PJP},
        {"topk-short-kernels", required_argument, NULL, R_TOPK_SK},
        {"topk_short_kernels", required_argument, NULL, R_TOPK_SK},
        {"topk-ops", required_argument, NULL, R_TOPK_IGN},
        {"topk_ops", required_argument, NULL, R_TOPK_IGN},
        {"topk-roofline-ops", required_argument, NULL, R_TOPK_IGN},
        {"topk_roofline_ops", required_argument, NULL, R_TOPK_IGN},
        {"include-overlap-info", no_argument, NULL, R_OVERLAP},
        {"include_overlap_info", no_argument, NULL, R_OVERLAP},
        {"inductor-cache-dir", required_argument, NULL, R_INDUCTOR},
        {"inductor_cache_dir", required_argument, NULL, R_INDUCTOR},
        {"extension-file", required_argument, NULL, R_PYONLY},
        {"extension_file", required_argument, NULL, R_PYONLY},
        {"python-path", required_argument, NULL, R_PYPATH},
        {"python_path", required_argument, NULL, R_PYPATH},
        {"comparison-json-path", required_argument, NULL, R_PYONLY},
        {"comparison_json_path", required_argument, NULL, R_PYONLY},
        {"capture-folder", required_argument, NULL, R_CAPTURE},
        {"capture_folder", required_argument, NULL, R_CAPTURE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct mp_report_opts o;
    mp_report_opts_defaults(&o);
    const char *out_dir = NULL, *arch_name = NULL, *arch_json = NULL, *xlsx = NULL;
    const char *simple = NULL, *trace = NULL;
    bool quiet = false, summary = true;
    struct mp_capture_stats cstats = {0};
    int c;
    opterr = 0;
    optind = 0;
    int li = -1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, &li)) != -1) {
        const char *lname = li >= 0 ? opts[li].name : "?";
        li = -1;
        char *end;
        if (c == R_ARCH) {
            arch_name = optarg;
            continue;
        }
        if (c == R_ARCHJ) {
            arch_json = optarg;
            continue;
        }
        if (c == R_XLSX) {
            xlsx = optarg;
            continue;
        }
        if (c == R_SIMPLE) {
            simple = optarg;
            continue;
        }
        if (c == R_NOSUM) {
            summary = false;
            continue;
        }
        if (c == R_PJP) {
            trace = optarg;
            continue;
        }
        if (c == R_PYONLY)
            return report_python_only(lname);
        if (c == R_PYPATH) {
            if (report_python_path(lname) != 0)
                return EXIT_USAGE;
            continue;
        }
        switch (c) {
        case 'o':
            out_dir = optarg;
            break;
        case R_NOKS:
            o.kernel_summary = false;
            break;
        case R_NOSK:
            o.short_kernel_study = false;
            break;
        case R_KS:
        case R_SK:
            break; /* on by default */
        case R_THR:
            o.short_kernel_thresh = strtod(optarg, &end);
            if (end == optarg || *end || !(o.short_kernel_thresh > 0)) {
                fprintf(stderr,
                        "magpie: error: --short-kernel-threshold-us expects a positive "
                        "number, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case R_BINS: {
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 100000) {
                fprintf(stderr,
                        "magpie: error: --short-kernel-histogram-bins expects 1..100000, "
                        "not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            o.short_kernel_bins = (int)v;
            break;
        }
        case R_UNL:
            o.include_unlinked = true;
            break;
        case R_RECOMP:
            o.detect_recompute = true;
            break;
        case R_NOCOLL:
            o.disable_coll_analysis = true;
            break;
        case R_BYNK:
            o.group_by_num_kernels = true;
            break;
        case R_FIXNEST:
            o.fix_nested_ops = true;
            break;
        case R_FIRSTOCC:
            o.first_occurrence_time = true;
            break;
        case R_INF:
            o.inference = true;
            break;
        case R_PMOD:
            o.group_by_parent_module = true;
            break;
        case R_CSTACK:
            o.include_call_stack = true;
            break;
        case R_PSEUDO:
            o.enable_pseudo_ops = true;
            fprintf(stderr, "magpie: warning: --enable-pseudo-ops: SGLang profiler op names are "
                            "normalised and the MoE (unfused Triton, fused AITER, GPTQ/AWQ, "
                            "flydsl) and AITER MLA pseudo ops made; the DeepSeek-V4 decode "
                            "pseudo ops are not implemented, those ops stay unsplit\n");
            break;
        case R_CAPTURE:
            o.capture_folder = optarg;
            o.capture_stats = &cstats;
            break;
        case R_TOPK_SK:
            /* an integer, as TraceLens's argparse type=int; pandas head()
             * semantics, so a negative value drops rows from the end */
            o.topk_short_kernels = strtol(optarg, &end, 10);
            if (end == optarg || *end) {
                fprintf(stderr,
                        "magpie: error: --topk-short-kernels expects an integer, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            o.has_topk_short_kernels = true;
            break;
        case R_TOPK_IGN:
            /* accepted and unused, as in TraceLens (it never reads them) */
            (void)strtol(optarg, &end, 10);
            if (end == optarg || *end) {
                fprintf(stderr, "magpie: error: --%s expects an integer, not '%s'\n", lname,
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case R_OVERLAP:
            o.include_overlap_info = true;
            break;
        case R_INDUCTOR:
            /* TraceLens (171dd747) models an Inductor Triton op only when
             * the trace's args describe it, and then never opens the cache:
             * the directory changes nothing in its report either */
            fprintf(stderr,
                    "magpie: note: --inductor-cache-dir '%s' does not change the report: as in "
                    "TraceLens, Triton ops are modelled from the trace's own args only\n",
                    optarg);
            break;
        case R_MICRO: {
            /* an integer, as TraceLens's argparse type=int */
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 1000000000L) {
                fprintf(stderr,
                        "magpie: error: --micro-idle-thresh-us expects a whole number of "
                        "microseconds >= 0, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            o.micro_idle_thresh_us = (int)v;
            break;
        }
        case 'q':
            quiet = true;
            break;
        case 'h':
            report_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace report\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    int npos = argc - optind;
    bool one =
        npos == 0 ? trace != NULL : npos == 1 && (!trace || strcmp(trace, argv[optind]) == 0);
    if (one && !trace)
        trace = argv[optind];
    if (!one || !out_dir) {
        fprintf(stderr, "magpie: error: trace report takes one TRACE (or --profile_json_path "
                        "TRACE) and -o DIR\n");
        report_usage(stderr);
        return EXIT_USAGE;
    }
    struct mp_roofline_arch arch;
    struct mp_diag d;
    mp_diag_clear(&d);
    if (arch_json) {
        int arc = mp_roofline_arch_load_json(arch_json, &arch, &d);
        if (arc)
            return cli_report_error(&d, arc);
        o.arch = &arch;
    } else if (arch_name && strcmp(arch_name, "auto") != 0) {
        if (mp_roofline_arch_builtin(arch_name, &arch) != 0) {
            fprintf(stderr, "magpie: error: unknown --gpu-arch '%s'; built-in:", arch_name);
            for (const char *const *n = mp_roofline_arch_builtin_names(); *n; n++)
                fprintf(stderr, " %s", *n);
            fprintf(stderr, " (or --gpu-arch-json FILE)\n");
            return EXIT_USAGE;
        }
        o.arch = &arch;
    }
    o.arch_auto = arch_name && strcmp(arch_name, "auto") == 0;
    struct cli_progress *p = cli_progress_new("reading trace", !quiet);
    o.on_progress = cli_progress_bytes;
    o.progress_user = p;
    struct mp_report *r = NULL;
    uint64_t t0 = mp_time_ns();
    int rc = mp_report_build(trace, &o, &r, &d);
    cli_progress_finish(p);
    if (rc)
        return cli_report_error(&d, rc);
    rc = mp_report_write_csvs(r, out_dir, &d);
    char html[4200];
    if (!rc) {
        const char *base = strrchr(trace, '/');
        snprintf(html, sizeof(html), "%s/report.html", out_dir);
        rc = mp_report_write_html(r, html, base ? base + 1 : trace, &d);
    }
    if (!rc && xlsx)
        rc = mp_report_write_xlsx(r, xlsx, &d);
    if (!rc && simple) {
        struct mp_buf sb;
        mp_buf_init(&sb, 0);
        rc = mp_report_roofline_simple(r, &sb);
        if (rc == MP_ENOTFOUND)
            rc = mp_diag_set(&d, rc, "no unified_perf_summary (a GPU-only trace): no %s", simple);
        else if (rc)
            rc = mp_diag_set(&d, rc, "out of memory writing %s", simple);
        else
            rc = mp_fs_write_atomic(simple, sb.data ? sb.data : "", sb.len, &d);
        mp_buf_fini(&sb);
    }
    if (rc) {
        mp_report_free(r);
        return cli_report_error(&d, rc);
    }
    const struct mp_gpu_timeline *tl = &r->timeline;
    printf("%zu events, %zu GPU events (%zu linked) in %.3f s\n", r->events, r->gpu_events,
           r->gpu_linked, (double)(mp_time_ns() - t0) / 1e9);
    if (tl->total > 0)
        printf("GPU time %.3f ms: busy %.1f%% (computation %.1f%%, exposed comm %.1f%%, exposed "
               "memcpy %.1f%%), idle %.1f%%\n",
               tl->total / 1e3, tl->busy / tl->total * 100, tl->computation / tl->total * 100,
               tl->exposed_comm / tl->total * 100, tl->exposed_memcpy / tl->total * 100,
               tl->idle / tl->total * 100);
    if (o.capture_folder)
        printf("capture merge: %zu of %zu graph launch(es) in %zu step(s) merged, %zu capture "
               "events added, %zu GPU events linked%s\n",
               cstats.merged, cstats.graph_launches, cstats.exec_roots, cstats.events_added,
               cstats.kernels_linked,
               cstats.failed              ? " (failed: nothing merged)"
               : cstats.details_generated ? " (execution_details.json inferred)"
                                          : "");
    printf("wrote %zu sheet(s) to %s\n", r->n, out_dir);
    printf("wrote %s\n", html);
    if (xlsx)
        printf("wrote %s\n", xlsx);
    if (summary) {
        struct mp_buf sb;
        mp_buf_init(&sb, 0);
        rc = mp_report_summary_text(r, 10, &sb);
        if (!rc)
            printf("\n%s", mp_buf_cstr(&sb));
        mp_buf_fini(&sb);
    }
    mp_report_free(r);
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting the summary\n");
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

static void collective_usage(FILE *f)
{
    fprintf(f,
            "usage: magpie trace collective PATH... -o DIR [options]\n\n"
            "TraceLens-compatible multi-rank collective report: the NCCL/RCCL kernels of every\n"
            "rank's torch-profiler trace, matched across ranks by process group and start\n"
            "order. Writes DIR/nccl_long.csv, nccl_summary_long.csv, nccl_implicit_sync.csv,\n"
            "nccl_summary_implicit_sync.csv and straggler_summary.csv with the columns, rows\n"
            "and number formatting of TraceLens_generate_multi_rank_collective_report_pytorch.\n\n"
            "PATH is a directory (its *.json.gz and *.json files), a glob pattern (quote it)\n"
            "or a trace file; the rank of each file comes from --rank-regex.\n\n"
            "options (TraceLens name in brackets):\n"
            "  -o, --output-csvs-dir DIR     [--output_csvs_dir] where the CSVs go (required)\n"
            "  --trace-glob GLOB             [--trace_glob] same as a PATH argument; so are\n"
            "                                --trace-dir [--trace_dir] and --trace-pattern\n"
            "                                [--trace_pattern] (its * is read as a glob)\n"
            "  --world-size N                [--world_size] number of ranks; every rank\n"
            "                                0..N-1 needs a file (default: highest rank + 1)\n"
            "  --rank-regex RE               [--rank_regex] regex whose group (?P<rank>...)\n"
            "                                or group 1 is the rank (default\n"
            "                                'rank[\\[\\-_/]?(?P<rank>\\d+)', TraceLens's)\n"
            "  --gpus-per-node N             [--gpus_per_node] node_id/node_span columns\n"
            "                                (default: deviceProperties of rank 0's trace)\n"
            "  --detailed-analysis           [--detailed_analysis] nccl_long and\n"
            "                                nccl_implicit_sync (on by default, as in TraceLens)\n"
            "  --no-detailed-analysis        only the summaries and straggler_summary\n"
            "  -q, --quiet                   no progress display\n\n"
            "examples:\n"
            "  magpie trace collective results/run/torch_trace -o nccl/\n"
            "  magpie trace collective --trace-glob 'traces/*.pt.trace.json.gz' --world-size 8 \\\n"
            "      --rank-regex 'rank-(\\d+)\\.' -o nccl/\n");
}

static int cmd_collective(int argc, char **argv)
{
    enum { C_GLOB = 1000, C_WS, C_RX, C_GPN, C_DET, C_NODET };
    static const struct option opts[] = {
        {"output-csvs-dir", required_argument, NULL, 'o'},
        {"output_csvs_dir", required_argument, NULL, 'o'},
        {"trace-glob", required_argument, NULL, C_GLOB},
        {"trace_glob", required_argument, NULL, C_GLOB},
        {"trace-dir", required_argument, NULL, C_GLOB},
        {"trace_dir", required_argument, NULL, C_GLOB},
        {"trace-pattern", required_argument, NULL, C_GLOB},
        {"trace_pattern", required_argument, NULL, C_GLOB},
        {"world-size", required_argument, NULL, C_WS},
        {"world_size", required_argument, NULL, C_WS},
        {"rank-regex", required_argument, NULL, C_RX},
        {"rank_regex", required_argument, NULL, C_RX},
        {"gpus-per-node", required_argument, NULL, C_GPN},
        {"gpus_per_node", required_argument, NULL, C_GPN},
        {"detailed-analysis", no_argument, NULL, C_DET},
        {"detailed_analysis", no_argument, NULL, C_DET},
        {"no-detailed-analysis", no_argument, NULL, C_NODET},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out_dir = NULL, *rank_regex = "rank[\\[\\-_/]?(?P<rank>\\d+)";
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!inputs) {
        fprintf(stderr, "magpie: error: out of memory\n");
        return EXIT_FAIL;
    }
    size_t n_in = 0;
    long world = 0, gpn = 0;
    bool quiet = false, detailed = true;
    int c;
    char *end;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out_dir = optarg;
            break;
        case C_GLOB:
            inputs[n_in++] = optarg;
            break;
        case C_WS:
            world = strtol(optarg, &end, 10);
            if (*end || world <= 0) {
                fprintf(stderr, "magpie: error: --world-size wants a positive integer\n");
                free(inputs);
                return EXIT_USAGE;
            }
            break;
        case C_RX:
            rank_regex = optarg;
            break;
        case C_GPN:
            gpn = strtol(optarg, &end, 10);
            if (*end || gpn <= 0 || gpn > 1000000) {
                fprintf(stderr, "magpie: error: --gpus-per-node wants a positive integer\n");
                free(inputs);
                return EXIT_USAGE;
            }
            break;
        case C_DET:
            detailed = true;
            break;
        case C_NODET:
            detailed = false;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            collective_usage(stdout);
            free(inputs);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace collective\n",
                    argv[optind - 1]);
            free(inputs);
            return EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++)
        inputs[n_in++] = argv[i];
    if (n_in == 0 || !out_dir) {
        fprintf(stderr,
                "magpie: error: trace collective takes PATH (or --trace-glob) and -o DIR\n");
        collective_usage(stderr);
        free(inputs);
        return EXIT_USAGE;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    size_t ws = (size_t)world;
    char **paths = NULL;
    int rc = mp_nccl_find_ranks(inputs, n_in, rank_regex, &ws, &paths, &d);
    free(inputs);
    if (rc)
        return cli_report_error(&d, rc);
    struct cli_progress *p = cli_progress_new("reading traces", !quiet);
    struct mp_nccl_opts o = {.paths = (const char *const *)paths,
                             .world_size = ws,
                             .gpus_per_node = (int)gpn,
                             .detailed = detailed,
                             .on_progress = cli_progress_bytes,
                             .progress_user = p};
    struct mp_report *r = NULL;
    uint64_t t0 = mp_time_ns();
    rc = mp_nccl_report_build(&o, &r, &d);
    cli_progress_finish(p);
    mp_nccl_paths_free(paths, ws);
    if (!rc)
        rc = mp_report_write_csvs(r, out_dir, &d);
    if (rc) {
        mp_report_free(r);
        return cli_report_error(&d, rc);
    }
    printf("%zu ranks, %zu collective kernels in %.3f s\n", ws, r->gpu_events,
           (double)(mp_time_ns() - t0) / 1e9);
    printf("wrote %zu sheet(s) to %s\n", r->n, out_dir);
    mp_report_free(r);
    return EXIT_OK;
}

int cmd_trace(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (strcmp(argv[1], "kernels") == 0)
        return cmd_kernels(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "collective") == 0)
        return cmd_collective(argc - 1, argv + 1);
    if (strcmp(argv[1], "split") == 0)
        return cli_trace_split(argc - 1, argv + 1);
    if (strcmp(argv[1], "stages") == 0)
        return cli_trace_stages(argc - 1, argv + 1);
    if (strcmp(argv[1], "sources") == 0)
        return cli_trace_sources(argc - 1, argv + 1);
    if (strcmp(argv[1], "compare") == 0)
        return cli_trace_compare(argc - 1, argv + 1);
    fprintf(stderr, "magpie: error: unknown trace command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
