/* `magpie benchmark --base-url URL`: client-only serving benchmark. */
#include <stdio.h>

#include "cli.h"

int cli_bench_client(int argc, char **argv, const struct cli_global *g)
{
    (void)argc;
    (void)argv;
    (void)g;
    fprintf(stderr, "magpie: error: the serving load generator (--base-url) is not implemented "
                    "yet\n");
    return EXIT_USAGE;
}
