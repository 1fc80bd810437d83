// Correct but a little slower than vadd.cu: the first 13 % of the threads
// also read one float of b from the far end (about 2 % more time on an H200).
// Used to check that compare detects a small real difference.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = a[i] + b[i];
    if (i < n / 100 * 13)
        s += 0.0f * b[n - 1 - i];
    c[i] = s;
}
