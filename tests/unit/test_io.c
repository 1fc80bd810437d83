/* Unit tests for src/io: plain, gzip (single and concatenated members),
 * truncated and corrupt gzip, memory readers and tiny read sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include <magpie/io.h>

static size_t gz(const char *src, size_t n, unsigned char *out, size_t cap)
{
    z_stream z = {0};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (unsigned char *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t len = z.total_out;
    deflateEnd(&z);
    return len;
}

static int read_all(struct mp_io_reader *r, size_t step, char *out, size_t cap, size_t *len,
                    struct mp_diag *d)
{
    *len = 0;
    for (;;) {
        size_t got = 0;
        size_t want = step < cap - *len ? step : cap - *len;
        int rc = mp_io_read(r, out + *len, want, &got, d);
        if (rc)
            return rc;
        if (got == 0)
            return 0;
        *len += got;
    }
}

static char *make_text(size_t n)
{
    char *t = malloc(n);
    for (size_t i = 0; i < n; i++)
        t[i] = (char)('a' + (i * 7 + i / 13) % 26);
    return t;
}

static void test_plain_and_gzip_memory(void **state)
{
    (void)state;
    size_t n = 300000;
    char *text = make_text(n);
    unsigned char *z = malloc(n + 1024);
    size_t zn = gz(text, n, z, n + 1024);
    char *out = malloc(n + 16);
    static const size_t steps[] = {1, 3, 4096, 1 << 20};
    for (size_t s = 0; s < 4; s++) {
        struct mp_io_reader *r;
        struct mp_diag d;
        mp_diag_clear(&d);
        size_t len;
        assert_int_equal(mp_io_open_mem(text, n, "plain", &r, &d), 0);
        assert_false(mp_io_is_gzip(r));
        assert_int_equal(read_all(r, steps[s], out, n + 16, &len, &d), 0);
        assert_int_equal(len, n);
        assert_memory_equal(out, text, n);
        mp_io_close(r);
        assert_int_equal(mp_io_open_mem(z, zn, "gz", &r, &d), 0);
        assert_true(mp_io_is_gzip(r));
        assert_int_equal(read_all(r, steps[s], out, n + 16, &len, &d), 0);
        assert_int_equal(len, n);
        assert_memory_equal(out, text, n);
        mp_io_close(r);
    }
    free(text);
    free(z);
    free(out);
}

static void test_concatenated_members_and_truncation(void **state)
{
    (void)state;
    unsigned char z[4096];
    size_t a = gz("hello ", 6, z, sizeof(z));
    size_t b = gz("world", 5, z + a, sizeof(z) - a);
    struct mp_io_reader *r;
    struct mp_diag d;
    mp_diag_clear(&d);
    char out[64];
    size_t len;
    assert_int_equal(mp_io_open_mem(z, a + b, "two", &r, &d), 0);
    assert_int_equal(read_all(r, 64, out, sizeof(out), &len, &d), 0);
    assert_int_equal(len, 11);
    assert_memory_equal(out, "hello world", 11);
    mp_io_close(r);

    /* every truncation point of a gzip stream is an error, never a short read */
    size_t n = 20000;
    char *text = make_text(n);
    unsigned char *zz = malloc(n);
    size_t zn = gz(text, n, zz, n);
    char *buf = malloc(n + 16);
    for (size_t cut = 2; cut < zn; cut += (cut < 64 ? 1 : 97)) {
        mp_diag_clear(&d);
        assert_int_equal(mp_io_open_mem(zz, cut, "cut.gz", &r, &d), 0);
        int rc = read_all(r, 1000, buf, n + 16, &len, &d);
        assert_true(rc == MP_ETRUNC || rc == MP_EPARSE);
        assert_string_equal(d.file, "cut.gz");
        mp_io_close(r);
    }
    /* corrupt the deflate data */
    zz[zn / 2] ^= 0x55;
    zz[zn / 2 + 1] ^= 0xAA;
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open_mem(zz, zn, "bad.gz", &r, &d), 0);
    char *big = malloc(n * 64);
    int rc = read_all(r, 1000, big, n * 64, &len, &d);
    free(big);
    assert_true(rc == MP_EPARSE || rc == MP_ETRUNC);
    mp_io_close(r);
    free(text);
    free(zz);
    free(buf);
}

static void test_files(void **state)
{
    (void)state;
    struct mp_io_reader *r;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open("/nonexistent/x.json", &r, &d), MP_ENOTFOUND);
    assert_string_equal(d.file, "/nonexistent/x.json");
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open("/tmp", &r, &d), MP_EINVAL);
    char path[] = "/tmp/mp_io_XXXXXX";
    int fd = mkstemp(path);
    unsigned char z[256];
    size_t zn = gz("{\"traceEvents\": []}", 19, z, sizeof(z));
    assert_int_equal(write(fd, z, zn), (ssize_t)zn);
    close(fd);
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open(path, &r, &d), 0);
    char out[64];
    size_t len;
    assert_int_equal(read_all(r, 7, out, sizeof(out), &len, &d), 0);
    assert_int_equal(len, 19);
    assert_int_equal(mp_io_raw_size(r), zn);
    assert_int_equal(mp_io_raw_pos(r), zn);
    mp_io_close(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_gzip_memory),
        cmocka_unit_test(test_concatenated_members_and_truncation),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
