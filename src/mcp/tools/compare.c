/* MCP tool compare: two or more kernels ranked against a baseline (src/kernel
 * mp_kernel_compare): correctness gate, interleaved timing, speedup CIs and
 * verdicts, answered as Magpie's ComparisonResult plus kernel_configs. */
#include <stdio.h>
#include <string.h>

#include "../kernel_common_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    json_t *paths = json_object_get(args, "kernel_paths");
    json_t *tcs = json_object_get(args, "testcase_commands");
    size_t n = json_array_size(paths);
    if (json_is_array(tcs) && json_array_size(tcs) != n)
        return mcp_fail(result,
                        "kernel_paths and testcase_commands must have the same length "
                        "(%zu and %zu)",
                        n, json_array_size(tcs));
    long long base = mcp_int(args, "baseline_index");
    if (base < 0 || (size_t)base >= n)
        return mcp_fail(result, "baseline_index %lld out of range for %zu kernels", base, n);
    /* missing files and directories are named here, before anything runs */
    for (size_t i = 0; i < n; i++) {
        char field[48];
        snprintf(field, sizeof(field), "kernel_paths[%zu]", i);
        if (mcp_kernel_check_path(field, json_string_value(json_array_get(paths, i)), false,
                                  result))
            return 1;
    }
    json_t *me = json_object_get(args, "min_effect_pct");
    if (json_is_number(me) && !(json_number_value(me) >= 0 && json_number_value(me) < 100))
        return mcp_fail(result, "min_effect_pct must be in [0, 100), got %g",
                        json_number_value(me));
    const char *wd = mcp_str(args, "working_dir");
    if (wd && *wd && mcp_kernel_check_path("working_dir", wd, true, result))
        return 1;
    struct mp_buf y;
    mp_buf_init(&y, 0);
    int rc = mp_buf_puts(&y, "kernels:\n");
    struct mp_diag d;
    mp_diag_clear(&d);
    json_t *configs = json_array();
    for (size_t i = 0; i < n && !rc; i++) {
        struct mcp_kentry e;
        mcp_kentry_from_args(&e, args);
        e.kernel_path = json_string_value(json_array_get(paths, i));
        e.testcase_command = json_is_array(tcs) ? json_string_value(json_array_get(tcs, i)) : NULL;
        const char *b = strrchr(e.kernel_path, '/');
        b = b ? b + 1 : e.kernel_path;
        const char *dot = strrchr(b, '.');
        char id[300];
        snprintf(id, sizeof(id), "kernel_%zu_%.*s", i,
                 (int)(dot && dot != b ? (size_t)(dot - b) : strlen(b)), b);
        e.kernel_id = id;
        rc = mcp_kernel_entry_yaml(&e, &y, "  ", &d);
        if (rc == MP_EINVAL && strcmp(d.field, "kernel_path") == 0)
            snprintf(d.field, sizeof(d.field), "kernel_paths[%zu]", i);
        json_t *kc = mcp_kentry_config(&e);
        json_object_set_new(kc, "is_baseline", json_boolean((long long)i == base));
        json_array_append_new(configs, kc);
    }
    if (rc) {
        mp_buf_fini(&y);
        json_decref(configs);
        return mcp_fail_diag(result, "invalid kernel configuration", &d);
    }
    json_t *rep = NULL;
    rc = mcp_kernel_run(w, args, mp_buf_cstr(&y), true, &rep, result);
    mp_buf_fini(&y);
    if (rc) {
        json_decref(configs);
        return rc;
    }
    json_t *res = json_object_get(rep, "results");
    json_t *r = json_is_object(res) ? json_deep_copy(res) : json_object();
    json_object_set_new(r, "kernel_configs", configs);
    json_object_set(r, "report_path", json_object_get(rep, "report_path"));
    json_decref(rep);
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"kernel_paths", MT_STRLIST, true, NULL, NULL, 2, 0, "kernel source files (at least 2)"},
    {"testcase_commands", MT_STRLIST, false, NULL, NULL, 0, 0,
     "one testcase command per kernel (Magpie requires them; magpie also accepts reference "
     "instead)"},
    {"baseline_index", MT_INT, false, "0", NULL, 0, 0, "index of the baseline kernel"},
    {"working_dir", MT_STR, false, "\"\"", NULL, 0, 0, "\"\" = each kernel's directory"},
    {"timing", MT_STR, false, "\"sequential\"", "sequential|fixed", 0, 0,
     "sequential: one warm process, each candidate timed until its speedup interval decides; "
     "fixed: a process per kernel for correctness, every kernel timed to its noise target"},
    {"min_effect_pct", MT_NUM, false, NULL, NULL, 0, 0,
     "decision band in percent: a speedup within +-this is SAME (default 1, "
     "compare.threshold)"},
    MCP_KERNEL_SHARED_PARAMS,
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_compare = {
    .name = "compare",
    .title = "Compare kernels",
    .desc = "Rank two or more kernel implementations against a baseline: correctness gate, "
            "interleaved timing rounds, speedup with a 95% CI and a FASTER / SLOWER / SAME / "
            "INCONCLUSIVE verdict per candidate. Writes compare_report.json.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_WARM,
    .result_desc = "`{kernel_results[...], comparison_metrics{correctness, all_correct, "
                   "perf_scores, speedup_vs_baseline, verdicts, alpha, threshold}, baseline, "
                   "winner, rankings, summary, kernel_configs[{kernel_id, kernel_type, "
                   "source_file_path, testcase_command, working_dir, is_baseline}], "
                   "report_path}`.",
};
