// Baseline: four consecutive elements per thread (global_size n/4). Neighbouring
// threads touch addresses 16 bytes apart, so each warp access is strided.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    for (int k = 0; k < 4; k++)
        if (i + k < n)
            c[i + k] = a[i + k] + b[i + k];
}
