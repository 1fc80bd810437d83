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
#include <stddef.h>
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

bool mp_bcmp_metric_is_tail(int m)
{
    return m == MP_BCMP_TTFT_P99 || m == MP_BCMP_TPOT_P99 || m == MP_BCMP_ITL_P99 ||
           m == MP_BCMP_E2EL_P99;
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

const char *mp_bcmp_noise_name(enum mp_bcmp_noise n)
{
    switch (n) {
    case MP_BCMP_NOISE_RUNS:
        return "runs";
    case MP_BCMP_NOISE_PAIRED:
        return "paired";
    default:
        return "within-run";
    }
}

void mp_bcmp_opts_default(struct mp_bcmp_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->nboot = 2000;
    o->alpha = 0.05;
    o->ci_level = 0.95;
    o->min_effect_pct = 1.0;
    o->single_run_effect_pct = MP_BCMP_SINGLE_RUN_EFFECT_PCT;
}

/* The floor a pair's verdicts use, and where its noise comes from. */
static void pair_noise(const struct mp_bcmp_side *base, const struct mp_bcmp_side *cand,
                       const struct mp_bcmp_opts *o, struct mp_bcmp_pair *pair)
{
    pair->effect_pct = o->min_effect_pct;
    if (base->n_runs > 1 && cand->n_runs > 1) {
        pair->noise = MP_BCMP_NOISE_RUNS;
        return;
    }
    pair->noise = MP_BCMP_NOISE_WITHIN_RUN;
    pair->effect_pct = fmax(o->min_effect_pct, o->single_run_effect_pct);
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

/* A side's samples, each sorted once with the request it belongs to. A
 * resample only changes how often each request counts (its weight), so a
 * statistic of a resample is a weighted one over these arrays: a mean from
 * per-request sums, a percentile from a walk that stops at its rank. That
 * is O(gaps) of plain reads per resample and no copying or sorting. */
struct owned {
    double v;
    uint32_t req; /* index into the side's requests, all runs in order */
};

struct sorted {
    struct owned *e;
    size_t n;
};

struct side_data {
    const struct mp_bcmp_side *s;
    size_t n_req;       /* over all runs */
    size_t *first;      /* first[r]: the side-wide index of run r's request 0 */
    double *itl_sum;    /* per request */
    struct sorted k[4]; /* TTFT, TPOT, ITL, E2EL */
    uint32_t *w;        /* weights of the resample being evaluated */
};

static int cmp_owned(const void *a, const void *b)
{
    double x = ((const struct owned *)a)->v, y = ((const struct owned *)b)->v;
    return (x > y) - (x < y);
}

static void side_data_fini(struct side_data *sd)
{
    free(sd->first);
    free(sd->itl_sum);
    free(sd->w);
    for (int k = 0; k < 4; k++)
        free(sd->k[k].e);
}

static int side_data_init(const struct mp_bcmp_side *s, struct side_data *sd)
{
    memset(sd, 0, sizeof(*sd));
    sd->s = s;
    size_t n_itl = 0;
    for (size_t r = 0; r < s->n_runs; r++) {
        sd->n_req += s->runs[r].n_req;
        n_itl += s->runs[r].n_itl;
    }
    if (sd->n_req > UINT32_MAX)
        return MP_ENOMEM;
    sd->first = mp_malloc((s->n_runs + 1) * sizeof(size_t));
    sd->itl_sum = mp_malloc((sd->n_req + 1) * sizeof(double));
    sd->w = mp_malloc((sd->n_req + 1) * sizeof(uint32_t));
    for (int k = 0; k < 4; k++)
        sd->k[k].e = mp_malloc(((k == 2 ? n_itl : sd->n_req) + 1) * sizeof(struct owned));
    if (!sd->first || !sd->itl_sum || !sd->w || !sd->k[0].e || !sd->k[1].e || !sd->k[2].e ||
        !sd->k[3].e) {
        side_data_fini(sd);
        return MP_ENOMEM;
    }
    size_t g = 0;
    for (size_t r = 0; r < s->n_runs; r++) {
        const struct mp_bcmp_run *run = &s->runs[r];
        sd->first[r] = g;
        for (size_t i = 0; i < run->n_req; i++, g++) {
            const struct mp_bcmp_request *q = &run->req[i];
            uint32_t o = (uint32_t)g;
            sd->k[0].e[sd->k[0].n++] = (struct owned){q->ttft_ms, o};
            if (!isnan(q->tpot_ms))
                sd->k[1].e[sd->k[1].n++] = (struct owned){q->tpot_ms, o};
            sd->k[3].e[sd->k[3].n++] = (struct owned){q->e2el_ms, o};
            double sum = 0;
            for (uint32_t j = 0; j < q->n_itl; j++) {
                double x = run->itl[q->itl_off + j];
                sum += x;
                sd->k[2].e[sd->k[2].n++] = (struct owned){x, o};
            }
            sd->itl_sum[g] = sum;
        }
    }
    for (int k = 0; k < 4; k++)
        qsort(sd->k[k].e, sd->k[k].n, sizeof(struct owned), cmp_owned);
    return 0;
}

/* Value at 0-based position pos of the weighted multiset (pos < total). */
static double weighted_at(const struct sorted *a, const uint32_t *w, size_t total, size_t pos)
{
    size_t cum = 0;
    if (pos < total / 2) {
        for (size_t i = 0; i < a->n; i++) {
            cum += w[a->e[i].req];
            if (cum > pos)
                return a->e[i].v;
        }
    } else {
        size_t top = total - 1 - pos; /* position counted from the largest */
        for (size_t i = a->n; i-- > 0;) {
            cum += w[a->e[i].req];
            if (cum > top)
                return a->e[i].v;
        }
    }
    return a->n ? a->e[a->n - 1].v : NAN;
}

/* numpy percentile (linear interpolation) of the weighted multiset. */
static double weighted_pct(const struct sorted *a, const uint32_t *w, size_t total, double p)
{
    if (total == 0)
        return NAN;
    double rank = p / 100.0 * (double)(total - 1);
    size_t lo = (size_t)floor(rank);
    double x = weighted_at(a, w, total, lo);
    double y = lo + 1 < total ? weighted_at(a, w, total, lo + 1) : x;
    double t = rank - (double)lo;
    return t >= 0.5 ? y - (y - x) * (1.0 - t) : x + (y - x) * t;
}

/* Every metric of the resample whose weights are in sd->w; tok and req are
 * the sums of the chosen runs' throughputs, n_runs how many were chosen. */
static void weighted_metrics(const struct side_data *sd, double tok, double req, size_t n_runs,
                             double *m)
{
    const uint32_t *w = sd->w;
    m[MP_BCMP_OUT_TPS] = n_runs ? tok / (double)n_runs : NAN;
    m[MP_BCMP_REQ_PS] = n_runs ? req / (double)n_runs : NAN;
    for (int k = 0; k < 4; k++) {
        const struct sorted *a = &sd->k[k];
        size_t total = 0;
        double sum = 0;
        if (k == 2) { /* ITL: per-request sums and counts */
            size_t g = 0;
            for (size_t r = 0; r < sd->s->n_runs; r++)
                for (size_t i = 0; i < sd->s->runs[r].n_req; i++, g++) {
                    total += (size_t)w[g] * sd->s->runs[r].req[i].n_itl;
                    sum += w[g] * sd->itl_sum[g];
                }
        } else {
            for (size_t i = 0; i < a->n; i++) {
                total += w[a->e[i].req];
                sum += w[a->e[i].req] * a->e[i].v;
            }
        }
        double *o = m + MP_BCMP_TTFT_MEAN + (ptrdiff_t)3 * k;
        o[0] = total ? sum / (double)total : NAN;
        o[1] = weighted_pct(a, w, total, 50);
        o[2] = weighted_pct(a, w, total, 99);
    }
}

/* Adds one draw of run r (every request once when rng is NULL) to the
 * weights; returns its throughputs through Little's law. */
static void draw_run(struct side_data *sd, size_t r, struct mp_rng *rng, double *tok, double *req)
{
    const struct mp_bcmp_run *run = &sd->s->runs[r];
    size_t n = run->n_req, base = sd->first[r];
    double sum_out = 0, sum_e2el_s = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = rng ? mp_rng_below(rng, n) : i;
        sd->w[base + j]++;
        sum_out += run->req[j].out_tokens;
        sum_e2el_s += run->req[j].e2el_ms / 1e3;
    }
    if (sum_e2el_s > 0) {
        *tok += run->conc_mean * sum_out / sum_e2el_s;
        *req += run->conc_mean * (double)n / sum_e2el_s;
    }
}

int mp_bcmp_run_metrics(const struct mp_bcmp_run *r, double out[MP_BCMP_N_METRICS])
{
    struct mp_bcmp_side one = {.runs = (struct mp_bcmp_run *)r, .n_runs = 1};
    struct side_data sd;
    int rc = side_data_init(&one, &sd);
    if (rc)
        return rc;
    double tok = 0, req = 0;
    memset(sd.w, 0, sd.n_req * sizeof(uint32_t));
    draw_run(&sd, 0, NULL, &tok, &req);
    weighted_metrics(&sd, tok, req, 1, out);
    side_data_fini(&sd);
    return 0;
}

/* Point estimates of a side (all runs pooled) and nboot bootstrap
 * replicates of them: boot[b * N + m]. Two stages when there are repeats:
 * runs drawn with replacement, then requests within each drawn run. */
static int side_boot(const struct mp_bcmp_side *s, int nboot, uint64_t seed, double *point,
                     double *boot)
{
    struct side_data sd;
    int rc = side_data_init(s, &sd);
    if (rc)
        return rc;
    double tok = 0, req = 0;
    memset(sd.w, 0, sd.n_req * sizeof(uint32_t));
    for (size_t r = 0; r < s->n_runs; r++)
        draw_run(&sd, r, NULL, &tok, &req);
    weighted_metrics(&sd, tok, req, s->n_runs, point);
    struct mp_rng rng;
    mp_rng_seed(&rng, seed);
    for (int b = 0; b < nboot; b++) {
        memset(sd.w, 0, sd.n_req * sizeof(uint32_t));
        tok = req = 0;
        for (size_t i = 0; i < s->n_runs; i++) {
            size_t r = s->n_runs > 1 ? mp_rng_below(&rng, s->n_runs) : i;
            draw_run(&sd, r, &rng, &tok, &req);
        }
        weighted_metrics(&sd, tok, req, s->n_runs, boot + (size_t)b * MP_BCMP_N_METRICS);
    }
    side_data_fini(&sd);
    return 0;
}

int mp_bcmp_side_bootstrap(const struct mp_bcmp_side *s, int nboot, uint64_t seed,
                           double point[MP_BCMP_N_METRICS], double *boot)
{
    if (!s->n_runs || nboot < 0 || (nboot > 0 && !boot))
        return MP_EINVAL;
    return side_boot(s, nboot, seed, point, boot);
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

/* Holm over the metrics' raw p-values, then each metric's verdict. */
static void judge(struct mp_bcmp_pair *pair, const double *p, double alpha)
{
    double adj[MP_BCMP_N_METRICS];
    mp_stats_holm(p, MP_BCMP_N_METRICS, adj);
    for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
        struct mp_bcmp_metric *x = &pair->m[m];
        if (x->verdict == MP_BCMP_NA) {
            x->p_holm = NAN;
            continue;
        }
        x->p_holm = adj[m];
        bool increased = x->change_pct > 0;
        if (adj[m] >= alpha || fabs(x->change_pct) <= pair->effect_pct)
            x->verdict = MP_BCMP_WITHIN_NOISE;
        else if (increased == mp_bcmp_metric_higher_better(m))
            x->verdict = MP_BCMP_FASTER;
        else
            x->verdict = MP_BCMP_SLOWER;
        pair->n_faster += x->verdict == MP_BCMP_FASTER;
        pair->n_slower += x->verdict == MP_BCMP_SLOWER;
    }
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
    double p[MP_BCMP_N_METRICS];
    pair_noise(base, cand, o, pair);
    double e = pair->effect_pct / 100.0, tail = (1 - o->ci_level) / 2;
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
        /* a single run's p99 moves by tens of percent between runs of an
         * unchanged server on a busy machine (docs/metrics.md): shown, not judged */
        if (pair->noise == MP_BCMP_NOISE_WITHIN_RUN && o->single_run_effect_pct > 0 &&
            mp_bcmp_metric_is_tail(m)) {
            x->verdict = MP_BCMP_NA;
            p[m] = 1;
        }
    }
    if (!rc)
        judge(pair, p, o->alpha);
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

/* The union of both top-k kernel lists, by the larger of the two times. */
static int kernel_rows(const struct mp_bcmp_side *a, const struct mp_bcmp_side *b,
                       struct mp_bcmp_pair *pr)
{
    if (!a->n_kernels || !b->n_kernels)
        return 0;
    struct mp_bcmp_kernel_row *v = calloc(a->n_kernels + b->n_kernels, sizeof(*v));
    if (!v)
        return MP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < a->n_kernels; i++)
        v[n++] = (struct mp_bcmp_kernel_row){a->kernels[i].name, &a->kernels[i], NULL, NAN};
    for (size_t j = 0; j < b->n_kernels; j++) {
        size_t i;
        for (i = 0; i < a->n_kernels; i++)
            if (!strcmp(v[i].name, b->kernels[j].name) && !v[i].cand)
                break;
        if (i < a->n_kernels) {
            v[i].cand = &b->kernels[j];
            if (v[i].base->total_us > 0)
                v[i].change_pct = (v[i].cand->total_us / v[i].base->total_us - 1) * 100;
        } else {
            v[n++] = (struct mp_bcmp_kernel_row){b->kernels[j].name, NULL, &b->kernels[j], NAN};
        }
    }
    for (size_t i = 1; i < n; i++) /* insertion sort: top-k lists are short */
        for (size_t k = i; k > 0; k--) {
            double x =
                fmax(v[k].base ? v[k].base->total_us : 0, v[k].cand ? v[k].cand->total_us : 0);
            double y = fmax(v[k - 1].base ? v[k - 1].base->total_us : 0,
                            v[k - 1].cand ? v[k - 1].cand->total_us : 0);
            if (x <= y)
                break;
            struct mp_bcmp_kernel_row t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    pr->kernels = v;
    pr->n_kernels = n;
    return 0;
}

static int check_opts(const struct mp_bcmp_opts *opts, struct mp_diag *d)
{
    if (opts->nboot < 100 || opts->nboot > 1000000)
        return mp_diag_set(d, MP_EINVAL, "bootstrap resamples must be 100..1000000, not %d",
                           opts->nboot);
    if (!(opts->alpha > 0 && opts->alpha < 1) || !(opts->ci_level > 0 && opts->ci_level < 1) ||
        !(opts->min_effect_pct >= 0) || !(opts->single_run_effect_pct >= 0))
        return mp_diag_set(d, MP_EINVAL,
                           "alpha and the CI level must be in (0, 1), the minimum "
                           "effects >= 0");
    /* the smallest bootstrap p-value is 2 / (nboot + 1); Holm multiplies it
     * by the number of metrics, which must still leave it under alpha */
    if (2.0 * MP_BCMP_N_METRICS / (opts->nboot + 1) >= opts->alpha)
        return mp_diag_set(d, MP_EINVAL,
                           "%d bootstrap resamples cannot reach alpha %g after Holm's correction "
                           "over %d metrics: use at least %d",
                           opts->nboot, opts->alpha, MP_BCMP_N_METRICS,
                           (int)ceil(2.0 * MP_BCMP_N_METRICS / opts->alpha));
    return 0;
}

/* A result with n_cands pairs whose differences and kernels are filled in;
 * a workload difference without allow_different is an input error. */
static int result_new(const struct mp_bcmp_side *base, const struct mp_bcmp_side *const *cands,
                      size_t n_cands, const struct mp_bcmp_opts *opts, struct mp_bcmp_result **out,
                      struct mp_diag *d)
{
    struct mp_bcmp_result *r = calloc(1, sizeof(*r));
    if (!r || !(r->pairs = calloc(n_cands, sizeof(*r->pairs)))) {
        free(r);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    r->base = base;
    r->opts = *opts;
    r->n_pairs = n_cands;
    int rc = 0;
    for (size_t i = 0; i < n_cands && !rc; i++) {
        struct mp_bcmp_pair *pr = &r->pairs[i];
        pr->cand = cands[i];
        const struct mp_bcmp_diff *first = NULL;
        rc = mp_bcmp_diff_sides(base, cands[i], &pr->diffs, &pr->n_diffs, &first);
        if (!rc)
            rc = kernel_rows(base, cands[i], pr);
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
    if (rc) {
        mp_bcmp_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int mp_bcmp_compare(const struct mp_bcmp_side *base, const struct mp_bcmp_side *const *cands,
                    size_t n_cands, const struct mp_bcmp_opts *opts, struct mp_bcmp_result **out,
                    struct mp_diag *d)
{
    *out = NULL;
    int rc = check_opts(opts, d);
    if (rc)
        return rc;
    if (!n_cands)
        return mp_diag_set(d, MP_EINVAL, "nothing to compare: give a baseline and a candidate");
    struct mp_bcmp_result *r = NULL;
    if ((rc = result_new(base, cands, n_cands, opts, &r, d)) || !r)
        return rc ? rc : mp_diag_set(d, MP_ENOMEM, "out of memory");
    int nb = opts->nboot;
    double *bruns = NULL, bpoint[MP_BCMP_N_METRICS];
    double *bboot = mp_malloc((size_t)nb * MP_BCMP_N_METRICS * sizeof(double));
    rc = bboot ? side_boot(base, nb, side_seed(opts->seed, 0), bpoint, bboot) : MP_ENOMEM;
    if (!rc)
        rc = per_run_metrics(base, &bruns);
    for (size_t i = 0; i < n_cands && !rc; i++)
        rc = compare_pair(base, bpoint, bboot, bruns, cands[i], i, opts, &r->pairs[i]);
    free(bboot);
    free(bruns);
    if (rc) {
        mp_diag_set(d, rc, "out of memory");
        mp_bcmp_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* One metric of an interleaved comparison from the per-run values. */
static void paired_metric(const double *bv, const double *cv, size_t n, int m, double e_log,
                          double ci_level, struct mp_bcmp_metric *x, double *p)
{
    double dl[1024], sb = 0, sc = 0;
    size_t k = 0;
    x->base_spread[0] = x->cand_spread[0] = INFINITY;
    x->base_spread[1] = x->cand_spread[1] = -INFINITY;
    for (size_t i = 0; i < n && k < 1024; i++) {
        double a = bv[i * MP_BCMP_N_METRICS + (size_t)m], c = cv[i * MP_BCMP_N_METRICS + (size_t)m];
        if (!(a > 0) || !(c > 0))
            continue;
        dl[k++] = log(c / a);
        sb += a;
        sc += c;
        x->base_spread[0] = fmin(x->base_spread[0], a);
        x->base_spread[1] = fmax(x->base_spread[1], a);
        x->cand_spread[0] = fmin(x->cand_spread[0], c);
        x->cand_spread[1] = fmax(x->cand_spread[1], c);
    }
    x->ci_lo = x->ci_hi = x->p = NAN;
    *p = 1;
    if (k < 2) {
        x->base = x->cand = x->change_pct = NAN;
        x->verdict = MP_BCMP_NA;
        return;
    }
    double ss, mean = mp_stats_mean_ss(dl, k, &ss), se = sqrt(ss / (double)(k - 1) / (double)k);
    double df = (double)(k - 1), q = mp_stats_t_quantile(1 - (1 - ci_level) / 2, df);
    x->base = sb / (double)k;
    x->cand = sc / (double)k;
    x->change_pct = (exp(mean) - 1) * 100;
    x->ci_lo = (exp(mean - q * se) - 1) * 100;
    x->ci_hi = (exp(mean + q * se) - 1) * 100;
    if (se > 0) {
        double pu = 1 - mp_stats_t_cdf((mean - e_log) / se, df); /* against "up by > e" */
        double pd = mp_stats_t_cdf((mean + e_log) / se, df);     /* against "down by > e" */
        x->p = fmin(1, 2 * fmin(pu, pd));
    } else {
        x->p = fabs(mean) > e_log ? 0 : 1;
    }
    *p = x->p;
}

int mp_bcmp_compare_paired(const struct mp_bcmp_side *base, const struct mp_bcmp_side *cand,
                           const struct mp_bcmp_opts *opts, struct mp_bcmp_result **out,
                           struct mp_diag *d)
{
    *out = NULL;
    if (base->n_runs < 2 || base->n_runs != cand->n_runs || base->n_runs > 1024)
        return mp_bcmp_compare(base, &cand, 1, opts, out, d);
    int rc = check_opts(opts, d);
    struct mp_bcmp_result *r = NULL;
    if (rc || (rc = result_new(base, &cand, 1, opts, &r, d)) || !r)
        return rc ? rc : mp_diag_set(d, MP_ENOMEM, "out of memory");
    double *bv = NULL, *cv = NULL;
    if ((rc = per_run_metrics(base, &bv)) || (rc = per_run_metrics(cand, &cv))) {
        free(bv);
        mp_bcmp_result_free(r);
        return mp_diag_set(d, rc, "out of memory");
    }
    struct mp_bcmp_pair *pair = &r->pairs[0];
    pair->noise = MP_BCMP_NOISE_PAIRED;
    pair->effect_pct = opts->min_effect_pct;
    double p[MP_BCMP_N_METRICS], e_log = log1p(opts->min_effect_pct / 100.0);
    for (int m = 0; m < MP_BCMP_N_METRICS; m++)
        paired_metric(bv, cv, base->n_runs, m, e_log, opts->ci_level, &pair->m[m], &p[m]);
    judge(pair, p, opts->alpha);
    free(bv);
    free(cv);
    *out = r;
    return 0;
}

void mp_bcmp_result_free(struct mp_bcmp_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_pairs; i++) {
        free(r->pairs[i].diffs);
        free(r->pairs[i].kernels);
    }
    free(r->pairs);
    free(r);
}
