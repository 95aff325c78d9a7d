// SPDX-License-Identifier: MIT
// The xiangqi game-ending rules of ../shared/RULES.md, written once for both the referee
// (rules_game_end: is the game over, and how) and the search (rules_search_score: the value
// of a repetition, a move-rule draw, a counting draw). Rule numbers below are RULES.md's.
#pragma once

#include "board.h"

typedef enum { RULES_SEED, RULES_ASIAN, RULES_SET_NB } RuleSet;

typedef enum {
    END_NONE,
    END_CHECKMATE,       // rule 1
    END_STALEMATE,       // rule 2
    END_PERPETUAL_CHECK, // rule 4 (seed) or a repetition under asian
    END_COUNTING,        // rule 6
    END_REPETITION,      // draw by repetition
    END_MOVE_RULE,       // asian: 60-move (120-ply) rule
    END_INSUFFICIENT,    // rule 7
    END_PLY_LIMIT,       // rule 9 (seed): the job's whole-game limit
    END_PERPETUAL_CHASE, // asian, rule C: a repetition lost by the side that chased
    END_REASON_NB
} EndReason;

typedef enum { OUTCOME_NONE, OUTCOME_RED_WINS, OUTCOME_BLACK_WINS, OUTCOME_DRAW } Outcome;

typedef struct {
    RuleSet set;
    int counting_default; // rule 6: moves allowed when no table row applies (default 60)
    int ply_limit;        // rule 9: the game is drawn after this many plies; 0 = none
} RulesConfig;

typedef struct {
    Outcome outcome;
    EndReason reason;
} GameEnd;

/// Defaults of a rule set: seed has a 300-ply game limit, asian none.
RulesConfig rules_config_default(RuleSet set);
const char *rules_set_name(RuleSet set);
bool rules_set_parse(const char *name, RuleSet *out);
/// Text used in results and PGN: "checkmate", "perpetual check", "perpetual chase", ...
const char *rules_end_name(EndReason reason);

/// Whether the game is over in the current position (after the last move of the board's
/// history), and how. A rule-decided result takes the precedence RULES.md gives it: a side
/// with no legal move loses before any draw rule is looked at. Under asian a third occurrence
/// is judged by rule C in full (perpetual check, then checks, then perpetual chase).
GameEnd rules_game_end(const Board *b, const RulesConfig *cfg);

/// Rule 7: neither side has a chariot, horse, cannon or soldier.
bool rules_insufficient_material(const Board *b);

/// Rule 6: moves the stronger side is allowed against a bare general with this material.
int rules_counting_limit(const Board *b, Color strong, int counting_default);

typedef enum { SEARCH_RULE_NONE, SEARCH_RULE_DRAW, SEARCH_RULE_WIN, SEARCH_RULE_LOSS } SearchRule;

/// For the search, at an interior node: whether a rule already decides this position, seen
/// from the side to move. A position repeated once inside the searched line is scored at
/// once, its cycle running from that earlier occurrence: a loss for a side that checked with
/// every one of its moves in the cycle (when the other did not); under asian with chase set,
/// a loss for the one side that chased perpetually (rule C5-C7, when no move of the cycle
/// checked); a draw otherwise. So are the move rule, counting and material draws. chase false
/// scores chases as draws (to measure the rule in a match; the referee always applies it).
/// Checkmate and stalemate are left to the search (it finds no legal move).
SearchRule rules_search_probe(const Board *b, const RulesConfig *cfg, bool chase);
