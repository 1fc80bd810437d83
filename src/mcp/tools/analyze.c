/* MCP tool analyze: one kernel through compile, correctness, performance
 * and timing (src/kernel mp_kernel_analyze), answered in Magpie's shape:
 * the kernel's evaluation state plus kernel_config. */
#include <stdio.h>
#include <string.h>

#include "../kernel_common_int.h"

static char *stem(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t len = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    snprintf(out, n, "%.*s", (int)len, b);
    return out;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    struct mcp_kentry e;
    mcp_kentry_from_args(&e, args);
    /* a missing file or directory is named here, not found out later as a
     * stage that cannot run */
    if (mcp_kernel_check_path("kernel_path", e.kernel_path, false, result) ||
        (e.working_dir && *e.working_dir &&
         mcp_kernel_check_path("working_dir", e.working_dir, true, result)))
        return 1;
    char id[256];
    e.kernel_id = stem(e.kernel_path, id, sizeof(id));
    struct mp_buf y;
    mp_buf_init(&y, 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_buf_puts(&y, "kernels:\n");
    rc = rc ? rc : mcp_kernel_entry_yaml(&e, &y, "  ", &d);
    if (rc) {
        mp_buf_fini(&y);
        return mcp_fail_diag(result, "invalid kernel configuration", &d);
    }
    json_t *rep = NULL;
    rc = mcp_kernel_run(w, args, mp_buf_cstr(&y), false, &rep, result);
    mp_buf_fini(&y);
    if (rc)
        return rc;
    json_t *first = json_array_get(json_object_get(rep, "results"), 0);
    json_t *r = json_is_object(first) ? json_deep_copy(first) : json_object();
    json_t *kc = mcp_kentry_config(&e);
    if (e.compile_command && *e.compile_command)
        json_object_set_new(kc, "compile_command", json_string(e.compile_command));
    json_object_set_new(r, "kernel_config", kc);
    json_object_set(r, "report_path", json_object_get(rep, "report_path"));
    json_object_set(r, "summary", json_object_get(rep, "summary"));
    json_decref(rep);
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"kernel_path", MT_STR, true, NULL, NULL, 0, 0, "kernel source file"},
    {"testcase_command", MT_STR, false, NULL, NULL, 0, 0,
     "command that builds and checks the kernel (Magpie requires it; magpie also accepts "
     "reference instead, and none for OpenCL/CUDA harness kernels)"},
    {"working_dir", MT_STR, false, "\"\"", NULL, 0, 0, "\"\" = the kernel's directory"},
    {"compile_command", MT_STR, false, "\"\"", NULL, 0, 0, "custom compile command"},
    MCP_KERNEL_SHARED_PARAMS,
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_analyze = {
    .name = "analyze",
    .title = "Analyze a kernel",
    .desc = "Evaluate one GPU kernel: compile, prove correctness (testcase, or reference mode "
            "with random inputs), profile, time with confidence intervals, score. Writes "
            "analyze_report.json and report.html in a workspace under output_dir.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_WARM,
    .result_desc = "`{kernel_id, kernel_type, compiling_state, correctness_state, "
                   "performance_state, latency_state, score, errors, compiling_result, "
                   "correctness_result, performance_result, latency_result, kernel_config{"
                   "kernel_id, kernel_type, source_file_path, testcase_command, working_dir, "
                   "[compile_command]}, report_path, summary}`; failure `{error}`.",
};
