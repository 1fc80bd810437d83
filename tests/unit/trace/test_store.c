/* The struct-of-arrays event store. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <magpie/base.h>
#include <magpie/io.h>
#include <magpie/trace.h>
#include <magpie/trace_capture.h>
#include <magpie/trace_tree.h>

#include "area.h"
#include "helpers.h"

static const char store_trace[] =
    "{\"deviceProperties\":[{\"id\":0,\"name\":\"H200\"}],\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1.5,\"dur\":2,"
    "\"args\":{\"External id\":3,\"correlation\":9}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":4,\"dur\":1},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\","
    "\"args\":{\"name\":\"x\"}},\n"
    "{\"ph\":\"f\",\"id\":77,\"pid\":1,\"tid\":1,\"ts\":5,\"cat\":\"ac2g\",\"name\":\"flow\"}\n"
    "]}\n";

static void check_store(const struct mp_trace_store *s, bool keep_args)
{
    assert_int_equal(s->n, 4);
    assert_int_equal(s->ph[0], 'X');
    assert_int_equal(s->ph[2], 'M');
    assert_int_equal(s->ph[3], 'f');
    assert_true(s->name[0] >= 0);
    assert_int_equal(s->name[0], s->name[1]); /* interned */
    assert_string_equal(mp_intern_str(s->strings, s->name[0]), "k");
    assert_string_equal(mp_intern_str(s->strings, s->name[2]), "process_name");
    assert_int_equal(s->cat[0], s->cat[1]);
    assert_string_equal(mp_intern_str(s->strings, s->cat[0]), "kernel");
    assert_int_equal(s->cat[2], -1);
    assert_string_equal(mp_intern_str(s->strings, s->pid[2]), "Spans");
    assert_string_equal(mp_intern_str(s->strings, s->tid[2]), "PyTorch Profiler");
    assert_string_equal(mp_intern_str(s->strings, s->tid[0]), "7");
    assert_int_equal(s->pid[0], s->pid[1]);
    assert_true(s->ts[0] == 1.5 && s->dur[0] == 2.0 && s->ts[1] == 4.0 && s->dur[1] == 1.0);
    assert_true(s->flags[0] & MP_EV_EXTID);
    assert_int_equal(s->external_id[0], 3);
    assert_true(s->flags[0] & MP_EV_CORR);
    assert_int_equal(s->correlation[0], 9);
    assert_false(s->flags[1] & (MP_EV_EXTID | MP_EV_ARGS));
    assert_true(s->flags[2] & MP_EV_PID_STR);
    assert_true(s->flags[3] & MP_EV_ID);
    assert_int_equal(s->id[3], 77);
    assert_false(s->flags[3] & MP_EV_DUR);
    assert_non_null(s->meta_device_properties);
    assert_string_equal(s->meta_device_properties, "[{\"id\":0,\"name\":\"H200\"}]");
    if (keep_args) {
        assert_non_null(s->args[0]);
        assert_string_equal(s->args[0], "{\"External id\":3,\"correlation\":9}");
        assert_int_equal(s->args_len[0], strlen(s->args[0]));
        assert_null(s->args[1]);
        assert_string_equal(s->args[2], "{\"name\":\"x\"}");
    } else {
        for (size_t i = 0; i < s->n; i++)
            assert_null(s->args[i]);
    }
    assert_true(mp_trace_store_bytes(s) > 0);
}

void test_store(void **state)
{
    (void)state;
    char *plain = write_tmp("store/t.json", store_trace, sizeof(store_trace) - 1);
    size_t zlen;
    unsigned char *z = gzip_mem(store_trace, sizeof(store_trace) - 1, &zlen);
    char *gz = write_tmp("store/t.json.gz", z, zlen);
    free(z);

    struct mp_trace_store *s = NULL;
    struct mp_diag d;
    struct mp_trace_store_opts o = {0};
    o.keep_args = true;
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_store_load(plain, &o, &s, &d), 0);
    check_store(s, true);
    assert_string_equal(s->path, plain);
    mp_trace_store_free(s);

    o.keep_args = false;
    s = NULL;
    assert_int_equal(mp_trace_store_load(gz, &o, &s, &d), 0);
    check_store(s, false);
    mp_trace_store_free(s);

    s = NULL;
    assert_int_equal(mp_trace_store_load(gz, NULL, &s, &d), 0);
    assert_int_equal(s->n, 4);
    mp_trace_store_free(s);
    mp_trace_store_free(NULL);

    /* a malformed file: error with position, no store */
    const char *badtext = "{\"traceEvents\":[{\"ph\":\"X\"},\n{\"ph\":}]}";
    char *bad = write_tmp("store/bad.json", badtext, strlen(badtext));
    s = (struct mp_trace_store *)1;
    mp_diag_clear(&d);
    assert_int_equal(mp_trace_store_load(bad, &o, &s, &d), MP_EPARSE);
    assert_null(s);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 7);
    free(plain);
    free(gz);
    free(bad);
}
