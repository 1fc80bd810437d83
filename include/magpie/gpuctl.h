/* magpie gpuctl: GPU hardware control (power limit, locked clocks, reset).
 *
 * NVIDIA through NVML (libnvidia-ml.so.1 through dlopen; MAGPIE_NVML_LIB names
 * another library, which is how the tests load their stub), AMD through
 * amd-smi, or rocm-smi when amd-smi is absent. Changing these settings needs
 * root (NVML answers "Insufficient Permissions" otherwise); reading them does
 * not.
 *
 * The settings follow Magpie's `gpu.hardware` section: power.limit_watts,
 * frequency.gpu_clock_mhz / mem_clock_mhz ([min, max] lock ranges, NVIDIA and
 * AMD), frequency.gpu_clock_level / mem_clock_level (AMD DPM levels),
 * reset_after_benchmark, per_gpu.<id> overriding default key by key.
 *
 * A session (mp_gpuctl_session_*) applies a config and remembers what it
 * changed, so that it can be put back: the power limit to the value read
 * before (AMD: the driver default, as the value before is not read), locked
 * clocks and levels unlocked (neither NVML nor the AMD tools report a lock,
 * so "back" means "no lock").
 */
#ifndef MAGPIE_GPUCTL_H
#define MAGPIE_GPUCTL_H

#include <stdbool.h>

#include <magpie/base.h>

struct mp_yaml_node;

#define MP_GPUCTL_MAX_IDS 64

/* What to set on one GPU. Unset fields leave the hardware alone. */
struct mp_gpu_setting {
    double power_limit_w; /* > 0 set, 0 unset */
    int gpu_clock_mhz[2]; /* [min, max]; both 0 = unset */
    int mem_clock_mhz[2]; /* [min, max]; both 0 = unset */
    int gpu_clock_level;  /* AMD DPM level, -1 = unset */
    int mem_clock_level;  /* AMD DPM level, -1 = unset */
};

void mp_gpu_setting_init(struct mp_gpu_setting *s);
bool mp_gpu_setting_empty(const struct mp_gpu_setting *s);

/* Magpie's `gpu:` section (device_ids, hardware.*). */
struct mp_gpu_hw_config {
    bool present;     /* a gpu.hardware section with something to set was given */
    bool enabled;     /* hardware.enabled (true) */
    bool reset_after; /* hardware.reset_after_benchmark (true) */
    int device_ids[MP_GPUCTL_MAX_IDS];
    int n_device_ids; /* gpu.device_ids; 0 = every GPU */
    struct mp_gpu_setting def;
    int per_gpu_id[MP_GPUCTL_MAX_IDS];
    struct mp_gpu_setting per_gpu[MP_GPUCTL_MAX_IDS];
    int n_per_gpu;
};

void mp_gpu_hw_config_init(struct mp_gpu_hw_config *c);
/* Reads a `gpu:` mapping (NULL or a YAML null = nothing). Errors name the
 * file:line:col and the field (gpu.hardware.default.power.limit_watts). */
int mp_gpu_hw_config_load(struct mp_gpu_hw_config *c, const struct mp_yaml_node *gpu,
                          struct mp_diag *d);
/* The setting for GPU id: default, then per_gpu.<id> key by key. */
void mp_gpu_hw_config_for(const struct mp_gpu_hw_config *c, int id, struct mp_gpu_setting *out);

enum mp_gpuctl_backend {
    MP_GPUCTL_AUTO = 0, /* NVML, then amd-smi, then rocm-smi */
    MP_GPUCTL_NVML,
    MP_GPUCTL_AMD_SMI,
    MP_GPUCTL_ROCM_SMI,
};

const char *mp_gpuctl_backend_name(enum mp_gpuctl_backend b); /* "nvml", "amd-smi", ... */

/* What one GPU has now. Numbers are -1 when unknown. */
struct mp_gpuctl_state {
    int index;
    char name[96];
    double power_limit_w;
    double power_default_w;
    double power_min_w;
    double power_max_w;
    double sm_clock_mhz;
    double sm_clock_max_mhz;
    double mem_clock_mhz;
    double mem_clock_max_mhz;
};

struct mp_gpuctl_opts {
    enum mp_gpuctl_backend backend;
    double timeout_s; /* per amd-smi / rocm-smi call, <= 0 = 30 s */
};

struct mp_gpuctl;

/* Opens the backend. MP_ENOTFOUND (with the reasons in d) when none works. */
int mp_gpuctl_open(struct mp_gpuctl **out, const struct mp_gpuctl_opts *o, struct mp_diag *d);
void mp_gpuctl_close(struct mp_gpuctl *c);
enum mp_gpuctl_backend mp_gpuctl_which(const struct mp_gpuctl *c);
/* Number of GPUs (AMD: as amd-smi / rocm-smi number them, from detection). */
int mp_gpuctl_count(const struct mp_gpuctl *c);
int mp_gpuctl_query(struct mp_gpuctl *c, int idx, struct mp_gpuctl_state *st, struct mp_diag *d);
/* Checks s against what GPU idx allows (power range, clock maxima, levels on
 * NVIDIA) and appends one line per change to out ("GPU 0 (NAME): power limit
 * 700 W -> 500 W"). Returns the number of changes (>= 0) or MP_EINVAL. Changes
 * nothing. */
int mp_gpuctl_plan(struct mp_gpuctl *c, int idx, const struct mp_gpu_setting *s, struct mp_buf *out,
                   struct mp_diag *d);
/* Applies s to GPU idx. Stops at the first failure (what was set stays set:
 * the caller resets). MP_EPERM-like failures come back as MP_EIO with the
 * backend's message ("nvmlDeviceSetPowerManagementLimit: Insufficient
 * Permissions") in d. */
int mp_gpuctl_apply(struct mp_gpuctl *c, int idx, const struct mp_gpu_setting *s,
                    struct mp_diag *d);
/* Power limit to the default, clocks unlocked. Lines of what it did go to
 * out (may be NULL); dry_run only writes the lines. */
int mp_gpuctl_reset(struct mp_gpuctl *c, int idx, bool dry_run, struct mp_buf *out,
                    struct mp_diag *d);

/* ---- apply a config around a run, put it back afterwards ---- */
struct mp_gpuctl_session;

/* Applies cfg to its device_ids (every GPU when none) and remembers what it
 * changed. A failure puts back what was already changed before returning.
 * Lines of what was done go to log (may be NULL). *out is NULL when the
 * config sets nothing (disabled or empty). */
int mp_gpuctl_session_apply(const struct mp_gpu_hw_config *cfg, const struct mp_gpuctl_opts *o,
                            struct mp_buf *log, struct mp_gpuctl_session **out, struct mp_diag *d);
/* Puts back what the session changed (power limit to the value read before,
 * clocks unlocked); keeps going past failures and reports the first. */
int mp_gpuctl_session_restore(struct mp_gpuctl_session *s, struct mp_buf *log, struct mp_diag *d);
void mp_gpuctl_session_free(struct mp_gpuctl_session *s);

#endif
