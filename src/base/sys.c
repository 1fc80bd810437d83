/* Monotonic time, atomic file writes (also staged on a thread), directory
 * helpers and peak RSS. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

/* Writes data to a new file tmp and flushes it to disk; the file is removed
 * again on failure. errno-style failure: returns the errno, 0 on success. */
static int write_synced(const char *tmp, const void *data, size_t len, const char **what)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        *what = "cannot create file";
        return errno;
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
            *what = "write failed";
            return e;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL) {
        int e = errno;
        close(fd);
        unlink(tmp);
        *what = "fsync failed";
        return e;
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        *what = "cannot write file";
        return e;
    }
    return 0;
}

int mp_fs_write_atomic(const char *path, const void *data, size_t len, struct mp_diag *d)
{
    char tmp[4200];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return mp_diag_set(d, MP_EINVAL, "path too long: '%s'", path);
    const char *what = NULL;
    int e = write_synced(tmp, data, len, &what);
    if (!e && rename(tmp, path) != 0) {
        e = errno;
        what = "cannot write file";
        unlink(tmp);
    }
    if (e) {
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EIO, "%s: %s", what, strerror(e));
    }
    return 0;
}

/* ---- staged writes (mp_fs_stage_*) ----
 * One thread writes and flushes the queued files, in the order queued, to
 * temporary names beside their paths; commit renames one into place. */
enum { STAGE_QUEUED, STAGE_WRITTEN, STAGE_FAILED, STAGE_DONE };

struct stage_item {
    char *path, *tmp;
    void *data;
    size_t len;
    int state;
};

struct mp_fs_stage {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    struct stage_item *v;
    size_t n, cap, next; /* next: the first item the thread has not taken */
    bool stop;
};

static void *stage_main(void *arg)
{
    struct mp_fs_stage *st = arg;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        while (st->next == st->n && !st->stop)
            pthread_cond_wait(&st->cv, &st->mu);
        if (st->next == st->n)
            break;
        size_t i = st->next++;
        char *tmp = st->v[i].tmp;
        const void *data = st->v[i].data;
        size_t len = st->v[i].len;
        pthread_mutex_unlock(&st->mu); /* the item's fields stay put; v may move */
        const char *what = NULL;
        int e = write_synced(tmp, data, len, &what);
        pthread_mutex_lock(&st->mu);
        st->v[i].state = e ? STAGE_FAILED : STAGE_WRITTEN;
        pthread_cond_broadcast(&st->cv);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

struct mp_fs_stage *mp_fs_stage_new(void)
{
    struct mp_fs_stage *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    if (pthread_create(&st->th, NULL, stage_main, st) != 0) {
        pthread_mutex_destroy(&st->mu);
        pthread_cond_destroy(&st->cv);
        free(st);
        return NULL;
    }
    return st;
}

int mp_fs_stage_put(struct mp_fs_stage *st, const char *path, const void *data, size_t len)
{
    char *p = mp_strdup(path), *tmp = NULL, *copy = malloc(len ? len : 1);
    size_t tn = strlen(path) + 48;
    tmp = malloc(tn);
    if (!p || !tmp || !copy) {
        free(p);
        free(tmp);
        free(copy);
        return MP_ENOMEM;
    }
    snprintf(tmp, tn, "%s.tmp.%ld.staged", path, (long)getpid());
    if (len)
        memcpy(copy, data, len);
    pthread_mutex_lock(&st->mu);
    int rc = MP_GROW(st->v, st->cap, st->n + 1, 16) ? MP_ENOMEM : 0;
    if (!rc) {
        st->v[st->n++] = (struct stage_item){p, tmp, copy, len, STAGE_QUEUED};
        pthread_cond_broadcast(&st->cv);
    }
    pthread_mutex_unlock(&st->mu);
    if (rc) {
        free(p);
        free(tmp);
        free(copy);
    }
    return rc;
}

int mp_fs_stage_commit(struct mp_fs_stage *st, const char *path, const void *data, size_t len,
                       struct mp_diag *d)
{
    size_t at = SIZE_MAX;
    struct stage_item it = {0};
    pthread_mutex_lock(&st->mu);
    for (size_t i = st->n; i-- > 0;)
        if (st->v[i].state != STAGE_DONE && strcmp(st->v[i].path, path) == 0) {
            while (st->v[i].state == STAGE_QUEUED)
                pthread_cond_wait(&st->cv, &st->mu);
            at = i;
            it = st->v[i]; /* its strings and data stay put while v may move */
            st->v[i].state = STAGE_DONE;
            break;
        }
    pthread_mutex_unlock(&st->mu);
    if (at != SIZE_MAX && it.state == STAGE_WRITTEN) {
        bool same = it.len == len && (len == 0 || memcmp(it.data, data, len) == 0);
        if (same && rename(it.tmp, path) == 0)
            return 0;
        unlink(it.tmp);
    }
    return mp_fs_write_atomic(path, data, len, d);
}

void mp_fs_stage_free(struct mp_fs_stage *st)
{
    if (!st)
        return;
    pthread_mutex_lock(&st->mu);
    st->stop = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    pthread_join(st->th, NULL);
    for (size_t i = 0; i < st->n; i++) {
        if (st->v[i].state == STAGE_WRITTEN) /* staged, never committed */
            unlink(st->v[i].tmp);
        free(st->v[i].path);
        free(st->v[i].tmp);
        free(st->v[i].data);
    }
    free(st->v);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st);
}

size_t mp_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (size_t)ru.ru_maxrss * 1024u;
}
