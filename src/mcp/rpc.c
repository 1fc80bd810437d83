/* JSON-RPC 2.0 dispatch of the MCP server: message checks (-32700 parse
 * error, -32600 invalid request, -32601 unknown method, -32602 bad params),
 * batches (2025-03-26 only), the initialize handshake with version
 * negotiation (2024-11-05 .. 2025-11-25), the stateless 2026-07-28 envelope
 * (server/discover, UnsupportedProtocolVersion -32022), ping, tools/list,
 * tools/call (handed to call.c), notifications/cancelled; and the sinks
 * that carry replies to a transport. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "mcp_int.h"

static const char *const legacy_versions[] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                              "2025-11-25"};
static const char *const modern_versions[] = {"2026-07-28"};
#define LATEST_LEGACY "2025-11-25"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"

static const char instructions[] =
    "magpie: GPU performance tools for LLM inference. Prefer these tools for hardware "
    "inspection (hardware_spec), kernel discovery (discover_kernels), kernel configs "
    "(create_kernel_config), kernel evaluation (analyze, compare), serving benchmarks "
    "(benchmark, list_benchmark_results, get_benchmark_result) and torch-profiler trace "
    "analysis (gap_analysis, trace_report, trace_split, trace_stages, trace_collective). "
    "Paths are on the server's machine; relative paths are relative to its working directory.";

bool mcp_version_modern(const char *v)
{
    for (size_t i = 0; v && i < sizeof(modern_versions) / sizeof(*modern_versions); i++)
        if (strcmp(v, modern_versions[i]) == 0)
            return true;
    return false;
}

static bool version_legacy(const char *v)
{
    for (size_t i = 0; v && i < sizeof(legacy_versions) / sizeof(*legacy_versions); i++)
        if (strcmp(v, legacy_versions[i]) == 0)
            return true;
    return false;
}

bool mcp_version_known(const char *v)
{
    return version_legacy(v) || mcp_version_modern(v);
}

static json_t *supported_versions(void)
{
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof(modern_versions) / sizeof(*modern_versions); i++)
        json_array_append_new(a, json_string(modern_versions[i]));
    for (size_t i = sizeof(legacy_versions) / sizeof(*legacy_versions); i-- > 0;)
        json_array_append_new(a, json_string(legacy_versions[i]));
    return a;
}

/* ---- text ---- */

json_t *mcp_jstr(const char *s)
{
    if (!s)
        s = "";
    json_t *j = json_string(s);
    if (j)
        return j;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        size_t n = mp_utf8_len(p + i, len - i);
        if (n) {
            mp_buf_append(&b, s + i, n);
            i += n;
        } else {
            mp_buf_puts(&b, "\xEF\xBF\xBD"); /* U+FFFD */
            i++;
        }
    }
    j = json_stringn(b.data ? b.data : "", b.len);
    mp_buf_fini(&b);
    return j ? j : json_string("");
}

void mcp_utf8_trim(char *s)
{
    size_t end = strlen(s), i = end;
    while (i > 0 && end - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i > 0 && (unsigned char)s[i - 1] >= 0xC0 &&
        mp_utf8_len((const unsigned char *)s + i - 1, end - i + 1) == 0)
        s[i - 1] = 0;
}

char *mcp_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= len)
        mcp_utf8_trim(buf); /* cut: drop a character whose bytes did not all fit */
    return buf;
}

/* ---- reference counts (sinks and sessions) ---- */

static void refs_inc(pthread_mutex_t *mu, int *refs)
{
    pthread_mutex_lock(mu);
    (*refs)++;
    pthread_mutex_unlock(mu);
}

/* Drops one reference; returns how many are left. */
static int refs_dec(pthread_mutex_t *mu, int *refs)
{
    pthread_mutex_lock(mu);
    int left = --*refs;
    pthread_mutex_unlock(mu);
    return left;
}

/* ---- sinks ---- */

struct mcp_sink *mcp_sink_new(enum mcp_sink_kind kind)
{
    struct mcp_sink *s = mp_calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->kind = kind;
    s->refs = 1;
    s->status = 200;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    mp_buf_init(&s->q, 0);
    return s;
}

void mcp_sink_ref(struct mcp_sink *s)
{
    refs_inc(&s->mu, &s->refs);
}

void mcp_sink_unref(struct mcp_sink *s)
{
    if (!s || refs_dec(&s->mu, &s->refs))
        return;
    mp_buf_fini(&s->q);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

static pthread_mutex_t stdout_mu = PTHREAD_MUTEX_INITIALIZER;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

void mcp_sink_emit(struct mcp_sink *s, json_t *msg, bool final)
{
    char *text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text)
        return;
    size_t n = strlen(text);
    if (s->kind == SINK_STDIO) {
        pthread_mutex_lock(&stdout_mu);
        text[n] = '\n';
        write_all(1, text, n + 1);
        text[n] = 0;
        pthread_mutex_unlock(&stdout_mu);
        free(text);
        return;
    }
    pthread_mutex_lock(&s->mu);
    if (!s->done) {
        if (s->kind == SINK_SSE) {
            mp_buf_puts(&s->q, "event: message\ndata: ");
            mp_buf_append(&s->q, text, n);
            mp_buf_puts(&s->q, "\n\n");
        } else if (final) {
            mp_buf_reset(&s->q);
            mp_buf_append(&s->q, text, n);
        }
        if (final)
            s->done = true;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    free(text);
}

void mcp_sink_close(struct mcp_sink *s)
{
    if (s->kind == SINK_STDIO)
        return;
    pthread_mutex_lock(&s->mu);
    s->done = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* ---- server and sessions ---- */

int mcp_server_init(struct mcp_server *srv, const struct mp_mcp_opts *o, bool dry,
                    struct mp_diag *d)
{
    memset(srv, 0, sizeof(*srv));
    if (o)
        srv->opts = *o;
    mp_mcp_opts_defaults(&srv->opts);
    srv->dry = dry;
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cv, NULL);
    pthread_mutex_init(&srv->reap_mu, NULL);
    pthread_cond_init(&srv->reap_cv, NULL);
    if (dry)
        return 0;
    const char *exe = o && o->self_exe ? o->self_exe : "/proc/self/exe";
    if (!realpath(exe, srv->self_exe))
        return mp_diag_set(d, MP_ENOTFOUND, "cannot resolve the magpie executable %s", exe);
    const char *tmp = getenv("TMPDIR");
    snprintf(srv->tmpdir, sizeof(srv->tmpdir), "%s/magpie-mcp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(srv->tmpdir))
        return mp_diag_set(d, MP_EIO, "cannot create a temporary directory under %s: %s",
                           tmp && *tmp ? tmp : "/tmp", strerror(errno));
    /* Orphans of a cancelled call's worker come back to us to be reaped. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    return 0;
}

void mcp_server_drain(struct mcp_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    while (srv->ncalls > 0)
        pthread_cond_wait(&srv->cv, &srv->mu);
    pthread_mutex_unlock(&srv->mu);
}

void mcp_server_fini(struct mcp_server *srv)
{
    if (srv->reaper_started) {
        pthread_mutex_lock(&srv->reap_mu);
        atomic_store(&srv->stopping, true);
        pthread_cond_broadcast(&srv->reap_cv);
        pthread_mutex_unlock(&srv->reap_mu);
        pthread_join(srv->reaper, NULL);
        srv->reaper_started = false;
    }
    mcp_pool_stop(srv);
    if (srv->tmpdir[0])
        rmdir(srv->tmpdir);
    free(srv->workers);
    srv->workers = NULL;
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cv);
    pthread_mutex_destroy(&srv->reap_mu);
    pthread_cond_destroy(&srv->reap_cv);
}

void mp_mcp_opts_defaults(struct mp_mcp_opts *o)
{
#define DEF(f, v)                                                                                  \
    do {                                                                                           \
        if (o->f <= 0)                                                                             \
            o->f = (v);                                                                            \
    } while (0)
    DEF(max_sessions, MP_MCP_DEF_MAX_SESSIONS);
    DEF(max_connections, MP_MCP_DEF_MAX_CONNECTIONS);
    DEF(max_connections_per_client, MP_MCP_DEF_MAX_CONN_PER_CLIENT);
    DEF(header_timeout_s, MP_MCP_DEF_HEADER_TIMEOUT_S);
    DEF(body_timeout_s, MP_MCP_DEF_BODY_TIMEOUT_S);
    DEF(idle_timeout_s, MP_MCP_DEF_IDLE_TIMEOUT_S);
    DEF(session_timeout_s, MP_MCP_DEF_SESSION_TIMEOUT_S);
    DEF(max_calls, MP_MCP_DEF_MAX_CALLS);
    DEF(max_calls_per_session, MP_MCP_DEF_MAX_CALLS_PER_SESSION);
    DEF(max_queued, MP_MCP_DEF_MAX_QUEUED);
    DEF(max_batch, MP_MCP_DEF_MAX_BATCH);
#undef DEF
    if (o->max_message == 0)
        o->max_message = MP_MCP_DEF_MAX_MESSAGE;
    if (o->max_buffered == 0)
        o->max_buffered = MP_MCP_DEF_MAX_BUFFERED;
    if (o->max_buffered < o->max_message)
        o->max_buffered = o->max_message;
}

struct mp_mcp_session *mcp_session_new(struct mcp_server *srv)
{
    struct mp_mcp_session *s = mp_calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->srv = srv;
    s->refs = 1;
    pthread_mutex_init(&s->mu, NULL);
    s->last_used = (double)mp_time_ns() / 1e9;
    return s;
}

void mcp_session_ref(struct mp_mcp_session *s)
{
    refs_inc(&s->mu, &s->refs);
}

void mcp_session_unref(struct mp_mcp_session *s)
{
    if (!s || refs_dec(&s->mu, &s->refs))
        return;
    pthread_mutex_destroy(&s->mu);
    if (s->own_srv) {
        mcp_server_fini(s->srv);
        free(s->srv);
    }
    free(s);
}

void mcp_session_cancel_all(struct mp_mcp_session *s)
{
    pthread_mutex_lock(&s->mu);
    s->closed = true;
    for (struct mcp_call *c = s->calls; c; c = c->next)
        mcp_call_cancel(c);
    pthread_mutex_unlock(&s->mu);
}

struct mp_mcp_session *mp_mcp_session_new_dry(void)
{
    struct mcp_server *srv = mp_calloc(1, sizeof(*srv));
    if (!srv)
        return NULL;
    mcp_server_init(srv, NULL, true, NULL);
    struct mp_mcp_session *s = mcp_session_new(srv);
    if (!s) {
        mcp_server_fini(srv);
        free(srv);
        return NULL;
    }
    s->own_srv = true;
    return s;
}

void mp_mcp_session_free(struct mp_mcp_session *s)
{
    mcp_session_unref(s);
}

int mp_mcp_session_feed(struct mp_mcp_session *s, const char *msg, size_t len, struct mp_buf *out)
{
    struct mcp_sink *k = mcp_sink_new(SINK_SSE);
    if (!k)
        return MP_ENOMEM;
    mcp_handle_text(s, msg, len, k);
    pthread_mutex_lock(&k->mu);
    mp_buf_append(out, k->q.data ? k->q.data : "", k->q.len);
    pthread_mutex_unlock(&k->mu);
    mcp_sink_unref(k);
    return 0;
}

/* ---- messages ---- */

json_t *mcp_error(json_t *id, int code, const char *msg, json_t *data)
{
    json_t *e = json_object();
    json_object_set_new(e, "code", json_integer(code));
    json_object_set_new(e, "message", mcp_jstr(msg));
    if (data)
        json_object_set_new(e, "data", data);
    json_t *r = json_object();
    json_object_set_new(r, "jsonrpc", json_string("2.0"));
    json_object_set(r, "id", id ? id : json_null());
    json_object_set_new(r, "error", e);
    return r;
}

static json_t *response(json_t *id, json_t *result)
{
    json_t *r = json_object();
    json_object_set_new(r, "jsonrpc", json_string("2.0"));
    json_object_set(r, "id", id);
    json_object_set_new(r, "result", result);
    return r;
}

const char *mcp_modern_version(json_t *msg)
{
    json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
    json_t *v = json_object_get(meta, META_VERSION);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *server_info(void)
{
    json_t *i = json_object();
    json_object_set_new(i, "name", json_string(MCP_SERVER_NAME));
    json_object_set_new(i, "title", json_string("magpie GPU performance tools"));
    json_object_set_new(i, "version", json_string(MP_VERSION));
    return i;
}

static json_t *capabilities(void)
{
    json_t *c = json_object(), *t = json_object();
    json_object_set_new(t, "listChanged", json_false());
    json_object_set_new(c, "tools", t);
    return c;
}

/* Adds what every 2026-era result carries. */
static json_t *modern_result(json_t *r)
{
    json_object_set_new(r, "resultType", json_string("complete"));
    json_t *meta = json_object();
    json_object_set_new(meta, "io.modelcontextprotocol/serverInfo", server_info());
    json_object_set_new(r, "_meta", meta);
    return r;
}

static json_t *do_initialize(struct mp_mcp_session *s, json_t *id, json_t *params)
{
    json_t *pv = json_object_get(params, "protocolVersion");
    if (!json_is_string(pv))
        return mcp_error(id, -32602, "initialize: params.protocolVersion must be a string", NULL);
    const char *want = json_string_value(pv);
    const char *v = version_legacy(want) ? want : LATEST_LEGACY;
    pthread_mutex_lock(&s->mu);
    snprintf(s->version, sizeof(s->version), "%s", v);
    pthread_mutex_unlock(&s->mu);
    json_t *r = json_object();
    json_object_set_new(r, "protocolVersion", json_string(v));
    json_object_set_new(r, "capabilities", capabilities());
    json_object_set_new(r, "serverInfo", server_info());
    json_object_set_new(r, "instructions", json_string(instructions));
    return response(id, r);
}

static json_t *do_discover(json_t *id)
{
    json_t *r = json_object();
    json_object_set_new(r, "supportedVersions", supported_versions());
    json_object_set_new(r, "capabilities", capabilities());
    json_object_set_new(r, "instructions", json_string(instructions));
    json_object_set_new(r, "ttlMs", json_integer(3600000));
    json_object_set_new(r, "cacheScope", json_string("public"));
    return response(id, modern_result(r));
}

static json_t *do_tools_list(json_t *id, const char *version, bool modern)
{
    json_t *tools = json_array();
    for (size_t i = 0; i < mcp_ntools; i++)
        json_array_append_new(tools, mcp_tool_entry(mcp_tools[i], version));
    json_t *r = json_object();
    json_object_set_new(r, "tools", tools);
    if (modern) {
        json_object_set_new(r, "ttlMs", json_integer(3600000));
        json_object_set_new(r, "cacheScope", json_string("public"));
        modern_result(r);
    }
    return response(id, r);
}

/* tools/call: checks the request, then starts the call (or answers at once
 * with an isError result for bad arguments). Returns the immediate reply or
 * NULL when the call answers later. */
static json_t *do_tools_call(struct mp_mcp_session *s, json_t *id, json_t *params,
                             const char *version, bool modern, struct mcp_sink *sink)
{
    json_t *name = json_object_get(params, "name");
    if (!json_is_string(name))
        return mcp_error(id, -32602, "tools/call: params.name must be a string", NULL);
    const struct mcp_tool *t = mcp_tool_find(json_string_value(name));
    if (!t) {
        char msg[200];
        mcp_fmt(msg, sizeof(msg), "Unknown tool: %.100s", json_string_value(name));
        return mcp_error(id, -32602, msg, NULL);
    }
    char err[1400];
    json_t *args = mcp_args_decode(t, json_object_get(params, "arguments"), err, sizeof(err));
    if (!args) {
        json_t *content = json_array(), *txt = json_object(), *eo = json_object();
        json_object_set_new(eo, "error", mcp_jstr(err));
        char *etext = json_dumps(eo, JSON_COMPACT);
        json_object_set_new(txt, "type", json_string("text"));
        json_object_set_new(txt, "text", mcp_jstr(etext ? etext : err));
        free(etext);
        json_array_append_new(content, txt);
        json_t *r = json_object();
        json_object_set_new(r, "content", content);
        if (strcmp(version, "2025-06-18") >= 0)
            json_object_set_new(r, "structuredContent", eo);
        else
            json_decref(eo);
        json_object_set_new(r, "isError", json_true());
        if (modern)
            modern_result(r);
        return response(id, r);
    }
    if (s->srv->dry && !s->srv->fake_worker) {
        json_decref(args);
        return mcp_error(id, -32603, "tools are not run in this session", NULL);
    }
    struct mcp_call *c = mp_calloc(1, sizeof(*c));
    if (!c) {
        json_decref(args);
        return mcp_error(id, -32603, "out of memory", NULL);
    }
    c->sess = s;
    mcp_session_ref(s);
    c->sink = sink;
    mcp_sink_ref(sink);
    c->id = json_incref(id);
    json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
    c->progress_token = (json_is_string(tok) || json_is_integer(tok)) ? json_incref(tok) : NULL;
    c->tool = t;
    c->args = args;
    snprintf(c->version, sizeof(c->version), "%s", version);
    c->modern = modern;
    char why[300];
    if (mcp_call_start(c, why, sizeof(why)) != 0)
        return mcp_error(id, MCP_BUSY, why, NULL);
    return NULL;
}

static void do_cancelled(struct mp_mcp_session *s, json_t *params)
{
    json_t *rid = json_object_get(params, "requestId");
    if (!rid)
        return;
    pthread_mutex_lock(&s->mu);
    for (struct mcp_call *c = s->calls; c; c = c->next)
        if (json_equal(c->id, rid))
            mcp_call_cancel(c);
    pthread_mutex_unlock(&s->mu);
}

/* One message (not a batch). Returns the reply to emit now, or NULL. *pending
 * is incremented for a request that will be answered on the sink later. */
static json_t *handle_one(struct mp_mcp_session *s, json_t *m, struct mcp_sink *sink, int *pending,
                          bool in_batch)
{
    if (!json_is_object(m))
        return mcp_error(NULL, -32600, "Invalid Request: a message must be a JSON object", NULL);
    json_t *id = json_object_get(m, "id");
    bool has_id = id != NULL;
    if (has_id && !json_is_string(id) && !json_is_integer(id))
        return mcp_error(NULL, -32600, "Invalid Request: id must be a string or an integer", NULL);
    json_t *jv = json_object_get(m, "jsonrpc");
    if (!json_is_string(jv) || strcmp(json_string_value(jv), "2.0") != 0)
        return mcp_error(id, -32600, "Invalid Request: jsonrpc must be \"2.0\"", NULL);
    json_t *method = json_object_get(m, "method");
    if (!method) {
        if (json_object_get(m, "result") || json_object_get(m, "error"))
            return NULL; /* a response from the client: we send no requests */
        return mcp_error(id, -32600, "Invalid Request: no method", NULL);
    }
    if (!json_is_string(method))
        return mcp_error(id, -32600, "Invalid Request: method must be a string", NULL);
    const char *meth = json_string_value(method);
    json_t *params = json_object_get(m, "params");
    if (params && !json_is_object(params)) {
        if (!has_id)
            return NULL;
        return mcp_error(id, -32602, "Invalid params: params must be an object", NULL);
    }
    if (!has_id) { /* notifications */
        if (strcmp(meth, "notifications/cancelled") == 0)
            do_cancelled(s, params);
        else if (strcmp(meth, "notifications/initialized") == 0) {
            pthread_mutex_lock(&s->mu);
            s->initialized = true;
            pthread_mutex_unlock(&s->mu);
        }
        return NULL; /* others (progress, roots changes ...) are ignored */
    }

    const char *mv = mcp_modern_version(m);
    bool modern = mv != NULL && strcmp(meth, "initialize") != 0;
    char version[16];
    if (modern) {
        if (!mcp_version_modern(mv)) {
            json_t *data = json_object();
            json_object_set_new(data, "supported", supported_versions());
            json_object_set_new(data, "requested", json_string(mv));
            return mcp_error(id, -32022, "Unsupported protocol version", data);
        }
        snprintf(version, sizeof(version), "%s", mv);
    } else {
        pthread_mutex_lock(&s->mu);
        snprintf(version, sizeof(version), "%s", s->version[0] ? s->version : LATEST_LEGACY);
        pthread_mutex_unlock(&s->mu);
    }

    if (strcmp(meth, "initialize") != 0 && !s->used) {
        pthread_mutex_lock(&s->mu);
        s->used = true;
        pthread_mutex_unlock(&s->mu);
    }
    if (strcmp(meth, "initialize") == 0) {
        if (in_batch)
            return mcp_error(id, -32600, "Invalid Request: initialize must not be batched", NULL);
        return do_initialize(s, id, params);
    }
    if (strcmp(meth, "server/discover") == 0)
        return do_discover(id);
    if (strcmp(meth, "ping") == 0 && !modern)
        return response(id, json_object());
    if (strcmp(meth, "tools/list") == 0)
        return do_tools_list(id, version, modern);
    if (strcmp(meth, "tools/call") == 0) {
        json_t *r = do_tools_call(s, id, params ? params : json_null(), version, modern, sink);
        if (!r)
            (*pending)++;
        return r;
    }
    char msg[160];
    mcp_fmt(msg, sizeof(msg), "Method not found: %.100s", meth);
    return mcp_error(id, -32601, msg, NULL);
}

/* Sends r as the final reply on sink (and drops it); 1, the count of
 * replies, for mcp_handle's return. */
static int reply(struct mcp_sink *sink, json_t *r)
{
    mcp_sink_emit(sink, r, true);
    json_decref(r);
    return 1;
}

int mcp_handle(struct mp_mcp_session *s, json_t *msg, struct mcp_sink *sink)
{
    int pending = 0;
    if (!json_is_array(msg)) {
        json_t *r = handle_one(s, msg, sink, &pending, false);
        if (r)
            return reply(sink, r);
        return pending;
    }
    /* A batch: JSON-RPC batching exists in revision 2025-03-26 only. */
    pthread_mutex_lock(&s->mu);
    bool allowed = strcmp(s->version, "2025-03-26") == 0;
    pthread_mutex_unlock(&s->mu);
    if (!allowed || json_array_size(msg) == 0) {
        json_t *r = mcp_error(NULL, -32600,
                              json_array_size(msg) == 0
                                  ? "Invalid Request: empty batch"
                                  : "Invalid Request: batches are only accepted after "
                                    "initialize with protocol version 2025-03-26",
                              NULL);
        return reply(sink, r);
    }
    size_t nb = json_array_size(msg);
    if (nb > (size_t)s->srv->opts.max_batch) {
        char why[160];
        snprintf(why, sizeof(why), "Invalid Request: a batch of %zu messages (at most %d)", nb,
                 s->srv->opts.max_batch);
        return reply(sink, mcp_error(NULL, -32600, why, NULL));
    }
    /* Every element first (tool calls start, or wait for a slot, side by
     * side), then the replies in order once each is there. */
    json_t **now = mp_calloc(nb, sizeof(json_t *));
    struct mcp_sink **later = mp_calloc(nb, sizeof(struct mcp_sink *));
    if (!now || !later) {
        free(now);
        free(later);
        return reply(sink, mcp_error(NULL, -32603, "out of memory", NULL));
    }
    for (size_t i = 0; i < nb; i++) {
        struct mcp_sink *k = mcp_sink_new(SINK_JSON);
        int started = 0;
        now[i] = k ? handle_one(s, json_array_get(msg, i), k, &started, true)
                   : mcp_error(NULL, -32603, "out of memory", NULL);
        if (started)
            later[i] = k;
        else
            mcp_sink_unref(k);
    }
    json_t *out = json_array();
    for (size_t i = 0; i < nb; i++) {
        if (now[i]) {
            json_array_append_new(out, now[i]);
            continue;
        }
        struct mcp_sink *k = later[i];
        if (!k)
            continue;
        pthread_mutex_lock(&k->mu);
        while (!k->done)
            pthread_cond_wait(&k->cv, &k->mu);
        json_t *x = k->q.len ? json_loadb(k->q.data, k->q.len, 0, NULL) : NULL;
        pthread_mutex_unlock(&k->mu);
        if (x)
            json_array_append_new(out, x); /* a cancelled call has no reply */
        mcp_sink_unref(k);
    }
    free(now);
    free(later);
    int n = 0;
    if (json_array_size(out)) {
        mcp_sink_emit(sink, out, true);
        n = 1;
    }
    json_decref(out);
    return n;
}

int mcp_handle_text(struct mp_mcp_session *s, const char *text, size_t len, struct mcp_sink *sink)
{
    json_error_t e;
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!m) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Parse error: %s (line %d, column %d)", e.text, e.line,
                 e.column);
        return reply(sink, mcp_error(NULL, -32700, msg, NULL));
    }
    int n = mcp_handle(s, m, sink);
    json_decref(m);
    return n;
}
