/* Unit tests for base/stats.c: quantiles as numpy computes them, the
 * bootstrap CI, Mann-Whitney U against hand-computed values, Holm. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_ratio_and_mw),
        cmocka_unit_test(test_holm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
