/* The sheets' statistics and orders: Python set order of op names, min,
 * max and median by selection, the stable sort by timestamp. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/gap.h>
#include <magpie/tracelens.h>

#include "area.h"
#include "helpers.h"
#include "tracelens/tracelens_int.h"

/* CPython 3.11's set order (TraceLens walks sets of event UIDs): adds and
 * discards (-x - 1) drawn at random in Python (random.Random(7), values
 * below 600, 45% discards), and the list(set) CPython printed. The first
 * case shows that an add reuses the last deleted slot it passes. */
static const int64_t pyset_ops[] = {
    331,  404,  74,   96,   -332, 219,  -220, -405, -97,  -75,  228,  596,  590,  50,   47,   136,
    -597, 584,  -585, -137, 192,  -193, 577,  -591, 544,  -48,  464,  -51,  249,  -545, 351,  294,
    74,   -250, -465, -295, -229, 586,  321,  -75,  593,  70,   276,  66,   -594, 456,  -67,  355,
    -356, -71,  -578, -322, -587, -277, -457, -352, 140,  563,  -564, 389,  154,  -141, -390, -155,
    269,  -270, 429,  579,  -430, 527,  55,   572,  -573, -528, 63,   -580, -56,  -64,  104,  -105,
    549,  -550, 26,   -27,  385,  -386, 355,  485,  -486, 477,  319,  -356, 271,  165,  210,  540,
    -541, 27,   305,  93,   267,  171,  -166, 514,  -211, 199,  410,  232,  -172, -478, 286,  198,
    352,  -199, 373,  -272, -94,  -233, 1,    352,  86,   122,  204,  182,  -2,   -205, 405,  86,
    174,  28,   -175, 149,  485,  358,  -359, -320, 105,  142,  -287, 216,  -353, -87,  333,  -106,
    62,   362,  597,  529,  -63,  -200, 19,   187,  153,  -363, 123,  333,  543,  108,  58,   -406,
    -515, 575,  -268, -109, 524,  -486, 546,  519,  535,  265,  207,  140,  -530, -411, 438,  -536,
    -123, 158,  374,  -29,  224,  96,   -576, -439, 165,  527,  -544, -188, -124, -141, 18,   -208,
    524,  115,  234,  107,  -598, -108, -150, 264,  -97,  584,  334,  -306, 187,  -183, -28,  266,
    -525, -334, 347,  427,  274,  44,   244,  165,  -59,  -375, 543,  296,  -428, -528, 256,  -374,
    564,  526,  457,  -527, 506,  402,  315,  235,  -458, 143,  -116, 132,  -245, 261,  -217, -236,
    -348, 288,  300,  -266, -267, -585, 560,  -20,  316,  -225, -45,  -265, 205,  -317, -335, 147,
    -154, -544, -188, -262, 158,  398,  506,  -206, 44,   525,  517,  -289, 582,  16,   598,  235,
    -547, -403, 385,  571,  -143, 250,  3,    71,   515,  94,   67,   485,  -235, 240,  210,  -95,
    391,  -518, 203,  -316, -599, 136,  -19,  101,  501,  -502, -392, 121,  562,  -257, 17,   -297,
    460,  396,  -526, -507, -572, 135,  520,  -301, 236,  497,  -45,  -521, 415,  -399, -122, -204,
    -18,  -386, -133, 296,  -166, -297, 369,  281,  287,  -416, 152,  -17,  -4,   -516, 438,  409,
    567,  82,   -370, -397, 293,  563,  -137, -251, -439, 266,  -583, -237, 122,  -561, -498, 509,
    463,  460,  -288, -275, -410, -68,  -294, -520, 422,  -83,  -211, -565, 588,  128,  541,  221,
    -102, -129, -136, 22,   -267, 484,  501,  -564, 540,  459,  -236, -486, 111,  468,  -144, -563,
    -148, 311,  257,  447,  114,  -464, 596,  -510, -312, -112, -502, -542, 248,  240,  29,   314,
};

static const int32_t pyset_order[] = {
    257, 22,  281, 540, 29,  567, 314, 71,  588, 596, 114, 122,
    152, 158, 422, 447, 459, 460, 468, 221, 484, 240, 248,
};

void test_pyset_order(void **state)
{
    (void)state;
    const int64_t small[] = {1, 9, 17, -2, -10, 25, 33};
    const int32_t small_order[] = {33, 25, 17};
    int32_t *v = NULL;
    size_t n = 0;
    assert_int_equal(tl_pyset_replay(small, sizeof(small) / sizeof(small[0]), &v, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(v, small_order, sizeof(small_order));
    free(v);
    assert_int_equal(tl_pyset_replay(pyset_ops, sizeof(pyset_ops) / sizeof(pyset_ops[0]), &v, &n),
                     0);
    assert_int_equal(n, sizeof(pyset_order) / sizeof(pyset_order[0]));
    assert_memory_equal(v, pyset_order, sizeof(pyset_order));
    free(v);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A value of a test array: few distinct ones (ties), now and then a
 * zero of either sign, a NaN or an infinity when asked. */
static double pick(unsigned *seed, bool odd)
{
    *seed = *seed * 1103515245u + 12345u;
    unsigned r = (*seed >> 8) % 1000;
    if (odd && r < 20)
        return r < 5 ? NAN : r < 10 ? -0.0 : r < 15 ? 0.0 : INFINITY;
    return (double)(r % 37) * 0.25 - 3.0;
}

/* tl_stats and tl_group_stats take min, max and the median by selection
 * where that gives the bits a sort gives: checked against a sort, with
 * ties, zeros of both signs and NaN (then sorted as before). */
void test_stats_selection(void **state)
{
    (void)state;
    unsigned seed = 7;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)round % 300;
        double *x = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
        assert_non_null(x);
        assert_non_null(c);
        for (size_t i = 0; i < n; i++)
            x[i] = pick(&seed, round % 3 == 0);
        memcpy(c, x, n * sizeof(double));
        qsort(c, n, sizeof(double), cmp_dbl);
        double med = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
        struct tl_stats st, gst;
        assert_int_equal(tl_stats(x, n, 0, &st), 0);
        assert_int_equal(tl_group_stats(x, n, true, &gst), 0);
        const struct tl_stats *both[2] = {&st, &gst};
        for (int k = 0; k < 2; k++) {
            assert_memory_equal(&both[k]->min, &c[0], sizeof(double));
            assert_memory_equal(&both[k]->max, &c[n - 1], sizeof(double));
            assert_memory_equal(&both[k]->median, &med, sizeof(double));
        }
        assert_int_equal(gst.has_std, n > 1);
        free(x);
        free(c);
    }
}

/* tl_sort_ts_idx gives qsort's order by tl_cmp_ts_idx, short and long
 * lists, ascending indexes or not. */
void test_sort_ts_idx(void **state)
{
    (void)state;
    unsigned seed = 3;
    for (int round = 0; round < 60; round++) {
        size_t n = round % 2 ? (size_t)round / 2 : 300 + (size_t)round * 40;
        struct tl_ts_idx *a = malloc((n ? n : 1) * sizeof(*a)),
                         *b = malloc((n ? n : 1) * sizeof(*b));
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            int32_t idx = round % 4 == 2 ? (int32_t)(n - i) : (int32_t)i;
            a[i] = (struct tl_ts_idx){1.7e15 + pick(&seed, round % 5 == 0) * 1e3, idx};
        }
        memcpy(b, a, (n ? n : 1) * sizeof(*a));
        tl_sort_ts_idx(a, n);
        qsort(b, n, sizeof(*b), tl_cmp_ts_idx);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(a[i].idx, b[i].idx);
            assert_memory_equal(&a[i].ts, &b[i].ts, sizeof(double));
        }
        free(a);
        free(b);
    }
}
