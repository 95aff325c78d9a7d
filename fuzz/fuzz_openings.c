// SPDX-License-Identifier: MIT
// Openings/EPD files (games/openings.c): any file loads or is refused; every opening kept has
// a FEN that reads back and moves that are legal from it, and each line parses on its own;
// read as a PGN book (format=pgn plies=5), the same of each game's opening.
#include "fuzz_util.h"

#include "movegen.h"
#include "openings.h"

static Board board;

static void check_opening(const Opening *op)
{
    char why[128];
    if (board_set_fen(&board, op->fen, why, sizeof why) != FEN_OK)
        abort();
    if (op->move_count < 0 || op->move_count > OPENING_MAX_MOVES)
        abort();
    for (int i = 0; i < op->move_count; i++) {
        if (!movegen_is_legal(&board, op->moves[i]))
            abort();
        board_make_move(&board, op->moves[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    board_init();
    char path[64], why[256];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    Openings o = {0};
    if (openings_load(&o, path, NULL, why, sizeof why) == OPENINGS_OK) {
        if (o.count < 1)
            abort();
        for (int i = 0; i < o.count; i++)
            check_opening(&o.items[i]);
        openings_pick(&o, 12345, true, 99, 0);
        openings_free(&o);
    }
    // The same bytes as a PGN book: every opening kept is legal and cut to its plies.
    if (openings_load_as(&o, path, OPENINGS_FORMAT_PGN, 5, NULL, why, sizeof why) == OPENINGS_OK) {
        for (int i = 0; i < o.count; i++) {
            if (o.items[i].move_count > 5)
                abort();
            check_opening(&o.items[i]);
        }
        openings_free(&o);
    }
    close(fd);
    // Line by line, as the match setup does with one opening given inline.
    char *text = fuzz_cstr(data, size), *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        Opening op;
        if (openings_parse_line(line, &op, why, sizeof why))
            check_opening(&op);
    }
    free(text);
    return 0;
}
