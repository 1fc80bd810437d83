/* Statistics for timing samples: summaries, bootstrap confidence intervals
 * of medians and of ratios of medians, the Mann-Whitney U test and Holm's
 * correction; and float sums that repeat numpy's and pandas' additions
 * exactly (pairwise, Kahan, reduceat, Welford) for the TraceLens sheets. Used by kernel analyze /
 * compare; written for clarity over speed, yet a 2,000-resample bootstrap of 10,000 samples takes
 * well under a second (quickselect, no sorting per resample). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/stats.h>

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void mp_rng_seed(struct mp_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t mp_rng_next(struct mp_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double mp_rng_uniform(struct mp_rng *r)
{
    return (double)(mp_rng_next(r) >> 11) * 0x1.0p-53;
}

size_t mp_rng_below(struct mp_rng *r, size_t n)
{
    return (size_t)(mp_rng_uniform(r) * (double)n) % n;
}

int mp_stats_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double mp_stats_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return sorted[0];
    if (q >= 1)
        return sorted[n - 1];
    double rank = q * (double)(n - 1);
    size_t lo = (size_t)floor(rank);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double f = rank - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * f;
}

/* k-th smallest of x[0..n) (x is reordered); Hoare partitioning keeps
 * runs of equal samples (common in timer output) linear. */
static double select_kth(double *x, size_t n, size_t k)
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

/* Median of x[0..n) with numpy's interpolation; x is reordered. */
static double median_inplace(double *x, size_t n)
{
    if (n % 2)
        return select_kth(x, n, n / 2);
    double hi = select_kth(x, n, n / 2);
    double lo = x[0];
    for (size_t i = 1; i < n / 2; i++) /* the largest of the lower half */
        if (x[i] > lo)
            lo = x[i];
    return (lo + hi) / 2;
}

double mp_stats_median(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double *t = mp_malloc(n * sizeof(double));
    if (!t)
        return NAN;
    memcpy(t, x, n * sizeof(double));
    double m = median_inplace(t, n);
    free(t);
    return m;
}

/* Bootstrap distribution of the median of one resampled group. */
static int boot_medians(const double *x, size_t n, int nboot, struct mp_rng *r, double *out)
{
    double *t = mp_malloc(n * sizeof(double));
    if (!t)
        return MP_ENOMEM;
    for (int b = 0; b < nboot; b++) {
        for (size_t i = 0; i < n; i++)
            t[i] = x[mp_rng_below(r, n)];
        out[b] = median_inplace(t, n);
    }
    free(t);
    return 0;
}

double mp_stats_mean_ss(const double *x, size_t n, double *ss)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / (double)n, q = 0;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - mean) * (x[i] - mean);
    *ss = q;
    return mean;
}

int mp_stats_summarize(const double *x, size_t n, double ci_level, int nboot, uint64_t seed,
                       struct mp_stats_summary *out)
{
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return MP_EINVAL;
    double *s = mp_malloc(n * sizeof(double));
    if (!s)
        return MP_ENOMEM;
    memcpy(s, x, n * sizeof(double));
    qsort(s, n, sizeof(double), mp_stats_cmp_double);
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    double ss;
    out->mean = mp_stats_mean_ss(s, n, &ss);
    out->std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    out->cov = out->mean != 0 ? out->std / out->mean : 0;
    out->median = mp_stats_quantile_sorted(s, n, 0.5);
    out->p5 = mp_stats_quantile_sorted(s, n, 0.05);
    out->p25 = mp_stats_quantile_sorted(s, n, 0.25);
    out->p75 = mp_stats_quantile_sorted(s, n, 0.75);
    out->p95 = mp_stats_quantile_sorted(s, n, 0.95);
    out->p99 = mp_stats_quantile_sorted(s, n, 0.99);
    out->ci_level = ci_level;
    out->ci_lo = out->ci_hi = out->median;
    int rc = 0;
    if (nboot > 0 && n > 1) {
        double *m = mp_malloc((size_t)nboot * sizeof(double));
        struct mp_rng r;
        mp_rng_seed(&r, seed);
        rc = m ? boot_medians(s, n, nboot, &r, m) : MP_ENOMEM;
        if (!rc) {
            qsort(m, (size_t)nboot, sizeof(double), mp_stats_cmp_double);
            out->ci_lo = mp_stats_quantile_sorted(m, (size_t)nboot, (1 - ci_level) / 2);
            out->ci_hi = mp_stats_quantile_sorted(m, (size_t)nboot, 1 - (1 - ci_level) / 2);
        }
        free(m);
    }
    free(s);
    return rc;
}

int mp_stats_ratio_ci(const double *a, size_t na, const double *b, size_t nb, double ci_level,
                      int nboot, uint64_t seed, double *ratio, double *lo, double *hi)
{
    if (!na || !nb || nboot < 1)
        return MP_EINVAL;
    double ma = mp_stats_median(a, na), mb = mp_stats_median(b, nb);
    *ratio = ma != 0 ? mb / ma : NAN;
    double *ba = mp_malloc((size_t)nboot * sizeof(double));
    double *bb = mp_malloc((size_t)nboot * sizeof(double));
    int rc = ba && bb ? 0 : MP_ENOMEM;
    struct mp_rng r;
    mp_rng_seed(&r, seed);
    if (!rc)
        rc = boot_medians(a, na, nboot, &r, ba);
    if (!rc)
        rc = boot_medians(b, nb, nboot, &r, bb);
    if (!rc) {
        for (int i = 0; i < nboot; i++)
            ba[i] = ba[i] != 0 ? bb[i] / ba[i] : NAN;
        qsort(ba, (size_t)nboot, sizeof(double), mp_stats_cmp_double);
        *lo = mp_stats_quantile_sorted(ba, (size_t)nboot, (1 - ci_level) / 2);
        *hi = mp_stats_quantile_sorted(ba, (size_t)nboot, 1 - (1 - ci_level) / 2);
    }
    free(ba);
    free(bb);
    return rc;
}

double mp_stats_norm_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

/* The continued fraction of I_x(a, b), evaluated by the modified Lentz
 * method; converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double f = d;
    for (int m = 1; m <= 400; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        for (int step = 0; step < 2; step++) {
            d = 1 + num * d;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            c = 1 + num / c;
            c = fabs(c) < tiny ? tiny : c;
            f *= c * d;
            if (step == 0) /* the odd term follows the even one */
                num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        }
        if (fabs(c * d - 1) < 1e-15)
            break;
    }
    return f;
}

/* Regularised incomplete beta I_x(a, b) for x in [0, 1]. */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double ln = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(ln) * beta_cf(a, b, x) / a;
    return 1 - exp(ln) * beta_cf(b, a, 1 - x) / b;
}

double mp_stats_t_cdf(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    double tail = 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t)); /* P(T > |t|) */
    return t > 0 ? 1 - tail : tail;
}

double mp_stats_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p == 0.5)
        return 0;
    /* bracket, then bisect: the CDF is monotone and cheap */
    double lo = -1, hi = 1;
    while (mp_stats_t_cdf(lo, df) > p)
        lo *= 2;
    while (mp_stats_t_cdf(hi, df) < p)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * fmax(1, fabs(lo)); i++) {
        double mid = 0.5 * (lo + hi);
        if (mp_stats_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

struct tagged {
    double v;
    int group;
};

static int cmp_tagged(const void *a, const void *b)
{
    return mp_stats_cmp_double(&((const struct tagged *)a)->v, &((const struct tagged *)b)->v);
}

int mp_stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u,
                          double *p)
{
    if (!na || !nb)
        return MP_EINVAL;
    size_t n = na + nb;
    struct tagged *t = mp_malloc(n * sizeof(*t));
    if (!t)
        return MP_ENOMEM;
    for (size_t i = 0; i < na; i++)
        t[i] = (struct tagged){a[i], 0};
    for (size_t i = 0; i < nb; i++)
        t[na + i] = (struct tagged){b[i], 1};
    qsort(t, n, sizeof(*t), cmp_tagged);
    double rank_a = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && t[j + 1].v == t[i].v)
            j++;
        double mid = ((double)i + (double)j) / 2 + 1; /* 1-based mid-rank */
        for (size_t k = i; k <= j; k++)
            if (t[k].group == 0)
                rank_a += mid;
        double tc = (double)(j - i + 1);
        tie_term += tc * tc * tc - tc;
        i = j + 1;
    }
    free(t);
    double dna = (double)na, dnb = (double)nb, dn = (double)n;
    double ua = rank_a - dna * (dna + 1) / 2;
    *u = ua;
    double mu = dna * dnb / 2;
    double var = dna * dnb / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
    if (var <= 0) {
        *p = 1.0;
        return 0;
    }
    double diff = fabs(ua - mu) - 0.5; /* continuity correction */
    if (diff < 0)
        diff = 0;
    double z = diff / sqrt(var);
    double pv = 2 * mp_stats_norm_sf(z);
    *p = pv > 1 ? 1 : pv;
    return 0;
}

void mp_stats_holm(const double *p, size_t k, double *adjusted)
{
    /* order by p ascending (k is small: insertion sort of indices) */
    size_t idx[256];
    size_t m = k < 256 ? k : 256;
    for (size_t i = 0; i < m; i++) {
        size_t j = i;
        while (j > 0 && p[idx[j - 1]] > p[i]) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    double running = 0;
    for (size_t r = 0; r < m; r++) {
        double v = (double)(m - r) * p[idx[r]];
        if (v > 1)
            v = 1;
        if (v < running)
            v = running;
        running = v;
        adjusted[idx[r]] = v;
    }
    for (size_t i = m; i < k; i++)
        adjusted[i] = 1;
}

/* numpy's pairwise_sum for float64 (umath loops_utils): short runs one by
 * one from -0.0, up to 128 values with eight interleaved accumulators
 * combined as a tree, longer ranges halved at a multiple of 8. */
static double pairwise(const double *a, size_t n)
{
    if (n < 8) {
        double res = -0.0;
        for (size_t i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        size_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + (size_t)j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

double mp_sum_pairwise(const double *x, size_t n)
{
    /* np.add.reduce starts from the identity 0.0 (so a lone -0.0 sums to 0.0) */
    return 0.0 + pairwise(x, n);
}

double mp_sum_kahan(const double *x, size_t n)
{
    struct mp_kahan k = {0, 0};
    for (size_t i = 0; i < n; i++)
        mp_kahan_add(&k, x[i]);
    return k.sum;
}

double mp_sum_reduceat(const double *x, size_t n)
{
    if (n == 0)
        return 0.0;
    return n == 1 ? x[0] : x[0] + pairwise(x + 1, n - 1);
}

double mp_sum_pandas_group(const double *x, size_t n, bool ids_sorted)
{
    return ids_sorted ? mp_sum_reduceat(x, n) : mp_sum_kahan(x, n);
}

double mp_std_pandas_group(const double *x, size_t n, int ddof)
{
    if (ddof < 0 || n <= (size_t)ddof)
        return NAN;
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        double old = mean;
        mean += (x[i] - old) / (double)(i + 1);
        m2 += (x[i] - mean) * (x[i] - old);
    }
    return sqrt(m2 / (double)(n - (size_t)ddof));
}
