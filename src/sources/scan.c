/* One-pass scanners that find kernel and symbol definitions in source text:
 * C/C++/CUDA/HIP/OpenCL (functions and structs at namespace or class scope,
 * with their namespaces; macros whose body pastes a __global__ kernel name),
 * Python (functions under Triton decorators) and assembly (.globl /
 * .amdhsa_kernel symbols). They are deliberately approximate: no
 * preprocessing, no type checking, just enough structure to name the
 * definitions and their namespaces quickly. */
#include <ctype.h>
#include <string.h>

#include "src_int.h"

static bool is_c_ext(const char *n)
{
    static const char *const ext[] = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx",   ".c",
                                      ".h",  ".hpp", ".hh",  ".inl", ".cl", ".cpp.in"};
    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
        if (mp_str_ends_with(n, ext[i]))
            return true;
    return false;
}

bool src_scan_wants(const char *name)
{
    return is_c_ext(name) || mp_str_ends_with(name, ".py") || mp_str_ends_with(name, ".s") ||
           mp_str_ends_with(name, ".S");
}

static bool ident_start(int c)
{
    return isalpha(c) || c == '_';
}

static bool ident_char(int c)
{
    return isalnum(c) || c == '_';
}

/* ---------------------------------------------------------------- C/C++ */

enum scope_type { SC_NS, SC_CLASS, SC_FUNC, SC_OTHER };

#define MAX_DEPTH 256
#define STMT_MAX 8192

struct cscan {
    struct mp_src_index *ix;
    int32_t file;
    int depth;
    uint8_t type[MAX_DEPTH];
    uint16_t ns_len[MAX_DEPTH]; /* length of ns[] before this scope's name was added */
    char ns[2048];
    size_t ns_n;
    /* the statement being accumulated at namespace/class scope, with
     * comments, strings and preprocessor lines removed */
    char stmt[STMT_MAX];
    size_t stmt_n;
    uint32_t stmt_line; /* line of the first stmt character */
    bool stmt_overflow;
};

static void stmt_reset(struct cscan *s)
{
    s->stmt_n = 0;
    s->stmt_overflow = false;
}

static void stmt_put(struct cscan *s, char c, uint32_t line)
{
    if (s->stmt_n == 0) {
        if (isspace((unsigned char)c))
            return;
        s->stmt_line = line;
    }
    if (s->stmt_n + 1 < STMT_MAX)
        s->stmt[s->stmt_n++] = c;
    else
        s->stmt_overflow = true;
}

static bool kw_at(const char *p, size_t n, size_t i, const char *kw)
{
    size_t k = strlen(kw);
    if (i + k > n || memcmp(p + i, kw, k) != 0)
        return false;
    if (i > 0 && ident_char((unsigned char)p[i - 1]))
        return false;
    return i + k == n || !ident_char((unsigned char)p[i + k]);
}

static bool find_kw(const char *p, size_t n, const char *kw)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == kw[0] && kw_at(p, n, i, kw))
            return true;
    return false;
}

static uint32_t line_at(const struct cscan *s, size_t pos)
{
    uint32_t l = s->stmt_line;
    for (size_t i = 0; i < pos && i < s->stmt_n; i++)
        if (s->stmt[i] == '\n')
            l++;
    return l;
}

static void push(struct cscan *s, enum scope_type t, const char *name, size_t len)
{
    if (s->depth >= MAX_DEPTH) {
        s->depth++;
        return;
    }
    s->type[s->depth] = (uint8_t)t;
    s->ns_len[s->depth] = (uint16_t)s->ns_n;
    if (len > 0 && s->ns_n + len + 3 < sizeof(s->ns)) {
        if (s->ns_n) {
            s->ns[s->ns_n++] = ':';
            s->ns[s->ns_n++] = ':';
        }
        memcpy(s->ns + s->ns_n, name, len);
        s->ns_n += len;
    }
    s->depth++;
}

static void pop(struct cscan *s)
{
    if (s->depth <= 0)
        return;
    s->depth--;
    if (s->depth < MAX_DEPTH)
        s->ns_n = s->ns_len[s->depth];
}

static enum scope_type cur(const struct cscan *s)
{
    if (s->depth == 0)
        return SC_NS;
    if (s->depth > MAX_DEPTH)
        return SC_OTHER;
    return (enum scope_type)s->type[s->depth - 1];
}

/* Words before a '(' that are attributes or macros, not the function name. */
static bool not_a_name(const char *w, size_t n)
{
    static const char *const skip[] = {"__launch_bounds__",
                                       "__attribute__",
                                       "alignas",
                                       "decltype",
                                       "__declspec",
                                       "if",
                                       "while",
                                       "for",
                                       "switch",
                                       "return",
                                       "sizeof",
                                       "static_assert",
                                       "noexcept",
                                       "throw",
                                       "requires",
                                       "catch"};
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (strlen(skip[i]) == n && memcmp(skip[i], w, n) == 0)
            return true;
    /* ALL_CAPS words are macros (C10_LAUNCH_BOUNDS_1(...), TORCH_API) */
    bool lower = false;
    for (size_t i = 0; i < n; i++)
        if (islower((unsigned char)w[i]))
            lower = true;
    return !lower && n > 1;
}

/* namespace a::b { / namespace { / inline namespace x { / extern "C" {:
 * true when one opens (pushed) */
static bool open_namespace(struct cscan *s)
{
    const char *p = s->stmt;
    size_t n = s->stmt_n;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 'n' && kw_at(p, n, i, "namespace")) {
            size_t j = i + 9;
            while (j < n && isspace((unsigned char)p[j]))
                j++;
            size_t b = j;
            while (j < n && (ident_char((unsigned char)p[j]) || p[j] == ':'))
                j++;
            /* skip attributes like namespace CUB_NS { -> still a name */
            push(s, SC_NS, p + b, j - b);
            return true;
        }
    }
    /* extern "C" { : strings were replaced by "" */
    if (n >= 6 && kw_at(p, n, 0, "extern") && !memchr(p, '(', n)) {
        push(s, SC_NS, NULL, 0);
        return true;
    }
    return false;
}

/* The template arity of the definition whose header is p[0, n): the
 * parameters of the last "template <...>" in it, as flag bits
 * (SRC_ARITY_SHIFT; SRC_ARITY_VARIADIC for a parameter pack); 0 when there
 * is none or it cannot be counted. */
static uint8_t template_arity(const char *p, size_t n)
{
    size_t t = n;
    for (size_t i = 0; i < n; i++)
        if (p[i] == 't' && kw_at(p, n, i, "template"))
            t = i + 8;
    if (t >= n)
        return 0;
    while (t < n && isspace((unsigned char)p[t]))
        t++;
    if (t >= n || p[t] != '<')
        return 0;
    unsigned args = 0, depth = 0;
    bool any = false, pack = false;
    for (size_t i = t; i < n; i++) {
        char c = p[i];
        if (c == '<' || c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0 && --depth == 0) {
            if (any)
                args++;
            if (pack)
                return SRC_ARITY_VARIADIC << SRC_ARITY_SHIFT;
            return args >= SRC_ARITY_VARIADIC ? 0 : (uint8_t)(args << SRC_ARITY_SHIFT);
        } else if (depth == 1 && c == ',') {
            args++;
        } else if (depth == 1 && c == '.' && i + 2 < n && p[i + 1] == '.' && p[i + 2] == '.') {
            pack = true;
        } else if (depth == 1 && !isspace((unsigned char)c)) {
            any = true;
        }
    }
    return 0;
}

/* a function body opens: the name is p[b, e), maybe qualified a::b::name */
static int open_function(struct cscan *s, size_t b, size_t e)
{
    const char *p = s->stmt;
    size_t n = s->stmt_n;
    /* operator()/operator+ : members, not indexed by name */
    if (kw_at(p, n, b, "operator") || (b >= 9 && kw_at(p, n, b - 9, "operator"))) {
        push(s, SC_FUNC, NULL, 0);
        return 0;
    }
    /* qualified prefix a::b::name */
    size_t qb = b;
    while (qb >= 2 && p[qb - 1] == ':' && p[qb - 2] == ':') {
        size_t k = qb - 2;
        while (k > 0 && ident_char((unsigned char)p[k - 1]))
            k--;
        if (k == qb - 2)
            break;
        qb = k;
    }
    char nsbuf[2304];
    size_t nsn = 0;
    if (s->ns_n < sizeof(nsbuf)) {
        memcpy(nsbuf, s->ns, s->ns_n);
        nsn = s->ns_n;
    }
    if (qb < b) {
        size_t ql = b - 2 - qb;
        if (nsn + ql + 2 < sizeof(nsbuf)) {
            if (nsn) {
                nsbuf[nsn++] = ':';
                nsbuf[nsn++] = ':';
            }
            memcpy(nsbuf + nsn, p + qb, ql);
            nsn += ql;
        }
    }
    uint8_t fl = 0;
    if (find_kw(p, b, "__global__") || find_kw(p, b, "__kernel"))
        fl |= SRC_F_GLOBAL;
    if (find_kw(p, b, "template"))
        fl |= SRC_F_TEMPLATE | template_arity(p, b);
    if (find_kw(p, b, "__device__"))
        fl |= SRC_F_DEVICE;
    int rc = src_add_def(s->ix, s->file, p + b, e - b, nsbuf, nsn, line_at(s, b), SRC_FUNC, fl);
    push(s, SC_FUNC, NULL, 0);
    return rc;
}

/* the name of a struct/class/union/enum whose keyword ends at j: sets
 * [*nb, *ne) (empty when there is none) */
static void record_name(const char *p, size_t n, size_t j, size_t *nb, size_t *ne)
{
    while (j < n) {
        while (j < n && isspace((unsigned char)p[j]))
            j++;
        if (j >= n || !ident_start((unsigned char)p[j]))
            break;
        size_t b = j;
        while (j < n && ident_char((unsigned char)p[j]))
            j++;
        if (j < n && p[j] == '(') { /* alignas(16) */
            int pd = 0;
            for (; j < n; j++) {
                if (p[j] == '(')
                    pd++;
                else if (p[j] == ')' && --pd == 0) {
                    j++;
                    break;
                }
            }
            continue;
        }
        if ((j - b == 5 && memcmp(p + b, "final", 5) == 0))
            break;
        *nb = b;
        *ne = j;
        if (!not_a_name(p + b, j - b))
            break;
    }
}

/* struct/class/union NAME ... { (or anything else: SC_OTHER) */
static int open_record(struct cscan *s, bool saw_eq)
{
    const char *p = s->stmt;
    size_t n = s->stmt_n;
    int angle = 0; /* "template <class T> class X": the first class is a parameter */
    for (size_t i = 0; i < n; i++) {
        angle += p[i] == '<' ? 1 : p[i] == '>' && angle > 0 ? -1 : 0;
        if (angle > 0)
            continue;
        if ((p[i] == 's' && kw_at(p, n, i, "struct")) || (p[i] == 'c' && kw_at(p, n, i, "class")) ||
            (p[i] == 'u' && kw_at(p, n, i, "union")) || (p[i] == 'e' && kw_at(p, n, i, "enum"))) {
            bool is_enum = p[i] == 'e';
            size_t j = i + (p[i] == 'c' ? 5 : p[i] == 'u' ? 5 : p[i] == 'e' ? 4 : 6);
            if (is_enum) { /* enum class X / enum struct X */
                while (j < n && isspace((unsigned char)p[j]))
                    j++;
                if (kw_at(p, n, j, "class"))
                    j += 5;
                else if (kw_at(p, n, j, "struct"))
                    j += 6;
            }
            size_t nb = 0, ne = 0;
            record_name(p, n, j, &nb, &ne);
            if (ne > nb && !saw_eq) {
                uint8_t fl = find_kw(p, i, "template") ? SRC_F_TEMPLATE | template_arity(p, i) : 0;
                int rc = src_add_def(s->ix, s->file, p + nb, ne - nb, s->ns, s->ns_n,
                                     line_at(s, nb), SRC_STRUCT, fl);
                if (is_enum)
                    push(s, SC_OTHER, NULL, 0);
                else
                    push(s, SC_CLASS, p + nb, ne - nb);
                return rc;
            }
            break;
        }
    }
    push(s, SC_OTHER, NULL, 0);
    return 0;
}

/* The header of a '{' at namespace/class scope: decide what opens. */
static int classify_open(struct cscan *s)
{
    const char *p = s->stmt;
    size_t n = s->stmt_n;
    if (s->stmt_overflow) {
        push(s, SC_OTHER, NULL, 0);
        return 0;
    }
    if (open_namespace(s))
        return 0;
    /* find the first '(' at angle/paren depth 0 whose preceding word is a name */
    int angle = 0;
    bool saw_eq = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '<') {
            /* `operator<` and shifts are rare at this level; count angles */
            angle++;
        } else if (c == '>' && angle > 0) {
            angle--;
        } else if (c == '=' && angle == 0) {
            if (i + 1 < n && p[i + 1] == '=')
                i++;
            else
                saw_eq = true;
        } else if (c == '(' && angle == 0) {
            size_t e = i;
            while (e > 0 && isspace((unsigned char)p[e - 1]))
                e--;
            size_t b = e;
            while (b > 0 && ident_char((unsigned char)p[b - 1]))
                b--;
            if (b == e || !ident_start((unsigned char)p[b]) || not_a_name(p + b, e - b)) {
                /* skip the group: attribute or macro arguments */
                int pd = 0;
                for (; i < n; i++) {
                    if (p[i] == '(')
                        pd++;
                    else if (p[i] == ')' && --pd == 0)
                        break;
                }
                continue;
            }
            if (saw_eq)
                break;
            return open_function(s, b, e);
        }
    }
    return open_record(s, saw_eq);
}

/* #define NAME(args) ... __global__ ... a##b##c( : a glob "a*c" */
static int scan_define(struct cscan *s, const char *p, size_t n, uint32_t line)
{
    if (!memmem(p, n, "##", 2) || (!memmem(p, n, "__global__", 10) && !memmem(p, n, "__kernel", 8)))
        return 0;
    const char *g = memmem(p, n, "__global__", 10);
    if (!g)
        g = memmem(p, n, "__kernel", 8);
    /* the first '(' after __global__ preceded by a token containing ## */
    for (const char *q = g; q < p + n; q++) {
        if (*q != '(')
            continue;
        const char *e = q;
        while (e > g && isspace((unsigned char)e[-1]))
            e--;
        const char *b = e;
        while (b > g && (ident_char((unsigned char)b[-1]) || b[-1] == '#'))
            b--;
        if (b == e || !memmem(b, (size_t)(e - b), "##", 2)) {
            if (b < e && !not_a_name(b, (size_t)(e - b)) && b[0] != '_')
                return 0; /* a plain name: not a pasted one */
            continue;
        }
        /* build the glob: literal pieces stay, macro parameters become '*';
         * a piece is literal when it is not one of the macro's parameters */
        const char *lp = memchr(p, '(', n);
        const char *rp = lp ? memchr(lp, ')', (size_t)(p + n - lp)) : NULL;
        char glob[256];
        size_t gn = 0;
        const char *t = b;
        while (t < e && gn + 2 < sizeof(glob)) {
            while (t < e && *t == '#')
                t++;
            const char *tb = t;
            while (t < e && *t != '#')
                t++;
            size_t tl = (size_t)(t - tb);
            bool param = false;
            if (lp && rp && tl) {
                for (const char *a = lp + 1; a < rp;) {
                    while (a < rp && !ident_char((unsigned char)*a))
                        a++;
                    const char *ab = a;
                    while (a < rp && ident_char((unsigned char)*a))
                        a++;
                    if ((size_t)(a - ab) == tl && memcmp(ab, tb, tl) == 0)
                        param = true;
                }
            }
            if (param) {
                if (gn == 0 || glob[gn - 1] != '*')
                    glob[gn++] = '*';
            } else if (gn + tl + 1 < sizeof(glob)) {
                memcpy(glob + gn, tb, tl);
                gn += tl;
            }
        }
        if (gn < 3 || glob[0] == '*')
            return 0;
        return src_add_def(s->ix, s->file, glob, gn, "", 0, line, SRC_MACRO, SRC_F_GLOBAL);
    }
    return 0;
}

static int scan_c(struct mp_src_index *ix, int32_t file, const char *t, size_t n)
{
    static __thread struct cscan s; /* large; one per thread */
    memset(&s, 0, offsetof(struct cscan, stmt));
    s.ix = ix;
    s.file = file;
    stmt_reset(&s);
    uint32_t line = 1;
    bool bol = true; /* only whitespace since the line began */
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char c = t[i];
        if (c == '\n') {
            line++;
            bol = true;
            if (cur(&s) <= SC_CLASS)
                stmt_put(&s, c, line - 1);
            continue;
        }
        if (c == '#' && bol) { /* preprocessor line with continuations */
            size_t b = i;
            uint32_t l0 = line;
            while (i < n && t[i] != '\n') {
                if (t[i] == '\\' && i + 1 < n && t[i + 1] == '\n') {
                    line++;
                    i++;
                }
                i++;
            }
            if (n - b > 7 && memcmp(t + b, "#define", 7) == 0)
                rc = scan_define(&s, t + b, i - b, l0);
            i--; /* the newline is handled by the loop */
            continue;
        }
        if (!isspace((unsigned char)c))
            bol = false;
        if (c == '/' && i + 1 < n && t[i + 1] == '/') {
            while (i < n && t[i] != '\n')
                i++;
            i--;
            continue;
        }
        if (c == '/' && i + 1 < n && t[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(t[i] == '*' && t[i + 1] == '/')) {
                if (t[i] == '\n')
                    line++;
                i++;
            }
            i++;
            continue;
        }
        if (c == '"' || (c == '\'' && !(i > 0 && isxdigit((unsigned char)t[i - 1])))) {
            /* string or char literal ('\'' after a hex digit is a C++14 separator) */
            char q = c;
            for (i++; i < n && t[i] != q; i++) {
                if (t[i] == '\\') { /* an escape, or a line continuation */
                    if (i + 1 < n && t[i + 1] == '\n')
                        line++;
                    i++;
                } else if (t[i] == '\n') { /* unterminated: stop at the line end */
                    line++;
                    break;
                }
            }
            if (cur(&s) <= SC_CLASS) {
                stmt_put(&s, q, line);
                stmt_put(&s, q, line);
            }
            continue;
        }
        enum scope_type ct = cur(&s);
        if (c == '{') {
            if (ct <= SC_CLASS) {
                rc = classify_open(&s);
                stmt_reset(&s);
            } else {
                push(&s, SC_OTHER, NULL, 0);
            }
            continue;
        }
        if (c == '}') {
            pop(&s);
            stmt_reset(&s);
            continue;
        }
        if (ct <= SC_CLASS) {
            bool access = ct == SC_CLASS && c == ':' && s.stmt_n >= 6 &&
                          (memcmp(s.stmt + s.stmt_n - 6, "public", 6) == 0 ||
                           (s.stmt_n >= 7 && memcmp(s.stmt + s.stmt_n - 7, "private", 7) == 0) ||
                           (s.stmt_n >= 9 && memcmp(s.stmt + s.stmt_n - 9, "protected", 9) == 0));
            if (c == ';' || access)
                stmt_reset(&s);
            else
                stmt_put(&s, c, line);
        }
    }
    return rc;
}

/* --------------------------------------------------------------- Python */

static bool triton_decorator(const char *p, size_t n)
{
    static const char *const marks[] = {"triton.jit", "triton.autotune", "triton.heuristics",
                                        "@jit",       "@libentry",       "@triton_op",
                                        "gluon.jit",  "@autotune"};
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
        if (memmem(p, n, marks[i], strlen(marks[i])))
            return true;
    return false;
}

/* The end (its '\n', or n) of the line that starts at t[i]; *b gets where
 * its text starts past leading blanks: ' ' and '\t', or with any_space
 * every isspace character. */
static size_t line_span(const char *t, size_t n, size_t i, bool any_space, size_t *b)
{
    size_t e = i;
    while (e < n && t[e] != '\n')
        e++;
    size_t k = i;
    while (k < e && (any_space ? isspace((unsigned char)t[k]) != 0 : t[k] == ' ' || t[k] == '\t'))
        k++;
    *b = k;
    return e;
}

static int scan_py(struct mp_src_index *ix, int32_t file, const char *t, size_t n)
{
    uint32_t line = 1;
    bool pending = false;
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t b;
        size_t e = line_span(t, n, i, false, &b);
        if (b < e && t[b] == '@') {
            if (triton_decorator(t + b, e - b))
                pending = true;
        } else if (e - b > 4 &&
                   (memcmp(t + b, "def ", 4) == 0 || memcmp(t + b, "async def ", 10) == 0)) {
            size_t k = b + (t[b] == 'a' ? 10 : 4);
            size_t nb = k;
            while (k < e && ident_char((unsigned char)t[k]))
                k++;
            if (pending && k > nb)
                rc = src_add_def(ix, file, t + nb, k - nb, "", 0, line, SRC_TRITON, SRC_F_GLOBAL);
            pending = false;
        } else if (e - b > 6 && memcmp(t + b, "class ", 6) == 0) {
            pending = false;
        }
        i = e + 1;
        line++;
    }
    return rc;
}

/* ------------------------------------------------------------- assembly */

static int scan_asm(struct mp_src_index *ix, int32_t file, const char *t, size_t n)
{
    static const char *const dirs[] = {".globl", ".global", ".amdhsa_kernel", ".amdgpu_hsa_kernel"};
    uint32_t line = 1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t b;
        size_t e = line_span(t, n, i, true, &b);
        for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
            size_t dl = strlen(dirs[d]);
            if (e - b > dl && memcmp(t + b, dirs[d], dl) == 0 &&
                isspace((unsigned char)t[b + dl])) {
                size_t k = b + dl;
                while (k < e && isspace((unsigned char)t[k]))
                    k++;
                size_t nb = k;
                while (k < e && (ident_char((unsigned char)t[k]) || t[k] == '.' || t[k] == '$'))
                    k++;
                if (k > nb)
                    rc = src_add_def(ix, file, t + nb, k - nb, "", 0, line, SRC_ASM, SRC_F_GLOBAL);
                break;
            }
        }
        i = e + 1;
        line++;
    }
    return rc;
}

int src_scan_file(struct mp_src_index *ix, int32_t file, const char *path, const char *text,
                  size_t len)
{
    if (mp_str_ends_with(path, ".py"))
        return memmem(text, len, "jit", 3) || memmem(text, len, "autotune", 8)
                   ? scan_py(ix, file, text, len)
                   : 0;
    if (mp_str_ends_with(path, ".s") || mp_str_ends_with(path, ".S"))
        return scan_asm(ix, file, text, len);
    return scan_c(ix, file, text, len);
}
