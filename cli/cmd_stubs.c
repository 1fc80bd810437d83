/* Subcommands that later work fills in. They say so clearly and exit 2.
 * (None at the moment: `mcp` moved to cmd_mcp.c.) */
#include <stdio.h>
#include <string.h>

#include "cli.h"

__attribute__((unused)) static int not_yet(const char *name, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: magpie %s [options]\n\n"
                   "'magpie %s' is not implemented yet in this version of magpie.\n",
                   name, name);
            return EXIT_OK;
        }
    }
    fprintf(stderr, "magpie: error: '%s' is not implemented yet\n", name);
    return EXIT_USAGE;
}
