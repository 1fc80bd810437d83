/* magpie calib: the roofline's ceiling, measured (`magpie gpu calibrate`).
 *
 * Measures what this GPU reaches, as opposed to its data sheet: dense GEMM
 * throughput per data type through the vendor's BLAS-Lt library (cuBLASLt,
 * opened with dlopen) over a search of shapes and the library's algorithm
 * candidates, with each measured kernel's output checked; vector (non-tensor)
 * FMA throughput and HBM read/write/copy bandwidth, L2 read bandwidth and
 * kernel launch overhead with kernels of magpie's own compiled at run time
 * by NVRTC (dlopen). The result is a TraceLens arch JSON (name, mem_bw_gbps,
 * max_achievable_tflops) with magpie's own fields beside it, and a cache of
 * such files per GPU (UUID, driver, power limit) that the roofline picks up
 * (mp_roofline_arch_calibrated). docs/calibrate.md says how each figure is
 * measured. The library never prints; progress goes through a callback.
 *
 * NVIDIA only today: AMD (hipBLASLt, hipRTC) is not implemented and says so.
 */
#ifndef MAGPIE_CALIB_H
#define MAGPIE_CALIB_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

enum mp_calib_status {
    MP_CALIB_OK = 0,
    MP_CALIB_UNSUPPORTED, /* the GPU or library has no such unit: note says which */
    MP_CALIB_FAILED,      /* tried and failed (library error, wrong output): note says why */
    MP_CALIB_SKIPPED,     /* not asked for (--dtypes, --quick) */
};

enum mp_calib_kind { MP_CALIB_GEMM = 0, MP_CALIB_VECTOR, MP_CALIB_MEMORY, MP_CALIB_EXTRA };

/* One measured figure. */
struct mp_calib_item {
    char key[32]; /* TraceLens compute spec ("matrix_bf16", "vector_fp32") or magpie's
                     ("matrix_tf32", "matrix_fp8_e5m2", "hbm_read", "hbm_write", "hbm_copy",
                     "l2_read", "launch_overhead", "launch_overhead_graph") */
    enum mp_calib_kind kind;
    enum mp_calib_status status;
    const char *unit; /* static: "TFLOP/s", "GB/s", "us" */
    double value;     /* median over the repeats */
    double min, max;  /* over the repeats */
    double cov_pct;   /* coefficient of variation of the repeats, % */
    int repeats;
    char note[240]; /* why not OK, or a remark ("int32 output") */
    /* GEMM: the best shape (M, N, K, "TN": A and B K-major) and algorithm */
    long m, n, k;
    char algo[96];
    int shapes_tried, algos_tried;
    bool checked;       /* output compared with a float64 host reference */
    double max_rel_err; /* worst |D - ref| / sum |a b| over the sampled entries */
    double bytes;       /* memory and vector: bytes (or FLOPs per launch) of one launch */
    /* conditions while it ran (NAN unknown) */
    double sm_clock_mhz, power_w, temp_c;
};

#define MP_CALIB_MAX_ITEMS 32

struct mp_calib_result {
    char device_name[128];
    char uuid[96];
    char driver[64];
    char arch[16]; /* "sm_90" */
    int cc_major, cc_minor;
    int sms;
    double memory_gb;                                          /* total device memory, GB (1e9) */
    double l2_mb;                                              /* MiB */
    double power_limit_w, sm_clock_max_mhz, mem_clock_max_mhz; /* NAN unknown */
    double temp_start_c, temp_end_c;
    char blas[96];      /* "cuBLASLt 130001 (libcublasLt.so.13)" */
    char rtc[96];       /* "NVRTC 13.0" */
    char date[32];      /* ISO 8601 UTC, start */
    char settings[160]; /* GPU settings applied for the calibration by the caller
                           ("power limit 500 W, SM clock 1500-1500 MHz"), "" none */
    char quick;         /* ran with quick */
    double seconds;     /* wall time of the whole calibration */
    struct mp_calib_item items[MP_CALIB_MAX_ITEMS];
    int n_items;
};

typedef void (*mp_calib_progress_fn)(const char *msg, void *user);

struct mp_calib_opts {
    int device;         /* CUDA device ordinal */
    const char *dtypes; /* comma list of fp64,fp32,tf32,fp16,bf16,fp8,fp8_e5m2,int8,fp4,fp6
                           (NULL: all); "none" measures no GEMM */
    bool quick;         /* fewer shapes and repeats (a few seconds) */
    bool thorough;      /* a wide shape search and every algorithm the library offers */
    bool no_memory;     /* skip vector/bandwidth/extras */
    bool allow_busy;    /* measure although the GPU looks busy */
    int repeats;        /* timed repeats per figure, 0 = default (5; quick 3) */
    mp_calib_progress_fn progress;
    void *user;
};

/* Runs the calibration. 0, or an error in d: MP_ENOTFOUND (no CUDA driver,
 * no device), MP_EUNSUP (a library missing: the message names what to
 * install), MP_ECANCEL when the GPU is busy and allow_busy is false,
 * MP_EIO. A figure that fails alone is an item with status FAILED,
 * not an error. */
int mp_calib_run(const struct mp_calib_opts *o, struct mp_calib_result *r, struct mp_diag *d);

/* Parses a dtype list for opts.dtypes; 0 or MP_EINVAL with the bad word in d. */
int mp_calib_check_dtypes(const char *list, struct mp_diag *d);

/* The TraceLens arch JSON of r with magpie's fields under "magpie". */
int mp_calib_json(const struct mp_calib_result *r, struct mp_buf *b);
/* A terminal table of r; peak (may be NULL) adds a "% of data sheet" column
 * from a built-in arch's figures: pass the value of spec key or NAN. */
int mp_calib_text(const struct mp_calib_result *r, double (*peak)(const char *key, void *u),
                  void *u, struct mp_buf *b);
/* Reads back a file that mp_calib_json wrote (the "magpie" part and the
 * figures), for `gpu show` and hardware_spec. MP_EPARSE/MP_EINVAL in d. */
int mp_calib_load(const char *path, struct mp_calib_result *r, struct mp_diag *d);

/* The cache file name for r inside mp_roofline_calibration_dir(): one per
 * GPU UUID, driver version and power limit. */
int mp_calib_cache_name(const struct mp_calib_result *r, char *out, size_t len);
/* Writes r's JSON into the calibration cache (atomically); path_out gets the
 * file. */
int mp_calib_cache_save(const struct mp_calib_result *r, char *path_out, size_t len,
                        struct mp_diag *d);

/* The calibration cache as a JSON array, one short object per file (file,
 * name, uuid, driver, power_limit_w, date, mem_bw_gbps,
 * max_achievable_tflops), ordered by file name; only uuid's when uuid is
 * not NULL. "[]" when the cache is empty or absent. */
int mp_calib_cache_json(const char *uuid, struct mp_buf *b);

#endif
