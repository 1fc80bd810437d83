/* TraceLens's CUDA/HIP-graph capture merge. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>
#include <magpie/trace_capture.h>
#include <magpie/trace_tree.h>

#include "area.h"
#include "helpers.h"

/* Graph-capture merge (capture.h) on a hand-made replay trace (one step,
 * one graph launch replaying a GEMM, an add and a memcpy) and its capture
 * trace (the ops and their launch calls between StreamBeginCapture and
 * StreamEndCapture, under a python frame that starts before the window). */
static const char cap_replay[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step[DECODE bs=%d]\",\"pid\":1,"
    "\"tid\":1,\"ts\":0,\"dur\":1000,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"graphs.py(1): replay\",\"pid\":1,"
    "\"tid\":1,\"ts\":10,\"dur\":500,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipGraphLaunch\",\"pid\":1,\"tid\":1,"
    "\"ts\":20,\"dur\":50,\"args\":{\"correlation\":77}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_k\",\"pid\":0,\"tid\":7,\"ts\":100,"
    "\"dur\":10,\"args\":{\"correlation\":77,\"stream\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"add_k\",\"pid\":0,\"tid\":7,\"ts\":120,"
    "\"dur\":5,\"args\":{\"correlation\":77,\"stream\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD\",\"pid\":0,\"tid\":7,"
    "\"ts\":130,\"dur\":2,\"args\":{\"correlation\":77,\"stream\":7}}\n"
    "]}\n";

static const char cap_capture[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipStreamBeginCapture\",\"pid\":1,"
    "\"tid\":1,\"ts\":100,\"dur\":2,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"runner.py(1): capture\",\"pid\":1,"
    "\"tid\":1,\"ts\":50,\"dur\":1000,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"nn.Module: Net_0\",\"pid\":1,"
    "\"tid\":1,\"ts\":110,\"dur\":100,\"args\":{}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":111,"
    "\"dur\":20,\"args\":{\"Input Dims\":[[2,8],[8,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":112,\"dur\":5,\"args\":{\"correlation\":5,\"kernel\":\"gemm_k\"}},\n"
    "%s"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":140,"
    "\"dur\":20,\"args\":{\"Input Dims\":[[2,4],[2,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":141,\"dur\":5,\"args\":{\"correlation\":6,\"kernel\":\"add_k\"}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":1,\"tid\":1,\"ts\":170,"
    "\"dur\":20,\"args\":{\"Input Dims\":[[2,4],[2,4]]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpyAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":171,\"dur\":5,\"args\":{\"correlation\":8}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipStreamEndCapture\",\"pid\":1,"
    "\"tid\":1,\"ts\":300,\"dur\":2,\"args\":{}}\n"
    "]}\n";

/* a launch inside aten::mm that the graph does not replay */
static const char cap_extra[] =
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":120,\"dur\":2,\"args\":{\"correlation\":9,\"kernel\":\"noop_k\"}},\n";

/* Writes the replay trace (step batch size bs) and a capture folder
 * (with execution_details.json unless details is NULL) under tmp/dir;
 * returns the replay path and fills folder. */
static char *write_capture_case(const char *dir, int bs, bool extra, const char *details,
                                char *folder, size_t flen)
{
    char rel[256], *text = malloc(8192);
    assert_non_null(text);
    int n = snprintf(text, 8192, cap_replay, bs);
    snprintf(rel, sizeof(rel), "%s/replay.json", dir);
    char *replay = write_tmp(rel, text, (size_t)n);
    n = snprintf(text, 8192, cap_capture, extra ? cap_extra : "");
    snprintf(rel, sizeof(rel), "%s/cap/c2.json", dir);
    free(write_tmp(rel, text, (size_t)n));
    if (details) {
        snprintf(rel, sizeof(rel), "%s/cap/execution_details.json", dir);
        free(write_tmp(rel, details, strlen(details)));
    }
    snprintf(folder, flen, "%s/%s/cap", tmp_root, dir);
    free(text);
    return replay;
}

static void load_tree(const char *path, struct mp_trace_store **s, struct mp_trace_tree **t)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_trace_store_opts so = {.keep_args = true};
    assert_int_equal(mp_trace_store_load(path, &so, s, &d), 0);
    struct mp_trace_tree_opts to = {.python_functions = true};
    assert_int_equal(mp_trace_tree_build(*s, &to, t, &d), 0);
}

static const char cap_details[] =
    "[{\"file\": \"c2.json\", \"batch_size\": 2, \"mode\": \"FULL\"}]";

void test_capture_merge(void **state)
{
    (void)state;
    char folder[512];
    char *replay = write_capture_case("cap_pos", 2, false, cap_details, folder, sizeof(folder));
    struct mp_trace_store *s = NULL;
    struct mp_trace_tree *t = NULL;
    load_tree(replay, &s, &t);
    assert_int_equal(t->n, 6);
    assert_int_equal(t->launcher[3], 2); /* before: the graph launch launches everything */
    struct mp_capture_opts co = {.folder = folder};
    struct mp_capture_stats st;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_int_equal(st.exec_roots, 1);
    assert_int_equal(st.graph_launches, 1);
    assert_int_equal(st.merged, 1);
    assert_int_equal(st.kernels_linked, 3);
    assert_false(st.details_generated);
    assert_false(st.failed);
    /* CaptureRoot, Net_0, mm, launch, add, launch, copy_, memcpy call */
    assert_int_equal(st.events_added, 8);
    assert_int_equal(t->n, 14);
    assert_int_equal(s->n, 14);
    assert_string_equal(mp_trace_tree_name(t, 6), "CaptureRoot");
    assert_int_equal(t->parent[6], 2);
    assert_int_equal(t->child_off[3] - t->child_off[2], 1); /* launch -> [CaptureRoot] */
    assert_int_equal(t->child[t->child_off[2]], 6);
    assert_string_equal(mp_trace_tree_name(t, 7), "nn.Module: Net_0");
    assert_int_equal(t->parent[7], 6);
    assert_string_equal(mp_trace_tree_name(t, 8), "aten::mm");
    assert_int_equal(t->parent[8], 7);
    /* every copy takes the graph launch's ts and dur */
    for (int i = 6; i < 14; i++) {
        assert_true(s->ts[i] == 20.0);
        assert_true(s->dur[i] == 50.0);
    }
    /* replayed events hang under their captured launch calls */
    assert_int_equal(t->parent[3], 9);
    assert_int_equal(t->launcher[3], 8);
    assert_int_equal(t->parent[4], 11);
    assert_string_equal(mp_trace_tree_name(t, t->launcher[4]), "aten::add");
    assert_int_equal(t->parent[5], 13);
    assert_string_equal(mp_trace_tree_name(t, t->launcher[5]), "aten::copy_");
    assert_int_equal(s->correlation[3], 5);
    /* the outermost captured cpu ops become cpu roots */
    assert_true(t->cpu_root[8] && t->cpu_root[10] && t->cpu_root[12]);
    assert_false(t->cpu_root[7]);
    assert_int_equal(t->n_gpu, 3);
    assert_int_equal(t->n_gpu_linked, 3);
    int32_t *buf = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(mp_trace_tree_gpu_events(t, 1, &buf, &n, &cap), 3);
    free(buf);
    assert_non_null(s->args[8]);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
}

void test_capture_merge_variants(void **state)
{
    (void)state;
    char folder[512];
    struct mp_trace_store *s = NULL;
    struct mp_trace_tree *t = NULL;
    struct mp_capture_stats st;
    struct mp_diag d;
    struct mp_capture_opts co = {.folder = folder};
    /* an extra captured launch: the greedy scan skips it */
    char *replay = write_capture_case("cap_greedy", 2, true, cap_details, folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_int_equal(st.merged, 1);
    assert_int_equal(st.events_added, 9);
    assert_string_equal(mp_trace_tree_name(t, t->launcher[4]), "aten::add");
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
    /* no execution_details.json: batch size 2 (most common first dim) and
     * FULL (one capture) are inferred */
    replay = write_capture_case("cap_infer", 2, false, NULL, folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_true(st.details_generated);
    assert_int_equal(st.merged, 1);
    assert_int_equal(t->n, 14);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
    /* a step larger than every captured batch size: nothing merged */
    replay = write_capture_case("cap_big", 64, false, cap_details, folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), 0);
    assert_int_equal(st.merged, 0);
    assert_int_equal(t->n, 6);
    assert_int_equal(s->n, 6);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
    /* an index that is not a list of objects is an input error */
    replay = write_capture_case("cap_bad", 2, false, "{\"file\": 1}", folder, sizeof(folder));
    load_tree(replay, &s, &t);
    mp_diag_clear(&d);
    assert_int_equal(mp_capture_merge(s, t, &co, &st, &d), MP_EPARSE);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(replay);
}
