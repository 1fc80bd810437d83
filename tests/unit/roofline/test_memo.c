/* The perf-model memo. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

/* The memo answers a repeated input with the model's own result, and tells
 * inputs apart by every text address and the kernel list. */
void test_model_memo(void **state)
{
    (void)state;
    struct mp_roofline_memo *m = mp_roofline_memo_new();
    assert_non_null(m);
    const char *a = "{\"Input Dims\": [[4, 8], [8, 2]], \"Input type\": [\"float\", \"float\"]}";
    const char *bad = "{\"Input type\": []}";
    const char *k1[] = {"Cijk_Alik_Bljk_BBS_BH_MT64x16x64_MI16x16x1"};
    const char *k2[] = {"nvjet_tst_128x64_64x6_1x2_h_bz_coopA_NT"};
    struct mp_roofline_op ops[] = {
        {"aten::mm", a, strlen(a), NULL, k1, 1, NULL},
        {"aten::mm", a, strlen(a), NULL, k2, 1, NULL},
        {"aten::mm", a, strlen(a), NULL, NULL, 0, NULL},
        {"aten::mm", bad, strlen(bad), NULL, NULL, 0, NULL},
        {"aten::relu", NULL, 0, NULL, NULL, 0, NULL},
    };
    int32_t slot[sizeof(ops) / sizeof(ops[0])];
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            struct mp_roofline_result want, got;
            assert_int_equal(mp_roofline_model(&ops[i], &want), 0);
            assert_int_equal(mp_roofline_model_memo(m, &ops[i], &got), 0);
            assert_same_result(&want, &got);
            /* each input its own entry, the same one every time */
            assert_int_equal(want.memo_slot, 0);
            if (round == 0)
                slot[i] = got.memo_slot;
            assert_int_equal(got.memo_slot, slot[i]);
            assert_int_equal(slot[i], (int32_t)i + 1);
            mp_roofline_result_fini(&want);
            mp_roofline_result_fini(&got);
        }
    }
    /* no memo: the plain model */
    struct mp_roofline_result r;
    assert_int_equal(mp_roofline_model_memo(NULL, &ops[0], &r), 0);
    assert_string_equal(ptext(&r, "transpose"), "(True, False)");
    assert_int_equal(r.memo_slot, 0);
    mp_roofline_result_fini(&r);
    mp_roofline_memo_free(m);
    mp_roofline_memo_free(NULL);
}
