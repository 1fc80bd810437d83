/* libFuzzer target for the MCP server's JSON-RPC layer (src/mcp rpc.c) and
 * its tool-argument decoding (tooltab.c), on a session that never starts a
 * tool.
 *
 * The input is split at newlines into messages, as the stdio transport
 * frames them, and fed in order to one session (so an initialize can change
 * what later messages get, e.g. batches at 2025-03-26). Every reply must be
 * a JSON object (or, for a batch, an array of objects) with jsonrpc "2.0",
 * and exactly one of result / error; an error has an integer code and a
 * string message. Each message is also decoded, when it is an object, as
 * tools/call arguments of one tool (picked from the message's length and
 * first byte, so every tool gets inputs): decoding either fails with a
 * message or yields an object holding every parameter of the tool. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include <magpie/base.h>
#include <magpie/mcp.h>

#include "fuzz_common.h"
#include "mcp/mcp_int.h"

static void check_reply(json_t *r)
{
    CHECK(json_is_object(r));
    json_t *v = json_object_get(r, "jsonrpc");
    CHECK(json_is_string(v) && strcmp(json_string_value(v), "2.0") == 0);
    json_t *res = json_object_get(r, "result"), *err = json_object_get(r, "error");
    json_t *method = json_object_get(r, "method");
    if (method) { /* a notification (progress): never without a tool run */
        CHECK(0);
    }
    CHECK((res != NULL) != (err != NULL));
    CHECK(json_object_get(r, "id") != NULL);
    if (err) {
        CHECK(json_is_integer(json_object_get(err, "code")));
        CHECK(json_is_string(json_object_get(err, "message")));
    }
}

static void check_output(const struct mp_buf *out)
{
    /* SSE framing: "event: message\ndata: <json>\n\n" per reply */
    const char *p = out->data ? out->data : "";
    const char *end = p + out->len;
    while (p < end) {
        const char *d = strstr(p, "data: ");
        CHECK(d != NULL);
        d += 6;
        const char *nl = strchr(d, '\n');
        CHECK(nl != NULL);
        json_error_t e;
        json_t *r = json_loadb(d, (size_t)(nl - d), 0, &e);
        CHECK(r != NULL);
        if (json_is_array(r)) {
            CHECK(json_array_size(r) > 0);
            size_t i;
            json_t *x;
            json_array_foreach(r, i, x) check_reply(x);
        } else {
            check_reply(r);
        }
        json_decref(r);
        p = nl + 1;
        while (p < end && *p == '\n')
            p++;
    }
}

static void decode_all(const char *msg, size_t len)
{
    json_t *a = json_loadb(msg, len, 0, NULL);
    if (!json_is_object(a)) {
        json_decref(a);
        return;
    }
    size_t pick = (len + (unsigned char)msg[0]) % mcp_ntools;
    for (size_t i = pick; i == pick; i++) {
        char err[1400];
        err[0] = 0;
        json_t *d = mcp_args_decode(mcp_tools[i], a, err, sizeof(err));
        if (!d) {
            CHECK(err[0] != 0);
            continue;
        }
        for (const struct mcp_param *p = mcp_tools[i]->params; p && p->name; p++)
            CHECK(json_object_get(d, p->name) != NULL);
        json_decref(d);
    }
    json_decref(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20))
        return 0;
    struct mp_mcp_session *s = mp_mcp_session_new_dry();
    CHECK(s != NULL);
    const char *p = (const char *)data, *end = p + size;
    int n = 0;
    while (p < end && n < 64) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len) {
            struct mp_buf out;
            mp_buf_init(&out, 0);
            CHECK(mp_mcp_session_feed(s, p, len, &out) == 0);
            check_output(&out);
            mp_buf_fini(&out);
            decode_all(p, len);
        }
        n++;
        p += len + (nl ? 1 : 0);
    }
    mp_mcp_session_free(s);
    return 0;
}
