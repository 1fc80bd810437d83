/* Allocation helpers, the arena, growable buffers and the string interner.
 *
 * The interner is an open-addressing hash table of (hash, id) slots over
 * strings stored in an arena, so a trace's names cost one copy each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <magpie/base.h>

void *mp_malloc(size_t n)
{
    return malloc(n ? n : 1);
}

void *mp_calloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size ? size : 1);
}

void *mp_realloc(void *p, size_t n)
{
    return realloc(p, n ? n : 1);
}

int mp_size_mul(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b)
        return MP_ENOMEM;
    *out = a * b;
    return 0;
}

void *mp_reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (mp_size_mul(n, size, &bytes))
        return NULL;
    return realloc(p, bytes ? bytes : 1);
}

int mp_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t min_cap)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : (min_cap ? min_cap : 1);
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return MP_ENOMEM;
        nc *= 2;
    }
    size_t bytes;
    if (mp_size_mul(nc, elem, &bytes))
        return MP_ENOMEM;
    /* *pp is some T * variable: read and write it as bytes, not as void * */
    void *old;
    memcpy(&old, pp, sizeof(old));
    void *p = realloc(old, bytes ? bytes : 1);
    if (!p)
        return MP_ENOMEM;
    memcpy(pp, &p, sizeof(p));
    *cap = nc;
    return 0;
}

int mp_grow2(void *pa, size_t elem_a, void *pb, size_t elem_b, size_t *cap, size_t need,
             size_t min_cap)
{
    size_t ca = *cap, cb = *cap; /* the same doubling from the same start */
    if (mp_grow(pa, &ca, need, elem_a, min_cap) || mp_grow(pb, &cb, need, elem_b, min_cap))
        return MP_ENOMEM;
    MP_ASSERT(ca == cb);
    *cap = ca;
    return 0;
}

char *mp_strndup(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (!r)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

bool mp_str_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool mp_str_contains_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return n == 0;
}

size_t mp_utf8_len(const unsigned char *p, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (!n || c > 0xF4 || n > avail)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    /* the second byte's narrower ranges: no overlong form, no surrogate,
     * nothing above U+10FFFF */
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] >= 0x90))
        return 0;
    return n;
}

char *mp_strdup(const char *s)
{
    return s ? mp_strndup(s, strlen(s)) : NULL;
}

/* ---- arena ---- */
struct arena_block {
    struct arena_block *next;
    size_t used;
    size_t size;
    max_align_t data[];
};

struct mp_arena {
    struct arena_block *head;
    size_t block_size;
    size_t reserved;
};

struct mp_arena *mp_arena_new(size_t block_size)
{
    struct mp_arena *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->block_size = block_size ? block_size : (size_t)1 << 20;
    return a;
}

void mp_arena_free(struct mp_arena *a)
{
    if (!a)
        return;
    struct arena_block *b = a->head;
    while (b) {
        struct arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(a);
}

void *mp_arena_alloc(struct mp_arena *a, size_t n)
{
    n = (n + 7u) & ~(size_t)7u;
    if (n == 0)
        n = 8;
    struct arena_block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > a->block_size ? n : a->block_size;
        b = malloc(sizeof(*b) + sz);
        if (!b)
            return NULL;
        b->used = 0;
        b->size = sz;
        /* A block larger than the standard size goes behind the current one so
         * the remaining space of the current block is not wasted. */
        if (a->head && sz > a->block_size) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
        a->reserved += sizeof(*b) + sz;
    }
    MP_ASSERT(b->size - b->used >= n);
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

char *mp_arena_strndup(struct mp_arena *a, const char *s, size_t n)
{
    char *r = mp_arena_alloc(a, n + 1);
    if (!r)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

size_t mp_arena_bytes(const struct mp_arena *a)
{
    return a ? a->reserved : 0;
}

/* ---- buf ---- */
#define BUF_DEFAULT_MAX ((size_t)1 << 30)

void mp_buf_init(struct mp_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max ? max : BUF_DEFAULT_MAX;
}

void mp_buf_fini(struct mp_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int mp_buf_reserve(struct mp_buf *b, size_t extra)
{
    if (b->max == 0)
        b->max = BUF_DEFAULT_MAX;
    if (extra > b->max || b->len + extra + 1 > b->max)
        return MP_ENOMEM;
    size_t need = b->len + extra + 1;
    if (need <= b->cap && b->data) /* cap > 0 always comes with data */
        return 0;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < need)
        nc *= 2;
    if (nc > b->max)
        nc = b->max;
    char *p = realloc(b->data, nc);
    if (!p)
        return MP_ENOMEM;
    b->data = p;
    b->cap = nc;
    MP_ASSERT(b->cap >= need); /* need <= max was checked above */
    return 0;
}

int mp_buf_append(struct mp_buf *b, const void *p, size_t n)
{
    /* room already there (cap never exceeds max): the common case of the
     * report writers, without the checks of mp_buf_reserve */
    if (n < b->cap - b->len && b->data) {
        if (n) /* p may be NULL when n is 0 (an empty mp_buf's data) */
            memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
    }
    int rc = mp_buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int mp_buf_puts(struct mp_buf *b, const char *s)
{
    return mp_buf_append(b, s, strlen(s));
}

int mp_buf_putc(struct mp_buf *b, char c)
{
    if (b->data && b->cap - b->len > 1) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return 0;
    }
    return mp_buf_append(b, &c, 1);
}

int mp_buf_printf(struct mp_buf *b, const char *fmt, ...)
{
    va_list ap;
    /* one formatting pass when the text fits in the room already there */
    size_t room = b->data ? b->cap - b->len : 0;
    va_start(ap, fmt);
    int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        if (room)
            b->data[b->len] = '\0';
        return MP_EINVAL;
    }
    if ((size_t)n < room) {
        b->len += (size_t)n;
        return 0;
    }
    if (room)
        b->data[b->len] = '\0'; /* the truncated attempt is not kept */
    int rc = mp_buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    va_start(ap, fmt);
    int n2 = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    MP_ASSERT(n2 == n); /* the same arguments format to the same length */
    b->len += (size_t)n;
    return 0;
}

const char *mp_buf_cstr(struct mp_buf *b)
{
    if (!b->data)
        return "";
    return b->data;
}

void mp_buf_reset(struct mp_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

int mp_buf_read_file(struct mp_buf *b, FILE *f)
{
    char chunk[65536];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        rc = mp_buf_append(b, chunk, n);
    return rc;
}

/* ---- hash ---- */
uint64_t mp_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i = 0;
    /* 8 bytes at a time, then the tail; finish with a 64-bit mixer. */
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* ---- interner ---- */
#define INTERN_MAX_STRINGS (INT32_MAX / 2)

static inline uint64_t intern_lane(uint64_t h, const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

/* The interner's hash. Its strings are long (kernel names, op args of a few
 * hundred bytes) and one multiply chain is latency-bound, so 32-byte blocks
 * feed four independent lanes; the rest goes through the first, then one
 * 64-bit mixer over all four. Ids are handed out in insertion order, so
 * nothing the interner returns depends on this function. */
static uint32_t intern_hash(const char *s, size_t n)
{
    uint64_t h0 = 0xcbf29ce484222325ULL ^ n, h1 = 0x243f6a8885a308d3ULL, h2 = 0x13198a2e03707344ULL,
             h3 = 0xa4093822299f31d0ULL;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        h0 = intern_lane(h0, s + i);
        h1 = intern_lane(h1, s + i + 8);
        h2 = intern_lane(h2, s + i + 16);
        h3 = intern_lane(h3, s + i + 24);
    }
    for (; i + 8 <= n; i += 8)
        h0 = intern_lane(h0, s + i);
    if (i < n) {
        char tail[8] = {0};
        memcpy(tail, s + i, n - i);
        h1 = intern_lane(h1, tail);
    }
    uint64_t h = h0 ^ (h1 << 17 | h1 >> 47) ^ (h2 << 31 | h2 >> 33) ^ (h3 << 47 | h3 >> 17);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (uint32_t)h;
}

struct intern_entry {
    const char *s;
    uint32_t len;
    uint32_t hash32;
};

struct mp_intern {
    struct mp_arena *arena;
    struct intern_entry *ents; /* by id */
    int32_t count;
    int32_t cap;
    int32_t *slots;  /* id or -1 */
    uint32_t nslots; /* power of two */
};

struct mp_intern *mp_intern_new(void)
{
    struct mp_intern *in = calloc(1, sizeof(*in));
    if (!in)
        return NULL;
    in->arena = mp_arena_new((size_t)256 << 10);
    in->nslots = 1024;
    in->slots = malloc(sizeof(int32_t) * in->nslots);
    if (!in->arena || !in->slots) {
        mp_intern_free(in);
        return NULL;
    }
    memset(in->slots, 0xff, sizeof(int32_t) * in->nslots);
    return in;
}

void mp_intern_free(struct mp_intern *in)
{
    if (!in)
        return;
    mp_arena_free(in->arena);
    free(in->ents);
    free(in->slots);
    free(in);
}

static int intern_grow(struct mp_intern *in)
{
    uint32_t ns = in->nslots * 2;
    int32_t *slots = malloc(sizeof(int32_t) * ns);
    if (!slots)
        return MP_ENOMEM;
    memset(slots, 0xff, sizeof(int32_t) * ns);
    for (int32_t id = 0; id < in->count; id++) {
        uint32_t i = in->ents[id].hash32 & (ns - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (ns - 1);
        slots[i] = id;
    }
    free(in->slots);
    in->slots = slots;
    in->nslots = ns;
    return 0;
}

int32_t mp_intern_find(const struct mp_intern *in, const char *s, size_t n)
{
    uint32_t h = intern_hash(s, n);
    uint32_t i = h & (in->nslots - 1);
    for (;;) {
        int32_t id = in->slots[i];
        if (id < 0)
            return -1;
        const struct intern_entry *e = &in->ents[id];
        if (e->hash32 == h && e->len == n && memcmp(e->s, s, n) == 0)
            return id;
        i = (i + 1) & (in->nslots - 1);
    }
}

int32_t mp_intern_add(struct mp_intern *in, const char *s, size_t n)
{
    if (n > UINT32_MAX / 2)
        return MP_ENOMEM;
    uint32_t h = intern_hash(s, n);
    uint32_t i = h & (in->nslots - 1);
    for (;;) {
        int32_t id = in->slots[i];
        if (id < 0)
            break;
        const struct intern_entry *e = &in->ents[id];
        if (e->hash32 == h && e->len == n && memcmp(e->s, s, n) == 0)
            return id;
        i = (i + 1) & (in->nslots - 1);
    }
    if (in->count >= INTERN_MAX_STRINGS)
        return MP_ENOMEM;
    if (in->count == in->cap) {
        int32_t nc = in->cap ? in->cap * 2 : 256;
        struct intern_entry *e = realloc(in->ents, sizeof(*e) * (size_t)nc);
        if (!e)
            return MP_ENOMEM;
        in->ents = e;
        in->cap = nc;
    }
    char *copy = mp_arena_strndup(in->arena, s, n);
    if (!copy)
        return MP_ENOMEM;
    int32_t id = in->count++;
    in->ents[id] = (struct intern_entry){copy, (uint32_t)n, h};
    in->slots[i] = id;
    if ((uint32_t)in->count * 2 > in->nslots) {
        int rc = intern_grow(in);
        if (rc)
            return rc;
    }
    return id;
}

const char *mp_intern_str(const struct mp_intern *in, int32_t id)
{
    if (id < 0 || id >= in->count)
        return "";
    return in->ents[id].s;
}

size_t mp_intern_len(const struct mp_intern *in, int32_t id)
{
    if (id < 0 || id >= in->count)
        return 0;
    return in->ents[id].len;
}

int32_t mp_intern_count(const struct mp_intern *in)
{
    return in->count;
}

size_t mp_intern_bytes(const struct mp_intern *in)
{
    return mp_arena_bytes(in->arena) + sizeof(struct intern_entry) * (size_t)in->cap +
           sizeof(int32_t) * in->nslots;
}
