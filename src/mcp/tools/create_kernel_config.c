/* MCP tool create_kernel_config: a kernel config YAML (Magpie's
 * kernel_path / testcase_command / ... arguments) for `magpie analyze -k`,
 * checked by loading it through the config module before it is returned.
 * Nothing is written (Magpie's output_path is deprecated and ignored). */
#include <stdio.h>
#include <string.h>

#include <magpie/config.h>

#include "../kcfg_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    struct mcp_kentry e;
    mcp_kentry_from_args(&e, args);
    const char *kid = e.kernel_id ? e.kernel_id : "";
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_buf entry, idq, y;
    mp_buf_init(&entry, 0);
    mp_buf_init(&idq, 0);
    mp_buf_init(&y, 0);
    int rc = mcp_kernel_entry_yaml(&e, &entry, "  ", &d);
    if (!rc)
        rc = mp_config_yaml_str(&idq, kid, strlen(kid));
    /* the id in the header comment as given, or quoted and escaped when it
     * holds anything that could end the comment's line */
    if (!rc)
        rc = mp_buf_printf(&y,
                           "# Kernel configuration for %s (magpie create_kernel_config)\n"
                           "# Run: magpie analyze -k <this file>\n"
                           "kernels:\n%s",
                           idq.len == strlen(kid) + 2 ? kid : mp_buf_cstr(&idq),
                           mp_buf_cstr(&entry));
    mp_buf_fini(&entry);
    mp_buf_fini(&idq);
    struct mp_kernel_config cfg;
    mp_kernel_config_init(&cfg);
    if (!rc)
        rc = mp_config_load_kernel_string(&cfg, mp_buf_cstr(&y), "<kernel config>", &d);
    mp_kernel_config_fini(&cfg);
    if (rc) {
        mp_buf_fini(&y);
        return mcp_fail_diag(result, "invalid kernel configuration", &d);
    }
    json_t *r = json_object();
    json_object_set_new(r, "config_content", json_string(mp_buf_cstr(&y)));
    json_object_set_new(r, "usage",
                        json_string("Save config_content to a file, then run: "
                                    "magpie analyze -k <file> (or compare -k)"));
    mp_buf_fini(&y);
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"kernel_id", MT_STR, true, NULL, NULL, 0, 0, "identifier of the kernel"},
    {"kernel_path", MT_STR, true, NULL, NULL, 0, 0, "kernel source file"},
    {"testcase_command", MT_STR, true, NULL, NULL, 0, 0, "command that checks the kernel"},
    {"kernel_type", MT_STR, false, "\"hip\"", "hip|cuda|pytorch|triton|opencl", 0, 0,
     "kernel language"},
    {"working_dir", MT_STR, false, "\"\"", NULL, 0, 0, "\"\" = the kernel's directory"},
    {"compile_command", MT_STR, false, "\"\"", NULL, 0, 0, "custom compile command"},
    {"output_path", MT_STR, false, "\"\"", NULL, 0, 0,
     "deprecated in Magpie and ignored: nothing is written"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_create_kernel_config = {
    .name = "create_kernel_config",
    .title = "Create a kernel config",
    .desc = "Make a kernel configuration YAML for analyze/compare from a kernel path and its "
            "testcase command; the YAML is validated by magpie's config loader.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{config_content (YAML with header comments), usage}`.",
};
