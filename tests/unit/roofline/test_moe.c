/* The unfused MoE pseudo ops (moe.c): TraceLens's values. */
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
    {"pseudo_op::moe_triton_unfused_up",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", NULL, "MoE_unfused",
     MP_ROOFLINE_OK, 4.831838208, 298763238.17425185, "matrix_fp4", MP_ROOFLINE_SKIP, NAN, NAN,
     "num_tokens=32\nhidden_dim=3072\ninter_dim=3072\nnum_experts=32\ntopk=4\ngated=True\ninput_"
     "dtype=c10::BFloat16\nweight_dtype=FP4"},
    {"pseudo_op::moe_triton_unfused_down",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", NULL, "MoE_unfused",
     MP_ROOFLINE_OK, 2.415919104, 149873139.08712593, "matrix_fp4", MP_ROOFLINE_SKIP, NAN, NAN,
     "num_tokens=32\nhidden_dim=3072\ninter_dim=3072\nnum_experts=32\ntopk=4\ngated=True\ninput_"
     "dtype=c10::BFloat16\nweight_dtype=FP4"},
    {"pseudo_op::moe_triton_unfused_up",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "plain", NULL, "MoE_unfused", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN,
     NAN, NULL},
    {"pseudo_op::moe_triton_unfused_down",
     "{\"Input Dims\":[[32,3072],[32,32],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\"],\"MoE topk\":4,\"MoE GEMM "
     "gated\":true}",
     NULL, "plain", NULL, "MoE_unfused", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN,
     NAN, NULL},
    {"pseudo_op::moe_triton_unfused_up",
     "{\"Input Dims\":[[32,3072],[32,32]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"MoE topk\":4,\"MoE GEMM gated\":true}",
     NULL, NULL, NULL, "MoE_unfused", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
};

void test_oracle_moe(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "moe");
}
