// SPDX-License-Identifier: MIT
// The tolerant PGN reader of `xqforge judge` (pgn_read_text, pgn_text_replay, pgn_text_end)
// on any bytes: it always ends (one call per game, never more calls than bytes), a game it
// reads replays to at most its plies with a reason for any shortfall, a refused game says
// why; nothing crashes or reads out of bounds under ASan and UBSan.
#include "fuzz_util.h"

#include "movegen.h"
#include "pgn_read.h"

static PgnText text;
static Board board;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    board_init();
    if (size == 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    if (!in)
        abort();
    int lineno = 0, r;
    char why[256];
    for (size_t calls = 0; (r = pgn_read_text(in, &text, &lineno, why, sizeof why)) != 0; calls++) {
        if (calls > size)
            abort();
        if (r == 1) {
            if (text.ply_count < 0 || text.ply_count > GAME_MAX_PLIES)
                abort();
            PgnReplay rep;
            for (int base = -1; base <= 1; base++) {
                if (pgn_text_replay(&text, base, &board, &rep)) {
                    if (rep.plies < 0 || rep.plies > text.ply_count || board.hist_len != rep.plies)
                        abort();
                    if ((rep.plies < text.ply_count) != (rep.why[0] != 0))
                        abort();
                }
            }
            PgnEnd e = pgn_text_end(&text);
            if (e.kind > PGN_END_UNFINISHED)
                abort();
        } else if (r != -1 || !*why) {
            abort();
        }
    }
    fclose(in);
    return 0;
}
