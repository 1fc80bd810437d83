/* The analyze / compare pipeline: workspace, then per kernel compile ->
 * correctness -> performance -> latency -> score. Stages start NOT_RUN and
 * a failure leaves every later stage NOT_RUN. Kernels run by magpie's own
 * harness (OpenCL, extern "C" CUDA kernels without a testcase) or by the
 * Python runner (pytorch, triton) get correctness and latency from one
 * child run; testcase kernels follow Magpie (exit codes, then the
 * MAGPIE_LATENCY_JSON marker of the last testcase command). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <magpie/gpu.h>
#include <magpie/proc.h>

#include "container_int.h"
#include "kernel_int.h"
#include "kresult_int.h"

char *kern_strdup_or_null(const char *s)
{
    return s ? mp_strdup(s) : NULL;
}

void kern_add_error(struct mp_kernel_result *r, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char **ne = mp_reallocarray((void *)r->errors, (size_t)r->nerrors + 1, sizeof(char *));
    if (!ne)
        return;
    r->errors = ne;
    r->errors[r->nerrors] = mp_strdup(buf);
    if (r->errors[r->nerrors])
        r->nerrors++;
}

static void progress(const struct mp_kernel_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void progress(const struct mp_kernel_opts *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    o->progress(buf, o->user);
}

/* Last `max` bytes of s, from a line start where possible. */
static const char *tail(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return s;
    const char *p = s + n - max;
    const char *nl = strchr(p, '\n');
    return nl && nl[1] ? nl + 1 : p;
}

static void sanitize(const char *in, char *out, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; in[i] && j + 1 < len; i++)
        out[j++] = (isalnum((unsigned char)in[i]) || in[i] == '-' || in[i] == '_') ? in[i] : '_';
    out[j] = 0;
}

struct ctx {
    const struct mp_kernel_config *cfg;
    const struct mp_kernel_opts *o;
    struct mp_kernel_run *run;
    bool compare;
    char self_exe[PATH_MAX];
    char runtime_dir[PATH_MAX];
    char gpu_arch[32];
    bool gpu_detected;
    struct mp_gpu_info gpu;
    /* per kernel: how it is evaluated */
    bool *harness; /* opencl, or cuda without testcase */
    bool *runner;  /* pytorch / triton without testcase */
    char **module; /* compiled cubin (cuda harness) */
    char **ref_module;
    json_t **bd; /* per kernel: the time breakdown (mp_kernel_result.breakdown) */
};

static double epoch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* whether compare decides sequentially (the option, else compare.timing) */
static bool seq_timing(const struct ctx *c)
{
    if (!c->compare || c->o->timing == 1)
        return false;
    return c->o->timing == 2 || strcmp(c->cfg->compare.timing, "fixed") != 0;
}

/* Files a child's time into the breakdown of each kernel it ran: under
 * `what` its wall time, the child's process figures and the kernel's
 * phases. */
static void bd_child(struct ctx *c, const int *idx, int n, const char *what, double wall,
                     json_t *res)
{
    for (int j = 0; j < n && c->bd; j++) {
        int i = idx[j];
        if (!c->bd[i])
            c->bd[i] = json_object();
        json_t *o = json_object();
        json_object_set_new(o, "wall_s", json_real(wall));
        json_t *pr = json_object_get(res, "process");
        if (json_is_object(pr))
            json_object_update(o, pr);
        char key[300];
        snprintf(key, sizeof(key), "%d_%s", i, c->cfg->kernels[i].id);
        json_t *arr = json_object_get(res, "kernels");
        for (size_t e = 0; e < json_array_size(arr); e++) {
            json_t *ke = json_array_get(arr, e);
            const char *eid = json_string_value(json_object_get(ke, "id"));
            json_t *ph = json_object_get(ke, "phases");
            if (eid && !strcmp(eid, key) && json_is_object(ph))
                json_object_set(o, "phases", ph);
        }
        json_object_set_new(c->bd[i], what, o);
    }
}

static void detect_gpu(struct ctx *c)
{
    if (c->gpu_detected)
        return;
    c->gpu_detected = true;
    struct mp_gpu_detect_opts go = {.no_versions = true, .timeout_s = 10};
    mp_gpu_detect(&c->gpu, &go, NULL);
    const char *env = getenv("MAGPIE_GPU_ARCH");
    snprintf(c->gpu_arch, sizeof(c->gpu_arch), "%s", env && *env ? env : c->gpu.architecture);
}

/* The container of the run in progress (environment: container), NULL when
 * commands run here. One run at a time: analyze / compare are synchronous. */
static struct kern_container *g_ct;

/* Runs argv with the kernel's cwd and env (in the container when there is
 * one); output into log_path (appended). Returns 0 when it exited 0;
 * otherwise fills why. */
static int run_cmd(const struct mp_kernel_spec *k, const char *const *argv, double timeout_s,
                   const char *log_path, struct mp_proc_result *res, char *why, size_t whylen)
{
    struct mp_proc_opts po = {
        .cwd = k->working_dir,
        .env = (const char *const *)k->env,
        .timeout_s = timeout_s,
        .capture_max = (size_t)4 << 20,
    };
    struct mp_diag d;
    mp_diag_clear(&d);
    mp_proc_result_init(res);
    /* "./prog" means the kernel's working_dir, as it would for a shell there */
    char prog[PATH_MAX * 2];
    const char *av0 = argv[0];
    const char **av = NULL;
    int n = 0;
    while (argv[n])
        n++;
    if (av0 && k->working_dir && av0[0] != '/' && strchr(av0, '/')) {
        char wd[PATH_MAX];
        snprintf(prog, sizeof(prog), "%s/%s", realpath(k->working_dir, wd) ? wd : k->working_dir,
                 av0);
        av = mp_calloc((size_t)n + 1, sizeof(char *));
        if (av) {
            memcpy((void *)av, (const void *)argv, (size_t)n * sizeof(char *));
            av[0] = prog;
        }
    }
    struct mp_buf ctline;
    mp_buf_init(&ctline, 1 << 16);
    int rc = g_ct ? kern_container_run(g_ct, k->working_dir, po.env, av ? av : argv, &po, res,
                                       &ctline, &d)
                  : mp_proc_run(av ? av : argv, &po, res, &d);
    free((void *)av);
    if (log_path) {
        FILE *f = fopen(log_path, "a");
        if (f) {
            struct mp_buf line;
            mp_buf_init(&line, 1 << 16);
            mp_proc_join(argv, &line);
            fprintf(f, "$ %s\n", mp_buf_cstr(&line));
            if (ctline.len)
                fprintf(f, "(in a container: %s)\n", mp_buf_cstr(&ctline));
            fprintf(f, "%s%s", mp_buf_cstr(&res->out), mp_buf_cstr(&res->err));
            mp_buf_fini(&line);
            fclose(f);
        }
    }
    mp_buf_fini(&ctline);
    if (rc) {
        snprintf(why, whylen, "%s", d.msg);
        return rc;
    }
    if (!mp_proc_result_ok(res)) {
        char desc[256];
        mp_proc_describe(res, timeout_s, desc, sizeof(desc));
        snprintf(why, whylen, "%s: %s", desc,
                 tail(res->err.len ? mp_buf_cstr(&res->err) : mp_buf_cstr(&res->out), 1500));
        return MP_ECHILD;
    }
    return 0;
}

/* ---- compile ---- */

static int nvcc_cubin(struct ctx *c, const struct mp_kernel_spec *k, const char *src,
                      const char *out, const char *log, char *why, size_t whylen)
{
    char nvcc[PATH_MAX];
    if (mp_gpu_find_tool("nvcc", nvcc, sizeof(nvcc))) {
        snprintf(why, whylen, "nvcc not found. Please install CUDA toolkit.");
        return MP_ENOTFOUND;
    }
    detect_gpu(c);
    char arch[48];
    snprintf(arch, sizeof(arch), "-arch=%s",
             strncmp(c->gpu_arch, "sm_", 3) == 0 ? c->gpu_arch : "sm_90");
    const char *argv[] = {nvcc, "-cubin", "-O3", "-lineinfo", arch, "-o", out, src, NULL};
    struct mp_proc_result res;
    int rc = run_cmd(k, argv, 600, log, &res, why, whylen);
    mp_proc_result_fini(&res);
    return rc;
}

static void stage_compile(struct ctx *c, int i)
{
    const struct mp_kernel_spec *k = &c->cfg->kernels[i];
    const struct mp_kernel_lang *lang = mp_kernel_lang_get(k->type);
    struct mp_kernel_result *r = &c->run->results[i];
    char log[PATH_MAX];
    snprintf(log, sizeof(log), "%s/compile.log", r->workdir);
    char why[2048] = "";
    uint64_t t0 = mp_time_ns();
    if (k->compile.n > 0) {
        for (int j = 0; j < k->compile.n; j++) {
            struct mp_proc_result res;
            int rc = run_cmd(k, (const char *const *)k->compile.argv[j], 1800, log, &res, why,
                             sizeof(why));
            mp_proc_result_fini(&res);
            if (rc) {
                r->compiling = MP_STAGE_FAILED;
                r->has_compile = true;
                char msg[2300];
                snprintf(msg, sizeof(msg), "Compile command %d/%d failed: %s", j + 1, k->compile.n,
                         why);
                r->compile_errors = mp_strdup(msg);
                kern_add_error(r, "%s", msg);
                return;
            }
        }
        /* a harness CUDA kernel still needs its own cubin below */
        if (!(lang->harness_module && c->harness[i])) {
            r->compiling = MP_STAGE_SUCCESS;
            r->has_compile = r->compile_success = true;
            return;
        }
    }
    if (lang->compile == MP_KLANG_COMPILE_JIT) {
        r->compiling = MP_STAGE_SKIPPED; /* JIT */
        return;
    }
    if (c->harness[i] && lang->harness_module) {
        char out[PATH_MAX + 32];
        snprintf(out, sizeof(out), "%s/kernel.cubin", r->workdir);
        int rc = k->nsources ? nvcc_cubin(c, k, k->sources[0], out, log, why, sizeof(why))
                             : (snprintf(why, sizeof(why), "no source file"), MP_EINVAL);
        if (!rc && k->reference) {
            char rout[PATH_MAX + 32];
            snprintf(rout, sizeof(rout), "%s/reference.cubin", r->workdir);
            rc = nvcc_cubin(c, k, k->reference, rout, log, why, sizeof(why));
            if (!rc)
                c->ref_module[i] = mp_strdup(rout);
        }
        r->has_compile = true;
        if (rc) {
            r->compiling = MP_STAGE_FAILED;
            r->compile_errors = mp_strdup(why);
            kern_add_error(r, "Compile failed: %s", why);
            return;
        }
        c->module[i] = mp_strdup(out);
        r->compiling = MP_STAGE_SUCCESS;
        r->compile_success = true;
        progress(c->o, "  compiled %s for %s in %.1f s", k->id,
                 c->gpu_arch[0] ? c->gpu_arch : "sm_90", (double)(mp_time_ns() - t0) / 1e9);
        return;
    }
    if (lang->compile == MP_KLANG_COMPILE_HARNESS)
        return; /* built by the harness job below (compile stage filled there) */
    if (c->cfg->enable_default_compile && k->nsources > 0 && lang->compiler) {
        const char *tool = lang->compiler;
        char path[PATH_MAX];
        r->has_compile = true;
        if (mp_gpu_find_tool(tool, path, sizeof(path))) {
            r->compiling = MP_STAGE_FAILED;
            snprintf(why, sizeof(why), "%s not found. Please install %s.", tool,
                     lang->compiler_pkg);
            r->compile_errors = mp_strdup(why);
            kern_add_error(r, "%s", why);
            return;
        }
        detect_gpu(c);
        char arch[64] = "", outp[PATH_MAX + 16];
        snprintf(outp, sizeof(outp), "%s/a.out", r->workdir);
        size_t pl = strlen(lang->arch_prefix);
        snprintf(arch, sizeof(arch), "%s%s", lang->arch_flag,
                 strncmp(c->gpu_arch, lang->arch_prefix, pl) == 0 ? c->gpu_arch
                                                                  : lang->arch_default);
        const char *argv[] = {path, "-O3", arch, "-o", outp, k->sources[0], NULL};
        struct mp_proc_result res;
        int rc = run_cmd(k, argv, 1800, log, &res, why, sizeof(why));
        mp_proc_result_fini(&res);
        r->compiling = rc ? MP_STAGE_FAILED : MP_STAGE_SUCCESS;
        r->compile_success = !rc;
        if (rc) {
            r->compile_errors = mp_strdup(why);
            kern_add_error(r, "Compile failed: %s", why);
        }
        return;
    }
    r->compiling = MP_STAGE_SKIPPED; /* pre-built binaries assumed (Magpie) */
}

/* ---- testcase correctness ---- */

static void stage_testcase(struct ctx *c, int i)
{
    const struct mp_kernel_spec *k = &c->cfg->kernels[i];
    struct mp_kernel_result *r = &c->run->results[i];
    r->has_correct = true;
    snprintf(r->correct.mode, sizeof(r->correct.mode), "testcase");
    char log[PATH_MAX];
    snprintf(log, sizeof(log), "%s/testcase.log", r->workdir);
    int iters = c->cfg->correctness.iterations > 0 ? c->cfg->correctness.iterations : 1;
    for (int it = 0; it < iters; it++) {
        for (int j = 0; j < k->testcase.n; j++) {
            char why[2048];
            struct mp_proc_result res;
            int rc = run_cmd(k, (const char *const *)k->testcase.argv[j],
                             c->cfg->correctness.timeout_s, log, &res, why, sizeof(why));
            mp_proc_result_fini(&res);
            r->correct.checks++;
            if (rc) {
                char msg[2300];
                snprintf(msg, sizeof(msg), "Testcase command %d/%d failed (iteration %d): %s",
                         j + 1, k->testcase.n, it + 1, why);
                r->correct.errors = mp_strdup(msg);
                r->correctness = MP_STAGE_FAILED;
                kern_add_error(r, "%s", msg);
                return;
            }
        }
    }
    r->correct.success = r->correct.verified = true;
    r->correctness = MP_STAGE_SUCCESS;
}

/* ---- latency from a testcase marker ---- */

static void seq_from_json(struct mp_kernel_seq *q, json_t *sj)
{
    memset(q, 0, sizeof(*q));
    q->ratio_lo = q->ratio_hi = NAN;
    if (!json_is_object(sj))
        return;
    q->present = true;
    const char *d = json_string_value(json_object_get(sj, "decision"));
    snprintf(q->decision, sizeof(q->decision), "%s", d ? d : "UNDECIDED");
    q->look = (int)json_integer_value(json_object_get(sj, "look"));
    q->looks_max = (int)json_integer_value(json_object_get(sj, "looks_max"));
    q->n = (int)json_integer_value(json_object_get(sj, "n"));
    q->n_baseline = (int)json_integer_value(json_object_get(sj, "n_baseline"));
    json_t *lo = json_object_get(sj, "ratio_lo"), *hi = json_object_get(sj, "ratio_hi");
    if (json_is_number(lo) && json_is_number(hi)) {
        q->ratio_lo = json_number_value(lo);
        q->ratio_hi = json_number_value(hi);
    }
    q->alpha = json_number_value(json_object_get(sj, "alpha"));
    q->alpha_look = json_number_value(json_object_get(sj, "alpha_look"));
    q->threshold = json_number_value(json_object_get(sj, "threshold"));
}

void kern_timing_from_json(struct mp_kernel_timing *t, json_t *tj)
{
    json_t *arr = json_object_get(tj, "samples_ms");
    if (!json_is_array(arr)) {
        json_t *st = json_object_get(tj, "stats");
        arr = json_object_get(st, "samples_ms");
    }
    size_t n = json_array_size(arr);
    free(t->samples_ms);
    t->samples_ms = n ? mp_calloc(n, sizeof(double)) : NULL;
    t->nsamples = 0;
    for (size_t j = 0; j < n && t->samples_ms; j++) {
        json_t *v = json_array_get(arr, j);
        if (json_is_number(v))
            t->samples_ms[t->nsamples++] = json_number_value(v);
    }
    json_t *b = json_object_get(tj, "batch");
    t->batch = json_is_integer(b) ? (int)json_integer_value(b) : 1;
    json_t *f = json_object_get(tj, "l2_flush_bytes");
    t->l2_flush_bytes = json_is_number(f) ? json_number_value(f) : 0;
    const char *sr = json_string_value(json_object_get(tj, "stop_reason"));
    snprintf(t->stop_reason, sizeof(t->stop_reason), "%s", sr ? sr : "");
    const char *dev = json_string_value(json_object_get(tj, "device"));
    snprintf(t->device, sizeof(t->device), "%s", dev ? dev : "");
    const char *msg = json_string_value(json_object_get(tj, "message"));
    if (!msg)
        msg = json_string_value(json_object_get(tj, "error"));
    free(t->errors);
    t->errors = kern_strdup_or_null(msg);
    t->success = t->nsamples > 0 && !msg;
    json_t *g = json_object_get(tj, "power_guard");
    t->guard.present = json_is_object(g);
    if (t->guard.present) {
        json_t *cm = json_object_get(g, "sample_clock_mhz_median");
        t->guard.ref_mhz = json_number_value(json_object_get(g, "reference_clock_mhz"));
        t->guard.clock_mhz = json_is_number(cm) ? json_number_value(cm) : NAN;
        t->guard.cool_ratio = json_number_value(json_object_get(g, "cool_ratio"));
        t->guard.discarded = (int)json_integer_value(json_object_get(g, "discarded_throttled"));
        t->guard.sustained = json_is_true(json_object_get(g, "sustained_cap"));
    }
    seq_from_json(&t->seq, json_object_get(tj, "sequential"));
    if (t->nsamples > 0)
        mp_stats_summarize(t->samples_ms, (size_t)t->nsamples, 0.95, 2000, 0x5eed, &t->st);
}

static void gpu_clock(double *clock, double *temp)
{
    *clock = NAN;
    *temp = NAN;
    struct mp_gpu_info gi;
    struct mp_gpu_detect_opts go = {.no_tools = true, .timeout_s = 10};
    if (mp_gpu_detect(&gi, &go, NULL) == 0 && gi.count > 0) {
        *clock = gi.gpus[0].sm_clock_mhz;
        *temp = gi.gpus[0].temperature_c;
    }
    mp_gpu_info_fini(&gi);
}

bool kern_timing_throttled(const struct mp_kernel_timing *t, double max_mhz)
{
    bool thr = isfinite(t->clock_after_mhz) && isfinite(max_mhz) && max_mhz > 0 &&
               t->clock_after_mhz < 0.85 * max_mhz && t->clock_after_mhz > 0;
    if (isfinite(t->temp_after_c) && t->temp_after_c >= 87)
        thr = true;
    /* a power or thermal cap during the run (the clock after it is an idle
     * reading); with the power guard on, the samples that started capped were
     * dropped and the monitor's share counts those, so only a cap the guard
     * could not get under (sustained) flags the run */
    bool guarded = t->guard.present && !t->guard.sustained;
    if (!guarded && t->during.samples >= 3 && t->during.capped_share >= 0.10)
        thr = true;
    if (t->guard.present && t->guard.sustained)
        thr = true;
    return thr;
}

static void throttle_check(struct ctx *c, struct mp_kernel_timing *t)
{
    detect_gpu(c);
    t->throttled =
        kern_timing_throttled(t, c->gpu.count > 0 ? c->gpu.gpus[0].sm_clock_max_mhz : NAN);
}

/* Clock monitor around a timed child: NVIDIA GPUs only; the device the
 * child sees first (CUDA_VISIBLE_DEVICES' first entry when it is a number). */
static void clockmon_start(struct ctx *c, struct kern_clockmon *m, const char *dir)
{
    m->proc = NULL;
    detect_gpu(c);
    if (c->gpu.vendor != MP_GPU_VENDOR_NVIDIA || c->gpu.count == 0)
        return;
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    char *end = NULL;
    long idx = vis && *vis ? strtol(vis, &end, 10) : 0;
    if (vis && *vis && (end == vis || (*end && *end != ',') || idx < 0 || idx > 255))
        idx = 0;
    kern_clockmon_start(m, dir, (int)idx);
}

/* One run of the last testcase command for its MAGPIE_LATENCY_JSON line.
 * round > 0 (compare: interleaved rounds) appends to the samples so far. */
static void stage_latency_marker(struct ctx *c, int i, int round)
{
    const struct mp_kernel_spec *k = &c->cfg->kernels[i];
    struct mp_kernel_result *r = &c->run->results[i];
    if (k->testcase.n == 0) {
        r->latency = MP_STAGE_SKIPPED;
        return;
    }
    char log[PATH_MAX];
    snprintf(log, sizeof(log), "%s/latency.log", r->workdir);
    char why[2048] = "";
    struct mp_proc_result res;
    struct mp_kernel_timing *t = &r->timing;
    r->has_timing = true;
    snprintf(t->method, sizeof(t->method), "testcase_marker");
    if (round == 0) {
        struct mp_buf cmd;
        mp_buf_init(&cmd, 1 << 16);
        mp_proc_join((const char *const *)k->testcase.argv[k->testcase.n - 1], &cmd);
        t->command = mp_strdup(mp_buf_cstr(&cmd));
        mp_buf_fini(&cmd);
        gpu_clock(&t->clock_before_mhz, &t->temp_before_c);
    }
    struct kern_clockmon mon;
    clockmon_start(c, &mon, r->workdir);
    int rc = run_cmd(k, (const char *const *)k->testcase.argv[k->testcase.n - 1],
                     c->cfg->latency.timeout_s, log, &res, why, sizeof(why));
    kern_clockmon_stop(&mon, &t->during);
    gpu_clock(&t->clock_after_mhz, &t->temp_after_c);
    const char *out = mp_buf_cstr(&res.out);
    const char *last = NULL;
    for (const char *p = out; (p = strstr(p, "MAGPIE_LATENCY_JSON:")) != NULL; p++)
        last = p;
    if ((rc || !last) && round > 0) { /* keep the rounds that worked */
        kern_add_error(r, "Latency round %d: %s", round + 1,
                       rc ? why : "no MAGPIE_LATENCY_JSON line");
        mp_proc_result_fini(&res);
        return;
    }
    if (rc || !last) {
        if (!last) {
            /* not an error of the kernel: the testcase does not time itself */
            r->latency = MP_STAGE_SKIPPED;
            t->errors = mp_strdup(rc ? why
                                     : "the testcase printed no MAGPIE_LATENCY_JSON line "
                                       "(include runtime/magpie_timing.h to time it)");
        } else {
            r->latency = MP_STAGE_FAILED;
            t->errors = mp_strdup(why);
            kern_add_error(r, "Latency: %s", why);
        }
        mp_proc_result_fini(&res);
        return;
    }
    const char *js = last + strlen("MAGPIE_LATENCY_JSON:");
    const char *eol = strchr(js, '\n');
    json_error_t je;
    json_t *j = json_loadb(js, eol ? (size_t)(eol - js) : strlen(js), 0, &je);
    mp_proc_result_fini(&res);
    if (!j) {
        r->latency = MP_STAGE_FAILED;
        t->errors = mp_strdup("MAGPIE_LATENCY_JSON line is not valid JSON");
        kern_add_error(r, "Latency: %s", t->errors);
        return;
    }
    double *prev = t->samples_ms;
    int nprev = t->nsamples;
    t->samples_ms = NULL;
    kern_timing_from_json(t, j);
    json_decref(j);
    if (round > 0 && nprev > 0 && t->nsamples > 0) { /* rounds accumulate */
        double *all = mp_reallocarray(prev, (size_t)nprev + (size_t)t->nsamples, sizeof(double));
        if (all) {
            memcpy(all + nprev, t->samples_ms, (size_t)t->nsamples * sizeof(double));
            free(t->samples_ms);
            t->samples_ms = all;
            t->nsamples += nprev;
            prev = NULL;
            mp_stats_summarize(t->samples_ms, (size_t)t->nsamples, 0.95, 2000, 0x5eed, &t->st);
        }
    }
    free(prev);
    throttle_check(c, t);
    r->latency = t->success ? MP_STAGE_SUCCESS : MP_STAGE_FAILED;
    if (!t->success)
        kern_add_error(r, "Latency: %s", t->errors ? t->errors : "no samples");
}

/* ---- harness and Python runner jobs ---- */

static json_t *timing_cfg_json(const struct mp_kernel_config *cfg, bool enabled)
{
    const struct mp_latency_cfg *l = &cfg->latency;
    json_t *t = json_object();
    json_object_set_new(t, "enabled", json_boolean(enabled));
    json_object_set_new(t, "min_samples", json_integer(l->min_samples));
    json_object_set_new(t, "max_samples", json_integer(l->max_samples));
    json_object_set_new(t, "min_time_s", json_real(l->min_time_s));
    json_object_set_new(t, "max_noise", json_real(l->max_noise));
    json_object_set_new(t, "max_time_s", json_real(l->max_time_s));
    json_object_set_new(t, "warmup_s", json_real(l->warmup_s));
    json_object_set_new(t, "l2_flush", json_boolean(l->l2_flush));
    json_object_set_new(t, "power_guard", json_boolean(l->power_guard));
    if (l->cool_ratio >= 0)
        json_object_set_new(t, "cool_ratio", json_real(l->cool_ratio));
    json_object_set_new(t, "seed", json_integer(l->seed));
    return t;
}

static json_t *entry_json(const struct mp_kernel_spec *k, const char *id, const char *source,
                          const char *module, bool is_ref, int ref)
{
    json_t *e = json_object();
    json_object_set_new(e, "id", json_string(id));
    json_object_set_new(e, "type", json_string(mp_kernel_type_name(k->type)));
    char abs[PATH_MAX];
    if (source)
        json_object_set_new(e, "source", json_string(realpath(source, abs) ? abs : source));
    if (module)
        json_object_set_new(e, "module", json_string(module));
    if (k->kernel_name)
        json_object_set_new(e, "kernel_name", json_string(k->kernel_name));
    json_object_set_new(e, "is_reference", json_boolean(is_ref));
    /* the runner's loader of the language's files (a reference is a
     * KernelBench file whatever the kernel's language) */
    const struct mp_kernel_lang *lang = mp_kernel_lang_get(k->type);
    json_object_set_new(
        e, "entry",
        json_string(!is_ref && lang && lang->runner_entry ? lang->runner_entry : "kernelbench"));
    json_object_set_new(e, "ref", json_integer(ref));
    json_object_set_new(e, "size", json_integer(k->size));
    json_object_set_new(e, "ndim", json_integer(k->ndim));
    json_t *g = json_array(), *l = json_array();
    for (int d = 0; d < MP_KERNEL_MAX_DIMS; d++) {
        json_array_append_new(g, json_integer(k->global[d]));
        json_array_append_new(l, json_integer(k->local[d]));
    }
    json_object_set_new(e, "global", g);
    json_object_set_new(e, "local", l);
    if (k->atol >= 0)
        json_object_set_new(e, "atol", json_real(k->atol));
    if (k->rtol >= 0)
        json_object_set_new(e, "rtol", json_real(k->rtol));
    json_object_set_new(e, "seeds", json_integer(k->seeds));
    if (k->dtype)
        json_object_set_new(e, "dtype", json_string(k->dtype));
    if (k->hp_off)
        json_object_set_new(e, "hp_reference", json_false());
    if (k->hp_factor > 0)
        json_object_set_new(e, "hp_factor", json_real(k->hp_factor));
    if (k->rms_factor > 0)
        json_object_set_new(e, "rms_factor", json_real(k->rms_factor));
    json_object_set_new(e, "get_inputs",
                        json_string(k->get_inputs_func ? k->get_inputs_func : "get_inputs"));
    json_object_set_new(
        e, "get_init_inputs",
        json_string(k->get_init_inputs_func ? k->get_init_inputs_func : "get_init_inputs"));
    return e;
}

/* runtime/ for the Python runner: the caller's o->runtime_dir, else
 * mp_kernel_runtime_find's order; said on the debug log. */
static bool find_runtime(struct ctx *c, struct mp_diag *d)
{
    if (c->runtime_dir[0])
        return true;
    const char *how = "the caller";
    if (c->o->runtime_dir) {
        if (!realpath(c->o->runtime_dir, c->runtime_dir)) {
            c->runtime_dir[0] = 0;
            mp_diag_set(d, MP_ENOTFOUND, "runtime directory %s not found", c->o->runtime_dir);
            return false;
        }
    } else if (mp_kernel_runtime_find(c->self_exe, c->runtime_dir, sizeof(c->runtime_dir), &how,
                                      d)) {
        c->runtime_dir[0] = 0;
        return false;
    }
    mp_log(MP_LOG_DEBUG, "runtime from %s (%s)", c->runtime_dir, how);
    return true;
}

/* The paths of a job's files in dir: the job, its result (PATH_MAX + 64
 * each) */
struct job_paths {
    char job[PATH_MAX + 64], out[PATH_MAX + 64];
};

/* Writes the job file of one job (harness child or Python runner) over
 * kernels idx[0..n) (mode: "build", "run" or "profile") into dir and removes
 * an old result; *timing: whether it times; returns its spawned_at time. */
static double job_write(struct ctx *c, const int *idx, int n, const char *mode, bool python,
                        const char *dir, bool check_only, struct job_paths *jp, bool *timing_out)
{
    const struct mp_kernel_config *cfg = c->cfg;
    json_t *job = json_object();
    json_t *arr = json_array();
    char *out = jp->out, *jobp = jp->job;
    snprintf(out, sizeof(jp->out), "%s/%s_%s_result.json", dir, python ? "runner" : "harness",
             mode);
    snprintf(jobp, sizeof(jp->job), "%s/%s_%s_job.json", dir, python ? "runner" : "harness", mode);
    const struct mp_kernel_spec *k0 = &cfg->kernels[idx[0]];
    const char *backend = mp_kernel_lang_get(k0->type)->backend;
    json_object_set_new(job, "backend", json_string(backend));
    json_object_set_new(job, "mode", json_string(mode));
    json_object_set_new(job, "output", json_string(out));
    json_object_set_new(job, "interleave", json_boolean(c->compare && n > 1));
    bool timing = !c->o->no_latency && cfg->latency.enabled &&
                  strcmp(cfg->latency.method, "none") != 0 && !check_only;
    json_object_set_new(job, "timing", timing_cfg_json(cfg, timing));
    int base = c->run->baseline;
    bool base_in = false;
    for (int j = 0; j < n; j++)
        base_in = base_in || idx[j] == base;
    if (timing && n > 1 && base_in && seq_timing(c)) {
        char bkey[300];
        snprintf(bkey, sizeof(bkey), "%d_%s", base, cfg->kernels[base].id);
        json_object_set_new(job, "sequential",
                            json_pack("{s:s,s:f,s:f}", "baseline", bkey, "alpha",
                                      cfg->compare.alpha, "threshold", cfg->compare.threshold));
    }
    /* references: a kernel's own, else (compare) the baseline's source */
    for (int j = 0; j < n; j++) {
        int i = idx[j];
        const struct mp_kernel_spec *k = &cfg->kernels[i];
        const char *ref_src = k->reference;
        const char *ref_mod = c->ref_module[i];
        const struct mp_kernel_spec *rk = k;
        if (!ref_src && c->compare && i != base && base >= 0 && base < cfg->nkernels &&
            cfg->kernels[base].type == k->type && cfg->kernels[base].nsources > 0) {
            rk = &cfg->kernels[base];
            ref_src = rk->reference ? rk->reference : rk->sources[0];
            ref_mod = rk->reference ? c->ref_module[base] : c->module[base];
        }
        int ref = -1;
        if (ref_src) {
            ref = (int)json_array_size(arr);
            char rid[300];
            snprintf(rid, sizeof(rid), "%d_%s.reference", i, k->id);
            json_t *re = entry_json(rk, rid, ref_src, ref_mod, true, -1);
            if (rk != k && rk->kernel_name) /* the baseline's entry point */
                json_object_set_new(re, "kernel_name", json_string(rk->kernel_name));
            if (rk == k && k->ndim <= 1) {
                /* a kernel's own 1-D reference runs one work item per
                 * element: the candidate's global_size is the candidate's */
                json_object_set_new(re, "ndim", json_integer(0));
                json_object_set_new(re, "global", json_pack("[i,i,i]", 0, 0, 0));
                json_object_set_new(re, "local", json_pack("[i,i,i]", 0, 0, 0));
            }
            json_array_append_new(arr, re);
        }
        char key[300]; /* ids may repeat in a config: the index keeps them apart */
        snprintf(key, sizeof(key), "%d_%s", i, k->id);
        json_array_append_new(
            arr, entry_json(k, key, k->nsources ? k->sources[0] : NULL, c->module[i], false, ref));
    }
    json_object_set_new(job, "kernels", arr);
    if (python && c->run->workspace) { /* the output root: shared by the runs under it */
        char rc[PATH_MAX + 32];
        snprintf(rc, sizeof(rc), "%s", c->run->workspace);
        char *sl = strrchr(rc, '/');
        if (sl && sl != rc) {
            snprintf(sl, sizeof(rc) - (size_t)(sl - rc), "/.magpie_ref_cache");
            json_object_set_new(job, "ref_cache_dir", json_string(rc));
        }
    }
    if (n > 1) /* one kernel's checks may hang the shared process */
        json_object_set_new(job, "correctness_timeout_s", json_real(cfg->correctness.timeout_s));
    if (!strcmp(mode, "profile")) /* the runner's calls for ncu's NVTX filter (profile.c) */
        json_object_set_new(
            job, "profile",
            json_pack("{s:s,s:i}", "nvtx_range", K_PROFILE_NVTX_RANGE, "calls", K_PROFILE_CALLS));
    double spawned = epoch_now();
    json_object_set_new(job, "spawned_at", json_real(spawned));
    json_dump_file(job, jobp, JSON_INDENT(1));
    json_decref(job);
    unlink(out);
    *timing_out = timing;
    return spawned;
}

/* The command of a job's child: the Python runner (runner: a buffer of
 * PATH_MAX + 32) or magpie's harness child; false (the reason in d) when
 * the runtime directory is not found. */
static bool child_argv(struct ctx *c, bool python, const char *jobp, const char **argv,
                       char *runner, size_t rlen, struct mp_diag *d)
{
    if (python) {
        if (!find_runtime(c, d))
            return false;
        snprintf(runner, rlen, "%s/magpie_runner.py", c->runtime_dir);
        /* in a container: the image's python3 (MAGPIE_PYTHON names one here) */
        const char *py = getenv(g_ct ? "MAGPIE_CONTAINER_PYTHON" : "MAGPIE_PYTHON");
        argv[0] = py && *py ? py : "python3";
        argv[1] = runner;
        argv[2] = jobp;
        argv[3] = NULL;
    } else {
        argv[0] = c->self_exe;
        argv[1] = "analyze";
        argv[2] = "--harness-child";
        argv[3] = jobp;
        argv[4] = NULL;
    }
    return true;
}

/* The problem a warm child is kept for: its command, the back-end and,
 * for the runner (whose memory holds the reference's outputs), the job's
 * reference files (the kernels' own where none has one). */
static void warm_key(struct ctx *c, const int *idx, int n, bool python, const char *const *argv,
                     struct mp_buf *key)
{
    const struct mp_kernel_config *cfg = c->cfg;
    for (int i = 0; argv[i] && argv[i + 1]; i++) /* all but the job's path */
        mp_buf_printf(key, "%s\x1f", argv[i]);
    mp_buf_printf(key, "%s", mp_kernel_lang_get(cfg->kernels[idx[0]].type)->backend);
    for (int j = 0; python && j < n; j++) {
        const struct mp_kernel_spec *k = &cfg->kernels[idx[j]];
        const char *ref = k->reference ? k->reference : k->nsources ? k->sources[0] : "";
        char abs[PATH_MAX];
        mp_buf_printf(key, "\x1f%s", realpath(ref, abs) ? abs : ref);
    }
}

/* Runs the job in a warm child (o->warm_socket: the MCP server's pool;
 * docs/kernel-timing.md, "Warm runners"): 0 done, 1 failed (why), -1 not
 * run (no pool here, a container, a kernel with an env of its own, or the
 * pool has no child free): run it cold. */
static int run_warm(struct ctx *c, const int *idx, int n, bool python, const char **argv,
                    const struct mp_kernel_spec *env_of, const char *jobp, const char *log,
                    double limit, char *why, size_t whylen)
{
    const char *sock = c->o->warm_socket;
    if (!sock || !*sock || g_ct || (env_of->env && env_of->env[0]))
        return -1;
    const char *wargv[8];
    int na = 0;
    for (; argv[na] && na < 7; na++)
        wargv[na] = argv[na] == jobp ? "-" : argv[na];
    wargv[na] = NULL;
    struct mp_buf key;
    mp_buf_init(&key, 1 << 14);
    warm_key(c, idx, n, python, argv, &key);
    FILE *f = fopen(log, "a");
    if (f) {
        struct mp_buf line;
        mp_buf_init(&line, 1 << 16);
        mp_proc_join(argv, &line);
        fprintf(f, "$ %s (in a warm child)\n", mp_buf_cstr(&line));
        mp_buf_fini(&line);
        fclose(f);
    }
    bool warm = false;
    int rc = kern_warm_run(sock, mp_buf_cstr(&key), wargv, env_of->working_dir, jobp, log, limit,
                           &warm, why, whylen);
    mp_buf_fini(&key);
    mp_log(MP_LOG_DEBUG, "warm child: %s (%s)",
           rc < 0 ? "none, cold"
           : rc   ? why
                  : "done",
           warm ? "warm" : "fresh");
    return rc;
}

/* Runs one job (harness child or Python runner) over kernels idx[0..n).
 * mode: "build", "run" or "profile". Fills results; returns the parsed
 * result or NULL with every kernel failed with the reason. */
static json_t *run_job(struct ctx *c, const int *idx, int n, const char *mode, bool python,
                       const char *dir, bool check_only)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct job_paths jp;
    bool timing = false;
    double spawned = job_write(c, idx, n, mode, python, dir, check_only, &jp, &timing);
    const char *out = jp.out;
    char runner[PATH_MAX + 32];
    const char *argv[8];
    struct mp_diag rd = {0};
    if (!child_argv(c, python, jp.job, argv, runner, sizeof(runner), &rd)) {
        for (int j = 0; j < n; j++)
            kern_add_error(&c->run->results[idx[j]], "%s", rd.msg);
        return NULL;
    }
    char log[PATH_MAX + 64];
    snprintf(log, sizeof(log), "%s/%s_%s.log", dir, python ? "runner" : "harness", mode);
    /* correctness and timing together: generous limit */
    double limit = cfg->correctness.timeout_s +
                   (timing ? cfg->latency.max_time_s * n * (K_MIN_SAMPLES_GRACE + 1) + 60 : 0);
    struct mp_kernel_spec env_of = cfg->kernels[idx[0]]; /* cwd + env of the first kernel */
    env_of.working_dir = python ? env_of.working_dir : NULL;
    char why[2048] = "";
    if (run_warm(c, idx, n, python, argv, &env_of, jp.job, log, limit, why, sizeof(why)) < 0) {
        struct mp_proc_result res;
        run_cmd(&env_of, argv, limit, log, &res, why, sizeof(why));
        mp_proc_result_fini(&res);
    }
    bool present = false;
    char perr[PATH_MAX + 256];
    json_t *r = kern_load_result(out, &present, perr, sizeof(perr));
    bd_child(c, idx, n,
             !strcmp(mode, "build") ? "build_process"
             : check_only           ? "correctness_process"
                                    : (!strcmp(mode, "run") ? "timed_process" : "profile_process"),
             epoch_now() - spawned, r);
    if (!r) {
        for (int j = 0; j < n; j++) {
            struct mp_kernel_result *kr = &c->run->results[idx[j]];
            if (present) /* it wrote something: say what is wrong with it */
                kern_add_error(kr, "%s%s%s", perr, why[0] ? "; the child: " : "", why);
            else
                kern_add_error(kr, "%s did not produce a result: %s", python ? "runner" : "harness",
                               why[0] ? why : "no output");
        }
    }
    return r;
}

static json_t *find_kernel(json_t *res, const char *id)
{
    json_t *arr = json_object_get(res, "kernels");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        const char *eid = json_string_value(json_object_get(e, "id"));
        if (eid && strcmp(eid, id) == 0)
            return e;
    }
    return NULL;
}

static void apply_job_result(struct ctx *c, int i, json_t *res, bool python)
{
    struct mp_kernel_result *r = &c->run->results[i];
    const struct mp_kernel_spec *k = &c->cfg->kernels[i];
    if (!res)
        goto failed;
    const char *derr = json_string_value(json_object_get(res, "device_error"));
    char key[300];
    snprintf(key, sizeof(key), "%d_%s", i, k->id);
    json_t *e = find_kernel(res, key);
    if (derr || !e) {
        kern_add_error(r, "%s", derr ? derr : "kernel missing from the harness result");
        goto failed;
    }
    json_t *b = json_object_get(e, "build");
    if (b && !python && r->compiling == MP_STAGE_NOT_RUN) {
        r->has_compile = true;
        r->compile_success = json_is_true(json_object_get(b, "ok"));
        r->compiling = r->compile_success ? MP_STAGE_SUCCESS : MP_STAGE_FAILED;
        if (!r->compile_success) {
            const char *log = json_string_value(json_object_get(b, "log"));
            r->compile_errors = mp_strdup(log && *log ? log : "build failed");
            kern_add_error(r, "Compile failed: %s", tail(r->compile_errors, 1500));
            return;
        }
    } else if (b && !json_is_true(json_object_get(b, "ok"))) {
        const char *log = json_string_value(json_object_get(b, "log"));
        r->has_correct = true;
        r->correctness = MP_STAGE_FAILED;
        r->correct.errors = mp_strdup(log && *log ? log : "could not load the kernel");
        kern_add_error(r, "Correctness: %s", r->correct.errors);
        return;
    }
    json_t *cj = json_object_get(e, "correctness");
    if (!json_is_true(json_object_get(cj, "ran")))
        return; /* build-only job */
    r->has_correct = true;
    struct mp_kernel_correct *co = &r->correct;
    const char *mode = json_string_value(json_object_get(cj, "mode"));
    snprintf(co->mode, sizeof(co->mode), "%s", mode ? mode : "reference");
    co->success = json_is_true(json_object_get(cj, "ok"));
    co->verified = co->success && json_is_true(json_object_get(cj, "verified"));
    co->checks = (int)json_integer_value(json_object_get(cj, "checks"));
    co->max_abs_err = kern_json_real(cj, "max_abs_err");
    co->max_rel_err = kern_json_real(cj, "max_rel_err");
    co->mismatches = json_integer_value(json_object_get(cj, "mismatches"));
    co->input_mutated = json_is_true(json_object_get(cj, "input_mutated"));
    co->recheck_done = json_is_true(json_object_get(cj, "recheck_done"));
    co->recheck_ok = json_is_true(json_object_get(cj, "recheck_ok"));
    const char *msg = json_string_value(json_object_get(cj, "message"));
    free(co->errors);
    co->errors = kern_strdup_or_null(msg);
    free(co->tolerance);
    co->tolerance = kern_tolerance_json(cj);
    if (!co->success) {
        r->correctness = MP_STAGE_FAILED;
        kern_add_error(r, "Correctness: %s", msg ? msg : "failed");
        return;
    }
    /* proven, or unverified (ran fine, nothing to compare with) */
    r->correctness = co->verified ? MP_STAGE_SUCCESS : MP_STAGE_SKIPPED;
    if (!co->verified)
        kern_add_error(r, "Correctness %s", msg ? msg : "unverified: no reference");
    json_t *tj = json_object_get(e, "timing");
    if (!json_is_true(json_object_get(tj, "ran"))) {
        r->latency = MP_STAGE_SKIPPED;
        return;
    }
    r->has_timing = true;
    kern_timing_from_json(&r->timing, tj);
    bool graph = json_is_true(json_object_get(tj, "cuda_graph"));
    const char *method = python ? (graph ? "python_runner_cuda_graph" : "python_runner")
                                : (graph ? "harness_cuda_graph" : "harness_events");
    snprintf(r->timing.method, sizeof(r->timing.method), "%s", method);
    r->latency = r->timing.success ? MP_STAGE_SUCCESS : MP_STAGE_FAILED;
    if (!r->timing.success)
        kern_add_error(r, "Latency: %s", r->timing.errors ? r->timing.errors : "no samples");
    return;
failed:
    if (r->compiling == MP_STAGE_NOT_RUN && !python) {
        r->compiling = MP_STAGE_FAILED;
        r->has_compile = true;
        r->compile_errors = mp_strdup(r->nerrors ? r->errors[r->nerrors - 1] : "harness failed");
    } else {
        r->has_correct = true;
        r->correctness = MP_STAGE_FAILED;
        free(r->correct.errors);
        r->correct.errors = mp_strdup(r->nerrors ? r->errors[r->nerrors - 1] : "the runner failed");
    }
}

/* ---- score ---- */

static void score(struct mp_kernel_result *r)
{
    if (r->compiling == MP_STAGE_FAILED) {
        r->score = 0;
        return;
    }
    double s = 0;
    if (r->correctness == MP_STAGE_SUCCESS)
        s += 0.5;
    if (r->performance == MP_STAGE_SUCCESS)
        s += 0.5;
    if (r->performance == MP_STAGE_SKIPPED && r->correctness == MP_STAGE_SUCCESS)
        s = 1.0;
    r->score = s;
}

/* ---- the run ---- */

void mp_kernel_run_init(struct mp_kernel_run *r)
{
    memset(r, 0, sizeof(*r));
    r->winner = -1;
}

static void timing_fini(struct mp_kernel_timing *t)
{
    free(t->errors);
    free(t->command);
    free(t->samples_ms);
}

void mp_kernel_run_fini(struct mp_kernel_run *run)
{
    if (!run)
        return;
    for (int i = 0; i < run->n; i++) {
        struct mp_kernel_result *r = &run->results[i];
        free(r->id);
        free(r->compile_errors);
        free(r->correct.errors);
        free(r->correct.tolerance);
        mp_kernel_perf_fini(&r->perf);
        timing_fini(&r->timing);
        for (int j = 0; j < r->nerrors; j++)
            free(r->errors[j]);
        free((void *)r->errors);
        free(r->workdir);
        free(r->breakdown);
    }
    free(run->results);
    free(run->workspace);
    free(run->report_path);
    free(run->html_path);
    free(run->vs);
    free(run->summary);
    memset(run, 0, sizeof(*run));
}

bool mp_kernel_run_failed(const struct mp_kernel_run *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->results[i].compiling == MP_STAGE_FAILED ||
            r->results[i].correctness != MP_STAGE_SUCCESS)
            return true;
    return false;
}

/* run_all's steps, in order: workspace, per-kernel setup, container mounts,
 * compile, correctness (harness/runner groups, then testcase kernels),
 * performance, latency, score and reports */

/* the run's work directory below --output-dir; a second run in the same
 * second gets its own directory */
static int run_workspace(struct ctx *c, struct mp_diag *d)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct mp_kernel_run *run = c->run;
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(run->timestamp, sizeof(run->timestamp), "%Y%m%d_%H%M%S", &tmv);
    const char *root = c->o->output_dir ? c->o->output_dir : "./results";
    char label[128], ws[PATH_MAX];
    sanitize(cfg->kernels[0].id ? cfg->kernels[0].id : "kernel", label, sizeof(label));
    if (c->compare)
        snprintf(ws, sizeof(ws), "%s/compare_%s", root, run->timestamp);
    else
        snprintf(ws, sizeof(ws), "%s/analyze_%s_%s", root, label, run->timestamp);
    for (int s = 2; mp_fs_exists(ws) && s < 1000; s++) {
        size_t l = strlen(ws);
        char *us = strrchr(ws, '-');
        if (s > 2 && us && (size_t)(us - ws) > l - 5)
            *us = 0;
        snprintf(ws + strlen(ws), sizeof(ws) - strlen(ws), "-%d", s);
    }
    int rc = mp_fs_mkdirs(ws, d);
    if (rc)
        return rc;
    char absws[PATH_MAX];
    run->workspace = mp_strdup(realpath(ws, absws) ? absws : ws);
    return 0;
}

/* each kernel's result, work directory and how it is evaluated */
static void run_setup_kernels(struct ctx *c)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct mp_kernel_run *run = c->run;
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_spec *k = &cfg->kernels[i];
        struct mp_kernel_result *r = &run->results[i];
        r->id = mp_strdup(k->id ? k->id : "kernel");
        r->type = k->type;
        char sub[PATH_MAX + 256], lab[128];
        sanitize(r->id, lab, sizeof(lab));
        snprintf(sub, sizeof(sub), "%s/%d_%s", run->workspace, i, lab);
        r->workdir = mp_strdup(sub);
        mp_fs_mkdirs(sub, NULL);
        enum mp_klang_run how = mp_kernel_spec_runs(k); /* the language's row */
        c->harness[i] = how == MP_KLANG_RUN_HARNESS;
        c->runner[i] = how == MP_KLANG_RUN_RUNNER;
        if (!c->harness[i] && !c->runner[i] && k->testcase.n == 0 &&
            strcmp(cfg->correctness.backend, "accordo") != 0 && !c->compare) {
            /* Magpie: analyze requires a testcase */
            kern_add_error(r, "Kernel %s requires testcase", r->id);
        }
    }
}

/* the work directories at their own paths, so that every path in commands
 * and job files means the same inside */
static int run_container_mounts(struct ctx *c, struct kern_container *ct, struct mp_diag *d)
{
    struct mp_kernel_run *run = c->run;
    bool runner = false;
    int rc = kern_container_mount(ct, ".", false, d);
    if (!rc)
        rc = kern_container_mount(ct, run->workspace, false, d);
    for (int i = 0; i < run->n && !rc; i++) {
        runner |= c->runner[i];
        if (c->cfg->kernels[i].working_dir)
            rc = kern_container_mount(ct, c->cfg->kernels[i].working_dir, false, d);
    }
    char exedir[PATH_MAX];
    snprintf(exedir, sizeof(exedir), "%s", c->self_exe);
    char *sl = strrchr(exedir, '/');
    if (sl && sl != exedir && !rc) {
        *sl = 0;
        rc = kern_container_mount(ct, exedir, true, d);
    }
    if (!rc && runner && find_runtime(c, NULL))
        rc = kern_container_mount(ct, c->runtime_dir, true, d);
    return rc;
}

static void run_compile(struct ctx *c)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct mp_kernel_run *run = c->run;
    for (int i = 0; i < run->n; i++) {
        progress(c->o, "[%d/%d] %s (%s): compiling", i + 1, run->n, run->results[i].id,
                 mp_kernel_type_name(cfg->kernels[i].type));
        double t0 = epoch_now();
        stage_compile(c, i);
        if (c->bd && !c->bd[i])
            c->bd[i] = json_object();
        if (c->bd && c->bd[i])
            json_object_set_new(c->bd[i], "compile_s", json_real(epoch_now() - t0));
    }
    /* OpenCL: build check through the harness (fills the compile stage) */
    for (int i = 0; i < run->n; i++) {
        if (mp_kernel_lang_get(cfg->kernels[i].type)->compile != MP_KLANG_COMPILE_HARNESS ||
            run->results[i].compiling != MP_STAGE_NOT_RUN)
            continue;
        json_t *res = run_job(c, &i, 1, "build", false, run->results[i].workdir, false);
        apply_job_result(c, i, res, false);
        json_decref(res);
    }
}

/* the kernels from first on that run in one job with it: only itself in
 * analyze, all of its backend in compare; marks them done */
static int group_collect(struct ctx *c, int first, bool python, int *grp, bool *done)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct mp_kernel_run *run = c->run;
    int ng = 0;
    for (int i = first; i < run->n && (c->compare || ng == 0); i++) {
        bool same = python ? c->runner[i]
                           : c->harness[i] && cfg->kernels[i].type == cfg->kernels[first].type;
        if (done[i] || !same || run->results[i].compiling == MP_STAGE_FAILED)
            continue;
        grp[ng++] = i;
        done[i] = true;
    }
    return ng;
}

/* correctness of each kernel in a process of its own first: a kernel that
 * hangs or faults (a dead CUDA context) must not take the others with it;
 * returns how many survive, kept at the front of grp */
static int group_correctness(struct ctx *c, int *grp, int ng, bool python)
{
    int keep = 0;
    for (int j = 0; j < ng; j++) {
        struct mp_kernel_result *r = &c->run->results[grp[j]];
        json_t *one = run_job(c, &grp[j], 1, "run", python, r->workdir, true);
        apply_job_result(c, grp[j], one, python);
        json_decref(one);
        bool ok = r->compiling != MP_STAGE_FAILED &&
                  (r->correctness == MP_STAGE_SUCCESS || r->correctness == MP_STAGE_SKIPPED);
        if (ok) {
            for (int e = 0; e < r->nerrors; e++) /* said again by the timed run */
                free(r->errors[e]);
            r->nerrors = 0;
            grp[keep++] = grp[j];
        }
    }
    return keep;
}

/* Whether a job over several kernels can be taken as it is: a result for
 * every kernel, and no kernel that failed by a failed launch, or by an
 * exception (in its import or its checks) after which the device did not
 * answer the runner's probe (`device_ok_after`: a dead CUDA context fails
 * every kernel after it in the process; a Python exception with the device
 * still answering, an agent's most common failure, leaves the others'
 * results standing). */
static bool shared_trusted(struct ctx *c, json_t *res, const int *grp, int ng)
{
    if (!res || json_object_get(res, "device_error"))
        return false;
    for (int j = 0; j < ng; j++) {
        char key[300];
        snprintf(key, sizeof(key), "%d_%s", grp[j], c->cfg->kernels[grp[j]].id);
        json_t *e = find_kernel(res, key);
        if (!e)
            return false;
        json_t *bj = json_object_get(e, "build");
        if (bj && !json_is_true(json_object_get(bj, "ok"))) {
            if (!json_is_true(json_object_get(bj, "device_ok_after")))
                return false;
            continue;
        }
        json_t *cj = json_object_get(e, "correctness");
        const char *msg = json_string_value(json_object_get(cj, "message"));
        if (!json_is_true(json_object_get(cj, "ran")))
            return false;
        if (msg && (strstr(msg, "launch failed") || strstr(msg, "re-check could not run")))
            return false;
        if (msg && !strncmp(msg, "raised:", 7) &&
            !json_is_true(json_object_get(cj, "device_ok_after")))
            return false;
    }
    return true;
}

/* drops the errors run_job added to the group's results after `before` */
static void drop_errors(struct ctx *c, const int *grp, int ng, const int *before)
{
    for (int j = 0; j < ng; j++) {
        struct mp_kernel_result *r = &c->run->results[grp[j]];
        while (r->nerrors > before[j])
            free(r->errors[--r->nerrors]);
    }
}

/* one timed job over the group (interleaved when more than one), with GPU
 * clocks and temperatures before, during and after. shared: the group has
 * not been checked in processes of its own, and the job's result is taken
 * only when shared_trusted; false then, with nothing applied. */
static bool group_timed(struct ctx *c, const int *grp, int ng, bool python, bool shared)
{
    struct mp_kernel_run *run = c->run;
    double cb, tb, ca, ta;
    gpu_clock(&cb, &tb);
    const char *jdir = ng == 1 ? run->results[grp[0]].workdir : run->workspace;
    struct kern_clockmon mon;
    struct mp_kernel_clocks during = {0};
    int *before = mp_calloc((size_t)ng, sizeof(int));
    for (int j = 0; j < ng && before; j++)
        before[j] = run->results[grp[j]].nerrors;
    clockmon_start(c, &mon, jdir);
    json_t *res = run_job(c, grp, ng, "run", python, jdir, false);
    kern_clockmon_stop(&mon, &during);
    gpu_clock(&ca, &ta);
    if (shared && (!before || !shared_trusted(c, res, grp, ng))) {
        if (before)
            drop_errors(c, grp, ng, before);
        for (int j = 0; j < ng && c->bd; j++) { /* kept in the breakdown as a wasted try */
            json_t *b = c->bd[grp[j]];
            json_t *tp = b ? json_object_get(b, "timed_process") : NULL;
            if (tp) {
                json_object_set(b, "shared_process_discarded", tp);
                json_object_del(b, "timed_process");
            }
        }
        mp_log(MP_LOG_INFO, "the shared process of %d kernels is not trusted: checking each alone",
               ng);
        json_decref(res);
        free(before);
        return false;
    }
    free(before);
    for (int j = 0; j < ng; j++) {
        struct mp_kernel_result *r = &run->results[grp[j]];
        apply_job_result(c, grp[j], res, python);
        r->timing.during = during;
        r->timing.clock_before_mhz = cb;
        r->timing.temp_before_c = tb;
        r->timing.clock_after_mhz = ca;
        r->timing.temp_after_c = ta;
        throttle_check(c, &r->timing);
    }
    json_decref(res);
    return true;
}

/* correctness (+ latency for harness / runner kernels); compare runs all
 * kernels of one backend in one job (interleaved timing) */
static void run_harness_groups(struct ctx *c)
{
    struct mp_kernel_run *run = c->run;
    int *grp = mp_calloc((size_t)run->n, sizeof(int));
    bool *done = mp_calloc((size_t)run->n, sizeof(bool));
    for (int first = 0; grp && done && first < run->n; first++) {
        struct mp_kernel_result *r0 = &run->results[first];
        if (done[first] || (!c->harness[first] && !c->runner[first]) ||
            r0->compiling == MP_STAGE_FAILED)
            continue;
        bool python = c->runner[first];
        int ng = group_collect(c, first, python, grp, done);
        if (ng == 1)
            progress(c->o, "[%d/%d] %s: correctness and timing", first + 1, run->n, r0->id);
        else
            progress(c->o, "comparing %d kernels: correctness, then interleaved timing", ng);
        /* sequential compare: one warm process checks every kernel and
         * times those that pass; a crash, a hang or a dead context in it
         * falls back to a process per kernel for correctness, then the
         * timed job (--timing fixed: that path always) */
        if (ng > 1 && seq_timing(c) && group_timed(c, grp, ng, python, true))
            continue;
        if (ng > 1) {
            ng = group_correctness(c, grp, ng, python);
            if (ng == 0)
                continue;
        }
        group_timed(c, grp, ng, python, false);
    }
    free(grp);
    free(done);
}

/* correctness of the kernels with a testcase (or through accordo) */
static void run_testcase_correctness(struct ctx *c)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct mp_kernel_run *run = c->run;
    for (int i = 0; i < run->n; i++) {
        struct mp_kernel_result *r = &run->results[i];
        const struct mp_kernel_spec *k = &cfg->kernels[i];
        if (c->harness[i] || c->runner[i] || r->compiling == MP_STAGE_FAILED)
            continue;
        if (!strcmp(cfg->correctness.backend, "accordo")) {
            progress(c->o, "[%d/%d] %s: correctness (accordo)", i + 1, run->n, r->id);
            kern_accordo_run(cfg, k, r);
            continue;
        }
        if (k->testcase.n == 0) {
            r->has_correct = true;
            snprintf(r->correct.mode, sizeof(r->correct.mode), "testcase");
            r->correct.errors = mp_strdup("requires testcase");
            r->correctness = MP_STAGE_FAILED;
            continue;
        }
        progress(c->o, "[%d/%d] %s: correctness (testcase)", i + 1, run->n, r->id);
        stage_testcase(c, i);
    }
}

/* Whether a runner (PyTorch/Triton) kernel is profiled: performance.backend
 * ncu; or auto in analyze on an NVIDIA GPU with ncu found (compare profiles
 * runner kernels only when asked: a process under ncu per candidate) */
static bool runner_profiled(struct ctx *c)
{
    const char *be = c->cfg->performance.backend;
    if (!strcmp(be, "ncu"))
        return true;
    if ((be[0] && strcmp(be, "auto") != 0) || c->compare)
        return false;
    char tool[1024];
    detect_gpu(c);
    return c->gpu.vendor == MP_GPU_VENDOR_NVIDIA &&
           mp_gpu_find_tool("ncu", tool, sizeof(tool)) == 0;
}

/* The performance stage of kernel i, timed into the breakdown (profile_s;
 * profile_process: the profiled child's own figures). Harness and runner
 * kernels are profiled through a job of their own in mode "profile" (the
 * runner's calls inside the NVTX range ncu filters on), testcase kernels
 * through their commands. */
static void perf_one(struct ctx *c, int i)
{
    struct mp_kernel_result *r = &c->run->results[i];
    const struct mp_kernel_spec *k = &c->cfg->kernels[i];
    bool own = c->harness[i] || c->runner[i];
    if (c->runner[i] && !runner_profiled(c)) {
        r->performance = MP_STAGE_SKIPPED;
        return;
    }
    progress(c->o, "[%d/%d] %s: performance", i + 1, c->run->n, r->id);
    double t0 = epoch_now(), spawned = 0;
    struct job_paths jp;
    char runner[PATH_MAX + 32];
    const char *argv[8];
    struct kern_perf_target t = {argv, c->runner[i] ? K_PROFILE_NVTX_RANGE : NULL};
    if (own) {
        bool timing = false;
        struct mp_diag d = {0};
        spawned = job_write(c, &i, 1, "profile", c->runner[i], r->workdir, false, &jp, &timing);
        if (!child_argv(c, c->runner[i], jp.job, argv, runner, sizeof(runner), &d)) {
            kern_add_error(r, "%s", d.msg);
            r->performance = MP_STAGE_FAILED;
            return;
        }
    }
    kern_stage_performance(c->cfg, k, r, own ? &t : NULL);
    if (r->performance == MP_STAGE_SKIPPED) /* no profiler for it (OpenCL, backend none) */
        return;
    if (c->bd && !c->bd[i])
        c->bd[i] = json_object();
    if (c->bd && c->bd[i])
        json_object_set_new(c->bd[i], "profile_s", json_real(epoch_now() - t0));
    if (own) {
        bool present = false;
        char why[PATH_MAX + 256];
        json_t *res = kern_load_result(jp.out, &present, why, sizeof(why));
        if (res)
            bd_child(c, &i, 1, "profile_process", epoch_now() - spawned, res);
        kern_perf_child_result(r, res, c->runner[i]);
        json_decref(res);
    }
}

/* performance of the correct kernels; latency skipped where it is off */
static void run_performance(struct ctx *c)
{
    const struct mp_kernel_config *cfg = c->cfg;
    const struct mp_kernel_opts *o = c->o;
    struct mp_kernel_run *run = c->run;
    for (int i = 0; i < run->n; i++) {
        struct mp_kernel_result *r = &run->results[i];
        bool ok = r->compiling != MP_STAGE_FAILED &&
                  (r->correctness == MP_STAGE_SUCCESS || r->correctness == MP_STAGE_SKIPPED);
        if (ok) {
            if (o->no_perf || g_ct) /* profilers do not run in containers yet */
                r->performance = MP_STAGE_SKIPPED;
            else
                perf_one(c, i);
            if (!c->harness[i] && !c->runner[i] &&
                (o->no_latency || !cfg->latency.enabled ||
                 strcmp(cfg->latency.method, "none") == 0))
                r->latency = MP_STAGE_SKIPPED;
        }
    }
}

/* latency of testcase kernels: one run each (analyze), or interleaved
 * rounds A B C, B C A, ... (compare) so drift hits all alike */
static void run_latency(struct ctx *c)
{
    const struct mp_kernel_config *cfg = c->cfg;
    struct mp_kernel_run *run = c->run;
    int rounds = c->compare ? (cfg->compare.rounds > 0 ? cfg->compare.rounds : 3) : 1;
    for (int round = 0; round < rounds; round++) {
        for (int j = 0; j < run->n; j++) {
            int i = (j + round) % run->n;
            struct mp_kernel_result *r = &run->results[i];
            bool ok = r->compiling != MP_STAGE_FAILED &&
                      (r->correctness == MP_STAGE_SUCCESS || r->correctness == MP_STAGE_SKIPPED);
            if (c->harness[i] || c->runner[i] || !ok || r->latency == MP_STAGE_SKIPPED ||
                r->latency == MP_STAGE_FAILED || (round > 0 && r->latency != MP_STAGE_SUCCESS))
                continue;
            if (round == 0)
                progress(c->o, "[%d/%d] %s: latency (testcase)", i + 1, run->n, r->id);
            stage_latency_marker(c, i, round);
        }
    }
}

static void ctx_fini(struct ctx *c)
{
    for (int i = 0; i < c->run->n; i++) {
        if (c->module)
            free(c->module[i]);
        if (c->ref_module)
            free(c->ref_module[i]);
    }
    free((void *)c->module);
    free((void *)c->ref_module);
    free(c->harness);
    free(c->runner);
    for (int i = 0; c->bd && i < c->run->n; i++) {
        if (c->bd[i] && !c->run->results[i].breakdown)
            c->run->results[i].breakdown =
                json_dumps(c->bd[i], JSON_COMPACT | JSON_REAL_PRECISION(6));
        json_decref(c->bd[i]);
    }
    free((void *)c->bd);
    mp_gpu_info_fini(&c->gpu);
}

static int run_all(const struct mp_kernel_config *cfg, const struct mp_kernel_opts *o,
                   struct mp_kernel_run *run, bool compare, struct mp_diag *d)
{
    mp_kernel_run_init(run);
    if (cfg->nkernels == 0)
        return mp_diag_set(d, MP_EINVAL, "No kernels found");
    if (compare && cfg->nkernels < 2)
        return mp_diag_set(d, MP_EINVAL, "compare needs at least 2 kernels, got %d", cfg->nkernels);
    if (compare && (o->baseline < 0 || o->baseline >= cfg->nkernels))
        return mp_diag_set(d, MP_EINVAL, "--baseline %d is not a kernel index (0..%d)", o->baseline,
                           cfg->nkernels - 1);
    struct ctx c;
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.o = o;
    c.run = run;
    c.compare = compare;
    run->baseline = compare ? o->baseline : -1;
    mp_gpu_info_init(&c.gpu);
    if (o->self_exe)
        snprintf(c.self_exe, sizeof(c.self_exe), "%s", o->self_exe);
    else if (!realpath("/proc/self/exe", c.self_exe))
        snprintf(c.self_exe, sizeof(c.self_exe), "magpie");
    snprintf(run->mode, sizeof(run->mode), "%s", compare ? "compare" : "analyze");
    struct kern_container ct;
    bool in_ct = strcmp(cfg->scheduler.environment, "container") == 0;
    if (in_ct) { /* checked before anything is created */
        detect_gpu(&c);
        int crc = kern_container_init(&ct, cfg->scheduler.docker_image, c.gpu.vendor, d);
        if (crc) {
            mp_gpu_info_fini(&c.gpu);
            return crc;
        }
    }
    int rc = run_workspace(&c, d);
    if (rc)
        return rc;
    run->n = cfg->nkernels;
    run->results = mp_calloc((size_t)run->n, sizeof(*run->results));
    c.harness = mp_calloc((size_t)run->n, sizeof(bool));
    c.runner = mp_calloc((size_t)run->n, sizeof(bool));
    c.module = mp_calloc((size_t)run->n, sizeof(char *));
    c.ref_module = mp_calloc((size_t)run->n, sizeof(char *));
    c.bd = mp_calloc((size_t)run->n, sizeof(json_t *));
    if (!run->results || !c.harness || !c.runner || !c.module || !c.ref_module || !run->workspace) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    run_setup_kernels(&c);
    if (in_ct) {
        rc = run_container_mounts(&c, &ct, d);
        if (rc)
            goto out;
        g_ct = &ct;
        progress(o, "running in containers of %s (%s)", ct.image, ct.runtime);
    }
    run_compile(&c);
    run_harness_groups(&c);
    run_testcase_correctness(&c);
    run_performance(&c);
    run_latency(&c);
    for (int i = 0; i < run->n; i++) {
        struct mp_kernel_result *r = &run->results[i];
        score(r);
    }
    for (int i = 0; c.bd && i < run->n; i++)
        if (c.bd[i])
            run->results[i].breakdown = json_dumps(c.bd[i], JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (compare)
        kern_compare_rank(run, cfg);
    rc = kern_write_reports(run, cfg, d);
out:
    g_ct = NULL;
    ctx_fini(&c);
    return rc;
}

int mp_kernel_analyze(const struct mp_kernel_config *cfg, const struct mp_kernel_opts *o,
                      struct mp_kernel_run *out, struct mp_diag *d)
{
    return run_all(cfg, o, out, false, d);
}

int mp_kernel_compare(const struct mp_kernel_config *cfg, const struct mp_kernel_opts *o,
                      struct mp_kernel_run *out, struct mp_diag *d)
{
    return run_all(cfg, o, out, true, d);
}
