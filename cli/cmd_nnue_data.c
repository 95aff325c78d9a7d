// SPDX-License-Identifier: MIT
// Placeholder until this subcommand lands (replaced by its implementation).
#include <stdio.h>

#include "commands.h"

int cmd_nnue_data(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "xqforge nnue %s: not built yet\n", argv[0]);
    return 1;
}
