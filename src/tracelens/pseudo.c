/* TraceLens's pseudo ops (--enable_pseudo_ops, Trace2Tree/extensions):
 * cpu ops that TraceLens inserts above single kernels of a fused or
 * library op so that the kernel meets a perf model of its own. Applied
 * after the graph-capture merge and the SGLang name pass, as TraceLens's
 * TreePerfAnalyzer does.
 *
 * Implemented: the unfused Triton MoE of vLLM (GPT-OSS style): under every
 * vllm::moe_forward with matmul_ogs kernels (and no
 * vllm::rocm_aiter_fused_moe in the trace), the first matmul_ogs kernel by
 * ts gets pseudo_op::moe_triton_unfused_up, the later ones
 * pseudo_op::moe_triton_unfused_down, and a single matmul_scatter kernel
 * pseudo_op::moe_triton_unfused_finalize_matmul_scatter. Each pseudo op is
 * a cpu_op without ts or dur holding the MoE op's shapes and the routing
 * ("MoE topk" from the first TopK op below it, "MoE GEMM gated" from a
 * swiglu/glu kernel name) that src/roofline/moe.c models; it sits between the
 * kernel's launch call and that call's parent (mp_trace_tree_insert_pseudo),
 * appended to the store after every other event, so its UID is the one
 * TraceLens gives it.
 *
 * Also the MLA decode / prefill extensions (mla_family): a python frame
 * "aiter/mla.py(N): mla_decode_fwd" over aiter::mla_decode_stage1_asm_fwd,
 * or "...: mla_fp8_prefill_attn" over aiter::mla_prefill_ps_asm_fwd, gets
 * pseudo_mla_decode_fwd / pseudo_mla_prefill_fwd wrapping all its children
 * (mp_trace_tree_wrap_children), with the frame's ts and dur and the aiter
 * op's shapes; it becomes a cpu root and the launcher of kernels launched
 * below it without another cpu op.
 *
 * And the GPTQ/AWQ MoE (moe_gptq_awq): pseudo_op::moe_gptq_awq_up / _down
 * over the fused_moe_kernel_gptq_awq kernels of vllm::outplace_fused_experts,
 * placed as the unfused Triton ones; and the flydsl MoE (moe_flydsl):
 * pseudo_op::moe_flydsl_stage1 / _stage2 between a "...: flydsl_moe_stage1"
 * / "...: flydsl_moe_stage2" frame under aiter::fused_moe_ and its parent
 * (mp_trace_tree_insert_above).
 *
 * And the fused AITER MoE (moe_fused_aiter, instead of the Triton one when
 * vllm::rocm_aiter_fused_moe is in the trace): pseudo_op::moe_aiter_fused_1stage
 * over the single fused-MoE kernel of each such op without cpu ops below.
 *
 * A trace with _rocm_C::paged_attention or aiter::paged_attention_v1 gets
 * none of them: TraceLens then fails to import its KV-cache dtype module and
 * drops every family.
 *
 * Not implemented (no trace to check them against, and magpie's perf
 * models for them are stubs): the DeepSeek-V4 paged-decode family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/trace.h>
#include <magpie/trace_tree.h>

#include "tracelens_int.h"

/* one pseudo op to add */
struct pseudo_ev {
    int32_t moe;     /* the MoE op whose shapes it takes */
    int32_t kernel;  /* the kernel it isolates */
    int32_t launch;  /* the kernel's parent (launch call), wrapped */
    int32_t parent;  /* the launch call's parent, the pseudo op's */
    int32_t name;    /* interned */
    char *args;      /* JSON object text, malloc'd */
    size_t args_len; /* strlen(args) */
};

struct pseudo_plan {
    struct pseudo_ev *ev;
    size_t n, cap;
    uint8_t *wrapped; /* per event: launch call already wrapped */
    bool stop;        /* a kernel could not be wrapped: TraceLens would have raised */
};

/* A plan with room to mark every event of t. 0 or MP_ENOMEM. */
static int plan_init(struct pseudo_plan *p, const struct mp_trace_tree *t)
{
    *p = (struct pseudo_plan){.wrapped = calloc(t->n ? t->n : 1, 1)};
    return p->wrapped ? 0 : MP_ENOMEM;
}

/* The GPU events of op's subtree into *gpu (grown as needed, room *cap),
 * *ng of them. 0 or an error code. */
static int gpu_of(const struct mp_trace_tree *t, int32_t op, int32_t **gpu, size_t *ng, size_t *cap)
{
    *ng = 0;
    long got = mp_trace_tree_gpu_events(t, op, gpu, ng, cap);
    return got < 0 ? (int)got : 0;
}

static const char *ev_name(const struct mp_trace_store *s, int32_t i)
{
    return s->name[i] >= 0 ? mp_intern_str(s->strings, s->name[i]) : "";
}

/* Python's int(str) for the digits TraceLens reads TopK's k from:
 * surrounding whitespace, an optional sign, decimal digits. */
static bool parse_int(const char *p, size_t n, long long *out)
{
    while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\n'))
        p++, n--;
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n'))
        n--;
    bool neg = false;
    if (n > 0 && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++, n--;
    }
    if (n == 0 || n > 18)
        return false;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

/* k of a TopK op: its second Concrete Input, when non-empty and an integer */
static bool topk_of(const struct mp_trace_store *s, int32_t i, long long *k)
{
    if (!strstr(ev_name(s, i), "TopK") || !s->args[i])
        return false;
    struct mp_strview a = {s->args[i], s->args_len[i]}, ci;
    if (mp_trace_json_find(a, "Concrete Inputs", &ci) || ci.n < 2 || ci.p[0] != '[')
        return false;
    /* the second element of a list of strings */
    size_t q = 1;
    for (int el = 0; el < 2; el++) {
        while (q < ci.n && (ci.p[q] == ' ' || ci.p[q] == ',' || ci.p[q] == '\n'))
            q++;
        if (q >= ci.n || ci.p[q] != '"')
            return false;
        size_t e = q + 1;
        while (e < ci.n && ci.p[e] != '"')
            e += ci.p[e] == '\\' ? 2 : 1;
        if (e >= ci.n)
            return false;
        if (el == 1) {
            /* escapes never spell digits: a string holding one is no int */
            if (memchr(ci.p + q + 1, '\\', e - q - 1))
                return false;
            return parse_int(ci.p + q + 1, e - q - 1, k);
        }
        q = e + 1;
    }
    return false;
}

/* TraceLens's _extract_topk_from_moe: pre-order over the MoE op's
 * children, each searched down to depth 10 below it; 4 when none. */
static long long search_topk(const struct mp_trace_tree *t, int32_t u, int depth, bool *found)
{
    long long k = 0;
    if (depth > 10)
        return 0;
    if (topk_of(t->s, u, &k)) {
        *found = true;
        return k;
    }
    for (int32_t c = t->child_off[u]; c < t->child_off[u + 1]; c++) {
        if (!mp_trace_tree_is_child(t, u, t->child[c]))
            continue;
        k = search_topk(t, t->child[c], depth + 1, found);
        if (*found)
            return k;
    }
    return 0;
}

static long long moe_topk(const struct mp_trace_tree *t, int32_t moe)
{
    bool found = false;
    for (int32_t c = t->child_off[moe]; c < t->child_off[moe + 1]; c++) {
        if (!mp_trace_tree_is_child(t, moe, t->child[c]))
            continue;
        long long k = search_topk(t, t->child[c], 0, &found);
        if (found)
            return k;
    }
    mp_log(MP_LOG_DEBUG, "pseudo ops: no TopK op below vllm::moe_forward (UID %d), topk 4",
           (int)moe);
    return 4;
}

/* appends `"key": <raw JSON of the MoE op's args[key], or null>` */
static int put_arg(struct mp_buf *b, const struct mp_trace_store *s, int32_t moe, const char *key)
{
    struct mp_strview v = {NULL, 0};
    if (s->args[moe])
        (void)mp_trace_json_find((struct mp_strview){s->args[moe], s->args_len[moe]}, key, &v);
    int rc = mp_buf_putc(b, '"');
    rc = rc ? rc : mp_buf_puts(b, key);
    rc = rc ? rc : mp_buf_puts(b, "\": ");
    if (!rc)
        rc = v.p ? mp_buf_append(b, v.p, v.n) : mp_buf_puts(b, "null");
    return rc;
}

/* The args of a pseudo op: the donor op's four shape keys and Sequence
 * number (seq_uid when the donor has none), "Pseudo op", then extra.
 * "External id" (inject_pseudo_op's kernel correlation) goes to the store's
 * column, as the store keeps it for every cpu_op. */
static char *pseudo_args(const struct mp_trace_store *s, int32_t moe, int32_t seq_uid,
                         const char *extra, size_t *len)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_buf_putc(&b, '{');
    static const char *const keys[] = {"Input Dims", "Input type", "Input Strides",
                                       "Concrete Inputs"};
    for (size_t k = 0; k < 4 && !rc; k++) {
        rc = put_arg(&b, s, moe, keys[k]);
        rc = rc ? rc : mp_buf_puts(&b, ", ");
    }
    struct mp_strview seq = {NULL, 0};
    if (s->args[moe])
        (void)mp_trace_json_find((struct mp_strview){s->args[moe], s->args_len[moe]},
                                 "Sequence number", &seq);
    rc = rc ? rc : mp_buf_puts(&b, "\"Sequence number\": ");
    if (!rc)
        rc = seq.p ? mp_buf_append(&b, seq.p, seq.n) : mp_buf_printf(&b, "%d", (int)seq_uid);
    rc = rc ? rc : mp_buf_puts(&b, ", \"Pseudo op\": true");
    if (extra && !rc) {
        rc = mp_buf_puts(&b, ", ");
        rc = rc ? rc : mp_buf_puts(&b, extra);
    }
    rc = rc ? rc : mp_buf_putc(&b, '}');
    char *out = rc ? NULL : mp_strdup(mp_buf_cstr(&b));
    *len = out ? b.len : 0;
    mp_buf_fini(&b);
    return out;
}

/* TraceLens's inject_pseudo_op for one kernel: false when the tree does
 * not allow it (TraceLens raises there and gives up on the whole family). */
static int plan_inject(struct pseudo_plan *p, const struct mp_trace_tree *t, int32_t kernel,
                       int32_t moe, const char *name, const char *extra, bool *ok)
{
    const struct mp_trace_store *s = t->s;
    int32_t launch = t->parent[kernel];
    int32_t parent = launch >= 0 ? t->parent[launch] : -1;
    *ok = launch >= 0 && parent >= 0 && !p->wrapped[launch];
    if (!*ok)
        return 0;
    if (MP_GROW(p->ev, p->cap, p->n + 1, 64))
        return MP_ENOMEM;
    struct pseudo_ev *e = &p->ev[p->n];
    e->moe = moe;
    e->kernel = kernel;
    e->launch = launch;
    e->parent = parent;
    e->name = mp_intern_add(s->strings, name, strlen(name));
    e->args = pseudo_args(s, moe, moe, extra, &e->args_len);
    if (e->name < 0 || !e->args) {
        free(e->args);
        return MP_ENOMEM;
    }
    p->wrapped[launch] = 1;
    p->n++;
    return 0;
}

struct ts_pos {
    double ts;
    int32_t i;
    size_t pos;
};

static int cmp_ts_pos(const void *a, const void *b)
{
    const struct ts_pos *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos ? 1 : 0);
}

/* TraceLens's name index (name2event_uids) in its order: the host-tree
 * events of the trace by ts (stable), then the linked GPU events, then the
 * events a graph-capture merge grafted, in graft order. *out (malloc'd)
 * gets the events, *n their number. */
static int name_index(const struct mp_trace_tree *t, int32_t **out, size_t *n)
{
    const struct mp_trace_store *s = t->s;
    struct ts_pos *o = malloc((t->n ? t->n : 1) * sizeof(*o));
    int32_t *v = malloc((t->n ? t->n : 1) * sizeof(int32_t));
    if (!o || !v) {
        free(o);
        free(v);
        return MP_ENOMEM;
    }
    size_t no = 0, nv = 0;
    for (size_t i = 0; i < t->n_base && i < t->n; i++)
        if (t->in_tree[i] && !mp_kind_is_gpu(t->kind[i]))
            o[no++] = (struct ts_pos){s->ts[i], (int32_t)i, i};
    qsort(o, no, sizeof(*o), cmp_ts_pos);
    for (size_t q = 0; q < no; q++)
        v[nv++] = o[q].i;
    for (size_t i = 0; i < t->n_base && i < t->n; i++)
        if (t->in_tree[i] && mp_kind_is_gpu(t->kind[i]))
            v[nv++] = (int32_t)i;
    for (size_t i = t->n_base; i < t->n; i++)
        v[nv++] = (int32_t)i;
    free(o);
    *out = v;
    *n = nv;
    return 0;
}

/* One vllm::moe_forward (_create_pseudo_op_moe_unfused_triton). p->stop is
 * set when TraceLens would have raised. */
static int moe_unfused_one(struct pseudo_plan *p, const struct mp_trace_tree *t, int32_t moe,
                           int32_t cat_kernel)
{
    const struct mp_trace_store *s = t->s;
    int32_t *gpu = NULL;
    size_t ng, cap = 0;
    int grc = gpu_of(t, moe, &gpu, &ng, &cap);
    if (grc) {
        free(gpu);
        return grc;
    }
    struct ts_pos *mm = malloc((ng ? ng : 1) * sizeof(*mm));
    if (!mm) {
        free(gpu);
        return MP_ENOMEM;
    }
    size_t nm = 0, nscatter = 0;
    int32_t scatter = -1;
    for (size_t q = 0; q < ng; q++) {
        int32_t g = gpu[q];
        const char *nm_ = ev_name(s, g);
        if (s->cat[g] == cat_kernel && cat_kernel >= 0 && mp_str_contains_ci(nm_, "matmul_ogs"))
            mm[nm++] = (struct ts_pos){s->ts[g], g, q};
        if (mp_str_contains_ci(nm_, "matmul_scatter")) {
            scatter = g;
            nscatter++;
        }
    }
    int rc = 0;
    if (nm == 0)
        goto out;
    long long topk = moe_topk(t, moe);
    qsort(mm, nm, sizeof(*mm), cmp_ts_pos);
    for (size_t q = 0; q < nm && !rc && !p->stop; q++) {
        const char *kn = ev_name(s, mm[q].i);
        bool up = q == 0,
             gated = mp_str_contains_ci(kn, "_swiglu") || mp_str_contains_ci(kn, "_glu");
        char extra[160];
        snprintf(extra, sizeof(extra),
                 "\"MoE GEMM type\": \"%s\", \"MoE GEMM index\": %zu, \"MoE GEMM gated\": %s, "
                 "\"MoE topk\": %lld",
                 up ? "up" : "down", q, gated ? "true" : "false", topk);
        bool ok;
        rc = plan_inject(p, t, mm[q].i, moe,
                         up ? "pseudo_op::moe_triton_unfused_up"
                            : "pseudo_op::moe_triton_unfused_down",
                         extra, &ok);
        p->stop = !ok;
    }
    if (!rc && !p->stop && nscatter > 1)
        mp_log(MP_LOG_DEBUG, "pseudo ops: %zu matmul_scatter kernels under UID %d, none wrapped",
               nscatter, (int)moe);
    if (!rc && !p->stop && nscatter == 1) {
        bool ok;
        rc =
            plan_inject(p, t, scatter, moe, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter",
                        "\"MoE GEMM type\": \"finalize_matmul_scatter\"", &ok);
        p->stop = !ok;
    }
out:
    free(mm);
    free(gpu);
    return rc;
}

/* Room for n events in s, its arrays realloc'd as store.c grows them. */
static int store_grow(struct mp_trace_store *s, size_t n)
{
    if (n <= s->cap)
        return 0;
#define GROW(arr)                                                                                  \
    do {                                                                                           \
        void *np_ = mp_reallocarray(s->arr, n, sizeof(*s->arr));                                   \
        if (!np_)                                                                                  \
            return MP_ENOMEM;                                                                      \
        s->arr = np_;                                                                              \
    } while (0)
    GROW(ph);
    GROW(flags);
    GROW(name);
    GROW(cat);
    GROW(pid);
    GROW(tid);
    GROW(ts);
    GROW(dur);
    GROW(id);
    GROW(external_id);
    GROW(correlation);
    GROW(stream);
    GROW(args);
    GROW(args_len);
#undef GROW
    s->cap = n;
    return 0;
}

/* Appends the planned events to the store and wraps their launch calls. */
static int plan_apply(struct pseudo_plan *p, struct mp_trace_store *s, struct mp_trace_tree *t)
{
    size_t n0 = s->n;
    int32_t cat = mp_intern_add(s->strings, "cpu_op", 6);
    int32_t *wrap = malloc((p->n ? p->n : 1) * sizeof(int32_t));
    if (cat < 0 || !wrap || store_grow(s, n0 + p->n)) {
        free(wrap);
        return MP_ENOMEM;
    }
    const uint32_t from_parent = MP_EV_PID | MP_EV_TID | MP_EV_PID_STR | MP_EV_TID_STR;
    for (size_t k = 0; k < p->n; k++) {
        const struct pseudo_ev *e = &p->ev[k];
        size_t i = n0 + k;
        char *args = mp_arena_strndup(s->arena, e->args, e->args_len);
        if (!args) {
            free(wrap);
            return MP_ENOMEM;
        }
        s->ph[i] = 'X';
        s->flags[i] = MP_EV_NAME | MP_EV_CAT | MP_EV_ARGS | (s->flags[e->moe] & MP_EV_DIMS) |
                      (s->flags[e->parent] & from_parent) |
                      ((s->flags[e->kernel] & MP_EV_CORR) ? MP_EV_EXTID : 0);
        s->name[i] = e->name;
        s->cat[i] = cat;
        s->pid[i] = s->pid[e->parent];
        s->tid[i] = s->tid[e->parent];
        s->ts[i] = s->dur[i] = 0.0;
        s->id[i] = 0;
        s->external_id[i] = s->correlation[e->kernel];
        s->correlation[i] = s->stream[i] = 0;
        s->args[i] = args;
        s->args_len[i] = (uint32_t)e->args_len;
        wrap[k] = e->launch;
        s->n++;
    }
    int rc = mp_trace_tree_insert_pseudo(t, wrap, p->n);
    free(wrap);
    return rc;
}

/* The end of every MoE pass: the warning when a kernel could not be
 * wrapped (what names the kernels, e.g. "a MoE kernel"), the planned events
 * applied when nothing failed and counted into *added, the plan freed. */
static int plan_finish(struct pseudo_plan *p, struct mp_trace_store *s, struct mp_trace_tree *t,
                       int rc, const char *what, size_t *added)
{
    if (p->stop)
        mp_log(MP_LOG_WARN,
               "pseudo ops: %s has no launch call to wrap (or one wrapped twice); those "
               "pseudo ops stop there, as in TraceLens",
               what);
    if (!rc)
        rc = plan_apply(p, s, t);
    if (!rc)
        *added += p->n;
    for (size_t k = 0; k < p->n; k++)
        free(p->ev[k].args);
    free(p->ev);
    free(p->wrapped);
    return rc;
}

static bool has_name(const struct mp_trace_store *s, const int32_t *idx, size_t n, int32_t id)
{
    for (size_t q = 0; q < n && id >= 0; q++)
        if (s->name[idx[q]] == id)
            return true;
    return false;
}

/* any cpu_op below u (children lists); after a graph-capture merge
 * TraceLens does not descend into events without GPU work below them */
static bool cpu_op_below(const struct mp_trace_tree *t, int32_t u, int32_t cat_cpu, bool merged,
                         int32_t **buf, size_t *cap)
{
    for (int32_t q = t->child_off[u]; q < t->child_off[u + 1]; q++) {
        int32_t c = t->child[q];
        if (!mp_trace_tree_is_child(t, u, c))
            continue;
        if (cat_cpu >= 0 && t->s->cat[c] == cat_cpu)
            return true;
        if (merged && !mp_kind_is_gpu(t->kind[c])) {
            size_t n = 0;
            if (mp_trace_tree_gpu_events(t, c, buf, &n, cap) == 0)
                continue; /* non_gpu_path (an allocation failure reads the same) */
        }
        if (cpu_op_below(t, c, cat_cpu, merged, buf, cap))
            return true;
    }
    return false;
}

/* pseudo_ops_registry's MoE_Fused: a vllm::rocm_aiter_fused_moe with no cpu
 * op below it and exactly one AITER fused-MoE kernel ("aiter::" and "fmoe"
 * in its name, no "MoeSorting", no "quant") gets
 * pseudo_op::moe_aiter_fused_1stage over that kernel. */
static int moe_fused_aiter(struct mp_trace_store *s, struct mp_trace_tree *t, const int32_t *idx,
                           size_t nidx, int32_t aiter_id, size_t *added)
{
    int32_t cat_kernel = mp_intern_find(s->strings, "kernel", 6);
    int32_t cat_cpu = mp_intern_find(s->strings, "cpu_op", 6);
    bool merged = t->n_base < t->n;
    struct pseudo_plan p;
    int rc = plan_init(&p, t);
    int32_t *gpu = NULL, *tmp = NULL;
    size_t cap = 0, tcap = 0;
    for (size_t q = 0; q < nidx && !rc && !p.stop; q++) {
        int32_t op = idx[q];
        if (s->name[op] != aiter_id || cpu_op_below(t, op, cat_cpu, merged, &tmp, &tcap))
            continue;
        size_t ng, nk = 0;
        if ((rc = gpu_of(t, op, &gpu, &ng, &cap)))
            break;
        int32_t kern = -1;
        for (size_t g = 0; g < ng; g++) {
            const char *kn = ev_name(s, gpu[g]);
            if (cat_kernel >= 0 && s->cat[gpu[g]] == cat_kernel && strstr(kn, "aiter::") &&
                strstr(kn, "fmoe") && !strstr(kn, "MoeSorting") &&
                !mp_str_contains_ci(kn, "quant")) {
                kern = gpu[g];
                nk++;
            }
        }
        if (nk != 1)
            continue;
        bool ok;
        rc = plan_inject(&p, t, kern, op, "pseudo_op::moe_aiter_fused_1stage", NULL, &ok);
        p.stop = !ok;
    }
    free(gpu);
    free(tmp);
    return plan_finish(&p, s, t, rc, "an AITER MoE kernel", added);
}

/* Whether some event of category cat_kernel (an interned id, -1 for
 * none) has a name holding sub (ASCII case-insensitively when ci). */
static bool any_kernel_with(const struct mp_trace_store *s, const struct mp_trace_tree *t,
                            int32_t cat_kernel, const char *sub, bool ci)
{
    for (size_t i = 0; i < t->n && cat_kernel >= 0; i++) {
        if (s->cat[i] != cat_kernel || s->name[i] < 0)
            continue;
        const char *nm = mp_intern_str(s->strings, s->name[i]);
        if (ci ? mp_str_contains_ci(nm, sub) : strstr(nm, sub) != NULL)
            return true;
    }
    return false;
}

/* pseudo_ops_registry's MoE_Unfused_Triton */
static int moe_unfused(struct mp_trace_store *s, struct mp_trace_tree *t, const int32_t *idx,
                       size_t nidx, size_t *added)
{
    int32_t moe_id = mp_intern_find(s->strings, "vllm::moe_forward", 17);
    int32_t aiter_id = mp_intern_find(s->strings, "vllm::rocm_aiter_fused_moe", 26);
    int32_t cat_kernel = mp_intern_find(s->strings, "kernel", 6);
    bool has_ogs = any_kernel_with(s, t, cat_kernel, "matmul_ogs", true);
    if (!has_name(s, idx, nidx, moe_id))
        return 0;
    if (has_name(s, idx, nidx, aiter_id))
        return moe_fused_aiter(s, t, idx, nidx, aiter_id, added);
    if (!has_ogs)
        return 0;
    struct pseudo_plan p;
    int rc = plan_init(&p, t);
    for (size_t q = 0; q < nidx && !rc && !p.stop; q++)
        if (s->name[idx[q]] == moe_id)
            rc = moe_unfused_one(&p, t, idx[q], cat_kernel);
    return plan_finish(&p, s, t, rc, "a MoE kernel", added);
}

/* topk of a GPTQ/AWQ MoE op: Input Dims[4][1] (topk_ids [T, topk]), else 8 */
static long long gptq_topk(const struct mp_trace_store *s, int32_t op)
{
    struct mp_strview dims;
    if (!s->args[op] ||
        mp_trace_json_find((struct mp_strview){s->args[op], s->args_len[op]}, "Input Dims", &dims))
        return 8;
    /* walk to element 4 of the outer list, then element 1 of it */
    size_t q = 0, depth = 0;
    int el = 0;
    long long v = 8;
    for (; q < dims.n; q++) {
        char ch = dims.p[q];
        if (ch == '[' && ++depth == 2 && el == 4)
            break;
        if (ch == ']')
            depth--;
        if (ch == ',' && depth == 1)
            el++;
    }
    if (q >= dims.n)
        return 8;
    /* inside [T, topk]: the second number */
    const char *p = dims.p + q + 1, *e = dims.p + dims.n;
    const char *comma = memchr(p, ',', (size_t)(e - p));
    const char *close = memchr(p, ']', (size_t)(e - p));
    if (!comma || !close || comma > close)
        return 8;
    const char *b = comma + 1, *end = close;
    const char *c2 = memchr(b, ',', (size_t)(end - b));
    if (c2)
        end = c2;
    if (!parse_int(b, (size_t)(end - b), &v))
        return 8;
    return v;
}

/* pseudo_ops_registry's MoE_GPTQ_AWQ: under every
 * vllm::outplace_fused_experts, its first fused_moe_kernel_gptq_awq kernel
 * by ts gets pseudo_op::moe_gptq_awq_up (gated), the later ones
 * pseudo_op::moe_gptq_awq_down. */
static int moe_gptq_awq(struct mp_trace_store *s, struct mp_trace_tree *t, const int32_t *idx,
                        size_t nidx, size_t *added)
{
    int32_t op_id = mp_intern_find(s->strings, "vllm::outplace_fused_experts", 28);
    int32_t cat_kernel = mp_intern_find(s->strings, "kernel", 6);
    bool has_kernel = any_kernel_with(s, t, cat_kernel, "fused_moe_kernel_gptq_awq", false);
    if (!has_name(s, idx, nidx, op_id) || !has_kernel)
        return 0;
    struct pseudo_plan p;
    int rc = plan_init(&p, t);
    int32_t *gpu = NULL;
    size_t cap = 0;
    struct ts_pos *mm = NULL;
    for (size_t q = 0; q < nidx && !rc && !p.stop; q++) {
        int32_t op = idx[q];
        if (s->name[op] != op_id)
            continue;
        size_t ng, nm = 0;
        if ((rc = gpu_of(t, op, &gpu, &ng, &cap)))
            break;
        struct ts_pos *nmm = mp_reallocarray(mm, ng ? ng : 1, sizeof(*mm));
        if (!nmm) {
            rc = MP_ENOMEM;
            break;
        }
        mm = nmm;
        for (size_t g = 0; g < ng; g++)
            if (s->cat[gpu[g]] == cat_kernel &&
                strstr(ev_name(s, gpu[g]), "fused_moe_kernel_gptq_awq"))
                mm[nm++] = (struct ts_pos){s->ts[gpu[g]], gpu[g], g};
        if (nm == 0)
            continue;
        long long topk = gptq_topk(s, op);
        qsort(mm, nm, sizeof(*mm), cmp_ts_pos);
        for (size_t k = 0; k < nm && !rc && !p.stop; k++) {
            char extra[160];
            snprintf(extra, sizeof(extra),
                     "\"MoE GEMM type\": \"%s\", \"MoE GEMM index\": %zu, \"MoE GEMM gated\": %s, "
                     "\"MoE topk\": %lld",
                     k == 0 ? "up" : "down", k, k == 0 ? "true" : "false", topk);
            bool ok;
            rc = plan_inject(&p, t, mm[k].i, op,
                             k == 0 ? "pseudo_op::moe_gptq_awq_up" : "pseudo_op::moe_gptq_awq_down",
                             extra, &ok);
            p.stop = !ok;
        }
    }
    free(gpu);
    free(mm);
    return plan_finish(&p, s, t, rc, "a GPTQ/AWQ MoE kernel", added);
}

/* re.search(r"aiter/mla.py\(\d+\): mla_decode_fwd", name) */
static bool is_mla_decode_frame(const char *n)
{
    for (const char *p = strstr(n, "aiter/mla"); p; p = strstr(p + 1, "aiter/mla")) {
        const char *q = p + 9;
        if (!q[0] || strncmp(q + 1, "py(", 3) != 0) /* the regex's '.' is any character */
            continue;
        q += 4;
        if (*q < '0' || *q > '9')
            continue;
        while (*q >= '0' && *q <= '9')
            q++;
        if (strncmp(q, "): mla_decode_fwd", 17) == 0)
            return true;
    }
    return false;
}

static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* re.search(r":\s*mla_fp8_prefill_attn(\b|$)", name) */
static bool is_mla_prefill_frame(const char *n)
{
    for (const char *p = strchr(n, ':'); p; p = strchr(p + 1, ':')) {
        const char *q = p + 1;
        while (*q == ' ' || (*q >= '\t' && *q <= '\r'))
            q++;
        if (strncmp(q, "mla_fp8_prefill_attn", 20) == 0 && !is_word(q[20]))
            return true;
    }
    return false;
}

/* first event named `name` in the pre-order of u's children (the search of
 * the MLA extensions), or -1 */
static int32_t find_below(const struct mp_trace_tree *t, int32_t u, int32_t name)
{
    for (int32_t q = t->child_off[u]; q < t->child_off[u + 1]; q++) {
        int32_t c = t->child[q];
        if (!mp_trace_tree_is_child(t, u, c))
            continue;
        if (t->s->name[c] == name)
            return c;
        int32_t f = find_below(t, c, name);
        if (f >= 0)
            return f;
    }
    return -1;
}

/* Appends pseudo ops `pseudo` for frames fr[0..n), each with the shapes of
 * its donor op dn[] (Sequence number: the donor's, else the frame's UID when
 * seq_from_frame, else the donor's UID) and the frame's pid, tid, ts and dur,
 * then puts them in the tree: wrapping each frame's children
 * (inject_pseudo_op_wrap_children) or above each frame
 * (inject_pseudo_op_above_event). */
static int frames_flush(struct mp_trace_store *s, struct mp_trace_tree *t, const int32_t *fr,
                        const int32_t *dn, size_t n, const char *pseudo, const char *extra,
                        bool seq_from_frame, bool wrap)
{
    if (n == 0)
        return 0;
    size_t n0 = s->n;
    int32_t name = mp_intern_add(s->strings, pseudo, strlen(pseudo));
    int32_t cat = mp_intern_add(s->strings, "cpu_op", 6);
    if (name < 0 || cat < 0 || store_grow(s, n0 + n))
        return MP_ENOMEM;
    const uint32_t keep =
        MP_EV_PID | MP_EV_TID | MP_EV_PID_STR | MP_EV_TID_STR | MP_EV_TS | MP_EV_DUR;
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        size_t i = n0 + k, len = 0;
        int32_t f = fr[k], d = dn[k];
        char *text = pseudo_args(s, d, seq_from_frame ? f : d, extra, &len);
        char *args = text ? mp_arena_strndup(s->arena, text, len) : NULL;
        free(text);
        if (!args) {
            rc = MP_ENOMEM;
            break;
        }
        s->ph[i] = 'X';
        s->flags[i] =
            MP_EV_NAME | MP_EV_CAT | MP_EV_ARGS | (s->flags[d] & MP_EV_DIMS) | (s->flags[f] & keep);
        s->name[i] = name;
        s->cat[i] = cat;
        s->pid[i] = s->pid[f];
        s->tid[i] = s->tid[f];
        s->ts[i] = s->ts[f];
        s->dur[i] = s->dur[f];
        s->id[i] = s->external_id[i] = s->correlation[i] = s->stream[i] = 0;
        s->args[i] = args;
        s->args_len[i] = (uint32_t)len;
        s->n++;
    }
    /* on an error the store keeps the events made so far; the report fails */
    if (rc)
        return rc;
    return wrap ? mp_trace_tree_wrap_children(t, fr, n) : mp_trace_tree_insert_above(t, fr, n);
}

/* The MLA decode / prefill extensions: every python frame whose name
 * matches, with the op `donor` below it and GPU work, gets a pseudo op
 * `pseudo` (the frame's ts, dur, pid and tid; the donor's shapes) that
 * wraps all the frame's children (inject_pseudo_op_wrap_children). Frames
 * go by name in the order of the name index, then by event. TraceLens
 * wraps them one by one; magpie in batches of frames none of which is
 * inside another (a nested one starts the next batch), which gives the same
 * tree: a wrap leaves the donors and GPU events below a frame as they were. */
static int mla_family(struct mp_trace_store *s, struct mp_trace_tree *t, const int32_t *idx,
                      size_t nidx, bool (*match)(const char *), const char *donor,
                      const char *pseudo, size_t *added)
{
    int32_t donor_id = mp_intern_find(s->strings, donor, strlen(donor));
    int32_t pyf = mp_intern_find(s->strings, "python_function", 15);
    if (!has_name(s, idx, nidx, donor_id))
        return 0;
    int32_t nn = mp_intern_count(s->strings);
    int32_t *rank = malloc(((size_t)nn + 1) * sizeof(int32_t));
    struct ts_pos *sel = malloc((nidx ? nidx : 1) * sizeof(*sel));
    int32_t *wrap = malloc((nidx ? nidx : 1) * sizeof(int32_t));
    int32_t *dn = malloc((nidx ? nidx : 1) * sizeof(int32_t));
    int32_t *marked = NULL; /* events marked for the current batch */
    size_t nmarked = 0, capm = 0;
    /* per event: 1 = a frame of the batch, 2 = an ancestor of one */
    uint8_t *mark = calloc(t->n + nidx + 1, 1); /* room for the pseudo ops made meanwhile */
    int rc = rank && sel && wrap && dn && mark ? 0 : MP_ENOMEM;
    size_t nsel = 0, nw = 0;
    int32_t nranked = 0;
    for (int32_t i = 0; !rc && i < nn; i++)
        rank[i] = -1;
    /* names in first-appearance order; rank -2 = does not match */
    for (size_t q = 0; q < nidx && !rc; q++) {
        int32_t id = s->name[idx[q]];
        if (id < 0)
            continue;
        if (rank[id] == -1)
            rank[id] = match(mp_intern_str(s->strings, id)) ? nranked++ : -2;
        if (rank[id] >= 0 && s->cat[idx[q]] == pyf && pyf >= 0)
            sel[nsel++] = (struct ts_pos){(double)rank[id], idx[q], q};
    }
    if (!rc)
        qsort(sel, nsel, sizeof(*sel), cmp_ts_pos);
    int32_t *gpu = NULL;
    size_t cap = 0;
    for (size_t q = 0; q < nsel && !rc; q++) {
        int32_t f = sel[q].i, d = find_below(t, f, donor_id);
        size_t ng;
        if (d < 0)
            continue;
        if ((rc = gpu_of(t, f, &gpu, &ng, &cap)))
            break;
        if (ng == 0)
            continue;
        bool nested = mark[f] != 0;
        for (int32_t p = t->parent[f]; p >= 0 && !nested; p = t->parent[p])
            nested = mark[p] == 1;
        if (nested) {
            rc = frames_flush(s, t, wrap, dn, nw, pseudo, NULL, true, true);
            *added += rc ? 0 : nw;
            nw = 0;
            for (size_t k = 0; k < nmarked; k++)
                mark[marked[k]] = 0;
            nmarked = 0;
            if (rc)
                break;
        }
        /* the batch's frames and their ancestors (after a flush the walk
         * may pass pseudo ops: at most nidx of them are made) */
        for (int32_t p = f; p >= 0 && !rc; p = t->parent[p]) {
            if (mark[p] && p != f)
                break;
            if (MP_GROW(marked, capm, nmarked + 1, 256)) {
                rc = MP_ENOMEM;
                break;
            }
            marked[nmarked++] = p;
            mark[p] = p == f ? 1 : (mark[p] ? mark[p] : 2);
        }
        wrap[nw] = f;
        dn[nw++] = d;
    }
    free(gpu);
    if (!rc) {
        rc = frames_flush(s, t, wrap, dn, nw, pseudo, NULL, true, true);
        *added += rc ? 0 : nw;
    }
    free(rank);
    free(sel);
    free(wrap);
    free(dn);
    free(mark);
    free(marked);
    return rc;
}

/* name.endswith(": " + marker) */
static bool ends_with_marker(const char *n, const char *marker)
{
    size_t ln = strlen(n), lm = strlen(marker);
    return ln >= lm + 2 && n[ln - lm - 2] == ':' && n[ln - lm - 1] == ' ' &&
           strcmp(n + ln - lm, marker) == 0;
}

/* pseudo_ops_registry's MoE_Flydsl: every python frame named
 * "...: flydsl_moe_stage1" (then "...: flydsl_moe_stage2") with an
 * aiter::fused_moe_ op above it gets pseudo_op::moe_flydsl_stage1 (_stage2)
 * between it and its parent (inject_pseudo_op_above_event), with the fused
 * op's shapes. Frames go by name in the order of the name index. */
static int moe_flydsl(struct mp_trace_store *s, struct mp_trace_tree *t, const int32_t *idx,
                      size_t nidx, size_t *added)
{
    int32_t fused = mp_intern_find(s->strings, "aiter::fused_moe_", 17);
    if (!has_name(s, idx, nidx, fused))
        return 0;
    int32_t pyf = mp_intern_find(s->strings, "python_function", 15);
    int32_t pyf2 = mp_intern_find(s->strings, "python_func", 11);
    static const char *const markers[2] = {"flydsl_moe_stage1", "flydsl_moe_stage2"};
    static const char *const names[2] = {"pseudo_op::moe_flydsl_stage1",
                                         "pseudo_op::moe_flydsl_stage2"};
    int32_t nn = mp_intern_count(s->strings);
    int32_t *rank = malloc(((size_t)nn + 1) * sizeof(int32_t));
    struct ts_pos *sel = malloc((nidx ? nidx : 1) * sizeof(*sel));
    int32_t *tg = malloc((nidx ? nidx : 1) * sizeof(int32_t));
    int32_t *fm = malloc((nidx ? nidx : 1) * sizeof(int32_t));
    int rc = rank && sel && tg && fm ? 0 : MP_ENOMEM;
    for (int st = 0; st < 2 && !rc; st++) {
        size_t nsel = 0, ng = 0;
        int32_t nranked = 0;
        for (int32_t i = 0; i < nn; i++)
            rank[i] = -1;
        for (size_t q = 0; q < nidx; q++) {
            int32_t id = s->name[idx[q]];
            if (id < 0)
                continue;
            if (rank[id] == -1)
                rank[id] =
                    ends_with_marker(mp_intern_str(s->strings, id), markers[st]) ? nranked++ : -2;
            if (rank[id] >= 0)
                sel[nsel++] = (struct ts_pos){(double)rank[id], idx[q], q};
        }
        qsort(sel, nsel, sizeof(*sel), cmp_ts_pos);
        for (size_t q = 0; q < nsel; q++) {
            int32_t e = sel[q].i, f = -1;
            if ((s->cat[e] != pyf || pyf < 0) && (s->cat[e] != pyf2 || pyf2 < 0))
                continue;
            for (int32_t p = t->parent[e]; p >= 0 && f < 0; p = t->parent[p])
                if (s->name[p] == fused)
                    f = p;
            if (f < 0)
                continue;
            tg[ng] = e;
            fm[ng++] = f;
        }
        char extra[96];
        snprintf(extra, sizeof(extra), "\"MoE flydsl stage\": \"%s\"", markers[st]);
        rc = frames_flush(s, t, tg, fm, ng, names[st], extra, false, false);
        *added += rc ? 0 : ng;
    }
    free(rank);
    free(sel);
    free(tg);
    free(fm);
    return rc;
}

int tl_pseudo_apply(struct mp_trace_store *s, struct mp_trace_tree *t, size_t *added)
{
    *added = 0;
    int32_t *idx = NULL;
    size_t nidx = 0;
    int rc = name_index(t, &idx, &nidx);
    /* TraceLens (at 171dd747) detects its paged-attention KV-cache dtype
     * marks by these names and then imports a module it does not ship: the
     * error drops every pseudo op (the SGLang names are already renamed) */
    int32_t pa1 = mp_intern_find(s->strings, "_rocm_C::paged_attention", 24);
    int32_t pa2 = mp_intern_find(s->strings, "aiter::paged_attention_v1", 25);
    if (!rc && (has_name(s, idx, nidx, pa1) || has_name(s, idx, nidx, pa2))) {
        mp_log(MP_LOG_WARN, "pseudo ops: none made for a trace with paged attention ops, as "
                            "TraceLens, whose extension for them fails to load");
        free(idx);
        return 0;
    }
    /* in pseudo_ops_registry's order; each family sees the tree the
     * previous ones left, but the name index TraceLens never updates */
    rc = rc ? rc : moe_unfused(s, t, idx, nidx, added);
    rc = rc ? rc : moe_gptq_awq(s, t, idx, nidx, added);
    rc = rc ? rc : moe_flydsl(s, t, idx, nidx, added);
    rc = rc ? rc
            : mla_family(s, t, idx, nidx, is_mla_decode_frame, "aiter::mla_decode_stage1_asm_fwd",
                         "pseudo_mla_decode_fwd", added);
    rc = rc ? rc
            : mla_family(s, t, idx, nidx, is_mla_prefill_frame, "aiter::mla_prefill_ps_asm_fwd",
                         "pseudo_mla_prefill_fwd", added);
    free(idx);
    return rc;
}
