/* One serving benchmark run, start to finish (mp_serve_run): workspace,
 * engine launch (local process group or docker container), readiness,
 * warm-up, profiler window, measured load, engine shutdown, trace
 * post-processing and the report. Every wait is bounded by the run's
 * deadline (timeout_seconds) or a smaller limit of its own; when the
 * deadline passes during the load, the engine is stopped so the requests
 * still in flight fail at once rather than hang.
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
#include <magpie/report.h>
#include <magpie/serve.h>

#include "serve_int.h"

#define MAX_ERRORS 64

/* The engine's process group while it runs, for mp_serve_interrupt (a
 * signal handler); 0 otherwise. Cleared before the group leader is reaped,
 * so the id can never name someone else's group. */
static volatile sig_atomic_t g_engine_pgid;

void mp_serve_interrupt(void)
{
    pid_t pg = (pid_t)g_engine_pgid;
    if (pg > 0)
        kill(pg, SIGTERM); /* the leader, the engine's main process; the run stops the rest */
}

struct run {
    const struct mp_serve_config *c;
    const struct mp_serve_run_opts *o;
    struct mp_serve_result *res;
    uint64_t t0_ns, deadline_ns;
    char ws[4096], path[4400], log_path[4400], trace_dir[4400];
    char base_url[600], served[512], engine_version[128], image_id[256], container[128];
    const char *image;
    struct mp_proc *srv;
    pid_t srv_pid;
    bool client_only, docker, profiling, ready, died, deadline_hit, measured;
    bool hooked; /* o->load ran instead of the configured load */
    int hook_rc;
    /* server reuse: a detached engine (no mp_proc handle), maybe attached to */
    bool detached, attached;
    pid_t det_pid, det_pgid;
    int port;
    char pid_path[4200], meta_path[4200], reuse_log[4400], reuse_cmd[4096];
    double ready_s;
    char exit_desc[256];
    struct mp_serve_stop stop; /* how the engine was stopped (stopped = true) */
    bool stopped, probed;
    char torch_version[128];
    struct mp_serve_cmd cmd;
    enum mp_gpu_vendor vendor;
    char visible[256];
    struct mp_buf warn; /* JSON array items */
    /* gpu.hardware as applied (to put back), and gpu_hardware.log */
    struct mp_gpuctl_session *hw;
    struct mp_buf hw_log;
    /* load */
    size_t num_prompts, warmups;
    struct mp_loadgen_progress last;
    const char *stage;
};

static void add_error_str(struct run *r, const char *buf);

static void add_error(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_error(struct run *r, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    add_error_str(r, buf);
}

static void add_error_str(struct run *r, const char *buf)
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

static void add_warning(struct run *r, const char *msg)
{
    if (r->warn.len)
        mp_buf_puts(&r->warn, ", ");
    mp_json_str(&r->warn, msg, strlen(msg));
}

static double now_s(const struct run *r)
{
    return (double)(mp_time_ns() - r->t0_ns) / 1e9;
}

static double remaining_s(const struct run *r)
{
    uint64_t t = mp_time_ns();
    return t >= r->deadline_ns ? 0 : (double)(r->deadline_ns - t) / 1e9;
}

static void progress(struct run *r, const char *stage, size_t done, size_t failed, size_t total)
{
    r->stage = stage;
    if (!r->o || !r->o->on_progress)
        return;
    struct mp_serve_progress p = {stage, done, failed, total, now_s(r)};
    r->o->on_progress(&p, r->o->progress_user);
}

/* Is the engine (ours, or the detached one) still there? */
static bool engine_alive(struct run *r)
{
    if (r->srv)
        return mp_proc_poll(r->srv, 0) == 0;
    if (r->detached)
        return serve_group_alive(r->det_pid, r->det_pgid);
    return true;
}

/* Appends the error lines (or last lines) of server.log to an error. */
static void error_with_log(struct run *r, const char *what)
{
    struct mp_buf tail;
    mp_buf_init(&tail, 0);
    if (!r->client_only)
        mp_serve_log_tail(r->log_path, 10, &tail);
    if (tail.len)
        add_error(r, "%s; last lines of server.log:\n%s", what, mp_buf_cstr(&tail));
    else
        add_error(r, "%s", what);
    mp_buf_fini(&tail);
}

/* ---- workspace ---- */

static int make_workspace(struct run *r, struct mp_diag *d)
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

static int write_file(struct run *r, const char *name, const struct mp_buf *b)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    snprintf(r->path, sizeof(r->path), "%s/%s", r->ws, name);
    int rc = mp_fs_write_atomic(r->path, b->data ? b->data : "", b->len, &d);
    if (rc)
        add_error(r, "cannot write %s: %s", name, d.msg);
    return rc;
}

/* ---- GPU detection and selection ---- */

static bool pinned(const struct mp_serve_config *c)
{
    return mp_serve_config_getenv(c, "CUDA_VISIBLE_DEVICES") ||
           mp_serve_config_getenv(c, "HIP_VISIBLE_DEVICES") ||
           mp_serve_config_getenv(c, "ROCR_VISIBLE_DEVICES");
}

static void detect_gpus(struct run *r, struct mp_gpu_info *info)
{
    struct mp_gpu_detect_opts go = {.no_tools = true, .no_versions = true, .timeout_s = 20};
    if (mp_gpu_detect(info, &go, NULL) == 0)
        r->vendor = info->vendor;
}

static int run_capture(const char *const *argv, double timeout_s, struct mp_buf *out)
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
static int select_gpus(struct run *r, const struct mp_gpu_info *info)
{
    const struct mp_serve_config *c = r->c;
    if (!c->gpu_auto || pinned(c) || info->count == 0 || r->client_only)
        return 0;
    if (r->vendor != MP_GPU_VENDOR_NVIDIA) {
        add_warning(r, "automatic GPU selection is implemented for NVIDIA only; pin AMD GPUs "
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
    if (run_capture(q1, 30, &g) == 0 && run_capture(q2, 30, &a) == 0)
        n = mp_serve_pick_idle_nvidia(mp_buf_cstr(&g), mp_buf_cstr(&a), c->gpu_min_free_gb,
                                      c->gpu_candidates, c->n_gpu_candidates, want, ids,
                                      MP_SERVE_MAX_GPUS);
    mp_buf_fini(&g);
    mp_buf_fini(&a);
    if (n < 0) {
        add_warning(r, "automatic GPU selection skipped: nvidia-smi queries failed");
        return 0;
    }
    if (n < want) {
        add_error(r,
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
static void start_monitor(struct run *r, struct serve_monitor **mon)
{
    const struct mp_serve_config *c = r->c;
    if (!c->gpu_monitor || r->client_only)
        return;
    if (r->vendor != MP_GPU_VENDOR_NVIDIA) {
        if (r->vendor == MP_GPU_VENDOR_AMD)
            add_warning(r, "gpu_monitor samples NVIDIA GPUs only (rocm-smi not wired yet)");
        return;
    }
    int dev = c->gpu_monitor_device;
    if (dev < 0) {
        const char *v =
            r->visible[0] ? r->visible : mp_serve_config_getenv(c, "CUDA_VISIBLE_DEVICES");
        dev = v && *v >= '0' && *v <= '9' ? atoi(v) : 0;
    }
    if (serve_monitor_start(dev, c->gpu_monitor_interval_s, mon))
        add_warning(r, "gpu_monitor could not start its thread");
}

/* ---- engine ---- */

static bool answering(const char *base, const char *path, double timeout_s)
{
    char url[800], err[256];
    long st = 0;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    snprintf(url, sizeof(url), "%s%s", base, path);
    int rc = serve_http("GET", url, timeout_s, &st, &b, err, sizeof(err));
    mp_buf_fini(&b);
    return rc == 0 && st >= 200 && st < 400;
}

static int resolve_image(struct run *r, const struct mp_gpu_info *info)
{
    const struct mp_serve_config *c = r->c;
    struct mp_diag d;
    mp_diag_clear(&d);
    r->image = c->docker_image;
    if (!r->image) {
        const char *arch = c->gpu_arch ? c->gpu_arch : info->architecture;
        if (mp_serve_image_for(c->framework, arch, &r->image, &d)) {
            add_error(r, "%s", d.msg);
            return MP_ENOTFOUND;
        }
    }
    const char *insp[] = {"docker", "image", "inspect", "--format", "{{.Id}}", r->image, NULL};
    struct mp_buf out;
    mp_buf_init(&out, 0);
    int rc = run_capture(insp, 60, &out);
    if (rc) {
        const char *pull[] = {"docker", "pull", r->image, NULL};
        mp_buf_reset(&out);
        if (run_capture(pull, remaining_s(r), &out) == 0) {
            mp_buf_reset(&out);
            rc = run_capture(insp, 60, &out);
        }
    }
    if (!rc) {
        snprintf(r->image_id, sizeof(r->image_id), "%s", mp_buf_cstr(&out));
        r->image_id[strcspn(r->image_id, "\r\n")] = 0;
    }
    mp_buf_fini(&out);
    if (rc || !r->image_id[0]) {
        add_error(r, "cannot resolve docker image '%s' (docker image inspect / pull failed)",
                  r->image);
        return MP_ENOTFOUND;
    }
    return 0;
}

static int start_engine(struct run *r, const struct mp_gpu_info *info)
{
    const struct mp_serve_config *c = r->c;
    struct mp_diag d;
    mp_diag_clear(&d);
    long port = r->port;
    const char *health = mp_serve_config_engine(c)->health_path;
    if (answering(r->base_url, health, 2)) {
        add_error(r,
                  "port %ld already has a server answering %s; stop it or set envs.PORT "
                  "(magpie never benchmarks a server it did not start unless "
                  "BENCHMARK_BASE_URL says so)",
                  port, health);
        return MP_EINVAL;
    }
    struct mp_serve_plan p = {.vendor = r->vendor, .port = (int)port};
    p.visible_devices = r->visible[0] ? r->visible : NULL;
    p.host = mp_serve_config_getenv(c, "HOST"); /* NULL: loopback only */
    char model_dir[4096] = "", hf[4096] = "";
    if (r->docker) {
        if (resolve_image(r, info))
            return MP_ENOTFOUND;
        snprintf(r->container, sizeof(r->container), "magpie-benchmark-bench_%lld_%d",
                 (long long)time(NULL), (int)getpid());
        p.image = r->image_id;
        p.container = r->container;
        p.workspace = r->ws;
        p.trace_dir = r->profiling ? "/workspace/torch_trace" : NULL;
        if (mp_fs_is_dir(c->model) && realpath(c->model, model_dir))
            p.model_dir = model_dir;
        const char *home = getenv("HOME");
        if (c->hf_cache_path)
            snprintf(hf, sizeof(hf), "%s", c->hf_cache_path);
        else if (home)
            snprintf(hf, sizeof(hf), "%s/.cache/huggingface", home);
        if (hf[0] && mp_fs_is_dir(hf))
            p.hf_cache = hf;
    } else {
        p.workspace = r->ws;
        p.trace_dir = r->profiling ? r->trace_dir : NULL;
    }
    int rc = r->docker ? mp_serve_docker_cmd(c, &p, &r->cmd, &d)
                       : mp_serve_engine_cmd(c, &p, &r->cmd, &d);
    if (rc) {
        add_error(r, "cannot build the engine command: %s", d.msg);
        return rc;
    }
    if (!r->docker && c->hf_cache_path)
        mp_serve_cmd_env(&r->cmd, "HF_HOME", c->hf_cache_path);
    if (c->reuse) {
        /* outlives this run: its pid, group and identity go to the state dir */
        rc = serve_spawn_detached(&r->cmd, r->ws, r->log_path, &r->det_pid, &r->det_pgid, &d);
        if (rc) {
            add_error(r, "cannot start the engine (%s): %s", r->cmd.argv[0], d.msg);
            return rc;
        }
        r->detached = true;
        r->srv_pid = r->det_pid;
        if (c->reuse_cleanup)
            g_engine_pgid = (sig_atomic_t)r->det_pgid;
        struct mp_buf cl;
        mp_buf_init(&cl, 0);
        mp_proc_join((const char *const *)r->cmd.argv, &cl);
        if (serve_reuse_write(c, r->port, r->det_pid, r->det_pgid, mp_buf_cstr(&cl), r->log_path,
                              r->pid_path, r->meta_path, &d))
            add_warning(r, "cannot record the server for reuse in the state dir");
        mp_buf_fini(&cl);
        snprintf(r->reuse_log, sizeof(r->reuse_log), "%s", r->log_path);
        char pid[32];
        snprintf(pid, sizeof(pid), "%d\n", (int)r->det_pid);
        snprintf(r->path, sizeof(r->path), "%s/server.pid", r->ws);
        mp_fs_write_atomic(r->path, pid, strlen(pid), NULL);
        return 0;
    }
    struct mp_proc_opts po = {
        .cwd = r->ws,
        .env = (const char *const *)r->cmd.env,
        .timeout_s = remaining_s(r) + 120, /* a backstop; the deadline is enforced below */
        .grace_s = 20,
        .out_mode = MP_PROC_FILE,
        .out_path = r->log_path,
        .err_mode = MP_PROC_TO_STDOUT,
        .keep_group = true, /* its children get time to stop: stop_engine ends the group */
    };
    rc = mp_proc_spawn((const char *const *)r->cmd.argv, &po, &r->srv, &d);
    if (rc) {
        add_error(r, "cannot start the engine (%s): %s", r->cmd.argv[0], d.msg);
        return rc;
    }
    r->srv_pid = mp_proc_pid(r->srv);
    g_engine_pgid = (sig_atomic_t)r->srv_pid;
    char pid[32];
    snprintf(pid, sizeof(pid), "%d\n", (int)r->srv_pid);
    snprintf(r->path, sizeof(r->path), "%s/server.pid", r->ws);
    mp_fs_write_atomic(r->path, pid, strlen(pid), NULL);
    return 0;
}

/* Polls /health, then /v1/models, while watching the engine process. */
static int wait_ready(struct run *r)
{
    const struct mp_serve_engine *e = mp_serve_config_engine(r->c);
    double limit = r->c->server_ready_timeout_s;
    if (r->client_only && limit > 60)
        limit = 60; /* a server someone else runs is up, or it is not ours to wait for */
    if (limit > remaining_s(r))
        limit = remaining_s(r);
    uint64_t until = mp_time_ns() + (uint64_t)(limit * 1e9);
    char url[800], err[256];
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = MP_ETIMEOUT;
    while (mp_time_ns() < until) {
        progress(r, "starting engine", 0, 0, 0);
        if (r->detached && !serve_group_alive(r->det_pid, r->det_pgid)) {
            g_engine_pgid = 0;
            error_with_log(r, "engine exited before it was ready");
            r->died = true;
            rc = MP_ECHILD;
            break;
        }
        if (r->srv && mp_proc_poll(r->srv, 0) == 1) {
            g_engine_pgid = 0;
            struct mp_proc_result pr;
            mp_proc_result_init(&pr);
            mp_proc_wait(r->srv, &pr);
            mp_proc_describe(&pr, 0, r->exit_desc, sizeof(r->exit_desc));
            mp_proc_result_fini(&pr);
            char what[512];
            snprintf(what, sizeof(what), "engine exited before it was ready (%s)", r->exit_desc);
            error_with_log(r, what);
            r->died = true;
            rc = MP_ECHILD;
            break;
        }
        long st = 0;
        mp_buf_reset(&b);
        snprintf(url, sizeof(url), "%s%s", r->base_url, e->health_path);
        if (serve_http("GET", url, 3, &st, &b, err, sizeof(err)) == 0 && st >= 200 && st < 400) {
            mp_buf_reset(&b);
            snprintf(url, sizeof(url), "%s%s", r->base_url, e->models_path);
            if (!e->models_path ||
                (serve_http("GET", url, 10, &st, &b, err, sizeof(err)) == 0 && st == 200 &&
                 serve_first_model(mp_buf_cstr(&b), r->served, sizeof(r->served)) == 0)) {
                if (!e->models_path) /* no model list: the configured name */
                    snprintf(r->served, sizeof(r->served), "%s", r->c->model);
                rc = 0;
                break;
            }
        }
        if (r->srv)
            mp_proc_poll(r->srv, 1000); /* sleeps up to 1 s, wakes at once on exit */
        else
            usleep(500000);
    }
    mp_buf_fini(&b);
    if (rc == MP_ETIMEOUT) {
        char what[1024];
        snprintf(what, sizeof(what),
                 "engine not ready after %.0f s (GET %s/health and /v1/models did not both "
                 "answer)",
                 limit, r->base_url);
        error_with_log(r, what);
        if (remaining_s(r) <= 0)
            r->deadline_hit = true;
    }
    r->ready = rc == 0;
    r->ready_s = now_s(r);
    return rc;
}

static bool proc_running(void *user, int wait_ms)
{
    return mp_proc_poll(user, wait_ms) == 0; /* reaps it once ended */
}

static bool detached_running(void *user, int wait_ms)
{
    const struct run *r = user;
    if (!serve_group_alive(r->det_pid, r->det_pgid))
        return false;
    if (wait_ms > 0)
        usleep((useconds_t)wait_ms * 1000);
    return serve_group_alive(r->det_pid, r->det_pgid);
}

/* A detached (server_lifecycle) engine: not our child, same order. */
static void stop_detached(struct run *r, pid_t pid, pid_t pgid)
{
    if (!serve_group_alive(pid, pgid))
        return;
    pid_t keep_pid = r->det_pid, keep_pgid = r->det_pgid;
    r->det_pid = pid;
    r->det_pgid = pgid;
    r->stop.drain_s = r->c->stop_drain_s;
    r->stop.grace_s = r->c->stop_grace_s;
    r->stop.signal = mp_serve_config_engine(r->c)->stop_signal;
    r->stop.main_running = detached_running;
    r->stop.user = r;
    mp_serve_stop_engine(pid, pgid, &r->stop);
    r->stopped = true;
    r->det_pid = keep_pid;
    r->det_pgid = keep_pgid;
}

static void stop_engine(struct run *r)
{
    if (!r->srv)
        return;
    g_engine_pgid = 0;
    progress(r, "stopping engine", 0, 0, 0);
    if (r->docker && r->container[0]) {
        const char *stop[] = {"docker", "stop", "-t", "20", r->container, NULL};
        struct mp_proc_opts po = {
            .timeout_s = 60, .out_mode = MP_PROC_DISCARD, .err_mode = MP_PROC_DISCARD};
        struct mp_proc_result pr;
        mp_proc_result_init(&pr);
        mp_proc_run(stop, &po, &pr, NULL);
        mp_proc_result_fini(&pr);
    }
    pid_t pgid = mp_proc_pid(r->srv);
    r->stop.drain_s = r->c->stop_drain_s;
    r->stop.grace_s = r->c->stop_grace_s;
    r->stop.signal = mp_serve_config_engine(r->c)->stop_signal;
    r->stop.main_running = proc_running;
    r->stop.user = r->srv;
    mp_serve_stop_engine(pgid, pgid, &r->stop); /* main process, then group, then SIGKILL */
    r->stopped = true;
    struct mp_proc_result pr;
    mp_proc_result_init(&pr);
    if (mp_proc_wait(r->srv, &pr) == 0 && !r->exit_desc[0])
        mp_proc_describe(&pr, 0, r->exit_desc, sizeof(r->exit_desc));
    mp_proc_result_fini(&pr);
    mp_proc_free(r->srv);
    r->srv = NULL;
    /* the group's processes were signalled; return only once they are gone
     * (reaped), so nothing of the engine outlives the run. Signal 0 only
     * asks; the group id cannot be reused while a member exists. */
    for (int i = 0; i < 200 && pgid > 1; i++) {
        if (kill(-pgid, 0) != 0 && errno == ESRCH)
            break;
        usleep(50000);
    }
}

/* ---- server reuse (server_lifecycle) ---- */

static void reuse_attach_or_clear(struct run *r)
{
    const struct mp_serve_config *c = r->c;
    serve_reuse_paths(c, r->port, r->pid_path, r->meta_path, sizeof(r->pid_path));
    struct serve_reuse_state st;
    if (serve_reuse_read(r->meta_path, &st))
        return;
    char why[160] = "not answering /health", msg[512];
    bool alive = serve_group_alive(st.pid, st.pgid);
    bool match = c->reuse_force || serve_reuse_matches(c, r->port, &st, why, sizeof(why));
    if (alive && match && answering(r->base_url, mp_serve_config_engine(c)->health_path, 3)) {
        r->attached = r->detached = true;
        r->det_pid = r->srv_pid = st.pid;
        r->det_pgid = st.pgid;
        const char *log = json_string_value(json_object_get(st.meta, "server_log"));
        snprintf(r->reuse_log, sizeof(r->reuse_log), "%s", log ? log : "");
        const char *cmd = json_string_value(json_object_get(st.meta, "command"));
        snprintf(r->reuse_cmd, sizeof(r->reuse_cmd), "%s", cmd ? cmd : "");
        if (c->reuse_cleanup)
            g_engine_pgid = (sig_atomic_t)st.pgid;
    } else {
        if (alive) {
            snprintf(msg, sizeof(msg),
                     "server_lifecycle: stopped the recorded %s server (pid %d): %s",
                     mp_serve_config_engine(c)->name, (int)st.pid,
                     match ? "not answering /health" : why);
            add_warning(r, msg);
            stop_detached(r, st.pid, st.pgid);
            r->stopped = false; /* the report's stop is this run's engine's */
        }
        unlink(r->pid_path);
        unlink(r->meta_path);
    }
    serve_reuse_state_fini(&st);
}

/* After the run: the detached server stays for the next run, unless
 * cleanup is asked for or it is not healthy. */
static void finish_detached(struct run *r)
{
    g_engine_pgid = 0;
    if (r->c->reuse_cleanup || r->died || r->deadline_hit || !r->ready) {
        progress(r, "stopping engine", 0, 0, 0);
        stop_detached(r, r->det_pid, r->det_pgid);
        unlink(r->pid_path);
        unlink(r->meta_path);
        snprintf(r->exit_desc, sizeof(r->exit_desc), "stopped (server_lifecycle%s)",
                 r->c->reuse_cleanup ? " cleanup" : ": not healthy");
    } else {
        serve_reuse_touch(r->meta_path);
        snprintf(r->exit_desc, sizeof(r->exit_desc), "left running for reuse (pid %d)",
                 (int)r->det_pid);
    }
}

/* ---- load ---- */

static void on_load_progress(const struct mp_loadgen_progress *p, void *user)
{
    struct run *r = user;
    r->last = *p;
    if ((r->srv || r->detached) && !r->died && !engine_alive(r)) {
        g_engine_pgid = 0;
        r->died = true; /* remaining requests fail fast: connection refused */
    }
    if (!r->deadline_hit && remaining_s(r) <= 0) {
        r->deadline_hit = true;
        if (r->srv)
            mp_proc_terminate(r->srv); /* in-flight requests fail now, not at their timeout */
        else if (r->detached)
            serve_group_stop(r->det_pid, r->det_pgid, 0); /* SIGTERM now, SIGKILL later */
    }
    progress(r, p->warmup ? "warm-up" : "benchmark", p->done, p->failed, p->total);
}

static int profile_call(struct run *r, const char *what, double timeout_s)
{
    char url[800], err[256];
    long st = 0;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (!what) {
        error_with_log(r, "the engine has no profiler endpoints");
        return MP_EUNSUP;
    }
    snprintf(url, sizeof(url), "%s%s", r->base_url, what);
    int rc = serve_http("POST", url, timeout_s, &st, &b, err, sizeof(err));
    if (rc || st < 200 || st >= 300) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "POST %s failed: %s", what,
                 rc ? err : (snprintf(err, sizeof(err), "HTTP %ld", st), err));
        error_with_log(r, msg);
        rc = rc ? rc : MP_EIO;
    }
    mp_buf_fini(&b);
    return rc;
}

/* Waits until trace files exist and their sizes hold still for 2 s. */
static size_t wait_traces(const char *dir, double limit_s)
{
    uint64_t until = mp_time_ns() + (uint64_t)(limit_s * 1e9);
    long long last = -1;
    int stable = 0;
    size_t n = 0;
    while (mp_time_ns() < until) {
        struct mp_trace_rank_list l;
        long long total = 0;
        n = 0;
        if (mp_trace_find_ranks(dir, &l, NULL) == 0) {
            n = l.n;
            for (size_t i = 0; i < l.n; i++) {
                struct stat st;
                if (stat(l.files[i].path, &st) == 0)
                    total += st.st_size;
            }
            mp_trace_rank_list_fini(&l);
        }
        if (n && total == last) {
            if (++stable >= 4)
                break;
        } else {
            stable = 0;
        }
        last = total;
        usleep(500000);
    }
    return n;
}

struct load_out {
    struct mp_loadgen_result *res;
    struct mp_loadgen_metrics m;
    struct mp_loadgen_failures fails; /* grouped by reason (valid when have) */
    bool have;
    size_t failed_warmups;
    char first_error[512];
    double *rep; /* repeat > 1: REP_N metrics of each run, run k at (k-1) * REP_N */
    int n_rep;
};

/* ---- repeat: N measured runs against one engine, kept as run_1..N ---- */

enum { REP_N = 8 };

static const char *const REP_KEYS[REP_N] = {
    "output_throughput", "request_throughput", "ttft_mean_ms", "ttft_p99_ms",
    "tpot_mean_ms",      "itl_mean_ms",        "e2el_mean_ms", "e2el_p99_ms"};

/* Writes run k's client result and per-request JSONL into run_k/ and keeps
 * its headline metrics for the spread. */
static void keep_repeat(struct run *r, const struct mp_loadgen_result *res,
                        const struct mp_loadgen_metrics *m,
                        const struct mp_loadgen_report_info *info, int k, struct load_out *lo)
{
    char dir[64], name[128];
    snprintf(dir, sizeof(dir), "run_%d", k);
    char *path = mp_fs_join(r->ws, dir);
    struct mp_diag d;
    mp_diag_clear(&d);
    if (!path || mp_fs_mkdirs(path, &d)) {
        add_error(r, "cannot create %s: %s", dir, d.msg);
        free(path);
        return;
    }
    free(path);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    snprintf(name, sizeof(name), "%s/inferencex_result.json", dir);
    if (mp_loadgen_result_json(res, m, info, &b) == 0)
        write_file(r, name, &b);
    mp_buf_reset(&b);
    snprintf(name, sizeof(name), "%s/inferencex_result.requests.jsonl", dir);
    if (mp_loadgen_requests_jsonl(res, &b) == 0)
        write_file(r, name, &b);
    mp_buf_fini(&b);
    if (m->failed) {
        char w[96];
        snprintf(w, sizeof(w), "repeat run %d: %zu failed request(s)", k, m->failed);
        add_warning(r, w);
    }
    double *v = lo->rep ? lo->rep + (size_t)(k - 1) * REP_N : NULL;
    if (!v)
        return;
    const double x[REP_N] = {m->output_throughput,          m->request_throughput,
                             m->stat[MP_LOADGEN_TTFT].mean, m->stat[MP_LOADGEN_TTFT].p99,
                             m->stat[MP_LOADGEN_TPOT].mean, m->stat[MP_LOADGEN_ITL].mean,
                             m->stat[MP_LOADGEN_E2EL].mean, m->stat[MP_LOADGEN_E2EL].p99};
    memcpy(v, x, sizeof(x));
    lo->n_rep = k;
}

/* "repeats": every run's headline metrics and their spread. */
static void repeats_json(const struct load_out *lo, struct mp_buf *b)
{
    mp_buf_printf(b, ", \"repeats\": {\"n\": %d, \"runs\": [", lo->n_rep);
    for (int k = 0; k < lo->n_rep; k++) {
        mp_buf_printf(b, "%s{\"run\": %d, \"dir\": \"run_%d\"", k ? ", " : "", k + 1, k + 1);
        for (int j = 0; j < REP_N; j++) {
            mp_buf_printf(b, ", \"%s\": ", REP_KEYS[j]);
            mp_json_double(b, lo->rep[k * REP_N + j]);
        }
        mp_buf_putc(b, '}');
    }
    mp_buf_puts(b, "], \"spread\": {");
    for (int j = 0; j < REP_N; j++) {
        double lo_v = INFINITY, hi_v = -INFINITY, sum = 0, ss = 0;
        for (int k = 0; k < lo->n_rep; k++) {
            double x = lo->rep[k * REP_N + j];
            lo_v = fmin(lo_v, x);
            hi_v = fmax(hi_v, x);
            sum += x;
        }
        double mean = sum / lo->n_rep;
        for (int k = 0; k < lo->n_rep; k++)
            ss += (lo->rep[k * REP_N + j] - mean) * (lo->rep[k * REP_N + j] - mean);
        double sd = lo->n_rep > 1 ? sqrt(ss / (lo->n_rep - 1)) : 0;
        mp_buf_printf(b, "%s\"%s\": {\"min\": ", j ? ", " : "", REP_KEYS[j]);
        mp_json_double(b, lo_v);
        mp_buf_puts(b, ", \"max\": ");
        mp_json_double(b, hi_v);
        mp_buf_puts(b, ", \"mean\": ");
        mp_json_double(b, mean);
        mp_buf_puts(b, ", \"cov\": ");
        mp_json_double(b, mean != 0 ? sd / mean : NAN);
        mp_buf_putc(b, '}');
    }
    mp_buf_puts(b, "}}");
}

static int build_dataset(struct run *r, struct mp_loadgen_dataset **ds, bool chat)
{
    const struct mp_serve_config *c = r->c;
    struct mp_diag d;
    mp_diag_clear(&d);
    long isl, osl, conc, np, nw;
    mp_serve_config_intenv(c, "ISL", 1024, &isl, NULL);
    mp_serve_config_intenv(c, "OSL", 512, &osl, NULL);
    mp_serve_config_intenv(c, "CONC", 32, &conc, NULL);
    /* Magpie's scripts: NUM_PROMPTS or CONC*10, and CONC when profiling */
    /* with TraceLens the profiler window is the steady state inside the whole
     * load, so the load is not cut to CONC (Magpie patches this the same way) */
    mp_serve_config_intenv(c, "NUM_PROMPTS",
                           r->profiling && !mp_serve_tracelens_inference(c) ? conc : conc * 10, &np,
                           NULL);
    mp_serve_config_intenv(c, "NUM_WARMUPS", 2 * conc, &nw, NULL);
    const char *rr = mp_serve_config_getenv(c, "RANDOM_RANGE_RATIO");
    struct mp_loadgen_random_opts ro;
    mp_loadgen_random_opts_default(&ro);
    ro.input_len = (int)isl;
    ro.output_len = (int)osl;
    ro.range_ratio = rr ? strtod(rr, NULL) : 0.5;
    ro.text = chat;
    r->num_prompts = (size_t)(np > 0 ? np : 1);
    r->warmups = (size_t)(nw > 0 ? nw : 0);
    int rc = mp_loadgen_dataset_random(&ro, r->num_prompts, ds, &d);
    if (rc)
        add_error(r, "cannot build the random dataset: %s", d.msg);
    return rc;
}

static void first_failure(const struct mp_loadgen_result *res, char *out, size_t len)
{
    for (size_t i = 0; res && i < res->n; i++)
        if (!res->recs[i].success) {
            snprintf(out, len, "%s", res->recs[i].error ? res->recs[i].error : "failed");
            return;
        }
}

/* the load generator's settings from the config and its env */
static void load_config(struct run *r, struct mp_loadgen_config *lc, const char *ep, bool chat)
{
    const struct mp_serve_config *c = r->c;
    long conc = 32;
    mp_serve_config_intenv(c, "CONC", 32, &conc, NULL);
    mp_loadgen_config_default(lc);
    lc->base_url = r->base_url;
    lc->endpoint = ep ? ep : (chat ? "/v1/chat/completions" : "/v1/completions");
    lc->api = chat ? MP_LOADGEN_API_CHAT : MP_LOADGEN_API_COMPLETIONS;
    lc->model = r->served[0] ? r->served : c->model;
    lc->ignore_eos = true;
    lc->max_concurrency = (int)conc;
    lc->request_id_prefix = "magpie-bench-";
    lc->stall_timeout_s = c->stall_timeout_s;
    /* with TraceLens, vLLM stops the profiler itself after max_iterations and
     * exports the trace while requests wait; Magpie allows 1200 s for that
     * (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS), so a stall must not end it sooner */
    if (mp_serve_tracelens_inference(c) && lc->stall_timeout_s > 0 && lc->stall_timeout_s < 1500)
        lc->stall_timeout_s = 1500;
    lc->on_progress = on_load_progress;
    lc->progress_user = r;
    const char *rate = mp_serve_config_getenv(c, "REQUEST_RATE");
    if (rate && strcmp(rate, "inf") != 0)
        lc->request_rate = strtod(rate, NULL);
}

/* warm-up: copies of the first prompt, as vLLM's --num-warmups */
static int load_warmup(struct run *r, struct mp_loadgen_config *lc,
                       const struct mp_loadgen_dataset *ds, struct load_out *lo)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc;
    struct mp_loadgen_prompt *warm = calloc(r->warmups, sizeof(*warm));
    if (!warm) {
        rc = MP_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < r->warmups; i++)
        warm[i] = ds->prompts[0];
    struct mp_loadgen_dataset wds = *ds;
    wds.prompts = warm;
    wds.n = r->warmups;
    struct mp_loadgen_result *wres = NULL;
    lc->request_timeout_s = remaining_s(r) > 1 ? remaining_s(r) : 1;
    lc->request_id_prefix = "magpie-warmup-";
    rc = mp_loadgen_run(lc, &wds, &wres, &d);
    lc->request_id_prefix = "magpie-bench-";
    if (rc) {
        add_error(r, "warm-up could not run: %s", d.msg);
        goto out;
    }
    for (size_t i = 0; i < wres->n; i++)
        lo->failed_warmups += !wres->recs[i].success;
    if (lo->failed_warmups == wres->n) {
        char fe[512] = "";
        first_failure(wres, fe, sizeof(fe));
        mp_loadgen_result_free(wres);
        error_with_log(r, r->died ? "engine exited during the warm-up"
                                  : (snprintf(r->path, sizeof(r->path),
                                              "every warm-up request failed: %s", fe),
                                     r->path));
        rc = MP_EIO;
        goto out;
    }
    mp_loadgen_result_free(wres);
out:
    free(warm);
    return rc;
}

/* repeat: runs 1..N-1 are kept in run_k/; run N goes on in run_load as the
 * run of the report (and is kept as run_N too); the warm-up was once */
static int load_repeats(struct run *r, const struct mp_loadgen_config *lc,
                        const struct mp_loadgen_dataset *ds,
                        const struct mp_loadgen_metrics_opts *mo, bool chat, struct load_out *lo)
{
    const struct mp_serve_config *c = r->c;
    struct mp_loadgen_config rlc = *lc;
    struct mp_diag d;
    mp_diag_clear(&d);
    if (c->repeat > 1 && !(lo->rep = calloc((size_t)c->repeat * REP_N, sizeof(double))))
        add_warning(r, "repeat: out of memory for the spread");
    for (int k = 1; k < c->repeat && !r->died && !r->deadline_hit; k++) {
        struct mp_loadgen_result *rr = NULL;
        struct mp_loadgen_metrics rm;
        rlc.request_timeout_s = remaining_s(r) > 1 ? remaining_s(r) : 1;
        int rc = mp_loadgen_run(&rlc, ds, &rr, &d);
        if (rc) {
            add_error(r, "benchmark run %d could not run: %s", k, d.msg);
            return rc;
        }
        struct mp_loadgen_report_info ri = {.date = "",
                                            .backend = chat ? "openai-chat" : "vllm",
                                            .model_id = c->model,
                                            .dataset = "random",
                                            .num_prompts = r->num_prompts,
                                            .fail_limit = &c->max_failed};
        if (mp_loadgen_metrics_compute(rr, mo, &rm) == 0)
            keep_repeat(r, rr, &rm, &ri, k, lo);
        mp_loadgen_result_free(rr);
    }
    return 0;
}

/* the vLLM-format client result, as InferenceX's inferencex_result.json,
 * the client's page and the per-request JSONL */
static void load_write_results(struct run *r, struct load_out *lo, bool chat)
{
    const struct mp_serve_config *c = r->c;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char date[32];
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tmv);
    struct mp_loadgen_report_info info = {.date = date,
                                          .backend = chat ? "openai-chat" : "vllm",
                                          .model_id = c->model,
                                          .dataset = "random",
                                          .num_prompts = r->num_prompts,
                                          .fail_limit = &c->max_failed};
    if (lo->have && mp_loadgen_result_json(lo->res, &lo->m, &info, &b) == 0)
        write_file(r, "inferencex_result.json", &b);
    mp_buf_reset(&b); /* the client's page: distributions, and failures by reason */
    if (lo->have && mp_loadgen_html(lo->res, &lo->m, &info, &b) == 0)
        write_file(r, "inferencex_result.html", &b);
    mp_buf_reset(&b);
    if (mp_loadgen_requests_jsonl(lo->res, &b) == 0)
        write_file(r, "inferencex_result.requests.jsonl", &b);
    mp_buf_fini(&b);
    if (c->repeat > 1 && lo->have)
        keep_repeat(r, lo->res, &lo->m, &info, c->repeat, lo);
}

static void load_stop_profiler(struct run *r)
{
    progress(r, "stopping profiler", 0, 0, 0);
    double lim = r->c->stop_profile_timeout_s;
    if (lim > remaining_s(r) + 60)
        lim = remaining_s(r) + 60; /* a trace flush may overrun the deadline a little */
    if (profile_call(r, mp_serve_config_engine(r->c)->profile_stop, lim) == 0) {
        progress(r, "collecting traces", 0, 0, 0);
        if (wait_traces(r->trace_dir, 120) == 0)
            add_error(r, "no torch traces appeared in torch_trace/ after /stop_profile");
    }
}

static int run_load(struct run *r, struct load_out *lo)
{
    const struct mp_serve_config *c = r->c;
    const char *ep = mp_serve_config_getenv(c, "MAGPIE_BENCHMARK_ENDPOINT");
    const char *be = mp_serve_config_getenv(c, "MAGPIE_BENCHMARK_BACKEND");
    bool chat = (ep && strstr(ep, "chat")) || (be && strstr(be, "chat"));
    struct mp_loadgen_dataset *ds = NULL;
    int rc = build_dataset(r, &ds, chat);
    if (rc)
        return rc;
    struct mp_loadgen_config lc;
    load_config(r, &lc, ep, chat);
    struct mp_diag d;
    mp_diag_clear(&d);
    if (r->warmups && (rc = load_warmup(r, &lc, ds, lo)))
        goto out;
    if (r->died || r->deadline_hit) {
        rc = MP_ECHILD;
        goto out;
    }
    if (r->profiling && !r->client_only) {
        progress(r, "starting profiler", 0, 0, 0);
        if ((rc = profile_call(r, mp_serve_config_engine(r->c)->profile_start, 300)))
            goto out;
    }
    struct mp_loadgen_metrics_opts mo;
    mp_loadgen_metrics_opts_default(&mo);
    mo.selected = (1u << MP_LOADGEN_TTFT) | (1u << MP_LOADGEN_TPOT) | (1u << MP_LOADGEN_ITL) |
                  (1u << MP_LOADGEN_E2EL);
    if ((rc = load_repeats(r, &lc, ds, &mo, chat, lo)))
        goto out;
    lc.request_timeout_s = remaining_s(r) > 1 ? remaining_s(r) : 1;
    rc = mp_loadgen_run(&lc, ds, &lo->res, &d);
    if (rc) {
        add_error(r, "benchmark could not run: %s", d.msg);
        goto out;
    }
    r->measured = true;
    if (mp_loadgen_metrics_compute(lo->res, &mo, &lo->m) == 0)
        lo->have = true;
    mp_loadgen_failures(lo->res, &lo->fails);
    first_failure(lo->res, lo->first_error, sizeof(lo->first_error));
    load_write_results(r, lo, chat);
    if (r->profiling && !r->client_only && !r->died && !r->deadline_hit)
        load_stop_profiler(r);
out:
    mp_loadgen_dataset_free(ds);
    return rc;
}

/* The caller's load (a sweep) instead of the configured one. */
static void run_hook(struct run *r)
{
    char err[512] = "";
    r->hooked = true;
    r->hook_rc = r->o->load(r->base_url, r->o->load_user, err, sizeof(err));
    r->measured = r->hook_rc == 0;
    if (r->hook_rc)
        add_error_str(r, err[0] ? err : "the load failed");
}

static void run_measure(struct run *r, struct load_out *lo)
{
    if (r->o->load)
        run_hook(r);
    else
        (void)run_load(r, lo); /* its errors are in the report */
}

/* ---- post-processing ---- */

static void post_process(struct run *r, struct mp_buf *kernels, struct mp_buf *gap)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    progress(r, "kernel summary", 0, 0, 0);
    struct mp_kernel_summary *ks = NULL;
    int rc = mp_kernel_summary_run(r->trace_dir, NULL, NULL, &ks, &d);
    if (rc == 0 && ks->merged.n == 0)
        add_warning(r, "the torch traces hold no GPU kernel events (cat == kernel): a CPU-only "
                       "engine, or the profiler did not see the device");
    if (rc == 0 && mp_kernel_summary_json(ks, kernels))
        add_error(r, "kernel summary: out of memory");
    else if (rc)
        add_error(r, "kernel summary failed: %s", d.msg);
    mp_kernel_summary_free(ks);
    progress(r, "gap analysis", 0, 0, 0);
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
        progress(r, "kernel sources", 0, 0, 0);
        rc = mp_gap_find_sources(gr, &gc, &srcs, &d);
        for (size_t i = 0; rc == 0 && i < srcs.n_warnings; i++) {
            char w[4700];
            snprintf(w, sizeof(w), "find_kernel_sources: %s", srcs.warnings[i]);
            add_warning(r, w);
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
        add_error(r, "%s", msg);
        mp_buf_reset(gap);
        mp_buf_puts(gap, "{\"enabled\": true, \"error\": ");
        mp_json_str(gap, msg, strlen(msg));
        mp_buf_putc(gap, '}');
    }
    mp_gap_sources_fini(&srcs);
    mp_gap_result_free(gr);
}

/* Magpie's TraceLens inference post-processing (docs/magpie-compat.md), natively:
 * split, one step per stage, a report per stage under tracelens/. */
static void run_tracelens(struct run *r, struct mp_buf *json)
{
    const struct mp_serve_config *c = r->c;
    progress(r, "TraceLens stages", 0, 0, 0);
    struct mp_stages_opts so = {
        .trace_dir = r->trace_dir,
        .output_dir = r->ws,
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
        add_error(r, "%s", msg);
        if (!json->len) {
            mp_buf_puts(json, "{\"enabled\": true, \"analysis_mode\": \"inference\", "
                              "\"error\": ");
            mp_json_str(json, msg, strlen(msg));
            mp_buf_putc(json, '}');
        }
    }
}

/* ---- the "magpie" object: versions, engine, requests ---- */

static void scrape_version_of_server(struct run *r);

/* What the engine says (GET /version, its log), else what its Python has
 * installed; torch's version always from the latter (once). */
static void scrape_version(struct run *r)
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

static void scrape_version_of_server(struct run *r)
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

static void magpie_object(struct run *r, const struct load_out *lo, struct mp_buf *b)
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
        repeats_json(lo, b);
    mp_buf_printf(b, ", \"warnings\": [%s]}", r->warn.len ? mp_buf_cstr(&r->warn) : "");
#undef JS
#undef JSN
    mp_buf_fini(&cmd);
}

/* ---- entry point ---- */

/* ---- gpu.hardware: set before the engine starts, put back after ---- */

static int apply_hw(struct run *r)
{
    const struct mp_gpu_hw_config *hw = &r->c->hw;
    if (!hw->present || !hw->enabled)
        return 0;
    progress(r, "applying gpu.hardware", 0, 0, 0);
    mp_buf_puts(&r->hw_log, "# gpu.hardware, set before the run\n");
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_gpuctl_session_apply(hw, NULL, &r->hw_log, &r->hw, &d);
    if (rc) {
        add_error(r, "gpu.hardware could not be applied (what was set is put back): %s", d.msg);
        write_file(r, "gpu_hardware.log", &r->hw_log);
    }
    return rc;
}

/* Also on every failure path and after SIGINT / SIGTERM (the run then ends
 * as for a dead engine and comes here). */
static void restore_hw(struct run *r)
{
    if (!r->hw)
        return;
    if (r->c->hw.reset_after) {
        mp_buf_puts(&r->hw_log, "# put back after the run\n");
        struct mp_diag d;
        mp_diag_clear(&d);
        if (mp_gpuctl_session_restore(r->hw, &r->hw_log, &d))
            add_error(r,
                      "gpu.hardware: not every setting could be put back: %s (`magpie gpu "
                      "reset` does it by hand)",
                      d.msg);
        else
            add_warning(r, "gpu.hardware: set for the run and put back after it "
                           "(gpu_hardware.log)");
    } else {
        add_warning(r, "gpu.hardware: left as set (reset_after_benchmark: false); `magpie gpu "
                       "reset` puts the defaults back");
    }
    write_file(r, "gpu_hardware.log", &r->hw_log);
    mp_gpuctl_session_free(r->hw);
    r->hw = NULL;
}

/* what a run collects for its report besides the load's results */
struct run_bufs {
    struct mp_buf kernels, gap, mag, rep, gpumon, tracelens;
};

/* BENCHMARK_BASE_URL: the load against a server that is not ours */
static void run_client_only(struct run *r, struct load_out *lo, const char *ext)
{
    snprintf(r->base_url, sizeof(r->base_url), "%s", ext);
    size_t n = strlen(r->base_url);
    while (n && r->base_url[n - 1] == '/')
        r->base_url[--n] = 0;
    if (r->profiling) {
        add_warning(r, "BENCHMARK_BASE_URL: the server is not ours, so server-side "
                       "profiling is off");
        r->profiling = false;
    }
    if (wait_ready(r) == 0)
        run_measure(r, lo);
}

/* our engine: start (or reuse), load, stop, and the GPUs put back */
static void run_own_engine(struct run *r, struct load_out *lo, const struct mp_gpu_info *info,
                           struct serve_monitor **mon, struct mp_buf *gpumon)
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
        reuse_attach_or_clear(r);
    if (apply_hw(r) == 0 &&
        (r->attached || (select_gpus(r, info) == 0 && start_engine(r, info) == 0)))
        start_monitor(r, mon);
    if ((r->srv || r->detached) && wait_ready(r) == 0) {
        scrape_version(r);
        run_measure(r, lo);
    }
    if ((r->srv || r->detached) && !r->died && !engine_alive(r))
        r->died = true;
    if (r->died && r->ready) {
        g_engine_pgid = 0;
        struct mp_proc_result pr;
        mp_proc_result_init(&pr);
        if (r->srv && mp_proc_wait(r->srv, &pr) == 0)
            mp_proc_describe(&pr, 0, r->exit_desc, sizeof(r->exit_desc));
        mp_proc_result_fini(&pr);
        char what[512];
        snprintf(what, sizeof(what), "engine exited during the benchmark (%s)",
                 r->exit_desc[0] ? r->exit_desc : "unknown status");
        error_with_log(r, what);
    }
    if (r->detached)
        finish_detached(r);
    else
        stop_engine(r);
    restore_hw(r); /* the engine is gone: the GPUs go back */
    serve_monitor_stop(*mon, gpumon);
    *mon = NULL;
    scrape_version(r);
}

/* whether the run measured something: failed requests within
 * max_failed_requests and some throughput */
static bool run_judge(struct run *r, const struct load_out *lo)
{
    const struct mp_serve_config *c = r->c;
    if (r->deadline_hit)
        add_error(r, "timeout_seconds (%.0f s) reached; the run was stopped", c->timeout_s);
    if (r->hooked) /* the caller's load judged itself */
        return r->ready && r->hook_rc == 0 && !r->died && !r->deadline_hit;
    bool ok =
        r->ready && r->measured && lo->have && lo->m.completed > 0 && !r->died && !r->deadline_hit;
    char lim[48];
    mp_loadgen_fail_limit_format(&c->max_failed, lim, sizeof(lim));
    if (r->measured && lo->have && lo->m.completed == 0) {
        add_error(r, "every request failed (%zu): %s", lo->m.failed, lo->first_error);
    } else if (r->measured && lo->have && lo->m.failed &&
               !mp_loadgen_fail_limit_ok(&c->max_failed, lo->fails.failed, lo->fails.total)) {
        /* latency over the successes alone may hide what the failures cost
         * (docs/metrics.md): beyond the limit this is no measurement */
        add_error(r,
                  "%zu of %zu requests failed (%.2f%%), more than max_failed_requests %s "
                  "allows; first: %s",
                  lo->fails.failed, lo->fails.total, lo->fails.ratio * 100, lim, lo->first_error);
        ok = false;
    } else if (r->measured && lo->have && lo->m.failed) {
        char msg[900];
        snprintf(msg, sizeof(msg),
                 "%zu of %zu requests failed (%.2f%%), within max_failed_requests %s: the "
                 "metrics cover the %zu successful ones; first: %s",
                 lo->fails.failed, lo->fails.total, lo->fails.ratio * 100, lim, lo->m.completed,
                 lo->first_error);
        add_warning(r, msg);
    }
    if (ok && lo->m.request_throughput <= 0 && lo->m.output_throughput <= 0) {
        add_error(r, "Benchmark produced no valid throughput/latency metrics");
        ok = false;
    }
    return ok;
}

/* trace post-processing and the TraceLens reports, after a good run */
static void run_traces(struct run *r, bool ok, struct run_bufs *ob)
{
    const struct mp_serve_config *c = r->c;
    if (ok && r->profiling)
        post_process(r, &ob->kernels, &ob->gap);
    else if (r->profiling && !ok)
        add_warning(r, "trace post-processing skipped: the benchmark did not succeed");
    if (ok && r->profiling && mp_serve_tracelens_inference(c)) {
        run_tracelens(r, &ob->tracelens);
    } else if (ok && r->profiling && c->tracelens) {
        progress(r, "TraceLens reports", 0, 0, 0);
        char first[1200] = "";
        size_t ne =
            serve_tracelens_pytorch(c, r->trace_dir, r->ws, &ob->tracelens, first, sizeof(first));
        if (ne)
            add_error(r, "TraceLens (pytorch): %zu error(s); first: %s", ne, first);
    } else if (ok && c->tracelens) {
        add_warning(r, "TraceLens skipped: no torch-profiler traces (the profiler is off)");
    }
}

/* benchmark_report.json and summary.txt, into res and the workspace */
static int run_report(struct run *r, const struct load_out *lo, bool ok, struct run_bufs *ob,
                      struct mp_diag *d)
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
        .execution_time_s = now_s(r),
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
    struct run r;
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
    struct load_out lo;
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
        progress(&r, "detecting GPUs", 0, 0, 0);
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
    if (r.srv)
        stop_engine(&r);
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
