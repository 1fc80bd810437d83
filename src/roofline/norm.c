/* Normalization family: batch, layer, group, instance and RMS norm, forward
 * (category NORM_fwd) and backward (NORM_bwd) ATen ops, all on the
 * "Normalization" sheet with compute spec vector_<input dtype>.
 *
 * Forward: flops = 3C + (3N if training) + 3C + 2N, bytes = N*bpe_in +
 * N*bpe_out + T*C*bpe_in with T = 2 (mean, var) + 1 if affine + 1 if affine
 * and bias + 2 if training (N elements, C channels). Backward ops use the
 * per-channel formula of Normalization.flops_func_bwd. RMS norm has its own
 * formulas. TraceLens's quirks are kept: BatchNorm/InstanceNorm
 * "is_training" is the truthiness of a string (any non-empty text is True),
 * and "is_affine"/"has_bias" test a shape for None, which a trace never
 * holds, so they are True. */
#include <string.h>

#include "roofline_int.h"

struct norm {
    struct roof_shape shape;
    double N, C;
    bool c_is_float; /* num_channels is a Python float (GroupNormBwd) */
    const char *din;
    struct pv *sin; /* Input Strides of the input */
    bool bias, affine, training;
    bool has_mask;
    struct roof_shape mask; /* output_mask as 0/1 */
};

/* `args["Input Dims"][i] is not None` */
static bool dims_not_none(struct roof_ctx *c, long i)
{
    struct pv *v = roof_argi(c, "Input Dims", i);
    return v && !roof_pv_is_null(v);
}

static void norm_params(struct roof_ctx *c, const struct norm *n)
{
    roof_p_unary_io(c, &n->shape, n->din, NULL, n->sin, NULL);
    if (n->c_is_float)
        roof_p_float(c, "num_channels", n->C);
    else
        roof_p_int(c, "num_channels", (int64_t)n->C);
    roof_p_bool(c, "has_bias", n->bias);
    roof_p_bool(c, "is_affine", n->affine);
    roof_p_bool(c, "is_training", n->training);
    if (n->has_mask) {
        bool m[ROOF_MAX_DIMS];
        for (int i = 0; i < n->mask.n; i++)
            m[i] = n->mask.d[i] != 0;
        roof_p_bools(c, "output_mask", n->mask.n, m, true);
    }
}

static double norm_flops(const struct norm *n)
{
    double f = n->C * 3;
    if (n->training)
        f += n->N * 3;
    f += n->C * 3;
    return f + 2 * n->N;
}

static double norm_bytes(const struct norm *n, double bpe)
{
    int t = 2;
    if (n->affine) {
        t++;
        if (n->bias)
            t++;
    }
    if (n->training)
        t += 2;
    return n->N * bpe + n->N * bpe + t * n->C * bpe;
}

/* output_mask[0]; classes without a mask use the string "[False]", whose
 * first character is truthy */
static bool mask0(const struct norm *n)
{
    return n->has_mask ? (n->mask.n > 0 && n->mask.d[0]) : true;
}

static double norm_flops_bwd(const struct norm *n)
{
    double epc = n->N / n->C;
    double fpc = n->training ? 0 : 3;
    fpc += 4 * epc;
    if (mask0(n)) {
        if (n->training)
            fpc += 5 * epc;
    } else {
        fpc += 2 * epc;
    }
    return n->C * fpc;
}

static double norm_bytes_bwd(const struct norm *n, double bpe)
{
    double b = n->N * bpe + n->N * bpe * (mask0(n) && n->training ? 2 : 1);
    if (n->training)
        b += n->C * bpe;
    if (n->affine) {
        b += n->C * bpe;
        if (n->training)
            b += n->C * bpe * (n->bias ? 2 : 1);
    }
    return b;
}

/* bpe of the input dtype; an unknown size is None in TraceLens, and
 * None * int raises */
static bool norm_bpe(struct roof_ctx *c, const struct norm *n, double *bpe)
{
    int b = roof_bpe(n->din);
    if (!b) {
        roof_fail(c, "TypeError: unknown bytes per element for '%s'", n->din ? n->din : "None");
        return false;
    }
    *bpe = b;
    return true;
}

/* kind: forward class (fwd formulas, bwd phase NotImplementedError) or
 * backward class (both phases use the backward formulas) */
enum { NORM_FWD, NORM_BWD_CLASS };

static void norm_run(struct roof_ctx *c, const struct norm *n, int kind)
{
    double bpe;
    if (roof_begin(c, ROOF_FWD)) {
        if (n->C == 0 && kind == NORM_BWD_CLASS) {
            roof_fail(c, "ZeroDivisionError: num_channels is 0");
        } else {
            roof_set_flops(c, kind == NORM_FWD ? norm_flops(n) : norm_flops_bwd(n));
            if (norm_bpe(c, n, &bpe))
                roof_set_bytes(c, true,
                               kind == NORM_FWD ? norm_bytes(n, bpe) : norm_bytes_bwd(n, bpe));
        }
        roof_set_spec(c, "vector", n->din);
    }
    if (kind == NORM_FWD) {
        roof_no_bwd(c, MP_ROOFLINE_SKIP);
    } else if (roof_begin(c, ROOF_BWD)) {
        if (n->C == 0) {
            roof_fail(c, "ZeroDivisionError: num_channels is 0");
            return;
        }
        roof_set_flops(c, norm_flops_bwd(n));
        if (norm_bpe(c, n, &bpe))
            roof_set_bytes(c, true, norm_bytes_bwd(n, bpe));
    }
}

static void norm_shape(struct roof_ctx *c, struct norm *n, long i)
{
    roof_shape_argi(c, "Input Dims", i, &n->shape);
    n->N = (double)roof_prod(c, &n->shape, 0, n->shape.n);
}

/* dtype and strides of the input, Input type[i] and Input Strides[i] */
static void norm_din_sin(struct roof_ctx *c, struct norm *n, long i)
{
    n->din = roof_str_argi(c, "Input type", i);
    n->sin = roof_argi(c, "Input Strides", i);
}

/* shape, dtype and strides of the input, argument i */
static void norm_io(struct roof_ctx *c, struct norm *n, long i)
{
    norm_shape(c, n, i);
    norm_din_sin(c, n, i);
}

/* The parameters and metrics of a class that reads nothing more; kind as
 * norm_run. */
static void norm_finish(struct roof_ctx *c, const struct norm *n, int kind)
{
    if (!roof_ok(c))
        return;
    norm_params(c, n);
    norm_run(c, n, kind);
}

/* prod(normalized_shape), the shape given as a literal string in v */
static double literal_prod(struct roof_ctx *c, struct pv *v)
{
    struct roof_shape ns;
    roof_literal_ints(c, roof_str(c, v), &ns);
    return (double)roof_prod(c, &ns, 0, ns.n);
}

/* shape[1] as the channel count */
static double channels_dim1(struct roof_ctx *c, const struct roof_shape *s)
{
    if (roof_ok(c) && s->n < 2)
        roof_fail(c, "IndexError: tuple index out of range");
    return roof_ok(c) ? (double)s->d[1] : 0;
}

void roof_norm_batch(struct roof_ctx *c)
{
    struct norm n = {0};
    norm_io(c, &n, 0);
    n.affine = dims_not_none(c, 2);
    n.training = roof_truthy(roof_argi(c, "Concrete Inputs", 5));
    n.C = channels_dim1(c, &n.shape);
    n.bias = true;
    norm_finish(c, &n, NORM_FWD);
}

void roof_norm_batch_bwd(struct roof_ctx *c)
{
    const char *name = c->op->name;
    long in = 1;
    (void)dims_not_none(c, 0); /* has_output */
    if (!strcmp(name, "aten::cudnn_batch_norm_backward") ||
        !strcmp(name, "aten::miopen_batch_norm_backward")) {
        in = 0;
    }
    struct norm n = {0};
    n.training = in == 0 ? false : roof_truthy(roof_argi(c, "Concrete Inputs", 7));
    norm_shape(c, &n, in);
    n.C = channels_dim1(c, &n.shape);
    norm_din_sin(c, &n, in);
    n.has_mask = true;
    n.mask.n = 1;
    n.mask.d[0] = 1;
    n.affine = dims_not_none(c, 2);
    n.bias = true;
    norm_finish(c, &n, NORM_BWD_CLASS);
}

/* LayerNorm's input i and C = prod(normalized_shape), the literal in
 * Concrete Inputs[i + 1] */
static void layer_shape(struct roof_ctx *c, struct norm *n, long i)
{
    norm_shape(c, n, i);
    n->C = literal_prod(c, roof_argi(c, "Concrete Inputs", i + 1));
}

void roof_norm_layer(struct roof_ctx *c)
{
    struct norm n = {0};
    layer_shape(c, &n, 0);
    n.bias = dims_not_none(c, 3);
    norm_din_sin(c, &n, 0);
    n.affine = dims_not_none(c, 2);
    n.training = true;
    norm_finish(c, &n, NORM_FWD);
}

void roof_norm_layer_bwd(struct roof_ctx *c)
{
    struct norm n = {0};
    layer_shape(c, &n, 1);
    norm_din_sin(c, &n, 1);
    roof_literal_ints(c, roof_str(c, roof_argi(c, "Concrete Inputs", 7)), &n.mask);
    if (roof_ok(c) && n.mask.n < 3)
        roof_fail(c, "IndexError: output_mask too short");
    /* the mask is zeroed above, so reading it is safe on a failed row too,
     * which norm_finish then drops */
    n.has_mask = true;
    n.affine = n.mask.d[1] != 0;
    n.bias = n.mask.d[2] != 0;
    n.training = true;
    norm_finish(c, &n, NORM_BWD_CLASS);
}

void roof_norm_group(struct roof_ctx *c)
{
    struct norm n = {0};
    norm_io(c, &n, 0);
    n.affine = dims_not_none(c, 2);
    n.training = true;
    n.C = channels_dim1(c, &n.shape);
    n.bias = true;
    norm_finish(c, &n, NORM_FWD);
}

/* native_group_norm_backward: C = shape[1] / groups, a float in Python */
void roof_norm_group_bwd(struct roof_ctx *c)
{
    struct norm n = {0};
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    norm_io(c, &n, 1);
    n.affine = dims_not_none(c, 5);
    n.training = true;
    roof_literal_ints(c, roof_str(c, roof_at(c, conc, 9)), &n.mask);
    double ch = channels_dim1(c, &n.shape);
    int64_t groups = roof_pyint(c, roof_str(c, roof_at(c, conc, 8)));
    if (roof_ok(c) && groups == 0)
        roof_fail(c, "ZeroDivisionError: groups is 0");
    if (!roof_ok(c))
        return;
    n.C = ch / (double)groups;
    n.c_is_float = true;
    n.has_mask = true;
    n.bias = true;
    norm_params(c, &n);
    norm_run(c, &n, NORM_BWD_CLASS);
}

void roof_norm_instance(struct roof_ctx *c)
{
    struct norm n = {0};
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    norm_io(c, &n, 0);
    n.affine = dims_not_none(c, 2);
    n.training = roof_truthy(roof_at(c, conc, 5));
    n.C = channels_dim1(c, &n.shape);
    n.bias = true;
    norm_finish(c, &n, NORM_FWD);
}

void roof_norm_instance_bwd(struct roof_ctx *c)
{
    roof_notimpl(c, "NotImplementedError: backward pass for InstanceNorm is not defined");
}

/* aten::_fused_rms_norm: C = prod(normalized_shape), no bias, never
 * training; flops = (N/C)*(2C+2) + N*(2 if affine else 1). */
void roof_norm_rms(struct roof_ctx *c)
{
    struct norm n = {0};
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    norm_io(c, &n, 0);
    n.affine = dims_not_none(c, 2);
    n.C = literal_prod(c, roof_at(c, conc, 1));
    if (!roof_ok(c))
        return;
    norm_params(c, &n);
    if (roof_begin(c, ROOF_FWD)) {
        if (n.C == 0) {
            roof_fail(c, "ZeroDivisionError: num_channels is 0");
        } else {
            double f = n.N / n.C * (2 * n.C + 2);
            f += n.N * (n.affine ? 2 : 1);
            roof_set_flops(c, f);
            double bpe;
            if (norm_bpe(c, &n, &bpe))
                roof_set_bytes(c, true, n.N * bpe + n.N * bpe + (n.affine ? n.C * bpe : 0));
        }
        roof_set_spec(c, "vector", n.din);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

static double rms_bwd_flops(const struct norm *n)
{
    double nn = n->N / n->C;
    double f = n->affine ? n->N : 0;
    f += n->N;
    if (n->mask.d[0]) {
        f += 2 * n->N;
        f += 4 * n->N;
    }
    if (n->mask.d[1] && n->affine) {
        f += n->N;
        if (nn > 1)
            f += n->N;
    }
    return f;
}

void roof_norm_rms_bwd(struct roof_ctx *c)
{
    struct norm n = {0};
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    norm_io(c, &n, 1);
    n.affine = dims_not_none(c, 4);
    n.C = literal_prod(c, roof_at(c, conc, 2));
    roof_literal_ints(c, roof_str(c, roof_at(c, conc, 5)), &n.mask);
    if (!roof_ok(c))
        return;
    n.has_mask = true;
    norm_params(c, &n);
    for (int ph = ROOF_FWD; ph <= ROOF_BWD; ph++) {
        if (!roof_begin(c, (enum roof_phase)ph))
            continue;
        if (n.C == 0) {
            roof_fail(c, "ZeroDivisionError: num_channels is 0");
            continue;
        }
        if (n.mask.n < 2) { /* output_mask[0] and [1] are both read */
            roof_fail(c, "IndexError: output_mask too short");
            continue;
        }
        roof_set_flops(c, rms_bwd_flops(&n));
        double bpe;
        if (norm_bpe(c, &n, &bpe))
            roof_set_bytes(c, true, n.N * bpe + n.N * bpe * 2 + (n.affine ? n.C * bpe * 2 : 0));
        if (ph == ROOF_FWD)
            roof_set_spec(c, "vector", n.din);
    }
}
