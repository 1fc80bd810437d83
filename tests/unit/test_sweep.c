/* Sweeps: Student t, the SLA and search grammar, the SLA judgement, a
 * point's estimates, the saturation rule, sweep.json round trip, and the
 * drift calibration of interleaved (paired) comparisons on seeded
 * synthetic runs whose server speed drifts between runs. Deterministic:
 * fixed seeds throughout, no timing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/stats.h>
#include <magpie/sweep.h>

static void test_student_t(void **state)
{
    (void)state;
    /* textbook two-sided 95 % and 99 % points */
    assert_true(fabs(mp_stats_t_quantile(0.975, 2) - 4.302653) < 1e-5);
    assert_true(fabs(mp_stats_t_quantile(0.975, 10) - 2.228139) < 1e-5);
    assert_true(fabs(mp_stats_t_quantile(0.995, 30) - 2.749996) < 1e-5);
    assert_true(fabs(mp_stats_t_quantile(0.95, 5) - 2.015048) < 1e-5);
    assert_true(fabs(mp_stats_t_quantile(0.025, 4) + 2.776445) < 1e-5);
    assert_true(fabs(mp_stats_t_cdf(0, 7) - 0.5) < 1e-12);
    assert_true(fabs(mp_stats_t_cdf(1, 1) - 0.75) < 1e-9); /* Cauchy: 1/2 + atan(1)/pi */
    assert_true(fabs(mp_stats_t_cdf(12.706205, 1) - 0.975) < 1e-6);
    assert_true(isnan(mp_stats_t_quantile(0, 3)) && isnan(mp_stats_t_quantile(0.5, 0)));
    /* the quantile inverts the cdf */
    for (int i = 1; i < 100; i += 7) {
        double p = i / 100.0;
        assert_true(fabs(mp_stats_t_cdf(mp_stats_t_quantile(p, 3.5), 3.5) - p) < 1e-9);
    }
}

static void test_sla_grammar(void **state)
{
    (void)state;
    struct mp_sweep_sla s;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_sweep_sla_parse("p99_ttft_ms<=150", &s, &d), 0);
    assert_int_equal(s.metric, MP_BCMP_TTFT_P99);
    assert_true(s.upper && s.limit == 150);
    assert_string_equal(s.text, "ttft_p99_ms<=150");
    assert_int_equal(mp_sweep_sla_parse("mean_tpot_ms < 20.5", &s, &d), 0);
    assert_int_equal(s.metric, MP_BCMP_TPOT_MEAN);
    assert_true(s.limit == 20.5);
    assert_int_equal(mp_sweep_sla_parse("output_throughput>=1000", &s, &d), 0);
    assert_true(!s.upper && s.metric == MP_BCMP_OUT_TPS);
    assert_int_equal(mp_sweep_sla_parse("tokens_per_s_per_user>=30", &s, &d), 0);
    assert_int_equal(s.metric, MP_SWEEP_TPS_USER);
    static const char *const bad[] = {
        "foo<=1", "p99_ttft_ms=1", "p99_ttft_ms<=-1",    "p99_ttft_ms<=abc",
        "<=5",    "p99_ttft_ms<=", "request_goodput>=1", "p99_ttft_ms<=inf"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mp_diag_clear(&d);
        assert_int_equal(mp_sweep_sla_parse(bad[i], &s, &d), MP_EINVAL);
        assert_non_null(strstr(d.msg, "SLA"));
    }
    struct mp_sweep_search q;
    assert_int_equal(mp_sweep_search_parse("max_concurrency:1:256", &q, &d), 0);
    assert_true(q.var == MP_SWEEP_VAR_CONCURRENCY && q.lo == 1 && q.hi == 256);
    assert_int_equal(mp_sweep_search_parse("request_rate:0.5:64", &q, &d), 0);
    assert_true(q.var == MP_SWEEP_VAR_RATE && q.lo == 0.5);
    static const char *const badq[] = {"max_concurrency:1.5:8", "max_concurrency:8:8",
                                       "request_rate:0:4",      "rate:1:2",
                                       "max_concurrency:1",     "request_rate:1:inf"};
    for (size_t i = 0; i < sizeof(badq) / sizeof(badq[0]); i++)
        assert_int_equal(mp_sweep_search_parse(badq[i], &q, &d), MP_EINVAL);
}

static void set_est(struct mp_sweep_point *p, int m, double v, double lo, double hi)
{
    p->m[m] = (struct mp_sweep_est){v, lo, hi};
}

static void test_sla_judge(void **state)
{
    (void)state;
    struct mp_sweep_sla sla[2];
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_sweep_sla_parse("p99_ttft_ms<=150", &sla[0], &d), 0);
    assert_int_equal(mp_sweep_sla_parse("output_throughput>=100", &sla[1], &d), 0);
    struct mp_sweep_point p;
    memset(&p, 0, sizeof(p));
    set_est(&p, MP_BCMP_TTFT_P99, 100, 90, 120);
    set_est(&p, MP_BCMP_OUT_TPS, 200, 190, 210);
    assert_int_equal(mp_sweep_sla_judge(sla, 2, &p), MP_SWEEP_SLA_PASS);
    set_est(&p, MP_BCMP_TTFT_P99, 140, 120, 170); /* straddles, point passes */
    assert_int_equal(mp_sweep_sla_judge(sla, 2, &p), MP_SWEEP_SLA_PASS_NEAR);
    set_est(&p, MP_BCMP_TTFT_P99, 160, 120, 170);
    assert_int_equal(mp_sweep_sla_judge(sla, 2, &p), MP_SWEEP_SLA_FAIL_NEAR);
    set_est(&p, MP_BCMP_OUT_TPS, 90, 80, 95); /* a clear failure wins */
    assert_int_equal(mp_sweep_sla_judge(sla, 2, &p), MP_SWEEP_SLA_FAIL);
    set_est(&p, MP_BCMP_OUT_TPS, NAN, NAN, NAN); /* no data: not met */
    set_est(&p, MP_BCMP_TTFT_P99, 100, 90, 120);
    assert_int_equal(mp_sweep_sla_judge(sla, 2, &p), MP_SWEEP_SLA_FAIL);
    assert_int_equal(mp_sweep_sla_judge(sla, 0, &p), MP_SWEEP_SLA_NONE);
}

/* One synthetic run: n requests at rate, TTFT U[40, 60] x ttft_scale, gaps
 * U[8, 12] x itl_scale. */
static struct mp_bcmp_side *sim_side(const char *label, double rate, double ttft_scale,
                                     double itl_scale, uint64_t seed, size_t n)
{
    struct mp_bcmp_sim s;
    mp_bcmp_sim_default(&s);
    s.n_requests = n;
    s.out_tokens = 16;
    s.rate = rate;
    s.scale_ttft = ttft_scale;
    s.scale_itl = itl_scale;
    s.arrival_seed = 5;
    s.server_seed = seed;
    struct mp_bcmp_run *run = malloc(sizeof(*run));
    assert_non_null(run);
    assert_int_equal(mp_bcmp_sim_run(&s, run), 0);
    struct mp_bcmp_side *side = NULL;
    assert_int_equal(mp_bcmp_side_from_runs(label, run, 1, &side), 0);
    return side;
}

static void test_point_stats_and_saturation(void **state)
{
    (void)state;
    struct mp_bcmp_side *a = sim_side("a", 20, 1, 1, 1, 400);
    struct mp_sweep_stat_opts o;
    mp_sweep_stat_opts_default(&o);
    o.gpus = 2;
    o.slo_ms[0] = 55; /* TTFT U[40, 60]: about 3/4 of the requests are good */
    struct mp_sweep_point p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(mp_sweep_point_stats(a, &o, &p), 0);
    assert_int_equal(p.completed, 400);
    const struct mp_sweep_est *tp = &p.m[MP_BCMP_TPOT_MEAN], *tu = &p.m[MP_SWEEP_TPS_USER];
    assert_true(fabs(tu->v - 1000 / tp->v) < 1e-9);
    assert_true(tu->lo <= tu->v && tu->v <= tu->hi);
    assert_true(fabs(p.m[MP_SWEEP_TPS_GPU].v * 2 - p.m[MP_BCMP_OUT_TPS].v) < 1e-9);
    double good = p.m[MP_SWEEP_GOODPUT].v / p.m[MP_BCMP_REQ_PS].v;
    assert_true(good > 0.6 && good < 0.9);
    assert_true(p.m[MP_BCMP_TTFT_P99].lo <= p.m[MP_BCMP_TTFT_P99].v);

    /* twice the load, twice the throughput: still climbing */
    struct mp_bcmp_side *b = sim_side("b", 40, 1, 1, 2, 400);
    /* the same throughput, three times the TTFT: saturated */
    struct mp_bcmp_side *c = sim_side("c", 20, 3, 1, 3, 400);
    bool sat = true;
    char why[192];
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_sweep_saturated(a, b, false, 5, 0, &sat, why, sizeof(why), &d), 0);
    assert_false(sat);
    assert_int_equal(mp_sweep_saturated(a, c, false, 5, 0, &sat, why, sizeof(why), &d), 0);
    assert_true(sat);
    assert_non_null(strstr(why, "TTFT"));
    /* failures beyond the limit saturate whatever the numbers */
    assert_int_equal(mp_sweep_saturated(a, b, true, 5, 0, &sat, why, sizeof(why), &d), 0);
    assert_true(sat);
    mp_bcmp_side_free(a);
    mp_bcmp_side_free(b);
    mp_bcmp_side_free(c);
}

/* A side of n runs whose server speed is drift[k] x scale. */
static struct mp_bcmp_side *drift_side(const char *label, const double *drift, size_t n,
                                       double ttft_scale, uint64_t seed)
{
    struct mp_bcmp_run *runs = calloc(n, sizeof(*runs));
    assert_non_null(runs);
    for (size_t k = 0; k < n; k++) {
        struct mp_bcmp_sim s;
        mp_bcmp_sim_default(&s);
        s.n_requests = 200;
        s.out_tokens = 16;
        s.scale_ttft = drift[k] * ttft_scale;
        s.scale_itl = drift[k];
        s.arrival_seed = 11;
        s.server_seed = seed * 1000 + k;
        assert_int_equal(mp_bcmp_sim_run(&s, &runs[k]), 0);
    }
    struct mp_bcmp_side *side = NULL;
    assert_int_equal(mp_bcmp_side_from_runs(label, runs, n, &side), 0);
    return side;
}

static bool any_call(const struct mp_bcmp_result *r)
{
    return r->pairs[0].n_faster + r->pairs[0].n_slower > 0;
}

/* Interleaved repeats against a server whose speed drifts: a background
 * load switched on (x1.08) or off in blocks of a few runs, the order A B B A
 * A B ... so that the two runs of a pair are next to each other in time.
 * Twenty A/A experiments may make at most one call over all 14 metrics;
 * a +10 % TTFT must be called SLOWER in at least 19 of 20. One run per
 * side with no floor shows why the floor exists: the drift alone makes
 * calls. */
static void test_drift_calibration(void **state)
{
    (void)state;

    enum { EXPERIMENTS = 20, PAIRS = 5 };

    const double HIGH = 1.03; /* a background load: about the drift measured here */
    struct mp_rng rng;
    mp_rng_seed(&rng, 2026);
    int false_paired = 0, found = 0, false_single_nofloor = 0, false_single = 0;
    for (int e = 0; e < EXPERIMENTS; e++) {
        /* the load state over time: 2 * PAIRS runs, switching every 2-4 runs */
        double t[2 * PAIRS];
        double level = mp_rng_uniform(&rng) < 0.5 ? 1.0 : HIGH;
        int left = 2 + (int)mp_rng_below(&rng, 3);
        for (int k = 0; k < 2 * PAIRS; k++) {
            if (left-- == 0) {
                level = level > 1.0 ? 1.0 : HIGH;
                left = 1 + (int)mp_rng_below(&rng, 3);
            }
            t[k] = level;
        }
        double da[PAIRS], db[PAIRS];
        for (int i = 0; i < PAIRS; i++) { /* A B, then B A */
            da[i] = t[2 * i + (i % 2)];
            db[i] = t[2 * i + 1 - (i % 2)];
        }
        struct mp_bcmp_opts o;
        mp_bcmp_opts_default(&o);
        o.seed = (uint64_t)e;
        struct mp_diag d;
        mp_diag_clear(&d);
        struct mp_bcmp_side *a = drift_side("A", da, PAIRS, 1, 10 + (uint64_t)e),
                            *b = drift_side("B", db, PAIRS, 1, 500 + (uint64_t)e),
                            *c = drift_side("C", db, PAIRS, 1.10, 900 + (uint64_t)e);
        struct mp_bcmp_result *r = NULL;
        assert_int_equal(mp_bcmp_compare_paired(a, b, &o, &r, &d), 0);
        assert_int_equal(r->pairs[0].noise, MP_BCMP_NOISE_PAIRED);
        false_paired += any_call(r);
        mp_bcmp_result_free(r);
        assert_int_equal(mp_bcmp_compare_paired(a, c, &o, &r, &d), 0);
        found += r->pairs[0].m[MP_BCMP_TTFT_MEAN].verdict == MP_BCMP_SLOWER;
        mp_bcmp_result_free(r);
        /* one run per side: the first run of each */
        struct mp_bcmp_side *a1 = drift_side("A1", &t[0], 1, 1, 10 + (uint64_t)e),
                            *b1 = drift_side("B1", &t[3], 1, 1, 500 + (uint64_t)e);
        o.nboot = 1000;
        o.single_run_effect_pct = 0;
        assert_int_equal(
            mp_bcmp_compare(a1, (const struct mp_bcmp_side *const *)&b1, 1, &o, &r, &d), 0);
        false_single_nofloor += any_call(r);
        mp_bcmp_result_free(r);
        o.single_run_effect_pct = MP_BCMP_SINGLE_RUN_EFFECT_PCT;
        assert_int_equal(
            mp_bcmp_compare(a1, (const struct mp_bcmp_side *const *)&b1, 1, &o, &r, &d), 0);
        assert_int_equal(r->pairs[0].noise, MP_BCMP_NOISE_WITHIN_RUN);
        false_single += any_call(r);
        mp_bcmp_result_free(r);
        mp_bcmp_side_free(a);
        mp_bcmp_side_free(b);
        mp_bcmp_side_free(c);
        mp_bcmp_side_free(a1);
        mp_bcmp_side_free(b1);
    }
    print_message("drift: paired A/A calls %d/20, +10%% TTFT found %d/20; single runs A/A "
                  "calls %d/20 without the floor, %d/20 with it\n",
                  false_paired, found, false_single_nofloor, false_single);
    assert_true(false_paired <= 1);
    assert_true(found >= 19);
    assert_true(false_single_nofloor >= 5); /* the problem the floor answers */
}

static void test_json_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_sweep_ut.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct mp_sweep *s = mp_sweep_new("lbl", "http://x");
    assert_non_null(s);
    s->var = MP_SWEEP_VAR_CONCURRENCY;
    s->repeat = 2;
    for (int i = 0; i < 3; i++) {
        struct mp_sweep_point p;
        memset(&p, 0, sizeof(p));
        p.max_concurrency = 8 >> i; /* added out of order: 8, 4, 2 */
        p.request_rate = INFINITY;
        char run[] = "points/c/run_1.json", pdir[] = "points/c";
        char *runs[1] = {run};
        p.runs = runs;
        p.n_runs = 1;
        p.dir = pdir;
        for (int m = 0; m < MP_SWEEP_N_METRICS; m++)
            p.m[m] = (struct mp_sweep_est){m + i, m + i - 0.5, NAN};
        assert_int_equal(mp_sweep_add_point(s, &p), 0);
    }
    s->knee.found = true;
    s->knee.index = 1; /* c4 */
    s->knee.next = 0;  /* c8 */
    snprintf(s->knee.reason, sizeof(s->knee.reason), "flat");
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_sweep_sla_parse("p99_ttft_ms<=150", &s->sla[0], &d), 0);
    s->n_sla = 1;
    s->slares.done = true;
    s->slares.search = (struct mp_sweep_search){MP_SWEEP_VAR_CONCURRENCY, 1, 64};
    s->slares.answer = 4;
    s->slares.first_fail = 5;
    s->slares.tried = 6;
    s->slares.point = 1; /* c4 */
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_sweep_json(s, &b), 0);
    char path[256];
    snprintf(path, sizeof(path), "%s/sweep.json", dir);
    assert_int_equal(mp_fs_write_atomic(path, mp_buf_cstr(&b), strlen(mp_buf_cstr(&b)), &d), 0);
    struct mp_sweep *t = NULL;
    assert_int_equal(mp_sweep_load(dir, &t, &d), 0);
    assert_int_equal(t->n_pts, 3);
    assert_int_equal(t->pts[0].max_concurrency, 2); /* written in load order */
    assert_true(isinf(t->pts[0].request_rate));
    assert_true(t->knee.found && t->pts[t->knee.index].max_concurrency == 4 &&
                t->pts[t->knee.next].max_concurrency == 8);
    assert_true(t->slares.done && t->slares.answer == 4 && t->slares.first_fail == 5);
    assert_int_equal(t->n_sla, 1);
    assert_true(isnan(t->pts[0].m[3].hi) && t->pts[0].m[3].v == 5);
    struct mp_buf b2;
    mp_buf_init(&b2, 0);
    assert_int_equal(mp_sweep_json(t, &b2), 0);
    assert_string_equal(mp_buf_cstr(&b), mp_buf_cstr(&b2));
    /* bad documents name the file and the field */
    const char *bad = "{\"magpie_sweep\": 1, \"points\": [{\"runs\": [\"../x.json\"], "
                      "\"max_concurrency\": 1, \"request_rate\": \"inf\"}]}";
    assert_int_equal(mp_fs_write_atomic(path, bad, strlen(bad), &d), 0);
    mp_diag_clear(&d);
    struct mp_sweep *u = NULL;
    assert_int_equal(mp_sweep_load(dir, &u, &d), MP_EINVAL);
    assert_string_equal(d.field, "points[0].runs[0]");
    assert_non_null(strstr(d.file, "sweep.json"));
    const char *broken = "{\"magpie_sweep\": 1,\n \"points\": [}";
    assert_int_equal(mp_fs_write_atomic(path, broken, strlen(broken), &d), 0);
    assert_int_equal(mp_sweep_load(path, &u, &d), MP_EPARSE);
    assert_int_equal(d.line, 2);
    unlink(path);
    rmdir(dir);
    mp_buf_fini(&b);
    mp_buf_fini(&b2);
    mp_sweep_free(s);
    mp_sweep_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_student_t),         cmocka_unit_test(test_sla_grammar),
        cmocka_unit_test(test_sla_judge),         cmocka_unit_test(test_point_stats_and_saturation),
        cmocka_unit_test(test_drift_calibration), cmocka_unit_test(test_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
