/* Two sweeps side by side: the points at the same load compared with
 * bench_compare (paired t over interleaved repeats when both sweeps come
 * from one interleaved run, else the bootstrap with its floor for single
 * runs), and the shift of the knee and of the SLA point with the interval
 * their brackets allow. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/sweep.h>

#include "loadgen_int.h"

void mp_sweep_cmp_free(struct mp_sweep_cmp *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_pts; i++) {
        mp_bcmp_result_free(c->pts[i].res);
        mp_bcmp_side_free(c->pts[i].sa);
        mp_bcmp_side_free(c->pts[i].sb);
    }
    free(c->pts);
    free(c);
}

static int compare_point(const struct mp_sweep *a, const struct mp_sweep *b, size_t i, size_t j,
                         const struct mp_sweep_cmp *c, struct mp_sweep_cmp_point *cp,
                         struct mp_diag *d)
{
    cp->a = i;
    cp->b = j;
    int rc = mp_sweep_point_side(a, a->dir ? a->dir : ".", i, &cp->sa, NULL, d);
    if (!rc)
        rc = mp_sweep_point_side(b, b->dir ? b->dir : ".", j, &cp->sb, NULL, d);
    if (rc)
        return rc;
    free(cp->sa->label);
    free(cp->sb->label);
    cp->sa->label = strdup(a->label);
    cp->sb->label = strdup(b->label);
    if (!cp->sa->label || !cp->sb->label)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    if (c->paired)
        return mp_bcmp_compare_paired(cp->sa, cp->sb, &c->opts, &cp->res, d);
    return mp_bcmp_compare(cp->sa, (const struct mp_bcmp_side *const *)&cp->sb, 1, &c->opts,
                           &cp->res, d);
}

int mp_sweep_compare(const struct mp_sweep *a, const struct mp_sweep *b,
                     const struct mp_bcmp_opts *opts, struct mp_sweep_cmp **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_sweep_cmp *c = calloc(1, sizeof(*c));
    if (!c || !(c->pts = calloc(a->n_pts + 1, sizeof(*c->pts)))) {
        free(c);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    c->a = a;
    c->b = b;
    c->opts = *opts;
    c->paired = a->interleave && b->interleave && !strcmp(a->interleave, b->interleave);
    size_t *order = NULL;
    int rc = mp_sweep_sorted(a, &order);
    for (size_t k = 0; k < a->n_pts && !rc; k++) {
        size_t i = order[k];
        size_t j = mp_sweep_find(b, a->pts[i].max_concurrency, a->pts[i].request_rate);
        if (j == SIZE_MAX) {
            c->only_a++;
            continue;
        }
        rc = compare_point(a, b, i, j, c, &c->pts[c->n_pts], d);
        c->n_pts++; /* counted even on failure, so that free sees it */
    }
    free(order);
    for (size_t j = 0; j < b->n_pts; j++)
        c->only_b +=
            mp_sweep_find(a, b->pts[j].max_concurrency, b->pts[j].request_rate) == SIZE_MAX;
    if (!rc && !c->n_pts)
        rc = mp_diag_set(d, MP_EINVAL,
                         "the sweeps share no load point: %s and %s were run at different "
                         "loads",
                         a->label, b->label);
    if (rc) {
        mp_sweep_cmp_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* ---- shifts ---- */

/* The load at point i along var, NaN when there is none. */
static double load_at(const struct mp_sweep *s, size_t i)
{
    return i < s->n_pts ? mp_sweep_point_load(&s->pts[i], s->var) : NAN;
}

/* The knee of s lies in [knee, next): its bracket. */
static void knee_bracket(const struct mp_sweep *s, double out[2])
{
    out[0] = out[1] = NAN;
    if (!s->knee.found)
        return;
    out[0] = load_at(s, s->knee.index);
    out[1] = load_at(s, s->knee.next);
}

/* The SLA capacity of s lies in [answer, first_fail). */
static void sla_bracket(const struct mp_sweep *s, double out[2])
{
    out[0] = out[1] = NAN;
    if (!s->slares.done || isnan(s->slares.answer))
        return;
    out[0] = s->slares.answer;
    out[1] = isnan(s->slares.first_fail) ? INFINITY : s->slares.first_fail;
}

/* b's bracket over a's as a ratio: the point ratio and the interval the
 * brackets allow. */
static void shift(const double a[2], const double b[2], double out[3])
{
    out[0] = out[1] = out[2] = NAN;
    if (isnan(a[0]) || isnan(b[0]) || !(a[0] > 0))
        return;
    out[0] = b[0] / a[0];
    out[1] = b[0] / a[1]; /* b at its lowest, a at its highest */
    out[2] = b[1] / a[0];
}

static int shift_json(struct mp_buf *b, const char *key, const double ba[2], const double bb[2])
{
    double s[3];
    shift(ba, bb, s);
    int rc = mp_buf_printf(b, ", \"%s\": {\"baseline\": [", key);
    rc |= mp_json_double(b, ba[0]);
    rc |= mp_buf_puts(b, ", ");
    rc |= isinf(ba[1]) ? mp_buf_puts(b, "\"inf\"") : mp_json_double(b, ba[1]);
    rc |= mp_buf_puts(b, "], \"candidate\": [");
    rc |= mp_json_double(b, bb[0]);
    rc |= mp_buf_puts(b, ", ");
    rc |= isinf(bb[1]) ? mp_buf_puts(b, "\"inf\"") : mp_json_double(b, bb[1]);
    rc |= mp_buf_puts(b, "], \"ratio\": ");
    rc |= mp_json_double(b, s[0]);
    rc |= mp_buf_puts(b, ", \"ratio_interval\": [");
    rc |= mp_json_double(b, s[1]);
    rc |= mp_buf_puts(b, ", ");
    rc |= isinf(s[2]) ? mp_buf_puts(b, "\"inf\"") : mp_json_double(b, s[2]);
    return rc | mp_buf_puts(b, "]}");
}

static int shift_text(struct mp_buf *b, const char *what, const char *var, const double ba[2],
                      const double bb[2])
{
    if (isnan(ba[0]) && isnan(bb[0]))
        return mp_buf_printf(b, "%s: neither sweep has one\n", what);
    if (isnan(ba[0]) || isnan(bb[0]))
        return mp_buf_printf(b, "%s: only the %s has one (%s %g)\n", what,
                             isnan(ba[0]) ? "candidate" : "baseline", var,
                             isnan(ba[0]) ? bb[0] : ba[0]);
    double s[3];
    shift(ba, bb, s);
    return mp_buf_printf(b,
                         "%s: %s %g [%g, %g) -> %g [%g, %g): x%.3g (the brackets allow "
                         "x%.3g .. x%.3g)\n",
                         what, var, ba[0], ba[0], ba[1], bb[0], bb[0], bb[1], s[0], s[1], s[2]);
}

/* ---- writers ---- */

static const int KEY_METRICS[] = {MP_BCMP_OUT_TPS,   MP_BCMP_TTFT_MEAN, MP_BCMP_TTFT_P99,
                                  MP_BCMP_TPOT_MEAN, MP_BCMP_TPOT_P99,  MP_BCMP_E2EL_MEAN};
#define N_KEY (sizeof(KEY_METRICS) / sizeof(KEY_METRICS[0]))

int mp_sweep_cmp_text(const struct mp_sweep_cmp *c, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = mp_buf_printf(b, "baseline  %s (%s)\ncandidate %s (%s)\n%s\n", c->a->label,
                           c->a->target, c->b->label, c->b->target,
                           c->paired ? "interleaved: each point's repeats are paired in time "
                                       "(Student t over the pairs)"
                                     : "not interleaved: a drift of the machine between the two "
                                       "sweeps is not separated from the change");
    rc |= mp_buf_printf(b, "\n  %-12s", "point");
    for (size_t k = 0; k < N_KEY; k++)
        rc |= mp_buf_printf(b, " %-26s", mp_bcmp_metric_label(KEY_METRICS[k]));
    rc |= mp_buf_puts(b, "\n");
    for (size_t i = 0; i < c->n_pts; i++) {
        const struct mp_sweep_cmp_point *p = &c->pts[i];
        char name[64];
        mp_sweep_point_name(&c->a->pts[p->a], name, sizeof(name));
        rc |= mp_buf_printf(b, "  %-12s", name);
        for (size_t k = 0; k < N_KEY; k++) {
            const struct mp_bcmp_metric *m = &p->res->pairs[0].m[KEY_METRICS[k]];
            char cellv[64];
            if (isnan(m->change_pct))
                snprintf(cellv, sizeof(cellv), "n/a");
            else
                snprintf(cellv, sizeof(cellv), "%+.1f%% %s", m->change_pct,
                         m->verdict == MP_BCMP_WITHIN_NOISE ? "~"
                                                            : mp_bcmp_verdict_name(m->verdict));
            rc |= mp_buf_printf(b, " %-26s", cellv);
        }
        const struct mp_bcmp_pair *pr = &p->res->pairs[0];
        rc |= mp_buf_printf(b, " (%s%s)\n", mp_bcmp_noise_name(pr->noise),
                            pr->noise == MP_BCMP_NOISE_WITHIN_RUN ? ": run-to-run noise unmeasured"
                                                                  : "");
    }
    if (c->only_a || c->only_b)
        rc |= mp_buf_printf(b, "  (%zu load(s) only in the baseline, %zu only in the candidate)\n",
                            c->only_a, c->only_b);
    double ka[2], kb[2], sa[2], sb[2];
    knee_bracket(c->a, ka);
    knee_bracket(c->b, kb);
    sla_bracket(c->a, sa);
    sla_bracket(c->b, sb);
    rc |= mp_buf_puts(b, "\n");
    rc |= shift_text(b, "knee", mp_sweep_var_name(c->a->var), ka, kb);
    if (c->a->slares.done || c->b->slares.done)
        rc |= shift_text(b, "SLA point",
                         mp_sweep_var_name(c->a->slares.done ? c->a->slares.search.var
                                                             : c->b->slares.search.var),
                         sa, sb);
    rc |= mp_buf_printf(b,
                        "~ = within noise (Holm-adjusted p >= %g or a change within the effect "
                        "floor); change = candidate vs baseline\n",
                        c->opts.alpha);
    return rc ? MP_ENOMEM : 0;
}

int mp_sweep_cmp_json(const struct mp_sweep_cmp *c, struct mp_buf *out)
{
    struct mp_buf *b = out;
    int rc = mp_buf_puts(b, "{\"baseline\": ");
    rc |= mp_json_str(b, c->a->label, strlen(c->a->label));
    rc |= mp_buf_puts(b, ", \"candidate\": ");
    rc |= mp_json_str(b, c->b->label, strlen(c->b->label));
    rc |= mp_buf_printf(b, ", \"paired\": %s, \"only_baseline\": %zu, \"only_candidate\": %zu",
                        c->paired ? "true" : "false", c->only_a, c->only_b);
    double ka[2], kb[2], sa[2], sb[2];
    knee_bracket(c->a, ka);
    knee_bracket(c->b, kb);
    sla_bracket(c->a, sa);
    sla_bracket(c->b, sb);
    rc |= shift_json(b, "knee", ka, kb);
    rc |= shift_json(b, "sla_point", sa, sb);
    rc |= mp_buf_puts(b, ", \"points\": [");
    for (size_t i = 0; i < c->n_pts; i++) {
        const struct mp_sweep_cmp_point *p = &c->pts[i];
        char name[64];
        mp_sweep_point_name(&c->a->pts[p->a], name, sizeof(name));
        rc |= mp_buf_puts(b, i ? ",\n  {\"point\": " : "\n  {\"point\": ");
        rc |= mp_json_str(b, name, strlen(name));
        rc |= mp_buf_puts(b, ", \"compare\": ");
        struct mp_buf one;
        mp_buf_init(&one, 0);
        rc |= mp_bcmp_json(p->res, &one);
        /* mp_bcmp_json ends its document with a newline */
        const char *t = mp_buf_cstr(&one);
        size_t n = strlen(t);
        while (n && t[n - 1] == '\n')
            n--;
        rc |= mp_buf_append(b, t, n);
        mp_buf_fini(&one);
        rc |= mp_buf_putc(b, '}');
    }
    rc |= mp_buf_puts(b, "]}\n");
    return rc ? MP_ENOMEM : 0;
}

int mp_sweep_cmp_html(const struct mp_sweep_cmp *c, struct mp_buf *out)
{
    const struct mp_sweep *both[2] = {c->a, c->b};
    char title[256];
    snprintf(title, sizeof(title), "magpie sweep compare: %s vs %s", c->b->label, c->a->label);
    struct mp_buf page, text;
    mp_buf_init(&page, 0);
    mp_buf_init(&text, 0);
    int rc = mp_sweep_html(both, 2, title, &page);
    if (!rc)
        rc = mp_sweep_cmp_text(c, &text);
    if (!rc) {
        /* the verdicts go before the end of the page */
        const char *p = mp_buf_cstr(&page), *end = strstr(p, "</body>");
        rc |= mp_buf_append(out, p, end ? (size_t)(end - p) : strlen(p));
        rc |= mp_buf_puts(out, "<h2>Point by point</h2><pre>");
        rc |= loadgen_html_esc(out, mp_buf_cstr(&text));
        rc |= mp_buf_puts(out, "</pre></body></html>\n");
    }
    mp_buf_fini(&page);
    mp_buf_fini(&text);
    return rc ? MP_ENOMEM : 0;
}
