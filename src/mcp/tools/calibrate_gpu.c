/* MCP tool calibrate_gpu: `magpie gpu calibrate` (src/calib) for an agent:
 * the measured ceilings of this machine's GPU as the TraceLens arch JSON
 * (name, mem_bw_gbps, max_achievable_tflops, magpie{...}), kept in the
 * calibration cache so that trace_report / trace_stages with
 * gpu_arch "auto" use them, and optionally written to output_path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/calib.h>

#include "../mcp_int.h"

static void on_progress(const char *msg, void *user)
{
    struct mcp_wctx *w = user;
    mcp_progress(w, 0, 0, msg);
}

static int save(json_t *args, const struct mp_calib_result *r, json_t *res, json_t **result)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    const char *out = mcp_str(args, "output_path");
    if (out && *out) {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        int rc = mp_calib_json(r, &b);
        rc = rc ? rc : mp_fs_write_atomic(out, b.data, b.len, &d);
        mp_buf_fini(&b);
        if (rc) {
            json_decref(res);
            return mcp_fail_diag(result, "writing output_path failed", &d);
        }
        json_object_set_new(res, "output_path", mcp_jstr(out));
    }
    char path[1400];
    if (mcp_bool(args, "cache") && mp_calib_cache_save(r, path, sizeof(path), &d) == 0)
        json_object_set_new(res, "cached", mcp_jstr(path));
    else if (mcp_bool(args, "cache"))
        json_object_set_new(res, "cache_error", mcp_jstr(d.msg));
    return 0;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    struct mp_calib_opts o;
    memset(&o, 0, sizeof(o));
    o.device = (int)mcp_int(args, "device_id");
    o.dtypes = mcp_str(args, "dtypes");
    o.quick = mcp_bool(args, "quick");
    o.allow_busy = mcp_bool(args, "allow_busy");
    o.progress = on_progress;
    o.user = w;
    struct mp_diag d;
    mp_diag_clear(&d);
    if (o.dtypes && mp_calib_check_dtypes(o.dtypes, &d) != 0)
        return mcp_fail_diag(result, "bad dtypes", &d);
    struct mp_calib_result *r = calloc(1, sizeof(*r));
    if (!r)
        return mcp_fail(result, "out of memory");
    int rc = mp_calib_run(&o, r, &d);
    if (rc) {
        free(r);
        return mcp_fail_diag(result, "calibration failed", &d);
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    json_t *res = mp_calib_json(r, &b) == 0 ? mcp_parse_buf(&b) : NULL;
    mp_buf_fini(&b);
    if (!res) {
        free(r);
        return mcp_fail(result, "calibration: cannot format the result");
    }
    rc = save(args, r, res, result);
    free(r);
    if (!rc)
        *result = res;
    return rc;
}

static const struct mcp_param params[] = {
    {"device_id", MT_INT, false, "0", NULL, 0, 0, "CUDA device ordinal"},
    {"dtypes", MT_STR, false, NULL, NULL, 0, 0,
     "GEMM types, comma-separated: fp64,fp32,tf32,fp16,bf16,fp8,fp8_e5m2,int8,fp4,fp6 "
     "(default all; none for no GEMM)"},
    {"quick", MT_BOOL, false, "false", NULL, 0, 0, "one shape per type: a few seconds"},
    {"allow_busy", MT_BOOL, false, "false", NULL, 0, 0, "measure even when the GPU looks busy"},
    {"cache", MT_BOOL, false, "true", NULL, 0, 0,
     "keep it in the calibration cache (trace tools with gpu_arch auto then use it)"},
    {"output_path", MT_STR, false, NULL, NULL, 0, 0, "also write the arch JSON here"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_calibrate_gpu = {
    .name = "calibrate_gpu",
    .title = "Measure the GPU's roofline ceiling",
    .desc = "Measure what this GPU reaches: dense GEMM TFLOP/s per dtype through cuBLASLt (shapes "
            "and algorithms searched, output checked), vector FMA TFLOP/s, HBM read/write/copy "
            "and L2 GB/s, launch overhead. NVIDIA only; about 10-20 s (quick: 3 s). Refuses a "
            "busy GPU unless allow_busy.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA,
    .result_desc =
        "the TraceLens arch JSON `{name, mem_bw_gbps, memory_gb, "
        "max_achievable_tflops{matrix_bf16, ...}, magpie{calibration, date, seconds, gpu{"
        "name, uuid, driver, power_limit_w, ...}, blas, rtc, mem_bw_from, figures[{key, "
        "status, unit, value, min, max, cov_pct, shape_mnk, algo, checked, note}]}}` "
        "plus `cached` (the cache file) and `output_path`.",
};
