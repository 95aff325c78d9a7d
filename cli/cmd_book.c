// SPDX-License-Identifier: MIT
// xqforge book probe FEN: the moves a weighted move book holds for a position. (Book jobs
// themselves run through `xqforge run`: coordinator/books and worker/work_book.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "commands.h"
#include "move.h"
#include "movebook.h"
#include "openings.h"

// ---------------------------------------------------------------------------------------
// xqforge book probe FEN

static void book_usage(FILE *out)
{
    fprintf(out, "usage: xqforge book probe [--book FILE] FEN|startpos [moves m1 m2 ...]\n\n"
                 "Lists the moves a weighted move book (.xqb, written by a kind = book job)\n"
                 "holds for a position: how many book lines played each, and its mean score\n"
                 "(centipawns, mover's view). FILE defaults to book.xqb.\n");
}

int cmd_book(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        book_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "probe") != 0) {
        fprintf(stderr, "xqforge book: unknown subcommand '%s'\n", argv[1]);
        book_usage(stderr);
        return EXIT_USAGE;
    }
    const char *file = "book.xqb";
    char line[OPENINGS_LINE_MAX] = "";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--book") && i + 1 < argc) {
            file = argv[++i];
            continue;
        }
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, "%s%s", n ? " " : "", argv[i]);
    }
    Opening op;
    char why[256];
    if (!line[0] || !openings_parse_line(line, &op, why, sizeof why)) {
        fprintf(stderr, "xqforge book probe: %s\n", line[0] ? why : "no position given");
        return EXIT_USAGE;
    }
    Board *b = malloc(sizeof *b);
    MovebookEntry *e = NULL;
    size_t n = 0, first = 0;
    if (!b)
        return 1;
    board_set_fen(b, op.fen, NULL, 0);
    for (int i = 0; i < op.move_count; i++)
        board_make_move(b, op.moves[i]);
    uint64_t key = b->key;
    free(b);
    if (movebook_read(file, &e, &n, why, sizeof why) != MOVEBOOK_OK) {
        fprintf(stderr, "xqforge book probe: %s\n", why);
        return 1;
    }
    size_t k = movebook_probe(e, n, key, &first);
    uint64_t total = 0;
    for (size_t i = first; i < first + k; i++)
        total += e[i].count;
    printf("key %016llx: %zu move%s, %llu line%s\n", (unsigned long long)key, k, k == 1 ? "" : "s",
           (unsigned long long)total, total == 1 ? "" : "s");
    for (size_t i = first; i < first + k; i++) {
        char mv[MOVE_TEXT_MAX];
        move_text(e[i].move, 0, mv);
        printf("  %-6s count %8u  %5.1f%%  score %+d\n", mv, e[i].count,
               100.0 * e[i].count / (double)total, e[i].score);
    }
    free(e);
    return 0;
}
