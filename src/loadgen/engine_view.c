/* The engine's own view over several runs: what their scrapes of its
 * /metrics (magpie.engine_metrics of each result JSON) add up to, for a
 * sweep point and for a side of `benchmark compare`. */
#include <math.h>

#include "loadgen_int.h"

static double jnumber(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void loadgen_engine_init(struct loadgen_engine_acc *a, struct mp_bcmp_engine *e)
{
    *a = (struct loadgen_engine_acc){.e = e};
    if (e)
        *e = (struct mp_bcmp_engine){false, NAN, NAN, NAN, NAN, NAN, NAN};
}

static void peak(double *at, double v)
{
    if (!isnan(v))
        *at = isnan(*at) ? v : fmax(*at, v);
}

void loadgen_engine_add(struct loadgen_engine_acc *a, const json_t *em)
{
    struct mp_bcmp_engine *e = a ? a->e : NULL;
    const json_t *series = json_object_get(em, "series"), *delta = json_object_get(em, "delta");
    if (!e || !json_array_size(series))
        return;
    e->have = true;
    for (size_t k = 0; k < json_array_size(series); k++) {
        const json_t *s = json_array_get(series, k);
        double wait = jnumber(json_object_get(s, "num_requests_waiting"));
        peak(&e->running_peak, jnumber(json_object_get(s, "num_requests_running")));
        peak(&e->waiting_peak, wait);
        peak(&e->kv_peak, jnumber(json_object_get(s, "kv_cache_usage")));
        if (!isnan(wait)) {
            a->wait_sum += wait;
            a->wait_n++;
        }
    }
    double hr = jnumber(json_object_get(delta, "prefix_cache_hit_rate"));
    if (isnan(hr))
        hr = jnumber(json_object_get(em, "prefix_cache_hit_rate"));
    if (!isnan(hr)) {
        a->hit_sum += hr;
        a->hit_n++;
    }
    double pre = jnumber(json_object_get(delta, "num_preemptions"));
    if (!isnan(pre))
        e->preemptions = isnan(e->preemptions) ? pre : e->preemptions + pre;
}

void loadgen_engine_end(struct loadgen_engine_acc *a)
{
    if (!a || !a->e)
        return;
    a->e->hit_rate = a->hit_n ? a->hit_sum / (double)a->hit_n : NAN;
    a->e->waiting_mean = a->wait_n ? a->wait_sum / (double)a->wait_n : NAN;
}
