/* Kernel discovery (Magpie's discover_kernels, `magpie discover`): one walk
 * over a project tree collects kernel sources, executables, Python test
 * scripts and YAML configs; then each source file gets its kernels, the
 * executables and scripts that may run them (ranked by name), a sibling
 * reference implementation, the YAML configs that already name it, and a
 * suggested analyze configuration.
 *
 * Kernels are found lexically, after comments and string literals are
 * blanked out: CUDA/HIP `__global__` functions with a body (declarations
 * and `__launch_bounds__`/attribute groups are skipped), OpenCL
 * `__kernel`/`kernel` functions in .cl files, and Python functions under a
 * `@triton.jit` / `@triton.autotune` / `@triton.heuristics` decorator stack
 * (or `@jit` when the file imports jit from triton). A file is HIP when its
 * extension is .hip or it includes a hip/ header, CUDA for .cu/.cuh or
 * cuda headers. Which languages, extensions, keywords and decorators is the
 * kernel language table's (mp_kernel_lang: exts, scan, keywords,
 * py_module, py_decorator); the HIP/CUDA choice by headers is the one rule
 * here that names languages (hipified sources are both). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/config.h>
#include <magpie/fmt.h>
#include <magpie/kernel_discover.h>

#define DISC_MAX_FILE ((size_t)8 << 20) /* larger sources are not read */
#define DISC_MAX_BINARIES 10
#define DISC_MAX_DEPTH 32

unsigned mp_disc_type_mask(const char *name)
{
    unsigned all = 0;
    for (int i = 0; name && i < mp_kernel_lang_count(); i++) {
        const struct mp_kernel_lang *l = mp_kernel_lang_get((enum mp_kernel_type)i);
        if (!strcmp(name, l->name))
            return l->disc_bit;
        all |= l->disc_bit;
    }
    return name && !strcmp(name, "all") ? all : 0;
}

struct strv {
    char **v;
    size_t n, cap;
};

static int strv_push(struct strv *s, const char *p)
{
    if (MP_GROW(s->v, s->cap, s->n + 1, 32))
        return MP_ENOMEM;
    s->v[s->n] = mp_strdup(p);
    if (!s->v[s->n])
        return MP_ENOMEM;
    s->n++;
    return 0;
}

static void strv_fini(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

struct walk {
    const struct mp_disc_opts *o;
    size_t max_files, seen;
    bool truncated;
    struct strv sources; /* relative paths of candidate source files */
    struct strv execs;   /* relative paths of ELF executables */
    struct strv scripts; /* relative paths of .py files (Triton test scripts) */
    struct strv yamls;   /* relative paths of .yaml/.yml files */
    char **yaml_text;    /* their text, read on first use (NULL: unreadable) */
    bool yaml_loaded;
};

static bool name_in(const char *n, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(n, *list))
            return true;
    return false;
}

static const char *const test_dirs[] = {"test", "tests", "testing", "unittest", "unittests", NULL};
static const char *const example_dirs[] = {"example", "examples", "sample", "samples",
                                           "demo",    "demos",    NULL};
static const char *const skip_dirs[] = {"__pycache__", "node_modules", "CMakeFiles", NULL};

static const char *ext_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : "";
}

static bool is_elf_exec(const char *path, const struct stat *st)
{
    if (!(st->st_mode & S_IXUSR) || st->st_size < 64)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char h[18];
    ssize_t got = read(fd, h, sizeof(h));
    close(fd);
    if (got != (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4) != 0)
        return false;
    /* e_type (little endian): 2 executable, 3 shared object / PIE */
    unsigned type = h[16] | (unsigned)h[17] << 8;
    if (type == 2)
        return true;
    const char *e = ext_of(path);
    return type == 3 && strcmp(e, "so") != 0 && strstr(path, ".so.") == NULL && strcmp(e, "o") != 0;
}

static int walk_dir(struct walk *w, const char *abs, const char *rel, int depth)
{
    if (depth > DISC_MAX_DEPTH)
        return 0;
    DIR *dir = opendir(abs);
    if (!dir)
        return 0; /* unreadable directories are skipped */
    struct dirent *de;
    int rc = 0;
    /* sorted for a deterministic order */
    struct strv names = {0};
    while ((de = readdir(dir)) != NULL && !rc) {
        if (de->d_name[0] == '.')
            continue;
        rc = strv_push(&names, de->d_name);
    }
    closedir(dir);
    for (size_t i = 1; i < names.n; i++)
        for (size_t j = i; j > 0 && strcmp(names.v[j - 1], names.v[j]) > 0; j--) {
            char *t = names.v[j];
            names.v[j] = names.v[j - 1];
            names.v[j - 1] = t;
        }
    for (size_t i = 0; i < names.n && !rc; i++) {
        const char *n = names.v[i];
        if (w->seen >= w->max_files) {
            w->truncated = true;
            break;
        }
        char *a = mp_fs_join(abs, n);
        char *r = rel[0] ? mp_fs_join(rel, n) : mp_strdup(n);
        struct stat st;
        if (!a || !r) {
            rc = MP_ENOMEM;
        } else if (lstat(a, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                bool skip = name_in(n, skip_dirs) ||
                            (!w->o->include_tests && name_in(n, test_dirs)) ||
                            (!w->o->include_examples && name_in(n, example_dirs));
                if (!skip)
                    rc = walk_dir(w, a, r, depth + 1);
            } else if (S_ISREG(st.st_mode)) {
                w->seen++;
                const char *e = ext_of(n);
                const struct mp_kernel_lang *l = mp_kernel_lang_by_ext(e);
                if (l && l->scan == MP_KLANG_SCAN_PY) /* test scripts and kernels */
                    rc = strv_push(&w->scripts, r);
                else if (l)
                    rc = strv_push(&w->sources, r);
                else if (!strcmp(e, "yaml") || !strcmp(e, "yml"))
                    rc = strv_push(&w->yamls, r);
                else if (is_elf_exec(a, &st))
                    rc = strv_push(&w->execs, r);
            }
        }
        free(a);
        free(r);
    }
    strv_fini(&names);
    return rc;
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, DISC_MAX_FILE);
    int rc = mp_buf_read_file(&b, f);
    fclose(f);
    if (rc) {
        mp_buf_fini(&b);
        return NULL;
    }
    *len = b.len;
    mp_buf_cstr(&b);
    return b.data;
}

/* Blanks C comments, string and character literals (newlines kept). */
static void blank_c(char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                s[i++] = ' ';
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            s[i] = s[i + 1] = ' ';
            for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
                if (s[i] != '\n')
                    s[i] = ' ';
            if (i < n)
                s[i] = ' ';
            if (i + 1 < n)
                s[++i] = ' ';
        } else if (s[i] == '"' || s[i] == '\'') {
            char q = s[i++];
            for (; i < n && s[i] != q && s[i] != '\n'; i++) {
                if (s[i] == '\\' && i + 1 < n)
                    s[i++] = ' ';
                s[i] = ' ';
            }
        }
    }
}

static bool is_id(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static long line_of(const char *s, size_t pos)
{
    long l = 1;
    for (size_t i = 0; i < pos; i++)
        l += s[i] == '\n';
    return l;
}

struct fns {
    struct mp_disc_fn *v;
    size_t n, cap;
};

static int fns_push(struct fns *f, const char *name, size_t len, long line)
{
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->v[i].name) == len && !memcmp(f->v[i].name, name, len))
            return 0; /* overloads and template specialisations: listed once */
    if (MP_GROW(f->v, f->cap, f->n + 1, 8))
        return MP_ENOMEM;
    f->v[f->n].name = malloc(len + 1);
    if (!f->v[f->n].name)
        return MP_ENOMEM;
    memcpy(f->v[f->n].name, name, len);
    f->v[f->n].name[len] = 0;
    f->v[f->n].line = line;
    f->n++;
    return 0;
}

/* Skips a balanced (...) group starting at s[i] == '('; returns the index
 * after it, or n. */
static size_t skip_parens(const char *s, size_t n, size_t i)
{
    int depth = 0;
    for (; i < n; i++) {
        if (s[i] == '(')
            depth++;
        else if (s[i] == ')' && --depth == 0)
            return i + 1;
    }
    return n;
}

/* After the keyword at s[k..k+kl): the function name before its parameter
 * list, when the declaration has a body. */
static int scan_c_after(const char *s, size_t n, size_t i, struct fns *out, const char *text)
{
    const char *name = NULL;
    size_t name_len = 0, name_pos = 0;
    while (i < n) {
        char c = s[i];
        if (c == ';' || c == '{' || c == '}' || c == '#')
            return 0;   /* no parameter list: a variable or a macro */
        if (c == '<') { /* template arguments of the return type */
            int depth = 0;
            for (; i < n; i++) {
                if (s[i] == '<')
                    depth++;
                else if (s[i] == '>' && --depth == 0)
                    break;
                else if (s[i] == ';' || s[i] == '{')
                    return 0;
            }
            i++;
            continue;
        }
        if (is_id(c)) {
            size_t st = i;
            while (i < n && is_id(s[i]))
                i++;
            name = s + st;
            name_len = i - st;
            name_pos = st;
            continue;
        }
        if (c == '(') {
            size_t after = skip_parens(s, n, i);
            bool attr = name && ((name_len == 17 && !memcmp(name, "__launch_bounds__", 17)) ||
                                 (name_len == 13 && !memcmp(name, "__attribute__", 13)) ||
                                 (name_len == 7 && !memcmp(name, "alignas", 7)));
            if (attr || !name) {
                name = NULL;
                i = after;
                continue;
            }
            /* the parameter list: a body must follow (qualifiers allowed) */
            size_t j = after;
            while (j < n && s[j] != '{' && s[j] != ';' && s[j] != '(' && s[j] != '=')
                j++;
            if (j < n && s[j] == '{' && !(name[0] >= '0' && name[0] <= '9'))
                return fns_push(out, name, name_len, line_of(text, name_pos));
            return 0;
        }
        if (c == ':' && i + 1 < n && s[i + 1] == ':') { /* qualified name */
            i += 2;
            continue;
        }
        i++;
    }
    return 0;
}

static bool kw_at(const char *s, size_t n, size_t i, const char *kw)
{
    size_t kl = strlen(kw);
    return i + kl <= n && !memcmp(s + i, kw, kl) && (i == 0 || !is_id(s[i - 1])) &&
           (i + kl == n || !is_id(s[i + kl]));
}

/* The kernels of C-like text s (blanked) of row l: functions after one of
 * its keywords; main() sets has_main. */
static int scan_c(const char *text, char *s, size_t n, const struct mp_kernel_lang *l,
                  struct fns *out, bool *has_main)
{
    bool first[256] = {['m'] = true}; /* a keyword or main may start here */
    for (const char *const *kw = l->keywords; kw && *kw; kw++)
        first[(unsigned char)**kw] = true;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!first[(unsigned char)s[i]])
            continue;
        if (kw_at(s, n, i, "main")) {
            size_t j = i + 4;
            while (j < n && (s[j] == ' ' || s[j] == '\t'))
                j++;
            if (j < n && s[j] == '(' && i > 0) {
                size_t b = i;
                while (b > 0 && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\n'))
                    b--;
                if (b >= 3 && !memcmp(s + b - 3, "int", 3))
                    *has_main = true;
            }
            continue;
        }
        size_t kl = 0;
        for (const char *const *kw = l->keywords; kw && *kw && !kl; kw++)
            if (kw_at(s, n, i, *kw))
                kl = strlen(*kw);
        if (!kl)
            continue;
        /* a macro body is not a definition */
        size_t ls = i;
        while (ls > 0 && s[ls - 1] != '\n')
            ls--;
        while (ls < i && (s[ls] == ' ' || s[ls] == '\t'))
            ls++;
        if (s[ls] == '#')
            continue;
        rc = scan_c_after(s, n, i + kl, out, text);
    }
    return rc;
}

static bool line_starts(const char *p, const char *end, const char *word)
{
    size_t wl = strlen(word);
    return (size_t)(end - p) >= wl && !memcmp(p, word, wl);
}

/* Whether the line q..le starts with word w followed by a non-identifier
 * character or its end. */
static bool word_starts(const char *q, const char *le, const char *w)
{
    size_t wl = strlen(w);
    return line_starts(q, le, w) && (q + wl >= le || !is_id(q[wl]));
}

/* The kernels of Python text s of row l: functions under a decorator stack
 * holding @<py_module>.<py_decorator> (or @<py_decorator> when the file
 * imports it from py_module); other @<py_module>. decorators only wrap one
 * (Triton's autotune and heuristics). */
static int scan_py(const char *s, size_t n, const struct mp_kernel_lang *l, struct fns *out,
                   bool *has_main)
{
    char from[128], deco[128], bare[64], stack[64];
    snprintf(from, sizeof(from), "from %s import", l->py_module);
    snprintf(deco, sizeof(deco), "@%s.%s", l->py_module, l->py_decorator);
    snprintf(bare, sizeof(bare), "@%s", l->py_decorator);
    snprintf(stack, sizeof(stack), "@%s.", l->py_module);
    bool jit_imported = strstr(s, from) != NULL && strstr(s, l->py_decorator) != NULL;
    bool in_deco = false, jit = false;
    long line = 0;
    const char *p = s, *end = s + n;
    int rc = 0;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t'))
            q++;
        if (line_starts(q, le, "if __name__") && memmem(q, (size_t)(le - q), "__main__", 8))
            *has_main = true;
        if (*q == '@') {
            /* a decorator stack is a kernel when it holds triton.jit (autotune
             * and heuristics alone only wrap one) */
            bool j = word_starts(q, le, deco) || (jit_imported && word_starts(q, le, bare));
            if (j || line_starts(q, le, stack))
                in_deco = true;
            jit |= j;
        } else if (line_starts(q, le, "def ") || line_starts(q, le, "async def ")) {
            const char *a = q + (q[0] == 'a' ? 10 : 4);
            while (a < le && *a == ' ')
                a++;
            const char *b = a;
            while (b < le && is_id(*b))
                b++;
            if (in_deco && jit && b > a)
                rc = fns_push(out, a, (size_t)(b - a), line);
            in_deco = jit = false;
        }
        p = nl ? nl + 1 : end;
    }
    return rc;
}

/* Whether text includes a HIP header outside any #if/#ifdef/#else branch
 * that names ROCm or HIP (shared CUDA/ROCm sources pull HIP headers in only
 * under #ifdef USE_ROCM). */
static bool unguarded_hip_include(const char *text)
{
    int depth = 0;
    unsigned long rocm_mask = 0; /* bit i: open conditional i mentions ROCm/HIP */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        if (*q == '#') {
            q++;
            while (q < p + n && (*q == ' ' || *q == '\t'))
                q++;
            size_t rest = n - (size_t)(q - p);
            char line[256];
            snprintf(line, sizeof(line), "%.*s", (int)(rest < 255 ? rest : 255), q);
            bool mentions = strstr(line, "ROCM") || strstr(line, "HIP") || strstr(line, "hip");
            if (!strncmp(line, "if", 2)) {
                if (depth < 63 && mentions)
                    rocm_mask |= 1UL << depth;
                depth++;
            } else if (!strncmp(line, "el", 2) && depth > 0) {
                /* #else / #elif of a ROCm test is still ROCm-specific (or its
                 * CUDA side, which holds no HIP include) */
                if (mentions && depth - 1 < 63)
                    rocm_mask |= 1UL << (depth - 1);
            } else if (!strncmp(line, "endif", 5) && depth > 0) {
                depth--;
                if (depth < 63)
                    rocm_mask &= ~(1UL << depth);
            } else if (!strncmp(line, "include", 7) &&
                       (strstr(line, "<hip/") || strstr(line, "\"hip/"))) {
                if (rocm_mask == 0)
                    return true;
            }
        }
        p = nl ? nl + 1 : p + n;
    }
    return false;
}

/* The row of a C-like source: its extension's (by_ext), except that a
 * source of CUDA's extensions (or of none: a file given alone) is HIP or
 * CUDA by its headers, since hipified sources are both */
static const struct mp_kernel_lang *classify_c(const struct mp_kernel_lang *by_ext,
                                               const char *text)
{
    const struct mp_kernel_lang *hipl = mp_kernel_lang_get(MP_KERNEL_HIP);
    const struct mp_kernel_lang *cudal = mp_kernel_lang_get(MP_KERNEL_CUDA);
    if (by_ext && by_ext != cudal)
        return by_ext;
    /* HIP when it includes HIP headers unconditionally and no CUDA toolkit
     * header (torch's ATen/cuda headers are hipified on ROCm, so they decide
     * nothing); otherwise CUDA, the language of most __global__ code */
    bool hip = unguarded_hip_include(text) || strstr(text, "hipLaunchKernelGGL");
    bool cuda = strstr(text, "#include <cuda") || strstr(text, "#include <cub/") ||
                strstr(text, "#include <cutlass/") || strstr(text, "#include \"cutlass/") ||
                strstr(text, "#include <cooperative_groups");
    /* AMD GPU builtins outside a USE_ROCM build switch: a ROCm-only source
     * even when it includes hipified CUDA headers */
    if (strstr(text, "__builtin_amdgcn") && !strstr(text, "USE_ROCM"))
        return hipl;
    return hip && !cuda ? hipl : cudal;
}

static void stem_of(const char *rel, char *out, size_t cap)
{
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    snprintf(out, cap, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = 0;
}

static const char *base_of(const char *rel)
{
    const char *b = strrchr(rel, '/');
    return b ? b + 1 : rel;
}

static void dir_of(const char *rel, char *out, size_t cap)
{
    snprintf(out, cap, "%s", rel);
    char *sl = strrchr(out, '/');
    if (sl)
        *sl = 0;
    else
        out[0] = 0;
}

/* How well a candidate runner (executable or script) matches the source:
 * 4 same stem in the same directory, 3 same stem, 2 stem with a test /
 * bench affix, 1 a kernel's name in it; 0 no match. */
static int match_score(const char *cand_rel, const char *src_rel, const char *stem,
                       const struct fns *k, bool script)
{
    char cs[512], cd[512], sd[512];
    stem_of(cand_rel, cs, sizeof(cs));
    dir_of(cand_rel, cd, sizeof(cd));
    dir_of(src_rel, sd, sizeof(sd));
    if (script && !strcmp(cand_rel, src_rel))
        return 0;
    if (!strcmp(cs, stem) && !script) /* a script of the same name is another implementation */
        return (!strcmp(cd, sd) ? 4 : 3);
    /* generic module names say nothing about the kernel */
    static const char *const generic[] = {"common",  "utils",  "util", "ops",
                                          "kernels", "kernel", "base", "__init__",
                                          "helpers", "main",   NULL};
    if (name_in(stem, generic))
        return 0;
    size_t sl = strlen(stem);
    if (sl >= 3 && strstr(cs, stem)) {
        bool affix = strstr(cs, "test") || strstr(cs, "bench") || strstr(cs, "run");
        if (affix || !script)
            return 2;
    }
    for (size_t i = 0; i < k->n; i++)
        if (strlen(k->v[i].name) >= 4 && strstr(cs, k->v[i].name) &&
            (!script || strstr(cs, "test") || strstr(cs, "bench")))
            return 1;
    return 0;
}

struct cand {
    const char *rel;
    int score;
};

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->score != y->score)
        return y->score - x->score;
    return strcmp(x->rel, y->rel);
}

/* A sibling reference: <stem>_ref.<ext>, else the stem cut at each '_'
 * from the right (vadd_slow.cu -> vadd_ref.cu). */
static char *find_reference(const char *root, const char *rel)
{
    char stem[512], dir[1024];
    stem_of(rel, stem, sizeof(stem));
    dir_of(rel, dir, sizeof(dir));
    const char *ext = ext_of(base_of(rel));
    size_t sl = strlen(stem);
    if (sl > 4 && !strcmp(stem + sl - 4, "_ref"))
        return NULL; /* it is a reference itself */
    for (;;) {
        char name[1200], *p;
        int nn = snprintf(name, sizeof(name), "%s%s%s_ref.%s", dir, dir[0] ? "/" : "", stem, ext);
        if (nn < 0 || (size_t)nn >= sizeof(name))
            return NULL; /* a path that long has no reference beside it here */
        p = mp_fs_join(root, name);
        if (p && mp_fs_exists(p))
            return p;
        free(p);
        char *us = strrchr(stem, '_');
        if (!us || us == stem)
            return NULL;
        *us = 0;
    }
}

/* A Python file's kernels: those of the first Python row of the types
 * asked for (its extension, its module named in the file) that has some */
static int scan_py_rows(const char *text, size_t len, const char *ext, unsigned types,
                        struct fns *k, bool *has_main, const struct mp_kernel_lang **type)
{
    int rc = 0;
    for (int i = 0; i < mp_kernel_lang_count() && k->n == 0 && !rc; i++) {
        const struct mp_kernel_lang *l = mp_kernel_lang_get((enum mp_kernel_type)i);
        if (l->scan != MP_KLANG_SCAN_PY || !(l->disc_bit & types) || !name_in(ext, l->exts))
            continue;
        *type = l;
        if (strstr(text, l->py_module))
            rc = scan_py(text, len, l, k, has_main);
    }
    return rc;
}

/* the kernels a source file defines, its language and whether it has a
 * main; an unreadable or too large file has none */
static int scan_file(const char *abs, const char *rel, unsigned types, struct fns *k,
                     bool *has_main, const struct mp_kernel_lang **type)
{
    size_t len = 0;
    char *text = read_text(abs, &len);
    if (!text)
        return 0; /* unreadable or too large: skipped */
    const char *ext = ext_of(base_of(rel));
    const struct mp_kernel_lang *l = mp_kernel_lang_by_ext(ext);
    int rc = 0;
    if (l && l->scan == MP_KLANG_SCAN_PY) {
        rc = scan_py_rows(text, len, ext, types, k, has_main, type);
    } else {
        char *s = malloc(len + 1);
        if (!s) {
            free(text);
            return MP_ENOMEM;
        }
        memcpy(s, text, len + 1);
        blank_c(s, len);
        *type = classify_c(l, text);
        rc = scan_c(text, s, len, *type, k, has_main);
        free(s);
    }
    free(text);
    return rc;
}

/* runners: executables for compiled kernels, scripts for Python ones
 * (Triton), best match first */
static int entry_binaries(struct walk *w, const char *root, bool root_is_file, const char *rel,
                          const char *stem, const struct fns *k, bool py, struct mp_disc_entry *e)
{
    const struct strv *pool = py ? &w->scripts : &w->execs;
    struct cand *cs = calloc(pool->n ? pool->n : 1, sizeof(*cs));
    if (!cs)
        return MP_ENOMEM;
    size_t nc = 0;
    for (size_t i = 0; i < pool->n; i++) {
        int sc = match_score(pool->v[i], rel, stem, k, py);
        if (sc > 0)
            cs[nc++] = (struct cand){pool->v[i], sc};
    }
    qsort(cs, nc, sizeof(*cs), cmp_cand);
    size_t nb = nc < DISC_MAX_BINARIES ? nc : DISC_MAX_BINARIES;
    e->binaries = calloc(nb ? nb : 1, sizeof(char *));
    if (!e->binaries) {
        free(cs);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++) {
        e->binaries[i] = root_is_file ? mp_strdup(cs[i].rel) : mp_fs_join(root, cs[i].rel);
        if (!e->binaries[i]) {
            free(cs);
            return MP_ENOMEM;
        }
        e->n_binaries++;
    }
    free(cs);
    return 0;
}

/* YAML configs that name this source (by relative path or file name) */
static int entry_configs(struct walk *w, const char *root, const char *rel, struct mp_disc_entry *e)
{
    const char *bn = base_of(rel);
    e->configs = calloc(w->yamls.n ? w->yamls.n : 1, sizeof(char *));
    if (!e->configs)
        return MP_ENOMEM;
    if (!w->yaml_loaded) {
        w->yaml_loaded = true;
        w->yaml_text = calloc(w->yamls.n ? w->yamls.n : 1, sizeof(char *));
        if (!w->yaml_text)
            return MP_ENOMEM;
        for (size_t i = 0; i < w->yamls.n; i++) {
            char *yp = mp_fs_join(root, w->yamls.v[i]);
            size_t yl = 0;
            w->yaml_text[i] = yp ? read_text(yp, &yl) : NULL;
            free(yp);
        }
    }
    for (size_t i = 0; i < w->yamls.n; i++) {
        const char *y = w->yaml_text[i];
        char *yp = mp_fs_join(root, w->yamls.v[i]);
        if (!yp)
            return MP_ENOMEM;
        if (y && (strstr(y, rel) || strstr(y, bn))) {
            /* a file name alone counts only next to the source */
            char yd[1024], rd[1024];
            dir_of(w->yamls.v[i], yd, sizeof(yd));
            dir_of(rel, rd, sizeof(rd));
            if (strstr(y, rel) || !strcmp(yd, rd)) {
                e->configs[e->n_configs++] = yp;
                yp = NULL;
            }
        }
        free(yp);
    }
    return 0;
}

/* the suggested analyze configuration of a source of row l: testcase and
 * compile commands */
static int entry_commands(struct mp_disc_entry *e, const struct mp_kernel_lang *l, bool has_main,
                          const char *stem, const char *bn)
{
    int rc = 0;
    struct mp_buf t, c;
    mp_buf_init(&t, 0);
    mp_buf_init(&c, 0);
    const char *first_bin = e->n_binaries ? e->binaries[0] : NULL;
    if (l->scan == MP_KLANG_SCAN_PY) {
        if (first_bin)
            rc = mp_buf_printf(&t, "python3 %s", first_bin);
        else if (has_main)
            rc = mp_buf_printf(&t, "python3 %s", e->source_file);
    } else if (first_bin) {
        rc = mp_buf_puts(&t, first_bin);
    } else if (has_main && l->compiler) {
        /* a self-contained program: compile it (its directory's Makefile
         * when there is one), then run it */
        char mk[1200];
        snprintf(mk, sizeof(mk), "%s/Makefile", e->working_dir);
        rc = mp_fs_exists(mk) ? mp_buf_puts(&c, "make")
                              : mp_buf_printf(&c, "%s -O3 -o %s %s", l->compiler, stem, bn);
        rc = rc ? rc : mp_buf_printf(&t, "./%s", stem);
    }
    e->testcase_command = t.len ? t.data : mp_strdup("");
    e->compile_command = c.len ? c.data : mp_strdup("");
    if (!t.len)
        mp_buf_fini(&t);
    if (!c.len)
        mp_buf_fini(&c);
    if (!rc && (!e->testcase_command || !e->compile_command))
        rc = MP_ENOMEM;
    return rc;
}

static int build_entry(struct walk *w, const char *root, bool root_is_file, const char *rel,
                       struct mp_disc_result *res)
{
    char *abs = root_is_file ? mp_strdup(root) : mp_fs_join(root, rel);
    if (!abs)
        return MP_ENOMEM;
    const struct mp_kernel_lang *l = NULL;
    struct fns k = {0};
    bool has_main = false;
    int rc = scan_file(abs, rel, w->o->types, &k, &has_main, &l);
    if (rc || k.n == 0 || !(l->disc_bit & w->o->types)) {
        for (size_t i = 0; i < k.n; i++)
            free(k.v[i].name);
        free(k.v);
        free(abs);
        return rc;
    }
    struct mp_disc_entry *nv = mp_reallocarray(res->e, res->n + 1, sizeof(*nv));
    if (!nv) {
        for (size_t i = 0; i < k.n; i++)
            free(k.v[i].name);
        free(k.v);
        free(abs);
        return MP_ENOMEM;
    }
    res->e = nv;
    struct mp_disc_entry *e = &res->e[res->n++];
    memset(e, 0, sizeof(*e));
    e->source_file = abs;
    e->rel = mp_strdup(rel);
    e->type = l->name;
    e->kernels = k.v;
    e->n_kernels = k.n;
    e->has_main = has_main;
    char stem[512], sdir[1024];
    stem_of(rel, stem, sizeof(stem));
    dir_of(abs, sdir, sizeof(sdir));
    e->working_dir = mp_strdup(sdir[0] ? sdir : ".");
    if (!e->rel || !e->working_dir)
        return MP_ENOMEM;
    rc = entry_binaries(w, root, root_is_file, rel, stem, &k, l->scan == MP_KLANG_SCAN_PY, e);
    if (rc)
        return rc;
    e->reference = root_is_file ? NULL : find_reference(root, rel);
    if ((rc = entry_configs(w, root, rel, e)))
        return rc;
    return entry_commands(e, l, has_main, stem, base_of(rel));
}

/* the discovery bits of the Python rows */
static unsigned py_bits(void)
{
    unsigned b = 0;
    for (int i = 0; i < mp_kernel_lang_count(); i++) {
        const struct mp_kernel_lang *l = mp_kernel_lang_get((enum mp_kernel_type)i);
        b |= l->scan == MP_KLANG_SCAN_PY ? l->disc_bit : 0;
    }
    return b;
}

int mp_discover_kernels(const char *root, const struct mp_disc_opts *o, struct mp_disc_result *out,
                        struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    if (!o->types) {
        char names[512];
        mp_kernel_lang_list(names, sizeof(names), true, "all");
        return mp_diag_set(d, MP_EINVAL, "kernel_type must be %s", names);
    }
    struct stat st;
    if (!root || stat(root, &st) != 0) {
        mp_diag_set(d, MP_ENOTFOUND, "project path not found: %s", root ? root : "(null)");
        mp_diag_set_file(d, root ? root : "");
        return MP_ENOTFOUND;
    }
    struct walk w = {.o = o, .max_files = o->max_files ? o->max_files : 200000};
    int rc = 0;
    bool is_file = S_ISREG(st.st_mode);
    if (is_file) {
        rc = strv_push(&w.sources, root);
        w.seen = 1;
    } else {
        rc = walk_dir(&w, root, "", 0);
    }
    for (size_t i = 0; i < w.sources.n && !rc; i++)
        rc = build_entry(&w, root, is_file, w.sources.v[i], out);
    /* Python kernels (Triton) live in .py files, collected as scripts */
    if (o->types & py_bits())
        for (size_t i = 0; i < w.scripts.n && !rc; i++)
            rc = build_entry(&w, root, is_file, w.scripts.v[i], out);
    out->files_scanned = w.seen;
    out->truncated = w.truncated;
    strv_fini(&w.sources);
    strv_fini(&w.execs);
    strv_fini(&w.scripts);
    for (size_t i = 0; w.yaml_text && i < w.yamls.n; i++)
        free(w.yaml_text[i]);
    free(w.yaml_text);
    strv_fini(&w.yamls);
    if (rc) {
        mp_disc_result_fini(out);
        return mp_diag_set(d, rc, "out of memory");
    }
    return 0;
}

void mp_disc_result_fini(struct mp_disc_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct mp_disc_entry *e = &r->e[i];
        free(e->source_file);
        free(e->rel);
        for (size_t j = 0; j < e->n_kernels; j++)
            free(e->kernels[j].name);
        free(e->kernels);
        for (size_t j = 0; j < e->n_binaries; j++)
            free(e->binaries[j]);
        free(e->binaries);
        free(e->reference);
        for (size_t j = 0; j < e->n_configs; j++)
            free(e->configs[j]);
        free(e->configs);
        free(e->testcase_command);
        free(e->compile_command);
        free(e->working_dir);
    }
    free(r->e);
    memset(r, 0, sizeof(*r));
}

static int jstr(struct mp_buf *b, const char *s)
{
    return s ? mp_json_str(b, s, strlen(s)) : mp_buf_puts(b, "null");
}

int mp_disc_json(const struct mp_disc_result *r, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "[");
    for (size_t i = 0; i < r->n && !rc; i++) {
        const struct mp_disc_entry *e = &r->e[i];
        rc = mp_buf_puts(b, i ? ",\n {\"source_file\": " : "\n {\"source_file\": ");
        rc = rc ? rc : jstr(b, e->source_file);
        rc = rc ? rc : mp_buf_puts(b, ", \"possible_binaries\": [");
        for (size_t j = 0; j < e->n_binaries && !rc; j++) {
            rc = j ? mp_buf_puts(b, ", ") : 0;
            rc = rc ? rc : jstr(b, e->binaries[j]);
        }
        rc = rc ? rc : mp_buf_puts(b, "], \"suggested_config\": {\"kernel_path\": ");
        rc = rc ? rc : jstr(b, e->source_file);
        rc = rc ? rc : mp_buf_puts(b, ", \"kernel_type\": ");
        rc = rc ? rc : jstr(b, e->type);
        rc = rc ? rc : mp_buf_puts(b, ", \"testcase_command\": ");
        rc = rc ? rc : jstr(b, e->testcase_command);
        rc = rc ? rc : mp_buf_puts(b, ", \"working_dir\": ");
        rc = rc ? rc : jstr(b, e->working_dir);
        rc = rc ? rc : mp_buf_puts(b, ", \"compile_command\": ");
        rc = rc ? rc : jstr(b, e->compile_command);
        /* without a testcase, magpie's C harness (OpenCL, CUDA) or the
         * reference mode needs the entry point */
        if (!rc && !e->testcase_command[0] && e->n_kernels) {
            rc = mp_buf_puts(b, ", \"kernel_name\": ");
            rc = rc ? rc : jstr(b, e->kernels[0].name);
        }
        if (!rc && e->reference) {
            rc = mp_buf_puts(b, ", \"reference\": ");
            rc = rc ? rc : jstr(b, e->reference);
        }
        rc = rc ? rc : mp_buf_puts(b, "}, \"kernel_type\": ");
        rc = rc ? rc : jstr(b, e->type);
        rc = rc ? rc : mp_buf_puts(b, ", \"kernels\": [");
        for (size_t j = 0; j < e->n_kernels && !rc; j++) {
            rc = mp_buf_puts(b, j ? ", {\"name\": " : "{\"name\": ");
            rc = rc ? rc : jstr(b, e->kernels[j].name);
            rc = rc ? rc : mp_buf_printf(b, ", \"line\": %ld}", e->kernels[j].line);
        }
        rc = rc ? rc
                : mp_buf_printf(b, "], \"runs_standalone\": %s, \"configs\": [",
                                e->has_main ? "true" : "false");
        for (size_t j = 0; j < e->n_configs && !rc; j++) {
            rc = j ? mp_buf_puts(b, ", ") : 0;
            rc = rc ? rc : jstr(b, e->configs[j]);
        }
        rc = rc ? rc : mp_buf_puts(b, "]}");
    }
    return rc ? rc : mp_buf_puts(b, r->n ? "\n]" : "]");
}
