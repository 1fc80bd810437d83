// A Magpie-style testcase program: checks vadd against the CPU and exits
// non-zero on a mismatch (correctness stage), then times it with
// runtime/magpie_timing.h, which prints the MAGPIE_LATENCY_JSON line the
// latency stage reads. Build: nvcc -O3 -arch=sm_90 -I../../../runtime vadd_test.cu
#include <stdio.h>
#include <stdlib.h>

#include "magpie_timing.h"

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

struct args {
    const float *a, *b;
    float *c;
    int n;
    cudaStream_t s;
};

static void launch(void *u)
{
    struct args *x = (struct args *)u;
    vadd<<<(x->n + 255) / 256, 256, 0, x->s>>>(x->a, x->b, x->c, x->n);
}

int main(void)
{
    int n = 1 << 24;
    size_t bytes = (size_t)n * sizeof(float);
    float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
    for (int i = 0; i < n; i++) {
        ha[i] = (float)(i % 1000) * 0.5f;
        hb[i] = (float)(i % 777) * 0.25f;
    }
    float *a, *b, *c;
    cudaMalloc(&a, bytes);
    cudaMalloc(&b, bytes);
    cudaMalloc(&c, bytes);
    cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice);
    cudaMemset(c, 0xff, bytes);
    struct args x = {a, b, c, n, 0};
    cudaStreamCreate(&x.s);
    launch(&x);
    cudaStreamSynchronize(x.s);
    cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
        if (hc[i] != ha[i] + hb[i]) {
            fprintf(stderr, "mismatch at %d: %g != %g\n", i, hc[i], ha[i] + hb[i]);
            return 1;
        }
    }
    printf("vadd: %d elements correct\n", n);
    return magpie_time("vadd", launch, &x, x.s, NULL) == 0 ? 0 : 1;
}
