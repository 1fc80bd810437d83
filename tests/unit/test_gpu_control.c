/* Unit tests for GPU hardware control (src/gpu/control.c): the gpu: YAML
 * section, and NVML control through the stub library tests/tools/stub_nvml.c
 * (STUB_NVML_LIB, set by CMake): plans, applies, resets, sessions that put
 * back what they changed, refusals. Nothing here touches a real GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/gpu.h>
#include <magpie/gpuctl.h>
#include <magpie/yaml.h>

static int load_gpu_yaml(const char *text, struct mp_gpu_hw_config *c, struct mp_diag *d)
{
    struct mp_yaml_doc *doc = NULL;
    mp_gpu_hw_config_init(c);
    int rc = mp_yaml_load_string(text, strlen(text), "t.yaml", &doc, d);
    if (!rc)
        rc = mp_gpu_hw_config_load(c, mp_yaml_get(mp_yaml_root(doc), "gpu"), d);
    mp_yaml_free(doc);
    return rc;
}

static void test_yaml(void **state)
{
    (void)state;
    struct mp_gpu_hw_config c;
    struct mp_diag d;
    mp_diag_clear(&d);
    const char *y = "gpu:\n"
                    "  device_ids: [0, 1]\n"
                    "  hardware:\n"
                    "    reset_after_benchmark: false\n"
                    "    default:\n"
                    "      power: {limit_watts: 500}\n"
                    "      frequency: {gpu_clock_mhz: [1500, 1600], mem_clock_mhz: null}\n"
                    "    per_gpu:\n"
                    "      1:\n"
                    "        power: {limit_watts: 450}\n"
                    "        frequency: {mem_clock_mhz: [2619, 2619]}\n";
    assert_int_equal(load_gpu_yaml(y, &c, &d), 0);
    assert_true(c.present && c.enabled && !c.reset_after);
    assert_int_equal(c.n_device_ids, 2);
    struct mp_gpu_setting s;
    mp_gpu_hw_config_for(&c, 0, &s);
    assert_true(s.power_limit_w == 500);
    assert_int_equal(s.gpu_clock_mhz[0], 1500);
    assert_int_equal(s.gpu_clock_mhz[1], 1600);
    assert_int_equal(s.mem_clock_mhz[1], 0);
    mp_gpu_hw_config_for(&c, 1, &s); /* per_gpu overrides key by key */
    assert_true(s.power_limit_w == 450);
    assert_int_equal(s.gpu_clock_mhz[1], 1600);
    assert_int_equal(s.mem_clock_mhz[0], 2619);

    /* Magpie's shipped defaults (nulls) set nothing */
    assert_int_equal(load_gpu_yaml("gpu:\n  device_ids: null\n  hardware:\n    enabled: true\n"
                                   "    default:\n      power: {limit_watts: null}\n",
                                   &c, &d),
                     0);
    assert_false(c.present);
    assert_int_equal(load_gpu_yaml("other: 1\n", &c, &d), 0);
    assert_false(c.present);

    /* errors name the field and the position */
    mp_diag_clear(&d);
    assert_int_equal(load_gpu_yaml("gpu:\n  hardware:\n    default:\n      frequency:\n"
                                   "        gpu_clock_mhz: [1600, 1500]\n",
                                   &c, &d),
                     MP_EINVAL);
    assert_string_equal(d.field, "gpu.hardware.default.frequency.gpu_clock_mhz");
    assert_int_equal(d.line, 5);
    mp_diag_clear(&d);
    assert_int_equal(
        load_gpu_yaml("gpu:\n  hardware:\n    per_gpu:\n      x: {power: {limit_watts: 3}}\n", &c,
                      &d),
        MP_EINVAL);
    assert_non_null(strstr(d.msg, "GPU index"));
    mp_diag_clear(&d);
    assert_int_equal(load_gpu_yaml("gpu:\n  hardware:\n    default:\n      frequency:\n"
                                   "        gpu_clock_level: 9\n",
                                   &c, &d),
                     MP_EINVAL);
    mp_diag_clear(&d);
    assert_int_equal(load_gpu_yaml("gpu:\n  hardware:\n    default:\n      power:\n"
                                   "        limit_watts: -5\n",
                                   &c, &d),
                     MP_EINVAL);
}

static char g_dir[256];

static char *slurp(const char *name)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", g_dir, name);
    FILE *f = fopen(p, "r");
    if (!f)
        return strdup("");
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    return strdup(buf);
}

static void wipe(const char *name)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", g_dir, name);
    unlink(p);
}

static int setup_stub(void **state)
{
    (void)state;
    const char *lib = getenv("STUB_NVML_LIB");
    if (!lib)
        return 0;
    snprintf(g_dir, sizeof(g_dir), "/tmp/mp_gpuctl_XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char p[512];
    setenv("MAGPIE_NVML_LIB", lib, 1);
    snprintf(p, sizeof(p), "%s/state", g_dir);
    setenv("STUB_NVML_STATE", p, 1);
    snprintf(p, sizeof(p), "%s/log", g_dir);
    setenv("STUB_NVML_LOG", p, 1);
    return 0;
}

static int teardown_stub(void **state)
{
    (void)state;
    if (!g_dir[0])
        return 0;
    wipe("state");
    wipe("log");
    rmdir(g_dir);
    return 0;
}

/* The kept-open sampler: finds a GPU by UUID, reads its SM clock (the stub's
 * locked clock from the state file), NAN for what the library lacks, NULL for
 * a UUID NVML does not list. */
static void test_nvml_sampler(void **state)
{
    (void)state;
    if (!getenv("STUB_NVML_LIB"))
        skip();
    wipe("state");
    char p[512];
    snprintf(p, sizeof(p), "%s/state", g_dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "0 700000 0 0 0 0\n1 700000 1500 1500 0 0\n");
    fclose(f);
    assert_null(mp_gpu_sampler_open("GPU-not-there"));
    struct mp_gpu_sampler *s = mp_gpu_sampler_open("GPU-stub-1");
    assert_non_null(s);
    struct mp_gpu_sample g;
    for (int i = 0; i < 3; i++) {
        mp_gpu_sampler_read(s, &g);
        assert_true(g.sm_clock_mhz == 1500);
        assert_true(isnan(g.power_w) && isnan(g.temp_c) && isnan(g.utilization_pct));
    }
    mp_gpu_sampler_close(s);
    s = mp_gpu_sampler_open(NULL);
    assert_non_null(s);
    mp_gpu_sampler_read(s, &g);
    assert_true(g.sm_clock_mhz == 345);
    mp_gpu_sampler_close(s);
    mp_gpu_sampler_read(NULL, &g);
    assert_true(isnan(g.sm_clock_mhz));
    setenv("MAGPIE_NO_NVML", "1", 1);
    assert_null(mp_gpu_sampler_open("GPU-stub-1"));
    unsetenv("MAGPIE_NO_NVML");
    wipe("state");
}

static void test_nvml_plan_apply_reset(void **state)
{
    (void)state;
    if (!getenv("STUB_NVML_LIB"))
        skip();
    wipe("state");
    wipe("log");
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gpuctl_opts o = {.backend = MP_GPUCTL_NVML};
    struct mp_gpuctl *c = NULL;
    assert_int_equal(mp_gpuctl_open(&c, &o, &d), 0);
    assert_int_equal(mp_gpuctl_which(c), MP_GPUCTL_NVML);
    assert_int_equal(mp_gpuctl_count(c), 2);
    struct mp_gpuctl_state st;
    assert_int_equal(mp_gpuctl_query(c, 1, &st, &d), 0);
    assert_string_equal(st.name, "NVIDIA H200 (stub)");
    assert_true(st.power_limit_w == 700 && st.power_min_w == 200 && st.power_max_w == 700);
    assert_true(st.sm_clock_max_mhz == 1980);

    struct mp_gpu_setting s;
    mp_gpu_setting_init(&s);
    s.power_limit_w = 500;
    s.gpu_clock_mhz[0] = s.gpu_clock_mhz[1] = 1500;
    struct mp_buf out;
    mp_buf_init(&out, 0);
    assert_int_equal(mp_gpuctl_plan(c, 1, &s, &out, &d), 2);
    assert_string_equal(mp_buf_cstr(&out),
                        "GPU 1 (NVIDIA H200 (stub)): power limit 700 W -> 500 W  "
                        "[nvmlDeviceSetPowerManagementLimit(1, 500000 mW)]\n"
                        "GPU 1 (NVIDIA H200 (stub)): SM/graphics clock 345 MHz (max 1980 MHz) -> "
                        "locked to 1500-1500 MHz  [nvmlDeviceSetGpuLockedClocks(1, 1500, 1500)]\n");
    char *log = slurp("log");
    assert_string_equal(log, ""); /* a plan calls nothing */
    free(log);

    assert_int_equal(mp_gpuctl_apply(c, 1, &s, &d), 0);
    assert_int_equal(mp_gpuctl_query(c, 1, &st, &d), 0);
    assert_true(st.power_limit_w == 500 && st.sm_clock_mhz == 1500);
    log = slurp("log");
    assert_string_equal(log, "nvmlDeviceSetPowerManagementLimit 1 500000\n"
                             "nvmlDeviceSetGpuLockedClocks 1 1500 1500\n");
    free(log);

    mp_buf_reset(&out);
    assert_int_equal(mp_gpuctl_reset(c, 1, false, &out, &d), 0);
    assert_int_equal(mp_gpuctl_query(c, 1, &st, &d), 0);
    assert_true(st.power_limit_w == 700 && st.sm_clock_mhz == 345);
    assert_non_null(strstr(mp_buf_cstr(&out), "power limit 500 W -> 700 W"));

    /* refused before any call: out of range, AMD-only levels, no such GPU */
    wipe("log");
    s.power_limit_w = 900;
    mp_diag_clear(&d);
    assert_int_equal(mp_gpuctl_apply(c, 0, &s, &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "200-700 W"));
    mp_gpu_setting_init(&s);
    s.gpu_clock_level = 3;
    mp_diag_clear(&d);
    assert_int_equal(mp_gpuctl_plan(c, 0, &s, NULL, &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "AMD"));
    mp_diag_clear(&d);
    assert_int_equal(mp_gpuctl_query(c, 2, &st, &d), MP_EINVAL);
    log = slurp("log");
    assert_string_equal(log, "");
    free(log);

    /* not root: NVML's own message, and the hint */
    mp_gpu_setting_init(&s);
    s.power_limit_w = 400;
    setenv("STUB_NVML_DENY", "1", 1);
    mp_diag_clear(&d);
    assert_int_equal(mp_gpuctl_apply(c, 0, &s, &d), MP_EIO);
    unsetenv("STUB_NVML_DENY");
    assert_non_null(strstr(d.msg, "Insufficient Permissions"));
    assert_non_null(strstr(d.msg, "root"));
    mp_buf_fini(&out);
    mp_gpuctl_close(c);
}

static void test_nvml_session(void **state)
{
    (void)state;
    if (!getenv("STUB_NVML_LIB"))
        skip();
    wipe("state");
    wipe("log");
    /* GPU 1 starts at 600 W: the session must put back 600, not the default */
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gpuctl *c = NULL;
    assert_int_equal(mp_gpuctl_open(&c, NULL, &d), 0);
    struct mp_gpu_setting s;
    mp_gpu_setting_init(&s);
    s.power_limit_w = 600;
    assert_int_equal(mp_gpuctl_apply(c, 1, &s, &d), 0);
    mp_gpuctl_close(c);
    wipe("log");

    struct mp_gpu_hw_config cfg;
    assert_int_equal(load_gpu_yaml("gpu:\n  hardware:\n    default:\n"
                                   "      power: {limit_watts: 450}\n"
                                   "      frequency: {gpu_clock_mhz: [1400, 1500], "
                                   "mem_clock_mhz: [3201, 3201]}\n",
                                   &cfg, &d),
                     0);
    struct mp_gpuctl_session *s1 = NULL;
    struct mp_buf log;
    mp_buf_init(&log, 0);
    assert_int_equal(mp_gpuctl_session_apply(&cfg, NULL, &log, &s1, &d), 0);
    assert_non_null(s1);
    char *st = slurp("state");
    assert_string_equal(st, "0 450000 1400 1500 3201 3201\n1 450000 1400 1500 3201 3201\n");
    free(st);
    assert_int_equal(mp_gpuctl_session_restore(s1, &log, &d), 0);
    st = slurp("state");
    assert_string_equal(st, "0 700000 0 0 0 0\n1 600000 0 0 0 0\n");
    free(st);
    assert_non_null(strstr(mp_buf_cstr(&log), "GPU 1 (NVIDIA H200 (stub)): power limit 450 W -> "
                                              "600 W"));
    mp_gpuctl_session_free(s1);

    /* a failure half way puts back what was already changed */
    wipe("log");
    setenv("STUB_NVML_FAIL", "nvmlDeviceSetMemoryLockedClocks", 1);
    mp_diag_clear(&d);
    assert_int_equal(mp_gpuctl_session_apply(&cfg, NULL, NULL, &s1, &d), MP_EIO);
    unsetenv("STUB_NVML_FAIL");
    assert_null(s1);
    assert_non_null(strstr(d.msg, "nvmlDeviceSetMemoryLockedClocks"));
    st = slurp("state");
    assert_string_equal(st, "0 700000 0 0 0 0\n1 600000 0 0 0 0\n");
    free(st);
    char *lg = slurp("log");
    assert_string_equal(lg, "nvmlDeviceSetPowerManagementLimit 0 450000\n"
                            "nvmlDeviceSetGpuLockedClocks 0 1400 1500\n"
                            "nvmlDeviceSetMemoryLockedClocks 0 3201 3201\n"
                            "nvmlDeviceResetGpuLockedClocks 0\n"
                            "nvmlDeviceResetMemoryLockedClocks 0\n"
                            "nvmlDeviceSetPowerManagementLimit 0 700000\n");
    free(lg);

    /* a bad id is refused before anything changes */
    wipe("log");
    cfg.device_ids[0] = 0;
    cfg.device_ids[1] = 7;
    cfg.n_device_ids = 2;
    mp_diag_clear(&d);
    assert_int_equal(mp_gpuctl_session_apply(&cfg, NULL, NULL, &s1, &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "GPU 7 does not exist"));
    lg = slurp("log");
    assert_string_equal(lg, "");
    free(lg);

    /* disabled: nothing */
    cfg.enabled = false;
    assert_int_equal(mp_gpuctl_session_apply(&cfg, NULL, NULL, &s1, &d), 0);
    assert_null(s1);
    mp_buf_fini(&log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_nvml_plan_apply_reset),
        cmocka_unit_test(test_nvml_session),
        cmocka_unit_test(test_nvml_sampler),
    };
    return cmocka_run_group_tests(tests, setup_stub, teardown_stub);
}
