/* Private declarations of the MCP server: the tool table and argument
 * decoding (tooltab.c), sessions and JSON-RPC dispatch (rpc.c), tool calls
 * in worker processes (call.c), the worker side (worker.c) and the two
 * transports (stdio.c, http.c). */
#ifndef MP_MCP_INT_H
#define MP_MCP_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <jansson.h>

#include <magpie/mcp.h>
#include <magpie/proc.h>

/* ---- the tool table ---- */

enum mcp_ptype {
    MT_STR,
    MT_INT,
    MT_NUM,
    MT_BOOL,
    MT_STRLIST,
    MT_NUMLIST,
    MT_OBJLIST,
    MT_OBJ,
};

struct mcp_param {
    const char *name;
    enum mcp_ptype type;
    bool required;
    const char *def;   /* default as JSON text; NULL = null (absent) */
    const char *enumv; /* allowed string values "a|b|c", or NULL */
    int min_items;     /* lists: 0 = no minimum */
    int max_items;     /* lists: 0 = no maximum */
    const char *desc;
};

struct mcp_wctx;
/* A tool's body, run in the worker. args holds every parameter (defaults
 * filled in). Sets *result (owned by the caller) and returns 0 for success
 * or 1 for a tool failure ({"error": ...} in *result). */
typedef int (*mcp_tool_fn)(struct mcp_wctx *w, json_t *args, json_t **result);

enum {
    MCP_LONG = 1,     /* reports progress; worth cancelling */
    MCP_READONLY = 2, /* writes nothing */
    MCP_GRACEFUL = 4, /* cancel: SIGTERM to the worker first, then the sweep */
    MCP_EXTRA = 8,    /* magpie's own (not in Magpie's server) */
    MCP_WARM = 16,    /* evaluates kernels: its worker gets the warm runner pool */
};

struct mcp_tool {
    const char *name;
    const char *title;
    const char *desc;
    const struct mcp_param *params; /* ends with {NULL} */
    mcp_tool_fn run;
    unsigned flags;
    const char *result_desc; /* result keys, for the docs */
};

extern const struct mcp_tool *const mcp_tools[];
extern const size_t mcp_ntools;

const struct mcp_tool *mcp_tool_find(const char *name);
json_t *mcp_tool_schema(const struct mcp_tool *t);
json_t *mcp_tool_entry(const struct mcp_tool *t, const char *version);
/* Checks args (an object or NULL) against the tool's parameters and returns
 * a new object with every parameter present (defaults filled in), or NULL
 * with a message in err. */
json_t *mcp_args_decode(const struct mcp_tool *t, json_t *args, char *err, size_t errlen);

/* ---- worker-side helpers for the tools (worker.c) ---- */

void mcp_progress(struct mcp_wctx *w, double done, double total, const char *msg);
/* *result = {"error": msg}; returns 1. */
int mcp_fail(json_t **result, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* *result = {"error": "<what>: <diag>"}; returns 1. */
int mcp_fail_diag(json_t **result, const char *what, const struct mp_diag *d);
/* An mp_trace_progress_fn whose user pointer is the mcp_wctx. */
void mcp_trace_progress(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size, void *user);
/* A line-progress callback (mp_kernel_opts.progress); user = mcp_wctx. */
void mcp_line_progress(const char *line, void *user);
/* Argument accessors (args come decoded, so types are right). NULL / 0
 * when the value is null. */
const char *mcp_str(json_t *args, const char *key);
long long mcp_int(json_t *args, const char *key);
double mcp_num(json_t *args, const char *key);
bool mcp_bool(json_t *args, const char *key);
/* Copies up to max string pointers of the JSON array a into dst (borrowed
 * from a); returns how many. */
int mcp_strs(json_t *a, const char **dst, int max);
/* Parses a JSON text held in an mp_buf into *out; 0 or -1. */
json_t *mcp_parse_buf(const struct mp_buf *b);
/* The magpie executable (for tools that run magpie itself). */
const char *mcp_self_exe(void);

/* ---- sessions and dispatch (rpc.c) ---- */

/* Where the messages of one request go. */
enum mcp_sink_kind {
    SINK_STDIO, /* one line each on stdout */
    SINK_SSE,   /* queued as SSE events for an HTTP response */
    SINK_JSON,  /* only the final response is kept (HTTP JSON, batches) */
};

struct mcp_sink {
    enum mcp_sink_kind kind;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    struct mp_buf q;  /* SSE: pending bytes; JSON: the final response */
    size_t q_off;     /* SSE: bytes already handed out */
    bool done;        /* the final message is queued (or none will come) */
    atomic_bool gone; /* the HTTP client went away */
    int status;       /* HTTP status for JSON sinks */
};

struct mcp_sink *mcp_sink_new(enum mcp_sink_kind kind);
void mcp_sink_ref(struct mcp_sink *s);
void mcp_sink_unref(struct mcp_sink *s);
/* Sends one message; final = the request's response (ends the stream). */
void mcp_sink_emit(struct mcp_sink *s, json_t *msg, bool final);
/* Ends the sink without a message (cancelled call). */
void mcp_sink_close(struct mcp_sink *s);

struct mcp_call;

struct mcp_server {
    struct mp_mcp_opts opts; /* every bound filled in (mp_mcp_opts_defaults) */
    char self_exe[PATH_MAX];
    char tmpdir[PATH_MAX];
    bool dry; /* never start tools (fuzzing) */
    atomic_ulong seq;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ncalls;  /* calls registered: running, waiting for a slot, or finishing */
    int running; /* calls holding a slot (a worker process each) */
    int queued;  /* calls waiting for a slot */
    struct mcp_call *q_head, *q_tail;
    atomic_bool stopping;
    /* The reaper: this process is a child subreaper, so the orphans of a
     * worker's tree become its children; every child that is not a worker
     * (those are waited for by their call) is reaped by a thread. */
    pthread_mutex_t reap_mu; /* held while a worker is spawned and while sweeping */
    pthread_cond_t reap_cv;
    pid_t *workers; /* pids of running workers */
    size_t nworkers, capworkers;
    bool reaper_started;
    bool reap_now;
    pthread_t reaper;
    /* The warm runner pool (src/kernel/warm.c), started by the first call of
     * an MCP_WARM tool (srv->mu): its pid, the write end of its control
     * pipe (closing it ends the pool) and its socket's path. */
    bool pool_tried;
    pid_t pool_pid;
    int pool_ctl;
    char pool_sock[PATH_MAX];
    /* Fuzzing only: stands in for the worker process. Given the tool, the
     * arguments file and the progress file, it writes progress lines and
     * fills res as a worker's exit would. */
    void (*fake_worker)(const char *tool, const char *args_path, const char *progress_path,
                        struct mp_proc_result *res);
};

struct mcp_call;

struct mp_mcp_session {
    struct mcp_server *srv;
    bool own_srv;
    pthread_mutex_t mu;
    int refs;
    char id[40];      /* HTTP session id, "" for stdio */
    char version[16]; /* negotiated legacy version, "" before initialize */
    bool initialized; /* notifications/initialized seen */
    bool modern;      /* a request-scoped session of the 2026 era */
    struct mcp_call *calls;
    double last_used; /* monotonic seconds */
    bool used;        /* a request came after initialize (HTTP eviction order) */
    bool closed;
    int running; /* calls of this session holding a slot (srv->mu) */
};

int mcp_server_init(struct mcp_server *srv, const struct mp_mcp_opts *o, bool dry,
                    struct mp_diag *d);
void mcp_server_fini(struct mcp_server *srv);
/* Cancels every call of the session and waits until the server has none. */
void mcp_server_drain(struct mcp_server *srv);

struct mp_mcp_session *mcp_session_new(struct mcp_server *srv);
void mcp_session_ref(struct mp_mcp_session *s);
void mcp_session_unref(struct mp_mcp_session *s);
void mcp_session_cancel_all(struct mp_mcp_session *s);

/* Handles one parsed message (object or batch array). Responses that are
 * ready at once are emitted on sink; tools/call completes later on it.
 * Returns the number of requests that will be answered on the sink
 * (0: only notifications/responses; the HTTP layer then answers 202). */
int mcp_handle(struct mp_mcp_session *s, json_t *msg, struct mcp_sink *sink);
/* Handles one raw message text (parse errors answered with -32700). */
int mcp_handle_text(struct mp_mcp_session *s, const char *text, size_t len, struct mcp_sink *sink);

json_t *mcp_error(json_t *id, int code, const char *msg, json_t *data);
bool mcp_version_known(const char *v);
bool mcp_version_modern(const char *v);
/* The modern envelope's protocol version of a message, or NULL. */
const char *mcp_modern_version(json_t *msg);

/* ---- tool calls (call.c) ---- */

struct mcp_call {
    struct mcp_call *next;
    struct mp_mcp_session *sess;
    struct mcp_sink *sink;
    json_t *id;
    json_t *progress_token;
    const struct mcp_tool *tool;
    json_t *args;
    char version[16];
    bool modern;
    atomic_bool cancel;
    pthread_t thread;
    struct mcp_call *q_next; /* the server's wait queue */
    bool queued;             /* in the wait queue (srv->mu) */
    bool slot;               /* holds a slot (srv->mu) */
};

/* Registers the call with its session and starts it on its own thread when
 * a slot is free (opts.max_calls in all, max_calls_per_session), else puts
 * it in the wait queue; the response goes to c->sink. Returns 0, or
 * MP_ENOMEM with the reason in why (queue full: the call is freed and the
 * caller answers). */
int mcp_call_start(struct mcp_call *c, char *why, size_t whylen);
/* Cancels: a running call's worker tree is stopped, a waiting call leaves
 * the queue; no response is sent. Called with c->sess->mu held. */
void mcp_call_cancel(struct mcp_call *c);
/* Starts the reaper thread (transports call it once serving starts). */
void mcp_reaper_start(struct mcp_server *srv);
/* Ends the warm runner pool, if one was started (server shutdown). */
void mcp_pool_stop(struct mcp_server *srv);

/* ---- text ---- */

/* A JSON string of s; invalid UTF-8 is replaced by U+FFFD, so the value is
 * never lost (jansson refuses invalid UTF-8). */
json_t *mcp_jstr(const char *s);
/* Writes fmt into buf (len bytes) and, when it was cut, drops the partial
 * UTF-8 character at the end; returns buf. */
char *mcp_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Drops a partial UTF-8 character at the end of s (a cut string). */
void mcp_utf8_trim(char *s);

/* ---- fuzzing entry to the HTTP transport (http.c) ---- */

/* Starts the HTTP layer without a listening socket, on a server that never
 * starts tools. */
int mcp_http_fuzz_init(const struct mp_mcp_opts *o);
/* Sends the raw bytes of one connection (request line, headers, body) to
 * the HTTP layer through a socket pair, closes the sending side, and
 * appends what the server answered (until it closes) to out. */
int mcp_http_fuzz_one(const char *data, size_t len, struct mp_buf *out);

#define MCP_SERVER_NAME "magpie"
/* JSON-RPC error of a tools/call refused because the server is at its limits */
#define MCP_BUSY (-32000)

#endif
