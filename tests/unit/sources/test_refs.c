/* Magpie's test and reference columns, inductor output modules, and the
 * launch wrappers whose kernel is the answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/sources.h>

#include "area.h"
#include "helpers.h"

/* Magpie's test and reference columns from the fixture tree opproj: the
 * kernel is launched through a macro from a templated launcher that the
 * bound op calls; the tests call the op through a helper and compare with
 * an imported reference; a Triton port has the same words. */
void test_refs(void **state)
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

void test_inductor(void **state)
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

/* Launch wrappers: the kernel named inside them is the answer, never the
 * wrapper's own definition. */
void test_wrappers(void **state)
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
