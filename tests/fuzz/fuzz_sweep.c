/* libFuzzer target for what `benchmark sweep compare` and the MCP tool
 * compare_sweeps read from files an agent names, and what --sla / --search
 * read from its arguments: mp_sweep_load_text (sweep.json), then, on an
 * accepted document, its writers and a second load of what they wrote,
 * which must give the same document back; and the SLA and search grammars
 * on the input as a string. Any mismatch traps. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/sweep.h>

#include "fuzz_common.h"

static void grammars(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size < 256 ? size : 256);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_sweep_sla sla;
    if (mp_sweep_sla_parse(s, &sla, &d) == 0) {
        CHECK(sla.metric >= 0 && sla.metric < MP_SWEEP_N_METRICS);
        CHECK(isfinite(sla.limit) && sla.limit >= 0);
        /* its canonical text parses to the same limit */
        struct mp_sweep_sla again;
        CHECK(mp_sweep_sla_parse(sla.text, &again, &d) == 0);
        CHECK(again.metric == sla.metric && again.upper == sla.upper);
    } else {
        CHECK(d.msg[0] != 0);
    }
    struct mp_sweep_search q;
    mp_diag_clear(&d);
    if (mp_sweep_search_parse(s, &q, &d) == 0)
        CHECK(q.lo > 0 && q.hi > q.lo && isfinite(q.hi));
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grammars(data, size);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_sweep *s = NULL;
    if (mp_sweep_load_text((const char *)data, size, "fuzz.json", "/nonexistent", &s, &d)) {
        CHECK(s == NULL && d.msg[0] != 0);
        return 0;
    }
    struct mp_buf j, t, c;
    mp_buf_init(&j, 0);
    mp_buf_init(&t, 0);
    mp_buf_init(&c, 0);
    CHECK(mp_sweep_json(s, &j) == 0);
    CHECK(mp_sweep_text(s, &t) == 0);
    CHECK(mp_sweep_csv(s, &c) == 0);
    const struct mp_sweep *one = s;
    mp_buf_reset(&t);
    CHECK(mp_sweep_html(&one, 1, "fuzz", &t) == 0);
    struct mp_sweep *s2 = NULL;
    CHECK(mp_sweep_load_text(mp_buf_cstr(&j), j.len, "again.json", "/nonexistent", &s2, &d) == 0);
    struct mp_buf j2;
    mp_buf_init(&j2, 0);
    CHECK(mp_sweep_json(s2, &j2) == 0);
    CHECK(j.len == j2.len && memcmp(mp_buf_cstr(&j), mp_buf_cstr(&j2), j.len) == 0);
    mp_buf_fini(&j);
    mp_buf_fini(&j2);
    mp_buf_fini(&t);
    mp_buf_fini(&c);
    mp_sweep_free(s);
    mp_sweep_free(s2);
    return 0;
}
