/* libFuzzer target for the HTTP response bodies the benchmark orchestrator
 * parses (src/serve/http.c): serve_first_model reads data[0].id of an
 * engine's GET /v1/models answer into a fixed buffer. The input (up to its
 * first NUL, as the body reaches the parser as a C string) must give 0 with
 * a NUL-terminated id inside the buffer, or MP_ENOTFOUND, for every buffer
 * size. */
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>

#include "fuzz_common.h"
#include "serve/serve_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = fuzz_cstr(data, size);
    static const size_t lens[] = {1, 7, 256};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        char *out = malloc(lens[k]);
        CHECK(out != NULL);
        int rc = serve_first_model(body, out, lens[k]);
        CHECK(rc == 0 || rc == MP_ENOTFOUND);
        if (rc == 0)
            CHECK(memchr(out, 0, lens[k]) != NULL);
        free(out);
    }
    free(body);
    return 0;
}
