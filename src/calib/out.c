/* The calibration as a TraceLens arch JSON (what --gpu_arch_json_path
 * reads) with magpie's fields under "magpie", as a terminal table, read
 * back, and kept in the per-GPU cache the roofline looks in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/calib.h>
#include <magpie/roofline.h>

static const char *status_name(enum mp_calib_status s)
{
    switch (s) {
    case MP_CALIB_OK:
        return "ok";
    case MP_CALIB_UNSUPPORTED:
        return "unsupported";
    case MP_CALIB_FAILED:
        return "failed";
    default:
        return "skipped";
    }
}

static enum mp_calib_status status_of(const char *s)
{
    if (!s || !strcmp(s, "ok"))
        return MP_CALIB_OK;
    if (!strcmp(s, "unsupported"))
        return MP_CALIB_UNSUPPORTED;
    if (!strcmp(s, "failed"))
        return MP_CALIB_FAILED;
    return MP_CALIB_SKIPPED;
}

/* a number rounded to 0.1 (0.001 below 10), null when not finite */
static json_t *num(double v)
{
    if (!isfinite(v))
        return json_null();
    double q = fabs(v) < 10 ? 1000 : 10;
    return json_real(round(v * q) / q);
}

static const struct mp_calib_item *find(const struct mp_calib_result *r, const char *key)
{
    for (int i = 0; i < r->n_items; i++)
        if (!strcmp(r->items[i].key, key) && r->items[i].status == MP_CALIB_OK)
            return &r->items[i];
    return NULL;
}

/* mem_bw_gbps: the better of streaming read and copy (read + write bytes),
 * which is what a memory-bound kernel of either kind can reach */
static const struct mp_calib_item *mem_bw(const struct mp_calib_result *r)
{
    const struct mp_calib_item *rd = find(r, "hbm_read"), *cp = find(r, "hbm_copy");
    if (rd && cp)
        return rd->value >= cp->value ? rd : cp;
    return rd ? rd : cp;
}

static json_t *item_json(const struct mp_calib_item *it)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(it->key));
    json_object_set_new(o, "status", json_string(status_name(it->status)));
    if (it->unit)
        json_object_set_new(o, "unit", json_string(it->unit));
    if (it->status == MP_CALIB_OK) {
        json_object_set_new(o, "value", num(it->value));
        json_object_set_new(o, "min", num(it->min));
        json_object_set_new(o, "max", num(it->max));
        json_object_set_new(o, "cov_pct", num(it->cov_pct));
        json_object_set_new(o, "repeats", json_integer(it->repeats));
        json_object_set_new(o, "sm_clock_mhz", num(it->sm_clock_mhz));
        json_object_set_new(o, "power_w", num(it->power_w));
        json_object_set_new(o, "temp_c", num(it->temp_c));
    }
    if (it->kind != MP_CALIB_GEMM && it->status == MP_CALIB_OK && it->bytes > 0)
        json_object_set_new(o, it->kind == MP_CALIB_VECTOR ? "flop_per_launch" : "bytes_per_launch",
                            json_real(it->bytes));
    if (it->kind == MP_CALIB_GEMM && it->m > 0) {
        json_t *s = json_array();
        json_array_append_new(s, json_integer(it->m));
        json_array_append_new(s, json_integer(it->n));
        json_array_append_new(s, json_integer(it->k));
        json_object_set_new(o, "shape_mnk", s);
        json_object_set_new(o, "layout", json_string("TN"));
        json_object_set_new(o, "algo", json_string(it->algo));
        json_object_set_new(o, "shapes_tried", json_integer(it->shapes_tried));
        json_object_set_new(o, "algos_tried", json_integer(it->algos_tried));
        json_object_set_new(o, "checked", json_boolean(it->checked));
        json_object_set_new(o, "max_rel_err",
                            isfinite(it->max_rel_err) ? json_real(it->max_rel_err) : json_null());
    }
    if (it->note[0])
        json_object_set_new(o, "note", json_string(it->note));
    return o;
}

static json_t *gpu_json(const struct mp_calib_result *r)
{
    json_t *g = json_object();
    json_object_set_new(g, "name", json_string(r->device_name));
    json_object_set_new(g, "uuid", json_string(r->uuid));
    json_object_set_new(g, "arch", json_string(r->arch));
    json_object_set_new(g, "sms", json_integer(r->sms));
    json_object_set_new(g, "memory_gb", num(r->memory_gb));
    json_object_set_new(g, "l2_mib", num(r->l2_mb));
    json_object_set_new(g, "driver", json_string(r->driver));
    json_object_set_new(g, "power_limit_w", num(r->power_limit_w));
    json_object_set_new(g, "sm_clock_max_mhz", num(r->sm_clock_max_mhz));
    json_object_set_new(g, "temp_start_c", num(r->temp_start_c));
    json_object_set_new(g, "temp_end_c", num(r->temp_end_c));
    return g;
}

int mp_calib_json(const struct mp_calib_result *r, struct mp_buf *b)
{
    json_t *root = json_object(), *tf = json_object(), *mg = json_object(), *figs = json_array();
    json_object_set_new(root, "name", json_string(r->device_name));
    const struct mp_calib_item *bw = mem_bw(r);
    json_object_set_new(root, "mem_bw_gbps", bw ? num(bw->value) : json_null());
    json_object_set_new(root, "memory_gb", num(r->memory_gb));
    for (int i = 0; i < r->n_items; i++) {
        const struct mp_calib_item *it = &r->items[i];
        if (it->status == MP_CALIB_OK && (it->kind == MP_CALIB_GEMM || it->kind == MP_CALIB_VECTOR))
            json_object_set_new(tf, it->key, num(it->value));
        json_array_append_new(figs, item_json(it));
    }
    json_object_set_new(root, "max_achievable_tflops", tf);
    json_object_set_new(mg, "calibration", json_integer(1));
    json_object_set_new(mg, "date", json_string(r->date));
    json_object_set_new(mg, "seconds", num(r->seconds));
    json_object_set_new(mg, "quick", json_boolean(r->quick));
    json_object_set_new(mg, "gpu", gpu_json(r));
    json_object_set_new(mg, "settings", json_string(r->settings));
    json_object_set_new(mg, "blas", json_string(r->blas));
    json_object_set_new(mg, "rtc", json_string(r->rtc));
    json_object_set_new(mg, "mem_bw_from", json_string(bw ? bw->key : ""));
    json_object_set_new(mg, "figures", figs);
    json_object_set_new(root, "magpie", mg);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!s)
        return MP_ENOMEM;
    int rc = mp_buf_puts(b, s);
    if (!rc)
        rc = mp_buf_putc(b, '\n');
    free(s);
    return rc;
}

/* ---- reading it back ---- */

static double dnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void sget(json_t *o, const char *k, char *out, size_t len)
{
    json_t *v = json_object_get(o, k);
    snprintf(out, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static void load_item(json_t *f, struct mp_calib_item *it)
{
    memset(it, 0, sizeof(*it));
    sget(f, "key", it->key, sizeof(it->key));
    json_t *st = json_object_get(f, "status");
    it->status = status_of(json_is_string(st) ? json_string_value(st) : NULL);
    char unit[16];
    sget(f, "unit", unit, sizeof(unit));
    it->unit = !strcmp(unit, "GB/s") ? "GB/s" : !strcmp(unit, "us") ? "us" : "TFLOP/s";
    it->kind = !strncmp(it->key, "matrix_", 7)   ? MP_CALIB_GEMM
               : !strncmp(it->key, "vector_", 7) ? MP_CALIB_VECTOR
               : !strcmp(it->unit, "us")         ? MP_CALIB_EXTRA
                                                 : MP_CALIB_MEMORY;
    it->value = dnum(f, "value");
    it->min = dnum(f, "min");
    it->max = dnum(f, "max");
    it->cov_pct = dnum(f, "cov_pct");
    it->sm_clock_mhz = dnum(f, "sm_clock_mhz");
    it->power_w = dnum(f, "power_w");
    it->temp_c = dnum(f, "temp_c");
    json_t *rep = json_object_get(f, "repeats");
    it->repeats = json_is_integer(rep) ? (int)json_integer_value(rep) : 0;
    json_t *s = json_object_get(f, "shape_mnk");
    if (json_is_array(s) && json_array_size(s) == 3) {
        it->m = (long)json_integer_value(json_array_get(s, 0));
        it->n = (long)json_integer_value(json_array_get(s, 1));
        it->k = (long)json_integer_value(json_array_get(s, 2));
    }
    sget(f, "algo", it->algo, sizeof(it->algo));
    sget(f, "note", it->note, sizeof(it->note));
    it->checked = json_is_true(json_object_get(f, "checked"));
    it->max_rel_err = dnum(f, "max_rel_err");
}

int mp_calib_load(const char *path, struct mp_calib_result *r, struct mp_diag *d)
{
    memset(r, 0, sizeof(*r));
    mp_diag_set_file(d, path);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        mp_diag_set(d, MP_EPARSE, "invalid JSON: %s", je.text);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return MP_EPARSE;
    }
    json_t *mg = json_object_get(root, "magpie"), *g = json_object_get(mg, "gpu");
    json_t *figs = json_object_get(mg, "figures");
    if (!json_is_object(g) || !json_is_array(figs)) {
        json_decref(root);
        mp_diag_set_field(d, "magpie");
        return mp_diag_set(d, MP_EINVAL,
                           "not a magpie calibration (no magpie.gpu / magpie.figures): a plain "
                           "arch file?");
    }
    sget(g, "name", r->device_name, sizeof(r->device_name));
    sget(g, "uuid", r->uuid, sizeof(r->uuid));
    sget(g, "arch", r->arch, sizeof(r->arch));
    sget(g, "driver", r->driver, sizeof(r->driver));
    r->sms = (int)json_integer_value(json_object_get(g, "sms"));
    r->memory_gb = dnum(g, "memory_gb");
    r->l2_mb = dnum(g, "l2_mib");
    r->power_limit_w = dnum(g, "power_limit_w");
    r->sm_clock_max_mhz = dnum(g, "sm_clock_max_mhz");
    r->temp_start_c = dnum(g, "temp_start_c");
    r->temp_end_c = dnum(g, "temp_end_c");
    sget(mg, "date", r->date, sizeof(r->date));
    sget(mg, "settings", r->settings, sizeof(r->settings));
    sget(mg, "blas", r->blas, sizeof(r->blas));
    sget(mg, "rtc", r->rtc, sizeof(r->rtc));
    r->seconds = dnum(mg, "seconds");
    r->quick = json_is_true(json_object_get(mg, "quick"));
    size_t i;
    json_t *f;
    json_array_foreach(figs, i, f)
    {
        if (r->n_items >= MP_CALIB_MAX_ITEMS || !json_is_object(f))
            break;
        load_item(f, &r->items[r->n_items++]);
    }
    json_decref(root);
    return 0;
}

/* ---- the terminal table ---- */

static void fmt_value(const struct mp_calib_item *it, char *out, size_t len)
{
    if (it->status != MP_CALIB_OK)
        snprintf(out, len, "%s", status_name(it->status));
    else if (!strcmp(it->unit, "us"))
        snprintf(out, len, "%.2f us", it->value);
    else
        snprintf(out, len, "%.1f %s", it->value, it->unit);
}

static void how(const struct mp_calib_item *it, char *out, size_t len)
{
    if (it->status == MP_CALIB_OK && it->kind == MP_CALIB_GEMM)
        snprintf(out, len, "%ldx%ldx%ld %s%s", it->m, it->n, it->k, it->algo,
                 it->checked ? ", output checked" : "");
    else
        snprintf(out, len, "%s", it->note);
}

int mp_calib_text(const struct mp_calib_result *r, double (*peak)(const char *key, void *u),
                  void *u, struct mp_buf *b)
{
    int rc = mp_buf_printf(b, "%s (%s, %d SMs, %.0f GB), %s, driver %s", r->device_name, r->arch,
                           r->sms, r->memory_gb, r->uuid[0] ? r->uuid : "uuid unknown",
                           r->driver[0] ? r->driver : "unknown");
    if (!rc && isfinite(r->power_limit_w))
        rc = mp_buf_printf(b, ", power limit %.0f W", r->power_limit_w);
    if (!rc)
        rc = mp_buf_printf(b, "\n%s; %s; %s%.1f s\n\n%-22s %16s %7s %10s %7s  %s\n",
                           r->blas[0] ? r->blas : "no cuBLASLt", r->rtc[0] ? r->rtc : "no NVRTC",
                           r->quick ? "quick, " : "", r->seconds, "figure", "measured", "spread",
                           "datasheet", "% of it", "how");
    for (int i = 0; !rc && i < r->n_items; i++) {
        const struct mp_calib_item *it = &r->items[i];
        if (it->status == MP_CALIB_SKIPPED)
            continue;
        char v[40], h[200], sp[16] = "", pk[16] = "", pct[16] = "";
        fmt_value(it, v, sizeof(v));
        how(it, h, sizeof(h));
        if (it->status == MP_CALIB_OK)
            snprintf(sp, sizeof(sp), "%.2f%%", it->cov_pct);
        double p = peak && it->status == MP_CALIB_OK ? peak(it->key, u) : NAN;
        if (isfinite(p) && p > 0) {
            snprintf(pk, sizeof(pk), "%.0f", p);
            snprintf(pct, sizeof(pct), "%.0f%%", it->value / p * 100);
        }
        rc = mp_buf_printf(b, "%-22s %16s %7s %10s %7s  %s\n", it->key, v, sp, pk, pct, h);
    }
    const struct mp_calib_item *bw = mem_bw(r);
    if (!rc && bw)
        rc = mp_buf_printf(b, "\nmem_bw_gbps = %.1f (%s)\n", bw->value, bw->key);
    return rc;
}

/* ---- the cache ---- */

static void clean(const char *s, char *out, size_t len)
{
    size_t j = 0;
    for (; *s && j + 1 < len; s++)
        out[j++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                                  (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'
                              ? *s
                              : '_');
    out[j] = '\0';
}

int mp_calib_cache_name(const struct mp_calib_result *r, char *out, size_t len)
{
    char u[96], dr[64], st[160];
    clean(r->uuid[0] ? r->uuid : r->device_name, u, sizeof(u));
    clean(r->driver[0] ? r->driver : "unknown", dr, sizeof(dr));
    clean(r->settings, st, sizeof(st));
    int n = snprintf(out, len, "%s_drv%s_%.0fW%s%s.json", u, dr,
                     isfinite(r->power_limit_w) ? r->power_limit_w : 0.0, st[0] ? "_" : "", st);
    return n < 0 || (size_t)n >= len ? MP_ENOMEM : 0;
}

int mp_calib_cache_save(const struct mp_calib_result *r, char *path_out, size_t len,
                        struct mp_diag *d)
{
    char dir[1024], name[256];
    if (mp_roofline_calibration_dir(dir, sizeof(dir)) != 0)
        return mp_diag_set(d, MP_ENOTFOUND, "no calibration cache folder (HOME unset)");
    int rc = mp_calib_cache_name(r, name, sizeof(name));
    if (!rc)
        rc = mp_fs_mkdirs(dir, d);
    if (rc)
        return rc;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    rc = mp_calib_json(r, &b);
    int n = snprintf(path_out, len, "%s/%s", dir, name);
    if (!rc && (n < 0 || (size_t)n >= len))
        rc = mp_diag_set(d, MP_ENOMEM, "cache path too long");
    if (!rc)
        rc = mp_fs_write_atomic(path_out, b.data, b.len, d);
    mp_buf_fini(&b);
    return rc;
}

/* one cached calibration, short: where, which GPU, when, the ceilings */
static json_t *cache_entry(const char *path)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *mg = json_object_get(root, "magpie"), *g = json_object_get(mg, "gpu");
    json_t *e = NULL;
    if (json_is_integer(json_object_get(mg, "calibration")) && json_is_object(g)) {
        e = json_object();
        json_object_set_new(e, "file", json_string(path));
        json_object_set(e, "name", json_object_get(g, "name"));
        json_object_set(e, "uuid", json_object_get(g, "uuid"));
        json_object_set(e, "driver", json_object_get(g, "driver"));
        json_object_set(e, "power_limit_w", json_object_get(g, "power_limit_w"));
        json_object_set(e, "date", json_object_get(mg, "date"));
        json_object_set(e, "mem_bw_gbps", json_object_get(root, "mem_bw_gbps"));
        json_object_set(e, "max_achievable_tflops", json_object_get(root, "max_achievable_tflops"));
    }
    json_decref(root);
    return e;
}

static int cmp_entry(const void *a, const void *b)
{
    json_t *const *x = a, *const *y = b;
    return strcmp(json_string_value(json_object_get(*x, "file")),
                  json_string_value(json_object_get(*y, "file")));
}

struct listing {
    const char *uuid;
    json_t *found[256];
    size_t n;
};

static void list_one(const char *path, void *user)
{
    struct listing *l = user;
    if (l->n >= sizeof(l->found) / sizeof(l->found[0]))
        return;
    json_t *e = cache_entry(path);
    const char *u = e ? json_string_value(json_object_get(e, "uuid")) : NULL;
    if (e && l->uuid && (!u || strcmp(u, l->uuid) != 0)) {
        json_decref(e);
        e = NULL;
    }
    if (e)
        l->found[l->n++] = e;
}

int mp_calib_cache_json(const char *uuid, struct mp_buf *b)
{
    json_t *arr = json_array();
    struct listing l = {.uuid = uuid};
    mp_roofline_calibration_each(list_one, &l);
    json_t **found = l.found;
    size_t n = l.n;
    qsort(found, n, sizeof(json_t *), cmp_entry);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, found[i]);
    char *s = json_dumps(arr, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(arr);
    int rc = s ? mp_buf_puts(b, s) : MP_ENOMEM;
    free(s);
    return rc;
}
