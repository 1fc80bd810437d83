/* Private to the gpu module: helpers shared by its .c files. */
#ifndef MAGPIE_GPU_INT_H
#define MAGPIE_GPU_INT_H

#include <magpie/gpu.h>

/* All fields unknown (-1 / ""), with the given index. */
void gpu_device_init(struct mp_gpu_device *g, int index);
/* Appends a device; NULL when out of memory or past MP_GPU_MAX_DEVICES. */
struct mp_gpu_device *gpu_add_device(struct mp_gpu_info *info, int index);
/* Copies n bytes of src into dst[cap], truncating, always NUL-terminated. */
void gpu_copy(char *dst, size_t cap, const char *src, size_t n);
/* Sets arch and family from cc_major/minor, or from the name when those are
 * unknown (then arch_from_name). */
void gpu_set_nvidia_arch(struct mp_gpu_device *g);
/* Adds a note on why a source gave nothing ("nvidia-smi: not found"). */
void gpu_note(struct mp_gpu_info *info, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The NVML library to dlopen: $MAGPIE_NVML_LIB (the tests' stub), else
 * libnvidia-ml.so.1. */
const char *gpu_nvml_lib(void);
/* Looks name up in the dlopen'ed lib and stores it in the function pointer
 * at fnptr (size bytes); leaves it as it is when the symbol is missing. */
void gpu_dlsym(void *lib, const char *name, void *fnptr, size_t size);

/* An nvmlDevice_t */
struct nvml_dev_st;

struct gpu_nvml_util { /* nvmlUtilization_t */
    unsigned int gpu, memory;
};

enum { GPU_NVML_CLOCK_SM = 1, GPU_NVML_CLOCK_MEM = 2, GPU_NVML_TEMPERATURE_GPU = 0 };

/* The NVML entry points that both the device probe (nvml.c) and the
 * settings (control.c) call; NULL when the library lacks one. */
struct gpu_nvml {
    void *lib; /* NULL when gpu_nvml_lib() is not loadable */
    int (*init)(void);
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*count)(unsigned int *);
    int (*handle)(unsigned int, struct nvml_dev_st **);
    int (*name)(struct nvml_dev_st *, char *, unsigned int);
    int (*clock)(struct nvml_dev_st *, int, unsigned int *);
    int (*max_clock)(struct nvml_dev_st *, int, unsigned int *);
    /* what the probe and the sampler (sampler.c) read */
    int (*uuid)(struct nvml_dev_st *, char *, unsigned int);
    int (*util)(struct nvml_dev_st *, struct gpu_nvml_util *);
    int (*temp)(struct nvml_dev_st *, int, unsigned int *);
    int (*power)(struct nvml_dev_st *, unsigned int *);
};

/* dlopens gpu_nvml_lib() into n (zeroed first) and looks its entry points
 * up; false when it is not loadable. */
bool gpu_nvml_open(struct gpu_nvml *n);

/* NVML through dlopen. Returns the number of GPUs added (> 0), 0 when NVML
 * is missing or reports none (with a note saying why), MP_ENOMEM. */
int gpu_probe_nvml(struct mp_gpu_info *info);

#endif
