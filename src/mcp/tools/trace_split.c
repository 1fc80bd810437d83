/* MCP tool trace_split: TraceLens's inference-trace splitter (src/trace
 * split.c): a trace cut at its step annotations into sub-traces (steady-state
 * windows, single steps), with execution_details.json/.csv in output_dir. */
#include <stdio.h>

#include <magpie/trace_steps.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    struct mp_trace_split_opts o = {
        .out_dir = mcp_str(args, "output_dir"),
        .iterations = mcp_str(args, "iterations"),
        .store_single_iteration = mcp_bool(args, "store_single_iteration"),
        .find_steady_state = mcp_bool(args, "find_steady_state"),
        .divide_phases = mcp_bool(args, "divide_phases"),
        .num_steps = (int)mcp_int(args, "num_steps"),
        .on_progress = mcp_trace_progress,
        .progress_user = w,
    };
    if (o.num_steps < 1)
        return mcp_fail(result, "num_steps must be >= 1");
    json_t *v;
    if ((v = json_object_get(args, "concurrency")) && !json_is_null(v)) {
        o.workload.have_conc = true;
        o.workload.conc = (int64_t)json_integer_value(v);
    }
    if ((v = json_object_get(args, "output_len")) && !json_is_null(v)) {
        o.workload.have_osl = true;
        o.workload.osl = json_number_value(v);
    }
    if ((v = json_object_get(args, "random_range_ratio")) && !json_is_null(v)) {
        o.workload.have_r = true;
        o.workload.r = json_number_value(v);
    }
    struct mp_trace_split_result r;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_trace_split(mcp_str(args, "trace_path"), &o, &r, &d);
    if (rc) {
        mp_trace_split_result_fini(&r);
        return mcp_fail_diag(result, "trace split failed", &d);
    }
    json_t *j = json_object(), *files = json_array();
    json_object_set_new(j, "output_dir", json_string(o.out_dir));
    json_object_set_new(j, "step_annotations", json_integer((json_int_t)r.nroots));
    json_object_set_new(j, "events_in", json_integer((json_int_t)r.events_in));
    for (size_t i = 0; i < r.n; i++) {
        const struct mp_trace_split_entry *e = &r.entries[i];
        json_t *f = json_object();
        json_object_set_new(f, "idx", json_integer(e->idx));
        json_object_set_new(f, "output_path", json_string(e->output_path));
        json_object_set_new(f, "event_count", json_integer(e->event_count));
        json_object_set_new(f, "num_gpu_events", json_integer(e->num_gpu_events));
        json_object_set_new(f, "gpu_duration_us", json_real(e->gpu_duration));
        json_object_set_new(f, "gpu_busy_duration_us", json_real(e->gpu_busy_duration));
        json_object_set_new(f, "steps", json_integer((json_int_t)e->nsteps));
        json_object_set_new(f, "num_prefill", json_integer(e->phase.num_prefill));
        json_object_set_new(f, "num_prefilldecode", json_integer(e->phase.num_prefilldecode));
        json_object_set_new(f, "num_decode", json_integer(e->phase.num_decode));
        json_array_append_new(files, f);
    }
    json_object_set_new(j, "files", files);
    char p[4200];
    snprintf(p, sizeof(p), "%s/execution_details.json", o.out_dir);
    json_object_set_new(j, "execution_details", json_string(p));
    mp_trace_split_result_fini(&r);
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"trace_path", MT_STR, true, NULL, NULL, 0, 0, "inference trace with step annotations"},
    {"output_dir", MT_STR, true, NULL, NULL, 0, 0, "directory for the sub-traces"},
    {"iterations", MT_STR, false, NULL, NULL, 0, 0, "\"all\" (null), \"N\" or \"A:B\""},
    {"store_single_iteration", MT_BOOL, false, "false", NULL, 0, 0, "one file per step"},
    {"find_steady_state", MT_BOOL, false, "true", NULL, 0, 0,
     "mixed / decode-only / prefill-decode steady-state windows"},
    {"divide_phases", MT_BOOL, false, "false", NULL, 0, 0,
     "contiguous same-phase runs into sub-folders"},
    {"num_steps", MT_INT, false, "32", NULL, 0, 0, "steps per steady-state window"},
    {"concurrency", MT_INT, false, NULL, NULL, 0, 0, "workload concurrency (window choice)"},
    {"output_len", MT_NUM, false, NULL, NULL, 0, 0, "workload output length (window choice)"},
    {"random_range_ratio", MT_NUM, false, NULL, NULL, 0, 0, "workload length spread"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_trace_split = {
    .name = "trace_split",
    .title = "Split an inference trace",
    .desc = "Split an inference torch-profiler trace at its step annotations (vLLM, SGLang, "
            "ATOM) into steady-state windows and single steps, as TraceLens's splitter; "
            "gzip sub-traces and execution_details.json/.csv in output_dir.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA,
    .result_desc = "`{output_dir, step_annotations, events_in, files[{idx, output_path, "
                   "event_count, num_gpu_events, gpu_duration_us, gpu_busy_duration_us, steps, "
                   "num_prefill, num_prefilldecode, num_decode}], execution_details}`.",
};
