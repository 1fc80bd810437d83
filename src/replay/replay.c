/* mp_replay: selects the ops (select.c), rebuilds each one's call (schema.c),
 * writes the IR (ir.c), the Python files (pygen.c) and the summary, and with
 * run times the references (run.c). Every file is written atomically; the
 * summary last, after the run, so a reader never sees a summary of files
 * that are not there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/tracelens.h>

#include "replay_int.h"

void mp_replay_opts_defaults(struct mp_replay_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->top = 20;
    o->arch_auto = true;
}

static void op_fini(struct mp_replay_op *op)
{
    char **s[] = {&op->name,           &op->category,     &op->shape_key,      &op->dims,
                  &op->types,          &op->strides,      &op->concrete,       &op->trace_kernels,
                  &op->gflops,         &op->data_mb,      &op->flops_per_byte, &op->compute_spec,
                  &op->roofline_bound, &op->roofline_us,  &op->pct_roofline,   &op->schema,
                  &op->reason,         &op->note,         &op->replay_kernels, &op->replay_note,
                  &op->replay_clocks,  &op->prev_op,      &op->prev_dims,      &op->prev_types,
                  &op->prev_strides,   &op->prev_concrete};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
        free(*s[i]);
        *s[i] = NULL;
    }
    free(op->dirty);
    op->dirty = NULL;
}

void mp_replay_result_free(struct mp_replay_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        op_fini(&r->ops[i]);
    free(r->ops);
    free(r);
}

static int set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = mp_strdup(s ? s : "");
    return *dst ? 0 : MP_ENOMEM;
}

static int write_file(const char *dir, const char *name, const struct mp_buf *b, struct mp_diag *d)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return mp_diag_set(d, MP_EINVAL, "output path too long: %s/%s", dir, name);
    return mp_fs_write_atomic(path, b->data ? b->data : "", b->len, d);
}

/* Why an op that was rebuilt still cannot be a TraceLens IR entry ("" when
 * it can). */
static void ir_reason(const struct rp_call *c, char *why, size_t n)
{
    why[0] = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->k == RA_TLIST) {
            snprintf(why, n,
                     "argument '%s' is a tensor list; TraceLens's replay builds single "
                     "tensors only",
                     a->name);
            return;
        }
        if (a->k == RA_TENSOR && !rp_ir_dtype(a->t.dtype)) {
            snprintf(why, n,
                     "argument '%s' has dtype %s, which TraceLens's build_tensor does "
                     "not know",
                     a->name, a->t.dtype);
            return;
        }
        if (a->k == RA_TENSOR && a->role != RI_ANY) {
            snprintf(why, n,
                     "argument '%s' holds %s whose values matter; TraceLens's replay "
                     "leaves integer tensors uninitialised (ref_%s builds valid ones)",
                     a->name, a->role == RI_OFFS ? "group offsets" : "indices", "<n>.py");
            return;
        }
    }
}

/* A collective: c10d / functional-collective ops, the profiler's
 * record_param_comms and nccl:* annotations, or an op whose kernels are
 * NCCL/RCCL ones (vLLM's custom all-reduce included). */
static bool is_collective(const struct mp_replay_op *op)
{
    static const char *const names[] = {
        "c10d::", "_c10d_functional::", "c10d_functional::", "record_param_comms", "nccl:", "rccl:",
        NULL};
    static const char *const kernels[] = {"nccl", "rccl", "cross_device_reduce", NULL};
    for (size_t i = 0; names[i]; i++)
        if (strncmp(op->name, names[i], strlen(names[i])) == 0)
            return true;
    for (size_t i = 0; op->trace_kernels && kernels[i]; i++)
        if (strstr(op->trace_kernels, kernels[i]))
            return true;
    return false;
}

static bool is_custom(const char *name)
{
    return strstr(name, "::") && strncmp(name, "aten::", 6) != 0 && !strstr(name, "->");
}

/* Notes on values the trace does not hold. */
static int op_note(struct mp_replay_op *op, const struct rp_call *c)
{
    struct mp_buf b;
    mp_buf_init(&b, 4096);
    int rc = 0;
    for (size_t i = 0; !rc && i < c->n; i++) {
        const struct rp_arg *a = &c->args[i];
        if (a->k == RA_TENSOR && a->role == RI_OFFS && a->vfrom == RF_DEFAULT)
            rc = mp_buf_printf(&b,
                               "'%s': values_from default: the group offsets are not recorded, "
                               "each row is routed to a uniformly random group (seeded; "
                               "MAGPIE_REPLAY_OFFS=even for an even split). ",
                               a->name);
        else if (a->k == RA_TENSOR && a->role == RI_OFFS && a->vfrom == RF_DERIVED)
            rc = mp_buf_printf(&b, "'%s': values_from derived: one group, ending at row %lld. ",
                               a->name, a->nvals ? a->vals[0] : 0LL);
        else if (a->k == RA_TENSOR && a->vfrom == RF_TRACE)
            rc = mp_buf_printf(&b, "'%s': values_from trace (%zu recorded values). ", a->name,
                               a->nvals);
        else if (a->k == RA_TENSOR && a->role == RI_INDEX)
            rc = mp_buf_printf(&b,
                               "'%s': values_from default: random in-range indices (not "
                               "recorded). ",
                               a->name);
        else if (a->k == RA_TLIST)
            rc = mp_buf_printf(&b,
                               "'%s': list tensors take the dtype of the op's first tensor "
                               "(not recorded). ",
                               a->name);
    }
    rc = rc ? rc : set_str(&op->note, mp_buf_cstr(&b));
    mp_buf_fini(&b);
    snprintf(op->values_from, sizeof(op->values_from), "%s", rp_vfrom_name(rp_call_vfrom(c)));
    return rc;
}

/* prev_<n>.py: the op before op (trace_prev_op) rebuilt, when op was and it
 * is an ATen op with a known schema; anything else leaves it out (no error:
 * the "after" state is then not measured). */
static int rebuild_prev(const struct mp_replay_opts *o, struct mp_replay_op *op, struct mp_diag *d)
{
    if (!op->rebuilt || !op->prev_op || !*op->prev_op || strstr(op->prev_op, "->") ||
        is_custom(op->prev_op))
        return 0;
    char why[768];
    struct rp_call c = {0};
    struct mp_diag pd;
    mp_diag_clear(&pd);
    int rc = rp_match(op->prev_op, op->prev_dims, op->prev_types, op->prev_strides,
                      op->prev_concrete, &c, why, sizeof(why), &pd);
    struct mp_buf py;
    mp_buf_init(&py, 16u << 20);
    if (rc == 0) {
        rc = rp_py_prev(op, &c, &py);
        char name[64];
        snprintf(name, sizeof(name), "prev_%d.py", op->n);
        rc = rc ? rc : write_file(o->out_dir, name, &py, d);
        op->prev_rebuilt = rc == 0;
    } else if (rc != MP_ENOMEM) {
        rc = 0; /* not rebuildable: no after state */
    }
    rp_call_fini(&c);
    mp_buf_fini(&py);
    return rc;
}

/* Why a row whose recorded cells could not be parsed (md) is not rebuilt. */
static void unreadable_reason(const struct mp_diag *md, char *why, size_t n)
{
    snprintf(why, n, "the recorded arguments are not readable: %s%s%s",
             md->field[0] ? md->field : "", md->field[0] ? ": " : "", md->msg);
}

/* An ATen op (name: the row's op, or the op of a TraceLens-split row,
 * whose entry ir is NULL: not an IR entry) matched against magpie's schema
 * table: on a match op->rebuilt, its ref in py and, when it can be one, an
 * IR entry appended to ir (with its separator); else why says why. 0 also
 * when it does not match (or its cells are unreadable). */
static int rebuild_aten(struct mp_replay_op *op, const char *name, struct rp_call *c,
                        struct mp_buf *ir, bool *ir_first, char *why, size_t nwhy,
                        struct mp_buf *py, struct mp_diag *d)
{
    struct mp_diag md;
    mp_diag_clear(&md);
    int m = rp_match(name, op->dims, op->types, op->strides, op->concrete, c, why, nwhy, &md);
    if (m == MP_ENOTFOUND)
        return 0;
    if (m == MP_EPARSE) { /* one unreadable row: not rebuilt, the others are */
        unreadable_reason(&md, why, nwhy);
        return 0;
    }
    if (m)
        return mp_diag_set(d, m, "%s", md.msg);
    op->rebuilt = true;
    int rc = set_str(&op->schema, c->schema);
    rc = rc ? rc : op_note(op, c);
    rc = rc ? rc : rp_py_ref(op, c, py);
    ir_reason(c, why, nwhy);
    char *pn = strstr(why, "<n>");
    if (pn) {
        char tail[768];
        snprintf(tail, sizeof(tail), "%d%s", op->n, pn + 3);
        snprintf(pn, nwhy - (size_t)(pn - why), "%s", tail);
    }
    if (!rc && !why[0] && ir) {
        rc = mp_buf_puts(ir, *ir_first ? "\n" : ",\n");
        rc = rc ? rc : rp_ir_entry(op, c, ir);
        *ir_first = false;
        op->in_ir = true;
    }
    return rc;
}

/* Rebuilds op: the ref/cand/compare files and, when it can be one, an IR
 * entry appended to ir (with its separator). */
static int rebuild_one(const struct mp_replay_opts *o, struct mp_replay_op *op, struct mp_buf *ir,
                       bool *ir_first, struct mp_diag *d)
{
    char why[768] = "";
    struct rp_call c = {0};
    struct mp_buf py;
    mp_buf_init(&py, 16u << 20);
    int rc = 0;
    if (strstr(op->name, "->")) {
        int pl = (int)(strstr(op->name, "->") - op->name);
        bool graph = strncmp(op->name, "cudaGraphLaunch", 15) == 0 ||
                     strncmp(op->name, "hipGraphLaunch", 14) == 0;
        /* an op ("ns::name") or a runtime call (cudaLaunchKernel, ...) */
        bool is_op = rp_split_op_len(op->name) > 0;
        if (is_op && strncmp(op->name, "aten::", 6) == 0 && op->trace_kernels &&
            *op->trace_kernels && !strstr(op->trace_kernels, " | ")) {
            /* one kernel of an ATen op: the op rebuilt whole, its one kernel timed */
            char parent[256];
            snprintf(parent, sizeof(parent), "%.*s", pl, op->name);
            rc = rebuild_aten(op, parent, &c, NULL, ir_first, why, sizeof(why), &py, d);
            if (!rc && op->rebuilt) {
                op->one_kernel = true;
                char note[1024];
                snprintf(note, sizeof(note),
                         "one kernel of %s (TraceLens ranks its kernels apart): ref_%d.py calls "
                         "%s whole; --run times only this kernel's records, per launch, as the "
                         "row's calls count launches; compare_%d.yaml times the whole op. %s",
                         parent, op->n, parent, op->n, op->note ? op->note : "");
                rc = set_str(&op->note, note);
                snprintf(why, sizeof(why),
                         "synthetic op (one kernel of %s): rebuilt as %s whole; not an IR "
                         "entry (TraceLens's IR holds whole ops, and its count here is the "
                         "kernel's launches)",
                         parent, parent);
            } else if (!rc) {
                char inner[400];
                snprintf(inner, sizeof(inner), "%s", why);
                snprintf(why, sizeof(why),
                         "synthetic op: one kernel of %.100s (TraceLens ranks its kernels "
                         "apart); %.100s cannot be rebuilt whole: %s",
                         parent, parent, inner);
            }
        } else if (is_op && strncmp(op->name, "aten::", 6) == 0)
            snprintf(why, sizeof(why),
                     "synthetic op: a kernel of %.*s, which TraceLens ranks kernel by kernel, "
                     "but the row names %s kernel: nothing to time alone",
                     pl, op->name,
                     op->trace_kernels && *op->trace_kernels ? "more than one" : "no");
        else if (is_op)
            snprintf(why, sizeof(why),
                     "synthetic op: one kernel of %.*s, which TraceLens ranks kernel by kernel "
                     "(it has no row of its own); rebuilding %.*s whole is done for ATen ops "
                     "only",
                     pl, op->name, pl, op->name);
        else if (!graph)
            snprintf(why, sizeof(why),
                     "synthetic op: a kernel launched by the runtime call %.*s with no CPU op "
                     "above it (a library or Python extension calling the runtime directly), "
                     "so no arguments were recorded",
                     pl, op->name);
        else
            snprintf(why, sizeof(why),
                     "synthetic op: a kernel of a graph replay (%.*s), with no CPU op above it, "
                     "so no arguments were recorded%s",
                     pl, op->name,
                     o->capture_folder ? " (not merged from the capture folder)"
                                       : "; --capture-folder DIR (the graph capture traces) "
                                         "merges them in");
    } else if (is_collective(op)) {
        snprintf(why, sizeof(why),
                 "a collective (%s): not replayable alone; it needs its peer ranks in a "
                 "process group, and its kernel time includes waiting for them (see `magpie "
                 "trace collective` over all ranks' traces)",
                 op->trace_kernels && *op->trace_kernels ? op->trace_kernels : op->name);
    } else if (strncmp(op->name, "sglang_profiler::", 17) == 0) {
        snprintf(why, sizeof(why),
                 "an SGLang profiler annotation (the scope of a Python function, recorded with "
                 "its arguments' shapes), not a registered op: there is nothing to call; its "
                 "kernels are those of what the function launched");
    } else if (strncmp(op->name, "triton_", 7) == 0) {
        snprintf(why, sizeof(why),
                 "a torch.compile (Inductor) Triton kernel, not an ATen op: "
                 "no arguments recorded; see Inductor's output code");
    } else if (is_custom(op->name)) {
        struct rp_val v[4] = {{0}};
        struct mp_diag md;
        mp_diag_clear(&md);
        rc = rp_cells_parse(op->dims, op->types, op->strides, op->concrete, v, &md);
        bool unreadable = rc == MP_EPARSE;
        rc = rc ? rc
                : set_str(&op->note, "custom op: called positionally with the recorded "
                                     "arguments when its package is importable; the schema the "
                                     "package registers says which tensors it writes (the "
                                     "module's own, returned) and fills unrecorded defaults");
        rc = rc ? rc : rp_py_custom(op, &v[0], &v[1], &v[2], &v[3], &py);
        rp_cells_fini(v);
        op->rebuilt = rc == 0;
        if (unreadable) { /* one unreadable row: not rebuilt, the others are */
            unreadable_reason(&md, why, sizeof(why));
            rc = 0;
        } else
            snprintf(why, sizeof(why),
                     "custom op: not in magpie's schema table; ref_%d.py calls it "
                     "when its Python package is importable, by the schema that registers",
                     op->n);
        if (rc && rc != MP_ENOMEM)
            mp_diag_set(d, rc, "%s", md.msg);
    } else {
        rc = rebuild_aten(op, op->name, &c, ir, ir_first, why, sizeof(why), &py, d);
    }
    if (!rc && !op->rebuilt && !op->schema)
        rc = set_str(&op->schema, "");
    rc = rc ? rc : set_str(&op->reason, why);
    if (!rc && op->rebuilt) {
        char name[64];
        snprintf(name, sizeof(name), "ref_%d.py", op->n);
        rc = write_file(o->out_dir, name, &py, d);
        mp_buf_reset(&py);
        rc = rc ? rc : rp_py_cand(op, op->schema && *op->schema ? &c : NULL, &py);
        snprintf(name, sizeof(name), "cand_%d.py", op->n);
        rc = rc ? rc : write_file(o->out_dir, name, &py, d);
        mp_buf_reset(&py);
        rc = rc ? rc : rp_py_compare(op, &py);
        snprintf(name, sizeof(name), "compare_%d.yaml", op->n);
        rc = rc ? rc : write_file(o->out_dir, name, &py, d);
    }
    rp_call_fini(&c);
    mp_buf_fini(&py);
    return rc ? rc : rebuild_prev(o, op, d);
}

static int skipped_json(const struct mp_replay_result *r, struct mp_buf *b)
{
    int rc = mp_buf_putc(b, '[');
    bool first = true;
    for (size_t i = 0; !rc && i < r->n; i++) {
        const struct mp_replay_op *op = &r->ops[i];
        if (op->in_ir)
            continue;
        rc = mp_buf_puts(b, first ? "\n  {\"n\": " : ",\n  {\"n\": ");
        first = false;
        rc = rc ? rc : mp_buf_printf(b, "%d, \"rank\": %ld, \"op_name\": ", op->n, op->rank);
        rc = rc ? rc : mp_json_str(b, op->name, strlen(op->name));
        rc = rc ? rc : mp_buf_puts(b, ", \"shape_key\": ");
        rc = rc ? rc : mp_json_str(b, op->shape_key, strlen(op->shape_key));
        rc = rc ? rc
                : mp_buf_printf(b,
                                ", \"rebuilt\": %s, \"reason\": ", op->rebuilt ? "true" : "false");
        rc = rc ? rc : mp_json_str(b, op->reason, strlen(op->reason));
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    return rc ? rc : mp_buf_puts(b, first ? "]\n" : "\n]\n");
}

int mp_replay(const struct mp_replay_opts *o, struct mp_replay_result **out, struct mp_diag *d)
{
    *out = NULL;
    if (!o->trace || !o->out_dir)
        return mp_diag_set(d, MP_EINVAL, "a trace and an output directory are needed");
    struct mp_replay_result *r = mp_calloc(1, sizeof(*r));
    if (!r)
        return MP_ENOMEM;
    struct mp_report *rep = NULL;
    int rc = rp_select(o, r, &rep, d);
    rc = rc ? rc : rp_producers(o, r, rep ? rep->tree : NULL, d);
    mp_report_free(rep);
    rc = rc ? rc : mp_fs_mkdirs(o->out_dir, d);
    struct mp_buf ir;
    mp_buf_init(&ir, 256u << 20);
    bool first = true;
    rc = rc ? rc : mp_buf_putc(&ir, '[');
    for (size_t i = 0; !rc && i < r->n; i++) {
        rc = rebuild_one(o, &r->ops[i], &ir, &first, d);
        r->n_rebuilt += r->ops[i].rebuilt;
        r->n_in_ir += r->ops[i].in_ir;
    }
    rc = rc ? rc : mp_buf_puts(&ir, first ? "]\n" : "\n]\n");
    rc = rc ? rc : write_file(o->out_dir, "event_replay_ir.json", &ir, d);
    mp_buf_reset(&ir);
    rc = rc ? rc : skipped_json(r, &ir);
    rc = rc ? rc : write_file(o->out_dir, "event_replay_skipped.json", &ir, d);
    if (!rc && o->run)
        rc = rp_run(o, r, d);
    else if (!rc)
        snprintf(r->run_note, sizeof(r->run_note), "not run (--run times the references)");
    mp_buf_reset(&ir);
    rc = rc ? rc : rp_summary_csv(r, &ir);
    rc = rc ? rc : write_file(o->out_dir, "replay_summary.csv", &ir, d);
    mp_buf_reset(&ir);
    rc = rc ? rc : mp_replay_summary_json(r, &ir);
    rc = rc ? rc : write_file(o->out_dir, "replay_summary.json", &ir, d);
    mp_buf_fini(&ir);
    if (rc == MP_ENOMEM && d && !d->code)
        mp_diag_set(d, rc, "out of memory");
    if (rc) {
        mp_replay_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
