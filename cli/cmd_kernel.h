/* The shared front end of `magpie analyze` and `magpie compare`
 * (cmd_analyze.c); cmd_compare.c only selects the mode. */
#ifndef MAGPIE_CMD_KERNEL_H
#define MAGPIE_CMD_KERNEL_H

#include <stdbool.h>

#include "cli.h"

int cli_kernel_main(int argc, char **argv, const struct cli_global *g, bool compare);

#endif
