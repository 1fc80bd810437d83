/* Demangling through libiberty, and closed-library names from the real
 * traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/sources.h>

#include "area.h"
#include "helpers.h"

void test_demangle(void **state)
{
    (void)state;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    /* a real name from the MI300 sglang trace */
    assert_int_equal(
        mp_src_demangle("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EE"
                        "EvPT0_PT_PfS4_S4_S4_diiiiiiib",
                        &b),
        0);
    assert_non_null(strstr(mp_buf_cstr(&b), "aiter::add_rmsnorm_quant_kernel<"));
    assert_int_equal(mp_src_demangle("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", &b), MP_EINVAL);
    mp_buf_fini(&b);
}

static void expect_closed(const char *name, const char *lib_part)
{
    struct mp_src_result r;
    assert_int_equal(mp_src_resolve(NULL, name, NULL, &r), 0);
    assert_string_equal(r.resolution, "closed");
    assert_null(r.source_file);
    assert_true(r.confidence == 0);
    assert_non_null(r.library);
    assert_non_null(strstr(r.library, lib_part));
    assert_non_null(strstr(r.error, lib_part));
    mp_src_result_fini(&r);
}

void test_closed(void **state)
{
    (void)state;
    expect_closed("nvjet_sm90_tst_128x8_64x12_4x1_v_bz_splitK_TNT", "cuBLASLt");
    expect_closed("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_"
                  "simt_sgemm_128x32_8x5_nn_align1::Params)",
                  "cuBLAS");
    expect_closed("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_"
                  "4x1x1_cga1x1x1_kernel0_0",
                  "cuDNN");
    expect_closed("Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_APM1", "Tensile");
    expect_closed("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                  "NCCL");
    expect_closed("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_"
                  "execute_segment_k_off_kernel__5x_cublas",
                  "cuBLAS");
}
