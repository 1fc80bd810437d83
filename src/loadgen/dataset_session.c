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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_TOKENS (1 << 24)

/* A normal draw (Box-Muller on the generator's doubles). */
static double normal(struct loadgen_mt *m, double mean, double sd)
{
    double u = loadgen_mt_double(m), v = loadgen_mt_double(m);
    return mean + sd * sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * 3.14159265358979323846 * v);
}

/* Each session's turn count: o->turns, or drawn; the total in *n. NULL
 * with *n 0 when the total is over the limit or there is no memory. */
static int32_t *turn_counts(const struct mp_loadgen_session_opts *o, struct loadgen_mt *m,
                            size_t *n)
{
    int32_t *t = malloc((size_t)o->num_sessions * sizeof(int32_t));
    *n = 0;
    for (int s = 0; t && s < o->num_sessions; s++) {
        double k = o->turns_stddev > 0 ? nearbyint(normal(m, o->turns, o->turns_stddev))
                                       : (double)o->turns;
        t[s] = k < 1 ? 1 : k > 65536 ? 65536 : (int32_t)k;
        *n += (size_t)t[s];
    }
    if (t && *n > ((size_t)10 << 20)) {
        free(t);
        t = NULL;
        *n = 0;
    }
    return t;
}

int mp_loadgen_dataset_multi_turn(const struct mp_loadgen_session_opts *o,
                                  struct mp_loadgen_dataset **out, struct mp_diag *d)
{
    *out = NULL;
    size_t n;
    if (o->num_sessions < 1 || o->num_sessions > (1 << 20) || o->turns < 1 || o->turns > 65536 ||
        !(o->turns_stddev >= 0) || !(o->think_stddev_ms >= 0) || o->turns_stddev > 65536 ||
        o->think_stddev_ms > 86400e3)
        return mp_diag_set(d, MP_EINVAL,
                           "multi_turn: %d sessions of %d turns (stddev %g) is out of range",
                           o->num_sessions, o->turns, o->turns_stddev);
    if (o->input_len < 1 || o->input_len > MAX_TOKENS || o->output_len < 1 ||
        o->output_len > MAX_TOKENS)
        return mp_diag_set(d, MP_EINVAL, "multi_turn: input and output lengths must be 1..%d",
                           MAX_TOKENS);
    if (!(o->think_ms >= 0) || o->think_ms > 86400e3)
        return mp_diag_set(d, MP_EINVAL, "multi_turn: think time must be 0..86400000 ms, not %g",
                           o->think_ms);
    struct loadgen_mt m;
    loadgen_mt_seed(&m, (uint32_t)(o->seed ^ (o->seed >> 32)));
    int32_t *count = turn_counts(o, &m, &n);
    if (!count)
        return mp_diag_set(d, MP_EINVAL, "multi_turn: more than %zu requests (or no memory)",
                           (size_t)10 << 20);
    struct mp_loadgen_dataset *ds = NULL;
    int rc = loadgen_ds_new(n, "multi_turn", &ds, d);
    if (rc || !ds) {
        free(count);
        return rc ? rc : MP_ENOMEM;
    }
    int32_t *tok = malloc((size_t)o->input_len * sizeof(int32_t));
    ds->prev = loadgen_ds_array(ds, sizeof(int32_t));
    ds->think_s = loadgen_ds_array(ds, sizeof(double));
    ds->session = loadgen_ds_array(ds, sizeof(int32_t));
    if (!tok || !ds->prev || !ds->think_s || !ds->session) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    ds->history = true;
    size_t nw = loadgen_n_words(), turn = 0;
    int32_t sess = 0;
    for (size_t i = 0; i < n; i++, turn++) {
        if (turn == (size_t)count[sess]) {
            sess++;
            turn = 0;
        }
        for (int k = 0; k < o->input_len; k++)
            tok[k] = (int32_t)loadgen_mt_range(&m, 0, (int64_t)nw - 1);
        if (loadgen_prompt_set(ds, &ds->prompts[i], tok, (size_t)o->input_len, true,
                               o->output_len)) {
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory for prompts");
            goto out;
        }
        ds->session[i] = sess;
        ds->prev[i] = turn ? (int32_t)i - 1 : -1;
        double th =
            o->think_stddev_ms > 0 ? normal(&m, o->think_ms, o->think_stddev_ms) : o->think_ms;
        ds->think_s[i] = turn && th > 0 ? (th > 86400e3 ? 86400 : th / 1000.0) : 0;
    }
    *out = ds;
    ds = NULL;
out:
    free(tok);
    free(count);
    mp_loadgen_dataset_free(ds);
    return rc;
}
