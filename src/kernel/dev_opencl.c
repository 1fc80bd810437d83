/* The harness's OpenCL device: the ICD loader (libOpenCL.so.1) opened with
 * dlopen, so magpie builds without OpenCL headers and runs without an ICD
 * until an OpenCL kernel is evaluated. The few entry points and constants
 * used are declared here from the OpenCL 1.2 specification. Kernels are
 * timed with the queue's profiling events (CL_PROFILING_COMMAND_START of
 * the first launch of a batch to _END of the last). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_int.h"

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *cl_obj; /* platform, device, context, queue, program, kernel, mem, event */

enum {
    CL_SUCCESS_ = 0,
    CL_DEVICE_GLOBAL_MEM_CACHE_SIZE_ = 0x101E,
    CL_DEVICE_NAME_ = 0x102B,
    CL_PROGRAM_BUILD_LOG_ = 0x1183,
    CL_PROFILING_COMMAND_START_ = 0x1282,
    CL_PROFILING_COMMAND_END_ = 0x1283,
};

#define CL_DEVICE_TYPE_ALL_ 0xFFFFFFFFULL
#define CL_QUEUE_PROFILING_ENABLE_ 2ULL
#define CL_MEM_READ_WRITE_ 1ULL

struct clapi {
    void *lib;
    cl_int (*GetPlatformIDs)(cl_uint, cl_obj *, cl_uint *);
    cl_int (*GetDeviceIDs)(cl_obj, cl_ulong, cl_uint, cl_obj *, cl_uint *);
    cl_int (*GetDeviceInfo)(cl_obj, cl_uint, size_t, void *, size_t *);
    cl_obj (*CreateContext)(const intptr_t *, cl_uint, const cl_obj *, void *, void *, cl_int *);
    cl_obj (*CreateCommandQueue)(cl_obj, cl_obj, cl_ulong, cl_int *);
    cl_obj (*CreateProgramWithSource)(cl_obj, cl_uint, const char **, const size_t *, cl_int *);
    cl_int (*BuildProgram)(cl_obj, cl_uint, const cl_obj *, const char *, void *, void *);
    cl_int (*GetProgramBuildInfo)(cl_obj, cl_obj, cl_uint, size_t, void *, size_t *);
    cl_obj (*CreateKernel)(cl_obj, const char *, cl_int *);
    cl_int (*SetKernelArg)(cl_obj, cl_uint, size_t, const void *);
    cl_obj (*CreateBuffer)(cl_obj, cl_ulong, size_t, void *, cl_int *);
    cl_int (*EnqueueWriteBuffer)(cl_obj, cl_obj, cl_uint, size_t, size_t, const void *, cl_uint,
                                 const cl_obj *, cl_obj *);
    cl_int (*EnqueueReadBuffer)(cl_obj, cl_obj, cl_uint, size_t, size_t, void *, cl_uint,
                                const cl_obj *, cl_obj *);
    cl_int (*EnqueueFillBuffer)(cl_obj, cl_obj, const void *, size_t, size_t, size_t, cl_uint,
                                const cl_obj *, cl_obj *);
    cl_int (*EnqueueNDRangeKernel)(cl_obj, cl_obj, cl_uint, const size_t *, const size_t *,
                                   const size_t *, cl_uint, const cl_obj *, cl_obj *);
    cl_int (*Finish)(cl_obj);
    cl_int (*WaitForEvents)(cl_uint, const cl_obj *);
    cl_int (*GetEventProfilingInfo)(cl_obj, cl_uint, size_t, void *, size_t *);
    cl_int (*ReleaseEvent)(cl_obj);
    cl_int (*ReleaseMemObject)(cl_obj);
    cl_int (*ReleaseKernel)(cl_obj);
    cl_int (*ReleaseProgram)(cl_obj);
    cl_int (*ReleaseCommandQueue)(cl_obj);
    cl_int (*ReleaseContext)(cl_obj);
};

struct clctx {
    struct clapi api;
    cl_obj device, context, queue;
};

struct hkern {
    struct clctx *c;
    cl_obj program, kernel;
};

struct hbuf {
    struct clctx *c;
    cl_obj mem;
    size_t bytes;
};

static int load_api(struct clapi *a, char *err, size_t len)
{
    a->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->lib)
        a->lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        snprintf(err, len,
                 "OpenCL ICD loader not found (libOpenCL.so.1); install ocl-icd-libopencl1 and a "
                 "driver such as pocl-opencl-icd");
        return MP_ENOTFOUND;
    }

    struct {
        void **slot;
        const char *name;
    } syms[] = {

#define S(f) {(void **)&a->f, "cl" #f}
        S(GetPlatformIDs),       S(GetDeviceIDs),
        S(GetDeviceInfo),        S(CreateContext),
        S(CreateCommandQueue),   S(CreateProgramWithSource),
        S(BuildProgram),         S(GetProgramBuildInfo),
        S(CreateKernel),         S(SetKernelArg),
        S(CreateBuffer),         S(EnqueueWriteBuffer),
        S(EnqueueReadBuffer),    S(EnqueueFillBuffer),
        S(EnqueueNDRangeKernel), S(Finish),
        S(WaitForEvents),        S(GetEventProfilingInfo),
        S(ReleaseEvent),         S(ReleaseMemObject),
        S(ReleaseKernel),        S(ReleaseProgram),
        S(ReleaseCommandQueue),  S(ReleaseContext),
#undef S
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        *syms[i].slot = dlsym(a->lib, syms[i].name);
        if (!*syms[i].slot) {
            snprintf(err, len, "libOpenCL lacks %s", syms[i].name);
            return MP_EUNSUP;
        }
    }
    return 0;
}

static int ocl_open(struct hdev *dv, char *err, size_t len)
{
    struct clctx *c = mp_calloc(1, sizeof(*c));
    if (!c)
        return MP_ENOMEM;
    dv->impl = c;
    int rc = load_api(&c->api, err, len);
    if (rc)
        return rc;
    cl_obj plats[16];
    cl_uint np = 0;
    if (c->api.GetPlatformIDs(16, plats, &np) != CL_SUCCESS_ || np == 0) {
        snprintf(err, len, "no OpenCL platform (is an ICD such as pocl-opencl-icd installed?)");
        return MP_ENOTFOUND;
    }
    const char *want = getenv("MAGPIE_OPENCL_PLATFORM");
    cl_uint pi = want ? (cl_uint)atoi(want) : 0;
    bool found = false;
    for (cl_uint p = pi; p < np && !found; p++) {
        cl_uint nd = 0;
        found =
            c->api.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL_, 1, &c->device, &nd) == CL_SUCCESS_ &&
            nd > 0;
    }
    if (!found) {
        snprintf(err, len, "no OpenCL device");
        return MP_ENOTFOUND;
    }
    c->api.GetDeviceInfo(c->device, CL_DEVICE_NAME_, sizeof(dv->device_name) - 1, dv->device_name,
                         NULL);
    cl_ulong cache = 0;
    if (c->api.GetDeviceInfo(c->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE_, sizeof(cache), &cache,
                             NULL) == CL_SUCCESS_)
        dv->l2_bytes = (size_t)cache;
    cl_int e = 0;
    c->context = c->api.CreateContext(NULL, 1, &c->device, NULL, NULL, &e);
    if (!c->context || e != CL_SUCCESS_) {
        snprintf(err, len, "clCreateContext failed (%d)", (int)e);
        return MP_EIO;
    }
    c->queue = c->api.CreateCommandQueue(c->context, c->device, CL_QUEUE_PROFILING_ENABLE_, &e);
    if (!c->queue || e != CL_SUCCESS_) {
        snprintf(err, len, "clCreateCommandQueue failed (%d)", (int)e);
        return MP_EIO;
    }
    return 0;
}

static void ocl_close(struct hdev *dv)
{
    struct clctx *c = dv->impl;
    if (!c)
        return;
    if (c->queue)
        c->api.ReleaseCommandQueue(c->queue);
    if (c->context)
        c->api.ReleaseContext(c->context);
    /* the ICD stays loaded: PoCL's threads may still be winding down */
    free(c);
    dv->impl = NULL;
}

static int ocl_build(struct hdev *dv, const char *src, const char *kname, struct hkern **out,
                     char *log, size_t len)
{
    struct clctx *c = dv->impl;
    *out = NULL;
    struct hkern *k = mp_calloc(1, sizeof(*k));
    if (!k)
        return MP_ENOMEM;
    k->c = c;
    cl_int e = 0;
    size_t sl = strlen(src);
    k->program = c->api.CreateProgramWithSource(c->context, 1, &src, &sl, &e);
    if (!k->program || e != CL_SUCCESS_) {
        snprintf(log, len, "clCreateProgramWithSource failed (%d)", (int)e);
        free(k);
        return MP_EIO;
    }
    const char *opts = getenv("MAGPIE_OPENCL_BUILD_OPTIONS");
    e = c->api.BuildProgram(k->program, 1, &c->device, opts ? opts : "", NULL, NULL);
    log[0] = 0;
    size_t got = 0;
    c->api.GetProgramBuildInfo(k->program, c->device, CL_PROGRAM_BUILD_LOG_, len - 1, log, &got);
    log[got < len ? got : len - 1] = 0;
    if (e != CL_SUCCESS_) {
        if (!log[0] || strspn(log, " \n\r\t") == strlen(log))
            snprintf(log, len, "clBuildProgram failed (%d)", (int)e);
        c->api.ReleaseProgram(k->program);
        free(k);
        return MP_EPARSE;
    }
    k->kernel = c->api.CreateKernel(k->program, kname, &e);
    if (!k->kernel || e != CL_SUCCESS_) {
        snprintf(log, len, "clCreateKernel(%s) failed (%d)", kname, (int)e);
        c->api.ReleaseProgram(k->program);
        free(k);
        return MP_ENOTFOUND;
    }
    *out = k;
    return 0;
}

static void ocl_kfree(struct hkern *k)
{
    if (!k)
        return;
    k->c->api.ReleaseKernel(k->kernel);
    k->c->api.ReleaseProgram(k->program);
    free(k);
}

static int ocl_alloc(struct hdev *dv, size_t bytes, struct hbuf **out)
{
    struct clctx *c = dv->impl;
    struct hbuf *b = mp_calloc(1, sizeof(*b));
    if (!b)
        return MP_ENOMEM;
    cl_int e = 0;
    b->c = c;
    b->bytes = bytes;
    b->mem = c->api.CreateBuffer(c->context, CL_MEM_READ_WRITE_, bytes ? bytes : 1, NULL, &e);
    if (!b->mem || e != CL_SUCCESS_) {
        snprintf(dv->err, sizeof(dv->err), "clCreateBuffer(%zu bytes) failed (%d)", bytes, (int)e);
        free(b);
        return MP_ENOMEM;
    }
    *out = b;
    return 0;
}

static void ocl_bfree(struct hbuf *b)
{
    if (!b)
        return;
    b->c->api.ReleaseMemObject(b->mem);
    free(b);
}

static int ocl_write(struct hdev *dv, struct hbuf *b, const void *src, size_t bytes)
{
    struct clctx *c = dv->impl;
    cl_int e = c->api.EnqueueWriteBuffer(c->queue, b->mem, 1, 0, bytes, src, 0, NULL, NULL);
    if (e != CL_SUCCESS_)
        snprintf(dv->err, sizeof(dv->err), "clEnqueueWriteBuffer failed (%d)", (int)e);
    return e == CL_SUCCESS_ ? 0 : MP_EIO;
}

static int ocl_read(struct hdev *dv, struct hbuf *b, void *dst, size_t bytes)
{
    struct clctx *c = dv->impl;
    cl_int e = c->api.EnqueueReadBuffer(c->queue, b->mem, 1, 0, bytes, dst, 0, NULL, NULL);
    if (e != CL_SUCCESS_)
        snprintf(dv->err, sizeof(dv->err), "clEnqueueReadBuffer failed (%d)", (int)e);
    return e == CL_SUCCESS_ ? 0 : MP_EIO;
}

/* Queues a fill of b's first bytes with byte. PoCL's CPU device copies the
 * pattern once per pattern-sized element, so a 1-byte pattern over the 64 MiB
 * L2 flush (twice the 32 MiB LLC it reports) cost ~100 ms a sample; the bulk
 * is filled with the widest pattern OpenCL 1.2 allows (128 bytes) and only
 * the tail, shorter than that, byte by byte. */
static int ocl_fill_enqueue(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes)
{
    struct clctx *c = dv->impl;
    unsigned char pat[128];
    memset(pat, byte, sizeof(pat));
    size_t bulk = bytes - bytes % sizeof(pat);
    cl_int e = CL_SUCCESS_;
    if (bulk)
        e = c->api.EnqueueFillBuffer(c->queue, b->mem, pat, sizeof(pat), 0, bulk, 0, NULL, NULL);
    if (e == CL_SUCCESS_ && bytes > bulk)
        e = c->api.EnqueueFillBuffer(c->queue, b->mem, pat, 1, bulk, bytes - bulk, 0, NULL, NULL);
    if (e != CL_SUCCESS_)
        snprintf(dv->err, sizeof(dv->err), "clEnqueueFillBuffer failed (%d)", (int)e);
    return e == CL_SUCCESS_ ? 0 : MP_EIO;
}

static int ocl_fill(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes)
{
    struct clctx *c = dv->impl;
    int rc = ocl_fill_enqueue(dv, b, byte, bytes);
    if (rc)
        return rc;
    cl_int e = c->api.Finish(c->queue);
    if (e != CL_SUCCESS_)
        snprintf(dv->err, sizeof(dv->err), "clFinish after a fill failed (%d)", (int)e);
    return e == CL_SUCCESS_ ? 0 : MP_EIO;
}

/* The queue is in order, so a kernel queued after the fill starts after it
 * and its profiling start excludes the fill. */
static int ocl_fill_async(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes)
{
    return ocl_fill_enqueue(dv, b, byte, bytes);
}

static int ocl_launch(struct hdev *dv, struct hkern *k, const struct hsig *sig,
                      const struct hval *v, const struct hgeom *g, int batch, double *ms)
{
    struct clctx *c = dv->impl;
    for (int i = 0; i < sig->nargs; i++) {
        cl_int e = sig->args[i].pointer
                       ? c->api.SetKernelArg(k->kernel, (cl_uint)i, sizeof(cl_obj), &v[i].buf->mem)
                       : c->api.SetKernelArg(k->kernel, (cl_uint)i, v[i].ssize, v[i].s.bytes);
        if (e != CL_SUCCESS_) {
            snprintf(dv->err, sizeof(dv->err), "clSetKernelArg(%d: %s) failed (%d)", i,
                     sig->args[i].name, (int)e);
            return MP_EINVAL;
        }
    }
    cl_obj first = NULL, last = NULL;
    cl_int e = CL_SUCCESS_;
    for (int b = 0; b < batch && e == CL_SUCCESS_; b++) {
        cl_obj ev = NULL;
        e = c->api.EnqueueNDRangeKernel(c->queue, k->kernel, (cl_uint)g->ndim, NULL, g->global,
                                        g->local[0] ? g->local : NULL, 0, NULL, ms ? &ev : NULL);
        if (ev) {
            if (!first) {
                first = ev;
            } else {
                if (last)
                    c->api.ReleaseEvent(last);
                last = ev;
            }
        }
    }
    if (e != CL_SUCCESS_)
        snprintf(dv->err, sizeof(dv->err), "clEnqueueNDRangeKernel failed (%d)", (int)e);
    cl_int fe = c->api.Finish(c->queue);
    if (e == CL_SUCCESS_ && fe != CL_SUCCESS_) {
        e = fe;
        snprintf(dv->err, sizeof(dv->err), "kernel execution failed (%d)", (int)e);
    }
    if (e == CL_SUCCESS_ && ms && first) {
        cl_ulong t0 = 0, t1 = 0;
        c->api.GetEventProfilingInfo(first, CL_PROFILING_COMMAND_START_, sizeof(t0), &t0, NULL);
        c->api.GetEventProfilingInfo(last ? last : first, CL_PROFILING_COMMAND_END_, sizeof(t1),
                                     &t1, NULL);
        *ms = t1 > t0 ? (double)(t1 - t0) / 1e6 : 0;
    }
    if (first)
        c->api.ReleaseEvent(first);
    if (last)
        c->api.ReleaseEvent(last);
    return e == CL_SUCCESS_ ? 0 : MP_EIO;
}

const struct hdev_ops kern_harness_opencl_ops = {
    .name = "opencl",
    .open = ocl_open,
    .close = ocl_close,
    .build = ocl_build,
    .kfree = ocl_kfree,
    .alloc = ocl_alloc,
    .bfree = ocl_bfree,
    .write = ocl_write,
    .read = ocl_read,
    .fill = ocl_fill,
    .fill_async = ocl_fill_async,
    .launch = ocl_launch,
};
