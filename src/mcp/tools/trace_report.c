/* MCP tool trace_report: TraceLens's performance report of one trace
 * (src/tracelens, mp_report_build): the CSV sheets and report.html written to
 * output_dir, the GPU timeline, time by category and the terminal summary
 * returned. */
#include <stdio.h>
#include <string.h>

#include <magpie/roofline.h>
#include <magpie/tracelens.h>

#include "../mcp_int.h"

static json_t *timeline_json(const struct mp_gpu_timeline *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "computation_us", json_real(t->computation));
    json_object_set_new(o, "exposed_comm_us", json_real(t->exposed_comm));
    json_object_set_new(o, "exposed_memcpy_us", json_real(t->exposed_memcpy));
    json_object_set_new(o, "busy_us", json_real(t->busy));
    json_object_set_new(o, "idle_us", json_real(t->idle));
    json_object_set_new(o, "total_us", json_real(t->total));
    json_object_set_new(o, "total_comm_us", json_real(t->total_comm));
    json_object_set_new(o, "total_memcpy_us", json_real(t->total_memcpy));
    return o;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    const char *trace = mcp_str(args, "trace_path");
    const char *out_dir = mcp_str(args, "output_dir");
    const char *arch_name = mcp_str(args, "gpu_arch");
    struct mp_report_opts o;
    mp_report_opts_defaults(&o);
    o.inference = mcp_bool(args, "inference");
    o.kernel_summary = mcp_bool(args, "kernel_summary");
    o.short_kernel_study = mcp_bool(args, "short_kernel_study");
    o.include_unlinked = mcp_bool(args, "include_unlinked_kernels");
    o.group_by_parent_module = o.inference && mcp_bool(args, "group_by_parent_module");
    o.on_progress = mcp_trace_progress;
    o.progress_user = w;
    struct mp_roofline_arch arch;
    if (arch_name && strcmp(arch_name, "auto") != 0) {
        if (mp_roofline_arch_builtin(arch_name, &arch) != 0) {
            char names[512] = "";
            size_t off = 0;
            for (const char *const *n = mp_roofline_arch_builtin_names(); *n && off < 480; n++)
                off += (size_t)snprintf(names + off, sizeof(names) - off, " %s", *n);
            return mcp_fail(result, "unknown gpu_arch '%s'; built-in:%s", arch_name, names);
        }
        o.arch = &arch;
    }
    o.arch_auto = arch_name && strcmp(arch_name, "auto") == 0;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_report *r = NULL;
    int rc = mp_report_build(trace, &o, &r, &d);
    if (rc)
        return mcp_fail_diag(result, "trace report failed", &d);
    rc = mp_report_write_csvs(r, out_dir, &d);
    char html[4200];
    const char *base = strrchr(trace, '/');
    snprintf(html, sizeof(html), "%s/report.html", out_dir);
    if (!rc)
        rc = mp_report_write_html(r, html, base ? base + 1 : trace, &d);
    if (rc) {
        mp_report_free(r);
        return mcp_fail_diag(result, "cannot write the report", &d);
    }
    json_t *j = json_object();
    json_object_set_new(j, "trace", json_string(trace));
    json_object_set_new(j, "output_dir", json_string(out_dir));
    json_object_set_new(j, "events", json_integer((json_int_t)r->events));
    json_object_set_new(j, "gpu_events", json_integer((json_int_t)r->gpu_events));
    json_object_set_new(j, "gpu_events_linked", json_integer((json_int_t)r->gpu_linked));
    json_object_set_new(j, "gpu_arch", r->has_arch ? json_string(r->arch_name) : json_null());
    json_object_set_new(j, "gpu_timeline", timeline_json(&r->timeline));
    json_t *cats = json_array();
    for (size_t i = 0; i < r->n_cats; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "category", json_string(r->cats[i].name));
        json_object_set_new(c, "kernel_time_ms", json_real(r->cats[i].ms));
        json_object_set_new(c, "count", json_integer((json_int_t)r->cats[i].count));
        json_array_append_new(cats, c);
    }
    json_object_set_new(j, "categories", cats);
    json_t *files = json_array();
    for (size_t i = 0; i < r->n; i++) {
        char p[4400];
        snprintf(p, sizeof(p), "%s/%s.csv", out_dir, r->sheets[i].name);
        json_array_append_new(files, json_string(p));
    }
    json_object_set_new(j, "csv_files", files);
    json_object_set_new(j, "html", json_string(html));
    struct mp_buf sb;
    mp_buf_init(&sb, 0);
    if (mp_report_summary_text(r, (size_t)mcp_int(args, "top_n"), &sb) == 0)
        json_object_set_new(j, "summary_text", json_string(mp_buf_cstr(&sb)));
    mp_buf_fini(&sb);
    mp_report_free(r);
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"trace_path", MT_STR, true, NULL, NULL, 0, 0, "torch-profiler trace (.json or .json.gz)"},
    {"output_dir", MT_STR, true, NULL, NULL, 0, 0, "directory for the CSV sheets and report.html"},
    {"gpu_arch", MT_STR, false, NULL, NULL, 0, 0,
     "roofline columns for a built-in GPU (e.g. H200, MI300X) or \"auto\" (from the trace)"},
    {"inference", MT_BOOL, false, "false", NULL, 0, 0,
     "TraceLens's inference report (module summaries, forward-only sheets)"},
    {"group_by_parent_module", MT_BOOL, false, "false", NULL, 0, 0,
     "inference: parent_module and call_stack columns"},
    {"kernel_summary", MT_BOOL, false, "false", NULL, 0, 0, "also the kernel_summary sheet"},
    {"short_kernel_study", MT_BOOL, false, "false", NULL, 0, 0, "also the short-kernel sheets"},
    {"include_unlinked_kernels", MT_BOOL, false, "false", NULL, 0, 0,
     "count GPU kernels without a CPU launcher in the timeline"},
    {"top_n", MT_INT, false, "10", NULL, 0, 0, "rows in summary_text (0 = all)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_trace_report = {
    .name = "trace_report",
    .title = "TraceLens performance report",
    .desc = "TraceLens-compatible performance report of one torch-profiler trace: GPU timeline "
            "(busy, computation, exposed communication and memcpy, idle), ops by category, "
            "per-op FLOPs/bytes and roofline; CSV sheets and report.html in output_dir.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA,
    .result_desc = "`{trace, output_dir, events, gpu_events, gpu_events_linked, gpu_arch, "
                   "gpu_timeline{computation_us, exposed_comm_us, exposed_memcpy_us, busy_us, "
                   "idle_us, total_us, ...}, categories[{category, kernel_time_ms, count}], "
                   "csv_files, html, summary_text}`.",
};
