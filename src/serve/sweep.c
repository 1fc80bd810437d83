/* The sweep driver: runs the load points of a sweep against running servers
 * (each run a `magpie benchmark --base-url` child, so a point's files are
 * exactly a client run's), climbs the grid until saturation, searches the
 * SLA point by bisection, interleaves a candidate server's runs with the
 * baseline's, and writes the documents. The statistics are loadgen's
 * (sweep.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>
#include <magpie/proc.h>
#include <magpie/serve.h>
#include <magpie/sweep.h>

#include "serve_int.h"

#define MAX_ARGS 512
#define MAX_EVALS 64

void mp_serve_sweep_opts_default(struct mp_serve_sweep_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->repeat = 1;
    o->min_gain_pct = 5;
    o->search_tol_pct = 5;
    o->gpus = 1;
    o->nboot = 1000;
}

/* One side of the run: a server and the sweep written for it. */
struct side {
    const char *url;
    char *dir; /* absolute or as given */
    struct mp_sweep *s;
    bool saturated; /* in the current row */
};

struct ctx {
    const struct mp_serve_sweep_opts *o;
    struct side sides[2];
    int n_sides;
    struct mp_sweep_stat_opts stat;
    struct mp_diag *d;
    uint64_t seed_base; /* runs' seeds: fresh for every sweep (the clock) */
};

static void say(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct ctx *c, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (c->o->on_line)
        c->o->on_line(line, c->o->user);
}

/* ---- one run ---- */

static void fmt_rate(double r, char *out, size_t len)
{
    if (isfinite(r))
        snprintf(out, len, "%.17g", r);
    else
        snprintf(out, len, "inf");
}

/* Whether the client arguments set the seed themselves. */
static bool has_seed(const struct mp_serve_sweep_opts *o)
{
    for (size_t i = 0; i < o->n_client_args; i++)
        if (!strcmp(o->client_args[i], "--seed") || !strncmp(o->client_args[i], "--seed=", 7))
            return true;
    return false;
}

static int run_argv(const struct ctx *c, const struct side *sd, const struct mp_sweep_point *p,
                    const char *pdir, const char *file, const char **argv, char *bufs[4])
{
    const struct mp_serve_sweep_opts *o = c->o;
    size_t n = 0;
    argv[n++] = o->exe ? o->exe : "/proc/self/exe";
    argv[n++] = "benchmark";
    argv[n++] = "--base-url";
    argv[n++] = sd->url;
    for (size_t i = 0; i < o->n_client_args && n < MAX_ARGS - 20; i++)
        argv[n++] = o->client_args[i];
    if (p->max_concurrency > 0) {
        argv[n++] = "--max-concurrency";
        argv[n++] = bufs[0];
        snprintf(bufs[0], 32, "%d", p->max_concurrency);
    }
    argv[n++] = "--request-rate";
    argv[n++] = bufs[1];
    fmt_rate(p->request_rate, bufs[1], 32);
    argv[n++] = "--save-result";
    argv[n++] = "--result-dir";
    argv[n++] = pdir;
    argv[n++] = "--result-filename";
    argv[n++] = file;
    argv[n++] = "--max-failed-requests"; /* the sweep judges failures itself */
    argv[n++] = "100%";
    argv[n++] = "--disable-tqdm";
    argv[n++] = "--label";
    argv[n++] = bufs[2];
    snprintf(bufs[2], 128, "%s", sd->s->label);
    if (!has_seed(o)) {
        /* fresh prompts for every run (the same on both sides of an
         * interleaved pair): a server's prefix cache would otherwise serve
         * each run the prompts an earlier run left in it */
        argv[n++] = "--seed";
        argv[n++] = bufs[3];
        uint64_t seed = c->seed_base + (uint64_t)(p - sd->s->pts + 1) * 1000 + p->n_runs + 1;
        snprintf(bufs[3], 32, "%llu", (unsigned long long)seed);
    }
    argv[n] = NULL;
    return 0;
}

/* Runs one more run of point i of side sd. */
static int run_one(struct ctx *c, struct side *sd, size_t i)
{
    struct mp_sweep_point *p = &sd->s->pts[i];
    size_t k = p->n_runs + 1;
    char file[64], log[64], rel[512], c0[32], c1[32], c2[128], c3[32];
    snprintf(file, sizeof(file), "run_%zu.json", k);
    snprintf(log, sizeof(log), "run_%zu.log", k);
    char *pdir = mp_fs_join(sd->dir, p->dir), *logp = pdir ? mp_fs_join(pdir, log) : NULL;
    char *resp = pdir ? mp_fs_join(pdir, file) : NULL;
    int rc = pdir && logp && resp ? mp_fs_mkdirs(pdir, c->d)
                                  : mp_diag_set(c->d, MP_ENOMEM, "out of memory");
    const char *argv[MAX_ARGS];
    char *bufs[4] = {c0, c1, c2, c3};
    struct mp_proc_result res;
    mp_proc_result_init(&res);
    if (!rc) {
        run_argv(c, sd, p, pdir, file, argv, bufs);
        struct mp_proc_opts po = {0};
        po.out_mode = MP_PROC_FILE;
        po.out_path = logp;
        po.err_mode = MP_PROC_TO_STDOUT;
        po.timeout_s = c->o->run_timeout_s;
        rc = mp_proc_run(argv, &po, &res, c->d);
    }
    /* exit 1 with a result: every request failed (the run is kept, the
     * climb sees it); anything else is the run's own failure */
    if (!rc && !(res.exited && res.exit_code <= 1 && !res.timed_out && mp_fs_exists(resp))) {
        char how[160];
        mp_proc_describe(&res, c->o->run_timeout_s, how, sizeof(how));
        struct mp_buf tail;
        mp_buf_init(&tail, 0);
        mp_serve_log_tail(logp, 6, &tail);
        rc = mp_diag_set(c->d, res.exited && res.exit_code == 2 ? MP_EINVAL : MP_ECHILD,
                         "run %zu of point %s (%s) %s; its log %s ends:\n%s", k, p->dir, sd->url,
                         how, logp, mp_buf_cstr(&tail));
        mp_buf_fini(&tail);
    }
    mp_proc_result_fini(&res);
    if (!rc) {
        snprintf(rel, sizeof(rel), "%s/%s", p->dir, file);
        char **v = realloc(p->runs, (p->n_runs + 1) * sizeof(char *));
        if (!v || !(v[p->n_runs] = strdup(rel))) {
            if (v)
                p->runs = v;
            rc = mp_diag_set(c->d, MP_ENOMEM, "out of memory");
        } else {
            p->runs = v;
            p->n_runs++;
        }
    }
    free(pdir);
    free(logp);
    free(resp);
    return rc;
}

/* Recomputes point i's estimates from its runs (and the SLA judgement). */
static int restat(struct ctx *c, struct side *sd, size_t i, struct mp_bcmp_side **keep)
{
    struct mp_bcmp_side *bs = NULL;
    int rc = mp_sweep_point_side(sd->s, sd->dir, i, &bs, &sd->s->pts[i].engine, c->d);
    if (!rc && (rc = mp_sweep_point_stats(bs, &c->stat, &sd->s->pts[i])))
        mp_diag_set(c->d, rc, "out of memory");
    if (!rc) {
        struct mp_sweep_point *p = &sd->s->pts[i];
        p->sla = mp_sweep_sla_judge(sd->s->sla, sd->s->n_sla, p);
        char tp[64] = "-", ttft[64] = "-";
        if (!isnan(p->m[MP_BCMP_OUT_TPS].v))
            snprintf(tp, sizeof(tp), "%.1f [%.1f, %.1f]", p->m[MP_BCMP_OUT_TPS].v,
                     p->m[MP_BCMP_OUT_TPS].lo, p->m[MP_BCMP_OUT_TPS].hi);
        if (!isnan(p->m[MP_BCMP_TTFT_P99].v))
            snprintf(ttft, sizeof(ttft), "%.1f", p->m[MP_BCMP_TTFT_P99].v);
        say(c, "%s%s%s: %zu run%s, output tok/s %s, p99 TTFT %s ms, %zu failed%s%s",
            c->n_sides > 1 ? sd->s->role : "", c->n_sides > 1 ? " " : "", p->dir, p->n_runs,
            p->n_runs == 1 ? "" : "s", tp, ttft, p->failed, p->sla ? ", SLA " : "",
            p->sla ? mp_sweep_sla_state_name(p->sla) : "");
    }
    if (keep && !rc)
        *keep = bs;
    else
        mp_bcmp_side_free(bs);
    return rc;
}

/* The index of the point at this load in sd, created (no run yet) if new. */
static int point_at(struct side *sd, int conc, double rate, bool searched, size_t *idx)
{
    size_t i = mp_sweep_find(sd->s, conc, rate);
    if (i != SIZE_MAX) {
        *idx = i;
        return 0;
    }
    struct mp_sweep_point p;
    memset(&p, 0, sizeof(p));
    p.max_concurrency = conc;
    p.request_rate = rate;
    p.searched = searched;
    for (int m = 0; m < MP_SWEEP_N_METRICS; m++)
        p.m[m] = (struct mp_sweep_est){NAN, NAN, NAN};
    char name[64], dir[96];
    mp_sweep_point_name(&p, name, sizeof(name));
    snprintf(dir, sizeof(dir), "points/%s", name);
    p.dir = dir;
    int rc = mp_sweep_add_point(sd->s, &p);
    *idx = sd->s->n_pts - 1;
    return rc;
}

/* ---- the grid ---- */

static bool over_limit(const struct ctx *c, const struct mp_sweep_point *p)
{
    return !mp_loadgen_fail_limit_ok(&c->o->fail_limit, p->failed, p->completed + p->failed);
}

/* Runs every repeat of one grid point on every side (interleaved), then
 * checks saturation against the previous point of the row. */
static int grid_point(struct ctx *c, int conc, double rate, struct mp_bcmp_side **prev,
                      size_t *prev_idx)
{
    size_t idx[2] = {0, 0};
    const int ns = c->n_sides > 1 ? 2 : 1;
    int rc = 0;
    for (int s = 0; s < ns && !rc; s++)
        rc = point_at(&c->sides[s], conc, rate, false, &idx[s]);
    for (int r = 0; r < c->o->repeat && !rc; r++)
        for (int k = 0; k < ns && !rc; k++) {
            int s = (r % 2 && ns > 1) ? 1 - k : k; /* A B, B A, ... */
            if (!c->sides[s].saturated)
                rc = run_one(c, &c->sides[s], idx[s]);
        }
    for (int s = 0; s < ns && !rc; s++) {
        struct side *sd = &c->sides[s];
        if (sd->saturated)
            continue;
        struct mp_bcmp_side *cur = NULL;
        if ((rc = restat(c, sd, idx[s], &cur)))
            break;
        const struct mp_sweep_point *pt = &sd->s->pts[idx[s]];
        size_t per_run = pt->n_runs ? (pt->completed + pt->failed) / pt->n_runs : 0;
        if (pt->max_concurrency > 0 && per_run && (size_t)pt->max_concurrency > per_run)
            mp_sweep_add_note(sd->s,
                              "%s: max_concurrency %d is more than the %zu requests of a run: "
                              "its load is that of %zu (raise --num-prompts)",
                              pt->dir, pt->max_concurrency, per_run, per_run);
        if (prev[s] && sd->s->var != MP_SWEEP_VAR_NONE) {
            bool sat = false;
            char why[192];
            rc = mp_sweep_saturated(prev[s], cur, over_limit(c, &sd->s->pts[idx[s]]),
                                    c->o->min_gain_pct, c->o->seed, &sat, why, sizeof(why), c->d);
            if (!rc && sat && !sd->s->knee.found) {
                sd->s->knee.found = true;
                sd->s->knee.next = idx[s];
                sd->s->knee.index = prev_idx[s];
                snprintf(sd->s->knee.reason, sizeof(sd->s->knee.reason), "%s", why);
                say(c, "%s%ssaturated at %s: %s", c->n_sides > 1 ? sd->s->role : "",
                    c->n_sides > 1 ? " " : "", sd->s->pts[idx[s]].dir, why);
            }
            sd->saturated = sat && !c->o->run_all;
        } else if (over_limit(c, &sd->s->pts[idx[s]]) && !c->o->run_all) {
            sd->saturated = true;
            mp_sweep_add_note(sd->s, "the first point %s already failed beyond the limit",
                              sd->s->pts[idx[s]].dir);
        }
        mp_bcmp_side_free(prev[s]);
        prev[s] = cur;
        prev_idx[s] = idx[s];
    }
    return rc;
}

static int run_grid(struct ctx *c)
{
    const struct mp_serve_sweep_opts *o = c->o;
    if (!o->n_conc && !o->n_rates)
        return 0; /* the search alone */
    /* rows of rates, each climbing the concurrencies; with one concurrency
     * (or none) and several rates, one row climbing the rates */
    bool climb_rates = o->n_conc <= 1 && o->n_rates > 1;
    size_t rows = climb_rates ? 1 : (o->n_rates ? o->n_rates : 1);
    size_t steps = climb_rates ? o->n_rates : (o->n_conc ? o->n_conc : 1);
    int rc = 0;
    const int ns = c->n_sides > 1 ? 2 : 1;
    for (size_t row = 0; row < rows && !rc; row++) {
        struct mp_bcmp_side *prev[2] = {NULL, NULL};
        size_t prev_idx[2] = {0, 0};
        for (int s = 0; s < ns; s++)
            c->sides[s].saturated = false;
        for (size_t step = 0; step < steps && !rc; step++) {
            int conc = climb_rates ? (o->n_conc ? o->conc[0] : 0) : (o->n_conc ? o->conc[step] : 0);
            double rate = climb_rates ? o->rates[step] : (o->n_rates ? o->rates[row] : INFINITY);
            bool all_sat = true;
            for (int s = 0; s < ns; s++)
                all_sat &= c->sides[s].saturated;
            if (all_sat)
                break;
            rc = grid_point(c, conc, rate, prev, prev_idx);
        }
        for (int s = 0; s < 2; s++)
            mp_bcmp_side_free(prev[s]);
    }
    return rc;
}

/* ---- the SLA search ---- */

static bool passes(enum mp_sweep_sla_state s)
{
    return s == MP_SWEEP_SLA_PASS || s == MP_SWEEP_SLA_PASS_NEAR;
}

static bool near(enum mp_sweep_sla_state s)
{
    return s == MP_SWEEP_SLA_PASS_NEAR || s == MP_SWEEP_SLA_FAIL_NEAR;
}

/* Judges the load v: runs the point (repeat runs; more while too close to
 * call, up to max_repeat). */
static int eval_load(struct ctx *c, double v, size_t *idx)
{
    const struct mp_serve_sweep_opts *o = c->o;
    struct side *sd = &c->sides[0];
    bool conc_var = o->search_var == MP_SWEEP_VAR_CONCURRENCY;
    int conc = conc_var ? (int)v : (o->n_conc == 1 ? o->conc[0] : 0);
    double rate = conc_var ? (o->n_rates == 1 ? o->rates[0] : INFINITY) : v;
    int rc = point_at(sd, conc, rate, true, idx);
    while (!rc && (int)sd->s->pts[*idx].n_runs < o->repeat)
        rc = run_one(c, sd, *idx);
    if (!rc && (!sd->s->pts[*idx].sla || isnan(sd->s->pts[*idx].m[MP_BCMP_OUT_TPS].v)))
        rc = restat(c, sd, *idx, NULL);
    int cap = o->max_repeat > 0 ? o->max_repeat : o->repeat + 2;
    while (!rc && near(sd->s->pts[*idx].sla) && (int)sd->s->pts[*idx].n_runs < cap) {
        say(c, "%s: too close to call, one more run", sd->s->pts[*idx].dir);
        if (!(rc = run_one(c, sd, *idx)))
            rc = restat(c, sd, *idx, NULL);
    }
    sd->s->slares.tried++;
    return rc;
}

static bool converged(const struct mp_serve_sweep_opts *o, double lo, double hi)
{
    if (o->search_var == MP_SWEEP_VAR_CONCURRENCY)
        return hi - lo <= 1;
    return hi / lo <= 1 + o->search_tol_pct / 100;
}

static int run_search(struct ctx *c)
{
    const struct mp_serve_sweep_opts *o = c->o;
    struct mp_sweep *s = c->sides[0].s;
    struct mp_sweep_sla_result *r = &s->slares;
    r->done = true;
    r->search =
        (struct mp_sweep_search){(enum mp_sweep_var)o->search_var, o->search_lo, o->search_hi};
    double lo = o->search_lo, hi = o->search_hi;
    size_t ilo, ihi;
    int rc = eval_load(c, lo, &ilo);
    if (rc)
        return rc;
    if (!passes(s->pts[ilo].sla)) {
        r->first_fail = lo;
        r->near = near(s->pts[ilo].sla);
        return 0;
    }
    if ((rc = eval_load(c, hi, &ihi)))
        return rc;
    if (passes(s->pts[ihi].sla)) {
        r->answer = hi;
        r->point = ihi;
        r->near = near(s->pts[ihi].sla);
        return 0;
    }
    for (int n = 0; n < MAX_EVALS && !converged(o, lo, hi); n++) {
        double mid = sqrt(lo * hi);
        if (o->search_var == MP_SWEEP_VAR_CONCURRENCY)
            mid = fmin(fmax(round(mid), lo + 1), hi - 1);
        size_t im;
        if ((rc = eval_load(c, mid, &im)))
            return rc;
        if (passes(s->pts[im].sla)) {
            lo = mid;
            ilo = im;
        } else {
            hi = mid;
            ihi = im;
        }
    }
    r->answer = lo;
    r->first_fail = hi;
    r->point = ilo;
    r->near = near(s->pts[ilo].sla) || near(s->pts[ihi].sla);
    return 0;
}

/* ---- documents ---- */

/* Writes DIR/NAME from b, which a writer filled (rc: what it returned). */
static int put(struct ctx *c, const char *dir, const char *name, int rc, struct mp_buf *b)
{
    char *path = mp_fs_join(dir, name);
    if (rc || !path)
        rc = mp_diag_set(c->d, MP_ENOMEM, "out of memory");
    else
        rc = mp_fs_write_atomic(path, mp_buf_cstr(b), strlen(mp_buf_cstr(b)), c->d);
    free(path);
    return rc;
}

static int write_doc(struct ctx *c, const char *dir, const char *name,
                     int (*fn)(const struct mp_sweep *, struct mp_buf *), const struct mp_sweep *s)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = put(c, dir, name, fn(s, &b), &b);
    mp_buf_fini(&b);
    return rc;
}

static int html_one(const struct mp_sweep *s, struct mp_buf *b)
{
    char title[256];
    snprintf(title, sizeof(title), "magpie sweep: %s", s->label);
    return mp_sweep_html(&s, 1, title, b);
}

static int write_compare(struct ctx *c)
{
    struct mp_bcmp_opts bo;
    mp_bcmp_opts_default(&bo);
    bo.seed = c->o->seed;
    struct mp_sweep_cmp *cmp = NULL;
    int rc = mp_sweep_compare(c->sides[0].s, c->sides[1].s, &bo, &cmp, c->d);
    static const char *const names[] = {"compare.txt", "compare.json", "compare.html"};
    int (*const fns[])(const struct mp_sweep_cmp *,
                       struct mp_buf *) = {mp_sweep_cmp_text, mp_sweep_cmp_json, mp_sweep_cmp_html};
    for (int k = 0; k < 3 && !rc; k++) {
        struct mp_buf b;
        mp_buf_init(&b, 0);
        rc = put(c, c->o->out_dir, names[k], fns[k](cmp, &b), &b);
        if (!rc && k == 0 && c->o->on_line)
            c->o->on_line(mp_buf_cstr(&b), c->o->user);
        mp_buf_fini(&b);
    }
    mp_sweep_cmp_free(cmp);
    return rc;
}

static int write_all(struct ctx *c)
{
    int rc = 0;
    for (int s = 0; s < c->n_sides && !rc; s++) {
        struct side *sd = &c->sides[s];
        rc = write_doc(c, sd->dir, "sweep.csv", mp_sweep_csv, sd->s);
        if (!rc)
            rc = write_doc(c, sd->dir, "pareto.html", html_one, sd->s);
        if (!rc) /* last: its presence says the sweep is complete */
            rc = write_doc(c, sd->dir, "sweep.json", mp_sweep_json, sd->s);
    }
    if (!rc && c->n_sides > 1)
        rc = write_compare(c);
    return rc;
}

/* ---- set-up ---- */

static int check_opts(const struct mp_serve_sweep_opts *o, struct mp_diag *d)
{
    if (!o->base_url || !*o->base_url || !o->out_dir || !*o->out_dir)
        return mp_diag_set(d, MP_EINVAL, "a sweep needs --base-url and -o DIR");
    if (!o->n_conc && !o->n_rates && !o->search)
        return mp_diag_set(d, MP_EINVAL,
                           "nothing to sweep: give --max-concurrency L and/or --request-rate L "
                           "(comma lists), or --search with --sla");
    if (o->search && !o->n_sla)
        return mp_diag_set(d, MP_EINVAL, "--search needs at least one --sla");
    if (o->search && o->cand_url)
        return mp_diag_set(d, MP_EINVAL,
                           "--search with a candidate is not supported: search each server on "
                           "its own and compare the sweeps (benchmark sweep compare)");
    if (o->search && ((o->search_var == MP_SWEEP_VAR_CONCURRENCY && o->n_rates > 1) ||
                      (o->search_var == MP_SWEEP_VAR_RATE && o->n_conc > 1)))
        return mp_diag_set(d, MP_EINVAL,
                           "--search over %s with a list of %s: the search needs one value of "
                           "the other load (or none)",
                           mp_sweep_var_name((enum mp_sweep_var)o->search_var),
                           o->search_var == MP_SWEEP_VAR_RATE ? "max_concurrency" : "request_rate");
    if (o->repeat < 1 || o->repeat > 1000 || o->n_sla > MP_SWEEP_MAX_SLA)
        return mp_diag_set(d, MP_EINVAL, "--repeat must be 1..1000, --sla at most %d times",
                           MP_SWEEP_MAX_SLA);
    for (size_t i = 0; i < o->n_conc; i++)
        if (o->conc[i] < 0)
            return mp_diag_set(d, MP_EINVAL, "--max-concurrency values must be >= 0");
    for (size_t i = 0; i < o->n_rates; i++)
        if (!(o->rates[i] > 0))
            return mp_diag_set(d, MP_EINVAL, "--request-rate values must be > 0 (or inf)");
    char *j = mp_fs_join(o->out_dir, "sweep.json");
    char *b = mp_fs_join(o->out_dir, "baseline/sweep.json");
    bool taken = (j && mp_fs_exists(j)) || (b && mp_fs_exists(b));
    free(j);
    free(b);
    if (taken) {
        mp_diag_set(d, MP_EINVAL,
                    "%s already holds a sweep: choose another -o (nothing was overwritten)",
                    o->out_dir);
        mp_diag_set_file(d, o->out_dir);
        return MP_EINVAL;
    }
    return 0;
}

static enum mp_sweep_var climb_var(const struct mp_serve_sweep_opts *o)
{
    if (o->n_conc > 1)
        return MP_SWEEP_VAR_CONCURRENCY;
    if (o->n_rates > 1)
        return MP_SWEEP_VAR_RATE;
    if (o->search)
        return (enum mp_sweep_var)o->search_var;
    return MP_SWEEP_VAR_NONE;
}

static int side_init(struct ctx *c, int s, const char *url, const char *label, const char *role,
                     const char *il)
{
    const struct mp_serve_sweep_opts *o = c->o;
    struct side *sd = &c->sides[s];
    sd->url = url;
    sd->dir = il ? mp_fs_join(o->out_dir, role) : strdup(o->out_dir);
    sd->s = mp_sweep_new(label ? label : url, url);
    if (!sd->dir || !sd->s ||
        (il && (!(sd->s->interleave = strdup(il)) || !(sd->s->role = strdup(role)))))
        return mp_diag_set(c->d, MP_ENOMEM, "out of memory");
    if (!(sd->s->dir = strdup(sd->dir)))
        return mp_diag_set(c->d, MP_ENOMEM, "out of memory");
    sd->s->var = climb_var(o);
    sd->s->gpus = o->gpus;
    sd->s->repeat = o->repeat;
    sd->s->min_gain_pct = o->min_gain_pct;
    for (size_t i = 0; i < o->n_sla; i++)
        sd->s->sla[sd->s->n_sla++] = o->sla[i];
    if (o->n_conc > 1 && o->n_rates > 1)
        mp_sweep_add_note(sd->s, "a two-dimensional grid: the knee is looked for along "
                                 "max_concurrency, row by row, and the first one found is kept");
    if (o->repeat == 1)
        mp_sweep_add_note(sd->s, "one run per point: intervals hold the noise within a run only; "
                                 "--repeat N measures the spread between runs");
    return mp_fs_mkdirs(sd->dir, c->d);
}

int mp_serve_sweep_run(const struct mp_serve_sweep_opts *o, struct mp_sweep **a,
                       struct mp_sweep **b, struct mp_diag *d)
{
    if (a)
        *a = NULL;
    if (b)
        *b = NULL;
    int rc = check_opts(o, d);
    if (rc)
        return rc;
    struct ctx c;
    memset(&c, 0, sizeof(c));
    c.o = o;
    c.d = d;
    /* numpy-compatible seeds are 32-bit: 4000 bases of a million each */
    c.seed_base = (uint64_t)time(NULL) % 4000 * 1000000;
    mp_sweep_stat_opts_default(&c.stat);
    c.stat.nboot = o->nboot;
    c.stat.seed = o->seed;
    c.stat.gpus = o->gpus;
    for (size_t i = 0; i < o->n_sla; i++) { /* per-request SLOs for goodput */
        int m = o->sla[i].metric;
        if (o->sla[i].upper && m >= MP_BCMP_TTFT_MEAN && m <= MP_BCMP_E2EL_P99 &&
            (m < MP_BCMP_ITL_MEAN || m > MP_BCMP_ITL_P99)) {
            int k = m <= MP_BCMP_TTFT_P99 ? 0 : m <= MP_BCMP_TPOT_P99 ? 1 : 2;
            c.stat.slo_ms[k] =
                isnan(c.stat.slo_ms[k]) ? o->sla[i].limit : fmin(c.stat.slo_ms[k], o->sla[i].limit);
        }
    }
    char il[40] = "";
    if (o->cand_url)
        snprintf(il, sizeof(il), "%lx-%x", (unsigned long)time(NULL), (unsigned)getpid());
    c.n_sides = o->cand_url ? 2 : 1;
    rc = mp_fs_mkdirs(o->out_dir, d);
    if (!rc)
        rc = side_init(&c, 0, o->base_url, o->label, "baseline", o->cand_url ? il : NULL);
    if (!rc && o->cand_url)
        rc = side_init(&c, 1, o->cand_url, o->cand_label, "candidate", il);
    if (!rc)
        rc = run_grid(&c);
    if (!rc && o->search)
        rc = run_search(&c);
    if (!rc)
        rc = write_all(&c);
    for (int s = 0; s < 2; s++) {
        struct mp_sweep **dst = s ? b : a;
        if (!rc && dst)
            *dst = c.sides[s].s;
        else
            mp_sweep_free(c.sides[s].s);
        free(c.sides[s].dir);
    }
    return rc;
}

/* ---- engines magpie starts ---- */

struct engine_hook {
    struct mp_serve_sweep_opts o; /* base_url filled in by the hook */
    struct mp_diag d;
    int rc;
};

static int sweep_hook(const char *base_url, void *user, char *err, size_t err_len)
{
    struct engine_hook *h = user;
    h->o.base_url = base_url;
    mp_diag_clear(&h->d);
    h->rc = mp_serve_sweep_run(&h->o, NULL, NULL, &h->d);
    if (h->rc)
        mp_diag_format(&h->d, err, err_len);
    return h->rc;
}

static int engines_json(const char *out_dir, const char *const *labels, size_t n,
                        struct mp_serve_result *const *res, const int *rcs, struct mp_diag *d)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_buf_puts(&b, "{\"server_sets\": [");
    for (size_t i = 0; i < n; i++) {
        const struct mp_serve_result *r = res[i];
        rc |= mp_buf_puts(&b, i ? ",\n  {\"label\": " : "\n  {\"label\": ");
        rc |= mp_json_str(&b, labels[i], strlen(labels[i]));
        rc |= mp_buf_puts(&b, ", \"sweep\": ");
        rc |= mp_json_str(&b, labels[i], strlen(labels[i]));
        rc |= mp_buf_puts(&b, ", \"workspace\": ");
        rc |= r && r->workspace ? mp_json_str(&b, r->workspace, strlen(r->workspace))
                                : mp_buf_puts(&b, "null");
        rc |= mp_buf_printf(&b, ", \"success\": %s, \"errors\": [",
                            r && r->success && !rcs[i] ? "true" : "false");
        for (size_t k = 0; r && k < r->n_errors; k++) {
            rc |= mp_buf_puts(&b, k ? ", " : "");
            rc |= mp_json_str(&b, r->errors[k], strlen(r->errors[k]));
        }
        rc |= mp_buf_puts(&b, "]}");
    }
    rc |= mp_buf_puts(&b, "]}\n");
    char *path = mp_fs_join(out_dir, "engines.json");
    if (rc || !path)
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
    else
        rc = mp_fs_write_atomic(path, mp_buf_cstr(&b), strlen(mp_buf_cstr(&b)), d);
    free(path);
    mp_buf_fini(&b);
    return rc;
}

/* the client's --dataset-name when it names a workload whose prompts share
 * prefixes, else NULL */
static const char *prefix_workload(const struct mp_serve_sweep_opts *o)
{
    for (size_t i = 0; i < o->n_client_args; i++) {
        const char *a = o->client_args[i], *v = NULL;
        if (!a)
            continue;
        if (!strcmp(a, "--dataset-name") && i + 1 < o->n_client_args)
            v = o->client_args[i + 1];
        else if (!strncmp(a, "--dataset-name=", 15))
            v = a + 15;
        if (mp_loadgen_workload_shares_prefixes(v))
            return v;
    }
    return NULL;
}

/* a shared-prefix workload against an SGLang magpie starts with Magpie's
 * --disable-radix-cache measures an engine without its prefix cache: say so */
static void warn_prefix_cache(struct mp_serve_config *const *cfgs, const char *const *labels,
                              size_t n, const struct mp_serve_sweep_opts *o)
{
    const char *w = prefix_workload(o);
    char why[96];
    snprintf(why, sizeof(why), "--dataset-name %s", w ? w : "");
    for (size_t i = 0; w && i < n; i++)
        serve_warn_no_prefix_cache(cfgs[i], labels[i], why);
}

int mp_serve_sweep_engines(struct mp_serve_config *const *cfgs, const char *const *labels, size_t n,
                           const struct mp_serve_sweep_opts *o, const struct mp_serve_run_opts *ro,
                           size_t *failed, struct mp_diag *d)
{
    *failed = 0;
    if (!n || n > 64 || o->cand_url)
        return mp_diag_set(d, MP_EINVAL,
                           "a sweep over engines takes 1..64 benchmark configs and no "
                           "--candidate-url (compare the server sets' sweeps instead)");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(labels[i], labels[k]))
                return mp_diag_set(d, MP_EINVAL, "two server sets are both called '%s'", labels[i]);
    struct mp_serve_sweep_opts pre = *o; /* refuse bad options before any engine starts */
    pre.base_url = "http://127.0.0.1";
    int vrc = check_opts(&pre, d);
    if (vrc)
        return vrc;
    warn_prefix_cache(cfgs, labels, n, o);
    char *index = mp_fs_join(o->out_dir, "engines.json");
    bool taken = !index || mp_fs_exists(index);
    free(index);
    if (taken)
        return mp_diag_set(d, MP_EINVAL,
                           "%s already holds a sweep over engines: choose another -o (nothing "
                           "was overwritten)",
                           o->out_dir);
    struct mp_serve_result **res = calloc(n, sizeof(struct mp_serve_result *));
    int *rcs = calloc(n, sizeof(int));
    struct engine_hook *h = calloc(1, sizeof(*h));
    if (!res || !rcs || !h) {
        free(res);
        free(rcs);
        free(h);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    int rc = mp_fs_mkdirs(o->out_dir, d);
    for (size_t i = 0; i < n && !rc; i++) {
        char *dir = mp_fs_join(o->out_dir, labels[i]), *ws = mp_fs_join(dir, "engine");
        if (!dir || !ws) {
            free(dir);
            free(ws);
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
            break;
        }
        h->o = *o;
        h->o.out_dir = dir;
        h->o.label = labels[i];
        h->rc = 0;
        struct mp_serve_run_opts r = *ro;
        r.output_dir = ws;
        r.load = sweep_hook;
        r.load_user = h;
        if (o->on_line)
            say(&(struct ctx){.o = o}, "server set %s: starting the engine", labels[i]);
        rc = mp_serve_run(cfgs[i], &r, &res[i], d);
        rcs[i] = h->rc;
        if (!rc && (h->rc == MP_EINVAL || !res[i] || !res[i]->success))
            (*failed)++;
        if (!rc && h->rc == MP_EINVAL) /* the sweep's own arguments: the next set fares no better */
            rc = mp_diag_set(d, MP_EINVAL, "%s", h->d.msg);
        free(dir);
        free(ws);
    }
    if (!rc || rc == MP_EINVAL)
        (void)engines_json(o->out_dir, labels, n, res, rcs, d);
    for (size_t i = 0; i < n; i++)
        mp_serve_result_free(res[i]);
    free(res);
    free(rcs);
    free(h);
    return rc;
}
