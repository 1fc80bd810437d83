/* Unit tests for base/stats.c: quantiles as numpy computes them, the
 * bootstrap CI, Mann-Whitney U against hand-computed values, Holm, and the
 * numpy/pandas sums bit for bit against values numpy and pandas printed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include <magpie/stats.h>

static void test_summary(void **state)
{
    (void)state;
    double x[] = {5, 1, 4, 2, 3, 10, 6, 7, 9, 8};
    struct mp_stats_summary s;
    assert_int_equal(mp_stats_summarize(x, 10, 0.95, 1000, 1, &s), 0);
    assert_true(s.median == 5.5);
    assert_true(s.mean == 5.5);
    assert_true(s.min == 1 && s.max == 10);
    assert_true(fabs(s.p5 - 1.45) < 1e-12); /* numpy.percentile(x, 5) */
    assert_true(fabs(s.p95 - 9.55) < 1e-12);
    assert_true(fabs(s.std - 3.0276503540974917) < 1e-12);
    assert_true(s.ci_lo <= s.median && s.median <= s.ci_hi);
    assert_true(s.ci_lo >= 1 && s.ci_hi <= 10);
    double odd[] = {3, 3, 3, 1, 9};
    assert_true(mp_stats_median(odd, 5) == 3);
    double even[] = {4, 1, 3, 2};
    assert_true(mp_stats_median(even, 4) == 2.5);
}

static void test_ratio_and_mw(void **state)
{
    (void)state;
    double a[40], b[40];
    struct mp_rng r;
    mp_rng_seed(&r, 7);
    for (int i = 0; i < 40; i++) {
        a[i] = 100 + mp_rng_uniform(&r);
        b[i] = 90 + mp_rng_uniform(&r);
    }
    double ratio, lo, hi;
    assert_int_equal(mp_stats_ratio_ci(a, 40, b, 40, 0.95, 2000, 3, &ratio, &lo, &hi), 0);
    assert_true(ratio > 0.89 && ratio < 0.91);
    assert_true(lo <= ratio && ratio <= hi && hi < 0.95);
    double u, p;
    assert_int_equal(mp_stats_mann_whitney(a, 40, b, 40, &u, &p), 0);
    assert_true(u == 1600);
    assert_true(p < 1e-10);
    double c[] = {1, 2, 3, 4, 5}, e[] = {6, 7, 8, 9, 10};
    assert_int_equal(mp_stats_mann_whitney(c, 5, e, 5, &u, &p), 0);
    assert_true(u == 0);
    /* scipy.stats.mannwhitneyu(c, e, method="asymptotic") -> 0.012185... */
    assert_true(fabs(p - 0.012185) < 1e-4);
    assert_int_equal(mp_stats_mann_whitney(c, 5, c, 5, &u, &p), 0);
    assert_true(p > 0.9);
}

static void test_holm(void **state)
{
    (void)state;
    double p[] = {0.01, 0.04, 0.03}, adj[3];
    mp_stats_holm(p, 3, adj);
    assert_true(fabs(adj[0] - 0.03) < 1e-12);
    assert_true(fabs(adj[2] - 0.06) < 1e-12);
    assert_true(fabs(adj[1] - 0.06) < 1e-12);
}

/* x[i] = ((i * 7919 + 13) % 300000) / 997.0; the expected bits were
 * printed by numpy 2.4.6 and pandas 3.1.1 (float.hex) for these inputs:
 * np.sum(x); groupby sum over rows whose group ids are not sorted (one row
 * of another key first: Kahan); groupby sum with one key (ids sorted:
 * np.add.reduceat); groupby std (ddof 1). Sizes around numpy's 8-wide
 * unroll and its 128-value block show each scheme's order of additions. */
static const struct {
    size_t n;
    double pairwise, kahan, reduceat, std;
} sums_ref[] = {
    {1, 0x1.ab440b4c42c2ap-7, 0x1.ab440b4c42c2ap-7, 0x1.ab440b4c42c2ap-7, NAN},
    {5, 0x1.3df952efd2cefp+6, 0x1.3df952efd2cefp+6, 0x1.3df952efd2cefp+6, 0x1.91e0fd5021274p+3},
    {8, 0x1.bd01cc21e4c85p+7, 0x1.bd01cc21e4c84p+7, 0x1.bd01cc21e4c85p+7, 0x1.374b45948df2ep+4},
    {17, 0x1.0e1c90d1864a8p+10, 0x1.0e1c90d1864a7p+10, 0x1.0e1c90d1864a7p+10, 0x1.40dfe1fcefb26p+5},
    {128, 0x1.1350a039843cap+14, 0x1.1350a039843cap+14, 0x1.1350a039843cap+14,
     0x1.60d716cb6b1f4p+6},
    {129, 0x1.151892df63e24p+14, 0x1.151892df63e23p+14, 0x1.151892df63e24p+14,
     0x1.5f8edcdea6457p+6},
    {1000, 0x1.230440314cc64p+17, 0x1.230440314cc64p+17, 0x1.230440314cc64p+17,
     0x1.5c7b3b7a88e7ap+6},
    {20000, 0x1.6f3614ab85c70p+21, 0x1.6f3614ab85c70p+21, 0x1.6f3614ab85c70p+21,
     0x1.5b6de4b85d147p+6},
};

static void test_sums_bitexact(void **state)
{
    (void)state;
    double *x = malloc(20000 * sizeof(double));
    assert_non_null(x);
    for (size_t i = 0; i < 20000; i++)
        x[i] = (double)((i * 7919 + 13) % 300000) / 997.0;
    for (size_t k = 0; k < sizeof(sums_ref) / sizeof(sums_ref[0]); k++) {
        size_t n = sums_ref[k].n;
        assert_true(mp_sum_pairwise(x, n) == sums_ref[k].pairwise);
        assert_true(mp_sum_kahan(x, n) == sums_ref[k].kahan);
        assert_true(mp_sum_pandas_group(x, n, false) == sums_ref[k].kahan);
        assert_true(mp_sum_reduceat(x, n) == sums_ref[k].reduceat);
        assert_true(mp_sum_pandas_group(x, n, true) == sums_ref[k].reduceat);
        double sd = mp_std_pandas_group(x, n, 1);
        assert_true(isnan(sums_ref[k].std) ? isnan(sd) : sd == sums_ref[k].std);
    }
    /* the schemes do differ on these inputs (a plain loop differs from all) */
    assert_true(mp_sum_pairwise(x, 8) != mp_sum_kahan(x, 8));
    assert_true(mp_sum_reduceat(x, 17) != mp_sum_pairwise(x, 17));
    assert_true(mp_sum_kahan(x, 129) != mp_sum_reduceat(x, 129));
    /* edges: empty sums are 0.0; numpy turns a lone -0.0 into 0.0, reduceat
     * and Kahan as pandas' (0.0 + -0.0) */
    assert_true(mp_sum_pairwise(x, 0) == 0 && mp_sum_kahan(x, 0) == 0);
    double nz = -0.0;
    assert_false(signbit(mp_sum_pairwise(&nz, 1)));
    assert_true(signbit(mp_sum_reduceat(&nz, 1)));
    assert_false(signbit(mp_sum_kahan(&nz, 1)));
    /* an infinite value: pandas resets the compensation, the sum stays inf */
    double inf[] = {1.5, INFINITY, 2.0};
    assert_true(mp_sum_kahan(inf, 3) == INFINITY);
    assert_true(isnan(mp_std_pandas_group(x, 3, 3)));
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_ratio_and_mw),
        cmocka_unit_test(test_holm),
        cmocka_unit_test(test_sums_bitexact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
