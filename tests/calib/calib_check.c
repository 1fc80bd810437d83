/* calib_check: compares a load generator's numbers with the truth logged by
 * calib_server.
 *
 * Truth for request r (client start time st from the client's per-request
 * JSONL, server write times w_j of its token events from the server log, the
 * same CLOCK_MONOTONIC): TTFT = w_0 - st, E2EL = w_last - st, ITL = w_j -
 * w_{j-1}, TPOT = (E2EL - TTFT) / (tokens - 1). The aggregate statistics
 * (mean, median, std, every p* key present) are recomputed here, by separate
 * code, from that truth and compared with the client's result JSON within
 * max(--tol-ms, --tol-rel * |truth|). Also reported: the per-event delay
 * (client timestamp - server write), the request send latency (server read -
 * client start), and the server's own lateness against its schedule.
 *
 * usage: calib_check --server-log F --requests F --result F [--tol-ms 0.2]
 *                    [--tol-rel 0.01] [--expect-failed N] [--label NAME]
 * exit: 0 all within tolerance, 1 not, 2 bad input.
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
    size_t n;
    uint64_t *due, *wr;
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
static double tol_ms = 0.2, tol_rel = 0.01;

static void compare(const char *what, double truth, double got, double *worst)
{
    double err = fabs(got - truth), tol = fmax(tol_ms, tol_rel * fabs(truth));
    bool ok = err <= tol;
    if (!ok)
        failures++;
    if (err > *worst)
        *worst = err;
    printf("  %-28s truth %12.4f  measured %12.4f  err %9.4f ms  %s\n", what, truth, got, err,
           ok ? "ok" : "FAIL");
}

static double result_num(json_t *res, const char *key, bool *found)
{
    json_t *v = json_object_get(res, key);
    if (!v)
        v = json_object_get(json_object_get(res, "magpie"), key);
    *found = json_is_number(v);
    return json_number_value(v);
}

int main(int argc, char **argv)
{
    const char *slog = NULL, *reqs = NULL, *result = NULL, *label = "run";
    long expect_failed = -1;
    double max_lag_ms = -1, worst_lag = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--server-log"))
            slog = argv[i + 1];
        else if (!strcmp(argv[i], "--requests"))
            reqs = argv[i + 1];
        else if (!strcmp(argv[i], "--result"))
            result = argv[i + 1];
        else if (!strcmp(argv[i], "--tol-ms"))
            tol_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--tol-rel"))
            tol_rel = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--expect-failed"))
            expect_failed = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-dispatch-lag-ms"))
            max_lag_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--label"))
            label = argv[i + 1];
    }
    if (!slog || !reqs || !result) {
        fprintf(stderr, "usage: calib_check --server-log F --requests F --result F [...]\n");
        return 2;
    }
    /* server log */
    FILE *f = fopen(slog, "r");
    if (!f) {
        fprintf(stderr, "calib_check: cannot open %s\n", slog);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    static struct vec lateness; /* static: freed by exit, like everything here */
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        if (!j) {
            fprintf(stderr, "calib_check: %s: %s\n", slog, je.text);
            return 2;
        }
        srvs = realloc(srvs, (n_srv + 1) * sizeof(*srvs));
        struct srv *s = &srvs[n_srv++];
        memset(s, 0, sizeof(*s));
        snprintf(s->rid, sizeof(s->rid), "%s", json_string_value(json_object_get(j, "rid")));
        const char *oc = json_string_value(json_object_get(j, "outcome"));
        s->outcome = strdup(oc ? oc : "?");
        s->recv = (uint64_t)json_integer_value(json_object_get(j, "recv_ns"));
        s->completion = (long)json_integer_value(json_object_get(j, "completion_tokens"));
        json_t *ev = json_object_get(j, "events");
        s->n = json_array_size(ev);
        s->due = calloc(s->n + 1, sizeof(uint64_t));
        s->wr = calloc(s->n + 1, sizeof(uint64_t));
        for (size_t k = 0; k < s->n; k++) {
            json_t *e = json_array_get(ev, k);
            s->due[k] = (uint64_t)json_integer_value(json_array_get(e, 0));
            s->wr[k] = (uint64_t)json_integer_value(json_array_get(e, 1));
            push(&lateness, ((double)s->wr[k] - (double)s->due[k]) / 1e3);
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
    struct vec ttft = {0}, tpot = {0}, itl = {0}, e2el = {0}, delay = {0}, send = {0};
    struct vec c_ttft = {0};
    size_t ok = 0, failed = 0, missing = 0, count_mismatch = 0;
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
        double lag = (double)(json_integer_value(json_object_get(j, "start_ns")) -
                              json_integer_value(json_object_get(j, "arrival_ns"))) /
                     1e6;
        if (lag > worst_lag)
            worst_lag = lag;
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
        uint64_t st = t0 + (uint64_t)json_integer_value(json_object_get(j, "start_ns"));
        json_t *ev = json_object_get(j, "events_ns");
        size_t n = json_array_size(ev);
        if (n != s->n || n == 0) {
            count_mismatch++;
            printf("  %s: client saw %zu token events, server wrote %zu\n", rid, n, s->n);
            json_decref(j);
            continue;
        }
        double t_ttft = ((double)s->wr[0] - (double)st) / 1e6;
        double t_e2el = ((double)s->wr[n - 1] - (double)st) / 1e6;
        push(&ttft, t_ttft);
        push(&e2el, t_e2el);
        push(&send, ((double)s->recv - (double)st) / 1e3);
        if (s->completion > 1)
            push(&tpot, (t_e2el - t_ttft) / (double)(s->completion - 1));
        total_out += s->completion;
        for (size_t k = 0; k < n; k++) {
            uint64_t c = t0 + (uint64_t)json_integer_value(json_array_get(ev, k));
            push(&delay, ((double)c - (double)s->wr[k]) / 1e3);
            if (k)
                push(&itl, ((double)s->wr[k] - (double)s->wr[k - 1]) / 1e6);
        }
        double c_t = json_number_value(json_object_get(j, "ttft_ms"));
        double c_e = json_number_value(json_object_get(j, "e2el_ms"));
        push(&c_ttft, c_t);
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
    printf("  dispatch lag (start - scheduled arrival): max %.3f ms\n", worst_lag);
    if (max_lag_ms >= 0 && worst_lag > max_lag_ms) {
        printf("  dispatch lag above %.3f ms: FAIL\n", max_lag_ms);
        failures++;
    }
    if (expect_failed >= 0 && (long)failed != expect_failed) {
        printf("  expected %ld failed requests, got %zu: FAIL\n", expect_failed, failed);
        failures++;
    }

    struct {
        const char *name;
        struct vec *v;
    } ms[4] = {{"ttft", &ttft}, {"tpot", &tpot}, {"itl", &itl}, {"e2el", &e2el}};

    double worst[4] = {0};
    printf("  %-28s %s\n", "metric", "(ms; truth from server write times)");
    for (int k = 0; k < 4; k++) {
        struct vec *v = ms[k].v;
        if (v->n)
            qsort(v->v, v->n, sizeof(double), cmpd);
        char key[96], what[96];
        snprintf(key, sizeof(key), "mean_%s_ms", ms[k].name);
        double got = result_num(res, key, &found);
        if (!found)
            continue;
        snprintf(what, sizeof(what), "mean %s", ms[k].name);
        compare(what, mean(v), got, &worst[k]);
        snprintf(key, sizeof(key), "median_%s_ms", ms[k].name);
        snprintf(what, sizeof(what), "median %s", ms[k].name);
        compare(what, pct(v->v, v->n, 50), result_num(res, key, &found), &worst[k]);
        snprintf(key, sizeof(key), "std_%s_ms", ms[k].name);
        snprintf(what, sizeof(what), "std %s", ms[k].name);
        compare(what, stdev(v), result_num(res, key, &found), &worst[k]);
        /* every percentile key the client wrote for this metric */
        json_t *src = json_object_get(res, "magpie");
        const char *kk;
        json_t *vv;
        json_object_foreach(src, kk, vv)
        {
            char suffix[64];
            snprintf(suffix, sizeof(suffix), "_%s_ms", ms[k].name);
            size_t kl = strlen(kk), sl = strlen(suffix);
            if (kk[0] != 'p' || kl <= sl + 1 || strcmp(kk + kl - sl, suffix) != 0 || kk[1] < '0' ||
                kk[1] > '9')
                continue;
            double p = atof(kk + 1);
            snprintf(what, sizeof(what), "p%g %s", p, ms[k].name);
            compare(what, pct(v->v, v->n, p), json_number_value(vv), &worst[k]);
        }
    }
    if (delay.n)
        qsort(delay.v, delay.n, sizeof(double), cmpd);
    if (send.n)
        qsort(send.v, send.n, sizeof(double), cmpd);
    if (lateness.n)
        qsort(lateness.v, lateness.n, sizeof(double), cmpd);
    printf("  client-added delay per event (client stamp - server write), us: mean %.1f  p50 "
           "%.1f  p99 %.1f  max %.1f  (n=%zu)\n",
           mean(&delay), pct(delay.v, delay.n, 50), pct(delay.v, delay.n, 99),
           delay.n ? delay.v[delay.n - 1] : 0.0, delay.n);
    printf("  request send latency (server read - client start), us: p50 %.1f  p99 %.1f  max "
           "%.1f\n",
           pct(send.v, send.n, 50), pct(send.v, send.n, 99), send.n ? send.v[send.n - 1] : 0.0);
    printf("  server lateness vs schedule, us: p50 %.1f  p99 %.1f  max %.1f\n",
           pct(lateness.v, lateness.n, 50), pct(lateness.v, lateness.n, 99),
           lateness.n ? lateness.v[lateness.n - 1] : 0.0);
    printf("  max per-request error: ttft %.4f ms, e2el %.4f ms\n", worst_req[0], worst_req[3]);
    printf("ACCURACY %s max_abs_err_ms ttft=%.4f tpot=%.4f itl=%.4f e2el=%.4f "
           "event_delay_us_p50=%.1f p99=%.1f max=%.1f -> %s\n",
           label, worst[0], worst[1], worst[2], worst[3], pct(delay.v, delay.n, 50),
           pct(delay.v, delay.n, 99), delay.n ? delay.v[delay.n - 1] : 0.0,
           failures ? "FAIL" : "PASS");
    json_decref(res);
    return failures ? 1 : 0;
}
