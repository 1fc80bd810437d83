/* Tool calls. Each call runs `magpie mcp --worker TOOL ARGS` as a child in
 * its own process group (src/proc), on a thread of its own that passes the
 * worker's progress lines on as notifications/progress and finally sends
 * the tools/call result. Cancellation stops the worker's whole tree: every
 * descendant is found through /proc/<pid>/task/<tid>/children and stopped
 * (SIGSTOP, so none can start another), then killed with its process group;
 * the orphans come back to this process (a child subreaper) and are reaped.
 * Slots bound the workers: opts.max_calls in all and max_calls_per_session
 * run at once, up to max_queued more wait (without a thread) in a FIFO, and
 * a call beyond that is refused as busy. A reaper thread reaps every child
 * that is not a running worker: the orphans a worker's probes leave behind
 * are re-parented to this process when the worker exits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <magpie/proc.h>

#include "mcp_int.h"

#define MAX_TREE 4096

static size_t children_of(pid_t pid, pid_t *out, size_t n, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return n;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char cp[320];
        snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", (int)pid, e->d_name);
        FILE *f = fopen(cp, "r");
        if (!f)
            continue;
        int c;
        while (n < cap && fscanf(f, "%d", &c) == 1) {
            bool seen = false;
            for (size_t i = 0; i < n && !seen; i++)
                seen = out[i] == (pid_t)c;
            if (!seen)
                out[n++] = (pid_t)c;
        }
        fclose(f);
    }
    closedir(dir);
    return n;
}

/* Stops and kills the worker's tree; returns the descendants found. */
static size_t kill_tree(pid_t worker, pid_t *tree, size_t cap)
{
    size_t n = 0;
    tree[n++] = worker;
    kill(worker, SIGSTOP);
    for (int round = 0; round < 50; round++) {
        size_t before = n;
        for (size_t i = 0; i < n; i++)
            n = children_of(tree[i], tree, n, cap);
        for (size_t i = before; i < n; i++)
            kill(tree[i], SIGSTOP);
        if (n == before)
            break;
    }
    for (size_t i = 0; i < n; i++) {
        if (getpgid(tree[i]) == tree[i])
            kill(-tree[i], SIGKILL); /* a group made by one of ours */
        kill(tree[i], SIGKILL);
    }
    return n;
}

static void reap_orphans(const pid_t *tree, size_t n)
{
    /* They are killed; once their parents are gone they are ours. */
    for (int tries = 0; tries < 200; tries++) {
        bool left = false;
        for (size_t i = 1; i < n; i++) {
            if (tree[i] <= 0)
                continue;
            pid_t r = waitpid(tree[i], NULL, WNOHANG);
            if (r == tree[i] || (r < 0 && errno == ECHILD)) {
                /* ECHILD: reaped by its own (killed) parent, or not ours yet */
                char p[64];
                snprintf(p, sizeof(p), "/proc/%d", (int)tree[i]);
                struct stat st;
                if (r == tree[i] || stat(p, &st) != 0)
                    ((pid_t *)tree)[i] = 0;
                else
                    left = true;
            } else {
                left = true;
            }
        }
        if (!left)
            return;
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
}

static void send_progress(struct mcp_call *c, double done, double total, const char *msg)
{
    if (!c->progress_token || atomic_load(&c->cancel))
        return;
    json_t *p = json_object();
    json_object_set(p, "progressToken", c->progress_token);
    json_object_set_new(p, "progress", json_real(done));
    if (total > 0)
        json_object_set_new(p, "total", json_real(total));
    if (msg && *msg && strcmp(c->version, "2025-03-26") >= 0)
        json_object_set_new(p, "message", mcp_jstr(msg));
    json_t *n = json_object();
    json_object_set_new(n, "jsonrpc", json_string("2.0"));
    json_object_set_new(n, "method", json_string("notifications/progress"));
    json_object_set_new(n, "params", p);
    mcp_sink_emit(c->sink, n, false);
    json_decref(n);
}

/* The final result: the tool's JSON as text, plus structuredContent. */
static json_t *tool_result(struct mcp_call *c, json_t *value, bool is_error)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    json_t *content = json_array(), *t = json_object();
    json_object_set_new(t, "type", json_string("text"));
    json_object_set_new(t, "text", json_string(text ? text : "null"));
    free(text);
    json_array_append_new(content, t);
    json_t *r = json_object();
    json_object_set_new(r, "content", content);
    if (strcmp(c->version, "2025-06-18") >= 0) {
        if (json_is_object(value)) {
            json_object_set(r, "structuredContent", value);
        } else {
            json_t *w = json_object();
            json_object_set(w, "result", value);
            json_object_set_new(r, "structuredContent", w);
        }
    }
    json_object_set_new(r, "isError", json_boolean(is_error));
    if (c->modern) {
        json_object_set_new(r, "resultType", json_string("complete"));
        json_t *meta = json_object(), *si = json_object();
        json_object_set_new(si, "name", json_string(MCP_SERVER_NAME));
        json_object_set_new(si, "version", json_string(MP_VERSION));
        json_object_set_new(meta, "io.modelcontextprotocol/serverInfo", si);
        json_object_set_new(r, "_meta", meta);
    }
    json_t *resp = json_object();
    json_object_set_new(resp, "jsonrpc", json_string("2.0"));
    json_object_set(resp, "id", c->id);
    json_object_set_new(resp, "result", r);
    return resp;
}

static json_t *error_value(const char *fmt, const char *a, const char *b)
{
    struct mp_buf m;
    mp_buf_init(&m, 0);
    mp_buf_printf(&m, fmt, a, b);
    json_t *e = json_object();
    json_object_set_new(e, "error", mcp_jstr(mp_buf_cstr(&m)));
    mp_buf_fini(&m);
    return e;
}

/* Reads complete lines appended to the progress file since *off (lines of
 * any length; the message is cut to MSG_MAX bytes on a character boundary). */
#define MSG_MAX 1000

static void pump_progress(struct mcp_call *c, FILE *f, long *off, double *last, bool *reported)
{
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    clearerr(f);
    if (fseek(f, *off, SEEK_SET) != 0)
        return;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        size_t n = (size_t)got;
        if (line[n - 1] != '\n')
            break; /* partial line: read again next time */
        *off += (long)n;
        line[n - 1] = 0;
        double done = 0, total = 0;
        int used = 0;
        if (sscanf(line, "%lf %lf %n", &done, &total, &used) < 2 || !isfinite(done))
            continue;
        if (!isfinite(total))
            total = 0;
        if (done <= *last)
            done = nextafter(*last, INFINITY); /* progress must increase, at any magnitude */
        if (!isfinite(done))
            continue;
        *last = done;
        *reported = true;
        char msg[MSG_MAX + 1];
        mcp_fmt(msg, sizeof(msg), "%s", line + used);
        send_progress(c, done, total, msg);
    }
    free(line);
}

/* ---- workers and the reaper ---- */

static void worker_add(struct mcp_server *srv, pid_t pid)
{
    if (srv->nworkers == srv->capworkers) {
        size_t cap = srv->capworkers ? 2 * srv->capworkers : 32;
        pid_t *w = realloc(srv->workers, cap * sizeof(*w));
        if (!w)
            return; /* the reaper may then reap it: its call sees "ended" */
        srv->workers = w;
        srv->capworkers = cap;
    }
    srv->workers[srv->nworkers++] = pid;
}

/* A worker has been reaped by its call: it leaves the registry, and the
 * reaper is woken for what its tree left behind (ours now). */
static void worker_done(struct mcp_server *srv, pid_t pid)
{
    pthread_mutex_lock(&srv->reap_mu);
    for (size_t i = 0; i < srv->nworkers; i++) {
        if (srv->workers[i] == pid) {
            srv->workers[i] = srv->workers[--srv->nworkers];
            break;
        }
    }
    srv->reap_now = true;
    pthread_cond_broadcast(&srv->reap_cv);
    pthread_mutex_unlock(&srv->reap_mu);
}

/* Reaps every child of this process that is not a running worker (reap_mu
 * held). */
static void sweep_children(struct mcp_server *srv)
{
    pid_t kids[MAX_TREE];
    size_t n = children_of(getpid(), kids, 0, MAX_TREE);
    for (size_t i = 0; i < n; i++) {
        bool worker = false;
        for (size_t j = 0; j < srv->nworkers && !worker; j++)
            worker = srv->workers[j] == kids[i];
        if (!worker)
            while (waitpid(kids[i], NULL, WNOHANG) < 0 && errno == EINTR)
                ;
    }
}

static void *reaper_main(void *arg)
{
    struct mcp_server *srv = arg;
    pthread_mutex_lock(&srv->reap_mu);
    while (!atomic_load(&srv->stopping)) {
        sweep_children(srv);
        srv->reap_now = false;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        while (!srv->reap_now && !atomic_load(&srv->stopping))
            if (pthread_cond_timedwait(&srv->reap_cv, &srv->reap_mu, &ts) == ETIMEDOUT)
                break;
    }
    sweep_children(srv);
    pthread_mutex_unlock(&srv->reap_mu);
    return NULL;
}

void mcp_reaper_start(struct mcp_server *srv)
{
    if (srv->dry || srv->reaper_started)
        return;
    srv->reaper_started = pthread_create(&srv->reaper, NULL, reaper_main, srv) == 0;
}

/* ---- the warm runner pool ---- */

/* Starts the pool (`magpie mcp --worker @warm-pool SOCKET`, src/kernel/warm.c)
 * once per server: this process makes the listening socket (in the private
 * temporary directory, so a connection never races the pool's start) and
 * a control pipe whose end here, closed at shutdown or by this process's
 * exit, ends the pool and its runners. MAGPIE_WARM_RUNNERS=0: no pool.
 * Returns whether the pool runs. */
static bool pool_start(struct mcp_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->pool_tried || srv->dry) {
        bool up = srv->pool_pid > 0;
        pthread_mutex_unlock(&srv->mu);
        return up;
    }
    srv->pool_tried = true;
    srv->pool_ctl = -1;
    const char *n = getenv("MAGPIE_WARM_RUNNERS");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/warm.sock", srv->tmpdir);
    int ls = -1, ctl[2] = {-1, -1};
    if ((n && *n && atoi(n) <= 0) || strlen(path) >= sizeof(sa.sun_path))
        goto out;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
        listen(ls, 64) != 0 || pipe2(ctl, O_CLOEXEC) != 0)
        goto fail;
    const char *argv[] = {srv->self_exe, "mcp", "--worker", "@warm-pool", path, NULL};
    pid_t pid = fork();
    if (pid == 0) { /* async-signal-safe calls only until exec */
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
        }
        int a = fcntl(ctl[0], F_DUPFD, 10), b = fcntl(ls, F_DUPFD, 10); /* either may be 3 or 4 */
        dup2(a, 3);
        dup2(b, 4);
        for (int fd = 5; fd < 1024; fd++)
            close(fd);
        setpgid(0, 0);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (pid < 0)
        goto fail;
    close(ctl[0]);
    close(ls);
    srv->pool_pid = pid;
    srv->pool_ctl = ctl[1];
    snprintf(srv->pool_sock, sizeof(srv->pool_sock), "%s", path);
    goto out;
fail:
    if (ls >= 0)
        close(ls);
    if (ctl[0] >= 0) {
        close(ctl[0]);
        close(ctl[1]);
    }
    unlink(path);
out:;
    bool up = srv->pool_pid > 0;
    pthread_mutex_unlock(&srv->mu);
    return up;
}

void mcp_pool_stop(struct mcp_server *srv)
{
    if (srv->pool_pid <= 0)
        return;
    close(srv->pool_ctl); /* the pool kills its runners and exits */
    srv->pool_ctl = -1;
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++) {
        pid_t w = waitpid(srv->pool_pid, NULL, WNOHANG);
        gone = w == srv->pool_pid || (w < 0 && errno == ECHILD); /* or the reaper had it */
        if (!gone) {
            struct timespec ts = {0, 10000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (!gone) {
        kill(srv->pool_pid, SIGKILL);
        waitpid(srv->pool_pid, NULL, 0);
    }
    srv->pool_pid = 0;
    unlink(srv->pool_sock);
}

/* The tool's JSON from a worker's exit: its stdout when it exited 0 or 1
 * with JSON there, else an error saying how it ended, with its stderr's
 * tail. */
static json_t *worker_value(struct mp_proc_result *res, bool *is_error)
{
    json_error_t je;
    json_t *out =
        res->out.len ? json_loadb(res->out.data, res->out.len, JSON_DECODE_ANY, &je) : NULL;
    if (res->exited && (res->exit_code == 0 || res->exit_code == 1) && out) {
        *is_error = res->exit_code != 0;
        return out;
    }
    json_decref(out);
    *is_error = true;
    char how[200];
    mp_proc_describe(res, 0, how, sizeof(how));
    const char *err = mp_buf_cstr(&res->err);
    size_t el = strlen(err);
    const char *tail = el > 1500 ? err + el - 1500 : err;
    while (tail > err && ((unsigned char)*tail & 0xC0) == 0x80)
        tail--; /* start on a character */
    return error_value("the tool worker %s: %s", how, tail);
}

/* Fuzzing: the stand-in worker runs here; its progress and result go
 * through the same code as a real worker's. */
static void fake_run(struct mcp_call *c, const char *args_path, const char *prog_path,
                     json_t **value, bool *is_error)
{
    struct mp_proc_result res;
    mp_proc_result_init(&res);
    c->sess->srv->fake_worker(c->tool->name, args_path, prog_path, &res);
    FILE *pf = fopen(prog_path, "r");
    long off = 0;
    double last = 0;
    bool reported = false;
    pump_progress(c, pf, &off, &last, &reported);
    if (pf)
        fclose(pf);
    *value = worker_value(&res, is_error);
    mp_proc_result_fini(&res);
}

static void run_call(struct mcp_call *c)
{
    struct mcp_server *srv = c->sess->srv;
    unsigned long seq = atomic_fetch_add(&srv->seq, 1);
    char args_path[PATH_MAX + 64], prog_path[PATH_MAX + 64], env_prog[PATH_MAX + 96];
    snprintf(args_path, sizeof(args_path), "%s/call-%lu.json", srv->tmpdir, seq);
    snprintf(prog_path, sizeof(prog_path), "%s/call-%lu.progress", srv->tmpdir, seq);
    snprintf(env_prog, sizeof(env_prog), "MAGPIE_MCP_PROGRESS=%s", prog_path);
    json_t *value = NULL;
    bool is_error = true;
    if (atomic_load(&c->cancel)) { /* cancelled while it waited for a slot */
        mcp_sink_close(c->sink);
        return;
    }
    if (json_dump_file(c->args, args_path, JSON_COMPACT) != 0) {
        value = error_value("cannot write %s%s", args_path, "");
        goto done;
    }
    FILE *pf = fopen(prog_path, "w+");
    const char *argv[] = {srv->self_exe, "mcp", "--worker", c->tool->name, args_path, NULL};
    char env_warm[PATH_MAX + 32] = "MAGPIE_WARM_SOCKET";
    if ((c->tool->flags & MCP_WARM) && !srv->fake_worker && pool_start(srv))
        snprintf(env_warm, sizeof(env_warm), "MAGPIE_WARM_SOCKET=%s", srv->pool_sock);
    /* a tool never sees the server's token */
    const char *env[] = {env_prog, "MAGPIE_MCP_TOKEN", env_warm, NULL};
    struct mp_proc_opts po = {
        .env = env,
        .out_mode = MP_PROC_CAPTURE,
        .err_mode = MP_PROC_CAPTURE,
        .capture_max = (size_t)256 << 20,
        .grace_s = 2,
    };
    struct mp_proc *p = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    if (srv->fake_worker) {
        if (pf)
            fclose(pf);
        fake_run(c, args_path, prog_path, &value, &is_error);
        goto cleanup_files;
    }
    pthread_mutex_lock(&srv->reap_mu); /* so the reaper never takes a worker's status */
    int src = mp_proc_spawn(argv, &po, &p, &d);
    if (src == 0)
        worker_add(srv, mp_proc_pid(p));
    pthread_mutex_unlock(&srv->reap_mu);
    if (src != 0) {
        value = error_value("cannot start the tool worker: %s%s", d.msg, "");
        if (pf)
            fclose(pf);
        goto cleanup_files;
    }
    pid_t wpid = mp_proc_pid(p);
    long off = 0;
    double last = 0;
    bool reported = false;
    uint64_t t0 = mp_time_ns(), last_beat = t0;
    bool cancelled = false;
    for (;;) {
        int rc = mp_proc_poll(p, 200);
        pump_progress(c, pf, &off, &last, &reported);
        if (rc != 0)
            break;
        if (atomic_load(&c->cancel) || (c->modern && atomic_load(&c->sink->gone))) {
            cancelled = true;
            pid_t w = mp_proc_pid(p);
            if (c->tool->flags & MCP_GRACEFUL) {
                kill(w, SIGTERM); /* the tool stops what it started, then exits */
                for (int i = 0; i < 150 && mp_proc_poll(p, 200) == 0; i++)
                    ;
            }
            pid_t *tree = mp_calloc(MAX_TREE, sizeof(pid_t));
            size_t n = tree ? kill_tree(w, tree, MAX_TREE) : 0;
            struct mp_proc_result res;
            mp_proc_result_init(&res);
            mp_proc_wait(p, &res);
            mp_proc_result_fini(&res);
            if (tree) {
                reap_orphans(tree, n);
                free(tree);
            }
            mp_proc_free(p);
            p = NULL;
            break;
        }
        uint64_t now = mp_time_ns();
        if (!reported && now - last_beat > 5000000000ull) {
            /* a tool without progress of its own: a heartbeat */
            char msg[64];
            snprintf(msg, sizeof(msg), "running %s (%.0f s)", c->tool->name,
                     (double)(now - t0) / 1e9);
            double v = (double)(now - t0) / 1e9;
            last = v > last ? v : nextafter(last, INFINITY);
            send_progress(c, last, 0, msg);
            last_beat = now;
        }
    }
    if (pf)
        fclose(pf);
    if (cancelled) {
        worker_done(srv, wpid);
        unlink(args_path);
        unlink(prog_path);
        mcp_sink_close(c->sink);
        return;
    }
    struct mp_proc_result res;
    mp_proc_result_init(&res);
    mp_proc_wait(p, &res);
    mp_proc_free(p);
    worker_done(srv, wpid);
    value = worker_value(&res, &is_error);
    mp_proc_result_fini(&res);
cleanup_files:
    unlink(args_path);
    unlink(prog_path);
done:;
    json_t *resp = tool_result(c, value, is_error);
    json_decref(value);
    if (!atomic_load(&c->cancel))
        mcp_sink_emit(c->sink, resp, true);
    else
        mcp_sink_close(c->sink);
    json_decref(resp);
}

/* ---- slots and the wait queue (srv->mu) ---- */

static void *call_thread(void *arg);

static bool has_room(const struct mcp_server *srv, const struct mp_mcp_session *s)
{
    return srv->running < srv->opts.max_calls && s->running < srv->opts.max_calls_per_session;
}

static int launch(struct mcp_call *c)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&c->thread, &at, call_thread, c);
    pthread_attr_destroy(&at);
    return rc;
}

static void take_slot(struct mcp_call *c)
{
    c->slot = true;
    c->sess->srv->running++;
    c->sess->running++;
}

static void drop_slot(struct mcp_call *c)
{
    if (!c->slot)
        return;
    c->slot = false;
    c->sess->srv->running--;
    c->sess->running--;
}

/* Puts c in the wait queue, at its end or (a call that could not be started
 * after all) at its front. */
static void queue_push(struct mcp_server *srv, struct mcp_call *c, bool front)
{
    c->queued = true;
    if (front) {
        c->q_next = srv->q_head;
        srv->q_head = c;
        if (!srv->q_tail)
            srv->q_tail = c;
    } else {
        c->q_next = NULL;
        if (srv->q_tail)
            srv->q_tail->q_next = c;
        else
            srv->q_head = c;
        srv->q_tail = c;
    }
    srv->queued++;
}

static void queue_unlink(struct mcp_server *srv, struct mcp_call *c)
{
    struct mcp_call *prev = NULL;
    for (struct mcp_call *q = srv->q_head; q; prev = q, q = q->q_next) {
        if (q != c)
            continue;
        if (prev)
            prev->q_next = q->q_next;
        else
            srv->q_head = q->q_next;
        if (srv->q_tail == q)
            srv->q_tail = prev;
        q->q_next = NULL;
        q->queued = false;
        srv->queued--;
        return;
    }
}

/* Starts waiting calls while slots are free (FIFO; a call whose session is
 * at its own limit lets later ones pass). */
static void dispatch(struct mcp_server *srv)
{
    struct mcp_call *q = srv->q_head;
    while (q && srv->running < srv->opts.max_calls) {
        struct mcp_call *next = q->q_next;
        if (has_room(srv, q->sess)) {
            queue_unlink(srv, q);
            take_slot(q);
            if (launch(q) != 0) { /* no thread now: back to the front, try later */
                drop_slot(q);
                queue_push(srv, q, true);
                return;
            }
        }
        q = next;
    }
}

static void call_free(struct mcp_call *c)
{
    struct mp_mcp_session *s = c->sess;
    pthread_mutex_lock(&s->mu);
    for (struct mcp_call **pp = &s->calls; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    struct mcp_server *srv = s->srv;
    pthread_mutex_lock(&srv->mu);
    drop_slot(c);
    dispatch(srv);
    pthread_mutex_unlock(&srv->mu);
    json_decref(c->id);
    json_decref(c->progress_token);
    json_decref(c->args);
    mcp_sink_unref(c->sink);
    mcp_session_unref(s);
    free(c);
    pthread_mutex_lock(&srv->mu);
    srv->ncalls--;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
}

static void *call_thread(void *arg)
{
    struct mcp_call *c = arg;
    run_call(c);
    call_free(c);
    return NULL;
}

static void call_register(struct mcp_call *c)
{
    struct mcp_server *srv = c->sess->srv;
    pthread_mutex_lock(&srv->mu);
    srv->ncalls++;
    pthread_mutex_unlock(&srv->mu);
    pthread_mutex_lock(&c->sess->mu);
    if (c->sess->closed)
        atomic_store(&c->cancel, true);
    c->next = c->sess->calls;
    c->sess->calls = c;
    pthread_mutex_unlock(&c->sess->mu);
}

int mcp_call_start(struct mcp_call *c, char *why, size_t whylen)
{
    call_register(c);
    struct mcp_server *srv = c->sess->srv;
    const struct mp_mcp_opts *o = &srv->opts;
    pthread_mutex_lock(&srv->mu);
    if (has_room(srv, c->sess) && !srv->q_head) {
        take_slot(c);
        if (launch(c) == 0) {
            pthread_mutex_unlock(&srv->mu);
            return 0;
        }
        drop_slot(c);
    }
    if (srv->queued < o->max_queued) {
        queue_push(srv, c, false);
        dispatch(srv); /* a slot may be free for it (another session's call waits) */
        pthread_mutex_unlock(&srv->mu);
        return 0;
    }
    snprintf(why, whylen,
             "server busy: %d tool calls running (at most %d, %d per session) and %d waiting "
             "(at most %d); try again when one has finished",
             srv->running, o->max_calls, o->max_calls_per_session, srv->queued, o->max_queued);
    pthread_mutex_unlock(&srv->mu);
    call_free(c);
    return MP_ENOMEM;
}

void mcp_call_cancel(struct mcp_call *c)
{
    atomic_store(&c->cancel, true);
    struct mcp_server *srv = c->sess->srv;
    pthread_mutex_lock(&srv->mu);
    if (c->queued) {
        /* out of the queue; its thread sees the flag and ends at once (no
         * slot, no worker) */
        queue_unlink(srv, c);
        if (launch(c) != 0)
            queue_push(srv, c, true); /* left for dispatch, which starts it later */
    }
    pthread_mutex_unlock(&srv->mu);
}
