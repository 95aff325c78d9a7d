// SPDX-License-Identifier: MIT
// xqforge nnue extract: NNUE training positions from games already played. Every game of a
// PGN written by xqforge (play, or a cluster match's games.pgn) carries each move's score and
// depth in its comment; the position before each scored move becomes a record when it is
// quiet (the side to move not in check, the move not a capture), past the opening (the book
// moves and --min-ply), not a mate score, and not seen before in this extraction.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "board.h"
#include "commands.h"
#include "game.h"
#include "keyset.h"
#include "pgn_read.h"
#include "posdata.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: xqforge nnue extract [-o FILE] [--min-ply N] PGN...\n\n"
                 "Writes the NNUE training positions (.xqp, tuning/posdata.h) of games played by\n"
                 "xqforge: the position before each scored move that is quiet (not in check, the\n"
                 "move not a capture), after the book moves and the first --min-ply plies\n"
                 "(default 8), without mate scores, each position once (by its Zobrist key).\n"
                 "Scores are the mover's, as the PGN comments give them; results the game's.\n\n"
                 "  -o FILE       output (default positions.xqp)\n"
                 "  --min-ply N   skip the first N plies of each game (0..1000)\n");
}

typedef struct {
    PosWriter *w;
    KeySet seen;
    Board b;
    GameRecord rec;
    long min_ply;
    uint64_t games, bad, looked, dup, kept;
} Extract;

/// Adds one game's records: 0, -1 for a game whose moves do not replay, 1 on a write error.
static int extract_game(Extract *x)
{
    const GameRecord *rec = &x->rec;
    if (rec->outcome == OUTCOME_NONE)
        return 0;
    double red = rec->outcome == OUTCOME_RED_WINS ? 1 : rec->outcome == OUTCOME_DRAW ? 0.5 : 0;
    const char *fen = rec->start_fen[0] ? rec->start_fen : BOARD_START_FEN;
    if (board_set_fen(&x->b, fen, NULL, 0) != FEN_OK)
        return -1;
    for (int i = 0; i < rec->ply_count; i++) {
        const GameMove *gm = &rec->moves[i];
        Board *b = &x->b;
        bool quiet = !board_in_check(b) && board_piece(b, move_to(gm->move)) == NO_PIECE;
        if (i >= rec->book_plies && i >= x->min_ply && gm->has_score && !gm->mate && quiet) {
            x->looked++;
            int added = keyset_add(&x->seen, b->key);
            if (added < 0)
                return 1;
            if (added == 0) {
                x->dup++;
            } else {
                uint8_t r[POSDATA_RECORD];
                posdata_encode(b, gm->score, gm->move, i, gm->depth, (uint32_t)x->games, red, r);
                if (posdata_writer_add(x->w, r) != POSDATA_OK)
                    return 1;
                x->kept++;
            }
        }
        if (b->hist_len >= BOARD_HISTORY_MAX - 1)
            break;
        board_make_move(b, gm->move);
    }
    x->games++;
    return 0;
}

static int extract_file(Extract *x, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "xqforge nnue extract: %s: %s\n", path,
                S_ISDIR(sb.st_mode) ? "a directory, not a PGN file" : strerror(errno));
        return EXIT_USAGE;
    }
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "xqforge nnue extract: %s: %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    char why[512];
    int line = 0, got, rc = 0;
    uint64_t good = 0, bad = 0;
    while (rc == 0 && (got = pgn_read(in, &x->rec, &line, why, sizeof why)) != 0) {
        int r = got < 0 ? -1 : extract_game(x);
        if (r < 0 && ++bad <= 20)
            fprintf(stderr, "xqforge nnue extract: %s: %s (game skipped)\n", path,
                    got < 0 ? why : "a move the rules refuse");
        if (r > 0) {
            fprintf(stderr, "xqforge nnue extract: cannot write the output\n");
            rc = 1;
        }
        good += r == 0;
    }
    if (rc == 0 && ferror(in)) {
        fprintf(stderr, "xqforge nnue extract: %s: read error at line %d\n", path, line);
        rc = 1;
    } else if (rc == 0 && good == 0) {
        fprintf(stderr, "xqforge nnue extract: %s: no game could be read (%d lines)\n", path, line);
        rc = EXIT_USAGE;
    }
    x->bad += bad;
    fclose(in);
    return rc;
}

int cmd_nnue_extract(int argc, char **argv)
{
    const char *out = "positions.xqp";
    long min_ply = 8;
    int first = argc;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--min-ply") && i + 1 < argc) {
            if (!cli_parse_int(argv[++i], 0, 1000, &min_ply)) {
                fprintf(stderr, "xqforge nnue extract: --min-ply '%s': expected 0..1000\n",
                        argv[i]);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "xqforge nnue extract: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        } else {
            first = i;
            break;
        }
    }
    if (first == argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    board_init();
    Extract *x = calloc(1, sizeof *x);
    char why[512];
    if (!x || keyset_init(&x->seen, 1 << 20) != 0) {
        fprintf(stderr, "xqforge nnue extract: out of memory\n");
        free(x);
        return 1;
    }
    x->min_ply = min_ply;
    if (posdata_writer_open(out, false, &x->w, why, sizeof why) != POSDATA_OK) {
        fprintf(stderr, "xqforge nnue extract: %s\n", why);
        keyset_destroy(&x->seen);
        free(x);
        return 1;
    }
    int rc = 0;
    for (int i = first; i < argc && rc == 0; i++)
        rc = extract_file(x, argv[i]);
    if (rc != 0) {
        // The writer's temporary file is dropped: no half dataset under the output's name.
        posdata_writer_discard(x->w);
    } else if (posdata_writer_close(x->w, why, sizeof why) != POSDATA_OK) {
        fprintf(stderr, "xqforge nnue extract: %s\n", why);
        rc = 1;
    } else {
        printf("%s: %llu positions from %llu games (%llu quiet positions looked at, %llu "
               "repeated, %llu games skipped)\n",
               out, (unsigned long long)x->kept, (unsigned long long)x->games,
               (unsigned long long)x->looked, (unsigned long long)x->dup,
               (unsigned long long)x->bad);
    }
    keyset_destroy(&x->seen);
    free(x);
    return rc;
}
