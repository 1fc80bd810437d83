/* A kept NVML handle for sampling one GPU's conditions many times (the
 * calibration reads clock, power and temperature after each of ~20 figures).
 * mp_gpu_detect initialises NVML and enumerates every device on each call,
 * which costs tens to hundreds of milliseconds per call on a driver machine;
 * the sampler pays that once. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

struct mp_gpu_sampler {
    struct gpu_nvml core;
    struct nvml_dev_st *dev;
    bool inited;
};

static struct nvml_dev_st *find_device(struct mp_gpu_sampler *s, const char *uuid)
{
    unsigned int n = 0;
    if (s->core.count(&n) != 0)
        return NULL;
    for (unsigned int i = 0; i < n; i++) {
        struct nvml_dev_st *dev = NULL;
        if (s->core.handle(i, &dev) != 0)
            continue;
        if (!uuid || !*uuid)
            return dev;
        char u[96] = "";
        if (s->core.uuid && s->core.uuid(dev, u, sizeof(u)) == 0 && strcmp(u, uuid) == 0)
            return dev;
    }
    return NULL;
}

struct mp_gpu_sampler *mp_gpu_sampler_open(const char *uuid)
{
    const char *off = getenv("MAGPIE_NO_NVML");
    if (off && strcmp(off, "0") != 0)
        return NULL;
    struct mp_gpu_sampler *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (!gpu_nvml_open(&s->core) || !s->core.init || !s->core.shutdown || !s->core.count ||
        !s->core.handle) {
        mp_gpu_sampler_close(s);
        return NULL;
    }
    if (s->core.init() != 0) {
        mp_gpu_sampler_close(s);
        return NULL;
    }
    s->inited = true;
    s->dev = find_device(s, uuid);
    if (!s->dev) {
        mp_gpu_sampler_close(s);
        return NULL;
    }
    return s;
}

void mp_gpu_sampler_read(struct mp_gpu_sampler *s, struct mp_gpu_sample *out)
{
    out->sm_clock_mhz = out->power_w = out->temp_c = out->utilization_pct = NAN;
    if (!s || !s->dev)
        return;
    unsigned int v = 0;
    if (s->core.clock && s->core.clock(s->dev, GPU_NVML_CLOCK_SM, &v) == 0)
        out->sm_clock_mhz = v;
    if (s->core.power && s->core.power(s->dev, &v) == 0)
        out->power_w = v / 1000.0;
    if (s->core.temp && s->core.temp(s->dev, GPU_NVML_TEMPERATURE_GPU, &v) == 0)
        out->temp_c = v;
    struct gpu_nvml_util u;
    if (s->core.util && s->core.util(s->dev, &u) == 0)
        out->utilization_pct = u.gpu;
}

void mp_gpu_sampler_close(struct mp_gpu_sampler *s)
{
    if (!s)
        return;
    if (s->inited && s->core.shutdown)
        s->core.shutdown();
    if (s->core.lib)
        dlclose(s->core.lib);
    free(s);
}
