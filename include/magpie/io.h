/* magpie io: byte readers over plain files, gzip files and stdin.
 *
 * Compression is detected from the content (gzip magic 1f 8b), not from the
 * file name, so a misnamed file still reads. Gzip uses ISA-L when magpie was
 * built with it (about 2x zlib's speed) and zlib otherwise; concatenated gzip
 * members are read as one stream. A truncated or corrupt stream is an error
 * (MP_ETRUNC / MP_EPARSE), never a silent short read.
 */
#ifndef MAGPIE_IO_H
#define MAGPIE_IO_H

#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

struct mp_io_reader;

/* Opens path for reading; "-" means stdin. *out is owned by the caller and
 * released with mp_io_close. */
int mp_io_open(const char *path, struct mp_io_reader **out, struct mp_diag *d);

/* Opens an in-memory buffer (borrowed; must outlive the reader). */
int mp_io_open_mem(const void *data, size_t len, const char *name, struct mp_io_reader **out,
                   struct mp_diag *d);

/* Reads up to cap decompressed bytes into buf. *got = 0 means end of input.
 * Returns 0 or a negative MP_E* code with d filled. */
int mp_io_read(struct mp_io_reader *r, void *buf, size_t cap, size_t *got, struct mp_diag *d);

void mp_io_close(struct mp_io_reader *r);

/* Raw (on-disk) bytes consumed so far and the raw size (0 when unknown, e.g.
 * stdin); used for progress display. */
uint64_t mp_io_raw_pos(const struct mp_io_reader *r);
uint64_t mp_io_raw_size(const struct mp_io_reader *r);
bool mp_io_is_gzip(const struct mp_io_reader *r);
const char *mp_io_name(const struct mp_io_reader *r);

/* Appends the gzip (RFC 1952) compression of data[0..len) to out, at zlib
 * level 1-9 (ISA-L's fast deflate for level 1 when available). */
int mp_io_gzip(const void *data, size_t len, int level, struct mp_buf *out, struct mp_diag *d);

#endif
