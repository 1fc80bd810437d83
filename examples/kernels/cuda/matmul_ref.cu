// Reference: C = A * B for n x n row-major matrices, one output per thread
// (x = column, y = row).
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n)
        return;
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += a[row * n + k] * b[k * n + col];
    c[row * n + col] = s;
}
