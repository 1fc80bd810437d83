/* Gap analysis outputs: Magpie's CSV files, its `gap_analysis` JSON object
 * and its stdout summary table, byte for byte where Magpie defines them. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>

static int json_str_or_null(struct mp_buf *b, const char *s);

static double pct_of(double v, double total)
{
    return total > 0 ? v / total * 100.0 : 0.0;
}

/* ---- --find-kernel-sources ---- */

static int add_warning(struct mp_gap_sources *s, const char *msg)
{
    char **w = mp_reallocarray(s->warnings, s->n_warnings + 1, sizeof(*w));
    if (!w)
        return MP_ENOMEM;
    s->warnings = w;
    w[s->n_warnings] = mp_strdup(msg);
    return w[s->n_warnings] ? (s->n_warnings++, 0) : MP_ENOMEM;
}

/* auto_clone_repos: where repos are cloned, and for how long a clone may run */
static char *repos_base(const struct mp_gap_config *cfg)
{
    if (cfg->repos_base_dir)
        return mp_strdup(cfg->repos_base_dir);
    const char *h = getenv("HOME");
    char buf[4200];
    snprintf(buf, sizeof(buf), "%s/.cache/magpie/repos", h && *h ? h : "/tmp");
    return mp_strdup(buf);
}

static double clone_timeout(void)
{
    const char *t = getenv("MAGPIE_CLONE_TIMEOUT_S");
    double v = t ? atof(t) : 0;
    return v > 0 ? v : 600.0;
}

/* Clones repo name into dest unless a clone already timed out (no second
 * wait on a dead network); a failure is a warning naming the repo. */
static int auto_clone(struct mp_gap_sources *out, const char *name, const char *dest, bool *gave_up,
                      const char **roots, size_t *n, char **owned)
{
    char url[1024], msg[4600];
    if (mp_fs_is_dir(dest)) {
        roots[(*n)++] = *owned = mp_strdup(dest);
        return *owned ? 0 : MP_ENOMEM;
    }
    if (!mp_src_upstream_url(name, url, sizeof(url))) {
        snprintf(msg, sizeof(msg),
                 "kernel source repo '%s' not found and not a repo auto_clone_repos knows; "
                 "its rows stay unresolved",
                 dest);
        return add_warning(out, msg);
    }
    if (*gave_up) {
        snprintf(msg, sizeof(msg),
                 "auto_clone_repos: %s (%s) not cloned: an earlier clone timed out; its rows "
                 "stay unresolved",
                 name, url);
        return add_warning(out, msg);
    }
    struct mp_diag cd;
    mp_diag_clear(&cd);
    int rc = mp_src_clone(url, dest, clone_timeout(), &cd);
    if (rc == 0) {
        roots[(*n)++] = *owned = mp_strdup(dest);
        return *owned ? 0 : MP_ENOMEM;
    }
    if (rc == MP_ETIMEOUT)
        *gave_up = true;
    snprintf(msg, sizeof(msg),
             "auto_clone_repos: cannot clone %s into %s: %s; its rows stay "
             "unresolved",
             name, dest, cd.msg);
    return add_warning(out, msg);
}

#define GAP_MAX_AUTO_REPOS 16
#define GAP_EV_MAX_FILES 32

/* ---- launch evidence: the traces' Python stacks, packages, platform ---- */

/* Traces larger than this (decompressed) are not read for stacks: the
 * reader holds the whole trace as a JSON tree. MAGPIE_SOURCES_STACK_MAX_MB
 * (default 512) sets it. */
static double ev_max_bytes(void)
{
    const char *t = getenv("MAGPIE_SOURCES_STACK_MAX_MB");
    double v = t ? atof(t) : 0;
    return (v > 0 ? v : 512.0) * 1048576.0;
}

/* The decompressed size of a trace: a gzip file's trailer holds it (mod
 * 2^32, so a file over 4 GiB is taken as at least its compressed size x
 * 4); a plain file's size. -1 when it cannot be read. */
static double trace_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    double v = -1;
    size_t l = strlen(path);
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        unsigned char t[4];
        v = (double)sz;
        if (l > 3 && strcmp(path + l - 3, ".gz") == 0 && sz > 4 && fseek(f, -4, SEEK_END) == 0 &&
            fread(t, 1, 4, f) == 4) {
            double isz = (double)((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                                  (uint32_t)t[3] << 24);
            v = isz > (double)sz * 4 ? isz : (double)sz * 4;
        }
    }
    fclose(f);
    return v;
}

static bool is_trace_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && strcmp(n + l - 5, ".json") == 0) ||
           (l > 8 && strcmp(n + l - 8, ".json.gz") == 0);
}

/* p's canonical path (a rank file and the walk must not read one trace
 * twice), or a copy of p; NULL when out of memory */
static char *canon(const char *p)
{
    char *r = realpath(p, NULL);
    return r ? r : mp_strdup(p);
}

static bool listed(char *const *list, size_t n, const char *p)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], p) == 0)
            return true;
    return false;
}

/* trace files under dir (3 levels at most: a run's capture_traces/) */
static int ev_walk(const char *dir, int depth, char **list, size_t *n)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    int rc = 0;
    for (struct dirent *e; !rc && *n < GAP_EV_MAX_FILES && (e = readdir(dp)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char *p = mp_fs_join(dir, e->d_name);
        if (!p) {
            rc = MP_ENOMEM;
            break;
        }
        if (mp_fs_is_dir(p)) {
            if (depth < 3)
                rc = ev_walk(p, depth + 1, list, n);
            free(p);
        } else if (is_trace_name(e->d_name)) {
            char *c = canon(p);
            free(p);
            if (!c)
                rc = MP_ENOMEM;
            else if (listed(list, *n, c))
                free(c);
            else
                list[(*n)++] = c;
        } else {
            free(p);
        }
    }
    closedir(dp);
    return rc;
}

/* Reads every rank trace, then any other trace under the trace directory
 * (a run's graph-capture traces carry the launch stacks its replayed
 * kernels lack), into acc; a trace that is too large or unreadable is a
 * warning. */
static int gap_evidence(const struct mp_gap_result *r, struct mp_gap_sources *out,
                        struct mp_src_trace_kernels *acc)
{
    char *list[GAP_EV_MAX_FILES];
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < r->n_ranks && n < GAP_EV_MAX_FILES && !rc; i++) {
        const char *t = r->ranks[i].trace_file;
        if (!t || r->ranks[i].error)
            continue;
        char *c = canon(t);
        if (!c)
            rc = MP_ENOMEM;
        else if (listed(list, n, c))
            free(c);
        else
            list[n++] = c;
    }
    size_t n_rank_files = n;
    if (!rc && r->trace_dir)
        rc = ev_walk(r->trace_dir, 0, list, &n);
    double max = ev_max_bytes();
    char msg[4400];
    for (size_t i = 0; i < n && !rc; i++) {
        double sz = trace_bytes(list[i]);
        if (sz > max) {
            snprintf(msg, sizeof(msg),
                     "find_kernel_sources: %s not read for launch stacks (%.0f MB > "
                     "MAGPIE_SOURCES_STACK_MAX_MB %.0f)",
                     list[i], sz / 1048576.0, max / 1048576.0);
            rc = add_warning(out, msg);
            continue;
        }
        struct mp_src_trace_kernels one = {0};
        struct mp_diag td;
        mp_diag_clear(&td);
        int trc = mp_src_trace_kernels(list[i], &one, &td);
        if (trc == MP_ENOMEM)
            rc = trc;
        else if (trc && i < n_rank_files) {
            snprintf(msg, sizeof(msg), "find_kernel_sources: no launch stacks from %s: %s", list[i],
                     td.msg);
            rc = add_warning(out, msg);
        } else if (!trc) {
            rc = mp_src_trace_kernels_merge(acc, &one);
        }
        mp_src_trace_kernels_fini(&one);
    }
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    return rc;
}

int mp_gap_find_sources(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                        struct mp_gap_sources *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    size_t cap = (size_t)cfg->n_kernel_source_repos + GAP_MAX_AUTO_REPOS + 1;
    const char **roots = mp_calloc(cap, sizeof(char *));
    char **owned = mp_calloc(cap, sizeof(char *));
    size_t n = 0, n_owned = 0;
    int rc = roots && owned ? 0 : MP_ENOMEM;
    bool gave_up = false;
    char msg[4400];
    for (int i = 0; i < cfg->n_kernel_source_repos && !rc; i++) {
        const char *p = cfg->kernel_source_repos[i];
        if (mp_fs_is_dir(p)) {
            roots[n++] = p;
            continue;
        }
        /* Magpie clones a missing repo it knows by its directory name */
        const char *base = strrchr(p, '/');
        base = base && base[1] ? base + 1 : p;
        if (cfg->auto_clone_repos) {
            rc = auto_clone(out, base, p, &gave_up, roots, &n, &owned[n_owned]);
            n_owned += owned[n_owned] != NULL;
            continue;
        }
        snprintf(msg, sizeof(msg), "kernel source repo '%s' not found; its rows stay unresolved",
                 p);
        rc = add_warning(out, msg);
    }
    if (!rc && cfg->n_kernel_source_repos == 0 && !cfg->auto_clone_repos)
        rc = add_warning(out, "no --kernel-source-repos given and auto_clone_repos is off: rows "
                              "are classified, not resolved");
    if (!rc && cfg->n_kernel_source_repos == 0 && cfg->auto_clone_repos) {
        /* the repos the rows' kinds need (Magpie's kind -> repo map), each
         * from repos_base_dir, cloned there when missing */
        const char *want[GAP_MAX_AUTO_REPOS];
        int nw = 0;
        for (size_t i = 0; i < r->n_merged && !rc; i++) {
            struct mp_src_result cr;
            rc = mp_src_resolve(NULL, r->merged[i].name, NULL, &cr);
            if (rc)
                break;
            const char *names[4];
            int k = mp_src_repos_for_kind(cr.kind, r->merged[i].name, names, 4);
            for (int j = 0; j < k; j++) {
                bool dup = false;
                for (int q = 0; q < nw; q++)
                    dup |= strcmp(want[q], names[j]) == 0;
                if (!dup && nw < GAP_MAX_AUTO_REPOS)
                    want[nw++] = names[j];
            }
            mp_src_result_fini(&cr);
        }
        char *base = rc ? NULL : repos_base(cfg);
        if (!rc && !base)
            rc = MP_ENOMEM;
        for (int q = 0; q < nw && !rc; q++) {
            char *dest = mp_fs_join(base, want[q]);
            rc = dest ? auto_clone(out, want[q], dest, &gave_up, roots, &n, &owned[n_owned])
                      : MP_ENOMEM;
            n_owned += owned[n_owned] != NULL;
            free(dest);
        }
        free(base);
    }
    if (!rc)
        rc = mp_src_index_open(roots, n, NULL, &out->ix, d);
    free(roots);
    for (size_t i = 0; owned && i < n_owned; i++)
        free(owned[i]);
    free(owned);
    if (!rc && r->n_merged) {
        out->rows = mp_calloc(r->n_merged, sizeof(*out->rows));
        rc = out->rows ? 0 : MP_ENOMEM;
    }
    struct mp_src_trace_kernels ev = {0};
    if (!rc && r->n_merged && mp_src_index_repos(out->ix))
        rc = gap_evidence(r, out, &ev);
    struct mp_src_context ctx = mp_src_trace_context(&ev);
    for (size_t i = 0; i < r->n_merged && !rc; i++) {
        const struct mp_src_trace_kernel *k = mp_src_trace_kernels_find(&ev, r->merged[i].name);
        struct mp_src_evidence e = {k ? (const char *const *)k->frames : NULL, k ? k->n_frames : 0};
        rc = mp_src_resolve_ctx(out->ix, r->merged[i].name, &e, &ctx, &out->rows[i]);
        if (!rc)
            out->n++;
    }
    mp_src_trace_kernels_fini(&ev);
    if (rc == MP_ENOMEM)
        mp_diag_set(d, rc, "out of memory resolving kernel sources");
    if (rc)
        mp_gap_sources_fini(out);
    return rc;
}

void mp_gap_sources_fini(struct mp_gap_sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        mp_src_result_fini(&s->rows[i]);
    free(s->rows);
    for (size_t i = 0; i < s->n_warnings; i++)
        free(s->warnings[i]);
    free(s->warnings);
    mp_src_index_free(s->ix);
    memset(s, 0, sizeof(*s));
}

static int csv_header_comments(const struct mp_gap_sources *s, struct mp_buf *out)
{
    int rc = mp_buf_puts(out, "# Repository Path Mappings:\r\n");
    for (size_t i = 0; i < mp_src_index_repos(s->ix) && !rc; i++) {
        const struct mp_src_repo_info *ri = mp_src_index_repo(s->ix, i);
        char var[160];
        mp_src_repo_var(ri->name, var, sizeof(var));
        rc = mp_buf_printf(out, "# %s=%s\r\n", var, ri->root);
    }
    if (!rc)
        rc = mp_buf_puts(out, "#\r\n# Warning: columns 7-26 from find_kernel_sources are "
                              "experimental.\r\n");
    return rc;
}

static const char *const src_cols[] = {"kind",
                                       "category",
                                       "source_repo",
                                       "source_file",
                                       "upstream_url",
                                       "test_file",
                                       "test_cmd",
                                       "baseline_ref_file",
                                       "baseline_ref_symbol",
                                       "baseline_ref_kind",
                                       "triton_ref_file",
                                       "triton_ref_symbol",
                                       "notes",
                                       "source_resolution",
                                       "source_error",
                                       "source_line",
                                       "source_symbol",
                                       "source_confidence",
                                       "source_candidates",
                                       "replay_command"};

/* The trace a table's replay commands name: the first analysed rank's,
 * and the capture_traces beside it, looked up once for all rows. */
struct replay_trace {
    const char *trace; /* NULL: no rank's trace is known */
    char *capture;     /* mp_src_capture_dir, NULL when none */
};

static void replay_trace_init(const struct mp_gap_result *r, struct replay_trace *t)
{
    t->trace = NULL;
    for (size_t q = 0; q < r->n_ranks && !t->trace; q++)
        if (!r->ranks[q].error && r->ranks[q].trace_file)
            t->trace = r->ranks[q].trace_file;
    t->capture = t->trace ? mp_src_capture_dir(t->trace) : NULL;
}

/* `magpie trace replay` for the op behind a kernel row: the ops of t's
 * trace that launched this kernel (its exact name; a grouped row's first
 * variant), the top one by kernel time, into replay_<row> (docs/replay.md;
 * mp_src_replay_command). "" when no rank's trace is known. */
static int replay_command(const struct replay_trace *t, const struct mp_gap_kernel *k, size_t i,
                          struct mp_buf *b)
{
    if (!t->trace)
        return 0;
    const char *name = k->name;
    char *first = NULL;
    if (k->n_variants > 0 && k->variants && *k->variants) {
        const char *e = strstr(k->variants, " | ");
        first = e ? mp_strndup(k->variants, (size_t)(e - k->variants)) : mp_strdup(k->variants);
        if (!first)
            return MP_ENOMEM;
        name = first;
    }
    int rc = mp_src_replay_command(b, t->trace, t->capture, name, i + 1);
    free(first);
    return rc;
}

static int csv_source_cells(struct mp_csv *c, const struct mp_src_result *x)
{
    char file[4400] = "";
    if (x->source_file) {
        char var[160];
        mp_src_repo_var(x->source_repo, var, sizeof(var));
        snprintf(file, sizeof(file), "%s/%s", var, x->source_file);
    }
    struct mp_buf cand;
    mp_buf_init(&cand, 0);
    int rc = mp_src_candidates_str(x, &cand);
    const char *v[] = {x->kind,
                       x->category,
                       x->source_repo ? x->source_repo : "",
                       file,
                       x->upstream_url ? x->upstream_url : "",
                       x->test_file ? x->test_file : "",
                       x->test_cmd ? x->test_cmd : "",
                       x->baseline_ref_file ? x->baseline_ref_file : "",
                       x->baseline_ref_symbol ? x->baseline_ref_symbol : "",
                       x->baseline_ref_kind[0] ? x->baseline_ref_kind : "none",
                       x->triton_ref_file ? x->triton_ref_file : "",
                       x->triton_ref_symbol ? x->triton_ref_symbol : "",
                       x->notes ? x->notes : "",
                       x->resolution,
                       x->error ? x->error : ""};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]) && !rc; i++)
        rc = mp_csv_str(c, v[i]);
    if (!rc)
        rc = x->source_line ? mp_csv_fmt(c, "%ld", x->source_line) : mp_csv_str(c, "");
    if (!rc)
        rc = mp_csv_str(c, x->source_symbol ? x->source_symbol : "");
    if (!rc)
        rc = mp_csv_fmt(c, "%.3f", x->confidence);
    if (!rc)
        rc = mp_csv_str(c, mp_buf_cstr(&cand));
    mp_buf_fini(&cand);
    return rc;
}

static int json_source_fields(struct mp_buf *b, const struct mp_src_result *x)
{
    const char *keys[] = {"kind",
                          "category",
                          "source_repo",
                          "source_file",
                          "upstream_url",
                          "notes",
                          "source_resolution",
                          "source_error",
                          "source_symbol",
                          "demangled",
                          "test_file",
                          "test_cmd",
                          "baseline_ref_file",
                          "baseline_ref_symbol",
                          "baseline_ref_kind",
                          "triton_ref_file",
                          "triton_ref_symbol"};
    const char *vals[] = {x->kind,
                          x->category,
                          x->source_repo,
                          x->source_file,
                          x->upstream_url,
                          x->notes,
                          x->resolution,
                          x->error,
                          x->source_symbol,
                          x->demangled,
                          x->test_file,
                          x->test_cmd,
                          x->baseline_ref_file,
                          x->baseline_ref_symbol,
                          x->baseline_ref_kind[0] ? x->baseline_ref_kind : "none",
                          x->triton_ref_file,
                          x->triton_ref_symbol};
    int rc = 0;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !rc; i++) {
        rc = mp_buf_printf(b, ", \"%s\": ", keys[i]);
        rc = rc ? rc : json_str_or_null(b, vals[i]);
    }
    rc = rc ? rc
            : mp_buf_printf(b,
                            ", \"source_line\": %ld, \"source_confidence\": %.3f, "
                            "\"source_candidates\": [",
                            x->source_line, x->confidence);
    for (int i = 0; i < x->n_cand && !rc; i++) {
        rc = mp_buf_puts(b, i ? ", {\"repo\": " : "{\"repo\": ");
        rc = rc ? rc : json_str_or_null(b, x->cand[i].repo);
        rc = rc ? rc : mp_buf_puts(b, ", \"file\": ");
        rc = rc ? rc : json_str_or_null(b, x->cand[i].file);
        rc = rc ? rc : mp_buf_puts(b, ", \"symbol\": ");
        rc = rc ? rc : json_str_or_null(b, x->cand[i].symbol);
        rc = rc ? rc
                : mp_buf_printf(b, ", \"line\": %ld, \"score\": %.3f}", x->cand[i].line,
                                x->cand[i].score);
    }
    return rc ? rc : mp_buf_putc(b, ']');
}

int mp_gap_csv(const struct mp_gap_result *r, const struct mp_gap_config *cfg, int rank_index,
               struct mp_buf *out)
{
    struct mp_csv c;
    mp_csv_init(&c, out, "\r\n");
    const struct mp_gap_kernel *ks = rank_index < 0 ? r->merged : r->ranks[rank_index].kernels;
    size_t n = rank_index < 0 ? r->n_merged : r->ranks[rank_index].n_kernels;
    double total = rank_index < 0 ? r->total_us : r->ranks[rank_index].total_us;
    const struct mp_gap_sources *src = rank_index < 0 ? cfg->sources : NULL;
    int rc = src ? csv_header_comments(src, out) : 0;
    static const char *const cols[] = {"Name",          "Calls",   "Self CUDA total (us)",
                                       "Avg time (us)", "% Total", "Input Shapes"};
    for (size_t i = 0; i < 6 && !rc; i++)
        rc = mp_csv_str(&c, cols[i]);
    if (cfg->group_normalized && !rc) {
        rc = mp_csv_str(&c, "Variants");
        if (!rc)
            rc = mp_csv_str(&c, "Kernel Names");
    }
    for (size_t i = 0; src && i < sizeof(src_cols) / sizeof(src_cols[0]) && !rc; i++)
        rc = mp_csv_str(&c, src_cols[i]);
    if (!rc)
        rc = mp_csv_end_row(&c);
    struct replay_trace rt = {0};
    if (src)
        replay_trace_init(r, &rt);
    for (size_t i = 0; i < n && !rc; i++) {
        const struct mp_gap_kernel *k = &ks[i];
        double avg = k->calls ? k->total_us / (double)k->calls : 0.0;
        rc = mp_csv_str(&c, k->name);
        if (!rc)
            rc = mp_csv_fmt(&c, "%llu", (unsigned long long)k->calls);
        if (!rc)
            rc = mp_csv_fmt(&c, "%.2f", k->total_us);
        if (!rc)
            rc = mp_csv_fmt(&c, "%.2f", avg);
        if (!rc)
            rc = mp_csv_fmt(&c, "%.2f", pct_of(k->total_us, total));
        if (!rc)
            rc = mp_csv_str(&c, k->shapes);
        if (cfg->group_normalized && !rc) {
            rc = mp_csv_fmt(&c, "%u", k->n_variants);
            if (!rc)
                rc = mp_csv_str(&c, k->variants);
        }
        if (src && i < src->n && !rc)
            rc = csv_source_cells(&c, &src->rows[i]);
        if (src && i < src->n && !rc) {
            struct mp_buf cmd;
            mp_buf_init(&cmd, 0);
            rc = replay_command(&rt, k, i, &cmd);
            rc = rc ? rc : mp_csv_str(&c, mp_buf_cstr(&cmd));
            mp_buf_fini(&cmd);
        }
        if (!rc)
            rc = mp_csv_end_row(&c);
    }
    free(rt.capture);
    return rc;
}

int mp_gap_write_csv(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                     const char *dir, bool rank_csv, struct mp_diag *d)
{
    int rc = mp_fs_mkdirs(dir, d);
    if (rc)
        return rc;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    char path[4200];
    /* Per-rank files first: if anything fails, the main CSV from an earlier
     * run is left as it was rather than paired with half-written ranks. */
    size_t ok_ranks = 0;
    for (size_t i = 0; i < r->n_ranks; i++)
        ok_ranks += r->ranks[i].error == NULL;
    if (rank_csv && ok_ranks > 1) {
        for (size_t i = 0; i < r->n_ranks && !rc; i++) {
            if (r->ranks[i].error)
                continue;
            mp_buf_reset(&b);
            rc = mp_gap_csv(r, cfg, (int)i, &b);
            if (rc) {
                rc = mp_diag_set(d, rc, "out of memory formatting CSV");
                break;
            }
            snprintf(path, sizeof(path), "%s/gap_analysis_rank%d.csv", dir, r->ranks[i].rank);
            rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, d);
        }
    }
    if (!rc) {
        mp_buf_reset(&b);
        rc = mp_gap_csv(r, cfg, -1, &b);
        if (rc)
            rc = mp_diag_set(d, rc, "out of memory formatting CSV");
    }
    if (!rc) {
        snprintf(path, sizeof(path), "%s/gap_analysis.csv", dir);
        rc = mp_fs_write_atomic(path, b.data ? b.data : "", b.len, d);
    }
    mp_buf_fini(&b);
    return rc;
}

static int json_str_or_null(struct mp_buf *b, const char *s)
{
    return s ? mp_json_str(b, s, strlen(s)) : mp_buf_puts(b, "null");
}

static int json_list(struct mp_buf *b, const char *const *v, int n, bool null_when_empty)
{
    if (n == 0 && null_when_empty)
        return mp_buf_puts(b, "null");
    int rc = mp_buf_putc(b, '[');
    for (int i = 0; i < n && !rc; i++) {
        if (i)
            rc = mp_buf_puts(b, ", ");
        if (!rc)
            rc = mp_json_str(b, v[i], strlen(v[i]));
    }
    return rc ? rc : mp_buf_putc(b, ']');
}

static int json_kernels(const struct mp_gap_result *r, struct mp_buf *b,
                        const struct mp_gap_kernel *ks, size_t n, double total, bool grouped,
                        const struct mp_gap_sources *src)
{
    int rc = mp_buf_putc(b, '[');
    struct replay_trace rt = {0};
    if (src)
        replay_trace_init(r, &rt);
    for (size_t i = 0; i < n && !rc; i++) {
        const struct mp_gap_kernel *k = &ks[i];
        rc = mp_buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
        rc = rc ? rc : mp_json_str(b, k->name, strlen(k->name));
        rc = rc ? rc
                : mp_buf_printf(b, ", \"calls\": %llu, \"self_cuda_total_us\": ",
                                (unsigned long long)k->calls);
        rc = rc ? rc : mp_json_double(b, k->total_us);
        rc = rc ? rc : mp_buf_puts(b, ", \"avg_time_us\": ");
        rc = rc ? rc : mp_json_double(b, k->calls ? k->total_us / (double)k->calls : 0.0);
        rc = rc ? rc : mp_buf_puts(b, ", \"pct_total\": ");
        rc = rc ? rc : mp_json_double(b, pct_of(k->total_us, total));
        rc = rc ? rc : mp_buf_puts(b, ", \"input_shapes\": ");
        rc = rc ? rc : mp_json_str(b, k->shapes, strlen(k->shapes));
        rc = rc ? rc : mp_buf_puts(b, ", \"min_us\": ");
        rc = rc ? rc : mp_json_double(b, k->min_us);
        rc = rc ? rc : mp_buf_puts(b, ", \"max_us\": ");
        rc = rc ? rc : mp_json_double(b, k->max_us);
        if (grouped && !rc) {
            rc = mp_buf_printf(b, ", \"variants\": %u, \"kernel_names\": ", k->n_variants);
            rc = rc ? rc : mp_json_str(b, k->variants, strlen(k->variants));
        }
        if (src && i < src->n && !rc)
            rc = json_source_fields(b, &src->rows[i]);
        if (src && i < src->n && !rc) {
            struct mp_buf cmd;
            mp_buf_init(&cmd, 0);
            rc = replay_command(&rt, k, i, &cmd);
            rc = rc ? rc : mp_buf_puts(b, ", \"replay_command\": ");
            rc = rc ? rc : json_str_or_null(b, cmd.len ? mp_buf_cstr(&cmd) : NULL);
            mp_buf_fini(&cmd);
        }
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    free(rt.capture);
    return rc ? rc : mp_buf_putc(b, ']');
}

int mp_gap_json(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                const char *csv_path, const char *output_dir, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "{\"config\": {\"enabled\": true, \"trace_start_pct\": ");
    rc = rc ? rc : mp_json_double(b, cfg->start_pct);
    rc = rc ? rc : mp_buf_puts(b, ", \"trace_end_pct\": ");
    rc = rc ? rc : mp_json_double(b, cfg->end_pct);
    rc = rc ? rc : mp_buf_printf(b, ", \"top_k\": %d, \"min_duration_us\": ", cfg->top_k);
    rc = rc ? rc : mp_json_double(b, cfg->min_duration_us);
    rc = rc ? rc : mp_buf_puts(b, ", \"categories\": ");
    rc = rc ? rc : json_list(b, cfg->categories, cfg->categories_all ? 0 : cfg->n_categories, true);
    rc = rc ? rc : mp_buf_puts(b, ", \"ignore_categories\": ");
    rc = rc ? rc : json_list(b, cfg->ignore, cfg->n_ignore, false);
    rc = rc ? rc
            : mp_buf_printf(b, ", \"find_kernel_sources\": %s, \"kernel_source_repos\": ",
                            cfg->find_kernel_sources ? "true" : "false");
    rc = rc ? rc
            : json_list(b, (const char *const *)cfg->kernel_source_repos,
                        cfg->n_kernel_source_repos, true);
    rc = rc ? rc
            : mp_buf_printf(b, ", \"auto_clone_repos\": %s, \"repos_base_dir\": ",
                            cfg->auto_clone_repos ? "true" : "false");
    rc = rc ? rc : json_str_or_null(b, cfg->repos_base_dir);
    rc = rc ? rc
            : mp_buf_printf(b, ", \"group_by\": \"%s\"}",
                            cfg->group_normalized ? "normalized" : "name");
    rc = rc ? rc : mp_buf_puts(b, ", \"total_duration_us\": ");
    rc = rc ? rc : mp_json_double(b, r->total_us);
    rc = rc ? rc : mp_buf_printf(b, ", \"num_ranks\": %zu, \"top_kernels\": ", r->n_ranks);
    rc = rc ? rc
            : json_kernels(r, b, r->merged, r->n_merged, r->total_us, cfg->group_normalized,
                           cfg->sources);
    rc = rc ? rc : mp_buf_puts(b, ", \"clamped_trace_paths\": [], \"errors\": [");
    bool first = true;
    for (size_t i = 0; i < r->n_ranks && !rc; i++) {
        if (!r->ranks[i].error)
            continue;
        rc = first ? 0 : mp_buf_puts(b, ", ");
        first = false;
        rc = rc ? rc : mp_json_str(b, r->ranks[i].error, strlen(r->ranks[i].error));
    }
    rc = rc ? rc : mp_buf_puts(b, "], \"csv_path\": ");
    rc = rc ? rc : json_str_or_null(b, csv_path);
    rc = rc ? rc : mp_buf_puts(b, ", \"output_dir\": ");
    rc = rc ? rc : json_str_or_null(b, output_dir);
    rc = rc ? rc : mp_buf_puts(b, ", \"trace_dir\": ");
    rc = rc ? rc : json_str_or_null(b, r->trace_dir);
    rc = rc ? rc : mp_buf_puts(b, ", \"ranks\": [");
    for (size_t i = 0; i < r->n_ranks && !rc; i++) {
        const struct mp_gap_rank *rk = &r->ranks[i];
        rc = mp_buf_printf(b, "%s{\"rank\": %d, \"trace_file\": ", i ? ", " : "", rk->rank);
        rc = rc ? rc : mp_json_str(b, rk->trace_file, strlen(rk->trace_file));
        rc = rc ? rc : mp_buf_puts(b, ", \"total_duration_us\": ");
        rc = rc ? rc : mp_json_double(b, rk->total_us);
        rc = rc ? rc
                : mp_buf_printf(b,
                                ", \"num_kernels\": %zu, \"events\": %llu, "
                                "\"bytes\": %llu, \"two_pass\": %s, \"top_kernels\": ",
                                rk->n_kernels_all, (unsigned long long)rk->events,
                                (unsigned long long)rk->bytes, rk->two_pass ? "true" : "false");
        rc = rc ? rc
                : json_kernels(r, b, rk->kernels, rk->n_kernels, rk->total_us,
                               cfg->group_normalized, NULL);
        rc = rc ? rc : mp_buf_puts(b, ", \"error\": ");
        rc = rc ? rc : json_str_or_null(b, rk->error);
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    double mbps = r->seconds > 0 ? (double)r->bytes / 1e6 / r->seconds : 0.0;
    rc = rc ? rc
            : mp_buf_printf(b,
                            "], \"stats\": {\"bytes\": %llu, \"events\": %llu, "
                            "\"seconds\": %.6f, \"mb_per_s\": %.1f}}",
                            (unsigned long long)r->bytes, (unsigned long long)r->events, r->seconds,
                            mbps);
    return rc;
}

/* Number of characters (UTF-8 code points) in s. */
static size_t u8len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Byte length of the first `chars` code points of s. */
static size_t u8prefix(const char *s, size_t chars)
{
    size_t i = 0, n = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (n == chars)
                break;
            n++;
        }
    }
    return i;
}

int mp_gap_summary(const struct mp_gap_result *r, const struct mp_gap_config *cfg,
                   const char *output_dir, struct mp_buf *b)
{
    char s[64], e[64];
    mp_fmt_pyfloat(cfg->start_pct, s, sizeof(s));
    mp_fmt_pyfloat(cfg->end_pct, e, sizeof(e));
    int rc = mp_buf_printf(b, "\nGap Analysis (%s%%-%s%% window, category-filtered)\n", s, e);
    rc = rc ? rc
            : mp_buf_printf(b, "%s\n",
                            "============================================================");
    rc = rc ? rc : mp_buf_printf(b, "Ranks analyzed: %zu\n", r->n_ranks);
    if (!cfg->categories_all && cfg->n_categories > 0) {
        rc = rc ? rc : mp_buf_puts(b, "Categories: ");
        for (int i = 0; i < cfg->n_categories && !rc; i++)
            rc = mp_buf_printf(b, "%s%s", i ? ", " : "", cfg->categories[i]);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    if (cfg->n_ignore > 0) {
        rc = rc ? rc : mp_buf_puts(b, "Ignore: ");
        for (int i = 0; i < cfg->n_ignore && !rc; i++)
            rc = mp_buf_printf(b, "%s%s", i ? ", " : "", cfg->ignore[i]);
        rc = rc ? rc : mp_buf_putc(b, '\n');
    }
    rc = rc ? rc : mp_buf_printf(b, "Total duration: %.2f us\n", r->total_us);
    rc = rc ? rc
            : mp_buf_printf(b, "\n%-50s %6s %15s %12s %8s\n", "Name", "Calls", "Self CUDA (us)",
                            "Avg (us)", "% Total");
    for (int i = 0; i < 95 && !rc; i++)
        rc = mp_buf_putc(b, '-');
    rc = rc ? rc : mp_buf_putc(b, '\n');
    for (size_t i = 0; i < r->n_merged && !rc; i++) {
        const struct mp_gap_kernel *k = &r->merged[i];
        size_t chars = u8len(k->name);
        rc = mp_buf_puts(b, "  ");
        if (chars <= 50) {
            rc = rc ? rc : mp_buf_puts(b, k->name);
            for (size_t p = chars; p < 50 && !rc; p++)
                rc = mp_buf_putc(b, ' ');
        } else {
            rc = rc ? rc : mp_buf_append(b, k->name, u8prefix(k->name, 47));
            rc = rc ? rc : mp_buf_puts(b, "...");
        }
        double avg = k->calls ? k->total_us / (double)k->calls : 0.0;
        rc = rc ? rc
                : mp_buf_printf(b, " %6llu %15.2f %12.2f %7.2f%%\n", (unsigned long long)k->calls,
                                k->total_us, avg, pct_of(k->total_us, r->total_us));
    }
    rc = rc ? rc : mp_buf_printf(b, "\nOutput: %s\n", output_dir);
    return rc;
}
