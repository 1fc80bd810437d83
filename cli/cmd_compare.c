/* `magpie compare`: rank kernel implementations against a baseline. The
 * options and the work are those of analyze (cmd_analyze.c) plus
 * --baseline. */
#include "cmd_kernel.h"

int cmd_compare(int argc, char **argv, const struct cli_global *g)
{
    return cli_kernel_main(argc, argv, g, true);
}
