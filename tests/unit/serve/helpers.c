/* Fixtures of the serve tests: fixture paths, a command line as text, a
 * base config, a YAML text loaded as a benchmark config. */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magpie/proc.h>
#include <magpie/serve.h>

#include "area.h"

static char fixture[1024];

const char *fx(const char *name)
{
    const char *root = getenv("MP_FIXTURES");
    snprintf(fixture, sizeof(fixture), "%s/serve/%s", root ? root : "tests/fixtures", name);
    return fixture;
}

/* argv and env of a command as two shell-joined lines */
void joined(const struct mp_serve_cmd *c, struct mp_buf *argv, struct mp_buf *env)
{
    mp_buf_reset(argv);
    mp_buf_reset(env);
    assert_int_equal(mp_proc_join((const char *const *)c->argv, argv), 0);
    if (c->env)
        assert_int_equal(mp_proc_join((const char *const *)c->env, env), 0);
}

void base_cfg(struct mp_serve_config *c, enum mp_serve_framework fw)
{
    mp_serve_config_init(c);
    c->framework = fw;
    c->model = "org/model-7b";
    mp_serve_config_setenv(c, "TP", "2");
    mp_serve_config_setenv(c, "CONC", "8");
}

/* y loaded as a.yaml: the return code must be want (d printed if not) */
void load_yaml(struct mp_serve_config *c, const char *y, int want, struct mp_diag *d)
{
    mp_serve_config_init(c);
    mp_diag_clear(d);
    int rc = mp_serve_config_load_string(c, y, strlen(y), "a.yaml", d);
    if (rc != want)
        print_message("%s:%ld:%ld: %s: %s\n", d->file, d->line, d->col, d->field, d->msg);
    assert_int_equal(rc, want);
}
