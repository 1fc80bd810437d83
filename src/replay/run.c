/* --run: times the rebuilt references with runtime/magpie_replay.py (the
 * analyze runner's Timer and Sampler: CUDA events around CUDA-graph batches
 * for short calls, so the kernels are timed and not the launch path) and
 * fills the replay columns: median per call with its bootstrap CI, the
 * profiler's kernel time per call, the ratio to the trace's median and
 * whether the same kernel names ran. Without a CUDA device (or torch) the
 * files stay written and run_note says why nothing was timed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/kernel.h>
#include <magpie/proc.h>
#include <magpie/stats.h>

#include "replay_int.h"

/* Ops shorter than this per call in the trace are timed "cold" by default. */
#define RP_SHORT_US 10.0

/* The state an op's figure is replayed in (docs/replay.md, "Timing"):
 * "cold" for ops of less than RP_SHORT_US per call in the trace: inputs in
 * L2 (the op before just wrote them), the op's own kernel code and
 * constants not (its kernels last ran a layer earlier, with a layer's
 * weights streamed through L2 since), started on a drained GPU: for a
 * kernel of a few microseconds those start-up misses are a large part of
 * its time. "flushed" for longer GEMMs, attention and convolution, which in
 * a serving step read weights or a KV cache once per forward pass, far more
 * than L2 holds between two uses; "warm" for the rest, which read what the
 * op before them just wrote (the helper times those flushed when their
 * inputs are more than half the L2 of its GPU: they cannot stay there). */
static const char *l2_state(const struct mp_replay_opts *o, const struct mp_replay_op *op)
{
    if (o->warm_l2)
        return "warm";
    if (o->l2 && strcmp(o->l2, "auto") != 0)
        return o->l2;
    if (op->trace_median_us > 0 && op->trace_median_us < RP_SHORT_US)
        return "cold";
    static const char *const heavy[] = {"attention", "sdpa", "flash", "einsum", NULL};
    const char *cat = op->category ? op->category : "";
    if (strncmp(cat, "GEMM", 4) == 0 || strncmp(cat, "SDPA", 4) == 0 ||
        strncmp(cat, "CONV", 4) == 0 || strstr(cat, "attn") || rp_gemm_op(op->name))
        return "flushed";
    const char *nm = op->name ? op->name : "";
    const char *c = strstr(nm, "::");
    nm = c ? c + 2 : nm;
    for (size_t i = 0; heavy[i]; i++)
        if (strstr(nm, heavy[i]))
            return "flushed";
    return "warm";
}

static int job_json(const struct mp_replay_opts *o, const struct mp_replay_result *r,
                    const char *out_abs, const char *result, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "{\"output\": ");
    rc = rc ? rc : mp_json_str(b, result, strlen(result));
    rc = rc ? rc
            : mp_buf_printf(b,
                            ", \"allow_cpu\": %s, \"timing\": {\"max_time_s\": %g, "
                            "\"min_samples\": 10, \"max_noise\": 0.005, \"l2_flush\": %s, "
                            "\"profile_calls\": 200}, \"ops\": [",
                            getenv("MAGPIE_REPLAY_ALLOW_CPU") ? "true" : "false",
                            o->max_time_s > 0 ? o->max_time_s : 5.0,
                            o->warm_l2 || (o->l2 && (strcmp(o->l2, "warm") == 0 ||
                                                     strcmp(o->l2, "idle") == 0))
                                ? "false"
                                : "true");
    bool first = true;
    /* auto: the helper may still time a "warm" op flushed (inputs of more
     * than half the L2 of the GPU it runs on, which only it knows) */
    bool auto_l2 = !o->warm_l2 && (!o->l2 || strcmp(o->l2, "auto") == 0);
    for (size_t i = 0; !rc && i < r->n; i++) {
        if (!r->ops[i].rebuilt)
            continue;
        char ref[4200];
        snprintf(ref, sizeof(ref), "%s/ref_%d.py", out_abs, r->ops[i].n);
        rc = mp_buf_printf(
            b, "%s{\"n\": %d, \"l2\": \"%s\", \"auto\": %s, \"ref\": ", first ? "" : ", ",
            r->ops[i].n, l2_state(o, &r->ops[i]), auto_l2 ? "true" : "false");
        rc = rc ? rc : mp_json_str(b, ref, strlen(ref));
        if (!rc && r->ops[i].one_kernel) { /* only this kernel's records are the op's */
            rc = mp_buf_puts(b, ", \"kernel_only\": ");
            rc = rc ? rc : mp_json_str(b, r->ops[i].trace_kernels, strlen(r->ops[i].trace_kernels));
        }
        if (!rc && r->ops[i].prev_rebuilt) {
            snprintf(ref, sizeof(ref), "%s/prev_%d.py", out_abs, r->ops[i].n);
            rc = mp_buf_puts(b, ", \"prev_ref\": ");
            rc = rc ? rc : mp_json_str(b, ref, strlen(ref));
            rc = rc ? rc : mp_buf_printf(b, ", \"gap_us\": %.3f", r->ops[i].prev_gap_us);
        }
        /* the dirty-L2 levels the trace shows before the op, per L2 size */
        for (int k = 0; !rc && r->ops[i].dirty && k < MP_REPLAY_NGRID; k++) {
            const struct mp_replay_dirty *dl = &r->ops[i].dirty[k];
            rc = mp_buf_printf(b, "%s[%g, [", k ? ", " : ", \"dirty\": [", dl->l2_mib);
            for (int j = 0; !rc && j < dl->n; j++)
                rc = mp_buf_printf(b, "%s[%.0f, %.4f]", j ? ", " : "", dl->bytes[j], dl->share[j]);
            rc = rc ? rc : mp_buf_puts(b, k + 1 < MP_REPLAY_NGRID ? "]]" : "]]]");
        }
        rc = rc ? rc : mp_buf_putc(b, '}');
        first = false;
    }
    return rc ? rc : mp_buf_puts(b, "]}\n");
}

static bool names_match(const char *trace, json_t *names)
{
    size_t n = json_array_size(names), seen = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = json_string_value(json_array_get(names, i));
        if (!k)
            return false;
        /* each replay kernel must be one of the trace's ' | '-joined names */
        const char *p = trace;
        bool found = false;
        size_t kl = strlen(k);
        while (p && *p) {
            const char *e = strstr(p, " | ");
            size_t l = e ? (size_t)(e - p) : strlen(p);
            if (l == kl && strncmp(p, k, kl) == 0)
                found = true;
            p = e ? e + 3 : NULL;
        }
        if (!found)
            return false;
        seen++;
    }
    size_t nt = *trace ? 1 : 0;
    for (const char *p = trace; (p = strstr(p, " | ")) != NULL; p += 3)
        nt++;
    return seen == nt;
}

static bool within10(double v, double ref)
{
    return ref > 0 && v >= 0.9 * ref && v <= 1.1 * ref;
}

/* Why a replay is off the trace by more than 10 %, as far as the row's own
 * figures tell: other kernels ran; another state's figure matches the trace
 * (the closest one says what the workload's state was); the CUDA-graph
 * figure does; else faster or slower in every state, with the usual
 * suspects. */
static void off_hint(const struct mp_replay_op *op, char *h, size_t n)
{
    h[0] = 0;
    double t = op->trace_median_us;
    if (!op->replayed || within10(op->replay_median_us, t) || strcmp(op->replay_l2, "none") == 0)
        return;
    if (op->kernels_match == 0) {
        snprintf(h, n,
                 "off the trace by more than 10 %%: other kernels ran than in the trace (another "
                 "algorithm pick for this shape, or another library version?); ");
        return;
    }

    const struct {
        const char *name;
        double us;
        const char *why;
    } st[] = {
        {"flushed", op->replay_flushed_us, "in the workload this op's inputs were not in L2"},
        {"warm", op->replay_warm_us,
         "in the workload this op was queued behind other kernels with its inputs and code in "
         "L2"},
        {"idle", op->replay_idle_us,
         "in the workload this op started on a drained GPU (a launch-bound step) with its code "
         "in L2"},
        {"cold", op->replay_cold_us,
         "in the workload its inputs were in L2 but its kernel code was not (its kernels last "
         "ran a layer earlier)"},
        {"after", op->replay_after_us,
         "in the workload what matters is what ran just before it (trace_prev_op), which the "
         "after state runs before each call"},
    };

    int best = -1;
    for (int i = 0; i < (int)(sizeof(st) / sizeof(st[0])); i++)
        if (strcmp(st[i].name, op->replay_l2) != 0 && within10(st[i].us, t) &&
            (best < 0 || fabs(st[i].us / t - 1) < fabs(st[best].us / t - 1)))
            best = i;
    double cl = op->replay_l2_clean_us, dy = op->replay_l2_dirty_us;
    if (best >= 0)
        snprintf(h, n,
                 "off the trace by more than 10 %%, but the %s replay is within 10 %% (%.2fx): "
                 "%s; ",
                 st[best].name, st[best].us / t, st[best].why);
    else if (cl > 0 && dy > 0 && (within10(cl, t) || within10(dy, t) || (cl - t) * (dy - t) < 0))
        snprintf(h, n,
                 "off the trace by more than 10 %%; with L2 all clean %.2fx, all dirty %.2fx "
                 "(the %s state leaves %s dirty): in the workload L2 held %s dirty lines "
                 "when the op started; ",
                 cl / t, dy / t, op->replay_l2,
                 op->dirty ? "as many bytes as the trace's ops before it wrote (estimated)"
                           : "as many bytes as the op's inputs",
                 op->replay_median_us > t ? "fewer" : "more");
    else if (within10(op->replay_graph_us, t))
        snprintf(h, n,
                 "off the trace by more than 10 %%, but the CUDA-graph figure is within 10 %% "
                 "(%.2fx): the kernel records and the events disagree (gaps between kernels?); ",
                 op->replay_graph_us / t);
    else
        snprintf(h, n, "%s than the trace by more than 10 %% in every state: %s; ",
                 op->ratio < 1 ? "faster" : "slower",
                 op->ratio < 1
                     ? "higher clocks than in the workload, or easier values "
                       "(routing, indices), or work the trace's kernels shared the GPU with?"
                     : "lower clocks than in the workload, or harder values?");
}

static double median_us(json_t *arr, double scale)
{
    size_t n = json_array_size(arr);
    if (!n)
        return 0;
    double *v = calloc(n, sizeof(double));
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(arr, i)) * scale;
    struct mp_stats_summary st;
    double m = mp_stats_summarize(v, n, 0.95, 200, 1, &st) == 0 ? st.median : 0;
    free(v);
    return m;
}

static int fill_kernels(struct mp_replay_op *op, json_t *names)
{
    if (!json_is_array(names))
        return 0;
    struct mp_buf b;
    mp_buf_init(&b, 1 << 20);
    int rc = 0;
    for (size_t i = 0; !rc && i < json_array_size(names); i++) {
        const char *k = json_string_value(json_array_get(names, i));
        rc = mp_buf_puts(&b, i ? " | " : "");
        rc = rc ? rc : mp_buf_puts(&b, k ? k : "");
    }
    free(op->replay_kernels);
    op->replay_kernels = rc ? NULL : mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    if (op->one_kernel) { /* the row's one kernel among those its op launched */
        op->kernels_match = 0;
        for (size_t i = 0; i < json_array_size(names); i++) {
            const char *k = json_string_value(json_array_get(names, i));
            if (k && strcmp(k, op->trace_kernels) == 0)
                op->kernels_match = 1;
        }
    } else
        op->kernels_match = names_match(op->trace_kernels, names);
    return rc ? rc : op->replay_kernels ? 0 : MP_ENOMEM;
}

/* "; clocks capped after the replay (...)" when nvidia-smi's throttle
 * reasons after the op's calls name a power or thermal cap (the replay then
 * ran slower than a workload that called the op once), else "". */
static void capped_note(const char *clocks, char *out, size_t n)
{
    static const struct {
        unsigned long bit;
        const char *what;
    } caps[] = {{0x4, "software power cap"},
                {0x8, "hardware slowdown"},
                {0x20, "software thermal cap"},
                {0x40, "hardware thermal slowdown"},
                {0x80, "hardware power brake"}};

    out[0] = 0;
    const char *t = clocks ? strstr(clocks, "throttle 0x") : NULL;
    if (!t)
        return;
    unsigned long v = strtoul(t + strlen("throttle "), NULL, 16);
    size_t k = 0;
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]) && k < n; i++)
        if (v & caps[i].bit) {
            const char *sep = k ? ", " : "; clocks capped after the replay (";
            int w = snprintf(out + k, n - k, "%s%s", sep, caps[i].what);
            k = w < 0 ? n : k + (size_t)w;
        }
    if (k && k < n)
        snprintf(out + k, n - k, ")");
}

static int fill_note(struct mp_replay_op *op, json_t *jo)
{
    const char *why = json_string_value(json_object_get(jo, "stop_reason"));
    const char *pn = json_string_value(json_object_get(jo, "prof_note"));
    const char *cb = json_string_value(json_object_get(jo, "clocks_before"));
    const char *ca = json_string_value(json_object_get(jo, "clocks_after"));
    char hint[512], note[1800], cap[200];
    off_hint(op, hint, sizeof(hint));
    capped_note(ca, cap, sizeof(cap));
    if (strcmp(op->replay_l2, "none") == 0)
        snprintf(note, sizeof(note),
                 "CPU figure (the runner's Sampler; no kernel records): batch %lld, %s",
                 (long long)json_integer_value(json_object_get(jo, "batch")), why ? why : "");
    else
        snprintf(note, sizeof(note),
                 "%skernel records of %lld calls, state %s%s%s%s; graph figure: batch %lld%s, %s",
                 hint, (long long)json_integer_value(json_object_get(jo, "calls_profiled")),
                 op->replay_l2, pn && *pn ? "; " : "", pn ? pn : "", cap,
                 (long long)json_integer_value(json_object_get(jo, "batch")),
                 json_is_true(json_object_get(jo, "cuda_graph")) ? " in a CUDA graph" : "",
                 why ? why : "");
    free(op->replay_note);
    op->replay_note = mp_strdup(note);
    char clk[600];
    snprintf(clk, sizeof(clk), "%s%s%s%s", cb && *cb ? "before: " : "", cb ? cb : "",
             ca && *ca ? "; after: " : "", ca ? ca : "");
    free(op->replay_clocks);
    op->replay_clocks = mp_strdup(clk);
    return op->replay_note && op->replay_clocks ? 0 : MP_ENOMEM;
}

static int fill_op(struct mp_replay_op *op, json_t *jo)
{
    if (!json_is_true(json_object_get(jo, "ok"))) {
        const char *e = json_string_value(json_object_get(jo, "error"));
        free(op->replay_note);
        op->replay_note = mp_strdup(e ? e : "the replay failed");
        if (!op->replay_note)
            return MP_ENOMEM;
        /* the kernels it launched, when it ran (a split row's kernel missing) */
        return fill_kernels(op, json_object_get(jo, "kernels"));
    }
    json_t *s = json_object_get(jo, "samples_ms");
    size_t n = json_array_size(s);
    double *v = calloc(n + 1, sizeof(double));
    if (!v)
        return MP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(s, i)) * 1000.0;
    struct mp_stats_summary st;
    int rc = n ? mp_stats_summarize(v, n, 0.95, 1000, 1, &st) : MP_EINVAL;
    free(v);
    if (rc == MP_ENOMEM)
        return rc;
    const char *l2 = json_string_value(json_object_get(jo, "l2"));
    snprintf(op->replay_l2, sizeof(op->replay_l2), "%s", l2 ? l2 : "");
    if (rc == 0) {
        op->replayed = true;
        op->replay_median_us = st.median;
        op->replay_ci_lo_us = st.ci_lo;
        op->replay_ci_hi_us = st.ci_hi;
        op->replay_samples = (long)n;
        op->ratio = op->trace_median_us > 0 ? st.median / op->trace_median_us : 0;
    }
    op->replay_flushed_us = json_number_value(json_object_get(jo, "l2_flushed_us"));
    op->replay_warm_us = json_number_value(json_object_get(jo, "l2_warm_us"));
    op->replay_idle_us = json_number_value(json_object_get(jo, "idle_us"));
    op->replay_cold_us = json_number_value(json_object_get(jo, "cold_us"));
    op->replay_after_us = json_number_value(json_object_get(jo, "after_us"));
    if (strcmp(op->replay_l2, "flushed") == 0 || strcmp(op->replay_l2, "cold") == 0) {
        bool fl = op->replay_l2[0] == 'f';
        json_t *cr = json_object_get(jo, "cold_read_us"); /* cold all clean, when dirty levels */
        op->replay_l2_clean_us = fl   ? json_number_value(json_object_get(jo, "flushed_read_us"))
                                 : cr ? json_number_value(cr)
                                      : op->replay_cold_us;
        op->replay_l2_dirty_us =
            json_number_value(json_object_get(jo, fl ? "flushed_write_us" : "cold_write_us"));
    }
    /* events around graph batches time a split row's whole op: not its figure */
    op->replay_graph_us =
        op->one_kernel ? 0 : median_us(json_object_get(jo, "graph_samples_ms"), 1000.0);
    op->replay_sm_mhz = json_number_value(json_object_get(jo, "sm_clock_mhz"));
    rc = fill_kernels(op, json_object_get(jo, "kernels"));
    return rc ? rc : fill_note(op, jo);
}

static int read_result(const char *path, struct mp_replay_result *r, struct mp_diag *d)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        mp_diag_set_file(d, path);
        mp_diag_set_pos(d, -1, je.line, je.column);
        return mp_diag_set(d, MP_EPARSE, "replay result: %s", je.text);
    }
    const char *err = json_string_value(json_object_get(root, "device_error"));
    const char *serr = json_string_value(json_object_get(root, "setup_error"));
    const char *dev = json_string_value(json_object_get(root, "device"));
    int rc = 0;
    if (err) {
        snprintf(r->run_note, sizeof(r->run_note),
                 "no GPU here: the files are written, nothing was replayed (%s)", err);
    } else if (serr) {
        snprintf(r->run_note, sizeof(r->run_note),
                 "the files are written, nothing was replayed: %s", serr);
    } else {
        r->ran = dev && strcmp(dev, "cpu") != 0;
        const char *tv = json_string_value(json_object_get(root, "torch"));
        const char *clk = json_string_value(json_object_get(root, "clocks"));
        double l2 = json_number_value(json_object_get(root, "l2_bytes"));
        if (r->ran)
            snprintf(r->run_note, sizeof(r->run_note),
                     "replayed on %s (torch %s, L2 %.0f MiB): per-call kernel time from the "
                     "profiler's kernel records; clocks at start: %s",
                     dev, tv ? tv : "?", l2 / (1 << 20), clk && *clk ? clk : "unknown");
        else
            snprintf(r->run_note, sizeof(r->run_note),
                     "replayed on %s (MAGPIE_REPLAY_ALLOW_CPU: CPU figures, not GPU kernel times)",
                     dev ? dev : "?");
        json_t *ops = json_object_get(root, "ops");
        for (size_t i = 0; !rc && i < json_array_size(ops); i++) {
            json_t *jo = json_array_get(ops, i);
            long long n = json_integer_value(json_object_get(jo, "n"));
            for (size_t k = 0; !rc && k < r->n; k++)
                if (r->ops[k].n == n)
                    rc = fill_op(&r->ops[k], jo);
        }
    }
    json_decref(root);
    return rc;
}

int rp_run(const struct mp_replay_opts *o, struct mp_replay_result *r, struct mp_diag *d)
{
    char rt[4096], out_abs[4096];
    if (o->runtime_dir)
        snprintf(rt, sizeof(rt), "%s", o->runtime_dir);
    else if (mp_kernel_runtime_find(NULL, rt, sizeof(rt), NULL, d))
        return d ? d->code : MP_ENOTFOUND;
    if (!realpath(o->out_dir, out_abs))
        return mp_diag_set(d, MP_EIO, "cannot resolve %s", o->out_dir);
    char job[4200], res[4200], helper[4200];
    snprintf(job, sizeof(job), "%s/replay_job.json", out_abs);
    snprintf(res, sizeof(res), "%s/replay_run.json", out_abs);
    snprintf(helper, sizeof(helper), "%s/magpie_replay.py", rt);
    struct mp_buf b;
    mp_buf_init(&b, 16u << 20);
    int rc = job_json(o, r, out_abs, res, &b);
    rc = rc ? rc : mp_fs_write_atomic(job, b.data, b.len, d);
    mp_buf_fini(&b);
    if (rc)
        return rc;
    const char *py = o->python ? o->python : getenv("MAGPIE_PYTHON");
    const char *argv[] = {py && *py ? py : "python3", helper, job, NULL};
    struct mp_proc_opts po = {.timeout_s = o->run_timeout_s > 0 ? o->run_timeout_s : 1800,
                              .err_mode = o->quiet ? MP_PROC_CAPTURE : MP_PROC_INHERIT};
    struct mp_proc_result pr;
    remove(res);
    rc = mp_proc_run(argv, &po, &pr, d);
    if (rc == MP_ENOTFOUND) {
        mp_proc_result_fini(&pr);
        snprintf(r->run_note, sizeof(r->run_note),
                 "no Python interpreter '%s': the files are written, nothing was replayed",
                 argv[0]);
        return 0;
    }
    bool ok = !rc && mp_proc_result_ok(&pr);
    char how[256];
    mp_proc_describe(&pr, po.timeout_s, how, sizeof(how));
    mp_proc_result_fini(&pr);
    if (rc)
        return rc;
    if (ok)
        return read_result(res, r, d);
    /* crashed or out of time: the ops it finished are in its result (written
     * after each op); the summary is still written, the exit code says it */
    r->run_failed = true;
    FILE *f = fopen(res, "r");
    if (!f) {
        snprintf(
            r->run_note, sizeof(r->run_note),
            "the replay helper (%.100s %.200s) %.120s before timing any op: the files are written",
            argv[0], helper, how);
        return 0;
    }
    fclose(f);
    rc = read_result(res, r, d);
    size_t len = strlen(r->run_note);
    snprintf(r->run_note + len, sizeof(r->run_note) - len,
             "; the helper then %s: later ops not timed", how);
    return rc;
}
