/* The benchmark YAML: values, defaults, errors with file:line:col, the
 * TraceLens and failure-bound keys, Magpie's AgentX keys and the capture
 * schedule, the example configs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/proc.h>
#include <magpie/serve.h>

#include "area.h"
#include "helpers.h"

void test_config_good(void **state)
{
    (void)state;
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_serve_config_load(&c, fx("good.yaml"), &d);
    if (rc)
        fail_msg("%s", d.msg);
    assert_int_equal(c.framework, MP_SERVE_VLLM);
    assert_string_equal(c.model, "meta-llama/Llama-3.1-8B-Instruct");
    assert_string_equal(c.precision, "bf16");
    assert_int_equal(c.run_mode, MP_SERVE_LOCAL);
    assert_string_equal(mp_serve_config_getenv(&c, "TP"), "2");
    assert_string_equal(mp_serve_config_getenv(&c, "RANDOM_RANGE_RATIO"), "0.8");
    /* keys are upper-cased, YAML booleans become Python's str() */
    assert_string_equal(mp_serve_config_getenv(&c, "EXTRA_VLLM_ARGS"),
                        "--dtype bfloat16 --max-num-seqs 64");
    assert_string_equal(mp_serve_config_getenv(&c, "ENABLE_X"), "True");
    assert_false(c.torch_profiler);
    assert_true(c.gpu_monitor);
    assert_true(c.gpu_monitor_interval_s == 1.5);
    assert_true(c.gap.start_pct == 10 && c.gap.end_pct == 90);
    assert_int_equal(c.gap.top_k, 5);
    assert_int_equal(c.gap.n_categories, 1);
    assert_string_equal(c.gap.categories[0], "kernel");
    assert_true(c.timeout_s == 1200);
    assert_true(c.gpu_min_free_gb == 20);
    assert_int_equal(c.n_gpu_candidates, 3);
    assert_int_equal(c.gpu_candidates[2], 3);
    assert_string_equal(c.docker_image, "vllm/vllm-openai:v0.19.1");
    assert_int_equal(mp_serve_config_validate(&c, &d), 0);
    assert_int_equal(mp_serve_config_run_kind(&c), MP_SERVE_KIND_MEASUREMENT);
    /* config.yaml written from it reads back to the same config, also for
     * env keys and values an agent chose (the MCP benchmark tool's
     * extra_envs): line breaks, quotes, DEL, U+2028 */
    assert_int_equal(mp_serve_config_setenv(&c, "K\nmodel: injected", "v\"\\\x7f\xe2\x80\xa8#x"),
                     0);
    struct mp_buf y;
    mp_buf_init(&y, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y), 0);
    struct mp_serve_config c2;
    mp_serve_config_init(&c2);
    rc = mp_serve_config_load_string(&c2, y.data, y.len, "config.yaml", &d);
    if (rc)
        fail_msg("%s:%ld:%ld %s\n%s", d.file, d.line, d.col, d.msg, mp_buf_cstr(&y));
    assert_string_equal(c2.model, c.model);
    assert_string_equal(mp_serve_config_getenv(&c2, "K\nmodel: injected"),
                        "v\"\\\x7f\xe2\x80\xa8#x");
    assert_int_equal(c2.n_envs, c.n_envs);
    for (int i = 0; i < c.n_envs; i++)
        assert_string_equal(c2.envs[i], c.envs[i]);
    assert_true(c2.gap.end_pct == 90 && c2.timeout_s == 1200);
    assert_int_equal(c2.n_gpu_candidates, 3);
    assert_false(c2.torch_profiler);
    mp_buf_fini(&y);
    mp_serve_config_fini(&c2);
    mp_serve_config_fini(&c);
}

void test_config_tracelens(void **state)
{
    (void)state;
    static const char y[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                            "    torch_profiler: {enabled: false}\n"
                            "    tracelens: {enabled: true, analysis_stages: [pd, decode_only],\n"
                            "                num_steps: 16, export_format: csv}\n";
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, y, sizeof(y) - 1, "t.yaml", &d), 0);
    assert_true(c.tracelens && c.torch_profiler); /* TraceLens turns the profiler on */
    assert_string_equal(c.tracelens_stages, "pd,decode_only");
    assert_int_equal(c.tracelens_num_steps, 16);
    assert_int_equal(mp_serve_config_run_kind(&c), MP_SERVE_KIND_DIAGNOSTIC);
    mp_serve_config_fini(&c);
    static const char bad[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                              "    tracelens: {enabled: true, analysis_stages: [warmup]}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, bad, sizeof(bad) - 1, "t.yaml", &d),
                     MP_EINVAL);
    assert_int_equal(d.line, 5);
    mp_serve_config_fini(&c);
    /* pytorch mode: no preprocessing, so the profiler stays as configured */
    static const char mode[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                               "    torch_profiler: {enabled: false}\n"
                               "    tracelens: {enabled: true, analysis_mode: pytorch,\n"
                               "                multi_rank_report_enabled: false,\n"
                               "                gpu_arch_config: /a.json}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, mode, sizeof(mode) - 1, "t.yaml", &d), 0);
    assert_int_equal(c.tracelens_mode, MP_SERVE_TL_PYTORCH);
    assert_false(mp_serve_tracelens_inference(&c));
    assert_false(c.torch_profiler);
    assert_false(c.tracelens_excel);
    assert_true(c.tracelens_perf_report);
    assert_false(c.tracelens_multi_rank);
    assert_string_equal(c.tracelens_gpu_arch_config, "/a.json");
    struct mp_buf y2;
    mp_buf_init(&y2, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y2), 0);
    assert_non_null(strstr(mp_buf_cstr(&y2), "analysis_mode: pytorch\n      export_format: csv\n"
                                             "      perf_report_enabled: true\n"
                                             "      multi_rank_report_enabled: false\n"));
    mp_buf_fini(&y2);
    mp_serve_config_fini(&c);
    /* "classic" is Magpie's alias; the legacy export_excel flag */
    static const char classic[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                                  "    tracelens: {enabled: true, analysis_mode: classic,\n"
                                  "                export_excel: true}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, classic, sizeof(classic) - 1, "t.yaml", &d),
                     0);
    assert_int_equal(c.tracelens_mode, MP_SERVE_TL_PYTORCH);
    assert_true(c.tracelens_excel);
    mp_serve_config_fini(&c);
    /* unknown mode and export format: errors at the value */
    static const char badmode[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                                  "    tracelens: {enabled: true, analysis_mode: torch}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, badmode, sizeof(badmode) - 1, "t.yaml", &d),
                     MP_EINVAL);
    assert_int_equal(d.line, 5);
    assert_non_null(strstr(d.msg, "pytorch"));
    mp_serve_config_fini(&c);
    static const char badfmt[] = "benchmark:\n  framework: vllm\n  model: m\n  profiler:\n"
                                 "    tracelens: {enabled: true, analysis_mode: pytorch,\n"
                                 "                export_format: parquet}\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, badfmt, sizeof(badfmt) - 1, "t.yaml", &d),
                     MP_EINVAL);
    assert_int_equal(d.line, 6);
    mp_serve_config_fini(&c);
}

/* max_failed_requests: a count or a percentage, checked at the value */
void test_config_max_failed(void **state)
{
    (void)state;
    struct mp_serve_config c;
    struct mp_diag d;
    mp_serve_config_init(&c);
    assert_false(c.max_failed.percent);
    assert_true(c.max_failed.value == 0); /* default: any failure fails the run */
    static const char pct[] = "benchmark:\n  framework: vllm\n  model: m\n"
                              "  max_failed_requests: 0.5%\n";
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, pct, sizeof(pct) - 1, "t.yaml", &d), 0);
    assert_true(c.max_failed.percent);
    assert_true(c.max_failed.value == 0.5);
    struct mp_buf y;
    mp_buf_init(&y, 0);
    assert_int_equal(mp_serve_config_yaml(&c, &y), 0);
    assert_non_null(strstr(mp_buf_cstr(&y), "max_failed_requests: \"0.5%\"\n"));
    mp_buf_fini(&y);
    mp_serve_config_fini(&c);
    static const char cnt[] = "benchmark:\n  framework: vllm\n  model: m\n"
                              "  max_failed_requests: 3\n";
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load_string(&c, cnt, sizeof(cnt) - 1, "t.yaml", &d), 0);
    assert_false(c.max_failed.percent);
    assert_true(c.max_failed.value == 3);
    mp_serve_config_fini(&c);
    static const char *const bad[] = {"-1", "1.5", "150%", "lots", "3 %"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char y2[200];
        int n = snprintf(y2, sizeof(y2),
                         "benchmark:\n  framework: vllm\n  model: m\n"
                         "  max_failed_requests: \"%s\"\n",
                         bad[i]);
        mp_serve_config_init(&c);
        mp_diag_clear(&d);
        if (mp_serve_config_load_string(&c, y2, (size_t)n, "t.yaml", &d) != MP_EINVAL ||
            d.line != 4)
            fail_msg("max_failed_requests '%s' accepted or misplaced (line %ld)", bad[i], d.line);
        mp_serve_config_fini(&c);
    }
}

/* Loading fixture name fails with code at line:col naming field. */
static void expect_error(const char *name, int code, long line, long col, const char *needle)
{
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_serve_config_load(&c, fx(name), &d);
    if (rc == 0)
        rc = mp_serve_config_validate(&c, &d);
    if (rc != code || d.line != line || d.col != col || !strstr(d.msg, needle))
        fail_msg("%s: rc %d line %ld col %ld msg '%s' field '%s'", name, rc, d.line, d.col, d.msg,
                 d.field);
    assert_non_null(strstr(d.file, name));
    mp_serve_config_fini(&c);
}

void test_config_errors(void **state)
{
    (void)state;
    expect_error("bad_framework.yaml", MP_EINVAL, 3, 14, "tgi");
    expect_error("bad_timeout.yaml", MP_EINVAL, 4, 20, "");
    expect_error("bad_window.yaml", MP_EINVAL, 6, 20, "trace_start_pct < trace_end_pct");
    expect_error("bad_envs.yaml", MP_EINVAL, 4, 9, "mapping");
    struct mp_serve_config c;
    struct mp_diag d;
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load(&c, fx("no_benchmark.yaml"), &d), MP_EINVAL);
    assert_string_equal(d.field, "benchmark");
    mp_serve_config_fini(&c);
    /* measurement cannot be profiled (the YAML default turns the profiler on) */
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_load(&c, fx("measurement_profiled.yaml"), &d), 0);
    assert_true(c.torch_profiler);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "run_kind");
    mp_serve_config_fini(&c);
    /* envs that must be integers */
    mp_serve_config_init(&c);
    c.model = "m";
    mp_serve_config_setenv(&c, "CONC", "lots");
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "CONC");
    mp_serve_config_fini(&c);
    /* ray is refused, no model is refused */
    mp_serve_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    c.model = "m";
    c.run_mode = MP_SERVE_RAY;
    assert_int_equal(mp_serve_config_validate(&c, NULL), MP_EUNSUP);
    mp_serve_config_fini(&c);
}

/* The example configs load and validate as shipped. */
void test_examples(void **state)
{
    (void)state;
    static const char *const names[] = {"vllm_local.yaml", "vllm_profiled.yaml",
                                        "sglang_docker.yaml", "declared_engine.yaml"};
    const char *src = getenv("MP_SRC");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/examples/benchmark/%s", src ? src : ".", names[i]);
        struct mp_serve_config c;
        mp_serve_config_init(&c);
        struct mp_diag d;
        mp_diag_clear(&d);
        int rc = mp_serve_config_load(&c, path, &d);
        if (!rc)
            rc = mp_serve_config_validate(&c, &d);
        if (rc)
            fail_msg("%s: %s", path, d.msg);
        mp_serve_config_fini(&c);
    }
}

/* Magpie's AgentX keys and the capture schedule: defaults, both spellings,
 * the vLLM step bound, config.yaml round trip, errors with line:col */
void test_config_captures(void **state)
{
    (void)state;
    struct mp_serve_config c;
    struct mp_diag d;
    /* no schedule key: one window, Magpie's AgentX defaults kept */
    load_yaml(&c, "benchmark:\n  framework: vllm\n  model: m\n", 0, &d);
    assert_false(mp_serve_captures_on(&c));
    assert_int_equal(c.capture.num_steps, 20);
    assert_int_equal(c.capture.num_profiles, 1);
    assert_true(c.capture.interval_s == 200 && c.capture.start_s == 0);
    mp_serve_config_fini(&c);
    /* agentx on: the profiler off unless asked (Magpie); the flat MCP names */
    const char *ax =
        "benchmark:\n  framework: vllm\n  model: m\n"
        "  agentx: {enabled: true, mode: fast, trace_file: /dev/null, concurrency: 6}\n"
        "  torch_profiler_count: 4\n  torch_profiler_start_seconds: 1.5\n";
    load_yaml(&c, ax, 0, &d);
    assert_true(c.agentx.enabled && c.agentx.fast && c.agentx.fixed_schedule);
    assert_false(c.torch_profiler);
    assert_false(mp_serve_captures_on(&c));
    assert_string_equal(mp_serve_config_getenv(&c, "CONC"), "6");
    assert_int_equal(c.capture.num_profiles, 4);
    assert_true(c.capture.start_s == 1.5);
    assert_int_equal(mp_serve_config_run_kind(&c), MP_SERVE_KIND_DIAGNOSTIC);
    c.run_kind = MP_SERVE_KIND_MEASUREMENT;
    assert_int_equal(mp_serve_config_validate(&c, &d), MP_EINVAL);
    assert_string_equal(d.field, "agentx.mode");
    mp_serve_config_fini(&c);
    /* nested keys, the vLLM launch bounded to num_steps, TraceLens window
     * flags left out, config.yaml reads back */
    const char *tp = "benchmark:\n  framework: vllm\n  model: m\n"
                     "  agentx: {enabled: true, trace_file: /dev/null}\n"
                     "  agentx_mode: canonical\n  profiler:\n    tracelens: {enabled: true}\n"
                     "    torch_profiler:\n      enabled: true\n      num_steps: 7\n"
                     "      num_profiles: 2\n      interval_seconds: 0\n"
                     "      detailed_annotations: true\n";
    load_yaml(&c, tp, 0, &d);
    assert_true(mp_serve_captures_on(&c));
    struct mp_serve_plan p = {.vendor = MP_GPU_VENDOR_NVIDIA, .port = 8000, .trace_dir = "/t"};
    struct mp_serve_cmd cmd;
    struct mp_buf a, e;
    mp_buf_init(&a, 0);
    mp_buf_init(&e, 0);
    assert_int_equal(mp_serve_engine_cmd(&c, &p, &cmd, NULL), 0);
    joined(&cmd, &a, &e);
    assert_non_null(strstr(mp_buf_cstr(&a), "--profiler-config.detailed_trace_annotation True "
                                            "--profiler-config.ignore_frontend True "
                                            "--profiler-config.max_iterations 7"));
    assert_null(strstr(mp_buf_cstr(&a), "delay_iterations"));
    mp_serve_cmd_fini(&cmd);
    mp_buf_reset(&a);
    assert_int_equal(mp_serve_config_yaml(&c, &a), 0);
    struct mp_serve_config c2;
    mp_serve_config_init(&c2);
    assert_int_equal(mp_serve_config_load_string(&c2, a.data, a.len, "config.yaml", &d), 0);
    assert_true(mp_serve_captures_on(&c2));
    assert_int_equal(c2.capture.num_steps, 7);
    assert_int_equal(c2.capture.num_profiles, 2);
    assert_true(c2.capture.interval_s == 0 && c2.capture.detailed_annotations);
    assert_true(c2.agentx.enabled && !c2.agentx.fast);
    mp_serve_config_fini(&c2);
    mp_buf_fini(&a);
    mp_buf_fini(&e);
    mp_serve_config_fini(&c);

    /* errors: file:line:col and the field */
    static const struct {
        const char *yaml, *field;
        long line, col;
    } bad[] = {
        {"benchmark:\n  model: m\n  profiler:\n    torch_profiler: {num_profiles: 0}\n",
         "num_profiles", 4, 36},
        {"benchmark:\n  model: m\n  torch_profiler_interval_seconds: -2\n",
         "torch_profiler_interval_seconds", 3, 36},
        {"benchmark:\n  model: m\n  torch_profiler_steps: 3\n  profiler:\n"
         "    torch_profiler: {num_steps: 4}\n",
         "torch_profiler_steps", 3, 25},
        {"benchmark:\n  model: m\n  agentx: {enabled: true, mode: quick, trace_file: /dev/null}\n",
         "agentx.mode", 3, 33},
        {"benchmark:\n  model: m\n  agentx: {enabled: true}\n", "agentx.trace_file", 3, 11},
        {"benchmark:\n  model: m\n  agentx: [1]\n", "agentx", 3, 11},
        {"benchmark:\n  model: m\n  agentx: true\n", "agentx.trace_file", 3, 11},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        load_yaml(&c, bad[i].yaml, MP_EINVAL, &d);
        assert_string_equal(d.field, bad[i].field);
        assert_int_equal(d.line, bad[i].line);
        assert_int_equal(d.col, bad[i].col);
        mp_serve_config_fini(&c);
    }
}

/* prefix_cache: default, on, off; another value is refused at the value
 * with file:line:col; config.yaml keeps it when not default */
void test_config_prefix_cache(void **state)
{
    (void)state;
    static const char *const vals[] = {"default", "on", "off"};
    struct mp_serve_config c;
    struct mp_diag d;
    char y[256];
    for (int i = 0; i < 3; i++) {
        snprintf(y, sizeof(y), "benchmark:\n  framework: sglang\n  model: m\n  prefix_cache: %s\n",
                 vals[i]);
        load_yaml(&c, y, 0, &d);
        assert_int_equal(c.prefix_cache, (enum mp_serve_prefix_cache)i);
        assert_string_equal(mp_serve_prefix_cache_name(c.prefix_cache), vals[i]);
        struct mp_buf b;
        mp_buf_init(&b, 0);
        assert_int_equal(mp_serve_config_yaml(&c, &b), 0);
        snprintf(y, sizeof(y), "\n  prefix_cache: %s\n", vals[i]);
        assert_true((strstr(mp_buf_cstr(&b), y) != NULL) == (i != 0));
        mp_buf_fini(&b);
        mp_serve_config_fini(&c);
    }
    load_yaml(&c, "benchmark:\n  framework: sglang\n  model: m\n", 0, &d);
    assert_int_equal(c.prefix_cache, MP_SERVE_PC_DEFAULT);
    mp_serve_config_fini(&c);
    load_yaml(&c, "benchmark:\n  framework: sglang\n  model: m\n  prefix_cache: yes\n", MP_EINVAL,
              &d);
    assert_string_equal(d.file, "a.yaml");
    assert_int_equal(d.line, 4);
    assert_int_equal(d.col, 17);
    assert_string_equal(d.field, "prefix_cache");
    assert_non_null(strstr(d.msg, "default, on or off"));
    mp_serve_config_fini(&c);
}
