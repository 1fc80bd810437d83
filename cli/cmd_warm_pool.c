/* `magpie warm-pool [--socket PATH] [--exit-after S] [--daemon]`: the warm
 * runner pool of MCP sessions (src/kernel/warm.c) for the command line.
 * analyze and compare run with MAGPIE_WARM_SOCKET set hand their Python
 * runner and harness jobs to it, so an agent's next evaluation of the same
 * problem skips the process start, the imports, the device set-up and the
 * reference's runs (docs/kernel-timing.md, "Warm runners"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <magpie/kernel.h>

#include "cli.h"
#include "opts.h"

enum { W_SOCKET = 1000, W_EXIT, W_DAEMON };

static const struct cli_opt warm_opts[] = {
    {"socket", 0, CLI_ARG, W_SOCKET, "PATH",
     "listen here (default: warm.sock in a new private directory under $XDG_RUNTIME_DIR, "
     "$TMPDIR or /tmp)",
     0},
    {"exit-after", 0, CLI_ARG, W_EXIT, "S",
     "end after S seconds with no runner and no client (default 1800; 0: only on SIGINT or "
     "SIGTERM); runners end after MAGPIE_WARM_IDLE_S idle (120)",
     0},
    {"daemon", 0, CLI_NOARG, W_DAEMON, NULL,
     "run in the background and print the variables to export (for eval) at once", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_warm_pool = {
    .name = "warm-pool",
    .summary = "keep warm kernel runners between analyze / compare commands",
    .intro = "Starts the warm runner pool MCP sessions use, for the command line: analyze\n"
             "and compare run with MAGPIE_WARM_SOCKET set to its socket give their Python\n"
             "runner (PyTorch, Triton) and C harness (CUDA, HIP, OpenCL) jobs to a warm\n"
             "child of the same problem, which skips the process start, the imports, the\n"
             "device set-up and the reference's runs; a child whose kernel failed is\n"
             "replaced. Prints MAGPIE_WARM_SOCKET=... and MAGPIE_WARM_POOL_PID=... (shell\n"
             "assignments with export) on stdout. The socket is mode 0600 in a 0700\n"
             "directory: only this user can hand it jobs. Bounds as in MCP sessions:\n"
             "MAGPIE_WARM_RUNNERS children (2), MAGPIE_WARM_IDLE_S (120),\n"
             "MAGPIE_WARM_MAX_RSS_MB (32768).\n",
    .outro = "example:\n"
             "  eval \"$(magpie warm-pool --daemon)\"\n"
             "  magpie compare -k compare.yaml      # cold: starts a runner\n"
             "  magpie compare -k compare.yaml      # warm\n"
             "  kill $MAGPIE_WARM_POOL_PID\n",
    .opts = warm_opts,
};

static volatile sig_atomic_t ctl_w = -1;

/* SIGINT / SIGTERM: closing the control pipe's write end ends the pool's
 * loop, which kills its runners; the socket is removed after it. */
static void on_stop(int sig)
{
    (void)sig;
    if (ctl_w >= 0) {
        close(ctl_w);
        ctl_w = -1;
    }
}

/* the shell assignments `eval "$(magpie warm-pool --daemon)"` runs */
static void print_exports(const char *path, pid_t pid)
{
    printf("MAGPIE_WARM_SOCKET=%s; export MAGPIE_WARM_SOCKET\n"
           "MAGPIE_WARM_POOL_PID=%ld; export MAGPIE_WARM_POOL_PID\n",
           path, (long)pid);
    fflush(stdout);
}

/* A new 0700 directory for the socket. */
static int private_dir(char *dir, size_t n)
{
    const char *bases[] = {getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"), "/tmp"};
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        struct stat st;
        if (!bases[i] || !*bases[i] || stat(bases[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if ((size_t)snprintf(dir, n, "%s/magpie-warm.XXXXXX", bases[i]) >= n)
            continue;
        if (mkdtemp(dir))
            return 0;
    }
    return -1;
}

int cmd_warm_pool(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    const char *sock = NULL;
    double exit_s = 1800;
    bool daemon = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct cli_opt *opt = cli_find(&cli_cmd_warm_pool, a);
        int id = opt ? opt->id : 0;
        if (id == 'h') {
            cli_help(stdout, &cli_cmd_warm_pool);
            return EXIT_OK;
        } else if (id == W_DAEMON) {
            daemon = true;
        } else if (id == W_SOCKET && i + 1 < argc) {
            sock = argv[++i];
        } else if (id == W_EXIT && i + 1 < argc) {
            char *end;
            exit_s = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(exit_s >= 0) || exit_s > 1e9) {
                fprintf(stderr,
                        "magpie: error: warm-pool: --exit-after expects seconds >= 0, got '%s'\n",
                        argv[i]);
                return EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "magpie: error: warm-pool: unknown argument '%s'\n", a);
            cli_help(stderr, &cli_cmd_warm_pool);
            return EXIT_USAGE;
        }
    }
    char dir[PATH_MAX] = "", path[PATH_MAX + 16];
    if (!sock) {
        if (private_dir(dir, sizeof(dir)) != 0) {
            fprintf(stderr, "magpie: error: warm-pool: cannot make a private directory: %s\n",
                    strerror(errno));
            return EXIT_FAIL;
        }
        snprintf(path, sizeof(path), "%s/warm.sock", dir);
    } else {
        snprintf(path, sizeof(path), "%s", sock);
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int ls = -1, ctl[2] = {-1, -1};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "magpie: error: warm-pool: socket path too long: %s\n", path);
        goto fail;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fprintf(stderr, "magpie: error: warm-pool: cannot listen on %s: %s\n", path,
                strerror(errno));
        goto fail;
    }
    if (chmod(path, 0600) != 0 || listen(ls, 64) != 0 || pipe2(ctl, O_CLOEXEC) != 0) {
        fprintf(stderr, "magpie: error: warm-pool: %s: %s\n", path, strerror(errno));
        unlink(path);
        goto fail;
    }
    char exit_env[64];
    snprintf(exit_env, sizeof(exit_env), "%g", exit_s);
    setenv("MAGPIE_WARM_POOL_EXIT_S", exit_env, 1);
    if (daemon) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "magpie: error: warm-pool: fork: %s\n", strerror(errno));
            unlink(path);
            goto fail;
        }
        if (pid > 0) {
            print_exports(path, pid);
            return EXIT_OK;
        }
        setsid();
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
            if (dn > 2)
                close(dn);
        }
    } else {
        print_exports(path, getpid());
    }
    ctl_w = ctl[1];
    struct sigaction act = {.sa_handler = on_stop};
    sigemptyset(&act.sa_mask);
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGTERM, &act, NULL);
    mp_kernel_warm_pool_main(ctl[0], ls);
    unlink(path);
    if (*dir)
        rmdir(dir);
    return EXIT_OK;
fail:
    if (ls >= 0)
        close(ls);
    if (*dir)
        rmdir(dir);
    return EXIT_FAIL;
}
