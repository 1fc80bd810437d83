/* Rank discovery in a trace directory, following Magpie's gap analysis:
 * vLLM writes `<name>-rank-<N>.<pid>.pt.trace.json.gz`, ATOM writes per-rank
 * `rank_<N>/` folders, and some launchers put the TP rank in a folder name
 * (`pp0_dp2_tp3`). CUDA-graph warm-up snapshots under `capture_traces/` are
 * not part of the measured run and are skipped unless nothing else exists. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <magpie/trace.h>

/* mp_grow doubles from 64: the 65537th file would need more than the
 * 100000 entries allowed before, so 65536 is the most */
#define MAX_FILES 65536
#define MAX_DEPTH 16

static int each_file(const char *dir, int depth, bool capture, bool hidden, mp_trace_file_fn fn,
                     void *user)
{
    if (depth > MAX_DEPTH)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return depth == 0 ? MP_ENOTFOUND : 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (hidden ? !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") : e->d_name[0] == '.')
            continue;
        char path[4096];
        int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            rc = each_file(path, depth + 1, capture || strcmp(e->d_name, "capture_traces") == 0,
                           hidden, fn, user);
        else if (S_ISREG(st.st_mode) &&
                 (mp_str_ends_with(e->d_name, ".json") || mp_str_ends_with(e->d_name, ".json.gz")))
            rc = fn(path, capture, user);
    }
    closedir(d);
    return rc;
}

int mp_trace_files_each(const char *dir, bool with_hidden, mp_trace_file_fn fn, void *user)
{
    return each_file(dir, 0, false, with_hidden, fn, user);
}

struct found {
    char *path;
    bool capture; /* under a capture_traces directory */
};

struct walk {
    struct found *v;
    size_t n, cap;
};

static int add_found(const char *path, bool capture, void *user)
{
    struct walk *w = user;
    if (w->n >= MAX_FILES || MP_GROW(w->v, w->cap, w->n + 1, 64))
        return MP_ENOMEM;
    if (!(w->v[w->n].path = mp_strdup(path)))
        return MP_ENOMEM;
    w->v[w->n++].capture = capture;
    return 0;
}

/* Parses digits at s; returns -1 when there are none. */
static long digits_at(const char *s, const char **endp)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    if (endp)
        *endp = end;
    return v > 1000000 ? -1 : v;
}

/* Rank from "-rank-<N>." in the file name, else from a directory component
 * "rank_<N>" / "rank-<N>" / "rank<N>", else from "_tp<N>" in a component. */
static int extract_rank(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char *s = base; (s = strstr(s, "-rank-")) != NULL; s++) {
        const char *end;
        long r = digits_at(s + 6, &end);
        if (r >= 0 && *end == '.')
            return (int)r;
    }
    /* walk directory components from the innermost outwards */
    size_t blen = (size_t)(base - path);
    char dirs[4096];
    if (blen >= sizeof(dirs))
        return -1;
    memcpy(dirs, path, blen);
    dirs[blen] = '\0';
    while (blen > 0 && dirs[blen - 1] == '/')
        dirs[--blen] = '\0';
    while (blen > 0) {
        char *slash = strrchr(dirs, '/');
        const char *comp = slash ? slash + 1 : dirs;
        if (strncmp(comp, "rank", 4) == 0) {
            const char *s = comp + 4;
            if (*s == '_' || *s == '-')
                s++;
            const char *end;
            long r = digits_at(s, &end);
            if (r >= 0 && *end == '\0')
                return (int)r;
        }
        for (const char *s = comp; (s = strstr(s, "_tp")) != NULL; s++) {
            const char *end;
            long r = digits_at(s + 3, &end);
            if (r >= 0 && (*end == '\0' || *end == '_' || *end == '-' || *end == '.'))
                return (int)r;
        }
        if (!slash)
            break;
        *slash = '\0';
        blen = (size_t)(slash - dirs);
    }
    return -1;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path);
}

static int cmp_rank(const void *a, const void *b)
{
    const struct mp_trace_rank_file *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Moves the matching files into out; returns how many. Ranks are read from
 * the part of the path below the searched root only: a folder above it named
 * like a rank says nothing about the files inside. */
static size_t take(struct walk *w, struct mp_trace_rank_list *out, bool capture, const char *suffix,
                   bool need_rank, size_t root_len)
{
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++) {
        struct found *f = &w->v[i];
        if (!f->path || f->capture != capture || (suffix && !mp_str_ends_with(f->path, suffix)))
            continue;
        int rank = extract_rank(f->path + root_len);
        if (need_rank && rank < 0)
            continue;
        out->files[out->n].rank = need_rank ? rank : (int)out->n;
        out->files[out->n].path = f->path;
        f->path = NULL;
        out->n++;
        k++;
    }
    return k;
}

int mp_trace_find_ranks(const char *dir, struct mp_trace_rank_list *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    char base[4096];
    snprintf(base, sizeof(base), "%s", dir);
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/')
        base[--bl] = '\0';
    if (!mp_fs_is_dir(base)) {
        mp_diag_set_file(d, dir);
        return mp_diag_set(d, mp_fs_exists(base) ? MP_EINVAL : MP_ENOTFOUND,
                           mp_fs_exists(base) ? "not a directory" : "trace directory not found");
    }
    char sub[4200];
    snprintf(sub, sizeof(sub), "%s/torch_trace", base);
    const char *root = mp_fs_is_dir(sub) ? sub : base;
    struct walk w = {0};
    int rc = mp_trace_files_each(root, false, add_found, &w);
    if (rc) {
        rc = mp_diag_set(d, rc, "cannot list trace directory '%s'", root);
        goto out;
    }
    if (w.n > 1)
        qsort(w.v, w.n, sizeof(*w.v), cmp_path);
    out->files = calloc(w.n ? w.n : 1, sizeof(*out->files));
    out->dir = mp_strdup(root);
    if (!out->files || !out->dir) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    /* Pass 0 ignores capture_traces/; pass 1 uses it when nothing else exists. */
    for (int pass = 0; pass < 2 && out->n == 0; pass++) {
        bool cap = pass == 1;
        size_t rl = strlen(root) + 1;
        bool ranked = take(&w, out, cap, ".pt.trace.json.gz", true, rl) > 0 ||
                      take(&w, out, cap, ".pt.trace.json", true, rl) > 0 ||
                      take(&w, out, cap, NULL, true, rl) > 0;
        if (ranked) {
            qsort(out->files, out->n, sizeof(*out->files), cmp_rank);
            break;
        }
        /* fallback: every *.json.gz, then every *.json, with pseudo-ranks */
        take(&w, out, cap, ".json.gz", false, rl);
        take(&w, out, cap, ".json", false, rl);
    }
    if (out->n == 0) {
        mp_diag_set_file(d, root);
        rc = mp_diag_set(d, MP_ENOTFOUND, "no trace files (*.json, *.json.gz) found");
    }
out:
    for (size_t i = 0; i < w.n; i++)
        free(w.v[i].path);
    free(w.v);
    if (rc)
        mp_trace_rank_list_fini(out);
    return rc;
}

void mp_trace_rank_list_fini(struct mp_trace_rank_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->files[i].path);
    free(l->files);
    free(l->dir);
    memset(l, 0, sizeof(*l));
}
