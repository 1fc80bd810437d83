/* libFuzzer target for the parsers of GPU tool output (src/gpu/parse.c):
 * nvidia-smi --query-gpu CSV, amd-smi static --json, rocm-smi
 * --showproductname and rocminfo. Every input goes through all four, each
 * into a fresh mp_gpu_info, and rocminfo also after rocm-smi (the order
 * detection uses, where rocminfo fills in the arch of known devices).
 *
 * After each parse: the device count is within bounds, every string field is
 * NUL-terminated inside its array, a failure carries a message. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/gpu.h>

#include "fuzz_common.h"

static volatile unsigned g_touch;

#define STR_OK(a) CHECK(memchr((a), 0, sizeof(a)) != NULL)

static void check_info(const struct mp_gpu_info *info, int rc, const struct mp_diag *d)
{
    CHECK(info->count >= 0 && info->count <= MP_GPU_MAX_DEVICES);
    CHECK(info->count == 0 || info->gpus != NULL);
    for (int i = 0; i < info->count; i++) {
        const struct mp_gpu_device *g = &info->gpus[i];
        STR_OK(g->name);
        STR_OK(g->arch);
        STR_OK(g->family);
        STR_OK(g->driver);
        STR_OK(g->uuid);
        STR_OK(g->pci_bus_id);
        g_touch += fuzz_touch(g->name, strlen(g->name)) + fuzz_touch(g->arch, strlen(g->arch));
    }
    STR_OK(info->architecture);
    STR_OK(info->driver_version);
    CHECK(info->nnotes >= 0 && info->nnotes <= MP_GPU_MAX_NOTES);
    if (rc)
        CHECK(d->code == rc && d->msg[0]);
}

typedef int (*parse_fn)(const char *, size_t, struct mp_gpu_info *, struct mp_diag *);

static void one(parse_fn fn, const char *text, size_t len, struct mp_gpu_info *info)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = fn(text, len, info, &d);
    CHECK(rc == 0 || rc == MP_EPARSE || rc == MP_ENOMEM || rc == MP_EINVAL);
    check_info(info, rc, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const parse_fn fns[] = {mp_gpu_parse_nvidia_smi_csv, mp_gpu_parse_amd_smi_json,
                                   mp_gpu_parse_rocm_smi_product, mp_gpu_parse_rocminfo};
    char *text = fuzz_dup(data, size);
    for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
        struct mp_gpu_info info;
        mp_gpu_info_init(&info);
        one(fns[k], text, size, &info);
        if (fns[k] == mp_gpu_parse_rocm_smi_product)
            one(mp_gpu_parse_rocminfo, text, size, &info);
        mp_gpu_info_fini(&info);
    }
    free(text);
    return 0;
}
