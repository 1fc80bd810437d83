/* Unit tests of inference step annotations and steady-state windows
 * (include/magpie/trace_steps.h): every annotation format against the values
 * TraceLens's annotation_utils.py gives for the same names, and steady-state
 * regions and windows against TraceLens's steady_state_window.py on
 * generated step sequences. The splitter itself is tested end to end on a
 * real trace in tests/integration/test_trace_split.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/trace_steps.h>

#include "area.h"

struct ann_case { // NOLINT(clang-analyzer-optin.performance.Padding): table order
    const char *name;
    int tier;
    const char *kind;
    int64_t d[6]; /* batch_size, num_requests, ctx req, ctx sum, gen req, gen sum */
    int64_t sq[8];
    int has_sqsk;
};

/* expected values printed by TraceLens's IterationAnnotation (commit 171dd747) */
static const struct ann_case ann_cases[] = {
    {"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
     1,
     "vllm_detailed",
     {32, 32, 0, 0, 32, 32},
     {0, 0, 0, 0, 32, 55086, 32, 55086},
     1},
    {"execute_14721_context_2(sq14721sk14721sqsq108745533sqsk108745533)_generation_0("
     "sq0sk0sqsq0sqsk0)",
     1,
     "vllm_detailed",
     {14721, 2, 2, 14721, 0, 0},
     {14721, 14721, 108745533, 108745533, 0, 0, 0, 0},
     1},
    {"execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3("
     "sq3sk6144sqsq3sqsk6144)",
     1,
     "vllm_detailed",
     {6147, 5, 2, 6144, 3, 3},
     {6144, 7144, 20971520, 23019520, 3, 6144, 3, 6144},
     1},
    {"execute_context_2(14721)_generation_0(0)",
     2,
     "vllm_native",
     {14721, 2, 2, 14721, 0, 0},
     {14721, 0, 0, 0, 0, 0, 0, 0},
     0},
    {"execute_context_0(0)_generation_64(64)",
     2,
     "vllm_native",
     {64, 64, 0, 0, 64, 64},
     {0, 0, 0, 0, 64, 0, 0, 0},
     0},
    {"execute_context_2(6144)_generation_3(3)_extra",
     2,
     "vllm_native",
     {6147, 5, 2, 6144, 3, 3},
     {6144, 0, 0, 0, 3, 0, 0, 0},
     0},
    {"step[EXTEND bs=2 toks=14721 c_sq=14721 c_sqsq=108745533 c_sqsk=108745533 c_sk=14721]",
     1,
     "sglang_detailed",
     {14721, 2, 2, 14721, 0, 0},
     {14721, 14721, 108745533, 108745533, 0, 0, 0, 0},
     1},
    {"step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]",
     1,
     "sglang_detailed",
     {128, 64, 0, 0, 64, 128},
     {0, 0, 0, 0, 128, 131072, 256, 262144},
     1},
    {"step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
     1,
     "sglang_detailed",
     {6, 2, 1, 5, 1, 1},
     {5, 8, 25, 40, 1, 12, 1, 12},
     1},
    {"step[EXTEND bs=2 toks=14721]",
     2,
     "sglang_native",
     {14721, 2, 2, 14721, 0, 0},
     {14721, 0, 0, 0, 0, 0, 0, 0},
     0},
    {"step[DECODE bs=64]",
     2,
     "sglang_native",
     {64, 64, 0, 0, 64, 64},
     {0, 0, 0, 0, 64, 0, 0, 0},
     0},
    {"step[MIXED bs=2]", 2, "sglang_native", {2, 2, 2, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}, 0},
    {"step[DECODE bs=32 extra]", 2, "", {1, 1, 0, 0, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, 0},
    {"step[EXTENDED bs=2]", 0, "", {1, 1, 0, 0, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, 0},
    {"prefill[bs=2 tok=14721 ctx=[7803, 6918]]",
     2,
     "atom_native",
     {14721, 2, 2, 14721, 0, 0},
     {14721, 0, 0, 0, 0, 0, 0, 0},
     0},
    {"prefill[bs=6 tok=17408 ctx=[4096, 4096, 4096]...+3]",
     2,
     "atom_native",
     {17408, 6, 6, 17408, 0, 0},
     {17408, 0, 0, 0, 0, 0, 0, 0},
     0},
    {"decode[bs=64 tok=64 d=64]",
     2,
     "atom_native",
     {64, 64, 0, 0, 64, 64},
     {0, 0, 0, 0, 64, 0, 0, 0},
     0},
    {"decode[bs=117/128 tok=117 d=117]",
     2,
     "atom_native",
     {117, 117, 0, 0, 117, 117},
     {0, 0, 0, 0, 117, 0, 0, 0},
     0},
    {"prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]",
     1,
     "atom_detailed",
     {14721, 2, 2, 14721, 0, 0},
     {14721, 14721, 108745533, 108745533, 0, 0, 0, 0},
     1},
    {"decode[bs=32 tok=128 d=32 spec=3 sqsq=512 sqsk=262144 sk=65536]",
     1,
     "atom_detailed",
     {128, 32, 0, 0, 32, 128},
     {0, 0, 0, 0, 128, 65536, 512, 262144},
     1},
    {"decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]",
     1,
     "atom_detailed",
     {384, 128, 0, 0, 128, 384},
     {0, 0, 0, 0, 384, 258048, 132612, 1114112},
     1},
    {"decode[bs=x tok=1_0]", 2, "atom_native", {10, 0, 0, 0, 0, 10}, {0, 0, 0, 0, 10, 0, 0, 0}, 0},
    {"execute_diffusion_1_1024x1024",
     2,
     "diffusion_native",
     {1, 0, 0, 0, 0, 0},
     {0, 0, 0, 0, 0, 0, 0, 0},
     0},
    {"capture_128_decode", 0, "", {1, 1, 0, 0, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, 0},
    {"ProfilerStep#3", 0, "", {1, 1, 0, 0, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, 0},
    {"", 0, "", {1, 1, 0, 0, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, 0},
};

static const char *kind_name(enum mp_step_format f)
{
    switch (f) {
    case MP_STEP_VLLM_DETAILED:
        return "vllm_detailed";
    case MP_STEP_VLLM_NATIVE:
        return "vllm_native";
    case MP_STEP_SGLANG_DETAILED:
        return "sglang_detailed";
    case MP_STEP_SGLANG_NATIVE:
        return "sglang_native";
    case MP_STEP_ATOM_DETAILED:
        return "atom_detailed";
    case MP_STEP_ATOM_NATIVE:
        return "atom_native";
    case MP_STEP_DIFFUSION:
        return "diffusion_native";
    default:
        return "";
    }
}

void test_annotations(void **state)
{
    (void)state;
    struct mp_step_patterns *p;
    assert_int_equal(mp_step_patterns_new(&p), 0);
    for (size_t i = 0; i < sizeof(ann_cases) / sizeof(ann_cases[0]); i++) {
        const struct ann_case *c = &ann_cases[i];
        struct mp_step s;
        struct mp_step_details d;
        mp_step_parse(p, c->name, &s);
        mp_step_details(&s, &d);
        if (strcmp(kind_name(s.format), c->kind) != 0)
            fail_msg("%s: format %s, want %s", c->name, kind_name(s.format), c->kind);
        assert_int_equal(mp_step_tier(p, c->name), c->tier);
        int64_t got[6] = {d.batch_size,  d.num_requests,        d.context_requests,
                          d.context_sum, d.generation_requests, d.generation_sum};
        int64_t sq[8] = {s.c_sq, s.c_sk, s.c_sqsq, s.c_sqsk, s.g_sq, s.g_sk, s.g_sqsq, s.g_sqsk};
        for (int k = 0; k < 6; k++)
            if (got[k] != c->d[k])
                fail_msg("%s: detail %d = %lld, want %lld", c->name, k, (long long)got[k],
                         (long long)c->d[k]);
        for (int k = 0; k < 8; k++)
            if (sq[k] != c->sq[k])
                fail_msg("%s: sq field %d = %lld, want %lld", c->name, k, (long long)sq[k],
                         (long long)c->sq[k]);
        assert_int_equal(s.has_sqsk, c->has_sqsk);
    }
    int64_t bs = 0;
    char mode[32];
    assert_true(mp_step_parse_capture(p, "capture_256_mixed_prefill", &bs, mode, sizeof(mode)));
    assert_int_equal(bs, 256);
    assert_string_equal(mode, "mixed_prefill");
    assert_false(mp_step_parse_capture(p, "execute_context_0(0)_generation_1(1)", &bs, NULL, 0));
    /* the format table names each format's engine */
    assert_string_equal(mp_step_format_engine(MP_STEP_VLLM_NATIVE), "vllm");
    assert_string_equal(mp_step_format_engine(MP_STEP_SGLANG_DETAILED), "sglang");
    assert_string_equal(mp_step_format_engine(MP_STEP_ATOM_NATIVE), "atom");
    assert_string_equal(mp_step_format_engine(MP_STEP_DIFFUSION), "xdit");
    assert_null(mp_step_format_engine(MP_STEP_UNMATCHED));
    mp_step_patterns_free(p);
}

void test_phases(void **state)
{
    (void)state;
    struct mp_step_details d[4] = {
        {100, 2, 2, 100, 0, 0}, /* prefill only */
        {34, 3, 1, 32, 2, 2},   /* mixed */
        {8, 8, 0, 0, 8, 8},     /* decode only */
        {1, 0, 0, 0, 0, 0},     /* idle */
    };
    assert_int_equal(mp_step_phase_of(&d[0]), MP_PHASE_PREFILL_ONLY);
    assert_int_equal(mp_step_phase_of(&d[1]), MP_PHASE_PREFILLDECODE);
    assert_int_equal(mp_step_phase_of(&d[2]), MP_PHASE_DECODE_ONLY);
    assert_int_equal(mp_step_phase_of(&d[3]), MP_PHASE_IDLE);
    assert_string_equal(mp_step_phase_name(MP_PHASE_DECODE_ONLY), "decode_only");
    struct mp_step_window_phase w;
    mp_step_window_phase(d, 4, &w);
    assert_int_equal(w.num_prefill, 1);
    assert_int_equal(w.num_prefilldecode, 1);
    assert_int_equal(w.num_decode, 1);
    assert_int_equal(w.avg_bs, 35);  /* int(143 / 4) */
    assert_int_equal(w.avg_conc, 3); /* int(13 / 4) */
}

struct ss_case { // NOLINT(clang-analyzer-optin.performance.Padding): table order
    const char *const *names;
    size_t n;
    int num_steps;
    size_t nregions;
    long regions[3][2];
    long windows[3][2]; /* mixed, decode_only, max_prefilldecode; -1 = none */
    int have_workload;
    int64_t conc;
    double osl, r;
};

#include "steps_cases.h"

void test_steady_state(void **state)
{
    (void)state;
    struct mp_step_patterns *p;
    assert_int_equal(mp_step_patterns_new(&p), 0);
    for (size_t c = 0; c < sizeof(ss_cases) / sizeof(ss_cases[0]); c++) {
        const struct ss_case *k = &ss_cases[c];
        struct mp_step_details *d = calloc(k->n, sizeof(*d));
        assert_non_null(d);
        for (size_t i = 0; i < k->n; i++) {
            struct mp_step s;
            mp_step_parse(p, k->names[i], &s);
            mp_step_details(&s, &d[i]);
        }
        size_t(*regions)[2] = NULL;
        size_t nr = mp_step_steady_regions(d, k->n, k->num_steps, &regions);
        if (nr != k->nregions)
            fail_msg("case %zu: %zu regions, want %zu", c, nr, k->nregions);
        for (size_t i = 0; i < nr; i++)
            if ((long)regions[i][0] != k->regions[i][0] || (long)regions[i][1] != k->regions[i][1])
                fail_msg("case %zu: region %zu = [%zu, %zu), want [%ld, %ld)", c, i, regions[i][0],
                         regions[i][1], k->regions[i][0], k->regions[i][1]);
        struct mp_step_workload w = {k->have_workload, k->have_workload, k->have_workload,
                                     k->conc,          k->osl,           k->r};

        static const enum mp_step_window_mode modes[3] = {MP_WINDOW_MIXED, MP_WINDOW_DECODE_ONLY,
                                                          MP_WINDOW_MAX_PREFILLDECODE};

        for (int m = 0; m < 3; m++) {
            size_t s = 0, e = 0;
            bool ok = mp_step_window(d, k->n, k->num_steps, regions, nr, modes[m],
                                     m == 0 ? &w : NULL, &s, &e);
            long gs = ok ? (long)s : -1, ge = ok ? (long)e : -1;
            if (gs != k->windows[m][0] || ge != k->windows[m][1])
                fail_msg("case %zu mode %d: window [%ld, %ld), want [%ld, %ld)", c, m, gs, ge,
                         k->windows[m][0], k->windows[m][1]);
        }
        free(regions);
        free(d);
    }
    mp_step_patterns_free(p);
}
