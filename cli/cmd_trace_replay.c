/* `magpie trace replay TRACE -o DIR`: the trace's top ops (or one op, one
 * row, one category) rebuilt at the recorded shapes, dtypes and strides as
 * TraceLens's EventReplay IR and as standalone PyTorch references with a
 * candidate template and a compare config each; --run times them on this
 * machine's GPU (docs/replay.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/replay.h>
#include <magpie/roofline.h>

#include "cli.h"
#include "opts.h"
#include "trace_arch.h"

enum {
    P_OP = 1000,
    P_ROW,
    P_TOP,
    P_CAT,
    P_RUN,
    P_JSON,
    P_ARCH,
    P_ARCHJ,
    P_PY,
    P_WARM,
    P_L2,
    P_MAXT,
    P_KERN,
    P_RUNT,
    P_CAPT
};

static const struct cli_opt replay_opts[] = {
    {"output-dir", 'o', CLI_ARG, 'o', "DIR", "where the files go (required)", 0},
    {"op", 0, CLI_ARG, P_OP, "NAME",
     "only rows of this op (e.g. aten::mm), its kernels ranked apart (OP->KERNEL) included", 0},
    {"kernel", 0, CLI_ARG, P_KERN, "NAME",
     "only rows of ops that launched this kernel (its exact name, as gap analysis and trace "
     "sources print it)",
     0},
    {"capture-folder", 0, CLI_ARG, P_CAPT, "DIR",
     "merge the CUDA/HIP-graph capture traces of DIR into this graph-replay trace first (as "
     "trace report does), so ops whose kernels ran inside a graph get their recorded "
     "arguments and are rebuilt instead of listed as graph kernels without a CPU op",
     0},
    {"capture_folder", 0, CLI_ARG, P_CAPT, "DIR", "the same as --capture-folder", CLI_HIDDEN},
    {"row", 0, CLI_ARG, P_ROW, "N",
     "only row N (1-based) of the ranking by kernel time (unified_perf_summary)", 0},
    {"top", 0, CLI_ARG, P_TOP, "K", "rows kept after the filters (default 20; 0 = all)", 0},
    {"top-k", 0, CLI_ARG, P_TOP, "K", "the same as --top", CLI_HIDDEN},
    {"category", 0, CLI_ARG, P_CAT, "C",
     "only rows of this op category (GEMM, SDPA_fwd, elementwise, reduce, other, ...)", 0},
    {"run", 0, CLI_NOARG, P_RUN, NULL,
     "time the references on this machine's GPU (analyze's runner) and fill the replay "
     "columns; without a GPU the files are written and the note says so",
     0},
    {"l2", 0, CLI_ARG, P_L2, "auto|flushed|warm|idle|cold",
     "--run: state of the replay figure (default auto: cold, L2 flushed then the op's "
     "non-parameter inputs read back and the GPU drained, for ops under 10 us per call in "
     "the trace; "
     "flushed for longer GEMM/attention/conv, which read weights or caches; warm, back to "
     "back, for the rest; idle, the GPU drained before each call); all four are measured",
     0},
    {"warm-l2", 0, CLI_NOARG, P_WARM, NULL, "--run: the same as --l2 warm", 0},
    {"run-timeout", 0, CLI_ARG, P_RUNT, "S",
     "--run: stop the helper after S seconds (default 1800); the ops timed so far are kept, "
     "exit 1",
     0},
    {"max-time", 0, CLI_ARG, P_MAXT, "S",
     "--run: seconds of sampling per op for the CUDA-graph figure (default 5)", 0},
    {"json", 0, CLI_NOARG, P_JSON, NULL, "print replay_summary.json instead of the table", 0},
    {"gpu-arch", 0, CLI_ARG, P_ARCH, "NAME|auto",
     "roofline figures for a built-in arch (default auto: from the trace's deviceProperties)", 0},
    {"gpu-arch-json", 0, CLI_ARG, P_ARCHJ, "FILE", "TraceLens arch JSON for the roofline", 0},
    {"python", 0, CLI_ARG, P_PY, "EXE", "interpreter for --run (default $MAGPIE_PYTHON or python3)",
     0},
    {"quiet", 'q', CLI_NOARG, 'q', NULL, "--run: the helper's own output is not shown", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_replay = {
    .name = "trace replay",
    .args = "TRACE -o DIR",
    .summary = "rebuild a trace's top ops at their recorded shapes as TraceLens EventReplay IR "
               "and PyTorch references (optionally timed)",
    .intro = "Selects ops from the ranking by kernel time (one row per op and argument signature,\n"
             "as unified_perf_summary ranks them), matches each one's recorded arguments against\n"
             "its ATen schema and writes, in DIR: event_replay_ir.json (TraceLens's EventReplay\n"
             "format: its batched_replay.py runs it), event_replay_skipped.json (ops left out of\n"
             "the IR, with the reason), per op ref_<n>.py (Model/get_inputs/get_init_inputs with\n"
             "the trace's shapes, dtypes and strides), cand_<n>.py (a candidate template) and\n"
             "compare_<n>.yaml (the op as baseline), and replay_summary.csv/.json.\n",
    .opts = replay_opts,
    .outro = "examples:\n"
             "  magpie trace replay trace.json.gz -o replay/\n"
             "  magpie trace replay trace.json.gz --op aten::mm --top 3 -o replay/ --run\n"
             "  cd replay && magpie compare -k compare_1.yaml\n",
};

struct replay_args {
    struct mp_replay_opts o;
    bool json;
    const char *arch_name, *arch_json;
};

static int parse_long(const char *opt, const char *s, long min, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < min) {
        fprintf(stderr, "magpie: error: %s expects an integer >= %ld, got '%s'\n", opt, min, s);
        return EXIT_USAGE;
    }
    *out = v;
    return -1;
}

/* Parse step: -1 to go on, else the exit code. */
static int replay_parse(int argc, char **argv, struct replay_args *a)
{
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_trace_replay);
    int c, rc = -1;
    while (rc < 0 && (c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case 'o':
            a->o.out_dir = optarg;
            break;
        case P_OP:
            a->o.op = optarg;
            break;
        case P_CAT:
            a->o.category = optarg;
            break;
        case P_KERN:
            a->o.kernel = optarg;
            break;
        case P_CAPT:
            a->o.capture_folder = optarg;
            break;
        case P_ROW:
            rc = parse_long("--row", optarg, 1, &a->o.row);
            break;
        case P_TOP:
            rc = parse_long("--top", optarg, 0, &a->o.top);
            break;
        case P_RUN:
            a->o.run = true;
            break;
        case P_JSON:
            a->json = true;
            break;
        case P_WARM:
            a->o.warm_l2 = true;
            break;
        case P_L2:
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "flushed") != 0 &&
                strcmp(optarg, "warm") != 0 && strcmp(optarg, "idle") != 0 &&
                strcmp(optarg, "cold") != 0) {
                fprintf(stderr,
                        "magpie: error: --l2 expects auto, flushed, warm, idle or cold, got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            a->o.l2 = optarg;
            break;
        case P_RUNT: {
            char *end;
            a->o.run_timeout_s = strtod(optarg, &end);
            if (end == optarg || *end || !(a->o.run_timeout_s > 0)) {
                fprintf(stderr, "magpie: error: --run-timeout expects seconds > 0, got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case P_MAXT: {
            char *end;
            a->o.max_time_s = strtod(optarg, &end);
            if (end == optarg || *end || !(a->o.max_time_s > 0 && a->o.max_time_s <= 3600)) {
                fprintf(stderr,
                        "magpie: error: --max-time expects seconds in (0, 3600], got "
                        "'%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case P_ARCH:
            a->arch_name = optarg;
            break;
        case P_ARCHJ:
            a->arch_json = optarg;
            break;
        case P_PY:
            a->o.python = optarg;
            break;
        case 'q':
            a->o.quiet = true;
            break;
        case 'h':
            cli_help(stdout, &cli_cmd_trace_replay);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for trace replay\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (rc >= 0)
        return rc;
    if (optind < argc)
        a->o.trace = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "magpie: error: trace replay: one TRACE only ('%s')\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (!a->o.trace || !a->o.out_dir) {
        fprintf(stderr, "magpie: error: trace replay needs TRACE and -o DIR\n");
        cli_help(stderr, &cli_cmd_trace_replay);
        return EXIT_USAGE;
    }
    return -1;
}

/* Validate step: the roofline arch (cli/trace_arch.c); without one, or
 * with auto, the trace's deviceProperties decide. */
static int replay_arch(struct replay_args *a, struct mp_roofline_arch *arch)
{
    bool is_auto;
    return cli_trace_arch(a->arch_name, a->arch_json, arch, &a->o.arch, &is_auto);
}

/* Emit step: the terminal table. */
static void replay_table(const struct mp_replay_result *r, const char *dir)
{
    printf("%-4s %-5s %-36s %7s %10s %10s %7s  %s\n", "n", "rank", "op", "calls", "trace_us",
           "replay_us", "ratio", "status");
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_replay_op *op = &r->ops[i];
        char rep[32] = "-", ratio[32] = "-";
        if (op->replayed) {
            snprintf(rep, sizeof(rep), "%.3f", op->replay_median_us);
            snprintf(ratio, sizeof(ratio), "%.3f", op->ratio);
        }
        const char *st = op->in_ir ? "ref + IR" : op->rebuilt ? "ref only" : "not rebuilt";
        printf("%-4d %-5ld %-36.36s %7ld %10.3f %10s %7s  %s%s%.100s\n", op->n, op->rank, op->name,
               op->calls, op->trace_median_us, rep, ratio, st,
               op->reason && *op->reason ? ": " : "", op->reason ? op->reason : "");
    }
    if (r->capture_note[0])
        printf("%s\n", r->capture_note);
    printf("%zu of %zu rows selected: %zu rebuilt as PyTorch references, %zu in "
           "event_replay_ir.json; files in %s\n",
           r->n, r->n_rows, r->n_rebuilt, r->n_in_ir, dir);
    printf("run: %s\n", r->run_note);
    for (size_t i = 0; i < r->n; i++)
        if (r->ops[i].rebuilt) {
            printf("next: cd %s && magpie compare -k compare_%d.yaml\n", dir, r->ops[i].n);
            break;
        }
}

int cli_trace_replay(int argc, char **argv)
{
    struct replay_args a;
    memset(&a, 0, sizeof(a));
    mp_replay_opts_defaults(&a.o);
    int ec = replay_parse(argc, argv, &a);
    if (ec >= 0)
        return ec;
    struct mp_roofline_arch arch;
    ec = replay_arch(&a, &arch);
    if (ec >= 0)
        return ec;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_replay_result *r = NULL;
    int rc = mp_replay(&a.o, &r, &d);
    if (rc)
        return cli_report_error(&d, rc);
    if (a.json) {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        rc = mp_replay_summary_json(r, &b);
        if (!rc)
            fwrite(b.data ? b.data : "", 1, b.len, stdout);
        mp_buf_fini(&b);
    } else {
        replay_table(r, a.o.out_dir);
    }
    if (a.o.run && (!r->ran || r->run_failed))
        fprintf(stderr, "magpie: %s: %s\n", r->run_failed ? "error" : "note", r->run_note);
    bool failed = r->run_failed;
    mp_replay_result_free(r);
    if (rc) {
        mp_diag_set(&d, rc, "out of memory");
        return cli_report_error(&d, rc);
    }
    return failed ? EXIT_FAIL : EXIT_OK;
}
