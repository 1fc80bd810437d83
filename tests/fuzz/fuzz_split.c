/* libFuzzer target for the shell-quoted command split (src/proc/split.c,
 * Python shlex.split rules) that turns command strings of YAML configs into
 * argv, its inverse mp_proc_join, and the $VAR expansion applied to config
 * strings first (src/config/common.c).
 *
 * The input up to its first NUL is the command line. When it splits, argc
 * must count the words, and joining the words and splitting the result again
 * must give back the same words (join quotes whatever needs it). A failed
 * split must say where (a diag with a position inside the string). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/config.h>
#include <magpie/proc.h>

#include "fuzz_common.h"

static volatile size_t g_sink;

static void roundtrip(char **argv, int argc)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    CHECK(mp_proc_join((const char *const *)argv, &b) == 0);
    char **again = NULL;
    int argc2 = -1;
    struct mp_diag d;
    mp_diag_clear(&d);
    CHECK(mp_proc_split(mp_buf_cstr(&b), &again, &argc2, &d) == 0);
    CHECK(argc2 == argc);
    for (int i = 0; i < argc; i++)
        CHECK(strcmp(argv[i], again[i]) == 0);
    CHECK(again[argc] == NULL);
    mp_proc_argv_free(again);
    mp_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    size_t len = strlen(s);
    char **argv = NULL;
    int argc = -1;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_proc_split(s, &argv, &argc, &d);
    if (rc == 0) {
        CHECK(argv != NULL && argc >= 0);
        int n = 0;
        while (argv[n]) {
            CHECK(strlen(argv[n]) <= len);
            n++;
        }
        CHECK(n == argc);
        roundtrip(argv, argc);
    } else {
        CHECK(rc == MP_EPARSE || rc == MP_ENOMEM);
        CHECK(argv == NULL && argc == 0);
        if (rc == MP_EPARSE)
            CHECK(d.code == rc && d.msg[0] && d.offset >= 0 && (size_t)d.offset < len);
    }
    mp_proc_argv_free(argv);

    char *x = mp_config_expand_vars(s);
    if (x)
        g_sink = strlen(x);
    free(x);
    free(s);
    return 0;
}
