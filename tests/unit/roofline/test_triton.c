/* Inductor Triton kernels and the unmodelled fallbacks (triton.c): TraceLens's
 * values. */
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
    {"triton_poi_fused_add_mul_silu_0",
     "{\"Input Dims\":[[8,128],[8,128],[8,128],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::Float\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"1024\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 6.144e-06, 10240.0, "vector_bfloat16",
     MP_ROOFLINE_SKIP, NAN, NAN, "fused_ops=aten.add, aten.mul, aten.silu\nxnumel=1024\nrnumel=1"},
    {"triton_red_fused__to_copy_add_mean_pow_rsqrt_1",
     "{\"Input Dims\":[[8,128],[128],[8,128],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"8\",\"128\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 6.144e-06, 4352.0, "vector_half", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "fused_ops=aten._to_copy, aten.add, aten.mean, aten.pow, aten.rsqrt\nxnumel=8\nrnumel=128"},
    {"triton_per_fused_gelu_native_layer_norm_2",
     "{\"Input Dims\":[[8,128],[],[]],\"Input "
     "type\":[\"c10::Float\",\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"8\",\"128\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 8.192e-06, 4096.0, "vector_float",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "fused_ops=aten.gelu, aten.native_layer_norm\nxnumel=8\nrnumel=128"},
    {"triton_poi_fused_weird_zzz_3",
     "{\"Input Dims\":[[8,128],[]],\"Input type\":[\"c10::Long\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"1024\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 0.0, 16384.0, "vector_long", MP_ROOFLINE_SKIP, NAN,
     NAN, "fused_ops=\nxnumel=1024\nrnumel=1"},
    {"triton_poi_fused_0",
     "{\"Input Dims\":[[8,128],[]],\"Input type\":[\"float\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"1024\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_OK, 0.0, 0.0, "", MP_ROOFLINE_SKIP, NAN, NAN,
     "fused_ops=\nxnumel=1024\nrnumel=1"},
    {"triton_poi_fused_add_0", "{\"Input Dims\":[[8,128]],\"Input type\":[\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "triton", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN,
     NULL},
    {"aten::cat", "{\"Input Dims\":[[[1,2],[3,4]]]}", NULL, NULL, NULL, "other", MP_ROOFLINE_NONE,
     NAN, NAN, NULL, MP_ROOFLINE_NONE, NAN, NAN, NULL},
};

void test_oracle_triton(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "triton");
}
