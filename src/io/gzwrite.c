/* gzip compression of an in-memory buffer, for the sub-traces the trace
 * splitter writes. ISA-L's level-1 deflate when magpie is built with it
 * (several times zlib's speed at a similar ratio on trace JSON), zlib
 * otherwise. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include <magpie/io.h>

#ifdef MP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

static int gzip_zlib(const void *data, size_t len, int level, struct mp_buf *out, struct mp_diag *d)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return mp_diag_set(d, MP_ENOMEM, "gzip: cannot initialise deflate");
    int rc = 0;
    const unsigned char *p = data;
    size_t left = len;
    for (;;) {
        if (z.avail_in == 0 && left) {
            uInt take = left > (1u << 30) ? 1u << 30 : (uInt)left;
            z.next_in = p;
            z.avail_in = take;
            p += take;
            left -= take;
        }
        if (mp_buf_reserve(out, 1u << 20) != 0) {
            rc = mp_diag_set(d, MP_ENOMEM, "gzip: output too large");
            goto out;
        }
        size_t room = out->cap - out->len - 1;
        z.next_out = (unsigned char *)out->data + out->len;
        z.avail_out = (uInt)(room > (1u << 30) ? 1u << 30 : room);
        uInt before = z.avail_out;
        int zr = deflate(&z, left ? Z_NO_FLUSH : Z_FINISH);
        out->len += before - z.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = mp_diag_set(d, MP_EIO, "gzip: deflate failed (%d)", zr);
            goto out;
        }
    }
out:
    deflateEnd(&z);
    return rc;
}

int mp_io_gzip(const void *data, size_t len, int level, struct mp_buf *out, struct mp_diag *d)
{
    if (level <= 0)
        level = 1;
    if (level > 9)
        level = 9;
#ifdef MP_HAVE_ISAL
    if (level == 1) {
        struct isal_zstream z;
        isal_deflate_init(&z);
        z.gzip_flag = IGZIP_GZIP;
        z.level = 1;
        z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
        z.level_buf = malloc(z.level_buf_size);
        if (!z.level_buf)
            return mp_diag_set(d, MP_ENOMEM, "gzip: out of memory");
        z.next_in = (uint8_t *)(void *)data;
        z.avail_in = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
        size_t fed = z.avail_in;
        z.end_of_stream = fed == len;
        z.flush = NO_FLUSH;
        int rc = 0;
        for (;;) {
            if (mp_buf_reserve(out, 1u << 20) != 0) {
                rc = mp_diag_set(d, MP_ENOMEM, "gzip: output too large");
                break;
            }
            size_t room = out->cap - out->len - 1;
            z.next_out = (uint8_t *)out->data + out->len;
            z.avail_out = (uint32_t)(room > UINT32_MAX ? UINT32_MAX : room);
            uint32_t before = z.avail_out;
            if (isal_deflate(&z) != COMP_OK) {
                rc = mp_diag_set(d, MP_EIO, "gzip: deflate failed");
                break;
            }
            out->len += before - z.avail_out;
            if (z.avail_in == 0 && fed < len) {
                size_t more = len - fed > UINT32_MAX ? UINT32_MAX : len - fed;
                z.next_in = (uint8_t *)(void *)data + fed;
                z.avail_in = (uint32_t)more;
                fed += more;
                z.end_of_stream = fed == len;
            }
            if (z.internal_state.state == ZSTATE_END)
                break;
        }
        free(z.level_buf);
        return rc;
    }
#endif
    return gzip_zlib(data, len, level, out, d);
}
