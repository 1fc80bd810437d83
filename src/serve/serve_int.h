/* Private declarations shared by the files of src/serve. */
#ifndef MAGPIE_SERVE_INT_H
#define MAGPIE_SERVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/serve.h>

/* Loads and initialises libcurl once (lazy, src/lazy/curl.c); an error names the
 * library and the package when it cannot be loaded. */
int serve_http_init(struct mp_diag *d);
/* One HTTP request with an empty body (POST) or none (GET). Returns 0 when a
 * response arrived (*status set), MP_ETIMEOUT, or MP_EIO with the reason in err. */
int serve_http(const char *method, const char *url, double timeout_s, long *status,
               struct mp_buf *body, char *err, size_t err_len);
/* The same with a JSON request body (NULL: empty). */
int serve_http_json(const char *method, const char *url, const char *json, double timeout_s,
                    long *status, struct mp_buf *body, char *err, size_t err_len);
/* data[0].id of a /v1/models body. */
int serve_first_model(const char *body, char *out, size_t len);
/* "version" of GET {base}/version (vLLM), MP_ENOTFOUND when the engine has none. */
int serve_version(const char *base_url, char *out, size_t len);

struct mp_yaml_node;
/* The benchmark YAML's `engine:` section (config_engine.c) into c->engine
 * (framework MP_SERVE_USER); nothing when m is absent or null. */
int serve_config_load_engine(struct mp_serve_config *c, const struct mp_yaml_node *m,
                             struct mp_diag *d);

/* GPU monitor thread (monitor.c): samples nvidia-smi every interval_s. */
struct serve_monitor;
int serve_monitor_start(int device, double interval_s, struct serve_monitor **out);
/* Stops and frees it; appends the report's gpu_monitor object to json when
 * there was at least one sample. */
void serve_monitor_stop(struct serve_monitor *m, struct mp_buf *json);

/* Server reuse (reuse.c). */
struct serve_reuse_state {
    pid_t pid, pgid;
    json_t *meta; /* the .json file */
};

void serve_reuse_paths(const struct mp_serve_config *c, int port, char *pid_path, char *meta_path,
                       size_t len);
int serve_reuse_read(const char *meta_path, struct serve_reuse_state *st);
void serve_reuse_state_fini(struct serve_reuse_state *st);
/* Same framework, model, TP, port, EXTRA_*_ARGS, MAX_MODEL_LEN, MODEL_REVISION. */
bool serve_reuse_matches(const struct mp_serve_config *c, int port,
                         const struct serve_reuse_state *st, char *why, size_t len);
int serve_reuse_write(const struct mp_serve_config *c, int port, pid_t pid, pid_t pgid,
                      const char *command, const char *log_path, const char *pid_path,
                      const char *meta_path, struct mp_diag *d);
void serve_reuse_touch(const char *meta_path);
/* pid exists and still belongs to process group pgid. */
bool serve_group_alive(pid_t pid, pid_t pgid);
/* SIGTERM to the group, up to grace_s for it to go, then SIGKILL; only
 * when serve_group_alive(pid, pgid). */
void serve_group_stop(pid_t pid, pid_t pgid, double grace_s);
/* Starts cmd so that it outlives magpie, output appended to log_path;
 * returns the engine's pid and its process group. */
int serve_spawn_detached(const struct mp_serve_cmd *cmd, const char *cwd, const char *log_path,
                         pid_t *pid, pid_t *pgid, struct mp_diag *d);

/* Magpie's TraceLens pytorch mode (tracelens.c): the rank-0 standard report
 * and, with TP > 1 and a trace per rank, the multi-rank collective report of
 * the traces in trace_dir, written into the workspace ws as Magpie names
 * them; appends the tracelens_analysis object to json. Returns the number
 * of errors (the first one copied to first_error). */
size_t serve_tracelens_pytorch(const struct mp_serve_config *c, const char *trace_dir,
                               const char *ws, struct mp_buf *json, char *first_error,
                               size_t first_error_len);

/* What the report needs from a run (report.c). */
struct serve_report {
    const struct mp_serve_config *cfg;
    bool success;
    const char *workspace;
    double execution_time_s;
    const char *metrics_json;         /* {"throughput":..,"latency":..} or NULL */
    const char *kernels_json;         /* mp_kernel_summary_json text or NULL */
    const char *gap_json;             /* mp_gap_json text or NULL */
    const char *magpie_json;          /* the "magpie" object (versions, engine, requests) */
    const char *serving_receipt_json; /* docker only */
    const char *gpu_monitor_json;     /* NULL when not sampled */
    const char *tracelens_json;       /* NULL when TraceLens was off */
    char **errors;
    size_t n_errors;
};

int serve_report_json(const struct serve_report *r, struct mp_buf *out);
int serve_summary_text(const struct serve_report *r, const char *report_json, struct mp_buf *b);

/* engines.c: a workload whose prompts share prefixes (why: "agentx", a
 * dataset name) against an SGLang magpie starts without prefix_cache on,
 * i.e. with Magpie's --disable-radix-cache: warns (label: the server set,
 * NULL for none) and returns true; false when the cache is on or the engine
 * is not SGLang. */
bool serve_warn_no_prefix_cache(const struct mp_serve_config *c, const char *label,
                                const char *why);

#endif
