// SPDX-License-Identifier: MIT
// xqforge: one program, many subcommands (git style).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "commands.h"

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} Command;

static int cmd_help(int argc, char **argv);

static const Command COMMANDS[] = {
    {"help", "list the subcommands, or show one's help", cmd_help},
    {"bench", "search fixed positions: speed and node-count signature", cmd_bench},
    {"perft", "count the leaves of the legal move tree of a position", cmd_perft},
    {"judge", "the rules' verdict on a move list, or on every game of a PGN file", cmd_judge},
    {"diffcheck", "compare our legal moves with Fairy-Stockfish's along random games",
     cmd_diffcheck},
    {"run", "run a job file over MPI ranks (or on this machine)", cmd_run},
    {"play", "play a match between two engines (fastchess-style)", cmd_play},
    {"book", "probe a weighted move book written by a book job", cmd_book},
    {"stats", "Elo, LOS and SPRT verdict of match counts (fishtest's statistics)", cmd_stats},
    {"wdl", "the win/draw/loss model of our games: fit from runs, eval", cmd_wdl},
    {"texel", "Texel datasets from games (extract) and the evaluation fit (fit, info)", cmd_texel},
    {"nnue", "NNUE: training data (export, info), training (train), nets (net)", cmd_nnue},
    {"upload", "deliver the reports waiting in a spool directory", cmd_upload},
    {"submit", "check a job and add it to a fleet's queue as a test", cmd_submit},
    {"queue", "list the tests of a fleet's queue (state, games, Elo, LLR, share)", cmd_queue},
    {"stop", "stop a test of a fleet's queue", cmd_stop},
    {"requeue", "put a failed, stopped or abandoned test of a queue back", cmd_requeue},
    {"set", "change a queued or running test's priority or throughput", cmd_set},
    {"fleet", "play the tests of a queue in one MPI allocation (mpirun ... xqforge fleet)",
     cmd_fleet},
    {"uci", "run the engine under the UCI protocol on stdin/stdout", cmd_uci},
};
enum { COMMAND_NB = sizeof COMMANDS / sizeof COMMANDS[0] };

static void print_usage(FILE *out)
{
    fprintf(out, "usage: xqforge <command> [options]\n\n"
                 "xqforge tests and tunes xiangqi engines on a cluster.\n\ncommands:\n");
    for (int i = 0; i < COMMAND_NB; i++)
        fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\nRun 'xqforge <command> --help' for a command's options.\n");
}

static const Command *find_command(const char *name)
{
    for (int i = 0; i < COMMAND_NB; i++)
        if (strcmp(COMMANDS[i].name, name) == 0)
            return &COMMANDS[i];
    return NULL;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_usage(stdout);
        return 0;
    }
    const Command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "xqforge: unknown command '%s'\n", argv[1]);
        return EXIT_USAGE;
    }
    char *args[] = {(char *)c->name, "--help", NULL};
    return c->run(2, args);
}

int cli_parse_int(const char *text, long lo, long hi, long *out)
{
    if (!text || !*text)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    board_init();
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_help(1, argv);
    if (strcmp(argv[1], "--version") == 0) {
        printf("xqforge %s\n", XQFORGE_VERSION);
        return 0;
    }
    const Command *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "xqforge: unknown command '%s' (see 'xqforge help')\n", argv[1]);
        return EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
