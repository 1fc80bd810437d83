/* Sweeps: the statistics of a load point, the SLA and search grammar, the
 * saturation rule, and the sweep's own bookkeeping. The documents are in
 * sweep_out.c (JSON, CSV, text, loading), sweep_html.c (the frontier page)
 * and sweep_cmp.c (two sweeps side by side); the driver that runs points is
 * serve/sweep.c. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/stats.h>
#include <magpie/sweep.h>

#include "loadgen_int.h"

static const char *const EXTRA_NAMES[] = {"tokens_per_s_per_user", "tokens_per_s_per_gpu",
                                          "mean_concurrency", "request_goodput"};

const char *mp_sweep_metric_name(int m)
{
    if (m >= 0 && m < MP_BCMP_N_METRICS)
        return mp_bcmp_metric_name(m);
    if (m >= MP_BCMP_N_METRICS && m < MP_SWEEP_N_METRICS)
        return EXTRA_NAMES[m - MP_BCMP_N_METRICS];
    return "";
}

bool mp_sweep_metric_higher_better(int m)
{
    if (m < MP_BCMP_N_METRICS)
        return mp_bcmp_metric_higher_better(m);
    return m != MP_SWEEP_CONC_MEAN;
}

int mp_sweep_metric_parse(const char *s)
{
    for (int m = 0; m < MP_SWEEP_N_METRICS; m++)
        if (!strcmp(s, mp_sweep_metric_name(m)))
            return m;
    /* vLLM's result keys: STAT_METRIC_ms */
    static const char *const stat[] = {"mean", "median", "p99"};
    static const char *const metric[] = {"ttft", "tpot", "itl", "e2el"};
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++) {
            char name[32];
            snprintf(name, sizeof(name), "%s_%s_ms", stat[j], metric[k]);
            if (!strcmp(s, name))
                return MP_BCMP_TTFT_MEAN + 3 * k + j;
        }
    if (!strcmp(s, "output_token_throughput") || !strcmp(s, "output_tps"))
        return MP_BCMP_OUT_TPS;
    return -1;
}

const char *mp_sweep_sla_state_name(enum mp_sweep_sla_state s)
{
    static const char *const names[] = {"none", "pass", "fail", "pass (near the limit)",
                                        "fail (near the limit)"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "none";
}

const char *mp_sweep_var_name(enum mp_sweep_var v)
{
    return v == MP_SWEEP_VAR_CONCURRENCY ? "max_concurrency"
           : v == MP_SWEEP_VAR_RATE      ? "request_rate"
                                         : "none";
}

static bool parse_double(const char *s, const char *end, double *out)
{
    char buf[64];
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!strcmp(buf, "inf")) {
        *out = INFINITY;
        return true;
    }
    char *e;
    errno = 0;
    double v = strtod(buf, &e);
    if (*e || errno || isnan(v))
        return false;
    *out = v;
    return true;
}

int mp_sweep_sla_parse(const char *s, struct mp_sweep_sla *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    const char *op = strpbrk(s, "<>");
    if (!op || op == s)
        return mp_diag_set(d, MP_EINVAL,
                           "SLA '%s': want METRIC<=LIMIT or METRIC>=LIMIT, e.g. p99_ttft_ms<=150",
                           s);
    char name[64];
    size_t n = (size_t)(op - s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= sizeof(name))
        return mp_diag_set(d, MP_EINVAL, "SLA '%s': metric name too long", s);
    memcpy(name, s, n);
    name[n] = 0;
    const char *v = op + 1 + (op[1] == '=');
    while (isspace((unsigned char)*v))
        v++;
    out->metric = mp_sweep_metric_parse(name);
    if (out->metric < 0 || out->metric == MP_SWEEP_GOODPUT)
        return mp_diag_set(d, MP_EINVAL,
                           "SLA '%s': unknown metric '%s' (p99_ttft_ms, mean_tpot_ms, "
                           "median_e2el_ms, output_throughput, ...; docs/sweep.md)",
                           s, name);
    if (!parse_double(v, v + strlen(v), &out->limit) || !isfinite(out->limit) || out->limit < 0)
        return mp_diag_set(d, MP_EINVAL, "SLA '%s': the limit must be a number >= 0", s);
    out->upper = *op == '<';
    snprintf(out->text, sizeof(out->text), "%s%s%g", mp_sweep_metric_name(out->metric),
             out->upper ? "<=" : ">=", out->limit);
    return 0;
}

int mp_sweep_search_parse(const char *s, struct mp_sweep_search *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2)
        return mp_diag_set(d, MP_EINVAL,
                           "--search '%s': want max_concurrency:LO:HI or request_rate:LO:HI", s);
    size_t n = (size_t)(c1 - s);
    if (n == strlen("max_concurrency") && !strncmp(s, "max_concurrency", n))
        out->var = MP_SWEEP_VAR_CONCURRENCY;
    else if (n == strlen("request_rate") && !strncmp(s, "request_rate", n))
        out->var = MP_SWEEP_VAR_RATE;
    else
        return mp_diag_set(d, MP_EINVAL,
                           "--search '%s': the load is max_concurrency or request_rate", s);
    if (!parse_double(c1 + 1, c2, &out->lo) ||
        !parse_double(c2 + 1, c2 + 1 + strlen(c2 + 1), &out->hi))
        return mp_diag_set(d, MP_EINVAL, "--search '%s': LO and HI must be numbers", s);
    bool ints = out->var == MP_SWEEP_VAR_CONCURRENCY;
    if (!(out->lo > 0) || !(out->hi > out->lo) || !isfinite(out->hi) ||
        (ints && (out->lo != floor(out->lo) || out->hi != floor(out->hi) || out->hi > 1e6)))
        return mp_diag_set(d, MP_EINVAL, "--search '%s': want 0 < LO < HI (finite%s)", s,
                           ints ? ", whole numbers up to 1000000" : "");
    return 0;
}

double mp_sweep_point_load(const struct mp_sweep_point *p, enum mp_sweep_var var)
{
    if (var == MP_SWEEP_VAR_RATE)
        return p->request_rate;
    return p->max_concurrency > 0 ? p->max_concurrency : INFINITY;
}

enum mp_sweep_sla_state mp_sweep_sla_judge(const struct mp_sweep_sla *sla, size_t n,
                                           const struct mp_sweep_point *p)
{
    if (!n)
        return MP_SWEEP_SLA_NONE;
    bool fail = false, near = false, point_fail = false;
    for (size_t i = 0; i < n; i++) {
        const struct mp_sweep_est *e = &p->m[sla[i].metric];
        double lim = sla[i].limit;
        if (isnan(e->v)) { /* no data (every request failed): the SLA is not met */
            fail = true;
            continue;
        }
        /* the interval's near and far ends, seen from the limit */
        double lo = isnan(e->lo) ? e->v : e->lo, hi = isnan(e->hi) ? e->v : e->hi;
        if (sla[i].upper) {
            fail |= lo > lim;
            near |= lo <= lim && hi > lim;
            point_fail |= e->v > lim;
        } else {
            fail |= hi < lim;
            near |= hi >= lim && lo < lim;
            point_fail |= e->v < lim;
        }
    }
    if (fail)
        return MP_SWEEP_SLA_FAIL;
    if (near)
        return point_fail ? MP_SWEEP_SLA_FAIL_NEAR : MP_SWEEP_SLA_PASS_NEAR;
    return MP_SWEEP_SLA_PASS;
}

void mp_sweep_stat_opts_default(struct mp_sweep_stat_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->nboot = 1000;
    o->ci_level = 0.95;
    o->gpus = 1;
    for (int k = 0; k < 3; k++)
        o->slo_ms[k] = NAN;
}

/* vLLM's goodput over the side's runs: good requests / duration, averaged. */
static double goodput(const struct mp_bcmp_side *s, const double slo[3])
{
    if (isnan(slo[0]) && isnan(slo[1]) && isnan(slo[2]))
        return NAN;
    double sum = 0;
    for (size_t r = 0; r < s->n_runs; r++) {
        const struct mp_bcmp_run *run = &s->runs[r];
        size_t good = 0;
        for (size_t i = 0; i < run->n_req; i++) {
            const struct mp_bcmp_request *q = &run->req[i];
            double tpot = isnan(q->tpot_ms) ? 0 : q->tpot_ms; /* one token: TPOT 0 (vLLM) */
            good += !(q->ttft_ms > slo[0]) && !(tpot > slo[1]) && !(q->e2el_ms > slo[2]);
        }
        sum += (double)good / run->duration_s;
    }
    return sum / (double)s->n_runs;
}

int mp_sweep_point_stats(const struct mp_bcmp_side *s, const struct mp_sweep_stat_opts *o,
                         struct mp_sweep_point *p)
{
    p->completed = p->failed = 0;
    for (int m = 0; m < MP_SWEEP_N_METRICS; m++)
        p->m[m] = (struct mp_sweep_est){NAN, NAN, NAN};
    for (size_t r = 0; r < s->n_runs; r++) {
        p->completed += s->runs[r].n_req;
        p->failed += s->runs[r].failed;
    }
    if (!p->completed)
        return 0;
    int nb = o->nboot > 0 ? o->nboot : 0;
    double point[MP_BCMP_N_METRICS];
    double *boot = nb ? mp_malloc((size_t)nb * MP_BCMP_N_METRICS * sizeof(double)) : NULL;
    double *col = nb ? mp_malloc((size_t)nb * sizeof(double)) : NULL;
    if (nb && (!boot || !col)) {
        free(boot);
        free(col);
        return MP_ENOMEM;
    }
    int rc = mp_bcmp_side_bootstrap(s, nb, o->seed, point, boot);
    double tail = (1 - o->ci_level) / 2;
    for (int m = 0; m < MP_BCMP_N_METRICS && !rc; m++) {
        p->m[m].v = point[m];
        size_t k = 0;
        for (int b = 0; b < nb; b++) {
            double v = boot[(size_t)b * MP_BCMP_N_METRICS + (size_t)m];
            if (!isnan(v))
                col[k++] = v;
        }
        if (k >= 2) {
            qsort(col, k, sizeof(double), mp_stats_cmp_double);
            p->m[m].lo = mp_stats_quantile_sorted(col, k, tail);
            p->m[m].hi = mp_stats_quantile_sorted(col, k, 1 - tail);
        }
    }
    free(boot);
    free(col);
    if (rc)
        return rc;
    /* monotone transforms carry the interval over exactly */
    const struct mp_sweep_est *tp = &p->m[MP_BCMP_TPOT_MEAN], *out = &p->m[MP_BCMP_OUT_TPS];
    if (tp->v > 0)
        p->m[MP_SWEEP_TPS_USER] = (struct mp_sweep_est){1000 / tp->v, 1000 / tp->hi, 1000 / tp->lo};
    double g = o->gpus > 0 ? o->gpus : 1;
    p->m[MP_SWEEP_TPS_GPU] = (struct mp_sweep_est){out->v / g, out->lo / g, out->hi / g};
    double conc = 0;
    for (size_t r = 0; r < s->n_runs; r++)
        conc += s->runs[r].conc_mean;
    p->m[MP_SWEEP_CONC_MEAN].v = conc / (double)s->n_runs;
    p->m[MP_SWEEP_GOODPUT].v = goodput(s, o->slo_ms);
    return 0;
}

/* Whether metric x grew by more than floor_pct, on its own p-value. */
static bool grew(const struct mp_bcmp_metric *x, double floor_pct, double alpha)
{
    return !isnan(x->p) && x->p < alpha && x->change_pct > floor_pct;
}

int mp_sweep_saturated(const struct mp_bcmp_side *prev, const struct mp_bcmp_side *cur,
                       bool over_limit, double min_gain_pct, uint64_t seed, bool *saturated,
                       char *reason, size_t reason_len, struct mp_diag *d)
{
    *saturated = false;
    reason[0] = 0;
    if (over_limit) {
        *saturated = true;
        snprintf(reason, reason_len, "requests failed beyond the limit");
        return 0;
    }
    size_t n_req = 0;
    for (size_t r = 0; r < cur->n_runs; r++)
        n_req += cur->runs[r].n_req;
    if (!n_req) {
        *saturated = true;
        snprintf(reason, reason_len, "no request succeeded");
        return 0;
    }
    struct mp_bcmp_opts o;
    mp_bcmp_opts_default(&o);
    o.seed = seed;
    o.min_effect_pct = min_gain_pct;
    o.single_run_effect_pct = min_gain_pct; /* the gain floor is the decision band here */
    o.allow_different = true;               /* the load differs by design */
    struct mp_bcmp_result *r = NULL;
    int rc = mp_bcmp_compare(prev, &cur, 1, &o, &r, d);
    if (rc)
        return rc;
    /* three questions asked in advance (throughput up, TTFT or E2EL up), each
     * on its own p-value of "|change| <= the gain floor": not the Holm
     * verdicts over all 14 metrics, which answer another question */
    const struct mp_bcmp_metric *m = r->pairs[0].m;
    bool rising = grew(&m[MP_BCMP_OUT_TPS], min_gain_pct, o.alpha);
    bool ttft = grew(&m[MP_BCMP_TTFT_MEAN], min_gain_pct, o.alpha);
    bool e2el = grew(&m[MP_BCMP_E2EL_MEAN], min_gain_pct, o.alpha);
    if (!rising && (ttft || e2el)) {
        *saturated = true;
        snprintf(reason, reason_len,
                 "output throughput %+.1f%% [%+.1f%%, %+.1f%%] (not surely above +%g%%) while "
                 "%s mean grew %+.1f%%",
                 m[MP_BCMP_OUT_TPS].change_pct, m[MP_BCMP_OUT_TPS].ci_lo, m[MP_BCMP_OUT_TPS].ci_hi,
                 min_gain_pct, ttft ? "TTFT" : "E2EL",
                 ttft ? m[MP_BCMP_TTFT_MEAN].change_pct : m[MP_BCMP_E2EL_MEAN].change_pct);
    }
    mp_bcmp_result_free(r);
    return 0;
}

/* ---- the sweep ---- */

struct mp_sweep *mp_sweep_new(const char *label, const char *target)
{
    struct mp_sweep *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->label = strdup(label ? label : "");
    s->target = strdup(target ? target : "");
    s->gpus = 1;
    s->repeat = 1;
    s->slares.point = SIZE_MAX;
    s->slares.answer = s->slares.first_fail = NAN;
    if (!s->label || !s->target) {
        mp_sweep_free(s);
        return NULL;
    }
    return s;
}

static void point_fini(struct mp_sweep_point *p)
{
    for (size_t i = 0; p->runs && i < p->n_runs; i++)
        free(p->runs[i]);
    free(p->runs);
    free(p->dir);
}

void mp_sweep_free(struct mp_sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_pts; i++)
        point_fini(&s->pts[i]);
    free(s->pts);
    for (size_t i = 0; i < s->n_notes; i++)
        free(s->notes[i]);
    free(s->notes);
    free(s->label);
    free(s->target);
    free(s->interleave);
    free(s->role);
    free(s->dir);
    free(s);
}

int mp_sweep_add_point(struct mp_sweep *s, const struct mp_sweep_point *p)
{
    struct mp_sweep_point *v = realloc(s->pts, (s->n_pts + 1) * sizeof(*v));
    if (!v)
        return MP_ENOMEM;
    s->pts = v;
    struct mp_sweep_point *q = &v[s->n_pts];
    *q = *p;
    q->dir = p->dir ? strdup(p->dir) : NULL;
    q->runs = calloc(p->n_runs + 1, sizeof(char *));
    bool ok = q->runs && (!p->dir || q->dir);
    for (size_t i = 0; ok && i < p->n_runs; i++)
        ok = (q->runs[i] = strdup(p->runs[i])) != NULL;
    if (!ok) {
        point_fini(q);
        return MP_ENOMEM;
    }
    s->n_pts++;
    return 0;
}

int mp_sweep_add_note(struct mp_sweep *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char **v = realloc(s->notes, (s->n_notes + 1) * sizeof(*v));
    if (!v)
        return MP_ENOMEM;
    s->notes = v;
    if (!(v[s->n_notes] = strdup(buf)))
        return MP_ENOMEM;
    s->n_notes++;
    return 0;
}

static bool same_rate(double a, double b)
{
    return a == b || (isinf(a) && isinf(b)) || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

size_t mp_sweep_find(const struct mp_sweep *s, int max_concurrency, double request_rate)
{
    for (size_t i = 0; i < s->n_pts; i++)
        if (s->pts[i].max_concurrency == max_concurrency &&
            same_rate(s->pts[i].request_rate, request_rate))
            return i;
    return SIZE_MAX;
}

void mp_sweep_point_name(const struct mp_sweep_point *p, char *out, size_t len)
{
    bool rate = isfinite(p->request_rate);
    if (p->max_concurrency > 0 && rate)
        snprintf(out, len, "c%d_r%g", p->max_concurrency, p->request_rate);
    else if (p->max_concurrency > 0)
        snprintf(out, len, "c%d", p->max_concurrency);
    else if (rate)
        snprintf(out, len, "r%g", p->request_rate);
    else
        snprintf(out, len, "unbounded");
}

/* Whether point x comes after point y in the climb along s->var (the
 * other load breaks ties). */
static bool after(const struct mp_sweep *s, size_t x, size_t y)
{
    enum mp_sweep_var v = s->var,
                      w = v == MP_SWEEP_VAR_RATE ? MP_SWEEP_VAR_CONCURRENCY : MP_SWEEP_VAR_RATE;
    double la = mp_sweep_point_load(&s->pts[x], v), lb = mp_sweep_point_load(&s->pts[y], v);
    if (la != lb)
        return la > lb;
    return mp_sweep_point_load(&s->pts[x], w) > mp_sweep_point_load(&s->pts[y], w);
}

int mp_sweep_sorted(const struct mp_sweep *s, size_t **order)
{
    size_t *o = mp_malloc((s->n_pts + 1) * sizeof(size_t));
    if (!o)
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n_pts; i++)
        o[i] = i;
    /* insertion sort: stable, and sweeps have tens of points */
    for (size_t i = 1; i < s->n_pts; i++)
        for (size_t k = i; k > 0 && after(s, o[k - 1], o[k]); k--) {
            size_t t = o[k];
            o[k] = o[k - 1];
            o[k - 1] = t;
        }
    *order = o;
    return 0;
}

/* completed and failed of a run's result JSON (the vLLM keys), and its
 * engine scrapes into acc (may be NULL). */
static int run_counts(const char *path, size_t *completed, size_t *failed,
                      struct loadgen_engine_acc *acc, struct mp_diag *d)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) {
        mp_diag_set(d, MP_EPARSE, "not a readable result JSON: %s", je.text);
        mp_diag_set_file(d, path);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return MP_EPARSE;
    }
    json_int_t c = json_integer_value(json_object_get(j, "completed")),
               f = json_integer_value(json_object_get(j, "failed"));
    if (acc)
        loadgen_engine_add(acc, json_object_get(json_object_get(j, "magpie"), "engine_metrics"));
    json_decref(j);
    *completed = c > 0 ? (size_t)c : 0;
    *failed = f > 0 ? (size_t)f : 0;
    return 0;
}

static int empty_side(const char *name, size_t failed, struct mp_bcmp_side **out, struct mp_diag *d)
{
    struct mp_bcmp_run *run = calloc(1, sizeof(*run));
    if (!run || mp_bcmp_run_build(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, failed, 1, run)) {
        free(run);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    if (mp_bcmp_side_from_runs(name, run, 1, out)) {
        mp_bcmp_run_fini(run);
        free(run);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    return 0;
}

int mp_sweep_point_side(const struct mp_sweep *s, const char *dir, size_t i,
                        struct mp_bcmp_side **out, struct mp_bcmp_engine *engine, struct mp_diag *d)
{
    *out = NULL;
    const struct mp_sweep_point *p = &s->pts[i];
    struct loadgen_engine_acc acc;
    loadgen_engine_init(&acc, engine);
    if (!p->n_runs)
        return mp_diag_set(d, MP_ENOTFOUND, "point %zu of the sweep has no run", i);
    struct mp_buf list, path;
    mp_buf_init(&list, 0);
    mp_buf_init(&path, 0);
    int rc = 0;
    size_t kept = 0, lost = 0;
    for (size_t r = 0; r < p->n_runs && !rc; r++) {
        size_t done = 0, failed = 0;
        mp_buf_reset(&path);
        if (mp_buf_printf(&path, "%s/%s", dir, p->runs[r]))
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        else
            rc = run_counts(mp_buf_cstr(&path), &done, &failed, engine ? &acc : NULL, d);
        if (!rc && !done) { /* nothing to load: every request of the run failed */
            lost += failed;
            continue;
        }
        if (!rc && mp_buf_printf(&list, "%s%s", kept++ ? "," : "", mp_buf_cstr(&path)))
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    char name[64];
    mp_sweep_point_name(p, name, sizeof(name));
    if (!rc && kept)
        rc = mp_bcmp_load(mp_buf_cstr(&list), name, out, d);
    else if (!rc) /* no run had a success: one empty run that carries the failures */
        rc = empty_side(name, lost, out, d);
    if (!rc && kept) /* the failures of the runs without a success still count */
        (*out)->runs[0].failed += lost;
    loadgen_engine_end(&acc);
    mp_buf_fini(&list);
    mp_buf_fini(&path);
    return rc;
}
