/* The C harness: runs OpenCL and CUDA kernels itself, in a child process
 * (`magpie analyze --harness-child JOB`), so a crashing or hanging kernel
 * never takes magpie down and the pipeline can time it out.
 *
 * From the kernel's signature it builds arguments: buffers of `size`
 * elements (pointer to const = input, other pointers = outputs), integer
 * scalars = the problem size, float scalars = 0.5. Correctness (reference
 * mode) runs candidate and reference on several seeded random inputs and
 * sizes; outputs are poisoned (all bits set: NaN for floats) before every
 * launch, every buffer has a guard zone after its end that must survive,
 * inputs are read back to catch mutation, NaN/Inf in an output is a
 * failure, and the output of the timed launches is checked again after
 * timing. Timing: warm-up by time, batches sized to >= 20 us, an L2 flush
 * (fill of a buffer twice the cache size) before each sample, device
 * events, and NVBench's stopping rule (min samples, min accumulated device
 * time, relative noise target, wall-clock timeout). In compare mode the
 * candidates are sampled round-robin with a rotating start. */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <magpie/stats.h>

#include "kernel_int.h"

#define GUARD_BYTES 4096
#define GUARD_BYTE 0xA5
#define POISON_BYTE 0xFF

/* ---- signatures ---- */

size_t kern_harness_elem_size(enum harg_elem e)
{
    static const size_t sz[] = {4, 8, 2, 4, 4, 8, 8, 1};
    return sz[e];
}

const char *kern_harness_elem_name(enum harg_elem e)
{
    static const char *const nm[] = {"float", "double", "half",  "int",
                                     "uint",  "long",   "ulong", "char"};
    return nm[e];
}

static bool word_at(const char *s, const char *w, size_t wl)
{
    return strncmp(s, w, wl) == 0 && !(isalnum((unsigned char)s[wl]) || s[wl] == '_');
}

/* Parses one parameter declaration "__global const float *restrict a". */
static int parse_param(const char *p, size_t n, struct harg *a, char *err, size_t errlen)
{
    char buf[256];
    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
    memset(a, 0, sizeof(*a));
    a->pointer = strchr(buf, '*') != NULL || strchr(buf, '[') != NULL;
    const char *star = strchr(buf, '*');
    bool is_unsigned = false, have_type = false;
    char last_ident[64] = "";
    for (const char *q = buf; *q;) {
        if (!(isalpha((unsigned char)*q) || *q == '_')) {
            q++;
            continue;
        }
        const char *st = q;
        while (isalnum((unsigned char)*q) || *q == '_')
            q++;
        size_t wl = (size_t)(q - st);
        if (word_at(st, "const", 5) && (!star || st < star))
            a->is_const = true;
        if (word_at(st, "__constant", 10) || word_at(st, "constant", 8))
            a->is_const = true; /* OpenCL constant address space: read-only */

        static const struct {
            const char *w;
            enum harg_elem e;
        } types[] = {{"float", HE_FLOAT},  {"double", HE_DOUBLE},  {"half", HE_HALF},
                     {"__half", HE_HALF},  {"int", HE_INT},        {"uint", HE_UINT},
                     {"long", HE_LONG},    {"ulong", HE_ULONG},    {"size_t", HE_ULONG},
                     {"char", HE_CHAR},    {"int32_t", HE_INT},    {"uint32_t", HE_UINT},
                     {"int64_t", HE_LONG}, {"uint64_t", HE_ULONG}, {"uchar", HE_CHAR}};

        if (word_at(st, "unsigned", 8)) {
            is_unsigned = true;
            if (!have_type) {
                a->elem = HE_UINT;
                have_type = true;
            }
            continue;
        }
        bool matched = false;
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]) && !matched; i++) {
            if (strlen(types[i].w) == wl && strncmp(st, types[i].w, wl) == 0) {
                enum harg_elem e = types[i].e;
                if (is_unsigned && e == HE_INT)
                    e = HE_UINT;
                if (is_unsigned && e == HE_LONG)
                    e = HE_ULONG;
                if (!(have_type && e == HE_LONG && a->elem == HE_LONG)) /* long long */
                    a->elem = e;
                have_type = matched = true;
            }
        }
        if (!matched && wl < sizeof(last_ident)) {
            memcpy(last_ident, st, wl);
            last_ident[wl] = 0;
        }
    }
    if (!have_type) {
        snprintf(err, errlen,
                 "unsupported parameter type in '%s' (float, double, int, uint, long, "
                 "char and pointers to them are supported)",
                 buf);
        return MP_EUNSUP;
    }
    if (a->elem == HE_HALF) {
        snprintf(err, errlen, "half-precision parameters are not supported by the C harness yet");
        return MP_EUNSUP;
    }
    snprintf(a->name, sizeof(a->name), "%s", last_ident[0] ? last_ident : "arg");
    return 0;
}

int kern_harness_parse_signature(const char *src, const char *name, struct hsig *sig, char *err,
                                 size_t errlen)
{
    memset(sig, 0, sizeof(*sig));
    for (const char *p = src; (p = strstr(p, "void")) != NULL; p += 4) {
        /* a kernel: `__kernel void`, `kernel void`, `__global__ void` before it */
        const char *ls = p;
        while (ls > src && ls[-1] != ';' && ls[-1] != '}' && ls[-1] != '{')
            ls--;
        char pre[256];
        size_t pl = (size_t)(p - ls) < sizeof(pre) - 1 ? (size_t)(p - ls) : sizeof(pre) - 1;
        memcpy(pre, p - pl, pl);
        pre[pl] = 0;
        if (!strstr(pre, "__kernel") && !strstr(pre, "kernel") && !strstr(pre, "__global__"))
            continue;
        if (p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p + 4;
        while (isspace((unsigned char)*q))
            q++;
        const char *ns = q;
        while (isalnum((unsigned char)*q) || *q == '_')
            q++;
        size_t nl = (size_t)(q - ns);
        while (isspace((unsigned char)*q))
            q++;
        if (!nl || *q != '(' || nl >= sizeof(sig->name))
            continue;
        if (name && (strlen(name) != nl || strncmp(ns, name, nl) != 0))
            continue;
        memcpy(sig->name, ns, nl);
        sig->name[nl] = 0;
        const char *a = q + 1;
        int depth = 0;
        for (const char *c = a;; c++) {
            if (!*c) {
                snprintf(err, errlen, "unterminated parameter list of kernel %s", sig->name);
                return MP_EPARSE;
            }
            if (*c == '(')
                depth++;
            else if (*c == ')' && depth > 0)
                depth--;
            else if ((*c == ',' || *c == ')') && depth == 0) {
                size_t len = (size_t)(c - a);
                bool blank = strspn(a, " \t\r\n") >= len;
                if (!blank || *c == ',') {
                    if (sig->nargs >= H_MAX_ARGS) {
                        snprintf(err, errlen, "more than %d parameters", H_MAX_ARGS);
                        return MP_EUNSUP;
                    }
                    if (!(sig->nargs == 0 && *c == ')' && len >= 4 && strstr(a, "void") &&
                          !strchr(a, '*'))) {
                        int rc = parse_param(a, len, &sig->args[sig->nargs], err, errlen);
                        if (rc)
                            return rc;
                        sig->nargs++;
                    }
                }
                a = c + 1;
                if (*c == ')')
                    return 0;
            }
        }
    }
    if (name)
        snprintf(err, errlen, "no kernel named '%s' in the source", name);
    else
        snprintf(err, errlen, "no kernel (__kernel void ... / __global__ void ...) in the source");
    return MP_ENOTFOUND;
}

/* ---- job ---- */

struct tcfg {
    bool enabled;
    struct kern_stop_rule stop;
    double warmup_s;
    bool l2_flush;
    bool power_guard;  /* CUDA: clock probe, throttled samples discarded */
    double cool_ratio; /* a fixed cool-down; < 0: adapted */
};

struct hentry {
    const char *id;
    const char *source; /* source text file */
    const char *module; /* cuda: cubin/ptx */
    const char *kname;
    int ref; /* index of the reference entry, -1 none */
    long long size;
    int ndim;
    size_t global[3], local[3];
    double atol, rtol;
    int seeds;
    bool is_reference;
    /* state */
    bool built;
    char *log;
    char *text; /* the source text built (the reference cache's key) */
    struct hsig sig;
    struct hkern *k;
    json_t *out;
};

/* One set of argument buffers with host images. */
struct hset {
    int nargs;
    size_t n; /* elements */
    struct hval v[H_MAX_ARGS];
    unsigned char *host[H_MAX_ARGS]; /* input images (for mutation checks) */
    size_t bytes[H_MAX_ARGS];        /* without guard */
};

static void set_free(struct hdev *dv, struct hset *s)
{
    for (int i = 0; i < s->nargs; i++) {
        if (s->v[i].buf)
            dv->ops->bfree(s->v[i].buf);
        free(s->host[i]);
    }
    memset(s, 0, sizeof(*s));
}

static uint64_t scalar_dim(const struct hentry *e, size_t n)
{
    return e->ndim >= 2 ? e->global[0] : n;
}

/* Random inputs for seed, poisoned outputs, guard zones. */
static int set_make(struct hdev *dv, const struct hentry *e, size_t n, uint64_t seed,
                    struct hset *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->nargs = e->sig.nargs;
    s->n = n;
    struct mp_rng r;
    mp_rng_seed(&r, seed);
    for (int i = 0; i < e->sig.nargs; i++) {
        const struct harg *a = &e->sig.args[i];
        if (!a->pointer) {
            uint64_t dimv = scalar_dim(e, n);
            switch (a->elem) {
            case HE_FLOAT:
                s->v[i].s.f32 = 0.5f;
                s->v[i].ssize = 4;
                break;
            case HE_DOUBLE:
                s->v[i].s.f64 = 0.5;
                s->v[i].ssize = 8;
                break;
            case HE_INT:
            case HE_UINT:
                s->v[i].s.u32 = (uint32_t)dimv;
                s->v[i].ssize = 4;
                break;
            case HE_LONG:
            case HE_ULONG:
                s->v[i].s.i64 = (int64_t)dimv;
                s->v[i].ssize = 8;
                break;
            default:
                s->v[i].s.bytes[0] = 1;
                s->v[i].ssize = 1;
                break;
            }
            continue;
        }
        size_t es = kern_harness_elem_size(a->elem);
        size_t bytes = n * es;
        s->bytes[i] = bytes;
        unsigned char *img = mp_malloc(bytes + GUARD_BYTES);
        if (!img)
            return MP_ENOMEM;
        s->host[i] = img;
        if (!a->is_const) {
            memset(img, POISON_BYTE, bytes);
        } else {
            for (size_t j = 0; j < n; j++) {
                double u = mp_rng_uniform(&r) * 2 - 1;
                unsigned char *dst = img + j * es;
                switch (a->elem) {
                case HE_FLOAT: {
                    float f = (float)u;
                    memcpy(dst, &f, 4);
                    break;
                }
                case HE_DOUBLE:
                    memcpy(dst, &u, 8);
                    break;
                case HE_INT:
                case HE_UINT: {
                    int32_t v = (int32_t)(u * 1000);
                    if (a->elem == HE_UINT && v < 0)
                        v = -v;
                    memcpy(dst, &v, 4);
                    break;
                }
                case HE_LONG:
                case HE_ULONG: {
                    int64_t v = (int64_t)(u * 1000);
                    if (a->elem == HE_ULONG && v < 0)
                        v = -v;
                    memcpy(dst, &v, 8);
                    break;
                }
                default:
                    dst[0] = (unsigned char)(int)(u * 100);
                    break;
                }
            }
        }
        memset(img + bytes, GUARD_BYTE, GUARD_BYTES);
        /* whole 2 MiB pages: the placement of a buffer then does not depend on
         * the sizes of the buffers allocated before it */
        size_t page = (size_t)2 << 20;
        int rc = dv->ops->alloc(dv, (bytes + GUARD_BYTES + page - 1) / page * page, &s->v[i].buf);
        if (!rc)
            rc = dv->ops->write(dv, s->v[i].buf, img, bytes + GUARD_BYTES);
        if (rc) {
            snprintf(err, errlen, "%s", dv->err);
            return rc;
        }
    }
    return 0;
}

struct cmpstat {
    long long mismatches;
    long long nonfinite;
    long long unwritten;
    double max_abs, max_rel;
    long long first_bad;
    int first_arg;
};

/* Element j of an array of T at p (unaligned), as a double. */
#define ELEM_AT(T, p, j)                                                                           \
    do {                                                                                           \
        T v_;                                                                                      \
        memcpy(&v_, (p) + (j) * sizeof(T), sizeof(T));                                             \
        return (double)v_;                                                                         \
    } while (0)

static double elem_get(const unsigned char *p, enum harg_elem e, size_t j)
{
    switch (e) {
    case HE_FLOAT:
        ELEM_AT(float, p, j);
    case HE_DOUBLE:
        ELEM_AT(double, p, j);
    case HE_INT:
        ELEM_AT(int32_t, p, j);
    case HE_UINT:
        ELEM_AT(uint32_t, p, j);
    case HE_LONG:
        ELEM_AT(int64_t, p, j);
    case HE_ULONG:
        ELEM_AT(uint64_t, p, j);
    default:
        return (signed char)p[j];
    }
}

#undef ELEM_AT

/* Reads every output (+ guard) of s into a fresh array of images. */
static int read_outputs(struct hdev *dv, const struct hentry *e, const struct hset *s,
                        unsigned char **imgs)
{
    for (int i = 0; i < s->nargs; i++) {
        imgs[i] = NULL;
        if (!e->sig.args[i].pointer)
            continue;
        imgs[i] = mp_malloc(s->bytes[i] + GUARD_BYTES);
        if (!imgs[i])
            return MP_ENOMEM;
        int rc = dv->ops->read(dv, s->v[i].buf, imgs[i], s->bytes[i] + GUARD_BYTES);
        if (rc)
            return rc;
    }
    return 0;
}

static void free_imgs(unsigned char **imgs, int n)
{
    for (int i = 0; i < n; i++) {
        free(imgs[i]);
        imgs[i] = NULL;
    }
}

/* Checks guard zones, input mutation; compares outputs with ref (may be
 * NULL: then only finiteness and "was written"). Message into msg. */
static bool check_outputs(const struct hentry *e, const struct hset *s, unsigned char **got,
                          unsigned char **ref, struct cmpstat *cs, bool *mutated, char *msg,
                          size_t len)
{
    bool ok = true;
    for (int i = 0; i < s->nargs && ok; i++) {
        const struct harg *a = &e->sig.args[i];
        if (!a->pointer)
            continue;
        for (size_t g = 0; g < GUARD_BYTES; g++) {
            if (got[i][s->bytes[i] + g] != GUARD_BYTE) {
                snprintf(msg, len,
                         "wrote past the end of '%s' (%zu elements): byte %zu after the end "
                         "changed",
                         a->name, s->n, g);
                return false;
            }
        }
        if (a->is_const) {
            if (memcmp(got[i], s->host[i], s->bytes[i]) != 0) {
                *mutated = true;
                snprintf(msg, len, "input '%s' was modified by the kernel", a->name);
                return false;
            }
            continue;
        }
        double atol = e->atol, rtol = e->rtol;
        if (atol < 0)
            atol = a->elem == HE_FLOAT ? 1e-5 : a->elem == HE_DOUBLE ? 1e-12 : 0;
        if (rtol < 0)
            rtol = a->elem == HE_FLOAT ? 1e-4 : a->elem == HE_DOUBLE ? 1e-9 : 0;
        bool flt = a->elem == HE_FLOAT || a->elem == HE_DOUBLE;
        size_t es = kern_harness_elem_size(a->elem);
        size_t ref_nonfinite = 0;
        for (size_t j = 0; j < s->n; j++) {
            bool poison = true;
            for (size_t b = 0; b < es && poison; b++)
                poison = got[i][j * es + b] == POISON_BYTE;
            double v = elem_get(got[i], a->elem, j);
            bool bad = false;
            if (flt && !isfinite(v)) {
                bool ref_same = ref && !isfinite(elem_get(ref[i], a->elem, j));
                if (!ref_same) {
                    cs->nonfinite++;
                    if (poison)
                        cs->unwritten++;
                    bad = true;
                }
            } else if (ref && flt && !isfinite(elem_get(ref[i], a->elem, j))) {
                bad = true; /* NaN/Inf must match exactly */
            } else if (ref) {
                double rv = elem_get(ref[i], a->elem, j);
                double diff = fabs(v - rv);
                double rel = rv != 0 ? diff / fabs(rv) : (diff ? INFINITY : 0);
                if (diff > cs->max_abs)
                    cs->max_abs = diff;
                if (rel > cs->max_rel && isfinite(rel))
                    cs->max_rel = rel;
                bad = diff > atol + rtol * fabs(rv);
            } else if (poison && !flt) {
                cs->unwritten++; /* integer outputs still all-ones: probably never written */
            }
            if (ref && flt && !isfinite(elem_get(ref[i], a->elem, j)))
                ref_nonfinite++;
            if (bad) {
                if (cs->mismatches == 0) {
                    cs->first_bad = (long long)j;
                    cs->first_arg = i;
                }
                cs->mismatches++;
            }
        }
        if (ref && flt && ref_nonfinite * 2 > s->n) {
            /* the reference itself left NaN (our poison) or produced Inf: the
             * buffer is probably read as well as written, which poisoning
             * cannot check; say so rather than pass on NaN == NaN */
            snprintf(msg, len,
                     "the reference's output '%s' is NaN/Inf in %zu of %zu elements: it reads "
                     "this buffer before writing it (in-place?); mark read-only parameters "
                     "const and give in-place kernels a testcase",
                     a->name, ref_nonfinite, s->n);
            return false;
        }
    }
    if (cs->mismatches) {
        const struct harg *a = &e->sig.args[cs->first_arg];
        if (cs->unwritten == cs->mismatches)
            snprintf(msg, len, "output '%s': %lld of %zu elements never written (first at %lld)",
                     a->name, cs->unwritten, s->n, cs->first_bad);
        else if (cs->nonfinite)
            snprintf(msg, len,
                     "output '%s': %lld elements NaN/Inf, %lld mismatches (first at %lld)", a->name,
                     cs->nonfinite, cs->mismatches, cs->first_bad);
        else
            snprintf(msg, len,
                     "output '%s': %lld of %zu elements differ from the reference (first at "
                     "index %lld; max abs err %.3g, max rel err %.3g)",
                     a->name, cs->mismatches, s->n, cs->first_bad, cs->max_abs, cs->max_rel);
        ok = false;
    }
    return ok;
}

static void geom_for(const struct hentry *e, size_t n, struct hgeom *g)
{
    memset(g, 0, sizeof(*g));
    if (e->ndim >= 2) {
        g->ndim = e->ndim;
        for (int d = 0; d < e->ndim; d++) {
            g->local[d] = e->local[d] ? e->local[d] : (d < 2 ? 16 : 1);
            g->global[d] = (e->global[d] + g->local[d] - 1) / g->local[d] * g->local[d];
        }
        return;
    }
    g->ndim = 1;
    g->local[0] = e->local[0] ? e->local[0] : 256;
    size_t want = e->ndim == 1 && e->global[0] ? e->global[0] : n;
    g->global[0] = (want + g->local[0] - 1) / g->local[0] * g->local[0];
}

char *kern_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, (size_t)1 << 30);
    int rc = mp_buf_read_file(&b, f);
    fclose(f);
    char *s = rc ? NULL : mp_strndup(b.data ? b.data : "", b.len);
    if (s && len)
        *len = b.len;
    mp_buf_fini(&b);
    return s;
}

/* ---- correctness ---- */

static void set_result(json_t *o, const char *key, json_t *v)
{
    json_object_set_new(o, key, v);
}

static double secs_since(uint64_t t0)
{
    return (double)(mp_time_ns() - t0) / 1e9;
}

/* e's "phases" object in its result (where the child's time went) */
static json_t *phases_of(const struct hentry *e)
{
    json_t *ph = json_object_get(e->out, "phases");
    if (!ph) {
        ph = json_object();
        json_object_set_new(e->out, "phases", ph);
    }
    return ph;
}

/* one seed's times: inputs, reference launch, candidate launch, check;
 * from: where the reference's outputs came from (NULL: no reference) */
static void seed_phase(const struct hentry *e, int sd, const double *tm, const char *from)
{
    json_t *ph = phases_of(e);
    json_t *arr = json_object_get(ph, "seeds");
    if (!arr) {
        arr = json_array();
        json_object_set_new(ph, "seeds", arr);
    }
    json_t *o = json_pack("{s:i,s:f,s:f,s:f,s:f}", "seed", sd, "inputs_s", tm[0], "reference_s",
                          tm[1], "candidate_s", tm[2], "check_s", tm[3]);
    if (from) {
        json_object_set_new(o, "reference_cached", json_boolean(strcmp(from, "run") != 0));
        json_object_set_new(o, "reference_from", json_string(from));
    }
    json_array_append_new(arr, o);
}

/* The reference's output images per (reference source text, kernel, size,
 * seed, launch geometry), kept in this process: the candidates of a
 * compare's shared process and the jobs of a warm child (warm.c) run the
 * reference once per seed. The inputs of a seed are the candidate's own
 * (set_make is deterministic), so only the reference's set, launch and
 * read-back are saved. Least recently used entries go past
 * MAGPIE_HARNESS_REF_CACHE_MB (default 1024; 0: off). */
struct refc {
    char *text, *kname;
    size_t n;
    size_t bytes;
    uint64_t used;
    struct hgeom g;
    unsigned char *img[H_MAX_ARGS];
    size_t abytes[H_MAX_ARGS]; /* each image's, guard included */
    int sd;
    int nargs;
};

#define REFC_MAX 64
static struct refc g_refc[REFC_MAX];
static int g_nrefc;
static uint64_t g_refc_tick;

static double refc_limit(void)
{
    const char *v = getenv("MAGPIE_HARNESS_REF_CACHE_MB");
    char *end;
    double mb = v && *v ? strtod(v, &end) : 1024;
    return (v && *v && (*end || !(mb >= 0)) ? 1024 : mb) * 1048576.0;
}

static bool refc_same(const struct refc *c, const struct hentry *ref, size_t n, int sd,
                      const struct hgeom *g)
{
    if (c->n != n || c->sd != sd || c->g.ndim != g->ndim || strcmp(c->text, ref->text) != 0 ||
        strcmp(c->kname, ref->sig.name) != 0)
        return false;
    for (int d = 0; d < 3; d++)
        if (c->g.global[d] != g->global[d] || c->g.local[d] != g->local[d])
            return false;
    return true;
}

/* copies of the cached images into imgs; false when not cached */
static bool refc_get(const struct hentry *ref, size_t n, int sd, const struct hgeom *g, int nargs,
                     unsigned char **imgs)
{
    for (int i = 0; ref->text && i < g_nrefc; i++) {
        struct refc *c = &g_refc[i];
        if (!refc_same(c, ref, n, sd, g) || c->nargs != nargs)
            continue;
        for (int a = 0; a < c->nargs; a++) {
            imgs[a] = NULL;
            if (!c->img[a])
                continue;
            imgs[a] = mp_malloc(c->abytes[a]);
            if (!imgs[a]) {
                free_imgs(imgs, a);
                return false;
            }
            memcpy(imgs[a], c->img[a], c->abytes[a]);
        }
        c->used = ++g_refc_tick;
        return true;
    }
    return false;
}

static void refc_drop(int i)
{
    struct refc *c = &g_refc[i];
    free(c->text);
    free(c->kname);
    free_imgs(c->img, c->nargs);
    g_refc[i] = g_refc[--g_nrefc];
}

static void refc_put(const struct hentry *ref, size_t n, int sd, const struct hgeom *g,
                     const struct hset *rs, unsigned char **imgs)
{
    double limit = refc_limit();
    size_t bytes = 0;
    for (int a = 0; a < rs->nargs; a++)
        bytes += imgs[a] ? rs->bytes[a] + GUARD_BYTES : 0;
    if (!ref->text || (double)bytes > limit)
        return;
    double total = (double)bytes;
    for (int i = 0; i < g_nrefc; i++)
        total += (double)g_refc[i].bytes;
    while (g_nrefc > 0 && (total > limit || g_nrefc == REFC_MAX)) {
        int lru = 0;
        for (int i = 1; i < g_nrefc; i++)
            if (g_refc[i].used < g_refc[lru].used)
                lru = i;
        total -= (double)g_refc[lru].bytes;
        refc_drop(lru);
    }
    struct refc *c = &g_refc[g_nrefc];
    memset(c, 0, sizeof(*c));
    c->text = mp_strdup(ref->text);
    c->kname = mp_strdup(ref->sig.name);
    c->n = n;
    c->sd = sd;
    c->g = *g;
    c->nargs = rs->nargs;
    c->bytes = bytes;
    c->used = ++g_refc_tick;
    bool ok = c->text && c->kname;
    for (int a = 0; a < rs->nargs && ok; a++)
        if (imgs[a]) {
            c->abytes[a] = rs->bytes[a] + GUARD_BYTES;
            c->img[a] = mp_malloc(c->abytes[a]);
            ok = c->img[a] != NULL;
            if (ok)
                memcpy(c->img[a], imgs[a], c->abytes[a]);
        }
    g_nrefc++;
    if (!ok)
        refc_drop(g_nrefc - 1);
}

/* Runs e (and its reference) on seeds x sizes. */
static bool correctness(struct hdev *dv, struct hentry *ents, struct hentry *e, json_t *cj)
{
    struct hentry *ref = e->ref >= 0 ? &ents[e->ref] : NULL;
    if (ref && !ref->built) {
        set_result(cj, "message", json_string("the reference did not build"));
        return false;
    }
    if (ref && ref->sig.nargs != e->sig.nargs) {
        set_result(cj, "message", json_string("the reference has a different signature"));
        return false;
    }
    size_t full = (size_t)e->size;
    size_t sizes[3] = {full, full > 64 ? full - full / 3 - 1 : full, 1};
    /* several sizes only where the launch follows the size (1-D default
     * geometry); an explicit global_size fixes the problem size */
    int nsizes = e->ndim >= 1 ? 1 : 3;
    char msg[512] = "";
    bool ok = true, mutated = false;
    struct cmpstat total = {0, 0, 0, 0, 0, -1, 0};
    int checks = 0;
    for (int sd = 0; sd < e->seeds && ok; sd++) {
        size_t n = sizes[sd % nsizes];
        if (!ref && sd > 0)
            break;
        uint64_t seed = 0x6d61677069650000ULL + (uint64_t)sd;
        struct hgeom g, rg; /* the reference has its own launch geometry */
        geom_for(e, n, &g);
        if (ref)
            geom_for(ref, n, &rg);
        struct hset cs, rs;
        unsigned char *got[H_MAX_ARGS] = {0}, *want[H_MAX_ARGS] = {0};
        char err[512] = "";
        double tm[4] = {0, 0, 0, 0}; /* inputs, reference, candidate, check */
        uint64_t t0 = mp_time_ns();
        int rc = set_make(dv, e, n, seed, &cs, err, sizeof(err));
        bool hit = !rc && ref && refc_limit() > 0 && refc_get(ref, n, sd, &rg, cs.nargs, want);
        memset(&rs, 0, sizeof(rs));
        if (!rc && ref && !hit)
            rc = set_make(dv, ref, n, seed, &rs, err, sizeof(err));
        tm[0] = secs_since(t0);
        t0 = mp_time_ns();
        if (!rc && ref && !hit && (rc = dv->ops->launch(dv, ref->k, &ref->sig, rs.v, &rg, 1, NULL)))
            snprintf(err, sizeof(err), "reference: %.400s", dv->err);
        tm[1] = secs_since(t0);
        t0 = mp_time_ns();
        if (!rc && (rc = dv->ops->launch(dv, e->k, &e->sig, cs.v, &g, 1, NULL)))
            snprintf(err, sizeof(err), "%s", dv->err);
        tm[2] = secs_since(t0);
        t0 = mp_time_ns();
        if (!rc && ref && !hit) {
            rc = read_outputs(dv, ref, &rs, want);
            if (!rc && refc_limit() > 0)
                refc_put(ref, n, sd, &rg, &rs, want);
        }
        if (!rc)
            rc = read_outputs(dv, e, &cs, got);
        if (rc) {
            snprintf(msg, sizeof(msg), "launch failed (n=%zu): %.400s", n, err[0] ? err : dv->err);
            ok = false;
        } else {
            struct cmpstat st = {0, 0, 0, 0, 0, -1, 0};
            char m[400] = "";
            ok = check_outputs(e, &cs, got, ref ? want : NULL, &st, &mutated, m, sizeof(m));
            if (!ok)
                snprintf(msg, sizeof(msg), "seed %d, n=%zu: %s", sd, n, m);
            total.mismatches += st.mismatches;
            if (st.max_abs > total.max_abs)
                total.max_abs = st.max_abs;
            if (st.max_rel > total.max_rel)
                total.max_rel = st.max_rel;
            checks++;
        }
        tm[3] = secs_since(t0);
        seed_phase(e, sd, tm, ref ? (hit ? "memory" : "run") : NULL);
        free_imgs(got, cs.nargs);
        free_imgs(want, cs.nargs);
        set_free(dv, &cs);
        if (ref)
            set_free(dv, &rs);
    }
    set_result(cj, "ran", json_true());
    set_result(cj, "ok", json_boolean(ok));
    set_result(cj, "verified", json_boolean(ok && ref != NULL));
    set_result(cj, "mode", json_string(ref ? "reference" : "finite_check"));
    set_result(cj, "checks", json_integer(checks));
    set_result(cj, "max_abs_err", json_real(total.max_abs));
    set_result(cj, "max_rel_err", json_real(total.max_rel));
    set_result(cj, "mismatches", json_integer(total.mismatches));
    set_result(cj, "input_mutated", json_boolean(mutated));
    if (!ok)
        set_result(cj, "message", json_string(msg));
    else if (!ref)
        set_result(cj, "message",
                   json_string("unverified: no reference to compare with (outputs are finite "
                               "and written)"));
    return ok;
}

/* ---- timing ---- */

struct tstate {
    struct hentry *e;
    struct hset set;
    struct hgeom g;
    int batch;
    bool graph; /* samples are CUDA graph replays of the batch */
    double *samples;
    double *clocks; /* power guard: SM clock before each kept sample */
    int n, cap;
    double sum_ms, mean, m2;
    bool done;
    char reason[160];
    char err[512];
    double nhist[512]; /* the last noise estimates, for the plateau test */
    int nh;
    /* sequential compare: the stop rule's reason, deferred to the next look */
    char rule[160];
    int looks, seq_look, seq_n, seq_nb;
    enum kern_seq_decision dec;
    double seq_lo, seq_hi;
    double inputs_s, warmup_s, recheck_s; /* phases */
};

/* compare's sequential decision in the harness (seqtest.c) */
struct seqcfg {
    bool on;
    int base; /* index of the baseline among the timed */
    int nlooks;
    double alpha, alpha_look, thr;
};

/* NVBench's plateau test: once more than 64 noise estimates are kept,
 * every 16th sample, if the relative spread of the last 512 is below 5 %
 * the noise will not go down any more: the kernel is inherently noisy. */
static bool noise_plateau(struct tstate *t, double nz)
{
    if (!isfinite(nz))
        return false;
    t->nhist[t->nh % 512] = nz;
    t->nh++;
    int m = t->nh < 512 ? t->nh : 512;
    if (m <= 64 || t->nh % 16)
        return false;
    double mean = 0, ss = 0;
    for (int i = 0; i < m; i++)
        mean += t->nhist[i];
    mean /= m;
    for (int i = 0; i < m; i++)
        ss += (t->nhist[i] - mean) * (t->nhist[i] - mean);
    return mean > 0 && sqrt(ss / (m - 1)) / mean < 0.05;
}

static double noise(const struct tstate *t)
{
    if (t->n < 5 || t->mean <= 0)
        return INFINITY;
    return sqrt(t->m2 / (t->n - 1)) / t->mean;
}

/* Removes t's last sample: the power guard found it started a power cap. */
static void drop_last(struct tstate *t)
{
    if (!t || t->n == 0)
        return;
    t->n--;
    t->sum_ms -= t->samples[t->n] * t->batch;
    t->mean = 0;
    t->m2 = 0;
    for (int i = 0; i < t->n; i++) {
        double d = t->samples[i] - t->mean;
        t->mean += d / (i + 1);
        t->m2 += d * (t->samples[i] - t->mean);
    }
}

static int take_sample(struct hdev *dv, struct hbuf *flush, size_t flush_bytes, struct tstate *t,
                       unsigned char fb, struct kern_pguard *pg)
{
    /* the power guard's hold and clock probe go first (nothing when off) */
    if (kern_pguard_pre(dv, pg, t->mean * t->batch * 1000)) {
        snprintf(t->err, sizeof(t->err), "power guard: %.400s", dv->err);
        return MP_EIO;
    }
    /* poison and flush are queued without waiting, so the kernel's start
     * event is queued behind the flush and the device never idles waiting
     * for the host's launch (MAGPIE_SYNC_FLUSH=1: the old synchronous fills,
     * kept to reproduce the between-process split they caused) */
    int (*fill)(struct hdev *, struct hbuf *, unsigned char, size_t) =
        dv->ops->fill_async && !getenv("MAGPIE_SYNC_FLUSH") ? dv->ops->fill_async : dv->ops->fill;
    /* outputs poisoned before every sample (outside the timed region): the
     * re-check after timing then sees what the last timed launch wrote, so
     * a kernel that computes once and then does nothing is caught */
    for (int i = 0; i < t->e->sig.nargs; i++) {
        const struct harg *a = &t->e->sig.args[i];
        if (a->pointer && !a->is_const && fill(dv, t->set.v[i].buf, POISON_BYTE, t->set.bytes[i])) {
            snprintf(t->err, sizeof(t->err), "poisoning '%s': %.400s", a->name, dv->err);
            return MP_EIO;
        }
    }
    /* then the flush, so the poisoned outputs are not left in the cache */
    if (flush && fill(dv, flush, fb, flush_bytes)) {
        snprintf(t->err, sizeof(t->err), "L2 flush: %.400s", dv->err);
        return MP_EIO;
    }
    double ms = 0;
    if (dv->ops->launch(dv, t->e->k, &t->e->sig, t->set.v, &t->g, t->batch, &ms)) {
        snprintf(t->err, sizeof(t->err), "%s", dv->err);
        return MP_EIO;
    }
    t->graph = dv->used_graph;
    if (kern_pguard_post(dv, pg)) {
        snprintf(t->err, sizeof(t->err), "power guard: %.400s", dv->err);
        return MP_EIO;
    }
    bool keep = kern_pguard_judge(pg);
    if (pg->drop_prev) {
        drop_last(pg->pending);
        pg->pending = NULL;
    }
    if (!keep)
        return 0; /* started under a power cap: not a sample */
    pg->pending = t;
    double v = ms / t->batch;
    if (t->n == t->cap) {
        int nc = t->cap ? t->cap * 2 : 256;
        double *ns = mp_reallocarray(t->samples, (size_t)nc, sizeof(double));
        if (!ns)
            return MP_ENOMEM;
        t->samples = ns;
        double *nclk = mp_reallocarray(t->clocks, (size_t)nc, sizeof(double));
        if (!nclk)
            return MP_ENOMEM;
        t->clocks = nclk;
        t->cap = nc;
    }
    t->clocks[t->n] = pg->last_mhz;
    t->samples[t->n++] = v;
    t->sum_ms += ms;
    double delta = v - t->mean;
    t->mean += delta / t->n;
    t->m2 += delta * (v - t->mean);
    return 0;
}

bool kern_timing_stop(const struct kern_stop_rule *r, int n, double sum_ms, double nz, bool plateau,
                      double elapsed_s, char *reason, size_t len)
{
    bool enough = n >= r->min_samples && sum_ms >= r->min_time_ms;
    if (enough && nz <= r->max_noise) {
        snprintf(reason, len, "noise %.3f%% <= %.3f%% after %d samples", nz * 100,
                 r->max_noise * 100, n);
        return true;
    }
    if (enough && plateau) {
        snprintf(reason, len, "noise plateaued at %.3f%% after %d samples", nz * 100, n);
        return true;
    }
    if (n >= r->max_samples) {
        snprintf(reason, len, "max_samples %d reached (noise %.3f%%)", n, nz * 100);
        return true;
    }
    if (elapsed_s >= r->max_time_s && n >= r->min_samples) {
        snprintf(reason, len, "timeout %.1f s reached (noise %.3f%%, %d samples)", r->max_time_s,
                 nz * 100, n);
        return true;
    }
    if (elapsed_s >= r->max_time_s * K_MIN_SAMPLES_GRACE && n >= 2) {
        snprintf(reason, len,
                 "min_samples %d not reached: %d samples in %.1f s (max_time_s %.1f, extended "
                 "%dx for min_samples)",
                 r->min_samples, n, elapsed_s, r->max_time_s, K_MIN_SAMPLES_GRACE);
        return true;
    }
    return false;
}

static bool stop_check(const struct tcfg *tc, struct tstate *t, double elapsed_s)
{
    double nz = noise(t);
    /* the plateau test keeps a history of noise estimates: fed every sample */
    bool plateau = noise_plateau(t, nz);
    return kern_timing_stop(&tc->stop, t->n, t->sum_ms, nz, plateau, elapsed_s, t->reason,
                            sizeof(t->reason));
}

/* Warm-up by time, then the batch size that makes a sample >= 20 us. */
static int warmup(struct hdev *dv, const struct tcfg *tc, struct tstate *t)
{
    uint64_t t0 = mp_time_ns();
    double best = INFINITY;
    int iters = 0;
    do {
        double ms = 0;
        if (dv->ops->launch(dv, t->e->k, &t->e->sig, t->set.v, &t->g, 1, &ms)) {
            snprintf(t->err, sizeof(t->err), "%s", dv->err);
            return MP_EIO;
        }
        if (ms > 0 && ms < best)
            best = ms;
        iters++;
    } while (iters < 1000 && (double)(mp_time_ns() - t0) / 1e9 < tc->warmup_s);
    t->batch = 1;
    if (isfinite(best) && best < 0.020)
        t->batch = (int)ceil(0.020 / best);
    if (t->batch > 1000)
        t->batch = 1000;
    return 0;
}

static void timing_json(struct hdev *dv, const struct tcfg *tc, struct tstate *t,
                        size_t flush_bytes, const struct kern_pguard *pg, json_t *tj)
{
    set_result(tj, "ran", json_true());
    set_result(tj, "ok", json_boolean(!t->err[0] && t->n > 0));
    json_t *arr = json_array();
    for (int i = 0; i < t->n; i++)
        json_array_append_new(arr, json_real(t->samples[i]));
    set_result(tj, "samples_ms", arr);
    set_result(tj, "batch", json_integer(t->batch));
    set_result(tj, "stop_reason", json_string(t->reason));
    set_result(tj, "min_samples_met", json_boolean(t->n >= tc->stop.min_samples));
    set_result(tj, "l2_flush_bytes", json_integer((json_int_t)flush_bytes));
    set_result(tj, "device", json_string(dv->device_name));
    set_result(tj, "cuda_graph", json_boolean(t->graph));
    if (pg->on) {
        set_result(tj, "power_guard", kern_pguard_json(pg, t->clocks, t->n));
        json_t *ca = json_array();
        for (int i = 0; i < t->n; i++)
            json_array_append_new(ca, json_real(round(t->clocks[i] * 10) / 10));
        set_result(tj, "sample_clock_mhz", ca);
    }
    if (t->err[0])
        set_result(tj, "message", json_string(t->err));
}

/* the last look of a candidate of a sequential compare */
static json_t *seq_json(const struct seqcfg *sq, const struct tstate *t)
{
    json_t *o = json_pack("{s:s,s:i,s:i,s:i,s:i,s:f,s:f,s:f}", "decision",
                          kern_seq_decision_name(t->dec), "look", t->seq_look, "looks_max",
                          sq->nlooks, "n", t->seq_n, "n_baseline", t->seq_nb, "alpha", sq->alpha,
                          "alpha_look", sq->alpha_look, "threshold", sq->thr);
    if (isfinite(t->seq_lo) && isfinite(t->seq_hi)) {
        set_result(o, "ratio_lo", json_real(t->seq_lo));
        set_result(o, "ratio_hi", json_real(t->seq_hi));
    }
    return o;
}

/* Checks the output of the timed launches against a fresh reference run on
 * the same inputs. */
static void recheck(struct hdev *dv, struct hentry *ents, struct tstate *t, json_t *cj)
{
    struct hentry *e = t->e;
    if (e->ref < 0 || !ents[e->ref].built)
        return;
    struct hentry *ref = &ents[e->ref];
    struct hset rs;
    char err[256];
    unsigned char *got[H_MAX_ARGS] = {0}, *want[H_MAX_ARGS] = {0};
    bool ok = false;
    char msg[400] = "";
    struct hgeom rg;
    geom_for(ref, t->set.n, &rg);
    if (!set_make(dv, ref, t->set.n, 0x74696d6500ULL, &rs, err, sizeof(err)) &&
        !dv->ops->launch(dv, ref->k, &ref->sig, rs.v, &rg, 1, NULL) &&
        !read_outputs(dv, ref, &rs, want) && !read_outputs(dv, e, &t->set, got)) {
        struct cmpstat st = {0, 0, 0, 0, 0, -1, 0};
        bool mutated = false;
        ok = check_outputs(e, &t->set, got, want, &st, &mutated, msg, sizeof(msg));
    } else {
        snprintf(msg, sizeof(msg), "re-check could not run: %.300s", dv->err);
    }
    free_imgs(got, t->set.nargs);
    free_imgs(want, rs.nargs);
    set_free(dv, &rs);
    set_result(cj, "recheck_done", json_true());
    set_result(cj, "recheck_ok", json_boolean(ok));
    if (!ok) {
        set_result(cj, "ok", json_false());
        char m[512];
        snprintf(m, sizeof(m), "output of the timed launches is wrong: %s", msg);
        set_result(cj, "message", json_string(m));
    }
}

/* A candidate of a sequential compare after a sample: the stop rule's
 * reason is kept but acted on only at a look (a stop between looks would
 * make the verdict's look data-dependent), except the time limit, which
 * takes one last look of its own; at a look the interval of the ratio
 * decides. */
static void seq_check(const struct tcfg *tc, const struct seqcfg *sq, const struct tstate *b,
                      struct tstate *t, double el)
{
    if (stop_check(tc, t, el) && !t->rule[0])
        snprintf(t->rule, sizeof(t->rule), "%s", t->reason);
    t->reason[0] = 0;
    bool timeout = t->rule[0] && el >= tc->stop.max_time_s;
    if (kern_seq_is_look(t->n, tc->stop.min_samples, tc->stop.max_samples) ||
        (timeout && t->n > t->seq_n)) {
        double lo, hi;
        enum kern_seq_decision d =
            kern_seq_look(b->samples, b->n, t->samples, t->n, sq->alpha_look, sq->thr, &lo, &hi);
        t->looks++;
        t->seq_look = t->looks;
        t->seq_n = t->n;
        t->seq_nb = b->n;
        t->seq_lo = lo;
        t->seq_hi = hi;
        t->dec = d;
        if (d != K_SEQ_UNDECIDED) {
            snprintf(t->reason, sizeof(t->reason),
                     "decided %s at look %d (%d samples, baseline %d)", kern_seq_decision_name(d),
                     t->looks, t->n, b->n);
            return;
        }
        if (t->rule[0]) {
            snprintf(t->reason, sizeof(t->reason), "%s", t->rule);
            return;
        }
    }
    if (timeout)
        snprintf(t->reason, sizeof(t->reason), "%s", t->rule);
}

/* after a round: the stop rules; true when every kernel is done */
static bool round_check(const struct tcfg *tc, const struct seqcfg *sq, struct tstate *ts, int nidx,
                        double el)
{
    bool all = true;
    for (int j = 0; j < nidx; j++) {
        struct tstate *t = &ts[j];
        if (t->done || t->reason[0])
            continue;
        if (!sq->on)
            stop_check(tc, t, el / (nidx ? nidx : 1));
        else if (j != sq->base)
            seq_check(tc, sq, &ts[sq->base], t, el / (nidx ? nidx : 1));
        all = all && (t->done || t->reason[0]);
    }
    if (!sq->on)
        return all;
    /* the baseline runs while a candidate does */
    all = true;
    for (int j = 0; j < nidx; j++)
        all = all && (j == sq->base || ts[j].done || ts[j].reason[0]);
    struct tstate *b = &ts[sq->base];
    if (all && !b->done && !b->reason[0])
        snprintf(b->reason, sizeof(b->reason), "the candidates were decided (%d samples)", b->n);
    return all;
}

/* round-robin over the kernels with a rotating start, until every kernel
 * stopped or the time limit */
static void time_interleaved(struct hdev *dv, const struct tcfg *tc, const struct seqcfg *sq,
                             struct tstate *ts, int nidx, struct hbuf *flush, size_t flush_bytes,
                             struct kern_pguard *pg)
{
    unsigned char fb = 0;
    uint64_t t0 = mp_time_ns();
    for (int round = 0;; round++) {
        bool any = false;
        double el = secs_since(t0);
        for (int j = 0; j < nidx; j++) {
            struct tstate *t = &ts[(j + round) % nidx];
            /* fixed: a kernel keeps sampling after its rule said stop, so
             * the rounds stay interleaved; sequential: a decided candidate
             * stops, that is the point */
            if (t->done || (sq->on && t->reason[0]))
                continue;
            if (take_sample(dv, flush, flush_bytes, t, fb++, pg)) {
                t->done = true;
                continue;
            }
            any = true;
        }
        bool all = round_check(tc, sq, ts, nidx, el);
        if (!any || all || el > tc->stop.max_time_s * K_MIN_SAMPLES_GRACE * nidx + 1)
            break;
    }
}

static void time_all(struct hdev *dv, const struct tcfg *tc, struct hentry *ents, const int *idx,
                     int nidx, bool interleave, const struct seqcfg *sq)
{
    struct tstate *ts = mp_calloc((size_t)(nidx ? nidx : 1), sizeof(*ts));
    if (!ts)
        return;
    struct kern_pguard pg;
    if (kern_pguard_setup(dv, &pg, tc->power_guard, tc->cool_ratio))
        memset(&pg, 0, sizeof(pg)); /* the probe would not run: time without it */
    size_t flush_bytes = 0;
    struct hbuf *flush = NULL;
    if (tc->l2_flush) {
        flush_bytes = dv->l2_bytes ? 2 * dv->l2_bytes : (size_t)64 << 20;
        if (dv->ops->alloc(dv, flush_bytes, &flush))
            flush = NULL, flush_bytes = 0;
    }
    for (int i = 0; i < nidx; i++) {
        struct tstate *t = &ts[i];
        t->e = &ents[idx[i]];
        t->seq_lo = t->seq_hi = NAN;
        geom_for(t->e, (size_t)t->e->size, &t->g);
        uint64_t p0 = mp_time_ns();
        int mk = set_make(dv, t->e, (size_t)t->e->size, 0x74696d6500ULL, &t->set, t->err,
                          sizeof(t->err));
        t->inputs_s = secs_since(p0);
        p0 = mp_time_ns();
        if (mk == 0)
            warmup(dv, tc, t);
        t->warmup_s = secs_since(p0);
        if (t->err[0])
            t->done = true;
    }
    uint64_t l0 = mp_time_ns();
    if (interleave) {
        time_interleaved(dv, tc, sq, ts, nidx, flush, flush_bytes, &pg);
    } else {
        unsigned char fb = 0;
        for (int i = 0; i < nidx; i++) {
            struct tstate *t = &ts[i];
            uint64_t t0 = mp_time_ns();
            while (!t->done) {
                if (take_sample(dv, flush, flush_bytes, t, fb++, &pg))
                    break;
                if (stop_check(tc, t, secs_since(t0)))
                    break;
            }
        }
    }
    double loop_s = secs_since(l0);
    for (int i = 0; i < nidx; i++) {
        struct tstate *t = &ts[i];
        if (!t->reason[0] && !t->err[0])
            snprintf(t->reason, sizeof(t->reason), "%s",
                     t->rule[0] ? t->rule : "stopped with the other candidates");
        json_t *tj = json_object_get(t->e->out, "timing");
        timing_json(dv, tc, t, flush ? flush_bytes : 0, &pg, tj);
        if (sq->on && i != sq->base)
            set_result(tj, "sequential", seq_json(sq, t));
        uint64_t r0 = mp_time_ns();
        if (!t->err[0])
            recheck(dv, ents, t, json_object_get(t->e->out, "correctness"));
        json_t *ph = phases_of(t->e);
        set_result(ph, "timing_inputs_s", json_real(t->inputs_s));
        set_result(ph, "warmup_s", json_real(t->warmup_s));
        set_result(ph, "timing_loop_s", json_real(loop_s));
        set_result(ph, "timed_device_s", json_real(t->sum_ms / 1000));
        set_result(ph, "recheck_s", json_real(secs_since(r0)));
        set_free(dv, &t->set);
        free(t->samples);
        free(t->clocks);
    }
    if (flush)
        dv->ops->bfree(flush);
    free(ts);
}

/* The job's "sequential" object: {baseline: id, alpha, threshold} when
 * compare decides sequentially and the baseline is among the timed. */
static void seq_setup(json_t *job, const struct tcfg *tc, struct hentry *ents, const int *timed,
                      int ntimed, struct seqcfg *sq)
{
    memset(sq, 0, sizeof(*sq));
    json_t *sj = json_object_get(job, "sequential");
    const char *bid = json_string_value(json_object_get(sj, "baseline"));
    if (!bid || ntimed < 2)
        return;
    sq->base = -1;
    for (int i = 0; i < ntimed; i++)
        if (ents[timed[i]].id && !strcmp(ents[timed[i]].id, bid))
            sq->base = i;
    if (sq->base < 0)
        return;
    json_t *a = json_object_get(sj, "alpha"), *th = json_object_get(sj, "threshold");
    sq->alpha = json_is_number(a) ? json_number_value(a) : 0.05;
    sq->thr = json_is_number(th) ? json_number_value(th) : 0.01;
    sq->nlooks = kern_seq_nlooks(tc->stop.min_samples, tc->stop.max_samples);
    sq->alpha_look = sq->alpha / ((ntimed - 1) * sq->nlooks);
    sq->on = true;
}

/* ---- the job ---- */

static double jnum(json_t *o, const char *k, double def)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : def;
}

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int write_result(json_t *res, const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (json_dump_file(res, tmp, JSON_INDENT(1)) != 0)
        return 1;
    return rename(tmp, path) == 0 ? 0 : 1;
}

static void on_watchdog(int sig)
{
    (void)sig;
    _exit(3);
}

/* In a job of several kernels (compare's shared process) one kernel's checks
 * must not hang it past correctness_timeout_s: SIGALRM ends the process
 * without a result, and magpie checks each kernel in a process of its own.
 * Returns the seconds to arm per kernel, 0 for none. */
static unsigned watchdog_setup(json_t *job)
{
    double t = jnum(job, "correctness_timeout_s", 0);
    if (!(t >= 1) || t > 1e6)
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_watchdog;
    sigaction(SIGALRM, &sa, NULL);
    return (unsigned)ceil(t);
}

/* seconds since the epoch (CLOCK_REALTIME: comparable across processes) */
static double epoch_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* opens the device; the process's start and open times into res.process */
static int open_device(struct hdev *dv, json_t *job, json_t *res, double started, char *err,
                       size_t len)
{
    json_t *proc = json_object();
    json_object_set_new(res, "process", proc);
    double spawned = jnum(job, "spawned_at", 0);
    if (spawned > 0)
        json_object_set_new(proc, "start_s", json_real(fmax(0, started - spawned)));
    uint64_t o0 = mp_time_ns();
    int rc = dv->ops->open(dv, err, len);
    json_object_set_new(proc, "device_open_s", json_real(secs_since(o0)));
    return rc;
}

/* The harness's device back-ends, found by the job's back-end word (a
 * kernel language row's backend: mp_kernel_lang); module: build takes the
 * path of a module compiled before the job rather than the source text. */
static const struct {
    const struct hdev_ops *ops;
    bool module;
} DEVICES[] = {
    {&kern_harness_opencl_ops, false}, /* the first: the one of an unknown word */
    {&kern_harness_cuda_ops, true},
};

static int device_of(const char *backend)
{
    for (int i = 0; i < (int)(sizeof(DEVICES) / sizeof(DEVICES[0])); i++)
        if (strcmp(backend, DEVICES[i].ops->name) == 0)
            return i;
    return 0;
}

/* Opens the job's device into dv, or (the loop mode: held_dev not NULL)
 * keeps the one open from the job before when it is the same device. */
static int job_device(struct hdev *dv, int dev, json_t *job, json_t *res, double started,
                      int *held_dev, char *err, size_t len)
{
    if (held_dev && *held_dev == dev) { /* warm: the device stays open */
        json_t *proc = json_object();
        json_object_set_new(proc, "warm", json_true());
        double spawned = jnum(job, "spawned_at", 0);
        if (spawned > 0)
            json_object_set_new(proc, "dispatch_s", json_real(fmax(0, started - spawned)));
        json_object_set_new(res, "process", proc);
        return 0;
    }
    if (held_dev && *held_dev >= 0) {
        dv->ops->close(dv);
        *held_dev = -1;
    }
    memset(dv, 0, sizeof(*dv));
    dv->ops = DEVICES[dev].ops;
    int rc = open_device(dv, job, res, started, err, len);
    if (held_dev && rc == 0)
        *held_dev = dev;
    return rc;
}

/* Whether the loop mode may run another job after this result: no device
 * error and every kernel that ran passed (a failed kernel on a CPU device
 * such as PoCL runs in this process and may have written anywhere; a
 * kernel that did not build ran nothing). */
static bool job_trusted(json_t *res)
{
    if (json_object_get(res, "device_error"))
        return false;
    json_t *ks = json_object_get(res, "kernels");
    for (size_t i = 0; i < json_array_size(ks); i++) {
        json_t *cj = json_object_get(json_array_get(ks, i), "correctness");
        if (json_is_true(json_object_get(cj, "ran")) && !json_is_true(json_object_get(cj, "ok")))
            return false;
    }
    return true;
}

/* Builds entry e on dv (module: the device loads a compiled module rather
 * than the source) into its result's "build". */
static void entry_build(struct hdev *dv, bool module, struct hentry *e)
{
    char log[8192] = "";
    uint64_t b0 = mp_time_ns();
    char *src = e->source ? kern_read_file(e->source, NULL) : NULL;
    if (e->source && !src)
        snprintf(log, sizeof(log), "cannot read %s", e->source);
    if (src && kern_harness_parse_signature(src, e->kname, &e->sig, log, sizeof(log)) == 0) {
        const char *what = module ? e->module : src;
        if (what && dv->ops->build(dv, what, e->sig.name, &e->k, log, sizeof(log)) == 0) {
            e->built = true;
            e->text = mp_strdup(src);
        } else if (!what)
            snprintf(log, sizeof(log), "no compiled module");
    }
    free(src);
    json_t *bj = json_object();
    json_object_set_new(bj, "ok", json_boolean(e->built));
    json_object_set_new(bj, "log", json_string(log));
    json_object_set_new(bj, "kernel_name", json_string(e->sig.name));
    json_object_set_new(e->out, "build", bj);
    json_object_set_new(phases_of(e), "build_s", json_real(secs_since(b0)));
}

/* One job. held: the loop mode's device kept between jobs (NULL: open and
 * close one here), held_dev its DEVICES index, -1 when none is open;
 * *trusted: job_trusted (the loop mode keeps the process only then). */
static int run_job_in(const char *job_path, double started, struct hdev *held, int *held_dev,
                      bool *trusted)
{
    json_error_t je;
    json_t *job = json_load_file(job_path, 0, &je);
    if (!job) {
        fprintf(stderr, "magpie harness: cannot read job %s: %s\n", job_path, je.text);
        return 2;
    }
    const char *output = jstr(job, "output");
    const char *backend = jstr(job, "backend");
    const char *mode = jstr(job, "mode");
    if (!output || !backend || !mode) {
        json_decref(job);
        return 2;
    }
    json_t *res = json_object(), *kout = json_array();
    json_object_set_new(res, "kernels", kout);
    int dev = device_of(backend);
    struct hdev own = {.ops = DEVICES[dev].ops}, *dvp = held ? held : &own;
    char err[1024] = "";
    json_t *karr = json_object_get(job, "kernels");
    size_t nk = json_array_size(karr);
    struct hentry *ents = mp_calloc(nk ? nk : 1, sizeof(*ents));
    int rc = job_device(dvp, dev, job, res, started, held ? held_dev : NULL, err, sizeof(err));
    struct hdev dv = *dvp;
    if (rc) {
        json_object_set_new(res, "device_error", json_string(err));
        goto out;
    }
    json_object_set_new(res, "device", json_string(dv.device_name));
    json_object_set_new(res, "l2_bytes", json_integer((json_int_t)dv.l2_bytes));
    for (size_t i = 0; i < nk; i++) {
        json_t *kj = json_array_get(karr, i);
        struct hentry *e = &ents[i];
        e->id = jstr(kj, "id");
        e->source = jstr(kj, "source");
        e->module = jstr(kj, "module");
        e->kname = jstr(kj, "kernel_name");
        e->ref = (int)jnum(kj, "ref", -1);
        e->size = (long long)jnum(kj, "size", 0);
        e->ndim = (int)jnum(kj, "ndim", 0);
        e->atol = jnum(kj, "atol", -1);
        e->rtol = jnum(kj, "rtol", -1);
        e->seeds = (int)jnum(kj, "seeds", 3);
        e->is_reference = json_is_true(json_object_get(kj, "is_reference"));
        json_t *gl = json_object_get(kj, "global"), *lo = json_object_get(kj, "local");
        for (int d = 0; d < 3; d++) {
            e->global[d] = (size_t)json_integer_value(json_array_get(gl, (size_t)d));
            e->local[d] = (size_t)json_integer_value(json_array_get(lo, (size_t)d));
        }
        if (e->size <= 0) {
            e->size = 1;
            if (e->ndim >= 2)
                for (int d = 0; d < e->ndim; d++)
                    e->size *= (long long)(e->global[d] ? e->global[d] : 1);
            else
                e->size = e->ndim == 1 && e->global[0] ? (long long)e->global[0] : 1 << 20;
        }
        e->out = json_object();
        json_object_set_new(e->out, "id", json_string(e->id ? e->id : "?"));
        json_object_set_new(e->out, "correctness", json_object());
        json_object_set_new(e->out, "timing", json_object());
        json_array_append_new(kout, e->out);
        entry_build(&dv, DEVICES[dev].module, e);
    }
    if (strcmp(mode, "build") == 0)
        goto out;
    if (strcmp(mode, "profile") == 0) { /* for ncu: a few plain launches of each */
        for (size_t i = 0; i < nk; i++) {
            struct hentry *e = &ents[i];
            struct hset s;
            struct hgeom g;
            if (!e->built || e->is_reference)
                continue;
            geom_for(e, (size_t)e->size, &g);
            if (set_make(&dv, e, (size_t)e->size, 1, &s, err, sizeof(err)) == 0)
                for (int r = 0; r < 3; r++)
                    dv.ops->launch(&dv, e->k, &e->sig, s.v, &g, 1, NULL);
            set_free(&dv, &s);
        }
        goto out;
    }
    json_t *tj = json_object_get(job, "timing");
    struct tcfg tc = {
        .enabled = json_is_true(json_object_get(tj, "enabled")),
        .stop =
            {
                .min_samples = (int)jnum(tj, "min_samples", 10),
                .max_samples = (int)jnum(tj, "max_samples", 10000),
                .min_time_ms = jnum(tj, "min_time_s", 0.5) * 1000,
                .max_noise = jnum(tj, "max_noise", 0.005),
                .max_time_s = jnum(tj, "max_time_s", 15),
            },
        .warmup_s = jnum(tj, "warmup_s", 0.1),
        .l2_flush = !json_is_false(json_object_get(tj, "l2_flush")),
        .power_guard = !json_is_false(json_object_get(tj, "power_guard")),
        .cool_ratio = jnum(tj, "cool_ratio", -1),
    };
    int *timed = mp_calloc(nk ? nk : 1, sizeof(int));
    int ntimed = 0;
    unsigned watch = watchdog_setup(job);
    for (size_t i = 0; i < nk; i++) {
        struct hentry *e = &ents[i];
        if (!e->built || e->is_reference)
            continue;
        if (watch > 0)
            alarm(watch);
        bool ok = correctness(&dv, ents, e, json_object_get(e->out, "correctness"));
        alarm(0);
        if (ok && tc.enabled && timed)
            timed[ntimed++] = (int)i;
    }
    struct seqcfg sq;
    seq_setup(job, &tc, ents, timed, ntimed, &sq);
    if (ntimed)
        time_all(&dv, &tc, ents, timed, ntimed, json_is_true(json_object_get(job, "interleave")),
                 &sq);
    free(timed);
out:
    for (size_t i = 0; i < nk; i++) {
        if (ents[i].k)
            dv.ops->kfree(ents[i].k);
        free(ents[i].text);
    }
    *trusted = job_trusted(res);
    free(ents);
    if (held)
        *held = dv; /* what the device's calls updated */
    else if (dv.impl)
        dv.ops->close(&dv);
    int wr = write_result(res, output);
    json_decref(res);
    json_decref(job);
    return wr ? 1 : 0;
}

int kern_harness_run_job(const char *job_path)
{
    bool trusted;
    return run_job_in(job_path, epoch_s(), NULL, NULL, &trusted);
}

/* The loop mode (`--harness-child -`, a warm child of the pool in warm.c):
 * jobs as lines of JSON {seq, job, log, cwd} on stdin; "start SEQ" and
 * "done SEQ keep|retire" on fd 3; the device stays open between jobs. */
static int serve(void)
{
    int rep = fcntl(3, F_DUPFD_CLOEXEC, 10);
    if (rep < 0)
        return 2;
    close(3);
    FILE *rf = fdopen(rep, "w");
    if (!rf)
        return 2;
    struct hdev held = {0};
    int held_dev = -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, stdin) > 0) {
        double started = epoch_s();
        json_t *req = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
        const char *seq = jstr(req, "seq"), *job = jstr(req, "job"), *log = jstr(req, "log"),
                   *cwd = jstr(req, "cwd");
        if (!seq || !job || !log || !cwd) {
            json_decref(req);
            rc = 2;
            break;
        }
        fprintf(rf, "start %s\n", seq);
        fflush(rf);
        fflush(stdout);
        fflush(stderr);
        int lf = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (lf >= 0) {
            dup2(lf, 1);
            dup2(lf, 2);
            close(lf);
        }
        bool trusted = false;
        if (chdir(cwd) == 0)
            run_job_in(job, started, &held, &held_dev, &trusted);
        fflush(stdout);
        fflush(stderr);
        fprintf(rf, "done %s %s\n", seq, trusted ? "keep" : "retire");
        fflush(rf);
        json_decref(req);
        if (!trusted)
            break;
    }
    free(line);
    if (held_dev >= 0)
        held.ops->close(&held);
    fclose(rf);
    return rc;
}

int mp_kernel_harness_main(const char *job_path)
{
    if (strcmp(job_path, "-") == 0)
        return serve();
    return kern_harness_run_job(job_path);
}
