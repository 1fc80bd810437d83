/* Attention (SDPA) family: aten::_scaled_dot_product_{flash,efficient,cudnn}_
 * attention, flash-attn (dense and varlen, forward and backward), aiter's
 * attention ops and EvoformerAttention (category SDPA_fwd / SDPA_bwd, sheet
 * "SDPA", compute spec matrix_<dtype of Q> when the class records dtypes).
 *
 * flops = B*H_Q*(2*N_Q*N_KV*d_qk + 2*N_Q*N_KV*d_v), halved when causal
 * (causal with N_Q != N_KV raises, so the row is dropped); bytes = 2 bytes per
 * element of Q, K, V and O (TraceLens calls bytes() without the dtype). The
 * backward formula adds the dV, dP, dQ, dK products (and the QK recompute of
 * flash implementations) and reads/writes Q, K, V, dO, dQ, dK, dV. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "roofline_int.h"

struct sdpa {
    double B, NQ, HQ, NKV, HKV, dqk, dv;
    bool causal, flash_impl;
    const char *dtype; /* dtype_A_B[0], NULL when the class keeps no dtypes */
};

/* t halved when causal (which needs N_Q == N_KV) */
static double sdpa_causal(struct roof_ctx *c, const struct sdpa *s, double t)
{
    if (!s->causal)
        return t;
    if (s->NQ != s->NKV) {
        roof_fail(c, "ValueError: causal=True but N_Q != N_K: %.0f != %.0f", s->NQ, s->NKV);
        return 0;
    }
    return t / 2;
}

/* SDPA.flops_func, in Python's evaluation order (the varlen classes pass
 * floats) */
static double sdpa_flops(struct roof_ctx *c, const struct sdpa *s)
{
    double qk = s->B * s->HQ * (2 * s->NQ * s->NKV * s->dqk);
    double pv = s->B * s->HQ * (2 * s->NQ * s->dv * s->NKV);
    double t = qk + pv;
    return sdpa_causal(c, s, t);
}

/* Elements of Q, K, V and O (O and dO have the same shape) */
static void sdpa_elems(const struct sdpa *s, double *q, double *k, double *v, double *o)
{
    *q = s->B * s->NQ * s->HQ * s->dqk;
    *k = s->B * s->NKV * s->HKV * s->dqk;
    *v = s->B * s->NKV * s->HKV * s->dv;
    *o = s->B * s->NQ * s->HQ * s->dv;
}

static double sdpa_bytes(const struct sdpa *s, double bpe)
{
    double q, k, v, o;
    sdpa_elems(s, &q, &k, &v, &o);
    return (q + k + v + o) * bpe;
}

static double floordiv(double a, double b)
{
    return floor(a / b);
}

static double sdpa_flops_bwd(struct roof_ctx *c, const struct sdpa *s)
{
    if (s->HKV == 0) {
        roof_fail(c, "ZeroDivisionError: H_KV is 0");
        return 0;
    }
    double t = 0;
    if (s->flash_impl)
        t += s->B * s->HQ * (2 * s->NQ * s->NKV * s->dqk); /* recompute QK */
    double gqa = floordiv(s->HQ, s->HKV) - 1;
    t += s->B * s->HQ * (2 * s->NKV * s->NQ * s->dv) + s->B * s->NKV * s->dv * gqa;   /* dV */
    t += s->B * s->HQ * (2 * s->NQ * s->NKV * s->dv);                                 /* dP */
    t += s->B * s->HQ * (2 * s->NQ * s->NKV * s->dqk);                                /* dQ */
    t += s->B * s->HQ * (2 * s->NKV * s->NQ * s->dqk) + s->B * s->NKV * s->dqk * gqa; /* dK */
    return sdpa_causal(c, s, t);
}

static double sdpa_bytes_bwd(const struct sdpa *s, double bpe)
{
    double q, k, v, dout;
    sdpa_elems(s, &q, &k, &v, &dout);
    return (q + k + v + dout + q + k + v) * bpe;
}

/* extract_sdpa_cfg: q, k, v shapes indexed in (B, H, N, d) order by idx;
 * mismatched batch, K/V heads, K/V lengths or Q/K head dims raise. */
static bool sdpa_extract(struct roof_ctx *c, long qi, long ki, long vi, const int idx[4],
                         struct sdpa *s)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct roof_shape q, k, v;
    roof_shape(c, roof_at(c, dims, qi), &q);
    roof_shape(c, roof_at(c, dims, ki), &k);
    roof_shape(c, roof_at(c, dims, vi), &v);
    if (!roof_ok(c))
        return false;
    for (int i = 0; i < 4; i++) {
        if (idx[i] >= q.n || idx[i] >= k.n || idx[i] >= v.n) {
            roof_fail(c, "IndexError: attention input with too few dims");
            return false;
        }
    }
    int64_t Bq = q.d[idx[0]], Hq = q.d[idx[1]], Nq = q.d[idx[2]], dq = q.d[idx[3]];
    int64_t Bk = k.d[idx[0]], Hk = k.d[idx[1]], Nk = k.d[idx[2]], dk = k.d[idx[3]];
    int64_t Bv = v.d[idx[0]], Hv = v.d[idx[1]], Nv = v.d[idx[2]], dv = v.d[idx[3]];
    if (Bq != Bk || Bq != Bv)
        roof_fail(c, "ValueError: batch sizes do not match");
    else if (Hk != Hv)
        roof_fail(c, "ValueError: head sizes do not match for K and V");
    else if (Nk != Nv)
        roof_fail(c, "ValueError: length sizes do not match for K and V");
    else if (dq != dk)
        roof_fail(c, "ValueError: head dimensions do not match for Q and K");
    if (!roof_ok(c))
        return false;
    s->B = (double)Bq;
    s->NQ = (double)Nq;
    s->HQ = (double)Hq;
    s->NKV = (double)Nk;
    s->HKV = (double)Hk;
    s->dqk = (double)dq;
    s->dv = (double)dv;
    return true;
}

static const int BHND[4] = {0, 1, 2, 3}; /* aten: (B, H, N, d) */
static const int BNHD[4] = {0, 2, 1, 3}; /* flash-attn, aiter: (B, N, H, d) */

static void p_cfg(struct roof_ctx *c, const struct sdpa *s)
{
    roof_p_int(c, "B", (int64_t)s->B);
    roof_p_int(c, "N_Q", (int64_t)s->NQ);
    roof_p_int(c, "H_Q", (int64_t)s->HQ);
    roof_p_int(c, "N_KV", (int64_t)s->NKV);
    roof_p_int(c, "H_KV", (int64_t)s->HKV);
    roof_p_int(c, "d_h_qk", (int64_t)s->dqk);
    roof_p_int(c, "d_h_v", (int64_t)s->dv);
}

/* utils.optional_float: "", "None", None or anything float() rejects -> 0.0 */
static double optional_float(struct pv *v)
{
    if (roof_pv_is_number(v))
        return roof_pv_number_value(v);
    if (!roof_pv_is_string(v))
        return 0.0;
    const char *t = roof_pv_string_value(v);
    double d;
    if (!t[0] || !strcmp(t, "None") || !roof_parse_pyfloat(t, &d))
        return 0.0;
    return d;
}

/* `s.lower() == "true" if s not in ("", "None") else False` */
static bool causal_text(struct roof_ctx *c, struct pv *v)
{
    if (!roof_ok(c))
        return false;
    if (!roof_pv_is_string(v)) {
        roof_fail(c, "AttributeError: causal flag is not a str");
        return false;
    }
    const char *t = roof_pv_string_value(v);
    if (!t[0] || !strcmp(t, "None"))
        return false;
    return !strcasecmp(t, "true");
}

/* dtype_A_B = tuple(Input type[:2]) */
static void p_dtypes(struct roof_ctx *c, struct sdpa *s)
{
    struct pv *types = roof_arg(c, "Input type");
    if (!roof_ok(c))
        return;
    roof_p_tuple_slice(c, "dtype_A_B", types, 0, 2);
    struct pv *t0 = roof_pv_is_array(types) ? roof_pv_array_get(types, 0) : NULL;
    s->dtype = roof_pv_is_string(t0) ? roof_pv_string_value(t0) : NULL;
}

enum { FWD_PLAIN, FWD_IS_BWD };

/* The forward phase of a class (its flops()/bytes()) and the backward phase
 * (SDPA.flops_bwd()/bytes_bwd() with the default 2 bytes per element).
 * fwd_bpe: bytes per element of the class's bytes(); NAN means unknown
 * (None), which TraceLens turns into a TypeError. */
static void sdpa_run(struct roof_ctx *c, const struct sdpa *s, int kind, double fwd_bpe)
{
    if (roof_begin(c, ROOF_FWD)) {
        if (kind == FWD_PLAIN) {
            roof_set_flops(c, sdpa_flops(c, s));
            roof_set_bytes(c, true, sdpa_bytes(s, fwd_bpe));
        } else {
            roof_set_flops(c, sdpa_flops_bwd(c, s));
            if (isnan(fwd_bpe))
                roof_fail(c, "TypeError: unknown bytes per element");
            else
                roof_set_bytes(c, true, sdpa_bytes_bwd(s, fwd_bpe));
        }
        roof_set_spec(c, "matrix", s->dtype);
    }
    if (roof_begin(c, ROOF_BWD)) {
        roof_set_flops(c, sdpa_flops_bwd(c, s));
        roof_set_bytes(c, true, sdpa_bytes_bwd(s, 2));
    }
}

/* aten::_scaled_dot_product_*_attention: (B, H, N, d); dropout and causal
 * at Concrete Inputs [di], [ci]. */
static void sdpa_aten(struct roof_ctx *c, long di, long ci, bool flash_impl)
{
    struct sdpa s = {0};
    if (!sdpa_extract(c, 0, 1, 2, BHND, &s))
        return;
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    double dropout = optional_float(roof_at(c, conc, di));
    s.causal = causal_text(c, roof_at(c, conc, ci));
    s.flash_impl = flash_impl;
    if (!roof_ok(c))
        return;
    p_cfg(c, &s);
    roof_p_float(c, "dropout", dropout);
    roof_p_bool(c, "causal", s.causal);
    roof_p_bool(c, "flash_impl", flash_impl);
    p_dtypes(c, &s);
    sdpa_run(c, &s, FWD_PLAIN, 2);
}

void roof_sdpa_aten_flash(struct roof_ctx *c)
{
    sdpa_aten(c, 3, 4, true);
}

void roof_sdpa_aten_efficient(struct roof_ctx *c)
{
    sdpa_aten(c, 5, 6, false);
}

void roof_sdpa_aten_cudnn(struct roof_ctx *c)
{
    sdpa_aten(c, 5, 6, false);
}

static void p_qkv_strides(struct roof_ctx *c, long qi, long ki, long vi)
{
    struct pv *st = roof_arg(c, "Input Strides");
    struct pv *q = roof_at(c, st, qi), *k = roof_at(c, st, ki), *v = roof_at(c, st, vi);
    if (!roof_ok(c))
        return;
    roof_p_tuple(c, "q_stride", q);
    roof_p_tuple(c, "k_stride", k);
    roof_p_tuple(c, "v_stride", v);
}

/* The parameters of the flash-attn classes (q, k, v strides at qi..qi+2);
 * false when the row failed. */
static bool flash_params(struct roof_ctx *c, struct sdpa *s, long qi, double dropout, bool is_none)
{
    s->flash_impl = true;
    if (!roof_ok(c))
        return false;
    p_cfg(c, s);
    p_qkv_strides(c, qi, qi + 1, qi + 2);
    roof_p_float(c, "dropout", dropout);
    if (is_none)
        roof_p_none(c, "causal");
    else
        roof_p_bool(c, "causal", s->causal);
    roof_p_bool(c, "flash_impl", true);
    p_dtypes(c, s);
    return true;
}

/* FlashAttnFunc / flash_attn::_flash_attn_forward: (B, N, H, d), dropout
 * float(Concrete[3]), causal eval(Concrete[5]). */
void roof_sdpa_flash(struct roof_ctx *c)
{
    struct sdpa s = {0};
    if (!sdpa_extract(c, 0, 1, 2, BNHD, &s))
        return;
    struct pv *types = roof_arg(c, "Input type");
    (void)types;
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    struct pv *st = roof_arg(c, "Input Strides");
    (void)roof_at(c, st, 2);
    double dropout = roof_pyfloat(c, roof_str(c, roof_at(c, conc, 3)));
    bool is_none;
    s.causal = roof_pyeval_bool(c, roof_str(c, roof_at(c, conc, 5)), &is_none);
    if (!flash_params(c, &s, 0, dropout, is_none))
        return;
    sdpa_run(c, &s, FWD_PLAIN, 2);
}

/* flash_attn::_flash_attn_backward(dout, q, k, v, out, lse, ...): dropout
 * Concrete[8], causal Concrete[10] (True when absent); flops() and bytes()
 * are the backward formulas, bytes with the dtype's size. */
void roof_sdpa_flash_bwd(struct roof_ctx *c)
{
    struct sdpa s = {0};
    if (!sdpa_extract(c, 1, 2, 3, BNHD, &s))
        return;
    struct pv *conc = roof_arg_opt(c, "Concrete Inputs");
    size_t nc = roof_pv_is_array(conc) ? roof_pv_array_size(conc) : 0;
    struct pv *types = roof_arg(c, "Input type");
    (void)types;
    struct pv *st = roof_arg(c, "Input Strides");
    (void)roof_at(c, st, 3);
    double dropout = 0.0;
    if (nc > 8 && roof_truthy(roof_pv_array_get(conc, 8)))
        dropout = roof_pyfloat(c, roof_str(c, roof_pv_array_get(conc, 8)));
    bool is_none = false;
    s.causal = true;
    if (nc > 10 && roof_truthy(roof_pv_array_get(conc, 10)))
        s.causal = roof_pyeval_bool(c, roof_str(c, roof_pv_array_get(conc, 10)), &is_none);
    if (!flash_params(c, &s, 1, dropout, is_none))
        return;
    int bpe = roof_bpe(s.dtype);
    sdpa_run(c, &s, FWD_IS_BWD, bpe ? (double)bpe : NAN);
}

/* aiter-style classes without dtypes: dims at qi..qi+2 in (B, N, H, d),
 * dropout optional_float(Concrete[di]), causal text at Concrete[ci]. */
static void sdpa_aiter(struct roof_ctx *c, long qi, long di, long ci, int kind)
{
    struct sdpa s = {0};
    if (!sdpa_extract(c, qi, qi + 1, qi + 2, BNHD, &s))
        return;
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    double dropout = di >= 0 ? optional_float(roof_at(c, conc, di)) : 0.0;
    s.causal = causal_text(c, roof_at(c, conc, ci));
    s.flash_impl = true;
    if (!roof_ok(c))
        return;
    p_cfg(c, &s);
    roof_p_float(c, "dropout", dropout);
    roof_p_bool(c, "causal", s.causal);
    roof_p_bool(c, "flash_impl", true);
    sdpa_run(c, &s, kind, 2);
}

void roof_sdpa_aiter_flash_fwd(struct roof_ctx *c)
{
    sdpa_aiter(c, 0, 3, 5, FWD_PLAIN);
}

void roof_sdpa_aiter_flash_bwd(struct roof_ctx *c)
{
    sdpa_aiter(c, 0, 10, 12, FWD_IS_BWD);
}

void roof_sdpa_flash_v3(struct roof_ctx *c)
{
    sdpa_aiter(c, 0, -1, 24, FWD_PLAIN);
}

void roof_sdpa_aiter_fmha_v3_fwd_wrapper(struct roof_ctx *c)
{
    sdpa_aiter(c, 1, 4, 6, FWD_PLAIN);
}

void roof_sdpa_aiter_fmha_v3_bwd_wrapper(struct roof_ctx *c)
{
    sdpa_aiter(c, 1, 7, 9, FWD_IS_BWD);
}

void roof_sdpa_aiter_mha_fwd(struct roof_ctx *c)
{
    sdpa_aiter(c, 0, 3, 5, FWD_PLAIN);
}

void roof_sdpa_aiter_mha_bwd(struct roof_ctx *c)
{
    sdpa_aiter(c, 1, 6, 8, FWD_IS_BWD);
}

/* EvoformerAttention(Q, K, V, ...): Q is (Batch, N_seq, N_res, Head, Dim);
 * the MSA depth folds into the batch; never causal. */
void roof_sdpa_evoformer(struct roof_ctx *c)
{
    struct roof_shape q;
    roof_shape_argi(c, "Input Dims", 0, &q);
    if (roof_ok(c) && q.n != 5)
        roof_fail(c, "ValueError: EvoformerAttention Q must have 5 dims");
    if (!roof_ok(c))
        return;
    struct pv *types = roof_arg_opt(c, "Input type");
    const char *dt = NULL;
    if (roof_truthy(types))
        dt = roof_str(c, roof_at(c, types, 0));
    struct sdpa s = {0};
    s.B = (double)roof_mul(c, q.d[0], q.d[1]);
    s.NQ = s.NKV = (double)q.d[2];
    s.HQ = s.HKV = (double)q.d[3];
    s.dqk = s.dv = (double)q.d[4];
    s.dtype = dt;
    if (!roof_ok(c))
        return;
    p_cfg(c, &s);
    roof_p_bool(c, "causal", false);
    roof_p_bool(c, "flash_impl", false);
    roof_p_strs(c, "dtype_A_B", 1, &dt, true);
    sdpa_run(c, &s, FWD_PLAIN, 2);
}

/* flash_attn varlen: q, k, v packed as (T, H, d); the number of sequences
 * comes from the cu_seqlens shapes and only the longest length is known, so
 * flops = one max-length sequence + (n-1) sequences sharing the rest. */
void roof_sdpa_varlen(struct roof_ctx *c)
{
    bool bwd = c->cls->variant == 1;
    long qi = bwd ? 1 : 0, cu = bwd ? 9 : 3, mc = bwd ? 11 : 5;
    struct pv *dims = roof_arg(c, "Input Dims");
    struct roof_shape q, k, v;
    roof_shape(c, roof_at(c, dims, qi), &q);
    roof_shape(c, roof_at(c, dims, qi + 1), &k);
    roof_shape(c, roof_at(c, dims, qi + 2), &v);
    if (roof_ok(c) && (q.n < 3 || k.n < 3 || v.n < 3))
        roof_fail(c, "IndexError: varlen attention input with too few dims");
    if (!roof_ok(c))
        return;
    /* (H, N, d) = shape[1], shape[0], shape[2] */
    if (k.d[1] != v.d[1])
        roof_fail(c, "ValueError: head sizes do not match for K and V");
    else if (k.d[0] != v.d[0])
        roof_fail(c, "ValueError: length sizes do not match for K and V");
    else if (q.d[2] != k.d[2])
        roof_fail(c, "ValueError: head dimensions do not match for Q and K");
    if (!roof_ok(c))
        return;
    struct sdpa s = {1,
                     (double)q.d[0],
                     (double)q.d[1],
                     (double)k.d[0],
                     (double)k.d[1],
                     (double)q.d[2],
                     (double)v.d[2],
                     false,
                     true,
                     NULL};
    struct pv *types = roof_arg(c, "Input type");
    (void)types;
    struct pv *st = roof_arg(c, "Input Strides");
    (void)roof_at(c, st, qi + 2);
    int64_t nsq = roof_int(c, roof_at(c, roof_at(c, dims, cu), 0)) - 1;
    int64_t nskv = roof_int(c, roof_at(c, roof_at(c, dims, cu + 1), 0)) - 1;
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    double maxq = roof_pyfloat(c, roof_str(c, roof_at(c, conc, mc)));
    double maxkv = roof_pyfloat(c, roof_str(c, roof_at(c, conc, mc + 1)));
    double dropout = roof_pyfloat(c, roof_str(c, roof_at(c, conc, mc + 2)));
    bool is_none;
    s.causal = roof_pyeval_bool(c, roof_str(c, roof_at(c, conc, mc + 4)), &is_none);
    if (!roof_ok(c))
        return;
    p_cfg(c, &s);
    p_qkv_strides(c, qi, qi + 1, qi + 2);
    roof_p_float(c, "dropout", dropout);
    if (is_none)
        roof_p_none(c, "causal");
    else
        roof_p_bool(c, "causal", s.causal);
    roof_p_bool(c, "flash_impl", true);
    p_dtypes(c, &s);
    roof_p_int(c, "num_seqs_q", nsq);
    roof_p_int(c, "num_seqs_kv", nskv);
    roof_p_float(c, "max_seqlen_q", maxq);
    roof_p_float(c, "max_seqlen_kv", maxkv);
    if (roof_begin(c, ROOF_FWD)) {
        struct sdpa m = s;
        m.NQ = maxq;
        m.NKV = maxkv;
        double f = bwd ? sdpa_flops_bwd(c, &m) : sdpa_flops(c, &m);
        if (nsq > 1) {
            if (nskv == 1) {
                roof_fail(c, "ZeroDivisionError: one kv sequence");
            } else {
                struct sdpa r = s;
                r.NQ = floordiv(s.NQ - maxq, (double)(nsq - 1));
                r.NKV = floordiv(s.NKV - maxkv, (double)(nskv - 1));
                f += (double)(nsq - 1) * (bwd ? sdpa_flops_bwd(c, &r) : sdpa_flops(c, &r));
            }
        }
        roof_set_flops(c, f);
        roof_set_bytes(c, true, bwd ? sdpa_bytes_bwd(&s, 2) : sdpa_bytes(&s, 2));
        roof_set_spec(c, "matrix", s.dtype);
    }
    if (roof_begin(c, ROOF_BWD)) {
        roof_set_flops(c, sdpa_flops_bwd(c, &s));
        roof_set_bytes(c, true, sdpa_bytes_bwd(&s, 2));
    }
}
