/* NVML through dlopen: the driver's own library, so GPU detection works on
 * any machine with an NVIDIA driver and magpie needs no CUDA to build or to
 * run. The few prototypes we call are declared here (NVML's ABI for these
 * entry points is stable; the _v2/_v3 names are the current ones), so no
 * nvml.h is needed. Symbols are looked up by name and a missing optional one
 * only leaves its field unknown. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

/* NVML returns an int status, 0 = NVML_SUCCESS; devices are opaque
 * struct nvml_dev_st pointers (nvmlDevice_t). */

struct nvml_memory { /* nvmlMemory_t (v1): "used" includes driver-reserved memory */
    unsigned long long total, free, used;
};

struct nvml_memory_v2 { /* nvmlMemory_v2_t: "used" as nvidia-smi shows it (r510+) */
    unsigned int version;
    unsigned long long total, reserved, free, used;
};

/* NVML_STRUCT_VERSION(Memory, 2) */
#define NVML_MEMORY_V2 ((unsigned int)(sizeof(struct nvml_memory_v2) | (2u << 24)))

struct nvml_pci { /* nvmlPciInfo_t as of nvmlDeviceGetPciInfo_v3 */
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

/* what only the probe calls, after the common entry points */
struct nvml_api {
    struct gpu_nvml core;
    int (*cc)(struct nvml_dev_st *, int *, int *);
    int (*memory)(struct nvml_dev_st *, struct nvml_memory *);
    int (*memory_v2)(struct nvml_dev_st *, struct nvml_memory_v2 *);
    int (*driver)(char *, unsigned int);
    int (*cuda_version)(int *);
    int (*pci)(struct nvml_dev_st *, struct nvml_pci *);
    int (*power_limit)(struct nvml_dev_st *, unsigned int *);
};

/* dlsym returns an object pointer; ISO C has no conversion to a function
 * pointer, so copy the bits (what POSIX guarantees to work). */
void gpu_dlsym(void *lib, const char *name, void *fnptr, size_t size)
{
    void *p = dlsym(lib, name);
    if (p)
        memcpy(fnptr, &p, size);
}

#define CORE_SYM(field, name) gpu_dlsym(n->lib, name, &n->field, sizeof(n->field))

bool gpu_nvml_open(struct gpu_nvml *n)
{
    memset(n, 0, sizeof(*n));
    n->lib = dlopen(gpu_nvml_lib(), RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return false;
    CORE_SYM(init, "nvmlInit_v2");
    CORE_SYM(shutdown, "nvmlShutdown");
    CORE_SYM(error_string, "nvmlErrorString");
    CORE_SYM(count, "nvmlDeviceGetCount_v2");
    CORE_SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
    CORE_SYM(name, "nvmlDeviceGetName");
    CORE_SYM(clock, "nvmlDeviceGetClockInfo");
    CORE_SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
    CORE_SYM(uuid, "nvmlDeviceGetUUID");
    CORE_SYM(util, "nvmlDeviceGetUtilizationRates");
    CORE_SYM(temp, "nvmlDeviceGetTemperature");
    CORE_SYM(power, "nvmlDeviceGetPowerUsage");
    return true;
}

#define SYM(field, name) gpu_dlsym(api.core.lib, name, &api.field, sizeof(api.field))

static const char *errstr(const struct nvml_api *api, int r)
{
    const char *s = api->core.error_string ? api->core.error_string(r) : NULL;
    return s ? s : "error";
}

const char *gpu_nvml_lib(void)
{
    const char *p = getenv("MAGPIE_NVML_LIB");
    return p && *p ? p : "libnvidia-ml.so.1";
}

int gpu_probe_nvml(struct mp_gpu_info *info)
{
    int added = 0;
    bool inited = false;
    struct nvml_api api;
    memset(&api, 0, sizeof(api));

    const char *path = gpu_nvml_lib();
    if (!gpu_nvml_open(&api.core)) {
        gpu_note(info, "nvml: %s not loadable", path);
        goto out;
    }
    SYM(cc, "nvmlDeviceGetCudaComputeCapability");
    SYM(memory, "nvmlDeviceGetMemoryInfo");
    SYM(memory_v2, "nvmlDeviceGetMemoryInfo_v2");
    SYM(driver, "nvmlSystemGetDriverVersion");
    SYM(cuda_version, "nvmlSystemGetCudaDriverVersion_v2");
    SYM(pci, "nvmlDeviceGetPciInfo_v3");
    SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    if (!api.core.init || !api.core.shutdown || !api.core.count || !api.core.handle ||
        !api.core.name) {
        gpu_note(info, "nvml: %s lacks nvmlInit_v2 or device functions", path);
        goto out;
    }
    int r = api.core.init();
    if (r != 0) {
        gpu_note(info, "nvml: nvmlInit_v2: %s", errstr(&api, r));
        goto out;
    }
    inited = true;

    char driver[80] = "";
    if (api.driver && api.driver(driver, sizeof(driver)) != 0)
        driver[0] = '\0';
    int cuda = 0;
    if (api.cuda_version && api.cuda_version(&cuda) == 0 && cuda > 0)
        snprintf(info->cuda_version, sizeof(info->cuda_version), "%d.%d", cuda / 1000,
                 (cuda % 1000) / 10);

    unsigned int n = 0;
    r = api.core.count(&n);
    if (r != 0) {
        gpu_note(info, "nvml: nvmlDeviceGetCount_v2: %s", errstr(&api, r));
        goto out;
    }
    if (n == 0)
        gpu_note(info, "nvml: no devices");
    for (unsigned int i = 0; i < n; i++) {
        struct nvml_dev_st *dev;
        if (api.core.handle(i, &dev) != 0)
            continue; /* e.g. a GPU we lack permission for */
        struct mp_gpu_device *g = gpu_add_device(info, (int)i);
        if (!g) {
            added = MP_ENOMEM;
            goto out;
        }
        added++;
        char name[96] = "";
        if (api.core.name(dev, name, sizeof(name)) == 0)
            gpu_copy(g->name, sizeof(g->name), name, strlen(name));
        int maj, mnr;
        if (api.cc && api.cc(dev, &maj, &mnr) == 0) {
            g->cc_major = maj;
            g->cc_minor = mnr;
        }
        gpu_set_nvidia_arch(g);
        /* v2 first, so that "used" matches what nvidia-smi reports. */
        struct nvml_memory_v2 m2;
        struct nvml_memory mem;
        memset(&m2, 0, sizeof(m2));
        m2.version = NVML_MEMORY_V2;
        if (api.memory_v2 && api.memory_v2(dev, &m2) == 0) {
            g->memory_total_mib = (long long)(m2.total >> 20);
            g->memory_used_mib = (long long)(m2.used >> 20);
        } else if (api.memory && api.memory(dev, &mem) == 0) {
            g->memory_total_mib = (long long)(mem.total >> 20);
            g->memory_used_mib = (long long)(mem.used >> 20);
        }
        gpu_copy(g->driver, sizeof(g->driver), driver, strlen(driver));
        char uuid[96] = "";
        if (api.core.uuid && api.core.uuid(dev, uuid, sizeof(uuid)) == 0)
            gpu_copy(g->uuid, sizeof(g->uuid), uuid, strlen(uuid));
        struct nvml_pci pci;
        memset(&pci, 0, sizeof(pci));
        if (api.pci && api.pci(dev, &pci) == 0)
            gpu_copy(g->pci_bus_id, sizeof(g->pci_bus_id), pci.bus_id,
                     strnlen(pci.bus_id, sizeof(pci.bus_id)));
        struct gpu_nvml_util u;
        if (api.core.util && api.core.util(dev, &u) == 0)
            g->utilization_pct = u.gpu;
        unsigned int v;
        if (api.core.temp && api.core.temp(dev, GPU_NVML_TEMPERATURE_GPU, &v) == 0)
            g->temperature_c = v;
        if (api.core.power && api.core.power(dev, &v) == 0)
            g->power_draw_w = v / 1000.0;
        if (api.power_limit && api.power_limit(dev, &v) == 0)
            g->power_limit_w = v / 1000.0;
        if (api.core.clock && api.core.clock(dev, GPU_NVML_CLOCK_SM, &v) == 0)
            g->sm_clock_mhz = v;
        if (api.core.max_clock && api.core.max_clock(dev, GPU_NVML_CLOCK_SM, &v) == 0)
            g->sm_clock_max_mhz = v;
        if (api.core.clock && api.core.clock(dev, GPU_NVML_CLOCK_MEM, &v) == 0)
            g->mem_clock_mhz = v;
    }
out:
    if (inited)
        api.core.shutdown();
    if (api.core.lib)
        dlclose(api.core.lib);
    return added;
}
