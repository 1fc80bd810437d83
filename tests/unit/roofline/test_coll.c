/* Custom collectives (coll.c): TraceLens's values. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

static const struct oracle cases[] = {
    {"aiter::fused_allreduce_rmsnorm",
     "{\"Input Dims\":[[1],[],[4,7168],[4,7168],[4,7168],[4,7168],[7168],[],[],[]],\"Input "
     "type\":[\"long "
     "int\",\"\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::"
     "BFloat16\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[],[7168,1],[7168,1],[7168,1],[7168,1],[1],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.000143368, 243712.0, "",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)\nnum_channels=7168"},
    {"aiter::fused_allreduce_rmsnorm_",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"\",\"Scalar\","
     "\"Scalar\"],\"Input Strides\":[[7168,1],[7168,1],[1],[],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.000143368, 243712.0, "",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)\nnum_channels=7168"},
    {"_C_custom_ar::all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"sgl_kernel::all_reduce_reg",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"sgl_kernel::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"_C_custom_ar::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 114688.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "op_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"aiter::reduce_scatter",
     "{\"Input Dims\":[[],[8,7168],[4,7168]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 172032.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "op_shape=(8, 7168)\nout_shape=(4, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"aiter::all_gather_reg",
     "{\"Input Dims\":[[],[4,7168],[8,7168]],\"Input "
     "type\":[\"Scalar\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 172032.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "op_shape=(4, 7168)\nout_shape=(8, 7168)\ndtype_in=c10::BFloat16\nstride_input=(7168, 1)"},
    {"sglang::reg_all_gather_into_tensor",
     "{\"Input Dims\":[[256,16160],[32,16160],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_OK, 0.0, 9308160.0, "", MP_ROOFLINE_FAILED,
     NAN, NAN, "out_shape=(256, 16160)\nop_shape=(32, 16160)\ndtype_in=c10::BFloat16"},
    {"aiter::fused_allreduce_rmsnorm",
     "{\"Input Dims\":[[1],[],[4,7168],[4,7168],[4,7168],[4,7168],[7168],[],[],[]],\"Input "
     "type\":[\"long "
     "int\",\"\",\"bogus\",\"bogus\",\"bogus\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Input Strides\":[[1],[],[7168,1],[7168,1],[7168,1],[7168,1],[1],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"aiter::fused_allreduce_rmsnorm_",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[],[],[],[]],\"Input "
     "type\":[\"bogus\",\"bogus\",\"bogus\",\"Scalar\",\"\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[1],[],[],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"_C_custom_ar::all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"sgl_kernel::all_reduce_reg",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"sgl_kernel::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"_C_custom_ar::qr_all_reduce",
     "{\"Input Dims\":[[],[4,7168],[4,7168],[],[]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[7168,1],[7168,1],[],[]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"aiter::reduce_scatter",
     "{\"Input Dims\":[[],[8,7168],[4,7168]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\"],\"Input Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"aiter::all_gather_reg",
     "{\"Input Dims\":[[],[4,7168],[8,7168]],\"Input "
     "type\":[\"Scalar\",\"bogus\",\"bogus\"],\"Input Strides\":[[],[7168,1],[7168,1]]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"sglang::reg_all_gather_into_tensor",
     "{\"Input Dims\":[[256,16160],[32,16160],[]],\"Input type\":[\"bogus\",\"bogus\",\"Scalar\"]}",
     NULL, NULL, NULL, "CustomCollective", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
};

void test_oracle_coll(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "coll");
}
