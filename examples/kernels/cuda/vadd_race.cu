// Wrong: threads exchange results through shared memory across warps
// (partner = lane ^ 32) without __syncthreads(), so a thread may read its
// partner's slot before the partner's warp has written it.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    __shared__ float tile[256];
    int l = threadIdx.x;
    int i = blockIdx.x * blockDim.x + l;
    tile[l] = (i < n) ? a[i] + b[i] : 0.0f;
    /* missing: __syncthreads(); */
    int p = l ^ 32;
    int j = i - l + p;
    if (j < n)
        c[j] = tile[p];
}
