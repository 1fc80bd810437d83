/* Correctness through IntelliKit Accordo (Magpie's `correctness.backend:
 * accordo`): Accordo captures the buffers of one kernel in a reference and
 * an optimized binary at the HSA level and compares them. magpie runs the
 * `accordo` command line and reads the last JSON line it prints
 * (is_valid, num_arrays_validated, num_mismatches, error_message,
 * mismatches[]). Unverified: Accordo needs ROCm and an AMD GPU; the
 * contract follows Magpie's notes and is tested against a stand-in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/proc.h>

#include "kernel_int.h"

/* The last line of out that parses as a JSON object. */
int kern_accordo_parse(const char *out, struct mp_kernel_correct *c)
{
    json_t *last = NULL;
    const char *p = out;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n && p[0] == '{') {
            json_t *j = json_loadb(p, n, 0, NULL);
            if (json_is_object(j)) {
                json_decref(last);
                last = j;
            } else {
                json_decref(j);
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    snprintf(c->mode, sizeof(c->mode), "accordo");
    if (!last) {
        c->success = false;
        c->errors = mp_strdup("Accordo printed no JSON result (invalid JSON)");
        return MP_EPARSE;
    }
    c->success = json_is_true(json_object_get(last, "is_valid"));
    c->verified = c->success;
    c->checks = (int)json_integer_value(json_object_get(last, "num_arrays_validated"));
    c->mismatches = json_integer_value(json_object_get(last, "num_mismatches"));
    if (!c->success) {
        struct mp_buf b;
        mp_buf_init(&b, 1 << 16);
        const char *em = json_string_value(json_object_get(last, "error_message"));
        mp_buf_printf(&b, "Accordo: %s", em && *em ? em : "arrays differ");
        json_t *mm = json_object_get(last, "mismatches");
        for (size_t i = 0; i < json_array_size(mm) && i < 5; i++) {
            json_t *m = json_array_get(mm, i);
            const char *arg = json_string_value(json_object_get(m, "arg_name"));
            mp_buf_printf(&b, "; %s (dispatch %lld): max difference %g", arg ? arg : "?",
                          (long long)json_integer_value(json_object_get(m, "dispatch_index")),
                          json_number_value(json_object_get(m, "max_difference")));
        }
        c->errors = mp_strdup(mp_buf_cstr(&b));
        mp_buf_fini(&b);
    }
    json_decref(last);
    return 0;
}

int kern_accordo_run(const struct mp_kernel_config *cfg, const struct mp_kernel_spec *k,
                     struct mp_kernel_result *r)
{
    const struct mp_correctness_cfg *a = &cfg->correctness;
    struct mp_kernel_correct *c = &r->correct;
    r->has_correct = true;
    snprintf(c->mode, sizeof(c->mode), "accordo");
    const char *missing = !a->accordo_kernel_name        ? "kernel_name"
                          : !a->accordo_reference_binary ? "reference_binary"
                          : !a->accordo_optimized_binary ? "optimized_binary"
                                                         : NULL;
    if (missing) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Accordo requires correctness.accordo.%s", missing);
        c->errors = mp_strdup(msg);
        r->correctness = MP_STAGE_FAILED;
        kern_add_error(r, "%s", msg);
        return 0;
    }
    char atol[32], rtol[32];
    snprintf(atol, sizeof(atol), "%g", a->atol);
    snprintf(rtol, sizeof(rtol), "%g", a->rtol);
    const char *argv[64];
    int n = 0;
    argv[n++] = "accordo";
    argv[n++] = "--kernel-name";
    argv[n++] = a->accordo_kernel_name;
    argv[n++] = "--reference-binary";
    argv[n++] = a->accordo_reference_binary;
    argv[n++] = "--optimized-binary";
    argv[n++] = a->accordo_optimized_binary;
    argv[n++] = "--atol";
    argv[n++] = atol;
    argv[n++] = "--rtol";
    argv[n++] = rtol;
    if (a->equal_nan)
        argv[n++] = "--equal-nan";
    if (a->accordo_kernel_args.n > 0) {
        argv[n++] = "--kernel-args";
        for (int i = 0; i < a->accordo_kernel_args.n && n < 62; i++)
            argv[n++] = a->accordo_kernel_args.v[i];
    }
    argv[n] = NULL;
    struct mp_proc_opts po = {
        .cwd = a->accordo_working_directory ? a->accordo_working_directory : k->working_dir,
        .env = (const char *const *)k->env,
        .timeout_s = a->accordo_timeout_s,
    };
    struct mp_proc_result res;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_proc_run(argv, &po, &res, &d);
    if (rc) {
        c->errors = mp_strdup(rc == MP_ENOTFOUND
                                  ? "accordo not found. Install IntelliKit Accordo to use this "
                                    "backend."
                                  : d.msg);
    } else if (res.timed_out) {
        c->errors = mp_strdup("Accordo timed out");
    } else {
        kern_accordo_parse(mp_buf_cstr(&res.out), c);
    }
    mp_proc_result_fini(&res);
    r->correctness = c->success ? MP_STAGE_SUCCESS : MP_STAGE_FAILED;
    if (!c->success)
        kern_add_error(r, "%s", c->errors ? c->errors : "Accordo failed");
    return 0;
}
