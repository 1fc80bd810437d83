// Wrong (a KernelBench-style cheat): remembers the inputs of its last complete
// launch and does nothing when called again on the same ones, relying on the
// output left from before. It passes every fresh-input check; only the
// re-check after timing, with outputs poisoned before each timed launch,
// catches it.
__device__ const float *seen_a;
__device__ float seen_a0;
__device__ int seen_n;
__device__ unsigned blocks_done;

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    if (seen_a == a && seen_n == n && seen_a0 == a[0])
        return; /* the same for every block of a launch: the key changes only
                   after the last block has finished */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1) == gridDim.x - 1) {
            blocks_done = 0;
            seen_a = a;
            seen_n = n;
            seen_a0 = a[0];
        }
    }
}
