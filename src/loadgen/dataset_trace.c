/* Timed traces: the mooncake / AIPerf mooncake_trace JSONL and the BurstGPT
 * CSV (docs/workloads.md).
 *
 * A trace gives, per request, when it came (kept with --fixed-schedule),
 * how long its prompt and answer were and, for mooncake, which blocks of
 * its prompt it shares with others ("hash_ids": equal ids are equal blocks
 * of block_size tokens). The prompts are built from that: block h is the
 * same block_size tokens wherever it appears, so requests that start with
 * the same ids share a token-identical prefix, and the rest of a prompt
 * (past its blocks) is its own. Session ids order the turns of a session:
 * a turn is sent after the previous one ended (plus its "delay").
 *
 * Not read: the text of the original prompts (the traces have none) and
 * BurstGPT's other columns (Total tokens, Log Type).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_TOKENS (1 << 24)
#define MAX_RECORDS ((size_t)10 << 20)
#define MAX_HASH_IDS 65536

void mp_loadgen_trace_opts_default(struct mp_loadgen_trace_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->block_size = 512; /* mooncake's and AIPerf's block */
    o->slowdown = 1.0;
    o->model = "GPT-4"; /* what vLLM's burstgpt keeps */
    o->vocab_first = 1000;
    o->vocab_size = 31000;
}

/* one record of a trace */
struct trec {
    double ts; /* s */
    int32_t in, out;
    size_t hash_off, n_hash; /* into the hash pool */
    char *session;           /* NULL: none */
    double delay_s;
    size_t pos; /* file order */
};

struct trace {
    struct trec *r;
    size_t n, cap;
    int64_t *hash;
    size_t n_hash, cap_hash;
    bool have_ts, no_ts;
};

static void trace_fini(struct trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->r[i].session);
    free(t->r);
    free(t->hash);
}

static struct trec *trace_add(struct trace *t)
{
    if (t->n >= MAX_RECORDS || MP_GROW(t->r, t->cap, t->n + 1, 256))
        return NULL;
    struct trec *x = &t->r[t->n++];
    memset(x, 0, sizeof(*x));
    x->pos = t->n - 1;
    return x;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Token k of block h (own = false) or of the part of record pos past its
 * blocks (own = true). */
static int32_t trace_token(const struct mp_loadgen_trace_opts *o, bool own, uint64_t h, uint64_t k)
{
    uint64_t z = mix64(o->seed ^ mix64((own ? 0x5bd1e995ull : 0) ^ mix64(h) ^ (k << 1)));
    if (o->text)
        return (int32_t)(z % loadgen_n_words());
    return o->vocab_first + (int32_t)(z % (uint64_t)o->vocab_size);
}

static int cmp_time(const void *a, const void *b)
{
    const struct trec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

struct skey {
    const char *s;
    size_t i;
};

static int cmp_skey(const void *a, const void *b)
{
    const struct skey *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

/* Links the turns of each session (records already in time order). */
static int link_sessions(struct mp_loadgen_dataset *ds, const struct trace *t, size_t n)
{
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        ns += t->r[i].session != NULL;
    if (!ns)
        return 0;
    struct skey *k = malloc(ns * sizeof(*k));
    ds->prev = loadgen_ds_array(ds, sizeof(int32_t));
    ds->think_s = loadgen_ds_array(ds, sizeof(double));
    ds->session = loadgen_ds_array(ds, sizeof(int32_t));
    if (!k || !ds->prev || !ds->think_s || !ds->session) {
        free(k);
        return MP_ENOMEM;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        ds->prev[i] = -1;
        ds->session[i] = -1;
        if (t->r[i].session)
            k[m++] = (struct skey){t->r[i].session, i};
    }
    qsort(k, m, sizeof(*k), cmp_skey);
    int32_t sess = -1;
    for (size_t j = 0; j < m; j++) {
        bool cont = j && !strcmp(k[j - 1].s, k[j].s);
        if (!cont)
            sess++;
        ds->session[k[j].i] = sess;
        ds->prev[k[j].i] = cont ? (int32_t)k[j - 1].i : -1;
        ds->think_s[k[j].i] = t->r[k[j].i].delay_s;
    }
    free(k);
    return 0;
}

/* The dataset of the trace's records: time order, the first max_prompts,
 * prompts from the blocks, offsets from the first record. */
static int trace_dataset(const struct mp_loadgen_trace_opts *o, struct trace *t, const char *name,
                         struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    if (t->n == 0)
        return mp_diag_set(d, MP_EINVAL, "%s: no usable records", o->path);
    qsort(t->r, t->n, sizeof(*t->r), cmp_time);
    size_t n = o->max_prompts && o->max_prompts < t->n ? o->max_prompts : t->n;
    struct mp_loadgen_dataset *ds = NULL;
    int rc = loadgen_ds_new(n, name, &ds, d);
    if (rc || !ds)
        return rc ? rc : MP_ENOMEM;
    int32_t *tok = NULL;
    size_t tok_cap = 0;
    ds->arrival_s = t->have_ts ? loadgen_ds_array(ds, sizeof(double)) : NULL;
    if ((t->have_ts && !ds->arrival_s) || link_sessions(ds, t, n)) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct trec *x = &t->r[i];
        if (MP_GROW(tok, tok_cap, (size_t)x->in + 1, 1024)) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
            goto out;
        }
        size_t bs = (size_t)o->block_size;
        for (size_t k = 0; k < (size_t)x->in; k++) {
            size_t b = k / bs;
            tok[k] = b < x->n_hash
                         ? trace_token(o, false, (uint64_t)t->hash[x->hash_off + b], k % bs)
                         : trace_token(o, true, x->pos, k);
        }
        int32_t outl = o->output_len > 0 ? o->output_len : x->out;
        if (loadgen_prompt_set(ds, &ds->prompts[i], tok, (size_t)x->in, o->text, outl)) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
            goto out;
        }
        if (ds->arrival_s)
            ds->arrival_s[i] = (x->ts - t->r[0].ts) * o->slowdown;
    }
    ds->exact_lengths = !o->text;
    *out = ds;
    ds = NULL;
out:
    free(tok);
    mp_loadgen_dataset_free(ds);
    return rc;
}

static int check_opts(const struct mp_loadgen_trace_opts *o, struct mp_diag *d)
{
    if (o->block_size < 1 || o->block_size > MAX_TOKENS)
        return mp_diag_set(d, MP_EINVAL, "block size must be 1..%d, not %d", MAX_TOKENS,
                           o->block_size);
    if (!(o->slowdown > 0) || isinf(o->slowdown))
        return mp_diag_set(d, MP_EINVAL, "slowdown factor must be a positive number, not %g",
                           o->slowdown);
    if (!o->text && (o->vocab_size < 1 || o->vocab_first < 0))
        return mp_diag_set(d, MP_EINVAL, "bad token id range");
    return 0;
}

/* a positive (or, min 0, non-negative) integer member; false with *bad set */
static bool int_member(json_t *doc, const char *key, long lo, int32_t *v, bool required,
                       const char **bad)
{
    json_t *j = json_object_get(doc, key);
    if (!j) {
        if (required)
            *bad = "missing";
        return !required;
    }
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > MAX_TOKENS) {
        *bad = lo ? "expected a positive integer (at most 16777216)"
                  : "expected a non-negative integer";
        return false;
    }
    *v = (int32_t)json_integer_value(j);
    return true;
}

/* One mooncake line into t; *field and *bad say what is wrong with it. */
static int mooncake_line(const struct mp_loadgen_trace_opts *o, json_t *doc, struct trace *t,
                         const char **field, const char **bad)
{
    struct trec *x = trace_add(t);
    if (!x)
        return MP_ENOMEM;
    json_t *ts = json_object_get(doc, "timestamp");
    if (ts &&
        (!json_is_number(ts) || !(json_number_value(ts) >= 0) || isinf(json_number_value(ts)))) {
        *field = "timestamp";
        *bad = "expected a non-negative number of ms";
        return 0;
    }
    if (ts ? t->no_ts : t->have_ts) {
        *field = "timestamp";
        *bad = ts ? "some lines have a timestamp and others not"
                  : "missing (the other lines have one)";
        return 0;
    }
    t->have_ts |= ts != NULL;
    t->no_ts |= ts == NULL;
    x->ts = ts ? json_number_value(ts) / 1000.0 : 0;
    if (!int_member(doc, "input_length", 1, &x->in, true, bad)) {
        *field = "input_length";
        return 0;
    }
    if (!int_member(doc, "output_length", 1, &x->out, o->output_len <= 0, bad)) {
        *field = "output_length";
        return 0;
    }
    json_t *h = json_object_get(doc, "hash_ids"), *v;
    size_t k;
    if (h && (!json_is_array(h) || json_array_size(h) > MAX_HASH_IDS)) {
        *field = "hash_ids";
        *bad = "expected a list of at most 65536 integers";
        return 0;
    }
    x->hash_off = t->n_hash;
    json_array_foreach(h, k, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            *field = "hash_ids";
            *bad = "hash ids must be non-negative integers";
            return 0;
        }
        if (MP_GROW(t->hash, t->cap_hash, t->n_hash + 1, 1024))
            return MP_ENOMEM;
        t->hash[t->n_hash++] = json_integer_value(v);
    }
    x->n_hash = t->n_hash - x->hash_off;
    json_t *s = json_object_get(doc, "session_id");
    if (s) {
        char buf[64];
        if (json_is_string(s) && json_string_length(s) > 0 && json_string_length(s) < 1024)
            x->session = strdup(json_string_value(s));
        else if (json_is_integer(s) &&
                 snprintf(buf, sizeof(buf), "#%lld", (long long)json_integer_value(s)) > 0)
            x->session = strdup(buf);
        else {
            *field = "session_id";
            *bad = "expected a non-empty string or an integer";
            return 0;
        }
        if (!x->session)
            return MP_ENOMEM;
    }
    json_t *dl = json_object_get(doc, "delay");
    if (dl &&
        (!json_is_number(dl) || !(json_number_value(dl) >= 0) || json_number_value(dl) > 86400e3)) {
        *field = "delay";
        *bad = "expected a non-negative number of ms";
        return 0;
    }
    x->delay_s = dl ? json_number_value(dl) / 1000.0 : 0;
    return 0;
}

/* One line [p, le) of the file (number line, base the file's start) into t. */
typedef int (*trace_line_fn)(const struct mp_loadgen_trace_opts *o, struct trace *t,
                             const char *base, const char *p, const char *le, long line, void *ctx,
                             struct mp_diag *d);

/* Reads o->path line by line through fn, then makes the dataset. */
static int trace_read(const struct mp_loadgen_trace_opts *o, const char *name, trace_line_fn fn,
                      void *ctx, struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    int rc = check_opts(o, d);
    if (rc)
        return rc;
    struct mp_buf file;
    struct trace t;
    memset(&t, 0, sizeof(t));
    if ((rc = loadgen_read_file(o->path, &file, d)))
        return rc;
    const char *base = file.data ? file.data : "", *p = base, *end = base + file.len;
    long line = 0;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        rc = fn(o, &t, base, p, le, ++line, ctx, d);
        p = nl ? nl + 1 : end;
    }
    if (!rc)
        rc = trace_dataset(o, &t, name, out, d);
    trace_fini(&t);
    mp_buf_fini(&file);
    return rc;
}

static int mooncake_text_line(const struct mp_loadgen_trace_opts *o, struct trace *t,
                              const char *base, const char *p, const char *le, long line, void *ctx,
                              struct mp_diag *d)
{
    (void)ctx;
    const char *q = p;
    while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
    if (q == le)
        return 0;
    json_error_t je;
    json_t *doc = json_loadb(p, (size_t)(le - p), 0, &je);
    const char *field = NULL, *bad = NULL;
    int rc = 0;
    if (!json_is_object(doc)) {
        rc = mp_diag_set(d, MP_EPARSE, "%s", doc ? "expected a JSON object" : je.text);
        mp_diag_set_file(d, o->path);
        mp_diag_set_pos(d, p - base + (doc ? 0 : je.position), line, doc ? 1 : je.column);
    } else if ((rc = mooncake_line(o, doc, t, &field, &bad))) {
        mp_diag_set(d, rc, "out of memory reading %s", o->path);
    } else if (bad) {
        rc = mp_diag_set(d, MP_EINVAL, "%s", bad);
        mp_diag_set_file(d, o->path);
        mp_diag_set_pos(d, p - base, line, 1);
        mp_diag_set_field(d, field);
    }
    json_decref(doc);
    return rc;
}

int mp_loadgen_dataset_mooncake(const struct mp_loadgen_trace_opts *o,
                                struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    return trace_read(o, "mooncake", mooncake_text_line, NULL, out, d);
}

/* ---- BurstGPT CSV ---- */

enum { BG_TS, BG_MODEL, BG_REQ, BG_RESP, BG_NCOL };

static const char *const BG_COLS[BG_NCOL] = {"Timestamp", "Model", "Request tokens",
                                             "Response tokens"};

/* The field of line [p, le) that starts after `col` commas: [*s, *e). */
static void csv_field(const char *p, const char *le, int col, const char **s, const char **e)
{
    for (int c = 0; c < col && p < le; p++)
        if (*p == ',')
            c++;
    const char *q = p;
    while (q < le && *q != ',' && *q != '\r')
        q++;
    while (p < q && *p == ' ')
        p++;
    if (q - p >= 2 && *p == '"' && q[-1] == '"') {
        p++;
        q--;
    }
    *s = p;
    *e = q;
}

static int csv_header(const char *p, const char *le, int *col)
{
    for (int k = 0; k < BG_NCOL; k++)
        col[k] = -1;
    for (int c = 0;; c++) {
        const char *s, *e;
        csv_field(p, le, c, &s, &e);
        for (int k = 0; k < BG_NCOL; k++)
            if ((size_t)(e - s) == strlen(BG_COLS[k]) && !memcmp(s, BG_COLS[k], (size_t)(e - s)))
                col[k] = c;
        const char *nx = memchr(s, ',', (size_t)(le - s));
        if (!nx || c > 64)
            break;
    }
    for (int k = 0; k < BG_NCOL; k++)
        if (col[k] < 0)
            return k;
    return -1;
}

/* One data row (none when filtered out); when it is wrong *bad says how,
 * *field which column and *at where it starts. */
static int burst_row(const struct mp_loadgen_trace_opts *o, const char *p, const char *le,
                     const int *col, struct trace *t, const char **field, const char **bad,
                     const char **at)
{
    const char *s, *e;
    char num[64];
    double v[BG_NCOL] = {0};
    csv_field(p, le, col[BG_MODEL], &s, &e);
    if (o->model && o->model[0] &&
        ((size_t)(e - s) != strlen(o->model) || memcmp(s, o->model, (size_t)(e - s)) != 0))
        return 0;
    static const int nums[3] = {BG_TS, BG_REQ, BG_RESP};
    for (int k = 0; k < 3; k++) {
        csv_field(p, le, col[nums[k]], &s, &e);
        char *endp;
        snprintf(num, sizeof(num), "%.*s", (int)(e - s < 63 ? e - s : 63), s);
        v[nums[k]] = strtod(num, &endp);
        if (e == s || *endp || !(v[nums[k]] >= 0) || isinf(v[nums[k]]) ||
            (k && (v[nums[k]] != floor(v[nums[k]]) || v[nums[k]] > MAX_TOKENS))) {
            *field = BG_COLS[nums[k]];
            *at = s;
            *bad = k ? "expected a non-negative integer" : "expected a non-negative number of s";
            return 0;
        }
    }
    if (v[BG_RESP] < 1 || v[BG_REQ] < 1) /* vLLM drops rows without a response */
        return 0;
    struct trec *x = trace_add(t);
    if (!x)
        return MP_ENOMEM;
    x->ts = v[BG_TS];
    x->in = (int32_t)v[BG_REQ];
    x->out = (int32_t)v[BG_RESP];
    return 0;
}

/* the header (line 1: the columns' places into ctx) or a row */
static int burst_line(const struct mp_loadgen_trace_opts *o, struct trace *t, const char *base,
                      const char *p, const char *le, long line, void *ctx, struct mp_diag *d)
{
    int *col = ctx, rc = 0;
    t->have_ts = true;
    if (line == 1) {
        int miss = csv_header(p, le, col);
        if (miss >= 0)
            return loadgen_file_error(d, MP_EPARSE, o->path, base, p, BG_COLS[miss],
                                      "the header has no column \"%s\"", BG_COLS[miss]);
        return 0;
    }
    if (le == p || (le - p == 1 && *p == '\r'))
        return 0;
    const char *field = NULL, *bad = NULL, *at = p;
    if ((rc = burst_row(o, p, le, col, t, &field, &bad, &at)))
        return mp_diag_set(d, rc, "out of memory reading %s", o->path);
    if (bad)
        return loadgen_file_error(d, MP_EINVAL, o->path, base, at, field, "%s", bad);
    return 0;
}

int mp_loadgen_dataset_burstgpt(const struct mp_loadgen_trace_opts *o,
                                struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    int col[BG_NCOL];
    return trace_read(o, "burstgpt", burst_line, col, out, d);
}
