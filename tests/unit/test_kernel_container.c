/* Unit tests for the container environment's argv builder
 * (src/kernel/container.c): mounts (nested ones merged, read-only kept only
 * when every part is), the vendor's GPU flags for docker and podman, the
 * caller's uid:gid, env passing. Nothing is run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel/container_int.h"

static char g_dir[128];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "/tmp/mp_ktct_XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char p[256];
    snprintf(p, sizeof(p), "%s/a", g_dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/a/b", g_dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/c", g_dir);
    mkdir(p, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[256];
    snprintf(p, sizeof(p), "%s/a/b", g_dir);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/a", g_dir);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/c", g_dir);
    rmdir(p);
    rmdir(g_dir);
    return 0;
}

static void init_ct(struct kern_container *ct, enum mp_gpu_vendor v, const char *runtime)
{
    setenv("MAGPIE_CONTAINER_RUNTIME", "sh", 1); /* any program on PATH */
    assert_int_equal(kern_container_init(ct, "img:1", v, NULL), 0);
    snprintf(ct->runtime, sizeof(ct->runtime), "%s", runtime);
    ct->podman = strstr(runtime, "podman") != NULL;
    ct->uid = 1000;
    ct->gid = 100;
}

static char *joined(char **argv)
{
    static char buf[4096];
    buf[0] = 0;
    for (char **p = argv; *p; p++) {
        if (p != argv)
            strcat(buf, " ");
        strcat(buf, *p);
    }
    return buf;
}

static void test_mounts(void **state)
{
    (void)state;
    struct kern_container ct;
    init_ct(&ct, MP_GPU_VENDOR_NONE, "docker");
    char p[256];
    snprintf(p, sizeof(p), "%s/a/b", g_dir);
    assert_int_equal(kern_container_mount(&ct, p, true, NULL), 0);
    snprintf(p, sizeof(p), "%s/c", g_dir);
    assert_int_equal(kern_container_mount(&ct, p, true, NULL), 0);
    snprintf(p, sizeof(p), "%s/a", g_dir); /* takes a/b in, writable wins */
    assert_int_equal(kern_container_mount(&ct, p, false, NULL), 0);
    snprintf(p, sizeof(p), "%s/a/b", g_dir); /* already inside a */
    assert_int_equal(kern_container_mount(&ct, p, true, NULL), 0);
    assert_int_equal(ct.nmounts, 2);
    char want[256];
    snprintf(want, sizeof(want), "%s/c", g_dir);
    assert_string_equal(ct.mounts[0], want);
    assert_true(ct.mount_ro[0]);
    snprintf(want, sizeof(want), "%s/a", g_dir);
    assert_string_equal(ct.mounts[1], want);
    assert_false(ct.mount_ro[1]);
    snprintf(p, sizeof(p), "%s/missing", g_dir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(kern_container_mount(&ct, p, false, &d), MP_EIO);
}

static void test_argv(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("MAGPIE_GPU_ARCH");
    struct kern_container ct;
    char a[256], want[2048];
    snprintf(a, sizeof(a), "%s/a", g_dir);
    const char *const env[] = {"X=1", "DROPPED", "Y=a b", NULL};
    const char *const cmd[] = {"./t", "--n", "3", NULL};
    char **out = NULL;

    init_ct(&ct, MP_GPU_VENDOR_NVIDIA, "/usr/bin/docker");
    assert_int_equal(kern_container_mount(&ct, a, false, NULL), 0);
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    assert_int_equal(kern_container_argv(&ct, "n1", a, env, cmd, &out), 0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    snprintf(want, sizeof(want),
             "/usr/bin/docker run --rm --name n1 --user 1000:100 --gpus all -v %s:%s -w %s -e "
             "HOME=/tmp -e CUDA_VISIBLE_DEVICES=1 -e X=1 -e Y=a b img:1 ./t --n 3",
             a, a, a);
    assert_string_equal(joined(out), want);
    mp_proc_argv_free(out);

    init_ct(&ct, MP_GPU_VENDOR_NVIDIA, "/usr/bin/podman");
    assert_int_equal(kern_container_argv(&ct, "n2", a, NULL, cmd, &out), 0);
    snprintf(want, sizeof(want),
             "/usr/bin/podman run --rm --name n2 --user 1000:100 --device nvidia.com/gpu=all -w "
             "%s -e HOME=/tmp img:1 ./t --n 3",
             a);
    assert_string_equal(joined(out), want);
    mp_proc_argv_free(out);

    init_ct(&ct, MP_GPU_VENDOR_AMD, "podman");
    assert_int_equal(kern_container_mount(&ct, a, true, NULL), 0);
    assert_int_equal(kern_container_argv(&ct, "n3", a, NULL, cmd, &out), 0);
    snprintf(want, sizeof(want),
             "podman run --rm --name n3 --user 1000:100 --device /dev/kfd --device /dev/dri "
             "--group-add video -v %s:%s:ro -w %s -e HOME=/tmp img:1 ./t --n 3",
             a, a, a);
    assert_string_equal(joined(out), want);
    mp_proc_argv_free(out);
}

static void test_init_errors(void **state)
{
    (void)state;
    struct kern_container ct;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(kern_container_init(&ct, NULL, MP_GPU_VENDOR_NONE, &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "--docker-image"));
    mp_diag_clear(&d);
    setenv("MAGPIE_CONTAINER_RUNTIME", "no-such-runtime-here", 1);
    assert_int_equal(kern_container_init(&ct, "img", MP_GPU_VENDOR_NONE, &d), MP_ENOTFOUND);
    unsetenv("MAGPIE_CONTAINER_RUNTIME");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mounts),
        cmocka_unit_test(test_argv),
        cmocka_unit_test(test_init_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
