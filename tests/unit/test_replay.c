/* Unit tests of the replay module's matching (src/replay/schema.c,
 * pyval.c): the report's Python-literal cells, and recorded arguments
 * against the schema table: optional arguments recorded empty, empty
 * optional lists, keyword arguments left at their default, out= overloads,
 * tensor lists, dtypes, index roles, and the reasons when nothing matches.
 * End to end on real traces: tests/integration/test_trace_replay.sh. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "replay/replay_int.h"

static void test_pyval(void **state)
{
    (void)state;
    struct rp_val v;
    assert_int_equal(rp_val_parse("((16, 2048), (), ('a', \"b'c\"), None, -1.5e-3)", "f", &v, NULL),
                     0);
    assert_int_equal(v.k, RV_SEQ);
    assert_int_equal(v.n, 5);
    assert_int_equal(v.items[0].n, 2);
    assert_int_equal(v.items[0].items[1].i, 2048);
    assert_int_equal(v.items[1].n, 0);
    assert_string_equal(v.items[2].items[1].s, "b'c");
    assert_int_equal(v.items[3].k, RV_NONE);
    assert_int_equal(v.items[4].k, RV_FLOAT);
    rp_val_fini(&v);
    assert_int_equal(rp_val_parse("", "f", &v, NULL), 0);
    assert_int_equal(v.k, RV_NONE);
    rp_val_fini(&v);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(rp_val_parse("((1, 2), (3", "Input Dims", &v, &d), MP_EPARSE);
    assert_string_equal(d.field, "Input Dims");
    assert_non_null(strstr(d.msg, "column"));
    rp_val_fini(&v);
    mp_diag_clear(&d);
    assert_int_equal(rp_val_parse("('a' 'b')", "Input type", &v, &d), MP_EPARSE);
    rp_val_fini(&v);
}

static int match(const char *op, const char *dims, const char *types, const char *strides,
                 const char *conc, struct rp_call *c, char *why)
{
    memset(c, 0, sizeof(*c));
    return rp_match(op, dims, types, strides, conc, c, why, 512, NULL);
}

static void test_match_basic(void **state)
{
    (void)state;
    struct rp_call c;
    char why[512];
    /* mul.Tensor vs mul.Scalar decided by the recorded type */
    assert_int_equal(match("aten::mul", "((8, 1), ())", "('float', 'Scalar')", "((1, 1), ())",
                           "('', '2')", &c, why),
                     0);
    assert_non_null(strstr(c.schema, "Scalar other"));
    assert_int_equal(c.args[1].k, RA_INT);
    assert_int_equal(c.args[1].i, 2);
    rp_call_fini(&c);
    assert_int_equal(match("aten::mul", "((8, 4), (8, 1))", "('c10::BFloat16', 'float')",
                           "((4, 1), (1, 1))", "('', '')", &c, why),
                     0);
    assert_int_equal(c.args[1].k, RA_TENSOR);
    assert_int_equal(c.args[1].t.strides[0], 1);
    rp_call_fini(&c);
    /* sum.dim_IntList: ScalarList, bool, optional dtype recorded empty */
    assert_int_equal(match("aten::sum", "((16, 2, 2048), (), (), ())",
                           "('float', 'ScalarList', 'Scalar', '')", "((4096, 2048, 1), (), (), ())",
                           "('', '[1]', 'False', '')", &c, why),
                     0);
    assert_int_equal(c.args[1].k, RA_INTS);
    assert_int_equal(c.args[1].n, 1);
    assert_int_equal(c.args[2].k, RA_BOOL);
    assert_int_equal(c.args[3].k, RA_NONE);
    assert_true(c.args[3].kwarg);
    rp_call_fini(&c);
    /* sort.stable: all keyword-only */
    assert_int_equal(match("aten::sort", "((32,), (), (), ())",
                           "('long int', 'Scalar', 'Scalar', 'Scalar')", "((1,), (), (), ())",
                           "('', 'False', '-1', 'False')", &c, why),
                     0);
    assert_true(c.args[1].kwarg && c.args[2].kwarg && c.args[3].kwarg);
    assert_int_equal(c.args[2].i, -1);
    rp_call_fini(&c);
    /* _to_copy: a dtype (ScalarType 15 = bfloat16) */
    assert_int_equal(match("aten::_to_copy", "((4, 4), (), (), (), (), (), ())",
                           "('float', 'Scalar', '', '', '', 'Scalar', '')",
                           "((4, 1), (), (), (), (), (), ())",
                           "('', '15', '', '', '', 'False', '')", &c, why),
                     0);
    assert_int_equal(c.args[1].k, RA_DTYPE);
    assert_string_equal(rp_scalar_type(c.args[1].i), "torch.bfloat16");
    rp_call_fini(&c);
}

static void test_match_special(void **state)
{
    (void)state;
    struct rp_call c;
    char why[512];
    /* gelu's string keyword recorded empty: left at its default */
    assert_int_equal(match("aten::gelu", "((4, 8), ())", "('c10::BFloat16', '')", "((8, 1), ())",
                           "('', '')", &c, why),
                     0);
    assert_int_equal(c.args[1].k, RA_NONE);
    rp_call_fini(&c);
    /* an out= overload (gather.out) */
    assert_int_equal(match("aten::gather", "((100, 8), (), (4, 8), (), (4, 8))",
                           "('c10::BFloat16', 'Scalar', 'long int', 'Scalar', 'c10::BFloat16')",
                           "((8, 1), (), (8, 1), (), (8, 1))", "('', '0', '', 'False', '')", &c,
                           why),
                     0);
    assert_string_equal(c.args[4].name, "out");
    assert_true(c.args[4].mutated && c.args[4].kwarg);
    assert_int_equal(c.args[2].role, RI_INDEX);
    assert_true(c.values_matter);
    rp_call_fini(&c);
    /* a tensor list with its shapes; the list's dtype is the op's first tensor's (none: float) */
    assert_int_equal(match("aten::cat", "(((2, 3), (2, 5)), ())", "('TensorList', 'Scalar')",
                           "(((3, 1), (5, 1)), ())", "('', '-1')", &c, why),
                     0);
    assert_int_equal(c.args[0].k, RA_TLIST);
    assert_int_equal(c.args[0].n, 2);
    assert_int_equal(c.args[0].tl[1].shape[1], 5);
    assert_string_equal(c.args[0].tl[0].dtype, "float");
    rp_call_fini(&c);
    /* in-place self is written */
    assert_int_equal(match("aten::masked_fill_", "((8, 8), (8, 1), ())",
                           "('c10::BFloat16', 'bool', 'Scalar')", "((8, 1), (1, 1), ())",
                           "('', '', '0.')", &c, why),
                     0);
    assert_true(c.args[0].mutated);
    assert_int_equal(c.args[2].k, RA_FLOAT);
    rp_call_fini(&c);
}

static void test_match_refused(void **state)
{
    (void)state;
    struct rp_call c;
    char why[512];
    /* aten::index's indices recorded without shapes */
    assert_int_equal(match("aten::index", "((8192, 2048), ())", "('float', '')", "((2048, 1), ())",
                           "('', '')", &c, why),
                     MP_ENOTFOUND);
    assert_non_null(strstr(why, "match no schema of aten::index"));
    /* an empty tensor list */
    assert_int_equal(match("aten::cat", "((), ())", "('TensorList', 'Scalar')", "((), ())",
                           "('', '0')", &c, why),
                     MP_ENOTFOUND);
    /* an op not in the table */
    assert_int_equal(
        match("aten::frobnicate", "((2,),)", "('float',)", "((1,),)", "('',)", &c, why),
        MP_ENOTFOUND);
    assert_non_null(strstr(why, "no schema for aten::frobnicate"));
    /* wrong arity */
    assert_int_equal(match("aten::mm", "((2, 2),)", "('float',)", "((2, 1),)", "('',)", &c, why),
                     MP_ENOTFOUND);
    /* no types at all (a trace without record_shapes) */
    assert_int_equal(match("aten::mm", "", "", "", "", &c, why), MP_ENOTFOUND);
    assert_non_null(strstr(why, "record_shapes"));
    /* an unknown dtype is not a tensor */
    assert_int_equal(match("aten::neg", "((2,),)", "('c10::Quirky',)", "((1,),)", "('',)", &c, why),
                     MP_ENOTFOUND);
}

/* values_from on the real H200 Mixtral rows: the trace records the shapes
 * of _grouped_mm's offs, never its values (histc + cumsum on the GPU), so
 * the offsets are magpie's default; values recorded in Concrete Inputs are
 * taken as they are; one group's offsets follow from the shapes. */
static void test_values_from(void **state)
{
    (void)state;
    struct rp_call c;
    char why[512];
    static const char *const rows[][2] = {
        {"((32, 2048), (8, 2048, 8192), (8,), (), ())",
         "((2048, 1), (16777216, 1, 2048), (1,), (), ())"},
        {"((8192, 4096), (8, 4096, 2048), (8,), (), ())",
         "((4096, 1), (8388608, 1, 4096), (1,), (), ())"},
    };
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(match("aten::_grouped_mm", rows[i][0],
                               "('c10::BFloat16', 'c10::BFloat16', 'int', '', '')", rows[i][1],
                               "('', '', '', '', '')", &c, why),
                         0);
        assert_int_equal(c.args[2].role, RI_OFFS);
        assert_int_equal(c.args[2].vfrom, RF_DEFAULT);
        assert_null(c.args[2].vals);
        assert_int_equal(rp_call_vfrom(&c), RF_DEFAULT);
        assert_int_equal(rp_offs_rows(&c, &c.args[2]), i ? 8192 : 32);
        rp_call_fini(&c);
    }
    /* the same row with the offsets recorded */
    assert_int_equal(match("aten::_grouped_mm", rows[0][0],
                           "('c10::BFloat16', 'c10::BFloat16', 'int', '', '')", rows[0][1],
                           "('', '', '[3, 9, 9, 12, 20, 25, 30, 32]', '', '')", &c, why),
                     0);
    assert_int_equal(c.args[2].vfrom, RF_TRACE);
    assert_int_equal(c.args[2].nvals, 8);
    assert_int_equal(c.args[2].vals[3], 12);
    assert_string_equal(rp_vfrom_name(rp_call_vfrom(&c)), "trace");
    rp_call_fini(&c);
    /* a list of the wrong length is not the tensor's values */
    assert_int_equal(match("aten::_grouped_mm", rows[0][0],
                           "('c10::BFloat16', 'c10::BFloat16', 'int', '', '')", rows[0][1],
                           "('', '', '[3, 9]', '', '')", &c, why),
                     0);
    assert_int_equal(c.args[2].vfrom, RF_DEFAULT);
    rp_call_fini(&c);
    /* one group: its end is the row count */
    assert_int_equal(match("aten::_grouped_mm", "((32, 2048), (1, 2048, 8192), (1,), (), ())",
                           "('c10::BFloat16', 'c10::BFloat16', 'int', '', '')",
                           "((2048, 1), (16777216, 1, 2048), (1,), (), ())", "('', '', '', '', '')",
                           &c, why),
                     0);
    assert_int_equal(c.args[2].vfrom, RF_DERIVED);
    assert_int_equal(c.args[2].vals[0], 32);
    assert_string_equal(rp_vfrom_name(rp_call_vfrom(&c)), "derived");
    rp_call_fini(&c);
    /* no tensor whose values matter: none */
    assert_int_equal(match("aten::mm", "((16, 2048), (2048, 512))",
                           "('c10::BFloat16', 'c10::BFloat16')", "((2048, 1), (1, 2048))",
                           "('', '')", &c, why),
                     0);
    assert_int_equal(rp_call_vfrom(&c), RF_NONE);
    assert_string_equal(rp_vfrom_name(RF_NONE), "");
    rp_call_fini(&c);
}

static void test_dtypes(void **state)
{
    (void)state;
    assert_string_equal(rp_torch_dtype("long int"), "torch.int64");
    assert_string_equal(rp_ir_dtype("long int"), "long");
    assert_string_equal(rp_torch_dtype("c10::Float8_e4m3fn"), "torch.float8_e4m3fn");
    assert_null(rp_ir_dtype("c10::Float8_e4m3fn"));
    assert_null(rp_torch_dtype("Scalar"));
    assert_string_equal(rp_scalar_type(6), "torch.float32");
    assert_string_equal(rp_scalar_type(24), "torch.float8_e4m3fn");
    assert_null(rp_scalar_type(12));
    assert_null(rp_scalar_type(-1));
}

/* A custom op's _ARGS (pygen.c): tensors as (shape, strides, dtype), numbers
 * written anew as Python literals (never the cell's own text), a ScalarType
 * code as its dtype, anything else (a None, a str, junk) as "none". */
static void test_custom_args(void **state)
{
    (void)state;
    static const char *const cells[4] = {
        "((8, 4), (), (), (), (), (), (), (), (), ())",
        "('c10::BFloat16', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'ScalarType', '', 'Scalar', "
        "'Scalar', 'Scalar')",
        "((1, 8), (), (), (), (), (), (), (), (), ())",
        "('', '1.0000000000000001e-05', '128', 'inf', 'True', '15', '', '0x1p3', '__import__', "
        "'99999999999999999999')"};
    static const char *const fields[4] = {"Input Dims", "Input type", "Input Strides",
                                          "Concrete Inputs"};
    struct rp_val v[4] = {{0}};
    for (int i = 0; i < 4; i++)
        assert_int_equal(rp_val_parse(cells[i], fields[i], &v[i], NULL), 0);
    char name[] = "_C::rms_norm", empty[] = "";
    struct mp_replay_op op = {.n = 3,
                              .rank = 3,
                              .name = name,
                              .dims = empty,
                              .types = empty,
                              .strides = empty,
                              .concrete = empty,
                              .trace_kernels = empty};
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(rp_py_custom(&op, &v[0], &v[1], &v[2], &v[3], &b), 0);
    const char *py = mp_buf_cstr(&b);
    assert_non_null(strstr(py, "_ARGS = [\n"
                               "    (\"tensor\", ((8, 4), (1, 8), torch.bfloat16)),\n"
                               "    (\"value\", 1e-05),\n"
                               "    (\"value\", 128),\n"
                               "    (\"value\", float('inf')),\n"
                               "    (\"value\", True),\n"
                               "    (\"value\", torch.bfloat16),\n"
                               "    (\"none\", None),\n"
                               "    (\"value\", 8.0),\n"
                               "    (\"none\", None),\n"
                               "    (\"value\", 1e+20),\n"
                               "]"));
    assert_non_null(strstr(py, "_PACKAGE = 'vllm._C'"));
    assert_non_null(strstr(py, "alias_info.is_write"));
    mp_buf_fini(&b);
    for (int i = 0; i < 4; i++)
        rp_val_fini(&v[i]);
}

/* One CPU op launching one kernel on stream 7 (i: its place; ts spaced 100 us). */
static void put_op(FILE *f, int i, const char *name, const char *dims, const char *types,
                   int kernel_us)
{
    long ts = 1000 + 100L * i, corr = 500 + i;
    if (name)
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, "
                "\"ts\": %ld, \"dur\": 20, \"args\": {\"External id\": %ld, \"Input Dims\": %s, "
                "\"Input type\": %s}},\n",
                name, ts, corr, dims, types);
    fprintf(f,
            "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
            "1, \"tid\": 1, \"ts\": %ld, \"dur\": 5, \"args\": {\"correlation\": %ld}},\n"
            "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %ld, \"pid\": 1, "
            "\"tid\": 1, \"ts\": %ld},\n"
            "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %ld, \"pid\": 0, "
            "\"tid\": 7, \"ts\": %ld, \"bp\": \"e\"},\n"
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7, "
            "\"ts\": %ld, \"dur\": %d, \"args\": {\"correlation\": %ld, \"stream\": 7, "
            "\"device\": 0}},\n",
            name ? ts + 5 : ts + 50, corr, corr, name ? ts + 5 : ts + 50, corr, ts + 30, i, ts + 30,
            kernel_us, corr);
}

/* The dirty-L2 estimate (traffic.c) on a hand-made stream, worked out by
 * hand: walking back from the add, sum reads 128 KiB, a kernel with no
 * cpu_op reads 1.5 MB/us x 10 us, mul_ writes its self (64 KiB), mm writes
 * 8 x 4096 bf16 (64 KiB) and reads 32 MiB + 64 KiB, cat writes and reads its
 * inputs (8,781,824 bytes). */
static void test_dirty_estimate(void **state)
{
    (void)state;
    char path[] = "/tmp/magpie_dirty_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
    put_op(f, 0, "aten::cat", "[[[8, 8, 535, 128], [8, 8, 1, 128]], []]",
           "[\"TensorList\", \"int\"]", 20);
    put_op(f, 1, "aten::mm", "[[8, 4096], [4096, 4096]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]",
           15);
    put_op(f, 2, "aten::mul_", "[[8, 1, 4096], []]", "[\"c10::BFloat16\", \"Scalar\"]", 2);
    put_op(f, 3, NULL, NULL, NULL, 10);
    put_op(f, 4, "aten::sum", "[[8, 4096]]", "[\"float\"]", 3);
    put_op(f, 5, "aten::add", "[[8, 4096], [8, 4096], []]", "[\"float\", \"float\", \"Scalar\"]",
           2);
    fputs("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": "
          "\"python\"}}\n]}\n",
          f);
    assert_int_equal(fclose(f), 0);

    struct mp_replay_opts o;
    mp_replay_opts_defaults(&o);
    o.trace = path;
    o.serial = true;
    struct mp_replay_result *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->ops = calloc(1, sizeof(*r->ops));
    assert_non_null(r->ops);
    r->n = 1;
    struct mp_replay_op *op = &r->ops[0];
    op->name = strdup("aten::add");
    op->dims = strdup("((8, 4096), (8, 4096), ())");
    op->types = strdup("('float', 'float', 'Scalar')");
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(rp_producers(&o, r, NULL, &d), 0);
    unlink(path);
    assert_int_equal(op->prev_calls, 1);
    assert_string_equal(op->prev_op, "aten::sum");
    assert_non_null(op->dirty);
    const double want[MP_REPLAY_NGRID] = {
        /* 2-8 MiB: within the sum's and the bare kernel's reads */
        0, 0, 0, 0,
        /* 16-40 MiB: mul_'s and mm's writes, the rest mm's reads */
        131072, 131072, 131072, 131072,
        /* 48 and 50 MiB: inside cat's write (traffic before it 48,882,112) */
        131072 + 50331648.0 - 48882112, 131072 + 52428800.0 - 48882112,
        /* 60 MiB: in cat's reads; 64 MiB and more: past the stream's start */
        8912896, 8912896, 8912896, 8912896, 8912896, 8912896};
    for (int k = 0; k < MP_REPLAY_NGRID; k++) {
        assert_int_equal(op->dirty[k].n, 1);
        assert_true(op->dirty[k].share[0] == 1.0);
        if (op->dirty[k].bytes[0] != want[k])
            fail_msg("L2 %g MiB: dirty %.0f, want %.0f", op->dirty[k].l2_mib, op->dirty[k].bytes[0],
                     want[k]);
    }
    mp_replay_result_free(r);
}

/* Per-call dirty bytes as levels: clusters split at jumps of more than an
 * eighth of the L2, the three most common kept, the rest folded into the
 * nearest, ascending. */
static void test_dirty_levels(void **state)
{
    (void)state;
    const double M = 1048576.0;
    double v[] = {17 * M, 0.5 * M, 0.6 * M, 17.2 * M, 48 * M, 0.55 * M, 17.1 * M, 30 * M, 0.5 * M};
    struct mp_replay_dirty out;
    assert_int_equal(rp_dirty_levels(v, 9, 50, &out), 0);
    assert_int_equal(out.n, 3);
    assert_true(fabs(out.bytes[0] - 0.525 * M) < 1 && out.bytes[1] == 17.1 * M);
    /* 30 and 48 MiB are one call each: the tie is broken by order; the other goes to its nearest */
    assert_true(out.bytes[2] == 30 * M || out.bytes[2] == 48 * M);
    assert_true(out.share[0] == 4.0 / 9 && out.share[1] == 3.0 / 9 && out.share[2] == 2.0 / 9);
    double one[] = {5 * M};
    assert_int_equal(rp_dirty_levels(one, 1, 50, &out), 0);
    assert_true(out.n == 1 && out.bytes[0] == 5 * M && out.share[0] == 1.0);
    assert_int_equal(rp_dirty_levels(one, 0, 50, &out), 0);
    assert_int_equal(out.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pyval),          cmocka_unit_test(test_match_basic),
        cmocka_unit_test(test_match_special),  cmocka_unit_test(test_match_refused),
        cmocka_unit_test(test_dtypes),         cmocka_unit_test(test_values_from),
        cmocka_unit_test(test_dirty_estimate), cmocka_unit_test(test_dirty_levels),
        cmocka_unit_test(test_custom_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
