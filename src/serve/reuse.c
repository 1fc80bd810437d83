/* Persistent engine servers across benchmark runs (`server_lifecycle`,
 * docs/magpie-compat.md, Server reuse). The engine is started detached, in a process
 * group of its own that outlives magpie; its pid, group and launch
 * metadata go to <pid_dir>/<framework>_<port>.pid / .json. A later run
 * whose metadata matches (framework, model, TP, max model len, EXTRA_*_ARGS,
 * model revision) and whose server answers /health attaches to it instead of
 * launching. A recorded group is signalled only after checking that its
 * process still exists and still leads that group, so a stale pid file can
 * never make magpie signal someone else's processes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/proc.h>
#include <magpie/serve.h>

#include "serve_int.h"

void serve_reuse_paths(const struct mp_serve_config *c, int port, char *pid_path, char *meta_path,
                       size_t len)
{
    char dir[4096];
    const char *home = getenv("HOME");
    if (c->reuse_pid_dir)
        snprintf(dir, sizeof(dir), "%s", c->reuse_pid_dir);
    else
        snprintf(dir, sizeof(dir), "%s/.cache/magpie/server", home ? home : "/tmp");
    const char *fw = mp_serve_config_engine(c)->name;
    snprintf(pid_path, len, "%s/%s_%d.pid", dir, fw, port);
    snprintf(meta_path, len, "%s/%s_%d.json", dir, fw, port);
}

static const char *env_or_empty(const struct mp_serve_config *c, const char *k)
{
    const char *v = mp_serve_config_getenv(c, k);
    return v ? v : "";
}

/* The fields that decide whether a running server serves this config. */
static json_t *identity(const struct mp_serve_config *c, int port)
{
    json_t *id = json_pack(
        "{s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:s}", "framework",
        mp_serve_config_engine(c)->name, "model", c->model, "tp", env_or_empty(c, "TP"), "port",
        port, "extra_vllm_args", env_or_empty(c, "EXTRA_VLLM_ARGS"), "extra_sglang_args",
        env_or_empty(c, "EXTRA_SGLANG_ARGS"), "extra_atom_args", env_or_empty(c, "EXTRA_ATOM_ARGS"),
        "max_model_len", env_or_empty(c, "MAX_MODEL_LEN"), "model_revision",
        env_or_empty(c, "MODEL_REVISION"));
    /* engines other than Magpie's three: their own EXTRA_*_ARGS, and a
     * YAML-declared engine's command template */
    const struct mp_serve_engine *e = mp_serve_config_engine(c);
    bool magpies = c->framework < MP_SERVE_TRTLLM && !c->engine;
    if (id && !magpies && e->extra_args_env)
        json_object_set_new(id, "extra_args", json_string(env_or_empty(c, e->extra_args_env)));
    if (id && c->engine)
        json_object_set_new(id, "command", json_string(e->command));
    return id;
}

int serve_reuse_read(const char *meta_path, struct serve_reuse_state *st)
{
    memset(st, 0, sizeof(*st));
    json_error_t je;
    json_t *m = json_load_file(meta_path, 0, &je);
    if (!json_is_object(m)) {
        json_decref(m);
        return MP_ENOTFOUND;
    }
    st->pid = (pid_t)json_integer_value(json_object_get(m, "server_pid"));
    st->pgid = (pid_t)json_integer_value(json_object_get(m, "server_pgid"));
    st->meta = m;
    return 0;
}

void serve_reuse_state_fini(struct serve_reuse_state *st)
{
    json_decref(st->meta);
    st->meta = NULL;
}

bool serve_reuse_matches(const struct mp_serve_config *c, int port,
                         const struct serve_reuse_state *st, char *why, size_t len)
{
    json_t *want = identity(c, port);
    bool ok = true;
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v)
    {
        json_t *have = json_object_get(st->meta, k);
        if (!have || !json_equal(have, v)) {
            snprintf(why, len, "%s differs", k);
            ok = false;
            break;
        }
    }
    json_decref(want);
    return ok;
}

bool serve_group_alive(pid_t pid, pid_t pgid)
{
    if (pid <= 1 || pgid <= 1)
        return false;
    /* the recorded process must still exist and still be in that group */
    return kill(pid, 0) == 0 && getpgid(pid) == pgid;
}

void serve_group_stop(pid_t pid, pid_t pgid, double grace_s)
{
    if (!serve_group_alive(pid, pgid))
        return;
    kill(-pgid, SIGTERM);
    uint64_t until = mp_time_ns() + (uint64_t)(grace_s * 1e9);
    while (mp_time_ns() < until && kill(-pgid, 0) == 0)
        usleep(100000);
    if (kill(-pgid, 0) == 0) {
        kill(-pgid, SIGKILL);
        for (int i = 0; i < 100 && kill(-pgid, 0) == 0; i++) /* until reaped, <= 5 s */
            usleep(50000);
    }
}

int serve_reuse_write(const struct mp_serve_config *c, int port, pid_t pid, pid_t pgid,
                      const char *command, const char *log_path, const char *pid_path,
                      const char *meta_path, struct mp_diag *d)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", meta_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    int rc = mp_fs_mkdirs(dir, d);
    if (rc)
        return rc;
    json_t *m = identity(c, port);
    char ts[32];
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tmv);
    json_object_set_new(m, "server_pid", json_integer(pid));
    json_object_set_new(m, "server_pgid", json_integer(pgid));
    json_object_set_new(m, "command", json_string(command ? command : ""));
    json_object_set_new(m, "server_log", json_string(log_path ? log_path : ""));
    json_object_set_new(m, "started_at", json_string(ts));
    json_object_set_new(m, "last_used_at", json_string(ts));
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(m);
    if (!text)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    rc = mp_fs_write_atomic(meta_path, text, strlen(text), d);
    free(text);
    char pidtxt[32];
    snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)pid);
    if (!rc)
        rc = mp_fs_write_atomic(pid_path, pidtxt, strlen(pidtxt), d);
    return rc;
}

void serve_reuse_touch(const char *meta_path)
{
    struct serve_reuse_state st;
    if (serve_reuse_read(meta_path, &st))
        return;
    char ts[32];
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tmv);
    json_object_set_new(st.meta, "last_used_at", json_string(ts));
    char *text = json_dumps(st.meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text)
        mp_fs_write_atomic(meta_path, text, strlen(text), NULL);
    free(text);
    serve_reuse_state_fini(&st);
}

int serve_spawn_detached(const struct mp_serve_cmd *cmd, const char *cwd, const char *log_path,
                         pid_t *pid, pid_t *pgid, struct mp_diag *d)
{
    /* sh starts the engine in the background and prints its pid; the engine
     * stays in sh's process group (ours to signal later) after sh exits */
    const char *argv[512];
    int n = 0;
    argv[n++] = "/bin/sh";
    argv[n++] = "-c";
    argv[n++] = "log=$1; shift; \"$@\" </dev/null >>\"$log\" 2>&1 & echo $!";
    argv[n++] = "sh";
    argv[n++] = log_path;
    for (int i = 0; i < cmd->argc && n < 511; i++)
        argv[n++] = cmd->argv[i];
    argv[n] = NULL;
    struct mp_proc_opts po = {.cwd = cwd,
                              .env = (const char *const *)cmd->env,
                              .timeout_s = 30,
                              .err_mode = MP_PROC_DISCARD,
                              .keep_group = true};
    struct mp_proc *p = NULL;
    int rc = mp_proc_spawn(argv, &po, &p, d);
    if (rc)
        return rc;
    *pgid = mp_proc_pid(p);
    struct mp_proc_result res;
    mp_proc_result_init(&res);
    rc = mp_proc_wait(p, &res);
    mp_proc_free(p);
    long v = rc == 0 ? strtol(mp_buf_cstr(&res.out), NULL, 10) : 0;
    mp_proc_result_fini(&res);
    if (v <= 1)
        return mp_diag_set(d, MP_ECHILD, "cannot start the engine detached");
    *pid = (pid_t)v;
    return 0;
}
