/* The resolver: from a profiler kernel name to the file that defines it.
 *
 * Steps: demangle (libiberty) -> closed-library check -> Magpie's kind and
 * category -> parse the C++ name into its qualified function and the
 * "anchors" in its template arguments (the function enclosing a lambda, the
 * functor types) -> look the names up in the index -> weigh the candidates
 * (namespace agreement, definition kind, the trace's Python frames) -> a
 * confidence from a calibrated table per decision path times the top
 * candidate's share. docs/sources.md documents the model. */
#include <ctype.h>
#include <libiberty/demangle.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src_int.h"

/* ------------------------------------------------------------ demangling */

int mp_src_demangle(const char *name, struct mp_buf *out)
{
    mp_buf_reset(out);
    if (!name || strncmp(name, "_Z", 2) != 0)
        return MP_EINVAL;
    char *s = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
    if (!s)
        return MP_EINVAL;
    int rc = mp_buf_puts(out, s);
    free(s);
    return rc;
}

/* The source names of one mangled nested name at *pp ("3foo3bar", with
 * substitutions such as "S_" or "S5_" passed over: their text is not
 * known without the substitution table) written "foo::bar" to out;
 * *pp is left after it. Returns how many names were written. */
static int mangled_names(const char **pp, struct mp_buf *out, int *rc)
{
    const char *p = *pp;
    int parts = 0;
    while (!*rc) {
        if (*p == 'S' &&
            (isdigit((unsigned char)p[1]) || isupper((unsigned char)p[1]) || p[1] == '_')) {
            const char *u = strchr(p + 1, '_');
            if (!u)
                break;
            p = u + 1;
            continue;
        }
        if (*p == 'S' && islower((unsigned char)p[1])) { /* St (std::), Sa, ... */
            p += 2;
            continue;
        }
        if (!isdigit((unsigned char)*p))
            break;
        char *e;
        long l = strtol(p, &e, 10);
        if (l <= 0 || (size_t)l > strlen(e))
            break;
        if (parts++)
            *rc = mp_buf_puts(out, "::");
        /* _GLOBAL__N_1: the anonymous namespace */
        if (!*rc)
            *rc = l > 10 && strncmp(e, "_GLOBAL__N", 10) == 0
                      ? mp_buf_puts(out, "(anonymous namespace)")
                      : mp_buf_append(out, e, (size_t)l);
        p = e + l;
    }
    *pp = p;
    return parts;
}

/* When the library cannot demangle a name, its leading nested name
 * (_ZN 3foo 3bar ... I/E) still names the function: "foo::bar", and the
 * chain of nested names that open its first template arguments names what
 * a launch wrapper runs: _ZN7cutlass13device_kernelIN2at...25enable_3x_
 * kernel_for_sm9xINS_4gemm6kernel13GemmUniversalI... gives
 * "cutlass::device_kernel<at::...::enable_3x_kernel_for_sm9x<gemm::kernel::
 * GemmUniversal<...>>>" (leading literal arguments, "Li1E", skipped). */
static int nested_prefix(const char *m, struct mp_buf *out)
{
    mp_buf_reset(out);
    if (strncmp(m, "_ZN", 3) != 0)
        return MP_EINVAL;
    const char *p = m + 3;
    int rc = 0;
    if (!mangled_names(&p, out, &rc))
        return rc ? rc : MP_EINVAL;
    int depth = 0;
    while (!rc && *p == 'I' && depth < 6) {
        p++;
        while (*p == 'L' && strchr(p, 'E'))
            p = strchr(p, 'E') + 1;
        if (*p != 'N')
            break;
        p++;
        rc = mp_buf_putc(out, '<');
        if (!rc && !mangled_names(&p, out, &rc) && !rc)
            rc = mp_buf_puts(out, "?");
        depth++;
    }
    while (!rc && depth-- > 0)
        rc = mp_buf_putc(out, '>');
    return rc;
}

/* ------------------------------------------------- classification tables */

static bool has(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

static bool starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Closed or prebuilt libraries: no source to open. */
static const char *closed_library(const char *raw, const char *dm)
{
    if (starts(raw, "nvjet_"))
        return "cuBLASLt (nvjet)";
    if (has(dm, "cudnn") || has(raw, "cudnn") || starts(dm, "void cutlass__5x_cudnn"))
        return "cuDNN";
    if (has(dm, "cublasLt::") || has(dm, "cublas") || has(raw, "_cublas") ||
        has(dm, "internal::gemvx::") || has(dm, "gemv2T_kernel") || has(dm, "gemv2N_kernel") ||
        has(raw, "xmma_gemm") || has(dm, "cutlass::Kernel2<cutlass_") || starts(raw, "ampere_") ||
        starts(raw, "volta_") || starts(raw, "turing_") || starts(raw, "sm80_xmma") ||
        starts(raw, "sm90_xmma") || starts(raw, "sm100_xmma") || has(dm, "cublasSplitKParams"))
        return "cuBLAS/cuBLASLt";
    if (starts(raw, "Cijk_") || starts(raw, "Cij_"))
        return "rocBLAS/hipBLASLt (Tensile)";
    if (starts(raw, "nccl") || starts(dm, "void nccl") || has(dm, "ncclDevKernel"))
        return "NCCL/RCCL";
    if (starts(raw, "__amd_rocclr_") || starts(raw, "MEMORY_COPY_"))
        return "ROCm runtime (ROCclr)";
    return NULL;
}

/* Magpie's kind column, in Magpie's classification order (+ cuda_cpp for
 * CUDA C++ kernels that Magpie, being AMD-only, has no kind for). */
static const char *kind_of(const char *raw, const char *dm, const char *lib)
{
    if (starts(raw, "execute_context") || starts(raw, "## Call"))
        return "annotation";
    if (starts(raw, "Cijk_"))
        return "tensile_gemm";
    if (has(dm, "wvSplitK") || has(dm, "wvSpltK") || has(dm, "DeviceGemmWmma"))
        return "hip_cpp";
    if (starts(raw, "_ZN5aiter") || has(dm, "aiter::"))
        return "aiter";
    if (has(dm, "sgl_hip::") || has(dm, "sglang"))
        return "hip_cpp";
    if (starts(raw, "_ZN7ck_tile") || has(dm, "ck_tile::kentry") || starts(raw, "_ZN2ck") ||
        starts(dm, "void ck::"))
        return "ck_tile";
    if (has(dm, "at::native::") || has(dm, "at::cuda::"))
        return "aten_native";
    if (starts(raw, "triton_") && (has(raw, "_fused") || has(raw, "fused_")))
        return "inductor";
    if (lib)
        return "library";
    if (starts(raw, "__amd_rocclr_"))
        return "hip_cpp";
    bool ident = true;
    for (const char *p = raw; *p && ident; p++)
        ident = isalnum((unsigned char)*p) || *p == '_' || *p == '.';
    if (ident && !starts(raw, "_Z"))
        return "triton_jit"; /* a plain identifier: Triton, extern "C" or asm */
    if (has(dm, "__hip_") || has(dm, "rocprim::") || has(dm, "[clone .kd]"))
        return "hip_cpp";
    if (has(dm, "(") || starts(raw, "_Z"))
        return "cuda_cpp";
    return "unknown";
}

static const char *category_of(const char *s)
{
    static const struct {
        const char *cat;
        const char *kw[12];
    } t[] = {
        {"attention", {"attention", "attn", "flash", "fmha", "sdpa", "paged", "mha", NULL}},
        {"kv_cache", {"kv_cache", "kvcache", "reshape_and_cache", "cache_kernel", NULL}},
        {"router", {"topk", "routing", "router", "gating", NULL}},
        {"moe_gemm", {"moe", "matmul_ogs", "grouped_gemm", "fused_experts", NULL}},
        {"gemm", {"gemm", "matmul", "cijk_", "nvjet", "gemv", "xmma", "mm_", "igemm", NULL}},
        {"layernorm", {"norm", NULL}},
        {"softmax", {"softmax", NULL}},
        {"copy", {"copy", "transpose", "cat_array", "catarray", "memcpy", "gather", NULL}},
        {"elementwise",
         {"elementwise", "silu", "gelu", "act_and_mul", "rotary", "add", "mul", "fill", "poi_",
          NULL}},
        {"indexing", {"index", "scatter", "arange", NULL}},
        {"reduce", {"reduce", "red_", "per_", "sum", "mean", "scan", "sort", NULL}},
        {"blit", {"rocclr", "blit", "memset", NULL}},
        {"annotation", {"execute_context", "## call", NULL}},
    };

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        for (size_t k = 0; t[i].kw[k]; k++)
            if (mp_str_contains_ci(s, t[i].kw[k]))
                return t[i].cat;
    return "unknown";
}

/* ATen's generic kernels: their instantiations are told apart by the functor
 * or lambda in the template arguments, which is what one would edit. */
static bool generic_launcher(const char *q)
{
    static const char *const g[] = {"elementwise_kernel",
                                    "vectorized_elementwise_kernel",
                                    "unrolled_elementwise_kernel",
                                    "elementwise_kernel_manual_unroll",
                                    "elementwise_kernel_with_index",
                                    "unrolled_elementwise_kernel_for_multi_outputs",
                                    "index_elementwise_kernel",
                                    "reduce_kernel",
                                    "multi_tensor_apply_kernel",
                                    "distribution_elementwise_grid_stride_kernel",
                                    "vectorized_templated_elementwise_kernel",
                                    NULL};
    const char *last = q;
    for (const char *p = q; (p = strstr(p, "::")) != NULL; p += 2)
        last = p + 2;
    for (size_t i = 0; g[i]; i++)
        if (strcmp(last, g[i]) == 0)
            return true;
    return false;
}

/* Launch wrappers: a __global__ entry point whose only template argument
 * that matters is the kernel (a struct with the device code) it runs;
 * their own definition (ck_tile/host/kernel_launch.hpp, cutlass/
 * device_kernel.h) is never what one edits. */
static bool launch_wrapper(const char *ns, const char *name)
{
    static const char *const any_ns[] = {"kentry", "device_kernel", NULL};
    static const char *const cutlass[] = {"Kernel", "Kernel2", "KernelSm90", NULL};
    for (size_t i = 0; any_ns[i]; i++)
        if (strcmp(name, any_ns[i]) == 0)
            return true;
    size_t l = strlen(ns);
    if (!(strcmp(ns, "cutlass") == 0 || (l > 9 && strcmp(ns + l - 9, "::cutlass") == 0)))
        return false;
    for (size_t i = 0; cutlass[i]; i++)
        if (strcmp(name, cutlass[i]) == 0)
            return true;
    return false;
}

/* Types that wrap the interesting functor without being it. */
static bool wrapper_type(const char *n, size_t l)
{
    /* enable_sm90_or_later<K>, enable_3x_kernel_for_sm9x<K>: a kernel
     * wrapped to compile for some architectures only */
    if (l > 7 && memcmp(n, "enable_", 7) == 0 &&
        (memmem(n, l, "sm", 2) || memmem(n, l, "kernel", 6)))
        return true;
    static const char *const w[] = {"gpu_kernel_impl",
                                    "gpu_kernel_impl_nocast",
                                    "BinaryFunctor",
                                    "AUnaryFunctor",
                                    "BUnaryFunctor",
                                    "func_wrapper_t",
                                    "ReduceOp",
                                    "gpu_index_kernel",
                                    "TensorListMetadata",
                                    "OpaqueType",
                                    "TensorInfo",
                                    "IntDivider",
                                    "TrivialOffsetCalculator",
                                    "OffsetCalculator",
                                    "array",
                                    "LoadWithoutCast",
                                    "StoreWithoutCast",
                                    "LoadWithCast",
                                    "StoreWithCast",
                                    "tuple",
                                    "C",
                                    "enable_if",
                                    "type",
                                    "policy_hub",
                                    "Policy1000",
                                    "GenericPackedTensorAccessor",
                                    "RestrictPtrTraits",
                                    "DefaultPtrTraits",
                                    "BFloat16",
                                    "Half",
                                    "complex",
                                    "Float8_e4m3fn",
                                    "plus",
                                    "AccumulateType",
                                    "bfloat16_t",
                                    "half_t",
                                    NULL};
    for (size_t i = 0; w[i]; i++)
        if (strlen(w[i]) == l && memcmp(w[i], n, l) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------ C++ name parsing */

#define MAX_ANCHORS 16

struct qname {
    char ns[1024];  /* "a::b" without anonymous namespaces */
    char name[512]; /* last component */
    int arity;      /* template arguments given to it, -1 none / not counted */
};

struct parsed {
    struct qname fn; /* the kernel function */
    bool has_fn;
    struct qname anchor[MAX_ANCHORS];
    bool anchor_lambda[MAX_ANCHORS]; /* encloses a lambda (else a type) */
    int n_anchor;
};

/* Counts the top-level template arguments of s[b, e) ("<a, b<c, d>>" is 2);
 * -1 when s[b] is not '<'. */
static int count_targs(const char *s, size_t b, size_t e)
{
    if (b >= e || s[b] != '<')
        return -1;
    int depth = 0, args = 0;
    bool any = false;
    for (size_t i = b; i < e; i++) {
        char c = s[i];
        if (c == '<' || c == '(' || c == '{' || c == '[')
            depth++;
        else if ((c == '>' || c == ')' || c == '}' || c == ']') && depth > 0 && --depth == 0)
            return any ? args + 1 : 0;
        else if (depth == 1 && c == ',')
            args++;
        else if (depth == 1 && c != ' ')
            any = true;
    }
    return -1;
}

/* Whether the '<'/'>' at s[i] is an operator of a template-argument
 * expression rather than a bracket: the demangler writes those inside
 * parentheses as "(a)>(b)", "(a)<=(b)", "(a)>>(b)"
 * (std::enable_if<(((8)>(0)))&&..., void>::type). */
static bool angle_operator(const char *s, size_t i, size_t n, int paren_depth)
{
    if (paren_depth <= 0)
        return false;
    size_t a = i, b = i;
    while (a > 0 && (s[a - 1] == '<' || s[a - 1] == '>'))
        a--;
    while (b < n && (s[b] == '<' || s[b] == '>' || s[b] == '='))
        b++;
    return a > 0 && s[a - 1] == ')' && b < n && s[b] == '(';
}

/* Copies s with "(anonymous namespace)" turned into "{anon}" so that the
 * parser's paren matching sees only parameter lists, and with comparison
 * and shift operators in template arguments turned into '?' so that its
 * angle-bracket matching sees only brackets. */
static char *prep(const char *s)
{
    size_t n = strlen(s);
    char *o = mp_malloc(n + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    int pd = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '(' && strncmp(s + i, "(anonymous namespace)", 21) == 0) {
            memcpy(o + j, "{anon}", 6);
            j += 6;
            i += 21;
            continue;
        }
        pd += s[i] == '(' ? 1 : s[i] == ')' && pd > 0 ? -1 : 0;
        o[j++] = (s[i] == '<' || s[i] == '>') && angle_operator(s, i, n, pd) ? '?' : s[i];
        i++;
    }
    o[j] = 0;
    return o;
}

/* Splits "a::{anon}::b::name<...>" (no params) into ns + name. */
static void split_q(const char *b, size_t n, struct qname *q)
{
    q->ns[0] = q->name[0] = 0;
    q->arity = -1;
    /* drop template args at depth 0 and remember the component starts */
    char tmp[1536];
    size_t tn = 0;
    int d = 0;
    for (size_t i = 0; i < n && tn + 1 < sizeof(tmp); i++) {
        char c = b[i];
        if (c == '<')
            d++;
        else if (c == '>' && d > 0)
            d--;
        else if (d == 0)
            tmp[tn++] = c;
    }
    tmp[tn] = 0;
    char *last = tmp;
    for (char *p = tmp; (p = strstr(p, "::")) != NULL; p += 2)
        last = p + 2;
    size_t ln = strlen(last);
    if (ln >= sizeof(q->name))
        ln = sizeof(q->name) - 1;
    memcpy(q->name, last, ln);
    q->name[ln] = 0;
    size_t nn = 0;
    for (char *p = tmp; p < last;) {
        char *e = strstr(p, "::");
        if (!e || e >= last)
            break;
        size_t l = (size_t)(e - p);
        if (!(l == 6 && memcmp(p, "{anon}", 6) == 0) && l > 0 && nn + l + 3 < sizeof(q->ns)) {
            if (nn) {
                q->ns[nn++] = ':';
                q->ns[nn++] = ':';
            }
            memcpy(q->ns + nn, p, l);
            nn += l;
            q->ns[nn] = 0;
        }
        p = e + 2;
    }
}

/* The qualified identifier that ends at s[e] (exclusive), walking back over
 * identifiers, "::", "{anon}" and balanced template arguments. */
static size_t qual_start(const char *s, size_t e)
{
    size_t b = e;
    for (;;) {
        if (b > 0 && s[b - 1] == '>') { /* template args */
            int d = 0;
            while (b > 0) {
                b--;
                if (s[b] == '>')
                    d++;
                else if (s[b] == '<' && --d == 0)
                    break;
            }
        }
        size_t k = b;
        while (k > 0 && (isalnum((unsigned char)s[k - 1]) || s[k - 1] == '_'))
            k--;
        if (k == b && !(b >= 6 && memcmp(s + b - 6, "{anon}", 6) == 0))
            return b;
        if (k == b)
            k = b - 6;
        b = k;
        if (b >= 2 && s[b - 1] == ':' && s[b - 2] == ':')
            b -= 2;
        else
            return b;
    }
}

static void add_anchor(struct parsed *ps, const char *b, size_t n, bool lambda)
{
    if (ps->n_anchor >= MAX_ANCHORS || n == 0)
        return;
    struct qname q;
    split_q(b, n, &q);
    if (!q.name[0])
        return;
    if (lambda && strcmp(q.name, "operator()") == 0) {
        /* a lambda in Functor::operator(): the functor is the anchor */
        char *last = strrchr(q.ns, ':');
        const char *cls = last ? last + 1 : q.ns;
        size_t cl = strlen(cls) < sizeof(q.name) ? strlen(cls) : sizeof(q.name) - 1;
        memmove(q.name, cls, cl);
        q.name[cl] = 0;
        if (last && last > q.ns)
            last[-1] = 0;
        else
            q.ns[0] = 0;
        lambda = false;
    }
    if (strncmp(q.name, "operator", 8) == 0 || strncmp(q.name, "lambda", 6) == 0 ||
        wrapper_type(q.name, strlen(q.name)))
        return;
    for (int i = 0; i < ps->n_anchor; i++)
        if (strcmp(ps->anchor[i].name, q.name) == 0 && strcmp(ps->anchor[i].ns, q.ns) == 0)
            return;
    ps->anchor[ps->n_anchor] = q;
    ps->anchor_lambda[ps->n_anchor] = lambda;
    ps->n_anchor++;
}

static bool primitive(const char *w, size_t n)
{
    static const char *const p[] = {
        "void",   "bool",          "char",   "short",          "int",           "long",  "float",
        "double", "unsigned",      "signed", "const",          "true",          "false", "std",
        "c10",    "__nv_bfloat16", "__half", "__hip_bfloat16", "__nv_fp8_e4m3", "ul",    "u",
        "l",      "cute",          NULL};
    for (size_t i = 0; p[i]; i++)
        if (strlen(p[i]) == n && memcmp(p[i], w, n) == 0)
            return true;
    return false;
}

/* Type anchors: the qualified identifiers in the template arguments
 * s[tb, te) of the kernel, outside parentheses. */
static void type_anchors(const char *s, size_t tb, size_t te, struct parsed *ps)
{
    size_t scanned = tb;
    int pd = 0; /* parentheses open at i: a lambda's enclosing parameter list */
    for (size_t i = tb + 1; i < te;) {
        for (; scanned < i; scanned++)
            pd += s[scanned] == '(' ? 1 : s[scanned] == ')' && pd > 0 ? -1 : 0;
        if (!(isalpha((unsigned char)s[i]) || s[i] == '_' || s[i] == '{') ||
            (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_' || s[i - 1] == ':'))) {
            i++;
            continue;
        }
        size_t b = i;
        /* extend over ident, ::, {anon} */
        for (;;) {
            if (strncmp(s + i, "{anon}", 6) == 0)
                i += 6;
            else if (strncmp(s + i, "{lambda", 7) == 0)
                break;
            else
                while (i < te && (isalnum((unsigned char)s[i]) || s[i] == '_'))
                    i++;
            if (i + 1 < te && s[i] == ':' && s[i + 1] == ':')
                i += 2;
            else
                break;
        }
        if (i == b) {
            i++;
            continue;
        }
        if (i < te && s[i] == '(') /* a function (lambda anchors handle these) */
            continue;
        const char *last = s + b;
        for (const char *p = s + b; p < s + i; p++)
            if (p[0] == ':' && p[1] == ':')
                last = p + 2;
        size_t ll = (size_t)(s + i - last);
        if (ll < 2 || primitive(last, ll) || wrapper_type(last, ll) || starts(s + b, "std::") ||
            starts(s + b, "c10::") || starts(s + b, "cute::") ||
            starts(s + b, "at::cuda::detail::"))
            continue;
        /* skip "(vllm::Fp8KVCacheDataType)0" style enum casts and the
         * parameter types of a function that encloses a lambda
         * (batch_norm_update_stats_and_invert(at::Tensor const&, ...)) */
        if ((b > 0 && s[b - 1] == '(') || pd > 0)
            continue;
        add_anchor(ps, s + b, i - b, false);
    }
}

static void parse_cpp(const char *dm_in, struct parsed *ps)
{
    memset(ps, 0, sizeof(*ps));
    char *s = prep(dm_in);
    if (!s)
        return;
    size_t n = strlen(s);
    /* the parameter list: the first '(' at <>/() depth 0 not inside {...} */
    int da = 0, db = 0;
    size_t lp = n;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '<')
            da++;
        else if (c == '>' && da > 0)
            da--;
        else if (c == '{')
            db++;
        else if (c == '}' && db > 0)
            db--;
        else if (c == '(' && da == 0 && db == 0) {
            lp = i;
            break;
        }
    }
    /* the function's qualified name ends at lp; it starts after the last
     * space at depth 0 (the return type comes before it) */
    size_t fb = 0;
    da = 0;
    for (size_t i = 0; i < lp; i++) {
        if (s[i] == '<')
            da++;
        else if (s[i] == '>' && da > 0)
            da--;
        else if (s[i] == ' ' && da == 0)
            fb = i + 1;
    }
    if (lp > fb) {
        split_q(s + fb, lp - fb, &ps->fn);
        ps->has_fn = ps->fn.name[0] != 0;
    }
    /* template arguments of the function: between its first '<' and lp */
    const char *ta = memchr(s + fb, '<', lp - fb);
    size_t tb = ta ? (size_t)(ta - s) : lp, te = lp;
    /* no parameter list: a name rebuilt from the mangled prefix, whose
     * template arguments are not all known */
    ps->fn.arity = lp < n ? count_targs(s, tb, te) : -1;
    /* lambda anchors: "QUAL(...)::{lambda" */
    for (size_t i = tb; i + 10 < te; i++) {
        if (s[i] != ')' || strncmp(s + i, ")::{lambda", 10) != 0)
            continue;
        /* back to the matching '(' */
        int d = 0;
        size_t k = i + 1;
        while (k > tb) {
            k--;
            if (s[k] == ')')
                d++;
            else if (s[k] == '(' && --d == 0)
                break;
        }
        size_t qb = qual_start(s, k);
        if (qb < k)
            add_anchor(ps, s + qb, k - qb, true);
    }
    type_anchors(s, tb, te, ps);
    free(s);
}

/* ------------------------------------------------------------ scoring */

/* The trace's evidence for one kernel: its own stack (mp_src_evidence)
 * and the trace's context (mp_src_context). */
struct src_ev {
    const char *const *frames;
    size_t n_frames;
    const char *const *packages;
    size_t n_packages;
    char platform;
};

/* The clues that weighed a candidate up (notes name the ones that set the
 * claimed file apart from the runner-up). */
enum {
    CL_STACK = 1,     /* the launching Python stack */
    CL_PACKAGE = 2,   /* its package is one the trace shows loaded */
    CL_PLATFORM = 4,  /* HIP/CUDA twin matching the trace's platform */
    CL_NAMESPACE = 8, /* namespace equal to the name's */
    CL_ARITY = 16,    /* template arity equal to the name's */
    CL_REPO = 32,     /* repository named after the namespace */
    CL_TYPES = 64,    /* types of the template arguments defined in its repo */
    CL_KIND = 128,    /* a kernel (__global__ / Triton) rather than a host function */
};

static const char *const clue_name[8] = {"stack", "package", "platform", "namespace",
                                         "arity", "repo",    "types",    "kernel"};

struct cand {
    double w;
    double ns; /* ns_agree of this def */
    int32_t def;
    uint8_t clue; /* CL_* */
};

static const char *def_str(const struct mp_src_index *ix, int32_t id)
{
    return mp_intern_str(ix->strs, id);
}

static const char *def_path(const struct mp_src_index *ix, const struct src_def *d)
{
    return mp_intern_str(ix->strs, ix->files[d->file].path);
}

static const char *def_repo(const struct mp_src_index *ix, const struct src_def *d)
{
    return ix->repos[ix->files[d->file].repo].name;
}

/* 1: ns equal, 0.5: one a suffix of the other, 0: query gave none, -1: disagree */
static double ns_agree(const char *q, const char *d, bool cpp)
{
    if (!cpp)
        return 0;
    if (!q[0])
        return d[0] ? -1 : 1;
    if (strcmp(q, d) == 0)
        return 1;
    size_t a = strlen(q), b = strlen(d);
    if (b && a > b && strcmp(q + a - b, d) == 0 && q[a - b - 1] == ':')
        return 0.5;
    if (a && b > a && strcmp(d + b - a, q) == 0 && d[b - a - 1] == ':')
        return 0.5;
    if (b && strncmp(q, d, b) == 0 && q[b] == ':') /* def in an enclosing ns */
        return 0.5;
    return -1;
}

static bool path_is_test(const char *p)
{
    return has(p, "test/") || has(p, "tests/") || has(p, "benchmarks/") || has(p, "/bench") ||
           starts(p, "test") || has(p, "examples/");
}

/* Path components too generic to tie a frame to a repository. */
static bool generic_dir(const char *p, size_t l)
{
    static const char *const g[] = {"csrc",     "src",           "include", "lib",
                                    "python",   "test",          "tests",   "third_party",
                                    "3rdparty", "site-packages", NULL};
    for (size_t i = 0; g[i]; i++)
        if (strlen(g[i]) == l && memcmp(g[i], p, l) == 0)
            return true;
    return false;
}

/* Whether the frame's file (path fp of length fl, relative or absolute)
 * exists under root: its suffixes of at least two components are tried. */
static bool frame_in_root(const char *root, const char *fp, size_t fl)
{
    int tries = 0;
    for (size_t i = 0; i < fl && tries < 8; i++) {
        if (i > 0 && fp[i - 1] != '/')
            continue;
        const char *suf = fp + i;
        size_t sl = fl - i;
        if (!memchr(suf, '/', sl))
            break; /* one component: too weak */
        tries++;
        char full[4096];
        if (snprintf(full, sizeof(full), "%s/%.*s", root, (int)sl, suf) >= (int)sizeof(full))
            continue;
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

/* How strongly one Python frame points at a def: 4 the frame is the def's
 * file; 3 a file with the same stem in the def's directory (pa_ragged.py
 * compiling pa_ragged.cuh); 2 a file of the def's repository; 1 a frame
 * in the def's top-level package directory or in a directory named after
 * its repository; 0 none. */
static int frame_level(const struct mp_src_index *ix, const struct src_def *d, const char *f)
{
    const char *paren = strstr(f, ".py(");
    size_t fl = paren ? (size_t)(paren - f) + 3 : strlen(f);
    const char *path = def_path(ix, d);
    size_t pl = strlen(path);
    if (fl >= pl && memcmp(f + fl - pl, path, pl) == 0 && (fl == pl || f[fl - pl - 1] == '/'))
        return 4;
    const char *ds = strrchr(path, '/');
    const char *fs = memrchr(f, '/', fl);
    if (ds && fs) {
        size_t dl = (size_t)(ds - path) + 1; /* "dir/" */
        const char *dot = strchr(ds + 1, '.');
        size_t stl = dot ? (size_t)(dot - ds - 1) : strlen(ds + 1);
        size_t fdl = (size_t)(fs - f) + 1;
        const char *fdot = memchr(fs + 1, '.', fl - fdl);
        size_t fstl = fdot ? (size_t)(fdot - fs - 1) : fl - fdl;
        bool same_dir = fdl >= dl && memcmp(f + fdl - dl, path, dl) == 0 &&
                        (fdl == dl || f[fdl - dl - 1] == '/');
        if (same_dir && stl == fstl && memcmp(ds + 1, fs + 1, stl) == 0)
            return 3;
    }
    const struct mp_src_repo_info *ri = &ix->repos[ix->files[d->file].repo];
    if (frame_in_root(ri->root, f, fl))
        return 2;
    const char *sl = strchr(path, '/');
    if (sl && !generic_dir(path, (size_t)(sl - path))) {
        char pkg[128];
        snprintf(pkg, sizeof(pkg), "/%.*s/", (int)(sl - path), path);
        if (memmem(f, fl, pkg, strlen(pkg)) || strncmp(f, pkg + 1, strlen(pkg) - 1) == 0)
            return 1;
    }
    char rp[160];
    snprintf(rp, sizeof(rp), "/%s/", ri->name);
    return memmem(f, fl, rp, strlen(rp)) ? 1 : 0;
}

/* A frame of the Python or PyTorch/Triton runtime rather than of a
 * project: "torch/...", "triton/...", stdlib modules, "<built-in ...>". */
static bool runtime_frame(const char *f)
{
    if (f[0] == '<' || has(f, "/lib/python3"))
        return true;
    const char *py = strstr(f, ".py(");
    if (!py || !memchr(f, '/', (size_t)(py - f)))
        return true; /* "functools.py(..)": a stdlib module */
    /* a source checkout of PyTorch or Triton ("/sgl-workspace/triton-custom/
     * python/triton/backends/amd/driver.py") */
    static const char *const rt[] = {"/torch/",           "/triton/runtime/",  "/triton/backends/",
                                     "/triton/compiler/", "/triton/language/", NULL};
    for (size_t i = 0; rt[i]; i++) {
        const char *k = strstr(f, rt[i]);
        if (k && k < py)
            return true;
    }
    const char *b = f;
    for (const char *k; (k = strstr(b, "-packages/")) != NULL && k < py;)
        b = k + 10;
    return starts(b, "torch/") || starts(b, "triton/");
}

/* Launch-site evidence: the innermost Python frame that belongs to any
 * candidate's code decides (outer frames are its callers: vLLM calling
 * aiter's copy of a kernel). At that frame the candidates with the
 * strongest tie get a factor (level 4 or 3: 8, 2: 4, 1: 3), the others
 * none. The kernel counts as launched by code that is not indexed (no
 * factor, EV_FOREIGN: the claim is then discounted) when
 *  - every candidate is a Triton function (Triton kernels are launched
 *    from Python, next to their definition) and a project frame inner to
 *    the first candidate frame belongs to no candidate, or
 *  - no frame belongs to any candidate and the innermost project frame is
 *    an installed module (a relative path: the profiler prints
 *    site-packages modules so) that no indexed repository holds.
 * A C++ kernel's Python frames show only who called the op (vLLM code
 * calling an ATen op), so the first rule is not applied to them, and the
 * second only when the project frame called a custom op (torch/_ops.py)
 * or an extension directly, not a PyTorch function (torchvision calling
 * a convolution that MIOpen runs with composable_kernel). */
enum { EV_USED = 1, EV_FOREIGN = 2 };

struct evres {
    int flags;            /* EV_USED | EV_FOREIGN */
    const char *launcher; /* EV_FOREIGN: the launching frame */
};

static void apply_evidence(const struct mp_src_index *ix, struct cand *c, size_t n,
                           const struct src_ev *ev, struct evres *used)
{
    static const double factor[5] = {1, 3, 4, 8, 8};
    if (!ev || !ev->n_frames || n == 0)
        return;
    /* a CUDA/HIP graph replay's stack says who replayed the graph, not
     * who launched the kernel when it was captured: no evidence */
    for (size_t i = 0; i < ev->n_frames; i++)
        if (ev->frames[i] && strstr(ev->frames[i], "cuda/graphs.py(") &&
            strstr(ev->frames[i], "replay"))
            return;
    int *lv = mp_calloc(n, sizeof(*lv));
    if (!lv)
        return;
    const char *first_project = NULL;
    bool all_triton = true, matched = false;
    /* runtime frames inner to the first project frame: a custom op's
     * dispatch (torch/_ops.py) or a PyTorch module/function (an ATen op) */
    bool via_op = false, via_torch = false;
    for (size_t k = 0; k < n; k++)
        all_triton = all_triton && ix->defs[c[k].def].kind == SRC_TRITON;
    for (size_t i = 0; i < ev->n_frames; i++) {
        const char *f = ev->frames[i];
        if (!f || !strstr(f, ".py("))
            continue;
        int best = 0;
        for (size_t k = 0; k < n; k++) {
            lv[k] = frame_level(ix, &ix->defs[c[k].def], f);
            best = lv[k] > best ? lv[k] : best;
        }
        if (best == 0) {
            bool rt = runtime_frame(f);
            if (!first_project && !rt)
                first_project = f;
            else if (!first_project && strstr(f, "torch/_ops.py("))
                via_op = true;
            else if (!first_project && rt && has(f, "torch/"))
                via_torch = true;
            continue;
        }
        matched = true;
        if (first_project && all_triton) {
            used->flags |= EV_FOREIGN;
            used->launcher = first_project;
        } else {
            for (size_t k = 0; k < n; k++)
                if (lv[k] == best) {
                    c[k].w *= factor[best];
                    c[k].clue |= CL_STACK;
                }
            used->flags |= EV_USED;
        }
        break;
    }
    /* a C++ kernel counts as launched by that project only when it called
     * a custom op or an extension directly, not an ATen op */
    bool own_launch = all_triton || via_op || !via_torch;
    if (!matched && own_launch && first_project && first_project[0] != '/') {
        const char *pe = strstr(first_project, ".py(");
        size_t fl = (size_t)(pe - first_project) + 3;
        bool held = false;
        for (size_t r = 0; r < ix->n_repos && !held; r++)
            held = frame_in_root(ix->repos[r].root, first_project, fl);
        if (!held) {
            used->flags |= EV_FOREIGN;
            used->launcher = first_project;
        }
    }
    free(lv);
}

/* The repository's name without its version ("vllm-0.11.0" -> "vllm"):
 * up to a '-' or '_' followed by a digit. */
static size_t repo_stem(const char *repo)
{
    size_t l = strlen(repo);
    for (size_t i = 1; i + 1 < l; i++)
        if ((repo[i] == '-' || repo[i] == '_') && isdigit((unsigned char)repo[i + 1]))
            return i;
    return l;
}

/* a and b (lengths al, bl) name the same package: case, '-' and '_' aside */
static bool same_pkg(const char *a, size_t al, const char *b, size_t bl)
{
    if (al != bl || al == 0)
        return false;
    for (size_t i = 0; i < al; i++) {
        char x = a[i] == '-' ? '_' : (char)tolower((unsigned char)a[i]);
        char y = b[i] == '-' ? '_' : (char)tolower((unsigned char)b[i]);
        if (x != y)
            return false;
    }
    return true;
}

/* Whether definition d belongs to one of the packages the trace shows
 * loaded: a directory of its path is named after the package
 * ("aiter/ops/triton/..." for aiter, "python/triton_kernels/..." for
 * triton_kernels), or its repository is (a C++ file of "vllm-0.11.0"). */
static bool def_loaded(const struct mp_src_index *ix, const struct src_def *d,
                       const struct src_ev *ev)
{
    const char *path = def_path(ix, d);
    const char *repo = def_repo(ix, d);
    for (size_t k = 0; k < ev->n_packages; k++) {
        const char *pk = ev->packages[k];
        size_t pl = pk ? strlen(pk) : 0;
        if (pl == 0)
            continue;
        if (same_pkg(repo, repo_stem(repo), pk, pl))
            return true;
        for (const char *c = path, *e; (e = strchr(c, '/')) != NULL; c = e + 1)
            if (same_pkg(c, (size_t)(e - c), pk, pl))
                return true;
    }
    return false;
}

/* Whether a definition is the HIP side of a hipified pair: a .hip file, a
 * "*_hip.*" file, or a file under a "hip" directory. */
static bool def_is_hip(const struct mp_src_index *ix, const struct src_def *d)
{
    const char *path = def_path(ix, d);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strchr(base, '.');
    size_t stl = dot ? (size_t)(dot - base) : strlen(base);
    return (dot && strcmp(dot, ".hip") == 0) ||
           (stl > 4 && memcmp(base + stl - 4, "_hip", 4) == 0) || starts(path, "hip/") ||
           has(path, "/hip/");
}

/* Multiplies the weights of the candidates that clue k (CL_*) favours by
 * f, when it favours some of them and not all. */
static void favour(struct cand *c, size_t n, const bool *yes, double f, uint8_t k)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += yes[i];
    if (m == 0 || m == n)
        return;
    for (size_t i = 0; i < n; i++)
        if (yes[i]) {
            c[i].w *= f;
            c[i].clue |= k;
        }
}

/* The clues that tell same-named definitions apart when the kernel's own
 * stack does not (neither applies when the stack decided or said the
 * launcher is not indexed): the package the trace shows loaded (x3), then
 * the template arity the name gives equal to the definition's (x2; no
 * penalty for a different one: the indexed tree may be another version
 * than the one that ran, as aiter's paged-attention kernels show). The
 * trace's platform against hipified twins (x2) applies always: a HIP run
 * compiled the HIP side. */
static void apply_context(const struct mp_src_index *ix, struct cand *c, size_t n,
                          const struct src_ev *ev, const struct qname *q, const struct evres *used)
{
    if (n < 2)
        return;
    bool *yes = mp_calloc(n, sizeof(*yes));
    if (!yes)
        return;
    if (ev && ev->n_packages && used->flags == 0) {
        for (size_t i = 0; i < n; i++)
            yes[i] = def_loaded(ix, &ix->defs[c[i].def], ev);
        favour(c, n, yes, 3, CL_PACKAGE);
    }
    if (ev && ev->platform) {
        for (size_t i = 0; i < n; i++)
            yes[i] = def_is_hip(ix, &ix->defs[c[i].def]) == (ev->platform == 'h');
        favour(c, n, yes, 2, CL_PLATFORM);
    }
    if (q->arity >= 0 && used->flags == 0) {
        for (size_t i = 0; i < n; i++) {
            unsigned a = SRC_ARITY(ix->defs[c[i].def].flags);
            yes[i] = a != 0 && a != SRC_ARITY_VARIADIC && a == (unsigned)q->arity;
        }
        favour(c, n, yes, 2, CL_ARITY);
    }
    free(yes);
}

/* Whether a repository is named after the first component of a namespace
 * ("vllm" for vllm::..., "vllm-0.11.0" too), compared without case. */
static bool repo_named_like(const char *repo, const char *ns)
{
    size_t l = strcspn(ns, ":");
    if (l < 3)
        return false;
    for (size_t i = 0; i < l; i++)
        if (tolower((unsigned char)repo[i]) != tolower((unsigned char)ns[i]))
            return false;
    return !isalnum((unsigned char)repo[l]);
}

/* Candidates for one query; returns how many were written to c[]. */
static size_t gather(const struct mp_src_index *ix, const struct qname *q, bool cpp,
                     bool want_kernel, bool want_type, const struct src_ev *ev, struct cand *c,
                     size_t cap, struct evres *ev_used, bool *ns_full)
{
    size_t n = 0;
    ev_used->flags = 0; /* only the last lookup's candidates are kept */
    ev_used->launcher = NULL;
    int32_t id = mp_intern_find(ix->strs, q->name, strlen(q->name));
    if (id < 0 || (size_t)id >= ix->n_heads)
        return 0;
    for (int32_t i = ix->heads[id]; i >= 0 && n < cap; i = ix->defs[i].next) {
        const struct src_def *d = &ix->defs[i];
        double w = 1;
        double a = ns_agree(q->ns, def_str(ix, d->ns), cpp);
        w *= a == 1 ? 4 : a == 0.5 ? 1.5 : a == 0 ? 1 : 0.25;
        uint8_t clue = a == 1 && cpp ? CL_NAMESPACE : 0;
        if (a == 1)
            *ns_full = true;
        if (want_kernel && ((d->flags & SRC_F_GLOBAL) || d->kind == SRC_TRITON)) {
            w *= 3;
            clue |= CL_KIND;
        }
        if (want_type && d->kind == SRC_STRUCT)
            w *= 2;
        if (!want_type && d->kind == SRC_STRUCT)
            w *= 0.3;
        if (d->kind == SRC_FUNC && !(d->flags & SRC_F_GLOBAL) && want_kernel)
            w *= 0.5;
        if (path_is_test(def_path(ix, d)))
            w *= 0.2;
        if (cpp && repo_named_like(def_repo(ix, d), q->ns)) {
            w *= 3;
            clue |= CL_REPO;
        }
        c[n].def = i;
        c[n].w = w;
        c[n].ns = a;
        c[n].clue = clue;
        n++;
    }
    apply_evidence(ix, c, n, ev, ev_used);
    apply_context(ix, c, n, ev, q, ev_used);
    return n;
}

/* Types named in a kernel's template arguments (vllm::Fp8KVCacheDataType)
 * are defined in the project that instantiated it: candidates in a repo
 * that defines such a type, in that namespace, weigh three times more. */
static void type_hints(const struct mp_src_index *ix, const struct parsed *ps, struct cand *c,
                       size_t n)
{
    for (int a = 0; a < ps->n_anchor; a++) {
        const struct qname *q = &ps->anchor[a];
        if (!q->ns[0] || ps->anchor_lambda[a])
            continue;
        int32_t id = mp_intern_find(ix->strs, q->name, strlen(q->name));
        if (id < 0 || (size_t)id >= ix->n_heads)
            continue;
        uint64_t repos = 0; /* bit per repo (first 64) */
        for (int32_t i = ix->heads[id]; i >= 0; i = ix->defs[i].next) {
            const struct src_def *d = &ix->defs[i];
            if (ns_agree(q->ns, def_str(ix, d->ns), true) >= 0.5 && ix->files[d->file].repo < 64)
                repos |= 1ull << ix->files[d->file].repo;
        }
        uint64_t all = 0;
        for (size_t i = 0; i < n; i++) {
            int32_t r = ix->files[ix->defs[c[i].def].file].repo;
            if (r < 64)
                all |= 1ull << r;
        }
        if (!repos || (all & ~repos) == 0) /* no hint, or every candidate has it */
            continue;
        for (size_t i = 0; i < n; i++) {
            int32_t r = ix->files[ix->defs[c[i].def].file].repo;
            if (r < 64 && (repos >> r & 1)) {
                c[i].w *= 3;
                c[i].clue |= CL_TYPES;
            }
        }
    }
}

/* Simple '*' glob match. */
static bool glob_match(const char *g, const char *s)
{
    if (!*g)
        return !*s;
    if (*g == '*') {
        for (const char *p = s;; p++) {
            if (glob_match(g + 1, p))
                return true;
            if (!*p)
                return false;
        }
    }
    return *g == *s && glob_match(g + 1, s + 1);
}

/* ------------------------------------------------------------- results */

static int set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? mp_strdup(s) : NULL;
    return s && !*dst ? MP_ENOMEM : 0;
}

void mp_src_result_fini(struct mp_src_result *r)
{
    if (!r)
        return;
    free(r->demangled);
    free(r->source_repo);
    free(r->source_root);
    free(r->source_file);
    free(r->source_symbol);
    free(r->library);
    free(r->error);
    free(r->notes);
    free(r->upstream_url);
    free(r->test_file);
    free(r->test_cmd);
    free(r->baseline_ref_file);
    free(r->baseline_ref_symbol);
    free(r->triton_ref_file);
    free(r->triton_ref_symbol);
    for (int i = 0; i < r->n_cand; i++) {
        free(r->cand[i].repo);
        free(r->cand[i].file);
        free(r->cand[i].symbol);
    }
    memset(r, 0, sizeof(*r));
}

int mp_src_candidates_str(const struct mp_src_result *r, struct mp_buf *out)
{
    int rc = 0;
    for (int i = 0; i < r->n_cand && !rc; i++)
        rc = mp_buf_printf(out, "%s%s:%s:%ld (%.2f)", i ? "; " : "", r->cand[i].repo,
                           r->cand[i].file, r->cand[i].line, r->cand[i].score);
    return rc;
}

static const struct {
    const char *repo;
    const char *url;
} upstreams[] = {
    {"pytorch", "https://github.com/pytorch/pytorch/blob/main/"},
    {"vllm", "https://github.com/vllm-project/vllm/blob/main/"},
    {"sglang", "https://github.com/sgl-project/sglang/blob/main/"},
    {"aiter", "https://github.com/ROCm/aiter/blob/main/"},
    {"triton", "https://github.com/triton-lang/triton/blob/main/"},
    {"flashinfer", "https://github.com/flashinfer-ai/flashinfer/blob/main/"},
    {"MIOpen", "https://github.com/ROCm/MIOpen/blob/develop/"},
    {"composable_kernel", "https://github.com/ROCm/composable_kernel/blob/develop/"},
};

/* Calibrated base probabilities per decision path (docs/sources.md). */
enum path {
    P_KERNEL_NS,  /* the kernel function itself, namespace agrees */
    P_KERNEL,     /* the kernel function, no namespace to compare */
    P_LAMBDA,     /* the function enclosing a lambda in the template args */
    P_TYPE,       /* a functor type in the template args */
    P_TRITON,     /* exact Triton/plain-symbol name */
    P_TRITON_PFX, /* Triton name after dropping specialisation suffixes */
    P_MACRO,      /* a macro that pastes the name */
    P_ASM,        /* an assembly symbol */
    P_WRAPPED,    /* the kernel struct named inside a launch wrapper */
    P_N
};

#define NS_MISMATCH 0.3    /* top definition's namespace disagrees with the name's */
#define NS_PARTIAL 0.9     /* one namespace is a suffix/prefix of the other */
#define LAUNCH_FOREIGN 0.3 /* the launching Python frame is in no indexed repository */
#define CLAIM_MIN 0.5      /* below this the row is unresolved, with candidates */
static const double path_prob[P_N] = {0.99, 0.95, 0.97, 0.93, 0.98, 0.90, 0.92, 0.97, 0.95};
static const char *const path_name[P_N] = {"kernel+namespace", "kernel",       "lambda-anchor",
                                           "functor-anchor",   "exact-symbol", "symbol-prefix",
                                           "name-macro",       "asm-symbol",   "wrapped-kernel"};

struct filecand {
    double w;
    double ns;
    int32_t def; /* first line in the file */
    uint8_t clue;
};

/* "; decided_by=package,arity": the clues the top file had and the
 * runner-up lacked ("weight" when only the sum of factors did) */
static int decided_by(uint8_t k, struct mp_buf *notes)
{
    int rc = mp_buf_puts(notes, "; decided_by=");
    bool any = false;
    for (int i = 0; i < 8 && !rc; i++)
        if (k >> i & 1) {
            rc = mp_buf_printf(notes, "%s%s", any ? "," : "", clue_name[i]);
            any = true;
        }
    return rc ? rc : any ? 0 : mp_buf_puts(notes, "weight");
}

/* Groups candidates by file, sorts by weight, fills r. */
static int finish(const struct mp_src_index *ix, struct cand *c, size_t n, enum path p,
                  const struct evres *ev_used, struct mp_src_result *r, struct mp_buf *notes)
{
    struct filecand fc[64];
    size_t nf = 0;
    double tot = 0;
    for (size_t i = 0; i < n; i++) {
        const struct src_def *d = &ix->defs[c[i].def];
        size_t k = 0;
        for (; k < nf; k++)
            if (ix->defs[fc[k].def].file == d->file)
                break;
        if (k == nf) {
            if (nf == 64)
                continue;
            fc[nf].def = c[i].def;
            fc[nf].w = 0;
            fc[nf].ns = c[i].ns;
            fc[nf].clue = c[i].clue;
            nf++;
        }
        if (c[i].w > fc[k].w) { /* a file's weight is its best definition */
            tot += c[i].w - fc[k].w;
            fc[k].w = c[i].w;
            fc[k].def = c[i].def;
            fc[k].ns = c[i].ns;
            fc[k].clue = c[i].clue;
        } else if (c[i].w == fc[k].w && d->line < ix->defs[fc[k].def].line) {
            fc[k].def = c[i].def;
        }
    }
    if (nf == 0 || tot <= 0)
        return 1;
    for (size_t i = 1; i < nf; i++) /* insertion sort, weight desc */
        for (size_t j = i; j > 0 && fc[j].w > fc[j - 1].w; j--) {
            struct filecand t = fc[j];
            fc[j] = fc[j - 1];
            fc[j - 1] = t;
        }
    const struct src_def *d = &ix->defs[fc[0].def];
    double share = fc[0].w / tot;
    /* the name's namespace disagrees with the definition's: a same-named
     * function of another project, most likely */
    double nsm = fc[0].ns < 0 ? NS_MISMATCH : fc[0].ns == 0.5 ? NS_PARTIAL : 1;
    /* launched by code in none of the indexed repositories: the same-named
     * definitions found are likely copies, not what ran */
    bool foreign = (ev_used->flags & EV_FOREIGN) != 0;
    if (foreign)
        nsm *= LAUNCH_FOREIGN;
    r->confidence = round(path_prob[p] * share * nsm * 1000) / 1000;
    bool claim = r->confidence >= CLAIM_MIN;
    int rc = 0;
    if (claim) {
        rc = set_str(&r->source_repo, def_repo(ix, d));
        if (!rc)
            rc = set_str(&r->source_root, ix->repos[ix->files[d->file].repo].root);
        if (!rc)
            rc = set_str(&r->source_file, def_path(ix, d));
        r->source_line = d->line;
    }
    struct mp_buf sym;
    mp_buf_init(&sym, 0);
    const char *ns = def_str(ix, d->ns);
    if (!rc)
        rc = mp_buf_printf(&sym, "%s%s%s", ns, ns[0] ? "::" : "", def_str(ix, d->name));
    if (!rc && claim)
        rc = set_str(&r->source_symbol, mp_buf_cstr(&sym));
    mp_buf_fini(&sym);
    snprintf(r->resolution, sizeof(r->resolution), claim ? "resolved" : "unresolved");
    if (!rc)
        rc = mp_buf_printf(notes, "%smatch=%s; files=%zu%s%s", notes->len ? "; " : "", path_name[p],
                           nf, ev_used->flags & EV_USED ? "; python-stack evidence" : "",
                           fc[0].ns < 0 ? "; namespace differs" : "");
    if (!rc && nf > 1)
        rc = decided_by(fc[0].clue & (uint8_t)~fc[1].clue, notes);
    if (!claim && !rc) {
        struct mp_buf e;
        mp_buf_init(&e, 0);
        if (foreign)
            rc = mp_buf_printf(&e,
                               "launch_site_not_indexed: launched from %.200s, which holds none "
                               "of the same-named definitions (best %.2f)",
                               ev_used->launcher, r->confidence);
        else
            rc = fc[0].ns < 0
                     ? mp_buf_printf(&e,
                                     "namespace_mismatch: the only definitions found "
                                     "are in other namespaces (best %.2f)",
                                     r->confidence)
                     : mp_buf_printf(&e, "ambiguous: %zu files define this name (best %.2f)", nf,
                                     r->confidence);
        if (!rc)
            rc = set_str(&r->error, mp_buf_cstr(&e));
        mp_buf_fini(&e);
        r->confidence = 0;
    }
    for (size_t i = claim ? 1 : 0; i < nf && r->n_cand < MP_SRC_MAX_CANDIDATES && !rc; i++) {
        const struct src_def *e = &ix->defs[fc[i].def];
        struct mp_src_candidate *k = &r->cand[r->n_cand++];
        rc = set_str(&k->repo, def_repo(ix, e));
        if (!rc)
            rc = set_str(&k->file, def_path(ix, e));
        k->line = e->line;
        if (!rc)
            rc = set_str(&k->symbol, def_str(ix, e->name));
        double km = (fc[i].ns < 0      ? NS_MISMATCH
                     : fc[i].ns == 0.5 ? NS_PARTIAL
                                       : 1) *
                    (foreign ? LAUNCH_FOREIGN : 1);
        k->score = round(path_prob[p] * fc[i].w / tot * km * 1000) / 1000;
    }
    for (size_t u = 0; u < sizeof(upstreams) / sizeof(upstreams[0]) && claim && !rc; u++) {
        if (strcmp(upstreams[u].repo, r->source_repo) == 0) {
            struct mp_buf ub;
            mp_buf_init(&ub, 0);
            rc = mp_buf_printf(&ub, "%s%s#L%ld", upstreams[u].url, r->source_file, r->source_line);
            if (!rc)
                rc = set_str(&r->upstream_url, mp_buf_cstr(&ub));
            mp_buf_fini(&ub);
        }
    }
    return rc;
}

static size_t lookup_plain(const struct mp_src_index *ix, const char *name, const struct src_ev *ev,
                           struct cand *c, size_t cap, struct evres *ev_used)
{
    struct qname q;
    q.ns[0] = 0;
    q.arity = -1;
    snprintf(q.name, sizeof(q.name), "%s", name);
    bool nsf = false;
    return gather(ix, &q, false, true, false, ev, c, cap, ev_used, &nsf);
}

/* Keeps the candidates that define a kernel: a Triton function, an
 * assembly symbol, or a __global__ / __kernel function. A name that only
 * starts with a host function's name (MIOpen's batched_transpose_32x16_half
 * against composable_kernel's host batched_transpose()) is not its
 * definition. Returns the new count. */
static size_t kernel_defs_only(const struct mp_src_index *ix, struct cand *c, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct src_def *d = &ix->defs[c[i].def];
        if (d->kind == SRC_TRITON || d->kind == SRC_ASM ||
            (d->kind == SRC_FUNC && (d->flags & SRC_F_GLOBAL)))
            c[k++] = c[i];
    }
    return k;
}

/* the demangled name in dm (the mangled prefix's when the demangler fails,
 * the name itself when it is not mangled) and the raw name in *raw, both
 * without AMD code-object suffixes */
static int res_names(const char *name, struct mp_buf *dm, char **raw, bool *demangle_failed)
{
    int rc = 0;
    if (starts(name, "_Z") && mp_src_demangle(name, dm) != 0) {
        *demangle_failed = true;
        if (nested_prefix(name, dm) != 0)
            mp_buf_reset(dm);
    }
    if (!dm->len)
        rc = mp_buf_puts(dm, name);
    /* AMD code-object suffixes */
    *raw = mp_strdup(name);
    if (!*raw || rc) {
        free(*raw);
        *raw = NULL;
        return MP_ENOMEM;
    }
    static const char *const sfx[] = {" [clone .kd]", ".kd", ".k.d"};
    for (size_t i = 0; i < 3; i++) {
        size_t a = strlen(*raw), b = strlen(sfx[i]);
        if (a > b && strcmp(*raw + a - b, sfx[i]) == 0)
            (*raw)[a - b] = 0;
        char *dd = dm->data;
        a = strlen(dd);
        if (a > b && strcmp(dd + a - b, sfx[i]) == 0) {
            dd[a - b] = 0;
            dm->len = a - b;
        }
    }
    return 0;
}

/* names with no source to look for: a closed library's, an annotation, or
 * no repos indexed; true when r is settled (*rc then says how it went) */
static bool res_settled(const struct mp_src_index *ix, const char *lib, struct mp_src_result *r,
                        int *rc)
{
    if (lib) {
        snprintf(r->resolution, sizeof(r->resolution), "closed");
        r->confidence = 0;
        if (!*rc)
            *rc = set_str(&r->library, lib);
        struct mp_buf e;
        mp_buf_init(&e, 0);
        if (!*rc)
            *rc =
                mp_buf_printf(&e, "closed_library: %s ships this kernel prebuilt, no source", lib);
        if (!*rc)
            *rc = set_str(&r->error, mp_buf_cstr(&e));
        mp_buf_fini(&e);
        return true;
    }
    if (!strcmp(r->kind, "annotation")) {
        snprintf(r->resolution, sizeof(r->resolution), "unsupported");
        *rc = set_str(&r->error, "annotation: not a kernel");
        return true;
    }
    if (!ix || ix->n_repos == 0) {
        snprintf(r->resolution, sizeof(r->resolution), "unresolved");
        *rc = set_str(&r->error, "no_source_repos: pass --kernel-source-repos");
        return true;
    }
    return false;
}

/* A token that Triton specialisation appends to a kernel name: one with a
 * digit (bf16xbf16xmxfp4, 16x128x256x1) or all capitals (NNT), not a word
 * such as "forward" or "memset" that names another kernel. */
static bool spec_token(const char *t)
{
    bool digit = false, upper = true;
    size_t l = 0;
    for (; t[l]; l++) {
        digit = digit || isdigit((unsigned char)t[l]);
        upper = upper && (isupper((unsigned char)t[l]) || isdigit((unsigned char)t[l]));
    }
    return l > 0 && (digit || (upper && l >= 2));
}

/* a plain name: Triton / extern "C" / asm definitions, then without Triton
 * specialisation suffixes, then macros that generate it */
static size_t res_plain(const struct mp_src_index *ix, const char *raw, const char *kind,
                        const struct src_ev *ev, struct cand *c, struct evres *ev_used,
                        enum path *p)
{
    size_t n = lookup_plain(ix, raw, ev, c, 256, ev_used);
    *p = P_TRITON;
    if (n && ix->defs[c[0].def].kind == SRC_ASM)
        *p = P_ASM;
    if (!n) { /* Triton specialisation suffixes: drop "_token"s from the right */
        char buf[512];
        snprintf(buf, sizeof(buf), "%s", raw);
        bool spec = false; /* the dropped part holds a specialisation token */
        for (char *u = strrchr(buf, '_'); u && u > buf && !n; u = strrchr(buf, '_')) {
            spec = spec || spec_token(u + 1);
            *u = 0;
            if (strlen(buf) < 3)
                break;
            if (!spec) /* _topk_forward is not a specialisation of _topk */
                continue;
            n = lookup_plain(ix, buf, ev, c, 256, ev_used);
            n = kernel_defs_only(ix, c, n);
            if (n && strcmp(kind, "inductor") == 0)
                n = 0; /* generated names are never prefixes of each other */
        }
        *p = P_TRITON_PFX;
    }
    if (!n) {
        ev_used->flags = 0;
        for (size_t m = 0; m < ix->n_macros && n < 256; m++) {
            const struct src_def *md = &ix->defs[ix->macros[m]];
            if (glob_match(def_str(ix, md->name), raw)) {
                c[n].def = ix->macros[m];
                c[n].w = path_is_test(def_path(ix, md)) ? 0.2 : 1;
                c[n].ns = 0;
                c[n].clue = 0;
                n++;
            }
        }
        *p = P_MACRO;
    }
    return n;
}

/* a launch wrapper (ck_tile::kentry<1, Rmsnorm2dFwd<...>>,
 * cutlass::device_kernel<enable_sm90_or_later<GemmUniversal<...>>>): the
 * first type in its template arguments that is not itself a wrapper is the
 * kernel; it alone is looked up (the types inside it are its parameters),
 * and the wrapper's own definition is never the answer */
static size_t res_wrapped(const struct mp_src_index *ix, const struct parsed *ps,
                          const struct src_ev *ev, struct cand *c, struct evres *ev_used,
                          struct mp_buf *notes, int *rc)
{
    int a = 0;
    while (a < ps->n_anchor && ps->anchor_lambda[a])
        a++;
    const struct qname *fn = &ps->fn;
    if (a == ps->n_anchor) {
        *rc = mp_buf_printf(notes, "%swrapper=%s%s%s; no kernel type in its template arguments",
                            notes->len ? "; " : "", fn->ns, fn->ns[0] ? "::" : "", fn->name);
        return 0;
    }
    const struct qname *k = &ps->anchor[a];
    *rc = mp_buf_printf(notes, "%swrapper=%s%s%s; wrapped kernel=%s%s%s", notes->len ? "; " : "",
                        fn->ns, fn->ns[0] ? "::" : "", fn->name, k->ns, k->ns[0] ? "::" : "",
                        k->name);
    bool nsf = false;
    return gather(ix, k, true, false, true, ev, c, 256, ev_used, &nsf);
}

/* a C++ name: the anchors of a generic launcher, then the kernel function */
static size_t res_cpp(const struct mp_src_index *ix, const char *d, const struct src_ev *ev,
                      struct cand *c, struct evres *ev_used, enum path *p, struct mp_buf *notes,
                      int *rc)
{
    size_t n = 0;
    struct parsed *ps = mp_calloc(1, sizeof(*ps));
    if (!ps) {
        *rc = MP_ENOMEM;
        return 0;
    }
    parse_cpp(d, ps);
    bool generic = ps->has_fn && generic_launcher(ps->fn.name);
    bool nsf = false;
    if (ps->has_fn && launch_wrapper(ps->fn.ns, ps->fn.name)) {
        n = res_wrapped(ix, ps, ev, c, ev_used, notes, rc);
        *p = P_WRAPPED;
        free(ps);
        return n;
    }
    if (generic) {
        for (int a = 0; a < ps->n_anchor && !n; a++) {
            bool nf2 = false;
            n = gather(ix, &ps->anchor[a], true, false, !ps->anchor_lambda[a], ev, c, 256, ev_used,
                       &nf2);
            *p = ps->anchor_lambda[a] ? P_LAMBDA : P_TYPE;
            if (n && !*rc)
                *rc = mp_buf_printf(notes, "anchor=%s%s%s", ps->anchor[a].ns,
                                    ps->anchor[a].ns[0] ? "::" : "", ps->anchor[a].name);
        }
    }
    if (!n && generic && ps->n_anchor > 0) {
        /* the lambda or functor it runs is what one edits; its generic
         * template (CUDALoops.cuh) is not the answer */
        *p = P_WRAPPED;
        if (!*rc)
            *rc = mp_buf_printf(notes,
                                "%sgeneric kernel template; the %s it runs (%s%s%s) is not "
                                "in the indexed repos",
                                notes->len ? "; " : "", ps->anchor_lambda[0] ? "lambda" : "functor",
                                ps->anchor[0].ns, ps->anchor[0].ns[0] ? "::" : "",
                                ps->anchor[0].name);
    } else if (!n && ps->has_fn) {
        n = gather(ix, &ps->fn, true, true, false, ev, c, 256, ev_used, &nsf);
        *p = nsf ? P_KERNEL_NS : P_KERNEL;
        if (n > 1)
            type_hints(ix, ps, c, n);
        if (generic && n && !*rc)
            *rc = mp_buf_puts(notes, "generic kernel template, no anchor found");
    }
    if (ps->fn.ns[0] && !*rc)
        *rc = mp_buf_printf(notes, "%snamespace=%s", notes->len ? "; " : "", ps->fn.ns);
    free(ps);
    return n;
}

/* no candidate: why, by kind */
static int res_not_found(struct mp_src_result *r)
{
    snprintf(r->resolution, sizeof(r->resolution), "unresolved");
    if (!strcmp(r->kind, "inductor"))
        return set_str(&r->error,
                       "inductor_source_not_found: torch.compile generated; pass the inductor "
                       "cache dir (TORCHINDUCTOR_CACHE_DIR) as a source repo");
    if (!strcmp(r->kind, "triton_jit"))
        return set_str(&r->error, "symbol_not_found: no Triton, extern \"C\", asm or macro "
                                  "definition of this name in the indexed repos");
    return set_str(&r->error, "symbol_not_found: no definition in the indexed repos");
}

/* a plain name: what defined it decides the kind */
static void res_plain_kind(const struct mp_src_index *ix, const struct cand *c,
                           struct mp_src_result *r)
{
    const struct src_def *k0 = &ix->defs[c[0].def];
    const char *path0 = def_path(ix, k0);
    size_t pl = strlen(path0);
    if (k0->kind == SRC_ASM)
        snprintf(r->kind, sizeof(r->kind), "asm");
    else if (k0->kind != SRC_TRITON) /* C/C++/HIP or a name-pasting macro */
        snprintf(r->kind, sizeof(r->kind), "%s",
                 pl > 3 && !strcmp(path0 + pl - 3, ".cl") ? "opencl" : "hip_cpp");
}

/* The platform a kernel name shows: 'h' for HIP types or an AMD
 * code-object suffix, 'c' for CUDA's own types, 0 when it shows none. */
static char name_platform(const char *raw, const char *dm)
{
    if (has(dm, "__hip_") || has(dm, "HIP_vector_type") || has(dm, "hip_bfloat16") ||
        has(raw, ".kd"))
        return 'h';
    if (has(dm, "__nv_") || has(dm, "cuda::std::"))
        return 'c';
    return 0;
}

int mp_src_resolve(const struct mp_src_index *ix, const char *name,
                   const struct mp_src_evidence *ev, struct mp_src_result *r)
{
    return mp_src_resolve_ctx(ix, name, ev, NULL, r);
}

int mp_src_resolve_ctx(const struct mp_src_index *ix, const char *name,
                       const struct mp_src_evidence *ev, const struct mp_src_context *ctx,
                       struct mp_src_result *r)
{
    memset(r, 0, sizeof(*r));
    struct mp_buf dm, notes;
    mp_buf_init(&dm, 0);
    mp_buf_init(&notes, 0);
    bool demangle_failed = false;
    char *raw = NULL;
    int rc = res_names(name, &dm, &raw, &demangle_failed);
    if (rc) {
        mp_buf_fini(&dm);
        return MP_ENOMEM;
    }
    const char *d = mp_buf_cstr(&dm);
    rc = set_str(&r->demangled, d);
    const char *lib = closed_library(raw, d);
    snprintf(r->kind, sizeof(r->kind), "%s", kind_of(raw, d, lib));
    snprintf(r->category, sizeof(r->category), "%s", category_of(d));
    if (demangle_failed && !rc)
        rc = mp_buf_puts(&notes, "demangler failed: qualified name (and the names opening its "
                                 "template arguments) from the mangled prefix");
    if (res_settled(ix, lib, r, &rc))
        goto done;
    struct src_ev ev2 = {NULL, 0, NULL, 0, 0};
    if (ev) {
        ev2.frames = ev->frames;
        ev2.n_frames = ev->n_frames;
    }
    if (ctx) {
        ev2.packages = ctx->packages;
        ev2.n_packages = ctx->n_packages;
        ev2.platform = ctx->platform;
    }
    if (!ev2.platform)
        ev2.platform = name_platform(raw, d);
    struct cand c[256];
    size_t n = 0;
    struct evres ev_used = {0, NULL};
    enum path p = P_KERNEL;
    bool plain = !strchr(d, '(') && !strchr(d, ':') && !strchr(d, '<') && !strchr(d, ' ');
    if (plain)
        n = res_plain(ix, raw, r->kind, &ev2, c, &ev_used, &p);
    else
        n = res_cpp(ix, d, &ev2, c, &ev_used, &p, &notes, &rc);
    if (rc)
        goto done;
    if (!n) {
        rc = p == P_WRAPPED
                 ? set_str(&r->error,
                           "wrapped_kernel_not_found: the kernel, lambda or functor that the "
                           "launch wrapper or generic template runs is defined in no indexed repo")
                 : 0;
        if (!rc && p == P_WRAPPED)
            snprintf(r->resolution, sizeof(r->resolution), "unresolved");
        else if (!rc)
            rc = res_not_found(r);
        goto done;
    }
    if (plain && n)
        res_plain_kind(ix, c, r);
    int f = finish(ix, c, n, p, &ev_used, r, &notes);
    if (f < 0)
        rc = f;
    else if (f > 0) {
        snprintf(r->resolution, sizeof(r->resolution), "unresolved");
        rc = set_str(&r->error, "symbol_not_found: no definition in the indexed repos");
    }
done:
    if (!rc && notes.len)
        rc = set_str(&r->notes, mp_buf_cstr(&notes));
    if (!rc && !strcmp(r->resolution, "resolved"))
        rc = src_find_refs(ix, r);
    else if (!rc)
        snprintf(r->baseline_ref_kind, sizeof(r->baseline_ref_kind), "none");
    free(raw);
    mp_buf_fini(&dm);
    mp_buf_fini(&notes);
    return rc ? MP_ENOMEM : 0;
}
