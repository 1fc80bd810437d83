/* libFuzzer target for the loadgen's Prometheus text parser
 * (src/loadgen/prom.c), which reads an inference server's /metrics page.
 *
 * The input is parsed from an exact-size copy (no terminator, so a read past
 * the end is an ASan report). Every metric name handed to the callback must
 * lie inside the input and be a well-formed name; an accepted page must also
 * be accepted line by line (each line alone) with the same samples in the
 * same order, and a rejected one must say where (a line within the input).
 * Then the page is folded into an engine-metrics sample, which must agree
 * with the parse on success. Any mismatch traps. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/loadgen.h>

#include "fuzz_common.h"

struct seen {
    const char *base;
    size_t size;
    uint64_t hash;
    size_t n;
};

static bool name_ok(const char *p, size_t n)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
        if (!alpha && !(i && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

static int on_sample(const char *name, size_t n, double v, void *user)
{
    struct seen *s = user;
    CHECK(name >= s->base && name + n <= s->base + s->size);
    CHECK(name_ok(name, n));
    uint64_t bits;
    double w = isnan(v) ? NAN : v;
    memcpy(&bits, &w, sizeof(bits));
    s->hash = mp_hash_bytes(name, n) ^ (s->hash * 1099511628211ull) ^ (isnan(v) ? 7 : bits);
    s->n++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_dup(data, size);
    struct seen all = {text, size, 0, 0};
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_loadgen_prom_parse(text, size, on_sample, &all, &d);
    CHECK(rc == 0 || rc == MP_EPARSE);
    if (rc) {
        CHECK(d.line >= 1 && d.offset >= 0 && (size_t)d.offset <= size);
    } else {
        struct seen lines = {text, size, 0, 0};
        const char *p = text, *end = text + size;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
            lines.base = p;
            lines.size = (size_t)(le - p);
            CHECK(mp_loadgen_prom_parse(p, (size_t)(le - p), on_sample, &lines, NULL) == 0);
            p = nl ? nl + 1 : end;
        }
        CHECK(lines.n == all.n && lines.hash == all.hash);
    }
    struct mp_loadgen_scrape sc;
    memset(&sc, 0, sizeof(sc));
    int rc2 = mp_loadgen_prom_sample(text, size, &sc, NULL);
    CHECK(rc2 == rc);
    for (int k = 0; k < MP_LOADGEN_N_EM; k++)
        CHECK(!(sc.have & (1u << k)) || !isnan(sc.v[k]));
    free(text);
    return 0;
}
