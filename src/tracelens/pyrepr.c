/* Python text conventions for TraceLens-compatible CSV cells.
 *
 * TraceLens writes pandas DataFrames with to_csv: floats as repr() (shortest
 * round trip), trace args converted from JSON lists to tuples and printed
 * with Python's repr ("((16, 559, 1), (), ())", "('c10::BFloat16', '')"),
 * booleans as True/False and missing values as empty cells. */
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/jsonlex.h>
#include <magpie/trace.h>

#include "tracelens_int.h"

int tl_pyfloat(struct mp_buf *b, double v)
{
    char tmp[64];
    mp_fmt_pyfloat(v, tmp, sizeof(tmp));
    return mp_buf_puts(b, tmp);
}

int tl_pystr_repr(struct mp_buf *b, const char *s, size_t n)
{
    return mp_trace_pystr_repr(b, s, n);
}

int tl_json_to_pyrepr(struct mp_buf *b, const char *p, const char *e)
{
    return mp_trace_json_pyrepr(b, p, e, true);
}

int tl_json_to_pylist_repr(struct mp_buf *b, const char *p, const char *e)
{
    return mp_trace_json_pyrepr(b, p, e, false);
}

int tl_args_pyrepr(struct mp_buf *b, const char *args, size_t args_len, const char *key,
                   bool *present)
{
    *present = false;
    if (!args)
        return 0;
    struct mp_strview obj = {args, args_len}, v;
    if (mp_trace_json_find(obj, key, &v) != 0)
        return 0;
    *present = true;
    return tl_json_to_pyrepr(b, v.p, v.p + v.n);
}

static const char *const arg_fields[4] = {"Input Dims", "Input type", "Input Strides",
                                          "Concrete Inputs"};

/* One pass over a (valid) args object for the four shape fields; the last
 * occurrence of a key wins, as in Python. */
static void args_fields(const char *args, size_t len, struct mp_strview out[4])
{
    for (int i = 0; i < 4; i++)
        out[i].p = NULL, out[i].n = 0;
    if (!args)
        return;
    const char *p = mp_json_skip_ws(args, args + len), *e = args + len;
    if (p >= e || *p != '{')
        return;
    p = mp_json_skip_ws(p + 1, e);
    while (p < e && *p == '"') {
        const char *ke = mp_json_value_end(p, e); /* the key string with quotes */
        size_t kn = (size_t)(ke - p) - 2;
        p = mp_json_skip_ws(ke, e);
        if (p >= e || *p != ':')
            return;
        p = mp_json_skip_ws(p + 1, e);
        const char *ve = mp_json_value_end(p, e);
        for (int i = 0; i < 4; i++) {
            if (strlen(arg_fields[i]) == kn && memcmp(ke - kn - 1, arg_fields[i], kn) == 0) {
                out[i].p = p;
                out[i].n = (size_t)(ve - p);
            }
        }
        p = mp_json_next_item(ve, e);
    }
}

int tl_args_key(struct mp_buf *b, const char *args, size_t len)
{
    struct mp_strview f[4];
    args_fields(args, len, f);
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++) {
        if (i)
            rc = mp_buf_putc(b, '\x1f');
        if (!rc && f[i].p)
            rc = mp_trace_json_pyrepr(b, f[i].p, f[i].p + f[i].n, true);
    }
    return rc;
}

const char *tl_argkeys_get(struct tl_argkeys *k, const struct mp_trace_store *s, int32_t uid)
{
    if (!k->keys) {
        k->keys = mp_intern_new();
        if (!k->keys)
            return NULL;
        mp_i64map_init(&k->by_args);
        mp_buf_init(&k->tmp, 0);
    }
    const char *args = s->args[uid];
    int64_t addr = (int64_t)(intptr_t)args;
    int64_t *id = mp_i64map_get(&k->by_args, addr);
    if (!id) {
        mp_buf_reset(&k->tmp);
        if (tl_args_key(&k->tmp, args, args ? s->args_len[uid] : 0))
            return NULL;
        int32_t nid = mp_intern_add(k->keys, mp_buf_cstr(&k->tmp), k->tmp.len);
        if (nid < 0 || mp_i64map_put(&k->by_args, addr, nid))
            return NULL;
        return mp_intern_str(k->keys, nid);
    }
    return mp_intern_str(k->keys, (int32_t)*id);
}

void tl_argkeys_fini(struct tl_argkeys *k)
{
    mp_intern_free(k->keys);
    mp_i64map_fini(&k->by_args);
    mp_buf_fini(&k->tmp);
    memset(k, 0, sizeof(*k));
}
