/* A memo of perf model results. A report models the same op over and over
 * (every decoder layer issues the same shapes; the unified table and the
 * per-category sheets model most ops twice), so results are kept per input,
 * compactly (a result struct is mostly fixed-size arrays), and copied out. */
#include <stdlib.h>
#include <string.h>

#include <magpie/roofline.h>

#define MEMO_MAX_ENTRIES (1 << 16)

struct memo_param {
    const char *key; /* static */
    size_t off;      /* of the text in the entry's texts, or SIZE_MAX when NULL */
    bool none;
};

struct memo_entry {
    int status, status_bwd, n_params;
    const char *category, *sheet, *category_bwd; /* static */
    double gflops, bytes, gflops_bwd, bytes_bwd;
    bool has_bytes, has_bytes_bwd;
    size_t spec_off; /* SIZE_MAX: compute_spec is the static "" */
    size_t err_off;
    char *texts; /* param texts, compute spec and error, each NUL-terminated */
    size_t texts_len;
    struct memo_param *params;
};

struct mp_roofline_memo {
    struct mp_intern *keys; /* input key -> entry index */
    struct memo_entry *v;
    size_t n, cap;
    struct mp_buf key;
};

struct mp_roofline_memo *mp_roofline_memo_new(void)
{
    struct mp_roofline_memo *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->keys = mp_intern_new();
    if (!m->keys) {
        free(m);
        return NULL;
    }
    mp_buf_init(&m->key, 0);
    return m;
}

void mp_roofline_memo_free(struct mp_roofline_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].texts);
        free(m->v[i].params);
    }
    free(m->v);
    mp_intern_free(m->keys);
    mp_buf_fini(&m->key);
    free(m);
}

/* The addresses that identify op (see perf.h), as bytes. */
static int make_key(struct mp_buf *b, const struct mp_roofline_op *op)
{
    const void *ptrs[4] = {op->name, op->args, op->annotation, op->kv_cache_dtype};
    size_t lens[2] = {op->args_len, op->kernel_names ? op->n_kernels : 0};
    mp_buf_reset(b);
    int rc = mp_buf_append(b, (const char *)ptrs, sizeof(ptrs));
    rc = rc ? rc : mp_buf_append(b, (const char *)lens, sizeof(lens));
    if (!rc && lens[1])
        rc = mp_buf_append(b, (const char *)op->kernel_names, lens[1] * sizeof(char *));
    return rc;
}

static size_t put_text(struct mp_buf *b, const char *s)
{
    size_t off = b->len;
    return mp_buf_append(b, s, strlen(s) + 1) ? SIZE_MAX : off;
}

/* Stores r as entry e. */
static int entry_from(struct memo_entry *e, const struct mp_roofline_result *r)
{
    memset(e, 0, sizeof(*e));
    struct mp_buf t;
    mp_buf_init(&t, 0);
    e->params = malloc((r->n_params ? (size_t)r->n_params : 1) * sizeof(*e->params));
    int rc = e->params ? 0 : MP_ENOMEM;
    for (int i = 0; i < r->n_params && !rc; i++) {
        e->params[i].key = r->params[i].key;
        e->params[i].none = r->params[i].none;
        e->params[i].off = SIZE_MAX;
        if (r->params[i].text && (e->params[i].off = put_text(&t, r->params[i].text)) == SIZE_MAX)
            rc = MP_ENOMEM;
    }
    e->spec_off = SIZE_MAX;
    if (!rc && r->compute_spec && r->compute_spec[0] &&
        (e->spec_off = put_text(&t, r->compute_spec)) == SIZE_MAX)
        rc = MP_ENOMEM;
    if (!rc && (e->err_off = put_text(&t, r->error)) == SIZE_MAX)
        rc = MP_ENOMEM;
    if (rc) {
        free(e->params);
        mp_buf_fini(&t);
        return rc;
    }
    e->texts_len = t.len;
    e->texts = t.data; /* taken over from the buffer */
    e->status = r->status;
    e->status_bwd = r->status_bwd;
    e->n_params = r->n_params;
    e->category = r->category;
    e->sheet = r->sheet;
    e->category_bwd = r->category_bwd;
    e->gflops = r->gflops;
    e->bytes = r->bytes;
    e->gflops_bwd = r->gflops_bwd;
    e->bytes_bwd = r->bytes_bwd;
    e->has_bytes = r->has_bytes;
    e->has_bytes_bwd = r->has_bytes_bwd;
    return 0;
}

/* The result entry e stands for, into out (fini it). */
static int entry_to(const struct memo_entry *e, struct mp_roofline_result *out)
{
    memset(out, 0, sizeof(*out));
    char *buf = malloc(e->texts_len ? e->texts_len : 1);
    if (!buf) {
        out->category = "other";
        out->compute_spec = "";
        return MP_ENOMEM;
    }
    memcpy(buf, e->texts, e->texts_len);
    out->buf_ = buf;
    out->status = e->status;
    out->status_bwd = e->status_bwd;
    out->n_params = e->n_params;
    out->category = e->category;
    out->sheet = e->sheet;
    out->category_bwd = e->category_bwd;
    out->gflops = e->gflops;
    out->bytes = e->bytes;
    out->gflops_bwd = e->gflops_bwd;
    out->bytes_bwd = e->bytes_bwd;
    out->has_bytes = e->has_bytes;
    out->has_bytes_bwd = e->has_bytes_bwd;
    out->compute_spec = e->spec_off == SIZE_MAX ? "" : buf + e->spec_off;
    for (int i = 0; i < e->n_params; i++) {
        out->params[i].key = e->params[i].key;
        out->params[i].none = e->params[i].none;
        out->params[i].text = e->params[i].off == SIZE_MAX ? NULL : buf + e->params[i].off;
    }
    size_t el = strlen(buf + e->err_off);
    if (el >= sizeof(out->error))
        el = sizeof(out->error) - 1;
    memcpy(out->error, buf + e->err_off, el);
    out->error[el] = '\0';
    return 0;
}

int mp_roofline_model_memo(struct mp_roofline_memo *m, const struct mp_roofline_op *op,
                           struct mp_roofline_result *out)
{
    if (!m || !op || !op->name || (op->n_kernels && !op->kernel_names))
        return mp_roofline_model(op, out);
    if (make_key(&m->key, op))
        return mp_roofline_model(op, out);
    int32_t id = mp_intern_find(m->keys, m->key.data, m->key.len);
    if (id >= 0 && (size_t)id < m->n) {
        int rc = entry_to(&m->v[id], out);
        out->memo_slot = rc ? 0 : id + 1;
        return rc;
    }
    int rc = mp_roofline_model(op, out);
    if (rc || m->n >= MEMO_MAX_ENTRIES)
        return rc;
    /* a failed insert only loses the memo entry */
    if (MP_GROW(m->v, m->cap, m->n + 1, 256))
        return 0;
    if (entry_from(&m->v[m->n], out))
        return 0;
    if (mp_intern_add(m->keys, m->key.data, m->key.len) != (int32_t)m->n) {
        free(m->v[m->n].texts);
        free(m->v[m->n].params);
        return 0;
    }
    out->memo_slot = (int32_t)++m->n;
    return 0;
}
