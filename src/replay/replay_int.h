/* Internals of the replay module (prefix rp_): the Python-literal cells of
 * the report, the ATen schema table and its matching, the generated Python
 * and the run of the references. */
#ifndef MAGPIE_REPLAY_INT_H
#define MAGPIE_REPLAY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/replay.h>

/* A Python literal as the report writes it: ints, floats, strings, None,
 * True/False and nested tuples/lists. */
enum rp_vkind { RV_NONE, RV_INT, RV_FLOAT, RV_STR, RV_SEQ };

struct rp_val {
    enum rp_vkind k;
    long long i;
    double f;
    char *s; /* RV_STR (also the text of numbers) */
    struct rp_val *items;
    size_t n;
};

/* Parses text into v (caller frees with rp_val_fini). MP_EPARSE with d
 * naming field and column. */
int rp_val_parse(const char *text, const char *field, struct rp_val *v, struct mp_diag *d);
void rp_val_fini(struct rp_val *v);

/* The four argument cells of an op row (Input Dims, Input type, Input
 * Strides, Concrete Inputs) parsed into v[0..3], each named in d on
 * MP_EPARSE; v is cleared first and freed with rp_cells_fini. */
int rp_cells_parse(const char *dims, const char *types, const char *strides, const char *concrete,
                   struct rp_val v[4], struct mp_diag *d);
void rp_cells_fini(struct rp_val v[4]);

/* What an argument becomes. */
enum rp_akind {
    RA_NONE,   /* None */
    RA_TENSOR, /* a tensor built from shape/strides/dtype */
    RA_TLIST,  /* a list of tensors */
    RA_BOOL,
    RA_INT,
    RA_FLOAT,
    RA_INTS,  /* list of ints */
    RA_BOOLS, /* list of bools */
    RA_EMPTY, /* [] for an optional list */
    RA_DTYPE, /* ScalarType (an int of c10::ScalarType) */
    RA_STR,
};

/* How the values of an integer tensor are made (their values matter). */
enum rp_irole {
    RI_ANY,   /* any small positive values */
    RI_INDEX, /* indices into arg `of`, dim `dim` (or the int argument `dim_arg`) */
    RI_OFFS,  /* cumulative group ends over arg `of`'s rows (grouped GEMM) */
};

/* Where the values of a tensor whose values matter came from (docs/replay.md,
 * "values_from"): the trace recorded them (Concrete Inputs), they follow from
 * what it recorded (one group's offsets are its row count), or a documented
 * default (random in-range indices, random routing of rows to groups). */
enum rp_vfrom { RF_NONE, RF_TRACE, RF_DERIVED, RF_DEFAULT };

/* "trace", "derived", "default" ("" for RF_NONE). */
const char *rp_vfrom_name(enum rp_vfrom f);

/* Largest storage (elements) a rebuilt tensor may span: 2^40. */
#define RP_MAX_SPAN (1LL << 40)

struct rp_tensor {
    long long *shape, *strides;
    size_t nd;
    char *dtype; /* as recorded ("c10::BFloat16", "long int") */
};

struct rp_arg {
    char name[48];
    char type[48]; /* schema type ("Tensor?", "SymInt[]") */
    bool kwarg;
    enum rp_akind k;
    bool b;
    long long i;
    double f;
    char *text;           /* number/string text as recorded */
    long long *ints;      /* RA_INTS */
    bool *bools;          /* RA_BOOLS */
    size_t n;             /* RA_INTS/RA_BOOLS/RA_TLIST count */
    struct rp_tensor t;   /* RA_TENSOR */
    struct rp_tensor *tl; /* RA_TLIST */
    bool mutated;         /* Tensor(a!) */
    enum rp_irole role;
    int of, dim, dim_arg;
    enum rp_vfrom vfrom; /* integer tensors whose values matter */
    long long *vals;     /* their values (RF_TRACE, RF_DERIVED), row-major over the shape */
    size_t nvals;
};

/* The matched call of one op. */
struct rp_call {
    char op[128];     /* "aten::mm" */
    char schema[512]; /* the matched schema text */
    struct rp_arg *args;
    size_t n;
    bool values_matter; /* integer tensors carry indices/offsets */
};

/* The weakest values_from of the call's tensors whose values matter (default
 * before derived before trace), RF_NONE when it has none. */
enum rp_vfrom rp_call_vfrom(const struct rp_call *c);

/* Matches the recorded cells against the schema table. Returns 0 with c
 * filled, or MP_ENOTFOUND / MP_EUNSUP with a reason in why[0..nwhy). */
int rp_match(const char *op, const char *dims_s, const char *types_s, const char *strides_s,
             const char *conc_s, struct rp_call *c, char *why, size_t nwhy, struct mp_diag *d);
void rp_call_fini(struct rp_call *c);

/* Rows a grouped GEMM's offsets (arg a, RI_OFFS) split: the rows of a 2-D
 * self against a 3-D mat2, else self's last dim (2-D x 2-D groups split K). */
long long rp_offs_rows(const struct rp_call *c, const struct rp_arg *a);

/* Torch dtype of a recorded tensor type ("torch.bfloat16"), NULL unknown. */
const char *rp_torch_dtype(const char *recorded);

/* Whether op ("aten::addmm", "_grouped_mm") multiplies by a weight: a name
 * ending in "mm" (mm, bmm, addmm, _scaled_mm, _grouped_mm) or holding
 * "linear", "matmul" or "conv" (schema.c). */
bool rp_gemm_op(const char *op);
/* TraceLens's build_tensor knows this dtype name (after rp_ir_dtype). */
const char *rp_ir_dtype(const char *recorded);
/* element size in bytes of a recorded tensor type, 0 when not one */
int rp_dtype_bytes(const char *recorded);
/* torch dtype of a c10::ScalarType number, NULL unknown. */
const char *rp_scalar_type(long long v);

/* Python files of op n (ref_<n>.py, cand_<n>.py, compare_<n>.yaml). */
int rp_py_ref(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b);
int rp_py_custom(const struct mp_replay_op *op, struct rp_val *dims, struct rp_val *types,
                 struct rp_val *strides, struct rp_val *conc, struct mp_buf *b);
int rp_py_prev(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b);
int rp_py_cand(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b);
int rp_py_compare(const struct mp_replay_op *op, struct mp_buf *b);

/* One EventReplay IR entry (TraceLens's {"op_name", "replay_ir"} plus a
 * "magpie" object). */
int rp_ir_entry(const struct mp_replay_op *op, const struct rp_call *c, struct mp_buf *b);

/* For a TraceLens-split row ("aten::sort->KERNEL (Synthetic Op)": one
 * kernel of an op ranked apart) the length of its op's name; 0 for any
 * other row (a whole op, or "cudaLaunchKernel->KERNEL": a runtime call). */
size_t rp_split_op_len(const char *name);

/* Builds the report of o->trace and selects its rows into r->ops. */
struct mp_report;
struct mp_trace_tree;
/* *keep: the report the rows came from, with its trace (keep_trace), on
 * success; the caller frees it */
int rp_select(const struct mp_replay_opts *o, struct mp_replay_result *r, struct mp_report **keep,
              struct mp_diag *d);

/* Fills each selected op's prev_* (what ran before it on its GPU stream in
 * the trace; producer.c). */
/* given: the trace's tree when the caller has it loaded (the report's),
 * else NULL to load o->trace */
int rp_producers(const struct mp_replay_opts *o, struct mp_replay_result *r,
                 const struct mp_trace_tree *given, struct mp_diag *d);

struct mp_trace_store;
/* Appends event i's recorded args cell `key` to b as the report writes it
 * (Python's repr); nothing when the event has no such cell (producer.c). */
int rp_event_cell(const struct mp_trace_store *s, int32_t i, const char *key, struct mp_buf *b);

/* The CPU op behind GPU event g: its launcher, or the launcher's nearest
 * cpu_op ancestor; -1 when none (producer.c). */
int32_t rp_launching_op(const struct mp_trace_tree *t, int32_t g);

/* A run of one op's activity on a stream: the traffic and the writes of
 * the stream's units before it, its own writes, the index of its stream's
 * first unit. */
struct rp_unit {
    double cum, cumw, w;
    int32_t first;
};

/* Dirty-L2 estimates (traffic.c): per-event read/written bytes, computed
 * once; prev[i] is the GPU event before i on its device and stream. */
struct rp_traffic {
    const struct mp_trace_tree *t;
    const int32_t *prev;
    double *rd, *wr; /* per event, rd < 0: not computed yet */
    int32_t *unit;   /* per GPU event: its unit (a run of one op's activity), -1 none */
    struct rp_unit *units;
    size_t nunits, capunits;
    struct mp_buf tmp;
    bool ready;
};

extern const double rp_l2_grid_mib[MP_REPLAY_NGRID];

/* The bytes an op read and wrote, estimated from its parsed Input Dims and
 * Input type cells (traffic.c); both finite, >= 0 and at most 1e15. */
void rp_op_bytes(const char *op, const struct rp_val *dims, const struct rp_val *types, double *rd,
                 double *wr);

int rp_traffic_init(struct rp_traffic *tr, const struct mp_trace_tree *t, const int32_t *prev);
void rp_traffic_fini(struct rp_traffic *tr);
/* dirty[k]: the bytes written before GPU event `first` on its stream within
 * the last rp_l2_grid_mib[k] MiB of traffic there */
int rp_traffic_dirty(struct rp_traffic *tr, int32_t first, double dirty[MP_REPLAY_NGRID]);
/* v (n per-call dirty bytes, sorted in place) as up to MP_REPLAY_NLEVELS
 * levels with their shares of the calls */
int rp_dirty_levels(double *v, size_t n, double l2_mib, struct mp_replay_dirty *out);

/* replay_summary.csv's text. */
int rp_summary_csv(const struct mp_replay_result *r, struct mp_buf *b);

/* Runs the references of the rebuilt ops (--run). */
int rp_run(const struct mp_replay_opts *o, struct mp_replay_result *r, struct mp_diag *d);

#endif
