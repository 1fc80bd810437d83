/* Unit tests for the YAML node tree (fmt/yaml.c) and the kernel configs
 * built on it (config/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/config.h>
#include <magpie/yaml.h>

static struct mp_yaml_doc *load(const char *text)
{
    struct mp_yaml_doc *doc = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_yaml_load_string(text, strlen(text), "t.yaml", &doc, &d);
    if (rc)
        fprintf(stderr, "load failed: %s at %ld:%ld\n", d.msg, d.line, d.col);
    assert_int_equal(rc, 0);
    return doc;
}

static void test_yaml_tree(void **state)
{
    (void)state;
    struct mp_yaml_doc *doc = load("a: 1\n"
                                   "b:\n"
                                   "  - x\n"
                                   "  - 'y z'\n"
                                   "  - [1, 2]\n"
                                   "c: {d: true, e: 2.5, f: ~, g: \"null\"}\n"
                                   "h: &anc\n"
                                   "  k: v\n"
                                   "i: *anc\n"
                                   "a: 0x10\n");
    const struct mp_yaml_node *r = mp_yaml_root(doc);
    assert_int_equal(r->kind, MP_YAML_MAP);
    long long iv = 0;
    assert_int_equal(mp_yaml_int(mp_yaml_get(r, "a"), "a", &iv, NULL), 0);
    assert_int_equal(iv, 16); /* last duplicate wins */
    const struct mp_yaml_node *b = mp_yaml_get(r, "b");
    assert_int_equal(b->kind, MP_YAML_SEQ);
    assert_int_equal(b->n, 3);
    assert_string_equal(b->items[1]->str, "y z");
    assert_true(b->items[1]->quoted);
    assert_int_equal(b->items[2]->kind, MP_YAML_SEQ);
    assert_int_equal(b->line, 3);
    assert_int_equal(b->col, 3);
    const struct mp_yaml_node *c = mp_yaml_get(r, "c");
    bool bv = false;
    assert_int_equal(mp_yaml_bool(mp_yaml_get(c, "d"), "d", &bv, NULL), 0);
    assert_true(bv);
    double dv = 0;
    assert_int_equal(mp_yaml_double(mp_yaml_get(c, "e"), "e", &dv, NULL), 0);
    assert_true(dv == 2.5);
    assert_true(mp_yaml_is_null(mp_yaml_get(c, "f")));
    assert_false(mp_yaml_is_null(mp_yaml_get(c, "g")));
    assert_true(mp_yaml_is_null(mp_yaml_get(c, "missing")));
    const struct mp_yaml_node *i = mp_yaml_get(r, "i");
    assert_ptr_equal(i, mp_yaml_get(r, "h"));
    assert_string_equal(mp_yaml_get(i, "k")->str, "v");
    mp_yaml_free(doc);

    /* many items: child arrays grow */
    char big[4096] = "l:\n";
    for (int k = 0; k < 100; k++)
        snprintf(big + strlen(big), sizeof(big) - strlen(big), "  - %d\n", k);
    doc = load(big);
    const struct mp_yaml_node *l = mp_yaml_get(mp_yaml_root(doc), "l");
    assert_int_equal(l->n, 100);
    assert_int_equal(mp_yaml_int(l->items[99], NULL, &iv, NULL), 0);
    assert_int_equal(iv, 99);
    mp_yaml_free(doc);
}

static void test_yaml_errors(void **state)
{
    (void)state;
    struct mp_yaml_doc *doc = load("x:\n  n: abc\n  q: '5'\n");
    struct mp_diag d;
    mp_diag_clear(&d);
    const struct mp_yaml_node *x = mp_yaml_get(mp_yaml_root(doc), "x");
    long long v;
    assert_int_equal(mp_yaml_int(mp_yaml_get(x, "n"), "x.n", &v, &d), MP_EINVAL);
    assert_string_equal(d.file, "t.yaml");
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 6);
    assert_string_equal(d.field, "x.n");
    assert_non_null(strstr(d.msg, "integer"));
    mp_diag_clear(&d);
    assert_int_equal(mp_yaml_int(mp_yaml_get(x, "q"), "x.q", &v, &d), MP_EINVAL);
    mp_yaml_free(doc);

    mp_diag_clear(&d);
    doc = NULL;
    const char *bad = "a: [1, 2\nb: 3\n";
    assert_int_equal(mp_yaml_load_string(bad, strlen(bad), "bad.yaml", &doc, &d), MP_EPARSE);
    assert_null(doc);
    assert_string_equal(d.file, "bad.yaml");
    assert_true(d.line >= 1);

    doc = load("");
    assert_int_equal(mp_yaml_root(doc)->kind, MP_YAML_NULL);
    mp_yaml_free(doc);

    mp_diag_clear(&d);
    assert_int_equal(mp_yaml_load_file("/nonexistent/x.yaml", &doc, &d), MP_EIO);
    assert_string_equal(d.file, "/nonexistent/x.yaml");
}

static void test_kernel_config(void **state)
{
    (void)state;
    setenv("MP_TEST_DIR", "/tmp/kdir", 1);
    const char *y = "kernel:\n"
                    "  id: k1\n"
                    "  type: cuda\n"
                    "  source_files: $MP_TEST_DIR/a.cu\n"
                    "  working_dir: ${MP_TEST_DIR}\n"
                    "  compile_command: \"nvcc -o 'a b' a.cu\"\n"
                    "  testcase_command: [./a, --n, '10']\n"
                    "  env: {FOO: $MP_UNSET_VAR_X}\n"
                    "kernels:\n"
                    "  - id: k2\n"
                    "    type: opencl\n"
                    "    compile_command: [[make, a], [make, b]]\n"
                    "    global_size: [1024, 2]\n"
                    "    bogus_key: 1\n"
                    "performance: {backend: ncu, timeout_seconds: 30, ncu: {metrics: [a, b]}}\n"
                    "correctness: {backend: accordo, accordo: {atol: 0.001, kernel_args: "
                    "[[x, float]]}}\n"
                    "latency: {max_noise: 0.01, power_guard: false, cool_ratio: 1.5}\n";
    struct mp_kernel_config c;
    mp_kernel_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_config_load_kernel_string(&c, y, "k.yaml", &d), 0);
    assert_int_equal(c.nkernels, 2);
    const struct mp_kernel_spec *k = &c.kernels[0];
    assert_string_equal(k->id, "k1");
    assert_int_equal(k->type, MP_KERNEL_CUDA);
    assert_int_equal(k->nsources, 1);
    assert_string_equal(k->sources[0], "/tmp/kdir/a.cu");
    assert_string_equal(k->working_dir, "/tmp/kdir");
    assert_int_equal(k->compile.n, 1);
    assert_string_equal(k->compile.argv[0][2], "a b");
    assert_string_equal(k->testcase.argv[0][2], "10");
    assert_string_equal(k->env[0], "FOO=$MP_UNSET_VAR_X");
    const struct mp_kernel_spec *k2 = &c.kernels[1];
    assert_int_equal(k2->type, MP_KERNEL_OPENCL);
    assert_int_equal(k2->compile.n, 2);
    assert_string_equal(k2->compile.argv[1][1], "b");
    assert_int_equal(k2->ndim, 2);
    assert_true(k2->global[1] == 2);
    assert_int_equal(c.nwarnings, 1);
    assert_string_equal(c.performance.backend, "ncu");
    assert_int_equal(c.performance.ncu_metrics.n, 2);
    assert_string_equal(c.correctness.backend, "accordo");
    assert_true(c.correctness.atol == 0.001);
    assert_string_equal(c.correctness.accordo_kernel_args.v[0], "x:float");
    assert_true(c.latency.max_noise == 0.01);
    assert_false(c.latency.power_guard);
    assert_true(c.latency.cool_ratio == 1.5);
    mp_kernel_config_fini(&c);

    /* bad values name file:line:col */
    static const struct {
        const char *yaml;
        long line, col;
    } bad[] = {
        {"kernel:\n  type: fortran\n", 2, 9},
        {"kernel: {id: a}\nperformance:\n  timeout_seconds: soon\n", 3, 20},
        {"kernel: {id: a, compile_command: {a: 1}}\n", 1, 34},
        {"kernel: {id: a, compile_command: [[a], b]}\n", 1, 40},
        {"kernels: []\n", 1, 1},
        {"kernel: {id: a, seeds: 0}\n", 1, 24},
        {"kernel: {id: a}\nlatency: {power_guard: maybe}\n", 2, 24},
        {"kernel: {id: a}\nlatency: {cool_ratio: -2}\n", 2, 23},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mp_kernel_config_init(&c);
        mp_diag_clear(&d);
        assert_int_equal(mp_config_load_kernel_string(&c, bad[i].yaml, "b.yaml", &d), MP_EINVAL);
        if (d.line != bad[i].line || d.col != bad[i].col)
            fprintf(stderr, "case %zu: %ld:%ld %s\n", i, d.line, d.col, d.msg);
        assert_int_equal(d.line, bad[i].line);
        assert_int_equal(d.col, bad[i].col);
        mp_kernel_config_fini(&c);
    }
}

static void test_framework_config(void **state)
{
    (void)state;
    char path[] = "/tmp/mp_fw_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "gpu: {device_ids: null}\n"
                    "scheduler: {max_workers: 8, environment: local}\n"
                    "compiling: {enable_default_compile: true}\n"
                    "correctness: {backend: testcase, accordo: {atol: 1.0e-6, rtol: 1.0e-5}}\n"
                    "performance:\n"
                    "  timeout_seconds: 600\n"
                    "  ncu: {args: [--target-processes, all], metrics: []}\n"
                    "  rocprof_compute: {profile_args: [--no-roof], metric_blocks: ['1', '2']}\n"
                    "latency: {enabled: true, rep_ms: 20, seed: 42}\n"
                    "compare:\n"
                    "  perf_weights_ncu: {duration_ns_total: 1.0}\n"
                    "  winner_strategy: perf_score\n"
                    "logging: {level: DEBUG}\n"
                    "benchmark: {inferencex_path: ''}\n"
                    "mystery: 1\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    struct mp_kernel_config c;
    mp_kernel_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_config_load_framework(&c, path, &d), 0);
    assert_int_equal(c.scheduler.max_workers, 8);
    assert_true(c.enable_default_compile);
    assert_true(c.performance.timeout_s == 600);
    assert_int_equal(c.performance.ncu_args.n, 2);
    assert_int_equal(c.performance.rocprof_metric_blocks.n, 2);
    assert_int_equal(c.compare.weights_ncu.n, 1);
    assert_string_equal(c.compare.winner_strategy, "perf_score");
    assert_string_equal(c.log_level, "DEBUG");
    assert_int_equal(c.nwarnings, 1); /* mystery */
    mp_kernel_config_fini(&c);
    unlink(path);
    /* a missing framework config is an empty one (Magpie) */
    mp_kernel_config_init(&c);
    assert_int_equal(mp_config_load_framework(&c, "/nonexistent/config.yaml", &d), 0);
    mp_kernel_config_fini(&c);
}

static void test_expand(void **state)
{
    (void)state;
    setenv("MP_T_A", "x", 1);
    char *s = mp_config_expand_vars("$MP_T_A/${MP_T_A}/$MP_T_NONE/$/${}/$1");
    assert_string_equal(s, "x/x/$MP_T_NONE/$/${}/$1");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_tree),     cmocka_unit_test(test_yaml_errors),
        cmocka_unit_test(test_kernel_config), cmocka_unit_test(test_framework_config),
        cmocka_unit_test(test_expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
