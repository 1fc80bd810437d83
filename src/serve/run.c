/* One serving benchmark run, start to finish (mp_serve_run): workspace,
 * engine launch (local process group or docker container), readiness,
 * warm-up, profiler window, measured load, engine shutdown, trace
 * post-processing and the report. Every wait is bounded by the run's
 * deadline (timeout_seconds) or a smaller limit of its own; when the
 * deadline passes during the load, the engine is stopped so the requests
 * still in flight fail at once rather than hang. The steps: run.c (this
 * file: workspace, GPUs, their order, post-processing, the report),
 * run_engine.c (engine lifecycle), run_load.c (load phases); their shared
 * state is struct serve_run (serve_run_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>
#include <magpie/gpu.h>
#include <magpie/loadgen.h>
#include <magpie/pipeline.h>
#include <magpie/proc.h>
#include <magpie/serve.h>
#include <magpie/tracelens.h>

#include "serve_int.h"
#include "serve_run_int.h"

#define MAX_ERRORS 64

/* The engine's process group while it runs, for mp_serve_interrupt (a
 * signal handler); 0 otherwise. Cleared before the group leader is reaped,
 * so the id can never name someone else's group. */
volatile sig_atomic_t serve_engine_pgid;

void mp_serve_interrupt(void)
{
    pid_t pg = (pid_t)serve_engine_pgid;
    if (pg > 0)
        kill(pg, SIGTERM); /* the leader, the engine's main process; the run stops the rest */
}

void serve_run_error(struct serve_run *r, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    serve_run_error_str(r, buf);
}

void serve_run_error_str(struct serve_run *r, const char *buf)
{
    struct mp_serve_result *res = r->res;
    if (res->n_errors >= MAX_ERRORS)
        return;
    char **ne = mp_reallocarray(res->errors, res->n_errors + 1, sizeof(char *));
    if (!ne)
        return;
    res->errors = ne;
    ne[res->n_errors] = strdup(buf);
    if (ne[res->n_errors])
        res->n_errors++;
}

void serve_run_warning(struct serve_run *r, const char *msg)
{
    if (r->warn.len)
        mp_buf_puts(&r->warn, ", ");
    mp_json_str(&r->warn, msg, strlen(msg));
}

double serve_run_now_s(const struct serve_run *r)
{
    return (double)(mp_time_ns() - r->t0_ns) / 1e9;
}

double serve_run_remaining_s(const struct serve_run *r)
{
    uint64_t t = mp_time_ns();
    return t >= r->deadline_ns ? 0 : (double)(r->deadline_ns - t) / 1e9;
}

void serve_run_progress(struct serve_run *r, const char *stage, size_t done, size_t failed,
                        size_t total)
{
    r->stage = stage;
    if (!r->o || !r->o->on_progress)
        return;
    struct mp_serve_progress p = {stage, done, failed, total, serve_run_now_s(r)};
    r->o->on_progress(&p, r->o->progress_user);
}

/* Is the engine (ours, or the detached one) still there? */
bool serve_run_engine_alive(struct serve_run *r)
{
    if (r->srv)
        return mp_proc_poll(r->srv, 0) == 0;
    if (r->detached)
        return serve_group_alive(r->det_pid, r->det_pgid);
    return true;
}

/* Appends the error lines (or last lines) of server.log to an error. */
void serve_run_error_log(struct serve_run *r, const char *what)
{
    struct mp_buf tail;
    mp_buf_init(&tail, 0);
    if (!r->client_only)
        mp_serve_log_tail(r->log_path, 10, &tail);
    if (tail.len)
        serve_run_error(r, "%s; last lines of server.log:\n%s", what, mp_buf_cstr(&tail));
    else
        serve_run_error(r, "%s", what);
    mp_buf_fini(&tail);
}

/* ---- workspace ---- */

static int make_workspace(struct serve_run *r, struct mp_diag *d)
{
    const char *root = r->o && r->o->output_dir ? r->o->output_dir : "./results";
    int rc = mp_fs_mkdirs(root, d);
    if (rc)
        return rc;
    char ts[32];
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    strftime(ts, sizeof(ts), "%Y%m%d_%H%M%S", &tmv);
    const char *fw = mp_serve_config_engine(r->c)->name;
    for (int i = 1; i < 1000; i++) {
        if (i == 1)
            snprintf(r->ws, sizeof(r->ws), "%s/benchmark_%s_%s", root, fw, ts);
        else
            snprintf(r->ws, sizeof(r->ws), "%s/benchmark_%s_%s_%d", root, fw, ts, i);
        if (mkdir(r->ws, 0777) == 0)
            break;
        if (errno != EEXIST) {
            mp_diag_set_file(d, r->ws);
            return mp_diag_set(d, MP_EIO, "cannot create the workspace: %s", strerror(errno));
        }
    }
    /* absolute from here on: the engine runs with the workspace as its cwd */
    char abs[4096];
    if (realpath(r->ws, abs))
        snprintf(r->ws, sizeof(r->ws), "%s", abs);
    static const char *const subs[] = {"torch_trace", "system_profile"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(r->path, sizeof(r->path), "%s/%s", r->ws, subs[i]);
        if ((rc = mp_fs_mkdirs(r->path, d)))
            return rc;
    }
    snprintf(r->log_path, sizeof(r->log_path), "%s/server.log", r->ws);
    snprintf(r->trace_dir, sizeof(r->trace_dir), "%s/torch_trace", r->ws);
    struct mp_buf y;
    mp_buf_init(&y, 0);
    rc = mp_serve_config_yaml(r->c, &y);
    snprintf(r->path, sizeof(r->path), "%s/config.yaml", r->ws);
    if (!rc)
        rc = mp_fs_write_atomic(r->path, y.data, y.len, d);
    mp_buf_fini(&y);
    return rc;
}

int serve_run_write_file(struct serve_run *r, const char *name, const struct mp_buf *b)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    snprintf(r->path, sizeof(r->path), "%s/%s", r->ws, name);
    int rc = mp_fs_write_atomic(r->path, b->data ? b->data : "", b->len, &d);
    if (rc)
        serve_run_error(r, "cannot write %s: %s", name, d.msg);
    return rc;
}

/* ---- GPU detection and selection ---- */

static bool pinned(const struct mp_serve_config *c)
{
    return mp_serve_config_getenv(c, "CUDA_VISIBLE_DEVICES") ||
           mp_serve_config_getenv(c, "HIP_VISIBLE_DEVICES") ||
           mp_serve_config_getenv(c, "ROCR_VISIBLE_DEVICES");
}

static void detect_gpus(struct serve_run *r, struct mp_gpu_info *info)
{
    struct mp_gpu_detect_opts go = {.no_tools = true, .no_versions = true, .timeout_s = 20};
    if (mp_gpu_detect(info, &go, NULL) == 0)
        r->vendor = info->vendor;
}

int serve_run_capture(const char *const *argv, double timeout_s, struct mp_buf *out)
{
    struct mp_proc_opts po = {.timeout_s = timeout_s, .err_mode = MP_PROC_DISCARD};
    struct mp_proc_result pr;
    mp_proc_result_init(&pr);
    int rc = mp_proc_run(argv, &po, &pr, NULL);
    if (!rc && mp_proc_result_ok(&pr))
        rc = mp_buf_append(out, pr.out.data ? pr.out.data : "", pr.out.len);
    else if (!rc)
        rc = MP_ECHILD;
    mp_proc_result_fini(&pr);
    return rc;
}

/* Magpie's GPU selection (docs/magpie-compat.md) for NVIDIA; AMD selection is left to manual
 * pinning. */
static int select_gpus(struct serve_run *r, const struct mp_gpu_info *info)
{
    const struct mp_serve_config *c = r->c;
    if (!c->gpu_auto || pinned(c) || info->count == 0 || r->client_only)
        return 0;
    if (r->vendor != MP_GPU_VENDOR_NVIDIA) {
        serve_run_warning(r, "automatic GPU selection is implemented for NVIDIA only; pin AMD GPUs "
                             "with envs.ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES");
        return 0;
    }
    long tp = 1;
    mp_serve_config_intenv(c, "TP", 1, &tp, NULL);
    int want = c->gpu_count > 0 ? c->gpu_count : (int)(tp > 0 ? tp : 1);
    static const char *const q1[] = {"nvidia-smi",
                                     "--query-gpu=index,uuid,memory.used,memory.total",
                                     "--format=csv,noheader,nounits", NULL};
    static const char *const q2[] = {"nvidia-smi", "--query-compute-apps=gpu_uuid,pid",
                                     "--format=csv,noheader", NULL};
    struct mp_buf g, a;
    mp_buf_init(&g, 0);
    mp_buf_init(&a, 0);
    int ids[MP_SERVE_MAX_GPUS], n = -1;
    if (serve_run_capture(q1, 30, &g) == 0 && serve_run_capture(q2, 30, &a) == 0)
        n = mp_serve_pick_idle_nvidia(mp_buf_cstr(&g), mp_buf_cstr(&a), c->gpu_min_free_gb,
                                      c->gpu_candidates, c->n_gpu_candidates, want, ids,
                                      MP_SERVE_MAX_GPUS);
    mp_buf_fini(&g);
    mp_buf_fini(&a);
    if (n < 0) {
        serve_run_warning(r, "automatic GPU selection skipped: nvidia-smi queries failed");
        return 0;
    }
    if (n < want) {
        serve_run_error(
            r,
            "needed %d idle GPU(s) but only found %d (busy, or less than %.1f GB free); "
            "free a GPU, lower gpu_selection.min_free_memory_gb, or pin GPUs with "
            "envs.CUDA_VISIBLE_DEVICES",
            want, n, c->gpu_min_free_gb);
        return MP_ENOTFOUND;
    }
    r->visible[0] = 0;
    for (int i = 0; i < n; i++)
        snprintf(r->visible + strlen(r->visible), sizeof(r->visible) - strlen(r->visible), "%s%d",
                 i ? "," : "", ids[i]);
    return 0;
}

/* The GPU monitor follows the device from profiler.gpu_monitor.device_id,
 * else the first visible device, else 0 (Magpie). NVIDIA only for now. */
static void start_monitor(struct serve_run *r, struct serve_monitor **mon)
{
    const struct mp_serve_config *c = r->c;
    if (!c->gpu_monitor || r->client_only)
        return;
    if (r->vendor != MP_GPU_VENDOR_NVIDIA) {
        if (r->vendor == MP_GPU_VENDOR_AMD)
            serve_run_warning(r, "gpu_monitor samples NVIDIA GPUs only (rocm-smi not wired yet)");
        return;
    }
    int dev = c->gpu_monitor_device;
    if (dev < 0) {
        const char *v =
            r->visible[0] ? r->visible : mp_serve_config_getenv(c, "CUDA_VISIBLE_DEVICES");
        dev = v && *v >= '0' && *v <= '9' ? atoi(v) : 0;
    }
    if (serve_monitor_start(dev, c->gpu_monitor_interval_s, mon))
        serve_run_warning(r, "gpu_monitor could not start its thread");
}

/* ---- post-processing ---- */

static void post_process(struct serve_run *r, struct mp_buf *kernels, struct mp_buf *gap)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    serve_run_progress(r, "kernel summary", 0, 0, 0);
    struct mp_kernel_summary *ks = NULL;
    int rc = mp_kernel_summary_run(r->trace_dir, NULL, NULL, &ks, &d);
    if (rc == 0 && ks->merged.n == 0)
        serve_run_warning(r,
                          "the torch traces hold no GPU kernel events (cat == kernel): a CPU-only "
                          "engine, or the profiler did not see the device");
    if (rc == 0 && mp_kernel_summary_json(ks, kernels))
        serve_run_error(r, "kernel summary: out of memory");
    else if (rc)
        serve_run_error(r, "kernel summary failed: %s", d.msg);
    mp_kernel_summary_free(ks);
    serve_run_progress(r, "gap analysis", 0, 0, 0);
    struct mp_gap_config gc = r->c->gap;
    gc.skip_bad_ranks = true;
    struct mp_gap_result *gr = NULL;
    mp_diag_clear(&d);
    char gdir[4400], csv[4500];
    snprintf(gdir, sizeof(gdir), "%s/gap_analysis", r->ws);
    snprintf(csv, sizeof(csv), "%s/gap_analysis.csv", gdir);
    rc = mp_gap_analyze(r->trace_dir, &gc, &gr, &d);
    struct mp_gap_sources srcs = {0};
    if (rc == 0 && gc.find_kernel_sources) {
        serve_run_progress(r, "kernel sources", 0, 0, 0);
        rc = mp_gap_find_sources(gr, &gc, &srcs, &d);
        for (size_t i = 0; rc == 0 && i < srcs.n_warnings; i++) {
            char w[4700];
            snprintf(w, sizeof(w), "find_kernel_sources: %s", srcs.warnings[i]);
            serve_run_warning(r, w);
        }
        if (rc == 0)
            gc.sources = &srcs;
    }
    if (rc == 0)
        rc = mp_gap_write_csv(gr, &gc, gdir, true, &d);
    if (rc == 0)
        rc = mp_gap_json(gr, &gc, csv, gdir, gap);
    if (rc) {
        char msg[700];
        snprintf(msg, sizeof(msg), "gap analysis failed: %s", d.msg);
        serve_run_error(r, "%s", msg);
        mp_buf_reset(gap);
        mp_buf_puts(gap, "{\"enabled\": true, \"error\": ");
        mp_json_str(gap, msg, strlen(msg));
        mp_buf_putc(gap, '}');
    }
    mp_gap_sources_fini(&srcs);
    mp_gap_result_free(gr);
}

/* Magpie's TraceLens inference post-processing (docs/magpie-compat.md), natively:
 * split, one step per stage, a report per stage under out_dir/tracelens/. */
void serve_run_tracelens_stages(struct serve_run *r, const char *trace_dir, const char *out_dir,
                                struct mp_buf *json)
{
    const struct mp_serve_config *c = r->c;
    serve_run_progress(r, "TraceLens stages", 0, 0, 0);
    struct mp_stages_opts so = {
        .trace_dir = trace_dir,
        .output_dir = out_dir,
        .framework = mp_serve_config_engine(c)->trace_layout,
        .stages = c->tracelens_stages,
        .num_steps = c->tracelens_num_steps,
        .isl = mp_serve_config_getenv(c, "ISL"),
        .osl = mp_serve_config_getenv(c, "OSL"),
        .conc = mp_serve_config_getenv(c, "CONC"),
        .random_range_ratio = mp_serve_config_getenv(c, "RANDOM_RANGE_RATIO"),
        .arch_auto = true,
    };
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_stages_run(&so, json, &d);
    if (rc) {
        char msg[700];
        snprintf(msg, sizeof(msg), "TraceLens stages: %s", d.msg[0] ? d.msg : mp_strerror(rc));
        serve_run_error(r, "%s", msg);
        if (!json->len) {
            mp_buf_puts(json, "{\"enabled\": true, \"analysis_mode\": \"inference\", "
                              "\"error\": ");
            mp_json_str(json, msg, strlen(msg));
            mp_buf_putc(json, '}');
        }
    }
}

/* ---- the "magpie" object: versions, engine, requests ---- */

static void scrape_version_of_server(struct serve_run *r);

/* What the engine says (GET /version, its log), else what its Python has
 * installed; torch's version always from the latter (once). */
static void scrape_version(struct serve_run *r)
{
    if (r->client_only)
        return;
    scrape_version_of_server(r);
    if (r->probed)
        return;
    r->probed = true;
    char ev[128];
    mp_serve_probe_engine_versions(mp_serve_config_engine(r->c), &r->cmd,
                                   r->docker && r->container[0] ? r->container : NULL, ev,
                                   sizeof(ev), r->torch_version, sizeof(r->torch_version));
    if (!r->engine_version[0])
        snprintf(r->engine_version, sizeof(r->engine_version), "%s", ev);
}

static void scrape_version_of_server(struct serve_run *r)
{
    if (r->engine_version[0])
        return;
    if (serve_version(r->base_url, r->engine_version, sizeof(r->engine_version)) == 0)
        return;
    FILE *f = fopen(r->log_path, "r");
    char line[2048];
    for (int i = 0; f && i < 400 && fgets(line, sizeof(line), f); i++) {
        char *v = strstr(line, "version ");
        if (!v)
            continue;
        v += 8;
        size_t n = strspn(v, "0123456789.abcdefghijklmnopqrstuvwxyz+-_");
        if (n && v[0] >= '0' && v[0] <= '9') {
            snprintf(r->engine_version, sizeof(r->engine_version), "%.*s", (int)n, v);
            break;
        }
    }
    if (f)
        fclose(f);
}

static void model_revision(const struct mp_serve_config *c, char *out, size_t len)
{
    const char *rev = mp_serve_config_getenv(c, "MODEL_REVISION");
    out[0] = 0;
    if (rev && *rev) {
        snprintf(out, len, "%s", rev);
        return;
    }
    const char *s = strstr(c->model, "/snapshots/");
    if (s) {
        s += 11;
        size_t n = strcspn(s, "/");
        snprintf(out, len, "%.*s", (int)n, s);
    }
}

static int json_or_null(struct mp_buf *b, const char *s)
{
    if (!s || !*s)
        return mp_buf_puts(b, "null");
    return mp_json_str(b, s, strlen(s));
}

static void magpie_object(struct serve_run *r, const struct serve_load_out *lo, struct mp_buf *b)
{
    const struct mp_serve_config *c = r->c;
    char rev[128];
    model_revision(c, rev, sizeof(rev));
    struct mp_buf cmd;
    mp_buf_init(&cmd, 0);
    if (r->cmd.argv)
        mp_proc_join((const char *const *)r->cmd.argv, &cmd);
    else if (r->reuse_cmd[0])
        mp_buf_puts(&cmd, r->reuse_cmd);
#define JS(s) mp_json_str(b, (s), strlen(s))
#define JSN(s) json_or_null(b, (s))
    mp_buf_puts(b, "{\"version\": ");
    JSN(r->o ? r->o->magpie_version : NULL);
    mp_buf_printf(b, ", \"run_mode\": \"%s\", \"client_only\": %s, \"engine\": {",
                  mp_serve_mode_name(c->run_mode), r->client_only ? "true" : "false");
    mp_buf_puts(b, "\"framework\": ");
    JS(mp_serve_config_engine(c)->name);
    mp_buf_printf(b, ", \"prefix_cache\": \"%s\"", mp_serve_prefix_cache_name(c->prefix_cache));
    mp_buf_printf(b,
                  ", \"pid\": %d, \"ready\": %s, \"reused\": %s, \"persistent\": %s, "
                  "\"ready_after_s\": ",
                  (int)r->srv_pid, r->ready ? "true" : "false", r->attached ? "true" : "false",
                  r->detached ? "true" : "false");
    mp_json_double(b, r->ready ? r->ready_s : NAN);
    const char *const strs[][2] = {
        {"version", r->engine_version}, {"torch_version", r->torch_version},
        {"command", mp_buf_cstr(&cmd)}, {"exit", r->exit_desc},
        {"base_url", r->base_url},      {"served_model", r->served},
        {"server_log", r->reuse_log},   {"image", r->image},
        {"image_id", r->image_id},      {"container", r->container},
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        mp_buf_printf(b, ", \"%s\": ", strs[i][0]);
        JSN(strs[i][1]);
    }
    if (r->stopped) {
        mp_buf_puts(b, ", \"stop\": ");
        mp_serve_stop_json(&r->stop, b);
    }
    mp_buf_puts(b, "}, \"model_revision\": ");
    JSN(rev);
    mp_buf_printf(
        b, ", \"gpu\": {\"vendor\": \"%s\", \"visible_devices\": ", mp_gpu_vendor_name(r->vendor));
    JSN(r->visible);
    mp_buf_printf(b,
                  "}, \"requests\": {\"num_prompts\": %zu, \"warmups\": %zu, "
                  "\"failed_warmups\": %zu, \"completed\": %zu, \"failed\": %zu, "
                  "\"first_error\": ",
                  r->num_prompts, r->warmups, lo->failed_warmups, lo->have ? lo->m.completed : 0,
                  lo->have ? lo->m.failed : 0);
    JSN(lo->first_error);
    if (lo->have) {
        mp_buf_puts(b, ", \"failures\": ");
        mp_loadgen_failures_json(&lo->fails, &c->max_failed, b);
    }
    mp_buf_puts(b, "}, \"files\": {\"config\": \"config.yaml\", \"server_log\": ");
    if (r->client_only)
        mp_buf_puts(b, "null");
    else
        JS("server.log");
    mp_buf_puts(b, ", \"client_result\": \"inferencex_result.json\", \"requests\": "
                   "\"inferencex_result.requests.jsonl\"}");
    if (lo->n_rep > 1)
        serve_run_repeats_json(lo, b);
    if (r->cap) {
        mp_buf_puts(b, ", \"captures\": ");
        serve_captures_json(r, b);
    }
    mp_buf_printf(b, ", \"warnings\": [%s]}", r->warn.len ? mp_buf_cstr(&r->warn) : "");
#undef JS
#undef JSN
    mp_buf_fini(&cmd);
}

/* ---- entry point ---- */

/* ---- gpu.hardware: set before the engine starts, put back after ---- */

static int apply_hw(struct serve_run *r)
{
    const struct mp_gpu_hw_config *hw = &r->c->hw;
    if (!hw->present || !hw->enabled)
        return 0;
    serve_run_progress(r, "applying gpu.hardware", 0, 0, 0);
    mp_buf_puts(&r->hw_log, "# gpu.hardware, set before the run\n");
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_gpuctl_session_apply(hw, NULL, &r->hw_log, &r->hw, &d);
    if (rc) {
        serve_run_error(r, "gpu.hardware could not be applied (what was set is put back): %s",
                        d.msg);
        serve_run_write_file(r, "gpu_hardware.log", &r->hw_log);
    }
    return rc;
}

/* Also on every failure path and after SIGINT / SIGTERM (the run then ends
 * as for a dead engine and comes here). */
static void restore_hw(struct serve_run *r)
{
    if (!r->hw)
        return;
    if (r->c->hw.reset_after) {
        mp_buf_puts(&r->hw_log, "# put back after the run\n");
        struct mp_diag d;
        mp_diag_clear(&d);
        if (mp_gpuctl_session_restore(r->hw, &r->hw_log, &d))
            serve_run_error(r,
                            "gpu.hardware: not every setting could be put back: %s (`magpie gpu "
                            "reset` does it by hand)",
                            d.msg);
        else
            serve_run_warning(r, "gpu.hardware: set for the run and put back after it "
                                 "(gpu_hardware.log)");
    } else {
        serve_run_warning(r,
                          "gpu.hardware: left as set (reset_after_benchmark: false); `magpie gpu "
                          "reset` puts the defaults back");
    }
    serve_run_write_file(r, "gpu_hardware.log", &r->hw_log);
    mp_gpuctl_session_free(r->hw);
    r->hw = NULL;
}

/* what a run collects for its report besides the load's results */
struct run_bufs {
    struct mp_buf kernels, gap, mag, rep, gpumon, tracelens;
};

/* BENCHMARK_BASE_URL: the load against a server that is not ours */
static void run_client_only(struct serve_run *r, struct serve_load_out *lo, const char *ext)
{
    snprintf(r->base_url, sizeof(r->base_url), "%s", ext);
    size_t n = strlen(r->base_url);
    while (n && r->base_url[n - 1] == '/')
        r->base_url[--n] = 0;
    if (r->profiling) {
        serve_run_warning(r, "BENCHMARK_BASE_URL: the server is not ours, so server-side "
                             "profiling is off");
        r->profiling = false;
    }
    if (serve_run_wait_ready(r) == 0)
        serve_run_measure(r, lo);
}

/* our engine: start (or reuse), load, stop, and the GPUs put back */
static void run_own_engine(struct serve_run *r, struct serve_load_out *lo,
                           const struct mp_gpu_info *info, struct serve_monitor **mon,
                           struct mp_buf *gpumon)
{
    const struct mp_serve_config *c = r->c;
    long port = 8888;
    mp_serve_config_intenv(c, "PORT", 8888, &port, NULL);
    r->port = (int)port;
    /* the engine binds envs.HOST (loopback unless asked); a wildcard
     * address is reached through loopback too */
    const char *bind = mp_serve_config_getenv(c, "HOST");
    if (!bind || !*bind || strcmp(bind, "0.0.0.0") == 0 || strcmp(bind, "::") == 0)
        bind = "127.0.0.1";
    if (strchr(bind, ':'))
        snprintf(r->base_url, sizeof(r->base_url), "http://[%s]:%ld", bind, port);
    else
        snprintf(r->base_url, sizeof(r->base_url), "http://%s:%ld", bind, port);
    if (c->reuse)
        serve_run_reuse_attach(r);
    if (apply_hw(r) == 0 &&
        (r->attached || (select_gpus(r, info) == 0 && serve_run_start_engine(r, info) == 0)))
        start_monitor(r, mon);
    if ((r->srv || r->detached) && serve_run_wait_ready(r) == 0) {
        scrape_version(r);
        serve_run_measure(r, lo);
    }
    if ((r->srv || r->detached) && !r->died && !serve_run_engine_alive(r))
        r->died = true;
    if (r->died && r->ready) {
        serve_engine_pgid = 0;
        struct mp_proc_result pr;
        mp_proc_result_init(&pr);
        if (r->srv && mp_proc_wait(r->srv, &pr) == 0)
            mp_proc_describe(&pr, 0, r->exit_desc, sizeof(r->exit_desc));
        mp_proc_result_fini(&pr);
        char what[512];
        snprintf(what, sizeof(what), "engine exited during the benchmark (%s)",
                 r->exit_desc[0] ? r->exit_desc : "unknown status");
        serve_run_error_log(r, what);
    }
    if (r->detached)
        serve_run_finish_detached(r);
    else
        serve_run_stop_engine(r);
    restore_hw(r); /* the engine is gone: the GPUs go back */
    serve_monitor_stop(*mon, gpumon);
    *mon = NULL;
    scrape_version(r);
}

/* whether the run measured something: failed requests within
 * max_failed_requests and some throughput */
static bool run_judge(struct serve_run *r, const struct serve_load_out *lo)
{
    const struct mp_serve_config *c = r->c;
    if (r->deadline_hit)
        serve_run_error(r, "timeout_seconds (%.0f s) reached; the run was stopped", c->timeout_s);
    if (r->hooked) /* the caller's load judged itself */
        return r->ready && r->hook_rc == 0 && !r->died && !r->deadline_hit;
    bool ok =
        r->ready && r->measured && lo->have && lo->m.completed > 0 && !r->died && !r->deadline_hit;
    char lim[48];
    mp_loadgen_fail_limit_format(&c->max_failed, lim, sizeof(lim));
    if (r->measured && lo->have && lo->m.completed == 0) {
        serve_run_error(r, "every request failed (%zu): %s", lo->m.failed, lo->first_error);
    } else if (r->measured && lo->have && lo->m.failed &&
               !mp_loadgen_fail_limit_ok(&c->max_failed, lo->fails.failed, lo->fails.total)) {
        /* latency over the successes alone may hide what the failures cost
         * (docs/metrics.md): beyond the limit this is no measurement */
        serve_run_error(r,
                        "%zu of %zu requests failed (%.2f%%), more than max_failed_requests %s "
                        "allows; first: %s",
                        lo->fails.failed, lo->fails.total, lo->fails.ratio * 100, lim,
                        lo->first_error);
        ok = false;
    } else if (r->measured && lo->have && lo->m.failed) {
        char msg[900];
        snprintf(msg, sizeof(msg),
                 "%zu of %zu requests failed (%.2f%%), within max_failed_requests %s: the "
                 "metrics cover the %zu successful ones; first: %s",
                 lo->fails.failed, lo->fails.total, lo->fails.ratio * 100, lim, lo->m.completed,
                 lo->first_error);
        serve_run_warning(r, msg);
    }
    if (r->cap && serve_captures_taken(r) == 0)
        ok = false; /* a profiled run without a single capture (the error says why) */
    if (ok && lo->m.request_throughput <= 0 && lo->m.output_throughput <= 0) {
        serve_run_error(r, "Benchmark produced no valid throughput/latency metrics");
        ok = false;
    }
    return ok;
}

/* scheduled captures: the report's kernel summary and gap analysis are the
 * first capture's, and every capture gets its own reports */
static void run_capture_traces(struct serve_run *r, bool ok, struct run_bufs *ob)
{
    char first[4400], whole[4400];
    if (!ok) {
        serve_run_warning(r, "trace post-processing skipped: the benchmark did not succeed");
        return;
    }
    if (!serve_captures_first_dir(r, first, sizeof(first)))
        return;
    snprintf(whole, sizeof(whole), "%s", r->trace_dir);
    snprintf(r->trace_dir, sizeof(r->trace_dir), "%s", first);
    post_process(r, &ob->kernels, &ob->gap);
    snprintf(r->trace_dir, sizeof(r->trace_dir), "%s", whole);
    serve_captures_reports(r);
    const char *tl = serve_captures_tracelens(r);
    if (tl)
        mp_buf_puts(&ob->tracelens, tl);
}

/* trace post-processing and the TraceLens reports, after a good run */
static void run_traces(struct serve_run *r, bool ok, struct run_bufs *ob)
{
    const struct mp_serve_config *c = r->c;
    if (r->cap) {
        run_capture_traces(r, ok, ob);
        return;
    }
    if (ok && r->profiling)
        post_process(r, &ob->kernels, &ob->gap);
    else if (r->profiling && !ok)
        serve_run_warning(r, "trace post-processing skipped: the benchmark did not succeed");
    if (ok && r->profiling && mp_serve_tracelens_inference(c)) {
        serve_run_tracelens_stages(r, r->trace_dir, r->ws, &ob->tracelens);
    } else if (ok && r->profiling && c->tracelens) {
        serve_run_progress(r, "TraceLens reports", 0, 0, 0);
        char first[1200] = "";
        size_t ne =
            serve_tracelens_pytorch(c, r->trace_dir, r->ws, &ob->tracelens, first, sizeof(first));
        if (ne)
            serve_run_error(r, "TraceLens (pytorch): %zu error(s); first: %s", ne, first);
    } else if (ok && c->tracelens) {
        serve_run_warning(r, "TraceLens skipped: no torch-profiler traces (the profiler is off)");
    }
}

/* benchmark_report.json and summary.txt, into res and the workspace */
static int run_report(struct serve_run *r, const struct serve_load_out *lo, bool ok,
                      struct run_bufs *ob, struct mp_diag *d)
{
    struct mp_serve_result *res = r->res;
    struct mp_buf metrics;
    mp_buf_init(&metrics, 0);
    if (lo->have && lo->m.completed > 0)
        mp_loadgen_magpie_json(&lo->m, &metrics);
    magpie_object(r, lo, &ob->mag);
    struct serve_report sr = {
        .cfg = r->c,
        .success = ok,
        .workspace = r->ws,
        .execution_time_s = serve_run_now_s(r),
        .metrics_json = metrics.len ? mp_buf_cstr(&metrics) : NULL,
        .kernels_json = ob->kernels.len ? mp_buf_cstr(&ob->kernels) : NULL,
        .gap_json = ob->gap.len ? mp_buf_cstr(&ob->gap) : NULL,
        .magpie_json = mp_buf_cstr(&ob->mag),
        .gpu_monitor_json = ob->gpumon.len ? mp_buf_cstr(&ob->gpumon) : NULL,
        .tracelens_json = ob->tracelens.len ? mp_buf_cstr(&ob->tracelens) : NULL,
        .errors = res->errors,
        .n_errors = res->n_errors,
    };
    int rc = serve_report_json(&sr, &res->report);
    if (!rc)
        rc = serve_summary_text(&sr, mp_buf_cstr(&res->report), &res->summary);
    mp_buf_fini(&metrics);
    if (rc) {
        mp_diag_set(d, rc, "cannot format the benchmark report");
        return rc;
    }
    snprintf(r->path, sizeof(r->path), "%s/benchmark_report.json", r->ws);
    res->report_path = strdup(r->path);
    if ((rc = mp_fs_write_atomic(r->path, res->report.data, res->report.len, d)) ||
        (snprintf(r->path, sizeof(r->path), "%s/summary.txt", r->ws),
         rc = mp_fs_write_atomic(r->path, res->summary.data, res->summary.len, d)))
        return rc;
    return 0;
}

int mp_serve_run(const struct mp_serve_config *c, const struct mp_serve_run_opts *o,
                 struct mp_serve_result **out, struct mp_diag *d)
{
    *out = NULL;
    int rc = mp_serve_config_validate(c, d);
    if (rc)
        return rc;
    /* without libcurl no probe can succeed: the readiness wait would run out
     * its whole timeout with an engine loading for nothing */
    if ((rc = serve_http_init(d)))
        return rc;
    struct mp_serve_result *res = calloc(1, sizeof(*res));
    if (!res)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    mp_buf_init(&res->summary, 0);
    mp_buf_init(&res->report, 0);
    struct serve_run r;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.o = o;
    r.res = res;
    r.t0_ns = mp_time_ns();
    r.deadline_ns = r.t0_ns + (uint64_t)(c->timeout_s * 1e9);
    r.docker = c->run_mode == MP_SERVE_DOCKER;
    const char *ext = mp_serve_config_getenv(c, "BENCHMARK_BASE_URL");
    r.client_only = ext && *ext;
    r.profiling = c->torch_profiler && !o->load; /* a caller's load has no profiler window */
    mp_buf_init(&r.warn, 0);
    struct serve_load_out lo;
    memset(&lo, 0, sizeof(lo));
    struct run_bufs ob;
    mp_buf_init(&ob.tracelens, 0);
    struct serve_monitor *mon = NULL;
    mp_buf_init(&ob.gpumon, 0);
    mp_buf_init(&ob.kernels, 0);
    mp_buf_init(&ob.gap, 0);
    mp_buf_init(&ob.mag, 0);
    mp_buf_init(&ob.rep, 0);
    struct mp_gpu_info info;
    mp_gpu_info_init(&info);
    if (!r.client_only) {
        serve_run_progress(&r, "detecting GPUs", 0, 0, 0);
        detect_gpus(&r, &info);
        /* an image we cannot name is an input error: nothing is created */
        const char *arch = c->gpu_arch ? c->gpu_arch : info.architecture;
        const char *img = NULL;
        if (r.docker && !c->docker_image &&
            (rc = mp_serve_image_for(c->framework, arch, &img, d))) {
            mp_serve_result_free(res);
            res = NULL;
            goto done;
        }
    }
    if ((rc = make_workspace(&r, d))) {
        mp_serve_result_free(res);
        res = NULL;
        goto done;
    }
    res->workspace = strdup(r.ws);
    if (r.client_only)
        run_client_only(&r, &lo, ext);
    else
        run_own_engine(&r, &lo, &info, &mon, &ob.gpumon);
    bool ok = run_judge(&r, &lo);
    run_traces(&r, ok, &ob);
    res->success = ok;
    if ((rc = run_report(&r, &lo, ok, &ob, d))) {
        mp_serve_result_free(res);
        res = NULL;
    }
done:
    serve_captures_free(&r);
    if (r.srv)
        serve_run_stop_engine(&r);
    restore_hw(&r);
    mp_buf_fini(&r.hw_log);
    mp_serve_cmd_fini(&r.cmd);
    mp_loadgen_result_free(lo.res);
    free(lo.rep);
    mp_gpu_info_fini(&info);
    mp_buf_fini(&ob.kernels);
    mp_buf_fini(&ob.gap);
    mp_buf_fini(&ob.mag);
    mp_buf_fini(&ob.rep);
    mp_buf_fini(&ob.gpumon);
    mp_buf_fini(&ob.tracelens);
    serve_monitor_stop(mon, NULL);
    mp_buf_fini(&r.warn);
    *out = res;
    return rc;
}

void mp_serve_result_free(struct mp_serve_result *r)
{
    if (!r)
        return;
    free(r->workspace);
    free(r->report_path);
    mp_buf_fini(&r->summary);
    mp_buf_fini(&r->report);
    for (size_t i = 0; i < r->n_errors; i++)
        free(r->errors[i]);
    free(r->errors);
    free(r);
}
