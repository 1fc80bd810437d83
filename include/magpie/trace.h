/* magpie trace: streaming reader for PyTorch-profiler (Kineto) Chrome traces,
 * a compact in-memory event store, and rank discovery in trace directories.
 *
 * The parser reads `{"traceEvents": [...], ...}` or a bare `[...]` from a
 * .json or .json.gz file (or stdin) in one pass. Memory is bounded by the
 * largest single event (see max_event_bytes), not by the file size: each
 * event is handed to a callback and then forgotten. The event store, built
 * on top of the callback, keeps every event in struct-of-arrays form with
 * interned names for the analyses that need the whole trace.
 *
 * A malformed, truncated or empty input is an error (MP_EPARSE / MP_ETRUNC)
 * with the byte offset and, for files, line and column, in the diag.
 */
#ifndef MAGPIE_TRACE_H
#define MAGPIE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/io.h>

/* A view of bytes; not NUL-terminated unless stated. */
struct mp_strview {
    const char *p;
    size_t n;
};

/* Flags telling which fields an event carried. */
enum {
    MP_EV_NAME = 1u << 0,
    MP_EV_CAT = 1u << 1,
    MP_EV_TS = 1u << 2,
    MP_EV_DUR = 1u << 3,
    MP_EV_PID = 1u << 4,
    MP_EV_TID = 1u << 5,
    MP_EV_ARGS = 1u << 6,
    MP_EV_EXTID = 1u << 7,    /* args["External id"] was an integer */
    MP_EV_CORR = 1u << 8,     /* args["correlation"] was an integer */
    MP_EV_ID = 1u << 9,       /* "id" (flow events) was an integer */
    MP_EV_DIMS = 1u << 10,    /* args["Input Dims"] present */
    MP_EV_PID_STR = 1u << 11, /* pid was a string (pid_text holds it) */
    MP_EV_TID_STR = 1u << 12, /* tid was a string */
    MP_EV_STREAM = 1u << 13,  /* args["stream"] was an integer */
};

/* One event as the parser hands it to the callback. Every view points into
 * parser memory that is valid only during the callback. Strings (name, cat,
 * pid_text, tid_text) are decoded (JSON escapes resolved); args and
 * input_dims are the raw JSON text of those values. */
struct mp_trace_event {
    uint64_t index;  /* 0-based position in traceEvents (TraceLens's UID) */
    uint64_t offset; /* byte offset of the event's '{' in the decompressed input */
    uint32_t flags;  /* MP_EV_* */
    char ph;         /* first character of "ph", 0 when absent */
    struct mp_strview name;
    struct mp_strview cat;
    double ts;  /* microseconds, as written */
    double dur; /* microseconds, as written */
    int64_t pid, tid;
    struct mp_strview pid_text, tid_text; /* textual form of pid/tid (number or string) */
    int64_t id;                           /* flow id */
    int64_t external_id;                  /* args["External id"] */
    int64_t correlation;                  /* args["correlation"] */
    int64_t stream;                       /* args["stream"] (GPU events) */
    struct mp_strview args;               /* raw text of "args" object, or empty */
    struct mp_strview input_dims;         /* raw text of args["Input Dims"], or empty */
    struct mp_strview raw;                /* the whole event's JSON text, '{' to '}' */
    /* members of "args" that only number the event ("External id", "Ev Idx",
     * "Record function id"), key to end of value, in order of appearance */
    struct mp_strview id_members[4];
    unsigned n_id_members;
};

/* Called once per event. Return 0 to continue; any other value stops the
 * parse and is returned from mp_trace_parse (use MP_ECANCEL). */
typedef int (*mp_trace_event_fn)(const struct mp_trace_event *ev, void *user);

/* Called for each top-level key other than "traceEvents" (e.g.
 * "deviceProperties"), with the raw JSON text of its value. */
typedef int (*mp_trace_meta_fn)(struct mp_strview key, struct mp_strview raw_value, void *user);

/* Called after each block of input with decompressed bytes parsed so far,
 * and raw (on-disk) position / size (size 0 when unknown). */
typedef void (*mp_trace_progress_fn)(uint64_t bytes, uint64_t raw_pos, uint64_t raw_size,
                                     void *user);

struct mp_trace_parse_opts {
    mp_trace_event_fn on_event; /* may be NULL (validate only) */
    mp_trace_meta_fn on_meta;   /* may be NULL */
    mp_trace_progress_fn on_progress;
    void *user;             /* passed to on_event and on_meta */
    void *progress_user;    /* passed to on_progress; NULL = user */
    size_t max_event_bytes; /* largest accepted single event/value; 0 = 256 MiB */
    size_t chunk_bytes;     /* read size; 0 = 4 MiB (tests use tiny values) */
    /* Without it, inflating and tokenizing run on a worker thread, one
     * bounded queue of event batches ahead of the callbacks; the callbacks
     * always run on the calling thread, in file order. true: no thread. */
    bool serial;
};

struct mp_trace_parse_stats {
    uint64_t bytes;  /* decompressed bytes consumed */
    uint64_t events; /* events delivered */
    bool bare_list;  /* input was a bare array */
    /* events the calling thread tokenized (the pipelined parse; how many
     * depends on timing, the events and their order never do) */
    uint64_t events_split;
};

/* Parses everything r yields. stats may be NULL. The callbacks run on the
 * calling thread (see serial above). */
int mp_trace_parse(struct mp_io_reader *r, const struct mp_trace_parse_opts *opts,
                   struct mp_trace_parse_stats *stats, struct mp_diag *d);

/* Opens path (".json", ".json.gz", "-" for stdin) and parses it. On a parse
 * error in a file, the diag also gets the line and column of the offset. */
int mp_trace_parse_file(const char *path, const struct mp_trace_parse_opts *opts,
                        struct mp_trace_parse_stats *stats, struct mp_diag *d);

/* Computes 1-based line and column of a decompressed byte offset in path. */
int mp_trace_locate(const char *path, uint64_t offset, long *line, long *col);

/* Looks up a top-level key in the raw text of a JSON object (args). On
 * success *value is the raw text of its value. Returns 0, MP_ENOTFOUND, or
 * MP_EPARSE. The last occurrence wins, as in Python's json module. */
int mp_trace_json_find(struct mp_strview object, const char *key, struct mp_strview *value);

/* Parses a raw JSON integer (or an integral float) into *out. */
int mp_trace_json_int(struct mp_strview raw, int64_t *out);

/* Decodes a raw JSON string (with quotes) into buf (NUL-terminated). */
int mp_trace_json_string(struct mp_strview raw, struct mp_buf *buf);

/* Appends Python's repr() of a str of n bytes (its quote choice, \\, \n,
 * \r, \t and \xNN escapes; other bytes as they are). */
int mp_trace_pystr_repr(struct mp_buf *b, const char *s, size_t n);

/* Appends Python's repr() of json.loads of the raw JSON value [p, e): lists
 * as tuples when tuples (TraceLens's list_to_tuple, with "(x,)" for one
 * item), else as lists; NaN / Infinity / -Infinity as nan / inf / -inf;
 * "None" for an empty value. */
int mp_trace_json_pyrepr(struct mp_buf *b, const char *p, const char *e, bool tuples);

/* ---- event store: the whole trace in compact arrays ---- */

struct mp_trace_store {
    /* struct-of-arrays, n events, in file order (index i = TraceLens UID) */
    size_t n;
    char *ph;
    uint32_t *flags;
    int32_t *name; /* interned id, -1 when absent */
    int32_t *cat;  /* interned id, -1 when absent */
    int32_t *pid;  /* interned textual pid, -1 when absent */
    int32_t *tid;  /* interned textual tid, -1 when absent */
    double *ts;
    double *dur;
    int64_t *id; /* NULL after mp_trace_store_drop_links, as the next two */
    int64_t *external_id;
    int64_t *correlation;
    int64_t *stream;   /* args["stream"], valid with MP_EV_STREAM */
    const char **args; /* raw args text (NUL-terminated, in the arena or op_args) or NULL;
                          cpu_op and python_function args lose the keys that only
                          number the event ("External id", "Ev Idx", "Record function
                          id": the store has the ids) and identical texts are stored
                          once, which is most of a trace's args */
    uint32_t *args_len;
    struct mp_intern *strings;    /* names, categories, pid/tid texts */
    struct mp_intern *op_args;    /* shared args texts of cpu_op / python_function events */
    struct mp_arena *arena;       /* owns args text */
    char *meta_device_properties; /* raw JSON of "deviceProperties" or NULL (arena) */
    char *path;
    size_t cap;
};

struct mp_trace_store_opts {
    bool keep_args; /* copy each event's raw args text (needed by tree/perf code) */
    /* with keep_args: keep args only for events this returns true for (NULL =
     * all); the rest of the trace's args (often most of its bytes) is dropped */
    bool (*keep_args_for)(const struct mp_trace_event *ev, void *user);
    mp_trace_progress_fn on_progress;
    void *user;
    bool serial; /* parse without the worker thread (mp_trace_parse_opts.serial) */
};

/* Loads path into a new store (*out; free with mp_trace_store_free). */
int mp_trace_store_load(const char *path, const struct mp_trace_store_opts *opts,
                        struct mp_trace_store **out, struct mp_diag *d);
void mp_trace_store_free(struct mp_trace_store *s);
/* Approximate bytes held by the store. */
size_t mp_trace_store_bytes(const struct mp_trace_store *s);
/* Frees the link-id columns (id, external_id, correlation), which only
 * building a trace tree (and the graph-capture and pseudo-op passes that
 * extend one) reads; they are NULL afterwards. For a caller done with
 * those, to lower its peak memory in the phases after them. */
void mp_trace_store_drop_links(struct mp_trace_store *s);
/* Makes room for n events in s: each column is realloc'd to exactly n
 * (nothing is done where s already holds that many). */
int mp_trace_store_reserve(struct mp_trace_store *s, size_t n);

/* ---- rank discovery ---- */

struct mp_trace_rank_file {
    int rank;
    char *path; /* owned */
};

struct mp_trace_rank_list {
    struct mp_trace_rank_file *files;
    size_t n;
    char *dir; /* the directory actually searched (after torch_trace/ descent) */
};

/* Finds per-rank trace files under dir, as Magpie's gap analysis does:
 * `*-rank-N.*pt.trace.json.gz`, then `*-rank-N.*pt.trace.json` (rank from
 * "-rank-N."), searched recursively; then files whose directory or name
 * carries `rank_N`, `rank-N`, `rankN` or `_tpN`; else every *.json.gz then
 * *.json with enumerated pseudo-ranks. Anything under a `capture_traces`
 * directory is ignored unless nothing else exists. A workspace directory
 * holding a `torch_trace/` subdirectory is descended into. Sorted by rank. */
int mp_trace_find_ranks(const char *dir, struct mp_trace_rank_list *out, struct mp_diag *d);
void mp_trace_rank_list_fini(struct mp_trace_rank_list *l);

/* The walk behind it, for callers with their own selection (the serve
 * module's TraceLens step): fn is called for each regular file named
 * *.json or *.json.gz under dir, recursively (at most 16 folders deep,
 * links followed), in readdir order, with the path "dir/.../name" and
 * whether a folder below dir on the way is named capture_traces. Names
 * beginning with '.' are skipped unless with_hidden (pathlib's rglob takes
 * them). A nonzero return from fn stops the walk and is returned; dir that
 * cannot be opened gives MP_ENOTFOUND (an unreadable folder below it is
 * passed over). */
typedef int (*mp_trace_file_fn)(const char *path, bool under_capture, void *user);
int mp_trace_files_each(const char *dir, bool with_hidden, mp_trace_file_fn fn, void *user);

#endif
