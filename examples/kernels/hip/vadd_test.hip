// A Magpie-style HIP testcase program: checks vadd against the CPU (and
// that nothing past the end of c was written), exits non-zero on a
// mismatch (correctness stage), then times the kernel with
// runtime/magpie_timing.h, which prints the MAGPIE_LATENCY_JSON line the
// latency stage reads. One source, four kernels, picked at build time:
//   VARIANT=0  one element per thread, coalesced (the baseline)
//   VARIANT=1  four elements per thread, strided by the grid (faster on
//              most GPUs: fewer blocks, the same coalescing)
//   VARIANT=2  slower: each thread walks a 32-element chunk, uncoalesced
//   VARIANT=3  wrong: off by one (writes c[n])
//   VARIANT=4  wrong: writes nothing
// Build: see Makefile (hipcc --offload-arch=$(ARCH) -DVARIANT=N).
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "magpie_timing.h"

#ifndef VARIANT
#define VARIANT 0
#endif

#define GUARD 64

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
#if VARIANT == 1
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
#elif VARIANT == 2
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = t * 32; i < t * 32 + 32 && i < n; i++)
        c[i] = a[i] + b[i];
#elif VARIANT == 3
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        c[i] = a[i] + b[i];
#elif VARIANT == 4
    (void)a, (void)b, (void)c, (void)n;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
#endif
}

struct args {
    const float *a, *b;
    float *c;
    int n;
    hipStream_t s;
};

static void launch(void *u)
{
    struct args *x = (struct args *)u;
    int threads = 256;
    int blocks = (x->n + threads - 1) / threads;
#if VARIANT == 1
    blocks = (blocks + 3) / 4;
#elif VARIANT == 2
    blocks = (x->n / 32 + threads) / threads;
#endif
    hipLaunchKernelGGL(vadd, dim3(blocks), dim3(threads), 0, x->s, x->a, x->b, x->c, x->n);
}

#define CHECK(call)                                                                               \
    do {                                                                                          \
        hipError_t e_ = (call);                                                                   \
        if (e_ != hipSuccess) {                                                                   \
            fprintf(stderr, "%s failed: %s\n", #call, hipGetErrorString(e_));                     \
            return 2;                                                                             \
        }                                                                                         \
    } while (0)

int main(void)
{
    int n = 1 << 24;
    size_t bytes = (size_t)n * sizeof(float), cbytes = bytes + GUARD * sizeof(float);
    float *ha = (float *)malloc(cbytes), *hb = (float *)malloc(cbytes);
    float *hc = (float *)malloc(cbytes);
    if (!ha || !hb || !hc)
        return 2;
    for (int i = 0; i < n + GUARD; i++) {
        ha[i] = (float)(i % 1000) * 0.5f;
        hb[i] = (float)(i % 777) * 0.25f;
    }
    float *a, *b, *c;
    CHECK(hipMalloc(&a, cbytes));
    CHECK(hipMalloc(&b, cbytes));
    CHECK(hipMalloc(&c, cbytes));
    CHECK(hipMemcpy(a, ha, cbytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, hb, cbytes, hipMemcpyHostToDevice));
    CHECK(hipMemset(c, 0xff, cbytes)); /* NaN everywhere: unwritten elements show */
    struct args x = {a, b, c, n, 0};
    CHECK(hipStreamCreate(&x.s));
    launch(&x);
    CHECK(hipStreamSynchronize(x.s));
    CHECK(hipMemcpy(hc, c, cbytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        if (hc[i] != ha[i] + hb[i]) {
            fprintf(stderr, "mismatch at %d: %g != %g\n", i, hc[i], ha[i] + hb[i]);
            return 1;
        }
    }
    for (int i = n; i < n + GUARD; i++) {
        if (hc[i] == hc[i]) { /* not NaN any more: written past the end */
            fprintf(stderr, "wrote past the end of c at %d\n", i);
            return 1;
        }
    }
    printf("vadd (variant %d): %d elements correct\n", VARIANT, n);
    return magpie_time("vadd", launch, &x, x.s, NULL) == 0 ? 0 : 1;
}
