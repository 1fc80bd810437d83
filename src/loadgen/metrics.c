/* Serving metrics, defined exactly as vllm/benchmarks/serve.py computes them
 * (calculate_metrics), from the per-request records. docs/metrics.md has the
 * definitions; the comments here say where magpie adds to them.
 *
 * Statistics follow numpy: mean, median, population std (ddof 0) and
 * linear-interpolation percentiles; an empty list gives 0, as vLLM's
 * `np.mean(x or 0)` does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/loadgen.h>
#include <magpie/stats.h>

#include "loadgen_int.h"

static const char *const METRIC_NAMES[MP_LOADGEN_N_METRICS] = {
    "ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue",
};

void mp_loadgen_metrics_opts_default(struct mp_loadgen_metrics_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->pcts[0] = 99;
    o->n_pcts = 1;
    o->selected = (1u << MP_LOADGEN_TTFT) | (1u << MP_LOADGEN_TPOT) | (1u << MP_LOADGEN_ITL);
}

int mp_loadgen_parse_metric_list(const char *s, unsigned *mask, struct mp_diag *d)
{
    unsigned m = 0;
    const char *p = s;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        int k;
        for (k = 0; k < MP_LOADGEN_N_METRICS; k++)
            if (strlen(METRIC_NAMES[k]) == n && strncmp(p, METRIC_NAMES[k], n) == 0)
                break;
        if (k == MP_LOADGEN_N_METRICS) {
            mp_diag_set(d, MP_EINVAL,
                        "unknown metric '%.*s' (allowed: ttft, tpot, itl, e2el, "
                        "client_queue_time, e2el_including_client_queue)",
                        (int)n, p);
            mp_diag_set_field(d, "percentile-metrics");
            return MP_EINVAL;
        }
        m |= 1u << k;
        p = c ? c + 1 : p + n;
    }
    *mask = m;
    return 0;
}

int mp_loadgen_parse_percentiles(const char *s, struct mp_loadgen_metrics_opts *o,
                                 struct mp_diag *d)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(v >= 0 && v <= 100) ||
            n == MP_LOADGEN_MAX_PCTS) {
            mp_diag_set(d, MP_EINVAL,
                        "--metric-percentiles expects up to %d comma-separated numbers in "
                        "[0, 100], not '%s'",
                        MP_LOADGEN_MAX_PCTS, s);
            mp_diag_set_field(d, "metric-percentiles");
            return MP_EINVAL;
        }
        o->pcts[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0)
        return mp_diag_set(d, MP_EINVAL, "--metric-percentiles is empty");
    o->n_pcts = n;
    return 0;
}

int mp_loadgen_parse_goodput(const char *s, struct mp_loadgen_metrics_opts *o, struct mp_diag *d)
{
    static const char *const keys[3] = {"ttft", "tpot", "e2el"};
    const char *c = strchr(s, ':');
    char *end = NULL;
    double v = c ? strtod(c + 1, &end) : NAN;
    int k = -1;
    for (int i = 0; c && i < 3; i++)
        if ((size_t)(c - s) == strlen(keys[i]) && strncmp(s, keys[i], (size_t)(c - s)) == 0)
            k = i;
    if (!c || k < 0 || end == c + 1 || *end || !(v >= 0)) {
        mp_diag_set(d, MP_EINVAL,
                    "--goodput expects KEY:VALUE with KEY ttft, tpot or e2el and a "
                    "non-negative number of ms, not '%s'",
                    s);
        mp_diag_set_field(d, "goodput");
        return MP_EINVAL;
    }
    o->slo_set[k] = true;
    o->slo_ms[k] = v;
    return 0;
}

double mp_loadgen_percentile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    double rank = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(rank), hi = lo + 1 < n ? lo + 1 : lo;
    double t = rank - (double)lo, a = sorted[lo], b = sorted[hi];
    /* numpy's _lerp, which is exact at both ends */
    return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

static void stat_of(double *v, size_t n, const struct mp_loadgen_metrics_opts *o,
                    struct mp_loadgen_stat *st)
{
    memset(st, 0, sizeof(*st));
    st->n = n;
    if (n == 0)
        return;
    qsort(v, n, sizeof(*v), mp_stats_cmp_double);
    double ss;
    st->mean = mp_stats_mean_ss(v, n, &ss);
    st->std = sqrt(ss / (double)n);
    st->median = mp_loadgen_percentile(v, n, 50);
    st->min = v[0];
    st->max = v[n - 1];
    st->p99 = mp_loadgen_percentile(v, n, 99);
    for (int k = 0; k < o->n_pcts; k++)
        st->pct[k] = mp_loadgen_percentile(v, n, o->pcts[k]);
}

struct edge {
    uint64_t t;
    int delta;
};

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->delta - y->delta; /* departures (-1) first on ties: half-open intervals */
}

static int32_t out_tokens(const struct mp_loadgen_record *r)
{
    /* usage.completion_tokens; vLLM falls back to a tokenizer count when it is
     * missing or 0; without a tokenizer we count token events (docs). */
    return r->output_tokens > 0 ? r->output_tokens : (int32_t)r->n_events;
}

int mp_loadgen_metrics_compute(const struct mp_loadgen_result *r,
                               const struct mp_loadgen_metrics_opts *o,
                               struct mp_loadgen_metrics *m)
{
    memset(m, 0, sizeof(*m));
    m->opts = *o;
    m->duration_s = r->duration_s;
    size_t n_itl = 0, n_itl_tok = 0, ok = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success)
            continue;
        ok++;
        n_itl += x->n_events ? x->n_events - 1 : 0;
        for (uint32_t j = 1; j < x->n_events; j++)
            n_itl_tok += x->event_tokens && x->event_tokens[j] > 1 ? x->event_tokens[j] : 1;
    }
    double *v[MP_LOADGEN_N_METRICS] = {0}, *all_tpot = NULL, *itl_tok = NULL;
    struct edge *edges = NULL;
    double *buckets = NULL;
    int rc = MP_ENOMEM;
    size_t cnt[MP_LOADGEN_N_METRICS] = {0}, n_tok = 0;
    for (int k = 0; k < MP_LOADGEN_N_METRICS; k++)
        if (!(v[k] = malloc(((k == MP_LOADGEN_ITL ? n_itl : ok) + 1) * sizeof(double))))
            goto out;
    all_tpot = malloc((ok + 1) * sizeof(double));
    itl_tok = malloc((n_itl_tok + 1) * sizeof(double));
    edges = malloc((2 * ok + 1) * sizeof(*edges));
    if (!all_tpot || !itl_tok || !edges)
        goto out;
    bool capped = r->max_concurrency > 0, finite_rate = !isinf(r->request_rate);
    uint64_t min_start = UINT64_MAX, max_end = 0;
    double sum_e2el_s = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success) {
            m->failed++;
            continue;
        }
        m->completed++;
        int32_t out = out_tokens(x);
        m->total_input += x->prompt_len;
        m->total_output += out;
        if (!x->usage_seen)
            m->usage_missing++;
        if (x->usage_seen && x->prompt_len != x->expected_prompt_len)
            m->prompt_mismatch++;
        uint64_t first = x->event_ns[0], last = x->event_ns[x->n_events - 1];
        double ttft = (double)(first - x->start_ns) / 1e6,
               e2el = (double)(last - x->start_ns) / 1e6;
        v[MP_LOADGEN_TTFT][cnt[MP_LOADGEN_TTFT]++] = ttft;
        v[MP_LOADGEN_E2EL][cnt[MP_LOADGEN_E2EL]++] = e2el;
        double tpot = 0;
        if (out > 1) {
            tpot = (e2el - ttft) / (double)(out - 1);
            v[MP_LOADGEN_TPOT][cnt[MP_LOADGEN_TPOT]++] = tpot;
        }
        all_tpot[m->completed - 1] = tpot; /* 0 for one-token outputs, for goodput */
        for (uint32_t j = 1; j < x->n_events; j++) {
            double gap = (double)(x->event_ns[j] - x->event_ns[j - 1]) / 1e6;
            v[MP_LOADGEN_ITL][cnt[MP_LOADGEN_ITL]++] = gap;
            int k = x->event_tokens && x->event_tokens[j] > 1 ? x->event_tokens[j] : 1;
            if (k > 1)
                m->multi_token_events++;
            for (int q = 0; q < k; q++)
                itl_tok[n_tok++] = gap / k;
        }
        double queue =
            x->start_ns > x->arrival_ns ? (double)(x->start_ns - x->arrival_ns) / 1e6 : 0;
        v[MP_LOADGEN_CLIENT_QUEUE][cnt[MP_LOADGEN_CLIENT_QUEUE]++] = queue;
        v[MP_LOADGEN_E2EL_INCL_QUEUE][cnt[MP_LOADGEN_E2EL_INCL_QUEUE]++] = e2el + queue;
        bool good = true;
        if (o->slo_set[0] && !(ttft <= o->slo_ms[0]))
            good = false;
        if (o->slo_set[1] && !(tpot <= o->slo_ms[1]))
            good = false;
        if (o->slo_set[2] && !(e2el <= o->slo_ms[2]))
            good = false;
        if (good)
            m->good++;
        if (x->start_ns < min_start)
            min_start = x->start_ns;
        if (last > max_end)
            max_end = last;
        edges[2 * (m->completed - 1)] = (struct edge){x->start_ns, 1};
        edges[2 * (m->completed - 1) + 1] = (struct edge){last, -1};
        sum_e2el_s += e2el / 1e3;
    }
    double dur = r->duration_s > 0 ? r->duration_s : 1e-9;
    m->request_throughput = (double)m->completed / dur;
    m->output_throughput = (double)m->total_output / dur;
    m->total_token_throughput = (double)(m->total_input + m->total_output) / dur;
    bool any_slo = o->slo_set[0] || o->slo_set[1] || o->slo_set[2];
    m->request_goodput = any_slo ? (double)m->good / dur : NAN;
    if (!any_slo)
        m->good = 0;
    m->mean_concurrency = sum_e2el_s / dur;
    for (int k = 0; k < MP_LOADGEN_N_METRICS; k++)
        stat_of(v[k], cnt[k], o, &m->stat[k]);
    stat_of(itl_tok, n_tok, o, &m->itl_per_token);
    for (int k = 0; k <= MP_LOADGEN_E2EL; k++)
        m->have[k] = true;
    m->have[MP_LOADGEN_CLIENT_QUEUE] = capped;
    m->have[MP_LOADGEN_E2EL_INCL_QUEUE] = capped && finite_rate;
    if (m->completed) {
        /* peak output tokens/s: 1-s buckets from the earliest start, counting
         * token events (vLLM reconstructs them as start + ttft + cumsum(itl)) */
        size_t nb = (size_t)ceil((double)(max_end - min_start) / 1e9) + 1;
        buckets = calloc(nb, sizeof(double));
        if (!buckets)
            goto out;
        loadgen_event_buckets(r, min_start, buckets, nb, false);
        for (size_t b = 0; b < nb; b++)
            if (buckets[b] > m->max_output_tokens_per_s)
                m->max_output_tokens_per_s = buckets[b];
        qsort(edges, 2 * m->completed, sizeof(*edges), cmp_edge);
        int cur = 0;
        for (size_t i = 0; i < 2 * m->completed; i++) {
            cur += edges[i].delta;
            if (cur > m->max_concurrent_requests)
                m->max_concurrent_requests = cur;
        }
    }
    rc = 0;
out:
    for (int k = 0; k < MP_LOADGEN_N_METRICS; k++)
        free(v[k]);
    free(all_tpot);
    free(itl_tok);
    free(edges);
    free(buckets);
    return rc;
}

void loadgen_event_buckets(const struct mp_loadgen_result *r, uint64_t origin_ns, double *b,
                           size_t nb, bool tokens)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (!x->success)
            continue;
        for (uint32_t j = 0; j < x->n_events; j++) {
            size_t k = (size_t)((double)(x->event_ns[j] - origin_ns) / 1e9);
            if (k < nb)
                b[k] += tokens && x->event_tokens && x->event_tokens[j] ? x->event_tokens[j] : 1;
        }
    }
}

const char *mp_loadgen_metric_name(int k)
{
    return k >= 0 && k < MP_LOADGEN_N_METRICS ? METRIC_NAMES[k] : "";
}
