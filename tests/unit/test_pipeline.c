/* Unit tests for src/pipeline (include/magpie/pipeline.h): the stage list
 * (Magpie's aliases, order, repeats, errors) and mp_stages_run on a small
 * generated serving trace whose steps are chosen so that each of Magpie's
 * pick rules decides something: the largest batch per stage, for decode the
 * concurrency closest to CONC, then the median GPU busy time; plus the
 * files of each stage and the input errors (no trace, no annotations). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include <magpie/pipeline.h>

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/mp_pipeline_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1; // NOLINT(cert-env33-c): removes the test's own directory
}

static void expect_list(const char *list, int want_n, const int *want)
{
    int st[8] = {0}, n = -1;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_stages_parse_list(list, st, &n, &d), 0);
    assert_int_equal(n, want_n);
    for (int i = 0; i < n && i < want_n; i++)
        assert_int_equal(st[i], want[i]);
}

/* 0 prefilldecode, 1 decode, 2 prefill: in the order given, each once */
static void test_parse_list(void **state)
{
    (void)state;
    expect_list(NULL, 3, (const int[]){0, 1, 2});
    expect_list("", 3, (const int[]){0, 1, 2});
    expect_list("decode", 1, (const int[]){1});
    expect_list("prefill,pd", 2, (const int[]){2, 0});
    expect_list(" Prefill-Only , MIXED,decode_only", 3, (const int[]){2, 0, 1});
    expect_list("pd,mixed,prefilldecode,prefill_decode,prefill-decode", 1, (const int[]){0});
    expect_list(",,decode-only,,decode,", 1, (const int[]){1});
    expect_list(",", 0, NULL);
    int st[8], n;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_stages_parse_list("decode,prefil", st, &n, &d), MP_EINVAL);
    assert_string_equal(d.field, "stages");
    assert_non_null(strstr(d.msg, "'prefil'"));
}

/* One step of the generated trace: its annotation and the GPU time of its
 * one kernel (so its gpu_busy_duration). */
struct gstep {
    const char *name;
    int kernel_us;
};

/* A vLLM rank-0 trace: per step a user_annotation on the CPU thread with an
 * aten::mm inside, its launch, and its kernel on stream 7 linked by
 * correlation id and an ac2g flow. */
static void write_trace(const char *path, const struct gstep *steps, size_t n)
{
    gzFile f = gzopen(path, "wb");
    assert_non_null(f);
    gzputs(f, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA "
              "H200\"}], \"traceEvents\": [\n");
    for (size_t i = 0; i < n; i++) {
        long ts = 1000 + (long)i * 1000, corr = 100 + (long)i;
        gzprintf(f,
                 "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", \"pid\": 1, "
                 "\"tid\": 1, \"ts\": %ld, \"dur\": 500},\n",
                 steps[i].name, ts);
        gzprintf(f,
                 "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, "
                 "\"tid\": 1, \"ts\": %ld, \"dur\": 20, \"args\": {\"External id\": %ld, "
                 "\"Input Dims\": [[8, 64], [64, 128]], \"Input type\": [\"c10::BFloat16\", "
                 "\"c10::BFloat16\"], \"Input Strides\": [[64, 1], [128, 1]]}},\n",
                 ts + 5, corr);
        gzprintf(f,
                 "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                 "\"pid\": 1, \"tid\": 1, \"ts\": %ld, \"dur\": 5, \"args\": {\"correlation\": "
                 "%ld}},\n",
                 ts + 10, corr);
        gzprintf(f,
                 "{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %ld, \"pid\": 1, "
                 "\"tid\": 1, \"ts\": %ld},\n"
                 "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %ld, \"pid\": 0, "
                 "\"tid\": 7, \"ts\": %ld, \"bp\": \"e\"},\n",
                 corr, ts + 10, corr, ts + 20);
        gzprintf(f,
                 "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"step_kernel_%zu\", \"pid\": 0, "
                 "\"tid\": 7, \"ts\": %ld, \"dur\": %d, \"args\": {\"correlation\": %ld, "
                 "\"stream\": 7, \"device\": 0}},\n",
                 i, ts + 20, steps[i].kernel_us, corr);
    }
    gzputs(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": "
              "\"python\"}}\n]}\n");
    assert_int_equal(gzclose(f), Z_OK);
}

/* Runs the stages on dir/torch_trace (created with the steps) into dir. */
static int run_stages(const char *dir, const struct gstep *steps, size_t n, const char *stages,
                      const char *conc, json_t **out, struct mp_diag *d)
{
    char td[256], trace[320];
    snprintf(td, sizeof(td), "%s/%s/torch_trace", tmpdir, dir);
    assert_int_equal(mp_fs_mkdirs(td, d), 0);
    if (steps) {
        snprintf(trace, sizeof(trace), "%s/rank-0.pt.trace.json.gz", td);
        write_trace(trace, steps, n);
    }
    char od[256];
    snprintf(od, sizeof(od), "%s/%s", tmpdir, dir);
    struct mp_stages_opts o = {0};
    o.trace_dir = td;
    o.output_dir = od;
    o.stages = stages;
    o.num_steps = 4;
    o.isl = "100";
    o.osl = "8";
    o.conc = conc;
    struct mp_buf json;
    mp_buf_init(&json, 0);
    mp_diag_clear(d);
    int rc = mp_stages_run(&o, &json, d);
    json_error_t je;
    *out = json.len ? json_loadb(json.data, json.len, 0, &je) : NULL;
    mp_buf_fini(&json);
    return rc;
}

/* vLLM's native annotations: execute_context_<requests>(<tokens>)_generation_
 * <requests>(<tokens>); the batch is the tokens, the concurrency the
 * requests. The kernel times tell the picks apart. */
static const struct gstep steps[] = {
    {"execute_context_1(100)_generation_0(0)", 11}, /* 0 prefill, bs 100 */
    {"execute_context_0(0)_generation_8(8)", 25},   /* 1 decode, bs 8, conc 8 */
    {"execute_context_1(100)_generation_3(3)", 13}, /* 2 prefill-decode, bs 103 */
    {"execute_context_0(0)_generation_4(8)", 30},   /* 3 decode, bs 8, conc 4 */
    {"execute_context_0(0)_generation_4(8)", 10},   /* 4 decode, bs 8, conc 4 */
    {"execute_context_0(0)_generation_4(8)", 20},   /* 5 decode, bs 8, conc 4 */
    {"execute_context_2(200)_generation_0(0)", 16}, /* 6 prefill, bs 200 */
    {"execute_context_0(0)_generation_2(2)", 17},   /* 7 decode, bs 2 */
    {"execute_context_1(50)_generation_2(2)", 18},  /* 8 prefill-decode, bs 52 */
};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static json_t *pick_of(json_t *j, const char *stage)
{
    json_t *p = json_object_get(json_object_get(j, "phase_picks"), stage);
    assert_non_null(p);
    return p;
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* the pick's batch, concurrency and busy time (the step's one kernel) */
static void expect_pick(json_t *j, const char *stage, double bs, double conc, double busy)
{
    json_t *p = pick_of(j, stage);
    assert_true(num(p, "batch_size") == bs);
    assert_true(num(p, "phase_avg_conc") == conc);
    assert_true(num(p, "gpu_busy_duration") == busy);
    assert_true(num(p, "num_gpu_events") >= 1);
    assert_true(json_is_string(json_object_get(p, "trace_path")));
}

/* tmpdir/dir/rel exists (want) or not */
static void expect_file(const char *dir, const char *rel, bool want)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s/%s", tmpdir, dir, rel);
    if (mp_fs_exists(p) != want)
        fail_msg("%s: %s", p, want ? "missing" : "should not exist");
}

/* Each stage's pick: the largest batch; for decode, among those, the
 * concurrency closest to CONC; then the median busy time (the upper one of
 * an even count). Every stage gets its report and compact CSV. */
static void test_run_picks(void **state)
{
    (void)state;
    struct mp_diag d;
    json_t *j = NULL;
    int rc = run_stages("conc4", steps, NSTEPS, NULL, "4", &j, &d);
    if (rc)
        print_message("rc %d: %s %s\n", rc, d.file, d.msg);
    assert_int_equal(rc, 0);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "errors")), 0);
    expect_pick(j, "prefilldecode", 103, 4, 13);
    expect_pick(j, "prefill", 200, 2, 16);
    expect_pick(j, "decode", 8, 4, 20); /* steps 3, 4, 5: busy 30, 10, 20 */
    json_t *res = json_object_get(j, "stage_results");
    assert_int_equal(json_object_size(res), 3);
    static const char *const labels[] = {"prefilldecode", "decode_only", "prefill_only"};
    for (size_t i = 0; i < 3; i++) {
        char rel[256];
        snprintf(rel, sizeof(rel), "tracelens/%s/report.html", labels[i]);
        expect_file("conc4", rel, true);
        snprintf(rel, sizeof(rel), "tracelens/%s_ISL100_OSL8_CONC4_kernel_roofline_simple.csv",
                 labels[i]);
        expect_file("conc4", rel, true);
    }
    expect_file("conc4", "tracelens/tracelens_analysis.json", true);
    /* the compact CSV lists the picked step's op and its 20 us kernel */
    char p[512], line[4096] = "";
    snprintf(p, sizeof(p),
             "%s/conc4/tracelens/decode_only_ISL100_OSL8_CONC4_kernel_roofline_simple.csv", tmpdir);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    size_t got = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[got] = '\0';
    assert_non_null(strstr(line, "\nGEMM,aten::mm,\"M=8,N=128,K=64,"));
    assert_non_null(strstr(line, ",1,1,0.02,100.0,20.0,"));
    json_decref(j);

    /* CONC 8: only step 1 has it */
    assert_int_equal(run_stages("conc8", steps, NSTEPS, "decode", "8", &j, &d), 0);
    expect_pick(j, "decode", 8, 8, 25);
    json_decref(j);
    /* no CONC: all four bs-8 decode steps, busy 10 20 25 30 -> 25 */
    assert_int_equal(run_stages("noconc", steps, NSTEPS, "decode", NULL, &j, &d), 0);
    expect_pick(j, "decode", 8, 8, 25);
    json_decref(j);
}

/* Only the stages asked for get a report, in the order asked; a stage
 * without a candidate is a warning, not an error. */
static void test_run_stage_subset(void **state)
{
    (void)state;
    struct mp_diag d;
    json_t *j = NULL;
    assert_int_equal(run_stages("subset", steps, NSTEPS, "prefill,decode", "4", &j, &d), 0);
    json_t *names = json_object_get(j, "analysis_stages");
    assert_int_equal(json_array_size(names), 2);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "prefill");
    assert_string_equal(json_string_value(json_array_get(names, 1)), "decode");
    assert_int_equal(json_object_size(json_object_get(j, "stage_results")), 2);
    expect_file("subset", "tracelens/prefill_only/report.html", true);
    expect_file("subset", "tracelens/decode_only/report.html", true);
    expect_file("subset", "tracelens/prefilldecode", false);
    json_decref(j);

    /* decode steps only: no prefill candidate */
    static const struct gstep dec[] = {{"execute_context_0(0)_generation_2(2)", 5},
                                       {"execute_context_0(0)_generation_2(2)", 6},
                                       {"execute_context_0(0)_generation_2(2)", 7}};
    assert_int_equal(run_stages("deconly", dec, 3, "prefill,decode", NULL, &j, &d), 0);
    assert_false(json_is_string(json_object_get(pick_of(j, "prefill"), "trace_path")));
    expect_pick(j, "decode", 2, 2, 6);
    json_t *w = json_object_get(j, "warnings");
    bool warned = false;
    for (size_t i = 0; i < json_array_size(w); i++)
        warned |= strstr(json_string_value(json_array_get(w, i)), "prefill: no candidate") != NULL;
    assert_true(warned);
    expect_file("deconly", "tracelens/prefill_only", false);
    json_decref(j);
}

/* Input errors: no directory, no trace in it, a trace without step
 * annotations; the JSON is still written as far as it got. */
static void test_run_errors(void **state)
{
    (void)state;
    struct mp_diag d;
    struct mp_stages_opts o = {0};
    o.trace_dir = "/nonexistent/magpie/torch_trace";
    struct mp_buf json;
    mp_buf_init(&json, 0);
    mp_diag_clear(&d);
    assert_int_equal(mp_stages_run(&o, &json, &d), MP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "trace directory not found"));
    o.stages = "bogus";
    mp_diag_clear(&d);
    assert_int_equal(mp_stages_run(&o, &json, &d), MP_EINVAL);
    mp_buf_fini(&json);

    json_t *j = NULL;
    assert_int_equal(run_stages("empty", NULL, 0, NULL, NULL, &j, &d), MP_ENOTFOUND);
    assert_non_null(j);
    const char *e = json_string_value(json_array_get(json_object_get(j, "errors"), 0));
    assert_non_null(e);
    assert_non_null(strstr(e, "Could not locate rank-0 trace"));
    json_decref(j);

    static const struct gstep flat[] = {{"not_a_step", 5}, {"not_a_step", 6}};
    int rc = run_stages("noann", flat, 2, NULL, NULL, &j, &d);
    assert_true(rc != 0 && rc != MP_ECHILD);
    assert_non_null(strstr(d.msg, "no inference step annotations"));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_list),
        cmocka_unit_test(test_run_picks),
        cmocka_unit_test(test_run_stage_subset),
        cmocka_unit_test(test_run_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
