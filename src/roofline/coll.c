/* Custom collectives of inference engines (category and sheet
 * "CustomCollective"): vLLM / SGLang / aiter all-reduce, reduce-scatter and
 * all-gather kernels, and aiter's all-reduce fused with residual add and
 * RMSNorm. The traffic modelled is each GPU's own HBM reads and writes (the
 * inter-GPU transfer is a separate concern); pure collectives have no flops.
 * TraceLens gives these classes no compute spec, so they have no roofline. */
#include <string.h>

#include "roofline_int.h"

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* bytes = elems * bpe, where an unknown size (None) raises */
static void coll_bytes(struct roof_ctx *c, int64_t elems, const char *dt)
{
    int b = roof_bpe(dt);
    if (!b) {
        roof_fail(c, "TypeError: unknown bytes per element for '%s'", dt ? dt : "None");
        return;
    }
    roof_set_bytes(c, true, (double)roof_mul(c, elems, b));
}

void roof_collective(struct roof_ctx *c)
{
    const char *k = c->cls->cls;
    struct roof_shape in = {0}, out = {0};
    const char *dt = NULL;
    int64_t C = 0;
    if (!strncmp(k, "aiter_fused_allreduce_rmsnorm", 29)) {
        /* the C++ op (ptr, reg, inp, res_inp, res_out, out, w, ...) or the
         * Python wrapper (inp, res_inp, w, ...) */
        bool wrapper = k[29] == '_';
        long ii = wrapper ? 0 : 2, wi = wrapper ? 2 : 6;
        roof_shape_argi(c, "Input Dims", ii, &in);
        dt = roof_str_argi(c, "Input type", ii);
        struct pv *st = roof_argi(c, "Input Strides", ii);
        C = roof_int(c, roof_at(c, roof_argi(c, "Input Dims", wi), 0));
        if (!roof_ok(c))
            return;
        roof_p_shape(c, "op_shape", &in, false);
        roof_p_str(c, "dtype_in", dt);
        roof_p_tuple(c, "stride_input", st);
        roof_p_int(c, "num_channels", C);
        int64_t N = roof_prod(c, &in, 0, in.n);
        if (!roof_begin(c, ROOF_FWD))
            return;
        if (C == 0) {
            roof_fail(c, "ZeroDivisionError: num_channels is 0");
            return;
        }
        int64_t f = roof_add(c, N, roof_mul(c, floordiv(N, C), roof_add(c, roof_mul(c, 2, C), 2)));
        roof_set_flops(c, (double)roof_add(c, f, roof_mul(c, N, 2)));
        /* read inp + res_inp + weight, write res_out + out */
        coll_bytes(c, roof_add(c, roof_mul(c, 4, N), C), dt);
        return;
    }
    if (!strcmp(k, "sgl_kernel_reg_all_gather_into_tensor")) {
        roof_shape_argi(c, "Input Dims", 0, &out);
        roof_shape_argi(c, "Input Dims", 1, &in);
        dt = roof_str_argi(c, "Input type", 0);
        if (!roof_ok(c))
            return;
        roof_p_shape(c, "out_shape", &out, false);
        roof_p_shape(c, "op_shape", &in, false);
        roof_p_str(c, "dtype_in", dt);
    } else {
        bool two = !strcmp(k, "aiter_reduce_scatter") || !strcmp(k, "aiter_all_gather_reg");
        roof_shape_argi(c, "Input Dims", 1, &in);
        if (two)
            roof_shape_argi(c, "Input Dims", 2, &out);
        dt = roof_str_argi(c, "Input type", 1);
        struct pv *st = roof_argi(c, "Input Strides", 1);
        if (!roof_ok(c))
            return;
        roof_p_shape(c, "op_shape", &in, false);
        if (two)
            roof_p_shape(c, "out_shape", &out, false);
        roof_p_str(c, "dtype_in", dt);
        roof_p_tuple(c, "stride_input", st);
        if (!two)
            out = in; /* all-reduce: read the input, write an output as large */
    }
    int64_t e = roof_add(c, roof_prod(c, &in, 0, in.n), roof_prod(c, &out, 0, out.n));
    if (!roof_begin(c, ROOF_FWD))
        return;
    roof_set_flops(c, 0);
    coll_bytes(c, e, dt);
}
