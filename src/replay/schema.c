/* The ATen schemas magpie can rebuild a call of, and the matching of a
 * report row's recorded arguments against them (docs/replay.md).
 *
 * The profiler records, per argument, a type ("c10::BFloat16" for a tensor,
 * "Scalar", "ScalarList", "TensorList", "" for None), the dims and strides
 * of tensors and the text of scalars. An overload matches when it has as
 * many arguments and each recorded argument can be the schema's type; the
 * first match in table order wins (TraceLens's EventReplay does the same
 * against torch's own schema list; here the table is built in, so no torch
 * is needed to write the IR). An overload followed by an `out` tensor is
 * tried as well. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_int.h"

/* roles: "<arg>:<of>@<dim arg or number>" an index tensor, "<arg>:<of>#"
 * group offsets over <of>'s rows; ';' separates several. */
struct rp_schema {
    const char *name;
    const char *args;
    const char *roles;
};

#define UNARY(n)                                                                                   \
    {"aten::" n, "Tensor self", NULL},                                                             \
    {                                                                                              \
        "aten::" n "_", "Tensor(a!) self", NULL                                                    \
    }
#define BINARY(n)                                                                                  \
    {"aten::" n, "Tensor self, Tensor other", NULL},                                               \
        {"aten::" n, "Tensor self, Scalar other", NULL},                                           \
        {"aten::" n "_", "Tensor(a!) self, Tensor other", NULL},                                   \
    {                                                                                              \
        "aten::" n "_", "Tensor(a!) self, Scalar other", NULL                                      \
    }
#define ADDLIKE(n)                                                                                 \
    {"aten::" n, "Tensor self, Tensor other, *, Scalar alpha", NULL},                              \
        {"aten::" n, "Tensor self, Scalar other, Scalar alpha", NULL},                             \
        {"aten::" n "_", "Tensor(a!) self, Tensor other, *, Scalar alpha", NULL},                  \
    {                                                                                              \
        "aten::" n "_", "Tensor(a!) self, Scalar other, Scalar alpha", NULL                        \
    }

static const struct rp_schema schemas[] = {
    /* GEMMs */
    {"aten::mm", "Tensor self, Tensor mat2", NULL},
    {"aten::addmm", "Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta, Scalar alpha", NULL},
    {"aten::bmm", "Tensor self, Tensor mat2", NULL},
    {"aten::baddbmm", "Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta, Scalar alpha",
     NULL},
    {"aten::matmul", "Tensor self, Tensor other", NULL},
    {"aten::linear", "Tensor input, Tensor weight, Tensor? bias", NULL},
    {"aten::_scaled_mm",
     "Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias, Tensor? "
     "scale_result, "
     "ScalarType? out_dtype, bool use_fast_accum",
     NULL},
    {"aten::_grouped_mm",
     "Tensor self, Tensor mat2, Tensor? offs, Tensor? bias, ScalarType? out_dtype", "offs:self#"},
    {"aten::_scaled_grouped_mm",
     "Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? offs, Tensor? bias, "
     "Tensor? scale_result, ScalarType? out_dtype, bool use_fast_accum",
     "offs:self#"},
    /* attention */
    {"aten::scaled_dot_product_attention",
     "Tensor query, Tensor key, Tensor value, Tensor? attn_mask, float dropout_p, bool is_causal, "
     "*, "
     "float? scale, bool enable_gqa",
     NULL},
    {"aten::_scaled_dot_product_flash_attention",
     "Tensor query, Tensor key, Tensor value, float dropout_p, bool is_causal, bool "
     "return_debug_mask, *, float? scale",
     NULL},
    {"aten::_scaled_dot_product_efficient_attention",
     "Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, float "
     "dropout_p, bool is_causal, *, float? scale",
     NULL},
    {"aten::_scaled_dot_product_cudnn_attention",
     "Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, float "
     "dropout_p, bool is_causal, bool return_debug_mask, *, float? scale",
     NULL},
    {"aten::_cudnn_attention_forward",
     "Tensor query, Tensor key, Tensor value, Tensor? attn_bias, Tensor? cum_seq_q, Tensor? "
     "cum_seq_k, SymInt max_q, SymInt max_k, bool compute_log_sumexp, float dropout_p, bool "
     "is_causal, bool return_debug_mask, *, float? scale",
     NULL},
    {"aten::_flash_attention_forward",
     "Tensor query, Tensor key, Tensor value, Tensor? cum_seq_q, Tensor? cum_seq_k, SymInt max_q, "
     "SymInt max_k, float dropout_p, bool is_causal, bool return_debug_mask, *, float? scale, "
     "SymInt? window_size_left, SymInt? window_size_right, Tensor? seqused_k, Tensor? alibi_slopes",
     NULL},
    {"aten::_efficient_attention_forward",
     "Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? cu_seqlens_q, Tensor? "
     "cu_seqlens_k, SymInt? max_seqlen_q, SymInt? max_seqlen_k, float dropout_p, int "
     "custom_mask_type, bool compute_log_sumexp, *, float? scale, Tensor? seqlen_k, int? "
     "window_size",
     NULL},
    /* norms */
    {"aten::layer_norm",
     "Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps, bool "
     "cudnn_enable",
     NULL},
    {"aten::native_layer_norm",
     "Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps", NULL},
    {"aten::rms_norm", "Tensor input, SymInt[] normalized_shape, Tensor? weight, float? eps", NULL},
    {"aten::_fused_rms_norm", "Tensor input, int[] normalized_shape, Tensor? weight, float? eps",
     NULL},
    {"aten::group_norm",
     "Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps, bool cudnn_enabled",
     NULL},
    {"aten::native_group_norm",
     "Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float "
     "eps",
     NULL},
    {"aten::batch_norm",
     "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool "
     "training, float momentum, float eps, bool cudnn_enabled",
     NULL},
    {"aten::native_batch_norm",
     "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool "
     "training, float momentum, float eps",
     NULL},
    {"aten::instance_norm",
     "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool "
     "use_input_stats, float momentum, float eps, bool cudnn_enabled",
     NULL},
    /* softmax */
    {"aten::softmax", "Tensor self, int dim, ScalarType? dtype", NULL},
    {"aten::_softmax", "Tensor self, int dim, bool half_to_float", NULL},
    {"aten::log_softmax", "Tensor self, int dim, ScalarType? dtype", NULL},
    {"aten::_log_softmax", "Tensor self, int dim, bool half_to_float", NULL},
    /* elementwise */
    UNARY("silu"),
    UNARY("relu"),
    UNARY("neg"),
    UNARY("rsqrt"),
    UNARY("sqrt"),
    UNARY("exp"),
    UNARY("exp2"),
    UNARY("log"),
    UNARY("sigmoid"),
    UNARY("tanh"),
    UNARY("abs"),
    UNARY("cos"),
    UNARY("sin"),
    UNARY("reciprocal"),
    UNARY("erf"),
    UNARY("floor"),
    UNARY("ceil"),
    UNARY("round"),
    UNARY("sign"),
    UNARY("square"),
    UNARY("logical_not"),
    UNARY("bitwise_not"),
    UNARY("hardswish"),
    UNARY("mish"),
    UNARY("zero"),
    {"aten::gelu", "Tensor self, *, str approximate", NULL},
    {"aten::gelu_", "Tensor(a!) self, *, str approximate", NULL},
    ADDLIKE("add"),
    ADDLIKE("sub"),
    {"aten::rsub", "Tensor self, Tensor other, *, Scalar alpha", NULL},
    {"aten::rsub", "Tensor self, Scalar other, Scalar alpha", NULL},
    BINARY("mul"),
    BINARY("div"),
    {"aten::div", "Tensor self, Tensor other, *, str? rounding_mode", NULL},
    {"aten::div_", "Tensor(a!) self, Tensor other, *, str? rounding_mode", NULL},
    BINARY("floor_divide"),
    BINARY("remainder"),
    BINARY("fmod"),
    BINARY("maximum"),
    BINARY("minimum"),
    BINARY("eq"),
    BINARY("ne"),
    BINARY("lt"),
    BINARY("le"),
    BINARY("gt"),
    BINARY("ge"),
    BINARY("bitwise_and"),
    BINARY("bitwise_or"),
    BINARY("logical_and"),
    BINARY("logical_or"),
    BINARY("atan2"),
    {"aten::pow", "Tensor self, Scalar exponent", NULL},
    {"aten::pow", "Tensor self, Tensor exponent", NULL},
    {"aten::pow", "Scalar self, Tensor exponent", NULL},
    {"aten::pow_", "Tensor(a!) self, Scalar exponent", NULL},
    {"aten::masked_fill", "Tensor self, Tensor mask, Scalar value", NULL},
    {"aten::masked_fill", "Tensor self, Tensor mask, Tensor value", NULL},
    {"aten::masked_fill_", "Tensor(a!) self, Tensor mask, Scalar value", NULL},
    {"aten::masked_fill_", "Tensor(a!) self, Tensor mask, Tensor value", NULL},
    {"aten::where", "Tensor condition, Tensor self, Tensor other", NULL},
    {"aten::where", "Tensor condition, Tensor self, Scalar other", NULL},
    {"aten::where", "Tensor condition, Scalar self, Tensor other", NULL},
    {"aten::clamp", "Tensor self, Scalar? min, Scalar? max", NULL},
    {"aten::clamp_", "Tensor(a!) self, Scalar? min, Scalar? max", NULL},
    {"aten::clamp_min", "Tensor self, Scalar min", NULL},
    {"aten::clamp_max", "Tensor self, Scalar max", NULL},
    {"aten::addcmul", "Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value", NULL},
    {"aten::lerp", "Tensor self, Tensor end, Scalar weight", NULL},
    {"aten::fill_", "Tensor(a!) self, Scalar value", NULL},
    {"aten::fill_", "Tensor(a!) self, Tensor value", NULL},
    /* reductions */
    {"aten::sum", "Tensor self, *, ScalarType? dtype", NULL},
    {"aten::sum", "Tensor self, int[1]? dim, bool keepdim, *, ScalarType? dtype", NULL},
    {"aten::mean", "Tensor self, *, ScalarType? dtype", NULL},
    {"aten::mean", "Tensor self, int[1]? dim, bool keepdim, *, ScalarType? dtype", NULL},
    {"aten::prod", "Tensor self, *, ScalarType? dtype", NULL},
    {"aten::prod", "Tensor self, int dim, bool keepdim, *, ScalarType? dtype", NULL},
    {"aten::amax", "Tensor self, int[1] dim, bool keepdim", NULL},
    {"aten::amin", "Tensor self, int[1] dim, bool keepdim", NULL},
    {"aten::max", "Tensor self", NULL},
    {"aten::max", "Tensor self, int dim, bool keepdim", NULL},
    {"aten::min", "Tensor self", NULL},
    {"aten::min", "Tensor self, int dim, bool keepdim", NULL},
    {"aten::argmax", "Tensor self, int? dim, bool keepdim", NULL},
    {"aten::argmin", "Tensor self, int? dim, bool keepdim", NULL},
    {"aten::all", "Tensor self", NULL},
    {"aten::all", "Tensor self, int dim, bool keepdim", NULL},
    {"aten::any", "Tensor self", NULL},
    {"aten::any", "Tensor self, int dim, bool keepdim", NULL},
    {"aten::cumsum", "Tensor self, int dim, *, ScalarType? dtype", NULL},
    {"aten::var", "Tensor self, int[1]? dim, *, Scalar? correction, bool keepdim", NULL},
    {"aten::var_mean", "Tensor self, int[1]? dim, *, Scalar? correction, bool keepdim", NULL},
    {"aten::logsumexp", "Tensor self, int[1] dim, bool keepdim", NULL},
    {"aten::linalg_vector_norm",
     "Tensor self, Scalar ord, int[1]? dim, bool keepdim, *, ScalarType? dtype", NULL},
    {"aten::topk", "Tensor self, SymInt k, int dim, bool largest, bool sorted", NULL},
    {"aten::sort", "Tensor self, int dim, bool descending", NULL},
    {"aten::sort", "Tensor self, *, bool? stable, int dim, bool descending", NULL},
    {"aten::argsort", "Tensor self, int dim, bool descending", NULL},
    {"aten::argsort", "Tensor self, *, bool stable, int dim, bool descending", NULL},
    {"aten::histc", "Tensor self, int bins, Scalar min, Scalar max", NULL},
    /* copy / cast / layout */
    {"aten::copy_", "Tensor(a!) self, Tensor src, bool non_blocking", NULL},
    {"aten::to",
     "Tensor(a) self, ScalarType dtype, bool non_blocking, bool copy, MemoryFormat? memory_format",
     NULL},
    {"aten::to",
     "Tensor(a) self, Tensor other, bool non_blocking, bool copy, MemoryFormat? memory_format",
     NULL},
    {"aten::_to_copy",
     "Tensor self, *, ScalarType? dtype, Layout? layout, Device? device, bool? pin_memory, bool "
     "non_blocking, MemoryFormat? memory_format",
     NULL},
    {"aten::clone", "Tensor self, *, MemoryFormat? memory_format", NULL},
    {"aten::contiguous", "Tensor(a) self, *, MemoryFormat memory_format", NULL},
    {"aten::cat", "Tensor[] tensors, int dim", NULL},
    {"aten::stack", "Tensor[] tensors, int dim", NULL},
    /* gather / scatter */
    {"aten::index_select", "Tensor self, int dim, Tensor index", "index:self@dim"},
    {"aten::index_add", "Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha",
     "index:self@dim"},
    {"aten::index_add_", "Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha",
     "index:self@dim"},
    {"aten::index_copy_", "Tensor(a!) self, int dim, Tensor index, Tensor source",
     "index:self@dim"},
    {"aten::embedding",
     "Tensor weight, Tensor indices, SymInt padding_idx, bool scale_grad_by_freq, bool sparse",
     "indices:weight@0"},
    {"aten::gather", "Tensor self, int dim, Tensor index, *, bool sparse_grad", "index:self@dim"},
    {"aten::scatter", "Tensor self, int dim, Tensor index, Tensor src", "index:self@dim"},
    {"aten::scatter_", "Tensor(a!) self, int dim, Tensor index, Tensor src", "index:self@dim"},
    {"aten::scatter_add", "Tensor self, int dim, Tensor index, Tensor src", "index:self@dim"},
    {"aten::scatter_add_", "Tensor(a!) self, int dim, Tensor index, Tensor src", "index:self@dim"},
    {"aten::index", "Tensor self, Tensor?[] indices", NULL},
    {"aten::clamp_min_", "Tensor(a!) self, Scalar min", NULL},
    {"aten::clamp_max_", "Tensor(a!) self, Scalar max", NULL},
    {"aten::threshold_backward", "Tensor grad_output, Tensor self, Scalar threshold", NULL},
    {"aten::upsample_nearest1d", "Tensor self, SymInt[1] output_size, float? scales", NULL},
    {"aten::upsample_nearest2d",
     "Tensor self, SymInt[2] output_size, float? scales_h, float? scales_w", NULL},
    {"aten::max_pool2d_with_indices",
     "Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool "
     "ceil_mode",
     NULL},
    {"aten::normal_", "Tensor(a!) self, float mean, float std, *, Generator? generator", NULL},
    {"aten::uniform_", "Tensor(a!) self, float from, float to, *, Generator? generator", NULL},
    {"aten::mse_loss_backward", "Tensor grad_output, Tensor self, Tensor target, int reduction",
     NULL},
    {"aten::mse_loss_backward",
     "Tensor grad_output, Tensor self, Tensor target, int reduction, *, Tensor(a!) grad_input",
     NULL},
    /* backward of norms and convolution (training traces) */
    {"aten::native_layer_norm_backward",
     "Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? "
     "weight, Tensor? bias, bool[3] output_mask",
     NULL},
    {"aten::native_batch_norm_backward",
     "Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, "
     "Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask",
     NULL},
    {"aten::native_group_norm_backward",
     "Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, "
     "SymInt HxW, int group, bool[3] output_mask",
     NULL},
    {"aten::_fused_rms_norm_backward",
     "Tensor grad_out, Tensor input, int[] normalized_shape, Tensor rstd, Tensor? weight, bool[2] "
     "output_mask",
     NULL},
    {"aten::convolution_backward",
     "Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, "
     "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt "
     "groups, bool[3] output_mask",
     NULL},
    /* convolution */
    {"aten::convolution",
     "Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] "
     "dilation, bool transposed, SymInt[] output_padding, SymInt groups",
     NULL},
    {"aten::_convolution",
     "Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] "
     "dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool "
     "deterministic, bool cudnn_enabled, bool allow_tf32",
     NULL},
    {"aten::conv1d",
     "Tensor input, Tensor weight, Tensor? bias, SymInt[1] stride, SymInt[1] padding, SymInt[1] "
     "dilation, SymInt groups",
     NULL},
    {"aten::conv2d",
     "Tensor input, Tensor weight, Tensor? bias, SymInt[2] stride, SymInt[2] padding, SymInt[2] "
     "dilation, SymInt groups",
     NULL},
    {"aten::conv3d",
     "Tensor input, Tensor weight, Tensor? bias, SymInt[3] stride, SymInt[3] padding, SymInt[3] "
     "dilation, SymInt groups",
     NULL},
    {"aten::cudnn_convolution",
     "Tensor self, Tensor weight, SymInt[] padding, SymInt[] stride, SymInt[] dilation, SymInt "
     "groups, bool benchmark, bool deterministic, bool allow_tf32",
     NULL},
};

/* ---- dtypes ---- */

static const struct {
    const char *rec, *torch, *ir;
    int bytes; /* element size */
} dtypes[] = {
    {"float", "torch.float32", "float", 4},
    {"double", "torch.float64", "double", 8},
    {"c10::Half", "torch.float16", "c10::Half", 2},
    {"c10::BFloat16", "torch.bfloat16", "c10::BFloat16", 2},
    {"long int", "torch.int64", "long", 8},
    {"long", "torch.int64", "long", 8},
    {"int", "torch.int32", "int", 4},
    {"short int", "torch.int16", NULL, 2},
    {"short", "torch.int16", NULL, 2},
    {"signed char", "torch.int8", NULL, 1},
    {"unsigned char", "torch.uint8", NULL, 1},
    {"bool", "torch.bool", "bool", 1},
    {"c10::Float8_e4m3fn", "torch.float8_e4m3fn", NULL, 1},
    {"c10::Float8_e5m2", "torch.float8_e5m2", NULL, 1},
    {"c10::Float8_e4m3fnuz", "torch.float8_e4m3fnuz", NULL, 1},
    {"c10::Float8_e5m2fnuz", "torch.float8_e5m2fnuz", NULL, 1},
    {"c10::Float8_e8m0fnu", "torch.float8_e8m0fnu", NULL, 1},
    {"c10::complex<float>", "torch.complex64", NULL, 8},
    {"c10::complex<double>", "torch.complex128", NULL, 16},
};

bool rp_gemm_op(const char *op)
{
    const char *c = op ? strstr(op, "::") : NULL;
    const char *nm = c ? c + 2 : op ? op : "";
    size_t l = strlen(nm);
    return (l >= 2 && strcmp(nm + l - 2, "mm") == 0) || strstr(nm, "linear") ||
           strstr(nm, "matmul") || strstr(nm, "conv");
}

const char *rp_torch_dtype(const char *recorded)
{
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
        if (strcmp(dtypes[i].rec, recorded) == 0)
            return dtypes[i].torch;
    return NULL;
}

const char *rp_ir_dtype(const char *recorded)
{
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
        if (strcmp(dtypes[i].rec, recorded) == 0)
            return dtypes[i].ir;
    return NULL;
}

int rp_dtype_bytes(const char *recorded)
{
    for (size_t i = 0; recorded && i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
        if (strcmp(dtypes[i].rec, recorded) == 0)
            return dtypes[i].bytes;
    return 0;
}

const char *rp_scalar_type(long long v)
{
    static const char *const names[] = {
        "torch.uint8",
        "torch.int8",
        "torch.int16",
        "torch.int32",
        "torch.int64",
        "torch.float16",
        "torch.float32",
        "torch.float64",
        "torch.complex32",
        "torch.complex64",
        "torch.complex128",
        "torch.bool",
        NULL,
        NULL,
        NULL,
        "torch.bfloat16",
    };
    if (v >= 0 && v < (long long)(sizeof(names) / sizeof(names[0])))
        return names[v];
    switch (v) {
    case 23:
        return "torch.float8_e5m2";
    case 24:
        return "torch.float8_e4m3fn";
    case 25:
        return "torch.float8_e5m2fnuz";
    case 26:
        return "torch.float8_e4m3fnuz";
    default:
        return NULL;
    }
}

/* ---- one schema argument list ---- */

struct sarg {
    char type[48], name[48];
    bool kwarg;
};

/* Splits "Tensor self, *, Scalar alpha" (plus an out tensor when with_out);
 * returns the count or -1 when it does not fit. */
static int parse_sargs(const char *s, bool with_out, struct sarg *a, int max)
{
    int n = 0;
    bool kw = false;
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        if (*p == '*') {
            kw = true;
            p++;
            continue;
        }
        const char *sp = strchr(p, ' ');
        if (!sp || n >= max)
            return -1;
        const char *end = strchr(sp + 1, ',');
        if (!end)
            end = sp + 1 + strlen(sp + 1);
        snprintf(a[n].type, sizeof(a[n].type), "%.*s", (int)(sp - p), p);
        snprintf(a[n].name, sizeof(a[n].name), "%.*s", (int)(end - sp - 1), sp + 1);
        a[n].kwarg = kw;
        n++;
        p = end;
    }
    if (with_out) {
        if (n >= max)
            return -1;
        snprintf(a[n].type, sizeof(a[n].type), "Tensor(a!)");
        snprintf(a[n].name, sizeof(a[n].name), "out");
        a[n].kwarg = true;
        n++;
    }
    return n;
}

/* ---- recorded values ---- */

static bool is_tensor_type(const char *t)
{
    return rp_torch_dtype(t) != NULL;
}

static bool parse_ll(const char *s, long long *v)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (*end || errno)
        return false;
    *v = x;
    return true;
}

static bool parse_dbl(const char *s, double *v)
{
    if (!s || !*s)
        return false;
    char *end;
    double x = strtod(s, &end);
    if (*end)
        return false;
    *v = x;
    return true;
}

static bool parse_bool(const char *s, bool *v)
{
    if (!s)
        return false;
    if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0) {
        *v = true;
        return true;
    }
    if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0) {
        *v = false;
        return true;
    }
    return false;
}

/* "[1, -1]" into a newly allocated array; false when not a list of ints. */
static bool parse_int_list(const char *s, long long **out, size_t *n)
{
    size_t len = s ? strlen(s) : 0;
    if (len < 2 || s[0] != '[' || s[len - 1] != ']')
        return false;
    long long *v = calloc(len, sizeof(*v));
    if (!v)
        return false;
    size_t k = 0;
    const char *p = s + 1;
    while (*p && *p != ']') {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ']')
            break;
        char *end;
        errno = 0;
        v[k] = strtoll(p, &end, 10);
        if (end == p || errno || (*end != ',' && *end != ']' && *end != ' ')) {
            free(v);
            return false;
        }
        k++;
        p = end;
    }
    *out = v;
    *n = k;
    return true;
}

static bool parse_bool_list(const char *s, bool **out, size_t *n)
{
    size_t len = s ? strlen(s) : 0;
    if (len < 2 || s[0] != '[' || s[len - 1] != ']')
        return false;
    bool *v = calloc(len, sizeof(*v));
    if (!v)
        return false;
    size_t k = 0;
    const char *p = s + 1;
    while (*p && *p != ']') {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ']')
            break;
        if (strncmp(p, "True", 4) == 0 || strncmp(p, "true", 4) == 0) {
            v[k++] = true;
            p += 4;
        } else if (strncmp(p, "False", 5) == 0 || strncmp(p, "false", 5) == 0) {
            v[k++] = false;
            p += 5;
        } else {
            free(v);
            return false;
        }
    }
    *out = v;
    *n = k;
    return true;
}

static int tensor_from(const struct rp_val *dims, const struct rp_val *strides, const char *dtype,
                       struct rp_tensor *t)
{
    if (dims->k != RV_SEQ || (strides->k != RV_SEQ))
        return MP_EUNSUP;
    t->nd = dims->n;
    t->shape = calloc(dims->n + 1, sizeof(long long));
    t->strides = calloc(dims->n + 1, sizeof(long long));
    t->dtype = mp_strdup(dtype);
    if (!t->shape || !t->strides || !t->dtype)
        return MP_ENOMEM;
    bool have_strides = strides->n == dims->n;
    long long run = 1, span = 1;
    for (size_t i = dims->n; i-- > 0;) {
        if (dims->items[i].k != RV_INT || (have_strides && strides->items[i].k != RV_INT))
            return MP_EUNSUP;
        t->shape[i] = dims->items[i].i;
        t->strides[i] = have_strides ? strides->items[i].i : run;
        long long ext;
        /* no negative sizes or strides (torch has none), storage below 2^40 elements */
        if (t->shape[i] < 0 || t->strides[i] < 0 ||
            __builtin_mul_overflow(t->shape[i] > 0 ? t->shape[i] - 1 : 0, t->strides[i], &ext) ||
            __builtin_add_overflow(span, ext, &span) || span > RP_MAX_SPAN ||
            __builtin_mul_overflow(run, t->shape[i] > 0 ? t->shape[i] : 1, &run))
            return MP_EUNSUP;
    }
    return 0;
}

static void tensor_fini(struct rp_tensor *t)
{
    free(t->shape);
    free(t->strides);
    free(t->dtype);
    memset(t, 0, sizeof(*t));
}

static void arg_fini(struct rp_arg *a)
{
    free(a->text);
    free(a->ints);
    free(a->bools);
    free(a->vals);
    tensor_fini(&a->t);
    for (size_t i = 0; a->tl && i < a->n; i++)
        tensor_fini(&a->tl[i]);
    free(a->tl);
    memset(a, 0, sizeof(*a));
}

void rp_call_fini(struct rp_call *c)
{
    for (size_t i = 0; c->args && i < c->n; i++)
        arg_fini(&c->args[i]);
    free(c->args);
    memset(c, 0, sizeof(*c));
}

static const char *seq_str(const struct rp_val *v, size_t i)
{
    if (v->k != RV_SEQ || i >= v->n)
        return NULL;
    return v->items[i].k == RV_STR ? v->items[i].s : NULL;
}

/* An integer tensor whose values the trace recorded (its Concrete Inputs
 * cell a list of as many ints as the tensor has elements): kept in a->vals.
 * MP_ENOMEM or 0. */
static int record_values(const char *cv, struct rp_arg *a)
{
    const char *dt = rp_torch_dtype(a->t.dtype);
    if (!cv || cv[0] != '[' || !dt || !strstr(dt, "int"))
        return 0;
    long long numel = 1;
    for (size_t i = 0; i < a->t.nd; i++)
        if (__builtin_mul_overflow(numel, a->t.shape[i], &numel) || numel > 1 << 20)
            return 0;
    long long *v = NULL;
    size_t n = 0;
    if (!parse_int_list(cv, &v, &n))
        return 0;
    if ((long long)n != numel) {
        free(v);
        return 0;
    }
    a->vals = v;
    a->nvals = n;
    return 0;
}

long long rp_offs_rows(const struct rp_call *c, const struct rp_arg *a)
{
    if (a->of < 0 || (size_t)a->of >= c->n || c->args[a->of].k != RA_TENSOR ||
        c->args[a->of].t.nd == 0)
        return 1;
    const struct rp_tensor *s = &c->args[a->of].t;
    bool mat2_3d = c->n > 1 && c->args[1].k == RA_TENSOR && c->args[1].t.nd == 3;
    return s->nd == 2 && mat2_3d ? s->shape[0] : s->shape[s->nd - 1];
}

const char *rp_vfrom_name(enum rp_vfrom f)
{
    static const char *const n[] = {"", "trace", "derived", "default"};
    return f <= RF_DEFAULT ? n[f] : "";
}

enum rp_vfrom rp_call_vfrom(const struct rp_call *c)
{
    enum rp_vfrom w = RF_NONE;
    for (size_t i = 0; i < c->n; i++) {
        enum rp_vfrom f = c->args[i].k == RA_TENSOR ? c->args[i].vfrom : RF_NONE;
        if (f == RF_DEFAULT || (f == RF_DERIVED && w != RF_DEFAULT) ||
            (f == RF_TRACE && w == RF_NONE))
            w = f;
    }
    return w;
}

/* Where the values of a come from: recorded, else derived (the offsets of
 * one group end at the row count), else the default. */
static int set_vfrom(const struct rp_call *c, struct rp_arg *a)
{
    if (a->vals) {
        a->vfrom = RF_TRACE;
        return 0;
    }
    if (a->role == RI_OFFS && a->t.nd == 1 && a->t.shape[0] == 1) {
        if (!(a->vals = calloc(1, sizeof(*a->vals))))
            return MP_ENOMEM;
        a->vals[0] = rp_offs_rows(c, a);
        a->nvals = 1;
        a->vfrom = RF_DERIVED;
        return 0;
    }
    a->vfrom = a->role != RI_ANY ? RF_DEFAULT : RF_NONE;
    return 0;
}

/* One recorded argument as schema type `st`; 1 matched (a filled), 0 not,
 * negative MP_E* on error. */
static int match_arg(const char *st0, const char *rt, const char *cv, const struct rp_val *dim,
                     const struct rp_val *str, struct rp_arg *a)
{
    char st[48];
    snprintf(st, sizeof(st), "%s", st0);
    size_t sl = strlen(st);
    bool opt = sl && st[sl - 1] == '?';
    if (opt) {
        st[--sl] = 0;
        if (!*rt) {
            a->k = RA_NONE;
            return 1;
        }
        if (strcmp(rt, "ScalarList") == 0 && cv && strcmp(cv, "[]") == 0) {
            a->k = RA_EMPTY;
            return 1;
        }
    }
    if (strncmp(st, "Tensor[]", 8) == 0 || strncmp(st, "Tensor?[]", 9) == 0) {
        if (strcmp(rt, "TensorList") != 0 || dim->k != RV_SEQ || !dim->n)
            return 0;
        a->k = RA_TLIST;
        a->tl = calloc(dim->n, sizeof(*a->tl));
        if (!a->tl)
            return MP_ENOMEM;
        a->n = dim->n;
        for (size_t i = 0; i < dim->n; i++) {
            struct rp_val none = {.k = RV_SEQ};
            const struct rp_val *si = str->k == RV_SEQ && i < str->n ? &str->items[i] : &none;
            /* the list's dtypes are not recorded: the caller sets them */
            int rc = tensor_from(&dim->items[i], si, "", &a->tl[i]);
            if (rc)
                return rc == MP_EUNSUP ? 0 : rc;
        }
        return 1;
    }
    if (strncmp(st, "Tensor", 6) == 0) {
        if (!is_tensor_type(rt))
            return 0;
        a->k = RA_TENSOR;
        a->mutated = strstr(st, "!") != NULL;
        int rc = tensor_from(dim, str, rt, &a->t);
        if (rc)
            return rc == MP_EUNSUP ? 0 : rc;
        return record_values(cv, a) ? MP_ENOMEM : 1;
    }
    if (strcmp(st, "bool") == 0) {
        a->k = RA_BOOL;
        return strcmp(rt, "Scalar") == 0 && parse_bool(cv, &a->b);
    }
    if (strcmp(st, "int") == 0 || strcmp(st, "SymInt") == 0 || strcmp(st, "ScalarType") == 0 ||
        strcmp(st, "MemoryFormat") == 0 || strcmp(st, "Layout") == 0) {
        a->k = strcmp(st, "ScalarType") == 0 ? RA_DTYPE : RA_INT;
        if (strcmp(st, "ScalarType") == 0 && (!parse_ll(cv, &a->i) || !rp_scalar_type(a->i)))
            return 0;
        return strcmp(rt, "Scalar") == 0 && parse_ll(cv, &a->i);
    }
    if (strcmp(st, "float") == 0 || strcmp(st, "Scalar") == 0) {
        if (strcmp(rt, "Scalar") != 0)
            return 0;
        if (strcmp(st, "Scalar") == 0 && parse_ll(cv, &a->i)) {
            a->k = RA_INT;
            return 1;
        }
        a->k = RA_FLOAT;
        if (parse_dbl(cv, &a->f))
            return 1;
        if (strcmp(st, "Scalar") == 0 && parse_bool(cv, &a->b)) {
            a->k = RA_BOOL;
            return 1;
        }
        return 0;
    }
    if (strncmp(st, "int[", 4) == 0 || strncmp(st, "SymInt[", 7) == 0) {
        a->k = RA_INTS;
        if (strcmp(rt, "ScalarList") == 0)
            return parse_int_list(cv, &a->ints, &a->n);
        if (strcmp(rt, "Scalar") == 0 && parse_ll(cv, &a->i)) {
            a->k = RA_INT;
            return 1;
        }
        return 0;
    }
    if (strncmp(st, "bool[", 5) == 0) {
        a->k = RA_BOOLS;
        return strcmp(rt, "ScalarList") == 0 && parse_bool_list(cv, &a->bools, &a->n);
    }
    if (strcmp(st, "str") == 0) {
        a->k = RA_STR;
        return cv != NULL && *rt;
    }
    return 0; /* Device and other types: not rebuilt */
}

static int apply_roles(const char *roles, struct rp_call *c)
{
    if (!roles)
        roles = "";
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", roles);
    char *save = NULL;
    for (char *r = strtok_r(buf, ";", &save); r; r = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(r, ':');
        if (!colon)
            continue;
        *colon = 0;
        char *of = colon + 1;
        char *at = strchr(of, '@');
        char *hash = strchr(of, '#');
        if (at)
            *at = 0;
        if (hash)
            *hash = 0;
        int ia = -1, io = -1, id = -1;
        for (size_t i = 0; i < c->n; i++) {
            if (strcmp(c->args[i].name, r) == 0)
                ia = (int)i;
            if (strcmp(c->args[i].name, of) == 0)
                io = (int)i;
            if (at && strcmp(c->args[i].name, at + 1) == 0)
                id = (int)i;
        }
        if (ia < 0 || io < 0 || c->args[ia].k != RA_TENSOR)
            continue;
        struct rp_arg *a = &c->args[ia];
        a->role = hash ? RI_OFFS : RI_INDEX;
        a->of = io;
        a->dim_arg = id;
        a->dim = at && id < 0 ? atoi(at + 1) : 0;
        c->values_matter = true;
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->args[i].k == RA_TENSOR && (c->args[i].role != RI_ANY || c->args[i].vals) &&
            set_vfrom(c, &c->args[i]))
            return MP_ENOMEM;
    return 0;
}

/* Tries one schema (with or without an out tensor) on the recorded row. */
static int try_schema(const struct rp_schema *s, bool with_out, const struct rp_val *dims,
                      const struct rp_val *types, const struct rp_val *strides,
                      const struct rp_val *conc, struct rp_call *c)
{
    struct sarg sa[24];
    int n = parse_sargs(s->args, with_out, sa, 24);
    if (n < 0 || (size_t)n != types->n)
        return 0;
    memset(c, 0, sizeof(*c));
    c->args = calloc((size_t)n + 1, sizeof(*c->args));
    if (!c->args)
        return MP_ENOMEM;
    c->n = (size_t)n;
    static const struct rp_val empty = {.k = RV_SEQ};
    for (int i = 0; i < n; i++) {
        struct rp_arg *a = &c->args[i];
        snprintf(a->name, sizeof(a->name), "%s", sa[i].name);
        snprintf(a->type, sizeof(a->type), "%s", sa[i].type);
        a->kwarg = sa[i].kwarg;
        a->of = a->dim_arg = -1;
        const char *rt = seq_str(types, (size_t)i);
        const char *cv = seq_str(conc, (size_t)i);
        const struct rp_val *di =
            dims->k == RV_SEQ && (size_t)i < dims->n ? &dims->items[i] : &empty;
        const struct rp_val *st =
            strides->k == RV_SEQ && (size_t)i < strides->n ? &strides->items[i] : &empty;
        int m = rt ? match_arg(sa[i].type, rt, cv, di, st, a) : 0;
        if (m == 0 && rt && !*rt && sa[i].kwarg && !strstr(sa[i].type, "Tensor")) {
            a->k = RA_NONE; /* a keyword argument recorded empty: left at its default */
            m = 1;
        }
        if (m <= 0) {
            rp_call_fini(c);
            return m;
        }
        if (cv && *cv && !(a->text = mp_strdup(cv))) {
            rp_call_fini(c);
            return MP_ENOMEM;
        }
        if (i == 0 && a->k == RA_TENSOR && strstr(sa[i].type, "!"))
            a->mutated = true;
    }
    /* tensor lists take the dtype of the op's first tensor (not recorded) */
    const char *dt = "float";
    for (size_t i = 0; i < c->n; i++)
        if (c->args[i].k == RA_TENSOR) {
            dt = c->args[i].t.dtype;
            break;
        }
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = 0; c->args[i].k == RA_TLIST && j < c->args[i].n; j++) {
            free(c->args[i].tl[j].dtype);
            if (!(c->args[i].tl[j].dtype = mp_strdup(dt)))
                return MP_ENOMEM;
        }
    snprintf(c->op, sizeof(c->op), "%s", s->name);
    snprintf(c->schema, sizeof(c->schema), "%s(%s%s)", s->name, s->args,
             with_out ? strchr(s->args, '*') ? ", Tensor(a!) out" : ", *, Tensor(a!) out" : "");
    return apply_roles(s->roles, c) ? MP_ENOMEM : 1;
}

int rp_match(const char *op, const char *dims_s, const char *types_s, const char *strides_s,
             const char *conc_s, struct rp_call *c, char *why, size_t nwhy, struct mp_diag *d)
{
    struct rp_val v[4];
    int rc = rp_cells_parse(dims_s, types_s, strides_s, conc_s, v, d);
    const struct rp_val *dims = &v[0], *types = &v[1], *strides = &v[2], *conc = &v[3];
    bool known = false;
    if (!rc && types->k != RV_SEQ) {
        snprintf(why, nwhy, "no argument types recorded (trace without record_shapes?)");
        rc = MP_ENOTFOUND;
    }
    for (int pass = 0; !rc && pass < 2; pass++) {
        for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
            if (strcmp(schemas[i].name, op) != 0)
                continue;
            known = true;
            int m = try_schema(&schemas[i], pass == 1, dims, types, strides, conc, c);
            if (m < 0) {
                rc = m;
                break;
            }
            if (m == 1)
                goto out;
        }
    }
    if (!rc) {
        rc = MP_ENOTFOUND;
        if (!known)
            snprintf(why, nwhy, "no schema for %s in magpie's table", op);
        else
            snprintf(why, nwhy,
                     "the recorded arguments %s match no schema of %s (a list or optional "
                     "argument the profiler left empty?)",
                     types_s, op);
    }
out:
    rp_cells_fini(v);
    return rc;
}
