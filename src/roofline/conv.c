/* Convolution: aten::convolution (category CONV_fwd) and
 * aten::convolution_backward (CONV_bwd), sheet "CONV", compute spec
 * matrix_<input dtype>.
 *
 * flops = prod(out)*2*prod(w[1:]) (prod(x) instead of prod(out) when
 * transposed) + prod(out) if bias; bytes = (prod(x) + prod(w) + out[1] if
 * bias + prod(out)) * bpe. The backward formula is the input-gradient
 * convolution plus the weight-gradient one (plus prod(out) for the bias).
 * TraceLens's quirks kept: aten::convolution has a bias only when its Input
 * Dims has exactly 3 entries (never, in real traces), and
 * convolution_backward's "bias" parameter is the raw bias-sizes value
 * (printed "[]" when empty). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline_int.h"

struct conv {
    struct roof_shape x, w, out;
    struct roof_shape stride, padding, dilation, opad;
    bool bias, transposed;
    int64_t groups;
    const char *dt[2];
};

/* aten_conv.str_to_tuple: "[1, 1]" -> (1, 1); "" -> the default */
static void conv_tuple(struct roof_ctx *c, struct pv *v, int64_t dflt, int nd,
                       struct roof_shape *out)
{
    out->n = 0;
    const char *s = roof_str(c, v);
    if (!roof_ok(c))
        return;
    if (!s) {
        roof_fail(c, "TypeError: conv argument is None");
        return;
    }
    if (!s[0]) {
        for (int i = 0; i < nd && i < ROOF_MAX_DIMS; i++)
            out->d[out->n++] = dflt;
        return;
    }
    /* s[1:-1].split(",") and int() of each piece */
    size_t n = strlen(s);
    if (n < 2) {
        roof_fail(c, "ValueError: invalid literal for int(): '%s'", s);
        return;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%.*s", (int)(n - 2), s + 1);
    char *tok = buf;
    for (;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (out->n >= ROOF_MAX_DIMS) {
            roof_fail(c, "conv argument too long");
            return;
        }
        out->d[out->n++] = roof_pyint(c, tok);
        if (!comma || !roof_ok(c))
            break;
        tok = comma + 1;
    }
    /* a one-element tuple applies to every spatial dim */
    if (out->n == 1 && roof_ok(c)) {
        int64_t v0 = out->d[0];
        out->n = 0;
        for (int i = 0; i < nd && i < ROOF_MAX_DIMS; i++)
            out->d[out->n++] = v0;
    }
}

/* CONV.get_output_shape */
static void conv_out_shape(struct roof_ctx *c, struct conv *k)
{
    int nd = k->x.n - 2;
    if (k->w.n < 2 || nd < 0) {
        roof_fail(c, "IndexError: convolution shapes too short");
        return;
    }
    k->out.n = 0;
    k->out.d[k->out.n++] = k->x.d[0];
    k->out.d[k->out.n++] = k->transposed ? k->w.d[1] : k->w.d[0];
    for (int i = 0; i < nd; i++) {
        if (i + 2 >= k->w.n || i >= k->stride.n || i >= k->padding.n || i >= k->dilation.n ||
            (k->transposed && i >= k->opad.n)) {
            roof_fail(c, "IndexError: convolution argument shorter than the spatial dims");
            return;
        }
        int64_t in = k->x.d[i + 2], ks = k->w.d[i + 2], s = k->stride.d[i], p = k->padding.d[i],
                d = k->dilation.d[i];
        if (k->transposed) {
            k->out.d[k->out.n++] = (in - 1) * s - 2 * p + d * (ks - 1) + k->opad.d[i] + 1;
        } else {
            if (s == 0) {
                roof_fail(c, "ZeroDivisionError: stride 0");
                return;
            }
            /* int((in + 2p - d(k-1) - 1) / s + 1): true division, truncation */
            double v = (double)(in + 2 * p - d * (ks - 1) - 1) / (double)s + 1;
            k->out.d[k->out.n++] = (int64_t)trunc(v);
        }
    }
}

static double prod_d(const struct roof_shape *s, int from)
{
    double r = 1;
    for (int i = from; i < s->n; i++)
        r *= (double)s->d[i];
    return r;
}

static struct roof_shape tshape(const struct roof_shape *s)
{
    struct roof_shape t = *s;
    if (s->n >= 2) {
        t.d[0] = s->d[1];
        t.d[1] = s->d[0];
    }
    return t;
}

/* CONV.flops_func */
static double conv_flops_f(const struct roof_shape *x, const struct roof_shape *w,
                           const struct roof_shape *out, bool bias, bool transposed)
{
    double fpe = 2 * prod_d(w, 1);
    double f = (transposed ? prod_d(x, 0) : prod_d(out, 0)) * fpe;
    return f + (bias ? prod_d(out, 0) : 0);
}

static double conv_bytes_f(const struct roof_shape *x, const struct roof_shape *w,
                           const struct roof_shape *out, bool bias, double bpe)
{
    double e =
        prod_d(x, 0) + prod_d(w, 0) + (bias && out->n > 1 ? (double)out->d[1] : 0) + prod_d(out, 0);
    return e * bpe;
}

static double conv_flops_bwd(const struct conv *k)
{
    double in_grad = conv_flops_f(&k->out, &k->w, &k->x, false, !k->transposed);
    struct roof_shape tx = tshape(&k->x), to = tshape(&k->out), tw = tshape(&k->w);
    double w_grad = k->transposed ? conv_flops_f(&to, &tx, &tw, false, false)
                                  : conv_flops_f(&tx, &to, &tw, false, false);
    return in_grad + w_grad + (k->bias ? prod_d(&k->out, 0) : 0);
}

static double conv_bytes_bwd(const struct conv *k, double bpe)
{
    double in_grad = conv_bytes_f(&k->out, &k->w, &k->x, false, bpe);
    double w_grad = conv_bytes_f(&k->out, &k->x, &k->w, false, bpe);
    /* bias grad reads dY and writes dB, counted in elements (no bpe) */
    double b = k->bias && k->out.n > 1 ? prod_d(&k->out, 0) + (double)k->out.d[1] : 0;
    return in_grad + w_grad + b;
}

/* Parses the shared layout: x, w at dims[xi], dims[xi+1]; stride, padding,
 * dilation, transposed, output_padding, groups at Concrete [ci..ci+5]. */
static bool conv_parse(struct roof_ctx *c, struct conv *k, long xi, long ci)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    roof_shape(c, roof_at(c, dims, xi), &k->x);
    int nd = k->x.n - 2;
    roof_shape(c, roof_at(c, dims, xi + 1), &k->w);
    return roof_ok(c) && (conv_tuple(c, roof_at(c, conc, ci), 1, nd, &k->stride), true) &&
           (conv_tuple(c, roof_at(c, conc, ci + 1), 0, nd, &k->padding), true) &&
           (conv_tuple(c, roof_at(c, conc, ci + 2), 1, nd, &k->dilation), true) && roof_ok(c);
}

static void conv_rest(struct roof_ctx *c, struct conv *k, long ci)
{
    struct pv *conc = roof_arg(c, "Concrete Inputs");
    int nd = k->x.n - 2;
    bool is_none;
    k->transposed = roof_pyeval_bool(c, roof_str(c, roof_at(c, conc, ci + 3)), &is_none);
    conv_tuple(c, roof_at(c, conc, ci + 4), 0, nd, &k->opad);
    k->groups = roof_pyint(c, roof_str(c, roof_at(c, conc, ci + 5)));
}

static const char *conv_nd(struct roof_ctx *c, const struct conv *k)
{
    switch (k->x.n) {
    case 3:
        return "conv1d";
    case 4:
        return "conv2d";
    case 5:
        return "conv3d";
    }
    roof_fail(c, "ValueError: unknown convolution dimension: %d", k->x.n);
    return NULL;
}

static void conv_dtypes(struct roof_ctx *c, struct conv *k, long i)
{
    struct pv *types = roof_arg(c, "Input type");
    if (!roof_ok(c))
        return;
    if (!roof_pv_is_array(types) || (long)roof_pv_array_size(types) < i + 2) {
        roof_fail(c, "IndexError: tuple index out of range");
        return;
    }
    k->dt[0] = roof_str(c, roof_pv_array_get(types, (size_t)i));
    k->dt[1] = roof_str(c, roof_pv_array_get(types, (size_t)i + 1));
    if (roof_ok(c) && (!k->dt[0] || !k->dt[1] || strcmp(k->dt[0], k->dt[1]) != 0))
        roof_fail(c, "ValueError: data types of input and weight are different");
}

static void conv_params(struct roof_ctx *c, const struct conv *k, const char *nd, long si,
                        struct pv *bias_value)
{
    roof_p_str(c, "convNd", nd);
    roof_p_shape(c, "input_shape", &k->x, false);
    roof_p_shape(c, "filter_shape", &k->w, false);
    roof_p_strs(c, "dtype_input_weight", 2, k->dt, false);
    struct pv *st = roof_arg_opt(c, "Input Strides");
    if (st) {
        struct pv *a = roof_at(c, st, si), *b = roof_at(c, st, si + 1);
        if (roof_ok(c)) {
            roof_p_tuple(c, "input_stride", a);
            roof_p_tuple(c, "weight_stride", b);
        }
    } else {
        roof_p_none(c, "input_stride");
        roof_p_none(c, "weight_stride");
    }
    if (bias_value)
        roof_p_repr(c, "bias", bias_value);
    else
        roof_p_bool(c, "bias", k->bias);
    roof_p_shape(c, "stride", &k->stride, false);
    roof_p_shape(c, "padding", &k->padding, false);
    roof_p_shape(c, "dilation", &k->dilation, false);
    roof_p_bool(c, "transposed_conv", k->transposed);
    roof_p_shape(c, "output_padding", &k->opad, false);
    roof_p_int(c, "groups", k->groups);
}

static bool conv_bpe(struct roof_ctx *c, const struct conv *k, double *bpe)
{
    int b = roof_bpe(k->dt[0]);
    (void)c;
    *bpe = b;
    return b != 0;
}

void roof_conv(struct roof_ctx *c)
{
    struct conv k = {0};
    if (!conv_parse(c, &k, 0, 3))
        return;
    k.bias = roof_len(c, roof_arg(c, "Input Dims")) == 3;
    conv_rest(c, &k, 3);
    conv_dtypes(c, &k, 0);
    const char *nd = roof_ok(c) ? conv_nd(c, &k) : NULL;
    if (!roof_ok(c))
        return;
    conv_params(c, &k, nd, 0, NULL);
    conv_out_shape(c, &k);
    double bpe;
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, conv_flops_f(&k.x, &k.w, &k.out, k.bias, k.transposed));
        if (conv_bpe(c, &k, &bpe))
            roof_set_bytes(c, true, conv_bytes_f(&k.x, &k.w, &k.out, k.bias, bpe));
        roof_set_spec(c, "matrix", k.dt[0]);
    }
    if (roof_begin(c, ROOF_BWD)) {
        roof_set_flops(c, conv_flops_bwd(&k));
        if (conv_bpe(c, &k, &bpe))
            roof_set_bytes(c, true, conv_bytes_bwd(&k, bpe));
    }
}

/* convolution_backward(grad_out, input, weight, bias_sizes, stride, ...):
 * its flops()/bytes() are the backward formulas. */
void roof_conv_bwd(struct roof_ctx *c)
{
    struct conv k = {0};
    if (!conv_parse(c, &k, 1, 4))
        return;
    struct pv *dims = roof_arg(c, "Input Dims");
    /* `len(dims) > 3 and dims[3] and len(dims[3]) > 0`: the value itself
     * when falsy */
    struct pv *bias_value = NULL;
    if (roof_len(c, dims) > 3) {
        struct pv *b3 = roof_at(c, dims, 3);
        if (roof_truthy(b3)) {
            k.bias = roof_len(c, b3) > 0;
        } else {
            bias_value = b3;
        }
    }
    conv_rest(c, &k, 4);
    conv_dtypes(c, &k, 1);
    const char *nd = roof_ok(c) ? conv_nd(c, &k) : NULL;
    if (!roof_ok(c))
        return;
    conv_params(c, &k, nd, 1, bias_value);
    conv_out_shape(c, &k);
    for (int ph = ROOF_FWD; ph <= ROOF_BWD; ph++) {
        if (!roof_begin(c, (enum roof_phase)ph))
            continue;
        double bpe;
        roof_set_flops(c, conv_flops_bwd(&k));
        if (conv_bpe(c, &k, &bpe))
            roof_set_bytes(c, true, conv_bytes_bwd(&k, bpe));
        if (ph == ROOF_FWD)
            roof_set_spec(c, "matrix", k.dt[0]);
    }
}
