/* Shared-prefix workloads: vLLM's prefix_repetition and SGLang's
 * generated-shared-prefix (docs/workloads.md).
 *
 * Both are groups of prompts that start with the same prefix (a system
 * prompt, a RAG context) and end with a part of their own, the traffic an
 * engine's prefix cache is built for. The prefix must be token-identical
 * after the server's tokenizer, or the cache sees no hit: completions get
 * token-id prompts (exact by construction), chat gets one-token words joined
 * by spaces, which the common BPE tokenizers split word by word (the same
 * words as the random dataset's text prompts).
 */
#include <stdlib.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_TOKENS (1 << 24)

void mp_loadgen_prefix_opts_default(struct mp_loadgen_prefix_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->prefix_len = 256;
    o->suffix_len = 256;
    o->num_groups = 10;
    o->output_len = 128;
    o->vocab_first = 1000; /* as mp_loadgen_random_opts_default */
    o->vocab_size = 31000;
}

void *loadgen_ds_array(struct mp_loadgen_dataset *ds, size_t sz)
{
    size_t bytes;
    if (mp_size_mul(ds->n ? ds->n : 1, sz, &bytes))
        return NULL;
    void *p = mp_arena_alloc(ds->arena, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

int loadgen_prompt_set(struct mp_loadgen_dataset *ds, struct mp_loadgen_prompt *p,
                       const int32_t *tok, size_t n, bool text, int32_t out)
{
    p->prompt_len = (int32_t)n;
    p->output_len = out;
    if (!text) {
        int32_t *ids = mp_arena_alloc(ds->arena, n * sizeof(int32_t) + 1);
        if (!ids)
            return MP_ENOMEM;
        if (n)
            memcpy(ids, tok, n * sizeof(int32_t));
        p->ids = ids;
        p->n_ids = (uint32_t)n;
        return 0;
    }
    size_t len = 1;
    for (size_t k = 0; k < n; k++)
        len += strlen(loadgen_word((size_t)tok[k])) + 1;
    char *t = mp_arena_alloc(ds->arena, len);
    if (!t)
        return MP_ENOMEM;
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        const char *w = loadgen_word((size_t)tok[k]);
        size_t wl = strlen(w);
        if (k)
            t[at++] = ' ';
        memcpy(t + at, w, wl);
        at += wl;
    }
    t[at] = 0;
    p->text = t;
    return 0;
}

static int32_t draw_token(struct loadgen_mt *m, const struct mp_loadgen_prefix_opts *o)
{
    if (o->text)
        return (int32_t)loadgen_mt_range(m, 0, (int64_t)loadgen_n_words() - 1);
    return o->vocab_first + (int32_t)loadgen_mt_range(m, 0, o->vocab_size - 1);
}

static int check_opts(const struct mp_loadgen_prefix_opts *o, const char *what, struct mp_diag *d)
{
    if (o->prefix_len < 0 || o->suffix_len < 0 || o->prefix_len > MAX_TOKENS ||
        o->suffix_len > MAX_TOKENS || o->prefix_len + o->suffix_len < 1)
        return mp_diag_set(d, MP_EINVAL,
                           "%s: prefix and suffix lengths must be 0..%d and not both 0 "
                           "(prefix %d, suffix %d)",
                           what, MAX_TOKENS, o->prefix_len, o->suffix_len);
    if (o->num_groups < 1)
        return mp_diag_set(d, MP_EINVAL, "%s: the number of prefixes must be >= 1, not %d", what,
                           o->num_groups);
    if (o->output_len < 1 || o->output_len > MAX_TOKENS)
        return mp_diag_set(d, MP_EINVAL, "%s: output length must be 1..%d, not %d", what,
                           MAX_TOKENS, o->output_len);
    if (!o->text && (o->vocab_size < 1 || o->vocab_first < 0))
        return mp_diag_set(d, MP_EINVAL, "%s: bad token id range", what);
    return 0;
}

/* n prompts; prompt i of the group order belongs to group group[i]. Draws:
 * every group's prefix, then every prompt's suffix, then the shuffle. */
static int build(const struct mp_loadgen_prefix_opts *o, const char *name, size_t n,
                 const int32_t *group, struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    struct mp_loadgen_dataset *ds = NULL;
    int rc = loadgen_ds_new(n, name, &ds, d);
    if (rc || !ds)
        return rc ? rc : MP_ENOMEM;
    size_t plen = (size_t)o->prefix_len, total = plen + (size_t)o->suffix_len;
    int32_t *pre = malloc(((size_t)o->num_groups * plen + 1) * sizeof(int32_t));
    int32_t *tok = malloc((total + 1) * sizeof(int32_t));
    if (!pre || !tok) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    struct loadgen_mt m;
    loadgen_mt_seed(&m, (uint32_t)(o->seed ^ (o->seed >> 32)));
    for (size_t k = 0; k < (size_t)o->num_groups * plen; k++)
        pre[k] = draw_token(&m, o);
    for (size_t i = 0; i < n; i++) {
        memcpy(tok, pre + (size_t)group[i] * plen, plen * sizeof(int32_t));
        for (size_t k = plen; k < total; k++)
            tok[k] = draw_token(&m, o);
        if (loadgen_prompt_set(ds, &ds->prompts[i], tok, total, o->text, o->output_len)) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
            goto out;
        }
    }
    if (!o->ordered) {
        for (size_t i = n; i > 1; i--) {
            size_t j = (size_t)loadgen_mt_range(&m, 0, (int64_t)i - 1);
            struct mp_loadgen_prompt t = ds->prompts[i - 1];
            ds->prompts[i - 1] = ds->prompts[j];
            ds->prompts[j] = t;
        }
    }
    ds->exact_lengths = !o->text;
    *out = ds;
    ds = NULL;
out:
    free(pre);
    free(tok);
    mp_loadgen_dataset_free(ds);
    return rc;
}

int mp_loadgen_dataset_prefix_repetition(const struct mp_loadgen_prefix_opts *o, size_t num_prompts,
                                         struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    int rc = check_opts(o, "prefix_repetition", d);
    if (rc)
        return rc;
    if (num_prompts < (size_t)o->num_groups)
        return mp_diag_set(d, MP_EINVAL,
                           "prefix_repetition: --num-prompts %zu is fewer than "
                           "--prefix-repetition-num-prefixes %d",
                           num_prompts, o->num_groups);
    int32_t *group = malloc((num_prompts + 1) * sizeof(int32_t));
    if (!group)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    size_t per = num_prompts / (size_t)o->num_groups, extra = num_prompts % (size_t)o->num_groups;
    size_t i = 0;
    for (int g = 0; g < o->num_groups; g++)
        for (size_t k = 0; k < per + ((size_t)g < extra); k++)
            group[i++] = g;
    rc = build(o, "prefix_repetition", num_prompts, group, out, d);
    free(group);
    return rc;
}

int mp_loadgen_dataset_shared_prefix(const struct mp_loadgen_prefix_opts *o, size_t per_group,
                                     struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    int rc = check_opts(o, "generated-shared-prefix", d);
    if (rc)
        return rc;
    size_t n;
    if (per_group < 1 || mp_size_mul((size_t)o->num_groups, per_group, &n) || n > (10u << 20))
        return mp_diag_set(d, MP_EINVAL,
                           "generated-shared-prefix: %d groups of %zu prompts is not 1..%u "
                           "prompts",
                           o->num_groups, per_group, 10u << 20);
    int32_t *group = malloc((n + 1) * sizeof(int32_t));
    if (!group)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        group[i] = (int32_t)(i / per_group);
    rc = build(o, "generated-shared-prefix", n, group, out, d);
    free(group);
    return rc;
}

bool mp_loadgen_workload_shares_prefixes(const char *name)
{
    static const char *const shared[] = {
        "prefix_repetition", "generated-shared-prefix", "gsp", "multi_turn",
        "mooncake",          "mooncake_trace"};
    for (size_t i = 0; name && i < sizeof(shared) / sizeof(shared[0]); i++)
        if (!strcmp(name, shared[i]))
            return true;
    return false;
}
