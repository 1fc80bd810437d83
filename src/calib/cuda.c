/* The calibration's device: the CUDA driver API (libcuda.so.1), NVRTC and
 * cuBLASLt, each opened with dlopen so magpie needs none of them to build.
 * The libraries are looked for by soname (the driver's CUDA major first),
 * then in $CUDA_HOME/lib64 and /usr/local/cuda/lib64; MAGPIE_NVRTC_LIB and
 * MAGPIE_CUBLASLT_LIB name a file to use instead. Also the timer every
 * figure goes through and the NVML readings of the conditions. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <magpie/gpu.h>

#include "calib_int.h"

enum {
    ATTR_MAX_THREADS = 1,
    ATTR_SMS = 16,
    ATTR_L2 = 38,
    ATTR_CC_MAJOR = 75,
    ATTR_CC_MINOR = 76,
};

struct sym {
    void *slot; /* address of a function pointer */
    size_t size;
    const char *name;
};

#define SYM(api, field, name)                                                                      \
    {                                                                                              \
        &(api)->field, sizeof((api)->field), name                                                  \
    }

/* false (and the first missing name in err) unless every symbol resolved */
static bool resolve(void *lib, const struct sym *s, size_t n, char *err, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(lib, s[i].name);
        if (!p) {
            snprintf(err, len, "lacks %s", s[i].name);
            return false;
        }
        /* ISO C has no object -> function pointer conversion: copy the bits */
        memcpy(s[i].slot, &p, s[i].size);
    }
    return true;
}

/* dlopen of the first of env, the sonames, then those names under the CUDA
 * library folders; which one in used[] */
static void *open_lib(const char *env, const char *const *names, char *used, size_t len)
{
    const char *e = getenv(env);
    if (e && *e) {
        snprintf(used, len, "%s", e);
        return dlopen(e, RTLD_NOW | RTLD_LOCAL);
    }
    for (const char *const *n = names; *n; n++) {
        void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(used, len, "%s", *n);
            return h;
        }
    }
    const char *home = getenv("CUDA_HOME");
    const char *dirs[] = {home && *home ? home : "/usr/local/cuda", "/usr/local/cuda"};
    for (size_t i = 0; i < 2; i++) {
        for (const char *const *n = names; *n; n++) {
            char p[1024];
            snprintf(p, sizeof(p), "%s/lib64/%s", dirs[i], *n);
            void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                snprintf(used, len, "%s", p);
                return h;
            }
        }
    }
    return NULL;
}

static bool open_driver(struct cal_cuda *a, char *err, size_t len)
{
    a->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        snprintf(err, len, "CUDA driver not found (libcuda.so.1): no NVIDIA GPU here?");
        return false;
    }
    const struct sym s[] = {
        SYM(a, Init, "cuInit"),
        SYM(a, DeviceGet, "cuDeviceGet"),
        SYM(a, DeviceGetCount, "cuDeviceGetCount"),
        SYM(a, DeviceGetName, "cuDeviceGetName"),
        SYM(a, DeviceGetAttribute, "cuDeviceGetAttribute"),
        SYM(a, DeviceTotalMem, "cuDeviceTotalMem_v2"),
        SYM(a, DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        SYM(a, CtxSetCurrent, "cuCtxSetCurrent"),
        SYM(a, ModuleLoadData, "cuModuleLoadData"),
        SYM(a, ModuleUnload, "cuModuleUnload"),
        SYM(a, ModuleGetFunction, "cuModuleGetFunction"),
        SYM(a, MemAlloc, "cuMemAlloc_v2"),
        SYM(a, MemFree, "cuMemFree_v2"),
        SYM(a, MemcpyDtoH, "cuMemcpyDtoH_v2"),
        SYM(a, MemsetD8Async, "cuMemsetD8Async"),
        SYM(a, LaunchKernel, "cuLaunchKernel"),
        SYM(a, StreamCreate, "cuStreamCreate"),
        SYM(a, StreamSynchronize, "cuStreamSynchronize"),
        SYM(a, StreamBeginCapture, "cuStreamBeginCapture_v2"),
        SYM(a, StreamEndCapture, "cuStreamEndCapture"),
        SYM(a, GraphInstantiate, "cuGraphInstantiateWithFlags"),
        SYM(a, GraphLaunch, "cuGraphLaunch"),
        SYM(a, GraphExecDestroy, "cuGraphExecDestroy"),
        SYM(a, GraphDestroy, "cuGraphDestroy"),
        SYM(a, EventCreate, "cuEventCreate"),
        SYM(a, EventRecord, "cuEventRecord"),
        SYM(a, EventSynchronize, "cuEventSynchronize"),
        SYM(a, EventElapsedTime, "cuEventElapsedTime"),
        SYM(a, GetErrorString, "cuGetErrorString"),
        SYM(a, DriverGetVersion, "cuDriverGetVersion"),
    };
    char why[128];
    if (!resolve(a->lib, s, sizeof(s) / sizeof(s[0]), why, sizeof(why))) {
        snprintf(err, len, "libcuda.so.1 %s (driver too old?)", why);
        return false;
    }
    return true;
}

/* sonames for a driver of CUDA major `major`, newest first */
static void sonames(const char *stem, int major, char buf[][40], const char **names, size_t cap)
{
    size_t n = 0;
    for (int v = major; v >= 11 && n + 2 < cap; v--) {
        snprintf(buf[n], 40, "%s.so.%d", stem, v);
        names[n] = buf[n];
        n++;
    }
    snprintf(buf[n], 40, "%s.so", stem);
    names[n] = buf[n];
    names[n + 1] = NULL;
}

/* A toolkit library of stem (libnvrtc, libcublasLt) with every symbol of
 * s, or NULL and why in err; which file in used. */
static void *open_api(const char *stem, const char *env, const char *what, int major,
                      const struct sym *s, size_t n, char *used, size_t ulen, char *err,
                      size_t errlen)
{
    char buf[8][40];
    const char *names[9];
    sonames(stem, major, buf, names, 8);
    void *h = open_lib(env, names, used, ulen);
    if (!h) {
        snprintf(err, errlen,
                 "%s not found (%s.so: the CUDA toolkit or %s's wheel; %s=FILE names "
                 "one)",
                 what, stem, what, env);
        return NULL;
    }
    char why[128];
    if (!resolve(h, s, n, why, sizeof(why))) {
        snprintf(err, errlen, "%.100s %.100s", used, why);
        dlclose(h);
        return NULL;
    }
    return h;
}

bool cal_nvrtc_open(struct cal_nvrtc *r, int major, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    const struct sym s[] = {
        SYM(r, Version, "nvrtcVersion"),
        SYM(r, CreateProgram, "nvrtcCreateProgram"),
        SYM(r, CompileProgram, "nvrtcCompileProgram"),
        SYM(r, GetPTXSize, "nvrtcGetPTXSize"),
        SYM(r, GetPTX, "nvrtcGetPTX"),
        SYM(r, GetCUBINSize, "nvrtcGetCUBINSize"),
        SYM(r, GetCUBIN, "nvrtcGetCUBIN"),
        SYM(r, GetProgramLogSize, "nvrtcGetProgramLogSize"),
        SYM(r, GetProgramLog, "nvrtcGetProgramLog"),
        SYM(r, DestroyProgram, "nvrtcDestroyProgram"),
        SYM(r, GetErrorString, "nvrtcGetErrorString"),
    };
    char used[1024];
    r->lib = open_api("libnvrtc", "MAGPIE_NVRTC_LIB", "NVRTC", major, s, sizeof(s) / sizeof(s[0]),
                      used, sizeof(used), err, errlen);
    return r->lib != NULL;
}

static void open_blaslt(struct cal_dev *dv, int major)
{
    struct cal_blaslt *l = &dv->lt;
    const struct sym s[] = {
        SYM(l, Create, "cublasLtCreate"),
        SYM(l, Destroy, "cublasLtDestroy"),
        SYM(l, GetVersion, "cublasLtGetVersion"),
        SYM(l, GetStatusString, "cublasLtGetStatusString"),
        SYM(l, DescCreate, "cublasLtMatmulDescCreate"),
        SYM(l, DescDestroy, "cublasLtMatmulDescDestroy"),
        SYM(l, DescSetAttribute, "cublasLtMatmulDescSetAttribute"),
        SYM(l, LayoutCreate, "cublasLtMatrixLayoutCreate"),
        SYM(l, LayoutDestroy, "cublasLtMatrixLayoutDestroy"),
        SYM(l, PrefCreate, "cublasLtMatmulPreferenceCreate"),
        SYM(l, PrefDestroy, "cublasLtMatmulPreferenceDestroy"),
        SYM(l, PrefSetAttribute, "cublasLtMatmulPreferenceSetAttribute"),
        SYM(l, GetHeuristic, "cublasLtMatmulAlgoGetHeuristic"),
        SYM(l, AlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute"),
        SYM(l, Matmul, "cublasLtMatmul"),
    };
    char used[1024];
    l->lib = open_api("libcublasLt", "MAGPIE_CUBLASLT_LIB", "cuBLASLt", major, s,
                      sizeof(s) / sizeof(s[0]), used, sizeof(used), dv->lt_err, sizeof(dv->lt_err));
    if (l->lib) {
        const char *base = strrchr(used, '/');
        snprintf(l->soname, sizeof(l->soname), "%.60s", base ? base + 1 : used);
    }
}

const char *cal_err(const struct cal_dev *dv, cal_res r)
{
    const char *s = NULL;
    if (dv->cu.GetErrorString && dv->cu.GetErrorString(r, &s) == 0 && s)
        return s;
    return "unknown CUDA error";
}

static int device_props(struct cal_dev *dv, struct mp_diag *d)
{
    struct cal_cuda *a = &dv->cu;
    int cnt = 0;
    cal_res r = a->DeviceGetCount(&cnt);
    if (r)
        return mp_diag_set(d, MP_EIO, "CUDA: %s", cal_err(dv, r));
    if (dv->dev < 0 || dv->dev >= cnt)
        return mp_diag_set(d, MP_ENOTFOUND, "no CUDA device %d (%d found)", dv->dev, cnt);
    int h = 0;
    if ((r = a->DeviceGet(&h, dv->dev)) != 0 ||
        (r = a->DeviceGetAttribute(&dv->cc_major, ATTR_CC_MAJOR, h)) != 0 ||
        (r = a->DeviceGetAttribute(&dv->cc_minor, ATTR_CC_MINOR, h)) != 0 ||
        (r = a->DeviceGetAttribute(&dv->sms, ATTR_SMS, h)) != 0 ||
        (r = a->DeviceGetAttribute(&dv->l2_bytes, ATTR_L2, h)) != 0 ||
        (r = a->DeviceGetAttribute(&dv->max_threads, ATTR_MAX_THREADS, h)) != 0 ||
        (r = a->DeviceTotalMem(&dv->mem_bytes, h)) != 0 ||
        (r = a->DeviceGetName(dv->name, (int)sizeof(dv->name) - 1, h)) != 0 ||
        (r = a->DevicePrimaryCtxRetain(&dv->ctx, h)) != 0 || (r = a->CtxSetCurrent(dv->ctx)) != 0 ||
        (r = a->StreamCreate(&dv->stream, 1 /* non-blocking */)) != 0 ||
        (r = a->EventCreate(&dv->ev0, 0)) != 0 || (r = a->EventCreate(&dv->ev1, 0)) != 0)
        return mp_diag_set(d, MP_EIO, "CUDA device %d: %s", dv->dev, cal_err(dv, r));
    return 0;
}

int cal_open(struct cal_dev *dv, int device, struct mp_diag *d)
{
    memset(dv, 0, sizeof(*dv));
    dv->dev = device;
    char err[200];
    if (!open_driver(&dv->cu, err, sizeof(err)))
        return mp_diag_set(d, MP_ENOTFOUND, "%s", err);
    cal_res r = dv->cu.Init(0);
    if (r)
        return mp_diag_set(d, MP_ENOTFOUND, "CUDA initialisation failed: %s", cal_err(dv, r));
    int rc = device_props(dv, d);
    if (rc)
        return rc;
    void *p = dlsym(dv->cu.lib, "cuDeviceGetUuid_v2");
    if (!p)
        p = dlsym(dv->cu.lib, "cuDeviceGetUuid");
    unsigned char u[16];
    cal_res (*get_uuid)(unsigned char *, int) = NULL;
    memcpy(&get_uuid, &p, sizeof(p));
    int h = 0;
    if (get_uuid && dv->cu.DeviceGet(&h, dv->dev) == 0 && get_uuid(u, h) == 0)
        snprintf(dv->uuid, sizeof(dv->uuid),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                 u[14], u[15]);
    int ver = 0;
    dv->cu.DriverGetVersion(&ver);
    int major = ver > 0 ? ver / 1000 : 13;
    cal_nvrtc_open(&dv->rtc, major, dv->rtc_err, sizeof(dv->rtc_err));
    open_blaslt(dv, major);
    return 0;
}

void cal_close(struct cal_dev *dv)
{
    if (dv->mod)
        dv->cu.ModuleUnload(dv->mod);
    /* the primary context and stream go with the process; the libraries stay
     * loaded (cuBLASLt keeps threads and state of its own) */
    dv->mod = NULL;
    mp_gpu_sampler_close(dv->smp);
    dv->smp = NULL;
}

cal_dptr cal_alloc(struct cal_dev *dv, size_t n)
{
    cal_dptr p = 0;
    if (dv->cu.MemAlloc(&p, n ? n : 1) != 0)
        return 0;
    return p;
}

void cal_free(struct cal_dev *dv, cal_dptr p)
{
    if (p)
        dv->cu.MemFree(p);
}

static double now_ms(void)
{
    return (double)mp_time_ns() / 1e6;
}

static void pause_ms(double ms)
{
    if (!(ms > 0))
        return;
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(fmod(ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
}

/* ms per unit of n units, timed with the stream's events */
static cal_res time_n(struct cal_dev *dv, cal_work_fn fn, void *arg, long n, double *ms)
{
    struct cal_cuda *a = &dv->cu;
    cal_res r = a->EventRecord(dv->ev0, dv->stream);
    for (long i = 0; !r && i < n; i++)
        r = fn(dv, arg);
    if (!r)
        r = a->EventRecord(dv->ev1, dv->stream);
    if (!r)
        r = a->EventSynchronize(dv->ev1);
    float t = 0;
    if (!r)
        r = a->EventElapsedTime(&t, dv->ev0, dv->ev1);
    *ms = (double)t / (double)n;
    return r;
}

int cal_time(struct cal_dev *dv, cal_work_fn fn, void *arg, double batch_ms, int repeats,
             double *samples, char *err, size_t errlen)
{
    double one = 0;
    /* the first call pays for lazy loading and the library's own set-up */
    cal_res r = fn(dv, arg);
    if (!r)
        r = dv->cu.StreamSynchronize(dv->stream);
    if (!r)
        r = time_n(dv, fn, arg, 1, &one);
    if (!r && one < 0.05) /* too short to time alone: take 64 */
        r = time_n(dv, fn, arg, 64, &one);
    if (r) {
        snprintf(err, errlen, "CUDA: %s", cal_err(dv, r));
        return r;
    }
    long n = one > 0 ? (long)(batch_ms / one) : 1000;
    n = n < 1 ? 1 : n > 100000 ? 100000 : n;
    double warm_until = now_ms() + batch_ms;
    while (!r && now_ms() < warm_until) /* one batch's worth of warm-up */
        r = time_n(dv, fn, arg, n, &one);
    for (int i = 0; !r && i < repeats; i++) {
        double t0 = now_ms();
        r = time_n(dv, fn, arg, n, &samples[i]);
        if (batch_ms >= 10) /* figures meant to hold: rest twice as long as the batch ran */
            pause_ms(2 * (now_ms() - t0));
    }
    if (r)
        snprintf(err, errlen, "CUDA: %s", cal_err(dv, r));
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cal_summarise(const double *v, int n, struct mp_calib_item *it)
{
    it->repeats = n;
    if (n <= 0)
        return;
    double s[64];
    int m = n > 64 ? 64 : n;
    memcpy(s, v, sizeof(double) * (size_t)m);
    qsort(s, (size_t)m, sizeof(double), cmp_double);
    it->value = m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
    it->min = s[0];
    it->max = s[m - 1];
    double mean = 0, var = 0;
    for (int i = 0; i < m; i++)
        mean += s[i];
    mean /= m;
    for (int i = 0; i < m; i++)
        var += (s[i] - mean) * (s[i] - mean);
    it->cov_pct = m > 1 && mean != 0 ? sqrt(var / (m - 1)) / fabs(mean) * 100 : 0;
}

bool cal_nvml_device(const char *uuid, struct mp_gpu_device *out)
{
    struct mp_gpu_info info;
    struct mp_gpu_detect_opts o = {.no_tools = true};
    bool found = false;
    if (mp_gpu_detect(&info, &o, NULL) == 0 && info.source == MP_GPU_SRC_NVML) {
        for (int i = 0; i < info.count && !found; i++) {
            if (uuid && *uuid && strcmp(info.gpus[i].uuid, uuid) != 0)
                continue;
            *out = info.gpus[i];
            found = true;
        }
    }
    mp_gpu_info_fini(&info);
    return found;
}

void cal_conditions(struct cal_dev *dv, struct mp_calib_item *it)
{
    if (!dv->smp_tried && dv->uuid[0]) {
        dv->smp = mp_gpu_sampler_open(dv->uuid);
        dv->smp_tried = true;
    }
    struct mp_gpu_sample g;
    mp_gpu_sampler_read(dv->smp, &g);
    it->sm_clock_mhz = g.sm_clock_mhz;
    it->power_w = g.power_w;
    it->temp_c = g.temp_c;
}
