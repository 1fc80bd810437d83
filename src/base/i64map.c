/* int64 -> int64 open-addressing hash map: correlation ids, External ids and
 * flow ids are integers, so a dedicated map avoids hashing strings. */
#include <stdlib.h>
#include <string.h>

#include <magpie/base.h>

static size_t slot(int64_t key, size_t cap)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

void mp_i64map_init(struct mp_i64map *m)
{
    memset(m, 0, sizeof(*m));
}

void mp_i64map_fini(struct mp_i64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof(*m));
}

static int grow(struct mp_i64map *m)
{
    size_t nc = m->cap ? m->cap * 2 : 64;
    int64_t *k = malloc(nc * sizeof(*k));
    int64_t *v = malloc(nc * sizeof(*v));
    uint8_t *u = calloc(nc, 1);
    if (!k || !v || !u) {
        free(k);
        free(v);
        free(u);
        return MP_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = slot(m->keys[i], nc);
        while (u[j])
            j = (j + 1) & (nc - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
        u[j] = 1;
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = k;
    m->vals = v;
    m->used = u;
    m->cap = nc;
    return 0;
}

int mp_i64map_put(struct mp_i64map *m, int64_t key, int64_t val)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return MP_ENOMEM;
    /* the probe below ends only at a free slot; slot() masks with cap - 1 */
    MP_ASSERT(m->n < m->cap && (m->cap & (m->cap - 1)) == 0);
    size_t i = slot(key, m->cap);
    while (m->used[i]) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

int64_t *mp_i64map_get(const struct mp_i64map *m, int64_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = slot(key, m->cap);
    while (m->used[i]) {
        if (m->keys[i] == key)
            return &m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}
