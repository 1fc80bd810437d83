/* Op categories: the registry, the naming rules and every op name of the
 * TraceLens goldens. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

void test_registry_sorted(void **state)
{
    (void)state;
    size_t n;
    const struct roof_entry *t = roof_table(&n);
    assert_true(n > 250);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(t[i - 1].name, t[i].name) >= 0)
            fail_msg("registry out of order at %s / %s", t[i - 1].name, t[i].name);
    }
}

void test_category_rules(void **state)
{
    (void)state;
    assert_string_equal(mp_roofline_category("aten::mm", NULL), "GEMM");
    assert_string_equal(mp_roofline_category("aten::miopen_convolution", NULL), "CONV_fwd");
    assert_string_equal(mp_roofline_category("vllm::unified_attention_with_output", NULL),
                        "InferenceAttention");
    /* category-only override of a modelled op */
    assert_string_equal(mp_roofline_category("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", NULL),
                        "MoE_aux");
    assert_true(mp_roofline_has_model("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip"));
    assert_string_equal(mp_roofline_category("triton_poi_fused_add_0", NULL), "triton");
    assert_string_equal(mp_roofline_category("tritonfoo", NULL), "triton");
    assert_true(mp_roofline_has_model("triton_red_fused_sum_1"));
    assert_false(mp_roofline_has_model("tritonfoo"));
    assert_string_equal(mp_roofline_category("record_param_comms", NULL), "record_param_comms");
    assert_string_equal(
        mp_roofline_category("aten::index", "void at::native::elementwise_kernel<>"),
        "elementwise");
    assert_string_equal(mp_roofline_category("aten::argmax", "void at::native::reduce_kernel<>"),
                        "reduce");
    assert_string_equal(mp_roofline_category("aten::_foreach_add_",
                                             "void at::native::(anonymous)::multi_tensor_apply_k"),
                        "multi_tensor_apply");
    assert_string_equal(mp_roofline_category("aten::index", "vectorized_elementwise_kernel"),
                        "other");
    assert_string_equal(mp_roofline_category("aten::index", NULL), "other");
    assert_null(mp_roofline_sheet("aten::cat"));
    assert_string_equal(mp_roofline_sheet("aten::add"), "BinaryElementwise");
    assert_string_equal(mp_roofline_sheet("aten::layer_norm"), "Normalization");
    assert_string_equal(mp_roofline_sheet("aten::sum"), "Reduce");
    assert_string_equal(mp_roofline_sheet("aten::_scaled_dot_product_flash_attention"), "SDPA");
}

/* Every name of ops_summary ("Categories", a list repr) and ops_unique_args
 * ("op category") gets the golden category; when the category depends on the
 * first kernel, one of the launcher's kernels must give it (the summary lists
 * kernels by duration, not by time, so the first one is not known). */
void test_golden_categories(void **state)
{
    (void)state;
    if (!shared())
        skip();
    char root[1024];
    snprintf(root, sizeof(root), "%s/data/traces", shared());
    size_t checked = 0, bad = 0;
    struct files fs = {0};
    find_files(root, "ops_unique_args.csv", &fs);
    for (size_t i = 0; i < fs.n; i++) {
        struct csv c;
        if (!csv_read(fs.v[i], &c))
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *name = cell(&c, r, "name"), *want = cell(&c, r, "op category");
            char **k;
            size_t nk = kernel_names(cell(&c, r, "kernel_details_summary"), &k);
            bool ok = !strcmp(mp_roofline_category(name, nk ? k[0] : NULL), want);
            for (size_t j = 1; j < nk && !ok; j++)
                ok = !strcmp(mp_roofline_category(name, k[j]), want);
            if (!ok) {
                bad++;
                print_message("category %s: want %s, got %s (%s)\n", name, want,
                              mp_roofline_category(name, nk ? k[0] : NULL), fs.v[i]);
            }
            checked++;
            names_free(k, nk);
        }
        csv_free(&c);
    }
    files_free(&fs);
    struct files fo = {0};
    find_files(root, "ops_summary.csv", &fo);
    for (size_t i = 0; i < fo.n; i++) {
        struct csv c;
        if (!csv_read(fo.v[i], &c))
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *name = cell(&c, r, "name");
            json_t *cats = lit_parse(cell(&c, r, "Categories"));
            assert_true(json_is_array(cats));
            /* registry-decided names have exactly that category; the others
             * may mix kernel-decided categories with "other" */
            const char *got = mp_roofline_category(name, NULL);
            bool ok = false;
            for (size_t j = 0; j < json_array_size(cats); j++) {
                const char *w = json_string_value(json_array_get(cats, j));
                if (!strcmp(w, got) || !strcmp(w, "elementwise") || !strcmp(w, "reduce") ||
                    !strcmp(w, "multi_tensor_apply"))
                    ok = true;
            }
            if (!ok) {
                bad++;
                print_message("ops_summary category %s: got %s (%s)\n", name, got, fo.v[i]);
            }
            checked++;
            json_decref(cats);
        }
        csv_free(&c);
    }
    files_free(&fo);
    print_message("golden categories: %zu rows, %zu mismatches\n", checked, bad);
    assert_true(checked > 500);
    assert_int_equal(bad, 0);
}
