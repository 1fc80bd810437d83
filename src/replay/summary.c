/* replay_summary.csv and replay_summary.json: per op the trace's figures
 * (calls, kernel time per call, kernels, roofline), what the rebuild made
 * of it and, after a run, the replay's kernel time with its CI, the ratio
 * to the trace and whether the same kernels ran. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <magpie/fmt.h>

#include "replay_int.h"

static const char *const cols[] = {
    "n",
    "rank",
    "op",
    "shape_key",
    "op_category",
    "calls",
    "trace_kernel_us_mean",
    "trace_kernel_us_median",
    "trace_kernel_us_sum",
    "replay_kernel_us_median",
    "replay_kernel_us_ci_lo",
    "replay_kernel_us_ci_hi",
    "replay_l2",
    "replay_kernel_us_l2_flushed",
    "replay_kernel_us_l2_warm",
    "replay_kernel_us_idle",
    "replay_kernel_us_cold",
    "replay_kernel_us_after",
    "replay_graph_us",
    "replay_samples",
    "ratio",
    "kernels_match",
    "trace_kernels",
    "replay_kernels",
    "gflops",
    "data_moved_mb",
    "flops_per_byte",
    "compute_spec",
    "roofline_bound",
    "roofline_time_us",
    "pct_roofline",
    "rebuilt",
    "in_ir",
    "reason",
    "note",
    "values_from",
    "trace_prev_op",
    "trace_prev_shape",
    "trace_prev_share",
    "trace_gap_us",
    "replay_note",
    "schema",
    "replay_sm_clock_mhz",
    "replay_clocks",
};

static int num(struct mp_csv *c, double v, bool have)
{
    if (!have || !isfinite(v))
        return mp_csv_str(c, "");
    char t[40];
    mp_fmt_pyfloat(v, t, sizeof(t));
    return mp_csv_str(c, t);
}

static int row(struct mp_csv *c, const struct mp_replay_op *op)
{
    bool rp = op->replayed;
    int rc = mp_csv_fmt(c, "%d", op->n);
    rc = rc ? rc : mp_csv_fmt(c, "%ld", op->rank);
    rc = rc ? rc : mp_csv_str(c, op->name);
    rc = rc ? rc : mp_csv_str(c, op->shape_key);
    rc = rc ? rc : mp_csv_str(c, op->category);
    rc = rc ? rc : mp_csv_fmt(c, "%ld", op->calls);
    rc = rc ? rc : num(c, op->trace_mean_us, true);
    rc = rc ? rc : num(c, op->trace_median_us, true);
    rc = rc ? rc : num(c, op->trace_sum_us, true);
    rc = rc ? rc : num(c, op->replay_median_us, rp);
    rc = rc ? rc : num(c, op->replay_ci_lo_us, rp);
    rc = rc ? rc : num(c, op->replay_ci_hi_us, rp);
    rc = rc ? rc : mp_csv_str(c, rp ? op->replay_l2 : "");
    rc = rc ? rc : num(c, op->replay_flushed_us, rp && op->replay_flushed_us > 0);
    rc = rc ? rc : num(c, op->replay_warm_us, rp && op->replay_warm_us > 0);
    rc = rc ? rc : num(c, op->replay_idle_us, rp && op->replay_idle_us > 0);
    rc = rc ? rc : num(c, op->replay_cold_us, rp && op->replay_cold_us > 0);
    rc = rc ? rc : num(c, op->replay_after_us, rp && op->replay_after_us > 0);
    rc = rc ? rc : num(c, op->replay_graph_us, rp && op->replay_graph_us > 0);
    rc = rc ? rc : (rp ? mp_csv_fmt(c, "%ld", op->replay_samples) : mp_csv_str(c, ""));
    rc = rc ? rc : num(c, op->ratio, rp);
    rc = rc ? rc : mp_csv_str(c, op->kernels_match < 0 ? "" : op->kernels_match ? "True" : "False");
    rc = rc ? rc : mp_csv_str(c, op->trace_kernels);
    rc = rc ? rc : mp_csv_str(c, op->replay_kernels ? op->replay_kernels : "");
    const char *rf[] = {op->gflops,         op->data_mb,     op->flops_per_byte, op->compute_spec,
                        op->roofline_bound, op->roofline_us, op->pct_roofline};
    for (size_t i = 0; !rc && i < sizeof(rf) / sizeof(rf[0]); i++)
        rc = mp_csv_str(c, rf[i] ? rf[i] : "");
    rc = rc ? rc : mp_csv_str(c, op->rebuilt ? "True" : "False");
    rc = rc ? rc : mp_csv_str(c, op->in_ir ? "True" : "False");
    rc = rc ? rc : mp_csv_str(c, op->reason ? op->reason : "");
    rc = rc ? rc : mp_csv_str(c, op->note ? op->note : "");
    rc = rc ? rc : mp_csv_str(c, op->values_from);
    rc = rc ? rc : mp_csv_str(c, op->prev_op ? op->prev_op : "");
    rc = rc ? rc : mp_csv_str(c, op->prev_dims ? op->prev_dims : "");
    rc = rc ? rc : num(c, op->prev_share, op->prev_op != NULL);
    rc = rc ? rc : num(c, op->prev_gap_us, op->prev_gap_us >= 0 && op->prev_calls > 0);
    rc = rc ? rc : mp_csv_str(c, op->replay_note ? op->replay_note : "");
    rc = rc ? rc : mp_csv_str(c, op->schema ? op->schema : "");
    rc = rc ? rc : num(c, op->replay_sm_mhz, rp && op->replay_sm_mhz > 0);
    rc = rc ? rc : mp_csv_str(c, op->replay_clocks ? op->replay_clocks : "");
    return rc ? rc : mp_csv_end_row(c);
}

int rp_summary_csv(const struct mp_replay_result *r, struct mp_buf *b)
{
    struct mp_csv c;
    mp_csv_init(&c, b, "\r\n");
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof(cols) / sizeof(cols[0]); i++)
        rc = mp_csv_str(&c, cols[i]);
    rc = rc ? rc : mp_csv_end_row(&c);
    for (size_t i = 0; !rc && i < r->n; i++)
        rc = row(&c, &r->ops[i]);
    return rc;
}

static int jkey_str(struct mp_buf *b, const char *k, const char *v)
{
    int rc = mp_buf_printf(b, ", \"%s\": ", k);
    v = v ? v : "";
    return rc ? rc : mp_json_str(b, v, strlen(v));
}

static int jkey_num(struct mp_buf *b, const char *k, double v, bool have)
{
    int rc = mp_buf_printf(b, ", \"%s\": ", k);
    if (rc)
        return rc;
    return have && isfinite(v) ? mp_json_double(b, v) : mp_buf_puts(b, "null");
}

static int op_json(struct mp_buf *b, const struct mp_replay_op *op)
{
    bool rp = op->replayed;
    int rc = mp_buf_printf(b, "{\"n\": %d, \"rank\": %ld", op->n, op->rank);
    rc = rc ? rc : jkey_str(b, "op", op->name);
    rc = rc ? rc : jkey_str(b, "shape_key", op->shape_key);
    rc = rc ? rc : jkey_str(b, "op_category", op->category);
    rc = rc ? rc : mp_buf_printf(b, ", \"calls\": %ld", op->calls);
    rc = rc ? rc : jkey_num(b, "trace_kernel_us_mean", op->trace_mean_us, true);
    rc = rc ? rc : jkey_num(b, "trace_kernel_us_median", op->trace_median_us, true);
    rc = rc ? rc : jkey_num(b, "trace_kernel_us_sum", op->trace_sum_us, true);
    rc = rc ? rc : jkey_num(b, "replay_kernel_us_median", op->replay_median_us, rp);
    rc = rc ? rc : jkey_num(b, "replay_kernel_us_ci_lo", op->replay_ci_lo_us, rp);
    rc = rc ? rc : jkey_num(b, "replay_kernel_us_ci_hi", op->replay_ci_hi_us, rp);
    rc = rc ? rc : jkey_str(b, "replay_l2", rp ? op->replay_l2 : "");
    rc = rc ? rc
            : jkey_num(b, "replay_kernel_us_l2_flushed", op->replay_flushed_us,
                       rp && op->replay_flushed_us > 0);
    rc = rc ? rc
            : jkey_num(b, "replay_kernel_us_l2_warm", op->replay_warm_us,
                       rp && op->replay_warm_us > 0);
    rc =
        rc ? rc
           : jkey_num(b, "replay_kernel_us_idle", op->replay_idle_us, rp && op->replay_idle_us > 0);
    rc =
        rc ? rc
           : jkey_num(b, "replay_kernel_us_cold", op->replay_cold_us, rp && op->replay_cold_us > 0);
    rc = rc ? rc
            : jkey_num(b, "replay_kernel_us_after", op->replay_after_us,
                       rp && op->replay_after_us > 0);
    rc = rc ? rc
            : jkey_num(b, "replay_graph_us", op->replay_graph_us, rp && op->replay_graph_us > 0);
    rc = rc ? rc : mp_buf_printf(b, ", \"replay_samples\": %ld", rp ? op->replay_samples : 0L);
    rc = rc ? rc : jkey_num(b, "ratio", op->ratio, rp);
    rc = rc ? rc
            : mp_buf_printf(b, ", \"kernels_match\": %s",
                            op->kernels_match < 0 ? "null"
                            : op->kernels_match   ? "true"
                                                  : "false");
    rc = rc ? rc : jkey_str(b, "trace_kernels", op->trace_kernels);
    rc = rc ? rc : jkey_str(b, "replay_kernels", op->replay_kernels);
    rc = rc ? rc : jkey_str(b, "gflops", op->gflops);
    rc = rc ? rc : jkey_str(b, "data_moved_mb", op->data_mb);
    rc = rc ? rc : jkey_str(b, "flops_per_byte", op->flops_per_byte);
    rc = rc ? rc : jkey_str(b, "compute_spec", op->compute_spec);
    rc = rc ? rc : jkey_str(b, "roofline_bound", op->roofline_bound);
    rc = rc ? rc : jkey_str(b, "roofline_time_us", op->roofline_us);
    rc = rc ? rc : jkey_str(b, "pct_roofline", op->pct_roofline);
    rc = rc ? rc
            : mp_buf_printf(b, ", \"rebuilt\": %s, \"in_ir\": %s", op->rebuilt ? "true" : "false",
                            op->in_ir ? "true" : "false");
    rc = rc ? rc : jkey_str(b, "reason", op->reason);
    rc = rc ? rc : jkey_str(b, "note", op->note);
    rc = rc ? rc : jkey_str(b, "values_from", op->values_from);
    rc = rc ? rc : jkey_str(b, "trace_prev_op", op->prev_op);
    rc = rc ? rc : jkey_str(b, "trace_prev_shape", op->prev_dims);
    rc = rc ? rc : jkey_str(b, "trace_prev_types", op->prev_types);
    rc = rc ? rc : jkey_num(b, "trace_prev_share", op->prev_share, op->prev_op != NULL);
    rc = rc ? rc
            : jkey_num(b, "trace_gap_us", op->prev_gap_us,
                       op->prev_gap_us >= 0 && op->prev_calls > 0);
    rc = rc                 ? rc
         : op->prev_rebuilt ? mp_buf_printf(b, ", \"prev_ref\": \"prev_%d.py\"", op->n)
                            : mp_buf_puts(b, ", \"prev_ref\": null");
    rc = rc ? rc : jkey_str(b, "replay_note", op->replay_note);
    rc = rc ? rc : jkey_str(b, "schema", op->schema);
    rc = rc ? rc
            : jkey_num(b, "replay_sm_clock_mhz", op->replay_sm_mhz, rp && op->replay_sm_mhz > 0);
    rc = rc ? rc : jkey_str(b, "replay_clocks", op->replay_clocks);
    if (!rc && op->rebuilt)
        rc =
            mp_buf_printf(b,
                          ", \"ref\": \"ref_%d.py\", \"candidate\": \"cand_%d.py\", \"compare\": "
                          "\"compare_%d.yaml\", \"command\": \"magpie compare -k compare_%d.yaml\"",
                          op->n, op->n, op->n, op->n);
    return rc ? rc : mp_buf_putc(b, '}');
}

int mp_replay_summary_json(const struct mp_replay_result *r, struct mp_buf *b)
{
    int rc = mp_buf_printf(b,
                           "{\"rows_in_ranking\": %zu, \"selected\": %zu, \"rebuilt\": %zu, "
                           "\"in_ir\": %zu, \"ran\": %s",
                           r->n_rows, r->n, r->n_rebuilt, r->n_in_ir, r->ran ? "true" : "false");
    rc = rc ? rc : jkey_str(b, "run_note", r->run_note);
    rc = rc ? rc : jkey_str(b, "arch", r->arch_name);
    rc = rc ? rc : jkey_str(b, "capture_merge", r->capture_note);
    rc = rc ? rc : mp_buf_puts(b, ", \"ops\": [");
    for (size_t i = 0; !rc && i < r->n; i++) {
        rc = mp_buf_puts(b, i ? ",\n  " : "\n  ");
        rc = rc ? rc : op_json(b, &r->ops[i]);
    }
    return rc ? rc : mp_buf_puts(b, "\n]}\n");
}
