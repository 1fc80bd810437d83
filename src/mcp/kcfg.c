/* Kernel configs from MCP arguments: Magpie's kernel entries (kernel_path,
 * testcase_command, kernel_type, working_dir, compile_command) as kernel
 * YAML, read back through the config module's own loader (so MCP and CLI
 * accept exactly the same configs), and the framework sections that the
 * analyze / compare arguments override. Scalars are written as JSON strings,
 * which YAML reads as double-quoted scalars. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/config.h>

#include "kcfg_int.h"

static void put_str(struct mp_buf *b, const char *s)
{
    json_t *j = json_string(s ? s : "");
    char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    mp_buf_puts(b, t ? t : "\"\"");
    free(t);
    json_decref(j);
}

static char *dir_of(const char *path)
{
    char *abs = realpath(path, NULL);
    char *s = abs ? abs : mp_strdup(path);
    if (!s)
        return NULL;
    char *slash = strrchr(s, '/');
    if (slash && slash != s)
        *slash = 0;
    else if (!slash)
        snprintf(s, strlen(s) + 1, ".");
    return s;
}

static char *abs_or_copy(const char *p)
{
    char *a = realpath(p, NULL);
    return a ? a : mp_strdup(p);
}

void mcp_kernel_entry_yaml(const struct mcp_kentry *e, struct mp_buf *b, const char *indent)
{
    char *src = abs_or_copy(e->kernel_path);
    char *wd =
        e->working_dir && *e->working_dir ? abs_or_copy(e->working_dir) : dir_of(e->kernel_path);
    mp_buf_printf(b, "%s- id: ", indent);
    put_str(b, e->kernel_id);
    mp_buf_printf(b, "\n%s  type: ", indent);
    put_str(b, e->kernel_type);
    mp_buf_printf(b, "\n%s  source_files: [", indent);
    put_str(b, src);
    mp_buf_printf(b, "]\n%s  working_dir: ", indent);
    put_str(b, wd);
    mp_buf_puts(b, "\n");
    if (e->testcase_command && *e->testcase_command) {
        mp_buf_printf(b, "%s  testcase_command: ", indent);
        put_str(b, e->testcase_command);
        mp_buf_puts(b, "\n");
    }
    if (e->compile_command && *e->compile_command) {
        mp_buf_printf(b, "%s  compile_command: ", indent);
        put_str(b, e->compile_command);
        mp_buf_puts(b, "\n");
    }
    if (e->reference && *e->reference) {
        char *r = abs_or_copy(e->reference);
        mp_buf_printf(b, "%s  reference: ", indent);
        put_str(b, r);
        mp_buf_puts(b, "\n");
        free(r);
    }
    if (e->kernel_name && *e->kernel_name) {
        mp_buf_printf(b, "%s  kernel_name: ", indent);
        put_str(b, e->kernel_name);
        mp_buf_puts(b, "\n");
    }
    if (e->size > 0)
        mp_buf_printf(b, "%s  size: %lld\n", indent, e->size);
    free(src);
    free(wd);
}

void mcp_kentry_from_args(struct mcp_kentry *e, json_t *args)
{
    memset(e, 0, sizeof(*e));
    e->kernel_id = mcp_str(args, "kernel_id");
    e->kernel_path = mcp_str(args, "kernel_path");
    e->testcase_command = mcp_str(args, "testcase_command");
    e->kernel_type = mcp_str(args, "kernel_type");
    e->working_dir = mcp_str(args, "working_dir");
    e->compile_command = mcp_str(args, "compile_command");
    e->reference = mcp_str(args, "reference");
    e->kernel_name = mcp_str(args, "kernel_name");
    e->size = json_object_get(args, "size") ? mcp_int(args, "size") : 0;
}

static void put_num(struct mp_buf *b, const char *key, json_t *args, const char *arg)
{
    json_t *v = json_object_get(args, arg);
    if (json_is_number(v))
        mp_buf_printf(b, "    %s: %.17g\n", key, json_number_value(v));
}

int mcp_framework_yaml(json_t *args, struct mp_buf *b)
{
    const char *pb = mcp_str(args, "performance_backend");
    const char *cb = mcp_str(args, "correctness_backend");
    if (pb && *pb) {
        mp_buf_puts(b, "performance:\n  backend: ");
        put_str(b, pb);
        mp_buf_puts(b, "\n");
    }
    if (cb && *cb) {
        mp_buf_puts(b, "correctness:\n  backend: ");
        put_str(b, cb);
        mp_buf_puts(b, "\n");
        if (strcmp(cb, "accordo") == 0) {
            mp_buf_puts(b, "  accordo:\n");
            static const char *const strs[][2] = {
                {"kernel_name", "accordo_kernel_name"},
                {"reference_binary", "accordo_reference_binary"},
                {"optimized_binary", "accordo_optimized_binary"},
            };
            for (size_t i = 0; i < 3; i++) {
                const char *v = mcp_str(args, strs[i][1]);
                if (v && *v) {
                    mp_buf_printf(b, "    %s: ", strs[i][0]);
                    put_str(b, v);
                    mp_buf_puts(b, "\n");
                }
            }
            put_num(b, "atol", args, "accordo_atol");
            put_num(b, "rtol", args, "accordo_rtol");
            put_num(b, "timeout_seconds", args, "accordo_timeout_seconds");
            mp_buf_printf(b, "    equal_nan: %s\n",
                          mcp_bool(args, "accordo_equal_nan") ? "true" : "false");
        }
    }
    json_t *mt = json_object_get(args, "max_time_s");
    if (json_is_number(mt))
        mp_buf_printf(b, "latency:\n  max_time_s: %.17g\n", json_number_value(mt));
    return 0;
}

int mcp_kernel_config_build(struct mp_kernel_config *cfg, json_t *args, const char *kernels_yaml,
                            struct mp_diag *d)
{
    mp_kernel_config_init(cfg);
    struct mp_buf fw;
    mp_buf_init(&fw, 0);
    mcp_framework_yaml(args, &fw);
    int rc = 0;
    if (fw.len)
        rc = mp_config_load_framework_string(cfg, fw.data, fw.len, "<mcp arguments>", d);
    mp_buf_fini(&fw);
    if (!rc)
        rc = mp_config_load_kernel_string(cfg, kernels_yaml, "<mcp arguments>", d);
    return rc;
}
