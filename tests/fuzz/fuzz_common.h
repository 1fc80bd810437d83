/* Small helpers shared by the libFuzzer targets in tests/fuzz/: a CHECK that
 * traps (so libFuzzer and the corpus replay both report it as a crash), a
 * NUL-terminated copy of the input for parsers that take C strings, and a
 * byte toucher that lets ASan see a dangling or out-of-range view. */
#ifndef MP_FUZZ_COMMON_H
#define MP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

/* A heap copy of data with a NUL after it (the parser sees exactly size
 * bytes plus the terminator, so ASan catches a read past either). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    CHECK(s != NULL);
    if (size)
        memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* An exact-size heap copy (no terminator), for parsers given (ptr, len). */
static inline char *fuzz_dup(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    CHECK(s != NULL);
    if (size)
        memcpy(s, data, size);
    return s;
}

static inline unsigned fuzz_touch(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned t = 0;
    CHECK(n == 0 || p != NULL);
    for (size_t i = 0; i < n; i++)
        t += b[i];
    return t;
}

static inline uint64_t fuzz_mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

#endif
