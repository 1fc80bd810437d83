// Wrong: work items exchange results through local memory without a
// barrier, so a work item may read its partner's slot before it is written.
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
    __local float tile[256];
    int i = get_global_id(0);
    int l = get_local_id(0);
    tile[l] = (i < n) ? a[i] + b[i] : 0.0f;
    /* missing: barrier(CLK_LOCAL_MEM_FENCE); */
    int p = l ^ 32;
    int j = i - l + p;
    if (j < n)
        c[j] = tile[p];
}
