// SPDX-License-Identifier: MIT
// PGN output for xiangqi games: the tags testers expect, moves in h2e2 coordinates, and
// cutechess-style comments {score/depth time} after each move.
#pragma once

#include <stdio.h>

#include "game.h"

typedef struct {
    const char *event, *site;
    int round;
    const char *time_control; // e.g. "10+0.1"
    const char *rules;        // rule set name
} PgnTags;

const char *pgn_result(Outcome o);
/// Writes one game; returns 0, or -1 if the stream reported an error.
int pgn_write(FILE *out, const GameRecord *rec, const PgnTags *tags);

enum { PGN_LINE_MAX = 4096 };

/// Reads the next game written in this format (tags, coordinate moves, comments): 1 when a
/// game was read, 0 at the end of the input, -1 on a malformed game (why names the line and
/// the fault; reading may go on with the next game). Moves are checked for legality from
/// the FEN tag (or the start position); {book} comments mark book moves; names are taken as
/// player 0 = Red.
int pgn_read(FILE *in, GameRecord *rec, int *lineno, char *why, size_t why_len);
