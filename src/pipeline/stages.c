/* Magpie's inference post-processing, natively (docs/magpie-compat.md):
 * find the rank-0 serving trace, split it at its step annotations (steady
 * state windows and one file per step, as TraceLens's splitter), pick one
 * step per stage (prefill-decode mix, decode-only, prefill-only: the largest
 * batch, for decode the concurrency closest to CONC, then the median by GPU
 * busy time), write the inference report of each pick under
 * tracelens/<stage>/ with its HTML view, the compact
 * <stage>_ISL<i>_OSL<o>_CONC<c>_kernel_roofline_simple.csv beside them, and
 * the tracelens_analysis JSON object Magpie puts in benchmark_report.json.
 */
#include <ctype.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/pipeline.h>
#include <magpie/roofline.h>
#include <magpie/trace_steps.h>
#include <magpie/tracelens.h>

enum { ST_PD, ST_DECODE, ST_PREFILL, ST_N };

static const char *const stage_name[ST_N] = {"prefilldecode", "decode", "prefill"};
static const char *const stage_label[ST_N] = {"prefilldecode", "decode_only", "prefill_only"};
static const char *const stage_kind[ST_N] = {"PD", "DECODE", "PREFILL"};

struct pick {
    bool found;
    double bs;
    const char *path; /* borrowed from the split result */
    long row;
    bool has_conc;
    double conc;
    long gpu_events;
    double gpu_dur, gpu_busy; /* as execution_details.csv rounds them */
    char reason[256];
};

/* Stage names with Magpie's aliases; -1 when unknown. */
static int stage_of(const char *s, size_t n)
{
    static const struct {
        const char *name;
        int st;
    } alias[] = {
        {"prefilldecode", ST_PD},
        {"pd", ST_PD},
        {"mixed", ST_PD},
        {"prefill_decode", ST_PD},
        {"prefill-decode", ST_PD},
        {"decode", ST_DECODE},
        {"decode_only", ST_DECODE},
        {"decode-only", ST_DECODE},
        {"prefill", ST_PREFILL},
        {"prefill_only", ST_PREFILL},
        {"prefill-only", ST_PREFILL},
    };

    for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
        if (strlen(alias[i].name) == n && strncasecmp(alias[i].name, s, n) == 0)
            return alias[i].st;
    return -1;
}

int mp_stages_parse_list(const char *list, int *stages, int *n, struct mp_diag *d)
{
    *n = 0;
    if (!list || !*list) {
        for (int i = 0; i < ST_N; i++)
            stages[(*n)++] = i;
        return 0;
    }
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if (e == p)
            break;
        int st = stage_of(p, (size_t)(e - p));
        if (st < 0) {
            mp_diag_set_field(d, "stages");
            return mp_diag_set(d, MP_EINVAL,
                               "unknown stage '%.*s' (expected prefilldecode, decode or prefill)",
                               (int)(e - p), p);
        }
        bool dup = false;
        for (int i = 0; i < *n; i++)
            dup |= stages[i] == st;
        if (!dup && *n < ST_N)
            stages[(*n)++] = st;
        p = e;
    }
    return 0;
}

/* Magpie's rank-0 patterns, first sorted match of the first pattern that
 * matches (not recursive). malloc'd, or NULL. */
static char *locate_rank0(const char *dir, const char *framework)
{
    static const char *const vllm[] = {"*-rank_0.*trace.json.gz",
                                       "*rank0*.pt.trace.json.gz",
                                       "*rank-0*.trace.json.gz",
                                       "*.trace.json.gz",
                                       "*.json.gz",
                                       NULL};
    static const char *const other[] = {"merged-*.trace.json.gz",
                                        "*TP-0*.trace.json.gz",
                                        "*-TP-0-DECODE.trace.json.gz",
                                        "*-TP-0-EXTEND.trace.json.gz",
                                        "*.trace.json.gz",
                                        "*.json.gz",
                                        NULL};
    const char *const *pats = framework && strcmp(framework, "vllm") != 0 ? other : vllm;
    for (; *pats; pats++) {
        struct mp_buf g;
        mp_buf_init(&g, 0);
        /* glob needs its metacharacters in dir escaped */
        for (const char *c = dir; *c; c++) {
            if (strchr("*?[\\", *c))
                mp_buf_putc(&g, '\\');
            mp_buf_putc(&g, *c);
        }
        mp_buf_putc(&g, '/');
        mp_buf_puts(&g, *pats);
        glob_t gl;
        int rc = glob(mp_buf_cstr(&g), 0, NULL, &gl);
        mp_buf_fini(&g);
        if (rc == 0 && gl.gl_pathc > 0) {
            char *best = NULL;
            for (size_t i = 0; i < gl.gl_pathc; i++)
                if (!best || strcmp(gl.gl_pathv[i], best) < 0)
                    best = gl.gl_pathv[i];
            char *r = mp_strdup(best);
            globfree(&gl);
            return r;
        }
        if (rc == 0)
            globfree(&gl);
    }
    return NULL;
}

static double round2(double v)
{
    /* execution_details.csv holds "%.2f"; Magpie reads that text back */
    char b[64];
    snprintf(b, sizeof(b), "%.2f", v);
    return strtod(b, NULL);
}

static bool is_single_step(const struct mp_trace_split_entry *e)
{
    const char *b = strrchr(e->output_path, '/');
    b = b ? b + 1 : e->output_path;
    static const char *const windows[] = {"mixed_steady_state_", "prefilldecode_steady_state_",
                                          "decode_only_steady_state_"};
    for (size_t i = 0; i < 3; i++)
        if (strncmp(b, windows[i], strlen(windows[i])) == 0)
            return false;
    return e->nsteps <= 1;
}

static int kind_of(const struct mp_trace_split_entry *e)
{
    if (e->phase.num_prefilldecode == 1)
        return ST_PD;
    if (e->phase.num_decode == 1)
        return ST_DECODE;
    if (e->phase.num_prefill == 1)
        return ST_PREFILL;
    return -1;
}

struct cand {
    size_t row;
    double busy;
};

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->busy != y->busy)
        return x->busy < y->busy ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* _pick_largest_batch_traces / _select_trace_candidate over the split's rows. */
static void pick_stage(const struct mp_trace_split_result *sr, int st, bool have_conc, double conc,
                       struct pick *pk)
{
    memset(pk, 0, sizeof(*pk));
    size_t n = sr->n;
    struct cand *c = malloc(sizeof(*c) * (n ? n : 1));
    if (!c)
        return;
    size_t nc = 0;
    double max_bs = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const struct mp_trace_split_entry *e = &sr->entries[i];
        if (!is_single_step(e) || kind_of(e) != st || !mp_fs_exists(e->output_path))
            continue;
        if (e->num_gpu_events <= 0 || round2(e->gpu_duration) <= 0 ||
            round2(e->gpu_busy_duration) <= 0)
            continue;
        c[nc++] = (struct cand){i, round2(e->gpu_busy_duration)};
        if ((double)e->phase.avg_bs > max_bs)
            max_bs = (double)e->phase.avg_bs;
    }
    size_t w = 0;
    for (size_t i = 0; i < nc; i++)
        if ((double)sr->entries[c[i].row].phase.avg_bs == max_bs)
            c[w++] = c[i];
    nc = w;
    if (st == ST_DECODE && have_conc && nc) {
        double best = INFINITY;
        for (size_t i = 0; i < nc; i++) {
            double dlt = fabs((double)sr->entries[c[i].row].phase.avg_conc - conc);
            best = dlt < best ? dlt : best;
        }
        w = 0;
        for (size_t i = 0; i < nc; i++)
            if (fabs((double)sr->entries[c[i].row].phase.avg_conc - conc) == best)
                c[w++] = c[i];
        nc = w;
    }
    if (nc) {
        qsort(c, nc, sizeof(*c), cmp_cand);
        const struct mp_trace_split_entry *e = &sr->entries[c[nc / 2].row];
        pk->found = true;
        pk->bs = (double)e->phase.avg_bs;
        pk->path = e->output_path;
        pk->row = (long)c[nc / 2].row;
        pk->has_conc = true;
        pk->conc = (double)e->phase.avg_conc;
        pk->gpu_events = e->num_gpu_events;
        pk->gpu_dur = round2(e->gpu_duration);
        pk->gpu_busy = round2(e->gpu_busy_duration);
        char conc_txt[64] = "";
        if (st == ST_DECODE && have_conc)
            snprintf(conc_txt, sizeof(conc_txt), "; closest phase_avg_conc to CONC=%g", conc);
        snprintf(pk->reason, sizeof(pk->reason),
                 "largest phase_avg_bs among valid single-iteration traces with GPU work%s; "
                 "median gpu_busy_duration tie-break",
                 conc_txt);
    } else {
        snprintf(pk->reason, sizeof(pk->reason), "no valid single-iteration trace with GPU work");
    }
    free(c);
}

/* ---- the compact roofline summary (docs/magpie-compat.md, Roofline summary) ---- */

/* lower-case, drop a "_fwd" suffix, keep [a-z0-9] */
static void norm_category(const char *s, struct mp_buf *out)
{
    mp_buf_reset(out);
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= 4 && strncasecmp(s + n - 4, "_fwd", 4) == 0)
        n -= 4;
    for (size_t i = 0; i < n; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            mp_buf_putc(out, c);
    }
    mp_buf_cstr(out);
}

/* One row of a per-category sheet with param columns. */
struct prow {
    char *cat; /* normalized sheet stem */
    char *name;
    char *num_kernels;
    char **pkeys, **pvals; /* non-empty params in column order */
    size_t np;
    bool used_key, used_name;
};

static const char *const generic_sheets[] = {"gpu_timeline", "ops_summary",
                                             "ops_summary_by_category", "ops_unique_args",
                                             "unified_perf_summary"};

static int cmp_sheet_name(const void *a, const void *b)
{
    const struct mp_report_sheet *x = *(const struct mp_report_sheet *const *)a;
    const struct mp_report_sheet *y = *(const struct mp_report_sheet *const *)b;
    return strcmp(x->name, y->name);
}

static int load_param_rows(const struct mp_report *r, struct prow **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    const struct mp_report_sheet **sh =
        malloc(sizeof(const struct mp_report_sheet *) * (r->n ? r->n : 1));
    if (!sh)
        return MP_ENOMEM;
    for (size_t i = 0; i < r->n; i++)
        sh[i] = &r->sheets[i];
    /* the sorted *.csv glob of the stage directory */
    qsort(sh, r->n, sizeof(const struct mp_report_sheet *), cmp_sheet_name);
    struct mp_csv_rec hdr = {0}, rec = {0};
    mp_buf_init(&hdr.text, 0);
    mp_buf_init(&rec.text, 0);
    struct mp_buf cat;
    mp_buf_init(&cat, 0);
    size_t cap = 0;
    int rc = 0;
    for (size_t s = 0; s < r->n && !rc; s++) {
        bool generic = false;
        for (size_t g = 0; g < sizeof(generic_sheets) / sizeof(generic_sheets[0]); g++)
            generic |= strcmp(sh[s]->name, generic_sheets[g]) == 0;
        if (generic)
            continue;
        const char *p = sh[s]->csv.data, *end = p + sh[s]->csv.len;
        if (!p || mp_csv_next(&p, end, &hdr, 1u << 16) != 1)
            continue;
        long name_col = -1, nk_col = -1;
        bool any_param = false;
        for (size_t c = 0; c < hdr.n; c++) {
            const char *h = mp_csv_rec_field(&hdr, c);
            if (strcmp(h, "name") == 0)
                name_col = (long)c;
            else if (strcmp(h, "num_kernels") == 0)
                nk_col = (long)c;
            any_param |= strncmp(h, "param: ", 7) == 0;
        }
        if (!any_param)
            continue;
        norm_category(sh[s]->name, &cat);
        while (!rc && mp_csv_next(&p, end, &rec, 1u << 16) == 1) {
            if (MP_GROW(*out, cap, *nout + 1, 64)) {
                rc = MP_ENOMEM;
                break;
            }
            struct prow *pr = &(*out)[(*nout)++];
            memset(pr, 0, sizeof(*pr));
            pr->cat = mp_strdup(cat.data ? cat.data : "");
            pr->name = mp_strdup(name_col >= 0 && (size_t)name_col < rec.n
                                     ? mp_csv_rec_field(&rec, (size_t)name_col)
                                     : "");
            pr->num_kernels = mp_strdup(nk_col >= 0 && (size_t)nk_col < rec.n
                                            ? mp_csv_rec_field(&rec, (size_t)nk_col)
                                            : "");
            pr->pkeys = calloc(hdr.n, sizeof(char *));
            pr->pvals = calloc(hdr.n, sizeof(char *));
            if (!pr->cat || !pr->name || !pr->num_kernels || !pr->pkeys || !pr->pvals) {
                rc = MP_ENOMEM;
                break;
            }
            for (size_t c = 0; c < hdr.n && c < rec.n; c++) {
                const char *h = mp_csv_rec_field(&hdr, c), *v = mp_csv_rec_field(&rec, c);
                if (strncmp(h, "param: ", 7) != 0 || !*v)
                    continue;
                pr->pkeys[pr->np] = mp_strdup(h + 7);
                pr->pvals[pr->np] = mp_strdup(v);
                if (!pr->pkeys[pr->np] || !pr->pvals[pr->np]) {
                    rc = MP_ENOMEM;
                    break;
                }
                pr->np++;
            }
        }
    }
    mp_csv_rec_fini(&hdr);
    mp_csv_rec_fini(&rec);
    mp_buf_fini(&cat);
    free(sh);
    return rc;
}

static void free_param_rows(struct prow *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].cat);
        free(p[i].name);
        free(p[i].num_kernels);
        for (size_t k = 0; k < p[i].np; k++) {
            free(p[i].pkeys[k]);
            free(p[i].pvals[k]);
        }
        free(p[i].pkeys);
        free(p[i].pvals);
    }
    free(p);
}

/* _match_param_row: the first unused row of (category, name); else the only
 * unused row of that name. The two lookups consume independently, as
 * Magpie's two dictionaries of lists do. */
static struct prow *match_param_row(struct prow *p, size_t n, const char *cat, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!p[i].used_key && strcmp(p[i].cat, cat) == 0 && strcmp(p[i].name, name) == 0) {
            p[i].used_key = true;
            return &p[i];
        }
    size_t hits = 0, at = 0;
    for (size_t i = 0; i < n; i++)
        if (!p[i].used_name && strcmp(p[i].name, name) == 0) {
            hits++;
            at = i;
        }
    if (hits == 1) {
        p[at].used_name = true;
        return &p[at];
    }
    return NULL;
}

/* json.dumps(params, sort_keys=True, separators=(",", ":")) */
static int params_json(const struct prow *pr, struct mp_buf *b)
{
    size_t *ord = malloc(sizeof(size_t) * (pr->np ? pr->np : 1));
    if (!ord)
        return MP_ENOMEM;
    for (size_t i = 0; i < pr->np; i++)
        ord[i] = i;
    for (size_t i = 1; i < pr->np; i++)
        for (size_t j = i; j > 0 && strcmp(pr->pkeys[ord[j - 1]], pr->pkeys[ord[j]]) > 0; j--) {
            size_t t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    int rc = mp_buf_putc(b, '{');
    for (size_t i = 0; i < pr->np && !rc; i++) {
        /* a repeated key keeps its last value, at its first place */
        bool later = false;
        for (size_t j = i + 1; j < pr->np; j++)
            later |= strcmp(pr->pkeys[ord[j]], pr->pkeys[ord[i]]) == 0;
        if (later)
            continue;
        rc = b->len > 1 && b->data[b->len - 1] != '{' ? mp_buf_putc(b, ',') : 0;
        rc = rc ? rc : mp_json_str_ascii(b, pr->pkeys[ord[i]], strlen(pr->pkeys[ord[i]]));
        rc = rc ? rc : mp_buf_putc(b, ':');
        rc = rc ? rc : mp_json_str_ascii(b, pr->pvals[ord[i]], strlen(pr->pvals[ord[i]]));
    }
    free(ord);
    return rc ? rc : mp_buf_putc(b, '}');
}

static const char *const simple_cols[] = {"source_category",
                                          "op_name",
                                          "param_signature",
                                          "operation_count",
                                          "num_kernels",
                                          "kernel_time_ms_sum",
                                          "time_pct",
                                          "kernel_time_us_mean",
                                          "gflops",
                                          "data_moved_mb",
                                          "arithmetic_intensity_flops_per_byte",
                                          "achieved_tflops_mean",
                                          "achieved_tbps_mean",
                                          "compute_spec",
                                          "roofline_bound",
                                          "pct_roofline_mean",
                                          "roofline_time_us",
                                          "has_perf_model",
                                          "params_json",
                                          "input_dims",
                                          "input_type"};

/* source column of each output column; NULL = computed */
static const char *const simple_src[] = {"op category",
                                         "name",
                                         NULL,
                                         "operation_count",
                                         NULL,
                                         "Kernel Time (\xc2\xb5s)_sum",
                                         "Percentage (%)",
                                         "Kernel Time (\xc2\xb5s)_mean",
                                         "GFLOPS",
                                         "Data Moved (MB)",
                                         "FLOPS/Byte",
                                         "TFLOPS/s_mean",
                                         "TB/s_mean",
                                         "Compute Spec",
                                         "Roofline Bound",
                                         "Pct Roofline_mean",
                                         "Roofline Time (\xc2\xb5s)_first",
                                         "has_perf_model",
                                         NULL,
                                         "Input Dims",
                                         "Input type"};

enum {
    SC_PARAMSIG = 2,
    SC_NK = 4,
    SC_KTMS = 5,
    SC_AI = 10,
    SC_SPEC = 13,
    SC_ARCH0 = 14,
    SC_PCT = 15,
    SC_ARCH1 = 16,
    SC_PJSON = 18
};

/* pct_peak_mean: the row's percent of the measured roofline times the ratio
 * of the two rooflines (mp_roofline_peak_ratio); empty when not known */
static int peak_cell(struct mp_csv *csv, const struct mp_roofline_arch *ceiling,
                     const struct mp_roofline_arch *peak, const char *spec, const char *ai,
                     const char *pct)
{
    char *e1, *e2;
    double a = strtod(ai, &e1), p = strtod(pct, &e2);
    double ratio =
        *ai && !*e1 && *pct && !*e2 ? mp_roofline_peak_ratio(ceiling, peak, spec, a) : NAN;
    if (!isfinite(ratio) || !isfinite(p))
        return mp_csv_field(csv, "", 0);
    char v[40];
    snprintf(v, sizeof(v), "%.6g", p * ratio);
    return mp_csv_str(csv, v);
}

int mp_report_roofline_simple(const struct mp_report *r, struct mp_buf *out)
{
    const struct mp_report_sheet *u = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->sheets[i].name, "unified_perf_summary") == 0)
            u = &r->sheets[i];
    if (!u || !u->csv.data)
        return MP_ENOTFOUND;
    struct prow *pr = NULL;
    size_t npr = 0;
    int rc = load_param_rows(r, &pr, &npr);
    struct mp_csv_rec hdr = {0}, rec = {0};
    mp_buf_init(&hdr.text, 0);
    mp_buf_init(&rec.text, 0);
    const char *p = u->csv.data, *end = p + u->csv.len;
    long col[sizeof(simple_cols) / sizeof(simple_cols[0])];
    const size_t ncols = sizeof(simple_cols) / sizeof(simple_cols[0]);
    for (size_t c = 0; c < ncols; c++)
        col[c] = -1;
    if (!rc && mp_csv_next(&p, end, &hdr, 1u << 16) != 1)
        rc = MP_EPARSE;
    for (size_t c = 0; c < ncols && !rc; c++) {
        col[c] = -1;
        for (size_t h = 0; simple_src[c] && h < hdr.n; h++)
            if (strcmp(mp_csv_rec_field(&hdr, h), simple_src[c]) == 0)
                col[c] = (long)h;
    }
    struct mp_csv csv;
    mp_csv_init(&csv, out, "\r\n"); /* Python's csv module */
    for (size_t c = 0; c < ncols && !rc; c++) {
        if (c >= SC_ARCH0 && c <= SC_ARCH1 && col[c] < 0)
            continue; /* roofline columns only when the report has them */
        rc = mp_csv_str(&csv, simple_cols[c]);
    }
    /* a measured ceiling: percent of the data sheet's peak beside it */
    struct mp_roofline_arch peak;
    bool with_peak = r->has_arch && r->arch.calibrated && col[SC_PCT] >= 0 &&
                     mp_roofline_arch_datasheet(r->arch.name, &peak) == 0;
    if (with_peak && !rc)
        rc = mp_csv_str(&csv, "pct_peak_mean");
    rc = rc ? rc : mp_csv_end_row(&csv);
    struct mp_buf cat, cell;
    mp_buf_init(&cat, 0);
    mp_buf_init(&cell, 0);
    while (!rc && mp_csv_next(&p, end, &rec, 1u << 16) == 1) {
#define FIELD(c)                                                                                   \
    (col[c] >= 0 && (size_t)col[c] < rec.n ? mp_csv_rec_field(&rec, (size_t)col[c]) : "")
        norm_category(FIELD(0), &cat);
        struct prow *m = match_param_row(pr, npr, cat.data ? cat.data : "", FIELD(1));
        for (size_t c = 0; c < ncols && !rc; c++) {
            if (c >= SC_ARCH0 && c <= SC_ARCH1 && col[c] < 0)
                continue;
            mp_buf_reset(&cell);
            if (c == SC_PARAMSIG) {
                for (size_t q = 0; m && q < m->np && !rc; q++)
                    rc = mp_buf_printf(&cell, "%s%s=%s", q ? "," : "", m->pkeys[q], m->pvals[q]);
            } else if (c == SC_NK) {
                rc = mp_buf_puts(&cell, m ? m->num_kernels : "");
            } else if (c == SC_KTMS) {
                const char *v = FIELD(c);
                char *e;
                double x = strtod(v, &e);
                if (*v && e != v && !*e)
                    rc = mp_buf_printf(&cell, "%.6g", x / 1000.0);
            } else if (c == SC_PJSON) {
                if (m && m->np)
                    rc = params_json(m, &cell);
            } else {
                rc = mp_buf_puts(&cell, FIELD(c));
            }
            rc = rc ? rc : mp_csv_field(&csv, cell.data ? cell.data : "", cell.len);
        }
        if (with_peak && !rc)
            rc = peak_cell(&csv, &r->arch, &peak, FIELD(SC_SPEC), FIELD(SC_AI), FIELD(SC_PCT));
        rc = rc ? rc : mp_csv_end_row(&csv);
#undef FIELD
    }
    mp_buf_fini(&cat);
    mp_buf_fini(&cell);
    mp_csv_rec_fini(&hdr);
    mp_csv_rec_fini(&rec);
    free_param_rows(pr, npr);
    return rc;
}

/* ---- JSON (tracelens_analysis) ---- */

static void jkey(struct mp_buf *b, int ind, const char *k, bool *first)
{
    mp_buf_puts(b, *first ? "\n" : ",\n");
    *first = false;
    for (int i = 0; i < ind; i++)
        mp_buf_putc(b, ' ');
    mp_json_str(b, k, strlen(k));
    mp_buf_puts(b, ": ");
}

static void jstr(struct mp_buf *b, const char *s)
{
    if (s)
        mp_json_str_ascii(b, s, strlen(s));
    else
        mp_buf_puts(b, "null");
}

static void jend(struct mp_buf *b, int ind, char close, bool empty)
{
    if (!empty) {
        mp_buf_putc(b, '\n');
        for (int i = 0; i < ind; i++)
            mp_buf_putc(b, ' ');
    }
    mp_buf_putc(b, close);
}

static void jlist(struct mp_buf *b, int ind, char **v, size_t n)
{
    mp_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        mp_buf_puts(b, i ? ",\n" : "\n");
        for (int k = 0; k < ind + 2; k++)
            mp_buf_putc(b, ' ');
        jstr(b, v[i]);
    }
    jend(b, ind, ']', n == 0);
}

static void jpick(struct mp_buf *b, int ind, int st, const struct pick *pk)
{
    bool f = true;
    mp_buf_putc(b, '{');
    jkey(b, ind + 2, "stage", &f);
    jstr(b, stage_name[st]);
    jkey(b, ind + 2, "csv_kind", &f);
    jstr(b, stage_kind[st]);
    jkey(b, ind + 2, "output_label", &f);
    jstr(b, stage_label[st]);
    jkey(b, ind + 2, "batch_size", &f);
    mp_json_double(b, pk->found ? pk->bs : 0.0);
    jkey(b, ind + 2, "trace_path", &f);
    jstr(b, pk->found ? pk->path : NULL);
    jkey(b, ind + 2, "row_index", &f);
    if (pk->found)
        mp_buf_printf(b, "%ld", pk->row);
    else
        mp_buf_puts(b, "null");
    jkey(b, ind + 2, "phase_avg_conc", &f);
    if (pk->found)
        mp_json_double(b, pk->conc);
    else
        mp_buf_puts(b, "null");
    jkey(b, ind + 2, "num_gpu_events", &f);
    if (pk->found)
        mp_buf_printf(b, "%ld", pk->gpu_events);
    else
        mp_buf_puts(b, "null");
    jkey(b, ind + 2, "gpu_duration", &f);
    if (pk->found)
        mp_json_double(b, pk->gpu_dur);
    else
        mp_buf_puts(b, "null");
    jkey(b, ind + 2, "gpu_busy_duration", &f);
    if (pk->found)
        mp_json_double(b, pk->gpu_busy);
    else
        mp_buf_puts(b, "null");
    jkey(b, ind + 2, "selection_reason", &f);
    jstr(b, pk->reason);
    jend(b, ind, '}', false);
}

struct strv {
    char **v;
    size_t n, cap;
};

static int sv_push(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int sv_push(struct strv *s, const char *fmt, ...)
{
    if (MP_GROW(s->v, s->cap, s->n + 1, 8))
        return MP_ENOMEM;
    va_list ap;
    va_start(ap, fmt);
    char *t = NULL;
    int n = vasprintf(&t, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MP_ENOMEM;
    s->v[s->n++] = t;
    return 0;
}

static void sv_fini(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* Magpie's file-name value: '.' -> 'p', other non-alphanumerics dropped. */
static void sanitize(const char *v, char *out, size_t len)
{
    size_t w = 0;
    for (const char *c = v ? v : ""; *c && w + 1 < len; c++) {
        if (*c == '.')
            out[w++] = 'p';
        else if (isalnum((unsigned char)*c))
            out[w++] = *c;
    }
    out[w] = '\0';
    if (!w)
        snprintf(out, len, "unknown");
}

struct stage_out {
    bool ran;
    char *out_dir;
    struct strv files;
    char *simple;
    char *error;
};

/* One run of the stages: its paths, the split, the picks and what each
 * stage wrote, reported in the JSON. */
struct srun {
    const struct mp_stages_opts *o;
    int stages[ST_N], nst;
    char *split_dir, *capture, *tl_dir, *rank0;
    struct strv errors, warnings, outputs;
    struct stage_out so[ST_N];
    struct pick picks[ST_N];
    struct mp_trace_split_result sr;
    bool split_ok;
    bool have_capture;
};

static void srun_fini(struct srun *R)
{
    for (int st = 0; st < ST_N; st++) {
        free(R->so[st].out_dir);
        sv_fini(&R->so[st].files);
        free(R->so[st].simple);
        free(R->so[st].error);
    }
    sv_fini(&R->errors);
    sv_fini(&R->warnings);
    sv_fini(&R->outputs);
    mp_trace_split_result_fini(&R->sr);
    free(R->split_dir);
    free(R->capture);
    free(R->tl_dir);
    free(R->rank0);
}

/* Splits the rank-0 trace as Magpie runs TraceLens's splitter; on failure
 * the error is listed and returned (d set). */
static int stages_split(struct srun *R, struct mp_diag *d)
{
    const struct mp_stages_opts *o = R->o;
    struct mp_trace_split_opts so_split = {
        .out_dir = R->split_dir,
        .store_single_iteration = true,
        .find_steady_state = true,
        .num_steps = o->num_steps > 0 ? o->num_steps : 32,
        .gzip_level = o->gzip_level,
        .on_progress = o->on_progress,
        .progress_user = o->progress_user,
    };
    so_split.workload.have_conc = so_split.workload.have_osl = so_split.workload.have_r = true;
    so_split.workload.conc = o->conc ? strtoll(o->conc, NULL, 10) : 32;
    so_split.workload.osl = o->osl ? strtod(o->osl, NULL) : 512;
    so_split.workload.r = o->random_range_ratio ? strtod(o->random_range_ratio, NULL) : 1.0;
    struct mp_diag sd;
    mp_diag_clear(&sd);
    int src = mp_trace_split(R->rank0, &so_split, &R->sr, &sd);
    if (src) {
        char msg[1200];
        mp_diag_format(&sd, msg, sizeof(msg));
        sv_push(&R->errors, "trace split failed: %s", msg);
        *d = sd;
        return src;
    }
    R->split_ok = true;
    return 0;
}

/* Whether capture_traces holds anything (a warning when not). */
static bool have_capture_dir(struct srun *R)
{
    glob_t gl;
    char *pat = mp_fs_join(R->capture, "*");
    int g = pat ? glob(pat, 0, NULL, &gl) : GLOB_NOSPACE;
    free(pat);
    bool have = g == 0 && gl.gl_pathc > 0;
    if (!have)
        sv_push(&R->warnings, "capture_traces directory is missing or empty: %s", R->capture);
    if (g == 0)
        globfree(&gl);
    return have;
}

/* Lists the stage's sheets (its directory's *.csv, sorted) and writes the
 * compact roofline CSV beside the stage directories. */
static int stage_files(struct srun *R, int st, const struct mp_report *rep, struct mp_diag *rd)
{
    struct stage_out *s = &R->so[st];
    const struct mp_report_sheet **sh =
        malloc(sizeof(const struct mp_report_sheet *) * (rep->n ? rep->n : 1));
    for (size_t k = 0; sh && k < rep->n; k++)
        sh[k] = &rep->sheets[k];
    if (sh)
        qsort(sh, rep->n, sizeof(const struct mp_report_sheet *), cmp_sheet_name);
    for (size_t k = 0; sh && k < rep->n; k++)
        sv_push(&s->files, "%s/%s.csv", s->out_dir, sh[k]->name);
    free(sh);
    struct mp_buf simple;
    mp_buf_init(&simple, 0);
    char isl[64], osl[64], cc[64], name[300];
    sanitize(R->o->isl, isl, sizeof(isl));
    sanitize(R->o->osl, osl, sizeof(osl));
    sanitize(R->o->conc, cc, sizeof(cc));
    snprintf(name, sizeof(name), "%s_ISL%s_OSL%s_CONC%s_kernel_roofline_simple.csv",
             stage_label[st], isl, osl, cc);
    int rc = 0;
    if (mp_report_roofline_simple(rep, &simple) == 0) {
        s->simple = mp_fs_join(R->tl_dir, name);
        rc = s->simple
                 ? mp_fs_write_atomic(s->simple, simple.data ? simple.data : "", simple.len, rd)
                 : MP_ENOMEM;
        if (!rc)
            sv_push(&s->files, "%s", s->simple);
    }
    mp_buf_fini(&simple);
    return rc;
}

/* The inference report of stage st's pick under tracelens/<stage>/, with
 * its HTML view and the compact CSV; a failure is listed, not returned. */
static void stage_report(struct srun *R, int st)
{
    struct stage_out *s = &R->so[st];
    const struct pick *pk = &R->picks[st];
    s->ran = true;
    s->out_dir = mp_fs_join(R->tl_dir, stage_label[st]);
    struct mp_report_opts ro;
    mp_report_opts_defaults(&ro);
    ro.kernel_summary = false;
    ro.short_kernel_study = false;
    ro.inference = true;
    ro.group_by_parent_module = true;
    ro.group_by_num_kernels = true;
    ro.enable_pseudo_ops = true;
    ro.arch = R->o->arch;
    ro.arch_auto = R->o->arch_auto;
    /* as Magpie: the capture folder joins when it holds anything */
    ro.capture_folder = R->have_capture ? R->capture : NULL;
    struct mp_report *rep = NULL;
    struct mp_diag rd;
    mp_diag_clear(&rd);
    int rrc = s->out_dir ? mp_report_build(pk->path, &ro, &rep, &rd) : MP_ENOMEM;
    rrc = rrc ? rrc : mp_fs_mkdirs(s->out_dir, &rd);
    rrc = rrc ? rrc : mp_report_write_csvs(rep, s->out_dir, &rd);
    if (!rrc) {
        char *html = mp_fs_join(s->out_dir, "report.html");
        char title[200];
        snprintf(title, sizeof(title), "%s stage: %s", stage_name[st],
                 strrchr(pk->path, '/') ? strrchr(pk->path, '/') + 1 : pk->path);
        rrc = html ? mp_report_write_html(rep, html, title, &rd) : MP_ENOMEM;
        free(html);
    }
    rrc = rrc ? rrc : stage_files(R, st, rep, &rd);
    if (rrc) {
        char msg[1200];
        mp_diag_format(&rd, msg, sizeof(msg));
        sv_push(&R->errors, "inference perf report failed for %s: %s", stage_name[st], msg);
        if (asprintf(&s->error, "inference perf report failed for %s: %s", stage_name[st], msg) < 0)
            s->error = NULL;
    }
    for (size_t k = 0; k < s->files.n; k++)
        sv_push(&R->outputs, "%s", s->files.v[k]);
    mp_report_free(rep);
}

/* stage_results: one object per stage that ran. */
static void json_stage_results(struct mp_buf *json, const struct srun *R)
{
    mp_buf_putc(json, '{');
    bool f2 = true;
    for (int i = 0; i < R->nst; i++) {
        int st = R->stages[i];
        const struct stage_out *s = &R->so[st];
        if (!s->ran)
            continue;
        jkey(json, 4, stage_name[st], &f2);
        bool f3 = true;
        mp_buf_putc(json, '{');
        jkey(json, 6, "stage", &f3);
        jstr(json, stage_name[st]);
        jkey(json, 6, "trace_path", &f3);
        jstr(json, R->picks[st].path);
        jkey(json, 6, "output_dir", &f3);
        jstr(json, s->out_dir);
        jkey(json, 6, "files", &f3);
        jlist(json, 6, s->files.v, s->files.n);
        if (s->simple) {
            jkey(json, 6, "simple_summary_file", &f3);
            jstr(json, s->simple);
        }
        if (s->error) {
            jkey(json, 6, "error", &f3);
            jstr(json, s->error);
        }
        jkey(json, 6, "phase_pick", &f3);
        jpick(json, 6, st, &R->picks[st]);
        jend(json, 4, '}', false);
    }
    jend(json, 2, '}', f2);
}

/* The tracelens_analysis object, keys in Magpie's order. */
static void stages_json(struct mp_buf *json, const struct srun *R)
{
    const struct mp_stages_opts *o = R->o;
    mp_buf_reset(json);
    bool f = true;
    mp_buf_putc(json, '{');
    jkey(json, 2, "enabled", &f);
    mp_buf_puts(json, "true");
    jkey(json, 2, "analysis_mode", &f);
    jstr(json, "inference");
    jkey(json, 2, "analysis_stages", &f);
    mp_buf_putc(json, '[');
    for (int i = 0; i < R->nst; i++) {
        mp_buf_puts(json, i ? ",\n    " : "\n    ");
        jstr(json, stage_name[R->stages[i]]);
    }
    jend(json, 2, ']', R->nst == 0);
    jkey(json, 2, "tl_extension", &f);
    mp_buf_puts(json, "null");
    jkey(json, 2, "trace_dir", &f);
    jstr(json, o->trace_dir);
    jkey(json, 2, "output_files", &f);
    jlist(json, 2, R->outputs.v, R->outputs.n);
    jkey(json, 2, "stage_results", &f);
    json_stage_results(json, R);
    jkey(json, 2, "errors", &f);
    jlist(json, 2, R->errors.v, R->errors.n);
    jkey(json, 2, "warnings", &f);
    jlist(json, 2, R->warnings.v, R->warnings.n);
    jkey(json, 2, "split_dir", &f);
    jstr(json, R->split_dir);
    jkey(json, 2, "capture_folder", &f);
    jstr(json, R->capture);
    jkey(json, 2, "output_dir", &f);
    jstr(json, R->tl_dir);
    jkey(json, 2, "gpu_arch_platform", &f);
    jstr(json, o->gpu_arch_platform);
    jkey(json, 2, "rank0_trace", &f);
    jstr(json, R->rank0);
    if (R->split_ok) {
        jkey(json, 2, "phase_picks", &f);
        bool f4 = true;
        mp_buf_putc(json, '{');
        for (int st = 0; st < ST_N; st++) {
            jkey(json, 4, stage_name[st], &f4);
            jpick(json, 4, st, &R->picks[st]);
        }
        jend(json, 2, '}', false);
    }
    jend(json, 0, '}', false);
    mp_buf_putc(json, '\n');
}

/* Splits, picks and reports the stages; returns the input error to report
 * after the JSON is written, or 0. */
static int stages_do(struct srun *R, struct mp_diag *d)
{
    const struct mp_stages_opts *o = R->o;
    if (!R->rank0) {
        sv_push(&R->errors, "Could not locate rank-0 trace for framework=%s in %s",
                o->framework ? o->framework : "vllm", o->trace_dir);
        mp_diag_set_file(d, o->trace_dir);
        return mp_diag_set(d, MP_ENOTFOUND, "no trace file (*.json.gz) in the directory");
    }
    int hard = stages_split(R, d);
    if (hard)
        return hard;
    R->have_capture = have_capture_dir(R);
    bool have_conc = o->conc && *o->conc;
    double conc = have_conc ? strtod(o->conc, NULL) : 0;
    for (int st = 0; st < ST_N; st++)
        pick_stage(&R->sr, st, have_conc, conc, &R->picks[st]);
    for (int i = 0; i < R->nst; i++) {
        int st = R->stages[i];
        if (R->picks[st].found)
            stage_report(R, st);
        else
            sv_push(&R->warnings, "%s: no candidate trace found; skipping perf report",
                    stage_name[st]);
    }
    return 0;
}

int mp_stages_run(const struct mp_stages_opts *o, struct mp_buf *json, struct mp_diag *d)
{
    struct srun R;
    memset(&R, 0, sizeof(R));
    R.o = o;
    int rc = mp_stages_parse_list(o->stages, R.stages, &R.nst, d);
    if (rc)
        return rc;
    if (!mp_fs_is_dir(o->trace_dir)) {
        mp_diag_set_file(d, o->trace_dir);
        return mp_diag_set(d, MP_ENOTFOUND, "trace directory not found");
    }
    const char *out_root = o->output_dir ? o->output_dir : o->trace_dir;
    R.split_dir = mp_fs_join(o->trace_dir, "trace_split");
    R.capture = mp_fs_join(o->trace_dir, "capture_traces");
    R.tl_dir = mp_fs_join(out_root, "tracelens");
    R.rank0 = locate_rank0(o->trace_dir, o->framework);
    if (!R.split_dir || !R.capture || !R.tl_dir) {
        srun_fini(&R);
        return MP_ENOMEM;
    }
    int hard = stages_do(&R, d); /* input error to return after the JSON is written */
    stages_json(json, &R);
    if (mp_fs_mkdirs(R.tl_dir, NULL) == 0) {
        char *jp = mp_fs_join(R.tl_dir, "tracelens_analysis.json");
        if (jp)
            mp_fs_write_atomic(jp, json->data, json->len, NULL);
        free(jp);
    }
    rc = hard ? hard : R.errors.n ? MP_ECHILD : 0;
    srun_fini(&R);
    return rc;
}
