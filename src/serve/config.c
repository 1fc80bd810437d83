/* The benchmark YAML (`benchmark:` section, docs/magpie-compat.md) read
 * into struct mp_serve_config with Magpie's defaults. Values of the wrong
 * type or out of range are errors naming file:line:col and the key;
 * unknown keys are warned about (mp_log), as typos silently change what
 * runs otherwise. The config lives with serve rather than in src/config
 * because it embeds the gap-analysis settings (gap module).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <magpie/pipeline.h>
#include <magpie/proc.h>
#include <magpie/serve.h>
#include <magpie/tracelens.h>
#include <magpie/yaml.h>

#include "serve_int.h"

static void check_keys(const struct mp_yaml_node *map, const char *const *known, const char *where)
{
    for (size_t i = 0; map && map->kind == MP_YAML_MAP && i < map->n; i++) {
        const char *k = map->keys[i]->str ? map->keys[i]->str : "";
        bool ok = false;
        for (const char *const *p = known; *p && !ok; p++)
            ok = strcmp(*p, k) == 0;
        if (!ok)
            mp_log(MP_LOG_WARN, "%s:%ld:%ld: unknown key '%s' in %s (ignored)", map->keys[i]->file,
                   map->keys[i]->line, map->keys[i]->col, k, where);
    }
}

static int want_map(const struct mp_yaml_node *n, const char *field, struct mp_diag *d)
{
    if (mp_yaml_is_null(n) || n->kind == MP_YAML_MAP)
        return 0;
    return mp_yaml_error(n, field, d, MP_EINVAL, "expected a mapping, found a %s",
                         mp_yaml_kind_name(n->kind));
}

/* The scalar at key, *s = NULL when absent or null. */
static int read_str(const struct mp_yaml_node *map, const char *key, const char **s,
                    const struct mp_yaml_node **node, struct mp_diag *d)
{
    *s = NULL;
    *node = mp_yaml_get(map, key);
    return mp_yaml_is_null(*node) ? 0 : mp_yaml_str(*node, key, s, d);
}

static int get_str(struct mp_serve_config *c, const struct mp_yaml_node *map, const char *key,
                   const char **out, struct mp_diag *d)
{
    const struct mp_yaml_node *n;
    const char *s;
    int rc = read_str(map, key, &s, &n, d);
    if (rc || !s)
        return rc;
    *out = mp_serve_config_strdup(c, s);
    return *out ? 0 : mp_diag_set(d, MP_ENOMEM, "out of memory");
}

/* docker_image: refused with its line when docker would read it as an
 * option or it cannot be an image name */
static int get_image(struct mp_serve_config *c, const struct mp_yaml_node *map, struct mp_diag *d)
{
    int rc = get_str(c, map, "docker_image", &c->docker_image, d);
    if (rc || !c->docker_image)
        return rc;
    struct mp_diag why;
    mp_diag_clear(&why);
    if (mp_proc_image_check(c->docker_image, NULL, &why))
        return mp_yaml_error(mp_yaml_get(map, "docker_image"), "docker_image", d, MP_EINVAL, "%s",
                             why.msg);
    return 0;
}

static int get_bool(const struct mp_yaml_node *map, const char *key, bool *out, struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(map, key);
    return mp_yaml_is_null(n) ? 0 : mp_yaml_bool(n, key, out, d);
}

static int get_num(const struct mp_yaml_node *map, const char *key, double min, double *out,
                   struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(map, key);
    if (mp_yaml_is_null(n))
        return 0;
    double v;
    int rc = mp_yaml_double(n, key, &v, d);
    if (rc)
        return rc;
    if (v < min)
        return mp_yaml_error(n, key, d, MP_EINVAL, "must be >= %g, not %g", min, v);
    *out = v;
    return 0;
}

static int get_int(const struct mp_yaml_node *map, const char *key, long long min, int *out,
                   struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(map, key);
    if (mp_yaml_is_null(n))
        return 0;
    long long v;
    int rc = mp_yaml_int(n, key, &v, d);
    if (rc)
        return rc;
    if (v < min || v > 1000000000)
        return mp_yaml_error(n, key, d, MP_EINVAL, "must be an integer >= %lld, not %lld", min, v);
    *out = (int)v;
    return 0;
}

/* A list of strings (or one string) into arena copies. */
static int get_strlist(struct mp_serve_config *c, const struct mp_yaml_node *n, const char *key,
                       const char **out, int max, int *count, struct mp_diag *d)
{
    *count = 0;
    if (n->kind == MP_YAML_SCALAR) {
        out[0] = mp_serve_config_strdup(c, n->str);
        *count = 1;
        return 0;
    }
    if (n->kind != MP_YAML_SEQ)
        return mp_yaml_error(n, key, d, MP_EINVAL, "expected a list of strings, found a %s",
                             mp_yaml_kind_name(n->kind));
    for (size_t i = 0; i < n->n; i++) {
        const char *s;
        int rc = mp_yaml_str(n->items[i], key, &s, d);
        if (rc)
            return rc;
        if (*count >= max)
            return mp_yaml_error(n->items[i], key, d, MP_EINVAL, "more than %d entries", max);
        out[(*count)++] = mp_serve_config_strdup(c, s);
    }
    return 0;
}

static int load_envs(struct mp_serve_config *c, const struct mp_yaml_node *n, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "envs", d, MP_EINVAL, "expected a mapping of NAME: value");
    for (size_t i = 0; i < n->n; i++) {
        const char *k = n->keys[i]->str, *v = "";
        char field[160];
        snprintf(field, sizeof(field), "envs.%s", k ? k : "");
        if (!mp_yaml_is_null(n->vals[i])) {
            int rc = mp_yaml_str(n->vals[i], field, &v, d);
            if (rc)
                return rc;
        }
        if (!k || !*k || strchr(k, '='))
            return mp_yaml_error(n->keys[i], "envs", d, MP_EINVAL, "bad variable name");
        /* Python str() of a YAML bool */
        bool bv;
        if (!n->vals[i]->quoted && mp_yaml_bool(n->vals[i], NULL, &bv, NULL) == 0)
            v = bv ? "True" : "False";
        if (mp_serve_config_setenv(c, k, v))
            return mp_yaml_error(n->keys[i], field, d, MP_ENOMEM, "too many envs");
    }
    return 0;
}

static int load_tracelens(struct mp_serve_config *c, const struct mp_yaml_node *tl,
                          struct mp_diag *d)
{
    static const char *const known[] = {"enabled",
                                        "analysis_mode",
                                        "analysis_stages",
                                        "num_steps",
                                        "cli_timeout_seconds",
                                        "auto_patch_runtime",
                                        "tracelens_repo_path",
                                        "extension_wheel_path",
                                        "runtime_patch_image_tag",
                                        "runtime_patch_force_rebuild",
                                        "restore_patches",
                                        "export_format",
                                        "export_csv",
                                        "export_excel",
                                        "perf_report_enabled",
                                        "multi_rank_report_enabled",
                                        "gpu_arch_config",
                                        NULL};
    if (mp_yaml_is_null(tl))
        return 0;
    check_keys(tl, known, "benchmark.profiler.tracelens");
    const char *mode = NULL;
    int rc = get_str(c, tl, "analysis_mode", &mode, d);
    if (rc)
        return rc;
    /* Magpie: "pytorch", alias "classic", selects the legacy flow */
    if (mode && (strcmp(mode, "pytorch") == 0 || strcmp(mode, "classic") == 0))
        c->tracelens_mode = MP_SERVE_TL_PYTORCH;
    else if (mode && strcmp(mode, "inference") != 0)
        return mp_yaml_error(mp_yaml_get(tl, "analysis_mode"), "tracelens.analysis_mode", d,
                             MP_EINVAL,
                             "unknown analysis_mode '%s' (inference, or pytorch / classic)", mode);
    if ((rc = get_int(tl, "num_steps", 1, &c->tracelens_num_steps, d)))
        return rc;
    /* export_format csv|excel; Magpie's legacy export_csv / export_excel
     * booleans count only when export_format is absent */
    const char *fmt = NULL;
    if ((rc = get_str(c, tl, "export_format", &fmt, d)))
        return rc;
    if (fmt && strcmp(fmt, "csv") != 0 && strcmp(fmt, "excel") != 0)
        return mp_yaml_error(mp_yaml_get(tl, "export_format"), "tracelens.export_format", d,
                             MP_EINVAL, "invalid export_format '%s' (csv or excel)", fmt);
    bool xl = false;
    if (!fmt && (rc = get_bool(tl, "export_excel", &xl, d)))
        return rc;
    c->tracelens_excel = fmt ? strcmp(fmt, "excel") == 0 : xl;
    if ((rc = get_bool(tl, "perf_report_enabled", &c->tracelens_perf_report, d)) ||
        (rc = get_bool(tl, "multi_rank_report_enabled", &c->tracelens_multi_rank, d)) ||
        (rc = get_str(c, tl, "gpu_arch_config", &c->tracelens_gpu_arch_config, d)))
        return rc;
    const struct mp_yaml_node *st = mp_yaml_get(tl, "analysis_stages");
    if (mp_yaml_is_null(st))
        return 0;
    const char *items[8];
    int n = 0;
    if ((rc = get_strlist(c, st, "tracelens.analysis_stages", items, 8, &n, d)))
        return rc;
    char list[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "", items[i]);
    int idx[8], ni = 0;
    if (mp_stages_parse_list(list, idx, &ni, NULL))
        return mp_yaml_error(st, "tracelens.analysis_stages", d, MP_EINVAL,
                             "unknown stage in '%s' (prefilldecode, decode, prefill and "
                             "Magpie's aliases)",
                             list);
    c->tracelens_stages = mp_serve_config_strdup(c, list);
    return 0;
}

/* A capture-schedule key from profiler.torch_profiler (Magpie's YAML) or its
 * flat name at the benchmark level (the MCP tool's); both is an error. */
static int pick_key(const struct mp_yaml_node *tp, const char *key, const struct mp_yaml_node *b,
                    const char *flat, const struct mp_yaml_node **map, const char **field,
                    struct mp_diag *d)
{
    const struct mp_yaml_node *a = mp_yaml_is_null(tp) ? NULL : mp_yaml_get(tp, key);
    const struct mp_yaml_node *f = flat ? mp_yaml_get(b, flat) : NULL;
    *map = NULL;
    *field = key;
    if (!mp_yaml_is_null(a) && !mp_yaml_is_null(f))
        return mp_yaml_error(f, flat, d, MP_EINVAL,
                             "given twice: as profiler.torch_profiler.%s and as %s (keep one)", key,
                             flat);
    if (!mp_yaml_is_null(a))
        *map = tp;
    else if (!mp_yaml_is_null(f)) {
        *map = b;
        *field = flat;
    }
    return 0;
}

/* a finite number > 0 (gt0) or >= 0 */
static int get_secs(const struct mp_yaml_node *map, const char *key, bool gt0, double *out,
                    struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(map, key);
    double v;
    int rc = mp_yaml_double(n, key, &v, d);
    if (rc)
        return rc;
    if (!isfinite(v) || v < 0 || (gt0 && v <= 0))
        return mp_yaml_error(n, key, d, MP_EINVAL, "must be a finite number of seconds %s 0",
                             gt0 ? ">" : ">=");
    *out = v;
    return 0;
}

/* profiler.torch_profiler's capture schedule (Magpie's AgentX keys) */
static int load_captures(struct mp_serve_config *c, const struct mp_yaml_node *tp,
                         const struct mp_yaml_node *b, struct mp_diag *d)
{
    static const char *const secs[][3] = {
        {"interval_seconds", "torch_profiler_interval_seconds", "0"},
        {"start_seconds", "torch_profiler_start_seconds", "0"},
        {"duration_seconds", NULL, "1"},
        {"capture_timeout_seconds", NULL, "1"},
        {"flush_timeout_seconds", NULL, "1"}};
    double *const dst[] = {&c->capture.interval_s, &c->capture.start_s, &c->capture.duration_s,
                           &c->capture.capture_timeout_s, &c->capture.flush_timeout_s};
    const struct mp_yaml_node *m;
    const char *f;
    int rc;
    for (size_t i = 0; i < sizeof(dst) / sizeof(dst[0]); i++) {
        if ((rc = pick_key(tp, secs[i][0], b, secs[i][1], &m, &f, d)))
            return rc;
        if (m && (rc = get_secs(m, f, secs[i][2][0] == '1', dst[i], d)))
            return rc;
        c->capture.set |= m && i < 3;
    }
    static const char *const ints[][2] = {{"num_steps", "torch_profiler_steps"},
                                          {"num_profiles", "torch_profiler_count"}};
    int *const idst[] = {&c->capture.num_steps, &c->capture.num_profiles};
    for (size_t i = 0; i < 2; i++) {
        if ((rc = pick_key(tp, ints[i][0], b, ints[i][1], &m, &f, d)))
            return rc;
        if (m && (rc = get_int(m, f, 1, idst[i], d)))
            return rc;
        if (m && i == 1 && *idst[i] > 1000)
            return mp_yaml_error(mp_yaml_get(m, f), f, d, MP_EINVAL,
                                 "at most 1000 captures, not %d", *idst[i]);
        c->capture.set |= m != NULL;
    }
    if ((rc = pick_key(tp, "detailed_annotations", b, "torch_profiler_detailed_annotations", &m, &f,
                       d)))
        return rc;
    return m ? get_bool(m, f, &c->capture.detailed_annotations, d) : 0;
}

static int load_profiler(struct mp_serve_config *c, const struct mp_yaml_node *p, struct mp_diag *d)
{
    static const char *const known[] = {"torch_profiler", "system_profiler", "tracelens",
                                        "gpu_monitor",    "targeted_trace",  NULL};
    int rc = want_map(p, "profiler", d);
    if (rc || mp_yaml_is_null(p))
        return rc;
    check_keys(p, known, "benchmark.profiler");
    const struct mp_yaml_node *tp = mp_yaml_get(p, "torch_profiler");
    const struct mp_yaml_node *sp = mp_yaml_get(p, "system_profiler");
    const struct mp_yaml_node *tl = mp_yaml_get(p, "tracelens");
    const struct mp_yaml_node *gm = mp_yaml_get(p, "gpu_monitor");
    const struct mp_yaml_node *tt = mp_yaml_get(p, "targeted_trace");
    if ((rc = want_map(tp, "profiler.torch_profiler", d)) ||
        (rc = want_map(sp, "profiler.system_profiler", d)) ||
        (rc = want_map(tl, "profiler.tracelens", d)) ||
        (rc = want_map(gm, "profiler.gpu_monitor", d)) ||
        (rc = want_map(tt, "profiler.targeted_trace", d)))
        return rc;
    static const char *const tp_known[] = {"enabled",
                                           "num_steps",
                                           "num_profiles",
                                           "interval_seconds",
                                           "start_seconds",
                                           "detailed_annotations",
                                           "duration_seconds",
                                           "capture_timeout_seconds",
                                           "flush_timeout_seconds",
                                           NULL};
    check_keys(tp, tp_known, "benchmark.profiler.torch_profiler");
    if ((rc = get_bool(tp, "enabled", &c->torch_profiler, d)) ||
        (rc = get_bool(sp, "enabled", &c->system_profiler, d)) ||
        (rc = get_bool(tl, "enabled", &c->tracelens, d)) ||
        (rc = get_bool(gm, "enabled", &c->gpu_monitor, d)) ||
        (rc = get_num(gm, "interval_sec", 0.5, &c->gpu_monitor_interval_s, d)) ||
        (rc = get_int(gm, "device_id", 0, &c->gpu_monitor_device, d)))
        return rc;
    if ((rc = load_tracelens(c, tl, d)))
        return rc;
    if (mp_serve_tracelens_inference(c))
        c->torch_profiler = true; /* inference-mode TraceLens forces it, as Magpie */
    bool tt_on = false;
    if ((rc = get_bool(tt, "enabled", &tt_on, d)))
        return rc;
    if (tt_on)
        return mp_yaml_error(mp_yaml_get(tt, "enabled"), "profiler.targeted_trace.enabled", d,
                             MP_EUNSUP, "targeted_trace is not supported by magpie yet");
    return 0;
}

static int load_gap(struct mp_serve_config *c, const struct mp_yaml_node *g, struct mp_diag *d)
{
    static const char *const known[] = {"enabled",
                                        "trace_start_pct",
                                        "trace_end_pct",
                                        "top_k",
                                        "min_duration_us",
                                        "categories",
                                        "ignore_categories",
                                        "find_kernel_sources",
                                        "kernel_source_repos",
                                        "auto_clone_repos",
                                        "repos_base_dir",
                                        NULL};
    int rc = want_map(g, "gap_analysis", d);
    if (rc || mp_yaml_is_null(g))
        return rc;
    check_keys(g, known, "benchmark.gap_analysis");
    if ((rc = get_bool(g, "enabled", &c->gap_enabled, d)) ||
        (rc = get_num(g, "trace_start_pct", 0, &c->gap.start_pct, d)) ||
        (rc = get_num(g, "trace_end_pct", 0, &c->gap.end_pct, d)) ||
        (rc = get_int(g, "top_k", 0, &c->gap.top_k, d)) ||
        (rc = get_num(g, "min_duration_us", 0, &c->gap.min_duration_us, d)))
        return rc;
    const struct mp_yaml_node *cat = mp_yaml_get(g, "categories");
    if (cat && mp_yaml_is_null(cat)) {
        c->gap.categories_all = true; /* categories: null = every category */
        c->gap.n_categories = 0;
    } else if (cat && (rc = get_strlist(c, cat, "gap_analysis.categories", c->gap.categories,
                                        MP_GAP_MAX_PATTERNS, &c->gap.n_categories, d))) {
        return rc;
    }
    const struct mp_yaml_node *ign = mp_yaml_get(g, "ignore_categories");
    if (ign && mp_yaml_is_null(ign))
        c->gap.n_ignore = 0;
    else if (ign && (rc = get_strlist(c, ign, "gap_analysis.ignore_categories", c->gap.ignore,
                                      MP_GAP_MAX_PATTERNS, &c->gap.n_ignore, d)))
        return rc;
    const struct mp_yaml_node *end = mp_yaml_get(g, "trace_end_pct");
    if (c->gap.end_pct > 100 || c->gap.start_pct >= c->gap.end_pct)
        return mp_yaml_error(end ? end : g, "gap_analysis.trace_end_pct", d, MP_EINVAL,
                             "need 0 <= trace_start_pct < trace_end_pct <= 100");
    /* Magpie's source finder: the 15 + 4 source columns in gap_analysis.csv
     * and the report's gap_analysis.top_kernels (docs/sources.md) */
    if ((rc = get_bool(g, "find_kernel_sources", &c->gap.find_kernel_sources, d)) ||
        (rc = get_bool(g, "auto_clone_repos", &c->gap.auto_clone_repos, d)) ||
        (rc = get_str(c, g, "repos_base_dir", &c->gap.repos_base_dir, d)))
        return rc;
    const struct mp_yaml_node *repos = mp_yaml_get(g, "kernel_source_repos");
    if (repos && !mp_yaml_is_null(repos)) {
        int n = 0;
        if ((rc = get_strlist(c, repos, "gap_analysis.kernel_source_repos", c->gap_source_repos,
                              MP_GAP_MAX_PATTERNS, &n, d)))
            return rc;
        c->gap.kernel_source_repos = c->gap_source_repos;
        c->gap.n_kernel_source_repos = n;
    }
    return 0;
}

static int load_gpu_selection(struct mp_serve_config *c, const struct mp_yaml_node *g,
                              struct mp_diag *d)
{
    static const char *const known[] = {"auto", "min_free_memory_gb", "count", "candidates", NULL};
    int rc = want_map(g, "gpu_selection", d);
    if (rc || mp_yaml_is_null(g))
        return rc;
    check_keys(g, known, "benchmark.gpu_selection");
    if ((rc = get_bool(g, "auto", &c->gpu_auto, d)) ||
        (rc = get_num(g, "min_free_memory_gb", 0, &c->gpu_min_free_gb, d)) ||
        (rc = get_int(g, "count", 1, &c->gpu_count, d)))
        return rc;
    const struct mp_yaml_node *cand = mp_yaml_get(g, "candidates");
    if (mp_yaml_is_null(cand))
        return 0;
    if (cand->kind != MP_YAML_SEQ)
        return mp_yaml_error(cand, "gpu_selection.candidates", d, MP_EINVAL,
                             "expected a list of GPU indices");
    for (size_t i = 0; i < cand->n; i++) {
        long long v;
        if ((rc = mp_yaml_int(cand->items[i], "gpu_selection.candidates", &v, d)))
            return rc;
        if (v < 0 || c->n_gpu_candidates >= MP_SERVE_MAX_GPUS)
            return mp_yaml_error(cand->items[i], "gpu_selection.candidates", d, MP_EINVAL,
                                 "GPU index out of range");
        c->gpu_candidates[c->n_gpu_candidates++] = (int)v;
    }
    return 0;
}

static int load_lifecycle(struct mp_serve_config *c, const struct mp_yaml_node *s,
                          struct mp_diag *d)
{
    static const char *const known[] = {
        "enabled", "cleanup", "force_reuse", "pid_dir", "server_ready_timeout_s", NULL};
    int rc = want_map(s, "server_lifecycle", d);
    if (rc || mp_yaml_is_null(s))
        return rc;
    check_keys(s, known, "benchmark.server_lifecycle");
    if ((rc = get_bool(s, "enabled", &c->reuse, d)) ||
        (rc = get_bool(s, "cleanup", &c->reuse_cleanup, d)) ||
        (rc = get_bool(s, "force_reuse", &c->reuse_force, d)) ||
        (rc = get_str(c, s, "pid_dir", &c->reuse_pid_dir, d)) ||
        (rc = get_num(s, "server_ready_timeout_s", 1, &c->server_ready_timeout_s, d)))
        return rc;
    return 0;
}

/* max_failed_requests: 3 or "0.5%" */
static int get_fail_limit(const struct mp_yaml_node *map, const char *key,
                          struct mp_loadgen_fail_limit *out, struct mp_diag *d)
{
    const struct mp_yaml_node *n;
    const char *s;
    int rc = read_str(map, key, &s, &n, d);
    if (rc || !s)
        return rc;
    struct mp_diag sub;
    mp_diag_clear(&sub);
    if ((rc = mp_loadgen_fail_limit_parse(s, out, &sub)))
        return mp_yaml_error(n, key, d, rc, "%s", sub.msg);
    return 0;
}

static int enum_field(const struct mp_yaml_node *b, const char *key, const char *allowed,
                      int (*parse)(const char *, void *), void *out, struct mp_diag *d)
{
    const struct mp_yaml_node *n;
    const char *s;
    int rc = read_str(b, key, &s, &n, d);
    if (rc || !s)
        return rc;
    if (parse(s, out))
        return mp_yaml_error(n, key, d, MP_EINVAL, "unsupported %s '%s' (expected %s)", key, s,
                             allowed);
    return 0;
}

static int parse_fw(const char *s, void *out)
{
    return mp_serve_framework_parse(s, out);
}

static int parse_mode(const char *s, void *out)
{
    return mp_serve_mode_parse(s, out);
}

static int parse_kind(const char *s, void *out)
{
    return mp_serve_run_kind_parse(s, out);
}

static int parse_pc(const char *s, void *out)
{
    return mp_serve_prefix_cache_parse(s, out);
}

/* agentx: Magpie's {enabled, mode, recipe, config_file, concurrency}, or
 * the MCP tool's `agentx: true` / `agentx_mode`; magpie replays trace_file */
static int load_agentx(struct mp_serve_config *c, const struct mp_yaml_node *b, struct mp_diag *d)
{
    static const char *const known[] = {
        "enabled",    "mode",           "recipe",          "config_file", "concurrency",
        "trace_file", "fixed_schedule", "slowdown_factor", "block_size",  NULL};
    const struct mp_yaml_node *a = mp_yaml_get(b, "agentx");
    struct mp_serve_agentx *x = &c->agentx;
    int rc;
    if (!mp_yaml_is_null(a) && a->kind == MP_YAML_SCALAR) {
        if ((rc = mp_yaml_bool(a, "agentx", &x->enabled, d)))
            return rc;
        a = NULL;
    } else if ((rc = want_map(a, "agentx", d))) {
        return rc;
    }
    check_keys(a, known, "benchmark.agentx");
    const struct mp_yaml_node *mn, *fm = mp_yaml_get(b, "agentx_mode");
    const char *mode, *recipe = NULL, *cfgf = NULL;
    if ((rc = read_str(a, "mode", &mode, &mn, d)))
        return rc;
    if (!mode && !mp_yaml_is_null(fm) && (rc = read_str(b, "agentx_mode", &mode, &mn, d)))
        return rc;
    if (mode && strcmp(mode, "canonical") != 0 && strcmp(mode, "fast") != 0)
        return mp_yaml_error(mn, "agentx.mode", d, MP_EINVAL,
                             "unknown mode '%s' (canonical or fast)", mode);
    x->fast = mode && strcmp(mode, "fast") == 0;
    if ((rc = get_bool(a, "enabled", &x->enabled, d)) ||
        (rc = get_str(c, a, "trace_file", &x->trace_file, d)) ||
        (rc = get_bool(a, "fixed_schedule", &x->fixed_schedule, d)) ||
        (rc = get_int(a, "concurrency", 1, &x->concurrency, d)) ||
        (rc = get_int(a, "block_size", 1, &x->block_size, d)) ||
        (rc = get_str(c, a, "recipe", &recipe, d)) || (rc = get_str(c, a, "config_file", &cfgf, d)))
        return rc;
    if (!mp_yaml_is_null(mp_yaml_get(a, "slowdown_factor")) &&
        (rc = get_secs(a, "slowdown_factor", true, &x->slowdown, d)))
        return rc;
    const struct mp_yaml_node *tf = mp_yaml_get(a, "trace_file");
    if (x->trace_file && access(x->trace_file, R_OK) != 0)
        return mp_yaml_error(tf, "agentx.trace_file", d, MP_ENOTFOUND, "cannot read '%s'",
                             x->trace_file);
    if (x->enabled && !x->trace_file)
        return mp_yaml_error(a ? a : mp_yaml_get(b, "agentx"), "agentx.trace_file", d, MP_EINVAL,
                             "agentx needs trace_file: the agentic trace to replay (mooncake / "
                             "AIPerf JSONL); magpie does not resolve InferenceX recipes");
    if (x->enabled && (recipe || cfgf))
        mp_log(MP_LOG_WARN, "%s:%ld:%ld: agentx.%s ignored: magpie replays agentx.trace_file",
               a->file, a->line, a->col, recipe ? "recipe" : "config_file");
    if (x->enabled && x->concurrency > 0) {
        char v[32];
        snprintf(v, sizeof(v), "%d", x->concurrency);
        mp_serve_config_setenv(c, "CONC", v);
    }
    return 0;
}

/* Magpie's default, the torch profiler on when the YAML does not say,
 * applies to engines that have profiler endpoints; an engine without them
 * (trtllm, lmdeploy, a declared engine without profiler:) runs unprofiled */
static void profiler_default(struct mp_serve_config *c, const struct mp_yaml_node *b)
{
    const struct mp_yaml_node *p = mp_yaml_get(b, "profiler");
    const struct mp_yaml_node *tp = mp_yaml_is_null(p) ? NULL : mp_yaml_get(p, "torch_profiler");
    const struct mp_yaml_node *en = mp_yaml_is_null(tp) ? NULL : mp_yaml_get(tp, "enabled");
    /* AgentX runs unprofiled unless asked, as Magpie's */
    if (mp_yaml_is_null(en) && (!mp_serve_config_engine(c)->profile_start || c->agentx.enabled) &&
        !mp_serve_tracelens_inference(c))
        c->torch_profiler = false;
}

/* engine: (after envs, so that engine.env adds to them); framework, when
 * given, must be the engine's name */
static int load_user_engine(struct mp_serve_config *c, const struct mp_yaml_node *b,
                            const struct mp_yaml_node *eng, struct mp_diag *d)
{
    int rc = serve_config_load_engine(c, eng, d);
    if (rc)
        return rc;
    const struct mp_yaml_node *fn;
    const char *fw;
    if ((rc = read_str(b, "framework", &fw, &fn, d)))
        return rc;
    if (fw && strcmp(fw, c->engine->name) != 0)
        return mp_yaml_error(fn, "framework", d, MP_EINVAL,
                             "framework '%s' is not the declared engine '%s' (leave framework "
                             "out, or give the engine's name)",
                             fw, c->engine->name);
    return 0;
}

static int load_root(struct mp_serve_config *c, const struct mp_yaml_doc *doc, struct mp_diag *d)
{
    static const char *const known[] = {"framework",
                                        "model",
                                        "precision",
                                        "run_mode",
                                        "run_kind",
                                        "prefix_cache",
                                        "envs",
                                        "profiler",
                                        "gap_analysis",
                                        "docker_image",
                                        "gpu_arch",
                                        "timeout_seconds",
                                        "inferencex_path",
                                        "inferencemax_path",
                                        "hf_cache_path",
                                        "lm_eval_runtime",
                                        "runner_type",
                                        "benchmark_script",
                                        "run_cmd",
                                        "gpu_selection",
                                        "ray_config",
                                        "server_lifecycle",
                                        "agentx",
                                        "sweep_matrix",
                                        "privileged",
                                        "stall_timeout_seconds",
                                        "max_failed_requests",
                                        "repeat",
                                        "engine_stop_drain_seconds",
                                        "engine_stop_grace_seconds",
                                        "engine",
                                        "agentx_mode",
                                        "torch_profiler_steps",
                                        "torch_profiler_count",
                                        "torch_profiler_interval_seconds",
                                        "torch_profiler_start_seconds",
                                        "torch_profiler_detailed_annotations",
                                        NULL};
    const struct mp_yaml_node *root = mp_yaml_root(doc);
    const struct mp_yaml_node *b = mp_yaml_get(root, "benchmark");
    if (root->kind != MP_YAML_MAP && !mp_yaml_is_null(root))
        return mp_yaml_error(root, NULL, d, MP_EINVAL,
                             "expected a mapping with a top-level 'benchmark:' key");
    if (mp_yaml_is_null(b) || (b->kind == MP_YAML_MAP && b->n == 0)) {
        mp_diag_set_file(d, mp_yaml_file(doc));
        mp_diag_set_field(d, "benchmark");
        return mp_diag_set(d, MP_EINVAL, "no 'benchmark:' section (or it is empty)");
    }
    int rc = want_map(b, "benchmark", d);
    if (rc)
        return rc;
    check_keys(b, known, "benchmark");
    const char *ixp = NULL;
    const struct mp_yaml_node *eng = mp_yaml_get(b, "engine");
    bool user = !mp_yaml_is_null(eng); /* framework: the engine's own name, or absent */
    if ((!user &&
         (rc = enum_field(b, "framework", mp_serve_engine_names(), parse_fw, &c->framework, d))) ||
        (rc = enum_field(b, "run_mode", "local, docker or ray", parse_mode, &c->run_mode, d)) ||
        (rc = enum_field(b, "run_kind", "auto, measurement or diagnostic", parse_kind, &c->run_kind,
                         d)) ||
        (rc = enum_field(b, "prefix_cache", "default, on or off", parse_pc, &c->prefix_cache, d)) ||
        (rc = get_str(c, b, "model", &c->model, d)) ||
        (rc = get_str(c, b, "precision", &c->precision, d)) ||
        (rc = load_envs(c, mp_yaml_get(b, "envs"), d)) ||
        (rc = load_profiler(c, mp_yaml_get(b, "profiler"), d)) ||
        (rc = load_gap(c, mp_yaml_get(b, "gap_analysis"), d)) || (rc = get_image(c, b, d)) ||
        (rc = get_str(c, b, "gpu_arch", &c->gpu_arch, d)) ||
        (rc = get_num(b, "timeout_seconds", 1, &c->timeout_s, d)) ||
        (rc = get_str(c, b, "inferencemax_path", &ixp, d)) ||
        (rc = get_str(c, b, "inferencex_path", &c->inferencex_path, d)) ||
        (rc = get_str(c, b, "hf_cache_path", &c->hf_cache_path, d)) ||
        (rc = get_str(c, b, "runner_type", &c->runner_type, d)) ||
        (rc = get_str(c, b, "benchmark_script", &c->benchmark_script, d)) ||
        (rc = load_gpu_selection(c, mp_yaml_get(b, "gpu_selection"), d)) ||
        (rc = load_lifecycle(c, mp_yaml_get(b, "server_lifecycle"), d)) ||
        (rc = get_bool(b, "privileged", &c->privileged, d)) ||
        (rc = get_num(b, "stall_timeout_seconds", 0, &c->stall_timeout_s, d)) ||
        (rc = get_fail_limit(b, "max_failed_requests", &c->max_failed, d)) ||
        (rc = get_int(b, "repeat", 1, &c->repeat, d)) ||
        (rc = get_num(b, "engine_stop_drain_seconds", 0.1, &c->stop_drain_s, d)) ||
        (rc = get_num(b, "engine_stop_grace_seconds", 0.1, &c->stop_grace_s, d)))
        return rc;
    if (!c->inferencex_path && ixp)
        c->inferencex_path = ixp;
    mp_gpu_hw_config_init(&c->hw);
    if ((rc = mp_gpu_hw_config_load(&c->hw, mp_yaml_get(root, "gpu"), d)))
        return rc;
    static const char *const unsup[] = {"run_cmd", "lm_eval_runtime", NULL};
    for (const char *const *k = unsup; *k; k++) {
        const struct mp_yaml_node *n = mp_yaml_get(b, *k);
        if (!mp_yaml_is_null(n))
            return mp_yaml_error(n, *k, d, MP_EUNSUP, "'%s' is not supported by magpie yet", *k);
    }
    const char *rv = mp_serve_config_getenv(c, "RUN_EVAL");
    if (rv && (strcasecmp(rv, "true") == 0 || strcmp(rv, "1") == 0))
        return mp_yaml_error(mp_yaml_get(b, "envs"), "envs.RUN_EVAL", d, MP_EUNSUP,
                             "RUN_EVAL (lm-eval accuracy runs) is not supported by magpie yet");
    if (c->n_envs == 0) { /* Magpie's defaults for an empty envs */
        mp_serve_config_setenv(c, "TP", "1");
        mp_serve_config_setenv(c, "CONC", "32");
        mp_serve_config_setenv(c, "ISL", "1024");
        mp_serve_config_setenv(c, "OSL", "512");
        mp_serve_config_setenv(c, "RANDOM_RANGE_RATIO", "0.5");
    }
    if (user && (rc = load_user_engine(c, b, eng, d)))
        return rc;
    if ((rc = load_agentx(c, b, d)))
        return rc;
    profiler_default(c, b);
    const struct mp_yaml_node *pr = mp_yaml_get(b, "profiler");
    if ((rc = load_captures(c, mp_yaml_is_null(pr) ? NULL : mp_yaml_get(pr, "torch_profiler"), b,
                            d)))
        return rc;
    return 0;
}

/* The YAML file path, or text[0..len) named name when text is not NULL */
static int load_yaml(struct mp_serve_config *c, const char *path, const char *text, size_t len,
                     const char *name, struct mp_diag *d)
{
    struct mp_yaml_doc *doc = NULL;
    int rc =
        text ? mp_yaml_load_string(text, len, name, &doc, d) : mp_yaml_load_file(path, &doc, d);
    if (!rc)
        rc = load_root(c, doc, d);
    mp_yaml_free(doc);
    return rc;
}

int mp_serve_config_load(struct mp_serve_config *c, const char *path, struct mp_diag *d)
{
    int rc = load_yaml(c, path, NULL, 0, NULL, d);
    if (!rc)
        c->config_path = mp_serve_config_strdup(c, path);
    return rc;
}

int mp_serve_config_load_string(struct mp_serve_config *c, const char *text, size_t len,
                                const char *name, struct mp_diag *d)
{
    return load_yaml(c, NULL, text, len, name, d);
}
