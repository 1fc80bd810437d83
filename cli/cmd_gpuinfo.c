/* --gpu-info (placeholder until the gpu module lands). */
#include <stdio.h>

#include "cli.h"

int cli_gpu_info(bool json)
{
    if (json)
        printf("{\"detected\": false}\n");
    else
        printf("GPU Information:\n  (No GPU detected)\n");
    return EXIT_OK;
}
