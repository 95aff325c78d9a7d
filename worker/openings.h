// SPDX-License-Identifier: MIT
// Opening positions for matches: one opening a line, a FEN or EPD position (extra EPD fields
// allowed) or `startpos`, optionally followed by `moves m1 m2 ...` played from it. Openings
// given as moves from the start position suit engines that cannot load a FEN (MaxQi). Each
// line is validated before use; a bad one is reported with its line number and skipped. An
// embedded default set needs no file.
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "board.h"

enum { OPENINGS_MAX = 10000000, OPENINGS_LINE_MAX = 1024, OPENING_MAX_MOVES = 64 };

typedef struct {
    char fen[BOARD_FEN_MAX]; // validated, canonical
    int move_count;          // moves played from fen (all legal)
    Move moves[OPENING_MAX_MOVES];
} Opening;

typedef struct {
    Opening *items;
    int count;
} Openings;

typedef enum {
    OPENINGS_OK,
    OPENINGS_ERR_IO,
    OPENINGS_ERR_EMPTY,
    OPENINGS_ERR_NOMEM
} OpeningsStatus;

extern const char *const openings_default_lines[];
extern const int openings_default_count;

const char *openings_strerror(OpeningsStatus st);
/// Loads a file; bad lines are reported on warn (if not NULL) as "path:line: why" and skipped.
OpeningsStatus openings_load(Openings *o, const char *path, FILE *warn, char *why, size_t why_len);
OpeningsStatus openings_load_default(Openings *o);
void openings_free(Openings *o);

/// Parses and validates one line; false with why on a bad line.
bool openings_parse_line(const char *line, Opening *out, char *why, size_t why_len);

/// The opening for pair number pair: sequential from start, or a seeded shuffle.
int openings_pick(const Openings *o, uint64_t pair, bool random, uint64_t seed, int start);
