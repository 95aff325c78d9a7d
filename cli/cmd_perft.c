// SPDX-License-Identifier: MIT
// xqforge perft: node counts for move-generator checks and speed measurements.
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "move.h"
#include "movegen.h"
#include "perft.h"

static void perft_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge perft [--fen FEN] [--divide] [--threads N] DEPTH\n\n"
            "Counts the leaf nodes of the legal move tree to DEPTH plies (1-12). The last ply\n"
            "is counted without making its moves, as Fairy-Stockfish's 'go perft' does.\n\n"
            "  --fen FEN     position to count from (default: the start position)\n"
            "  --divide      first print 'move: count' for every root move\n"
            "  --threads N   split the root moves over N threads (default 1)\n"
            "  -h, --help    this help\n\n"
            "The last line of output is 'Nodes searched: N'; time and speed go to stderr.\n");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run_divide(Board *b, int depth, uint64_t *total)
{
    MoveList list;
    movegen_legal(b, &list);
    *total = 0;
    for (int i = 0; i < list.count; i++) {
        char text[MOVE_TEXT_MAX];
        board_make_move(b, list.moves[i]);
        uint64_t n = perft(b, depth - 1);
        board_unmake_move(b);
        move_text(list.moves[i], 0, text);
        printf("%s: %llu\n", text, (unsigned long long)n);
        *total += n;
    }
    printf("\n");
    return 0;
}

int cmd_perft(int argc, char **argv)
{
    static const struct option opts[] = {{"fen", required_argument, NULL, 'f'},
                                         {"divide", no_argument, NULL, 'd'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *fen = BOARD_START_FEN;
    int divide = 0;
    long threads = 1, depth;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "f:dt:h", opts, NULL)) != -1;) {
        switch (c) {
        case 'f': fen = optarg; break;
        case 'd': divide = 1; break;
        case 't':
            if (!cli_parse_int(optarg, 1, 256, &threads)) {
                fprintf(stderr, "xqforge perft: --threads must be an integer 1-256, got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h': perft_usage(stdout); return 0;
        default: perft_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "xqforge perft: expected exactly one DEPTH argument\n");
        perft_usage(stderr);
        return EXIT_USAGE;
    }
    if (!cli_parse_int(argv[optind], 1, 12, &depth)) {
        fprintf(stderr, "xqforge perft: DEPTH must be an integer 1-12, got '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }

    Board *b = malloc(sizeof *b);
    if (!b) {
        fprintf(stderr, "xqforge perft: out of memory\n");
        return 1;
    }
    char why[160];
    FenStatus st = board_set_fen(b, fen, why, sizeof why);
    if (st != FEN_OK) {
        fprintf(stderr, "xqforge perft: invalid FEN: %s (%s)\n", why, fen_strerror(st));
        free(b);
        return EXIT_USAGE;
    }

    double t0 = now_seconds();
    uint64_t nodes = 0;
    int err = 0;
    if (divide)
        err = run_divide(b, (int)depth, &nodes);
    else if (threads > 1)
        err = perft_parallel(b, (int)depth, (int)threads, &nodes);
    else
        nodes = perft(b, (int)depth);
    double secs = now_seconds() - t0;
    free(b);
    if (err) {
        fprintf(stderr, "xqforge perft: could not run %ld threads: %s\n", threads, strerror(err));
        return 1;
    }
    fprintf(stderr, "Time: %.3f s, %.0f nodes/s\n", secs, secs > 0 ? nodes / secs : 0.0);
    printf("Nodes searched: %llu\n", (unsigned long long)nodes);
    return 0;
}
