/* Kernel names and their launch evidence from a torch-profiler trace: each
 * kernel's correlation id leads to the runtime call that launched it, and
 * the python_function events open on that thread at that time are the
 * Python stack (with_stack=True traces). The resolver uses the frames to
 * tell same-named kernels of different repositories apart. */
#include <stdlib.h>
#include <string.h>

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
    for (size_t i = 0; i < l->n; i++) {
        free(l->k[i].name);
        for (size_t j = 0; j < l->k[i].n_frames; j++)
            free(l->k[i].frames[j]);
        free(l->k[i].frames);
    }
    free(l->k);
    memset(l, 0, sizeof(*l));
}

int mp_src_trace_kernels(const char *path, struct mp_src_trace_kernels *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = read_all(path, &b, d);
    if (rc) {
        mp_buf_fini(&b);
        return rc;
    }
    json_error_t je;
    json_t *root = json_loadb(b.data ? b.data : "", b.len, 0, &je);
    mp_buf_fini(&b);
    if (!root) {
        mp_diag_set_file(d, path);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return mp_diag_set(d, MP_EPARSE, "not JSON: %s", je.text);
    }
    json_t *evs = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    if (!json_is_array(evs)) {
        json_decref(root);
        mp_diag_set_file(d, path);
        return mp_diag_set(d, MP_EPARSE, "no traceEvents array");
    }
    size_t n = json_array_size(evs);
    struct pyev *py = mp_calloc(n ? n : 1, sizeof(*py));
    struct rt *rts = mp_calloc(n ? n : 1, sizeof(*rts));
    struct mp_intern *names = mp_intern_new();
    size_t npy = 0, nrt = 0;

    /* per kernel name: first correlation ids seen (up to 8) */
    struct kinfo {
        long long corr[8];
        int nc;
        unsigned long long calls;
    } *ki = NULL;

    size_t cap_ki = 0;
    if (!py || !rts || !names)
        rc = MP_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        const json_t *e = json_array_get(evs, i);
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *nm = json_string_value(json_object_get(e, "name"));
        if (!cat || !nm)
            continue;
        const json_t *args = json_object_get(e, "args");
        if (strcmp(cat, "python_function") == 0) {
            py[npy].tid = jint(e, "tid");
            py[npy].ts = jnum(e, "ts");
            py[npy].end = py[npy].ts + jnum(e, "dur");
            py[npy].name = nm;
            npy++;
        } else if (strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0 ||
                   strcmp(cat, "hip_runtime") == 0) {
            long long c = args ? jint(args, "correlation") : -1;
            if (c >= 0) {
                rts[nrt].corr = c;
                rts[nrt].tid = jint(e, "tid");
                rts[nrt].ts = jnum(e, "ts");
                nrt++;
            }
        } else if (strcmp(cat, "kernel") == 0) {
            int32_t id = mp_intern_add(names, nm, strlen(nm));
            if (id < 0) {
                rc = MP_ENOMEM;
                break;
            }
            if ((size_t)id >= cap_ki) {
                size_t nc = cap_ki ? cap_ki * 2 : 256;
                struct kinfo *nk = mp_reallocarray(ki, nc, sizeof(*nk));
                if (!nk) {
                    rc = MP_ENOMEM;
                    break;
                }
                memset(nk + cap_ki, 0, (nc - cap_ki) * sizeof(*nk));
                ki = nk;
                cap_ki = nc;
            }
            ki[id].calls++;
            long long c = args ? jint(args, "correlation") : -1;
            if (c >= 0 && ki[id].nc < 8)
                ki[id].corr[ki[id].nc++] = c;
        }
    }
    struct mp_i64map corr2rt;
    mp_i64map_init(&corr2rt);
    for (size_t i = 0; i < nrt && !rc; i++)
        rc = mp_i64map_put(&corr2rt, rts[i].corr, (int64_t)i);
    if (!rc)
        qsort(py, npy, sizeof(*py), cmp_py);
    int32_t nk = rc ? 0 : mp_intern_count(names);
    if (!rc && nk > 0) {
        out->k = mp_calloc((size_t)nk, sizeof(*out->k));
        if (!out->k)
            rc = MP_ENOMEM;
    }
    for (int32_t id = 0; id < nk && !rc && out->k && ki; id++) {
        struct mp_src_trace_kernel *k = &out->k[out->n++];
        k->name = mp_strdup(mp_intern_str(names, id));
        k->calls = ki[id].calls;
        if (!k->name) {
            rc = MP_ENOMEM;
            break;
        }
        for (int c = 0; c < ki[id].nc && !k->n_frames && !rc; c++) {
            int64_t *ri = mp_i64map_get(&corr2rt, ki[id].corr[c]);
            if (!ri)
                continue;
            const struct rt *r = &rts[*ri];
            /* python events of that thread that contain r->ts, innermost first */
            size_t lo = 0, hi = npy;
            while (lo < hi) { /* first index with tid >= r->tid */
                size_t mid = (lo + hi) / 2;
                if (py[mid].tid < r->tid)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            const char *fr[MAX_FRAMES];
            double fts[MAX_FRAMES];
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
            if (!nf)
                continue;
            /* innermost first: sort by start time, latest first */
            for (size_t a = 1; a < nf; a++)
                for (size_t q = a; q > 0 && fts[q] > fts[q - 1]; q--) {
                    double t = fts[q];
                    fts[q] = fts[q - 1];
                    fts[q - 1] = t;
                    const char *s = fr[q];
                    fr[q] = fr[q - 1];
                    fr[q - 1] = s;
                }
            k->frames = mp_calloc(nf, sizeof(char *));
            if (!k->frames) {
                rc = MP_ENOMEM;
                break;
            }
            for (size_t q = 0; q < nf && !rc; q++) {
                k->frames[q] = mp_strdup(fr[q]);
                if (!k->frames[q])
                    rc = MP_ENOMEM;
                else
                    k->n_frames++;
            }
        }
    }
    mp_i64map_fini(&corr2rt);
    free(ki);
    mp_intern_free(names);
    free(py);
    free(rts);
    json_decref(root);
    if (rc) {
        mp_src_trace_kernels_fini(out);
        return mp_diag_set(d, rc, "out of memory reading %s", path);
    }
    return 0;
}
