/* The streamable HTTP transport (libmicrohttpd, one thread per connection).
 * POST /mcp takes one JSON-RPC message (or a 2025-03-26 batch) and answers
 * with application/json, or with an SSE stream for tools/call when the client
 * accepts one (progress notifications, then the result). Legacy clients get
 * a session at initialize (Mcp-Session-Id; GET opens the session's idle SSE
 * stream, DELETE ends it); 2026-07-28 requests are served without a session
 * after their MCP-Protocol-Version / Mcp-Method / Mcp-Name headers are checked
 * against the body, and closing their stream cancels them. Every request's
 * Origin is checked (403 for a foreign one) and, with a token, its bearer
 * token (401). GET /health answers {"status":"ok"}.
 *
 * Everything a peer can make the server hold is bounded (docs/mcp.md,
 * "Security model"): a request is refused on its headers alone (Host,
 * path, method, Origin, token, Content-Length) before any body is read;
 * connections are limited in all and per client address; a watchdog closes
 * a connection whose headers or body do not arrive in time and an idle
 * keep-alive one; bodies buffered at once share one budget; sessions expire
 * when idle, and a full table refuses new ones rather than ending a session
 * in use. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
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

/* One open connection, for the watchdog. */
enum conn_state {
    C_HEADERS,    /* waiting for a request's headers (deadline header_timeout_s) */
    C_BODY,       /* headers in, body arriving (deadline body_timeout_s) */
    C_PROCESSING, /* being answered: no deadline (tool calls run as long as they run) */
    C_IDLE,       /* keep-alive between requests (deadline idle_timeout_s) */
    C_CLOSING,    /* shut down by the watchdog */
};

struct conn {
    struct conn *prev, *next;
    int fd;
    enum conn_state state;
    double since; /* monotonic seconds when the state began */
};

struct http_srv {
    struct mcp_server *srv;
    const struct mp_mcp_opts *o;
    const char *token;
    char bind_host[256];
    bool bind_any;                         /* 0.0.0.0 or :: */
    char (*local_addrs)[INET6_ADDRSTRLEN]; /* this machine's addresses (bind_any) */
    size_t nlocal;
    pthread_mutex_t mu;
    struct sess_entry *sessions;
    int nsessions;
    pthread_mutex_t conn_mu;
    struct conn *conns;
    atomic_size_t buffered; /* request body bytes held, all connections */
};

struct sess_entry {
    struct sess_entry *next;
    struct mp_mcp_session *s;
    struct mcp_sink *get_sink; /* the open GET stream, if any */
};

struct req {
    struct mp_buf body;
    size_t counted;   /* bytes of body charged to H.buffered */
    bool too_big;     /* over max_message */
    bool over_budget; /* over max_buffered, all connections together */
};

static double now_s(void)
{
    return (double)mp_time_ns() / 1e9;
}

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

static enum MHD_Result send_too_large(struct MHD_Connection *c)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "Request too large: a message may have at most %zu bytes",
             H.o->max_message);
    return send_rpc_error(c, 413, NULL, -32600, msg, NULL);
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

/* The host part of "host[:port]" or "[v6]:port" into out (lower case, v6
 * without brackets). false when it does not parse. */
static bool host_part(const char *hp, char *out, size_t len)
{
    size_t n = 0;
    if (*hp == '[') {
        const char *e = strchr(hp, ']');
        if (!e || (size_t)(e - hp - 1) >= len || (e[1] && e[1] != ':'))
            return false;
        memcpy(out, hp + 1, (size_t)(e - hp - 1));
        out[e - hp - 1] = 0;
        return true;
    }
    while (hp[n] && hp[n] != ':' && hp[n] != '/') {
        if (n + 1 >= len)
            return false;
        char ch = hp[n];
        out[n] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        n++;
    }
    out[n] = 0;
    if (hp[n] == ':')
        for (const char *p = hp + n + 1; *p && *p != '/'; p++)
            if (*p < '0' || *p > '9')
                return false;
    return n > 0;
}

/* A name a request may be addressed to: loopback names, the bound address,
 * this machine's addresses when bound to all of them, and --allowed-host. A
 * DNS name that resolves here only because an attacker's DNS says so (DNS
 * rebinding) is none of these. */
static bool name_allowed(const char *h)
{
    if (strcmp(h, "localhost") == 0 ||
        mp_mcp_host_is_loopback(h)) /* numeric only: 127.evil.example is a name */
        return true;
    if (!H.bind_any && strcasecmp(h, H.bind_host) == 0)
        return true;
    for (size_t i = 0; i < H.nlocal; i++)
        if (strcasecmp(h, H.local_addrs[i]) == 0)
            return true;
    for (const char *const *a = H.o->allowed_hosts; a && *a; a++)
        if (strcmp(*a, "*") == 0 || strcasecmp(*a, h) == 0)
            return true;
    return false;
}

static bool host_ok(struct MHD_Connection *c)
{
    const char *h = hdr(c, "Host");
    if (!h)
        return true; /* HTTP/1.0 without Host: not a browser */
    char name[256];
    return host_part(h, name, sizeof(name)) && name_allowed(name);
}

static bool origin_ok(struct MHD_Connection *c)
{
    const char *o = hdr(c, "Origin");
    if (!o)
        return true; /* not a browser */
    const char *p = strstr(o, "://");
    if (!p)
        return false;
    char name[256];
    return host_part(p + 3, name, sizeof(name)) && name_allowed(name);
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
            s->last_used = now_s();
            break;
        }
    }
    pthread_mutex_unlock(&H.mu);
    return s;
}

/* A session that nothing needs right now: no call running or waiting, no
 * live GET stream. */
static bool entry_quiet(const struct sess_entry *e, bool *used)
{
    pthread_mutex_lock(&e->s->mu); /* order: H.mu, then a session's */
    bool calls = e->s->calls != NULL;
    if (used)
        *used = e->s->used;
    pthread_mutex_unlock(&e->s->mu);
    return !calls && (!e->get_sink || atomic_load(&e->get_sink->gone));
}

/* Unlinks the sessions idle longer than session_timeout_s (H.mu held) and
 * returns them, to be closed without the lock. */
static struct sess_entry *take_expired(double now)
{
    struct sess_entry *out = NULL;
    for (struct sess_entry **pp = &H.sessions; *pp;) {
        struct sess_entry *e = *pp;
        if (entry_quiet(e, NULL) && now - e->s->last_used > H.o->session_timeout_s) {
            *pp = e->next;
            H.nsessions--;
            e->next = out;
            out = e;
        } else {
            pp = &e->next;
        }
    }
    return out;
}

static void close_all(struct sess_entry *e)
{
    while (e) {
        struct sess_entry *next = e->next;
        entry_close(e);
        e = next;
    }
}

static struct mp_mcp_session *session_create(char *why, size_t whylen)
{
    struct mp_mcp_session *s = mcp_session_new(H.srv);
    struct sess_entry *e = mp_calloc(1, sizeof(*e));
    if (!s || !e) {
        mcp_session_unref(s);
        free(e);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    new_session_id(s->id, sizeof(s->id));
    e->s = s;
    pthread_mutex_lock(&H.mu);
    struct sess_entry *gone = take_expired(now_s());
    if (H.nsessions >= H.o->max_sessions) {
        /* full: end the least recently used session that was never used
         * after its initialize; one in use is never ended for a newcomer */
        struct sess_entry **best = NULL;
        for (struct sess_entry **pp = &H.sessions; *pp; pp = &(*pp)->next) {
            bool used = false;
            if (!entry_quiet(*pp, &used) || used)
                continue;
            if (!best || (*pp)->s->last_used < (*best)->s->last_used)
                best = pp;
        }
        if (best) {
            struct sess_entry *ev = *best;
            *best = ev->next;
            H.nsessions--;
            ev->next = gone;
            gone = ev;
        }
    }
    bool full = H.nsessions >= H.o->max_sessions;
    if (!full) {
        e->next = H.sessions;
        H.sessions = e;
        H.nsessions++;
        mcp_session_ref(s);
    }
    pthread_mutex_unlock(&H.mu);
    close_all(gone);
    if (full) {
        snprintf(why, whylen,
                 "Service Unavailable: %d sessions are open and in use (--max-sessions); an idle "
                 "one ends after %.0f s (--session-timeout), or end one with DELETE",
                 H.o->max_sessions, H.o->session_timeout_s);
        mcp_session_unref(s);
        free(e);
        return NULL;
    }
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
        char why[300];
        s = session_create(why, sizeof(why));
        if (!s)
            return send_rpc_error(c, 503, NULL, -32603, why, NULL);
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
        return send_too_large(c);
    if (q->over_budget)
        return send_rpc_error(c, 503, NULL, -32603,
                              "Service Unavailable: too many request bodies are being received "
                              "at once; try again",
                              NULL);
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

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void conn_set(struct MHD_Connection *c, enum conn_state st)
{
    struct conn *k = conn_of(c);
    if (!k)
        return;
    pthread_mutex_lock(&H.conn_mu);
    if (k->state != C_CLOSING) {
        k->state = st;
        k->since = now_s();
    }
    pthread_mutex_unlock(&H.conn_mu);
}

/* Checks a request on its headers alone. Returns MHD_YES/MHD_NO after
 * queueing a refusal, or -1 when the request may go on. */
static int refuse_early(struct MHD_Connection *c, const char *url, const char *method)
{
    if (!host_ok(c))
        return send_text(c, 421, "text/plain",
                         "Misdirected Request: this Host is not one this server answers to (a "
                         "loopback name, the bound address, or --allowed-host)\n",
                         NULL);
    bool health = strcmp(url, "/health") == 0;
    if (health)
        return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0
                   ? send_text(c, 200, "application/json", "{\"status\":\"ok\"}", NULL)
                   : send_text(c, 405, "text/plain", "method not allowed: GET /health\n", NULL);
    if (strcmp(url, "/mcp") != 0 && strcmp(url, "/mcp/") != 0)
        return send_text(c, 404, "text/plain", "not found: the MCP endpoint is /mcp\n", NULL);
    if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0 && strcmp(method, "DELETE") != 0)
        return send_text(c, 405, "text/plain", "method not allowed: POST, GET or DELETE /mcp\n",
                         NULL);
    if (!origin_ok(c))
        return send_rpc_error(c, 403, NULL, -32600, "Forbidden: Origin not allowed", NULL);
    if (!auth_ok(c))
        return send_rpc_error(c, 401, NULL, -32600, "Unauthorized: bearer token required", NULL);
    if (strcmp(method, "POST") == 0) {
        const char *cl = hdr(c, "Content-Length");
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno || end == cl || *end || n > H.o->max_message)
                return send_too_large(c);
        }
    }
    return -1;
}

static void body_add(struct req *q, const char *data, size_t n)
{
    if (q->too_big || q->over_budget)
        return;
    if (q->body.len + n > H.o->max_message) {
        q->too_big = true;
        return;
    }
    size_t before = atomic_fetch_add(&H.buffered, n);
    q->counted += n;
    if (before + n > H.o->max_buffered) {
        q->over_budget = true;
        return;
    }
    if (mp_buf_append(&q->body, data, n) != 0)
        q->too_big = true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    bool post = strcmp(method, "POST") == 0;
    if (*con_cls == NULL) { /* the headers are in: decide on them alone */
        int r = refuse_early(c, url, method);
        if (r >= 0) {
            conn_set(c, C_PROCESSING);
            return (enum MHD_Result)r;
        }
        if (!post) {
            conn_set(c, C_PROCESSING);
            if (strcmp(method, "GET") == 0)
                return handle_get(c);
            return handle_delete(c);
        }
        struct req *q = mp_calloc(1, sizeof(*q));
        if (!q)
            return MHD_NO;
        mp_buf_init(&q->body, H.o->max_message);
        *con_cls = q;
        conn_set(c, C_BODY);
        return MHD_YES;
    }
    struct req *q = *con_cls;
    if (*upload_size) {
        body_add(q, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    conn_set(c, C_PROCESSING);
    return handle_post(c, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)toe;
    struct req *q = *con_cls;
    if (q) {
        atomic_fetch_sub(&H.buffered, q->counted);
        mp_buf_fini(&q->body);
        free(q);
        *con_cls = NULL;
    }
    conn_set(c, C_IDLE);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn *k = mp_calloc(1, sizeof(*k));
        if (!k)
            return;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        k->fd = ci ? ci->connect_fd : -1;
        k->state = C_HEADERS;
        k->since = now_s();
        pthread_mutex_lock(&H.conn_mu);
        k->next = H.conns;
        if (H.conns)
            H.conns->prev = k;
        H.conns = k;
        pthread_mutex_unlock(&H.conn_mu);
        *socket_context = k;
        return;
    }
    struct conn *k = *socket_context;
    if (!k)
        return;
    /* before the socket is closed: the watchdog never shuts a reused fd */
    pthread_mutex_lock(&H.conn_mu);
    if (k->prev)
        k->prev->next = k->next;
    else
        H.conns = k->next;
    if (k->next)
        k->next->prev = k->prev;
    pthread_mutex_unlock(&H.conn_mu);
    free(k);
    *socket_context = NULL;
}

/* Closes the connections past their deadline and ends expired sessions. */
static void watchdog(void)
{
    double now = now_s();
    pthread_mutex_lock(&H.conn_mu);
    for (struct conn *k = H.conns; k; k = k->next) {
        double limit = k->state == C_HEADERS ? H.o->header_timeout_s
                       : k->state == C_BODY  ? H.o->body_timeout_s
                       : k->state == C_IDLE  ? H.o->idle_timeout_s
                                             : -1;
        if (limit > 0 && now - k->since > limit && k->fd >= 0) {
            mp_log(MP_LOG_DEBUG, "mcp http: closing a connection (%s too slow)",
                   k->state == C_HEADERS ? "headers"
                   : k->state == C_BODY  ? "body"
                                         : "idle");
            shutdown(k->fd, SHUT_RDWR);
            k->state = C_CLOSING;
        }
    }
    pthread_mutex_unlock(&H.conn_mu);
    pthread_mutex_lock(&H.mu);
    struct sess_entry *gone = take_expired(now);
    pthread_mutex_unlock(&H.mu);
    close_all(gone);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    mp_log(MP_LOG_DEBUG, "mcp http: %s", msg);
}

static void load_local_addrs(void);

/* The transport's state for a server about to serve on host. */
static void http_srv_init(struct mcp_server *srv, const char *host)
{
    memset(&H, 0, sizeof(H));
    H.srv = srv;
    H.o = &srv->opts;
    H.token = srv->opts.auth_token;
    pthread_mutex_init(&H.mu, NULL);
    pthread_mutex_init(&H.conn_mu, NULL);
    snprintf(H.bind_host, sizeof(H.bind_host), "%s", host);
    H.bind_any = strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
    if (H.bind_any)
        load_local_addrs();
}

/* ---- fuzzing entry ---- */

static struct MHD_Daemon *fuzz_dmn;
static struct mcp_server fuzz_srv;

int mcp_http_fuzz_init(const struct mp_mcp_opts *o)
{
    if (fuzz_dmn)
        return 0;
    mcp_server_init(&fuzz_srv, o, true, NULL);
    http_srv_init(&fuzz_srv, o && o->host ? o->host : "127.0.0.1");
    signal(SIGPIPE, SIG_IGN);
    fuzz_dmn = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                    MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
                                0, NULL, NULL, on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED,
                                on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
                                NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)5,
                                MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    return fuzz_dmn ? 0 : MP_EIO;
}

int mcp_http_fuzz_one(const char *data, size_t len, struct mp_buf *out)
{
    int sv[2];
    if (!fuzz_dmn || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return MP_EIO;
    struct sockaddr_in peer = {0};
    peer.sin_family = AF_INET;
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (MHD_add_connection(fuzz_dmn, sv[1], (struct sockaddr *)&peer, sizeof(peer)) != MHD_YES) {
        close(sv[0]);
        return MP_EIO;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = send(sv[0], data + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* the server closed early (a refusal): fine */
        off += (size_t)w;
    }
    shutdown(sv[0], SHUT_WR);
    char buf[65536];
    for (;;) {
        ssize_t r = recv(sv[0], buf, sizeof(buf), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (out->len < ((size_t)8 << 20))
            mp_buf_append(out, buf, (size_t)r);
    }
    close(sv[0]);
    watchdog();
    return 0;
}

bool mp_mcp_host_is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return false;
}

/* This machine's addresses, for Host checks when bound to all of them. */
static void load_local_addrs(void)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return;
    size_t n = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
        n++;
    H.local_addrs = mp_calloc(n ? n : 1, sizeof(*H.local_addrs));
    for (struct ifaddrs *i = ifs; i && H.local_addrs; i = i->ifa_next) {
        if (!i->ifa_addr)
            continue;
        int fam = i->ifa_addr->sa_family;
        const void *a = NULL;
        if (fam == AF_INET)
            a = &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        else if (fam == AF_INET6)
            a = &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr;
        if (a && inet_ntop(fam, a, H.local_addrs[H.nlocal], INET6_ADDRSTRLEN))
            H.nlocal++;
    }
    freeifaddrs(ifs);
}

int mp_mcp_serve_http(const struct mp_mcp_opts *o, struct mp_diag *d)
{
    const char *host = o->host && *o->host ? o->host : "127.0.0.1";
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
        return mp_diag_set(d, MP_EINVAL, "--host must be a numeric IPv4 or IPv6 address, not '%s'",
                           host);
    }
    bool loopback = mp_mcp_host_is_loopback(host);
    if (!loopback && !(o->auth_token && *o->auth_token))
        return mp_diag_set(d, MP_EINVAL,
                           "refusing to serve on %s without a token: anyone who can reach this "
                           "address could run commands as you through the tools. Give one with "
                           "--auth-token-file FILE (mode 0600) or $MAGPIE_MCP_TOKEN, or bind "
                           "127.0.0.1",
                           host);
    struct mcp_server srv;
    int rc = mcp_server_init(&srv, o, false, d);
    if (rc)
        return rc;
    http_srv_init(&srv, host);
    if (!loopback)
        fprintf(stderr,
                "magpie: warning: MCP server bound to %s, not loopback: whoever has the token "
                "and can reach this address can run commands as you through the tools\n",
                host);
    /* the daemon's threads inherit a mask without the stop signals */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    const struct mp_mcp_opts *b = &srv.opts;
    struct MHD_Daemon *dmn = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, NULL, MHD_OPTION_CONNECTION_LIMIT, (unsigned)b->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)b->max_connections_per_client,
        MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(b->idle_timeout_s + b->body_timeout_s + b->header_timeout_s + 1),
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!dmn) {
        free(H.local_addrs);
        mcp_server_fini(&srv);
        return mp_diag_set(d, MP_EIO, "cannot listen on %s port %d (in use?)", host, o->port);
    }
    mcp_reaper_start(&srv);
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
    for (;;) {
        struct timespec tick = {0, 250000000L};
        sig = sigtimedwait(&stop, NULL, &tick);
        if (sig > 0)
            break;
        watchdog();
    }
    fprintf(stderr, "magpie: MCP server stopping (signal %d)\n", sig);
    atomic_store(&srv.stopping, true);
    pthread_mutex_lock(&H.mu);
    struct sess_entry *all = H.sessions;
    H.sessions = NULL;
    H.nsessions = 0;
    pthread_mutex_unlock(&H.mu);
    close_all(all);
    MHD_stop_daemon(dmn);
    mcp_server_drain(&srv);
    pthread_mutex_destroy(&H.mu);
    pthread_mutex_destroy(&H.conn_mu);
    free(H.local_addrs);
    mcp_server_fini(&srv);
    return 0;
}
