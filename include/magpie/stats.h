/* magpie stats: statistics for timing samples. Summaries (median, mean,
 * sample std, min, max, percentiles with linear interpolation as numpy),
 * a percentile-bootstrap confidence interval of the median and of a ratio
 * of medians, the two-sided Mann-Whitney U test (mid-ranks, tie-corrected
 * normal approximation with continuity correction) and Holm's step-down
 * correction for several comparisons against one baseline. Resampling uses
 * a seeded generator, so every result is reproducible. */
#ifndef MAGPIE_STATS_H
#define MAGPIE_STATS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

/* A small, fast, seedable generator (splitmix64 seeding xoshiro256**). */
struct mp_rng {
    uint64_t s[4];
};

void mp_rng_seed(struct mp_rng *r, uint64_t seed);
uint64_t mp_rng_next(struct mp_rng *r);
double mp_rng_uniform(struct mp_rng *r);         /* [0, 1) */
size_t mp_rng_below(struct mp_rng *r, size_t n); /* [0, n), n > 0 */

struct mp_stats_summary {
    size_t n;
    double mean, std; /* std: sample standard deviation (n - 1), 0 when n < 2 */
    double min, max;
    double median, p5, p25, p75, p95, p99;
    double cov;          /* std / mean, 0 when mean is 0 */
    double ci_lo, ci_hi; /* bootstrap CI of the median at the level asked for */
    double ci_level;
};

/* qsort comparator of doubles, ascending. */
int mp_stats_cmp_double(const void *a, const void *b);
/* q in [0, 1]; sorted ascending; rank = q (n - 1), linear interpolation. */
double mp_stats_quantile_sorted(const double *sorted, size_t n, double q);
/* Median of x (x is not modified). NaN when n == 0. */
double mp_stats_median(const double *x, size_t n);
/* Mean of x[0..n) (n > 0), and in *ss the sum of squared deviations from
 * it: std is sqrt(ss / (n - 1)) for a sample, sqrt(ss / n) for a population. */
double mp_stats_mean_ss(const double *x, size_t n, double *ss);
/* Fills out from x[0..n). nboot resamples for the CI (0: no CI, ci = median).
 * Returns 0, MP_EINVAL (n == 0) or MP_ENOMEM. */
int mp_stats_summarize(const double *x, size_t n, double ci_level, int nboot, uint64_t seed,
                       struct mp_stats_summary *out);

/* Ratio of medians median(b) / median(a) and its percentile-bootstrap CI,
 * each group resampled independently. */
int mp_stats_ratio_ci(const double *a, size_t na, const double *b, size_t nb, double ci_level,
                      int nboot, uint64_t seed, double *ratio, double *lo, double *hi);

/* Two-sided Mann-Whitney U test of a vs b. *u is U of a (number of pairs
 * where a > b, ties counting 1/2); *p the p-value. Needs na, nb >= 1. */
int mp_stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u,
                          double *p);

/* Holm-adjusted p-values (monotone, capped at 1) for k raw p-values. */
void mp_stats_holm(const double *p, size_t k, double *adjusted);

/* Standard normal upper-tail probability P(Z > z). */
double mp_stats_norm_sf(double z);

/* Student's t distribution with df > 0 degrees of freedom: P(T <= t), and
 * the t with P(T <= t) = p for p in (0, 1) (NaN outside). Through the
 * regularised incomplete beta function (continued fraction, ~1e-12
 * relative). */
double mp_stats_t_cdf(double t, double df);
double mp_stats_t_quantile(double p, double df);

/* ---- float sums as numpy and pandas compute them, bit for bit ----
 * The order of the additions decides the last bits of a sum, and a report
 * that sorts by a sum breaks ties by those bits; so each helper does
 * exactly the additions of one library routine (docs/compatibility.md has
 * which TraceLens column uses which). */

/* numpy's sum of a float64 array (np.sum, Series.sum, the numerator of
 * Series.mean / np.mean): 0.0 plus the pairwise sum of x[0..n) (blocks of
 * at most 128 summed with 8 accumulators, larger ranges split in two at a
 * multiple of 8). 0.0 for n == 0. */
double mp_sum_pairwise(const double *x, size_t n);

/* pandas' Cython groupby sum and mean (group_sum / group_mean): Kahan's
 * compensated sum in row order, the compensation reset to 0 when it is
 * not finite (an infinite value). */
struct mp_kahan {
    double sum, comp;
};

static inline void mp_kahan_add(struct mp_kahan *k, double v)
{
    double y = v - k->comp;
    double t = k->sum + y;
    k->comp = t - k->sum - y;
    if (!isfinite(k->comp)) /* an infinite value: pandas resets it */
        k->comp = 0;
    k->sum = t;
}

double mp_sum_kahan(const double *x, size_t n);

/* np.add.reduceat over one segment: x[0] plus the pairwise sum of the rest
 * (pandas >= 3.1 takes this path for groupby sum and mean when the group
 * ids of the rows never decrease and no value is NaN). 0.0 for n == 0. */
double mp_sum_reduceat(const double *x, size_t n);

/* The sum pandas 3.1 gives one group of a groupby: mp_sum_reduceat when
 * ids_sorted (every row's group id >= the previous row's, dropped rows
 * only first), else mp_sum_kahan; x is the group's values in row order. */
double mp_sum_pandas_group(const double *x, size_t n, bool ids_sorted);

/* pandas' groupby std (group_var: Welford's running mean and M2 in row
 * order) with the given ddof; NaN when n <= ddof. */
double mp_std_pandas_group(const double *x, size_t n, int ddof);

#endif
