/* Private to the calib module: the CUDA driver API, NVRTC and cuBLASLt
 * entry points (all through dlopen, so magpie builds and runs without the
 * CUDA toolkit), the timer every figure is measured with, and the parts
 * calib.c puts together (gemm.c, kern.c). */
#ifndef MAGPIE_CALIB_INT_H
#define MAGPIE_CALIB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <magpie/calib.h>

struct mp_gpu_sampler;

typedef int cal_res;
typedef unsigned long long cal_dptr;
typedef void *cal_obj;

struct cal_cuda {
    void *lib;
    cal_res (*Init)(unsigned);
    cal_res (*DeviceGet)(int *, int);
    cal_res (*DeviceGetCount)(int *);
    cal_res (*DeviceGetName)(char *, int, int);
    cal_res (*DeviceGetAttribute)(int *, int, int);
    cal_res (*DeviceTotalMem)(size_t *, int);
    cal_res (*DevicePrimaryCtxRetain)(cal_obj *, int);
    cal_res (*CtxSetCurrent)(cal_obj);
    cal_res (*ModuleLoadData)(cal_obj *, const void *);
    cal_res (*ModuleUnload)(cal_obj);
    cal_res (*ModuleGetFunction)(cal_obj *, cal_obj, const char *);
    cal_res (*MemAlloc)(cal_dptr *, size_t);
    cal_res (*MemFree)(cal_dptr);
    cal_res (*MemcpyDtoH)(void *, cal_dptr, size_t);
    cal_res (*MemsetD8Async)(cal_dptr, unsigned char, size_t, cal_obj);
    cal_res (*LaunchKernel)(cal_obj, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, cal_obj, void **, void **);
    cal_res (*StreamCreate)(cal_obj *, unsigned);
    cal_res (*StreamSynchronize)(cal_obj);
    cal_res (*StreamBeginCapture)(cal_obj, int);
    cal_res (*StreamEndCapture)(cal_obj, cal_obj *);
    cal_res (*GraphInstantiate)(cal_obj *, cal_obj, unsigned long long);
    cal_res (*GraphLaunch)(cal_obj, cal_obj);
    cal_res (*GraphExecDestroy)(cal_obj);
    cal_res (*GraphDestroy)(cal_obj);
    cal_res (*EventCreate)(cal_obj *, unsigned);
    cal_res (*EventRecord)(cal_obj, cal_obj);
    cal_res (*EventSynchronize)(cal_obj);
    cal_res (*EventElapsedTime)(float *, cal_obj, cal_obj);
    cal_res (*GetErrorString)(cal_res, const char **);
    cal_res (*DriverGetVersion)(int *);
};

struct cal_nvrtc {
    void *lib;
    int (*Version)(int *, int *);
    int (*CreateProgram)(void **, const char *, const char *, int, const char *const *,
                         const char *const *);
    int (*CompileProgram)(void *, int, const char *const *);
    int (*GetPTXSize)(void *, size_t *);
    int (*GetPTX)(void *, char *);
    int (*GetCUBINSize)(void *, size_t *);
    int (*GetCUBIN)(void *, char *);
    int (*GetProgramLogSize)(void *, size_t *);
    int (*GetProgramLog)(void *, char *);
    int (*DestroyProgram)(void **);
    const char *(*GetErrorString)(int);
};

/* cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t (cublasLt.h) */
struct cal_lt_algo {
    uint64_t data[8];
};

struct cal_lt_heur {
    struct cal_lt_algo algo;
    size_t workspace;
    int state;
    float waves;
    int reserved[4];
};

struct cal_blaslt {
    void *lib;
    char soname[64];
    int (*Create)(void **);
    int (*Destroy)(void *);
    size_t (*GetVersion)(void);
    const char *(*GetStatusString)(int);
    int (*DescCreate)(void **, int, int);
    int (*DescDestroy)(void *);
    int (*DescSetAttribute)(void *, int, const void *, size_t);
    int (*LayoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
    int (*LayoutDestroy)(void *);
    int (*PrefCreate)(void **);
    int (*PrefDestroy)(void *);
    int (*PrefSetAttribute)(void *, int, const void *, size_t);
    int (*GetHeuristic)(void *, void *, void *, void *, void *, void *, void *, int,
                        struct cal_lt_heur *, int *);
    int (*AlgoConfigGetAttribute)(const struct cal_lt_algo *, int, void *, size_t, size_t *);
    int (*Matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
                  const void *, const void *, void *, void *, void *, const struct cal_lt_algo *,
                  void *, size_t, void *);
};

/* The device everything runs on, with a stream and two events of its own. */
struct cal_dev {
    struct cal_cuda cu;
    struct cal_nvrtc rtc; /* lib NULL: not found (vector and memory figures skipped) */
    struct cal_blaslt lt; /* lib NULL: not found (GEMM figures skipped) */
    int dev, cc_major, cc_minor, sms, l2_bytes, max_threads;
    size_t mem_bytes;
    cal_obj ctx, stream, ev0, ev1;
    cal_obj mod;   /* the NVRTC module of kern.c */
    char uuid[64]; /* "GPU-xxxxxxxx-...", as NVML writes it; "" unknown */
    char name[128];
    struct mp_gpu_sampler *smp; /* NVML kept open for cal_conditions; NULL: none */
    bool smp_tried;
    char rtc_err[240], lt_err[240];
};

/* cuda.c: opens libcuda and the device (0 or MP_ENOTFOUND/MP_EIO with a
 * message), then NVRTC and cuBLASLt where they are found. */
int cal_open(struct cal_dev *dv, int device, struct mp_diag *d);
void cal_close(struct cal_dev *dv);
/* NVRTC alone (for a driver of CUDA `major`): false with why in err. */
bool cal_nvrtc_open(struct cal_nvrtc *r, int major, char *err, size_t errlen);
const char *cal_err(const struct cal_dev *dv, cal_res r);
/* Device buffer of n bytes or 0 (out of memory). */
cal_dptr cal_alloc(struct cal_dev *dv, size_t n);
void cal_free(struct cal_dev *dv, cal_dptr p);

/* One timed figure: fn(arg) enqueues one unit of work on dv->stream.
 * Warms up, sizes a batch to about batch_ms, then times `repeats` batches
 * with events (a pause of the same length after each, so the power average
 * stays below the cap as in a real step); per unit ms into samples. 0 or
 * the CUDA error. */
typedef cal_res (*cal_work_fn)(struct cal_dev *dv, void *arg);
int cal_time(struct cal_dev *dv, cal_work_fn fn, void *arg, double batch_ms, int repeats,
             double *samples, char *err, size_t errlen);

/* Median / min / max / CoV (%) of n values into item. */
void cal_summarise(const double *v, int n, struct mp_calib_item *it);
/* Reads SM clock, power and temperature now (NVML, opened on the first call
 * and kept until cal_close) into item; NAN when unknown. */
void cal_conditions(struct cal_dev *dv, struct mp_calib_item *it);
struct mp_gpu_device;
/* NVML's view of the GPU with this UUID (any GPU when uuid is ""); false
 * when NVML is missing or does not list it. */
bool cal_nvml_device(const char *uuid, struct mp_gpu_device *out);

/* gemm.c: the GEMM search's candidates (exposed for the unit test of
 * cal_gemm_finalists). */
struct cal_shape {
    long m, n, k;
};

struct cal_cand {
    double tflops; /* screened rate */
    struct cal_shape s;
    struct cal_lt_algo algo;
    bool fast;
    int rank, of;
};

#define CAL_N_KEEP 2
#define CAL_N_SHAPES 12
/* finalists: the CAL_N_KEEP best screened, plus the best of each shape and,
 * for FP8, of each accumulation mode when they are not among them. The
 * short screen picks well among one shape's algorithms but misranks the
 * shapes: on the H200 it put 8192^3 FP8 without fast accumulation above
 * 16384^3 with it in 4 of 5 runs, on an H100 8192^3 TF32 above 16384^3 in
 * 1 of 5 (a CoV of 1.8 % over the 5 runs); timed in full, the larger shape
 * was the faster each time. */
#define CAL_N_FINAL (CAL_N_KEEP + 2 + CAL_N_SHAPES)

/* the screen's results: the overall best, per accumulation mode the best
 * of that mode, and per shape (in the search's order) the best at it */
struct cal_screen {
    struct cal_cand best[CAL_N_KEEP];
    struct cal_cand mode[2];
    struct cal_cand shape[CAL_N_SHAPES];
};

/* the finalists of a GEMM search (gemm.c): the distinct candidates of sc
 * to time in full, best screened first; out holds CAL_N_FINAL */
int cal_gemm_finalists(const struct cal_screen *sc, struct cal_cand *out);

/* gemm.c: one GEMM figure per dtype name ("bf16") into it. */
void cal_gemm(struct cal_dev *dv, const char *dtype, const struct mp_calib_opts *o,
              struct mp_calib_item *it);
/* A cudaDataType_t element i of p as a double (gemm.c; the checks' host
 * reference). */
double cal_decode(int type, const void *p, size_t i);
/* kern.c: builds the module (false: it->note says why), then the vector,
 * memory and extra figures. */
bool cal_kern_build(struct cal_dev *dv, char *err, size_t errlen);
void cal_vector(struct cal_dev *dv, const char *dtype, const struct mp_calib_opts *o,
                struct mp_calib_item *it);
void cal_memory(struct cal_dev *dv, const char *what, const struct mp_calib_opts *o,
                struct mp_calib_item *it);
/* The kernels' CUDA source, and its compilation by NVRTC for sm_MAJMIN
 * (cubin) or compute_MAJMIN (PTX): image malloc'ed, NUL-terminated. */
const char *cal_kern_source(void);
int cal_kern_compile(const struct cal_nvrtc *rtc, int major, int minor, bool cubin, char **image,
                     size_t *len, char *err, size_t errlen);
/* Fills n elements of elem_bytes at p with seeded pseudo-random values of
 * the type (kern.c's fill kernel): "f64", "f32", "f16", "bf16", "e4m3",
 * "e5m2", "i8". */
cal_res cal_fill(struct cal_dev *dv, cal_dptr p, size_t n, const char *type, unsigned seed);

#endif
