/* Inference-engine ops from TraceLens's extension models
 * (PerfModel/extensions): the aiter / vLLM / SGLang RMSNorm variants
 * (category and sheet "RMSNorm"), rotary embeddings ("RoPE_fwd") and the
 * SGLang KV-cache store ("InferenceAttention"). All are vector ops.
 *
 * The RMSNorm variants share aten::_fused_rms_norm's formula
 * ((N/C)*(2C+2) + 2N flops, affine) and add what the fused op does on top:
 * a residual add, an FP8/FP4 quantisation of the output and its scales, a
 * padded output. */
#include <string.h>

#include "roofline_int.h"

enum rms_kind {
    RMS_PLAIN,         /* aiter::rms_norm, aiter::rmsnorm, rmsnorm2d_fwd_ck */
    RMS_DYNQUANT,      /* rmsnorm2d_fwd_with_dynamicquant_ck: FP8 out + per-token scale */
    RMS_QUANT,         /* aiter::rmsnorm_quant: FP8 out + per-group scales */
    RMS_FP8_GROUP,     /* vllm rmsnorm_fp8_group_quant */
    RMS_ADD,           /* rmsnorm2d_fwd_with_add_ck, add_rmsnorm: residual add */
    RMS_ADD_FP8_GROUP, /* vllm rmsnorm_with_add_fp8_group_quant */
    RMS_ADD_PAD,       /* rocm_aiter_triton_add_rmsnorm_pad, fused_add_rmsnorm_pad_ */
    RMS_MXFP4,         /* fused_rms_mxfp4_quant */
};

struct rms_variant {
    const char *name;
    enum rms_kind kind;
    long in;  /* Input Dims index of the input (shape, dtype, stride) */
    long w;   /* index of the weight, whose [0] is the channel count */
    long gsi; /* Concrete Inputs index of the group size / pad, -1 none */
};

static const struct rms_variant rms_variants[] = {
    {"aiter::rms_norm", RMS_PLAIN, 0, 1, -1},
    {"aiter::rmsnorm2d_fwd_ck", RMS_PLAIN, 0, 1, -1},
    {"aiter::rmsnorm", RMS_PLAIN, 1, 2, -1},
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck", RMS_DYNQUANT, 1, 3, -1},
    {"aiter::rmsnorm_quant", RMS_QUANT, 1, 3, 5},
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant", RMS_FP8_GROUP, 0, 1, 3},
    {"aiter::rmsnorm2d_fwd_with_add_ck", RMS_ADD, 1, 4, -1},
    {"aiter::add_rmsnorm", RMS_ADD, 1, 4, -1},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", RMS_ADD_FP8_GROUP, 0, 2, 4},
    {"vllm::rocm_aiter_triton_add_rmsnorm_pad", RMS_ADD_PAD, 0, 1, 4},
    {"aiter::fused_add_rmsnorm_pad_", RMS_ADD_PAD, 0, 1, 4},
    {"sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant", RMS_MXFP4, 0, 1, -1},
    {"aiter::_fuse_rmsnorm_fp4_quant", RMS_MXFP4, 0, 1, -1},
};

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void roof_rmsnorm_ext(struct roof_ctx *c)
{
    const struct rms_variant *v = NULL;
    for (size_t i = 0; i < sizeof(rms_variants) / sizeof(rms_variants[0]); i++)
        if (!strcmp(c->op->name, rms_variants[i].name))
            v = &rms_variants[i];
    if (!v) {
        roof_fail(c, "no RMSNorm variant for %s", c->op->name);
        return;
    }
    /* the pad variant reads its pad before anything else */
    int64_t pad = 0;
    if (v->kind == RMS_ADD_PAD)
        pad = roof_pyint(c, roof_str(c, roof_argi(c, "Concrete Inputs", v->gsi)));
    struct roof_shape shape;
    roof_shape_argi(c, "Input Dims", v->in, &shape);
    const char *din = roof_str_argi(c, "Input type", v->in);
    struct pv *sin = roof_argi(c, "Input Strides", v->in);
    int64_t C = roof_int(c, roof_at(c, roof_argi(c, "Input Dims", v->w), 0));
    if (!roof_ok(c))
        return;
    int64_t N = roof_prod(c, &shape, 0, shape.n);
    roof_p_unary_io(c, &shape, din, NULL, sin, NULL);
    roof_p_int(c, "num_channels", C);
    roof_p_bool(c, "has_bias", false);
    roof_p_bool(c, "is_affine", true);
    roof_p_bool(c, "is_training", false);
    /* constructor extras, after the parameters */
    int64_t gs = 0;
    bool has_x2 = false, has_res1 = false;
    int64_t n2 = 0;
    if (v->kind == RMS_QUANT) {
        /* int(Concrete[5]) with every failure mapped to 0 */
        struct pv *conc = roof_arg_opt(c, "Concrete Inputs");
        struct pv *g = roof_pv_is_array(conc) ? roof_pv_array_get(conc, (size_t)v->gsi) : NULL;
        if (!roof_pv_is_string(g) || !roof_parse_pyint(roof_pv_string_value(g), &gs))
            gs = roof_pv_is_integer(g) ? (int64_t)roof_pv_integer_value(g) : 0;
    } else if (v->kind == RMS_FP8_GROUP || v->kind == RMS_ADD_FP8_GROUP) {
        gs = roof_pyint(c, roof_str(c, roof_argi(c, "Concrete Inputs", v->gsi)));
    } else if (v->kind == RMS_MXFP4) {
        struct pv *dims = roof_arg(c, "Input Dims");
        size_t nd = roof_len(c, dims);
        if (nd > 3 && roof_len(c, roof_at(c, dims, 3)) == 2) {
            has_x2 = true;
            n2 = roof_int(c, roof_at(c, roof_at(c, dims, 3), 1));
        }
        if (nd > 6 && roof_len(c, roof_at(c, dims, 6)) == 2)
            has_res1 = true;
    }
    if (!roof_ok(c))
        return;
    if (!roof_begin(c, ROOF_FWD)) {
        roof_no_bwd(c, MP_ROOFLINE_SKIP);
        return;
    }
    int bpe = roof_bpe(din);
    double Nd = (double)N, Cd = (double)C;
    if (C == 0) {
        roof_fail(c, "ZeroDivisionError: num_channels is 0");
    } else {
        double rms = Nd / Cd * (2 * Cd + 2) + Nd * 2; /* RMSNorm.flops, affine */
        int64_t M = floordiv64(N, C);
        double f = rms, b = 0;
        switch (v->kind) {
        case RMS_PLAIN:
            b = Nd * bpe + Nd * bpe + Cd * bpe;
            break;
        case RMS_DYNQUANT:
            f += 2 * Nd;
            b = Nd * bpe + Cd * bpe + Nd * 1 + (double)M * 4;
            break;
        case RMS_QUANT:
        case RMS_FP8_GROUP: {
            int64_t g = v->kind == RMS_QUANT ? (gs > 0 ? gs : C) : gs;
            if (g == 0) {
                roof_fail(c, "ZeroDivisionError: group size 0");
                break;
            }
            int64_t ng = floordiv64(C + g - 1, g);
            f += 2 * Nd;
            b = Nd * bpe + Cd * bpe + Nd * 1 + (double)M * (double)ng * 4;
            break;
        }
        case RMS_ADD:
            f = Nd + rms;
            b = 2 * Nd * bpe + Cd * bpe + 2 * Nd * bpe;
            break;
        case RMS_ADD_FP8_GROUP: {
            if (gs == 0) {
                roof_fail(c, "ZeroDivisionError: group size 0");
                break;
            }
            int64_t ng = floordiv64(C + gs - 1, gs);
            f += 3 * Nd;
            b = Nd * bpe + Nd * bpe + Cd * bpe + Nd * 1 + Nd * bpe + (double)M * (double)ng * 4;
            break;
        }
        case RMS_ADD_PAD: {
            int64_t nout = pad > 0 ? floordiv64(C + pad - 1, pad) * pad : C;
            f = Nd + rms;
            b = 2 * Nd * bpe + Cd * bpe + (double)M * (double)nout * bpe + (double)M * Cd * bpe;
            break;
        }
        case RMS_MXFP4: {
            if (has_res1)
                f += (double)M * Cd;
            if (has_x2) {
                double x2 = (double)M * (double)n2;
                /* int(rms * x2_elems / max(N, 1)) */
                f += (double)(int64_t)(rms * x2 / (double)(N > 1 ? N : 1));
            }
            f += 2 * Nd;
            b = Nd * bpe + Cd * bpe + Nd * 0.5 + (double)floordiv64(N, 32);
            if (has_res1)
                b += 2 * Nd * bpe;
            if (has_x2) {
                double x2 = (double)M * (double)n2;
                b += x2 * bpe + (double)n2 * bpe + x2 * bpe;
            }
            break;
        }
        }
        roof_set_flops(c, f);
        /* None * int raises in these bytes() */
        if (roof_ok(c) && !bpe)
            roof_fail(c, "TypeError: unknown bytes per element for '%s'", din ? din : "None");
        else
            roof_set_bytes(c, true, b);
    }
    roof_set_spec(c, "vector", din);
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* ---- rotary embeddings ---- */

/* FusedRoPE.__init__: bytes per element of Input type[0] (2 when absent or
 * unknown) */
static int rope_bpe(struct roof_ctx *c)
{
    struct pv *t = roof_arg_opt(c, "Input type");
    const char *dt = "c10::BFloat16";
    if (roof_truthy(t))
        dt = roof_str(c, roof_at(c, t, 0));
    int b = dt && dt[0] ? roof_bpe(dt) : 0;
    return b ? b : 2;
}

static const char *rope_dtype0(struct roof_ctx *c)
{
    struct pv *t = roof_arg_opt(c, "Input type");
    if (!roof_truthy(t) || !roof_pv_is_array(t))
        return NULL;
    struct pv *e = roof_pv_array_get(t, 0);
    return roof_pv_is_string(e) ? roof_pv_string_value(e) : NULL;
}

static void rope_run(struct roof_ctx *c, int64_t n, int bpe, const char *prec_dtype)
{
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)roof_mul(c, 3, n));
        roof_set_bytes(c, true, (double)roof_mul(c, roof_mul(c, 2, n), bpe));
        roof_set_spec(c, "vector", prec_dtype);
    }
    /* FusedRoPE has no flops_bwd: the default backward status (failed) */
}

/* TransformerEngine FusedRoPEFunc: input (seq, batch, heads, head_dim) */
void roof_rope_fused(struct roof_ctx *c)
{
    struct roof_shape t;
    roof_shape_argi(c, "Input Dims", 0, &t);
    if (roof_ok(c) && t.n < 4)
        roof_fail(c, "IndexError: RoPE input with fewer than 4 dims");
    if (!roof_ok(c))
        return;
    int64_t n = roof_prod(c, &t, 0, t.n);
    roof_p_int(c, "seq_len", t.d[0]);
    roof_p_int(c, "batch", t.d[1]);
    roof_p_int(c, "heads", t.d[2]);
    roof_p_int(c, "head_dim", t.d[3]);
    roof_p_int(c, "num_elements", n);
    int bpe = rope_bpe(c);
    if (roof_ok(c))
        rope_run(c, n, bpe, rope_dtype0(c));
}

/* aiter::rope_cached_positions_2c_fwd_impl: input_x, input_y at [2], [3] */
void roof_rope_aiter_2c(struct roof_ctx *c)
{
    struct roof_shape x, y;
    roof_shape_argi(c, "Input Dims", 2, &x);
    roof_shape_argi(c, "Input Dims", 3, &y);
    if (!roof_ok(c))
        return;
    int64_t n = roof_add(c, roof_prod(c, &x, 0, x.n), roof_prod(c, &y, 0, y.n));
    roof_p_shape(c, "x_shape", &x, false);
    roof_p_shape(c, "y_shape", &y, false);
    roof_p_int(c, "num_elements", n);
    int bpe = rope_bpe(c);
    if (roof_ok(c))
        rope_run(c, n, bpe, rope_dtype0(c));
}

/* sgl_kernel::rotary_embedding(positions, query, key, head_size,
 * cos_sin_cache, ...): only the rot_dim slice of each q/k head rotates. */
void roof_rope_sgl(struct roof_ctx *c)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *conc = roof_arg_opt(c, "Concrete Inputs");
    struct roof_shape q, k;
    roof_shape(c, roof_at(c, dims, 1), &q);
    roof_shape(c, roof_at(c, dims, 2), &k);
    if (roof_ok(c) && (q.n < 2 || k.n < 2))
        roof_fail(c, "IndexError: q/k with fewer than 2 dims");
    if (!roof_ok(c))
        return;
    int64_t head = q.d[q.n - 1];
    struct pv *hs =
        roof_pv_is_array(conc) && roof_pv_array_size(conc) > 3 ? roof_pv_array_get(conc, 3) : NULL;
    if (hs) {
        /* str(x).strip() non-empty -> int(x) */
        if (roof_pv_is_string(hs)) {
            const char *s = roof_pv_string_value(hs);
            const char *p = s;
            while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
            if (*p)
                head = roof_pyint(c, s);
        } else if (roof_pv_is_integer(hs)) {
            head = (int64_t)roof_pv_integer_value(hs);
        } else if (!roof_pv_is_null(hs)) {
            roof_fail(c, "ValueError: head_size is not an int");
        }
    }
    int64_t rot = head;
    if (roof_len(c, dims) > 4 && roof_len(c, roof_at(c, dims, 4)) > 1)
        rot = roof_int(c, roof_at(c, roof_at(c, dims, 4), 1));
    if (!roof_ok(c))
        return;
    if (head == 0) {
        roof_fail(c, "ZeroDivisionError: head_size 0");
        return;
    }
    int64_t nq = floordiv64(q.d[1], head), nk = floordiv64(k.d[1], head);
    int64_t n = roof_mul(c, roof_mul(c, q.d[0], roof_add(c, nq, nk)), rot);
    roof_p_int(c, "num_elements", n);
    (void)rope_bpe(c);
    const char *qd = roof_str_argi(c, "Input type", 1);
    if (!roof_ok(c))
        return;
    int qb = roof_bpe(qd);
    rope_run(c, n, qb ? qb : 2, qd);
}

/* sglang::store_cache(k, v, k_cache, v_cache, indices): reads k and v, writes
 * the touched cache rows; no arithmetic. */
void roof_store_cache(struct roof_ctx *c)
{
    struct roof_shape k;
    roof_shape_argi(c, "Input Dims", 0, &k);
    const char *dt = roof_str_argi(c, "Input type", 0);
    if (!roof_ok(c))
        return;
    int64_t n = roof_prod(c, &k, 0, k.n);
    roof_p_shape(c, "op_shape", &k, false);
    roof_p_int(c, "nelems", n);
    roof_p_str(c, "dtype", dt);
    int bpe = dt && dt[0] ? roof_bpe(dt) : 0;
    if (!bpe)
        bpe = 2;
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, 0);
        roof_set_bytes(c, true, (double)roof_mul(c, roof_mul(c, 4, n), bpe));
        roof_set_spec(c, "vector", dt);
    }
}

/* ---- training extras: MoE token routing, causal conv1d, cross entropy ---- */

/* Input type[0] size when recorded, else 2 (FusedRoPE-style default) */
static int bpe_default2(struct roof_ctx *c)
{
    return rope_bpe(c);
}

/* MoEDispatch / MoECombine: no flops; bytes = tokens x hidden x bpe, also
 * for the backward. No compute spec (no roofline). */
void roof_moe_comm(struct roof_ctx *c)
{
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    struct pv *types = roof_arg_opt(c, "Input type");
    struct pv *tok = roof_truthy(dims) ? roof_at(c, dims, 0) : NULL;
    size_t nt = tok ? roof_len(c, tok) : 0;
    struct pv *ntok = nt >= 1 ? roof_at(c, tok, 0) : NULL;
    struct pv *hid = nt >= 2 ? roof_at(c, tok, 1) : NULL;
    const char *dt = roof_truthy(types) ? roof_str(c, roof_at(c, types, 0)) : "";
    int bpe = dt && dt[0] ? roof_bpe(dt) : 0;
    if (!roof_ok(c))
        return;
    roof_p_repr(c, "num_tokens", ntok);
    roof_p_repr(c, "hidden_dim", hid);
    roof_p_int_or_none(c, "bpe", bpe != 0, bpe);
    for (int ph = ROOF_FWD; ph <= ROOF_BWD; ph++) {
        if (!roof_begin(c, (enum roof_phase)ph))
            continue;
        roof_set_flops(c, 0);
        if (ntok && hid && bpe)
            roof_set_bytes(
                c, true,
                (double)roof_mul(c, roof_mul(c, roof_int(c, ntok), roof_int(c, hid)), bpe));
    }
}

/* DaoAILab causal_conv1d forward: x (batch, channels, seq), w (channels,
 * kernel); depthwise, flops = 2*b*c*l*k. */
void roof_causal_conv1d(struct roof_ctx *c)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *x = roof_at(c, dims, 0), *w = roof_at(c, dims, 1);
    int64_t b = roof_int(c, roof_at(c, x, 0)), ch = roof_int(c, roof_at(c, x, 1));
    int64_t l = roof_int(c, roof_at(c, x, 2)), k = roof_int(c, roof_at(c, w, 1));
    bool bias = roof_len(c, dims) > 2 && roof_pv_is_array(roof_at(c, dims, 2)) &&
                roof_pv_array_size(roof_at(c, dims, 2)) > 0;
    if (!roof_ok(c))
        return;
    roof_p_int(c, "batch", b);
    roof_p_int(c, "channels", ch);
    roof_p_int(c, "seq_len", l);
    roof_p_int(c, "kernel_size", k);
    roof_p_bool(c, "has_bias", bias);
    int bpe = bpe_default2(c);
    if (!roof_ok(c) || !roof_begin(c, ROOF_FWD))
        return;
    int64_t bcl = roof_mul(c, roof_mul(c, b, ch), l);
    roof_set_flops(c, (double)roof_mul(c, roof_mul(c, 2, bcl), k));
    int64_t by = roof_add(c, roof_mul(c, bcl, bpe), roof_mul(c, roof_mul(c, ch, k), bpe));
    by = roof_add(c, roof_add(c, by, roof_mul(c, bcl, bpe)), bias ? roof_mul(c, ch, bpe) : 0);
    roof_set_bytes(c, true, (double)by);
    /* get_compute_precision indexes Input type[0] even when the list is empty */
    struct pv *t = roof_arg_opt(c, "Input type");
    if (roof_pv_is_array(t) && t->n == 0)
        roof_fail(c, "IndexError: list index out of range");
    else
        roof_set_spec(c, "matrix",
                      roof_pv_is_array(t) ? roof_pv_string_value(roof_pv_array_get(t, 0)) : NULL);
}

/* TransformerEngine-style fused CrossEntropyFunction: logits (batch, ...,
 * vocab); flops = 5 per logit, bytes = logits + int64 targets + fp32 loss. */
void roof_cross_entropy(struct roof_ctx *c)
{
    struct pv *logits = roof_argi(c, "Input Dims", 0);
    int64_t batch = roof_int(c, roof_at(c, logits, 0));
    int64_t vocab = roof_int(c, roof_at(c, logits, -1));
    struct roof_shape ls;
    roof_shape(c, logits, &ls);
    if (!roof_ok(c))
        return;
    roof_p_int(c, "batch", batch);
    roof_p_int(c, "vocab_size", vocab);
    roof_p_shape(c, "logits_shape", &ls, true);
    int bpe = bpe_default2(c);
    if (!roof_ok(c) || !roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)roof_mul(c, roof_mul(c, 5, batch), vocab));
    int64_t by = roof_add(c, roof_mul(c, roof_prod(c, &ls, 0, ls.n), bpe), roof_mul(c, batch, 12));
    roof_set_bytes(c, true, (double)by);
    roof_set_spec(c, "vector", rope_dtype0(c));
}
