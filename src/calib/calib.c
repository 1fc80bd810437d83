/* `magpie gpu calibrate`: the order of the figures, the busy-GPU refusal,
 * the GPU's identity and settings (NVML), and the wall time. The figures
 * themselves are gemm.c's and kern.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <magpie/gpu.h>

#include "calib_int.h"

static const char *const all_dtypes[] = {"fp64", "fp32",     "tf32", "fp16", "bf16",
                                         "fp8",  "fp8_e5m2", "int8", "fp4",  "fp6"};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))

/* true when word is in the comma list (NULL list: every dtype) */
static bool listed(const char *list, const char *word)
{
    if (!list)
        return true;
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, word, n))
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

int mp_calib_check_dtypes(const char *list, struct mp_diag *d)
{
    if (!list || !strcmp(list, "none"))
        return 0;
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        bool ok = false;
        for (size_t i = 0; i < N_DTYPES && !ok; i++)
            ok = strlen(all_dtypes[i]) == len && !strncmp(p, all_dtypes[i], len);
        if (!ok) {
            mp_diag_set(d, MP_EINVAL,
                        "unknown dtype '%.*s' (fp64, fp32, tf32, fp16, bf16, fp8, fp8_e5m2, "
                        "int8, fp4, fp6)",
                        (int)len, p);
            mp_diag_set_field(d, "dtypes");
            return MP_EINVAL;
        }
        if (!e)
            return 0;
        p = e + 1;
    }
}

static void say(const struct mp_calib_opts *o, const char *fmt, const char *what)
{
    if (!o->progress)
        return;
    char msg[160];
    snprintf(msg, sizeof(msg), fmt, what);
    o->progress(msg, o->user);
}

static double nan_if_neg(double v)
{
    return v >= 0 ? v : NAN;
}

/* the GPU's identity and settings; refuses a busy GPU: utilisation of 10 %
 * or more in two readings 0.2 s apart */
static int identify(struct cal_dev *dv, const struct mp_calib_opts *o, struct mp_calib_result *r,
                    struct mp_diag *d)
{
    snprintf(r->device_name, sizeof(r->device_name), "%s", dv->name);
    snprintf(r->uuid, sizeof(r->uuid), "%s", dv->uuid);
    r->cc_major = dv->cc_major;
    r->cc_minor = dv->cc_minor;
    mp_gpu_nvidia_arch(dv->cc_major, dv->cc_minor, r->arch, sizeof(r->arch));
    r->sms = dv->sms;
    r->memory_gb = (double)dv->mem_bytes / 1e9;
    r->l2_mb = (double)dv->l2_bytes / 1048576.0;
    r->power_limit_w = r->sm_clock_max_mhz = r->mem_clock_max_mhz = NAN;
    r->temp_start_c = r->temp_end_c = NAN;
    struct mp_gpu_device g;
    if (!cal_nvml_device(dv->uuid, &g))
        return 0; /* no NVML: identity from CUDA only, no busy check */
    snprintf(r->driver, sizeof(r->driver), "%s", g.driver);
    r->power_limit_w = nan_if_neg(g.power_limit_w);
    r->sm_clock_max_mhz = nan_if_neg(g.sm_clock_max_mhz);
    r->temp_start_c = nan_if_neg(g.temperature_c);
    double u1 = g.utilization_pct;
    if (o->allow_busy || u1 < 10)
        return 0;
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    if (cal_nvml_device(dv->uuid, &g) && g.utilization_pct >= 10)
        return mp_diag_set(d, MP_ECANCEL,
                           "GPU %d (%s) is busy: %.0f %% and %.0f %% utilisation, %lld MiB in use; "
                           "its figures would be another program's leftovers. Run it idle, or "
                           "--allow-busy to measure anyway",
                           o->device, dv->name, u1, g.utilization_pct, g.memory_used_mib);
    return 0;
}

static struct mp_calib_item *next_item(struct mp_calib_result *r)
{
    if (r->n_items >= MP_CALIB_MAX_ITEMS)
        return NULL;
    struct mp_calib_item *it = &r->items[r->n_items++];
    memset(it, 0, sizeof(*it));
    it->sm_clock_mhz = it->power_w = it->temp_c = NAN;
    return it;
}

static void run_gemms(struct cal_dev *dv, const struct mp_calib_opts *o, struct mp_calib_result *r)
{
    for (size_t i = 0; i < N_DTYPES; i++) {
        const char *t = all_dtypes[i];
        bool want = o->dtypes ? listed(o->dtypes, t) : true;
        if (o->quick && !o->dtypes && !strcmp(t, "fp8_e5m2"))
            want = false;
        struct mp_calib_item *it = next_item(r);
        if (!it)
            return;
        if (!want) {
            it->status = MP_CALIB_SKIPPED;
            snprintf(it->key, sizeof(it->key), "%s", t);
            continue;
        }
        say(o, "GEMM %s", t);
        cal_gemm(dv, t, o, it);
    }
}

static void run_kernels(struct cal_dev *dv, const struct mp_calib_opts *o,
                        struct mp_calib_result *r, const char *kerr)
{
    static const char *const vec[] = {"f64", "f32", "f16", "bf16"};
    static const char *const vkey[] = {"fp64", "fp32", "fp16", "bf16"};
    for (size_t i = 0; i < 4; i++) {
        struct mp_calib_item *it = next_item(r);
        if (!it)
            return;
        say(o, "vector %s", vkey[i]);
        cal_vector(dv, vec[i], o, it);
        snprintf(it->key, sizeof(it->key), "vector_%s", vkey[i]);
        if (!dv->mod)
            snprintf(it->note, sizeof(it->note), "%s", kerr);
    }
    static const char *const mem[] = {"read",    "write",           "copy",
                                      "l2_read", "launch_overhead", "launch_overhead_graph"};
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
        if (o->quick && i >= 3)
            break;
        struct mp_calib_item *it = next_item(r);
        if (!it)
            return;
        say(o, "%s", mem[i]);
        cal_memory(dv, mem[i], o, it);
        if (!dv->mod)
            snprintf(it->note, sizeof(it->note), "%s", kerr);
    }
}

/* AMD GPUs and no CUDA driver: say what is missing rather than "no GPU" */
static bool amd_here(void)
{
    struct mp_gpu_info info;
    struct mp_gpu_detect_opts o = {.no_tools = true};
    bool amd = mp_gpu_detect(&info, &o, NULL) == 0 && info.vendor == MP_GPU_VENDOR_AMD;
    mp_gpu_info_fini(&info);
    return amd;
}

int mp_calib_run(const struct mp_calib_opts *o, struct mp_calib_result *r, struct mp_diag *d)
{
    memset(r, 0, sizeof(*r));
    int rc = mp_calib_check_dtypes(o->dtypes, d);
    if (rc)
        return rc;
    uint64_t t0 = mp_time_ns();
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->date, sizeof(r->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    r->quick = o->quick;
    struct cal_dev dv;
    rc = cal_open(&dv, o->device, d);
    if (rc == MP_ENOTFOUND && amd_here()) {
        mp_diag_clear(d);
        rc = mp_diag_set(d, MP_EUNSUP,
                         "this machine has AMD GPUs: calibrating them (hipBLASLt, hipRTC) is not "
                         "implemented yet; give an arch file with --gpu-arch-json meanwhile");
    }
    if (!rc)
        rc = identify(&dv, o, r, d);
    if (rc) {
        cal_close(&dv);
        return rc;
    }
    if (!dv.rtc.lib && !dv.lt.lib) {
        cal_close(&dv);
        return mp_diag_set(d, MP_EUNSUP, "nothing to measure with: %s; %s", dv.rtc_err, dv.lt_err);
    }
    int maj = 0, min = 0;
    if (dv.rtc.lib && dv.rtc.Version(&maj, &min) == 0)
        snprintf(r->rtc, sizeof(r->rtc), "NVRTC %d.%d", maj, min);
    if (dv.lt.lib)
        snprintf(r->blas, sizeof(r->blas), "cuBLASLt %zu (%s)", dv.lt.GetVersion(), dv.lt.soname);
    char kerr[240] = "";
    say(o, "%s", "compiling the calibration kernels (NVRTC)");
    cal_kern_build(&dv, kerr, sizeof(kerr));
    if (!o->dtypes || strcmp(o->dtypes, "none") != 0)
        run_gemms(&dv, o, r);
    if (!o->no_memory)
        run_kernels(&dv, o, r, kerr);
    struct mp_calib_item end;
    cal_conditions(&dv, &end);
    r->temp_end_c = end.temp_c;
    cal_close(&dv);
    r->seconds = (double)(mp_time_ns() - t0) / 1e9;
    return 0;
}
