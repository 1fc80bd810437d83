/* libFuzzer target for the perf model's args JSON reader (src/roofline/pjson.c),
 * which reads the "args" object of every CPU op of a trace.
 *
 * Each accepted document is walked through the public accessors: subtree
 * sizes must add up, every string and key must lie inside the decoded text
 * and be NUL-terminated, roof_pv_child / roof_pv_next / roof_pv_array_get must agree, and
 * roof_pv_object_get of each member's key must find a member with that key.
 * Differential against jansson: a document jansson accepts (shallow, its
 * numbers shorter than our 63-character limit) must be accepted with the same
 * values; the last of duplicate keys wins in both. Inputs with a NUL byte
 * are left out (jansson stops reading at one). Any mismatch traps. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "roofline/roofline_int.h"

static volatile unsigned g_touch;

/* Checks the subtree at v; returns its node count. */
static uint32_t walk(struct roof_pv_doc *d, struct pv *v, int depth)
{
    CHECK(v >= d->nodes && v < d->nodes + d->n);
    CHECK(v->size >= 1 && v->size <= (uint32_t)(d->nodes + d->n - v));
    CHECK(v->doc == d);
    CHECK(depth <= 70);
    if (v->key_off) {
        CHECK(v->key_off - 1 < d->tlen);
        const char *k = roof_pv_key(v);
        g_touch += fuzz_touch(k, strlen(k));
    }
    switch (v->type) {
    case ROOF_PV_STR: {
        CHECK(v->str_off + (size_t)v->n < d->tlen);
        const char *s = roof_pv_string_value(v);
        CHECK(s == d->text + v->str_off && s[v->n] == '\0');
        g_touch += fuzz_touch(s, v->n);
        CHECK(v->size == 1);
        return 1;
    }
    case ROOF_PV_ARR:
    case ROOF_PV_OBJ: {
        uint32_t total = 1;
        struct pv *c = v + 1;
        for (uint32_t i = 0; i < v->n; i++) {
            CHECK(roof_pv_child(v, i) == c);
            if (v->type == ROOF_PV_ARR)
                CHECK(roof_pv_array_get(v, i) == c && c->key_off == 0);
            else
                CHECK(c->key_off != 0 && roof_pv_object_get(v, roof_pv_key(c)) != NULL);
            total += walk(d, c, depth + 1);
            c = roof_pv_next(c);
        }
        CHECK(roof_pv_child(v, v->n) == NULL);
        CHECK(total == v->size);
        return total;
    }
    case ROOF_PV_NULL:
    case ROOF_PV_TRUE:
    case ROOF_PV_FALSE:
    case ROOF_PV_INT:
    case ROOF_PV_REAL:
        CHECK(v->size == 1);
        return 1;
    default:
        CHECK(0);
        return 0;
    }
}

static bool same(json_t *j, struct pv *v)
{
    switch (json_typeof(j)) {
    case JSON_NULL:
        return roof_pv_is_null(v);
    case JSON_TRUE:
        return roof_pv_is_true(v);
    case JSON_FALSE:
        return roof_pv_is_false(v);
    case JSON_INTEGER:
        return roof_pv_is_integer(v) && v->i == json_integer_value(j);
    case JSON_REAL:
        return roof_pv_is_real(v) &&
               (v->d == json_real_value(j) || (isnan(v->d) && isnan(json_real_value(j))));
    case JSON_STRING:
        return roof_pv_is_string(v) && v->n == json_string_length(j) &&
               memcmp(roof_pv_string_value(v), json_string_value(j), v->n) == 0;
    case JSON_ARRAY:
        if (!roof_pv_is_array(v) || v->n != json_array_size(j))
            return false;
        for (size_t i = 0; i < v->n; i++)
            if (!same(json_array_get(j, i), roof_pv_array_get(v, i)))
                return false;
        return true;
    case JSON_OBJECT: {
        if (!roof_pv_is_object(v) || v->n < json_object_size(j))
            return false;
        const char *k;
        json_t *m;
        json_object_foreach(j, k, m)
        {
            struct pv *c = roof_pv_object_get(v, k);
            if (!c || !same(m, c))
                return false;
        }
        return true;
    }
    }
    return false;
}

/* Inputs where jansson and we may legitimately differ. */
static bool skip_differential(const uint8_t *d, size_t n)
{
    int depth = 0, run = 0;
    bool in_str = false;
    if (memchr(d, 0, n))
        return true; /* jansson takes a NUL byte for the end of the input */
    for (size_t i = 0; i < n; i++) {
        uint8_t c = d[i];
        if (c >= 0x80)
            return true;
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"')
            in_str = true;
        else if ((c == '[' || c == '{') && ++depth > 60)
            return true;
        else if (c == ']' || c == '}')
            depth--;
        bool numch =
            (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
        run = numch ? run + 1 : 0;
        if (run >= 63)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct roof_pv_doc *d = calloc(1, sizeof(*d));
    CHECK(d != NULL);
    int rc = roof_pv_parse((const char *)data, size, d);
    CHECK(rc == 0 || rc == MP_EPARSE || rc == MP_ENOMEM);
    if (rc == 0) {
        CHECK(d->n >= 1);
        struct pv *root = roof_pv_root(d);
        CHECK(walk(d, root, 0) == d->n);
        (void)roof_pv_object_get(root, "");
        (void)roof_pv_object_get(root, "name");
    }
    if (!skip_differential(data, size)) {
        json_error_t je;
        json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        if (j) {
            CHECK(rc == 0);
            CHECK(same(j, roof_pv_root(d)));
        }
        json_decref(j);
    }
    roof_pv_free(d);
    free(d);
    return 0;
}
