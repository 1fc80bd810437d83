/* libFuzzer target for the kernel profiler output parsers (src/kernel/profile.c):
 * ncu --csv --print-units base, rocprofv3 kernel_trace.csv and rocprofv3
 * results JSON. Every input goes through all three.
 *
 * After each parse: metric and dispatch counts are non-negative with arrays
 * to match, every name is a readable string, dispatch counts are positive,
 * and a failure carries a message. mp_kernel_perf_fini frees everything
 * (LeakSanitizer checks). */
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/kernel.h>

#include "fuzz_common.h"

static volatile unsigned g_touch;

typedef int (*parse_fn)(const char *, size_t, struct mp_kernel_perf *, struct mp_diag *);

static void check_perf(const struct mp_kernel_perf *p)
{
    CHECK(p->nmetrics >= 0 && p->ndispatch >= 0);
    CHECK(p->nmetrics == 0 || p->metrics != NULL);
    CHECK(p->ndispatch == 0 || p->dispatch != NULL);
    for (int i = 0; i < p->nmetrics; i++) {
        const struct mp_kernel_metric *m = &p->metrics[i];
        CHECK(m->name != NULL);
        g_touch += fuzz_touch(m->name, strlen(m->name));
    }
    for (int i = 0; i < p->ndispatch; i++) {
        const struct mp_kernel_dispatch *k = &p->dispatch[i];
        CHECK(k->name != NULL);
        g_touch += fuzz_touch(k->name, strlen(k->name));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const parse_fn fns[] = {mp_kernel_parse_ncu_csv, mp_kernel_parse_rocprof_kernel_trace,
                                   mp_kernel_parse_rocprof_json};
    char *text = fuzz_dup(data, size);
    for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
        struct mp_kernel_perf p;
        memset(&p, 0, sizeof(p));
        struct mp_diag d;
        mp_diag_clear(&d);
        int rc = fns[k](text, size, &p, &d);
        if (rc)
            CHECK(d.code == rc && d.msg[0]);
        check_perf(&p);
        mp_kernel_perf_fini(&p);
    }
    free(text);
    return 0;
}
