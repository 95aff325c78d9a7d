// SPDX-License-Identifier: MIT
// Opening-book candidates. A work unit is a number; its candidates are a pure function of the
// configuration, the seed and that number (the random generator is seeded from them and every
// search starts from a cleared engine), so a unit gives the same candidates on any rank, in any
// order, before or after a restart. A candidate: a start position (the start position or a
// seed-book entry), a few plies each chosen at random among the moves of a shallow MultiPV
// search that lie within a margin of the best (uniformly, or by softmax of the scores), then
// the verification search's score of the position reached. The coordinator judges the window.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "board.h"
#include "openings.h"
#include "rules.h"

enum { BOOKGEN_MAX_PLIES = 60, BOOKGEN_MAX_UNIT = 256 };

/// An early-abort test of the verification search: after each iteration from abort_depth on
/// (below verify_depth), whether the position (score: Red's view) is clearly out of the book,
/// so the deeper iterations are not worth searching (Stockfish's DFRC book search, which gave
/// up once the draw rate was clearly outside its window). Deterministic: it may depend on the
/// position and the score only.
typedef bool (*BookgenAbortFn)(void *ctx, const Board *b, int score);

typedef struct {
    int plies_min, plies_max; // 0..BOOKGEN_MAX_PLIES
    int multipv, select_depth;
    int margin;         // cp below the best line
    double temperature; // cp; 0: uniform within the margin
    int verify_depth;
    int hash_mb;
    int unit; // candidates per unit, 1..BOOKGEN_MAX_UNIT
    uint64_t seed;
    RuleSet rules;
    const Openings *starts; // NULL or empty: the start position
    BookgenAbortFn abort;   // NULL: every verification searches to verify_depth
    void *abort_ctx;
    int abort_depth; // the first iteration abort is asked after
} BookgenConfig;

typedef struct {
    char start_fen[BOARD_FEN_MAX];
    int path_len;
    Move path[BOOKGEN_MAX_PLIES];
    int path_scores[BOOKGEN_MAX_PLIES]; // shallow score of each move played, mover's view
    int score;                          // verification score, Red's view
} BookgenCandidate;

/// A replayed candidate: what the coordinator derives from the moves itself.
typedef struct {
    uint64_t key;            // of the position reached
    uint64_t mirror_key;     // of its left-right mirror (files a<->i), the same side to move
    char epd[BOARD_FEN_MAX]; // its EPD position: board, side, "- -"
    bool black_to_move;
    bool in_check;                    // the side to move is in check
    int ply;                          // plies from the start of the game, by the FEN's move number
    uint64_t keys[BOOKGEN_MAX_PLIES]; // the key before each move of the path
} BookgenLine;

typedef enum {
    BOOKGEN_OK,
    BOOKGEN_ERR_CONFIG, // a setting out of range
    BOOKGEN_ERR_NOMEM,
    BOOKGEN_ERR_ENGINE, // the engine refused an option
    BOOKGEN_ABORTED,
    BOOKGEN_STATUS_NB
} BookgenStatus;

typedef struct Bookgen Bookgen;

const char *bookgen_strerror(BookgenStatus st);

/// A generator for one thread: its own engine and a cache of verified positions. The config
/// (and its starts) must outlive it.
BookgenStatus bookgen_new(const BookgenConfig *cfg, Bookgen **out);
void bookgen_free(Bookgen *g);

/// Generates the cfg->unit candidates of unit `unit` into out[0..cfg->unit); stops early with
/// BOOKGEN_ABORTED when *abort becomes true. *nodes (may be NULL) grows by the nodes searched.
BookgenStatus bookgen_unit(Bookgen *g, uint64_t unit, const atomic_bool *abort,
                           BookgenCandidate *out, uint64_t *nodes);

/// Replays moves from start_fen, each checked legal; false with why on a bad FEN or move.
/// Fills the keys of the position reached and of its mirror, and whether it is in check.
bool bookgen_replay(const char *start_fen, const Move *path, int n, BookgenLine *out, char *why,
                    size_t why_len);

/// The left-right mirror (files a<->i) of a FEN's board, other fields kept; false when the
/// board part does not fit out.
bool bookgen_mirror_fen(const char *fen, char *out, size_t len);

/// The verification search of one position (from its EPD position, no history), Red's view;
/// what bookgen_unit scores candidates with, for tests that re-search a sample. With an abort
/// test that fires, the score of the iteration it fired after.
BookgenStatus bookgen_verify(Bookgen *g, const char *fen, int *score, uint64_t *nodes);
