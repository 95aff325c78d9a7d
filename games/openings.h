// SPDX-License-Identifier: MIT
// Opening positions for matches: one opening a line, a FEN or EPD position (extra EPD fields
// allowed) or `startpos`, optionally followed by `moves m1 m2 ...` played from it. Openings
// given as moves from the start position suit engines that cannot load a FEN (MaxQi). Each
// line is validated before use; a bad one is reported with its line number and skipped. Two
// embedded sets need no file: `builtin:balanced` (the default, for every kind of job) and
// `builtin:unbalanced` (the side to move 60..150 cp ahead; opt-in: README.md, Opening books);
// openings_load takes those names in place of a path.
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

/// What an openings file holds: EPD or FEN lines (with `moves ...`), or PGN games whose first
/// plies are the openings.
typedef enum { OPENINGS_FORMAT_EPD, OPENINGS_FORMAT_PGN, OPENINGS_FORMAT_NB } OpeningsFormat;

/// The name of a format ("epd", "pgn").
const char *openings_format_name(OpeningsFormat f);
/// The format a name gives; false for an unknown name.
bool openings_format_parse(const char *name, OpeningsFormat *out);

typedef enum {
    OPENINGS_OK,
    OPENINGS_ERR_IO,
    OPENINGS_ERR_EMPTY,
    OPENINGS_ERR_NOMEM,
    OPENINGS_ERR_PGN, // the file's first line is a PGN tag, and it was read as EPD
} OpeningsStatus;

extern const char *const openings_default_lines[];
extern const int openings_default_count;
extern const char *const openings_unbalanced_lines[];
extern const int openings_unbalanced_count;

#define OPENINGS_BUILTIN_PREFIX "builtin:"

/// An embedded set: its name after "builtin:", its lines and what it holds.
typedef struct {
    const char *name;
    const char *const *lines;
    const int *count;
    const char *about;
} OpeningsBuiltin;

/// The embedded sets, the default first; *n gets their number.
const OpeningsBuiltin *openings_builtins(int *n);
/// The set named by "builtin:NAME" (or by NAME alone); NULL when there is none.
const OpeningsBuiltin *openings_builtin_find(const char *spec);
/// A hash of a set's lines (a run's identity names the data it played).
uint64_t openings_builtin_hash(const OpeningsBuiltin *b);

const char *openings_strerror(OpeningsStatus st);
/// Loads a file, or an embedded set when path is "builtin:NAME"; bad lines are reported on
/// warn (if not NULL) as "path:line: why" and skipped.
OpeningsStatus openings_load(Openings *o, const char *path, FILE *warn, char *why, size_t why_len);
/// openings_load for a file of format fmt, each opening cut to its first plies moves (0: all;
/// at most OPENING_MAX_MOVES). A PGN game is read by the tolerant reader of `xqforge judge`
/// (pgn_read_text: ours, cutechess's, fastchess's, XQBase's ICCS and WXF): its FEN tag (or the
/// start position) and its first plies moves, all legal; a game that cannot be read is
/// reported on warn as "path:line: why" and skipped.
OpeningsStatus openings_load_as(Openings *o, const char *path, OpeningsFormat fmt, int plies,
                                FILE *warn, char *why, size_t why_len);
/// The embedded balanced set (builtin:balanced).
OpeningsStatus openings_load_default(Openings *o);
OpeningsStatus openings_load_builtin(Openings *o, const OpeningsBuiltin *b);
void openings_free(Openings *o);

/// Parses and validates one line; false with why on a bad line.
bool openings_parse_line(const char *line, Opening *out, char *why, size_t why_len);

/// The opening for pair number pair: sequential from start, or a seeded shuffle.
int openings_pick(const Openings *o, uint64_t pair, bool random, uint64_t seed, int start);
