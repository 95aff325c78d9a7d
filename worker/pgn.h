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
