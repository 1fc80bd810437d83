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

/* NVML through dlopen. Returns the number of GPUs added (> 0), 0 when NVML
 * is missing or reports none (with a note saying why), MP_ENOMEM. */
int gpu_probe_nvml(struct mp_gpu_info *info);

#endif
