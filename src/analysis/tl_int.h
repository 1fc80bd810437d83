/* Private helpers of the TraceLens-compatible report (src/analysis/tl_*.c). */
#ifndef MP_TL_INT_H
#define MP_TL_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

/* Python repr() of a float (shortest round trip), appended to b. */
int tl_pyfloat(struct mp_buf *b, double v);
/* Python repr() of a str. */
int tl_pystr_repr(struct mp_buf *b, const char *s, size_t n);
/* Python repr() of a JSON value with lists turned into tuples, as TraceLens's
 * list_to_tuple before printing: [[1, 2], []] -> ((1, 2), ()). */
int tl_json_to_pyrepr(struct mp_buf *b, const char *p, const char *e);
/* tl_json_to_pyrepr of args[key]; *present tells whether the key exists. */
int tl_args_pyrepr(struct mp_buf *b, const char *args, size_t args_len, const char *key,
                   bool *present);

struct mp_report;
struct mp_trace_tree;
/* Adds ops_summary_by_category, ops_summary and ops_unique_args (tl_ops.c). */
int tl_sheets_ops(struct mp_report *r, const struct mp_trace_tree *t,
                  struct mp_buf *(*new_sheet)(struct mp_report *, const char *));

/* Communication kernel names (nccl, rccl, cross_device_reduce). */
bool mp_report_is_comm_name(const char *name);

#endif
