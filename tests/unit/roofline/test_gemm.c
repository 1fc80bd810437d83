/* GEMM: the hand-worked anchor and TraceLens's values for the GEMM and
 * grouped-GEMM classes (gemm.c). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

void test_gemm_anchor(void **state)
{
    (void)state;
    struct mp_roofline_result r;
    run("aten::mm",
        "{\"Input Dims\": [[8944, 1024], [1024, 2816]], \"Input type\": [\"c10::BFloat16\", "
        "\"c10::BFloat16\"], \"Input Strides\": [[1024, 1], [1, 1024]], \"Concrete Inputs\": "
        "[\"\", \"\"]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(r.category, "GEMM");
    assert_string_equal(r.sheet, "GEMM");
    assert_true(r.gflops == 51.581550592);
    assert_true(r.bytes / 1048576 == 71.0078125);
    assert_string_equal(r.compute_spec, "matrix_bf16");
    assert_string_equal(r.params[0].key, "M");
    assert_string_equal(ptext(&r, "stride_A"), "(1024, 1)");
    assert_string_equal(ptext(&r, "dtype_A_B"), "('c10::BFloat16', 'c10::BFloat16')");
    assert_string_equal(ptext(&r, "bias"), "False");
    assert_string_equal(r.params[r.n_params - 1].key, "B");
    assert_int_equal(r.status_bwd, MP_ROOFLINE_SKIP);
    mp_roofline_result_fini(&r);

    /* transposes from a Tensile kernel name, after B */
    const char *k[] = {"Memset", "Cijk_Alik_Bljk_BBS_BH_MT64x16x64_MI16x16x1"};
    const char *a = "{\"Input Dims\": [[4, 8], [8, 2]], \"Input type\": [\"float\", \"float\"]}";
    struct mp_roofline_op op = {"aten::mm", a, strlen(a), NULL, k, 2, NULL};
    assert_int_equal(mp_roofline_model(&op, &r), 0);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(ptext(&r, "transpose"), "(True, False)");
    assert_string_equal(ptext(&r, "stride_A"), "<None>");
    assert_string_equal(r.params[r.n_params - 1].key, "transpose");
    assert_string_equal(r.compute_spec, "matrix_fp32");
    mp_roofline_result_fini(&r);

    /* nvjet names spell the transposes in their last token */
    const char *nk[] = {"nvjet_tst_128x64_64x6_1x2_h_bz_coopA_NT"};
    struct mp_roofline_op op2 = {"aten::mm", a, strlen(a), NULL, nk, 1, NULL};
    assert_int_equal(mp_roofline_model(&op2, &r), 0);
    assert_string_equal(ptext(&r, "transpose"), "(False, True)");
    mp_roofline_result_fini(&r);

    /* bmm puts B first */
    run("aten::bmm",
        "{\"Input Dims\": [[16, 559, 64], [16, 64, 559]], \"Input type\": [\"c10::Half\", "
        "\"c10::Half\"], \"Input Strides\": [[35776, 64, 1], [35776, 1, 64]]}",
        &r);
    assert_int_equal(r.status, MP_ROOFLINE_OK);
    assert_string_equal(r.params[0].key, "B");
    assert_true(r.gflops == 16.0 * 2 * 559 * 559 * 64 / 1e9);
    assert_string_equal(r.compute_spec, "matrix_fp16");
    mp_roofline_result_fini(&r);

    /* missing Input Dims: an exception, the row fails */
    run("aten::mm", "{\"Input type\": []}", &r);
    assert_int_equal(r.status, MP_ROOFLINE_FAILED);
    assert_true(strstr(r.error, "KeyError") != NULL);
    mp_roofline_result_fini(&r);
    run("aten::mm", NULL, &r);
    assert_int_equal(r.status, MP_ROOFLINE_FAILED);
    mp_roofline_result_fini(&r);

    /* no model */
    run("aten::cat", "{}", &r);
    assert_int_equal(r.status, MP_ROOFLINE_NONE);
    assert_string_equal(r.category, "other");
    assert_null(r.sheet);
    mp_roofline_result_fini(&r);
}

static const struct oracle cases[] = {
    {"aten::mm",
     "{\"Input Dims\":[[128,64],[64,2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input Strides\":[[64,1],[1,64]],\"Concrete "
     "Inputs\":[\"\",\"\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"aten::addmm",
     "{\"Input Dims\":[[2816],[128,64],[64,2816],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[1],[64,1],[1,64],[],[]],\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"]}",
     NULL, "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", NULL, "GEMM", MP_ROOFLINE_OK, 0.046497792,
     1103360.0, "matrix_bf16", MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=True\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1\ntranspose=(True, False)"},
    {"aten::_scaled_mm",
     "{\"Input Dims\":[[128,64],[64,2816],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\"],\"Input "
     "Strides\":[[64,1],[1,64],[],[]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"aten::bmm",
     "{\"Input Dims\":[[8,128,64],[8,64,2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[8192,64,1],[180224,2816,1]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.369098752, 8781824.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=8\nM=128\nN=2816\nK=64\nbias=False\nstride_A=(8192, 64, 1)\nstride_B=(180224, 2816, "
     "1)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"aten::baddbmm",
     "{\"Input Dims\":[[8,128,2816],[8,128,64],[8,64,2816],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input "
     "Strides\":[[],[8192,64,1],[180224,2816,1],[],[]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.371982336, 8826880.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "B=8\nM=128\nN=2816\nK=64\nbias=True\nstride_A=(8192, 64, 1)\nstride_B=(180224, 2816, "
     "1)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')"},
    {"_Linear_yfwd_mm",
     "{\"Input Dims\":[[128,64],[64,2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input Strides\":[[64,1],[1,64]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=(64, 1)\nstride_B=(1, "
     "64)\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"vllm::gemm_with_dynamic_quant",
     "{\"Input Dims\":[[],[128,64],[2816,32],[2816,4]],\"Input "
     "type\":[\"c10::BFloat16\",\"unsigned char\",\"float\",\"float\"],\"Input "
     "Strides\":[[],[64,1],[32,1],[4,1]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=False\nstride_A=()\nstride_B=(64, 1)\ndtype_A_B=('c10::BFloat16', "
     "'unsigned char')\nB=1"},
    {"aiter::gemm_a16w16",
     "{\"Input Dims\":[[128,64],[2816,64],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"Scalar\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046137344, 1097728.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=128\nN=2816\nK=64\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::BFloat16')"},
    {"vllm::rocm_unquantized_gemm",
     "{\"Input Dims\":[[128,64],[2816,64],[2816]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.046497792, 1103360.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "M=128\nN=2816\nK=64\nbias=True\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::BFloat16')\nB=1"},
    {"aten::_scaled_mm",
     "{\"Input Dims\":[[4096,64],[64,32],[],[]],\"Input "
     "type\":[\"bool\",\"bool\",\"float\",\"float\"],\"Input Strides\":[[64,1],[1,64],[],[]]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN,
     NULL},
    {"tex_ts::te_gemm_ts",
     "{\"Input "
     "Dims\":[[64,128],[],[],[],[],[256,128],[],[],[],[],[64,256],[],[],[],[],[],[],[],[],[256]],"
     "\"Input "
     "type\":[\"c10::BFloat16\",\"\",\"\",\"\",\"\",\"c10::BFloat16\",\"\",\"\",\"\",\"\",\"c10::"
     "BFloat16\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"c10::BFloat16\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"1\",\"\",\"\",\"\",\"\",\"0\",\"\",\"\",\"\",\"\",\"x\",\"\","
     "\"\",\"\",\"\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.004210688, 115200.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=64\nN=256\nK=128\nbias=True\nstride_A=<None>\nstride_B=<None>\ndtype_A_B=('c10::BFloat16', "
     "'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')\nB=1"},
    {"aten::mm", "{\"Input Dims\":[[4,8]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
    {"aten::mm", "{\"Input Dims\":[[4,8],[8,2]],\"Input type\":[\"c10::BFloat16\"]}", NULL, NULL,
     NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"aten::bmm",
     "{\"Input Dims\":[[4,8],[8,2]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}", NULL,
     NULL, NULL, "GEMM", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN, NULL},
    {"aiter::gemm_a8w8_blockscale_ck",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"aiter::gemm_a8w8_bpreshuffle",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"sglang_profiler::fp8_utils_gemm_a8w8_blockscale",
     "{\"Input Dims\":[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"float\",\"float\",\"c10::BFloat16\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.968884224, 30871552.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=2112\nK=7168\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::bfloat16')\nquant_scheme=a8w8_blockscale\nquant_granularity=per_block\nblock_k="
     "128\nblock_n=125\nscale_dtype=float\noutput_shape=(32, 2112)\noutput_dtype=c10::bfloat16"},
    {"aiter::gemm_a16w16_atomic_",
     "{\"Input Dims\":[[32,4096],[1024,4096],[32,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"unsigned int\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.268435456, NAN, "matrix_bf16", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "B=1\nM=32\nN=1024\nK=4096\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'unsigned int')"},
    {"sglang_profiler::gemm_kernels_flydsl_hgemm",
     "{\"Input Dims\":[[32,4096],[1024,4096],[32,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"unsigned int\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.268435456, NAN, "matrix_bf16", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "B=1\nM=32\nN=1024\nK=4096\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'unsigned int')"},
    {"aiter::_gemm_a16w16_asm",
     "{\"Input Dims\":[[32,4096],[1024,4096],[32,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"unsigned int\"]}",
     NULL, NULL, NULL, "GEMM", MP_ROOFLINE_OK, 0.268435456, 8716288.0, "matrix_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "B=1\nM=32\nN=1024\nK=4096\nbias=False\ndtype_A_B=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::BFloat16')"},
    {"primus_turbo::grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,1024,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 77594624.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN, "M=4096\nK=1024\nN=2816\nG=8\nbpe_in=2\nbpe_out=2"},
    {"primus_turbo::grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,100,200]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,1024,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 77594624.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN, "M=4096\nK=1024\nN=2816\nG=8\nbpe_in=2\nbpe_out=2"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[8,100,200]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[4096,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 37224448.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=4096\nK=1024\nN=2816\nG=1\nbpe_in=2\nbpe_out=2\ngroup_pairs=[((4096, 1024), (1024, "
     "2816))]"},
    {"primus_turbo::grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[[512,1024],[256,512]],[[1024,2816],[511,2816]]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[4096,1024],[4096,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_OK, 23.622320128, 37224448.0, "matrix_bf16",
     MP_ROOFLINE_SKIP, NAN, NAN,
     "M=4096\nK=1024\nN=2816\nG=1\nbpe_in=2\nbpe_out=2\ngroup_pairs=[((4096, 1024), (1024, "
     "2816))]"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k",
     "{\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Dims\":[[[512,1024],[256,512]],[[1024,2816],[511,2816]]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED,
     NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm", "{\"Input type\":[],\"Input Dims\":[[4096,1024],[8,1024,2816]]}",
     NULL, NULL, NULL, "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN,
     NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm",
     "{\"Input type\":[],\"Input Dims\":[[4096,1024],[8,1024,2816]]}", NULL, NULL, NULL,
     "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"primus_turbo::grouped_gemm_variable_k",
     "{\"Input type\":[],\"Input Dims\":[[4096,1024],[4096,2816]]}", NULL, NULL, NULL,
     "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k",
     "{\"Input type\":[],\"Input Dims\":[[4096,1024],[4096,2816]]}", NULL, NULL, NULL,
     "GroupedGEMM_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_SKIP, NAN, NAN, NULL},
};

void test_oracle_gemm(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "gemm");
}
