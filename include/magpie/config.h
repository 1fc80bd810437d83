/* magpie config: typed, Magpie-compatible configuration files.
 *
 * Kernel evaluation (analyze / compare) reads two YAML files: the framework
 * config (-c, Magpie's config.yaml: scheduler, correctness, compiling,
 * performance, latency and compare sections) and the kernel config (-k:
 * kernel / kernels entries plus performance / correctness / scheduler /
 * latency overrides). Both fill one struct mp_kernel_config; the kernel
 * config is loaded after the framework config and overrides it.
 *
 * Strings in kernel entries and in the override sections are expanded with
 * environment variables ($VAR, ${VAR}; unknown variables stay as written,
 * as in Python's os.path.expandvars). Commands take Magpie's three forms:
 * a string (split with shell quoting rules, unlike Magpie's whitespace
 * split), a list of strings (one argv), or a list of lists (several argvs
 * run in order). Unknown keys are warned about through mp_log; values of the
 * wrong type are errors that name file:line:col and the field.
 *
 * Ownership: every string and array in these structs is owned by the
 * struct and freed by the matching _fini.
 */
#ifndef MAGPIE_CONFIG_H
#define MAGPIE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

/* ---- command lists ---- */

/* n argvs, each NULL-terminated. */
struct mp_cmds {
    int n;
    char ***argv;
};

void mp_cmds_fini(struct mp_cmds *c);
/* Appends the argv that s splits into (shell quoting rules); an empty
 * string adds nothing. */
int mp_cmds_add_string(struct mp_cmds *c, const char *s, struct mp_diag *d);
/* Appends a copy of argv (NULL-terminated). */
int mp_cmds_add_argv(struct mp_cmds *c, const char *const *argv);
/* One line per argv, words joined shell-safe, ' && ' between argvs. */
int mp_cmds_join(const struct mp_cmds *c, struct mp_buf *out);

/* $VAR and ${VAR} replaced from the environment; unknown names are kept
 * as written. Returns a new string (caller frees) or NULL on ENOMEM. */
char *mp_config_expand_vars(const char *s);

/* ---- kernels ---- */

/* A kernel's language: the index of its row in the kernel language table
 * (below). The five built-in rows keep Magpie's values; rows registered at
 * run time follow them, up to MP_KERNEL_TYPE_MAX. */
enum mp_kernel_type {
    MP_KERNEL_HIP = 0,
    MP_KERNEL_CUDA,
    MP_KERNEL_PYTORCH,
    MP_KERNEL_TRITON,
    MP_KERNEL_OPENCL,
    MP_KERNEL_N_BUILTIN,
    MP_KERNEL_TYPE_MAX = 31,
};

/* How magpie runs a kernel of the language when it runs it itself. */
enum mp_klang_run {
    MP_KLANG_RUN_TESTCASE = 0, /* never: only through its testcase commands (HIP) */
    MP_KLANG_RUN_HARNESS,      /* the C harness on the device back-end `backend` */
    MP_KLANG_RUN_RUNNER,       /* runtime/magpie_runner.py, told `backend` */
};

/* What stops magpie from running it itself (mp_klang_run): bits. */
enum {
    MP_KLANG_UNLESS_TESTCASE = 1, /* a testcase_command is given */
    MP_KLANG_UNLESS_PROF = 2,     /* a prof_command is given */
};

/* The compile stage of a kernel without compile commands. */
enum mp_klang_compile {
    MP_KLANG_COMPILE_TOOL = 0, /* `compiler` -O3 <arch> -o a.out SOURCE when default
                                  compile is on (else pre-built binaries are assumed); a
                                  harness kernel of a module device gets a module
                                  (compiler -cubin) of its own after compile commands */
    MP_KLANG_COMPILE_JIT,      /* nothing to compile: the stage is skipped */
    MP_KLANG_COMPILE_HARNESS,  /* the harness builds the source (a job of mode build) */
};

/* How `magpie discover` finds its kernels in a source of one of its
 * extensions. */
enum mp_klang_scan {
    MP_KLANG_SCAN_NONE = 0, /* not discovered */
    MP_KLANG_SCAN_C,        /* C-like text (comments and literals blanked): functions
                               with a body after one of `keywords` */
    MP_KLANG_SCAN_PY,       /* Python functions under an @<py_module>.<py_decorator>
                               decorator stack (@<py_decorator> when the file does
                               `from <py_module> import` it); scripts run by python3 */
};

/* One row of the kernel language table (`src/config/klang.c`; docs/
 * ARCHITECTURE.md, "Adding a kernel language"). Every string is static or
 * outlives the program's use of the table. */
struct mp_kernel_lang {
    const char *name;           /* "cuda": configs, discovery's kernel_type, error lists */
    const char *enum_name;      /* "CUDA": Magpie's enum name, in reports */
    const char *const *aliases; /* other spellings in configs (NULL-terminated; NULL) */
    /* discovery (disc_bit, scan below) */
    const char *const *exts;              /* extensions of its sources, without the dot */
    const char *const *keywords;          /* MP_KLANG_SCAN_C: words before a kernel */
    const char *py_module, *py_decorator; /* MP_KLANG_SCAN_PY */
    /* compile step (compile below) */
    const char *compiler;     /* default compiler ("nvcc"), found on PATH; NULL: none */
    const char *compiler_pkg; /* what to install when it is missing ("CUDA toolkit") */
    const char *arch_flag;    /* its target flag, before the target ("-arch=") */
    const char *arch_prefix;  /* a detected architecture is used when it starts so */
    const char *arch_default; /* the target otherwise ("sm_90") */
    /* running (run, run_unless, harness_module below) */
    const char *backend;      /* the job's back-end word: the harness's device ("cuda",
                                 "opencl") or the runner's ("triton") */
    const char *runner_entry; /* MP_KLANG_RUN_RUNNER: how runtime/magpie_runner.py loads
                                 its files, the job entry's "entry": a word of the
                                 runner's LANG_ENTRIES or "module:function"; NULL:
                                 "kernelbench" (a ModelNew/Model file) */
    /* correctness and profiling */
    double atol, rtol;    /* default tolerance; < 0: the dtype's (docs/correctness.md) */
    const char *profiler; /* performance backend of "auto" (ncu, rocprof_compute);
                             NULL: never profiled */
    /* kinds and flags of the groups above */
    enum mp_kernel_type type; /* its index (set by the table and by registration) */
    unsigned disc_bit;        /* MP_DISC_* bit (discover.h); 0: not discovered */
    enum mp_klang_scan scan;
    enum mp_klang_compile compile;
    enum mp_klang_run run;
    unsigned run_unless;   /* MP_KLANG_UNLESS_* bits */
    bool harness_module;   /* the harness device loads a module compiled by
                              `compiler` (-cubin) rather than the source */
    bool profile_own_only; /* profiled only when magpie runs it itself */
};

/* The row of type t, or NULL when there is none. */
const struct mp_kernel_lang *mp_kernel_lang_get(enum mp_kernel_type t);
/* Rows in the table (built-in and registered); types are 0 .. count-1. */
int mp_kernel_lang_count(void);
/* The row whose name or alias is s (case-insensitive), or NULL. */
const struct mp_kernel_lang *mp_kernel_lang_find(const char *s);
/* The first discovered row (scan != NONE) of extension ext, or NULL. */
const struct mp_kernel_lang *mp_kernel_lang_by_ext(const char *ext);
/* Adds a row at run time (before any other thread uses the table); its
 * type is the next free value, returned in *out (may be NULL). The row is
 * copied; its strings are not. MP_EINVAL: no name or enum_name, a name or
 * alias already taken, a disc_bit already used; MP_ENOMEM: the table is
 * full (MP_KERNEL_TYPE_MAX). */
int mp_kernel_lang_register(const struct mp_kernel_lang *l, enum mp_kernel_type *out,
                            struct mp_diag *d);
/* The rows' names in table order, "a, b or c" (discovered rows only when
 * disc; then "a, b, c or TAIL" when tail is not NULL) into buf. */
void mp_kernel_lang_list(char *buf, size_t len, bool disc, const char *tail);
/* The profiler a kernel of row l runs under: configured (the performance
 * backend; "" or "auto": the row's), NULL when it is not profiled ("none",
 * no profiler, or profile_own_only and own false). own: magpie runs it
 * itself (harness or runner). */
const char *mp_kernel_lang_profiler(const struct mp_kernel_lang *l, const char *configured,
                                    bool own);

/* The row's enum_name ("HIP", "CUDA", "PYTORCH", "TRITON", "OPENCL":
 * Magpie's enum names), "UNKNOWN" without a row. */
const char *mp_kernel_type_name(enum mp_kernel_type t);
/* A row's name or alias: hip, cuda, pytorch (torch, py), triton, opencl
 * (cl), ...; case-insensitive. */
int mp_kernel_type_parse(const char *s, enum mp_kernel_type *out);
/* The canonical torch name of a kernel dtype ("bf16" -> "bfloat16",
 * "torch.half" -> "float16"), or NULL when unknown. */
const char *mp_kernel_dtype_canonical(const char *name);

#define MP_KERNEL_MAX_DIMS 3

/* One kernel entry (Magpie's KernelEvalConfig plus magpie's additions). */
struct mp_kernel_spec {
    char *id;
    enum mp_kernel_type type;
    int nsources;
    char **sources;
    char *working_dir; /* NULL: the current directory */
    int nenv;
    char **env; /* "KEY=VALUE" */
    struct mp_cmds compile;
    struct mp_cmds testcase;
    struct mp_cmds prof;
    char *bench_module; /* bench_target */
    char *bench_callable;
    char *bench_get_inputs;
    char *get_inputs_func;      /* default "get_inputs" */
    char *get_init_inputs_func; /* default "get_init_inputs" */
    char *dtype;                /* canonical torch name or NULL (docs/correctness.md) */
    /* additions */
    char *reference;   /* reference implementation: a source in the same language
                          (opencl, cuda harness) or a KernelBench Model file (pytorch,
                          triton); enables reference-mode correctness */
    char *kernel_name; /* entry point in the source (C harness); NULL = the first */
    long long size;    /* elements per buffer argument in the C harness; 0 = 1 Mi in 1-D,
                          the product of global_size otherwise */
    int ndim;          /* launch geometry of the C harness; 0 = 1-D over size */
    long long global[MP_KERNEL_MAX_DIMS]; /* work items (threads) per dimension */
    long long local[MP_KERNEL_MAX_DIMS];  /* work-group (block) size; 0 = 256 in dim 0 */
    double atol, rtol;                    /* < 0: the dtype's default */
    int seeds;                            /* fresh random inputs checked (default 3) */
    /* Python runner: the reference also run in float64 (hp_reference, default
     * on) and the multiples of its own error allowed per element and in RMS
     * (hp_factor, rms_factor; 0 = the runner's defaults) */
    bool hp_off;
    double hp_factor, rms_factor;
};

/* How magpie runs kernel k itself: its row's run, unless a command it has
 * stops that (run_unless); MP_KLANG_RUN_TESTCASE when only its commands
 * run it. */
enum mp_klang_run mp_kernel_spec_runs(const struct mp_kernel_spec *k);

/* ---- sections ---- */

struct mp_strlist {
    int n;
    char **v;
};

struct mp_weight {
    char *metric;
    double weight;
};

struct mp_weights {
    int n;
    struct mp_weight *v;
};

struct mp_correctness_cfg {
    char backend[16]; /* "testcase" (default) or "accordo" */
    int iterations;   /* testcase runs per command (default 1) */
    double timeout_s; /* per testcase run, default 300 */
    /* accordo */
    double atol, rtol;
    bool equal_nan;
    double accordo_timeout_s;
    char *accordo_kernel_name;
    char *accordo_reference_binary;
    char *accordo_optimized_binary;
    char *accordo_working_directory;
    struct mp_strlist accordo_kernel_args; /* "name:type" */
};

struct mp_performance_cfg {
    char backend[32]; /* "" = auto, ncu, rocprof_compute, rocprofv3, metrix */
    double timeout_s; /* default 300 */
    struct mp_strlist ncu_args;
    struct mp_strlist ncu_metrics; /* empty = magpie's default roofline set */
    struct mp_strlist rocprof_profile_args;
    struct mp_strlist rocprof_analyze_args;
    struct mp_strlist rocprof_metric_blocks;
    int roofline; /* -1 unset, 0 false, 1 true */
};

struct mp_latency_cfg {
    bool enabled;            /* default true */
    char method[32];         /* auto (default), harness, cuda_graph, none, ... */
    char primary_metric[32]; /* wall_median_ms (default) or kernel_median_ms */
    double rep_ms;           /* Magpie runner: 20 */
    int n_retries;           /* 5 */
    int estimate_reps;       /* 5 */
    int warmup_iters;        /* 5 */
    long long seed;          /* 42 */
    double timeout_s;        /* 120 */
    struct mp_strlist pythonpath;
    /* magpie's noise-based stopping (NVBench stdrel) */
    int min_samples;   /* 10 */
    int max_samples;   /* 10000 */
    double min_time_s; /* 0.5 s of accumulated device time */
    double max_noise;  /* 0.005 = 0.5 % relative standard deviation */
    double max_time_s; /* 15 s wall per kernel */
    double warmup_s;   /* 0.1 s */
    bool l2_flush;     /* default true */
    /* power guard (runner and CUDA harness): samples started under a power
     * cap dropped, a cool-down grown until there are none */
    bool power_guard;  /* default true */
    double cool_ratio; /* a fixed cool-down in multiples of the kernel's time; -1: adapt */
};

struct mp_compare_cfg {
    struct mp_weights weights_ncu;
    struct mp_weights weights_rocprof;
    struct mp_weights weights_metrix;
    struct mp_strlist lower_is_better; /* default duration_ns_total, LDS_Conflicts */
    char winner_strategy[32];          /* "statistical" (magpie default), "perf_score" */
    double alpha;                      /* 0.05 */
    double threshold;                  /* practical difference, 0.01 = 1 % */
    int rounds;                        /* interleaved rounds, 0 = until stable */
    char timing[16];                   /* "sequential" (default: stop on a decision) or "fixed" */
};

struct mp_scheduler_cfg {
    char environment[16]; /* local (default), container, ray */
    int max_workers;
    char *docker_image;
};

/* Everything analyze / compare needs. */
struct mp_kernel_config {
    int nkernels;
    struct mp_kernel_spec *kernels;
    bool enable_default_compile; /* compiling.enable_default_compile */
    char log_level[16];
    struct mp_correctness_cfg correctness;
    struct mp_performance_cfg performance;
    struct mp_latency_cfg latency;
    struct mp_compare_cfg compare;
    struct mp_scheduler_cfg scheduler;
    int nwarnings; /* unknown keys seen while loading */
};

void mp_kernel_config_init(struct mp_kernel_config *c); /* defaults */
void mp_kernel_config_fini(struct mp_kernel_config *c);
void mp_kernel_spec_init(struct mp_kernel_spec *k);
void mp_kernel_spec_fini(struct mp_kernel_spec *k);
/* Appends a copy-free entry: *k is moved into c (k is zeroed); an atol or
 * rtol < 0 takes its language's default (mp_kernel_lang). */
int mp_kernel_config_add(struct mp_kernel_config *c, struct mp_kernel_spec *k);

/* Framework config (-c). A missing file is not an error (Magpie: empty
 * config). Keys that do not concern kernels (benchmark:, gpu:, output:) are
 * accepted silently. */
int mp_config_load_framework(struct mp_kernel_config *c, const char *path, struct mp_diag *d);
/* The same from memory (len bytes of YAML; name is used in errors). */
int mp_config_load_framework_string(struct mp_kernel_config *c, const char *text, size_t len,
                                    const char *name, struct mp_diag *d);
/* Kernel config (-k): appends its kernels and applies its overrides.
 * A config with no kernel at all is an error. */
int mp_config_load_kernel(struct mp_kernel_config *c, const char *path, struct mp_diag *d);
int mp_config_load_kernel_string(struct mp_kernel_config *c, const char *text, const char *name,
                                 struct mp_diag *d);

/* Writing configs: appends s[0..n) as a double-quoted YAML scalar on one
 * line that reads back (here, in libyaml, in PyYAML) as exactly s: '"',
 * '\\', tabs, line breaks (also NEL, U+2028, U+2029) and every character
 * outside YAML's printable set are escaped (\n, \t, \r, \xNN, \uNNNN).
 * Returns 0, MP_ENOMEM, or MP_EINVAL with nothing appended when s is not
 * well-formed UTF-8 (YAML text is Unicode: such bytes cannot be written). */
int mp_config_yaml_str(struct mp_buf *b, const char *s, size_t n);

#endif
