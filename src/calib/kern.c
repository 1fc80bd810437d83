/* magpie's own calibration kernels, compiled at run time by NVRTC for the
 * device's architecture: the seeded fill the GEMMs' inputs come from, the
 * FMA chains of the vector figures, HBM read / write / copy, L2 read, and
 * the empty kernel of the launch overhead. The source uses no header (NVRTC
 * finds none without a toolkit): the 16-bit and 8-bit types are made from
 * bits, the packed half-precision FMAs are PTX. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

static const char kern_head[] =
    "typedef unsigned int u32;\n"
    "typedef unsigned long long u64;\n"
    "struct alignas(16) v4 { u32 x, y, z, w; };\n"
    "__device__ u32 mix(u64 x) {\n"
    "  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;\n"
    "  x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33; return (u32)x;\n"
    "}\n"
    /* uniform in [-1, 1) per element; fp8 and int8 as bit patterns of
     * moderate magnitude (no NaN, no overflow of the sums) */
    "extern \"C\" __global__ void mp_fill(unsigned char *p, u64 n, int type, u32 seed) {\n"
    "  u64 stride = (u64)gridDim.x * blockDim.x;\n"
    "  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n"
    "    u32 h = mix(i * 0x9E3779B97F4A7C15ULL + seed);\n"
    "    float f = (float)(h >> 8) * (1.0f / 8388608.0f) - 1.0f;\n"
    "    switch (type) {\n"
    "    case 0: ((double *)p)[i] = (double)f; break;\n"
    "    case 1: ((float *)p)[i] = f; break;\n"
    "    case 2: { unsigned short b; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(b) : \"f\"(f));\n"
    "              ((unsigned short *)p)[i] = b; } break;\n"
    "    case 3: ((unsigned short *)p)[i] = (unsigned short)(__float_as_uint(f) >> 16); "
    "break;\n"
    "    case 4: p[i] = (unsigned char)(((h & 1u) << 7) | ((4u + (h >> 1) % 7u) << 3) | "
    "((h >> 8) & 7u)); break;\n"
    "    case 5: p[i] = (unsigned char)(((h & 1u) << 7) | ((12u + (h >> 1) % 7u) << 2) | "
    "((h >> 8) & 3u)); break;\n"
    "    default: p[i] = (unsigned char)(signed char)((int)(h & 127u) - 64); break;\n"
    "    }\n"
    "  }\n"
    "}\n"
    /* eight independent FMA chains per thread; the sum is stored only when
     * it takes an impossible value, so nothing is dead code */
    "#define CHAINS(T, OP) \\\n"
    "  T x0 = s + 1, x1 = s + 2, x2 = s + 3, x3 = s + 4, x4 = s + 5, x5 = s + 6, \\\n"
    "    x6 = s + 7, x7 = s + 8; \\\n"
    "  for (int i = 0; i < iters; i++) { \\\n"
    "    _Pragma(\"unroll\") for (int j = 0; j < 16; j++) { \\\n"
    "      OP(x0); OP(x1); OP(x2); OP(x3); OP(x4); OP(x5); OP(x6); OP(x7); } }\n"
    "#define FMA32(x) x = fmaf(x, a, b)\n"
    "#define FMA64(x) x = fma(x, (double)a, (double)b)\n"
    "extern \"C\" __global__ void mp_fma_f32(float *out, int iters, float a, float b) {\n"
    "  float s = (float)threadIdx.x * 1e-3f;\n"
    "  CHAINS(float, FMA32)\n"
    "  float t = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"
    "  if (t == -1.25f) out[blockIdx.x] = t;\n"
    "}\n"
    "extern \"C\" __global__ void mp_fma_f64(double *out, int iters, float a, float b) {\n"
    "  double s = (double)threadIdx.x * 1e-3;\n"
    "  CHAINS(double, FMA64)\n"
    "  double t = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"
    "  if (t == -1.25) out[blockIdx.x] = t;\n"
    "}\n"
    /* packed pairs: 2 FMAs (4 FLOP) per instruction */
    "#define FMA_H2(x) asm(\"fma.rn.f16x2 %0, %0, %1, %2;\" : \"+r\"(x) : \"r\"(a2), "
    "\"r\"(b2))\n"
    "#define FMA_B2(x) asm(\"fma.rn.bf16x2 %0, %0, %1, %2;\" : \"+r\"(x) : \"r\"(a2), "
    "\"r\"(b2))\n"
    "extern \"C\" __global__ void mp_fma_f16(u32 *out, int iters, u32 a2, u32 b2) {\n"
    "  u32 s = 0x3c003c00u ^ threadIdx.x;\n"
    "  CHAINS(u32, FMA_H2)\n"
    "  u32 t = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;\n"
    "  if (t == 0x7fff7fffu) out[blockIdx.x] = t;\n"
    "}\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "extern \"C\" __global__ void mp_fma_bf16(u32 *out, int iters, u32 a2, u32 b2) {\n"
    "  u32 s = 0x3f803f80u ^ threadIdx.x;\n"
    "  CHAINS(u32, FMA_B2)\n"
    "  u32 t = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;\n"
    "  if (t == 0x7fff7fffu) out[blockIdx.x] = t;\n"
    "}\n"
    "#endif\n"
    "";

static const char kern_tail[] =
    /* streaming: four 16-byte accesses in flight per thread per step */
    "extern \"C\" __global__ void mp_read(const v4 *__restrict__ p, u64 n, int reps, v4 *sink) "
    "{\n"
    "  u64 stride = (u64)gridDim.x * blockDim.x, t = (u64)blockIdx.x * blockDim.x + "
    "threadIdx.x;\n"
    "  u32 acc = 0;\n"
    "  for (int r = 0; r < reps; r++) {\n"
    "    u64 i = t;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "      v4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];\n"
    "      acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^\n"
    "             d.x ^ d.y ^ d.z ^ d.w;\n"
    "    }\n"
    "    for (; i < n; i += stride) { v4 a = p[i]; acc ^= a.x ^ a.y ^ a.z ^ a.w; }\n"
    "  }\n"
    "  if (acc == 0x9e3779b9u) { v4 o = {acc, acc, acc, acc}; sink[t & 255] = o; }\n"
    "}\n"
    "extern \"C\" __global__ void mp_write(v4 *__restrict__ p, u64 n, u32 v) {\n"
    "  u64 stride = (u64)gridDim.x * blockDim.x;\n"
    "  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n"
    "    v4 o = {v, (u32)i, v, (u32)(i >> 32)}; p[i] = o;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void mp_copy(const v4 *__restrict__ s, v4 *__restrict__ d, u64 n) "
    "{\n"
    "  u64 stride = (u64)gridDim.x * blockDim.x, i = (u64)blockIdx.x * blockDim.x + "
    "threadIdx.x;\n"
    "  for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "    v4 a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];\n"
    "    d[i] = a; d[i + stride] = b; d[i + 2 * stride] = c; d[i + 3 * stride] = e;\n"
    "  }\n"
    "  for (; i < n; i += stride) d[i] = s[i];\n"
    "}\n"
    "extern \"C\" __global__ void mp_nop(void) {}\n";

/* the two halves as one text (ISO C bounds a string literal's length) */
static char kern_src[sizeof(kern_head) + sizeof(kern_tail)];

const char *cal_kern_source(void)
{
    if (!kern_src[0]) {
        memcpy(kern_src, kern_head, sizeof(kern_head) - 1);
        memcpy(kern_src + sizeof(kern_head) - 1, kern_tail, sizeof(kern_tail));
    }
    return kern_src;
}

int cal_kern_compile(const struct cal_nvrtc *rtc, int major, int minor, bool cubin, char **image,
                     size_t *len, char *err, size_t errlen)
{
    void *prog = NULL;
    *image = NULL;
    int r = rtc->CreateProgram(&prog, cal_kern_source(), "magpie_calib.cu", 0, NULL, NULL);
    if (r) {
        snprintf(err, errlen, "NVRTC: %s", rtc->GetErrorString(r));
        return MP_EIO;
    }
    char arch[48];
    snprintf(arch, sizeof(arch), "--gpu-architecture=%s_%d%d", cubin ? "sm" : "compute", major,
             minor);
    const char *opts[] = {arch, "--std=c++17"};
    r = rtc->CompileProgram(prog, 2, opts);
    if (r) {
        size_t ln = 0;
        char log[512] = "";
        if (!rtc->GetProgramLogSize(prog, &ln) && ln > 0) {
            char *full = malloc(ln + 1);
            if (full && !rtc->GetProgramLog(prog, full)) {
                full[ln] = '\0';
                snprintf(log, sizeof(log), "%s", full);
            }
            free(full);
        }
        snprintf(err, errlen, "NVRTC (%s): %s %s", arch, rtc->GetErrorString(r), log);
        rtc->DestroyProgram(&prog);
        return MP_EIO;
    }
    size_t n = 0;
    r = cubin ? rtc->GetCUBINSize(prog, &n) : rtc->GetPTXSize(prog, &n);
    char *img = r ? NULL : malloc(n + 1);
    if (img)
        r = cubin ? rtc->GetCUBIN(prog, img) : rtc->GetPTX(prog, img);
    rtc->DestroyProgram(&prog);
    if (!img || r) {
        free(img);
        snprintf(err, errlen, "NVRTC: no %s produced", cubin ? "cubin" : "PTX");
        return MP_EIO;
    }
    img[n] = '\0';
    *image = img;
    *len = n;
    return 0;
}

bool cal_kern_build(struct cal_dev *dv, char *err, size_t errlen)
{
    if (!dv->rtc.lib) {
        snprintf(err, errlen, "%s", dv->rtc_err);
        return false;
    }
    char *img = NULL;
    size_t n = 0;
    /* machine code for this GPU; PTX for the driver to finish when this
     * NVRTC does not know the architecture yet */
    int rc = cal_kern_compile(&dv->rtc, dv->cc_major, dv->cc_minor, true, &img, &n, err, errlen);
    if (rc)
        rc = cal_kern_compile(&dv->rtc, dv->cc_major, dv->cc_minor, false, &img, &n, err, errlen);
    if (rc)
        return false;
    cal_res r = dv->cu.ModuleLoadData(&dv->mod, img);
    free(img);
    if (r) {
        snprintf(err, errlen, "loading the calibration kernels: %s", cal_err(dv, r));
        dv->mod = NULL;
        return false;
    }
    return true;
}

static cal_obj fn_of(struct cal_dev *dv, const char *name)
{
    cal_obj f = NULL;
    if (!dv->mod || dv->cu.ModuleGetFunction(&f, dv->mod, name) != 0)
        return NULL;
    return f;
}

static int blocks_for(const struct cal_dev *dv, int per_sm)
{
    return (dv->sms > 0 ? dv->sms : 1) * per_sm;
}

cal_res cal_fill(struct cal_dev *dv, cal_dptr p, size_t n, const char *type, unsigned seed)
{
    static const char *const types[] = {"f64", "f32", "f16", "bf16", "e4m3", "e5m2", "i8"};
    int t = 6;
    for (int i = 0; i < 7; i++)
        if (!strcmp(type, types[i]))
            t = i;
    cal_obj f = fn_of(dv, "mp_fill");
    if (!f)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    unsigned long long nn = n;
    void *args[] = {&p, &nn, &t, &seed};
    return dv->cu.LaunchKernel(f, (unsigned)blocks_for(dv, 4), 1, 1, 256, 1, 1, 0, dv->stream, args,
                               NULL);
}

struct launch {
    cal_obj fn;
    unsigned grid, block;
    void **args;
};

static cal_res do_launch(struct cal_dev *dv, void *arg)
{
    const struct launch *l = arg;
    return dv->cu.LaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, 0, dv->stream, l->args, NULL);
}

static void unsupported(struct mp_calib_item *it, enum mp_calib_status st, const char *fmt,
                        const char *what)
{
    it->status = st;
    snprintf(it->note, sizeof(it->note), fmt, what);
}

/* Times one launch description; per-launch ms -> value in the item's unit
 * through scale (units per launch / ms). */
static void time_launch(struct cal_dev *dv, struct launch *l, double per_launch, double to_unit,
                        const struct mp_calib_opts *o, struct mp_calib_item *it)
{
    int reps = o->repeats > 0 ? o->repeats : o->quick ? 3 : 5;
    double ms[64];
    char err[200];
    if (reps > 64)
        reps = 64;
    if (cal_time(dv, do_launch, l, 10, reps, ms, err, sizeof(err)) != 0) {
        unsupported(it, MP_CALIB_FAILED, "%s", err);
        return;
    }
    for (int i = 0; i < reps; i++)
        ms[i] = per_launch / (ms[i] * 1e-3) / to_unit;
    cal_summarise(ms, reps, it);
    it->bytes = per_launch;
    it->status = MP_CALIB_OK;
    cal_conditions(dv, it);
}

void cal_vector(struct cal_dev *dv, const char *dtype, const struct mp_calib_opts *o,
                struct mp_calib_item *it)
{
    snprintf(it->key, sizeof(it->key), "vector_%s", dtype);
    it->kind = MP_CALIB_VECTOR;
    it->unit = "TFLOP/s";
    char name[32];
    snprintf(name, sizeof(name), "mp_fma_%s", dtype);
    cal_obj f = fn_of(dv, name);
    if (!f) {
        unsupported(it, dv->mod ? MP_CALIB_UNSUPPORTED : MP_CALIB_FAILED,
                    dv->mod ? "no packed %s FMA before sm_80" : "%s: calibration kernels missing",
                    dtype);
        return;
    }
    cal_dptr out = cal_alloc(dv, 1 << 20);
    int iters = strcmp(dtype, "f64") == 0 ? 64 : 256;
    /* a2/b2: 0.999 and 0.001 as packed f16 or bf16; the f32/f64 kernels read
     * them as floats */
    bool packed = !strcmp(dtype, "f16") || !strcmp(dtype, "bf16");
    unsigned a2 = !strcmp(dtype, "f16") ? 0x3bfe3bfeu : 0x3f7f3f7fu;
    unsigned b2 = !strcmp(dtype, "f16") ? 0x14191419u : 0x3a833a83u;
    float a = 0.999f, b = 0.001f;
    void *args[] = {&out, &iters, packed ? (void *)&a2 : (void *)&a,
                    packed ? (void *)&b2 : (void *)&b};
    struct launch l = {f, (unsigned)blocks_for(dv, 8), 256, args};
    double flop_per_thread = (double)iters * 16 * 8 * (packed ? 4 : 2);
    time_launch(dv, &l, flop_per_thread * l.grid * l.block, 1e12, o, it);
    cal_free(dv, out);
}

/* HBM buffers: an eighth of the memory, at most 4 GiB, at least 64 x L2 */
static size_t stream_bytes(const struct cal_dev *dv)
{
    size_t b = dv->mem_bytes / 8;
    if (b > ((size_t)4 << 30))
        b = (size_t)4 << 30;
    return b & ~(size_t)0xffff;
}

static void memory_hbm(struct cal_dev *dv, const char *what, const struct mp_calib_opts *o,
                       struct mp_calib_item *it, cal_obj f)
{
    size_t bytes = stream_bytes(dv);
    bool copy = !strcmp(what, "copy");
    cal_dptr a = cal_alloc(dv, bytes), b = copy ? cal_alloc(dv, bytes) : 0,
             sink = cal_alloc(dv, 4096);
    if (!a || (copy && !b) || !sink) {
        unsupported(it, MP_CALIB_FAILED, "cannot allocate the %s buffers", what);
    } else {
        unsigned long long n = bytes / 16;
        int reps = 1;
        unsigned v = 0x5a5a5a5au;
        dv->cu.MemsetD8Async(a, 0x3c, bytes, dv->stream);
        void *rd[] = {&a, &n, &reps, &sink}, *wr[] = {&a, &n, &v}, *cp[] = {&a, &b, &n};
        void **args = !strcmp(what, "read") ? rd : copy ? cp : wr;
        struct launch l = {f, (unsigned)blocks_for(dv, 4), 512, args};
        time_launch(dv, &l, (double)bytes * (copy ? 2 : 1), 1e9, o, it);
    }
    cal_free(dv, a);
    cal_free(dv, b);
    cal_free(dv, sink);
}

/* L2: a third of the cache, read 64 times per launch */
static void memory_l2(struct cal_dev *dv, const struct mp_calib_opts *o, struct mp_calib_item *it,
                      cal_obj f)
{
    size_t bytes = ((size_t)(dv->l2_bytes > 0 ? dv->l2_bytes : 1 << 22) / 3) & ~(size_t)0xfff;
    cal_dptr a = cal_alloc(dv, bytes), sink = cal_alloc(dv, 4096);
    if (!a || !sink) {
        unsupported(it, MP_CALIB_FAILED, "cannot allocate the %s buffer", "L2");
    } else {
        unsigned long long n = bytes / 16;
        int reps = 64;
        dv->cu.MemsetD8Async(a, 0x3c, bytes, dv->stream);
        void *args[] = {&a, &n, &reps, &sink};
        struct launch l = {f, (unsigned)blocks_for(dv, 4), 512, args};
        time_launch(dv, &l, (double)bytes * reps, 1e9, o, it);
        snprintf(it->note, sizeof(it->note), "%.1f MiB read 64 times per launch",
                 (double)bytes / 1048576.0);
    }
    cal_free(dv, a);
    cal_free(dv, sink);
}

struct graph_arg {
    cal_obj exec;
};

static cal_res do_graph(struct cal_dev *dv, void *arg)
{
    return dv->cu.GraphLaunch(((struct graph_arg *)arg)->exec, dv->stream);
}

/* empty kernels back to back: per launch, from the stream (host launch
 * path included) and from a graph of 100 (the device's own cost) */
static void launch_overhead(struct cal_dev *dv, bool graph, const struct mp_calib_opts *o,
                            struct mp_calib_item *it, cal_obj f)
{
    int reps = o->repeats > 0 && o->repeats < 64 ? o->repeats : o->quick ? 3 : 5;
    double ms[64];
    char err[200] = "";
    struct launch l = {f, 1, 32, NULL};
    int per = 1;
    cal_res r = 0;
    struct graph_arg g = {NULL};
    cal_obj gr = NULL;
    if (graph) {
        per = 100;
        r = dv->cu.StreamBeginCapture(dv->stream, 2 /* relaxed */);
        for (int i = 0; !r && i < per; i++)
            r = do_launch(dv, &l);
        cal_res e = dv->cu.StreamEndCapture(dv->stream, &gr);
        r = r ? r : e;
        if (!r)
            r = dv->cu.GraphInstantiate(&g.exec, gr, 0);
    }
    if (!r)
        r = cal_time(dv, graph ? do_graph : do_launch, graph ? (void *)&g : (void *)&l, 5, reps, ms,
                     err, sizeof(err));
    if (r) {
        unsupported(it, MP_CALIB_FAILED, "%s", *err ? err : cal_err(dv, r));
    } else {
        for (int i = 0; i < reps; i++)
            ms[i] = ms[i] * 1e3 / per;
        cal_summarise(ms, reps, it);
        it->status = MP_CALIB_OK;
        if (graph)
            snprintf(it->note, sizeof(it->note), "graph of %d empty kernels, per kernel", per);
        else
            snprintf(it->note, sizeof(it->note), "empty kernels launched back to back");
    }
    if (g.exec)
        dv->cu.GraphExecDestroy(g.exec);
    if (gr)
        dv->cu.GraphDestroy(gr);
}

void cal_memory(struct cal_dev *dv, const char *what, const struct mp_calib_opts *o,
                struct mp_calib_item *it)
{
    bool launch = !strncmp(what, "launch", 6);
    snprintf(it->key, sizeof(it->key), "%s%s", launch || !strcmp(what, "l2_read") ? "" : "hbm_",
             what);
    it->kind = launch ? MP_CALIB_EXTRA : MP_CALIB_MEMORY;
    it->unit = launch ? "us" : "GB/s";
    const char *fname = launch                   ? "mp_nop"
                        : !strcmp(what, "write") ? "mp_write"
                        : !strcmp(what, "copy")  ? "mp_copy"
                                                 : "mp_read";
    cal_obj f = fn_of(dv, fname);
    if (!f) {
        unsupported(it, MP_CALIB_FAILED, "%s: calibration kernels missing", what);
        return;
    }
    if (launch)
        launch_overhead(dv, !strcmp(what, "launch_overhead_graph"), o, it, f);
    else if (!strcmp(what, "l2_read"))
        memory_l2(dv, o, it, f);
    else
        memory_hbm(dv, what, o, it, f);
}
