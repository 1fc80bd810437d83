/* The Python files of one replayed op: ref_<n>.py (KernelBench form: Model,
 * get_inputs, get_init_inputs, as `magpie analyze --type pytorch
 * --reference` takes it), cand_<n>.py (a candidate that starts as the op
 * itself) and compare_<n>.yaml (the op as baseline). The reference calls
 * the traced ATen op through torch.ops with the recorded arguments; its
 * tensors have the recorded shapes, strides and dtypes (as_strided over
 * exactly the storage they span), seeded by the caller. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>

#include "replay_int.h"

/* Python's repr of s (single quotes). */
static int py_str(struct mp_buf *b, const char *s)
{
    int rc = mp_buf_putc(b, '\'');
    for (const char *p = s; !rc && *p; p++) {
        if (*p == '\\' || *p == '\'')
            rc = mp_buf_putc(b, '\\');
        if (!rc && (unsigned char)*p < 0x20)
            rc = mp_buf_printf(b, "\\x%02x", (unsigned char)*p);
        else if (!rc)
            rc = mp_buf_putc(b, *p);
    }
    return rc ? rc : mp_buf_putc(b, '\'');
}

/* A comment line's worth of text: no newlines. */
static int py_comment_text(struct mp_buf *b, const char *s, size_t max)
{
    int rc = 0;
    size_t n = 0;
    for (const char *p = s; !rc && *p && n < max; p++, n++)
        rc = mp_buf_putc(b, (*p == '\n' || *p == '\r') ? ' ' : *p);
    if (!rc && strlen(s) > max)
        rc = mp_buf_puts(b, "...");
    return rc;
}

static int py_tuple(struct mp_buf *b, const long long *v, size_t n)
{
    int rc = mp_buf_putc(b, '(');
    for (size_t i = 0; !rc && i < n; i++)
        rc = mp_buf_printf(b, "%s%lld", i ? ", " : "", v[i]);
    if (!rc && n == 1)
        rc = mp_buf_putc(b, ',');
    return rc ? rc : mp_buf_putc(b, ')');
}

static long long idx_high(const struct rp_call *c, const struct rp_arg *a)
{
    if (a->of < 0 || (size_t)a->of >= c->n || c->args[a->of].k != RA_TENSOR)
        return 1;
    const struct rp_tensor *t = &c->args[a->of].t;
    long long dim = a->dim;
    if (a->dim_arg >= 0 && c->args[a->dim_arg].k == RA_INT)
        dim = c->args[a->dim_arg].i;
    if (t->nd == 0)
        return 1;
    if (dim < 0)
        dim += (long long)t->nd;
    if (dim < 0 || dim >= (long long)t->nd)
        return 1;
    return t->shape[dim] > 0 ? t->shape[dim] : 1;
}

/* _tensor(shape, strides, dtype[, kind, high][, values=[...]]) */
static int py_tensor_v(struct mp_buf *b, const struct rp_tensor *t, const char *kind,
                       long long high, const long long *vals, size_t nvals)
{
    const char *dt = rp_torch_dtype(t->dtype);
    int rc = mp_buf_puts(b, "_tensor(");
    rc = rc ? rc : py_tuple(b, t->shape, t->nd);
    rc = rc ? rc : mp_buf_puts(b, ", ");
    rc = rc ? rc : py_tuple(b, t->strides, t->nd);
    rc = rc ? rc : mp_buf_printf(b, ", %s", dt ? dt : "torch.float32");
    if (!rc && kind)
        rc = mp_buf_printf(b, ", %s, %lld", kind, high);
    if (!rc && vals) {
        rc = mp_buf_puts(b, ", values=[");
        for (size_t i = 0; !rc && i < nvals; i++)
            rc = mp_buf_printf(b, "%s%lld", i ? ", " : "", vals[i]);
        rc = rc ? rc : mp_buf_putc(b, ']');
    }
    return rc ? rc : mp_buf_putc(b, ')');
}

static int py_tensor(struct mp_buf *b, const struct rp_tensor *t, const char *kind, long long high)
{
    return py_tensor_v(b, t, kind, high, NULL, 0);
}

static int py_arg_tensor(struct mp_buf *b, const struct rp_call *c, const struct rp_arg *a)
{
    if (a->role == RI_INDEX)
        return py_tensor_v(b, &a->t, "'index'", idx_high(c, a), a->vals, a->nvals);
    if (a->role == RI_OFFS)
        return py_tensor_v(b, &a->t, "'offsets'", rp_offs_rows(c, a), a->vals, a->nvals);
    return py_tensor_v(b, &a->t, NULL, 0, a->vals, a->nvals);
}

static const char *mem_format(long long v)
{
    static const char *const f[] = {"torch.contiguous_format", "torch.preserve_format",
                                    "torch.channels_last", "torch.channels_last_3d"};
    return v >= 0 && v < 4 ? f[v] : "torch.preserve_format";
}

/* A non-tensor argument as a Python literal. */
static int py_const(struct mp_buf *b, const struct rp_arg *a)
{
    switch (a->k) {
    case RA_NONE:
        return mp_buf_puts(b, "None");
    case RA_EMPTY:
        return mp_buf_puts(b, "[]");
    case RA_BOOL:
        return mp_buf_puts(b, a->b ? "True" : "False");
    case RA_INT:
        if (strncmp(a->type, "MemoryFormat", 12) == 0)
            return mp_buf_puts(b, mem_format(a->i));
        if (strncmp(a->type, "Layout", 6) == 0)
            return mp_buf_puts(b, "torch.strided");
        return mp_buf_printf(b, "%lld", a->i);
    case RA_FLOAT: {
        char t[40];
        mp_fmt_pyfloat(a->f, t, sizeof(t));
        if (strcmp(t, "inf") == 0 || strcmp(t, "-inf") == 0 || strcmp(t, "nan") == 0)
            return mp_buf_printf(b, "float('%s')", t);
        return mp_buf_puts(b, t);
    }
    case RA_INTS: {
        int rc = mp_buf_putc(b, '[');
        for (size_t i = 0; !rc && i < a->n; i++)
            rc = mp_buf_printf(b, "%s%lld", i ? ", " : "", a->ints[i]);
        return rc ? rc : mp_buf_putc(b, ']');
    }
    case RA_BOOLS: {
        int rc = mp_buf_putc(b, '[');
        for (size_t i = 0; !rc && i < a->n; i++)
            rc = mp_buf_printf(b, "%s%s", i ? ", " : "", a->bools[i] ? "True" : "False");
        return rc ? rc : mp_buf_putc(b, ']');
    }
    case RA_DTYPE: {
        const char *dt = rp_scalar_type(a->i);
        return mp_buf_puts(b, dt ? dt : "None");
    }
    case RA_STR:
        return py_str(b, a->text ? a->text : "");
    default:
        return mp_buf_puts(b, "None");
    }
}

static const char helpers[] =
    "DEVICE = os.environ.get(\"MAGPIE_REPLAY_DEVICE\") or (\"cuda\" if torch.cuda.is_available() "
    "else \"cpu\")\n"
    "\n"
    "\n"
    "def _tensor(shape, strides, dtype, kind=None, high=1, values=None):\n"
    "    \"\"\"A tensor with the recorded shape, strides and dtype: as_strided over exactly\n"
    "    the storage they span, values from the global (caller-seeded) generator.\n"
    "    values: the recorded (or derived) values, row-major over shape.\n"
    "    kind 'index': values in [0, high); 'offsets': group ends over high rows,\n"
    "    each row routed to a uniformly random group by a fixed CPU generator (the\n"
    "    same ends on every device; MAGPIE_REPLAY_OFFS=even splits the rows evenly,\n"
    "    the best case of tile alignment).\"\"\"\n"
    "    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0\n"
    "    if values is not None:\n"
    "        base = torch.zeros(span, dtype=dtype, device=DEVICE)\n"
    "        base.as_strided(shape, strides).copy_(torch.tensor(values, "
    "dtype=dtype).reshape(shape))\n"
    "        return base.as_strided(shape, strides)\n"
    "    if kind == \"offsets\":\n"
    "        g = shape[0] if shape else 1\n"
    "        if os.environ.get(\"MAGPIE_REPLAY_OFFS\") == \"even\":\n"
    "            ends = [(i + 1) * high // g for i in range(g)]\n"
    "        else:\n"
    "            gen = torch.Generator().manual_seed(0)\n"
    "            rows = torch.randint(0, g, (high,), generator=gen)\n"
    "            ends = torch.cumsum(torch.bincount(rows, minlength=g), 0).tolist()\n"
    "        base = torch.tensor(ends + [high] * (span - g), dtype=dtype, device=DEVICE)\n"
    "    elif dtype.is_floating_point or dtype.is_complex:\n"
    "        base = torch.randn(span, device=DEVICE).to(dtype)\n"
    "    elif dtype == torch.bool:\n"
    "        base = torch.rand(span, device=DEVICE) < 0.5\n"
    "    elif kind == \"index\":\n"
    "        base = torch.randint(0, max(high, 1), (span,), device=DEVICE).to(dtype)\n"
    "    else:\n"
    "        base = torch.randint(1, 8, (span,), device=DEVICE).to(dtype)\n"
    "    return base.as_strided(shape, strides)\n"
    "\n"
    "\n"
    "def _first(out):\n"
    "    return out[0] if isinstance(out, (tuple, list)) else out\n";

/* The docstring lines of a call's recorded argument cells and its schema
 * (none when schema is NULL or ""). */
static int py_cells(struct mp_buf *b, const char *dims, const char *types, const char *strides,
                    const char *concrete, const char *schema)
{
    static const char *const lab[] = {"Input Dims", "Input type", "Input Strides",
                                      "Concrete Inputs"};
    const char *val[] = {dims, types, strides, concrete};
    int rc = 0;
    for (int i = 0; !rc && i < 4; i++) {
        rc = mp_buf_printf(b, "%s: ", lab[i]);
        rc = rc ? rc : py_comment_text(b, val[i], 400);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    if (!rc && schema && *schema) {
        rc = mp_buf_puts(b, "Schema: ");
        rc = rc ? rc : py_comment_text(b, schema, 600);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    return rc;
}

/* End of a ref's docstring and its imports. */
static const char py_imports[] = "\"\"\"\nimport os\n\nimport torch\nimport torch.nn as nn\n\n";

static int py_header(struct mp_buf *b, const struct mp_replay_op *op, const char *schema)
{
    int rc = mp_buf_printf(b, "\"\"\"magpie trace replay, op %d: ", op->n);
    rc = rc ? rc : py_comment_text(b, op->name, 200);
    rc = rc ? rc
            : mp_buf_printf(b, " (row %ld of the trace's ranking by kernel time).\n\n", op->rank);
    rc = rc ? rc : py_cells(b, op->dims, op->types, op->strides, op->concrete, schema);
    rc = rc ? rc
            : mp_buf_printf(b,
                            "Trace: %ld calls, kernel time per call mean %.3f us, median %.3f us\n"
                            "Trace kernels: ",
                            op->calls, op->trace_mean_us, op->trace_median_us);
    rc = rc ? rc : py_comment_text(b, op->trace_kernels, 600);
    rc = rc ? rc
            : mp_buf_printf(b,
                            "\n\nKernelBench form (Model, get_inputs, get_init_inputs):\n"
                            "    magpie analyze --type pytorch --reference ref_%d.py cand_%d.py\n"
                            "    magpie compare -k compare_%d.yaml      (both from this "
                            "directory)\n"
                            "Inputs come from the global generator (the runner seeds it; "
                            "`python3 ref_%d.py`\n"
                            "seeds 0), on CUDA when torch sees one, else on the CPU "
                            "(MAGPIE_REPLAY_DEVICE\nchooses).\n",
                            op->n, op->n, op->n, op->n);
    if (!rc && op->values_from[0])
        rc = mp_buf_printf(b,
                           "values_from: %s (the values of the tensors whose values matter: "
                           "recorded in the trace, derived from what it recorded, or magpie's "
                           "default)\n",
                           op->values_from);
    if (!rc && op->note && *op->note) {
        rc = mp_buf_puts(b, "Note: ");
        rc = rc ? rc : py_comment_text(b, op->note, 600);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    return rc ? rc : mp_buf_puts(b, py_imports);
}

static int py_main(struct mp_buf *b)
{
    return mp_buf_puts(b, "\n\nif __name__ == \"__main__\":\n"
                          "    torch.manual_seed(0)\n"
                          "    model = Model(*get_init_inputs())\n"
                          "    with torch.no_grad():\n"
                          "        out = model(*get_inputs())\n"
                          "    print(\"ok\", DEVICE, tuple(out.shape) if hasattr(out, \"shape\") "
                          "else type(out).__name__)\n");
}

/* forward's parameter name of argument i (tensor list element j). */
static int param_name(struct mp_buf *b, const struct rp_arg *a, size_t j, bool list)
{
    const char *n = strcmp(a->name, "self") == 0 ? "self_" : a->name;
    return list ? mp_buf_printf(b, "%s_%zu", n, j) : mp_buf_puts(b, n);
}

/* The call: torch.ops.aten.<op>(pos..., kw=...) with tensors by name. */
static int py_call(struct mp_buf *b, const struct rp_call *c)
{
    const char *bare = strstr(c->op, "::") ? strstr(c->op, "::") + 2 : c->op;
    int rc = mp_buf_printf(b, "torch.ops.aten.%s(", bare);
    bool first = true;
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->kwarg && a->k == RA_NONE)
            continue; /* the default */
        rc = mp_buf_puts(b, first ? "" : ", ");
        first = false;
        if (!rc && a->kwarg)
            rc = mp_buf_printf(b, "%s=", a->name);
        if (rc)
            break;
        if (a->k == RA_TENSOR && a->mutated)
            rc = mp_buf_printf(b, "self.m_%s", a->name);
        else if (a->k == RA_TENSOR)
            rc = param_name(b, a, 0, false);
        else if (a->k == RA_TLIST) {
            rc = mp_buf_putc(b, '[');
            for (size_t j = 0; !rc && j < a->n; j++) {
                rc = mp_buf_puts(b, j ? ", " : "");
                rc = rc ? rc : param_name(b, a, j, true);
            }
            rc = rc ? rc : mp_buf_putc(b, ']');
        } else
            rc = py_const(b, a);
    }
    return rc ? rc : mp_buf_putc(b, ')');
}

/* An in-place op whose result does not depend on how often it ran (the
 * written tensor's old values are overwritten, or mapped to a fixed point). */
static bool idempotent(const char *op)
{
    static const char *const ops[] = {
        "aten::copy_",       "aten::fill_",      "aten::zero_",      "aten::masked_fill_",
        "aten::clamp_",      "aten::clamp_min_", "aten::clamp_max_", "aten::relu_",
        "aten::floor_",      "aten::ceil_",      "aten::round_",     "aten::abs_",
        "aten::index_copy_", "aten::scatter_",
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

/* A tensor the op writes (not an out= tensor) whose old values matter. */
static bool needs_restore(const struct rp_call *c, const struct rp_arg *a)
{
    return a->k == RA_TENSOR && a->mutated && !a->kwarg && !idempotent(c->op);
}

/* forward(self, <tensor inputs>): restores what an accumulating op writes,
 * calls the op, returns the written tensor (ret) or the first output. */
static int py_forward(struct mp_buf *b, const struct rp_call *c, const char *ret)
{
    int rc = 0;
    rc = mp_buf_puts(b, "\n    def forward(self");
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->k == RA_TENSOR && !a->mutated) {
            rc = mp_buf_puts(b, ", ");
            rc = rc ? rc : param_name(b, a, 0, false);
        }
        for (size_t j = 0; !rc && a->k == RA_TLIST && j < a->n; j++) {
            rc = mp_buf_puts(b, ", ");
            rc = rc ? rc : param_name(b, a, j, true);
        }
    }
    rc = rc ? rc : mp_buf_puts(b, "):\n");
    for (size_t i = 0; !rc && i < c->n; i++)
        if (needs_restore(c, &c->args[i]))
            rc = mp_buf_printf(
                b, "        if self.restore:\n            self.m_%s.copy_(self.m0_%s)\n",
                c->args[i].name, c->args[i].name);
    rc = rc ? rc : mp_buf_puts(b, "        out = ");
    rc = rc ? rc : py_call(b, c);
    if (!rc && ret)
        rc = mp_buf_printf(
            b, "\n        return self.m_%s.clone() if self.clone_out else self.m_%s\n", ret, ret);
    else if (!rc)
        rc = mp_buf_puts(b, "\n        return _first(out)\n");
    return rc;
}

static int py_model(struct mp_buf *b, const struct rp_call *c)
{
    bool restore = false;
    for (size_t i = 0; i < c->n; i++)
        restore = restore || needs_restore(c, &c->args[i]);
    bool writes = false;
    for (size_t i = 0; i < c->n; i++)
        writes = writes || (c->args[i].k == RA_TENSOR && c->args[i].mutated);
    int rc = mp_buf_puts(b, "\n\nclass Model(nn.Module):\n");
    if (!rc && writes)
        rc = mp_buf_puts(
            b, "    # forward returns a copy of the tensor the op writes: the module's own\n"
               "    # tensor, which the next call overwrites (a caller keeping the output\n"
               "    # would see it change); magpie's --run returns it as is\n"
               "    clone_out = True\n");
    if (!rc && restore)
        rc = mp_buf_puts(b, "    # the op accumulates into the tensor it writes: each call first "
                            "restores it (one\n    # copy), so every call computes the same "
                            "output; magpie's --run times the op\n    # alone (restore = "
                            "False)\n    restore = True\n\n");
    rc = rc ? rc : mp_buf_puts(b, "    def __init__(self):\n        super().__init__()\n");
    const char *ret = NULL;
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->k != RA_TENSOR || !a->mutated)
            continue;
        rc = mp_buf_printf(b,
                           "        # written by the op: the module's own tensor, so the inputs "
                           "stay unmodified\n        self.register_buffer(\"m_%s\", ",
                           a->name);
        rc = rc ? rc : py_arg_tensor(b, c, a);
        rc = rc ? rc : mp_buf_puts(b, ", persistent=False)\n");
        if (!rc && needs_restore(c, a))
            rc = mp_buf_printf(b,
                               "        self.register_buffer(\"m0_%s\", self.m_%s.clone(), "
                               "persistent=False)\n",
                               a->name, a->name);
        ret = ret ? ret : a->name;
    }
    rc = rc ? rc : py_forward(b, c, ret);
    rc = rc ? rc : mp_buf_puts(b, "\n\ndef get_inputs():\n    return [\n");
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->k == RA_TENSOR && !a->mutated) {
            rc = mp_buf_puts(b, "        ");
            rc = rc ? rc : py_arg_tensor(b, c, a);
            rc = rc ? rc : mp_buf_puts(b, ",\n");
        }
        for (size_t j = 0; !rc && a->k == RA_TLIST && j < a->n; j++) {
            rc = mp_buf_puts(b, "        ");
            rc = rc ? rc : py_tensor(b, &a->tl[j], NULL, 0);
            rc = rc ? rc : mp_buf_puts(b, ",\n");
        }
    }
    return rc ? rc : mp_buf_puts(b, "    ]\n\n\ndef get_init_inputs():\n    return []\n");
}

/* Whether a tensor argument is, in an LLM's forward pass, a parameter read
 * from HBM at every pass (not something the op before just wrote): a GEMM's
 * weight side (mat2 / weight / mat_b / scale_b, the bias: addmm's self,
 * matmul's other) or a floating-point vector broadcast along the last
 * dimension of another argument (a norm weight, a bias, a per-channel
 * scale). The cold replay state leaves these out of L2. */
static bool param_like(const struct rp_call *c, const struct rp_arg *a)
{
    const char *nm = strstr(c->op, "::");
    nm = nm ? nm + 2 : c->op;
    if (rp_gemm_op(c->op)) {
        static const char *const w[] = {"mat2", "weight", "bias", "mat_b", "scale_b", NULL};
        for (size_t i = 0; w[i]; i++)
            if (strcmp(a->name, w[i]) == 0)
                return true;
        if ((strcmp(a->name, "self") == 0 && strstr(nm, "addmm")) ||
            (strcmp(a->name, "other") == 0 && strstr(nm, "matmul")))
            return true;
    }
    const char *dt = a->t.dtype ? rp_torch_dtype(a->t.dtype) : NULL;
    if (a->t.nd != 1 || !a->t.shape || !dt || !strstr(dt, "float"))
        return false;
    for (size_t i = 0; i < c->n; i++) {
        const struct rp_arg *o = &c->args[i];
        if (o != a && o->k == RA_TENSOR && o->t.nd >= 2 && o->t.shape &&
            o->t.shape[o->t.nd - 1] == a->t.shape[0])
            return true;
    }
    return false;
}

/* PARAMETER_INPUTS: the get_inputs() positions of param_like arguments. */
static int py_params(struct mp_buf *b, const struct rp_call *c)
{
    int rc = mp_buf_puts(
        b, "\n\n# get_inputs() positions that are parameters in the workload (a weight, a\n"
           "# bias, a per-channel vector: read from HBM at every forward pass);\n"
           "# magpie's cold replay state leaves them out of L2\n"
           "PARAMETER_INPUTS = [");
    size_t pos = 0;
    bool first = true;
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->k == RA_TENSOR && !a->mutated) {
            if (param_like(c, a)) {
                rc = mp_buf_printf(b, "%s%zu", first ? "" : ", ", pos);
                first = false;
            }
            pos++;
        } else if (a->k == RA_TLIST) {
            pos += a->n;
        }
    }
    return rc ? rc : mp_buf_puts(b, "]\n");
}

/* What follows a ref's docstring: the helpers, Model, get_inputs,
 * PARAMETER_INPUTS and the __main__ block. */
static int py_body(struct mp_buf *b, const struct rp_call *c)
{
    int rc = mp_buf_puts(b, helpers);
    rc = rc ? rc : py_model(b, c);
    rc = rc ? rc : py_params(b, c);
    return rc ? rc : py_main(b);
}

int rp_py_ref(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b)
{
    int rc = py_header(b, op, c->schema);
    return rc ? rc : py_body(b, c);
}

/* prev_<n>.py: the op that ran before op n in the trace (its producer),
 * rebuilt at its recorded arguments in the reference's form; `--run` calls it
 * before each call of op n in the "after" state (docs/replay.md). */
int rp_py_prev(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b)
{
    int rc = mp_buf_printf(b, "\"\"\"magpie trace replay, the op before op %d (", op->n);
    rc = rc ? rc : py_comment_text(b, op->name, 200);
    rc = rc ? rc : mp_buf_puts(b, "): ");
    rc = rc ? rc : py_comment_text(b, op->prev_op, 200);
    rc = rc ? rc
            : mp_buf_printf(b,
                            ", whose GPU work ran last on op %d's stream before its first "
                            "kernel in %.0f %% of its calls in the trace (median idle gap "
                            "%.1f us).\n\n",
                            op->n, 100.0 * op->prev_share, op->prev_gap_us);
    rc = rc ? rc
            : py_cells(b, op->prev_dims, op->prev_types, op->prev_strides, op->prev_concrete,
                       c->schema);
    rc = rc ? rc
            : mp_buf_printf(b,
                            "\n`magpie trace replay --run` calls it before every call of "
                            "ref_%d.py in the \"after\" state, its output in place of the op's "
                            "input (or in-place self) of the same size where there is one.\n",
                            op->n);
    rc = rc ? rc : mp_buf_puts(b, py_imports);
    return rc ? rc : py_body(b, c);
}

/* Python package that registers a custom-op namespace. */
static const char *custom_pkg(const char *ns)
{
    static const struct {
        const char *ns, *pkg;
    } t[] = {
        {"_C", "vllm._C"},          {"_C_cache_ops", "vllm._C"},
        {"_moe_C", "vllm._moe_C"},  {"_rocm_C", "vllm._rocm_C"},
        {"vllm", "vllm"},           {"sgl_kernel", "sgl_kernel"},
        {"sglang", "sglang"},       {"aiter", "aiter"},
        {"trtllm", "tensorrt_llm"},
    };

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(t[i].ns, ns) == 0)
            return t[i].pkg;
    return ns;
}

/* One positional argument of a custom op, from the recorded cells: an
 * _ARGS entry of ref_<n>.py, ("tensor", (shape, strides, dtype)),
 * ("value", literal) or ("none", None) when nothing usable was recorded
 * (a None, or a str, which the profiler does not record). */
static int custom_arg(struct mp_buf *b, const struct rp_val *di, const struct rp_val *st,
                      const char *ty, const char *cv)
{
    if (rp_torch_dtype(ty) && di->k == RV_SEQ && di->n <= 16) {
        long long sh[16], sd[16];
        long long run = 1;
        for (size_t i = di->n; i-- > 0;) {
            sh[i] = di->items[i].k == RV_INT ? di->items[i].i : 1;
            sd[i] = st->k == RV_SEQ && st->n == di->n && st->items[i].k == RV_INT ? st->items[i].i
                                                                                  : run;
            if (__builtin_mul_overflow(run, sh[i] > 0 ? sh[i] : 1, &run))
                run = 1; /* nonsense dims: the call fails in Python, not here */
        }
        int rc = mp_buf_puts(b, "(\"tensor\", (");
        rc = rc ? rc : py_tuple(b, sh, di->n);
        rc = rc ? rc : mp_buf_puts(b, ", ");
        rc = rc ? rc : py_tuple(b, sd, di->n);
        return rc ? rc : mp_buf_printf(b, ", %s))", rp_torch_dtype(ty));
    }
    char *end;
    if (cv && (strcmp(cv, "True") == 0 || strcmp(cv, "False") == 0))
        return mp_buf_printf(b, "(\"value\", %s)", cv);
    if (cv && *cv && strcmp(ty, "ScalarType") == 0) {
        long long v = strtoll(cv, &end, 10);
        const char *dt = !*end ? rp_scalar_type(v) : NULL;
        if (dt)
            return mp_buf_printf(b, "(\"value\", %s)", dt);
    }
    if (cv && *cv && !rp_torch_dtype(ty)) { /* written anew: the cell is not Python */
        errno = 0;
        long long iv = strtoll(cv, &end, 10);
        if (!*end && errno != ERANGE)
            return mp_buf_printf(b, "(\"value\", %lld)", iv);
        double fv = strtod(cv, &end);
        if (!*end) {
            char t[40];
            mp_fmt_pyfloat(fv, t, sizeof(t));
            return isfinite(fv) ? mp_buf_printf(b, "(\"value\", %s)", t)
                                : mp_buf_printf(b, "(\"value\", float('%s'))", t);
        }
    }
    return mp_buf_puts(b, "(\"none\", None)");
}

/* The part of a custom op's ref_<n>.py that reads the schema the package
 * registered (torch.ops.<ns>.<op>.<overload>._schema) when it is imported:
 * the tensors the op writes become the module's own (restored before each
 * call, returned after its outputs), unrecorded arguments take the schema's
 * default. */
static const char custom_model[] =
    "\n\ndef _schema(fn, n):\n"
    "    \"\"\"The first n arguments of the op's registered schema: its first overload\n"
    "    that takes n positional arguments (the rest, if any, with defaults).\"\"\"\n"
    "    for name in fn.overloads():\n"
    "        pos = [a for a in getattr(fn, name)._schema.arguments if not a.kwarg_only]\n"
    "        if len(pos) >= n and all(a.has_default_value() for a in pos[n:]):\n"
    "            return pos[:n]\n"
    "    return None\n"
    "\n"
    "\n"
    "def _value(i, a):\n"
    "    kind, v = _ARGS[i]\n"
    "    if kind != \"none\" or a is None or isinstance(a.type, torch.OptionalType):\n"
    "        return v\n"
    "    if a.has_default_value():\n"
    "        return a.default_value\n"
    "    raise RuntimeError(\"%s: argument %d '%s' (%s) was not recorded in the trace (the \"\n"
    "                       \"profiler records no strings) and has no default: set it in this \"\n"
    "                       \"file, _ARGS[%d] = ('value', ...)\" % (_OP, i, a.name, a.type, i))\n"
    "\n"
    "\n"
    "_POS = _schema(_FN, len(_ARGS))\n"
    "# the tensors the op writes (Tensor(a!) in its schema)\n"
    "_WRITES = [i for i, (k, _) in enumerate(_ARGS) if k == \"tensor\" and _POS\n"
    "           and _POS[i].alias_info is not None and _POS[i].alias_info.is_write]\n"
    "_VALUES = [_value(i, _POS[i] if _POS else None) for i in range(len(_ARGS))]\n"
    "\n"
    "\n"
    "# integer tensors named as scatter targets (vLLM's slot_mapping, SGLang's\n"
    "# out_cache_loc): a real one never repeats an entry, and a repeated one makes\n"
    "# the writing kernel race (two calls differ), so their values are distinct\n"
    "def _distinct(name):\n"
    "    return \"slot\" in name or name in (\"loc\", \"out_cache_loc\", \"cache_loc\")\n"
    "\n"
    "\n"
    "def _make(i):\n"
    "    shape, strides, dtype = _ARGS[i][1]\n"
    "    t = _tensor(shape, strides, dtype)\n"
    "    name = _POS[i].name if _POS else \"\"\n"
    "    if not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool) and \\\n"
    "            _distinct(name):\n"
    "        try:  # a random permutation of 0 .. n-1\n"
    "            t.copy_(torch.randperm(t.numel(), device=t.device).reshape(t.shape))\n"
    "        except RuntimeError:  # overlapping strides: left as drawn\n"
    "            pass\n"
    "    return t\n"
    "\n"
    "\n"
    "class Model(nn.Module):\n"
    "    \"\"\"The recorded arguments, positionally. The tensors the op writes are the\n"
    "    module's own, so the inputs stay unmodified; forward returns the op's\n"
    "    tensor outputs, then the tensors it wrote.\"\"\"\n"
    "\n"
    "    # forward returns copies of the written tensors (the next call overwrites\n"
    "    # them); magpie's --run returns them as they are\n"
    "    clone_out = True\n"
    "    # the op may read what it writes (an in-place norm or rotary embedding):\n"
    "    # each call first restores them (one copy each), so every call computes\n"
    "    # the same output; magpie's --run times the op alone (restore = False)\n"
    "    restore = True\n"
    "\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        for i in _WRITES:\n"
    "            self.register_buffer(\"m_%d\" % i, _make(i), persistent=False)\n"
    "            self.register_buffer(\"m0_%d\" % i, getattr(self, \"m_%d\" % i).clone(),\n"
    "                                 persistent=False)\n"
    "\n"
    "    def forward(self, *tensors):\n"
    "        it = iter(tensors)\n"
    "        args = []\n"
    "        for i, (kind, _) in enumerate(_ARGS):\n"
    "            if i in _WRITES:\n"
    "                if self.restore:\n"
    "                    getattr(self, \"m_%d\" % i).copy_(getattr(self, \"m0_%d\" % i))\n"
    "                args.append(getattr(self, \"m_%d\" % i))\n"
    "            else:\n"
    "                args.append(next(it) if kind == \"tensor\" else _VALUES[i])\n"
    "        out = _FN(*args)\n"
    "        outs = [t for t in (out if isinstance(out, (tuple, list)) else [out])\n"
    "                if isinstance(t, torch.Tensor)]\n"
    "        for i in _WRITES:\n"
    "            m = getattr(self, \"m_%d\" % i)\n"
    "            outs.append(m.clone() if self.clone_out else m)\n"
    "        return outs[0] if len(outs) == 1 else tuple(outs) if outs else None\n"
    "\n"
    "\n"
    "def get_inputs():\n"
    "    return [_make(i) for i, (k, _) in enumerate(_ARGS) if k == \"tensor\" and i not in "
    "_WRITES]\n"
    "\n"
    "\n"
    "def get_init_inputs():\n"
    "    return []\n";

int rp_py_custom(const struct mp_replay_op *op, struct rp_val *dims, struct rp_val *types,
                 struct rp_val *strides, struct rp_val *conc, struct mp_buf *b)
{
    char ns[96], name[128];
    const char *sep = strstr(op->name, "::");
    if (!sep)
        return MP_EINVAL;
    snprintf(ns, sizeof(ns), "%.*s", (int)(sep - op->name), op->name);
    snprintf(name, sizeof(name), "%s", sep + 2);
    const char *pkg = custom_pkg(ns);
    int rc = py_header(b, op, "");
    rc = rc ? rc : mp_buf_puts(b, "import importlib\n\n");
    rc = rc ? rc : mp_buf_puts(b, "_OP = ");
    rc = rc ? rc : py_str(b, op->name);
    rc = rc ? rc : mp_buf_puts(b, "\n_PACKAGE = ");
    rc = rc ? rc : py_str(b, pkg);
    rc = rc ? rc
            : mp_buf_printf(b,
                            "\ntry:\n    importlib.import_module(_PACKAGE)\n"
                            "except (ImportError, RuntimeError) as e:\n"
                            "    raise RuntimeError(\"%%s: not importable here (custom op of the "
                            "Python package %%r: %%s)\" %% (_OP, _PACKAGE, e)) from None\n"
                            "try:\n"
                            "    _FN = getattr(getattr(torch.ops, \"%s\"), \"%s\")\n"
                            "except (AttributeError, RuntimeError) as e:\n"
                            "    raise RuntimeError(\"%%s: not importable here (the Python "
                            "package %%r imports but registers no such op on this build: an op "
                            "of another platform's build, or one a model layer registers when "
                            "the engine loads it: %%s)\" %% (_OP, _PACKAGE, e)) from None\n\n",
                            ns, name);
    rc = rc ? rc : mp_buf_puts(b, helpers);
    rc = rc ? rc
            : mp_buf_puts(b, "\n\n# the recorded arguments: (\"tensor\", (shape, strides, "
                             "dtype)), (\"value\", v), or\n# (\"none\", None) where nothing "
                             "was recorded (a None, or a str)\n_ARGS = [\n");
    static const struct rp_val empty = {.k = RV_SEQ};
    size_t n = types->k == RV_SEQ ? types->n : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *ty = types->items[i].k == RV_STR ? types->items[i].s : "";
        const char *cv =
            conc->k == RV_SEQ && i < conc->n && conc->items[i].k == RV_STR ? conc->items[i].s : "";
        rc = mp_buf_puts(b, "    ");
        rc = rc ? rc
                : custom_arg(b, dims->k == RV_SEQ && i < dims->n ? &dims->items[i] : &empty,
                             strides->k == RV_SEQ && i < strides->n ? &strides->items[i] : &empty,
                             ty, cv);
        rc = rc ? rc : mp_buf_puts(b, ",\n");
    }
    rc = rc ? rc : mp_buf_puts(b, "]");
    rc = rc ? rc : mp_buf_puts(b, custom_model);
    return rc ? rc : py_main(b);
}

int rp_py_cand(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b)
{
    int rc = mp_buf_printf(
        b,
        "\"\"\"Candidate for ref_%d.py (%s): replace forward's body with your kernel, then\n"
        "    magpie compare -k compare_%d.yaml        (from this directory)\n"
        "times it against the traced op and checks it against the reference. Until\n"
        "then it is the op itself, called as the reference calls it.\"\"\"\n"
        "import importlib.util\nimport os\n\n"
        "_spec = importlib.util.spec_from_file_location(\n"
        "    \"magpie_replay_ref_%d\", os.path.join(os.path.dirname(os.path.abspath(__file__)), "
        "\"ref_%d.py\"))\n"
        "_ref = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_ref)\n"
        "torch = _ref.torch\n_first = _ref._first\n\n\n"
        "class ModelNew(_ref.Model):\n",
        op->n, op->name, op->n, op->n, op->n);
    if (rc || !c)
        return rc ? rc
                  : mp_buf_puts(b, "    def forward(self, *args):\n"
                                   "        # TODO: your kernel\n"
                                   "        return super().forward(*args)\n");
    const char *ret = NULL;
    for (size_t i = 0; !ret && i < c->n; i++)
        if (c->args[i].k == RA_TENSOR && c->args[i].mutated)
            ret = c->args[i].name;
    rc = mp_buf_puts(b, "    # TODO: your kernel in forward (same arguments, same output)");
    return rc ? rc : py_forward(b, c, ret);
}

int rp_py_compare(const struct mp_replay_op *op, struct mp_buf *b)
{
    return mp_buf_printf(b,
                         "# magpie compare -k compare_%d.yaml   (from this directory)\n"
                         "# Baseline: the traced op at the trace's arguments (ref_%d.py); "
                         "candidate: cand_%d.py.\n"
                         "kernels:\n"
                         "  - {id: op_%d, type: pytorch, source_files: [ref_%d.py], reference: "
                         "ref_%d.py}\n"
                         "  - {id: cand_%d, type: pytorch, source_files: [cand_%d.py], "
                         "reference: ref_%d.py}\n",
                         op->n, op->n, op->n, op->n, op->n, op->n, op->n, op->n, op->n);
}
