/* MCP tool hardware_spec: GPU detection (src/gpu) in Magpie's shape,
 * {gpu_count, gpu} or {gpu_count, gpus{"<id>": ...}}, plus magpie's
 * detection details (vendor, architecture, compiler, profiler, tools). */
#include <stdio.h>

#include <magpie/calib.h>
#include <magpie/gpu.h>

#include "../mcp_int.h"

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    struct mp_gpu_info info;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_gpu_detect(&info, NULL, &d);
    if (rc) {
        mp_gpu_info_fini(&info);
        return mcp_fail_diag(result, "GPU detection failed", &d);
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    rc = mp_gpu_info_json(&info, &b);
    json_t *det = rc ? NULL : mcp_parse_buf(&b);
    mp_buf_fini(&b);
    int count = info.count;
    mp_gpu_info_fini(&info);
    if (!det)
        return mcp_fail(result, "GPU detection: cannot format the result");
    json_t *gpus = json_object_get(det, "gpus");
    long long id = mcp_int(args, "device_id");
    json_t *r = json_object();
    json_object_set_new(r, "gpu_count", json_integer(count));
    if (mcp_bool(args, "include_all")) {
        json_t *all = json_object();
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g)
        {
            char key[32];
            snprintf(key, sizeof(key), "%zu", i);
            json_object_set(all, key, g);
        }
        json_object_set_new(r, "gpus", all);
    } else if (count > 0) {
        if (id < 0 || id >= count) {
            json_decref(r);
            json_decref(det);
            return mcp_fail(result, "device_id %lld out of range: %d GPU(s) found", id, count);
        }
        json_object_set(r, "gpu", json_array_get(gpus, (size_t)id));
    } else {
        json_object_set_new(r, "gpu", json_null());
    }
    json_object_del(det, "gpus");
    json_object_set_new(r, "detection", det);
    /* the measured ceilings of `magpie gpu calibrate` / calibrate_gpu */
    mp_buf_init(&b, 0);
    json_t *cal = mp_calib_cache_json(NULL, &b) == 0 ? mcp_parse_buf(&b) : NULL;
    mp_buf_fini(&b);
    json_object_set_new(r, "calibrations", cal ? cal : json_array());
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"device_id", MT_INT, false, "0", NULL, 0, 0, "GPU index to describe"},
    {"include_all", MT_BOOL, false, "false", NULL, 0, 0,
     "describe every GPU (result key gpus) instead of one (gpu)"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_hardware_spec = {
    .name = "hardware_spec",
    .title = "GPU hardware",
    .desc = "Detect the GPUs of this machine (NVML, nvidia-smi, amd-smi, rocm-smi, rocminfo) and "
            "the kernel compilers and profilers present.",
    .params = params,
    .run = run,
    .flags = MCP_READONLY,
    .result_desc = "`{gpu_count, gpu{index, name, arch, family, memory_total_mib, driver, ...}, "
                   "detection{vendor, architecture, compiler, profiler, source, tools, notes}, "
                   "calibrations[{file, name, uuid, driver, power_limit_w, date, mem_bw_gbps, "
                   "max_achievable_tflops}]}`; with include_all `gpus{\"<id>\": {...}}` instead "
                   "of `gpu`. calibrations: the cache of measured ceilings (calibrate_gpu).",
};
