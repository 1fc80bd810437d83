/* Magpie's TraceLens "pytorch" (alias "classic") analysis mode after a
 * profiled benchmark, done with magpie's own TraceLens-compatible reports
 * instead of TraceLens's CLIs:
 *  - the standard performance report (TraceLens_generate_perf_report_pytorch
 *    --enable_kernel_summary, as `magpie trace report`) of the first worker
 *    trace into <workspace>/tracelens_rank0_csvs/ (export_format csv) or
 *    <workspace>/tracelens_rank0_report.xlsx (excel);
 *  - with TP > 1 and at least TP trace files, the multi-rank collective
 *    report (TraceLens_generate_multi_rank_collective_report_pytorch, as
 *    `magpie trace collective`) into <workspace>/tracelens_collective_csvs/
 *    or <workspace>/tracelens_collective_report.xlsx.
 * Trace files are Magpie's: every *.json.gz and *.json under torch_trace/
 * (recursively), those named *async_llm* (vLLM's front-end process) dropped
 * when others exist, in Python's sorted(Path) order. Paths, file names and
 * the tracelens_analysis object follow Magpie's benchmark (its
 * modes/benchmark/tracelens.py); docs/compatibility.md says what differs.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/roofline.h>
#include <magpie/serve.h>
#include <magpie/trace.h>
#include <magpie/tracelens.h>

#include "serve_int.h"

#define MAX_TRACE_FILES 4096

struct paths {
    char **v;
    size_t n, cap;
};

static void paths_fini(struct paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

static int paths_add(struct paths *p, const char *s)
{
    if (MP_GROW(p->v, p->cap, p->n + 1, 16))
        return MP_ENOMEM;
    if (!(p->v[p->n] = mp_strdup(s)))
        return MP_ENOMEM;
    p->n++;
    return 0;
}

/* Path.rglob("*.json.gz") + rglob("*.json"): the trace module's walk,
 * hidden names included as pathlib's glob takes them */
static int add_trace(const char *path, bool under_capture, void *user)
{
    (void)under_capture;
    struct paths *out = user;
    return out->n < MAX_TRACE_FILES ? paths_add(out, path) : 0;
}

/* pathlib's order: component by component, each compared as a string */
static int path_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    for (;;) {
        size_t nx = strcspn(x, "/"), ny = strcspn(y, "/");
        size_t n = nx < ny ? nx : ny;
        int c = memcmp(x, y, n);
        if (c)
            return c;
        if (nx != ny)
            return nx < ny ? -1 : 1;
        if (!x[nx] || !y[ny])
            return x[nx] ? 1 : y[ny] ? -1 : 0;
        x += nx + 1;
        y += ny + 1;
    }
}

static bool is_async_llm(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char low[512];
    size_t n = 0;
    for (; base[n] && n + 1 < sizeof(low); n++)
        low[n] = (char)tolower((unsigned char)base[n]);
    low[n] = 0;
    return strstr(low, "async_llm") != NULL;
}

/* Magpie's _find_trace_files */
static int find_traces(const char *trace_dir, struct paths *out)
{
    struct paths all = {0};
    int rc = mp_trace_files_each(trace_dir, true, add_trace, &all);
    if (rc && rc != MP_ENOTFOUND) {
        paths_fini(&all);
        return rc;
    }
    for (size_t i = 0; i < all.n && !rc; i++)
        if (!is_async_llm(all.v[i]))
            rc = paths_add(out, all.v[i]);
    if (!rc && out->n == 0)
        for (size_t i = 0; i < all.n && !rc; i++)
            rc = paths_add(out, all.v[i]);
    paths_fini(&all);
    if (!rc && out->n > 1)
        qsort(out->v, out->n, sizeof(char *), path_cmp);
    return rc;
}

struct tl_out {
    struct paths files, errors, warnings;
};

static void note(struct paths *list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct paths *list, const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    (void)paths_add(list, buf);
}

/* Writes one report as Magpie's CSV directory or workbook, listing what it wrote. */
static int write_report(const struct mp_report *rep, const char *ws, const char *stem,
                        const char *xlsx_name, bool excel, const char *title, struct tl_out *t,
                        struct mp_diag *d)
{
    char path[4400];
    int rc;
    if (excel) {
        snprintf(path, sizeof(path), "%s/%s", ws, xlsx_name);
        if ((rc = mp_report_write_xlsx(rep, path, d)) == 0)
            rc = paths_add(&t->files, path);
        return rc;
    }
    snprintf(path, sizeof(path), "%s/%s", ws, stem);
    if ((rc = mp_fs_mkdirs(path, d)) || (rc = mp_report_write_csvs(rep, path, d)))
        return rc;
    for (size_t i = 0; i < rep->n && !rc; i++) {
        char f[4600];
        snprintf(f, sizeof(f), "%s/%s.csv", path, rep->sheets[i].name);
        rc = paths_add(&t->files, f);
    }
    if (title) { /* magpie's one-page view beside the CSVs, as `magpie trace report` */
        char html[4600];
        snprintf(html, sizeof(html), "%s/report.html", path);
        rc = rc ? rc : mp_report_write_html(rep, html, title, d);
    }
    return rc;
}

static void perf_report(const struct mp_serve_config *c, const char *trace, const char *ws,
                        struct tl_out *t)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_report_opts o;
    mp_report_opts_defaults(&o);
    o.kernel_summary = true;      /* Magpie passes --enable_kernel_summary */
    o.short_kernel_study = false; /* and not --short_kernel_study */
    struct mp_roofline_arch arch;
    int rc = 0;
    if (c->tracelens_gpu_arch_config) {
        rc = mp_roofline_arch_load_json(c->tracelens_gpu_arch_config, &arch, &d);
        o.arch = &arch;
    }
    struct mp_report *rep = NULL;
    if (!rc)
        rc = mp_report_build(trace, &o, &rep, &d);
    const char *base = strrchr(trace, '/');
    if (!rc)
        rc = write_report(rep, ws, "tracelens_rank0_csvs", "tracelens_rank0_report.xlsx",
                          c->tracelens_excel, base ? base + 1 : trace, t, &d);
    if (rc)
        note(&t->errors, "perf report of %s failed: %s", trace, d.msg[0] ? d.msg : mp_strerror(rc));
    mp_report_free(rep);
}

static void collective_report(const struct mp_serve_config *c, const struct paths *traces,
                              size_t world, const char *ws, struct tl_out *t)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    size_t n = world;
    char **paths = NULL;
    /* TraceLens's default rank regex over Magpie's file list */
    int rc = mp_nccl_find_ranks((const char *const *)traces->v, traces->n,
                                "rank[\\[\\-_/]?(?P<rank>\\d+)", &n, &paths, &d);
    struct mp_report *rep = NULL;
    if (!rc) {
        struct mp_nccl_opts o = {
            .paths = (const char *const *)paths, .world_size = n, .detailed = true};
        rc = mp_nccl_report_build(&o, &rep, &d);
        mp_nccl_paths_free(paths, n);
    }
    if (!rc)
        rc = write_report(rep, ws, "tracelens_collective_csvs", "tracelens_collective_report.xlsx",
                          c->tracelens_excel, NULL, t, &d);
    if (rc)
        note(&t->errors, "multi-rank collective report failed: %s",
             d.msg[0] ? d.msg : mp_strerror(rc));
    mp_report_free(rep);
}

static int jlist(struct mp_buf *b, const char *key, const struct paths *p)
{
    int rc = mp_buf_printf(b, ", \"%s\": [", key);
    for (size_t i = 0; i < p->n; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_str(b, p->v[i], strlen(p->v[i]));
    }
    return rc | mp_buf_putc(b, ']');
}

size_t serve_tracelens_pytorch(const struct mp_serve_config *c, const char *trace_dir,
                               const char *ws, struct mp_buf *json, char *first_error,
                               size_t first_error_len)
{
    struct tl_out t = {0};
    struct paths traces = {0};
    long tp = 8; /* Magpie: int(envs.get("TP", 8)) */
    if (mp_serve_config_intenv(c, "TP", 8, &tp, NULL) || tp < 1)
        tp = 1;
    int rc = find_traces(trace_dir, &traces);
    if (rc)
        note(&t.errors, "cannot list the traces in %s: %s", trace_dir, mp_strerror(rc));
    else if (traces.n == 0)
        note(&t.errors, "No trace files found in %s", trace_dir);
    if (traces.n && c->tracelens_perf_report)
        perf_report(c, traces.v[0], ws, &t);
    if (traces.n && c->tracelens_multi_rank && tp > 1) {
        if (traces.n >= (size_t)tp)
            collective_report(c, &traces, (size_t)tp, ws, &t);
        else
            note(&t.warnings,
                 "multi-rank collective report skipped: %zu trace file(s) for TP=%ld ranks",
                 traces.n, tp);
    }
    int w = mp_buf_puts(json, "{\"enabled\": true, \"analysis_mode\": \"pytorch\", "
                              "\"trace_dir\": ");
    w |= mp_json_str(json, trace_dir, strlen(trace_dir));
    w |= mp_buf_printf(json, ", \"num_ranks\": %ld, \"export_format\": \"%s\"", tp,
                       c->tracelens_excel ? "excel" : "csv");
    w |= mp_buf_puts(json, ", \"rank0_trace\": ");
    if (traces.n && c->tracelens_perf_report)
        w |= mp_json_str(json, traces.v[0], strlen(traces.v[0]));
    else
        w |= mp_buf_puts(json, "null");
    w |= jlist(json, "output_files", &t.files);
    w |= jlist(json, "errors", &t.errors);
    w |= jlist(json, "warnings", &t.warnings);
    w |= mp_buf_putc(json, '}');
    if (w) {
        mp_buf_reset(json);
        note(&t.errors, "out of memory");
    }
    size_t ne = t.errors.n;
    if (ne && first_error)
        snprintf(first_error, first_error_len, "%s", t.errors.v[0]);
    paths_fini(&traces);
    paths_fini(&t.files);
    paths_fini(&t.errors);
    paths_fini(&t.warnings);
    return ne;
}
