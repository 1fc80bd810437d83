/* Shared pieces of the config loaders: $VAR expansion, command lists and
 * their three YAML forms, typed reads with file:line:col errors, string
 * lists, weight tables and unknown-key warnings. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/proc.h>

#include "config_int.h"

char *mp_config_expand_vars(const char *s)
{
    struct mp_buf b;
    mp_buf_init(&b, (size_t)1 << 20);
    int rc = 0;
    for (const char *p = s; *p && !rc;) {
        if (*p != '$') {
            rc = mp_buf_putc(&b, *p++);
            continue;
        }
        const char *name = p + 1;
        bool brace = *name == '{';
        if (brace)
            name++;
        size_t n = 0;
        while (name[n] && (isalnum((unsigned char)name[n]) || name[n] == '_'))
            n++;
        if (!n || (brace && name[n] != '}') || isdigit((unsigned char)name[0])) {
            rc = mp_buf_putc(&b, *p++);
            continue;
        }
        char key[256];
        if (n >= sizeof(key)) {
            rc = mp_buf_putc(&b, *p++);
            continue;
        }
        memcpy(key, name, n);
        key[n] = 0;
        const char *v = getenv(key);
        const char *next = name + n + (brace ? 1 : 0);
        if (v)
            rc = mp_buf_puts(&b, v);
        else
            rc = mp_buf_append(&b, p, (size_t)(next - p));
        p = next;
    }
    if (rc) {
        mp_buf_fini(&b);
        return NULL;
    }
    char *r = mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return r;
}

void mp_cmds_fini(struct mp_cmds *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++)
        mp_proc_argv_free(c->argv[i]);
    free((void *)c->argv);
    c->argv = NULL;
    c->n = 0;
}

static int cmds_push(struct mp_cmds *c, char **argv)
{
    char ***na = mp_reallocarray((void *)c->argv, (size_t)c->n + 1, sizeof(char **));
    if (!na) {
        mp_proc_argv_free(argv);
        return MP_ENOMEM;
    }
    c->argv = na;
    c->argv[c->n++] = argv;
    return 0;
}

int mp_cmds_add_string(struct mp_cmds *c, const char *s, struct mp_diag *d)
{
    char **argv = NULL;
    int argc = 0;
    int rc = mp_proc_split(s, &argv, &argc, d);
    if (rc)
        return rc;
    if (argc == 0) {
        mp_proc_argv_free(argv);
        return 0;
    }
    return cmds_push(c, argv);
}

int mp_cmds_add_argv(struct mp_cmds *c, const char *const *argv)
{
    int n = 0;
    while (argv[n])
        n++;
    char **copy = mp_calloc((size_t)n + 1, sizeof(char *));
    if (!copy)
        return MP_ENOMEM;
    for (int i = 0; i < n; i++) {
        copy[i] = mp_strdup(argv[i]);
        if (!copy[i]) {
            mp_proc_argv_free(copy);
            return MP_ENOMEM;
        }
    }
    return cmds_push(c, copy);
}

int mp_cmds_join(const struct mp_cmds *c, struct mp_buf *out)
{
    int rc = 0;
    for (int i = 0; i < c->n && !rc; i++) {
        if (i)
            rc = mp_buf_puts(out, " && ");
        if (!rc)
            rc = mp_proc_join((const char *const *)c->argv[i], out);
    }
    return rc;
}

int cfg_check_keys(const struct mp_yaml_node *map, const char *const *known, const char *where)
{
    if (!map || map->kind != MP_YAML_MAP)
        return 0;
    int unknown = 0;
    for (size_t i = 0; i < map->n; i++) {
        const struct mp_yaml_node *k = map->keys[i];
        bool ok = false;
        for (int j = 0; known[j] && !ok; j++)
            ok = k->str && strcmp(k->str, known[j]) == 0;
        if (!ok) {
            mp_log(MP_LOG_WARN, "%s:%ld:%ld: unknown key '%s' in %s (ignored)", k->file, k->line,
                   k->col, k->str ? k->str : "?", where);
            unknown++;
        }
    }
    return unknown;
}

int cfg_str(const struct mp_yaml_node *n, const char *field, bool expand, char **out,
            struct mp_diag *d)
{
    if (!n)
        return 0;
    if (mp_yaml_is_null(n)) {
        free(*out);
        *out = NULL;
        return 0;
    }
    const char *s = NULL;
    int rc = mp_yaml_str(n, field, &s, d);
    if (rc)
        return rc;
    char *v = expand ? mp_config_expand_vars(s) : mp_strdup(s);
    if (!v)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    free(*out);
    *out = v;
    return 0;
}

int cfg_strbuf(const struct mp_yaml_node *n, const char *field, char *out, size_t len,
               struct mp_diag *d)
{
    if (!n || mp_yaml_is_null(n))
        return 0;
    const char *s = NULL;
    int rc = mp_yaml_str(n, field, &s, d);
    if (rc)
        return rc;
    if (strlen(s) >= len)
        return mp_yaml_error(n, field, d, MP_EINVAL, "value longer than %zu characters", len - 1);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

void cfg_strlist_fini(struct mp_strlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free((void *)l->v);
    l->v = NULL;
    l->n = 0;
}

int cfg_strlist(const struct mp_yaml_node *n, const char *field, bool expand,
                struct mp_strlist *out, struct mp_diag *d)
{
    if (!n)
        return 0;
    cfg_strlist_fini(out);
    if (mp_yaml_is_null(n))
        return 0;
    size_t cnt = n->kind == MP_YAML_SEQ ? n->n : 1;
    if (n->kind == MP_YAML_MAP)
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected a list of strings, found a mapping");
    out->v = mp_calloc(cnt ? cnt : 1, sizeof(char *));
    if (!out->v)
        return MP_ENOMEM;
    for (size_t i = 0; i < cnt; i++) {
        const struct mp_yaml_node *it = n->kind == MP_YAML_SEQ ? n->items[i] : n;
        char *s = NULL;
        int rc = cfg_str(it, field, expand, &s, d);
        if (rc)
            return rc;
        if (!s)
            continue;
        out->v[out->n++] = s;
    }
    return 0;
}

static int argv_from_seq(const struct mp_yaml_node *seq, const char *field, struct mp_cmds *out,
                         struct mp_diag *d)
{
    char **argv = mp_calloc(seq->n + 1, sizeof(char *));
    if (!argv)
        return MP_ENOMEM;
    for (size_t i = 0; i < seq->n; i++) {
        if (seq->items[i]->kind != MP_YAML_SCALAR) {
            mp_proc_argv_free(argv);
            return mp_yaml_error(seq->items[i], field, d, MP_EINVAL,
                                 "a command is a string, a list of strings or a list of lists "
                                 "of strings; found a %s here",
                                 mp_yaml_kind_name(seq->items[i]->kind));
        }
        argv[i] = mp_config_expand_vars(seq->items[i]->str);
        if (!argv[i]) {
            mp_proc_argv_free(argv);
            return MP_ENOMEM;
        }
    }
    if (!seq->n) {
        mp_proc_argv_free(argv);
        return 0;
    }
    return cmds_push(out, argv);
}

int cfg_cmds(const struct mp_yaml_node *n, const char *field, struct mp_cmds *out,
             struct mp_diag *d)
{
    if (!n)
        return 0;
    mp_cmds_fini(out);
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind == MP_YAML_SCALAR) {
        char *s = mp_config_expand_vars(n->str);
        if (!s)
            return MP_ENOMEM;
        struct mp_diag sd;
        mp_diag_clear(&sd);
        int rc = mp_cmds_add_string(out, s, &sd);
        free(s);
        if (rc)
            return mp_yaml_error(n, field, d, rc, "cannot split the command: %s", sd.msg);
        return 0;
    }
    if (n->kind == MP_YAML_MAP)
        return mp_yaml_error(n, field, d, MP_EINVAL,
                             "a command is a string, a list of strings or a list of lists of "
                             "strings; found a mapping");
    bool lists = n->n > 0 && n->items[0]->kind == MP_YAML_SEQ;
    if (!lists)
        return argv_from_seq(n, field, out, d);
    for (size_t i = 0; i < n->n; i++) {
        if (n->items[i]->kind != MP_YAML_SEQ)
            return mp_yaml_error(n->items[i], field, d, MP_EINVAL,
                                 "mixed command forms: expected a list here like the first item");
        int rc = argv_from_seq(n->items[i], field, out, d);
        if (rc)
            return rc;
    }
    return 0;
}

int cfg_double(const struct mp_yaml_node *n, const char *field, double min, double *out,
               struct mp_diag *d)
{
    if (!n || mp_yaml_is_null(n))
        return 0;
    double v = 0;
    int rc = mp_yaml_double(n, field, &v, d);
    if (rc)
        return rc;
    if (!(v >= min))
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected a number >= %g, found %g", min, v);
    *out = v;
    return 0;
}

int cfg_int(const struct mp_yaml_node *n, const char *field, long long min, long long max, int *out,
            struct mp_diag *d)
{
    if (!n || mp_yaml_is_null(n))
        return 0;
    long long v = 0;
    int rc = mp_yaml_int(n, field, &v, d);
    if (rc)
        return rc;
    if (v < min || v > max)
        return mp_yaml_error(n, field, d, MP_EINVAL,
                             "expected an integer in [%lld, %lld], found %lld", min, max, v);
    *out = (int)v;
    return 0;
}

int cfg_bool(const struct mp_yaml_node *n, const char *field, bool *out, struct mp_diag *d)
{
    if (!n || mp_yaml_is_null(n))
        return 0;
    return mp_yaml_bool(n, field, out, d);
}

void cfg_weights_fini(struct mp_weights *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->v[i].metric);
    free(w->v);
    w->v = NULL;
    w->n = 0;
}

int cfg_weights(const struct mp_yaml_node *n, const char *field, struct mp_weights *out,
                struct mp_diag *d)
{
    if (!n)
        return 0;
    cfg_weights_fini(out);
    if (mp_yaml_is_null(n))
        return 0;
    if (n->kind != MP_YAML_MAP)
        return mp_yaml_error(n, field, d, MP_EINVAL, "expected a mapping of metric: weight");
    out->v = mp_calloc(n->n ? n->n : 1, sizeof(*out->v));
    if (!out->v)
        return MP_ENOMEM;
    for (size_t i = 0; i < n->n; i++) {
        double w = 0;
        int rc = mp_yaml_double(n->vals[i], field, &w, d);
        if (rc)
            return rc;
        out->v[out->n].metric = mp_strdup(n->keys[i]->str ? n->keys[i]->str : "");
        if (!out->v[out->n].metric)
            return MP_ENOMEM;
        out->v[out->n++].weight = w;
    }
    return 0;
}

int cfg_load_yaml(struct mp_kernel_config *c, const char *path, const char *text, size_t len,
                  const char *name, cfg_root_fn load, struct mp_diag *d)
{
    struct mp_yaml_doc *doc = NULL;
    int rc =
        text ? mp_yaml_load_string(text, len, name, &doc, d) : mp_yaml_load_file(path, &doc, d);
    if (rc)
        return rc;
    rc = load(c, mp_yaml_root(doc), d);
    mp_yaml_free(doc);
    return rc;
}
