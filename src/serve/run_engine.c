/* The engine's lifecycle in one benchmark run: launch (its own process
 * group with server.log, or a docker container of the resolved image),
 * readiness on the engine row's health and models paths while the process
 * is watched, stop (main process first, then its group: mp_serve_stop_engine;
 * docker stop), and server reuse (attach to a matching recorded server or
 * replace it; leave it running or clean it up). Behaviour as before the
 * split of run.c (docs/magpie-compat.md).
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

static int resolve_image(struct serve_run *r, const struct mp_gpu_info *info)
{
    const struct mp_serve_config *c = r->c;
    struct mp_diag d;
    mp_diag_clear(&d);
    r->image = c->docker_image;
    if (!r->image) {
        const char *arch = c->gpu_arch ? c->gpu_arch : info->architecture;
        if (mp_serve_image_for(c->framework, arch, &r->image, &d)) {
            serve_run_error(r, "%s", d.msg);
            return MP_ENOTFOUND;
        }
    }
    const char *insp[] = {"docker", "image", "inspect", "--format", "{{.Id}}", r->image, NULL};
    struct mp_buf out;
    mp_buf_init(&out, 0);
    int rc = serve_run_capture(insp, 60, &out);
    if (rc) {
        const char *pull[] = {"docker", "pull", r->image, NULL};
        mp_buf_reset(&out);
        if (serve_run_capture(pull, serve_run_remaining_s(r), &out) == 0) {
            mp_buf_reset(&out);
            rc = serve_run_capture(insp, 60, &out);
        }
    }
    if (!rc) {
        snprintf(r->image_id, sizeof(r->image_id), "%s", mp_buf_cstr(&out));
        r->image_id[strcspn(r->image_id, "\r\n")] = 0;
    }
    mp_buf_fini(&out);
    if (rc || !r->image_id[0]) {
        serve_run_error(r, "cannot resolve docker image '%s' (docker image inspect / pull failed)",
                        r->image);
        return MP_ENOTFOUND;
    }
    return 0;
}

int serve_run_start_engine(struct serve_run *r, const struct mp_gpu_info *info)
{
    const struct mp_serve_config *c = r->c;
    struct mp_diag d;
    mp_diag_clear(&d);
    long port = r->port;
    const char *health = mp_serve_config_engine(c)->health_path;
    if (answering(r->base_url, health, 2)) {
        serve_run_error(r,
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
        serve_run_error(r, "cannot build the engine command: %s", d.msg);
        return rc;
    }
    if (!r->docker && c->hf_cache_path)
        mp_serve_cmd_env(&r->cmd, "HF_HOME", c->hf_cache_path);
    if (c->reuse) {
        /* outlives this run: its pid, group and identity go to the state dir */
        rc = serve_spawn_detached(&r->cmd, r->ws, r->log_path, &r->det_pid, &r->det_pgid, &d);
        if (rc) {
            serve_run_error(r, "cannot start the engine (%s): %s", r->cmd.argv[0], d.msg);
            return rc;
        }
        r->detached = true;
        r->srv_pid = r->det_pid;
        if (c->reuse_cleanup)
            serve_engine_pgid = (sig_atomic_t)r->det_pgid;
        struct mp_buf cl;
        mp_buf_init(&cl, 0);
        mp_proc_join((const char *const *)r->cmd.argv, &cl);
        if (serve_reuse_write(c, r->port, r->det_pid, r->det_pgid, mp_buf_cstr(&cl), r->log_path,
                              r->pid_path, r->meta_path, &d))
            serve_run_warning(r, "cannot record the server for reuse in the state dir");
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
        .timeout_s =
            serve_run_remaining_s(r) + 120, /* a backstop; the deadline is enforced below */
        .grace_s = 20,
        .out_mode = MP_PROC_FILE,
        .out_path = r->log_path,
        .err_mode = MP_PROC_TO_STDOUT,
        .keep_group =
            true, /* its children get time to stop: serve_run_stop_engine ends the group */
    };
    rc = mp_proc_spawn((const char *const *)r->cmd.argv, &po, &r->srv, &d);
    if (rc) {
        serve_run_error(r, "cannot start the engine (%s): %s", r->cmd.argv[0], d.msg);
        return rc;
    }
    r->srv_pid = mp_proc_pid(r->srv);
    serve_engine_pgid = (sig_atomic_t)r->srv_pid;
    char pid[32];
    snprintf(pid, sizeof(pid), "%d\n", (int)r->srv_pid);
    snprintf(r->path, sizeof(r->path), "%s/server.pid", r->ws);
    mp_fs_write_atomic(r->path, pid, strlen(pid), NULL);
    return 0;
}

/* Polls /health, then /v1/models, while watching the engine process. */
int serve_run_wait_ready(struct serve_run *r)
{
    const struct mp_serve_engine *e = mp_serve_config_engine(r->c);
    double limit = r->c->server_ready_timeout_s;
    if (r->client_only && limit > 60)
        limit = 60; /* a server someone else runs is up, or it is not ours to wait for */
    if (limit > serve_run_remaining_s(r))
        limit = serve_run_remaining_s(r);
    uint64_t until = mp_time_ns() + (uint64_t)(limit * 1e9);
    char url[800], err[256];
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = MP_ETIMEOUT;
    while (mp_time_ns() < until) {
        serve_run_progress(r, "starting engine", 0, 0, 0);
        if (r->detached && !serve_group_alive(r->det_pid, r->det_pgid)) {
            serve_engine_pgid = 0;
            serve_run_error_log(r, "engine exited before it was ready");
            r->died = true;
            rc = MP_ECHILD;
            break;
        }
        if (r->srv && mp_proc_poll(r->srv, 0) == 1) {
            serve_engine_pgid = 0;
            struct mp_proc_result pr;
            mp_proc_result_init(&pr);
            mp_proc_wait(r->srv, &pr);
            mp_proc_describe(&pr, 0, r->exit_desc, sizeof(r->exit_desc));
            mp_proc_result_fini(&pr);
            char what[512];
            snprintf(what, sizeof(what), "engine exited before it was ready (%s)", r->exit_desc);
            serve_run_error_log(r, what);
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
        serve_run_error_log(r, what);
        if (serve_run_remaining_s(r) <= 0)
            r->deadline_hit = true;
    }
    r->ready = rc == 0;
    r->ready_s = serve_run_now_s(r);
    return rc;
}

static bool proc_running(void *user, int wait_ms)
{
    return mp_proc_poll(user, wait_ms) == 0; /* reaps it once ended */
}

static bool detached_running(void *user, int wait_ms)
{
    const struct serve_run *r = user;
    if (!serve_group_alive(r->det_pid, r->det_pgid))
        return false;
    if (wait_ms > 0)
        usleep((useconds_t)wait_ms * 1000);
    return serve_group_alive(r->det_pid, r->det_pgid);
}

/* A detached (server_lifecycle) engine: not our child, same order. */
static void stop_detached(struct serve_run *r, pid_t pid, pid_t pgid)
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

void serve_run_stop_engine(struct serve_run *r)
{
    if (!r->srv)
        return;
    serve_engine_pgid = 0;
    serve_run_progress(r, "stopping engine", 0, 0, 0);
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

void serve_run_reuse_attach(struct serve_run *r)
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
            serve_engine_pgid = (sig_atomic_t)st.pgid;
    } else {
        if (alive) {
            snprintf(msg, sizeof(msg),
                     "server_lifecycle: stopped the recorded %s server (pid %d): %s",
                     mp_serve_config_engine(c)->name, (int)st.pid,
                     match ? "not answering /health" : why);
            serve_run_warning(r, msg);
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
void serve_run_finish_detached(struct serve_run *r)
{
    serve_engine_pgid = 0;
    if (r->c->reuse_cleanup || r->died || r->deadline_hit || !r->ready) {
        serve_run_progress(r, "stopping engine", 0, 0, 0);
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
