/* Loading benchmark runs for `benchmark compare`: a magpie benchmark
 * workspace (benchmark_report.json, config.yaml, inferencex_result.json and
 * its per-request JSONL), a workspace of repeats (run_1 .. run_N), a result
 * JSON of `magpie benchmark --save-result` or `vllm bench serve
 * --save-result --save-detailed`, or a ','-separated list of these as the
 * repeats of one side. Besides the requests it records the fields that say
 * what was measured (model, dataset, lengths, rate, concurrency, engine
 * arguments, magpie version: they must match) and where (engine version,
 * image, GPU: listed when they differ). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <magpie/bench_compare.h>
#include <magpie/yaml.h>

#include "loadgen_int.h"

#define MAX_FILE ((size_t)4 << 30)

/* ---- sides ---- */

void mp_bcmp_side_free(struct mp_bcmp_side *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_runs; i++)
        mp_bcmp_run_fini(&s->runs[i]);
    free(s->runs);
    for (size_t i = 0; i < s->n_fields; i++) {
        free(s->fields[i].name);
        free(s->fields[i].value);
    }
    free(s->fields);
    for (size_t i = 0; i < s->n_notes; i++)
        free(s->notes[i]);
    free(s->notes);
    for (size_t i = 0; i < s->n_kernels; i++)
        free(s->kernels[i].name);
    free(s->kernels);
    free(s->label);
    free(s->source);
    free(s);
}

int mp_bcmp_side_from_runs(const char *label, struct mp_bcmp_run *runs, size_t n_runs,
                           struct mp_bcmp_side **out)
{
    struct mp_bcmp_side *s = calloc(1, sizeof(*s));
    if (!s || !(s->label = strdup(label ? label : "")) || !(s->source = strdup(s->label))) {
        mp_bcmp_side_free(s);
        return MP_ENOMEM;
    }
    s->runs = runs;
    s->n_runs = n_runs;
    *out = s;
    return 0;
}

/* Numbers in one spelling ("8" and "8.0" are the same rate), inf and null
 * spelled one way. */
static void normalise(const char *v, char *out, size_t len)
{
    while (isspace((unsigned char)*v))
        v++;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    while (end && isspace((unsigned char)*end))
        end++;
    if (*v && end && !*end && errno == 0 && !isnan(x)) {
        if (isinf(x))
            snprintf(out, len, "%s", x > 0 ? "inf" : "-inf");
        else
            snprintf(out, len, "%.15g", x);
    } else if (!*v || !strcmp(v, "null") || !strcmp(v, "None")) {
        snprintf(out, len, "none");
    } else {
        snprintf(out, len, "%s", v);
    }
}

int mp_bcmp_side_add_field(struct mp_bcmp_side *s, const char *name, const char *value,
                           bool workload, bool approx)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (!strcmp(s->fields[i].name, name))
            return 0; /* the first source of a field wins */
    struct mp_bcmp_field *f = mp_reallocarray(s->fields, s->n_fields + 1, sizeof(*f));
    if (!f)
        return MP_ENOMEM;
    s->fields = f;
    size_t len = strlen(value) + 64;
    char *v = malloc(len);
    char *nm = strdup(name);
    if (!v || !nm) {
        free(v);
        free(nm);
        return MP_ENOMEM;
    }
    normalise(value, v, len);
    f[s->n_fields++] = (struct mp_bcmp_field){nm, v, workload, approx};
    return 0;
}

static int add_note(struct mp_bcmp_side *s, const char *fmt, const char *a, size_t n)
{
    char buf[1200];
    snprintf(buf, sizeof(buf), fmt, a, n);
    char **v = mp_reallocarray(s->notes, s->n_notes + 1, sizeof(*v));
    if (!v)
        return MP_ENOMEM;
    s->notes = v;
    if (!(v[s->n_notes] = strdup(buf)))
        return MP_ENOMEM;
    s->n_notes++;
    return 0;
}

/* JSON scalar as text ("" for objects and arrays). */
static void json_text(const json_t *v, char *out, size_t len)
{
    if (json_is_string(v))
        snprintf(out, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(out, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, len, "%.17g", json_real_value(v));
    else if (json_is_true(v))
        snprintf(out, len, "true");
    else if (json_is_false(v))
        snprintf(out, len, "false");
    else if (json_is_null(v) || !v)
        snprintf(out, len, "none");
    else
        out[0] = 0;
}

static int field_json(struct mp_bcmp_side *s, const char *name, const json_t *v, bool workload)
{
    if (!v)
        return 0;
    char buf[4096];
    json_text(v, buf, sizeof(buf));
    return mp_bcmp_side_add_field(s, name, buf, workload, false);
}

/* ---- reading files ---- */

static int slurp(const char *path, char **out, size_t *len, struct mp_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        mp_diag_set(d, MP_ENOTFOUND, "cannot open: %s", strerror(errno));
        mp_diag_set_file(d, path);
        return MP_ENOTFOUND;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    while (b) {
        if (n + 1 >= cap) {
            if (cap >= MAX_FILE) {
                free(b);
                fclose(f);
                mp_diag_set(d, MP_ENOMEM, "file larger than 4 GiB");
                mp_diag_set_file(d, path);
                return MP_ENOMEM;
            }
            char *nb = realloc(b, cap * 2);
            if (!nb)
                break;
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    bool err = ferror(f);
    fclose(f);
    if (!b || err) {
        free(b);
        mp_diag_set(d, b ? MP_EIO : MP_ENOMEM, b ? "read error" : "out of memory");
        mp_diag_set_file(d, path);
        return b ? MP_EIO : MP_ENOMEM;
    }
    b[n] = 0;
    *out = b;
    *len = n;
    return 0;
}

static int load_json(const char *path, json_t **out, struct mp_diag *d)
{
    char *text;
    size_t n;
    int rc = slurp(path, &text, &n, d);
    if (rc)
        return rc;
    json_error_t je;
    *out = json_loadb(text, n, 0, &je);
    free(text);
    if (!*out) {
        mp_diag_set(d, MP_EPARSE, "not valid JSON: %s", je.text);
        mp_diag_set_file(d, path);
        mp_diag_set_pos(d, je.position, je.line, je.column);
        return MP_EPARSE;
    }
    return 0;
}

/* growable arrays of the raw per-request data */
struct raw {
    double *ttft, *e2el, *itl;
    int32_t *out, *plen;
    uint32_t *off, *nitl;
    size_t n, cap, n_itl, cap_itl, failed;
};

static void raw_fini(struct raw *r)
{
    free(r->ttft);
    free(r->e2el);
    free(r->itl);
    free(r->out);
    free(r->plen);
    free(r->off);
    free(r->nitl);
}

static int grow(void **p, size_t elem, size_t cap)
{
    void *q = mp_reallocarray(*p, cap, elem);
    if (!q)
        return MP_ENOMEM;
    *p = q;
    return 0;
}

static int raw_reserve(struct raw *r, size_t n_itl)
{
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 256;
        if (grow((void **)&r->ttft, sizeof(double), c) ||
            grow((void **)&r->e2el, sizeof(double), c) ||
            grow((void **)&r->out, sizeof(int32_t), c) ||
            grow((void **)&r->plen, sizeof(int32_t), c) ||
            grow((void **)&r->off, sizeof(uint32_t), c) ||
            grow((void **)&r->nitl, sizeof(uint32_t), c))
            return MP_ENOMEM;
        r->cap = c;
    }
    if (r->n_itl + n_itl > UINT32_MAX)
        return MP_ENOMEM;
    if (r->n_itl + n_itl > r->cap_itl) {
        size_t c = r->cap_itl ? r->cap_itl : 4096;
        while (c < r->n_itl + n_itl)
            c *= 2;
        if (grow((void **)&r->itl, sizeof(double), c))
            return MP_ENOMEM;
        r->cap_itl = c;
    }
    return 0;
}

static int raw_build(struct raw *r, double duration_s, const char *source, struct mp_bcmp_run *run)
{
    int rc = mp_bcmp_run_build(r->ttft, r->e2el, r->out, r->plen, r->itl ? r->itl : r->ttft, r->off,
                               r->nitl, r->n, r->failed, duration_s, run);
    if (!rc && !(run->source = strdup(source))) {
        mp_bcmp_run_fini(run);
        rc = MP_ENOMEM;
    }
    return rc;
}

static int bad_line(struct mp_diag *d, const char *path, long line, const char *field,
                    const char *what)
{
    mp_diag_set(d, MP_EPARSE, "%s", what);
    mp_diag_set_file(d, path);
    mp_diag_set_pos(d, -1, line, 0);
    if (field)
        mp_diag_set_field(d, field);
    return MP_EPARSE;
}

/* The per-request JSONL of the load generator (mp_loadgen_requests_jsonl):
 * times in ns from the run's start. duration_s <= 0: first start to last
 * event. */
static int load_jsonl(const char *path, double duration_s, struct mp_bcmp_run *run,
                      struct mp_diag *d)
{
    char *text;
    size_t len;
    int rc = slurp(path, &text, &len, d);
    if (rc)
        return rc;
    struct raw r;
    memset(&r, 0, sizeof(r));
    double t_first = INFINITY, t_last = 0;
    long line = 0;
    char *p = text;
    while (!rc && p < text + len) {
        char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        line++;
        char *cur = p;
        p += n + (e ? 1 : 0);
        if (n == 0 || (n == 1 && cur[0] == '\r'))
            continue;
        json_error_t je;
        json_t *o = json_loadb(cur, n, 0, &je);
        if (!json_is_object(o)) {
            json_decref(o);
            rc = bad_line(d, path, line, NULL, "expected one JSON object per line");
            break;
        }
        json_t *ev = json_object_get(o, "events_ns"), *st = json_object_get(o, "start_ns");
        if (!json_is_true(json_object_get(o, "success")) || !json_array_size(ev)) {
            r.failed++;
            json_decref(o);
            continue;
        }
        if (!json_is_integer(st)) {
            json_decref(o);
            rc = bad_line(d, path, line, "start_ns", "expected an integer (ns)");
            break;
        }
        size_t ne = json_array_size(ev);
        if ((rc = raw_reserve(&r, ne - 1))) {
            json_decref(o);
            mp_diag_set(d, rc, "out of memory");
            break;
        }
        double start = (double)json_integer_value(st), prev = 0, first = 0;
        for (size_t j = 0; j < ne; j++) {
            json_t *x = json_array_get(ev, j);
            if (!json_is_integer(x)) {
                rc = bad_line(d, path, line, "events_ns", "expected integers (ns)");
                break;
            }
            double t = (double)json_integer_value(x);
            if (j == 0)
                first = t;
            else
                r.itl[r.n_itl + j - 1] = (t - prev) / 1e6;
            prev = t;
        }
        json_t *ot = json_object_get(o, "output_tokens"), *pl = json_object_get(o, "prompt_len");
        long long out = json_is_integer(ot) ? json_integer_value(ot) : 0;
        r.ttft[r.n] = (first - start) / 1e6;
        r.e2el[r.n] = (prev - start) / 1e6;
        r.out[r.n] = (int32_t)(out > 0 ? out : (long long)ne); /* as the metrics do */
        r.plen[r.n] = json_is_integer(pl) ? (int32_t)json_integer_value(pl) : 0;
        r.off[r.n] = (uint32_t)r.n_itl;
        r.nitl[r.n] = (uint32_t)(ne - 1);
        r.n_itl += ne - 1;
        r.n++;
        t_first = fmin(t_first, start / 1e9);
        t_last = fmax(t_last, prev / 1e9);
        json_decref(o);
    }
    free(text);
    if (!rc && r.n == 0)
        rc = bad_line(d, path, 0, NULL, "no successful request in the file");
    if (!rc) {
        if (!(duration_s > 0))
            duration_s = t_last - fmin(t_first, 0);
        rc = raw_build(&r, duration_s, path, run);
        if (rc)
            mp_diag_set(d, rc, "out of memory");
    }
    raw_fini(&r);
    return rc;
}

static double num_or(const json_t *o, const char *k, double dflt)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* The per-request arrays of a vLLM-format result (--save-detailed): ttfts
 * and itls in seconds, output_lens, optional latencies (magpie writes them,
 * vLLM does not), input_lens and errors (start_times are not needed). */
static int load_result_arrays(const char *path, const json_t *res, struct mp_bcmp_run *run,
                              struct mp_diag *d)
{
    const json_t *ttfts = json_object_get(res, "ttfts"), *itls = json_object_get(res, "itls"),
                 *lat = json_object_get(res, "latencies"),
                 *ol = json_object_get(res, "output_lens"),
                 *il = json_object_get(res, "input_lens"), *errs = json_object_get(res, "errors");
    size_t n = json_array_size(ttfts);
    const char *missing = !json_is_array(ttfts)  ? "ttfts"
                          : !json_is_array(itls) ? "itls"
                          : !json_is_array(ol)   ? "output_lens"
                                                 : NULL;
    if (missing) {
        mp_diag_set(d, MP_EINVAL,
                    "no per-request data: '%s' is missing (save the result with "
                    "--save-detailed, or keep the .requests.jsonl beside it)",
                    missing);
        mp_diag_set_file(d, path);
        mp_diag_set_field(d, missing);
        return MP_EINVAL;
    }
    /* vLLM does not save latencies: E2EL = TTFT + the gaps, its own definition */
    if (!json_is_array(lat))
        lat = NULL;
    if (json_array_size(itls) != n || (lat && json_array_size(lat) != n) ||
        json_array_size(ol) != n) {
        mp_diag_set(d, MP_EINVAL, "ttfts, itls, latencies and output_lens differ in length");
        mp_diag_set_file(d, path);
        mp_diag_set_field(d, "itls");
        return MP_EINVAL;
    }
    struct raw r;
    memset(&r, 0, sizeof(r));
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const json_t *e = json_array_get(errs, i), *it = json_array_get(itls, i);
        long long out =
            json_is_integer(json_array_get(ol, i)) ? json_integer_value(json_array_get(ol, i)) : 0;
        bool ok = json_is_string(e) ? json_string_length(e) == 0 : out > 0;
        if (!ok) {
            r.failed++;
            continue;
        }
        size_t ni = json_array_size(it);
        if ((rc = raw_reserve(&r, ni))) {
            mp_diag_set(d, rc, "out of memory");
            break;
        }
        double sum = 0;
        for (size_t j = 0; j < ni; j++) {
            r.itl[r.n_itl + j] = json_number_value(json_array_get(it, j)) * 1e3;
            sum += r.itl[r.n_itl + j];
        }
        r.ttft[r.n] = json_number_value(json_array_get(ttfts, i)) * 1e3;
        r.e2el[r.n] = lat ? json_number_value(json_array_get(lat, i)) * 1e3 : r.ttft[r.n] + sum;
        r.out[r.n] = (int32_t)out;
        r.plen[r.n] = (int32_t)json_integer_value(json_array_get(il, i));
        r.off[r.n] = (uint32_t)r.n_itl;
        r.nitl[r.n] = (uint32_t)ni;
        r.n_itl += ni;
        r.n++;
    }
    if (!rc && r.n == 0) {
        mp_diag_set(d, MP_EINVAL, "no successful request in the result");
        mp_diag_set_file(d, path);
        rc = MP_EINVAL;
    }
    if (!rc && (rc = raw_build(&r, num_or(res, "duration", 0), path, run)))
        mp_diag_set(d, rc, "out of memory");
    raw_fini(&r);
    return rc;
}

/* Fields of a vLLM-format result. */
static int result_fields(struct mp_bcmp_side *s, const json_t *res)
{
    int rc = 0;
    rc |= field_json(s, "model", json_object_get(res, "model_id"), true);
    rc |= field_json(s, "backend", json_object_get(res, "backend"), true);
    rc |= field_json(s, "num_prompts", json_object_get(res, "num_prompts"), true);
    rc |= field_json(s, "request_rate", json_object_get(res, "request_rate"), true);
    rc |= field_json(s, "burstiness", json_object_get(res, "burstiness"), true);
    rc |= field_json(s, "max_concurrency", json_object_get(res, "max_concurrency"), true);
    const json_t *mg = json_object_get(res, "magpie");
    rc |= field_json(s, "dataset", json_object_get(mg, "dataset"), true);
    rc |= field_json(s, "magpie_version", json_object_get(mg, "version"), true);
    rc |= field_json(s, "tokenizer", json_object_get(res, "tokenizer_id"), false);
    double done = num_or(res, "completed", 0);
    if (done > 0) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%.1f", num_or(res, "total_input_tokens", 0) / done);
        rc |= mp_bcmp_side_add_field(s, "mean_prompt_tokens", buf, true, true);
        snprintf(buf, sizeof(buf), "%.1f", num_or(res, "total_output_tokens", 0) / done);
        rc |= mp_bcmp_side_add_field(s, "mean_output_tokens", buf, true, true);
    }
    return rc ? MP_ENOMEM : 0;
}

/* A result JSON and its run: the sibling NAME.requests.jsonl when there is
 * one (exact event times), else the arrays in the JSON. */
static int load_result_file(const char *path, struct mp_bcmp_side *s, struct mp_bcmp_run *run,
                            bool fields, struct loadgen_engine_acc *acc, struct mp_diag *d)
{
    json_t *res = NULL;
    int rc = load_json(path, &res, d);
    if (rc)
        return rc;
    if (!json_is_object(res)) {
        json_decref(res);
        mp_diag_set(d, MP_EINVAL, "expected a benchmark result object");
        mp_diag_set_file(d, path);
        return MP_EINVAL;
    }
    if (fields && (rc = result_fields(s, res))) {
        json_decref(res);
        return mp_diag_set(d, rc, "out of memory");
    }
    loadgen_engine_add(acc, json_object_get(json_object_get(res, "magpie"), "engine_metrics"));
    size_t n = strlen(path);
    char *side = malloc(n + 32);
    if (!side) {
        json_decref(res);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    snprintf(side, n + 32, "%.*s.requests.jsonl",
             (int)(mp_str_ends_with(path, ".json") ? n - 5 : n), path);
    FILE *f = fopen(side, "r");
    if (f) {
        fclose(f);
        rc = load_jsonl(side, num_or(res, "duration", 0), run, d);
    } else {
        rc = load_result_arrays(path, res, run, d);
    }
    free(side);
    json_decref(res);
    return rc;
}

/* --port N, --host H and --name X do not change what the engine computes. */
static void engine_args(const char *cmd, char *out, size_t len)
{
    size_t k = 0;
    const char *p = cmd;
    bool skip_next = false;
    while (*p && k + 1 < len) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t n = (size_t)(p - w);
        if (!n)
            break;
        if (skip_next) {
            skip_next = false;
            continue;
        }
        bool flag = false;
        static const char *const drop[] = {"--port", "--host", "--name"};
        for (int i = 0; i < 3; i++) {
            size_t m = strlen(drop[i]);
            if (n == m && !strncmp(w, drop[i], m))
                skip_next = flag = true;
            else if (n > m && !strncmp(w, drop[i], m) && w[m] == '=')
                flag = true;
        }
        if (flag)
            continue;
        k += (size_t)snprintf(out + k, len - k, "%s%.*s", k ? " " : "", (int)n, w);
        if (k >= len)
            k = len - 1;
    }
    out[k] = 0;
}

/* The workload's envs in config.yaml under their comparison names. */
static const char *const ENV_NAMES[][2] = {
    {"ISL", "isl"},
    {"OSL", "osl"},
    {"CONC", "max_concurrency"},
    {"REQUEST_RATE", "request_rate"},
    {"NUM_PROMPTS", "num_prompts"},
    {"NUM_WARMUPS", "num_warmups"},
    {"RANDOM_RANGE_RATIO", "random_range_ratio"},
};

static int config_fields(struct mp_bcmp_side *s, const char *dir, struct mp_diag *d)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/config.yaml", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    fclose(f);
    struct mp_yaml_doc *doc = NULL;
    int rc = mp_yaml_load_file(path, &doc, d);
    if (rc)
        return rc;
    const struct mp_yaml_node *b = mp_yaml_get(mp_yaml_root(doc), "benchmark");
    const struct mp_yaml_node *envs = mp_yaml_get(b, "envs"), *prec = mp_yaml_get(b, "precision");
    if (prec && prec->kind == MP_YAML_SCALAR)
        rc |= mp_bcmp_side_add_field(s, "precision", prec->str, true, false);
    for (size_t i = 0; envs && envs->kind == MP_YAML_MAP && i < envs->n; i++) {
        const char *k = envs->keys[i]->str, *v = envs->vals[i]->str ? envs->vals[i]->str : "";
        if (!k)
            continue;
        char name[300];
        snprintf(name, sizeof(name), "env.%s", k);
        for (size_t j = 0; j < sizeof(ENV_NAMES) / sizeof(ENV_NAMES[0]); j++)
            if (!strcmp(k, ENV_NAMES[j][0]))
                snprintf(name, sizeof(name), "%s", ENV_NAMES[j][1]);
        /* where the client sends, not what is measured */
        if (!strcmp(k, "PORT") || !strcmp(k, "BENCHMARK_BASE_URL"))
            continue;
        rc |= mp_bcmp_side_add_field(s, name, v, true, false);
    }
    mp_yaml_free(doc);
    return rc ? MP_ENOMEM : 0;
}

static int report_fields(struct mp_bcmp_side *s, const json_t *rep)
{
    int rc = 0;
    const json_t *mg = json_object_get(rep, "magpie"), *eng = json_object_get(mg, "engine");
    rc |= field_json(s, "model", json_object_get(rep, "model"), true);
    rc |= field_json(s, "model_revision", json_object_get(mg, "model_revision"), true);
    rc |= field_json(s, "magpie_version", json_object_get(mg, "version"), true);
    rc |= field_json(s, "profiling", json_object_get(rep, "profiling_enabled"), true);
    const json_t *cmd = json_object_get(eng, "command");
    if (json_is_string(cmd)) {
        char buf[8192] = "";
        engine_args(json_string_value(cmd), buf, sizeof(buf));
        rc |= mp_bcmp_side_add_field(s, "engine.args", buf, true, false);
    }
    rc |= field_json(s, "engine", json_object_get(rep, "framework"), false);
    rc |= field_json(s, "engine.version", json_object_get(eng, "version"), false);
    rc |= field_json(s, "engine.image", json_object_get(eng, "image"), false);
    rc |= field_json(s, "engine.image_id", json_object_get(eng, "image_id"), false);
    rc |= field_json(s, "run_mode", json_object_get(mg, "run_mode"), false);
    const json_t *gpu = json_object_get(mg, "gpu");
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)gpu, k, v)
    {
        char name[300];
        snprintf(name, sizeof(name), "gpu.%s", k);
        if (!json_is_object(v) && !json_is_array(v))
            rc |= field_json(s, name, v, false);
    }
    return rc ? MP_ENOMEM : 0;
}

/* gap_analysis.top_kernels of a profiled run: kernel time side by side. */
static int report_kernels(struct mp_bcmp_side *s, const json_t *rep)
{
    const json_t *top = json_object_get(json_object_get(rep, "gap_analysis"), "top_kernels");
    size_t n = json_array_size(top);
    if (!n || s->kernels)
        return 0;
    s->kernels = calloc(n, sizeof(*s->kernels));
    if (!s->kernels)
        return MP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *k = json_array_get(top, i), *nm = json_object_get(k, "name");
        if (!json_is_string(nm))
            continue;
        struct mp_bcmp_kernel *x = &s->kernels[s->n_kernels];
        if (!(x->name = strdup(json_string_value(nm))))
            return MP_ENOMEM;
        x->total_us = num_or(k, "self_cuda_total_us", 0);
        x->pct = num_or(k, "pct_total", 0);
        x->calls = (unsigned long long)num_or(k, "calls", 0);
        s->n_kernels++;
    }
    return 0;
}

static bool is_file(const char *p)
{
    FILE *f = fopen(p, "r");
    if (f)
        fclose(f);
    return f != NULL && !mp_fs_is_dir(p);
}

/* One run directory: inferencex_result.json (+ .requests.jsonl). */
static int load_run_dir(const char *dir, struct mp_bcmp_side *s, struct mp_bcmp_run *run,
                        bool fields, struct loadgen_engine_acc *acc, struct mp_diag *d)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/inferencex_result.json", dir);
    if (is_file(path))
        return load_result_file(path, s, run, fields, acc, d);
    snprintf(path, sizeof(path), "%s/inferencex_result.requests.jsonl", dir);
    if (is_file(path))
        return load_jsonl(path, 0, run, d);
    mp_diag_set(d, MP_ENOTFOUND,
                "no inferencex_result.json or inferencex_result.requests.jsonl: not a benchmark "
                "workspace (did the benchmark run?)");
    mp_diag_set_file(d, dir);
    return MP_ENOTFOUND;
}

static int push_run(struct mp_bcmp_side *s, struct mp_bcmp_run **slot)
{
    struct mp_bcmp_run *v = mp_reallocarray(s->runs, s->n_runs + 1, sizeof(*v));
    if (!v)
        return MP_ENOMEM;
    s->runs = v;
    memset(&v[s->n_runs], 0, sizeof(*v));
    *slot = &v[s->n_runs];
    return 0;
}

/* One element of a path list: adds its runs (and, for the first, fields). */
static int load_one(const char *path, struct mp_bcmp_side *s, bool fields,
                    struct loadgen_engine_acc *acc, struct mp_diag *d)
{
    struct mp_bcmp_run *run;
    int rc;
    if (!mp_fs_is_dir(path)) {
        if (!mp_fs_exists(path)) {
            mp_diag_set(d, MP_ENOTFOUND, "no such file or directory");
            mp_diag_set_file(d, path);
            return MP_ENOTFOUND;
        }
        if ((rc = push_run(s, &run)))
            return mp_diag_set(d, rc, "out of memory");
        rc = load_result_file(path, s, run, fields, acc, d);
        if (!rc)
            s->n_runs++;
        return rc;
    }
    char p[4200];
    snprintf(p, sizeof(p), "%s/benchmark_report.json", path);
    json_t *rep = NULL;
    if (is_file(p) && (rc = load_json(p, &rep, d)))
        return rc;
    if (fields && rep && ((rc = report_fields(s, rep)) || (rc = report_kernels(s, rep)))) {
        json_decref(rep);
        return mp_diag_set(d, rc, "out of memory");
    }
    json_decref(rep);
    if (fields && (rc = config_fields(s, path, d)))
        return rc;
    /* repeats: run_1, run_2, ... */
    size_t k = 1;
    for (;; k++) {
        snprintf(p, sizeof(p), "%s/run_%zu", path, k);
        if (!mp_fs_is_dir(p))
            break;
        if ((rc = push_run(s, &run)))
            return mp_diag_set(d, rc, "out of memory");
        if ((rc = load_run_dir(p, s, run, fields && k == 1, acc, d)))
            return rc;
        s->n_runs++;
    }
    if (k > 1)
        return 0;
    if ((rc = push_run(s, &run)))
        return mp_diag_set(d, rc, "out of memory");
    if ((rc = load_run_dir(path, s, run, fields, acc, d)))
        return rc;
    s->n_runs++;
    return 0;
}

int mp_bcmp_load(const char *path, const char *label, struct mp_bcmp_side **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_bcmp_side *s = calloc(1, sizeof(*s));
    if (!s || !(s->source = strdup(path)) || !(s->label = strdup(label ? label : path))) {
        mp_bcmp_side_free(s);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    char *list = strdup(path);
    int rc = list ? 0 : mp_diag_set(d, MP_ENOMEM, "out of memory");
    char *save = NULL;
    bool first = true;
    struct loadgen_engine_acc acc;
    loadgen_engine_init(&acc, &s->engine);
    for (char *t = list ? strtok_r(list, ",", &save) : NULL; t && !rc;
         t = strtok_r(NULL, ",", &save)) {
        rc = load_one(t, s, first, &acc, d);
        first = false;
    }
    free(list);
    loadgen_engine_end(&acc);
    if (!rc && s->n_runs == 0)
        rc = mp_diag_set(d, MP_EINVAL, "no runs in '%s'", path);
    for (size_t i = 0; !rc && i < s->n_runs; i++)
        if (s->runs[i].failed)
            rc = add_note(s, "%s: %zu failed request(s) left out", s->runs[i].source,
                          s->runs[i].failed);
    if (rc) {
        mp_bcmp_side_free(s);
        return rc;
    }
    *out = s;
    return 0;
}
