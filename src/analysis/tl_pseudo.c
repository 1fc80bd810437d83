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
 * swiglu/glu kernel name) that src/perf/moe.c models; it sits between the
 * kernel's launch call and that call's parent (mp_trace_tree_insert_pseudo),
 * appended to the store after every other event, so its UID is the one
 * TraceLens gives it.
 *
 * Not implemented (no trace to check them against): the fused AITER MoE,
 * GPTQ/AWQ and flydsl MoE, MLA decode / prefill and DeepSeek-V4 paged
 * decode families and the paged-attention KV-cache dtype marks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <magpie/base.h>
#include <magpie/trace.h>
#include <magpie/tree.h>

#include "tl_int.h"

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
};

static bool contains_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return false;
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

/* The args of a pseudo op (inject_pseudo_op's): the MoE op's four shape
 * keys and Sequence number (its UID when absent), "Pseudo op", then extra.
 * "External id" (the kernel's correlation) goes to the store's column, as
 * the store keeps it for every cpu_op. */
static char *pseudo_args(const struct mp_trace_store *s, int32_t moe, const char *extra,
                         size_t *len)
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
        rc = seq.p ? mp_buf_append(&b, seq.p, seq.n) : mp_buf_printf(&b, "%d", (int)moe);
    rc = rc ? rc : mp_buf_puts(&b, ", \"Pseudo op\": true, ");
    rc = rc ? rc : mp_buf_puts(&b, extra);
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
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        struct pseudo_ev *ne = realloc(p->ev, nc * sizeof(*ne));
        if (!ne)
            return MP_ENOMEM;
        p->ev = ne;
        p->cap = nc;
    }
    struct pseudo_ev *e = &p->ev[p->n];
    e->moe = moe;
    e->kernel = kernel;
    e->launch = launch;
    e->parent = parent;
    e->name = mp_intern_add(s->strings, name, strlen(name));
    e->args = pseudo_args(s, moe, extra, &e->args_len);
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

/* One vllm::moe_forward (_create_pseudo_op_moe_unfused_triton). *stop is
 * set when TraceLens would have raised. */
static int moe_unfused_one(struct pseudo_plan *p, const struct mp_trace_tree *t, int32_t moe,
                           int32_t cat_kernel, bool *stop)
{
    const struct mp_trace_store *s = t->s;
    int32_t *gpu = NULL;
    size_t ng = 0, cap = 0;
    long got = mp_trace_tree_gpu_events(t, moe, &gpu, &ng, &cap);
    if (got < 0)
        return (int)got;
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
        if (s->cat[g] == cat_kernel && cat_kernel >= 0 && contains_ci(nm_, "matmul_ogs"))
            mm[nm++] = (struct ts_pos){s->ts[g], g, q};
        if (contains_ci(nm_, "matmul_scatter")) {
            scatter = g;
            nscatter++;
        }
    }
    int rc = 0;
    if (nm == 0)
        goto out;
    long long topk = moe_topk(t, moe);
    qsort(mm, nm, sizeof(*mm), cmp_ts_pos);
    for (size_t q = 0; q < nm && !rc && !*stop; q++) {
        const char *kn = ev_name(s, mm[q].i);
        bool up = q == 0, gated = contains_ci(kn, "_swiglu") || contains_ci(kn, "_glu");
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
        *stop = !ok;
    }
    if (!rc && !*stop && nscatter > 1)
        mp_log(MP_LOG_DEBUG, "pseudo ops: %zu matmul_scatter kernels under UID %d, none wrapped",
               nscatter, (int)moe);
    if (!rc && !*stop && nscatter == 1) {
        bool ok;
        rc =
            plan_inject(p, t, scatter, moe, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter",
                        "\"MoE GEMM type\": \"finalize_matmul_scatter\"", &ok);
        *stop = !ok;
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
        void *np_ = realloc(s->arr, sizeof(*s->arr) * n);                                          \
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

int tl_pseudo_apply(struct mp_trace_store *s, struct mp_trace_tree *t, size_t *added)
{
    *added = 0;
    int32_t moe_id = mp_intern_find(s->strings, "vllm::moe_forward", 17);
    int32_t aiter_id = mp_intern_find(s->strings, "vllm::rocm_aiter_fused_moe", 26);
    int32_t cat_kernel = mp_intern_find(s->strings, "kernel", 6);
    bool has_moe = false, has_aiter = false, has_ogs = false;
    for (size_t i = 0; i < t->n; i++) {
        int32_t nm = s->name[i];
        has_moe = has_moe || (nm >= 0 && nm == moe_id);
        has_aiter = has_aiter || (nm >= 0 && nm == aiter_id);
        if (!has_ogs && cat_kernel >= 0 && s->cat[i] == cat_kernel && nm >= 0)
            has_ogs = contains_ci(mp_intern_str(s->strings, nm), "matmul_ogs");
    }
    if (!has_moe || has_aiter || !has_ogs)
        return 0;
    struct pseudo_plan p = {.wrapped = calloc(t->n ? t->n : 1, 1)};
    if (!p.wrapped)
        return MP_ENOMEM;
    int rc = 0;
    bool stop = false;
    for (size_t i = 0; i < t->n && !rc && !stop; i++)
        if (s->name[i] == moe_id)
            rc = moe_unfused_one(&p, t, (int32_t)i, cat_kernel, &stop);
    if (stop)
        mp_log(MP_LOG_WARN, "pseudo ops: a MoE kernel has no launch call to wrap (or one wrapped "
                            "twice); the MoE pseudo ops stop there, as in TraceLens");
    if (!rc)
        rc = plan_apply(&p, s, t);
    if (!rc)
        *added = p.n;
    for (size_t k = 0; k < p.n; k++)
        free(p.ev[k].args);
    free(p.ev);
    free(p.wrapped);
    return rc;
}
