// SPDX-License-Identifier: MIT
// xqforge nnue: the NNUE pipeline's tools on one machine (the cluster runs them as job kinds
// datagen and train): training positions (export, info), training (train), net files (net).
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void nnue_usage(FILE *out)
{
    fprintf(out, "usage: xqforge nnue <subcommand> [options]\n\n"
                 "  extract  training positions (.xqp) from the scored games of a PGN file\n"
                 "  export   write a positions file (.xqp) as plain text for other trainers\n"
                 "  info     a positions file's header, counts and checks\n"
                 "  train    train a net on positions files (one machine; kind = train for MPI)\n"
                 "  net      a net file's header, id and checks\n\n"
                 "Run 'xqforge nnue <subcommand> --help' for its options.\n");
}

int cmd_nnue(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        nnue_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "train") == 0)
        return cmd_nnue_train(argc - 1, argv + 1);
    if (strcmp(sub, "export") == 0 || strcmp(sub, "info") == 0)
        return cmd_nnue_data(argc - 1, argv + 1);
    if (strcmp(sub, "extract") == 0)
        return cmd_nnue_extract(argc - 1, argv + 1);
    if (strcmp(sub, "net") == 0)
        return cmd_nnue_net(argc - 1, argv + 1);
    fprintf(stderr, "xqforge nnue: unknown subcommand '%s'\n", sub);
    nnue_usage(stderr);
    return EXIT_USAGE;
}
