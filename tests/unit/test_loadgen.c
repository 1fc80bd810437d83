/* Unit tests for the loadgen module: the SSE parser under every chunking,
 * the JSON event scanner, numpy-exact statistics and arrival schedules
 * (reference values printed by numpy), the metrics on hand-made records,
 * datasets and their error messages, and the report writers. The network
 * engine is tested end to end in tests/integration/test_loadgen.sh. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include <magpie/loadgen.h>

/* ---- SSE ---- */

struct seen {
    int n;
    enum mp_loadgen_sse_kind kind[32];
    uint64_t t[32];
    int64_t comp[32];
    char text[32][64];
};

static int collect(const struct mp_loadgen_sse_event *ev, void *user)
{
    struct seen *s = user;
    if (s->n < 32) {
        s->kind[s->n] = ev->kind;
        s->t[s->n] = ev->t_ns;
        s->comp[s->n] = ev->completion_tokens;
        snprintf(s->text[s->n], sizeof(s->text[0]), "%.*s", (int)ev->text_len,
                 ev->text ? ev->text : "");
    }
    s->n++;
    return 0;
}

static const char STREAM[] =
    ": ping\n\n"
    "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"text\":\" hello\",\"logprobs\":null}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"a\\\"b\"}}]}\r\n\r\n"
    "event: message\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,"
    "\"completion_tokens\":2,\"total_tokens\":9}}\n\n"
    "data: [DONE]\n\n";

static void check_stream(const struct seen *s)
{
    assert_int_equal(s->n, 4);
    assert_int_equal(s->kind[0], MP_LOADGEN_SSE_TOKEN);
    assert_string_equal(s->text[0], " hello");
    assert_int_equal(s->kind[1], MP_LOADGEN_SSE_TOKEN);
    assert_string_equal(s->text[1], "a\\\"b");
    assert_int_equal(s->kind[2], MP_LOADGEN_SSE_USAGE);
    assert_int_equal(s->comp[2], 2);
    assert_int_equal(s->kind[3], MP_LOADGEN_SSE_DONE);
}

/* Every way of cutting the stream in two, and one byte per read: same events. */
static void test_sse_any_chunking(void **state)
{
    (void)state;
    size_t n = strlen(STREAM);
    for (size_t cut = 0; cut <= n; cut++) {
        struct seen s;
        memset(&s, 0, sizeof(s));
        struct mp_loadgen_sse p;
        mp_loadgen_sse_init(&p, 1 << 16, collect, &s);
        assert_int_equal(mp_loadgen_sse_feed(&p, STREAM, cut, 100), 0);
        assert_int_equal(mp_loadgen_sse_feed(&p, STREAM + cut, n - cut, 200), 0);
        assert_int_equal(mp_loadgen_sse_finish(&p), 0);
        check_stream(&s);
        mp_loadgen_sse_fini(&p);
    }
    struct seen s;
    memset(&s, 0, sizeof(s));
    struct mp_loadgen_sse p;
    mp_loadgen_sse_init(&p, 1 << 16, collect, &s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mp_loadgen_sse_feed(&p, STREAM + i, 1, 1000 + i), 0);
    check_stream(&s);
    /* each event is stamped with the read that held its first byte */
    const char *first = strstr(STREAM, "data: {\"id\"");
    assert_int_equal(s.t[0], 1000 + (uint64_t)(first - STREAM));
    mp_loadgen_sse_fini(&p);
}

static void test_sse_timestamp_first_byte(void **state)
{
    (void)state;
    struct seen s;
    memset(&s, 0, sizeof(s));
    struct mp_loadgen_sse p;
    mp_loadgen_sse_init(&p, 1 << 16, collect, &s);
    mp_loadgen_sse_feed(&p, "data: {\"choices\":[{\"text\":\"a\"}]", 31, 10);
    mp_loadgen_sse_feed(&p, "}\n", 2, 20);
    mp_loadgen_sse_feed(&p, "\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]", 47, 30);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.t[0], 10);
    assert_int_equal(s.t[1], 30);
    /* a last event without its blank line is dispatched at the end */
    assert_int_equal(mp_loadgen_sse_finish(&p), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.kind[2], MP_LOADGEN_SSE_DONE);
    mp_loadgen_sse_fini(&p);
}

static void test_sse_limit(void **state)
{
    (void)state;
    struct seen s;
    memset(&s, 0, sizeof(s));
    struct mp_loadgen_sse p;
    mp_loadgen_sse_init(&p, 16, collect, &s);
    assert_int_equal(mp_loadgen_sse_feed(&p, "data: 0123456789abcdefghij\n\n", 28, 1), MP_ENOMEM);
    mp_loadgen_sse_fini(&p);
}

static enum mp_loadgen_sse_kind kind_of(const char *json)
{
    struct mp_loadgen_sse_event ev;
    mp_loadgen_sse_classify(json, strlen(json), &ev);
    return ev.kind;
}

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(kind_of("{\"choices\":[{\"text\":\"\"}]}"), MP_LOADGEN_SSE_TOKEN);
    assert_int_equal(kind_of("{\"choices\":[{\"delta\":{\"content\":null}}]}"),
                     MP_LOADGEN_SSE_TOKEN);
    assert_int_equal(kind_of("{\"choices\":[],\"usage\":{\"completion_tokens\":3}}"),
                     MP_LOADGEN_SSE_USAGE);
    assert_int_equal(kind_of("{\"choices\":[],\"usage\":null}"), MP_LOADGEN_SSE_OTHER);
    assert_int_equal(kind_of("{\"choices\":[],\"usage\":{}}"), MP_LOADGEN_SSE_OTHER);
    assert_int_equal(kind_of("{\"error\":{\"message\":\"boom\"}}"), MP_LOADGEN_SSE_ERROR);
    assert_int_equal(kind_of("{\"error\":null,\"x\":1}"), MP_LOADGEN_SSE_OTHER);
    assert_int_equal(kind_of("[DONE]"), MP_LOADGEN_SSE_DONE);
    const char *bad[] = {"{\"choices\": [oops", "{\"a\":1,}", "{\"a\":01}", "{\"a\":\"\\x\"}",
                         "{\"a\":tru}",         "{} x",       "",           "{\"a\":1.}",
                         "{\"a\":\"\t\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(kind_of(bad[i]), MP_LOADGEN_SSE_BAD);
    struct mp_loadgen_sse_event ev;
    const char *cont = "{\"choices\":[{\"text\":\"x\"}],\"usage\":{\"prompt_tokens\":5,"
                       "\"completion_tokens\":12,\"total_tokens\":17}}";
    mp_loadgen_sse_classify(cont, strlen(cont), &ev);
    assert_int_equal(ev.kind, MP_LOADGEN_SSE_TOKEN);
    assert_int_equal(ev.prompt_tokens, 5);
    assert_int_equal(ev.completion_tokens, 12);
}

/* ---- numpy-exact pieces ---- */

static void test_percentile(void **state)
{
    (void)state;
    double a[] = {1, 2, 3, 4, 10}, b[] = {0.5, 1.5, 2.25};
    /* np.percentile([1,2,3,4,10],99) = 9.76; np.percentile([.5,1.5,2.25],37.5) = 1.25 */
    assert_true(fabs(mp_loadgen_percentile(a, 5, 99) - 9.76) < 1e-12);
    assert_true(fabs(mp_loadgen_percentile(b, 3, 37.5) - 1.25) < 1e-12);
    assert_true(mp_loadgen_percentile(a, 5, 50) == 3);
    assert_true(mp_loadgen_percentile(a, 0, 50) == 0);
}

static void test_schedule_matches_numpy(void **state)
{
    (void)state;

    /* np.random.seed(S); gamma(shape=b, scale=1/(rate*b)) x5, cumsum, rescaled to n/rate */
    struct {
        uint64_t seed;
        double rate, b, want[5];
    } cases[] = {
        {0,
         10.0,
         1.0,
         {0.09225866000617942, 0.23784755381206038, 0.3448686098264802, 0.4361218447563611, 0.5}},
        {42,
         3.0,
         0.5,
         {0.19438940985720288, 1.1076047787835233, 1.141335753540086, 1.1460107700315774,
          1.6666666666666667}},
        {7,
         100.0,
         2.5,
         {0.006389968796877181, 0.011337101916903458, 0.020278129664198074, 0.03691127806997412,
          0.05}},
    };

    for (size_t c = 0; c < 3; c++) {
        double off[5];
        assert_int_equal(
            mp_loadgen_schedule(5, cases[c].rate, cases[c].b, cases[c].seed, off, NULL), 0);
        for (int i = 0; i < 5; i++)
            assert_true(fabs(off[i] - cases[c].want[i]) <= 1e-15 * fmax(1, cases[c].want[i]));
    }
    double off[4];
    assert_int_equal(mp_loadgen_schedule(4, INFINITY, 1.0, 0, off, NULL), 0);
    assert_true(off[0] == 0 && off[3] == 0);
    assert_int_equal(mp_loadgen_schedule(4, 2.0, INFINITY, 0, off, NULL), 0);
    assert_true(fabs(off[0] - 0.5) < 1e-12 && fabs(off[3] - 2.0) < 1e-12);
    assert_int_equal(mp_loadgen_schedule(4, -1, 1, 0, off, NULL), MP_EINVAL);
}

/* ---- metrics on hand-made records ---- */

static void test_metrics(void **state)
{
    (void)state;
    struct mp_loadgen_result r;
    memset(&r, 0, sizeof(r));
    struct mp_loadgen_record recs[3];
    memset(recs, 0, sizeof(recs));
    uint64_t ev0[] = {1000000000ull + 50000000, 1000000000ull + 60000000,
                      1000000000ull + 80000000}; /* start 1.0 s: ttft 50, gaps 10, 20 */
    uint64_t ev1[] = {1100000000ull + 30000000}; /* one event, 4 tokens by usage */
    recs[0] = (struct mp_loadgen_record){.success = true,
                                         .prompt_len = 10,
                                         .expected_prompt_len = 10,
                                         .output_tokens = 3,
                                         .usage_seen = true,
                                         .arrival_ns = 1000000000ull,
                                         .start_ns = 1000000000ull,
                                         .n_events = 3,
                                         .event_ns = ev0};
    recs[1] = (struct mp_loadgen_record){.success = true,
                                         .prompt_len = 20,
                                         .expected_prompt_len = 16,
                                         .output_tokens = 4,
                                         .usage_seen = true,
                                         .arrival_ns = 1090000000ull,
                                         .start_ns = 1100000000ull,
                                         .n_events = 1,
                                         .event_ns = ev1};
    recs[2] = (struct mp_loadgen_record){.success = false, .prompt_len = 5};
    r.recs = recs;
    r.n = 3;
    r.duration_s = 2.0;
    r.request_rate = INFINITY;
    r.max_concurrency = 2;
    struct mp_loadgen_metrics_opts o;
    mp_loadgen_metrics_opts_default(&o);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_parse_goodput("ttft:40", &o, &d), 0);
    assert_int_equal(mp_loadgen_parse_goodput("bogus:1", &o, &d), MP_EINVAL);
    assert_int_equal(mp_loadgen_parse_percentiles("50,99.9", &o, &d), 0);
    struct mp_loadgen_metrics m;
    assert_int_equal(mp_loadgen_metrics_compute(&r, &o, &m), 0);
    assert_int_equal(m.completed, 2);
    assert_int_equal(m.failed, 1);
    assert_int_equal(m.total_input, 30);
    assert_int_equal(m.total_output, 7);
    assert_true(fabs(m.request_throughput - 1.0) < 1e-12);
    assert_true(fabs(m.output_throughput - 3.5) < 1e-12);
    assert_true(fabs(m.stat[MP_LOADGEN_TTFT].mean - 40.0) < 1e-9);
    /* tpot only for output > 1: (80 - 50) / 2 = 15 and (30 - 30) / 3 = 0 */
    assert_int_equal(m.stat[MP_LOADGEN_TPOT].n, 2);
    assert_true(fabs(m.stat[MP_LOADGEN_TPOT].mean - 7.5) < 1e-9);
    assert_int_equal(m.stat[MP_LOADGEN_ITL].n, 2);
    assert_true(fabs(m.stat[MP_LOADGEN_ITL].median - 15.0) < 1e-9);
    assert_true(fabs(m.stat[MP_LOADGEN_E2EL].max - 80.0) < 1e-9);
    assert_true(fabs(m.stat[MP_LOADGEN_CLIENT_QUEUE].max - 10.0) < 1e-9);
    assert_true(m.have[MP_LOADGEN_CLIENT_QUEUE]);
    assert_false(m.have[MP_LOADGEN_E2EL_INCL_QUEUE]); /* rate inf */
    assert_int_equal(m.good, 1);                      /* ttft 30 <= 40 only */
    assert_true(fabs(m.request_goodput - 0.5) < 1e-12);
    assert_int_equal(m.max_concurrent_requests, 1); /* [1.0,1.08) and [1.1,1.13) */
    assert_true(m.max_output_tokens_per_s == 4);
    assert_int_equal(m.prompt_mismatch, 1);
    /* the vLLM-format JSON carries the selected keys with numpy names */
    struct mp_loadgen_report_info info;
    memset(&info, 0, sizeof(info));
    info.date = "20260101-000000";
    info.backend = "openai";
    info.model_id = "m";
    info.num_prompts = 3;
    info.save_detailed = true;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    r.arena = NULL;
    assert_int_equal(mp_loadgen_result_json(&r, &m, &info, &b), 0);
    json_error_t je;
    json_t *j = json_loads(mp_buf_cstr(&b), 0, &je);
    assert_non_null(j);
    assert_true(json_is_number(json_object_get(j, "p99.9_ttft_ms")));
    assert_true(json_is_number(json_object_get(j, "median_itl_ms")));
    assert_null(json_object_get(j, "mean_e2el_ms")); /* not selected by default */
    assert_string_equal(json_string_value(json_object_get(j, "request_rate")), "inf");
    assert_int_equal(json_array_size(json_object_get(j, "itls")), 3);
    assert_true(fabs(json_real_value(json_object_get(j, "request_goodput")) - 0.5) < 1e-12);
    json_decref(j);
    mp_buf_reset(&b);
    assert_int_equal(mp_loadgen_summary(&r, &m, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "Successful requests:                     2"));
    assert_non_null(strstr(mp_buf_cstr(&b), "Request goodput (req/s):                 0.50"));
    assert_non_null(strstr(mp_buf_cstr(&b), "P99.9 TTFT (ms):"));
    mp_buf_reset(&b);
    assert_int_equal(mp_loadgen_magpie_json(&m, &b), 0);
    j = json_loads(mp_buf_cstr(&b), 0, &je);
    assert_non_null(j);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(j, "throughput"), "completed_requests")),
        2);
    assert_true(json_is_number(
        json_object_get(json_object_get(json_object_get(j, "latency"), "e2el"), "p99_ms")));
    json_decref(j);
    mp_buf_reset(&b);
    assert_int_equal(mp_loadgen_html(&r, &m, &info, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "<svg"));
    mp_buf_fini(&b);
}

/* Failures grouped by reason (kind, and HTTP status) with their first
 * distinct messages; the limit as a count and as a percentage. */
static void test_failures(void **state)
{
    (void)state;
    struct mp_loadgen_record recs[10];
    memset(recs, 0, sizeof(recs));

    static const struct {
        int kind, status;
        const char *err;
    } f[] = {
        {MP_LOADGEN_FAIL_HTTP, 500, "HTTP 500 Internal Server Error: a"},
        {MP_LOADGEN_FAIL_TIMEOUT, 0, "stalled: no data from the server for 1.000 s"},
        {MP_LOADGEN_FAIL_HTTP, 500, "HTTP 500 Internal Server Error: b"},
        {MP_LOADGEN_FAIL_HTTP, 503, "HTTP 503 Service Unavailable: "},
        {MP_LOADGEN_FAIL_HTTP, 500, "HTTP 500 Internal Server Error: a"},
        {MP_LOADGEN_FAIL_CONNECTION, 200, "Transferred a partial file"},
    };

    uint64_t ev[10];
    for (size_t i = 0; i < 10; i++) { /* one token each, 5 ms after its start */
        recs[i].success = true;
        recs[i].arrival_ns = recs[i].start_ns = 1000000000ull + i * 1000000ull;
        ev[i] = recs[i].end_ns = recs[i].start_ns + 5000000ull;
        recs[i].event_ns = &ev[i];
        recs[i].n_events = 1;
        recs[i].output_tokens = 1;
    }
    size_t at[] = {1, 2, 4, 5, 7, 9};
    for (size_t i = 0; i < 6; i++) {
        struct mp_loadgen_record *x = &recs[at[i]];
        x->success = false;
        x->n_events = 0;
        x->fail_kind = (uint8_t)f[i].kind;
        x->http_status = f[i].status;
        x->error = (char *)f[i].err;
    }
    struct mp_loadgen_result r;
    memset(&r, 0, sizeof(r));
    r.recs = recs;
    r.n = 10;
    r.duration_s = 1.0;
    r.request_rate = INFINITY;
    struct mp_loadgen_failures fl;
    mp_loadgen_failures(&r, &fl);
    assert_int_equal(fl.failed, 6);
    assert_int_equal(fl.total, 10);
    assert_true(fl.ratio == 0.6);
    assert_int_equal(fl.n_groups, 4);
    /* most frequent first, then by first request */
    assert_string_equal(fl.groups[0].reason, "HTTP 500");
    assert_int_equal(fl.groups[0].count, 3);
    assert_int_equal(fl.groups[0].first_index, 1);
    assert_int_equal(fl.groups[0].n_examples, 2); /* "a" twice, "b" once */
    assert_string_equal(fl.groups[0].examples[1], "HTTP 500 Internal Server Error: b");
    assert_string_equal(fl.groups[1].reason, "timeout");
    assert_string_equal(fl.groups[2].reason, "HTTP 503");
    assert_string_equal(fl.groups[3].reason, "connection");
    assert_int_equal(fl.groups[3].http_status, 0);
    /* limits */
    struct mp_loadgen_fail_limit l;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_fail_limit_parse("6", &l, &d), 0);
    assert_true(mp_loadgen_fail_limit_ok(&l, 6, 10));
    assert_false(mp_loadgen_fail_limit_ok(&l, 7, 10));
    assert_int_equal(mp_loadgen_fail_limit_parse("60%", &l, &d), 0);
    assert_true(mp_loadgen_fail_limit_ok(&l, 6, 10));
    assert_false(mp_loadgen_fail_limit_ok(&l, 7, 10));
    assert_int_equal(mp_loadgen_fail_limit_parse("0.1%", &l, &d), 0);
    assert_true(mp_loadgen_fail_limit_ok(&l, 1, 1000));
    assert_false(mp_loadgen_fail_limit_ok(&l, 2, 1000));
    assert_true(mp_loadgen_fail_limit_ok(&l, 0, 0));
    char ls[32];
    mp_loadgen_fail_limit_format(&l, ls, sizeof(ls));
    assert_string_equal(ls, "0.1%");
    memset(&l, 0, sizeof(l)); /* the default: none may fail */
    assert_true(mp_loadgen_fail_limit_ok(&l, 0, 10));
    assert_false(mp_loadgen_fail_limit_ok(&l, 1, 10000));
    static const char *const bad[] = {"", "-1", "2.5", "101%", "x", "5%%", "1e999", "nan"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mp_diag_clear(&d);
        if (mp_loadgen_fail_limit_parse(bad[i], &l, &d) != MP_EINVAL)
            fail_msg("limit '%s' accepted", bad[i]);
    }
    /* JSON with the verdict, text block, HTML table */
    assert_int_equal(mp_loadgen_fail_limit_parse("5", &l, &d), 0);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_loadgen_failures_json(&fl, &l, &b), 0);
    json_error_t je;
    json_t *j = json_loads(mp_buf_cstr(&b), 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "max_failed_requests")), "5");
    assert_true(json_is_false(json_object_get(j, "within_limit")));
    json_t *g0 = json_array_get(json_object_get(j, "by_reason"), 0);
    assert_string_equal(json_string_value(json_object_get(g0, "kind")), "http");
    assert_int_equal(json_integer_value(json_object_get(g0, "http_status")), 500);
    assert_int_equal(json_integer_value(json_object_get(g0, "count")), 3);
    assert_int_equal(json_array_size(json_object_get(g0, "examples")), 2);
    json_decref(j);
    mp_buf_reset(&b);
    assert_int_equal(mp_loadgen_failures_text(&fl, &l, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "Failed requests: 6 of 10 (60.00%), limit 5: over it"));
    assert_non_null(strstr(mp_buf_cstr(&b), "  HTTP 500         3  first #1\n"));
    mp_buf_reset(&b);
    struct mp_loadgen_metrics m;
    struct mp_loadgen_metrics_opts o;
    mp_loadgen_metrics_opts_default(&o);
    assert_int_equal(mp_loadgen_metrics_compute(&r, &o, &m), 0);
    struct mp_loadgen_report_info info;
    memset(&info, 0, sizeof(info));
    info.date = "20260101-000000";
    info.backend = "openai";
    info.model_id = "m";
    info.fail_limit = &l;
    assert_int_equal(mp_loadgen_html(&r, &m, &info, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "6 of 10 requests failed (60.00%); limit 5: over it"));
    assert_non_null(strstr(mp_buf_cstr(&b), "<tr><td>HTTP 503</td><td>1</td><td>5</td>"));
    mp_buf_reset(&b);
    assert_int_equal(mp_loadgen_summary(&r, &m, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "Failed requests: 6 of 10 (60.00%)\n  HTTP 500"));
    mp_buf_fini(&b);
}

/* ---- datasets ---- */

static void test_random_dataset(void **state)
{
    (void)state;
    struct mp_loadgen_random_opts o;
    mp_loadgen_random_opts_default(&o);
    o.input_len = 100;
    o.output_len = 10;
    o.range_ratio = 0.25;
    o.prefix_len = 5;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_random(&o, 200, &ds, &d), 0);
    bool saw_lo = false, saw_hi = false;
    for (size_t i = 0; i < ds->n; i++) {
        const struct mp_loadgen_prompt *p = &ds->prompts[i];
        assert_true(p->prompt_len >= 5 + 75 && p->prompt_len <= 5 + 125);
        assert_int_equal(p->n_ids, (uint32_t)p->prompt_len);
        assert_true(p->output_len >= 7 && p->output_len <= 13);
        saw_lo |= p->output_len == 7;
        saw_hi |= p->output_len == 13;
        assert_memory_equal(p->ids, ds->prompts[0].ids, 5 * sizeof(int32_t)); /* shared prefix */
        for (uint32_t k = 0; k < p->n_ids; k++)
            assert_true(p->ids[k] >= 1000 && p->ids[k] < 32000);
    }
    assert_true(saw_lo && saw_hi);
    assert_true(ds->exact_lengths);
    mp_loadgen_dataset_free(ds);
    /* sglang: [max(1, L r), L]; default r = 0 means [1, L] */
    o.mode = MP_LOADGEN_RANGE_SGLANG;
    o.range_ratio = 0;
    o.prefix_len = 0;
    o.text = true;
    assert_int_equal(mp_loadgen_dataset_random(&o, 300, &ds, &d), 0);
    int lo = 1 << 30, hi = 0;
    for (size_t i = 0; i < ds->n; i++) {
        lo = ds->prompts[i].output_len < lo ? ds->prompts[i].output_len : lo;
        hi = ds->prompts[i].output_len > hi ? ds->prompts[i].output_len : hi;
        assert_non_null(ds->prompts[i].text);
    }
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 10);
    mp_loadgen_dataset_free(ds);
    o.mode = MP_LOADGEN_RANGE_VLLM;
    o.range_ratio = 1.0;
    assert_int_equal(mp_loadgen_dataset_random(&o, 3, &ds, &d), MP_EINVAL);
}

static char *write_tmp(const char *content)
{
    char *path = strdup("/tmp/mp_loadgen_test_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    return path;
}

static void test_jsonl_dataset(void **state)
{
    (void)state;
    char *p = write_tmp("{\"prompt\": \"hello world\", \"output_len\": 7}\n\n"
                        "{\"prompt_token_ids\": [1, 2, 3], \"max_tokens\": 4}\n");
    struct mp_loadgen_file_opts fo = {p, 0, 0, false, true};
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_jsonl(&fo, 3, &ds, &d), 0);
    assert_string_equal(ds->prompts[0].text, "hello world");
    assert_int_equal(ds->prompts[0].output_len, 7);
    assert_int_equal(ds->prompts[1].n_ids, 3);
    assert_int_equal(ds->prompts[1].prompt_len, 3);
    assert_int_equal(ds->prompts[1].output_len, 4);
    mp_loadgen_dataset_free(ds);
    unlink(p);
    free(p);
    /* errors name the file, line and field */
    p = write_tmp("{\"prompt\": \"ok\"}\n{\"prompt\": 5}\n");
    fo.path = p;
    assert_int_equal(mp_loadgen_dataset_jsonl(&fo, 2, &ds, &d), MP_EINVAL);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "prompt");
    unlink(p);
    free(p);
    p = write_tmp("{\"prompt\": \"ok\", \"output_len\": -3}\n");
    fo.path = p;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_jsonl(&fo, 1, &ds, &d), MP_EINVAL);
    assert_string_equal(d.field, "output_len");
    unlink(p);
    free(p);
    p = write_tmp("{\"prompt\": \"ok\"}\n{\"prompt\": \n");
    fo.path = p;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_jsonl(&fo, 1, &ds, &d), MP_EPARSE);
    assert_int_equal(d.line, 2);
    unlink(p);
    free(p);
}

static void test_sharegpt_dataset(void **state)
{
    (void)state;
    char *p = write_tmp(
        "[{\"id\": \"a\", \"conversations\": [{\"from\": \"human\", \"value\": \"What is the "
        "capital of France and why is it famous?\"}, {\"from\": \"gpt\", \"value\": \"Paris is "
        "the capital and it is famous for art.\"}]},\n"
        " {\"id\": \"b\", \"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]},\n"
        " {\"id\": \"c\", \"conversations\": [{\"from\": \"human\", \"value\": \"Tell me a long "
        "story about a dragon please\"}, {\"from\": \"gpt\", \"value\": \"Once upon a time "
        "there was a dragon.\"}]}]");
    struct mp_loadgen_file_opts fo = {p, 0, 1, true, true};
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_sharegpt(&fo, 5, &ds, &d), 0);
    assert_int_equal(ds->n, 5);
    for (size_t i = 0; i < ds->n; i++) {
        assert_non_null(ds->prompts[i].text);
        assert_true(ds->prompts[i].output_len >= 4);
    }
    mp_loadgen_dataset_free(ds);
    fo.oversample = false;
    assert_int_equal(mp_loadgen_dataset_sharegpt(&fo, 5, &ds, &d), MP_EINVAL);
    unlink(p);
    free(p);
    p = write_tmp("[{\"conversations\": [{\"value\": \"x\"}, {\"value\": 3}]}]");
    fo.path = p;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_sharegpt(&fo, 1, &ds, &d), MP_EINVAL);
    assert_string_equal(d.field, "value");
    assert_int_equal(d.line, 1);
    unlink(p);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sse_any_chunking), cmocka_unit_test(test_sse_timestamp_first_byte),
        cmocka_unit_test(test_sse_limit),        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_percentile),       cmocka_unit_test(test_schedule_matches_numpy),
        cmocka_unit_test(test_metrics),          cmocka_unit_test(test_random_dataset),
        cmocka_unit_test(test_jsonl_dataset),    cmocka_unit_test(test_sharegpt_dataset),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
