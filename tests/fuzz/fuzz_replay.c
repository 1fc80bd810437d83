/* libFuzzer target for the replay module's reading of an op's recorded
 * arguments (src/replay/pyval.c, schema.c) and the files written from them
 * (pygen.c, ir.c).
 *
 * The input is a trace event's args object: it is wrapped as the args of
 * one event and read with the trace parser, its Input Dims / Input type /
 * Input Strides / Concrete Inputs rendered by the report's own converter
 * (tl_args_pyrepr, as in unified_perf_summary), and those cells matched
 * against several ops' schemas. A match must give a reference and an IR
 * entry (0, or MP_ENOMEM); anything else is MP_ENOTFOUND or a parse error
 * of a cell (an args value the report renders as something other than a
 * Python literal of tuples, numbers and strings). The parsed Dims/type
 * cells also go through the dirty-L2 estimate's byte count (traffic.c), and
 * all four through a custom op's reference (rp_py_custom). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>

#include "fuzz_common.h"
#include "replay/replay_int.h"
#include "tracelens/tracelens_int.h"

static volatile unsigned g_touch;

/* op: row 1 of the ranking, named name, with the four recorded cells. */
static void fuzz_op(struct mp_replay_op *op, const char *name, char *cells[4])
{
    memset(op, 0, sizeof(*op));
    op->n = 1;
    op->rank = 1;
    op->name = (char *)name;
    op->dims = cells[0];
    op->types = cells[1];
    op->strides = cells[2];
    op->concrete = cells[3];
    op->trace_kernels = (char *)"k";
}

/* A custom op's ref (pygen.c, rp_py_custom) from the same cells: written,
 * and every _ARGS entry one of its three forms, a value only a literal magpie
 * wrote (never the cell's own text). */
static void custom_cells(char *cells[4])
{
    struct rp_val v[4] = {{0}};
    static const char *const f[] = {"Input Dims", "Input type", "Input Strides", "Concrete Inputs"};
    bool ok = true;
    for (int k = 0; k < 4; k++)
        ok = ok && rp_val_parse(cells[k], f[k], &v[k], NULL) == 0;
    if (ok) {
        struct mp_replay_op op;
        fuzz_op(&op, "_C::fuzz_op", cells);
        struct mp_buf b;
        mp_buf_init(&b, 0);
        int rc = rp_py_custom(&op, &v[0], &v[1], &v[2], &v[3], &b);
        CHECK(rc == 0 || rc == MP_ENOMEM);
        const char *a = rc ? NULL : strstr(mp_buf_cstr(&b), "\n_ARGS = [\n");
        CHECK(rc || a);
        static const char val[] = "    (\"value\", ", ten[] = "    (\"tensor\", ((",
                          none[] = "    (\"none\", None),\n";
        for (const char *l = a ? a + strlen("\n_ARGS = [\n") : NULL; l && strncmp(l, "]\n", 2);) {
            const char *e = strchr(l, '\n');
            CHECK(e);
            if (strncmp(l, val, strlen(val)) == 0) {
                for (const char *c = l + strlen(val); c < e - 2; c++) /* up to "),", */
                    CHECK(strchr("0123456789abcdefghijklmnopqrstuvwxyzTF._+-()'", *c));
            } else {
                CHECK(strncmp(l, ten, strlen(ten)) == 0 || strncmp(l, none, strlen(none)) == 0);
            }
            l = e + 1;
        }
        g_touch += fuzz_touch(b.data, b.len);
        mp_buf_fini(&b);
    }
    for (int k = 0; k < 4; k++)
        rp_val_fini(&v[k]);
}

static void replay_cells(char *cells[4])
{
    custom_cells(cells);
    static const char *const ops[] = {"aten::mm",           "aten::add",         "aten::cat",
                                      "aten::index_select", "aten::_grouped_mm", "aten::sum",
                                      "aten::copy_",        "aten::gather",      "aten::_to_copy"};
    /* the dirty-L2 estimate's bytes (traffic.c): finite, >= 0, capped */
    struct rp_val dims = {0}, types = {0};
    if (rp_val_parse(cells[0], "Input Dims", &dims, NULL) == 0 &&
        rp_val_parse(cells[1], "Input type", &types, NULL) == 0) {
        static const char *const more[] = {"aten::addmm",
                                           "aten::linear",
                                           "aten::baddbmm",
                                           "aten::mul_",
                                           "aten::_scaled_dot_product_flash_attention",
                                           "aten::stack",
                                           "aten::_scaled_mm"};
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) + sizeof(more) / sizeof(more[0]); i++) {
            double rd = -1, wr = -1;
            rp_op_bytes(i < sizeof(ops) / sizeof(ops[0]) ? ops[i]
                                                         : more[i - sizeof(ops) / sizeof(ops[0])],
                        &dims, &types, &rd, &wr);
            CHECK(isfinite(rd) && rd >= 0 && rd <= 1e15 && isfinite(wr) && wr >= 0 && wr <= 1e15);
        }
    }
    rp_val_fini(&dims);
    rp_val_fini(&types);
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        struct rp_call c;
        char why[768];
        memset(&c, 0, sizeof(c));
        int rc =
            rp_match(ops[i], cells[0], cells[1], cells[2], cells[3], &c, why, sizeof(why), NULL);
        CHECK(rc == 0 || rc == MP_ENOTFOUND || rc == MP_EPARSE || rc == MP_ENOMEM);
        if (rc == 0) {
            struct mp_replay_op op;
            fuzz_op(&op, ops[i], cells);
            struct mp_buf b;
            mp_buf_init(&b, 0);
            int r2 = rp_py_ref(&op, &c, &b);
            CHECK(r2 == 0 || r2 == MP_ENOMEM);
            g_touch += fuzz_touch(b.data, b.len);
            mp_buf_reset(&b);
            r2 = rp_ir_entry(&op, &c, &b);
            CHECK(r2 == 0 || r2 == MP_ENOMEM);
            g_touch += fuzz_touch(b.data, b.len);
            /* the same cells as the op before another op (prev_<n>.py) */
            op.prev_op = (char *)ops[i];
            op.prev_dims = cells[0];
            op.prev_types = cells[1];
            op.prev_strides = cells[2];
            op.prev_concrete = cells[3];
            op.prev_share = 0.5;
            op.prev_gap_us = 12.5;
            mp_buf_reset(&b);
            r2 = rp_py_prev(&op, &c, &b);
            CHECK(r2 == 0 || r2 == MP_ENOMEM);
            g_touch += fuzz_touch(b.data, b.len);
            mp_buf_fini(&b);
        }
        rp_call_fini(&c);
    }
}

static int on_event(const struct mp_trace_event *ev, void *user)
{
    (void)user;
    if (!(ev->flags & MP_EV_ARGS))
        return 0;
    static const char *const keys[] = {"Input Dims", "Input type", "Input Strides",
                                       "Concrete Inputs"};
    char *cells[4] = {0};
    for (int k = 0; k < 4; k++) {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        bool present = true;
        CHECK(tl_args_pyrepr(&b, ev->args.p, ev->args.n, keys[k], &present) == 0);
        cells[k] = mp_strdup(mp_buf_cstr(&b));
        CHECK(cells[k] != NULL);
        mp_buf_fini(&b);
    }
    replay_cells(cells);
    for (int k = 0; k < 4; k++)
        free(cells[k]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char pre[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"op\",\"args\":";
    static const char post[] = "}]}";
    struct mp_buf doc;
    mp_buf_init(&doc, 0);
    CHECK(mp_buf_append(&doc, pre, sizeof(pre) - 1) == 0);
    CHECK(mp_buf_append(&doc, data, size) == 0);
    CHECK(mp_buf_append(&doc, post, sizeof(post) - 1) == 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_io_reader *r = NULL;
    CHECK(mp_io_open_mem(doc.data, doc.len, "fuzz", &r, &d) == 0);
    struct mp_trace_parse_opts o = {0};
    o.on_event = on_event;
    o.chunk_bytes = (size_t)1 << 13;
    o.max_event_bytes = 1 << 20;
    struct mp_trace_parse_stats st;
    (void)mp_trace_parse(r, &o, &st, &d);
    mp_io_close(r);
    mp_buf_fini(&doc);
    return 0;
}
