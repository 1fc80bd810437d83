/* A stand-in for libnvidia-ml.so.1 in the GPU-control tests (loaded through
 * MAGPIE_NVML_LIB). It keeps the settings of STUB_NVML_COUNT (2) pretend H200s
 * in the file $STUB_NVML_STATE, so that state survives from one magpie process
 * to the next, and appends each setting call to $STUB_NVML_LOG, one line per
 * call ("nvmlDeviceSetPowerManagementLimit 0 500000"). STUB_NVML_DENY=1 makes
 * every setting call fail with NVML_ERROR_NO_PERMISSION, as for a user that
 * is not root; STUB_NVML_FAIL=NAME fails that one call (NVML_ERROR_UNKNOWN).
 *
 * Limits are those an H200 SXM reports (power 200-700 W, default 700 W; max
 * SM clock 1980 MHz, max memory clock 3201 MHz). Nothing here talks to a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXG 16

enum { OK = 0, E_INVALID_ARGUMENT = 2, E_NO_PERMISSION = 4, E_UNKNOWN = 999 };

struct gpu {
    unsigned int limit_mw;
    unsigned int sm_lock[2], mem_lock[2]; /* 0,0 = not locked */
};

struct nvml_dev_st {
    int index;
};

static struct gpu g_gpu[MAXG];
static struct nvml_dev_st g_dev[MAXG];
static unsigned int g_count = 2;

static const unsigned int DEF_MW = 700000, MIN_MW = 200000, MAX_MW = 700000;
static const unsigned int SM_MAX = 1980, MEM_MAX = 3201, SM_IDLE = 345, MEM_IDLE = 3201;

static void load(void)
{
    const char *c = getenv("STUB_NVML_COUNT");
    if (c && atoi(c) > 0 && atoi(c) <= MAXG)
        g_count = (unsigned int)atoi(c);
    for (unsigned int i = 0; i < MAXG; i++) {
        g_gpu[i].limit_mw = DEF_MW;
        g_dev[i].index = (int)i;
    }
    const char *p = getenv("STUB_NVML_STATE");
    FILE *f = p ? fopen(p, "r") : NULL;
    if (!f)
        return;
    unsigned int i, l, a, b, m, n;
    while (fscanf(f, "%u %u %u %u %u %u", &i, &l, &a, &b, &m, &n) == 6)
        if (i < MAXG)
            g_gpu[i] = (struct gpu){l, {a, b}, {m, n}};
    fclose(f);
}

static void save(void)
{
    const char *p = getenv("STUB_NVML_STATE");
    if (!p)
        return;
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    for (unsigned int i = 0; i < g_count; i++)
        fprintf(f, "%u %u %u %u %u %u\n", i, g_gpu[i].limit_mw, g_gpu[i].sm_lock[0],
                g_gpu[i].sm_lock[1], g_gpu[i].mem_lock[0], g_gpu[i].mem_lock[1]);
    fclose(f);
    rename(tmp, p);
}

/* Logs the call; returns the error to give instead, or OK. */
static int record(const char *fn, int idx, long a, long b)
{
    const char *p = getenv("STUB_NVML_LOG");
    FILE *f = p ? fopen(p, "a") : NULL;
    if (f) {
        fprintf(f, "%s %d", fn, idx);
        if (a >= 0)
            fprintf(f, " %ld", a);
        if (b >= 0)
            fprintf(f, " %ld", b);
        fputc('\n', f);
        fclose(f);
    }
    const char *deny = getenv("STUB_NVML_DENY");
    if (deny && strcmp(deny, "1") == 0)
        return E_NO_PERMISSION;
    const char *fail = getenv("STUB_NVML_FAIL");
    if (fail && strcmp(fail, fn) == 0)
        return E_UNKNOWN;
    return OK;
}

int nvmlInit_v2(void)
{
    load();
    return OK;
}

int nvmlShutdown(void)
{
    return OK;
}

const char *nvmlErrorString(int r)
{
    switch (r) {
    case OK:
        return "Success";
    case E_INVALID_ARGUMENT:
        return "Invalid Argument";
    case E_NO_PERMISSION:
        return "Insufficient Permissions";
    default:
        return "Unknown Error";
    }
}

int nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    snprintf(buf, len, "580.159.04-stub");
    return OK;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = g_count;
    return OK;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, struct nvml_dev_st **dev)
{
    if (i >= g_count)
        return E_INVALID_ARGUMENT;
    *dev = &g_dev[i];
    return OK;
}

int nvmlDeviceGetName(struct nvml_dev_st *dev, char *buf, unsigned int len)
{
    (void)dev;
    snprintf(buf, len, "NVIDIA H200 (stub)");
    return OK;
}

int nvmlDeviceGetCudaComputeCapability(struct nvml_dev_st *dev, int *maj, int *mnr)
{
    (void)dev;
    *maj = 9;
    *mnr = 0;
    return OK;
}

int nvmlDeviceGetUUID(struct nvml_dev_st *dev, char *buf, unsigned int len)
{
    snprintf(buf, len, "GPU-stub-%d", dev->index);
    return OK;
}

int nvmlDeviceGetPowerManagementLimit(struct nvml_dev_st *dev, unsigned int *mw)
{
    *mw = g_gpu[dev->index].limit_mw;
    return OK;
}

int nvmlDeviceGetEnforcedPowerLimit(struct nvml_dev_st *dev, unsigned int *mw)
{
    *mw = g_gpu[dev->index].limit_mw;
    return OK;
}

int nvmlDeviceGetPowerManagementDefaultLimit(struct nvml_dev_st *dev, unsigned int *mw)
{
    (void)dev;
    *mw = DEF_MW;
    return OK;
}

int nvmlDeviceGetPowerManagementLimitConstraints(struct nvml_dev_st *dev, unsigned int *lo,
                                                 unsigned int *hi)
{
    (void)dev;
    *lo = MIN_MW;
    *hi = MAX_MW;
    return OK;
}

int nvmlDeviceGetClockInfo(struct nvml_dev_st *dev, int type, unsigned int *mhz)
{
    const struct gpu *g = &g_gpu[dev->index];
    if (type == 1)
        *mhz = g->sm_lock[1] ? g->sm_lock[1] : SM_IDLE;
    else if (type == 2)
        *mhz = g->mem_lock[1] ? g->mem_lock[1] : MEM_IDLE;
    else
        return E_INVALID_ARGUMENT;
    return OK;
}

int nvmlDeviceGetMaxClockInfo(struct nvml_dev_st *dev, int type, unsigned int *mhz)
{
    (void)dev;
    if (type == 1)
        *mhz = SM_MAX;
    else if (type == 2)
        *mhz = MEM_MAX;
    else
        return E_INVALID_ARGUMENT;
    return OK;
}

int nvmlDeviceSetPowerManagementLimit(struct nvml_dev_st *dev, unsigned int mw)
{
    int r = record("nvmlDeviceSetPowerManagementLimit", dev->index, mw, -1);
    if (r)
        return r;
    if (mw < MIN_MW || mw > MAX_MW)
        return E_INVALID_ARGUMENT;
    g_gpu[dev->index].limit_mw = mw;
    save();
    return OK;
}

static int lock(const char *fn, struct nvml_dev_st *dev, unsigned int *slot, unsigned int lo,
                unsigned int hi, unsigned int max)
{
    int r = record(fn, dev->index, lo, hi);
    if (r)
        return r;
    if (lo > hi || hi > max)
        return E_INVALID_ARGUMENT;
    slot[0] = lo;
    slot[1] = hi;
    save();
    return OK;
}

int nvmlDeviceSetGpuLockedClocks(struct nvml_dev_st *dev, unsigned int lo, unsigned int hi)
{
    return lock("nvmlDeviceSetGpuLockedClocks", dev, g_gpu[dev->index].sm_lock, lo, hi, SM_MAX);
}

int nvmlDeviceSetMemoryLockedClocks(struct nvml_dev_st *dev, unsigned int lo, unsigned int hi)
{
    return lock("nvmlDeviceSetMemoryLockedClocks", dev, g_gpu[dev->index].mem_lock, lo, hi,
                MEM_MAX);
}

int nvmlDeviceResetGpuLockedClocks(struct nvml_dev_st *dev)
{
    int r = record("nvmlDeviceResetGpuLockedClocks", dev->index, -1, -1);
    if (r)
        return r;
    g_gpu[dev->index].sm_lock[0] = g_gpu[dev->index].sm_lock[1] = 0;
    save();
    return OK;
}

int nvmlDeviceResetMemoryLockedClocks(struct nvml_dev_st *dev)
{
    int r = record("nvmlDeviceResetMemoryLockedClocks", dev->index, -1, -1);
    if (r)
        return r;
    g_gpu[dev->index].mem_lock[0] = g_gpu[dev->index].mem_lock[1] = 0;
    save();
    return OK;
}
