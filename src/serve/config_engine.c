/* The benchmark YAML's `engine:` section: a serving engine magpie does not
 * know, declared with the fields of an engine table row (serve.h, struct
 * mp_serve_engine): a command template, readiness paths, a version
 * command, profiler endpoints and args, env, stop signal, trace layout,
 * images. The run then treats it as any built-in engine: lifecycle,
 * profiling window, reports. Errors name file:line:col and the field
 * (engine.command, ...); unknown keys are warned about as elsewhere in the
 * benchmark YAML. docs/ARCHITECTURE.md, "Adding an engine".
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <magpie/proc.h>
#include <magpie/serve.h>
#include <magpie/yaml.h>

#include "serve_int.h"

static void warn_unknown(const struct mp_yaml_node *map, const char *const *known,
                         const char *where)
{
    for (size_t i = 0; map && map->kind == MP_YAML_MAP && i < map->n; i++) {
        const char *k = map->keys[i]->str ? map->keys[i]->str : "";
        bool ok = false;
        for (const char *const *p = known; *p && !ok; p++)
            ok = strcmp(*p, k) == 0;
        if (!ok)
            mp_log(MP_LOG_WARN, "%s:%ld:%ld: unknown key '%s' in %s (ignored)", map->keys[i]->file,
                   map->keys[i]->line, map->keys[i]->col, k, where);
    }
}

/* engine.<key> as a string owned by the config; *out untouched when absent. */
static int str_field(struct mp_serve_config *c, const struct mp_yaml_node *map, const char *key,
                     const char **out, const struct mp_yaml_node **node, struct mp_diag *d)
{
    char field[96];
    snprintf(field, sizeof(field), "engine.%s", key);
    const struct mp_yaml_node *n = mp_yaml_get(map, key);
    if (node)
        *node = n;
    if (mp_yaml_is_null(n))
        return 0;
    const char *s;
    int rc = mp_yaml_str(n, field, &s, d);
    if (rc)
        return rc;
    *out = mp_serve_config_strdup(c, s);
    return *out ? 0 : mp_diag_set(d, MP_ENOMEM, "out of memory");
}

static int check_template(const struct mp_yaml_node *n, const char *field, const char *tmpl,
                          struct mp_diag *d)
{
    char bad[64];
    if (tmpl && !mp_serve_template_check(tmpl, bad, sizeof(bad)))
        return mp_yaml_error(n, field, d, MP_EINVAL,
                             "unknown placeholder '%s' (expected {model}, {host}, {port}, {tp}, "
                             "{max_model_len}, {gpu_memory_utilization}, {trace_dir}, "
                             "{workspace} or {ENV_NAME})",
                             bad);
    return 0;
}

static int check_path(const struct mp_yaml_node *n, const char *field, const char *s,
                      struct mp_diag *d)
{
    if (s && (s[0] != '/' || strpbrk(s, " \t\r\n")))
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected a URL path starting with '/'");
    return 0;
}

static int parse_signal(const struct mp_yaml_node *n, const char *s, int *out, struct mp_diag *d)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"TERM", SIGTERM}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"HUP", SIGHUP}};

    if (!s)
        return 0;
    const char *b = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
        if (strcasecmp(b, sigs[i].name) == 0) {
            *out = sigs[i].sig;
            return 0;
        }
    return mp_yaml_error(n, "engine.stop_signal", d, MP_EINVAL,
                         "unsupported signal '%s' (expected SIGTERM, SIGINT, SIGQUIT or SIGHUP)",
                         s);
}

/* engine.profiler: start, stop, args, dir_env, start_body */
static int load_profiler(struct mp_serve_config *c, const struct mp_yaml_node *p,
                         struct mp_serve_engine *e, struct mp_diag *d)
{
    static const char *const known[] = {"start", "stop", "args", "dir_env", "start_body", NULL};
    if (mp_yaml_is_null(p))
        return 0;
    if (p->kind != MP_YAML_MAP)
        return mp_yaml_error(p, "engine.profiler", d, MP_EINVAL,
                             "expected a mapping (start, stop, args, dir_env)");
    warn_unknown(p, known, "engine.profiler");
    const struct mp_yaml_node *ns, *nt, *na;
    int rc;
    if ((rc = str_field(c, p, "start", &e->profile_start, &ns, d)) ||
        (rc = str_field(c, p, "stop", &e->profile_stop, &nt, d)) ||
        (rc = str_field(c, p, "args", &e->profiler_args, &na, d)) ||
        (rc = str_field(c, p, "dir_env", &e->profiler_dir_env, NULL, d)) ||
        (rc = str_field(c, p, "start_body", &e->profile_start_body, NULL, d)) ||
        (rc = check_path(ns, "engine.profiler.start", e->profile_start, d)) ||
        (rc = check_path(nt, "engine.profiler.stop", e->profile_stop, d)) ||
        (rc = check_template(na, "engine.profiler.args", e->profiler_args, d)))
        return rc;
    if (!e->profile_start != !e->profile_stop)
        return mp_yaml_error(p, "engine.profiler", d, MP_EINVAL,
                             "give both start and stop (or neither)");
    return 0;
}

/* engine.env: NAME: value, set in the config's envs (exported to the engine) */
static int load_env(struct mp_serve_config *c, const struct mp_yaml_node *n, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, "engine.env", d, MP_EINVAL, "expected a mapping of NAME: value");
    for (size_t i = 0; i < n->n; i++) {
        const char *k = n->keys[i]->str, *v = "";
        char field[160];
        snprintf(field, sizeof(field), "engine.env.%s", k ? k : "");
        int rc = mp_yaml_is_null(n->vals[i]) ? 0 : mp_yaml_str(n->vals[i], field, &v, d);
        if (rc)
            return rc;
        if (!k || !*k || strchr(k, '='))
            return mp_yaml_error(n->keys[i], "engine.env", d, MP_EINVAL, "bad variable name");
        if (mp_serve_config_setenv(c, k, v))
            return mp_yaml_error(n->keys[i], field, d, MP_ENOMEM, "too many envs");
    }
    return 0;
}

/* engine.images: ARCH: image */
static int load_images(struct mp_serve_config *c, const struct mp_yaml_node *n,
                       struct mp_serve_engine *e, struct mp_diag *d)
{
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP || n->n > MP_SERVE_MAX_IMAGES)
        return mp_yaml_error(n, "engine.images", d, MP_EINVAL,
                             "expected a mapping of GPU architecture: image (at most %d)",
                             MP_SERVE_MAX_IMAGES);
    for (size_t i = 0; i < n->n; i++) {
        const char *img;
        int rc = mp_yaml_str(n->vals[i], "engine.images", &img, d);
        if (!rc)
            rc = mp_proc_image_check(img, "engine.images", d);
        if (rc)
            return rc;
        e->images[i].arch = mp_serve_config_strdup(c, n->keys[i]->str ? n->keys[i]->str : "");
        e->images[i].image = mp_serve_config_strdup(c, img);
    }
    return 0;
}

static int check_name(const struct mp_yaml_node *n, const char *name, struct mp_diag *d)
{
    bool ok = name && *name && strlen(name) <= 64;
    for (const char *s = name; ok && *s; s++)
        ok = islower((unsigned char)*s) || isdigit((unsigned char)*s) || strchr("_.-", *s);
    if (!ok)
        return mp_yaml_error(n, "engine.name", d, MP_EINVAL,
                             "expected a name of lower-case letters, digits, '_', '.' or '-' "
                             "(it names the workspace)");
    enum mp_serve_framework f;
    if (mp_serve_framework_parse(name, &f) == 0)
        return mp_yaml_error(n, "engine.name", d, MP_EINVAL,
                             "'%s' is a built-in engine: use framework: %s, or another name", name,
                             mp_serve_framework_name(f));
    return 0;
}

/* The fields read as strings, after which the checks run. */
static int load_strings(struct mp_serve_config *c, const struct mp_yaml_node *m,
                        struct mp_serve_engine *e, struct mp_diag *d)
{
    const struct mp_yaml_node *nn, *nc, *nh, *nm, *ns, *nx;
    const char *sig = NULL;
    int rc;
    if ((rc = str_field(c, m, "name", &e->name, &nn, d)) ||
        (rc = str_field(c, m, "label", &e->label, NULL, d)) ||
        (rc = str_field(c, m, "command", &e->command, &nc, d)) ||
        (rc = str_field(c, m, "health_path", &e->health_path, &nh, d)) ||
        (rc = str_field(c, m, "models_path", &e->models_path, &nm, d)) ||
        (rc = str_field(c, m, "version_command", &e->version_command, NULL, d)) ||
        (rc = str_field(c, m, "extra_args_env", &e->extra_args_env, &nx, d)) ||
        (rc = str_field(c, m, "trace_layout", &e->trace_layout, NULL, d)) ||
        (rc = str_field(c, m, "stop_signal", &sig, &ns, d)))
        return rc;
    if (!e->name)
        return mp_yaml_error(m, "engine.name", d, MP_EINVAL, "the engine needs a name");
    if (!e->command || !*e->command)
        return mp_yaml_error(nc ? nc : m, "engine.command", d, MP_EINVAL,
                             "the engine needs a command (a template such as 'my-server "
                             "{model} --port {port}')");
    if ((rc = check_name(nn, e->name, d)) ||
        (rc = check_template(nc, "engine.command", e->command, d)) ||
        (rc = check_path(nh, "engine.health_path", e->health_path, d)) ||
        (rc = check_path(nm, "engine.models_path", e->models_path, d)) ||
        (rc = parse_signal(ns, sig, &e->stop_signal, d)))
        return rc;
    if (e->extra_args_env && strchr(e->extra_args_env, '='))
        return mp_yaml_error(nx, "engine.extra_args_env", d, MP_EINVAL, "bad variable name");
    return 0;
}

int serve_config_load_engine(struct mp_serve_config *c, const struct mp_yaml_node *m,
                             struct mp_diag *d)
{
    static const char *const known[] = {
        "name",     "label", "command",        "health_path", "models_path",  "version_command",
        "profiler", "env",   "extra_args_env", "stop_signal", "trace_layout", "images",
        NULL};
    if (mp_yaml_is_null(m))
        return 0;
    if (m->kind != MP_YAML_MAP)
        return mp_yaml_error(m, "engine", d, MP_EINVAL, "expected a mapping (name, command, ...)");
    warn_unknown(m, known, "engine");
    struct mp_serve_engine *e = c->arena ? mp_arena_alloc(c->arena, sizeof(*e)) : NULL;
    if (!e)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    memset(e, 0, sizeof(*e));
    e->health_path = "/health";
    e->models_path = "/v1/models";
    e->trace_layout = "vllm";
    int rc;
    if ((rc = load_strings(c, m, e, d)) ||
        (rc = load_profiler(c, mp_yaml_get(m, "profiler"), e, d)) ||
        (rc = load_env(c, mp_yaml_get(m, "env"), d)) ||
        (rc = load_images(c, mp_yaml_get(m, "images"), e, d)))
        return rc;
    const struct mp_yaml_node *nm = mp_yaml_get(m, "models_path");
    if (nm && mp_yaml_is_null(nm))
        e->models_path = NULL; /* models_path: null -> no model list */
    if (!e->label)
        e->label = e->name;
    c->engine = e;
    c->framework = MP_SERVE_USER;
    return 0;
}
