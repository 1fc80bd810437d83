/* The *_kl_overlap sheets (--include_overlap_info). */
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

/* Four ops, one kernel each: k1 (stream 1, 1000-1010) and k2 (stream 2,
 * 1005-1015) overlap by 5 us; k3 (stream 1, inside k1) shares k1's stream;
 * k4 (stream 3) touches k2 for 0.5 us only (TraceLens's 1 us floor). */
#define OV_OP(name, ts, corr, gts, kname, stream, kdur)                                            \
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 1, \"tid\": 1, "        \
    "\"ts\": " #ts ", \"dur\": 10, \"args\": {\"External id\": " #corr ", \"Input Dims\": [[4]], " \
    "\"Input type\": [\"float\"], \"Concrete Inputs\": [\"\"]}},"                                  \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "      \
    "\"tid\": 1, \"ts\": " #ts ".5, \"dur\": 2, \"args\": {\"correlation\": " #corr "}},"          \
    "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 1, "       \
    "\"tid\": 1, \"ts\": " #ts ".5},"                                                              \
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " #corr ", \"pid\": 0, "       \
    "\"tid\": " #stream ", \"ts\": " #gts ", \"bp\": \"e\"},"                                      \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" kname "\", \"pid\": 0, \"tid\": " #stream  \
    ", \"ts\": " #gts ", \"dur\": " #kdur ", \"args\": {\"correlation\": " #corr                   \
    ", \"stream\": " #stream "}},"
static const char *const overlap_trace =
    "{\"traceEvents\": [" OV_OP("op_a", 100, 11, 1000, "k1", 1, 10)
        OV_OP("op_b", 200, 12, 1005, "k2", 2, 10) OV_OP("op_c", 300, 13, 1002, "k3", 1, 2) OV_OP(
            "op_d", 400, 14, 1014.5, "k4", 3, 5) "{\"ph\": \"M\", \"name\": \"process_name\", "
                                                 "\"pid\": 1, \"args\": {\"name\": \"python\"}}]}";

void test_overlap_info(void **state)
{
    (void)state;
    write_file("overlap.json", overlap_trace);
    char path[256];
    snprintf(path, sizeof(path), "%s/overlap.json", tmpdir);
    struct mp_report *r = NULL;
    struct mp_report_opts o;
    struct mp_diag d;
    mp_report_opts_defaults(&o);
    assert_int_equal(mp_report_build(path, &o, &r, &d), 0);
    assert_null(sheet_csv(r, "ops_unique_args_kl_overlap"));
    mp_report_free(r);
    o.include_overlap_info = true;
    assert_int_equal(mp_report_build(path, &o, &r, &d), 0);
    const char *u = sheet_csv(r, "ops_unique_args_kl_overlap");
    assert_non_null(u);
    assert_non_null(strstr(u, "name,overlapping_kernel_names,op category,"));
    /* op_a sees k2 for half of its kernel time, op_b k1; op_c and op_d none */
    assert_non_null(strstr(u, "op_a,['k2'],"));
    assert_non_null(strstr(u, "op_b,['k1'],"));
    assert_non_null(strstr(u, "op_c,,"));
    assert_non_null(strstr(u, "op_d,,"));
    assert_non_null(strstr(u, "[{'name': 'k2', 'stream': 2, 'overlap_pct': 0.5, 'count': 1, "
                              "'total_duration_us': 10.0,"));
    assert_non_null(strstr(u, "\"[{'name': 'k2', 'stream': 2, 'mean_duration_us': 10.0}]\","
                              "0.5,0.5,,0.5,0.5,"));
    assert_non_null(sheet_csv(r, "unified_perf_summary_kl_overlap"));
    mp_report_free(r);
}
