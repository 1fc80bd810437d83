/* calib_check: compares a load generator's numbers with the truth logged by
 * calib_server.
 *
 * The truth is a bracket, not a point. The server logs, for every write(),
 * the time just before it (pre) and the time its bytes had all left the send
 * queue (post); on loopback TCP the kernel stamps a segment as it enters the
 * receiver's queue, inside that interval, whatever the scheduler does to
 * either process. The client dates each SSE event with that kernel receive
 * time ('k' in its events_src) or, when the kernel time cannot date it, with
 * the time of its read ('r').
 *
 * 1. Every event's stamp is checked, exactly, against the brackets: a 'k'
 *    stamp must lie in the bracket of the write that carried the event's
 *    first byte, or of a later write of the same response (when the client
 *    fell behind, unread segments merge and the queue carries the newest
 *    arrival: the client learns of the event no earlier than that); an 'r'
 *    stamp must not precede the event's write. Slack: --slack-us (10 us, the
 *    client's realtime-to-monotonic conversion). Nothing here depends on load.
 * 2. Metrics: truth for request r (client start st, first-byte write times
 *    p_j): TTFT = p_0 - st, E2EL = p_last - st, ITL = p_j - p_{j-1}, TPOT =
 *    (E2EL - TTFT) / (tokens - 1). Each event's stamp error c_j - p_j lies in
 *    [-slack, hi_j], hi_j = post of the bracket it was found in - p_j + slack
 *    ('r': its own distance from p_j), so each sample of a metric lies in an
 *    interval around the truth, and every aggregate (mean, median, each p*
 *    key present) must lie between the aggregates of the interval ends (std:
 *    within the RMS of the widths). Those tolerances are printed next to the
 *    errors; with a client that keeps up they are the write durations.
 * Also reported: the per-event delay (client stamp - write), the share of
 * events dated in their own bracket / a later one / by the read, the request
 * send latency (server read - client start), the dispatch lag (start -
 * scheduled arrival) and the server's lateness against its schedule.
 *
 * usage: calib_check --server-log F --requests F --result F [--slack-us 10]
 *                    [--expect-failed N] [--max-dispatch-lag-ms X]
 *                    [--min-kernel-dated N] [--label NAME]
 * exit: 0 all within bounds, 1 not, 2 bad input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

struct srv {
    char rid[160];
    const char *outcome;
    uint64_t recv;
    size_t n, n_w;
    uint64_t *due, *wr;
    size_t *wi;             /* write that carried event k's first byte */
    uint64_t *wpre, *wpost; /* every write's bracket; wpost 0: left after the log */
    long completion;
};

struct vec {
    double *v;
    size_t n, cap;
};

static void push(struct vec *a, double x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 1024;
        a->v = realloc(a->v, a->cap * sizeof(double));
        if (!a->v) {
            fprintf(stderr, "calib_check: out of memory\n");
            exit(2);
        }
    }
    a->v[a->n++] = x;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* numpy.percentile, linear method, on a sorted array */
static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return 0;
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)h;
    if (lo >= n - 1)
        return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

static double mean(const struct vec *a)
{
    double s = 0;
    for (size_t i = 0; i < a->n; i++)
        s += a->v[i];
    return a->n ? s / (double)a->n : 0;
}

static double stdev(const struct vec *a)
{
    double m = mean(a), s = 0;
    for (size_t i = 0; i < a->n; i++)
        s += (a->v[i] - m) * (a->v[i] - m);
    return a->n ? sqrt(s / (double)a->n) : 0;
}

static struct srv *srvs;
static size_t n_srv;

static struct srv *find_srv(const char *rid)
{
    for (size_t i = 0; i < n_srv; i++)
        if (!strcmp(srvs[i].rid, rid))
            return &srvs[i];
    return NULL;
}

static int failures;

/* got must lie in [lo, hi] (the aggregate of the interval ends), up to
 * rounding; err is against the truth point */
static void compare(const char *what, double truth, double got, double lo, double hi, double *worst,
                    double *worst_tol)
{
    double err = fabs(got - truth), eps = 1e-6 + 1e-9 * fabs(truth);
    bool ok = got >= lo - eps && got <= hi + eps;
    if (!ok)
        failures++;
    if (err > *worst)
        *worst = err;
    double tol = fmax(hi - truth, truth - lo);
    if (tol > *worst_tol)
        *worst_tol = tol;
    printf("  %-22s truth %11.4f  measured %11.4f  err %8.4f  allowed [%+.4f, %+.4f] ms  %s\n",
           what, truth, got, err, lo - truth, hi - truth, ok ? "ok" : "FAIL");
}

static double *sorted_copy(const struct vec *a)
{
    double *v = malloc((a->n + 1) * sizeof(double));
    if (!v) {
        fprintf(stderr, "calib_check: out of memory\n");
        exit(2);
    }
    if (a->n)
        memcpy(v, a->v, a->n * sizeof(double));
    qsort(v, a->n, sizeof(double), cmpd);
    return v;
}

static double result_num(json_t *res, const char *key, bool *found)
{
    json_t *v = json_object_get(res, key);
    if (!v)
        v = json_object_get(json_object_get(res, "magpie"), key);
    *found = json_is_number(v);
    return json_number_value(v);
}

/* c (absolute ns) against the brackets of event k of s; fills the offsets
 * lo/hi (ms) of c - p_k the bracket proves. Returns 0 own bracket, 1 a later
 * write's, 2 read-dated and not before the write, -1 outside. */
static int locate(const struct srv *s, size_t k, uint64_t c, bool read_dated, double slack_ns,
                  double *lo, double *hi)
{
    double p = (double)s->wr[k], cd = (double)c;
    if (read_dated || !s->n_w) {
        *lo = -slack_ns / 1e6;
        *hi = (cd - p + slack_ns) / 1e6;
        return cd >= p - slack_ns ? 2 : -1;
    }
    for (size_t w = s->wi[k]; w < s->n_w; w++) {
        double a = (double)s->wpre[w], b = s->wpost[w] ? (double)s->wpost[w] : INFINITY;
        if (cd >= a - slack_ns && cd <= b + slack_ns) {
            *lo = (a - p - slack_ns) / 1e6;
            *hi = (s->wpost[w] ? b - p + slack_ns : cd - p + slack_ns) / 1e6;
            return w == s->wi[k] ? 0 : 1;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *slog = NULL, *reqs = NULL, *result = NULL, *label = "run";
    long expect_failed = -1, min_kernel = 0;
    double max_lag_ms = -1, worst_lag = 0, slack_us = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--server-log"))
            slog = argv[i + 1];
        else if (!strcmp(argv[i], "--requests"))
            reqs = argv[i + 1];
        else if (!strcmp(argv[i], "--result"))
            result = argv[i + 1];
        else if (!strcmp(argv[i], "--slack-us"))
            slack_us = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--expect-failed"))
            expect_failed = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-dispatch-lag-ms"))
            max_lag_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-kernel-dated"))
            min_kernel = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--label"))
            label = argv[i + 1];
        else {
            fprintf(stderr, "calib_check: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!slog || !reqs || !result) {
        fprintf(stderr, "usage: calib_check --server-log F --requests F --result F [...]\n");
        return 2;
    }
    double slack_ns = slack_us * 1e3;
    /* server log */
    FILE *f = fopen(slog, "r");
    if (!f) {
        fprintf(stderr, "calib_check: cannot open %s\n", slog);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    static struct vec lateness; /* static: freed by exit, like everything here */
    size_t open_writes = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        if (!j) {
            fprintf(stderr, "calib_check: %s: %s\n", slog, je.text);
            return 2;
        }
        srvs = realloc(srvs, (n_srv + 1) * sizeof(*srvs));
        if (!srvs) {
            fprintf(stderr, "calib_check: out of memory\n");
            return 2;
        }
        struct srv *s = &srvs[n_srv++];
        memset(s, 0, sizeof(*s));
        snprintf(s->rid, sizeof(s->rid), "%s", json_string_value(json_object_get(j, "rid")));
        const char *oc = json_string_value(json_object_get(j, "outcome"));
        s->outcome = strdup(oc ? oc : "?");
        s->recv = (uint64_t)json_integer_value(json_object_get(j, "recv_ns"));
        s->completion = (long)json_integer_value(json_object_get(j, "completion_tokens"));
        json_t *ev = json_object_get(j, "events"), *wr = json_object_get(j, "writes");
        s->n = json_array_size(ev);
        s->n_w = json_array_size(wr);
        s->due = calloc(s->n + 1, sizeof(uint64_t));
        s->wr = calloc(s->n + 1, sizeof(uint64_t));
        s->wi = calloc(s->n + 1, sizeof(size_t));
        s->wpre = calloc(s->n_w + 1, sizeof(uint64_t));
        s->wpost = calloc(s->n_w + 1, sizeof(uint64_t));
        if (!s->due || !s->wr || !s->wi || !s->wpre || !s->wpost) {
            fprintf(stderr, "calib_check: out of memory\n");
            return 2;
        }
        for (size_t k = 0; k < s->n; k++) {
            json_t *e = json_array_get(ev, k);
            s->due[k] = (uint64_t)json_integer_value(json_array_get(e, 0));
            s->wr[k] = (uint64_t)json_integer_value(json_array_get(e, 1));
            s->wi[k] = (size_t)json_integer_value(json_array_get(e, 3));
            if (s->n_w && s->wi[k] >= s->n_w) {
                fprintf(stderr, "calib_check: %s: %s: write index out of range\n", slog, s->rid);
                return 2;
            }
            push(&lateness, ((double)s->wr[k] - (double)s->due[k]) / 1e3);
        }
        for (size_t w = 0; w < s->n_w; w++) {
            json_t *e = json_array_get(wr, w);
            s->wpre[w] = (uint64_t)json_integer_value(json_array_get(e, 0));
            s->wpost[w] = (uint64_t)json_integer_value(json_array_get(e, 1));
            open_writes += s->wpost[w] == 0;
        }
        json_decref(j);
    }
    fclose(f);
    /* client per-request records */
    f = fopen(reqs, "r");
    if (!f) {
        fprintf(stderr, "calib_check: cannot open %s\n", reqs);
        return 2;
    }
    /* per metric: truth samples and the offsets of the interval the
     * client's value must lie in */
    struct vec x[4] = {{0}}, dlo[4] = {{0}}, dhi[4] = {{0}};
    struct vec delay = {0}, send = {0}, width = {0};
    size_t ok = 0, failed = 0, missing = 0, count_mismatch = 0, early = 0;
    size_t n_own = 0, n_later = 0, n_read = 0, n_outside = 0;
    long total_out = 0;
    double worst_req[4] = {0};
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        if (!j) {
            fprintf(stderr, "calib_check: %s: %s\n", reqs, je.text);
            return 2;
        }
        const char *rid = json_string_value(json_object_get(j, "request_id"));
        long long arr = json_integer_value(json_object_get(j, "arrival_ns"));
        long long sta = json_integer_value(json_object_get(j, "start_ns"));
        double lag = (double)(sta - arr) / 1e6;
        if (lag > worst_lag)
            worst_lag = lag;
        if (sta < arr)
            early++;
        bool success = json_is_true(json_object_get(j, "success"));
        struct srv *s = rid ? find_srv(rid) : NULL;
        if (!success) {
            failed++;
            printf("  failed %s: %s (server: %s)\n", rid ? rid : "?",
                   json_string_value(json_object_get(j, "error")), s ? s->outcome : "no record");
            json_decref(j);
            continue;
        }
        ok++;
        if (!s) {
            missing++;
            json_decref(j);
            continue;
        }
        uint64_t t0 = (uint64_t)json_integer_value(json_object_get(j, "t0_monotonic_ns"));
        uint64_t st = t0 + (uint64_t)sta;
        json_t *ev = json_object_get(j, "events_ns");
        const char *src = json_string_value(json_object_get(j, "events_src"));
        size_t n = json_array_size(ev);
        if (n != s->n || n == 0) {
            count_mismatch++;
            printf("  %s: client saw %zu token events, server wrote %zu\n", rid, n, s->n);
            json_decref(j);
            continue;
        }
        double lo_prev = 0, hi_prev = 0, lo0 = 0, hi0 = 0, lo = 0, hi = 0;
        for (size_t k = 0; k < n; k++) {
            uint64_t c = t0 + (uint64_t)json_integer_value(json_array_get(ev, k));
            bool rd = src && k < strlen(src) && src[k] == 'r';
            int where = locate(s, k, c, rd, slack_ns, &lo, &hi);
            if (where < 0) {
                if (n_outside < 10)
                    printf("  %s event %zu: stamp %s its write by %.1f us and outside every "
                           "later write's bracket: FAIL\n",
                           rid, k, c >= s->wr[k] ? "after" : "before",
                           fabs((double)c - (double)s->wr[k]) / 1e3);
                n_outside++;
                lo = hi = ((double)c - (double)s->wr[k]) / 1e6;
            }
            n_own += where == 0;
            n_later += where == 1;
            n_read += where == 2;
            if (s->n_w && s->wpost[s->wi[k]])
                push(&width, ((double)s->wpost[s->wi[k]] - (double)s->wpre[s->wi[k]]) / 1e3);
            push(&delay, ((double)c - (double)s->wr[k]) / 1e3);
            if (k == 0) {
                lo0 = lo;
                hi0 = hi;
            } else {
                push(&x[2], ((double)s->wr[k] - (double)s->wr[k - 1]) / 1e6);
                push(&dlo[2], lo - hi_prev);
                push(&dhi[2], hi - lo_prev);
            }
            lo_prev = lo;
            hi_prev = hi;
        }
        double t_ttft = ((double)s->wr[0] - (double)st) / 1e6;
        double t_e2el = ((double)s->wr[n - 1] - (double)st) / 1e6;
        push(&x[0], t_ttft);
        push(&dlo[0], lo0);
        push(&dhi[0], hi0);
        push(&x[3], t_e2el);
        push(&dlo[3], lo);
        push(&dhi[3], hi);
        push(&send, ((double)s->recv - (double)st) / 1e3);
        if (s->completion > 1) {
            double m = (double)(s->completion - 1);
            push(&x[1], (t_e2el - t_ttft) / m);
            push(&dlo[1], (lo - hi0) / m);
            push(&dhi[1], (hi - lo0) / m);
        }
        total_out += s->completion;
        double c_t = json_number_value(json_object_get(j, "ttft_ms"));
        double c_e = json_number_value(json_object_get(j, "e2el_ms"));
        if (fabs(c_t - t_ttft) > worst_req[0])
            worst_req[0] = fabs(c_t - t_ttft);
        if (fabs(c_e - t_e2el) > worst_req[3])
            worst_req[3] = fabs(c_e - t_e2el);
        json_decref(j);
    }
    fclose(f);
    free(line);
    json_error_t je;
    json_t *res = json_load_file(result, 0, &je);
    if (!res) {
        fprintf(stderr, "calib_check: %s: %s\n", result, je.text);
        return 2;
    }
    printf("== %s: %zu ok, %zu failed, %zu without server record, %zu event-count mismatches\n",
           label, ok, failed, missing, count_mismatch);
    if (missing || count_mismatch)
        failures++;
    bool found;
    long r_completed = (long)result_num(res, "completed", &found);
    long r_failed = (long)result_num(res, "failed", &found);
    long r_out = (long)result_num(res, "total_output_tokens", &found);
    if (r_completed != (long)ok || r_failed != (long)failed) {
        printf("  result says %ld completed / %ld failed, records say %zu / %zu: FAIL\n",
               r_completed, r_failed, ok, failed);
        failures++;
    }
    if (r_out != total_out) {
        printf("  total_output_tokens %ld, server sent %ld: FAIL\n", r_out, total_out);
        failures++;
    }
    size_t n_ev = n_own + n_later + n_read + n_outside;
    printf("  event stamps (%zu): %zu in their own write's bracket, %zu in a later write's "
           "(client behind), %zu read-dated, %zu outside%s\n",
           n_ev, n_own, n_later, n_read, n_outside, n_outside ? ": FAIL" : "");
    if (n_outside)
        failures++;
    if (open_writes)
        printf("  %zu writes had bytes left in the send queue at the end of their stream "
               "(bracket open)\n",
               open_writes);
    if ((long)(n_own + n_later) < min_kernel) {
        printf("  %zu kernel-dated events, expected at least %ld: FAIL\n", n_own + n_later,
               min_kernel);
        failures++;
    }
    printf("  dispatch lag (start - scheduled arrival): max %.3f ms\n", worst_lag);
    if (early) {
        printf("  %zu requests started before their scheduled arrival: FAIL\n", early);
        failures++;
    }
    if (max_lag_ms >= 0 && worst_lag > max_lag_ms) {
        printf("  dispatch lag above %.3f ms: FAIL\n", max_lag_ms);
        failures++;
    }
    if (expect_failed >= 0 && (long)failed != expect_failed) {
        printf("  expected %ld failed requests, got %zu: FAIL\n", expect_failed, failed);
        failures++;
    }

    static const char *const names[4] = {"ttft", "tpot", "itl", "e2el"};
    double worst[4] = {0}, worst_tol[4] = {0};
    printf("  %-22s %s\n", "metric", "(ms; truth from server write times, allowed from brackets)");
    for (int k = 0; k < 4; k++) {
        struct vec lo = {0}, hi = {0}, w = {0};
        for (size_t i = 0; i < x[k].n; i++) {
            push(&lo, x[k].v[i] + dlo[k].v[i]);
            push(&hi, x[k].v[i] + dhi[k].v[i]);
            double m = fmax(fabs(dlo[k].v[i]), fabs(dhi[k].v[i]));
            push(&w, m * m);
        }
        double *xs = sorted_copy(&x[k]), *los = sorted_copy(&lo), *his = sorted_copy(&hi);
        size_t nn = x[k].n;
        char key[96], what[96];
        snprintf(key, sizeof(key), "mean_%s_ms", names[k]);
        double got = result_num(res, key, &found);
        if (found) {
            snprintf(what, sizeof(what), "mean %s", names[k]);
            compare(what, mean(&x[k]), got, mean(&lo), mean(&hi), &worst[k], &worst_tol[k]);
            snprintf(key, sizeof(key), "median_%s_ms", names[k]);
            snprintf(what, sizeof(what), "median %s", names[k]);
            compare(what, pct(xs, nn, 50), result_num(res, key, &found), pct(los, nn, 50),
                    pct(his, nn, 50), &worst[k], &worst_tol[k]);
            snprintf(key, sizeof(key), "std_%s_ms", names[k]);
            snprintf(what, sizeof(what), "std %s", names[k]);
            double sd = stdev(&x[k]), rms = sqrt(mean(&w));
            compare(what, sd, result_num(res, key, &found), sd - rms, sd + rms, &worst[k],
                    &worst_tol[k]);
            /* every percentile key the client wrote for this metric */
            json_t *srcobj = json_object_get(res, "magpie");
            const char *kk;
            json_t *vv;
            json_object_foreach(srcobj, kk, vv)
            {
                char suffix[64];
                snprintf(suffix, sizeof(suffix), "_%s_ms", names[k]);
                size_t kl = strlen(kk), sl = strlen(suffix);
                if (kk[0] != 'p' || kl <= sl + 1 || strcmp(kk + kl - sl, suffix) != 0 ||
                    kk[1] < '0' || kk[1] > '9')
                    continue;
                double p = atof(kk + 1);
                snprintf(what, sizeof(what), "p%g %s", p, names[k]);
                compare(what, pct(xs, nn, p), json_number_value(vv), pct(los, nn, p),
                        pct(his, nn, p), &worst[k], &worst_tol[k]);
            }
        }
        free(xs);
        free(los);
        free(his);
        free(lo.v);
        free(hi.v);
        free(w.v);
    }
    double *dl = sorted_copy(&delay), *sd = sorted_copy(&send), *lt = sorted_copy(&lateness),
           *wd = sorted_copy(&width);
    printf("  client-added delay per event (client stamp - write start), us: mean %.1f  p50 "
           "%.1f  p99 %.1f  max %.1f  (n=%zu)\n",
           mean(&delay), pct(dl, delay.n, 50), pct(dl, delay.n, 99),
           delay.n ? dl[delay.n - 1] : 0.0, delay.n);
    printf("  write bracket width (post - pre), us: p50 %.1f  p99 %.1f  max %.1f\n",
           pct(wd, width.n, 50), pct(wd, width.n, 99), width.n ? wd[width.n - 1] : 0.0);
    printf("  request send latency (server read - client start), us: p50 %.1f  p99 %.1f  max "
           "%.1f\n",
           pct(sd, send.n, 50), pct(sd, send.n, 99), send.n ? sd[send.n - 1] : 0.0);
    printf("  server lateness vs schedule, us: p50 %.1f  p99 %.1f  max %.1f\n",
           pct(lt, lateness.n, 50), pct(lt, lateness.n, 99), lateness.n ? lt[lateness.n - 1] : 0.0);
    printf("  max per-request error: ttft %.4f ms, e2el %.4f ms\n", worst_req[0], worst_req[3]);
    printf("ACCURACY %s max_abs_err_ms ttft=%.4f tpot=%.4f itl=%.4f e2el=%.4f "
           "event_delay_us_p50=%.1f p99=%.1f max=%.1f own_bracket=%.1f%% "
           "max_allowed_ms ttft=%.4f itl=%.4f -> %s\n",
           label, worst[0], worst[1], worst[2], worst[3], pct(dl, delay.n, 50),
           pct(dl, delay.n, 99), delay.n ? dl[delay.n - 1] : 0.0,
           n_ev ? 100.0 * (double)n_own / (double)n_ev : 0.0, worst_tol[0], worst_tol[2],
           failures ? "FAIL" : "PASS");
    json_decref(res);
    return failures ? 1 : 0;
}
