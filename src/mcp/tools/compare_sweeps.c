/* MCP tool compare_sweeps: `magpie benchmark sweep compare A B`: two sweeps
 * point by point (loadgen/sweep_cmp.c), the shift of the knee and of the SLA
 * point, optionally the page with both frontiers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/sweep.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_sweep *a = NULL, *b = NULL;
    struct mp_sweep_cmp *cmp = NULL;
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    o.min_effect_pct = mcp_num(args, "min_effect_pct");
    o.allow_different = mcp_bool(args, "allow_different");
    int rc = mp_sweep_load(mcp_str(args, "baseline"), &a, &d);
    if (!rc)
        rc = mp_sweep_load(mcp_str(args, "candidate"), &b, &d);
    if (!rc)
        rc = mp_sweep_compare(a, b, &o, &cmp, &d);
    struct mp_buf out;
    mp_buf_init(&out, 0);
    const char *html = mcp_str(args, "html");
    if (rc) {
        rc = mcp_fail_diag(result, "compare_sweeps", &d);
    } else if (html &&
               (mp_sweep_cmp_html(cmp, &out) ||
                mp_fs_write_atomic(html, mp_buf_cstr(&out), strlen(mp_buf_cstr(&out)), &d))) {
        rc = mcp_fail_diag(result, "html", &d);
    } else {
        mp_buf_reset(&out);
        json_t *j = mp_sweep_cmp_json(cmp, &out) ? NULL : mcp_parse_buf(&out);
        mp_buf_reset(&out);
        if (!j || mp_sweep_cmp_text(cmp, &out)) {
            json_decref(j);
            rc = mcp_fail(result, "out of memory");
        } else {
            json_object_set_new(j, "text", json_string(mp_buf_cstr(&out)));
            json_object_set_new(j, "html", html ? json_string(html) : json_null());
            *result = j;
        }
    }
    mp_buf_fini(&out);
    mp_sweep_cmp_free(cmp);
    mp_sweep_free(a);
    mp_sweep_free(b);
    return rc;
}

static const struct mcp_param params[] = {
    {"baseline", MT_STR, true, NULL, NULL, 0, 0, "a sweep directory or its sweep.json"},
    {"candidate", MT_STR, true, NULL, NULL, 0, 0, "a sweep directory or its sweep.json"},
    {"html", MT_STR, false, NULL, NULL, 0, 0, "also write the page with both frontiers here"},
    {"min_effect_pct", MT_NUM, false, "1", NULL, 0, 0, "changes within +-this % are noise"},
    {"allow_different", MT_BOOL, false, "false", NULL, 0, 0,
     "compare even when the workloads differ (the differences are listed)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_compare_sweeps = {
    .name = "compare_sweeps",
    .title = "Compare two serving sweeps",
    .desc = "Two sweeps (benchmark_sweep outputs) point by point with the statistics of "
            "benchmark compare (paired Student t when both come from one interleaved run), "
            "and how far the saturation knee and the SLA point moved, with the interval "
            "their brackets allow.",
    .params = params,
    .run = run,
    .flags = 0,
    .result_desc = "`{baseline, candidate, paired, knee{baseline, candidate, ratio, "
                   "ratio_interval}, sla_point{...}, points[{point, compare}], text, html}`.",
};
