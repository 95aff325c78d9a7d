// SPDX-License-Identifier: MIT
// PGN for xiangqi games, written: our output (the tags testers expect, moves in h2e2
// coordinates, ICCS or WXF, cutechess-style comments {score/depth time} after each move) and
// the result texts. Reading PGN (ours strictly, other tools' tolerantly) is pgn_read.h.
#pragma once

#include <stdio.h>

#include "game.h"

/// How moves are written: coordinates (h2e2, ranks 0-9 or, with rank_base 1, 1-10), ICCS
/// (H2-E2, XQBase's [Format "ICCS"]) or WXF (C2.5, H2+3, XQBase's [Format "WXF"]).
typedef enum {
    PGN_NOTATION_COORDINATE,
    PGN_NOTATION_ICCS,
    PGN_NOTATION_WXF,
    PGN_NOTATION_NB
} PgnNotation;

/// The name of a notation ("coordinate", "iccs", "wxf").
const char *pgn_notation_name(PgnNotation n);
/// The notation a name gives; false for an unknown name.
bool pgn_notation_parse(const char *name, PgnNotation *out);

typedef struct {
    const char *event, *site;
    int round;
    const char *time_control; // e.g. "10+0.1"
    const char *rules;        // rule set name
    PgnNotation notation;     // 0: coordinates, as before
    int rank_base;            // coordinates only: 0 (h2e2) or 1 (h3e3, ranks 1-10)
} PgnTags;

/// The PGN standard's Termination value for t ("normal", "adjudication", "time forfeit",
/// "rules infraction", "abandoned", "unterminated"); our own name (game_termination_name)
/// goes to the TerminationDetails tag beside it.
const char *pgn_termination_standard(Termination t);

enum { PGN_TOKEN_MAX = 16 };

/// Writes legal move m of b in WXF (C2.5, H2+3, R+.3 for the front one of two chariots on a
/// file, ++.4 and 3+.4 for tandem soldiers): files 1-9 from the mover's right.
void pgn_move_wxf(const Board *b, Move m, char out[PGN_TOKEN_MAX]);
/// pgn_move_wxf with every piece named by letter and file (R9.3 for either of two chariots
/// on a file): the looser spelling some writers use, which the reader accepts.
void pgn_move_wxf_plain(const Board *b, Move m, char out[PGN_TOKEN_MAX]);

const char *pgn_result(Outcome o);
/// The outcome a result text names ("1-0", "0-1", "1/2-1/2"); OUTCOME_NONE for anything else.
Outcome pgn_outcome(const char *result);
/// Writes one game; returns 0, or -1 if the stream reported an error.
int pgn_write(FILE *out, const GameRecord *rec, const PgnTags *tags);
