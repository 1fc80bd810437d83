/* TraceLens's tree: forward/backward links by sequence number. */
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

/* Forward/backward linking and recompute marking on a hand-made autograd
 * trace: forward ops on tid 1 (an outer op and the leaf that shares its
 * sequence number), the backward node on tid 2, a python frame of
 * torch.utils.checkpoint's recompute_fn wrapping a recomputed op. */
static const char fwdbwd_trace[] =
    "{\"traceEvents\":[\n"
    /* 0: outer forward op, seq 7 */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,"
    "\"dur\":50,\"args\":{\"Sequence number\":7}},\n"
    /* 1: leaf forward op, seq 7, later ts: the forward side of the pair */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":20,"
    "\"dur\":10,\"args\":{\"Sequence number\":7}},\n"
    /* 2: backward node on the autograd thread */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: "
    "AddmmBackward0\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":30,"
    "\"args\":{\"Sequence number\":7}},\n"
    /* 3: same-thread member of seq 7 after the node: never the forward */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"AddmmBackward0\",\"pid\":1,\"tid\":2,"
    "\"ts\":101,\"dur\":20,\"args\":{\"Sequence number\":7}},\n"
    /* 4: seq 9 has no backward node: no link */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":70,"
    "\"dur\":5,\"args\":{\"Sequence number\":9}},\n"
    /* 5: recompute frame and 6: an op inside it */
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"torch/utils/checkpoint.py(1): "
    "recompute_fn\",\"pid\":1,\"tid\":2,\"ts\":140,\"dur\":20,\"args\":{\"Python id\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":2,\"ts\":145,"
    "\"dur\":5,\"args\":{}}\n"
    "]}\n";

void test_fwd_bwd_link(void **state)
{
    (void)state;
    char *path = write_tmp("tree/fwdbwd.json", fwdbwd_trace, sizeof(fwdbwd_trace) - 1);
    struct mp_trace_store *s = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_trace_store_opts o = {.keep_args = true};
    assert_int_equal(mp_trace_store_load(path, &o, &s, &d), 0);
    struct mp_trace_tree_opts to = {.python_functions = true};
    struct mp_trace_tree *t = NULL;
    assert_int_equal(mp_trace_tree_build(s, &to, &t, &d), 0);
    assert_int_equal(t->n_fwd_bwd, 1);
    assert_int_equal(t->bwd_of[1], 2);
    assert_int_equal(t->fwd_of[2], 1);
    assert_int_equal(t->bwd_of[0], -1);
    assert_int_equal(t->bwd_of[3], -1);
    assert_int_equal(t->bwd_of[4], -1);
    /* the outer op reaches the backward node through its child */
    int32_t *buf = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(mp_trace_tree_subtree_bwd(t, 0, &buf, &n, &cap), 1);
    assert_int_equal(buf[0], 2);
    free(buf);
    assert_null(t->recompute);
    assert_int_equal(mp_trace_tree_mark_recompute(t), 0);
    assert_int_equal(t->n_recompute_regions, 1);
    assert_int_equal(t->recompute[5], 1);
    assert_int_equal(t->recompute[6], 1);
    assert_int_equal(t->recompute[4], 0);
    assert_int_equal(t->recompute[2], 0);
    mp_trace_tree_free(t);
    mp_trace_store_free(s);
    free(path);
}
