/* Unit tests for the realistic-workload datasets of the loadgen
 * (docs/workloads.md): shared-prefix groups (vLLM prefix_repetition, SGLang
 * generated-shared-prefix) with token-identical prefixes, mooncake traces
 * (hash_id blocks, sessions, timestamps, slowdown), BurstGPT CSV, synthetic
 * multi-turn sessions, the send order with sessions, and the error messages
 * for bad files (file, line, field). Files are written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/loadgen.h>

#include "loadgen/loadgen_int.h"

static char *write_tmp(const char *content)
{
    char *path = strdup("/tmp/mp_loadgen_wl_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    return path;
}

/* tokens a and b have in common from the start */
static uint32_t common_ids(const struct mp_loadgen_prompt *a, const struct mp_loadgen_prompt *b)
{
    uint32_t k = 0;
    while (k < a->n_ids && k < b->n_ids && a->ids[k] == b->ids[k])
        k++;
    return k;
}

static void test_prefix_repetition(void **state)
{
    (void)state;
    struct mp_loadgen_prefix_opts o;
    mp_loadgen_prefix_opts_default(&o);
    o.prefix_len = 20;
    o.suffix_len = 10;
    o.num_groups = 3;
    o.output_len = 5;
    o.seed = 7;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_prefix_repetition(&o, 10, &ds, &d), 0);
    assert_int_equal(ds->n, 10);
    assert_string_equal(ds->name, "prefix_repetition");
    assert_true(ds->exact_lengths);
    /* the prompts fall into 3 groups (4, 3, 3) sharing exactly the prefix */
    int group[10], n_groups = 0, size[10] = {0};
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(ds->prompts[i].n_ids, 30);
        assert_int_equal(ds->prompts[i].prompt_len, 30);
        assert_int_equal(ds->prompts[i].output_len, 5);
        group[i] = -1;
        for (size_t j = 0; j < i && group[i] < 0; j++)
            if (common_ids(&ds->prompts[i], &ds->prompts[j]) >= 20)
                group[i] = group[j];
        if (group[i] < 0)
            group[i] = n_groups++;
        size[group[i]]++;
        for (size_t j = 0; j < i; j++) {
            uint32_t c = common_ids(&ds->prompts[i], &ds->prompts[j]);
            if (group[i] == group[j])
                assert_true(c >= 20 && c < 30);
            else
                assert_true(c < 20);
        }
    }
    assert_int_equal(n_groups, 3);
    assert_int_equal(size[0] + size[1] + size[2], 10);
    for (int g = 0; g < 3; g++)
        assert_true(size[g] == 3 || size[g] == 4);
    /* the same seed, the same prompts */
    struct mp_loadgen_dataset *ds2 = NULL;
    assert_int_equal(mp_loadgen_dataset_prefix_repetition(&o, 10, &ds2, &d), 0);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(common_ids(&ds->prompts[i], &ds2->prompts[i]), 30);
    mp_loadgen_dataset_free(ds2);
    mp_loadgen_dataset_free(ds);
    /* fewer prompts than prefixes */
    assert_int_equal(mp_loadgen_dataset_prefix_repetition(&o, 2, &ds, &d), MP_EINVAL);
    assert_null(ds);
}

static void test_shared_prefix(void **state)
{
    (void)state;
    struct mp_loadgen_prefix_opts o;
    mp_loadgen_prefix_opts_default(&o);
    o.prefix_len = 16;
    o.suffix_len = 4;
    o.num_groups = 2;
    o.output_len = 8;
    o.ordered = true;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_shared_prefix(&o, 3, &ds, &d), 0);
    assert_int_equal(ds->n, 6);
    assert_string_equal(ds->name, "generated-shared-prefix");
    /* ordered: 0-2 are group 0, 3-5 group 1 */
    assert_true(common_ids(&ds->prompts[0], &ds->prompts[2]) >= 16);
    assert_true(common_ids(&ds->prompts[3], &ds->prompts[5]) >= 16);
    assert_true(common_ids(&ds->prompts[2], &ds->prompts[3]) < 16);
    mp_loadgen_dataset_free(ds);
    /* chat: words; the shared prefix is the same text */
    o.text = true;
    assert_int_equal(mp_loadgen_dataset_shared_prefix(&o, 2, &ds, &d), 0);
    assert_non_null(ds->prompts[0].text);
    assert_null(ds->prompts[0].ids);
    assert_false(ds->exact_lengths);
    const char *a = ds->prompts[0].text, *b = ds->prompts[1].text;
    int spaces = 0;
    size_t k = 0;
    while (a[k] && a[k] == b[k]) {
        spaces += a[k] == ' ';
        k++;
    }
    assert_true(spaces >= 15); /* 16 words in common */
    mp_loadgen_dataset_free(ds);
    o.num_groups = 0;
    assert_int_equal(mp_loadgen_dataset_shared_prefix(&o, 2, &ds, &d), MP_EINVAL);
}

static const char TRACE[] =
    "{\"timestamp\": 1000, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": [0, 1, 2]}\n"
    "\n"
    "{\"timestamp\": 1500, \"input_length\": 12, \"output_length\": 2, \"hash_ids\": [0, 1, 7], "
    "\"session_id\": \"s1\"}\n"
    "{\"timestamp\": 1200, \"input_length\": 4, \"output_length\": 9, \"hash_ids\": [5]}\n"
    "{\"timestamp\": 2500, \"input_length\": 20, \"output_length\": 4, \"hash_ids\": [0, 1, 7, "
    "8], \"session_id\": \"s1\", \"delay\": 250}\n";

/* the workloads whose prompts share prefixes (the serve module warns when
 * they meet an engine without its prefix cache) */
static void test_shares_prefixes(void **state)
{
    (void)state;
    const char *yes[] = {"prefix_repetition", "generated-shared-prefix", "gsp", "multi_turn",
                         "mooncake",          "mooncake_trace"};
    const char *no[] = {"random", "sharegpt", "jsonl", "burstgpt", "", "gsp2", "mooncake_"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_true(mp_loadgen_workload_shares_prefixes(yes[i]));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(mp_loadgen_workload_shares_prefixes(no[i]));
    assert_false(mp_loadgen_workload_shares_prefixes(NULL));
}

static void test_mooncake(void **state)
{
    (void)state;
    char *p = write_tmp(TRACE);
    struct mp_loadgen_trace_opts o;
    mp_loadgen_trace_opts_default(&o);
    o.path = p;
    o.block_size = 4;
    o.slowdown = 2;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_mooncake(&o, &ds, &d), 0);
    assert_int_equal(ds->n, 4);
    assert_string_equal(ds->name, "mooncake");
    /* time order: 1000, 1200, 1500, 2500 ms; offsets from the first, x2 */
    assert_int_equal(ds->prompts[0].n_ids, 10);
    assert_int_equal(ds->prompts[1].n_ids, 4);
    assert_int_equal(ds->prompts[2].n_ids, 12);
    assert_int_equal(ds->prompts[3].n_ids, 20);
    assert_int_equal(ds->prompts[1].output_len, 9);
    assert_true(fabs(ds->arrival_s[0]) < 1e-12);
    assert_true(fabs(ds->arrival_s[1] - 0.4) < 1e-12);
    assert_true(fabs(ds->arrival_s[2] - 1.0) < 1e-12);
    assert_true(fabs(ds->arrival_s[3] - 3.0) < 1e-12);
    /* blocks: [0, 1] shared by 0, 2 and 3 (8 tokens); 2 and 3 share [0, 1, 7] */
    assert_int_equal(common_ids(&ds->prompts[0], &ds->prompts[2]), 8);
    assert_int_equal(common_ids(&ds->prompts[2], &ds->prompts[3]), 12);
    assert_int_equal(common_ids(&ds->prompts[0], &ds->prompts[1]), 0);
    /* a partial last block is the block's start: 0's 10 tokens = [0, 1] + 2 of [2] */
    assert_int_equal(common_ids(&ds->prompts[0], &ds->prompts[3]), 8);
    /* the session: 2 then 3, 250 ms think time */
    assert_non_null(ds->prev);
    assert_int_equal(ds->prev[0], -1);
    assert_int_equal(ds->prev[1], -1);
    assert_int_equal(ds->prev[2], -1);
    assert_int_equal(ds->prev[3], 2);
    assert_true(fabs(ds->think_s[3] - 0.25) < 1e-12);
    assert_int_equal(ds->session[2], ds->session[3]);
    assert_int_equal(ds->session[0], -1);
    assert_false(ds->history);
    mp_loadgen_dataset_free(ds);
    /* the first N in time order */
    o.max_prompts = 2;
    assert_int_equal(mp_loadgen_dataset_mooncake(&o, &ds, &d), 0);
    assert_int_equal(ds->n, 2);
    assert_int_equal(ds->prompts[1].n_ids, 4);
    mp_loadgen_dataset_free(ds);
    unlink(p);
    free(p);
}

/* each bad line: exit code, line and field of the diag */
static void test_mooncake_errors(void **state)
{
    (void)state;

    static const struct {
        const char *text;
        int rc;
        long line;
        const char *field;
    } cases[] = {
        {"{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}\n{\"timestamp\": 2, "
         "\"output_length\": 1}\n",
         MP_EINVAL, 2, "input_length"},
        {"{\"timestamp\": 1, \"input_length\": 4}\n", MP_EINVAL, 1, "output_length"},
        {"{\"input_length\": 4, \"output_length\": 1, \"hash_ids\": [1, -2]}\n", MP_EINVAL, 1,
         "hash_ids"},
        {"{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}\n{\"input_length\": 4, "
         "\"output_length\": 1}\n",
         MP_EINVAL, 2, "timestamp"},
        {"{\"timestamp\": -5, \"input_length\": 4, \"output_length\": 1}\n", MP_EINVAL, 1,
         "timestamp"},
        {"{\"input_length\": 4, \"output_length\": 1, \"session_id\": []}\n", MP_EINVAL, 1,
         "session_id"},
        {"\n\n{\"input_length\": 4, \n", MP_EPARSE, 3, ""},
        {"[1]\n", MP_EPARSE, 1, ""},
    };

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char *p = write_tmp(cases[k].text);
        struct mp_loadgen_trace_opts o;
        mp_loadgen_trace_opts_default(&o);
        o.path = p;
        struct mp_loadgen_dataset *ds = NULL;
        struct mp_diag d;
        mp_diag_clear(&d);
        assert_int_equal(mp_loadgen_dataset_mooncake(&o, &ds, &d), cases[k].rc);
        assert_null(ds);
        assert_int_equal(d.line, cases[k].line);
        assert_string_equal(d.field, cases[k].field);
        assert_string_equal(d.file, p);
        unlink(p);
        free(p);
    }
}

static void test_burstgpt(void **state)
{
    (void)state;
    char *p = write_tmp("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                        "5,ChatGPT,100,20,120,Conversation log\n"
                        "6,GPT-4,30,0,30,Conversation log\n"
                        "7.5,GPT-4,40,10,50,Conversation log\r\n"
                        "9,GPT-4,8,3,11,API log\n");
    struct mp_loadgen_trace_opts o;
    mp_loadgen_trace_opts_default(&o);
    o.path = p;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_burstgpt(&o, &ds, &d), 0);
    /* GPT-4 rows with a response */
    assert_int_equal(ds->n, 2);
    assert_int_equal(ds->prompts[0].n_ids, 40);
    assert_int_equal(ds->prompts[0].output_len, 10);
    assert_int_equal(ds->prompts[1].n_ids, 8);
    assert_true(fabs(ds->arrival_s[1] - 1.5) < 1e-12);
    assert_null(ds->prev);
    mp_loadgen_dataset_free(ds);
    o.model = "";
    assert_int_equal(mp_loadgen_dataset_burstgpt(&o, &ds, &d), 0);
    assert_int_equal(ds->n, 3);
    mp_loadgen_dataset_free(ds);
    unlink(p);
    free(p);
    p = write_tmp("Timestamp,Model,Request tokens,Response tokens\n1,GPT-4,12,x\n");
    o.path = p;
    assert_int_equal(mp_loadgen_dataset_burstgpt(&o, &ds, &d), MP_EINVAL);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 12); /* the start of the bad field */
    assert_string_equal(d.field, "Response tokens");
    unlink(p);
    free(p);
    p = write_tmp("Time,Model,Request tokens,Response tokens\n");
    o.path = p;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_burstgpt(&o, &ds, &d), MP_EPARSE);
    assert_int_equal(d.line, 1);
    assert_string_equal(d.field, "Timestamp");
    unlink(p);
    free(p);
}

static void test_multi_turn(void **state)
{
    (void)state;
    struct mp_loadgen_session_opts o = {3, 4, 5, 6, 100, 1, 0, 0};
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_multi_turn(&o, &ds, &d), 0);
    assert_int_equal(ds->n, 12);
    assert_true(ds->history);
    for (size_t i = 0; i < 12; i++) {
        assert_int_equal(ds->session[i], (int)(i / 4));
        assert_int_equal(ds->prev[i], i % 4 ? (int)i - 1 : -1);
        assert_true(fabs(ds->think_s[i] - (i % 4 ? 0.1 : 0)) < 1e-12);
        assert_int_equal(ds->prompts[i].prompt_len, 5);
        assert_int_equal(ds->prompts[i].output_len, 6);
        assert_non_null(ds->prompts[i].text);
    }
    mp_loadgen_dataset_free(ds);
    /* drawn turn counts and think times: every session at least one turn,
     * links within sessions, think times >= 0, the same draws for the seed */
    o.num_sessions = 50;
    o.turns_stddev = 2;
    o.think_stddev_ms = 80;
    assert_int_equal(mp_loadgen_dataset_multi_turn(&o, &ds, &d), 0);
    struct mp_loadgen_dataset *ds2 = NULL;
    assert_int_equal(mp_loadgen_dataset_multi_turn(&o, &ds2, &d), 0);
    assert_int_equal(ds->n, ds2->n);
    int counts[50] = {0}, distinct = 0;
    for (size_t i = 0; i < ds->n; i++) {
        assert_true(ds->session[i] >= 0 && ds->session[i] < 50);
        counts[ds->session[i]]++;
        assert_true(ds->prev[i] < 0 || ds->session[ds->prev[i]] == ds->session[i]);
        assert_true(ds->think_s[i] >= 0);
        assert_true(ds->think_s[i] == ds2->think_s[i]);
    }
    for (int k = 0; k < 50; k++) {
        assert_true(counts[k] >= 1);
        distinct += k && counts[k] != counts[0];
    }
    assert_true(distinct > 0); /* not all the same length */
    mp_loadgen_dataset_free(ds2);
    mp_loadgen_dataset_free(ds);
    o.turns = 0;
    assert_int_equal(mp_loadgen_dataset_multi_turn(&o, &ds, &d), MP_EINVAL);
}

static void test_sharegpt_sessions(void **state)
{
    (void)state;
    char *p = write_tmp(
        "[{\"conversations\": [{\"from\": \"human\", \"value\": \"hello there friend\"},"
        " {\"from\": \"gpt\", \"value\": \"hi how are you\"},"
        " {\"from\": \"human\", \"value\": \"fine thanks\"},"
        " {\"from\": \"gpt\", \"value\": \"good\"},"
        " {\"from\": \"human\", \"value\": \"no reply to this one\"}]},"
        " {\"conversations\": [{\"from\": \"system\", \"value\": \"be brief\"},"
        " {\"from\": \"human\", \"value\": \"one\"}, {\"from\": \"gpt\", \"value\": \"two\"}]},"
        " {\"conversations\": [{\"from\": \"human\", \"value\": \"unanswered\"}]}]");
    struct mp_loadgen_file_opts fo = {p, 0, 0, false, true};
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_dataset_sharegpt_sessions(&fo, 5, 250, &ds, &d), 0);
    /* answered human turns: 2 in the first conversation, 1 in the second */
    assert_int_equal(ds->n, 3);
    assert_true(ds->history);
    assert_string_equal(ds->prompts[0].text, "hello there friend");
    assert_int_equal(ds->prompts[0].prompt_len, 3);
    assert_int_equal(ds->prompts[0].output_len, 4); /* "hi how are you" */
    assert_string_equal(ds->prompts[1].text, "fine thanks");
    assert_int_equal(ds->prompts[1].output_len, 1);
    assert_string_equal(ds->prompts[2].text, "one");
    assert_int_equal(ds->prev[0], -1);
    assert_int_equal(ds->prev[1], 0);
    assert_int_equal(ds->prev[2], -1);
    assert_int_equal(ds->session[1], 0);
    assert_int_equal(ds->session[2], 1);
    assert_true(fabs(ds->think_s[1] - 0.25) < 1e-12);
    mp_loadgen_dataset_free(ds);
    /* one conversation asked for: the first */
    fo.output_len = 9;
    assert_int_equal(mp_loadgen_dataset_sharegpt_sessions(&fo, 1, 0, &ds, &d), 0);
    assert_int_equal(ds->n, 2);
    assert_int_equal(ds->prompts[1].output_len, 9);
    mp_loadgen_dataset_free(ds);
    unlink(p);
    free(p);
    p = write_tmp("[{\"conversations\": 3}]");
    fo.path = p;
    assert_int_equal(mp_loadgen_dataset_sharegpt_sessions(&fo, 1, 0, &ds, &d), MP_EINVAL);
    assert_string_equal(d.field, "conversations");
    assert_int_equal(d.line, 1);
    unlink(p);
    free(p);
}

/* The send order: without sessions the dataset's; with them a turn only
 * after the one before ended, then by arrival. */
static void test_sched(void **state)
{
    (void)state;
    struct mp_loadgen_prompt pr[4];
    memset(pr, 0, sizeof(pr));
    int32_t prev[4] = {-1, -1, 0, 2};
    double think[4] = {0, 0, 0.5, 0};
    struct mp_loadgen_dataset ds;
    memset(&ds, 0, sizeof(ds));
    ds.prompts = pr;
    ds.n = 4;
    uint64_t arr[4] = {10, 20, UINT64_MAX, UINT64_MAX};
    struct loadgen_sched s;
    size_t idx;
    uint64_t at;
    assert_int_equal(loadgen_sched_init(&s, &ds, arr, NULL, NULL), 0);
    for (size_t i = 0; i < 2; i++) {
        assert_true(loadgen_sched_peek(&s, &idx, &at));
        assert_int_equal(idx, i);
        loadgen_sched_pop(&s);
    }
    loadgen_sched_fini(&s);
    ds.prev = prev;
    ds.think_s = think;
    assert_int_equal(loadgen_sched_init(&s, &ds, arr, NULL, NULL), 0);
    assert_true(loadgen_sched_peek(&s, &idx, &at));
    assert_int_equal(idx, 0);
    loadgen_sched_pop(&s);
    assert_true(loadgen_sched_peek(&s, &idx, &at));
    assert_int_equal(idx, 1);
    loadgen_sched_pop(&s);
    assert_false(loadgen_sched_peek(&s, &idx, &at)); /* 2 waits for 0 */
    loadgen_sched_ended(&s, 1, 100);                 /* 1 has no next turn */
    assert_false(loadgen_sched_peek(&s, &idx, &at));
    loadgen_sched_ended(&s, 0, 1000);
    assert_true(loadgen_sched_peek(&s, &idx, &at));
    assert_int_equal(idx, 2);
    assert_int_equal(at, 1000 + 500000000ull);
    loadgen_sched_pop(&s);
    loadgen_sched_fini(&s);
    /* a recorded time later than end + think wins */
    uint64_t rec[4] = {10, 20, 5000000000ull, 0};
    arr[2] = arr[3] = UINT64_MAX;
    assert_int_equal(loadgen_sched_init(&s, &ds, arr, rec, NULL), 0);
    loadgen_sched_pop(&s);
    loadgen_sched_pop(&s);
    loadgen_sched_ended(&s, 0, 1000);
    assert_true(loadgen_sched_peek(&s, &idx, &at));
    assert_int_equal(at, 5000000000ull);
    loadgen_sched_fini(&s);
    /* a link forward or two turns after one are refused */
    int32_t bad[4] = {-1, 2, -1, -1};
    ds.prev = bad;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(loadgen_sched_init(&s, &ds, arr, NULL, &d), MP_EINVAL);
    int32_t twice[4] = {-1, 0, 0, -1};
    ds.prev = twice;
    assert_int_equal(loadgen_sched_init(&s, &ds, arr, NULL, &d), MP_EINVAL);
}

/* SGLang's prefix-cache counters, as its /metrics page gives them (text
 * taken from SGLang 0.5.23 on CPU, labels shortened): cached_tokens_total
 * per cache_source, absent before the first hit; prompt_tokens_total per
 * is_streaming. The delta over the run is hits / queries like vLLM's. */
static void test_sglang_prefix_counters(void **state)
{
    (void)state;
    static const char first[] =
        "# HELP sglang:prompt_tokens_total Number of prefill tokens processed.\n"
        "# TYPE sglang:prompt_tokens_total counter\n"
        "sglang:prompt_tokens_total{model_name=\"m\",is_streaming=\"true\"} 100.0\n"
        "# HELP sglang:cached_tokens_total Number of cached prompt tokens by source.\n"
        "# TYPE sglang:cached_tokens_total counter\n"
        "# TYPE sglang:cache_hit_rate gauge\n"
        "sglang:cache_hit_rate{model_name=\"m\"} 0.0\n";
    static const char last[] =
        "# TYPE sglang:prompt_tokens_total counter\n"
        "sglang:prompt_tokens_total{model_name=\"m\",is_streaming=\"true\"} 1000.0\n"
        "sglang:prompt_tokens_total{model_name=\"m\",is_streaming=\"false\"} 600.0\n"
        "# TYPE sglang:cached_tokens_total counter\n"
        "sglang:cached_tokens_total{model_name=\"m\",cache_source=\"device\"} 1100.0\n"
        "sglang:cached_tokens_total{model_name=\"m\",cache_source=\"host\"} 100.0\n"
        "sglang:cache_hit_rate{model_name=\"m\"} 0.97\n";
    struct mp_loadgen_scrape sc[2];
    memset(sc, 0, sizeof(sc));
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_loadgen_prom_sample(first, sizeof(first) - 1, &sc[0], &d), 0);
    assert_int_equal(mp_loadgen_prom_sample(last, sizeof(last) - 1, &sc[1], &d), 0);
    assert_true(sc[0].have & (1u << MP_LOADGEN_EM_PREFIX_QUERIES));
    assert_false(sc[0].have & (1u << MP_LOADGEN_EM_PREFIX_HITS));
    assert_true(sc[1].v[MP_LOADGEN_EM_PREFIX_HITS] == 1200);
    assert_true(sc[1].v[MP_LOADGEN_EM_PREFIX_QUERIES] == 1600);
    assert_true(sc[1].v[MP_LOADGEN_EM_PROMPT_TOKENS] == 1600);
    struct mp_loadgen_result r;
    memset(&r, 0, sizeof(r));
    r.scrapes = sc;
    r.n_scrapes = 2;
    struct loadgen_em_delta dl;
    loadgen_scrape_delta(&r, &dl);
    /* the hits counter had no sample at first: it started at 0 */
    assert_true(dl.v[MP_LOADGEN_EM_PREFIX_HITS] == 1200);
    assert_true(dl.v[MP_LOADGEN_EM_PREFIX_QUERIES] == 1500);
    assert_true(fabs(dl.hit_rate - 0.8) < 1e-12);
    /* a counter gone from the last scrape (an engine restart): no delta */
    r.scrapes = (struct mp_loadgen_scrape[]){sc[1], sc[0]};
    loadgen_scrape_delta(&r, &dl);
    assert_false(dl.have & (1u << MP_LOADGEN_EM_PREFIX_HITS));
    assert_true(isnan(dl.hit_rate));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_repetition), cmocka_unit_test(test_shared_prefix),
        cmocka_unit_test(test_shares_prefixes),   cmocka_unit_test(test_mooncake),
        cmocka_unit_test(test_mooncake_errors),   cmocka_unit_test(test_burstgpt),
        cmocka_unit_test(test_multi_turn),        cmocka_unit_test(test_sched),
        cmocka_unit_test(test_sharegpt_sessions), cmocka_unit_test(test_sglang_prefix_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
