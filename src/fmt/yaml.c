/* YAML documents (libyaml event parser) loaded into a read-only node tree
 * with line:column marks, and typed scalar reads that name file:line:col
 * when a value has the wrong type. Configs are small, so the tree lives in
 * one arena and child arrays simply grow by copying. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include <magpie/yaml.h>

struct anchor {
    char *name;
    struct mp_yaml_node *node;
};

struct mp_yaml_doc {
    struct mp_arena *arena;
    char *file;
    struct mp_yaml_node *root;
};

/* A container under construction. */
struct frame {
    struct mp_yaml_node *node;
    size_t cap;
    struct mp_yaml_node *pending_key; /* MAP: key waiting for its value */
};

struct builder {
    struct mp_yaml_doc *doc;
    struct frame stack[MP_YAML_MAX_DEPTH];
    int depth;
    struct anchor *anchors;
    size_t nanchors, capanchors;
    struct mp_diag *d;
};

const char *mp_yaml_kind_name(enum mp_yaml_kind k)
{
    switch (k) {
    case MP_YAML_NULL:
        return "null";
    case MP_YAML_SCALAR:
        return "scalar";
    case MP_YAML_SEQ:
        return "sequence";
    case MP_YAML_MAP:
        return "mapping";
    }
    return "?";
}

static void set_pos(struct mp_diag *d, const char *file, long line, long col)
{
    if (!d)
        return;
    mp_diag_set_file(d, file);
    if (d->line == 0)
        mp_diag_set_pos(d, -1, line, col);
}

int mp_yaml_error(const struct mp_yaml_node *node, const char *field, struct mp_diag *d, int code,
                  const char *fmt, ...)
{
    if (!d || d->code)
        return code;
    char msg[sizeof(d->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mp_diag_set(d, code, "%s", msg);
    if (node)
        set_pos(d, node->file, node->line, node->col);
    if (field)
        mp_diag_set_field(d, field);
    return code;
}

static struct mp_yaml_node *node_new(struct builder *b, enum mp_yaml_kind kind,
                                     const yaml_mark_t *mark)
{
    struct mp_yaml_node *n = mp_arena_alloc(b->doc->arena, sizeof(*n));
    if (!n)
        return NULL;
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->file = b->doc->file;
    n->line = (long)mark->line + 1;
    n->col = (long)mark->column + 1;
    return n;
}

static int grow(struct builder *b, struct mp_yaml_node ***arr, size_t n, size_t *cap)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    size_t esz = sizeof(struct mp_yaml_node *);
    struct mp_yaml_node **na = mp_arena_alloc(b->doc->arena, ncap * esz);
    if (!na)
        return MP_ENOMEM;
    if (n)
        memcpy((void *)na, (const void *)*arr, n * esz);
    *arr = na;
    *cap = ncap;
    return 0;
}

/* Adds a finished node to the current container (or makes it the root). */
static int attach(struct builder *b, struct mp_yaml_node *n)
{
    if (b->depth == 0) {
        if (!b->doc->root)
            b->doc->root = n;
        return 0;
    }
    struct frame *f = &b->stack[b->depth - 1];
    struct mp_yaml_node *c = f->node;
    if (c->kind == MP_YAML_SEQ) {
        if (grow(b, &c->items, c->n, &f->cap))
            return MP_ENOMEM;
        c->items[c->n++] = n;
        return 0;
    }
    if (!f->pending_key) {
        f->pending_key = n;
        return 0;
    }
    size_t cap = f->cap;
    if (grow(b, &c->keys, c->n, &cap) || grow(b, &c->vals, c->n, &f->cap))
        return MP_ENOMEM;
    c->keys[c->n] = f->pending_key;
    c->vals[c->n] = n;
    c->n++;
    f->pending_key = NULL;
    return 0;
}

static int add_anchor(struct builder *b, const yaml_char_t *name, struct mp_yaml_node *n)
{
    if (!name)
        return 0;
    if (MP_GROW(b->anchors, b->capanchors, b->nanchors + 1, 8))
        return MP_ENOMEM;
    char *s = mp_arena_strndup(b->doc->arena, (const char *)name, strlen((const char *)name));
    if (!s)
        return MP_ENOMEM;
    b->anchors[b->nanchors].name = s;
    b->anchors[b->nanchors].node = n;
    b->nanchors++;
    return 0;
}

static struct mp_yaml_node *find_anchor(const struct builder *b, const yaml_char_t *name)
{
    for (size_t i = b->nanchors; i-- > 0;)
        if (strcmp(b->anchors[i].name, (const char *)name) == 0)
            return b->anchors[i].node;
    return NULL;
}

/* Is n a container still being built (an ancestor of the current node)? */
static bool is_open(const struct builder *b, const struct mp_yaml_node *n)
{
    for (int i = 0; i < b->depth; i++)
        if (b->stack[i].node == n)
            return true;
    return false;
}

static bool plain_null(const char *s)
{
    return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
    const yaml_mark_t *m = &ev->start_mark;
    struct mp_yaml_node *n = node_new(b, MP_YAML_SCALAR, m);
    if (!n)
        return MP_ENOMEM;
    n->len = ev->data.scalar.length;
    char *s = mp_arena_strndup(b->doc->arena, (const char *)ev->data.scalar.value, n->len);
    if (!s)
        return MP_ENOMEM;
    n->str = s;
    n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    if (!n->quoted && !ev->data.scalar.tag && plain_null(s))
        n->kind = MP_YAML_NULL;
    if (add_anchor(b, ev->data.scalar.anchor, n))
        return MP_ENOMEM;
    return attach(b, n);
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum mp_yaml_kind kind,
                    const yaml_char_t *anchor)
{
    if (b->depth >= MP_YAML_MAX_DEPTH) {
        mp_diag_set(b->d, MP_EPARSE, "nesting deeper than %d levels", MP_YAML_MAX_DEPTH);
        set_pos(b->d, b->doc->file, (long)ev->start_mark.line + 1, (long)ev->start_mark.column + 1);
        return MP_EPARSE;
    }
    struct mp_yaml_node *n = node_new(b, kind, &ev->start_mark);
    if (!n)
        return MP_ENOMEM;
    if (add_anchor(b, anchor, n))
        return MP_ENOMEM;
    struct frame *f = &b->stack[b->depth++];
    f->node = n;
    f->cap = 0;
    f->pending_key = NULL;
    return 0;
}

static int on_end(struct builder *b)
{
    if (b->depth == 0)
        return MP_EPARSE;
    struct mp_yaml_node *n = b->stack[--b->depth].node;
    return attach(b, n);
}

static int build(struct builder *b, yaml_parser_t *p)
{
    int rc = 0;
    bool done = false;
    int docs = 0;
    while (!done && !rc) {
        yaml_event_t ev;
        if (!yaml_parser_parse(p, &ev)) {
            rc = mp_diag_set(b->d, MP_EPARSE, "YAML syntax error: %s%s%s",
                             p->problem ? p->problem : "malformed document", p->context ? " " : "",
                             p->context ? p->context : "");
            set_pos(b->d, b->doc->file, (long)p->problem_mark.line + 1,
                    (long)p->problem_mark.column + 1);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            docs++;
            break;
        case YAML_DOCUMENT_END_EVENT:
            done = docs >= 1; /* only the first document */
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(b, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(b, &ev, MP_YAML_SEQ, ev.data.sequence_start.anchor);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(b, &ev, MP_YAML_MAP, ev.data.mapping_start.anchor);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(b);
            break;
        case YAML_ALIAS_EVENT: {
            struct mp_yaml_node *t = find_anchor(b, ev.data.alias.anchor);
            if (!t) {
                rc = mp_diag_set(b->d, MP_EPARSE, "unknown alias *%s",
                                 (const char *)ev.data.alias.anchor);
                set_pos(b->d, b->doc->file, (long)ev.start_mark.line + 1,
                        (long)ev.start_mark.column + 1);
            } else if (is_open(b, t)) {
                /* an alias inside the node it names would make the tree a
                 * cycle that no reader of it could walk to the end */
                rc = mp_diag_set(b->d, MP_EPARSE, "alias *%s refers to a node that contains it",
                                 (const char *)ev.data.alias.anchor);
                set_pos(b->d, b->doc->file, (long)ev.start_mark.line + 1,
                        (long)ev.start_mark.column + 1);
            } else {
                rc = attach(b, t);
            }
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    if (rc == MP_ENOMEM)
        mp_diag_set(b->d, MP_ENOMEM, "out of memory while loading YAML");
    return rc;
}

int mp_yaml_load_string(const char *text, size_t len, const char *name, struct mp_yaml_doc **out,
                        struct mp_diag *d)
{
    *out = NULL;
    if (len > MP_YAML_MAX_BYTES)
        return mp_diag_set(d, MP_ENOMEM, "YAML input larger than %zu bytes", MP_YAML_MAX_BYTES);
    struct mp_yaml_doc *doc = mp_calloc(1, sizeof(*doc));
    if (!doc)
        return MP_ENOMEM;
    doc->arena = mp_arena_new(16 << 10);
    const char *nm = name ? name : "<yaml>";
    doc->file = doc->arena ? mp_arena_strndup(doc->arena, nm, strlen(nm)) : NULL;
    if (!doc->file) {
        mp_yaml_free(doc);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    struct builder *b = mp_calloc(1, sizeof(*b));
    if (!b) {
        mp_yaml_free(doc);
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    }
    b->doc = doc;
    b->d = d;
    yaml_parser_t p;
    int rc = 0;
    if (!yaml_parser_initialize(&p)) {
        rc = mp_diag_set(d, MP_ENOMEM, "cannot initialise the YAML parser");
        goto out;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    rc = build(b, &p);
    yaml_parser_delete(&p);
    if (!rc && !doc->root) {
        yaml_mark_t m = {0, 0, 0};
        doc->root = node_new(b, MP_YAML_NULL, &m);
        if (!doc->root)
            rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        else
            doc->root->str = "";
    }
out:
    free(b->anchors);
    free(b);
    if (rc) {
        mp_diag_set_file(d, doc->file);
        mp_yaml_free(doc);
        return rc;
    }
    *out = doc;
    return 0;
}

int mp_yaml_load_file(const char *path, struct mp_yaml_doc **out, struct mp_diag *d)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        mp_diag_set(d, MP_EIO, "cannot open: %s", strerror(errno));
        mp_diag_set_file(d, path);
        return MP_EIO;
    }
    struct mp_buf buf;
    mp_buf_init(&buf, MP_YAML_MAX_BYTES);
    char chunk[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && !rc)
        rc = mp_buf_append(&buf, chunk, n);
    bool err = ferror(f) != 0;
    fclose(f);
    if (rc || err) {
        mp_buf_fini(&buf);
        mp_diag_set(d, rc ? rc : MP_EIO, rc ? "file larger than %zu bytes" : "read error",
                    MP_YAML_MAX_BYTES);
        mp_diag_set_file(d, path);
        return rc ? rc : MP_EIO;
    }
    rc = mp_yaml_load_string(buf.data ? buf.data : "", buf.len, path, out, d);
    mp_buf_fini(&buf);
    return rc;
}

void mp_yaml_free(struct mp_yaml_doc *doc)
{
    if (!doc)
        return;
    mp_arena_free(doc->arena);
    free(doc);
}

const struct mp_yaml_node *mp_yaml_root(const struct mp_yaml_doc *doc)
{
    return doc->root;
}

const char *mp_yaml_file(const struct mp_yaml_doc *doc)
{
    return doc->file;
}

const struct mp_yaml_node *mp_yaml_get(const struct mp_yaml_node *map, const char *key)
{
    if (!map || map->kind != MP_YAML_MAP)
        return NULL;
    for (size_t i = map->n; i-- > 0;) {
        const struct mp_yaml_node *k = map->keys[i];
        if (k->str && strcmp(k->str, key) == 0)
            return map->vals[i];
    }
    return NULL;
}

bool mp_yaml_is_null(const struct mp_yaml_node *node)
{
    return !node || node->kind == MP_YAML_NULL;
}

int mp_yaml_str(const struct mp_yaml_node *node, const char *field, const char **out,
                struct mp_diag *d)
{
    if (!node || node->kind != MP_YAML_SCALAR)
        return mp_yaml_error(node, field, d, MP_EINVAL, "expected a string, found %s",
                             node ? mp_yaml_kind_name(node->kind) : "nothing");
    *out = node->str;
    return 0;
}

int mp_yaml_int(const struct mp_yaml_node *node, const char *field, long long *out,
                struct mp_diag *d)
{
    if (!node || node->kind != MP_YAML_SCALAR || node->quoted)
        goto bad;
    char tmp[64];
    size_t j = 0;
    for (size_t i = 0; i < node->len && j + 1 < sizeof(tmp); i++)
        if (node->str[i] != '_') /* YAML 1.1 digit separators */
            tmp[j++] = node->str[i];
    tmp[j] = 0;
    if (!j || j + 1 >= sizeof(tmp))
        goto bad;
    const char *s = tmp;
    int base = 10;
    bool neg = false;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
        base = 8;
        s += 2;
    }
    if (!*s || *s == '-' || *s == '+')
        goto bad;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, base);
    if (errno || *end)
        goto bad;
    *out = neg ? -v : v;
    return 0;
bad:
    return mp_yaml_error(node, field, d, MP_EINVAL, "expected an integer, found %s%s%s%s",
                         node && node->str ? "'" : "",
                         node && node->str ? node->str
                                           : (node ? mp_yaml_kind_name(node->kind) : "nothing"),
                         node && node->str ? "'" : "",
                         node && node->kind == MP_YAML_SCALAR && node->quoted ? " (quoted)" : "");
}

int mp_yaml_double(const struct mp_yaml_node *node, const char *field, double *out,
                   struct mp_diag *d)
{
    if (!node || node->kind != MP_YAML_SCALAR || node->quoted)
        goto bad;
    const char *s = node->str;
    const char *a = (*s == '+' || *s == '-') ? s + 1 : s;
    if (strcasecmp(a, ".inf") == 0) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    if (strcasecmp(s, ".nan") == 0) {
        *out = NAN;
        return 0;
    }
    if (!*s || strchr(s, '_') || strpbrk(s, "xXnN")) /* no hex floats, nan, inf words */
        goto bad;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (errno == ERANGE && fabs(v) > 1.0)
        goto bad;
    if (*end || end == s)
        goto bad;
    *out = v;
    return 0;
bad:
    return mp_yaml_error(
        node, field, d, MP_EINVAL, "expected a number, found %s%s%s", node && node->str ? "'" : "",
        node && node->str ? node->str : (node ? mp_yaml_kind_name(node->kind) : "nothing"),
        node && node->str ? "'" : "");
}

int mp_yaml_bool(const struct mp_yaml_node *node, const char *field, bool *out, struct mp_diag *d)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    if (node && node->kind == MP_YAML_SCALAR && !node->quoted) {
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
            if (strcmp(node->str, yes[i]) == 0) {
                *out = true;
                return 0;
            }
            if (strcmp(node->str, no[i]) == 0) {
                *out = false;
                return 0;
            }
        }
    }
    return mp_yaml_error(node, field, d, MP_EINVAL, "expected true or false, found %s%s%s",
                         node && node->str ? "'" : "",
                         node && node->str ? node->str
                                           : (node ? mp_yaml_kind_name(node->kind) : "nothing"),
                         node && node->str ? "'" : "");
}
