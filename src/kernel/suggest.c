/* Optimisation suggestions from profiler metrics (Magpie's
 * suggest_optimizations, the MCP tool of the same name).
 *
 * AMD (rocprof-compute metric names, Magpie's rules and thresholds):
 *   Active CUs pct_of_peak < 50 (high < 25)     -> low_cu_occupancy
 *   MFMA_Util < 50 with MFMA F16/BF16 FLOPs > 0 -> low_mfma_utilization
 *   VALU_Util > 50 and MFMA_Util < 10           -> vectorization hint
 *   VMEM_Util > 70                              -> memory_bound
 * NVIDIA (Nsight Compute metric names; the speed-of-light thresholds follow
 * Nsight Compute's own guidance: above 60 % of peak a unit is the limiter,
 * above 80 % it is saturated; both below 60 % means latency-bound):
 *   memory SOL >= 60 and >= compute SOL          -> memory_bound
 *   compute SOL >= 60 and > memory SOL           -> compute_bound
 *   both < 60                                    -> latency_bound
 *   achieved occupancy < 50 (high < 25)          -> low_occupancy
 *   tensor pipe < 10 with FP32 FMA work and compute SOL >= 40, or
 *   tensor pipe < 50 while compute-bound         -> low_tensor_pipe_utilization
 * Both: more than half of the kernels average under 10 us
 *                                                -> kernel_launch_overhead
 * Unlike Magpie, a metric that is absent never triggers a rule (Magpie reads
 * a missing pct_of_peak as 0 % and reports low occupancy). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/suggest.h>

struct sg {
    json_t *bottlenecks, *suggestions;
    json_t *notes; /* why a rule could not be applied */
};

static void add_note(struct sg *s, const char *msg)
{
    json_array_append_new(s->notes, json_string(msg));
}

/* The metric's value (key "value", or "pct_of_peak" when pct is set);
 * false when absent or not a number. */
static bool metric(json_t *summary, const char *name, const char *field, double *v)
{
    json_t *m = json_object_get(summary, name);
    if (!json_is_object(m))
        return false;
    json_t *x = json_object_get(m, field);
    if (!json_is_number(x))
        return false;
    *v = json_number_value(x);
    return isfinite(*v);
}

/* Magpie formats values with Python's str(): 23 for an int, 23.5 for a float. */
static void fmt_num(double v, char *buf, size_t n)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        mp_fmt_pyfloat(v, buf, n);
}

/* Percentages in magpie's own (NVIDIA) texts: one decimal. */
static void fmt_pct(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.1f", v);
}

/* An object of n string members, given as key, value, key, value, ... */
static json_t *str_members(const char *const *kv, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, kv[2 * i], json_string(kv[2 * i + 1]));
    return o;
}

static void add_bottleneck(struct sg *s, const char *type, const char *severity, const char *value,
                           const char *desc, const char *metric_name, double metric_value,
                           const char *threshold)
{
    json_t *b =
        str_members((const char *const[]){"type", type, "severity", severity, "value", value,
                                          "description", desc, "metric", metric_name},
                    5);
    json_object_set_new(b, "metric_value", json_real(metric_value));
    json_object_set_new(b, "threshold", json_string(threshold));
    json_array_append_new(s->bottlenecks, b);
}

/* A speed-of-light bottleneck at pct % of peak (60 or more): high and
 * saturated from 80 on, else medium under the rule `below80`. */
static void add_sol_bottleneck(struct sg *s, const char *type, const char *value, const char *desc,
                               const char *metric_name, double pct, const char *below80)
{
    bool sat = pct >= 80;
    add_bottleneck(s, type, sat ? "high" : "medium", value, desc, metric_name, pct,
                   sat ? ">= 80 (saturated)" : below80);
}

static void add_suggestion(struct sg *s, const char *category, const char *text, const char *impact,
                           const char *details, const char *metric_name, double metric_value)
{
    json_t *o =
        str_members((const char *const[]){"category", category, "suggestion", text, "impact",
                                          impact, "details", details, "metric", metric_name},
                    5);
    json_object_set_new(o, "metric_value", json_real(metric_value));
    json_array_append_new(s->suggestions, o);
}

static void amd_rules(struct sg *s, json_t *sum, bool *any)
{
    char v[48], t[512];
    double cu, mfma = 0, valu, vmem, f16 = 0, bf16 = 0;
    bool has_mfma = metric(sum, "MFMA_Util", "value", &mfma);
    if (metric(sum, "Active CUs", "pct_of_peak", &cu)) {
        *any = true;
        if (cu < 50) {
            fmt_num(cu, v, sizeof(v));
            snprintf(t, sizeof(t), "%s%% CU utilization", v);
            add_bottleneck(s, "low_cu_occupancy", cu < 25 ? "high" : "medium", t,
                           "Low Compute Unit occupancy indicates underutilization of GPU resources",
                           "Active CUs", cu, cu < 25 ? "pct_of_peak < 25" : "pct_of_peak < 50");
            snprintf(t, sizeof(t),
                     "Current CU utilization is only %s%%. Consider increasing occupancy by "
                     "adjusting block dimensions or using more registers efficiently.",
                     v);
            add_suggestion(s, "parallelism",
                           "Increase thread block size or launch more thread blocks", "high", t,
                           "Active CUs", cu);
        }
    }
    if (has_mfma) {
        *any = true;
        bool f = metric(sum, "MFMA_FLOPs_F16", "value", &f16);
        bool bf = metric(sum, "MFMA_FLOPs_BF16", "value", &bf16);
        if (mfma < 50 && ((f && f16 > 0) || (bf && bf16 > 0))) {
            fmt_num(mfma, v, sizeof(v));
            snprintf(t, sizeof(t), "%s%% MFMA utilization", v);
            add_bottleneck(s, "low_mfma_utilization", "medium", t,
                           "Matrix operations not fully utilizing MFMA units", "MFMA_Util", mfma,
                           "< 50 with MFMA F16/BF16 FLOPs > 0");
            add_suggestion(s, "matrix_ops", "Optimize matrix tile sizes for MFMA instructions",
                           "high",
                           "Consider using tile sizes that match MFMA instruction requirements "
                           "(16x16, 32x32, etc.)",
                           "MFMA_Util", mfma);
        }
    }
    if (metric(sum, "VALU_Util", "value", &valu)) {
        *any = true;
        if (valu > 50 && mfma < 10) {
            char m[48];
            fmt_num(valu, v, sizeof(v));
            fmt_num(mfma, m, sizeof(m));
            snprintf(t, sizeof(t),
                     "High VALU utilization (%s%%) with low MFMA (%s%%) suggests potential for "
                     "matrix optimization",
                     v, m);
            add_suggestion(s, "vectorization",
                           "Replace scalar operations with matrix operations where possible",
                           "medium", t, "VALU_Util", valu);
        }
    }
    if (metric(sum, "VMEM_Util", "value", &vmem)) {
        *any = true;
        if (vmem > 70) {
            fmt_num(vmem, v, sizeof(v));
            snprintf(t, sizeof(t), "%s%% VMEM utilization", v);
            add_bottleneck(s, "memory_bound", "high", t, "Kernel is memory bandwidth limited",
                           "VMEM_Util", vmem, "> 70");
            add_suggestion(s, "memory", "Optimize memory access patterns and use LDS caching",
                           "high",
                           "Consider coalescing memory accesses, using shared memory (LDS), or "
                           "reducing memory traffic through computation reuse",
                           "VMEM_Util", vmem);
        }
    }
}

#define NCU_SM "sm__throughput.avg.pct_of_peak_sustained_elapsed"
#define NCU_MEM "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
#define NCU_DRAM "dram__throughput.avg.pct_of_peak_sustained_elapsed"
#define NCU_OCC "sm__warps_active.avg.pct_of_peak_sustained_active"
#define NCU_REGS "launch__registers_per_thread"
#define NCU_FFMA "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"

/* The highest tensor-pipe utilisation metric present (HMMA, GMMA, IMMA...),
 * its name in *name. */
static bool tensor_pipe(json_t *sum, double *v, const char **name)
{
    const char *key;
    json_t *val;
    bool found = false;
    json_object_foreach(sum, key, val)
    {
        if ((strncmp(key, "sm__pipe_tensor", 15) != 0 &&
             strncmp(key, "sm__inst_executed_pipe_tensor", 29) != 0) ||
            !strstr(key, "pct_of_peak"))
            continue;
        double x;
        if (metric(sum, key, "value", &x) && (!found || x > *v)) {
            *v = x;
            *name = key;
            found = true;
        }
    }
    return found;
}

static void nvidia_rules(struct sg *s, json_t *sum, bool *any)
{
    char v[48], w[48], t[640];
    double sm = NAN, mem = NAN, occ, regs = 0, ffma = 0, tp = 0;
    const char *tp_name = NULL;
    bool has_sm = metric(sum, NCU_SM, "value", &sm);
    const char *mem_name = NCU_MEM;
    bool has_mem = metric(sum, NCU_MEM, "value", &mem);
    if (!has_mem) {
        mem_name = NCU_DRAM;
        has_mem = metric(sum, NCU_DRAM, "value", &mem);
    }
    bool has_regs = metric(sum, NCU_REGS, "value", &regs);
    bool has_ffma = metric(sum, NCU_FFMA, "value", &ffma);
    bool has_tp = tensor_pipe(sum, &tp, &tp_name);
    bool compute_bound = false;
    if (has_sm || has_mem || has_tp)
        *any = true;
    if (has_sm && has_mem) {
        fmt_pct(sm, v, sizeof(v));
        fmt_pct(mem, w, sizeof(w));
        if (mem >= 60 && mem >= sm) {
            snprintf(t, sizeof(t), "%s%% of peak memory throughput (compute %s%%)", w, v);
            add_sol_bottleneck(s, "memory_bound", t,
                               "Memory throughput is the limiter (speed of light)", mem_name, mem,
                               ">= 60 and >= compute");
            snprintf(t, sizeof(t),
                     "Memory runs at %s%% of peak while compute is at %s%%: coalesce global "
                     "accesses, use vectorized (128-bit) loads, keep reused data in shared "
                     "memory or registers, and fuse neighbouring kernels to cut DRAM traffic.",
                     w, v);
            add_suggestion(s, "memory", "Reduce memory traffic and improve access efficiency",
                           "high", t, mem_name, mem);
        } else if (sm >= 60 && sm > mem) {
            compute_bound = true;
            snprintf(t, sizeof(t), "%s%% of peak SM throughput (memory %s%%)", v, w);
            add_sol_bottleneck(s, "compute_bound", t,
                               "SM throughput is the limiter (speed of light)", NCU_SM, sm,
                               ">= 60 and > memory");
            snprintf(t, sizeof(t),
                     "SM throughput is %s%% of peak: cut instructions per result (fused "
                     "multiply-add, fewer conversions and index computations, "
                     "lower-precision math where accuracy allows).",
                     v);
            add_suggestion(s, "compute", "Reduce the instruction work per result", "medium", t,
                           NCU_SM, sm);
        } else if (sm < 60 && mem < 60) {
            snprintf(t, sizeof(t), "compute %s%%, memory %s%% of peak", v, w);
            add_bottleneck(s, "latency_bound", "medium", t,
                           "Neither compute nor memory is near its peak: the kernel waits on "
                           "latency (too few warps in flight, dependencies or synchronisation)",
                           sm >= mem ? NCU_SM : mem_name, sm >= mem ? sm : mem, "both < 60");
            snprintf(t, sizeof(t),
                     "Compute %s%% and memory %s%% of peak: expose more parallelism (more "
                     "blocks or more independent work per thread), unroll loops for "
                     "instruction-level parallelism, and avoid serialising barriers.",
                     v, w);
            add_suggestion(s, "parallelism", "Hide latency with more independent work", "high", t,
                           sm >= mem ? NCU_SM : mem_name, sm >= mem ? sm : mem);
        }
    }
    if (has_sm != has_mem)
        add_note(s, has_sm ? "speed-of-light rules need a memory throughput metric too (" NCU_MEM
                             " or " NCU_DRAM "); only " NCU_SM " was measured"
                           : "speed-of-light rules need " NCU_SM " too; only a memory "
                             "throughput metric was measured");
    if (metric(sum, NCU_OCC, "value", &occ)) {
        *any = true;
        if (occ < 50) {
            fmt_pct(occ, v, sizeof(v));
            snprintf(t, sizeof(t), "%s%% achieved occupancy", v);
            add_bottleneck(s, "low_occupancy", occ < 25 ? "high" : "medium", t,
                           "Few warps are active per SM, so stalls cannot be hidden", NCU_OCC, occ,
                           occ < 25 ? "< 25" : "< 50");
            char regs_s[48] = "";
            if (has_regs)
                fmt_num(regs, regs_s, sizeof(regs_s));
            snprintf(t, sizeof(t),
                     "Achieved occupancy is %s%%%s%s%s: launch enough blocks to fill every SM, "
                     "and lower registers (__launch_bounds__, -maxrregcount) or shared memory "
                     "per block when they limit resident warps.",
                     v, has_regs ? " with " : "", regs_s, has_regs ? " registers per thread" : "");
            add_suggestion(s, "parallelism", "Raise occupancy", occ < 25 ? "high" : "medium", t,
                           NCU_OCC, occ);
        }
    }
    if (has_tp) {
        fmt_pct(tp, v, sizeof(v));
        bool fp32_work = has_ffma && ffma > 0 && has_sm && sm >= 40 && tp < 10;
        if (fp32_work || (compute_bound && tp < 50)) {
            snprintf(t, sizeof(t), "%s%% tensor pipe utilization", v);
            add_bottleneck(s, "low_tensor_pipe_utilization", "medium", t,
                           fp32_work ? "Matrix-style FP32 FMA work runs on the CUDA cores, not "
                                       "the tensor cores"
                                     : "The kernel is compute-bound but its tensor pipe is idle "
                                       "most of the time",
                           tp_name, tp,
                           fp32_work ? "< 10 with FP32 FMA work" : "< 50 while compute-bound");
            snprintf(t, sizeof(t),
                     "The tensor pipe is busy %s%% of the time: move the inner products to "
                     "tensor-core instructions (mma/wgmma through CUTLASS, cuBLAS or Triton "
                     "tl.dot) with FP16/BF16/TF32 inputs and tiles that are multiples of the "
                     "MMA shape.",
                     v);
            add_suggestion(s, "matrix_ops", "Use the tensor cores for the matrix work", "high", t,
                           tp_name, tp);
        }
    }
}

static void launch_rule(struct sg *s, json_t *kernels)
{
    size_t n = json_array_size(kernels), shortn = 0, i;
    json_t *k;
    if (!n)
        return;
    json_array_foreach(kernels, i, k)
    {
        json_t *dn = json_object_get(k, "duration_ns");
        json_t *avg = json_object_get(dn, "avg");
        double a = json_is_number(avg) ? json_number_value(avg) : 0; /* Magpie: missing = 0 */
        if (a < 10000)
            shortn++;
    }
    if ((double)shortn > (double)n * 0.5) {
        char t[128];
        snprintf(t, sizeof(t), "%zu short kernels (<10\xc2\xb5s)", shortn);
        add_bottleneck(s, "kernel_launch_overhead", "medium", t,
                       "Many short kernel launches can be dominated by launch overhead",
                       "duration_ns.avg", (double)shortn, "more than half of the kernels < 10 us");
        add_suggestion(s, "fusion", "Fuse multiple short kernels into larger kernels", "medium",
                       "Consider kernel fusion to reduce launch overhead and improve data "
                       "locality",
                       "duration_ns.avg", (double)shortn);
    }
}

static int impact_rank(json_t *o)
{
    const char *im = json_string_value(json_object_get(o, "impact"));
    if (im && !strcmp(im, "high"))
        return 0;
    if (im && !strcmp(im, "medium"))
        return 1;
    return 2;
}

static const char *vendor_of(json_t *summary, json_t *perf)
{
    const char *b = json_string_value(json_object_get(perf, "backend"));
    if (b && (!strcmp(b, "ncu")))
        return "nvidia";
    if (b && (strstr(b, "rocprof") || !strcmp(b, "metrix")))
        return "amd";
    const char *key;
    json_t *v;
    json_object_foreach(summary, key, v)
    {
        if (strstr(key, "__"))
            return "nvidia";
        if (!strcmp(key, "Active CUs") || strstr(key, "MFMA") || strstr(key, "VALU"))
            return "amd";
    }
    return "unknown";
}

/* The kernel's id: kernel_id (Magpie's analyze result), else where
 * magpie's analyze answer and report keep it (extra, kernel_config) */
static json_t *kernel_id_of(json_t *data)
{
    json_t *kid = json_object_get(data, "kernel_id");
    if (!json_is_string(kid))
        kid = json_object_get(json_object_get(data, "extra"), "kernel_id");
    if (!json_is_string(kid))
        kid = json_object_get(json_object_get(data, "kernel_config"), "kernel_id");
    return json_is_string(kid) ? json_copy(kid) : json_string("unknown");
}

static int one(json_t *data, json_t **out, struct mp_diag *d)
{
    const char *state = json_string_value(json_object_get(data, "performance_state"));
    json_t *perf = json_object_get(data, "performance_result");
    if (!json_is_object(perf))
        return mp_diag_set(d, MP_EINVAL,
                           "Performance analysis not available: no performance_result in the "
                           "analysis result");
    if (state && strcmp(state, "SUCCESS") != 0) {
        json_t *e = json_object_get(data, "errors");
        char *es = e ? json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        mp_diag_set(d, MP_EINVAL, "Performance analysis not available: performance_state %s%s%s",
                    state, es ? ", errors " : "", es ? es : "");
        free(es);
        return MP_EINVAL;
    }
    json_t *summary = json_object_get(perf, "summary");
    json_t *kernels = json_object_get(perf, "kernels");
    struct sg s = {json_array(), json_array(), json_array()};
    bool any = false;
    if (json_is_object(summary)) {
        amd_rules(&s, summary, &any);
        nvidia_rules(&s, summary, &any);
    }
    if (json_is_array(kernels))
        launch_rule(&s, kernels);
    /* stable sort of the suggestions by impact (Python's sort is stable) */
    size_t n = json_array_size(s.suggestions);
    json_t *sorted = json_array();
    for (int r = 0; r < 3; r++)
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_array_get(s.suggestions, i);
            if (impact_rank(o) == r)
                json_array_append(sorted, o);
        }
    json_decref(s.suggestions);
    size_t high = 0;
    for (size_t i = 0; i < n; i++)
        high += impact_rank(json_array_get(sorted, i)) == 0;
    json_t *o = json_object();
    json_object_set_new(o, "kernel_id", kernel_id_of(data));
    json_t *score = json_object_get(data, "score");
    json_object_set_new(o, "overall_score",
                        json_is_number(score) ? json_copy(score) : json_integer(0));
    json_object_set_new(o, "bottlenecks", s.bottlenecks);
    json_object_set_new(o, "suggestions", sorted);
    json_t *sm = json_object();
    json_object_set_new(sm, "total_bottlenecks",
                        json_integer((json_int_t)json_array_size(s.bottlenecks)));
    json_object_set_new(sm, "total_suggestions", json_integer((json_int_t)n));
    json_object_set_new(sm, "high_impact_suggestions", json_integer((json_int_t)high));
    json_object_set_new(o, "summary", sm);
    json_object_set_new(o, "vendor", json_string(vendor_of(summary, perf)));
    if (!any)
        add_note(&s, "no metric that a rule reads was found in performance_result.summary "
                     "(rocprof-compute: Active CUs, MFMA_Util, VALU_Util, VMEM_Util; ncu: " NCU_SM
                     ", " NCU_MEM ", " NCU_OCC ", sm__pipe_tensor_*)");
    if (json_array_size(s.notes)) {
        json_t *joined = json_string(json_string_value(json_array_get(s.notes, 0)));
        for (size_t i = 1; i < json_array_size(s.notes); i++) {
            char *t = NULL;
            if (asprintf(&t, "%s; %s", json_string_value(joined),
                         json_string_value(json_array_get(s.notes, i))) >= 0) {
                json_decref(joined);
                joined = json_string(t);
                free(t);
            }
        }
        json_object_set_new(o, "note", joined);
    }
    json_decref(s.notes);
    *out = o;
    return 0;
}

int mp_suggest_json(json_t *analysis, json_t **out, struct mp_diag *d)
{
    *out = NULL;
    if (!json_is_object(analysis))
        return mp_diag_set(d, MP_EINVAL, "the analysis result must be a JSON object");
    json_t *res = json_object_get(analysis, "results");
    if (json_is_object(res))
        res = json_object_get(res, "kernel_results");
    if (!json_object_get(analysis, "performance_result") && json_is_array(res)) {
        json_t *list = json_array();
        size_t i;
        json_t *k;
        json_array_foreach(res, i, k)
        {
            json_t *one_out = NULL;
            struct mp_diag e;
            mp_diag_clear(&e);
            if (one(k, &one_out, &e) == 0) {
                json_array_append_new(list, one_out);
            } else {
                json_t *err = json_object();
                json_object_set_new(err, "kernel_id", kernel_id_of(k));
                json_object_set_new(err, "error", json_string(e.msg));
                json_array_append_new(list, err);
            }
        }
        json_t *o = json_object();
        json_object_set_new(o, "kernels", list);
        *out = o;
        return 0;
    }
    return one(analysis, out, d);
}

int mp_suggest_perf(const struct mp_kernel_perf *p, const char *kernel_id, json_t **out,
                    struct mp_diag *d)
{
    json_t *data = json_object(), *perf = json_object(), *sum = json_object(), *ks = json_array();
    for (int i = 0; i < p->nmetrics; i++) {
        const struct mp_kernel_metric *m = &p->metrics[i];
        json_t *mo = json_object();
        if (isfinite(m->value))
            json_object_set_new(mo, "value", json_real(m->value));
        if (isfinite(m->pct_of_peak))
            json_object_set_new(mo, "pct_of_peak", json_real(m->pct_of_peak));
        json_object_set_new(sum, m->name, mo);
    }
    for (int i = 0; i < p->ndispatch; i++) {
        json_t *k = json_object(), *dn = json_object();
        json_object_set_new(k, "kernel_name", json_string(p->dispatch[i].name));
        if (isfinite(p->dispatch[i].avg_ns))
            json_object_set_new(dn, "avg", json_real(p->dispatch[i].avg_ns));
        json_object_set_new(k, "duration_ns", dn);
        json_array_append_new(ks, k);
    }
    json_object_set_new(perf, "summary", sum);
    json_object_set_new(perf, "kernels", ks);
    if (p->backend)
        json_object_set_new(perf, "backend", json_string(p->backend));
    json_object_set_new(data, "kernel_id", json_string(kernel_id ? kernel_id : "unknown"));
    json_object_set_new(data, "performance_state", json_string(p->success ? "SUCCESS" : "FAILED"));
    json_object_set_new(data, "performance_result", perf);
    int rc = one(data, out, d);
    json_decref(data);
    return rc;
}

int mp_suggest_ncu_file(const char *path, const char *kernel_id, json_t **out, struct mp_diag *d)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        mp_diag_set(d, MP_ENOTFOUND, "cannot open the ncu CSV");
        mp_diag_set_file(d, path);
        return MP_ENOTFOUND;
    }
    struct mp_buf b;
    mp_buf_init(&b, (size_t)256 << 20);
    int rc = mp_buf_read_file(&b, f);
    fclose(f);
    if (rc) {
        mp_buf_fini(&b);
        return mp_diag_set(d, rc, "cannot read the ncu CSV (over 256 MiB?)");
    }
    struct mp_kernel_perf p;
    memset(&p, 0, sizeof(p));
    rc = mp_kernel_parse_ncu_csv(mp_buf_cstr(&b), b.len, &p, d);
    mp_buf_fini(&b);
    if (rc) {
        mp_diag_set_file(d, path);
        mp_kernel_perf_fini(&p);
        return rc;
    }
    p.success = true;
    if (!p.backend)
        p.backend = mp_strdup("ncu");
    rc = mp_suggest_perf(&p, kernel_id, out, d);
    mp_kernel_perf_fini(&p);
    return rc;
}
