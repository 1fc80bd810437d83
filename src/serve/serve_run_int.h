/* Private declarations shared by the files of one serving benchmark run
 * (mp_serve_run): the run's state and the helpers its steps share. The run
 * reads as a pipeline: run.c (workspace, GPUs, the order of the steps,
 * post-processing, the report), run_engine.c (the engine's lifecycle:
 * launch, readiness, stop, server reuse) and run_load.c (the load phases:
 * warm-up, profiling window, measured repeats).
 */
#ifndef MAGPIE_SERVE_RUN_INT_H
#define MAGPIE_SERVE_RUN_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <magpie/base.h>
#include <magpie/gpu.h>
#include <magpie/gpuctl.h>
#include <magpie/loadgen.h>
#include <magpie/proc.h>
#include <magpie/serve.h>

/* The engine's process group while it runs, for mp_serve_interrupt (a
 * signal handler); 0 otherwise (run.c). */
extern volatile sig_atomic_t serve_engine_pgid;

struct serve_captures;

struct serve_run {
    const struct mp_serve_config *c;
    const struct mp_serve_run_opts *o;
    struct mp_serve_result *res;
    uint64_t t0_ns, deadline_ns;
    char ws[4096], path[4400], log_path[4400], trace_dir[4400];
    char base_url[600], served[512], engine_version[128], image_id[256], container[128];
    const char *image;
    struct mp_proc *srv;
    pid_t srv_pid;
    bool client_only, docker, profiling, ready, died, deadline_hit, measured;
    bool hooked; /* o->load ran instead of the configured load */
    int hook_rc;
    /* server reuse: a detached engine (no mp_proc handle), maybe attached to */
    bool detached, attached;
    pid_t det_pid, det_pgid;
    int port;
    char pid_path[4200], meta_path[4200], reuse_log[4400], reuse_cmd[4096];
    double ready_s;
    char exit_desc[256];
    struct mp_serve_stop stop; /* how the engine was stopped (stopped = true) */
    bool stopped, probed;
    char torch_version[128];
    struct mp_serve_cmd cmd;
    enum mp_gpu_vendor vendor;
    char visible[256];
    struct mp_buf warn; /* JSON array items */
    /* gpu.hardware as applied (to put back), and gpu_hardware.log */
    struct mp_gpuctl_session *hw;
    struct mp_buf hw_log;
    /* scheduled profiler captures (run_capture.c), NULL without */
    struct serve_captures *cap;
    /* load */
    const char *dataset; /* the dataset's name for the client result ("random") */
    size_t num_prompts, warmups;
    struct mp_loadgen_progress last;
    const char *stage;
};

struct serve_load_out {
    struct mp_loadgen_result *res;
    struct mp_loadgen_metrics m;
    struct mp_loadgen_failures fails; /* grouped by reason (valid when have) */
    bool have;
    size_t failed_warmups;
    char first_error[512];
    double *rep; /* repeat > 1: REP_N metrics of each run, run k at (k-1) * REP_N */
    int n_rep;
};

/* errors and warnings of the run (the report's errors and warnings) */
void serve_run_error(struct serve_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void serve_run_error_str(struct serve_run *r, const char *buf);
/* the error with the error lines (or last lines) of server.log */
void serve_run_error_log(struct serve_run *r, const char *what);
void serve_run_warning(struct serve_run *r, const char *msg);
double serve_run_now_s(const struct serve_run *r);       /* since the run began */
double serve_run_remaining_s(const struct serve_run *r); /* until its deadline */
void serve_run_progress(struct serve_run *r, const char *stage, size_t done, size_t failed,
                        size_t total);
/* Is the engine (ours, or the detached one) still there? */
bool serve_run_engine_alive(struct serve_run *r);
/* name in the workspace, atomically; an error of the run when it fails */
int serve_run_write_file(struct serve_run *r, const char *name, const struct mp_buf *b);

/* argv's stdout into out, within timeout_s (docker and nvidia-smi queries) */
int serve_run_capture(const char *const *argv, double timeout_s, struct mp_buf *out);

/* run_engine.c */
int serve_run_start_engine(struct serve_run *r, const struct mp_gpu_info *info);
int serve_run_wait_ready(struct serve_run *r);
void serve_run_stop_engine(struct serve_run *r);
void serve_run_reuse_attach(struct serve_run *r);
void serve_run_finish_detached(struct serve_run *r);

/* TraceLens inference stages of the traces in trace_dir, reports under
 * out_dir/tracelens/ (run.c) */
void serve_run_tracelens_stages(struct serve_run *r, const char *trace_dir, const char *out_dir,
                                struct mp_buf *json);

/* run_capture.c: the captures' thread around the measured load, then each
 * capture's reports and the report's magpie.captures */
int serve_captures_start(struct serve_run *r);
void serve_captures_finish(struct serve_run *r);
void serve_captures_reports(struct serve_run *r);
int serve_captures_taken(const struct serve_run *r);
const char *serve_captures_first_dir(struct serve_run *r, char *buf, size_t len);
const char *serve_captures_tracelens(struct serve_run *r);
void serve_captures_json(struct serve_run *r, struct mp_buf *b);
void serve_captures_free(struct serve_run *r);

/* run_load.c */
void serve_run_measure(struct serve_run *r, struct serve_load_out *lo);
void serve_run_repeats_json(const struct serve_load_out *lo, struct mp_buf *b);

#endif
