/* MCP tool compare_benchmark_reports: the TraceLens report comparison
 * (`magpie trace compare`, src/tracelens/report_compare.c) of the rank-0 reports
 * of two or more benchmark workspaces (their tracelens_rank0_csvs/, else
 * tracelens_rank0_report.xlsx), the
 * first being the baseline, written as CSV files or one workbook, with each
 * run's headline metrics from its benchmark_report.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/tracelens_compare.h>

#include "../bench_ws_int.h"

static json_t *run_summary(const char *ws, const char *label, json_t *errors)
{
    json_t *s = json_object();
    json_object_set_new(s, "workspace", json_string(ws));
    json_object_set_new(s, "label", json_string(label));
    char err[600];
    json_t *o = mcp_ws_summary(ws, false, err, sizeof(err));
    static const char *const keys[] = {"framework", "model", "throughput", "latency"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = o ? json_object_get(o, keys[i]) : NULL;
        json_object_set(s, keys[i], v ? v : json_null());
    }
    if (!o) {
        char msg[700];
        snprintf(msg, sizeof(msg), "%s: no benchmark report (%s)", label, err);
        json_array_append_new(errors, json_string(msg));
    }
    json_decref(o);
    return s;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    json_t *wsl = json_object_get(args, "workspace_dirs");
    json_t *lab = json_object_get(args, "labels");
    size_t n = json_array_size(wsl);
    if (json_is_array(lab) && json_array_size(lab) != n)
        return mcp_fail(result, "labels has %zu entries for %zu workspaces", json_array_size(lab),
                        n);
    const char *outdir = mcp_str(args, "output_dir");
    const char *fmt = mcp_str(args, "export_format");
    bool excel = fmt && !strcmp(fmt, "excel");
    char **dirs = calloc(n ? n : 1, sizeof(*dirs));
    const char **cdirs = calloc(n ? n : 1, sizeof(*cdirs));
    const char **labels = calloc(n ? n : 1, sizeof(*labels));
    char **deflab = calloc(n ? n : 1, sizeof(*deflab));
    if (!dirs || !cdirs || !labels || !deflab) {
        free(dirs);
        free(cdirs);
        free(labels);
        free(deflab);
        return mcp_fail(result, "out of memory");
    }
    json_t *errors = json_array(), *sums = json_array();
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const char *ws = json_string_value(json_array_get(wsl, i));
        size_t l = strlen(ws) + 32;
        dirs[i] = malloc(l);
        if (!dirs[i]) {
            ok = false;
            break;
        }
        snprintf(dirs[i], l, "%s/tracelens_rank0_csvs", ws);
        if (!mp_fs_is_dir(dirs[i])) {
            /* a run with export_format excel has the workbook instead */
            snprintf(dirs[i], l, "%s/tracelens_rank0_report.xlsx", ws);
            if (!mp_fs_exists(dirs[i]))
                snprintf(dirs[i], l, "%s/tracelens_rank0_csvs", ws);
        }
        cdirs[i] = dirs[i];
        if (json_is_array(lab)) {
            labels[i] = json_string_value(json_array_get(lab, i));
        } else {
            /* the workspace's directory name */
            size_t tl = strlen(ws);
            while (tl > 1 && ws[tl - 1] == '/')
                tl--;
            size_t b = tl;
            while (b > 0 && ws[b - 1] != '/')
                b--;
            deflab[i] = mp_strndup(ws + b, tl - b);
            if (!deflab[i]) {
                ok = false;
                break;
            }
            labels[i] = deflab[i];
        }
        json_array_append_new(sums, run_summary(ws, labels[i], errors));
        if (!mp_fs_exists(dirs[i])) {
            char msg[4200];
            snprintf(msg, sizeof(msg),
                     "%s: no tracelens_rank0_csvs/ or tracelens_rank0_report.xlsx in %s", labels[i],
                     ws);
            json_array_append_new(errors, json_string(msg));
            ok = false;
        }
    }
    json_t *files = json_array();
    if (ok) {
        struct mp_tlcmp_opts o = {.reports = cdirs, .n_reports = n, .names = labels};
        struct mp_tlcmp_result *r = NULL;
        struct mp_diag d;
        mp_diag_clear(&d);
        int rc = mp_tlcmp_build(&o, &r, &d);
        if (!rc)
            rc = mp_fs_mkdirs(outdir, &d);
        char path[4200];
        if (!rc && excel) {
            snprintf(path, sizeof(path), "%s/comparison.xlsx", outdir);
            rc = mp_tlcmp_write_xlsx(r, path, &d);
            if (!rc)
                json_array_append_new(files, json_string(path));
        } else if (!rc) {
            rc = mp_tlcmp_write_csvs(r, outdir, &d);
            for (size_t i = 0; !rc && i < r->n; i++) {
                snprintf(path, sizeof(path), "%s/%s.csv", outdir, r->names[i]);
                json_array_append_new(files, json_string(path));
            }
        }
        if (rc) {
            char msg[1200];
            mp_diag_format(&d, msg, sizeof(msg));
            json_array_append_new(errors, json_string(msg));
            ok = false;
        }
        mp_tlcmp_free(r);
    }
    for (size_t i = 0; i < n; i++) {
        free(dirs[i]);
        free(deflab[i]);
    }
    free(dirs);
    free(cdirs);
    free(labels);
    free(deflab);
    json_t *res = json_object();
    json_object_set_new(res, "success", json_boolean(ok));
    json_object_set_new(res, "output_dir", json_string(outdir));
    json_object_set_new(res, "output_files", files);
    json_object_set_new(res, "run_summaries", sums);
    json_object_set_new(res, "errors", errors);
    *result = res;
    return 0;
}

static const struct mcp_param params[] = {
    {"workspace_dirs", MT_STRLIST, true, NULL, NULL, 2, 0,
     "benchmark workspaces, each with tracelens_rank0_csvs/ or tracelens_rank0_report.xlsx (at "
     "least 2; the first is the baseline)"},
    {"labels", MT_STRLIST, false, NULL, NULL, 0, 0,
     "one label per workspace (default: the workspace directory names)"},
    {"output_dir", MT_STR, false, "\"./results/comparisons\"", NULL, 0, 0,
     "where the comparison goes"},
    {"export_format", MT_STR, false, "\"csv\"", "csv|excel", 0, 0,
     "csv: one <sheet>.csv per comparison sheet; excel: comparison.xlsx."},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_compare_benchmark_reports = {
    .name = "compare_benchmark_reports",
    .title = "Compare benchmark TraceLens reports",
    .desc = "TraceLens's report comparison (compare_perf_reports_pytorch) of the rank-0 "
            "TraceLens reports of two or more benchmark workspaces, the first as baseline: "
            "per-sheet differences (<col>__<label>_diff, _pct) and the ops only in one run, "
            "with each run's throughput and latency.",
    .params = params,
    .run = run,
    .flags = 0,
    .result_desc = "`{success, output_dir, output_files, run_summaries[{workspace, label, "
                   "framework, model, throughput, latency}], errors}`.",
};
