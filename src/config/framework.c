/* The framework config (-c, Magpie's config.yaml) as far as kernel
 * evaluation is concerned: defaults, and the scheduler, correctness,
 * compiling, performance, latency and compare sections. The kernel config
 * (kernel.c) reuses the section loaders for its overrides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/proc.h>

#include "config_int.h"

static int add_weight(struct mp_weights *w, const char *metric, double weight)
{
    struct mp_weight *nv = mp_reallocarray(w->v, (size_t)w->n + 1, sizeof(*nv));
    if (!nv)
        return MP_ENOMEM;
    w->v = nv;
    w->v[w->n].metric = mp_strdup(metric);
    if (!w->v[w->n].metric)
        return MP_ENOMEM;
    w->v[w->n++].weight = weight;
    return 0;
}

static int add_str(struct mp_strlist *l, const char *s)
{
    char **nv = mp_reallocarray((void *)l->v, (size_t)l->n + 1, sizeof(char *));
    if (!nv)
        return MP_ENOMEM;
    l->v = nv;
    l->v[l->n] = mp_strdup(s);
    return l->v[l->n++] ? 0 : MP_ENOMEM;
}

void mp_kernel_config_init(struct mp_kernel_config *c)
{
    memset(c, 0, sizeof(*c));
    strcpy(c->log_level, "INFO");
    strcpy(c->correctness.backend, "testcase");
    c->correctness.iterations = 1;
    c->correctness.timeout_s = 300;
    c->correctness.atol = 1e-6;
    c->correctness.rtol = 1e-5;
    c->correctness.accordo_timeout_s = 30;
    c->performance.timeout_s = 300;
    c->performance.roofline = -1;
    struct mp_latency_cfg *l = &c->latency;
    l->enabled = true;
    strcpy(l->method, "auto");
    strcpy(l->primary_metric, "wall_median_ms");
    l->rep_ms = 20;
    l->n_retries = 5;
    l->estimate_reps = 5;
    l->warmup_iters = 5;
    l->seed = 42;
    l->timeout_s = 120;
    l->min_samples = 10;
    l->max_samples = 10000;
    l->min_time_s = 0.5;
    l->max_noise = 0.005;
    l->max_time_s = 15;
    l->warmup_s = 0.1;
    l->l2_flush = true;
    l->power_guard = true;
    l->cool_ratio = -1;
    struct mp_compare_cfg *k = &c->compare;
    strcpy(k->winner_strategy, "statistical");
    k->alpha = 0.05;
    k->threshold = 0.01;
    strcpy(k->timing, "sequential");
    /* Magpie's shipped defaults (config.yaml) */
    static const char *const ncu[] = {"sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                      "l1tex__throughput.avg.pct_of_peak_sustained_active",
                                      "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                                      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                                      "duration_ns_total"};
    static const double ncu_w[] = {0.40, 0.10, 0.10, 0.20, 0.20};
    for (size_t i = 0; i < sizeof(ncu_w) / sizeof(ncu_w[0]); i++)
        (void)add_weight(&k->weights_ncu, ncu[i], ncu_w[i]);
    static const char *const roc[] = {
        "MFMA_FLOPs_BF16", "MFMA_FLOPs_F16", "MFMA_FLOPs_F32",   "VALU_FLOPs", "LDS_BW",
        "LDS_Conflicts",   "HBM_Read_BW",    "HBM_Write_BW",     "L2_BW",      "Wavefront_Occ",
        "MFMA_Util",       "VALU_Util",      "duration_ns_total"};
    static const double roc_w[] = {0.35, 0.35, 0.25, 0.10, 0.15, 0.10, 0.10,
                                   0.10, 0.05, 0.05, 0.10, 0.05, 0.20};
    for (size_t i = 0; i < sizeof(roc_w) / sizeof(roc_w[0]); i++)
        (void)add_weight(&k->weights_rocprof, roc[i], roc_w[i]);
    (void)add_str(&k->lower_is_better, "duration_ns_total");
    (void)add_str(&k->lower_is_better, "LDS_Conflicts");
    (void)add_str(&c->performance.ncu_args, "--target-processes");
    (void)add_str(&c->performance.ncu_args, "all");
    strcpy(c->scheduler.environment, "local");
    c->scheduler.max_workers = 1;
}

void mp_kernel_config_fini(struct mp_kernel_config *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nkernels; i++)
        mp_kernel_spec_fini(&c->kernels[i]);
    free(c->kernels);
    struct mp_correctness_cfg *k = &c->correctness;
    free(k->accordo_kernel_name);
    free(k->accordo_reference_binary);
    free(k->accordo_optimized_binary);
    free(k->accordo_working_directory);
    cfg_strlist_fini(&k->accordo_kernel_args);
    struct mp_performance_cfg *p = &c->performance;
    cfg_strlist_fini(&p->ncu_args);
    cfg_strlist_fini(&p->ncu_metrics);
    cfg_strlist_fini(&p->rocprof_profile_args);
    cfg_strlist_fini(&p->rocprof_analyze_args);
    cfg_strlist_fini(&p->rocprof_metric_blocks);
    cfg_strlist_fini(&c->latency.pythonpath);
    cfg_weights_fini(&c->compare.weights_ncu);
    cfg_weights_fini(&c->compare.weights_rocprof);
    cfg_weights_fini(&c->compare.weights_metrix);
    cfg_strlist_fini(&c->compare.lower_is_better);
    free(c->scheduler.docker_image);
    memset(c, 0, sizeof(*c));
}

int cfg_load_correctness(struct mp_kernel_config *c, const struct mp_yaml_node *n,
                         struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "correctness", d, MP_EINVAL, "expected a mapping");
    static const char *const keys[] = {"backend", "iterations", "timeout_seconds", "accordo", NULL};
    c->nwarnings += cfg_check_keys(n, keys, "correctness");
    struct mp_correctness_cfg *k = &c->correctness;
    int rc = cfg_strbuf(mp_yaml_get(n, "backend"), "correctness.backend", k->backend,
                        sizeof(k->backend), d);
    if (!rc && strcmp(k->backend, "testcase") != 0 && strcmp(k->backend, "accordo") != 0)
        rc = mp_yaml_error(mp_yaml_get(n, "backend"), "correctness.backend", d, MP_EINVAL,
                           "expected testcase or accordo, found '%s'", k->backend);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "iterations"), "correctness.iterations", 1, 1000000,
                     &k->iterations, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "timeout_seconds"), "correctness.timeout_seconds", 0,
                        &k->timeout_s, d);
    const struct mp_yaml_node *a = mp_yaml_get(n, "accordo");
    if (rc || mp_yaml_is_null(a))
        return rc;
    if (a->kind != MP_YAML_MAP)
        return mp_yaml_error(a, "correctness.accordo", d, MP_EINVAL, "expected a mapping");
    static const char *const akeys[] = {"kernel_name",
                                        "reference_binary",
                                        "optimized_binary",
                                        "atol",
                                        "rtol",
                                        "equal_nan",
                                        "timeout_seconds",
                                        "kernel_args",
                                        "working_directory",
                                        "workspace_path",
                                        NULL};
    c->nwarnings += cfg_check_keys(a, akeys, "correctness.accordo");
    rc = cfg_double(mp_yaml_get(a, "atol"), "accordo.atol", 0, &k->atol, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(a, "rtol"), "accordo.rtol", 0, &k->rtol, d);
    if (!rc)
        rc = cfg_bool(mp_yaml_get(a, "equal_nan"), "accordo.equal_nan", &k->equal_nan, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(a, "timeout_seconds"), "accordo.timeout_seconds", 0,
                        &k->accordo_timeout_s, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(a, "kernel_name"), "accordo.kernel_name", true,
                     &k->accordo_kernel_name, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(a, "reference_binary"), "accordo.reference_binary", true,
                     &k->accordo_reference_binary, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(a, "optimized_binary"), "accordo.optimized_binary", true,
                     &k->accordo_optimized_binary, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(a, "working_directory"), "accordo.working_directory", true,
                     &k->accordo_working_directory, d);
    const struct mp_yaml_node *ka = mp_yaml_get(a, "kernel_args");
    if (!rc && ka && ka->kind == MP_YAML_SEQ) {
        cfg_strlist_fini(&k->accordo_kernel_args);
        for (size_t i = 0; i < ka->n && !rc; i++) {
            const struct mp_yaml_node *p = ka->items[i];
            if (p->kind != MP_YAML_SEQ || p->n != 2 || p->items[0]->kind != MP_YAML_SCALAR ||
                p->items[1]->kind != MP_YAML_SCALAR) {
                rc = mp_yaml_error(p, "accordo.kernel_args", d, MP_EINVAL, "expected [name, type]");
                break;
            }
            char buf[512];
            snprintf(buf, sizeof(buf), "%s:%s", p->items[0]->str, p->items[1]->str);
            rc = add_str(&k->accordo_kernel_args, buf);
        }
    }
    return rc;
}

int cfg_load_performance(struct mp_kernel_config *c, const struct mp_yaml_node *n,
                         struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "performance", d, MP_EINVAL, "expected a mapping");
    static const char *const keys[] = {"backend",         "timeout_seconds", "ncu",
                                       "rocprof_compute", "metrix",          NULL};
    c->nwarnings += cfg_check_keys(n, keys, "performance");
    struct mp_performance_cfg *p = &c->performance;
    const struct mp_yaml_node *bn = mp_yaml_get(n, "backend");
    int rc = cfg_strbuf(bn, "performance.backend", p->backend, sizeof(p->backend), d);
    static const char *const backends[] = {"",          "auto",   "ncu", "rocprof_compute",
                                           "rocprofv3", "metrix", "none"};
    bool ok = false;
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]) && !ok; i++)
        ok = strcmp(p->backend, backends[i]) == 0;
    if (!rc && !ok)
        rc = mp_yaml_error(bn, "performance.backend", d, MP_EINVAL,
                           "expected ncu, rocprof_compute, rocprofv3, metrix or none, found '%s'",
                           p->backend);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "timeout_seconds"), "performance.timeout_seconds", 0,
                        &p->timeout_s, d);
    const struct mp_yaml_node *ncu = mp_yaml_get(n, "ncu");
    if (!rc && !mp_yaml_is_null(ncu)) {
        static const char *const nk[] = {"args", "metrics", NULL};
        c->nwarnings += cfg_check_keys(ncu, nk, "performance.ncu");
        rc = cfg_strlist(mp_yaml_get(ncu, "args"), "performance.ncu.args", true, &p->ncu_args, d);
        if (!rc)
            rc = cfg_strlist(mp_yaml_get(ncu, "metrics"), "performance.ncu.metrics", true,
                             &p->ncu_metrics, d);
    }
    const struct mp_yaml_node *rp = mp_yaml_get(n, "rocprof_compute");
    if (!rc && !mp_yaml_is_null(rp)) {
        static const char *const rk[] = {"workload_dir",  "profile_args",    "analyze_args",
                                         "metric_blocks", "output_format",   "roofline",
                                         "kernel_filter", "dispatch_filter", NULL};
        c->nwarnings += cfg_check_keys(rp, rk, "performance.rocprof_compute");
        rc = cfg_strlist(mp_yaml_get(rp, "profile_args"), "rocprof_compute.profile_args", true,
                         &p->rocprof_profile_args, d);
        if (!rc)
            rc = cfg_strlist(mp_yaml_get(rp, "analyze_args"), "rocprof_compute.analyze_args", true,
                             &p->rocprof_analyze_args, d);
        if (!rc)
            rc = cfg_strlist(mp_yaml_get(rp, "metric_blocks"), "rocprof_compute.metric_blocks",
                             true, &p->rocprof_metric_blocks, d);
        const struct mp_yaml_node *roof = mp_yaml_get(rp, "roofline");
        bool b = false;
        if (!rc && roof && !mp_yaml_is_null(roof) &&
            !(rc = cfg_bool(roof, "rocprof_compute.roofline", &b, d)))
            p->roofline = b ? 1 : 0;
    }
    return rc;
}

int cfg_load_latency(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "latency", d, MP_EINVAL, "expected a mapping");
    static const char *const keys[] = {"enabled",         "method",      "primary_metric",
                                       "rep_ms",          "n_retries",   "estimate_reps",
                                       "warmup_iters",    "seed",        "kernel_filter",
                                       "bench_target",    "pythonpath",  "output_dir",
                                       "timeout_seconds", "min_samples", "max_samples",
                                       "min_time_s",      "max_noise",   "max_time_s",
                                       "warmup_s",        "l2_flush",    "power_guard",
                                       "cool_ratio",      NULL};
    c->nwarnings += cfg_check_keys(n, keys, "latency");
    struct mp_latency_cfg *l = &c->latency;
    int rc = cfg_bool(mp_yaml_get(n, "enabled"), "latency.enabled", &l->enabled, d);
    if (!rc)
        rc =
            cfg_strbuf(mp_yaml_get(n, "method"), "latency.method", l->method, sizeof(l->method), d);
    if (!rc)
        rc = cfg_strbuf(mp_yaml_get(n, "primary_metric"), "latency.primary_metric",
                        l->primary_metric, sizeof(l->primary_metric), d);
    if (!rc && strcmp(l->primary_metric, "wall_median_ms") != 0 &&
        strcmp(l->primary_metric, "kernel_median_ms") != 0)
        rc = mp_yaml_error(mp_yaml_get(n, "primary_metric"), "latency.primary_metric", d, MP_EINVAL,
                           "expected wall_median_ms or kernel_median_ms");
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "rep_ms"), "latency.rep_ms", 0, &l->rep_ms, d);
    if (!rc)
        rc =
            cfg_int(mp_yaml_get(n, "n_retries"), "latency.n_retries", 1, 1000000, &l->n_retries, d);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "estimate_reps"), "latency.estimate_reps", 1, 1000000,
                     &l->estimate_reps, d);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "warmup_iters"), "latency.warmup_iters", 0, 1000000,
                     &l->warmup_iters, d);
    long long seed = l->seed;
    const struct mp_yaml_node *sn = mp_yaml_get(n, "seed");
    if (!rc && sn && !mp_yaml_is_null(sn) && !(rc = mp_yaml_int(sn, "latency.seed", &seed, d)))
        l->seed = seed;
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "timeout_seconds"), "latency.timeout_seconds", 0,
                        &l->timeout_s, d);
    if (!rc)
        rc = cfg_strlist(mp_yaml_get(n, "pythonpath"), "latency.pythonpath", true, &l->pythonpath,
                         d);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "min_samples"), "latency.min_samples", 2, 100000000,
                     &l->min_samples, d);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "max_samples"), "latency.max_samples", 2, 100000000,
                     &l->max_samples, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "min_time_s"), "latency.min_time_s", 0, &l->min_time_s, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "max_noise"), "latency.max_noise", 0, &l->max_noise, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "max_time_s"), "latency.max_time_s", 0, &l->max_time_s, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "warmup_s"), "latency.warmup_s", 0, &l->warmup_s, d);
    if (!rc)
        rc = cfg_bool(mp_yaml_get(n, "l2_flush"), "latency.l2_flush", &l->l2_flush, d);
    if (!rc)
        rc = cfg_bool(mp_yaml_get(n, "power_guard"), "latency.power_guard", &l->power_guard, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "cool_ratio"), "latency.cool_ratio", 0, &l->cool_ratio, d);
    return rc;
}

int cfg_load_scheduler(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "scheduler", d, MP_EINVAL, "expected a mapping");
    static const char *const keys[] = {"max_workers", "environment", "docker_image", "gpu_devices",
                                       NULL};
    c->nwarnings += cfg_check_keys(n, keys, "scheduler");
    struct mp_scheduler_cfg *s = &c->scheduler;
    const struct mp_yaml_node *en = mp_yaml_get(n, "environment");
    int rc = cfg_strbuf(en, "scheduler.environment", s->environment, sizeof(s->environment), d);
    if (!rc && strcmp(s->environment, "local") != 0 && strcmp(s->environment, "container") != 0 &&
        strcmp(s->environment, "ray") != 0)
        rc = mp_yaml_error(en, "scheduler.environment", d, MP_EINVAL,
                           "expected local, container or ray, found '%s'", s->environment);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "max_workers"), "scheduler.max_workers", 1, 4096,
                     &s->max_workers, d);
    const struct mp_yaml_node *img = mp_yaml_get(n, "docker_image");
    if (!rc)
        rc = cfg_str(img, "scheduler.docker_image", true, &s->docker_image, d);
    if (!rc && img && s->docker_image && *s->docker_image) {
        /* the image is one argument of docker/podman run: never an option */
        struct mp_diag why;
        mp_diag_clear(&why);
        if (mp_proc_image_check(s->docker_image, NULL, &why))
            rc = mp_yaml_error(img, "scheduler.docker_image", d, MP_EINVAL, "%s", why.msg);
    }
    return rc;
}

int cfg_load_compare(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "compare", d, MP_EINVAL, "expected a mapping");
    static const char *const keys[] = {"perf_weights_rocprof",
                                       "perf_weights_ncu",
                                       "perf_weights_metrix",
                                       "winner_strategy",
                                       "perf_lower_is_better",
                                       "alpha",
                                       "threshold",
                                       "rounds",
                                       "timing",
                                       NULL};
    c->nwarnings += cfg_check_keys(n, keys, "compare");
    struct mp_compare_cfg *k = &c->compare;
    int rc = cfg_weights(mp_yaml_get(n, "perf_weights_rocprof"), "compare.perf_weights_rocprof",
                         &k->weights_rocprof, d);
    if (!rc)
        rc = cfg_weights(mp_yaml_get(n, "perf_weights_ncu"), "compare.perf_weights_ncu",
                         &k->weights_ncu, d);
    if (!rc)
        rc = cfg_weights(mp_yaml_get(n, "perf_weights_metrix"), "compare.perf_weights_metrix",
                         &k->weights_metrix, d);
    if (!rc)
        rc = cfg_strbuf(mp_yaml_get(n, "winner_strategy"), "compare.winner_strategy",
                        k->winner_strategy, sizeof(k->winner_strategy), d);
    if (!rc)
        rc = cfg_strlist(mp_yaml_get(n, "perf_lower_is_better"), "compare.perf_lower_is_better",
                         false, &k->lower_is_better, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "alpha"), "compare.alpha", 0, &k->alpha, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "threshold"), "compare.threshold", 0, &k->threshold, d);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "rounds"), "compare.rounds", 0, 1000000, &k->rounds, d);
    if (!rc)
        rc =
            cfg_strbuf(mp_yaml_get(n, "timing"), "compare.timing", k->timing, sizeof(k->timing), d);
    if (!rc && strcmp(k->timing, "sequential") != 0 && strcmp(k->timing, "fixed") != 0)
        rc = mp_yaml_error(mp_yaml_get(n, "timing"), "compare.timing", d, MP_EINVAL,
                           "must be sequential or fixed, not '%s'", k->timing);
    return rc;
}

static int load_framework_root(struct mp_kernel_config *c, const struct mp_yaml_node *r,
                               struct mp_diag *d)
{
    if (mp_yaml_is_null(r))
        return 0;
    if (r->kind != MP_YAML_MAP)
        return mp_yaml_error(r, NULL, d, MP_EINVAL, "expected a mapping at the top of the config");
    static const char *const keys[] = {
        "gpu",     "scheduler", "output",    "logging",  "correctness", "compiling", "performance",
        "latency", "compare",   "benchmark", "profiler", "ray",         "mcp",       NULL};
    c->nwarnings += cfg_check_keys(r, keys, "the framework config");
    int rc = cfg_load_scheduler(c, mp_yaml_get(r, "scheduler"), d);
    if (!rc)
        rc = cfg_load_correctness(c, mp_yaml_get(r, "correctness"), d);
    if (!rc)
        rc = cfg_load_performance(c, mp_yaml_get(r, "performance"), d);
    if (!rc)
        rc = cfg_load_latency(c, mp_yaml_get(r, "latency"), d);
    if (!rc)
        rc = cfg_load_compare(c, mp_yaml_get(r, "compare"), d);
    const struct mp_yaml_node *comp = mp_yaml_get(r, "compiling");
    if (!rc && !mp_yaml_is_null(comp))
        rc = cfg_bool(mp_yaml_get(comp, "enable_default_compile"),
                      "compiling.enable_default_compile", &c->enable_default_compile, d);
    const struct mp_yaml_node *lg = mp_yaml_get(r, "logging");
    if (!rc && !mp_yaml_is_null(lg))
        rc = cfg_strbuf(mp_yaml_get(lg, "level"), "logging.level", c->log_level,
                        sizeof(c->log_level), d);
    return rc;
}

int mp_config_load_framework(struct mp_kernel_config *c, const char *path, struct mp_diag *d)
{
    if (!path || !mp_fs_exists(path))
        return 0; /* Magpie: a missing framework config is an empty one */
    return cfg_load_yaml(c, path, NULL, 0, NULL, load_framework_root, d);
}

int mp_config_load_framework_string(struct mp_kernel_config *c, const char *text, size_t len,
                                    const char *name, struct mp_diag *d)
{
    return cfg_load_yaml(c, NULL, text, len, name, load_framework_root, d);
}
