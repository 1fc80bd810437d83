/* The engine's view of a run: its Prometheus /metrics read before the run,
 * every interval during it and after it (docs/workloads.md), and what the
 * result JSON, the summary and the HTML page show of them.
 *
 * The scrapes run on their own thread with their own curl handle, so a slow
 * /metrics never delays a request of the benchmark (the engine's loop is
 * never blocked by them). Bounded: at most MAX_SCRAPES samples, 16 MiB per
 * answer, 10 s per GET. A scrape that fails is recorded (the first message)
 * and the next one is tried.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_SCRAPES 100000
#define MAX_ANSWER ((size_t)16 << 20)

struct loadgen_scraper {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, started;
    double interval_s;
    char url[2100];
    const struct mp_loadgen_config *cfg;
    CURL *h;
    struct curl_slist *hdrs;
    struct mp_buf body;
    struct mp_loadgen_scrape *s;
    size_t n, cap;
    char err[160];
};

static size_t collect(char *p, size_t size, size_t nmemb, void *user)
{
    struct mp_buf *b = user;
    return mp_buf_append(b, p, size * nmemb) ? 0 : size * nmemb;
}

/* One GET and its sample appended (or the error noted). */
static void scrape_once(struct loadgen_scraper *sc)
{
    sc->body.len = 0;
    CURLcode cc = curl_easy_perform(sc->h);
    long code = 0;
    curl_easy_getinfo(sc->h, CURLINFO_RESPONSE_CODE, &code);
    uint64_t t = mp_time_ns();
    char msg[160] = "";
    if (cc != CURLE_OK || code != 200) {
        snprintf(msg, sizeof(msg), "GET /metrics: %.120s",
                 cc != CURLE_OK ? curl_easy_strerror(cc)
                 : code == 404  ? "HTTP 404"
                                : "HTTP error");
    } else if (sc->n < MAX_SCRAPES && !MP_GROW(sc->s, sc->cap, sc->n + 1, 64)) {
        struct mp_loadgen_scrape *x = &sc->s[sc->n];
        x->t_ns = t;
        struct mp_diag d;
        mp_diag_clear(&d);
        if (mp_loadgen_prom_sample(sc->body.data ? sc->body.data : "", sc->body.len, x, &d))
            snprintf(msg, sizeof(msg), "/metrics line %ld: %.120s", d.line, d.msg);
        else
            sc->n++;
    }
    if (msg[0] && !sc->err[0])
        snprintf(sc->err, sizeof(sc->err), "%s", msg);
}

static void *scrape_loop(void *arg)
{
    struct loadgen_scraper *sc = arg;
    pthread_mutex_lock(&sc->mu);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double at = (double)until.tv_sec + until.tv_nsec / 1e9 + sc->interval_s;
        until.tv_sec = (time_t)at;
        until.tv_nsec = (long)((at - floor(at)) * 1e9);
        while (!sc->stop) {
            int rc = pthread_cond_timedwait(&sc->cv, &sc->mu, &until);
            if (rc == ETIMEDOUT)
                break;
        }
        bool last = sc->stop;
        pthread_mutex_unlock(&sc->mu);
        scrape_once(sc); /* the last one is the "after" scrape */
        pthread_mutex_lock(&sc->mu);
        if (last)
            break;
    }
    pthread_mutex_unlock(&sc->mu);
    return NULL;
}

int loadgen_scrape_start(struct loadgen_scraper **out, const struct mp_loadgen_config *cfg,
                         struct mp_diag *d)
{
    *out = NULL;
    struct loadgen_scraper *sc = calloc(1, sizeof(*sc));
    if (!sc)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    size_t bl = strlen(cfg->base_url);
    while (bl && cfg->base_url[bl - 1] == '/')
        bl--;
    snprintf(sc->url, sizeof(sc->url), "%.*s/metrics", (int)(bl < 2048 ? bl : 2048), cfg->base_url);
    sc->interval_s = cfg->scrape_interval_s;
    mp_buf_init(&sc->body, MAX_ANSWER);
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->cv, NULL);
    sc->h = curl_easy_init();
    if (!sc->h) {
        loadgen_scrape_stop(sc, NULL);
        return mp_diag_set(d, MP_EIO, "curl_easy_init failed");
    }
    for (int i = 0; i < cfg->n_headers; i++)
        sc->hdrs = curl_slist_append(sc->hdrs, cfg->headers[i]);
    curl_easy_setopt(sc->h, CURLOPT_URL, sc->url);
    curl_easy_setopt(sc->h, CURLOPT_HTTPHEADER, sc->hdrs);
    curl_easy_setopt(sc->h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(sc->h, CURLOPT_WRITEDATA, &sc->body);
    curl_easy_setopt(sc->h, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(sc->h, CURLOPT_NOSIGNAL, 1L);
    if (cfg->insecure) {
        curl_easy_setopt(sc->h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(sc->h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    scrape_once(sc); /* "before": on this thread, before t0 */
    if (pthread_create(&sc->th, NULL, scrape_loop, sc)) {
        loadgen_scrape_stop(sc, NULL);
        return mp_diag_set(d, MP_EIO, "cannot start the /metrics thread");
    }
    sc->started = true;
    *out = sc;
    return 0;
}

void loadgen_scrape_stop(struct loadgen_scraper *sc, struct mp_loadgen_result *res)
{
    if (!sc)
        return;
    if (sc->started) {
        pthread_mutex_lock(&sc->mu);
        sc->stop = true;
        pthread_cond_signal(&sc->cv);
        pthread_mutex_unlock(&sc->mu);
        pthread_join(sc->th, NULL);
    }
    if (res) {
        res->scrapes = sc->s;
        res->n_scrapes = sc->n;
        snprintf(res->scrape_error, sizeof(res->scrape_error), "%s", sc->err);
        sc->s = NULL;
    }
    free(sc->s);
    curl_slist_free_all(sc->hdrs);
    if (sc->h)
        curl_easy_cleanup(sc->h);
    mp_buf_fini(&sc->body);
    pthread_mutex_destroy(&sc->mu);
    pthread_cond_destroy(&sc->cv);
    free(sc);
}

/* ---- what the reports show ---- */

static bool counter(int k)
{
    return k == MP_LOADGEN_EM_PREFIX_QUERIES || k == MP_LOADGEN_EM_PREFIX_HITS ||
           k == MP_LOADGEN_EM_PREEMPTIONS || k == MP_LOADGEN_EM_SPEC_DRAFTS ||
           k == MP_LOADGEN_EM_SPEC_DRAFT_TOKENS || k == MP_LOADGEN_EM_SPEC_ACCEPTED ||
           k == MP_LOADGEN_EM_PROMPT_TOKENS || k == MP_LOADGEN_EM_GENERATION_TOKENS;
}

void loadgen_scrape_delta(const struct mp_loadgen_result *r, struct loadgen_em_delta *dl)
{
    memset(dl, 0, sizeof(*dl));
    dl->hit_rate = dl->accept_rate = dl->accept_len = NAN;
    if (r->n_scrapes < 2)
        return;
    const struct mp_loadgen_scrape *a = &r->scrapes[0], *b = &r->scrapes[r->n_scrapes - 1];
    for (int k = 0; k < MP_LOADGEN_N_EM; k++) {
        /* a labelled counter has no sample before its first increment
         * (SGLang's cached_tokens_total before the first hit): absent in
         * the first scrape and present in the last, it started at 0 */
        if (!counter(k) || !(b->have & (1u << k)))
            continue;
        dl->have |= 1u << k;
        dl->v[k] = b->v[k] - ((a->have & (1u << k)) ? a->v[k] : 0);
        /* a counter that went down: the engine restarted; no delta */
        if (dl->v[k] < 0)
            dl->have &= ~(1u << k);
    }
    const double *v = dl->v;
    uint32_t h = dl->have;
    if ((h & (1u << MP_LOADGEN_EM_PREFIX_HITS)) && (h & (1u << MP_LOADGEN_EM_PREFIX_QUERIES)) &&
        v[MP_LOADGEN_EM_PREFIX_QUERIES] > 0)
        dl->hit_rate = v[MP_LOADGEN_EM_PREFIX_HITS] / v[MP_LOADGEN_EM_PREFIX_QUERIES];
    if ((h & (1u << MP_LOADGEN_EM_SPEC_ACCEPTED)) &&
        (h & (1u << MP_LOADGEN_EM_SPEC_DRAFT_TOKENS)) && v[MP_LOADGEN_EM_SPEC_DRAFT_TOKENS] > 0)
        dl->accept_rate = v[MP_LOADGEN_EM_SPEC_ACCEPTED] / v[MP_LOADGEN_EM_SPEC_DRAFT_TOKENS];
    if ((h & (1u << MP_LOADGEN_EM_SPEC_ACCEPTED)) && (h & (1u << MP_LOADGEN_EM_SPEC_DRAFTS)) &&
        v[MP_LOADGEN_EM_SPEC_DRAFTS] > 0)
        dl->accept_len = 1 + v[MP_LOADGEN_EM_SPEC_ACCEPTED] / v[MP_LOADGEN_EM_SPEC_DRAFTS];
}

static int num_or_null(struct mp_buf *b, double v)
{
    return isfinite(v) ? mp_json_double(b, v) : mp_buf_puts(b, "null");
}

int loadgen_scrape_json(const struct mp_loadgen_result *r, struct mp_buf *b)
{
    struct loadgen_em_delta dl;
    loadgen_scrape_delta(r, &dl);
    int rc = mp_buf_puts(b, "{\"error\": ");
    rc |= r->scrape_error[0] ? mp_json_str(b, r->scrape_error, strlen(r->scrape_error))
                             : mp_buf_puts(b, "null");
    rc |= mp_buf_printf(b, ", \"scrapes\": %zu, \"delta\": {", r->n_scrapes);
    bool first = true;
    for (int k = 0; k < MP_LOADGEN_N_EM; k++) {
        if (!(dl.have & (1u << k)))
            continue;
        rc |= mp_buf_printf(b, "%s\"%s\": ", first ? "" : ", ", mp_loadgen_engine_metric_name(k));
        rc |= mp_json_double(b, dl.v[k]);
        first = false;
    }
    rc |= mp_buf_puts(b, first ? "\"prefix_cache_hit_rate\": " : ", \"prefix_cache_hit_rate\": ");
    rc |= num_or_null(b, dl.hit_rate);
    rc |= mp_buf_puts(b, ", \"spec_decode_acceptance_rate\": ");
    rc |= num_or_null(b, dl.accept_rate);
    rc |= mp_buf_puts(b, ", \"spec_decode_acceptance_length\": ");
    rc |= num_or_null(b, dl.accept_len);
    rc |= mp_buf_puts(b, "}, \"series\": [");
    for (size_t i = 0; i < r->n_scrapes; i++) {
        const struct mp_loadgen_scrape *x = &r->scrapes[i];
        rc |= mp_buf_puts(b, i ? ", {\"t_s\": " : "{\"t_s\": ");
        rc |= mp_json_double(b, ((double)x->t_ns - (double)r->t0_ns) / 1e9);
        for (int k = 0; k < MP_LOADGEN_N_EM; k++) {
            if (!(x->have & (1u << k)))
                continue;
            rc |= mp_buf_printf(b, ", \"%s\": ", mp_loadgen_engine_metric_name(k));
            rc |= mp_json_double(b, x->v[k]);
        }
        rc |= mp_buf_putc(b, '}');
    }
    rc |= mp_buf_puts(b, "]}");
    return rc ? MP_ENOMEM : 0;
}

int loadgen_scrape_text(const struct mp_loadgen_result *r, struct mp_buf *b)
{
    if (!r->n_scrapes)
        return mp_buf_printf(b, "note: no /metrics scrape succeeded: %s\n", r->scrape_error)
                   ? MP_ENOMEM
                   : 0;
    struct loadgen_em_delta dl;
    loadgen_scrape_delta(r, &dl);
    int rc = mp_buf_printf(b, "Engine /metrics: %zu scrapes", r->n_scrapes);
    if (isfinite(dl.hit_rate))
        rc |= mp_buf_printf(b, ", prefix-cache hit rate %.2f%% (%.0f of %.0f tokens)",
                            dl.hit_rate * 100, dl.v[MP_LOADGEN_EM_PREFIX_HITS],
                            dl.v[MP_LOADGEN_EM_PREFIX_QUERIES]);
    if (dl.have & (1u << MP_LOADGEN_EM_PREEMPTIONS))
        rc |= mp_buf_printf(b, ", %.0f preemptions", dl.v[MP_LOADGEN_EM_PREEMPTIONS]);
    if (isfinite(dl.accept_rate))
        rc |= mp_buf_printf(b, ", spec-decode acceptance %.2f%% (length %.2f)",
                            dl.accept_rate * 100, dl.accept_len);
    double kv = 0;
    for (size_t i = 0; i < r->n_scrapes; i++)
        if (r->scrapes[i].v[MP_LOADGEN_EM_KV_USAGE] > kv)
            kv = r->scrapes[i].v[MP_LOADGEN_EM_KV_USAGE];
    rc |= mp_buf_printf(b, ", peak KV-cache usage %.1f%%\n", kv * 100);
    if (r->scrape_error[0])
        rc |= mp_buf_printf(b, "note: a /metrics scrape failed: %s\n", r->scrape_error);
    return rc ? MP_ENOMEM : 0;
}
