// SPDX-License-Identifier: MIT
// Move text in coordinate form, `h2e2`: from-point then to-point, files a-i, ranks 0-9
// (the UCI dialect of Pikafish). rank_base 1 reads and writes Fairy-Stockfish's UCI ranks
// 1-10 (`h3e3`, `b3b10`).
#pragma once

#include "board.h"

enum { MOVE_TEXT_MAX = 8 }; // longest text (`a10a10`) plus terminator, rounded up

typedef enum {
    MOVE_TEXT_OK,
    MOVE_TEXT_SYNTAX,
    MOVE_TEXT_ILLEGAL,
    MOVE_TEXT_STATUS_NB
} MoveTextStatus;

const char *move_text_strerror(MoveTextStatus st);

/// Writes m as text; MOVE_NONE is written as "0000".
void move_text(Move m, int rank_base, char out[MOVE_TEXT_MAX]);

/// Parses coordinate text without a board; surrounding text must already be stripped.
MoveTextStatus move_parse(const char *text, int rank_base, Move *out);

/// Parses text and checks that it names a legal move in b.
MoveTextStatus move_parse_legal(const Board *b, const char *text, int rank_base, Move *out);
