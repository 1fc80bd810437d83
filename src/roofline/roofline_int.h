/* Private interface of the roofline module: the op-name registry, the evaluation
 * context shared by the model families, and the helpers that read trace args
 * the way TraceLens's Python does (an out-of-range index or a missing key is
 * an exception that fails the row) and print parameters as Python's str(). */
#ifndef MP_ROOFLINE_INT_H
#define MP_ROOFLINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <magpie/roofline.h>

/* ---- args JSON (pjson.c): a flat, allocation-light reader ---- */

enum pv_type { PV_NULL, PV_TRUE, PV_FALSE, PV_INT, PV_REAL, PV_STR, PV_ARR, PV_OBJ };

struct pv_doc;

/* One JSON value; the children of an array or object follow it in the node
 * array (pre-order), each subtree `size` nodes long. */
struct pv {
    uint8_t type;     /* enum pv_type */
    uint32_t n;       /* children of an array/object, bytes of a string */
    uint32_t size;    /* nodes in this subtree, itself included */
    uint32_t key_off; /* object members: 1 + offset of the key in doc->text */
    uint32_t str_off; /* strings: offset of the decoded text in doc->text */

    union {
        int64_t i;
        double d;
    };
    struct pv_doc *doc;
};

#define PV_INLINE_NODES 128
#define PV_INLINE_TEXT 2048

struct pv_doc {
    struct pv *nodes;
    uint32_t n, cap;
    char *text; /* decoded strings and keys, NUL-terminated */
    size_t tlen, tcap;
    struct pv inline_nodes[PV_INLINE_NODES];
    char inline_text[PV_INLINE_TEXT];
};

/* 0, MP_EPARSE or MP_ENOMEM; pv_free afterwards in every case */
int pv_parse(const char *text, size_t len, struct pv_doc *d);
void pv_free(struct pv_doc *d);
struct pv *pv_root(struct pv_doc *d);
struct pv *pv_array_get(const struct pv *v, size_t i); /* arrays only; NULL out of range */
struct pv *pv_child(const struct pv *v, size_t i);     /* arrays and objects */
struct pv *pv_object_get(const struct pv *v, const char *key);
struct pv *pv_next(const struct pv *child); /* the following sibling */
const char *pv_key(const struct pv *member);
const char *pv_string_value(const struct pv *v);

static inline bool pv_is(const struct pv *v, int t)
{
    return v && v->type == t;
}

#define pv_is_array(v) pv_is((v), PV_ARR)
#define pv_is_object(v) pv_is((v), PV_OBJ)
#define pv_is_string(v) pv_is((v), PV_STR)
#define pv_is_integer(v) pv_is((v), PV_INT)
#define pv_is_real(v) pv_is((v), PV_REAL)
#define pv_is_null(v) pv_is((v), PV_NULL)
#define pv_is_true(v) pv_is((v), PV_TRUE)
#define pv_is_false(v) pv_is((v), PV_FALSE)

static inline bool pv_is_number(const struct pv *v)
{
    return pv_is_integer(v) || pv_is_real(v);
}

static inline bool pv_is_boolean(const struct pv *v)
{
    return pv_is_true(v) || pv_is_false(v);
}

static inline size_t pv_array_size(const struct pv *v)
{
    return pv_is_array(v) ? v->n : 0;
}

static inline size_t pv_object_size(const struct pv *v)
{
    return pv_is_object(v) ? v->n : 0;
}

static inline size_t pv_string_length(const struct pv *v)
{
    return pv_is_string(v) ? v->n : 0;
}

static inline int64_t pv_integer_value(const struct pv *v)
{
    return pv_is_integer(v) ? v->i : 0;
}

static inline double pv_real_value(const struct pv *v)
{
    return pv_is_real(v) ? v->d : 0;
}

static inline double pv_number_value(const struct pv *v)
{
    return pv_is_integer(v) ? (double)v->i : pv_is_real(v) ? v->d : 0;
}

/* ---- registry ---- */

struct pm_ctx;
typedef void (*pm_model_fn)(struct pm_ctx *c);

/* One TraceLens perf model class. fn NULL: TraceLens models the op, magpie
 * does not (evaluates to MP_ROOFLINE_FAILED). */
struct pm_class {
    const char *cls;          /* TraceLens class name, for messages and docs */
    const char *sheet;        /* sheet_category (or category minus _fwd/_bwd) */
    const char *category_bwd; /* bwd_category, NULL when None */
    pm_model_fn fn;
    /* Where one fn models several classes that differ in one number (flops
     * per element, stage, direction), that number; fn reads c->cls->variant. */
    int variant;
};

/* Name -> class (NULL for category-only names) and category. */
struct pm_entry {
    const char *name;
    const struct pm_class *cls;
    const char *category;
};

const struct pm_entry *pm_lookup(const char *name);
/* Class of the torch.compile Triton kernels matched by prefix, or NULL. */
const struct pm_class *pm_prefix_class(const char *name);
/* The sorted table, for the unit test's sortedness check. */
const struct pm_entry *pm_table(size_t *n);

/* ---- evaluation context ---- */

/* Up to this many dims per shape; more fails the row (no real op has them). */
#define PM_MAX_DIMS 12

struct pm_shape {
    int n;
    int64_t d[PM_MAX_DIMS];
};

enum pm_phase { PM_INIT, PM_FWD, PM_BWD };

struct pm_ctx {
    const struct mp_roofline_op *op;
    const struct pm_class *cls;
    struct pv *args; /* the parsed args object, NULL when the op has none */
    struct mp_roofline_result *out;
    enum pm_phase phase;
    int st[3];  /* MP_ROOFLINE_OK / SKIP / FAILED per phase */
    bool oom;   /* an allocation failed: mp_roofline_model returns MP_ENOMEM */
    char *pbuf; /* param texts, NUL-separated */
    size_t plen, pcap;
    size_t poff[MP_ROOFLINE_MAX_PARAMS];
    /* results of the current phase */
    double flops;
    bool has_bytes;
    double bytes;
    const char *maf;       /* "matrix" / "vector" / NULL */
    const char *precision; /* "bf16", "fp32", ... / NULL */
};

/* Exceptions: the first one of a phase wins and ends that phase. kind is
 * MP_ROOFLINE_SKIP (NotImplementedError) or MP_ROOFLINE_FAILED. */
void pm_raise(struct pm_ctx *c, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define pm_fail(c, ...) pm_raise((c), MP_ROOFLINE_FAILED, __VA_ARGS__)
#define pm_notimpl(c, ...) pm_raise((c), MP_ROOFLINE_SKIP, __VA_ARGS__)

static inline bool pm_ok(const struct pm_ctx *c)
{
    return c->st[c->phase] == MP_ROOFLINE_OK;
}

/* Ends the current phase and starts phase p; false when parameter parsing
 * (PM_INIT) failed, so the model must not compute. */
bool pm_begin(struct pm_ctx *c, enum pm_phase p);
/* Marks the backward metrics as not defined by the class (Python's
 * AttributeError / NotImplementedError, as given by kind). */
void pm_no_bwd(struct pm_ctx *c, int kind);

/* ---- args access (Python semantics; errors raise and return NULL/0) ---- */

struct pv *pm_arg(struct pm_ctx *c, const char *key);       /* args[key], KeyError */
struct pv *pm_arg_opt(struct pm_ctx *c, const char *key);   /* args.get(key), NULL */
struct pv *pm_at(struct pm_ctx *c, struct pv *seq, long i); /* seq[i], negative from the end */
size_t pm_len(struct pm_ctx *c, struct pv *seq);            /* len(seq), TypeError if no list */
/* args[key][i] in one call */
struct pv *pm_argi(struct pm_ctx *c, const char *key, long i);
/* v as a shape (list of ints) */
bool pm_shape(struct pm_ctx *c, struct pv *v, struct pm_shape *s);
bool pm_shape_argi(struct pm_ctx *c, const char *key, long i, struct pm_shape *s);
int64_t pm_int(struct pm_ctx *c, struct pv *v);
/* a str element (NULL for JSON null = None); TypeError for other values */
const char *pm_str(struct pm_ctx *c, struct pv *v);
const char *pm_str_argi(struct pm_ctx *c, const char *key, long i);
/* Python truthiness of a JSON value */
bool pm_truthy(struct pv *v);
/* ast.literal_eval of a string holding a list/tuple of ints (or bools) */
bool pm_literal_ints(struct pm_ctx *c, const char *s, struct pm_shape *out);
/* Python int(s), float(s) of a string (ValueError raises) */
int64_t pm_pyint(struct pm_ctx *c, const char *s);
double pm_pyfloat(struct pm_ctx *c, const char *s);
bool pm_parse_pyfloat(const char *s, double *out); /* float(s) without raising */
bool pm_parse_pyint(const char *s, int64_t *out);  /* int(s) without raising */
/* Python eval() of "True"/"False"/"None"/integers (others raise) */
bool pm_pyeval_bool(struct pm_ctx *c, const char *s, bool *is_none);

/* ---- integer arithmetic with overflow checks (Python ints never overflow;
 * an overflow fails the row instead of producing garbage) ---- */
int64_t pm_mul(struct pm_ctx *c, int64_t a, int64_t b);
int64_t pm_add(struct pm_ctx *c, int64_t a, int64_t b);
int64_t pm_prod(struct pm_ctx *c, const struct pm_shape *s, int from, int to); /* [from,to) */

/* ---- data types (PerfModel/utils.py) ---- */
/* name2bpe: bytes per element, 0 when unknown (Python None) */
int pm_bpe(const char *dtype);
/* torch_dtype_map: "fp32", "bf16", ... or NULL */
const char *pm_precision(const char *dtype);

/* ---- parameters (printed as Python str()) ---- */
void pm_p_int(struct pm_ctx *c, const char *key, int64_t v);
void pm_p_float(struct pm_ctx *c, const char *key, double v);
void pm_p_bool(struct pm_ctx *c, const char *key, bool v);
void pm_p_none(struct pm_ctx *c, const char *key);
void pm_p_str(struct pm_ctx *c, const char *key, const char *s); /* NULL -> None */
/* tuple(list): "(1, 2)", "(1,)", "()"; elements in repr form */
void pm_p_tuple(struct pm_ctx *c, const char *key, struct pv *list);
/* tuple(list[from:to]) with Python slice clamping (to < 0: to the end) */
void pm_p_tuple_slice(struct pm_ctx *c, const char *key, struct pv *list, long from, long to);
/* repr of any JSON value with lists as Python lists */
void pm_p_repr(struct pm_ctx *c, const char *key, struct pv *v);
void pm_p_shape(struct pm_ctx *c, const char *key, const struct pm_shape *s, bool as_list);
/* tuple of str-or-None: "('c10::BFloat16', None)" */
void pm_p_strs(struct pm_ctx *c, const char *key, int n, const char *const *s, bool as_list);
/* tuple/list of bools */
void pm_p_bools(struct pm_ctx *c, const char *key, int n, const bool *v, bool as_list);
/* key = v when has, else None */
void pm_p_int_or_none(struct pm_ctx *c, const char *key, bool has, int64_t v);
/* The parameters of the one-input classes: op_shape, dtype_in_out,
 * stride_input and stride_output (None when sout is NULL). */
void pm_p_unary_io(struct pm_ctx *c, const struct pm_shape *shape, const char *din,
                   const char *dout, struct pv *sin, struct pv *sout);
/* the parameter key's index, -1 when not yet set */
int pm_p_find(struct pm_ctx *c, const char *key);

/* ---- model results ---- */
static inline void pm_set_flops(struct pm_ctx *c, double flops)
{
    c->flops = flops;
}

static inline void pm_set_bytes(struct pm_ctx *c, bool known, double bytes)
{
    c->has_bytes = known;
    c->bytes = bytes;
}

/* Compute spec parts: maf "matrix"/"vector"; precision from a dtype string
 * through torch_dtype_map (NULL/"" dtype -> unknown). */
void pm_set_spec(struct pm_ctx *c, const char *maf, const char *dtype);

/* ---- model families (one file each) ---- */
void pm_gemm_mm(struct pm_ctx *c);
void pm_gemm_addmm(struct pm_ctx *c);
void pm_gemm_scaled_mm(struct pm_ctx *c);
void pm_gemm_bmm(struct pm_ctx *c);
void pm_gemm_baddbmm(struct pm_ctx *c);
void pm_gemm_dynamic_quant(struct pm_ctx *c);
void pm_gemm_te_gemm_ts(struct pm_ctx *c);
void pm_gemm_tev2(struct pm_ctx *c);
void pm_gemm_a16w16(struct pm_ctx *c);
void pm_gemm_rocm_unquantized(struct pm_ctx *c);
void pm_gemm_a16w16_atomic(struct pm_ctx *c);
void pm_gemm_a16w16_asm(struct pm_ctx *c);
void pm_gemm_a8w8_blockscale(struct pm_ctx *c);
void pm_group_quant(struct pm_ctx *c);
void pm_grouped_gemm(struct pm_ctx *c);
void pm_grouped_gemm_var_k(struct pm_ctx *c);
void pm_vllm_group_quant_fp8(struct pm_ctx *c);

void pm_sdpa_flash(struct pm_ctx *c);
void pm_sdpa_flash_bwd(struct pm_ctx *c);
void pm_sdpa_aten_cudnn(struct pm_ctx *c);
void pm_sdpa_aten_efficient(struct pm_ctx *c);
void pm_sdpa_aten_flash(struct pm_ctx *c);
void pm_sdpa_aiter_flash_fwd(struct pm_ctx *c);
void pm_sdpa_aiter_flash_bwd(struct pm_ctx *c);
void pm_sdpa_flash_v3(struct pm_ctx *c);
void pm_sdpa_aiter_fmha_v3_fwd_wrapper(struct pm_ctx *c);
void pm_sdpa_aiter_fmha_v3_bwd_wrapper(struct pm_ctx *c);
void pm_sdpa_aiter_mha_fwd(struct pm_ctx *c);
void pm_sdpa_aiter_mha_bwd(struct pm_ctx *c);
void pm_sdpa_evoformer(struct pm_ctx *c);
/* variant: 0 forward, 1 backward */
void pm_sdpa_varlen(struct pm_ctx *c);

void pm_unary(struct pm_ctx *c);
void pm_replication_pad(struct pm_ctx *c);
void pm_upsample_nearest(struct pm_ctx *c);
void pm_binary(struct pm_ctx *c);
void pm_liger_silu_mul(struct pm_ctx *c);
void pm_reduce(struct pm_ctx *c);
/* variant: flops per output element */
void pm_gated_act(struct pm_ctx *c);

void pm_norm_batch(struct pm_ctx *c);
void pm_norm_batch_bwd(struct pm_ctx *c);
void pm_norm_layer(struct pm_ctx *c);
void pm_norm_layer_bwd(struct pm_ctx *c);
void pm_norm_group(struct pm_ctx *c);
void pm_norm_group_bwd(struct pm_ctx *c);
void pm_norm_instance(struct pm_ctx *c);
void pm_norm_instance_bwd(struct pm_ctx *c);
void pm_norm_rms(struct pm_ctx *c);
void pm_norm_rms_bwd(struct pm_ctx *c);

void pm_conv(struct pm_ctx *c);

void pm_rmsnorm_ext(struct pm_ctx *c);
void pm_rope_fused(struct pm_ctx *c);
void pm_rope_aiter_2c(struct pm_ctx *c);
void pm_rope_sgl(struct pm_ctx *c);
void pm_store_cache(struct pm_ctx *c);
void pm_moe_comm(struct pm_ctx *c);
void pm_causal_conv1d(struct pm_ctx *c);
void pm_cross_entropy(struct pm_ctx *c);

void pm_triton(struct pm_ctx *c);
void pm_collective(struct pm_ctx *c);
/* variant: 1 up, 0 down */
void pm_moe_triton(struct pm_ctx *c);
void pm_moe_gptq_awq(struct pm_ctx *c);
/* variant: flydsl stage 1 or 2, 0 the fused AITER 1-stage op */
void pm_moe_flydsl(struct pm_ctx *c);

/* variant: enum pm_iattn_kind */
enum pm_iattn_kind {
    PM_IA_BASE,     /* q = dims[0] (N, H, d), k = last three of dims[1] */
    PM_IA_DV_DIM2,  /* base, then d_h_v = dims[2][-1] */
    PM_IA_RAGGED,   /* sglang paged attention ragged: q dims[2], k/v caches dims[3]/[4] */
    PM_IA_GLUON,    /* aiter::pa_decode_gluon: decode only, FP8 cache, sliding window */
    PM_IA_TILELANG, /* sparse MLA: d_h_v 512 */
};

void pm_iattn(struct pm_ctx *c);
void pm_conv_bwd(struct pm_ctx *c);

/* GPU names equal but for case, '-', '_' and spaces (arch.c) */
bool roof_same_name(const char *a, const char *b);

#endif
