/* libFuzzer target for the typed config readers on top of the YAML loader:
 * the kernel config (-k, src/config/kernel.c), the framework config (-c,
 * src/config/framework.c) and the benchmark config (src/serve/config.c).
 * Every input goes through all three from memory, each into a fresh config
 * that is then freed (LeakSanitizer checks the error paths too).
 *
 * A load returns 0 or an error with a message; an accepted kernel config has
 * at least one kernel. */
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/config.h>
#include <magpie/serve.h>

#include "fuzz_common.h"

static void check_diag(int rc, const struct mp_diag *d)
{
    if (rc)
        CHECK(d->code == rc && d->msg[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct mp_diag d;

    struct mp_kernel_config kc;
    mp_kernel_config_init(&kc);
    mp_diag_clear(&d);
    int rc = mp_config_load_kernel_string(&kc, text, "kernel.yaml", &d);
    check_diag(rc, &d);
    if (rc == 0) {
        CHECK(kc.nkernels >= 1 && kc.kernels != NULL);
    }
    mp_kernel_config_fini(&kc);

    mp_kernel_config_init(&kc);
    mp_diag_clear(&d);
    rc = mp_config_load_framework_string(&kc, text, size, "config.yaml", &d);
    check_diag(rc, &d);
    mp_kernel_config_fini(&kc);

    struct mp_serve_config sc;
    mp_serve_config_init(&sc);
    mp_diag_clear(&d);
    rc = mp_serve_config_load_string(&sc, text, size, "benchmark.yaml", &d);
    check_diag(rc, &d);
    mp_serve_config_fini(&sc);

    free(text);
    return 0;
}
