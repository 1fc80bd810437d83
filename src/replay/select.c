/* The ops a replay works on: the rows of the TraceLens-compatible
 * unified_perf_summary that mp_report_build makes (one row per op name and
 * argument signature, sorted by total kernel time, the ranking ops_summary
 * and the gap analysis use), filtered by --op / --category / --row / --top.
 * The report is the one `magpie trace report` writes, so the roofline
 * figures are the roofline module's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/trace_capture.h>
#include <magpie/tracelens.h>

#include "replay_int.h"

enum {
    C_NAME,
    C_CAT,
    C_DIMS,
    C_TYPES,
    C_STRIDES,
    C_CONC,
    C_COUNT,
    C_KMEAN,
    C_KMEDIAN,
    C_KSUM,
    C_GFLOPS,
    C_MB,
    C_FPB,
    C_SPEC,
    C_BOUND,
    C_RLUS,
    C_PCT,
    C_KDET,
    C_N
};

static const char *const col_names[C_N] = {
    "name",
    "op category",
    "Input Dims",
    "Input type",
    "Input Strides",
    "Concrete Inputs",
    "operation_count",
    "Kernel Time (\xc2\xb5s)_mean",
    "Kernel Time (\xc2\xb5s)_median",
    "Kernel Time (\xc2\xb5s)_sum",
    "GFLOPS",
    "Data Moved (MB)",
    "FLOPS/Byte",
    "Compute Spec",
    "Roofline Bound",
    "Roofline Time (\xc2\xb5s)_first",
    "Pct Roofline_mean",
    "kernel_details_summary",
};

/* The 'name' values of a kernel_details_summary cell, ' | '-joined. */
static int kernel_names(const char *cell, char **out)
{
    struct mp_buf b;
    mp_buf_init(&b, 1 << 20);
    int rc = 0;
    const char *p = cell;
    while (!rc && (p = strstr(p, "'name': ")) != NULL) {
        p += 8;
        char q = *p;
        if (q != '\'' && q != '"')
            continue;
        p++;
        const char *e = p;
        while (*e && *e != q)
            e += (*e == '\\' && e[1]) ? 2 : 1;
        if (b.len)
            rc = mp_buf_puts(&b, " | ");
        rc = rc ? rc : mp_buf_append(&b, p, (size_t)(e - p));
        p = *e ? e + 1 : e;
    }
    *out = rc ? NULL : mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return rc ? rc : *out ? 0 : MP_ENOMEM;
}

static int dupf(const struct mp_csv_rec *rec, const int *ix, int c, char **out)
{
    const char *s =
        ix[c] >= 0 && (size_t)ix[c] < rec->n ? mp_csv_rec_field(rec, (size_t)ix[c]) : "";
    *out = mp_strdup(s);
    return *out ? 0 : MP_ENOMEM;
}

static double numf(const struct mp_csv_rec *rec, const int *ix, int c)
{
    if (ix[c] < 0 || (size_t)ix[c] >= rec->n)
        return 0;
    return strtod(mp_csv_rec_field(rec, (size_t)ix[c]), NULL);
}

static int fill_op(const struct mp_csv_rec *rec, const int *ix, long rank, struct mp_replay_op *op)
{
    op->rank = rank;
    op->kernels_match = -1;
    int rc = dupf(rec, ix, C_NAME, &op->name);
    rc = rc ? rc : dupf(rec, ix, C_CAT, &op->category);
    rc = rc ? rc : dupf(rec, ix, C_DIMS, &op->dims);
    rc = rc ? rc : dupf(rec, ix, C_DIMS, &op->shape_key);
    rc = rc ? rc : dupf(rec, ix, C_TYPES, &op->types);
    rc = rc ? rc : dupf(rec, ix, C_STRIDES, &op->strides);
    rc = rc ? rc : dupf(rec, ix, C_CONC, &op->concrete);
    rc = rc ? rc : dupf(rec, ix, C_GFLOPS, &op->gflops);
    rc = rc ? rc : dupf(rec, ix, C_MB, &op->data_mb);
    rc = rc ? rc : dupf(rec, ix, C_FPB, &op->flops_per_byte);
    rc = rc ? rc : dupf(rec, ix, C_SPEC, &op->compute_spec);
    rc = rc ? rc : dupf(rec, ix, C_BOUND, &op->roofline_bound);
    rc = rc ? rc : dupf(rec, ix, C_RLUS, &op->roofline_us);
    rc = rc ? rc : dupf(rec, ix, C_PCT, &op->pct_roofline);
    if (!rc)
        rc = kernel_names(ix[C_KDET] >= 0 && (size_t)ix[C_KDET] < rec->n
                              ? mp_csv_rec_field(rec, (size_t)ix[C_KDET])
                              : "",
                          &op->trace_kernels);
    op->calls = (long)numf(rec, ix, C_COUNT);
    op->trace_mean_us = numf(rec, ix, C_KMEAN);
    op->trace_median_us = numf(rec, ix, C_KMEDIAN);
    op->trace_sum_us = numf(rec, ix, C_KSUM);
    return rc;
}

/* The row's kernels (kernel_details_summary) include o->kernel exactly. */
static bool has_kernel(const struct mp_replay_opts *o, const struct mp_csv_rec *rec, const int *ix)
{
    if (ix[C_KDET] < 0 || (size_t)ix[C_KDET] >= rec->n)
        return false;
    char *names = NULL;
    if (kernel_names(mp_csv_rec_field(rec, (size_t)ix[C_KDET]), &names))
        return false;
    size_t kl = strlen(o->kernel);
    bool found = false;
    for (const char *p = names; p && *p && !found;) {
        const char *e = strstr(p, " | ");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        found = l == kl && strncmp(p, o->kernel, kl) == 0;
        p = e ? e + 3 : NULL;
    }
    free(names);
    return found;
}

size_t rp_split_op_len(const char *name)
{
    const char *a = strstr(name, "->");
    const char *c = strstr(name, "::");
    return a && c && c < a ? (size_t)(a - name) : 0;
}

/* Whether a row is of op: its name, or one of the op's kernels that
 * TraceLens ranks apart ("aten::sort->KERNEL (Synthetic Op)"). */
static bool op_named(const char *row, const char *op)
{
    size_t n = strlen(op);
    return strncmp(row, op, n) == 0 && (row[n] == 0 || strncmp(row + n, "->", 2) == 0);
}

static bool keep_row(const struct mp_replay_opts *o, const struct mp_csv_rec *rec, const int *ix,
                     long rank)
{
    if (o->row > 0)
        return rank == o->row;
    if (o->kernel && !has_kernel(o, rec, ix))
        return false;
    if (o->op && !op_named(mp_csv_rec_field(rec, (size_t)ix[C_NAME]), o->op))
        return false;
    if (o->category && ix[C_CAT] >= 0 &&
        strcmp(mp_csv_rec_field(rec, (size_t)ix[C_CAT]), o->category) != 0)
        return false;
    return true;
}

/* Selects the rows of the report's unified_perf_summary sheet. */
static int select_rows(const struct mp_replay_opts *o, const struct mp_buf *csv,
                       struct mp_replay_result *r, struct mp_diag *d)
{
    const char *p = csv->data ? csv->data : "", *end = p + csv->len;
    struct mp_csv_rec rec = {0};
    int ix[C_N];
    int rc = mp_csv_next(&p, end, &rec, 4096);
    if (rc != 1) {
        mp_csv_rec_fini(&rec);
        return mp_diag_set(d, MP_EPARSE, "unified_perf_summary has no header");
    }
    for (int c = 0; c < C_N; c++) {
        ix[c] = -1;
        for (size_t i = 0; i < rec.n; i++)
            if (strcmp(mp_csv_rec_field(&rec, i), col_names[c]) == 0)
                ix[c] = (int)i;
    }
    if (ix[C_NAME] < 0 || ix[C_DIMS] < 0 || ix[C_TYPES] < 0) {
        mp_csv_rec_fini(&rec);
        return mp_diag_set(d, MP_EPARSE, "unified_perf_summary lacks the argument columns");
    }
    size_t cap = 0;
    long rank = 0;
    rc = 0;
    while (!rc && (rc = mp_csv_next(&p, end, &rec, 4096)) == 1) {
        rc = 0;
        rank++;
        if (!keep_row(o, &rec, ix, rank) || (o->top > 0 && r->n >= (size_t)o->top))
            continue;
        if (MP_GROW(r->ops, cap, r->n + 1, 16)) {
            rc = MP_ENOMEM;
            break;
        }
        memset(&r->ops[r->n], 0, sizeof(r->ops[0]));
        r->ops[r->n].n = (int)r->n + 1;
        rc = fill_op(&rec, ix, rank, &r->ops[r->n]);
        r->n++;
    }
    mp_csv_rec_fini(&rec);
    r->n_rows = (size_t)rank;
    if (rc < 0)
        return mp_diag_set(d, rc, "reading unified_perf_summary: %s", mp_strerror(rc));
    return 0;
}

/* The collectives of the report's coll_analysis sheet (TraceLens leaves
 * them out of unified_perf_summary): appended after the selected rows as
 * ops that are not replayable alone, so the summary lists them with the
 * reason (replay.c) instead of dropping them. Only for a selection without
 * --op/--kernel/--category/--row. */
static int add_collectives(const struct mp_replay_opts *o, const struct mp_buf *csv,
                           struct mp_replay_result *r)
{
    if (o->row > 0 || o->op || o->kernel || o->category)
        return 0;
    const char *p = csv->data ? csv->data : "", *end = p + csv->len;
    struct mp_csv_rec rec = {0};
    static const char *const want[] = {"Collective name",     "dtype",   "In msg nelems",
                                       "Process Group Ranks", "dur_sum", "dur_mean",
                                       "operation_count"};
    int ix[7];
    int rc = mp_csv_next(&p, end, &rec, 4096);
    if (rc != 1) {
        mp_csv_rec_fini(&rec);
        return rc < 0 ? rc : 0;
    }
    for (int c = 0; c < 7; c++) {
        ix[c] = -1;
        for (size_t i = 0; i < rec.n; i++)
            if (strcmp(mp_csv_rec_field(&rec, i), want[c]) == 0)
                ix[c] = (int)i;
        if (ix[c] < 0) {
            mp_csv_rec_fini(&rec);
            return 0;
        }
    }
    size_t cap = r->n;
    rc = 0;
    while (!rc && (rc = mp_csv_next(&p, end, &rec, 4096)) == 1) {
        rc = 0;
        if (rec.n < 7)
            continue;
        const char *f[7];
        for (int c = 0; c < 7; c++)
            f[c] = (size_t)ix[c] < rec.n ? mp_csv_rec_field(&rec, (size_t)ix[c]) : "";
        if (MP_GROW(r->ops, cap, r->n + 1, 4)) {
            rc = MP_ENOMEM;
            break;
        }
        struct mp_replay_op *op = &r->ops[r->n];
        memset(op, 0, sizeof(*op));
        op->n = (int)r->n + 1;
        op->kernels_match = -1;
        char name[160], key[512];
        snprintf(name, sizeof(name), "nccl:%s", f[0]);
        snprintf(key, sizeof(key), "%s elements of %s over ranks %s", f[2], f[1], f[3]);
        op->calls = strtol(f[6], NULL, 10);
        op->trace_sum_us = strtod(f[4], NULL);
        op->trace_mean_us = strtod(f[5], NULL);
        char **cells[] = {&op->category,       &op->dims,           &op->types,
                          &op->strides,        &op->concrete,       &op->gflops,
                          &op->data_mb,        &op->flops_per_byte, &op->compute_spec,
                          &op->roofline_bound, &op->roofline_us,    &op->pct_roofline,
                          &op->trace_kernels};
        op->name = mp_strdup(name);
        op->shape_key = mp_strdup(key);
        bool ok = op->name && op->shape_key;
        for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++)
            ok = ok && (*cells[i] = mp_strdup(i == 0 ? "collective" : ""));
        r->n++;
        if (!ok)
            rc = MP_ENOMEM;
    }
    mp_csv_rec_fini(&rec);
    return rc < 0 ? rc : 0;
}

int rp_select(const struct mp_replay_opts *o, struct mp_replay_result *r, struct mp_report **keep,
              struct mp_diag *d)
{
    *keep = NULL;
    struct mp_report_opts ro;
    mp_report_opts_defaults(&ro);
    ro.arch = o->arch;
    ro.arch_auto = o->arch_auto && !o->arch;
    ro.serial = o->serial;
    ro.keep_trace = true; /* rp_producers walks it again */
    ro.capture_folder = o->capture_folder;
    struct mp_capture_stats cs = {0};
    ro.capture_stats = &cs;
    struct mp_report *rep = NULL;
    int rc = mp_report_build(o->trace, &ro, &rep, d);
    if (rc)
        return rc;
    if (o->capture_folder)
        snprintf(r->capture_note, sizeof(r->capture_note),
                 "capture merge: %zu of %zu graph launch(es) merged, %zu capture events added, "
                 "%zu GPU events linked%s",
                 cs.merged, cs.graph_launches, cs.events_added, cs.kernels_linked,
                 cs.failed              ? " (failed: nothing merged)"
                 : cs.merged == 0       ? " (nothing merged: these captures do not match the trace)"
                 : cs.details_generated ? " (execution_details.json inferred)"
                                        : "");
    if (rep->has_arch)
        snprintf(r->arch_name, sizeof(r->arch_name), "%s", rep->arch_name);
    const struct mp_report_sheet *us = NULL, *coll = NULL;
    for (size_t i = 0; i < rep->n; i++) {
        if (strcmp(rep->sheets[i].name, "unified_perf_summary") == 0)
            us = &rep->sheets[i];
        if (strcmp(rep->sheets[i].name, "coll_analysis") == 0)
            coll = &rep->sheets[i];
    }
    if (!us)
        rc = mp_diag_set(d, MP_ENOTFOUND, "the report of %s has no unified_perf_summary", o->trace);
    else
        rc = select_rows(o, &us->csv, r, d);
    if (!rc && coll && r->n && add_collectives(o, &coll->csv, r) == MP_ENOMEM)
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
    if (rc)
        mp_report_free(rep);
    else
        *keep = rep;
    if (!rc && r->n == 0) {
        size_t gpu = *keep ? (*keep)->gpu_events : 0;
        mp_report_free(*keep);
        *keep = NULL;
        mp_diag_set_file(d, o->trace);
        if (r->n_rows == 0 && gpu == 0)
            rc = mp_diag_set(d, MP_EINVAL,
                             "the trace holds no GPU kernels (a CPU-only run, or the profiler "
                             "did not see the device): op replay ranks ops by the kernel time "
                             "they launched");
        else if (o->row > 0)
            rc =
                mp_diag_set(d, MP_EINVAL, "--row %ld: the ranking has %zu rows", o->row, r->n_rows);
        else
            rc = mp_diag_set(d, MP_EINVAL, "no op row matches%s%s%s%s%s%s (of %zu rows)",
                             o->op ? " --op " : "", o->op ? o->op : "",
                             o->category ? " --category " : "", o->category ? o->category : "",
                             o->kernel ? " --kernel " : "", o->kernel ? o->kernel : "", r->n_rows);
    }
    return rc;
}
