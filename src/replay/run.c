/* --run: times the rebuilt references with runtime/magpie_replay.py (the
 * analyze runner's Timer and Sampler: CUDA events around CUDA-graph batches
 * for short calls, so the kernels are timed and not the launch path) and
 * fills the replay columns: median per call with its bootstrap CI, the
 * profiler's kernel time per call, the ratio to the trace's median and
 * whether the same kernel names ran. Without a CUDA device (or torch) the
 * files stay written and run_note says why nothing was timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/kernel.h>
#include <magpie/proc.h>
#include <magpie/stats.h>

#include "replay_int.h"

static int job_json(const struct mp_replay_opts *o, const struct mp_replay_result *r,
                    const char *out_abs, const char *result, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "{\"output\": ");
    rc = rc ? rc : mp_json_str(b, result, strlen(result));
    rc = rc ? rc
            : mp_buf_printf(b,
                            ", \"allow_cpu\": %s, \"timing\": {\"max_time_s\": 5, "
                            "\"min_samples\": 10, \"max_noise\": 0.005, \"l2_flush\": %s}, "
                            "\"ops\": [",
                            getenv("MAGPIE_REPLAY_ALLOW_CPU") ? "true" : "false",
                            o->warm_l2 ? "false" : "true");
    bool first = true;
    for (size_t i = 0; !rc && i < r->n; i++) {
        if (!r->ops[i].rebuilt)
            continue;
        char ref[4200];
        snprintf(ref, sizeof(ref), "%s/ref_%d.py", out_abs, r->ops[i].n);
        rc = mp_buf_printf(b, "%s{\"n\": %d, \"ref\": ", first ? "" : ", ", r->ops[i].n);
        rc = rc ? rc : mp_json_str(b, ref, strlen(ref));
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

/* A first guess at why a replay is off the trace by more than 10 % (the
 * figures it rests on are in the same row). */
static const char *off_hint(const struct mp_replay_op *op)
{
    if (!op->replayed || (op->ratio >= 0.9 && op->ratio <= 1.1))
        return "";
    if (op->kernels_match == 0)
        return "off the trace by more than 10 %: other kernels ran (another algorithm pick for "
               "this shape?); ";
    double prof = op->trace_median_us > 0 ? op->replay_prof_us / op->trace_median_us : 0;
    if (prof >= 0.9 && prof <= 1.1)
        return "off the trace by more than 10 %, but the profiler's kernel time is within 10 %: "
               "the difference is the timing (L2 flushed between samples, graph batch); ";
    if (op->ratio < 0.9)
        return "faster than the trace by more than 10 %: a warmer L2 or higher clocks than in "
               "the workload, or easier values (routing, indices)?; ";
    return "slower than the trace by more than 10 %: a colder L2 (flushed between samples), "
           "lower clocks, or harder values?; ";
}

static int fill_op(struct mp_replay_op *op, json_t *jo)
{
    if (!json_is_true(json_object_get(jo, "ok"))) {
        const char *e = json_string_value(json_object_get(jo, "error"));
        free(op->replay_note);
        op->replay_note = mp_strdup(e ? e : "the replay failed");
        return op->replay_note ? 0 : MP_ENOMEM;
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
    if (rc == 0) {
        op->replayed = true;
        op->replay_median_us = st.median;
        op->replay_ci_lo_us = st.ci_lo;
        op->replay_ci_hi_us = st.ci_hi;
        op->replay_samples = (long)n;
        op->ratio = op->trace_median_us > 0 ? st.median / op->trace_median_us : 0;
    }
    op->replay_prof_us = json_number_value(json_object_get(jo, "profiler_us"));
    json_t *names = json_object_get(jo, "kernels");
    if (json_is_array(names)) {
        struct mp_buf b;
        mp_buf_init(&b, 1 << 20);
        for (size_t i = 0; !rc && i < json_array_size(names); i++) {
            const char *k = json_string_value(json_array_get(names, i));
            rc = mp_buf_puts(&b, i ? " | " : "");
            rc = rc ? rc : mp_buf_puts(&b, k ? k : "");
        }
        free(op->replay_kernels);
        op->replay_kernels = mp_strdup(mp_buf_cstr(&b));
        mp_buf_fini(&b);
        op->kernels_match = names_match(op->trace_kernels, names);
    }
    const char *why = json_string_value(json_object_get(jo, "stop_reason"));
    char note[768];
    snprintf(note, sizeof(note), "%sbatch %lld%s; %s", off_hint(op),
             (long long)json_integer_value(json_object_get(jo, "batch")),
             json_is_true(json_object_get(jo, "cuda_graph")) ? " in a CUDA graph" : "",
             why ? why : "");
    free(op->replay_note);
    op->replay_note = mp_strdup(note);
    return op->replay_note ? 0 : MP_ENOMEM;
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
    const char *dev = json_string_value(json_object_get(root, "device"));
    int rc = 0;
    if (err) {
        snprintf(r->run_note, sizeof(r->run_note),
                 "no GPU here: the files are written, nothing was replayed (%s)", err);
    } else {
        r->ran = dev && strcmp(dev, "cpu") != 0;
        snprintf(r->run_note, sizeof(r->run_note), "replayed on %s%s", dev ? dev : "?",
                 r->ran ? "" : " (MAGPIE_REPLAY_ALLOW_CPU: CPU figures, not GPU kernel times)");
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
    if (!ok)
        return mp_diag_set(d, MP_ECHILD, "%s %s %s", argv[0], helper, how);
    return read_result(res, r, d);
}
