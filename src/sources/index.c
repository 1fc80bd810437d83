/* The source index: one walk over each repository root, every source file
 * scanned once (scan.c), definitions kept in hash chains by unqualified
 * name. The result is cached on disk as a small text file keyed by a hash
 * of the tree (relative path, size and mtime of every scanned file, plus
 * the git HEAD commit), so a second run over an unchanged tree only lists
 * and stats the files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src_int.h"

#define SRC_CACHE_VERSION 5     /* 5: template arity in the flags, class templates named right */
#define SRC_MAX_FILE (8u << 20) /* files larger than this are not scanned */

int src_add_def(struct mp_src_index *ix, int32_t file, const char *name, size_t name_len,
                const char *ns, size_t ns_len, uint32_t line, char kind, uint8_t flags)
{
    if (name_len == 0 || name_len > 4096 || ns_len > 4096)
        return 0;
    int32_t nid = mp_intern_add(ix->strs, name, name_len);
    int32_t sid = mp_intern_add(ix->strs, ns ? ns : "", ns_len);
    if (nid < 0 || sid < 0)
        return MP_ENOMEM;
    if (MP_GROW(ix->defs, ix->cap_defs, ix->n_defs + 1, 4096))
        return MP_ENOMEM;
    size_t old = ix->n_heads;
    if (MP_GROW(ix->heads, ix->n_heads, (size_t)nid + 1, 4096))
        return MP_ENOMEM;
    for (size_t i = old; i < ix->n_heads; i++)
        ix->heads[i] = -1;
    struct src_def *d = &ix->defs[ix->n_defs];
    d->name = nid;
    d->ns = sid;
    d->file = file;
    d->line = line;
    d->kind = kind;
    d->flags = flags;
    d->next = ix->heads[nid];
    ix->heads[nid] = (int32_t)ix->n_defs;
    if (kind == SRC_MACRO) {
        if (MP_GROW(ix->macros, ix->cap_macros, ix->n_macros + 1, 64))
            return MP_ENOMEM;
        ix->macros[ix->n_macros++] = (int32_t)ix->n_defs;
    }
    ix->n_defs++;
    return 0;
}

static int add_file(struct mp_src_index *ix, const char *rel, int32_t repo, int32_t *out)
{
    int32_t pid = mp_intern_add(ix->strs, rel, strlen(rel));
    if (pid < 0)
        return MP_ENOMEM;
    if (MP_GROW(ix->files, ix->cap_files, ix->n_files + 1, 1024))
        return MP_ENOMEM;
    ix->files[ix->n_files].path = pid;
    ix->files[ix->n_files].repo = repo;
    *out = (int32_t)ix->n_files++;
    return 0;
}

/* ---- tree listing ---- */

struct flist {
    char **rel;
    size_t n, cap;
    uint64_t hash;
};

static bool skip_dir(const char *n)
{
    static const char *const skip[] = {".git",        ".hg",   ".svn",        "node_modules",
                                       "__pycache__", ".tox",  ".mypy_cache", ".pytest_cache",
                                       "build",       ".cache"};
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (strcmp(n, skip[i]) == 0)
            return true;
    return false;
}

static int fl_add(struct flist *l, const char *rel)
{
    if (MP_GROW(l->rel, l->cap, l->n + 1, 1024))
        return MP_ENOMEM;
    l->rel[l->n] = mp_strdup(rel);
    return l->rel[l->n++] ? 0 : MP_ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(const char *root, const char *rel, struct flist *l, int depth)
{
    if (depth > 40)
        return 0;
    char *dir = mp_fs_join(root, rel);
    if (!dir)
        return MP_ENOMEM;
    DIR *dp = opendir(dir);
    if (!dp) {
        free(dir);
        return 0; /* unreadable directories are skipped */
    }
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char sub[PATH_MAX];
        int w = rel[0] ? snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name)
                       : snprintf(sub, sizeof(sub), "%s", e->d_name);
        if (w < 0 || (size_t)w >= sizeof(sub))
            continue;
        unsigned char t = e->d_type;
        if (t == DT_UNKNOWN || t == DT_LNK) {
            char full[PATH_MAX];
            struct stat st;
            if (snprintf(full, sizeof(full), "%s/%s", dir, e->d_name) >= (int)sizeof(full) ||
                lstat(full, &st) != 0)
                continue;
            t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        if (t == DT_DIR) {
            if (!skip_dir(e->d_name))
                rc = walk(root, sub, l, depth + 1);
        } else if (t == DT_REG && src_scan_wants(e->d_name)) {
            rc = fl_add(l, sub);
        }
    }
    closedir(dp);
    free(dir);
    return rc;
}

/* ---- git HEAD commit, read from the files (no git process) ---- */

static void git_head(const char *root, char out[64])
{
    out[0] = 0;
    char p[PATH_MAX + 64], buf[512];
    if (snprintf(p, sizeof(p), "%s/.git/HEAD", root) >= (int)sizeof(p))
        return;
    FILE *f = fopen(p, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    if (strncmp(buf, "ref: ", 5) != 0) {
        snprintf(out, 64, "%.40s", buf);
        return;
    }
    const char *ref = buf + 5;
    if (snprintf(p, sizeof(p), "%s/.git/%s", root, ref) >= (int)sizeof(p))
        return;
    f = fopen(p, "r");
    if (f) {
        char h[64] = {0};
        if (fgets(h, sizeof(h), f)) {
            h[strcspn(h, "\r\n")] = 0;
            snprintf(out, 64, "%.40s", h);
        }
        fclose(f);
        return;
    }
    if (snprintf(p, sizeof(p), "%s/.git/packed-refs", root) >= (int)sizeof(p))
        return;
    f = fopen(p, "r");
    if (!f)
        return;
    char line[1024];
    size_t rl = strlen(ref);
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (strlen(line) > 41 && line[40] == ' ' && strncmp(line + 41, ref, rl) == 0 &&
            line[41 + rl] == 0) {
            snprintf(out, 64, "%.40s", line);
            break;
        }
    }
    fclose(f);
}

/* ---- cache ---- */

static char *cache_path(const struct mp_src_index_opts *o, const char *root)
{
    char dir[PATH_MAX];
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (o && o->cache_dir)
        snprintf(dir, sizeof(dir), "%s", o->cache_dir);
    else if (x && *x)
        snprintf(dir, sizeof(dir), "%s/magpie/sources", x);
    else if (h && *h)
        snprintf(dir, sizeof(dir), "%s/.cache/magpie/sources", h);
    else
        return NULL;
    const char *base = strrchr(root, '/');
    base = base && base[1] ? base + 1 : root;
    char name[PATH_MAX + 128];
    if (snprintf(name, sizeof(name), "%s/%.64s-%016llx.idx", dir, base,
                 (unsigned long long)mp_hash_bytes(root, strlen(root))) >= (int)sizeof(name))
        return NULL;
    return mp_strdup(name);
}

/* Cache file: "magpie-sources-index V KEY\n", then "F path\n" lines (file
 * ids in order) and "D file line kind flags name\tns\n" lines. */
static int cache_load(struct mp_src_index *ix, const char *path, uint64_t key, int32_t repo,
                      size_t *n_files, bool *ok)
{
    *ok = false;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0;
    int32_t base = (int32_t)ix->n_files;
    size_t n_defs0 = ix->n_defs;
    if (getline(&line, &cap, f) <= 0) {
        fclose(f);
        free(line);
        return 0;
    }
    unsigned v = 0;
    unsigned long long k = 0;
    if (sscanf(line, "magpie-sources-index %u %llx", &v, &k) != 2 || v != SRC_CACHE_VERSION ||
        k != key) {
        fclose(f);
        free(line);
        return 0;
    }
    bool bad = false;
    while (!rc && !bad && (got = getline(&line, &cap, f)) > 0) {
        if (line[got - 1] == '\n')
            line[--got] = 0;
        if (line[0] == 'F' && line[1] == ' ') {
            int32_t id;
            rc = add_file(ix, line + 2, repo, &id);
        } else if (line[0] == 'D' && line[1] == ' ') {
            long fid;
            unsigned long ln;
            char kind;
            unsigned fl;
            int off = 0;
            if (sscanf(line + 2, "%ld %lu %c %u %n", &fid, &ln, &kind, &fl, &off) != 4 ||
                off == 0 || fid < 0 || base + fid >= (long)ix->n_files) {
                bad = true;
                break;
            }
            char *nm = line + 2 + off;
            char *tab = strchr(nm, '\t');
            if (!tab) {
                bad = true;
                break;
            }
            *tab = 0;
            rc = src_add_def(ix, base + (int32_t)fid, nm, strlen(nm), tab + 1, strlen(tab + 1),
                             (uint32_t)ln, kind, (uint8_t)fl);
        } else {
            bad = true;
        }
    }
    free(line);
    fclose(f);
    if (bad) { /* a damaged cache is rebuilt: drop what was read */
        for (size_t i = n_defs0; i < ix->n_defs; i++) {
            struct src_def *d = &ix->defs[i];
            ix->heads[d->name] = d->next; /* defs were pushed in order */
        }
        /* macros appended after n_defs0 */
        while (ix->n_macros && (size_t)ix->macros[ix->n_macros - 1] >= n_defs0)
            ix->n_macros--;
        ix->n_defs = n_defs0;
        ix->n_files = (size_t)base;
        return rc;
    }
    *n_files = ix->n_files - (size_t)base;
    *ok = !rc;
    return rc;
}

static int cache_save(const struct mp_src_index *ix, const char *path, uint64_t key, int32_t base,
                      size_t n_defs0)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_buf_printf(&b, "magpie-sources-index %u %016llx\n", SRC_CACHE_VERSION,
                           (unsigned long long)key);
    for (size_t i = (size_t)base; i < ix->n_files && !rc; i++)
        rc = mp_buf_printf(&b, "F %s\n", mp_intern_str(ix->strs, ix->files[i].path));
    for (size_t i = n_defs0; i < ix->n_defs && !rc; i++) {
        const struct src_def *d = &ix->defs[i];
        rc = mp_buf_printf(&b, "D %d %u %c %u %s\t%s\n", d->file - base, d->line, d->kind, d->flags,
                           mp_intern_str(ix->strs, d->name), mp_intern_str(ix->strs, d->ns));
    }
    if (!rc) {
        char *dir = mp_strdup(path);
        if (!dir) {
            rc = MP_ENOMEM;
        } else {
            char *sl = strrchr(dir, '/');
            if (sl)
                *sl = 0;
            rc = mp_fs_mkdirs(dir, NULL);
            if (!rc)
                rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, NULL);
            free(dir);
        }
    }
    mp_buf_fini(&b);
    return rc;
}

static int read_whole(const char *path, struct mp_buf *b)
{
    mp_buf_reset(b);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return MP_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size > (off_t)SRC_MAX_FILE) {
        close(fd);
        return MP_EIO;
    }
    int rc = mp_buf_reserve(b, (size_t)st.st_size + 1);
    while (!rc) {
        ssize_t r = read(fd, b->data + b->len, b->cap - b->len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        b->len += (size_t)r;
        if (b->len + 1 >= b->cap)
            rc = mp_buf_reserve(b, 65536);
    }
    close(fd);
    if (!rc && b->data)
        b->data[b->len] = 0;
    return rc;
}

static int index_repo(struct mp_src_index *ix, const char *root_in,
                      const struct mp_src_index_opts *o, struct mp_diag *d)
{
    uint64_t t0 = mp_time_ns();
    char root[PATH_MAX];
    if (!realpath(root_in, root) || !mp_fs_is_dir(root))
        return mp_diag_set(d, MP_ENOTFOUND, "kernel source repo '%s' is not a directory", root_in);
    int32_t repo = (int32_t)ix->n_repos;
    size_t r3 = 3 * ix->n_repos;
    struct mp_src_repo_info *ri = &ix->repos[repo];
    char commit[64];
    git_head(root, commit);
    const char *base = strrchr(root, '/');
    base = base && base[1] ? base + 1 : root;
    ix->repo_strs[r3] = mp_strdup(root);
    ix->repo_strs[r3 + 1] = mp_strdup(base);
    ix->repo_strs[r3 + 2] = mp_strdup(commit);
    if (!ix->repo_strs[r3] || !ix->repo_strs[r3 + 1] || !ix->repo_strs[r3 + 2])
        return MP_ENOMEM;
    ri->root = ix->repo_strs[r3];
    ri->name = ix->repo_strs[r3 + 1];
    ri->commit = ix->repo_strs[r3 + 2];
    ix->n_repos++;

    struct flist l = {0};
    int rc = walk(root, "", &l, 0);
    if (!rc && l.n)
        qsort(l.rel, l.n, sizeof(*l.rel), cmp_str);
    /* key: version, commit, and every file's path, size and mtime */
    struct mp_buf kb;
    mp_buf_init(&kb, 0);
    if (!rc)
        rc = mp_buf_printf(&kb, "v%d %s\n", SRC_CACHE_VERSION, commit);
    for (size_t i = 0; i < l.n && !rc; i++) {
        char full[PATH_MAX];
        struct stat st;
        if (snprintf(full, sizeof(full), "%s/%s", root, l.rel[i]) >= (int)sizeof(full) ||
            stat(full, &st) != 0)
            continue;
        rc = mp_buf_printf(&kb, "%s %lld %lld.%09ld\n", l.rel[i], (long long)st.st_size,
                           (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    }
    uint64_t key = rc ? 0 : mp_hash_bytes(kb.data ? kb.data : "", kb.len);
    mp_buf_fini(&kb);

    char *cp = (o && o->no_cache) || rc ? NULL : cache_path(o, root);
    bool loaded = false;
    size_t nf = 0;
    if (cp && !rc)
        rc = cache_load(ix, cp, key, repo, &nf, &loaded);
    if (!rc && !loaded) {
        int32_t fbase = (int32_t)ix->n_files;
        size_t d0 = ix->n_defs;
        struct mp_buf fb;
        mp_buf_init(&fb, SRC_MAX_FILE + 2);
        for (size_t i = 0; i < l.n && !rc; i++) {
            char full[PATH_MAX];
            if (snprintf(full, sizeof(full), "%s/%s", root, l.rel[i]) >= (int)sizeof(full) ||
                read_whole(full, &fb) != 0)
                continue;
            int32_t fid;
            rc = add_file(ix, l.rel[i], repo, &fid);
            if (!rc && fb.len)
                rc = src_scan_file(ix, fid, l.rel[i], fb.data, fb.len);
        }
        mp_buf_fini(&fb);
        nf = ix->n_files - (size_t)fbase;
        if (!rc && cp && cache_save(ix, cp, key, fbase, d0) != 0)
            mp_log(MP_LOG_WARN, "could not write the source index cache %s", cp);
        ri->n_defs = ix->n_defs - d0;
    } else if (!rc) {
        ri->n_defs = 0;
        for (size_t i = 0; i < ix->n_defs; i++)
            if (ix->files[ix->defs[i].file].repo == repo)
                ri->n_defs++;
    }
    ri->n_files = nf;
    ri->from_cache = loaded;
    ri->seconds = (double)(mp_time_ns() - t0) / 1e9;
    free(cp);
    for (size_t i = 0; i < l.n; i++)
        free(l.rel[i]);
    free(l.rel);
    if (rc == MP_ENOMEM)
        mp_diag_set(d, rc, "out of memory indexing %s", root);
    return rc;
}

int mp_src_index_open(const char *const *roots, size_t n, const struct mp_src_index_opts *opts,
                      struct mp_src_index **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_src_index *ix = mp_calloc(1, sizeof(*ix));
    if (!ix)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    ix->strs = mp_intern_new();
    ix->repos = mp_calloc(n ? n : 1, sizeof(*ix->repos));
    ix->repo_strs = mp_calloc(3 * (n ? n : 1), sizeof(char *));
    ix->cap_repos = n ? n : 1;
    ix->texts = mp_calloc(1, sizeof(*ix->texts));
    if (!ix->strs || !ix->repos || !ix->repo_strs || !ix->texts) {
        mp_src_index_free(ix);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = index_repo(ix, roots[i], opts, d);
        if (rc) {
            mp_src_index_free(ix);
            return rc;
        }
    }
    *out = ix;
    return 0;
}

void mp_src_index_free(struct mp_src_index *ix)
{
    if (!ix)
        return;
    mp_intern_free(ix->strs);
    free(ix->defs);
    free(ix->files);
    free(ix->heads);
    free(ix->macros);
    if (ix->repo_strs)
        for (size_t i = 0; i < 3 * ix->cap_repos; i++)
            free(ix->repo_strs[i]);
    free(ix->repo_strs);
    free(ix->repos);
    if (ix->texts) {
        for (size_t i = 0; i < ix->texts->n; i++)
            free(ix->texts->text[i]);
        free(ix->texts->text);
        free(ix->texts->len);
        free(ix->texts);
    }
    free(ix);
}

size_t mp_src_index_repos(const struct mp_src_index *ix)
{
    return ix ? ix->n_repos : 0;
}

const struct mp_src_repo_info *mp_src_index_repo(const struct mp_src_index *ix, size_t i)
{
    return ix && i < ix->n_repos ? &ix->repos[i] : NULL;
}
