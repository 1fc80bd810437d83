/* Window-clamped traces (Magpie's gap_analysis generate_clamped_traces): for
 * each rank trace, every event with a timestamp that overlaps the analysis
 * window, its ts and dur clipped to the window, written as
 * <stem>_clamped_<start>_<end>.trace.json.gz next to the gap CSVs.
 *
 * Two streaming passes per trace: the first finds the trace's time span
 * (events with a positive dur, as Magpie), the second copies each kept
 * event's raw JSON text with only its "ts" and "dur" values replaced (added
 * at the end when dur is absent), so every other field stays as written.
 * The replaced numbers follow Python's arithmetic: integers stay integers
 * while both operands are, floats are written in repr() form. Top-level
 * keys other than traceEvents are kept in their order. Events without a
 * timestamp are dropped, as in Magpie. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>
#include <magpie/io.h>
#include <magpie/trace.h>

/* Compressed in chunks, each an independent gzip member (read as one
 * stream by every gzip reader), so only the compressed text stays in memory. */
#define CLAMP_CHUNK ((size_t)256 << 10)

struct clamp {
    double t_min, t_max, t_start, t_end;
    bool any;
    bool seen_events;
    bool first_out;
    uint64_t kept, total;
    struct mp_buf before, after; /* top-level keys around traceEvents */
    struct mp_buf text, gz;
    struct mp_diag *d;
};

/* Whether a raw JSON number is an integer literal (Python int). */
static bool raw_is_int(struct mp_strview v)
{
    if (!v.n)
        return false;
    for (size_t i = 0; i < v.n; i++) {
        char c = v.p[i];
        if (c == '.' || c == 'e' || c == 'E')
            return false;
        if (!(c == '-' || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

static int bounds_event(const struct mp_trace_event *ev, void *user)
{
    struct clamp *c = user;
    c->total++;
    if (!(ev->flags & MP_EV_TS) || !(ev->flags & MP_EV_DUR) || !(ev->dur > 0))
        return 0;
    if (!c->any || ev->ts < c->t_min)
        c->t_min = ev->ts;
    if (!c->any || ev->ts + ev->dur > c->t_max)
        c->t_max = ev->ts + ev->dur;
    c->any = true;
    return 0;
}

static int put_num(struct mp_buf *b, double v, bool is_int)
{
    if (is_int && fabs(v) < 9007199254740992.0)
        return mp_buf_printf(b, "%lld", (long long)v);
    char s[40];
    mp_fmt_pyfloat(v, s, sizeof(s));
    return mp_buf_puts(b, s);
}

static int flush_text(struct clamp *c)
{
    if (!c->text.len)
        return 0;
    int rc = mp_io_gzip(c->text.data, c->text.len, 6, &c->gz, c->d);
    mp_buf_reset(&c->text);
    return rc;
}

static int copy_event(const struct mp_trace_event *ev, void *user)
{
    struct clamp *c = user;
    c->seen_events = true;
    if (!(ev->flags & MP_EV_TS))
        return 0;
    double ts = ev->ts, dur = (ev->flags & MP_EV_DUR) ? ev->dur : 0;
    if (ts + dur < c->t_start || ts > c->t_end)
        return 0;
    struct mp_strview vts = {0}, vdur = {0};
    if (mp_trace_json_find(ev->raw, "ts", &vts) != 0)
        return 0; /* a ts the parser read but the raw text lacks: cannot happen */
    bool has_dur = mp_trace_json_find(ev->raw, "dur", &vdur) == 0;
    bool ts_int = raw_is_int(vts), dur_int = has_dur ? raw_is_int(vdur) : true;
    /* Python: max(ts, t_start), min(ts + dur, t_end); t_start/t_end are floats */
    bool start_keep = ts >= c->t_start;
    double cs = start_keep ? ts : c->t_start;
    bool cs_int = start_keep && ts_int;
    double end = ts + dur;
    bool end_keep = end <= c->t_end;
    double ce = end_keep ? end : c->t_end;
    bool ce_int = end_keep && ts_int && dur_int;
    double nd = ce - cs;
    bool nd_int = cs_int && ce_int;

    struct mp_buf *b = &c->text;
    int rc = c->first_out ? 0 : mp_buf_puts(b, ",\n");
    c->first_out = false;
    /* the raw text in order, with the ts (and dur) value spans replaced */
    const char *p = ev->raw.p, *stop = ev->raw.p + ev->raw.n;
    struct mp_strview spans[2] = {vts, vdur};
    int order[2] = {0, 1};
    int nspans = has_dur ? 2 : 1;
    if (has_dur && vdur.p < vts.p) {
        order[0] = 1;
        order[1] = 0;
    }
    for (int k = 0; k < nspans && !rc; k++) {
        struct mp_strview s = spans[order[k]];
        rc = mp_buf_append(b, p, (size_t)(s.p - p));
        if (!rc) {
            if (order[k] == 0)
                rc = start_keep ? mp_buf_append(b, vts.p, vts.n) : put_num(b, cs, cs_int);
            else
                rc = put_num(b, nd, nd_int);
        }
        p = s.p + s.n;
    }
    if (!rc && !has_dur) {
        /* Magpie adds "dur" at the end of the event */
        const char *close = stop - 1;
        while (close > p && *close != '}')
            close--;
        rc = mp_buf_append(b, p, (size_t)(close - p));
        rc = rc ? rc : mp_buf_puts(b, ", \"dur\": ");
        rc = rc ? rc : put_num(b, nd, nd_int);
        p = close;
    }
    rc = rc ? rc : mp_buf_append(b, p, (size_t)(stop - p));
    c->kept++;
    if (!rc && b->len >= CLAMP_CHUNK)
        rc = flush_text(c);
    return rc;
}

static int copy_meta(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct clamp *c = user;
    struct mp_buf *b = c->seen_events ? &c->after : &c->before;
    if (mp_json_str(b, key.p, key.n) != 0 || mp_buf_puts(b, ": ") != 0 ||
        mp_buf_append(b, raw.p, raw.n) != 0 || mp_buf_puts(b, ", ") != 0)
        return MP_ENOMEM;
    return 0;
}

static char *clamped_name(const char *trace, double start_pct, double end_pct)
{
    const char *base = strrchr(trace, '/');
    base = base ? base + 1 : trace;
    size_t n = strlen(base);
    if (n > 8 && strcmp(base + n - 8, ".json.gz") == 0)
        n -= 8;
    else if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    char s[40], e[40];
    mp_fmt_pyfloat(start_pct, s, sizeof(s));
    mp_fmt_pyfloat(end_pct, e, sizeof(e));
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (mp_buf_printf(&b, "%.*s_clamped_%s_%s.trace.json.gz", (int)n, base, s, e) != 0) {
        mp_buf_fini(&b);
        return NULL;
    }
    return b.data;
}

int mp_gap_clamp_trace(const char *trace, double start_pct, double end_pct, const char *out_dir,
                       char **out_path, struct mp_diag *d)
{
    *out_path = NULL;
    if (!(start_pct >= 0 && end_pct <= 100 && start_pct < end_pct))
        return mp_diag_set(d, MP_EINVAL,
                           "window percentages must satisfy 0 <= start (%g) < end (%g) <= 100",
                           start_pct, end_pct);
    struct clamp c = {.d = d, .first_out = true};
    mp_buf_init(&c.before, 0);
    mp_buf_init(&c.after, 0);
    mp_buf_init(&c.text, 0);
    mp_buf_init(&c.gz, 0);
    struct mp_trace_parse_opts o = {.on_event = bounds_event, .user = &c};
    struct mp_trace_parse_stats st;
    int rc = mp_trace_parse_file(trace, &o, &st, d);
    char *name = NULL, *path = NULL;
    if (rc || !c.any)
        goto out; /* no event with a duration: Magpie writes no file */
    double span = c.t_max - c.t_min;
    c.t_start = c.t_min + span * (start_pct / 100.0);
    c.t_end = c.t_min + span * (end_pct / 100.0);
    o.on_event = copy_event;
    o.on_meta = copy_meta;
    rc = mp_trace_parse_file(trace, &o, &st, d);
    if (rc)
        goto out;
    /* Magpie keeps the document's shape: an object with traceEvents (its
     * other keys in order), or a bare list. The events were compressed as
     * they came; the head goes in front as a gzip member of its own. */
    if (!st.bare_list) {
        rc = mp_buf_puts(&c.text, "]");
        if (!rc && c.after.len) {
            rc = mp_buf_puts(&c.text, ", ");
            rc = rc ? rc : mp_buf_append(&c.text, c.after.data, c.after.len - 2);
        }
        rc = rc ? rc : mp_buf_puts(&c.text, "}\n");
    } else {
        rc = mp_buf_puts(&c.text, "]\n");
    }
    rc = rc ? rc : flush_text(&c);
    struct mp_buf head, gz;
    mp_buf_init(&head, 0);
    mp_buf_init(&gz, 0);
    if (!rc && !st.bare_list) {
        rc = mp_buf_putc(&head, '{');
        rc = rc ? rc : mp_buf_append(&head, c.before.data, c.before.len);
        rc = rc ? rc : mp_buf_puts(&head, "\"traceEvents\": [");
    } else if (!rc) {
        rc = mp_buf_putc(&head, '[');
    }
    rc = rc ? rc : mp_io_gzip(head.data, head.len, 6, &gz, d);
    rc = rc ? rc : mp_buf_append(&gz, c.gz.data, c.gz.len);
    mp_buf_fini(&head);
    mp_buf_fini(&c.gz);
    c.gz = gz;
    if (rc)
        goto out;
    name = clamped_name(trace, start_pct, end_pct);
    path = name ? mp_fs_join(out_dir, name) : NULL;
    if (!path) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    rc = mp_fs_mkdirs(out_dir, d);
    rc = rc ? rc : mp_fs_write_atomic(path, c.gz.data, c.gz.len, d);
    if (rc) {
        mp_diag_set_file(d, path);
        goto out;
    }
    *out_path = path;
    path = NULL;
out:
    free(name);
    free(path);
    mp_buf_fini(&c.before);
    mp_buf_fini(&c.after);
    mp_buf_fini(&c.text);
    mp_buf_fini(&c.gz);
    return rc;
}

int mp_gap_clamped_traces(const char *trace_dir, double start_pct, double end_pct,
                          const char *out_dir, struct mp_gap_clamped *out, struct mp_diag *d)
{
    memset(out, 0, sizeof(*out));
    struct mp_trace_rank_list rl = {0};
    int rc = mp_trace_find_ranks(trace_dir, &rl, d);
    if (rc)
        return rc;
    out->paths = calloc(rl.n ? rl.n : 1, sizeof(char *));
    out->errors = calloc(rl.n ? rl.n : 1, sizeof(char *));
    if (!out->paths || !out->errors) {
        mp_trace_rank_list_fini(&rl);
        mp_gap_clamped_fini(out);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < rl.n; i++) {
        struct mp_diag e;
        mp_diag_clear(&e);
        char *p = NULL;
        int r = mp_gap_clamp_trace(rl.files[i].path, start_pct, end_pct, out_dir, &p, &e);
        if (r) {
            /* Magpie warns and goes on with the next rank */
            struct mp_buf m;
            mp_buf_init(&m, 0);
            const char *base = strrchr(rl.files[i].path, '/');
            mp_buf_printf(&m, "Failed to generate clamped trace for %s: %s",
                          base ? base + 1 : rl.files[i].path, e.msg);
            out->errors[out->n_errors++] = m.data ? m.data : mp_strdup("out of memory");
        } else if (p) {
            out->paths[out->n++] = p;
        }
    }
    mp_trace_rank_list_fini(&rl);
    return 0;
}

void mp_gap_clamped_fini(struct mp_gap_clamped *c)
{
    for (size_t i = 0; c->paths && i < c->n; i++)
        free(c->paths[i]);
    for (size_t i = 0; c->errors && i < c->n_errors; i++)
        free(c->errors[i]);
    free(c->paths);
    free(c->errors);
    memset(c, 0, sizeof(*c));
}
