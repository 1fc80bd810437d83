/* Mixture-of-experts GEMMs that TraceLens models from pseudo ops
 * (category and sheet "MoE_unfused", compute spec matrix_<weight dtype>):
 * the up and down projections of the Triton (matmul_ogs, GPT-OSS style)
 * unfused MoE. The pseudo-op pass records the routing in the op's args:
 * "MoE topk" and "MoE GEMM gated"; the weight type comes from the first
 * kernel's name (mxfp4 / fp4 -> FP4 at half a byte, fp8 / e4m3 -> FP8).
 *
 * up:   flops = 2*M*K*N*topk*(2 if gated), bytes = M*K*in + E_active*(2 if
 *       gated)*K*N*w + M*N*topk*out
 * down: flops = 2*M*N*K*topk, bytes = M*N*topk*in + E_active*N*K*w + M*K*out
 * with E_active = E*(1 - ((E - topk)/E)^M), the expected number of experts
 * a uniform router touches, and N = K (TraceLens's stated limitation: the
 * intermediate size is not in the trace).
 *
 * The GPTQ/AWQ MoE (vllm::outplace_fused_experts, pseudo_op::moe_gptq_awq_*)
 * has the same formulas with INT4 weights (half a byte), input and output at
 * the input dtype's size (2 when unknown), and sizes from the op's Input
 * Dims: tokens and hidden size from the hidden states [T, K]; up: experts
 * and rows from w1 [E, N_rows, K/2], N = N_rows / 2 when gated; down:
 * experts from w2 [E, K, N/2], N = 2 * its last dim. Compute spec
 * matrix_<input dtype>.
 *
 * The flydsl two-stage MoE (pseudo_op::moe_flydsl_stage1 / _stage2 under
 * aiter::fused_moe_) takes the fused op's Input Dims [[T, K], w1 [E, X, Kp],
 * w2 [E, K, I], [T, topk], ...]: N = I * (K // Kp) (packed weights), gated
 * when X == 2 * N, input / weight bytes from the first two Input types (2 /
 * 1 when unknown), compute spec matrix_<weight dtype>; stage 1 is the up
 * formula, stage 2 the down one. The fused AITER op
 * (pseudo_op::moe_aiter_fused_1stage) reads the same shapes: flops = fc1
 * (x2 gated) + fc2 + M*K*(2*topk - 1), bytes = input + both weights
 * (E_active * N * K each, fc1 x2 gated) + output, spec matrix_<input dtype>. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "roofline_int.h"

/* Expected number of experts a uniform router touches with M tokens and
 * topk of E experts, and the bytes of one unfused MoE GEMM (up: input,
 * active weights x gf, topk outputs; down: topk inputs, active weights,
 * output); the same expressions for every MoE model, as TraceLens has them. */
static double moe_active_experts(double E, double topk, double M)
{
    return E * (1 - pow((E - topk) / E, M));
}

static double moe_gemm_bytes(bool up, double M, double K, double N, double ea, double topk, int gf,
                             double ib, double wb)
{
    if (up)
        return M * K * ib + ea * gf * K * N * wb + M * N * topk * ib;
    return M * N * topk * ib + ea * N * K * wb + M * K * ib;
}

/* The parameters every MoE model lists first. */
static void moe_params(struct roof_ctx *c, int64_t M, int64_t K, int64_t N, int64_t E,
                       struct pv *topk_v)
{
    roof_p_int(c, "num_tokens", M);
    roof_p_int(c, "hidden_dim", K);
    roof_p_int(c, "inter_dim", N);
    roof_p_int(c, "num_experts", E);
    roof_p_repr(c, "topk", topk_v);
}

/* 2 M K N topk gf: the FLOPs of one MoE GEMM over the routed tokens */
static int64_t moe_gemm_flops(struct roof_ctx *c, int64_t M, int64_t K, int64_t N, int64_t topk,
                              int gf)
{
    return roof_mul(c, roof_mul(c, roof_mul(c, roof_mul(c, 2, M), K), N), roof_mul(c, topk, gf));
}

/* *ea = the experts a batch touches; false (ZeroDivisionError, as TraceLens
 * raises) when there are none. */
static bool moe_experts(struct roof_ctx *c, int64_t E, int64_t topk, int64_t M, double *ea)
{
    if (E == 0) {
        roof_fail(c, "ZeroDivisionError: no experts");
        return false;
    }
    *ea = moe_active_experts((double)E, (double)topk, (double)M);
    return true;
}

/* moe_perf_model_extensions.DTYPE_TO_BYTES (exact names) */
static double moe_bpe(const char *dt)
{
    static const struct {
        const char *name;
        double b;
    } tab[] = {
        {"Float8_e4m3fn", 1},
        {"Float8_e4m3fnuz", 1},
        {"Float8_e5m2", 1},
        {"Float8_e5m2fnuz", 1},
        {"FP8", 1},
        {"FP4", 0.5},
        {"BFloat16", 2},
        {"Float16", 2},
        {"Half", 2},
        {"Float32", 4},
        {"Float", 4},
        {"c10::BFloat16", 2},
        {"c10::Float8_e4m3fn", 1},
        {"c10::Float8_e4m3fnuz", 1},
        {"c10::Float4_e2m1fn_x2", 0.5},
        {"c10::Half", 2},
        {"c10::Float", 4},
    };

    if (!dt)
        return 0;
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (!strcmp(dt, tab[i].name))
            return tab[i].b;
    return 0;
}

/* The bytes of one unfused MoE GEMM, over the experts the tokens reach */
static void moe_unfused_bytes(struct roof_ctx *c, bool up, int64_t M, int64_t K, int64_t N,
                              int64_t E, int64_t topk, int gf, double ib, double wb)
{
    double ea = 0;
    if (moe_experts(c, E, topk, M, &ea))
        roof_set_bytes(
            c, true,
            moe_gemm_bytes(up, (double)M, (double)K, (double)N, ea, (double)topk, gf, ib, wb));
}

void roof_moe_triton(struct roof_ctx *c)
{
    bool up = c->cls->variant == 1;
    struct pv *dims = roof_arg(c, "Input Dims");
    if (roof_ok(c) && roof_len(c, dims) < 2)
        roof_fail(c, "ValueError: expected at least 2 Input Dims for unfused MoE");
    struct pv *in = roof_at(c, dims, 0), *router = roof_at(c, dims, 1);
    int64_t M = roof_int(c, roof_at(c, in, 0));
    int64_t K = roof_int(c, roof_at(c, in, 1));
    int64_t E = roof_int(c, roof_at(c, router, 1));
    struct pv *topk_v = roof_arg(c, "MoE topk");
    struct pv *gated_v = roof_arg(c, "MoE GEMM gated");
    int64_t topk = roof_int(c, topk_v);
    if (!roof_ok(c))
        return;
    const char *wdt = NULL;
    if (c->op->n_kernels == 0 || !c->op->kernel_names || !c->op->kernel_names[0]) {
        roof_fail(c, "ValueError: kernel details not found in event");
        return;
    }
    const char *k0 = c->op->kernel_names[0];
    if (mp_str_contains_ci(k0, "mxfp4") || mp_str_contains_ci(k0, "fp4"))
        wdt = "FP4";
    else if (mp_str_contains_ci(k0, "fp8") || mp_str_contains_ci(k0, "e4m3"))
        wdt = "FP8";
    struct pv *types = roof_arg_opt(c, "Input type");
    if (!roof_pv_is_array(types) || roof_pv_array_size(types) < 2) {
        roof_fail(c, "ValueError: expected at least 2 Input types");
        return;
    }
    const char *idt = roof_str(c, roof_pv_array_get(types, 0));
    bool gated = roof_truthy(gated_v);
    if (!roof_ok(c))
        return;
    moe_params(c, M, K, K, E, topk_v);
    roof_p_repr(c, "gated", gated_v);
    roof_p_str(c, "input_dtype", idt);
    roof_p_str(c, "weight_dtype", wdt);
    if (roof_begin(c, ROOF_FWD)) {
        int gf = up && gated ? 2 : 1;
        roof_set_flops(c, (double)moe_gemm_flops(c, M, K, K, topk, gf));
        double ib = moe_bpe(idt), wb = moe_bpe(wdt);
        if (!ib || !wb)
            roof_fail(c, "ValueError: unknown %s dtype '%s'", !ib ? "input" : "weight",
                      !ib ? (idt ? idt : "None") : (wdt ? wdt : "None"));
        else
            moe_unfused_bytes(c, up, M, K, K, E, topk, gf, ib, wb);
        roof_set_spec(c, "matrix", wdt);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* TraceLens's moe_gptq_awq_up / moe_gptq_awq_down */
void roof_moe_gptq_awq(struct roof_ctx *c)
{
    bool up = c->cls->variant == 1;
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *in = roof_at(c, dims, 0);
    int64_t M = roof_int(c, roof_at(c, in, 0));
    int64_t K = roof_int(c, roof_at(c, in, 1));
    struct pv *w = roof_at(c, dims, up ? 1 : 2);
    int64_t E = roof_int(c, roof_at(c, w, 0));
    int64_t n = roof_int(c, roof_at(c, w, up ? 1 : 2));
    struct pv *topk_v = roof_arg(c, "MoE topk");
    struct pv *gated_v = up ? roof_arg_opt(c, "MoE GEMM gated") : NULL;
    bool gated = up && (!gated_v || roof_truthy(gated_v)); /* .get(..., True) */
    int64_t N = up ? (gated ? (n >= 0 ? n / 2 : -((-n + 1) / 2)) : n) : roof_mul(c, n, 2);
    struct pv *types = roof_arg_opt(c, "Input type");
    const char *idt = types ? roof_str(c, roof_at(c, types, 0)) : "BFloat16";
    int64_t topk = roof_int(c, topk_v);
    if (!roof_ok(c))
        return;
    moe_params(c, M, K, N, E, topk_v);
    if (up) {
        if (gated_v)
            roof_p_repr(c, "gated", gated_v);
        else
            roof_p_bool(c, "gated", true);
    }
    roof_p_str(c, "input_dtype", idt);
    if (roof_begin(c, ROOF_FWD)) {
        int gf = gated ? 2 : 1;
        roof_set_flops(c, (double)moe_gemm_flops(c, M, K, N, topk, gf));
        double ib = moe_bpe(idt);
        if (!ib)
            ib = 2; /* DTYPE_TO_BYTES.get(dtype, 2) */
        moe_unfused_bytes(c, up, M, K, N, E, topk, gf, ib, 0.5);
        roof_set_spec(c, "matrix", idt);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* TraceLens's moe_flydsl_stage1 / moe_flydsl_stage2 */
/* stage: 1 or 2 (flydsl), 0 the fused AITER 1-stage op */
void roof_moe_flydsl(struct roof_ctx *c)
{
    int stage = c->cls->variant;
    bool up = stage == 1;
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *in = roof_at(c, dims, 0), *w1 = roof_at(c, dims, 1), *w2 = roof_at(c, dims, 2);
    struct pv *tw = roof_at(c, dims, 3);
    int64_t M = roof_int(c, roof_at(c, in, 0));
    if (roof_ok(c) && (roof_len(c, w1) != 3 || roof_len(c, w2) != 3))
        roof_fail(c, "ValueError: expected 3 dims for w1 and w2");
    int64_t x1 = roof_int(c, roof_at(c, w1, 1)), kp = roof_int(c, roof_at(c, w1, 2));
    int64_t K = roof_int(c, roof_at(c, w2, 1)), I = roof_int(c, roof_at(c, w2, 2));
    int64_t E = roof_int(c, roof_at(c, w1, 0));
    struct pv *topk_v = roof_at(c, tw, 1);
    int64_t topk = roof_int(c, topk_v);
    struct pv *types = roof_arg(c, "Input type");
    const char *idt = roof_str(c, roof_at(c, types, 0));
    const char *wdt = roof_str(c, roof_at(c, types, 1));
    if (!roof_ok(c))
        return;
    if (kp == 0 || (kp == -1 && K == INT64_MIN)) {
        roof_fail(c, kp ? "OverflowError: hidden size"
                        : "ZeroDivisionError: integer division or "
                          "modulo by zero");
        return;
    }
    /* Python floor division */
    int64_t war = K / kp - ((K % kp != 0) && ((K < 0) != (kp < 0)) ? 1 : 0);
    int64_t N = roof_mul(c, I, war);
    bool gated = x1 == roof_mul(c, 2, N);
    moe_params(c, M, K, N, E, topk_v);
    roof_p_bool(c, "gated", gated);
    roof_p_str(c, "input_dtype", idt);
    roof_p_str(c, "weight_dtype", wdt);
    if (roof_begin(c, ROOF_FWD)) {
        double Md = (double)M, Kd = (double)K, Nd = (double)N;
        int gf = (up || stage == 0) && gated ? 2 : 1;
        int64_t f1 = moe_gemm_flops(c, M, K, N, topk, gf);
        if (stage == 0) { /* fc1 + fc2 + the top-k aggregation */
            int64_t f2 = roof_mul(c, roof_mul(c, roof_mul(c, roof_mul(c, 2, M), K), N), topk);
            int64_t agg = roof_mul(c, roof_mul(c, M, K), roof_add(c, roof_mul(c, 2, topk), -1));
            roof_set_flops(c, (double)roof_add(c, roof_add(c, f1, f2), agg));
        } else {
            roof_set_flops(c, (double)f1);
        }
        double ib = moe_bpe(idt), wb = moe_bpe(wdt), ea = 0;
        if (!ib)
            ib = 2; /* DTYPE_TO_BYTES.get(dtype, 2) */
        if (!wb)
            wb = 1; /* DTYPE_TO_BYTES.get(dtype, 1) */
        if (moe_experts(c, E, topk, M, &ea))
            roof_set_bytes(c, true,
                           stage == 0
                               ? Md * Kd * ib + ea * Nd * Kd * wb * gf + ea * Nd * Kd * wb +
                                     Md * Kd * ib
                               : moe_gemm_bytes(up, Md, Kd, Nd, ea, (double)topk, gf, ib, wb));
        roof_set_spec(c, "matrix", stage == 0 ? idt : wdt);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}
