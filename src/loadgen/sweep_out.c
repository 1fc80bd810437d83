/* Sweep documents: sweep.json (and reading it back), sweep.csv, and the
 * terminal table. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/sweep.h>

#include "loadgen_int.h"

#define SWEEP_FORMAT 1

/* A load as JSON: a number, "inf", or null for "no cap". */
static int jload(struct mp_buf *b, const char *key, int conc, double rate)
{
    int rc = mp_buf_printf(b, ", \"%s\": ", key);
    if (!strcmp(key, "max_concurrency"))
        return rc | (conc > 0 ? mp_buf_printf(b, "%d", conc) : mp_buf_puts(b, "null"));
    return rc | (isfinite(rate) ? mp_json_double(b, rate) : mp_buf_puts(b, "\"inf\""));
}

static int point_json(struct mp_buf *b, const struct mp_sweep_point *p)
{
    char name[64];
    mp_sweep_point_name(p, name, sizeof(name));
    int rc = mp_buf_puts(b, "{");
    rc |= loadgen_jstr(b, "name", name, false);
    rc |= jload(b, "max_concurrency", p->max_concurrency, p->request_rate);
    rc |= jload(b, "request_rate", p->max_concurrency, p->request_rate);
    rc |= loadgen_jstr(b, "dir", p->dir, true);
    rc |= mp_buf_puts(b, ", \"runs\": [");
    for (size_t i = 0; i < p->n_runs; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_str(b, p->runs[i], strlen(p->runs[i]));
    }
    rc |= mp_buf_printf(b, "], \"completed\": %zu, \"failed\": %zu, \"searched\": %s", p->completed,
                        p->failed, p->searched ? "true" : "false");
    rc |= loadgen_jstr(b, "sla", p->sla ? mp_sweep_sla_state_name(p->sla) : NULL, true);
    const struct mp_bcmp_engine *e = &p->engine;
    if (e->have) {
        rc |= mp_buf_puts(b, ", \"engine_metrics\": {");
        rc |= loadgen_jnum(b, "running_peak", e->running_peak, false);
        rc |= loadgen_jnum(b, "waiting_peak", e->waiting_peak, true);
        rc |= loadgen_jnum(b, "waiting_mean", e->waiting_mean, true);
        rc |= loadgen_jnum(b, "kv_cache_usage_peak", e->kv_peak, true);
        rc |= loadgen_jnum(b, "prefix_cache_hit_rate", e->hit_rate, true);
        rc |= loadgen_jnum(b, "num_preemptions", e->preemptions, true);
        rc |= mp_buf_putc(b, '}');
    } else {
        rc |= mp_buf_puts(b, ", \"engine_metrics\": null");
    }
    rc |= mp_buf_puts(b, ", \"metrics\": {");
    for (int m = 0; m < MP_SWEEP_N_METRICS; m++) {
        rc |= mp_buf_printf(b, "%s\"%s\": {", m ? ", " : "", mp_sweep_metric_name(m));
        rc |= loadgen_jnum(b, "value", p->m[m].v, false);
        rc |= loadgen_jnum(b, "ci_lo", p->m[m].lo, true);
        rc |= loadgen_jnum(b, "ci_hi", p->m[m].hi, true);
        rc |= mp_buf_putc(b, '}');
    }
    return rc | mp_buf_puts(b, "}}");
}

static double load_of(const struct mp_sweep *s, size_t i, enum mp_sweep_var v)
{
    return i < s->n_pts ? mp_sweep_point_load(&s->pts[i], v) : NAN;
}

static int knee_json(struct mp_buf *b, const struct mp_sweep *s)
{
    const struct mp_sweep_knee *k = &s->knee;
    int rc = mp_buf_printf(b, ", \"knee\": {\"found\": %s", k->found ? "true" : "false");
    if (k->found) {
        char name[64];
        mp_sweep_point_name(&s->pts[k->index], name, sizeof(name));
        rc |= loadgen_jstr(b, "point", name, true);
        rc |= loadgen_jnum(b, mp_sweep_var_name(s->var), load_of(s, k->index, s->var), true);
        rc |= loadgen_jnum(b, "saturated_at", load_of(s, k->next, s->var), true);
        const struct mp_sweep_est *t = &s->pts[k->index].m[MP_BCMP_OUT_TPS];
        rc |= mp_buf_puts(b, ", \"output_throughput\": {");
        rc |= loadgen_jnum(b, "value", t->v, false);
        rc |= loadgen_jnum(b, "ci_lo", t->lo, true);
        rc |= loadgen_jnum(b, "ci_hi", t->hi, true);
        rc |= mp_buf_putc(b, '}');
        rc |= loadgen_jstr(b, "reason", k->reason, true);
    }
    return rc | mp_buf_putc(b, '}');
}

static int sla_json(struct mp_buf *b, const struct mp_sweep *s)
{
    if (!s->n_sla)
        return mp_buf_puts(b, ", \"sla\": null");
    const struct mp_sweep_sla_result *r = &s->slares;
    int rc = mp_buf_puts(b, ", \"sla\": {\"limits\": [");
    for (size_t i = 0; i < s->n_sla; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_str(b, s->sla[i].text, strlen(s->sla[i].text));
    }
    rc |= mp_buf_putc(b, ']');
    if (r->done) {
        const char *var = mp_sweep_var_name(r->search.var);
        rc |= mp_buf_printf(b, ", \"search\": {\"var\": \"%s\", \"bounds\": [", var);
        rc |= mp_json_double(b, r->search.lo);
        rc |= mp_buf_puts(b, ", ");
        rc |= mp_json_double(b, r->search.hi);
        rc |= mp_buf_printf(b, "], \"points_tried\": %zu}", r->tried);
        rc |= loadgen_jnum(b, var, r->answer, true);
        rc |= loadgen_jnum(b, "first_fail", r->first_fail, true);
        rc |= mp_buf_printf(b, ", \"near_limit\": %s", r->near ? "true" : "false");
        char name[64] = "";
        if (r->point < s->n_pts)
            mp_sweep_point_name(&s->pts[r->point], name, sizeof(name));
        rc |= loadgen_jstr(b, "point", r->point < s->n_pts ? name : NULL, true);
        rc |=
            loadgen_jnum(b, "request_goodput",
                         r->point < s->n_pts ? s->pts[r->point].m[MP_SWEEP_GOODPUT].v : NAN, true);
    }
    return rc | mp_buf_putc(b, '}');
}

int mp_sweep_json(const struct mp_sweep *s, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = mp_buf_printf(b, "{\"magpie_sweep\": %d", SWEEP_FORMAT);
    rc |= loadgen_jstr(b, "label", s->label, true);
    rc |= loadgen_jstr(b, "target", s->target, true);
    rc |= loadgen_jstr(b, "interleave", s->interleave, true);
    rc |= loadgen_jstr(b, "role", s->role, true);
    rc |= loadgen_jstr(b, "var", mp_sweep_var_name(s->var), true);
    rc |= mp_buf_printf(b, ", \"gpus\": %d, \"repeat\": %d", s->gpus, s->repeat);
    rc |= loadgen_jnum(b, "min_gain_pct", s->min_gain_pct, true);
    rc |= mp_buf_puts(b, ", \"points\": [");
    size_t *order = NULL;
    if (mp_sweep_sorted(s, &order))
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n_pts; i++) {
        rc |= mp_buf_puts(b, i ? ",\n  " : "\n  ");
        rc |= point_json(b, &s->pts[order[i]]);
    }
    free(order);
    rc |= mp_buf_puts(b, "]");
    rc |= knee_json(b, s);
    rc |= sla_json(b, s);
    rc |= mp_buf_puts(b, ", \"notes\": [");
    for (size_t i = 0; i < s->n_notes; i++) {
        rc |= mp_buf_puts(b, i ? ", " : "");
        rc |= mp_json_str(b, s->notes[i], strlen(s->notes[i]));
    }
    rc |= mp_buf_puts(b, "]}\n");
    return rc ? MP_ENOMEM : 0;
}

static const char *const ENGINE_COLS[] = {"running_peak",          "waiting_peak",
                                          "waiting_mean",          "kv_cache_usage_peak",
                                          "prefix_cache_hit_rate", "num_preemptions"};

int mp_sweep_csv(const struct mp_sweep *s, struct mp_buf *out)
{
    struct mp_csv c;
    mp_csv_init(&c, out, "\n");
    int rc = 0;
    const char *head[] = {"point",     "max_concurrency", "request_rate", "runs",
                          "completed", "failed",          "searched",     "sla"};
    for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
        rc |= mp_csv_str(&c, head[i]);
    for (int m = 0; m < MP_SWEEP_N_METRICS; m++) {
        const char *n = mp_sweep_metric_name(m);
        rc |= mp_csv_str(&c, n);
        rc |= mp_csv_fmt(&c, "%s_ci_lo", n);
        rc |= mp_csv_fmt(&c, "%s_ci_hi", n);
    }
    for (size_t k = 0; k < sizeof(ENGINE_COLS) / sizeof(ENGINE_COLS[0]); k++)
        rc |= mp_csv_fmt(&c, "engine_%s", ENGINE_COLS[k]);
    rc |= mp_csv_end_row(&c);
    size_t *order = NULL;
    if (rc || mp_sweep_sorted(s, &order))
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct mp_sweep_point *p = &s->pts[order[i]];
        char name[64], num[64];
        mp_sweep_point_name(p, name, sizeof(name));
        rc |= mp_csv_str(&c, name);
        rc |=
            p->max_concurrency > 0 ? mp_csv_fmt(&c, "%d", p->max_concurrency) : mp_csv_str(&c, "");
        rc |= isfinite(p->request_rate) ? mp_csv_fmt(&c, "%.17g", p->request_rate)
                                        : mp_csv_str(&c, "inf");
        rc |= mp_csv_fmt(&c, "%zu", p->n_runs);
        rc |= mp_csv_fmt(&c, "%zu", p->completed);
        rc |= mp_csv_fmt(&c, "%zu", p->failed);
        rc |= mp_csv_str(&c, p->searched ? "true" : "false");
        rc |= mp_csv_str(&c, p->sla ? mp_sweep_sla_state_name(p->sla) : "");
        for (int m = 0; m < MP_SWEEP_N_METRICS; m++) {
            const double v[3] = {p->m[m].v, p->m[m].lo, p->m[m].hi};
            for (int k = 0; k < 3; k++) {
                if (isnan(v[k]))
                    num[0] = 0;
                else
                    mp_fmt_pyfloat(v[k], num, sizeof(num));
                rc |= mp_csv_str(&c, num);
            }
        }
        const struct mp_bcmp_engine *e = &p->engine;
        const double ev[] = {e->running_peak, e->waiting_peak, e->waiting_mean,
                             e->kv_peak,      e->hit_rate,     e->preemptions};
        for (size_t k = 0; k < sizeof(ev) / sizeof(ev[0]); k++) {
            if (!e->have || isnan(ev[k]))
                num[0] = 0;
            else
                mp_fmt_pyfloat(ev[k], num, sizeof(num));
            rc |= mp_csv_str(&c, num);
        }
        rc |= mp_csv_end_row(&c);
    }
    free(order);
    return rc ? MP_ENOMEM : 0;
}

/* ---- terminal table ---- */

static void cell(double v, char *out, size_t len)
{
    if (isnan(v))
        snprintf(out, len, "-");
    else if (fabs(v) >= 1000)
        snprintf(out, len, "%.0f", v);
    else if (fabs(v) >= 100)
        snprintf(out, len, "%.1f", v);
    else
        snprintf(out, len, "%.2f", v);
}

static void cell_ci(const struct mp_sweep_est *e, char *out, size_t len)
{
    char v[32], lo[32], hi[32];
    cell(e->v, v, sizeof(v));
    if (isnan(e->lo)) {
        snprintf(out, len, "%s", v);
        return;
    }
    cell(e->lo, lo, sizeof(lo));
    cell(e->hi, hi, sizeof(hi));
    snprintf(out, len, "%s [%s, %s]", v, lo, hi);
}

/* The engine's own view, when some point scraped its /metrics. */
static int engine_text(struct mp_buf *b, const struct mp_sweep *s, const size_t *order)
{
    bool any = false;
    for (size_t i = 0; i < s->n_pts; i++)
        any |= s->pts[i].engine.have;
    if (!any)
        return 0;
    int rc = mp_buf_printf(b, "  %-12s %12s %12s %12s %10s %12s %11s   (engine /metrics)\n",
                           "point", "running max", "waiting max", "waiting mean", "KV max",
                           "prefix hits", "preemptions");
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct mp_sweep_point *p = &s->pts[order[i]];
        if (!p->engine.have)
            continue;
        char name[64], v[6][32];
        mp_sweep_point_name(p, name, sizeof(name));
        const double ev[] = {p->engine.running_peak, p->engine.waiting_peak, p->engine.waiting_mean,
                             p->engine.kv_peak,      p->engine.hit_rate,     p->engine.preemptions};
        for (int k = 0; k < 6; k++)
            cell(ev[k], v[k], sizeof(v[k]));
        rc |= mp_buf_printf(b, "  %-12s %12s %12s %12s %10s %12s %11s\n", name, v[0], v[1], v[2],
                            v[3], v[4], v[5]);
    }
    return rc;
}

static size_t grid_points(const struct mp_sweep *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_pts; i++)
        n += !s->pts[i].searched;
    return n;
}

int mp_sweep_text(const struct mp_sweep *s, struct mp_buf *out)
{
    struct mp_buf *b = out;
    bool same = !strcmp(s->label, s->target);
    int rc = mp_buf_printf(b, "sweep %s%s%s: %zu point%s, %d run%s each\n", s->label,
                           same ? "" : " of ", same ? "" : s->target, s->n_pts,
                           s->n_pts == 1 ? "" : "s", s->repeat, s->repeat == 1 ? "" : "s");
    rc |=
        mp_buf_printf(b, "  %-12s %4s %7s  %-26s %-24s %-24s %-24s %s\n", "point", "runs", "failed",
                      "output tok/s [95% CI]", "tok/s/user", "p99 TTFT ms", "p99 TPOT ms", "SLA");
    size_t *order = NULL;
    if (rc || mp_sweep_sorted(s, &order))
        return MP_ENOMEM;
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct mp_sweep_point *p = &s->pts[order[i]];
        char name[64], tp[128], tu[128], ttft[128], tpot[128];
        mp_sweep_point_name(p, name, sizeof(name));
        cell_ci(&p->m[MP_BCMP_OUT_TPS], tp, sizeof(tp));
        cell_ci(&p->m[MP_SWEEP_TPS_USER], tu, sizeof(tu));
        cell_ci(&p->m[MP_BCMP_TTFT_P99], ttft, sizeof(ttft));
        cell_ci(&p->m[MP_BCMP_TPOT_P99], tpot, sizeof(tpot));
        rc |= mp_buf_printf(b, "  %-12s %4zu %7zu  %-26s %-24s %-24s %-24s %s%s\n", name, p->n_runs,
                            p->failed, tp, tu, ttft, tpot,
                            p->sla ? mp_sweep_sla_state_name(p->sla) : "",
                            s->knee.found && order[i] == s->knee.index ? "  <- knee" : "");
    }
    rc |= engine_text(b, s, order);
    free(order);
    if (s->knee.found)
        rc |= mp_buf_printf(b, "knee: %s %g (saturated at %g: %s)\n", mp_sweep_var_name(s->var),
                            load_of(s, s->knee.index, s->var), load_of(s, s->knee.next, s->var),
                            s->knee.reason);
    else if (s->var != MP_SWEEP_VAR_NONE && grid_points(s) > 1)
        rc |= mp_buf_puts(b, "knee: not reached (throughput still rising at the last point)\n");
    const struct mp_sweep_sla_result *r = &s->slares;
    if (r->done) {
        rc |= mp_buf_puts(b, "SLA");
        for (size_t i = 0; i < s->n_sla; i++)
            rc |= mp_buf_printf(b, " %s", s->sla[i].text);
        if (isnan(r->answer))
            rc |= mp_buf_printf(b, ": not met even at %s %g\n", mp_sweep_var_name(r->search.var),
                                r->search.lo);
        else
            rc |= mp_buf_printf(b, ": highest %s %g%s%s (first failing: %g; %zu points tried)\n",
                                mp_sweep_var_name(r->search.var), r->answer,
                                r->near ? ", near the limit" : "",
                                isnan(r->first_fail) ? ", the top of the search range" : "",
                                r->first_fail, r->tried);
    }
    for (size_t i = 0; i < s->n_notes; i++)
        rc |= mp_buf_printf(b, "note: %s\n", s->notes[i]);
    return rc ? MP_ENOMEM : 0;
}

/* ---- reading sweep.json ---- */

static int bad(struct mp_diag *d, const char *path, const char *field, const char *what)
{
    mp_diag_set(d, MP_EINVAL, "%s: %s", field, what);
    mp_diag_set_file(d, path);
    mp_diag_set_field(d, field);
    return MP_EINVAL;
}

static double jdouble(const json_t *v)
{
    if (json_is_number(v))
        return json_number_value(v);
    if (json_is_string(v) && !strcmp(json_string_value(v), "inf"))
        return INFINITY;
    return NAN;
}

static int load_metrics(const json_t *jm, struct mp_sweep_point *p)
{
    for (int m = 0; m < MP_SWEEP_N_METRICS; m++) {
        const json_t *e = json_object_get(jm, mp_sweep_metric_name(m));
        p->m[m].v = jdouble(json_object_get(e, "value"));
        p->m[m].lo = jdouble(json_object_get(e, "ci_lo"));
        p->m[m].hi = jdouble(json_object_get(e, "ci_hi"));
    }
    return 0;
}

static enum mp_sweep_sla_state sla_state(const json_t *v)
{
    const char *s = json_string_value(v);
    for (int k = MP_SWEEP_SLA_PASS; s && k <= MP_SWEEP_SLA_FAIL_NEAR; k++)
        if (!strcmp(s, mp_sweep_sla_state_name((enum mp_sweep_sla_state)k)))
            return (enum mp_sweep_sla_state)k;
    return MP_SWEEP_SLA_NONE;
}

static int load_point(const json_t *jp, size_t idx, const char *path, struct mp_sweep *s,
                      struct mp_diag *d)
{
    char field[64];
    snprintf(field, sizeof(field), "points[%zu]", idx);
    const json_t *runs = json_object_get(jp, "runs"),
                 *conc = json_object_get(jp, "max_concurrency");
    double rate = jdouble(json_object_get(jp, "request_rate"));
    if (!json_is_object(jp) || !json_is_array(runs) || !json_array_size(runs) ||
        json_array_size(runs) > 100000 ||
        (conc && !json_is_null(conc) &&
         (!json_is_integer(conc) || json_integer_value(conc) < 0 ||
          json_integer_value(conc) > 1000000)) ||
        isnan(rate) || !(rate > 0))
        return bad(d, path, field,
                   "want an object with runs (a non-empty list of files), max_concurrency (an "
                   "integer 0..1000000 or null) and request_rate (a number > 0 or \"inf\")");
    struct mp_sweep_point p;
    memset(&p, 0, sizeof(p));
    p.max_concurrency = json_is_integer(conc) ? (int)json_integer_value(conc) : 0;
    p.request_rate = rate;
    p.n_runs = json_array_size(runs);
    p.runs = calloc(p.n_runs, sizeof(char *));
    if (!p.runs)
        return MP_ENOMEM;
    for (size_t i = 0; i < p.n_runs; i++) {
        const char *r = json_string_value(json_array_get(runs, i));
        if (!r || !*r || r[0] == '/' || strstr(r, "..")) {
            free(p.runs);
            snprintf(field, sizeof(field), "points[%zu].runs[%zu]", idx, i);
            return bad(d, path, field, "want a file name relative to the sweep directory");
        }
        p.runs[i] = (char *)r; /* copied by add_point */
    }
    const json_t *dir = json_object_get(jp, "dir");
    p.dir = json_is_string(dir) ? (char *)json_string_value(dir) : NULL;
    json_int_t done = json_integer_value(json_object_get(jp, "completed")),
               failed = json_integer_value(json_object_get(jp, "failed"));
    if (done < 0 || failed < 0) {
        free(p.runs);
        snprintf(field, sizeof(field), "points[%zu].%s", idx, done < 0 ? "completed" : "failed");
        return bad(d, path, field, "want a request count >= 0");
    }
    p.completed = (size_t)done;
    p.failed = (size_t)failed;
    p.searched = json_is_true(json_object_get(jp, "searched"));
    p.sla = sla_state(json_object_get(jp, "sla"));
    load_metrics(json_object_get(jp, "metrics"), &p);
    const json_t *em = json_object_get(jp, "engine_metrics");
    if (json_is_object(em))
        p.engine = (struct mp_bcmp_engine){true,
                                           jdouble(json_object_get(em, "running_peak")),
                                           jdouble(json_object_get(em, "waiting_peak")),
                                           jdouble(json_object_get(em, "waiting_mean")),
                                           jdouble(json_object_get(em, "kv_cache_usage_peak")),
                                           jdouble(json_object_get(em, "prefix_cache_hit_rate")),
                                           jdouble(json_object_get(em, "num_preemptions"))};
    int rc = mp_sweep_add_point(s, &p);
    free(p.runs);
    return rc;
}

static void load_knee(const json_t *root, struct mp_sweep *s)
{
    const json_t *k = json_object_get(root, "knee");
    if (!json_is_true(json_object_get(k, "found")))
        return;
    double at = jdouble(json_object_get(k, mp_sweep_var_name(s->var)));
    double next = jdouble(json_object_get(k, "saturated_at"));
    for (size_t i = 0; i < s->n_pts; i++) {
        double l = mp_sweep_point_load(&s->pts[i], s->var);
        if (l == at && !s->knee.found) {
            s->knee.found = true;
            s->knee.index = i;
            s->knee.next = i;
        }
        if (l == next)
            s->knee.next = i;
    }
    const char *r = json_string_value(json_object_get(k, "reason"));
    snprintf(s->knee.reason, sizeof(s->knee.reason), "%s", r ? r : "");
}

static void load_sla(const json_t *root, struct mp_sweep *s)
{
    const json_t *j = json_object_get(root, "sla"), *lim = json_object_get(j, "limits");
    for (size_t i = 0; i < json_array_size(lim) && s->n_sla < MP_SWEEP_MAX_SLA; i++) {
        const char *t = json_string_value(json_array_get(lim, i));
        struct mp_diag d;
        mp_diag_clear(&d);
        if (t && !mp_sweep_sla_parse(t, &s->sla[s->n_sla], &d))
            s->n_sla++;
    }
    const json_t *search = json_object_get(j, "search");
    if (!json_is_object(search))
        return;
    struct mp_sweep_sla_result *r = &s->slares;
    const char *var = json_string_value(json_object_get(search, "var"));
    r->search.var =
        var && !strcmp(var, "request_rate") ? MP_SWEEP_VAR_RATE : MP_SWEEP_VAR_CONCURRENCY;
    const json_t *bounds = json_object_get(search, "bounds");
    r->search.lo = jdouble(json_array_get(bounds, 0));
    r->search.hi = jdouble(json_array_get(bounds, 1));
    r->tried = (size_t)json_integer_value(json_object_get(search, "points_tried"));
    r->answer = jdouble(json_object_get(j, mp_sweep_var_name(r->search.var)));
    r->first_fail = jdouble(json_object_get(j, "first_fail"));
    r->near = json_is_true(json_object_get(j, "near_limit"));
    r->done = true;
    r->point = SIZE_MAX;
    for (size_t i = 0; i < s->n_pts && !isnan(r->answer); i++)
        if (mp_sweep_point_load(&s->pts[i], r->search.var) == r->answer)
            r->point = i;
}

static int load_root(const json_t *root, const char *path, struct mp_sweep *s, struct mp_diag *d)
{
    const json_t *pts = json_object_get(root, "points");
    if (!json_is_object(root) ||
        json_integer_value(json_object_get(root, "magpie_sweep")) != SWEEP_FORMAT)
        return bad(d, path, "magpie_sweep", "not a magpie sweep.json (format 1)");
    if (!json_is_array(pts) || !json_array_size(pts))
        return bad(d, path, "points", "want a non-empty list of points");
    const char *var = json_string_value(json_object_get(root, "var"));
    s->var = var && !strcmp(var, "request_rate")      ? MP_SWEEP_VAR_RATE
             : var && !strcmp(var, "max_concurrency") ? MP_SWEEP_VAR_CONCURRENCY
                                                      : MP_SWEEP_VAR_NONE;
    const char *il = json_string_value(json_object_get(root, "interleave"));
    const char *role = json_string_value(json_object_get(root, "role"));
    if ((il && !(s->interleave = strdup(il))) || (role && !(s->role = strdup(role))))
        return MP_ENOMEM;
    json_int_t g = json_integer_value(json_object_get(root, "gpus"));
    json_int_t rep = json_integer_value(json_object_get(root, "repeat"));
    s->gpus = g > 0 && g < 1000000 ? (int)g : 1;
    s->repeat = rep > 0 && rep < 1000000 ? (int)rep : 1;
    s->min_gain_pct = jdouble(json_object_get(root, "min_gain_pct"));
    int rc = 0;
    for (size_t i = 0; i < json_array_size(pts) && !rc; i++)
        rc = load_point(json_array_get(pts, i), i, path, s, d);
    if (rc)
        return rc;
    load_knee(root, s);
    load_sla(root, s);
    const json_t *notes = json_object_get(root, "notes");
    for (size_t i = 0; i < json_array_size(notes) && !rc; i++)
        if (json_is_string(json_array_get(notes, i)))
            rc = mp_sweep_add_note(s, "%s", json_string_value(json_array_get(notes, i)));
    return rc;
}

/* Builds the sweep from the document root, read from file; its runs are
 * relative to dir. */
static int load_doc(json_t *root, const char *file, const char *dir, const char *label,
                    struct mp_sweep **out, struct mp_diag *d)
{
    const char *jl = json_string_value(json_object_get(root, "label"));
    const char *target = json_string_value(json_object_get(root, "target"));
    struct mp_sweep *s = mp_sweep_new(jl ? jl : label, target);
    int rc = s ? load_root(root, file, s, d) : MP_ENOMEM;
    if (!rc && !(s->dir = strdup(dir)))
        rc = MP_ENOMEM;
    if (rc) {
        if (rc == MP_ENOMEM)
            mp_diag_set(d, rc, "out of memory");
        mp_sweep_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int mp_sweep_load_text(const char *text, size_t len, const char *file, const char *dir,
                       struct mp_sweep **out, struct mp_diag *d)
{
    *out = NULL;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        mp_diag_set(d, MP_EPARSE, "not valid JSON: %s", je.text);
        mp_diag_set_file(d, file);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return MP_EPARSE;
    }
    int rc = load_doc(root, file, dir, file, out, d);
    json_decref(root);
    return rc;
}

int mp_sweep_load(const char *path, struct mp_sweep **out, struct mp_diag *d)
{
    *out = NULL;
    char file[4096];
    size_t n = strlen(path);
    bool is_json = n >= 5 && !strcmp(path + n - 5, ".json");
    if (snprintf(file, sizeof(file), "%s%s", path, is_json ? "" : "/sweep.json") >=
        (int)sizeof(file))
        return mp_diag_set(d, MP_EINVAL, "path too long: %s", path);
    struct mp_buf b;
    mp_buf_init(&b, (size_t)256 << 20);
    FILE *f = fopen(file, "rb");
    if (!f) {
        mp_buf_fini(&b);
        mp_diag_set(d, MP_ENOTFOUND, "cannot open: %s (want a sweep directory or its sweep.json)",
                    strerror(errno));
        mp_diag_set_file(d, file);
        return MP_ENOTFOUND;
    }
    int rc = mp_buf_read_file(&b, f);
    fclose(f);
    if (rc) {
        mp_buf_fini(&b);
        mp_diag_set(d, rc, "cannot read the file (or larger than 256 MiB)");
        mp_diag_set_file(d, file);
        return rc;
    }
    /* the directory the run files are relative to */
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof(dir), ".");
    rc = mp_sweep_load_text(b.data ? b.data : "", b.len, file, dir, out, d);
    mp_buf_fini(&b);
    return rc;
}
