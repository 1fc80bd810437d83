/* The warm runner pool (src/kernel/warm.c) with stand-in runners: shell
 * loops that speak the pool's protocol and misbehave on request (the job's
 * name says how: hang, crash, exit, garbage, retire). Checks reuse by key,
 * a fresh runner after each kind of failure (and after the idle runner is
 * killed from outside), the job limit, the cap on runners, the idle
 * timeout, and that closing the control pipe ends the pool and its
 * runners. The real runner and harness in the pool: test_mcp_warm.sh. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/kernel.h>

#include "kernel/kernel_int.h"

/* A stand-in runner: per job line, "start SEQ" on fd 3, its pid into the
 * log, then by the job's name: hang, crash (SIGKILL itself), exit, garbage
 * (an unexpected reply), retire, or done. */
static const char *const STANDIN = "while read -r line; do\n"
                                   "  seq=${line#*\\\"seq\\\":\\\"}; seq=${seq%%\\\"*}\n"
                                   "  job=${line#*\\\"job\\\":\\\"}; job=${job%%\\\"*}\n"
                                   "  log=${line#*\\\"log\\\":\\\"}; log=${log%%\\\"*}\n"
                                   "  echo \"start $seq\" >&3\n"
                                   "  echo $$ >\"$log\"\n"
                                   "  case $job in\n"
                                   "    hang) sleep 600 ;;\n"
                                   "    crash) kill -9 $$ ;;\n"
                                   "    exit) exit 0 ;;\n"
                                   "    garbage) echo 'MAGPIE_LATENCY_JSON: {}' >&3 ;;\n"
                                   "    retire) echo \"done $seq retire\" >&3; exit 0 ;;\n"
                                   "    *) echo \"done $seq keep\" >&3 ;;\n"
                                   "  esac\n"
                                   "done\n";

static char dir[64], sock[128], logp[160];
static pid_t pool = -1;
static int ctl = -1;

static void pool_up(const char *runners, const char *idle)
{
    setenv("MAGPIE_WARM_RUNNERS", runners, 1);
    setenv("MAGPIE_WARM_IDLE_S", idle, 1);
    snprintf(dir, sizeof(dir), "/tmp/mpwarm.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(sock, sizeof(sock), "%s/s", dir);
    snprintf(logp, sizeof(logp), "%s/log", dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(ls, 8), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pool = fork();
    assert_true(pool >= 0);
    if (pool == 0) {
        close(p[1]);
        _exit(mp_kernel_warm_pool_main(p[0], ls));
    }
    close(p[0]);
    close(ls);
    ctl = p[1];
}

static void pool_down(void)
{
    close(ctl);
    int st = 0;
    assert_int_equal(waitpid(pool, &st, 0), pool);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    unlink(sock);
    unlink(logp);
    rmdir(dir);
}

/* runs job `name` under key; returns kern_warm_run's code; *pid: the runner's */
static int job(const char *key, const char *name, double limit, bool *warm, pid_t *pid, char *why,
               size_t wl)
{
    const char *argv[] = {"sh", "-c", STANDIN, NULL};
    unlink(logp);
    int rc = kern_warm_run(sock, key, argv, "/", name, logp, limit, warm, why, wl);
    FILE *f = fopen(logp, "r");
    int p = 0;
    if (f) {
        if (fscanf(f, "%d", &p) != 1)
            p = 0;
        fclose(f);
    }
    *pid = p;
    return rc;
}

static bool alive(pid_t pid)
{
    return pid > 0 && kill(pid, 0) == 0;
}

static void test_reuse_and_failures(void **state)
{
    (void)state;
    pool_up("2", "600");
    bool warm;
    pid_t a, b;
    char why[256];
    assert_int_equal(job("k", "ok", 30, &warm, &a, why, sizeof(why)), 0);
    assert_false(warm);
    assert_int_equal(job("k", "ok", 30, &warm, &b, why, sizeof(why)), 0);
    assert_true(warm);
    assert_int_equal(a, b); /* the same process */
    /* a job past its limit: the runner is killed and the call told so */
    assert_int_equal(job("k", "hang", 1, &warm, &b, why, sizeof(why)), 1);
    assert_non_null(strstr(why, "did not finish"));
    assert_false(alive(b));
    assert_int_equal(job("k", "ok", 30, &warm, &a, why, sizeof(why)), 0);
    assert_false(warm); /* a fresh one */
    assert_true(a != b);
    /* garbage on the protocol pipe, a crash, an exit mid-job */
    static const char *const bad[] = {"garbage", "crash", "exit"};
    static const char *const said[] = {"unexpected reply", "killed by signal 9", "exited"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(job("k", bad[i], 30, &warm, &b, why, sizeof(why)), 1);
        assert_non_null(strstr(why, said[i]));
        assert_int_equal(job("k", "ok", 30, &warm, &a, why, sizeof(why)), 0);
        assert_false(warm);
        assert_int_equal(job("k", "ok", 30, &warm, &b, why, sizeof(why)), 0);
        assert_true(warm);
    }
    /* a runner that retires after its job: done, and the next is fresh */
    assert_int_equal(job("k", "retire", 30, &warm, &a, why, sizeof(why)), 0);
    assert_true(warm);
    assert_int_equal(job("k", "ok", 30, &warm, &b, why, sizeof(why)), 0);
    assert_false(warm);
    /* the idle runner killed from outside between jobs */
    kill(b, SIGKILL);
    assert_int_equal(job("k", "ok", 30, &warm, &a, why, sizeof(why)), 0);
    assert_false(warm);
    assert_true(a != b);
    pool_down();
    assert_false(alive(a)); /* the pool's end is its runners' */
}

static void test_cap_and_idle(void **state)
{
    (void)state;
    pool_up("1", "1");
    bool warm;
    pid_t a, b, c;
    char why[256];
    assert_int_equal(job("A", "ok", 30, &warm, &a, why, sizeof(why)), 0);
    /* one runner at most: another problem's job takes the idle one's place */
    assert_int_equal(job("B", "ok", 30, &warm, &b, why, sizeof(why)), 0);
    assert_false(warm);
    assert_false(alive(a));
    /* idle past MAGPIE_WARM_IDLE_S: killed */
    for (int i = 0; i < 100 && alive(b); i++) {
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    assert_false(alive(b));
    assert_int_equal(job("B", "ok", 30, &warm, &c, why, sizeof(why)), 0);
    assert_false(warm);
    pool_down();
    /* no pool: the caller runs the job cold */
    assert_int_equal(job("B", "ok", 30, &warm, &c, why, sizeof(why)), -1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_and_failures),
        cmocka_unit_test(test_cap_and_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
