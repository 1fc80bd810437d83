/* Inference step annotations and steady-state windows, as TraceLens's
 * annotation_utils.py and split_inference/steady_state_window.py define them
 * (docs/tracelens-compat.md, Inference steps). The patterns are matched with POSIX extended
 * regexes anchored at the start, as Python's re.match is; the fields are
 * then read by small hand-written scanners that reproduce the Python
 * parsers' results (including their fallbacks to 0 on unparsable numbers).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/trace_steps.h>

enum {
    RX_VLLM_DETAILED,
    RX_VLLM_NATIVE,
    RX_SGLANG_DETAILED,
    RX_SGLANG_NATIVE,
    RX_ATOM_DETAILED,
    RX_ATOM_NATIVE,
    RX_DIFFUSION,
    RX_CAPTURE,
    RX_SGLANG_FIELDS,
    RX_COUNT
};

/* \d of Python is [0-9] here; \b is glibc's GNU extension. */
static const char *const rx_src[RX_COUNT] = {
    // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one pattern split over two lines
    [RX_VLLM_DETAILED] = "^execute_[0-9]+_context_[0-9]+\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)"
                         "_generation_[0-9]+\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)",
    [RX_VLLM_NATIVE] = "^execute_context_[0-9]+\\([0-9]+\\)_generation_[0-9]+\\([0-9]+\\)",
    [RX_SGLANG_DETAILED] = "^step\\[(EXTEND|DECODE|MIXED)\\b[^]]*sqsq=[0-9]+[^]]*\\]",
    [RX_SGLANG_NATIVE] = "^step\\[(EXTEND|DECODE|MIXED)\\b.*\\]",
    [RX_ATOM_DETAILED] = "^(prefill|decode)\\[.*sqsq=[0-9]+.*\\]",
    [RX_ATOM_NATIVE] = "^(prefill|decode)\\[(.*)\\]",
    [RX_DIFFUSION] = "^execute_diffusion_([0-9]+)_([0-9]+x[0-9]+)",
    [RX_CAPTURE] = "^capture_([0-9]+)_(.*)",
    [RX_SGLANG_FIELDS] =
        "^step\\[([A-Za-z0-9_]+)[[:space:]]+bs=([0-9]+)([[:space:]]+toks=([0-9]+))?\\]",
};

struct mp_step_patterns {
    regex_t rx[RX_COUNT];
    int ncompiled;
};

int mp_step_patterns_new(struct mp_step_patterns **out)
{
    struct mp_step_patterns *p = calloc(1, sizeof(*p));
    if (!p)
        return MP_ENOMEM;
    for (int i = 0; i < RX_COUNT; i++) {
        if (regcomp(&p->rx[i], rx_src[i], REG_EXTENDED | REG_NEWLINE) != 0) {
            mp_step_patterns_free(p);
            return MP_EINVAL;
        }
        p->ncompiled = i + 1;
    }
    *out = p;
    return 0;
}

void mp_step_patterns_free(struct mp_step_patterns *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->ncompiled; i++)
        regfree(&p->rx[i]);
    free(p);
}

static bool rx_match(const struct mp_step_patterns *p, int which, const char *s, regmatch_t *m,
                     size_t nm)
{
    return regexec(&p->rx[which], s, nm, m, 0) == 0;
}

/* Python int() of a token: optional sign, digits; anything else -> 0. */
static int64_t safe_int(const char *s, size_t n)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i == n)
        return 0;
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] == '_' && i + 1 < n && isdigit((unsigned char)s[i + 1]) && i > 0 &&
            isdigit((unsigned char)s[i - 1]))
            continue; /* Python allows single underscores between digits */
        if (!isdigit((unsigned char)s[i]))
            return 0;
        if (v > (INT64_MAX - 9) / 10)
            return neg ? INT64_MIN : INT64_MAX;
        v = v * 10 + (s[i] - '0');
    }
    return neg ? -v : v;
}

/* The first run of digits in s[0..n) (TraceLens's _first_int). */
static int64_t first_int(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && !isdigit((unsigned char)s[i]))
        i++;
    size_t j = i;
    while (j < n && isdigit((unsigned char)s[j]))
        j++;
    return j > i ? safe_int(s + i, j - i) : 0;
}

/* The first `max` digit runs of s[0..n) into out; returns how many. */
static size_t digit_runs(const char *s, size_t n, int64_t *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < max;) {
        if (!isdigit((unsigned char)s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && isdigit((unsigned char)s[j]))
            j++;
        out[k++] = safe_int(s + i, j - i);
        i = j;
    }
    return k;
}

static bool is_word(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* key=value pairs of a body, as re.findall(r"(\w+)=(VALUE)") with the
 * value rule given by `atom`: digits only (SGLang), or a bracketed list
 * with an optional "...+N" tail, else a run of non-spaces (ATOM). */
struct kv {
    const char *k, *v;
    size_t kn, vn;
};

static size_t find_kv(const char *s, size_t n, bool atom, struct kv *out, size_t max)
{
    size_t k = 0;
    size_t i = 0;
    while (i < n && k < max) {
        if (!is_word(s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && is_word(s[j]))
            j++;
        if (j >= n || s[j] != '=') {
            i = j;
            continue;
        }
        size_t v = j + 1, e = v;
        if (!atom) {
            while (e < n && isdigit((unsigned char)s[e]))
                e++;
        } else {
            if (v < n && s[v] == '[') {
                const char *close = memchr(s + v + 1, ']', n - v - 1);
                if (close) {
                    e = (size_t)(close - s) + 1;
                    if (n - e >= 5 && memcmp(s + e, "...+", 4) == 0 &&
                        isdigit((unsigned char)s[e + 4])) {
                        e += 4;
                        while (e < n && isdigit((unsigned char)s[e]))
                            e++;
                    }
                }
            }
            if (e == v)
                while (e < n && !isspace((unsigned char)s[e]))
                    e++;
        }
        if (e == v) { /* no value: the regex fails here, retry after the word */
            i = j;
            continue;
        }
        out[k++] = (struct kv){s + i, s + v, j - i, e - v};
        i = e;
    }
    return k;
}

/* The last value of key (dict() keeps the last), or NULL. */
static const struct kv *kv_get(const struct kv *kv, size_t n, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = n; i-- > 0;)
        if (kv[i].kn == kl && memcmp(kv[i].k, key, kl) == 0)
            return &kv[i];
    return NULL;
}

static int64_t kv_int(const struct kv *kv, size_t n, const char *key)
{
    const struct kv *e = kv_get(kv, n, key);
    return e ? safe_int(e->v, e->vn) : 0;
}

static void fill_vllm_detailed(struct mp_step *s, const char *name, size_t n)
{
    int64_t v[11] = {0};
    digit_runs(name, n, v, 11);
    s->context_requests = v[1];
    s->c_sq = v[2], s->c_sk = v[3], s->c_sqsq = v[4], s->c_sqsk = v[5];
    s->generation_requests = v[6];
    s->g_sq = v[7], s->g_sk = v[8], s->g_sqsq = v[9], s->g_sqsk = v[10];
    s->context_sum = s->c_sq;
    s->generation_sum = s->g_sq;
    s->batch_size = s->c_sq + s->g_sq;
    s->has_sqsk = true;
}

static void fill_vllm_native(struct mp_step *s, const char *name, size_t n)
{
    int64_t v[4] = {0};
    digit_runs(name, n, v, 4);
    s->context_requests = v[0], s->context_sum = v[1];
    s->generation_requests = v[2], s->generation_sum = v[3];
    s->c_sq = s->context_sum;
    s->g_sq = s->generation_sum;
    s->batch_size = s->c_sq + s->g_sq;
}

static bool fill_sglang_native(const struct mp_step_patterns *p, struct mp_step *s,
                               const char *name)
{
    regmatch_t m[5];
    if (!rx_match(p, RX_SGLANG_FIELDS, name, m, 5))
        return false;
    size_t wn = (size_t)(m[1].rm_eo - m[1].rm_so);
    int64_t bs = safe_int(name + m[2].rm_so, (size_t)(m[2].rm_eo - m[2].rm_so));
    int64_t toks =
        m[4].rm_so >= 0 ? safe_int(name + m[4].rm_so, (size_t)(m[4].rm_eo - m[4].rm_so)) : 0;
    if (wn == 6 && memcmp(name + m[1].rm_so, "DECODE", 6) == 0) {
        s->generation_requests = s->generation_sum = s->g_sq = bs;
    } else {
        s->context_requests = bs;
        s->context_sum = s->c_sq = toks;
    }
    s->batch_size = s->c_sq + s->g_sq ? s->c_sq + s->g_sq : bs;
    return true;
}

static void fill_sglang_detailed(struct mp_step *s, const char *name)
{
    const char *lb = strchr(name, '[');
    const char *rb = strrchr(name, ']');
    if (!lb || !rb || rb < lb)
        return;
    const char *body = lb + 1;
    size_t bn = (size_t)(rb - body);
    struct kv kv[64];
    size_t nk = find_kv(body, bn, false, kv, 64);
    size_t mstart = 0;
    while (mstart < bn && isspace((unsigned char)body[mstart]))
        mstart++;
    size_t mend = mstart;
    while (mend < bn && !isspace((unsigned char)body[mend]))
        mend++;
    const char *mode = body + mstart;
    size_t mn = mend - mstart;
    int64_t bs = kv_int(kv, nk, "bs"), toks = kv_int(kv, nk, "toks");
    s->c_sq = kv_int(kv, nk, "c_sq"), s->c_sk = kv_int(kv, nk, "c_sk");
    s->c_sqsq = kv_int(kv, nk, "c_sqsq"), s->c_sqsk = kv_int(kv, nk, "c_sqsk");
    s->g_sq = kv_int(kv, nk, "g_sq"), s->g_sk = kv_int(kv, nk, "g_sk");
    s->g_sqsq = kv_int(kv, nk, "g_sqsq"), s->g_sqsk = kv_int(kv, nk, "g_sqsk");
    if (mn == 6 && memcmp(mode, "DECODE", 6) == 0) {
        s->generation_requests = bs;
        s->generation_sum = s->g_sq;
    } else if (mn == 6 && memcmp(mode, "EXTEND", 6) == 0) {
        s->context_requests = bs;
        s->context_sum = s->c_sq;
    } else {
        s->context_requests = kv_int(kv, nk, "c");
        s->generation_requests = kv_int(kv, nk, "g");
        s->context_sum = s->c_sq;
        s->generation_sum = s->g_sq;
    }
    s->batch_size = s->c_sq + s->g_sq ? s->c_sq + s->g_sq : toks ? toks : bs;
    s->has_sqsk = true;
}

static bool fill_atom(const struct mp_step_patterns *p, struct mp_step *s, const char *name)
{
    regmatch_t m[3];
    if (!rx_match(p, RX_ATOM_NATIVE, name, m, 3))
        return false;
    bool prefill = name[0] == 'p';
    const char *body = name + m[2].rm_so;
    size_t bn = (size_t)(m[2].rm_eo - m[2].rm_so);
    struct kv kv[64];
    size_t nk = find_kv(body, bn, true, kv, 64);
    const struct kv *bse = kv_get(kv, nk, "bs");
    int64_t bs = bse ? first_int(bse->v, bse->vn) : 0;
    int64_t tokens = kv_int(kv, nk, "tok");
    int64_t sk = kv_int(kv, nk, "sk"), sqsq = kv_int(kv, nk, "sqsq"), sqsk = kv_int(kv, nk, "sqsk");
    bool detailed = kv_get(kv, nk, "sqsq") && kv_get(kv, nk, "sqsk");
    if (prefill) {
        s->context_requests = bs, s->context_sum = tokens;
        s->c_sq = tokens, s->c_sk = sk, s->c_sqsq = sqsq, s->c_sqsk = sqsk;
    } else {
        s->generation_requests = bs, s->generation_sum = tokens;
        s->g_sq = tokens, s->g_sk = sk, s->g_sqsq = sqsq, s->g_sqsk = sqsk;
    }
    s->batch_size = tokens;
    s->has_sqsk = detailed;
    return true;
}

/* fillers of the formats whose pattern match always parses */
static bool row_vllm_detailed(const struct mp_step_patterns *p, struct mp_step *s, const char *name)
{
    (void)p;
    fill_vllm_detailed(s, name, strlen(name));
    return true;
}

static bool row_vllm_native(const struct mp_step_patterns *p, struct mp_step *s, const char *name)
{
    (void)p;
    fill_vllm_native(s, name, strlen(name));
    return true;
}

static bool row_sglang_detailed(const struct mp_step_patterns *p, struct mp_step *s,
                                const char *name)
{
    (void)p;
    fill_sglang_detailed(s, name);
    return true;
}

static bool row_diffusion(const struct mp_step_patterns *p, struct mp_step *s, const char *name)
{
    regmatch_t m[3];
    if (!rx_match(p, RX_DIFFUSION, name, m, 3))
        return false;
    s->batch_size = safe_int(name + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
    return true;
}

/* The step annotation formats in TraceLens's matching priority: the first
 * row whose pattern matches and whose filler parses the name decides. A
 * filler that fails leaves the step as it found it, so later rows start
 * clean. tier: 1 = a detailed (primary) pattern, 2 = a native (backup)
 * one (mp_step_tier). A new engine's annotation is one row here, its
 * pattern in rx_src and its enum value in steps.h. */
static const struct step_format {
    enum mp_step_format format;
    const char *engine; /* whose annotation it is */
    int rx, tier;
    bool (*fill)(const struct mp_step_patterns *p, struct mp_step *s, const char *name);
} FORMATS[] = {
    {MP_STEP_VLLM_DETAILED, "vllm", RX_VLLM_DETAILED, 1, row_vllm_detailed},
    {MP_STEP_VLLM_NATIVE, "vllm", RX_VLLM_NATIVE, 2, row_vllm_native},
    {MP_STEP_SGLANG_DETAILED, "sglang", RX_SGLANG_DETAILED, 1, row_sglang_detailed},
    {MP_STEP_SGLANG_NATIVE, "sglang", RX_SGLANG_NATIVE, 2, fill_sglang_native},
    {MP_STEP_ATOM_DETAILED, "atom", RX_ATOM_DETAILED, 1, fill_atom},
    {MP_STEP_ATOM_NATIVE, "atom", RX_ATOM_NATIVE, 2, fill_atom},
    {MP_STEP_DIFFUSION, "xdit", RX_DIFFUSION, 2, row_diffusion},
};

enum mp_step_format mp_step_parse(const struct mp_step_patterns *p, const char *name,
                                  struct mp_step *out)
{
    memset(out, 0, sizeof(*out));
    out->batch_size = 1;
    for (size_t i = 0; i < sizeof(FORMATS) / sizeof(*FORMATS); i++)
        if (rx_match(p, FORMATS[i].rx, name, NULL, 0) && FORMATS[i].fill(p, out, name)) {
            out->format = FORMATS[i].format;
            break;
        }
    return out->format;
}

int mp_step_tier(const struct mp_step_patterns *p, const char *name)
{
    int tier = 0;
    for (size_t i = 0; i < sizeof(FORMATS) / sizeof(*FORMATS); i++)
        if ((tier == 0 || FORMATS[i].tier < tier) && rx_match(p, FORMATS[i].rx, name, NULL, 0))
            tier = FORMATS[i].tier;
    return tier;
}

const char *mp_step_format_engine(enum mp_step_format f)
{
    for (size_t i = 0; i < sizeof(FORMATS) / sizeof(*FORMATS); i++)
        if (FORMATS[i].format == f)
            return FORMATS[i].engine;
    return NULL;
}

bool mp_step_parse_capture(const struct mp_step_patterns *p, const char *name, int64_t *bs,
                           char *mode, size_t mode_len)
{
    regmatch_t m[3];
    if (!rx_match(p, RX_CAPTURE, name, m, 3))
        return false;
    *bs = safe_int(name + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
    if (mode && mode_len) {
        size_t n = (size_t)(m[2].rm_eo - m[2].rm_so);
        if (n >= mode_len)
            n = mode_len - 1;
        memcpy(mode, name + m[2].rm_so, n);
        mode[n] = 0;
    }
    return true;
}

void mp_step_details(const struct mp_step *s, struct mp_step_details *out)
{
    if (s->format == MP_STEP_UNMATCHED) {
        *out = (struct mp_step_details){1, 1, 0, 0, 1, 1};
        return;
    }
    out->batch_size = s->batch_size;
    out->num_requests = s->context_requests + s->generation_requests;
    out->context_requests = s->context_requests;
    out->context_sum = s->context_sum;
    out->generation_requests = s->generation_requests;
    out->generation_sum = s->generation_sum;
}

enum mp_step_phase mp_step_phase_of(const struct mp_step_details *d)
{
    bool c = d->context_requests > 0, g = d->generation_requests > 0;
    return c && g ? MP_PHASE_PREFILLDECODE
           : c    ? MP_PHASE_PREFILL_ONLY
           : g    ? MP_PHASE_DECODE_ONLY
                  : MP_PHASE_IDLE;
}

const char *mp_step_phase_name(enum mp_step_phase ph)
{
    switch (ph) {
    case MP_PHASE_PREFILL_ONLY:
        return "prefill_only";
    case MP_PHASE_PREFILLDECODE:
        return "prefilldecode";
    case MP_PHASE_DECODE_ONLY:
        return "decode_only";
    default:
        return "idle";
    }
}

void mp_step_window_phase(const struct mp_step_details *d, size_t n,
                          struct mp_step_window_phase *out)
{
    memset(out, 0, sizeof(*out));
    double bs = 0, conc = 0;
    for (size_t i = 0; i < n; i++) {
        switch (mp_step_phase_of(&d[i])) {
        case MP_PHASE_PREFILL_ONLY:
            out->num_prefill++;
            break;
        case MP_PHASE_PREFILLDECODE:
            out->num_prefilldecode++;
            break;
        case MP_PHASE_DECODE_ONLY:
            out->num_decode++;
            break;
        default:
            break;
        }
        bs += (double)d[i].batch_size;
        conc += (double)d[i].num_requests;
    }
    if (n) {
        out->avg_bs = (int64_t)(bs / (double)n);
        out->avg_conc = (int64_t)(conc / (double)n);
    }
}

static bool has_context(const struct mp_step_details *d)
{
    return d->context_requests > 0;
}

size_t mp_step_steady_regions(const struct mp_step_details *d, size_t n, int num_steps,
                              size_t (**regions)[2])
{
    *regions = NULL;
    if (n == 0)
        return 0;
    double thresh = (long long)n >= num_steps ? 0.1 : 0.2;
    int64_t gmax = d[0].num_requests;
    for (size_t i = 1; i < n; i++)
        if (d[i].num_requests > gmax)
            gmax = d[i].num_requests;
    double tol = fmax(1.0, thresh * (double)gmax);
    size_t(*r)[2] = malloc(sizeof(*r) * (n + 1));
    if (!r)
        return 0;
    size_t nr = 0;
    bool started = false;
    long count = 0;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        bool near = fabs((double)(d[i].num_requests - gmax)) <= tol;
        if (near) {
            if (!started)
                count++;
        } else if (started) {
            count--;
        }
        if (count > 5 && !started) {
            started = true;
            start = i - (size_t)count + 1;
        }
        if (count <= 0 && started) {
            r[nr][0] = start, r[nr][1] = i;
            nr++;
            started = false;
            count = 0;
        }
    }
    if (started) { /* Python closes an open region at the last index */
        r[nr][0] = start, r[nr][1] = n - 1;
        nr++;
    }
    if (nr == 0) {
        long ln = (long)n;
        long want = num_steps - ln > 8 ? num_steps - ln : 8;
        long delta = ln < want ? ln : want;
        long s = delta / 2;
        long e = ln - delta / 2;
        if (e < s + 1)
            e = s + 1;
        r[0][0] = (size_t)s, r[0][1] = (size_t)e;
        nr = 1;
    }
    *regions = r;
    return nr;
}

struct cand {
    size_t start, end;
    double pd_ratio, avg_requests;
    long pd_count;
};

static double mean_requests(const struct mp_step_details *d, size_t s, size_t e)
{
    double sum = 0;
    for (size_t i = s; i < e; i++)
        sum += (double)d[i].num_requests;
    return e > s ? sum / (double)(e - s) : 0;
}

static long count_pd(const struct mp_step_details *d, size_t s, size_t e)
{
    long c = 0;
    for (size_t i = s; i < e; i++)
        c += has_context(&d[i]);
    return c;
}

/* Longest run of steps satisfying pred inside [s, e), capped at num_steps
 * from its start; the first longest wins, as Python's max() does. */
static bool longest_run(const struct mp_step_details *d, size_t s, size_t e, int num_steps,
                        bool decode_only, size_t *ws, size_t *we)
{
    bool found = false;
    size_t best_s = 0, best_e = 0;
    bool in = false;
    size_t rs = 0;
    for (size_t i = s; i <= e; i++) {
        bool ok = i < e && (decode_only ? mp_step_phase_of(&d[i]) == MP_PHASE_DECODE_ONLY
                                        : has_context(&d[i]));
        if (ok && !in) {
            in = true;
            rs = i;
        } else if (!ok && in) {
            in = false;
            if (!found || i - rs > best_e - best_s) {
                best_s = rs, best_e = i;
                found = true;
            }
        }
    }
    if (!found)
        return false;
    *ws = best_s;
    *we = best_e < best_s + (size_t)num_steps ? best_e : best_s + (size_t)num_steps;
    return true;
}

bool mp_step_window(const struct mp_step_details *d, size_t n, int num_steps, size_t (*regions)[2],
                    size_t nregions, enum mp_step_window_mode mode,
                    const struct mp_step_workload *w, size_t *start, size_t *end)
{
    if (n == 0 || nregions == 0)
        return false;
    /* reference PD ratio: the largest region's (first largest wins) */
    size_t li = 0;
    for (size_t i = 1; i < nregions; i++)
        if (regions[i][1] - regions[i][0] > regions[li][1] - regions[li][0])
            li = i;
    size_t ls = regions[li][0], le = regions[li][1];
    long total = 0, total_pd = 0;
    for (size_t i = 0; i < nregions; i++) {
        total += (long)(regions[i][1] - regions[i][0]);
        total_pd += count_pd(d, regions[i][0], regions[i][1]);
    }
    /* TraceLens passes the all-regions average on as the reference */
    double ref = total > 0 ? (double)total_pd / (double)total : 0.0;
    if (mode == MP_WINDOW_DECODE_ONLY)
        return longest_run(d, ls, le, num_steps, true, start, end);
    if (mode == MP_WINDOW_MAX_PREFILLDECODE)
        return longest_run(d, ls, le, num_steps, false, start, end);

    if (w && w->have_conc && w->have_osl && w->have_r) {
        double r = w->r < 0 ? 0 : w->r > 1 ? 1 : w->r;
        double ideal = ((double)w->conc * 2.0) / (w->osl * (1.0 + r));
        double need = ceil(1.0 / ideal);
        if (need > num_steps && need < 1e9)
            num_steps = (int)need;
        ref = ideal;
    }
    int divider = num_steps / 2 < 10 ? num_steps / 2 : 10;
    if (divider < 1)
        divider = 1;
    int step = num_steps / divider > 1 ? num_steps / divider : 1;
    size_t ncand = 0;
    struct cand *c = NULL;
    if (le - ls >= (size_t)num_steps) {
        size_t cap = (le - ls - (size_t)num_steps) / (size_t)step + 1;
        c = malloc(sizeof(*c) * cap);
        if (!c)
            return false;
        for (size_t s1 = ls; s1 + (size_t)num_steps <= le; s1 += (size_t)step) {
            long pd = count_pd(d, s1, s1 + (size_t)num_steps);
            c[ncand++] = (struct cand){s1, s1 + (size_t)num_steps, (double)pd / num_steps,
                                       mean_requests(d, s1, s1 + (size_t)num_steps), pd};
        }
    } else {
        c = malloc(sizeof(*c));
        if (!c)
            return false;
        long pd = count_pd(d, ls, le);
        c[ncand++] = (struct cand){ls, le, le > ls ? (double)pd / (double)(le - ls) : 0.0,
                                   mean_requests(d, ls, le), pd};
    }
    bool any_pd = false;
    for (size_t i = 0; i < ncand; i++)
        any_pd |= c[i].pd_count > 0;
    /* min by (|ratio - ref|, -avg_requests); the first minimum wins */
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < ncand; i++) {
        if (any_pd && c[i].pd_count == 0)
            continue;
        if (best == SIZE_MAX) {
            best = i;
            continue;
        }
        double di = fabs(c[i].pd_ratio - ref), db = fabs(c[best].pd_ratio - ref);
        if (di < db || (di == db && c[i].avg_requests > c[best].avg_requests))
            best = i;
    }
    if (best == SIZE_MAX) {
        free(c);
        return false;
    }
    *start = c[best].start;
    *end = c[best].end;
    free(c);
    return true;
}
