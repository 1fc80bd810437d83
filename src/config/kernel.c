/* The kernel config (-k) of analyze / compare: `kernel` and `kernels`
 * entries (Magpie's KernelEvalConfig keys plus magpie's reference-mode and
 * launch keys) and the performance / correctness / scheduler / latency /
 * ray_config overrides. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"

const char *mp_kernel_dtype_canonical(const char *name)
{
    static const struct {
        const char *alias, *canon;
    } tab[] = {
        {"float64", "float64"},
        {"double", "float64"},
        {"fp64", "float64"},
        {"float32", "float32"},
        {"float", "float32"},
        {"fp32", "float32"},
        {"float16", "float16"},
        {"half", "float16"},
        {"fp16", "float16"},
        {"bfloat16", "bfloat16"},
        {"bf16", "bfloat16"},
        {"float8_e4m3fn", "float8_e4m3fn"},
        {"float8_e4m3", "float8_e4m3fn"},
        {"fp8", "float8_e4m3fn"},
        {"fp8_e4m3", "float8_e4m3fn"},
        {"float8_e4m3fnuz", "float8_e4m3fnuz"},
        {"float8_e5m2", "float8_e5m2"},
        {"fp8_e5m2", "float8_e5m2"},
        {"float8_e5m2fnuz", "float8_e5m2fnuz"},
        {"int8", "int8"},
        {"int16", "int16"},
        {"int32", "int32"},
        {"int64", "int64"},
        {"uint8", "uint8"},
        {"bool", "bool"},
    };

    if (!name)
        return NULL;
    if (strncmp(name, "torch.", 6) == 0)
        name += 6;
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (strcasecmp(name, tab[i].alias) == 0)
            return tab[i].canon;
    return NULL;
}

void mp_kernel_spec_init(struct mp_kernel_spec *k)
{
    memset(k, 0, sizeof(*k));
    k->type = MP_KERNEL_HIP;
    k->size = 0; /* auto: 1 Mi elements in 1-D, the product of global_size otherwise */
    k->atol = -1;
    k->rtol = -1;
    k->seeds = 3;
}

void mp_kernel_spec_fini(struct mp_kernel_spec *k)
{
    if (!k)
        return;
    free(k->id);
    for (int i = 0; i < k->nsources; i++)
        free(k->sources[i]);
    free((void *)k->sources);
    free(k->working_dir);
    for (int i = 0; i < k->nenv; i++)
        free(k->env[i]);
    free((void *)k->env);
    mp_cmds_fini(&k->compile);
    mp_cmds_fini(&k->testcase);
    mp_cmds_fini(&k->prof);
    free(k->bench_module);
    free(k->bench_callable);
    free(k->bench_get_inputs);
    free(k->get_inputs_func);
    free(k->get_init_inputs_func);
    free(k->dtype);
    free(k->reference);
    free(k->kernel_name);
    memset(k, 0, sizeof(*k));
}

int mp_kernel_config_add(struct mp_kernel_config *c, struct mp_kernel_spec *k)
{
    struct mp_kernel_spec *nv = mp_reallocarray(c->kernels, (size_t)c->nkernels + 1, sizeof(*nv));
    if (!nv)
        return MP_ENOMEM;
    c->kernels = nv;
    const struct mp_kernel_lang *lang = mp_kernel_lang_get(k->type);
    if (lang && k->atol < 0) /* the language's default, else the dtype's (< 0) */
        k->atol = lang->atol;
    if (lang && k->rtol < 0)
        k->rtol = lang->rtol;
    c->kernels[c->nkernels++] = *k;
    memset(k, 0, sizeof(*k));
    return 0;
}

static int load_dims(const struct mp_yaml_node *n, const char *field, long long *dims, int *nd,
                     struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    size_t cnt = n->kind == MP_YAML_SEQ ? n->n : 1;
    if (n->kind == MP_YAML_MAP || cnt < 1 || cnt > MP_KERNEL_MAX_DIMS)
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected 1 to %d positive integers",
                             MP_KERNEL_MAX_DIMS);
    for (size_t i = 0; i < cnt; i++) {
        const struct mp_yaml_node *it = n->kind == MP_YAML_SEQ ? n->items[i] : n;
        long long v = 0;
        int rc = mp_yaml_int(it, field, &v, d);
        if (rc)
            return rc;
        if (v < 1)
            return mp_yaml_error(it, field, d, MP_EINVAL, "expected a positive integer");
        dims[i] = v;
    }
    if (nd && (int)cnt > *nd)
        *nd = (int)cnt;
    return 0;
}

static int load_env(const struct mp_yaml_node *n, struct mp_kernel_spec *k, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "env", d, MP_EINVAL, "expected a mapping of NAME: value");
    k->env = mp_calloc(n->n + 1, sizeof(char *));
    if (!k->env)
        return MP_ENOMEM;
    for (size_t i = 0; i < n->n; i++) {
        char *v = NULL;
        int rc = cfg_str(n->vals[i], "env", true, &v, d);
        if (rc)
            return rc;
        struct mp_buf b;
        mp_buf_init(&b, (size_t)1 << 20);
        rc = mp_buf_printf(&b, "%s=%s", n->keys[i]->str ? n->keys[i]->str : "", v ? v : "");
        free(v);
        if (rc) {
            mp_buf_fini(&b);
            return rc;
        }
        k->env[k->nenv++] = mp_strdup(mp_buf_cstr(&b));
        mp_buf_fini(&b);
        if (!k->env[k->nenv - 1])
            return MP_ENOMEM;
    }
    return 0;
}

static int load_entry(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d)
{
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "kernel", d, MP_EINVAL, "a kernel entry must be a mapping");
    static const char *const keys[] = {"id",
                                       "type",
                                       "source_files",
                                       "working_dir",
                                       "env",
                                       "compile_command",
                                       "testcase_command",
                                       "prof_command",
                                       "bench_target",
                                       "get_inputs_func",
                                       "get_init_inputs_func",
                                       "input_shapes",
                                       "dtype",
                                       "extra",
                                       "reference",
                                       "kernel_name",
                                       "size",
                                       "global_size",
                                       "local_size",
                                       "atol",
                                       "rtol",
                                       "seeds",
                                       "hp_reference",
                                       "hp_factor",
                                       "rms_factor",
                                       NULL};
    c->nwarnings += cfg_check_keys(n, keys, "a kernel entry");
    struct mp_kernel_spec k;
    mp_kernel_spec_init(&k);
    int rc = cfg_str(mp_yaml_get(n, "id"), "id", false, &k.id, d);
    const struct mp_yaml_node *tn = mp_yaml_get(n, "type");
    const char *ts = NULL;
    if (!rc && tn && !(rc = mp_yaml_str(tn, "type", &ts, d)) && mp_kernel_type_parse(ts, &k.type)) {
        char names[512];
        mp_kernel_lang_list(names, sizeof(names), false, NULL);
        rc = mp_yaml_error(tn, "type", d, MP_EINVAL, "Unsupported kernel type '%s' (expected %s)",
                           ts, names);
    }
    struct mp_strlist src = {0, NULL};
    if (!rc)
        rc = cfg_strlist(mp_yaml_get(n, "source_files"), "source_files", true, &src, d);
    k.nsources = src.n;
    k.sources = src.v;
    if (!rc)
        rc = cfg_str(mp_yaml_get(n, "working_dir"), "working_dir", true, &k.working_dir, d);
    if (!rc)
        rc = load_env(mp_yaml_get(n, "env"), &k, d);
    if (!rc)
        rc = cfg_cmds(mp_yaml_get(n, "compile_command"), "compile_command", &k.compile, d);
    if (!rc)
        rc = cfg_cmds(mp_yaml_get(n, "testcase_command"), "testcase_command", &k.testcase, d);
    if (!rc)
        rc = cfg_cmds(mp_yaml_get(n, "prof_command"), "prof_command", &k.prof, d);
    const struct mp_yaml_node *bt = mp_yaml_get(n, "bench_target");
    if (!rc && !mp_yaml_is_null(bt)) {
        if (bt->kind != MP_YAML_MAP) {
            rc = mp_yaml_error(bt, "bench_target", d, MP_EINVAL,
                               "expected {module, callable, get_inputs}");
        } else {
            static const char *const bk[] = {"module", "callable", "get_inputs", NULL};
            c->nwarnings += cfg_check_keys(bt, bk, "bench_target");
            rc =
                cfg_str(mp_yaml_get(bt, "module"), "bench_target.module", true, &k.bench_module, d);
            if (!rc)
                rc = cfg_str(mp_yaml_get(bt, "callable"), "bench_target.callable", true,
                             &k.bench_callable, d);
            if (!rc)
                rc = cfg_str(mp_yaml_get(bt, "get_inputs"), "bench_target.get_inputs", true,
                             &k.bench_get_inputs, d);
        }
    }
    if (!rc)
        rc = cfg_str(mp_yaml_get(n, "get_inputs_func"), "get_inputs_func", false,
                     &k.get_inputs_func, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(n, "get_init_inputs_func"), "get_init_inputs_func", false,
                     &k.get_init_inputs_func, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(n, "dtype"), "dtype", false, &k.dtype, d);
    if (!rc && k.dtype) {
        const char *canon = mp_kernel_dtype_canonical(k.dtype);
        if (!canon)
            rc = mp_yaml_error(mp_yaml_get(n, "dtype"), "dtype", d, MP_EINVAL,
                               "unknown dtype '%s' (expected float64, float32, float16, "
                               "bfloat16, float8_e4m3fn, float8_e5m2, their fnuz forms, "
                               "int8/16/32/64, uint8 or bool; fp16, bf16, fp8, half, ... "
                               "are accepted too)",
                               k.dtype);
        else if (strcmp(canon, k.dtype) != 0) {
            free(k.dtype);
            k.dtype = mp_strdup(canon);
        }
    }
    if (!rc)
        rc = cfg_str(mp_yaml_get(n, "reference"), "reference", true, &k.reference, d);
    if (!rc)
        rc = cfg_str(mp_yaml_get(n, "kernel_name"), "kernel_name", true, &k.kernel_name, d);
    const struct mp_yaml_node *sz = mp_yaml_get(n, "size");
    if (!rc && sz && !mp_yaml_is_null(sz)) {
        rc = mp_yaml_int(sz, "size", &k.size, d);
        if (!rc && (k.size < 1 || k.size > ((long long)1 << 34)))
            rc = mp_yaml_error(sz, "size", d, MP_EINVAL, "expected 1 .. 2^34 elements");
    }
    if (!rc)
        rc = load_dims(mp_yaml_get(n, "global_size"), "global_size", k.global, &k.ndim, d);
    if (!rc)
        rc = load_dims(mp_yaml_get(n, "local_size"), "local_size", k.local, NULL, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "atol"), "atol", 0, &k.atol, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "rtol"), "rtol", 0, &k.rtol, d);
    if (!rc)
        rc = cfg_int(mp_yaml_get(n, "seeds"), "seeds", 1, 1000, &k.seeds, d);
    bool hp = true;
    if (!rc)
        rc = cfg_bool(mp_yaml_get(n, "hp_reference"), "hp_reference", &hp, d);
    k.hp_off = !hp;
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "hp_factor"), "hp_factor", 1, &k.hp_factor, d);
    if (!rc)
        rc = cfg_double(mp_yaml_get(n, "rms_factor"), "rms_factor", 1, &k.rms_factor, d);
    if (!rc && !k.id)
        k.id = mp_strdup("kernel");
    if (!rc)
        rc = mp_kernel_config_add(c, &k);
    mp_kernel_spec_fini(&k);
    return rc;
}

static int load_root(struct mp_kernel_config *c, const struct mp_yaml_node *r, struct mp_diag *d)
{
    if (r->kind != MP_YAML_MAP)
        return mp_yaml_error(r, NULL, d, MP_EINVAL,
                             "expected a mapping with 'kernel' or 'kernels' at the top");
    static const char *const keys[] = {"kernel",      "kernels",   "performance",
                                       "correctness", "scheduler", "ray_config",
                                       "latency",     "compare",   NULL};
    c->nwarnings += cfg_check_keys(r, keys, "the kernel config");
    int before = c->nkernels;
    int rc = 0;
    const struct mp_yaml_node *one = mp_yaml_get(r, "kernel");
    if (!mp_yaml_is_null(one))
        rc = load_entry(c, one, d);
    const struct mp_yaml_node *many = mp_yaml_get(r, "kernels");
    if (!rc && !mp_yaml_is_null(many)) {
        if (many->kind != MP_YAML_SEQ)
            rc = mp_yaml_error(many, "kernels", d, MP_EINVAL, "expected a list of kernel entries");
        for (size_t i = 0; !rc && i < many->n; i++)
            rc = load_entry(c, many->items[i], d);
    }
    if (!rc)
        rc = cfg_load_performance(c, mp_yaml_get(r, "performance"), d);
    if (!rc)
        rc = cfg_load_correctness(c, mp_yaml_get(r, "correctness"), d);
    if (!rc)
        rc = cfg_load_scheduler(c, mp_yaml_get(r, "scheduler"), d);
    if (!rc)
        rc = cfg_load_latency(c, mp_yaml_get(r, "latency"), d);
    if (!rc)
        rc = cfg_load_compare(c, mp_yaml_get(r, "compare"), d);
    const struct mp_yaml_node *ray = mp_yaml_get(r, "ray_config");
    if (!rc && !mp_yaml_is_null(ray) && !mp_yaml_get(mp_yaml_get(r, "scheduler"), "environment"))
        strcpy(c->scheduler.environment, "ray"); /* Magpie: ray_config implies ray */
    if (!rc && c->nkernels == before)
        rc = mp_yaml_error(r, "kernels", d, MP_EINVAL,
                           "No kernels found: the config has neither 'kernel' nor 'kernels'");
    return rc;
}

int mp_config_load_kernel_string(struct mp_kernel_config *c, const char *text, const char *name,
                                 struct mp_diag *d)
{
    return cfg_load_yaml(c, NULL, text, strlen(text), name, load_root, d);
}

int mp_config_load_kernel(struct mp_kernel_config *c, const char *path, struct mp_diag *d)
{
    return cfg_load_yaml(c, path, NULL, 0, NULL, load_root, d);
}
