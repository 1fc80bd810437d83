/* Fixtures shared by the trace tests (helpers.c). */
#ifndef MP_TEST_TRACE_HELPERS_H
#define MP_TEST_TRACE_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/trace.h>

/* A copy of one delivered event. */
struct cev {
    uint64_t index, offset;
    uint32_t flags;
    char ph;
    char *name, *cat, *pid_text, *tid_text, *args, *dims;
    size_t name_n;
    double ts, dur;
    int64_t pid, tid, id, ext, corr;
};

/* Events collected as the parser delivers them, with the metadata. */
struct coll {
    struct cev *v;
    size_t n, cap;
    struct mp_buf meta; /* "key=raw\n" per top-level key */
    size_t stop_after;  /* return MP_ECANCEL after this many events (0 = never) */
};

char *xstrndup(const char *s, size_t n);
/* on_event / on_meta callbacks that fill a struct coll */
int collect_cb(const struct mp_trace_event *ev, void *user);
int meta_cb(struct mp_strview key, struct mp_strview raw, void *user);
void coll_init(struct coll *c);
void coll_fini(struct coll *c);
/* Parses len bytes of text from memory into c (NULL: no callbacks). */
int parse_mem(const void *text, size_t len, size_t chunk, struct coll *c,
              struct mp_trace_parse_stats *st, struct mp_diag *d);

/* Order-sensitive checksum over everything the parser delivers. */
struct sum {
    uint64_t h;
    uint64_t n;
    uint64_t want_offset_of; /* record the offset of this event index */
    uint64_t offset_found;
};

/* FNV-1a over n bytes; over a view's length and bytes */
uint64_t mix(uint64_t h, const void *p, size_t n);
uint64_t mix_view(uint64_t h, struct mp_strview v);
int sum_cb(const struct mp_trace_event *ev, void *user);
/* Parses len bytes from memory into the checksum s. */
int parse_sum(const void *text, size_t len, size_t chunk, struct sum *s,
              struct mp_trace_parse_stats *st, struct mp_diag *d);

/* A fresh directory per run (the group fixtures), removed afterwards. */
extern char tmp_root[256];
/* Writes data to tmp_root/rel (creating directories); returns the path. */
char *write_tmp(const char *rel, const void *data, size_t len);
/* gzip-compresses data in memory (zlib, gzip wrapper). */
unsigned char *gzip_mem(const void *data, size_t len, size_t *out_len);
/* Inflates a .json.gz file into memory with zlib (not magpie's reader). */
char *gunzip_file(const char *path, size_t *len);
/* MP_SHARED/data/traces/rel in buf when it exists, else NULL (skip). */
const char *shared_trace(char *buf, size_t len, const char *rel);
#define TP2_RANK0 "h200-tp2/torch_trace/tp2-rank-0.1796011317.pt.trace.json.gz"

/* A small trace with every feature, and the checks of its events. */
extern const char small_trace[];
/* Offset of the n-th (0-based) occurrence of needle in hay. */
uint64_t nth_offset(const char *hay, const char *needle, int n);
void check_small_trace(const struct coll *c);

#endif
