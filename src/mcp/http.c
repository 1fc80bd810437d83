/* The streamable HTTP transport (libmicrohttpd, one thread per connection).
 * POST /mcp takes one JSON-RPC message (or a 2025-03-26 batch) and answers
 * with application/json, or with an SSE stream for tools/call when the client
 * accepts one (progress notifications, then the result). Legacy clients get
 * a session at initialize (Mcp-Session-Id; GET opens the session's idle SSE
 * stream, DELETE ends it); 2026-07-28 requests are served without a session
 * after their MCP-Protocol-Version / Mcp-Method / Mcp-Name headers are checked
 * against the body, and closing their stream cancels them. Every request's
 * Origin is checked (403 for a foreign one) and, with a token, its bearer
 * token (401). GET /health answers {"status":"ok"}. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "mcp_int.h"

struct http_srv {
    struct mcp_server *srv;
    const char *token;
    char bind_host[256];
    pthread_mutex_t mu;
    struct sess_entry *sessions;
    int nsessions;
    int max_sessions;
};

struct sess_entry {
    struct sess_entry *next;
    struct mp_mcp_session *s;
    struct mcp_sink *get_sink; /* the open GET stream, if any */
};

struct req {
    struct mp_buf body;
    bool too_big;
};

static struct http_srv H;

/* ---- small helpers ---- */

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *ctype,
                                 const char *body, const char *sid)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(r, "Content-Type", ctype);
    if (sid && *sid)
        MHD_add_response_header(r, "Mcp-Session-Id", sid);
    if (status == 401)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_rpc_error(struct MHD_Connection *c, unsigned status, json_t *id,
                                      int code, const char *msg, json_t *data)
{
    json_t *e = mcp_error(id, code, msg, data);
    if (!id)
        json_object_del(e, "id"); /* transport errors carry no id */
    char *t = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(e);
    enum MHD_Result r = send_text(c, status, "application/json", t ? t : "{}", NULL);
    free(t);
    return r;
}

static const char *hdr(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static bool accepts(struct MHD_Connection *c, const char *type)
{
    const char *a = hdr(c, "Accept");
    return a && strstr(a, type) != NULL;
}

static bool origin_ok(struct MHD_Connection *c)
{
    const char *o = hdr(c, "Origin");
    if (!o)
        return true; /* not a browser */
    const char *p = strstr(o, "://");
    if (!p)
        return false;
    p += 3;
    char host[256];
    size_t n = 0;
    if (*p == '[') {
        while (*p && *p != ']' && n < sizeof(host) - 2)
            host[n++] = *p++;
        if (*p == ']')
            host[n++] = *p++;
    } else {
        while (*p && *p != ':' && *p != '/' && n < sizeof(host) - 1)
            host[n++] = *p++;
    }
    host[n] = 0;
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 ||
        strcmp(host, "[::1]") == 0)
        return true;
    /* bound to a specific other address: pages served from it are ours */
    if (strcmp(H.bind_host, "0.0.0.0") != 0 && strcmp(H.bind_host, "::") != 0 &&
        strcasecmp(host, H.bind_host) == 0)
        return true;
    return false;
}

static bool auth_ok(struct MHD_Connection *c)
{
    if (!H.token)
        return true;
    const char *a = hdr(c, "Authorization");
    if (!a || strncasecmp(a, "Bearer ", 7) != 0)
        return false;
    a += 7;
    size_t n = strlen(a), m = strlen(H.token);
    unsigned char diff = n != m;
    for (size_t i = 0; i < m; i++)
        diff |= (unsigned char)(a[i < n ? i : 0] ^ H.token[i]);
    return diff == 0;
}

/* ---- sessions ---- */

static void new_session_id(char *out, size_t len)
{
    unsigned char raw[16];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        uint64_t t = mp_time_ns();
        memcpy(raw, &t, sizeof(t));
        memcpy(raw + 8, &out, sizeof(out) < 8 ? sizeof(out) : 8);
    }
    for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < len; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void entry_close(struct sess_entry *e)
{
    mcp_session_cancel_all(e->s);
    if (e->get_sink) {
        mcp_sink_close(e->get_sink);
        mcp_sink_unref(e->get_sink);
    }
    mcp_session_unref(e->s);
    free(e);
}

/* Returns a referenced session, or NULL. */
static struct mp_mcp_session *session_get(const char *id)
{
    struct mp_mcp_session *s = NULL;
    pthread_mutex_lock(&H.mu);
    for (struct sess_entry *e = H.sessions; e; e = e->next) {
        if (strcmp(e->s->id, id) == 0) {
            s = e->s;
            mcp_session_ref(s);
            s->last_used = (double)mp_time_ns() / 1e9;
            break;
        }
    }
    pthread_mutex_unlock(&H.mu);
    return s;
}

static struct mp_mcp_session *session_create(void)
{
    struct mp_mcp_session *s = mcp_session_new(H.srv);
    struct sess_entry *e = mp_calloc(1, sizeof(*e));
    if (!s || !e) {
        mcp_session_unref(s);
        free(e);
        return NULL;
    }
    new_session_id(s->id, sizeof(s->id));
    e->s = s;
    struct sess_entry *evict = NULL;
    pthread_mutex_lock(&H.mu);
    if (H.nsessions >= H.max_sessions) {
        /* full: end the least recently used session that runs nothing */
        struct sess_entry **best = NULL;
        for (struct sess_entry **pp = &H.sessions; *pp; pp = &(*pp)->next) {
            if ((*pp)->s->calls)
                continue;
            if (!best || (*pp)->s->last_used < (*best)->s->last_used)
                best = pp;
        }
        if (best) {
            evict = *best;
            *best = evict->next;
            H.nsessions--;
        }
    }
    if (H.nsessions >= H.max_sessions) {
        pthread_mutex_unlock(&H.mu);
        mcp_session_unref(s);
        free(e);
        return NULL;
    }
    e->next = H.sessions;
    H.sessions = e;
    H.nsessions++;
    mcp_session_ref(s);
    pthread_mutex_unlock(&H.mu);
    if (evict)
        entry_close(evict);
    return s;
}

static bool session_delete(const char *id)
{
    struct sess_entry *found = NULL;
    pthread_mutex_lock(&H.mu);
    for (struct sess_entry **pp = &H.sessions; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->s->id, id) == 0) {
            found = *pp;
            *pp = found->next;
            H.nsessions--;
            break;
        }
    }
    pthread_mutex_unlock(&H.mu);
    if (found)
        entry_close(found);
    return found != NULL;
}

/* ---- streaming ---- */

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct mcp_sink *k = cls;
    pthread_mutex_lock(&k->mu);
    while (k->q_off == k->q.len && !k->done && !atomic_load(&H.srv->stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 2;
        if (pthread_cond_timedwait(&k->cv, &k->mu, &ts) == ETIMEDOUT && k->q_off == k->q.len) {
            /* a keep-alive comment; writing it is also how a closed
             * connection is noticed (and a 2026-era call cancelled) */
            mp_buf_puts(&k->q, ":\n\n");
        }
    }
    ssize_t n;
    if (k->q_off < k->q.len) {
        size_t avail = k->q.len - k->q_off;
        n = (ssize_t)(avail < max ? avail : max);
        memcpy(buf, k->q.data + k->q_off, (size_t)n);
        k->q_off += (size_t)n;
        if (k->q_off == k->q.len) {
            mp_buf_reset(&k->q);
            k->q_off = 0;
        }
    } else {
        n = MHD_CONTENT_READER_END_OF_STREAM;
    }
    pthread_mutex_unlock(&k->mu);
    return n;
}

static void sse_free(void *cls)
{
    struct mcp_sink *k = cls;
    atomic_store(&k->gone, true);
    mcp_sink_unref(k);
}

static enum MHD_Result send_sse(struct MHD_Connection *c, struct mcp_sink *k, const char *sid)
{
    mcp_sink_ref(k);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_reader, k, sse_free);
    if (!r) {
        mcp_sink_unref(k);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    if (sid && *sid)
        MHD_add_response_header(r, "Mcp-Session-Id", sid);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* Waits for a JSON sink's final message and sends it. */
static enum MHD_Result send_json_sink(struct MHD_Connection *c, struct mcp_sink *k, const char *sid,
                                      bool modern)
{
    pthread_mutex_lock(&k->mu);
    while (!k->done)
        pthread_cond_wait(&k->cv, &k->mu);
    char *body = mp_strdup(mp_buf_cstr(&k->q));
    pthread_mutex_unlock(&k->mu);
    unsigned status = 200;
    if (!body || !*body) {
        free(body);
        return send_text(c, 202, NULL, "", sid); /* cancelled: nothing to say */
    }
    if (modern) {
        json_t *m = json_loads(body, 0, NULL);
        json_t *code = json_object_get(json_object_get(m, "error"), "code");
        if (json_is_integer(code)) {
            long long cv = json_integer_value(code);
            status = cv == -32601                                     ? 404
                     : (cv == -32022 || cv == -32020 || cv == -32602) ? 400
                                                                      : 200;
        }
        json_decref(m);
    }
    enum MHD_Result r = send_text(c, status, "application/json", body, sid);
    free(body);
    return r;
}

/* ---- POST /mcp ---- */

static bool is_call(json_t *m)
{
    json_t *meth = json_object_get(m, "method");
    return json_is_object(m) && json_object_get(m, "id") && json_is_string(meth) &&
           strcmp(json_string_value(meth), "tools/call") == 0;
}

static enum MHD_Result post_modern(struct MHD_Connection *c, json_t *m, const char *mv)
{
    const char *hv = hdr(c, "MCP-Protocol-Version");
    const char *hm = hdr(c, "Mcp-Method");
    json_t *id = json_object_get(m, "id");
    json_t *meth = json_object_get(m, "method");
    const char *method = json_is_string(meth) ? json_string_value(meth) : "";
    if (!mcp_version_modern(mv)) {
        /* let dispatch build the UnsupportedProtocolVersion error */
    } else if (!hv || strcmp(hv, mv) != 0) {
        return send_rpc_error(c, 400, id, -32020,
                              "Header mismatch: MCP-Protocol-Version header missing or not equal "
                              "to _meta's protocol version",
                              NULL);
    } else if (!hm || strcmp(hm, method) != 0) {
        return send_rpc_error(c, 400, id, -32020,
                              "Header mismatch: Mcp-Method header missing or not equal to the "
                              "body's method",
                              NULL);
    } else if (strcmp(method, "tools/call") == 0) {
        const char *hn = hdr(c, "Mcp-Name");
        json_t *nm = json_object_get(json_object_get(m, "params"), "name");
        if (!hn || !json_is_string(nm) || strcmp(hn, json_string_value(nm)) != 0)
            return send_rpc_error(c, 400, id, -32020,
                                  "Header mismatch: Mcp-Name header missing or not equal to "
                                  "params.name",
                                  NULL);
    }
    struct mp_mcp_session *s = mcp_session_new(H.srv);
    if (!s)
        return send_rpc_error(c, 503, id, -32603, "out of memory", NULL);
    s->modern = true;
    bool sse = is_call(m) && accepts(c, "text/event-stream");
    struct mcp_sink *k = mcp_sink_new(sse ? SINK_SSE : SINK_JSON);
    enum MHD_Result r;
    int n = mcp_handle(s, m, k);
    if (n == 0)
        r = send_text(c, 202, NULL, "", NULL);
    else if (sse)
        r = send_sse(c, k, NULL);
    else
        r = send_json_sink(c, k, NULL, true);
    mcp_sink_unref(k);
    mcp_session_unref(s);
    return r;
}

static enum MHD_Result post_legacy(struct MHD_Connection *c, json_t *m)
{
    const char *hv = hdr(c, "MCP-Protocol-Version");
    if (hv && !mcp_version_known(hv))
        return send_rpc_error(c, 400, NULL, -32600, "Unsupported MCP-Protocol-Version header",
                              NULL);
    json_t *meth = json_object_get(m, "method");
    bool init = json_is_object(m) && json_is_string(meth) &&
                strcmp(json_string_value(meth), "initialize") == 0;
    const char *sid = hdr(c, "Mcp-Session-Id");
    struct mp_mcp_session *s = NULL;
    if (init) {
        s = session_create();
        if (!s)
            return send_rpc_error(c, 503, NULL, -32603, "too many sessions", NULL);
    } else {
        if (!sid)
            return send_rpc_error(c, 400, NULL, -32600,
                                  "Bad Request: no Mcp-Session-Id header (initialize first, or "
                                  "send the 2026-07-28 per-request _meta)",
                                  NULL);
        s = session_get(sid);
        if (!s)
            return send_rpc_error(c, 404, NULL, -32600, "Session not found", NULL);
    }
    bool sse = is_call(m) && accepts(c, "text/event-stream");
    struct mcp_sink *k = mcp_sink_new(sse ? SINK_SSE : SINK_JSON);
    int n = mcp_handle(s, m, k);
    enum MHD_Result r;
    if (init) {
        pthread_mutex_lock(&k->mu);
        bool failed = strstr(mp_buf_cstr(&k->q), "\"error\"") != NULL &&
                      strstr(mp_buf_cstr(&k->q), "\"result\"") == NULL;
        pthread_mutex_unlock(&k->mu);
        if (failed)
            session_delete(s->id);
    }
    if (n == 0)
        r = send_text(c, 202, NULL, "", NULL);
    else if (sse)
        r = send_sse(c, k, s->id);
    else
        r = send_json_sink(c, k, init ? s->id : NULL, false);
    mcp_sink_unref(k);
    mcp_session_unref(s);
    return r;
}

static enum MHD_Result handle_post(struct MHD_Connection *c, struct req *q)
{
    if (q->too_big)
        return send_rpc_error(c, 413, NULL, -32600, "Request too large", NULL);
    json_error_t je;
    json_t *m =
        json_loadb(q->body.data ? q->body.data : "", q->body.len, JSON_REJECT_DUPLICATES, &je);
    if (!m) {
        char msg[300];
        snprintf(msg, sizeof(msg), "Parse error: %s", je.text);
        return send_rpc_error(c, 400, NULL, -32700, msg, NULL);
    }
    const char *mv = json_is_object(m) ? mcp_modern_version(m) : NULL;
    json_t *meth = json_object_get(m, "method");
    bool init = json_is_string(meth) && strcmp(json_string_value(meth), "initialize") == 0;
    enum MHD_Result r = (mv && !init) ? post_modern(c, m, mv) : post_legacy(c, m);
    json_decref(m);
    return r;
}

/* ---- GET / DELETE /mcp ---- */

static enum MHD_Result handle_get(struct MHD_Connection *c)
{
    const char *hv = hdr(c, "MCP-Protocol-Version");
    if (hv && mcp_version_modern(hv))
        return send_text(c, 405, "text/plain", "GET is not part of protocol 2026-07-28\n", NULL);
    if (!accepts(c, "text/event-stream"))
        return send_text(c, 406, "text/plain", "GET /mcp needs Accept: text/event-stream\n", NULL);
    const char *sid = hdr(c, "Mcp-Session-Id");
    if (!sid)
        return send_rpc_error(c, 400, NULL, -32600, "Bad Request: no Mcp-Session-Id header", NULL);
    struct mcp_sink *k = NULL;
    bool found = false;
    pthread_mutex_lock(&H.mu);
    for (struct sess_entry *e = H.sessions; e; e = e->next) {
        if (strcmp(e->s->id, sid) != 0)
            continue;
        found = true;
        if (e->get_sink) {
            mcp_sink_close(e->get_sink); /* one stream per session: the newest wins */
            mcp_sink_unref(e->get_sink);
        }
        e->get_sink = k = mcp_sink_new(SINK_SSE);
        if (k)
            mcp_sink_ref(k);
        break;
    }
    pthread_mutex_unlock(&H.mu);
    if (!found)
        return send_rpc_error(c, 404, NULL, -32600, "Session not found", NULL);
    if (!k)
        return send_rpc_error(c, 503, NULL, -32603, "out of memory", NULL);
    enum MHD_Result r = send_sse(c, k, NULL);
    mcp_sink_unref(k);
    return r;
}

static enum MHD_Result handle_delete(struct MHD_Connection *c)
{
    const char *sid = hdr(c, "Mcp-Session-Id");
    if (!sid)
        return send_rpc_error(c, 400, NULL, -32600, "Bad Request: no Mcp-Session-Id header", NULL);
    if (!session_delete(sid))
        return send_rpc_error(c, 404, NULL, -32600, "Session not found", NULL);
    return send_text(c, 200, NULL, "", NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    bool post = strcmp(method, "POST") == 0;
    if (post && *con_cls == NULL) {
        struct req *q = mp_calloc(1, sizeof(*q));
        if (!q)
            return MHD_NO;
        mp_buf_init(&q->body, MCP_MAX_MESSAGE);
        *con_cls = q;
        return MHD_YES;
    }
    if (post && *upload_size) {
        struct req *q = *con_cls;
        if (!q->too_big && mp_buf_append(&q->body, upload, *upload_size) != 0)
            q->too_big = true;
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/health") == 0 && strcmp(method, "GET") == 0)
        return send_text(c, 200, "application/json", "{\"status\":\"ok\"}", NULL);
    if (strcmp(url, "/mcp") != 0 && strcmp(url, "/mcp/") != 0)
        return send_text(c, 404, "text/plain", "not found: the MCP endpoint is /mcp\n", NULL);
    if (!origin_ok(c))
        return send_rpc_error(c, 403, NULL, -32600, "Forbidden: Origin not allowed", NULL);
    if (!auth_ok(c))
        return send_rpc_error(c, 401, NULL, -32600, "Unauthorized: bearer token required", NULL);
    if (post)
        return handle_post(c, *con_cls);
    if (strcmp(method, "GET") == 0)
        return handle_get(c);
    if (strcmp(method, "DELETE") == 0)
        return handle_delete(c);
    return send_text(c, 405, "text/plain", "method not allowed\n", NULL);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct req *q = *con_cls;
    if (q) {
        mp_buf_fini(&q->body);
        free(q);
        *con_cls = NULL;
    }
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    mp_log(MP_LOG_DEBUG, "mcp http: %s", msg);
}

int mp_mcp_serve_http(const struct mp_mcp_opts *o, struct mp_diag *d)
{
    struct mcp_server srv;
    int rc = mcp_server_init(&srv, o, false, d);
    if (rc)
        return rc;
    memset(&H, 0, sizeof(H));
    H.srv = &srv;
    H.token = o->auth_token;
    H.max_sessions = o->max_sessions > 0 ? o->max_sessions : 256;
    pthread_mutex_init(&H.mu, NULL);
    const char *host = o->host && *o->host ? o->host : "127.0.0.1";
    snprintf(H.bind_host, sizeof(H.bind_host), "%s", host);
    struct sockaddr_in a4 = {0};
    struct sockaddr_in6 a6 = {0};
    struct sockaddr *sa;
    unsigned flags =
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)o->port);
        sa = (struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)o->port);
        sa = (struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        mcp_server_fini(&srv);
        return mp_diag_set(d, MP_EINVAL, "--host must be a numeric IPv4 or IPv6 address, not '%s'",
                           host);
    }
    bool loopback =
        strcmp(host, "127.0.0.1") == 0 || strcmp(host, "::1") == 0 || strncmp(host, "127.", 4) == 0;
    if (!loopback)
        fprintf(stderr,
                "magpie: warning: MCP server bound to %s, not loopback: anyone who can reach "
                "this address can run magpie's tools%s\n",
                host, o->auth_token ? "" : " (no --auth-token set)");
    /* the daemon's threads inherit a mask without the stop signals */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *dmn = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)1024, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!dmn) {
        mcp_server_fini(&srv);
        return mp_diag_set(d, MP_EIO, "cannot listen on %s port %d (in use?)", host, o->port);
    }
    int port = o->port;
    const union MHD_DaemonInfo *inf = MHD_get_daemon_info(dmn, MHD_DAEMON_INFO_LISTEN_FD);
    if (inf) {
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof(ss));
        socklen_t sl = sizeof(ss);
        if (getsockname(inf->listen_fd, (struct sockaddr *)&ss, &sl) == 0)
            port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                  : ((struct sockaddr_in *)&ss)->sin_port);
    }
    fprintf(stderr, "magpie: MCP server on http://%s%s%s:%d/mcp\n", strchr(host, ':') ? "[" : "",
            host, strchr(host, ':') ? "]" : "", port);
    if (o->port_file) {
        char txt[32];
        int n = snprintf(txt, sizeof(txt), "%d\n", port);
        mp_fs_write_atomic(o->port_file, txt, (size_t)n, NULL);
    }
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "magpie: MCP server stopping (signal %d)\n", sig);
    atomic_store(&srv.stopping, true);
    pthread_mutex_lock(&H.mu);
    struct sess_entry *all = H.sessions;
    H.sessions = NULL;
    H.nsessions = 0;
    pthread_mutex_unlock(&H.mu);
    while (all) {
        struct sess_entry *next = all->next;
        entry_close(all);
        all = next;
    }
    MHD_stop_daemon(dmn);
    mcp_server_drain(&srv);
    pthread_mutex_destroy(&H.mu);
    mcp_server_fini(&srv);
    return 0;
}
