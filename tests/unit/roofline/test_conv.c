/* Convolutions (conv.c): TraceLens's values. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

static const struct oracle cases[] = {
    {"aten::convolution",
     "{\"Input Dims\":[[4,16,100],[32,16,5],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\",\"\",\"\",\"\",\"Scalar\",\"\",\"Scalar\"],"
     "\"Input Strides\":[[1600,100,1],[80,5,1],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"\",\"[1]\",\"\",\"False\",\"[0]\",\"1\"]}",
     NULL, NULL, NULL, "CONV_fwd", MP_ROOFLINE_OK, 0.00200704, 43008.0, "matrix_bf16",
     MP_ROOFLINE_OK, 0.00401408, 86016.0,
     "convNd=conv1d\ninput_shape=(4, 16, 100)\nfilter_shape=(32, 16, "
     "5)\ndtype_input_weight=('c10::BFloat16', 'c10::BFloat16')\ninput_stride=(1600, 100, "
     "1)\nweight_stride=(80, 5, "
     "1)\nbias=False\nstride=(1,)\npadding=(1,)\ndilation=(1,)\ntransposed_conv=False\noutput_"
     "padding=(0,)\ngroups=1"},
    {"aten::convolution_backward",
     "{\"Input Dims\":[[1],[4,16,100],[32,16,5],[32],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"],"
     "\"Input Strides\":[[1],[1600,100,1],[80,5,1],[],[],[],[],[],[],[],[]],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"[16]\",\"[1]\",\"[1]\",\"[1]\",\"False\",\"[0]\",\"1\",\"[True, "
     "True, True]\"]}",
     NULL, NULL, NULL, "CONV_bwd", MP_ROOFLINE_OK, 0.004026624, 98592.0, "matrix_fp16",
     MP_ROOFLINE_OK, 0.004026624, 98592.0,
     "convNd=conv1d\ninput_shape=(4, 16, 100)\nfilter_shape=(32, 16, "
     "5)\ndtype_input_weight=('c10::Half', 'c10::Half')\ninput_stride=(1600, 100, "
     "1)\nweight_stride=(80, 5, "
     "1)\nbias=True\nstride=(1,)\npadding=(1,)\ndilation=(1,)\ntransposed_conv=False\noutput_"
     "padding=(0,)\ngroups=1"},
    {"aten::convolution",
     "{\"Input Dims\":[[2,8,30],[16,8,3],[],[],[],[],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"float\"],\"Concrete "
     "Inputs\":[\"\",\"\",\"\",\"[1]\",\"[1]\",\"[1]\",\"False\",\"[0]\",\"1\"]}",
     NULL, NULL, NULL, "CONV_fwd", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN, NAN,
     NULL},
};

void test_oracle_conv(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "conv");
}
