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

enum roof_pv_type {
    ROOF_PV_NULL,
    ROOF_PV_TRUE,
    ROOF_PV_FALSE,
    ROOF_PV_INT,
    ROOF_PV_REAL,
    ROOF_PV_STR,
    ROOF_PV_ARR,
    ROOF_PV_OBJ
};

struct roof_pv_doc;

/* One JSON value; the children of an array or object follow it in the node
 * array (pre-order), each subtree `size` nodes long. */
struct pv {
    uint8_t type;     /* enum roof_pv_type */
    uint32_t n;       /* children of an array/object, bytes of a string */
    uint32_t size;    /* nodes in this subtree, itself included */
    uint32_t key_off; /* object members: 1 + offset of the key in doc->text */
    uint32_t str_off; /* strings: offset of the decoded text in doc->text */

    union {
        int64_t i;
        double d;
    };
    struct roof_pv_doc *doc;
};

#define ROOF_PV_INLINE_NODES 128
#define ROOF_PV_INLINE_TEXT 2048

struct roof_pv_doc {
    struct pv *nodes;
    uint32_t n, cap;
    char *text; /* decoded strings and keys, NUL-terminated */
    size_t tlen, tcap;
    struct pv inline_nodes[ROOF_PV_INLINE_NODES];
    char inline_text[ROOF_PV_INLINE_TEXT];
};

/* 0, MP_EPARSE or MP_ENOMEM; roof_pv_free afterwards in every case */
int roof_pv_parse(const char *text, size_t len, struct roof_pv_doc *d);
void roof_pv_free(struct roof_pv_doc *d);
struct pv *roof_pv_root(struct roof_pv_doc *d);
struct pv *roof_pv_array_get(const struct pv *v, size_t i); /* arrays only; NULL out of range */
struct pv *roof_pv_child(const struct pv *v, size_t i);     /* arrays and objects */
struct pv *roof_pv_object_get(const struct pv *v, const char *key);
struct pv *roof_pv_next(const struct pv *child); /* the following sibling */
const char *roof_pv_key(const struct pv *member);
const char *roof_pv_string_value(const struct pv *v);

static inline bool roof_pv_is(const struct pv *v, int t)
{
    return v && v->type == t;
}

#define roof_pv_is_array(v) roof_pv_is((v), ROOF_PV_ARR)
#define roof_pv_is_object(v) roof_pv_is((v), ROOF_PV_OBJ)
#define roof_pv_is_string(v) roof_pv_is((v), ROOF_PV_STR)
#define roof_pv_is_integer(v) roof_pv_is((v), ROOF_PV_INT)
#define roof_pv_is_real(v) roof_pv_is((v), ROOF_PV_REAL)
#define roof_pv_is_null(v) roof_pv_is((v), ROOF_PV_NULL)
#define roof_pv_is_true(v) roof_pv_is((v), ROOF_PV_TRUE)
#define roof_pv_is_false(v) roof_pv_is((v), ROOF_PV_FALSE)

static inline bool roof_pv_is_number(const struct pv *v)
{
    return roof_pv_is_integer(v) || roof_pv_is_real(v);
}

static inline bool roof_pv_is_boolean(const struct pv *v)
{
    return roof_pv_is_true(v) || roof_pv_is_false(v);
}

static inline size_t roof_pv_array_size(const struct pv *v)
{
    return roof_pv_is_array(v) ? v->n : 0;
}

static inline size_t roof_pv_object_size(const struct pv *v)
{
    return roof_pv_is_object(v) ? v->n : 0;
}

static inline size_t roof_pv_string_length(const struct pv *v)
{
    return roof_pv_is_string(v) ? v->n : 0;
}

static inline int64_t roof_pv_integer_value(const struct pv *v)
{
    return roof_pv_is_integer(v) ? v->i : 0;
}

static inline double roof_pv_real_value(const struct pv *v)
{
    return roof_pv_is_real(v) ? v->d : 0;
}

static inline double roof_pv_number_value(const struct pv *v)
{
    return roof_pv_is_integer(v) ? (double)v->i : roof_pv_is_real(v) ? v->d : 0;
}

/* ---- registry ---- */

struct roof_ctx;
typedef void (*roof_model_fn)(struct roof_ctx *c);

/* One TraceLens perf model class. fn NULL: TraceLens models the op, magpie
 * does not (evaluates to MP_ROOFLINE_FAILED). */
struct roof_class {
    const char *cls;          /* TraceLens class name, for messages and docs */
    const char *sheet;        /* sheet_category (or category minus _fwd/_bwd) */
    const char *category_bwd; /* bwd_category, NULL when None */
    roof_model_fn fn;
    /* Where one fn models several classes that differ in one number (flops
     * per element, stage, direction), that number; fn reads c->cls->variant. */
    int variant;
};

/* Name -> class (NULL for category-only names) and category. */
struct roof_entry {
    const char *name;
    const struct roof_class *cls;
    const char *category;
};

const struct roof_entry *roof_lookup(const char *name);
/* Class of the torch.compile Triton kernels matched by prefix, or NULL. */
const struct roof_class *roof_prefix_class(const char *name);
/* The sorted table, for the unit test's sortedness check. */
const struct roof_entry *roof_table(size_t *n);

/* ---- evaluation context ---- */

/* Up to this many dims per shape; more fails the row (no real op has them). */
#define ROOF_MAX_DIMS 12

struct roof_shape {
    int n;
    int64_t d[ROOF_MAX_DIMS];
};

enum roof_phase { ROOF_INIT, ROOF_FWD, ROOF_BWD };

struct roof_ctx {
    const struct mp_roofline_op *op;
    const struct roof_class *cls;
    struct pv *args; /* the parsed args object, NULL when the op has none */
    struct mp_roofline_result *out;
    enum roof_phase phase;
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
void roof_raise(struct roof_ctx *c, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define roof_fail(c, ...) roof_raise((c), MP_ROOFLINE_FAILED, __VA_ARGS__)
#define roof_notimpl(c, ...) roof_raise((c), MP_ROOFLINE_SKIP, __VA_ARGS__)

static inline bool roof_ok(const struct roof_ctx *c)
{
    return c->st[c->phase] == MP_ROOFLINE_OK;
}

/* Ends the current phase and starts phase p; false when parameter parsing
 * (ROOF_INIT) failed, so the model must not compute. */
bool roof_begin(struct roof_ctx *c, enum roof_phase p);
/* Marks the backward metrics as not defined by the class (Python's
 * AttributeError / NotImplementedError, as given by kind). */
void roof_no_bwd(struct roof_ctx *c, int kind);

/* ---- args access (Python semantics; errors raise and return NULL/0) ---- */

struct pv *roof_arg(struct roof_ctx *c, const char *key);       /* args[key], KeyError */
struct pv *roof_arg_opt(struct roof_ctx *c, const char *key);   /* args.get(key), NULL */
struct pv *roof_at(struct roof_ctx *c, struct pv *seq, long i); /* seq[i], negative from the end */
size_t roof_len(struct roof_ctx *c, struct pv *seq);            /* len(seq), TypeError if no list */
/* args[key][i] in one call */
struct pv *roof_argi(struct roof_ctx *c, const char *key, long i);
/* v as a shape (list of ints) */
bool roof_shape(struct roof_ctx *c, struct pv *v, struct roof_shape *s);
bool roof_shape_argi(struct roof_ctx *c, const char *key, long i, struct roof_shape *s);
int64_t roof_int(struct roof_ctx *c, struct pv *v);
/* a str element (NULL for JSON null = None); TypeError for other values */
const char *roof_str(struct roof_ctx *c, struct pv *v);
const char *roof_str_argi(struct roof_ctx *c, const char *key, long i);
/* Python truthiness of a JSON value */
bool roof_truthy(struct pv *v);
/* ast.literal_eval of a string holding a list/tuple of ints (or bools) */
bool roof_literal_ints(struct roof_ctx *c, const char *s, struct roof_shape *out);
/* Python int(s), float(s) of a string (ValueError raises) */
int64_t roof_pyint(struct roof_ctx *c, const char *s);
double roof_pyfloat(struct roof_ctx *c, const char *s);
bool roof_parse_pyfloat(const char *s, double *out); /* float(s) without raising */
bool roof_parse_pyint(const char *s, int64_t *out);  /* int(s) without raising */
/* Python eval() of "True"/"False"/"None"/integers (others raise) */
bool roof_pyeval_bool(struct roof_ctx *c, const char *s, bool *is_none);

/* ---- integer arithmetic with overflow checks (Python ints never overflow;
 * an overflow fails the row instead of producing garbage) ---- */
int64_t roof_mul(struct roof_ctx *c, int64_t a, int64_t b);
int64_t roof_add(struct roof_ctx *c, int64_t a, int64_t b);
int64_t roof_prod(struct roof_ctx *c, const struct roof_shape *s, int from, int to); /* [from,to) */

/* ---- data types (PerfModel/utils.py) ---- */
/* name2bpe: bytes per element, 0 when unknown (Python None) */
int roof_bpe(const char *dtype);
/* torch_dtype_map: "fp32", "bf16", ... or NULL */
const char *roof_precision(const char *dtype);

/* ---- parameters (printed as Python str()) ---- */
void roof_p_int(struct roof_ctx *c, const char *key, int64_t v);
void roof_p_float(struct roof_ctx *c, const char *key, double v);
void roof_p_bool(struct roof_ctx *c, const char *key, bool v);
void roof_p_none(struct roof_ctx *c, const char *key);
void roof_p_str(struct roof_ctx *c, const char *key, const char *s); /* NULL -> None */
/* tuple(list): "(1, 2)", "(1,)", "()"; elements in repr form */
void roof_p_tuple(struct roof_ctx *c, const char *key, struct pv *list);
/* tuple(list[from:to]) with Python slice clamping (to < 0: to the end) */
void roof_p_tuple_slice(struct roof_ctx *c, const char *key, struct pv *list, long from, long to);
/* repr of any JSON value with lists as Python lists */
void roof_p_repr(struct roof_ctx *c, const char *key, struct pv *v);
void roof_p_shape(struct roof_ctx *c, const char *key, const struct roof_shape *s, bool as_list);
/* tuple of str-or-None: "('c10::BFloat16', None)" */
void roof_p_strs(struct roof_ctx *c, const char *key, int n, const char *const *s, bool as_list);
/* tuple/list of bools */
void roof_p_bools(struct roof_ctx *c, const char *key, int n, const bool *v, bool as_list);
/* key = v when has, else None */
void roof_p_int_or_none(struct roof_ctx *c, const char *key, bool has, int64_t v);
/* The parameters of the one-input classes: op_shape, dtype_in_out,
 * stride_input and stride_output (None when sout is NULL). */
void roof_p_unary_io(struct roof_ctx *c, const struct roof_shape *shape, const char *din,
                     const char *dout, struct pv *sin, struct pv *sout);
/* the parameter key's index, -1 when not yet set */
int roof_p_find(struct roof_ctx *c, const char *key);

/* ---- model results ---- */
static inline void roof_set_flops(struct roof_ctx *c, double flops)
{
    c->flops = flops;
}

static inline void roof_set_bytes(struct roof_ctx *c, bool known, double bytes)
{
    c->has_bytes = known;
    c->bytes = bytes;
}

/* Compute spec parts: maf "matrix"/"vector"; precision from a dtype string
 * through torch_dtype_map (NULL/"" dtype -> unknown). */
void roof_set_spec(struct roof_ctx *c, const char *maf, const char *dtype);

/* ---- model families (one file each) ---- */
void roof_gemm_mm(struct roof_ctx *c);
void roof_gemm_addmm(struct roof_ctx *c);
void roof_gemm_scaled_mm(struct roof_ctx *c);
void roof_gemm_bmm(struct roof_ctx *c);
void roof_gemm_baddbmm(struct roof_ctx *c);
void roof_gemm_dynamic_quant(struct roof_ctx *c);
void roof_gemm_te_gemm_ts(struct roof_ctx *c);
void roof_gemm_tev2(struct roof_ctx *c);
void roof_gemm_a16w16(struct roof_ctx *c);
void roof_gemm_rocm_unquantized(struct roof_ctx *c);
void roof_gemm_a16w16_atomic(struct roof_ctx *c);
void roof_gemm_a16w16_asm(struct roof_ctx *c);
void roof_gemm_a8w8_blockscale(struct roof_ctx *c);
void roof_group_quant(struct roof_ctx *c);
void roof_grouped_gemm(struct roof_ctx *c);
void roof_grouped_gemm_var_k(struct roof_ctx *c);
void roof_vllm_group_quant_fp8(struct roof_ctx *c);

void roof_sdpa_flash(struct roof_ctx *c);
void roof_sdpa_flash_bwd(struct roof_ctx *c);
void roof_sdpa_aten_cudnn(struct roof_ctx *c);
void roof_sdpa_aten_efficient(struct roof_ctx *c);
void roof_sdpa_aten_flash(struct roof_ctx *c);
void roof_sdpa_aiter_flash_fwd(struct roof_ctx *c);
void roof_sdpa_aiter_flash_bwd(struct roof_ctx *c);
void roof_sdpa_flash_v3(struct roof_ctx *c);
void roof_sdpa_aiter_fmha_v3_fwd_wrapper(struct roof_ctx *c);
void roof_sdpa_aiter_fmha_v3_bwd_wrapper(struct roof_ctx *c);
void roof_sdpa_aiter_mha_fwd(struct roof_ctx *c);
void roof_sdpa_aiter_mha_bwd(struct roof_ctx *c);
void roof_sdpa_evoformer(struct roof_ctx *c);
/* variant: 0 forward, 1 backward */
void roof_sdpa_varlen(struct roof_ctx *c);

void roof_unary(struct roof_ctx *c);
void roof_replication_pad(struct roof_ctx *c);
void roof_upsample_nearest(struct roof_ctx *c);
void roof_binary(struct roof_ctx *c);
void roof_liger_silu_mul(struct roof_ctx *c);
void roof_reduce(struct roof_ctx *c);
/* variant: flops per output element */
void roof_gated_act(struct roof_ctx *c);

void roof_norm_batch(struct roof_ctx *c);
void roof_norm_batch_bwd(struct roof_ctx *c);
void roof_norm_layer(struct roof_ctx *c);
void roof_norm_layer_bwd(struct roof_ctx *c);
void roof_norm_group(struct roof_ctx *c);
void roof_norm_group_bwd(struct roof_ctx *c);
void roof_norm_instance(struct roof_ctx *c);
void roof_norm_instance_bwd(struct roof_ctx *c);
void roof_norm_rms(struct roof_ctx *c);
void roof_norm_rms_bwd(struct roof_ctx *c);

void roof_conv(struct roof_ctx *c);

void roof_rmsnorm_ext(struct roof_ctx *c);
void roof_rope_fused(struct roof_ctx *c);
void roof_rope_aiter_2c(struct roof_ctx *c);
void roof_rope_sgl(struct roof_ctx *c);
void roof_store_cache(struct roof_ctx *c);
void roof_moe_comm(struct roof_ctx *c);
void roof_causal_conv1d(struct roof_ctx *c);
void roof_cross_entropy(struct roof_ctx *c);

void roof_triton(struct roof_ctx *c);
void roof_collective(struct roof_ctx *c);
/* variant: 1 up, 0 down */
void roof_moe_triton(struct roof_ctx *c);
void roof_moe_gptq_awq(struct roof_ctx *c);
/* variant: flydsl stage 1 or 2, 0 the fused AITER 1-stage op */
void roof_moe_flydsl(struct roof_ctx *c);

/* variant: enum roof_iattn_kind */
enum roof_iattn_kind {
    ROOF_IA_BASE,     /* q = dims[0] (N, H, d), k = last three of dims[1] */
    ROOF_IA_DV_DIM2,  /* base, then d_h_v = dims[2][-1] */
    ROOF_IA_RAGGED,   /* sglang paged attention ragged: q dims[2], k/v caches dims[3]/[4] */
    ROOF_IA_GLUON,    /* aiter::pa_decode_gluon: decode only, FP8 cache, sliding window */
    ROOF_IA_TILELANG, /* sparse MLA: d_h_v 512 */
};

void roof_iattn(struct roof_ctx *c);
void roof_conv_bwd(struct roof_ctx *c);

/* GPU names equal but for case, '-', '_' and spaces (arch.c) */
bool roof_same_name(const char *a, const char *b);

#endif
