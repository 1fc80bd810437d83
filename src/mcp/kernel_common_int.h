/* Parameters that analyze and compare share (Magpie's names and defaults),
 * and their run helper (kernel_common.c). */
#ifndef MP_MCP_KERNEL_COMMON_INT_H
#define MP_MCP_KERNEL_COMMON_INT_H

#include "kcfg_int.h"

/* An optional parameter: name, type, default (JSON text), allowed values,
 * description. */
#define MCP_KOPT(name, type, def, enumv, desc)                                                     \
    {                                                                                              \
        name, type, false, def, enumv, 0, 0, desc                                                  \
    }

#define MCP_KERNEL_SHARED_PARAMS                                                                   \
    MCP_KOPT("kernel_type", MT_STR, "\"hip\"", "hip|cuda|pytorch|triton|opencl",                   \
             "kernel language"),                                                                   \
        MCP_KOPT("check_performance", MT_BOOL, "true", NULL,                                       \
                 "run the performance (profiler) stage"),                                          \
        MCP_KOPT("environment", MT_STR, "\"local\"", "local|container|ray",                        \
                 "where kernels run: local, or container (docker/podman run with docker_image); "  \
                 "ray is refused here (use magpie analyze -e ray)"),                               \
        MCP_KOPT("docker_image", MT_STR, "\"\"", NULL,                                             \
                 "image for environment container (magpie's addition)"),                           \
        MCP_KOPT("performance_backend", MT_STR, "\"\"", "|metrix|rocprof_compute|ncu|rocprofv3",   \
                 "profiler; \"\" = chosen for the GPU"),                                           \
        MCP_KOPT("correctness_backend", MT_STR, "\"\"", "|accordo|testcase",                       \
                 "correctness check; \"\" = testcase (or reference mode with reference)"),         \
        MCP_KOPT("accordo_kernel_name", MT_STR, "\"\"", NULL, "accordo: kernel to check"),         \
        MCP_KOPT("accordo_reference_binary", MT_STR, "\"\"", NULL, "accordo: reference binary"),   \
        MCP_KOPT("accordo_optimized_binary", MT_STR, "\"\"", NULL, "accordo: optimised binary"),   \
        MCP_KOPT("accordo_atol", MT_NUM, "1e-06", NULL, "accordo: absolute tolerance"),            \
        MCP_KOPT("accordo_rtol", MT_NUM, "1e-05", NULL, "accordo: relative tolerance"),            \
        MCP_KOPT("accordo_equal_nan", MT_BOOL, "false", NULL, "accordo: NaN == NaN"),              \
        MCP_KOPT("accordo_timeout_seconds", MT_INT, "30", NULL, "accordo: time limit"),            \
        MCP_KOPT("reference", MT_STR, NULL, NULL,                                                  \
                 "magpie: reference implementation (reference-mode correctness: random inputs, "   \
                 "dtype-aware tolerances)"),                                                       \
        MCP_KOPT("kernel_name", MT_STR, NULL, NULL,                                                \
                 "magpie: entry point in the source (C harness for OpenCL/CUDA)"),                 \
        MCP_KOPT("size", MT_INT, NULL, NULL, "magpie: elements per buffer argument (C harness)"),  \
        MCP_KOPT("max_time_s", MT_NUM, NULL, NULL,                                                 \
                 "magpie: timing limit per kernel in seconds (default 15)"),                       \
        MCP_KOPT("output_dir", MT_STR, "\"./results\"", NULL, "magpie: workspace root")

/* The kernel_config object of one entry: kernel_id, kernel_type,
 * source_file_path, testcase_command, working_dir. */
json_t *mcp_kentry_config(const struct mcp_kentry *e);

/* An early check of a path argument: 0 when path names an existing file
 * (dir: directory); else 1 with *result = {"error": "<field>: no such
 * file: <path>"} (or "not a directory" / "a directory, not a file"). */
int mcp_kernel_check_path(const char *field, const char *path, bool dir, json_t **result);

/* Runs analyze (compare = false) or compare on the kernels in yaml; *report
 * gets the report JSON. Returns 0, or 1 with *result set to the error. */
int mcp_kernel_run(struct mcp_wctx *w, json_t *args, const char *yaml, bool compare,
                   json_t **report, json_t **result);

#endif
