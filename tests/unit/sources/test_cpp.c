/* C++ resolution over the fixture trees: namespaces, a lambda and a functor
 * anchor, a name-pasting macro, an assembly symbol; a return type before
 * the qualified name; the MIOpen shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/sources.h>

#include "area.h"
#include "helpers.h"

void test_cpp(void **state)
{
    (void)state;
    const char *subs[] = {"hipproj", "asmproj"};
    struct mp_src_index *ix = open_fix(subs, 2);
    struct mp_src_result r;
    resolve(ix, "void mylib::rms_norm_kernel<float>(float*, float const*, int)", NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "src/kernels.cu");
    assert_string_equal(r.source_symbol, "mylib::rms_norm_kernel");
    assert_int_equal(r.source_line, 26);
    assert_true(r.confidence >= 0.9);
    mp_src_result_fini(&r);
    /* the same name in another namespace */
    resolve(ix, "void other::rms_norm_kernel<float>(float*, float const*, int)", NULL, &r);
    assert_string_equal(r.source_symbol, "other::rms_norm_kernel");
    assert_int_equal(r.source_line, 34);
    mp_src_result_fini(&r);
    /* a namespace nobody defines: not claimed, candidates kept */
    resolve(ix, "void vllm::rms_norm_kernel<float>(float*, float const*, int)", NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_null(r.source_file);
    assert_true(r.n_cand >= 1);
    assert_non_null(strstr(r.error, "namespace"));
    mp_src_result_fini(&r);
    /* generic launcher: the lambda's enclosing function is the answer */
    resolve(ix,
            "void mylib::elementwise_kernel<4, mylib::scale_kernel_cuda(float*)::{lambda(float)#1}>"
            "(int, mylib::scale_kernel_cuda(float*)::{lambda(float)#1})",
            NULL, &r);
    assert_string_equal(r.source_symbol, "mylib::scale_kernel_cuda");
    assert_int_equal(r.source_line, 19);
    mp_src_result_fini(&r);
    /* ... or the functor type */
    resolve(ix,
            "void mylib::elementwise_kernel<4, mylib::detail::ScaleFunctor<float> >(int, "
            "mylib::detail::ScaleFunctor<float>)",
            NULL, &r);
    assert_string_equal(r.source_symbol, "mylib::detail::ScaleFunctor");
    assert_int_equal(r.source_line, 7);
    mp_src_result_fini(&r);
    /* a name pasted by a macro */
    resolve(ix, "copy_tile_16x16_half", NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "src/kernels.cu");
    assert_string_equal(r.kind, "hip_cpp");
    mp_src_result_fini(&r);
    /* an assembly symbol */
    resolve(ix, "gemm_asm_bf16_128x128", NULL, &r);
    assert_string_equal(r.source_file, "kernels/gemm_asm_bf16_128x128.s");
    assert_string_equal(r.kind, "asm");
    assert_int_equal(r.source_line, 3);
    mp_src_result_fini(&r);
    /* a kernel name that only starts with a host function's name is not
     * claimed (src/host_api.cpp's tile_transpose is no kernel) */
    resolve(ix, "tile_transpose_32x16_half", NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_null(r.source_file);
    mp_src_result_fini(&r);
    resolve(ix, "no_such_kernel_anywhere", NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "symbol_not_found"));
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
}

/* A return type before the qualified name (vLLM's std::enable_if_t
 * kernels): names mangled by g++ from the fixture's declarations, the same
 * shape as vllm::fused_add_rms_norm_kernel's. */
void test_return_type(void **state)
{
    (void)state;
    const char *subs[] = {"twinproj"};
    struct mp_src_index *ix = open_fix(subs, 1);
    static const char *const names[] = {
        "_ZN4twin12gated_kernelIfLi8EEENSt9enable_ifIXaagtT0_Li0EsrNS_4convIT_EE6existsEvE4typeE"
        "PS3_i",
        "_ZN4twin12gated_kernelIfLi0EEENSt9enable_ifIXooeqT0_Li0EntsrNS_4convIT_EE6existsEvE4typ"
        "eEPS3_i",
        "std::enable_if<(((8)>(0)))&&twin::conv<float>::exists, void>::type "
        "twin::gated_kernel<float, 8>(float*, int)",
        "std::enable_if<(((8)>>(1))>=(2)), void>::type twin::gated_kernel<float, 8>(float*, int)",
    };
    struct mp_src_result r;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        resolve(ix, names[i], NULL, &r);
        assert_string_equal(r.resolution, "resolved");
        assert_string_equal(r.source_file, "csrc/gated.cu");
        assert_string_equal(r.source_symbol, "twin::gated_kernel");
        assert_true(r.confidence >= 0.9);
        mp_src_result_fini(&r);
    }
    /* the vLLM name itself: parsed to vllm::fused_add_rms_norm_kernel (not
     * in this tree: a namespace mismatch, not std::) */
    resolve(ix,
            "_ZN4vllm25fused_add_rms_norm_kernelIN3c108BFloat16ELi8EEENSt9enable_ifIXaagtT0_Li0Esr"
            "NS_12_typeConvertIT_EE6existsEvE4typeEPS5_lS9_PKS5_fii",
            NULL, &r);
    assert_non_null(strstr(r.demangled, "::type vllm::fused_add_rms_norm_kernel<"));
    assert_non_null(strstr(r.notes, "namespace=vllm"));
    assert_null(r.source_file);
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
}

/* resolve NAME in IX and expect it resolved to FILE:LINE as SYMBOL, of
 * KIND, with a confidence in [LO, HI] */
static void expect_at(const struct mp_src_index *ix, const char *name, const char *file, long line,
                      const char *symbol, const char *kind, double lo, double hi)
{
    struct mp_src_result r;
    resolve(ix, name, NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, file);
    assert_int_equal(r.source_line, line);
    assert_string_equal(r.source_symbol, symbol);
    assert_string_equal(r.kind, kind);
    assert_true(r.confidence >= lo && r.confidence <= hi);
    /* only one file defines it, though others name it (src/solver, .inc) */
    assert_non_null(strstr(r.notes, "files=1"));
    mp_src_result_fini(&r);
}

/* the MIOpen shapes (tests/fixtures/sources/miopenproj, written for these
 * tests: no package ships MIOpen's kernels) */
void test_miopen(void **state)
{
    (void)state;
    const char *subs[] = {"miopenproj"};
    struct mp_src_index *ix = open_fix(subs, 1);
    /* OpenCL __kernel with its attribute on the line before the name */
    expect_at(ix, "LiteBatchNormFwd", "src/kernels/LiteBatchNorm.cl", 6, "LiteBatchNormFwd",
              "opencl", 0.95, 1.0);
    /* OpenCL __kernel pasted by a function-like macro: the #define's line */
    expect_at(ix, "LiteSubTensorOp2d", "src/kernels/LiteBatchNorm.cl", 12, "LiteSubTensorOp*d",
              "opencl", 0.85, 0.95);
    /* HIP extern "C" __global__ pasted by a macro, after a string literal
     * continued over lines (the line count must survive it) */
    expect_at(ix, "lite_transpose_32x16_half", "src/kernels/lite_transpose.cpp", 14,
              "lite_transpose_*_*", "hip_cpp", 0.85, 0.95);
    expect_at(ix, "lite_transpose_16x64_dword", "src/kernels/lite_transpose.cpp", 14,
              "lite_transpose_*_*", "hip_cpp", 0.85, 0.95);
    /* assembly: .globl (the first directive naming it, before .amdhsa_kernel) */
    expect_at(ix, "conv_lite_fwd_gfx90a", "src/kernels/asm/conv_lite_fwd_gfx90a.s", 4,
              "conv_lite_fwd_gfx90a", "asm", 0.95, 1.0);
    /* assembly: code-object-v2 .amdgpu_hsa_kernel */
    expect_at(ix, "conv_lite_1x1_v2", "src/kernels/asm/conv_lite_1x1_v2.s", 5, "conv_lite_1x1_v2",
              "asm", 0.95, 1.0);
    /* not resolved: a name made by an assembler .macro (\kname), and an
     * OpenCL name made by an object-like macro; no preprocessing is done */
    const char *unres[] = {"conv_lite_wrw_f16", "LitePoolingFwd"};
    for (size_t i = 0; i < 2; i++) {
        struct mp_src_result r;
        resolve(ix, unres[i], NULL, &r);
        assert_string_equal(r.resolution, "unresolved");
        assert_null(r.source_file);
        assert_int_equal(r.source_line, 0);
        assert_true(r.confidence == 0);
        assert_non_null(strstr(r.error, "symbol_not_found"));
        mp_src_result_fini(&r);
    }
    mp_src_index_free(ix);
}
