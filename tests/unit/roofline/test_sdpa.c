/* SDPA forward and backward (sdpa.c): TraceLens's values. */
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
    {"aten::_scaled_dot_product_flash_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,64,32],[2,2,64,32],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\","
     "\"Scalar\",\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"0.1\",\"True\",\"False\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.1\ncausal=True\nflash_"
     "impl=True\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"aten::_scaled_dot_product_efficient_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,128,32],[2,2,128,16],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"Scalar\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"True\",\"oops\",\"True\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"aten::_scaled_dot_product_cudnn_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,64,32],[2,2,64,32],[],[],[],[],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"float\",\"\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"False\",\"0.0\",\"True\",\"False\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "matrix_fp32",
     MP_ROOFLINE_OK, 0.008400896, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=False\ndtype_A_B=('float', 'float')"},
    {"aten::_scaled_dot_product_efficient_attention",
     "{\"Input Dims\":[[2,8,64,32],[2,2,128,32],[2,2,128,16],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"Scalar\",\"Scalar\",\"Scalar\","
     "\"Scalar\"],\"Concrete Inputs\":[\"\",\"\",\"\",\"\",\"True\",\"oops\",\"False\",\"\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.012582912, 147456.0, "matrix_fp16",
     MP_ROOFLINE_OK, 0.025202688, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=128\nH_KV=2\nd_h_qk=32\nd_h_v=16\ndropout=0.0\ncausal=False\nflash_"
     "impl=False\ndtype_A_B=('c10::Half', 'c10::Half')"},
    {"flash_attn::_flash_attn_forward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\","
     "\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[16384,256,32,1],[4096,64,32,1],[4096,64,32,1],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.125\",\"True\",\"-1\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\nq_stride=(16384, 256, 32, "
     "1)\nk_stride=(4096, 64, 32, 1)\nv_stride=(4096, 64, 32, "
     "1)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"FlashAttnFunc",
     "{\"Input Dims\":[[2,64,8,32],[2,80,2,32],[2,80,2,32],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[1],[1],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.125\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"flash_attn::_flash_attn_backward",
     "{\"Input "
     "Dims\":[[2,64,8,32],[2,64,8,32],[2,64,2,32],[2,64,2,32],[],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"\",\"\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[1],[1],[1],[1],[],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"0.1\",\"True\",\"\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\nq_stride=(1,)\nk_stride=(1,)\nv_"
     "stride=(1,)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16')"},
    {"flash_attn::_flash_attn_backward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Input "
     "type\":[\"weird\",\"weird\",\"weird\",\"weird\"],\"Input Strides\":[[1],[1],[1],[1]]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_OK, 0.010498048,
     262144.0, NULL},
    {"flash_attn::_flash_attn_varlen_forward",
     "{\"Input Dims\":[[300,8,64],[300,2,64],[300,2,64],[4],[4],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\",\"int\",\"Scalar\","
     "\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[512,64,1],[128,64,1],[128,64,1],[1],[1],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"150\",\"150\",\"0.0\",\"0.1\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.03456, 768000.0, "matrix_bf16", MP_ROOFLINE_OK,
     0.2304576, 1228800.0,
     "B=1\nN_Q=300\nH_Q=8\nN_KV=300\nH_KV=2\nd_h_qk=64\nd_h_v=64\nq_stride=(512, 64, "
     "1)\nk_stride=(128, 64, 1)\nv_stride=(128, 64, "
     "1)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16')\nnum_seqs_q=3\nnum_seqs_kv=3\nmax_seqlen_q=150.0\nmax_seqlen_kv=150.0"},
    {"flash_attn::_flash_attn_varlen_backward",
     "{\"Input "
     "Dims\":[[300,8,64],[300,8,64],[300,2,64],[300,2,64],[],[],[],[],[],[4],[4],[],[],[],[],[]],"
     "\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"],\"Input "
     "Strides\":[[1],[1],[1],[1],[],[],[],[],[],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"150\",\"150\",\"0.0\",\"0."
     "1\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.0864576, 1228800.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.2304576, 1228800.0,
     "B=1\nN_Q=300\nH_Q=8\nN_KV=300\nH_KV=2\nd_h_qk=64\nd_h_v=64\nq_stride=(1,)\nk_stride=(1,)\nv_"
     "stride=(1,)\ndropout=0.0\ncausal=True\nflash_impl=True\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16')\nnum_seqs_q=3\nnum_seqs_kv=3\nmax_seqlen_q=150.0\nmax_seqlen_kv=150.0"},
    {"aiter::_flash_attn_forward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.1\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::_flash_attn_backward",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::wrapper_fmha_v3_fwd",
     "{\"Input Dims\":[[],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::wrapper_fmha_v3_bwd",
     "{\"Input Dims\":[[],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::mha_fwd",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::fmha_v3_fwd",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"aiter::mha_bwd",
     "{\"Input Dims\":[[],[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"0.0\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_bwd", MP_ROOFLINE_OK, 0.010498048, 262144.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"flash_attn_3::fwd",
     "{\"Input Dims\":[[2,64,8,32],[2,64,2,32],[2,64,2,32]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.004194304, 163840.0, "", MP_ROOFLINE_OK,
     0.010498048, 262144.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=2\nd_h_qk=32\nd_h_v=32\ndropout=0.0\ncausal=True\nflash_"
     "impl=True"},
    {"FlashAttnFunc",
     "{\"Input Dims\":[[2,64,8,32],[2,80,2,32],[2,80,2,32],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[1],[1],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0.0\",\"0.125\",\"False\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.01048576, 172032.0, "matrix_fp16",
     MP_ROOFLINE_OK, 0.02624512, 278528.0,
     "B=2\nN_Q=64\nH_Q=8\nN_KV=80\nH_KV=2\nd_h_qk=32\nd_h_v=32\nq_stride=(1,)\nk_stride=(1,)\nv_"
     "stride=(1,)\ndropout=0.0\ncausal=False\nflash_impl=True\ndtype_A_B=('c10::Half', "
     "'c10::Half')"},
    {"EvoformerAttention",
     "{\"Input Dims\":[[1,4,64,8,32],[1,4,64,8,32],[1,4,64,8,32]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_OK, 0.016777216, 524288.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.033554432, 917504.0,
     "B=4\nN_Q=64\nH_Q=8\nN_KV=64\nH_KV=8\nd_h_qk=32\nd_h_v=32\ncausal=False\nflash_impl="
     "False\ndtype_A_B=['c10::BFloat16']"},
    {"aten::_scaled_dot_product_flash_attention",
     "{\"Input Dims\":[[2,8,64,32],[3,2,64,32],[2,2,64,32]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"0\",\"True\"]}",
     NULL, NULL, NULL, "SDPA_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
};

void test_oracle_sdpa(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "sdpa");
}
