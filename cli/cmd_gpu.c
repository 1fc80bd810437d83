/* `magpie gpu show|set|reset`: GPU hardware control (power limit, locked
 * clocks, AMD clock levels) through the gpuctl library, with --dry-run
 * printing each change (value now -> value after, and the NVML call or tool
 * command that would make it) without changing anything. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/gpuctl.h>
#include <magpie/roofline.h>

#include "cli.h"
#include "opts.h"

enum { O_POWER = 1000, O_GCLK, O_MCLK, O_GLVL, O_MLVL, O_BACKEND, O_JSON };

static const struct cli_opt gpu_opts[] = {
    {"device-ids", 'i', CLI_ARG, 'i', "IDS",
     "GPUs as listed by `magpie gpu show`: 0,2,3 (default all)", 0},
    {"power-limit", 0, CLI_ARG, O_POWER, "W", "power limit in watts", 0},
    {"gpu-clock", 0, CLI_ARG, O_GCLK, "MIN,MAX",
     "lock SM/graphics clocks to [MIN, MAX] MHz (N = N,N)", 0},
    {"mem-clock", 0, CLI_ARG, O_MCLK, "MIN,MAX", "lock memory clocks to [MIN, MAX] MHz", 0},
    {"gpu-level", 0, CLI_ARG, O_GLVL, "N", "AMD sclk DPM level (0-7)", 0},
    {"mem-level", 0, CLI_ARG, O_MLVL, "N", "AMD mclk DPM level (0-7)", 0},
    {"backend", 0, CLI_ARG, O_BACKEND, "B",
     "nvml, amd-smi or rocm-smi (default: the first that works)", 0},
    {"dry-run", 'n', CLI_NOARG, 'n', NULL,
     "print what would change (now -> after, and the call) and change nothing", 0},
    {"json", 0, CLI_NOARG, O_JSON, NULL, "show: machine-readable output", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_gpu = {
    .name = "gpu",
    .usage = "magpie gpu show [-i IDS] [--json]\n"
             "       magpie gpu set [-i IDS] [--power-limit W] [--gpu-clock MIN,MAX]\n"
             "                      [--mem-clock MIN,MAX] [--gpu-level N] [--mem-level N] "
             "[--dry-run]\n"
             "       magpie gpu reset [-i IDS] [--dry-run]\n"
             "       magpie gpu calibrate [--quick] [--dtypes LIST] [-o FILE] (see its --help)\n",
    .summary = "GPU hardware control: show, set, reset (power limit, locked clocks)",
    .intro = "GPU hardware control: NVIDIA through NVML, AMD through amd-smi (or rocm-smi).\n"
             "Changing settings needs root. The settings stay until `magpie gpu reset`, a\n"
             "driver reload or a reboot; a benchmark YAML's gpu.hardware section is applied\n"
             "for the run only (docs/gpu-control.md).\n",
    .opts = gpu_opts,
    .outro = "reset: power limit to the default, clock locks and levels off.\n\n"
             "exit status: 0 ok, 1 the GPU refused a change, 2 usage or input error\n\n"
             "examples:\n"
             "  magpie gpu show\n"
             "  magpie gpu set -i 0 --power-limit 500 --gpu-clock 1500,1500 --dry-run\n"
             "  sudo magpie gpu reset\n",
    .words = "show set reset calibrate",
    .flags = CLI_STOP_AT_ARG | CLI_NO_SYNOPSIS,
};

static void gpu_usage(FILE *f)
{
    cli_help(f, &cli_cmd_gpu);
}

static int parse_ids(const char *s, int *ids, int *n)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= 4096 || (*end && *end != ',') || *n >= MP_GPUCTL_MAX_IDS) {
            fprintf(stderr,
                    "magpie: error: --device-ids expects GPU indices like 0,2,3, not '%s'\n", s);
            return EXIT_USAGE;
        }
        ids[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) {
        fprintf(stderr, "magpie: error: --device-ids is empty\n");
        return EXIT_USAGE;
    }
    return 0;
}

int cli_parse_mhz_range(const char *opt, const char *s, int out[2])
{
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end != s && *end == ',') {
        const char *q = end + 1;
        b = strtol(q, &end, 10);
        if (end == q)
            b = -1;
    }
    if (end == s || *end || a <= 0 || b <= 0 || a > b || b > 100000) {
        fprintf(stderr, "magpie: error: %s expects MIN,MAX in MHz with 0 < MIN <= MAX, not '%s'\n",
                opt, s);
        return EXIT_USAGE;
    }
    out[0] = (int)a;
    out[1] = (int)b;
    return 0;
}

static int parse_level(const char *opt, const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v > 7) {
        fprintf(stderr, "magpie: error: %s expects a level 0..7, not '%s'\n", opt, s);
        return EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

static void json_num(struct mp_buf *b, const char *key, double v, bool comma)
{
    mp_buf_printf(b, "\"%s\": ", key);
    if (v < 0)
        mp_buf_puts(b, "null");
    else
        mp_json_double(b, v);
    if (comma)
        mp_buf_puts(b, ", ");
}

/* The measured ceilings of this GPU model (magpie gpu calibrate), if any */
static void show_calibration(struct mp_buf *b, const char *name, bool json)
{
    struct mp_roofline_arch a;
    char path[1400];
    double bf16 = 0, fp8 = 0;
    if (mp_roofline_arch_calibrated(name, &a, path, sizeof(path)) != 0)
        return;
    bool has_bf16 = mp_roofline_arch_tflops(&a, "matrix_bf16", &bf16);
    bool has_fp8 = mp_roofline_arch_tflops(&a, "matrix_fp8", &fp8);
    if (json) {
        mp_buf_puts(b, ", \"calibration\": {\"file\": ");
        mp_json_str(b, path, strlen(path));
        mp_buf_puts(b, ", \"origin\": ");
        mp_json_str(b, a.origin, strlen(a.origin));
        mp_buf_puts(b, ", ");
        json_num(b, "mem_bw_gbps", a.has_mem_bw ? a.mem_bw_gbps : -1, true);
        json_num(b, "matrix_bf16", has_bf16 ? bf16 : -1, true);
        json_num(b, "matrix_fp8", has_fp8 ? fp8 : -1, false);
        mp_buf_puts(b, "}");
        return;
    }
    mp_buf_printf(
        b, "  calibrated   %s\n              bf16 %.0f, fp8 %.0f TFLOP/s, HBM %.0f GB/s (%s)\n",
        a.origin, bf16, fp8, a.mem_bw_gbps, path);
}

static int show(struct mp_gpuctl *c, const int *ids, int n, bool json)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = 0;
    if (json)
        mp_buf_printf(&b, "{\"backend\": \"%s\", \"gpus\": [",
                      mp_gpuctl_backend_name(mp_gpuctl_which(c)));
    else
        mp_buf_printf(&b, "backend: %s\n", mp_gpuctl_backend_name(mp_gpuctl_which(c)));
    for (int i = 0; i < n && !rc; i++) {
        struct mp_gpuctl_state st;
        if ((rc = mp_gpuctl_query(c, ids[i], &st, &d)))
            break;
        if (json) {
            mp_buf_printf(&b, "%s{\"index\": %d, \"name\": ", i ? ", " : "", st.index);
            mp_json_str(&b, st.name, strlen(st.name));
            mp_buf_puts(&b, ", ");
            json_num(&b, "power_limit_watts", st.power_limit_w, true);
            json_num(&b, "power_default_watts", st.power_default_w, true);
            json_num(&b, "power_min_watts", st.power_min_w, true);
            json_num(&b, "power_max_watts", st.power_max_w, true);
            json_num(&b, "gpu_clock_mhz", st.sm_clock_mhz, true);
            json_num(&b, "gpu_clock_max_mhz", st.sm_clock_max_mhz, true);
            json_num(&b, "mem_clock_mhz", st.mem_clock_mhz, true);
            json_num(&b, "mem_clock_max_mhz", st.mem_clock_max_mhz, false);
            show_calibration(&b, st.name, true);
            mp_buf_puts(&b, "}");
            continue;
        }
        mp_buf_printf(&b, "GPU %d: %s\n", st.index, st.name);
        if (st.power_limit_w >= 0)
            mp_buf_printf(&b, "  power limit  %.0f W (default %.0f W, allowed %.0f-%.0f W)\n",
                          st.power_limit_w, st.power_default_w, st.power_min_w, st.power_max_w);
        if (st.sm_clock_mhz >= 0)
            mp_buf_printf(&b, "  SM clock     %.0f MHz (max %.0f MHz)\n", st.sm_clock_mhz,
                          st.sm_clock_max_mhz);
        if (st.mem_clock_mhz >= 0)
            mp_buf_printf(&b, "  memory clock %.0f MHz (max %.0f MHz)\n", st.mem_clock_mhz,
                          st.mem_clock_max_mhz);
        if (st.power_limit_w < 0 && st.sm_clock_mhz < 0)
            mp_buf_puts(&b, "  (current settings are not read on this backend)\n");
        show_calibration(&b, st.name, false);
    }
    if (json)
        mp_buf_puts(&b, "]}\n");
    int ec = rc ? cli_report_error(&d, rc) : EXIT_OK;
    if (!rc)
        fwrite(b.data, 1, b.len, stdout);
    mp_buf_fini(&b);
    return ec;
}

struct gpu_args {
    struct mp_gpu_setting s;
    struct mp_gpuctl_opts co;
    int ids[MP_GPUCTL_MAX_IDS], nids;
    bool dry, json;
};

/* Parse step over argv after the verb; returns -1 to go on, else the exit
 * code. */
static int parse_gpu_args(int argc, char **argv, const char *verb, struct gpu_args *a)
{
    int c, rc;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_gpu);
    while ((c = cli_next(&op, argc, argv)) != -1) {
        rc = 0;
        switch (c) {
        case 'i':
            rc = parse_ids(optarg, a->ids, &a->nids);
            break;
        case O_POWER: {
            double w;
            rc = cli_parse_double("--power-limit", optarg, &w);
            if (!rc && !(w > 0 && w < 100000)) {
                fprintf(stderr, "magpie: error: --power-limit expects watts > 0, not '%s'\n",
                        optarg);
                rc = EXIT_USAGE;
            }
            a->s.power_limit_w = w;
            break;
        }
        case O_GCLK:
            rc = cli_parse_mhz_range("--gpu-clock", optarg, a->s.gpu_clock_mhz);
            break;
        case O_MCLK:
            rc = cli_parse_mhz_range("--mem-clock", optarg, a->s.mem_clock_mhz);
            break;
        case O_GLVL:
            rc = parse_level("--gpu-level", optarg, &a->s.gpu_clock_level);
            break;
        case O_MLVL:
            rc = parse_level("--mem-level", optarg, &a->s.mem_clock_level);
            break;
        case O_BACKEND:
            if (strcmp(optarg, "nvml") == 0)
                a->co.backend = MP_GPUCTL_NVML;
            else if (strcmp(optarg, "amd-smi") == 0)
                a->co.backend = MP_GPUCTL_AMD_SMI;
            else if (strcmp(optarg, "rocm-smi") == 0)
                a->co.backend = MP_GPUCTL_ROCM_SMI;
            else {
                fprintf(stderr,
                        "magpie: error: --backend must be nvml, amd-smi or rocm-smi, not '%s'\n",
                        optarg);
                rc = EXIT_USAGE;
            }
            break;
        case 'n':
            a->dry = true;
            break;
        case O_JSON:
            a->json = true;
            break;
        case 'h':
            gpu_usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown option '%s' for gpu %s\n", argv[optind - 1],
                    verb);
            return EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "magpie: error: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    return -1;
}

/* Run step of set and reset: every GPU is checked before any is changed;
 * then the changes (or, with --dry-run, what they would be). */
static int run_change(struct mp_gpuctl *ctl, const struct gpu_args *a, bool is_set)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = 0, exit_code = EXIT_OK, changes = 0, nids = a->nids;
    const int *ids = a->ids;
    struct mp_buf out;
    mp_buf_init(&out, 0);
    for (int i = 0; i < nids && !rc; i++) {
        if (is_set) {
            rc = mp_gpuctl_plan(ctl, ids[i], &a->s, &out, &d);
            changes += rc > 0 ? rc : 0;
            rc = rc < 0 ? rc : 0;
        } else {
            rc = mp_gpuctl_reset(ctl, ids[i], true, &out, &d);
        }
    }
    if (rc) {
        exit_code = cli_report_error(&d, rc);
    } else if (a->dry) {
        fputs("dry run: nothing is changed; these calls would be made:\n", stdout);
        fwrite(out.data, 1, out.len, stdout);
    } else {
        if (!is_set)
            mp_buf_reset(&out); /* reset writes its lines as it goes */
        for (int i = 0; i < nids && !rc; i++)
            rc = is_set ? mp_gpuctl_apply(ctl, ids[i], &a->s, &d)
                        : mp_gpuctl_reset(ctl, ids[i], false, &out, &d);
        if (is_set && !rc)
            for (int i = 0; i < nids; i++) {
                struct mp_gpuctl_state st;
                if (mp_gpuctl_query(ctl, ids[i], &st, NULL) == 0 && st.power_limit_w >= 0)
                    mp_buf_printf(&out, "GPU %d: power limit now %.0f W, SM clock %.0f MHz\n",
                                  ids[i], st.power_limit_w, st.sm_clock_mhz);
            }
        fwrite(out.data, 1, out.len, stdout);
        if (rc)
            exit_code = cli_report_error(&d, rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_FAIL;
        else if (is_set)
            printf("set: %d change%s on %d GPU%s\n", changes, changes == 1 ? "" : "s", nids,
                   nids == 1 ? "" : "s");
    }
    mp_buf_fini(&out);
    return exit_code;
}

int cmd_gpu(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        gpu_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *verb = argv[1];
    if (strcmp(verb, "calibrate") == 0)
        return cmd_gpu_calibrate(argc - 1, argv + 1);
    if (strcmp(verb, "show") != 0 && strcmp(verb, "set") != 0 && strcmp(verb, "reset") != 0) {
        fprintf(stderr, "magpie: error: unknown gpu command '%s' (show, set, reset or calibrate)\n",
                verb);
        return EXIT_USAGE;
    }
    struct gpu_args a = {0};
    mp_gpu_setting_init(&a.s);
    int rc = parse_gpu_args(argc - 1, argv + 1, verb, &a);
    if (rc >= 0)
        return rc;
    bool is_set = strcmp(verb, "set") == 0, is_show = strcmp(verb, "show") == 0;
    if (is_set && mp_gpu_setting_empty(&a.s)) {
        fprintf(stderr, "magpie: error: gpu set needs at least one of --power-limit, --gpu-clock, "
                        "--mem-clock, --gpu-level, --mem-level\n");
        return EXIT_USAGE;
    }
    if (!is_set && !mp_gpu_setting_empty(&a.s)) {
        fprintf(stderr, "magpie: error: setting options belong to `gpu set`\n");
        return EXIT_USAGE;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gpuctl *ctl = NULL;
    if ((rc = mp_gpuctl_open(&ctl, &a.co, &d)))
        return cli_report_error(&d, rc);
    if (a.nids == 0)
        for (; a.nids < mp_gpuctl_count(ctl) && a.nids < MP_GPUCTL_MAX_IDS; a.nids++)
            a.ids[a.nids] = a.nids;
    int exit_code = is_show ? show(ctl, a.ids, a.nids, a.json) : run_change(ctl, &a, is_set);
    mp_gpuctl_close(ctl);
    return exit_code;
}
