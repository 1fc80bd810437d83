/* Failed requests of a load-generator run: grouped by reason (HTTP status,
 * timeout, connection, stream) with a few of their messages, and the limit
 * (`--max-failed-requests N|P%`) that decides whether a run with failures
 * can still be judged (docs/metrics.md, "Failed requests"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>

const char *mp_loadgen_fail_kind_name(enum mp_loadgen_fail_kind k)
{
    static const char *const names[] = {"none", "http", "timeout", "connection", "stream"};
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "other";
}

static void group_reason(struct mp_loadgen_fail_group *g)
{
    if (g->kind == MP_LOADGEN_FAIL_HTTP)
        snprintf(g->reason, sizeof(g->reason), "HTTP %d", g->http_status);
    else
        snprintf(g->reason, sizeof(g->reason), "%s", mp_loadgen_fail_kind_name(g->kind));
}

static int by_count(const void *a, const void *b)
{
    const struct mp_loadgen_fail_group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first_index < y->first_index ? -1 : x->first_index > y->first_index;
}

void mp_loadgen_failures(const struct mp_loadgen_result *r, struct mp_loadgen_failures *out)
{
    memset(out, 0, sizeof(*out));
    if (!r)
        return;
    out->total = r->n;
    for (size_t i = 0; i < r->n; i++) {
        const struct mp_loadgen_record *x = &r->recs[i];
        if (x->success)
            continue;
        out->failed++;
        enum mp_loadgen_fail_kind kind = (enum mp_loadgen_fail_kind)x->fail_kind;
        if (kind == MP_LOADGEN_FAIL_NONE) /* a record made without a kind */
            kind = x->http_status && x->http_status != 200 ? MP_LOADGEN_FAIL_HTTP
                                                           : MP_LOADGEN_FAIL_STREAM;
        int status = kind == MP_LOADGEN_FAIL_HTTP ? x->http_status : 0;
        size_t j;
        for (j = 0; j < out->n_groups; j++)
            if (out->groups[j].kind == kind && out->groups[j].http_status == status)
                break;
        if (j == out->n_groups) {
            /* more distinct reasons than slots: the rest go to the last one */
            if (out->n_groups == MP_LOADGEN_FAIL_GROUPS)
                j = MP_LOADGEN_FAIL_GROUPS - 1;
            else {
                struct mp_loadgen_fail_group *g = &out->groups[out->n_groups++];
                g->kind = kind;
                g->http_status = status;
                g->first_index = i;
                group_reason(g);
            }
        }
        struct mp_loadgen_fail_group *g = &out->groups[j];
        g->count++;
        const char *e = x->error;
        if (!e || g->n_examples == MP_LOADGEN_FAIL_EXAMPLES)
            continue;
        bool seen = false;
        for (size_t k = 0; k < g->n_examples && !seen; k++)
            seen = strcmp(g->examples[k], e) == 0;
        if (!seen)
            g->examples[g->n_examples++] = e;
    }
    out->ratio = out->total ? (double)out->failed / (double)out->total : 0;
    qsort(out->groups, out->n_groups, sizeof(out->groups[0]), by_count);
}

int mp_loadgen_fail_limit_parse(const char *s, struct mp_loadgen_fail_limit *out, struct mp_diag *d)
{
    const char *want = "a number of requests (0, 3) or a percentage of them (0.5%)";
    if (!s || !*s)
        return mp_diag_set(d, MP_EINVAL, "max failed requests: empty; expected %s", want);
    char *end;
    double v = strtod(s, &end);
    bool pct = *end == '%' && end[1] == 0;
    if (end == s || (*end && !pct) || !isfinite(v) || v < 0)
        return mp_diag_set(d, MP_EINVAL, "max failed requests '%s': expected %s", s, want);
    if (pct && v > 100)
        return mp_diag_set(d, MP_EINVAL, "max failed requests '%s': a percentage is at most 100%%",
                           s);
    if (!pct && (v != floor(v) || v > 1e15))
        return mp_diag_set(d, MP_EINVAL, "max failed requests '%s': a count is a whole number", s);
    out->percent = pct;
    out->value = v;
    return 0;
}

bool mp_loadgen_fail_limit_ok(const struct mp_loadgen_fail_limit *l, size_t failed, size_t total)
{
    if (failed == 0)
        return true;
    if (!l)
        return false;
    if (l->percent) /* failed / total <= P / 100, without dividing */
        return (double)failed * 100.0 <= l->value * (double)total;
    return (double)failed <= l->value;
}

void mp_loadgen_fail_limit_format(const struct mp_loadgen_fail_limit *l, char *out, size_t len)
{
    if (!l)
        snprintf(out, len, "0");
    else if (l->percent)
        snprintf(out, len, "%g%%", l->value);
    else
        snprintf(out, len, "%.0f", l->value);
}

int mp_loadgen_failures_json(const struct mp_loadgen_failures *f,
                             const struct mp_loadgen_fail_limit *limit, struct mp_buf *out)
{
    int rc =
        mp_buf_printf(out, "{\"failed\": %zu, \"total\": %zu, \"ratio\": ", f->failed, f->total);
    rc |= mp_json_double(out, f->ratio);
    if (limit) {
        char ls[48];
        mp_loadgen_fail_limit_format(limit, ls, sizeof(ls));
        rc |=
            mp_buf_printf(out, ", \"max_failed_requests\": \"%s\", \"within_limit\": %s", ls,
                          mp_loadgen_fail_limit_ok(limit, f->failed, f->total) ? "true" : "false");
    }
    rc |= mp_buf_puts(out, ", \"by_reason\": [");
    for (size_t i = 0; i < f->n_groups; i++) {
        const struct mp_loadgen_fail_group *g = &f->groups[i];
        rc |= mp_buf_puts(out, i ? ", {\"reason\": " : "{\"reason\": ");
        rc |= mp_json_str(out, g->reason, strlen(g->reason));
        rc |= mp_buf_printf(out,
                            ", \"kind\": \"%s\", \"http_status\": %d, \"count\": %zu, "
                            "\"first_request\": %zu, \"examples\": [",
                            mp_loadgen_fail_kind_name(g->kind), g->http_status, g->count,
                            g->first_index);
        for (size_t k = 0; k < g->n_examples; k++) {
            rc |= mp_buf_puts(out, k ? ", " : "");
            rc |= mp_json_str(out, g->examples[k], strlen(g->examples[k]));
        }
        rc |= mp_buf_puts(out, "]}");
    }
    rc |= mp_buf_puts(out, "]}");
    return rc ? MP_ENOMEM : 0;
}

int mp_loadgen_failures_text(const struct mp_loadgen_failures *f,
                             const struct mp_loadgen_fail_limit *limit, struct mp_buf *out)
{
    if (!f->failed)
        return 0;
    int rc = mp_buf_printf(out, "Failed requests: %zu of %zu (%.2f%%)", f->failed, f->total,
                           f->ratio * 100);
    if (limit) {
        char ls[48];
        mp_loadgen_fail_limit_format(limit, ls, sizeof(ls));
        rc |= mp_buf_printf(out, ", limit %s: %s", ls,
                            mp_loadgen_fail_limit_ok(limit, f->failed, f->total) ? "within it"
                                                                                 : "over it");
    }
    rc |= mp_buf_puts(out, "\n");
    for (size_t i = 0; i < f->n_groups; i++) {
        const struct mp_loadgen_fail_group *g = &f->groups[i];
        rc |= mp_buf_printf(out, "  %-11s %6zu  first #%zu", g->reason, g->count, g->first_index);
        for (size_t k = 0; k < g->n_examples; k++)
            rc |= mp_buf_printf(out, "\n      %.160s", g->examples[k]);
        rc |= mp_buf_puts(out, "\n");
    }
    return rc ? MP_ENOMEM : 0;
}
