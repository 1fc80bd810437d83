/* Private helpers of the TraceLens-compatible report (src/analysis/tl_*.c). */
#ifndef MP_TL_INT_H
#define MP_TL_INT_H

#include <magpie/base.h>

#include <stdbool.h>
#include <stddef.h>

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

/* Communication kernel names (nccl, rccl, cross_device_reduce). */
bool mp_report_is_comm_name(const char *name);

#endif
