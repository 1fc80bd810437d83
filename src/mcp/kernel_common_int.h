/* Parameters that analyze and compare share (Magpie's names and defaults),
 * and their run helper (kernel_common.c). */
#ifndef MP_MCP_KERNEL_COMMON_INT_H
#define MP_MCP_KERNEL_COMMON_INT_H

#include "kcfg_int.h"

#define MCP_KERNEL_SHARED_PARAMS                                                                   \
    {"kernel_type",    MT_STR, false, "\"hip\"", "hip|cuda|pytorch|triton|opencl", 0, 0,           \
     "kernel language"},                                                                           \
        {"check_performance",                                                                      \
         MT_BOOL,                                                                                  \
         false,                                                                                    \
         "true",                                                                                   \
         NULL,                                                                                     \
         0,                                                                                        \
         0,                                                                                        \
         "run the performance (profiler) stage"},                                                  \
        {"environment",                                                                            \
         MT_STR,                                                                                   \
         false,                                                                                    \
         "\"local\"",                                                                              \
         "local|container|ray",                                                                    \
         0,                                                                                        \
         0,                                                                                        \
         "where kernels run: local, or container (docker/podman run with docker_image); ray is "   \
         "refused here (use magpie analyze -e ray)"},                                              \
        {"docker_image", MT_STR, false, "\"\"",                                                    \
         NULL,           0,      0,     "image for environment container (magpie's addition)"},    \
        {"performance_backend",                                                                    \
         MT_STR,                                                                                   \
         false,                                                                                    \
         "\"\"",                                                                                   \
         "|metrix|rocprof_compute|ncu|rocprofv3",                                                  \
         0,                                                                                        \
         0,                                                                                        \
         "profiler; \"\" = chosen for the GPU"},                                                   \
        {"correctness_backend",                                                                    \
         MT_STR,                                                                                   \
         false,                                                                                    \
         "\"\"",                                                                                   \
         "|accordo|testcase",                                                                      \
         0,                                                                                        \
         0,                                                                                        \
         "correctness check; \"\" = testcase (or reference mode with reference)"},                 \
        {"accordo_kernel_name", MT_STR, false, "\"\"", NULL, 0, 0, "accordo: kernel to check"},    \
        {"accordo_reference_binary", MT_STR, false, "\"\"", NULL, 0, 0,                            \
         "accordo: reference binary"},                                                             \
        {"accordo_optimized_binary", MT_STR, false, "\"\"", NULL, 0, 0,                            \
         "accordo: optimised binary"},                                                             \
        {"accordo_atol", MT_NUM, false, "1e-06", NULL, 0, 0, "accordo: absolute tolerance"},       \
        {"accordo_rtol", MT_NUM, false, "1e-05", NULL, 0, 0, "accordo: relative tolerance"},       \
        {"accordo_equal_nan", MT_BOOL, false, "false", NULL, 0, 0, "accordo: NaN == NaN"},         \
        {"accordo_timeout_seconds", MT_INT, false, "30", NULL, 0, 0, "accordo: time limit"},       \
        {"reference",                                                                              \
         MT_STR,                                                                                   \
         false,                                                                                    \
         NULL,                                                                                     \
         NULL,                                                                                     \
         0,                                                                                        \
         0,                                                                                        \
         "magpie: reference implementation (reference-mode correctness: random inputs, "           \
         "dtype-aware tolerances)"},                                                               \
        {"kernel_name",                                                                            \
         MT_STR,                                                                                   \
         false,                                                                                    \
         NULL,                                                                                     \
         NULL,                                                                                     \
         0,                                                                                        \
         0,                                                                                        \
         "magpie: entry point in the source (C harness for OpenCL/CUDA)"},                         \
        {"size", MT_INT, false, NULL,                                                              \
         NULL,   0,      0,     "magpie: elements per buffer argument (C harness)"},               \
        {"max_time_s", MT_NUM, false, NULL,                                                        \
         NULL,         0,      0,     "magpie: timing limit per kernel in seconds (default 15)"},  \
    {                                                                                              \
        "output_dir", MT_STR, false, "\"./results\"", NULL, 0, 0, "magpie: workspace root"         \
    }

/* Runs analyze (compare = false) or compare on the kernels in yaml; *report
 * gets the report JSON. Returns 0, or 1 with *result set to the error. */
int mcp_kernel_run(struct mcp_wctx *w, json_t *args, const char *yaml, bool compare,
                   json_t **report, json_t **result);

#endif
