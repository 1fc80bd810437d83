/* The extension op classes (ext.c): RoPE, group quantisation, MoE
 * dispatch/combine, SSM and cross entropy: TraceLens's values. */
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
    {"FusedRoPEFunc",
     "{\"Input Dims\":[[128,2,8,64],[128,1,1,64]],\"Input type\":[\"c10::BFloat16\",\"float\"]}",
     NULL, NULL, NULL, "RoPE_fwd", MP_ROOFLINE_OK, 0.000393216, 524288.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "seq_len=128\nbatch=2\nheads=8\nhead_dim=64\nnum_elements=131072"},
    {"aiter::rope_cached_positions_2c_fwd_impl",
     "{\"Input "
     "Dims\":[[2,16,8,64],[2,16,2,64],[2,16,8,64],[2,16,2,64],[4096,1,1,32],[4096,1,1,32],[2,16]],"
     "\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"c10::Half\",\"c10::Half\",\"c10::Half\","
     "\"long int\"]}",
     NULL, NULL, NULL, "RoPE_fwd", MP_ROOFLINE_OK, 6.144e-05, 81920.0, "vector_fp16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "x_shape=(2, 16, 8, 64)\ny_shape=(2, 16, 2, 64)\nnum_elements=20480"},
    {"sgl_kernel::rotary_embedding",
     "{\"Input Dims\":[[32],[32,4096],[32,1024],[],[4096,128],[]],\"Input type\":[\"long "
     "int\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"float\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"128\",\"\",\"True\"]}",
     NULL, NULL, NULL, "RoPE_fwd", MP_ROOFLINE_OK, 0.00049152, 655360.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN, "num_elements=163840"},
    {"aiter::dynamic_per_token_scaled_quant",
     "{\"Input Dims\":[[32,4096],[32,4096],[32,1],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"\",\"Scalar\"],\"Input "
     "Strides\":[[4096,1],[4096,1],[1,1],[],[]]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000339968, 393344.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(32, 4096)\nshape_in2=(32, 1)\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "'c10::Float8_e4m3fnuz')\nstride_input1=(4096, 1)\nstride_input2=(1, 1)\nstride_output=(4096, "
     "1)"},
    {"aiter::dynamic_per_group_scaled_quant",
     "{\"Input Dims\":[[32,4096],[32,4096],[32,1],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"\",\"Scalar\"],\"Input "
     "Strides\":[[4096,1],[4096,1],[1,1],[],[]]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000339968, 393344.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(32, 4096)\nshape_in2=(32, 1)\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "'c10::Float8_e4m3fnuz')\nstride_input1=(4096, 1)\nstride_input2=(1, 1)\nstride_output=(4096, "
     "1)"},
    {"aiter::dynamic_per_tensor_quant",
     "{\"Input Dims\":[[32,4096],[32,4096],[32,1],[],[]],\"Input "
     "type\":[\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\",\"float\",\"\",\"Scalar\"],\"Input "
     "Strides\":[[4096,1],[4096,1],[1,1],[],[]]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000339968, 393344.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(32, 4096)\nshape_in2=(32, 1)\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "'c10::Float8_e4m3fnuz')\nstride_input1=(4096, 1)\nstride_input2=(1, 1)\nstride_output=(4096, "
     "1)"},
    {"vllm::triton_per_token_group_quant_fp8",
     "{\"Input Dims\":[[32,4096],[]],\"Input type\":[\"c10::BFloat16\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"128\"]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_OK, 0.000786432, 397312.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "M=32\nN=4096\ngroup_size=128\nnum_groups=32\nshape_x=(32, "
     "4096)\ndtype_x=c10::BFloat16\nshape_in1=(32, 4096)\nshape_in2=()\nshape_out=(32, "
     "4096)\ndtype_in1_in2_out=('c10::BFloat16', None, "
     "'c10::float8_e4m3fn')\nstride_input1=<None>\nstride_input2=<None>\nstride_output=<None>"},
    {"vllm::triton_per_token_group_quant_fp8",
     "{\"Input Dims\":[[4096],[]],\"Input type\":[\"c10::BFloat16\",\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"0\"]}",
     NULL, NULL, NULL, "GroupQuant", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"MoEDispatch", "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[4096,7168],[4096,8]]}",
     NULL, NULL, NULL, "MoE_comm_fwd", MP_ROOFLINE_OK, 0.0, 58720256.0, "", MP_ROOFLINE_OK, 0.0,
     58720256.0, "num_tokens=4096\nhidden_dim=7168\nbpe=2"},
    {"MoECombine", "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[4096,7168],[4096,8]]}",
     NULL, NULL, NULL, "MoE_comm_fwd", MP_ROOFLINE_OK, 0.0, 58720256.0, "", MP_ROOFLINE_OK, 0.0,
     58720256.0, "num_tokens=4096\nhidden_dim=7168\nbpe=2"},
    {"DaoAILab::_causal_conv1d_fwd_cpp",
     "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[2,1024,4096],[1024,4],[1024],[]]}", NULL,
     NULL, NULL, "SSM_fwd", MP_ROOFLINE_OK, 0.067108864, 33564672.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "batch=2\nchannels=1024\nseq_len=4096\nkernel_size=4\nhas_bias=True"},
    {"CrossEntropyFunction",
     "{\"Input type\":[\"c10::BFloat16\"],\"Input Dims\":[[8,1,32000],[8,1]]}", NULL, NULL, NULL,
     "CrossEntropy_fwd", MP_ROOFLINE_OK, 0.00128, 512096.0, "vector_bf16", MP_ROOFLINE_FAILED, NAN,
     NAN, "batch=8\nvocab_size=32000\nlogits_shape=[8, 1, 32000]"},
    {"DaoAILab::_causal_conv1d_fwd_cpp",
     "{\"Input type\":[],\"Input Dims\":[[2,1024,4096],[1024,4],[1024],[]]}", NULL, NULL, NULL,
     "SSM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN, NULL},
};

void test_oracle_ext(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "ext");
}
