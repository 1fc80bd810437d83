/* Per-category perf sheets of the TraceLens report (docs/tracelens-compat.md):
 * GEMM, UnaryElementwise, BinaryElementwise, Normalization (one table each)
 * and <family>_fwd for the others (SDPA_fwd, CONV_fwd, Reduce_fwd, ...).
 *
 * Every event whose name maps to a perf-model class of the family is a row,
 * at any depth (nested modelled ops are counted twice, as in TraceLens): its
 * kernels are the GPU events of its subtree, its kernel time their busy time,
 * its FLOPs/bytes from src/roofline. Rows are grouped by name and parameter text,
 * aggregated as pandas does, and sorted by total kernel time. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/roofline.h>
#include <magpie/tracelens.h>

#include "tracelens_int.h"

struct prow {
    int32_t uid;
    int32_t *k; /* subtree kernels by ts */
    size_t nk;
    double kt; /* busy time of k */
    double gflops, mb, fpb, tbs, tfs;
    bool has_mb;
    const char *spec; /* compute spec, interned in the sheet's texts */
    struct mp_roofline_roofline rl;
    size_t cell0; /* the row's params: cells[cell0 .. cell0 + ncells) of its sheet */
    uint8_t ncells;
    int32_t cells_of; /* the row whose cells these are a copy of (itself when made here) */
    int32_t group;
    int part; /* _bwd sheets: 0 = backward metrics, 1 = rows moved from _fwd */
    uint8_t recompute;
    uint8_t nested; /* an ancestor event is a row of the same table */
};

/* One param of a row: its column in pkeys and its text (interned: a
 * table's rows repeat a few shapes many times). */
struct pcell {
    int32_t text;
    uint8_t key;
    bool none; /* the value was None (an empty cell, apart in grouping) */
};

struct psheet {
    const char *family;
    struct prow *rows;
    size_t n, cap;
    const char *pkeys[MP_ROOFLINE_MAX_PARAMS * 2]; /* union of param keys, first appearance */
    int npkeys;
    struct pcell *cells; /* the rows' params, back to back */
    size_t ncells, capcells;
    struct mp_intern *texts; /* param texts and compute specs; borrowed, shared by the sheets */
    /* per perf-model memo slot (mp_roofline_result.memo_slot): the first row
     * of the sheet with that result, whose spec and cells the later ones
     * copy; -1 before it */
    int32_t *slot_row;
    size_t cap_slot_row;
    /* TraceLens's groupby frame for this sheet holds rows magpie keeps
     * elsewhere or not at all (the backward ops it moves out of _fwd after
     * grouping, the forward convolutions it drops from _bwd): whether the
     * frame's rows come in key order is then unknown */
    bool hidden_rows;
    /* set by render for the sheet's own frame (part 0) when it has no
     * hidden rows: whether its rows come in key order, and whether each
     * column pandas sums has a NaN anywhere in it (pandas then sums every
     * group with Kahan) */
    bool in_key_order, nan_kt, nan_tbs, nan_tfs, nan_pct;
};

/* Whether group g comes from the sheet's own groupby frame and magpie holds
 * that frame whole, so that its key order and NaN columns are known. */
static bool frame_known(const struct psheet *sh, const struct tl_group *g)
{
    return !sh->hidden_rows && g->part == 0;
}

/* The text of param column j of row r (the last one given), NULL when the
 * row lacks it; *none tells a None value. */
static const char *row_param(const struct psheet *sh, const struct prow *r, int j, bool *none)
{
    const char *txt = NULL;
    *none = false;
    for (size_t c = r->cell0; c < r->cell0 + r->ncells; c++) {
        if (sh->cells[c].key != j)
            continue;
        txt = mp_intern_str(sh->texts, sh->cells[c].text);
        *none = sh->cells[c].none;
    }
    return txt;
}

/* One sheet for forward and backward ops; the inference report keeps
 * Normalization apart (Normalization_fwd). */
static bool single_table(const char *family, bool inference)
{
    return strcmp(family, "GEMM") == 0 || strcmp(family, "UnaryElementwise") == 0 ||
           strcmp(family, "BinaryElementwise") == 0 ||
           (!inference && strcmp(family, "Normalization") == 0);
}

/* Room for n more cells. */
static int reserve_cells(struct psheet *sh, size_t n)
{
    return MP_GROW(sh->cells, sh->capcells, sh->ncells + n, 1024) ? MP_ENOMEM : 0;
}

/* Row r's compute spec and param cells from the model result: the param
 * columns are the union of the keys in first-appearance order. */
static int row_texts(struct psheet *sh, struct prow *r, const struct mp_roofline_result *pr)
{
    const char *spec = pr->compute_spec ? pr->compute_spec : "";
    int32_t spec_id = mp_intern_add(sh->texts, spec, strlen(spec));
    if (spec_id < 0)
        return MP_ENOMEM;
    r->spec = mp_intern_str(sh->texts, spec_id);
    int idx[MP_ROOFLINE_MAX_PARAMS];
    for (int i = 0; i < pr->n_params; i++) {
        int j = 0;
        while (j < sh->npkeys && strcmp(sh->pkeys[j], pr->params[i].key) != 0)
            j++;
        if (j == sh->npkeys) {
            if (sh->npkeys >= (int)(sizeof(sh->pkeys) / sizeof(sh->pkeys[0])))
                return MP_ENOMEM;
            sh->pkeys[sh->npkeys++] = pr->params[i].key; /* static strings */
        }
        idx[i] = j;
    }
    int rc = reserve_cells(sh, (size_t)pr->n_params);
    r->cell0 = sh->ncells;
    for (int i = 0; i < pr->n_params && !rc; i++) {
        const char *txt = pr->params[i].none ? "" : pr->params[i].text;
        int32_t id = mp_intern_add(sh->texts, txt, strlen(txt));
        if (id < 0)
            rc = MP_ENOMEM;
        else
            sh->cells[r->cell0 + r->ncells++] =
                (struct pcell){.text = id, .key = (uint8_t)idx[i], .none = pr->params[i].none};
    }
    return rc;
}

/* row_texts, copied from the sheet's first row with the same memo slot
 * (the same result: the same texts, keys already in pkeys). */
static int row_texts_memo(struct psheet *sh, struct prow *r, const struct mp_roofline_result *pr)
{
    int32_t slot = pr->memo_slot;
    if (slot <= 0)
        return row_texts(sh, r, pr);
    if (tl_gid_reserve(&sh->slot_row, &sh->cap_slot_row, slot))
        return MP_ENOMEM;
    int32_t first = sh->slot_row[slot];
    if (first < 0) {
        sh->slot_row[slot] = (int32_t)sh->n; /* the row's index once added */
        return row_texts(sh, r, pr);
    }
    const struct prow *f = &sh->rows[first];
    r->cells_of = first;
    if (reserve_cells(sh, f->ncells))
        return MP_ENOMEM;
    r->spec = f->spec;
    r->cell0 = sh->ncells;
    r->ncells = f->ncells;
    memcpy(sh->cells + r->cell0, sh->cells + f->cell0, f->ncells * sizeof(*sh->cells));
    return 0;
}

static int add_row(struct psheet *sh, const struct mp_trace_tree *t, const char *const *annot,
                   struct mp_roofline_memo *memo, int32_t uid, const struct mp_roofline_arch *arch,
                   bool bwd, int part)
{
    struct prow r = {.uid = uid,
                     .group = -1,
                     .part = part,
                     .recompute = t->recompute ? t->recompute[uid] : 0,
                     .cells_of = (int32_t)sh->n};
    struct mp_roofline_result pr;
    int rc = tl_model_op(t, annot, uid, bwd, memo, &r.k, &r.nk, &r.kt, &pr);
    if (rc)
        return rc;
    if (pr.status != MP_ROOFLINE_OK || (bwd && pr.status_bwd != MP_ROOFLINE_OK)) {
        /* NotImplementedError and other failures drop the row, as TraceLens */
        mp_roofline_result_fini(&pr);
        free(r.k);
        return 0;
    }
    bool has_bytes = bwd ? pr.has_bytes_bwd : pr.has_bytes;
    double bytes = bwd ? pr.bytes_bwd : pr.bytes;
    r.gflops = bwd ? pr.gflops_bwd : pr.gflops;
    r.tfs = r.kt > 0 ? (r.gflops / 1e3) / (r.kt / 1e6) : NAN;
    r.has_mb = has_bytes;
    if (has_bytes) {
        r.mb = bytes / (1024.0 * 1024.0);
        r.fpb = bytes > 0 ? (r.gflops * 1e9) / bytes : NAN;
        r.tbs = r.kt > 0 ? (bytes / 1e12) / (r.kt / 1e6) : NAN;
    } else {
        r.mb = r.fpb = r.tbs = NAN;
    }
    rc = row_texts_memo(sh, &r, &pr);
    if (!rc && arch)
        mp_roofline_roofline(arch, r.spec, r.gflops, has_bytes, bytes, r.kt, &r.rl);
    mp_roofline_result_fini(&pr);
    if (!rc && MP_GROW(sh->rows, sh->cap, sh->n + 1, 64))
        rc = MP_ENOMEM;
    if (rc) {
        free(r.k);
        return rc;
    }
    sh->ncells += r.ncells;
    sh->rows[sh->n++] = r;
    return 0;
}

static void sheet_fini(struct psheet *sh)
{
    for (size_t i = 0; i < sh->n; i++)
        free(sh->rows[i].k);
    free(sh->rows);
    free(sh->cells);
    free(sh->slot_row);
}

static int cmp_pgroup(const void *a, const void *b)
{
    const struct tl_group *x = a, *y = b;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    if (x->base_kt != y->base_kt) /* kl_overlap: TraceLens's _group_total_time, */
        return x->base_kt > y->base_kt ? -1 : 1;
    if (x->base_uid != y->base_uid) /* _group_min_uid; equal in the plain sheets */
        return x->base_uid < y->base_uid ? -1 : 1;
    if (x->kt_sum != y->kt_sum)
        return x->kt_sum > y->kt_sum ? -1 : 1;
    return x->first < y->first ? -1 : (x->first > y->first ? 1 : 0); /* UID_first */
}

/* pandas' "first" of a row field over the group */
static double first_num(const struct psheet *sh, const struct tl_group *g, size_t off)
{
    return tl_group_first(g, sh->rows, sizeof(*sh->rows), off);
}

/* The statistics of row field off over group g's non-missing values
 * (pandas skipna), summed as pandas sums them: in a known frame np.add.reduceat
 * only when the column has no NaN anywhere in the frame, else as
 * tl_group_stats_over decides from the group alone. */
static int num_stats(const struct psheet *sh, const struct tl_group *g, size_t off,
                     struct tl_stats *st, size_t *count)
{
    struct tl_group c = *g; /* a shallow copy: only the flag may differ */
    if (frame_known(sh, g)) {
        bool nan = off == offsetof(struct prow, kt)    ? sh->nan_kt
                   : off == offsetof(struct prow, tbs) ? sh->nan_tbs
                   : off == offsetof(struct prow, tfs) ? sh->nan_tfs
                                                       : true;
        c.ids_sorted = g->ids_sorted && !nan;
    }
    return tl_group_stats_over(&c, sh->rows, sizeof(*sh->rows), off, st, count);
}

static int args_first_cell(const struct mp_trace_tree *t, const struct psheet *sh,
                           const struct tl_group *g, const char *key, struct mp_csv *csv,
                           struct mp_buf *cell)
{
    mp_buf_reset(cell);
    for (size_t i = 0; i < g->n; i++) {
        int32_t u = sh->rows[g->m[i]].uid;
        struct mp_strview obj = {t->s->args[u], t->s->args_len[u]}, v;
        if (obj.p && mp_trace_json_find(obj, key, &v) == 0) {
            const char *p = v.p;
            if (v.n == 4 && memcmp(p, "null", 4) == 0)
                continue; /* None is skipped by "first" */
            int rc = tl_json_to_pylist_repr(cell, v.p, v.p + v.n);
            if (rc)
                return rc;
            break;
        }
    }
    return mp_csv_field(csv, mp_buf_cstr(cell), cell->len);
}

/* Records one group as a roofline-plot point of the report. */
static int add_point(struct mp_report *rep, const struct mp_trace_tree *t, const struct psheet *sh,
                     const struct tl_group *G, const char *sheet_name, double fpb,
                     const struct tl_stats *tfs, const struct tl_stats *tbs,
                     const struct tl_stats *pct, size_t npct)
{
    struct mp_report_point *np = mp_reallocarray(rep->points, rep->n_points + 1, sizeof(*np));
    if (!np)
        return MP_ENOMEM;
    rep->points = np;
    struct mp_report_point *p = &rep->points[rep->n_points];
    memset(p, 0, sizeof(*p));
    const struct prow *r0 = &sh->rows[G->first];
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = 0;
    for (int j = 0; j < sh->npkeys && !rc; j++) {
        bool none;
        const char *txt = row_param(sh, r0, j, &none);
        if (!txt || none)
            continue;
        rc = mp_buf_printf(&b, "%s%s=%s", b.len ? " " : "", sh->pkeys[j], txt);
    }
    p->name = mp_strdup(mp_trace_tree_name(t, r0->uid));
    p->params = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    if (rc || !p->name || !p->params) {
        free(p->name);
        free(p->params);
        return MP_ENOMEM;
    }
    snprintf(p->sheet, sizeof(p->sheet), "%s", sheet_name);
    snprintf(p->spec, sizeof(p->spec), "%s", r0->spec);
    p->has_ai = !isnan(fpb);
    p->flops_per_byte = fpb;
    p->tflops_s = tfs->mean;
    p->tb_s = tbs->mean;
    p->kernel_us = G->kt_sum;
    p->count = G->n;
    p->has_roofline = npct > 0;
    p->pct_roofline = pct->mean;
    rep->n_points++;
    return 0;
}

/* ---- one sheet: group, sort, emit ---- */

/* Row r's group key: part, name, param texts [, num_kernels], recompute;
 * with ov the overlapping kernel names follow and *bid is the id of the key
 * without them. */
static int prow_key(const struct mp_trace_tree *t, const struct psheet *sh, const struct prow *r,
                    bool by_nk, const struct tl_overlap *ov, struct mp_intern *bkeys,
                    struct mp_buf *key, int32_t *bid)
{
    mp_buf_reset(key);
    int rc = r->part >= 0 && r->part <= 9 ? mp_buf_putc(key, (char)('0' + r->part))
                                          : mp_buf_printf(key, "%d", r->part);
    rc = rc ? rc : mp_buf_putc(key, '\x1f');
    rc = rc ? rc : mp_buf_puts(key, mp_trace_tree_name(t, r->uid));
    for (int j = 0; j < sh->npkeys && !rc; j++) {
        rc = mp_buf_putc(key, '\x1f');
        /* astype(str) with pandas' string dtype keeps missing values
         * (absent column, None) missing: one group, an empty cell */
        bool none;
        const char *txt = row_param(sh, r, j, &none);
        txt = !txt || none ? "\x1e" : txt;
        rc = rc ? rc : mp_buf_puts(key, txt);
    }
    if (by_nk)
        rc = rc ? rc : mp_buf_printf(key, "\x1f%zu", r->nk);
    rc = rc ? rc : mp_buf_putc(key, r->recompute ? '1' : '0');
    *bid = -1;
    if (ov && !rc) {
        if ((*bid = mp_intern_add(bkeys, key->data, key->len)) < 0)
            return MP_ENOMEM;
        rc = mp_buf_putc(key, '\x1d');
        rc = rc ? rc : mp_buf_puts(key, tl_ovinfo_names(tl_overlap_launcher(ov, r->uid)));
    }
    return rc;
}

/* Adds row i to the group of key, a new group at the key's first row; *gi
 * the group. */
static int pgroup_add(struct tl_groups *gs, const struct prow *r, size_t i,
                      const struct mp_buf *key, int32_t bid, int32_t *gi)
{
    struct tl_group *G;
    bool created;
    int rc = tl_groups_add(gs, key, bid, i, r->kt, &G, &created);
    if (rc)
        return rc;
    *gi = (int32_t)(G - gs->g);
    if (created) {
        G->first = i;
        G->uid = r->uid;
        G->part = r->part;
        G->all_nested = true;
    }
    if (!r->nested)
        G->all_nested = false;
    return 0;
}

/* Row r's key parts without overlap info: what prow_key is made of (its
 * name is interned: the same address is the same text; rows whose cells
 * are copies of one row's have equal param texts), packed without padding
 * bytes into pb; returns their length. */
static size_t prow_parts(const struct mp_trace_tree *t, const struct prow *r, bool by_nk, char *pb)
{
    const char *name = mp_trace_tree_name(t, r->uid);
    size_t nk = by_nk ? r->nk : 0, o = 0;
    memcpy(pb + o, &name, sizeof(name));
    o += sizeof(name);
    memcpy(pb + o, &r->part, sizeof(r->part));
    o += sizeof(r->part);
    memcpy(pb + o, &r->cells_of, sizeof(r->cells_of));
    o += sizeof(r->cells_of);
    memcpy(pb + o, &nk, sizeof(nk));
    o += sizeof(nk);
    pb[o++] = (char)r->recompute;
    return o;
}

/* Groups the rows by name + param texts (first appearance); without
 * overlap info the text key is built only at the first row of its parts
 * (prow_parts). */
static int group_prows(const struct mp_trace_tree *t, const struct psheet *sh, bool by_nk,
                       bool fix_nested, const struct tl_overlap *ov, struct tl_groups *gs)
{
    if (tl_groups_init(gs, sh->n, ov != NULL))
        return MP_ENOMEM;
    struct mp_buf key;
    mp_buf_init(&key, 0);
    struct mp_intern *parts = ov ? NULL : mp_intern_new();
    int32_t *pgroup = NULL; /* parts id -> group, -1 before its first row */
    size_t cap_pgroup = 0;
    int rc = ov || parts ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < sh->n && !rc; i++) {
        const struct prow *r = &sh->rows[i];
        if (fix_nested && r->nested)
            continue;
        int32_t part_id = -1;
        if (parts) {
            char pb[64];
            part_id = mp_intern_add(parts, pb, prow_parts(t, r, by_nk, pb));
            if (part_id < 0 || tl_gid_reserve(&pgroup, &cap_pgroup, part_id))
                rc = MP_ENOMEM;
            if (!rc && pgroup[part_id] >= 0) {
                struct tl_group *G = &gs->g[pgroup[part_id]];
                rc = tl_groups_add_to(gs, (size_t)pgroup[part_id], i, r->kt);
                if (!r->nested)
                    G->all_nested = false;
                continue;
            }
        }
        int32_t bid = -1;
        /* any failure while building the key reads as out of memory */
        rc = rc ? rc : prow_key(t, sh, r, by_nk, ov, gs->bkeys, &key, &bid) ? MP_ENOMEM : 0;
        int32_t gi = -1;
        rc = rc ? rc : pgroup_add(gs, r, i, &key, bid, &gi);
        if (!rc && part_id >= 0)
            pgroup[part_id] = gi;
    }
    mp_intern_free(parts);
    free(pgroup);
    mp_buf_fini(&key);
    return rc;
}

/* Sorts the groups by the sort column Kernel Time (µs)_sum as pandas sums
 * it. A groupby(sort=True) whose rows already come in key order is summed
 * with np.add.reduceat (num_stats); where the frame is not known (hidden
 * rows, the rows moved from _fwd) one group is taken as in order and
 * several as not. */
static int sort_pgroups(const struct psheet *sh, struct tl_groups *gs, bool ov)
{
    int rc = 0;
    for (size_t q = 0; q < gs->ng && !rc; q++) {
        struct tl_stats st = {0};
        size_t cnt = 0;
        gs->g[q].ids_sorted = frame_known(sh, &gs->g[q]) ? sh->in_key_order : gs->ng == 1;
        rc = num_stats(sh, &gs->g[q], offsetof(struct prow, kt), &st, &cnt);
        gs->g[q].kt_sum = st.sum;
    }
    if (ov && !rc)
        rc = tl_groups_base_order(gs);
    if (!rc)
        qsort(gs->g, gs->ng, sizeof(*gs->g), cmp_pgroup);
    return rc;
}

/* The statistics blocks of a group (pemit.st). */
enum { PS_TBS, PS_TFS, PS_PCT, PS_KT, PS_N };

/* What the value functions of the column table see while one group's row is
 * printed. */
struct tl_emit {
    const struct mp_trace_tree *t;
    const struct psheet *sh;
    const struct tl_meta *meta;
    const struct tl_overlap *ov;
    const struct tl_group *G;
    const struct prow *r0; /* the group's first row */
    struct mp_csv *csv;
    struct mp_buf *cell;
    /* the group's figures, made by measure_pgroup */
    struct tl_stats st[PS_N];
    size_t cnt[PS_N];
    const struct prow *rf; /* first row with roofline figures */
};

/* The statistics a row of the sheet prints, over the group's rows. */
static int measure_pgroup(struct tl_emit *e, bool arch)
{
    const struct tl_group *G = e->G;
    memset(e->st, 0, sizeof(e->st));
    memset(e->cnt, 0, sizeof(e->cnt));
    e->rf = NULL;
    int rc = num_stats(e->sh, G, offsetof(struct prow, tbs), &e->st[PS_TBS], &e->cnt[PS_TBS]);
    rc = rc ? rc : num_stats(e->sh, G, offsetof(struct prow, tfs), &e->st[PS_TFS], &e->cnt[PS_TFS]);
    rc = rc ? rc : num_stats(e->sh, G, offsetof(struct prow, kt), &e->st[PS_KT], &e->cnt[PS_KT]);
    if (!arch || rc)
        return rc;
    /* Roofline columns: first non-missing; percent stats over rows */
    for (size_t i = 0; i < G->n && !e->rf; i++)
        if (e->sh->rows[G->m[i]].rl.valid)
            e->rf = &e->sh->rows[G->m[i]];
    double *v = malloc((G->n ? G->n : 1) * sizeof(double));
    if (!v)
        return MP_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < G->n; i++) {
        const struct prow *r = &e->sh->rows[G->m[i]];
        if (r->rl.valid && !isnan(r->rl.pct))
            v[k++] = r->rl.pct;
    }
    bool sorted = G->ids_sorted && (frame_known(e->sh, G) ? !e->sh->nan_pct : k == G->n);
    rc = tl_group_stats(v, k, sorted, &e->st[PS_PCT]);
    e->cnt[PS_PCT] = k;
    free(v);
    return rc;
}

/* PC_PARAM: one column per param key, head a format for the key */
enum { PC_OV = 1, PC_NK = 2, PC_RECOMP = 4, PC_ARCH = 8, PC_PARAM = 16 };

static int p_name(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, mp_trace_tree_name(e->t, e->r0->uid));
}

static int p_ov_names(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, tl_ovinfo_names(tl_overlap_launcher(e->ov, e->r0->uid)));
}

static int p_params(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    int rc = 0;
    for (int j = 0; j < e->sh->npkeys && !rc; j++) {
        bool none;
        const char *txt = row_param(e->sh, e->r0, j, &none);
        rc = mp_csv_str(e->csv, !txt || none ? "" : txt);
    }
    return rc;
}

static int p_nk(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%zu", e->r0->nk);
}

static int p_recompute(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, e->r0->recompute ? "True" : "False");
}

static int p_first(struct tl_emit *e, const struct tl_col *c)
{
    return tl_csv_float(e->csv, e->cell, first_num(e->sh, e->G, c->field), true);
}

/* A figure of a statistics block: the sum always, std when there is one,
 * the others over at least one value. */
static int p_stat(struct tl_emit *e, const struct tl_col *c)
{
    return tl_stat_cell(e->csv, e->cell, &e->st[c->stat], e->cnt[c->stat], c->field);
}

/* process_name, process_labels or thread_name (c->arg) of the first row */
static int p_meta(struct tl_emit *e, const struct tl_col *c)
{
    const struct mp_trace_store *s = e->t->s;
    int32_t uid = e->r0->uid;
    const char *pid = s->pid[uid] >= 0 ? mp_intern_str(s->strings, s->pid[uid]) : "";
    const char *tid = s->tid[uid] >= 0 ? mp_intern_str(s->strings, s->tid[uid]) : "";
    bool thread = strcmp(c->arg, "thread_name") == 0;
    return mp_csv_str(e->csv, tl_meta_get(e->meta, pid, thread ? tid : "0", c->arg));
}

static int p_spec(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv, e->r0->spec);
}

static int p_roofline_time(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return tl_csv_float(e->csv, e->cell, e->rf ? e->rf->rl.roofline_us : NAN, e->rf != NULL);
}

static int p_bound(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_str(e->csv,
                      e->rf ? (e->rf->rl.compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND") : "");
}

static const int32_t *prow_kernels(const void *rows, size_t r, size_t *nk)
{
    const struct prow *w = (const struct prow *)rows + r;
    *nk = w->nk;
    return w->k;
}

/* kernel details over members whose kernel list has the template's length;
 * the template is the first non-empty list of the group */
static int p_kernel_details(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    size_t tr = tl_group_template(e->G, e->sh->rows, prow_kernels);
    return tl_group_kernel_details(e->t, e->G, e->sh->rows, prow_kernels, tr, NULL, NULL, e->csv,
                                   e->cell);
}

/* The overlap column block (kl_overlap sheets). */
static int p_overlap(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    const struct tl_group *G = e->G;
    const struct tl_ovinfo **mi =
        malloc((G->n ? G->n : 1) * sizeof(*mi)); // NOLINT(bugprone-sizeof-expression)
    if (!mi)
        return MP_ENOMEM;
    for (size_t q = 0; q < G->n; q++)
        mi[q] = tl_overlap_launcher(e->ov, e->sh->rows[G->m[q]].uid);
    int rc = tl_overlap_cells(mi, G->n, true, e->csv, e->cell);
    free(mi);
    return rc;
}

/* The first non-None value of an args key (c->arg) over the group. */
static int p_arg(struct tl_emit *e, const struct tl_col *c)
{
    return args_first_cell(e->t, e->sh, e->G, c->arg, e->csv, e->cell);
}

static int p_count(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%zu", e->G->n);
}

static int p_uid(struct tl_emit *e, const struct tl_col *c)
{
    (void)c;
    return mp_csv_fmt(e->csv, "%d", e->r0->uid);
}

#define PSTAT(h, w, blk, f) TL_STAT(h, w, p_stat, blk, f)
#define PFIRST(h, f) TL_FIELD(h, p_first, struct prow, f)
#define PARG(h, f, a)                                                                              \
    {                                                                                              \
        .head = (h), .cell = (f), .arg = (a)                                                       \
    }

/* The columns of a per-category sheet and its kl_overlap twin. */
static const struct tl_col pcols[] = {
    TL_COL("name", 0, p_name),
    TL_COL("overlapping_kernel_names_first", PC_OV, p_ov_names),
    TL_COL("param: %s", PC_PARAM, p_params),
    TL_COL("num_kernels", PC_NK, p_nk),
    TL_COL("is_recompute", PC_RECOMP, p_recompute),
    PFIRST("GFLOPS_first", gflops),
    PFIRST("Data Moved (MB)_first", mb),
    PFIRST("FLOPS/Byte_first", fpb),
    PSTAT("TB/s_mean", 0, PS_TBS, mean),
    PSTAT("TB/s_median", 0, PS_TBS, median),
    PSTAT("TB/s_std", 0, PS_TBS, std),
    PSTAT("TB/s_min", 0, PS_TBS, min),
    PSTAT("TB/s_max", 0, PS_TBS, max),
    PSTAT("TFLOPS/s_mean", 0, PS_TFS, mean),
    PSTAT("TFLOPS/s_median", 0, PS_TFS, median),
    PSTAT("TFLOPS/s_std", 0, PS_TFS, std),
    PSTAT("TFLOPS/s_min", 0, PS_TFS, min),
    PSTAT("TFLOPS/s_max", 0, PS_TFS, max),
    PARG("process_name_first", p_meta, "process_name"),
    PARG("process_label_first", p_meta, "process_labels"),
    PARG("thread_name_first", p_meta, "thread_name"),
    TL_COL("Compute Spec", 0, p_spec),
    TL_COL("Roofline Time (µs)_first", PC_ARCH, p_roofline_time),
    TL_COL("Roofline Bound_first", PC_ARCH, p_bound),
    PSTAT("Pct Roofline_mean", PC_ARCH, PS_PCT, mean),
    PSTAT("Pct Roofline_median", PC_ARCH, PS_PCT, median),
    PSTAT("Pct Roofline_std", PC_ARCH, PS_PCT, std),
    PSTAT("Pct Roofline_min", PC_ARCH, PS_PCT, min),
    PSTAT("Pct Roofline_max", PC_ARCH, PS_PCT, max),
    TL_COL("kernel_details__summarize_kernel_stats", 0, p_kernel_details),
    TL_COL("trunc_kernel_details", 0, NULL),
    TL_COL("overlapping_kernels_details__summarize_kernel_stats", PC_OV, p_overlap),
    TL_OVERLAP_KEYS(PC_OV),
    PARG("Input Dims_first", p_arg, "Input Dims"),
    PARG("Input type_first", p_arg, "Input type"),
    PARG("Input Strides_first", p_arg, "Input Strides"),
    PARG("Concrete Inputs_first", p_arg, "Concrete Inputs"),
    PSTAT("Kernel Time (µs)_mean", 0, PS_KT, mean),
    PSTAT("Kernel Time (µs)_median", 0, PS_KT, median),
    PSTAT("Kernel Time (µs)_std", 0, PS_KT, std),
    PSTAT("Kernel Time (µs)_min", 0, PS_KT, min),
    PSTAT("Kernel Time (µs)_max", 0, PS_KT, max),
    PSTAT("Kernel Time (µs)_sum", 0, PS_KT, sum),
    TL_COL("name_count", 0, p_count),
    TL_COL("UID_first", 0, p_uid),
};

#define N_PCOLS (sizeof(pcols) / sizeof(pcols[0]))

static int write_pheader(struct mp_csv *csv, const struct psheet *sh, unsigned when)
{
    int rc = 0;
    for (size_t c = 0; c < N_PCOLS && !rc; c++) {
        if (!tl_col_on(&pcols[c], when))
            continue;
        if (pcols[c].when == PC_PARAM)
            for (int j = 0; j < sh->npkeys && !rc; j++)
                rc = mp_csv_fmt(csv, pcols[c].head, sh->pkeys[j]);
        else
            rc = mp_csv_str(csv, pcols[c].head);
    }
    return rc ? rc : mp_csv_end_row(csv);
}

/* One group's row, column by column. */
static int emit_pgroup(struct tl_emit *e, unsigned when)
{
    int rc = measure_pgroup(e, (when & PC_ARCH) != 0);
    rc = rc ? rc : tl_cols_cells(e, pcols, N_PCOLS, when);
    return rc ? rc : mp_csv_end_row(e->csv);
}

/* pandas' order of two rows' groupby keys: name, then the param columns in
 * the sheet's column order (texts by code point, a missing value after
 * every text: dropna=False), num_kernels, with ov the overlapping kernel
 * names as str() gives them (None, here "", before every list's "['"),
 * is_recompute. */
static int cmp_pkey(const struct mp_trace_tree *t, const struct psheet *sh, const struct prow *a,
                    const struct prow *b, bool by_nk, const struct tl_overlap *ov)
{
    const char *na = mp_trace_tree_name(t, a->uid), *nb = mp_trace_tree_name(t, b->uid);
    int c = na == nb ? 0 : strcmp(na, nb);
    for (int j = 0; j < sh->npkeys && !c; j++) {
        bool none_a, none_b;
        const char *ta = row_param(sh, a, j, &none_a), *tb = row_param(sh, b, j, &none_b);
        bool miss_a = !ta || none_a, miss_b = !tb || none_b;
        if (miss_a || miss_b)
            c = (int)miss_a - (int)miss_b;
        else if (ta != tb)
            c = strcmp(ta, tb);
    }
    if (!c && by_nk && a->nk != b->nk)
        c = a->nk < b->nk ? -1 : 1;
    if (!c && ov)
        c = strcmp(tl_ovinfo_names(tl_overlap_launcher(ov, a->uid)),
                   tl_ovinfo_names(tl_overlap_launcher(ov, b->uid)));
    return c ? c : (int)a->recompute - (int)b->recompute;
}

/* What pandas' groupby(sort=True) of the sheet's own frame (part 0, nested
 * rows left out when fix_nested) will find: whether its rows' group ids
 * never decrease, and which summed columns hold a NaN. Only for a frame
 * magpie holds whole (no hidden rows). */
static void frame_order(const struct mp_trace_tree *t, struct psheet *sh, bool by_nk,
                        bool fix_nested, const struct tl_overlap *ov)
{
    sh->in_key_order = true;
    sh->nan_kt = sh->nan_tbs = sh->nan_tfs = sh->nan_pct = false;
    if (sh->hidden_rows)
        return;
    const struct prow *prev = NULL;
    for (size_t i = 0; i < sh->n; i++) {
        const struct prow *r = &sh->rows[i];
        if (r->part != 0 || (fix_nested && r->nested))
            continue;
        if (prev && sh->in_key_order && cmp_pkey(t, sh, prev, r, by_nk, ov) > 0)
            sh->in_key_order = false;
        prev = r;
        sh->nan_kt |= isnan(r->kt);
        sh->nan_tbs |= isnan(r->tbs);
        sh->nan_tfs |= isnan(r->tfs);
        /* Pct Roofline: a row without roofline figures is NaN there too */
        sh->nan_pct |= !r->rl.valid || isnan(r->rl.pct);
    }
}

/* One per-category sheet; with ov its kl_overlap twin: the groups also split
 * by the overlapping kernel names (ordered after the total of their name and
 * params), three more column blocks, no roofline-plot points. */
static int render(struct mp_report *rep, const char *sheet_name, const struct mp_trace_tree *t,
                  struct psheet *sh, const struct tl_meta *meta,
                  const struct mp_roofline_arch *arch, bool by_nk, bool fix_nested,
                  const struct tl_overlap *ov, struct mp_buf *b)
{
    unsigned when = PC_PARAM | (ov ? PC_OV : 0) | (by_nk ? PC_NK : 0) |
                    (t->recompute ? PC_RECOMP : 0) | (arch ? PC_ARCH : 0);
    struct tl_groups gs = {0};
    frame_order(t, sh, by_nk, fix_nested, ov);
    int rc = group_prows(t, sh, by_nk, fix_nested, ov, &gs);
    rc = rc ? rc : sort_pgroups(sh, &gs, ov != NULL);
    struct mp_csv csv;
    struct mp_buf cell;
    mp_buf_init(&cell, 0);
    mp_csv_init(&csv, b, "\n");
    rc = rc ? rc : write_pheader(&csv, sh, when);
    struct tl_emit e = {.t = t, .sh = sh, .meta = meta, .ov = ov, .csv = &csv, .cell = &cell};
    for (size_t gi = 0; gi < gs.ng && !rc; gi++) {
        e.G = &gs.g[gi];
        e.r0 = &sh->rows[e.G->first];
        rc = emit_pgroup(&e, when);
        /* the summary and the roofline plot count each kernel once: shapes
         * whose ops all sit inside another op of the table are left out */
        if (!rc && !e.G->all_nested && !ov)
            rc = add_point(rep, t, sh, e.G, sheet_name,
                           first_num(sh, e.G, offsetof(struct prow, fpb)), &e.st[PS_TFS],
                           &e.st[PS_TBS], &e.st[PS_PCT], e.cnt[PS_PCT]);
    }
    tl_groups_fini(&gs);
    mp_buf_fini(&cell);
    return rc;
}

static bool name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

/* TraceLens's fix-ups of the fwd/bwd split: ops whose own formulas are the
 * backward ones move from <sheet>_fwd to the end of <sheet>_bwd; forward
 * convolutions never appear in <sheet>_bwd. */
static const char *const moved_to_bwd[] = {"flash_attn::_flash_attn_varlen_backward",
                                           "aten::convolution_backward", "ConvBias_Backward",
                                           "ConvBiasReLU_Backward", NULL};
static const char *const never_bwd[] = {"aten::convolution",
                                        "aten::miopen_convolution",
                                        "aten::cudnn_convolution",
                                        "ConvBias_",
                                        "ConvBiasReLU_",
                                        "vllm::unified_attention_with_output",
                                        NULL};

/* Flags the rows of a table whose event has an ancestor that is itself a
 * row of the table (aten::linear over aten::addmm, aten::batch_norm over
 * aten::native_batch_norm): TraceLens lists both with the same kernels.
 * mark is all-zero on entry and on return. */
static int mark_nested(const struct mp_trace_tree *t, struct psheet *sh, uint8_t *mark)
{
    for (size_t i = 0; i < sh->n; i++)
        mark[sh->rows[i].uid] = 1;
    for (size_t i = 0; i < sh->n; i++) {
        struct prow *r = &sh->rows[i];
        r->nested = 0;
        for (int32_t p = t->parent[r->uid]; p >= 0 && !r->nested; p = t->parent[p])
            r->nested = mark[p];
    }
    for (size_t i = 0; i < sh->n; i++)
        mark[sh->rows[i].uid] = 0;
    return 0;
}

enum { MAX_FAMILIES = 32 };

int tl_sheets_perf(struct mp_report *r, const struct mp_trace_tree *t,
                   const struct mp_roofline_arch *arch, const struct mp_report_opts *o,
                   const char *const *annot, struct tl_overlap *ov, struct mp_roofline_memo *memo,
                   struct mp_buf *(*new_sheet)(struct mp_report *, const char *))
{
    bool inf = o->inference;
    const struct mp_trace_store *s = t->s;
    /* sheet family per distinct name, once */
    int32_t nn = mp_intern_count(s->strings);
    const char **fam = calloc((size_t)nn + 1, sizeof(char *));
    uint8_t *done = calloc((size_t)nn + 1, 1);
    struct psheet sheets[MAX_FAMILIES] = {0}, bsheets[MAX_FAMILIES] = {0};
    int32_t *moved = NULL; /* (family, uid) pairs, added to _bwd after its own rows */
    size_t nmoved = 0, cap_moved = 0;
    int nsheets = 0;
    struct mp_intern *texts = mp_intern_new();
    int rc = fam && done && texts ? 0 : MP_ENOMEM;
    for (size_t i = 0; i < s->n && !rc; i++) {
        int32_t id = s->name[i];
        if (id < 0 || t->kind[i] == MP_K_AC2G || mp_kind_is_gpu(t->kind[i]))
            continue;
        if (!done[id]) {
            fam[id] = mp_roofline_sheet(mp_intern_str(s->strings, id));
            done[id] = 1;
        }
        if (!fam[id])
            continue;
        int k = 0;
        while (k < nsheets && strcmp(sheets[k].family, fam[id]) != 0)
            k++;
        if (k == nsheets) {
            if (nsheets == MAX_FAMILIES)
                continue;
            sheets[nsheets].family = bsheets[nsheets].family = fam[id];
            sheets[nsheets].texts = bsheets[nsheets].texts = texts;
            nsheets++;
        }
        const char *name = mp_intern_str(s->strings, id);
        if (single_table(fam[id], inf)) {
            rc = add_row(&sheets[k], t, annot, memo, (int32_t)i, arch, false, 0);
            continue;
        }
        if (inf) {
            /* forward sheets only; the backward ops TraceLens files under
             * the forward family are dropped (after its groupby) */
            if (!name_in(name, moved_to_bwd))
                rc = add_row(&sheets[k], t, annot, memo, (int32_t)i, arch, false, 0);
            else
                sheets[k].hidden_rows = true;
            continue;
        }
        if (name_in(name, moved_to_bwd)) {
            sheets[k].hidden_rows = true; /* grouped with _fwd's rows, then moved */
            if (MP_GROW(moved, cap_moved, nmoved + 2, 64)) {
                rc = MP_ENOMEM;
                break;
            }
            moved[nmoved++] = k;
            moved[nmoved++] = (int32_t)i;
        } else {
            rc = add_row(&sheets[k], t, annot, memo, (int32_t)i, arch, false, 0);
        }
        /* backward metrics only for ops with their own linked backward node */
        if (!rc && t->bwd_of[i] >= 0) {
            if (!name_in(name, never_bwd))
                rc = add_row(&bsheets[k], t, annot, memo, (int32_t)i, arch, true, 0);
            else if (strcmp(name, "vllm::unified_attention_with_output") != 0)
                bsheets[k].hidden_rows = true; /* in _bwd's groupby, dropped after it */
        }
    }
    for (size_t m = 0; m + 1 < nmoved && !rc; m += 2)
        rc = add_row(&bsheets[moved[m]], t, annot, memo, moved[m + 1], arch, false, 1);
    struct tl_meta meta;
    memset(&meta, 0, sizeof(meta));
    if (!rc)
        rc = tl_meta_build(s, &meta);
    uint8_t *mark = rc ? NULL : calloc(s->n ? s->n : 1, 1);
    if (!rc && !mark)
        rc = MP_ENOMEM;
    for (int k = 0; k < nsheets && !rc; k++) {
        for (int b = 0; b < 2 && !rc; b++) {
            struct psheet *sh = b ? &bsheets[k] : &sheets[k];
            if (sh->n == 0)
                continue;
            char name[80];
            if (single_table(sh->family, inf))
                snprintf(name, sizeof(name), "%s", sh->family);
            else
                snprintf(name, sizeof(name), "%s_%s", sh->family, b ? "bwd" : "fwd");
            rc = mark_nested(t, sh, mark);
            struct mp_buf *buf = rc ? NULL : new_sheet(r, name);
            rc = rc ? rc
                    : (buf ? render(r, name, t, sh, &meta, arch, o->group_by_num_kernels,
                                    o->fix_nested_ops, NULL, buf)
                           : MP_ENOMEM);
        }
        /* --include_overlap_info: <sheet>_kl_overlap after the plain tables */
        for (int b = 0; b < 2 && !rc && ov; b++) {
            struct psheet *sh = b ? &bsheets[k] : &sheets[k];
            if (sh->n == 0)
                continue;
            char name[96];
            if (single_table(sh->family, inf))
                snprintf(name, sizeof(name), "%s_kl_overlap", sh->family);
            else
                snprintf(name, sizeof(name), "%s_%s_kl_overlap", sh->family, b ? "bwd" : "fwd");
            struct mp_buf *buf = new_sheet(r, name);
            rc = buf ? render(r, name, t, sh, &meta, arch, o->group_by_num_kernels,
                              o->fix_nested_ops, ov, buf)
                     : MP_ENOMEM;
        }
    }
    for (int k = 0; k < nsheets; k++) {
        sheet_fini(&sheets[k]);
        sheet_fini(&bsheets[k]);
    }
    free(moved);
    free(mark);
    tl_meta_fini(&meta);
    free(fam);
    free(done);
    mp_intern_free(texts);
    return rc;
}
