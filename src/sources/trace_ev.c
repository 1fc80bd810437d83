/* Kernel names and their launch evidence from a torch-profiler trace: each
 * kernel's correlation id leads to the runtime call that launched it, and
 * the python_function events open on that thread at that time are the
 * Python stack (with_stack=True traces). Runtime launch events that name
 * their kernel (args.kernel; the only record of kernels launched during a
 * CUDA/HIP graph capture) count as launches of that kernel too. The resolver uses the frames to
 * tell same-named kernels of different repositories apart. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <jansson.h>

#include <magpie/io.h>

#include "src_int.h"

#define MAX_FRAMES 16

struct pyev {
    long long tid;
    double ts, end;
    const char *name;
};

struct rt {
    long long corr;
    long long tid;
    double ts;
    bool graph; /* a graph launch: its stack replays the graph, launches nothing itself */
};

static int cmp_py(const void *a, const void *b)
{
    const struct pyev *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static long long jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        return (long long)json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    if (json_is_string(v))
        return atoll(json_string_value(v));
    return -1;
}

static double jnum(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static int read_all(const char *path, struct mp_buf *b, struct mp_diag *d)
{
    struct mp_io_reader *r;
    int rc = mp_io_open(path, &r, d);
    if (rc)
        return rc;
    for (;;) {
        rc = mp_buf_reserve(b, 1 << 20);
        if (rc) {
            mp_diag_set(d, rc, "out of memory reading %s", path);
            break;
        }
        size_t got = 0;
        rc = mp_io_read(r, b->data + b->len, b->cap - b->len, &got, d);
        if (rc || got == 0)
            break;
        b->len += got;
    }
    mp_io_close(r);
    return rc;
}

void mp_src_trace_kernels_fini(struct mp_src_trace_kernels *l)
{
    for (size_t i = 0; i < l->n_packages; i++)
        free(l->packages[i]);
    free(l->packages);
    for (size_t i = 0; i < l->n; i++) {
        free(l->k[i].name);
        for (size_t j = 0; j < l->k[i].n_frames; j++)
            free(l->k[i].frames[j]);
        free(l->k[i].frames);
    }
    free(l->k);
    memset(l, 0, sizeof(*l));
}

/* per kernel name: first correlation ids seen (up to 8) */
struct kinfo {
    long long corr[8];
    int nc;
    unsigned long long calls;    /* kernel events */
    unsigned long long launches; /* runtime launch events naming it (args.kernel) */
};

/* what one pass over the events gathers */
struct tk_scan {
    struct pyev *py; /* python_function events */
    struct rt *rts;  /* runtime calls with a correlation id */
    size_t npy, nrt;
    struct mp_intern *names; /* kernel names, ids index ki */
    struct kinfo *ki;
    size_t cap_ki;
    struct mp_intern *pkgs; /* top-level packages seen */
    char platform;
};

/* The top-level package of a python_function frame, "pkg/mod.py(12): f":
 * the directory after "site-packages/" or "dist-packages/", or the first
 * directory of a relative path; absolute paths outside an installation and
 * single files (stdlib modules) give none. */
static size_t frame_package(const char *f, const char **pkg)
{
    const char *py = strstr(f, ".py(");
    if (!py || f[0] == '<')
        return 0;
    const char *b = f;
    for (const char *k; (k = strstr(b, "-packages/")) != NULL && k < py;)
        b = k + 10;
    if (b == f && f[0] == '/')
        return 0;
    const char *sl = memchr(b, '/', (size_t)(py - b));
    if (!sl || sl == b)
        return 0;
    *pkg = b;
    return (size_t)(sl - b);
}

/* The package behind a custom op's namespace ("aiter::rmsnorm2d_fwd",
 * "sgl_kernel::...", vLLM's "_C::rms_norm", "_C_cache_ops::..."); none
 * for PyTorch's own. */
static size_t op_package(const char *op, const char **pkg)
{
    const char *c = strstr(op, "::");
    if (!c || c == op)
        return 0;
    size_t l = (size_t)(c - op);
    for (size_t i = 0; i < l; i++)
        if (!(isalnum((unsigned char)op[i]) || op[i] == '_'))
            return 0;
    static const char *const torch_ns[] = {"aten",  "prim",     "c10d",   "profiler", "autograd",
                                           "torch", "inductor", "triton", NULL};
    for (size_t i = 0; torch_ns[i]; i++)
        if (strlen(torch_ns[i]) == l && memcmp(op, torch_ns[i], l) == 0)
            return 0;
    /* the extension libraries vLLM registers its ops under */
    if (op[0] == '_' && l >= 2 && op[1] == 'C') {
        *pkg = "vllm";
        return 4;
    }
    if (l >= 7 && memcmp(op, "_rocm_C", 7) == 0) {
        *pkg = "vllm";
        return 4;
    }
    *pkg = op;
    return l;
}

/* the file as JSON and its traceEvents array (root itself for a bare list) */
static int tk_load(const char *path, json_t **root, json_t **evs, struct mp_diag *d)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = read_all(path, &b, d);
    if (rc) {
        mp_buf_fini(&b);
        return rc;
    }
    json_error_t je;
    *root = json_loadb(b.data ? b.data : "", b.len, 0, &je);
    mp_buf_fini(&b);
    if (!*root) {
        mp_diag_set_file(d, path);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return mp_diag_set(d, MP_EPARSE, "not JSON: %s", je.text);
    }
    *evs = json_is_array(*root) ? *root : json_object_get(*root, "traceEvents");
    if (!json_is_array(*evs)) {
        json_decref(*root);
        *root = NULL;
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EPARSE, "no traceEvents array");
    }
    return 0;
}

/* one kernel event (is_kernel) or one runtime launch naming a kernel */
static int tk_kernel(struct tk_scan *s, const char *nm, long long corr, bool is_kernel)
{
    int32_t id = mp_intern_add(s->names, nm, strlen(nm));
    if (id < 0)
        return MP_ENOMEM;
    if ((size_t)id >= s->cap_ki) {
        size_t old = s->cap_ki;
        if (MP_GROW(s->ki, s->cap_ki, (size_t)id + 1, 256))
            return MP_ENOMEM;
        memset(s->ki + old, 0, (s->cap_ki - old) * sizeof(*s->ki));
    }
    if (is_kernel)
        s->ki[id].calls++;
    else
        s->ki[id].launches++;
    if (corr >= 0 && s->ki[id].nc < 8)
        s->ki[id].corr[s->ki[id].nc++] = corr;
    return 0;
}

/* python frames, runtime calls and kernels of the events */
static int tk_collect(const json_t *evs, size_t n, struct tk_scan *s)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(evs, i);
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *nm = json_string_value(json_object_get(e, "name"));
        if (!cat || !nm)
            continue;
        const json_t *args = json_object_get(e, "args");
        const char *pk = NULL;
        size_t pl = strcmp(cat, "python_function") == 0 ? frame_package(nm, &pk)
                    : strcmp(cat, "cpu_op") == 0        ? op_package(nm, &pk)
                                                        : 0;
        if (pl && mp_intern_add(s->pkgs, pk, pl) < 0)
            return MP_ENOMEM;
        if (!s->platform && (strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "hip_runtime") == 0))
            s->platform = strncmp(nm, "hip", 3) == 0 ? 'h' : strncmp(nm, "cu", 2) == 0 ? 'c' : 0;
        if (strcmp(cat, "python_function") == 0) {
            s->py[s->npy].tid = jint(e, "tid");
            s->py[s->npy].ts = jnum(e, "ts");
            s->py[s->npy].end = s->py[s->npy].ts + jnum(e, "dur");
            s->py[s->npy].name = nm;
            s->npy++;
        } else if (strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0 ||
                   strcmp(cat, "hip_runtime") == 0) {
            long long c = args ? jint(args, "correlation") : -1;
            if (c >= 0) {
                s->rts[s->nrt].corr = c;
                s->rts[s->nrt].tid = jint(e, "tid");
                s->rts[s->nrt].ts = jnum(e, "ts");
                s->rts[s->nrt].graph = strstr(nm, "GraphLaunch") != NULL;
                s->nrt++;
            }
            /* a launch naming its kernel (hipModuleLaunchKernel's args.kernel):
             * kernels launched while a CUDA/HIP graph is captured have no
             * kernel event, only this */
            const char *kn = args ? json_string_value(json_object_get(args, "kernel")) : NULL;
            if (kn && kn[0] && c >= 0) {
                int rc = tk_kernel(s, kn, c, false);
                if (rc)
                    return rc;
            }
        } else if (strcmp(cat, "kernel") == 0) {
            int rc = tk_kernel(s, nm, args ? jint(args, "correlation") : -1, true);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* the python events (sorted by thread, start) of r's thread that contain
 * r->ts, up to MAX_FRAMES, innermost first; returns how many */
static size_t tk_stack(const struct tk_scan *s, const struct rt *r, const char **fr, double *fts)
{
    const struct pyev *py = s->py;
    size_t npy = s->npy;
    size_t lo = 0, hi = npy;
    while (lo < hi) { /* first index with tid >= r->tid */
        size_t mid = (lo + hi) / 2;
        if (py[mid].tid < r->tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t nf = 0;
    for (size_t j = lo; j < npy && py[j].tid == r->tid && py[j].ts <= r->ts; j++) {
        if (py[j].end < r->ts || !strstr(py[j].name, ".py("))
            continue;
        /* keep the MAX_FRAMES latest-starting (innermost) */
        if (nf < MAX_FRAMES) {
            fr[nf] = py[j].name;
            fts[nf++] = py[j].ts;
        } else {
            size_t m = 0;
            for (size_t q = 1; q < nf; q++)
                if (fts[q] < fts[m])
                    m = q;
            if (py[j].ts > fts[m]) {
                fr[m] = py[j].name;
                fts[m] = py[j].ts;
            }
        }
    }
    /* innermost first: sort by start time, latest first */
    for (size_t a = 1; a < nf; a++)
        for (size_t q = a; q > 0 && fts[q] > fts[q - 1]; q--) {
            double t = fts[q];
            fts[q] = fts[q - 1];
            fts[q - 1] = t;
            const char *sv = fr[q];
            fr[q] = fr[q - 1];
            fr[q - 1] = sv;
        }
    return nf;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the packages seen, sorted, into out */
static int tk_packages(const struct tk_scan *s, struct mp_src_trace_kernels *out)
{
    int32_t np = mp_intern_count(s->pkgs);
    if (np <= 0)
        return 0;
    out->packages = mp_calloc((size_t)np, sizeof(char *));
    if (!out->packages)
        return MP_ENOMEM;
    for (int32_t i = 0; i < np; i++) {
        out->packages[i] = mp_strdup(mp_intern_str(s->pkgs, i));
        if (!out->packages[i])
            return MP_ENOMEM;
        out->n_packages++;
    }
    qsort(out->packages, out->n_packages, sizeof(char *), cmp_str);
    return 0;
}

/* kernel id's frames: the stack at the first of its launches that has one */
static int tk_frames(const struct tk_scan *s, const struct mp_i64map *corr2rt, int32_t id,
                     struct mp_src_trace_kernel *k)
{
    int rc = 0;
    for (int c = 0; c < s->ki[id].nc && !k->n_frames && !rc; c++) {
        int64_t *ri = mp_i64map_get(corr2rt, s->ki[id].corr[c]);
        if (!ri || s->rts[*ri].graph)
            continue;
        const char *fr[MAX_FRAMES];
        double fts[MAX_FRAMES];
        size_t nf = tk_stack(s, &s->rts[*ri], fr, fts);
        if (!nf)
            continue;
        k->frames = mp_calloc(nf, sizeof(char *));
        if (!k->frames)
            return MP_ENOMEM;
        for (size_t q = 0; q < nf && !rc; q++) {
            k->frames[q] = mp_strdup(fr[q]);
            if (!k->frames[q])
                rc = MP_ENOMEM;
            else
                k->n_frames++;
        }
    }
    return rc;
}

int mp_src_trace_kernels(const char *path, struct mp_src_trace_kernels *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    json_t *root = NULL, *evs = NULL;
    int rc = tk_load(path, &root, &evs, d);
    if (rc)
        return rc;
    size_t n = json_array_size(evs);
    struct tk_scan s = {0};
    s.py = mp_calloc(n ? n : 1, sizeof(*s.py));
    s.rts = mp_calloc(n ? n : 1, sizeof(*s.rts));
    s.names = mp_intern_new();
    s.pkgs = mp_intern_new();
    if (!s.py || !s.rts || !s.names || !s.pkgs)
        rc = MP_ENOMEM;
    if (!rc)
        rc = tk_collect(evs, n, &s);
    struct mp_i64map corr2rt;
    mp_i64map_init(&corr2rt);
    for (size_t i = 0; i < s.nrt && !rc; i++)
        rc = mp_i64map_put(&corr2rt, s.rts[i].corr, (int64_t)i);
    if (!rc)
        qsort(s.py, s.npy, sizeof(*s.py), cmp_py);
    int32_t nk = rc ? 0 : mp_intern_count(s.names);
    if (!rc && nk > 0) {
        out->k = mp_calloc((size_t)nk, sizeof(*out->k));
        if (!out->k)
            rc = MP_ENOMEM;
    }
    for (int32_t id = 0; id < nk && !rc && out->k && s.ki; id++) {
        struct mp_src_trace_kernel *k = &out->k[out->n++];
        k->name = mp_strdup(mp_intern_str(s.names, id));
        k->calls = s.ki[id].calls ? s.ki[id].calls : s.ki[id].launches;
        if (!k->name) {
            rc = MP_ENOMEM;
            break;
        }
        rc = tk_frames(&s, &corr2rt, id, k);
    }
    if (!rc)
        rc = tk_packages(&s, out);
    out->platform = s.platform;
    mp_i64map_fini(&corr2rt);
    free(s.ki);
    mp_intern_free(s.names);
    mp_intern_free(s.pkgs);
    free(s.py);
    free(s.rts);
    json_decref(root);
    if (rc) {
        mp_src_trace_kernels_fini(out);
        return mp_diag_set(d, rc, "out of memory reading %s", path);
    }
    return 0;
}

static ssize_t find_kernel(const struct mp_src_trace_kernels *l, const char *name)
{
    for (size_t i = 0; l && name && i < l->n; i++)
        if (l->k[i].name && strcmp(l->k[i].name, name) == 0)
            return (ssize_t)i;
    return -1;
}

const struct mp_src_trace_kernel *mp_src_trace_kernels_find(const struct mp_src_trace_kernels *l,
                                                            const char *name)
{
    ssize_t i = find_kernel(l, name);
    return i < 0 ? NULL : &l->k[i];
}

struct mp_src_context mp_src_trace_context(const struct mp_src_trace_kernels *l)
{
    struct mp_src_context c = {(const char *const *)l->packages, l->n_packages, l->platform};
    return c;
}

/* into's packages plus from's that it lacks (from's strings moved), sorted */
static int merge_packages(struct mp_src_trace_kernels *into, struct mp_src_trace_kernels *from)
{
    if (!from->n_packages)
        return 0;
    char **p = mp_reallocarray(into->packages, into->n_packages + from->n_packages, sizeof(char *));
    if (!p)
        return MP_ENOMEM;
    into->packages = p;
    for (size_t i = 0; i < from->n_packages; i++) {
        bool dup = false;
        for (size_t j = 0; j < into->n_packages && !dup; j++)
            dup = strcmp(p[j], from->packages[i]) == 0;
        if (dup) {
            free(from->packages[i]);
        } else {
            p[into->n_packages++] = from->packages[i];
        }
        from->packages[i] = NULL;
    }
    qsort(p, into->n_packages, sizeof(char *), cmp_str);
    return 0;
}

int mp_src_trace_kernels_merge(struct mp_src_trace_kernels *into, struct mp_src_trace_kernels *from)
{
    if (!into->platform)
        into->platform = from->platform;
    int rc = merge_packages(into, from);
    if (!rc && from->n) {
        struct mp_src_trace_kernel *k =
            mp_reallocarray(into->k, into->n + from->n, sizeof(*into->k));
        if (!k)
            rc = MP_ENOMEM;
        else
            into->k = k;
    }
    for (size_t i = 0; i < from->n && !rc; i++) {
        struct mp_src_trace_kernel *f = &from->k[i];
        ssize_t ti = find_kernel(into, f->name);
        if (ti < 0) {
            into->k[into->n++] = *f;
            memset(f, 0, sizeof(*f));
            continue;
        }
        struct mp_src_trace_kernel *t = &into->k[ti];
        t->calls += f->calls;
        if (!t->n_frames && f->n_frames) {
            char **fr = t->frames;
            size_t nf = t->n_frames;
            t->frames = f->frames;
            t->n_frames = f->n_frames;
            f->frames = fr;
            f->n_frames = nf;
        }
    }
    return rc;
}
