/* magpie ray: benchmarks, kernel evaluations and other magpie commands run
 * as Ray jobs, through the Ray dashboard's Jobs REST API (/api/jobs/) with
 * libcurl; no Python Ray client inside magpie.
 *
 * A task is one Ray job whose entrypoint is magpie itself on the worker
 * (`magpie benchmark -b ...`, `magpie analyze -k ...`, `magpie trace ...`),
 * run in <shared>/results/<task_id>/ with its inputs staged under inputs/
 * there; the result is read back from that directory. Each task leaves a
 * record (<shared>/tasks/<task_id>.json and a copy in the local state
 * directory) so that a job submitted by one magpie process can be followed,
 * fetched or cancelled by another, later, by its id. docs/ray.md has the
 * addresses accepted, the config keys and the status mapping.
 *
 * Ownership: strings returned through char ** are malloc'd and the
 * caller's; structs are filled in place. The library prints nothing.
 */
#ifndef MAGPIE_RAY_H
#define MAGPIE_RAY_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>
#include <magpie/serve.h>

#define MP_RAY_DASHBOARD_PORT 8265
#define MP_RAY_DEFAULT_URL "http://127.0.0.1:8265"
#define MP_RAY_DEFAULT_SHARED "/shared_nfs/magpie"

/* ---- addresses ---- */

/* Resolves a cluster address to the Jobs API base URL (no trailing slash):
 *   NULL, "" or "auto"      RAY_ADDRESS when set (resolved by these rules),
 *                           else http://127.0.0.1:8265
 *   http[s]://host[:port]   as given (the form of `ray job submit --address`)
 *   host:port, host         Magpie's GCS form (host:6379): the dashboard on
 *                           the same host at port 8265, or at
 *                           MAGPIE_RAY_DASHBOARD_PORT when set; host:8265 is
 *                           taken as the dashboard itself
 *   ray://host[:port]       the Ray Client form: likewise the host's dashboard
 * Anything else is MP_EINVAL with a message naming the value. */
int mp_ray_address_resolve(const char *addr, char *url, size_t url_len, struct mp_diag *d);

/* ---- status ---- */

/* Magpie's task status for a Ray job status: PENDING and RUNNING ->
 * "RUNNING", SUCCEEDED -> "SUCCEEDED", FAILED and STOPPED -> "FAILED",
 * anything else (NULL, unknown job) -> "UNKNOWN". */
const char *mp_ray_status_map(const char *ray_status);
/* True for a Ray status that will not change any more. */
bool mp_ray_status_terminal(const char *ray_status);

/* ---- the Jobs API ---- */

struct mp_ray_client;

/* A client for the Jobs API at addr (resolved as above). Connect timeout
 * connect_timeout_s (<= 0: 3 s), each request at most request_timeout_s
 * (<= 0: 30 s). Makes no request. */
int mp_ray_client_new(const char *addr, double connect_timeout_s, double request_timeout_s,
                      struct mp_ray_client **out, struct mp_diag *d);
void mp_ray_client_free(struct mp_ray_client *c);
const char *mp_ray_client_url(const struct mp_ray_client *c);
/* GET /api/version. An unreachable head is MP_EIO with a message that names
 * the address (and the value it was resolved from). *ray_version may be
 * NULL; else a malloc'd copy of the head's Ray version. */
int mp_ray_ping(struct mp_ray_client *c, char **ray_version, struct mp_diag *d);
/* One request: method GET/POST/DELETE, path below the base URL, body JSON
 * text or NULL. The HTTP status goes to *http_status, the body to resp.
 * Transport failures are MP_EIO (the address named); HTTP errors are not
 * failures here. */
int mp_ray_request(struct mp_ray_client *c, const char *method, const char *path, const char *body,
                   long *http_status, struct mp_buf *resp, struct mp_diag *d);

/* ---- ray_config ---- */

#define MP_RAY_MAX_KV 64

/* Magpie's RayConfig (benchmark YAML `ray_config:`, kernel YAML
 * `ray_config:`) plus magpie's additions. Defaults: mp_ray_config_init. */
struct mp_ray_config {
    struct mp_arena *arena;
    const char *cluster_address;     /* "auto" */
    const char *shared_storage_path; /* /shared_nfs/magpie */
    double entrypoint_num_gpus;      /* 0 */
    double entrypoint_num_cpus;      /* 16 in Magpie; magpie: 1 */
    bool multi_node;                 /* false */
    int total_num_gpus;              /* 8 */
    int num_nodes;                   /* 1 */
    int gpus_per_node;               /* 8: the local GPU count TP placement assumes */
    const char *pip_packages[MP_RAY_MAX_KV];
    int n_pip;
    const char *env_vars[MP_RAY_MAX_KV]; /* "KEY=VALUE" */
    int n_env;
    const char *metadata[MP_RAY_MAX_KV]; /* "KEY=VALUE" (Ray's metadata is str -> str) */
    int n_meta;
    const char *resources[MP_RAY_MAX_KV]; /* "NAME=AMOUNT": entrypoint_resources */
    int n_res;
    const char *working_dir;  /* runtime_env working_dir URI, passed as given (NULL) */
    const char *magpie_path;  /* magpie on the workers ("magpie"; magpie_install_path) */
    double connect_timeout_s; /* 3 */
    double submit_timeout_s;  /* job wait limit for blocking runs, 0 = none */
    bool install_magpie;      /* accepted; magpie is one binary (see docs/ray.md) */
};

void mp_ray_config_init(struct mp_ray_config *rc);
void mp_ray_config_fini(struct mp_ray_config *rc);
/* Fills rc from the `ray_config` mapping in a parsed YAML node (the node
 * itself; NULL or null = nothing). Errors name file:line:col and the key. */
struct mp_yaml_node;
int mp_ray_config_load_node(struct mp_ray_config *rc, const struct mp_yaml_node *m,
                            struct mp_diag *d);
/* Loads ray_config from a YAML file: top-level `ray_config:` or
 * `benchmark: ray_config:`; missing = defaults. */
int mp_ray_config_load_file(struct mp_ray_config *rc, const char *path, struct mp_diag *d);
/* Environment overrides: RAY_ADDRESS (only while the address is "auto"),
 * MAGPIE_RAY_SHARED_STORAGE, MAGPIE_RAY_MAGPIE (binary on the workers). */
void mp_ray_config_from_env(struct mp_ray_config *rc);
const char *mp_ray_config_strdup(struct mp_ray_config *rc, const char *s);
/* Sets KEY=VALUE in env_vars (replacing KEY). */
int mp_ray_config_setenv(struct mp_ray_config *rc, const char *key, const char *val);
const char *mp_ray_config_getenv(const struct mp_ray_config *rc, const char *key);

/* ---- TP placement (Magpie's rules on the worker) ---- */

struct mp_ray_placement {
    bool keep_ray_address; /* TP spans nodes: the engine joins the Ray cluster */
    int nnodes;            /* ceil(TP / gpus per node) */
    const char *extra_key; /* EXTRA_VLLM_ARGS / EXTRA_SGLANG_ARGS, NULL = none */
    char extra_val[2048];  /* the new value of extra_key */
    bool warn;             /* TP spans nodes for a framework without a rule */
};

/* vLLM: TP <= local GPUs -> `--distributed-executor-backend mp`, RAY_ADDRESS
 * dropped; TP > local -> `--distributed-executor-backend ray`, RAY_ADDRESS
 * kept. SGLang: TP > local -> `--use-ray --nnodes N`. A flag whose first
 * token is already in extra_in is not added again. local_gpus <= 0 = 8. */
int mp_ray_tp_placement(enum mp_serve_framework fw, int tp, int local_gpus, const char *extra_in,
                        struct mp_ray_placement *out);
/* The same from an engine row's ray_local / ray_span words (serve.h);
 * mp_ray_tp_placement is this with the built-in row of fw. */
int mp_ray_engine_placement(const struct mp_serve_engine *e, int tp, int local_gpus,
                            const char *extra_in, struct mp_ray_placement *out);

/* GET /api/version at rc's address: MP_EIO naming the address when the head
 * does not answer. Submitters call it before they create anything. */
int mp_ray_check_head(const struct mp_ray_config *rc, struct mp_diag *d);

/* ---- tasks ---- */

struct mp_ray_task {
    char task_id[16];       /* 8 hex digits */
    char submission_id[64]; /* "magpie-<task_id>" */
    char mode[16];          /* benchmark, analyze, compare, run */
    char label[256];        /* what it runs, for lists ("vllm fake-model") */
    char address[600];      /* the Jobs API URL it went to */
    char shared[4096];      /* shared storage root (mp_ray_task_prepare refuses longer) */
    char dir[4160];         /* <shared>/results/<task_id> */
    double submitted_at;    /* Unix seconds */
};

/* A new task: a fresh id, its directory <shared>/results/<id>/ (and
 * inputs/ in it) created. address is resolved and recorded. */
int mp_ray_task_prepare(const struct mp_ray_config *rc, const char *mode, const char *label,
                        struct mp_ray_task *t, struct mp_diag *d);
/* Copies a driver-side file to where the worker reads it: a relative path
 * to inputs/<path> (the worker runs in inputs/, so the path stays valid),
 * an absolute one to inputs/abs/<path>. *worker_path (malloc'd, may be NULL)
 * gets the path to give the worker. Regular files only, 256 MiB at most. */
int mp_ray_task_stage(const struct mp_ray_task *t, const char *path, char **worker_path,
                      struct mp_diag *d);
/* Submits: the entrypoint runs magpie_args (the words after the magpie
 * binary) in inputs/ with stdout teed to output.txt and stderr to
 * stderr.log (its tail repeated into the job log when magpie fails); drop
 * RAY_ADDRESS unless keep_ray_address. Writes the task record first. The
 * head unreachable: MP_EIO naming the address, nothing left running. */
int mp_ray_task_submit(const struct mp_ray_config *rc, struct mp_ray_task *t,
                       const char *const *magpie_args, bool keep_ray_address, struct mp_diag *d);

/* Finds a task by id: the local state dir, then <shared>/tasks/ (shared
 * may be NULL: the default root / MAGPIE_RAY_SHARED_STORAGE). address may
 * be NULL: the record's. Without a record the id is taken as a Ray
 * submission id ("magpie-<id>" first) at address. */
int mp_ray_task_find(const char *task_id, const char *address, const char *shared,
                     struct mp_ray_task *t, struct mp_diag *d);

/* The JSON documents of the CLI and the MCP tools (malloc'd text):
 * status  {task_id, status, ray_status, ray_job_id, message, [error_tail]}
 * result  the result document + "_task_id", or {error, status, hint}
 * cancel  {task_id, cancelled, message}
 * list    {total, tasks[{task_id, status, ray_status, mode, label, submitted_at}]}
 * logs    the job's log text (not JSON) */
int mp_ray_task_status(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d);
int mp_ray_task_result(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d);
int mp_ray_task_cancel(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d);
int mp_ray_task_list(const char *address, const char *shared, char **json, struct mp_diag *d);
int mp_ray_task_logs(const char *task_id, const char *address, const char *shared, char **text,
                     struct mp_diag *d);
/* DELETE of the Ray job (finished jobs only); the result directory stays. */
int mp_ray_task_delete(const char *task_id, const char *address, const char *shared, char **json,
                       struct mp_diag *d);
/* Polls until the job ends or timeout_s (<= 0: no limit) passes; *status
 * gets Magpie's status. MP_ETIMEOUT when the limit passes first. A stop
 * flag (may be NULL) that becomes nonzero ends the wait with MP_ECANCEL. */
int mp_ray_task_wait(const struct mp_ray_task *t, double timeout_s, const volatile int *stop,
                     char status[16], struct mp_diag *d);

/* ---- benchmarks ---- */

/* Submits one benchmark: cfg (run_mode ray or not) as `magpie benchmark
 * -b <staged yaml> --run-mode local -o <task dir> ...` on a worker, the
 * config's envs passed as --env after Magpie's TP placement, the HF cache
 * under <shared>/hf_cache unless set, MAGPIE_TOTAL_GPUS when multi_node. */
int mp_ray_submit_benchmark(const struct mp_ray_config *rc, const struct mp_serve_config *cfg,
                            const char *yaml_path, struct mp_ray_task *t, struct mp_diag *d);

/* benchmark_batch: each config (a YAML path, or an object with framework,
 * model and the MCP benchmark tool's keys, as JSON text in configs_json)
 * submitted. parallel: all at once; else one after another, each waited
 * for (timeout per job wait_s). Result JSON (Magpie's keys) in *json. */
int mp_ray_benchmark_batch(const struct mp_ray_config *rc, const char *configs_json, bool parallel,
                           double wait_s, char **json, struct mp_diag *d);

#endif
