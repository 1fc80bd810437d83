/* Ray tasks: a task id, its directory under <shared>/results/, inputs
 * staged there, the Ray job that runs magpie on a worker (entrypoint and
 * POST /api/jobs/ body), the task record that outlives the submitting
 * process, and status / result / cancel / list / logs / delete / wait on
 * top of the Jobs API. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <magpie/proc.h>
#include <magpie/ray.h>

#include "ray_int.h"

/* ---- the local state directory (task records of this user) ---- */

static void state_dir(char *out, size_t n)
{
    const char *e = getenv("MAGPIE_RAY_STATE_DIR");
    if (e && *e) {
        snprintf(out, n, "%s", e);
        return;
    }
    e = getenv("XDG_STATE_HOME");
    if (e && *e) {
        snprintf(out, n, "%s/magpie/ray", e);
        return;
    }
    e = getenv("HOME");
    snprintf(out, n, "%s/.local/state/magpie/ray", e && *e ? e : "/tmp");
}

static const char *default_shared(void)
{
    const char *e = getenv("MAGPIE_RAY_SHARED_STORAGE");
    return e && *e ? e : MP_RAY_DEFAULT_SHARED;
}

static bool valid_id(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 60)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return id[0] != '.';
}

/* ---- records ---- */

static json_t *task_json(const struct mp_ray_task *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(t->task_id));
    json_object_set_new(o, "ray_job_id", json_string(t->submission_id));
    json_object_set_new(o, "mode_type", json_string(t->mode));
    json_object_set_new(o, "label", json_string(t->label));
    json_object_set_new(o, "ray_cluster", json_string(t->address));
    json_object_set_new(o, "shared_storage_path", json_string(t->shared));
    json_object_set_new(o, "result_path", json_string(t->dir));
    json_object_set_new(o, "submitted_at", json_real(t->submitted_at));
    return o;
}

static void cpy(char *dst, size_t n, json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    snprintf(dst, n, "%s", s ? s : "");
}

static int task_from_json(json_t *o, struct mp_ray_task *t)
{
    if (!json_is_object(o) || !json_string_value(json_object_get(o, "task_id")))
        return MP_EPARSE;
    memset(t, 0, sizeof(*t));
    cpy(t->task_id, sizeof(t->task_id), o, "task_id");
    cpy(t->submission_id, sizeof(t->submission_id), o, "ray_job_id");
    cpy(t->mode, sizeof(t->mode), o, "mode_type");
    cpy(t->label, sizeof(t->label), o, "label");
    cpy(t->address, sizeof(t->address), o, "ray_cluster");
    cpy(t->shared, sizeof(t->shared), o, "shared_storage_path");
    cpy(t->dir, sizeof(t->dir), o, "result_path");
    t->submitted_at = json_number_value(json_object_get(o, "submitted_at"));
    return 0;
}

static int save_record(const struct mp_ray_task *t, struct mp_diag *d)
{
    json_t *o = task_json(t);
    char *text = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    if (!text)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    char dir[sizeof(t->shared) + 16], path[sizeof(dir) + 64];
    int rc = 0;
    snprintf(dir, sizeof(dir), "%s/tasks", t->shared);
    snprintf(path, sizeof(path), "%s/%s.json", dir, t->task_id);
    if ((rc = mp_fs_mkdirs(dir, d)) || (rc = mp_fs_write_atomic(path, text, strlen(text), d)))
        goto out;
    /* the local copy is a convenience: a failure there is only logged */
    state_dir(dir, sizeof(dir));
    size_t dl = strlen(dir);
    snprintf(dir + dl, sizeof(dir) - dl, "/tasks");
    snprintf(path, sizeof(path), "%s/%s.json", dir, t->task_id);
    struct mp_diag d2;
    mp_diag_clear(&d2);
    if (mp_fs_mkdirs(dir, &d2) || mp_fs_write_atomic(path, text, strlen(text), &d2))
        mp_log(MP_LOG_WARN, "task record not kept in %s: %s", dir, d2.msg);
out:
    free(text);
    return rc;
}

static int load_record(const char *path, struct mp_ray_task *t)
{
    json_t *o = json_load_file(path, 0, NULL);
    int rc = o ? task_from_json(o, t) : MP_ENOTFOUND;
    json_decref(o);
    return rc;
}

/* ---- prepare / stage ---- */

static void new_id(char out[16])
{
    unsigned char b[4] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, b, sizeof(b)) != (ssize_t)sizeof(b)) {
        uint64_t x = mp_time_ns() ^ ((uint64_t)getpid() << 32);
        memcpy(b, &x, sizeof(b));
    }
    if (fd >= 0)
        close(fd);
    snprintf(out, 16, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
}

int mp_ray_check_head(const struct mp_ray_config *rc, struct mp_diag *d)
{
    struct mp_ray_client *c = NULL;
    int r = mp_ray_client_new(rc->cluster_address, rc->connect_timeout_s, 30, &c, d);
    if (!r)
        r = mp_ray_ping(c, NULL, d);
    mp_ray_client_free(c);
    return r;
}

/* t->shared = path, refused (not cut) when the task's paths under it would
 * not fit the task's fixed fields */
static int set_shared(struct mp_ray_task *t, const char *path, struct mp_diag *d)
{
    size_t n = strlen(path);
    /* room for "/results/<id>/inputs/abs" and "/tasks/<id>.json" */
    if (n + 64 > sizeof(t->shared)) {
        mp_diag_set_field(d, "shared_storage_path");
        return mp_diag_set(d, MP_EINVAL, "shared storage path is too long (%zu bytes, at most %zu)",
                           n, sizeof(t->shared) - 64);
    }
    memcpy(t->shared, path, n + 1);
    return 0;
}

int mp_ray_task_prepare(const struct mp_ray_config *rc, const char *mode, const char *label,
                        struct mp_ray_task *t, struct mp_diag *d)
{
    memset(t, 0, sizeof(*t));
    char url[600];
    int r = mp_ray_address_resolve(rc->cluster_address, url, sizeof(url), d);
    if (r)
        return r;
    snprintf(t->address, sizeof(t->address), "%s", url);
    const char *shared = rc->shared_storage_path ? rc->shared_storage_path : default_shared();
    if (shared[0] != '/') {
        char *abs = realpath(shared, NULL);
        if (!abs) {
            mp_diag_set_field(d, "shared_storage_path");
            return mp_diag_set(d, MP_ENOTFOUND, "shared storage path '%s' does not exist", shared);
        }
        r = set_shared(t, abs, d);
        free(abs);
    } else {
        r = set_shared(t, shared, d);
    }
    if (r)
        return r;
    snprintf(t->mode, sizeof(t->mode), "%s", mode);
    snprintf(t->label, sizeof(t->label), "%s", label ? label : "");
    for (int tries = 0; tries < 8; tries++) {
        new_id(t->task_id);
        snprintf(t->dir, sizeof(t->dir), "%s/results/%s", t->shared, t->task_id);
        if (!mp_fs_exists(t->dir))
            break;
    }
    snprintf(t->submission_id, sizeof(t->submission_id), "magpie-%s", t->task_id);
    char in[sizeof(t->dir) + 16];
    snprintf(in, sizeof(in), "%s/inputs", t->dir);
    if ((r = mp_fs_mkdirs(in, d))) {
        mp_diag_set_field(d, "shared_storage_path");
        return r;
    }
    return 0;
}

static int copy_file(const char *src, const char *dst, struct mp_diag *d)
{
    FILE *f = fopen(src, "rb");
    if (!f)
        return mp_diag_set(d, MP_ENOTFOUND, "cannot read %s: %s", src, strerror(errno));
    struct mp_buf b;
    mp_buf_init(&b, 256u << 20);
    int rc = 0;
    if (mp_buf_read_file(&b, f))
        rc = mp_diag_set(d, MP_ENOMEM, "%s: larger than 256 MiB, not staged", src);
    fclose(f);
    if (!rc) {
        char *dir = mp_strdup(dst);
        char *s = strrchr(dir, '/');
        if (s)
            *s = 0;
        rc = mp_fs_mkdirs(dir, d);
        free(dir);
    }
    if (!rc)
        rc = mp_fs_write_atomic(dst, b.data ? b.data : "", b.len, d);
    struct stat st;
    if (!rc && stat(src, &st) == 0)
        chmod(dst, st.st_mode & 0777);
    mp_buf_fini(&b);
    return rc;
}

int mp_ray_task_stage(const struct mp_ray_task *t, const char *path, char **worker_path,
                      struct mp_diag *d)
{
    if (worker_path)
        *worker_path = NULL;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return mp_diag_set(d, MP_ENOTFOUND, "cannot stage '%s': not a regular file", path);
    if (strstr(path, "../") || strncmp(path, "..", 2) == 0) {
        /* outside the working directory: staged by its absolute path */
        char *abs = realpath(path, NULL);
        if (!abs)
            return mp_diag_set(d, MP_ENOTFOUND, "cannot resolve %s", path);
        int rc = mp_ray_task_stage(t, abs, worker_path, d);
        free(abs);
        return rc;
    }
    char dst[sizeof(t->dir) + PATH_MAX + 16];
    const char *rel = path;
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    int n = path[0] == '/' ? snprintf(dst, sizeof(dst), "%s/inputs/abs%s", t->dir, path)
                           : snprintf(dst, sizeof(dst), "%s/inputs/%s", t->dir, rel);
    if (n < 0 || (size_t)n >= sizeof(dst))
        return mp_diag_set(d, MP_EINVAL, "cannot stage '%s': the path is too long", path);
    int rc = copy_file(path, dst, d);
    if (!rc && worker_path)
        *worker_path = mp_strdup(path[0] == '/' ? dst : rel);
    return rc;
}

/* ---- the job ---- */

/* Appends the shell word for the string a + b (b may be NULL), quoted as
 * one word whatever it holds (quotes, $, backticks, newlines, any length):
 * tmp holds the unquoted text. */
static int put_word(struct mp_buf *out, struct mp_buf *tmp, const char *a, const char *b)
{
    mp_buf_reset(tmp);
    int r = mp_buf_puts(tmp, a);
    if (!r && b)
        r = mp_buf_puts(tmp, b);
    if (r)
        return r;
    const char *argv[] = {mp_buf_cstr(tmp), NULL};
    return mp_proc_join(argv, out);
}

int ray_entrypoint(const struct mp_ray_config *rc, const struct mp_ray_task *t,
                   const char *const *magpie_args, bool keep_ray_address, struct mp_buf *out)
{
    struct mp_buf q;
    mp_buf_init(&q, 0);
    int r = mp_buf_puts(out, "cd ");
    r = r ? r : put_word(out, &q, t->dir, "/inputs");
    r = r ? r : mp_buf_puts(out, " && { ");
    if (!r && !keep_ray_address)
        r = mp_buf_puts(out, "env -u RAY_ADDRESS ");
    r = r ? r : put_word(out, &q, rc->magpie_path ? rc->magpie_path : "magpie", NULL);
    for (const char *const *a = magpie_args; *a && !r; a++) {
        r = mp_buf_putc(out, ' ');
        r = r ? r : put_word(out, &q, *a, NULL);
    }
    /* each file of the task directory is one quoted word: dir + "/name" */
    r = r ? r : mp_buf_puts(out, " 2>>");
    r = r ? r : put_word(out, &q, t->dir, "/stderr.log");
    r = r ? r : mp_buf_puts(out, "; echo $? >");
    r = r ? r : put_word(out, &q, t->dir, "/exit_code");
    r = r ? r : mp_buf_puts(out, "; } | tee ");
    r = r ? r : put_word(out, &q, t->dir, "/output.txt");
    r = r ? r : mp_buf_puts(out, "; rc=$(cat ");
    r = r ? r : put_word(out, &q, t->dir, "/exit_code");
    r = r ? r
          : mp_buf_puts(out, " 2>/dev/null || echo 1); if [ \"$rc\" != 0 ]; then echo "
                             "\"magpie exited with status $rc; last lines of its stderr:\" "
                             ">&2; tail -n 40 ");
    r = r ? r : put_word(out, &q, t->dir, "/stderr.log");
    r = r ? r : mp_buf_puts(out, " >&2; fi; exit $rc");
    mp_buf_fini(&q);
    return r ? MP_ENOMEM : 0;
}

static json_t *kv_obj(const char *const *v, int n, bool numeric)
{
    json_t *o = json_object();
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(v[i], '=');
        if (!eq)
            continue;
        char *k = mp_strndup(v[i], (size_t)(eq - v[i]));
        json_object_set_new(o, k, numeric ? json_real(strtod(eq + 1, NULL)) : json_string(eq + 1));
        free(k);
    }
    return o;
}

json_t *ray_job_body(const struct mp_ray_config *rc, const struct mp_ray_task *t,
                     const char *entrypoint)
{
    json_t *b = json_object();
    json_object_set_new(b, "entrypoint", json_string(entrypoint));
    json_object_set_new(b, "submission_id", json_string(t->submission_id));
    json_t *renv = json_object();
    json_t *env = kv_obj(rc->env_vars, rc->n_env, false);
    json_object_set_new(env, "MAGPIE_TASK_ID", json_string(t->task_id));
    json_object_set_new(renv, "env_vars", env);
    if (rc->n_pip) {
        json_t *pip = json_array();
        for (int i = 0; i < rc->n_pip; i++)
            json_array_append_new(pip, json_string(rc->pip_packages[i]));
        json_object_set_new(renv, "pip", pip);
    }
    if (rc->working_dir && *rc->working_dir)
        json_object_set_new(renv, "working_dir", json_string(rc->working_dir));
    json_object_set_new(b, "runtime_env", renv);
    json_t *meta = kv_obj(rc->metadata, rc->n_meta, false);
    json_object_set_new(meta, "magpie_task_id", json_string(t->task_id));
    json_object_set_new(meta, "magpie_mode", json_string(t->mode));
    json_object_set_new(meta, "magpie_label", json_string(t->label));
    json_object_set_new(meta, "magpie_result_path", json_string(t->dir));
    json_object_set_new(b, "metadata", meta);
    json_object_set_new(b, "entrypoint_num_cpus", json_real(rc->entrypoint_num_cpus));
    json_object_set_new(b, "entrypoint_num_gpus", json_real(rc->entrypoint_num_gpus));
    if (rc->n_res)
        json_object_set_new(b, "entrypoint_resources", kv_obj(rc->resources, rc->n_res, true));
    return b;
}

static const char *err_text(json_t *j, char *buf, size_t n)
{
    if (json_is_string(j))
        snprintf(buf, n, "%.400s", json_string_value(j));
    else if (json_is_object(j) && json_string_value(json_object_get(j, "msg")))
        snprintf(buf, n, "%.400s", json_string_value(json_object_get(j, "msg")));
    else if (j) {
        char *s = json_dumps(j, JSON_COMPACT);
        snprintf(buf, n, "%.400s", s ? s : "");
        free(s);
    } else
        snprintf(buf, n, "(empty answer)");
    return buf;
}

int mp_ray_task_submit(const struct mp_ray_config *rc, struct mp_ray_task *t,
                       const char *const *magpie_args, bool keep_ray_address, struct mp_diag *d)
{
    struct mp_ray_client *c = NULL;
    int r = mp_ray_client_new(t->address, rc->connect_timeout_s, 60, &c, d);
    if (r)
        return r;
    if ((r = mp_ray_ping(c, NULL, d)))
        goto out;
    struct mp_buf ep;
    mp_buf_init(&ep, 0);
    r = ray_entrypoint(rc, t, magpie_args, keep_ray_address, &ep);
    t->submitted_at = (double)time(NULL);
    if (!r)
        r = save_record(t, d);
    if (r) {
        mp_buf_fini(&ep);
        goto out;
    }
    json_t *body = ray_job_body(rc, t, mp_buf_cstr(&ep));
    mp_buf_fini(&ep);
    long st = 0;
    json_t *ans = NULL;
    r = ray_json_request(c, "POST", "/api/jobs/", body, &st, &ans, d);
    json_decref(body);
    if (!r && st != 200) {
        char e[512];
        r = mp_diag_set(d, st == 400 ? MP_EINVAL : MP_EIO,
                        "Ray refused the job (POST %s/api/jobs/ answered HTTP %ld): %s",
                        mp_ray_client_url(c), st, err_text(ans, e, sizeof(e)));
    }
    json_decref(ans);
out:
    mp_ray_client_free(c);
    return r;
}

/* ---- finding tasks ---- */

int mp_ray_task_find(const char *task_id, const char *address, const char *shared,
                     struct mp_ray_task *t, struct mp_diag *d)
{
    memset(t, 0, sizeof(*t));
    if (!task_id || !valid_id(task_id)) {
        mp_diag_set_field(d, "task_id");
        return mp_diag_set(d, MP_EINVAL, "bad task id '%s'", task_id ? task_id : "");
    }
    const char *id = strncmp(task_id, "magpie-", 7) == 0 ? task_id + 7 : task_id;
    char path[PATH_MAX + 100], dir[PATH_MAX];
    bool found = false;
    if (shared && *shared) {
        snprintf(path, sizeof(path), "%s/tasks/%s.json", shared, id);
        found = load_record(path, t) == 0;
    }
    if (!found) {
        state_dir(dir, sizeof(dir));
        snprintf(path, sizeof(path), "%s/tasks/%s.json", dir, id);
        found = load_record(path, t) == 0;
    }
    if (!found && !(shared && *shared)) {
        snprintf(path, sizeof(path), "%s/tasks/%s.json", default_shared(), id);
        found = load_record(path, t) == 0;
    }
    if (address && *address) {
        char url[600];
        int r = mp_ray_address_resolve(address, url, sizeof(url), d);
        if (r)
            return r;
        snprintf(t->address, sizeof(t->address), "%s", url);
    }
    if (found)
        return 0;
    /* no record: a Ray submission id at the given (or default) address */
    snprintf(t->task_id, sizeof(t->task_id), "%.15s", id);
    snprintf(t->submission_id, sizeof(t->submission_id), "%s", strlen(id) == 8 ? "" : task_id);
    if (!*t->submission_id)
        snprintf(t->submission_id, sizeof(t->submission_id), "magpie-%s", id);
    if (!*t->address) {
        char url[600];
        int r = mp_ray_address_resolve(NULL, url, sizeof(url), d);
        if (r)
            return r;
        snprintf(t->address, sizeof(t->address), "%s", url);
    }
    const char *sh = shared && *shared ? shared : default_shared();
    snprintf(t->shared, sizeof(t->shared), "%s", sh);
    snprintf(t->dir, sizeof(t->dir), "%s/results/%s", sh, t->task_id);
    return 0;
}

/* The answer to a GET of one job's resource */
struct job_answer {
    char path[200]; /* what was asked for */
    long st;        /* HTTP status */
    json_t *json;   /* NULL when the answer was not JSON */
};

/* GET /api/jobs/<submission id><suffix> */
static int job_get(struct mp_ray_client *c, const struct mp_ray_task *t, const char *suffix,
                   struct job_answer *a, struct mp_diag *d)
{
    snprintf(a->path, sizeof(a->path), "/api/jobs/%s%s", t->submission_id, suffix);
    a->st = 0;
    a->json = NULL;
    return ray_json_request(c, "GET", a->path, NULL, &a->st, &a->json, d);
}

static int job_http_error(struct mp_ray_client *c, const char *path, long st, struct mp_diag *d)
{
    return mp_diag_set(d, MP_EIO, "GET %s%s answered HTTP %ld", mp_ray_client_url(c), path, st);
}

/* GET /api/jobs/<id>: *info (NULL when Ray does not know the job). */
static int job_info(struct mp_ray_client *c, const struct mp_ray_task *t, json_t **info,
                    struct mp_diag *d)
{
    struct job_answer a;
    *info = NULL;
    int r = job_get(c, t, "", &a, d);
    if (r)
        return r;
    if (a.st == 200 && json_is_object(a.json)) {
        *info = a.json;
        return 0;
    }
    json_decref(a.json);
    if (a.st == 404 || a.st == 400)
        return 0;
    return job_http_error(c, a.path, a.st, d);
}

static int open_task(const char *task_id, const char *address, const char *shared,
                     struct mp_ray_task *t, struct mp_ray_client **c, struct mp_diag *d)
{
    *c = NULL;
    int r = mp_ray_task_find(task_id, address, shared, t, d);
    if (!r) /* the address as given, so that errors name it */
        r = mp_ray_client_new(address && *address ? address : t->address, 3, 30, c, d);
    return r;
}

/* open_task, then job_info */
static int open_task_info(const char *task_id, const char *address, const char *shared,
                          struct mp_ray_task *t, struct mp_ray_client **c, json_t **info,
                          struct mp_diag *d)
{
    int r = open_task(task_id, address, shared, t, c, d);
    if (!r)
        r = job_info(*c, t, info, d);
    return r;
}

static int get_logs(struct mp_ray_client *c, const struct mp_ray_task *t, char **text,
                    struct mp_diag *d)
{
    struct job_answer a;
    *text = NULL;
    int r = job_get(c, t, "/logs", &a, d);
    if (r)
        return r;
    const char *s = json_string_value(json_object_get(a.json, "logs"));
    if (a.st == 200 && s)
        *text = mp_strdup(s);
    else if (a.st == 404)
        r = mp_diag_set(d, MP_ENOTFOUND, "Ray has no job %s at %s", t->submission_id,
                        mp_ray_client_url(c));
    else
        r = job_http_error(c, a.path, a.st, d);
    json_decref(a.json);
    return r;
}

/* The last n lines of s. */
static json_t *tail_lines(const char *s, int n)
{
    size_t len = strlen(s);
    while (len && s[len - 1] == '\n')
        len--;
    size_t i = len;
    int lines = 0;
    while (i > 0) {
        if (s[i - 1] == '\n' && ++lines == n)
            break;
        i--;
    }
    return json_stringn(s + i, len - i);
}

static json_t *status_obj(struct mp_ray_client *c, const struct mp_ray_task *t, json_t *info)
{
    const char *rs = json_string_value(json_object_get(info, "status"));
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(t->task_id));
    json_object_set_new(o, "status", json_string(mp_ray_status_map(rs)));
    json_object_set_new(o, "ray_status", rs ? json_string(rs) : json_null());
    json_object_set_new(o, "ray_job_id", json_string(t->submission_id));
    const char *msg = json_string_value(json_object_get(info, "message"));
    json_object_set_new(o, "message",
                        json_string(msg    ? msg
                                    : info ? ""
                                           : "Ray does not know this job"));
    if (*t->mode)
        json_object_set_new(o, "mode_type", json_string(t->mode));
    json_object_set_new(o, "result_path", json_string(t->dir));
    if (rs && (strcmp(rs, "FAILED") == 0 || strcmp(rs, "STOPPED") == 0)) {
        char *logs = NULL;
        struct mp_diag d2;
        mp_diag_clear(&d2);
        if (get_logs(c, t, &logs, &d2) == 0 && logs)
            json_object_set_new(o, "error_tail", tail_lines(logs, 30));
        free(logs);
    }
    return o;
}

static int dump(json_t *o, char **json, struct mp_diag *d)
{
    *json = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    return *json ? 0 : mp_diag_set(d, MP_ENOMEM, "out of memory");
}

int mp_ray_task_status(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d)
{
    *json = NULL;
    struct mp_ray_task t;
    struct mp_ray_client *c;
    json_t *info = NULL;
    int r = open_task_info(task_id, address, shared, &t, &c, &info, d);
    if (!r)
        r = dump(status_obj(c, &t, info), json, d);
    json_decref(info);
    mp_ray_client_free(c);
    return r;
}

/* The newest file with one of names in dir or in a directory right below it
 * (the workspaces benchmark_<fw>_<time>/ and the kernel ones). */
static int find_report(const char *dir, const char *const *names, char *out, size_t n)
{
    double best = -1;
    out[0] = 0;
    char p[PATH_MAX];
    DIR *dh = opendir(dir);
    struct dirent *e;
    for (int pass = 0; pass < 2; pass++) {
        const char *sub = "";
        do {
            if (pass == 1) {
                e = dh ? readdir(dh) : NULL;
                if (!e)
                    break;
                if (e->d_name[0] == '.' || strcmp(e->d_name, "inputs") == 0)
                    continue;
                sub = e->d_name;
            }
            for (int k = 0; names[k]; k++) {
                int w = snprintf(p, sizeof(p), "%s/%s%s%s", dir, sub, *sub ? "/" : "", names[k]);
                struct stat st;
                if (w > 0 && (size_t)w < sizeof(p) && stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
                    (double)st.st_mtime >= best) {
                    best = (double)st.st_mtime;
                    snprintf(out, n, "%s", p);
                }
            }
        } while (pass == 1);
    }
    if (dh)
        closedir(dh);
    return out[0] ? 0 : MP_ENOTFOUND;
}

static char *read_text(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, max + 1);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len < max)
        mp_buf_append(&b, chunk, n < max - b.len ? n : max - b.len);
    fclose(f);
    char *s = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return s;
}

int mp_ray_task_result(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d)
{
    *json = NULL;
    struct mp_ray_task t;
    struct mp_ray_client *c;
    json_t *info = NULL;
    int r = open_task_info(task_id, address, shared, &t, &c, &info, d);
    if (r) {
        mp_ray_client_free(c);
        return r;
    }
    const char *rs = json_string_value(json_object_get(info, "status"));
    const char *st = mp_ray_status_map(rs);
    json_t *o = NULL;
    if (strcmp(st, "SUCCEEDED") == 0 || strcmp(st, "FAILED") == 0) {
        static const char *const names[] = {"benchmark_report.json", "analyze_report.json",
                                            "compare_report.json", NULL};
        char rep[PATH_MAX];
        if (find_report(t.dir, names, rep, sizeof(rep)) == 0)
            o = json_load_file(rep, 0, NULL);
        if (json_is_object(o)) {
            json_object_set_new(o, "_result_file", json_string(rep));
        } else {
            json_decref(o);
            o = NULL;
            char out[sizeof(t.dir) + 16];
            snprintf(out, sizeof(out), "%s/output.txt", t.dir);
            char *text = read_text(out, 16u << 20);
            json_t *j = text ? json_loads(text, 0, NULL) : NULL;
            if (json_is_object(j))
                o = j;
            else if (text) {
                json_decref(j);
                o = json_object();
                json_object_set_new(o, "output", json_string(text));
            }
            free(text);
        }
    }
    if (strcmp(st, "SUCCEEDED") == 0 && o) {
        json_object_set_new(o, "_task_id", json_string(t.task_id));
    } else {
        json_t *s = status_obj(c, &t, info);
        json_t *e = json_object();
        json_object_set_new(e, "error",
                            json_string(strcmp(st, "SUCCEEDED") == 0
                                            ? "Task succeeded but left no result"
                                        : strcmp(st, "FAILED") == 0  ? "Task failed"
                                        : strcmp(st, "RUNNING") == 0 ? "Task not finished"
                                                                     : "Task not found"));
        json_object_set_new(e, "status", json_string(st));
        json_object_set_new(e, "hint",
                            json_string(strcmp(st, "RUNNING") == 0
                                            ? "Poll ray_task_status until SUCCEEDED or FAILED"
                                        : strcmp(st, "UNKNOWN") == 0
                                            ? "Check the task id, the Ray address and the shared "
                                              "storage path"
                                            : "See error_tail, or the logs of the task"));
        json_object_set_new(e, "task_id", json_string(t.task_id));
        json_t *tail = json_object_get(s, "error_tail");
        if (tail)
            json_object_set(e, "error_tail", tail);
        json_object_set(e, "message", json_object_get(s, "message"));
        if (o)
            json_object_set_new(e, "result", o);
        json_decref(s);
        o = e;
    }
    r = dump(o, json, d);
    json_decref(info);
    mp_ray_client_free(c);
    return r;
}

/* The answer objects of the job calls below: built from Ray's status code
 * and JSON answer. */
typedef json_t *(*job_answer_fn)(const struct mp_ray_task *t, long status, json_t *ans);

/* One request on a task's job, method on /api/jobs/<submission id><suffix>,
 * whose answer, made by answer(), is dumped into *json. */
static int job_call(const char *task_id, const char *address, const char *shared,
                    const char *method, const char *suffix, job_answer_fn answer, char **json,
                    struct mp_diag *d)
{
    *json = NULL;
    struct mp_ray_task t;
    struct mp_ray_client *c;
    int r = open_task(task_id, address, shared, &t, &c, d);
    long st = 0;
    json_t *ans = NULL;
    if (!r) {
        char path[200];
        snprintf(path, sizeof(path), "/api/jobs/%s%s", t.submission_id, suffix);
        r = ray_json_request(c, method, path, NULL, &st, &ans, d);
    }
    if (!r)
        r = dump(answer(&t, st, ans), json, d);
    json_decref(ans);
    mp_ray_client_free(c);
    return r;
}

static json_t *cancel_answer(const struct mp_ray_task *t, long st, json_t *ans)
{
    bool stopped = st == 200 && json_is_true(json_object_get(ans, "stopped"));
    char e[512];
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(t->task_id));
    json_object_set_new(o, "cancelled", json_boolean(stopped));
    if (stopped)
        json_object_set_new(o, "message",
                            json_string("Stop requested; the job's processes "
                                        "get SIGTERM, then SIGKILL"));
    else if (st == 200)
        json_object_set_new(o, "message", json_string("The job had already ended"));
    else if (st == 404)
        json_object_set_new(o, "message", json_string("Ray does not know this job"));
    else
        json_object_set_new(o, "message", json_string(err_text(ans, e, sizeof(e))));
    return o;
}

int mp_ray_task_cancel(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d)
{
    return job_call(task_id, address, shared, "POST", "/stop", cancel_answer, json, d);
}

static json_t *delete_answer(const struct mp_ray_task *t, long st, json_t *ans)
{
    char e[512];
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(t->task_id));
    json_object_set_new(o, "deleted",
                        json_boolean(st == 200 && json_is_true(json_object_get(ans, "deleted"))));
    json_object_set_new(o, "message", json_string(st == 200 ? "" : err_text(ans, e, sizeof(e))));
    return o;
}

int mp_ray_task_delete(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d)
{
    return job_call(task_id, address, shared, "DELETE", "", delete_answer, json, d);
}

int mp_ray_task_logs(const char *task_id, const char *address, const char *shared, char **text,
                     struct mp_diag *d)
{
    *text = NULL;
    struct mp_ray_task t;
    struct mp_ray_client *c;
    int r = open_task(task_id, address, shared, &t, &c, d);
    if (!r)
        r = get_logs(c, &t, text, d);
    mp_ray_client_free(c);
    return r;
}

static int by_time(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    double tx = json_number_value(json_object_get(x, "submitted_at"));
    double ty = json_number_value(json_object_get(y, "submitted_at"));
    return (tx > ty) - (tx < ty);
}

int mp_ray_task_list(const char *address, const char *shared, char **json, struct mp_diag *d)
{
    (void)shared;
    *json = NULL;
    struct mp_ray_client *c = NULL;
    int r = mp_ray_client_new(address, 3, 30, &c, d);
    long st = 0;
    json_t *ans = NULL;
    if (!r)
        r = ray_json_request(c, "GET", "/api/jobs/", NULL, &st, &ans, d);
    if (!r && (st != 200 || !json_is_array(ans)))
        r = job_http_error(c, "/api/jobs/", st, d);
    if (!r) {
        size_t n = json_array_size(ans), k = 0;
        json_t **v = mp_calloc(n ? n : 1, sizeof(json_t *));
        size_t i;
        json_t *j;
        json_array_foreach(ans, i, j)
        {
            json_t *meta = json_object_get(j, "metadata");
            const char *id = json_string_value(json_object_get(meta, "magpie_task_id"));
            if (!id)
                continue;
            const char *rs = json_string_value(json_object_get(j, "status"));
            json_t *o = json_object();
            json_object_set_new(o, "task_id", json_string(id));
            json_object_set_new(o, "status", json_string(mp_ray_status_map(rs)));
            json_object_set_new(o, "ray_status", rs ? json_string(rs) : json_null());
            json_object_set(o, "ray_job_id", json_object_get(j, "submission_id"));
            json_object_set(o, "mode_type", json_object_get(meta, "magpie_mode"));
            json_object_set(o, "label", json_object_get(meta, "magpie_label"));
            json_t *t0 = json_object_get(j, "start_time");
            json_object_set_new(o, "submitted_at",
                                json_real(json_is_number(t0) ? json_number_value(t0) / 1000 : 0));
            v[k++] = o;
        }
        qsort((void *)v, k, sizeof(json_t *), by_time);
        json_t *tasks = json_array();
        for (i = 0; i < k; i++)
            json_array_append_new(tasks, v[i]);
        free(v);
        json_t *o = json_object();
        json_object_set_new(o, "total", json_integer((json_int_t)k));
        json_object_set_new(o, "tasks", tasks);
        json_object_set_new(o, "ray_cluster", json_string(mp_ray_client_url(c)));
        r = dump(o, json, d);
    }
    json_decref(ans);
    mp_ray_client_free(c);
    return r;
}

int mp_ray_task_wait(const struct mp_ray_task *t, double timeout_s, const volatile int *stop,
                     char status[16], struct mp_diag *d)
{
    struct mp_ray_client *c = NULL;
    int r = mp_ray_client_new(t->address, 3, 30, &c, d);
    uint64_t t0 = mp_time_ns();
    int sleep_ms = 100; /* then 200, ... 500 ms: a GET per half second is nothing to the head */
    snprintf(status, 16, "UNKNOWN");
    while (!r) {
        json_t *info = NULL;
        r = job_info(c, t, &info, d);
        if (r)
            break;
        const char *rs = json_string_value(json_object_get(info, "status"));
        snprintf(status, 16, "%s", mp_ray_status_map(rs));
        bool done = !info || mp_ray_status_terminal(rs);
        json_decref(info);
        if (done)
            break;
        if (stop && *stop) {
            r = mp_diag_set(d, MP_ECANCEL, "stopped waiting for task %s", t->task_id);
            break;
        }
        if (timeout_s > 0 && (double)(mp_time_ns() - t0) / 1e9 > timeout_s) {
            r = mp_diag_set(d, MP_ETIMEOUT, "task %s still %s after %.0f s", t->task_id, status,
                            timeout_s);
            break;
        }
        usleep((useconds_t)sleep_ms * 1000);
        if (sleep_ms < 500)
            sleep_ms += 100;
    }
    mp_ray_client_free(c);
    return r;
}
