/* libFuzzer target for the GPU clock monitor's parser (src/kernel/clockmon.c),
 * which reads the `clocks.sm, clocks_event_reasons.active` lines nvidia-smi
 * writes while a timed kernel runs.
 *
 * The summary must be consistent: samples >= 0 and equal to the return
 * value; with samples, a finite positive mean no smaller than the minimum
 * and a capped share in [0, 1]. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "kernel/kernel_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_dup(data, size);
    struct mp_kernel_clocks c;
    memset(&c, 0, sizeof(c));
    int n = kern_clockmon_parse(text, size, &c);
    CHECK(n >= 0 && n == c.samples);
    if (n) {
        CHECK(isfinite(c.mean_mhz) && isfinite(c.min_mhz));
        CHECK(c.min_mhz > 0 && c.mean_mhz >= c.min_mhz * (1 - 1e-12));
        CHECK(c.capped_share >= 0 && c.capped_share <= 1);
    }
    free(text);
    return 0;
}
