/* Monotonic time, atomic file writes, directory helpers and peak RSS. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <magpie/base.h>

uint64_t mp_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool mp_fs_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *mp_fs_join(const char *dir, const char *name)
{
    if (!name || !*name)
        return mp_strdup(dir);
    size_t dn = strlen(dir), len = dn + strlen(name) + 2;
    char *r = malloc(len);
    if (r)
        snprintf(r, len, "%s%s%s", dir, dn && dir[dn - 1] != '/' ? "/" : "", name);
    return r;
}

bool mp_fs_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int mp_fs_mkdirs(const char *path, struct mp_diag *d)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(tmp))
        return mp_diag_set(d, MP_EINVAL, "path too long or empty: '%s'", path);
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == '\0') {
            char c = tmp[i];
            tmp[i] = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                mp_diag_set_file(d, tmp);
                return mp_diag_set(d, MP_EIO, "cannot create directory: %s", strerror(e));
            }
            tmp[i] = c;
        }
    }
    if (!mp_fs_is_dir(path)) {
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "exists and is not a directory");
    }
    return 0;
}

int mp_fs_write_atomic(const char *path, const void *data, size_t len, struct mp_diag *d)
{
    char tmp[4200];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return mp_diag_set(d, MP_EINVAL, "path too long: '%s'", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "cannot create file: %s", strerror(e));
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            mp_diag_set_file(d, path);
            return mp_diag_set(d, MP_EIO, "write failed: %s", strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL) {
        int e = errno;
        close(fd);
        unlink(tmp);
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "fsync failed: %s", strerror(e));
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "cannot write file: %s", strerror(e));
    }
    return 0;
}

size_t mp_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (size_t)ru.ru_maxrss * 1024u;
}
