/* Private declarations shared by the loadgen sources: the random number
 * generator (numpy's legacy MT19937 stream, so schedules match vLLM's for the
 * same seed) and small helpers. */
#ifndef MP_LOADGEN_INT_H
#define MP_LOADGEN_INT_H

#include <stdint.h>

#include <magpie/loadgen.h>

struct loadgen_mt {
    uint32_t mt[624];
    int pos;
    bool has_gauss;
    double gauss;
};

/* numpy RandomState(seed) seeding (init_genrand with seed & 0xffffffff). */
void loadgen_mt_seed(struct loadgen_mt *m, uint32_t seed);
uint32_t loadgen_mt_u32(struct loadgen_mt *m);
/* numpy random_sample(): 53-bit double in [0, 1). */
double loadgen_mt_double(struct loadgen_mt *m);
/* numpy legacy standard_exponential / standard_gamma / gauss. */
double loadgen_mt_exponential(struct loadgen_mt *m);
double loadgen_mt_gamma(struct loadgen_mt *m, double shape);
/* Unbiased integer in [lo, hi] (not numpy's stream). */
int64_t loadgen_mt_range(struct loadgen_mt *m, int64_t lo, int64_t hi);

/* Validates one JSON value starting at p (leading whitespace allowed) and
 * returns the byte after it, or NULL with *err set (sse.c). */
const char *loadgen_json_skip(const char *p, const char *end, const char **err);
/* Rough token count of text without a tokenizer: word pieces the way BPE
 * pre-tokenisers split them (dataset.c; docs/metrics.md). */
int32_t mp_loadgen_estimate_tokens(const char *s, size_t n);
/* "ttft", "tpot", ... for enum mp_loadgen_metric (metrics.c). */
const char *mp_loadgen_metric_name(int k);
/* Appends s with <, >, & and " escaped for HTML text and attributes (html.c;
 * also the benchmark compare page). Nonzero when out of memory. */
int loadgen_html_esc(struct mp_buf *b, const char *s);

/* SVG plots of the HTML pages: margins left, bottom and top inside the svg. */
enum { LOADGEN_SVG_ML = 56, LOADGEN_SVG_MB = 34, LOADGEN_SVG_MT = 24 };

/* The opening of one SVG plot: its title, both axes with a grid of 5 ticks
 * each (0 to xmax, 0 to ymax) and the axis labels; the plot drawn after it
 * then closes the svg. */
struct loadgen_axes {
    int w, h; /* the svg's size */
    const char *title;
    double xmax, ymax;
    bool y_fixed;        /* y ticks as %.2f (fractions) instead of %.4g */
    const char *xl, *yl; /* axis labels; yl NULL for none */
};

int loadgen_svg_axes(struct mp_buf *b, const struct loadgen_axes *a);
/* Adds the token events of r's successful requests into 1-second buckets
 * b[0..nb) counted from origin_ns (events past the last bucket are left out):
 * each event counts its tokens when tokens (1 when not recorded), else 1. */
void loadgen_event_buckets(const struct mp_loadgen_result *r, uint64_t origin_ns, double *b,
                           size_t nb, bool tokens);
/* v rounded up to 1, 2 or 5 times a power of ten (1 when v is not > 0). */
double loadgen_nice_max(double v);

#endif
