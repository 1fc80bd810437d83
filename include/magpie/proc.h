/* magpie proc: child processes.
 *
 * Every child runs from an argv (never through a shell), with stdin from
 * /dev/null, in a process group of its own. Its stdout and stderr are
 * captured into bounded buffers, written to files, discarded or inherited.
 * A time limit ends the whole group: SIGTERM, a grace period, then SIGKILL.
 * Only process groups created here are ever signalled, and only while their
 * leader has not been reaped (so the group id cannot have been reused).
 *
 * Also: PATH lookup (mp_proc_which), shell-style argv splitting with the
 * rules of Python's shlex.split (mp_proc_split) and the reverse
 * (mp_proc_join), so commands from Magpie YAML configs split the same way.
 */
#ifndef MAGPIE_PROC_H
#define MAGPIE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <magpie/base.h>

/* Where one output stream of the child goes. */
enum mp_proc_out {
    MP_PROC_CAPTURE = 0, /* into mp_proc_result.out / .err, first capture_max bytes kept */
    MP_PROC_DISCARD,     /* /dev/null */
    MP_PROC_FILE,        /* the file at out_path / err_path, created or truncated */
    MP_PROC_APPEND,      /* the file at out_path / err_path, created or appended to */
    MP_PROC_INHERIT,     /* this process's own stream (front ends only: the library
                            never lets a child write to its stdout on its own behalf) */
    MP_PROC_TO_STDOUT,   /* stderr only: wherever stdout goes (2>&1) */
};

#define MP_PROC_DEFAULT_CAPTURE_MAX ((size_t)16 << 20) /* 16 MiB per stream */
#define MP_PROC_DEFAULT_GRACE_S 5.0

/* Options of one run. A zeroed struct (or NULL) means: inherit cwd and
 * environment, capture both streams, no time limit, 5 s grace. All pointers
 * are borrowed for the duration of the spawn call only. */
struct mp_proc_opts {
    const char *cwd;           /* working directory, NULL = ours */
    const char *const *env;    /* NULL-terminated list of changes to our environment:
                                  "KEY=VALUE" sets, a bare "KEY" removes; NULL = none */
    double timeout_s;          /* wall-clock limit, <= 0 = none */
    double grace_s;            /* SIGTERM -> SIGKILL delay; <= 0 = MP_PROC_DEFAULT_GRACE_S */
    enum mp_proc_out out_mode; /* stdout */
    enum mp_proc_out err_mode; /* stderr */
    const char *out_path;      /* for MP_PROC_FILE / MP_PROC_APPEND */
    const char *err_path;      /* likewise */
    size_t capture_max;        /* bytes kept per captured stream, 0 = default;
                                  the rest is read and dropped so the child never blocks */
    bool keep_group;           /* false: when the child exits, whatever it left running
                                  in its process group is killed; true: left alone */
};

/* How a child ended. out/err are owned by the result (mp_proc_result_fini). */
struct mp_proc_result {
    bool exited;          /* ended with exit(): exit_code is valid */
    int exit_code;        /* 0..255 when exited, else -1 */
    int signal;           /* signal that ended it, else 0 */
    bool timed_out;       /* the time limit was reached and the group was signalled */
    uint64_t duration_ns; /* from spawn to the child's exit */
    struct mp_buf out;    /* captured stdout (MP_PROC_CAPTURE), NUL-terminated */
    struct mp_buf err;    /* captured stderr */
    bool out_truncated;   /* more than capture_max bytes were written */
    bool err_truncated;
    uint64_t out_bytes; /* bytes the child wrote to a captured stream, kept or not */
    uint64_t err_bytes;
};

/* A running child. Opaque; owned by the caller of mp_proc_spawn. */
struct mp_proc;

/* Starts argv[0] (looked up on PATH when it has no '/'; the PATH of the
 * child's environment, i.e. after opts->env is applied). Returns 0 and a
 * handle, MP_ENOTFOUND when the program does not exist or is not executable,
 * MP_EIO when cwd or an output file cannot be opened, MP_ECHILD when the
 * process cannot be created. Errors are explained in d. */
int mp_proc_spawn(const char *const *argv, const struct mp_proc_opts *opts, struct mp_proc **out,
                  struct mp_diag *d);
/* Pid (= process group id) of the child. */
pid_t mp_proc_pid(const struct mp_proc *p);
/* Moves output along, checks the time limit, and checks for exit, waiting up
 * to timeout_ms (0 = do not wait, < 0 = until something happens). Returns 1
 * when the child has ended (mp_proc_wait then returns at once), 0 while it
 * runs, negative MP_E* on error. */
int mp_proc_poll(struct mp_proc *p, int timeout_ms);
/* Asks the child's group to stop now: SIGTERM, and SIGKILL after the grace
 * period. Does not wait; follow with mp_proc_wait. No-op once ended. */
void mp_proc_terminate(struct mp_proc *p);
/* Waits for the end (time limit included) and moves the outcome into res,
 * which the caller finalises with mp_proc_result_fini. res is overwritten
 * (initialised here, never freed first), so it may be uninitialised; one
 * still holding an earlier result's buffers must be finalised before.
 * Returns 0 when the child ran and ended, whatever its status (res is left
 * initialised and empty on an error). */
int mp_proc_wait(struct mp_proc *p, struct mp_proc_result *res);
/* Frees the handle; a child still running is terminated and reaped first
 * (bounded by the grace period). NULL is a no-op. */
void mp_proc_free(struct mp_proc *p);

/* spawn + wait + free. res is always initialised (fini it even on error).
 * Returns 0 when the child ran, whatever its exit status; see
 * mp_proc_result_ok for "exited with 0". */
int mp_proc_run(const char *const *argv, const struct mp_proc_opts *opts,
                struct mp_proc_result *res, struct mp_diag *d);
void mp_proc_result_init(struct mp_proc_result *res);
void mp_proc_result_fini(struct mp_proc_result *res);
/* exited && exit_code == 0 && !timed_out */
bool mp_proc_result_ok(const struct mp_proc_result *res);
/* "exited with status 1", "killed by signal 9 (Killed)", "timed out after
 * 2.0 s (killed by signal 15 (Terminated))" into buf. timeout_s is the limit
 * the run had (<= 0: say the measured duration instead). */
void mp_proc_describe(const struct mp_proc_result *res, double timeout_s, char *buf, size_t len);

/* Finds an executable named name: a name with '/' is checked as is, otherwise
 * each directory of $PATH in order (empty entries are skipped rather than
 * meaning the current directory). Writes the path into out. Returns 0,
 * MP_ENOTFOUND, or MP_EINVAL when the path does not fit in out_len. */
int mp_proc_which(const char *name, char *out, size_t out_len);
/* Same with an explicit PATH-style list (NULL = the system default path). */
int mp_proc_which_in(const char *name, const char *path_list, char *out, size_t out_len);

/* Splits s into words as Python's shlex.split(s) does (POSIX mode, no
 * comments): whitespace separates words; '...' keeps everything literally;
 * "..." keeps everything except that \" and \\ are escapes; outside quotes a
 * backslash makes the next character literal; adjacent parts join ("a"'b'c
 * is one word); "" is an empty word. Returns a NULL-terminated array owned by
 * the caller (mp_proc_argv_free) and its length in *argc_out (may be NULL).
 * Unterminated quote or trailing backslash -> MP_EPARSE with the 1-based
 * column of the opening quote (or the backslash) in d. */
int mp_proc_split(const char *s, char ***argv_out, int *argc_out, struct mp_diag *d);
void mp_proc_argv_free(char **argv);
/* Appends argv as one shell-safe line (Python shlex.join): words that need
 * it are single-quoted. */
int mp_proc_join(const char *const *argv, struct mp_buf *out);

/* A container image name to give docker / podman as one argument: 0, or
 * MP_EINVAL (field, when not NULL, set in d) when it is empty, starts with
 * '-' (it would be read as an option) or holds whitespace or a control
 * character. */
int mp_proc_image_check(const char *image, const char *field, struct mp_diag *d);

#endif
