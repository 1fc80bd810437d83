/* Synthetic multi-turn chat sessions (AIPerf's multi_turn, SGLang's
 * multi-turn rows; docs/workloads.md).
 *
 * A session is turns chat requests sent one after the other: each carries
 * the session's earlier prompts and the answers the server gave to them
 * (the engine adds those when it sends the turn), and leaves think_ms after
 * the previous answer ended. Every turn's own prompt is input_len one-token
 * words, different in every turn and session, so what a later turn shares
 * with an earlier one is exactly the history.
 */
#include <stdlib.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_TOKENS (1 << 24)

int mp_loadgen_dataset_multi_turn(const struct mp_loadgen_session_opts *o,
                                  struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    size_t n;
    if (o->num_sessions < 1 || o->turns < 1 ||
        mp_size_mul((size_t)o->num_sessions, (size_t)o->turns, &n) || n > ((size_t)10 << 20))
        return mp_diag_set(d, MP_EINVAL,
                           "multi_turn: %d sessions of %d turns is not 1..%zu requests",
                           o->num_sessions, o->turns, (size_t)10 << 20);
    if (o->input_len < 1 || o->input_len > MAX_TOKENS || o->output_len < 1 ||
        o->output_len > MAX_TOKENS)
        return mp_diag_set(d, MP_EINVAL, "multi_turn: input and output lengths must be 1..%d",
                           MAX_TOKENS);
    if (!(o->think_ms >= 0) || o->think_ms > 86400e3)
        return mp_diag_set(d, MP_EINVAL, "multi_turn: think time must be 0..86400000 ms, not %g",
                           o->think_ms);
    struct mp_loadgen_dataset *ds = NULL;
    int rc = loadgen_ds_new(n, "multi_turn", &ds, d);
    if (rc || !ds)
        return rc ? rc : MP_ENOMEM;
    int32_t *tok = malloc((size_t)o->input_len * sizeof(int32_t));
    ds->prev = loadgen_ds_array(ds, sizeof(int32_t));
    ds->think_s = loadgen_ds_array(ds, sizeof(double));
    ds->session = loadgen_ds_array(ds, sizeof(int32_t));
    if (!tok || !ds->prev || !ds->think_s || !ds->session) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    ds->history = true;
    struct loadgen_mt m;
    loadgen_mt_seed(&m, (uint32_t)(o->seed ^ (o->seed >> 32)));
    size_t nw = loadgen_n_words();
    for (size_t i = 0; i < n; i++) {
        size_t turn = i % (size_t)o->turns;
        for (int k = 0; k < o->input_len; k++)
            tok[k] = (int32_t)loadgen_mt_range(&m, 0, (int64_t)nw - 1);
        if (loadgen_prompt_set(ds, &ds->prompts[i], tok, (size_t)o->input_len, true,
                               o->output_len)) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
            goto out;
        }
        ds->session[i] = (int32_t)(i / (size_t)o->turns);
        ds->prev[i] = turn ? (int32_t)i - 1 : -1;
        ds->think_s[i] = turn ? o->think_ms / 1000.0 : 0;
    }
    *out = ds;
    ds = NULL;
out:
    free(tok);
    mp_loadgen_dataset_free(ds);
    return rc;
}
