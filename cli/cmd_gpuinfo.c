/* --gpu-info [--json]: detect GPUs and tools through the gpu module and
 * print its text or JSON view. Always exits 0, as Magpie does: "no GPU" is
 * an answer, not a failure. */
#include <stdio.h>
#include <string.h>

#include <magpie/calib.h>
#include <magpie/gpu.h>

#include "cli.h"

/* The calibration cache (`magpie gpu calibrate`): a "calibrations" array
 * at the end of the JSON object, or a line per file in the text. */
static int add_calibrations(struct mp_buf *out, bool json)
{
    struct mp_buf c;
    mp_buf_init(&c, 0);
    int rc = mp_calib_cache_json(NULL, &c);
    if (!rc && json) {
        size_t end = out->len;
        while (end > 0 && out->data[end - 1] != '}')
            end--;
        if (end > 0) {
            char tail[8];
            snprintf(tail, sizeof(tail), "%s", out->data + end);
            out->len = end - 1;
            rc = mp_buf_printf(out, ", \"calibrations\": %s}%s", mp_buf_cstr(&c), tail);
        }
    } else if (!rc && c.len > 2) {
        rc = mp_buf_puts(out, "calibrations (magpie gpu calibrate):\n");
        const char *p = mp_buf_cstr(&c);
        while (!rc && (p = strstr(p, "\"file\":\"")) != NULL) {
            p += 8;
            const char *e = strchr(p, '"');
            rc = mp_buf_printf(out, "  %.*s\n", e ? (int)(e - p) : 0, p);
            p = e ? e : p;
        }
    }
    mp_buf_fini(&c);
    return rc;
}

int cli_gpu_info(bool json)
{
    struct mp_gpu_info info;
    struct mp_diag d;
    struct mp_buf out;
    mp_diag_clear(&d);
    mp_buf_init(&out, 0);
    int rc = mp_gpu_detect(&info, NULL, &d);
    if (rc) {
        /* Only an allocation failure gets here; report and still say "none". */
        cli_report_error(&d, rc);
        mp_gpu_info_init(&info);
    }
    rc = json ? mp_gpu_info_json(&info, &out) : mp_gpu_info_text(&info, &out);
    if (rc == 0)
        rc = add_calibrations(&out, json);
    if (rc == 0)
        fwrite(out.data, 1, out.len, stdout);
    mp_buf_fini(&out);
    mp_gpu_info_fini(&info);
    return rc == 0 ? EXIT_OK : EXIT_FAIL;
}
