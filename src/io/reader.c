/* Byte readers: plain file, gzip (ISA-L fast path, zlib fallback), stdin,
 * memory. The raw input is read in 1 MiB pieces; the decompressor writes
 * straight into the caller's buffer so there is no extra copy. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <magpie/io.h>

#ifdef MP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define RAW_CHUNK ((size_t)1 << 20)

struct mp_io_reader {
    int fd; /* -1 for memory readers */
    bool own_fd;
    const unsigned char *mem; /* memory reader source */
    size_t mem_len;
    char name[512];
    uint64_t raw_pos;
    uint64_t raw_size;
    bool gzip;
    bool eof_raw;
    bool done;
    unsigned char *raw; /* raw input buffer (file readers) */
    size_t raw_len;     /* valid bytes in raw */
    size_t raw_off;     /* consumed bytes in raw */
#ifdef MP_HAVE_ISAL
    struct inflate_state *isal;
#else
    z_stream *z;
#endif
    bool member_started; /* inside a gzip member */
};

static int fail_io(struct mp_io_reader *r, struct mp_diag *d, int code, const char *what, int e)
{
    mp_diag_set_file(d, r->name);
    return mp_diag_set(d, code, "%s: %s", what, strerror(e));
}

/* Refills r->raw when it is exhausted. Returns 0; sets eof_raw at end. */
static int refill(struct mp_io_reader *r, struct mp_diag *d)
{
    if (r->raw_off < r->raw_len || r->eof_raw)
        return 0;
    if (r->fd < 0) {
        /* memory reader: the whole buffer is exposed at once */
        r->eof_raw = true;
        return 0;
    }
    for (;;) {
        ssize_t n = read(r->fd, r->raw, RAW_CHUNK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail_io(r, d, MP_EIO, "read failed", errno);
        }
        r->raw_len = (size_t)n;
        r->raw_off = 0;
        r->raw_pos += (uint64_t)n;
        if (n == 0)
            r->eof_raw = true;
        return 0;
    }
}

static int setup(struct mp_io_reader *r, struct mp_diag *d)
{
    int rc = refill(r, d);
    if (rc)
        return rc;
    /* Need two bytes to detect gzip; a file of one byte is just plain. */
    if (r->fd >= 0 && r->raw_len == 1 && !r->eof_raw) {
        ssize_t n = read(r->fd, r->raw + 1, RAW_CHUNK - 1);
        if (n > 0) {
            r->raw_len += (size_t)n;
            r->raw_pos += (uint64_t)n;
        }
    }
    r->gzip = r->raw_len - r->raw_off >= 2 && r->raw[r->raw_off] == 0x1f &&
              r->raw[r->raw_off + 1] == 0x8b;
    if (!r->gzip)
        return 0;
#ifdef MP_HAVE_ISAL
    r->isal = calloc(1, sizeof(*r->isal));
    if (!r->isal)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    isal_inflate_init(r->isal);
    r->isal->crc_flag = ISAL_GZIP;
#else
    r->z = calloc(1, sizeof(*r->z));
    if (!r->z)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    if (inflateInit2(r->z, 16 + MAX_WBITS) != Z_OK)
        return mp_diag_set(d, MP_ENOMEM, "cannot initialise zlib");
#endif
    r->member_started = true;
    return 0;
}

static struct mp_io_reader *reader_alloc(const char *name)
{
    struct mp_io_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->fd = -1;
    snprintf(r->name, sizeof(r->name), "%s", name ? name : "<input>");
    return r;
}

int mp_io_open(const char *path, struct mp_io_reader **out, struct mp_diag *d)
{
    *out = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    struct mp_io_reader *r = reader_alloc(is_stdin ? "<stdin>" : path);
    if (!r)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    int rc = 0;
    if (is_stdin) {
        r->fd = STDIN_FILENO;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0) {
            int e = errno;
            rc = fail_io(r, d, e == ENOENT ? MP_ENOTFOUND : MP_EIO, "cannot open", e);
            goto out;
        }
        r->own_fd = true;
        struct stat st;
        if (fstat(r->fd, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                mp_diag_set_file(d, path);
                rc = mp_diag_set(d, MP_EINVAL, "is a directory, expected a trace file");
                goto out;
            }
            if (S_ISREG(st.st_mode))
                r->raw_size = (uint64_t)st.st_size;
        }
#ifdef POSIX_FADV_SEQUENTIAL
        posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    }
    r->raw = malloc(RAW_CHUNK);
    if (!r->raw) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    rc = setup(r, d);
out:
    if (rc) {
        mp_io_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int mp_io_open_mem(const void *data, size_t len, const char *name, struct mp_io_reader **out,
                   struct mp_diag *d)
{
    *out = NULL;
    struct mp_io_reader *r = reader_alloc(name);
    if (!r)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    r->mem = data;
    r->mem_len = len;
    /* The memory reader exposes the buffer as one raw chunk (only read). */
    r->raw = (unsigned char *)data;
    r->raw_len = len;
    r->raw_off = 0;
    r->raw_pos = len;
    r->raw_size = len;
    r->eof_raw = true;
    int rc = setup(r, d);
    if (rc) {
        mp_io_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void mp_io_close(struct mp_io_reader *r)
{
    if (!r)
        return;
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    if (!r->mem)
        free(r->raw);
#ifdef MP_HAVE_ISAL
    free(r->isal);
#else
    if (r->z) {
        inflateEnd(r->z);
        free(r->z);
    }
#endif
    free(r);
}

static int read_plain(struct mp_io_reader *r, unsigned char *buf, size_t cap, size_t *got,
                      struct mp_diag *d)
{
    int rc = refill(r, d);
    if (rc)
        return rc;
    size_t avail = r->raw_len - r->raw_off;
    size_t n = avail < cap ? avail : cap;
    memcpy(buf, r->raw + r->raw_off, n);
    r->raw_off += n;
    *got = n;
    return 0;
}

/* Skips zero bytes between or after gzip members (some writers pad). Returns
 * true if more member data follows. */
static int next_member(struct mp_io_reader *r, bool *more, struct mp_diag *d)
{
    *more = false;
    for (;;) {
        int rc = refill(r, d);
        if (rc)
            return rc;
        if (r->raw_off >= r->raw_len)
            return 0; /* clean end of input */
        if (r->raw[r->raw_off] == 0) {
            r->raw_off++;
            continue;
        }
        *more = true;
        return 0;
    }
}

static int read_gzip(struct mp_io_reader *r, unsigned char *buf, size_t cap, size_t *got,
                     struct mp_diag *d)
{
    *got = 0;
    while (*got == 0 && !r->done) {
        if (!r->member_started) {
            bool more;
            int rc = next_member(r, &more, d);
            if (rc)
                return rc;
            if (!more) {
                r->done = true;
                break;
            }
#ifdef MP_HAVE_ISAL
            isal_inflate_reset(r->isal);
            r->isal->crc_flag = ISAL_GZIP;
#else
            inflateReset(r->z);
#endif
            r->member_started = true;
        }
        int rc = refill(r, d);
        if (rc)
            return rc;
        bool at_eof = r->raw_off >= r->raw_len && r->eof_raw;
#ifdef MP_HAVE_ISAL
        struct inflate_state *s = r->isal;
        s->next_in = r->raw + r->raw_off;
        s->avail_in = (uint32_t)(r->raw_len - r->raw_off);
        s->next_out = buf;
        s->avail_out = (uint32_t)(cap > UINT32_MAX ? UINT32_MAX : cap);
        uint32_t before = s->avail_in;
        int ret = isal_inflate(s);
        r->raw_off += before - s->avail_in;
        *got = (size_t)((unsigned char *)s->next_out - buf);
        if (ret < 0) {
            mp_diag_set_file(d, r->name);
            return mp_diag_set(d, MP_EPARSE, "corrupt gzip data (isa-l error %d)", ret);
        }
        if (s->block_state == ISAL_BLOCK_FINISH) {
            r->member_started = false;
            continue;
        }
        bool progress = *got > 0 || before != s->avail_in;
#else
        z_stream *z = r->z;
        z->next_in = r->raw + r->raw_off;
        z->avail_in = (uInt)(r->raw_len - r->raw_off);
        z->next_out = buf;
        z->avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
        uInt before = z->avail_in;
        int ret = inflate(z, Z_NO_FLUSH);
        r->raw_off += before - z->avail_in;
        *got = (size_t)(z->next_out - buf);
        if (ret == Z_STREAM_END) {
            r->member_started = false;
            continue;
        }
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            mp_diag_set_file(d, r->name);
            return mp_diag_set(d, MP_EPARSE, "corrupt gzip data (%s)",
                               z->msg ? z->msg : "zlib error");
        }
        bool progress = *got > 0 || before != z->avail_in;
#endif
        if (!progress && at_eof) {
            mp_diag_set_file(d, r->name);
            return mp_diag_set(d, MP_ETRUNC,
                               "gzip stream ends early (file truncated after %llu bytes)",
                               (unsigned long long)r->raw_pos);
        }
    }
    return 0;
}

int mp_io_read(struct mp_io_reader *r, void *buf, size_t cap, size_t *got, struct mp_diag *d)
{
    *got = 0;
    if (cap == 0)
        return 0;
    if (!r->gzip)
        return read_plain(r, buf, cap, got, d);
    return read_gzip(r, buf, cap, got, d);
}

uint64_t mp_io_raw_pos(const struct mp_io_reader *r)
{
    return r->raw_pos - (r->raw_len - r->raw_off);
}

uint64_t mp_io_raw_size(const struct mp_io_reader *r)
{
    return r->raw_size;
}

bool mp_io_is_gzip(const struct mp_io_reader *r)
{
    return r->gzip;
}

const char *mp_io_name(const struct mp_io_reader *r)
{
    return r->name;
}
