/* magpie trace, inference steps: the iteration annotations that serving
 * engines (vLLM, SGLang, ATOM, xDiT) wrap around each engine step, their
 * phase (prefill / prefill-decode mix / decode), TraceLens's steady-state
 * detection, and the trace splitter that cuts a serving trace into
 * per-step and per-window sub-traces with execution_details.json / .csv
 * (docs/tracelens-compat.md; `TraceLens_split_inference_trace`).
 */
#ifndef MAGPIE_TRACE_STEPS_H
#define MAGPIE_TRACE_STEPS_H

#include <stdbool.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/trace.h>

/* Annotation formats, in TraceLens's matching priority. */
enum mp_step_format {
    MP_STEP_UNMATCHED = 0,
    MP_STEP_VLLM_DETAILED,   /* execute_N_context_R(sq..sk..sqsq..sqsk..)_generation_R(...) */
    MP_STEP_VLLM_NATIVE,     /* execute_context_R(T)_generation_R(T) */
    MP_STEP_SGLANG_DETAILED, /* step[EXTEND|DECODE|MIXED ... sqsq=N ...] */
    MP_STEP_SGLANG_NATIVE,   /* step[DECODE bs=N], step[EXTEND bs=N toks=T] */
    MP_STEP_ATOM_DETAILED,   /* prefill[... sqsq=N ...], decode[... sqsq=N ...] */
    MP_STEP_ATOM_NATIVE,     /* prefill[bs=N tok=T ...], decode[bs=N ...] */
    MP_STEP_DIFFUSION,       /* execute_diffusion_BS_WxH */
};

/* One parsed step annotation (TraceLens's IterationAnnotation). */
struct mp_step {
    enum mp_step_format format;
    int64_t context_requests, generation_requests;
    int64_t context_sum, generation_sum;
    int64_t batch_size;
    int64_t c_sq, c_sk, c_sqsq, c_sqsk;
    int64_t g_sq, g_sk, g_sqsq, g_sqsk;
    bool has_sqsk;
};

/* The per-step numbers the splitter works with (TraceLens's
 * iter_details(); an unmatched name counts as one decode step). */
struct mp_step_details {
    int64_t batch_size, num_requests;
    int64_t context_requests, context_sum;
    int64_t generation_requests, generation_sum;
};

enum mp_step_phase {
    MP_PHASE_IDLE = 0,
    MP_PHASE_PREFILL_ONLY,  /* context requests only */
    MP_PHASE_PREFILLDECODE, /* both ("prefill-decode mix") */
    MP_PHASE_DECODE_ONLY,   /* generation requests only */
};

/* Phase composition of a window of steps (find_phase_from_window). */
struct mp_step_window_phase {
    int64_t num_prefill, num_prefilldecode, num_decode;
    int64_t avg_bs, avg_conc; /* int() of the means */
};

/* Compiled annotation patterns; build once, share read-only. */
struct mp_step_patterns;
int mp_step_patterns_new(struct mp_step_patterns **out);
void mp_step_patterns_free(struct mp_step_patterns *p);

/* Parses name (NUL-terminated) into *out; returns out->format. */
enum mp_step_format mp_step_parse(const struct mp_step_patterns *p, const char *name,
                                  struct mp_step *out);
/* Root tier of a user_annotation name: 1 = a detailed (primary) pattern,
 * 2 = a native (backup) pattern, 0 = not a step annotation. */
int mp_step_tier(const struct mp_step_patterns *p, const char *name);
/* The engine whose annotation a format is ("vllm", "sglang", "atom",
 * "xdit"), NULL for MP_STEP_UNMATCHED. */
const char *mp_step_format_engine(enum mp_step_format f);
/* capture_<bs>_<mode>: returns true and fills *bs and mode (NUL-terminated,
 * truncated to mode_len). */
bool mp_step_parse_capture(const struct mp_step_patterns *p, const char *name, int64_t *bs,
                           char *mode, size_t mode_len);

void mp_step_details(const struct mp_step *s, struct mp_step_details *out);
enum mp_step_phase mp_step_phase_of(const struct mp_step_details *d);
const char *mp_step_phase_name(enum mp_step_phase ph); /* "decode_only", ... */
void mp_step_window_phase(const struct mp_step_details *d, size_t n,
                          struct mp_step_window_phase *out);

/* Steady-state regions as TraceLens finds them (identify_steady_state_regions):
 * [start, end) index pairs into d; always at least one region for n > 0.
 * *regions is malloc'd (caller frees). Returns the number of regions. */
size_t mp_step_steady_regions(const struct mp_step_details *d, size_t n, int num_steps,
                              size_t (**regions)[2]);

enum mp_step_window_mode {
    MP_WINDOW_MIXED,            /* PD ratio closest to the reference */
    MP_WINDOW_DECODE_ONLY,      /* longest decode-only run */
    MP_WINDOW_MAX_PREFILLDECODE /* longest run of steps with prefill */
};

/* An expected workload, for the mixed window's ideal PD ratio. */
struct mp_step_workload {
    bool have_conc, have_osl, have_r;
    int64_t conc;
    double osl, r;
};

/* find_steady_state_window: the [*start, *end) window of d picked for mode;
 * returns false when the mode finds nothing. */
bool mp_step_window(const struct mp_step_details *d, size_t n, int num_steps, size_t (*regions)[2],
                    size_t nregions, enum mp_step_window_mode mode,
                    const struct mp_step_workload *w, size_t *start, size_t *end);

/* ---- splitting a trace ---- */

struct mp_trace_split_opts {
    const char *out_dir;         /* created when missing */
    const char *iterations;      /* "all" (NULL), "N" or "A:B" */
    bool store_single_iteration; /* one file per step */
    bool find_steady_state;      /* mixed / decode_only / prefilldecode windows */
    bool divide_phases;          /* contiguous same-phase runs into sub-folders */
    int num_steps;               /* 0 = 32 */
    struct mp_step_workload workload;
    int gzip_level; /* 0 = 1 (fast); TraceLens writes level 9 */
    mp_trace_progress_fn on_progress;
    void *progress_user;
};

/* One written sub-trace (one entry of execution_details.json). */
struct mp_trace_split_entry {
    long idx;
    char *output_path; /* out_dir joined with the file name (owned) */
    long event_count;
    long num_gpu_events;
    double gpu_duration;           /* sum over steps of each step's GPU span, us */
    double gpu_busy_duration;      /* sum of GPU event durations, us */
    struct mp_step_details *steps; /* owned */
    size_t nsteps;
    struct mp_step_window_phase phase;
    char **step_names; /* annotation of each step (owned), for the report */
};

struct mp_trace_split_result {
    struct mp_trace_split_entry *entries;
    size_t n;
    size_t nroots; /* step annotations found */
    int root_tier; /* 1 detailed, 2 native, 0 none */
    size_t (*regions)[2];
    size_t nregions;
    uint64_t events_in; /* events in the input trace */
};

/* Splits path as `TraceLens_split_inference_trace` does and writes the
 * sub-traces (gzip JSON: the input's top-level keys with traceEvents
 * replaced) plus execution_details.json and execution_details.csv into
 * opts->out_dir. A trace without step annotations is an error
 * (MP_ENOTFOUND) and nothing is written. */
int mp_trace_split(const char *path, const struct mp_trace_split_opts *opts,
                   struct mp_trace_split_result *res, struct mp_diag *d);
void mp_trace_split_result_fini(struct mp_trace_split_result *r);

#endif
