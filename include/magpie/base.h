/* magpie base: error codes, diagnostics, logging, arena, growable buffers,
 * string interning, monotonic time and atomic file writes.
 *
 * Everything else in magpie builds on this header. Nothing here prints to
 * stdout or exits (MP_ASSERT aside: a broken invariant is a bug); logging
 * goes through a callback that the application sets.
 */
#ifndef MAGPIE_BASE_H
#define MAGPIE_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MP_VERSION "0.1.0"

/* ---- invariants ----
 * MP_ASSERT(cond) states something the code relies on and that no input can
 * break: when it fails, magpie has a bug, so it prints "file:line: function:
 * invariant 'cond' broken" to stderr and aborts, in every build (NDEBUG does
 * not remove it). Bad input is never asserted: it is an mp_diag error. */
#define MP_ASSERT(cond) ((cond) ? (void)0 : mp_assert_fail(#cond, __FILE__, __LINE__, __func__))
_Noreturn void mp_assert_fail(const char *cond, const char *file, int line, const char *func);

/* ---- error codes: fallible functions return 0 or one of these ---- */
enum {
    MP_OK = 0,
    MP_EINVAL = -1,    /* bad argument or bad input data */
    MP_ENOMEM = -2,    /* allocation failed or a hard size limit was hit */
    MP_EIO = -3,       /* read/write/open failed */
    MP_EPARSE = -4,    /* malformed input (JSON, YAML, CSV ...) */
    MP_ETRUNC = -5,    /* input ended early */
    MP_ENOTFOUND = -6, /* file, key or entity not found */
    MP_EUNSUP = -7,    /* not supported / not implemented */
    MP_ETIMEOUT = -8,  /* a time limit was reached */
    MP_ECHILD = -9,    /* a child process failed */
    MP_ECANCEL = -10,  /* stopped by the caller's callback */
};

/* Short lowercase name for an error code ("parse error"). Never NULL. */
const char *mp_strerror(int code);

/* ---- diagnostics: what a user needs to see to fix their input ---- */
struct mp_diag {
    int code;         /* MP_E* of the first error recorded, 0 when none */
    char file[512];   /* input file the error is about, "" when none */
    long long offset; /* byte offset in the (decompressed) input, -1 unknown */
    long line;        /* 1-based, 0 unknown */
    long col;         /* 1-based, 0 unknown */
    char field[128];  /* field or key concerned, "" when none */
    char msg[512];    /* what went wrong and what was expected */
};

void mp_diag_clear(struct mp_diag *d);
/* Records an error (first one wins). d may be NULL. Returns code. */
int mp_diag_set(struct mp_diag *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mp_diag_set_file(struct mp_diag *d, const char *file);
void mp_diag_set_pos(struct mp_diag *d, long long offset, long line, long col);
void mp_diag_set_field(struct mp_diag *d, const char *field);
/* Formats "file:line:col: offset N: field 'f': msg" into buf. */
void mp_diag_format(const struct mp_diag *d, char *buf, size_t len);

/* ---- logging (stderr only, through an application callback) ---- */
enum mp_log_level { MP_LOG_ERROR = 0, MP_LOG_WARN, MP_LOG_INFO, MP_LOG_DEBUG };

typedef void (*mp_log_fn)(enum mp_log_level lvl, const char *msg, void *user);
void mp_log_set(mp_log_fn fn, void *user, enum mp_log_level max_level);
void mp_log(enum mp_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A ready callback writing "magpie: warning: msg" lines to stderr. */
void mp_log_stderr(enum mp_log_level lvl, const char *msg, void *user);

/* ---- allocation helpers: abort-free, return NULL on failure ---- */
void *mp_malloc(size_t n);
void *mp_calloc(size_t n, size_t size);
void *mp_realloc(void *p, size_t n);
char *mp_strdup(const char *s);
char *mp_strndup(const char *s, size_t n);
/* True when needle occurs in s, ASCII letters compared without case. */
bool mp_str_contains_ci(const char *s, const char *needle);
/* True when s ends with suffix (byte for byte; "" ends every string). */
bool mp_str_ends_with(const char *s, const char *suffix);
/* Length (1..4) of the well-formed UTF-8 sequence at p, of at most avail
 * bytes, or 0 when it is not one (overlong forms, surrogates, code points
 * above U+10FFFF, a cut sequence). No byte after the first one that fails is
 * read, so a NUL-terminated string may pass SIZE_MAX as avail. */
size_t mp_utf8_len(const unsigned char *p, size_t avail);

/* ---- array growth with overflow checks ----
 * mp_size_mul stores a * b in *out and returns 0, or returns MP_ENOMEM (and
 * leaves *out alone) when the product does not fit in size_t.
 * mp_reallocarray is realloc of n elements with that check, for arrays
 * grown to an exact size.
 * mp_grow makes the array *pp (a pointer variable, passed by address) hold
 * at least need elements of elem bytes: nothing happens when need <= *cap;
 * otherwise the capacity starts at *cap (min_cap when *cap is 0) and doubles
 * until it reaches need, the block is realloc'd and *pp, *cap updated.
 * Returns 0, or MP_ENOMEM when a size overflows or realloc fails (then *pp
 * and *cap are untouched, the old block still valid).
 * MP_GROW(ptr, cap, need, min_cap) is the typed form: ptr an lvalue pointer,
 * cap a size_t lvalue, elem taken as sizeof(*(ptr)); need and cap are
 * evaluated twice (an inline test skips the call when there is room).
 * Usual use, appending:
 *     if (MP_GROW(v, cap, n + 1, 64)) return MP_ENOMEM;
 *     v[n++] = x; */
int mp_size_mul(size_t a, size_t b, size_t *out);
/* realloc(p, n * size), NULL (p untouched) when the product overflows or
 * realloc fails; n * size == 0 allocates 1 byte, like mp_realloc. */
void *mp_reallocarray(void *p, size_t n, size_t size);
int mp_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t min_cap);
#define MP_GROW(ptr, cap, need, min_cap)                                                           \
    ((size_t)(need) <= (cap) ? 0 : mp_grow(&(ptr), &(cap), (need), sizeof(*(ptr)), (min_cap)))
/* MP_GROW2(a, b, cap, need, min_cap) grows two parallel arrays that share
 * one capacity (a struct of arrays) to the same new cap. On MP_ENOMEM cap is
 * untouched and both blocks stay valid (a may already be the larger one). */
int mp_grow2(void *pa, size_t elem_a, void *pb, size_t elem_b, size_t *cap, size_t need,
             size_t min_cap);
#define MP_GROW2(a, b, cap, need, min_cap)                                                         \
    ((size_t)(need) <= (cap)                                                                       \
         ? 0                                                                                       \
         : mp_grow2(&(a), sizeof(*(a)), &(b), sizeof(*(b)), &(cap), (need), (min_cap)))

/* ---- arena: bump allocator freed in one call ---- */
struct mp_arena;
struct mp_arena *mp_arena_new(size_t block_size);
void mp_arena_free(struct mp_arena *a);
/* 8-byte aligned; NULL on failure. Memory lives until mp_arena_free. */
void *mp_arena_alloc(struct mp_arena *a, size_t n);
char *mp_arena_strndup(struct mp_arena *a, const char *s, size_t n);
size_t mp_arena_bytes(const struct mp_arena *a); /* bytes reserved from the system */

/* ---- growable byte buffer with a hard maximum ---- */
struct mp_buf {
    char *data; /* NUL-terminated when len > 0 or after mp_buf_cstr */
    size_t len;
    size_t cap;
    size_t max; /* hard maximum size; 0 = 1 GiB */
};

void mp_buf_init(struct mp_buf *b, size_t max);
void mp_buf_fini(struct mp_buf *b);
int mp_buf_reserve(struct mp_buf *b, size_t extra);
int mp_buf_append(struct mp_buf *b, const void *p, size_t n);
int mp_buf_puts(struct mp_buf *b, const char *s);
int mp_buf_putc(struct mp_buf *b, char c);
int mp_buf_printf(struct mp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *mp_buf_cstr(struct mp_buf *b); /* never NULL */
void mp_buf_reset(struct mp_buf *b);
/* Appends what is left of f (read to its end or to an error); 0, or
 * MP_ENOMEM when that passes the buffer's maximum (b then holds what fitted
 * in the whole chunks read before). */
int mp_buf_read_file(struct mp_buf *b, FILE *f);

/* ---- string interning: equal strings get the same id ---- */
struct mp_intern;
struct mp_intern *mp_intern_new(void);
void mp_intern_free(struct mp_intern *in);
/* Returns the id (>= 0) of s[0..n), adding it if new; negative MP_E* on failure. */
int32_t mp_intern_add(struct mp_intern *in, const char *s, size_t n);
/* Id of s[0..n) or -1 when absent. */
int32_t mp_intern_find(const struct mp_intern *in, const char *s, size_t n);
/* Borrowed, NUL-terminated, valid until mp_intern_free. */
const char *mp_intern_str(const struct mp_intern *in, int32_t id);
size_t mp_intern_len(const struct mp_intern *in, int32_t id);
int32_t mp_intern_count(const struct mp_intern *in);
size_t mp_intern_bytes(const struct mp_intern *in);

/* ---- int64 -> int64 hash map (open addressing) ---- */
struct mp_i64map {
    int64_t *keys;
    int64_t *vals;
    uint8_t *used;
    size_t cap; /* power of two, 0 when empty */
    size_t n;
};

void mp_i64map_init(struct mp_i64map *m);
void mp_i64map_fini(struct mp_i64map *m);
/* Inserts or overwrites. 0 or MP_ENOMEM. */
int mp_i64map_put(struct mp_i64map *m, int64_t key, int64_t val);
/* Pointer to the value of key, or NULL. Valid until the next put. */
int64_t *mp_i64map_get(const struct mp_i64map *m, int64_t key);

/* 64-bit FNV-1a-style mixing hash (not cryptographic). */
uint64_t mp_hash_bytes(const void *p, size_t n);

/* ---- sorting ---- */
enum mp_sort_key {
    MP_SORT_F64, /* a double, in numeric order (-0.0 below +0.0; NaN: the caller's to exclude) */
    MP_SORT_I64, /* an int64_t */
};

/* Stable sort of n 16-byte records, each starting with its 8-byte key, in
 * ascending key order. 0, or MP_ENOMEM with v unchanged. */
int mp_sort_rec16(void *v, size_t n, enum mp_sort_key kind);

/* ---- time ---- */
uint64_t mp_time_ns(void); /* CLOCK_MONOTONIC in nanoseconds */

/* ---- files ---- */
/* Writes data to path atomically: a temp file in the same directory, fsync,
 * rename. On failure the old file (if any) is untouched. */
int mp_fs_write_atomic(const char *path, const void *data, size_t len, struct mp_diag *d);
/* Staged atomic writes: files whose content is known early are written and
 * flushed by a background thread while the caller goes on, and put in place
 * (renamed) only when the caller commits them, so a run that fails before
 * its commits leaves every existing file as it was. */
struct mp_fs_stage;
/* NULL when no thread can be started (then write with mp_fs_write_atomic). */
struct mp_fs_stage *mp_fs_stage_new(void);
/* Queues a copy of data as the content of path. Thread-safe. 0 or MP_ENOMEM
 * (nothing queued: commit then writes it). */
int mp_fs_stage_put(struct mp_fs_stage *st, const char *path, const void *data, size_t len);
/* Puts path in place with exactly data: the staged copy (waited for) when it
 * holds the same bytes and was written, else a fresh mp_fs_write_atomic. */
int mp_fs_stage_commit(struct mp_fs_stage *st, const char *path, const void *data, size_t len,
                       struct mp_diag *d);
/* Waits for the thread, removes the temporary files of uncommitted paths and
 * frees st (NULL is ignored). */
void mp_fs_stage_free(struct mp_fs_stage *st);
/* mkdir -p. */
int mp_fs_mkdirs(const char *path, struct mp_diag *d);
bool mp_fs_is_dir(const char *path);
bool mp_fs_exists(const char *path);
/* dir/name, without doubling a trailing '/' of dir; name NULL or "" gives a
 * copy of dir. malloc'd, NULL when out of memory. */
char *mp_fs_join(const char *dir, const char *name);
/* Peak resident set size of this process in bytes (getrusage). */
size_t mp_peak_rss(void);

#endif
