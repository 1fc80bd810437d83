/* The harness's CUDA device: the driver API (libcuda.so.1) opened with
 * dlopen, so magpie builds and runs without the CUDA toolkit. Kernels come
 * as cubin or PTX files that the compile stage produced with nvcc for the
 * detected architecture; an extern "C" kernel is found by its name, a C++
 * one by its mangled symbol in the cubin (templates and overloads need an
 * extern "C" instance). Launches go on a stream of our own and are timed with CUDA
 * events recorded on that stream around the batch; L2 is flushed by the
 * caller (fill of a buffer twice the L2 size) before each sample. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_int.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *cu_obj;

enum { CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE_ = 38 };

struct cuapi {
    void *lib;
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(int *, int);
    CUresult (*DeviceGetName)(char *, int, int);
    CUresult (*DeviceGetAttribute)(int *, int, int);
    CUresult (*DevicePrimaryCtxRetain)(cu_obj *, int);
    CUresult (*CtxSetCurrent)(cu_obj);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoad)(cu_obj *, const char *);
    CUresult (*ModuleLoadData)(cu_obj *, const void *);
    CUresult (*ModuleUnload)(cu_obj);
    CUresult (*ModuleGetFunction)(cu_obj *, cu_obj, const char *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, cu_obj);
    CUresult (*LaunchKernel)(cu_obj, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, cu_obj, void **, void **);
    CUresult (*StreamCreate)(cu_obj *, unsigned);
    CUresult (*StreamSynchronize)(cu_obj);
    CUresult (*EventCreate)(cu_obj *, unsigned);
    CUresult (*EventRecord)(cu_obj, cu_obj);
    CUresult (*EventSynchronize)(cu_obj);
    CUresult (*EventElapsedTime)(float *, cu_obj, cu_obj);
    CUresult (*GetErrorString)(CUresult, const char **);
    /* graphs (optional: batches fall back to plain launches without them) */
    CUresult (*StreamBeginCapture)(cu_obj, int);
    CUresult (*StreamEndCapture)(cu_obj, cu_obj *);
    CUresult (*GraphInstantiate)(cu_obj *, cu_obj, unsigned long long);
    CUresult (*GraphLaunch)(cu_obj, cu_obj);
    CUresult (*GraphExecDestroy)(cu_obj);
    CUresult (*GraphDestroy)(cu_obj);
};

struct cuctx {
    struct cuapi api;
    int dev;
    cu_obj ctx, stream, ev0, ev1;
    cu_obj spin_mod, spin_fn, sp0, sp1; /* the power guard's spin (see cu_spin) */
};

/* A one-thread kernel that spins until `cycles` SM clock cycles (clock64)
 * have passed: its duration measures the SM clock, and it keeps the GPU busy
 * at a very low power. PTX, so the driver builds it for any GPU. */
static const char spin_ptx[] = ".version 6.0\n"
                               ".target sm_50\n"
                               ".address_size 64\n"
                               ".visible .entry magpie_spin(.param .u64 cycles)\n"
                               "{\n"
                               "  .reg .pred %p;\n"
                               "  .reg .b64 %rd<5>;\n"
                               "  ld.param.u64 %rd1, [cycles];\n"
                               "  mov.u64 %rd2, %clock64;\n"
                               "SPIN:\n"
                               "  mov.u64 %rd3, %clock64;\n"
                               "  sub.s64 %rd4, %rd3, %rd2;\n"
                               "  setp.lt.s64 %p, %rd4, %rd1;\n"
                               "  @%p bra SPIN;\n"
                               "  ret;\n"
                               "}\n";

struct hkern {
    struct cuctx *c;
    cu_obj module, fn;
    cu_obj gexec;             /* a captured batch, replayed per sample */
    int gbatch;               /* launches in it */
    const struct hval *gvals; /* the argument set it was captured with */
};

struct hbuf {
    struct cuctx *c;
    CUdeviceptr ptr;
    size_t bytes;
};

static const char *cu_err(struct cuctx *c, CUresult r)
{
    const char *s = NULL;
    if (c->api.GetErrorString && c->api.GetErrorString(r, &s) == 0 && s)
        return s;
    return "unknown CUDA error";
}

static int cu_open(struct hdev *dv, char *err, size_t len)
{
    struct cuctx *c = mp_calloc(1, sizeof(*c));
    if (!c)
        return MP_ENOMEM;
    dv->impl = c;
    struct cuapi *a = &c->api;
    a->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        snprintf(err, len, "CUDA driver not found (libcuda.so.1): no NVIDIA GPU on this machine?");
        return MP_ENOTFOUND;
    }

    struct {
        void **slot;
        const char *name;
    } syms[] = {
        {(void **)&a->Init, "cuInit"},
        {(void **)&a->DeviceGet, "cuDeviceGet"},
        {(void **)&a->DeviceGetName, "cuDeviceGetName"},
        {(void **)&a->DeviceGetAttribute, "cuDeviceGetAttribute"},
        {(void **)&a->DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
        {(void **)&a->CtxSetCurrent, "cuCtxSetCurrent"},
        {(void **)&a->CtxSynchronize, "cuCtxSynchronize"},
        {(void **)&a->ModuleLoad, "cuModuleLoad"},
        {(void **)&a->ModuleLoadData, "cuModuleLoadData"},
        {(void **)&a->ModuleUnload, "cuModuleUnload"},
        {(void **)&a->ModuleGetFunction, "cuModuleGetFunction"},
        {(void **)&a->MemAlloc, "cuMemAlloc_v2"},
        {(void **)&a->MemFree, "cuMemFree_v2"},
        {(void **)&a->MemcpyHtoD, "cuMemcpyHtoD_v2"},
        {(void **)&a->MemcpyDtoH, "cuMemcpyDtoH_v2"},
        {(void **)&a->MemsetD8Async, "cuMemsetD8Async"},
        {(void **)&a->LaunchKernel, "cuLaunchKernel"},
        {(void **)&a->StreamCreate, "cuStreamCreate"},
        {(void **)&a->StreamSynchronize, "cuStreamSynchronize"},
        {(void **)&a->EventCreate, "cuEventCreate"},
        {(void **)&a->EventRecord, "cuEventRecord"},
        {(void **)&a->EventSynchronize, "cuEventSynchronize"},
        {(void **)&a->EventElapsedTime, "cuEventElapsedTime"},
        {(void **)&a->GetErrorString, "cuGetErrorString"},
    };

    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        *syms[i].slot = dlsym(a->lib, syms[i].name);
        if (!*syms[i].slot) {
            snprintf(err, len, "libcuda lacks %s", syms[i].name);
            return MP_EUNSUP;
        }
    }

    struct {
        void **slot;
        const char *name;
    } opt[] = {
        {(void **)&a->StreamBeginCapture, "cuStreamBeginCapture_v2"},
        {(void **)&a->StreamEndCapture, "cuStreamEndCapture"},
        {(void **)&a->GraphInstantiate, "cuGraphInstantiateWithFlags"},
        {(void **)&a->GraphLaunch, "cuGraphLaunch"},
        {(void **)&a->GraphExecDestroy, "cuGraphExecDestroy"},
        {(void **)&a->GraphDestroy, "cuGraphDestroy"},
    };

    for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
        *opt[i].slot = dlsym(a->lib, opt[i].name); /* NULL: no graphs */
    CUresult r = a->Init(0);
    const char *want = getenv("MAGPIE_CUDA_DEVICE");
    if (!r)
        r = a->DeviceGet(&c->dev, want ? atoi(want) : 0);
    if (!r)
        r = a->DevicePrimaryCtxRetain(&c->ctx, c->dev);
    if (!r)
        r = a->CtxSetCurrent(c->ctx);
    if (!r)
        r = a->StreamCreate(&c->stream, 1 /* non-blocking */);
    if (!r)
        r = a->EventCreate(&c->ev0, 0);
    if (!r)
        r = a->EventCreate(&c->ev1, 0);
    if (r) {
        snprintf(err, len, "CUDA initialisation failed: %s", cu_err(c, r));
        return MP_EIO;
    }
    a->DeviceGetName(dv->device_name, (int)sizeof(dv->device_name) - 1, c->dev);
    int l2 = 0;
    if (!a->DeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE_, c->dev))
        dv->l2_bytes = (size_t)l2;
    return 0;
}

static void cu_close(struct hdev *dv)
{
    free(dv->impl); /* the primary context is released with the process */
    dv->impl = NULL;
}

/* The C++ (Itanium) name of kernel kname in a cubin: the one symbol that
 * starts with "_Z<len><kname>" followed by its parameter codes. Lets
 * kernels that are not extern "C" be found without demangling. */
static bool find_mangled(const char *path, const char *kname, char *out, size_t len)
{
    size_t blen = 0;
    char *data = kern_read_file(path, &blen);
    if (!data)
        return false;
    char prefix[300];
    snprintf(prefix, sizeof(prefix), "_Z%zu%s", strlen(kname), kname);
    size_t pl = strlen(prefix);
    bool found = false, ambiguous = false;
    for (size_t i = 0; i + pl < blen; i++) {
        if (memcmp(data + i, prefix, pl) != 0 || (i > 0 && data[i - 1] != 0))
            continue;
        size_t e = i + pl;
        while (e < blen && data[e] > 0x20 && data[e] < 0x7f)
            e++;
        if (e >= blen || data[e] != 0 || e - i >= len)
            continue;
        if (found && (strlen(out) != e - i || memcmp(out, data + i, e - i) != 0))
            ambiguous = true; /* overloads: the caller must say which */
        memcpy(out, data + i, e - i);
        out[e - i] = 0;
        found = true;
    }
    free(data);
    return found && !ambiguous;
}

static int cu_build(struct hdev *dv, const char *src, const char *kname, struct hkern **out,
                    char *log, size_t len)
{
    struct cuctx *c = dv->impl;
    *out = NULL;
    struct hkern *k = mp_calloc(1, sizeof(*k));
    if (!k)
        return MP_ENOMEM;
    k->c = c;
    CUresult r = c->api.ModuleLoad(&k->module, src);
    if (r) {
        snprintf(log, len, "cuModuleLoad(%s): %s", src, cu_err(c, r));
        free(k);
        return MP_EIO;
    }
    r = c->api.ModuleGetFunction(&k->fn, k->module, kname);
    char mangled[512];
    if (r && find_mangled(src, kname, mangled, sizeof(mangled)))
        r = c->api.ModuleGetFunction(&k->fn, k->module, mangled); /* not extern "C" */
    if (r) {
        snprintf(log, len,
                 "kernel '%s' not found in the module (%s); for a template or an overloaded "
                 "kernel, declare one instance extern \"C\" __global__",
                 kname, cu_err(c, r));
        c->api.ModuleUnload(k->module);
        free(k);
        return MP_ENOTFOUND;
    }
    *out = k;
    return 0;
}

static void cu_kfree(struct hkern *k)
{
    if (!k)
        return;
    if (k->gexec)
        k->c->api.GraphExecDestroy(k->gexec);
    k->c->api.ModuleUnload(k->module);
    free(k);
}

static int cu_alloc(struct hdev *dv, size_t bytes, struct hbuf **out)
{
    struct cuctx *c = dv->impl;
    struct hbuf *b = mp_calloc(1, sizeof(*b));
    if (!b)
        return MP_ENOMEM;
    b->c = c;
    b->bytes = bytes;
    CUresult r = c->api.MemAlloc(&b->ptr, bytes ? bytes : 1);
    if (r) {
        snprintf(dv->err, sizeof(dv->err), "cuMemAlloc(%zu): %s", bytes, cu_err(c, r));
        free(b);
        return MP_ENOMEM;
    }
    *out = b;
    return 0;
}

static void cu_bfree(struct hbuf *b)
{
    if (!b)
        return;
    b->c->api.MemFree(b->ptr);
    free(b);
}

static int cu_check(struct hdev *dv, CUresult r, const char *what)
{
    if (!r)
        return 0;
    snprintf(dv->err, sizeof(dv->err), "%s: %s", what, cu_err(dv->impl, r));
    return MP_EIO;
}

static int cu_write(struct hdev *dv, struct hbuf *b, const void *src, size_t bytes)
{
    struct cuctx *c = dv->impl;
    return cu_check(dv, c->api.MemcpyHtoD(b->ptr, src, bytes), "cuMemcpyHtoD");
}

static int cu_read(struct hdev *dv, struct hbuf *b, void *dst, size_t bytes)
{
    struct cuctx *c = dv->impl;
    CUresult r = c->api.StreamSynchronize(c->stream);
    if (!r)
        r = c->api.MemcpyDtoH(dst, b->ptr, bytes);
    return cu_check(dv, r, "cuMemcpyDtoH");
}

static int cu_fill(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes)
{
    struct cuctx *c = dv->impl;
    CUresult r = c->api.MemsetD8Async(b->ptr, byte, bytes, c->stream);
    if (!r)
        r = c->api.StreamSynchronize(c->stream);
    return cu_check(dv, r, "cuMemsetD8Async");
}

static int cu_fill_async(struct hdev *dv, struct hbuf *b, unsigned char byte, size_t bytes)
{
    struct cuctx *c = dv->impl;
    return cu_check(dv, c->api.MemsetD8Async(b->ptr, byte, bytes, c->stream), "cuMemsetD8Async");
}

static int cu_launch(struct hdev *dv, struct hkern *k, const struct hsig *sig, const struct hval *v,
                     const struct hgeom *g, int batch, double *ms)
{
    struct cuctx *c = dv->impl;
    void *params[H_MAX_ARGS];
    for (int i = 0; i < sig->nargs; i++)
        params[i] = sig->args[i].pointer ? (void *)&v[i].buf->ptr : (void *)v[i].s.bytes;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    for (int dmn = 0; dmn < g->ndim; dmn++) {
        size_t l = g->local[dmn] ? g->local[dmn] : 1;
        block[dmn] = (unsigned)l;
        grid[dmn] = (unsigned)((g->global[dmn] + l - 1) / l);
    }
    CUresult r = 0;
    /* a timed batch of a short kernel: capture it once as a CUDA graph and
     * replay that, so the host's launch cost stays out of the samples */
    struct cuapi *a = &c->api;
    bool graphs = ms && batch > 1 && a->StreamBeginCapture && a->StreamEndCapture &&
                  a->GraphInstantiate && a->GraphLaunch && a->GraphExecDestroy && a->GraphDestroy &&
                  !getenv("MAGPIE_NO_CUDA_GRAPH");
    if (graphs && k->gexec && (k->gbatch != batch || k->gvals != v)) {
        a->GraphExecDestroy(k->gexec);
        k->gexec = NULL;
    }
    if (graphs && !k->gexec) {
        cu_obj graph = NULL;
        CUresult cr = a->StreamBeginCapture(c->stream, 2 /* relaxed */);
        for (int b = 0; b < batch && !cr; b++)
            cr = a->LaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                 c->stream, params, NULL);
        CUresult er = a->StreamEndCapture(c->stream, &graph);
        if (!cr && !er && graph && !a->GraphInstantiate(&k->gexec, graph, 0)) {
            k->gbatch = batch;
            k->gvals = v;
        } else {
            k->gexec = NULL;
        }
        if (graph)
            a->GraphDestroy(graph);
    }
    dv->used_graph = graphs && k->gexec;
    if (dv->used_graph) {
        r = a->EventRecord(c->ev0, c->stream);
        if (!r)
            r = a->GraphLaunch(k->gexec, c->stream);
        if (!r)
            r = a->EventRecord(c->ev1, c->stream);
        if (!r)
            r = a->StreamSynchronize(c->stream);
        if (r)
            return cu_check(dv, r, "CUDA graph launch");
        float f = 0;
        r = a->EventElapsedTime(&f, c->ev0, c->ev1);
        *ms = f;
        return cu_check(dv, r, "cuEventElapsedTime");
    }
    if (ms)
        r = c->api.EventRecord(c->ev0, c->stream);
    for (int b = 0; b < batch && !r; b++)
        r = c->api.LaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                c->stream, params, NULL);
    if (!r && ms)
        r = c->api.EventRecord(c->ev1, c->stream);
    if (!r)
        r = c->api.StreamSynchronize(c->stream);
    if (r)
        return cu_check(dv, r, "kernel launch");
    if (ms) {
        float f = 0;
        r = c->api.EventElapsedTime(&f, c->ev0, c->ev1);
        *ms = f;
    }
    return cu_check(dv, r, "cuEventElapsedTime");
}

/* Queues a spin of `cycles` SM cycles on the stream, between two events
 * when timed (cu_spin_ms reads them). The module is built on first use. */
static int cu_spin(struct hdev *dv, uint64_t cycles, bool timed)
{
    struct cuctx *c = dv->impl;
    struct cuapi *a = &c->api;
    CUresult r = 0;
    if (!c->spin_fn) {
        r = a->ModuleLoadData(&c->spin_mod, spin_ptx);
        if (!r)
            r = a->ModuleGetFunction(&c->spin_fn, c->spin_mod, "magpie_spin");
        if (!r)
            r = a->EventCreate(&c->sp0, 0);
        if (!r)
            r = a->EventCreate(&c->sp1, 0);
        if (r) {
            c->spin_fn = NULL;
            return cu_check(dv, r, "loading the spin kernel");
        }
    }
    unsigned long long cyc = cycles;
    void *params[] = {&cyc};
    if (timed)
        r = a->EventRecord(c->sp0, c->stream);
    if (!r)
        r = a->LaunchKernel(c->spin_fn, 1, 1, 1, 1, 1, 1, 0, c->stream, params, NULL);
    if (!r && timed)
        r = a->EventRecord(c->sp1, c->stream);
    return cu_check(dv, r, "spin launch");
}

/* The device time of the last timed spin; waits for it. */
static int cu_spin_ms(struct hdev *dv, double *ms)
{
    struct cuctx *c = dv->impl;
    float f = 0;
    CUresult r = c->api.EventSynchronize(c->sp1);
    if (!r)
        r = c->api.EventElapsedTime(&f, c->sp0, c->sp1);
    *ms = f;
    return cu_check(dv, r, "spin time");
}

const struct hdev_ops kern_harness_cuda_ops = {
    .name = "cuda",
    .open = cu_open,
    .close = cu_close,
    .build = cu_build,
    .kfree = cu_kfree,
    .alloc = cu_alloc,
    .bfree = cu_bfree,
    .write = cu_write,
    .read = cu_read,
    .fill = cu_fill,
    .fill_async = cu_fill_async,
    .launch = cu_launch,
    .spin = cu_spin,
    .spin_ms = cu_spin_ms,
};
