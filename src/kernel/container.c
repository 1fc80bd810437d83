/* The container environment of analyze / compare (`-e container
 * --docker-image IMG`, scheduler.environment: container): each compile,
 * testcase and runner command becomes one `docker run --rm` (podman where
 * docker is absent) of the image, with the vendor's GPU flags, the work
 * directories mounted at their own paths (so every path in commands and job
 * files means the same inside), the caller's uid:gid (files written stay
 * the caller's), and a name of our own so that a run cut short by a time
 * limit or a signal is removed with `rm -f NAME`. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/kernel.h>

#include "container_int.h"

#define RM_TIMEOUT_S 60.0

/* The container client's process group while it runs, for
 * mp_kernel_interrupt (a signal handler); 0 otherwise. */
static volatile sig_atomic_t g_pgid;
static volatile sig_atomic_t g_interrupted;

void mp_kernel_interrupt(void)
{
    g_interrupted = 1;
    pid_t pg = (pid_t)g_pgid;
    if (pg > 0)
        kill(-pg, SIGTERM);
}

bool kern_container_interrupted(void)
{
    return g_interrupted != 0;
}

int kern_container_init(struct kern_container *ct, const char *image, enum mp_gpu_vendor vendor,
                        struct mp_diag *d)
{
    memset(ct, 0, sizeof(*ct));
    if (!image || !*image)
        return mp_diag_set(d, MP_EINVAL,
                           "the container environment needs an image: --docker-image IMG or "
                           "scheduler.docker_image");
    int rc = mp_proc_image_check(image, "scheduler.docker_image", d);
    if (rc)
        return rc;
    ct->image = image;
    ct->vendor = vendor;
    ct->uid = (unsigned int)getuid();
    ct->gid = (unsigned int)getgid();
    const char *want = getenv("MAGPIE_CONTAINER_RUNTIME");
    if (want && *want) {
        if (mp_proc_which(want, ct->runtime, sizeof(ct->runtime)) != 0)
            return mp_diag_set(d, MP_ENOTFOUND, "MAGPIE_CONTAINER_RUNTIME=%s: not found", want);
    } else if (mp_proc_which("docker", ct->runtime, sizeof(ct->runtime)) != 0 &&
               mp_proc_which("podman", ct->runtime, sizeof(ct->runtime)) != 0) {
        return mp_diag_set(d, MP_ENOTFOUND,
                           "the container environment needs docker or podman: neither is on PATH");
    }
    const char *base = strrchr(ct->runtime, '/');
    ct->podman = strstr(base ? base + 1 : ct->runtime, "podman") != NULL;
    return 0;
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0 || n == 1);
}

int kern_container_mount(struct kern_container *ct, const char *dir, bool ro, struct mp_diag *d)
{
    char abs[PATH_MAX];
    if (!realpath(dir ? dir : ".", abs))
        return mp_diag_set(d, MP_EIO, "cannot mount %s into the container: %s", dir ? dir : ".",
                           strerror(errno));
    for (int i = 0; i < ct->nmounts; i++) {
        if (under(abs, ct->mounts[i])) {
            if (!ro)
                ct->mount_ro[i] = false; /* a writable part makes the whole writable */
            return 0;
        }
    }
    /* mounts inside the new one are dropped */
    int j = 0;
    for (int i = 0; i < ct->nmounts; i++) {
        if (under(ct->mounts[i], abs)) {
            ro = ro && ct->mount_ro[i];
            continue;
        }
        if (i != j) {
            memcpy(ct->mounts[j], ct->mounts[i], sizeof(ct->mounts[i]));
            ct->mount_ro[j] = ct->mount_ro[i];
        }
        j++;
    }
    ct->nmounts = j;
    if (ct->nmounts >= K_CT_MAX_MOUNTS)
        return mp_diag_set(d, MP_EINVAL, "more than %d directories to mount", K_CT_MAX_MOUNTS);
    memcpy(ct->mounts[ct->nmounts], abs, sizeof(abs));
    ct->mount_ro[ct->nmounts++] = ro;
    return 0;
}

struct av {
    char **v;
    int n, cap;
    bool oom;
};

static void add(struct av *a, const char *s)
{
    if (a->oom)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 64;
        char **nv = mp_reallocarray(a->v, (size_t)cap, sizeof(char *));
        if (!nv) {
            a->oom = true;
            return;
        }
        a->v = nv;
        a->cap = cap;
    }
    a->v[a->n] = strdup(s);
    if (!a->v[a->n]) {
        a->oom = true;
        return;
    }
    a->v[++a->n] = NULL;
}

static void add2(struct av *a, const char *opt, const char *val)
{
    add(a, opt);
    add(a, val);
}

/* GPU visibility of the caller, passed on as is. */
static const char *const forwarded[] = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                                        "ROCR_VISIBLE_DEVICES", "MAGPIE_GPU_ARCH", NULL};

int kern_container_argv(const struct kern_container *ct, const char *name, const char *cwd,
                        const char *const *env, const char *const *argv, char ***out)
{
    *out = NULL;
    struct av a = {0};
    char buf[PATH_MAX * 2 + 8];
    add(&a, ct->runtime);
    add(&a, "run");
    add(&a, "--rm");
    add2(&a, "--name", name);
    snprintf(buf, sizeof(buf), "%u:%u", ct->uid, ct->gid);
    add2(&a, "--user", buf);
    if (ct->vendor == MP_GPU_VENDOR_NVIDIA) {
        if (ct->podman) /* podman reaches NVIDIA GPUs through CDI */
            add2(&a, "--device", "nvidia.com/gpu=all");
        else
            add2(&a, "--gpus", "all");
    } else if (ct->vendor == MP_GPU_VENDOR_AMD) {
        add2(&a, "--device", "/dev/kfd");
        add2(&a, "--device", "/dev/dri");
        add2(&a, "--group-add", "video");
    }
    for (int i = 0; i < ct->nmounts; i++) {
        snprintf(buf, sizeof(buf), "%s:%s%s", ct->mounts[i], ct->mounts[i],
                 ct->mount_ro[i] ? ":ro" : "");
        add2(&a, "-v", buf);
    }
    char wd[PATH_MAX];
    if (!realpath(cwd ? cwd : ".", wd))
        snprintf(wd, sizeof(wd), "%s", cwd ? cwd : "/");
    add2(&a, "-w", wd);
    add2(&a, "-e", "HOME=/tmp"); /* the caller's uid may have no home in the image */
    for (const char *const *f = forwarded; *f; f++) {
        const char *v = getenv(*f);
        if (v) {
            snprintf(buf, sizeof(buf), "%s=%s", *f, v);
            add2(&a, "-e", buf);
        }
    }
    for (const char *const *e = env; e && *e; e++)
        if (strchr(*e, '=')) /* a bare KEY (remove) has nothing to pass */
            add2(&a, "-e", *e);
    add(&a, ct->image);
    for (const char *const *p = argv; *p; p++)
        add(&a, *p);
    if (a.oom) {
        mp_proc_argv_free(a.v);
        return MP_ENOMEM;
    }
    *out = a.v;
    return 0;
}

static void remove_container(const struct kern_container *ct, const char *name)
{
    const char *argv[] = {ct->runtime, "rm", "-f", name, NULL};
    struct mp_proc_opts po = {
        .timeout_s = RM_TIMEOUT_S, .out_mode = MP_PROC_DISCARD, .err_mode = MP_PROC_DISCARD};
    struct mp_proc_result res;
    (void)mp_proc_run(argv, &po, &res, NULL);
    mp_proc_result_fini(&res);
}

int kern_container_run(struct kern_container *ct, const char *cwd, const char *const *env,
                       const char *const *argv, const struct mp_proc_opts *po,
                       struct mp_proc_result *res, struct mp_buf *cmdline, struct mp_diag *d)
{
    mp_proc_result_init(res);
    if (g_interrupted)
        return mp_diag_set(d, MP_ECANCEL, "interrupted: no new container is started");
    char name[96];
    snprintf(name, sizeof(name), "magpie-kernel-%ld-%u", (long)getpid(), ++ct->seq);
    char **full = NULL;
    if (kern_container_argv(ct, name, cwd, env, argv, &full))
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    if (cmdline)
        mp_proc_join((const char *const *)full, cmdline);
    struct mp_proc_opts o = *po;
    o.cwd = NULL; /* both belong to the container; the client runs here */
    o.env = NULL;
    struct mp_proc *p = NULL;
    int rc = mp_proc_spawn((const char *const *)full, &o, &p, d);
    mp_proc_argv_free(full);
    if (rc)
        return rc;
    g_pgid = (sig_atomic_t)mp_proc_pid(p);
    if (g_interrupted) /* a signal that came before g_pgid was set */
        mp_proc_terminate(p);
    rc = mp_proc_wait(p, res);
    g_pgid = 0;
    mp_proc_free(p);
    /* --rm removes a container that ends; one whose client was stopped
     * (time limit, signal) may still be there */
    if (rc || !mp_proc_result_ok(res) || g_interrupted)
        remove_container(ct, name);
    if (!rc && g_interrupted)
        rc = mp_diag_set(d, MP_ECANCEL, "interrupted");
    return rc;
}
