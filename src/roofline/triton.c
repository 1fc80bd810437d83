/* torch.compile (Inductor) Triton kernels launched as CPU ops named
 * triton_poi_* (pointwise), triton_red_* and triton_per_* (reductions): the
 * fused ATen ops are read from the kernel name, the element counts from the
 * trailing integer Concrete Inputs, the bytes from the tensor arguments.
 *
 * flops = sum of per-element costs of the fused ops * xnumel * rnumel (add,
 * mul, ... 1; pow, sqrt, rsqrt, var, reciprocal 2; exp, log, sigmoid, tanh,
 * silu 4; gelu 8; copies 0); bytes = sum of prod(shape) * size over tensor
 * arguments, plus one more write of the first tensor's type per element for
 * pointwise kernels. The compute spec's precision is the torch dtype name
 * ("vector_bfloat16"), which no arch file defines, so these ops have no
 * roofline. TraceLens's fallback of reading the Inductor cache directory on
 * the machine running the report is not reproduced: without the trace args
 * the op is skipped, as TraceLens does when no cache exists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline_int.h"

/* Op names the kernel name is segmented against: torch.ops.aten plus
 * torch.distributed ops, as listed by TraceLens (PerfModel/_known_aten_ops.py,
 * generated from torch 2.11). Sorted by strcmp for bsearch. */
static const char *const known_ops[] = {
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward",
    "_adaptive_avg_pool3d",
    "_adaptive_avg_pool3d_backward",
    "_add_relu",
    "_addmm_activation",
    "_amp_foreach_non_finite_check_and_unscale_",
    "_assert_async",
    "_assert_scalar",
    "_assert_tensor_metadata",
    "_batch_norm_no_update",
    "_batch_norm_with_update",
    "_batch_norm_with_update_functional",
    "_cdist_backward",
    "_cdist_forward",
    "_cholesky_solve_helper",
    "_chunk_cat",
    "_convert_weight_to_int4pack",
    "_convert_weight_to_int4pack_for_cpu",
    "_convolution_pointwise",
    "_cslt_sparse_mm",
    "_cudnn_rnn",
    "_dir",
    "_dyn_quant_matmul_4bit",
    "_dyn_quant_pack_4bit_weight",
    "_efficient_attention_backward",
    "_efficient_attention_forward",
    "_embedding_bag",
    "_embedding_bag_backward",
    "_embedding_bag_dense_backward",
    "_embedding_bag_forward_only",
    "_embedding_bag_per_sample_weights_backward",
    "_euclidean_dist",
    "_fft_c2c",
    "_fft_c2r",
    "_fft_r2c",
    "_flash_attention_backward",
    "_flash_attention_forward",
    "_foreach_norm",
    "_functional_assert_async",
    "_functional_sym_constrain_range",
    "_functional_sym_constrain_range_for_size",
    "_fused_adam",
    "_fused_adam_",
    "_fused_adamw_",
    "_fused_dropout",
    "_fused_moving_avg_obs_fq_helper",
    "_fused_rms_norm",
    "_fused_rms_norm_backward",
    "_grouped_mm",
    "_int_mm",
    "_jagged_to_padded_dense_forward",
    "_linalg_det",
    "_linalg_eigh",
    "_linalg_eigvals",
    "_linalg_slogdet",
    "_linalg_solve_ex",
    "_linalg_svd",
    "_linear_pointwise",
    "_list_to_tensor",
    "_local_scalar_dense",
    "_log_softmax",
    "_log_softmax_backward_data",
    "_make_dep_token",
    "_make_token",
    "_masked_scale",
    "_mkl_linear",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_functional",
    "_native_batch_norm_legit_no_training",
    "_native_multi_head_attention",
    "_nested_tensor_from_tensor_list",
    "_nested_view_from_buffer",
    "_nested_view_from_buffer_copy",
    "_pack_padded_sequence",
    "_padded_dense_to_jagged_forward",
    "_pdist_backward",
    "_pdist_forward",
    "_pin_memory",
    "_prelu_kernel",
    "_prelu_kernel_backward",
    "_print",
    "_record_function_enter",
    "_record_function_enter_new",
    "_record_function_exit",
    "_reshape_alias",
    "_reshape_copy",
    "_resize_output",
    "_resize_output_",
    "_safe_softmax",
    "_scaled_dot_product_attention_math_for_mps",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_fused_attention_overrideable",
    "_scaled_grouped_mm",
    "_scaled_mm",
    "_scaled_mm_v2",
    "_segment_reduce_backward",
    "_sink_tokens",
    "_softmax",
    "_softmax_backward_data",
    "_sparse_coo_tensor_with_dims_and_tensors",
    "_sparse_semi_structured_addmm",
    "_sparse_semi_structured_linear",
    "_sparse_semi_structured_mm",
    "_thnn_fused_lstm_cell",
    "_thnn_fused_lstm_cell_backward_impl",
    "_to_copy",
    "_unique2",
    "_unsafe_index",
    "_unsafe_index_put",
    "_unsafe_masked_index",
    "_unsafe_masked_index_put_accumulate",
    "_unsafe_view",
    "_upsample_bicubic2d_aa",
    "_upsample_bilinear2d_aa",
    "_upsample_bilinear2d_aa_backward",
    "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d",
    "_upsample_nearest_exact2d_backward",
    "_upsample_nearest_exact3d",
    "_weight_int4pack_mm",
    "_weight_int4pack_mm_for_cpu",
    "_weight_int4pack_mm_with_scales_and_zeros",
    "_weight_int8pack_mm",
    "_weight_norm_interface",
    "_weight_norm_interface_backward",
    "abs",
    "abs_",
    "absolute",
    "absolute_",
    "accumulate_grad_",
    "acos",
    "acos_",
    "acosh",
    "acosh_",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_backward",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_backward",
    "add",
    "add_",
    "addbmm",
    "addbmm_",
    "addcdiv",
    "addcdiv_",
    "addcmul",
    "addcmul_",
    "addmm",
    "addmm_",
    "addmv",
    "addmv_",
    "addr",
    "affine_grid_generator",
    "alias",
    "alias_copy",
    "all",
    "all_gather",
    "all_gather_coalesced",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_reduce_coalesced",
    "all_to_all",
    "all_to_all_single",
    "alpha_dropout",
    "amax",
    "amin",
    "aminmax",
    "angle",
    "annotate",
    "any",
    "append",
    "arange",
    "arccos",
    "arccos_",
    "arccosh",
    "arccosh_",
    "arcsin",
    "arcsin_",
    "arcsinh",
    "arcsinh_",
    "arctan",
    "arctan2",
    "arctan2_",
    "arctan_",
    "arctanh",
    "arctanh_",
    "argmax",
    "argmin",
    "as_strided",
    "as_strided_",
    "as_strided_copy",
    "as_strided_scatter",
    "asin",
    "asin_",
    "asinh",
    "asinh_",
    "atan",
    "atan2",
    "atan2_",
    "atan_",
    "atanh",
    "atanh_",
    "avg_pool2d",
    "avg_pool2d_backward",
    "avg_pool3d",
    "avg_pool3d_backward",
    "baddbmm",
    "baddbmm_",
    "batch_isend_irecv",
    "batch_norm_backward",
    "bernoulli",
    "bernoulli_",
    "bessel_i0",
    "bessel_i0e",
    "bessel_i1",
    "bessel_i1e",
    "bessel_j0",
    "bessel_j1",
    "binary_cross_entropy",
    "binary_cross_entropy_backward",
    "binary_cross_entropy_with_logits",
    "bincount",
    "bitwise_and",
    "bitwise_and_",
    "bitwise_left_shift",
    "bitwise_left_shift_",
    "bitwise_not",
    "bitwise_not_",
    "bitwise_or",
    "bitwise_or_",
    "bitwise_right_shift",
    "bitwise_right_shift_",
    "bitwise_xor",
    "bitwise_xor_",
    "block_diag",
    "bmm",
    "broadcast_in_dim",
    "broadcast_object_list",
    "broadcast_tensors",
    "bucketize",
    "c10d_logger",
    "cat",
    "cauchy",
    "cauchy_",
    "cbrt",
    "ceil",
    "ceil_",
    "celu",
    "celu_",
    "channel_shuffle",
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_max_",
    "clamp_min",
    "clamp_min_",
    "clear",
    "clip",
    "clip_",
    "clone",
    "col2im",
    "collapse",
    "collapse_view",
    "complex",
    "conj",
    "conj_physical",
    "conj_physical_",
    "constant_pad_nd",
    "conv2d",
    "convert_element_type",
    "convolution",
    "convolution_backward",
    "copy",
    "copy_",
    "copy_strided",
    "copy_to",
    "copysign",
    "copysign_",
    "cos",
    "cos_",
    "cosh",
    "cosh_",
    "count",
    "count_nonzero",
    "cudnn_batch_norm",
    "cudnn_batch_norm_backward",
    "cummax",
    "cummin",
    "cumprod",
    "cumprod_",
    "cumsum",
    "cumsum_",
    "default_pg_timeout",
    "deg2rad",
    "deg2rad_",
    "dense_dim",
    "destroy_process_group",
    "detach",
    "device",
    "device_mesh",
    "device_put",
    "diag",
    "diag_embed",
    "diagonal",
    "diagonal_backward",
    "diagonal_copy",
    "diagonal_scatter",
    "difference",
    "difference_update",
    "digamma",
    "digamma_",
    "dim",
    "discard",
    "dist",
    "distributed_c10d",
    "div",
    "div_",
    "divide",
    "divide_",
    "dot",
    "dropout",
    "elu",
    "elu_",
    "elu_backward",
    "embedding",
    "embedding_dense_backward",
    "empty",
    "empty_like",
    "empty_permuted",
    "empty_strided",
    "eq",
    "eq_",
    "erf",
    "erf_",
    "erf_inv",
    "erfc",
    "erfc_",
    "erfcx",
    "erfinv",
    "erfinv_",
    "exp",
    "exp2",
    "exp2_",
    "exp_",
    "expand",
    "expand_copy",
    "expm1",
    "expm1_",
    "exponential",
    "exponential_",
    "extend",
    "eye",
    "fft_c2c",
    "fft_c2r",
    "fft_fft",
    "fft_fft2",
    "fft_fftn",
    "fft_fftshift",
    "fft_hfft",
    "fft_hfft2",
    "fft_hfftn",
    "fft_ifft",
    "fft_ifft2",
    "fft_ifftn",
    "fft_ifftshift",
    "fft_ihfft",
    "fft_ihfft2",
    "fft_ihfftn",
    "fft_irfft",
    "fft_irfft2",
    "fft_irfftn",
    "fft_r2c",
    "fft_rfft",
    "fft_rfft2",
    "fft_rfftn",
    "fill",
    "fill_",
    "fix",
    "fix_",
    "flip",
    "float_power_",
    "floor",
    "floor_",
    "floor_divide",
    "floor_divide_",
    "fmax",
    "fmin",
    "fmod",
    "fmod_",
    "frac",
    "frac_",
    "fractional_max_pool2d",
    "frexp",
    "full",
    "full_like",
    "gather",
    "gather_object",
    "gcd",
    "gcd_",
    "ge",
    "ge_",
    "gelu",
    "gelu_",
    "gelu_backward",
    "geometric",
    "geometric_",
    "get_backend",
    "get_backend_config",
    "get_debug_level",
    "get_default_backend_for_device",
    "get_global_rank",
    "get_group_rank",
    "get_node_local_rank",
    "get_pg_count",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "glu",
    "glu_backward",
    "greater",
    "greater_",
    "greater_equal",
    "greater_equal_",
    "grid_sampler_2d",
    "grid_sampler_2d_backward",
    "grid_sampler_3d",
    "grid_sampler_3d_backward",
    "gru",
    "gt",
    "gt_",
    "hardshrink",
    "hardsigmoid",
    "hardsigmoid_",
    "hardsigmoid_backward",
    "hardswish",
    "hardswish_",
    "hardswish_backward",
    "hardtanh",
    "hardtanh_",
    "hardtanh_backward",
    "heaviside",
    "heaviside_",
    "hinge_embedding_loss",
    "histc",
    "huber_loss",
    "huber_loss_backward",
    "hypot",
    "hypot_",
    "i0",
    "i0_",
    "igamma",
    "igamma_",
    "igammac",
    "igammac_",
    "im2col",
    "imag",
    "index",
    "index_add",
    "index_add_",
    "index_copy",
    "index_copy_",
    "index_fill",
    "index_fill_",
    "index_put",
    "index_put_",
    "index_reduce",
    "index_reduce_",
    "index_select",
    "init_device_mesh",
    "init_process_group",
    "insert",
    "instance_norm",
    "int4mm_packed_weight_cpu",
    "intersection",
    "intersection_update",
    "iota",
    "is_available",
    "is_backend_available",
    "is_coalesced",
    "is_complex",
    "is_contiguous",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_non_overlapping_and_dense",
    "is_pinned",
    "is_same_size",
    "is_strides_like_format",
    "is_torchelastic_launched",
    "is_ucc_available",
    "is_xccl_available",
    "isdisjoint",
    "isfinite",
    "isin",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "issubset",
    "issuperset",
    "istft",
    "item",
    "kthvalue",
    "layer_norm",
    "lcm",
    "lcm_",
    "ldexp",
    "ldexp_",
    "le",
    "le_",
    "leaky_relu",
    "leaky_relu_",
    "leaky_relu_backward",
    "lerp",
    "lerp_",
    "less",
    "less_",
    "less_equal",
    "less_equal_",
    "lgamma",
    "lgamma_",
    "lift",
    "lift_fresh",
    "lift_fresh_copy",
    "linalg_cholesky_ex",
    "linalg_cross",
    "linalg_eig",
    "linalg_eigvals",
    "linalg_householder_product",
    "linalg_inv_ex",
    "linalg_ldl_factor_ex",
    "linalg_ldl_solve",
    "linalg_lu",
    "linalg_lu_factor_ex",
    "linalg_lu_solve",
    "linalg_matrix_exp",
    "linalg_qr",
    "linalg_solve_triangular",
    "linalg_vector_norm",
    "linear",
    "linear_backward",
    "linear_dynamic_fp16",
    "linear_relu_dynamic_fp16",
    "linspace",
    "log",
    "log10",
    "log10_",
    "log1p",
    "log1p_",
    "log2",
    "log2_",
    "log_",
    "log_normal",
    "log_normal_",
    "log_sigmoid_backward",
    "log_sigmoid_forward",
    "logaddexp",
    "logaddexp2",
    "logcumsumexp",
    "logging_handlers",
    "logical_and",
    "logical_and_",
    "logical_not",
    "logical_not_",
    "logical_or",
    "logical_or_",
    "logical_xor",
    "logical_xor_",
    "logit",
    "logit_",
    "logit_backward",
    "logspace",
    "logsumexp",
    "lstm",
    "lt",
    "lt_",
    "lu_unpack",
    "margin_ranking_loss",
    "masked_fill",
    "masked_fill_",
    "masked_scatter",
    "masked_scatter_",
    "masked_scatter_backward",
    "masked_select",
    "matmul",
    "max",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward",
    "max_pool3d_with_indices",
    "max_pool3d_with_indices_backward",
    "max_unpool2d",
    "max_unpool3d",
    "maximum",
    "maximum_value",
    "mean",
    "median",
    "meshgrid",
    "min",
    "minimum",
    "minimum_value",
    "miopen_batch_norm",
    "miopen_batch_norm_backward",
    "miopen_rnn",
    "mish",
    "mish_",
    "mish_backward",
    "mkldnn_rnn_layer",
    "mkldnn_rnn_layer_backward",
    "mm",
    "mode",
    "monitored_barrier",
    "mse_loss",
    "mse_loss_backward",
    "mul",
    "mul_",
    "multi_margin_loss",
    "multilabel_margin_loss_forward",
    "multinomial",
    "multiply",
    "multiply_",
    "mv",
    "mvlgamma",
    "mvlgamma_",
    "name",
    "nan_to_num",
    "nan_to_num_",
    "nanmedian",
    "nansum",
    "narrow",
    "narrow_copy",
    "native_batch_norm",
    "native_batch_norm_backward",
    "native_dropout",
    "native_dropout_backward",
    "native_group_norm",
    "native_group_norm_backward",
    "native_layer_norm",
    "native_layer_norm_backward",
    "ndtri",
    "ne",
    "ne_",
    "neg",
    "neg_",
    "negative",
    "negative_",
    "new_empty",
    "new_empty_strided",
    "new_full",
    "new_group",
    "new_ones",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "new_zeros",
    "nextafter",
    "nextafter_",
    "nll_loss",
    "nll_loss2d_backward",
    "nll_loss2d_forward",
    "nll_loss_backward",
    "nll_loss_forward",
    "nonzero",
    "nonzero_numpy",
    "nonzero_static",
    "norm",
    "normal",
    "normal_",
    "not_equal",
    "not_equal_",
    "numel",
    "ones",
    "ones_like",
    "ormqr",
    "pad_sequence",
    "pairwise_distance",
    "pdist",
    "permute",
    "permute_copy",
    "philox_rand",
    "pin_memory",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson",
    "polar",
    "polygamma",
    "pop",
    "positive",
    "pow",
    "pow_",
    "prelu",
    "prod",
    "qconv2d_pointwise",
    "qconv_pointwise",
    "qlinear_pointwise",
    "quantized_gru",
    "quantized_lstm",
    "rad2deg",
    "rad2deg_",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
    "real",
    "reciprocal",
    "reciprocal_",
    "recv_object_list",
    "reduce_op",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reflection_pad1d",
    "reflection_pad1d_backward",
    "reflection_pad2d",
    "reflection_pad2d_backward",
    "reflection_pad3d",
    "reflection_pad3d_backward",
    "register_rendezvous_handler",
    "relu",
    "relu6",
    "relu_",
    "remainder",
    "remainder_",
    "remote_device",
    "remove",
    "renorm",
    "renorm_",
    "repeat",
    "repeat_interleave",
    "replication_pad1d",
    "replication_pad1d_backward",
    "replication_pad2d",
    "replication_pad2d_backward",
    "replication_pad3d",
    "replication_pad3d_backward",
    "reshape",
    "resize",
    "resize_as",
    "resize_as_",
    "resize_storage_bytes_",
    "rev",
    "reverse",
    "rnn_relu",
    "rnn_tanh",
    "roll",
    "rot90",
    "round",
    "round_",
    "rrelu_with_noise",
    "rrelu_with_noise_",
    "rrelu_with_noise_backward",
    "rrelu_with_noise_functional",
    "rsqrt",
    "rsqrt_",
    "rsub",
    "scalar_tensor",
    "scatter",
    "scatter_",
    "scatter_add",
    "scatter_add_",
    "scatter_object_list",
    "scatter_reduce",
    "scatter_reduce_",
    "searchsorted",
    "segment_reduce",
    "select",
    "select_backward",
    "select_scatter",
    "selu",
    "selu_",
    "send_object_list",
    "set_",
    "set_debug_level",
    "set_debug_level_from_env",
    "sgn",
    "sgn_",
    "shift_left",
    "shift_right_arithmetic",
    "shrink_group",
    "sigmoid",
    "sigmoid_",
    "sigmoid_backward",
    "sign",
    "sign_",
    "signbit",
    "silu",
    "silu_",
    "silu_backward",
    "sin",
    "sin_",
    "sinc",
    "sinc_",
    "sinh",
    "sinh_",
    "size",
    "slice",
    "slice_backward",
    "slice_scatter",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "soft_margin_loss",
    "soft_margin_loss_backward",
    "softplus",
    "softplus_backward",
    "softshrink",
    "sort",
    "sparse_dim",
    "special_airy_ai",
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_chebyshev_polynomial_t",
    "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v",
    "special_chebyshev_polynomial_w",
    "special_entr",
    "special_erfcx",
    "special_hermite_polynomial_h",
    "special_hermite_polynomial_he",
    "special_i0e",
    "special_i1",
    "special_i1e",
    "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p",
    "special_log_ndtr",
    "special_modified_bessel_i0",
    "special_modified_bessel_i1",
    "special_modified_bessel_k0",
    "special_modified_bessel_k1",
    "special_ndtr",
    "special_ndtri",
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u",
    "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w",
    "special_spherical_bessel_j0",
    "special_xlog1py",
    "special_zeta",
    "spherical_bessel_j0",
    "split",
    "split_dim",
    "split_group",
    "split_with_sizes",
    "split_with_sizes_copy",
    "sqrt",
    "sqrt_",
    "square",
    "square_",
    "squeeze",
    "squeeze_copy",
    "stack",
    "std",
    "std_mean",
    "stft",
    "storage_offset",
    "stride",
    "sub",
    "sub_",
    "subtract",
    "subtract_",
    "sum",
    "supports_complex",
    "svd",
    "sym_constrain_range",
    "sym_constrain_range_for_size",
    "sym_numel",
    "sym_size",
    "sym_storage_offset",
    "sym_stride",
    "symmetric_difference",
    "symmetric_difference_update",
    "t",
    "t_",
    "t_copy",
    "take",
    "tan",
    "tan_",
    "tanh",
    "tanh_",
    "tanh_backward",
    "tensor_split",
    "threshold",
    "threshold_",
    "threshold_backward",
    "to",
    "topk",
    "trace",
    "transpose",
    "transpose_",
    "transpose_copy",
    "triangular_solve",
    "tril",
    "tril_",
    "tril_indices",
    "triu",
    "triu_",
    "triu_indices",
    "true_divide",
    "true_divide_",
    "trunc",
    "trunc_",
    "unbind",
    "unbind_copy",
    "unfold",
    "unfold_backward",
    "unfold_copy",
    "uniform",
    "uniform_",
    "union",
    "unique_consecutive",
    "unique_dim",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "unsqueeze",
    "unsqueeze_",
    "unsqueeze_copy",
    "update",
    "upsample_bicubic2d",
    "upsample_bilinear2d",
    "upsample_linear1d",
    "upsample_nearest1d",
    "upsample_nearest2d",
    "upsample_nearest2d_backward",
    "upsample_nearest3d",
    "upsample_trilinear3d",
    "var",
    "var_mean",
    "vdot",
    "view",
    "view_as_complex",
    "view_as_real",
    "view_copy",
    "view_of",
    "view_of_dtype",
    "where",
    "xlogy",
    "xlogy_",
    "xor_sum",
    "zero",
    "zero_",
    "zeros",
    "zeros_like",
    "zeta",
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool known(const char *s)
{
    return bsearch(&s, known_ops, sizeof(known_ops) / sizeof(known_ops[0]), sizeof(known_ops[0]),
                   cmp_str) != NULL;
}

static int flops_per_elem(const char *op)
{
    static const struct {
        const char *op;
        int f;
    } tab[] = {
        {"add", 1},   {"sub", 1},        {"mul", 1},  {"div", 1},     {"pow", 2},  {"sqrt", 2},
        {"rsqrt", 2}, {"exp", 4},        {"log", 4},  {"sigmoid", 4}, {"tanh", 4}, {"relu", 1},
        {"silu", 4},  {"gelu", 8},       {"mean", 1}, {"sum", 1},     {"var", 2},  {"abs", 1},
        {"neg", 1},   {"reciprocal", 2}, {"ne", 1},   {"eq", 1},      {"lt", 1},   {"gt", 1},
    };

    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (!strcmp(op, tab[i].op))
            return tab[i].f;
    return 0;
}

/* bytes of the Inductor argument dtypes (exact names only) */
static int c10_bytes(const char *dt, const char **prec)
{
    static const struct {
        const char *name, *prec;
        int b;
    } tab[] = {
        {"c10::BFloat16", "bfloat16", 2}, {"c10::Half", "half", 2}, {"c10::Float", "float", 4},
        {"c10::Double", "double", 8},     {"c10::Byte", "byte", 1}, {"c10::Char", "char", 1},
        {"c10::Int", "int", 4},           {"c10::Long", "long", 8},
    };

    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (!strcmp(dt, tab[i].name)) {
            *prec = tab[i].prec;
            return tab[i].b;
        }
    }
    return 0;
}

#define MAX_TOKENS 64
#define MAX_FUSED 32

/* The fused ops of "triton_<poi|red|per>_fused_<ops>_<n>": the underscore
 * tokens of <ops> segmented into known op names, preferring (from the end)
 * the longest op at each step. Returns the number of ops, 0 when the name
 * does not segment. ops[i] points into buf. */
static int parse_fused(const char *name, char *buf, size_t bufn, const char **ops)
{
    const char *p = name + 11; /* after triton_xxx_ */
    if (strncmp(p, "fused_", 6) != 0)
        return 0;
    p += 6;
    /* (.+)_(\d+)$ : the last "_<digits>" ending the name */
    size_t n = strlen(p);
    size_t e = n;
    while (e > 0 && p[e - 1] >= '0' && p[e - 1] <= '9')
        e--;
    if (e == n || e < 2 || p[e - 1] != '_')
        return 0;
    size_t len = e - 1; /* length of <ops> (at least one character) */
    if (len + 1 > bufn)
        return 0;
    memcpy(buf, p, len);
    buf[len] = '\0';
    /* tokens of <ops> */
    const char *tok[MAX_TOKENS];
    size_t toklen[MAX_TOKENS];
    int nt = 0;
    const char *s = buf;
    for (;;) {
        const char *u = strchr(s, '_');
        if (nt >= MAX_TOKENS)
            return 0;
        tok[nt] = s;
        toklen[nt++] = u ? (size_t)(u - s) : strlen(s);
        if (!u)
            break;
        s = u + 1;
    }
    /* dp[i]: prefix of i tokens segments; best[i]: start of the longest op
     * ending at token i (the greedy backtrack's choice) */
    bool dp[MAX_TOKENS + 1] = {true};
    int best[MAX_TOKENS + 1];
    char cand[256];
    for (int i = 1; i <= nt; i++) {
        best[i] = -1;
        size_t bestlen = 0;
        for (int j = 0; j < i; j++) {
            if (!dp[j])
                continue;
            size_t cl = (size_t)(tok[i - 1] + toklen[i - 1] - tok[j]);
            if (cl >= sizeof(cand))
                continue;
            memcpy(cand, tok[j], cl);
            cand[cl] = '\0';
            if (known(cand) && (best[i] < 0 || cl > bestlen)) {
                best[i] = j;
                bestlen = cl;
            }
        }
        dp[i] = best[i] >= 0;
    }
    if (!dp[nt])
        return 0;
    int starts[MAX_TOKENS], ns = 0;
    for (int pos = nt; pos > 0; pos = best[pos])
        starts[ns++] = best[pos];
    if (ns > MAX_FUSED)
        return 0;
    /* cut buf into the ops, in order */
    int nops = 0;
    int ends[MAX_TOKENS];
    for (int i = 0, pos = nt; i < ns; i++) {
        ends[i] = pos;
        pos = starts[i];
    }
    for (int i = ns - 1; i >= 0; i--) {
        const char *b = tok[starts[i]];
        char *end = (char *)(tok[ends[i] - 1] + toklen[ends[i] - 1]);
        *end = '\0';
        ops[nops++] = b;
    }
    return nops;
}

void roof_triton(struct roof_ctx *c)
{
    const char *name = c->op->name;
    struct pv *conc = roof_arg_opt(c, "Concrete Inputs");
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    struct pv *types = roof_arg_opt(c, "Input type");
    if (!roof_truthy(conc) || !roof_truthy(dims) || !roof_truthy(types)) {
        roof_notimpl(c, "NotImplementedError: no Inductor metadata in the trace args of %s", name);
        return;
    }
    if (!roof_pv_is_array(conc) || !roof_pv_is_array(dims) || !roof_pv_is_array(types)) {
        roof_fail(c, "TypeError: Inductor args are not lists");
        return;
    }
    bool reduction = !strncmp(name, "triton_red_", 11) || !strncmp(name, "triton_per_", 11);
    bool pointwise = !strncmp(name, "triton_poi_", 11);
    /* the integer Concrete Inputs, in order */
    int64_t last2[2] = {0, 0};
    size_t nsc = 0;
    for (size_t i = 0; i < roof_pv_array_size(conc); i++) {
        struct pv *v = roof_pv_array_get(conc, i);
        int64_t x;
        if (roof_pv_is_string(v)) {
            if (!roof_pv_string_length(v) || !roof_parse_pyint(roof_pv_string_value(v), &x))
                continue;
        } else if (roof_pv_is_integer(v)) {
            x = (int64_t)roof_pv_integer_value(v);
        } else if (roof_pv_is_real(v)) {
            x = (int64_t)roof_pv_real_value(v);
        } else if (roof_pv_is_boolean(v)) {
            x = roof_pv_is_true(v);
        } else {
            continue;
        }
        last2[0] = last2[1];
        last2[1] = x;
        nsc++;
    }
    int64_t xn, rn;
    if (reduction && nsc >= 2) {
        xn = last2[0];
        rn = last2[1];
    } else if (nsc) {
        xn = last2[1];
        rn = 1;
    } else {
        roof_notimpl(c, "NotImplementedError: no element counts in the trace args of %s", name);
        return;
    }
    char buf[512];
    const char *ops[MAX_FUSED];
    int nops = parse_fused(name, buf, sizeof(buf), ops);
    /* tensor arguments */
    double total = 0;
    int first_bpe = -1;
    const char *prec = NULL;
    size_t n = roof_pv_array_size(dims) < roof_pv_array_size(types) ? roof_pv_array_size(dims)
                                                                    : roof_pv_array_size(types);
    for (size_t i = 0; i < n; i++) {
        struct pv *d = roof_pv_array_get(dims, i), *t = roof_pv_array_get(types, i);
        if ((roof_pv_is_string(t) && !strcmp(roof_pv_string_value(t), "Scalar")) || !roof_truthy(d))
            continue;
        const char *pr = NULL;
        int b = roof_pv_is_string(t) ? c10_bytes(roof_pv_string_value(t), &pr) : 0;
        if (first_bpe < 0)
            first_bpe = b;
        if (!prec && b > 0)
            prec = pr;
        struct roof_shape s;
        if (!roof_shape(c, d, &s))
            return;
        total += (double)roof_mul(c, roof_prod(c, &s, 0, s.n), b);
    }
    if (pointwise && first_bpe >= 0)
        total += (double)roof_mul(c, first_bpe, xn);
    if (!roof_ok(c))
        return;
    /* ", ".join("aten.<op>") */
    char fused[1024];
    size_t fl = 0;
    fused[0] = '\0';
    int fpe = 0;
    for (int i = 0; i < nops; i++) {
        int w = snprintf(fused + fl, sizeof(fused) - fl, "%saten.%s", i ? ", " : "", ops[i]);
        if (w > 0 && (size_t)w < sizeof(fused) - fl)
            fl += (size_t)w;
        fpe += flops_per_elem(ops[i]);
    }
    roof_p_str(c, "fused_ops", fused);
    roof_p_int(c, "xnumel", xn);
    roof_p_int(c, "rnumel", rn);
    if (roof_begin(c, ROOF_FWD)) {
        roof_set_flops(c, (double)roof_mul(c, fpe, roof_mul(c, xn, rn)));
        roof_set_bytes(c, true, total);
        c->maf = "vector";
        c->precision = prec;
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}
