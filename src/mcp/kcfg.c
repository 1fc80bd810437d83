/* Kernel configs from MCP arguments: Magpie's kernel entries (kernel_path,
 * testcase_command, kernel_type, working_dir, compile_command) as kernel
 * YAML, read back through the config module's own loader (so MCP and CLI
 * accept exactly the same configs), and the framework sections that the
 * analyze / compare arguments override. Every string is written as a
 * double-quoted YAML scalar with escapes (mp_config_yaml_str), so whatever a
 * value holds it stays one value of its own key. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/config.h>

#include "kcfg_int.h"

/* The YAML being written: the first failure sticks (a string that is not
 * UTF-8: its field; or out of memory) and later writes do nothing. */
struct yw {
    struct mp_buf *b;
    const char *bad; /* the field whose value cannot be written */
    int rc;
};

static void put_raw(struct yw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put_raw(struct yw *w, const char *fmt, ...)
{
    if (w->rc)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    w->rc = n < 0 || (size_t)n >= sizeof(line) ? MP_EINVAL : mp_buf_puts(w->b, line);
}

/* Every string value goes through here: a double-quoted YAML scalar with
 * escapes, so no value can end its line or add keys (issue 27). */
static void put_str(struct yw *w, const char *field, const char *s)
{
    if (w->rc)
        return;
    s = s ? s : "";
    w->rc = mp_config_yaml_str(w->b, s, strlen(s));
    if (w->rc == MP_EINVAL)
        w->bad = field;
}

static int yw_end(struct yw *w, struct mp_diag *d)
{
    if (!w->rc)
        return 0;
    if (w->rc != MP_EINVAL || !w->bad)
        return mp_diag_set(d, w->rc, "%s",
                           w->rc == MP_ENOMEM ? "out of memory" : "a line of the YAML is too long");
    mp_diag_set_field(d, w->bad);
    return mp_diag_set(d, MP_EINVAL, "not valid UTF-8: a YAML config cannot hold it");
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

int mcp_kernel_entry_yaml(const struct mcp_kentry *e, struct mp_buf *b, const char *indent,
                          struct mp_diag *d)
{
    struct yw w = {.b = b};
    char *src = abs_or_copy(e->kernel_path);
    char *wd =
        e->working_dir && *e->working_dir ? abs_or_copy(e->working_dir) : dir_of(e->kernel_path);
    if (!src || !wd)
        w.rc = MP_ENOMEM;
    put_raw(&w, "%s- id: ", indent);
    put_str(&w, "kernel_id", e->kernel_id);
    put_raw(&w, "\n%s  type: ", indent);
    put_str(&w, "kernel_type", e->kernel_type);
    put_raw(&w, "\n%s  source_files: [", indent);
    put_str(&w, "kernel_path", src);
    put_raw(&w, "]\n%s  working_dir: ", indent);
    put_str(&w, "working_dir", wd);
    put_raw(&w, "\n");
    if (e->testcase_command && *e->testcase_command) {
        put_raw(&w, "%s  testcase_command: ", indent);
        put_str(&w, "testcase_command", e->testcase_command);
        put_raw(&w, "\n");
    }
    if (e->compile_command && *e->compile_command) {
        put_raw(&w, "%s  compile_command: ", indent);
        put_str(&w, "compile_command", e->compile_command);
        put_raw(&w, "\n");
    }
    if (e->reference && *e->reference) {
        char *r = abs_or_copy(e->reference);
        put_raw(&w, "%s  reference: ", indent);
        put_str(&w, "reference", r);
        put_raw(&w, "\n");
        free(r);
    }
    if (e->kernel_name && *e->kernel_name) {
        put_raw(&w, "%s  kernel_name: ", indent);
        put_str(&w, "kernel_name", e->kernel_name);
        put_raw(&w, "\n");
    }
    if (e->size > 0)
        put_raw(&w, "%s  size: %lld\n", indent, e->size);
    free(src);
    free(wd);
    return yw_end(&w, d);
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

static void put_num(struct yw *w, const char *key, json_t *args, const char *arg)
{
    json_t *v = json_object_get(args, arg);
    if (json_is_number(v))
        put_raw(w, "    %s: %.17g\n", key, json_number_value(v));
}

int mcp_framework_yaml(json_t *args, struct mp_buf *b, struct mp_diag *d)
{
    struct yw w = {.b = b};
    const char *pb = mcp_str(args, "performance_backend");
    const char *cb = mcp_str(args, "correctness_backend");
    if (pb && *pb) {
        put_raw(&w, "performance:\n  backend: ");
        put_str(&w, "performance_backend", pb);
        put_raw(&w, "\n");
    }
    if (cb && *cb) {
        put_raw(&w, "correctness:\n  backend: ");
        put_str(&w, "correctness_backend", cb);
        put_raw(&w, "\n");
        if (strcmp(cb, "accordo") == 0) {
            put_raw(&w, "  accordo:\n");
            static const char *const strs[][2] = {
                {"kernel_name", "accordo_kernel_name"},
                {"reference_binary", "accordo_reference_binary"},
                {"optimized_binary", "accordo_optimized_binary"},
            };
            for (size_t i = 0; i < 3; i++) {
                const char *v = mcp_str(args, strs[i][1]);
                if (v && *v) {
                    put_raw(&w, "    %s: ", strs[i][0]);
                    put_str(&w, strs[i][1], v);
                    put_raw(&w, "\n");
                }
            }
            put_num(&w, "atol", args, "accordo_atol");
            put_num(&w, "rtol", args, "accordo_rtol");
            put_num(&w, "timeout_seconds", args, "accordo_timeout_seconds");
            put_raw(&w, "    equal_nan: %s\n",
                    mcp_bool(args, "accordo_equal_nan") ? "true" : "false");
        }
    }
    json_t *mt = json_object_get(args, "max_time_s");
    if (json_is_number(mt))
        put_raw(&w, "latency:\n  max_time_s: %.17g\n", json_number_value(mt));
    return yw_end(&w, d);
}

int mcp_kernel_config_build(struct mp_kernel_config *cfg, json_t *args, const char *kernels_yaml,
                            struct mp_diag *d)
{
    mp_kernel_config_init(cfg);
    struct mp_buf fw;
    mp_buf_init(&fw, 0);
    int rc = mcp_framework_yaml(args, &fw, d);
    if (!rc && fw.len)
        rc = mp_config_load_framework_string(cfg, fw.data, fw.len, "<mcp arguments>", d);
    mp_buf_fini(&fw);
    if (!rc)
        rc = mp_config_load_kernel_string(cfg, kernels_yaml, "<mcp arguments>", d);
    return rc;
}
