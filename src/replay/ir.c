/* TraceLens's EventReplay IR (docs/replay.md): a JSON list with one
 * {"op_name", "replay_ir": {"list_pos_args", "list_kwargs"}, "count"} per
 * op, each argument {"arg_name", "arg_type", "value"}, a tensor's value
 * {"shape", "dtype", "strides", "init"}, as TraceLens's batched_replay.py
 * reads it. magpie adds a "magpie" object per entry (row, schema), which the
 * script ignores. Optional tensor keyword arguments left at None are not
 * written (the script would try to build a tensor from None; None is their
 * default). */
#include <stdio.h>
#include <string.h>

#include <magpie/fmt.h>

#include "replay_int.h"

static int ir_ints(struct mp_buf *b, const long long *v, size_t n)
{
    int rc = mp_buf_putc(b, '[');
    for (size_t i = 0; !rc && i < n; i++)
        rc = mp_buf_printf(b, "%s%lld", i ? ", " : "", v[i]);
    return rc ? rc : mp_buf_putc(b, ']');
}

/* True when two elements of t share memory (an expanded view, stride 0 on
 * a dimension longer than 1, or strides that interleave): TraceLens's
 * normal_() init refuses to write such a tensor. */
static bool overlapping(const struct rp_tensor *t)
{
    size_t idx[32], n = 0;
    for (size_t i = 0; i < t->nd && n < 32; i++)
        if (t->shape[i] > 1)
            idx[n++] = i;
    for (size_t i = 1; i < n; i++) /* by stride, ascending */
        for (size_t j = i; j > 0 && t->strides[idx[j]] < t->strides[idx[j - 1]]; j--) {
            size_t x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    long long span = 1;
    for (size_t i = 0; i < n; i++) {
        if (t->strides[idx[i]] < span)
            return true;
        span += t->strides[idx[i]] * (t->shape[idx[i]] - 1);
    }
    return false;
}

static int ir_value(struct mp_buf *b, const char *op, const struct rp_arg *a)
{
    switch (a->k) {
    case RA_TENSOR: {
        const char *dt = rp_ir_dtype(a->t.dtype);
        if (!dt) /* not one of TraceLens's names (mp_replay keeps such ops out of the IR) */
            dt = a->t.dtype;
        bool fl = strcmp(dt, "float") == 0 || strcmp(dt, "double") == 0 ||
                  strcmp(dt, "c10::Half") == 0 || strcmp(dt, "c10::BFloat16") == 0;
        /* written before being read: no values needed (TraceLens's rule for
         * copy_ and fill_); integer and bool tensors cannot take its normal init */
        bool dst = a->mutated &&
                   (strcmp(op, "aten::copy_") == 0 || strcmp(op, "aten::fill_") == 0 || a->kwarg);
        fl = fl && !overlapping(&a->t);
        int rc = mp_buf_puts(b, "{\"shape\": ");
        rc = rc ? rc : ir_ints(b, a->t.shape, a->t.nd);
        rc = rc ? rc : mp_buf_puts(b, ", \"dtype\": ");
        rc = rc ? rc : mp_json_str(b, dt, strlen(dt));
        rc = rc ? rc : mp_buf_puts(b, ", \"strides\": ");
        rc = rc ? rc : ir_ints(b, a->t.strides, a->t.nd);
        return rc ? rc : mp_buf_printf(b, ", \"init\": %s}", fl && !dst ? "\"normal\"" : "null");
    }
    case RA_NONE:
        return mp_buf_puts(b, "null");
    case RA_EMPTY:
        return mp_buf_puts(b, "[]");
    case RA_BOOL:
        return mp_buf_puts(b, a->b ? "true" : "false");
    case RA_INT:
    case RA_DTYPE:
        return mp_buf_printf(b, "%lld", a->i);
    case RA_FLOAT:
        return mp_json_double(b, a->f); /* Python float text: 0.0, 1e-05 */
    case RA_INTS:
        return ir_ints(b, a->ints, a->n);
    case RA_BOOLS: {
        int rc = mp_buf_putc(b, '[');
        for (size_t i = 0; !rc && i < a->n; i++)
            rc = mp_buf_printf(b, "%s%s", i ? ", " : "", a->bools[i] ? "true" : "false");
        return rc ? rc : mp_buf_putc(b, ']');
    }
    case RA_STR:
        return mp_json_str(b, a->text ? a->text : "", a->text ? strlen(a->text) : 0);
    default:
        return mp_buf_puts(b, "null");
    }
}

static int ir_args(struct mp_buf *b, const struct rp_call *c, bool kw)
{
    int rc = mp_buf_putc(b, '[');
    bool first = true;
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->kwarg != kw || (kw && a->k == RA_NONE))
            continue;
        rc = mp_buf_puts(b, first ? "\n        {\"arg_name\": " : ",\n        {\"arg_name\": ");
        first = false;
        rc = rc ? rc : mp_json_str(b, a->name, strlen(a->name));
        rc = rc ? rc : mp_buf_puts(b, ", \"arg_type\": ");
        rc = rc ? rc : mp_json_str(b, a->type, strlen(a->type));
        rc = rc ? rc : mp_buf_puts(b, ", \"value\": ");
        rc = rc ? rc : ir_value(b, c->op, a);
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    return rc ? rc : mp_buf_puts(b, first ? "]" : "\n      ]");
}

int rp_ir_entry(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "  {\"op_name\": ");
    rc = rc ? rc : mp_json_str(b, op->name, strlen(op->name));
    rc = rc ? rc : mp_buf_puts(b, ",\n    \"replay_ir\": {\"list_pos_args\": ");
    rc = rc ? rc : ir_args(b, c, false);
    rc = rc ? rc : mp_buf_puts(b, ",\n      \"list_kwargs\": ");
    rc = rc ? rc : ir_args(b, c, true);
    rc =
        rc ? rc
           : mp_buf_printf(
                 b,
                 "},\n    \"count\": %ld,\n    \"magpie\": {\"n\": %d, \"rank\": %ld, \"schema\": ",
                 op->calls, op->n, op->rank);
    rc = rc ? rc : mp_json_str(b, c->schema, strlen(c->schema));
    rc = rc ? rc : mp_buf_puts(b, ", \"ref\": ");
    char ref[32];
    snprintf(ref, sizeof(ref), "ref_%d.py", op->n);
    rc = rc ? rc : mp_json_str(b, ref, strlen(ref));
    return rc ? rc : mp_buf_puts(b, "}}");
}
