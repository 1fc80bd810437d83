/* The roofline arch of the trace commands from --gpu-arch / --gpu-arch-json
 * (cli/trace_arch.h). Errors read "magpie: error: FILE: FIELD: what" for a
 * file (the roofline module's diag: file, field, line and column) and
 * "magpie: error: --gpu-arch 'NAME': ..." for a name; both exit 2. */
#include "trace_arch.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_trace_arch(const char *name, const char *json, struct mp_roofline_arch *arch,
                   const struct mp_roofline_arch **out, bool *is_auto)
{
    *out = NULL;
    *is_auto = name && strcmp(name, "auto") == 0;
    if (json) {
        struct mp_diag d;
        mp_diag_clear(&d);
        int rc = mp_roofline_arch_load_json(json, arch, &d);
        if (rc) {
            if (!d.file[0])
                mp_diag_set_file(&d, json);
            cli_report_error(&d, rc);
            return rc == MP_ENOMEM ? EXIT_FAIL : EXIT_USAGE;
        }
        *out = arch;
        return -1;
    }
    if (!name || *is_auto)
        return -1;
    if (mp_roofline_arch_builtin(name, arch) != 0) {
        fprintf(stderr, "magpie: error: --gpu-arch '%s': not a built-in arch (built-in:", name);
        for (const char *const *n = mp_roofline_arch_builtin_names(); *n; n++)
            fprintf(stderr, " %s", *n);
        fprintf(stderr, "; or --gpu-arch auto, or --gpu-arch-json FILE)\n");
        return EXIT_USAGE;
    }
    *out = arch;
    return -1;
}
