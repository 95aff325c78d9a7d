// SPDX-License-Identifier: MIT
// PGN (games/pgn_read.c, pgn_read): any input reads as games, malformed games or the end, never
// loops; every game read replays legally from its start FEN and writes back out.
#include "fuzz_util.h"

#include "movegen.h"
#include "pgn.h"
#include "pgn_read.h"

static GameRecord rec;
static Board board;

static void check_game(const GameRecord *r)
{
    char why[160];
    const char *fen = r->start_fen[0] ? r->start_fen : BOARD_START_FEN;
    if (board_set_fen(&board, fen, why, sizeof why) != FEN_OK)
        abort();
    if (r->ply_count < 0 || r->ply_count > GAME_MAX_PLIES || r->book_plies > r->ply_count)
        abort();
    for (int i = 0; i < r->ply_count; i++) {
        if (!movegen_is_legal(&board, r->moves[i].move))
            abort();
        board_make_move(&board, r->moves[i].move);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    board_init();
    if (size == 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    FILE *out = fopen("/dev/null", "w");
    if (!in || !out)
        abort();
    int lineno = 0, r;
    char why[256];
    // Each call consumes at least one line, so the count of calls is bounded by the input.
    for (size_t calls = 0; (r = pgn_read(in, &rec, &lineno, why, sizeof why)) != 0; calls++) {
        if (calls > size)
            abort();
        if (r == 1) {
            check_game(&rec);
            PgnTags tags = {"fuzz", "here", 1, "10+0.1", "asian", PGN_NOTATION_COORDINATE, 0};
            pgn_write(out, &rec, &tags);
        } else if (r != -1 || !*why) {
            abort();
        }
    }
    fclose(in);
    fclose(out);
    return 0;
}
