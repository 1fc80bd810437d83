/* Ranking of compare: per candidate the speedup over the baseline (ratio of
 * medians) with a 95 % bootstrap CI, a two-sided Mann-Whitney U test with
 * Holm's correction over the candidates, and a verdict:
 *   FASTER  CI of the time ratio entirely below 1 - threshold and p_holm < alpha
 *   SLOWER  CI entirely above 1 + threshold and p_holm < alpha
 *   SAME    CI inside [1 - threshold, 1 + threshold]
 *   INCONCLUSIVE otherwise (or fewer than 9 samples on a side).
 * With sequential timing (the default; the candidate's timing then carries
 * the runner's or harness's last look, seqtest.c) the verdict is that
 * look's decision and the interval shown is the look's, valid under the
 * optional stopping the looks did; the bootstrap CI and the U test are not
 * (they assume a fixed sample size), and p is reported for information.
 * Only candidates whose correctness was proven are compared. The winner is
 * the fastest FASTER candidate, else the baseline. Magpie's weighted
 * profiler score is computed into perf_scores as Magpie does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_int.h"

#define MIN_SAMPLES_FOR_VERDICT 9

static double metric_value(const struct mp_kernel_result *r, const char *name)
{
    if (r->performance != MP_STAGE_SUCCESS || !r->perf.success)
        return NAN;
    if (!strcmp(name, "duration_ns_total")) {
        if (!r->perf.ndispatch)
            return NAN;
        double t = 0;
        for (int i = 0; i < r->perf.ndispatch; i++)
            t += r->perf.dispatch[i].total_ns;
        return t;
    }
    for (int i = 0; i < r->perf.nmetrics; i++) {
        const struct mp_kernel_metric *m = &r->perf.metrics[i];
        if (!strcmp(m->name, name))
            return isfinite(m->pct_of_peak) ? m->pct_of_peak : m->value;
    }
    return NAN;
}

static bool lower_better(const struct mp_kernel_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->compare.lower_is_better.n; i++)
        if (!strcmp(cfg->compare.lower_is_better.v[i], name))
            return true;
    return false;
}

/* The metric of kernel i when it is correct; NaN (not scored) otherwise. */
static double scored_value(const struct mp_kernel_run *run, int i, const char *name)
{
    if (run->results[i].correctness != MP_STAGE_SUCCESS)
        return NAN;
    return metric_value(&run->results[i], name);
}

/* Magpie's perf_scores: weights by backend, per-metric normalisation over
 * the correct kernels, weighted sum of the metrics that have data. */
static void perf_scores(struct mp_kernel_run *run, const struct mp_kernel_config *cfg)
{
    bool cuda = false;
    for (int i = 0; i < run->n; i++)
        cuda = cuda || run->results[i].type == MP_KERNEL_CUDA;
    const struct mp_weights *w = cuda ? &cfg->compare.weights_ncu : &cfg->compare.weights_rocprof;
    if (!w->n)
        w = cuda ? &cfg->compare.weights_rocprof : &cfg->compare.weights_ncu;
    for (int m = 0; m < w->n; m++) {
        const char *name = w->v[m].metric;
        bool low = lower_better(cfg, name);
        double best = low ? INFINITY : -INFINITY;
        for (int i = 0; i < run->n; i++) {
            double v = scored_value(run, i, name);
            if (isfinite(v))
                best = low ? fmin(best, v) : fmax(best, v);
        }
        if (!isfinite(best))
            continue;
        for (int i = 0; i < run->n; i++) {
            double v = scored_value(run, i, name);
            if (!isfinite(v))
                continue;
            double norm = low ? (v != 0 ? best / v : 0) : (best != 0 ? v / best : 0);
            run->vs[i].perf_score =
                (run->vs[i].has_perf_score ? run->vs[i].perf_score : 0) + w->v[m].weight * norm;
            run->vs[i].has_perf_score = true;
        }
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of x[0..n), NaN when n < 1 */
static double prefix_median(const double *x, int n)
{
    double *s = n > 0 ? mp_calloc((size_t)n, sizeof(double)) : NULL;
    if (!s)
        return NAN;
    memcpy(s, x, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_dbl);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

/* The verdict of a candidate timed sequentially: its last look's decision,
 * interval, and the speedup of the samples that look saw (the baseline may
 * have gone on for other candidates). */
static void seq_verdict(struct mp_kernel_vs *v, const struct mp_kernel_seq *q,
                        const struct mp_kernel_timing *bt, const struct mp_kernel_timing *t)
{
    if (q->n >= 1 && q->n <= t->nsamples && q->n_baseline >= 1 && q->n_baseline <= bt->nsamples) {
        double mc = prefix_median(t->samples_ms, q->n);
        double mb = prefix_median(bt->samples_ms, q->n_baseline);
        if (mc > 0 && isfinite(mb))
            v->speedup = mb / mc;
    }
    if (isfinite(q->ratio_lo) && isfinite(q->ratio_hi) && q->ratio_lo > 0) {
        v->speedup_lo = 1 / q->ratio_hi;
        v->speedup_hi = 1 / q->ratio_lo;
    } else {
        v->speedup_lo = v->speedup_hi = NAN;
    }
    if (!strcmp(q->decision, "FASTER"))
        v->verdict = MP_VERDICT_FASTER;
    else if (!strcmp(q->decision, "SLOWER"))
        v->verdict = MP_VERDICT_SLOWER;
    else if (!strcmp(q->decision, "SAME"))
        v->verdict = MP_VERDICT_SAME;
}

void kern_compare_rank(struct mp_kernel_run *run, const struct mp_kernel_config *cfg)
{
    run->vs = mp_calloc((size_t)run->n, sizeof(*run->vs));
    if (!run->vs)
        return;
    int b = run->baseline;
    const struct mp_kernel_result *base = &run->results[b];
    bool base_ok = base->correctness == MP_STAGE_SUCCESS ||
                   (base->correctness == MP_STAGE_SKIPPED && base->has_correct &&
                    base->correct.success); /* the baseline is the reference itself */
    const struct mp_kernel_timing *bt = &base->timing;
    double *praw = mp_calloc((size_t)run->n, sizeof(double));
    int *pidx = mp_calloc((size_t)run->n, sizeof(int));
    int np = 0;
    run->all_correct = true;
    for (int i = 0; i < run->n; i++) {
        struct mp_kernel_vs *v = &run->vs[i];
        const struct mp_kernel_result *r = &run->results[i];
        v->speedup = v->speedup_lo = v->speedup_hi = v->p_value = v->p_holm = NAN;
        if (r->correctness != MP_STAGE_SUCCESS)
            run->all_correct = false;
        if (i == b) {
            v->verdict = base_ok ? MP_VERDICT_BASELINE : MP_VERDICT_INCORRECT;
            continue;
        }
        if (r->correctness != MP_STAGE_SUCCESS) {
            v->verdict = MP_VERDICT_INCORRECT;
            continue;
        }
        v->verdict = MP_VERDICT_INCONCLUSIVE;
        const struct mp_kernel_timing *t = &r->timing;
        if (!base_ok || bt->nsamples < 2 || t->nsamples < 2)
            continue;
        double ratio = NAN, lo = NAN, hi = NAN, u = 0, p = 1;
        if (mp_stats_ratio_ci(bt->samples_ms, (size_t)bt->nsamples, t->samples_ms,
                              (size_t)t->nsamples, 0.95, 2000, 0xc0ffee + (uint64_t)i, &ratio, &lo,
                              &hi) != 0)
            continue;
        mp_stats_mann_whitney(bt->samples_ms, (size_t)bt->nsamples, t->samples_ms,
                              (size_t)t->nsamples, &u, &p);
        v->speedup = ratio > 0 ? 1 / ratio : NAN;
        v->speedup_lo = hi > 0 ? 1 / hi : NAN;
        v->speedup_hi = lo > 0 ? 1 / lo : NAN;
        v->p_value = p;
        if (praw && pidx) {
            praw[np] = p;
            pidx[np++] = i;
        }
    }
    if (np && praw && pidx) {
        double *adj = mp_calloc((size_t)np, sizeof(double));
        if (adj) {
            mp_stats_holm(praw, (size_t)np, adj);
            for (int j = 0; j < np; j++)
                run->vs[pidx[j]].p_holm = adj[j];
        }
        free(adj);
    }
    free(praw);
    free(pidx);
    double thr = cfg->compare.threshold, alpha = cfg->compare.alpha;
    for (int i = 0; i < run->n; i++) {
        struct mp_kernel_vs *v = &run->vs[i];
        if (v->verdict != MP_VERDICT_INCONCLUSIVE || !isfinite(v->speedup))
            continue;
        const struct mp_kernel_timing *t = &run->results[i].timing;
        if (t->nsamples < MIN_SAMPLES_FOR_VERDICT || bt->nsamples < MIN_SAMPLES_FOR_VERDICT)
            continue;
        const struct mp_kernel_seq *q = &t->seq;
        if (q->present) {
            seq_verdict(v, q, bt, t);
            continue;
        }
        /* in time-ratio terms: R = 1 / speedup */
        double r_lo = 1 / v->speedup_hi, r_hi = 1 / v->speedup_lo;
        if (r_hi < 1 - thr && v->p_holm < alpha)
            v->verdict = MP_VERDICT_FASTER;
        else if (r_lo > 1 + thr && v->p_holm < alpha)
            v->verdict = MP_VERDICT_SLOWER;
        else if (r_lo >= 1 - thr && r_hi <= 1 + thr)
            v->verdict = MP_VERDICT_SAME;
    }
    perf_scores(run, cfg);
    /* winner */
    run->winner = -1;
    if (!strcmp(cfg->compare.winner_strategy, "perf_score")) {
        double best = -INFINITY;
        for (int i = 0; i < run->n; i++)
            if (run->vs[i].has_perf_score && run->vs[i].perf_score > best) {
                best = run->vs[i].perf_score;
                run->winner = i;
            }
        for (int i = 0; i < run->n && run->winner < 0; i++)
            if (run->results[i].correctness == MP_STAGE_SUCCESS)
                run->winner = i;
    } else {
        double best = INFINITY;
        for (int i = 0; i < run->n; i++) {
            if (run->vs[i].verdict != MP_VERDICT_FASTER)
                continue;
            double med = run->results[i].timing.st.median;
            if (med < best) {
                best = med;
                run->winner = i;
            }
        }
        if (run->winner < 0 && base_ok)
            run->winner = b;
    }
    struct mp_buf s;
    mp_buf_init(&s, 1 << 20);
    int ncorrect = 0;
    for (int i = 0; i < run->n; i++)
        ncorrect += run->results[i].correctness == MP_STAGE_SUCCESS;
    mp_buf_printf(&s, "Compared %d kernel implementations\nCorrectness: %d/%d passed\n", run->n,
                  ncorrect, run->n);
    for (int i = 0; i < run->n; i++) {
        const struct mp_kernel_vs *v = &run->vs[i];
        mp_buf_printf(&s, "%s Kernel %d: %s  %s",
                      run->results[i].correctness == MP_STAGE_SUCCESS ? "\xe2\x9c\x93"
                                                                      : "\xe2\x9c\x97",
                      i, run->results[i].id, mp_verdict_name(v->verdict));
        if (isfinite(v->speedup) && i != b)
            mp_buf_printf(&s, " %.4fx [%.4f, %.4f]", v->speedup, v->speedup_lo, v->speedup_hi);
        mp_buf_puts(&s, "\n");
    }
    if (run->winner >= 0)
        mp_buf_printf(&s, "Winner: Kernel %d (%s)", run->winner, run->results[run->winner].id);
    else
        mp_buf_puts(&s, "Winner: none");
    run->summary = mp_strdup(mp_buf_cstr(&s));
    mp_buf_fini(&s);
}
