/* libFuzzer target for the MCP server's HTTP transport (src/mcp/http.c over
 * libmicrohttpd): the input is the raw bytes of one client connection
 * (request line, headers, body; maybe several pipelined requests), sent by
 * mcp_http_fuzz_one through a socket pair to the real HTTP layer of a server
 * that never runs tools, with the bearer token "tok". The answer must be
 * empty or start with an HTTP/1.x status line. Then, as far as the harness
 * can tell soundly:
 *
 * - every response it can frame is checked: an application/json body that
 *   is complete parses as JSON (an object with jsonrpc "2.0" and exactly one
 *   of result / error, or the /health answer); an SSE body's complete events
 *   carry JSON-RPC messages;
 * - without the bytes "tok" anywhere in the input, the only 2xx answer is
 *   the /health one (no session, no 202, no result without the token);
 * - the requests it parses strictly (a plain request line, CRLF header lines
 *   of printable bytes, one Host / Origin / Authorization / Content-Length
 *   each, no Transfer-Encoding before the last) are paired with the
 *   responses in order, skipping 1xx, and the refusals on headers alone are
 *   checked in the server's order: a Host that is not a loopback name
 *   (localhost, 127.<digits and dots>, [::1]) gets 421; /health answers GET
 *   and HEAD only; another path 404; a method other than POST/GET/DELETE on
 *   /mcp 405; a foreign Origin 403; a wrong or missing token 401; and a
 *   request to anything but /health without the right token never gets a
 *   2xx. libmicrohttpd's own refusals (no Content-Type, status >= 400) are
 *   accepted in place of each.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/mcp.h>

#include "fuzz_common.h"
#include "mcp/mcp_int.h"

#define TOKEN "tok"
#define MAX_CONN_BYTES ((size_t)128 << 10) /* stays inside the socket buffer */
#define MAX_REQS 16

/* ---- small text helpers ---- */

static bool ci_eq(const char *a, size_t an, const char *lit)
{
    size_t n = strlen(lit);
    return an == n && strncasecmp(a, lit, n) == 0;
}

static const char *find_crlf(const char *p, const char *end)
{
    for (; p + 1 < end; p++)
        if (p[0] == '\r' && p[1] == '\n')
            return p;
    return NULL;
}

static bool has_bytes(const uint8_t *d, size_t n, const char *lit)
{
    return memmem(d, n, lit, strlen(lit)) != NULL;
}

static bool has_bytes_ci(const uint8_t *d, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    for (size_t i = 0; i + m <= n; i++)
        if (strncasecmp((const char *)d + i, lit, m) == 0)
            return true;
    return false;
}

/* ---- requests, parsed strictly ---- */

enum tri { T_NO, T_YES, T_UNSURE };

struct hreq {
    char method[16];
    char path[256];
    enum tri host_foreign;   /* absent Host: NO */
    enum tri origin_foreign; /* absent Origin: NO */
    enum tri auth_ok;        /* absent Authorization: NO */
};

/* A name the server must accept (a loopback name). Others it must refuse,
 * as it has no --allowed-host and is bound to 127.0.0.1. */
static bool name_loopback(const char *s, size_t n)
{
    if (ci_eq(s, n, "localhost"))
        return true;
    /* a numeric loopback address only: "127.evil.example" is a DNS name */
    char a[64];
    if (n >= sizeof(a))
        return false;
    memcpy(a, s, n);
    a[n] = 0;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, a, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, a, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return false;
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-';
}

/* "name[:digits]" or "[v6][:digits]", then (path_ok) "/anything" for an
 * Origin. YES when the name is not a loopback one, UNSURE when the text
 * has any other shape. */
static enum tri classify_hostport(const char *v, size_t n, bool path_ok)
{
    size_t i = 0;
    const char *name;
    size_t nlen;
    if (n && v[0] == '[') {
        i = 1;
        while (i < n && ((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f') ||
                         (v[i] >= 'A' && v[i] <= 'F') || v[i] == ':' || v[i] == '.'))
            i++;
        if (i >= n || v[i] != ']' || i == 1)
            return T_UNSURE;
        name = v + 1;
        nlen = i - 1;
        i++;
        if (i < n && v[i] != ':')
            return T_UNSURE; /* the server wants ']' at the end or before ':' */
        if (i < n) {
            for (i++; i < n; i++)
                if (v[i] < '0' || v[i] > '9')
                    return T_UNSURE;
        }
        return name_loopback(name, nlen) ? T_NO : T_YES;
    }
    while (i < n && is_name_char(v[i]))
        i++;
    name = v;
    nlen = i;
    if (i < n && v[i] == ':') {
        for (i++; i < n && v[i] >= '0' && v[i] <= '9'; i++)
            ;
    }
    if (i < n && !(path_ok && v[i] == '/'))
        return T_UNSURE;
    if (nlen == 0)
        return T_YES; /* the server refuses an empty name */
    return name_loopback(name, nlen) ? T_NO : T_YES;
}

static enum tri classify_origin(const char *v, size_t n)
{
    const char *p = memmem(v, n, "://", 3);
    if (!p)
        return T_YES; /* "null" and the like: refused */
    return classify_hostport(p + 3, n - (size_t)(p + 3 - v), true);
}

static enum tri classify_auth(const char *v, size_t n)
{
    if (n < 7 || strncasecmp(v, "Bearer ", 7) != 0)
        return T_NO;
    return (n - 7 == strlen(TOKEN) && memcmp(v + 7, TOKEN, n - 7) == 0) ? T_YES : T_NO;
}

/* Parses the request at *off strictly. Returns false when it does not have
 * the plain shape (the harness then knows nothing about it or any later
 * one). On success *off is where the next request starts, or SIZE_MAX when
 * that is not known (chunked body, body cut short). */
static bool parse_req(const char *d, size_t n, size_t *off, struct hreq *q)
{
    const char *p = d + *off, *end = d + n;
    memset(q, 0, sizeof(*q));
    const char *eol = find_crlf(p, end);
    if (!eol)
        return false;
    /* METHOD SP /path SP HTTP/1.x */
    size_t m = 0;
    while (p + m < eol && p[m] >= 'A' && p[m] <= 'Z')
        m++;
    if (m == 0 || m >= sizeof(q->method) || p + m >= eol || p[m] != ' ')
        return false;
    memcpy(q->method, p, m);
    const char *t = p + m + 1, *te = t;
    while (te < eol && *te != ' ')
        te++;
    size_t tl = (size_t)(te - t);
    if (tl == 0 || tl >= sizeof(q->path) || t[0] != '/')
        return false;
    for (size_t i = 0; i < tl; i++)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
              (t[i] >= '0' && t[i] <= '9') || t[i] == '/' || t[i] == '_' || t[i] == '-'))
            return false; /* no '%', '?', '.', ... : the path the handler sees is exact */
    memcpy(q->path, t, tl);
    if (eol - te != 9 || memcmp(te, " HTTP/1.", 8) != 0 || (te[8] != '0' && te[8] != '1'))
        return false;
    p = eol + 2;
    int nhost = 0, norigin = 0, nauth = 0, ncl = 0;
    bool te_seen = false, cl_ok = false;
    unsigned long long cl = 0;
    for (;;) {
        eol = find_crlf(p, end);
        if (!eol)
            return false;
        if (eol == p)
            break;
        if (eol - p > 4000)
            return false;
        const char *c = p;
        while (c < eol && (is_name_char(*c) && *c != '.'))
            c++;
        if (c == p || c >= eol || *c != ':')
            return false;
        size_t nl = (size_t)(c - p);
        for (const char *x = c + 1; x < eol; x++)
            if (*x != '\t' && (*x < 0x20 || *x > 0x7e))
                return false;
        const char *v = c + 1;
        while (v < eol && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(eol - v);
        bool trailing_ws = vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t');
        if (ci_eq(p, nl, "Host")) {
            nhost++;
            q->host_foreign = trailing_ws ? T_UNSURE : classify_hostport(v, vl, false);
        } else if (ci_eq(p, nl, "Origin")) {
            norigin++;
            q->origin_foreign = trailing_ws ? T_UNSURE : classify_origin(v, vl);
        } else if (ci_eq(p, nl, "Authorization")) {
            nauth++;
            q->auth_ok = trailing_ws ? T_UNSURE : classify_auth(v, vl);
        } else if (ci_eq(p, nl, "Content-Length")) {
            ncl++;
            cl_ok = vl > 0 && vl < 12;
            cl = 0;
            for (size_t i = 0; i < vl && cl_ok; i++) {
                cl_ok = v[i] >= '0' && v[i] <= '9';
                cl = cl * 10 + (unsigned)(v[i] - '0');
            }
        } else if (ci_eq(p, nl, "Transfer-Encoding")) {
            te_seen = true;
        }
        p = eol + 2;
    }
    if (nhost > 1)
        q->host_foreign = T_UNSURE;
    if (norigin > 1)
        q->origin_foreign = T_UNSURE;
    if (nauth > 1)
        q->auth_ok = T_UNSURE;
    size_t body_at = (size_t)(p + 2 - d);
    if (te_seen || ncl > 1 || (ncl == 1 && !cl_ok))
        *off = SIZE_MAX;
    else if (ncl == 0)
        *off = body_at;
    else
        *off = cl <= n - body_at ? body_at + (size_t)cl : SIZE_MAX;
    return true;
}

/* ---- responses ---- */

struct hresp {
    int status;
    bool has_ct, json, sse;
    long long cl; /* -1: none */
    bool chunked;
    char *body; /* decoded (heap) or NULL */
    size_t body_len;
    bool complete; /* the whole body is there */
};

/* Decodes a chunked body at p; false when it is cut short or malformed
 * (the server's own output is well-formed, so only a cut shows). Sets *used
 * to the bytes consumed. */
static bool dechunk(const char *p, const char *end, struct mp_buf *out, size_t *used)
{
    const char *s = p;
    for (;;) {
        const char *eol = find_crlf(p, end);
        if (!eol)
            return false;
        unsigned long long sz = 0;
        const char *x = p;
        for (; x < eol && x - p < 12; x++) {
            int dv = (*x >= '0' && *x <= '9')   ? *x - '0'
                     : (*x >= 'a' && *x <= 'f') ? *x - 'a' + 10
                     : (*x >= 'A' && *x <= 'F') ? *x - 'A' + 10
                                                : -1;
            if (dv < 0)
                break;
            sz = sz * 16 + (unsigned)dv;
        }
        if (x == p || (x < eol && *x != ';'))
            return false;
        p = eol + 2;
        if (sz == 0) {
            for (;;) { /* trailers, then the empty line */
                eol = find_crlf(p, end);
                if (!eol)
                    return false;
                bool last = eol == p;
                p = eol + 2;
                if (last)
                    break;
            }
            *used = (size_t)(p - s);
            return true;
        }
        if ((size_t)(end - p) < sz + 2 || p[sz] != '\r' || p[sz + 1] != '\n')
            return false;
        mp_buf_append(out, p, (size_t)sz);
        p += sz + 2;
    }
}

/* Parses the response at *pos. first: the answer's first response, whose
 * status line is checked; a later one that does not start like a response
 * ends the parse (libmicrohttpd 0.9.75 repeats a header block on some of its
 * own refusals). no_body: the request was HEAD. body_known: false when the
 * framing cannot be trusted (a HEAD request may be among the unparsed
 * ones). Returns false to stop parsing; *pos moves past the response. */
static bool parse_resp(const char *a, size_t n, size_t *pos, bool first, bool no_body,
                       bool body_known, struct hresp *r)
{
    const char *p = a + *pos, *end = a + n;
    memset(r, 0, sizeof(*r));
    r->cl = -1;
    bool shaped = end - p >= 12 && memcmp(p, "HTTP/1.", 7) == 0 && (p[7] == '0' || p[7] == '1') &&
                  p[8] == ' ' && p[9] >= '1' && p[9] <= '5' && p[10] >= '0' && p[10] <= '9' &&
                  p[11] >= '0' && p[11] <= '9';
    if (first)
        CHECK(shaped);
    if (!shaped)
        return false;
    r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    const char *eol = find_crlf(p, end);
    if (!eol)
        return false;
    p = eol + 2;
    for (;;) {
        eol = find_crlf(p, end);
        if (!eol)
            return false; /* headers cut short */
        if (eol == p)
            break;
        const char *c = memchr(p, ':', (size_t)(eol - p));
        if (c) {
            const char *v = c + 1;
            while (v < eol && *v == ' ')
                v++;
            size_t nl = (size_t)(c - p), vl = (size_t)(eol - v);
            if (ci_eq(p, nl, "Content-Type")) {
                r->has_ct = true;
                r->json = vl >= 16 && strncasecmp(v, "application/json", 16) == 0;
                r->sse = vl >= 17 && strncasecmp(v, "text/event-stream", 17) == 0;
            } else if (ci_eq(p, nl, "Content-Length")) {
                r->cl = 0;
                for (const char *x = v; x < eol && *x >= '0' && *x <= '9' && r->cl < (1LL << 40);
                     x++)
                    r->cl = r->cl * 10 + (*x - '0');
            } else if (ci_eq(p, nl, "Transfer-Encoding")) {
                r->chunked = vl >= 7 && strncasecmp(v, "chunked", 7) == 0;
            }
        }
        p = eol + 2;
    }
    p += 2; /* the empty line */
    *pos = (size_t)(p - a);
    if (r->status < 200 || r->status == 204 || r->status == 304 || no_body) {
        r->complete = true;
        return true;
    }
    if (!body_known)
        return false;
    if (r->chunked) {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        size_t used = 0;
        r->complete = dechunk(p, end, &b, &used);
        r->body = fuzz_dup((const uint8_t *)(b.data ? b.data : ""), b.len);
        r->body_len = b.len;
        mp_buf_fini(&b);
        *pos += used;
        return r->complete;
    }
    if (r->cl >= 0) {
        size_t avail = (size_t)(end - p);
        size_t take = (size_t)r->cl < avail ? (size_t)r->cl : avail;
        r->body = fuzz_dup((const uint8_t *)p, take);
        r->body_len = take;
        r->complete = take == (size_t)r->cl;
        *pos += take;
        return r->complete;
    }
    /* until the connection closed: the events that ended are complete */
    r->body = fuzz_dup((const uint8_t *)p, (size_t)(end - p));
    r->body_len = (size_t)(end - p);
    r->complete = false;
    *pos = n;
    return false;
}

static bool mhd_own(const struct hresp *r)
{
    return !r->has_ct && r->status >= 400;
}

static void check_rpc(json_t *m)
{
    CHECK(json_is_object(m));
    json_t *v = json_object_get(m, "jsonrpc");
    CHECK(json_is_string(v) && strcmp(json_string_value(v), "2.0") == 0);
    json_t *res = json_object_get(m, "result"), *err = json_object_get(m, "error");
    if (json_object_get(m, "method")) { /* a notification (progress) */
        CHECK(!res && !err);
        return;
    }
    CHECK((res != NULL) != (err != NULL));
    if (err) {
        CHECK(json_is_integer(json_object_get(err, "code")));
        CHECK(json_is_string(json_object_get(err, "message")));
    }
}

static void check_json_body(const struct hresp *r)
{
    json_error_t e;
    json_t *j = json_loadb(r->body, r->body_len, 0, &e);
    CHECK(j != NULL);
    if (json_is_array(j)) {
        size_t i;
        json_t *x;
        CHECK(json_array_size(j) > 0);
        json_array_foreach(j, i, x) check_rpc(x);
    } else {
        json_t *st = json_object_get(j, "status");
        if (json_is_string(st) && json_object_size(j) == 1)
            CHECK(strcmp(json_string_value(st), "ok") == 0 && r->status == 200);
        else
            check_rpc(j);
    }
    json_decref(j);
}

static void check_sse_body(const struct hresp *r)
{
    const char *p = r->body, *end = r->body + r->body_len;
    for (;;) {
        const char *ev = memmem(p, (size_t)(end - p), "\n\n", 2);
        if (!ev)
            break; /* an event cut short */
        for (const char *l = p; l < ev;) {
            const char *nl = memchr(l, '\n', (size_t)(ev - l));
            const char *le = nl ? nl : ev;
            if (le - l >= 6 && memcmp(l, "data: ", 6) == 0) {
                json_error_t e;
                json_t *j = json_loadb(l + 6, (size_t)(le - l - 6), 0, &e);
                CHECK(j != NULL);
                if (json_is_array(j)) {
                    size_t i;
                    json_t *x;
                    json_array_foreach(j, i, x) check_rpc(x);
                } else {
                    check_rpc(j);
                }
                json_decref(j);
            } else {
                CHECK(le == l || l[0] == ':' ||
                      (le - l == 14 && memcmp(l, "event: message", 14) == 0));
            }
            l = le + 1;
        }
        p = ev + 2;
    }
}

/* The /health answer: GET's body or HEAD's length alone. */
static bool is_health(const struct hresp *r)
{
    if (r->status != 200 || !r->json || r->cl != 15)
        return false;
    return !r->body || !r->complete ||
           (r->body_len == 15 && memcmp(r->body, "{\"status\":\"ok\"}", 15) == 0);
}

static bool is_2xx(const struct hresp *r)
{
    return r->status >= 200 && r->status < 300;
}

static void check_paired(const struct hreq *q, const struct hresp *r)
{
    bool health = strcmp(q->path, "/health") == 0;
    bool mcp = strcmp(q->path, "/mcp") == 0 || strcmp(q->path, "/mcp/") == 0;
    /* the token: whatever else is wrong, never a 2xx without it */
    if (!health && q->auth_ok == T_NO)
        CHECK(!is_2xx(r));
    if (q->host_foreign == T_UNSURE)
        return;
    if (q->host_foreign == T_YES) {
        CHECK(r->status == 421 || mhd_own(r));
        return;
    }
    if (health) {
        bool read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
        CHECK(r->status == (read ? 200 : 405) || mhd_own(r));
        if (r->status == 200)
            CHECK(is_health(r));
        return;
    }
    if (!mcp) {
        CHECK(r->status == 404 || mhd_own(r));
        return;
    }
    if (strcmp(q->method, "POST") != 0 && strcmp(q->method, "GET") != 0 &&
        strcmp(q->method, "DELETE") != 0) {
        CHECK(r->status == 405 || mhd_own(r));
        return;
    }
    if (q->origin_foreign == T_UNSURE)
        return;
    if (q->origin_foreign == T_YES) {
        CHECK(r->status == 403 || mhd_own(r));
        return;
    }
    if (q->auth_ok == T_NO)
        CHECK(r->status == 401 || mhd_own(r));
}

static void check_answer(const uint8_t *data, size_t size, const struct mp_buf *out)
{
    const char *in = (const char *)data;
    struct hreq reqs[MAX_REQS];
    size_t nreq = 0, off = 0;
    while (nreq < MAX_REQS && off < size && parse_req(in, size, &off, &reqs[nreq])) {
        nreq++;
        if (off == SIZE_MAX)
            break;
    }
    bool token_absent = !has_bytes(data, size, TOKEN);
    bool head_possible = has_bytes_ci(data, size, "head");
    const char *a = out->data ? out->data : "";
    size_t n = out->len, pos = 0, ri = 0;
    bool first = true;
    while (pos < n) {
        const struct hreq *q = ri < nreq ? &reqs[ri] : NULL;
        bool no_body = q && strcmp(q->method, "HEAD") == 0;
        struct hresp r;
        bool more = parse_resp(a, n, &pos, first, no_body, q != NULL || !head_possible, &r);
        first = false;
        if (r.status == 0) {
            free(r.body);
            break;
        }
        if (r.body && r.complete && r.json)
            check_json_body(&r);
        if (r.body && r.sse)
            check_sse_body(&r);
        if (token_absent && is_2xx(&r))
            CHECK(is_health(&r));
        if (r.status >= 200) {
            if (q)
                check_paired(q, &r);
            ri++;
        }
        free(r.body);
        if (!more)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool started;
    if (!started) {
        struct mp_mcp_opts o;
        memset(&o, 0, sizeof(o));
        o.auth_token = TOKEN;
        o.header_timeout_s = 2;
        o.body_timeout_s = 2;
        o.idle_timeout_s = 2;
        o.max_message = (size_t)1 << 20;
        CHECK(mcp_http_fuzz_init(&o) == 0);
        started = true;
    }
    if (size > MAX_CONN_BYTES)
        return 0;
    struct mp_buf out;
    mp_buf_init(&out, 0);
    CHECK(mcp_http_fuzz_one((const char *)data, size, &out) == 0);
    if (getenv("FUZZ_MCP_HTTP_SHOW")) {
        fwrite(out.data ? out.data : "", 1, out.len, stderr);
        fputs("\n----\n", stderr);
    }
    check_answer(data, size, &out);
    mp_buf_fini(&out);
    return 0;
}
