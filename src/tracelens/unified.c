/* unified_perf_summary of the TraceLens report (docs/tracelens-compat.md):
 * a MECE list of ops, each GPU event counted once. Walking down from each
 * thread's outermost cpu_ops, an op is taken when it has a perf model, or
 * when it directly launches kernels (a "leaf") and no cpu_op below it has a
 * model; GPU events left over become "<parent>-><kernel> (Synthetic Op)"
 * rows. Rows are grouped by name, category, process/thread and args, and
 * sorted by total kernel time.
 *
 * A backward op that is the sole kernel-launching op of its autograd node
 * (evaluate_function wrapper) whose linked forward op has a backward model
 * is taken too: its metrics are the forward model's backward FLOPs/bytes over
 * the backward kernels (docs/tracelens-compat.md, Unified perf events). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/roofline.h>
#include <magpie/stats.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

/* One row per collected op (tens of thousands on a large trace): kept small,
 * its texts interned in uctx.texts. */
struct urow {
    int32_t uid;    /* event the row copies (a synthetic row copies its parent) */
    int32_t kernel; /* synthetic rows: the single GPU event, else -1 */
    int32_t ex_uid; /* UID as TraceLens numbers it (synthetic: past the last event) */
    int32_t status; /* MP_ROOFLINE_* when has_model */
    bool synthetic;
    bool has_model;
    uint32_t koff, nk; /* kernels: kpool[koff .. koff + nk) */
    const char *name;  /* event name ("<parent>-><kernel> (Synthetic Op)" interned) */
    const char *category;
    double kt, gflops, mb, fpb, tbs, tfs;
    const char *spec; /* compute spec (interned), NULL without metrics */

    struct { /* what the sheet prints of mp_roofline_roofline */
        double roofline_us, pct;
        bool valid, compute_bound;
    } rl;

    const char *params; /* "{'M': 1, ...}" (interned) or NULL */
    const int32_t *k;   /* kernels in gpu_events order: kpool + koff, set once all rows are
                           filled (the pool moves while it grows) */
};

struct uctx {
    const struct mp_trace_tree *t;
    const int32_t *first_kernel;
    const struct mp_roofline_arch *arch;
    uint8_t *has_gpu; /* a GPU event in the subtree of each event */
    uint8_t *comm;    /* subtree holds a communication kernel */
    uint8_t *model;   /* 0 unknown, 1 no, 2 yes: perf model per name id */
    uint8_t *visited;
    int32_t *collected;
    size_t ncollected, capc;
    uint8_t *in_collected_gpu;
    uint8_t *bwd_ok;          /* per forward op: 0 unknown, 1 no backward model, 2 yes */
    const char *const *annot; /* per event: enclosing step annotation, or NULL */
    uint8_t *is_collected;    /* per event: taken as a row (it carries a call stack) */
    int32_t *root_of;         /* per collected event: the traversal root it was reached from (only
                                 with call stacks) */
    int32_t cur_root;
    /* call stacks (python functions in the tree): frame name per event with
     * "_<digits>" removed, interned; -1 = not a frame, -2 = not computed */
    struct mp_intern *frames;
    int32_t *frame_of;
    /* kernel lists of all rows, back to back (one array instead of one
     * small allocation per row) */
    int32_t *kpool;
    size_t nkpool, capkpool;
    struct mp_intern *texts; /* the rows' compute specs and perf_params: few distinct */
    struct mp_roofline_memo *memo;
    /* the texts of each perf-model memo slot (mp_roofline_result.memo_slot):
     * slot -> index in slots, -1 before its first row */
    int32_t *slot_of;
    size_t cap_slot_of;
    struct utexts *slots;
    size_t nslots, capslots;
    struct tl_catmemo cats;
    /* fill_row's scratch: a row's kernel names and (ts, position) pairs */
    const char **knames;
    size_t cap_knames;
    struct kts *kord;
    size_t cap_kord;
};

struct kts {
    double ts;
    int32_t i;
};

/* What a row prints of a model result's texts, interned. */
struct utexts {
    const char *spec;   /* compute spec */
    const char *params; /* "{'M': 1, ...}", NULL without params */
};

/* The interned copy of n bytes of p, or NULL when out of memory. */
static const char *utext(struct uctx *u, const char *p, size_t n)
{
    int32_t id = mp_intern_add(u->texts, p, n);
    return id < 0 ? NULL : mp_intern_str(u->texts, id);
}

/* TraceLens's TritonCompiledPerfModel.can_model: an Inductor Triton op is
 * modelled only when its args carry non-empty Concrete Inputs, Input Dims
 * and Input type and some Concrete Input is an integer (the element count);
 * otherwise the op counts as one without a model (kept in the unified table
 * with no metrics). Graph-capture traces have such ops. */
static bool triton_can_model(const struct mp_trace_store *s, int32_t i)
{
    if (!s->args[i])
        return false;
    struct mp_strview a = {s->args[i], s->args_len[i]}, ci, dims, types;
    if (mp_trace_json_find(a, "Concrete Inputs", &ci) ||
        mp_trace_json_find(a, "Input Dims", &dims) || mp_trace_json_find(a, "Input type", &types))
        return false;
    /* empty lists (or null) are falsy */
    struct mp_strview lists[2] = {dims, types};
    for (int k = 0; k < 2; k++) {
        if (lists[k].n < 2 || lists[k].p[0] != '[')
            return false;
        size_t q = 1;
        while (q < lists[k].n && (lists[k].p[q] == ' ' || lists[k].p[q] == '\n'))
            q++;
        if (q < lists[k].n && lists[k].p[q] == ']')
            return false;
    }
    /* some Concrete Input is int()-parseable: "[\"\", \"32\", ...]" */
    for (size_t j = 0; j < ci.n; j++) {
        if (ci.p[j] != '"')
            continue;
        size_t e = j + 1;
        while (e < ci.n && ci.p[e] != '"' && ci.p[e] != '\\')
            e++;
        size_t b = j + 1, end = e;
        while (b < end && ci.p[b] == ' ')
            b++;
        while (end > b && ci.p[end - 1] == ' ')
            end--;
        if (b < end && (ci.p[b] == '-' || ci.p[b] == '+'))
            b++;
        bool digits = b < end;
        for (size_t q = b; q < end && digits; q++)
            digits = ci.p[q] >= '0' && ci.p[q] <= '9';
        if (digits)
            return true;
        while (e < ci.n && ci.p[e] != '"')
            e += ci.p[e] == '\\' ? 2 : 1;
        j = e;
    }
    return false;
}

static bool has_model(struct uctx *u, int32_t i)
{
    int32_t id = u->t->s->name[i];
    if (id < 0)
        return false;
    if (!u->model[id]) {
        const char *nm = mp_intern_str(u->t->s->strings, id);
        u->model[id] = mp_roofline_has_model(nm) ? 2 : 1;
        if (u->model[id] == 2 &&
            (!strncmp(nm, "triton_poi_", 11) || !strncmp(nm, "triton_red_", 11) ||
             !strncmp(nm, "triton_per_", 11)))
            u->model[id] = 3; /* decided per event */
    }
    if (u->model[id] == 3)
        return triton_can_model(u->t->s, i);
    return u->model[id] == 2;
}

static int collect(struct uctx *u, int32_t i)
{
    if (MP_GROW(u->collected, u->capc, u->ncollected + 1, 256))
        return MP_ENOMEM;
    u->collected[u->ncollected++] = i;
    u->is_collected[i] = 1;
    if (u->root_of)
        u->root_of[i] = u->cur_root;
    return 0;
}

/* ---- call stacks (TraceLens's _call_stack and per-kernel call_stack) ---- */

/* The frame id of event i: names holding "nn.Module", "::" or "/", and
 * every cpu_op, with each "_<digits>" removed (re.sub(r"_\d+", "", name)). */
static int32_t frame_of(struct uctx *u, int32_t i)
{
    if (u->frame_of[i] != -2)
        return u->frame_of[i];
    const char *nm = mp_trace_tree_name(u->t, i);
    int32_t id = -1;
    if (u->t->kind[i] == MP_K_CPU_OP || strstr(nm, "nn.Module") || strstr(nm, "::") ||
        strchr(nm, '/')) {
        size_t n = strlen(nm);
        char *buf = malloc(n + 1);
        if (!buf)
            return -3;
        id = mp_intern_add(u->frames, buf, tl_strip_digit_suffixes(nm, n, buf));
        free(buf);
        if (id < 0)
            return -3;
    }
    u->frame_of[i] = id;
    return id;
}

struct idvec {
    int32_t *v;
    size_t n, cap;
};

static int idv_push(struct idvec *a, int32_t x)
{
    if (MP_GROW(a->v, a->cap, a->n + 1, 32))
        return MP_ENOMEM;
    a->v[a->n++] = x;
    return 0;
}

/* Frames from node up to (excluding) stop, pushed innermost first; stop -1
 * walks to the root. */
static int frames_up(struct uctx *u, int32_t node, int32_t stop, struct idvec *out)
{
    for (int32_t p = node; p >= 0 && p != stop; p = u->t->parent[p]) {
        int32_t f = frame_of(u, p);
        if (f == -3 || (f >= 0 && idv_push(out, f)))
            return MP_ENOMEM;
    }
    return 0;
}

static void idv_reverse(struct idvec *a, size_t from)
{
    for (size_t i = from, j = a->n; i + 1 < j; i++, j--) {
        int32_t x = a->v[i];
        a->v[i] = a->v[j - 1];
        a->v[j - 1] = x;
    }
}

/* The call stack TraceLens gives kernel k of a row over event uid (its
 * _call_stack, then the frames from the kernel up to the row's event;
 * stop -1 for synthetic rows, whose copied UID never matches). False when
 * the row has none. */
static int kernel_stack(struct uctx *u, int32_t uid, int32_t stop, int32_t k, struct idvec *out,
                        bool *has)
{
    out->n = 0;
    *has = u->is_collected[uid] != 0;
    if (!*has)
        return 0;
    /* base: from the traversal root (a parentless python frame or a cpu
     * root; a graph-capture merge can leave a captured cpu root under a
     * python frame that did not walk into it) down to uid */
    int rc = frames_up(u, uid, u->t->parent[u->root_of[uid]], out);
    if (rc)
        return rc;
    idv_reverse(out, 0);
    size_t base = out->n;
    rc = frames_up(u, u->t->parent[k], stop, out);
    if (!rc)
        idv_reverse(out, base);
    return rc;
}

/* a GPU event reachable within `depth` levels through cuda_runtime or
 * python_function nodes only (TraceLens's _is_leaf_cpu_op) */
static bool kernel_below(const struct mp_trace_tree *t, int32_t i, int depth)
{
    if (depth <= 0)
        return false;
    for (int32_t k = t->child_off[i]; k < t->child_off[i + 1]; k++) {
        int32_t c = t->child[k];
        if (!mp_trace_tree_is_child(t, i, c))
            continue;
        uint8_t kind = t->kind[c];
        if (mp_kind_is_gpu(kind))
            return true;
        if ((kind == MP_K_RUNTIME || kind == MP_K_PYFUNC) && kernel_below(t, c, depth - 1))
            return true;
    }
    return false;
}

static bool descendant_with_model(struct uctx *u, int32_t i)
{
    const struct mp_trace_tree *t = u->t;
    for (int32_t k = t->child_off[i]; k < t->child_off[i + 1]; k++) {
        int32_t c = t->child[k];
        if (t->parent[c] != c && !mp_trace_tree_is_child(t, i, c))
            continue;
        uint8_t kind = t->kind[c];
        if (kind == MP_K_PYFUNC) {
            if (descendant_with_model(u, c))
                return true;
            continue;
        }
        if (kind != MP_K_CPU_OP)
            continue;
        if (has_model(u, c) && u->has_gpu[c])
            return true;
        if (descendant_with_model(u, c))
            return true;
    }
    return false;
}

/* Backward metrics of forward op f: its model's flops_bwd/bytes_bwd, timed
 * over the kernels of its linked backward nodes. pr is filled (fini it)
 * unless an error code is returned. */
static int model_bwd(struct uctx *u, int32_t f, struct mp_roofline_result *pr, double *kt)
{
    int32_t *k = NULL;
    size_t nk = 0;
    int rc = tl_model_op(u->t, u->annot, f, true, u->memo, &k, &nk, kt, pr);
    free(k);
    return rc;
}

/* Counts the kernel-launching cpu_op descendants of w (through cpu_ops only)
 * named `main` (any name when main is NULL). */
static size_t count_main_bwd(struct uctx *u, int32_t w, const char *main)
{
    const struct mp_trace_tree *t = u->t;
    size_t n = 0;
    for (int32_t k = t->child_off[w]; k < t->child_off[w + 1]; k++) {
        int32_t c = t->child[k];
        if (!mp_trace_tree_is_child(t, w, c) || t->kind[c] != MP_K_CPU_OP)
            continue;
        if (u->has_gpu[c] && (!main || strcmp(mp_trace_tree_name(t, c), main) == 0))
            n++;
        n += count_main_bwd(u, c, main);
    }
    return n;
}

/* TraceLens's _is_sole_bwd_with_fwd_perf_model: the forward op linked to an
 * ancestor (<= 5 levels) of i, when i is the only backward op of that
 * autograd node and the forward model has backward metrics; else -1. */
static int32_t sole_bwd_fwd(struct uctx *u, int32_t i, int *err)
{
    const struct mp_trace_tree *t = u->t;
    int32_t cur = i, w = -1;
    for (int lvl = 0; lvl < 5; lvl++) {
        int32_t p = t->parent[cur];
        if (p < 0)
            break;
        if (t->fwd_of[p] > 0) { /* a UID of 0 reads as "no link" in TraceLens */
            w = p;
            break;
        }
        cur = p;
    }
    if (w < 0)
        return -1;
    int32_t f = t->fwd_of[w];
    if (!has_model(u, f))
        return -1;
    const char *wn = mp_trace_tree_name(t, w), *sep = strstr(wn, ": ");
    if (count_main_bwd(u, w, sep ? sep + 2 : NULL) != 1)
        return -1;
    if (!u->bwd_ok[f]) {
        struct mp_roofline_result pr;
        double kt;
        int rc = model_bwd(u, f, &pr, &kt);
        if (rc) {
            *err = rc;
            return -1;
        }
        u->bwd_ok[f] =
            pr.status == MP_ROOFLINE_OK && pr.status_bwd == MP_ROOFLINE_OK && pr.category_bwd ? 2
                                                                                              : 1;
        mp_roofline_result_fini(&pr);
    }
    return u->bwd_ok[f] == 2 ? f : -1;
}

static int traverse_children(struct uctx *u, int32_t i);

/* Collects the rows under event i (TraceLens's unified-op traversal). */
static int traverse(struct uctx *u, int32_t i)
{
    const struct mp_trace_tree *t = u->t;
    if (u->visited[i])
        return 0;
    u->visited[i] = 1;
    /* with python functions in the tree every node is walked (python
     * frames are transparent), else only cpu_ops */
    if ((!t->python_functions && t->kind[i] != MP_K_CPU_OP) || !u->has_gpu[i])
        return 0;
    if (has_model(u, i))
        return collect(u, i);
    int err = 0;
    bool sole = sole_bwd_fwd(u, i, &err) >= 0;
    if (err)
        return err;
    if (sole && !descendant_with_model(u, i))
        return collect(u, i);
    if (descendant_with_model(u, i))
        return traverse_children(u, i);
    if (t->kind[i] == MP_K_CPU_OP && kernel_below(t, i, 10)) {
        bool any = false;
        for (int32_t k = t->child_off[i]; k < t->child_off[i + 1]; k++) {
            int32_t c = t->child[k];
            if (mp_trace_tree_is_child(t, i, c) && t->kind[c] == MP_K_CPU_OP && has_model(u, c) &&
                u->has_gpu[c]) {
                any = true;
                int rc = traverse(u, c);
                if (rc)
                    return rc;
            }
        }
        if (any || u->comm[i])
            return 0;
        return collect(u, i);
    }
    return traverse_children(u, i);
}

static int traverse_children(struct uctx *u, int32_t i)
{
    const struct mp_trace_tree *t = u->t;
    for (int32_t k = t->child_off[i]; k < t->child_off[i + 1]; k++) {
        if (!mp_trace_tree_is_child(t, i, t->child[k]))
            continue;
        int rc = traverse(u, t->child[k]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Python repr of a param value given as its str() text: literals (numbers,
 * tuples, True/False/None) print the same, plain strings get quotes. */
static int param_repr(struct mp_buf *b, const char *text, bool none)
{
    if (none)
        return mp_buf_puts(b, "None");
    char c = text[0];
    bool literal = c == '(' || c == '[' || c == '{' || c == '-' || (c >= '0' && c <= '9') ||
                   strcmp(text, "True") == 0 || strcmp(text, "False") == 0 ||
                   strcmp(text, "None") == 0 || strcmp(text, "nan") == 0 ||
                   strcmp(text, "inf") == 0;
    if (literal && c != '\0')
        return mp_buf_puts(b, text);
    return tl_pystr_repr(b, text, strlen(text));
}

/* The compute spec and perf_params of a model result. */
static int result_texts(struct uctx *u, const struct mp_roofline_result *pr, struct utexts *out)
{
    const char *spec = pr->compute_spec ? pr->compute_spec : "";
    out->spec = utext(u, spec, strlen(spec));
    out->params = NULL;
    if (!out->spec)
        return MP_ENOMEM;
    if (pr->n_params == 0)
        return 0;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_buf_putc(&b, '{');
    for (int q = 0; q < pr->n_params && !rc; q++) {
        rc = q ? mp_buf_puts(&b, ", ") : 0;
        rc = rc ? rc : tl_pystr_repr(&b, pr->params[q].key, strlen(pr->params[q].key));
        rc = rc ? rc : mp_buf_puts(&b, ": ");
        rc = rc ? rc : param_repr(&b, pr->params[q].text, pr->params[q].none);
    }
    rc = rc ? rc : mp_buf_putc(&b, '}');
    out->params = rc ? NULL : utext(u, mp_buf_cstr(&b), b.len);
    mp_buf_fini(&b);
    return !rc && !out->params ? MP_ENOMEM : rc;
}

/* result_texts, made once per memo slot (the texts of a slot never change). */
static int result_texts_memo(struct uctx *u, const struct mp_roofline_result *pr,
                             struct utexts *out)
{
    int32_t slot = pr->memo_slot;
    if (slot <= 0)
        return result_texts(u, pr, out);
    if (tl_gid_reserve(&u->slot_of, &u->cap_slot_of, slot))
        return MP_ENOMEM;
    if (u->slot_of[slot] >= 0) {
        *out = u->slots[u->slot_of[slot]];
        return 0;
    }
    int rc = result_texts(u, pr, out);
    if (!rc && MP_GROW(u->slots, u->capslots, u->nslots + 1, 64))
        rc = MP_ENOMEM;
    if (rc)
        return rc;
    u->slot_of[slot] = (int32_t)u->nslots;
    u->slots[u->nslots++] = *out;
    return 0;
}

/* Sets the row's metrics, roofline and perf_params from a model result
 * (forward or backward figures) and the row's kernel time. */
static int set_metrics(struct uctx *u, struct urow *r, const struct mp_roofline_result *pr,
                       bool bwd)
{
    bool has_bytes = bwd ? pr->has_bytes_bwd : pr->has_bytes;
    double bytes = bwd ? pr->bytes_bwd : pr->bytes;
    r->gflops = bwd ? pr->gflops_bwd : pr->gflops;
    r->tfs = r->kt > 0 ? (r->gflops / 1e3) / (r->kt / 1e6) : NAN;
    if (has_bytes) {
        r->mb = bytes / (1024.0 * 1024.0);
        r->fpb = bytes > 0 ? (r->gflops * 1e9) / bytes : NAN;
        r->tbs = r->kt > 0 ? (bytes / 1e12) / (r->kt / 1e6) : NAN;
    }
    struct utexts tx;
    int rc = result_texts_memo(u, pr, &tx);
    if (rc)
        return rc;
    r->spec = tx.spec;
    if (u->arch) {
        struct mp_roofline_roofline rl;
        mp_roofline_roofline(u->arch, r->spec, r->gflops, has_bytes, bytes, r->kt, &rl);
        r->rl.roofline_us = rl.roofline_us;
        r->rl.pct = rl.pct;
        r->rl.valid = rl.valid;
        r->rl.compute_bound = rl.compute_bound;
    }
    if (pr->n_params)
        r->params = tx.params;
    return 0;
}

/* A sole backward op: the category is the forward model's backward
 * category, the metrics its backward figures timed over the forward op's
 * backward kernels; kernel details stay the row's own. */
static int fill_sole_bwd(struct uctx *u, struct urow *r, int32_t f)
{
    struct mp_roofline_result pr;
    double kt;
    int rc = model_bwd(u, f, &pr, &kt);
    if (rc)
        return rc;
    r->has_model = true;
    r->status = MP_ROOFLINE_OK;
    r->category = pr.category_bwd;
    r->kt = kt;
    rc = set_metrics(u, r, &pr, true);
    mp_roofline_result_fini(&pr);
    return rc;
}

static int fill_row(struct uctx *u, struct urow *r)
{
    const struct mp_trace_tree *t = u->t;
    const struct mp_trace_store *s = t->s;
    r->gflops = r->mb = r->fpb = r->tbs = r->tfs = NAN;
    if (u->nkpool > INT32_MAX)
        return MP_ENOMEM;
    if (r->synthetic) { /* a collected row's kernels are in the pool already (collected_rows) */
        r->koff = (uint32_t)u->nkpool;
        if (MP_GROW(u->kpool, u->capkpool, u->nkpool + 1, 4096))
            return MP_ENOMEM;
        u->kpool[u->nkpool++] = r->kernel;
        r->nk = 1;
    }
    r->k = u->kpool + r->koff;
    r->kt = mp_trace_tree_busy(t, r->k, r->nk);
    int32_t fk = u->first_kernel[r->uid];
    r->category = r->synthetic
                      ? mp_roofline_category(r->name, fk >= 0 ? mp_trace_tree_name(t, fk) : NULL)
                      : tl_op_category(&u->cats, t, r->uid, fk);
    r->has_model = !r->synthetic && has_model(u, r->uid);
    if (!r->synthetic && !r->has_model) {
        int err = 0;
        int32_t f = sole_bwd_fwd(u, r->uid, &err);
        if (err)
            return err;
        if (f >= 0)
            return fill_sole_bwd(u, r, f);
    }
    if (!r->has_model)
        return 0;
    /* the model sees the op's kernels in ts order (scratch kept in u) */
    if (MP_GROW(u->knames, u->cap_knames, r->nk ? r->nk : 1, 64) ||
        MP_GROW(u->kord, u->cap_kord, r->nk ? r->nk : 1, 64))
        return MP_ENOMEM;
    const char **names = u->knames;
    struct kts *o = u->kord;
    for (size_t q = 0; q < r->nk; q++) {
        o[q].ts = s->ts[r->k[q]];
        o[q].i = (int32_t)q;
    }
    for (size_t a = 1; a < r->nk; a++) /* insertion sort: stable, lists are short */
        for (size_t b = a; b > 0 && o[b - 1].ts > o[b].ts; b--) {
            double ts = o[b].ts;
            int32_t ii = o[b].i;
            o[b] = o[b - 1];
            o[b - 1].ts = ts;
            o[b - 1].i = ii;
        }
    for (size_t q = 0; q < r->nk; q++)
        names[q] = mp_trace_tree_name(t, r->k[o[q].i]);
    struct mp_roofline_op op = {.name = r->name,
                                .args = s->args[r->uid],
                                .args_len = s->args_len[r->uid],
                                .annotation = u->annot ? u->annot[r->uid] : NULL,
                                .kernel_names = names,
                                .n_kernels = r->nk};
    struct mp_roofline_result pr;
    int rc = mp_roofline_model_memo(u->memo, &op, &pr);
    if (rc)
        return rc;
    r->status = pr.status;
    if (pr.status == MP_ROOFLINE_OK)
        rc = set_metrics(u, r, &pr, false);
    mp_roofline_result_fini(&pr);
    return rc;
}

static int cmp_ugrp(const void *a, const void *b)
{
    const struct tl_group *x = a, *y = b;
    if (x->base_kt != y->base_kt) /* kl_overlap: TraceLens's _group_total_time, */
        return x->base_kt > y->base_kt ? -1 : 1;
    if (x->base_uid != y->base_uid) /* _group_min_ex_uid; equal in the plain sheet */
        return x->base_uid < y->base_uid ? -1 : 1;
    if (x->kt_sum != y->kt_sum)
        return x->kt_sum > y->kt_sum ? -1 : 1;
    return x->uid < y->uid ? -1 : (x->uid > y->uid ? 1 : 0); /* ex_UID */
}

static int stats_over(const struct urow *rows, const struct tl_group *g, size_t off,
                      struct tl_stats *st, size_t *cnt)
{
    return tl_group_stats_over(g, rows, sizeof(*rows), off, st, cnt);
}

static double first_over(const struct urow *rows, const struct tl_group *g, size_t off)
{
    return tl_group_first(g, rows, sizeof(*rows), off);
}

/* ---- entry_point (TraceLens's _find_entry_point over call_stack_full) ---- */

static bool is_wrapper_frame(const char *f)
{
    static const char *const prefixes[] = {"<built-in", "pybind11_builtins", "nn.Module:"};
    static const char *const files[] = {"torch/_ops.py",
                                        "torch/nn/modules/module.py",
                                        "torch/utils/_contextlib.py",
                                        "torch/utils/_device.py",
                                        "torch/_tensor.py",
                                        "torch/functional.py",
                                        "torch/overrides.py",
                                        "torch/_inductor/",
                                        "torch/_functorch/",
                                        "torch/distributed/c10d_logger.py",
                                        "triton/backends/"};
    static const char *const funcs[] = {"__torch_function__",
                                        "_call_impl",
                                        "_wrapped_call_impl",
                                        "decorate_context",
                                        "dispatch_wrapper",
                                        "handle_torch_function",
                                        "wrapper",
                                        "custom_wrapper",
                                        "wrapper_custom",
                                        "outer_wrapper"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(f, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (strstr(f, files[i]))
            return true;
    const char *fn = NULL;
    for (const char *p = strstr(f, "): "); p; p = strstr(p + 1, "): "))
        fn = p + 3;
    for (size_t i = 0; fn && i < sizeof(funcs) / sizeof(funcs[0]); i++)
        if (strcmp(fn, funcs[i]) == 0)
            return true;
    return false;
}

/* ASCII-lowercased copy of the function part of a frame ("file.py(12): fn"). */
static char *func_lower(const char *f)
{
    const char *fn = f;
    for (const char *p = strstr(f, "): "); p; p = strstr(p + 1, "): "))
        fn = p + 3;
    char *r = mp_strdup(fn);
    for (char *c = r; c && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return r;
}

/* The entry point of op over the flattened call stack, or "Not found". */
static const char *entry_point(const char *op, const char *const *flat, size_t n)
{
    long at = -1;
    for (size_t i = n; i-- > 0 && at < 0;)
        if (strcmp(flat[i], op) == 0)
            at = (long)i;
    if (at < 0) { /* retry with a trailing "_<digits>" removed */
        size_t len = strlen(op), e = len;
        while (e > 0 && op[e - 1] >= '0' && op[e - 1] <= '9')
            e--;
        if (e < len && e > 0 && op[e - 1] == '_') {
            e--;
            for (size_t i = n; i-- > 0 && at < 0;)
                if (strlen(flat[i]) == e && strncmp(flat[i], op, e) == 0)
                    at = (long)i;
        }
    }
    if (at < 0)
        return "Not found";
    const char *sep = NULL;
    for (const char *p = strstr(op, "::"); p; p = strstr(p + 2, "::"))
        sep = p + 2;
    char *local = mp_strdup(sep ? sep : op);
    for (char *c = local; c && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    const char *found = NULL;
    for (size_t i = (size_t)at + 1; local && i < n && !found; i++) {
        if (!strstr(flat[i], ".py"))
            continue;
        char *fn = func_lower(flat[i]);
        if (fn && strstr(fn, local))
            found = flat[i];
        free(fn);
    }
    free(local);
    for (long i = at - 1; i >= 0 && !found; i--)
        if (strstr(flat[i], ".py") && !is_wrapper_frame(flat[i]))
            found = flat[i];
    return found ? found : "Not found";
}

/* call_stack_full and entry_point of a group: chains[i] = kernel i's call
 * stack plus its name, in kernel_details_summary order. */
static int full_stack_cells(const char *op, char ***chains, const size_t *len, size_t nk,
                            struct mp_csv *csv, struct mp_buf *cell)
{
    mp_buf_reset(cell);
    if (nk == 0) {
        int rc = mp_csv_str(csv, "Not found");
        return rc ? rc : mp_csv_str(csv, "Not found");
    }
    size_t prefix = 0;
    if (nk > 1) {
        size_t minl = len[0];
        for (size_t i = 1; i < nk; i++)
            minl = len[i] < minl ? len[i] : minl;
        for (; prefix < minl; prefix++) {
            bool same = true;
            for (size_t i = 1; i < nk && same; i++)
                same = strcmp(chains[i][prefix], chains[0][prefix]) == 0;
            if (!same)
                break;
        }
    }
    /* flat list for the entry point; distinct tails in order */
    size_t total = 0;
    for (size_t i = 0; i < nk; i++)
        total += len[i];
    const char **flat = malloc((total + 1) * sizeof(char *));
    bool *keep = calloc(nk, 1);
    if (!flat || !keep) {
        free(flat);
        free(keep);
        return MP_ENOMEM;
    }
    size_t nf = 0;
    int rc = 0;
    if (nk == 1) {
        for (size_t j = 0; j < len[0]; j++)
            flat[nf++] = chains[0][j];
        rc = tl_pylist_repr(cell, flat, nf);
    } else {
        for (size_t j = 0; j < prefix; j++)
            flat[nf++] = chains[0][j];
        for (size_t i = 0; i < nk; i++) {
            keep[i] = true;
            for (size_t q = 0; q < i && keep[i]; q++) {
                if (!keep[q] || len[q] != len[i])
                    continue;
                bool same = true;
                for (size_t j = prefix; j < len[i] && same; j++)
                    same = strcmp(chains[q][j], chains[i][j]) == 0;
                if (same)
                    keep[i] = false;
            }
        }
        rc = mp_buf_putc(cell, '[');
        for (size_t j = 0; j < prefix && !rc; j++) {
            rc = j ? mp_buf_puts(cell, ", ") : 0;
            rc = rc ? rc : tl_pystr_repr(cell, chains[0][j], strlen(chains[0][j]));
        }
        bool first = prefix == 0;
        for (size_t i = 0; i < nk && !rc; i++) {
            if (!keep[i])
                continue;
            rc = first ? 0 : mp_buf_puts(cell, ", ");
            first = false;
            rc =
                rc ? rc
                   : tl_pylist_repr(cell, (const char *const *)chains[i] + prefix, len[i] - prefix);
            for (size_t j = prefix; j < len[i]; j++)
                flat[nf++] = chains[i][j];
        }
        rc = rc ? rc : mp_buf_putc(cell, ']');
    }
    const char *ep = rc ? NULL : entry_point(op, flat, nf);
    rc = rc ? rc : mp_csv_str(csv, ep);
    rc = rc ? rc : mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
    free(flat);
    free(keep);
    return rc;
}

/* ---- unified_perf_summary: group, sort, emit ---- */

/* Row w's group key: str() of name, category, process/thread names and args
 * (and is_recompute), joined by \x1f as they are printed; with ov the
 * overlapping kernel names follow the name and *bid is the id of the key
 * without them. */
static int row_key(const struct uctx *u, const struct urow *w, struct tl_argkeys *ak,
                   struct tl_meta_names *meta, struct tl_overlap *ov, struct mp_intern *bkeys,
                   struct mp_buf *key, int32_t *bid)
{
    const struct mp_trace_tree *t = u->t;
    const struct mp_trace_store *s = t->s;
    mp_buf_reset(key);
    const char *const *mn = tl_meta_names_of(meta, s, w->uid);
    if (!mn)
        return MP_ENOMEM;
    const char *cells[5] = {w->name, w->category, mn[0], mn[1], mn[2]};
    const struct tl_ovinfo *oi = NULL;
    int rc = 0;
    if (ov) /* a synthetic row has its parent's info, else its one kernel's */
        rc = w->synthetic ? tl_overlap_kernel(ov, w->uid, w->kernel, &oi)
                          : tl_overlap_unified(ov, w->uid, &oi);
    for (int c = 0; c < 5 && !rc; c++) {
        rc = c ? mp_buf_putc(key, '\x1f') : 0;
        rc = rc ? rc : mp_buf_puts(key, cells[c]);
    }
    const char *ak4 = rc ? NULL : tl_argkeys_get(ak, s, w->uid);
    if (!rc && !ak4)
        rc = MP_ENOMEM;
    rc = rc ? rc : mp_buf_putc(key, '\x1f');
    rc = rc ? rc : mp_buf_puts(key, ak4);
    if (t->recompute) /* a synthetic row copies its parent's flag */
        rc = rc ? rc
                : mp_buf_puts(key, t->recompute[w->uid] ? "\x1fTrue"
                                                        : "\x1f"
                                                          "False");
    *bid = -1;
    if (ov && !rc) { /* the names column follows name */
        if ((*bid = mp_intern_add(bkeys, key->data, key->len)) < 0)
            return MP_ENOMEM;
        const char *nm = tl_ovinfo_names(oi);
        size_t l0 = strlen(w->name);
        rc = mp_buf_reserve(key, strlen(nm) + 1);
        if (!rc) {
            memmove(key->data + l0 + 1 + strlen(nm), key->data + l0, key->len - l0);
            key->data[l0] = '\x1f';
            memcpy(key->data + l0 + 1, nm, strlen(nm));
            key->len += strlen(nm) + 1;
        }
    }
    return rc;
}

/* Adds row r to the group of key, a new group at the key's first row;
 * *gi the group. */
static int group_add(struct tl_groups *gs, const struct urow *rows, size_t r,
                     const struct mp_buf *key, int32_t bid, int32_t *gi)
{
    struct tl_group *G;
    bool created;
    int rc = tl_groups_add(gs, key, bid, r, rows[r].kt, &G, &created);
    *gi = rc ? -1 : (int32_t)(G - gs->g);
    if (rc || !created)
        return rc;
    G->uid = rows[r].ex_uid;
    mp_buf_init(&G->key, 0);
    return mp_buf_append(&G->key, key->data, key->len);
}

/* Row w's key parts without overlap info: what row_key is made of, as
 * texts that stay put while the rows are grouped (equal pointers, equal
 * texts) and ids, packed (no padding bytes), so equal parts make equal keys;
 * *len their length. */
static int row_parts(const struct uctx *u, const struct urow *w, struct tl_argkeys *ak, char *pb,
                     size_t *len)
{
    const struct mp_trace_store *s = u->t->s;
    const char *ptrs[3] = {w->name, w->category, tl_argkeys_get(ak, s, w->uid)};
    if (!ptrs[2])
        return MP_ENOMEM;
    int32_t ids[2] = {s->pid[w->uid], s->tid[w->uid]};
    memcpy(pb, ptrs, sizeof(ptrs));
    memcpy(pb + sizeof(ptrs), ids, sizeof(ids));
    pb[sizeof(ptrs) + sizeof(ids)] = (char)(u->t->recompute ? u->t->recompute[w->uid] : 0);
    *len = sizeof(ptrs) + sizeof(ids) + 1;
    return 0;
}

/* Groups the kept rows (uid >= 0) by their keys, in first-appearance order;
 * without overlap info the text key is built only at the first row of its
 * parts (row_parts), the others go to the group their parts have. */
static int group_rows(const struct uctx *u, const struct urow *rows, size_t nrows,
                      struct tl_argkeys *ak, const struct tl_meta *meta, struct tl_overlap *ov,
                      struct tl_groups *gs)
{
    if (tl_groups_init(gs, nrows, ov != NULL))
        return MP_ENOMEM;
    struct mp_buf key;
    mp_buf_init(&key, 0);
    struct tl_meta_names mn;
    tl_meta_names_init(&mn, meta);
    struct mp_intern *parts = ov ? NULL : mp_intern_new();
    int32_t *pgroup = NULL; /* parts id -> group, -1 before its first row */
    size_t cap_pgroup = 0;
    int rc = ov || parts ? 0 : MP_ENOMEM;
    for (size_t r = 0; r < nrows && !rc; r++) {
        if (rows[r].uid < 0)
            continue;
        int32_t part_id = -1;
        if (parts) {
            char pb[64];
            size_t pl;
            rc = row_parts(u, &rows[r], ak, pb, &pl);
            part_id = rc ? -1 : mp_intern_add(parts, pb, pl);
            if (!rc && (part_id < 0 || tl_gid_reserve(&pgroup, &cap_pgroup, part_id)))
                rc = MP_ENOMEM;
            if (!rc && pgroup[part_id] >= 0) {
                rc = tl_groups_add_to(gs, (size_t)pgroup[part_id], r, rows[r].kt);
                continue;
            }
        }
        int32_t bid = -1, gi = -1;
        /* any failure while building the key reads as out of memory */
        rc = rc ? rc : row_key(u, &rows[r], ak, &mn, ov, gs->bkeys, &key, &bid) ? MP_ENOMEM : 0;
        rc = rc ? rc : group_add(gs, rows, r, &key, bid, &gi);
        if (!rc && part_id >= 0)
            pgroup[part_id] = gi;
    }
    mp_intern_free(parts);
    free(pgroup);
    tl_meta_names_fini(&mn);
    mp_buf_fini(&key);
    return rc;
}

/* Sorts the groups by total kernel time as pandas sums it (kl_overlap: by
 * their base totals first); *total is the sorted column's sum. */
static int sort_groups(const struct urow *rows, struct tl_groups *gs, bool ov, double *total)
{
    struct tl_group *g = gs->g;
    size_t ng = gs->ng;
    /* groupby(sort=False): the rows' group ids never decrease when every
     * group's rows are contiguous; Kernel Time (µs)_sum as pandas sums it */
    bool contiguous = true;
    for (size_t q = 0; q < ng && contiguous; q++)
        contiguous = g[q].n == 0 || g[q].m[g[q].n - 1] - g[q].m[0] + 1 == g[q].n;
    int rc = 0;
    for (size_t q = 0; q < ng && !rc; q++) {
        struct tl_stats st;
        size_t cnt;
        g[q].ids_sorted = contiguous;
        rc = stats_over(rows, &g[q], offsetof(struct urow, kt), &st, &cnt);
        g[q].kt_sum = st.sum;
    }
    if (!rc)
        rc = ov ? tl_groups_base_order(gs) : 0;
    if (rc)
        return rc;
    qsort(g, ng, sizeof(*g), cmp_ugrp);
    /* Series.sum of the sorted column: numpy's pairwise sum */
    double *kts_sorted = malloc((ng ? ng : 1) * sizeof(double));
    if (!kts_sorted)
        return MP_ENOMEM;
    for (size_t i = 0; i < ng; i++)
        kts_sorted[i] = g[i].kt_sum;
    *total = mp_sum_pairwise(kts_sorted, ng);
    free(kts_sorted);
    return 0;
}

/* The statistics blocks of a group (uemit.st). */
enum { US_DUR, US_TBS, US_TFS, US_KT, US_PCT, US_N };

/* Per-kernel call stacks of a group's template row: made for the kernel
 * details cells, printed again as call_stack_full. */
struct kstacks {
    char ***chains; /* per kernel: its frames, then its name */
    size_t *clen;
    size_t *order; /* the kernels in the order the details print them */
    char **kdst;   /* per kernel: its stack as a Python list, for the details */
    size_t nk;
    bool has; /* the row has call stacks */
};

static void kstacks_fini(struct kstacks *ks)
{
    for (size_t q = 0; ks->chains && q < ks->nk; q++)
        free(ks->chains[q]);
    for (size_t q = 0; ks->kdst && q < ks->nk; q++)
        free(ks->kdst[q]);
    free(ks->chains);
    free(ks->clen);
    free(ks->order);
    free(ks->kdst);
    memset(ks, 0, sizeof(*ks));
}

/* What the value functions of the column table see while one group's row is
 * printed. */
struct tl_emit {
    struct uctx *u;
    const struct urow *rows;
    struct tl_group *G; /* the group being printed */
    struct tl_overlap *ov;
    bool stacks, kd_stacks;
    struct mp_csv *csv;
    struct mp_buf *cell;
    double total, cum; /* kernel time of all groups; percentage so far */
    /* the group's figures, made by measure_group */
    struct tl_stats st[US_N];
    size_t cnt[US_N];
    const char *spec;      /* first compute spec of a row with metrics */
    const struct urow *rl; /* first row with roofline figures */
    struct kstacks ks;
};

/* The statistics a row of the sheet prints, over the group's rows. */
static int measure_group(struct tl_emit *e)
{
    const struct tl_group *G = e->G;
    const struct urow *rows = e->rows;
    const struct mp_trace_store *s = e->u->t->s;
    memset(e->st, 0, sizeof(e->st));
    memset(e->cnt, 0, sizeof(e->cnt));
    double *v = malloc((G->n ? G->n : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0; /* duration_us = the (copied) event's dur */
    for (size_t i = 0; i < G->n; i++) {
        int32_t uid = rows[G->m[i]].uid;
        if (s->flags[uid] & MP_EV_DUR)
            v[k++] = s->dur[uid];
    }
    int rc = tl_group_stats(v, k, G->ids_sorted && k == G->n, &e->st[US_DUR]);
    e->cnt[US_DUR] = k;
    if (e->u->arch && !rc) {
        k = 0;
        for (size_t i = 0; i < G->n; i++) {
            const struct urow *w = &rows[G->m[i]];
            if (w->rl.valid && !isnan(w->rl.pct))
                v[k++] = w->rl.pct;
        }
        rc = tl_group_stats(v, k, G->ids_sorted && k == G->n, &e->st[US_PCT]);
        e->cnt[US_PCT] = k;
    }
    free(v);
    rc = rc ? rc : stats_over(rows, G, offsetof(struct urow, tbs), &e->st[US_TBS], &e->cnt[US_TBS]);
    rc = rc ? rc : stats_over(rows, G, offsetof(struct urow, tfs), &e->st[US_TFS], &e->cnt[US_TFS]);
    rc = rc ? rc : stats_over(rows, G, offsetof(struct urow, kt), &e->st[US_KT], &e->cnt[US_KT]);
    e->spec = "";
    e->rl = NULL;
    for (size_t i = 0; i < G->n; i++) {
        const struct urow *w = &rows[G->m[i]];
        if (!e->spec[0] && w->has_model && w->status == MP_ROOFLINE_OK && w->spec)
            e->spec = w->spec;
        if (!e->rl && w->rl.valid)
            e->rl = w;
    }
    return rc;
}

enum { UC_OV = 1, UC_RECOMP = 2, UC_ARCH = 4, UC_CS = 8 };

/* Every key cell: name [, overlapping_kernel_names], op category, process
 * and thread names, the four args [, is_recompute]. */
static int c_key(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return tl_csv_key_cells(e->csv, &e->G->key);
}

static int c_ex_uid(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%d", e->G->uid);
}

static int c_count(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%zu", e->G->n);
}

/* A figure of a statistics block: the sum always, std when there is one,
 * the others over at least one value. */
static int c_stat(struct tl_emit *e, const struct tl_col *c)
{
    return tl_stat_cell(e->csv, e->cell, &e->st[c->stat], e->cnt[c->stat], c->field);
}

/* The first value of a row field over the group. */
static int c_first(struct tl_emit *e, const struct tl_col *c)
{
    return tl_csv_float(e->csv, e->cell, first_over(e->rows, e->G, c->field), true);
}

static int c_spec(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, e->spec);
}

static int c_bound(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv,
                      e->rl ? (e->rl->rl.compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND") : "");
}

static int c_roofline_time(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return tl_csv_float(e->csv, e->cell, e->rl ? e->rl->rl.roofline_us : NAN, e->rl != NULL);
}

static const int32_t *urow_kernels(const void *rows, size_t r, size_t *nk)
{
    const struct urow *w = (const struct urow *)rows + r;
    *nk = w->nk;
    return w->k;
}

/* The call stack of each kernel of template row rt (e->ks). */
static int template_stacks(struct tl_emit *e, const struct urow *rt)
{
    struct kstacks *ks = &e->ks;
    size_t nk = rt->nk;
    ks->nk = nk;
    ks->chains = calloc(nk, sizeof(char **));
    ks->clen = calloc(nk, sizeof(size_t));
    ks->order = calloc(nk, sizeof(size_t));
    ks->kdst = calloc(nk, sizeof(char *));
    if (!ks->chains || !ks->clen || !ks->order || !ks->kdst)
        return MP_ENOMEM;
    struct idvec iv = {0};
    struct mp_buf rbuf;
    mp_buf_init(&rbuf, 0);
    int rc = 0;
    for (size_t q = 0; q < nk && !rc; q++) {
        bool has = false;
        rc = kernel_stack(e->u, rt->uid, rt->synthetic ? -1 : rt->uid, rt->k[q], &iv, &has);
        ks->has = has;
        ks->chains[q] = rc ? NULL : calloc(iv.n + 1, sizeof(char *));
        if (!rc && !ks->chains[q])
            rc = MP_ENOMEM;
        for (size_t j = 0; j < iv.n && !rc; j++)
            ks->chains[q][j] = (char *)mp_intern_str(e->u->frames, iv.v[j]);
        if (rc)
            break;
        ks->clen[q] = iv.n;
        if (has && e->kd_stacks) {
            mp_buf_reset(&rbuf);
            rc = tl_pylist_repr(&rbuf, (const char *const *)ks->chains[q], iv.n);
            ks->kdst[q] = rc ? NULL : mp_strdup(mp_buf_cstr(&rbuf));
            if (!rc && !ks->kdst[q])
                rc = MP_ENOMEM;
        }
        ks->chains[q][ks->clen[q]++] = (char *)mp_trace_tree_name(e->u->t, rt->k[q]);
    }
    free(iv.v);
    mp_buf_fini(&rbuf);
    return rc;
}

/* kernel_details_summary and trunc_kernel_details: the template is the
 * group's first non-empty kernel list. */
static int c_kernel_details(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    size_t tr = tl_group_template(e->G, e->rows, urow_kernels);
    const struct urow *rt = &e->rows[tr];
    int rc = e->stacks && rt->nk > 0 ? template_stacks(e, rt) : 0;
    const char *const *kdst = e->ks.has && e->kd_stacks ? (const char *const *)e->ks.kdst : NULL;
    return rc ? rc
              : tl_group_kernel_details(e->u->t, e->G, e->rows, urow_kernels, tr, kdst, e->ks.order,
                                        e->csv, e->cell);
}

/* The overlap column block (kl_overlap sheet). */
static int c_overlap(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    const struct tl_group *G = e->G;
    const struct tl_ovinfo **mi =
        malloc((G->n ? G->n : 1) * sizeof(*mi)); // NOLINT(bugprone-sizeof-expression)
    int rc = mi ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < G->n && !rc; i++) {
        const struct urow *w = &e->rows[G->m[i]];
        rc = w->synthetic ? tl_overlap_kernel(e->ov, w->uid, w->kernel, &mi[i])
                          : tl_overlap_unified(e->ov, w->uid, &mi[i]);
    }
    rc = rc ? rc : tl_overlap_cells(mi, G->n, true, e->csv, e->cell);
    free(mi);
    return rc;
}

static int c_params(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    const char *params = NULL;
    for (size_t i = 0; i < e->G->n && !params; i++)
        params = e->rows[e->G->m[i]].params;
    return mp_csv_str(e->csv, params ? params : "");
}

static int c_has_model(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, e->rows[e->G->m[0]].has_model ? "True" : "False");
}

/* entry_point and call_stack_full, the template's stacks in printed order. */
static int c_call_stack(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    const struct kstacks *ks = &e->ks;
    size_t nk = ks->chains ? ks->nk : 0;
    char ***ch2 = NULL;
    size_t *len2 = NULL;
    int rc = 0;
    if (nk > 0) {
        ch2 = malloc(nk * sizeof(char **));
        len2 = malloc(nk * sizeof(size_t));
        if (!ch2 || !len2)
            rc = MP_ENOMEM;
        for (size_t q = 0; q < nk && !rc; q++) {
            ch2[q] = ks->chains[ks->order[q]];
            len2[q] = ks->clen[ks->order[q]];
        }
    }
    rc = rc ? rc
            : full_stack_cells(e->rows[e->G->m[0]].name, ch2, len2, ch2 ? nk : 0, e->csv, e->cell);
    free(ch2);
    free(len2);
    return rc;
}

static int c_pct(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    double pct = e->G->kt_sum / e->total * 100;
    e->cum += pct;
    return tl_csv_float(e->csv, e->cell, pct, true);
}

static int c_cum(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return tl_csv_float(e->csv, e->cell, e->cum, true);
}

#define USTAT(h, w, blk, f) TL_STAT(h, w, c_stat, blk, f)
#define UFIRST(h, f) TL_FIELD(h, c_first, struct urow, f)

/* The columns of unified_perf_summary and its kl_overlap twin. */
static const struct tl_col ucols[] = {
    TL_COL("name", 0, c_key),
    TL_KEY("overlapping_kernel_names", UC_OV),
    TL_KEY("op category", 0),
    TL_META_KEYS,
    TL_ARGS_KEYS,
    TL_KEY("is_recompute", UC_RECOMP),
    TL_COL("ex_UID", 0, c_ex_uid),
    TL_COL("operation_count", 0, c_count),
    USTAT("total_duration_us", 0, US_DUR, sum),
    USTAT("mean_duration_us", 0, US_DUR, mean),
    USTAT("std_duration_us", 0, US_DUR, std),
    UFIRST("GFLOPS", gflops),
    UFIRST("Data Moved (MB)", mb),
    UFIRST("FLOPS/Byte", fpb),
    TL_COL("Compute Spec", 0, c_spec),
    TL_COL("Roofline Bound", UC_ARCH, c_bound),
    USTAT("TB/s_mean", 0, US_TBS, mean),
    USTAT("TB/s_std", 0, US_TBS, std),
    USTAT("TFLOPS/s_mean", 0, US_TFS, mean),
    USTAT("TFLOPS/s_std", 0, US_TFS, std),
    USTAT("Kernel Time (µs)_mean", 0, US_KT, mean),
    USTAT("Kernel Time (µs)_std", 0, US_KT, std),
    USTAT("Kernel Time (µs)_sum", 0, US_KT, sum),
    USTAT("duration_us_median", 0, US_DUR, median),
    USTAT("duration_us_min", 0, US_DUR, min),
    USTAT("duration_us_max", 0, US_DUR, max),
    USTAT("TB/s_median", 0, US_TBS, median),
    USTAT("TB/s_min", 0, US_TBS, min),
    USTAT("TB/s_max", 0, US_TBS, max),
    USTAT("TFLOPS/s_median", 0, US_TFS, median),
    USTAT("TFLOPS/s_min", 0, US_TFS, min),
    USTAT("TFLOPS/s_max", 0, US_TFS, max),
    TL_COL("Roofline Time (µs)_first", UC_ARCH, c_roofline_time),
    USTAT("Pct Roofline_mean", UC_ARCH, US_PCT, mean),
    USTAT("Pct Roofline_median", UC_ARCH, US_PCT, median),
    USTAT("Pct Roofline_std", UC_ARCH, US_PCT, std),
    USTAT("Pct Roofline_min", UC_ARCH, US_PCT, min),
    USTAT("Pct Roofline_max", UC_ARCH, US_PCT, max),
    USTAT("Kernel Time (µs)_median", 0, US_KT, median),
    USTAT("Kernel Time (µs)_min", 0, US_KT, min),
    USTAT("Kernel Time (µs)_max", 0, US_KT, max),
    TL_COL("kernel_details_summary", 0, c_kernel_details),
    TL_KEY("trunc_kernel_details", 0),
    TL_COL("overlapping_kernels_details_summary", UC_OV, c_overlap),
    TL_OVERLAP_KEYS(UC_OV),
    TL_COL("perf_params", 0, c_params),
    TL_COL("has_perf_model", 0, c_has_model),
    TL_COL("entry_point", UC_CS, c_call_stack),
    TL_KEY("call_stack_full", UC_CS),
    TL_COL("Percentage (%)", 0, c_pct),
    TL_COL("Cumulative Percentage (%)", 0, c_cum),
};

#define N_UCOLS (sizeof(ucols) / sizeof(ucols[0]))

/* One group's row, column by column. */
static int emit_group(struct tl_emit *e, unsigned when)
{
    int rc = measure_group(e);
    rc = rc ? rc : tl_cols_cells(e, ucols, N_UCOLS, when);
    kstacks_fini(&e->ks);
    return rc ? rc : mp_csv_end_row(e->csv);
}

/* Groups the rows and writes unified_perf_summary; with ov its kl_overlap
 * twin: the groups also split by the overlapping kernel names (ordered
 * after the total of their other keys), the overlap column blocks, kernel
 * call stacks kept in the details and no call_stack_full. */
static int render_summary(struct uctx *u, struct mp_report *rep, struct urow *rows, size_t nrows,
                          struct tl_argkeys *ak, const struct mp_report_opts *o,
                          const struct tl_meta *meta, bool stacks, bool kd_stacks,
                          struct tl_overlap *ov,
                          struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    bool cs = o->include_call_stack && !ov; /* entry_point, call_stack_full */
    unsigned when = (ov ? UC_OV : 0) | (u->t->recompute ? UC_RECOMP : 0) | (u->arch ? UC_ARCH : 0) |
                    (cs ? UC_CS : 0);
    struct tl_emit e = {.u = u,
                        .rows = rows,
                        .ov = ov,
                        .stacks = stacks,
                        /* TraceLens summarizes the kl_overlap twin without include_call_stack */
                        .kd_stacks = ov ? stacks : kd_stacks};
    struct tl_groups gs = {0};
    int rc = group_rows(u, rows, nrows, ak, meta, ov, &gs);
    rc = rc ? rc : sort_groups(rows, &gs, ov != NULL, &e.total);
    struct mp_buf *b =
        rc ? NULL : new_sheet(rep, ov ? "unified_perf_summary_kl_overlap" : "unified_perf_summary");
    if (!rc && !b)
        rc = MP_ENOMEM;
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    e.csv = &csv;
    e.cell = &cell;
    if (!rc) {
        mp_csv_init(&csv, b, "\n");
        rc = tl_cols_header(b, ucols, N_UCOLS, when);
    }
    for (size_t gi = 0; gi < gs.ng && !rc; gi++) {
        e.G = &gs.g[gi];
        rc = emit_group(&e, when);
    }
    mp_buf_fini(&cell);
    tl_groups_fini(&gs);
    return rc;
}

/* The rows of the sheet, grown as synthetic rows are added. */
struct urows {
    struct urow *v;
    size_t n, cap;
};

static int uctx_init(struct uctx *u, bool stacks)
{
    const struct mp_trace_tree *t = u->t;
    size_t n = t->n ? t->n : 1;
    u->is_collected = calloc(n, 1);
    u->texts = mp_intern_new();
    if (stacks) {
        u->root_of = malloc(n * sizeof(int32_t));
        u->frames = mp_intern_new();
        u->frame_of = malloc(n * sizeof(int32_t));
        for (size_t i = 0; u->frame_of && i < n; i++)
            u->frame_of[i] = -2;
    }
    u->has_gpu = calloc(n, 1);
    u->comm = calloc(n, 1);
    u->model = calloc((size_t)mp_intern_count(t->s->strings) + 1, 1);
    u->visited = calloc(n, 1);
    u->in_collected_gpu = calloc(n, 1);
    u->bwd_ok = calloc(n, 1);
    return u->has_gpu && u->comm && u->model && u->visited && u->in_collected_gpu && u->bwd_ok &&
                   u->is_collected && u->texts &&
                   (!stacks || (u->frames && u->frame_of && u->root_of))
               ? 0
               : MP_ENOMEM;
}

static void uctx_fini(struct uctx *u)
{
    free(u->kpool);
    free(u->has_gpu);
    free(u->comm);
    free(u->model);
    free(u->visited);
    free(u->collected);
    free(u->in_collected_gpu);
    free(u->bwd_ok);
    free(u->is_collected);
    free(u->root_of);
    mp_intern_free(u->texts);
    free(u->frame_of);
    mp_intern_free(u->frames);
    free(u->slot_of);
    free(u->slots);
    tl_catmemo_fini(&u->cats);
    free(u->knames);
    free(u->kord);
}

/* Subtree GPU and communication flags, walking up from each GPU event until
 * an ancestor already has what this walk would give it (an earlier walk
 * through it marked everything above). A pseudo op is not on its kernels'
 * parent chains; it gets the GPU events below it (TraceLens gives it
 * gpu_events = its kernel). */
static int mark_gpu_subtrees(struct uctx *u)
{
    const struct mp_trace_tree *t = u->t;
    for (size_t i = 0; i < t->n; i++) {
        if (!mp_kind_is_gpu(t->kind[i]))
            continue;
        for (int32_t p = t->parent[i]; p >= 0; p = t->parent[p]) {
            if (u->has_gpu[p] && (!t->comm[i] || u->comm[p]))
                break;
            u->has_gpu[p] = 1;
            if (t->comm[i])
                u->comm[p] = 1;
        }
    }
    int32_t *pbuf = NULL;
    size_t pcap = 0;
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc && t->pseudo; i++) {
        size_t pn = 0;
        long got = t->pseudo[i] ? mp_trace_tree_gpu_events(t, (int32_t)i, &pbuf, &pn, &pcap) : 0;
        if (got < 0)
            rc = (int)got;
        for (size_t q = 0; q < pn && !rc; q++) {
            u->has_gpu[i] = 1;
            if (t->comm[pbuf[q]])
                u->comm[i] = 1;
        }
    }
    free(pbuf);
    return rc;
}

struct uroot {
    double ts;
    int32_t i;
};

/* The outermost cpu_ops in host-tree order (by ts, stable), then those
 * grafted by a graph-capture merge in graft order. */
static size_t list_roots(const struct mp_trace_tree *t, struct uroot *roots)
{
    size_t nr = 0;
    for (size_t i = 0; i < t->n_base; i++)
        if (t->cpu_root[i]) {
            roots[nr].ts = t->s->ts[i];
            roots[nr].i = (int32_t)i;
            nr++;
        }
    /* stable sort by ts (merge via insertion on nearly sorted data) */
    for (size_t a = 1; a < nr; a++)
        for (size_t b = a; b > 0 && roots[b - 1].ts > roots[b].ts; b--) {
            struct uroot r = roots[b];
            roots[b] = roots[b - 1];
            roots[b - 1] = r;
        }
    for (size_t i = t->n_base; i < t->n; i++)
        if (t->cpu_root[i]) {
            roots[nr].ts = t->s->ts[i];
            roots[nr].i = (int32_t)i;
            nr++;
        }
    return nr;
}

/* Collects the ops of the sheet: python funcs in the tree first
 * (parentless python frames with GPU work, in trace order), then the
 * outermost cpu_ops. */
static int collect_ops(struct uctx *u)
{
    const struct mp_trace_tree *t = u->t;
    struct uroot *roots = malloc((t->n ? t->n : 1) * sizeof(*roots));
    if (!roots)
        return MP_ENOMEM;
    size_t nr = list_roots(t, roots);
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc && t->python_functions; i++)
        if (t->kind[i] == MP_K_PYFUNC && t->parent[i] < 0 && u->has_gpu[i]) {
            u->cur_root = (int32_t)i;
            rc = traverse(u, (int32_t)i);
        }
    for (size_t k = 0; k < nr && !rc; k++) {
        u->cur_root = roots[k].i;
        rc = traverse(u, roots[k].i);
    }
    free(roots);
    return rc;
}

/* One row per collected op; their GPU events are marked as covered. */
static int collected_rows(struct uctx *u, struct urows *R)
{
    const struct mp_trace_tree *t = u->t;
    R->cap = u->ncollected + 64;
    R->v = calloc(R->cap, sizeof(*R->v));
    if (!R->v)
        return MP_ENOMEM;
    for (size_t c = 0; c < u->ncollected; c++) {
        int32_t i = u->collected[c];
        if (u->nkpool > INT32_MAX)
            return MP_ENOMEM;
        /* the row's kernels (its subtree's GPU events) go to the pool */
        size_t k0 = u->nkpool;
        long got = mp_trace_tree_gpu_events(t, i, &u->kpool, &u->nkpool, &u->capkpool);
        if (got < 0)
            return (int)got;
        R->v[R->n++] = (struct urow){.uid = i,
                                     .kernel = -1,
                                     .ex_uid = i,
                                     .name = mp_trace_tree_name(t, i),
                                     .koff = (uint32_t)k0,
                                     .nk = (uint32_t)(u->nkpool - k0)};
        for (size_t q = k0; q < u->nkpool; q++)
            u->in_collected_gpu[u->kpool[q]] = 1;
    }
    return 0;
}

static int push_synthetic(struct urows *R, int32_t uid, int32_t kernel)
{
    if (MP_GROW(R->v, R->cap, R->n + 1, 64))
        return MP_ENOMEM;
    memset(&R->v[R->n], 0, sizeof(R->v[0]));
    R->v[R->n].uid = uid;
    R->v[R->n].kernel = kernel;
    R->v[R->n].synthetic = true;
    R->n++;
    return 0;
}

/* A GPU event no collected op covers (communication kernels aside). */
static bool leftover_gpu(const struct uctx *u, size_t i)
{
    const struct mp_trace_tree *t = u->t;
    return mp_kind_is_gpu(t->kind[i]) && !u->in_collected_gpu[i] && !t->comm[i];
}

/* The nearest cpu_op above event i, or -1. */
static int32_t cpu_above(const struct mp_trace_tree *t, size_t i)
{
    for (int32_t p = t->parent[i]; p >= 0; p = t->parent[p])
        if (t->kind[p] == MP_K_CPU_OP)
            return p;
    return -1;
}

/* Synthetic rows for the orphans (left-over GPU events with no cpu_op
 * above), grouped by parent in first-kernel order (porder, np parents
 * marked in pseen), kernels in UID order inside each group. */
static int push_orphans(const struct uctx *u, struct urows *R, const uint8_t *pseen,
                        const int32_t *porder, size_t np)
{
    const struct mp_trace_tree *t = u->t;
    size_t n = t->n ? t->n : 1;
    int32_t *rank = malloc(n * sizeof(int32_t));

    struct {
        int32_t grp, uid;
    } *orph = malloc(n * sizeof(*orph));

    size_t no = 0;
    int rc = rank && orph ? 0 : MP_ENOMEM;
    for (size_t q = 0; q < np && !rc; q++)
        rank[porder[q]] = (int32_t)q;
    for (size_t i = 0; i < t->n && !rc; i++) {
        int32_t par = t->parent[i];
        if (!leftover_gpu(u, i) || par < 0 || !pseen[par] || cpu_above(t, i) >= 0)
            continue;
        orph[no].grp = rank[par];
        orph[no].uid = (int32_t)i;
        no++;
    }
    /* counting sort by group keeps UID order inside each group */
    size_t *start = rc ? NULL : calloc(np + 1, sizeof(size_t));
    int32_t *sorted = rc ? NULL : calloc(no ? no : 1, sizeof(int32_t));
    if (!rc && (!start || !sorted))
        rc = MP_ENOMEM;
    for (size_t q = 0; q < no && !rc; q++)
        start[orph[q].grp + 1]++;
    for (size_t q = 0; q < np && !rc; q++)
        start[q + 1] += start[q];
    for (size_t q = 0; q < no && !rc; q++)
        sorted[start[orph[q].grp]++] = orph[q].uid;
    for (size_t q = 0; q < no && !rc; q++)
        rc = push_synthetic(R, t->parent[sorted[q]], sorted[q]);
    free(start);
    free(sorted);
    free(rank);
    free(orph);
    return rc;
}

/* Synthetic rows for the GPU events left over: first the orphans, then
 * the kernels with a cpu_op above (copying that op), in UID order. */
static int synthetic_rows(const struct uctx *u, struct urows *R)
{
    const struct mp_trace_tree *t = u->t;
    size_t n = t->n ? t->n : 1, np = 0;
    int32_t *porder = malloc(n * sizeof(int32_t));
    uint8_t *pseen = porder ? calloc(n, 1) : NULL;
    int rc = porder && pseen ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < t->n && !rc; i++) {
        int32_t par = t->parent[i];
        if (leftover_gpu(u, i) && par >= 0 && !pseen[par] && cpu_above(t, i) < 0) {
            pseen[par] = 1;
            porder[np++] = par;
        }
    }
    if (!rc && np > 0)
        rc = push_orphans(u, R, pseen, porder, np);
    for (size_t i = 0; i < t->n && !rc; i++) {
        int32_t cpu = leftover_gpu(u, i) ? cpu_above(t, i) : -1;
        if (cpu >= 0)
            rc = push_synthetic(R, cpu, (int32_t)i);
    }
    free(porder);
    free(pseen);
    return rc;
}

/* Names the synthetic rows and fills every row's category, kernels and
 * metrics; a row whose model is not implemented is dropped (uid -1). */
static int fill_rows(struct uctx *u, struct urows *R)
{
    const struct mp_trace_tree *t = u->t;
    int32_t next_uid = (int32_t)t->n;
    struct mp_buf key;
    mp_buf_init(&key, 0);
    int rc = 0;
    for (size_t r = 0; r < R->n && !rc; r++) {
        struct urow *w = &R->v[r];
        if (w->synthetic) {
            w->ex_uid = next_uid++;
            mp_buf_reset(&key);
            rc = mp_buf_printf(&key, "%s->%s (Synthetic Op)", mp_trace_tree_name(t, w->uid),
                               mp_trace_tree_name(t, w->kernel));
            w->name = rc ? NULL : utext(u, key.data, key.len);
            if (!w->name) {
                rc = MP_ENOMEM;
                break;
            }
        }
        rc = fill_row(u, w);
        if (!rc && w->has_model && w->status == MP_ROOFLINE_SKIP)
            w->uid = -1; /* NotImplementedError: TraceLens drops the row */
    }
    for (size_t r = 0; r < R->n && !rc; r++)
        R->v[r].k = u->kpool + R->v[r].koff;
    mp_buf_fini(&key);
    return rc;
}

int tl_sheet_unified(struct mp_report *rep, const struct mp_trace_tree *t,
                     const int32_t *first_kernel, const struct mp_roofline_arch *arch,
                     struct tl_argkeys *ak, const struct mp_report_opts *o,
                     const char *const *annot, struct tl_overlap *ov, struct mp_roofline_memo *memo,
                     struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    struct uctx u = {
        .t = t, .first_kernel = first_kernel, .arch = arch, .annot = annot, .memo = memo};
    /* kernel call stacks: in the kernel details of the inference report, and
     * as call_stack_full / entry_point with --include_call_stack */
    bool stacks = t->python_functions && (o->include_call_stack || o->inference);
    bool kd_stacks = stacks && !o->include_call_stack;
    struct urows R = {0};
    struct tl_meta meta;
    memset(&meta, 0, sizeof(meta));
    int rc = uctx_init(&u, stacks);
    rc = rc ? rc : mark_gpu_subtrees(&u);
    rc = rc ? rc : collect_ops(&u);
    /* rows: collected ops, then synthetic ops for the GPU events left over */
    rc = rc ? rc : collected_rows(&u, &R);
    rc = rc ? rc : synthetic_rows(&u, &R);
    rc = rc ? rc : fill_rows(&u, &R);
    rc = rc ? rc : tl_meta_build(t->s, &meta);
    if (!rc)
        rc = render_summary(&u, rep, R.v, R.n, ak, o, &meta, stacks, kd_stacks, NULL, new_sheet);
    if (!rc && ov)
        rc = render_summary(&u, rep, R.v, R.n, ak, o, &meta, stacks, kd_stacks, ov, new_sheet);
    free(R.v);
    tl_meta_fini(&meta);
    uctx_fini(&u);
    return rc;
}
