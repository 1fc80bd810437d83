/* auto_clone_repos: the upstream repositories Magpie's kernel finder clones
 * (shallow, into ~/.cache/magpie/repos/<name>), which kinds of kernel need
 * which, and a bounded `git clone --depth 1`: the clone runs in its own
 * process group with git's prompts off and is killed when it outlives its
 * time limit, so a missing network costs at most that limit, never a hang.
 * A partial clone is removed; the repo appears under its final name only
 * once complete. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <magpie/sources.h>

static const struct {
    const char *name, *url;
} upstreams[] = {
    {"triton", "https://github.com/triton-lang/triton.git"},
    {"rocm-libraries", "https://github.com/ROCm/rocm-libraries.git"},
    {"vllm", "https://github.com/vllm-project/vllm.git"},
    {"pytorch", "https://github.com/pytorch/pytorch.git"},
    {"rocm-systems", "https://github.com/ROCm/rocm-systems.git"},
    {"aiter", "https://github.com/ROCm/aiter.git"},
    {"sglang", "https://github.com/sgl-project/sglang.git"},
    {"flashinfer", "https://github.com/flashinfer-ai/flashinfer.git"},
    {"flash-attention", "https://github.com/Dao-AILab/flash-attention.git"},
};

const char *mp_src_upstream_url(const char *name, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof(upstreams) / sizeof(upstreams[0]); i++) {
        if (strcmp(upstreams[i].name, name) != 0)
            continue;
        /* MAGPIE_REPOS_URL_BASE replaces https://github.com/<org>/ (a mirror,
         * or file:// repos in tests) */
        const char *base = getenv("MAGPIE_REPOS_URL_BASE");
        if (base && *base) {
            snprintf(buf, len, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", name);
            return buf;
        }
        snprintf(buf, len, "%s", upstreams[i].url);
        return buf;
    }
    return NULL;
}

int mp_src_repos_for_kind(const char *kind, const char *name, const char **out, int max)
{
    int n = 0;
#define ADD(r)                                                                                     \
    do {                                                                                           \
        if (n < max)                                                                               \
            out[n++] = (r);                                                                        \
    } while (0)
    if (!strcmp(kind, "triton_jit"))
        ADD("triton");
    else if (!strcmp(kind, "ck_tile") || !strcmp(kind, "tensile_gemm") || !strcmp(kind, "hip_cpp"))
        ADD("rocm-libraries");
    else if (!strcmp(kind, "aten_native") || !strcmp(kind, "inductor"))
        ADD("pytorch");
    else if (!strcmp(kind, "aiter"))
        ADD("aiter");
    if (name && strstr(name, "vllm"))
        ADD("vllm");
#undef ADD
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void rm_rf(const char *path)
{
    pid_t pid;
    char *argv[] = {(char *)"rm", (char *)"-rf", (char *)path, NULL};
    if (posix_spawnp(&pid, "rm", NULL, NULL, argv, environ) == 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
}

int mp_src_clone(const char *url, const char *dest, double timeout_s, struct mp_diag *d)
{
    if (mp_fs_is_dir(dest))
        return 0;
    char *parent = mp_strdup(dest);
    if (!parent)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    char *sl = strrchr(parent, '/');
    if (sl && sl != parent) {
        *sl = 0;
        int rc = mp_fs_mkdirs(parent, d);
        if (rc) {
            free(parent);
            return rc;
        }
    }
    free(parent);
    size_t tl = strlen(dest) + 32;
    char *tmp = malloc(tl);
    if (!tmp)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    snprintf(tmp, tl, "%s.clone-%d", dest, (int)getpid());
    rm_rf(tmp);
    posix_spawnattr_t at;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawn_file_actions_init(&fa);
    /* git's progress and errors go nowhere: stdout is not ours to use */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)"git",
                    (char *)"-c",
                    (char *)"credential.helper=",
                    (char *)"clone",
                    (char *)"--quiet",
                    (char *)"--depth",
                    (char *)"1",
                    (char *)"--single-branch",
                    (char *)url,
                    tmp,
                    NULL};
    /* no prompt may wait for a user: the environment plus
     * GIT_TERMINAL_PROMPT=0 (the process's own environment is not changed) */
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **envp = calloc(ne + 2, sizeof(char *));
    if (!envp) {
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        free(tmp);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "GIT_TERMINAL_PROMPT=", 20) != 0)
            envp[k++] = environ[i];
    envp[k++] = (char *)"GIT_TERMINAL_PROMPT=0";
    envp[k] = NULL;
    pid_t pid;
    int err = posix_spawnp(&pid, "git", &fa, &at, argv, envp);
    free(envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (err) {
        free(tmp);
        return mp_diag_set(d, MP_ENOTFOUND, "cannot run git: %s", strerror(err));
    }
    double t0 = now_s();
    int st = 0;
    bool timed_out = false;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            break;
        if (now_s() - t0 > timeout_s) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            timed_out = true;
            break;
        }
        struct timespec ts = {0, 50L * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int rc = 0;
    if (timed_out) {
        rc = mp_diag_set(d, MP_ETIMEOUT, "git clone %s did not finish within %.0f s", url,
                         timeout_s);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        rc = mp_diag_set(d, MP_EIO, "git clone --depth 1 %s failed (exit %d; no network?)", url,
                         WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else if (rename(tmp, dest) != 0) {
        rc = mp_diag_set(d, MP_EIO, "cannot move the clone to %s: %s", dest, strerror(errno));
    }
    if (rc)
        rm_rf(tmp);
    free(tmp);
    return rc;
}
