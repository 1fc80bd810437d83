// Four elements per work item: the same sum, launched with a quarter of the work
// items (global_size n/4); tests/integration/test_kernel_opencl.sh checks that
// such a geometry is verified over the whole output. On PoCL it runs about as
// fast as the one-element vadd (both memory-bound).
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
    int i = get_global_id(0) * 4;
    for (int k = 0; k < 4; k++)
        if (i + k < n)
            c[i + k] = a[i + k] + b[i + k];
}
