/* `magpie gpu calibrate`: the roofline's ceiling, measured (libmagpie's
 * calib module). Prints a table (or --json), writes the TraceLens arch JSON
 * with -o, and keeps a copy in the calibration cache that `trace report`,
 * `trace stages` and the gap analysis pick up for traces of this GPU. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/calib.h>
#include <magpie/gpuctl.h>
#include <magpie/roofline.h>

#include "cli.h"
#include "opts.h"

enum {
    C_DEVICE = 1000,
    C_DTYPES,
    C_QUICK,
    C_THOROUGH,
    C_JSON,
    C_BUSY,
    C_NOCACHE,
    C_REPEATS,
    C_NOMEM,
    C_POWER,
    C_GCLK,
    C_MCLK
};

static const struct cli_opt cal_opts[] = {
    {"device", 'd', CLI_ARG, C_DEVICE, "N", "CUDA device ordinal (default 0)", 0},
    {"dtypes", 0, CLI_ARG, C_DTYPES, "LIST",
     "GEMM types: fp64,fp32,tf32,fp16,bf16,fp8,fp8_e5m2,int8,fp4,fp6 (default all; none)", 0},
    {"quick", 0, CLI_NOARG, C_QUICK, NULL, "one shape per type, fewer repeats: a few seconds", 0},
    {"thorough", 0, CLI_NOARG, C_THOROUGH, NULL,
     "a wide shape search and every algorithm cuBLASLt offers (slower)", 0},
    {"repeats", 0, CLI_ARG, C_REPEATS, "N", "timed repeats per figure (default 5, quick 3)", 0},
    {"no-memory", 0, CLI_NOARG, C_NOMEM, NULL, "GEMMs only: no vector, bandwidth or launch figures",
     0},
    {"output", 'o', CLI_ARG, 'o', "FILE", "write the arch JSON (TraceLens format + magpie's) here",
     0},
    {"json", 0, CLI_NOARG, C_JSON, NULL, "print the arch JSON instead of the table", 0},
    {"no-cache", 0, CLI_NOARG, C_NOCACHE, NULL,
     "do not keep it in the calibration cache (reports would not pick it up)", 0},
    {"allow-busy", 0, CLI_NOARG, C_BUSY, NULL, "measure even when the GPU looks busy", 0},
    {"power-limit", 0, CLI_ARG, C_POWER, "W",
     "calibrate under this power limit (set for the run, put back after; root)", 0},
    {"gpu-clock", 0, CLI_ARG, C_GCLK, "MIN,MAX",
     "calibrate with SM clocks locked to [MIN, MAX] MHz", 0},
    {"mem-clock", 0, CLI_ARG, C_MCLK, "MIN,MAX",
     "calibrate with memory clocks locked to [MIN, MAX] MHz", 0},
    {"dry-run", 'n', CLI_NOARG, 'n', NULL,
     "with settings: print the changes that would be made and measure nothing", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_gpu_calibrate = {
    .name = "gpu calibrate",
    .summary = "measure the GPU's achievable GEMM, vector and memory rates (the roofline ceiling)",
    .intro = "Dense GEMM throughput per data type through cuBLASLt (shapes and the library's\n"
             "algorithms searched, each winner's output checked), vector FMA throughput, HBM\n"
             "read/write/copy and L2 bandwidth and launch overhead with magpie's own kernels\n"
             "(NVRTC). Writes TraceLens's arch JSON (name, mem_bw_gbps, max_achievable_tflops)\n"
             "with magpie's figures beside it, and caches it per GPU UUID, driver and power\n"
             "limit: `trace report/stages --gpu-arch auto` then use the measured ceiling for\n"
             "traces of this GPU model. Nothing about the GPU's settings is changed; a busy\n"
             "GPU is refused. NVIDIA only (docs/calibrate.md).\n",
    .opts = cal_opts,
    .outro = "exit status: 0 measured (a figure the GPU lacks is reported, not an error), 1 no\n"
             "usable GPU or library, or the GPU is busy, 2 usage error\n\n"
             "examples:\n"
             "  magpie gpu calibrate\n"
             "  magpie gpu calibrate --quick --dtypes bf16,fp8 -o h200.json\n"
             "  magpie trace report trace.json.gz -o rep --gpu-arch-json h200.json\n",
};

struct cal_args {
    struct mp_calib_opts o;
    struct mp_gpu_setting set;
    const char *out;
    bool json, no_cache, dry;
};

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "magpie: error: %s expects an integer %d..%d, not '%s'\n", opt, lo, hi, s);
        return EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

static int parse_cal(int argc, char **argv, struct cal_args *a)
{
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_gpu_calibrate);
    int c, rc = 0;
    while (!rc && (c = cli_next(&op, argc, argv)) != -1) {
        switch (c) {
        case C_DEVICE:
            rc = parse_int("--device", optarg, 0, 1023, &a->o.device);
            break;
        case C_DTYPES: {
            struct mp_diag d;
            mp_diag_clear(&d);
            if (mp_calib_check_dtypes(optarg, &d) != 0) {
                fprintf(stderr, "magpie: error: --dtypes: %s\n", d.msg);
                rc = EXIT_USAGE;
            }
            a->o.dtypes = optarg;
            break;
        }
        case C_QUICK:
            a->o.quick = true;
            break;
        case C_THOROUGH:
            a->o.thorough = true;
            break;
        case C_REPEATS:
            rc = parse_int("--repeats", optarg, 2, 64, &a->o.repeats);
            break;
        case C_NOMEM:
            a->o.no_memory = true;
            break;
        case 'o':
            a->out = optarg;
            break;
        case C_JSON:
            a->json = true;
            break;
        case C_NOCACHE:
            a->no_cache = true;
            break;
        case C_BUSY:
            a->o.allow_busy = true;
            break;
        case C_POWER:
            rc = cli_parse_double("--power-limit", optarg, &a->set.power_limit_w);
            if (!rc && !(a->set.power_limit_w > 0 && a->set.power_limit_w < 100000)) {
                fprintf(stderr, "magpie: error: --power-limit expects watts > 0, not '%s'\n",
                        optarg);
                rc = EXIT_USAGE;
            }
            break;
        case C_GCLK:
            rc = cli_parse_mhz_range("--gpu-clock", optarg, a->set.gpu_clock_mhz);
            break;
        case C_MCLK:
            rc = cli_parse_mhz_range("--mem-clock", optarg, a->set.mem_clock_mhz);
            break;
        case 'n':
            a->dry = true;
            break;
        case 'h':
            cli_help(stdout, &cli_cmd_gpu_calibrate);
            return EXIT_OK;
        default:
            cli_usage(stderr, &cli_cmd_gpu_calibrate);
            return EXIT_USAGE;
        }
    }
    if (rc)
        return rc;
    if (optind < argc) {
        fprintf(stderr, "magpie: error: gpu calibrate takes no argument ('%s')\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (a->dry && mp_gpu_setting_empty(&a->set)) {
        fprintf(stderr, "magpie: error: --dry-run goes with --power-limit, --gpu-clock or "
                        "--mem-clock\n");
        return EXIT_USAGE;
    }
    if (a->o.quick && a->o.thorough) {
        fprintf(stderr, "magpie: error: --quick and --thorough exclude each other\n");
        return EXIT_USAGE;
    }
    return -1;
}

static void progress(const char *msg, void *user)
{
    if (*(bool *)user)
        fprintf(stderr, "calibrate: %s\n", msg);
}

/* the data sheet's figure for a key, from the built-in arch of this GPU */
static double sheet(const char *key, void *u)
{
    const struct mp_roofline_arch *a = u;
    double t;
    if (!strncmp(key, "hbm_", 4))
        return a->has_mem_bw ? a->mem_bw_gbps : NAN;
    return mp_roofline_arch_tflops(a, mp_roofline_datasheet_key(key), &t) ? t : NAN;
}

static int write_out(const struct cal_args *a, const struct mp_calib_result *r)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_calib_json(r, &b);
    if (!rc && a->out)
        rc = mp_fs_write_atomic(a->out, b.data, b.len, &d);
    if (rc) {
        mp_buf_fini(&b);
        return cli_report_error(&d, rc);
    }
    if (a->json)
        fwrite(b.data, 1, b.len, stdout);
    mp_buf_fini(&b);
    char path[1400];
    if (!a->no_cache) {
        mp_diag_clear(&d);
        if (mp_calib_cache_save(r, path, sizeof(path), &d) == 0)
            fprintf(a->json ? stderr : stdout, "cached: %s\n", path);
        else
            fprintf(stderr, "magpie: warning: not cached: %s\n", d.msg);
    }
    if (a->out)
        fprintf(a->json ? stderr : stdout, "wrote %s\n", a->out);
    return EXIT_OK;
}

/* "power limit 500 W, SM clock 1500-1500 MHz" */
static void settings_text(const struct mp_gpu_setting *s, char *out, size_t len)
{
    int n = 0;
    out[0] = '\0';
    if (s->power_limit_w > 0)
        n += snprintf(out + n, len - (size_t)n, "power limit %.0f W", s->power_limit_w);
    if (s->gpu_clock_mhz[1] > 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, "%sSM clock %d-%d MHz", n ? ", " : "",
                      s->gpu_clock_mhz[0], s->gpu_clock_mhz[1]);
    if (s->mem_clock_mhz[1] > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "%smemory clock %d-%d MHz", n ? ", " : "",
                 s->mem_clock_mhz[0], s->mem_clock_mhz[1]);
}

/* The settings to calibrate under, as a one-GPU gpu.hardware config: the
 * GPU of --device by its NVML index. dry: print the plan only. Returns -1
 * to go on (session in *ses, NULL without settings), else the exit code. */
static int apply_settings(const struct cal_args *a, struct mp_gpuctl_session **ses)
{
    *ses = NULL;
    if (mp_gpu_setting_empty(&a->set))
        return -1;
    struct mp_gpu_hw_config cfg;
    mp_gpu_hw_config_init(&cfg);
    cfg.present = cfg.enabled = cfg.reset_after = true;
    cfg.device_ids[0] = a->o.device;
    cfg.n_device_ids = 1;
    cfg.def = a->set;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_buf log;
    mp_buf_init(&log, 0);
    int rc;
    if (a->dry) {
        struct mp_gpuctl *ctl = NULL;
        rc = mp_gpuctl_open(&ctl, NULL, &d);
        rc = rc ? rc : mp_gpuctl_plan(ctl, a->o.device, &a->set, &log, &d);
        mp_gpuctl_close(ctl);
        if (rc >= 0)
            printf("dry run: nothing is changed or measured; calibrating would first make these "
                   "changes, and put them back after:\n%s",
                   mp_buf_cstr(&log));
    } else {
        rc = mp_gpuctl_session_apply(&cfg, NULL, &log, ses, &d);
        fputs(mp_buf_cstr(&log), stderr);
    }
    mp_buf_fini(&log);
    if (rc < 0)
        return cli_report_error(&d, rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_FAIL;
    return a->dry ? EXIT_OK : -1;
}

static void restore_settings(struct mp_gpuctl_session *ses)
{
    if (!ses)
        return;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_buf log;
    mp_buf_init(&log, 0);
    if (mp_gpuctl_session_restore(ses, &log, &d) != 0)
        fprintf(stderr, "magpie: warning: putting the GPU settings back failed: %s\n", d.msg);
    fputs(mp_buf_cstr(&log), stderr);
    mp_buf_fini(&log);
    mp_gpuctl_session_free(ses);
}

int cmd_gpu_calibrate(int argc, char **argv)
{
    struct cal_args a;
    memset(&a, 0, sizeof(a));
    mp_gpu_setting_init(&a.set);
    int rc = parse_cal(argc, argv, &a);
    if (rc >= 0)
        return rc;
    struct mp_gpuctl_session *ses = NULL;
    if ((rc = apply_settings(&a, &ses)) >= 0)
        return rc;
    bool tty = true;
    a.o.progress = progress;
    a.o.user = &tty;
    struct mp_calib_result *r = calloc(1, sizeof(*r));
    if (!r) {
        fprintf(stderr, "magpie: error: out of memory\n");
        return EXIT_FAIL;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    rc = mp_calib_run(&a.o, r, &d);
    restore_settings(ses);
    if (rc) {
        free(r);
        cli_report_error(&d, rc);
        return EXIT_FAIL;
    }
    settings_text(&a.set, r->settings, sizeof(r->settings));
    if (!a.json) {
        struct mp_roofline_arch peak;
        bool have = mp_roofline_arch_datasheet(r->device_name, &peak) == 0;
        struct mp_buf b;
        mp_buf_init(&b, 0);
        mp_calib_text(r, have ? sheet : NULL, have ? &peak : NULL, &b);
        fwrite(b.data, 1, b.len, stdout);
        mp_buf_fini(&b);
    }
    rc = write_out(&a, r);
    free(r);
    return rc;
}
