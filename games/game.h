// SPDX-License-Identifier: MIT
// One game between two players under the xiangqi rules (search/rules: the same code the
// engine searches with) plus the adjudication policy of a match: score-based resign and
// draw (fastchess meaning), an engine-side ply cap, and an honest clock.
#pragma once

#include <stdatomic.h>

#include "openings.h"
#include "player.h"
#include "rules.h"

enum { GAME_MAX_PLIES = 1200, GAME_DETAIL_MAX = 256 };

typedef struct {
    int64_t base_ms, inc_ms;   // clock; base_ms 0 and no other limit: untimed
    int moves;                 // moves per period (moves/time controls); 0: whole game
    int64_t movetime_ms;       // fixed time per move
    int depth;                 // fixed depth
    uint64_t nodes;            // fixed nodes
    int64_t margin_ms;         // lateness tolerated before a time forfeit
    int64_t fixed_deadline_ms; // wall-clock cap per move for depth/nodes limits
} TimeControl;

typedef struct {
    bool enabled;
    int movenumber, movecount,
        score; // from full move movenumber, movecount moves per side within +-score
} DrawAdjudication;

typedef struct {
    bool enabled, twosided;
    int movecount, score; // a side's own score <= -score for movecount of its moves
} ResignAdjudication;

typedef struct {
    RulesConfig rules;
    TimeControl tc[2]; // per player (not per colour)
    DrawAdjudication draw;
    ResignAdjudication resign;
    int max_plies; // engine-side cap: drawn as "ply limit"; 0: none
} GameConfig;

typedef enum {
    TERM_NONE,
    TERM_CHECKMATE,
    TERM_STALEMATE,
    TERM_PERPETUAL_CHECK,
    TERM_COUNTING,
    TERM_REPETITION,
    TERM_MOVE_RULE,
    TERM_INSUFFICIENT,
    TERM_RESIGN_ADJ,
    TERM_DRAW_ADJ,
    TERM_PLY_LIMIT,
    TERM_TIME_FORFEIT,
    TERM_ILLEGAL_MOVE,
    TERM_CRASH,
    TERM_STALL,
    TERM_ABORTED,         // the match was interrupted; not a result
    TERM_RESIGN,          // the engine resigned (xboard `resign`): a loss, not a failure
    TERM_PERPETUAL_CHASE, // asian, rule C: a repetition lost by the side that chased
    TERM_NB
} Termination;

typedef struct {
    Move move;
    int score; // mover's view; mate distance in moves when mate is set
    bool has_score, mate;
    int depth;
    int64_t time_ms;
} GameMove;

typedef struct {
    char start_fen[BOARD_FEN_MAX];
    char names[2][PLAYER_NAME_MAX];
    int red;         // index of the player with Red
    Outcome outcome; // OUTCOME_RED_WINS / BLACK_WINS / DRAW; NONE if aborted
    Termination term;
    char detail[GAME_DETAIL_MAX]; // e.g. the illegal move text, the crash message
    int book_plies;               // the first book_plies moves are the opening's, not the players'
    int ply_count;
    GameMove moves[GAME_MAX_PLIES];
} GameRecord;

const char *game_termination_name(Termination t);
/// A player whose failure ended the game (crash, stall, illegal move, time) must be
/// restarted before its next game: which one, or -1.
int game_failed_player(const GameRecord *rec);

/// Parses "base+inc" (seconds, e.g. 10+0.1), "moves/base+inc" (40/60+0.5) or "inf".
bool game_parse_tc(const char *text, TimeControl *tc);
void game_format_tc(const TimeControl *tc, char *out, size_t len);

/// Whether the side that made the last ply resigns: its own score was at or below -score
/// for its last movecount moves (and, two-sided, the opponent's at or above +score).
bool game_resigns(const ResignAdjudication *ra, const GameRecord *rec);
/// Whether both sides' last movecount scores lie within +-score, from full move movenumber.
bool game_agrees_draw(const DrawAdjudication *da, const GameRecord *rec, int fullmove);

/// Whether a finished game record (from another rank) holds: it starts from opening (NULL:
/// any valid position) with its moves, every move is legal, the game ends where the rules end
/// it and with their result, and an adjudication or failure has a result of its kind. false
/// with why otherwise (aborted games included).
bool game_verify(const GameRecord *rec, const GameConfig *cfg, const Opening *opening, char *why,
                 size_t why_len);

/// Plays one game from an opening (position and book moves, already validated). players[i]
/// is player i; red says which one has Red once the book moves are played. stop (may be
/// NULL) aborts between moves. Returns 0, or -1 if the opening is invalid.
int game_play(Player *players[2], int red, const GameConfig *cfg, const Opening *opening,
              const atomic_bool *stop, GameRecord *rec);
