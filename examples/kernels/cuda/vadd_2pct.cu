// Correct but about 2 % slower than vadd.cu: the first 6 % of the threads also
// read one float of b from the far end (+2 % of the bytes moved). Used to
// check that compare detects a small real difference.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = a[i] + b[i];
    if (i < n / 100 * 6)
        s += 0.0f * b[n - 1 - i];
    c[i] = s;
}
