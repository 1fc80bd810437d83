/* Synthetic benchmark runs with the timing model of the calibration server
 * (tests/calib/calib_server.c): uniform TTFTs and gaps drawn per request
 * from a seed, an open-loop Poisson arrival schedule, and a client that sees
 * each event after a small random delivery delay with rare longer stalls.
 * `bench/bench_compare_calib` and the unit tests run hundreds of seeded
 * comparisons on them in seconds, where the real server would take hours;
 * the bench also runs a few trials against the real server to show the two
 * agree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/bench_compare.h>
#include <magpie/stats.h>

void mp_bcmp_sim_default(struct mp_bcmp_sim *s)
{
    memset(s, 0, sizeof(*s));
    s->n_requests = 1000;
    s->out_tokens = 32;
    s->ttft_ms[0] = 40;
    s->ttft_ms[1] = 60;
    s->itl_ms[0] = 8;
    s->itl_ms[1] = 12;
    s->scale_ttft = s->scale_itl = 1;
    s->rate = 40;
    s->jitter_ms = 0.05;
    s->spike_prob = 0.005;
    s->spike_ms = 4;
    s->arrival_seed = 1;
    s->server_seed = 1;
}

static double unif(struct mp_rng *r, const double range[2])
{
    return range[0] + (range[1] - range[0]) * mp_rng_uniform(r);
}

static double delay(struct mp_rng *r, const struct mp_bcmp_sim *s)
{
    double d = s->jitter_ms - s->jitter_ms * log(1 - mp_rng_uniform(r));
    if (mp_rng_uniform(r) < s->spike_prob)
        d += s->spike_ms * mp_rng_uniform(r);
    return d;
}

int mp_bcmp_sim_run(const struct mp_bcmp_sim *s, struct mp_bcmp_run *out)
{
    size_t n = s->n_requests;
    int k = s->out_tokens > 1 ? s->out_tokens : 1;
    if (!n)
        return MP_EINVAL;
    double *ttft = mp_malloc(n * sizeof(double)), *e2el = mp_malloc(n * sizeof(double));
    double *itl = mp_malloc(n * (size_t)k * sizeof(double));
    int32_t *outt = mp_malloc(n * sizeof(int32_t));
    uint32_t *off = mp_malloc(n * sizeof(uint32_t)), *nitl = mp_malloc(n * sizeof(uint32_t));
    int rc = MP_ENOMEM;
    if (!ttft || !e2el || !itl || !outt || !off || !nitl)
        goto out;
    struct mp_rng arr, srv;
    mp_rng_seed(&arr, s->arrival_seed);
    mp_rng_seed(&srv, s->server_seed ^ 0x5bd1e995ULL);
    double t = 0, end = 0;
    for (size_t i = 0; i < n; i++) {
        t += -log(1 - mp_rng_uniform(&arr)) / s->rate; /* the request's start, s */
        double due = unif(&srv, s->ttft_ms) * s->scale_ttft, seen = due + delay(&srv, s);
        ttft[i] = seen;
        off[i] = (uint32_t)(i * (size_t)k);
        nitl[i] = (uint32_t)(k - 1);
        outt[i] = k;
        for (int j = 1; j < k; j++) {
            due += unif(&srv, s->itl_ms) * s->scale_itl;
            double now = due + delay(&srv, s);
            if (now < seen) /* one connection delivers in order */
                now = seen;
            itl[i * (size_t)k + (size_t)j - 1] = now - seen;
            seen = now;
        }
        e2el[i] = seen;
        end = fmax(end, t + seen / 1e3);
    }
    rc = mp_bcmp_run_build(ttft, e2el, outt, NULL, itl, off, nitl, n, 0, end, out);
out:
    free(ttft);
    free(e2el);
    free(itl);
    free(outt);
    free(off);
    free(nitl);
    return rc;
}
