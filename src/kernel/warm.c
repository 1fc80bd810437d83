/* Warm runners kept between evaluations (issue 33): a pool process owns
 * Python runners and harness children started in their loop mode (`-` in
 * place of the job file) and hands each job to an idle one of the same key
 * (the problem: the child's command, its back-end and the job's reference
 * files), so consecutive analyze / compare calls of an MCP session skip the
 * process start, the imports, the device set-up and the reference's runs.
 *
 * The pool is `magpie mcp --worker @warm-pool SOCKET`, started by the MCP
 * server (src/mcp/call.c); it is single-threaded: one poll loop over the
 * server's control pipe (fd 3: its end closing ends the pool and every
 * runner), the listening socket (fd 4, made by the server), the clients
 * (a tool call's worker, one job per connection) and the runners' reply
 * pipes. Bounds: at most MAGPIE_WARM_RUNNERS runners (default 2; 0 turns
 * the pool off), each killed after MAGPIE_WARM_IDLE_S idle (default 120)
 * and after a job that leaves it over MAGPIE_WARM_MAX_RSS_MB resident
 * (default 32768); the pool itself ends after MAGPIE_WARM_POOL_EXIT_S with
 * no runner and no client (default 0: only by its control pipe; `magpie
 * warm-pool` sets it); a client without a whole request line after
 * MAGPIE_WARM_REQUEST_S (30) is dropped; a job not done by its limit kills
 * its runner; a client that goes away mid-job kills its runner; a runner
 * that dies, writes anything but the protocol's lines, or says `retire` (a
 * job in which a kernel failed: its state is not trusted) is dropped, and
 * the next job gets a fresh one. Every runner is in a process group of its own with
 * SIGKILL as its parent-death signal.
 *
 * Protocol. Client -> pool, one line of JSON: {key, argv[], cwd, job, log,
 * limit_s}; pool -> client, one line: {ok, warm, served, why, fallback}
 * (fallback: no runner could be had, run the job cold). Pool -> runner
 * (stdin), one line of JSON: {seq, job, log, cwd}; runner -> pool (fd 3):
 * "start SEQ" once it has read the job, "done SEQ keep|retire" when the
 * job's result file is written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel_int.h"

#define W_MAX_CLIENTS 64
#define W_MAX_RUNNERS 16
#define W_LINE_MAX ((size_t)64 << 10)

static double mono_s(void)
{
    return (double)mp_time_ns() / 1e9;
}

/* ---- client (the pipeline, in a tool call's worker) ---- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int kern_warm_run(const char *sock, const char *key, const char *const *argv, const char *cwd,
                  const char *job, const char *log, double limit_s, bool *warm, char *why,
                  size_t whylen)
{
    *warm = false;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!sock || strlen(sock) >= sizeof(sa.sun_path))
        return -1;
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    json_t *req = json_object();
    json_object_set_new(req, "key", json_string(key));
    json_t *av = json_array();
    for (int i = 0; argv[i]; i++)
        json_array_append_new(av, json_string(argv[i]));
    json_object_set_new(req, "argv", av);
    char here[PATH_MAX];
    json_object_set_new(req, "cwd",
                        json_string(cwd && realpath(cwd, here)   ? here
                                    : getcwd(here, sizeof(here)) ? here
                                                                 : "/"));
    json_object_set_new(req, "job", json_string(job));
    json_object_set_new(req, "log", json_string(log));
    json_object_set_new(req, "limit_s", json_real(limit_s));
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    int rc = text ? write_all(fd, text, strlen(text)) : -1;
    rc = rc ? rc : write_all(fd, "\n", 1);
    free(text);
    if (rc) {
        close(fd);
        return -1;
    }
    /* the pool enforces limit_s on the runner; this bound is for a wedged
     * pool: never wait forever */
    double deadline = mono_s() + limit_s + 30;
    char buf[4096];
    size_t len = 0;
    for (;;) {
        double left = deadline - mono_s();
        if (left <= 0) {
            close(fd); /* the pool kills the runner of a client that left */
            snprintf(why, whylen, "the warm runner pool did not answer in %.0f s", limit_s + 30);
            return 1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, (int)fmin(left * 1000, 1000));
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        if (memchr(buf, '\n', len) || len == sizeof(buf) - 1)
            break;
    }
    close(fd);
    buf[len] = 0;
    json_t *rep = json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
    if (!json_is_object(rep)) {
        json_decref(rep);
        snprintf(why, whylen, "the warm runner pool gave no answer");
        return 1;
    }
    const char *w = json_string_value(json_object_get(rep, "why"));
    bool ok = json_is_true(json_object_get(rep, "ok"));
    bool fallback = json_is_true(json_object_get(rep, "fallback"));
    *warm = json_is_true(json_object_get(rep, "warm"));
    if (!ok)
        snprintf(why, whylen, "%s", w ? w : "the warm runner failed");
    json_decref(rep);
    return ok ? 0 : fallback ? -1 : 1;
}

/* ---- the pool ---- */

struct wrunner {
    pid_t pid;
    int in_fd, rep_fd;
    char key[1024];
    double idle_since;
    int served;
    int client; /* index of the client whose job runs, -1 idle */
    bool started, reaped;
    int status; /* its wait status once reaped */
    unsigned long long seq;
    double deadline;
    char buf[512];
    size_t blen;
};

struct wclient {
    int fd;
    char *buf;
    size_t len;
    json_t *req;
    int runner;
    bool retried;
    double since; /* accepted at (mono_s) */
};

struct wpool {
    int max_runners;
    double idle_s;
    double max_rss;
    double request_s; /* a client with no whole request line by then is dropped */
    struct wrunner r[W_MAX_RUNNERS];
    int nr;
    struct wclient c[W_MAX_CLIENTS];
    int nc;
    unsigned long long seq;
};

static void reply(struct wpool *p, int ci, bool ok, bool warm, int served, bool fallback,
                  const char *why)
{
    struct wclient *c = &p->c[ci];
    json_t *o = json_object();
    json_object_set_new(o, "ok", json_boolean(ok));
    json_object_set_new(o, "warm", json_boolean(warm));
    json_object_set_new(o, "served", json_integer(served));
    if (fallback)
        json_object_set_new(o, "fallback", json_true());
    if (why)
        json_object_set_new(o, "why", json_string(why));
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (t) {
        (void)write_all(c->fd, t, strlen(t));
        (void)write_all(c->fd, "\n", 1);
        free(t);
    }
}

static void client_drop(struct wpool *p, int ci)
{
    struct wclient *c = &p->c[ci];
    close(c->fd);
    free(c->buf);
    json_decref(c->req);
    for (int i = 0; i < p->nr; i++) /* the moved client's runner follows it */
        if (p->r[i].client == p->nc - 1)
            p->r[i].client = ci;
    p->c[ci] = p->c[--p->nc];
}

static void runner_kill(struct wpool *p, int ri)
{
    struct wrunner *r = &p->r[ri];
    if (!r->reaped) {
        kill(-r->pid, SIGKILL);
        kill(r->pid, SIGKILL);
        /* SIGKILLed: it goes within moments (unless stuck in the driver;
         * then the sweep in the loop reaps it later) */
        for (int i = 0; i < 200; i++) {
            pid_t w = waitpid(r->pid, NULL, WNOHANG);
            if (w == r->pid || (w < 0 && errno == ECHILD))
                break;
            struct timespec ts = {0, 5000000L};
            nanosleep(&ts, NULL);
        }
    }
    close(r->in_fd);
    close(r->rep_fd);
    p->r[ri] = p->r[--p->nr];
    for (int i = 0; i < p->nc; i++) /* the moved runner's client follows it */
        if (p->c[i].runner == p->nr)
            p->c[i].runner = ri;
}

/* a runner's resident bytes (0 when unknown) */
static double rss_bytes(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "r");
    long long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lld %lld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return (double)res * (double)sysconf(_SC_PAGESIZE);
}

static int runner_spawn(struct wpool *p, const char *key, json_t *argv_j)
{
    size_t n = json_array_size(argv_j);
    if (n == 0 || n > 16 || p->nr >= W_MAX_RUNNERS)
        return -1;
    const char *argv[17];
    for (size_t i = 0; i < n; i++) {
        argv[i] = json_string_value(json_array_get(argv_j, i));
        if (!argv[i])
            return -1;
    }
    argv[n] = NULL;
    int in[2], rep[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(rep, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != me)
            _exit(127);
        int dn = open("/dev/null", O_RDWR);
        int a = fcntl(in[0], F_DUPFD, 10), b = fcntl(rep[1], F_DUPFD, 10);
        dup2(a, 0);
        dup2(b, 3);
        if (dn >= 0) {
            dup2(dn, 1);
            dup2(dn, 2);
        }
        for (int fd = 4; fd < 1024; fd++)
            close(fd);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(rep[1]);
    if (pid < 0) {
        close(in[1]);
        close(rep[0]);
        return -1;
    }
    struct wrunner *r = &p->r[p->nr];
    memset(r, 0, sizeof(*r));
    r->pid = pid;
    r->in_fd = in[1];
    r->rep_fd = rep[0];
    snprintf(r->key, sizeof(r->key), "%s", key);
    r->client = -1;
    r->idle_since = mono_s();
    return p->nr++;
}

/* hands client ci's job to runner ri */
static int runner_send(struct wpool *p, int ri, int ci)
{
    struct wrunner *r = &p->r[ri];
    struct wclient *c = &p->c[ci];
    json_t *j = json_object();
    r->seq = ++p->seq ^ ((unsigned long long)mp_time_ns() << 20);
    char seq[32];
    snprintf(seq, sizeof(seq), "%llx", r->seq);
    json_object_set_new(j, "seq", json_string(seq));
    json_object_set(j, "job", json_object_get(c->req, "job"));
    json_object_set(j, "log", json_object_get(c->req, "log"));
    json_object_set(j, "cwd", json_object_get(c->req, "cwd"));
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    int rc = t ? write_all(r->in_fd, t, strlen(t)) : -1;
    rc = rc ? rc : write_all(r->in_fd, "\n", 1);
    free(t);
    if (rc)
        return -1;
    double lim = json_number_value(json_object_get(c->req, "limit_s"));
    r->deadline = mono_s() + (lim >= 1 && lim < 1e6 ? lim : 3600);
    r->client = ci;
    r->started = false;
    r->blen = 0;
    c->runner = ri;
    return 0;
}

/* an idle runner for client ci: one of its key, else a fresh one (an idle
 * runner of another key makes room when the pool is full); -1: none */
static int runner_for(struct wpool *p, int ci, bool *warm)
{
    struct wclient *c = &p->c[ci];
    const char *key = json_string_value(json_object_get(c->req, "key"));
    *warm = false;
    for (int i = 0; i < p->nr; i++)
        if (p->r[i].client < 0 && strcmp(p->r[i].key, key) == 0) {
            *warm = true;
            return i;
        }
    if (p->nr >= p->max_runners) {
        int lru = -1;
        for (int i = 0; i < p->nr; i++)
            if (p->r[i].client < 0 && (lru < 0 || p->r[i].idle_since < p->r[lru].idle_since))
                lru = i;
        if (lru < 0)
            return -1;
        runner_kill(p, lru);
    }
    return runner_spawn(p, key, json_object_get(c->req, "argv"));
}

static void dispatch(struct wpool *p, int ci)
{
    struct wclient *c = &p->c[ci];
    const char *key = json_string_value(json_object_get(c->req, "key"));
    if (!key || !json_is_array(json_object_get(c->req, "argv")) ||
        !json_is_string(json_object_get(c->req, "job")) ||
        !json_is_string(json_object_get(c->req, "log")) ||
        !json_is_string(json_object_get(c->req, "cwd"))) {
        reply(p, ci, false, false, 0, true, "bad request to the warm runner pool");
        client_drop(p, ci);
        return;
    }
    bool warm;
    int ri = runner_for(p, ci, &warm);
    if (ri < 0) {
        reply(p, ci, false, false, 0, true, "no warm runner free");
        client_drop(p, ci);
        return;
    }
    if (runner_send(p, ri, ci) != 0) { /* it died while idle */
        runner_kill(p, ri);
        ri = runner_spawn(p, key, json_object_get(c->req, "argv"));
        if (ri < 0 || runner_send(p, ri, ci) != 0) {
            if (ri >= 0)
                runner_kill(p, ri);
            reply(p, ci, false, false, 0, true, "cannot start a warm runner");
            client_drop(p, ci);
        }
    }
}

/* The runner of client ci failed: before it took the job (it died idle, or
 * was killed between calls) the job goes to a fresh runner once; after,
 * the client is told why. */
static void runner_failed(struct wpool *p, int ri, const char *why)
{
    struct wrunner *r = &p->r[ri];
    int ci = r->client;
    bool before = !r->started;
    runner_kill(p, ri);
    if (ci < 0)
        return;
    struct wclient *c = &p->c[ci];
    c->runner = -1;
    if (before && !c->retried) {
        c->retried = true;
        dispatch(p, ci);
        return;
    }
    reply(p, ci, false, false, 0, before, why);
    client_drop(p, ci);
}

/* one line from runner ri */
static void runner_line(struct wpool *p, int ri, const char *line)
{
    struct wrunner *r = &p->r[ri];
    char seq[32];
    snprintf(seq, sizeof(seq), "%llx", r->seq);
    size_t sl = strlen(seq);
    if (r->client >= 0 && !r->started && !strncmp(line, "start ", 6) && !strcmp(line + 6, seq)) {
        r->started = true;
        return;
    }
    if (r->client >= 0 && r->started && !strncmp(line, "done ", 5) && !strncmp(line + 5, seq, sl) &&
        line[5 + sl] == ' ') {
        const char *verdict = line + 6 + sl;
        bool keep = strcmp(verdict, "keep") == 0;
        if (!keep && strcmp(verdict, "retire") != 0)
            goto garbage;
        int ci = r->client;
        bool warm = r->served > 0;
        r->served++;
        reply(p, ci, true, warm, r->served - 1, false, NULL);
        client_drop(p, ci);
        r = &p->r[ri];
        r->client = -1;
        r->idle_since = mono_s();
        if (!keep || (p->max_rss > 0 && rss_bytes(r->pid) > p->max_rss))
            runner_kill(p, ri);
        return;
    }
garbage:
    runner_failed(p, ri, "the warm runner wrote an unexpected reply; it was discarded");
}

/* reads what runner ri wrote; false when it was dropped */
static void runner_read(struct wpool *p, int ri)
{
    struct wrunner *r = &p->r[ri];
    ssize_t n = read(r->rep_fd, r->buf + r->blen, sizeof(r->buf) - 1 - r->blen);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        int st = r->status;
        char why[160] = "the warm runner exited";
        /* its pipe closes a moment before its status is there */
        for (int i = 0; i < 100 && !r->reaped; i++) {
            pid_t w = waitpid(r->pid, &st, WNOHANG);
            if (w == r->pid)
                r->reaped = true;
            else if (w < 0)
                break;
            else {
                struct timespec ts = {0, 2000000L};
                nanosleep(&ts, NULL);
            }
        }
        if (r->reaped) {
            if (WIFSIGNALED(st))
                snprintf(why, sizeof(why), "the warm runner was killed by signal %d", WTERMSIG(st));
            else if (WIFEXITED(st))
                snprintf(why, sizeof(why), "the warm runner exited with status %d",
                         WEXITSTATUS(st));
        }
        runner_failed(p, ri, why);
        return;
    }
    r->blen += (size_t)n;
    for (;;) {
        char *nl = memchr(r->buf, '\n', r->blen);
        if (!nl) {
            if (r->blen >= sizeof(r->buf) - 1)
                runner_failed(p, ri, "the warm runner wrote an unexpected reply; it was discarded");
            return;
        }
        *nl = 0;
        char line[512];
        snprintf(line, sizeof(line), "%s", r->buf);
        size_t used = (size_t)(nl - r->buf) + 1;
        memmove(r->buf, r->buf + used, r->blen - used);
        r->blen -= used;
        int before = p->nr;
        pid_t pid = r->pid;
        runner_line(p, ri, line);
        if (p->nr != before || p->r[ri].pid != pid)
            return; /* dropped */
    }
}

static void client_read(struct wpool *p, int ci)
{
    struct wclient *c = &p->c[ci];
    if (c->req) { /* a job in flight: anything but more bytes is the client leaving */
        char b[256];
        ssize_t n = read(c->fd, b, sizeof(b));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
            if (c->runner >= 0)
                runner_kill(p, c->runner);
            client_drop(p, ci);
        }
        return;
    }
    if (!c->buf)
        c->buf = malloc(W_LINE_MAX);
    ssize_t n = c->buf ? read(c->fd, c->buf + c->len, W_LINE_MAX - 1 - c->len) : -1;
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        client_drop(p, ci);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = 0;
    char *nl = memchr(c->buf, '\n', c->len);
    if (!nl) {
        if (c->len >= W_LINE_MAX - 1)
            client_drop(p, ci);
        return;
    }
    *nl = 0;
    c->req = json_loads(c->buf, 0, NULL);
    if (!json_is_object(c->req)) {
        client_drop(p, ci);
        return;
    }
    dispatch(p, ci);
}

static void reap_all(struct wpool *p)
{
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0)
        for (int i = 0; i < p->nr; i++)
            if (p->r[i].pid == w) {
                p->r[i].reaped = true;
                p->r[i].status = st;
            }
}

static double env_num(const char *name, double def)
{
    const char *v = getenv(name);
    char *end;
    double x = v && *v ? strtod(v, &end) : def;
    return v && *v && (*end || !(x >= 0)) ? def : x;
}

int mp_kernel_warm_pool_main(int ctl_fd, int listen_fd)
{
    static struct wpool pool;
    struct wpool *p = &pool;
    p->max_runners = (int)env_num("MAGPIE_WARM_RUNNERS", 2);
    if (p->max_runners > W_MAX_RUNNERS)
        p->max_runners = W_MAX_RUNNERS;
    p->idle_s = env_num("MAGPIE_WARM_IDLE_S", 120);
    p->request_s = env_num("MAGPIE_WARM_REQUEST_S", 30);
    p->max_rss = env_num("MAGPIE_WARM_MAX_RSS_MB", 32768) * 1048576.0;
    double exit_s = env_num("MAGPIE_WARM_POOL_EXIT_S", 0), empty_since = mono_s();
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    struct pollfd pf[2 + W_MAX_CLIENTS + W_MAX_RUNNERS];
    for (;;) {
        int n = 0;
        pf[n++] = (struct pollfd){.fd = ctl_fd, .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = p->nc < W_MAX_CLIENTS ? listen_fd : -1, .events = POLLIN};
        int nc = p->nc, nr = p->nr;
        for (int i = 0; i < nc; i++)
            pf[n++] = (struct pollfd){.fd = p->c[i].fd, .events = POLLIN};
        for (int i = 0; i < nr; i++)
            pf[n++] = (struct pollfd){.fd = p->r[i].rep_fd, .events = POLLIN};
        double now = mono_s(), next = now + 1;
        for (int i = 0; i < nr; i++)
            next =
                fmin(next, p->r[i].client >= 0 ? p->r[i].deadline : p->r[i].idle_since + p->idle_s);
        int ms = (int)fmax(0, fmin(1000, (next - now) * 1000 + 1));
        int pr = poll(pf, (nfds_t)n, ms);
        if (pr < 0 && errno != EINTR)
            break;
        reap_all(p);
        if (pr > 0 && pf[0].revents) {
            char b[64];
            ssize_t r = read(ctl_fd, b, sizeof(b));
            if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
                break; /* the server is gone or closing */
        }
        /* runners first (by pid: indices move as entries are dropped) */
        pid_t ready[W_MAX_RUNNERS];
        int nready = 0;
        for (int i = 0; pr > 0 && i < nr; i++)
            if (pf[2 + nc + i].revents)
                ready[nready++] = p->r[i].pid;
        for (int k = 0; k < nready; k++)
            for (int i = 0; i < p->nr; i++)
                if (p->r[i].pid == ready[k]) {
                    runner_read(p, i);
                    break;
                }
        int cfd[W_MAX_CLIENTS];
        int ncr = 0;
        for (int i = 0; pr > 0 && i < nc; i++)
            if (pf[2 + i].revents)
                cfd[ncr++] = p->c[i].fd;
        for (int k = 0; k < ncr; k++)
            for (int i = 0; i < p->nc; i++)
                if (p->c[i].fd == cfd[k]) {
                    client_read(p, i);
                    break;
                }
        if (pr > 0 && pf[1].revents && p->nc < W_MAX_CLIENTS) {
            int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                p->c[p->nc++] = (struct wclient){.fd = fd, .runner = -1, .since = mono_s()};
        }
        now = mono_s();
        for (int i = p->nr - 1; i >= 0; i--) {
            struct wrunner *r = &p->r[i];
            if (r->client >= 0 && now > r->deadline) {
                char why[128];
                snprintf(why, sizeof(why), "the warm runner did not finish the job in time");
                r->started = true; /* no second try of a job that hung */
                runner_failed(p, i, why);
            } else if (r->client < 0 && now - r->idle_since > p->idle_s) {
                runner_kill(p, i);
            }
        }
        /* a client that has not sent its request line in time (silent, or
         * dribbling bytes) gives its slot back: W_MAX_CLIENTS of them would
         * otherwise stop the pool accepting anyone */
        for (int i = p->nc - 1; i >= 0; i--)
            if (!p->c[i].req && now - p->c[i].since > p->request_s)
                client_drop(p, i);
        if (p->nr > 0 || p->nc > 0)
            empty_since = now;
        else if (exit_s > 0 && now - empty_since > exit_s)
            break;
    }
    while (p->nr > 0)
        runner_kill(p, p->nr - 1);
    while (p->nc > 0)
        client_drop(p, p->nc - 1);
    reap_all(p);
    return 0;
}
