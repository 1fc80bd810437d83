/* Dense GEMM throughput per data type through cuBLASLt: for each shape of
 * the search, the library's heuristic candidates (up to 8, every one it
 * offers with thorough) are screened with short batches, the best (shape,
 * algorithm) is timed for the figure, and its output is checked against a
 * float64 reference on the host at sampled entries. Layout "TN" (A and B
 * stored K-major, as a linear layer's x @ W^T), which every data type
 * accepts (FP8 and INT8 require it). FLOPs are 2*M*N*K. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

/* cudaDataType_t and cublasComputeType_t values (library_types.h, cublas_api.h) */
enum {
    R_32F = 0,
    R_64F = 1,
    R_16F = 2,
    R_8I = 3,
    R_32I = 10,
    R_16BF = 14,
    R_E4M3 = 28,
    R_E5M2 = 29,
    C_32F = 68,
    C_64F = 70,
    C_32I = 72,
    C_32F_TF32 = 77,
};

/* cublasLtMatmulDescAttributes_t, cublasLtMatmulPreferenceAttributes_t,
 * cublasLtMatmulAlgoConfigAttributes_t */
enum { D_TRANSA = 3, D_TRANSB = 4, D_FAST_ACCUM = 25, P_MAX_WS = 1 };

enum { A_ID = 0, A_TILE = 1, A_STAGES = 6 };

struct gtype {
    const char *name, *key;
    int a, b, d, compute, scale;
    int asz, dsz; /* bytes per element of A/B and of C/D */
    const char *afill, *bfill;
    int cc; /* minimum compute capability x 10 */
    bool slow;
    double tol; /* max |D - ref| / sum |a b| */
};

static const struct gtype gtypes[] = {
    {"fp64", "matrix_fp64", R_64F, R_64F, R_64F, C_64F, R_64F, 8, 8, "f64", "f64", 0, true, 1e-12},
    {"fp32", "matrix_fp32", R_32F, R_32F, R_32F, C_32F, R_32F, 4, 4, "f32", "f32", 0, true, 1e-5},
    {"tf32", "matrix_tf32", R_32F, R_32F, R_32F, C_32F_TF32, R_32F, 4, 4, "f32", "f32", 80, false,
     4e-3},
    {"fp16", "matrix_fp16", R_16F, R_16F, R_16F, C_32F, R_32F, 2, 2, "f16", "f16", 70, false, 1e-2},
    {"bf16", "matrix_bf16", R_16BF, R_16BF, R_16BF, C_32F, R_32F, 2, 2, "bf16", "bf16", 80, false,
     1e-2},
    {"fp8", "matrix_fp8", R_E4M3, R_E4M3, R_16BF, C_32F, R_32F, 1, 2, "e4m3", "e4m3", 89, false,
     1e-2},
    {"fp8_e5m2", "matrix_fp8_e5m2", R_E5M2, R_E4M3, R_16BF, C_32F, R_32F, 1, 2, "e5m2", "e4m3", 89,
     false, 1e-2},
    {"int8", "matrix_int8", R_8I, R_8I, R_32I, C_32I, R_32I, 1, 4, "i8", "i8", 75, false, 0},
};

#define N_GTYPES (sizeof(gtypes) / sizeof(gtypes[0]))

struct gemm {
    struct cal_dev *dv;
    const struct gtype *t;
    void *h, *desc, *la, *lb, *ld;
    cal_dptr a, b, d, ws;
    size_t ws_bytes;
    struct cal_lt_algo algo;

    union {
        double f64;
        float f32;
        int32_t i32;
    } alpha, beta;
};

static const struct gtype *gtype_of(const char *name)
{
    for (size_t i = 0; i < N_GTYPES; i++)
        if (!strcmp(gtypes[i].name, name))
            return &gtypes[i];
    return NULL;
}

/* a device address as the pointer the library takes */
static void *dptr(cal_dptr p)
{
    void *v;
    _Static_assert(sizeof(v) == sizeof(p), "64-bit device pointers");
    memcpy(&v, &p, sizeof(v));
    return v;
}

static cal_res do_matmul(struct cal_dev *dv, void *arg)
{
    struct gemm *g = arg;
    int s = dv->lt.Matmul(g->h, g->desc, &g->alpha, dptr(g->a), g->la, dptr(g->b), g->lb, &g->beta,
                          dptr(g->d), g->ld, dptr(g->d), g->ld, &g->algo, dptr(g->ws), g->ws_bytes,
                          dv->stream);
    return s ? 700 + s : 0; /* a cuBLAS status, kept apart from CUDA's codes */
}

static void layouts_free(struct gemm *g)
{
    struct cal_blaslt *lt = &g->dv->lt;
    if (g->la)
        lt->LayoutDestroy(g->la);
    if (g->lb)
        lt->LayoutDestroy(g->lb);
    if (g->ld)
        lt->LayoutDestroy(g->ld);
    g->la = g->lb = g->ld = NULL;
}

static int layouts(struct gemm *g, const struct cal_shape *s)
{
    struct cal_blaslt *lt = &g->dv->lt;
    layouts_free(g);
    int r = lt->LayoutCreate(&g->la, g->t->a, (uint64_t)s->k, (uint64_t)s->m, s->k);
    if (!r)
        r = lt->LayoutCreate(&g->lb, g->t->b, (uint64_t)s->k, (uint64_t)s->n, s->k);
    if (!r)
        r = lt->LayoutCreate(&g->ld, g->t->d, (uint64_t)s->m, (uint64_t)s->n, s->m);
    return r;
}

static int desc(struct gemm *g, bool fast_accum)
{
    struct cal_blaslt *lt = &g->dv->lt;
    if (g->desc)
        lt->DescDestroy(g->desc);
    g->desc = NULL;
    int r = lt->DescCreate(&g->desc, g->t->compute, g->t->scale);
    int ta = 1, tb = 0; /* CUBLAS_OP_T, CUBLAS_OP_N */
    if (!r)
        r = lt->DescSetAttribute(g->desc, D_TRANSA, &ta, sizeof(ta));
    if (!r)
        r = lt->DescSetAttribute(g->desc, D_TRANSB, &tb, sizeof(tb));
    int8_t fa = 1;
    if (!r && fast_accum)
        r = lt->DescSetAttribute(g->desc, D_FAST_ACCUM, &fa, sizeof(fa));
    return r;
}

/* up to want candidates for the current layouts into h; count returned */
static int candidates(struct gemm *g, struct cal_lt_heur *h, int want)
{
    struct cal_blaslt *lt = &g->dv->lt;
    void *pref = NULL;
    int n = 0;
    if (lt->PrefCreate(&pref))
        return 0;
    uint64_t ws = g->ws_bytes;
    if (!lt->PrefSetAttribute(pref, P_MAX_WS, &ws, sizeof(ws)) &&
        lt->GetHeuristic(g->h, g->desc, g->la, g->lb, g->ld, g->ld, pref, want, h, &n) != 0)
        n = 0;
    lt->PrefDestroy(pref);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (h[i].state == 0 && h[i].workspace <= g->ws_bytes)
            h[k++] = h[i];
    return k;
}

static void algo_text(struct cal_blaslt *lt, const struct cal_lt_algo *a, bool fast, int rank,
                      int of, char *out, size_t len)
{
    int32_t id = -1;
    uint32_t tile = 0, stages = 0;
    size_t w;
    lt->AlgoConfigGetAttribute(a, A_ID, &id, sizeof(id), &w);
    lt->AlgoConfigGetAttribute(a, A_TILE, &tile, sizeof(tile), &w);
    lt->AlgoConfigGetAttribute(a, A_STAGES, &stages, sizeof(stages), &w);
    snprintf(out, len, "algo %d tile %u stages %u%s (heuristic #%d of %d)", (int)id, tile, stages,
             fast ? " fast-accum" : "", rank + 1, of);
}

static void shapes_for(const struct gtype *t, const struct mp_calib_opts *o, struct cal_shape *s,
                       int *n)
{
    static const long quick_fast[] = {8192}, quick_slow[] = {4096};
    static const long def_fast[] = {8192, 16384}, def_slow[] = {2048, 4096, 8192};
    static const long wide_fast[] = {2048, 4096, 6144, 8192, 12288, 16384};
    static const long wide_slow[] = {2048, 3072, 4096, 6144, 8192};
    const long *sq;
    int ns;
    if (o->quick) {
        sq = t->slow ? quick_slow : quick_fast;
        ns = 1;
    } else if (o->thorough) {
        sq = t->slow ? wide_slow : wide_fast;
        ns = t->slow ? 5 : 6;
    } else {
        sq = t->slow ? def_slow : def_fast;
        ns = t->slow ? 3 : 2;
    }
    *n = 0;
    for (int i = 0; i < ns; i++)
        s[(*n)++] = (struct cal_shape){sq[i], sq[i], sq[i]};
    if (!o->quick && !o->thorough && !t->slow) /* where the big tensor-core rates were seen */
        s[(*n)++] = (struct cal_shape){16384, 16384, 8192};
    if (o->thorough) { /* the shapes of LLM layers: tall-skinny and long-K */
        long big = t->slow ? 8192 : 16384, small = t->slow ? 2048 : 4096;
        s[(*n)++] = (struct cal_shape){big, big, small};
        s[(*n)++] = (struct cal_shape){big, small, big};
        s[(*n)++] = (struct cal_shape){small, big, big};
    }
}

static void set_scalars(struct gemm *g)
{
    memset(&g->alpha, 0, sizeof(g->alpha));
    memset(&g->beta, 0, sizeof(g->beta));
    if (g->t->scale == R_64F)
        g->alpha.f64 = 1.0;
    else if (g->t->scale == R_32I)
        g->alpha.i32 = 1;
    else
        g->alpha.f32 = 1.0f;
}

static int gemm_open(struct gemm *g, struct cal_dev *dv, const struct gtype *t, long max_dim,
                     char *err, size_t len)
{
    memset(g, 0, sizeof(*g));
    g->dv = dv;
    g->t = t;
    set_scalars(g);
    size_t e = (size_t)max_dim * (size_t)max_dim;
    g->ws_bytes = (size_t)64 << 20;
    if (dv->lt.Create(&g->h)) {
        snprintf(err, len, "cublasLtCreate failed");
        return MP_EIO;
    }
    g->a = cal_alloc(dv, e * (size_t)t->asz);
    g->b = cal_alloc(dv, e * (size_t)t->asz);
    g->d = cal_alloc(dv, e * (size_t)t->dsz);
    g->ws = cal_alloc(dv, g->ws_bytes);
    if (!g->a || !g->b || !g->d || !g->ws) {
        snprintf(err, len, "cannot allocate %ld x %ld %s matrices", max_dim, max_dim, t->name);
        return MP_ENOMEM;
    }
    cal_res r = cal_fill(dv, g->a, e, t->afill, 1);
    if (!r)
        r = cal_fill(dv, g->b, e, t->bfill, 2);
    if (!r)
        r = dv->cu.MemsetD8Async(g->d, 0, e * (size_t)t->dsz, dv->stream);
    if (!r)
        r = dv->cu.StreamSynchronize(dv->stream);
    if (r) {
        snprintf(err, len, "filling the inputs: %s", cal_err(dv, r));
        return MP_EIO;
    }
    return 0;
}

static void gemm_close(struct gemm *g)
{
    struct cal_dev *dv = g->dv;
    if (!dv)
        return;
    layouts_free(g);
    if (g->desc)
        dv->lt.DescDestroy(g->desc);
    if (g->h)
        dv->lt.Destroy(g->h);
    cal_free(dv, g->a);
    cal_free(dv, g->b);
    cal_free(dv, g->d);
    cal_free(dv, g->ws);
}

/* ---- the host reference ---- */

static double f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? NAN : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

static double f8_value(uint8_t b, int ebits)
{
    int mbits = 7 - ebits, bias = ebits == 4 ? 7 : 15;
    int e = (b >> mbits) & ((1 << ebits) - 1), m = b & ((1 << mbits) - 1);
    double v = e == 0 ? ldexp(m, 1 - bias - mbits) : ldexp((1 << mbits) + m, e - bias - mbits);
    return b & 0x80 ? -v : v;
}

double cal_decode(int type, const void *p, size_t i)
{
    const unsigned char *c = p;
    switch (type) {
    case R_64F: {
        double v;
        memcpy(&v, c + 8 * i, 8);
        return v;
    }
    case R_32F: {
        float v;
        memcpy(&v, c + 4 * i, 4);
        return v;
    }
    case R_16F:
    case R_16BF: {
        uint16_t h;
        memcpy(&h, c + 2 * i, 2);
        if (type == R_16F)
            return f16_value(h);
        uint32_t u = (uint32_t)h << 16;
        float v;
        memcpy(&v, &u, 4);
        return v;
    }
    case R_E4M3:
        return f8_value(c[i], 4);
    case R_E5M2:
        return f8_value(c[i], 5);
    case R_8I:
        return (double)(int8_t)c[i];
    case R_32I: {
        int32_t v;
        memcpy(&v, c + 4 * i, 4);
        return v;
    }
    default:
        return NAN;
    }
}

/* D(i, j) against sum_k A(i, k) B(k, j) at 32 sampled entries; A(i, :) is
 * row i of the K-major A, B(:, j) column j of B */
static bool gemm_check(struct gemm *g, const struct cal_shape *s, struct mp_calib_item *it)
{
    const struct gtype *t = g->t;
    size_t rowb = (size_t)s->k * (size_t)t->asz;
    unsigned char *ra = malloc(rowb), *cb = malloc(rowb);
    double worst = 0;
    bool ok = ra && cb;
    for (int q = 0; ok && q < 32; q++) {
        long i = (long)((q * 7919L + 13) % s->m), j = (long)((q * 104729L + 7) % s->n);
        unsigned char dv_bytes[8];
        cal_res r = g->dv->cu.MemcpyDtoH(ra, g->a + (size_t)i * rowb, rowb);
        if (!r)
            r = g->dv->cu.MemcpyDtoH(cb, g->b + (size_t)j * rowb, rowb);
        if (!r)
            r = g->dv->cu.MemcpyDtoH(dv_bytes,
                                     g->d + ((size_t)j * (size_t)s->m + (size_t)i) * (size_t)t->dsz,
                                     (size_t)t->dsz);
        if (r) {
            ok = false;
            break;
        }
        double ref = 0, mag = 0;
        for (long k = 0; k < s->k; k++) {
            double p = cal_decode(t->a, ra, (size_t)k) * cal_decode(t->b, cb, (size_t)k);
            ref += p;
            mag += fabs(p);
        }
        double got = cal_decode(t->d, dv_bytes, 0);
        double e = mag > 0 ? fabs(got - ref) / mag : fabs(got - ref);
        if (!(e <= worst)) /* NaN propagates as the worst */
            worst = e;
    }
    free(ra);
    free(cb);
    it->checked = ok;
    it->max_rel_err = worst;
    return ok && worst <= t->tol;
}

/* ---- the search ---- */

/* keeps the n best candidates, best first */
static void keep(struct cal_cand *best, int n, const struct cal_cand *c)
{
    for (int i = 0; i < n; i++) {
        if (c->tflops > best[i].tflops) {
            memmove(&best[i + 1], &best[i], sizeof(*best) * (size_t)(n - 1 - i));
            best[i] = *c;
            return;
        }
    }
}

static bool same_cand(const struct cal_cand *a, const struct cal_cand *b)
{
    return a->s.m == b->s.m && a->s.n == b->s.n && a->s.k == b->s.k && a->fast == b->fast &&
           memcmp(&a->algo, &b->algo, sizeof(a->algo)) == 0;
}

/* appends c to out[0..*n) unless it was screened out or is there already */
static void add_final(struct cal_cand *out, int *n, const struct cal_cand *c)
{
    if (!(c->tflops > 0))
        return;
    for (int i = 0; i < *n; i++)
        if (same_cand(&out[i], c))
            return;
    out[(*n)++] = *c;
}

/* the distinct candidates to time in full, best screened first */
int cal_gemm_finalists(const struct cal_screen *sc, struct cal_cand *out)
{
    int n = 0;
    for (int i = 0; i < CAL_N_KEEP; i++)
        add_final(out, &n, &sc->best[i]);
    for (int m = 0; m < 2; m++)
        add_final(out, &n, &sc->mode[m]);
    for (int i = 0; i < CAL_N_SHAPES; i++)
        add_final(out, &n, &sc->shape[i]);
    return n;
}

static double median3(const double *v)
{
    double a = v[0], b = v[1], c = v[2];
    return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/* screens the library's candidates at shape s (both accumulation modes for
 * FP8): the median of three short batches each, the larger shapes with
 * the heuristic's first four only */
static int screen_shape(struct gemm *g, const struct cal_shape *s, int si,
                        const struct mp_calib_opts *o, struct cal_screen *sc,
                        struct mp_calib_item *it)
{
    if (layouts(g, s))
        return 0;
    bool fp8 = g->t->a == R_E4M3 || g->t->a == R_E5M2;
    double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    int want = o->thorough ? 32 : o->quick || flop > 1.2e12 ? 4 : 8;
    struct cal_lt_heur h[32];
    int tried = 0;
    for (int fast = 0; fast <= (fp8 ? 1 : 0); fast++) {
        if (desc(g, fast))
            continue;
        int n = candidates(g, h, want);
        for (int i = 0; i < n; i++) {
            double ms[3];
            char err[200];
            g->algo = h[i].algo;
            if (cal_time(g->dv, do_matmul, g, 3, 3, ms, err, sizeof(err)) != 0)
                continue;
            tried++;
            struct cal_cand c = {
                flop / (median3(ms) * 1e-3) / 1e12, *s, h[i].algo, fast != 0, i, n};
            keep(sc->best, CAL_N_KEEP, &c);
            if (si < CAL_N_SHAPES)
                keep(&sc->shape[si], 1, &c);
            if (fp8)
                keep(&sc->mode[fast], 1, &c);
        }
    }
    it->algos_tried += tried;
    return tried;
}

/* the figure of one candidate: median rate over the repeats into it */
static bool gemm_time(struct gemm *g, const struct cal_cand *c, const struct mp_calib_opts *o,
                      struct mp_calib_item *it)
{
    int reps = o->repeats > 0 ? o->repeats : o->quick ? 3 : 7;
    double ms[64];
    char err[200];
    if (reps > 64)
        reps = 64;
    g->algo = c->algo;
    if (layouts(g, &c->s) || desc(g, c->fast) ||
        cal_time(g->dv, do_matmul, g, 10, reps, ms, err, sizeof(err)) != 0)
        return false;
    double flop = 2.0 * (double)c->s.m * (double)c->s.n * (double)c->s.k;
    for (int i = 0; i < reps; i++)
        ms[i] = flop / (ms[i] * 1e-3) / 1e12;
    cal_summarise(ms, reps, it);
    cal_conditions(g->dv, it);
    return true;
}

/* the finalists timed in full; the best median is the figure, and its
 * output is checked */
static void gemm_final(struct gemm *g, const struct cal_screen *sc, const struct mp_calib_opts *o,
                       struct mp_calib_item *it)
{
    struct cal_cand fin[CAL_N_FINAL];
    int nf = cal_gemm_finalists(sc, fin), pick = -1, last = -1;
    struct mp_calib_item cur, win;
    for (int i = 0; i < nf; i++) {
        cur = *it;
        bool ok = gemm_time(g, &fin[i], o, &cur);
        last = i;
        if (ok && (pick < 0 || cur.value > win.value)) {
            pick = i;
            win = cur;
        }
    }
    if (pick < 0) {
        it->status = MP_CALIB_FAILED;
        snprintf(it->note, sizeof(it->note), "timing the best candidates failed");
        return;
    }
    const struct cal_cand *b = &fin[pick];
    *it = win;
    it->m = b->s.m;
    it->n = b->s.n;
    it->k = b->s.k;
    algo_text(&g->dv->lt, &b->algo, b->fast, b->rank, b->of, it->algo, sizeof(it->algo));
    it->status = MP_CALIB_OK;
    /* the output of the last timed configuration is in D: time the winner
     * again briefly when it was not the last */
    if (pick != last) {
        double ms[2];
        char err[200];
        g->algo = b->algo;
        if (layouts(g, &b->s) || desc(g, b->fast) ||
            cal_time(g->dv, do_matmul, g, 1, 1, ms, err, sizeof(err)) != 0) {
            it->status = MP_CALIB_FAILED;
            snprintf(it->note, sizeof(it->note), "re-running the winner for its check failed");
            return;
        }
    }
    if (!gemm_check(g, &b->s, it)) {
        it->status = MP_CALIB_FAILED;
        snprintf(it->note, sizeof(it->note),
                 "the fastest candidate's output is wrong (relative error %.3g > %.3g): not used",
                 it->max_rel_err, g->t->tol);
    }
}

static bool gemm_supported(struct cal_dev *dv, const char *dtype, struct mp_calib_item *it)
{
    int cc = dv->cc_major * 10 + dv->cc_minor;
    const struct gtype *t = gtype_of(dtype);
    if (!t) { /* fp4 / fp6 */
        it->status = MP_CALIB_UNSUPPORTED;
        if (cc < 100)
            snprintf(it->note, sizeof(it->note), "no %s tensor cores before sm_100 (this is %s)",
                     dtype, dv->cc_major ? "older" : "unknown");
        else
            snprintf(it->note, sizeof(it->note),
                     "not measured: block-scaled %s GEMMs are not implemented in magpie yet",
                     dtype);
        return false;
    }
    if (cc < t->cc) {
        it->status = MP_CALIB_UNSUPPORTED;
        snprintf(it->note, sizeof(it->note), "%s GEMMs need sm_%d or newer", dtype, t->cc);
        return false;
    }
    if (!dv->lt.lib) {
        it->status = MP_CALIB_FAILED;
        snprintf(it->note, sizeof(it->note), "%s", dv->lt_err);
        return false;
    }
    if (!dv->mod) {
        it->status = MP_CALIB_FAILED;
        snprintf(it->note, sizeof(it->note), "the input fill kernel is missing (NVRTC)");
        return false;
    }
    return true;
}

void cal_gemm(struct cal_dev *dv, const char *dtype, const struct mp_calib_opts *o,
              struct mp_calib_item *it)
{
    const struct gtype *t = gtype_of(dtype);
    snprintf(it->key, sizeof(it->key), "%s", t ? t->key : "");
    if (!t)
        snprintf(it->key, sizeof(it->key), "matrix_%s", dtype);
    it->kind = MP_CALIB_GEMM;
    it->unit = "TFLOP/s";
    if (!gemm_supported(dv, dtype, it) || !t)
        return;
    struct cal_shape s[CAL_N_SHAPES];
    int ns = 0;
    shapes_for(t, o, s, &ns);
    long max_dim = 0;
    for (int i = 0; i < ns; i++) {
        long m = s[i].m > s[i].n ? s[i].m : s[i].n;
        m = m > s[i].k ? m : s[i].k;
        max_dim = m > max_dim ? m : max_dim;
    }
    struct gemm g;
    char err[200];
    if (gemm_open(&g, dv, t, max_dim, err, sizeof(err))) {
        it->status = MP_CALIB_FAILED;
        snprintf(it->note, sizeof(it->note), "%s", err);
        gemm_close(&g);
        return;
    }
    struct cal_screen sc;
    memset(&sc, 0, sizeof(sc));
    for (int i = 0; i < ns; i++)
        if (screen_shape(&g, &s[i], i, o, &sc, it))
            it->shapes_tried++;
    if (sc.best[0].tflops > 0) {
        gemm_final(&g, &sc, o, it);
    } else {
        it->status = MP_CALIB_UNSUPPORTED;
        snprintf(it->note, sizeof(it->note), "%s offers no algorithm for %s GEMMs on this GPU",
                 dv->lt.soname, dtype);
    }
    gemm_close(&g);
}
