// Reference of mma_burn.cu: out[i] = in[i].
extern "C" __global__ void mma_burn(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
}
