/* magpie_timing.h: time a kernel from your own CUDA (or HIP) test program
 * the way magpie's harness does, and report it to `magpie analyze` through
 * a MAGPIE_LATENCY_JSON line on stdout.
 *
 *   #include "magpie_timing.h"
 *   static void launch(void *u) { struct args *a = u; vadd<<<g, b, 0, a->s>>>(...); }
 *   ...
 *   magpie_time("vadd", launch, &args, stream, NULL);   // NULL: default options
 *
 * What it does: warm-up by time (0.1 s), batches of launches sized so that
 * one sample is >= 20 us, an L2 flush before every sample (cudaMemsetAsync
 * of a buffer twice the L2 size, on the same stream), CUDA events recorded
 * on the stream around the batch, and NVBench's stopping rule: at least
 * min_samples samples and min_time_s of device time, then stop when the
 * relative standard deviation is <= max_noise or has stopped falling (its
 * spread over the last 512 samples < 5 %), or at max_time_s of wall
 * time. The per-launch samples are printed; magpie computes the statistics
 * (median, CI, ...). All launches must go to `stream`.
 *
 * Unlike magpie's harness and Python runner it has no power guard (clock
 * probe, capped samples dropped, cool-down): a power-capped kernel timed
 * with it follows the clock the GPU's power controller grants; magpie's
 * clock monitor then flags the run as throttled.
 *
 * Header-only; C++ (nvcc, hipcc). Compiles for HIP when __HIPCC__ is
 * defined (unverified: written for hipcc, not run on an AMD GPU).
 */
#ifndef MAGPIE_TIMING_H
#define MAGPIE_TIMING_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define MGP(x) hip##x
typedef hipStream_t magpie_stream_t;
typedef hipEvent_t magpie_event_t;
#define MGP_L2_ATTR hipDeviceAttributeL2CacheSize
#else
#include <cuda_runtime.h>
#define MGP(x) cuda##x
typedef cudaStream_t magpie_stream_t;
typedef cudaEvent_t magpie_event_t;
#define MGP_L2_ATTR cudaDevAttrL2CacheSize
#endif

struct magpie_timing_opts {
    int min_samples;   /* 10 */
    int max_samples;   /* 10000 */
    double min_time_s; /* 0.5 s of device time */
    double max_noise;  /* 0.005 */
    double max_time_s; /* 15 s of wall time */
    double warmup_s;   /* 0.1 s */
    int l2_flush;      /* 1 */
};

static inline double magpie__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void magpie__json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Times launch(user) on stream; prints the MAGPIE_LATENCY_JSON line.
 * Returns 0, or -1 after printing an "error" marker. */
static inline int magpie_time(const char *name, void (*launch)(void *), void *user,
                              magpie_stream_t stream, const struct magpie_timing_opts *opts)
{
    struct magpie_timing_opts o = {10, 10000, 0.5, 0.005, 15.0, 0.1, 1};
    if (opts)
        o = *opts;
    const char *env = getenv("MAGPIE_MAX_NOISE");
    if (env)
        o.max_noise = atof(env);
    env = getenv("MAGPIE_MAX_TIME_S");
    if (env)
        o.max_time_s = atof(env);
    magpie_event_t e0, e1;
    MGP(EventCreate)(&e0);
    MGP(EventCreate)(&e1);
    int dev = 0, l2 = 0;
    MGP(GetDevice)(&dev);
    MGP(DeviceGetAttribute)(&l2, MGP_L2_ATTR, dev);
    size_t flush_bytes = o.l2_flush ? (size_t)(l2 > 0 ? l2 : 64 << 20) * 2 : 0;
    void *flush = NULL;
    if (flush_bytes && MGP(Malloc)(&flush, flush_bytes) != 0) {
        flush = NULL;
        flush_bytes = 0;
    }
    /* warm-up by time; best single launch sizes the batch */
    double best = 1e30, t0 = magpie__now_s();
    int it = 0;
    do {
        float ms = 0;
        MGP(EventRecord)(e0, stream);
        launch(user);
        MGP(EventRecord)(e1, stream);
        MGP(EventSynchronize)(e1);
        MGP(EventElapsedTime)(&ms, e0, e1);
        if (ms > 0 && ms < best)
            best = ms;
        it++;
    } while (it < 1000 && magpie__now_s() - t0 < o.warmup_s);
    int err = (int)MGP(GetLastError)();
    if (err) {
        printf("MAGPIE_LATENCY_JSON: {\"error\": \"launch failed: %s\", \"kernel\": ",
               MGP(GetErrorString)((MGP(Error_t))err));
        magpie__json_str(stdout, name);
        printf("}\n");
        return -1;
    }
    int batch = best < 0.020 ? (int)ceil(0.020 / best) : 1;
    if (batch > 1000)
        batch = 1000;
    int cap = 1024, n = 0;
    double *s = (double *)malloc(sizeof(double) * (size_t)cap);
    double mean = 0, m2 = 0, sum_ms = 0;
    char reason[96] = "";
    double nhist[512]; /* NVBench's plateau test on the noise estimates */
    int nh = 0;
    t0 = magpie__now_s();
    unsigned char fill = 0;
    for (;;) {
        if (flush)
            MGP(MemsetAsync)(flush, fill++, flush_bytes, stream);
        float ms = 0;
        MGP(EventRecord)(e0, stream);
        for (int b = 0; b < batch; b++)
            launch(user);
        MGP(EventRecord)(e1, stream);
        MGP(EventSynchronize)(e1);
        MGP(EventElapsedTime)(&ms, e0, e1);
        double v = ms / batch;
        if (n == cap) {
            cap *= 2;
            s = (double *)realloc(s, sizeof(double) * (size_t)cap);
        }
        s[n++] = v;
        sum_ms += ms;
        double d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
        double noise = (n >= 5 && mean > 0) ? sqrt(m2 / (n - 1)) / mean : 1e30;
        double el = magpie__now_s() - t0;
        if (n >= o.min_samples && sum_ms >= o.min_time_s * 1000 && noise <= o.max_noise) {
            snprintf(reason, sizeof(reason), "noise %.3f%% <= %.3f%% after %d samples", noise * 100,
                     o.max_noise * 100, n);
            break;
        }
        if (noise < 1e29) {
            nhist[nh % 512] = noise;
            nh++;
        }
        int m = nh < 512 ? nh : 512;
        if (m > 64 && nh % 16 == 0 && n >= o.min_samples && sum_ms >= o.min_time_s * 1000) {
            double nm = 0, ss = 0;
            for (int i = 0; i < m; i++)
                nm += nhist[i];
            nm /= m;
            for (int i = 0; i < m; i++)
                ss += (nhist[i] - nm) * (nhist[i] - nm);
            if (nm > 0 && sqrt(ss / (m - 1)) / nm < 0.05) {
                snprintf(reason, sizeof(reason), "noise plateaued at %.3f%% after %d samples",
                         noise * 100, n);
                break;
            }
        }
        if (n >= o.max_samples) {
            snprintf(reason, sizeof(reason), "max_samples %d reached (noise %.3f%%)", n,
                     noise * 100);
            break;
        }
        if (el >= o.max_time_s && n >= 2) {
            snprintf(reason, sizeof(reason), "timeout %.1f s reached (noise %.3f%%, %d samples)",
                     o.max_time_s, noise * 100, n);
            break;
        }
    }
    printf("MAGPIE_LATENCY_JSON: {\"mode\": \"magpie_events\", \"kernel\": ");
    magpie__json_str(stdout, name);
    printf(", \"batch\": %d, \"l2_flush_bytes\": %zu, \"stop_reason\": \"%s\", \"samples_ms\": [",
           batch, flush_bytes, reason);
    for (int i = 0; i < n; i++)
        printf("%s%.9g", i ? ", " : "", s[i]);
    printf("]}\n");
    fflush(stdout);
    free(s);
    if (flush)
        MGP(Free)(flush);
    MGP(EventDestroy)(e0);
    MGP(EventDestroy)(e1);
    return 0;
}

#endif
