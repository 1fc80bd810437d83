/* GPU detection: tries the sources in order (NVML, nvidia-smi, amd-smi,
 * rocm-smi + rocminfo, rocminfo) and takes the first that lists a GPU; then
 * looks for the compilers and profilers magpie drives.
 *
 * A source that fails is not an error: a machine without GPUs is a normal
 * answer. Each skipped source leaves a note, so "(No GPU detected)" can say
 * what was tried. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/gpu.h>
#include <magpie/proc.h>

#include "gpu_int.h"

#define DEFAULT_TIMEOUT_S 20.0
#define VERSION_TIMEOUT_S 10.0
#define TOOL_OUTPUT_MAX ((size_t)8 << 20)

/* Exactly the query recorded from a real nvidia-smi (tests/fixtures/gpu):
 * its stand-in answers this and nothing else. The header line (--format=csv
 * without noheader) names the columns, so the parser does not depend on
 * their order. */
static const char *const nvidia_smi_query[] = {
    "--query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used,utilization.gpu,"
    "temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,driver_version,"
    "compute_cap",
    "--format=csv", NULL};
/* Drivers before r510 reject compute_cap: then the same without it, and the
 * architecture comes from the name table. */
static const char *const nvidia_smi_query_old[] = {
    "--query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used,utilization.gpu,"
    "temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,driver_version",
    "--format=csv", NULL};

static const char *const tool_names[MP_GPU_TOOL_COUNT] = {
    [MP_GPU_TOOL_NVCC] = "nvcc",
    [MP_GPU_TOOL_HIPCC] = "hipcc",
    [MP_GPU_TOOL_NCU] = "ncu",
    [MP_GPU_TOOL_ROCPROFV3] = "rocprofv3",
    [MP_GPU_TOOL_ROCPROF_COMPUTE] = "rocprof-compute",
};

void gpu_note(struct mp_gpu_info *info, const char *fmt, ...)
{
    char msg[sizeof(info->notes[0])];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mp_log(MP_LOG_DEBUG, "gpu: %s", msg);
    if (info->nnotes < MP_GPU_MAX_NOTES)
        memcpy(info->notes[info->nnotes++], msg, sizeof(msg));
}

void mp_gpu_info_init(struct mp_gpu_info *info)
{
    memset(info, 0, sizeof(*info));
    for (int i = 0; i < MP_GPU_TOOL_COUNT; i++)
        info->tools[i].name = tool_names[i];
}

void mp_gpu_info_fini(struct mp_gpu_info *info)
{
    if (!info)
        return;
    free(info->gpus);
    info->gpus = NULL;
    info->count = 0;
}

const char *mp_gpu_vendor_name(enum mp_gpu_vendor v)
{
    switch (v) {
    case MP_GPU_VENDOR_NVIDIA:
        return "NVIDIA";
    case MP_GPU_VENDOR_AMD:
        return "AMD";
    default:
        return "UNKNOWN";
    }
}

const char *mp_gpu_source_name(enum mp_gpu_source s)
{
    switch (s) {
    case MP_GPU_SRC_NVML:
        return "nvml";
    case MP_GPU_SRC_NVIDIA_SMI:
        return "nvidia-smi";
    case MP_GPU_SRC_AMD_SMI:
        return "amd-smi";
    case MP_GPU_SRC_ROCM_SMI:
        return "rocm-smi";
    case MP_GPU_SRC_ROCMINFO:
        return "rocminfo";
    default:
        return "none";
    }
}

const char *mp_gpu_compiler(const struct mp_gpu_info *info)
{
    switch (info->vendor) {
    case MP_GPU_VENDOR_NVIDIA:
        return "nvcc";
    case MP_GPU_VENDOR_AMD:
        return "hipcc";
    default:
        return NULL;
    }
}

const char *mp_gpu_profiler(const struct mp_gpu_info *info)
{
    switch (info->vendor) {
    case MP_GPU_VENDOR_NVIDIA:
        return "ncu";
    case MP_GPU_VENDOR_AMD:
        return "rocprof-compute";
    default:
        return NULL;
    }
}

/* Install directories tried after PATH, as "VAR/bin" or plain directories. */
static const char *const nvidia_dirs[] = {"$CUDA_HOME", "$CUDA_PATH", "/usr/local/cuda", NULL};
static const char *const amd_dirs[] = {"$ROCM_PATH", "/opt/rocm", NULL};

int mp_gpu_find_tool(const char *name, char *out, size_t out_len)
{
    if (mp_proc_which(name, out, out_len) == 0)
        return 0;
    if (strchr(name, '/'))
        return MP_ENOTFOUND;
    bool amd = strncmp(name, "hip", 3) == 0 || strncmp(name, "roc", 3) == 0 ||
               strncmp(name, "amd", 3) == 0;
    for (const char *const *d = amd ? amd_dirs : nvidia_dirs; *d; d++) {
        const char *base = *d;
        if (base[0] == '$' && !(base = getenv(base + 1)))
            continue;
        if (!*base)
            continue;
        char dir[2048];
        if (snprintf(dir, sizeof(dir), "%s/bin", base) >= (int)sizeof(dir))
            continue;
        if (mp_proc_which_in(name, dir, out, out_len) == 0)
            return 0;
    }
    return MP_ENOTFOUND;
}

/* Runs path with args; true when it exited 0. r is always initialised. */
static bool run_tool(const char *path, const char *const *args, double timeout_s,
                     struct mp_proc_result *r, char *why, size_t why_len)
{
    const char *argv[16];
    size_t n = 0;
    argv[n++] = path;
    for (; args && *args && n + 1 < sizeof(argv) / sizeof(argv[0]); args++)
        argv[n++] = *args;
    argv[n] = NULL;
    struct mp_proc_opts o = {
        .timeout_s = timeout_s, .grace_s = 2.0, .capture_max = TOOL_OUTPUT_MAX};
    struct mp_diag d;
    mp_diag_clear(&d);
    if (mp_proc_run(argv, &o, r, &d) != 0) {
        gpu_copy(why, why_len, d.msg, strlen(d.msg));
        return false;
    }
    if (!mp_proc_result_ok(r)) {
        char how[160];
        mp_proc_describe(r, timeout_s, how, sizeof(how));
        /* The first line of stderr usually says why ("couldn't communicate
         * with the NVIDIA driver"). */
        const char *e = mp_buf_cstr(&r->err);
        if (!*e)
            e = mp_buf_cstr(&r->out);
        size_t el = strcspn(e, "\n");
        if (el > 100)
            el = 100;
        snprintf(why, why_len, "%s%s%.*s", how, el ? ": " : "", (int)el, e);
        return false;
    }
    return true;
}

static void finish(struct mp_gpu_info *info, enum mp_gpu_vendor v, enum mp_gpu_source s)
{
    info->vendor = v;
    info->source = s;
    const struct mp_gpu_device *g = &info->gpus[0];
    snprintf(info->architecture, sizeof(info->architecture), "%s", g->arch);
    snprintf(info->driver_version, sizeof(info->driver_version), "%s", g->driver);
}

/* Drops what a failed parse left half-done, keeping notes and tools. */
static void drop_devices(struct mp_gpu_info *info)
{
    free(info->gpus);
    info->gpus = NULL;
    info->count = 0;
}

/* One CLI source: find it, run it, parse it. Returns the devices added,
 * or MP_ENOMEM. */
static int try_cli(struct mp_gpu_info *info, const char *tool, const char *const *args,
                   double timeout_s,
                   int (*parse)(const char *, size_t, struct mp_gpu_info *, struct mp_diag *))
{
    char path[1024], why[256];
    if (mp_gpu_find_tool(tool, path, sizeof(path)) != 0) {
        gpu_note(info, "%s: not found", tool);
        return 0;
    }
    struct mp_proc_result r;
    int added = 0;
    if (!run_tool(path, args, timeout_s, &r, why, sizeof(why))) {
        gpu_note(info, "%s: %s", tool, why);
        goto out;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    int before = info->count;
    int rc = parse(mp_buf_cstr(&r.out), r.out.len, info, &d);
    if (rc == MP_ENOMEM) {
        added = rc;
        goto out;
    }
    if (rc) {
        char msg[600];
        mp_diag_format(&d, msg, sizeof(msg));
        gpu_note(info, "%s: unexpected output: %.120s", tool, msg);
        info->count = before; /* drop what the failed parse added */
        goto out;
    }
    added = info->count - before;
    if (added == 0 && before == 0)
        gpu_note(info, "%s: no GPUs listed", tool);
out:
    mp_proc_result_fini(&r);
    return added;
}

static bool nvml_disabled(const struct mp_gpu_detect_opts *o)
{
    const char *e = getenv("MAGPIE_NO_NVML");
    return o->no_nvml || (e && *e && strcmp(e, "0") != 0);
}

static int detect_devices(struct mp_gpu_info *info, const struct mp_gpu_detect_opts *o)
{
    double t = o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
    int n;

    if (nvml_disabled(o)) {
        gpu_note(info, "nvml: disabled (MAGPIE_NO_NVML)");
    } else {
        if ((n = gpu_probe_nvml(info)) < 0)
            return n;
        if (n > 0) {
            finish(info, MP_GPU_VENDOR_NVIDIA, MP_GPU_SRC_NVML);
            return 0;
        }
        drop_devices(info);
    }

    if ((n = try_cli(info, "nvidia-smi", nvidia_smi_query, t, mp_gpu_parse_nvidia_smi_csv)) < 0)
        return n;
    if (n == 0 && info->nnotes > 0 && strstr(info->notes[info->nnotes - 1], "compute_cap"))
        n = try_cli(info, "nvidia-smi", nvidia_smi_query_old, t, mp_gpu_parse_nvidia_smi_csv);
    if (n < 0)
        return n;
    if (n > 0) {
        finish(info, MP_GPU_VENDOR_NVIDIA, MP_GPU_SRC_NVIDIA_SMI);
        return 0;
    }

    static const char *const amd_smi_args[] = {"static", "--json", NULL};
    if ((n = try_cli(info, "amd-smi", amd_smi_args, t, mp_gpu_parse_amd_smi_json)) < 0)
        return n;
    if (n > 0) {
        finish(info, MP_GPU_VENDOR_AMD, MP_GPU_SRC_AMD_SMI);
        return 0;
    }

    static const char *const rocm_smi_args[] = {"--showproductname", NULL};
    static const char *const no_args[] = {NULL};
    if ((n = try_cli(info, "rocm-smi", rocm_smi_args, t, mp_gpu_parse_rocm_smi_product)) < 0)
        return n;
    if (n > 0) {
        /* Older rocm-smi prints no "GFX Version": rocminfo has the arch. */
        bool need_arch = false;
        for (int i = 0; i < info->count; i++)
            need_arch |= !info->gpus[i].arch[0];
        if (need_arch && try_cli(info, "rocminfo", no_args, t, mp_gpu_parse_rocminfo) < 0)
            return MP_ENOMEM;
        finish(info, MP_GPU_VENDOR_AMD, MP_GPU_SRC_ROCM_SMI);
        return 0;
    }

    if ((n = try_cli(info, "rocminfo", no_args, t, mp_gpu_parse_rocminfo)) < 0)
        return n;
    if (n > 0)
        finish(info, MP_GPU_VENDOR_AMD, MP_GPU_SRC_ROCMINFO);
    return 0;
}

/* "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0.88";
 * "HIP version: 6.2.41133-dd7f95766" -> "6.2.41133-dd7f95766";
 * "Version 2025.3.1.0 (build ...)" -> "2025.3.1.0". Else the last line. */
static void parse_version(const char *text, char *out, size_t len)
{
    const char *p;
    out[0] = '\0';
    if ((p = strstr(text, ", V")) != NULL) {
        p += 3;
    } else if ((p = strstr(text, "HIP version: ")) != NULL) {
        p += 13;
    } else if ((p = strstr(text, "\nVersion ")) != NULL) {
        p += 9;
    } else {
        /* Last non-empty line. */
        const char *end = text + strlen(text);
        while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
            end--;
        p = end;
        while (p > text && p[-1] != '\n')
            p--;
        gpu_copy(out, len, p, (size_t)(end - p));
        return;
    }
    size_t n = strcspn(p, " \t\r\n");
    gpu_copy(out, len, p, n);
}

void mp_gpu_detect_tools(struct mp_gpu_info *info, const struct mp_gpu_detect_opts *opts)
{
    static const struct mp_gpu_detect_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    for (int i = 0; i < MP_GPU_TOOL_COUNT; i++) {
        struct mp_gpu_tool *t = &info->tools[i];
        t->name = tool_names[i];
        t->found = mp_gpu_find_tool(t->name, t->path, sizeof(t->path)) == 0;
        t->version[0] = '\0';
        /* Only where asking is cheap and the output format is known; the
         * rocprof tools are Python programs that take seconds to start. */
        bool ask = i == MP_GPU_TOOL_NVCC || i == MP_GPU_TOOL_HIPCC || i == MP_GPU_TOOL_NCU;
        if (!t->found || !ask || opts->no_versions)
            continue;
        static const char *const version_args[] = {"--version", NULL};
        struct mp_proc_result r;
        char why[256];
        if (run_tool(t->path, version_args, VERSION_TIMEOUT_S, &r, why, sizeof(why)))
            parse_version(mp_buf_cstr(&r.out), t->version, sizeof(t->version));
        else
            mp_log(MP_LOG_DEBUG, "gpu: %s --version: %s", t->path, why);
        mp_proc_result_fini(&r);
    }
}

int mp_gpu_detect(struct mp_gpu_info *info, const struct mp_gpu_detect_opts *opts,
                  struct mp_diag *d)
{
    static const struct mp_gpu_detect_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    mp_gpu_info_init(info);
    int rc = detect_devices(info, opts);
    if (rc) {
        mp_gpu_info_fini(info);
        info->vendor = MP_GPU_VENDOR_NONE;
        info->source = MP_GPU_SRC_NONE;
        return mp_diag_set(d, rc, "GPU detection: %s", mp_strerror(rc));
    }
    if (!opts->no_tools)
        mp_gpu_detect_tools(info, opts);
    return 0;
}
