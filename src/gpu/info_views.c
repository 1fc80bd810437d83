/* The --gpu-info views: Magpie's text block (kept line for line, with our
 * additions after it) and one JSON object with Magpie's keys first. */
#include <stdio.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/gpu.h>

static int text_device(struct mp_buf *b, const struct mp_gpu_device *g)
{
    int rc = mp_buf_printf(b, "    [%d] %s", g->index, g->name[0] ? g->name : "(unnamed)");
    if (!rc && g->arch[0])
        rc = mp_buf_printf(b, "  %s%s%s%s%s", g->arch, g->family[0] ? " (" : "", g->family,
                           g->family[0] ? ")" : "", g->arch_from_name ? " [from name]" : "");
    if (!rc && g->memory_total_mib >= 0)
        rc = mp_buf_printf(b, "  %lld MiB", g->memory_total_mib);
    if (!rc && g->driver[0])
        rc = mp_buf_printf(b, "  driver %s", g->driver);
    if (!rc)
        rc = mp_buf_putc(b, '\n');
    return rc;
}

int mp_gpu_info_text(const struct mp_gpu_info *info, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "GPU Information:\n");
    if (info->count == 0) {
        /* Magpie prints Vendor and Architecture even when nothing is found */
        rc = rc ? rc : mp_buf_puts(b, "  Vendor: UNKNOWN\n  Architecture: unknown\n");
        rc = rc ? rc : mp_buf_puts(b, "  (No GPU detected)\n");
        for (int i = 0; i < info->nnotes && !rc; i++)
            rc = mp_buf_printf(b, "%s%s", i ? "; " : "  Checked: ", info->notes[i]);
        if (!rc && info->nnotes)
            rc = mp_buf_putc(b, '\n');
    } else {
        if (!rc)
            rc = mp_buf_printf(b, "  Vendor: %s\n  Architecture: %s\n",
                               mp_gpu_vendor_name(info->vendor),
                               info->architecture[0] ? info->architecture : "unknown");
        if (!rc)
            rc = mp_buf_printf(b, "  Compiler: %s\n  Profiler: %s\n", mp_gpu_compiler(info),
                               mp_gpu_profiler(info));
        if (!rc)
            rc = mp_buf_printf(b, "  Source: %s\n  GPUs: %d\n", mp_gpu_source_name(info->source),
                               info->count);
        for (int i = 0; i < info->count && !rc; i++)
            rc = text_device(b, &info->gpus[i]);
    }
    if (!rc)
        rc = mp_buf_puts(b, "  Tools:\n");
    for (int i = 0; i < MP_GPU_TOOL_COUNT && !rc; i++) {
        const struct mp_gpu_tool *t = &info->tools[i];
        if (!t->found)
            rc = mp_buf_printf(b, "    %s: not found\n", t->name);
        else
            rc = mp_buf_printf(b, "    %s: %s%s%s%s\n", t->name, t->path, t->version[0] ? " (" : "",
                               t->version, t->version[0] ? ")" : "");
    }
    return rc;
}

/* ---- JSON ---- */

static int jkey(struct mp_buf *b, const char *indent, const char *key)
{
    int rc = mp_buf_puts(b, indent);
    if (!rc)
        rc = mp_json_str(b, key, strlen(key));
    if (!rc)
        rc = mp_buf_puts(b, ": ");
    return rc;
}

/* "key": "s" (null when s is NULL or empty). */
static int jstr(struct mp_buf *b, const char *indent, const char *key, const char *s, bool last)
{
    int rc = jkey(b, indent, key);
    if (!rc)
        rc = (s && *s) ? mp_json_str(b, s, strlen(s)) : mp_buf_puts(b, "null");
    if (!rc)
        rc = mp_buf_puts(b, last ? "\n" : ",\n");
    return rc;
}

/* "key": v (null when negative = unknown). */
static int jnum(struct mp_buf *b, const char *indent, const char *key, double v, bool last)
{
    int rc = jkey(b, indent, key);
    if (!rc)
        rc = v < 0 ? mp_buf_puts(b, "null") : mp_json_double(b, v);
    if (!rc)
        rc = mp_buf_puts(b, last ? "\n" : ",\n");
    return rc;
}

static int jint(struct mp_buf *b, const char *indent, const char *key, long long v, bool last)
{
    int rc = jkey(b, indent, key);
    if (!rc)
        rc = v < 0 ? mp_buf_puts(b, "null") : mp_buf_printf(b, "%lld", v);
    if (!rc)
        rc = mp_buf_puts(b, last ? "\n" : ",\n");
    return rc;
}

static int jbool(struct mp_buf *b, const char *indent, const char *key, bool v, bool last)
{
    int rc = jkey(b, indent, key);
    if (!rc)
        rc = mp_buf_printf(b, "%s%s", v ? "true" : "false", last ? "\n" : ",\n");
    return rc;
}

static int json_device(struct mp_buf *b, const struct mp_gpu_device *g, bool last)
{
    const char *in = "      ";
    char cc[32] = "";
    if (g->cc_major >= 0)
        snprintf(cc, sizeof(cc), "%d.%d", g->cc_major, g->cc_minor);
    int rc = mp_buf_puts(b, "    {\n");
    rc = rc ? rc : jint(b, in, "index", g->index, false);
    rc = rc ? rc : jstr(b, in, "name", g->name, false);
    rc = rc ? rc : jstr(b, in, "arch", g->arch, false);
    rc = rc ? rc : jstr(b, in, "family", g->family, false);
    rc = rc ? rc : jstr(b, in, "compute_capability", cc, false);
    rc = rc ? rc : jbool(b, in, "arch_from_name", g->arch_from_name, false);
    rc = rc ? rc : jint(b, in, "memory_total_mib", g->memory_total_mib, false);
    rc = rc ? rc : jint(b, in, "memory_used_mib", g->memory_used_mib, false);
    rc = rc ? rc : jstr(b, in, "driver_version", g->driver, false);
    rc = rc ? rc : jstr(b, in, "uuid", g->uuid, false);
    rc = rc ? rc : jstr(b, in, "pci_bus_id", g->pci_bus_id, false);
    rc = rc ? rc : jnum(b, in, "utilization_pct", g->utilization_pct, false);
    rc = rc ? rc : jnum(b, in, "temperature_c", g->temperature_c, false);
    rc = rc ? rc : jnum(b, in, "power_draw_w", g->power_draw_w, false);
    rc = rc ? rc : jnum(b, in, "power_limit_w", g->power_limit_w, false);
    rc = rc ? rc : jnum(b, in, "sm_clock_mhz", g->sm_clock_mhz, false);
    rc = rc ? rc : jnum(b, in, "sm_clock_max_mhz", g->sm_clock_max_mhz, false);
    rc = rc ? rc : jnum(b, in, "mem_clock_mhz", g->mem_clock_mhz, true);
    rc = rc ? rc : mp_buf_puts(b, last ? "    }\n" : "    },\n");
    return rc;
}

int mp_gpu_info_json(const struct mp_gpu_info *info, struct mp_buf *b)
{
    const char *in = "  ";
    bool detected = info->count > 0;
    int rc = mp_buf_puts(b, "{\n");
    /* Magpie's get_gpu_info() keys first, then ours. */
    rc = rc ? rc : jstr(b, in, "vendor", mp_gpu_vendor_name(info->vendor), false);
    rc = rc ? rc : jstr(b, in, "architecture", info->architecture, false);
    rc = rc ? rc : jbool(b, in, "detected", detected, false);
    rc = rc ? rc : jstr(b, in, "compiler", mp_gpu_compiler(info), false);
    rc = rc ? rc : jstr(b, in, "profiler", mp_gpu_profiler(info), false);
    rc = rc ? rc : jstr(b, in, "source", mp_gpu_source_name(info->source), false);
    rc = rc ? rc : jstr(b, in, "driver_version", info->driver_version, false);
    rc = rc ? rc : jstr(b, in, "cuda_version", info->cuda_version, false);
    rc = rc ? rc : jint(b, in, "count", info->count, false);
    rc = rc ? rc : mp_buf_puts(b, info->count ? "  \"gpus\": [\n" : "  \"gpus\": [],\n");
    for (int i = 0; i < info->count && !rc; i++)
        rc = json_device(b, &info->gpus[i], i + 1 == info->count);
    if (!rc && info->count)
        rc = mp_buf_puts(b, "  ],\n");
    rc = rc ? rc : mp_buf_puts(b, "  \"tools\": {\n");
    for (int i = 0; i < MP_GPU_TOOL_COUNT && !rc; i++) {
        const struct mp_gpu_tool *t = &info->tools[i];
        const char *in2 = "      ";
        rc = jkey(b, "    ", t->name);
        rc = rc ? rc : mp_buf_puts(b, "{\n");
        rc = rc ? rc : jbool(b, in2, "found", t->found, false);
        rc = rc ? rc : jstr(b, in2, "path", t->found ? t->path : NULL, false);
        rc = rc ? rc : jstr(b, in2, "version", t->version, true);
        rc = rc ? rc : mp_buf_puts(b, i + 1 == MP_GPU_TOOL_COUNT ? "    }\n" : "    },\n");
    }
    rc = rc ? rc : mp_buf_puts(b, "  },\n  \"notes\": [");
    for (int i = 0; i < info->nnotes && !rc; i++) {
        rc = mp_buf_puts(b, i ? ", " : "");
        rc = rc ? rc : mp_json_str(b, info->notes[i], strlen(info->notes[i]));
    }
    rc = rc ? rc : mp_buf_puts(b, "]\n}\n");
    return rc;
}
