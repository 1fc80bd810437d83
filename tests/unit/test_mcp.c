/* Unit tests for src/mcp, by calling the library directly: the JSON-RPC
 * framing of a session (parse errors, invalid requests, notifications,
 * unknown methods, ids echoed, the SSE framing of replies), the handshake
 * and its versions, batches and their bound, the stdio transport's bound on
 * a message's size, and the tool table (tools/list from the table, argument
 * checks: unknown tool, missing, unknown and mistyped arguments, enums,
 * list sizes, defaults). The transports and real tool calls are tested end
 * to end in tests/integration/test_mcp.sh. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include <magpie/mcp.h>

#include "mcp/mcp_int.h"

/* Feeds one message to s; returns its one reply parsed (NULL when there is
 * none). The reply must come as one SSE event: "event: message\ndata:
 * JSON\n\n". */
static json_t *feed(struct mp_mcp_session *s, const char *msg)
{
    struct mp_buf out;
    mp_buf_init(&out, 0);
    assert_int_equal(mp_mcp_session_feed(s, msg, strlen(msg), &out), 0);
    json_t *r = NULL;
    if (out.len) {
        static const char head[] = "event: message\ndata: ";
        assert_true(out.len > sizeof(head) + 2);
        assert_memory_equal(out.data, head, sizeof(head) - 1);
        assert_memory_equal(out.data + out.len - 2, "\n\n", 2);
        /* one event */
        assert_null(strstr(out.data + sizeof(head) - 1, "\n\nevent:"));
        json_error_t e;
        r = json_loadb(out.data + sizeof(head) - 1, out.len - (sizeof(head) - 1) - 2, 0, &e);
        if (!r)
            fail_msg("reply is not JSON (%s): %s", e.text, mp_buf_cstr(&out));
    }
    mp_buf_fini(&out);
    return r;
}

/* The reply's error code (0 when it has a result); its message in *msg. */
static int error_of(json_t *r, const char **msg)
{
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "jsonrpc")), "2.0");
    json_t *e = json_object_get(r, "error");
    if (!e) {
        assert_non_null(json_object_get(r, "result"));
        return 0;
    }
    if (msg)
        *msg = json_string_value(json_object_get(e, "message"));
    return (int)json_integer_value(json_object_get(e, "code"));
}

/* feeds msg and checks the error code and that the message holds needle */
static void expect_error(struct mp_mcp_session *s, const char *msg, int code, const char *needle)
{
    json_t *r = feed(s, msg);
    const char *m = "";
    int got = error_of(r, &m);
    if (got != code || !m || !strstr(m, needle))
        fail_msg("%s: got %d '%s', want %d '%s'", msg, got, m ? m : "", code, needle);
    json_decref(r);
}

static void test_framing(void **state)
{
    (void)state;
    struct mp_mcp_session *s = mp_mcp_session_new_dry();
    assert_non_null(s);
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\"", -32700, "Parse error");
    expect_error(s, "{\"a\": 1, \"a\": 2}", -32700, "Parse error"); /* duplicate keys */
    expect_error(s, "42", -32700, "Parse error"); /* a bare value is not a message */
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": {}, \"method\": \"ping\"}", -32600,
                 "id must be a string or an integer");
    expect_error(s, "{\"jsonrpc\": \"1.0\", \"id\": 1, \"method\": \"ping\"}", -32600,
                 "jsonrpc must be \"2.0\"");
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1}", -32600, "no method");
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": 7}", -32600,
                 "method must be a string");
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"params\": [1]}",
                 -32602, "params must be an object");
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"resources/list\"}", -32601,
                 "Method not found: resources/list");

    /* ids come back as sent, string or integer */
    json_t *r = feed(s, "{\"jsonrpc\": \"2.0\", \"id\": \"abc\", \"method\": \"ping\"}");
    assert_int_equal(error_of(r, NULL), 0);
    assert_string_equal(json_string_value(json_object_get(r, "id")), "abc");
    assert_int_equal(json_object_size(json_object_get(r, "result")), 0);
    json_decref(r);
    r = feed(s, "{\"jsonrpc\": \"2.0\", \"id\": -9007199254740991, \"method\": \"ping\"}");
    assert_true(json_integer_value(json_object_get(r, "id")) == -9007199254740991LL);
    json_decref(r);
    /* an error without a request id carries id null */
    r = feed(s, "[");
    assert_true(json_is_null(json_object_get(r, "id")));
    json_decref(r);

    /* notifications and client responses get no reply, known or not */
    assert_null(feed(s, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}"));
    assert_null(feed(s, "{\"jsonrpc\": \"2.0\", \"method\": \"no/such\"}"));
    assert_null(feed(s, "{\"jsonrpc\": \"2.0\", \"method\": \"no/such\", \"params\": 3}"));
    assert_null(feed(s, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", "
                        "\"params\": {\"requestId\": 5}}"));
    assert_null(feed(s, "{\"jsonrpc\": \"2.0\", \"id\": 3, \"result\": {}}"));
    mp_mcp_session_free(s);
}

static void test_initialize(void **state)
{
    (void)state;
    struct mp_mcp_session *s = mp_mcp_session_new_dry();
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\": {}}",
                 -32602, "protocolVersion must be a string");
    /* a known version is kept, an unknown one answered with the latest */
    json_t *r = feed(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\": "
                        "{\"protocolVersion\": \"2025-06-18\"}}");
    assert_int_equal(error_of(r, NULL), 0);
    json_t *res = json_object_get(r, "result");
    assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), "2025-06-18");
    assert_true(json_is_string(json_object_get(json_object_get(res, "serverInfo"), "name")));
    assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
    json_decref(r);
    r = feed(s, "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"initialize\", \"params\": "
                "{\"protocolVersion\": \"1999-01-01\"}}");
    const char *v =
        json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion"));
    assert_non_null(v);
    assert_true(mcp_version_known(v));
    assert_string_not_equal(v, "1999-01-01");
    json_decref(r);
    /* the stateless envelope: an unknown modern version is refused */
    expect_error(s,
                 "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tools/list\", \"params\": "
                 "{\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2099-01-01\"}}}",
                 -32022, "Unsupported protocol version");
    assert_false(mcp_version_known("2099-01-01"));
    assert_true(mcp_version_known("2024-11-05"));
    mp_mcp_session_free(s);
}

static char *batch_of_pings(int n)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    mp_buf_putc(&b, '[');
    for (int i = 0; i < n; i++)
        mp_buf_printf(&b, "%s{\"jsonrpc\": \"2.0\", \"id\": %d, \"method\": \"ping\"}",
                      i ? ", " : "", i);
    mp_buf_putc(&b, ']');
    char *t = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return t;
}

/* Batches exist in revision 2025-03-26 only, hold at most max_batch (32)
 * messages, never an initialize, and are answered in order. */
static void test_batches(void **state)
{
    (void)state;
    struct mp_mcp_session *s = mp_mcp_session_new_dry();
    char *two = batch_of_pings(2);
    expect_error(s, two, -32600, "batches are only accepted after initialize");
    json_decref(feed(s, "{\"jsonrpc\": \"2.0\", \"id\": 0, \"method\": \"initialize\", "
                        "\"params\": {\"protocolVersion\": \"2025-03-26\"}}"));
    json_t *r = feed(s, two);
    assert_true(json_is_array(r));
    assert_int_equal(json_array_size(r), 2);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(r, i), "id")), i);
    json_decref(r);
    free(two);
    expect_error(s, "[]", -32600, "empty batch");
    char *max = batch_of_pings(MP_MCP_DEF_MAX_BATCH), *over = batch_of_pings(33);
    r = feed(s, max);
    assert_int_equal(json_array_size(r), MP_MCP_DEF_MAX_BATCH);
    json_decref(r);
    expect_error(s, over, -32600, "a batch of 33 messages (at most 32)");
    free(max);
    free(over);
    /* a notification in a batch has no reply; a bad element its own error */
    r = feed(s, "[{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}, 5, "
                "{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"initialize\", \"params\": "
                "{\"protocolVersion\": \"2025-03-26\"}}]");
    assert_int_equal(json_array_size(r), 2);
    assert_int_equal(error_of(json_array_get(r, 0), NULL), -32600);
    const char *m = NULL;
    assert_int_equal(error_of(json_array_get(r, 1), &m), -32600);
    assert_non_null(strstr(m, "initialize must not be batched"));
    json_decref(r);
    mp_mcp_session_free(s);
}

/* tools/list is the table: every tool once, in table order, each with an
 * object schema whose properties are its parameters and whose required
 * list its required ones. */
static void test_tools_list(void **state)
{
    (void)state;
    struct mp_mcp_session *s = mp_mcp_session_new_dry();
    json_t *r = feed(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}");
    json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
    assert_int_equal(json_array_size(tools), mcp_ntools);
    assert_true(mcp_ntools >= 10);
    for (size_t i = 0; i < mcp_ntools; i++) {
        const struct mcp_tool *t = mcp_tools[i];
        json_t *e = json_array_get(tools, i);
        assert_string_equal(json_string_value(json_object_get(e, "name")), t->name);
        assert_ptr_equal(mcp_tool_find(t->name), t);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(mcp_tools[j]->name, t->name);
        json_t *sc = json_object_get(e, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(sc, "type")), "object");
        json_t *props = json_object_get(sc, "properties"), *req = json_object_get(sc, "required");
        size_t np = 0, nreq = 0;
        for (const struct mcp_param *p = t->params; p && p->name; p++, np++) {
            assert_non_null(json_object_get(props, p->name));
            if (!p->required)
                continue;
            bool listed = false;
            for (size_t k = 0; k < json_array_size(req); k++)
                listed |= strcmp(json_string_value(json_array_get(req, k)), p->name) == 0;
            assert_true(listed);
            nreq++;
        }
        assert_int_equal(json_object_size(props), np);
        assert_int_equal(json_array_size(req), nreq);
    }
    json_decref(r);
    assert_null(mcp_tool_find("no_such_tool"));
    assert_null(mcp_tool_find(NULL));
    mp_mcp_session_free(s);
}

/* a tools/call of tool with the arguments text args (NULL: none) */
static json_t *call(struct mp_mcp_session *s, const char *tool, const char *args)
{
    char msg[2048];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", \"params\": "
             "{\"name\": \"%s\"%s%s}}",
             tool, args ? ", \"arguments\": " : "", args ? args : "");
    return feed(s, msg);
}

/* A call with bad arguments is answered at once with an isError result
 * whose text (and structuredContent) is {"error": msg}. */
static void expect_bad_args(struct mp_mcp_session *s, const char *tool, const char *args,
                            const char *needle)
{
    json_t *r = call(s, tool, args);
    assert_int_equal(error_of(r, NULL), 0);
    json_t *res = json_object_get(r, "result");
    assert_true(json_is_true(json_object_get(res, "isError")));
    const char *err =
        json_string_value(json_object_get(json_object_get(res, "structuredContent"), "error"));
    if (!err || !strstr(err, needle))
        fail_msg("%s %s: got '%s', want '%s'", tool, args ? args : "", err ? err : "(none)",
                 needle);
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    json_t *tj = text ? json_loads(text, 0, NULL) : NULL;
    assert_string_equal(json_string_value(json_object_get(tj, "error")), err);
    json_decref(tj);
    json_decref(r);
}

static void test_tools_call_checks(void **state)
{
    (void)state;
    struct mp_mcp_session *s = mp_mcp_session_new_dry();
    expect_error(s,
                 "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": "
                 "{\"name\": \"no_such_tool\"}}",
                 -32602, "Unknown tool: no_such_tool");
    expect_error(s,
                 "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": "
                 "{\"name\": 3}}",
                 -32602, "params.name must be a string");
    expect_error(s, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\"}", -32602,
                 "params.name must be a string");
    expect_bad_args(s, "analyze", NULL, "missing required argument 'kernel_path'");
    expect_bad_args(s, "analyze", "[1]", "arguments must be an object, not an array");
    expect_bad_args(s, "analyze", "{\"kernel_path\": \"k.cu\", \"kernal_path\": 1}",
                    "unknown argument 'kernal_path' for analyze (parameters: kernel_path,");
    expect_bad_args(s, "analyze", "{\"kernel_path\": 5}",
                    "argument 'kernel_path' must be a string, not an integer");
    expect_bad_args(s, "benchmark", "{\"framework\": \"tgi\"}",
                    "argument 'framework' must be one of vllm|sglang|atom|trtllm|lmdeploy, not "
                    "'tgi'");
    expect_bad_args(s, "compare", "{\"kernel_paths\": [\"a.cu\"]}",
                    "argument 'kernel_paths' must have at least 2 items, not 1");
    expect_bad_args(s, "compare", "{\"kernel_paths\": [\"a.cu\", 2]}",
                    "argument 'kernel_paths': item 1 must be a string, not an integer");
    expect_bad_args(s, "configure_gpu", "{\"gpu_clock_mhz\": [1, 2, 3]}",
                    "argument 'gpu_clock_mhz' must have exactly 2 items, not 3");
    expect_bad_args(s, "configure_gpu", "{\"reset\": \"yes\"}",
                    "argument 'reset' must be a boolean, not a string");
    /* a call that passes the checks is not run by a dry session */
    expect_error(s,
                 "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": "
                 "{\"name\": \"configure_gpu\", \"arguments\": {\"dry_run\": true}}}",
                 -32603, "tools are not run in this session");
    mp_mcp_session_free(s);
}

/* The list bound above the maximum: a sweep of more loads than it holds. */
static void test_args_bounds(void **state)
{
    (void)state;
    const struct mcp_tool *t = mcp_tool_find("benchmark_sweep");
    assert_non_null(t);
    const struct mcp_param *p = t->params;
    while (p->name && strcmp(p->name, "max_concurrency") != 0)
        p++;
    assert_non_null(p->name);
    assert_true(p->max_items > 0);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    mp_buf_puts(&b, "{\"base_url\": \"http://127.0.0.1:1\", \"max_concurrency\": [");
    for (int i = 0; i < p->max_items + 1; i++)
        mp_buf_printf(&b, "%s%d", i ? ", " : "", i + 1);
    mp_buf_puts(&b, "]}");
    json_t *args = json_loads(mp_buf_cstr(&b), 0, NULL);
    assert_non_null(args);
    char err[1400] = "";
    assert_null(mcp_args_decode(t, args, err, sizeof(err)));
    char want[120];
    snprintf(want, sizeof(want), "argument 'max_concurrency' must have at most %d items, not %d",
             p->max_items, p->max_items + 1);
    assert_string_equal(err, want);
    /* exactly max_items pass */
    json_array_remove(json_object_get(args, "max_concurrency"), 0);
    json_t *ok = mcp_args_decode(t, args, err, sizeof(err));
    assert_non_null(ok);
    assert_int_equal(json_array_size(json_object_get(ok, "max_concurrency")), p->max_items);
    json_decref(ok);
    json_decref(args);
    mp_buf_fini(&b);
}

/* Decoded arguments hold every parameter: defaults filled in, absent ones
 * without a default null, integers given as 3.0 made integers. */
static void test_args_defaults(void **state)
{
    (void)state;
    const struct mcp_tool *t = mcp_tool_find("configure_gpu");
    char err[1400] = "";
    json_t *in = json_loads("{\"power_limit_watts\": 300, \"device_ids\": null}", 0, NULL);
    json_t *out = mcp_args_decode(t, in, err, sizeof(err));
    assert_non_null(out);
    size_t np = 0;
    for (const struct mcp_param *p = t->params; p->name; p++, np++)
        assert_non_null(json_object_get(out, p->name));
    assert_int_equal(json_object_size(out), np);
    assert_true(json_is_false(json_object_get(out, "reset")));
    assert_true(json_is_null(json_object_get(out, "device_ids")));
    assert_true(json_is_real(json_object_get(out, "power_limit_watts")));
    assert_true(json_real_value(json_object_get(out, "power_limit_watts")) == 300.0);
    json_decref(out);
    json_decref(in);
    /* no arguments at all: the same as {} */
    out = mcp_args_decode(t, NULL, err, sizeof(err));
    assert_non_null(out);
    assert_int_equal(json_object_size(out), np);
    json_decref(out);

    t = mcp_tool_find("benchmark_sweep");
    in = json_loads("{\"base_url\": \"u\", \"repeat\": 3.0}", 0, NULL);
    out = mcp_args_decode(t, in, err, sizeof(err));
    assert_non_null(out);
    assert_true(json_is_integer(json_object_get(out, "repeat")));
    assert_int_equal(json_integer_value(json_object_get(out, "repeat")), 3);
    json_decref(out);
    json_decref(in);
    in = json_loads("{\"base_url\": \"u\", \"repeat\": 3.5}", 0, NULL);
    assert_null(mcp_args_decode(t, in, err, sizeof(err)));
    assert_non_null(strstr(err, "argument 'repeat' must be an integer, not a number"));
    json_decref(in);
}

/* Runs the stdio transport with stdin from a file holding input and
 * returns what it wrote on stdout. */
static char *serve_stdio(const char *input, size_t max_message)
{
    char in_path[] = "/tmp/mp_mcp_in_XXXXXX", out_path[] = "/tmp/mp_mcp_out_XXXXXX";
    int in = mkstemp(in_path), out = mkstemp(out_path);
    assert_true(in >= 0 && out >= 0);
    assert_int_equal(write(in, input, strlen(input)), (ssize_t)strlen(input));
    assert_int_equal(lseek(in, 0, SEEK_SET), 0);
    fflush(stdout);
    int save_in = dup(0), save_out = dup(1);
    assert_true(save_in >= 0 && save_out >= 0);
    assert_int_equal(dup2(in, 0), 0);
    assert_int_equal(dup2(out, 1), 1);
    struct mp_mcp_opts o = {0};
    o.max_message = max_message;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_mcp_serve_stdio(&o, &d);
    fflush(stdout);
    dup2(save_in, 0);
    dup2(save_out, 1);
    close(save_in);
    close(save_out);
    assert_int_equal(rc, 0);
    off_t n = lseek(out, 0, SEEK_END);
    assert_true(n >= 0);
    char *text = calloc((size_t)n + 1, 1);
    assert_non_null(text);
    assert_int_equal(pread(out, text, (size_t)n, 0), (ssize_t)n);
    close(in);
    close(out);
    unlink(in_path);
    unlink(out_path);
    return text;
}

/* A line longer than max_message is answered with an error and dropped
 * whole; the lines around it are served as usual, one reply a line. */
static void test_stdio_message_bound(void **state)
{
    (void)state;
    struct mp_buf in;
    mp_buf_init(&in, 0);
    mp_buf_puts(&in, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\n");
    mp_buf_puts(&in,
                "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"ping\", \"params\": {\"pad\": \"");
    for (int i = 0; i < 200000; i++) /* over a 64 KiB read, so it spans chunks */
        mp_buf_putc(&in, 'x');
    mp_buf_puts(&in, "\"}}\n");
    mp_buf_puts(&in, "\r\n{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"ping\"}\r\n");
    char *out = serve_stdio(mp_buf_cstr(&in), 4096);
    mp_buf_fini(&in);
    int ids[3] = {0}, codes[3] = {0}, n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        assert_true(n < 3);
        const char *m = NULL;
        codes[n] = error_of(r, &m);
        ids[n] = (int)json_integer_value(json_object_get(r, "id"));
        if (codes[n])
            assert_non_null(strstr(m, "message too large"));
        n++;
        json_decref(r);
    }
    free(out);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 1);
    assert_int_equal(codes[0], 0);
    assert_int_equal(ids[1], 0); /* id null: the message was never read */
    assert_int_equal(codes[1], -32600);
    assert_int_equal(ids[2], 3);
    assert_int_equal(codes[2], 0);
}

/* Zero bounds take their defaults; set ones are kept. */
static void test_opts_defaults(void **state)
{
    (void)state;
    struct mp_mcp_opts o = {0};
    o.max_batch = 4;
    mp_mcp_opts_defaults(&o);
    assert_int_equal(o.max_batch, 4);
    assert_int_equal(o.max_calls, MP_MCP_DEF_MAX_CALLS);
    assert_true(o.max_message == MP_MCP_DEF_MAX_MESSAGE);
    assert_true(o.max_buffered >= o.max_message);
    assert_true(mp_mcp_host_is_loopback("127.0.0.1"));
    assert_true(mp_mcp_host_is_loopback("::1"));
    assert_false(mp_mcp_host_is_loopback("0.0.0.0"));
    assert_false(mp_mcp_host_is_loopback("10.0.0.1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framing),           cmocka_unit_test(test_initialize),
        cmocka_unit_test(test_batches),           cmocka_unit_test(test_tools_list),
        cmocka_unit_test(test_tools_call_checks), cmocka_unit_test(test_args_bounds),
        cmocka_unit_test(test_args_defaults),     cmocka_unit_test(test_stdio_message_bound),
        cmocka_unit_test(test_opts_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
