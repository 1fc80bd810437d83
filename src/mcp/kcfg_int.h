/* Kernel configs from MCP arguments (kcfg.c). */
#ifndef MP_MCP_KCFG_INT_H
#define MP_MCP_KCFG_INT_H

#include <magpie/config.h>

#include "mcp_int.h"

struct mcp_kentry {
    const char *kernel_id, *kernel_path, *testcase_command, *kernel_type, *working_dir,
        *compile_command, *reference, *kernel_name;
    long long size;
};

void mcp_kentry_from_args(struct mcp_kentry *e, json_t *args);
/* One "- id: ..." list item of a kernels: list, every string a quoted and
 * escaped YAML scalar. 0, or MP_EINVAL naming the field (kernel_id,
 * kernel_path, ...) whose value is not UTF-8, or MP_ENOMEM. */
int mcp_kernel_entry_yaml(const struct mcp_kentry *e, struct mp_buf *b, const char *indent,
                          struct mp_diag *d);
/* The framework sections the arguments set (performance, correctness,
 * latency); errors as mcp_kernel_entry_yaml. */
int mcp_framework_yaml(json_t *args, struct mp_buf *b, struct mp_diag *d);
/* cfg from the framework sections of args plus kernels_yaml. */
int mcp_kernel_config_build(struct mp_kernel_config *cfg, json_t *args, const char *kernels_yaml,
                            struct mp_diag *d);

#endif
