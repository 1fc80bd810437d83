/* Stable LSD radix sort of 16-byte records by the 8-byte key at their
 * start (include/magpie/base.h, mp_sort_rec16). The trace tree sorts events
 * by time stamp and by link id, the report its intervals and kernels by
 * start; each is a few hundred thousand records, where this is several
 * times faster than qsort and, being stable, gives the ties a defined order.
 *
 * The key is mapped to an unsigned integer in the same order, read as six
 * 11-bit digits (all six histograms in one pass), and a digit every record
 * shares is skipped, so keys from a narrow range (time stamps of one trace)
 * take three or four scatter passes. Records are moved with memcpy, so any
 * 16-byte struct whose first member is the key can be sorted. */
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>

enum { DIGIT_BITS = 11, NDIGITS = 6, NB = 1 << DIGIT_BITS, REC = 16 };

/* The key of the record at p as an unsigned integer in the key's order. */
static inline uint64_t rec_key(const unsigned char *p, enum mp_sort_key kind)
{
    uint64_t u;
    memcpy(&u, p, sizeof(u));
    if (kind == MP_SORT_I64)
        return u ^ ((uint64_t)1 << 63);
    /* doubles: negative ones reversed below the positive ones */
    return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

int mp_sort_rec16(void *v, size_t n, enum mp_sort_key kind)
{
    if (n < 2)
        return 0;
    size_t bytes;
    if (mp_size_mul(n, REC, &bytes))
        return MP_ENOMEM;
    unsigned char *tmp = malloc(bytes);
    size_t(*cnt)[NB] = calloc(NDIGITS, sizeof(*cnt));
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        return MP_ENOMEM;
    }
    unsigned char *src = v, *dst = tmp;
    for (size_t i = 0; i < n; i++) {
        uint64_t u = rec_key(src + i * REC, kind);
        for (int d = 0; d < NDIGITS; d++)
            cnt[d][(u >> (DIGIT_BITS * d)) & (NB - 1)]++;
    }
    uint64_t u0 = rec_key(src, kind);
    for (int d = 0; d < NDIGITS; d++) {
        unsigned shift = (unsigned)(DIGIT_BITS * d);
        size_t *c = cnt[d];
        if (c[(u0 >> shift) & (NB - 1)] == n)
            continue;
        size_t at = 0;
        for (size_t b = 0; b < NB; b++) {
            size_t k = c[b];
            c[b] = at;
            at += k;
        }
        for (size_t i = 0; i < n; i++) {
            const unsigned char *r = src + i * REC;
            memcpy(dst + c[(rec_key(r, kind) >> shift) & (NB - 1)]++ * REC, r, REC);
        }
        unsigned char *x = src;
        src = dst;
        dst = x;
    }
    if (src != v)
        memcpy(v, src, bytes);
    free(tmp);
    free(cnt);
    return 0;
}
