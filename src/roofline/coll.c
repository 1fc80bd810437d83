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
static void coll_bytes(struct pm_ctx *c, int64_t elems, const char *dt)
{
    int b = pm_bpe(dt);
    if (!b) {
        pm_fail(c, "TypeError: unknown bytes per element for '%s'", dt ? dt : "None");
        return;
    }
    pm_set_bytes(c, true, (double)pm_mul(c, elems, b));
}

void pm_collective(struct pm_ctx *c)
{
    const char *k = c->cls->cls;
    struct pm_shape in = {0}, out = {0};
    const char *dt = NULL;
    int64_t C = 0;
    if (!strncmp(k, "aiter_fused_allreduce_rmsnorm", 29)) {
        /* the C++ op (ptr, reg, inp, res_inp, res_out, out, w, ...) or the
         * Python wrapper (inp, res_inp, w, ...) */
        bool wrapper = k[29] == '_';
        long ii = wrapper ? 0 : 2, wi = wrapper ? 2 : 6;
        pm_shape_argi(c, "Input Dims", ii, &in);
        dt = pm_str_argi(c, "Input type", ii);
        struct pv *st = pm_argi(c, "Input Strides", ii);
        C = pm_int(c, pm_at(c, pm_argi(c, "Input Dims", wi), 0));
        if (!pm_ok(c))
            return;
        pm_p_shape(c, "op_shape", &in, false);
        pm_p_str(c, "dtype_in", dt);
        pm_p_tuple(c, "stride_input", st);
        pm_p_int(c, "num_channels", C);
        int64_t N = pm_prod(c, &in, 0, in.n);
        if (!pm_begin(c, PM_FWD))
            return;
        if (C == 0) {
            pm_fail(c, "ZeroDivisionError: num_channels is 0");
            return;
        }
        int64_t f = pm_add(c, N, pm_mul(c, floordiv(N, C), pm_add(c, pm_mul(c, 2, C), 2)));
        pm_set_flops(c, (double)pm_add(c, f, pm_mul(c, N, 2)));
        /* read inp + res_inp + weight, write res_out + out */
        coll_bytes(c, pm_add(c, pm_mul(c, 4, N), C), dt);
        return;
    }
    if (!strcmp(k, "sgl_kernel_reg_all_gather_into_tensor")) {
        pm_shape_argi(c, "Input Dims", 0, &out);
        pm_shape_argi(c, "Input Dims", 1, &in);
        dt = pm_str_argi(c, "Input type", 0);
        if (!pm_ok(c))
            return;
        pm_p_shape(c, "out_shape", &out, false);
        pm_p_shape(c, "op_shape", &in, false);
        pm_p_str(c, "dtype_in", dt);
    } else {
        bool two = !strcmp(k, "aiter_reduce_scatter") || !strcmp(k, "aiter_all_gather_reg");
        pm_shape_argi(c, "Input Dims", 1, &in);
        if (two)
            pm_shape_argi(c, "Input Dims", 2, &out);
        dt = pm_str_argi(c, "Input type", 1);
        struct pv *st = pm_argi(c, "Input Strides", 1);
        if (!pm_ok(c))
            return;
        pm_p_shape(c, "op_shape", &in, false);
        if (two)
            pm_p_shape(c, "out_shape", &out, false);
        pm_p_str(c, "dtype_in", dt);
        pm_p_tuple(c, "stride_input", st);
        if (!two)
            out = in; /* all-reduce: read the input, write an output as large */
    }
    int64_t e = pm_add(c, pm_prod(c, &in, 0, in.n), pm_prod(c, &out, 0, out.n));
    if (!pm_begin(c, PM_FWD))
        return;
    pm_set_flops(c, 0);
    coll_bytes(c, e, dt);
}
