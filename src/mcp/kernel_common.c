/* The shared body of the analyze and compare tools: build the kernel config
 * through the config loader (kcfg.c), run mp_kernel_analyze / _compare in
 * this worker and read back the report the library wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <magpie/kernel.h>
#include <magpie/proc.h>

#include "kernel_common_int.h"

json_t *mcp_kentry_config(const struct mcp_kentry *e)
{
    json_t *kc = json_object();
    json_object_set_new(kc, "kernel_id", json_string(e->kernel_id));
    json_object_set_new(kc, "kernel_type", json_string(e->kernel_type));
    json_object_set_new(kc, "source_file_path", json_string(e->kernel_path));
    json_object_set_new(kc, "testcase_command",
                        e->testcase_command ? json_string(e->testcase_command) : json_null());
    json_object_set_new(kc, "working_dir", json_string(e->working_dir ? e->working_dir : ""));
    return kc;
}

int mcp_kernel_check_path(const char *field, const char *path, bool dir, json_t **result)
{
    struct stat st;
    if (!path || !*path)
        return mcp_fail(result, "%s: no %s given", field, dir ? "directory" : "file");
    if (stat(path, &st) != 0)
        return mcp_fail(result, "%s: no such %s: %s", field, dir ? "directory" : "file", path);
    if (dir && !S_ISDIR(st.st_mode))
        return mcp_fail(result, "%s: not a directory: %s", field, path);
    if (!dir && S_ISDIR(st.st_mode))
        return mcp_fail(result, "%s: a directory, not a file: %s", field, path);
    return 0;
}

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
    /* environment: local, or container (the library runs every step in
     * docker/podman run); a Ray job is submitted by `magpie analyze -e ray`,
     * not from inside this worker */
    const char *env = mcp_str(args, "environment");
    if (env && strcmp(env, "ray") == 0) {
        mp_kernel_config_fini(&cfg);
        return mcp_fail(result,
                        "environment 'ray' is not available through the %s tool; run `magpie %s "
                        "-e ray` (the CLI submits the evaluation as a Ray job)",
                        compare ? "compare" : "analyze", compare ? "compare" : "analyze");
    }
    if (env && *env)
        snprintf(cfg.scheduler.environment, sizeof(cfg.scheduler.environment), "%s", env);
    const char *image = mcp_str(args, "docker_image");
    if (image && *image && mp_proc_image_check(image, "docker_image", &d)) {
        mp_kernel_config_fini(&cfg);
        return mcp_fail(result, "docker_image: %s", d.msg);
    }
    if (image && *image) {
        free(cfg.scheduler.docker_image);
        cfg.scheduler.docker_image = mp_strdup(image);
    }
    const char *timing = compare ? mcp_str(args, "timing") : NULL;
    if (timing && *timing)
        snprintf(cfg.compare.timing, sizeof(cfg.compare.timing), "%s", timing);
    json_t *me = compare ? json_object_get(args, "min_effect_pct") : NULL;
    if (json_is_number(me)) /* checked by the tool */
        cfg.compare.threshold = json_number_value(me) / 100;
    struct mp_kernel_opts o = {
        .output_dir = mcp_str(args, "output_dir"),
        .no_perf = !mcp_bool(args, "check_performance"),
        .baseline = compare ? (int)mcp_int(args, "baseline_index") : 0,
        /* the server's warm runner pool (call.c): warm children between calls */
        .warm_socket = getenv("MAGPIE_WARM_SOCKET"),
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
