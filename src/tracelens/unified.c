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
#include <magpie/report.h>
#include <magpie/roofline.h>
#include <magpie/stats.h>

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
        size_t w = 0;
        for (size_t r = 0; r < n;) {
            if (nm[r] == '_' && r + 1 < n && nm[r + 1] >= '0' && nm[r + 1] <= '9') {
                r++;
                while (r < n && nm[r] >= '0' && nm[r] <= '9')
                    r++;
                continue;
            }
            buf[w++] = nm[r++];
        }
        id = mp_intern_add(u->frames, buf, w);
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
    if (descendant_with_model(u, i)) {
        for (int32_t k = t->child_off[i]; k < t->child_off[i + 1]; k++) {
            if (!mp_trace_tree_is_child(t, i, t->child[k]))
                continue;
            int rc = traverse(u, t->child[k]);
            if (rc)
                return rc;
        }
        return 0;
    }
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
    const char *spec = pr->compute_spec ? pr->compute_spec : "";
    r->spec = utext(u, spec, strlen(spec));
    if (!r->spec)
        return MP_ENOMEM;
    if (u->arch) {
        struct mp_roofline_roofline rl;
        mp_roofline_roofline(u->arch, r->spec, r->gflops, has_bytes, bytes, r->kt, &rl);
        r->rl.roofline_us = rl.roofline_us;
        r->rl.pct = rl.pct;
        r->rl.valid = rl.valid;
        r->rl.compute_bound = rl.compute_bound;
    }
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
    r->params = rc ? NULL : utext(u, mp_buf_cstr(&b), b.len);
    mp_buf_fini(&b);
    return !rc && !r->params ? MP_ENOMEM : rc;
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
    r->koff = (uint32_t)u->nkpool;
    if (r->synthetic) {
        if (MP_GROW(u->kpool, u->capkpool, u->nkpool + 1, 4096))
            return MP_ENOMEM;
        u->kpool[u->nkpool++] = r->kernel;
    } else {
        long got = mp_trace_tree_gpu_events(t, r->uid, &u->kpool, &u->nkpool, &u->capkpool);
        if (got < 0)
            return (int)got;
    }
    r->nk = (uint32_t)(u->nkpool - r->koff);
    r->k = u->kpool + r->koff;
    r->kt = mp_trace_tree_busy(t, r->k, r->nk);
    int32_t fk = u->first_kernel[r->uid];
    r->category = mp_roofline_category(r->name, fk >= 0 ? mp_trace_tree_name(t, fk) : NULL);
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
    /* the model sees the op's kernels in ts order */
    const char **names = malloc((r->nk ? r->nk : 1) * sizeof(char *));

    struct {
        double ts;
        int32_t i;
    } *o = malloc((r->nk ? r->nk : 1) * sizeof(*o));

    if (!names || !o) {
        free(names);
        free(o);
        return MP_ENOMEM;
    }
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
    free(o);
    struct mp_roofline_op op = {.name = r->name,
                                .args = s->args[r->uid],
                                .args_len = s->args_len[r->uid],
                                .annotation = u->annot ? u->annot[r->uid] : NULL,
                                .kernel_names = names,
                                .n_kernels = r->nk};
    struct mp_roofline_result pr;
    int rc = mp_roofline_model_memo(u->memo, &op, &pr);
    free(names);
    if (rc)
        return rc;
    r->status = pr.status;
    if (pr.status == MP_ROOFLINE_OK)
        rc = set_metrics(u, r, &pr, false);
    mp_roofline_result_fini(&pr);
    return rc;
}

struct ugrp {
    struct mp_buf key;
    size_t *m;
    size_t n, cap;
    double kt_sum;
    bool ids_sorted; /* pandas' reduceat path: every group's rows contiguous */
    int32_t ex_uid;
    /* kl_overlap: the groups with the same keys but the overlap names */
    int32_t base;
    double base_kt;
    int32_t base_uid;
};

static int cmp_ugrp(const void *a, const void *b)
{
    const struct ugrp *x = a, *y = b;
    if (x->base_kt != y->base_kt) /* kl_overlap: TraceLens's _group_total_time, */
        return x->base_kt > y->base_kt ? -1 : 1;
    if (x->base_uid != y->base_uid) /* _group_min_ex_uid; equal in the plain sheet */
        return x->base_uid < y->base_uid ? -1 : 1;
    if (x->kt_sum != y->kt_sum)
        return x->kt_sum > y->kt_sum ? -1 : 1;
    return x->ex_uid < y->ex_uid ? -1 : (x->ex_uid > y->ex_uid ? 1 : 0);
}

/* Each group's base totals: kernel time and smallest ex_UID over the
 * groups sharing its base key (nb ids). */
static int base_order(struct ugrp *g, size_t ng, size_t nb)
{
    double *kt = calloc(nb, sizeof(double));
    int32_t *uid = malloc(nb * sizeof(int32_t));
    if (!kt || !uid) {
        free(kt);
        free(uid);
        return MP_ENOMEM;
    }
    for (size_t q = 0; q < nb; q++)
        uid[q] = INT32_MAX;
    for (size_t q = 0; q < ng; q++) {
        kt[g[q].base] += g[q].kt_sum;
        if (g[q].ex_uid < uid[g[q].base])
            uid[g[q].base] = g[q].ex_uid;
    }
    for (size_t q = 0; q < ng; q++) {
        g[q].base_kt = kt[g[q].base];
        g[q].base_uid = uid[g[q].base];
    }
    free(kt);
    free(uid);
    return 0;
}

typedef double (*ufield)(const struct urow *r);

static double f_dur(const struct urow *r)
{
    (void)r;
    return NAN; /* replaced by the caller */
}

static int stats_over(const struct urow *rows, const struct ugrp *g, size_t off,
                      struct tl_stats *st, size_t *cnt)
{
    double *v = malloc((g->n ? g->n : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        double x = *(const double *)((const char *)&rows[g->m[i]] + off);
        if (!isnan(x))
            v[k++] = x;
    }
    int rc = tl_group_stats(v, k, g->ids_sorted && k == g->n, st);
    *cnt = k;
    free(v);
    return rc;
}

static double first_over(const struct urow *rows, const struct ugrp *g, size_t off)
{
    for (size_t i = 0; i < g->n; i++) {
        double x = *(const double *)((const char *)&rows[g->m[i]] + off);
        if (!isnan(x))
            return x;
    }
    return NAN;
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

static int render_summary(struct uctx *u, struct mp_report *rep, struct urow *rows, size_t nrows,
                          struct tl_argkeys *ak, const struct mp_report_opts *o,
                          const struct tl_meta *meta, bool stacks, bool kd_stacks,
                          struct tl_overlap *ov,
                          struct mp_buf *(*new_sheet)(struct mp_report *, const char *));

int tl_sheet_unified(struct mp_report *rep, const struct mp_trace_tree *t,
                     const int32_t *first_kernel, const struct mp_roofline_arch *arch,
                     struct tl_argkeys *ak, const struct mp_report_opts *o,
                     const char *const *annot, struct tl_overlap *ov, struct mp_roofline_memo *memo,
                     struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    const struct mp_trace_store *s = t->s;
    size_t n = t->n ? t->n : 1;
    struct uctx u = {
        .t = t, .first_kernel = first_kernel, .arch = arch, .annot = annot, .memo = memo};
    /* kernel call stacks: in the kernel details of the inference report, and
     * as call_stack_full / entry_point with --include_call_stack */
    bool stacks = t->python_functions && (o->include_call_stack || o->inference);
    bool kd_stacks = stacks && !o->include_call_stack;
    u.is_collected = calloc(n, 1);
    u.texts = mp_intern_new();
    if (stacks) {
        u.root_of = malloc(n * sizeof(int32_t));
        u.frames = mp_intern_new();
        u.frame_of = malloc(n * sizeof(int32_t));
        for (size_t i = 0; u.frame_of && i < n; i++)
            u.frame_of[i] = -2;
    }
    u.has_gpu = calloc(n, 1);
    u.comm = calloc(n, 1);
    u.model = calloc((size_t)mp_intern_count(s->strings) + 1, 1);
    u.visited = calloc(n, 1);
    u.in_collected_gpu = calloc(n, 1);
    u.bwd_ok = calloc(n, 1);
    struct urow *rows = NULL;
    size_t nrows = 0;
    struct tl_meta meta;
    memset(&meta, 0, sizeof(meta));
    int rc = u.has_gpu && u.comm && u.model && u.visited && u.in_collected_gpu && u.bwd_ok &&
                     u.is_collected && u.texts && (!stacks || (u.frames && u.frame_of && u.root_of))
                 ? 0
                 : MP_ENOMEM;
    /* subtree GPU and communication flags, walking up from each GPU event
     * until an ancestor already has what this walk would give it (an
     * earlier walk through it marked everything above) */
    for (size_t i = 0; i < t->n && !rc; i++) {
        if (!mp_kind_is_gpu(t->kind[i]))
            continue;
        for (int32_t p = t->parent[i]; p >= 0; p = t->parent[p]) {
            if (u.has_gpu[p] && (!t->comm[i] || u.comm[p]))
                break;
            u.has_gpu[p] = 1;
            if (t->comm[i])
                u.comm[p] = 1;
        }
    }
    /* a pseudo op is not on its kernels' parent chains; it gets the GPU
     * events below it (TraceLens gives it gpu_events = its kernel) */
    int32_t *pbuf = NULL;
    size_t pcap = 0;
    for (size_t i = 0; i < t->n && !rc && t->pseudo; i++) {
        size_t pn = 0;
        long got = t->pseudo[i] ? mp_trace_tree_gpu_events(t, (int32_t)i, &pbuf, &pn, &pcap) : 0;
        if (got < 0)
            rc = (int)got;
        for (size_t q = 0; q < pn && !rc; q++) {
            u.has_gpu[i] = 1;
            if (t->comm[pbuf[q]])
                u.comm[i] = 1;
        }
    }
    free(pbuf);
    /* roots: outermost cpu_ops in host-tree order (by ts, stable) */
    if (!rc) {
        size_t nr = 0;

        struct {
            double ts;
            int32_t i;
        } *roots = malloc(n * sizeof(*roots));

        if (!roots)
            rc = MP_ENOMEM;
        for (size_t i = 0; i < t->n_base && !rc; i++)
            if (t->cpu_root[i]) {
                roots[nr].ts = s->ts[i];
                roots[nr].i = (int32_t)i;
                nr++;
            }
        /* stable sort by ts (merge via insertion on nearly sorted data) */
        for (size_t a = 1; !rc && a < nr; a++)
            for (size_t b = a; b > 0 && roots[b - 1].ts > roots[b].ts; b--) {
                double ts = roots[b].ts;
                int32_t ii = roots[b].i;
                roots[b] = roots[b - 1];
                roots[b - 1].ts = ts;
                roots[b - 1].i = ii;
            }
        /* cpu roots grafted by a graph-capture merge follow, in graft order */
        for (size_t i = t->n_base; i < t->n && !rc; i++)
            if (t->cpu_root[i]) {
                roots[nr].ts = s->ts[i];
                roots[nr].i = (int32_t)i;
                nr++;
            }
        /* python funcs in the tree: parentless python frames with GPU work
         * first (trace order), then the outermost cpu_ops */
        for (size_t i = 0; i < t->n && !rc && t->python_functions; i++)
            if (t->kind[i] == MP_K_PYFUNC && t->parent[i] < 0 && u.has_gpu[i]) {
                u.cur_root = (int32_t)i;
                rc = traverse(&u, (int32_t)i);
            }
        for (size_t k = 0; k < nr && !rc; k++) {
            u.cur_root = roots[k].i;
            rc = traverse(&u, roots[k].i);
        }
        free(roots);
    }
    /* rows: collected ops, then synthetic ops for the GPU events left over */
    size_t cap = u.ncollected + 64;
    rows = rc ? NULL : calloc(cap, sizeof(*rows));
    if (!rc && !rows)
        rc = MP_ENOMEM;
    int32_t *buf = NULL;
    size_t bn = 0, bcap = 0;
    for (size_t c = 0; c < u.ncollected && !rc; c++) {
        int32_t i = u.collected[c];
        rows[nrows] =
            (struct urow){.uid = i, .kernel = -1, .ex_uid = i, .name = mp_trace_tree_name(t, i)};
        nrows++;
        bn = 0;
        long got = mp_trace_tree_gpu_events(t, i, &buf, &bn, &bcap);
        if (got < 0)
            rc = (int)got;
        for (size_t q = 0; q < bn && !rc; q++)
            u.in_collected_gpu[buf[q]] = 1;
    }
    free(buf);
    int32_t next_uid = (int32_t)t->n;
    /* orphans (no cpu_op above): grouped by parent in first-kernel order */
    int32_t *porder = NULL;
    size_t np = 0;
    if (!rc) {
        porder = malloc(n * sizeof(int32_t));
        if (!porder)
            rc = MP_ENOMEM;
    }
    uint8_t *pseen = rc ? NULL : calloc(n, 1);
    if (!rc && !pseen)
        rc = MP_ENOMEM;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        for (size_t i = 0; i < t->n && !rc; i++) {
            if (!mp_kind_is_gpu(t->kind[i]) || u.in_collected_gpu[i] || t->comm[i])
                continue;
            int32_t cpu = -1;
            for (int32_t p = t->parent[i]; p >= 0 && cpu < 0; p = t->parent[p])
                if (t->kind[p] == MP_K_CPU_OP)
                    cpu = p;
            if (pass == 0 && cpu < 0 && t->parent[i] >= 0 && !pseen[t->parent[i]]) {
                pseen[t->parent[i]] = 1;
                porder[np++] = t->parent[i];
            }
            if (pass == 1 && cpu >= 0) {
                if (nrows == cap) {
                    cap *= 2;
                    struct urow *nr2 = mp_reallocarray(rows, cap, sizeof(*rows));
                    if (!nr2) {
                        rc = MP_ENOMEM;
                        break;
                    }
                    rows = nr2;
                }
                memset(&rows[nrows], 0, sizeof(rows[0]));
                rows[nrows].uid = cpu;
                rows[nrows].kernel = (int32_t)i;
                rows[nrows].synthetic = true;
                nrows++;
            }
        }
        if (pass == 0 && np > 0) {
            /* emit the orphan groups now, before the kernels with a cpu_op:
             * grouped by parent (in first-kernel order), kernels in UID order */
            int32_t *rank = malloc(n * sizeof(int32_t));

            struct {
                int32_t grp, uid;
            } *orph = malloc(n * sizeof(*orph));

            size_t no = 0;
            if (!rank || !orph)
                rc = MP_ENOMEM;
            for (size_t q = 0; q < np && !rc; q++)
                rank[porder[q]] = (int32_t)q;
            for (size_t i = 0; i < t->n && !rc; i++) {
                int32_t par = t->parent[i];
                if (!mp_kind_is_gpu(t->kind[i]) || u.in_collected_gpu[i] || t->comm[i] || par < 0 ||
                    !pseen[par])
                    continue;
                bool cpu = false;
                for (int32_t p = par; p >= 0 && !cpu; p = t->parent[p])
                    cpu = t->kind[p] == MP_K_CPU_OP;
                if (cpu)
                    continue;
                orph[no].grp = rank[par];
                orph[no].uid = (int32_t)i;
                no++;
            }
            /* counting sort by group keeps UID order inside each group */
            size_t *start = rc ? NULL : calloc(np + 1, sizeof(size_t));
            int32_t *sorted = rc ? NULL : malloc((no ? no : 1) * sizeof(int32_t));
            if (!rc && (!start || !sorted))
                rc = MP_ENOMEM;
            for (size_t q = 0; q < no && !rc; q++)
                start[orph[q].grp + 1]++;
            for (size_t q = 0; q < np && !rc; q++)
                start[q + 1] += start[q];
            for (size_t q = 0; q < no && !rc; q++)
                sorted[start[orph[q].grp]++] = orph[q].uid;
            for (size_t q = 0; q < no && !rc; q++) {
                if (nrows == cap) {
                    cap *= 2;
                    struct urow *nr2 = mp_reallocarray(rows, cap, sizeof(*rows));
                    if (!nr2) {
                        rc = MP_ENOMEM;
                        break;
                    }
                    rows = nr2;
                }
                memset(&rows[nrows], 0, sizeof(rows[0]));
                rows[nrows].uid = t->parent[sorted[q]];
                rows[nrows].kernel = sorted[q];
                rows[nrows].synthetic = true;
                nrows++;
            }
            free(start);
            free(sorted);
            free(rank);
            free(orph);
        }
    }
    free(porder);
    free(pseen);
    struct mp_buf key;
    mp_buf_init(&key, 0);
    for (size_t r = 0; r < nrows && !rc; r++) {
        struct urow *w = &rows[r];
        if (w->synthetic) {
            w->ex_uid = next_uid++;
            mp_buf_reset(&key);
            rc = mp_buf_printf(&key, "%s->%s (Synthetic Op)", mp_trace_tree_name(t, w->uid),
                               mp_trace_tree_name(t, w->kernel));
            w->name = rc ? NULL : utext(&u, key.data, key.len);
            if (!w->name) {
                rc = MP_ENOMEM;
                break;
            }
        }
        rc = fill_row(&u, w);
        if (!rc && w->has_model && w->status == MP_ROOFLINE_SKIP)
            w->uid = -1; /* NotImplementedError: TraceLens drops the row */
    }
    for (size_t r = 0; r < nrows && !rc; r++)
        rows[r].k = u.kpool + rows[r].koff;
    if (!rc)
        rc = tl_meta_build(s, &meta);
    if (!rc)
        rc = render_summary(&u, rep, rows, nrows, ak, o, &meta, stacks, kd_stacks, NULL, new_sheet);
    if (!rc && ov)
        rc = render_summary(&u, rep, rows, nrows, ak, o, &meta, stacks, kd_stacks, ov, new_sheet);
    (void)f_dur;
    mp_buf_fini(&key);
    free(u.kpool);
    free(rows);
    tl_meta_fini(&meta);
    free(u.has_gpu);
    free(u.comm);
    free(u.model);
    free(u.visited);
    free(u.collected);
    free(u.in_collected_gpu);
    free(u.bwd_ok);
    free(u.is_collected);
    free(u.root_of);
    mp_intern_free(u.texts);
    free(u.frame_of);
    mp_intern_free(u.frames);
    return rc;
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
    const struct mp_trace_tree *t = u->t;
    const struct mp_trace_store *s = t->s;
    const struct mp_roofline_arch *arch = u->arch;
    int rc = 0;
    bool cs = o->include_call_stack && !ov; /* entry_point, call_stack_full */
    if (ov) /* TraceLens summarizes the kl_overlap twin without include_call_stack */
        kd_stacks = stacks;
    /* group by str() of name, category, process/thread names and args */
    struct ugrp *g = rc ? NULL : calloc(nrows ? nrows : 1, sizeof(*g));
    size_t ng = 0;
    struct mp_intern *keys = rc ? NULL : mp_intern_new();
    struct mp_intern *bkeys = rc || !ov ? NULL : mp_intern_new();
    if (!rc && ov && !bkeys)
        rc = MP_ENOMEM;
    int32_t *gid = NULL;
    size_t gcap = 0;
    struct mp_buf key;
    mp_buf_init(&key, 0);
    if (!rc && (!g || !keys))
        rc = MP_ENOMEM;
    for (size_t r = 0; r < nrows && !rc; r++) {
        const struct urow *w = &rows[r];
        if (w->uid < 0)
            continue;
        const char *pid = s->pid[w->uid] >= 0 ? mp_intern_str(s->strings, s->pid[w->uid]) : "";
        const char *tid = s->tid[w->uid] >= 0 ? mp_intern_str(s->strings, s->tid[w->uid]) : "";
        mp_buf_reset(&key);
        const char *cells[5] = {w->name, w->category, tl_meta_get(meta, pid, "0", "process_name"),
                                tl_meta_get(meta, pid, "0", "process_labels"),
                                tl_meta_get(meta, pid, tid, "thread_name")};
        const struct tl_ovinfo *oi = NULL;
        if (ov) /* a synthetic row has its parent's info, else its one kernel's */
            rc = w->synthetic ? tl_overlap_kernel(ov, w->uid, w->kernel, &oi)
                              : tl_overlap_unified(ov, w->uid, &oi);
        for (int c = 0; c < 5 && !rc; c++) {
            rc = c ? mp_buf_putc(&key, '\x1f') : 0;
            rc = rc ? rc : mp_buf_puts(&key, cells[c]);
        }
        const char *ak4 = rc ? NULL : tl_argkeys_get(ak, s, w->uid);
        if (!rc && !ak4)
            rc = MP_ENOMEM;
        rc = rc ? rc : mp_buf_putc(&key, '\x1f');
        rc = rc ? rc : mp_buf_puts(&key, ak4);
        if (t->recompute) /* a synthetic row copies its parent's flag */
            rc = rc ? rc
                    : mp_buf_puts(&key, t->recompute[w->uid] ? "\x1fTrue"
                                                             : "\x1f"
                                                               "False");
        int32_t bid = -1;
        if (ov && !rc) { /* the names column follows name */
            if ((bid = mp_intern_add(bkeys, key.data, key.len)) < 0)
                rc = MP_ENOMEM;
            const char *nm = tl_ovinfo_names(oi);
            size_t l0 = strlen(w->name);
            rc = rc ? rc : mp_buf_reserve(&key, strlen(nm) + 1);
            if (!rc) {
                memmove(key.data + l0 + 1 + strlen(nm), key.data + l0, key.len - l0);
                key.data[l0] = '\x1f';
                memcpy(key.data + l0 + 1, nm, strlen(nm));
                key.len += strlen(nm) + 1;
            }
        }
        int32_t id = rc ? -1 : mp_intern_add(keys, key.data, key.len);
        if (id < 0) {
            rc = MP_ENOMEM;
            break;
        }
        if (tl_gid_reserve(&gid, &gcap, id)) {
            rc = MP_ENOMEM;
            break;
        }
        if (gid[id] < 0) {
            gid[id] = (int32_t)ng;
            mp_buf_init(&g[ng].key, 0);
            rc = mp_buf_append(&g[ng].key, key.data, key.len);
            g[ng].ex_uid = w->ex_uid;
            g[ng].base = bid;
            ng++;
        }
        struct ugrp *G = &g[gid[id]];
        if (MP_GROW(G->m, G->cap, G->n + 1, 8)) {
            rc = MP_ENOMEM;
            break;
        }
        G->m[G->n++] = r;
        G->kt_sum += w->kt;
    }
    /* groupby(sort=False): the rows' group ids never decrease when every
     * group's rows are contiguous; Kernel Time (µs)_sum as pandas sums it */
    bool contiguous = true;
    for (size_t q = 0; q < ng && contiguous; q++)
        contiguous = g[q].n == 0 || g[q].m[g[q].n - 1] - g[q].m[0] + 1 == g[q].n;
    for (size_t q = 0; q < ng && !rc; q++) {
        struct tl_stats st;
        size_t cnt;
        g[q].ids_sorted = contiguous;
        rc = stats_over(rows, &g[q], offsetof(struct urow, kt), &st, &cnt);
        g[q].kt_sum = st.sum;
    }
    if (!rc)
        rc = ov ? base_order(g, ng, (size_t)mp_intern_count(bkeys) + 1) : 0;
    if (!rc)
        qsort(g, ng, sizeof(*g), cmp_ugrp);
    /* Series.sum of the sorted column: numpy's pairwise sum */
    double *kts_sorted = rc ? NULL : malloc((ng ? ng : 1) * sizeof(double));
    if (!rc && !kts_sorted)
        rc = MP_ENOMEM;
    for (size_t i = 0; i < ng && !rc; i++)
        kts_sorted[i] = g[i].kt_sum;
    double total = rc ? 0 : mp_sum_pairwise(kts_sorted, ng);
    free(kts_sorted);
    struct mp_buf *b =
        rc ? NULL : new_sheet(rep, ov ? "unified_perf_summary_kl_overlap" : "unified_perf_summary");
    if (!rc && !b)
        rc = MP_ENOMEM;
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    if (!rc) {
        mp_csv_init(&csv, b, "\n");
        rc = mp_buf_puts(b, ov ? "name,overlapping_kernel_names," : "name,");
        rc = rc ? rc
                : mp_buf_puts(b, "op category,process_name,process_label,thread_name,Input Dims,"
                                 "Input type,Input Strides,Concrete Inputs,");
        if (!rc && t->recompute)
            rc = mp_buf_puts(b, "is_recompute,");
        rc = rc ? rc
                : mp_buf_puts(b, "ex_UID,operation_count,"
                                 "total_duration_us,mean_duration_us,std_duration_us,GFLOPS,"
                                 "Data Moved (MB),FLOPS/Byte,Compute Spec,");
        if (!rc && arch)
            rc = mp_buf_puts(b, "Roofline Bound,");
        rc = rc ? rc
                : mp_buf_puts(b, "TB/s_mean,TB/s_std,TFLOPS/s_mean,TFLOPS/s_std,"
                                 "Kernel Time (µs)_mean,Kernel Time (µs)_std,Kernel Time (µs)_sum,"
                                 "duration_us_median,duration_us_min,duration_us_max,TB/s_median,"
                                 "TB/s_min,TB/s_max,TFLOPS/s_median,TFLOPS/s_min,TFLOPS/s_max,");
        if (!rc && arch)
            rc = mp_buf_puts(b, "Roofline Time (µs)_first,Pct Roofline_mean,Pct Roofline_median,"
                                "Pct Roofline_std,Pct Roofline_min,Pct Roofline_max,");
        rc = rc ? rc
                : mp_buf_puts(b,
                              "Kernel Time (µs)_median,Kernel Time (µs)_min,"
                              "Kernel Time (µs)_max,kernel_details_summary,trunc_kernel_details,");
        if (!rc && ov)
            rc = mp_buf_puts(b,
                             "overlapping_kernels_details_summary,"
                             "trunc_overlapping_kernels_details,overlap_pct_mean,"
                             "overlap_pct_median,overlap_pct_std,overlap_pct_min,overlap_pct_max,");
        rc = rc ? rc : mp_buf_puts(b, "perf_params,has_perf_model,");
        rc = rc ? rc : mp_buf_puts(b, cs ? "entry_point,call_stack_full," : "");
        rc = rc ? rc : mp_buf_puts(b, "Percentage (%),Cumulative Percentage (%)\n");
    }
    double cum = 0;
    for (size_t gi = 0; gi < ng && !rc; gi++) {
        struct ugrp *G = &g[gi];
        const struct urow *r0 = &rows[G->m[0]];
        const char *k = mp_buf_cstr(&G->key), *end = k + G->key.len;
        while (!rc) {
            const char *sep = memchr(k, '\x1f', (size_t)(end - k));
            size_t len = sep ? (size_t)(sep - k) : (size_t)(end - k);
            rc = mp_csv_field(&csv, k, len);
            if (!sep)
                break;
            k = sep + 1;
        }
        rc = rc ? rc : mp_csv_fmt(&csv, "%d", G->ex_uid);
        rc = rc ? rc : mp_csv_fmt(&csv, "%zu", G->n);
        /* duration_us = the (copied) event's dur */
        double *dv = malloc(G->n * sizeof(double));
        struct tl_stats dst, tbs, tfs, kts, pst = {0};
        size_t cnt_d = 0, ctb, ctf, ckt, cpct = 0;
        if (!dv)
            rc = MP_ENOMEM;
        for (size_t i = 0; i < G->n && !rc; i++) {
            int32_t uid = rows[G->m[i]].uid;
            if (s->flags[uid] & MP_EV_DUR)
                dv[cnt_d++] = s->dur[uid];
        }
        rc = rc ? rc : tl_group_stats(dv, cnt_d, G->ids_sorted && cnt_d == G->n, &dst);
        free(dv);
        rc = rc ? rc : tl_csv_float(&csv, &cell, dst.sum, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, dst.mean, cnt_d > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, dst.std, dst.has_std);
        rc = rc ? rc
                : tl_csv_float(&csv, &cell, first_over(rows, G, offsetof(struct urow, gflops)),
                               true);
        rc = rc ? rc
                : tl_csv_float(&csv, &cell, first_over(rows, G, offsetof(struct urow, mb)), true);
        rc = rc ? rc
                : tl_csv_float(&csv, &cell, first_over(rows, G, offsetof(struct urow, fpb)), true);
        const char *spec = "";
        const struct urow *rl = NULL;
        for (size_t i = 0; i < G->n; i++) {
            const struct urow *w = &rows[G->m[i]];
            if (!spec[0] && w->has_model && w->status == MP_ROOFLINE_OK && w->spec)
                spec = w->spec;
            if (!rl && w->rl.valid)
                rl = w;
        }
        rc = rc ? rc : mp_csv_str(&csv, spec);
        if (arch && !rc)
            rc = mp_csv_str(&csv,
                            rl ? (rl->rl.compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND") : "");
        rc = rc ? rc : stats_over(rows, G, offsetof(struct urow, tbs), &tbs, &ctb);
        rc = rc ? rc : stats_over(rows, G, offsetof(struct urow, tfs), &tfs, &ctf);
        rc = rc ? rc : stats_over(rows, G, offsetof(struct urow, kt), &kts, &ckt);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tbs.mean, ctb > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tbs.std, tbs.has_std);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tfs.mean, ctf > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tfs.std, tfs.has_std);
        rc = rc ? rc : tl_csv_float(&csv, &cell, kts.mean, ckt > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, kts.std, kts.has_std);
        rc = rc ? rc : tl_csv_float(&csv, &cell, kts.sum, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, dst.median, cnt_d > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, dst.min, cnt_d > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, dst.max, cnt_d > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tbs.median, ctb > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tbs.min, ctb > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tbs.max, ctb > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tfs.median, ctf > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tfs.min, ctf > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, tfs.max, ctf > 0);
        if (arch && !rc) {
            double *pv = malloc(G->n * sizeof(double));
            if (!pv)
                rc = MP_ENOMEM;
            for (size_t i = 0; i < G->n && !rc; i++) {
                const struct urow *w = &rows[G->m[i]];
                if (w->rl.valid && !isnan(w->rl.pct))
                    pv[cpct++] = w->rl.pct;
            }
            rc = rc ? rc : tl_group_stats(pv, cpct, G->ids_sorted && cpct == G->n, &pst);
            free(pv);
            rc = rc ? rc : tl_csv_float(&csv, &cell, rl ? rl->rl.roofline_us : NAN, rl != NULL);
            rc = rc ? rc : tl_csv_float(&csv, &cell, pst.mean, cpct > 0);
            rc = rc ? rc : tl_csv_float(&csv, &cell, pst.median, cpct > 0);
            rc = rc ? rc : tl_csv_float(&csv, &cell, pst.std, pst.has_std);
            rc = rc ? rc : tl_csv_float(&csv, &cell, pst.min, cpct > 0);
            rc = rc ? rc : tl_csv_float(&csv, &cell, pst.max, cpct > 0);
        }
        rc = rc ? rc : tl_csv_float(&csv, &cell, kts.median, ckt > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, kts.min, ckt > 0);
        rc = rc ? rc : tl_csv_float(&csv, &cell, kts.max, ckt > 0);
        /* kernel details: template = first non-empty list */
        const struct urow *rt = r0;
        for (size_t i = 0; i < G->n && rt->nk == 0; i++)
            rt = &rows[G->m[i]];
        size_t nk = rt->nk, kr = 0;
        double **kd = calloc(nk ? nk : 1, sizeof(double *));
        if (!kd)
            rc = MP_ENOMEM;
        for (size_t q = 0; q < nk && !rc; q++)
            if (!(kd[q] = malloc(G->n * sizeof(double))))
                rc = MP_ENOMEM;
        for (size_t i = 0; i < G->n && !rc; i++) {
            const struct urow *w = &rows[G->m[i]];
            if (w->nk != nk)
                continue;
            for (size_t q = 0; q < nk; q++) {
                int32_t ku = w->k[q];
                kd[q][kr] = (s->flags[ku] & MP_EV_DUR) ? s->dur[ku] : 0.0;
            }
            kr++;
        }
        /* per-kernel call stacks of the template row */
        char ***chains = NULL;
        size_t *clen = NULL, *order = NULL;
        char **kdst = NULL;
        bool rows_stack = false;
        if (!rc && stacks && nk > 0) {
            chains = calloc(nk, sizeof(char **));
            clen = calloc(nk, sizeof(size_t));
            order = calloc(nk, sizeof(size_t));
            kdst = calloc(nk, sizeof(char *));
            if (!chains || !clen || !order || !kdst)
                rc = MP_ENOMEM;
            struct idvec iv = {0};
            struct mp_buf rbuf;
            mp_buf_init(&rbuf, 0);
            for (size_t q = 0; q < nk && !rc; q++) {
                bool has = false;
                rc = kernel_stack(u, rt->uid, rt->synthetic ? -1 : rt->uid, rt->k[q], &iv, &has);
                rows_stack = has;
                chains[q] = rc ? NULL : calloc(iv.n + 1, sizeof(char *));
                if (!rc && !chains[q])
                    rc = MP_ENOMEM;
                for (size_t j = 0; j < iv.n && !rc; j++)
                    chains[q][j] = (char *)mp_intern_str(u->frames, iv.v[j]);
                if (rc)
                    break;
                clen[q] = iv.n;
                if (has && kd_stacks) {
                    mp_buf_reset(&rbuf);
                    rc = tl_pylist_repr(&rbuf, (const char *const *)chains[q], iv.n);
                    kdst[q] = rc ? NULL : mp_strdup(mp_buf_cstr(&rbuf));
                    if (!rc && !kdst[q])
                        rc = MP_ENOMEM;
                }
                chains[q][clen[q]++] = (char *)mp_trace_tree_name(t, rt->k[q]);
            }
            free(iv.v);
            mp_buf_fini(&rbuf);
        }
        if (!rc && nk > 0) {
            rc = tl_kernel_details_cells_cs(
                t, rt->k, nk, kd, kr, rows_stack && kd_stacks ? (const char *const *)kdst : NULL,
                order, &csv, &cell);
        } else if (!rc) {
            rc = mp_csv_str(&csv, "[]");
            rc = rc ? rc : mp_csv_str(&csv, "");
        }
        /* call_stack_full follows the printed order */
        char ***ch2 = NULL;
        size_t *len2 = NULL;
        if (!rc && cs && nk > 0 && chains) {
            ch2 = malloc(nk * sizeof(char **));
            len2 = malloc(nk * sizeof(size_t));
            if (!ch2 || !len2)
                rc = MP_ENOMEM;
            for (size_t q = 0; q < nk && !rc; q++) {
                ch2[q] = chains[order[q]];
                len2[q] = clen[order[q]];
            }
        }
        for (size_t q = 0; kd && q < nk; q++)
            free(kd[q]);
        free(kd);
        if (ov && !rc) {
            const struct tl_ovinfo **mi =
                malloc(G->n * sizeof(*mi)); // NOLINT(bugprone-sizeof-expression)
            if (!mi)
                rc = MP_ENOMEM;
            for (size_t i = 0; i < G->n && !rc; i++) {
                const struct urow *w = &rows[G->m[i]];
                rc = w->synthetic ? tl_overlap_kernel(ov, w->uid, w->kernel, &mi[i])
                                  : tl_overlap_unified(ov, w->uid, &mi[i]);
            }
            rc = rc ? rc : tl_overlap_cells(mi, G->n, true, &csv, &cell);
            free(mi);
        }
        const char *params = NULL;
        for (size_t i = 0; i < G->n && !params; i++)
            params = rows[G->m[i]].params;
        rc = rc ? rc : mp_csv_str(&csv, params ? params : "");
        rc = rc ? rc : mp_csv_str(&csv, r0->has_model ? "True" : "False");
        if (!rc && cs)
            rc = full_stack_cells(r0->name, ch2, len2, ch2 ? nk : 0, &csv, &cell);
        free(ch2);
        free(len2);
        for (size_t q = 0; chains && q < nk; q++)
            free(chains[q]);
        for (size_t q = 0; kdst && q < nk; q++)
            free(kdst[q]);
        free(chains);
        free(clen);
        free(order);
        free(kdst);
        double pct = G->kt_sum / total * 100;
        cum += pct;
        rc = rc ? rc : tl_csv_float(&csv, &cell, pct, true);
        rc = rc ? rc : tl_csv_float(&csv, &cell, cum, true);
        rc = rc ? rc : mp_csv_end_row(&csv);
    }
    mp_buf_fini(&cell);
    mp_buf_fini(&key);
    for (size_t i = 0; g && i < ng; i++) {
        mp_buf_fini(&g[i].key);
        free(g[i].m);
    }
    free(g);
    free(gid);
    mp_intern_free(keys);
    mp_intern_free(bkeys);
    return rc;
}
