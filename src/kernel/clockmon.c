/* GPU clock monitor for the latency stage. The clock read before and after a
 * timed run is taken with the GPU idle, so it cannot show what the GPU did
 * while the kernel ran; a power-bound kernel (an H200 8192^3 bf16 GEMM runs
 * at 1.4-1.8 GHz instead of 1.98 under its software power cap) then gets a
 * median that follows the GPU's temperature from run to run. nvidia-smi's
 * loop mode samples the SM clock and the clock-event reasons every 50 ms
 * into a file in the kernel's workdir (kept as evidence); the busy samples
 * (no "GPU idle" reason) are summarised into the timing, and the pipeline
 * flags the run as throttled when a power or thermal cap was active in at
 * least 10 % of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/proc.h>

#include "kernel_int.h"

/* nvidia-smi clock-event reason bits (nvml.h's nvmlClocksEventReason*) */
#define CER_GPU_IDLE 0x1ULL
#define CER_CAPS                                                                                   \
    (0x4ULL /* SW power cap */ | 0x8ULL /* HW slowdown */ | 0x20ULL /* SW thermal */ |             \
     0x40ULL /* HW thermal */ | 0x80ULL /* HW power brake */)

int kern_clockmon_start(struct kern_clockmon *m, const char *dir, int index)
{
    m->proc = NULL;
    m->path[0] = 0;
    char smi[4096];
    if (getenv("MAGPIE_NO_CLOCK_MONITOR") || mp_proc_which("nvidia-smi", smi, sizeof(smi)))
        return MP_ENOTFOUND;
    snprintf(m->path, sizeof(m->path), "%s/gpu_clocks.csv", dir);
    char idx[16];
    snprintf(idx, sizeof(idx), "%d", index < 0 ? 0 : index);
    /* clocks_throttle_reasons.* is the older name of clocks_event_reasons.*;
     * drivers of both generations accept it */
    const char *argv[] = {smi,
                          "--query-gpu=clocks.sm,clocks_throttle_reasons.active",
                          "--format=csv,noheader,nounits",
                          "-lms",
                          "50",
                          "-i",
                          idx,
                          NULL};
    struct mp_proc_opts po = {
        .out_mode = MP_PROC_FILE, .out_path = m->path, .err_mode = MP_PROC_DISCARD, .grace_s = 2};
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_proc_spawn(argv, &po, &m->proc, &d);
    if (rc)
        m->proc = NULL;
    return rc;
}

int kern_clockmon_parse(const char *text, size_t len, struct mp_kernel_clocks *c)
{
    int busy = 0, capped = 0;
    double sum = 0, min = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        char line[128];
        size_t n = (size_t)(eol - p);
        if (n < sizeof(line)) {
            memcpy(line, p, n);
            line[n] = 0;
            char *e1 = NULL, *e2 = NULL;
            errno = 0;
            double mhz = strtod(line, &e1);
            if (e1 != line && *e1 == ',') {
                unsigned long long reasons = strtoull(e1 + 1, &e2, 16);
                /* a reading outside (0, 1 THz) is garbage (inf, nan, 1e300) */
                if (e2 != e1 + 1 && errno == 0 && !(reasons & CER_GPU_IDLE) && mhz > 0 &&
                    mhz < 1e6) {
                    if (!busy || mhz < min)
                        min = mhz;
                    sum += mhz;
                    busy++;
                    capped += (reasons & CER_CAPS) != 0;
                }
            }
        }
        p = nl ? nl + 1 : end;
    }
    c->samples = busy;
    if (busy) {
        c->mean_mhz = sum / busy;
        c->min_mhz = min;
        c->capped_share = (double)capped / busy;
    }
    return busy;
}

void kern_clockmon_stop(struct kern_clockmon *m, struct mp_kernel_clocks *c)
{
    if (!m->proc)
        return;
    mp_proc_terminate(m->proc);
    struct mp_proc_result res;
    mp_proc_result_init(&res);
    mp_proc_wait(m->proc, &res);
    mp_proc_result_fini(&res);
    mp_proc_free(m->proc);
    m->proc = NULL;
    size_t len = 0;
    char *text = kern_read_file(m->path, &len);
    if (text)
        kern_clockmon_parse(text, len, c);
    free(text);
}
