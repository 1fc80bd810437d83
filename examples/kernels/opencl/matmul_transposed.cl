// Wrong: multiplies by B transposed (reads b[col * n + k]).
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n)
{
    int col = get_global_id(0), row = get_global_id(1);
    if (row >= n || col >= n)
        return;
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += a[row * n + k] * b[col * n + k];
    c[row * n + col] = s;
}
