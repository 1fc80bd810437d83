/* Scheduled torch-profiler captures during one measured load (Magpie's
 * AgentX profiling: profiler.torch_profiler num_steps, num_profiles,
 * start_seconds, interval_seconds; docs/workloads.md, "Agentic workloads
 * and profiler captures"). A thread started with the measured load takes
 * capture k at start_seconds (k = 1) or interval_seconds after capture
 * k-1's traces were flushed: POST the engine's profiler start, wait until
 * the engine ends the capture itself (vLLM after num_steps steps: new trace
 * files appear) or duration_seconds pass, POST its profiler stop, wait for
 * the traces to hold still, and move the files that appeared into
 * torch_trace/profile_NNN/. A load that ends stops the capture in progress
 * (kept) and the captures not yet started (the report says so). Then each
 * capture gets its own kernel summary and, with TraceLens on, its own
 * reports under captures/profile_NNN/. The engine keeps one profiler dir
 * (torch_trace/), so the engine's command line is the same as for one
 * window; what a capture wrote is what appeared between its start and its
 * flush (files present before, and vLLM's capture_traces/ start-up
 * snapshots, stay where they are).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>
#include <magpie/pipeline.h>
#include <magpie/serve.h>
#include <magpie/trace.h>

#include "serve_int.h"
#include "serve_run_int.h"

struct serve_capture {
    double start_s, stop_s; /* from the measured load's start */
    double start_unix;      /* wall clock at the profiler start (capture.json) */
    bool by_engine;         /* the engine ended it (its step bound) before duration_seconds */
    size_t n_files;
    char error[600];
    struct mp_buf kernels;   /* kernel summary JSON of its traces */
    struct mp_buf tracelens; /* its tracelens_analysis JSON (TraceLens on) */
};

struct serve_captures {
    struct serve_run *r;
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done; /* the measured load ended */
    uint64_t t0_ns;
    struct serve_capture *caps;
    int n, taken;
    char stop_reason[200];
    struct mp_buf snap; /* "\n"-joined relative paths present before a capture */
};

/* ---- trace files in torch_trace/ ---- */

/* top-level entries that are not a capture's: vLLM's start-up snapshots,
 * the splitter's output and earlier captures */
static bool reserved(const char *name)
{
    return strcmp(name, "capture_traces") == 0 || strcmp(name, "graph_capture_profile") == 0 ||
           strcmp(name, "trace_split") == 0 || strncmp(name, "profile_", 8) == 0;
}

typedef void (*file_fn)(const char *rel, off_t size, void *user);

static void walk(const char *root, const char *rel, int depth, file_fn fn, void *user)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *dp = opendir(path);
    if (!dp)
        return;
    for (struct dirent *de; (de = readdir(dp));) {
        const char *nm = de->d_name;
        if (nm[0] == '.' || (depth == 0 && reserved(nm)))
            continue;
        size_t ln = strlen(nm);
        if (ln > 4 && strcmp(nm + ln - 4, ".tmp") == 0)
            continue; /* a file still being written under its temporary name */
        char sub[4096], full[12288];
        snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", nm);
        snprintf(full, sizeof(full), "%s/%s", root, sub);
        struct stat st;
        if (lstat(full, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < 4)
            walk(root, sub, depth + 1, fn, user);
        else if (S_ISREG(st.st_mode))
            fn(sub, st.st_size, user);
    }
    closedir(dp);
}

static void snap_add(const char *rel, off_t size, void *user)
{
    (void)size;
    struct mp_buf *b = user;
    mp_buf_printf(b, "%s\n", rel);
}

static bool in_snap(const struct mp_buf *snap, const char *rel)
{
    size_t n = strlen(rel);
    for (const char *p = snap->data; p && (p = strstr(p, rel));) {
        if ((p == snap->data || p[-1] == '\n') && p[n] == '\n')
            return true;
        p += n;
    }
    return false;
}

struct new_files {
    const struct mp_buf *snap;
    size_t n;
    long long bytes;
    const char *move_to; /* non-NULL: move each new file there */
    const char *root;
    int errors;
};

static void new_file(const char *rel, off_t size, void *user)
{
    struct new_files *nf = user;
    if (in_snap(nf->snap, rel))
        return;
    nf->n++;
    nf->bytes += size;
    if (!nf->move_to)
        return;
    char src[8192], dst[8192];
    snprintf(src, sizeof(src), "%s/%s", nf->root, rel);
    snprintf(dst, sizeof(dst), "%s/%s", nf->move_to, rel);
    char *slash = strrchr(dst, '/');
    *slash = 0;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_fs_mkdirs(dst, &d);
    *slash = '/';
    if (rc || rename(src, dst) != 0)
        nf->errors++;
}

static struct new_files count_new(struct serve_captures *cs, const char *move_to)
{
    struct new_files nf = {.snap = &cs->snap, .move_to = move_to, .root = cs->r->trace_dir};
    walk(cs->r->trace_dir, "", 0, new_file, &nf);
    return nf;
}

/* ---- waiting ---- */

static double now_s(const struct serve_captures *cs)
{
    return (double)(mp_time_ns() - cs->t0_ns) / 1e9;
}

/* Sleeps until t (s from the load's start), at most step_s; true when the
 * load ended (with load_ends) or the run's deadline passed. */
static bool nap(struct serve_captures *cs, double t, double step_s, bool load_ends)
{
    double wait = t - now_s(cs);
    if (wait > step_s)
        wait = step_s;
    pthread_mutex_lock(&cs->mu);
    if (wait > 0 && !(load_ends && cs->done)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = ts.tv_nsec + (long long)(wait * 1e9);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&cs->cv, &cs->mu, &ts);
    }
    bool end = load_ends && cs->done;
    pthread_mutex_unlock(&cs->mu);
    return end || serve_run_remaining_s(cs->r) <= 0;
}

/* until t, or the load's end: true when the load ended first */
static bool wait_until(struct serve_captures *cs, double t)
{
    while (now_s(cs) < t)
        if (nap(cs, t, 0.5, true))
            return true;
    return nap(cs, t, 0, true);
}

/* the start request's body: the row's template with {num_steps} */
static void start_body(const struct mp_serve_config *c, const char *tmpl, char *out, size_t len)
{
    const char *p = strstr(tmpl, "{num_steps}");
    if (!p)
        snprintf(out, len, "%s", tmpl);
    else
        snprintf(out, len, "%.*s%d%s", (int)(p - tmpl), tmpl, c->capture.num_steps, p + 11);
}

static int profiler_post(struct serve_captures *cs, const char *what, const char *json,
                         double timeout_s, char *err, size_t len)
{
    char url[1200], e[256];
    long st = 0;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    snprintf(url, sizeof(url), "%s%s", cs->r->base_url, what);
    int rc = serve_http_json("POST", url, json, timeout_s, &st, &b, e, sizeof(e));
    mp_buf_fini(&b);
    if (rc)
        snprintf(err, len, "POST %s failed: %s", what, e);
    else if (st < 200 || st >= 300)
        snprintf(err, len, "POST %s failed: HTTP %ld", what, st);
    return rc ? rc : (st < 200 || st >= 300 ? MP_EIO : 0);
}

/* the load ended because the engine died: no trace is coming */
static bool engine_gone(struct serve_captures *cs)
{
    pthread_mutex_lock(&cs->mu);
    bool gone = cs->done && cs->r->died; /* died is written before done */
    pthread_mutex_unlock(&cs->mu);
    return gone;
}

/* a flush may overrun the run's deadline a little, as the single window's */
static double flush_limit(struct serve_captures *cs)
{
    double lim = cs->r->c->capture.flush_timeout_s, rem = serve_run_remaining_s(cs->r) + 60;
    return lim < rem ? lim : rem;
}

/* new trace files present and their sizes still for 2 s, within limit_s */
static size_t wait_flushed(struct serve_captures *cs, double limit_s)
{
    double until = now_s(cs) + limit_s;
    long long last = -1;
    int stable = 0;
    size_t n = 0;
    while (now_s(cs) < until) {
        struct new_files nf = count_new(cs, NULL);
        n = nf.n;
        stable = n && nf.bytes == last ? stable + 1 : 0;
        if (stable >= 4)
            break;
        last = nf.bytes;
        if (engine_gone(cs))
            break;
        nap(cs, until, 0.5, false);
    }
    return n;
}

/* ---- one capture ---- */

static int take_capture(struct serve_captures *cs, int k)
{
    struct serve_run *r = cs->r;
    const struct mp_serve_config *c = r->c;
    const struct mp_serve_engine *e = mp_serve_config_engine(c);
    struct serve_capture *cap = &cs->caps[k];
    mp_buf_reset(&cs->snap);
    walk(r->trace_dir, "", 0, snap_add, &cs->snap);
    cap->start_s = now_s(cs);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    cap->start_unix = (double)wall.tv_sec + (double)wall.tv_nsec * 1e-9;
    char body[1024] = "";
    if (e->profile_start_body)
        start_body(c, e->profile_start_body, body, sizeof(body));
    int rc = profiler_post(cs, e->profile_start, body[0] ? body : NULL,
                           c->capture.capture_timeout_s, cap->error, sizeof(cap->error));
    if (rc)
        return rc;
    /* the engine's own step bound, else duration_seconds, else the load's end */
    double until = cap->start_s + c->capture.duration_s;
    while (now_s(cs) < until && !cap->by_engine) {
        if (nap(cs, until, 0.2, true))
            break;
        cap->by_engine = count_new(cs, NULL).n > 0;
    }
    rc = profiler_post(cs, e->profile_stop, NULL, flush_limit(cs), cap->error, sizeof(cap->error));
    if (rc && !cap->by_engine)
        return rc;
    cap->error[0] = 0; /* a stop after the engine stopped by itself may be refused */
    if (wait_flushed(cs, flush_limit(cs)) == 0) {
        snprintf(cap->error, sizeof(cap->error),
                 "capture %d: no torch traces appeared in torch_trace/ within %g s of the "
                 "profiler stop",
                 k + 1, c->capture.flush_timeout_s);
        return MP_ENOTFOUND;
    }
    char dir[4600];
    snprintf(dir, sizeof(dir), "%s/profile_%03d", r->trace_dir, k + 1);
    struct new_files nf = count_new(cs, dir);
    cap->n_files = nf.n - (size_t)nf.errors;
    if (nf.errors)
        snprintf(cap->error, sizeof(cap->error), "capture %d: %d trace file(s) could not be moved",
                 k + 1, nf.errors);
    cap->stop_s = now_s(cs);
    return 0;
}

static void *capture_thread(void *arg)
{
    struct serve_captures *cs = arg;
    const struct mp_serve_captures *sc = &cs->r->c->capture;
    double next = sc->start_s;
    for (int k = 0; k < cs->n; k++) {
        if (wait_until(cs, next)) {
            snprintf(cs->stop_reason, sizeof(cs->stop_reason), "%s before capture %d was due",
                     serve_run_remaining_s(cs->r) <= 0 ? "the run's deadline passed"
                                                       : "the measured load ended",
                     k + 1);
            break;
        }
        int rc = take_capture(cs, k);
        cs->taken = k + 1;
        if (rc) {
            snprintf(cs->stop_reason, sizeof(cs->stop_reason), "capture %d failed", k + 1);
            break;
        }
        next = cs->caps[k].stop_s + sc->interval_s;
    }
    return NULL;
}

/* ---- the run's side ---- */

int serve_captures_start(struct serve_run *r)
{
    struct serve_captures *cs = calloc(1, sizeof(*cs));
    int n = r->c->capture.num_profiles;
    if (!cs || !(cs->caps = calloc((size_t)n, sizeof(*cs->caps)))) {
        free(cs);
        serve_run_error(r, "profiler captures: out of memory");
        return MP_ENOMEM;
    }
    cs->r = r;
    cs->n = n;
    for (int k = 0; k < n; k++) {
        mp_buf_init(&cs->caps[k].kernels, 0);
        mp_buf_init(&cs->caps[k].tracelens, 0);
    }
    mp_buf_init(&cs->snap, 0);
    pthread_mutex_init(&cs->mu, NULL);
    pthread_cond_init(&cs->cv, NULL);
    cs->t0_ns = mp_time_ns();
    r->cap = cs;
    if (pthread_create(&cs->th, NULL, capture_thread, cs) != 0) {
        serve_run_error(r, "profiler captures: cannot start their thread");
        return MP_EIO;
    }
    cs->started = true;
    return 0;
}

void serve_captures_finish(struct serve_run *r)
{
    struct serve_captures *cs = r->cap;
    if (!cs || !cs->started)
        return;
    pthread_mutex_lock(&cs->mu);
    cs->done = true;
    pthread_cond_broadcast(&cs->cv);
    pthread_mutex_unlock(&cs->mu);
    pthread_join(cs->th, NULL);
    cs->started = false;
    for (int k = 0; k < cs->taken; k++)
        if (cs->caps[k].error[0])
            serve_run_error_log(r, cs->caps[k].error);
    if (cs->taken < cs->n) {
        char w[400];
        snprintf(w, sizeof(w), "profiler captures: %d of %d taken; %s", cs->taken, cs->n,
                 cs->stop_reason);
        if (cs->taken == 0)
            serve_run_error(r, "%s", w);
        else
            serve_run_warning(r, w);
    }
}

int serve_captures_taken(const struct serve_run *r)
{
    return r->cap ? r->cap->taken : 0;
}

/* the first capture that holds traces (the report's top-level analyses) */
const char *serve_captures_first_dir(struct serve_run *r, char *buf, size_t len)
{
    struct serve_captures *cs = r->cap;
    for (int k = 0; cs && k < cs->taken; k++)
        if (cs->caps[k].n_files) {
            if ((size_t)snprintf(buf, len, "%s/profile_%03d", r->trace_dir, k + 1) >= len)
                return NULL;
            return buf;
        }
    return NULL;
}

/* One capture's reports: its kernel summary, and TraceLens (inference
 * stages, or pytorch mode) into captures/profile_NNN/. */
static void capture_reports(struct serve_run *r, int k, struct serve_capture *cap)
{
    const struct mp_serve_config *c = r->c;
    char tdir[4600], out[4700];
    snprintf(tdir, sizeof(tdir), "%s/profile_%03d", r->trace_dir, k + 1);
    snprintf(out, sizeof(out), "%s/captures/profile_%03d", r->ws, k + 1);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_kernel_summary *ks = NULL;
    if (mp_kernel_summary_run(tdir, NULL, NULL, &ks, &d) == 0)
        mp_kernel_summary_json(ks, &cap->kernels);
    else
        serve_run_error(r, "capture %d: kernel summary failed: %s", k + 1, d.msg);
    mp_kernel_summary_free(ks);
    if (!c->tracelens)
        return;
    mp_diag_clear(&d);
    if (mp_fs_mkdirs(out, &d)) {
        serve_run_error(r, "capture %d: %s", k + 1, d.msg);
        return;
    }
    if (mp_serve_tracelens_inference(c)) {
        serve_run_tracelens_stages(r, tdir, out, &cap->tracelens);
        return;
    }
    char first[1200] = "";
    size_t ne = serve_tracelens_pytorch(c, tdir, out, &cap->tracelens, first, sizeof(first));
    if (ne)
        serve_run_error(r, "capture %d: TraceLens (pytorch): %zu error(s); first: %s", k + 1, ne,
                        first);
}

/* ---- captures/profile_NNN/capture.json ---- */

/* what a trace file holds: device kernels ("kernel"), copies and sets on the
 * device ("gpu_memcpy", "gpu_memset"), host operators ("cpu_op") */
struct trace_kinds {
    uint64_t events, gpu_kernels, gpu_mem, cpu_ops;
};

static bool cat_is(struct mp_strview v, const char *s)
{
    return v.n == strlen(s) && memcmp(v.p, s, v.n) == 0;
}

static int count_kind(const struct mp_trace_event *ev, void *user)
{
    struct trace_kinds *tk = user;
    tk->events++;
    if (cat_is(ev->cat, "kernel"))
        tk->gpu_kernels++;
    else if (cat_is(ev->cat, "gpu_memcpy") || cat_is(ev->cat, "gpu_memset"))
        tk->gpu_mem++;
    else if (cat_is(ev->cat, "cpu_op"))
        tk->cpu_ops++;
    return 0;
}

struct manifest_walk {
    struct serve_run *r;
    const char *dir;
    struct mp_buf *b;
    int k, n, n_traces, n_no_gpu;
    long long bytes;
};

static bool is_trace_name(const char *rel)
{
    size_t n = strlen(rel);
    return (n > 5 && strcmp(rel + n - 5, ".json") == 0) ||
           (n > 8 && strcmp(rel + n - 8, ".json.gz") == 0);
}

static void manifest_file(const char *rel, off_t size, void *user)
{
    struct manifest_walk *mw = user;
    struct mp_buf *b = mw->b;
    mp_buf_puts(b, mw->n++ ? ",\n    " : "\n    ");
    mp_buf_puts(b, "{\"path\": ");
    mp_json_str(b, rel, strlen(rel));
    mp_buf_printf(b, ", \"bytes\": %lld", (long long)size);
    mw->bytes += size;
    if (!is_trace_name(rel)) {
        mp_buf_puts(b, ", \"trace\": false}");
        return;
    }
    mw->n_traces++;
    char path[8192];
    snprintf(path, sizeof(path), "%s/%s", mw->dir, rel);
    struct trace_kinds tk = {0};
    struct mp_trace_parse_opts po = {.on_event = count_kind, .user = &tk};
    struct mp_diag d;
    mp_diag_clear(&d);
    if (mp_trace_parse_file(path, &po, NULL, &d) != 0) {
        mp_buf_puts(b, ", \"trace\": true, \"error\": ");
        mp_json_str(b, d.msg, strlen(d.msg));
        mp_buf_putc(b, '}');
        mw->n_no_gpu++;
        return;
    }
    mp_buf_printf(b,
                  ", \"trace\": true, \"events\": %llu, \"gpu_kernels\": %llu, "
                  "\"gpu_memcpy_memset\": %llu, \"cpu_ops\": %llu, \"holds_gpu_kernels\": %s, "
                  "\"holds_cpu_ops\": %s}",
                  (unsigned long long)tk.events, (unsigned long long)tk.gpu_kernels,
                  (unsigned long long)tk.gpu_mem, (unsigned long long)tk.cpu_ops,
                  tk.gpu_kernels ? "true" : "false", tk.cpu_ops ? "true" : "false");
    if (!tk.gpu_kernels) {
        mw->n_no_gpu++;
        char w[600];
        snprintf(w, sizeof(w),
                 "capture %d: %s holds no GPU kernels (%llu CPU ops): a CPU engine, or the "
                 "profiler did not record the device",
                 mw->k + 1, rel, (unsigned long long)tk.cpu_ops);
        serve_run_warning(mw->r, w);
    }
}

/* Writes captures/profile_NNN/capture.json: what capture k took (its
 * schedule, times, steps, and every file moved into its trace dir with its
 * size and, for a trace, how many GPU kernels and CPU ops it holds). */
static void capture_manifest(struct serve_run *r, int k, const struct serve_capture *cap)
{
    const struct mp_serve_config *c = r->c;
    char tdir[4600], out[4700], path[4800];
    snprintf(tdir, sizeof(tdir), "%s/profile_%03d", r->trace_dir, k + 1);
    snprintf(out, sizeof(out), "%s/captures/profile_%03d", r->ws, k + 1);
    snprintf(path, sizeof(path), "%s/capture.json", out);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    mp_buf_printf(&b,
                  "{\n  \"index\": %d,\n  \"framework\": \"%s\",\n  \"trace_dir\": "
                  "\"torch_trace/profile_%03d\",\n  \"start_unix\": ",
                  k + 1, mp_serve_config_engine(c)->name, k + 1);
    mp_json_double(&b, cap->start_unix);
    mp_buf_puts(&b, ",\n  \"start_s\": ");
    mp_json_double(&b, cap->start_s);
    mp_buf_puts(&b, ",\n  \"stop_s\": ");
    mp_json_double(&b, cap->stop_s > 0 ? cap->stop_s : NAN);
    mp_buf_printf(&b, ",\n  \"num_steps\": %d,\n  \"ended_by_engine\": %s,\n  \"error\": ",
                  c->capture.num_steps, cap->by_engine ? "true" : "false");
    if (cap->error[0])
        mp_json_str(&b, cap->error, strlen(cap->error));
    else
        mp_buf_puts(&b, "null");
    mp_buf_puts(&b, ",\n  \"files\": [");
    struct manifest_walk mw = {.r = r, .dir = tdir, .b = &b, .k = k};
    walk(tdir, "", 0, manifest_file, &mw);
    mp_buf_printf(&b,
                  "%s],\n  \"n_files\": %d,\n  \"bytes\": %lld,\n  \"traces\": %d,\n  "
                  "\"all_traces_hold_gpu_kernels\": %s\n}\n",
                  mw.n ? "\n  " : "", mw.n, mw.bytes, mw.n_traces,
                  mw.n_traces && !mw.n_no_gpu ? "true" : "false");
    struct mp_diag d;
    mp_diag_clear(&d);
    if (mp_fs_mkdirs(out, &d) || mp_fs_write_atomic(path, b.data, b.len, &d))
        serve_run_error(r, "capture %d: cannot write capture.json: %s", k + 1, d.msg);
    mp_buf_fini(&b);
}

void serve_captures_reports(struct serve_run *r)
{
    struct serve_captures *cs = r->cap;
    for (int k = 0; cs && k < cs->taken; k++) {
        capture_manifest(r, k, &cs->caps[k]);
        if (!cs->caps[k].n_files)
            continue;
        char stage[64];
        snprintf(stage, sizeof(stage), "capture %d reports", k + 1);
        serve_run_progress(r, stage, (size_t)k, 0, (size_t)cs->taken);
        capture_reports(r, k, &cs->caps[k]);
    }
}

/* The first capture's tracelens_analysis (the report's top-level one). */
const char *serve_captures_tracelens(struct serve_run *r)
{
    struct serve_captures *cs = r->cap;
    for (int k = 0; cs && k < cs->taken; k++)
        if (cs->caps[k].tracelens.len)
            return mp_buf_cstr(&cs->caps[k].tracelens);
    return NULL;
}

/* magpie.captures: the schedule, and each capture taken */
void serve_captures_json(struct serve_run *r, struct mp_buf *b)
{
    struct serve_captures *cs = r->cap;
    const struct mp_serve_captures *sc = &r->c->capture;
    mp_buf_printf(b,
                  "{\"planned\": %d, \"taken\": %d, \"num_steps\": %d, \"start_seconds\": ", cs->n,
                  cs->taken, sc->num_steps);
    mp_json_double(b, sc->start_s);
    mp_buf_puts(b, ", \"interval_seconds\": ");
    mp_json_double(b, sc->interval_s);
    mp_buf_puts(b, ", \"duration_seconds\": ");
    mp_json_double(b, sc->duration_s);
    mp_buf_puts(b, ", \"stop_reason\": ");
    if (cs->stop_reason[0])
        mp_json_str(b, cs->stop_reason, strlen(cs->stop_reason));
    else
        mp_buf_puts(b, "null");
    mp_buf_puts(b, ", \"profiles\": [");
    for (int k = 0; k < cs->taken; k++) {
        struct serve_capture *cap = &cs->caps[k];
        mp_buf_printf(b,
                      "%s{\"index\": %d, \"trace_dir\": \"torch_trace/profile_%03d\", "
                      "\"reports_dir\": ",
                      k ? ", " : "", k + 1, k + 1);
        if (cap->tracelens.len)
            mp_buf_printf(b, "\"captures/profile_%03d\"", k + 1);
        else
            mp_buf_puts(b, "null");
        mp_buf_printf(b, ", \"manifest\": \"captures/profile_%03d/capture.json\"", k + 1);
        mp_buf_puts(b, ", \"start_s\": ");
        mp_json_double(b, cap->start_s);
        mp_buf_puts(b, ", \"stop_s\": ");
        mp_json_double(b, cap->stop_s > 0 ? cap->stop_s : NAN);
        mp_buf_printf(b, ", \"ended_by_engine\": %s, \"files\": %zu, \"error\": ",
                      cap->by_engine ? "true" : "false", cap->n_files);
        if (cap->error[0])
            mp_json_str(b, cap->error, strlen(cap->error));
        else
            mp_buf_puts(b, "null");
        mp_buf_puts(b, ", \"kernel_summary\": ");
        mp_buf_puts(b, cap->kernels.len ? mp_buf_cstr(&cap->kernels) : "null");
        mp_buf_puts(b, ", \"tracelens_analysis\": ");
        mp_buf_puts(b, cap->tracelens.len ? mp_buf_cstr(&cap->tracelens) : "null");
        mp_buf_putc(b, '}');
    }
    mp_buf_puts(b, "]}");
}

void serve_captures_free(struct serve_run *r)
{
    struct serve_captures *cs = r->cap;
    if (!cs)
        return;
    serve_captures_finish(r);
    for (int k = 0; k < cs->n; k++) {
        mp_buf_fini(&cs->caps[k].kernels);
        mp_buf_fini(&cs->caps[k].tracelens);
    }
    mp_buf_fini(&cs->snap);
    pthread_mutex_destroy(&cs->mu);
    pthread_cond_destroy(&cs->cv);
    free(cs->caps);
    free(cs);
    r->cap = NULL;
}
