/* Unit tests for the loadgen's Prometheus text parser and the mapping of
 * vLLM's and SGLang's /metrics names onto the engine metrics
 * (src/loadgen/prom.c, docs/workloads.md): accepted pages and the values
 * read from them (series summed, ratio gauges averaged, _created series
 * and unknown metrics ignored), and the lines a strict parser refuses with
 * their line and column. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <magpie/loadgen.h>

static const char VLLM[] =
    "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
    "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 2.0\n"
    "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 0.0\n"
    "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n"
    "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.25\n"
    "# TYPE vllm:prefix_cache_queries counter\n"
    "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1234.0\n"
    "vllm:prefix_cache_queries_created{engine=\"0\",model_name=\"m\"} 1.7e+09\n"
    "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 1000\n"
    "vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 10\n"
    "vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 30\n"
    "vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 21\n"
    "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 2\n"
    "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 5\n"
    "process_cpu_seconds_total 12.5\n";

static void test_vllm_page(void **state)
{
    (void)state;
    struct mp_loadgen_scrape s;
    memset(&s, 0, sizeof(s));
    s.t_ns = 42;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_prom_sample(VLLM, strlen(VLLM), &s, &d), 0);
    assert_int_equal(s.t_ns, 42);
    assert_true(s.have & (1u << MP_LOADGEN_EM_RUNNING));
    assert_true(fabs(s.v[MP_LOADGEN_EM_RUNNING] - 5) < 1e-12);      /* summed */
    assert_true(fabs(s.v[MP_LOADGEN_EM_KV_USAGE] - 0.375) < 1e-12); /* averaged */
    assert_true(fabs(s.v[MP_LOADGEN_EM_PREFIX_QUERIES] - 1234) < 1e-9);
    assert_true(fabs(s.v[MP_LOADGEN_EM_PREFIX_HITS] - 1000) < 1e-9);
    assert_true(fabs(s.v[MP_LOADGEN_EM_SPEC_ACCEPTED] - 21) < 1e-9);
    assert_true(fabs(s.v[MP_LOADGEN_EM_PREEMPTIONS] - 2) < 1e-9);
    assert_false(s.have & (1u << MP_LOADGEN_EM_PROMPT_TOKENS));
    assert_string_equal(mp_loadgen_engine_metric_name(MP_LOADGEN_EM_KV_USAGE), "kv_cache_usage");
}

static const char SGLANG[] = "# HELP sglang:token_usage The token usage\n"
                             "# TYPE sglang:token_usage gauge\n"
                             "sglang:token_usage{model_name=\"m\",tp_rank=\"0\"} 0.5\n"
                             "sglang:num_running_reqs{model_name=\"m\"} 7\n"
                             "sglang:num_queue_reqs{model_name=\"m\"} 1\n"
                             "sglang:cache_hit_rate{model_name=\"m\"} 0.8\n"
                             "sglang:spec_accept_length{model_name=\"m\"} NaN\n"
                             "sglang:prompt_tokens_total{model_name=\"m\"} 100\r\n";

static void test_sglang_page(void **state)
{
    (void)state;
    struct mp_loadgen_scrape s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(mp_loadgen_prom_sample(SGLANG, strlen(SGLANG), &s, NULL), 0);
    assert_true(fabs(s.v[MP_LOADGEN_EM_KV_USAGE] - 0.5) < 1e-12);
    assert_true(fabs(s.v[MP_LOADGEN_EM_RUNNING] - 7) < 1e-12);
    assert_true(fabs(s.v[MP_LOADGEN_EM_WAITING] - 1) < 1e-12);
    assert_true(fabs(s.v[MP_LOADGEN_EM_PREFIX_HIT_RATE] - 0.8) < 1e-12);
    assert_true(fabs(s.v[MP_LOADGEN_EM_PROMPT_TOKENS] - 100) < 1e-12);
    assert_false(s.have & (1u << MP_LOADGEN_EM_SPEC_ACCEPT_LEN)); /* NaN: not a value */
}

struct count {
    int n;
    double last;
};

static int counter(const char *name, size_t n, double v, void *user)
{
    (void)name;
    (void)n;
    struct count *c = user;
    c->n++;
    c->last = v;
    return 0;
}

static void test_syntax(void **state)
{
    (void)state;
    static const char ok[] = "\n  # a comment\n"
                             "a{b=\"x\\\"y\\\\z\\n\",} +Inf 1700000000000\n"
                             "b -Inf\n"
                             "c{x=\"1\",y=\"\"} 1e-3 -5\n"
                             "d\t2.5\n";
    struct count c = {0, 0};
    assert_int_equal(mp_loadgen_prom_parse(ok, strlen(ok), counter, &c, NULL), 0);
    assert_int_equal(c.n, 4);
    assert_true(fabs(c.last - 2.5) < 1e-12);

    static const struct {
        const char *text;
        long line, col;
    } bad[] = {
        {"a 1\nb{c=\"x} 1\n", 2, 10},     /* unterminated label value */
        {"x 0x10\n", 1, 7},               /* hex is not Prometheus */
        {"x 1 2 3\n", 1, 7},              /* after the timestamp */
        {"x 1 1.5\n", 1, 6},              /* timestamp not an integer */
        {"x\n", 1, 2},                    /* no value */
        {"9x 1\n", 1, 1},                 /* name */
        {"x{9=\"a\"} 1\n", 1, 3},         /* label name */
        {"x{a=\"\\t\"} 1\n", 1, 6},       /* escape */
        {"x{a=\"b\" c=\"d\"} 1\n", 1, 9}, /* missing comma */
        {"x inf\n", 1, 6},                /* Go spells it +Inf */
        {"x{a=\"1\"}1\n", 1, 9},          /* no blank before the value */
    };

    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct mp_diag d;
        mp_diag_clear(&d);
        c.n = 0;
        int rc = mp_loadgen_prom_parse(bad[k].text, strlen(bad[k].text), counter, &c, &d);
        if (rc != MP_EPARSE || d.line != bad[k].line || d.col != bad[k].col)
            fail_msg("case %zu '%s': rc %d line %ld col %ld (%s)", k, bad[k].text, rc, d.line,
                     d.col, d.msg);
    }
    /* a NUL in a sample line, and an HTML error page, are refused */
    static const char nul[] = "x 1\0\n";
    assert_int_equal(mp_loadgen_prom_parse(nul, sizeof(nul) - 1, counter, &c, NULL), MP_EPARSE);
    static const char html[] = "<html><body>Not Found</body></html>\n";
    struct mp_loadgen_scrape s;
    assert_int_equal(mp_loadgen_prom_sample(html, strlen(html), &s, NULL), MP_EPARSE);
}

static int stop_at_two(const char *name, size_t n, double v, void *user)
{
    (void)name;
    (void)n;
    (void)v;
    return ++*(int *)user == 2 ? 5 : 0;
}

static void test_callback_stops(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(mp_loadgen_prom_parse("a 1\nb 2\nc 3\n", 12, stop_at_two, &n, NULL), 5);
    assert_int_equal(n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vllm_page),
        cmocka_unit_test(test_sglang_page),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_callback_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
