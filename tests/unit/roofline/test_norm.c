/* Normalisations and RMSNorm (norm.c): TraceLens's values. */
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
    {"aten::batch_norm",
     "{\"Input Dims\":[[8,64,14,14],[64],[64],[64],[64],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[12544,196,14,1],[1],[1],[1],[1],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"True\",\"0.1\",\"1e-05\",\"True\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 0.000502144, 402176.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(12544, 196, "
     "14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::native_batch_norm_backward",
     "{\"Input Dims\":[[8,64,14,14],[8,64,14,14],[64],[64],[64],[64],[64],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"float\",\"float\","
     "\"float\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[1],[12544,196,14,1],[1],[1],[1],[1],[1],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"True\",\"1e-05\",\"[True, True, True]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.000903168, 602624.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.000903168, 602624.0,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(12544, 196, "
     "14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training="
     "True\noutput_mask=[True]"},
    {"aten::instance_norm",
     "{\"Input Dims\":[[8,64,14,14],[64],[64],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"\",\"\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[12544,196,14,1],[1],[1],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"True\",\"0.1\",\"1e-05\",\"False\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 0.000502144, 402176.0, "vector_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::Half', None)\nstride_input=(12544, 196, 14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::miopen_batch_norm_backward",
     "{\"Input Dims\":[[8,64,14,14],[8,64,14,14],[64],[64],[64],[64],[64],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"float\",\"float\","
     "\"float\",\"\"],\"Input "
     "Strides\":[[12544,196,14,1],[12544,196,14,1],[1],[1],[1],[1],[1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"1e-05\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.0004016, 401536.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.0004016, 401536.0,
     "op_shape=(8, 64, 14, 14)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(12544, 196, "
     "14, "
     "1)\nstride_output=<None>\nnum_channels=64\nhas_bias=True\nis_affine=True\nis_training="
     "False\noutput_mask=[True]"},
    {"aten::layer_norm",
     "{\"Input Dims\":[[4,197,768],[],[768],[768],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],"
     "\"Input Strides\":[[151296,768,1],[],[1],[1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"[768]\",\"\",\"\",\"1e-05\",\"True\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 0.003030528, 2429952.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 197, 768)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(151296, 768, "
     "1)\nstride_output=<None>\nnum_channels=768\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::native_layer_norm_backward",
     "{\"Input Dims\":[[4,197,768],[4,197,768],[],[4,197,1],[4,197,1],[768],[768],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"float\",\"float\",\"c10::BFloat16\",\"c10:"
     ":BFloat16\",\"\"],\"Input "
     "Strides\":[[151296,768,1],[151296,768,1],[],[1],[1],[1],[1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"[768]\",\"\",\"\",\"\",\"\",\"[True, True, False]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.005446656, 3635712.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.005446656, 3635712.0,
     "op_shape=(4, 197, 768)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(151296, 768, "
     "1)\nstride_output=<None>\nnum_channels=768\nhas_bias=False\nis_affine=True\nis_training="
     "True\noutput_mask=[True, True, False]"},
    {"aten::group_norm",
     "{\"Input Dims\":[[4,32,8,8],[],[32],[32],[],[]],\"Input "
     "type\":[\"float\",\"Scalar\",\"float\",\"float\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[2048,64,8,1],[],[1],[1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"8\",\"\",\"\",\"1e-05\",\"True\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 4.1152e-05, 66304.0, "vector_fp32",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 32, 8, 8)\ndtype_in_out=('float', None)\nstride_input=(2048, 64, 8, "
     "1)\nstride_output=<None>\nnum_channels=32\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::native_group_norm_backward",
     "{\"Input Dims\":[[4,32,8,8],[4,32,8,8],[4,8],[4,8],[32],[32],[],[],[],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"float\",\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[2048,64,8,1],[2048,64,8,1],[8,1],[8,1],[1],[1],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"4\",\"64\",\"8\",\"[True, True, True]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 7.3728e-05, 98368.0, "vector_fp32",
     MP_ROOFLINE_OK, 7.3728e-05, 98368.0,
     "op_shape=(4, 32, 8, 8)\ndtype_in_out=('float', None)\nstride_input=(2048, 64, 8, "
     "1)\nstride_output=<None>\nnum_channels=4.0\nhas_bias=True\nis_affine=True\nis_training="
     "True\noutput_mask=[True, True, True]"},
    {"aten::_fused_rms_norm",
     "{\"Input Dims\":[[4,7,512],[],[512],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[3584,512,1],[],[1],[]],\"Concrete Inputs\":[\"\",\"[512]\",\"\",\"1e-06\"]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 5.74e-05, 58368.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7, 512)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3584, 512, "
     "1)\nstride_output=<None>\nnum_channels=512\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aten::_fused_rms_norm_backward",
     "{\"Input Dims\":[[4,7,512],[4,7,512],[],[4,7,1],[512],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"float\",\"c10::BFloat16\",\"\"],\"Input "
     "Strides\":[[3584,512,1],[3584,512,1],[],[7,1,1],[1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"[512]\",\"\",\"\",\"[True, True]\"]}",
     NULL, NULL, NULL, "NORM_bwd", MP_ROOFLINE_OK, 0.00014336, 88064.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.00014336, 88064.0,
     "op_shape=(4, 7, 512)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3584, 512, "
     "1)\nstride_output=<None>\nnum_channels=512\nhas_bias=False\nis_affine=True\nis_training="
     "False\noutput_mask=[True, True]"},
    {"aiter::_groupnorm_run",
     "{\"Input Dims\":[[4,32,8,8],[],[32],[32]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[2048,64,8,1],[],[1],[1]]}",
     NULL, NULL, NULL, "NORM_fwd", MP_ROOFLINE_OK, 4.1152e-05, 33152.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 32, 8, 8)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(2048, 64, 8, "
     "1)\nstride_output=<None>\nnum_channels=32\nhas_bias=True\nis_affine=True\nis_training=True"},
    {"aten::instance_norm_backward", "{\"Input Dims\":[[1]]}", NULL, NULL, NULL, "NORM_bwd",
     MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::rms_norm",
     "{\"Input Dims\":[[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"\"],\"Input "
     "Strides\":[[7168,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000114696, 129024.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm2d_fwd_ck",
     "{\"Input Dims\":[[4,7168],[7168],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"Scalar\",\"\"],\"Input Strides\":[[7168,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000114696, 258048.0, "vector_fp32",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('float', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[1],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000114696, 129024.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,1],[7168],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"c10::BFloat16\",\"Scalar\","
     "\"Scalar\"],\"Input Strides\":[[7168,1],[7168,1],[1,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 100368.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm_quant",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,56],[7168],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[56,1],[1],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"128\",\"False\",\"False\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 101248.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant",
     "{\"Input Dims\":[[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[1],[],[]],\"Concrete Inputs\":[\"\",\"\",\"1e-06\",\"128\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 101248.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::rmsnorm2d_fwd_with_add_ck",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,7168],[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::"
     "BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[7168,1],[7168,1],[1],[],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000143368, 243712.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::add_rmsnorm",
     "{\"Input Dims\":[[4,7168],[4,7168],[4,7168],[4,7168],[7168],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::"
     "BFloat16\",\"Scalar\"],\"Input Strides\":[[7168,1],[7168,1],[7168,1],[7168,1],[1],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000143368, 243712.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant",
     "{\"Input Dims\":[[4,7168],[4,7168],[7168],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[7168,1],[7168,1],[1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"1e-06\",\"128\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000200712, 215936.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"vllm::rocm_aiter_triton_add_rmsnorm_pad",
     "{\"Input Dims\":[[64,2880],[2880],[],[64,2880],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[2880,1],[1],[],[2880,1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"1e-05\",\"\",\"256\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000921728, 1504896.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(64, 2880)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(2880, "
     "1)\nstride_output=<None>\nnum_channels=2880\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"aiter::fused_add_rmsnorm_pad_",
     "{\"Input Dims\":[[64,2880],[2880],[],[64,2880],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"c10::BFloat16\",\"Scalar\"],\"Input "
     "Strides\":[[2880,1],[1],[],[2880,1],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"1e-05\",\"\",\"0\"]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.000921728, 1480320.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(64, 2880)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(2880, "
     "1)\nstride_output=<None>\nnum_channels=2880\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
    {"sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant",
     "{\"Input Dims\":[[4,7168],[7168],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"],\"Input Strides\":[[7168,1],[1],[]]}",
     NULL, NULL, NULL, "RMSNorm", MP_ROOFLINE_OK, 0.00017204, 86912.0, "vector_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "op_shape=(4, 7168)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(7168, "
     "1)\nstride_output=<None>\nnum_channels=7168\nhas_bias=False\nis_affine=True\nis_training="
     "False"},
};

void test_oracle_norm(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "norm");
}
