/* GEMM family: aten::mm, addmm, _scaled_mm, bmm, baddbmm and the
 * vLLM / TransformerEngine / aiter GEMM ops TraceLens models (category and
 * sheet "GEMM", compute spec matrix_<dtype of A>).
 *
 * flops = B * (2*M*N*K + M*N if bias); bytes = B * (M*K*bpe_A + K*N*bpe_B +
 * M*N*bpe_out + N*bpe_bias if bias), unknown when any size is unknown.
 * Parameters come out in TraceLens's order: the class's own, then "B" when the
 * class did not set it, then "transpose" when a kernel name tells it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline_int.h"

struct gemm {
    int64_t B, M, N, K;
    bool bias;
    const char *dt[4]; /* dtype_A_B entries; nd of them exist */
    int nd;
    bool has_trans;
    int trans[2]; /* -1 None, 0 False, 1 True */
};

/* ROCm Tensile/hipBLASLt kernels carry C???_A???_B??? (three lowercase axis
 * letters each); the A/B index order says whether the operand is
 * transposed. */
static bool is_rocm_gemm(const char *k)
{
    for (const char *p = strchr(k, 'C'); p; p = strchr(p + 1, 'C')) {
        const char *q = p + 1;
        int i;
        for (i = 0; i < 3 && q[i] >= 'a' && q[i] <= 'z'; i++)
            ;
        if (i < 3 || strncmp(q + 3, "_A", 2) != 0)
            continue;
        q += 5;
        for (i = 0; i < 3 && q[i] >= 'a' && q[i] <= 'z'; i++)
            ;
        if (i < 3 || strncmp(q + 3, "_B", 2) != 0)
            continue;
        q += 5;
        for (i = 0; i < 3 && q[i] >= 'a' && q[i] <= 'z'; i++)
            ;
        if (i == 3)
            return true;
    }
    return false;
}

/* TraceLens parses the first kernel name it recognises (in ts order):
 * Tensile names, or NVIDIA nvjet names whose last "_" token spells the
 * transposes ("..._TN"). */
static void gemm_kernels(struct roof_ctx *c, struct gemm *g)
{
    const struct mp_roofline_op *op = c->op;
    for (size_t i = 0; op->kernel_names && i < op->n_kernels; i++) {
        const char *k = op->kernel_names[i];
        if (!k)
            continue;
        if (is_rocm_gemm(k)) {
            g->trans[0] = strstr(k, "_Ailk_") ? 0 : strstr(k, "_Alik_") ? 1 : -1;
            g->trans[1] = strstr(k, "_Bljk_") ? 0 : strstr(k, "_Bjlk_") ? 1 : -1;
            g->has_trans = true;
            return;
        }
        if (!strncmp(k, "nvjet", 5)) {
            const char *t = strrchr(k, '_');
            t = t ? t + 1 : k;
            if (strlen(t) < 2) {
                roof_fail(c, "IndexError: nvjet kernel name without transpose flags");
                return;
            }
            g->trans[0] = t[0] == 'T';
            g->trans[1] = t[1] == 'T';
            g->has_trans = true;
            return;
        }
    }
}

/* What GEMM.__init__ adds after the class's parameters. */
static void gemm_post(struct roof_ctx *c, struct gemm *g)
{
    if (roof_p_find(c, "B") < 0) {
        g->B = 1;
        roof_p_int(c, "B", 1);
    }
    if (g->has_trans) {
        char t[32];
        static const char *const tf[] = {"None", "False", "True"};
        snprintf(t, sizeof(t), "(%s, %s)", tf[g->trans[0] + 1], tf[g->trans[1] + 1]);
        roof_p_str(c, "transpose", t);
    }
}

/* "stride_A"/"stride_B": tuple(Input Strides[i]), both None when the trace
 * has no strides (KeyError is caught, IndexError is not). */
static void gemm_strides(struct roof_ctx *c, long ia, long ib)
{
    struct pv *st = roof_arg_opt(c, "Input Strides");
    if (!st) {
        roof_p_none(c, "stride_A");
        roof_p_none(c, "stride_B");
        return;
    }
    struct pv *a = roof_at(c, st, ia);
    struct pv *b = roof_at(c, st, ib);
    if (!roof_ok(c))
        return;
    roof_p_tuple(c, "stride_A", a);
    roof_p_tuple(c, "stride_B", b);
}

/* dtype_A_B = tuple(Input type[from:to]); printed later, in its place */
static void gemm_dtypes(struct roof_ctx *c, struct gemm *g, long from, long to)
{
    struct pv *types = roof_arg(c, "Input type");
    if (!roof_ok(c))
        return;
    if (!roof_pv_is_array(types)) {
        roof_fail(c, "TypeError: Input type is not a list");
        return;
    }
    long n = (long)roof_pv_array_size(types);
    g->nd = 0;
    for (long i = from; i < to && i < n; i++)
        g->dt[g->nd++] = roof_pv_is_string(roof_pv_array_get(types, (size_t)i))
                             ? roof_pv_string_value(roof_pv_array_get(types, (size_t)i))
                             : NULL;
}

static const char *gemm_dt(struct roof_ctx *c, const struct gemm *g, int i)
{
    if (i >= g->nd) {
        roof_fail(c, "IndexError: tuple index out of range");
        return NULL;
    }
    return g->dt[i];
}

static int64_t gemm_flops_int(struct roof_ctx *c, const struct gemm *g)
{
    int64_t f = roof_mul(c, roof_mul(c, roof_mul(c, 2, g->M), g->N), g->K);
    if (g->bias)
        f = roof_add(c, f, roof_mul(c, g->M, g->N));
    return f;
}

/* GEMM.bytes_func; false (None) when a size is unknown */
static bool gemm_bytes_int(struct roof_ctx *c, const struct gemm *g, int b1, int b2, int bb, int bo,
                           int64_t *out)
{
    if (!b1 || !b2 || !bb || !bo)
        return false;
    int64_t r = roof_mul(c, roof_mul(c, g->M, g->K), b1);
    r = roof_add(c, r, roof_mul(c, roof_mul(c, g->K, g->N), b2));
    r = roof_add(c, r, roof_mul(c, roof_mul(c, g->M, g->N), bo));
    if (g->bias)
        r = roof_add(c, r, roof_mul(c, g->N, bb));
    *out = r;
    return true;
}

/* Forward metrics with one size for all operands (aten::mm, addmm, bmm,
 * baddbmm, dynamic quant); batched multiplies by B. */
static void gemm_fwd_same_bpe(struct roof_ctx *c, const struct gemm *g, bool batched)
{
    if (!roof_begin(c, ROOF_FWD))
        return;
    int64_t f = gemm_flops_int(c, g);
    if (batched)
        f = roof_mul(c, g->B, f);
    roof_set_flops(c, (double)f);
    const char *a = gemm_dt(c, g, 0);
    (void)gemm_dt(c, g, 1); /* the A/B dtype comparison indexes [1] */
    if (!roof_ok(c))
        return;
    int bpe = roof_bpe(a);
    int64_t by;
    if (gemm_bytes_int(c, g, bpe, bpe, bpe, bpe, &by))
        roof_set_bytes(c, true, (double)(batched ? roof_mul(c, g->B, by) : by));
    roof_set_spec(c, "matrix", a);
}

static void gemm_mnk_2d(struct roof_ctx *c, struct gemm *g, long ia, long ib)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *A = roof_at(c, dims, ia), *B = roof_at(c, dims, ib);
    g->M = roof_int(c, roof_at(c, A, 0));
    g->N = roof_int(c, roof_at(c, B, 1));
    g->K = roof_int(c, roof_at(c, A, 1));
}

static void gemm_mnk_params(struct roof_ctx *c, const struct gemm *g)
{
    roof_p_int(c, "M", g->M);
    roof_p_int(c, "N", g->N);
    roof_p_int(c, "K", g->K);
    roof_p_bool(c, "bias", g->bias);
}

/* The parameters of the classes with A = Input Dims[ia] and B = [ib]:
 * ["B",] M, N, K, bias, stride_A, stride_B, dtype_A_B = Input type[ia..ib],
 * then GEMM's own. */
static void gemm_ab_params(struct roof_ctx *c, struct gemm *g, long ia, long ib, bool batched)
{
    if (batched)
        roof_p_int(c, "B", g->B);
    gemm_mnk_params(c, g);
    gemm_strides(c, ia, ib);
    roof_p_tuple_slice(c, "dtype_A_B", roof_arg(c, "Input type"), ia, ib + 1);
    gemm_post(c, g);
}

/* dtype_A_B from Input type[ia..ib], then gemm_ab_params; false when the
 * row failed. */
static bool gemm_ab(struct roof_ctx *c, struct gemm *g, long ia, long ib, bool batched)
{
    gemm_dtypes(c, g, ia, ib + 1);
    if (!roof_ok(c))
        return false;
    gemm_ab_params(c, g, ia, ib, batched);
    return true;
}

void roof_gemm_mm(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_2d(c, &g, 0, 1);
    if (!gemm_ab(c, &g, 0, 1, false))
        return;
    gemm_fwd_same_bpe(c, &g, false);
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

void roof_gemm_addmm(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg(c, "Input Dims");
    (void)roof_at(c, dims, 0); /* C (bias) */
    gemm_mnk_2d(c, &g, 1, 2);
    g.bias = true;
    if (!gemm_ab(c, &g, 1, 2, false))
        return;
    gemm_fwd_same_bpe(c, &g, false);
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

void roof_gemm_scaled_mm(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_2d(c, &g, 0, 1);
    g.bias = roof_len(c, roof_arg(c, "Input Dims")) == 3;
    if (!gemm_ab(c, &g, 0, 1, false))
        return;
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)gemm_flops_int(c, &g));
        const char *a = gemm_dt(c, &g, 0), *b = gemm_dt(c, &g, 1);
        int ba = roof_bpe(a), bb = roof_bpe(b);
        if (roof_ok(c) && (!ba || !bb))
            roof_fail(c, "AssertionError: data types of A and B are not supported");
        if (roof_ok(c)) {
            /* fp8 inputs are assumed to produce a 2-byte output */
            int out = ba == 1 ? 2 : (ba == 2 || ba == 4) ? ba : 0;
            int64_t by;
            if (gemm_bytes_int(c, &g, ba, ba, ba, out, &by))
                roof_set_bytes(c, true, (double)by);
            roof_set_spec(c, "matrix", a);
        }
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

static void gemm_bmm_common(struct roof_ctx *c, long ia, long ib, bool bias)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg(c, "Input Dims");
    if (bias)
        (void)roof_at(c, dims, 0);
    struct roof_shape A, B;
    roof_shape(c, roof_at(c, dims, ia), &A);
    roof_shape(c, roof_at(c, dims, ib), &B);
    if (roof_ok(c) && (A.n != 3 || B.n != 3))
        roof_fail(c, "ValueError: bmm operands must have 3 dims");
    if (!roof_ok(c))
        return;
    g.B = A.d[0];
    g.M = A.d[1];
    g.K = A.d[2];
    g.N = B.d[2];
    g.bias = bias;
    if (!gemm_ab(c, &g, ia, ib, true))
        return;
    gemm_fwd_same_bpe(c, &g, true);
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

void roof_gemm_bmm(struct roof_ctx *c)
{
    gemm_bmm_common(c, 0, 1, false);
}

void roof_gemm_baddbmm(struct roof_ctx *c)
{
    gemm_bmm_common(c, 1, 2, true);
}

/* vllm::gemm_with_dynamic_quant: x [M, K] and w [N, K] are the first two 2-D
 * shapes of Input Dims. */
void roof_gemm_dynamic_quant(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    struct pv *A = NULL, *B = NULL;
    size_t n = roof_pv_is_array(dims) ? roof_pv_array_size(dims) : 0;
    for (size_t i = 0; i < n; i++) {
        struct pv *s = roof_pv_array_get(dims, i);
        if (roof_pv_is_array(s) && roof_pv_array_size(s) == 2) {
            if (!A) {
                A = s;
            } else {
                B = s;
                break;
            }
        }
    }
    if ((!A || !B) && n >= 2) {
        if (!A && roof_pv_is_array(roof_pv_array_get(dims, 0)))
            A = roof_pv_array_get(dims, 0);
        if (!B && roof_pv_is_array(roof_pv_array_get(dims, 1)))
            B = roof_pv_array_get(dims, 1);
    }
    if (!A || !B || roof_pv_array_size(A) != 2 || roof_pv_array_size(B) != 2) {
        roof_fail(c, "ValueError: vllm::gemm_with_dynamic_quant missing 2D A,B shapes");
        return;
    }
    g.M = roof_int(c, roof_pv_array_get(A, 0));
    g.K = roof_int(c, roof_pv_array_get(A, 1));
    g.N = roof_int(c, roof_pv_array_get(B, 0));
    struct pv *types = roof_arg_opt(c, "Input type");
    if (!roof_pv_is_array(types) || roof_pv_array_size(types) < 2) {
        roof_fail(c, "ValueError: vllm::gemm_with_dynamic_quant missing A,B dtypes");
        return;
    }
    g.nd = 2;
    g.dt[0] = roof_pv_string_value(roof_pv_array_get(types, 0));
    g.dt[1] = roof_pv_string_value(roof_pv_array_get(types, 1));
    if (!roof_ok(c))
        return;
    gemm_ab_params(c, &g, 0, 1, false);
    gemm_fwd_same_bpe(c, &g, false);
    /* the class inherits GEMM's backward, whose bytes_bwd needs an argument
     * that TraceLens does not pass */
    if (roof_begin(c, ROOF_BWD))
        roof_fail(c, "TypeError: bytes_bwd() missing 1 required positional argument");
}

/* ["B" = 1,] M, N, K, bias and dtype_A_B = the dtypes the class chose */
static void gemm_dt_params(struct roof_ctx *c, const struct gemm *g, bool b1)
{
    if (b1)
        roof_p_int(c, "B", 1);
    gemm_mnk_params(c, g);
    roof_p_strs(c, "dtype_A_B", g->nd, g->dt, false);
}

/* tex_ts::te_gemm_ts (TransformerEngine): A = Input Dims[0], B = [5],
 * transposes from Concrete Inputs [4] and [9], bias from [14]. */
void roof_gemm_te_gemm_ts(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg(c, "Input Dims");
    (void)roof_at(c, dims, 10);
    struct pv *A = roof_at(c, dims, 0), *B = roof_at(c, dims, 5);
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    struct pv *ta = roof_at(c, conc, 4), *tb = roof_at(c, conc, 9);
    if (!roof_ok(c))
        return;
    bool trans_a = roof_pv_is_string(ta) && !strcmp(roof_pv_string_value(ta), "1");
    bool trans_b = roof_pv_is_string(tb) && !strcmp(roof_pv_string_value(tb), "1");
    g.M = roof_int(c, roof_at(c, A, trans_a ? 0 : 1));
    g.K = roof_int(c, roof_at(c, A, trans_a ? 1 : 0));
    g.N = roof_int(c, roof_at(c, B, trans_b ? 1 : 0));
    struct pv *bt = roof_at(c, conc, 14);
    g.bias = !(roof_pv_is_string(bt) && roof_pv_string_length(bt) == 0);
    static const long ti[4] = {0, 5, 10, 18};
    for (int i = 0; i < 4; i++)
        g.dt[i] = roof_str_argi(c, "Input type", ti[i]);
    g.nd = 4;
    if (!roof_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 0, 5);
    roof_p_strs(c, "dtype_A_B", 4, g.dt, false);
    gemm_post(c, &g);
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)gemm_flops_int(c, &g));
        int64_t by;
        if (gemm_bytes_int(c, &g, roof_bpe(g.dt[0]), roof_bpe(g.dt[1]), roof_bpe(g.dt[3]),
                           roof_bpe(g.dt[2]), &by))
            roof_set_bytes(c, true, (double)by);
        roof_set_spec(c, "matrix", g.dt[0]);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* TransformerEngine v2 pseudo ops (_Linear*_mm): like aten::mm with a
 * 2-byte output whatever the input type. */
void roof_gemm_tev2(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_2d(c, &g, 0, 1);
    if (!gemm_ab(c, &g, 0, 1, false))
        return;
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)gemm_flops_int(c, &g));
        const char *a = gemm_dt(c, &g, 0), *b = gemm_dt(c, &g, 1);
        if (roof_ok(c) && a && b && strcmp(a, b) != 0)
            roof_fail(c, "ValueError: data types of A and B are different");
        int bpe = roof_bpe(a);
        int64_t by;
        if (roof_ok(c) && gemm_bytes_int(c, &g, bpe, bpe, bpe, 2, &by))
            roof_set_bytes(c, true, (double)by);
        roof_set_spec(c, "matrix", a);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* Forward metrics of the aiter-style GEMMs: bpe of dtype_A_B[0], [1] and of
 * the output dtype [2] (also the unused bias); the class inherits GEMM's
 * backward, whose bytes_bwd needs an argument TraceLens does not pass. */
static void gemm_fwd_three(struct roof_ctx *c, const struct gemm *g)
{
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)gemm_flops_int(c, g));
        int64_t by;
        if (gemm_bytes_int(c, g, roof_bpe(g->dt[0]), roof_bpe(g->dt[1]), roof_bpe(g->dt[2]),
                           roof_bpe(g->dt[2]), &by))
            roof_set_bytes(c, true, (double)by);
        roof_set_spec(c, "matrix", g->dt[0]);
    }
    if (roof_begin(c, ROOF_BWD))
        roof_fail(c, "TypeError: bytes_bwd() missing 1 required positional argument");
}

/* The parameters ("B" = 1 first) and metrics of the aiter-style GEMMs */
static void gemm_finish_three(struct roof_ctx *c, struct gemm *g)
{
    if (!roof_ok(c))
        return;
    gemm_dt_params(c, g, true);
    gemm_post(c, g);
    gemm_fwd_three(c, g);
}

/* aiter::gemm_a16w16: x [M, K], w [N, K]; output in x's type. */
void roof_gemm_a16w16(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *A = roof_at(c, dims, 0), *B = roof_at(c, dims, 1);
    size_t nd = roof_len(c, dims);
    g.bias = nd > 2 && roof_len(c, roof_at(c, dims, 2)) > 0;
    g.B = 1;
    g.M = roof_int(c, roof_at(c, A, 0));
    g.N = roof_int(c, roof_at(c, B, 0));
    g.K = roof_int(c, roof_at(c, A, 1));
    g.dt[0] = roof_str_argi(c, "Input type", 0);
    g.dt[1] = roof_str_argi(c, "Input type", 1);
    g.dt[2] = g.dt[0];
    g.nd = 3;
    gemm_finish_three(c, &g);
}

/* vllm::rocm_unquantized_gemm: x [M, K], weight [N, K], optional bias [N];
 * the output takes the bias's type when there is a bias, else the weight's. */
void roof_gemm_rocm_unquantized(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg(c, "Input Dims");
    g.bias = roof_len(c, dims) > 2 && roof_len(c, roof_at(c, dims, 2)) > 0;
    struct pv *A = roof_at(c, dims, 0), *B = roof_at(c, dims, 1);
    g.M = roof_int(c, roof_at(c, A, 0));
    g.N = roof_int(c, roof_at(c, B, 0));
    g.K = roof_int(c, roof_at(c, A, 1));
    struct pv *types = roof_arg(c, "Input type");
    g.dt[0] = roof_str(c, roof_at(c, types, 0));
    g.dt[1] = roof_str(c, roof_at(c, types, 1));
    g.dt[2] = roof_len(c, types) > 2 ? roof_str(c, roof_at(c, types, 2)) : "";
    g.nd = 3;
    if (!roof_ok(c))
        return;
    gemm_dt_params(c, &g, false);
    gemm_post(c, &g);
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)gemm_flops_int(c, &g));
        int bo = g.bias ? roof_bpe(g.dt[2]) : roof_bpe(g.dt[1]);
        int64_t by;
        if (gemm_bytes_int(c, &g, roof_bpe(g.dt[0]), roof_bpe(g.dt[1]), bo, bo, &by))
            roof_set_bytes(c, true, (double)by);
        roof_set_spec(c, "matrix", g.dt[0]);
    }
    if (roof_begin(c, ROOF_BWD))
        roof_fail(c, "TypeError: bytes_bwd() missing 1 required positional argument");
}

/* x [M, K] at Input Dims[0], w [N, K] at [1] */
static void gemm_mnk_xw(struct roof_ctx *c, struct gemm *g)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *x = roof_at(c, dims, 0), *w = roof_at(c, dims, 1);
    g->B = 1;
    g->M = roof_int(c, roof_at(c, x, 0));
    g->N = roof_int(c, roof_at(c, w, 0));
    g->K = roof_int(c, roof_at(c, x, 1));
}

/* aiter::gemm_a16w16_atomic_ (and SGLang's flydsl hgemm): the output dtype
 * is Input type[3] when recorded, else bf16. */
void roof_gemm_a16w16_atomic(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_xw(c, &g);
    struct pv *types = roof_arg(c, "Input type");
    g.dt[0] = roof_str(c, roof_at(c, types, 0));
    g.dt[1] = roof_str(c, roof_at(c, types, 1));
    g.dt[2] = roof_len(c, types) > 3 ? roof_str(c, roof_at(c, types, 3)) : "c10::bfloat16";
    g.nd = 3;
    gemm_finish_three(c, &g);
}

/* aiter::_gemm_a16w16_asm: the output tensor is Input [2] (its dtype when
 * known, else x's). */
void roof_gemm_a16w16_asm(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *types = roof_arg(c, "Input type");
    const char *t0 = roof_str(c, roof_at(c, types, 0));
    const char *t2 = NULL;
    if (roof_len(c, types) > 2) {
        t2 = roof_str(c, roof_at(c, types, 2));
        if (!roof_bpe(t2))
            t2 = NULL;
    }
    g.dt[0] = t0;
    g.dt[1] = roof_str(c, roof_at(c, types, 1));
    g.dt[2] = t2 ? t2 : t0;
    g.nd = 3;
    gemm_mnk_xw(c, &g);
    gemm_finish_three(c, &g);
}

static int64_t ceildiv64(int64_t a, int64_t b)
{
    /* Python's -(-a // b) */
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
}

/* FP8/INT8 block-scale GEMMs (aiter CK/asm/triton, vLLM, SGLang): x [M, K],
 * w [N, K], bf16 output; the block sizes follow from the scale shapes. */
void roof_gemm_a8w8_blockscale(struct roof_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *types = roof_arg_opt(c, "Input type");
    if (roof_truthy(types) && !roof_pv_is_array(types))
        roof_fail(c, "TypeError: Input type is not a list");
    size_t nt = roof_pv_is_array(types) ? roof_pv_array_size(types) : 0;
    struct pv *x = roof_at(c, dims, 0);
    g.M = roof_int(c, roof_at(c, x, 0));
    g.K = roof_int(c, roof_at(c, x, 1));
    g.N = roof_int(c, roof_at(c, roof_at(c, dims, 1), 0));
    g.B = 1;
    g.dt[0] = nt > 0 ? roof_str(c, roof_pv_array_get(types, 0)) : "";
    g.dt[1] = nt > 1 ? roof_str(c, roof_pv_array_get(types, 1)) : "";
    g.dt[2] = "c10::bfloat16";
    g.nd = 3;
    bool quant = roof_len(c, dims) > 3;
    bool has_bk = false, has_bn = false;
    int64_t bk = 0, bn = 0;
    struct pv *scale_dt = NULL; /* types[2], any value; "float32" when absent */
    if (quant && roof_ok(c)) {
        struct pv *xs = roof_at(c, dims, 2), *ws = roof_at(c, dims, 3);
        if (roof_truthy(xs)) {
            int64_t last = roof_int(c, roof_at(c, xs, -1));
            if (last) {
                bk = ceildiv64(g.K, last);
                has_bk = true;
            }
        }
        if (roof_truthy(ws)) {
            int64_t first = roof_int(c, roof_at(c, ws, 0));
            if (first) {
                bn = ceildiv64(g.N, first);
                has_bn = true;
            }
        }
        if (nt > 2)
            scale_dt = roof_pv_array_get(types, 2);
    }
    if (!roof_ok(c))
        return;
    gemm_dt_params(c, &g, true);
    if (quant) {
        roof_p_str(c, "quant_scheme", "a8w8_blockscale");
        roof_p_str(c, "quant_granularity", "per_block");
        roof_p_int_or_none(c, "block_k", has_bk, bk);
        roof_p_int_or_none(c, "block_n", has_bn, bn);
        if (scale_dt)
            roof_p_repr(c, "scale_dtype", scale_dt);
        else
            roof_p_str(c, "scale_dtype", "float32");
    }
    struct roof_shape os = {2, {g.M, g.N}};
    roof_p_shape(c, "output_shape", &os, false);
    roof_p_str(c, "output_dtype", "c10::bfloat16");
    gemm_post(c, &g);
    gemm_fwd_three(c, &g);
}

/* ---- grouped GEMM (Primus Turbo, CK) ---- */

#define MAX_GROUPS 1024

struct pairs {
    int n;
    bool overflow;
    int64_t r[MAX_GROUPS], c[MAX_GROUPS];
};

/* _collect_2d_shapes: every [a, b] of positive ints, depth first */
static void collect_2d(const struct pv *v, struct pairs *p, int depth)
{
    if (!roof_pv_is_array(v) || depth > 32)
        return;
    if (v->n == 2) {
        struct pv *a = roof_pv_array_get(v, 0), *b = roof_pv_array_get(v, 1);
        if ((roof_pv_is_integer(a) || roof_pv_is_true(a)) &&
            (roof_pv_is_integer(b) || roof_pv_is_true(b)) &&
            (roof_pv_is_true(a) || roof_pv_integer_value(a) > 0) &&
            (roof_pv_is_true(b) || roof_pv_integer_value(b) > 0)) {
            if (p->n == MAX_GROUPS) {
                p->overflow = true;
                return;
            }
            p->r[p->n] = roof_pv_is_true(a) ? 1 : roof_pv_integer_value(a);
            p->c[p->n++] = roof_pv_is_true(b) ? 1 : roof_pv_integer_value(b);
            return;
        }
    }
    for (size_t i = 0; i < v->n; i++)
        collect_2d(roof_pv_array_get(v, i), p, depth + 1);
}

/* all elements of s[from, to) positive ints (Python isinstance(v, int)) */
static bool pos_ints(const struct pv *s, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        struct pv *e = roof_pv_array_get(s, i);
        if (!(roof_pv_is_true(e) || (roof_pv_is_integer(e) && roof_pv_integer_value(e) > 0)))
            return false;
    }
    return true;
}

static int64_t ival(const struct pv *v)
{
    return roof_pv_is_true(v) ? 1 : roof_pv_integer_value(v);
}

/* Input type[0] and [1] (the output, defaulting to the input) */
static void grouped_dtypes(struct roof_ctx *c, int *bi, int *bo, const char **d0, bool *has_bi,
                           bool *has_bo)
{
    struct pv *t = roof_arg_opt(c, "Input type");
    size_t nt = roof_truthy(t) ? roof_len(c, t) : 0;
    const char *din = nt ? roof_str(c, roof_at(c, t, 0)) : NULL;
    const char *dout = nt > 1 ? roof_str(c, roof_at(c, t, 1)) : din;
    *bi = din ? roof_bpe(din) : 0;
    *has_bi = *bi != 0;
    if (dout) {
        *bo = roof_bpe(dout);
        *has_bo = *bo != 0;
    } else {
        *bo = *bi;
        *has_bo = *has_bi;
    }
    *d0 = din;
}

/* GroupedGemm.get_compute_precision reads Input type[0] itself: an empty
 * list raises (IndexError) when the spec is taken. */
static void grouped_spec(struct roof_ctx *c, const char *d0)
{
    struct pv *t = roof_arg_opt(c, "Input type");
    if (roof_pv_is_array(t) && t->n == 0) {
        roof_fail(c, "IndexError: list index out of range");
        return;
    }
    roof_set_spec(c, "matrix", d0);
}

static void grouped_params(struct roof_ctx *c, int64_t M, int64_t K, int64_t N, int64_t G, bool hbi,
                           int bi, bool hbo, int bo)
{
    roof_p_int(c, "M", M);
    roof_p_int(c, "K", K);
    roof_p_int(c, "N", N);
    roof_p_int(c, "G", G);
    roof_p_int_or_none(c, "bpe_in", hbi, bi);
    roof_p_int_or_none(c, "bpe_out", hbo, bo);
}

/* Two empty pair lists (16 KiB each: on the heap); false, the row failed
 * for want of memory, when they could not be had. */
static bool pairs_new(struct roof_ctx *c, struct pairs **lp, struct pairs **rp)
{
    *lp = malloc(sizeof(**lp));
    *rp = malloc(sizeof(**rp));
    if (!*lp || !*rp) {
        free(*lp);
        free(*rp);
        c->oom = true;
        roof_fail(c, "out of memory");
        return false;
    }
    (*lp)->n = (*rp)->n = 0;
    (*lp)->overflow = (*rp)->overflow = false;
    return true;
}

void roof_grouped_gemm(struct roof_ctx *c)
{
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    int64_t M = 0, K = 0, N = 0, G = 0;
    bool ok = false;
    /* compact _impl layout: [[M, K], [G, K, N]] or [[M, K], [G, N, K]] */
    if (roof_pv_is_array(dims) && dims->n >= 2) {
        struct pv *a = roof_pv_array_get(dims, 0), *b = roof_pv_array_get(dims, 1);
        if (roof_pv_is_array(a) && roof_pv_is_array(b) && a->n >= 2 && b->n == 3 &&
            pos_ints(a, 0, 2) && pos_ints(b, 0, 3)) {
            M = ival(roof_pv_array_get(a, 0));
            K = ival(roof_pv_array_get(a, 1));
            G = ival(roof_pv_array_get(b, 0));
            if (ival(roof_pv_array_get(b, 1)) == K) {
                N = ival(roof_pv_array_get(b, 2));
                ok = true;
            } else if (ival(roof_pv_array_get(b, 2)) == K) {
                N = ival(roof_pv_array_get(b, 1));
                ok = true;
            }
        }
        /* zipped layout: per-group [(M_i, K)...], [(K, N)...] */
        if (!ok && roof_pv_is_array(a) && roof_pv_is_array(b)) {
            struct pairs *lp, *rp;
            if (!pairs_new(c, &lp, &rp))
                return;
            collect_2d(a, lp, 0);
            collect_2d(b, rp, 0);
            if (lp->overflow || rp->overflow) {
                roof_fail(c, "more than %d GEMM groups", MAX_GROUPS);
            } else if (lp->n && lp->n == rp->n) {
                K = lp->c[0];
                N = rp->c[0];
                ok = true;
                for (int i = 0; i < lp->n && ok; i++)
                    ok = lp->c[i] == K && rp->r[i] == K && rp->c[i] == N;
                M = 0;
                for (int i = 0; i < lp->n && ok; i++)
                    M = roof_add(c, M, lp->r[i]);
                G = lp->n;
            }
            free(lp);
            free(rp);
        }
    }
    if (!ok) {
        roof_fail(c, "ValueError: grouped_gemm could not parse Input Dims");
        return;
    }
    int bi, bo;
    bool hbi, hbo;
    const char *d0;
    grouped_dtypes(c, &bi, &bo, &d0, &hbi, &hbo);
    if (!roof_ok(c))
        return;
    grouped_params(c, M, K, N, G, hbi, bi, hbo, bo);
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)roof_mul(c, roof_mul(c, roof_mul(c, 2, M), K), N));
        if (!hbi || !hbo) {
            roof_fail(c, "TypeError: unknown bytes per element");
        } else {
            int64_t in = roof_add(c, roof_mul(c, M, K), roof_mul(c, roof_mul(c, G, K), N));
            roof_set_bytes(
                c, true,
                (double)roof_add(c, roof_mul(c, in, bi), roof_mul(c, roof_mul(c, M, N), bo)));
        }
        grouped_spec(c, d0);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* variable-K grouped GEMM: per-group (M_i, K_i) x (K_i, N_i), summed */
void roof_grouped_gemm_var_k(struct roof_ctx *c)
{
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    struct pairs *lp, *rp;
    if (!pairs_new(c, &lp, &rp))
        return;
    bool ok = false;
    if (roof_pv_is_array(dims) && dims->n >= 2) {
        struct pv *a = roof_pv_array_get(dims, 0), *b = roof_pv_array_get(dims, 1);
        if (roof_pv_is_array(a) && roof_pv_is_array(b) && a->n == 2 && b->n == 2 &&
            pos_ints(a, 0, 2) && pos_ints(b, 0, 2)) {
            lp->r[0] = ival(roof_pv_array_get(a, 0));
            lp->c[0] = ival(roof_pv_array_get(a, 1));
            rp->r[0] = lp->c[0];
            rp->c[0] = ival(roof_pv_array_get(b, 1));
            lp->n = rp->n = 1;
            ok = true;
        } else if (roof_pv_is_array(a) && roof_pv_is_array(b)) {
            collect_2d(a, lp, 0);
            collect_2d(b, rp, 0);
            ok = !lp->overflow && !rp->overflow && lp->n && lp->n == rp->n;
            for (int i = 0; i < lp->n && ok; i++)
                ok = lp->c[i] == rp->r[i];
        }
    }
    if (!ok) {
        if (lp->overflow || rp->overflow)
            roof_fail(c, "more than %d GEMM groups", MAX_GROUPS);
        else
            roof_fail(c, "ValueError: grouped_gemm_variable_k could not parse Input Dims");
        free(lp);
        free(rp);
        return;
    }
    int bi, bo;
    bool hbi, hbo;
    const char *d0;
    grouped_dtypes(c, &bi, &bo, &d0, &hbi, &hbo);
    int64_t M = 0;
    for (int i = 0; i < lp->n; i++)
        M = roof_add(c, M, lp->r[i]);
    if (roof_ok(c)) {
        grouped_params(c, M, lp->c[0], rp->c[0], lp->n, hbi, bi, hbo, bo);
        /* group_pairs: [((M_i, K_i), (K_i, N_i)), ...] */
        size_t cap = (size_t)lp->n * 96 + 8;
        char *t = malloc(cap);
        if (!t) {
            c->oom = true;
        } else {
            size_t n = 0;
            t[n++] = '[';
            for (int i = 0; i < lp->n; i++)
                n += (size_t)snprintf(t + n, cap - n, "%s((%lld, %lld), (%lld, %lld))",
                                      i ? ", " : "", (long long)lp->r[i], (long long)lp->c[i],
                                      (long long)rp->r[i], (long long)rp->c[i]);
            snprintf(t + n, cap - n, "]");
            roof_p_str(c, "group_pairs", t);
            free(t);
        }
        if (roof_begin(c, ROOF_FWD)) {
            int64_t f = 0, by = 0;
            for (int i = 0; i < lp->n; i++) {
                f = roof_add(
                    c, f, roof_mul(c, roof_mul(c, roof_mul(c, 2, lp->r[i]), lp->c[i]), rp->c[i]));
                int64_t in =
                    roof_add(c, roof_mul(c, lp->r[i], lp->c[i]), roof_mul(c, lp->c[i], rp->c[i]));
                by = roof_add(c, by,
                              roof_add(c, roof_mul(c, in, bi),
                                       roof_mul(c, roof_mul(c, lp->r[i], rp->c[i]), bo)));
            }
            roof_set_flops(c, (double)f);
            if (hbi && hbo)
                roof_set_bytes(c, true, (double)by);
            grouped_spec(c, d0);
        }
        roof_no_bwd(c, MP_ROOFLINE_SKIP);
    }
    free(lp);
    free(rp);
}
