/* Run-to-run comparison of serving benchmarks: the statistics. For every
 * metric (throughput, and mean / median / p99 of TTFT, TPOT, ITL, E2EL) the
 * relative change of a candidate against the baseline, a percentile
 * bootstrap interval of it, a p-value and Holm's correction over the
 * metrics, giving FASTER / SLOWER / WITHIN NOISE.
 *
 * Resampling unit: a request (its gaps stay together, as gaps within one
 * stream are not independent; throughput through Little's law over the
 * requests, see bench_compare.h), and, when a side has repeats, a run first
 * (two-stage bootstrap), so the spread between runs enters the interval. The two sides are
 * resampled independently; every side draws from its own seeded generator.
 *
 * The null hypothesis of a metric is "the change is within +-min_effect";
 * p = 2 min(P*(change <= +e), P*(change >= -e)) over the bootstrap
 * distribution (with the +1 correction), so a change that is real but
 * smaller than the effect floor is reported as noise. docs/metrics.md has
 * the long form. Loading the files is in compare_load.c, the writers in
 * compare_out.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/bench_compare.h>
#include <magpie/stats.h>

static const char *const NAMES[MP_BCMP_N_METRICS] = {
    "output_throughput", "request_throughput", "ttft_mean_ms",   "ttft_median_ms", "ttft_p99_ms",
    "tpot_mean_ms",      "tpot_median_ms",     "tpot_p99_ms",    "itl_mean_ms",    "itl_median_ms",
    "itl_p99_ms",        "e2el_mean_ms",       "e2el_median_ms", "e2el_p99_ms",
};

static const char *const LABELS[MP_BCMP_N_METRICS] = {
    "output tok/s",   "requests/s",     "TTFT mean (ms)", "TTFT median (ms)", "TTFT p99 (ms)",
    "TPOT mean (ms)", "TPOT median",    "TPOT p99 (ms)",  "ITL mean (ms)",    "ITL median (ms)",
    "ITL p99 (ms)",   "E2EL mean (ms)", "E2EL median",    "E2EL p99 (ms)",
};

const char *mp_bcmp_metric_name(int m)
{
    return m >= 0 && m < MP_BCMP_N_METRICS ? NAMES[m] : "";
}

const char *mp_bcmp_metric_label(int m)
{
    return m >= 0 && m < MP_BCMP_N_METRICS ? LABELS[m] : "";
}

bool mp_bcmp_metric_higher_better(int m)
{
    return m == MP_BCMP_OUT_TPS || m == MP_BCMP_REQ_PS;
}

const char *mp_bcmp_verdict_name(enum mp_bcmp_verdict v)
{
    switch (v) {
    case MP_BCMP_FASTER:
        return "FASTER";
    case MP_BCMP_SLOWER:
        return "SLOWER";
    case MP_BCMP_NA:
        return "N/A";
    default:
        return "WITHIN NOISE";
    }
}

void mp_bcmp_opts_default(struct mp_bcmp_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->nboot = 2000;
    o->alpha = 0.05;
    o->ci_level = 0.95;
    o->min_effect_pct = 1.0;
}

/* ---- building runs ---- */

void mp_bcmp_run_fini(struct mp_bcmp_run *r)
{
    if (!r)
        return;
    free(r->source);
    free(r->req);
    free(r->itl);
    memset(r, 0, sizeof(*r));
}

int mp_bcmp_run_build(const double *ttft_ms, const double *e2el_ms, const int32_t *out_tokens,
                      const int32_t *prompt_len, const double *itl_ms, const uint32_t *itl_off,
                      const uint32_t *n_itl, size_t n, size_t failed, double duration_s,
                      struct mp_bcmp_run *out)
{
    memset(out, 0, sizeof(*out));
    size_t total_itl = 0;
    for (size_t i = 0; i < n; i++)
        total_itl += n_itl[i];
    out->req = mp_malloc((n + 1) * sizeof(*out->req));
    out->itl = mp_malloc((total_itl + 1) * sizeof(double));
    if (!out->req || !out->itl) {
        mp_bcmp_run_fini(out);
        return MP_ENOMEM;
    }
    out->n_req = n;
    out->failed = failed;
    out->duration_s = duration_s > 0 ? duration_s : 1e-9;
    size_t k = 0;
    double sum_e2el_s = 0;
    for (size_t i = 0; i < n; i++) {
        struct mp_bcmp_request *q = &out->req[i];
        q->ttft_ms = ttft_ms[i];
        q->e2el_ms = e2el_ms[i];
        q->out_tokens = out_tokens[i];
        q->prompt_len = prompt_len ? prompt_len[i] : 0;
        q->tpot_ms = q->out_tokens > 1 ? (q->e2el_ms - q->ttft_ms) / (q->out_tokens - 1) : NAN;
        q->itl_off = (uint32_t)k;
        q->n_itl = n_itl[i];
        memcpy(out->itl + k, itl_ms + itl_off[i], n_itl[i] * sizeof(double));
        out->total_out += q->out_tokens;
        out->total_in += q->prompt_len;
        sum_e2el_s += q->e2el_ms / 1e3;
        k += n_itl[i];
    }
    out->n_itl = k;
    out->conc_mean = sum_e2el_s / out->duration_s;
    return 0;
}

/* ---- statistics of a pooled sample ---- */

/* k-th smallest of x[0..n) (reorders x): Hoare partitioning, which keeps
 * runs of equal values (integer-ms timings) linear. */
static double kth(double *x, size_t n, size_t k)
{
    long lo = 0, hi = (long)n - 1, kk = (long)k;
    while (lo < hi) {
        double pivot = x[lo + (hi - lo) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pivot)
                i++;
            while (x[j] > pivot)
                j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j];
                x[j] = t;
                i++;
                j--;
            }
        }
        if (kk <= j)
            hi = j;
        else if (kk >= i)
            lo = i;
        else
            return x[kk];
    }
    return x[kk];
}

/* numpy percentile (linear) of x[0..n), p in [0, 100]; reorders x. */
static double pct_inplace(double *x, size_t n, double p)
{
    if (n == 0)
        return NAN;
    double rank = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(rank);
    double a = kth(x, n, lo);
    if (lo + 1 >= n)
        return a;
    double b = x[lo + 1];
    for (size_t i = lo + 2; i < n; i++) /* after kth, x[lo+1..] >= a: the next is their min */
        if (x[i] < b)
            b = x[i];
    double t = rank - (double)lo;
    return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

static void mean_med_p99(double *x, size_t n, double *out3)
{
    if (n == 0) {
        out3[0] = out3[1] = out3[2] = NAN;
        return;
    }
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    out3[0] = s / (double)n;
    out3[1] = pct_inplace(x, n, 50);
    out3[2] = pct_inplace(x, n, 99);
}

struct dvec {
    double *v;
    size_t n, cap;
};

static int dv_reserve(struct dvec *a, size_t extra)
{
    if (a->n + extra <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap : 1024;
    while (cap < a->n + extra)
        cap *= 2;
    double *v = realloc(a->v, cap * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    a->v = v;
    a->cap = cap;
    return 0;
}

struct pool {
    struct dvec ttft, tpot, itl, e2el;
    double tok_sum, req_sum; /* sums of the runs' throughputs */
    size_t n_runs;
};

static void pool_reset(struct pool *p)
{
    p->ttft.n = p->tpot.n = p->itl.n = p->e2el.n = 0;
    p->tok_sum = p->req_sum = 0;
    p->n_runs = 0;
}

static void pool_fini(struct pool *p)
{
    free(p->ttft.v);
    free(p->tpot.v);
    free(p->itl.v);
    free(p->e2el.v);
}

/* Adds run r to the pool: every request once (rng NULL) or a resample of as
 * many; its throughputs through Little's law over the requests taken. */
static int pool_add(struct pool *p, const struct mp_bcmp_run *r, struct mp_rng *rng)
{
    size_t n = r->n_req;
    if (dv_reserve(&p->ttft, n) || dv_reserve(&p->tpot, n) || dv_reserve(&p->e2el, n))
        return MP_ENOMEM;
    double sum_out = 0, sum_e2el_s = 0;
    for (size_t i = 0; i < n; i++) {
        const struct mp_bcmp_request *q = &r->req[rng ? mp_rng_below(rng, n) : i];
        sum_out += q->out_tokens;
        sum_e2el_s += q->e2el_ms / 1e3;
        p->ttft.v[p->ttft.n++] = q->ttft_ms;
        p->e2el.v[p->e2el.n++] = q->e2el_ms;
        if (!isnan(q->tpot_ms))
            p->tpot.v[p->tpot.n++] = q->tpot_ms;
        if (!q->n_itl)
            continue;
        if (dv_reserve(&p->itl, q->n_itl))
            return MP_ENOMEM;
        memcpy(p->itl.v + p->itl.n, r->itl + q->itl_off, q->n_itl * sizeof(double));
        p->itl.n += q->n_itl;
    }
    if (sum_e2el_s > 0) {
        p->tok_sum += r->conc_mean * sum_out / sum_e2el_s;
        p->req_sum += r->conc_mean * (double)n / sum_e2el_s;
    }
    p->n_runs++;
    return 0;
}

static void pool_metrics(struct pool *p, double *m)
{
    m[MP_BCMP_OUT_TPS] = p->n_runs ? p->tok_sum / (double)p->n_runs : NAN;
    m[MP_BCMP_REQ_PS] = p->n_runs ? p->req_sum / (double)p->n_runs : NAN;
    mean_med_p99(p->ttft.v, p->ttft.n, m + MP_BCMP_TTFT_MEAN);
    mean_med_p99(p->tpot.v, p->tpot.n, m + MP_BCMP_TPOT_MEAN);
    mean_med_p99(p->itl.v, p->itl.n, m + MP_BCMP_ITL_MEAN);
    mean_med_p99(p->e2el.v, p->e2el.n, m + MP_BCMP_E2EL_MEAN);
}

int mp_bcmp_run_metrics(const struct mp_bcmp_run *r, double out[MP_BCMP_N_METRICS])
{
    struct pool p;
    memset(&p, 0, sizeof(p));
    int rc = pool_add(&p, r, NULL);
    if (!rc)
        pool_metrics(&p, out);
    pool_fini(&p);
    return rc;
}

/* Point estimates of a side (all runs pooled) and nboot bootstrap
 * replicates of them: boot[b * N + m]. */
static int side_boot(const struct mp_bcmp_side *s, int nboot, uint64_t seed, double *point,
                     double *boot)
{
    struct pool p;
    memset(&p, 0, sizeof(p));
    int rc = 0;
    for (size_t i = 0; i < s->n_runs && !rc; i++)
        rc = pool_add(&p, &s->runs[i], NULL);
    if (!rc)
        pool_metrics(&p, point);
    struct mp_rng rng;
    mp_rng_seed(&rng, seed);
    for (int b = 0; b < nboot && !rc; b++) {
        pool_reset(&p);
        for (size_t i = 0; i < s->n_runs && !rc; i++) {
            size_t k = s->n_runs > 1 ? mp_rng_below(&rng, s->n_runs) : i;
            rc = pool_add(&p, &s->runs[k], &rng);
        }
        if (!rc)
            pool_metrics(&p, boot + (size_t)b * MP_BCMP_N_METRICS);
    }
    pool_fini(&p);
    return rc;
}

static uint64_t side_seed(uint64_t seed, size_t index)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (index + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void spread(const struct mp_bcmp_side *s, int m, const double *per_run, double out[2])
{
    out[0] = INFINITY;
    out[1] = -INFINITY;
    for (size_t i = 0; i < s->n_runs; i++) {
        double v = per_run[i * MP_BCMP_N_METRICS + (size_t)m];
        if (isnan(v))
            continue;
        out[0] = fmin(out[0], v);
        out[1] = fmax(out[1], v);
    }
    if (out[0] > out[1])
        out[0] = out[1] = NAN;
}

static int per_run_metrics(const struct mp_bcmp_side *s, double **out)
{
    double *v = mp_malloc((s->n_runs + 1) * MP_BCMP_N_METRICS * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n_runs; i++) {
        int rc = mp_bcmp_run_metrics(&s->runs[i], v + i * MP_BCMP_N_METRICS);
        if (rc) {
            free(v);
            return rc;
        }
    }
    *out = v;
    return 0;
}

static int compare_pair(const struct mp_bcmp_side *base, const double *bpoint, const double *bboot,
                        const double *bruns, const struct mp_bcmp_side *cand, size_t index,
                        const struct mp_bcmp_opts *o, struct mp_bcmp_pair *pair)
{
    int nb = o->nboot;
    double *cboot = mp_malloc((size_t)nb * MP_BCMP_N_METRICS * sizeof(double));
    double *delta = mp_malloc((size_t)nb * sizeof(double));
    double *cruns = NULL, cpoint[MP_BCMP_N_METRICS];
    int rc = cboot && delta ? 0 : MP_ENOMEM;
    if (!rc)
        rc = side_boot(cand, nb, side_seed(o->seed, index + 1), cpoint, cboot);
    if (!rc)
        rc = per_run_metrics(cand, &cruns);
    double p[MP_BCMP_N_METRICS], adj[MP_BCMP_N_METRICS];
    double e = o->min_effect_pct / 100.0, tail = (1 - o->ci_level) / 2;
    for (int m = 0; m < MP_BCMP_N_METRICS && !rc; m++) {
        struct mp_bcmp_metric *x = &pair->m[m];
        x->base = bpoint[m];
        x->cand = cpoint[m];
        spread(base, m, bruns, x->base_spread);
        spread(cand, m, cruns, x->cand_spread);
        x->change_pct = x->base != 0 ? (x->cand / x->base - 1) * 100 : NAN;
        x->ci_lo = x->ci_hi = x->p = NAN;
        p[m] = 1;
        if (isnan(x->change_pct) || isnan(x->cand)) {
            x->verdict = MP_BCMP_NA;
            continue;
        }
        size_t k = 0, up = 0, down = 0;
        for (int b = 0; b < nb; b++) {
            double a = bboot[(size_t)b * MP_BCMP_N_METRICS + (size_t)m],
                   c = cboot[(size_t)b * MP_BCMP_N_METRICS + (size_t)m];
            if (!(a != 0) || isnan(c))
                continue;
            double dlt = c / a - 1;
            delta[k++] = dlt;
            up += dlt <= e;    /* evidence against "increased by more than e" */
            down += dlt >= -e; /* ... against "decreased by more than e" */
        }
        if (k < 2) {
            x->verdict = MP_BCMP_NA;
            continue;
        }
        qsort(delta, k, sizeof(double), mp_stats_cmp_double);
        x->ci_lo = mp_stats_quantile_sorted(delta, k, tail) * 100;
        x->ci_hi = mp_stats_quantile_sorted(delta, k, 1 - tail) * 100;
        double pu = (double)(up + 1) / (double)(k + 1), pd = (double)(down + 1) / (double)(k + 1);
        x->p = fmin(1, 2 * fmin(pu, pd));
        p[m] = x->p;
    }
    if (!rc) {
        mp_stats_holm(p, MP_BCMP_N_METRICS, adj);
        for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
            struct mp_bcmp_metric *x = &pair->m[m];
            if (x->verdict == MP_BCMP_NA) {
                x->p_holm = NAN;
                continue;
            }
            x->p_holm = adj[m];
            bool increased = x->change_pct > 0;
            if (adj[m] >= o->alpha || fabs(x->change_pct) <= o->min_effect_pct)
                x->verdict = MP_BCMP_WITHIN_NOISE;
            else if (increased == mp_bcmp_metric_higher_better(m))
                x->verdict = MP_BCMP_FASTER;
            else
                x->verdict = MP_BCMP_SLOWER;
            pair->n_faster += x->verdict == MP_BCMP_FASTER;
            pair->n_slower += x->verdict == MP_BCMP_SLOWER;
        }
    }
    free(cboot);
    free(delta);
    free(cruns);
    return rc;
}

/* ---- workload check ---- */

static const struct mp_bcmp_field *find_field(const struct mp_bcmp_side *s, const char *name)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (!strcmp(s->fields[i].name, name))
            return &s->fields[i];
    return NULL;
}

static bool values_differ(const struct mp_bcmp_field *a, const struct mp_bcmp_field *b)
{
    if (a->approx || b->approx) {
        double x = strtod(a->value, NULL), y = strtod(b->value, NULL);
        return fabs(x - y) > 0.05 * fmax(fabs(x), fabs(y));
    }
    return strcmp(a->value, b->value) != 0;
}

int mp_bcmp_diff_sides(const struct mp_bcmp_side *base, const struct mp_bcmp_side *cand,
                       struct mp_bcmp_diff **out, size_t *n, const struct mp_bcmp_diff **first)
{
    *out = NULL;
    *n = 0;
    *first = NULL;
    size_t cap = base->n_fields + cand->n_fields + 1, k = 0;
    struct mp_bcmp_diff *d = mp_malloc(cap * sizeof(*d));
    if (!d)
        return MP_ENOMEM;
    for (size_t i = 0; i < base->n_fields; i++) {
        const struct mp_bcmp_field *a = &base->fields[i], *b = find_field(cand, a->name);
        if (b && !values_differ(a, b))
            continue;
        /* a field one side does not record is listed, never refused */
        d[k++] = (struct mp_bcmp_diff){a->name, a->value, b ? b->value : NULL,
                                       b && (a->workload || b->workload)};
    }
    for (size_t i = 0; i < cand->n_fields; i++)
        if (!find_field(base, cand->fields[i].name))
            d[k++] =
                (struct mp_bcmp_diff){cand->fields[i].name, NULL, cand->fields[i].value, false};
    /* workload differences first, in recording order */
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (d[i].workload) {
            struct mp_bcmp_diff t = d[i];
            memmove(d + w + 1, d + w, (i - w) * sizeof(*d));
            d[w++] = t;
        }
    *out = d;
    *n = k;
    *first = w ? &d[0] : NULL;
    return 0;
}

int mp_bcmp_compare(const struct mp_bcmp_side *base, const struct mp_bcmp_side *const *cands,
                    size_t n_cands, const struct mp_bcmp_opts *opts, struct mp_bcmp_result **out,
                    struct mp_diag *d)
{
    *out = NULL;
    if (opts->nboot < 100 || opts->nboot > 1000000)
        return mp_diag_set(d, MP_EINVAL, "bootstrap resamples must be 100..1000000, not %d",
                           opts->nboot);
    if (!(opts->alpha > 0 && opts->alpha < 1) || !(opts->ci_level > 0 && opts->ci_level < 1) ||
        !(opts->min_effect_pct >= 0))
        return mp_diag_set(d, MP_EINVAL,
                           "alpha and the CI level must be in (0, 1), the minimum "
                           "effect >= 0");
    if (!n_cands)
        return mp_diag_set(d, MP_EINVAL, "nothing to compare: give a baseline and a candidate");
    struct mp_bcmp_result *r = calloc(1, sizeof(*r));
    if (!r)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    r->base = base;
    r->opts = *opts;
    r->pairs = calloc(n_cands, sizeof(*r->pairs));
    if (!r->pairs) {
        free(r);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    r->n_pairs = n_cands;
    int rc = 0;
    for (size_t i = 0; i < n_cands && !rc; i++) {
        struct mp_bcmp_pair *pr = &r->pairs[i];
        pr->cand = cands[i];
        const struct mp_bcmp_diff *first = NULL;
        rc = mp_bcmp_diff_sides(base, cands[i], &pr->diffs, &pr->n_diffs, &first);
        if (rc) {
            mp_diag_set(d, rc, "out of memory");
            break;
        }
        for (size_t k = 0; k < pr->n_diffs; k++)
            pr->n_workload_diffs += pr->diffs[k].workload;
        if (first && !opts->allow_different) {
            rc = mp_diag_set(d, MP_EINVAL,
                             "the workloads differ in %s: '%s' (%s) vs '%s' (%s); compare only "
                             "runs of the same workload, or pass --allow-different",
                             first->name, first->base, base->label, first->cand, cands[i]->label);
            mp_diag_set_field(d, first->name);
        }
    }
    int nb = opts->nboot;
    double *bboot = NULL, *bruns = NULL, bpoint[MP_BCMP_N_METRICS];
    if (!rc) {
        bboot = mp_malloc((size_t)nb * MP_BCMP_N_METRICS * sizeof(double));
        rc = bboot ? side_boot(base, nb, side_seed(opts->seed, 0), bpoint, bboot) : MP_ENOMEM;
        if (!rc)
            rc = per_run_metrics(base, &bruns);
        for (size_t i = 0; i < n_cands && !rc; i++)
            rc = compare_pair(base, bpoint, bboot, bruns, cands[i], i, opts, &r->pairs[i]);
        if (rc)
            mp_diag_set(d, rc, "out of memory");
    }
    free(bboot);
    free(bruns);
    if (rc) {
        mp_bcmp_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void mp_bcmp_result_free(struct mp_bcmp_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_pairs; i++)
        free(r->pairs[i].diffs);
    free(r->pairs);
    free(r);
}
