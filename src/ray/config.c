/* ray_config: Magpie's RayConfig keys (cluster_address, shared_storage_path,
 * entrypoint_num_gpus/cpus, multi_node, total_num_gpus, num_nodes,
 * gpus_per_node, pip_packages, env_vars, metadata, install_magpie,
 * magpie_install_path) plus magpie's entrypoint_resources, working_dir and
 * connect_timeout_seconds, read from a YAML mapping, with the environment
 * overrides of docs/ray.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <magpie/ray.h>
#include <magpie/yaml.h>

void mp_ray_config_init(struct mp_ray_config *rc)
{
    memset(rc, 0, sizeof(*rc));
    rc->arena = mp_arena_new(4096);
    rc->cluster_address = "auto";
    rc->shared_storage_path = MP_RAY_DEFAULT_SHARED;
    rc->entrypoint_num_cpus = 1;
    rc->total_num_gpus = 8;
    rc->num_nodes = 1;
    rc->gpus_per_node = 8;
    rc->magpie_path = "magpie";
    rc->connect_timeout_s = 3;
    rc->install_magpie = true;
}

void mp_ray_config_fini(struct mp_ray_config *rc)
{
    if (rc && rc->arena)
        mp_arena_free(rc->arena);
    if (rc)
        memset(rc, 0, sizeof(*rc));
}

const char *mp_ray_config_strdup(struct mp_ray_config *rc, const char *s)
{
    return s ? mp_arena_strndup(rc->arena, s, strlen(s)) : NULL;
}

static int kv_set(struct mp_ray_config *rc, const char **v, int *n, const char *key,
                  const char *val)
{
    size_t kl = strlen(key);
    char *s = mp_arena_alloc(rc->arena, kl + strlen(val) + 2);
    if (!s)
        return MP_ENOMEM;
    sprintf(s, "%s=%s", key, val);
    for (int i = 0; i < *n; i++)
        if (strncmp(v[i], key, kl) == 0 && v[i][kl] == '=') {
            v[i] = s;
            return 0;
        }
    if (*n >= MP_RAY_MAX_KV)
        return MP_ENOMEM;
    v[(*n)++] = s;
    return 0;
}

int mp_ray_config_setenv(struct mp_ray_config *rc, const char *key, const char *val)
{
    return kv_set(rc, rc->env_vars, &rc->n_env, key, val);
}

const char *mp_ray_config_getenv(const struct mp_ray_config *rc, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < rc->n_env; i++)
        if (strncmp(rc->env_vars[i], key, kl) == 0 && rc->env_vars[i][kl] == '=')
            return rc->env_vars[i] + kl + 1;
    return NULL;
}

static int get_str(struct mp_ray_config *rc, const struct mp_yaml_node *m, const char *key,
                   const char **out, struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(m, key);
    if (mp_yaml_is_null(n))
        return 0;
    const char *s;
    int r = mp_yaml_str(n, key, &s, d);
    if (!r)
        *out = mp_ray_config_strdup(rc, s);
    return r;
}

static int get_num(const struct mp_yaml_node *m, const char *key, double lo, double *out,
                   struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(m, key);
    if (mp_yaml_is_null(n))
        return 0;
    double v;
    int r = mp_yaml_double(n, key, &v, d);
    if (r)
        return r;
    if (v < lo)
        return mp_yaml_error(n, key, d, MP_EINVAL, "%s must be >= %g, found %g", key, lo, v);
    *out = v;
    return 0;
}

static int get_int(const struct mp_yaml_node *m, const char *key, int *out, struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(m, key);
    if (mp_yaml_is_null(n))
        return 0;
    long long v;
    int r = mp_yaml_int(n, key, &v, d);
    if (r)
        return r;
    if (v < 1 || v > 1 << 20)
        return mp_yaml_error(n, key, d, MP_EINVAL, "%s must be a positive integer, found %lld", key,
                             v);
    *out = (int)v;
    return 0;
}

static int get_map(struct mp_ray_config *rc, const struct mp_yaml_node *m, const char *key,
                   const char **v, int *nv, struct mp_diag *d)
{
    const struct mp_yaml_node *n = mp_yaml_get(m, key);
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, key, d, MP_EINVAL, "%s must be a mapping, found a %s", key,
                             mp_yaml_kind_name(n->kind));
    for (size_t i = 0; i < n->n; i++) {
        const char *k, *val = "";
        int r = mp_yaml_str(n->keys[i], key, &k, d);
        if (!r && !mp_yaml_is_null(n->vals[i]))
            r = mp_yaml_str(n->vals[i], k, &val, d);
        if (r)
            return r;
        if (kv_set(rc, v, nv, k, val))
            return mp_yaml_error(n, key, d, MP_ENOMEM, "too many entries in %s (max %d)", key,
                                 MP_RAY_MAX_KV);
    }
    return 0;
}

int mp_ray_config_load_node(struct mp_ray_config *rc, const struct mp_yaml_node *m,
                            struct mp_diag *d)
{
    if (mp_yaml_is_null(m))
        return 0;
    if (m->kind != MP_YAML_MAP)
        return mp_yaml_error(m, "ray_config", d, MP_EINVAL, "ray_config must be a mapping");
    static const char *const known[] = {"cluster_address",
                                        "shared_storage_path",
                                        "entrypoint_num_gpus",
                                        "entrypoint_num_cpus",
                                        "multi_node",
                                        "total_num_gpus",
                                        "num_nodes",
                                        "gpus_per_node",
                                        "pip_packages",
                                        "env_vars",
                                        "metadata",
                                        "install_magpie",
                                        "magpie_install_path",
                                        "entrypoint_resources",
                                        "working_dir",
                                        "connect_timeout_seconds",
                                        "timeout_seconds",
                                        NULL};
    for (size_t i = 0; i < m->n; i++) {
        bool ok = false;
        for (int k = 0; known[k]; k++)
            ok |= strcmp(m->keys[i]->str, known[k]) == 0;
        if (!ok)
            mp_log(MP_LOG_WARN, "%s:%ld: unknown ray_config key '%s' ignored",
                   m->keys[i]->file ? m->keys[i]->file : "?", m->keys[i]->line, m->keys[i]->str);
    }
    int r;
    const char *install = NULL;
    if ((r = get_str(rc, m, "cluster_address", &rc->cluster_address, d)) ||
        (r = get_str(rc, m, "shared_storage_path", &rc->shared_storage_path, d)) ||
        (r = get_num(m, "entrypoint_num_gpus", 0, &rc->entrypoint_num_gpus, d)) ||
        (r = get_num(m, "entrypoint_num_cpus", 0, &rc->entrypoint_num_cpus, d)) ||
        (r = get_int(m, "total_num_gpus", &rc->total_num_gpus, d)) ||
        (r = get_int(m, "num_nodes", &rc->num_nodes, d)) ||
        (r = get_int(m, "gpus_per_node", &rc->gpus_per_node, d)) ||
        (r = get_map(rc, m, "env_vars", rc->env_vars, &rc->n_env, d)) ||
        (r = get_map(rc, m, "metadata", rc->metadata, &rc->n_meta, d)) ||
        (r = get_map(rc, m, "entrypoint_resources", rc->resources, &rc->n_res, d)) ||
        (r = get_str(rc, m, "working_dir", &rc->working_dir, d)) ||
        (r = get_str(rc, m, "magpie_install_path", &install, d)) ||
        (r = get_num(m, "connect_timeout_seconds", 0.1, &rc->connect_timeout_s, d)) ||
        (r = get_num(m, "timeout_seconds", 0, &rc->submit_timeout_s, d)))
        return r;
    const struct mp_yaml_node *n = mp_yaml_get(m, "multi_node");
    if (!mp_yaml_is_null(n) && (r = mp_yaml_bool(n, "multi_node", &rc->multi_node, d)))
        return r;
    n = mp_yaml_get(m, "install_magpie");
    if (!mp_yaml_is_null(n) && (r = mp_yaml_bool(n, "install_magpie", &rc->install_magpie, d)))
        return r;
    if (install) {
        /* a directory holding magpie (or bin/magpie), or the binary itself */
        struct stat st;
        char *p = mp_fs_join(install, "bin/magpie");
        if (stat(install, &st) == 0 && S_ISDIR(st.st_mode) && !mp_fs_exists(p)) {
            free(p);
            p = mp_fs_join(install, "magpie");
        }
        rc->magpie_path =
            stat(install, &st) == 0 && S_ISDIR(st.st_mode) ? mp_ray_config_strdup(rc, p) : install;
        free(p);
    }
    n = mp_yaml_get(m, "pip_packages");
    if (!mp_yaml_is_null(n)) {
        if (n->kind != MP_YAML_SEQ)
            return mp_yaml_error(n, "pip_packages", d, MP_EINVAL,
                                 "pip_packages must be a list of package specs");
        for (size_t i = 0; i < n->n && rc->n_pip < MP_RAY_MAX_KV; i++) {
            const char *s;
            if ((r = mp_yaml_str(n->items[i], "pip_packages", &s, d)))
                return r;
            rc->pip_packages[rc->n_pip++] = mp_ray_config_strdup(rc, s);
        }
    }
    char url[600];
    if ((r = mp_ray_address_resolve(rc->cluster_address, url, sizeof(url), d))) {
        const struct mp_yaml_node *a = mp_yaml_get(m, "cluster_address");
        return mp_yaml_error(a ? a : m, "cluster_address", d, r, "%s", d ? d->msg : "bad address");
    }
    return 0;
}

int mp_ray_config_load_file(struct mp_ray_config *rc, const char *path, struct mp_diag *d)
{
    struct mp_yaml_doc *doc = NULL;
    int r = mp_yaml_load_file(path, &doc, d);
    if (r)
        return r;
    const struct mp_yaml_node *root = mp_yaml_root(doc);
    const struct mp_yaml_node *n = mp_yaml_get(root, "ray_config");
    if (mp_yaml_is_null(n))
        n = mp_yaml_get(mp_yaml_get(root, "benchmark"), "ray_config");
    if (mp_yaml_is_null(n))
        n = mp_yaml_get(root, "ray"); /* framework config section */
    r = mp_ray_config_load_node(rc, n, d);
    mp_yaml_free(doc);
    return r;
}

void mp_ray_config_from_env(struct mp_ray_config *rc)
{
    const char *e = getenv("MAGPIE_RAY_SHARED_STORAGE");
    if (e && *e)
        rc->shared_storage_path = mp_ray_config_strdup(rc, e);
    e = getenv("MAGPIE_RAY_MAGPIE");
    if (e && *e)
        rc->magpie_path = mp_ray_config_strdup(rc, e);
}
