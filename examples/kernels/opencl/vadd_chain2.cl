// The baseline: correct, but the sum goes through a short dependent chain
// (two rounds) the compiler cannot fold, so it is compute-bound on a CPU
// where the plain sum is memory-bound: vadd is clearly faster than it and
// vadd_slow (eight rounds) clearly slower, whatever else the machine runs.
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = a[i], y = b[i], s = 0.0f;
    for (int k = 0; k < 2; k++)
        s = s * 0.0f + (x + y);
    c[i] = s;
}
