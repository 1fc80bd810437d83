/* magpie yaml: a YAML document (libyaml) loaded into a small read-only tree
 * of map / sequence / scalar nodes, each carrying the file name and the
 * 1-based line:column where it starts, so that a bad value in a config can
 * be reported as "config.yaml:12:7: ...".
 *
 * Only the first document of a stream is loaded. Aliases (*name) point at
 * the anchored node (shared, never copied). Merge keys ("<<") are kept as
 * ordinary keys. Scalars are typed on request (mp_yaml_int, _double, _bool)
 * with YAML 1.1 spellings as PyYAML reads them, so Magpie's configs mean
 * the same thing here.
 *
 * Ownership: everything hangs off one struct mp_yaml_doc; nodes and strings
 * stay valid until mp_yaml_free.
 */
#ifndef MAGPIE_YAML_H
#define MAGPIE_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

enum mp_yaml_kind {
    MP_YAML_NULL = 0, /* an empty document, or a plain null scalar (~, null, empty) */
    MP_YAML_SCALAR,
    MP_YAML_SEQ,
    MP_YAML_MAP,
};

#define MP_YAML_MAX_DEPTH 256
#define MP_YAML_MAX_BYTES ((size_t)64 << 20)

struct mp_yaml_node {
    enum mp_yaml_kind kind;
    const char *file; /* the document's file name (or the name given to _load_string) */
    long line;        /* 1-based */
    long col;         /* 1-based */
    const char *str;  /* scalar text, NUL-terminated ("" for NULL nodes); NULL otherwise */
    size_t len;       /* scalar length in bytes */
    bool quoted;      /* scalar written in quotes or as a block: never null/bool/number by itself */
    size_t n;         /* SEQ: items; MAP: key/value pairs */
    struct mp_yaml_node **items; /* SEQ: n items */
    struct mp_yaml_node **keys;  /* MAP: n keys (in document order) */
    struct mp_yaml_node **vals;  /* MAP: n values */
};

struct mp_yaml_doc;

/* Loads the file at path. Errors (unreadable file, YAML syntax) carry the
 * file name and line:col in d. Returns 0 or MP_EIO / MP_EPARSE / MP_ENOMEM. */
int mp_yaml_load_file(const char *path, struct mp_yaml_doc **out, struct mp_diag *d);
/* Same for text in memory; name is used in error messages and node->file. */
int mp_yaml_load_string(const char *text, size_t len, const char *name, struct mp_yaml_doc **out,
                        struct mp_diag *d);
void mp_yaml_free(struct mp_yaml_doc *doc);

/* The root node (never NULL; kind NULL for an empty document). */
const struct mp_yaml_node *mp_yaml_root(const struct mp_yaml_doc *doc);
const char *mp_yaml_file(const struct mp_yaml_doc *doc);

/* "null", "scalar", "sequence", "mapping". */
const char *mp_yaml_kind_name(enum mp_yaml_kind k);

/* Value of key in a MAP node (last one wins on duplicates, as PyYAML);
 * NULL when node is NULL, not a map, or has no such key. */
const struct mp_yaml_node *mp_yaml_get(const struct mp_yaml_node *map, const char *key);

/* True for a NULL node pointer or a node of kind MP_YAML_NULL. */
bool mp_yaml_is_null(const struct mp_yaml_node *node);

/* Typed scalar reads. Each fails with MP_EINVAL and a diag naming
 * file:line:col, the field (may be NULL) and what was expected.
 * _str accepts any scalar (numbers and booleans as written). */
int mp_yaml_str(const struct mp_yaml_node *node, const char *field, const char **out,
                struct mp_diag *d);
int mp_yaml_int(const struct mp_yaml_node *node, const char *field, long long *out,
                struct mp_diag *d);
int mp_yaml_double(const struct mp_yaml_node *node, const char *field, double *out,
                   struct mp_diag *d);
/* true/false, yes/no, on/off (any of the usual capitalisations). */
int mp_yaml_bool(const struct mp_yaml_node *node, const char *field, bool *out, struct mp_diag *d);

/* Records an error about node (file, line:col, field) in d; returns code. */
int mp_yaml_error(const struct mp_yaml_node *node, const char *field, struct mp_diag *d, int code,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
