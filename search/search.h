// SPDX-License-Identifier: MIT
// The engine as a library: an Engine owns its options, weights, transposition table and
// search threads, so several engines can live in one process (two players of a game, many
// concurrent games). Searches report through a callback; nothing here writes to stdout.
//
// Search: iterative deepening with aspiration windows, principal variation search,
// quiescence over captures (all evasions when in check), check extension, null move (only
// with a chariot, horse or cannon left: xiangqi zugzwang), reverse futility, futility and
// late-move pruning, late-move reductions, SEE, mate-distance pruning, killer and history
// ordering, optional history pruning. Their margins and reductions are rows of the weight
// table (search_params.def), so SPSA tunes them. Lazy SMP: Threads workers share the table;
// one atomic stop flag.
#pragma once

#include <stdatomic.h>

#include "board.h"
#include "nnue.h"
#include "params.h"
#include "rules.h"
#include "timeman.h"
#include "tt.h"

enum {
    MAX_PLY = 128,
    VALUE_MATE = 30000,
    VALUE_MATE_IN_MAX = VALUE_MATE - MAX_PLY,
    VALUE_INFINITE = 31000,
    ENGINE_MAX_THREADS = 256,
    ENGINE_MAX_HASH_MB = 65536,
    ENGINE_MAX_MULTIPV = 64,
    ENGINE_MAX_GAME_PLIES = BOARD_HISTORY_MAX - 2 * MAX_PLY,
    ENGINE_ERROR_MAX = 512 // bytes of engine_error()'s sentence
};

/// Search features that can be switched off (option name = value true/false), to measure in a
/// match what each is worth (scripts/sprt-features.sh). Each one on by default has won an
/// SPRT of with against without; InternalReduction has not (+5.2 +/- 9.8 Elo in 3000 games at
/// 5000 nodes, no verdict), so it stays off until it does. ChaseRule acts under asian only; it
/// won scripts/sprt-chase.sh (+22.3 +/- 10.9 Elo, H1 after 826 games at 5000 nodes).
typedef enum {
    SEARCH_REVERSE_FUTILITY,     // "ReverseFutility"
    SEARCH_NULL_MOVE,            // "NullMove"
    SEARCH_LATE_MOVE_PRUNING,    // "LateMovePruning"
    SEARCH_FUTILITY,             // "Futility"
    SEARCH_SEE_PRUNING,          // "SeePruning"
    SEARCH_LATE_MOVE_REDUCTIONS, // "LateMoveReductions"
    SEARCH_CHECK_EXTENSION,      // "CheckExtension"
    SEARCH_ASPIRATION,           // "Aspiration"
    SEARCH_KILLER_HISTORY,       // "KillerHistory": killer and history move ordering
    SEARCH_CONTINUATION_HISTORY, // "ContinuationHistory": quiet ordering by the last 2 moves
    SEARCH_INTERNAL_REDUCTION,   // "InternalReduction": one ply less without a table move
    SEARCH_QUIESCENCE_CHECKS,    // "QuiescenceChecks": quiet checks at the first qsearch ply
    SEARCH_CHASE_RULE,           // "ChaseRule": rule C in the tree (asian): a chaser's line loses
    SEARCH_FEATURE_NB
} SearchFeature;
#define SEARCH_FEATURE_ALL ((1u << SEARCH_FEATURE_NB) - 1)
#define SEARCH_FEATURE_DEFAULT                                                                     \
    (SEARCH_FEATURE_ALL & ~(1u << SEARCH_INTERNAL_REDUCTION) & ~(1u << SEARCH_QUIESCENCE_CHECKS))

typedef struct {
    int depth, seldepth;
    int multipv; // 1-based line number
    int score;   // centipawns from the side to move; mate scores near +-VALUE_MATE
    int mate;    // moves to mate (negative: getting mated), 0 if not a mate score
    Bound bound; // BOUND_EXACT, or LOWER/UPPER after an aspiration fail
    uint64_t nodes;
    int64_t time_ms;
    uint64_t nps;
    int hashfull;
    int pv_len;
    Move pv[MAX_PLY];
} SearchInfo;

typedef struct {
    Move best, ponder; // MOVE_NONE when the side to move has no legal move
    int score, depth;
    uint64_t nodes;
    int64_t time_ms;
} SearchResult;

typedef void (*SearchInfoFn)(void *ctx, const SearchInfo *info);

typedef enum {
    ENGINE_OK,
    ENGINE_ERR_UNKNOWN_OPTION,
    ENGINE_ERR_VALUE,
    ENGINE_ERR_NOMEM,
    ENGINE_STATUS_NB
} EngineStatus;

typedef struct Engine Engine;

const char *engine_strerror(EngineStatus st);

/// A new engine: 1 thread, 16 MB hash, default weights, seed rules, the embedded net (UseNNUE
/// true when the build has one). NULL if out of memory.
Engine *engine_new(void);
void engine_free(Engine *e);

/// Options by UCI name: Threads, Hash, MultiPV, Move Overhead, Rules (seed|asian),
/// CountingDefault, Clear Hash, the search features (SearchFeature, true/false), EvalFile (a
/// net file, loaded and checked at once; empty or <default>: the embedded net), UseNNUE
/// (true/false: evaluate with the net instead of the linear evaluation; default true when the
/// build embeds a net, and true needs a net), and every row of the weight table by its name:
/// evaluation weights (params.def) and the search's margins and time factors (search_params.def),
/// read afresh by each engine_search.
EngineStatus engine_set_option(Engine *e, const char *name, const char *value);
/// Why the last engine_set_option failed, when it has a sentence to say (a bad net file,
/// UseNNUE without a net); "" otherwise.
const char *engine_error(const Engine *e);
/// A search feature's option name ("NullMove", ...); NULL past SEARCH_FEATURE_NB.
const char *engine_feature_name(int feature);
int engine_threads(const Engine *e);
int engine_multipv(const Engine *e);
const RulesConfig *engine_rules(const Engine *e);
Weights *engine_weights(Engine *e);

/// The position to search, with its game history (for repetitions). ENGINE_ERR_VALUE if the
/// game is longer than ENGINE_MAX_GAME_PLIES (the search needs room in the history).
EngineStatus engine_set_position(Engine *e, const Board *b);
const Board *engine_position(const Engine *e);

/// The static evaluation the search uses (the net with UseNNUE, else the linear one),
/// centipawns for the side to move.
int engine_evaluate(const Engine *e, const Board *b);
/// Whether the search evaluates with a net; if so and id is not NULL, writes the net's id.
bool engine_uses_nnue(const Engine *e, char id[NNUE_ID_MAX]);

/// Forgets everything learned (table, histories): a new game.
void engine_new_game(Engine *e);

/// Searches the position until a limit is reached or engine_stop() is called; blocks.
/// info (may be NULL) receives each completed iteration's lines.
SearchResult engine_search(Engine *e, const SearchLimits *limits, SearchInfoFn info, void *ctx);

/// Asks a running search to stop soon; safe from any thread.
void engine_stop(Engine *e);
