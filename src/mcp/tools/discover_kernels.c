/* MCP tool discover_kernels: Magpie's kernel discovery over a project tree
 * (src/kernel discover.c, also `magpie discover`): source files with their
 * kernels, possible binaries and a suggested analyze configuration. */
#include <stdio.h>
#include <stdlib.h>

#include <magpie/kernel_discover.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    struct mp_disc_opts o = {.types = mp_disc_type_mask(mcp_str(args, "kernel_type")),
                             .include_tests = mcp_bool(args, "include_tests"),
                             .include_examples = mcp_bool(args, "include_examples")};
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_disc_result r;
    if (mp_discover_kernels(mcp_str(args, "project_path"), &o, &r, &d))
        return mcp_fail_diag(result, "kernel discovery failed", &d);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_disc_json(&r, &b);
    mp_disc_result_fini(&r);
    json_t *j = rc ? NULL : mcp_parse_buf(&b);
    mp_buf_fini(&b);
    if (!j)
        return mcp_fail(result, "discover_kernels: cannot format the result");
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"project_path", MT_STR, true, NULL, NULL, 0, 0, "root of the project to scan (or one file)"},
    {"kernel_type", MT_STR, false, "\"hip\"", "hip|cuda|triton|opencl|all", 0, 0,
     "which kernels to find"},
    {"include_tests", MT_BOOL, false, "true", NULL, 0, 0,
     "descend into test/tests/testing directories"},
    {"include_examples", MT_BOOL, false, "true", NULL, 0, 0,
     "descend into example(s)/sample(s)/demo(s) directories"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_discover_kernels = {
    .name = "discover_kernels",
    .title = "Discover kernels",
    .desc = "Finds analyzable GPU kernels in a project tree (CUDA/HIP __global__, OpenCL "
            "__kernel, Triton @triton.jit) with the executables or test scripts that may run "
            "them and a suggested configuration for analyze().",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "a list of `{source_file, possible_binaries[], suggested_config{kernel_path, "
                   "kernel_type, testcase_command, working_dir, compile_command, [kernel_name], "
                   "[reference]}, kernel_type, kernels[{name, line}], runs_standalone, "
                   "configs[]}` (structuredContent wraps it as `{result: [...]}`).",
};
