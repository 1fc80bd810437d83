/* gpu: detection (filled in by the gpu module work). */
#include <magpie/base.h>

int mp_gpu_placeholder_(void);

int mp_gpu_placeholder_(void)
{
    return 0;
}
