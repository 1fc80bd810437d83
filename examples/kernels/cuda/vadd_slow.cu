// Slower, still correct: a dependent chain the compiler cannot fold
// (0 * x is not 0 for x = inf or NaN).
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], s = 0.0f;
    for (int k = 0; k < 256; k++)
        s = s * 0.0f + (x + y);
    c[i] = s;
}
