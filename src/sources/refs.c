/* Test, baseline and Triton references of a resolved kernel (Magpie's
 * test_file, test_cmd, baseline_ref_*, triton_ref_* columns), found from
 * evidence in the indexed trees, never from a per-kernel table:
 *
 * 1. Op names: the functions of the kernel's own file that launch it
 *    (`K<<<`, `K<...><<<`, `hipLaunchKernelGGL(K`, Triton's `K[grid](`),
 *    also through a launch macro defined in that file, plus the functions
 *    of that file that call those (one level: the bound op that calls a
 *    templated launcher).
 * 2. Test: the Python test files of the same repository (test_*.py under a
 *    test/ or tests/ directory) whose test functions use an op name as a
 *    call or attribute (`ops.NAME(`, `torch.ops._C.NAME`), directly or
 *    through a helper function of the same file; the file with the most
 *    such test functions wins (fewest path components on a tie).
 * 3. Baseline: a reference function those test functions call, named by
 *    the convention of vLLM/aiter tests (run_torch, ref_*, torch_*,
 *    naive_*, *_native, *_ref, reference_*), defined in the test file or
 *    imported from a module of the repository (eager_fn, or
 *    perftest_wrapper under @perftest); else, when the test function
 *    compares tensors itself (assert_close / allclose), the test function
 *    (inline_in_test); else none.
 * 4. Triton reference: a @triton.jit function of the indexed repos whose
 *    name has the same words as the kernel's or an op name's (order free;
 *    "kernel", "triton", "impl" and leading underscores ignored); only a
 *    unique match (per file) is reported.
 * Where a column stays empty the notes say why. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src_int.h"

#define MAX_OPS 8
#define MAX_TESTS 4

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static char *slurp(const char *root, const char *rel, size_t *len)
{
    char *full = mp_fs_join(root, rel);
    if (!full)
        return NULL;
    FILE *f = fopen(full, "rb");
    free(full);
    if (!f)
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, 64u << 20);
    char tmp[65536];
    size_t got;
    int rc = 0;
    while (!rc && (got = fread(tmp, 1, sizeof(tmp), f)) > 0)
        rc = mp_buf_append(&b, tmp, got);
    fclose(f);
    if (rc) {
        mp_buf_fini(&b);
        return NULL;
    }
    *len = b.len;
    if (!b.data)
        return mp_strdup("");
    return b.data; /* NUL-terminated by mp_buf */
}

/* The word w occurs at s[i] as a whole identifier. */
static bool word_at(const char *s, size_t n, size_t i, const char *w, size_t wl)
{
    return i + wl <= n && memcmp(s + i, w, wl) == 0 && (i == 0 || !ident_char(s[i - 1])) &&
           (i + wl == n || !ident_char(s[i + wl]));
}

struct names {
    char v[MAX_OPS][128];
    int n;
};

/* The index of the close that balances the open at or after s[i] (n where
 * none does), or SIZE_MAX where one of stop (when given) comes first. */
static size_t match_close(const char *s, size_t n, size_t i, char open, char close,
                          const char *stop)
{
    int d = 0;
    for (; i < n; i++) {
        if (s[i] == open)
            d++;
        else if (s[i] == close && --d == 0)
            break;
        else if (stop && s[i] && strchr(stop, s[i]))
            return SIZE_MAX;
    }
    return i;
}

static void names_add(struct names *ns, const char *p, size_t l)
{
    if (l < 4 || l >= sizeof(ns->v[0]) || ns->n >= MAX_OPS)
        return;
    static const char *const generic[] = {"main",  "forward",  "launch",   "run",  "call",
                                          "apply", "operator", "dispatch", "impl", NULL};
    for (size_t i = 0; generic[i]; i++)
        if (strlen(generic[i]) == l && memcmp(generic[i], p, l) == 0)
            return;
    for (int i = 0; i < ns->n; i++)
        if (strlen(ns->v[i]) == l && memcmp(ns->v[i], p, l) == 0)
            return;
    memcpy(ns->v[ns->n], p, l);
    ns->v[ns->n][l] = 0;
    ns->n++;
}

/* ---------------------------------------------------- C/C++ launchers */

/* The top-level functions of a C++ file (name and body range), found by
 * one pass that treats namespace and extern "C" blocks as transparent and
 * skips comments, strings, preprocessor lines and class bodies. */
struct cfun {
    size_t name, name_len, body_b, body_e;
};

static size_t cpp_functions(const char *s, size_t n, struct cfun *fs, size_t cap)
{
    size_t nf = 0;
    int depth = 0;   /* braces inside the current function */
    int infun = 0;   /* inside a top-level function body */
    size_t stmt = 0; /* start of the current top-level statement */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *e = strstr(s + i + 2, "*/");
            i = e ? (size_t)(e - s) + 1 : n;
            continue;
        }
        if (c == '"' || c == '\'') {
            for (i++; i < n && s[i] != c; i++)
                if (s[i] == '\\')
                    i++;
            continue;
        }
        if (c == '#' && !infun) { /* preprocessor line (with continuations) */
            while (i < n && !(s[i] == '\n' && s[i - 1] != '\\'))
                i++;
            stmt = i + 1;
            continue;
        }
        if (infun) {
            if (c == '{')
                depth++;
            else if (c == '}' && --depth == 0) {
                infun = 0;
                if (nf > 0)
                    fs[nf - 1].body_e = i;
                stmt = i + 1;
            }
            continue;
        }
        if (c == ';' || c == '}') {
            stmt = i + 1;
            continue;
        }
        if (c != '{')
            continue;
        /* a block opens at top level: namespace / extern "C" / function */
        size_t k = i;
        while (k > stmt && isspace((unsigned char)s[k - 1]))
            k--;
        bool ns = false;
        for (size_t q = stmt; q + 9 <= k && !ns; q++) {
            if (s[q] == '/' && s[q + 1] == '/') { /* a comment: skip to its end */
                while (q < k && s[q] != '\n')
                    q++;
                continue;
            }
            ns = memcmp(s + q, "namespace", 9) == 0 || memcmp(s + q, "extern \"C", 9) == 0;
        }
        if (ns) {
            stmt = i + 1;
            continue;
        }
        /* the parameter list: the last ')' before '{' (after const/noexcept) */
        size_t rp = k;
        while (rp > stmt && s[rp - 1] != ')')
            rp--;
        if (rp == stmt || nf >= cap) { /* struct/class/initialiser: skip it */
            i = match_close(s, n, i, '{', '}', NULL);
            stmt = i + 1;
            continue;
        }
        int d = 0;
        size_t lp = rp - 1;
        for (; lp > stmt; lp--) {
            if (s[lp] == ')')
                d++;
            else if (s[lp] == '(' && --d == 0)
                break;
        }
        size_t ne = lp;
        while (ne > stmt && isspace((unsigned char)s[ne - 1]))
            ne--;
        size_t nb = ne;
        while (nb > stmt && ident_char(s[nb - 1]))
            nb--;
        if (nb < ne) {
            fs[nf].name = nb;
            fs[nf].name_len = ne - nb;
            fs[nf].body_b = i;
            fs[nf].body_e = n;
            nf++;
        }
        infun = 1;
        depth = 1;
    }
    return nf;
}

static const struct cfun *cpp_enclosing(const struct cfun *fs, size_t nf, size_t pos)
{
    for (size_t i = 0; i < nf; i++)
        if (pos > fs[i].body_b && pos < fs[i].body_e)
            return &fs[i];
    return NULL;
}

/* Whether the use of name at s[i] (whole word) is a kernel launch: followed
 * by optional template arguments and "<<<", or the first argument of
 * hipLaunchKernelGGL. */
static bool is_launch(const char *s, size_t n, size_t i, size_t wl)
{
    size_t j = i + wl;
    while (j < n && isspace((unsigned char)s[j]))
        j++;
    if (j < n && s[j] == '<' && !(j + 2 < n && s[j + 1] == '<' && s[j + 2] == '<')) {
        j = match_close(s, n, j, '<', '>', ";{");
        if (j == SIZE_MAX)
            return false;
        j++;
        while (j < n && (isspace((unsigned char)s[j]) || s[j] == '\\'))
            j++;
    }
    if (j + 2 < n && memcmp(s + j, "<<<", 3) == 0)
        return true;
    size_t b = i;
    while (b > 0 && (isspace((unsigned char)s[b - 1]) || s[b - 1] == '('))
        b--;
    return b >= 18 && memcmp(s + b - 18, "hipLaunchKernelGGL", 18) == 0;
}

/* name of the #define whose body holds s[pos], if any */
static bool macro_of(const char *s, size_t pos, char *out, size_t cap)
{
    size_t b = pos;
    for (;;) { /* back to the start of the logical line */
        while (b > 0 && s[b - 1] != '\n')
            b--;
        if (b >= 2 && s[b - 2] == '\\')
            b -= 1;
        else
            break;
    }
    while (s[b] == ' ' || s[b] == '\t')
        b++;
    if (strncmp(s + b, "#define", 7) != 0)
        return false;
    b += 7;
    while (s[b] == ' ' || s[b] == '\t')
        b++;
    size_t e = b;
    while (ident_char(s[e]))
        e++;
    if (e == b || e - b >= cap)
        return false;
    memcpy(out, s + b, e - b);
    out[e - b] = 0;
    return true;
}

static void cpp_ops(const char *s, size_t n, const char *sym, struct names *ops)
{
    struct cfun fs[512];
    size_t nf = cpp_functions(s, n, fs, 512);
    char targets[4][128];
    int nt = 0;
    snprintf(targets[nt++], sizeof(targets[0]), "%s", sym);
    struct names direct = {0};
    for (int t = 0; t < nt; t++) {
        size_t wl = strlen(targets[t]);
        for (const char *p = s; (p = strstr(p, targets[t])) != NULL; p += wl) {
            size_t i = (size_t)(p - s);
            if (!word_at(s, n, i, targets[t], wl))
                continue;
            if (t == 0 && !is_launch(s, n, i, wl))
                continue;
            /* a launch macro is used as a call or passed to a dispatch macro */
            const struct cfun *f = cpp_enclosing(fs, nf, i);
            char mac[128];
            if (f)
                names_add(&direct, s + f->name, f->name_len);
            else if (t == 0 && nt < 4 && macro_of(s, i, mac, sizeof(mac)))
                snprintf(targets[nt++], sizeof(targets[0]), "%s", mac);
        }
    }
    /* callers in the same file, one level */
    *ops = direct;
    for (int k = 0; k < direct.n; k++) {
        size_t wl = strlen(direct.v[k]);
        for (const char *p = s; (p = strstr(p, direct.v[k])) != NULL; p += wl) {
            size_t i = (size_t)(p - s);
            if (!word_at(s, n, i, direct.v[k], wl))
                continue;
            size_t j = i + wl;
            if (j < n && s[j] == '<') { /* explicit template arguments */
                j = match_close(s, n, j, '<', '>', NULL) + 1;
            }
            if (j >= n || s[j] != '(')
                continue;
            const struct cfun *f = cpp_enclosing(fs, nf, i);
            if (f && !(f->name_len == wl && memcmp(s + f->name, direct.v[k], wl) == 0))
                names_add(ops, s + f->name, f->name_len);
        }
    }
}

/* ------------------------------------------------------- Python parsing */

struct pyfun {
    size_t b, e;     /* line-start offsets: def line .. end of body */
    size_t name, nl; /* name */
    int indent;
    bool perftest; /* decorated @perftest */
};

static size_t py_functions(const char *s, size_t n, struct pyfun *fs, size_t cap)
{
    size_t nf = 0;
    for (size_t ls = 0; ls < n;) {
        const char *nlp = memchr(s + ls, '\n', n - ls);
        size_t le = nlp ? (size_t)(nlp - s) : n;
        size_t k = ls;
        while (k < le && (s[k] == ' ' || s[k] == '\t'))
            k++;
        int ind = (int)(k - ls);
        bool blank = k == le || s[k] == '#';
        if (!blank) { /* close functions whose body ended */
            for (size_t f = nf; f > 0; f--)
                if (fs[f - 1].e == 0 && ind <= fs[f - 1].indent && s[k] != ')')
                    fs[f - 1].e = ls;
        }
        bool async_def = le - k > 10 && memcmp(s + k, "async def ", 10) == 0;
        if (!blank && nf < cap && ((le - k > 4 && memcmp(s + k, "def ", 4) == 0) || async_def)) {
            size_t nb = k + (async_def ? 10 : 4), ne = nb;
            while (ne < le && ident_char(s[ne]))
                ne++;
            fs[nf] = (struct pyfun){ls, 0, nb, ne - nb, ind, false};
            /* decorators above */
            size_t p = ls;
            while (p > 0) {
                size_t q = p - 1;
                while (q > 0 && s[q - 1] != '\n')
                    q--;
                const char *t = s + q;
                while (*t == ' ' || *t == '\t')
                    t++;
                if (*t != '@')
                    break;
                if (strncmp(t, "@perftest", 9) == 0)
                    fs[nf].perftest = true;
                p = q;
            }
            nf++;
        }
        ls = le + 1;
    }
    for (size_t f = 0; f < nf; f++)
        if (fs[f].e == 0)
            fs[f].e = n;
    return nf;
}

/* Whether [b, e) uses name as a call or attribute outside import lines. */
static bool py_uses(const char *s, size_t b, size_t e, const char *name, bool call_only)
{
    size_t wl = strlen(name);
    for (size_t i = b; i + wl <= e; i++) {
        if (s[i] != name[0] || !word_at(s, e, i, name, wl))
            continue;
        size_t ls = i;
        while (ls > b && s[ls - 1] != '\n')
            ls--;
        while (s[ls] == ' ' || s[ls] == '\t')
            ls++;
        if (strncmp(s + ls, "import ", 7) == 0 || strncmp(s + ls, "from ", 5) == 0 ||
            strncmp(s + ls, "def ", 4) == 0 || s[ls] == '#')
            continue;
        bool attr = i > 0 && s[i - 1] == '.';
        bool call = i + wl < e && s[i + wl] == '(';
        if (call || (attr && !call_only))
            return true;
    }
    return false;
}

static bool py_test_path(const char *p)
{
    const char *base = strrchr(p, '/');
    base = base ? base + 1 : p;
    size_t bl = strlen(base);
    if (strncmp(base, "test_", 5) != 0 || bl < 8 || strcmp(base + bl - 3, ".py") != 0)
        return false;
    return strncmp(p, "tests/", 6) == 0 || strncmp(p, "test/", 5) == 0 || strstr(p, "/tests/") ||
           strstr(p, "/test/");
}

/* --------------------------------------------------------- the search */

struct testpick {
    int32_t file; /* index into ix->files, -1 none */
    int score;
    char tests[MAX_TESTS][128];
    int ntests, nmatch;
    char baseline_file[1024], baseline_sym[128], baseline_kind[24], baseline_note[256];
};

static bool ref_name(const char *p, size_t l)
{
    static const char *const pre[] = {"ref_", "torch_", "naive_", "reference_", NULL};
    if (l == 9 && memcmp(p, "run_torch", 9) == 0)
        return true;
    for (size_t i = 0; pre[i]; i++)
        if (l > strlen(pre[i]) && memcmp(p, pre[i], strlen(pre[i])) == 0)
            return true;
    return (l > 7 && memcmp(p + l - 7, "_native", 7) == 0) ||
           (l > 4 && memcmp(p + l - 4, "_ref", 4) == 0);
}

/* module "a.b.c" imported in s -> repo-relative "a/b/c.py" defining name */
static bool imported_from(const char *s, size_t n, const char *name, char *mod, size_t cap)
{
    size_t wl = strlen(name);
    for (const char *p = s; (p = strstr(p, "from ")) != NULL; p += 5) {
        if (p > s && p[-1] != '\n')
            continue;
        const char *le = memchr(p, '\n', n - (size_t)(p - s));
        const char *imp = strstr(p, " import ");
        if (!imp || (le && imp > le))
            continue;
        /* name among the imported names (parenthesised lists span lines) */
        const char *end = le;
        if (imp[8] == '(') {
            end = strchr(imp, ')');
        }
        if (!end)
            end = s + n;
        bool found = false;
        for (const char *q = imp + 8; q + wl <= end && !found; q++)
            found = word_at(s, n, (size_t)(q - s), name, wl);
        if (!found)
            continue;
        size_t ml = (size_t)(imp - (p + 5));
        if (ml + 4 >= cap || p[5] == '.')
            return false;
        for (size_t i = 0; i < ml; i++)
            mod[i] = p[5 + i] == '.' ? '/' : p[5 + i];
        memcpy(mod + ml, ".py", 4);
        return true;
    }
    return false;
}

static int py_def_line(const char *s, const char *name)
{
    size_t wl = strlen(name);
    int line = 1;
    for (const char *p = s; *p; p++) {
        if (*p == '\n') {
            line++;
            if (strncmp(p + 1, "def ", 4) == 0 && strncmp(p + 5, name, wl) == 0 && p[5 + wl] == '(')
                return line;
        }
    }
    return 0;
}

static void pick_baseline(const struct mp_src_repo_info *ri, const char *rel, const char *s,
                          size_t n, const struct pyfun *fs, size_t nf, const bool *hit,
                          struct testpick *tp)
{
    /* a reference function called by a matching test function */
    for (size_t f = 0; f < nf; f++) {
        if (!hit[f])
            continue;
        for (size_t i = fs[f].b; i < fs[f].e; i++) {
            if (!ident_char(s[i]) || (i > 0 && (ident_char(s[i - 1]) || s[i - 1] == '.')))
                continue;
            size_t e = i;
            while (e < fs[f].e && ident_char(s[e]))
                e++;
            if (e >= fs[f].e || s[e] != '(' || !ref_name(s + i, e - i) || e - i >= 128) {
                i = e;
                continue;
            }
            char nm[128];
            memcpy(nm, s + i, e - i);
            nm[e - i] = 0;
            for (size_t g = 0; g < nf; g++) {
                if (fs[g].indent == 0 && fs[g].nl == e - i &&
                    memcmp(s + fs[g].name, nm, e - i) == 0) {
                    snprintf(tp->baseline_file, sizeof(tp->baseline_file), "%s", rel);
                    snprintf(tp->baseline_sym, sizeof(tp->baseline_sym), "%s", nm);
                    snprintf(tp->baseline_kind, sizeof(tp->baseline_kind), "%s",
                             fs[g].perftest ? "perftest_wrapper" : "eager_fn");
                    return;
                }
            }
            char mod[1024];
            size_t ml = 0;
            char *txt;
            if (imported_from(s, n, nm, mod, sizeof(mod)) &&
                (txt = slurp(ri->root, mod, &ml)) != NULL) {
                int line = py_def_line(txt, nm);
                free(txt);
                if (line > 0) {
                    snprintf(tp->baseline_file, sizeof(tp->baseline_file), "%s", mod);
                    snprintf(tp->baseline_sym, sizeof(tp->baseline_sym), "%s", nm);
                    snprintf(tp->baseline_kind, sizeof(tp->baseline_kind), "eager_fn");
                    return;
                }
            }
            i = e;
        }
    }
    for (size_t f = 0; f < nf; f++) {
        if (!hit[f] || strncmp(s + fs[f].name, "test", 4) != 0)
            continue;
        bool cmp = false;
        static const char *const asserts[] = {"assert_close", "allclose", "assert_allclose",
                                              "checkAllclose", NULL};
        for (size_t a = 0; asserts[a] && !cmp; a++) {
            const char *p = strstr(s + fs[f].b, asserts[a]);
            cmp = p && (size_t)(p - s) < fs[f].e;
        }
        if (cmp && fs[f].nl < 128) {
            snprintf(tp->baseline_file, sizeof(tp->baseline_file), "%s", rel);
            snprintf(tp->baseline_sym, sizeof(tp->baseline_sym), "%.*s", (int)fs[f].nl,
                     s + fs[f].name);
            snprintf(tp->baseline_kind, sizeof(tp->baseline_kind), "inline_in_test");
            return;
        }
    }
    snprintf(tp->baseline_note, sizeof(tp->baseline_note),
             "baseline: the test calls no reference function (run_torch, ref_*, torch_*, "
             "naive_*, *_native, *_ref) and compares no tensors itself");
}

/* a test file's text, read once per index (a resolved row reads every
 * test file of its repository) */
static const char *test_text(const struct mp_src_index *ix, int32_t fi, size_t *len)
{
    struct src_texts *t = ix->texts;
    if (!t)
        return NULL;
    if (!t->text) {
        t->text = mp_calloc(ix->n_files ? ix->n_files : 1, sizeof(char *));
        t->len = mp_calloc(ix->n_files ? ix->n_files : 1, sizeof(size_t));
        if (!t->text || !t->len) {
            free(t->text);
            free(t->len);
            t->text = NULL;
            t->len = NULL;
            return NULL;
        }
        t->n = ix->n_files;
    }
    if ((size_t)fi >= t->n)
        return NULL;
    if (!t->text[fi]) {
        const struct mp_src_repo_info *ri = &ix->repos[ix->files[fi].repo];
        t->text[fi] = slurp(ri->root, mp_intern_str(ix->strs, ix->files[fi].path), &t->len[fi]);
        if (!t->text[fi])
            return NULL;
    }
    *len = t->len[fi];
    return t->text[fi];
}

/* scores one test file; fills tp when it beats the current pick */
static void score_test(const struct mp_src_index *ix, int32_t fi, const struct names *ops,
                       struct testpick *tp)
{
    const struct mp_src_repo_info *ri = &ix->repos[ix->files[fi].repo];
    const char *rel = mp_intern_str(ix->strs, ix->files[fi].path);
    size_t n = 0;
    const char *s = test_text(ix, fi, &n);
    if (!s)
        return;
    bool any = false;
    for (int k = 0; k < ops->n && !any; k++)
        any = strstr(s, ops->v[k]) != NULL;
    struct pyfun *fs = any ? mp_calloc(4096, sizeof(*fs)) : NULL;
    bool *hit = fs ? mp_calloc(4096, sizeof(*hit)) : NULL;
    if (!hit) {
        free(fs);
        return;
    }
    size_t nf = py_functions(s, n, fs, 4096);
    /* functions that use an op: directly, or a same-file helper that does */
    for (size_t f = 0; f < nf; f++)
        for (int k = 0; k < ops->n && !hit[f]; k++)
            hit[f] = py_uses(s, fs[f].b + 1, fs[f].e, ops->v[k], false);
    for (size_t f = 0; f < nf; f++) {
        if (hit[f])
            continue;
        for (size_t g = 0; g < nf && !hit[f]; g++) {
            if (!hit[g] || g == f || fs[g].nl >= 128 || strncmp(s + fs[g].name, "test", 4) == 0)
                continue;
            char nm[128];
            memcpy(nm, s + fs[g].name, fs[g].nl);
            nm[fs[g].nl] = 0;
            hit[f] = py_uses(s, fs[f].b + 1, fs[f].e, nm, true);
        }
    }
    int score = 0;
    for (size_t f = 0; f < nf; f++)
        score += hit[f] && fs[f].nl > 4 && strncmp(s + fs[f].name, "test_", 5) == 0;
    size_t depth = 0;
    for (const char *p = rel; *p; p++)
        depth += *p == '/';
    size_t cur_depth = 0;
    if (tp->file >= 0)
        for (const char *p = mp_intern_str(ix->strs, ix->files[tp->file].path); *p; p++)
            cur_depth += *p == '/';
    if (score > 0 && (score > tp->score || (score == tp->score && depth < cur_depth))) {
        memset(tp, 0, sizeof(*tp));
        tp->file = fi;
        tp->score = score;
        for (size_t f = 0; f < nf; f++) {
            if (!hit[f] || fs[f].nl <= 4 || strncmp(s + fs[f].name, "test_", 5) != 0 ||
                fs[f].nl >= 128)
                continue;
            tp->nmatch++;
            if (tp->ntests < MAX_TESTS)
                snprintf(tp->tests[tp->ntests++], sizeof(tp->tests[0]), "%.*s", (int)fs[f].nl,
                         s + fs[f].name);
        }
        pick_baseline(ri, rel, s, n, fs, nf, hit, tp);
    }
    free(hit);
    free(fs);
}

/* lower-case words of a name, sorted and joined by '_' ("kernel", "triton",
 * "impl" and empty words dropped) */
static void word_key(const char *name, char *out, size_t cap)
{
    char w[16][48];
    int nw = 0;
    for (const char *p = name; *p && nw < 16;) {
        while (*p == '_')
            p++;
        size_t l = 0;
        while (p[l] && p[l] != '_')
            l++;
        if (l && l < 48) {
            for (size_t i = 0; i < l; i++)
                w[nw][i] = (char)tolower((unsigned char)p[i]);
            w[nw][l] = 0;
            if (strcmp(w[nw], "kernel") != 0 && strcmp(w[nw], "triton") != 0 &&
                strcmp(w[nw], "impl") != 0)
                nw++;
        }
        p += l;
    }
    for (int a = 1; a < nw; a++) /* insertion sort */
        for (int b = a; b > 0 && strcmp(w[b], w[b - 1]) < 0; b--) {
            char t[48];
            memcpy(t, w[b], 48);
            memcpy(w[b], w[b - 1], 48);
            memcpy(w[b - 1], t, 48);
        }
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < nw && o + strlen(w[i]) + 2 < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? "_" : "", w[i]);
}

static int set_s(char **dst, const char *s)
{
    free(*dst);
    *dst = s && s[0] ? mp_strdup(s) : NULL;
    return s && s[0] && !*dst ? MP_ENOMEM : 0;
}

static void triton_ref(const struct mp_src_index *ix, const char *sym, const struct names *ops,
                       struct mp_src_result *r, struct mp_buf *why)
{
    char keys[MAX_OPS + 1][256];
    int nk = 0;
    word_key(sym, keys[nk++], sizeof(keys[0]));
    for (int i = 0; i < ops->n; i++)
        word_key(ops->v[i], keys[nk++], sizeof(keys[0]));
    int32_t found = -1;
    int nfound = 0;
    for (size_t i = 0; i < ix->n_defs; i++) {
        const struct src_def *d = &ix->defs[i];
        if (d->kind != SRC_TRITON)
            continue;
        char k[256];
        word_key(mp_intern_str(ix->strs, d->name), k, sizeof(k));
        bool eq = false;
        for (int j = 0; j < nk && !eq; j++)
            eq = keys[j][0] && strchr(keys[j], '_') && strcmp(k, keys[j]) == 0;
        if (!eq)
            continue;
        if (found < 0 || ix->defs[found].file != d->file)
            nfound++;
        if (found < 0)
            found = (int32_t)i;
    }
    if (nfound == 1) {
        const struct src_def *d = &ix->defs[found];
        char file[1400];
        snprintf(file, sizeof(file), "%s:%s", ix->repos[ix->files[d->file].repo].name,
                 mp_intern_str(ix->strs, ix->files[d->file].path));
        if (set_s(&r->triton_ref_file, file) == 0)
            set_s(&r->triton_ref_symbol, mp_intern_str(ix->strs, d->name));
    } else {
        mp_buf_printf(why, "; triton_ref: %s",
                      nfound ? "several Triton functions have the kernel's words"
                             : "no @triton.jit function with the kernel's or its op's words");
    }
}

/* Triton: the top-level functions that launch K[grid](...), in the def's
 * file or another module under the same top-level directory */
static void py_launchers(const struct mp_src_index *ix, const struct mp_src_result *r,
                         const char *sym, struct names *ops)
{
    const char *sl = strchr(r->source_file, '/');
    size_t top = sl ? (size_t)(sl - r->source_file) + 1 : 0;
    size_t wl = strlen(sym);
    for (size_t fi = 0; fi < ix->n_files && ops->n < MAX_OPS; fi++) {
        const struct mp_src_repo_info *ri = &ix->repos[ix->files[fi].repo];
        const char *rel = mp_intern_str(ix->strs, ix->files[fi].path);
        size_t rl = strlen(rel);
        if (strcmp(ri->root, r->source_root) != 0 || rl < 3 || strcmp(rel + rl - 3, ".py") != 0 ||
            (top && strncmp(rel, r->source_file, top) != 0) || py_test_path(rel))
            continue;
        size_t n = 0;
        char *s = slurp(ri->root, rel, &n);
        if (!s)
            continue;
        bool any = false;
        for (const char *p = s; !any && (p = strstr(p, sym)) != NULL; p += wl) {
            size_t i = (size_t)(p - s);
            any = word_at(s, n, i, sym, wl) && i + wl < n && s[i + wl] == '[';
        }
        struct pyfun *fs = any ? mp_calloc(4096, sizeof(*fs)) : NULL;
        size_t nf = fs ? py_functions(s, n, fs, 4096) : 0;
        for (const char *p = s; fs && (p = strstr(p, sym)) != NULL; p += wl) {
            size_t i = (size_t)(p - s);
            if (!word_at(s, n, i, sym, wl) || i + wl >= n || s[i + wl] != '[')
                continue;
            for (size_t f = 0; f < nf; f++)
                if (fs[f].indent == 0 && i > fs[f].b && i < fs[f].e)
                    names_add(ops, s + fs[f].name, fs[f].nl);
        }
        free(fs);
        free(s);
    }
}

void mp_src_repo_var(const char *name, char *out, size_t len)
{
    size_t j = 0;
    if (len < 6)
        return;
    out[j++] = '$';
    for (const char *p = name; *p && j + 5 < len; p++)
        out[j++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    memcpy(out + j, "_DIR", 5);
}

int src_find_refs(const struct mp_src_index *ix, struct mp_src_result *r)
{
    snprintf(r->baseline_ref_kind, sizeof(r->baseline_ref_kind), "none");
    if (!ix || !r->source_file || !r->source_symbol)
        return 0;
    const char *sym = strrchr(r->source_symbol, ':');
    sym = sym ? sym + 1 : r->source_symbol;
    struct mp_buf why;
    mp_buf_init(&why, 0);
    size_t n = 0;
    char *s = slurp(r->source_root, r->source_file, &n);
    struct names ops = {0};
    bool py =
        strlen(r->source_file) > 3 && !strcmp(r->source_file + strlen(r->source_file) - 3, ".py");
    bool triton = py;
    if (s && py) {
        py_launchers(ix, r, sym, &ops);
    } else if (s) {
        cpp_ops(s, n, sym, &ops);
    }
    free(s);
    int rc = 0;
    if (ops.n == 0) {
        rc = mp_buf_puts(&why, "; test_file: no launch of the kernel found in its file");
    } else {
        struct testpick tp;
        memset(&tp, 0, sizeof(tp));
        tp.file = -1;
        int32_t repo = -1;
        for (size_t i = 0; i < ix->n_repos; i++)
            if (!strcmp(ix->repos[i].root, r->source_root))
                repo = (int32_t)i;
        for (size_t i = 0; i < ix->n_files; i++)
            if (ix->files[i].repo == repo &&
                py_test_path(mp_intern_str(ix->strs, ix->files[i].path)))
                score_test(ix, (int32_t)i, &ops, &tp);
        if (tp.file >= 0) {
            const char *rel = mp_intern_str(ix->strs, ix->files[tp.file].path);
            char var[160];
            mp_src_repo_var(r->source_repo, var, sizeof(var));
            struct mp_buf cmd;
            mp_buf_init(&cmd, 0);
            rc = mp_buf_printf(&cmd, "cd %s && pytest -q %s", var, rel);
            if (!rc && tp.nmatch == 1)
                rc = mp_buf_printf(&cmd, "::%s", tp.tests[0]);
            else if (!rc && tp.nmatch <= MAX_TESTS)
                for (int t = 0; t < tp.ntests && !rc; t++)
                    rc = mp_buf_printf(&cmd, "%s%s", t ? " or " : " -k '", tp.tests[t]);
            if (!rc && tp.nmatch > 1 && tp.nmatch <= MAX_TESTS)
                rc = mp_buf_putc(&cmd, '\'');
            if (!rc)
                rc = set_s(&r->test_file, rel);
            if (!rc)
                rc = set_s(&r->test_cmd, mp_buf_cstr(&cmd));
            mp_buf_fini(&cmd);
            if (!rc && tp.baseline_sym[0]) {
                rc = set_s(&r->baseline_ref_file, tp.baseline_file);
                if (!rc)
                    rc = set_s(&r->baseline_ref_symbol, tp.baseline_sym);
                snprintf(r->baseline_ref_kind, sizeof(r->baseline_ref_kind), "%s",
                         tp.baseline_kind);
            } else if (!rc) {
                rc = mp_buf_printf(&why, "; %s", tp.baseline_note);
            }
        } else {
            rc = mp_buf_printf(&why, "; test_file: no test_*.py of %s uses", r->source_repo);
            for (int k = 0; k < ops.n && !rc; k++)
                rc = mp_buf_printf(&why, "%s%s", k ? "/" : " ", ops.v[k]);
        }
    }
    if (!rc && !triton)
        triton_ref(ix, sym, &ops, r, &why);
    else if (!rc)
        rc = mp_buf_puts(&why, "; triton_ref: the kernel is itself Triton");
    if (!rc && why.len) {
        struct mp_buf nb;
        mp_buf_init(&nb, 0);
        rc = mp_buf_printf(&nb, "%s%s", r->notes ? r->notes : "",
                           r->notes ? why.data : why.data + 2);
        if (!rc)
            rc = set_s(&r->notes, mp_buf_cstr(&nb));
        mp_buf_fini(&nb);
    }
    mp_buf_fini(&why);
    return rc;
}
