/* Evidence from the trace: a Triton name defined in two projects told apart
 * by a Python frame, a C++ kernel compiled by a Python module beside it,
 * same-named definitions told apart by the platform. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/sources.h>

#include "area.h"
#include "helpers.h"

void test_evidence(void **state)
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
void test_evidence_sibling(void **state)
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

/* Same-named definitions told apart by the trace's platform (a hipified
 * twin), by template arity, and by the packages the trace shows loaded. */
void test_clues(void **state)
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
