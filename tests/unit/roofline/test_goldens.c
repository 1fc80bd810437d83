/* The per-category sheets and unified_perf_summary of the TraceLens goldens
 * rebuilt row by row from their args (see helpers.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/roofline.h>

#include "area.h"
#include "helpers.h"
#include "roofline/roofline_int.h"

static const char *const sheets[] = {
    "GEMM",
    "SDPA_fwd",
    "SDPA_bwd",
    "CONV_fwd",
    "CONV_bwd",
    "UnaryElementwise",
    "BinaryElementwise",
    "Normalization",
    "Reduce_fwd",
    "Reduce_bwd",
    "RMSNorm_fwd",
    "RoPE_fwd",
    "InferenceAttention_fwd",
    "MoE_unfused_fwd",
};

struct tally {
    size_t rows, pass, fail, unmodelled;
};

/* args object from the row's Input Dims/type/Strides/Concrete Inputs cells */
static char *row_args(const struct csv *c, size_t r)
{
    static const char *const cols[][2] = {{"Input Dims_first", "Input Dims"},
                                          {"Input type_first", "Input type"},
                                          {"Input Strides_first", "Input Strides"},
                                          {"Concrete Inputs_first", "Concrete Inputs"}};
    json_t *o = json_object();
    for (size_t i = 0; i < 4; i++) {
        const char *v = cell(c, r, cols[i][0]);
        if (!v || !v[0])
            continue;
        json_t *j = lit_parse(v);
        if (j)
            json_object_set_new(o, cols[i][1], j);
    }
    /* what the pseudo-op pass adds to MoE pseudo ops, from the params */
    const char *topk = cell(c, r, "param: topk"), *gated = cell(c, r, "param: gated");
    if (!is_missing(topk) && !is_missing(gated)) {
        json_object_set_new(o, "MoE topk", json_integer(atoll(topk)));
        json_object_set_new(o, "MoE GEMM gated", json_boolean(!strcmp(gated, "True")));
    }
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static size_t cells_compared;

/* A vLLM "detailed" step annotation carrying the row's chunk statistics:
 * the inference-attention models read them from the annotation that
 * enclosed the op, which the CSVs keep only as parameters. */
static bool synth_annotation(double v[8], char *buf, size_t n)
{
    snprintf(buf, n,
             "execute_1_context_1(sq%.0fsk%.0fsqsq%.0fsqsk%.0f)_generation_1(sq%.0fsk%.0fsqsq%."
             "0fsqsk%.0f)",
             v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    return true;
}

static const char *const chunk_keys[8] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk",
                                          "g_sq", "g_sk", "g_sqsq", "g_sqsk"};

/* Checks one golden row; returns NULL when it matches, else what differs. */
static const char *check_row(const struct csv *c, size_t r, const char *sheet,
                             const struct mp_roofline_arch *arch, char *why, size_t whyn)
{
    const char *name = cell(c, r, "name");
    char *args = row_args(c, r);
    char **k;
    size_t nk = kernel_names(cell(c, r, "kernel_details__summarize_kernel_stats"), &k);
    struct mp_roofline_op op = {name, args, strlen(args), NULL, (const char *const *)k, nk, NULL};
    char ann[256];
    const char *csq = cell(c, r, "param: c_sq");
    if (!is_missing(csq)) {
        double v[8];
        for (int i = 0; i < 8; i++) {
            char h[32];
            snprintf(h, sizeof(h), "param: %s", chunk_keys[i]);
            v[i] = atof(cell(c, r, h));
        }
        synth_annotation(v, ann, sizeof(ann));
        op.annotation = ann;
    }
    struct mp_roofline_result res;
    assert_int_equal(mp_roofline_model(&op, &res), 0);
    why[0] = '\0';
    /* bwd tables hold the forward op's bwd metrics, except ops that are
     * themselves backward ops (their forward metrics are the bwd formulas) */
    bool use_bwd = strstr(sheet, "_bwd") && res.category && !strstr(res.category, "_bwd");
    int st = use_bwd ? res.status_bwd : res.status;
    double gf = use_bwd ? res.gflops_bwd : res.gflops;
    bool hb = use_bwd ? res.has_bytes_bwd : res.has_bytes;
    double by = use_bwd ? res.bytes_bwd : res.bytes;
    if (st != MP_ROOFLINE_OK) {
        snprintf(why, whyn, "status %d: %s", st, res.error);
        goto out;
    }
    double want_gf = atof(cell(c, r, "GFLOPS_first"));
    if (!num_close(gf, want_gf)) {
        snprintf(why, whyn, "GFLOPS %.17g != %.17g", gf, want_gf);
        goto out;
    }
    const char *mb = cell(c, r, "Data Moved (MB)_first");
    if (is_missing(mb) ? hb : (!hb || !num_close(by / 1048576.0, atof(mb)))) {
        snprintf(why, whyn, "Data Moved %s != %.17g", mb, hb ? by / 1048576.0 : NAN);
        goto out;
    }
    const char *fpb = cell(c, r, "FLOPS/Byte_first");
    if (!is_missing(fpb) && hb && by > 0 && !num_close(gf * 1e9 / by, atof(fpb))) {
        snprintf(why, whyn, "FLOPS/Byte %s != %.17g", fpb, gf * 1e9 / by);
        goto out;
    }
    const char *spec = cell(c, r, "Compute Spec");
    if (spec && strcmp(spec, res.compute_spec) != 0) {
        snprintf(why, whyn, "Compute Spec '%s' != '%s'", spec, res.compute_spec);
        goto out;
    }
    for (size_t col = 0; col < c->ncols; col++) {
        const char *h = c->rows[0][col];
        if (strncmp(h, "param: ", 7) != 0)
            continue;
        const char *g = c->rows[r][col];
        const struct mp_roofline_param *p = find_param(&res, h + 7);
        if (is_missing(g)) {
            if (p && !p->none) {
                snprintf(why, whyn, "%s: golden empty, got '%s'", h, p->text);
                goto out;
            }
            continue;
        }
        if (!p || p->none) {
            snprintf(why, whyn, "%s: missing (golden '%s')", h, g);
            goto out;
        }
        cells_compared++;
        if (!param_equal(g, p->text)) {
            snprintf(why, whyn, "%s: '%s' != golden '%s'", h, p->text, g);
            goto out;
        }
    }
    for (int i = 0; i < res.n_params; i++) {
        char h[96];
        snprintf(h, sizeof(h), "param: %s", res.params[i].key);
        if (csv_col(c, h) < 0) {
            snprintf(why, whyn, "extra param %s", h);
            goto out;
        }
    }
    if (arch && cell(c, r, "Roofline Time (µs)_first")) {
        const char *rt = cell(c, r, "Roofline Time (µs)_first");
        const char *rb = cell(c, r, "Roofline Bound_first");
        struct mp_roofline_roofline rl;
        mp_roofline_roofline(arch, res.compute_spec, gf, hb, by, 1.0, &rl);
        if (is_missing(rt) ? rl.valid : (!rl.valid || !num_close(rl.roofline_us, atof(rt)))) {
            snprintf(why, whyn, "Roofline Time %s != %.17g", rt, rl.valid ? rl.roofline_us : NAN);
            goto out;
        }
        if (!is_missing(rb) &&
            strcmp(rb, rl.compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND") != 0) {
            snprintf(why, whyn, "Roofline Bound %s", rb);
            goto out;
        }
    }
out:
    mp_roofline_result_fini(&res);
    names_free(k, nk);
    free(args);
    return why[0] ? why : NULL;
}

/* Rows whose golden values need context a single op does not carry. */
static bool needs_context(const char *sheet, const char *name)
{
    /* InferenceAttention params come from the step annotation, MoE pseudo
     * ops from args the pseudo-op pass adds (not in the sheet's cells) */
    (void)name;
    (void)sheet;
    return false;
}

void test_golden_sheets(void **state)
{
    (void)state;
    if (!shared())
        skip();
    char root[1024], archp[1100];
    snprintf(root, sizeof(root), "%s/data/traces", shared());
    snprintf(archp, sizeof(archp), "%s/h200/H200-arch-datasheet.json", root);
    struct mp_roofline_arch h200;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_roofline_arch_load_json(archp, &h200, &d), 0);
    size_t total_fail = 0, total_rows = 0;
    for (size_t s = 0; s < sizeof(sheets) / sizeof(sheets[0]); s++) {
        char base[64];
        snprintf(base, sizeof(base), "%s.csv", sheets[s]);
        struct files fs = {0};
        find_files(root, base, &fs);
        struct tally t = {0};
        for (size_t i = 0; i < fs.n; i++) {
            struct csv c;
            if (!csv_read(fs.v[i], &c))
                continue;
            bool with_arch = csv_col(&c, "Roofline Time (µs)_first") >= 0;
            for (size_t r = 1; r < c.nrows; r++) {
                const char *name = cell(&c, r, "name");
                t.rows++;
                if (needs_context(sheets[s], name)) {
                    t.unmodelled++;
                    continue;
                }
                char why[512];
                if (check_row(&c, r, sheets[s], with_arch ? &h200 : NULL, why, sizeof(why))) {
                    t.fail++;
                    print_message("  FAIL %s %s: %s\n    (%s)\n", sheets[s], name, why,
                                  fs.v[i] + strlen(root) + 1);
                } else {
                    t.pass++;
                }
            }
            csv_free(&c);
        }
        files_free(&fs);
        print_message("sheet %-24s rows %3zu  pass %3zu  fail %3zu  not checked %zu\n", sheets[s],
                      t.rows, t.pass, t.fail, t.unmodelled);
        total_fail += t.fail;
        total_rows += t.rows;
    }
    print_message("param cells compared: %zu\n", cells_compared);
    assert_true(total_rows > 300);
    assert_true(cells_compared > 3000);
    assert_int_equal(total_fail, 0);
}

/* A perf_params dict value and a param text mean the same Python value. */
static bool dict_value_equal(json_t *g, const struct mp_roofline_param *p)
{
    if (json_is_null(g))
        return p->none;
    if (p->none)
        return false;
    if (json_is_string(g))
        return !strcmp(json_string_value(g), p->text);
    json_t *m = lit_parse(p->text);
    bool eq = m && lit_equal(g, m);
    json_decref(m);
    return eq;
}

/* unified_perf_summary rows of ops with their own model: GFLOPS, Data Moved,
 * Compute Spec and perf_params (a dict, so its key order is checked too).
 * Sole-backward rows (the forward op's bwd metrics under the backward op's
 * name) are not ops with a model and are skipped. */
void test_golden_unified(void **state)
{
    (void)state;
    if (!shared())
        skip();
    char root[1024];
    snprintf(root, sizeof(root), "%s/data/traces", shared());
    struct files fs = {0};
    find_files(root, "unified_perf_summary.csv", &fs);
    size_t rows = 0, pass = 0, fail = 0, skipped = 0;
    for (size_t i = 0; i < fs.n; i++) {
        struct csv c;
        if (!csv_read(fs.v[i], &c))
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *name = cell(&c, r, "name");
            const char *hpm = cell(&c, r, "has_perf_model");
            if (!hpm || strcmp(hpm, "True") != 0 || !mp_roofline_has_model(name))
                continue;
            rows++;
            json_t *o = json_object();
            static const char *const cols[] = {"Input Dims", "Input type", "Input Strides",
                                               "Concrete Inputs"};
            for (size_t k = 0; k < 4; k++) {
                const char *v = cell(&c, r, cols[k]);
                json_t *j = v && v[0] ? lit_parse(v) : NULL;
                if (j)
                    json_object_set_new(o, cols[k], j);
            }
            json_t *pp0 = lit_parse(cell(&c, r, "perf_params"));
            if (json_is_object(pp0) && json_object_get(pp0, "topk")) {
                json_object_set(o, "MoE topk", json_object_get(pp0, "topk"));
                json_object_set(o, "MoE GEMM gated", json_object_get(pp0, "gated"));
            }
            json_decref(pp0);
            char *args = json_dumps(o, JSON_COMPACT);
            json_decref(o);
            char **k;
            size_t nk = kernel_names(cell(&c, r, "kernel_details_summary"), &k);
            struct mp_roofline_op op = {name, args, strlen(args), NULL, (const char *const *)k,
                                        nk,   NULL};
            json_t *pp = lit_parse(cell(&c, r, "perf_params"));
            char ann[256];
            if (json_is_object(pp) && json_object_get(pp, "c_sq")) {
                double v[8];
                for (int j = 0; j < 8; j++)
                    v[j] = json_number_value(json_object_get(pp, chunk_keys[j]));
                synth_annotation(v, ann, sizeof(ann));
                op.annotation = ann;
            }
            struct mp_roofline_result res;
            assert_int_equal(mp_roofline_model(&op, &res), 0);
            char why[512] = "";
            const char *mb = cell(&c, r, "Data Moved (MB)");
            if (res.status != MP_ROOFLINE_OK) {
                snprintf(why, sizeof(why), "status %d: %s", res.status, res.error);
            } else if (!num_close(res.gflops, atof(cell(&c, r, "GFLOPS")))) {
                snprintf(why, sizeof(why), "GFLOPS %.17g != %s", res.gflops, cell(&c, r, "GFLOPS"));
            } else if (is_missing(mb)
                           ? res.has_bytes
                           : (!res.has_bytes || !num_close(res.bytes / 1048576.0, atof(mb)))) {
                snprintf(why, sizeof(why), "Data Moved %.17g != %s", res.bytes / 1048576.0, mb);
            } else if (strcmp(cell(&c, r, "Compute Spec"), res.compute_spec) != 0) {
                snprintf(why, sizeof(why), "Compute Spec %s != %s", res.compute_spec,
                         cell(&c, r, "Compute Spec"));
            } else if (!json_is_object(pp) || (int)json_object_size(pp) != res.n_params) {
                snprintf(why, sizeof(why), "perf_params: %d params vs golden %s", res.n_params,
                         cell(&c, r, "perf_params"));
            } else {
                const char *key;
                json_t *val;
                int idx = 0;
                json_object_foreach(pp, key, val)
                {
                    const struct mp_roofline_param *p = &res.params[idx++];
                    if (strcmp(p->key, key) != 0 || !dict_value_equal(val, p)) {
                        snprintf(why, sizeof(why), "param %d: %s=%s vs golden %s", idx - 1, p->key,
                                 p->none ? "None" : p->text, key);
                        break;
                    }
                }
            }
            if (why[0]) {
                fail++;
                print_message("  FAIL unified %s: %s\n    (%s)\n", name, why,
                              fs.v[i] + strlen(root) + 1);
            } else {
                pass++;
            }
            json_decref(pp);
            mp_roofline_result_fini(&res);
            names_free(k, nk);
            free(args);
        }
        csv_free(&c);
    }
    files_free(&fs);
    print_message("unified_perf_summary: %zu modelled rows, pass %zu, fail %zu, not checked %zu\n",
                  rows, pass, fail, skipped);
    assert_true(rows > 500);
    assert_int_equal(fail, 0);
}
