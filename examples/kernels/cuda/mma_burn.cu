// A power-bound kernel for timing tests: every warp runs 4096 x 4 bf16
// tensor-core MMAs (mma.sync m16n8k16) on register operands, with no
// memory traffic to speak of, so the GPU draws its full power and an H200
// hits its power cap (see bench/kernel_timing.md). Output: out[i] = in[i]
// (the accumulators are finite and added times 0.0f, so the MMAs cannot be
// dropped); reference: mma_burn_ref.cu. sm_80 or newer.
extern "C" __global__ void mma_burn(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = 0x3c003c00u + (threadIdx.x & 7u); /* bf16 pairs near 2^-7 */
    unsigned b = 0x3c003c00u + (threadIdx.x >> 3 & 7u);
    float c[4][4] = {{0}};
    for (int it = 0; it < 4096; it++) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                         : "r"(a), "r"(a ^ 1u), "r"(a ^ 2u), "r"(a ^ 3u), "r"(b), "r"(b ^ 1u));
    }
    float s = 0.0f;
    for (int k = 0; k < 4; k++)
        s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    if (i < n)
        out[i] = in[i] + 0.0f * s;
}
