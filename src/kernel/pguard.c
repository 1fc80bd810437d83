/* The harness's power guard, the same as the Python runner's (Timer in
 * runtime/magpie_runner.py): before each sample a one-thread spin of a
 * known number of SM clock cycles is timed with events, which gives the
 * clock the sample starts at. A sample that starts below 96 % of the
 * unthrottled clock ran under a power or thermal cap: it is discarded and
 * the spin grows into a cool-down of 0.5, 1, 2, then 4 times the kernel's
 * own time, so the GPU's average power stays under its cap and the kept
 * samples run at the full clock (NVBench discards throttled samples the
 * same way). Capped at every ratio: the cap is sustained and the samples
 * are kept, flagged. Measured on an H200 with the runner: a power-capped
 * 8192^3 bf16 matmul went from 0.7-3.4 % to 0.13 % run-to-run spread
 * (bench/kernel_timing.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/stats.h>

#include "kernel_int.h"

#define PG_THROTTLE 0.96
#define PG_MIN_PROBE_US 50.0
#define PG_MAX_SPIN_US 50000.0
#define PG_HOLD_US 30.0 /* covers the host's enqueue of the probe and its events */

static const double pg_ratios[] = {0.5, 1.0, 2.0, 4.0};
#define PG_NRATIOS (sizeof(pg_ratios) / sizeof(pg_ratios[0]))

static int spin_timed_us(struct hdev *dv, uint64_t cycles, double *us)
{
    double ms = 0;
    /* ~100 us untimed first: the host has queued the timed spin when it ends */
    if (dv->ops->spin(dv, 200000, false) || dv->ops->spin(dv, cycles, true) ||
        dv->ops->spin_ms(dv, &ms))
        return MP_EIO;
    *us = ms * 1000;
    return 0;
}

int kern_pguard_setup(struct hdev *dv, struct kern_pguard *g, bool enabled, double fixed_ratio)
{
    memset(g, 0, sizeof(*g));
    if (!enabled || !dv->ops->spin || !dv->ops->spin_ms || getenv("MAGPIE_NO_POWER_GUARD"))
        return 0;
    /* a ~20 ms spin lets a controller still capping the clock for the
     * correctness runs let go; then the clock and the per-spin overhead
     * from two spin lengths, t = cycles / f + o */
    if (dv->ops->spin(dv, 40000000, false))
        return MP_EIO;
    double tl = INFINITY, ts = INFINITY, us = 0;
    for (int i = 0; i < 3; i++) {
        if (spin_timed_us(dv, 2000000, &us))
            return MP_EIO;
        tl = us < tl ? us : tl;
    }
    for (int i = 0; i < 3; i++) {
        if (spin_timed_us(dv, 200000, &us))
            return MP_EIO;
        ts = us < ts ? us : ts;
    }
    if (!(tl > ts && ts > 0))
        return 0;
    g->cyc_per_us = 1800000.0 / (tl - ts);
    g->overhead_us = ts - 200000.0 / g->cyc_per_us;
    if (g->overhead_us < 0)
        g->overhead_us = 0;
    g->ref_mhz = g->cyc_per_us;
    g->on = true;
    if (fixed_ratio >= 0) {
        g->ratio = fixed_ratio;
        g->fixed = true;
    }
    return 0;
}

int kern_pguard_pre(struct hdev *dv, struct kern_pguard *g, double busy_us)
{
    if (!g->on)
        return 0;
    double hold = PG_HOLD_US;
    if (g->recover) { /* the ratio just grew: let the power controller catch up */
        hold += 20000;
        g->recover = false;
    }
    double probe = g->ratio * busy_us;
    probe = probe < PG_MIN_PROBE_US ? PG_MIN_PROBE_US : probe;
    probe = probe > PG_MAX_SPIN_US ? PG_MAX_SPIN_US : probe;
    g->probe = (uint64_t)(probe * g->cyc_per_us);
    if (dv->ops->spin(dv, (uint64_t)(hold * g->cyc_per_us), false) ||
        dv->ops->spin(dv, g->probe, true))
        return MP_EIO;
    return 0;
}

int kern_pguard_post(struct hdev *dv, struct kern_pguard *g)
{
    g->last_mhz = 0;
    if (!g->on)
        return 0;
    double ms = 0;
    if (dv->ops->spin_ms(dv, &ms))
        return MP_EIO;
    double us = ms * 1000 - g->overhead_us;
    g->last_mhz = us > 0 ? (double)g->probe / us : 0;
    return 0;
}

/* One low probe alone is taken for a host delay (the GPU idled before the
 * probe started: seen on the H200 about once in 4000 samples with the clock
 * at 1980 MHz throughout) and its sample kept; a second in a row confirms
 * the cap and the first one's sample is dropped too (drop_prev). */
bool kern_pguard_judge(struct kern_pguard *g)
{
    g->drop_prev = false;
    if (!g->on || g->last_mhz <= 0)
        return true;
    bool capped = g->last_mhz < PG_THROTTLE * g->ref_mhz;
    g->streak = capped ? g->streak + 1 : 0;
    if (!capped) { /* a calibration taken under a cap: follow the clock seen */
        g->recent[g->nrecent++] = g->last_mhz;
        if (g->nrecent == 16) {
            qsort(g->recent, 16, sizeof(double), mp_stats_cmp_double);
            if (g->recent[8] > 1.02 * g->ref_mhz) /* a median: noise cannot lift it */
                g->ref_mhz = g->recent[8];
            g->nrecent = 0;
        }
    }
    if (g->sustained)
        return true;
    bool top = g->fixed || g->ratio >= pg_ratios[PG_NRATIOS - 1];
    if (top) {
        g->at_max[g->at_pos] = capped;
        g->at_pos = (g->at_pos + 1) % 64;
        if (g->nat < 64)
            g->nat++;
        int nc = 0;
        for (int i = 0; i < g->nat; i++)
            nc += g->at_max[i];
        if (g->nat >= 32 && 2 * nc > g->nat) {
            g->sustained = true; /* capped even with the cool-down: keep what is measured */
            return true;
        }
    }
    if (g->streak < 2)
        return true;
    int confirmed = 1;
    if (g->streak == 2 && g->pending) {
        g->drop_prev = true;
        confirmed = 2;
    }
    g->discarded += confirmed;
    g->since_step += confirmed;
    if (!top && g->since_step >= 4) {
        size_t i = 0;
        while (i + 1 < PG_NRATIOS && pg_ratios[i] <= g->ratio)
            i++;
        g->ratio = pg_ratios[i];
        g->since_step = 0;
        g->recover = true;
    }
    return false;
}

json_t *kern_pguard_json(const struct kern_pguard *g, const double *clocks, int n)
{
    json_t *o = json_object();
    json_object_set_new(o, "enabled", json_boolean(g->on));
    json_object_set_new(o, "reference_clock_mhz", json_real(round(g->ref_mhz * 10) / 10));
    json_object_set_new(o, "cool_ratio", json_real(g->ratio));
    json_object_set_new(o, "fixed_ratio", json_boolean(g->fixed));
    json_object_set_new(o, "discarded_throttled", json_integer(g->discarded));
    json_object_set_new(o, "sustained_cap", json_boolean(g->sustained));
    if (n > 0 && clocks) {
        double *c = mp_malloc((size_t)n * sizeof(double));
        if (c) {
            memcpy(c, clocks, (size_t)n * sizeof(double));
            qsort(c, (size_t)n, sizeof(double), mp_stats_cmp_double);
            json_object_set_new(o, "sample_clock_mhz_median", json_real(c[n / 2]));
            free(c);
        }
    }
    return o;
}
