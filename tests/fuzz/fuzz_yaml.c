/* libFuzzer target for the YAML loader (src/fmt/yaml.c: libyaml events into
 * a node tree with line:column marks) and its typed scalar reads.
 *
 * For a loaded document the tree is walked (aliases make it a DAG; the walk
 * is bounded and keeps the current path): no node may be its own ancestor,
 * marks are 1-based, scalars are NUL-terminated at their length, maps have
 * their keys and values, mp_yaml_get finds each plain key. Every scalar goes
 * through mp_yaml_str / _int / _double / _bool, which must return 0 or an
 * error with a message and a line. A failed load must say why and where. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <magpie/base.h>
#include <magpie/yaml.h>

#include "fuzz_common.h"

#define WALK_BUDGET 20000
#define PATH_MAX_NODES 1024

struct walk {
    const struct mp_yaml_node *path[PATH_MAX_NODES];
    int depth;
    long visits;
    volatile unsigned touch;
};

static void typed(const struct mp_yaml_node *n)
{
    struct mp_diag d;
    const char *s = NULL;
    long long i = 0;
    double x = 0;
    bool b = false;
    int rc;
    mp_diag_clear(&d);
    rc = mp_yaml_str(n, "f", &s, &d);
    CHECK(rc == 0 ? s != NULL : (d.code == rc && d.msg[0] && d.line >= 1));
    mp_diag_clear(&d);
    rc = mp_yaml_int(n, "f", &i, &d);
    CHECK(rc == 0 || (d.code == rc && d.msg[0] && d.line >= 1));
    mp_diag_clear(&d);
    rc = mp_yaml_double(n, "f", &x, &d);
    CHECK(rc == 0 || (d.code == rc && d.msg[0] && d.line >= 1));
    mp_diag_clear(&d);
    rc = mp_yaml_bool(n, "f", &b, &d);
    CHECK(rc == 0 || (d.code == rc && d.msg[0] && d.line >= 1));
}

static void walk(struct walk *w, const struct mp_yaml_node *n)
{
    CHECK(n != NULL);
    for (int i = 0; i < w->depth; i++)
        CHECK(w->path[i] != n); /* a cycle: an alias to its own ancestor */
    if (++w->visits > WALK_BUDGET || w->depth >= PATH_MAX_NODES)
        return;
    CHECK(n->line >= 1 && n->col >= 1);
    CHECK(n->kind >= MP_YAML_NULL && n->kind <= MP_YAML_MAP);
    switch (n->kind) {
    case MP_YAML_NULL:
        CHECK(n->str != NULL && n->str[n->len] == '\0');
        typed(n);
        return;
    case MP_YAML_SCALAR:
        CHECK(n->str != NULL && n->str[n->len] == '\0');
        w->touch += fuzz_touch(n->str, n->len);
        typed(n);
        return;
    case MP_YAML_SEQ:
        CHECK(n->n == 0 || n->items != NULL);
        break;
    case MP_YAML_MAP:
        CHECK(n->n == 0 || (n->keys != NULL && n->vals != NULL));
        break;
    }
    typed(n);
    w->path[w->depth++] = n;
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == MP_YAML_SEQ) {
            walk(w, n->items[i]);
            continue;
        }
        const struct mp_yaml_node *k = n->keys[i];
        CHECK(k != NULL && n->vals[i] != NULL);
        if (k->kind == MP_YAML_SCALAR && strlen(k->str) == k->len)
            CHECK(mp_yaml_get(n, k->str) != NULL);
        walk(w, k);
        walk(w, n->vals[i]);
    }
    w->depth--;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_dup(data, size);
    struct mp_yaml_doc *doc = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_yaml_load_string(text, size, "fuzz.yaml", &doc, &d);
    if (rc == 0) {
        CHECK(doc != NULL);
        const struct mp_yaml_node *root = mp_yaml_root(doc);
        CHECK(root != NULL && strcmp(mp_yaml_file(doc), "fuzz.yaml") == 0);
        struct walk *w = calloc(1, sizeof(*w));
        CHECK(w != NULL);
        walk(w, root);
        free(w);
        (void)mp_yaml_get(root, "kernels");
        mp_yaml_free(doc);
    } else {
        CHECK(doc == NULL);
        CHECK(d.code == rc && d.msg[0]);
        CHECK(rc == MP_ENOMEM || d.line >= 1);
    }
    free(text);
    return 0;
}
