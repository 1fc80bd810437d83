/* libFuzzer target for the Python-repr conversion of trace args
 * (src/tracelens/pyrepr.c), which prints the shape columns of the
 * TraceLens-compatible sheets from the args objects of a trace.
 *
 * The input is what a trace holds: it is wrapped as the args of one event,
 * {"traceEvents":[{"ph":"X","name":"op","args":INPUT}]}, and read with the
 * trace parser, so the converters see exactly the bytes (validated by the
 * parser) that they see in a report run. For an accepted event, the args go
 * through tl_args_key, tl_args_pyrepr of each shape field and of a further
 * key, and the whole-value converters: each call must return 0, and
 * tl_args_pyrepr must report a key present exactly when the raw-args lookup
 * (mp_trace_json_find) finds it. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>

#include "fuzz_common.h"
#include "tracelens/tracelens_int.h"

static volatile unsigned g_touch;

static void convert(const char *args, size_t n)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    CHECK(tl_args_key(&b, args, n) == 0);
    g_touch += fuzz_touch(b.data, b.len);
    static const char *const keys[] = {"Input Dims", "Input type", "Input Strides",
                                       "Concrete Inputs", "no such key"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        bool present = true;
        mp_buf_reset(&b);
        CHECK(tl_args_pyrepr(&b, args, n, keys[k], &present) == 0);
        /* present exactly when the raw-args lookup finds the key */
        struct mp_strview obj = {args, n}, v;
        CHECK(present == (mp_trace_json_find(obj, keys[k], &v) == 0));
        if (!present)
            CHECK(b.len == 0);
        g_touch += fuzz_touch(b.data, b.len);
    }
    mp_buf_reset(&b);
    CHECK(tl_json_to_pyrepr(&b, args, args + n) == 0);
    mp_buf_reset(&b);
    CHECK(tl_json_to_pylist_repr(&b, args, args + n) == 0);
    g_touch += fuzz_touch(b.data, b.len);
    mp_buf_fini(&b);
}

static int on_event(const struct mp_trace_event *ev, void *user)
{
    (void)user;
    if (ev->flags & MP_EV_ARGS) {
        /* an exact-size copy: a read past the args is an ASan report */
        char *a = fuzz_dup((const uint8_t *)ev->args.p, ev->args.n);
        convert(a, ev->args.n);
        free(a);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char pre[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"op\",\"args\":";
    static const char post[] = "}]}";
    struct mp_buf doc;
    mp_buf_init(&doc, 0);
    CHECK(mp_buf_append(&doc, pre, sizeof(pre) - 1) == 0);
    CHECK(mp_buf_append(&doc, data, size) == 0);
    CHECK(mp_buf_append(&doc, post, sizeof(post) - 1) == 0);

    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_io_reader *r = NULL;
    CHECK(mp_io_open_mem(doc.data, doc.len, "fuzz", &r, &d) == 0);
    struct mp_trace_parse_opts o = {0};
    o.on_event = on_event;
    o.chunk_bytes = (size_t)1 << 13; /* any fuzz input in one read */
    o.max_event_bytes = 1 << 20;
    struct mp_trace_parse_stats st;
    (void)mp_trace_parse(r, &o, &st, &d);
    mp_io_close(r);
    mp_buf_fini(&doc);
    return 0;
}
