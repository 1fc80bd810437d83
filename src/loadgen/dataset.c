/* Workloads: the random dataset (vLLM's or SGLang's length sampling), ShareGPT
 * JSON files and JSONL prompt files.
 *
 * magpie has no tokenizer. The random dataset therefore sends token-id
 * prompts to /v1/completions (the "prompt" field may be a list of ids), which
 * makes the input length exact; the server's usage.prompt_tokens confirms it.
 * For chat, or for text files, prompt lengths are estimates until the
 * server's usage numbers replace them (the same rule vLLM applies).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/io.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_PROMPTS ((size_t)10 << 20)
#define MAX_PROMPT_TOKENS (1 << 24)
#define MAX_FILE_BYTES ((size_t)8 << 30)

void mp_loadgen_random_opts_default(struct mp_loadgen_random_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->input_len = 1024;
    o->output_len = 128;
    o->mode = MP_LOADGEN_RANGE_VLLM;
    /* ids 1000..31999 exist and are ordinary tokens in the common tokenizers
     * (Llama 2/3, Mistral incl. Tekken's 1000 control ids, Qwen, GPT-2, Gemma). */
    o->vocab_first = 1000;
    o->vocab_size = 31000;
}

void mp_loadgen_dataset_free(struct mp_loadgen_dataset *ds)
{
    if (!ds)
        return;
    mp_arena_free(ds->arena);
    free(ds);
}

int loadgen_ds_new(size_t n, const char *name, struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    if (n == 0 || n > MAX_PROMPTS)
        return mp_diag_set(d, MP_EINVAL, "number of prompts must be 1..%zu, not %zu", MAX_PROMPTS,
                           n);
    struct mp_loadgen_dataset *ds = calloc(1, sizeof(*ds));
    if (!ds)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    ds->arena = mp_arena_new(1 << 20);
    ds->prompts = ds->arena ? mp_arena_alloc(ds->arena, n * sizeof(*ds->prompts)) : NULL;
    if (!ds->prompts) {
        mp_loadgen_dataset_free(ds);
        return mp_diag_set(d, MP_ENOMEM, "out of memory for %zu prompts", n);
    }
    memset(ds->prompts, 0, n * sizeof(*ds->prompts));
    ds->n = n;
    snprintf(ds->name, sizeof(ds->name), "%s", name);
    *out = ds;
    return 0;
}

/* Short English words that are one token (with their leading space) in the
 * common BPE vocabularies, for text prompts of a predictable length. */
static const char *const WORDS[] = {
    "the",  "of",    "and",  "to",     "in",     "is",      "that", "for",   "it",    "as",
    "was",  "with",  "be",   "by",     "on",     "not",     "he",   "this",  "are",   "or",
    "his",  "from",  "at",   "which",  "but",    "have",    "an",   "had",   "they",  "you",
    "were", "their", "one",  "all",    "we",     "can",     "her",  "has",   "there", "been",
    "if",   "more",  "when", "will",   "would",  "who",     "so",   "no",    "time",  "out",
    "up",   "about", "into", "than",   "them",   "only",    "some", "could", "new",   "other",
    "what", "these", "two",  "may",    "first",  "then",    "do",   "any",   "like",  "my",
    "now",  "over",  "such", "our",    "man",    "me",      "even", "most",  "made",  "after",
    "also", "did",   "many", "before", "must",   "through", "back", "years", "where", "much",
    "your", "way",   "well", "down",   "should", "because", "each", "just",  "those", "people",
};
#define N_WORDS (sizeof(WORDS) / sizeof(WORDS[0]))

const char *loadgen_word(size_t k)
{
    return WORDS[k % N_WORDS];
}

size_t loadgen_n_words(void)
{
    return N_WORDS;
}

static void sample_lengths(const struct mp_loadgen_random_opts *o, int len, long *lo, long *hi)
{
    if (o->mode == MP_LOADGEN_RANGE_SGLANG) {
        *lo = (long)floor(len * o->range_ratio);
        if (*lo < 1)
            *lo = 1;
        *hi = len;
    } else {
        *lo = (long)floor(len * (1.0 - o->range_ratio));
        *hi = (long)ceil(len * (1.0 + o->range_ratio));
    }
}

int mp_loadgen_dataset_random(const struct mp_loadgen_random_opts *o, size_t num_prompts,
                              struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    if (o->mode == MP_LOADGEN_RANGE_VLLM && !(o->range_ratio >= 0 && o->range_ratio < 1))
        return mp_diag_set(d, MP_EINVAL, "--random-range-ratio must be in [0, 1), not %g",
                           o->range_ratio);
    if (o->mode == MP_LOADGEN_RANGE_SGLANG && !(o->range_ratio >= 0 && o->range_ratio <= 1))
        return mp_diag_set(d, MP_EINVAL, "--random-range-ratio must be in [0, 1], not %g",
                           o->range_ratio);
    if (o->input_len < 0 || o->output_len < 1 || o->prefix_len < 0 ||
        o->input_len > MAX_PROMPT_TOKENS || o->prefix_len > MAX_PROMPT_TOKENS)
        return mp_diag_set(d, MP_EINVAL, "bad random lengths: input %d, output %d, prefix %d",
                           o->input_len, o->output_len, o->prefix_len);
    if (o->vocab_size < 1 || o->vocab_first < 0)
        return mp_diag_set(d, MP_EINVAL, "bad token id range");
    long in_lo, in_hi, out_lo, out_hi;
    sample_lengths(o, o->input_len, &in_lo, &in_hi);
    sample_lengths(o, o->output_len, &out_lo, &out_hi);
    if (out_lo < 1)
        out_lo = 1;
    if (out_hi < 1)
        out_hi = 1;
    if (o->prefix_len + in_lo < 1)
        return mp_diag_set(d, MP_EINVAL,
                           "--random-input-len is too small: the shortest prompt would have "
                           "%ld tokens",
                           o->prefix_len + in_lo);
    struct mp_loadgen_dataset *ds = NULL;
    int rc = loadgen_ds_new(num_prompts, "random", &ds, d);
    if (rc || !ds)
        return rc ? rc : MP_ENOMEM;
    ds->exact_lengths = !o->text;
    struct loadgen_mt m;
    loadgen_mt_seed(&m, (uint32_t)(o->seed ^ (o->seed >> 32)));
    /* draw in vLLM's order: input lengths, output lengths, offsets, prefix */
    int32_t *ilen = malloc(num_prompts * sizeof(int32_t));
    int64_t *off = malloc(num_prompts * sizeof(int64_t));
    int32_t *prefix = o->prefix_len ? malloc((size_t)o->prefix_len * sizeof(int32_t)) : NULL;
    if (!ilen || !off || (o->prefix_len && !prefix)) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < num_prompts; i++)
        ilen[i] = (int32_t)loadgen_mt_range(&m, in_lo, in_hi);
    for (size_t i = 0; i < num_prompts; i++)
        ds->prompts[i].output_len = (int32_t)loadgen_mt_range(&m, out_lo, out_hi);
    for (size_t i = 0; i < num_prompts; i++)
        off[i] = loadgen_mt_range(&m, 0, o->vocab_size - 1);
    for (int k = 0; k < o->prefix_len; k++)
        prefix[k] =
            (int32_t)(o->text ? loadgen_mt_range(&m, 0, N_WORDS - 1)
                              : o->vocab_first + loadgen_mt_range(&m, 0, o->vocab_size - 1));
    for (size_t i = 0; i < num_prompts; i++) {
        struct mp_loadgen_prompt *p = &ds->prompts[i];
        uint32_t total = (uint32_t)(o->prefix_len + ilen[i]);
        p->prompt_len = (int32_t)total;
        if (!o->text) {
            int32_t *ids = mp_arena_alloc(ds->arena, (size_t)total * sizeof(int32_t) + 1);
            if (!ids) {
                rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
                goto out;
            }
            if (o->prefix_len)
                memcpy(ids, prefix, (size_t)o->prefix_len * sizeof(int32_t));
            for (int32_t k = 0; k < ilen[i]; k++)
                ids[o->prefix_len + k] =
                    o->vocab_first + (int32_t)((off[i] + (int64_t)i + k) % o->vocab_size);
            p->ids = ids;
            p->n_ids = total;
        } else {
            struct mp_buf b;
            mp_buf_init(&b, (size_t)total * 16 + 64);
            for (uint32_t k = 0; k < total; k++) {
                size_t w = k < (uint32_t)o->prefix_len
                               ? (size_t)prefix[k]
                               : (size_t)((off[i] + (int64_t)i + (k - (uint32_t)o->prefix_len)) %
                                          (int64_t)N_WORDS);
                if ((k && mp_buf_putc(&b, ' ')) || mp_buf_puts(&b, WORDS[w])) {
                    mp_buf_fini(&b);
                    rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
                    goto out;
                }
            }
            p->text = mp_arena_strndup(ds->arena, mp_buf_cstr(&b), b.len);
            mp_buf_fini(&b);
            if (!p->text) {
                rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
                goto out;
            }
        }
    }
    *out = ds;
    ds = NULL;
out:
    free(ilen);
    free(off);
    free(prefix);
    mp_loadgen_dataset_free(ds);
    return rc;
}

/* Word pieces the way GPT-style pre-tokenisers split text: a letter run
 * (long runs count once per 8 letters, as rare words split), digits in groups
 * of three, every other visible character alone, each newline. English prose
 * lands within ~10-15 % of real BPE counts; the server's usage numbers
 * replace the estimate after the run. */
int32_t mp_loadgen_estimate_tokens(const char *s, size_t n)
{
    int64_t t = 0;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if ((c | 32) >= 'a' && (c | 32) <= 'z') {
            size_t j = i;
            while (j < n &&
                   ((((unsigned char)s[j]) | 32) >= 'a' && (((unsigned char)s[j]) | 32) <= 'z'))
                j++;
            t += 1 + (int64_t)(j - i - 1) / 8;
            i = j;
        } else if (c >= '0' && c <= '9') {
            size_t j = i;
            while (j < n && s[j] >= '0' && s[j] <= '9')
                j++;
            t += (int64_t)(j - i + 2) / 3;
            i = j;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            i++;
        } else if (c >= 0x80) {
            /* one token per non-ASCII character (CJK text is about that) */
            i++;
            while (i < n && (((unsigned char)s[i]) & 0xC0) == 0x80)
                i++;
            t++;
        } else { /* punctuation and newlines: one each */
            t++;
            i++;
        }
    }
    return t > INT32_MAX ? INT32_MAX : (int32_t)t;
}

int loadgen_read_file(const char *path, struct mp_buf *b, struct mp_diag *d)
{
    struct mp_io_reader *r = NULL;
    int rc = mp_io_open(path, &r, d);
    if (rc)
        return rc;
    mp_buf_init(b, MAX_FILE_BYTES);
    for (;;) {
        if ((rc = mp_buf_reserve(b, 1 << 20))) {
            mp_diag_set(d, rc, "cannot read %s: too large or out of memory", path);
            break;
        }
        size_t got = 0;
        if ((rc = mp_io_read(r, b->data + b->len, b->cap - b->len - 1, &got, d)))
            break;
        if (!got)
            break;
        b->len += got;
    }
    mp_io_close(r);
    if (!rc)
        mp_buf_cstr(b);
    return rc;
}

static void line_col(const char *base, const char *at, long *line, long *col)
{
    long l = 1, c = 1;
    for (const char *p = base; p < at; p++) {
        if (*p == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

int loadgen_file_error(struct mp_diag *d, int code, const char *path, const char *base,
                       const char *at, const char *field, const char *fmt, const char *arg)
{
    long line, col;
    line_col(base, at, &line, &col);
    mp_diag_set(d, code, fmt, arg);
    mp_diag_set_file(d, path);
    mp_diag_set_pos(d, at - base, line, col);
    if (field)
        mp_diag_set_field(d, field);
    return code;
}

struct sample {
    const char *text;
    size_t text_len;
    int32_t *ids;
    uint32_t n_ids;
    int32_t prompt_len, output_len;
};

/* Picks num_prompts of the n candidates: the first ones, then (oversample)
 * random repeats like vLLM's random.choices padding. */
static int fill(struct mp_loadgen_dataset *ds, const struct sample *c, size_t n, size_t num,
                const struct mp_loadgen_file_opts *o, struct loadgen_mt *m, struct mp_diag *d)
{
    if (n == 0)
        return mp_diag_set(d, MP_EINVAL, "%s: no usable prompts", o->path);
    if (n < num && !o->oversample)
        return mp_diag_set(d, MP_EINVAL, "%s has %zu usable prompts, fewer than --num-prompts %zu",
                           o->path, n, num);
    for (size_t i = 0; i < num; i++) {
        const struct sample *s = &c[i < n ? i : (size_t)loadgen_mt_range(m, 0, (int64_t)n - 1)];
        struct mp_loadgen_prompt *p = &ds->prompts[i];
        if (s->ids) {
            int32_t *ids = mp_arena_alloc(ds->arena, s->n_ids * sizeof(int32_t) + 1);
            if (!ids)
                return mp_diag_set(d, MP_ENOMEM, "out of memory");
            memcpy(ids, s->ids, s->n_ids * sizeof(int32_t));
            p->ids = ids;
            p->n_ids = s->n_ids;
        } else {
            p->text = mp_arena_strndup(ds->arena, s->text, s->text_len);
            if (!p->text)
                return mp_diag_set(d, MP_ENOMEM, "out of memory");
        }
        p->prompt_len = s->prompt_len;
        p->output_len = s->output_len;
    }
    return 0;
}

static void shuffle(size_t *idx, size_t n, struct loadgen_mt *m)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)loadgen_mt_range(m, 0, (int64_t)i - 1), t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

/* The elements of a JSON list file, as [start, end) pairs in *elem (2 per
 * element), found without building a tree of the whole file. */
static int list_elements(const char *path, const char *base, const char *end,
                         const char ***elem_out, size_t *n_out, struct mp_diag *d)
{
    const char **elem = NULL, *p = base;
    size_t n_elem = 0, cap = 0;
    int rc = 0;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    if (p >= end || *p != '[') {
        rc = loadgen_file_error(d, MP_EPARSE, path, base, p, NULL,
                                "expected a JSON list of conversations%s", "");
        goto out;
    }
    p++;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            p++;
        if (p < end && *p == ']' && n_elem == 0)
            break;
        const char *err = NULL, *q = loadgen_json_skip(p, end, &err);
        if (!q) {
            rc = loadgen_file_error(d, MP_EPARSE, path, base, p, NULL, "invalid JSON: %s",
                                    err ? err : "bad value");
            goto out;
        }
        if (n_elem == cap) {
            cap = cap ? cap * 2 : 1024;
            const char **ne = mp_reallocarray(elem, cap * 2, sizeof(const char *)); // NOLINT
            if (!ne) {
                rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
                goto out;
            }
            elem = ne;
        }
        elem[2 * n_elem] = p;
        elem[2 * n_elem + 1] = q;
        n_elem++;
        p = q;
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            p++;
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == ']')
            break;
        rc = loadgen_file_error(d, MP_EPARSE, path, base, p, NULL, "expected ',' or ']'%s", "");
        goto out;
    }
out:
    if (rc) {
        free(elem);
        elem = NULL;
        n_elem = 0;
    }
    *elem_out = elem;
    *n_out = n_elem;
    return rc;
}

/* The order in which the n elements of a ShareGPT file are read: the
 * file's, or shuffled with o->seed (m seeded with it either way; the
 * single-turn reader draws its oversampling from it). NULL: no memory. */
static size_t *element_order(size_t n, const struct mp_loadgen_file_opts *o, struct loadgen_mt *m)
{
    size_t *idx = malloc((n + 1) * sizeof(*idx));
    loadgen_mt_seed(m, (uint32_t)(o->seed ^ (o->seed >> 32)));
    if (!idx)
        return NULL;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    if (o->shuffle)
        shuffle(idx, n, m);
    return idx;
}

/* one turn of a ShareGPT session, before the dataset is made */
struct sg_turn {
    char *text;
    int32_t prompt_len, output_len, session;
};

struct sg_turns {
    struct sg_turn *t;
    size_t n, cap;
};

/* A conversation's answered human turns appended to ts (session sess). */
static int sg_conv_turns(const struct mp_loadgen_file_opts *o, json_t *conv, int32_t sess,
                         struct sg_turns *ts)
{
    size_t nt = json_array_size(conv), i = 0, added = 0;
    while (i < nt) { /* the first human turn */
        const char *f = json_string_value(json_object_get(json_array_get(conv, i), "from"));
        if (!f || !strcmp(f, "human") || !strcmp(f, "user"))
            break;
        i++;
    }
    for (; i + 1 < nt && added < 256; i += 2) {
        json_t *q = json_object_get(json_array_get(conv, i), "value");
        json_t *a = json_object_get(json_array_get(conv, i + 1), "value");
        if (!json_is_string(q) || !json_is_string(a))
            break;
        int32_t pl = mp_loadgen_estimate_tokens(json_string_value(q), json_string_length(q));
        int32_t ol = o->output_len > 0
                         ? o->output_len
                         : mp_loadgen_estimate_tokens(json_string_value(a), json_string_length(a));
        if (pl < 1 || ol < 1)
            break;
        if (MP_GROW(ts->t, ts->cap, ts->n + 1, 256))
            return MP_ENOMEM;
        struct sg_turn *x = &ts->t[ts->n++];
        x->text = mp_strndup(json_string_value(q), json_string_length(q));
        if (!x->text)
            return MP_ENOMEM;
        x->prompt_len = pl;
        x->output_len = ol > MAX_PROMPT_TOKENS ? MAX_PROMPT_TOKENS : ol;
        x->session = sess;
        added++;
    }
    return 0;
}

/* The dataset of the collected turns: sessions with history. */
static int sg_dataset(double think_ms, const struct sg_turn *t, size_t n,
                      struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    struct mp_loadgen_dataset *ds = NULL;
    int rc = loadgen_ds_new(n, "sharegpt", &ds, d);
    if (rc || !ds)
        return rc ? rc : MP_ENOMEM;
    ds->prev = loadgen_ds_array(ds, sizeof(int32_t));
    ds->think_s = loadgen_ds_array(ds, sizeof(double));
    ds->session = loadgen_ds_array(ds, sizeof(int32_t));
    if (!ds->prev || !ds->think_s || !ds->session) {
        mp_loadgen_dataset_free(ds);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    ds->history = true;
    for (size_t i = 0; i < n; i++) {
        struct mp_loadgen_prompt *p = &ds->prompts[i];
        p->text = mp_arena_strndup(ds->arena, t[i].text, strlen(t[i].text));
        if (!p->text) {
            mp_loadgen_dataset_free(ds);
            return mp_diag_set(d, MP_ENOMEM, "out of memory");
        }
        p->prompt_len = t[i].prompt_len;
        p->output_len = t[i].output_len;
        bool cont = i && t[i - 1].session == t[i].session;
        ds->session[i] = t[i].session;
        ds->prev[i] = cont ? (int32_t)i - 1 : -1;
        ds->think_s[i] = cont ? think_ms / 1000.0 : 0;
    }
    *out = ds;
    return 0;
}

/* ShareGPT conversations as multi-turn sessions (docs/workloads.md): num
 * conversations (shuffled as the single-turn reader does), each human turn
 * that has a reply a turn of its session, its output length the reply's
 * estimated length (or the fixed one). */
static int sharegpt_sessions(const struct mp_loadgen_file_opts *o, const char *base,
                             const char *const *elem, size_t n_elem, size_t num, double think_ms,
                             struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    struct loadgen_mt m;
    size_t *idx = element_order(n_elem, o, &m);
    struct sg_turns ts = {NULL, 0, 0};
    int rc = 0;
    int32_t sess = 0;
    if (!idx)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    for (size_t k = 0; k < n_elem && (size_t)sess < num && !rc; k++) {
        const char *s = elem[2 * idx[k]], *e = elem[2 * idx[k] + 1];
        json_error_t jerr;
        json_t *doc = json_loadb(s, (size_t)(e - s), 0, &jerr);
        json_t *conv = json_object_get(doc, "conversations");
        size_t before = ts.n;
        if (!json_is_array(conv))
            rc = loadgen_file_error(d, MP_EINVAL, o->path, base, s, "conversations",
                                    "each entry needs a \"conversations\" list%s", "");
        else if ((rc = sg_conv_turns(o, conv, sess, &ts)))
            mp_diag_set(d, rc, "out of memory");
        else if (ts.n > (size_t)10 << 20)
            rc = mp_diag_set(d, MP_EINVAL, "%s: more than %zu turns", o->path, (size_t)10 << 20);
        sess += ts.n > before;
        json_decref(doc);
    }
    if (!rc && ts.n == 0)
        rc = mp_diag_set(d, MP_EINVAL, "%s: no conversation with an answered turn", o->path);
    if (!rc)
        rc = sg_dataset(think_ms, ts.t, ts.n, out, d);
    for (size_t i = 0; i < ts.n; i++)
        free(ts.t[i].text);
    free(ts.t);
    free(idx);
    return rc;
}

int mp_loadgen_dataset_sharegpt_sessions(const struct mp_loadgen_file_opts *o,
                                         size_t num_conversations, double think_ms,
                                         struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    if (num_conversations == 0 || num_conversations > MAX_PROMPTS || !(think_ms >= 0) ||
        think_ms > 86400e3)
        return mp_diag_set(d, MP_EINVAL, "sharegpt sessions: bad count %zu or think time %g ms",
                           num_conversations, think_ms);
    struct mp_buf file;
    const char **elem = NULL;
    size_t n_elem = 0;
    int rc = loadgen_read_file(o->path, &file, d);
    if (rc)
        return rc;
    const char *base = file.data ? file.data : "", *end = base + file.len;
    if (!(rc = list_elements(o->path, base, end, &elem, &n_elem, d)))
        rc = sharegpt_sessions(o, base, elem, n_elem, num_conversations, think_ms, out, d);
    free(elem);
    mp_buf_fini(&file);
    return rc;
}

int mp_loadgen_dataset_sharegpt(const struct mp_loadgen_file_opts *o, size_t num_prompts,
                                struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_buf file;
    struct mp_loadgen_dataset *ds = NULL;
    const char **elem = NULL;
    struct sample *cand = NULL;
    size_t *idx = NULL, n_elem = 0, n_cand = 0;
    json_t **docs = NULL;
    int rc = loadgen_read_file(o->path, &file, d);
    if (rc)
        return rc;
    const char *base = file.data ? file.data : "", *end = base + file.len;
    if ((rc = list_elements(o->path, base, end, &elem, &n_elem, d)))
        goto out;
    struct loadgen_mt m;
    idx = element_order(n_elem, o, &m);
    cand = calloc(n_elem + 1, sizeof(*cand));
    docs = calloc(num_prompts + 1, sizeof(json_t *)); // NOLINT(bugprone-sizeof-expression)
    if (!idx || !cand || !docs) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < n_elem && n_cand < num_prompts; k++) {
        const char *s = elem[2 * idx[k]], *e = elem[2 * idx[k] + 1];
        json_error_t jerr;
        json_t *doc = json_loadb(s, (size_t)(e - s), 0, &jerr);
        if (!doc) {
            rc = loadgen_file_error(d, MP_EPARSE, o->path, base, s, NULL, "invalid JSON: %s",
                                    jerr.text);
            goto out;
        }
        json_t *conv = json_is_object(doc) ? json_object_get(doc, "conversations") : NULL;
        if (!json_is_array(conv)) {
            json_decref(doc);
            rc = loadgen_file_error(d, MP_EINVAL, o->path, base, s, "conversations",
                                    "each entry needs a \"conversations\" list%s", "");
            goto out;
        }
        if (json_array_size(conv) < 2) {
            json_decref(doc);
            continue;
        }
        json_t *v0 = json_object_get(json_array_get(conv, 0), "value");
        json_t *v1 = json_object_get(json_array_get(conv, 1), "value");
        if (!json_is_string(v0) || !json_is_string(v1)) {
            json_decref(doc);
            rc = loadgen_file_error(d, MP_EINVAL, o->path, base, s, "value",
                                    "conversation turns need a string \"value\"%s", "");
            goto out;
        }
        int32_t pl = mp_loadgen_estimate_tokens(json_string_value(v0), json_string_length(v0));
        int32_t ol = o->output_len > 0 ? o->output_len
                                       : mp_loadgen_estimate_tokens(json_string_value(v1),
                                                                    json_string_length(v1));
        /* vLLM's is_valid_sequence */
        if (pl < 4 || (o->output_len <= 0 && ol < 4) || pl > 1024 || pl + ol > 2048) {
            json_decref(doc);
            continue;
        }
        docs[n_cand] = doc;
        cand[n_cand].text = json_string_value(v0);
        cand[n_cand].text_len = json_string_length(v0);
        cand[n_cand].prompt_len = pl;
        cand[n_cand].output_len = ol;
        n_cand++;
    }
    if ((rc = loadgen_ds_new(num_prompts, "sharegpt", &ds, d)) || !ds) {
        rc = rc ? rc : MP_ENOMEM;
        goto out;
    }
    if ((rc = fill(ds, cand, n_cand, num_prompts, o, &m, d)))
        goto out;
    *out = ds;
    ds = NULL;
out:
    if (docs)
        for (size_t i = 0; i < num_prompts; i++)
            json_decref(docs[i]);
    free(docs);
    free(cand);
    free(idx);
    free(elem);
    mp_buf_fini(&file);
    mp_loadgen_dataset_free(ds);
    return rc;
}

/* a line's prompt: its text or its token ids (*idbuf owns those); *bad
 * and *field say what is wrong with the line */
static int jsonl_prompt(const json_t *doc, struct sample *s, int32_t **idbuf, const char **bad,
                        const char **field)
{
    json_t *pr = json_object_get(doc, "prompt"), *ids = json_object_get(doc, "prompt_token_ids");
    if (json_is_string(pr)) {
        s->text = json_string_value(pr);
        s->text_len = json_string_length(pr);
        s->prompt_len = mp_loadgen_estimate_tokens(s->text, s->text_len);
    } else if (json_is_array(ids) && json_array_size(ids) > 0 &&
               json_array_size(ids) <= MAX_PROMPT_TOKENS) {
        size_t k, ni = json_array_size(ids);
        json_t *v;
        s->ids = *idbuf = malloc(ni * sizeof(int32_t));
        if (!s->ids)
            return MP_ENOMEM;
        json_array_foreach(ids, k, v)
        {
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > INT32_MAX) {
                *bad = "token ids must be non-negative integers";
                *field = "prompt_token_ids";
                break;
            }
            s->ids[k] = (int32_t)json_integer_value(v);
        }
        s->n_ids = (uint32_t)ni;
        s->prompt_len = (int32_t)ni;
    } else {
        *bad = "each line needs \"prompt\" (a string) or \"prompt_token_ids\" (a list of ints)";
        *field = "prompt";
    }
    return 0;
}

/* a line's output length (the first of its keys, unless the options fix
 * one) and its prompt_len override */
static void jsonl_lengths(const json_t *doc, const struct mp_loadgen_file_opts *o, struct sample *s,
                          const char **bad, const char **field)
{
    static const char *const out_keys[] = {"output_len", "max_tokens", "output_tokens",
                                           "expected_output_len"};
    s->output_len = o->output_len > 0 ? o->output_len : 256;
    for (size_t k = 0; !*bad && k < 4; k++) {
        json_t *v = json_object_get(doc, out_keys[k]);
        if (!v)
            continue;
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > MAX_PROMPT_TOKENS) {
            *bad = "expected a positive integer";
            *field = out_keys[k];
        } else if (o->output_len <= 0) {
            s->output_len = (int32_t)json_integer_value(v);
        }
        break;
    }
    json_t *pl = json_object_get(doc, "prompt_len");
    if (!*bad && pl) {
        if (!json_is_integer(pl) || json_integer_value(pl) < 0 ||
            json_integer_value(pl) > MAX_PROMPT_TOKENS) {
            *bad = "expected a non-negative integer";
            *field = "prompt_len";
        } else {
            s->prompt_len = (int32_t)json_integer_value(pl);
        }
    }
}

/* the candidates drawn from, shuffled when asked, into a dataset of
 * num_prompts */
static int jsonl_dataset(const struct mp_loadgen_file_opts *o, struct sample *cand, size_t n_cand,
                         size_t num_prompts, struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    struct mp_loadgen_dataset *ds = NULL;
    int rc;
    struct loadgen_mt m;
    loadgen_mt_seed(&m, (uint32_t)(o->seed ^ (o->seed >> 32)));
    if (o->shuffle && n_cand > 1) {
        for (size_t i = n_cand; i > 1; i--) {
            size_t j = (size_t)loadgen_mt_range(&m, 0, (int64_t)i - 1);
            struct sample t = cand[i - 1];
            cand[i - 1] = cand[j];
            cand[j] = t;
        }
    }
    if ((rc = loadgen_ds_new(num_prompts, "jsonl", &ds, d)) || !ds) {
        rc = rc ? rc : MP_ENOMEM;
        goto out;
    }
    if ((rc = fill(ds, cand, n_cand, num_prompts, o, &m, d)))
        goto out;
    ds->exact_lengths = true;
    for (size_t i = 0; i < ds->n; i++)
        if (!ds->prompts[i].ids)
            ds->exact_lengths = false;
    *out = ds;
    ds = NULL;
out:
    mp_loadgen_dataset_free(ds);
    return rc;
}

int mp_loadgen_dataset_jsonl(const struct mp_loadgen_file_opts *o, size_t num_prompts,
                             struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_buf file;
    struct sample *cand = NULL;
    json_t **docs = NULL;
    int32_t **idbufs = NULL;
    size_t n_cand = 0, cap = 0;
    int rc = loadgen_read_file(o->path, &file, d);
    if (rc)
        return rc;
    const char *base = file.data ? file.data : "", *p = base, *end = base + file.len;
    long line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        line++;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == le) {
            p = nl ? nl + 1 : end;
            continue;
        }
        if (n_cand == cap) {
            cap = cap ? cap * 2 : 256;
            struct sample *nc = mp_reallocarray(cand, cap, sizeof(*cand));
            json_t **nd = mp_reallocarray(docs, cap, sizeof(json_t *)); // NOLINT
            int32_t **ni = mp_reallocarray(idbufs, cap, sizeof(int32_t *));
            if (nc)
                cand = nc;
            if (nd)
                docs = nd;
            if (ni)
                idbufs = ni;
            if (!nc || !nd || !ni) {
                rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
                goto out;
            }
        }
        json_error_t jerr;
        json_t *doc = json_loadb(p, (size_t)(le - p), 0, &jerr);
        if (!doc || !json_is_object(doc)) {
            json_decref(doc);
            rc = mp_diag_set(d, MP_EPARSE, "%s", doc ? "expected a JSON object" : jerr.text);
            mp_diag_set_file(d, o->path);
            mp_diag_set_pos(d, p - base + (doc ? 0 : jerr.position), line, doc ? 1 : jerr.column);
            goto out;
        }
        struct sample *s = &cand[n_cand];
        memset(s, 0, sizeof(*s));
        docs[n_cand] = doc;
        idbufs[n_cand] = NULL;
        n_cand++;
        const char *bad = NULL, *field = NULL;
        if (jsonl_prompt(doc, s, &idbufs[n_cand - 1], &bad, &field)) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
            goto out;
        }
        jsonl_lengths(doc, o, s, &bad, &field);
        if (bad) {
            rc = mp_diag_set(d, MP_EINVAL, "%s", bad);
            mp_diag_set_file(d, o->path);
            mp_diag_set_pos(d, p - base, line, 1);
            mp_diag_set_field(d, field);
            goto out;
        }
        p = nl ? nl + 1 : end;
    }
    rc = jsonl_dataset(o, cand, n_cand, num_prompts, out, d);
out:
    for (size_t i = 0; i < n_cand; i++) {
        json_decref(docs[i]);
        free(idbufs[i]);
    }
    free(docs);
    free(idbufs);
    free(cand);
    mp_buf_fini(&file);
    return rc;
}
