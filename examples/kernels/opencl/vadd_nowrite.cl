// Wrong: computes the sum but never stores it (a "fast" kernel that does nothing).
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    if (i < n)
        s = a[i] + b[i];
    (void)s;
}
