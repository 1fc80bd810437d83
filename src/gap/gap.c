/* Gap analysis, as Magpie computes it (Magpie/modes/benchmark/gap_analysis.py),
 * but streamed.
 *
 * Magpie loads each rank's trace with json.load, builds an "External id ->
 * Input Dims" map from cpu_op events, then aggregates the category-filtered
 * events by exact name. Here each rank is one streaming pass: cpu_ops update
 * the shape map and kernels look their shape up as they arrive. That equals
 * Magpie's map-first order whenever no cpu_op (re)defines the shape of an
 * External id after a kernel has looked it up; the map remembers which ids
 * were looked up, and if that ever happens the rank is aggregated again with
 * the now complete map (a second pass), so the result is always exact.
 * A time window other than 0-100 % needs one extra pass for its bounds.
 *
 * Memory: distinct kernel names and shapes (bounded in practice), plus 4
 * bytes per External id in the id range used by cpu_ops (a paged table).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/gap.h>
#include <magpie/jsonlex.h>

#define MAX_SHAPES 10
#define MAX_VARIANTS_LISTED 20
#define PAGE_BITS 12
#define PAGE_SIZE ((size_t)1 << PAGE_BITS)
#define LOOKED_UP 0x80000000u

/* ---- paged External id -> shape table ---- */
struct page_slot {
    int64_t page_no;
    uint32_t *page; /* NULL = empty slot */
};

struct extmap {
    struct page_slot *slots;
    size_t nslots, npages;
};

static void extmap_fini(struct extmap *m)
{
    for (size_t i = 0; i < m->nslots; i++)
        free(m->slots[i].page);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static size_t slot_of(int64_t page_no, size_t nslots)
{
    uint64_t h = (uint64_t)page_no * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (nslots - 1);
}

/* Returns the cell for id, creating its page when create is set; NULL when
 * absent (or out of memory with create: *oom set). */
static uint32_t *extmap_cell(struct extmap *m, int64_t id, bool create, bool *oom)
{
    int64_t page_no = id >> PAGE_BITS;
    size_t off = (size_t)((uint64_t)id & (PAGE_SIZE - 1));
    if (m->nslots) {
        size_t i = slot_of(page_no, m->nslots);
        while (m->slots[i].page) {
            if (m->slots[i].page_no == page_no)
                return &m->slots[i].page[off];
            i = (i + 1) & (m->nslots - 1);
        }
    }
    if (!create)
        return NULL;
    if ((m->npages + 1) * 2 > m->nslots) {
        size_t ns = m->nslots ? m->nslots * 2 : 64;
        struct page_slot *nsl = calloc(ns, sizeof(*nsl));
        if (!nsl) {
            *oom = true;
            return NULL;
        }
        for (size_t k = 0; k < m->nslots; k++) {
            if (!m->slots[k].page)
                continue;
            size_t j = slot_of(m->slots[k].page_no, ns);
            while (nsl[j].page)
                j = (j + 1) & (ns - 1);
            nsl[j] = m->slots[k];
        }
        free(m->slots);
        m->slots = nsl;
        m->nslots = ns;
    }
    uint32_t *page = calloc(PAGE_SIZE, sizeof(uint32_t));
    if (!page) {
        *oom = true;
        return NULL;
    }
    size_t i = slot_of(page_no, m->nslots);
    while (m->slots[i].page)
        i = (i + 1) & (m->nslots - 1);
    m->slots[i].page_no = page_no;
    m->slots[i].page = page;
    m->npages++;
    return &page[off];
}

/* ---- aggregation ---- */
struct agg {
    int32_t key; /* id in ctx->keys (exact name or family) */
    uint64_t calls;
    double total, min, max;
    int32_t shapes[MAX_SHAPES];
    uint8_t nshapes;
    uint8_t nvar_listed;
    uint32_t nvar;
    int32_t var[MAX_VARIANTS_LISTED]; /* exact-name ids (grouped mode) */
};

struct rank_aggs {
    struct agg *v;
    size_t n, cap;
    int32_t *by_key; /* key id -> index in v, -1 */
    size_t by_key_cap;
};

struct ctx {
    const struct mp_gap_config *cfg;
    struct mp_intern *keys;  /* output names (exact or family) */
    struct mp_intern *exact; /* exact names (grouped mode) */
    int32_t *exact_family;   /* exact id -> key id */
    size_t exact_family_cap;
    struct mp_intern *shapes;
    struct mp_intern *raw_dims; /* Input Dims texts as written: few distinct ones */
    int32_t *raw_shape;         /* raw_dims id -> shapes id + 1, 0 none, -1 not yet formatted */
    size_t raw_shape_cap;
    struct mp_intern *cats;
    uint8_t *cat_flags; /* per cat id: 1 = kernel-selected, 2 = cpu_op */
    size_t cat_flags_cap;
    struct mp_buf tmp;
    /* per-rank state */
    struct extmap map;
    struct rank_aggs aggs;
    uint8_t *var_seen; /* per exact id, this rank */
    size_t var_seen_cap;
    bool windowed, build_map, conflict;
    double t_start, t_end, t_min, t_max;
    bool have_bounds;
    int err;
    struct mp_diag *d;
};

/* fill is a byte: new elements become -1 (0xff bytes) or 0 */
// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int grow_i32(int32_t **arr, size_t *cap, size_t need, int fill)
{
    size_t old = *cap;
    if (need <= old)
        return 0;
    if (MP_GROW(*arr, *cap, need, 256))
        return MP_ENOMEM;
    memset(*arr + old, fill, (*cap - old) * sizeof(int32_t));
    return 0;
}

// NOLINTNEXTLINE(readability-non-const-parameter): MP_GROW writes *cap
static int grow_u8(uint8_t **arr, size_t *cap, size_t need)
{
    size_t old = *cap;
    if (need <= old)
        return 0;
    if (MP_GROW(*arr, *cap, need, 256))
        return MP_ENOMEM;
    memset(*arr + old, 0, *cap - old);
    return 0;
}

static bool contains_ci(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return true;
    for (size_t i = 0; i + m <= n; i++) {
        size_t k = 0;
        while (k < m && tolower((unsigned char)hay[i + k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

/* Category decision, cached per distinct cat string. */
static int cat_flags(struct ctx *c, struct mp_strview cat)
{
    int32_t id = mp_intern_add(c->cats, cat.p, cat.n);
    if (id < 0)
        return id;
    if ((size_t)id < c->cat_flags_cap && c->cat_flags[id])
        return c->cat_flags[id] & 0x7f;
    if (grow_u8(&c->cat_flags, &c->cat_flags_cap, (size_t)id + 1))
        return MP_ENOMEM;
    const struct mp_gap_config *g = c->cfg;
    bool sel = true;
    for (int i = 0; i < g->n_ignore && sel; i++)
        if (contains_ci(cat.p, cat.n, g->ignore[i]))
            sel = false;
    if (sel && !g->categories_all && g->n_categories > 0) {
        bool any = false;
        for (int i = 0; i < g->n_categories && !any; i++)
            any = contains_ci(cat.p, cat.n, g->categories[i]);
        sel = any;
    }
    int f = (sel ? 1 : 0) | (contains_ci(cat.p, cat.n, "cpu_op") ? 2 : 0);
    c->cat_flags[id] = (uint8_t)(0x80 | f);
    return f;
}

/* ---- Input Dims -> "[a,b]x[c,d]" (Python str() of the elements) ---- */

/* Python str() of one JSON value: a string as it is, anything else as its
 * repr() (mp_trace_json_pyrepr, lists as lists). */
static int py_str_value(struct mp_buf *b, const char *p, const char *e)
{
    if (p >= e)
        return 0;
    if (*p != '"')
        return mp_trace_json_pyrepr(b, p, e, false);
    struct mp_buf s;
    mp_buf_init(&s, 0);
    struct mp_strview raw = {p, (size_t)(e - p)};
    int rc = mp_trace_json_string(raw, &s);
    if (!rc)
        rc = mp_buf_append(b, s.data ? s.data : "", s.len);
    mp_buf_fini(&s);
    return rc;
}

/* "[" str() of each item joined by sep "]" (p at '[') */
static int py_list(struct mp_buf *b, const char *p, const char *e, const char *sep)
{
    int rc = mp_buf_putc(b, '[');
    p = mp_json_skip_ws(p + 1, e);
    bool first = true;
    while (!rc && p < e && *p != ']') {
        const char *ve = mp_json_value_end(p, e);
        if (!first)
            rc = mp_buf_puts(b, sep);
        if (!rc)
            rc = py_str_value(b, p, ve);
        first = false;
        p = mp_json_next_item(ve, e);
    }
    if (!rc)
        rc = mp_buf_putc(b, ']');
    return rc;
}

/* Magpie's _format_input_dims over the raw JSON text; result in c->tmp. */
static int format_dims(struct ctx *c, struct mp_strview raw)
{
    mp_buf_reset(&c->tmp);
    const char *p = mp_json_skip_ws(raw.p, raw.p + raw.n), *e = raw.p + raw.n;
    if (p >= e || *p != '[')
        return 0; /* not a list: Python yields no parts */
    p = mp_json_skip_ws(p + 1, e);
    bool any = false;
    int rc = 0;
    while (!rc && p < e && *p != ']') {
        const char *ve = mp_json_value_end(p, e);
        if (*p == '[') {
            const char *q = mp_json_skip_ws(p + 1, ve);
            if (q < ve && *q != ']') { /* a non-empty list */
                if (any)
                    rc = mp_buf_putc(&c->tmp, 'x');
                if (!rc)
                    rc = py_list(&c->tmp, p, ve, ",");
                any = true;
            }
        }
        p = mp_json_next_item(ve, e);
    }
    return rc;
}

static bool dims_truthy(struct mp_strview raw)
{
    const char *p = mp_json_skip_ws(raw.p, raw.p + raw.n), *e = raw.p + raw.n;
    if (p >= e)
        return false;
    if (*p == '[') {
        p = mp_json_skip_ws(p + 1, e);
        return p < e && *p != ']';
    }
    return true; /* strings/numbers: only lists produce shapes anyway */
}

/* ---- per-event work ---- */

/* The shapes id of an Input Dims text, -1 when it gives no shape, below -1
 * out of memory; each distinct text is formatted once. */
static int32_t shape_of(struct ctx *c, struct mp_strview raw)
{
    int32_t rid = mp_intern_add(c->raw_dims, raw.p, raw.n);
    if (rid < 0 || grow_i32(&c->raw_shape, &c->raw_shape_cap, (size_t)rid + 1, -1))
        return -2;
    if (c->raw_shape[rid] >= 0)
        return c->raw_shape[rid] - 1;
    if (format_dims(c, raw))
        return -2;
    int32_t sid = c->tmp.len > 0 ? mp_intern_add(c->shapes, c->tmp.data, c->tmp.len) : -1;
    if (sid < -1)
        return -2;
    c->raw_shape[rid] = sid + 1;
    return sid;
}

static struct agg *agg_for(struct ctx *c, const struct mp_trace_event *ev, bool *oom)
{
    static const char unknown[] = "<?>";
    const char *name = (ev->flags & MP_EV_NAME) ? ev->name.p : unknown;
    size_t nlen = (ev->flags & MP_EV_NAME) ? ev->name.n : 3;
    int32_t key, exact_id = -1;
    if (c->cfg->group_normalized) {
        exact_id = mp_intern_add(c->exact, name, nlen);
        if (exact_id < 0)
            goto oom;
        if (grow_i32(&c->exact_family, &c->exact_family_cap, (size_t)exact_id + 1, -1))
            goto oom;
        key = c->exact_family[exact_id];
        if (key < 0) {
            struct mp_buf fam;
            mp_buf_init(&fam, 0);
            if (mp_kernel_family(name, nlen, &fam)) {
                mp_buf_fini(&fam);
                goto oom;
            }
            key = mp_intern_add(c->keys, mp_buf_cstr(&fam), fam.len);
            mp_buf_fini(&fam);
            if (key < 0)
                goto oom;
            c->exact_family[exact_id] = key;
        }
    } else {
        key = mp_intern_add(c->keys, name, nlen);
        if (key < 0)
            goto oom;
    }
    struct rank_aggs *ra = &c->aggs;
    if (grow_i32(&ra->by_key, &ra->by_key_cap, (size_t)key + 1, -1))
        goto oom;
    int32_t idx = ra->by_key[key];
    if (idx < 0) {
        if (MP_GROW(ra->v, ra->cap, ra->n + 1, 256))
            goto oom;
        idx = (int32_t)ra->n++;
        struct agg *a = &ra->v[idx];
        memset(a, 0, sizeof(*a));
        a->key = key;
        a->min = INFINITY;
        a->max = -INFINITY;
        ra->by_key[key] = idx;
    }
    struct agg *a = &ra->v[idx];
    if (exact_id >= 0) {
        if (grow_u8(&c->var_seen, &c->var_seen_cap, (size_t)exact_id + 1))
            goto oom;
        if (!c->var_seen[exact_id]) {
            c->var_seen[exact_id] = 1;
            a->nvar++;
            if (a->nvar_listed < MAX_VARIANTS_LISTED)
                a->var[a->nvar_listed++] = exact_id;
        }
    }
    return a;
oom:
    *oom = true;
    return NULL;
}

static int on_bounds(const struct mp_trace_event *ev, void *user)
{
    struct ctx *c = user;
    if (!(ev->flags & MP_EV_TS))
        return 0;
    double dur = (ev->flags & MP_EV_DUR) ? ev->dur : 0.0;
    double te = ev->ts + dur;
    if (!c->have_bounds) {
        c->t_min = ev->ts;
        c->t_max = te;
        c->have_bounds = true;
    } else {
        if (ev->ts < c->t_min)
            c->t_min = ev->ts;
        if (te > c->t_max)
            c->t_max = te;
    }
    return 0;
}

static int oom_err(struct ctx *c)
{
    c->err = mp_diag_set(c->d, MP_ENOMEM, "out of memory in gap analysis");
    return MP_ENOMEM;
}

static int on_event(const struct mp_trace_event *ev, void *user)
{
    struct ctx *c = user;
    double dur = (ev->flags & MP_EV_DUR) ? ev->dur : 0.0;
    if (c->windowed) {
        if (!(ev->flags & MP_EV_TS))
            return 0;
        if (!(ev->ts + dur >= c->t_start && ev->ts <= c->t_end))
            return 0;
    }
    struct mp_strview cat = (ev->flags & MP_EV_CAT) ? ev->cat : (struct mp_strview){"", 0};
    int f = cat_flags(c, cat);
    if (f < 0)
        return oom_err(c);
    bool oom = false;
    if ((f & 2) && c->build_map && (ev->flags & MP_EV_EXTID) && (ev->flags & MP_EV_DIMS) &&
        dims_truthy(ev->input_dims)) {
        int32_t sid = shape_of(c, ev->input_dims);
        if (sid < -1)
            return oom_err(c);
        if (sid >= 0) {
            uint32_t *cell = extmap_cell(&c->map, ev->external_id, true, &oom);
            if (!cell)
                return oom_err(c);
            uint32_t val = (uint32_t)sid + 1;
            if ((*cell & LOOKED_UP) && (*cell & ~LOOKED_UP) != val)
                c->conflict = true; /* a kernel already used the old value */
            *cell = val | (*cell & LOOKED_UP);
        }
    }
    if (!(f & 1))
        return 0;
    if (c->cfg->min_duration_us > 0 && !(dur >= c->cfg->min_duration_us))
        return 0;
    struct agg *a = agg_for(c, ev, &oom);
    if (!a)
        return oom_err(c);
    a->total += dur;
    a->calls++;
    if (dur < a->min)
        a->min = dur;
    if (dur > a->max)
        a->max = dur;
    if (ev->flags & MP_EV_EXTID) {
        uint32_t *cell = extmap_cell(&c->map, ev->external_id, c->build_map, &oom);
        if (oom)
            return oom_err(c);
        uint32_t val = 0;
        if (cell) {
            if (c->build_map)
                *cell |= LOOKED_UP;
            val = *cell & ~LOOKED_UP;
        }
        if (val && a->nshapes < MAX_SHAPES) {
            int32_t sid = (int32_t)val - 1;
            bool seen = false;
            for (int i = 0; i < a->nshapes && !seen; i++)
                seen = a->shapes[i] == sid;
            if (!seen)
                a->shapes[a->nshapes++] = sid;
        }
    }
    return 0;
}

static void rank_aggs_reset(struct ctx *c)
{
    c->aggs.n = 0;
    if (c->aggs.by_key)
        memset(c->aggs.by_key, 0xff, c->aggs.by_key_cap * sizeof(int32_t));
    if (c->var_seen)
        memset(c->var_seen, 0, c->var_seen_cap);
}

/* ---- sorting (stable: ties keep first-appearance order, as Python) ---- */
struct sort_item {
    double total;
    size_t order;
    size_t idx;
};

static int cmp_sort(const void *a, const void *b)
{
    const struct sort_item *x = a, *y = b;
    /* key -total ascending == total descending */
    double kx = -x->total, ky = -y->total;
    if (kx < ky)
        return -1;
    if (kx > ky)
        return 1;
    return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static void join_shapes(struct ctx *c, const int32_t *ids, int n, struct mp_buf *b)
{
    mp_buf_reset(b);
    for (int i = 0; i < n; i++) {
        if (i)
            mp_buf_puts(b, "; ");
        mp_buf_puts(b, mp_intern_str(c->shapes, ids[i]));
    }
}

static void join_variants(struct ctx *c, const int32_t *ids, int n, struct mp_buf *b)
{
    mp_buf_reset(b);
    for (int i = 0; i < n; i++) {
        if (i)
            mp_buf_puts(b, " | ");
        mp_buf_puts(b, mp_intern_str(c->exact, ids[i]));
    }
}

static int fill_kernel(struct ctx *c, struct mp_gap_kernel *k, const struct agg *a)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    k->name = mp_strdup(mp_intern_str(c->keys, a->key));
    k->calls = a->calls;
    k->total_us = a->total;
    k->min_us = a->calls ? a->min : 0;
    k->max_us = a->calls ? a->max : 0;
    join_shapes(c, a->shapes, a->nshapes, &b);
    k->shapes = mp_strdup(mp_buf_cstr(&b));
    k->n_variants = a->nvar;
    join_variants(c, a->var, a->nvar_listed, &b);
    k->variants = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return (k->name && k->shapes && k->variants) ? 0 : MP_ENOMEM;
}

static void kernel_fini(struct mp_gap_kernel *k)
{
    free(k->name);
    free(k->shapes);
    free(k->variants);
}

/* Sorted copy of aggregates (all of them). */
static struct sort_item *sorted_items(const struct agg *v, size_t n)
{
    struct sort_item *it = malloc((n ? n : 1) * sizeof(*it));
    if (!it)
        return NULL;
    for (size_t i = 0; i < n; i++)
        it[i] = (struct sort_item){v[i].total, i, i};
    qsort(it, n, sizeof(*it), cmp_sort);
    return it;
}

struct rank_full {
    struct agg *v; /* sorted, all kernels */
    size_t n;
};

static int analyze_rank(struct ctx *c, const char *path, struct mp_gap_rank *out,
                        struct rank_full *full, struct mp_diag *d)
{
    const struct mp_gap_config *g = c->cfg;
    struct mp_trace_parse_opts po = {
        .user = c, .on_progress = g->on_progress, .progress_user = g->progress_user};
    struct mp_trace_parse_stats st = {0};
    int rc = 0;
    extmap_fini(&c->map);
    rank_aggs_reset(c);
    c->conflict = false;
    c->windowed = !(g->start_pct <= 0 && g->end_pct >= 100);
    c->have_bounds = false;
    c->err = 0;
    c->d = d;
    if (c->windowed) {
        po.on_event = on_bounds;
        rc = mp_trace_parse_file(path, &po, &st, d);
        if (rc)
            return rc;
        out->bytes += st.bytes;
        if (!c->have_bounds) {
            c->windowed = false; /* no timestamps: Magpie keeps every event */
        } else {
            double span = c->t_max - c->t_min;
            c->t_start = c->t_min + span * (g->start_pct / 100.0);
            c->t_end = c->t_min + span * (g->end_pct / 100.0);
        }
    }
    po.on_event = on_event;
    c->build_map = true;
    rc = mp_trace_parse_file(path, &po, &st, d);
    if (rc)
        return c->err ? c->err : rc;
    out->bytes += st.bytes;
    out->events = st.events;
    if (c->conflict) {
        /* a cpu_op redefined a shape a kernel had already used: redo the
         * aggregation with the complete map, as Magpie's map-first order */
        rank_aggs_reset(c);
        c->build_map = false;
        out->two_pass = true;
        rc = mp_trace_parse_file(path, &po, &st, d);
        if (rc)
            return c->err ? c->err : rc;
        out->bytes += st.bytes;
    }
    struct sort_item *it = sorted_items(c->aggs.v, c->aggs.n);
    full->v = malloc((c->aggs.n ? c->aggs.n : 1) * sizeof(struct agg));
    if (!it || !full->v) {
        free(it);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    double total = 0;
    for (size_t i = 0; i < c->aggs.n; i++) {
        full->v[i] = c->aggs.v[it[i].idx];
        total += full->v[i].total; /* Magpie sums in sorted order */
    }
    full->n = c->aggs.n;
    free(it);
    out->total_us = total;
    out->n_kernels_all = full->n;
    size_t keep = full->n < (size_t)g->top_k ? full->n : (size_t)g->top_k;
    out->kernels = calloc(keep ? keep : 1, sizeof(*out->kernels));
    if (!out->kernels)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    for (size_t i = 0; i < keep; i++) {
        out->n_kernels++;
        if (fill_kernel(c, &out->kernels[i], &full->v[i]))
            return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    return 0;
}

static int merge(struct ctx *c, struct rank_full *full, size_t nr, struct mp_gap_result *res,
                 struct mp_diag *d)
{
    struct rank_aggs m = {0};
    int rc = 0;
    uint8_t *seen = NULL; /* exact ids already counted for a family */
    size_t seen_cap = 0;
    for (size_t r = 0; r < nr; r++) {
        for (size_t i = 0; i < full[r].n; i++) {
            const struct agg *a = &full[r].v[i];
            if (grow_i32(&m.by_key, &m.by_key_cap, (size_t)a->key + 1, -1)) {
                rc = MP_ENOMEM;
                goto out;
            }
            int32_t idx = m.by_key[a->key];
            /* entries are -1 (none yet) or an index below m.n; the second
             * test only makes that visible to the analyzer */
            if (idx < 0 || (size_t)idx >= m.n) {
                if (MP_GROW(m.v, m.cap, m.n + 1, 256)) {
                    rc = MP_ENOMEM;
                    goto out;
                }
                idx = (int32_t)m.n++;
                memset(&m.v[idx], 0, sizeof(m.v[idx]));
                m.v[idx].key = a->key;
                m.v[idx].min = INFINITY;
                m.v[idx].max = -INFINITY;
                m.by_key[a->key] = idx;
            }
            struct agg *t = &m.v[idx];
            t->total += a->total;
            t->calls += a->calls;
            if (a->min < t->min)
                t->min = a->min;
            if (a->max > t->max)
                t->max = a->max;
            for (int s = 0; s < a->nshapes && t->nshapes < MAX_SHAPES; s++) {
                bool dup = false;
                for (int q = 0; q < t->nshapes && !dup; q++)
                    dup = t->shapes[q] == a->shapes[s];
                if (!dup)
                    t->shapes[t->nshapes++] = a->shapes[s];
            }
            for (int s = 0; s < a->nvar_listed; s++) {
                int32_t ex = a->var[s];
                if (grow_u8(&seen, &seen_cap, (size_t)ex + 1)) {
                    rc = MP_ENOMEM;
                    goto out;
                }
                if (!seen[ex]) {
                    seen[ex] = 1;
                    if (t->nvar_listed < MAX_VARIANTS_LISTED)
                        t->var[t->nvar_listed++] = ex;
                }
            }
            if (a->nvar > t->nvar)
                t->nvar = a->nvar; /* at least; exact below when listed fully */
        }
    }
    for (size_t i = 0; i < m.n; i++)
        if (m.v[i].nvar_listed > m.v[i].nvar)
            m.v[i].nvar = m.v[i].nvar_listed;
    struct sort_item *it = sorted_items(m.v, m.n);
    if (!it) {
        rc = MP_ENOMEM;
        goto out;
    }
    res->n_merged_all = m.n;
    size_t keep = m.n < (size_t)c->cfg->top_k ? m.n : (size_t)c->cfg->top_k;
    res->merged = calloc(keep ? keep : 1, sizeof(*res->merged));
    if (!res->merged) {
        free(it);
        rc = MP_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < keep && !rc; i++) {
        res->n_merged++;
        rc = fill_kernel(c, &res->merged[i], &m.v[it[i].idx]);
    }
    free(it);
out:
    free(m.v);
    free(m.by_key);
    free(seen);
    if (rc)
        return mp_diag_set(d, rc, "out of memory merging ranks");
    return 0;
}

void mp_gap_config_defaults(struct mp_gap_config *c)
{
    memset(c, 0, sizeof(*c));
    c->start_pct = 0.0;
    c->end_pct = 100.0;
    c->top_k = 20;
    c->categories[0] = "kernel";
    c->categories[1] = "gpu";
    c->n_categories = 2;
    c->ignore[0] = "gpu_user_annotation";
    c->ignore[1] = "user_annotation";
    c->n_ignore = 2;
    c->auto_clone_repos = true;
}

static int check_config(const struct mp_gap_config *g, struct mp_diag *d)
{
    if (!(g->start_pct >= 0 && g->start_pct <= 100) || !(g->end_pct >= 0 && g->end_pct <= 100)) {
        mp_diag_set_field(d, !(g->start_pct >= 0 && g->start_pct <= 100) ? "start-pct" : "end-pct");
        return mp_diag_set(d, MP_EINVAL, "window percentages must be within 0..100");
    }
    if (!(g->start_pct < g->end_pct)) {
        mp_diag_set_field(d, "start-pct");
        return mp_diag_set(d, MP_EINVAL, "window start (%g) must be below its end (%g)",
                           g->start_pct, g->end_pct);
    }
    if (g->top_k < 0) {
        mp_diag_set_field(d, "top-k");
        return mp_diag_set(d, MP_EINVAL, "top-k must not be negative");
    }
    return 0;
}

int mp_gap_analyze_files(const char *const *files, const int *ranks, size_t n,
                         const struct mp_gap_config *cfg, struct mp_gap_result **out,
                         struct mp_diag *d)
{
    *out = NULL;
    int rc = check_config(cfg, d);
    if (rc)
        return rc;
    uint64_t t0 = mp_time_ns();
    struct ctx c = {.cfg = cfg};
    struct mp_gap_result *res = calloc(1, sizeof(*res));
    struct rank_full *full = calloc(n ? n : 1, sizeof(*full));
    c.keys = mp_intern_new();
    c.exact = mp_intern_new();
    c.shapes = mp_intern_new();
    c.raw_dims = mp_intern_new();
    c.cats = mp_intern_new();
    mp_buf_init(&c.tmp, (size_t)64 << 20);
    if (!res || !full || !c.keys || !c.exact || !c.shapes || !c.raw_dims || !c.cats) {
        rc = MP_ENOMEM; /* not rc = mp_diag_set(): the analyzer cannot see it returns code */
        mp_diag_set(d, rc, "out of memory");
        goto out;
    }
    res->ranks = calloc(n ? n : 1, sizeof(*res->ranks));
    if (!res->ranks) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    size_t nfull = 0;
    for (size_t i = 0; i < n; i++) {
        struct mp_gap_rank *rk = &res->ranks[res->n_ranks];
        memset(rk, 0, sizeof(*rk));
        rk->rank = ranks[i];
        rk->trace_file = mp_strdup(files[i]);
        struct mp_diag rd;
        mp_diag_clear(&rd);
        rc = analyze_rank(&c, files[i], rk, &full[nfull], &rd);
        if (rc) {
            if (!cfg->skip_bad_ranks || rc == MP_ENOMEM) {
                if (d)
                    *d = rd;
                free(rk->trace_file);
                for (size_t k = 0; k < rk->n_kernels; k++)
                    kernel_fini(&rk->kernels[k]);
                free(rk->kernels);
                free(full[nfull].v);
                full[nfull].v = NULL;
                goto out;
            }
            char msg[1600];
            mp_diag_format(&rd, msg, sizeof(msg));
            for (size_t k = 0; k < rk->n_kernels; k++)
                kernel_fini(&rk->kernels[k]);
            free(rk->kernels);
            rk->kernels = NULL;
            rk->n_kernels = 0;
            free(full[nfull].v);
            full[nfull].v = NULL;
            full[nfull].n = 0;
            rk->error = mp_strdup(msg);
            mp_log(MP_LOG_WARN, "skipping rank %d: %s", rk->rank, msg);
            res->n_ranks++;
            continue;
        }
        res->bytes += rk->bytes;
        res->events += rk->events;
        res->total_us += rk->total_us;
        res->n_ranks++;
        nfull++;
    }
    rc = merge(&c, full, nfull, res, d);
out:
    for (size_t i = 0; i < n && full; i++)
        free(full[i].v);
    free(full);
    extmap_fini(&c.map);
    free(c.aggs.v);
    free(c.aggs.by_key);
    free(c.var_seen);
    free(c.exact_family);
    free(c.cat_flags);
    mp_intern_free(c.keys);
    mp_intern_free(c.exact);
    mp_intern_free(c.shapes);
    mp_intern_free(c.raw_dims);
    free(c.raw_shape);
    mp_intern_free(c.cats);
    mp_buf_fini(&c.tmp);
    if (rc) {
        mp_gap_result_free(res);
        return rc;
    }
    res->seconds = (double)(mp_time_ns() - t0) / 1e9;
    *out = res;
    return 0;
}

int mp_gap_analyze(const char *trace_dir, const struct mp_gap_config *cfg,
                   struct mp_gap_result **out, struct mp_diag *d)
{
    *out = NULL;
    int rc = check_config(cfg, d);
    if (rc)
        return rc;
    struct mp_trace_rank_list rl;
    rc = mp_trace_find_ranks(trace_dir, &rl, d);
    if (rc)
        return rc;
    const char **files = calloc(rl.n, sizeof(*files));
    int *ranks = calloc(rl.n, sizeof(*ranks));
    if (!files || !ranks) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < rl.n; i++) {
            files[i] = rl.files[i].path;
            ranks[i] = rl.files[i].rank;
        }
        rc = mp_gap_analyze_files(files, ranks, rl.n, cfg, out, d);
        if (!rc)
            (*out)->trace_dir = mp_strdup(rl.dir);
    }
    free(files);
    free(ranks);
    mp_trace_rank_list_fini(&rl);
    return rc;
}

void mp_gap_result_free(struct mp_gap_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_ranks; i++) {
        for (size_t k = 0; k < r->ranks[i].n_kernels; k++)
            kernel_fini(&r->ranks[i].kernels[k]);
        free(r->ranks[i].kernels);
        free(r->ranks[i].trace_file);
        free(r->ranks[i].error);
    }
    free(r->ranks);
    for (size_t k = 0; k < r->n_merged; k++)
        kernel_fini(&r->merged[k]);
    free(r->merged);
    free(r->trace_dir);
    free(r);
}
