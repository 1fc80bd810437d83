/* magpie perf: TraceLens-compatible performance model of PyTorch CPU ops
 * (FLOPs, bytes moved, op category, report sheet, parameters), GPU
 * architecture specs and the roofline.
 *
 * Given one CPU op of a torch-profiler trace (its name and the raw JSON text
 * of its "args"), mp_roofline_model returns what TraceLens's perf model
 * (TraceLens/PerfModel) computes for it: the category of
 * categorize_torch_op, the per-category sheet, the `param: X` values as the
 * text TraceLens prints in its CSVs, GFLOPS, bytes, the compute spec
 * ("matrix_bf16") and, for ops whose model defines one, the backward
 * metrics. The library keeps no state between calls and never prints.
 *
 * What is modelled and what is not is listed in docs/perf-model.md, with the
 * datasheet behind every built-in architecture figure.
 */
#ifndef MAGPIE_ROOFLINE_H
#define MAGPIE_ROOFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

/* One CPU op. Every pointer is borrowed for the duration of the call. */
struct mp_roofline_op {
    const char *name;                /* cpu op name, e.g. "aten::mm"; NUL-terminated */
    const char *args;                /* raw JSON text of the event's "args" object, or NULL */
    size_t args_len;                 /* bytes of args */
    const char *annotation;          /* enclosing step annotation (inference attention), or NULL
                                        (TraceLens's "NA") */
    const char *const *kernel_names; /* the op's kernels (whole subtree) in ts order, or NULL:
                                        GEMM transpose parsing */
    size_t n_kernels;
    const char *kv_cache_dtype; /* KV-cache dtype the pseudo-op pass propagates to paged
                                   attention ops (TraceLens's attention_perf_meta
                                   k_cache_dtype), or NULL */
};

#define MP_ROOFLINE_MAX_PARAMS 32

/* One `param: <key>` cell. text is Python's str() of the value as TraceLens
 * prints it: "(16, 16, 559, 64)", "('c10::BFloat16', 'c10::BFloat16')",
 * "True", "0.0", "8944", "conv2d". A Python None is none = true with text ""
 * (TraceLens's CSVs hold an empty cell or "None" there; readers treat both as
 * missing). */
struct mp_roofline_param {
    const char *key; /* static string, without the "param: " prefix */
    char *text;      /* owned by the result (one buffer for all params) */
    bool none;
};

/* Outcome of one model evaluation, mirroring TraceLens's handling of the
 * exceptions its perf model raises. */
enum {
    MP_ROOFLINE_NONE = 0, /* the op has no model: only category (and sheet NULL) */
    MP_ROOFLINE_OK,       /* metrics computed */
    MP_ROOFLINE_SKIP,     /* TraceLens raises NotImplementedError: row silently dropped */
    MP_ROOFLINE_FAILED,   /* any other exception (or a TraceLens model magpie does not
                         implement): row dropped from the sheets, kept in the unified
                         table with kernel time only; error says why */
};

struct mp_roofline_result {
    int status;               /* MP_ROOFLINE_* of the forward metrics */
    const char *category;     /* categorize_torch_op ("GEMM", "elementwise", "SDPA_fwd",
                                 "NORM_fwd", "reduce", "other", ...) with kernel_names[0]
                                 as the first kernel; static, never NULL */
    const char *sheet;        /* sheet family of the model class ("GEMM", "UnaryElementwise",
                                 "SDPA", "Normalization", "Reduce", ...); NULL without model.
                                 The training report names non-single tables <sheet>_fwd /
                                 <sheet>_bwd. Static. */
    const char *category_bwd; /* the class's bwd_category ("SDPA_bwd", "CONV_bwd", ...) or
                                 NULL; static */
    struct mp_roofline_param
        params[MP_ROOFLINE_MAX_PARAMS]; /* in TraceLens's param_details order */
    int n_params;
    double gflops;            /* flops / 1e9 */
    bool has_bytes;           /* false when TraceLens's bytes() is None (unknown dtype) */
    double bytes;             /* bytes moved; Data Moved (MB) = bytes / 1048576 */
    const char *compute_spec; /* "matrix_bf16", "vector_fp32", ... or "" when unknown; owned
                                 by the result (valid until mp_roofline_result_fini) */
    /* Backward metrics (flops_bwd / bytes_bwd of the same model instance), used
     * for the <sheet>_bwd tables and for sole-backward rows of the unified
     * table. status_bwd is MP_ROOFLINE_OK only when both were computed. */
    int status_bwd;
    double gflops_bwd;
    bool has_bytes_bwd;
    double bytes_bwd;
    char error[160]; /* why status is SKIP / FAILED (or status_bwd), "" otherwise */
    /* mp_roofline_model_memo: 1 + the index of the memo entry that holds this
     * result (the same for every later call with the same input, so callers
     * can keep what they derive from it per entry), 0 when the result is not
     * in the memo */
    int32_t memo_slot;
    char *buf_; /* private: storage of the param texts and compute spec */
};

/* Evaluates the perf model for op into out. out is overwritten entirely (any
 * previous content is ignored, so call mp_roofline_result_fini before reusing it).
 * Returns 0, or MP_ENOMEM / MP_EINVAL (op or name NULL); the model's own
 * failures are reported in out->status, never as a return code. */
int mp_roofline_model(const struct mp_roofline_op *op, struct mp_roofline_result *out);
/* Frees the param texts; the result may then be reused. NULL is a no-op. */
void mp_roofline_result_fini(struct mp_roofline_result *r);

/* A memo of mp_roofline_model results, for callers that model the same inputs
 * many times. An op is known by the addresses of its texts (name, args,
 * annotation, kv_cache_dtype, each kernel name), args_len and its kernel
 * count: pass interned texts, so that equal addresses mean equal texts
 * (equal texts at different addresses are only modelled twice). Holds at
 * most 65536 inputs; later ones are modelled without it. */
struct mp_roofline_memo;
struct mp_roofline_memo *mp_roofline_memo_new(void); /* NULL when out of memory */
void mp_roofline_memo_free(struct mp_roofline_memo *m);
/* mp_roofline_model(op, out), from m when op was modelled before (m NULL: no
 * memo); out->memo_slot tells the entry. The texts of a memo entry must
 * stay valid and unchanged while m lives. */
int mp_roofline_model_memo(struct mp_roofline_memo *m, const struct mp_roofline_op *op,
                           struct mp_roofline_result *out);

/* TraceLens's categorize_torch_op: the model class's category or an explicit
 * category-only label for the name, then "triton" / "record_param_comms" by
 * name prefix, then the first kernel's name ("void at::native..." containing
 * "elementwise" / "reduce" / "multi_tensor_apply"), else "other". The
 * launcher's first direct kernel is the one TraceLens looks at.
 * first_kernel_name may be NULL. Returns a static string. */
const char *mp_roofline_category(const char *name, const char *first_kernel_name);
/* True when TraceLens maps name to a perf model class (exact names plus the
 * torch.compile Triton prefixes triton_poi_/triton_red_/triton_per_), whether
 * or not magpie implements that class (see mp_roofline_model's MP_ROOFLINE_FAILED). */
bool mp_roofline_has_model(const char *name);
/* Sheet family of the model class for name (see mp_roofline_result.sheet), or NULL. */
const char *mp_roofline_sheet(const char *name);

/* ---- GPU architecture ---- */

#define MP_ROOFLINE_ARCH_MAX_SPECS 24

struct mp_roofline_arch_spec {
    char key[32];  /* compute spec, e.g. "matrix_bf16", "vector_fp32" */
    double tflops; /* TFLOP/s (1e12) */
};

/* TraceLens's arch JSON: {"name", "mem_bw_gbps", "memory_gb",
 * "max_achievable_tflops": {"matrix_bf16": ..., ...}}. */
struct mp_roofline_arch {
    char name[64];
    bool has_mem_bw;
    double mem_bw_gbps; /* GB/s (1e9) */
    double memory_gb;   /* 0 when unknown */
    struct mp_roofline_arch_spec specs[MP_ROOFLINE_ARCH_MAX_SPECS];
    int n_specs;
    const char *source; /* static citation of a built-in's figures, NULL for files */
    /* A file written by `magpie gpu calibrate` (it has magpie.calibration):
     * measured ceilings; origin says by what, on which GPU, when. */
    bool calibrated;
    char origin[192];
};

/* Built-in specs by name (case-insensitive; "-", "_" and spaces ignored):
 * A100 (SXM 80GB), H100 (SXM), H200, B200, MI300X, MI325X, MI355X. Returns 0
 * or MP_ENOTFOUND. */
int mp_roofline_arch_builtin(const char *name, struct mp_roofline_arch *out);
/* Names of the built-ins, NULL-terminated. */
const char *const *mp_roofline_arch_builtin_names(void);
/* Reads a TraceLens arch JSON file. Errors (MP_EIO, MP_EPARSE, MP_EINVAL)
 * name the file, line, column and field in d. */
int mp_roofline_arch_load_json(const char *path, struct mp_roofline_arch *out, struct mp_diag *d);
/* Same from JSON text in memory; label names it in diagnostics (may be NULL). */
int mp_roofline_arch_parse_json(const char *text, size_t len, const char *label,
                                struct mp_roofline_arch *out, struct mp_diag *d);
/* The arch for a trace's deviceProperties "name" ("NVIDIA H200", "NVIDIA
 * H100 80GB HBM3", "AMD Instinct MI300X", ...): a calibration of that GPU
 * model from the cache (mp_roofline_arch_calibrated) when there is one,
 * else the built-in data sheet (mp_roofline_arch_datasheet). 0 or
 * MP_ENOTFOUND. */
int mp_roofline_arch_from_device_name(const char *device_name, struct mp_roofline_arch *out);
/* The built-in data sheet alone for a device name. 0 or MP_ENOTFOUND. */
int mp_roofline_arch_datasheet(const char *device_name, struct mp_roofline_arch *out);
/* The built-in data sheets' key for a calibrated compute spec: calibrate's
 * matrix_fp32 is a plain FP32 GEMM (the sheets' vector_fp32; they keep the
 * TF32 rate under matrix_fp32), matrix_tf32 is the sheets' matrix_fp32,
 * matrix_fp8_e5m2 their matrix_fp8; any other key is its own. */
const char *mp_roofline_datasheet_key(const char *calibrated_spec);
/* How much longer the roofline time is under ceiling than under peak, for
 * an op of compute spec and arithmetic intensity flops_per_byte: percent
 * of roofline under ceiling times this is the percent of peak. A
 * calibrated ceiling's matrix_fp32 (a plain FP32 GEMM) is compared with the
 * data sheet's vector_fp32, its matrix_tf32 with the sheet's matrix_fp32.
 * NAN when either lacks the spec or a bandwidth. */
double mp_roofline_peak_ratio(const struct mp_roofline_arch *ceiling,
                              const struct mp_roofline_arch *peak, const char *compute_spec,
                              double flops_per_byte);
/* The calibration cache folder: $MAGPIE_CALIBRATION_DIR, else
 * $XDG_CACHE_HOME/magpie/calibration, else $HOME/.cache/magpie/calibration.
 * 0 or MP_ENOTFOUND (no HOME). */
int mp_roofline_calibration_dir(char *out, size_t len);
/* Calls fn with the path of every *.json file in the calibration cache
 * folder (in readdir order). 0, or MP_ENOTFOUND when there is no folder. */
int mp_roofline_calibration_each(void (*fn)(const char *path, void *user), void *user);
/* The newest calibration in the cache whose GPU name is device_name (names
 * compared as mp_roofline_arch_builtin does); path gets its file (may be
 * NULL). 0, or MP_ENOTFOUND when none matches. Files that do not parse are
 * passed over. MAGPIE_NO_CALIBRATION=1 turns the lookup off. */
int mp_roofline_arch_calibrated(const char *device_name, struct mp_roofline_arch *out, char *path,
                                size_t path_len);
/* TFLOP/s of a compute spec; false when the arch has none for it. */
bool mp_roofline_arch_tflops(const struct mp_roofline_arch *a, const char *compute_spec,
                             double *tflops);

/* Roofline of one op (docs/tracelens-compat.md): valid only when the arch has the
 * compute spec and a memory bandwidth, bytes are known and gflops > 0.
 * compute_us = gflops*1e9 / (tflops*1e12) * 1e6, memory_us = bytes /
 * (mem_bw_gbps*1e9) * 1e6, roofline_us = max of the two, compute_bound when
 * compute_us >= memory_us, pct = roofline_us / kernel_time_us * 100 (NaN
 * when kernel_time_us <= 0). */
struct mp_roofline_roofline {
    bool valid;
    double compute_us, memory_us, roofline_us;
    bool compute_bound; /* "COMPUTE_BOUND" / "MEMORY_BOUND" */
    double pct;         /* Pct Roofline */
};

void mp_roofline_roofline(const struct mp_roofline_arch *a, const char *compute_spec, double gflops,
                          bool has_bytes, double bytes, double kernel_time_us,
                          struct mp_roofline_roofline *out);

#endif
