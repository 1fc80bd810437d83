/* bench_runrss: run one command and report its cost as one JSON line.
 *
 *   bench_runrss [--cpu N] [-o FILE] -- COMMAND [ARG...]
 *
 * Prints {"wall_s","user_s","sys_s","cpu_s","maxrss_kb","exit","signal","cpu"}
 * on stdout (or appends it to FILE with -o, so the child's own stdout stays
 * clean for parsing). Wall time is CLOCK_MONOTONIC from just before fork to the
 * return of wait4; CPU time and peak RSS (ru_maxrss, KiB on Linux) come from the
 * rusage wait4 fills for that one child. --cpu N pins the child (and anything it
 * starts) to CPU N with sched_setaffinity, so a "one core" figure is honest even
 * for a program that would otherwise spread over threads.
 *
 * Exit status: the child's exit status (128+signal when it was killed), 2 for a
 * usage error, 127 when the command could not be started.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_runrss [--cpu N] [-o FILE] -- COMMAND [ARG...]\n"
               "Runs COMMAND, waits for it with wait4 and prints one JSON line:\n"
               "  wall_s, user_s, sys_s, cpu_s (user+sys), maxrss_kb (child peak RSS),\n"
               "  exit (status or -1), signal (0 or the signal), cpu (pinned CPU or -1).\n"
               "  --cpu N   pin the child to CPU N (sched_setaffinity)\n"
               "  -o FILE   append the JSON line to FILE instead of stdout\n");
}

int main(int argc, char **argv)
{
    int cpu = -1;
    const char *out_path = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (!end || *end || v < 0 || v >= CPU_SETSIZE) {
                fprintf(stderr, "bench_runrss: bad --cpu value '%s'\n", argv[i]);
                return 2;
            }
            cpu = (int)v;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "bench_runrss: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char **cmd = argv + i;

    if (cpu >= 0) {
        /* Set on ourselves before fork: the child inherits the mask, so it is in
         * force from the first instruction of the command. */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "bench_runrss: sched_setaffinity(cpu %d): %s\n", cpu, strerror(errno));
            return 2;
        }
    }

    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "bench_runrss: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execvp(cmd[0], cmd);
        fprintf(stderr, "bench_runrss: cannot run '%s': %s\n", cmd[0], strerror(errno));
        _exit(127);
    }

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t w;
    do {
        w = wait4(pid, &status, 0, &ru);
    } while (w < 0 && errno == EINTR);
    double wall = now_s() - t0;
    if (w < 0) {
        fprintf(stderr, "bench_runrss: wait4: %s\n", strerror(errno));
        return 127;
    }

    int code = -1;
    int sig = 0;
    if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        sig = WTERMSIG(status);
    }
    double user = tv_s(ru.ru_utime);
    double sys = tv_s(ru.ru_stime);

    FILE *out = stdout;
    if (out_path) {
        out = fopen(out_path, "a");
        if (!out) {
            fprintf(stderr, "bench_runrss: cannot open %s: %s\n", out_path, strerror(errno));
            return 2;
        }
    }
    fprintf(out,
            "{\"wall_s\": %.6f, \"user_s\": %.6f, \"sys_s\": %.6f, \"cpu_s\": %.6f, "
            "\"maxrss_kb\": %ld, \"exit\": %d, \"signal\": %d, \"cpu\": %d}\n",
            wall, user, sys, user + sys, ru.ru_maxrss, code, sig, cpu);
    if (out != stdout) {
        fclose(out);
    } else {
        fflush(out);
    }
    if (sig) {
        return 128 + sig;
    }
    return code;
}
