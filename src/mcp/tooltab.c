/* The MCP tool table: the one list of tools and parameters from which the
 * JSON Schemas of tools/list, the argument checks before a call, the
 * dispatch in the worker and the reference in docs/mcp.md are all made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_int.h"

extern const struct mcp_tool mcp_tool_configure_gpu;
extern const struct mcp_tool mcp_tool_hardware_spec, mcp_tool_analyze, mcp_tool_compare,
    mcp_tool_create_kernel_config, mcp_tool_benchmark, mcp_tool_gap_analysis,
    mcp_tool_list_benchmark_images, mcp_tool_list_benchmark_results, mcp_tool_get_benchmark_result,
    mcp_tool_trace_report, mcp_tool_trace_split, mcp_tool_trace_stages, mcp_tool_trace_collective,
    mcp_tool_discover_kernels, mcp_tool_suggest_optimizations, mcp_tool_find_kernel_sources;
extern const struct mcp_tool mcp_tool_compare_benchmark_reports;
extern const struct mcp_tool mcp_tool_ray_task_status, mcp_tool_ray_task_result,
    mcp_tool_ray_task_cancel, mcp_tool_ray_task_list, mcp_tool_benchmark_batch;
extern const struct mcp_tool mcp_tool_replay_ops, mcp_tool_create_testcase;
extern const struct mcp_tool mcp_tool_benchmark_sweep, mcp_tool_compare_sweeps;
extern const struct mcp_tool mcp_tool_calibrate_gpu;

/* Magpie's order first, then magpie's own tools. A tool is listed here only
 * once it is built: tools/list never offers a stub. */
const struct mcp_tool *const mcp_tools[] = {
    &mcp_tool_hardware_spec,
    &mcp_tool_analyze,
    &mcp_tool_compare,
    &mcp_tool_configure_gpu,
    &mcp_tool_discover_kernels,
    &mcp_tool_suggest_optimizations,
    &mcp_tool_create_kernel_config,
    &mcp_tool_benchmark,
    &mcp_tool_gap_analysis,
    &mcp_tool_list_benchmark_images,
    &mcp_tool_list_benchmark_results,
    &mcp_tool_get_benchmark_result,
    &mcp_tool_compare_benchmark_reports,
    &mcp_tool_ray_task_status,
    &mcp_tool_ray_task_result,
    &mcp_tool_ray_task_cancel,
    &mcp_tool_ray_task_list,
    &mcp_tool_benchmark_batch,
    &mcp_tool_trace_report,
    &mcp_tool_trace_split,
    &mcp_tool_trace_stages,
    &mcp_tool_trace_collective,
    &mcp_tool_find_kernel_sources,
    &mcp_tool_replay_ops,
    &mcp_tool_create_testcase,
    &mcp_tool_benchmark_sweep,
    &mcp_tool_compare_sweeps,
    &mcp_tool_calibrate_gpu,
};
const size_t mcp_ntools = sizeof(mcp_tools) / sizeof(mcp_tools[0]);

const struct mcp_tool *mcp_tool_find(const char *name)
{
    for (size_t i = 0; name && i < mcp_ntools; i++)
        if (strcmp(mcp_tools[i]->name, name) == 0)
            return mcp_tools[i];
    return NULL;
}

static const char *type_name(enum mcp_ptype t)
{
    switch (t) {
    case MT_STR:
        return "string";
    case MT_INT:
        return "integer";
    case MT_NUM:
        return "number";
    case MT_BOOL:
        return "boolean";
    case MT_STRLIST:
    case MT_NUMLIST:
    case MT_OBJLIST:
        return "array";
    case MT_OBJ:
        return "object";
    }
    return "string";
}

static json_t *param_schema(const struct mcp_param *p)
{
    json_t *s = json_object();
    json_t *ty = json_string(type_name(p->type));
    if (!p->required && (!p->def || strcmp(p->def, "null") == 0)) {
        /* optional without a default: null is accepted as "not given" */
        json_t *a = json_array();
        json_array_append_new(a, ty);
        json_array_append_new(a, json_string("null"));
        ty = a;
    }
    json_object_set_new(s, "type", ty);
    if (p->type == MT_STRLIST || p->type == MT_NUMLIST || p->type == MT_OBJLIST) {
        json_t *it = json_object();
        json_object_set_new(it, "type",
                            json_string(p->type == MT_STRLIST   ? "string"
                                        : p->type == MT_NUMLIST ? "number"
                                                                : "object"));
        json_object_set_new(s, "items", it);
        if (p->min_items > 0)
            json_object_set_new(s, "minItems", json_integer(p->min_items));
        if (p->max_items > 0)
            json_object_set_new(s, "maxItems", json_integer(p->max_items));
    }
    if (p->enumv) {
        json_t *e = json_array();
        const char *a = p->enumv;
        while (*a) {
            const char *bar = strchr(a, '|');
            size_t n = bar ? (size_t)(bar - a) : strlen(a);
            json_array_append_new(e, json_stringn(a, n));
            a += n + (bar ? 1 : 0);
        }
        json_object_set_new(s, "enum", e);
    }
    if (p->def) {
        json_t *dv = json_loads(p->def, JSON_DECODE_ANY, NULL);
        if (dv && !json_is_null(dv))
            json_object_set_new(s, "default", dv);
        else
            json_decref(dv);
    }
    if (p->desc)
        json_object_set_new(s, "description", json_string(p->desc));
    return s;
}

json_t *mcp_tool_schema(const struct mcp_tool *t)
{
    json_t *props = json_object(), *req = json_array();
    for (const struct mcp_param *p = t->params; p && p->name; p++) {
        json_object_set_new(props, p->name, param_schema(p));
        if (p->required)
            json_array_append_new(req, json_string(p->name));
    }
    json_t *s = json_object();
    json_object_set_new(s, "type", json_string("object"));
    json_object_set_new(s, "properties", props);
    if (json_array_size(req))
        json_object_set_new(s, "required", req);
    else
        json_decref(req);
    json_object_set_new(s, "additionalProperties", json_false());
    return s;
}

json_t *mcp_tool_entry(const struct mcp_tool *t, const char *version)
{
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(t->name));
    if (strcmp(version, "2025-06-18") >= 0)
        json_object_set_new(e, "title", json_string(t->title));
    json_object_set_new(e, "description", json_string(t->desc));
    json_object_set_new(e, "inputSchema", mcp_tool_schema(t));
    if (strcmp(version, "2025-03-26") >= 0) {
        json_t *a = json_object();
        json_object_set_new(a, "title", json_string(t->title));
        json_object_set_new(a, "readOnlyHint", json_boolean(t->flags & MCP_READONLY));
        json_object_set_new(a, "destructiveHint", json_false());
        json_object_set_new(a, "openWorldHint", json_false());
        json_object_set_new(e, "annotations", a);
    }
    return e;
}

static const char *json_kind(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "a value";
}

static bool enum_ok(const char *enumv, const char *s)
{
    size_t n = strlen(s);
    const char *a = enumv;
    while (*a) {
        const char *bar = strchr(a, '|');
        size_t m = bar ? (size_t)(bar - a) : strlen(a);
        if (m == n && strncmp(a, s, n) == 0)
            return true;
        a += m + (bar ? 1 : 0);
    }
    return false;
}

/* Checks one value; returns a new reference (ints given as 3.0 become 3). */
static json_t *check_value(const struct mcp_param *p, json_t *v, char *err, size_t errlen)
{
    switch (p->type) {
    case MT_STR:
        if (!json_is_string(v))
            break;
        if (p->enumv && !enum_ok(p->enumv, json_string_value(v))) {
            snprintf(err, errlen, "argument '%s' must be one of %s, not '%.80s'", p->name, p->enumv,
                     json_string_value(v));
            return NULL;
        }
        return json_incref(v);
    case MT_INT:
        if (json_is_integer(v))
            return json_incref(v);
        if (json_is_real(v)) {
            double x = json_real_value(v);
            if (x > -9e15 && x < 9e15 && x == (double)(long long)x) /* range first: no UB */
                return json_integer((json_int_t)x);
        }
        break;
    case MT_NUM:
        if (json_is_number(v))
            return json_real(json_number_value(v));
        break;
    case MT_BOOL:
        if (json_is_boolean(v))
            return json_incref(v);
        break;
    case MT_STRLIST:
    case MT_NUMLIST:
    case MT_OBJLIST: {
        if (!json_is_array(v))
            break;
        size_t n = json_array_size(v), i;
        json_t *x;
        if ((p->min_items > 0 && n < (size_t)p->min_items) ||
            (p->max_items > 0 && n > (size_t)p->max_items)) {
            if (p->min_items == p->max_items)
                snprintf(err, errlen, "argument '%s' must have exactly %d items, not %zu", p->name,
                         p->min_items, n);
            else if (p->max_items > 0 && n > (size_t)p->max_items)
                snprintf(err, errlen, "argument '%s' must have at most %d items, not %zu", p->name,
                         p->max_items, n);
            else
                snprintf(err, errlen, "argument '%s' must have at least %d items, not %zu", p->name,
                         p->min_items, n);
            return NULL;
        }
        json_array_foreach(v, i, x)
        {
            bool ok = p->type == MT_STRLIST   ? json_is_string(x)
                      : p->type == MT_NUMLIST ? json_is_number(x)
                                              : json_is_object(x);
            if (!ok) {
                snprintf(err, errlen, "argument '%s': item %zu must be %s, not %s", p->name, i,
                         p->type == MT_STRLIST   ? "a string"
                         : p->type == MT_NUMLIST ? "a number"
                                                 : "an object",
                         json_kind(x));
                return NULL;
            }
        }
        return json_incref(v);
    }
    case MT_OBJ:
        if (json_is_object(v))
            return json_incref(v);
        break;
    }
    snprintf(err, errlen, "argument '%s' must be %s%s, not %s", p->name,
             p->type == MT_INT    ? "an integer"
             : p->type == MT_NUM  ? "a number"
             : p->type == MT_BOOL ? "a boolean"
             : p->type == MT_OBJ  ? "an object"
             : p->type == MT_STR  ? "a string"
                                  : "an array",
             p->type == MT_STRLIST ? " of strings" : "", json_kind(v));
    return NULL;
}

json_t *mcp_args_decode(const struct mcp_tool *t, json_t *args, char *err, size_t errlen)
{
    if (args && !json_is_object(args) && !json_is_null(args)) {
        snprintf(err, errlen, "arguments must be an object, not %s", json_kind(args));
        return NULL;
    }
    const char *key;
    json_t *v;
    if (json_is_object(args)) {
        json_object_foreach(args, key, v)
        {
            const struct mcp_param *p = t->params;
            while (p && p->name && strcmp(p->name, key) != 0)
                p++;
            if (!p || !p->name) {
                char names[1200] = "";
                size_t off = 0;
                for (p = t->params; p && p->name && off < sizeof(names) - 2; p++)
                    off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
                                            off ? ", " : "", p->name);
                snprintf(err, errlen, "unknown argument '%.80s' for %s (parameters: %s)", key,
                         t->name, names[0] ? names : "none");
                return NULL;
            }
        }
    }
    json_t *out = json_object();
    for (const struct mcp_param *p = t->params; p && p->name; p++) {
        v = json_is_object(args) ? json_object_get(args, p->name) : NULL;
        if (!v || json_is_null(v)) {
            if (p->required) {
                snprintf(err, errlen, "missing required argument '%s'", p->name);
                json_decref(out);
                return NULL;
            }
            json_t *dv = p->def ? json_loads(p->def, JSON_DECODE_ANY, NULL) : json_null();
            json_object_set_new(out, p->name, dv ? dv : json_null());
            continue;
        }
        json_t *c = check_value(p, v, err, errlen);
        if (!c) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, p->name, c);
    }
    return out;
}

static void md_escape(struct mp_buf *b, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            mp_buf_puts(b, "\\|");
        else if (*s == '\n')
            mp_buf_putc(b, ' ');
        else
            mp_buf_putc(b, *s);
    }
}

int mp_mcp_tools_markdown(struct mp_buf *out)
{
    for (size_t i = 0; i < mcp_ntools; i++) {
        const struct mcp_tool *t = mcp_tools[i];
        mp_buf_printf(out, "### `%s`%s\n\n", t->name,
                      t->flags & MCP_EXTRA ? " (magpie's own)" : "");
        md_escape(out, t->desc);
        mp_buf_puts(out, "\n\n| parameter | type | default | description |\n|---|---|---|---|\n");
        for (const struct mcp_param *p = t->params; p && p->name; p++) {
            mp_buf_printf(out, "| `%s` | %s%s | ", p->name, type_name(p->type),
                          p->type == MT_STRLIST   ? " of string"
                          : p->type == MT_NUMLIST ? " of number"
                          : p->type == MT_OBJLIST ? " of object"
                                                  : "");
            if (p->required)
                mp_buf_puts(out, "required");
            else {
                mp_buf_puts(out, "`");
                md_escape(out, p->def ? p->def : "null");
                mp_buf_puts(out, "`");
            }
            mp_buf_puts(out, " | ");
            md_escape(out, p->desc);
            if (p->enumv) {
                mp_buf_puts(out, " One of: ");
                md_escape(out, p->enumv);
                mp_buf_puts(out, ".");
            }
            mp_buf_puts(out, " |\n");
        }
        mp_buf_puts(out, "\nResult: ");
        md_escape(out, t->result_desc);
        mp_buf_puts(out, "\n\n");
    }
    return 0;
}

int mp_mcp_tools_json(struct mp_buf *out)
{
    json_t *a = json_array();
    for (size_t i = 0; i < mcp_ntools; i++)
        json_array_append_new(a, mcp_tool_entry(mcp_tools[i], "2025-11-25"));
    char *s = json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(a);
    if (!s)
        return MP_ENOMEM;
    mp_buf_puts(out, s);
    mp_buf_putc(out, '\n');
    free(s);
    return 0;
}
