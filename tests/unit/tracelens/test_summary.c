/* The terminal summary of a report. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <magpie/tracelens.h>

#include "area.h"
#include "helpers.h"

void test_summary(void **state)
{
    (void)state;
    if (!mixtral)
        skip();
    struct mp_buf b, b2;
    mp_buf_init(&b, 0);
    mp_buf_init(&b2, 0);
    assert_int_equal(mp_report_summary_text(mixtral, 10, &b), 0);
    const char *s = mp_buf_cstr(&b);
    assert_non_null(strstr(s, "GPU time 1511.117 ms\n"));
    assert_non_null(strstr(s, "  busy                   53.140 ms    3.5%\n"));
    assert_non_null(strstr(s, "    computation          51.904 ms    3.4%\n"));
    assert_non_null(strstr(s, "  idle                 1457.977 ms   96.5%\n"));
    assert_non_null(strstr(s, "Time by category: 53.140 ms of op kernel time in 4 categories"));
    assert_non_null(strstr(s, "  other             28.647   53.9%     1700\n"));
    assert_non_null(strstr(s, "  GEMM               5.045    9.5%      588\n"));
    char want[160];
    snprintf(want, sizeof(want),
             "Top 10 of %zu op shapes by kernel time (roofline: H200, 4.80 TB/s)",
             mixtral->n_points);
    assert_non_null(strstr(s, want));
    assert_non_null(strstr(s, "% roof  bound"));
    assert_non_null(strstr(s, "memory\n"));
    assert_false(has_nonfinite_text(s));
    assert_null(strchr(s, '\x1b')); /* no colour */
    /* deterministic */
    assert_int_equal(mp_report_summary_text(mixtral, 10, &b2), 0);
    assert_int_equal(b.len, b2.len);
    assert_memory_equal(b.data, b2.data, b.len);
    /* top_n 0: every op shape, numbered 1..n */
    mp_buf_reset(&b2);
    assert_int_equal(mp_report_summary_text(mixtral, 0, &b2), 0);
    snprintf(want, sizeof(want), "Top %zu of %zu op shapes", mixtral->n_points, mixtral->n_points);
    assert_non_null(strstr(mp_buf_cstr(&b2), want));
    snprintf(want, sizeof(want), "\n%3zu  ", mixtral->n_points);
    assert_non_null(strstr(mp_buf_cstr(&b2), want));
    /* the 4096x32000x2048 GEMM: 760.6 TFLOP/s, 76.9 % of roofline, compute bound */
    const char *row = strstr(mp_buf_cstr(&b2), "0.706    1.3%     760.6   0.5809     1309    76.9  "
                                               "compute\n     B=1 M=4096 N=32000 K=2048");
    assert_non_null(row);
    assert_non_null(strstr(row - 80, "aten::mm"));
    /* without an arch: no roofline columns */
    mixtral->has_arch = false;
    mp_buf_reset(&b2);
    assert_int_equal(mp_report_summary_text(mixtral, 5, &b2), 0);
    mixtral->has_arch = true;
    assert_null(strstr(mp_buf_cstr(&b2), "% roof"));
    assert_null(strstr(mp_buf_cstr(&b2), "roofline:"));
    /* the buffer's bound is respected */
    struct mp_buf small;
    mp_buf_init(&small, 64);
    assert_int_equal(mp_report_summary_text(mixtral, 10, &small), MP_ENOMEM);
    mp_buf_fini(&small);
    mp_buf_fini(&b);
    mp_buf_fini(&b2);
}
