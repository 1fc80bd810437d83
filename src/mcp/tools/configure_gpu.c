/* MCP tool configure_gpu: power limit and locked clock ranges, or a reset,
 * on some or all GPUs (src/gpu/control.c), with Magpie's parameters and
 * result keys ({action, [config], results{"<id>": bool}}), plus magpie's
 * dry_run, backend, changes[] (each call made or, dry, that would be made)
 * and errors{"<id>": message}. */
#include <stdio.h>
#include <string.h>

#include <magpie/gpuctl.h>

#include "../mcp_int.h"

static int get_range(json_t *args, const char *key, int out[2], json_t **result)
{
    json_t *v = json_object_get(args, key);
    if (!v || json_is_null(v))
        return 0;
    double a = json_number_value(json_array_get(v, 0)), b = json_number_value(json_array_get(v, 1));
    if (!(a > 0 && b >= a && b <= 100000) || a != (int)a || b != (int)b)
        return mcp_fail(result, "%s must be [min, max] whole MHz with 0 < min <= max", key);
    out[0] = (int)a;
    out[1] = (int)b;
    return 0;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    bool reset = mcp_bool(args, "reset"), dry = mcp_bool(args, "dry_run");
    struct mp_gpu_setting s;
    mp_gpu_setting_init(&s);
    json_t *pw = json_object_get(args, "power_limit_watts");
    if (pw && !json_is_null(pw)) {
        s.power_limit_w = json_number_value(pw);
        if (!(s.power_limit_w > 0 && s.power_limit_w < 100000))
            return mcp_fail(result, "power_limit_watts must be > 0");
    }
    if (get_range(args, "gpu_clock_mhz", s.gpu_clock_mhz, result) ||
        get_range(args, "mem_clock_mhz", s.mem_clock_mhz, result))
        return 1;
    if (!reset && mp_gpu_setting_empty(&s))
        return mcp_fail(result, "nothing to configure: give power_limit_watts, gpu_clock_mhz or "
                                "mem_clock_mhz, or reset=true");
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_gpuctl *c = NULL;
    if (mp_gpuctl_open(&c, NULL, &d))
        return mcp_fail_diag(result, "GPU control unavailable", &d);
    int ids[MP_GPUCTL_MAX_IDS], n = 0;
    json_t *jids = json_object_get(args, "device_ids");
    if (json_is_array(jids) && json_array_size(jids) > 0) {
        size_t i;
        json_t *v;
        json_array_foreach(jids, i, v)
        {
            double x = json_number_value(v);
            if (n >= MP_GPUCTL_MAX_IDS || x < 0 || x != (int)x) {
                mp_gpuctl_close(c);
                return mcp_fail(result, "device_ids must be GPU indices (0, 1, ...)");
            }
            ids[n++] = (int)x;
        }
    } else {
        for (; n < mp_gpuctl_count(c) && n < MP_GPUCTL_MAX_IDS; n++)
            ids[n] = n;
    }
    json_t *r = json_object(), *res = json_object(), *errs = json_object(), *changes = json_array();
    json_object_set_new(r, "action", json_string(reset ? "reset" : "configure"));
    if (!reset) {
        json_t *cfg = json_object();
        json_object_set_new(cfg, "power_limit_watts",
                            s.power_limit_w > 0 ? json_real(s.power_limit_w) : json_null());
        json_t *g = json_object_get(args, "gpu_clock_mhz"),
               *m = json_object_get(args, "mem_clock_mhz");
        json_object_set(cfg, "gpu_clock_mhz", g ? g : json_null());
        json_object_set(cfg, "mem_clock_mhz", m ? m : json_null());
        json_object_set_new(r, "config", cfg);
    }
    for (int i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof(key), "%d", ids[i]);
        struct mp_buf lines;
        mp_buf_init(&lines, 0);
        mp_diag_clear(&d);
        int rc;
        if (reset) {
            rc = mp_gpuctl_reset(c, ids[i], dry, &lines, &d);
        } else {
            rc = mp_gpuctl_plan(c, ids[i], &s, &lines, &d);
            rc = rc < 0 ? rc : (dry ? 0 : mp_gpuctl_apply(c, ids[i], &s, &d));
        }
        /* one entry per line: "GPU 0 (...): power limit 700 W -> 500 W  [call]" */
        const char *p = mp_buf_cstr(&lines);
        while (*p) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            json_array_append_new(changes, json_stringn(p, len));
            p += len + (e ? 1 : 0);
        }
        mp_buf_fini(&lines);
        json_object_set_new(res, key, json_boolean(rc == 0));
        if (rc)
            json_object_set_new(errs, key, json_string(d.msg));
    }
    json_object_set_new(r, "results", res);
    json_object_set_new(r, "dry_run", json_boolean(dry));
    json_object_set_new(r, "backend", json_string(mp_gpuctl_backend_name(mp_gpuctl_which(c))));
    json_object_set_new(r, "changes", changes);
    json_object_set_new(r, "errors", errs);
    mp_gpuctl_close(c);
    *result = r;
    return 0;
}

static const struct mcp_param params[] = {
    {"device_ids", MT_NUMLIST, false, NULL, NULL, 0, 0, "GPU indices; null = every GPU"},
    {"power_limit_watts", MT_NUM, false, NULL, NULL, 0, 0, "power limit in watts"},
    {"gpu_clock_mhz", MT_NUMLIST, false, NULL, NULL, 2, 2,
     "[min, max] MHz to lock the SM/graphics clocks to"},
    {"mem_clock_mhz", MT_NUMLIST, false, NULL, NULL, 2, 2,
     "[min, max] MHz to lock the memory clocks to"},
    {"reset", MT_BOOL, false, "false", NULL, 0, 0,
     "put power limit and clocks back to the defaults instead"},
    {"dry_run", MT_BOOL, false, "false", NULL, 0, 0,
     "magpie's own: list what would change (changes[]) and change nothing"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_configure_gpu = {
    .name = "configure_gpu",
    .title = "Configure GPU power and clocks",
    .desc = "Set the power limit and lock SM/memory clock ranges on GPUs, or reset them to the "
            "defaults (NVIDIA through NVML, AMD through amd-smi or rocm-smi). Needs root; "
            "settings stay until reset. dry_run lists the changes without making them.",
    .params = params,
    .run = run,
    .flags = 0,
    .result_desc = "`{action: \"configure\"|\"reset\", [config{power_limit_watts, gpu_clock_mhz, "
                   "mem_clock_mhz}], results{\"<id>\": bool}, dry_run, backend, changes[], "
                   "errors{\"<id>\": message}}`.",
};
