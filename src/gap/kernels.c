/* Kernel summary (Magpie's `kernel_summary`): time and calls per kernel name
 * over events whose cat is exactly "kernel", as percent of the kernel total.
 * Magpie reads only the largest trace file; here every rank is summarised
 * and the ranks are also merged. */
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>

struct kacc {
    struct mp_intern *names;
    double *us;
    uint64_t *calls;
    size_t cap;
    int err;
};

static int kacc_add(struct kacc *k, const char *name, size_t n, double us, uint64_t calls)
{
    int32_t id = mp_intern_add(k->names, name, n);
    if (id < 0)
        return id;
    if ((size_t)id >= k->cap) {
        size_t old = k->cap;
        if (MP_GROW2(k->us, k->calls, k->cap, (size_t)id + 1, 256))
            return MP_ENOMEM;
        memset(k->us + old, 0, (k->cap - old) * sizeof(*k->us));
        memset(k->calls + old, 0, (k->cap - old) * sizeof(*k->calls));
    }
    k->us[id] += us;
    k->calls[id] += calls;
    return 0;
}

static int on_event(const struct mp_trace_event *ev, void *user)
{
    struct kacc *k = user;
    if (!(ev->flags & MP_EV_CAT) || ev->cat.n != 6 || memcmp(ev->cat.p, "kernel", 6) != 0)
        return 0;
    const char *name = (ev->flags & MP_EV_NAME) ? ev->name.p : "<?>";
    size_t n = (ev->flags & MP_EV_NAME) ? ev->name.n : 3;
    int rc = kacc_add(k, name, n, (ev->flags & MP_EV_DUR) ? ev->dur : 0.0, 1);
    if (rc)
        k->err = rc;
    return rc;
}

struct order {
    double us;
    int32_t id;
};

static int cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->us != y->us)
        return x->us > y->us ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

static int table_from(const struct kacc *k, struct mp_kernel_table *t)
{
    int32_t n = mp_intern_count(k->names);
    if ((size_t)n > k->cap) /* never: kacc_add gives every id a slot or fails */
        return MP_ENOMEM;
    struct order *o = malloc(((size_t)n + 1) * sizeof(*o));
    t->rows = calloc((size_t)n + 1, sizeof(*t->rows));
    if (!o || !t->rows) {
        free(o);
        return MP_ENOMEM;
    }
    double total = 0;
    for (int32_t i = 0; i < n; i++) {
        o[i] = (struct order){k->us[i], i};
        total += k->us[i];
    }
    qsort(o, (size_t)n, sizeof(*o), cmp_order);
    t->total_ms = total / 1000.0;
    for (int32_t i = 0; i < n; i++) {
        struct mp_kernel_row *r = &t->rows[i];
        r->name = mp_strdup(mp_intern_str(k->names, o[i].id));
        r->time_ms = o[i].us / 1000.0;
        r->percent = total > 0 ? o[i].us / total * 100.0 : 0.0;
        r->calls = k->calls[o[i].id];
        t->n++;
        if (!r->name) {
            free(o);
            return MP_ENOMEM;
        }
    }
    free(o);
    return 0;
}

static void kacc_fini(struct kacc *k)
{
    mp_intern_free(k->names);
    free(k->us);
    free(k->calls);
}

static void table_fini(struct mp_kernel_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].name);
    free(t->rows);
    free(t->trace_file);
}

int mp_kernel_summary_run(const char *path, mp_trace_progress_fn progress, void *progress_user,
                          struct mp_kernel_summary **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_trace_rank_list rl = {0};
    int rc = 0;
    struct mp_kernel_summary *s = calloc(1, sizeof(*s));
    struct kacc merged = {.names = mp_intern_new()};
    if (!s || !merged.names) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    if (mp_fs_is_dir(path)) {
        rc = mp_trace_find_ranks(path, &rl, d);
        if (rc)
            goto out;
    } else {
        rl.files = calloc(1, sizeof(*rl.files));
        if (!rl.files) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
            goto out;
        }
        rl.files[0].path = mp_strdup(path);
        rl.files[0].rank = 0;
        rl.n = 1;
    }
    s->ranks = calloc(rl.n, sizeof(*s->ranks));
    if (!s->ranks) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < rl.n && !rc; i++) {
        struct kacc k = {.names = mp_intern_new()};
        struct mp_trace_parse_opts po = {.on_event = on_event,
                                         .user = &k,
                                         .on_progress = progress,
                                         .progress_user = progress_user};
        struct mp_trace_parse_stats st = {0};
        if (!k.names) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
            break;
        }
        rc = mp_trace_parse_file(rl.files[i].path, &po, &st, d);
        if (rc && k.err)
            rc = mp_diag_set(d, k.err, "out of memory summarising kernels");
        struct mp_kernel_table *t = &s->ranks[s->n_ranks];
        if (!rc) {
            s->n_ranks++;
            t->rank = rl.files[i].rank;
            t->trace_file = mp_strdup(rl.files[i].path);
            rc = table_from(&k, t);
            s->bytes += st.bytes;
            s->events += st.events;
            for (int32_t j = 0; j < mp_intern_count(k.names) && !rc; j++)
                rc = kacc_add(&merged, mp_intern_str(k.names, j), mp_intern_len(k.names, j),
                              k.us[j], k.calls[j]);
            if (rc)
                rc = mp_diag_set(d, rc, "out of memory");
        }
        kacc_fini(&k);
    }
    if (!rc) {
        s->merged.rank = -1;
        rc = table_from(&merged, &s->merged);
        if (rc)
            rc = mp_diag_set(d, rc, "out of memory");
    }
out:
    kacc_fini(&merged);
    mp_trace_rank_list_fini(&rl);
    if (rc) {
        mp_kernel_summary_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void mp_kernel_summary_free(struct mp_kernel_summary *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_ranks; i++)
        table_fini(&s->ranks[i]);
    free(s->ranks);
    table_fini(&s->merged);
    free(s);
}

int mp_kernel_summary_csv(const struct mp_kernel_table *t, struct mp_buf *out)
{
    struct mp_csv c;
    mp_csv_init(&c, out, "\n");
    int rc = mp_csv_str(&c, "name");
    rc = rc ? rc : mp_csv_str(&c, "time_ms");
    rc = rc ? rc : mp_csv_str(&c, "percent");
    rc = rc ? rc : mp_csv_str(&c, "calls");
    rc = rc ? rc : mp_csv_end_row(&c);
    for (size_t i = 0; i < t->n && !rc; i++) {
        char a[64], b[64];
        mp_fmt_pyfloat(t->rows[i].time_ms, a, sizeof(a));
        mp_fmt_pyfloat(t->rows[i].percent, b, sizeof(b));
        rc = mp_csv_str(&c, t->rows[i].name);
        rc = rc ? rc : mp_csv_str(&c, a);
        rc = rc ? rc : mp_csv_str(&c, b);
        rc = rc ? rc : mp_csv_fmt(&c, "%llu", (unsigned long long)t->rows[i].calls);
        rc = rc ? rc : mp_csv_end_row(&c);
    }
    return rc;
}

static int table_json(const struct mp_kernel_table *t, struct mp_buf *b)
{
    int rc = mp_buf_putc(b, '[');
    for (size_t i = 0; i < t->n && !rc; i++) {
        const struct mp_kernel_row *r = &t->rows[i];
        rc = mp_buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
        rc = rc ? rc : mp_json_str(b, r->name, strlen(r->name));
        rc = rc ? rc : mp_buf_puts(b, ", \"time_ms\": ");
        rc = rc ? rc : mp_json_double(b, r->time_ms);
        rc = rc ? rc : mp_buf_puts(b, ", \"percent\": ");
        rc = rc ? rc : mp_json_double(b, r->percent);
        rc = rc ? rc : mp_buf_printf(b, ", \"calls\": %llu}", (unsigned long long)r->calls);
    }
    return rc ? rc : mp_buf_putc(b, ']');
}

int mp_kernel_summary_json(const struct mp_kernel_summary *s, struct mp_buf *b)
{
    int rc = mp_buf_puts(b, "{\"kernel_summary\": ");
    rc = rc ? rc : table_json(&s->merged, b);
    rc = rc ? rc : mp_buf_puts(b, ", \"top_bottlenecks\": [");
    for (size_t i = 0; i < s->merged.n && i < 10 && !rc; i++) {
        rc = i ? mp_buf_puts(b, ", ") : 0;
        rc = rc ? rc : mp_json_str(b, s->merged.rows[i].name, strlen(s->merged.rows[i].name));
    }
    rc = rc ? rc : mp_buf_puts(b, "], \"total_ms\": ");
    rc = rc ? rc : mp_json_double(b, s->merged.total_ms);
    rc = rc ? rc : mp_buf_puts(b, ", \"ranks\": [");
    for (size_t i = 0; i < s->n_ranks && !rc; i++) {
        const struct mp_kernel_table *t = &s->ranks[i];
        rc = mp_buf_printf(b, "%s{\"rank\": %d, \"trace_file\": ", i ? ", " : "", t->rank);
        rc = rc ? rc : mp_json_str(b, t->trace_file, strlen(t->trace_file));
        rc = rc ? rc : mp_buf_puts(b, ", \"total_ms\": ");
        rc = rc ? rc : mp_json_double(b, t->total_ms);
        rc = rc ? rc : mp_buf_puts(b, ", \"kernel_summary\": ");
        rc = rc ? rc : table_json(t, b);
        rc = rc ? rc : mp_buf_putc(b, '}');
    }
    rc = rc ? rc
            : mp_buf_printf(b, "], \"stats\": {\"bytes\": %llu, \"events\": %llu}}",
                            (unsigned long long)s->bytes, (unsigned long long)s->events);
    return rc;
}
