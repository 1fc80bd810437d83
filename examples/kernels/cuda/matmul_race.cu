// Wrong: the tiled kernel without __syncthreads(): threads read tile entries
// other warps have not written yet, or have already overwritten.
#define T 16
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n)
{
    __shared__ float ta[T][T], tb[T][T];
    int lx = threadIdx.x, ly = threadIdx.y;
    int col = blockIdx.x * T + lx, row = blockIdx.y * T + ly;
    float s = 0.0f;
    for (int t = 0; t < n; t += T) {
        ta[ly][lx] = (row < n && t + lx < n) ? a[row * n + t + lx] : 0.0f;
        tb[ly][lx] = (col < n && t + ly < n) ? b[(t + ly) * n + col] : 0.0f;
        for (int k = 0; k < T; k++)
            s += ta[ly][k] * tb[k][lx];
    }
    if (row < n && col < n)
        c[row * n + col] = s;
}
