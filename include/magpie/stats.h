/* magpie stats: statistics for timing samples. Summaries (median, mean,
 * sample std, min, max, percentiles with linear interpolation as numpy),
 * a percentile-bootstrap confidence interval of the median and of a ratio
 * of medians, the two-sided Mann-Whitney U test (mid-ranks, tie-corrected
 * normal approximation with continuity correction) and Holm's step-down
 * correction for several comparisons against one baseline. Resampling uses
 * a seeded generator, so every result is reproducible. */
#ifndef MAGPIE_STATS_H
#define MAGPIE_STATS_H

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

#endif
