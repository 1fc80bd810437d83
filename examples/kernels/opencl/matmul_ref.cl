// Reference: C = A * B for n x n row-major matrices, one output per work item
// (dimension 0 = column, dimension 1 = row).
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    if (row >= n || col >= n)
        return;
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += a[row * n + k] * b[k * n + col];
    c[row * n + col] = s;
}
