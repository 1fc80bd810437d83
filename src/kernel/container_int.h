/* Private to the kernel module: running analyze / compare commands (compile,
 * testcase, the Python runner, the C harness) inside a container with
 * `docker run`, or `podman run` where docker is absent (container.c). */
#ifndef MAGPIE_KERNEL_CONTAINER_INT_H
#define MAGPIE_KERNEL_CONTAINER_INT_H

#include <limits.h>
#include <stdbool.h>

#include <magpie/gpu.h>
#include <magpie/proc.h>

#define K_CT_MAX_MOUNTS 32

struct kern_container {
    char runtime[PATH_MAX]; /* docker or podman, as found */
    bool podman;            /* GPU flags in podman's form (CDI for NVIDIA) */
    const char *image;      /* borrowed */
    enum mp_gpu_vendor vendor;
    unsigned int uid, gid;
    int nmounts;
    char mounts[K_CT_MAX_MOUNTS][PATH_MAX]; /* host dirs, mounted at the same path */
    bool mount_ro[K_CT_MAX_MOUNTS];
    unsigned int seq; /* container names: magpie-kernel-<pid>-<seq> */
};

/* Finds the runtime: $MAGPIE_CONTAINER_RUNTIME (docker, podman or a path),
 * else docker on PATH, else podman on PATH. MP_EINVAL without an image,
 * MP_ENOTFOUND without a runtime. */
int kern_container_init(struct kern_container *ct, const char *image, enum mp_gpu_vendor vendor,
                        struct mp_diag *d);
/* Mounts host directory dir (made absolute) at the same path, read-only when
 * ro. A directory inside one already mounted is not mounted again. */
int kern_container_mount(struct kern_container *ct, const char *dir, bool ro, struct mp_diag *d);
/* The full argv of one container run (NULL-terminated, mp_proc_argv_free):
 * RUNTIME run --rm --name NAME --user UID:GID [GPU flags] -v D:D[:ro]...
 * -w CWD -e HOME=/tmp [-e forwarded GPU visibility] [-e env...] IMAGE argv...
 * cwd NULL = our own working directory. */
int kern_container_argv(const struct kern_container *ct, const char *name, const char *cwd,
                        const char *const *env, const char *const *argv, char ***out);
/* Runs argv in a new container (options as mp_proc_run's, but the cwd and
 * env go into the container). A run that did not end cleanly (failure,
 * time limit, interrupt) is followed by `RUNTIME rm -f NAME`. The run's
 * command line goes to cmdline when not NULL. */
int kern_container_run(struct kern_container *ct, const char *cwd, const char *const *env,
                       const char *const *argv, const struct mp_proc_opts *po,
                       struct mp_proc_result *res, struct mp_buf *cmdline, struct mp_diag *d);
/* True once mp_kernel_interrupt was called. */
bool kern_container_interrupted(void);

#endif
