// Wrong: a very fast kernel that never stores its result.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = (i < n) ? a[i] + b[i] : 0.0f;
    if (s == 12345.678f && i < 0)
        c[0] = s; /* never true: keeps the loads alive */
}
