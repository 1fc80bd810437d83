/* Elementwise and reduction ops (category "elementwise" / "reduce", sheets
 * UnaryElementwise, BinaryElementwise and Reduce, compute spec
 * vector_<input dtype>).
 *
 * Unary: flops = n, bytes = n*bpe_in + n*bpe_out (output size = input size
 * unless the trace records an output tensor). Binary: flops = elements of
 * the broadcast output, bytes = n1*bpe1 + n2*bpe2 + n_out*bpe_out, a scalar
 * operand counting as one 4-byte element. Reduce: flops = input elements,
 * bytes = n_in*bpe_in + n_out*bpe_out where n_out is 1 in practice (see
 * reduce_out below). Padding and nearest upsampling read the input and write
 * the (larger) output. */
#include <string.h>
#include <strings.h>

#include "roofline_int.h"

/* UnaryElementwise.flops/bytes with the sizes of __init__ */
static void unary_fwd(struct roof_ctx *c, int64_t n, const char *din, const char *dout)
{
    if (!roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)n);
    int bi = roof_bpe(din), bo = dout ? roof_bpe(dout) : bi;
    if (bi && bo)
        roof_set_bytes(c, true, (double)roof_add(c, roof_mul(c, n, bi), roof_mul(c, n, bo)));
    roof_set_spec(c, "vector", din);
}

/* The output tensor at argument i when the trace records one (a non-empty
 * Input Dims[i]): its dtype and strides, else NULL for both. */
static void opt_output(struct roof_ctx *c, struct pv *dims, long i, const char **dt, struct pv **st)
{
    *dt = NULL;
    *st = NULL;
    if (roof_len(c, dims) > (size_t)i && roof_truthy(roof_at(c, dims, i))) {
        *dt = roof_str_argi(c, "Input type", i);
        *st = roof_argi(c, "Input Strides", i);
    }
}

void roof_unary(struct roof_ctx *c)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct roof_shape shape;
    roof_shape(c, roof_at(c, dims, 0), &shape);
    const char *din = roof_str_argi(c, "Input type", 0);
    struct pv *sin = roof_argi(c, "Input Strides", 0);
    const char *dout;
    struct pv *sout;
    opt_output(c, dims, 1, &dout, &sout);
    int64_t n = roof_prod(c, &shape, 0, shape.n);
    if (!roof_ok(c))
        return;
    roof_p_unary_io(c, &shape, din, dout, sin, sout);
    unary_fwd(c, n, din, dout);
}

/* padding/upsample: bytes() reads the input and writes the output, without
 * checking for unknown sizes (None * int raises) */
static void resize_fwd(struct roof_ctx *c, int64_t nin, int64_t nout, const char *dt)
{
    if (!roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)nout);
    int b = roof_bpe(dt);
    if (!b) {
        roof_fail(c, "TypeError: unknown bytes per element for '%s'", dt ? dt : "None");
        return;
    }
    roof_set_bytes(c, true, (double)roof_add(c, roof_mul(c, nin, b), roof_mul(c, nout, b)));
    roof_set_spec(c, "vector", dt);
}

/* aten::replication_pad{1,2,3}d: Concrete Inputs[1] is the padding list,
 * innermost dimension first, two entries per padded dimension. */
void roof_replication_pad(struct roof_ctx *c)
{
    struct roof_shape in, pad = {0};
    roof_shape_argi(c, "Input Dims", 0, &in);
    const char *dt = roof_str_argi(c, "Input type", 0);
    struct pv *sin = roof_argi(c, "Input Strides", 0);
    const char *ps = roof_str(c, roof_argi(c, "Concrete Inputs", 1));
    if (!roof_ok(c))
        return;
    if (!ps) {
        roof_fail(c, "AttributeError: padding is None");
        return;
    }
    /* pad_str.strip("[]").replace(" ", "").split(",") then int() */
    char buf[256];
    size_t bl = 0;
    const char *b = ps, *e = ps + strlen(ps);
    while (b < e && (*b == '[' || *b == ']'))
        b++;
    while (e > b && (e[-1] == '[' || e[-1] == ']'))
        e--;
    for (const char *p = b; p < e && bl + 1 < sizeof(buf); p++)
        if (*p != ' ')
            buf[bl++] = *p;
    buf[bl] = '\0';
    char *tok = buf;
    for (;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (pad.n >= ROOF_MAX_DIMS) {
            roof_fail(c, "padding list too long");
            return;
        }
        pad.d[pad.n++] = roof_pyint(c, tok);
        if (!comma)
            break;
        tok = comma + 1;
    }
    if (!roof_ok(c))
        return;
    struct roof_shape out = in;
    for (int i = 0; i < pad.n / 2; i++) {
        int di = in.n - 1 - i;
        if (di < 0)
            di += in.n; /* Python wraps negative indexes */
        if (di < 0 || di >= in.n) {
            roof_fail(c, "IndexError: padding for a missing dimension");
            return;
        }
        size_t j = 2 * (size_t)i; /* pad holds (before, after) pairs */
        out.d[di] = roof_add(c, out.d[di], roof_add(c, pad.d[j], pad.d[j + 1]));
    }
    int64_t nin = roof_prod(c, &in, 0, in.n), nout = roof_prod(c, &out, 0, out.n);
    if (!roof_ok(c))
        return;
    roof_p_shape(c, "input_shape", &in, false);
    roof_p_shape(c, "output_shape", &out, false);
    roof_p_shape(c, "padding", &pad, true);
    roof_p_unary_io(c, &out, dt, dt, sin, NULL);
    resize_fwd(c, nin, nout, dt);
}

/* aten::upsample_nearest{1,2,3}d: Concrete Inputs[1] is the output spatial
 * size; the output keeps the input's (N, C). */
void roof_upsample_nearest(struct roof_ctx *c)
{
    struct roof_shape in, sp;
    roof_shape_argi(c, "Input Dims", 0, &in);
    const char *dt = roof_str_argi(c, "Input type", 0);
    struct pv *sin = roof_argi(c, "Input Strides", 0);
    roof_literal_ints(c, roof_str(c, roof_argi(c, "Concrete Inputs", 1)), &sp);
    if (!roof_ok(c))
        return;
    struct roof_shape out = {0};
    for (int i = 0; i < in.n && i < 2; i++)
        out.d[out.n++] = in.d[i];
    for (int i = 0; i < sp.n; i++) {
        if (out.n >= ROOF_MAX_DIMS) {
            roof_fail(c, "output shape too long");
            return;
        }
        out.d[out.n++] = sp.d[i];
    }
    int64_t nin = roof_prod(c, &in, 0, in.n), nout = roof_prod(c, &out, 0, out.n);
    if (!roof_ok(c))
        return;
    roof_p_shape(c, "input_shape", &in, false);
    roof_p_shape(c, "output_shape", &out, false);
    roof_p_unary_io(c, &out, dt, dt, sin, NULL);
    resize_fwd(c, nin, nout, dt);
}

/* aiter/vLLM/SGLang gated activations (out, input): out is [..., d], input
 * [..., 2d]; the input is read twice as wide as the output. */
void roof_gated_act(struct roof_ctx *c)
{
    int64_t per_elem = c->cls->variant;
    struct roof_shape shape;
    roof_shape_argi(c, "Input Dims", 0, &shape);
    const char *din = roof_str_argi(c, "Input type", 1);
    const char *dout = roof_str_argi(c, "Input type", 0);
    struct pv *sin = roof_argi(c, "Input Strides", 1);
    struct pv *sout = roof_argi(c, "Input Strides", 0);
    int64_t n = roof_prod(c, &shape, 0, shape.n);
    if (!roof_ok(c))
        return;
    roof_p_unary_io(c, &shape, din, dout, sin, sout);
    if (!roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)roof_mul(c, per_elem, n));
    int bi = roof_bpe(din), bo = dout ? roof_bpe(dout) : bi;
    if (!bi || !bo) {
        roof_fail(c, "TypeError: unknown bytes per element");
        return;
    }
    roof_set_bytes(c, true,
                   (double)roof_add(c, roof_mul(c, roof_mul(c, 2, n), bi), roof_mul(c, n, bo)));
    roof_set_spec(c, "vector", din);
}

/* ---- binary ---- */

/* BinaryElementwise.get_broadcast_shape: right-aligned, 1s broadcast;
 * TraceLens takes max(d1, d2), so a 0-size dim against 1 gives 1. */
static bool broadcast(struct roof_ctx *c, const struct roof_shape *a, const struct roof_shape *b,
                      struct roof_shape *out)
{
    int n = a->n > b->n ? a->n : b->n;
    out->n = n;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->n), ib = i - (n - b->n);
        int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            roof_fail(c, "ValueError: shapes not broadcastable");
            return false;
        }
        out->d[i] = x > y ? x : y;
    }
    return true;
}

static void binary_common(struct roof_ctx *c, const struct roof_shape *s1,
                          const struct roof_shape *s2, const char *d1, const char *d2,
                          const char *dout)
{
    struct roof_shape bs;
    if (!broadcast(c, s1, s2, &bs))
        return;
    int64_t n1 = roof_prod(c, s1, 0, s1->n), n2 = roof_prod(c, s2, 0, s2->n);
    int64_t no = roof_prod(c, &bs, 0, bs.n);
    int b1 = roof_bpe(d1), b2 = roof_bpe(d2), bo;
    if (dout)
        bo = roof_bpe(dout);
    else if (b1 && b2)
        /* two tensors: the wider type wins; a scalar takes the tensor's */
        bo = s1->n > 0 && s2->n > 0 ? (b1 > b2 ? b1 : b2) : b1;
    else
        bo = 0;
    if (!roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)no);
    if (b1 && b2 && bo) {
        int64_t by =
            roof_add(c, roof_add(c, roof_mul(c, n1, b1), roof_mul(c, n2, b2)), roof_mul(c, no, bo));
        roof_set_bytes(c, true, (double)by);
    }
    roof_set_spec(c, "vector", d1);
}

/* shape_in1, shape_in2, shape_out (when so), dtype_in1_in2_out and the
 * three strides (stride_output None when sto is NULL) */
static void binary_params(struct roof_ctx *c, const struct roof_shape *s1,
                          const struct roof_shape *s2, const struct roof_shape *so,
                          const char *const dts[3], struct pv *st1, struct pv *st2, struct pv *sto)
{
    roof_p_shape(c, "shape_in1", s1, false);
    roof_p_shape(c, "shape_in2", s2, false);
    if (so)
        roof_p_shape(c, "shape_out", so, false);
    roof_p_strs(c, "dtype_in1_in2_out", 3, dts, false);
    roof_p_tuple(c, "stride_input1", st1);
    roof_p_tuple(c, "stride_input2", st2);
    if (sto)
        roof_p_tuple(c, "stride_output", sto);
    else
        roof_p_none(c, "stride_output");
}

void roof_binary(struct roof_ctx *c)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct roof_shape s1, s2;
    roof_shape(c, roof_at(c, dims, 0), &s1);
    roof_shape(c, roof_at(c, dims, 1), &s2);
    const char *d1 = roof_str_argi(c, "Input type", 0);
    const char *d2 = roof_str_argi(c, "Input type", 1);
    struct pv *st1 = roof_argi(c, "Input Strides", 0);
    struct pv *st2 = roof_argi(c, "Input Strides", 1);
    const char *dout;
    struct pv *sto;
    opt_output(c, dims, 2, &dout, &sto);
    if (!roof_ok(c))
        return;
    const char *dts[3] = {d1, d2, dout};
    binary_params(c, &s1, &s2, NULL, dts, st1, st2, sto);
    binary_common(c, &s1, &s2, d1, d2, dout);
}

/* LigerSiLUMulFunction(a, b) = silu(a) * b */
void roof_liger_silu_mul(struct roof_ctx *c)
{
    struct roof_shape s1, s2;
    roof_shape_argi(c, "Input Dims", 0, &s1);
    roof_shape_argi(c, "Input Dims", 1, &s2);
    const char *d1 = roof_str_argi(c, "Input type", 0);
    const char *d2 = roof_str_argi(c, "Input type", 1);
    struct pv *st1 = roof_argi(c, "Input Strides", 0);
    struct pv *st2 = roof_argi(c, "Input Strides", 1);
    if (!roof_ok(c))
        return;
    const char *dts[3] = {d1, d2, NULL};
    binary_params(c, &s1, &s2, NULL, dts, st1, st2, NULL);
    binary_common(c, &s1, &s2, d1, d2, NULL);
}

/* ---- reduce ---- */

/* The dim/keepdim scan of aten_reduce over Concrete Inputs[1:]: the last
 * bool is keepdim, the last int or int list before it is dim. Trace Concrete
 * Inputs are strings, which the scan skips, so real traces always reduce to
 * one element (a TraceLens quirk kept on purpose). */
static int64_t reduce_out(struct roof_ctx *c, const struct roof_shape *in, struct pv *conc)
{
    size_t n = roof_pv_is_array(conc) ? roof_pv_array_size(conc) : 0;
    if (n < 2)
        return 1;
    long kd_idx = -1;
    bool keepdim = false;
    for (long i = (long)n - 1; i >= 1; i--) {
        struct pv *v = roof_pv_array_get(conc, (size_t)i);
        if (roof_pv_is_boolean(v)) {
            keepdim = roof_pv_is_true(v);
            kd_idx = i;
            break;
        }
    }
    struct roof_shape dim = {0};
    bool have_dim = false;
    for (long i = (long)n - 1; i >= 1 && !have_dim; i--) {
        if (i == kd_idx)
            continue;
        struct pv *v = roof_pv_array_get(conc, (size_t)i);
        if (roof_pv_is_null(v) || roof_pv_is_string(v))
            continue;
        if (roof_pv_is_array(v)) {
            struct roof_shape d = {0};
            bool ok = roof_pv_array_size(v) <= ROOF_MAX_DIMS;
            for (size_t j = 0; ok && j < roof_pv_array_size(v); j++) {
                struct pv *e = roof_pv_array_get(v, j);
                int64_t x;
                if (roof_pv_is_integer(e))
                    d.d[d.n++] = (int64_t)roof_pv_integer_value(e);
                else if (roof_pv_is_boolean(e))
                    d.d[d.n++] = roof_pv_is_true(e);
                else if (roof_pv_is_real(e))
                    d.d[d.n++] = (int64_t)roof_pv_real_value(e);
                else if (roof_pv_is_string(e) && roof_parse_pyint(roof_pv_string_value(e), &x))
                    d.d[d.n++] = x;
                else
                    ok = false;
            }
            if (ok) {
                dim = d;
                have_dim = true;
            }
        } else if (roof_pv_is_integer(v)) {
            dim.d[0] = (int64_t)roof_pv_integer_value(v);
            dim.n = 1;
            have_dim = true;
        }
    }
    if (!have_dim || dim.n == 0)
        return 1;
    /* drop (or keep as 1) the reduced dims, highest index first */
    struct roof_shape out = *in;
    for (int i = 0; i < dim.n; i++)
        if (dim.d[i] < 0)
            dim.d[i] += in->n;
    for (int pass = 0; pass < dim.n; pass++) {
        int best = -1;
        for (int i = 0; i < dim.n; i++)
            if (dim.d[i] != INT64_MIN && (best < 0 || dim.d[i] > dim.d[best]))
                best = i;
        int64_t d = dim.d[best];
        dim.d[best] = INT64_MIN;
        if (d < 0 || d >= out.n)
            continue;
        if (keepdim) {
            out.d[d] = 1;
        } else {
            memmove(&out.d[d], &out.d[d + 1], (size_t)(out.n - d - 1) * sizeof(out.d[0]));
            out.n--;
        }
    }
    return out.n ? roof_prod(c, &out, 0, out.n) : 1;
}

void roof_reduce(struct roof_ctx *c)
{
    const char *name = c->op->name;
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    int64_t nin = 0, nout = 0;
    const char *din = NULL, *dout = NULL;
    if (roof_truthy(dims) && !roof_pv_is_array(dims)) {
        roof_fail(c, "TypeError: Input Dims is not a list");
        return;
    }
    bool empty = !roof_truthy(dims) || roof_pv_is_null(roof_pv_array_get(dims, 0));
    if (empty) {
        const char *none[2] = {NULL, NULL};
        roof_p_int(c, "num_input_elems", 0);
        roof_p_int(c, "num_output_elems", 0);
        roof_p_strs(c, "dtype_in_out", 2, none, false);
    } else {
        struct roof_shape in;
        roof_shape(c, roof_pv_array_get(dims, 0), &in);
        nin = roof_prod(c, &in, 0, in.n);
        struct pv *types = roof_arg_opt(c, "Input type");
        if (roof_truthy(types))
            din = roof_str(c, roof_at(c, types, 0));
        struct pv *ot = roof_arg_opt(c, "Output type");
        if (roof_pv_is_array(ot) && roof_pv_array_size(ot) > 0)
            dout = roof_str(c, roof_pv_array_get(ot, 0));
        if (!roof_ok(c))
            return;
        if (strstr(name, "cumsum") || strstr(name, "cumprod"))
            nout = nin;
        else
            nout = reduce_out(c, &in, roof_arg_opt(c, "Concrete Inputs"));
        const char *rt = strstr(name, "mean")   ? "mean"
                         : strstr(name, "max")  ? "max"
                         : strstr(name, "min")  ? "min"
                         : strstr(name, "norm") ? "norm"
                                                : "sum";
        roof_p_int(c, "num_input_elems", nin);
        roof_p_int(c, "num_output_elems", nout);
        const char *dio[2] = {din, dout};
        roof_p_strs(c, "dtype_in_out", 2, dio, false);
        roof_p_str(c, "reduce_type", rt);
    }
    if (!roof_ok(c))
        return;
    /* an empty dtype string counts as unknown; no output dtype means the
     * input's */
    int bi = din && din[0] ? roof_bpe(din) : 0;
    int bo = dout ? (dout[0] ? roof_bpe(dout) : 0) : bi;
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)nin);
        if (bi && bo)
            roof_set_bytes(c, true,
                           (double)roof_add(c, roof_mul(c, nin, bi), roof_mul(c, nout, bo)));
        roof_set_spec(c, "vector", din);
    }
    if (roof_begin(c, ROOF_BWD)) {
        roof_set_flops(c, (double)nin);
        if (bi && bo)
            roof_set_bytes(c, true,
                           (double)roof_add(c, roof_mul(c, nout, bo), roof_mul(c, nin, bi)));
    }
}

/* ---- quantisation (category "GroupQuant") ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* aiter::dynamic_per_token/group/tensor_scaled_quant(out, input, scales, ...):
 * flops = 2.59375 per output element (TraceLens's rocprof-derived figure),
 * bytes = out + input + scales. */
void roof_group_quant(struct roof_ctx *c)
{
    struct pv *dims = roof_arg(c, "Input Dims");
    struct roof_shape in1, in2, out;
    roof_shape(c, roof_at(c, dims, 1), &in1);
    roof_shape(c, roof_at(c, dims, 2), &in2);
    roof_shape(c, roof_at(c, dims, 0), &out);
    const char *d1 = roof_str_argi(c, "Input type", 1);
    const char *d2 = roof_str_argi(c, "Input type", 2);
    const char *dout = roof_str_argi(c, "Input type", 0);
    struct pv *so = roof_argi(c, "Input Strides", 0);
    struct pv *s1 = roof_argi(c, "Input Strides", 1);
    struct pv *s2 = roof_argi(c, "Input Strides", 2);
    if (!roof_ok(c))
        return;
    const char *dts[3] = {d1, d2, dout};
    binary_params(c, &in1, &in2, &out, dts, s1, s2, so);
    int64_t n1 = roof_prod(c, &in1, 0, in1.n), n2 = roof_prod(c, &in2, 0, in2.n);
    int64_t no = roof_prod(c, &out, 0, out.n);
    if (!roof_ok(c) || !roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)no * 2.59375);
    int bo = roof_bpe(dout), b1 = roof_bpe(d1), b2 = roof_bpe(d2);
    if (!bo || !b1 || !b2) {
        roof_fail(c, "TypeError: unknown bytes per element");
    } else {
        double by = (double)roof_mul(c, no, bo) + (double)roof_mul(c, n1, b1);
        roof_set_bytes(c, true, by + (double)roof_mul(c, n2, b2));
    }
    roof_set_spec(c, "vector", d1);
}

/* vllm::triton_per_token_group_quant_fp8(x, group_size): x [M, N] read,
 * written as FP8, plus FP32 scales per group; 6 flops per element. */
void roof_vllm_group_quant_fp8(struct roof_ctx *c)
{
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    struct roof_shape x = {0};
    if (roof_truthy(dims) && roof_len(c, dims) > 0)
        roof_shape(c, roof_at(c, dims, 0), &x);
    int64_t M = 1, N = 1;
    if (x.n >= 2) {
        M = x.d[0];
        N = x.d[1];
    } else if (x.n == 1) {
        N = x.d[0];
    }
    struct pv *conc = roof_arg_opt(c, "Concrete Inputs");
    int64_t gs = 128;
    if (roof_truthy(conc) && roof_len(c, conc) > 1) {
        struct pv *g = roof_at(c, conc, 1);
        int64_t v;
        if (roof_pv_is_string(g)) {
            const char *t = roof_pv_string_value(g);
            if (strcasecmp(t, "none") != 0 && roof_parse_pyint(t, &v))
                gs = v;
        } else if (roof_pv_is_integer(g)) {
            gs = roof_pv_integer_value(g);
        } else if (roof_pv_is_boolean(g)) {
            gs = roof_pv_is_true(g);
        }
    }
    struct pv *types = roof_arg_opt(c, "Input type");
    const char *dx = roof_truthy(types) ? roof_str(c, roof_at(c, types, 0)) : "";
    if (!roof_ok(c))
        return;
    if (gs == 0) {
        roof_fail(c, "ZeroDivisionError: group_size 0");
        return;
    }
    int64_t ng = floor_div(N + gs - 1, gs);
    if (ng < 1)
        ng = 1;
    roof_p_int(c, "M", M);
    roof_p_int(c, "N", N);
    roof_p_int(c, "group_size", gs);
    roof_p_int(c, "num_groups", ng);
    roof_p_shape(c, "shape_x", &x, false);
    roof_p_str(c, "dtype_x", dx);
    roof_p_shape(c, "shape_in1", &x, false);
    struct roof_shape empty = {0};
    roof_p_shape(c, "shape_in2", &empty, false);
    roof_p_shape(c, "shape_out", &x, false);
    const char *dts[3] = {dx, NULL, "c10::float8_e4m3fn"};
    roof_p_strs(c, "dtype_in1_in2_out", 3, dts, false);
    roof_p_none(c, "stride_input1");
    roof_p_none(c, "stride_input2");
    roof_p_none(c, "stride_output");
    (void)roof_prod(c, &x, 0, x.n);
    if (!roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, (double)roof_mul(c, 6, roof_mul(c, M, N)));
    int bi = roof_bpe(dx);
    if (bi) {
        int64_t mn = roof_mul(c, M, N);
        roof_set_bytes(c, true,
                       (double)roof_add(c, roof_add(c, roof_mul(c, mn, bi), mn),
                                        roof_mul(c, roof_mul(c, M, ng), 4)));
    }
    roof_set_spec(c, "vector", dx);
}
