/* MCP tool gap_analysis: Magpie's gap analysis of a torch-profiler trace
 * directory (src/gap/gap.c): top kernels by GPU time over a window,
 * CSVs written to output_dir. Magpie's MCP defaults differ from its CLI:
 * no category filter and no ignore list unless given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/gap.h>

#include "../mcp_int.h"

static char *parent_dir(const char *p)
{
    char *abs = realpath(p, NULL);
    char *s = abs ? abs : mp_strdup(p);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/')
        s[--n] = 0;
    char *slash = strrchr(s, '/');
    if (slash && slash != s)
        *slash = 0;
    else if (slash)
        slash[1] = 0;
    else
        snprintf(s, n + 1, ".");
    return s;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    const char *trace_dir = mcp_str(args, "trace_dir");
    struct mp_gap_config cfg;
    mp_gap_config_defaults(&cfg);
    cfg.start_pct = mcp_num(args, "start_pct");
    cfg.end_pct = mcp_num(args, "end_pct");
    cfg.top_k = (int)mcp_int(args, "top_k");
    cfg.min_duration_us = mcp_num(args, "min_duration_us");
    json_t *cats = json_object_get(args, "categories");
    json_t *ign = json_object_get(args, "ignore_categories");
    cfg.n_categories =
        json_is_array(cats) ? mcp_strs(cats, cfg.categories, MP_GAP_MAX_PATTERNS) : 0;
    cfg.categories_all = cfg.n_categories == 0;
    cfg.n_ignore = json_is_array(ign) ? mcp_strs(ign, cfg.ignore, MP_GAP_MAX_PATTERNS) : 0;
    cfg.skip_bad_ranks = true;
    cfg.group_normalized = strcmp(mcp_str(args, "group_by"), "normalized") == 0;
    cfg.on_progress = mcp_trace_progress;
    cfg.progress_user = w;
    if (cfg.start_pct < 0 || cfg.end_pct > 100 || cfg.start_pct >= cfg.end_pct)
        return mcp_fail(result, "start_pct and end_pct must satisfy 0 <= start < end <= 100");
    if (cfg.top_k < 0)
        return mcp_fail(result, "top_k must be >= 0");
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gap_result *res = NULL;
    int rc = mp_gap_analyze(trace_dir, &cfg, &res, &d);
    if (rc)
        return mcp_fail_diag(result, "gap analysis failed", &d);
    const char *od = mcp_str(args, "output_dir");
    char *out_dir = od ? mp_strdup(od) : parent_dir(trace_dir);
    char gap_dir[4200], csv_path[4300];
    snprintf(gap_dir, sizeof(gap_dir), "%s/gap_analysis", out_dir ? out_dir : ".");
    snprintf(csv_path, sizeof(csv_path), "%s/gap_analysis.csv", gap_dir);
    free(out_dir);
    bool wrote = false;
    if (res->n_merged > 0) {
        rc = mp_gap_write_csv(res, &cfg, gap_dir, true, &d);
        if (rc) {
            mp_gap_result_free(res);
            return mcp_fail_diag(result, "cannot write the gap analysis CSVs", &d);
        }
        wrote = true;
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    rc = mp_gap_json(res, &cfg, wrote ? csv_path : NULL, gap_dir, &b);
    json_t *j = rc ? NULL : mcp_parse_buf(&b);
    mp_buf_fini(&b);
    size_t n_ranks = res->n_ranks;
    json_t *rank_csvs = json_array(), *errors = json_array();
    for (size_t i = 0; i < res->n_ranks; i++) {
        if (res->ranks[i].error)
            json_array_append_new(errors, json_string(res->ranks[i].error));
        if (wrote && n_ranks > 1 && !res->ranks[i].error) {
            char p[4400];
            snprintf(p, sizeof(p), "%s/gap_analysis_rank%d.csv", gap_dir, res->ranks[i].rank);
            json_array_append_new(rank_csvs, json_string(p));
        }
    }
    bool empty = res->n_merged == 0;
    mp_gap_result_free(res);
    if (!j) {
        json_decref(rank_csvs);
        json_decref(errors);
        return mcp_fail(result, "gap analysis: cannot format the result");
    }
    /* Magpie's keys first; the library's object carries them plus stats. */
    if (!json_object_get(j, "num_ranks"))
        json_object_set_new(j, "num_ranks", json_integer((json_int_t)n_ranks));
    json_object_set_new(j, "output_dir", json_string(gap_dir));
    json_t *le = json_object_get(j, "errors");
    if (json_is_array(le))
        json_array_extend(le, errors);
    else
        json_object_set(j, "errors", errors);
    json_decref(errors);
    if (wrote) {
        json_object_set_new(j, "csv_file", json_string(csv_path));
        if (json_array_size(rank_csvs))
            json_object_set(j, "rank_csv_files", rank_csvs);
    }
    json_decref(rank_csvs);
    if (empty)
        json_object_set_new(j, "warning", json_string("No kernel events found in traces."));
    if (mcp_bool(args, "generate_clamped_traces")) {
        /* Magpie: one window-clamped copy of each rank trace in gap_analysis/ */
        struct mp_gap_clamped cl;
        mp_diag_clear(&d);
        if (mp_gap_clamped_traces(trace_dir, cfg.start_pct, cfg.end_pct, gap_dir, &cl, &d)) {
            json_decref(j);
            return mcp_fail_diag(result, "clamped traces failed", &d);
        }
        json_t *files = json_array();
        for (size_t i = 0; i < cl.n; i++)
            json_array_append_new(files, json_string(cl.paths[i]));
        json_object_set_new(j, "clamped_trace_files", files);
        le = json_object_get(j, "errors");
        for (size_t i = 0; i < cl.n_errors && json_is_array(le); i++)
            json_array_append_new(le, json_string(cl.errors[i]));
        mp_gap_clamped_fini(&cl);
    }
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"trace_dir", MT_STR, true, NULL, NULL, 0, 0,
     "torch_trace directory (one trace per rank), or a directory containing one"},
    {"start_pct", MT_NUM, false, "0", NULL, 0, 0, "window start, percent of the trace"},
    {"end_pct", MT_NUM, false, "100", NULL, 0, 0, "window end, percent of the trace"},
    {"top_k", MT_INT, false, "20", NULL, 0, 0, "kernels kept in the tables"},
    {"min_duration_us", MT_NUM, false, "0", NULL, 0, 0, "drop events shorter than this"},
    {"categories", MT_STRLIST, false, NULL, NULL, 0, 0,
     "event categories to keep (case-insensitive substrings); null = all"},
    {"ignore_categories", MT_STRLIST, false, NULL, NULL, 0, 0,
     "event categories to drop; null = none"},
    {"output_dir", MT_STR, false, NULL, NULL, 0, 0,
     "where gap_analysis/ is written; null = the parent of trace_dir"},
    {"generate_clamped_traces", MT_BOOL, false, "false", NULL, 0, 0,
     "also write each rank trace clamped to the window (events overlapping it, ts/dur "
     "clipped) as gap_analysis/<stem>_clamped_<start>_<end>.trace.json.gz"},
    {"group_by", MT_STR, false, "\"name\"", "name|normalized", 0, 0,
     "magpie: group kernels by exact name or by normalised family"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_gap_analysis = {
    .name = "gap_analysis",
    .title = "Trace gap analysis",
    .desc = "Top GPU kernels by total time in torch-profiler traces (all ranks merged and per "
            "rank) over a time window, as Magpie's gap analysis; writes "
            "gap_analysis/gap_analysis.csv (+ one CSV per rank).",
    .params = params,
    .run = run,
    .flags = MCP_LONG,
    .result_desc = "`{num_ranks, total_duration_us, top_kernels[{name, calls, total_us, avg_us, "
                   "min_us, max_us, pct, ...}], output_dir, errors, csv_file, rank_csv_files, "
                   "warning, stats, ranks, clamped_trace_files}` (csv_file and rank_csv_files "
                   "when written, warning when no kernel was found, clamped_trace_files with "
                   "generate_clamped_traces).",
};
