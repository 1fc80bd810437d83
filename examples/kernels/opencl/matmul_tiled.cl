// 16 x 16 tiles of A and B staged in local memory, with barriers.
#define T 16
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n)
{
    __local float ta[T][T], tb[T][T];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float s = 0.0f;
    for (int t = 0; t < n; t += T) {
        ta[ly][lx] = (row < n && t + lx < n) ? a[row * n + t + lx] : 0.0f;
        tb[ly][lx] = (col < n && t + ly < n) ? b[(t + ly) * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < T; k++)
            s += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < n && col < n)
        c[row * n + col] = s;
}
