/* The shared body of the analyze and compare tools: build the kernel config
 * through the config loader (kcfg.c), run mp_kernel_analyze / _compare in
 * this worker and read back the report the library wrote. */
#include "kernel_common.h"

#include <stdio.h>
#include <string.h>

#include <magpie/kernel.h>

int mcp_kernel_run(struct mcp_wctx *w, json_t *args, const char *yaml, bool compare,
                   json_t **report, json_t **result)
{
    struct mp_kernel_config cfg;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mcp_kernel_config_build(&cfg, args, yaml, &d);
    if (rc) {
        mp_kernel_config_fini(&cfg);
        return mcp_fail_diag(result, "invalid kernel configuration", &d);
    }
    const char *env = mcp_str(args, "environment");
    if (env && strcmp(env, "local") != 0)
        fprintf(stderr,
                "magpie: warning: environment '%s' is not supported for kernel "
                "evaluation yet; running locally\n",
                env);
    struct mp_kernel_opts o = {
        .output_dir = mcp_str(args, "output_dir"),
        .no_perf = !mcp_bool(args, "check_performance"),
        .baseline = compare ? (int)mcp_int(args, "baseline_index") : 0,
        .progress = mcp_line_progress,
        .user = w,
    };
    struct mp_kernel_run run;
    rc = compare ? mp_kernel_compare(&cfg, &o, &run, &d) : mp_kernel_analyze(&cfg, &o, &run, &d);
    mp_kernel_config_fini(&cfg);
    if (rc) {
        mp_kernel_run_fini(&run);
        return mcp_fail_diag(result, compare ? "Comparison failed" : "Analysis failed", &d);
    }
    json_error_t je;
    json_t *rep = run.report_path ? json_load_file(run.report_path, 0, &je) : NULL;
    if (!rep) {
        mp_kernel_run_fini(&run);
        return mcp_fail(result, "cannot read the report %s",
                        run.report_path ? run.report_path : "(none)");
    }
    json_object_set_new(rep, "report_path", json_string(run.report_path));
    if (run.html_path)
        json_object_set_new(rep, "html_path", json_string(run.html_path));
    mp_kernel_run_fini(&run);
    *report = rep;
    return 0;
}
