/* Fixtures shared by the serve tests (helpers.c). */
#ifndef MP_TEST_SERVE_HELPERS_H
#define MP_TEST_SERVE_HELPERS_H

#include <magpie/base.h>
#include <magpie/serve.h>

/* MP_FIXTURES/serve/name (one static buffer: valid until the next call) */
const char *fx(const char *name);
/* argv and env of a command as two shell-joined lines */
void joined(const struct mp_serve_cmd *c, struct mp_buf *argv, struct mp_buf *env);
/* a config of framework fw for org/model-7b with TP=2 and CONC=8 */
void base_cfg(struct mp_serve_config *c, enum mp_serve_framework fw);
/* y loaded as a.yaml: the return code must be want (d printed if not) */
void load_yaml(struct mp_serve_config *c, const char *y, int want, struct mp_diag *d);

#endif
