/* --gpu-info [--json]: detect GPUs and tools through the gpu module and
 * print its text or JSON view. Always exits 0, as Magpie does: "no GPU" is
 * an answer, not a failure. */
#include <stdio.h>

#include <magpie/gpu.h>

#include "cli.h"

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
        fwrite(out.data, 1, out.len, stdout);
    mp_buf_fini(&out);
    mp_gpu_info_fini(&info);
    return rc == 0 ? EXIT_OK : EXIT_FAIL;
}
