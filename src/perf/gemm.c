/* GEMM family: aten::mm, addmm, _scaled_mm, bmm, baddbmm and the
 * vLLM / TransformerEngine / aiter GEMM ops TraceLens models (category and
 * sheet "GEMM", compute spec matrix_<dtype of A>).
 *
 * flops = B * (2*M*N*K + M*N if bias); bytes = B * (M*K*bpe_A + K*N*bpe_B +
 * M*N*bpe_out + N*bpe_bias if bias), unknown when any size is unknown.
 * Parameters come out in TraceLens's order: the class's own, then "B" when the
 * class did not set it, then "transpose" when a kernel name tells it. */
#include <stdio.h>
#include <string.h>

#include "perf_int.h"

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
        if (i < 3 || strncmp(q + 3, "_A", 2))
            continue;
        q += 5;
        for (i = 0; i < 3 && q[i] >= 'a' && q[i] <= 'z'; i++)
            ;
        if (i < 3 || strncmp(q + 3, "_B", 2))
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
static void gemm_kernels(struct pm_ctx *c, struct gemm *g)
{
    const struct mp_perf_op *op = c->op;
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
                pm_fail(c, "IndexError: nvjet kernel name without transpose flags");
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
static void gemm_post(struct pm_ctx *c, struct gemm *g)
{
    if (pm_p_find(c, "B") < 0) {
        g->B = 1;
        pm_p_int(c, "B", 1);
    }
    if (g->has_trans) {
        char t[32];
        static const char *const tf[] = {"None", "False", "True"};
        snprintf(t, sizeof(t), "(%s, %s)", tf[g->trans[0] + 1], tf[g->trans[1] + 1]);
        pm_p_str(c, "transpose", t);
    }
}

/* "stride_A"/"stride_B": tuple(Input Strides[i]), both None when the trace
 * has no strides (KeyError is caught, IndexError is not). */
static void gemm_strides(struct pm_ctx *c, long ia, long ib)
{
    json_t *st = pm_arg_opt(c, "Input Strides");
    if (!st) {
        pm_p_none(c, "stride_A");
        pm_p_none(c, "stride_B");
        return;
    }
    json_t *a = pm_at(c, st, ia);
    json_t *b = pm_at(c, st, ib);
    if (!pm_ok(c))
        return;
    pm_p_tuple(c, "stride_A", a);
    pm_p_tuple(c, "stride_B", b);
}

/* dtype_A_B = tuple(Input type[from:to]); printed later, in its place */
static void gemm_dtypes(struct pm_ctx *c, struct gemm *g, long from, long to)
{
    json_t *types = pm_arg(c, "Input type");
    if (!pm_ok(c))
        return;
    if (!json_is_array(types)) {
        pm_fail(c, "TypeError: Input type is not a list");
        return;
    }
    long n = (long)json_array_size(types);
    g->nd = 0;
    for (long i = from; i < to && i < n; i++)
        g->dt[g->nd++] = json_is_string(json_array_get(types, (size_t)i))
                             ? json_string_value(json_array_get(types, (size_t)i))
                             : NULL;
}

static const char *gemm_dt(struct pm_ctx *c, const struct gemm *g, int i)
{
    if (i >= g->nd) {
        pm_fail(c, "IndexError: tuple index out of range");
        return NULL;
    }
    return g->dt[i];
}

static int64_t gemm_flops_int(struct pm_ctx *c, const struct gemm *g)
{
    int64_t f = pm_mul(c, pm_mul(c, pm_mul(c, 2, g->M), g->N), g->K);
    if (g->bias)
        f = pm_add(c, f, pm_mul(c, g->M, g->N));
    return f;
}

/* GEMM.bytes_func; false (None) when a size is unknown */
static bool gemm_bytes_int(struct pm_ctx *c, const struct gemm *g, int b1, int b2, int bb, int bo,
                           int64_t *out)
{
    if (!b1 || !b2 || !bb || !bo)
        return false;
    int64_t r = pm_mul(c, pm_mul(c, g->M, g->K), b1);
    r = pm_add(c, r, pm_mul(c, pm_mul(c, g->K, g->N), b2));
    r = pm_add(c, r, pm_mul(c, pm_mul(c, g->M, g->N), bo));
    if (g->bias)
        r = pm_add(c, r, pm_mul(c, g->N, bb));
    *out = r;
    return true;
}

/* Forward metrics with one size for all operands (aten::mm, addmm, bmm,
 * baddbmm, dynamic quant); batched multiplies by B. */
static void gemm_fwd_same_bpe(struct pm_ctx *c, const struct gemm *g, bool batched)
{
    if (!pm_begin(c, PM_FWD))
        return;
    int64_t f = gemm_flops_int(c, g);
    if (batched)
        f = pm_mul(c, g->B, f);
    pm_set_flops(c, (double)f);
    const char *a = gemm_dt(c, g, 0);
    (void)gemm_dt(c, g, 1); /* the A/B dtype comparison indexes [1] */
    if (!pm_ok(c))
        return;
    int bpe = pm_bpe(a);
    int64_t by;
    if (gemm_bytes_int(c, g, bpe, bpe, bpe, bpe, &by))
        pm_set_bytes(c, true, (double)(batched ? pm_mul(c, g->B, by) : by));
    pm_set_spec(c, "matrix", a);
}

static void gemm_mnk_2d(struct pm_ctx *c, struct gemm *g, long ia, long ib)
{
    json_t *dims = pm_arg(c, "Input Dims");
    json_t *A = pm_at(c, dims, ia), *B = pm_at(c, dims, ib);
    g->M = pm_int(c, pm_at(c, A, 0));
    g->N = pm_int(c, pm_at(c, B, 1));
    g->K = pm_int(c, pm_at(c, A, 1));
}

static void gemm_mnk_params(struct pm_ctx *c, const struct gemm *g)
{
    pm_p_int(c, "M", g->M);
    pm_p_int(c, "N", g->N);
    pm_p_int(c, "K", g->K);
    pm_p_bool(c, "bias", g->bias);
}

void pm_gemm_mm(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_2d(c, &g, 0, 1);
    gemm_dtypes(c, &g, 0, 2);
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 0, 1);
    pm_p_tuple_slice(c, "dtype_A_B", pm_arg(c, "Input type"), 0, 2);
    gemm_post(c, &g);
    gemm_fwd_same_bpe(c, &g, false);
    pm_no_bwd(c, MP_PERF_SKIP);
}

void pm_gemm_addmm(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    json_t *dims = pm_arg(c, "Input Dims");
    (void)pm_at(c, dims, 0); /* C (bias) */
    gemm_mnk_2d(c, &g, 1, 2);
    g.bias = true;
    gemm_dtypes(c, &g, 1, 3);
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 1, 2);
    pm_p_tuple_slice(c, "dtype_A_B", pm_arg(c, "Input type"), 1, 3);
    gemm_post(c, &g);
    gemm_fwd_same_bpe(c, &g, false);
    pm_no_bwd(c, MP_PERF_SKIP);
}

void pm_gemm_scaled_mm(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_2d(c, &g, 0, 1);
    g.bias = pm_len(c, pm_arg(c, "Input Dims")) == 3;
    gemm_dtypes(c, &g, 0, 2);
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 0, 1);
    pm_p_tuple_slice(c, "dtype_A_B", pm_arg(c, "Input type"), 0, 2);
    gemm_post(c, &g);
    if (pm_begin(c, PM_FWD)) {
        pm_set_flops(c, (double)gemm_flops_int(c, &g));
        const char *a = gemm_dt(c, &g, 0), *b = gemm_dt(c, &g, 1);
        int ba = pm_bpe(a), bb = pm_bpe(b);
        if (pm_ok(c) && (!ba || !bb))
            pm_fail(c, "AssertionError: data types of A and B are not supported");
        if (pm_ok(c)) {
            /* fp8 inputs are assumed to produce a 2-byte output */
            int out = ba == 1 ? 2 : (ba == 2 || ba == 4) ? ba : 0;
            int64_t by;
            if (gemm_bytes_int(c, &g, ba, ba, ba, out, &by))
                pm_set_bytes(c, true, (double)by);
            pm_set_spec(c, "matrix", a);
        }
    }
    pm_no_bwd(c, MP_PERF_SKIP);
}

static void gemm_bmm_common(struct pm_ctx *c, long ia, long ib, bool bias)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    json_t *dims = pm_arg(c, "Input Dims");
    if (bias)
        (void)pm_at(c, dims, 0);
    struct pm_shape A, B;
    pm_shape(c, pm_at(c, dims, ia), &A);
    pm_shape(c, pm_at(c, dims, ib), &B);
    if (pm_ok(c) && (A.n != 3 || B.n != 3))
        pm_fail(c, "ValueError: bmm operands must have 3 dims");
    if (!pm_ok(c))
        return;
    g.B = A.d[0];
    g.M = A.d[1];
    g.K = A.d[2];
    g.N = B.d[2];
    g.bias = bias;
    gemm_dtypes(c, &g, ia, ib + 1);
    if (!pm_ok(c))
        return;
    pm_p_int(c, "B", g.B);
    gemm_mnk_params(c, &g);
    gemm_strides(c, ia, ib);
    pm_p_tuple_slice(c, "dtype_A_B", pm_arg(c, "Input type"), ia, ib + 1);
    gemm_post(c, &g);
    gemm_fwd_same_bpe(c, &g, true);
    pm_no_bwd(c, MP_PERF_SKIP);
}

void pm_gemm_bmm(struct pm_ctx *c)
{
    gemm_bmm_common(c, 0, 1, false);
}

void pm_gemm_baddbmm(struct pm_ctx *c)
{
    gemm_bmm_common(c, 1, 2, true);
}

/* vllm::gemm_with_dynamic_quant: x [M, K] and w [N, K] are the first two 2-D
 * shapes of Input Dims. */
void pm_gemm_dynamic_quant(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    json_t *dims = pm_arg_opt(c, "Input Dims");
    json_t *A = NULL, *B = NULL;
    size_t n = json_is_array(dims) ? json_array_size(dims) : 0;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(dims, i);
        if (json_is_array(s) && json_array_size(s) == 2) {
            if (!A) {
                A = s;
            } else {
                B = s;
                break;
            }
        }
    }
    if ((!A || !B) && n >= 2) {
        if (!A && json_is_array(json_array_get(dims, 0)))
            A = json_array_get(dims, 0);
        if (!B && json_is_array(json_array_get(dims, 1)))
            B = json_array_get(dims, 1);
    }
    if (!A || !B || json_array_size(A) != 2 || json_array_size(B) != 2) {
        pm_fail(c, "ValueError: vllm::gemm_with_dynamic_quant missing 2D A,B shapes");
        return;
    }
    g.M = pm_int(c, json_array_get(A, 0));
    g.K = pm_int(c, json_array_get(A, 1));
    g.N = pm_int(c, json_array_get(B, 0));
    json_t *types = pm_arg_opt(c, "Input type");
    if (!json_is_array(types) || json_array_size(types) < 2) {
        pm_fail(c, "ValueError: vllm::gemm_with_dynamic_quant missing A,B dtypes");
        return;
    }
    g.nd = 2;
    g.dt[0] = json_string_value(json_array_get(types, 0));
    g.dt[1] = json_string_value(json_array_get(types, 1));
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 0, 1);
    pm_p_tuple_slice(c, "dtype_A_B", types, 0, 2);
    gemm_post(c, &g);
    gemm_fwd_same_bpe(c, &g, false);
    /* the class inherits GEMM's backward, whose bytes_bwd needs an argument
     * that TraceLens does not pass */
    if (pm_begin(c, PM_BWD))
        pm_fail(c, "TypeError: bytes_bwd() missing 1 required positional argument");
}

/* tex_ts::te_gemm_ts (TransformerEngine): A = Input Dims[0], B = [5],
 * transposes from Concrete Inputs [4] and [9], bias from [14]. */
void pm_gemm_te_gemm_ts(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    json_t *dims = pm_arg(c, "Input Dims");
    (void)pm_at(c, dims, 10);
    json_t *A = pm_at(c, dims, 0), *B = pm_at(c, dims, 5);
    json_t *conc = pm_arg(c, "Concrete Inputs");
    json_t *ta = pm_at(c, conc, 4), *tb = pm_at(c, conc, 9);
    if (!pm_ok(c))
        return;
    bool trans_a = json_is_string(ta) && !strcmp(json_string_value(ta), "1");
    bool trans_b = json_is_string(tb) && !strcmp(json_string_value(tb), "1");
    g.M = pm_int(c, pm_at(c, A, trans_a ? 0 : 1));
    g.K = pm_int(c, pm_at(c, A, trans_a ? 1 : 0));
    g.N = pm_int(c, pm_at(c, B, trans_b ? 1 : 0));
    json_t *bt = pm_at(c, conc, 14);
    g.bias = !(json_is_string(bt) && json_string_length(bt) == 0);
    static const long ti[4] = {0, 5, 10, 18};
    for (int i = 0; i < 4; i++)
        g.dt[i] = pm_str_argi(c, "Input type", ti[i]);
    g.nd = 4;
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 0, 5);
    pm_p_strs(c, "dtype_A_B", 4, g.dt, false);
    gemm_post(c, &g);
    if (pm_begin(c, PM_FWD)) {
        pm_set_flops(c, (double)gemm_flops_int(c, &g));
        int64_t by;
        if (gemm_bytes_int(c, &g, pm_bpe(g.dt[0]), pm_bpe(g.dt[1]), pm_bpe(g.dt[3]),
                           pm_bpe(g.dt[2]), &by))
            pm_set_bytes(c, true, (double)by);
        pm_set_spec(c, "matrix", g.dt[0]);
    }
    pm_no_bwd(c, MP_PERF_SKIP);
}

/* TransformerEngine v2 pseudo ops (_Linear*_mm): like aten::mm with a
 * 2-byte output whatever the input type. */
void pm_gemm_tev2(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    gemm_mnk_2d(c, &g, 0, 1);
    gemm_dtypes(c, &g, 0, 2);
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    gemm_strides(c, 0, 1);
    pm_p_tuple_slice(c, "dtype_A_B", pm_arg(c, "Input type"), 0, 2);
    gemm_post(c, &g);
    if (pm_begin(c, PM_FWD)) {
        pm_set_flops(c, (double)gemm_flops_int(c, &g));
        const char *a = gemm_dt(c, &g, 0), *b = gemm_dt(c, &g, 1);
        if (pm_ok(c) && a && b && strcmp(a, b))
            pm_fail(c, "ValueError: data types of A and B are different");
        int bpe = pm_bpe(a);
        int64_t by;
        if (pm_ok(c) && gemm_bytes_int(c, &g, bpe, bpe, bpe, 2, &by))
            pm_set_bytes(c, true, (double)by);
        pm_set_spec(c, "matrix", a);
    }
    pm_no_bwd(c, MP_PERF_SKIP);
}

/* aiter::gemm_a16w16: x [M, K], w [N, K]; output in x's type. */
void pm_gemm_a16w16(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    json_t *dims = pm_arg(c, "Input Dims");
    json_t *A = pm_at(c, dims, 0), *B = pm_at(c, dims, 1);
    size_t nd = pm_len(c, dims);
    g.bias = nd > 2 && pm_len(c, pm_at(c, dims, 2)) > 0;
    g.B = 1;
    g.M = pm_int(c, pm_at(c, A, 0));
    g.N = pm_int(c, pm_at(c, B, 0));
    g.K = pm_int(c, pm_at(c, A, 1));
    g.dt[0] = pm_str_argi(c, "Input type", 0);
    g.dt[1] = pm_str_argi(c, "Input type", 1);
    g.dt[2] = g.dt[0];
    g.nd = 3;
    if (!pm_ok(c))
        return;
    pm_p_int(c, "B", 1);
    gemm_mnk_params(c, &g);
    pm_p_strs(c, "dtype_A_B", 3, g.dt, false);
    gemm_post(c, &g);
    if (pm_begin(c, PM_FWD)) {
        pm_set_flops(c, (double)gemm_flops_int(c, &g));
        int64_t by;
        if (gemm_bytes_int(c, &g, pm_bpe(g.dt[0]), pm_bpe(g.dt[1]), pm_bpe(g.dt[2]),
                           pm_bpe(g.dt[2]), &by))
            pm_set_bytes(c, true, (double)by);
        pm_set_spec(c, "matrix", g.dt[0]);
    }
    if (pm_begin(c, PM_BWD))
        pm_fail(c, "TypeError: bytes_bwd() missing 1 required positional argument");
}

/* vllm::rocm_unquantized_gemm: x [M, K], weight [N, K], optional bias [N];
 * the output takes the bias's type when there is a bias, else the weight's. */
void pm_gemm_rocm_unquantized(struct pm_ctx *c)
{
    struct gemm g = {0};
    gemm_kernels(c, &g);
    json_t *dims = pm_arg(c, "Input Dims");
    g.bias = pm_len(c, dims) > 2 && pm_len(c, pm_at(c, dims, 2)) > 0;
    json_t *A = pm_at(c, dims, 0), *B = pm_at(c, dims, 1);
    g.M = pm_int(c, pm_at(c, A, 0));
    g.N = pm_int(c, pm_at(c, B, 0));
    g.K = pm_int(c, pm_at(c, A, 1));
    json_t *types = pm_arg(c, "Input type");
    g.dt[0] = pm_str(c, pm_at(c, types, 0));
    g.dt[1] = pm_str(c, pm_at(c, types, 1));
    g.dt[2] = pm_len(c, types) > 2 ? pm_str(c, pm_at(c, types, 2)) : "";
    g.nd = 3;
    if (!pm_ok(c))
        return;
    gemm_mnk_params(c, &g);
    pm_p_strs(c, "dtype_A_B", 3, g.dt, false);
    gemm_post(c, &g);
    if (pm_begin(c, PM_FWD)) {
        pm_set_flops(c, (double)gemm_flops_int(c, &g));
        int bo = g.bias ? pm_bpe(g.dt[2]) : pm_bpe(g.dt[1]);
        int64_t by;
        if (gemm_bytes_int(c, &g, pm_bpe(g.dt[0]), pm_bpe(g.dt[1]), bo, bo, &by))
            pm_set_bytes(c, true, (double)by);
        pm_set_spec(c, "matrix", g.dt[0]);
    }
    if (pm_begin(c, PM_BWD))
        pm_fail(c, "TypeError: bytes_bwd() missing 1 required positional argument");
}
