/* Unit tests for the proc module, with real child processes (/bin/sh,
 * sleep, cat, head). Time limits in here are a few hundred milliseconds so
 * the whole program runs in about two seconds. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/proc.h>

/* Is pid gone (or a zombie waiting for init)? Waits up to 2 s for it. */
static bool pid_gone(pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        char path[64], buf[256];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            return true;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
            return true;
        usleep(10000);
    }
    return false;
}

static void run_ok(const char *const *argv, const struct mp_proc_opts *o, struct mp_proc_result *r)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_proc_run(argv, o, r, &d);
    if (rc)
        fail_msg("mp_proc_run: %s", d.msg);
}

static void test_capture_and_status(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    struct mp_proc_result r;
    run_ok(argv, NULL, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.signal, 0);
    assert_false(r.timed_out);
    assert_false(mp_proc_result_ok(&r));
    assert_string_equal(mp_buf_cstr(&r.out), "out\n");
    assert_string_equal(mp_buf_cstr(&r.err), "err\n");
    assert_true(r.duration_ns > 0);
    char buf[128];
    mp_proc_describe(&r, 0, buf, sizeof(buf));
    assert_string_equal(buf, "exited with status 3");
    mp_proc_result_fini(&r);
}

static void test_path_lookup_and_stdin(void **state)
{
    (void)state;
    /* "cat" is found on PATH; stdin is /dev/null so it ends at once. */
    const char *argv[] = {"cat", NULL};
    struct mp_proc_result r;
    run_ok(argv, NULL, &r);
    assert_true(mp_proc_result_ok(&r));
    assert_int_equal(r.out.len, 0);
    mp_proc_result_fini(&r);
}

static void test_not_found(void **state)
{
    (void)state;
    struct mp_diag d;
    mp_diag_clear(&d);
    const char *argv[] = {"magpie-no-such-program-xyz", NULL};
    struct mp_proc_result r;
    assert_int_equal(mp_proc_run(argv, NULL, &r, &d), MP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "magpie-no-such-program-xyz"));
    mp_proc_result_fini(&r);

    /* A file that exists but is not executable. */
    char path[] = "/tmp/mp_proc_noexec_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *argv2[] = {path, NULL};
    mp_diag_clear(&d);
    assert_int_equal(mp_proc_run(argv2, NULL, &r, &d), MP_ENOTFOUND);
    mp_proc_result_fini(&r);
    unlink(path);

    /* A missing working directory is named in the diag. */
    const char *argv3[] = {"/bin/true", NULL};
    struct mp_proc_opts o = {.cwd = "/nonexistent/magpie-dir"};
    mp_diag_clear(&d);
    assert_int_equal(mp_proc_run(argv3, &o, &r, &d), MP_EIO);
    assert_string_equal(d.file, "/nonexistent/magpie-dir");
    mp_proc_result_fini(&r);

    /* Executable but not a program: exec itself fails (ENOEXEC), which the
     * child reports back through its error pipe. */
    char junk[] = "/tmp/mp_proc_junk_XXXXXX";
    fd = mkstemp(junk);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "\x7f\x01\x02junk", 7), 7);
    close(fd);
    assert_int_equal(chmod(junk, 0755), 0);
    const char *argv5[] = {junk, NULL};
    mp_diag_clear(&d);
    assert_int_equal(mp_proc_run(argv5, NULL, &r, &d), MP_ECHILD);
    assert_non_null(strstr(d.msg, "exec"));
    mp_proc_result_fini(&r);
    unlink(junk);

    /* Empty argv, and stdout sent to itself. */
    const char *argv4[] = {NULL};
    assert_int_equal(mp_proc_run(argv4, NULL, &r, NULL), MP_EINVAL);
    mp_proc_result_fini(&r);
    struct mp_proc_opts o2 = {.out_mode = MP_PROC_TO_STDOUT};
    assert_int_equal(mp_proc_run(argv3, &o2, &r, NULL), MP_EINVAL);
    mp_proc_result_fini(&r);
}

static void test_cwd_and_env(void **state)
{
    (void)state;
    setenv("MP_TEST_REMOVE_ME", "still-here", 1);
    setenv("MP_TEST_OVERRIDE", "old", 1);
    const char *env[] = {"MP_TEST_NEW=new value", "MP_TEST_OVERRIDE=new", "MP_TEST_REMOVE_ME",
                         NULL};
    struct mp_proc_opts o = {.cwd = "/", .env = env};
    const char *argv[] = {
        "/bin/sh", "-c",
        "pwd; echo \"$MP_TEST_NEW|$MP_TEST_OVERRIDE|${MP_TEST_REMOVE_ME-unset}\"; env | grep -c "
        "'^MP_TEST_OVERRIDE='",
        NULL};
    struct mp_proc_result r;
    run_ok(argv, &o, &r);
    assert_true(mp_proc_result_ok(&r));
    assert_string_equal(mp_buf_cstr(&r.out), "/\nnew value|new|unset\n1\n");
    mp_proc_result_fini(&r);
    /* Our own environment is untouched. */
    assert_string_equal(getenv("MP_TEST_OVERRIDE"), "old");
    assert_string_equal(getenv("MP_TEST_REMOVE_ME"), "still-here");
    unsetenv("MP_TEST_REMOVE_ME");
    unsetenv("MP_TEST_OVERRIDE");
}

static void test_timeout_term(void **state)
{
    (void)state;
    /* The shell and its sleep child are both in the group: both get TERM. */
    const char *argv[] = {"/bin/sh", "-c", "sleep 5 & echo $!; wait", NULL};
    struct mp_proc_opts o = {.timeout_s = 0.3, .grace_s = 1.0};
    struct mp_proc_result r;
    uint64_t t0 = mp_time_ns();
    run_ok(argv, &o, &r);
    uint64_t el = mp_time_ns() - t0;
    assert_true(r.timed_out);
    assert_false(r.exited);
    assert_int_equal(r.signal, SIGTERM);
    assert_true(el < 1500000000ULL);
    assert_true(r.duration_ns >= 300000000ULL);
    pid_t grandchild = (pid_t)atoi(mp_buf_cstr(&r.out));
    assert_true(grandchild > 0);
    assert_true(pid_gone(grandchild));
    char buf[128];
    mp_proc_describe(&r, o.timeout_s, buf, sizeof(buf));
    assert_non_null(strstr(buf, "timed out after 0.3 s (killed by signal 15"));
    mp_proc_result_fini(&r);
}

static void test_timeout_kill_after_grace(void **state)
{
    (void)state;
    /* TERM is ignored (and the ignore is inherited by sleep): KILL follows. */
    const char *argv[] = {"/bin/sh", "-c", "trap '' TERM; sleep 5", NULL};
    struct mp_proc_opts o = {.timeout_s = 0.2, .grace_s = 0.2};
    struct mp_proc_result r;
    uint64_t t0 = mp_time_ns();
    run_ok(argv, &o, &r);
    uint64_t el = mp_time_ns() - t0;
    assert_true(r.timed_out);
    assert_int_equal(r.signal, SIGKILL);
    assert_true(el >= 400000000ULL && el < 2000000000ULL);
    mp_proc_result_fini(&r);
}

static void test_leftovers_killed_or_kept(void **state)
{
    (void)state;
    /* The leader exits at once and leaves a sleep behind in its group. */
    const char *argv[] = {"/bin/sh", "-c", "sleep 5 >/dev/null 2>&1 & echo $!", NULL};
    struct mp_proc_result r;
    run_ok(argv, NULL, &r);
    assert_true(mp_proc_result_ok(&r));
    pid_t left = (pid_t)atoi(mp_buf_cstr(&r.out));
    assert_true(left > 0);
    assert_true(pid_gone(left));
    mp_proc_result_fini(&r);

    struct mp_proc_opts o = {.keep_group = true};
    run_ok(argv, &o, &r);
    left = (pid_t)atoi(mp_buf_cstr(&r.out));
    assert_true(left > 0);
    usleep(50000);
    assert_int_equal(kill(left, 0), 0); /* still running, as asked */
    kill(left, SIGKILL);                /* our own test child: clean up */
    mp_proc_result_fini(&r);
}

static void test_escaped_pipe_holder(void **state)
{
    (void)state;
    /* A process that left the group (setsid) keeps stdout open; run must
     * still return, after the grace period, with what was written. */
    const char *argv[] = {"/bin/sh", "-c", "setsid sleep 5 & echo $!", NULL};
    char setsid_path[512];
    if (mp_proc_which("setsid", setsid_path, sizeof(setsid_path)) != 0)
        skip();
    struct mp_proc_opts o = {.grace_s = 0.2};
    struct mp_proc_result r;
    uint64_t t0 = mp_time_ns();
    run_ok(argv, &o, &r);
    uint64_t el = mp_time_ns() - t0;
    assert_true(mp_proc_result_ok(&r));
    assert_true(el < 2000000000ULL);
    pid_t holder = (pid_t)atoi(mp_buf_cstr(&r.out));
    if (holder > 0)
        kill(holder, SIGKILL); /* the sleep we started, by its pid */
    mp_proc_result_fini(&r);
}

static void test_capture_bound(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/sh", "-c", "head -c 300000 /dev/zero; echo tail >&2", NULL};
    struct mp_proc_opts o = {.capture_max = 1000};
    struct mp_proc_result r;
    run_ok(argv, &o, &r);
    assert_true(mp_proc_result_ok(&r));
    assert_int_equal(r.out.len, 1000);
    assert_true(r.out_truncated);
    assert_int_equal(r.out_bytes, 300000);
    assert_false(r.err_truncated);
    assert_string_equal(mp_buf_cstr(&r.err), "tail\n");
    mp_proc_result_fini(&r);
}

static void test_files_and_merge(void **state)
{
    (void)state;
    char path[] = "/tmp/mp_proc_out_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *argv[] = {"/bin/sh", "-c", "echo one; echo two >&2", NULL};
    struct mp_proc_opts o = {
        .out_mode = MP_PROC_FILE, .out_path = path, .err_mode = MP_PROC_TO_STDOUT};
    struct mp_proc_result r;
    run_ok(argv, &o, &r);
    assert_true(mp_proc_result_ok(&r));
    mp_proc_result_fini(&r);
    o.out_mode = MP_PROC_APPEND;
    run_ok(argv, &o, &r);
    mp_proc_result_fini(&r);
    char buf[64] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, "one\ntwo\none\ntwo\n");

    /* Merged into the capture, and discarded. */
    struct mp_proc_opts o2 = {.err_mode = MP_PROC_TO_STDOUT};
    run_ok(argv, &o2, &r);
    assert_string_equal(mp_buf_cstr(&r.out), "one\ntwo\n");
    mp_proc_result_fini(&r);
    struct mp_proc_opts o3 = {.out_mode = MP_PROC_DISCARD};
    run_ok(argv, &o3, &r);
    assert_int_equal(r.out.len, 0);
    assert_string_equal(mp_buf_cstr(&r.err), "two\n");
    mp_proc_result_fini(&r);

    /* An output file that cannot be created. */
    struct mp_proc_opts o4 = {.out_mode = MP_PROC_FILE, .out_path = "/nonexistent/dir/out.txt"};
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_proc_run(argv, &o4, &r, &d), MP_EIO);
    assert_string_equal(d.file, "/nonexistent/dir/out.txt");
    mp_proc_result_fini(&r);
    unlink(path);
}

static void test_async_terminate(void **state)
{
    (void)state;
    const char *argv[] = {"sleep", "5", NULL};
    struct mp_proc *p = NULL;
    struct mp_proc_opts o = {.grace_s = 1.0};
    assert_int_equal(mp_proc_spawn(argv, &o, &p, NULL), 0);
    assert_true(mp_proc_pid(p) > 0);
    assert_int_equal(mp_proc_poll(p, 0), 0);
    assert_int_equal(mp_proc_poll(p, 20), 0);
    mp_proc_terminate(p);
    struct mp_proc_result r;
    mp_proc_result_init(&r);
    assert_int_equal(mp_proc_wait(p, &r), 0);
    assert_int_equal(r.signal, SIGTERM);
    assert_false(r.timed_out);
    assert_int_equal(mp_proc_poll(p, 0), 1);
    mp_proc_result_fini(&r);
    mp_proc_free(p);

    /* Freeing a running child stops it. */
    assert_int_equal(mp_proc_spawn(argv, &o, &p, NULL), 0);
    pid_t pid = mp_proc_pid(p);
    mp_proc_free(p);
    assert_true(pid_gone(pid));
    mp_proc_free(NULL);
}

/* mp_proc_wait overwrites its result: a struct holding garbage (what the
 * MCP server once passed it, uninitialised, and crashed freeing) is fine. */
static void test_wait_uninitialised_result(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    struct mp_proc *p = NULL;
    assert_int_equal(mp_proc_spawn(argv, NULL, &p, NULL), 0);
    struct mp_proc_result r;
    memset(&r, 0xA5, sizeof(r)); /* every pointer and length is garbage */
    assert_int_equal(mp_proc_wait(p, &r), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(mp_buf_cstr(&r.out), "out\n");
    assert_string_equal(mp_buf_cstr(&r.err), "err\n");
    mp_proc_result_fini(&r);
    mp_proc_free(p);
    /* an error leaves it initialised and empty */
    memset(&r, 0xA5, sizeof(r));
    assert_int_equal(mp_proc_wait(NULL, &r), MP_EINVAL);
    assert_false(r.exited);
    assert_int_equal(r.out.len, 0);
    mp_proc_result_fini(&r);
}

static void test_child_signals_default(void **state)
{
    (void)state;
    /* main() ignores SIGPIPE; grep reads its own signal masks. */
    const char *argv[] = {"grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status", NULL};
    struct mp_proc_result r;
    run_ok(argv, NULL, &r);
    assert_true(mp_proc_result_ok(&r));
    /* Signals 32 and 33 are glibc's own (thread cancellation, setxid): no
     * program can change their disposition, so whatever the test's parent
     * had for them is inherited; every other signal must be default. */
    unsigned long long blk = ~0ULL, ign = ~0ULL;
    assert_int_equal(sscanf(mp_buf_cstr(&r.out), "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ign), 2);
    const unsigned long long glibc_internal = (1ULL << 31) | (1ULL << 32);
    assert_true((blk & ~glibc_internal) == 0);
    assert_true((ign & ~glibc_internal) == 0);
    mp_proc_result_fini(&r);
}

static void test_which(void **state)
{
    (void)state;
    char out[512];
    assert_int_equal(mp_proc_which("sh", out, sizeof(out)), 0);
    assert_true(out[0] == '/');
    assert_int_equal(access(out, X_OK), 0);
    assert_int_equal(mp_proc_which("magpie-no-such-program-xyz", out, sizeof(out)), MP_ENOTFOUND);
    assert_int_equal(mp_proc_which_in("sh", "::/nonexistent:/bin", out, sizeof(out)), 0);
    assert_string_equal(out, "/bin/sh");
    assert_int_equal(mp_proc_which_in("sh", "/nonexistent", out, sizeof(out)), MP_ENOTFOUND);
    assert_int_equal(mp_proc_which_in("sh", "", out, sizeof(out)), MP_ENOTFOUND);
    assert_int_equal(mp_proc_which("/bin/sh", out, sizeof(out)), 0);
    assert_string_equal(out, "/bin/sh");
    assert_int_equal(mp_proc_which("/etc/passwd", out, sizeof(out)), MP_ENOTFOUND);
    assert_int_equal(mp_proc_which("/bin", out, sizeof(out)), MP_ENOTFOUND);
    assert_int_equal(mp_proc_which_in("sh", "/bin", out, 4), MP_EINVAL);
    assert_int_equal(mp_proc_which("", out, sizeof(out)), MP_EINVAL);
}

/* Splits s and checks the words; expected is a NULL-terminated list. */
static void check_split(const char *s, ...)
{
    char **argv = NULL;
    int argc = -1;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_proc_split(s, &argv, &argc, &d);
    if (rc)
        fail_msg("split(%s): %s", s, d.msg);
    va_list ap;
    va_start(ap, s);
    int i = 0;
    for (const char *w; (w = va_arg(ap, const char *)) != NULL; i++) {
        if (i >= argc)
            fail_msg("split(%s): only %d words", s, argc);
        assert_string_equal(argv[i], w);
    }
    va_end(ap);
    assert_int_equal(argc, i);
    assert_null(argv[argc]);
    mp_proc_argv_free(argv);
}

static void test_split(void **state)
{
    (void)state;
    check_split("", NULL);
    check_split("   \t\n ", NULL);
    check_split("nvcc -O3  -o a.out\tk.cu", "nvcc", "-O3", "-o", "a.out", "k.cu", NULL);
    check_split("a 'b c' \"d e\"", "a", "b c", "d e", NULL);
    check_split("a\"b c\"d'e f'g", "ab cde fg", NULL);
    check_split("\"\" ''", "", "", NULL);
    check_split("a\\ b c\\\\d \\'x", "a b", "c\\d", "'x", NULL);
    /* shlex, unlike sh: inside "..." only \" and \\ are escapes. */
    check_split("\"a\\$b\\q\\\"\\\\\"", "a\\$b\\q\"\\", NULL);
    check_split("'a\\b\"c'", "a\\b\"c", NULL);
    check_split("#not-a-comment x", "#not-a-comment", "x", NULL);
    check_split("python -c 'print(\"hi\")'", "python", "-c", "print(\"hi\")", NULL);
}

static void test_split_errors(void **state)
{
    (void)state;
    char **argv = (char **)1;
    struct mp_diag d;

    mp_diag_clear(&d);
    assert_int_equal(mp_proc_split("echo 'abc", &argv, NULL, &d), MP_EPARSE);
    assert_null(argv);
    assert_int_equal(d.line, 1);
    assert_int_equal(d.col, 6);
    assert_non_null(strstr(d.msg, "no closing quotation"));

    mp_diag_clear(&d);
    assert_int_equal(mp_proc_split("a b\nc \"de", &argv, NULL, &d), MP_EPARSE);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 3);
    assert_non_null(strstr(d.msg, "double quote"));

    mp_diag_clear(&d);
    assert_int_equal(mp_proc_split("abc\\", &argv, NULL, &d), MP_EPARSE);
    assert_int_equal(d.col, 4);
    assert_non_null(strstr(d.msg, "backslash"));

    mp_diag_clear(&d);
    assert_int_equal(mp_proc_split("\"abc\\", &argv, NULL, &d), MP_EPARSE);
    assert_int_equal(d.col, 5);
}

static void test_join(void **state)
{
    (void)state;
    const char *argv[] = {"nvcc", "-o", "a b", "", "it's", "x=1,y/z@%+:_-.", NULL};
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_proc_join(argv, &b), 0);
    assert_string_equal(mp_buf_cstr(&b), "nvcc -o 'a b' '' 'it'\"'\"'s' x=1,y/z@%+:_-.");
    /* Round trip through split. */
    char **back = NULL;
    int argc = 0;
    assert_int_equal(mp_proc_split(mp_buf_cstr(&b), &back, &argc, NULL), 0);
    assert_int_equal(argc, 6);
    for (int i = 0; i < argc; i++)
        assert_string_equal(back[i], argv[i]);
    mp_proc_argv_free(back);
    mp_buf_fini(&b);
}

/* The real reference: Python's shlex, where python3 exists. */
static void test_split_matches_python_shlex(void **state)
{
    (void)state;
    char py[512];
    if (mp_proc_which("python3", py, sizeof(py)) != 0)
        skip();
    static const char *const cases[] = {
        "a 'b c' \"d e\"",   "a\"b c\"d'e f'g",      "\"\" ''",
        "a\\ b c\\\\d \\'x", "\"a\\$b\\q\\\"\\\\\"", "x\\\ny",
        "a \\\n b",          "\"a\\\nb\"",           "--flag=\"v 1\" -k'2'",
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const char *argv[] = {
            py, "-c",
            "import shlex,sys; sys.stdout.write('\\0'.join(shlex.split(sys.argv[1])) + '\\0')",
            cases[c], NULL};
        struct mp_proc_result r;
        run_ok(argv, NULL, &r);
        assert_true(mp_proc_result_ok(&r));
        char **words = NULL;
        int argc = 0;
        assert_int_equal(mp_proc_split(cases[c], &words, &argc, NULL), 0);
        /* Python wrote each word followed by NUL. */
        const char *p = r.out.data ? r.out.data : "";
        size_t off = 0;
        int i = 0;
        while (off < r.out.len) {
            if (i >= argc)
                fail_msg("case %zu: python has more words", c);
            assert_string_equal(words[i], p + off);
            off += strlen(p + off) + 1;
            i++;
        }
        assert_int_equal(i, argc);
        mp_proc_argv_free(words);
        mp_proc_result_fini(&r);
    }
}

int main(void)
{
    /* Ignored here, as a CLI might: the child must still get the default. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_and_status),
        cmocka_unit_test(test_path_lookup_and_stdin),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_cwd_and_env),
        cmocka_unit_test(test_timeout_term),
        cmocka_unit_test(test_timeout_kill_after_grace),
        cmocka_unit_test(test_leftovers_killed_or_kept),
        cmocka_unit_test(test_escaped_pipe_holder),
        cmocka_unit_test(test_capture_bound),
        cmocka_unit_test(test_files_and_merge),
        cmocka_unit_test(test_async_terminate),
        cmocka_unit_test(test_child_signals_default),
        cmocka_unit_test(test_which),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_wait_uninitialised_result),
        cmocka_unit_test(test_split_matches_python_shlex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
