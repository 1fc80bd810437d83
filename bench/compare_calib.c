/* bench_compare_calib: calibration of `magpie benchmark compare` on seeded
 * synthetic runs with the calibration server's timing model
 * (mp_bcmp_sim_run, src/loadgen/compare_sim.c).
 *
 * Each trial draws one arrival schedule (the workload) and three runs of
 * it with their own server noise: a baseline, the same setting again, and a
 * known change (TTFT x 1.05, every gap x 1.03, so ITL, TPOT and E2EL rise
 * 3 % or more while throughput, fixed by the open-loop schedule, does not
 * move). It prints how often each verdict was right: detection (all twelve
 * latency metrics SLOWER, both throughputs WITHIN NOISE) and false positives
 * (any verdict other than WITHIN NOISE for the identical setting).
 *
 * usage: bench_compare_calib [--trials N] [--nboot B] [--requests N]
 *                            [--tokens K] [--min-effect PCT] [--json]
 * exit: 0 when both pass the bar (>= 95 % each), 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/bench_compare.h>

static int one_side(const struct mp_bcmp_sim *s, const char *label, struct mp_bcmp_side **out)
{
    struct mp_bcmp_run *run = calloc(1, sizeof(*run));
    if (!run || mp_bcmp_sim_run(s, run)) {
        free(run);
        return 1;
    }
    return mp_bcmp_side_from_runs(label, run, 1, out) ? 1 : 0;
}

int main(int argc, char **argv)
{
    int trials = 100;
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    /* the within-run statistics themselves: the synthetic runs have no drift
     * between them, so the single-run floor is off unless asked for */
    o.single_run_effect_pct = 0;
    struct mp_bcmp_sim sim;
    mp_bcmp_sim_default(&sim);
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--trials") && v)
            trials = atoi(argv[++i]);
        else if (!strcmp(a, "--nboot") && v)
            o.nboot = atoi(argv[++i]);
        else if (!strcmp(a, "--requests") && v)
            sim.n_requests = (size_t)atol(argv[++i]);
        else if (!strcmp(a, "--tokens") && v)
            sim.out_tokens = atoi(argv[++i]);
        else if (!strcmp(a, "--min-effect") && v)
            o.min_effect_pct = atof(argv[++i]);
        else if (!strcmp(a, "--single-run-effect") && v)
            o.single_run_effect_pct = atof(argv[++i]);
        else if (!strcmp(a, "--json"))
            json = true;
        else {
            fprintf(stderr, "usage: bench_compare_calib [--trials N] [--nboot B] [--requests N] "
                            "[--tokens K] [--min-effect PCT] [--single-run-effect PCT] [--json]\n");
            return 2;
        }
    }
    int detected = 0, clean = 0;
    int right_changed[MP_BCMP_N_METRICS] = {0}, right_same[MP_BCMP_N_METRICS] = {0};
    for (int t = 0; t < trials; t++) {
        struct mp_bcmp_side *sd[3] = {0};
        struct mp_bcmp_sim s = sim;
        s.arrival_seed = 1000 + (uint64_t)t;
        int bad = 0;
        for (int k = 0; k < 3; k++) {
            s.server_seed = 3 * (uint64_t)t + (uint64_t)k + 1;
            s.scale_ttft = k == 2 ? 1.05 : 1;
            s.scale_itl = k == 2 ? 1.03 : 1;
            bad |= one_side(&s, k == 0 ? "base" : k == 1 ? "same" : "changed", &sd[k]);
        }
        struct mp_bcmp_result *r = NULL;
        struct mp_diag d;
        mp_diag_clear(&d);
        o.seed = (uint64_t)t;
        if (bad ||
            mp_bcmp_compare(sd[0], (const struct mp_bcmp_side *const *)sd + 1, 2, &o, &r, &d)) {
            fprintf(stderr, "bench_compare_calib: trial %d failed: %s\n", t, d.msg);
            return 2;
        }
        bool all_same = true, all_changed = true;
        for (int m = 0; m < MP_BCMP_N_METRICS; m++) {
            bool thr = mp_bcmp_metric_higher_better(m);
            enum mp_bcmp_verdict want = thr ? MP_BCMP_WITHIN_NOISE : MP_BCMP_SLOWER;
            bool ok_same = r->pairs[0].m[m].verdict == MP_BCMP_WITHIN_NOISE;
            bool ok_changed = r->pairs[1].m[m].verdict == want;
            right_same[m] += ok_same;
            right_changed[m] += ok_changed;
            all_same &= ok_same;
            all_changed &= ok_changed;
        }
        clean += all_same;
        detected += all_changed;
        mp_bcmp_result_free(r);
        for (int k = 0; k < 3; k++)
            mp_bcmp_side_free(sd[k]);
    }
    double det = 100.0 * detected / trials, fpr = 100.0 * (trials - clean) / trials;
    if (json) {
        printf("{\"trials\": %d, \"requests\": %zu, \"tokens\": %d, \"nboot\": %d, "
               "\"min_effect_pct\": %g, \"detection_rate_pct\": %.1f, "
               "\"false_positive_rate_pct\": %.1f, \"per_metric\": {",
               trials, sim.n_requests, sim.out_tokens, o.nboot, o.min_effect_pct, det, fpr);
        for (int m = 0; m < MP_BCMP_N_METRICS; m++)
            printf("%s\"%s\": {\"changed_right\": %d, \"same_within_noise\": %d}", m ? ", " : "",
                   mp_bcmp_metric_name(m), right_changed[m], right_same[m]);
        printf("}}\n");
    } else {
        printf("benchmark compare calibration: %d seeded trials (synthetic runs with the "
               "calib_server timing model)\n",
               trials);
        printf("  %zu requests x %d tokens at %.0f req/s, TTFT U[%g, %g] ms, ITL U[%g, %g] ms; "
               "%d resamples, min effect %g %%\n",
               sim.n_requests, sim.out_tokens, sim.rate, sim.ttft_ms[0], sim.ttft_ms[1],
               sim.itl_ms[0], sim.itl_ms[1], o.nboot, o.min_effect_pct);
        printf("  known change (TTFT +5 %%, ITL +3 %%): every metric right in %d of %d trials "
               "(detection rate %.1f %%)\n",
               detected, trials, det);
        printf("  identical setting: every metric WITHIN NOISE in %d of %d trials (false-positive "
               "rate %.1f %%)\n",
               clean, trials, fpr);
        printf("  %-18s %16s %16s\n", "metric", "change: right", "same: in noise");
        for (int m = 0; m < MP_BCMP_N_METRICS; m++)
            printf("  %-18s %12d/%-3d %12d/%-3d\n", mp_bcmp_metric_label(m), right_changed[m],
                   trials, right_same[m], trials);
    }
    return detected * 100 >= 95 * trials && clean * 100 >= 95 * trials ? 0 : 1;
}
