/* Private helpers shared by the config loaders: typed reads of YAML nodes
 * with $VAR expansion, string lists, command forms and unknown-key
 * warnings. Every function records the first error in d with the node's
 * file:line:col and returns 0 or a negative MP_E* code. */
#ifndef MAGPIE_CONFIG_INT_H
#define MAGPIE_CONFIG_INT_H

#include <magpie/config.h>
#include <magpie/yaml.h>

/* Warns (mp_log) about keys of map that are not in known (NULL-terminated);
 * returns how many were unknown. where names the section ("kernel"). */
int cfg_check_keys(const struct mp_yaml_node *map, const char *const *known, const char *where);
/* Scalar as a new string (expanded when expand); NULL node = leave *out. */
int cfg_str(const struct mp_yaml_node *n, const char *field, bool expand, char **out,
            struct mp_diag *d);
/* Same into a fixed buffer (no expansion). */
int cfg_strbuf(const struct mp_yaml_node *n, const char *field, char *out, size_t len,
               struct mp_diag *d);
/* A list of scalars, or one scalar as a list of one (Magpie tolerates it). */
int cfg_strlist(const struct mp_yaml_node *n, const char *field, bool expand,
                struct mp_strlist *out, struct mp_diag *d);
void cfg_strlist_fini(struct mp_strlist *l);
/* Command forms: string, list of strings, list of lists. */
int cfg_cmds(const struct mp_yaml_node *n, const char *field, struct mp_cmds *out,
             struct mp_diag *d);
/* Numbers with bounds: min <= v (<= max when max > min). */
int cfg_double(const struct mp_yaml_node *n, const char *field, double min, double *out,
               struct mp_diag *d);
int cfg_int(const struct mp_yaml_node *n, const char *field, long long min, long long max, int *out,
            struct mp_diag *d);
int cfg_bool(const struct mp_yaml_node *n, const char *field, bool *out, struct mp_diag *d);
/* {metric: weight} map. */
int cfg_weights(const struct mp_yaml_node *n, const char *field, struct mp_weights *out,
                struct mp_diag *d);
void cfg_weights_fini(struct mp_weights *w);

/* Section loaders shared by the framework and kernel configs. */
int cfg_load_correctness(struct mp_kernel_config *c, const struct mp_yaml_node *n,
                         struct mp_diag *d);
int cfg_load_performance(struct mp_kernel_config *c, const struct mp_yaml_node *n,
                         struct mp_diag *d);
int cfg_load_latency(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d);
int cfg_load_scheduler(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d);
int cfg_load_compare(struct mp_kernel_config *c, const struct mp_yaml_node *n, struct mp_diag *d);

/* Parses the YAML file path, or text[0..len) named name when text is not
 * NULL, and hands its root to load. */
typedef int (*cfg_root_fn)(struct mp_kernel_config *c, const struct mp_yaml_node *root,
                           struct mp_diag *d);
int cfg_load_yaml(struct mp_kernel_config *c, const char *path, const char *text, size_t len,
                  const char *name, cfg_root_fn load, struct mp_diag *d);

#endif
