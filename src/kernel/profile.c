/* The performance stage: a user's prof_command, or Nsight Compute driven
 * with `--csv --print-units base` and parsed as CSV (details page: one row
 * per metric and launch; raw page: one column per metric with a units row)
 * into Magpie's performance_result: a summary of metrics averaged over the
 * launches and per-kernel dispatch statistics from gpu__time_duration.sum.
 * rocprof-compute and Metrix are not available on NVIDIA machines: asking
 * for them fails with Magpie's messages. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/gpu.h>
#include <magpie/proc.h>

#include "kernel_int.h"

#define NCU_MAX_COLS 512

/* A roofline-oriented default set: time, speed-of-light throughputs,
 * DRAM bytes, FP32 instruction counts, occupancy. */
static const char *const default_metrics[] = {
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    NULL,
};

void mp_kernel_perf_fini(struct mp_kernel_perf *p)
{
    if (!p)
        return;
    free(p->errors);
    free(p->command);
    free(p->workload_dir);
    free(p->backend);
    for (int i = 0; i < p->nmetrics; i++) {
        free(p->metrics[i].name);
        free(p->metrics[i].unit);
    }
    free(p->metrics);
    for (int i = 0; i < p->ndispatch; i++)
        free(p->dispatch[i].name);
    free(p->dispatch);
    memset(p, 0, sizeof(*p));
}

/* Splits one CSV record (RFC 4180 quoting) starting at *pos into fields;
 * the field texts are written into buf. Returns the field count. */
static int csv_record(const char *s, size_t len, size_t *pos, char **fields, int maxf,
                      struct mp_buf *buf)
{
    mp_buf_reset(buf);
    size_t offs[NCU_MAX_COLS];
    int nf = 0;
    size_t i = *pos;
    bool more = i < len;
    while (more && nf < maxf) {
        offs[nf++] = buf->len;
        if (i < len && s[i] == '"') {
            i++;
            while (i < len) {
                if (s[i] == '"' && i + 1 < len && s[i + 1] == '"') {
                    mp_buf_putc(buf, '"');
                    i += 2;
                } else if (s[i] == '"') {
                    i++;
                    break;
                } else {
                    mp_buf_putc(buf, s[i++]);
                }
            }
        }
        while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
            mp_buf_putc(buf, s[i++]);
        mp_buf_putc(buf, 0);
        if (i < len && s[i] == ',') {
            i++;
            continue;
        }
        more = false;
    }
    while (i < len && s[i] != '\n')
        i++;
    if (i < len)
        i++;
    *pos = i;
    for (int f = 0; f < nf; f++)
        fields[f] = buf->data + offs[f];
    return nf;
}

/* "536,907,264" -> 536907264; "n/a" / "" -> NaN. */
static double ncu_number(const char *s)
{
    char tmp[128];
    size_t j = 0;
    for (size_t i = 0; s[i] && j + 1 < sizeof(tmp); i++)
        if (s[i] != ',' && s[i] != ' ')
            tmp[j++] = s[i];
    tmp[j] = 0;
    if (!j)
        return NAN;
    char *end = NULL;
    double v = strtod(tmp, &end);
    return end && *end == 0 ? v : NAN;
}

struct acc {
    char *name;
    char *unit;
    double sum;
    long long n;
};

static struct acc *acc_get(struct acc **arr, int *n, const char *name, const char *unit)
{
    for (int i = 0; i < *n; i++)
        if (strcmp((*arr)[i].name, name) == 0)
            return &(*arr)[i];
    struct acc *na = mp_reallocarray(*arr, (size_t)*n + 1, sizeof(*na));
    if (!na)
        return NULL;
    *arr = na;
    struct acc *a = &na[(*n)++];
    a->name = mp_strdup(name);
    a->unit = mp_strdup(unit ? unit : "");
    a->sum = 0;
    a->n = 0;
    return a;
}

static struct mp_kernel_dispatch *disp_get(struct mp_kernel_perf *p, const char *name)
{
    for (int i = 0; i < p->ndispatch; i++)
        if (strcmp(p->dispatch[i].name, name) == 0)
            return &p->dispatch[i];
    struct mp_kernel_dispatch *nd =
        mp_reallocarray(p->dispatch, (size_t)p->ndispatch + 1, sizeof(*nd));
    if (!nd)
        return NULL;
    p->dispatch = nd;
    struct mp_kernel_dispatch *k = &nd[p->ndispatch++];
    memset(k, 0, sizeof(*k));
    k->name = mp_strdup(name);
    k->min_ns = INFINITY;
    k->max_ns = -INFINITY;
    return k;
}

static void disp_add(struct mp_kernel_perf *p, const char *kname, double ns)
{
    struct mp_kernel_dispatch *k = disp_get(p, kname);
    if (!k || !isfinite(ns))
        return;
    k->count++;
    k->total_ns += ns;
    if (ns < k->min_ns)
        k->min_ns = ns;
    if (ns > k->max_ns)
        k->max_ns = ns;
    k->avg_ns = k->total_ns / (double)k->count;
}

static int cmp_disp(const void *a, const void *b)
{
    double x = ((const struct mp_kernel_dispatch *)a)->total_ns;
    double y = ((const struct mp_kernel_dispatch *)b)->total_ns;
    return (x < y) - (x > y);
}

int mp_kernel_parse_ncu_csv(const char *text, size_t len, struct mp_kernel_perf *p,
                            struct mp_diag *d)
{
    char **f = mp_calloc(NCU_MAX_COLS, sizeof(char *));
    char **hdr = mp_calloc(NCU_MAX_COLS, sizeof(char *));
    struct mp_buf rb, hb;
    mp_buf_init(&rb, (size_t)16 << 20);
    mp_buf_init(&hb, (size_t)16 << 20);
    struct acc *accs = NULL;
    int nacc = 0, rc = 0;
    if (!f || !hdr) {
        rc = MP_ENOMEM;
        goto out;
    }
    size_t pos = 0;
    int nh = 0;
    /* the header: the first record whose first field is "ID" */
    while (pos < len) {
        size_t start = pos;
        int nf = csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb);
        if (nf > 3 && strcmp(f[0], "ID") == 0) {
            mp_buf_reset(&hb);
            mp_buf_append(&hb, rb.data, rb.len);
            for (int i = 0; i < nf; i++)
                hdr[i] = hb.data + (f[i] - rb.data);
            nh = nf;
            break;
        }
        (void)start;
    }
    if (!nh) {
        rc = mp_diag_set(d, MP_EPARSE,
                         "no ncu CSV header (a line starting with \"ID\") in the output");
        goto out;
    }
    int c_id = -1, c_kname = -1, c_mname = -1, c_munit = -1, c_mval = -1;
    for (int i = 0; i < nh; i++) {
        if (!strcmp(hdr[i], "ID"))
            c_id = i;
        else if (!strcmp(hdr[i], "Kernel Name"))
            c_kname = i;
        else if (!strcmp(hdr[i], "Metric Name"))
            c_mname = i;
        else if (!strcmp(hdr[i], "Metric Unit"))
            c_munit = i;
        else if (!strcmp(hdr[i], "Metric Value"))
            c_mval = i;
    }
    if (c_kname < 0) {
        rc = mp_diag_set(d, MP_EPARSE, "ncu CSV has no \"Kernel Name\" column");
        goto out;
    }
    bool details = c_mname >= 0 && c_mval >= 0;
    char **units = NULL;
    struct mp_buf ub;
    mp_buf_init(&ub, (size_t)16 << 20);
    if (!details) { /* raw page: the next record holds the units */
        units = mp_calloc(NCU_MAX_COLS, sizeof(char *));
        int nu = units ? csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb) : 0;
        mp_buf_append(&ub, rb.data, rb.len);
        for (int i = 0; i < nu && units; i++)
            units[i] = ub.data + (f[i] - rb.data);
    }
    while (pos < len) {
        int nf = csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb);
        if (nf < nh || (nf > 0 && strncmp(f[0], "==", 2) == 0))
            continue;
        const char *kname = f[c_kname];
        if (details) {
            double v = ncu_number(f[c_mval]);
            if (!isfinite(v))
                continue;
            const char *unit = c_munit >= 0 ? f[c_munit] : "";
            struct acc *a = acc_get(&accs, &nacc, f[c_mname], unit);
            if (a) {
                a->sum += v;
                a->n++;
            }
            if (strcmp(f[c_mname], "gpu__time_duration.sum") == 0) {
                double ns = v;
                if (!strcmp(unit, "usecond") || !strcmp(unit, "us"))
                    ns = v * 1e3;
                else if (!strcmp(unit, "msecond") || !strcmp(unit, "ms"))
                    ns = v * 1e6;
                disp_add(p, kname, ns);
            }
        } else {
            for (int i = 0; i < nh; i++) {
                if (i == c_id || i == c_kname || !strchr(hdr[i], '_'))
                    continue; /* only metric columns (unit__counter...) */
                double v = ncu_number(f[i]);
                if (!isfinite(v))
                    continue;
                struct acc *a = acc_get(&accs, &nacc, hdr[i], units && units[i] ? units[i] : "");
                if (a) {
                    a->sum += v;
                    a->n++;
                }
                if (strcmp(hdr[i], "gpu__time_duration.sum") == 0)
                    disp_add(p, kname, v);
            }
        }
    }
    free((void *)units);
    mp_buf_fini(&ub);
    p->metrics = mp_calloc((size_t)(nacc ? nacc : 1), sizeof(*p->metrics));
    for (int i = 0; i < nacc && p->metrics; i++) {
        struct mp_kernel_metric *m = &p->metrics[p->nmetrics++];
        m->name = accs[i].name;
        m->unit = accs[i].unit;
        accs[i].name = accs[i].unit = NULL;
        m->value = accs[i].sum / (double)accs[i].n;
        m->peak = NAN;
        m->pct_of_peak = NAN;
    }
    if (p->ndispatch > 1)
        qsort(p->dispatch, (size_t)p->ndispatch, sizeof(*p->dispatch), cmp_disp);
    if (nacc == 0)
        rc = mp_diag_set(d, MP_EPARSE, "ncu CSV has no metric values");
out:
    for (int i = 0; i < nacc; i++) {
        free(accs[i].name);
        free(accs[i].unit);
    }
    free(accs);
    free((void *)f);
    free((void *)hdr);
    mp_buf_fini(&rb);
    mp_buf_fini(&hb);
    return rc;
}

/* rocprofv3's runtime-internal kernels (fills, copies), left out of the stats */
static bool rocprof_internal(const char *name)
{
    return !strncmp(name, "__amd_rocclr_", 13) || !strncmp(name, "__hip_", 6);
}

/* rocprofv3 --kernel-trace --output-format csv: one row per dispatch.
 * Runtime-internal kernels (__amd_rocclr_*, __hip_*) are left out, as
 * Magpie does. */
int mp_kernel_parse_rocprof_kernel_trace(const char *text, size_t len, struct mp_kernel_perf *p,
                                         struct mp_diag *d)
{
    char **f = mp_calloc(NCU_MAX_COLS, sizeof(char *));
    struct mp_buf rb;
    mp_buf_init(&rb, (size_t)16 << 20);
    int rc = 0;
    if (!f) {
        mp_buf_fini(&rb);
        return MP_ENOMEM;
    }
    size_t pos = 0;
    int nh = csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb);
    int c_name = -1, c_start = -1, c_end = -1;
    for (int i = 0; i < nh; i++) {
        if (!strcmp(f[i], "Kernel_Name") || !strcmp(f[i], "KernelName") ||
            !strcmp(f[i], "kernel_name"))
            c_name = i;
        else if (!strcmp(f[i], "Start_Timestamp") || !strcmp(f[i], "Start_Time"))
            c_start = i;
        else if (!strcmp(f[i], "End_Timestamp") || !strcmp(f[i], "End_Time"))
            c_end = i;
    }
    if (c_name < 0 || c_start < 0 || c_end < 0) {
        rc = mp_diag_set(d, MP_EPARSE,
                         "kernel trace CSV needs Kernel_Name, Start_Timestamp and End_Timestamp");
        goto out;
    }
    int maxc = c_name > c_start ? c_name : c_start;
    if (c_end > maxc)
        maxc = c_end;
    while (pos < len) {
        int nf = csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb);
        if (nf <= maxc)
            continue;
        if (rocprof_internal(f[c_name]))
            continue;
        double t0 = ncu_number(f[c_start]), t1 = ncu_number(f[c_end]);
        if (isfinite(t0) && isfinite(t1) && t1 >= t0)
            disp_add(p, f[c_name], t1 - t0);
    }
    if (p->ndispatch > 1)
        qsort(p->dispatch, (size_t)p->ndispatch, sizeof(*p->dispatch), cmp_disp);
    if (!p->ndispatch)
        rc = mp_diag_set(d, MP_EPARSE, "kernel trace CSV has no kernel dispatches");
out:
    free((void *)f);
    mp_buf_fini(&rb);
    return rc;
}

struct sym_ref {
    json_int_t id;
    size_t pos;
    json_t *sym;
};

static int cmp_sym_ref(const void *a, const void *b)
{
    const struct sym_ref *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The first symbol with kernel_id id in the sorted refs, NULL when none. */
static json_t *find_sym(const struct sym_ref *refs, size_t n, json_int_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (refs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && refs[lo].id == id ? refs[lo].sym : NULL;
}

int mp_kernel_parse_rocprof_json(const char *text, size_t len, struct mp_kernel_perf *p,
                                 struct mp_diag *d)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    if (!root)
        return mp_diag_set(d, MP_EPARSE, "rocprofv3 JSON: line %d, column %d: %s", je.line,
                           je.column, je.text);
    int rc = 0;
    json_t *tool = json_array_get(json_object_get(root, "rocprofiler-sdk-tool"), 0);
    json_t *syms = json_object_get(tool, "kernel_symbols");
    json_t *disp = json_object_get(json_object_get(tool, "buffer_records"), "kernel_dispatch");
    if (!json_is_array(syms) || !json_is_array(disp)) {
        rc = mp_diag_set(d, MP_EPARSE,
                         "rocprofv3 JSON: no rocprofiler-sdk-tool[0].kernel_symbols and "
                         "buffer_records.kernel_dispatch (run with --kernel-trace)");
        goto out;
    }
    /* kernel_id -> symbol: the symbols sorted by id (the first of a repeated
     * id wins), found by binary search (rocprofv3 numbers kernels from 0 and
     * lists them in id order; a cut-down or damaged file need not) */
    size_t nsym = json_array_size(syms), i;
    json_t *r;
    struct sym_ref *by_id = mp_calloc(nsym ? nsym : 1, sizeof(*by_id));
    if (!by_id) {
        rc = MP_ENOMEM;
        goto out;
    }
    json_array_foreach(syms, i, r)
    {
        by_id[i].id = json_integer_value(json_object_get(r, "kernel_id"));
        by_id[i].pos = i;
        by_id[i].sym = r;
    }
    qsort(by_id, nsym, sizeof(*by_id), cmp_sym_ref);
    json_array_foreach(disp, i, r)
    {
        json_int_t kid =
            json_integer_value(json_object_get(json_object_get(r, "dispatch_info"), "kernel_id"));
        json_t *t0 = json_object_get(r, "start_timestamp");
        json_t *t1 = json_object_get(r, "end_timestamp");
        if (!json_is_integer(t0) || !json_is_integer(t1))
            continue;
        json_t *ks = find_sym(by_id, nsym, kid);
        const char *name = NULL;
        static const char *const keys[] = {"formatted_kernel_name", "truncated_kernel_name",
                                           "kernel_name"};
        for (int k = 0; k < 3 && (!name || !*name); k++)
            name = json_string_value(json_object_get(ks, keys[k]));
        if (!name || !*name || rocprof_internal(name))
            continue;
        json_int_t a = json_integer_value(t0), b = json_integer_value(t1);
        if (b >= a)
            disp_add(p, name, (double)b - (double)a); /* no integer overflow */
    }
    free((void *)by_id);
    if (p->ndispatch > 1)
        qsort(p->dispatch, (size_t)p->ndispatch, sizeof(*p->dispatch), cmp_disp);
    if (!p->ndispatch)
        rc = mp_diag_set(d, MP_EPARSE, "rocprofv3 JSON has no kernel dispatches");
out:
    json_decref(root);
    return rc;
}

static void add_metric(struct mp_kernel_perf *p, const char *name, double v, const char *unit)
{
    struct mp_kernel_metric *nm = mp_reallocarray(p->metrics, (size_t)p->nmetrics + 1, sizeof(*nm));
    if (!nm)
        return;
    p->metrics = nm;
    struct mp_kernel_metric *m = &nm[p->nmetrics++];
    m->name = mp_strdup(name);
    m->unit = mp_strdup(unit);
    m->value = v;
    m->peak = m->pct_of_peak = NAN;
}

static void perf_fail(struct mp_kernel_result *r, const char *msg)
{
    r->has_perf = true;
    r->perf.success = false;
    free(r->perf.errors);
    r->perf.errors = mp_strdup(msg);
    r->performance = MP_STAGE_FAILED;
    kern_add_error(r, "Performance: %s", msg);
}

/* First file under dir (depth <= 4) whose name ends with suffix. */
static bool find_file(const char *dir, const char *suffix, char *out, size_t len, int depth)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
            continue;
        size_t nl = strlen(e->d_name), sl = strlen(suffix);
        if (mp_fs_is_dir(path)) {
            if (depth < 4)
                found = find_file(path, suffix, out, len, depth + 1);
        } else if (nl >= sl && !strcmp(e->d_name + nl - sl, suffix)) {
            found = (size_t)snprintf(out, len, "%s", path) < len;
        }
    }
    closedir(dp);
    return found;
}

/* Metric rows of rocprof-compute's analysis CSVs: Metric, Avg|Value|Average,
 * Unit, Peak, Pct of Peak. */
static void rocprof_analysis(const char *dir, struct mp_kernel_perf *p)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    char **f = mp_calloc(NCU_MAX_COLS, sizeof(char *));
    struct mp_buf rb;
    mp_buf_init(&rb, (size_t)16 << 20);
    while (f && (e = readdir(dp)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (nl < 5 || strcmp(e->d_name + nl - 4, ".csv") != 0)
            continue;
        char path[8192];
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
            continue;
        size_t len = 0;
        char *text = kern_read_file(path, &len);
        if (!text)
            continue;
        size_t pos = 0;
        int nh = csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb);
        int cm = -1, cv = -1, cu = -1, cp = -1, cpp = -1;
        for (int i = 0; i < nh; i++) {
            if (!strcmp(f[i], "Metric"))
                cm = i;
            else if (!strcmp(f[i], "Avg") || !strcmp(f[i], "Value") || !strcmp(f[i], "Average"))
                cv = i;
            else if (!strcmp(f[i], "Unit"))
                cu = i;
            else if (!strcmp(f[i], "Peak"))
                cp = i;
            else if (!strcmp(f[i], "Pct of Peak") || !strcmp(f[i], "Pop"))
                cpp = i;
        }
        while (cm >= 0 && cv >= 0 && pos < len) {
            int nf = csv_record(text, len, &pos, f, NCU_MAX_COLS, &rb);
            if (nf <= cm || nf <= cv)
                continue;
            double v = ncu_number(f[cv]);
            if (!isfinite(v))
                continue;
            add_metric(p, f[cm], v, cu >= 0 && cu < nf ? f[cu] : "");
            struct mp_kernel_metric *m = &p->metrics[p->nmetrics - 1];
            if (cp >= 0 && cp < nf)
                m->peak = ncu_number(f[cp]);
            if (cpp >= 0 && cpp < nf)
                m->pct_of_peak = ncu_number(f[cpp]);
        }
        free(text);
    }
    free((void *)f);
    mp_buf_fini(&rb);
    closedir(dp);
}

/* rocprofv3 --kernel-trace, or rocprof-compute profile + analyze, on each
 * testcase command, as Magpie builds them. Unverified (no AMD GPU here). */
static void rocprof_run(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                        struct mp_kernel_result *r, const char *tool, bool v3,
                        const struct mp_proc_opts *po)
{
    r->has_perf = true;
    r->perf.backend = mp_strdup(v3 ? "rocprofv3" : "rocprof_compute");
    char wd[4200];
    snprintf(wd, sizeof(wd), "%s/%s", r->workdir,
             v3 ? "rocprofv3" : "performance/rocprof_compute_output");
    mp_fs_mkdirs(wd, NULL);
    r->perf.workload_dir = mp_strdup(wd);
    const struct mp_performance_cfg *pc = &cfg->performance;
    static const char *const def_blocks[] = {"1", "2", "5", "10", "11", "12", "14", "16", "17"};
    struct mp_buf cmd;
    mp_buf_init(&cmd, 1 << 20);
    for (int t = 0; t < k->testcase.n; t++) {
        const char *argv[256];
        int a = 0;
        char sub[4300];
        snprintf(sub, sizeof(sub), "%s/run_%d", wd, t);
        argv[a++] = tool;
        char **split = NULL;
        char *owned[160];
        int nowned = 0;
        if (v3) {
            argv[a++] = "--kernel-trace";
            argv[a++] = "--output-format";
            argv[a++] = "csv";
            argv[a++] = "-d";
            argv[a++] = sub;
        } else {
            argv[a++] = "profile";
            argv[a++] = "-n";
            argv[a++] = "rocprof_compute_output";
            argv[a++] = "-p";
            argv[a++] = wd;
            argv[a++] = "-b";
            int nb = pc->rocprof_metric_blocks.n;
            for (int b = 0; b < (nb ? nb : 9) && a < 100; b++)
                argv[a++] = nb ? pc->rocprof_metric_blocks.v[b] : def_blocks[b];
            for (int i = 0; i < pc->rocprof_profile_args.n && a < 150; i++) {
                int n = 0;
                if (mp_proc_split(pc->rocprof_profile_args.v[i], &split, &n, NULL) == 0) {
                    /* roofline: true drops --no-roof (Magpie) */
                    for (int j = 0; j < n && a < 150 && nowned < 150; j++)
                        if (!(pc->roofline == 1 && !strcmp(split[j], "--no-roof")))
                            argv[a++] = owned[nowned++] = mp_strdup(split[j]);
                    mp_proc_argv_free(split);
                    split = NULL;
                }
            }
            if (pc->roofline == 0)
                argv[a++] = "--no-roof";
        }
        argv[a++] = "--";
        for (int j = 0; k->testcase.argv[t][j] && a < 254; j++)
            argv[a++] = k->testcase.argv[t][j];
        argv[a] = NULL;
        if (t == 0)
            mp_proc_join(argv, &cmd);
        struct mp_proc_result res;
        struct mp_diag d;
        mp_diag_clear(&d);
        int rc = mp_proc_run(argv, po, &res, &d);
        bool ok = !rc && mp_proc_result_ok(&res);
        char desc[256];
        mp_proc_describe(&res, po->timeout_s, desc, sizeof(desc));
        mp_proc_result_fini(&res);
        for (int i = 0; i < nowned; i++)
            free(owned[i]);
        if (!ok) {
            char msg[600];
            snprintf(msg, sizeof(msg), "%.100s failed: %.400s", tool, rc ? d.msg : desc);
            perf_fail(r, msg);
            break;
        }
        char csv[4400];
        bool json = false; /* rocprofv3 with --output-format json (e.g. a prof_command) */
        bool have = v3 ? find_file(sub, "kernel_trace.csv", csv, sizeof(csv), 0)
                       : (snprintf(csv, sizeof(csv), "%s/pmc_perf.csv", wd), mp_fs_exists(csv));
        if (!have && v3)
            have = json = find_file(sub, "_results.json", csv, sizeof(csv), 0);
        if (!have) {
            perf_fail(r, v3 ? "rocprofv3 wrote no kernel_trace.csv (nor a JSON results file)"
                            : "rocprof-compute wrote no pmc_perf.csv");
            break;
        }
        size_t len = 0;
        char *text = kern_read_file(csv, &len);
        mp_diag_clear(&d);
        if (!text || (json ? mp_kernel_parse_rocprof_json(text, len, &r->perf, &d)
                           : mp_kernel_parse_rocprof_kernel_trace(text, len, &r->perf, &d))) {
            char msg[700];
            snprintf(msg, sizeof(msg), "cannot parse %.300s: %.300s", csv, d.msg);
            perf_fail(r, msg);
            free(text);
            break;
        }
        free(text);
    }
    if (!v3 && r->performance != MP_STAGE_FAILED) {
        const char *an[64];
        int a = 0;
        an[a++] = tool;
        an[a++] = "analyze";
        an[a++] = "-p";
        an[a++] = wd;
        an[a++] = "-b";
        int nb = pc->rocprof_metric_blocks.n;
        for (int b = 0; b < (nb ? nb : 9) && a < 40; b++)
            an[a++] = nb ? pc->rocprof_metric_blocks.v[b] : def_blocks[b];
        an[a++] = "--output-format";
        an[a++] = "csv";
        an[a++] = "--output-name";
        an[a++] = "analysis";
        for (int i = 0; i < pc->rocprof_analyze_args.n && a < 62; i++)
            an[a++] = pc->rocprof_analyze_args.v[i];
        an[a] = NULL;
        struct mp_proc_opts apo = *po;
        apo.cwd = wd;
        struct mp_proc_result res;
        if (mp_proc_run(an, &apo, &res, NULL) == 0 && mp_proc_result_ok(&res)) {
            char adir[4300];
            snprintf(adir, sizeof(adir), "%s/analysis", wd);
            rocprof_analysis(adir, &r->perf);
        }
        mp_proc_result_fini(&res);
    }
    r->perf.command = mp_strdup(mp_buf_cstr(&cmd));
    mp_buf_fini(&cmd);
    if (r->performance != MP_STAGE_FAILED) {
        r->perf.success = true;
        r->performance = MP_STAGE_SUCCESS;
    }
}

/* prof_command: the kernel's own profiling commands, run in order */
static void perf_custom(const struct mp_kernel_spec *k, struct mp_kernel_result *r,
                        const struct mp_proc_opts *po)
{
    struct mp_diag d;
    struct mp_buf cmd;
    mp_buf_init(&cmd, 1 << 20);
    r->has_perf = true;
    for (int j = 0; j < k->prof.n; j++) {
        struct mp_proc_result res;
        mp_diag_clear(&d);
        int rc = mp_proc_run((const char *const *)k->prof.argv[j], po, &res, &d);
        bool ok = !rc && mp_proc_result_ok(&res);
        char desc[256];
        mp_proc_describe(&res, po->timeout_s, desc, sizeof(desc));
        mp_proc_result_fini(&res);
        if (!ok) {
            char msg[600];
            snprintf(msg, sizeof(msg), "prof_command %d/%d failed: %s", j + 1, k->prof.n,
                     rc ? d.msg : desc);
            perf_fail(r, msg);
            mp_buf_fini(&cmd);
            return;
        }
    }
    mp_cmds_join(&k->prof, &cmd);
    r->perf.command = mp_strdup(mp_buf_cstr(&cmd));
    r->perf.backend = mp_strdup("custom");
    r->perf.success = true;
    add_metric(&r->perf, "custom_profiling_complete", 1.0, "bool");
    r->performance = MP_STAGE_SUCCESS;
    mp_buf_fini(&cmd);
}

/* the AMD backends (rocprof-compute, rocprofv3, Metrix) */
static void perf_amd(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                     struct mp_kernel_result *r, const char *be, const struct mp_proc_opts *po)
{
    char tool[1024];
    const char *name = !strcmp(be, "metrix")      ? "metrix"
                       : !strcmp(be, "rocprofv3") ? "rocprofv3"
                                                  : "rocprof-compute";
    if (mp_gpu_find_tool(name, tool, sizeof(tool)))
        perf_fail(r, !strcmp(be, "metrix")
                         ? "metrix not found. Install IntelliKit Metrix to use this backend."
                     : !strcmp(be, "rocprofv3")
                         ? "rocprofv3 not found. Please install ROCm tools."
                         : "rocprof-compute not found. Please install ROCm tools.");
    else if (!strcmp(be, "metrix"))
        perf_fail(r, "the Metrix backend is not driven by magpie yet");
    else if (k->testcase.n == 0)
        perf_fail(r, "AMD profilers run the testcase: the kernel has none");
    else
        rocprof_run(cfg, k, r, tool, !strcmp(be, "rocprofv3"), po);
}

/* ncu --csv --print-units base --metrics m,... [--clock-control none]
 * [--nvtx --nvtx-include RANGE/] <ncu.args> [--launch-count 20] target; the
 * array and prog (a target relative to the kernel's working_dir) and nvtx
 * (the include expression, 300 bytes) are the caller's; NULL when out of
 * memory. GPU clocks are never changed (ncu's default locks them to base):
 * --clock-control none unless ncu.args sets it. */
static const char **ncu_argv(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                             const char *tool, const char *metrics, const char *const *target,
                             const char *nvtx_range, char *nvtx, char *prog, size_t prog_len)
{
    int nt = 0;
    while (target[nt])
        nt++;
    int na = cfg->performance.ncu_args.n;
    const char **argv = mp_calloc((size_t)nt + (size_t)na + 16, sizeof(char *));
    if (!argv)
        return NULL;
    int a = 0;
    argv[a++] = tool;
    argv[a++] = "--csv";
    argv[a++] = "--print-units";
    argv[a++] = "base";
    argv[a++] = "--metrics";
    argv[a++] = metrics;
    bool has_count = false, has_clock = false;
    for (int i = 0; i < na; i++) {
        const char *x = cfg->performance.ncu_args.v[i];
        has_count = has_count || !strcmp(x, "-c") || !strcmp(x, "--launch-count");
        has_clock = has_clock || !strncmp(x, "--clock-control", 15);
    }
    if (!has_clock) {
        argv[a++] = "--clock-control";
        argv[a++] = "none";
    }
    if (nvtx_range) { /* push/pop range (the trailing slash), default domain */
        snprintf(nvtx, 300, "%s/", nvtx_range);
        argv[a++] = "--nvtx";
        argv[a++] = "--nvtx-include";
        argv[a++] = nvtx;
    }
    for (int i = 0; i < na; i++)
        argv[a++] = cfg->performance.ncu_args.v[i];
    if (!has_count) { /* profilers explain; a testcase's timing loop needs no profile */
        argv[a++] = "--launch-count";
        argv[a++] = "20";
    }
    for (int i = 0; i < nt; i++)
        argv[a++] = target[i];
    if (nt > 0 && k->working_dir && target[0][0] != '/' && strchr(target[0], '/')) {
        char wd[4096];
        snprintf(prog, prog_len, "%s/%s", realpath(k->working_dir, wd) ? wd : k->working_dir,
                 target[0]);
        argv[a - nt] = prog; /* relative to the kernel's working_dir */
    }
    argv[a] = NULL;
    return argv;
}

/* The first `==ERROR==` line of ncu's text into out (kept when out holds
 * one already): why a run that exited 0 printed no metrics (e.g.
 * ERR_NVGPUCTRPERM, no permission for the performance counters) */
static void ncu_error_line(const char *text, char *out, size_t n)
{
    const char *e = text ? strstr(text, "==ERROR==") : NULL;
    if (!e || out[0])
        return;
    size_t len = strcspn(e, "\r\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), e);
}

/* ncu on each target (magpie's child, or every testcase command), its CSV
 * output gathered in all, its first error line in ncu_err (512 bytes);
 * false when the stage failed */
static bool ncu_targets(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                        struct mp_kernel_result *r, const char *tool, const char *metrics,
                        const struct kern_perf_target *child, const struct mp_proc_opts *po,
                        struct mp_buf *cmd, struct mp_buf *all, char *ncu_err)
{
    struct mp_diag d;
    int ntargets = child ? 1 : k->testcase.n;
    for (int t = 0; t < ntargets; t++) {
        const char *const *target = child ? child->argv : (const char *const *)k->testcase.argv[t];
        char prog[8192], nvtx[300];
        const char **argv = ncu_argv(cfg, k, tool, metrics, target,
                                     child ? child->nvtx_range : NULL, nvtx, prog, sizeof(prog));
        if (!argv)
            break;
        if (t == 0)
            mp_proc_join(argv, cmd);
        struct mp_proc_result res;
        mp_diag_clear(&d);
        int rc = mp_proc_run(argv, po, &res, &d);
        free((void *)argv);
        bool ok = !rc && res.exited && !res.timed_out;
        mp_buf_append(all, res.out.data ? res.out.data : "", res.out.len);
        char desc[256];
        mp_proc_describe(&res, po->timeout_s, desc, sizeof(desc));
        char errtail[1024];
        snprintf(errtail, sizeof(errtail), "%s", mp_buf_cstr(&res.err));
        ncu_error_line(mp_buf_cstr(&res.out), ncu_err, 512);
        ncu_error_line(errtail, ncu_err, 512);
        mp_proc_result_fini(&res);
        if (!ok) {
            char msg[1600];
            snprintf(msg, sizeof(msg), "ncu failed: %s %s", rc ? d.msg : desc, errtail);
            perf_fail(r, msg);
            return false;
        }
    }
    return true;
}

/* Nsight Compute: the metrics of each target, kept as ncu.csv and parsed */
static void perf_ncu(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                     struct mp_kernel_result *r, const struct kern_perf_target *child,
                     const struct mp_proc_opts *po)
{
    char tool[1024];
    if (mp_gpu_find_tool("ncu", tool, sizeof(tool))) {
        perf_fail(r, "ncu not found. Please install NVIDIA Nsight Compute.");
        return;
    }
    struct mp_diag d;
    struct mp_buf cmd;
    mp_buf_init(&cmd, 1 << 20);
    struct mp_buf metrics;
    mp_buf_init(&metrics, 1 << 16);
    const struct mp_strlist *ml = &cfg->performance.ncu_metrics;
    if (ml->n)
        for (int i = 0; i < ml->n; i++)
            mp_buf_printf(&metrics, "%s%s", i ? "," : "", ml->v[i]);
    else
        for (int i = 0; default_metrics[i]; i++)
            mp_buf_printf(&metrics, "%s%s", i ? "," : "", default_metrics[i]);
    char csvp[4200];
    snprintf(csvp, sizeof(csvp), "%s/ncu.csv", r->workdir);
    r->has_perf = true;
    r->perf.backend = mp_strdup("ncu");
    r->perf.workload_dir = mp_strdup(r->workdir);
    struct mp_buf all;
    mp_buf_init(&all, (size_t)64 << 20);
    char ncu_err[512] = "";
    ncu_targets(cfg, k, r, tool, mp_buf_cstr(&metrics), child, po, &cmd, &all, ncu_err);
    mp_fs_write_atomic(csvp, all.data ? all.data : "", all.len, NULL);
    r->perf.command = mp_strdup(mp_buf_cstr(&cmd));
    if (r->performance != MP_STAGE_FAILED) {
        mp_diag_clear(&d);
        if (mp_kernel_parse_ncu_csv(all.data ? all.data : "", all.len, &r->perf, &d)) {
            char msg[1500];
            if (ncu_err[0])
                snprintf(msg, sizeof(msg), "ncu printed no metrics (%.150s): %s", csvp, ncu_err);
            else if (child && child->nvtx_range && all.data &&
                     strstr(mp_buf_cstr(&all), "No kernels were profiled"))
                snprintf(msg, sizeof(msg),
                         "ncu profiled no kernel inside the NVTX range %s (the candidate's "
                         "profiled calls launched no GPU kernel, or they did not run: %.150s)",
                         child->nvtx_range, csvp);
            else
                snprintf(msg, sizeof(msg), "could not parse the ncu output (%.150s): %.500s", csvp,
                         d.msg);
            perf_fail(r, msg);
        } else {
            r->perf.success = true;
            r->performance = MP_STAGE_SUCCESS;
        }
    }
    mp_buf_fini(&all);
    mp_buf_fini(&metrics);
    mp_buf_fini(&cmd);
}

void kern_perf_child_result(struct mp_kernel_result *r, json_t *res, bool runner)
{
    if (!runner || r->performance == MP_STAGE_SKIPPED)
        return;
    json_t *ks = json_object_get(res, "kernels"), *pr = NULL;
    for (size_t i = 0; i < json_array_size(ks) && !pr; i++)
        pr = json_object_get(json_array_get(ks, i), "profile");
    const char *derr = json_string_value(json_object_get(res, "device_error"));
    const char *msg = derr ? derr : json_string_value(json_object_get(pr, "message"));
    bool ok = res && !derr && json_is_true(json_object_get(pr, "ok"));
    if (ok)
        return;
    char m[1200];
    snprintf(m, sizeof(m), "the runner's profiled calls under ncu failed: %.1000s",
             msg   ? msg
             : res ? "no profile in its result"
                   : "it wrote no result");
    if (r->performance == MP_STAGE_FAILED) { /* say why beside ncu's own failure */
        kern_add_error(r, "Performance: %s", m);
        return;
    }
    perf_fail(r, m); /* metrics of a run that did not finish are not the kernel's */
}

int kern_stage_performance(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                           struct mp_kernel_result *r, const struct kern_perf_target *child)
{
    struct mp_proc_opts po = {
        .cwd = k->working_dir,
        .env = (const char *const *)k->env,
        .timeout_s = cfg->performance.timeout_s,
        .capture_max = (size_t)64 << 20,
    };
    if (k->prof.n > 0) {
        perf_custom(k, r, &po);
        return 0;
    }
    /* the language's row decides: its profiler for "auto", none at all
     * (OpenCL), or only when magpie runs the kernel itself (PyTorch) */
    const char *be = mp_kernel_lang_profiler(mp_kernel_lang_get(k->type), cfg->performance.backend,
                                             child != NULL);
    if (!be) {
        r->performance = MP_STAGE_SKIPPED;
        return 0;
    }
    if (!child && k->testcase.n == 0) {
        r->performance = MP_STAGE_SKIPPED;
        return 0;
    }
    if (!strcmp(be, "rocprof_compute") || !strcmp(be, "metrix") || !strcmp(be, "rocprofv3")) {
        perf_amd(cfg, k, r, be, &po);
        return 0;
    }
    perf_ncu(cfg, k, r, child, &po);
    return 0;
}
