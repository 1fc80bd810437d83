/* GPU architecture specs and the roofline. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

/* ------------------------------------------------------------ arch */

void test_arch(void **state)
{
    (void)state;
    struct mp_roofline_arch a;
    const char *const *names = mp_roofline_arch_builtin_names();
    for (size_t i = 0; names[i]; i++) {
        assert_int_equal(mp_roofline_arch_builtin(names[i], &a), 0);
        assert_true(a.has_mem_bw && a.mem_bw_gbps > 0 && a.n_specs > 0 && a.source);
        double t;
        assert_true(mp_roofline_arch_tflops(&a, "matrix_bf16", &t) && t > 0);
    }
    assert_int_equal(mp_roofline_arch_builtin("mi-300x", &a), 0);
    assert_string_equal(a.name, "MI300X");
    assert_int_equal(mp_roofline_arch_builtin("h100_sxm", &a), 0);
    assert_true(a.mem_bw_gbps == 3350);
    assert_int_equal(mp_roofline_arch_builtin("V100", &a), MP_ENOTFOUND);

    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA H200", &a), 0);
    assert_string_equal(a.name, "H200");
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA H100 80GB HBM3", &a), 0);
    assert_string_equal(a.name, "H100");
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA H100 PCIe", &a), MP_ENOTFOUND);
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA A100-SXM4-80GB", &a), 0);
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA A100-SXM4-40GB", &a), MP_ENOTFOUND);
    assert_int_equal(mp_roofline_arch_from_device_name("AMD Instinct MI300X", &a), 0);
    assert_string_equal(a.name, "MI300X");
    assert_int_equal(mp_roofline_arch_from_device_name("NVIDIA B200", &a), 0);

    /* the built-in H200 is the H200 golden arch file */
    if (shared()) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/data/traces/h200/H200-arch-datasheet.json", shared());
        struct mp_roofline_arch f, b;
        struct mp_diag d;
        mp_diag_clear(&d);
        assert_int_equal(mp_roofline_arch_load_json(p, &f, &d), 0);
        assert_int_equal(mp_roofline_arch_builtin("H200", &b), 0);
        assert_true(f.mem_bw_gbps == b.mem_bw_gbps && f.memory_gb == b.memory_gb);
        assert_int_equal(f.n_specs, b.n_specs);
        for (int i = 0; i < f.n_specs; i++) {
            double t;
            assert_true(mp_roofline_arch_tflops(&b, f.specs[i].key, &t));
            assert_true(t == f.specs[i].tflops);
        }
        assert_null(f.source);
    }

    /* errors name line, column and field */
    struct mp_diag d;
    mp_diag_clear(&d);
    const char *bad = "{\n  \"name\": \"X\",\n  \"mem_bw_gbps\": \"fast\"\n}";
    assert_int_equal(mp_roofline_arch_parse_json(bad, strlen(bad), "x.json", &a, &d), MP_EINVAL);
    assert_string_equal(d.field, "mem_bw_gbps");
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 3);
    assert_string_equal(d.file, "x.json");
    mp_diag_clear(&d);
    const char *bad2 = "{\"max_achievable_tflops\": {\"matrix_bf16\": 1,\n \"vector_fp32\": null}}";
    assert_int_equal(mp_roofline_arch_parse_json(bad2, strlen(bad2), NULL, &a, &d), MP_EINVAL);
    assert_string_equal(d.field, "max_achievable_tflops.vector_fp32");
    assert_int_equal(d.line, 2);
    mp_diag_clear(&d);
    const char *bad3 = "{\"name\": \"X\",\n \"mem_bw_gbps\": 5,,}";
    assert_int_equal(mp_roofline_arch_parse_json(bad3, strlen(bad3), NULL, &a, &d), MP_EPARSE);
    assert_int_equal(d.line, 2);
    assert_true(d.col > 0);
    mp_diag_clear(&d);
    assert_int_equal(mp_roofline_arch_load_json("/nonexistent/arch.json", &a, &d), MP_EIO);
    assert_string_equal(d.file, "/nonexistent/arch.json");

    /* roofline: anchors computed by hand */
    assert_int_equal(mp_roofline_arch_builtin("H200", &a), 0);
    struct mp_roofline_roofline rl;
    mp_roofline_roofline(&a, "matrix_bf16", 989.0, true, 4.8e9, 2000.0, &rl);
    assert_true(rl.valid);
    assert_true(fabs(rl.compute_us - 1000.0) < 1e-9 && fabs(rl.memory_us - 1000.0) < 1e-9);
    assert_true(rl.compute_bound); /* ties are compute bound */
    assert_true(fabs(rl.pct - 50.0) < 1e-9);
    mp_roofline_roofline(&a, "matrix_bf16", 1.0, true, 4.8e9, 0.0, &rl);
    assert_true(rl.valid && !rl.compute_bound && isnan(rl.pct));
    mp_roofline_roofline(&a, "matrix_fp4", 1.0, true, 1.0, 1.0, &rl);
    assert_false(rl.valid);
    mp_roofline_roofline(&a, "matrix_bf16", 0.0, true, 1.0, 1.0, &rl);
    assert_false(rl.valid);
    mp_roofline_roofline(&a, "matrix_bf16", 1.0, false, 0.0, 1.0, &rl);
    assert_false(rl.valid);
}
