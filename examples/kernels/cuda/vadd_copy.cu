// The same code as vadd.cu under another name: compare must not call it
// faster or slower than vadd (expected SAME or INCONCLUSIVE).
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
