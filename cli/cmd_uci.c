// SPDX-License-Identifier: MIT
// xqforge uci: the engine on stdin/stdout, for GUIs and match runners.
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "uci.h"

static void uci_usage(FILE *out)
{
    fprintf(out, "usage: xqforge uci\n\n"
                 "Runs the engine under the UCI protocol (Pikafish dialect: FEN with 'w' for Red,\n"
                 "moves like h2e2, ranks 0-9) on standard input and output until 'quit' or end of\n"
                 "input. Send 'ucci' instead of 'uci' for the UCCI subset.\n\n"
                 "Besides the standard commands: 'go perft N' (move counts), 'd' (board, FEN,\n"
                 "key), 'eval' (static evaluation). Malformed commands are answered with\n"
                 "'info string' and ignored.\n");
}

int cmd_uci(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        uci_usage(stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "xqforge uci: unexpected argument '%s'\n", argv[1]);
        uci_usage(stderr);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    return uci_loop(stdin, stdout);
}
