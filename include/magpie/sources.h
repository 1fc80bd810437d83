/* magpie sources: maps a profiler kernel name to the source that defines it.
 *
 * An index is built in one pass over each source tree (CUDA/HIP/OpenCL
 * kernels, C++ functions and structs with their namespaces, Triton
 * @triton.jit functions, assembly kernel symbols, macros that paste kernel
 * names together) and cached on disk, keyed by a hash of the tree's file
 * list, sizes and modification times (plus the git commit when there is
 * one). A resolver demangles the name (libiberty), classifies it into
 * Magpie's kind/category columns, recognises closed-library kernels and
 * returns the defining file and line with a calibrated confidence
 * (docs/sources.md describes the model and how it was measured).
 */
#ifndef MAGPIE_SOURCES_H
#define MAGPIE_SOURCES_H
#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

/* Writes the demangled form of an Itanium-mangled name (_Z...) into out.
 * Returns 0, or MP_EINVAL when name is not a mangled name the library
 * understands (out is then left empty). */
int mp_src_demangle(const char *name, struct mp_buf *out);

struct mp_src_index;

struct mp_src_repo_info {
    const char *root;   /* absolute path */
    const char *name;   /* last path component, e.g. "vllm" */
    const char *commit; /* git HEAD commit, "" when not a git checkout */
    size_t n_files;     /* files parsed (or listed in the cache) */
    size_t n_defs;      /* definitions indexed */
    bool from_cache;    /* loaded from the on-disk cache */
    double seconds;     /* time to walk and parse or load */
};

struct mp_src_index_opts {
    const char *cache_dir; /* NULL: $XDG_CACHE_HOME/magpie/sources or ~/.cache/... */
    bool no_cache;         /* neither read nor write the cache */
};

/* Indexes each repo root (a directory; a missing one is an MP_ENOTFOUND
 * error naming it). n may be 0 (an empty index still classifies names). */
int mp_src_index_open(const char *const *roots, size_t n, const struct mp_src_index_opts *opts,
                      struct mp_src_index **out, struct mp_diag *d);
void mp_src_index_free(struct mp_src_index *ix);
size_t mp_src_index_repos(const struct mp_src_index *ix);
const struct mp_src_repo_info *mp_src_index_repo(const struct mp_src_index *ix, size_t i);

/* Evidence from the trace: the Python frames that launched the kernel,
 * innermost first, each "path/to/file.py(LINE): function" as the torch
 * profiler names python_function events. */
struct mp_src_evidence {
    const char *const *frames;
    size_t n_frames;
};

/* What the trace as a whole shows (mp_src_trace_kernels fills both): the
 * Python packages that were loaded (top-level module names of its
 * python_function frames and the namespaces of its custom ops: "aiter",
 * "vllm", "sgl_kernel", "triton_kernels"), used when a kernel has no stack
 * of its own; and the GPU platform ('h' HIP/ROCm, 'c' CUDA, 0 unknown),
 * which tells a hipified copy from its CUDA original. */
struct mp_src_context {
    const char *const *packages;
    size_t n_packages;
    char platform;
};

#define MP_SRC_MAX_CANDIDATES 3

struct mp_src_candidate {
    char *repo; /* repo name */
    char *file; /* repo-relative path */
    long line;
    char *symbol;
    double score; /* probability estimate, same scale as confidence */
};

struct mp_src_result {
    char kind[24];       /* Magpie's kind column (triton_jit, aten_native, ...) */
    char category[24];   /* Magpie's category column (gemm, attention, ...) */
    char resolution[16]; /* resolved | unresolved | unsupported | closed */
    char *demangled;     /* demangled name, or a copy of the name */
    char *source_repo;   /* repo name; NULL when unresolved */
    char *source_root;   /* repo root path; NULL when unresolved */
    char *source_file;   /* repo-relative path; NULL when unresolved */
    long source_line;    /* 1-based; 0 when unresolved */
    char *source_symbol; /* qualified symbol that was matched */
    double confidence;   /* 0..1: calibrated probability that source_file is right */
    struct mp_src_candidate cand[MP_SRC_MAX_CANDIDATES];
    int n_cand;
    char *library;      /* closed library ("cuBLAS/cuBLASLt", ...) or NULL */
    char *error;        /* why unresolved / closed, NULL when resolved */
    char *notes;        /* short notes (namespace, evidence, dtype) */
    char *upstream_url; /* NULL unless the repo is a known upstream */
    /* Magpie's test and reference columns (resolved rows; NULL when not
     * found, the notes then say why; docs/sources.md has the rules) */
    char *test_file;            /* repo-relative test file exercising the op */
    char *test_cmd;             /* "cd $REPO_DIR && pytest -q FILE[::TEST | -k '...']" */
    char *baseline_ref_file;    /* repo-relative file of the reference */
    char *baseline_ref_symbol;  /* reference function (or the test function) */
    char baseline_ref_kind[24]; /* eager_fn | perftest_wrapper | inline_in_test | none */
    char *triton_ref_file;      /* "repo:path" of a Triton implementation of the op */
    char *triton_ref_symbol;
};

/* Resolves one kernel name. ix may be NULL (classification only). ev may be
 * NULL. r is filled (free with mp_src_result_fini). 0 or MP_ENOMEM. */
int mp_src_resolve(const struct mp_src_index *ix, const char *name,
                   const struct mp_src_evidence *ev, struct mp_src_result *r);
/* Same with the trace's context (may be NULL; its platform, when 0, is
 * taken from the name's types). */
int mp_src_resolve_ctx(const struct mp_src_index *ix, const char *name,
                       const struct mp_src_evidence *ev, const struct mp_src_context *ctx,
                       struct mp_src_result *r);
void mp_src_result_fini(struct mp_src_result *r);

/* The kernel names of a torch-profiler trace (events with cat "kernel",
 * and runtime launch events that name their kernel in args.kernel, as
 * launches during a CUDA/HIP graph capture do), each once in first-seen
 * order, with the Python frames (innermost first,
 * at most 16) that were open on the launching thread when its first
 * launch with a stack was made (cuda_runtime / cuda_driver event with the
 * same correlation id); n_frames is 0 when the trace has no with_stack
 * frames for it. */
struct mp_src_trace_kernel {
    char *name;
    char **frames;
    size_t n_frames;
    unsigned long long calls;
};

struct mp_src_trace_kernels {
    struct mp_src_trace_kernel *k;
    size_t n;
    /* the trace as a whole: the top-level Python packages its frames and
     * custom-op namespaces show were loaded (sorted, each once), and its
     * platform ('h' HIP runtime events or an AMD device, 'c' CUDA, 0) */
    char **packages;
    size_t n_packages;
    char platform;
};

int mp_src_trace_kernels(const char *path, struct mp_src_trace_kernels *out, struct mp_diag *d);
void mp_src_trace_kernels_fini(struct mp_src_trace_kernels *l);
/* Moves what from holds into into, for evidence gathered over several
 * traces of one run (rank traces, graph-capture traces): a kernel new to
 * into, or one into has no frames for, is taken with its frames; packages
 * are united; into's platform is kept unless 0. from is left empty (fini
 * it). 0 or MP_ENOMEM. */
int mp_src_trace_kernels_merge(struct mp_src_trace_kernels *into,
                               struct mp_src_trace_kernels *from);
/* The kernel of that exact name, or NULL. */
const struct mp_src_trace_kernel *mp_src_trace_kernels_find(const struct mp_src_trace_kernels *l,
                                                            const char *name);
/* The context (packages, platform) of l, pointing into l. */
struct mp_src_context mp_src_trace_context(const struct mp_src_trace_kernels *l);

/* "file:line (score)" list of the candidates joined by "; " into out. */
int mp_src_candidates_str(const struct mp_src_result *r, struct mp_buf *out);

/* One row as JSON: {name, demangled, kind, category, source_resolution,
 * source_repo, source_root, source_file, source_line, source_confidence,
 * source_symbol, source_error, library, notes, upstream_url, test_file,
 * test_cmd, baseline_ref_file, baseline_ref_symbol, baseline_ref_kind,
 * triton_ref_file, triton_ref_symbol,
 * source_candidates[{repo, file, symbol, line, score}], calls,
 * python_frames[]}. */
int mp_src_kernel_json(struct mp_buf *b, const struct mp_src_trace_kernel *k,
                       const struct mp_src_result *r);
/* The indexed repos as a JSON array of {root, commit, files, definitions,
 * from_cache, seconds}. */
int mp_src_repos_json(struct mp_buf *b, const struct mp_src_index *ix);

/* "$VLLM_0_11_0_DIR" for a repo named "vllm-0.11.0": the variable that
 * test_cmd and gap_analysis.csv's header use for the repo's root. */
void mp_src_repo_var(const char *name, char *out, size_t len);

/* auto_clone_repos (clone.c). The clone URL of a known upstream repo
 * ("vllm", "pytorch", "aiter", "triton", "rocm-libraries", ...) into buf, or
 * NULL; MAGPIE_REPOS_URL_BASE replaces the GitHub organisation URL. */
const char *mp_src_upstream_url(const char *name, char *buf, size_t len);
/* Magpie's kind -> repo names (triton_jit: triton; ck_tile, tensile_gemm,
 * hip_cpp: rocm-libraries; aten_native, inductor: pytorch; aiter: aiter; a
 * name containing "vllm": vllm). Returns how many were written. */
int mp_src_repos_for_kind(const char *kind, const char *name, const char **out, int max);
/* `git clone --depth 1 url dest` bounded by timeout_s (process group killed
 * after it; a partial clone removed). 0 when dest exists already. Errors:
 * MP_ETIMEOUT, MP_EIO (git failed, e.g. no network), MP_ENOTFOUND (no git). */
int mp_src_clone(const char *url, const char *dest, double timeout_s, struct mp_diag *d);

/* The capture_traces directory beside trace (where a graph-mode serving
 * run's profiler leaves the CUDA/HIP-graph capture traces) when it holds a
 * file; malloc'd, NULL when there is none (or out of memory). */
char *mp_src_capture_dir(const char *trace);
/* The op-replay hook of a kernel row (replay_cmd.c, docs/replay.md): appends
 * `magpie trace replay 'TRACE' --kernel 'KERNEL' --top 1 -o replay_<row>`
 * to b, the arguments single-quoted for a POSIX shell, with
 * `--capture-folder 'CAPTURE'` after TRACE when capture is not NULL (the
 * trace's mp_src_capture_dir, looked up once for all its rows). */
int mp_src_replay_command(struct mp_buf *b, const char *trace, const char *capture,
                          const char *kernel, size_t row);

#endif
