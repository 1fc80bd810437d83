/* A stand-in for the NVIDIA driver library (libcuda.so.1) on a machine
 * without one, for SGLang's CPU runs in `make check-engines`: sglang-kernel
 * links libcuda.so.1 and sglang imports it unconditionally. Every entry
 * point here answers "no CUDA device" (CUDA_ERROR_NO_DEVICE, 100), so
 * whatever asks the driver (the CUDA runtime inside torch included) sees a
 * machine without a GPU. Only a few entry points exist: a library that
 * needs another one fails to load with the missing symbol's name, which is
 * the signal to add it. Built by install_sglang.sh; never part of magpie.
 */
#include <stddef.h>

#define NO_DEVICE 100

int cuInit(unsigned flags);
int cuDriverGetVersion(int *v);
int cuDeviceGetCount(int *n);
int cuDeviceGet(int *dev, int ordinal);
int cuGetProcAddress(const char *sym, void **fn, int ver, unsigned long long flags);
int cuGetProcAddress_v2(const char *sym, void **fn, int ver, unsigned long long flags, int *st);
int cuGetErrorString(int err, const char **s);
int cuGetErrorName(int err, const char **s);
int cuPointerGetAttribute(void *data, int attr, unsigned long long ptr);
int cuGetExportTable(const void **table, const void *id);

int cuInit(unsigned flags)
{
    (void)flags;
    return NO_DEVICE;
}

int cuDriverGetVersion(int *v)
{
    if (v)
        *v = 0;
    return NO_DEVICE;
}

int cuDeviceGetCount(int *n)
{
    if (n)
        *n = 0;
    return NO_DEVICE;
}

int cuDeviceGet(int *dev, int ordinal)
{
    (void)dev;
    (void)ordinal;
    return NO_DEVICE;
}

int cuGetProcAddress(const char *sym, void **fn, int ver, unsigned long long flags)
{
    (void)sym;
    (void)ver;
    (void)flags;
    if (fn)
        *fn = NULL;
    return NO_DEVICE;
}

int cuGetProcAddress_v2(const char *sym, void **fn, int ver, unsigned long long flags, int *st)
{
    (void)sym;
    (void)ver;
    (void)flags;
    if (fn)
        *fn = NULL;
    if (st)
        *st = 0;
    return NO_DEVICE;
}

int cuGetErrorString(int err, const char **s)
{
    (void)err;
    if (s)
        *s = "no CUDA device (stub libcuda)";
    return 0;
}

int cuGetErrorName(int err, const char **s)
{
    (void)err;
    if (s)
        *s = "CUDA_ERROR_NO_DEVICE";
    return 0;
}

int cuPointerGetAttribute(void *data, int attr, unsigned long long ptr)
{
    (void)data;
    (void)attr;
    (void)ptr;
    return NO_DEVICE;
}

int cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table)
        *table = NULL;
    return NO_DEVICE;
}
