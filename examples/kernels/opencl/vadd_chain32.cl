// Slowest, still correct: the sum recomputed 32 times through a dependent
// chain the compiler cannot fold (compute-bound: 4x the rounds of vadd_slow).
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = a[i], y = b[i], s = 0.0f;
    for (int k = 0; k < 32; k++)
        s = s * 0.0f + (x + y);
    c[i] = s;
}
