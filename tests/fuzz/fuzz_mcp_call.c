/* libFuzzer target for tools/call on the MCP server: argument decoding in
 * rpc.c / tooltab.c and the call path of call.c (the argument file, the
 * progress pump, the result built from the worker's exit), with a stand-in
 * worker (mcp_server.fake_worker) that plays back bytes from the input.
 *
 * Input: byte 0 picks the tool (mcp_tools[b % mcp_ntools]), byte 1 the mode,
 * byte 2 the worker's exit (bit 7: killed by signal 1 + (b & 63) % 31, else
 * exit status b & 63; bit 6: timed out); the rest is split at "\n@@\n" into the
 * arguments object (or, in params mode, the whole params object), the
 * progress file's bytes, the worker's stdout and its stderr. Mode bits 0-2:
 * the protocol era (0: no initialize; 1-4: initialize with 2024-11-05,
 * 2025-03-26, 2025-06-18, 2025-11-25; 5: the 2026-07-28 envelope; 6-7: a
 * batch [call, ping, call] after initialize with 2025-03-26); bit 3: an
 * integer progress token (else a string), bit 4: none; bit 5: params mode;
 * bit 6: notifications/cancelled right after the call; bit 7: string ids.
 *
 * The stand-in worker reads the arguments file back and decodes it as the
 * real worker does: it must decode, to itself, and equal the harness's own
 * decoding of the request's arguments. The SSE output must hold JSON-RPC
 * 2.0 messages only: progress notifications for the call's token (as many
 * as the progress file has well-formed lines, values those lines give,
 * strictly increasing; from 2025-03-26 on the text after the numbers as the
 * message, cut to 1000 bytes, invalid UTF-8 replaced), then exactly one
 * final response with the call's id (at most one when cancelled), nothing
 * after it. A result has one text content that is JSON, a boolean isError,
 * structuredContent from 2025-06-18 on (the value, or {"result": value}),
 * and, after a worker ran, the worker's stdout when it exited 0 or 1 with
 * JSON there (isError = status 1), else an error naming how it ended. The
 * worker runs exactly when the request is a well-formed call of a known
 * tool with arguments that decode. A batch answers [call, ping, call] in
 * order in one event.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/mcp.h>
#include <magpie/proc.h>

#include "fuzz_common.h"
#include "mcp/mcp_int.h"

#define SEP "\n@@\n"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"

static struct mcp_server srv;
static bool show; /* FUZZ_MCP_CALL_SHOW: print each message sent and the output */

/* What the stand-in worker plays back (set before each call, read only by
 * the call threads). */
static struct {
    const char *prog, *out, *err;
    size_t prog_len, out_len, err_len;
    bool exited, timed_out;
    int code, sig;
    const char *tool; /* the tool the request names */
    json_t *expect;   /* the harness's decoding of its arguments */
    atomic_int calls; /* times the worker ran */
} F;

/* json_equal, but an integer equals a real of the same value: a number
 * parameter's default comes out of decoding as the integer its default text
 * is, a given number as a real. */
static bool same_value(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_object(a)) {
        const char *key;
        json_t *v;
        if (json_object_size(a) != json_object_size(b))
            return false;
        json_object_foreach(a, key, v)
        {
            json_t *w = json_object_get(b, key);
            if (!w || !same_value(v, w))
                return false;
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_value(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return json_equal(a, b);
}

static void fake_worker(const char *tool, const char *args_path, const char *progress_path,
                        struct mp_proc_result *res)
{
    atomic_fetch_add(&F.calls, 1);
    const struct mcp_tool *t = mcp_tool_find(tool);
    CHECK(t != NULL);
    CHECK(F.tool && strcmp(tool, F.tool) == 0);
    /* as mp_mcp_worker_main: load the file, decode it again */
    json_error_t je;
    json_t *raw = json_load_file(args_path, 0, &je);
    CHECK(raw != NULL);
    char err[1400];
    err[0] = 0;
    json_t *args = mcp_args_decode(t, raw, err, sizeof(err));
    CHECK(args != NULL);
    CHECK(same_value(args, raw));
    CHECK(F.expect != NULL && json_equal(raw, F.expect));
    json_decref(args);
    json_decref(raw);
    FILE *f = fopen(progress_path, "a");
    CHECK(f != NULL);
    if (F.prog_len)
        CHECK(fwrite(F.prog, 1, F.prog_len, f) == F.prog_len);
    fclose(f);
    mp_buf_append(&res->out, F.out_len ? F.out : "", F.out_len);
    mp_buf_append(&res->err, F.err_len ? F.err : "", F.err_len);
    res->exited = F.exited;
    res->exit_code = F.exited ? F.code : -1;
    res->signal = F.sig;
    res->timed_out = F.timed_out;
    res->out_bytes = F.out_len;
    res->err_bytes = F.err_len;
}

/* ---- the progress lines the server should pass on ---- */

struct prog_line {
    double done, total;
    char *msg; /* the message as the server cuts it (heap), NULL when empty */
};

/* As pump_progress reads them: complete lines with two numbers and a finite
 * done (a total that is not finite is left out); a done not above the last
 * becomes the next double above it. */
static size_t expected_progress(struct prog_line *pl, size_t max)
{
    size_t n = 0;
    double last = 0;
    const char *p = F.prog, *end = F.prog + F.prog_len;
    while (p < end && n < max) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        char *line = fuzz_cstr((const uint8_t *)p, (size_t)(nl - p));
        double done = 0, total = 0;
        int used = 0;
        if (sscanf(line, "%lf %lf %n", &done, &total, &used) >= 2 && isfinite(done) &&
            isfinite(done <= last ? nextafter(last, INFINITY) : done)) {
            if (done <= last)
                done = nextafter(last, INFINITY);
            last = done;
            pl[n].done = done;
            pl[n].total = isfinite(total) ? total : 0;
            char msg[1001];
            mcp_fmt(msg, sizeof(msg), "%s", line + used);
            pl[n].msg = msg[0] ? fuzz_cstr((const uint8_t *)msg, strlen(msg)) : NULL;
            n++;
        }
        free(line);
        p = nl + 1;
    }
    return n;
}

/* ---- checks on the output ---- */

struct call_expect {
    json_t *id;          /* the call's id */
    json_t *token;       /* progress token or NULL */
    const char *version; /* the call's protocol version */
    bool modern;
    bool will_run; /* the worker must run */
};

/* The value a worker's exit gives (call.c, worker_value). */
static json_t *worker_expect(bool *is_error)
{
    json_error_t je;
    json_t *out = F.out_len ? json_loadb(F.out, F.out_len, JSON_DECODE_ANY, &je) : NULL;
    if (F.exited && (F.code == 0 || F.code == 1) && out) {
        *is_error = F.code != 0;
        return out;
    }
    json_decref(out);
    *is_error = true;
    return NULL;
}

static void check_base(json_t *m)
{
    CHECK(json_is_object(m));
    json_t *v = json_object_get(m, "jsonrpc");
    CHECK(json_is_string(v) && strcmp(json_string_value(v), "2.0") == 0);
}

/* A final response to the call (or to something that was not one). */
static void check_final(json_t *r, const struct call_expect *ce, int ran)
{
    check_base(r);
    CHECK(json_object_get(r, "method") == NULL);
    json_t *res = json_object_get(r, "result"), *err = json_object_get(r, "error");
    CHECK((res != NULL) != (err != NULL));
    json_t *id = json_object_get(r, "id");
    if (err) {
        CHECK(json_is_integer(json_object_get(err, "code")));
        CHECK(json_is_string(json_object_get(err, "message")));
        CHECK(json_is_null(id) || json_equal(id, ce->id));
        CHECK(!ran && !ce->will_run);
        return;
    }
    CHECK(json_equal(id, ce->id));
    CHECK(json_is_object(res));
    json_t *content = json_object_get(res, "content");
    CHECK(json_is_array(content) && json_array_size(content) == 1);
    json_t *c0 = json_array_get(content, 0);
    CHECK(json_is_string(json_object_get(c0, "type")) &&
          strcmp(json_string_value(json_object_get(c0, "type")), "text") == 0);
    json_t *text = json_object_get(c0, "text");
    CHECK(json_is_string(text));
    json_error_t je;
    json_t *v = json_loadb(json_string_value(text), json_string_length(text), JSON_DECODE_ANY, &je);
    CHECK(v != NULL);
    json_t *ie = json_object_get(res, "isError");
    CHECK(json_is_boolean(ie));
    json_t *sc = json_object_get(res, "structuredContent");
    if (strcmp(ce->version, "2025-06-18") >= 0) {
        CHECK(sc != NULL);
        if (json_is_object(v)) {
            CHECK(json_equal(sc, v));
        } else {
            CHECK(json_is_object(sc) && json_object_size(sc) == 1 &&
                  json_equal(json_object_get(sc, "result"), v));
        }
    } else {
        CHECK(sc == NULL);
    }
    if (ce->modern) {
        json_t *rt = json_object_get(res, "resultType");
        CHECK(json_is_string(rt) && strcmp(json_string_value(rt), "complete") == 0);
    }
    if (ran) {
        bool is_error;
        json_t *want = worker_expect(&is_error);
        CHECK(json_is_true(ie) == is_error);
        if (want) {
            CHECK(json_equal(v, want));
        } else {
            json_t *e = json_object_get(v, "error");
            CHECK(json_is_object(v) && json_is_string(e) &&
                  strncmp(json_string_value(e), "the tool worker ", 16) == 0);
        }
        json_decref(want);
    } else {
        /* arguments refused before any worker */
        CHECK(!ce->will_run);
        CHECK(json_is_true(ie));
        CHECK(json_is_object(v) && json_is_string(json_object_get(v, "error")));
    }
    json_decref(v);
}

static void check_progress(json_t *m, const struct call_expect *ce, const struct prog_line *pl,
                           size_t npl, size_t k, double *last)
{
    json_t *meth = json_object_get(m, "method");
    CHECK(json_is_string(meth) && strcmp(json_string_value(meth), "notifications/progress") == 0);
    CHECK(json_object_get(m, "id") == NULL);
    CHECK(ce->token != NULL);
    json_t *p = json_object_get(m, "params");
    CHECK(json_is_object(p));
    CHECK(json_equal(json_object_get(p, "progressToken"), ce->token));
    CHECK(k < npl);
    /* the line's text after the numbers, cut to 1000 bytes on a character,
     * invalid UTF-8 replaced, from 2025-03-26 on */
    json_t *msg = json_object_get(p, "message");
    if (pl[k].msg && strcmp(ce->version, "2025-03-26") >= 0) {
        json_t *want = mcp_jstr(pl[k].msg);
        CHECK(msg != NULL && json_equal(msg, want));
        json_decref(want);
    } else {
        CHECK(msg == NULL);
    }
    json_t *v = json_object_get(p, "progress");
    CHECK(json_is_number(v));
    double d = json_number_value(v);
    CHECK(d == pl[k].done);
    CHECK(k == 0 || d > *last);
    *last = d;
    json_t *tot = json_object_get(p, "total");
    if (pl[k].total > 0 && isfinite(pl[k].total))
        CHECK(json_is_number(tot) && json_number_value(tot) == pl[k].total);
    else
        CHECK(tot == NULL);
}

/* Splits an SSE queue into its messages (*msgs: a heap array). */
static size_t sse_messages(const struct mp_buf *q, json_t ***msgs)
{
    const char *p = q->data ? q->data : "", *end = p + q->len;
    size_t n = 0, cap = 0;
    *msgs = NULL;
    while (p < end) {
        CHECK((size_t)(end - p) > 21 && memcmp(p, "event: message\ndata: ", 21) == 0);
        p += 21;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        CHECK(nl != NULL && nl + 1 < end && nl[1] == '\n');
        json_error_t je;
        json_t *m = json_loadb(p, (size_t)(nl - p), 0, &je);
        CHECK(m != NULL);
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            *msgs = realloc(*msgs, cap * sizeof(**msgs));
            CHECK(*msgs != NULL);
        }
        (*msgs)[n++] = m;
        p = nl + 2;
    }
    return n;
}

/* ---- the session ---- */

static struct mcp_sink *feed(struct mp_mcp_session *s, const char *text, size_t len)
{
    struct mcp_sink *k = mcp_sink_new(SINK_SSE);
    CHECK(k != NULL);
    mcp_handle_text(s, text, len, k);
    return k;
}

static void feed_quiet(struct mp_mcp_session *s, const char *text)
{
    struct mcp_sink *k = feed(s, text, strlen(text));
    CHECK(k->q.len == 0);
    mcp_sink_unref(k);
}

static void initialize(struct mp_mcp_session *s, const char *version)
{
    char msg[200];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
             "\"protocolVersion\":\"%s\",\"capabilities\":{}}}",
             version);
    struct mcp_sink *k = feed(s, msg, strlen(msg));
    json_t **m;
    CHECK(sse_messages(&k->q, &m) == 1);
    json_t *pv = json_object_get(json_object_get(m[0], "result"), "protocolVersion");
    CHECK(json_is_string(pv) && strcmp(json_string_value(pv), version) == 0);
    json_decref(m[0]);
    free(m);
    mcp_sink_unref(k);
    feed_quiet(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void append_call(struct mp_buf *b, const char *id, const char *tool, const char *part0,
                        size_t len0, uint8_t mode, bool modern)
{
    mp_buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":", id);
    if (mode & 0x20) {
        mp_buf_append(b, part0, len0);
    } else {
        mp_buf_printf(b, "{\"name\":\"%s\"", tool);
        if (len0) {
            mp_buf_puts(b, ",\"arguments\":");
            mp_buf_append(b, part0, len0);
        }
        mp_buf_puts(b, ",\"_meta\":{");
        bool comma = false;
        if (!(mode & 0x10)) {
            mp_buf_puts(b, (mode & 0x08) ? "\"progressToken\":42" : "\"progressToken\":\"pt\"");
            comma = true;
        }
        if (modern)
            mp_buf_printf(b, "%s\"" META_VERSION "\":\"2026-07-28\"", comma ? "," : "");
        mp_buf_puts(b, "}}");
    }
    mp_buf_puts(b, "}");
}

/* What the server must make of the call message (text as sent alone). */
static json_t *expect_call(const char *text, size_t len, struct call_expect *ce,
                           const char *session_version)
{
    json_error_t je;
    json_t *m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    ce->version = session_version;
    if (!json_is_object(m))
        return m;
    json_t *id = json_object_get(m, "id"), *jv = json_object_get(m, "jsonrpc");
    json_t *meth = json_object_get(m, "method"), *params = json_object_get(m, "params");
    ce->id = id;
    json_t *meta = json_object_get(params, "_meta");
    json_t *tok = json_object_get(meta, "progressToken");
    ce->token = (json_is_string(tok) || json_is_integer(tok)) ? tok : NULL;
    json_t *mv = json_object_get(meta, META_VERSION);
    if (json_is_string(mv)) {
        ce->modern = true;
        ce->version = json_string_value(mv);
    }
    bool ok = (json_is_string(id) || json_is_integer(id)) && json_is_string(jv) &&
              strcmp(json_string_value(jv), "2.0") == 0 && json_is_string(meth) &&
              strcmp(json_string_value(meth), "tools/call") == 0 && json_is_object(params) &&
              (!ce->modern || strcmp(ce->version, "2026-07-28") == 0);
    json_t *name = json_object_get(params, "name");
    const struct mcp_tool *t = json_is_string(name) ? mcp_tool_find(json_string_value(name)) : NULL;
    if (ok && t) {
        char err[1400];
        err[0] = 0;
        F.expect = mcp_args_decode(t, json_object_get(params, "arguments"), err, sizeof(err));
        if (!F.expect)
            CHECK(err[0] != 0);
        F.tool = t->name;
        ce->will_run = F.expect != NULL;
    }
    return m;
}

static void check_single(const struct mp_buf *q, const struct call_expect *ce, bool cancelled)
{
    json_t **msgs;
    size_t n = sse_messages(q, &msgs);
    int ran = atomic_load(&F.calls);
    CHECK(ran == (ce->will_run && !cancelled ? 1 : ran));
    CHECK(ran <= (ce->will_run ? 1 : 0));
    size_t lines = 1;
    for (size_t i = 0; i < F.prog_len; i++)
        lines += F.prog[i] == '\n';
    struct prog_line *pl = calloc(lines, sizeof(*pl));
    CHECK(pl != NULL);
    size_t npl = ran && ce->token ? expected_progress(pl, lines) : 0;
    size_t k = 0;
    double last = 0;
    bool final = false;
    for (size_t i = 0; i < n; i++) {
        check_base(msgs[i]);
        CHECK(!final); /* nothing after the response */
        if (json_object_get(msgs[i], "method")) {
            check_progress(msgs[i], ce, pl, npl, k++, &last);
        } else {
            check_final(msgs[i], ce, ran);
            final = true;
        }
    }
    if (!cancelled) {
        CHECK(final);
        CHECK(k == npl);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(msgs[i]);
    free(msgs);
    for (size_t i = 0; i < npl; i++)
        free(pl[i].msg);
    free(pl);
}

/* shape: 0 the batch text is not JSON, 1 it is [call, ping, call] with
 * the call as sent alone, 2 something else (parts that close the call's
 * object early splice other elements in). */
static void check_batch(const struct mp_buf *q, const struct call_expect *ce, json_t *id2,
                        int shape)
{
    json_t **msgs;
    CHECK(sse_messages(q, &msgs) == 1);
    json_t *r = msgs[0];
    free(msgs);
    int ran = atomic_load(&F.calls);
    if (shape == 0) {
        check_base(r);
        CHECK(json_is_object(json_object_get(r, "error")));
        CHECK(ran == 0);
    } else if (shape == 2) {
        if (json_is_array(r)) {
            size_t i;
            json_t *x;
            json_array_foreach(r, i, x) check_base(x);
        } else {
            check_base(r);
        }
    } else {
        CHECK(ran == (ce->will_run ? 2 : 0));
        CHECK(json_is_array(r) && json_array_size(r) == 3);
        struct call_expect ce2 = *ce;
        ce2.token = NULL; /* no progress inside a batch */
        check_final(json_array_get(r, 0), ce, ran ? 1 : 0);
        json_t *pong = json_array_get(r, 1);
        check_base(pong);
        CHECK(json_is_string(json_object_get(pong, "id")) &&
              strcmp(json_string_value(json_object_get(pong, "id")), "ping") == 0);
        CHECK(json_is_object(json_object_get(pong, "result")));
        ce2.id = id2;
        check_final(json_array_get(r, 2), &ce2, ran ? 1 : 0);
    }
    json_decref(r);
}

static void cleanup(void)
{
    if (srv.tmpdir[0])
        rmdir(srv.tmpdir);
    srv.tmpdir[0] = 0;
    mcp_server_fini(&srv);
}

static const char *const eras[] = {NULL,         "2024-11-05", "2025-03-26", "2025-06-18",
                                   "2025-11-25", NULL,         "2025-03-26", "2025-03-26"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool started;
    if (!started) {
        show = getenv("FUZZ_MCP_CALL_SHOW") != NULL;
        CHECK(mcp_server_init(&srv, NULL, true, NULL) == 0);
        const char *tmp = getenv("TMPDIR");
        snprintf(srv.tmpdir, sizeof(srv.tmpdir), "%s/mp-fuzz-call-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        CHECK(mkdtemp(srv.tmpdir) != NULL);
        srv.fake_worker = fake_worker;
        atexit(cleanup);
        started = true;
    }
    if (size < 3 || size > ((size_t)1 << 20))
        return 0;
    const struct mcp_tool *tool = mcp_tools[data[0] % mcp_ntools];
    uint8_t mode = data[1], st = data[2];
    unsigned era = mode & 7;
    bool batch = era >= 6, modern = era == 5, cancel = (mode & 0x40) && !batch;
    /* the parts */
    const char *part[4] = {"", "", "", ""};
    size_t plen[4] = {0, 0, 0, 0};
    const char *p = (const char *)data + 3, *end = (const char *)data + size;
    for (int i = 0; i < 4 && p <= end; i++) {
        const char *s = i < 3 ? memmem(p, (size_t)(end - p), SEP, 4) : NULL;
        part[i] = p;
        plen[i] = (size_t)((s ? s : end) - p);
        if (!s)
            break;
        p = s + 4;
    }
    memset(&F, 0, sizeof(F));
    F.prog = part[1];
    F.prog_len = plen[1];
    F.out = part[2];
    F.out_len = plen[2];
    F.err = part[3];
    F.err_len = plen[3];
    F.exited = !(st & 0x80);
    F.code = F.exited ? (st & 63) : -1;
    /* signals 1-31 only: glibc's strsignal writes the name of any other into
     * a buffer of the calling thread that it frees when the thread ends, and a
     * call thread can still be ending when the leak check runs */
    F.sig = F.exited ? 0 : 1 + (st & 63) % 31;
    F.timed_out = (st & 0x40) != 0;

    struct mp_mcp_session *s = mcp_session_new(&srv);
    CHECK(s != NULL);
    const char *version = eras[era] ? eras[era] : "2025-11-25";
    if (eras[era])
        initialize(s, eras[era]);
    bool sid = (mode & 0x80) != 0;
    struct mp_buf call, text;
    mp_buf_init(&call, 0);
    mp_buf_init(&text, 0);
    append_call(&call, sid ? "\"c1\"" : "1", tool->name, part[0], plen[0], mode, modern);
    struct call_expect ce;
    memset(&ce, 0, sizeof(ce));
    json_t *msg = expect_call(call.data, call.len, &ce, version);
    if (batch) {
        mp_buf_putc(&text, '[');
        mp_buf_append(&text, call.data, call.len);
        mp_buf_puts(&text, ",{\"jsonrpc\":\"2.0\",\"id\":\"ping\",\"method\":\"ping\"},");
        append_call(&text, sid ? "\"c2\"" : "2", tool->name, part[0], plen[0], mode, modern);
        mp_buf_putc(&text, ']');
    } else {
        mp_buf_append(&text, call.data, call.len);
    }
    struct mcp_sink *k = feed(s, text.data, text.len);
    if (cancel && ce.id) {
        char *ids = json_dumps(ce.id, JSON_ENCODE_ANY);
        CHECK(ids != NULL);
        struct mp_buf c;
        mp_buf_init(&c, 0);
        mp_buf_printf(&c,
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
                      "\"requestId\":%s,\"reason\":\"fuzz\"}}",
                      ids);
        feed_quiet(s, mp_buf_cstr(&c));
        mp_buf_fini(&c);
        free(ids);
    }
    mcp_server_drain(&srv);
    pthread_mutex_lock(&k->mu);
    CHECK(k->done);
    pthread_mutex_unlock(&k->mu);
    if (show) {
        fprintf(stderr, "%s\n--\n", mp_buf_cstr(&text));
        fwrite(k->q.data ? k->q.data : "", 1, k->q.len, stderr);
        fputs("----\n", stderr);
    }
    if (batch) {
        json_t *id2 = sid ? json_string("c2") : json_integer(2);
        json_t *bm = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, NULL);
        int shape = !bm ? 0
                    : json_is_array(bm) && json_array_size(bm) == 3 && json_is_object(msg) &&
                            json_equal(json_array_get(bm, 0), msg)
                        ? 1
                        : 2;
        json_decref(bm);
        check_batch(&k->q, &ce, id2, shape);
        json_decref(id2);
    } else {
        check_single(&k->q, &ce, cancel);
    }
    mcp_sink_unref(k);
    mcp_session_unref(s);
    json_decref(F.expect);
    json_decref(msg);
    mp_buf_fini(&call);
    mp_buf_fini(&text);
    return 0;
}
