/* Private declarations shared by the files of src/ray. */
#ifndef MP_RAY_INT_H
#define MP_RAY_INT_H

#include <stddef.h>

#include <jansson.h>

#include <magpie/ray.h>

/* A JSON request: body (may be NULL) sent, *out the parsed answer (a JSON
 * string holding the raw text when it is not JSON; NULL when empty). */
int ray_json_request(struct mp_ray_client *c, const char *method, const char *path, json_t *body,
                     long *st, json_t **out, struct mp_diag *d);

/* The request body of POST /api/jobs/ for a task (tested without Ray). */
json_t *ray_job_body(const struct mp_ray_config *rc, const struct mp_ray_task *t,
                     const char *entrypoint);
/* The entrypoint shell line for magpie_args run in dir/inputs. */
int ray_entrypoint(const struct mp_ray_config *rc, const struct mp_ray_task *t,
                   const char *const *magpie_args, bool keep_ray_address, struct mp_buf *out);

#endif
