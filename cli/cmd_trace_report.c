/* `magpie trace report`: the TraceLens-compatible report of one trace (the
 * CSV sheets with TraceLens's options and spellings, report.html, the xlsx
 * workbook, the terminal summary). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/gap.h>
#include <magpie/trace_capture.h>
#include <magpie/tracelens.h>

#include "cli.h"
#include "opts.h"
#include "trace_arch.h"

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

static const struct cli_opt report_opts[] = {
    {"output-csvs-dir", 'o', CLI_ARG, 'o', "DIR", "[--output_csvs_dir] where the CSVs go", 0},
    {"no-kernel-summary", 0, CLI_NOARG, R_NOKS, NULL,
     "[without --enable_kernel_summary] skip kernel_summary", 0},
    {"enable_kernel_summary", 0, CLI_NOARG, R_KS, NULL, "on by default", CLI_HIDDEN},
    {"no-short-kernel-study", 0, CLI_NOARG, R_NOSK, NULL,
     "[without --short_kernel_study] skip short-kernel sheets", 0},
    {"short_kernel_study", 0, CLI_NOARG, R_SK, NULL, "on by default", CLI_HIDDEN},
    {"short-kernel-threshold-us", 0, CLI_ARG, R_THR, "U",
     "[--short_kernel_threshold_us] default 10", 0},
    {"short-kernel-histogram-bins", 0, CLI_ARG, R_BINS, "N",
     "[--short_kernel_histogram_bins] default 100", 0},
    {"include-unlinked-kernels", 0, CLI_NOARG, R_UNL, NULL,
     "[--include_unlinked_kernels] in gpu_timeline", 0},
    {"micro-idle-thresh-us", 0, CLI_ARG, R_MICRO, "U",
     "[--micro_idle_thresh_us] gpu_timeline splits idle time into gaps shorter than U us "
     "(micro_idle_time) and the rest (macro_idle_time)",
     0},
    {"disable-coll-analysis", 0, CLI_NOARG, R_NOCOLL, NULL,
     "[--disable_coll_analysis] no coll_analysis sheet", 0},
    {"group-by-num-kernels", 0, CLI_NOARG, R_BYNK, NULL,
     "[--group_by_num_kernels] ops_unique_args and the per-category sheets also group by "
     "kernel count",
     0},
    {"include-first-occurrence-time", 0, CLI_NOARG, R_FIRSTOCC, NULL,
     "[--include_first_occurrence_time] ops_unique_args gets each group's first launch time "
     "(us from the earliest)",
     0},
    {"detect-recompute", 0, CLI_NOARG, R_RECOMP, NULL,
     "[--detect_recompute] mark ops under torch.utils.checkpoint's recompute_fn: an "
     "is_recompute column in every op sheet, gpu_timeline split in two",
     0},
    {"gpu-arch", 0, CLI_ARG, R_ARCH, "NAME|auto",
     "[--gpu_arch_platform] roofline columns with a built-in arch (A100 H100 H200 B200 MI300X "
     "MI325X MI355X), or auto: from the trace's deviceProperties",
     0},
    {"gpu_arch_platform", 0, CLI_ARG, R_ARCH, "NAME", "TraceLens's name of --gpu-arch", CLI_HIDDEN},
    {"gpu-arch-json", 0, CLI_ARG, R_ARCHJ, "FILE", "[--gpu_arch_json_path] TraceLens arch JSON", 0},
    {"gpu_arch_json_path", 0, CLI_ARG, R_ARCHJ, "FILE", "TraceLens's name of --gpu-arch-json",
     CLI_HIDDEN},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "no progress display", 0},
    {"inference", 0, CLI_NOARG, R_INF, NULL,
     "[TraceLens_generate_perf_report_pytorch_inference] the inference report: ops summaries "
     "by name/category (and parent module), forward-only per-category sheets "
     "(Normalization_fwd ...), step annotations for every inference attention op, no "
     "coll_analysis",
     0},
    {"group-by-parent-module", 0, CLI_NOARG, R_PMOD, NULL,
     "[--group_by_parent_module] (with --inference) parent_module and call_stack columns "
     "from the nn.Module frames above each op",
     0},
    {"include-call-stack", 0, CLI_NOARG, R_CSTACK, NULL,
     "[--include_call_stack] unified_perf_summary gets entry_point and call_stack_full", 0},
    {"capture-folder", 0, CLI_ARG, R_CAPTURE, "DIR",
     "[--capture_folder] merge the CUDA/HIP-graph capture traces of DIR (its "
     "execution_details.json, inferred when absent) into this replay trace, so replayed "
     "kernels get their CPU ops, shapes and launchers",
     0},
    {"enable-pseudo-ops", 0, CLI_NOARG, R_PSEUDO, NULL,
     "[--enable_pseudo_ops] its SGLang op-name pass, the unfused Triton MoE pseudo ops "
     "(vllm::moe_forward matmul_ogs kernels -> pseudo_op::moe_triton_unfused_*), the fused "
     "AITER, GPTQ/AWQ and flydsl MoE ones (pseudo_op::moe_aiter_fused_1stage, _gptq_awq_*, "
     "_flydsl_*) and the AITER MLA ones (pseudo_mla_decode_fwd, pseudo_mla_prefill_fwd); the "
     "DeepSeek-V4 decode pseudo ops are not made (a warning says so); with paged-attention "
     "ops in the trace none are made, as in TraceLens (its module for them is missing)",
     0},
    {"fix-nested-ops", 0, CLI_NOARG, R_FIXNEST, NULL,
     "(magpie only) per-category sheets drop an op that sits inside another op of the same "
     "sheet, e.g. aten::addmm under aten::linear; TraceLens lists both and so counts their "
     "kernels twice",
     0},
    {"roofline-simple", 0, CLI_ARG, R_SIMPLE, "FILE",
     "(Magpie) also write the compact *_kernel_roofline_simple.csv of this report", 0},
    {"xlsx", 0, CLI_ARG, R_XLSX, "FILE",
     "[--output_xlsx_path] also write the sheets as an Excel workbook", 0},
    {"output_xlsx_path", 0, CLI_ARG, R_XLSX, "FILE", "TraceLens's name of --xlsx", CLI_HIDDEN},
    {"no-summary", 0, CLI_NOARG, R_NOSUM, NULL,
     "do not print the terminal summary (GPU time, time by category, top ops)", 0},
    {"profile-json-path", 0, CLI_ARG, R_PJP, "TRACE",
     "[--profile_json_path] the trace, instead of the TRACE argument", 0},
    {"topk-short-kernels", 0, CLI_ARG, R_TOPK_SK, "N",
     "[--topk_short_kernels] keep the first N rows of short_kernels_summary (pandas head(N): "
     "a negative N drops |N| rows from the end)",
     0},
    {"topk-ops", 0, CLI_ARG, R_TOPK_IGN, "N",
     "[--topk_ops] accepted and ignored, as TraceLens itself ignores it", 0},
    {"topk-roofline-ops", 0, CLI_ARG, R_TOPK_IGN, "N",
     "[--topk_roofline_ops] accepted and ignored, as TraceLens itself ignores it", 0},
    {"include-overlap-info", 0, CLI_NOARG, R_OVERLAP, NULL,
     "[--include_overlap_info] also write ops_unique_args_kl_overlap, "
     "unified_perf_summary_kl_overlap and <sheet>_kl_overlap (<sheet>_fwd_kl_overlap, "
     "_bwd_kl_overlap): the same tables split by the names of the kernels of other streams "
     "and ops that overlap an op's kernels by >= 1 us, with their details and overlap_pct "
     "statistics",
     0},
    {"inductor-cache-dir", 0, CLI_ARG, R_INDUCTOR, "DIR",
     "[--inductor_cache_dir] accepted; changes nothing, as in TraceLens: Triton ops are "
     "modelled from the trace's own args only",
     0},
    {"python-path", 0, CLI_ARG, R_PYPATH, "PY",
     "[--python_path] accepted; changes nothing, as in TraceLens without its external GEMM "
     "simulator (refused when GEMM_SIMULATOR_PATH is set)",
     0},
    {"extension-file", 0, CLI_ARG, R_PYONLY, "FILE",
     "[--extension_file] Python extensions: refused with exit status 2", 0},
    {"comparison-json-path", 0, CLI_ARG, R_PYONLY, "FILE",
     "[--comparison_json_path] TraceDiff: refused with exit status 2", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_report = {
    .name = "trace report",
    .args = "TRACE -o DIR",
    .usage = "       magpie trace report --profile_json_path TRACE --output_csvs_dir DIR "
             "[options]\n",
    .summary = "TraceLens-compatible performance report (CSV sheets)",
    .intro = "TraceLens-compatible performance report of one torch-profiler trace: one CSV per\n"
             "sheet with TraceLens's file names, columns, row order and cell text.\n"
             "Sheets: gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args,\n"
             "unified_perf_summary, the per-category perf sheets (GEMM, SDPA_fwd, CONV_fwd,\n"
             "UnaryElementwise, BinaryElementwise, Normalization, Reduce_fwd, ...),\n"
             "kernel_summary, short_kernel_histogram, short_kernels_summary, coll_analysis,\n"
             "and with --include-overlap-info the *_kl_overlap sheets\n"
             "(see docs/compatibility.md for what matches TraceLens and what is missing).\n",
    .opts_title = "options (TraceLens_generate_perf_report_pytorch name in brackets)",
    .opts = report_opts,
    .outro =
        "Underscore spellings (--output_csvs_dir ...) are accepted too.\n"
        "DIR/report.html is always written: one self-contained page with the roofline\n"
        "plot, time by category, GPU busy/idle and the top ops.\n\n"
        "example:\n"
        "  magpie trace report trace.json.gz -o report/\n"
        "  magpie trace report trace.json.gz -o report/ --gpu-arch H200 --xlsx report.xlsx\n"
        "  magpie trace report --profile_json_path trace.json.gz --output_csvs_dir report/ \\\n"
        "      --include_overlap_info --topk_short_kernels 20\n",
};

static void report_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_report);
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

/* What the report's flags ask for besides struct mp_report_opts. */
struct report_args {
    struct mp_report_opts o;
    const char *out_dir, *arch_name, *arch_json, *xlsx, *simple, *trace;
    bool quiet, summary;
    struct mp_capture_stats cstats;
};

/* The report options without a value: true when c was one of them. */
static bool report_flag(int c, struct mp_report_opts *o)
{
    switch (c) {
    case R_NOKS:
        o->kernel_summary = false;
        return true;
    case R_NOSK:
        o->short_kernel_study = false;
        return true;
    case R_KS:
    case R_SK:
        return true; /* on by default */
    case R_UNL:
        o->include_unlinked = true;
        return true;
    case R_RECOMP:
        o->detect_recompute = true;
        return true;
    case R_NOCOLL:
        o->disable_coll_analysis = true;
        return true;
    case R_BYNK:
        o->group_by_num_kernels = true;
        return true;
    case R_FIXNEST:
        o->fix_nested_ops = true;
        return true;
    case R_FIRSTOCC:
        o->first_occurrence_time = true;
        return true;
    case R_INF:
        o->inference = true;
        return true;
    case R_PMOD:
        o->group_by_parent_module = true;
        return true;
    case R_CSTACK:
        o->include_call_stack = true;
        return true;
    case R_OVERLAP:
        o->include_overlap_info = true;
        return true;
    case R_PSEUDO:
        o->enable_pseudo_ops = true;
        fprintf(stderr, "magpie: warning: --enable-pseudo-ops: SGLang profiler op names are "
                        "normalised and the MoE (unfused Triton, fused AITER, GPTQ/AWQ, "
                        "flydsl) and AITER MLA pseudo ops made; the DeepSeek-V4 decode "
                        "pseudo ops are not implemented, those ops stay unsplit\n");
        return true;
    default:
        return false;
    }
}

/* The numeric report options; returns 0 or EXIT_USAGE (after the message). */
static int report_number(int c, const char *lname, struct mp_report_opts *o)
{
    char *end;
    long v;
    switch (c) {
    case R_THR:
        o->short_kernel_thresh = strtod(optarg, &end);
        if (end == optarg || *end || !(o->short_kernel_thresh > 0)) {
            fprintf(stderr,
                    "magpie: error: --short-kernel-threshold-us expects a positive "
                    "number, not '%s'\n",
                    optarg);
            return EXIT_USAGE;
        }
        return 0;
    case R_BINS:
        v = strtol(optarg, &end, 10);
        if (end == optarg || *end || v < 1 || v > 100000) {
            fprintf(stderr,
                    "magpie: error: --short-kernel-histogram-bins expects 1..100000, "
                    "not '%s'\n",
                    optarg);
            return EXIT_USAGE;
        }
        o->short_kernel_bins = (int)v;
        return 0;
    case R_TOPK_SK:
        /* an integer, as TraceLens's argparse type=int; pandas head()
         * semantics, so a negative value drops rows from the end */
        o->topk_short_kernels = strtol(optarg, &end, 10);
        if (end == optarg || *end) {
            fprintf(stderr, "magpie: error: --topk-short-kernels expects an integer, not '%s'\n",
                    optarg);
            return EXIT_USAGE;
        }
        o->has_topk_short_kernels = true;
        return 0;
    case R_TOPK_IGN:
        /* accepted and unused, as in TraceLens (it never reads them) */
        (void)strtol(optarg, &end, 10);
        if (end == optarg || *end) {
            fprintf(stderr, "magpie: error: --%s expects an integer, not '%s'\n", lname, optarg);
            return EXIT_USAGE;
        }
        return 0;
    default: /* R_MICRO: an integer, as TraceLens's argparse type=int */
        v = strtol(optarg, &end, 10);
        if (end == optarg || *end || v < 0 || v > 1000000000L) {
            fprintf(stderr,
                    "magpie: error: --micro-idle-thresh-us expects a whole number of "
                    "microseconds >= 0, not '%s'\n",
                    optarg);
            return EXIT_USAGE;
        }
        o->micro_idle_thresh_us = (int)v;
        return 0;
    }
}

/* Parse step; returns -1 to go on, else the exit code. */
static int report_parse(int argc, char **argv, struct report_args *a)
{
    int c;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_trace_report);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        const char *lname = op.name ? op.name : "?";
        const char **str = c == R_ARCH      ? &a->arch_name
                           : c == R_ARCHJ   ? &a->arch_json
                           : c == R_XLSX    ? &a->xlsx
                           : c == R_SIMPLE  ? &a->simple
                           : c == R_PJP     ? &a->trace
                           : c == 'o'       ? &a->out_dir
                           : c == R_CAPTURE ? &a->o.capture_folder
                                            : NULL;
        if (str) {
            *str = optarg;
            if (c == R_CAPTURE)
                a->o.capture_stats = &a->cstats;
        } else if (c == R_NOSUM) {
            a->summary = false;
        } else if (c == R_PYONLY) {
            return report_python_only(lname);
        } else if (c == R_PYPATH) {
            if (report_python_path(lname) != 0)
                return EXIT_USAGE;
        } else if (c == R_INDUCTOR) {
            /* TraceLens (171dd747) models an Inductor Triton op only when
             * the trace's args describe it, and then never opens the cache:
             * the directory changes nothing in its report either */
            fprintf(stderr,
                    "magpie: note: --inductor-cache-dir '%s' does not change the report: as in "
                    "TraceLens, Triton ops are modelled from the trace's own args only\n",
                    optarg);
        } else if (c == 'q') {
            a->quiet = true;
        } else if (c == 'h') {
            report_usage(stdout);
            return EXIT_OK;
        } else if (report_flag(c, &a->o)) {
            continue;
        } else if (c == R_THR || c == R_BINS || c == R_TOPK_SK || c == R_TOPK_IGN || c == R_MICRO) {
            if (report_number(c, lname, &a->o))
                return EXIT_USAGE;
        } else {
            fprintf(stderr, "magpie: error: unknown option '%s' for trace report\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    int npos = argc - optind;
    bool one = npos == 0 ? a->trace != NULL
                         : npos == 1 && (!a->trace || strcmp(a->trace, argv[optind]) == 0);
    if (one && !a->trace)
        a->trace = argv[optind];
    if (!one || !a->out_dir) {
        fprintf(stderr, "magpie: error: trace report takes one TRACE (or --profile_json_path "
                        "TRACE) and -o DIR\n");
        report_usage(stderr);
        return EXIT_USAGE;
    }
    return -1;
}

/* Validate step: --gpu-arch-json or --gpu-arch NAME|auto into arch
 * (cli/trace_arch.c); returns -1 to go on, else the exit code. */
static int report_arch(struct report_args *a, struct mp_roofline_arch *arch)
{
    return cli_trace_arch(a->arch_name, a->arch_json, arch, &a->o.arch, &a->o.arch_auto);
}

/* Write step: the CSVs, report.html (path in html), --xlsx, --roofline-simple. */
/* The sheets go to disk while the later ones are built: each is staged
 * (written and flushed to a temporary file by a background thread) as soon
 * as it is final, and renamed into place after the whole report was built,
 * so a failed run leaves the output directory as it was. */
struct sheet_stage {
    struct mp_fs_stage *st;
    const char *dir;
};

static void stage_sheet(const struct mp_report_sheet *s, void *user)
{
    const struct sheet_stage *ss = user;
    (void)mp_report_stage_sheet(ss->st, ss->dir, s); /* not staged: the commit writes it */
}

/* The outermost directory of dir that does not exist yet (NULL when dir
 * exists or on out of memory): what a failed run removes again. */
static char *first_missing_dir(const char *dir)
{
    char *p = mp_strdup(dir), *top = NULL;
    while (p && *p && !mp_fs_is_dir(p)) {
        free(top);
        top = mp_strdup(p);
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
            break;
        *slash = '\0';
    }
    free(p);
    return top;
}

/* Removes dir and its parents up to top, as long as they are empty. */
static void remove_made_dirs(const char *dir, const char *top)
{
    char *p = mp_strdup(dir);
    while (p && rmdir(p) == 0 && strcmp(p, top) != 0) {
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
            break;
        *slash = '\0';
    }
    free(p);
}

static int report_write(const struct mp_report *r, const struct report_args *a,
                        struct mp_fs_stage *st, char *html, size_t html_cap, struct mp_diag *d)
{
    int rc = mp_report_commit_csvs(r, a->out_dir, st, d);
    if (!rc) {
        const char *base = strrchr(a->trace, '/');
        snprintf(html, html_cap, "%s/report.html", a->out_dir);
        rc = mp_report_write_html(r, html, base ? base + 1 : a->trace, d);
    }
    if (!rc && a->xlsx)
        rc = mp_report_write_xlsx(r, a->xlsx, d);
    if (!rc && a->simple) {
        struct mp_buf sb;
        mp_buf_init(&sb, 0);
        rc = mp_report_roofline_simple(r, &sb);
        if (rc == MP_ENOTFOUND)
            rc = mp_diag_set(d, rc, "no unified_perf_summary (a GPU-only trace): no %s", a->simple);
        else if (rc)
            rc = mp_diag_set(d, rc, "out of memory writing %s", a->simple);
        else
            rc = mp_fs_write_atomic(a->simple, sb.data ? sb.data : "", sb.len, d);
        mp_buf_fini(&sb);
    }
    return rc;
}

/* Emit step: what was read and written, then the terminal summary. */
static int report_emit(const struct mp_report *r, const struct report_args *a, const char *html,
                       uint64_t t0)
{
    const struct mp_gpu_timeline *tl = &r->timeline;
    const struct mp_capture_stats *cs = &a->cstats;
    printf("%zu events, %zu GPU events (%zu linked) in %.3f s\n", r->events, r->gpu_events,
           r->gpu_linked, (double)(mp_time_ns() - t0) / 1e9);
    if (tl->total > 0)
        printf("GPU time %.3f ms: busy %.1f%% (computation %.1f%%, exposed comm %.1f%%, exposed "
               "memcpy %.1f%%), idle %.1f%%\n",
               tl->total / 1e3, tl->busy / tl->total * 100, tl->computation / tl->total * 100,
               tl->exposed_comm / tl->total * 100, tl->exposed_memcpy / tl->total * 100,
               tl->idle / tl->total * 100);
    if (a->o.capture_folder)
        printf("capture merge: %zu of %zu graph launch(es) in %zu step(s) merged, %zu capture "
               "events added, %zu GPU events linked%s\n",
               cs->merged, cs->graph_launches, cs->exec_roots, cs->events_added, cs->kernels_linked,
               cs->failed              ? " (failed: nothing merged)"
               : cs->details_generated ? " (execution_details.json inferred)"
                                       : "");
    if (r->has_arch)
        printf("roofline ceiling: %s (%s%s)\n", r->arch.name,
               r->arch.calibrated ? "measured by " : "",
               r->arch.calibrated ? r->arch.origin
               : r->arch.source   ? r->arch.source
                                  : "arch file");
    printf("wrote %zu sheet(s) to %s\n", r->n, a->out_dir);
    printf("wrote %s\n", html);
    if (a->xlsx)
        printf("wrote %s\n", a->xlsx);
    int rc = 0;
    if (a->summary) {
        struct mp_buf sb;
        mp_buf_init(&sb, 0);
        rc = mp_report_summary_text(r, 10, &sb);
        if (!rc)
            printf("\n%s", mp_buf_cstr(&sb));
        mp_buf_fini(&sb);
    }
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting the summary\n");
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

int cli_trace_report(int argc, char **argv)
{
    struct report_args a = {.summary = true};
    mp_report_opts_defaults(&a.o);
    int rc = report_parse(argc, argv, &a);
    struct mp_roofline_arch arch;
    if (rc < 0)
        rc = report_arch(&a, &arch);
    if (rc >= 0)
        return rc;
    struct cli_progress *p = cli_progress_new("reading trace", !a.quiet);
    a.o.on_progress = cli_progress_bytes;
    a.o.progress_user = p;
    struct mp_report *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    uint64_t t0 = mp_time_ns();
    /* the directory is made before the sheets are staged in it, and removed
     * again (when still empty) if the report fails */
    char *made = first_missing_dir(a.out_dir);
    struct sheet_stage ss = {.dir = a.out_dir};
    if (mp_fs_mkdirs(a.out_dir, &d) == 0 && (ss.st = mp_fs_stage_new()) != NULL) {
        a.o.on_sheet = stage_sheet;
        a.o.on_sheet_user = &ss;
    }
    mp_diag_clear(&d); /* a directory that cannot be made is reported by the write */
    rc = mp_report_build(a.trace, &a.o, &r, &d);
    cli_progress_finish(p);
    if (rc) {
        mp_fs_stage_free(ss.st);
        if (made)
            remove_made_dirs(a.out_dir, made);
        free(made);
        return cli_report_error(&d, rc);
    }
    free(made);
    char html[4200];
    uint64_t tw = mp_time_ns();
    rc = report_write(r, &a, ss.st, html, sizeof(html), &d);
    mp_fs_stage_free(ss.st);
    mp_log(MP_LOG_DEBUG, "report: write %.3f s", (double)(mp_time_ns() - tw) / 1e9);
    int ec = rc ? cli_report_error(&d, rc) : report_emit(r, &a, html, t0);
    mp_report_free(r);
    return ec;
}
