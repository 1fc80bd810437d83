/* GPU hardware control: power limit, locked SM/memory clocks, AMD clock
 * levels, reset. NVIDIA through NVML (dlopen, as nvml.c), AMD through amd-smi
 * or rocm-smi run as child processes.
 *
 * Every change is first turned into a list of actions (one per NVML call or
 * per tool run), so that --dry-run prints exactly the calls apply would make,
 * with the value before and after. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/gpu.h>
#include <magpie/gpuctl.h>
#include <magpie/proc.h>
#include <magpie/yaml.h>

#include "gpu_int.h"

#define DEFAULT_TIMEOUT_S 30.0
#define MAX_LEVEL 7 /* Magpie documents AMD levels 0-7 */

/* ---- settings and the gpu: section ---- */

void mp_gpu_setting_init(struct mp_gpu_setting *s)
{
    memset(s, 0, sizeof(*s));
    s->gpu_clock_level = -1;
    s->mem_clock_level = -1;
}

bool mp_gpu_setting_empty(const struct mp_gpu_setting *s)
{
    return s->power_limit_w <= 0 && !s->gpu_clock_mhz[0] && !s->gpu_clock_mhz[1] &&
           !s->mem_clock_mhz[0] && !s->mem_clock_mhz[1] && s->gpu_clock_level < 0 &&
           s->mem_clock_level < 0;
}

void mp_gpu_hw_config_init(struct mp_gpu_hw_config *c)
{
    memset(c, 0, sizeof(*c));
    c->enabled = true;
    c->reset_after = true;
    mp_gpu_setting_init(&c->def);
}

static void warn_keys(const struct mp_yaml_node *map, const char *const *known, const char *where)
{
    if (!map || map->kind != MP_YAML_MAP)
        return;
    for (size_t i = 0; i < map->n; i++) {
        bool ok = false;
        for (const char *const *p = known; *p && !ok; p++)
            ok = strcmp(map->keys[i]->str, *p) == 0;
        if (!ok)
            mp_log(MP_LOG_WARN, "%s:%ld:%ld: unknown key '%s' in %s (ignored)", map->keys[i]->file,
                   map->keys[i]->line, map->keys[i]->col, map->keys[i]->str, where);
    }
}

static int want_map(const struct mp_yaml_node *n, const char *field, struct mp_diag *d)
{
    if (n && n->kind != MP_YAML_MAP && n->kind != MP_YAML_NULL)
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected a mapping, got a %s",
                             mp_yaml_kind_name(n->kind));
    return 0;
}

/* [min, max] in MHz, min <= max, both > 0 (a single number means [n, n]). */
static int load_range(const struct mp_yaml_node *n, const char *field, int out[2],
                      struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    long long v[2];
    if (n->kind == MP_YAML_SCALAR) {
        int rc = mp_yaml_int(n, field, &v[0], d);
        if (rc)
            return rc;
        v[1] = v[0];
    } else if (n->kind == MP_YAML_SEQ && n->n == 2) {
        for (int i = 0; i < 2; i++) {
            int rc = mp_yaml_int(n->items[i], field, &v[i], d);
            if (rc)
                return rc;
        }
    } else {
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected [min, max] in MHz");
    }
    if (v[0] <= 0 || v[1] <= 0 || v[0] > 100000 || v[1] > 100000 || v[0] > v[1])
        return mp_yaml_error(n, field, d, MP_EINVAL,
                             "expected [min, max] MHz with 0 < min <= max, got [%lld, %lld]", v[0],
                             v[1]);
    out[0] = (int)v[0];
    out[1] = (int)v[1];
    return 0;
}

static int load_level(const struct mp_yaml_node *n, const char *field, int *out, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    long long v;
    int rc = mp_yaml_int(n, field, &v, d);
    if (rc)
        return rc;
    if (v < 0 || v > MAX_LEVEL)
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected a level 0..%d, got %lld", MAX_LEVEL,
                             v);
    *out = (int)v;
    return 0;
}

/* One default: or per_gpu.<id>: block; fields are named for messages. */
static int load_setting(const struct mp_yaml_node *n, const char *where, struct mp_gpu_setting *s,
                        struct mp_diag *d)
{
    char f[160];
    int rc = want_map(n, where, d);
    if (rc || mp_yaml_is_null(n))
        return rc;
    static const char *const known[] = {"power", "frequency", NULL};
    warn_keys(n, known, where);
    const struct mp_yaml_node *p = mp_yaml_get(n, "power");
    snprintf(f, sizeof(f), "%s.power", where);
    if ((rc = want_map(p, f, d)))
        return rc;
    static const char *const pk[] = {"limit_watts", NULL};
    warn_keys(p, pk, f);
    const struct mp_yaml_node *lw = mp_yaml_get(p, "limit_watts");
    if (!mp_yaml_is_null(lw)) {
        snprintf(f, sizeof(f), "%s.power.limit_watts", where);
        double w;
        if ((rc = mp_yaml_double(lw, f, &w, d)))
            return rc;
        if (!(w > 0 && w < 100000))
            return mp_yaml_error(lw, f, d, MP_EINVAL, "expected watts > 0, got %g", w);
        s->power_limit_w = w;
    }
    const struct mp_yaml_node *fr = mp_yaml_get(n, "frequency");
    snprintf(f, sizeof(f), "%s.frequency", where);
    if ((rc = want_map(fr, f, d)))
        return rc;
    static const char *const fk[] = {"gpu_clock_mhz", "mem_clock_mhz", "gpu_clock_level",
                                     "mem_clock_level", NULL};
    warn_keys(fr, fk, f);
    snprintf(f, sizeof(f), "%s.frequency.gpu_clock_mhz", where);
    if ((rc = load_range(mp_yaml_get(fr, "gpu_clock_mhz"), f, s->gpu_clock_mhz, d)))
        return rc;
    snprintf(f, sizeof(f), "%s.frequency.mem_clock_mhz", where);
    if ((rc = load_range(mp_yaml_get(fr, "mem_clock_mhz"), f, s->mem_clock_mhz, d)))
        return rc;
    snprintf(f, sizeof(f), "%s.frequency.gpu_clock_level", where);
    if ((rc = load_level(mp_yaml_get(fr, "gpu_clock_level"), f, &s->gpu_clock_level, d)))
        return rc;
    snprintf(f, sizeof(f), "%s.frequency.mem_clock_level", where);
    return load_level(mp_yaml_get(fr, "mem_clock_level"), f, &s->mem_clock_level, d);
}

int mp_gpu_hw_config_load(struct mp_gpu_hw_config *c, const struct mp_yaml_node *gpu,
                          struct mp_diag *d)
{
    int rc = want_map(gpu, "gpu", d);
    if (rc || mp_yaml_is_null(gpu))
        return rc;
    static const char *const known[] = {"device_ids", "parallel", "hardware", NULL};
    warn_keys(gpu, known, "gpu");
    const struct mp_yaml_node *ids = mp_yaml_get(gpu, "device_ids");
    if (!mp_yaml_is_null(ids)) {
        if (ids->kind != MP_YAML_SEQ)
            return mp_yaml_error(ids, "gpu.device_ids", d, MP_EINVAL,
                                 "expected a list of GPU indices");
        if (ids->n > MP_GPUCTL_MAX_IDS)
            return mp_yaml_error(ids, "gpu.device_ids", d, MP_EINVAL, "more than %d GPUs",
                                 MP_GPUCTL_MAX_IDS);
        for (size_t i = 0; i < ids->n; i++) {
            long long v;
            if ((rc = mp_yaml_int(ids->items[i], "gpu.device_ids", &v, d)))
                return rc;
            if (v < 0 || v >= MP_GPU_MAX_DEVICES)
                return mp_yaml_error(ids->items[i], "gpu.device_ids", d, MP_EINVAL,
                                     "expected a GPU index 0..%d, got %lld", MP_GPU_MAX_DEVICES - 1,
                                     v);
            c->device_ids[c->n_device_ids++] = (int)v;
        }
    }
    const struct mp_yaml_node *hw = mp_yaml_get(gpu, "hardware");
    if ((rc = want_map(hw, "gpu.hardware", d)) || mp_yaml_is_null(hw))
        return rc;
    static const char *const hk[] = {"enabled", "reset_after_benchmark", "default", "per_gpu",
                                     NULL};
    warn_keys(hw, hk, "gpu.hardware");
    const struct mp_yaml_node *n = mp_yaml_get(hw, "enabled");
    if (!mp_yaml_is_null(n) && (rc = mp_yaml_bool(n, "gpu.hardware.enabled", &c->enabled, d)))
        return rc;
    n = mp_yaml_get(hw, "reset_after_benchmark");
    if (!mp_yaml_is_null(n) &&
        (rc = mp_yaml_bool(n, "gpu.hardware.reset_after_benchmark", &c->reset_after, d)))
        return rc;
    if ((rc = load_setting(mp_yaml_get(hw, "default"), "gpu.hardware.default", &c->def, d)))
        return rc;
    bool any = !mp_gpu_setting_empty(&c->def);
    const struct mp_yaml_node *per = mp_yaml_get(hw, "per_gpu");
    if ((rc = want_map(per, "gpu.hardware.per_gpu", d)))
        return rc;
    for (size_t i = 0; per && per->kind == MP_YAML_MAP && i < per->n; i++) {
        char where[96];
        snprintf(where, sizeof(where), "gpu.hardware.per_gpu.%s", per->keys[i]->str);
        char *end;
        long id = strtol(per->keys[i]->str, &end, 10);
        if (end == per->keys[i]->str || *end || id < 0 || id >= MP_GPU_MAX_DEVICES)
            return mp_yaml_error(per->keys[i], where, d, MP_EINVAL,
                                 "expected a GPU index as the key, got '%s'", per->keys[i]->str);
        if (c->n_per_gpu >= MP_GPUCTL_MAX_IDS)
            return mp_yaml_error(per->keys[i], where, d, MP_EINVAL, "more than %d GPUs",
                                 MP_GPUCTL_MAX_IDS);
        struct mp_gpu_setting *s = &c->per_gpu[c->n_per_gpu];
        mp_gpu_setting_init(s);
        if ((rc = load_setting(per->vals[i], where, s, d)))
            return rc;
        c->per_gpu_id[c->n_per_gpu++] = (int)id;
        any = any || !mp_gpu_setting_empty(s);
    }
    c->present = any;
    return 0;
}

void mp_gpu_hw_config_for(const struct mp_gpu_hw_config *c, int id, struct mp_gpu_setting *out)
{
    *out = c->def;
    for (int i = 0; i < c->n_per_gpu; i++) {
        if (c->per_gpu_id[i] != id)
            continue;
        const struct mp_gpu_setting *p = &c->per_gpu[i];
        if (p->power_limit_w > 0)
            out->power_limit_w = p->power_limit_w;
        if (p->gpu_clock_mhz[1])
            memcpy(out->gpu_clock_mhz, p->gpu_clock_mhz, sizeof(out->gpu_clock_mhz));
        if (p->mem_clock_mhz[1])
            memcpy(out->mem_clock_mhz, p->mem_clock_mhz, sizeof(out->mem_clock_mhz));
        if (p->gpu_clock_level >= 0)
            out->gpu_clock_level = p->gpu_clock_level;
        if (p->mem_clock_level >= 0)
            out->mem_clock_level = p->mem_clock_level;
    }
}

const char *mp_gpuctl_backend_name(enum mp_gpuctl_backend b)
{
    switch (b) {
    case MP_GPUCTL_NVML:
        return "nvml";
    case MP_GPUCTL_AMD_SMI:
        return "amd-smi";
    case MP_GPUCTL_ROCM_SMI:
        return "rocm-smi";
    default:
        return "auto";
    }
}

/* ---- NVML ---- */

/* what only the settings call, after the common entry points */
struct nvml_ctl {
    struct gpu_nvml core;
    int (*limit)(struct nvml_dev_st *, unsigned int *);
    int (*default_limit)(struct nvml_dev_st *, unsigned int *);
    int (*constraints)(struct nvml_dev_st *, unsigned int *, unsigned int *);
    int (*set_limit)(struct nvml_dev_st *, unsigned int);
    int (*lock_gpu)(struct nvml_dev_st *, unsigned int, unsigned int);
    int (*unlock_gpu)(struct nvml_dev_st *);
    int (*lock_mem)(struct nvml_dev_st *, unsigned int, unsigned int);
    int (*unlock_mem)(struct nvml_dev_st *);
};

#define CSYM(field, name) gpu_dlsym(n->core.lib, name, &n->field, sizeof(n->field))

struct mp_gpuctl {
    enum mp_gpuctl_backend backend;
    int count;
    double timeout_s;
    struct nvml_ctl nv;
    bool nv_inited;
    char tool[1024]; /* amd-smi / rocm-smi path */
    char names[MP_GPUCTL_MAX_IDS][96];
};

static const char *nv_err(const struct mp_gpuctl *c, int r)
{
    const char *s = c->nv.core.error_string ? c->nv.core.error_string(r) : NULL;
    return s ? s : "NVML error";
}

static int nvml_open(struct mp_gpuctl *c, struct mp_diag *d)
{
    struct nvml_ctl *n = &c->nv;
    const char *path = gpu_nvml_lib();
    if (!gpu_nvml_open(&n->core))
        return mp_diag_set(d, MP_ENOTFOUND, "NVML: %s not loadable", path);
    CSYM(limit, "nvmlDeviceGetPowerManagementLimit");
    CSYM(default_limit, "nvmlDeviceGetPowerManagementDefaultLimit");
    CSYM(constraints, "nvmlDeviceGetPowerManagementLimitConstraints");
    CSYM(set_limit, "nvmlDeviceSetPowerManagementLimit");
    CSYM(lock_gpu, "nvmlDeviceSetGpuLockedClocks");
    CSYM(unlock_gpu, "nvmlDeviceResetGpuLockedClocks");
    CSYM(lock_mem, "nvmlDeviceSetMemoryLockedClocks");
    CSYM(unlock_mem, "nvmlDeviceResetMemoryLockedClocks");
    if (!n->core.init || !n->core.shutdown || !n->core.count || !n->core.handle)
        return mp_diag_set(d, MP_ENOTFOUND, "NVML: %s lacks nvmlInit_v2 or device functions", path);
    int r = n->core.init();
    if (r != 0)
        return mp_diag_set(d, MP_ENOTFOUND, "NVML: nvmlInit_v2: %s", nv_err(c, r));
    c->nv_inited = true;
    unsigned int cnt = 0;
    if ((r = n->core.count(&cnt)) != 0)
        return mp_diag_set(d, MP_ENOTFOUND, "NVML: nvmlDeviceGetCount_v2: %s", nv_err(c, r));
    if (cnt == 0)
        return mp_diag_set(d, MP_ENOTFOUND, "NVML: no devices");
    c->count = cnt > MP_GPU_MAX_DEVICES ? MP_GPU_MAX_DEVICES : (int)cnt;
    return 0;
}

static int nv_dev(struct mp_gpuctl *c, int idx, struct nvml_dev_st **dev, struct mp_diag *d)
{
    int r = c->nv.core.handle((unsigned int)idx, dev);
    if (r != 0)
        return mp_diag_set(d, MP_EIO, "GPU %d: nvmlDeviceGetHandleByIndex_v2: %s", idx,
                           nv_err(c, r));
    return 0;
}

/* ---- AMD ---- */

static int amd_open(struct mp_gpuctl *c, enum mp_gpuctl_backend want, struct mp_diag *d)
{
    const char *tool = want == MP_GPUCTL_ROCM_SMI ? "rocm-smi" : "amd-smi";
    if (mp_gpu_find_tool(tool, c->tool, sizeof(c->tool)) != 0) {
        if (want != MP_GPUCTL_AUTO)
            return mp_diag_set(d, MP_ENOTFOUND, "%s: not found", tool);
        tool = "rocm-smi";
        if (mp_gpu_find_tool(tool, c->tool, sizeof(c->tool)) != 0)
            return mp_diag_set(d, MP_ENOTFOUND, "neither amd-smi nor rocm-smi found");
    }
    c->backend = strcmp(tool, "amd-smi") == 0 ? MP_GPUCTL_AMD_SMI : MP_GPUCTL_ROCM_SMI;
    /* the GPU list from detection (the same tools, read-only queries) */
    struct mp_gpu_info info;
    struct mp_gpu_detect_opts dopts = {
        .no_nvml = true, .no_tools = true, .timeout_s = c->timeout_s};
    int rc = mp_gpu_detect(&info, &dopts, d);
    if (!rc && (info.vendor != MP_GPU_VENDOR_AMD || info.count == 0))
        rc = mp_diag_set(d, MP_ENOTFOUND, "%s found, but no AMD GPU was detected", tool);
    if (!rc) {
        c->count = info.count > MP_GPUCTL_MAX_IDS ? MP_GPUCTL_MAX_IDS : info.count;
        for (int i = 0; i < c->count; i++)
            gpu_copy(c->names[i], sizeof(c->names[i]), info.gpus[i].name,
                     strlen(info.gpus[i].name));
    }
    mp_gpu_info_fini(&info);
    return rc;
}

static int amd_run(struct mp_gpuctl *c, const char *const *args, struct mp_diag *d)
{
    const char *argv[16];
    int n = 0;
    argv[n++] = c->tool;
    for (; *args && n < 15; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    struct mp_proc_opts po = {.timeout_s = c->timeout_s, .capture_max = (size_t)64 << 10};
    struct mp_proc_result res;
    int rc = mp_proc_run(argv, &po, &res, d);
    if (!rc && !mp_proc_result_ok(&res)) {
        char how[160];
        mp_proc_describe(&res, c->timeout_s, how, sizeof(how));
        const char *msg = res.err.len ? mp_buf_cstr(&res.err) : mp_buf_cstr(&res.out);
        size_t ml = strlen(msg);
        while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' '))
            ml--;
        if (ml > 300) {
            msg += ml - 300;
            ml = 300;
        }
        struct mp_buf line;
        mp_buf_init(&line, 0);
        mp_proc_join(argv, &line);
        rc = mp_diag_set(d, MP_EIO, "`%s` %s: %.*s", mp_buf_cstr(&line), how, (int)ml, msg);
        mp_buf_fini(&line);
    }
    mp_proc_result_fini(&res);
    return rc;
}

/* ---- open / query ---- */

int mp_gpuctl_open(struct mp_gpuctl **out, const struct mp_gpuctl_opts *o, struct mp_diag *d)
{
    *out = NULL;
    struct mp_gpuctl *c = calloc(1, sizeof(*c));
    if (!c) {
        mp_diag_set(d, MP_ENOMEM, "out of memory");
        return MP_ENOMEM;
    }
    enum mp_gpuctl_backend want = o ? o->backend : MP_GPUCTL_AUTO;
    c->timeout_s = o && o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
    int rc = MP_ENOTFOUND;
    char why[600] = "";
    if (want == MP_GPUCTL_AUTO || want == MP_GPUCTL_NVML) {
        struct mp_diag nd;
        mp_diag_clear(&nd);
        rc = nvml_open(c, &nd);
        if (!rc)
            c->backend = MP_GPUCTL_NVML;
        else
            snprintf(why, sizeof(why), "%.250s", nd.msg);
        if (rc && c->nv_inited)
            c->nv.core.shutdown();
        if (rc && c->nv.core.lib)
            dlclose(c->nv.core.lib);
        if (rc)
            memset(&c->nv, 0, sizeof(c->nv));
        c->nv_inited = c->nv_inited && !rc;
    }
    if (rc && want != MP_GPUCTL_NVML) {
        struct mp_diag ad;
        mp_diag_clear(&ad);
        rc = amd_open(c, want, &ad);
        if (rc) {
            size_t l = strlen(why);
            snprintf(why + l, sizeof(why) - l, "%s%.250s", l ? "; " : "", ad.msg);
        }
    }
    if (rc) {
        free(c);
        mp_diag_set(d, MP_ENOTFOUND, "no GPU to control (%s)", why);
        return MP_ENOTFOUND;
    }
    *out = c;
    return 0;
}

void mp_gpuctl_close(struct mp_gpuctl *c)
{
    if (!c)
        return;
    if (c->nv_inited)
        c->nv.core.shutdown();
    if (c->nv.core.lib)
        dlclose(c->nv.core.lib);
    free(c);
}

enum mp_gpuctl_backend mp_gpuctl_which(const struct mp_gpuctl *c)
{
    return c->backend;
}

int mp_gpuctl_count(const struct mp_gpuctl *c)
{
    return c->count;
}

static int check_idx(const struct mp_gpuctl *c, int idx, struct mp_diag *d)
{
    if (idx < 0 || idx >= c->count)
        return mp_diag_set(d, MP_EINVAL, "GPU %d does not exist (%d GPU%s: 0..%d)", idx, c->count,
                           c->count == 1 ? "" : "s", c->count - 1);
    return 0;
}

int mp_gpuctl_query(struct mp_gpuctl *c, int idx, struct mp_gpuctl_state *st, struct mp_diag *d)
{
    st->index = idx;
    st->name[0] = 0;
    st->power_limit_w = st->power_default_w = st->power_min_w = st->power_max_w = -1;
    st->sm_clock_mhz = st->sm_clock_max_mhz = st->mem_clock_mhz = st->mem_clock_max_mhz = -1;
    int rc = check_idx(c, idx, d);
    if (rc)
        return rc;
    if (c->backend != MP_GPUCTL_NVML) {
        snprintf(st->name, sizeof(st->name), "%s", c->names[idx]);
        return 0; /* the AMD tools' state output is not read (no recording of it) */
    }
    struct nvml_dev_st *dev;
    if ((rc = nv_dev(c, idx, &dev, d)))
        return rc;
    if (c->nv.core.name && c->nv.core.name(dev, st->name, sizeof(st->name)) != 0)
        st->name[0] = 0;
    unsigned int v, w;
    if (c->nv.limit && c->nv.limit(dev, &v) == 0)
        st->power_limit_w = v / 1000.0;
    if (c->nv.default_limit && c->nv.default_limit(dev, &v) == 0)
        st->power_default_w = v / 1000.0;
    if (c->nv.constraints && c->nv.constraints(dev, &v, &w) == 0) {
        st->power_min_w = v / 1000.0;
        st->power_max_w = w / 1000.0;
    }
    if (c->nv.core.clock && c->nv.core.clock(dev, GPU_NVML_CLOCK_SM, &v) == 0)
        st->sm_clock_mhz = v;
    if (c->nv.core.max_clock && c->nv.core.max_clock(dev, GPU_NVML_CLOCK_SM, &v) == 0)
        st->sm_clock_max_mhz = v;
    if (c->nv.core.clock && c->nv.core.clock(dev, GPU_NVML_CLOCK_MEM, &v) == 0)
        st->mem_clock_mhz = v;
    if (c->nv.core.max_clock && c->nv.core.max_clock(dev, GPU_NVML_CLOCK_MEM, &v) == 0)
        st->mem_clock_max_mhz = v;
    return 0;
}

/* ---- actions ---- */

enum act_kind {
    A_POWER,         /* set the power limit to w */
    A_GPU_LOCK,      /* lock SM / graphics clocks to [a, b] */
    A_MEM_LOCK,      /* lock memory clocks to [a, b] */
    A_GPU_LEVEL,     /* AMD sclk level a */
    A_MEM_LEVEL,     /* AMD mclk level a */
    A_GPU_UNLOCK,    /* NVML: reset locked SM clocks */
    A_MEM_UNLOCK,    /* NVML: reset locked memory clocks */
    A_AMD_CLOCKS,    /* AMD: clocks (and levels) back to default */
    A_AMD_POWER_DEF, /* AMD: power cap back to the default */
};

struct act {
    enum act_kind k;
    int a, b;
    double w;
};

#define MAX_ACTS 8

static void fmt_w(char *buf, size_t len, double w)
{
    if (w < 0)
        snprintf(buf, len, "unknown");
    else if (fabs(w - round(w)) < 1e-9)
        snprintf(buf, len, "%.0f W", w);
    else
        snprintf(buf, len, "%.3f W", w);
}

/* The amd-smi / rocm-smi runs of one action, the tool itself left out: one
 * or two NULL-terminated argument lists (the strings they point to live in
 * r), used both to run them and to print them for a dry run. */
struct smi_runs {
    char id[16], v1[32], v2[32], w[32];
    const char *argv[2][12];
};

static int smi_set(struct smi_runs *r, const char *const *a0, const char *const *a1)
{
    const char *const *src[2] = {a0, a1};
    int n = a1 ? 2 : 1;
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (; src[i][k] && k < 11; k++)
            r->argv[i][k] = src[i][k];
        r->argv[i][k] = NULL;
    }
    return n;
}

/* Returns how many runs (0 for an action the AMD tools do not have). */
static int smi_runs(const struct mp_gpuctl *c, int idx, const struct act *a, struct smi_runs *r)
{
    bool amd = c->backend == MP_GPUCTL_AMD_SMI;
    snprintf(r->id, sizeof(r->id), "%d", idx);
    snprintf(r->v1, sizeof(r->v1), "%d", a->a);
    snprintf(r->v2, sizeof(r->v2), "%d", a->b);
    snprintf(r->w, sizeof(r->w), "%.0f", a->w);
    const char *id = r->id, *v1 = r->v1, *v2 = r->v2;
    const char *ck = (a->k == A_GPU_LOCK || a->k == A_GPU_LEVEL) ? "sclk" : "mclk";
    switch (a->k) {
    case A_POWER:
        if (amd)
            return smi_set(r, (const char *[]){"set", "-g", id, "-o", r->w, NULL}, NULL);
        return smi_set(
            r, (const char *[]){"-d", id, "--setpoweroverdrive", r->w, "--autorespond", "y", NULL},
            NULL);
    case A_GPU_LOCK:
    case A_MEM_LOCK:
        if (amd)
            return smi_set(r, (const char *[]){"set", "-g", id, "-L", ck, "min", v1, NULL},
                           (const char *[]){"set", "-g", id, "-L", ck, "max", v2, NULL});
        return smi_set(
            r,
            (const char *[]){"-d", id, "--setextremum", "min", ck, v1, "--autorespond", "y", NULL},
            (const char *[]){"-d", id, "--setextremum", "max", ck, v2, "--autorespond", "y", NULL});
    case A_GPU_LEVEL:
    case A_MEM_LEVEL:
        if (amd)
            return smi_set(r, (const char *[]){"set", "-g", id, "-c", ck, v1, NULL}, NULL);
        return smi_set(
            r,
            (const char *[]){"-d", id, a->k == A_GPU_LEVEL ? "--setsclk" : "--setmclk", v1, NULL},
            NULL);
    case A_AMD_CLOCKS:
        if (amd)
            return smi_set(r, (const char *[]){"reset", "-g", id, "-c", NULL}, NULL);
        return smi_set(r, (const char *[]){"-d", id, "--resetclocks", NULL}, NULL);
    case A_AMD_POWER_DEF:
        if (amd)
            return smi_set(r, (const char *[]){"reset", "-g", id, "-o", NULL}, NULL);
        return smi_set(
            r, (const char *[]){"-d", id, "--resetpoweroverdrive", "--autorespond", "y", NULL},
            NULL);
    default:
        return 0;
    }
}

/* The calls or tool runs of one action, for the dry-run lines. */
static void act_calls(const struct mp_gpuctl *c, int idx, const struct act *a, char *buf,
                      size_t len)
{
    const char *t = c->backend == MP_GPUCTL_AMD_SMI ? "amd-smi" : "rocm-smi";
    if (c->backend == MP_GPUCTL_NVML) {
        switch (a->k) {
        case A_POWER:
            snprintf(buf, len, "nvmlDeviceSetPowerManagementLimit(%d, %u mW)", idx,
                     (unsigned int)llround(a->w * 1000));
            break;
        case A_GPU_LOCK:
            snprintf(buf, len, "nvmlDeviceSetGpuLockedClocks(%d, %d, %d)", idx, a->a, a->b);
            break;
        case A_MEM_LOCK:
            snprintf(buf, len, "nvmlDeviceSetMemoryLockedClocks(%d, %d, %d)", idx, a->a, a->b);
            break;
        case A_GPU_UNLOCK:
            snprintf(buf, len, "nvmlDeviceResetGpuLockedClocks(%d)", idx);
            break;
        case A_MEM_UNLOCK:
            snprintf(buf, len, "nvmlDeviceResetMemoryLockedClocks(%d)", idx);
            break;
        default:
            snprintf(buf, len, "?");
        }
        return;
    }
    struct smi_runs r;
    int n = smi_runs(c, idx, a, &r);
    size_t off = 0;
    if (!n)
        snprintf(buf, len, "?");
    for (int i = 0; i < n && off < len; i++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "; " : "", t);
        for (const char *const *p = r.argv[i]; *p && off < len; p++)
            off += (size_t)snprintf(buf + off, len - off, " %s", *p);
    }
}

static void act_line(const struct mp_gpuctl *c, const struct mp_gpuctl_state *st,
                     const struct act *a, struct mp_buf *out)
{
    if (!out)
        return;
    char cur[48], neu[48], calls[400];
    act_calls(c, st->index, a, calls, sizeof(calls));
    mp_buf_printf(out, "GPU %d (%s): ", st->index, st->name[0] ? st->name : "?");
    switch (a->k) {
    case A_POWER:
        fmt_w(cur, sizeof(cur), st->power_limit_w);
        fmt_w(neu, sizeof(neu), a->w);
        mp_buf_printf(out, "power limit %s -> %s", cur, neu);
        break;
    case A_GPU_LOCK:
    case A_MEM_LOCK: {
        double now = a->k == A_GPU_LOCK ? st->sm_clock_mhz : st->mem_clock_mhz;
        double mx = a->k == A_GPU_LOCK ? st->sm_clock_max_mhz : st->mem_clock_max_mhz;
        mp_buf_printf(out, "%s clock ", a->k == A_GPU_LOCK ? "SM/graphics" : "memory");
        if (now >= 0)
            mp_buf_printf(out, "%.0f MHz", now);
        else
            mp_buf_puts(out, "unknown");
        if (mx >= 0)
            mp_buf_printf(out, " (max %.0f MHz)", mx);
        mp_buf_printf(out, " -> locked to %d-%d MHz", a->a, a->b);
        break;
    }
    case A_GPU_LEVEL:
    case A_MEM_LEVEL:
        mp_buf_printf(out, "%s level auto -> %d", a->k == A_GPU_LEVEL ? "sclk" : "mclk", a->a);
        break;
    case A_GPU_UNLOCK:
        mp_buf_puts(out, "SM/graphics clock lock -> none");
        break;
    case A_MEM_UNLOCK:
        mp_buf_puts(out, "memory clock lock -> none");
        break;
    case A_AMD_CLOCKS:
        mp_buf_puts(out, "clocks and levels -> driver default");
        break;
    case A_AMD_POWER_DEF:
        mp_buf_puts(out, "power cap -> driver default");
        break;
    }
    mp_buf_printf(out, "  [%s]\n", calls);
}

static int nv_call(struct mp_gpuctl *c, int idx, const char *what, int r, struct mp_diag *d)
{
    if (r == 0)
        return 0;
    return mp_diag_set(d, MP_EIO, "GPU %d: %s: %s%s", idx, what, nv_err(c, r),
                       r == 4 ? " (changing GPU settings needs root)" : "");
}

static int act_run(struct mp_gpuctl *c, int idx, const struct act *a, struct mp_diag *d)
{
    if (c->backend == MP_GPUCTL_NVML) {
        struct nvml_dev_st *dev;
        int rc = nv_dev(c, idx, &dev, d);
        if (rc)
            return rc;
        int (*f2)(struct nvml_dev_st *, unsigned int, unsigned int) = NULL;
        int (*f0)(struct nvml_dev_st *) = NULL;
        const char *name = "";
        switch (a->k) {
        case A_POWER:
            if (!c->nv.set_limit)
                return mp_diag_set(d, MP_EUNSUP, "NVML lacks nvmlDeviceSetPowerManagementLimit");
            return nv_call(c, idx, "nvmlDeviceSetPowerManagementLimit",
                           c->nv.set_limit(dev, (unsigned int)llround(a->w * 1000)), d);
        case A_GPU_LOCK:
            f2 = c->nv.lock_gpu;
            name = "nvmlDeviceSetGpuLockedClocks";
            break;
        case A_MEM_LOCK:
            f2 = c->nv.lock_mem;
            name = "nvmlDeviceSetMemoryLockedClocks";
            break;
        case A_GPU_UNLOCK:
            f0 = c->nv.unlock_gpu;
            name = "nvmlDeviceResetGpuLockedClocks";
            break;
        case A_MEM_UNLOCK:
            f0 = c->nv.unlock_mem;
            name = "nvmlDeviceResetMemoryLockedClocks";
            break;
        default:
            return mp_diag_set(d, MP_EUNSUP, "not an NVML action");
        }
        if (!f2 && !f0)
            return mp_diag_set(d, MP_EUNSUP, "NVML lacks %s (driver too old)", name);
        return nv_call(c, idx, name, f2 ? f2(dev, (unsigned int)a->a, (unsigned int)a->b) : f0(dev),
                       d);
    }
    struct smi_runs r;
    int n = smi_runs(c, idx, a, &r);
    if (!n)
        return mp_diag_set(d, MP_EUNSUP, "not an AMD action");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = amd_run(c, r.argv[i], d);
    return rc;
}

/* Checks s against st and lists the actions. */
static int build_acts(const struct mp_gpuctl *c, const struct mp_gpuctl_state *st,
                      const struct mp_gpu_setting *s, struct act *acts, int *n, struct mp_diag *d)
{
    *n = 0;
    int idx = st->index;
    bool nv = c->backend == MP_GPUCTL_NVML;
    if (s->power_limit_w > 0) {
        if (st->power_min_w > 0 && st->power_max_w > 0 &&
            (s->power_limit_w < st->power_min_w - 1e-9 ||
             s->power_limit_w > st->power_max_w + 1e-9))
            return mp_diag_set(d, MP_EINVAL,
                               "GPU %d: power limit %g W is outside what it allows (%g-%g W)", idx,
                               s->power_limit_w, st->power_min_w, st->power_max_w);
        acts[(*n)++] = (struct act){.k = A_POWER, .w = s->power_limit_w};
    }
    const int *rg[2] = {s->gpu_clock_mhz, s->mem_clock_mhz};
    double mx[2] = {st->sm_clock_max_mhz, st->mem_clock_max_mhz};
    for (int i = 0; i < 2; i++) {
        if (!rg[i][0] && !rg[i][1])
            continue;
        if (rg[i][0] <= 0 || rg[i][0] > rg[i][1])
            return mp_diag_set(d, MP_EINVAL, "GPU %d: %s clock range [%d, %d] needs 0 < min <= max",
                               idx, i ? "memory" : "GPU", rg[i][0], rg[i][1]);
        if (mx[i] > 0 && rg[i][1] > mx[i])
            return mp_diag_set(d, MP_EINVAL,
                               "GPU %d: %s clock %d MHz is above its maximum (%.0f MHz)", idx,
                               i ? "memory" : "GPU", rg[i][1], mx[i]);
        acts[(*n)++] = (struct act){.k = i ? A_MEM_LOCK : A_GPU_LOCK, .a = rg[i][0], .b = rg[i][1]};
    }
    int lv[2] = {s->gpu_clock_level, s->mem_clock_level};
    for (int i = 0; i < 2; i++) {
        if (lv[i] < 0)
            continue;
        if (nv)
            return mp_diag_set(d, MP_EINVAL,
                               "GPU %d: %s_clock_level is for AMD GPUs; on NVIDIA lock a range "
                               "with %s_clock_mhz",
                               idx, i ? "mem" : "gpu", i ? "mem" : "gpu");
        acts[(*n)++] = (struct act){.k = i ? A_MEM_LEVEL : A_GPU_LEVEL, .a = lv[i]};
    }
    return 0;
}

int mp_gpuctl_plan(struct mp_gpuctl *c, int idx, const struct mp_gpu_setting *s, struct mp_buf *out,
                   struct mp_diag *d)
{
    struct mp_gpuctl_state st;
    int rc = mp_gpuctl_query(c, idx, &st, d);
    if (rc)
        return rc;
    struct act acts[MAX_ACTS];
    int n;
    if ((rc = build_acts(c, &st, s, acts, &n, d)))
        return rc;
    for (int i = 0; i < n; i++)
        act_line(c, &st, &acts[i], out);
    return n;
}

int mp_gpuctl_apply(struct mp_gpuctl *c, int idx, const struct mp_gpu_setting *s, struct mp_diag *d)
{
    struct mp_gpuctl_state st;
    int rc = mp_gpuctl_query(c, idx, &st, d);
    if (rc)
        return rc;
    struct act acts[MAX_ACTS];
    int n;
    if ((rc = build_acts(c, &st, s, acts, &n, d)))
        return rc;
    for (int i = 0; i < n && !rc; i++)
        rc = act_run(c, idx, &acts[i], d);
    return rc;
}

/* The actions that put GPU idx back: power to power_w (NVML; <= 0 = the
 * default limit), locks off. */
static int reset_acts(const struct mp_gpuctl *c, const struct mp_gpuctl_state *st, bool power,
                      double power_w, bool gpu_clk, bool mem_clk, struct act *acts)
{
    int n = 0;
    if (c->backend == MP_GPUCTL_NVML) {
        if (gpu_clk)
            acts[n++] = (struct act){.k = A_GPU_UNLOCK};
        if (mem_clk)
            acts[n++] = (struct act){.k = A_MEM_UNLOCK};
        double w = power_w > 0 ? power_w : st->power_default_w;
        if (power && w > 0)
            acts[n++] = (struct act){.k = A_POWER, .w = w};
    } else {
        if (gpu_clk || mem_clk)
            acts[n++] = (struct act){.k = A_AMD_CLOCKS};
        if (power)
            acts[n++] = (struct act){.k = A_AMD_POWER_DEF};
    }
    return n;
}

static int run_acts(struct mp_gpuctl *c, const struct mp_gpuctl_state *st, const struct act *acts,
                    int n, bool dry_run, struct mp_buf *out, struct mp_diag *d)
{
    int first = 0;
    for (int i = 0; i < n; i++) {
        act_line(c, st, &acts[i], out);
        if (dry_run)
            continue;
        int rc = act_run(c, st->index, &acts[i], d);
        if (rc && !first)
            first = rc;
    }
    return first;
}

int mp_gpuctl_reset(struct mp_gpuctl *c, int idx, bool dry_run, struct mp_buf *out,
                    struct mp_diag *d)
{
    struct mp_gpuctl_state st;
    int rc = mp_gpuctl_query(c, idx, &st, d);
    if (rc)
        return rc;
    struct act acts[MAX_ACTS];
    int n = reset_acts(c, &st, true, 0, true, true, acts);
    return run_acts(c, &st, acts, n, dry_run, out, d);
}

/* ---- sessions ---- */

struct sess_gpu {
    struct mp_gpuctl_state before;
    bool power, gpu_clk, mem_clk; /* what was changed */
};

struct mp_gpuctl_session {
    struct mp_gpuctl *c;
    int n;
    struct sess_gpu g[MP_GPUCTL_MAX_IDS];
};

int mp_gpuctl_session_apply(const struct mp_gpu_hw_config *cfg, const struct mp_gpuctl_opts *o,
                            struct mp_buf *log, struct mp_gpuctl_session **out, struct mp_diag *d)
{
    *out = NULL;
    if (!cfg->enabled || !cfg->present)
        return 0;
    struct mp_gpuctl_session *s = calloc(1, sizeof(*s));
    if (!s)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    int rc = mp_gpuctl_open(&s->c, o, d);
    if (rc) {
        free(s);
        return rc;
    }
    int ids[MP_GPUCTL_MAX_IDS], nids = cfg->n_device_ids;
    if (nids)
        memcpy(ids, cfg->device_ids, sizeof(int) * (size_t)nids);
    else
        for (nids = 0; nids < s->c->count && nids < MP_GPUCTL_MAX_IDS; nids++)
            ids[nids] = nids;
    /* check everything before changing anything */
    struct mp_gpu_setting set[MP_GPUCTL_MAX_IDS];
    for (int i = 0; i < nids && !rc; i++) {
        struct sess_gpu *g = &s->g[i];
        mp_gpu_hw_config_for(cfg, ids[i], &set[i]);
        rc = mp_gpuctl_query(s->c, ids[i], &g->before, d);
        struct act acts[MAX_ACTS];
        int n;
        if (!rc)
            rc = build_acts(s->c, &g->before, &set[i], acts, &n, d);
    }
    for (int i = 0; i < nids && !rc; i++) {
        struct sess_gpu *g = &s->g[i];
        struct act acts[MAX_ACTS];
        int n;
        rc = build_acts(s->c, &g->before, &set[i], acts, &n, d);
        s->n = i + 1;
        for (int k = 0; k < n && !rc; k++) {
            /* marked before the call: a failed call may have half-applied */
            g->power |= acts[k].k == A_POWER;
            g->gpu_clk |= acts[k].k == A_GPU_LOCK || acts[k].k == A_GPU_LEVEL;
            g->mem_clk |= acts[k].k == A_MEM_LOCK || acts[k].k == A_MEM_LEVEL;
            act_line(s->c, &g->before, &acts[k], log);
            rc = act_run(s->c, ids[i], &acts[k], d);
        }
    }
    if (rc) {
        (void)mp_gpuctl_session_restore(s, log, NULL);
        mp_gpuctl_session_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int mp_gpuctl_session_restore(struct mp_gpuctl_session *s, struct mp_buf *log, struct mp_diag *d)
{
    if (!s)
        return 0;
    int first = 0;
    for (int i = 0; i < s->n; i++) {
        struct sess_gpu *g = &s->g[i];
        struct mp_gpuctl_state now; /* for the lines: the value now -> the value before */
        if (mp_gpuctl_query(s->c, g->before.index, &now, NULL) != 0)
            now = g->before;
        struct act acts[MAX_ACTS];
        int n =
            reset_acts(s->c, &now, g->power, g->before.power_limit_w, g->gpu_clk, g->mem_clk, acts);
        int rc = run_acts(s->c, &now, acts, n, false, log, d);
        if (rc && !first)
            first = rc;
        g->power = g->gpu_clk = g->mem_clk = false;
    }
    return first;
}

void mp_gpuctl_session_free(struct mp_gpuctl_session *s)
{
    if (!s)
        return;
    mp_gpuctl_close(s->c);
    free(s);
}
