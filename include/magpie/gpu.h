/* magpie gpu: which GPUs this machine has and which GPU tools it can run.
 *
 * Detection order: NVML (libnvidia-ml.so.1 through dlopen, so magpie needs
 * no CUDA at build or run time), then nvidia-smi, then amd-smi, rocm-smi and
 * rocminfo. The first source that reports at least one GPU wins. Setting
 * MAGPIE_NO_NVML=1 skips NVML, so the command-line tools (or stand-ins for
 * them on PATH) are used even on a machine with a driver.
 *
 * Tools (nvcc, hipcc, ncu, rocprofv3, rocprof-compute) are looked up on PATH
 * and then in the usual install directories ($CUDA_HOME/bin, $CUDA_PATH/bin,
 * /usr/local/cuda/bin; $ROCM_PATH/bin, /opt/rocm/bin).
 *
 * The parsers of the tools' outputs are public so that tests and other
 * modules can feed them recorded text.
 */
#ifndef MAGPIE_GPU_H
#define MAGPIE_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/base.h>

enum mp_gpu_vendor { MP_GPU_VENDOR_NONE = 0, MP_GPU_VENDOR_NVIDIA, MP_GPU_VENDOR_AMD };

/* Where the device list came from. */
enum mp_gpu_source {
    MP_GPU_SRC_NONE = 0,
    MP_GPU_SRC_NVML,
    MP_GPU_SRC_NVIDIA_SMI,
    MP_GPU_SRC_AMD_SMI,
    MP_GPU_SRC_ROCM_SMI,
    MP_GPU_SRC_ROCMINFO,
};

#define MP_GPU_MAX_DEVICES 256
#define MP_GPU_MAX_NOTES 8

/* One GPU. Numbers are -1 when unknown (0 is a valid reading for most). */
struct mp_gpu_device {
    int index;       /* as the source numbers them (nvidia-smi: PCI order) */
    char name[128];  /* "NVIDIA H200", "AMD Instinct MI300X" */
    char arch[32];   /* "sm_90", "gfx942"; "" unknown */
    char family[32]; /* "Hopper", "CDNA 3"; "" unknown */
    int cc_major;    /* NVIDIA compute capability, -1 unknown / not NVIDIA */
    int cc_minor;
    bool arch_from_name; /* the tool gave no compute capability: arch comes from
                            magpie's name table (old drivers) */
    long long memory_total_mib;
    long long memory_used_mib;
    char driver[64]; /* driver version */
    char uuid[96];
    char pci_bus_id[32];
    double utilization_pct; /* these are readings at detection time */
    double temperature_c;
    double power_draw_w;
    double power_limit_w;
    double sm_clock_mhz;
    double sm_clock_max_mhz;
    double mem_clock_mhz;
};

enum mp_gpu_tool_id {
    MP_GPU_TOOL_NVCC = 0,
    MP_GPU_TOOL_HIPCC,
    MP_GPU_TOOL_NCU,
    MP_GPU_TOOL_ROCPROFV3,
    MP_GPU_TOOL_ROCPROF_COMPUTE,
    MP_GPU_TOOL_COUNT
};

struct mp_gpu_tool {
    const char *name; /* static: "nvcc", ... */
    bool found;
    char path[1024];
    char version[128]; /* "13.0.88"; "" when not known (or not asked) */
};

/* Everything detection found. Owns gpus; mp_gpu_info_fini frees it. */
struct mp_gpu_info {
    enum mp_gpu_vendor vendor; /* of the GPUs listed, NONE when none */
    enum mp_gpu_source source;
    int count;
    struct mp_gpu_device *gpus; /* count entries */
    char architecture[32];      /* GPU 0's arch, Magpie's "architecture"; "" none */
    char driver_version[64];    /* GPU 0's driver */
    char cuda_version[16];      /* highest CUDA the driver supports ("13.0"), NVML only */
    struct mp_gpu_tool tools[MP_GPU_TOOL_COUNT];
    /* Why sources were passed over ("nvidia-smi: not found"), in order. */
    int nnotes;
    char notes[MP_GPU_MAX_NOTES][160];
};

struct mp_gpu_detect_opts {
    bool no_nvml;     /* skip NVML (also when MAGPIE_NO_NVML is set and not "0") */
    bool no_tools;    /* do not look for compilers and profilers */
    bool no_versions; /* look for tools but do not run them for their versions */
    double timeout_s; /* limit per command run, <= 0 = 20 s */
};

void mp_gpu_info_init(struct mp_gpu_info *info);
void mp_gpu_info_fini(struct mp_gpu_info *info);

/* Fills info (initialised here). No GPU is not an error: the result then
 * has count 0 and source NONE. Returns 0, or MP_ENOMEM. opts may be NULL. */
int mp_gpu_detect(struct mp_gpu_info *info, const struct mp_gpu_detect_opts *opts,
                  struct mp_diag *d);
/* Only the tools part of mp_gpu_detect. */
void mp_gpu_detect_tools(struct mp_gpu_info *info, const struct mp_gpu_detect_opts *opts);
/* Finds a GPU tool: PATH first, then the install directories above. */
int mp_gpu_find_tool(const char *name, char *out, size_t out_len);

/* "NVIDIA", "AMD", "UNKNOWN". */
const char *mp_gpu_vendor_name(enum mp_gpu_vendor v);
/* "nvml", "nvidia-smi", "amd-smi", "rocm-smi", "rocminfo", "none". */
const char *mp_gpu_source_name(enum mp_gpu_source s);
/* Compiler and profiler Magpie uses for the vendor: nvcc / ncu, hipcc /
 * rocprof-compute; NULL when no GPU was found. */
const char *mp_gpu_compiler(const struct mp_gpu_info *info);
const char *mp_gpu_profiler(const struct mp_gpu_info *info);

/* ---- sampling one GPU's conditions (NVML kept open) ---- */
struct mp_gpu_sample {
    double sm_clock_mhz, power_w, temp_c, utilization_pct; /* NAN when unknown */
};
struct mp_gpu_sampler;
/* Opens NVML once and finds the GPU with this UUID (the first GPU when uuid
 * is NULL or ""); NULL when NVML is missing, off (MAGPIE_NO_NVML) or does not
 * list it. */
struct mp_gpu_sampler *mp_gpu_sampler_open(const char *uuid);
/* Now's SM clock, power draw, temperature and utilisation; all NAN when s is
 * NULL. */
void mp_gpu_sampler_read(struct mp_gpu_sampler *s, struct mp_gpu_sample *out);
void mp_gpu_sampler_close(struct mp_gpu_sampler *s);

/* ---- architecture names ---- */
/* "sm_90" from 9.0, "sm_120" from 12.0. */
void mp_gpu_nvidia_arch(int major, int minor, char *out, size_t len);
/* "Hopper" from 9.0; "" when unknown. */
const char *mp_gpu_nvidia_family(int major, int minor);
/* Compute capability from a product name ("NVIDIA A100-SXM4-80GB" -> 8.0),
 * for drivers too old to report it. false when the name is not known. */
bool mp_gpu_nvidia_cc_from_name(const char *name, int *major, int *minor);
/* "CDNA 3" from "gfx942"; "" when unknown. */
const char *mp_gpu_amd_family(const char *gfx);

/* ---- parsers of tool output; each appends devices to info ---- */
/* nvidia-smi --query-gpu=... --format=csv (with the header line, which names
 * the columns; units are stripped). Needs at least index and name. */
int mp_gpu_parse_nvidia_smi_csv(const char *text, size_t len, struct mp_gpu_info *info,
                                struct mp_diag *d);
/* amd-smi static --json: a list of GPUs, or {"gpu_data": [...]} (newer). */
int mp_gpu_parse_amd_smi_json(const char *text, size_t len, struct mp_gpu_info *info,
                              struct mp_diag *d);
/* rocm-smi --showproductname: "GPU[0] : Card Series: ..." lines. */
int mp_gpu_parse_rocm_smi_product(const char *text, size_t len, struct mp_gpu_info *info,
                                  struct mp_diag *d);
/* rocminfo: GPU agents ("Device Type: GPU") with "Name: gfxNNN". When info
 * already has devices (from rocm-smi), fills in their missing arch instead
 * of adding new ones. */
int mp_gpu_parse_rocminfo(const char *text, size_t len, struct mp_gpu_info *info,
                          struct mp_diag *d);

/* ---- reports ---- */
/* Magpie's --gpu-info text ("GPU Information:" ...) plus a device list and
 * the tools found. */
int mp_gpu_info_text(const struct mp_gpu_info *info, struct mp_buf *b);
/* One JSON object: vendor, architecture, detected, compiler, profiler
 * (Magpie's keys), then source, driver_version, cuda_version, gpus[],
 * tools{}, notes[]. Ends with a newline. */
int mp_gpu_info_json(const struct mp_gpu_info *info, struct mp_buf *b);

#endif
