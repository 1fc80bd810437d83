// Slower, still correct: the sum is recomputed many times through a
// dependent chain the compiler cannot fold.
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float x = a[i], y = b[i], s = 0.0f;
    for (int k = 0; k < 8; k++)
        s = s * 0.0f + (x + y);
    c[i] = s;
}
