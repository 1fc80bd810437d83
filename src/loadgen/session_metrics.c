/* Per-turn and per-session figures of a run with sessions (multi-turn chat,
 * traces with session ids; docs/workloads.md), for the result JSON, the
 * terminal summary and the HTML page. A turn's figures are those of the
 * requests that were that turn of their session; a session's duration runs
 * from its first turn's start to its last turn's last token, over the
 * sessions whose every turn succeeded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>
#include <magpie/stats.h>

#include "loadgen_int.h"

#define MAX_TURNS_SHOWN 64 /* later turns are pooled into the last row */

static double pct_of(const double *v, size_t n, double p)
{
    return mp_loadgen_percentile(v, n, p);
}

static double mean_of(const double *v, size_t n)
{
    double ss;
    return n ? mp_stats_mean_ss(v, n, &ss) : 0;
}

/* the requests that were turn k (k == MAX_TURNS_SHOWN - 1: that and later) */
static size_t turn_values(const struct mp_loadgen_result *r, int k, double *ttft, double *e2el,
                          double *plen, size_t *n_req)
{
    size_t n = 0;
    *n_req = 0;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        int t = x->turn < MAX_TURNS_SHOWN - 1 ? x->turn : MAX_TURNS_SHOWN - 1;
        if (t != k)
            continue;
        (*n_req)++;
        if (!x->success)
            continue;
        ttft[n] = (double)(x->event_ns[0] - x->start_ns) / 1e6;
        e2el[n] = (double)(x->event_ns[x->n_events - 1] - x->start_ns) / 1e6;
        plen[n++] = x->prompt_len;
    }
    qsort(ttft, n, sizeof(double), mp_stats_cmp_double);
    qsort(e2el, n, sizeof(double), mp_stats_cmp_double);
    return n;
}

int loadgen_sessions_stats(const struct mp_loadgen_result *r, struct loadgen_sessions *s)
{
    memset(s, 0, sizeof(*s));
    int32_t max_sess = -1, max_turn = -1;
    for (size_t i = 0; i < r->n; i++) {
        if (r->recs[i].session > max_sess)
            max_sess = r->recs[i].session;
        if (r->recs[i].turn > max_turn)
            max_turn = r->recs[i].turn;
    }
    size_t ns = (size_t)max_sess + 1; /* max_sess >= -1 */
    s->n_turns = max_turn + 1 < MAX_TURNS_SHOWN ? max_turn + 1 : MAX_TURNS_SHOWN;
    double *a = malloc((r->n + 1) * sizeof(double)), *b = malloc((r->n + 1) * sizeof(double));
    double *c = malloc((r->n + 1) * sizeof(double));
    uint64_t *first = calloc(ns + 1, sizeof(uint64_t)), *last = calloc(ns + 1, sizeof(uint64_t));
    bool *bad = calloc(ns + 1, sizeof(bool));
    s->turn = calloc((size_t)s->n_turns + 1, sizeof(*s->turn));
    int rc = MP_ENOMEM;
    if (!a || !b || !c || !first || !last || !bad || !s->turn)
        goto out;
    for (int k = 0; k < s->n_turns; k++) {
        struct loadgen_turn *t = &s->turn[k];
        size_t n = turn_values(r, k, a, b, c, &t->requests);
        t->completed = n;
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += c[i];
        t->mean_prompt_len = n ? sum / (double)n : 0;
        t->mean_ttft = mean_of(a, n);
        t->median_ttft = pct_of(a, n, 50);
        t->p99_ttft = pct_of(a, n, 99);
        t->mean_e2el = mean_of(b, n);
    }
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (x->session < 0)
            continue;
        size_t q = (size_t)x->session;
        if (!x->success) {
            bad[q] = true;
            continue;
        }
        uint64_t end = x->event_ns[x->n_events - 1];
        if (!first[q] || x->start_ns < first[q])
            first[q] = x->start_ns;
        if (end > last[q])
            last[q] = end;
    }
    size_t m = 0;
    for (size_t q = 0; q < ns; q++) {
        s->sessions += first[q] || bad[q];
        if (first[q] && !bad[q])
            a[m++] = (double)(last[q] - first[q]) / 1e6;
    }
    s->sessions_completed = m;
    qsort(a, m, sizeof(double), mp_stats_cmp_double);
    s->mean_duration = mean_of(a, m);
    s->median_duration = pct_of(a, m, 50);
    s->p99_duration = pct_of(a, m, 99);
    s->max_duration = m ? a[m - 1] : 0;
    rc = 0;
out:
    free(a);
    free(b);
    free(c);
    free(first);
    free(last);
    free(bad);
    if (rc)
        loadgen_sessions_fini(s);
    return rc;
}

void loadgen_sessions_fini(struct loadgen_sessions *s)
{
    free(s->turn);
    s->turn = NULL;
}

int loadgen_sessions_json(const struct mp_loadgen_result *r, struct mp_buf *b)
{
    struct loadgen_sessions s;
    if (loadgen_sessions_stats(r, &s))
        return MP_ENOMEM;
    int rc = mp_buf_printf(b, "{\"sessions\": %zu, \"sessions_completed\": %zu", s.sessions,
                           s.sessions_completed);
    static const char *const dk[4] = {"mean_ms", "median_ms", "p99_ms", "max_ms"};
    double dv[4] = {s.mean_duration, s.median_duration, s.p99_duration, s.max_duration};
    rc |= mp_buf_puts(b, ", \"session_duration\": {");
    for (int k = 0; k < 4; k++) {
        rc |= mp_buf_printf(b, "%s\"%s\": ", k ? ", " : "", dk[k]);
        rc |= mp_json_double(b, dv[k]);
    }
    rc |= mp_buf_puts(b, "}, \"turns\": [");
    for (int k = 0; k < s.n_turns; k++) {
        const struct loadgen_turn *t = &s.turn[k];
        rc |= mp_buf_printf(b, "%s{\"turn\": %d, \"requests\": %zu, \"completed\": %zu",
                            k ? ", " : "", k, t->requests, t->completed);
        static const char *const tk[5] = {"mean_prompt_len", "mean_ttft_ms", "median_ttft_ms",
                                          "p99_ttft_ms", "mean_e2el_ms"};
        double tv[5] = {t->mean_prompt_len, t->mean_ttft, t->median_ttft, t->p99_ttft,
                        t->mean_e2el};
        for (int j = 0; j < 5; j++) {
            rc |= mp_buf_printf(b, ", \"%s\": ", tk[j]);
            rc |= mp_json_double(b, tv[j]);
        }
        rc |= mp_buf_putc(b, '}');
    }
    rc |= mp_buf_puts(b, "]}");
    loadgen_sessions_fini(&s);
    return rc ? MP_ENOMEM : 0;
}

int loadgen_sessions_text(const struct mp_loadgen_result *r, struct mp_buf *b)
{
    struct loadgen_sessions s;
    if (loadgen_sessions_stats(r, &s))
        return MP_ENOMEM;
    int rc = mp_buf_printf(b,
                           "Sessions: %zu (%zu with every turn ok), duration mean %.2f ms, "
                           "median %.2f ms, P99 %.2f ms\n"
                           "  turn  requests  mean prompt  mean TTFT (ms)  P99 TTFT (ms)\n",
                           s.sessions, s.sessions_completed, s.mean_duration, s.median_duration,
                           s.p99_duration);
    for (int k = 0; k < s.n_turns; k++)
        rc |= mp_buf_printf(b, "  %4d%s %8zu  %11.1f  %14.2f  %13.2f\n", k,
                            k == MAX_TURNS_SHOWN - 1 ? "+" : " ", s.turn[k].requests,
                            s.turn[k].mean_prompt_len, s.turn[k].mean_ttft, s.turn[k].p99_ttft);
    loadgen_sessions_fini(&s);
    return rc ? MP_ENOMEM : 0;
}
