/* Unit tests for src/sources: demangling through libiberty, closed-library
 * names from the real traces, and resolution over the small fixture trees
 * in tests/fixtures/sources (namespaces, a lambda and a functor anchor, a
 * name-pasting macro, an assembly symbol, a Triton name defined in two
 * projects told apart by a Python frame, inductor output modules) and the
 * on-disk index cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/sources.h>

static char g_fix[1024];
static char g_cache[1024];

static const char *fix(const char *sub, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", g_fix, sub);
    return buf;
}

static struct mp_src_index *open_fix(const char *const *subs, size_t n)
{
    char paths[8][1200];
    const char *roots[8];
    for (size_t i = 0; i < n; i++)
        roots[i] = fix(subs[i], paths[i], sizeof(paths[i]));
    struct mp_src_index_opts o = {.cache_dir = g_cache};
    struct mp_src_index *ix = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_src_index_open(roots, n, &o, &ix, &d), 0);
    return ix;
}

static void test_demangle(void **state)
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

static void test_closed(void **state)
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

static void resolve(const struct mp_src_index *ix, const char *name,
                    const struct mp_src_evidence *ev, struct mp_src_result *r)
{
    assert_int_equal(mp_src_resolve(ix, name, ev, r), 0);
}

static void test_cpp(void **state)
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

static void test_evidence(void **state)
{
    (void)state;
    const char *subs[] = {"proj_a", "proj_b"};
    struct mp_src_index *ix = open_fix(subs, 2);
    struct mp_src_result r;
    resolve(ix, "fused_norm_kernel", NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "ambiguous"));
    assert_int_equal(r.n_cand, 2);
    mp_src_result_fini(&r);
    const char *frames[] = {"/usr/lib/python3/site-packages/proj_a/ops/norm.py(17): launch",
                            "model.py(3): forward"};
    struct mp_src_evidence ev = {frames, 2};
    resolve(ix, "fused_norm_kernel", &ev, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "proj_a/ops/norm.py");
    assert_int_equal(r.source_line, 12);
    assert_string_equal(r.kind, "triton_jit");
    assert_non_null(strstr(r.notes, "python-stack"));
    assert_int_equal(r.n_cand, 1);
    mp_src_result_fini(&r);
    /* the innermost frame that belongs to a candidate decides: proj_a's
     * code calling proj_b's copy ran proj_b's kernel */
    const char *nested[] = {"triton/runtime/jit.py(574): run",
                            "proj_b/kernels/norm.py(9): launch_b",
                            "proj_a/ops/norm.py(17): launch"};
    struct mp_src_evidence ev2 = {nested, 3};
    resolve(ix, "fused_norm_kernel", &ev2, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "proj_b/kernels/norm.py");
    mp_src_result_fini(&r);
    /* a CUDA graph replay's stack is no launch evidence */
    const char *replay[] = {"torch/cuda/graphs.py(139): replay", "proj_a/ops/norm.py(17): launch"};
    struct mp_src_evidence ev4 = {replay, 2};
    resolve(ix, "fused_norm_kernel", &ev4, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "ambiguous"));
    mp_src_result_fini(&r);
    /* launched by a package that is not indexed (its copy of the kernel),
     * called from proj_a: proj_a's definition is not claimed */
    const char *foreign[] = {"triton/runtime/jit.py(574): run",
                             "otherpkg/attention/norm.py(30): launch",
                             "proj_a/ops/norm.py(17): launch"};
    struct mp_src_evidence ev3 = {foreign, 3};
    const char *only_a[] = {"proj_a"};
    struct mp_src_index *ia = open_fix(only_a, 1);
    resolve(ia, "fused_norm_kernel", &ev3, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_null(r.source_file);
    assert_non_null(strstr(r.error, "launch_site_not_indexed"));
    assert_non_null(strstr(r.error, "otherpkg/attention/norm.py"));
    assert_int_equal(r.n_cand, 1);
    mp_src_result_fini(&r);
    /* without frames the only definition is claimed */
    resolve(ia, "fused_norm_kernel", NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    mp_src_result_fini(&r);
    mp_src_index_free(ia);
    mp_src_index_free(ix);
}

/* A C++ kernel compiled by a Python module beside it (aiter's
 * csrc/cpp_itfs/pa/pa_ragged.py compiling pa_ragged.cuh): the frame's stem
 * and directory pick the file among same-named copies; with that module's
 * repository not indexed, the other copy is not claimed. */
static void test_evidence_sibling(void **state)
{
    (void)state;
    const char *subs[] = {"hipproj", "jitproj"};
    struct mp_src_index *ix = open_fix(subs, 2);
    struct mp_src_result r;
    const char *name = "void attn_decode_kernel<float, 64>(float*, float const*, int)";
    resolve(ix, name, NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "ambiguous"));
    mp_src_result_fini(&r);
    const char *frames[] = {"torch/_ops.py(1244): __call__", "csrc/jit/attn/decode.py(40): run",
                            "jitproj/ops/attention.py(12): attn_decode"};
    struct mp_src_evidence ev = {frames, 3};
    resolve(ix, name, &ev, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "csrc/jit/attn/decode.cuh");
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
    const char *only_hip[] = {"hipproj"};
    ix = open_fix(only_hip, 1);
    resolve(ix, name, &ev, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "launch_site_not_indexed"));
    mp_src_result_fini(&r);
    resolve(ix, name, NULL, &r); /* no frames: the only copy is claimed */
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "src/attention.cu");
    mp_src_result_fini(&r);
    /* model code calling a PyTorch function that runs a C++ kernel says
     * nothing about who launched it: the only copy is claimed */
    const char *aten[] = {"torch/nn/modules/conv.py(456): _conv_forward",
                          "torchvision/models/resnet.py(89): forward"};
    struct mp_src_evidence ev2 = {aten, 2};
    resolve(ix, name, &ev2, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "src/attention.cu");
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
}

/* Magpie's test and reference columns from the fixture tree opproj: the
 * kernel is launched through a macro from a templated launcher that the
 * bound op calls; the tests call the op through a helper and compare with
 * an imported reference; a Triton port has the same words. */
static void test_refs(void **state)
{
    (void)state;
    const char *subs[] = {"opproj"};
    struct mp_src_index *ix = open_fix(subs, 1);
    struct mp_src_result r;
    resolve(ix, "void opproj::scaled_norm_kernel<float>(float*, float const*, int)", NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "csrc/norm_kernels.cu");
    assert_string_equal(r.test_file, "tests/kernels/test_norm.py");
    assert_string_equal(r.test_cmd, "cd $OPPROJ_DIR && pytest -q tests/kernels/test_norm.py -k "
                                    "'test_scaled_norm or test_scaled_norm_large'");
    assert_string_equal(r.baseline_ref_file, "opproj/reference.py");
    assert_string_equal(r.baseline_ref_symbol, "ref_scaled_norm");
    assert_string_equal(r.baseline_ref_kind, "eager_fn");
    assert_string_equal(r.triton_ref_file, "opproj:opproj/triton_ops/norm.py");
    assert_string_equal(r.triton_ref_symbol, "_scaled_norm_triton_kernel");
    mp_src_result_fini(&r);
    /* the Triton port itself: no launcher in the tree, the notes say so */
    resolve(ix, "_scaled_norm_triton_kernel", NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_null(r.test_file);
    assert_null(r.triton_ref_file);
    assert_string_equal(r.baseline_ref_kind, "none");
    assert_non_null(strstr(r.notes, "test_file: no launch"));
    assert_non_null(strstr(r.notes, "itself Triton"));
    mp_src_result_fini(&r);
    /* unresolved rows carry no references */
    resolve(ix, "no_such_kernel_anywhere", NULL, &r);
    assert_null(r.test_file);
    assert_string_equal(r.baseline_ref_kind, "none");
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
    char var[64];
    mp_src_repo_var("vllm-0.11.0", var, sizeof(var));
    assert_string_equal(var, "$VLLM_0_11_0_DIR");
}

static void test_inductor(void **state)
{
    (void)state;
    struct mp_src_result r;
    const char *none[] = {"proj_b"};
    struct mp_src_index *ix = open_fix(none, 1);
    resolve(ix, "triton_red_fused_mean_1", NULL, &r);
    assert_string_equal(r.kind, "inductor");
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "inductor"));
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
    const char *subs[] = {"inductor_cache"};
    ix = open_fix(subs, 1);
    resolve(ix, "triton_red_fused_mean_1", NULL, &r);
    assert_string_equal(r.source_file, "cd/ccde456.py");
    mp_src_result_fini(&r);
    resolve(ix, "triton_poi_fused_add_mul_0", NULL, &r); /* two graphs reuse the name */
    assert_string_equal(r.resolution, "unresolved");
    assert_int_equal(r.n_cand, 2);
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
}

static void test_cache(void **state)
{
    (void)state;
    const char *subs[] = {"hipproj"};
    struct mp_src_index *a = open_fix(subs, 1);
    struct mp_src_index *b = open_fix(subs, 1);
    assert_true(mp_src_index_repo(b, 0)->from_cache);
    assert_int_equal(mp_src_index_repo(a, 0)->n_defs, mp_src_index_repo(b, 0)->n_defs);
    struct mp_src_result r;
    resolve(b, "void other::rms_norm_kernel<float>(float*, float const*, int)", NULL, &r);
    assert_int_equal(r.source_line, 34);
    mp_src_result_fini(&r);
    mp_src_index_free(a);
    mp_src_index_free(b);
    struct mp_src_index *ix = NULL;
    const char *bad[] = {"/nonexistent/magpie-src"};
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_src_index_open(bad, 1, NULL, &ix, &d), MP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "nonexistent"));
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
static void test_miopen(void **state)
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

/* Resolves name with the evidence and context given (either may be NULL)
 * and asserts that file is claimed, with notes holding note when given. */
static void expect_file(const struct mp_src_index *ix, const char *name,
                        const struct mp_src_evidence *ev, const struct mp_src_context *ctx,
                        const char *file, const char *note)
{
    struct mp_src_result r;
    assert_int_equal(mp_src_resolve_ctx(ix, name, ev, ctx, &r), 0);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, file);
    if (note)
        assert_non_null(strstr(r.notes, note));
    mp_src_result_fini(&r);
}

/* A return type before the qualified name (vLLM's std::enable_if_t
 * kernels): names mangled by g++ from the fixture's declarations, the same
 * shape as vllm::fused_add_rms_norm_kernel's. */
static void test_return_type(void **state)
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

/* Same-named definitions told apart by the trace's platform (a hipified
 * twin), by template arity, and by the packages the trace shows loaded. */
static void test_clues(void **state)
{
    (void)state;
    const char *subs[] = {"twinproj", "upkern", "vendproj"};
    struct mp_src_index *ix = open_fix(subs, 3);
    struct mp_src_result r;
    const char *cuda = "void twin::fused_norm_kernel<float, 4>(float*, float const*, int)";
    /* no platform: the twins tie */
    resolve(ix, cuda, NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_non_null(strstr(r.error, "ambiguous: 2 files"));
    mp_src_result_fini(&r);
    struct mp_src_context hip = {NULL, 0, 'h'}, nv = {NULL, 0, 'c'};
    expect_file(ix, cuda, NULL, &nv, "csrc/norm.cuh", "decided_by=platform");
    expect_file(ix, cuda, NULL, &hip, "csrc/norm_hip.cuh", NULL);
    /* a HIP type in the name is the platform when the trace gives none */
    resolve(ix,
            "void twin::fused_norm_kernel<__hip_bfloat16, 4>(__hip_bfloat16*, __hip_bfloat16 "
            "const*, int)",
            NULL, &r);
    assert_string_equal(r.source_file, "csrc/norm_hip.cuh");
    mp_src_result_fini(&r);
    /* two template arguments: the two-parameter pack_kernel */
    expect_file(ix, "void twin::pack_kernel<float, 4>(float*, int)", NULL, NULL, "csrc/gated.cu",
                "decided_by=arity");
    expect_file(ix, "void twin::pack_kernel<float>(float*, int)", NULL, NULL, "csrc/pack.cu", NULL);
    /* a vendored Triton kernel: no package, a tie; the package the trace
     * loaded decides */
    resolve(ix, "_route_rows", NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    mp_src_result_fini(&r);
    const char *up[] = {"torch", "upkern"}, *vend[] = {"vendproj"};
    struct mp_src_context cu = {up, 2, 0}, cv = {vend, 1, 0};
    assert_int_equal(mp_src_resolve_ctx(ix, "_route_rows", NULL, &cu, &r), 0);
    assert_string_equal(r.source_file, "upkern/routing.py");
    assert_non_null(strstr(r.notes, "decided_by=package"));
    assert_true(r.confidence >= 0.7);
    mp_src_result_fini(&r);
    expect_file(ix, "_route_rows", NULL, &cv, "vendproj/ops/_kernels/routing.py", NULL);
    /* a Triton runtime from a source checkout is runtime, not the launcher:
     * the frame that called it decides */
    const char *co[] = {"/ws/triton-custom/python/triton/backends/amd/driver.py(831): __call__",
                        "/ws/triton-custom/python/triton/runtime/jit.py(574): run",
                        "upkern/routing.py(14): route"};
    struct mp_src_evidence evc = {co, 3};
    expect_file(ix, "_route_rows", &evc, NULL, "upkern/routing.py", NULL);
    /* the kernel's own stack outranks the packages */
    const char *fr[] = {"vendproj/ops/_kernels/routing.py(9): _route_rows"};
    struct mp_src_evidence ev = {fr, 1};
    expect_file(ix, "_route_rows", &ev, &cu, "vendproj/ops/_kernels/routing.py",
                "decided_by=stack");
    /* the same from a trace: packages from its frames and custom ops,
     * platform from its runtime calls; the graph launch gives no stack */
    char path[1200];
    struct mp_src_trace_kernels ks = {0};
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_src_trace_kernels(fix("ctx_trace.json", path, sizeof(path)), &ks, &d), 0);
    assert_int_equal(ks.n_packages, 2);
    assert_string_equal(ks.packages[0], "otherlib");
    assert_string_equal(ks.packages[1], "upkern");
    assert_int_equal(ks.platform, 'h');
    const struct mp_src_trace_kernel *k = mp_src_trace_kernels_find(&ks, "_route_rows");
    assert_non_null(k);
    assert_int_equal(k->n_frames, 0);
    struct mp_src_context tc = mp_src_trace_context(&ks);
    expect_file(ix, k->name, NULL, &tc, "upkern/routing.py", NULL);
    /* merging a second trace's kernels and packages */
    struct mp_src_trace_kernels more = {0};
    assert_int_equal(mp_src_trace_kernels(fix("ctx_trace.json", path, sizeof(path)), &more, &d), 0);
    assert_int_equal(mp_src_trace_kernels_merge(&ks, &more), 0);
    mp_src_trace_kernels_fini(&more);
    assert_int_equal(ks.n, 1);
    assert_int_equal(ks.n_packages, 2);
    assert_int_equal(ks.k[0].calls, 2);
    mp_src_trace_kernels_fini(&ks);
    mp_src_index_free(ix);
}

/* Launch wrappers: the kernel named inside them is the answer, never the
 * wrapper's own definition. */
static void test_wrappers(void **state)
{
    (void)state;
    const char *subs[] = {"wrapproj"};
    struct mp_src_index *ix = open_fix(subs, 1);
    struct mp_src_result r;
    resolve(ix,
            "void ck_tile::kentry<1, ck_tile::NormFwd<ck_tile::NormFwdPipeline<float>, "
            "ck_tile::Default2DEpilogue<float> > >(ck_tile::NormFwd<ck_tile::NormFwdPipeline<"
            "float>, ck_tile::Default2DEpilogue<float> >::Kargs)",
            NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "include/ck_tile/ops/norm/kernel/norm_fwd_kernel.hpp");
    assert_string_equal(r.source_symbol, "ck_tile::NormFwd");
    assert_non_null(strstr(r.notes, "wrapper=ck_tile::kentry; wrapped kernel=ck_tile::NormFwd"));
    assert_true(r.confidence >= 0.9);
    mp_src_result_fini(&r);
    /* a real H200 name (torch's grouped GEMM) that libiberty cannot
     * demangle: the wrapped kernel is read from the mangled prefix */
    resolve(ix,
            "_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kerne"
            "l13GemmUniversalINS5_17GroupProblemShapeIN4cute5tupleIJiiiEEEEENS5_10collective13Col"
            "lectiveMmaINS5_39MainloopSm90ArrayTmaGmmaWarpSpecializedILi4ENSA_IJNS9_1CILi2EEENSG_I"
            "Li1EEESI_EEENS5_40KernelPtrArrayTmaWarpSpecializedPingpongEEEEEEEEEvNT_6ParamsE",
            NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "include/cutlass/gemm/kernel/gemm_universal_array.hpp");
    assert_non_null(strstr(r.notes, "wrapped kernel=gemm::kernel::GemmUniversal"));
    mp_src_result_fini(&r);
    /* cutlass::Kernel2 around a struct nobody indexed: unresolved, the
     * wrapper itself not claimed */
    resolve(ix,
            "void cutlass::Kernel2<cutlass::gemm::kernel::DefaultGemmWithVisitor<float> >("
            "cutlass::gemm::kernel::DefaultGemmWithVisitor<float>::Params)",
            NULL, &r);
    assert_string_equal(r.resolution, "unresolved");
    assert_null(r.source_file);
    assert_non_null(strstr(r.error, "wrapped_kernel_not_found"));
    mp_src_result_fini(&r);
    /* a kernel in an anonymous namespace (_GLOBAL__N_1) whose name
     * libiberty refuses: the start of a real MI300 composable_kernel name
     * (labels.csv has all 1669 characters; both are refused) */
    resolve(ix,
            "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v"
            "3INS_28GridwiseGemm_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajo"
            "rES7_ttfttNS0_12element_wise11PassThroughESA_SA_LNS1_18GemmSpecializationE7ELi128E",
            NULL, &r);
    assert_string_equal(r.resolution, "resolved");
    assert_string_equal(r.source_file, "include/ck/tensor_operation/gpu/device/impl/"
                                       "device_grouped_conv_fwd_xdl_cshuffle_v3.hpp");
    assert_non_null(strstr(r.notes, "match=kernel+namespace"));
    assert_non_null(strstr(r.notes, "demangler failed"));
    mp_src_result_fini(&r);
    /* a wrapper struct around the kernel (vLLM's enable_sm90_or_later) */
    resolve(ix,
            "void cutlass::device_kernel<vllm::enable_sm90_or_later<cutlass::gemm::kernel::"
            "GemmUniversal<cute::tuple<int, int, int>, float, float, void> > >(vllm::"
            "enable_sm90_or_later<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int>"
            ", float, float, void> >::Params)",
            NULL, &r);
    assert_string_equal(r.source_file, "include/cutlass/gemm/kernel/gemm_universal_array.hpp");
    assert_string_equal(r.source_symbol, "cutlass::gemm::kernel::GemmUniversal");
    mp_src_result_fini(&r);
    mp_src_index_free(ix);
}

int main(void)
{
    const char *f = getenv("MP_FIXTURES");
    snprintf(g_fix, sizeof(g_fix), "%s/sources", f ? f : "tests/fixtures");
    snprintf(g_cache, sizeof(g_cache), "/tmp/magpie-test-sources-%d", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_closed),
        cmocka_unit_test(test_cpp),
        cmocka_unit_test(test_evidence),
        cmocka_unit_test(test_evidence_sibling),
        cmocka_unit_test(test_refs),
        cmocka_unit_test(test_inductor),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_miopen),
        cmocka_unit_test(test_return_type),
        cmocka_unit_test(test_clues),
        cmocka_unit_test(test_wrappers),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_cache);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
