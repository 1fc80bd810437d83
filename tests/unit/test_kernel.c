/* Unit tests for the kernel module: kernel-signature parsing, ncu CSV
 * parsing on real H200 outputs, compare verdicts on synthetic samples, and
 * (where an OpenCL ICD such as PoCL is installed) the C harness end to end
 * on a correct and a wrong kernel. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include <magpie/io.h>
#include <magpie/kernel.h>

#include "kernel/kernel_int.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    *len = got;
    return s;
}

/* path of a file in tests/fixtures/kernel (MP_FIXTURES, else ./) */
static const char *kfixture(char *buf, size_t len, const char *name)
{
    const char *fx = getenv("MP_FIXTURES");
    snprintf(buf, len, "%s/kernel/%s", fx ? fx : ".", name);
    return buf;
}

static void test_signature(void **state)
{
    (void)state;
    struct hsig s;
    char err[256];
    const char *cl = "// c\n#define X 1\nstatic int helper(int a) { return a; }\n"
                     "__kernel void vadd(__global const float *restrict a, __global const float *b,"
                     " __global float *c, const int n, float alpha, unsigned int u, ulong big) {}\n"
                     "kernel void other(global double *x) {}\n";
    assert_int_equal(kern_harness_parse_signature(cl, NULL, &s, err, sizeof(err)), 0);
    assert_string_equal(s.name, "vadd");
    assert_int_equal(s.nargs, 7);
    assert_true(s.args[0].pointer && s.args[0].is_const && s.args[0].elem == HE_FLOAT);
    assert_string_equal(s.args[0].name, "a");
    assert_true(s.args[2].pointer && !s.args[2].is_const);
    assert_true(!s.args[3].pointer && s.args[3].elem == HE_INT);
    assert_string_equal(s.args[3].name, "n");
    assert_true(s.args[4].elem == HE_FLOAT && !s.args[4].pointer);
    assert_true(s.args[5].elem == HE_UINT);
    assert_true(s.args[6].elem == HE_ULONG);
    assert_int_equal(kern_harness_parse_signature(cl, "other", &s, err, sizeof(err)), 0);
    assert_true(s.args[0].elem == HE_DOUBLE && s.args[0].pointer && !s.args[0].is_const);
    const char *cu = "extern \"C\" __global__ void k(const float* __restrict__ x, float *y, "
                     "long long n) {}";
    assert_int_equal(kern_harness_parse_signature(cu, NULL, &s, err, sizeof(err)), 0);
    assert_string_equal(s.name, "k");
    assert_int_equal(s.nargs, 3);
    assert_true(s.args[2].elem == HE_LONG);
    assert_int_equal(kern_harness_parse_signature(cu, "missing", &s, err, sizeof(err)),
                     MP_ENOTFOUND);
    assert_non_null(strstr(err, "missing"));
    assert_int_equal(
        kern_harness_parse_signature("int main(void) { return 0; }", NULL, &s, err, sizeof(err)),
        MP_ENOTFOUND);
    assert_int_equal(
        kern_harness_parse_signature("__kernel void k2(__constant float *w, __global float *o) {}",
                                     NULL, &s, err, sizeof(err)),
        0);
    assert_true(s.args[0].is_const && !s.args[1].is_const);
    const char *half = "__kernel void h(__global half *x) {}";
    assert_int_equal(kern_harness_parse_signature(half, NULL, &s, err, sizeof(err)), MP_EUNSUP);
    assert_int_equal(
        kern_harness_parse_signature("__kernel void e(void) {}", NULL, &s, err, sizeof(err)), 0);
    assert_int_equal(s.nargs, 0);
}

static void test_ncu_csv(void **state)
{
    (void)state;
    char path[1024];
    size_t len = 0;
    /* ncu --csv --print-units base --metrics <default set>, H200, magpie's harness */
    char *text = slurp(kfixture(path, sizeof(path), "ncu_h200_harness_base_units.csv"), &len);
    assert_non_null(text);
    struct mp_kernel_perf p;
    memset(&p, 0, sizeof(p));
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_kernel_parse_ncu_csv(text, len, &p, &d), 0);
    assert_int_equal(p.ndispatch, 1);
    assert_string_equal(p.dispatch[0].name, "vadd");
    assert_int_equal(p.dispatch[0].count, 3);
    assert_true(p.dispatch[0].min_ns > 60000 && p.dispatch[0].max_ns < 70000);
    bool seen = false;
    for (int i = 0; i < p.nmetrics; i++) {
        if (!strcmp(p.metrics[i].name, "dram__bytes_read.sum")) {
            seen = true;
            assert_string_equal(p.metrics[i].unit, "byte");
            assert_true(p.metrics[i].value > 1.3e8 && p.metrics[i].value < 1.4e8);
        }
    }
    assert_true(seen);
    mp_kernel_perf_fini(&p);
    free(text);

    /* default units and ==PROF== / program lines before the header */
    text = slurp(kfixture(path, sizeof(path), "ncu_vadd_default_units.csv"), &len);
    assert_non_null(text);
    memset(&p, 0, sizeof(p));
    assert_int_equal(mp_kernel_parse_ncu_csv(text, len, &p, &d), 0);
    assert_int_equal(p.ndispatch, 1);
    assert_int_equal(p.dispatch[0].count, 3);
    assert_true(strncmp(p.dispatch[0].name, "vadd(", 5) == 0);
    mp_kernel_perf_fini(&p);
    free(text);

    /* raw page: one column per metric, a units row */
    const char *raw = "==PROF== x\n\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
                      "\"dram__bytes.sum\"\n\"\",\"\",\"ns\",\"byte\"\n"
                      "\"0\",\"k\",\"1,000\",\"2048\"\n\"1\",\"k\",\"3,000\",\"n/a\"\n";
    memset(&p, 0, sizeof(p));
    assert_int_equal(mp_kernel_parse_ncu_csv(raw, strlen(raw), &p, &d), 0);
    assert_int_equal(p.ndispatch, 1);
    assert_true(p.dispatch[0].avg_ns == 2000);
    mp_kernel_perf_fini(&p);
    mp_diag_clear(&d);
    assert_int_equal(mp_kernel_parse_ncu_csv("no csv here\n", 12, &p, &d), MP_EPARSE);
    mp_kernel_perf_fini(&p);
}

static void test_rocprof_trace(void **state)
{
    (void)state;
    /* the columns rocprofv3 documents for kernel_trace.csv (subset) */
    const char *csv = "\"Kind\",\"Agent_Id\",\"Kernel_Name\",\"Start_Timestamp\","
                      "\"End_Timestamp\"\n"
                      "\"KERNEL_DISPATCH\",\"1\",\"vadd(float*)\",\"1000\",\"3000\"\n"
                      "\"KERNEL_DISPATCH\",\"1\",\"__amd_rocclr_fillBuffer\",\"3100\",\"3200\"\n"
                      "\"KERNEL_DISPATCH\",\"1\",\"vadd(float*)\",\"4000\",\"8000\"\n";
    struct mp_kernel_perf p;
    memset(&p, 0, sizeof(p));
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_kernel_parse_rocprof_kernel_trace(csv, strlen(csv), &p, &d), 0);
    assert_int_equal(p.ndispatch, 1);
    assert_int_equal(p.dispatch[0].count, 2);
    assert_true(p.dispatch[0].avg_ns == 3000 && p.dispatch[0].total_ns == 6000);
    mp_kernel_perf_fini(&p);
}

/* rocprofv3's JSON output as the real tool wrote it: 2000 consecutive
 * kernel dispatches (and their kernel symbols) of a training run on an
 * MI350 host, from TraceLens's tests/rocprof/908_results.json.gz
 * (tests/fixtures/kernel/README.md). Expected figures from a Python reading
 * of the same file: 78 kernels, 1847 dispatches after the runtime's own
 * fills and copies, led by an NCCL kernel. */
static void test_rocprof_json(void **state)
{
    (void)state;
    char path[1024];
    kfixture(path, sizeof(path), "rocprofv3_mi350_kernel_trace.json.gz");
    struct mp_io_reader *rd = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_io_open(path, &rd, &d), 0);
    struct mp_buf b;
    mp_buf_init(&b, (size_t)64 << 20);
    char chunk[65536];
    size_t got = 0;
    while (mp_io_read(rd, chunk, sizeof(chunk), &got, &d) == 0 && got > 0)
        assert_int_equal(mp_buf_append(&b, chunk, got), 0);
    mp_io_close(rd);
    struct mp_kernel_perf p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(mp_kernel_parse_rocprof_json(b.data, b.len, &p, &d), 0);
    assert_int_equal(p.ndispatch, 78);
    long total = 0;
    for (int i = 0; i < p.ndispatch; i++)
        total += p.dispatch[i].count;
    assert_int_equal(total, 1847);
    assert_string_equal(p.dispatch[0].name,
                        "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)");
    assert_int_equal(p.dispatch[0].count, 65);
    assert_true(p.dispatch[0].total_ns == 86361069 && p.dispatch[0].min_ns == 114721 &&
                p.dispatch[0].max_ns == 3449797);
    assert_int_equal(p.dispatch[1].count, 311);
    assert_true(p.dispatch[1].total_ns == 1520256);
    mp_kernel_perf_fini(&p);
    mp_buf_fini(&b);
    /* not rocprofv3 JSON, and not JSON at all */
    memset(&p, 0, sizeof(p));
    assert_int_equal(mp_kernel_parse_rocprof_json("{\"a\": 1}", 8, &p, &d), MP_EPARSE);
    mp_diag_clear(&d);
    assert_int_equal(mp_kernel_parse_rocprof_json("{oops", 5, &p, &d), MP_EPARSE);
    assert_non_null(strstr(d.msg, "line 1"));
    mp_kernel_perf_fini(&p);
}

static void test_accordo_parse(void **state)
{
    (void)state;
    struct mp_kernel_correct c;
    memset(&c, 0, sizeof(c));
    const char *ok = "log line\n{\"is_valid\": true, \"num_arrays_validated\": 3, "
                     "\"num_mismatches\": 0}\n";
    assert_int_equal(kern_accordo_parse(ok, &c), 0);
    assert_true(c.success && c.verified && c.checks == 3);
    free(c.errors);
    memset(&c, 0, sizeof(c));
    const char *bad = "{\"is_valid\": false, \"num_mismatches\": 1, \"error_message\": \"\", "
                      "\"mismatches\": [{\"arg_name\": \"out\", \"dispatch_index\": 0, "
                      "\"max_difference\": 0.5}]}\n";
    assert_int_equal(kern_accordo_parse(bad, &c), 0);
    assert_false(c.success);
    assert_non_null(strstr(c.errors, "out (dispatch 0): max difference 0.5"));
    free(c.errors);
    memset(&c, 0, sizeof(c));
    assert_int_equal(kern_accordo_parse("not json\n", &c), MP_EPARSE);
    free(c.errors);
}

static void fill_timing(struct mp_kernel_result *r, double center, double jitter, int n,
                        unsigned seed)
{
    struct mp_rng g;
    mp_rng_seed(&g, seed);
    r->timing.samples_ms = calloc((size_t)n, sizeof(double));
    r->timing.nsamples = n;
    for (int i = 0; i < n; i++)
        r->timing.samples_ms[i] = center * (1 + jitter * (mp_rng_uniform(&g) - 0.5));
    mp_stats_summarize(r->timing.samples_ms, (size_t)n, 0.95, 200, 1, &r->timing.st);
    r->correctness = MP_STAGE_SUCCESS;
}

static void test_compare_verdicts(void **state)
{
    (void)state;
    struct mp_kernel_config cfg;
    mp_kernel_config_init(&cfg);
    struct mp_kernel_run run;
    mp_kernel_run_init(&run);
    run.n = 6;
    run.baseline = 0;
    run.results = calloc(6, sizeof(*run.results));
    const char *ids[] = {"base", "fast2pct", "slow", "same", "wrong", "few"};
    for (int i = 0; i < 6; i++)
        run.results[i].id = strdup(ids[i]);
    fill_timing(&run.results[0], 1.00, 0.01, 400, 1);
    fill_timing(&run.results[1], 0.98, 0.01, 400, 2); /* a real 2 % difference */
    fill_timing(&run.results[2], 1.10, 0.01, 400, 3);
    fill_timing(&run.results[3], 1.00, 0.01, 400, 4);
    fill_timing(&run.results[4], 0.50, 0.01, 400, 5);
    run.results[4].correctness = MP_STAGE_FAILED;
    fill_timing(&run.results[5], 0.50, 0.01, 5, 6); /* too few samples */
    kern_compare_rank(&run, &cfg);
    assert_int_equal(run.vs[0].verdict, MP_VERDICT_BASELINE);
    assert_int_equal(run.vs[1].verdict, MP_VERDICT_FASTER);
    assert_true(run.vs[1].speedup > 1.015 && run.vs[1].speedup < 1.025);
    assert_true(run.vs[1].speedup_lo < run.vs[1].speedup &&
                run.vs[1].speedup < run.vs[1].speedup_hi);
    assert_int_equal(run.vs[2].verdict, MP_VERDICT_SLOWER);
    assert_true(run.vs[3].verdict == MP_VERDICT_SAME ||
                run.vs[3].verdict == MP_VERDICT_INCONCLUSIVE);
    assert_int_equal(run.vs[4].verdict, MP_VERDICT_INCORRECT);
    assert_int_equal(run.vs[5].verdict, MP_VERDICT_INCONCLUSIVE);
    assert_int_equal(run.winner, 1); /* the fastest significantly faster correct one */
    assert_non_null(strstr(run.summary, "Winner: Kernel 1 (fast2pct)"));
    mp_kernel_run_fini(&run);
    mp_kernel_config_fini(&cfg);
}

static bool have_opencl(void)
{
    return access("/etc/OpenCL/vendors", R_OK) == 0;
}

/* The stop rule that decides a timing's sample count: the time limit stops
 * sampling only once min_samples are in (a loaded 2-core machine once cut an
 * OpenCL kernel at 8 of 10 samples), and K_MIN_SAMPLES_GRACE x the limit
 * stops a kernel that cannot get them, saying so. */
static void test_timing_stop_rule(void **state)
{
    (void)state;
    struct kern_stop_rule r = {.min_samples = 10,
                               .max_samples = 100,
                               .min_time_ms = 1,
                               .max_noise = 0.005,
                               .max_time_s = 1.0};
    char why[200] = "";
    /* noisy, past the time limit, short of min_samples: keep sampling */
    assert_false(kern_timing_stop(&r, 8, 50, 0.05, false, 1.5, why, sizeof(why)));
    assert_false(
        kern_timing_stop(&r, 9, 50, 0.05, false, K_MIN_SAMPLES_GRACE - 0.01, why, sizeof(why)));
    /* min_samples in: the time limit stops it */
    assert_true(kern_timing_stop(&r, 10, 50, 0.05, false, 1.0, why, sizeof(why)));
    assert_non_null(strstr(why, "timeout 1.0 s reached"));
    /* the grace is used up: stop, and say min_samples was not reached */
    assert_true(kern_timing_stop(&r, 8, 50, 0.05, false, K_MIN_SAMPLES_GRACE, why, sizeof(why)));
    assert_non_null(strstr(why, "min_samples 10 not reached: 8 samples"));
    /* quiet enough, but only once min_samples and min_time are in */
    assert_false(kern_timing_stop(&r, 9, 50, 0.001, false, 0.1, why, sizeof(why)));
    assert_false(kern_timing_stop(&r, 10, 0.5, 0.001, false, 0.1, why, sizeof(why)));
    assert_true(kern_timing_stop(&r, 10, 50, 0.001, false, 0.1, why, sizeof(why)));
    assert_non_null(strstr(why, "noise 0.100% <= 0.500% after 10 samples"));
    /* plateau and max_samples */
    assert_false(kern_timing_stop(&r, 9, 50, 0.05, true, 0.1, why, sizeof(why)));
    assert_true(kern_timing_stop(&r, 10, 50, 0.05, true, 0.1, why, sizeof(why)));
    assert_non_null(strstr(why, "plateaued"));
    assert_true(kern_timing_stop(&r, 100, 50, 0.05, false, 0.1, why, sizeof(why)));
    assert_non_null(strstr(why, "max_samples 100 reached"));
}

/* The harness in-process on PoCL: a correct kernel verified and timed, an
 * off-by-one rejected by the guard zone, a kernel writing nothing rejected. */
static void test_harness_opencl(void **state)
{
    (void)state;
    if (!have_opencl()) {
        fprintf(stderr, "SKIP: no OpenCL ICD (/etc/OpenCL/vendors); install pocl-opencl-icd\n");
        return;
    }
    char dir[] = "/tmp/mp_kernel_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ref[1100], ok[1100], bad[1100], none[1100], job[1100], out[1100];
    snprintf(ref, sizeof(ref), "%s/ref.cl", dir);
    snprintf(ok, sizeof(ok), "%s/ok.cl", dir);
    snprintf(bad, sizeof(bad), "%s/bad.cl", dir);
    snprintf(none, sizeof(none), "%s/none.cl", dir);
    snprintf(job, sizeof(job), "%s/job.json", dir);
    snprintf(out, sizeof(out), "%s/out.json", dir);
    const char *k = "__kernel void s(__global const float *a, __global float *c, int n) {"
                    " int i = get_global_id(0); if (i %s n) c[i] = 2.0f * a[i]; }";
    char src[512];
    FILE *f = fopen(ref, "w");
    snprintf(src, sizeof(src), k, "<");
    fputs(src, f);
    fclose(f);
    f = fopen(ok, "w");
    fputs(src, f);
    fclose(f);
    f = fopen(bad, "w");
    snprintf(src, sizeof(src), k, "<=");
    fputs(src, f);
    fclose(f);
    f = fopen(none, "w");
    fputs("__kernel void s(__global const float *a, __global float *c, int n) { }", f);
    fclose(f);
    /* the sample count is decided by max_samples (or the noise rule once
     * min_samples are in), never by how busy the machine is: the time limit
     * cannot stop sampling before min_samples (kern_timing_stop) */
    json_t *j = json_pack("{s:s, s:s, s:s, s:b, s:{s:b, s:i, s:i, s:f, s:f, s:f}}", "backend",
                          "opencl", "mode", "run", "output", out, "interleave", 0, "timing",
                          "enabled", 1, "min_samples", 10, "max_samples", 12, "min_time_s", 0.01,
                          "max_time_s", 2.0, "warmup_s", 0.01);
    json_t *ks = json_array();
    json_array_append_new(ks, json_pack("{s:s, s:s, s:b, s:i, s:i}", "id", "ref", "source", ref,
                                        "is_reference", 1, "ref", -1, "size", 1000));
    const char *ids[] = {"ok", "bad", "none"};
    const char *srcs[] = {ok, bad, none};
    for (int i = 0; i < 3; i++)
        json_array_append_new(ks, json_pack("{s:s, s:s, s:i, s:i}", "id", ids[i], "source", srcs[i],
                                            "ref", 0, "size", 1000));
    json_object_set_new(j, "kernels", ks);
    assert_int_equal(json_dump_file(j, job, 0), 0);
    json_decref(j);
    assert_int_equal(mp_kernel_harness_main(job), 0);
    json_error_t je;
    json_t *r = json_load_file(out, 0, &je);
    assert_non_null(r);
    /* read everything, release the result, then assert: a failed assertion
     * must not leave jansson objects for LeakSanitizer to report */
    json_t *arr = json_object_get(r, "kernels");
    bool device_error = json_object_get(r, "device_error") != NULL;
    size_t nk = json_array_size(arr);
    json_t *okc = json_object_get(json_array_get(arr, 1), "correctness");
    json_t *okt = json_object_get(json_array_get(arr, 1), "timing");
    json_t *badc = json_object_get(json_array_get(arr, 2), "correctness");
    json_t *nonec = json_object_get(json_array_get(arr, 3), "correctness");
    bool ok_ok = json_is_true(json_object_get(okc, "ok"));
    bool ok_verified = json_is_true(json_object_get(okc, "verified"));
    bool ok_recheck = json_is_true(json_object_get(okc, "recheck_ok"));
    size_t nsamples = json_array_size(json_object_get(okt, "samples_ms"));
    bool min_met = json_is_true(json_object_get(okt, "min_samples_met"));
    char stop[256];
    const char *sr = json_string_value(json_object_get(okt, "stop_reason"));
    snprintf(stop, sizeof(stop), "%s", sr ? sr : "");
    bool bad_rejected = json_is_false(json_object_get(badc, "ok"));
    const char *bm = json_string_value(json_object_get(badc, "message"));
    bool bad_msg = bm && strstr(bm, "past the end");
    bool none_rejected = json_is_false(json_object_get(nonec, "ok"));
    const char *nm = json_string_value(json_object_get(nonec, "message"));
    bool none_msg = nm && strstr(nm, "never written");
    json_decref(r);
    assert_false(device_error);
    assert_int_equal(nk, 4);
    assert_true(ok_ok);
    assert_true(ok_verified);
    assert_true(ok_recheck);
    if (nsamples < 10 || nsamples > 12 || !min_met)
        fprintf(stderr, "ok: %zu samples, stop_reason: %s\n", nsamples, stop);
    assert_true(nsamples >= 10 && nsamples <= 12);
    assert_true(min_met);
    assert_true(bad_rejected);
    assert_true(bad_msg);
    assert_true(none_rejected);
    assert_true(none_msg);
    unlink(ref);
    unlink(ok);
    unlink(bad);
    unlink(none);
    unlink(job);
    unlink(out);
    rmdir(dir);
}

/* The clock monitor's parser on nvidia-smi samples recorded on the H200 during
 * two timed runs of magpie's runner (tests/fixtures/kernel/README.md): a
 * 4096^3 bf16 matmul that stays at 1980 MHz and an 8192^3 one that runs
 * under the software power cap. Counts checked against a Python reading of
 * the same files. */
static void test_clockmon_parse(void **state)
{
    (void)state;
    char path[1024];
    size_t len = 0;
    char *text = slurp(kfixture(path, sizeof(path), "nvidia_smi_clocks_h200_matmul4096.csv"), &len);
    assert_non_null(text);
    struct mp_kernel_clocks t;
    memset(&t, 0, sizeof(t));
    assert_int_equal(kern_clockmon_parse(text, len, &t), 162);
    assert_int_equal(t.samples, 162);
    assert_true(fabs(t.mean_mhz - 1980) < 1e-9 && fabs(t.min_mhz - 1980) < 1e-9);
    assert_true(t.capped_share == 0);
    free(text);
    text = slurp(kfixture(path, sizeof(path), "nvidia_smi_clocks_h200_matmul8192.csv"), &len);
    assert_non_null(text);
    memset(&t, 0, sizeof(t));
    assert_int_equal(kern_clockmon_parse(text, len, &t), 389);
    assert_true(fabs(t.capped_share - 114.0 / 389) < 1e-12);
    assert_true(fabs(t.min_mhz - 1530) < 1e-9);
    assert_true(fabs(t.mean_mhz - 1885.1028277634962) < 1e-6);
    free(text);
    /* junk, idle-only and partial lines count nothing */
    const char *junk = "N/A, N/A\n1980, 0x0000000000000001\n\n1755\n, 0x4\n1410, zz\n";
    memset(&t, 0, sizeof(t));
    assert_int_equal(kern_clockmon_parse(junk, strlen(junk), &t), 0);
    const char *one = "1410, 0x0000000000000004";
    assert_int_equal(kern_clockmon_parse(one, strlen(one), &t), 1);
    assert_true(t.capped_share == 1 && fabs(t.mean_mhz - 1410) < 1e-9);
}

/* The runner's result on the H200 with the power guard on, read the way the
 * pipeline reads it: samples, stop reason and the guard's figures. */
static void test_runner_guard_result(void **state)
{
    (void)state;
    char path[1024];
    kfixture(path, sizeof(path), "runner_result_guard_h200_matmul8192.json");
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    assert_non_null(root);
    json_t *k = json_array_get(json_object_get(root, "kernels"), 1);
    struct mp_kernel_timing t;
    memset(&t, 0, sizeof(t));
    kern_timing_from_json(&t, json_object_get(k, "timing"));
    assert_true(t.success);
    assert_int_equal(t.nsamples, 365);
    assert_true(t.st.median > 1.36 && t.st.median < 1.38); /* ms */
    assert_true(t.guard.present);
    assert_true(fabs(t.guard.ref_mhz - 1984.5) < 1e-9);
    assert_true(fabs(t.guard.clock_mhz - 1968.2) < 1e-9);
    assert_true(fabs(t.guard.cool_ratio - 1.0) < 1e-12);
    assert_int_equal(t.guard.discarded, 11);
    assert_false(t.guard.sustained);
    /* throttle flag: the monitor saw a cap in 20 % of its samples; the guard
     * dropped those samples, so the run is not flagged, unless the cap held */
    t.clock_after_mhz = 1980;
    t.temp_after_c = 48;
    t.during = (struct mp_kernel_clocks){
        .samples = 150, .mean_mhz = 1960, .min_mhz = 1700, .capped_share = 0.2};
    assert_false(kern_timing_throttled(&t, 1980));
    t.guard.sustained = true;
    assert_true(kern_timing_throttled(&t, 1980));
    t.guard.present = false;
    t.guard.sustained = false;
    assert_true(kern_timing_throttled(&t, 1980));
    t.during.capped_share = 0.05;
    assert_false(kern_timing_throttled(&t, 1980));
    t.clock_after_mhz = 1500;
    assert_true(kern_timing_throttled(&t, 1980));
    free(t.samples_ms);
    free(t.errors);
    /* a result without the guard (CPU, ROCm, or the guard off) says so */
    json_t *plain = json_pack("{s:[f,f,f], s:i}", "samples_ms", 1.0, 1.1, 1.2, "batch", 1);
    memset(&t, 0, sizeof(t));
    kern_timing_from_json(&t, plain);
    assert_false(t.guard.present);
    assert_int_equal(t.nsamples, 3);
    free(t.samples_ms);
    free(t.errors);
    json_decref(plain);
    json_decref(root);
}

/* The harness's power guard decisions on sequences of probe clocks (the
 * same cases as tests/integration/test_runner_guard.sh for the runner). */
static struct kern_pguard pg_new(double ref, double fixed)
{
    struct kern_pguard g;
    memset(&g, 0, sizeof(g));
    g.on = true;
    g.ref_mhz = ref;
    if (fixed >= 0) {
        g.ratio = fixed;
        g.fixed = true;
    }
    return g;
}

/* Feeds n probes of mhz; returns the samples kept, counting the ones the
 * guard took back afterwards (drop_prev) as not kept. */
static int pg_feed(struct kern_pguard *g, double mhz, int n)
{
    static int owner;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        g->last_mhz = mhz;
        bool k = kern_pguard_judge(g);
        kept += k - g->drop_prev;
        g->pending = k ? &owner : g->pending;
    }
    return kept;
}

static void test_pguard_judge(void **state)
{
    (void)state;
    /* unthrottled, +-2 % probe jitter: nothing dropped, reference unmoved */
    struct kern_pguard g = pg_new(1980, -1);
    unsigned x = 12345;
    int kept = 0;
    for (int i = 0; i < 20000; i++) {
        x = x * 1103515245u + 12345u;
        kept += pg_feed(&g, 1980 * (0.98 + 0.04 * (double)(x >> 16 & 0x7fff) / 32767.0), 1);
    }
    assert_int_equal(kept, 20000);
    assert_int_equal(g.discarded, 0);
    assert_true(g.ratio == 0 && !g.sustained && g.ref_mhz == 1980);
    /* capped until the cool-down reaches 1x */
    g = pg_new(1980, -1);
    kept = 0;
    for (int i = 0; i < 2000; i++)
        kept += pg_feed(&g, g.ratio < 1 ? 1700 : 1975, 1);
    assert_true(g.ratio == 1.0 && !g.sustained);
    assert_int_equal(g.discarded, 8);
    assert_int_equal(kept, 1992);
    /* capped at every ratio: bounded losses, then kept and flagged */
    g = pg_new(1980, -1);
    kept = pg_feed(&g, 1700, 500);
    assert_true(g.sustained && g.ratio == 4.0);
    assert_int_equal(g.discarded, 47);
    assert_int_equal(kept, 500 - 47);
    /* a fixed ratio never moves */
    g = pg_new(1980, 2.0);
    kept = 0;
    for (int i = 0; i < 20; i++)
        kept += pg_feed(&g, i % 4 < 2 ? 1700 : 1980, 1);
    assert_true(g.ratio == 2.0);
    assert_int_equal(g.discarded, 10);
    assert_int_equal(kept, 10);
    /* a calibration taken under a cap: the reference rises to the real clock */
    g = pg_new(1750, -1);
    pg_feed(&g, 1980, 64);
    assert_true(g.ref_mhz == 1980);
    assert_int_equal(pg_feed(&g, 1750, 8), 0);
    /* lone low probes (a late host, not a cap): kept, no cool-down */
    g = pg_new(1980, -1);
    kept = 0;
    for (int i = 0; i < 5000; i++)
        kept += pg_feed(&g, i % 97 == 50 ? 1500 : 1980, 1);
    assert_int_equal(kept, 5000);
    assert_true(g.discarded == 0 && g.ratio == 0);
    /* off: everything kept */
    g = pg_new(1980, -1);
    g.on = false;
    assert_int_equal(pg_feed(&g, 1000, 50), 50);
    json_t *j = kern_pguard_json(&(struct kern_pguard){.on = true, .ref_mhz = 1984.46, .ratio = 2},
                                 (const double[]){1970, 1960, 1980}, 3);
    assert_true(json_real_value(json_object_get(j, "reference_clock_mhz")) == 1984.5);
    assert_true(json_real_value(json_object_get(j, "sample_clock_mhz_median")) == 1970);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signature),        cmocka_unit_test(test_ncu_csv),
        cmocka_unit_test(test_rocprof_trace),    cmocka_unit_test(test_accordo_parse),
        cmocka_unit_test(test_compare_verdicts), cmocka_unit_test(test_timing_stop_rule),
        cmocka_unit_test(test_harness_opencl),   cmocka_unit_test(test_clockmon_parse),
        cmocka_unit_test(test_rocprof_json),     cmocka_unit_test(test_runner_guard_result),
        cmocka_unit_test(test_pguard_judge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
