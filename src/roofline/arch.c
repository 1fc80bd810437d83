/* GPU architecture specs for the roofline: the built-in table, TraceLens's
 * arch JSON format, device-name detection and the roofline itself.
 *
 * Built-in figures are per-GPU dense (no sparsity) peak rates from the vendor
 * datasheets and architecture whitepapers, except MI300X and MI325X, which
 * carry TraceLens's own bundled "max achievable" values
 * (TraceLens/Agent/Analysis/utils/arch/MI300X.json, MI325X.json) so that
 * reports match TraceLens run with --gpu_arch_platform, and H200, which
 * equals the H200-arch-datasheet.json the shared H200 goldens were made with.
 * docs/perf-model.md gives the citation of every number. "matrix_fp32" is
 * the TF32 tensor-core rate on NVIDIA parts, as in that H200 file. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "roofline_int.h"

struct builtin {
    const char *name;
    double mem_bw_gbps, memory_gb;
    const char *source;

    struct {
        const char *key;
        double tflops;
    } specs[12];
};

static const struct builtin builtins[] = {
    /* NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM: 2,039 GB/s; FP64
     * 9.7, FP64 Tensor 19.5, FP32 19.5, TF32 Tensor 156, BF16/FP16 Tensor 312,
     * INT8 Tensor 624 TOPS, dense); non-tensor FP16 78 / BF16 39 TFLOPS from
     * the NVIDIA A100 Tensor Core GPU Architecture whitepaper, table 1. */
    {"A100",
     2039,
     80,
     "NVIDIA A100 datasheet (SXM 80GB) + A100 architecture whitepaper table 1",
     {{"matrix_fp16", 312},
      {"matrix_bf16", 312},
      {"matrix_fp32", 156},
      {"matrix_fp64", 19.5},
      {"matrix_int8", 624},
      {"vector_fp16", 78},
      {"vector_bf16", 39},
      {"vector_fp32", 19.5},
      {"vector_fp64", 9.7}}},
    /* NVIDIA H100 Tensor Core GPU Architecture whitepaper, table 3 (H100
     * SXM5, dense): FP16/BF16 Tensor 989.4, FP8 Tensor 1978.9, TF32 Tensor
     * 494.7, FP64 Tensor 66.9, INT8 Tensor 1978.9 TOPS, FP16/BF16 non-tensor
     * 133.8, FP32 66.9, FP64 33.5; memory bandwidth 3.35 TB/s, 80 GB (H100
     * datasheet, SXM). */
    {"H100",
     3350,
     80,
     "NVIDIA H100 architecture whitepaper table 3 (SXM5) + H100 datasheet (SXM)",
     {{"matrix_fp16", 989.4},
      {"matrix_bf16", 989.4},
      {"matrix_fp32", 494.7},
      {"matrix_fp64", 66.9},
      {"matrix_fp8", 1978.9},
      {"matrix_int8", 1978.9},
      {"vector_fp16", 133.8},
      {"vector_bf16", 133.8},
      {"vector_fp32", 66.9},
      {"vector_fp64", 33.5}}},
    /* NVIDIA H200 datasheet (SXM): 4.8 TB/s, 141 GB; compute as H100 SXM,
     * rounded as in ../shared/data/traces/h200/H200-arch-datasheet.json. */
    {"H200",
     4800,
     141,
     "NVIDIA H200 datasheet (SXM); values of H200-arch-datasheet.json",
     {{"matrix_fp16", 989},
      {"matrix_bf16", 989},
      {"matrix_fp32", 494},
      {"matrix_fp64", 67},
      {"matrix_fp8", 1979},
      {"matrix_int8", 1979},
      {"vector_fp16", 134},
      {"vector_bf16", 134},
      {"vector_fp32", 67},
      {"vector_fp64", 34}}},
    /* NVIDIA HGX B200 datasheet, per GPU (8-GPU figures / 8, sparse tensor
     * figures / 2): FP4 Tensor 9 PF, FP8 Tensor 4.5 PF, INT8 Tensor 4.5 POPS,
     * FP16/BF16 Tensor 2.25 PF, TF32 Tensor 1.125 PF, FP32 75 TF, FP64 and
     * FP64 Tensor 37 TF; 8 TB/s HBM3e, 180 GB. No non-tensor FP16/BF16 rate
     * is published, so vector_fp16/bf16 are absent (no roofline for them). */
    {"B200",
     8000,
     180,
     "NVIDIA HGX B200 datasheet (per GPU, dense)",
     {{"matrix_fp4", 9000},
      {"matrix_fp8", 4500},
      {"matrix_int8", 4500},
      {"matrix_fp16", 2250},
      {"matrix_bf16", 2250},
      {"matrix_fp32", 1125},
      {"matrix_fp64", 37},
      {"vector_fp32", 75},
      {"vector_fp64", 37}}},
    /* TraceLens/Agent/Analysis/utils/arch/MI300X.json ("max achievable") */
    {"MI300X",
     5300,
     192,
     "TraceLens Agent/Analysis/utils/arch/MI300X.json (max achievable)",
     {{"matrix_fp16", 654},
      {"matrix_bf16", 708},
      {"matrix_fp32", 163},
      {"matrix_fp64", 81},
      {"matrix_fp8", 1273},
      {"matrix_int8", 2600},
      {"vector_fp16", 163},
      {"vector_bf16", 163},
      {"vector_fp32", 81},
      {"vector_fp64", 40}}},
    /* TraceLens/Agent/Analysis/utils/arch/MI325X.json ("max achievable") */
    {"MI325X",
     6000,
     256,
     "TraceLens Agent/Analysis/utils/arch/MI325X.json (max achievable)",
     {{"matrix_fp16", 794},
      {"matrix_bf16", 843},
      {"matrix_fp32", 194},
      {"matrix_fp64", 97},
      {"matrix_fp8", 1519},
      {"matrix_int8", 3094},
      {"vector_fp16", 194},
      {"vector_bf16", 194},
      {"vector_fp32", 97},
      {"vector_fp64", 48}}},
    /* AMD Instinct MI355X product specifications (amd.com), dense peak:
     * FP16/BF16 matrix 2.5 PF, FP8 and INT8 5.0 PF, MXFP4 10 PF, FP32 and
     * FP64 matrix 157.3 / 78.6 TF, FP32 / FP64 vector 157.3 / 78.6 TF;
     * 288 GB HBM3E at 8 TB/s. */
    {"MI355X",
     8000,
     288,
     "AMD Instinct MI355X product specifications (dense peak)",
     {{"matrix_fp16", 2500},
      {"matrix_bf16", 2500},
      {"matrix_fp8", 5000},
      {"matrix_int8", 5000},
      {"matrix_fp4", 10000},
      {"matrix_fp32", 157.3},
      {"matrix_fp64", 78.6},
      {"vector_fp32", 157.3},
      {"vector_fp64", 78.6}}},
};

#define N_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

const char *const *mp_roofline_arch_builtin_names(void)
{
    static const char *const names[] = {"A100",   "H100",   "H200",   "B200",
                                        "MI300X", "MI325X", "MI355X", NULL};
    return names;
}

static void from_builtin(const struct builtin *b, struct mp_roofline_arch *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", b->name);
    out->has_mem_bw = true;
    out->mem_bw_gbps = b->mem_bw_gbps;
    out->memory_gb = b->memory_gb;
    out->source = b->source;
    for (size_t i = 0; i < sizeof(b->specs) / sizeof(b->specs[0]) && b->specs[i].key; i++) {
        snprintf(out->specs[i].key, sizeof(out->specs[i].key), "%s", b->specs[i].key);
        out->specs[i].tflops = b->specs[i].tflops;
        out->n_specs++;
    }
}

/* name compared without case, '-', '_' or spaces ("mi-300x" == "MI300X") */
bool roof_same_name(const char *a, const char *b)
{
    for (;;) {
        while (*a == '-' || *a == '_' || *a == ' ')
            a++;
        while (*b == '-' || *b == '_' || *b == ' ')
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
        a++;
        b++;
    }
}

int mp_roofline_arch_builtin(const char *name, struct mp_roofline_arch *out)
{
    if (!name || !out)
        return MP_EINVAL;

    static const struct {
        const char *alias, *name;
    } aliases[] = {{"H100SXM", "H100"},
                   {"H100SXM5", "H100"},
                   {"A100SXM", "A100"},
                   {"A100SXM480GB", "A100"},
                   {"H200SXM", "H200"}};

    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (roof_same_name(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; i < N_BUILTINS; i++) {
        if (roof_same_name(name, builtins[i].name)) {
            from_builtin(&builtins[i], out);
            return 0;
        }
    }
    return MP_ENOTFOUND;
}

static bool has_token(const char *s, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = s; *p; p++)
        if (!strncasecmp(p, tok, n))
            return true;
    return false;
}

int mp_roofline_arch_datasheet(const char *dev, struct mp_roofline_arch *out)
{
    if (!dev || !out)
        return MP_EINVAL;
    const char *pick = NULL;
    /* only the variants whose figures the built-ins carry: PCIe and NVL
     * boards have other clocks and bandwidths */
    bool pcie = has_token(dev, "PCIe") || has_token(dev, "NVL");
    if (has_token(dev, "MI355X"))
        pick = "MI355X";
    else if (has_token(dev, "MI325X"))
        pick = "MI325X";
    else if (has_token(dev, "MI300X"))
        pick = "MI300X";
    else if (has_token(dev, "B200") && !pcie)
        pick = "B200";
    else if (has_token(dev, "H200") && !pcie)
        pick = "H200";
    else if (has_token(dev, "H100") && !pcie)
        pick = "H100";
    else if (has_token(dev, "A100") && !pcie && has_token(dev, "80GB"))
        pick = "A100";
    if (!pick)
        return MP_ENOTFOUND;
    return mp_roofline_arch_builtin(pick, out);
}

int mp_roofline_arch_from_device_name(const char *dev, struct mp_roofline_arch *out)
{
    if (!dev || !out)
        return MP_EINVAL;
    if (mp_roofline_arch_calibrated(dev, out, NULL, 0) == 0)
        return 0;
    return mp_roofline_arch_datasheet(dev, out);
}

const char *mp_roofline_datasheet_key(const char *spec)
{
    if (!strcmp(spec, "matrix_fp32"))
        return "vector_fp32";
    if (!strcmp(spec, "matrix_tf32"))
        return "matrix_fp32";
    if (!strcmp(spec, "matrix_fp8_e5m2"))
        return "matrix_fp8";
    return spec;
}

double mp_roofline_peak_ratio(const struct mp_roofline_arch *ceiling,
                              const struct mp_roofline_arch *peak, const char *spec,
                              double flops_per_byte)
{
    double tc, tp;
    if (!ceiling || !peak || !spec || !ceiling->has_mem_bw || !peak->has_mem_bw ||
        !(flops_per_byte >= 0) || !mp_roofline_arch_tflops(ceiling, spec, &tc) ||
        !mp_roofline_arch_tflops(peak, ceiling->calibrated ? mp_roofline_datasheet_key(spec) : spec,
                                 &tp))
        return NAN;
    /* roofline time per byte moved under each arch */
    double c = fmax(flops_per_byte / (tc * 1e12), 1 / (ceiling->mem_bw_gbps * 1e9));
    double p = fmax(flops_per_byte / (tp * 1e12), 1 / (peak->mem_bw_gbps * 1e9));
    return p / c;
}

bool mp_roofline_arch_tflops(const struct mp_roofline_arch *a, const char *spec, double *tflops)
{
    if (!a || !spec)
        return false;
    for (int i = 0; i < a->n_specs; i++) {
        if (!strcmp(a->specs[i].key, spec)) {
            if (tflops)
                *tflops = a->specs[i].tflops;
            return true;
        }
    }
    return false;
}

void mp_roofline_roofline(const struct mp_roofline_arch *a, const char *spec, double gflops,
                          bool has_bytes, double bytes, double kernel_time_us,
                          struct mp_roofline_roofline *out)
{
    memset(out, 0, sizeof(*out));
    out->pct = NAN;
    double peak;
    if (!a || !a->has_mem_bw || !has_bytes || !(gflops > 0) ||
        !mp_roofline_arch_tflops(a, spec, &peak))
        return;
    out->valid = true;
    /* the same operation order as TraceLens, so the doubles agree */
    out->compute_us = (gflops * 1e9 / (peak * 1e12)) * 1e6;
    out->memory_us = (bytes / (a->mem_bw_gbps * 1e9)) * 1e6;
    out->roofline_us = out->compute_us > out->memory_us ? out->compute_us : out->memory_us;
    out->compute_bound = out->compute_us >= out->memory_us;
    out->pct = kernel_time_us > 0 ? (out->roofline_us / kernel_time_us) * 100 : NAN;
}

/* ---- TraceLens arch JSON ---- */

/* line:col of the first occurrence of "key" in text, for diagnostics about a
 * field whose value is wrong (jansson keeps no positions for values). */
static void locate(const char *text, size_t len, const char *key, struct mp_diag *d)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl + 2 <= len; i++) {
        if (text[i] == '"' && !strncmp(text + i + 1, key, kl) && text[i + kl + 1] == '"') {
            long line = 1, col = 1;
            for (size_t j = 0; j < i; j++) {
                if (text[j] == '\n') {
                    line++;
                    col = 1;
                } else {
                    col++;
                }
            }
            mp_diag_set_pos(d, (long long)i, line, col);
            return;
        }
    }
}

static int field_err(struct mp_diag *d, const char *text, size_t len, const char *field,
                     const char *key, const char *msg)
{
    mp_diag_set(d, MP_EINVAL, "%s", msg);
    mp_diag_set_field(d, field);
    locate(text, len, key, d);
    return MP_EINVAL;
}

static bool get_number(json_t *v, double *out)
{
    if (json_is_integer(v)) {
        *out = (double)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        *out = json_real_value(v);
        return true;
    }
    return false;
}

/* magpie gpu calibrate's own fields, when the file has them */
static void calibration_origin(json_t *root, struct mp_roofline_arch *out)
{
    json_t *mg = json_object_get(root, "magpie");
    if (!json_is_integer(json_object_get(mg, "calibration")))
        return;
    json_t *g = json_object_get(mg, "gpu"), *date = json_object_get(mg, "date");
    json_t *uuid = json_object_get(g, "uuid");
    out->calibrated = true;
    snprintf(out->origin, sizeof(out->origin), "magpie gpu calibrate, %s, %s",
             json_is_string(date) ? json_string_value(date) : "undated",
             json_is_string(uuid) && *json_string_value(uuid) ? json_string_value(uuid)
                                                              : "GPU unknown");
}

int mp_roofline_arch_parse_json(const char *text, size_t len, const char *label,
                                struct mp_roofline_arch *out, struct mp_diag *d)
{
    if (!text || !out)
        return MP_EINVAL;
    memset(out, 0, sizeof(*out));
    if (label)
        mp_diag_set_file(d, label);
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        mp_diag_set(d, MP_EPARSE, "invalid JSON: %s", je.text);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return MP_EPARSE;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        mp_diag_set(d, MP_EINVAL,
                    "an arch file is a JSON object with name, mem_bw_gbps and "
                    "max_achievable_tflops");
        mp_diag_set_pos(d, 0, 1, 1);
        rc = MP_EINVAL;
        goto out;
    }
    json_t *v = json_object_get(root, "name");
    if (v && !json_is_string(v)) {
        rc = field_err(d, text, len, "name", "name", "expected a string");
        goto out;
    }
    if (v)
        snprintf(out->name, sizeof(out->name), "%s", json_string_value(v));
    v = json_object_get(root, "mem_bw_gbps");
    if (v && !json_is_null(v)) {
        if (!get_number(v, &out->mem_bw_gbps) || !(out->mem_bw_gbps > 0)) {
            rc = field_err(d, text, len, "mem_bw_gbps", "mem_bw_gbps",
                           "expected a positive number (memory bandwidth in GB/s)");
            goto out;
        }
        out->has_mem_bw = true;
    }
    v = json_object_get(root, "memory_gb");
    if (v && !json_is_null(v) && !get_number(v, &out->memory_gb)) {
        rc = field_err(d, text, len, "memory_gb", "memory_gb", "expected a number (GB)");
        goto out;
    }
    v = json_object_get(root, "max_achievable_tflops");
    if (v && !json_is_null(v)) {
        if (!json_is_object(v)) {
            rc = field_err(d, text, len, "max_achievable_tflops", "max_achievable_tflops",
                           "expected an object of compute spec -> TFLOP/s, e.g. "
                           "{\"matrix_bf16\": 989}");
            goto out;
        }
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e)
        {
            char field[128];
            snprintf(field, sizeof(field), "max_achievable_tflops.%s", k);
            double t;
            if (!get_number(e, &t) || !(t > 0)) {
                rc = field_err(d, text, len, field, k, "expected a positive number (TFLOP/s)");
                goto out;
            }
            if (strlen(k) >= sizeof(out->specs[0].key)) {
                rc = field_err(d, text, len, field, k, "compute spec name too long");
                goto out;
            }
            if (out->n_specs >= MP_ROOFLINE_ARCH_MAX_SPECS) {
                rc = field_err(d, text, len, field, k, "too many compute specs (at most 24)");
                goto out;
            }
            snprintf(out->specs[out->n_specs].key, sizeof(out->specs[0].key), "%s", k);
            out->specs[out->n_specs++].tflops = t;
        }
    }
    calibration_origin(root, out);
out:
    json_decref(root);
    return rc;
}

int mp_roofline_arch_load_json(const char *path, struct mp_roofline_arch *out, struct mp_diag *d)
{
    if (!path || !out)
        return MP_EINVAL;
    mp_diag_set_file(d, path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return mp_diag_set(d, MP_EIO, "cannot open: %s", strerror(errno));
    /* arch files are a few hundred bytes; 1 MiB is a generous bound */
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    n = fread(buf, 1, cap, f);
    bool err = ferror(f), more = !feof(f);
    fclose(f);
    int rc;
    if (err)
        rc = mp_diag_set(d, MP_EIO, "read failed");
    else if (more && n == cap)
        rc = mp_diag_set(d, MP_EINVAL, "file larger than 1 MiB is not an arch file");
    else
        rc = mp_roofline_arch_parse_json(buf, n, path, out, d);
    free(buf);
    return rc;
}
