/* Inference attention (attn.c): TraceLens's values, with and without the
 * step annotations that carry the chunk statistics. */
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
    {"sglang::store_cache",
     "{\"Input Dims\":[[32,1024],[32,1024],[835874,1024],[835874,1024],[32],[],[]],\"Input "
     "type\":[\"float\",\"float\",\"float\",\"float\",\"long int\",\"Scalar\",\"Scalar\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.0, 524288.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN, "op_shape=(32, 1024)\nnelems=32768\ndtype=float"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.007897088, 933888.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk=300\ng_sqsq="
     "3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_OK, 0.015794176, 1247232.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.013819904, 1634304.0, "matrix_fp16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.007897088, 1589248.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=320\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.0098304, 718848.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=300\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=3\ng_sk=300\ng_"
     "sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=c10::Float8_e4m3fnuz\nsliding_window="
     "128"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "execute_64_context_1(sq14sk20sqsq196sqsk280)_generation_3(sq3sk300sqsq3sqsk300)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 0.067125248, 3063808.0, "matrix_bf16", MP_ROOFLINE_SKIP,
     NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14\nc_sk=20\nc_sqsq=196\nc_sqsk=280\ng_sq=3\ng_sk="
     "300\ng_sqsq=3\ng_sqsk=300\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, "fp8", "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "execute_context_2(14721)_generation_0(0)", NULL, NULL, "InferenceAttention",
     MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.000647168, 139264.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_sqsq=1\ng_"
     "sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, "fp8", "InferenceAttention", MP_ROOFLINE_OK, 0.001294336, 249856.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.001132544, 243712.0, "matrix_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.000647168, 180224.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=20\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.000393216, 59392.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=12\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=c10::Float8_e4m3fnuz\nsliding_window=128"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     NULL, NULL, "InferenceAttention", MP_ROOFLINE_OK, 0.005500928, 879104.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=5\nc_sk=8\nc_sqsq=25\nc_sqsk=40\ng_sq=1\ng_sk=12\ng_"
     "sqsq=1\ng_sqsk=12\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN,
     NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "step[EXTEND bs=2 toks=14721]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 890.843406336, 271337472.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk=108745533\ng_sq="
     "0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_OK, 1781.686812672, 542674944.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 1558.975961088, 474840576.0, "matrix_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 890.843406336, 301486080.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=14721\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_SKIP, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 7572.168953856, 2082138240.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=14721\nc_sk=14721\nc_sqsq=108745533\nc_sqsk="
     "108745533\ng_sq=0\ng_sk=0\ng_sqsq=0\ng_sqsk=0\ndtype_Q=c10::BFloat16\ndtype_KV=c10::"
     "BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 18.253611008, 534773760.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=64\nd_h_v=64\ndropout=0.0\ncausal="
     "False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk=258048\ng_sqsq="
     "132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, "fp8",
     "InferenceAttention", MP_ROOFLINE_OK, 36.507222016, 541851648.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=16\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=fp8"},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 31.943819264, 935854080.0, "matrix_fp16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=32\nH_KV=8\nd_h_qk=128\nd_h_v=96\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::Half\ndtype_KV=c10::Half"},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 18.253611008, 1063256064.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=32\nH_V=8\nH_K=8\nN_KV=258048\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16"},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 1.610612736, 114032640.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=8\nH_K=8\nN_KV=258048\nH_KV=8\nd_h_qk=128\nd_h_v=128\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=c10::Float8_"
     "e4m3fnuz\nsliding_window=128"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", NULL, NULL,
     "InferenceAttention", MP_ROOFLINE_OK, 155.155693568, 614989824.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=1\nN_Q=32\nH_Q=64\nH_V=1\nH_K=1\nN_KV=1000\nH_KV=1\nd_h_qk=576\nd_h_v=512\ndropout=0."
     "0\ncausal=False\nflash_impl=True\nc_sq=0\nc_sk=0\nc_sqsq=0\nc_sqsk=0\ng_sq=384\ng_sk="
     "258048\ng_sqsq=132612\ng_sqsk=1114112\ndtype_Q=c10::BFloat16\ndtype_KV=c10::BFloat16"},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "decode[bs=64 tok=64 d=64]", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN,
     NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     NULL, NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"vllm::unified_attention_with_output",
     "{\"Input Dims\":[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\","
     "\"\",\"c10::BFloat16\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::mha_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[1000,16,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::Float8_e4m3fnuz\",\"c10::BFloat16\"]}",
     "NA", NULL, "fp8", "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::fmha_v3_varlen_fwd",
     "{\"Input Dims\":[[32,64,128],[32,8,128],[32,8,96]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::attention_paged_attention_ragged",
     "{\"Input "
     "Dims\":[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]],"
     "\"Input type\":[\"c10::BFloat16\",\"unsigned "
     "char\",\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"int\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"aiter::pa_decode_gluon",
     "{\"Input Dims\":[[32,64,128],[],[1000,8,16,128],[1000,8,128,16]],\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"c10::Float8_e4m3fnuz\",\"c10::Float8_e4m3fnuz\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
     "\"\",\"\",\"\",\"128\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
     "{\"Input Dims\":[[32,64,576],[1000,1,576]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     "NA", NULL, NULL, "InferenceAttention", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP,
     NAN, NAN, NULL},
};

void test_oracle_attn(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "attn");
}
