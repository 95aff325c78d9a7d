// SPDX-License-Identifier: MIT
// Move text (search/move.c): any text is refused or parses to a move that prints back to text
// parsing to the same move, in both rank conventions; legality is checked in a few positions.
#include "fuzz_util.h"

#include "board.h"
#include "move.h"

static const char *const FENS[] = {
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
    "3akab2/9/4b4/p3p1C1p/2p6/6P2/P3P3P/1C2B4/9/2BAKA3 b - - 0 20",
    "4k4/4a4/9/9/9/9/9/9/4A4/3K5 w - - 0 1",
};

static Board board;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    board_init();
    int rank_base = data[0] & 1, pos = (data[0] >> 1) % 3;
    char *text = fuzz_cstr(data + 1, size - 1);
    Move m, back;
    if (move_parse(text, rank_base, &m) == MOVE_TEXT_OK) {
        char out[MOVE_TEXT_MAX];
        move_text(m, rank_base, out);
        if (move_parse(out, rank_base, &back) != MOVE_TEXT_OK || back != m)
            abort();
    }
    char why[64];
    if (board_set_fen(&board, FENS[pos], why, sizeof why) != FEN_OK)
        abort();
    if (move_parse_legal(&board, text, rank_base, &m) == MOVE_TEXT_OK) {
        board_make_move(&board, m);
        if (!board_is_ok(&board))
            abort();
    }
    free(text);
    return 0;
}
