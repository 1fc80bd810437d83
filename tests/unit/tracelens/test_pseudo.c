/* Pseudo ops: the synthetic cpu ops that split fused MoE and MLA kernels,
 * placed in the tree as TraceLens places them. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/gap.h>
#include <magpie/tracelens.h>

#include "area.h"
#include "helpers.h"
#include "tracelens/tracelens_int.h"

/* A vllm::moe_forward over two matmul_ogs kernels and a matmul_scatter one,
 * its TopK (k = 2) launching a kernel of its own (TraceLens's unfused Triton
 * MoE pseudo ops, pseudo.c). */
#define MOE_LAUNCH(ts, corr, gts, kname)                                                           \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipModuleLaunchKernel\", \"pid\": 1, " \
    "\"tid\": 1, \"ts\": " #ts ", \"dur\": 2, \"args\": {\"correlation\": " #corr "}},"            \
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 1, "       \
    "\"tid\": 1, \"ts\": " #ts "},"                                                                \
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 0, "       \
    "\"tid\": 7, \"ts\": " #gts ", \"bp\": \"e\"},"                                                \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" kname "\", \"pid\": 0, \"tid\": 7, "       \
    "\"ts\": " #gts ", \"dur\": 10, \"args\": {\"correlation\": " #corr ", \"stream\": 7}},"
static const char *const moe_trace =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"vllm::moe_forward\", \"pid\": 1, \"tid\": 1,"
    " \"ts\": 100, \"dur\": 100, \"args\": {\"External id\": 1, \"Input Dims\": [[32, 3072], "
    "[32, 32]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": "
    "[[3072, 1], [32, 1]], \"Concrete Inputs\": [\"\", \"\"]}},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"TopK\", \"pid\": 1, \"tid\": 1, \"ts\": 105,"
    " \"dur\": 10, \"args\": {\"External id\": 2, \"Input Dims\": [[32, 32], []], \"Input type\": "
    "[\"c10::BFloat16\", \"Scalar\"], \"Concrete Inputs\": [\"\", \"2\"]}}," MOE_LAUNCH(
        106, 11, 1000, "_topk_forward")
        MOE_LAUNCH(130, 12, 1020, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu")
            MOE_LAUNCH(150, 13, 1040, "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1") MOE_LAUNCH(
                170, 14, 1060,
                "_finalize_matmul_scatter_bf16") "{\"ph\": \"M\", \"name\": \"process_name\", "
                                                 "\"pid\": 1, \"args\": {\"name\": \"python\"}}]}";

void test_moe_pseudo_ops(void **state)
{
    (void)state;
    write_file("moe.json", moe_trace);
    char path[256];
    snprintf(path, sizeof(path), "%s/moe.json", tmpdir);
    struct mp_report *plain = NULL, *pseudo = NULL;
    struct mp_report_opts o;
    struct mp_diag d;
    mp_report_opts_defaults(&o);
    o.inference = true;
    assert_int_equal(mp_report_build(path, &o, &plain, &d), 0);
    o.enable_pseudo_ops = true;
    assert_int_equal(mp_report_build(path, &o, &pseudo, &d), 0);
    /* three pseudo ops appended to the store */
    assert_int_equal(pseudo->events, plain->events + 3);
    assert_null(sheet_csv(plain, "MoE_unfused_fwd"));
    const char *moe = sheet_csv(pseudo, "MoE_unfused_fwd");
    assert_non_null(moe);
    /* up: gated (swiglu), topk from the TopK op; down: not gated */
    assert_non_null(strstr(moe, "pseudo_op::moe_triton_unfused_up,32,3072,3072,32,2,True,"));
    assert_non_null(strstr(moe, "pseudo_op::moe_triton_unfused_down,32,3072,3072,32,2,False,"));
    const char *u = sheet_csv(pseudo, "unified_perf_summary");
    assert_non_null(u);
    assert_non_null(strstr(u, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter,"));
    assert_null(strstr(u, "(Synthetic Op)"));
    /* kernel launchers walk around the pseudo ops: ops_summary is unchanged */
    assert_string_equal(sheet_csv(plain, "ops_summary"), sheet_csv(pseudo, "ops_summary"));
    mp_report_free(plain);
    mp_report_free(pseudo);
}

/* An AITER MLA decode frame over its stage-1 op and a reduce kernel
 * launched by python frames only (TraceLens's MLA decode pseudo op). */
static const char *const mla_trace =
    "{\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"aiter/mla.py(150): "
    "mla_decode_fwd\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 100, \"args\": {}},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aiter::mla_decode_stage1_asm_fwd\", \"pid\": "
    "1, \"tid\": 1, \"ts\": 105, \"dur\": 20, \"args\": {\"External id\": 1, \"Input Dims\": "
    "[[4, 16, 576], [100, 1, 1, 576]], \"Input type\": [\"c10::BFloat16\", "
    "\"c10::BFloat16\"]}}," MOE_LAUNCH(
        107, 21, 1000,
        "mla_a8w8_qh16_qseqlen1_gqaratio16") "{\"ph\": \"X\", \"cat\": \"python_function\", "
                                             "\"name\": \"triton/runtime/jit.py(574): run\","
                                             " \"pid\": 1, \"tid\": 1, \"ts\": 140, \"dur\": 10, "
                                             "\"args\": {}}," MOE_LAUNCH(
                                                 142, 22, 1020,
                                                 "_fwd_kernel_stage2_asm") "{\"ph\": \"M\", "
                                                                           "\"name\": "
                                                                           "\"process_name\", "
                                                                           "\"pid\": 1, \"args\": "
                                                                           "{\"name\": "
                                                                           "\"python\"}}]}";

void test_mla_pseudo_ops(void **state)
{
    (void)state;
    write_file("mla.json", mla_trace);
    char path[256];
    snprintf(path, sizeof(path), "%s/mla.json", tmpdir);
    struct mp_report *plain = NULL, *pseudo = NULL, *nopy = NULL;
    struct mp_report_opts o;
    struct mp_diag d;
    mp_report_opts_defaults(&o);
    o.inference = true;
    o.enable_pseudo_ops = true;
    /* python frames are not in the tree: nothing to wrap */
    assert_int_equal(mp_report_build(path, &o, &nopy, &d), 0);
    o.group_by_parent_module = true;
    assert_int_equal(mp_report_build(path, &o, &pseudo, &d), 0);
    o.enable_pseudo_ops = false;
    assert_int_equal(mp_report_build(path, &o, &plain, &d), 0);
    assert_int_equal(pseudo->events, plain->events + 1);
    assert_int_equal(nopy->events, plain->events);
    /* the reduce kernel had no cpu op above it: the pseudo op launches it */
    const char *ops = sheet_csv(pseudo, "ops_summary");
    assert_non_null(ops);
    assert_non_null(strstr(ops, "pseudo_mla_decode_fwd,"));
    assert_null(strstr(sheet_csv(plain, "ops_summary"), "pseudo_mla_decode_fwd"));
    const char *u = sheet_csv(pseudo, "unified_perf_summary");
    assert_non_null(u);
    assert_non_null(strstr(u, "pseudo_mla_decode_fwd,InferenceAttention,"));
    mp_report_free(plain);
    mp_report_free(pseudo);
    mp_report_free(nopy);
}
