/* Unit tests of `benchmark compare` (include/magpie/bench_compare.h): the
 * per-run statistics against hand-computed numpy values, the throughput
 * identity, seeded determinism, the workload check, repeats, both loaders
 * on recorded calibration-server runs, and a small deterministic
 * calibration on synthetic runs (the 100-trial version is
 * bench/compare_calib.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/bench_compare.h>

/* A run of n requests: TTFT = ttft0 + i, out tokens k, gaps itl * (1 + i % 3 / 10). */
static void make_run(struct mp_bcmp_run *r, size_t n, double ttft0, double itl, int k, double dur)
{
    double *tt = calloc(n, sizeof(double)), *e2 = calloc(n, sizeof(double));
    double *gaps = calloc(n * (size_t)k, sizeof(double));
    int32_t *out = calloc(n, sizeof(int32_t));
    uint32_t *off = calloc(n, sizeof(uint32_t)), *ni = calloc(n, sizeof(uint32_t));
    assert_non_null(tt);
    assert_non_null(e2);
    assert_non_null(gaps);
    assert_non_null(out);
    assert_non_null(off);
    assert_non_null(ni);
    for (size_t i = 0; i < n; i++) {
        tt[i] = ttft0 + (double)i;
        e2[i] = tt[i];
        off[i] = (uint32_t)(i * (size_t)k);
        ni[i] = (uint32_t)(k - 1);
        out[i] = k;
        for (int j = 0; j < k - 1; j++) {
            gaps[i * (size_t)k + (size_t)j] = itl * (1 + (double)(i % 3) / 10);
            e2[i] += gaps[i * (size_t)k + (size_t)j];
        }
    }
    assert_int_equal(mp_bcmp_run_build(tt, e2, out, NULL, gaps, off, ni, n, 0, dur, r), 0);
    free(tt);
    free(e2);
    free(gaps);
    free(out);
    free(off);
    free(ni);
}

static struct mp_bcmp_side *side_of(const char *label, struct mp_bcmp_run *runs, size_t n)
{
    struct mp_bcmp_run *v = calloc(n, sizeof(*v));
    assert_non_null(v);
    memcpy(v, runs, n * sizeof(*v));
    struct mp_bcmp_side *s = NULL;
    assert_int_equal(mp_bcmp_side_from_runs(label, v, n, &s), 0);
    return s;
}

static void test_run_metrics(void **state)
{
    (void)state;
    struct mp_bcmp_run r;
    make_run(&r, 5, 10, 2, 3, 4.0); /* TTFT 10..14; gaps 2, 2.2, 2.4, 2, 2.2 (x2 each) */
    double m[MP_BCMP_N_METRICS];
    assert_int_equal(mp_bcmp_run_metrics(&r, m), 0);
    assert_true(fabs(m[MP_BCMP_TTFT_MEAN] - 12) < 1e-12);
    assert_true(fabs(m[MP_BCMP_TTFT_MEDIAN] - 12) < 1e-12);
    assert_true(fabs(m[MP_BCMP_TTFT_P99] - 13.96) < 1e-9); /* numpy: 10 + 0.99 * 4 */
    /* gaps sorted: 2,2,2,2,2.2,2.2,2.2,2.2,2.4,2.4: median 2.2, p99 at rank 8.91 */
    assert_true(fabs(m[MP_BCMP_ITL_MEDIAN] - 2.2) < 1e-12);
    assert_true(fabs(m[MP_BCMP_ITL_P99] - 2.4) < 1e-12);
    assert_true(fabs(m[MP_BCMP_ITL_MEAN] - 2.16) < 1e-12);
    /* TPOT = (E2EL - TTFT) / (3 - 1) = the request's gap */
    assert_true(fabs(m[MP_BCMP_TPOT_MEAN] - 2.16) < 1e-12);
    /* throughput: exactly tokens / duration and requests / duration */
    assert_true(fabs(m[MP_BCMP_OUT_TPS] - 15 / 4.0) < 1e-9);
    assert_true(fabs(m[MP_BCMP_REQ_PS] - 5 / 4.0) < 1e-9);
    mp_bcmp_run_fini(&r);
}

static void test_deterministic_and_verdicts(void **state)
{
    (void)state;
    struct mp_bcmp_run a, b;
    make_run(&a, 400, 100, 10, 9, 60);
    make_run(&b, 400, 100, 11, 9, 60); /* gaps +10 %: slower ITL/TPOT/E2EL */
    struct mp_bcmp_side *sa = side_of("a", &a, 1), *sb = side_of("b", &b, 1);
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    o.nboot = 500;
    o.single_run_effect_pct = 0; /* the within-run statistics (the floor: test_fixtures) */
    struct mp_bcmp_result *r1 = NULL, *r2 = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    /* 500 resamples cannot reach alpha after Holm over 14 metrics */
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r1, &d),
                     MP_EINVAL);
    o.nboot = 1000;
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r1, &d),
                     0);
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r2, &d),
                     0);
    struct mp_buf j1, j2;
    mp_buf_init(&j1, 0);
    mp_buf_init(&j2, 0);
    assert_int_equal(mp_bcmp_json(r1, &j1), 0);
    assert_int_equal(mp_bcmp_json(r2, &j2), 0);
    assert_string_equal(mp_buf_cstr(&j1), mp_buf_cstr(&j2));
    const struct mp_bcmp_pair *p = &r1->pairs[0];
    assert_int_equal(p->m[MP_BCMP_ITL_MEAN].verdict, MP_BCMP_SLOWER);
    assert_int_equal(p->m[MP_BCMP_TPOT_MEDIAN].verdict, MP_BCMP_SLOWER);
    assert_int_equal(p->m[MP_BCMP_TTFT_MEAN].verdict, MP_BCMP_WITHIN_NOISE);
    assert_true(fabs(p->m[MP_BCMP_ITL_MEAN].change_pct - 10) < 1e-9);
    assert_true(p->m[MP_BCMP_ITL_MEAN].ci_lo <= 10 && p->m[MP_BCMP_ITL_MEAN].ci_hi >= 10);
    /* the same duration and tokens: throughput does not move */
    assert_int_equal(p->m[MP_BCMP_OUT_TPS].verdict, MP_BCMP_WITHIN_NOISE);
    /* reversed: FASTER */
    struct mp_bcmp_result *r3 = NULL;
    assert_int_equal(mp_bcmp_compare(sb, (const struct mp_bcmp_side *const *)&sa, 1, &o, &r3, &d),
                     0);
    assert_int_equal(r3->pairs[0].m[MP_BCMP_ITL_MEAN].verdict, MP_BCMP_FASTER);
    /* writers */
    mp_buf_reset(&j1);
    assert_int_equal(mp_bcmp_text(r3, &j1), 0);
    assert_non_null(strstr(mp_buf_cstr(&j1), "FASTER"));
    mp_buf_reset(&j1);
    assert_int_equal(mp_bcmp_html(r3, &j1), 0);
    assert_non_null(strstr(mp_buf_cstr(&j1), "<polyline"));
    assert_non_null(strstr(mp_buf_cstr(&j1), "</html>"));
    mp_buf_fini(&j1);
    mp_buf_fini(&j2);
    mp_bcmp_result_free(r1);
    mp_bcmp_result_free(r2);
    mp_bcmp_result_free(r3);
    mp_bcmp_side_free(sa);
    mp_bcmp_side_free(sb);
}

static void test_workload_check(void **state)
{
    (void)state;
    struct mp_bcmp_run a, b;
    make_run(&a, 50, 100, 10, 5, 10);
    make_run(&b, 50, 100, 10, 5, 10);
    struct mp_bcmp_side *sa = side_of("a", &a, 1), *sb = side_of("b", &b, 1);
    assert_int_equal(mp_bcmp_side_add_field(sa, "model", "m", true, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sb, "model", "m", true, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sa, "request_rate", "8", true, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sb, "request_rate", "8.0", true, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sa, "mean_prompt_tokens", "100", true, true), 0);
    assert_int_equal(mp_bcmp_side_add_field(sb, "mean_prompt_tokens", "103", true, true), 0);
    assert_int_equal(mp_bcmp_side_add_field(sa, "engine.version", "0.9.0", false, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sb, "engine.version", "0.9.1", false, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sa, "dataset", "random", true, false), 0);
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    o.nboot = 1000;
    struct mp_bcmp_result *r = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    /* 8 == 8.0, 100 ~ 103, a version and a field one side lacks: listed only */
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r, &d),
                     0);
    assert_int_equal(r->pairs[0].n_workload_diffs, 0);
    assert_int_equal(r->pairs[0].n_diffs, 2);
    mp_bcmp_result_free(r);
    assert_int_equal(mp_bcmp_side_add_field(sa, "max_concurrency", "8", true, false), 0);
    assert_int_equal(mp_bcmp_side_add_field(sb, "max_concurrency", "16", true, false), 0);
    r = NULL;
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r, &d),
                     MP_EINVAL);
    assert_null(r);
    assert_string_equal(d.field, "max_concurrency");
    assert_non_null(strstr(d.msg, "'8'"));
    assert_non_null(strstr(d.msg, "'16'"));
    o.allow_different = true;
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r, &d),
                     0);
    assert_int_equal(r->pairs[0].n_workload_diffs, 1);
    assert_string_equal(r->pairs[0].diffs[0].name, "max_concurrency");
    mp_bcmp_result_free(r);
    mp_bcmp_side_free(sa);
    mp_bcmp_side_free(sb);
}

/* Repeats: runs that differ from each other make the interval wider than
 * one run alone says (the spread between runs enters it). */
static void test_repeats(void **state)
{
    (void)state;
    struct mp_bcmp_run a[3], b[3], one_a, one_b;
    for (int k = 0; k < 3; k++) {
        make_run(&a[k], 200, 100, 10 * (1 + 0.03 * k), 9, 30);
        make_run(&b[k], 200, 100, 10 * (1 + 0.03 * k), 9, 30);
    }
    make_run(&one_a, 200, 100, 10, 9, 30);
    make_run(&one_b, 200, 100, 10, 9, 30);
    struct mp_bcmp_side *sa = side_of("a", a, 3), *sb = side_of("b", b, 3);
    struct mp_bcmp_side *s1 = side_of("1", &one_a, 1), *s2 = side_of("2", &one_b, 1);
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    o.nboot = 1000;
    struct mp_bcmp_result *r = NULL, *q = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_bcmp_compare(sa, (const struct mp_bcmp_side *const *)&sb, 1, &o, &r, &d),
                     0);
    assert_int_equal(mp_bcmp_compare(s1, (const struct mp_bcmp_side *const *)&s2, 1, &o, &q, &d),
                     0);
    const struct mp_bcmp_metric *mr = &r->pairs[0].m[MP_BCMP_ITL_MEAN],
                                *mq = &q->pairs[0].m[MP_BCMP_ITL_MEAN];
    assert_true(mr->ci_hi - mr->ci_lo > 2 * (mq->ci_hi - mq->ci_lo));
    assert_int_equal(mr->verdict, MP_BCMP_WITHIN_NOISE);
    assert_true(fabs(mr->base_spread[0] - 10 * 1.1) < 0.2); /* mean gap of run 1 */
    assert_true(mr->base_spread[1] > mr->base_spread[0]);
    struct mp_buf t;
    mp_buf_init(&t, 0);
    assert_int_equal(mp_bcmp_text(r, &t), 0);
    assert_non_null(strstr(mp_buf_cstr(&t), "spread over runs"));
    mp_buf_fini(&t);
    mp_bcmp_result_free(r);
    mp_bcmp_result_free(q);
    mp_bcmp_side_free(sa);
    mp_bcmp_side_free(sb);
    mp_bcmp_side_free(s1);
    mp_bcmp_side_free(s2);
}

static void fixture(const char *name, char *out, size_t len)
{
    const char *fx = getenv("MP_FIXTURES");
    snprintf(out, len, "%s/bench_compare/%s", fx ? fx : "tests/fixtures", name);
}

/* Recorded calib_server runs: the JSONL and the --save-detailed arrays
 * give the same statistics; the verdicts of the recorded known change. */
static void test_fixtures(void **state)
{
    (void)state;
    char base[4096], same[4096], changed[4096], tmp[] = "/tmp/mp_bcmp_XXXXXX";
    fixture("base.json", base, sizeof(base));
    fixture("same.json", same, sizeof(same));
    fixture("changed.json", changed, sizeof(changed));
    struct mp_bcmp_side *sb = NULL, *ss = NULL, *sc = NULL, *sarr = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_bcmp_load(base, "base", &sb, &d), 0);
    assert_int_equal(sb->n_runs, 1);
    assert_int_equal(sb->runs[0].n_req, 150);
    assert_non_null(strstr(sb->runs[0].source, "base.requests.jsonl"));
    /* the arrays: base.json alone in a directory of its own */
    assert_non_null(mkdtemp(tmp));
    char copy[4200], cmd[9000];
    snprintf(copy, sizeof(copy), "%s/base.json", tmp);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", base, copy);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(mp_bcmp_load(copy, "arrays", &sarr, &d), 0);
    assert_non_null(strstr(sarr->runs[0].source, "base.json"));
    double m1[MP_BCMP_N_METRICS], m2[MP_BCMP_N_METRICS];
    assert_int_equal(mp_bcmp_run_metrics(&sb->runs[0], m1), 0);
    assert_int_equal(mp_bcmp_run_metrics(&sarr->runs[0], m2), 0);
    for (int m = 0; m < MP_BCMP_N_METRICS; m++)
        assert_true(fabs(m1[m] - m2[m]) <= 1e-6 * fabs(m1[m]) + 1e-9);
    /* as vLLM writes it: no latencies (E2EL = TTFT + gaps) */
    snprintf(cmd, sizeof(cmd),
             "python3 -c \"import json,sys; j=json.load(open(sys.argv[1])); j.pop('latencies'); "
             "json.dump(j, open(sys.argv[1], 'w'))\" '%s'",
             copy);
    assert_int_equal(system(cmd), 0);
    struct mp_bcmp_side *nolat = NULL;
    assert_int_equal(mp_bcmp_load(copy, "vllm", &nolat, &d), 0);
    assert_int_equal(mp_bcmp_run_metrics(&nolat->runs[0], m2), 0);
    for (int m = 0; m < MP_BCMP_N_METRICS; m++)
        assert_true(fabs(m1[m] - m2[m]) <= 1e-6 * fabs(m1[m]) + 1e-6);
    mp_bcmp_side_free(nolat);
    unlink(copy);
    rmdir(tmp);
    /* a list is one side with repeats */
    char list[8300];
    snprintf(list, sizeof(list), "%s,%s", base, same);
    struct mp_bcmp_side *two = NULL;
    assert_int_equal(mp_bcmp_load(list, NULL, &two, &d), 0);
    assert_int_equal(two->n_runs, 2);
    mp_bcmp_side_free(two);
    assert_int_equal(mp_bcmp_load(same, "same", &ss, &d), 0);
    assert_int_equal(mp_bcmp_load(changed, "changed", &sc, &d), 0);
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    struct mp_bcmp_result *r = NULL;
    const struct mp_bcmp_side *c[2] = {ss, sc};
    /* one run a side: run-to-run noise is unmeasured, and the +3 % ITL and
     * +5 % TTFT changes stay under the default floor */
    assert_int_equal(mp_bcmp_compare(sb, c, 2, &o, &r, &d), 0);
    assert_int_equal(r->pairs[1].noise, MP_BCMP_NOISE_WITHIN_RUN);
    assert_true(r->pairs[1].effect_pct == MP_BCMP_SINGLE_RUN_EFFECT_PCT);
    assert_int_equal(r->pairs[1].m[MP_BCMP_ITL_MEAN].verdict, MP_BCMP_WITHIN_NOISE);
    mp_bcmp_result_free(r);
    /* the within-run statistics themselves: no floor */
    o.single_run_effect_pct = 0;
    assert_int_equal(mp_bcmp_compare(sb, c, 2, &o, &r, &d), 0);
    for (int m = 0; m < MP_BCMP_N_METRICS; m++)
        assert_int_equal(r->pairs[0].m[m].verdict, MP_BCMP_WITHIN_NOISE);
    assert_int_equal(r->pairs[1].m[MP_BCMP_OUT_TPS].verdict, MP_BCMP_WITHIN_NOISE);
    assert_int_equal(r->pairs[1].m[MP_BCMP_REQ_PS].verdict, MP_BCMP_WITHIN_NOISE);
    static const int slower[] = {MP_BCMP_ITL_MEAN,  MP_BCMP_ITL_MEDIAN, MP_BCMP_TPOT_MEAN,
                                 MP_BCMP_E2EL_MEAN, MP_BCMP_E2EL_P99,   MP_BCMP_TTFT_MEAN};
    for (size_t i = 0; i < sizeof(slower) / sizeof(slower[0]); i++)
        assert_int_equal(r->pairs[1].m[slower[i]].verdict, MP_BCMP_SLOWER);
    assert_int_equal(r->pairs[1].n_faster, 0);
    mp_bcmp_result_free(r);
    /* a missing file names itself */
    struct mp_bcmp_side *none = NULL;
    assert_int_equal(mp_bcmp_load("/nonexistent/x.json", NULL, &none, &d), MP_ENOTFOUND);
    assert_string_equal(d.file, "/nonexistent/x.json");
    mp_bcmp_side_free(sb);
    mp_bcmp_side_free(ss);
    mp_bcmp_side_free(sc);
    mp_bcmp_side_free(sarr);
}

/* A few seeded calibration trials on synthetic runs (the 100-trial run
 * with its rates is bench_compare_calib): the known change found, the
 * identical setting left alone. Deterministic: fixed seeds throughout. */
static void test_calibration(void **state)
{
    (void)state;
    int detected = 0, clean = 0, trials = 4;
    for (int t = 0; t < trials; t++) {
        struct mp_bcmp_sim s;
        mp_bcmp_sim_default(&s);
        s.n_requests = 1000;
        s.out_tokens = 16;
        s.ttft_ms[0] = 45; /* the spread of the recorded fixtures */
        s.ttft_ms[1] = 55;
        s.arrival_seed = 77 + (uint64_t)t;
        struct mp_bcmp_side *sd[3];
        for (int k = 0; k < 3; k++) {
            struct mp_bcmp_run run;
            s.server_seed = 10 * (uint64_t)t + (uint64_t)k;
            s.scale_ttft = k == 2 ? 1.05 : 1;
            s.scale_itl = k == 2 ? 1.03 : 1;
            assert_int_equal(mp_bcmp_sim_run(&s, &run), 0);
            sd[k] = side_of("x", &run, 1);
        }
        struct mp_bcmp_opts o;
        mp_bcmp_opts_default(&o);
        o.nboot = 1000;
        o.seed = (uint64_t)t;
        o.single_run_effect_pct = 0; /* the within-run statistics (no drift here) */
        struct mp_bcmp_result *r = NULL;
        struct mp_diag d;
        mp_diag_clear(&d);
        assert_int_equal(
            mp_bcmp_compare(sd[0], (const struct mp_bcmp_side *const *)sd + 1, 2, &o, &r, &d), 0);
        bool same_ok = true, changed_ok = true;
        for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
            same_ok &= r->pairs[0].m[m].verdict == MP_BCMP_WITHIN_NOISE;
            changed_ok &= r->pairs[1].m[m].verdict ==
                          (mp_bcmp_metric_higher_better(m) ? MP_BCMP_WITHIN_NOISE : MP_BCMP_SLOWER);
        }
        clean += same_ok;
        detected += changed_ok;
        mp_bcmp_result_free(r);
        for (int k = 0; k < 3; k++)
            mp_bcmp_side_free(sd[k]);
    }
    assert_int_equal(clean, trials);
    assert_int_equal(detected, trials);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_metrics),    cmocka_unit_test(test_deterministic_and_verdicts),
        cmocka_unit_test(test_workload_check), cmocka_unit_test(test_repeats),
        cmocka_unit_test(test_fixtures),       cmocka_unit_test(test_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
