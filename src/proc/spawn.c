/* Spawning and supervising one child process.
 *
 * fork + execve rather than posix_spawn: we need chdir, a new process group,
 * default signal dispositions and an exact report of why exec failed, and
 * fork lets the child do all of that with async-signal-safe calls only.
 *
 * The parent never reaps the child before it has finished signalling it:
 * exit is detected with waitid(WNOWAIT) (or a pidfd becoming readable), so
 * the group id stays reserved by the zombie leader and kill(-pgid) can never
 * hit an unrelated group that reused the number. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <magpie/proc.h>

enum { STAGE_RUNNING = 0, STAGE_TERM_SENT, STAGE_KILL_SENT };

/* Without a pidfd the only way to notice exit while no pipe is open is to
 * look again; 10 ms keeps short commands quick without spinning. */
#define EXIT_POLL_MS 10
#define READ_CHUNK 65536

struct mp_proc {
    pid_t pid;
    int pidfd; /* -1 when the kernel has no pidfd_open */
    int fd[2]; /* read ends of the stdout / stderr pipes, -1 when closed or unused */
    struct mp_buf buf[2];
    bool trunc[2];
    uint64_t bytes[2];
    size_t cap_max;
    bool keep_group;
    uint64_t start_ns;
    uint64_t deadline_ns; /* 0 = no time limit */
    uint64_t grace_ns;
    uint64_t kill_at_ns; /* when SIGKILL follows SIGTERM, 0 = not scheduled */
    int stage;
    bool timed_out;
    bool leader_exited;
    uint64_t exit_ns;
    uint64_t drain_until_ns; /* after exit: how long to wait for EOF on the pipes */
    bool reaped;
    bool status_known; /* false when someone else reaped the child (SIGCHLD ignored) */
    int status;
};

/* What the child reports through the exec-error pipe. */
struct child_err {
    int stage; /* 1 chdir, 2 dup2, 3 execve, 4 setpgid */
    int err;
};

static uint64_t secs_to_ns(double s)
{
    if (s <= 0)
        return 0;
    if (s > 1e9)
        s = 1e9; /* ~31 years: effectively no limit, and no overflow */
    return (uint64_t)(s * 1e9);
}

/* Moves fd above 0..2 so that the child's dup2 onto 0, 1, 2 can never
 * overwrite another source descriptor (possible when our own stdio is
 * closed). Keeps O_CLOEXEC. */
static int fd_above_stdio(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int saved = errno;
    close(fd);
    errno = saved;
    return nfd;
}

/* Environment for the child: ours with the changes applied. The strings are
 * borrowed from environ and from the caller; only the array is allocated. */
static char **build_env(const char *const *changes)
{
    size_t n = 0, m = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    for (const char *const *c = changes; c && *c; c++)
        m++;
    char **env = mp_calloc(n + m + 1, sizeof(char *));
    if (!env)
        return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        env[k++] = *e;
    for (const char *const *c = changes; c && *c; c++) {
        const char *eq = strchr(*c, '=');
        size_t klen = eq ? (size_t)(eq - *c) : strlen(*c);
        size_t w = 0;
        for (size_t r = 0; r < k; r++) {
            bool same = strncmp(env[r], *c, klen) == 0 && env[r][klen] == '=';
            if (!same)
                env[w++] = env[r];
        }
        k = w;
        if (eq)
            env[k++] = (char *)*c; /* execve's prototype is not const-correct */
    }
    env[k] = NULL;
    return env;
}

static const char *env_path(char **env)
{
    for (char **e = env; *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            return *e + 5;
    return NULL;
}

static int open_target(enum mp_proc_out mode, const char *path, const char *what, int *fd,
                       struct mp_diag *d)
{
    *fd = -1;
    switch (mode) {
    case MP_PROC_DISCARD:
        *fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        break;
    case MP_PROC_FILE:
    case MP_PROC_APPEND:
        if (!path || !*path)
            return mp_diag_set(d, MP_EINVAL, "%s: file mode needs a path", what);
        *fd =
            open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (mode == MP_PROC_FILE ? O_TRUNC : O_APPEND),
                 0644);
        if (*fd < 0) {
            mp_diag_set_file(d, path);
            return mp_diag_set(d, MP_EIO, "cannot open %s file: %s", what, strerror(errno));
        }
        break;
    default:
        return 0;
    }
    if (*fd < 0)
        return mp_diag_set(d, MP_EIO, "cannot open /dev/null: %s", strerror(errno));
    *fd = fd_above_stdio(*fd);
    if (*fd < 0)
        return mp_diag_set(d, MP_EIO, "fcntl: %s", strerror(errno));
    return 0;
}

static int make_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    p[0] = fd_above_stdio(p[0]);
    p[1] = fd_above_stdio(p[1]);
    if (p[0] < 0 || p[1] < 0)
        return -1;
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* In the child: reports which step failed, with errno, and exits. */
static _Noreturn void child_fail(int errfd, int stage)
{
    struct child_err ce = {stage, errno};
    ssize_t w = write(errfd, &ce, sizeof(ce));
    (void)w;
    _exit(127);
}

static void child_dup(int src, int dst, int errfd)
{
    /* dup2 onto itself would keep O_CLOEXEC; clear the flag instead. */
    int r = src == dst ? fcntl(dst, F_SETFD, 0) : dup2(src, dst);
    if (r < 0)
        child_fail(errfd, 2);
}

/* Between fork and exec: async-signal-safe calls only. */
static _Noreturn void child_exec(const char *path, char *const *argv, char *const *env,
                                 const char *cwd, int in_fd, int out_fd, int err_fd,
                                 bool err_to_out, int errfd)
{
    if (setpgid(0, 0) != 0)
        child_fail(errfd, 4);
    /* A child should not inherit our ignored or blocked signals: a SIGPIPE
     * ignored by the CLI would otherwise change how the child dies. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    child_dup(in_fd, 0, errfd);
    if (out_fd >= 0)
        child_dup(out_fd, 1, errfd);
    if (err_to_out)
        child_dup(1, 2, errfd);
    else if (err_fd >= 0)
        child_dup(err_fd, 2, errfd);
    if (cwd && chdir(cwd) != 0)
        child_fail(errfd, 1);
    execve(path, argv, env);
    child_fail(errfd, 3);
}

static void signal_group(struct mp_proc *p, int sig)
{
    /* Only our own group, and only while the leader is unreaped. */
    if (!p->reaped && p->pid > 0)
        kill(-p->pid, sig);
}

int mp_proc_spawn(const char *const *argv, const struct mp_proc_opts *opts, struct mp_proc **out,
                  struct mp_diag *d)
{
    static const struct mp_proc_opts defaults = {0};
    int rc = 0;
    struct mp_proc *p = NULL;
    char **env = NULL;
    char exe[4096];
    int in_fd = -1, out_fd = -1, err_fd = -1, errp[2] = {-1, -1};
    int pipes[2][2] = {{-1, -1}, {-1, -1}};

    if (out)
        *out = NULL;
    if (!argv || !argv[0] || !argv[0][0] || !out)
        return mp_diag_set(d, MP_EINVAL, "empty command");
    if (!opts)
        opts = &defaults;
    if (opts->out_mode == MP_PROC_TO_STDOUT)
        return mp_diag_set(d, MP_EINVAL, "MP_PROC_TO_STDOUT is for stderr only");

    p = mp_calloc(1, sizeof(*p));
    env = build_env(opts->env);
    if (!p || !env) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory starting %s", argv[0]);
        goto out;
    }
    p->pid = -1;
    p->pidfd = -1;
    p->fd[0] = p->fd[1] = -1;
    p->cap_max = opts->capture_max ? opts->capture_max : MP_PROC_DEFAULT_CAPTURE_MAX;
    /* +1: mp_buf keeps room for its terminating NUL within max. */
    mp_buf_init(&p->buf[0], p->cap_max + 1);
    mp_buf_init(&p->buf[1], p->cap_max + 1);
    p->keep_group = opts->keep_group;
    p->grace_ns = secs_to_ns(opts->grace_s > 0 ? opts->grace_s : MP_PROC_DEFAULT_GRACE_S);

    rc = mp_proc_which_in(argv[0], env_path(env), exe, sizeof(exe));
    if (rc) {
        rc = mp_diag_set(d, MP_ENOTFOUND, "%s: command not found%s", argv[0],
                         strchr(argv[0], '/') ? " or not executable" : " on PATH");
        goto out;
    }
    if (opts->cwd && !mp_fs_is_dir(opts->cwd)) {
        mp_diag_set_file(d, opts->cwd);
        rc = mp_diag_set(d, MP_EIO, "working directory does not exist");
        goto out;
    }

    in_fd = fd_above_stdio(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (in_fd < 0) {
        rc = mp_diag_set(d, MP_EIO, "cannot open /dev/null: %s", strerror(errno));
        goto out;
    }
    if ((rc = open_target(opts->out_mode, opts->out_path, "stdout", &out_fd, d)) != 0)
        goto out;
    if (opts->err_mode != MP_PROC_TO_STDOUT &&
        (rc = open_target(opts->err_mode, opts->err_path, "stderr", &err_fd, d)) != 0)
        goto out;

    enum mp_proc_out modes[2] = {opts->out_mode, opts->err_mode};

    for (int i = 0; i < 2; i++) {
        if (modes[i] != MP_PROC_CAPTURE)
            continue;
        if (make_pipe(pipes[i]) != 0) {
            rc = mp_diag_set(d, MP_EIO, "pipe: %s", strerror(errno));
            goto out;
        }
    }
    if (pipes[0][1] >= 0)
        out_fd = pipes[0][1];
    if (pipes[1][1] >= 0)
        err_fd = pipes[1][1];
    if (make_pipe(errp) != 0) {
        rc = mp_diag_set(d, MP_EIO, "pipe: %s", strerror(errno));
        goto out;
    }

    p->start_ns = mp_time_ns();
    pid_t pid = fork();
    if (pid < 0) {
        rc = mp_diag_set(d, MP_ECHILD, "cannot start %s: fork: %s", argv[0], strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(exe, (char *const *)argv, env, opts->cwd, in_fd, out_fd, err_fd,
                   opts->err_mode == MP_PROC_TO_STDOUT, errp[1]);
    p->pid = pid;
    close_fd(&errp[1]);

    /* EOF on the error pipe means exec succeeded (the write end was
     * close-on-exec); a record means it failed and the child is gone. */
    struct child_err ce;
    ssize_t n;
    do
        n = read(errp[0], &ce, sizeof(ce));
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof(ce)) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        p->pid = -1;
        static const char *const what[] = {"", "chdir", "dup2", "exec", "setpgid"};
        const char *w = ce.stage >= 1 && ce.stage <= 4 ? what[ce.stage] : "start";
        if (ce.stage == 1)
            mp_diag_set_file(d, opts->cwd);
        rc = mp_diag_set(
            d, (ce.stage == 3 && (ce.err == ENOENT || ce.err == EACCES)) ? MP_ENOTFOUND : MP_ECHILD,
            "cannot start %s: %s: %s", argv[0], w, strerror(ce.err));
        goto out;
    }

#ifdef SYS_pidfd_open
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (p->pidfd >= 0)
        fcntl(p->pidfd, F_SETFD, FD_CLOEXEC);
#endif
    for (int i = 0; i < 2; i++) {
        if (pipes[i][0] >= 0) {
            p->fd[i] = pipes[i][0];
            pipes[i][0] = -1;
            fcntl(p->fd[i], F_SETFL, fcntl(p->fd[i], F_GETFL) | O_NONBLOCK);
        }
    }
    p->deadline_ns = opts->timeout_s > 0 ? p->start_ns + secs_to_ns(opts->timeout_s) : 0;
    *out = p;
    p = NULL;

out:
    close_fd(&in_fd);
    if (out_fd != pipes[0][1])
        close_fd(&out_fd);
    if (err_fd != pipes[1][1])
        close_fd(&err_fd);
    for (int i = 0; i < 2; i++) {
        close_fd(&pipes[i][0]);
        close_fd(&pipes[i][1]);
    }
    close_fd(&errp[0]);
    close_fd(&errp[1]);
    free(env);
    mp_proc_free(p);
    return rc;
}

pid_t mp_proc_pid(const struct mp_proc *p)
{
    return p ? p->pid : -1;
}

/* Reads what one pipe has now. Keeps the first cap_max bytes and drops the
 * rest, so a chatty child can never block on a full pipe. */
static void drain_fd(struct mp_proc *p, int i)
{
    char chunk[READ_CHUNK];
    for (;;) {
        ssize_t n = read(p->fd[i], chunk, sizeof(chunk));
        if (n > 0) {
            p->bytes[i] += (uint64_t)n;
            size_t room = p->cap_max - p->buf[i].len;
            size_t keep = (size_t)n < room ? (size_t)n : room;
            if (keep && mp_buf_append(&p->buf[i], chunk, keep) != 0)
                keep = 0;
            if (keep < (size_t)n)
                p->trunc[i] = true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close_fd(&p->fd[i]); /* EOF or a real error: nothing more will come */
        return;
    }
}

static bool pipes_open(const struct mp_proc *p)
{
    return p->fd[0] >= 0 || p->fd[1] >= 0;
}

/* Advances the state machine without waiting. Returns true once reaped. */
static bool step(struct mp_proc *p)
{
    if (p->reaped)
        return true;
    uint64_t now = mp_time_ns();
    if (!p->leader_exited) {
        if (p->deadline_ns && now >= p->deadline_ns && p->stage == STAGE_RUNNING) {
            p->timed_out = true;
            signal_group(p, SIGTERM);
            p->stage = STAGE_TERM_SENT;
            p->kill_at_ns = now + p->grace_ns;
        }
        if (p->stage == STAGE_TERM_SENT && now >= p->kill_at_ns) {
            signal_group(p, SIGKILL);
            p->stage = STAGE_KILL_SENT;
        }
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        int r = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if ((r == 0 && si.si_pid == p->pid) || (r < 0 && errno == ECHILD)) {
            p->leader_exited = true;
            p->exit_ns = now;
            /* Still unreaped, so the group id is still ours to signal. */
            if (!p->keep_group)
                signal_group(p, SIGKILL);
            p->drain_until_ns = now + p->grace_ns;
            close_fd(&p->pidfd);
        }
    }
    if (p->leader_exited && (!pipes_open(p) || now >= p->drain_until_ns)) {
        /* A process that left our group (setsid) may hold a pipe forever;
         * after the grace period we stop listening to it. */
        close_fd(&p->fd[0]);
        close_fd(&p->fd[1]);
        int st = 0;
        pid_t r;
        do
            r = waitpid(p->pid, &st, 0);
        while (r < 0 && errno == EINTR);
        p->status_known = r == p->pid;
        p->status = st;
        p->reaped = true;
    }
    return p->reaped;
}

/* Milliseconds until the next thing step() must do by itself. */
static int next_event_ms(const struct mp_proc *p, int timeout_ms)
{
    uint64_t now = mp_time_ns(), at = 0;
    if (p->leader_exited)
        at = p->drain_until_ns;
    else if (p->stage == STAGE_TERM_SENT)
        at = p->kill_at_ns;
    else if (p->stage == STAGE_RUNNING && p->deadline_ns)
        at = p->deadline_ns;
    int ms = timeout_ms;
    if (at) {
        uint64_t left = at > now ? (at - now + 999999) / 1000000 : 0;
        if (left > 60000)
            left = 60000;
        if (ms < 0 || (int)left < ms)
            ms = (int)left;
    }
    if (!p->leader_exited && p->pidfd < 0 && (ms < 0 || ms > EXIT_POLL_MS))
        ms = EXIT_POLL_MS;
    return ms;
}

int mp_proc_poll(struct mp_proc *p, int timeout_ms)
{
    if (!p || p->pid <= 0)
        return MP_EINVAL;
    if (step(p))
        return 1;
    struct pollfd pf[3];
    int idx[3];
    nfds_t n = 0;
    for (int i = 0; i < 2; i++) {
        if (p->fd[i] >= 0) {
            pf[n] = (struct pollfd){.fd = p->fd[i], .events = POLLIN};
            idx[n++] = i;
        }
    }
    if (p->pidfd >= 0 && !p->leader_exited) {
        pf[n] = (struct pollfd){.fd = p->pidfd, .events = POLLIN};
        idx[n++] = -1;
    }
    int ms = next_event_ms(p, timeout_ms);
    int r = poll(pf, n, ms);
    if (r < 0 && errno != EINTR)
        return MP_EIO;
    for (nfds_t k = 0; r > 0 && k < n; k++)
        if (idx[k] >= 0 && (pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
            drain_fd(p, idx[k]);
    return step(p) ? 1 : 0;
}

void mp_proc_terminate(struct mp_proc *p)
{
    if (!p || p->pid <= 0 || p->reaped || p->leader_exited || p->stage != STAGE_RUNNING)
        return;
    signal_group(p, SIGTERM);
    p->stage = STAGE_TERM_SENT;
    p->kill_at_ns = mp_time_ns() + p->grace_ns;
}

void mp_proc_result_init(struct mp_proc_result *res)
{
    memset(res, 0, sizeof(*res));
    res->exit_code = -1;
    mp_buf_init(&res->out, 0);
    mp_buf_init(&res->err, 0);
}

void mp_proc_result_fini(struct mp_proc_result *res)
{
    if (!res)
        return;
    mp_buf_fini(&res->out);
    mp_buf_fini(&res->err);
}

int mp_proc_wait(struct mp_proc *p, struct mp_proc_result *res)
{
    if (!res)
        return MP_EINVAL;
    /* res is overwritten, never freed: a caller's uninitialised struct is
     * fine here (a result still holding buffers would leak them, which
     * LeakSanitizer reports, rather than free garbage). */
    mp_proc_result_init(res);
    if (!p || p->pid <= 0)
        return MP_EINVAL;
    int r;
    while ((r = mp_proc_poll(p, -1)) == 0)
        ;
    if (r < 0)
        return r;
    /* Status unknown leaves exited = false, signal = 0: "ended in an
     * unknown way". */
    if (p->status_known && WIFEXITED(p->status)) {
        res->exited = true;
        res->exit_code = WEXITSTATUS(p->status);
    } else if (p->status_known && WIFSIGNALED(p->status)) {
        res->signal = WTERMSIG(p->status);
    }
    res->timed_out = p->timed_out;
    res->duration_ns = p->exit_ns - p->start_ns;
    /* Hand the buffers over; the handle keeps empty ones. */
    res->out = p->buf[0];
    res->err = p->buf[1];
    mp_buf_init(&p->buf[0], p->cap_max + 1);
    mp_buf_init(&p->buf[1], p->cap_max + 1);
    res->out_truncated = p->trunc[0];
    res->err_truncated = p->trunc[1];
    res->out_bytes = p->bytes[0];
    res->err_bytes = p->bytes[1];
    return 0;
}

void mp_proc_free(struct mp_proc *p)
{
    if (!p)
        return;
    if (p->pid > 0 && !p->reaped) {
        mp_proc_terminate(p);
        while (mp_proc_poll(p, -1) == 0)
            ;
    }
    close_fd(&p->fd[0]);
    close_fd(&p->fd[1]);
    close_fd(&p->pidfd);
    mp_buf_fini(&p->buf[0]);
    mp_buf_fini(&p->buf[1]);
    free(p);
}

int mp_proc_run(const char *const *argv, const struct mp_proc_opts *opts,
                struct mp_proc_result *res, struct mp_diag *d)
{
    struct mp_proc *p = NULL;
    mp_proc_result_init(res);
    int rc = mp_proc_spawn(argv, opts, &p, d);
    if (rc)
        goto out;
    rc = mp_proc_wait(p, res);
out:
    mp_proc_free(p);
    return rc;
}

bool mp_proc_result_ok(const struct mp_proc_result *res)
{
    return res && res->exited && res->exit_code == 0 && !res->timed_out;
}

void mp_proc_describe(const struct mp_proc_result *res, double timeout_s, char *buf, size_t len)
{
    char how[128];
    if (res->exited)
        snprintf(how, sizeof(how), "exited with status %d", res->exit_code);
    else if (res->signal)
        snprintf(how, sizeof(how), "killed by signal %d (%s)", res->signal, strsignal(res->signal));
    else
        snprintf(how, sizeof(how), "ended in an unknown way");
    if (timeout_s <= 0)
        timeout_s = (double)res->duration_ns / 1e9;
    if (res->timed_out)
        snprintf(buf, len, "timed out after %.1f s (%s)", timeout_s, how);
    else
        snprintf(buf, len, "%s", how);
}
