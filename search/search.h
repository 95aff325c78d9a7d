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
    ENGINE_ERROR_MAX = 512, // bytes of engine_error()'s sentence
    ENGINE_DEFAULT_NET = -1 // an option's default (options.def): true when the build embeds a net
};

/// Search features that can be switched off (option name = value true/false), to measure in a
/// match what each is worth: the SEARCH_FEATURE rows of options.def, in their order.
typedef enum {
#define ENGINE_OPTION(id, name, type, def, lo, hi)
#define SEARCH_FEATURE(id, name, def) SEARCH_##id,
#include "options.def"
#undef SEARCH_FEATURE
#undef ENGINE_OPTION
    SEARCH_FEATURE_NB
} SearchFeature;
#define SEARCH_FEATURE_ALL ((1u << SEARCH_FEATURE_NB) - 1)
/// The features on in a new engine (options.def's defaults), one bit per SearchFeature.
enum {
    SEARCH_FEATURE_DEFAULT = 0
#define ENGINE_OPTION(id, name, type, def, lo, hi)
#define SEARCH_FEATURE(id, name, def) | (def) << SEARCH_##id
#include "options.def"
#undef SEARCH_FEATURE
#undef ENGINE_OPTION
};

/// A UCI option's type (options.def says what each takes).
typedef enum {
    OPTION_SPIN,
    OPTION_CHECK,
    OPTION_COMBO,
    OPTION_BUTTON,
    OPTION_STRING,
    OPTION_TYPE_NB
} OptionType;

/// The rows of options.def: ENGINE_OPT_THREADS, ..., then ENGINE_OPT_FEATURE_NULL_MOVE, ...
typedef enum {
#define ENGINE_OPTION(id, name, type, def, lo, hi) ENGINE_OPT_##id,
#include "options.def"
#undef ENGINE_OPTION
    ENGINE_OPT_NB,
    ENGINE_OPT_FEATURE_FIRST = ENGINE_OPT_NB - SEARCH_FEATURE_NB // the features close the table
} EngineOptionId;

typedef struct {
    const char *name; // as UCI lists it; engine_set_option ignores case
    OptionType type;
    int def, min, max; // SPIN, CHECK (0/1 or ENGINE_DEFAULT_NET), COMBO (a RuleSet)
    const char *text;  // STRING: the default as UCI lists it
    bool front_end;    // a UCI_OPTION row: the UCI front end reads it, engine_set_option does not
} EngineOptionInfo;

extern const EngineOptionInfo engine_options[ENGINE_OPT_NB];

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

/// A new engine: every option of options.def at its default (1 thread, 16 MB hash, seed rules,
/// the embedded net when the build has one), default weights. NULL if out of memory.
Engine *engine_new(void);
void engine_free(Engine *e);

/// Options by UCI name (any case): the rows of options.def that are not UCI_OPTION (Threads,
/// Hash, MultiPV, Move Overhead, Rules, CountingDefault, Clear Hash, EvalFile, UseNNUE, the
/// search features), each refused outside its range, and every row of the weight table by its
/// name: evaluation weights (params.def) and the search's margins and time factors
/// (search_params.def), read afresh by each engine_search.
EngineStatus engine_set_option(Engine *e, const char *name, const char *value);
/// Why the last engine_set_option failed, when it has a sentence to say (a bad net file,
/// UseNNUE without a net); "" otherwise.
const char *engine_error(const Engine *e);
/// Whether engine_set_option knows the name (any case): an engine row of options.def or a
/// weight. Its value is not looked at.
bool engine_option_exists(const char *name);
/// An option's default, ENGINE_DEFAULT_NET resolved for this build (1 with an embedded net).
int engine_option_default(EngineOptionId id);
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
