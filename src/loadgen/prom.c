/* A strict parser of the Prometheus text exposition format (version 0.0.4,
 * what vLLM's and SGLang's /metrics serve), and the mapping of their metric
 * names onto the engine metrics the loadgen records (docs/workloads.md).
 *
 * Accepted: blank lines, "#" comments (HELP and TYPE included), and samples
 * `name[{label="value",...}] value [timestamp]` with names
 * [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*, label values
 * with the escapes \\ \" \n, values as Go's ParseFloat reads them (plus
 * +Inf, -Inf, NaN) and an integer timestamp. Anything else is an error with
 * its line and column, so a page that is not Prometheus text is not read
 * as zeros.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_LINES (1u << 20)
#define MAX_LABELS 64

static bool name_start(char c, bool colon)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}

static bool name_char(char c, bool colon)
{
    return name_start(c, colon) || (c >= '0' && c <= '9');
}

struct pline {
    const char *p, *end, *err;
};

static void skip_blank(struct pline *l)
{
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
        l->p++;
}

/* {label="value",...} */
static bool labels(struct pline *l)
{
    l->p++; /* '{' */
    for (int n = 0;; n++) {
        skip_blank(l);
        if (l->p < l->end && *l->p == '}') {
            l->p++;
            return true;
        }
        if (n >= MAX_LABELS) {
            l->err = "more than 64 labels";
            return false;
        }
        if (l->p >= l->end || !name_start(*l->p, false)) {
            l->err = "expected a label name or '}'";
            return false;
        }
        while (l->p < l->end && name_char(*l->p, false))
            l->p++;
        skip_blank(l);
        if (l->p + 1 >= l->end || l->p[0] != '=' || l->p[1] != '"') {
            l->err = "expected =\" after the label name";
            return false;
        }
        l->p += 2;
        while (l->p < l->end && *l->p != '"') {
            if (*l->p == '\\') {
                if (l->p + 1 >= l->end || (l->p[1] != '\\' && l->p[1] != '"' && l->p[1] != 'n')) {
                    l->err = "bad escape in a label value (\\\\, \\\", \\n)";
                    return false;
                }
                l->p++;
            }
            l->p++;
        }
        if (l->p >= l->end) {
            l->err = "unterminated label value";
            return false;
        }
        l->p++;
        skip_blank(l);
        if (l->p < l->end && *l->p == ',')
            l->p++;
        else if (l->p >= l->end || *l->p != '}') {
            l->err = "expected ',' or '}' after a label";
            return false;
        }
    }
}

static bool value(struct pline *l, double *v)
{
    const char *s = l->p;
    while (l->p < l->end && *l->p != ' ' && *l->p != '\t')
        l->p++;
    size_t n = (size_t)(l->p - s);
    char buf[64];
    if (n == 0 || n >= sizeof(buf)) {
        l->err = "expected a value";
        return false;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!strcmp(buf, "+Inf") || !strcmp(buf, "Inf")) {
        *v = INFINITY;
        return true;
    }
    if (!strcmp(buf, "-Inf")) {
        *v = -INFINITY;
        return true;
    }
    if (!strcmp(buf, "NaN")) {
        *v = NAN;
        return true;
    }
    /* strtod also takes hex, "inf", "nan(...)" and leading blanks: not here */
    for (size_t k = 0; k < n; k++)
        if (!((buf[k] >= '0' && buf[k] <= '9') || buf[k] == '.' || buf[k] == 'e' || buf[k] == 'E' ||
              buf[k] == '+' || buf[k] == '-')) {
            l->err = "expected a number, +Inf, -Inf or NaN";
            return false;
        }
    char *e;
    *v = strtod(buf, &e);
    if (*e || e == buf) {
        l->err = "expected a number, +Inf, -Inf or NaN";
        return false;
    }
    return true;
}

/* One sample line; its metric name into name and nl. */
static bool sample(struct pline *l, const char **name, size_t *nl, double *v)
{
    if (!name_start(*l->p, true)) {
        l->err = "expected a metric name";
        return false;
    }
    *name = l->p;
    while (l->p < l->end && name_char(*l->p, true))
        l->p++;
    *nl = (size_t)(l->p - *name);
    if (l->p < l->end && *l->p == '{' && !labels(l))
        return false;
    if (l->p >= l->end || (*l->p != ' ' && *l->p != '\t')) {
        l->err = "expected a blank and the value after the name";
        return false;
    }
    skip_blank(l);
    if (!value(l, v))
        return false;
    skip_blank(l);
    if (l->p < l->end) { /* timestamp: an integer of ms */
        const char *t = l->p;
        if (*l->p == '-')
            l->p++;
        while (l->p < l->end && *l->p >= '0' && *l->p <= '9')
            l->p++;
        if (l->p == t || (l->p == t + 1 && *t == '-')) {
            l->err = "expected an integer timestamp or the end of the line";
            return false;
        }
        skip_blank(l);
        if (l->p < l->end) {
            l->err = "unexpected text after the timestamp";
            return false;
        }
    }
    return true;
}

int mp_loadgen_prom_parse(const char *text, size_t n, mp_loadgen_prom_fn fn, void *user,
                          struct mp_diag *d)
{
    const char *p = text, *end = text + n;
    long line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        if (++line > (long)MAX_LINES)
            return mp_diag_set(d, MP_EPARSE, "more than %u lines of metrics", MAX_LINES);
        if (le > p && le[-1] == '\r')
            le--;
        struct pline l = {p, le, NULL};
        skip_blank(&l);
        if (l.p < le && *l.p != '#') {
            const char *name = NULL;
            size_t name_len = 0;
            double v = 0;
            if (memchr(p, 0, (size_t)(le - p)))
                l.err = "NUL byte";
            if (!l.err && sample(&l, &name, &name_len, &v)) {
                int rc = fn(name, name_len, v, user);
                if (rc)
                    return rc;
            }
            if (l.err) {
                mp_diag_set(d, MP_EPARSE, "metrics: %s", l.err);
                mp_diag_set_pos(d, l.p - text, line, l.p - p + 1);
                return MP_EPARSE;
            }
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* ---- vLLM and SGLang names ---- */

static const char *const EM_NAMES[MP_LOADGEN_N_EM] = {
    "num_requests_running",
    "num_requests_waiting",
    "kv_cache_usage",
    "prefix_cache_queries",
    "prefix_cache_hits",
    "prefix_cache_hit_rate",
    "num_preemptions",
    "spec_decode_num_drafts",
    "spec_decode_num_draft_tokens",
    "spec_decode_num_accepted_tokens",
    "spec_decode_accept_length",
    "prompt_tokens",
    "generation_tokens",
};

const char *mp_loadgen_engine_metric_name(int k)
{
    return k >= 0 && k < MP_LOADGEN_N_EM ? EM_NAMES[k] : "";
}

static const struct {
    const char *name;
    int key;
} PROM_MAP[] = {
    {"vllm:num_requests_running", MP_LOADGEN_EM_RUNNING},
    {"sglang:num_running_reqs", MP_LOADGEN_EM_RUNNING},
    {"vllm:num_requests_waiting", MP_LOADGEN_EM_WAITING},
    {"sglang:num_queue_reqs", MP_LOADGEN_EM_WAITING},
    {"vllm:kv_cache_usage_perc", MP_LOADGEN_EM_KV_USAGE},
    {"vllm:gpu_cache_usage_perc", MP_LOADGEN_EM_KV_USAGE}, /* before vLLM V1 */
    {"sglang:token_usage", MP_LOADGEN_EM_KV_USAGE},
    {"vllm:prefix_cache_queries_total", MP_LOADGEN_EM_PREFIX_QUERIES},
    {"vllm:gpu_prefix_cache_queries_total", MP_LOADGEN_EM_PREFIX_QUERIES},
    {"vllm:prefix_cache_hits_total", MP_LOADGEN_EM_PREFIX_HITS},
    {"vllm:gpu_prefix_cache_hits_total", MP_LOADGEN_EM_PREFIX_HITS},
    /* SGLang counts cached prompt tokens per cache_source label (device,
     * host, storage) as requests finish, against its prompt_tokens_total:
     * the same hits / queries as vLLM's counters (its cache_hit_rate gauge
     * is the last logged prefill batch's) */
    {"sglang:cached_tokens_total", MP_LOADGEN_EM_PREFIX_HITS},
    {"sglang:prompt_tokens_total", MP_LOADGEN_EM_PREFIX_QUERIES},
    {"sglang:cache_hit_rate", MP_LOADGEN_EM_PREFIX_HIT_RATE},
    {"vllm:num_preemptions_total", MP_LOADGEN_EM_PREEMPTIONS},
    {"vllm:spec_decode_num_drafts_total", MP_LOADGEN_EM_SPEC_DRAFTS},
    {"vllm:spec_decode_num_draft_tokens_total", MP_LOADGEN_EM_SPEC_DRAFT_TOKENS},
    {"vllm:spec_decode_num_accepted_tokens_total", MP_LOADGEN_EM_SPEC_ACCEPTED},
    {"sglang:spec_accept_length", MP_LOADGEN_EM_SPEC_ACCEPT_LEN},
    {"vllm:prompt_tokens_total", MP_LOADGEN_EM_PROMPT_TOKENS},
    {"sglang:prompt_tokens_total", MP_LOADGEN_EM_PROMPT_TOKENS},
    {"vllm:generation_tokens_total", MP_LOADGEN_EM_GENERATION_TOKENS},
    {"sglang:generation_tokens_total", MP_LOADGEN_EM_GENERATION_TOKENS},
};

/* ratios are averaged over their series, everything else summed */
static bool is_ratio(int k)
{
    return k == MP_LOADGEN_EM_KV_USAGE || k == MP_LOADGEN_EM_PREFIX_HIT_RATE ||
           k == MP_LOADGEN_EM_SPEC_ACCEPT_LEN;
}

struct fold {
    struct mp_loadgen_scrape *s;
    int count[MP_LOADGEN_N_EM];
};

static int fold_one(const char *name, size_t n, double v, void *user)
{
    struct fold *f = user;
    for (size_t i = 0; i < sizeof(PROM_MAP) / sizeof(PROM_MAP[0]); i++) {
        if (strlen(PROM_MAP[i].name) != n || memcmp(PROM_MAP[i].name, name, n) != 0)
            continue;
        int k = PROM_MAP[i].key;
        if (isfinite(v)) {
            f->s->v[k] += v;
            f->count[k]++;
            f->s->have |= 1u << k;
        }
        /* a name may stand for two keys (sglang:prompt_tokens_total) */
    }
    return 0;
}

int mp_loadgen_prom_sample(const char *text, size_t n, struct mp_loadgen_scrape *out,
                           struct mp_diag *d)
{
    uint64_t t = out->t_ns;
    memset(out, 0, sizeof(*out));
    out->t_ns = t;
    struct fold f;
    memset(&f, 0, sizeof(f));
    f.s = out;
    int rc = mp_loadgen_prom_parse(text, n, fold_one, &f, d);
    for (int k = 0; k < MP_LOADGEN_N_EM; k++)
        if (is_ratio(k) && f.count[k] > 1)
            out->v[k] /= f.count[k];
    return rc;
}
