/* Elementwise and reduce ops (elementwise.c): TraceLens's values. */
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
    {"aten::copy_",
     "{\"Input Dims\":[[16,559,1024],[16,559,1024],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"float\",\"Scalar\"],\"Input "
     "Strides\":[[1,2,3],[3,2,1],[]],\"Concrete Inputs\":[\"\",\"\",\"False\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 0.009158656, 54951936.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(16, 559, 1024)\ndtype_in_out=('c10::BFloat16', 'float')\nstride_input=(1, 2, "
     "3)\nstride_output=(3, 2, 1)"},
    {"aten::silu",
     "{\"Input Dims\":[[7,3]],\"Input type\":[\"c10::BFloat16\"],\"Input Strides\":[[3,1]]}", NULL,
     NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2.1e-08, 84.0, "vector_bf16", MP_ROOFLINE_FAILED,
     NAN, NAN,
     "op_shape=(7, 3)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3, "
     "1)\nstride_output=<None>"},
    {"aten::neg",
     "{\"Input Dims\":[[7,3],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Input "
     "Strides\":[[3,1],[]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2.1e-08, 84.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(7, 3)\ndtype_in_out=('c10::BFloat16', None)\nstride_input=(3, "
     "1)\nstride_output=<None>"},
    {"aten::mul",
     "{\"Input Dims\":[[4,1,8],[3,1],[]],\"Input type\":[\"c10::BFloat16\",\"float\",\"\"],\"Input "
     "Strides\":[[8,8,1],[1,1],[]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 9.6e-08, 460.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 1, 8)\nshape_in2=(3, 1)\ndtype_in1_in2_out=('c10::BFloat16', 'float', "
     "None)\nstride_input1=(8, 8, 1)\nstride_input2=(1, 1)\nstride_output=<None>"},
    {"aten::add",
     "{\"Input Dims\":[[4,5],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"Scalar\",\"Scalar\"],\"Input Strides\":[[5,1],[],[]],\"Concrete "
     "Inputs\":[\"\",\"2\",\"1\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2e-08, 84.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 5)\nshape_in2=()\ndtype_in1_in2_out=('c10::BFloat16', 'Scalar', "
     "None)\nstride_input1=(5, 1)\nstride_input2=()\nstride_output=<None>"},
    {"aten::div_",
     "{\"Input Dims\":[[4,5],[4,5],[4,5]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::Half\"],\"Input "
     "Strides\":[[5,1],[5,1],[5,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2e-08, 120.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 5)\nshape_in2=(4, 5)\ndtype_in1_in2_out=('c10::BFloat16', 'c10::BFloat16', "
     "'c10::Half')\nstride_input1=(5, 1)\nstride_input2=(5, 1)\nstride_output=(5, 1)"},
    {"aten::sum",
     "{\"Input Dims\":[[16,559,1024],[],[],[]],\"Input "
     "type\":[\"c10::BFloat16\",\"ScalarList\",\"Scalar\",\"\"],\"Concrete "
     "Inputs\":[\"\",\"[-1]\",\"True\",\"\"]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 0.009158656, 18317314.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.009158656, 18317314.0,
     "num_input_elems=9158656\nnum_output_elems=1\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=sum"},
    {"aten::amax",
     "{\"Input Dims\":[[16,559,1024],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Output "
     "type\":[\"float\"]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 0.009158656, 18317316.0, "vector_bf16",
     MP_ROOFLINE_OK, 0.009158656, 18317316.0,
     "num_input_elems=9158656\nnum_output_elems=1\ndtype_in_out=('c10::BFloat16', "
     "'float')\nreduce_type=max"},
    {"aten::cumsum", "{\"Input Dims\":[[16,10]],\"Input type\":[\"c10::BFloat16\"]}", NULL, NULL,
     NULL, "reduce", MP_ROOFLINE_OK, 1.6e-07, 640.0, "vector_bf16", MP_ROOFLINE_OK, 1.6e-07, 640.0,
     "num_input_elems=160\nnum_output_elems=160\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=sum"},
    {"aten::mul",
     "{\"Input Dims\":[[4,3],[5,3]],\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input "
     "Strides\":[[3,1],[3,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"aten::mean",
     "{\"Input Dims\":[[4,5,6],[],[]],\"Input type\":[\"c10::BFloat16\",\"\",\"\"],\"Concrete "
     "Inputs\":[\"\",[1,-1],true]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 1.2e-07, 248.0, "vector_bf16", MP_ROOFLINE_OK,
     1.2e-07, 248.0,
     "num_input_elems=120\nnum_output_elems=4\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=mean"},
    {"aten::max",
     "{\"Input Dims\":[[4,5,6],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Concrete "
     "Inputs\":[\"\",1]}",
     NULL, NULL, NULL, "reduce", MP_ROOFLINE_OK, 1.2e-07, 288.0, "vector_bf16", MP_ROOFLINE_OK,
     1.2e-07, 288.0,
     "num_input_elems=120\nnum_output_elems=24\ndtype_in_out=('c10::BFloat16', "
     "None)\nreduce_type=max"},
    {"aten::replication_pad2d",
     "{\"Input Dims\":[[2,3,10,12],[]],\"Input type\":[\"c10::BFloat16\",\"\"],\"Input "
     "Strides\":[[360,120,12,1],[]],\"Concrete Inputs\":[\"\",\"[1, 2, 3, 4]\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 1.53e-06, 4500.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "input_shape=(2, 3, 10, 12)\noutput_shape=(2, 3, 17, 15)\npadding=[1, 2, 3, 4]\nop_shape=(2, "
     "3, 17, 15)\ndtype_in_out=('c10::BFloat16', 'c10::BFloat16')\nstride_input=(360, 120, 12, "
     "1)\nstride_output=<None>"},
    {"aten::replication_pad1d",
     "{\"Input Dims\":[[2,3,10],[]],\"Input type\":[\"bool\",\"\"],\"Input "
     "Strides\":[[30,10,1],[]],\"Concrete Inputs\":[\"\",\"[1, 2]\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_FAILED, NAN, NAN, NULL, MP_ROOFLINE_FAILED, NAN,
     NAN, NULL},
    {"aten::upsample_nearest2d",
     "{\"Input Dims\":[[2,3,10,12],[],[]],\"Input type\":[\"float\",\"\",\"\"],\"Input "
     "Strides\":[[360,120,12,1],[],[]],\"Concrete Inputs\":[\"\",\"[20, 24]\",\"\"]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 2.88e-06, 14400.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "input_shape=(2, 3, 10, 12)\noutput_shape=(2, 3, 20, 24)\nop_shape=(2, 3, 20, "
     "24)\ndtype_in_out=('float', 'float')\nstride_input=(360, 120, 12, 1)\nstride_output=<None>"},
    {"aiter::silu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 4.608e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"_C::silu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 4.608e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"sgl_kernel::silu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 4.608e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"aiter::gelu_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 7.3728e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"aiter::gelu_tanh_and_mul",
     "{\"Input Dims\":[[4,9,256],[4,9,512]],\"Input type\":[\"c10::BFloat16\",\"float\"],\"Input "
     "Strides\":[[2304,256,1],[4608,512,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 9.216e-05, 92160.0, "vector_fp32",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "op_shape=(4, 9, 256)\ndtype_in_out=('float', 'c10::BFloat16')\nstride_input=(4608, 512, "
     "1)\nstride_output=(2304, 256, 1)"},
    {"LigerSiLUMulFunction",
     "{\"Input Dims\":[[4,9,256],[4,9,256]],\"Input "
     "type\":[\"c10::BFloat16\",\"c10::BFloat16\"],\"Input Strides\":[[2304,256,1],[2304,256,1]]}",
     NULL, NULL, NULL, "elementwise", MP_ROOFLINE_OK, 9.216e-06, 55296.0, "vector_bf16",
     MP_ROOFLINE_FAILED, NAN, NAN,
     "shape_in1=(4, 9, 256)\nshape_in2=(4, 9, 256)\ndtype_in1_in2_out=('c10::BFloat16', "
     "'c10::BFloat16', None)\nstride_input1=(2304, 256, 1)\nstride_input2=(2304, 256, "
     "1)\nstride_output=<None>"},
    {"aten::index", "{}", NULL, "void at::native::vectorized_elementwise_kernel<4>", NULL,
     "elementwise", MP_ROOFLINE_NONE, NAN, NAN, NULL, MP_ROOFLINE_NONE, NAN, NAN, NULL},
};

void test_oracle_elementwise(void **state)
{
    (void)state;
    oracle_check(cases, sizeof(cases) / sizeof(cases[0]), "elementwise");
}
