// SPDX-License-Identifier: MIT
// FEN (search/board.c): any text is refused or gives a consistent board; an accepted FEN
// prints back to a FEN that gives the same board, and every legal move makes and unmakes.
#include "fuzz_util.h"

#include "board.h"
#include "movegen.h"

static Board board_a, board_b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    board_init();
    char *fen = fuzz_cstr(data, size);
    char why[128];
    if (board_set_fen(&board_a, fen, why, sizeof why) == FEN_OK) {
        if (!board_is_ok(&board_a))
            abort();
        char out[BOARD_FEN_MAX];
        board_fen(&board_a, out, sizeof out);
        if (board_set_fen(&board_b, out, why, sizeof why) != FEN_OK || board_b.key != board_a.key ||
            memcmp(board_a.squares, board_b.squares, SQUARE_NB))
            abort(); // our own output must read back to the same position
        MoveList list;
        movegen_legal(&board_a, &list);
        for (int i = 0; i < list.count; i++) {
            uint64_t key = board_a.key;
            board_make_move(&board_a, list.moves[i]);
            if (!board_is_ok(&board_a))
                abort();
            board_unmake_move(&board_a);
            if (board_a.key != key)
                abort();
        }
    } else if (!*why) {
        abort(); // a refusal always says why
    }
    free(fen);
    return 0;
}
