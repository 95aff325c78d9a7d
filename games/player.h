// SPDX-License-Identifier: MIT
// A player of games: our engine in-process (builtin) or an external engine over pipes
// (UCI in the Pikafish dialect, UCCI, xboard/CECP). The game manager talks to every kind
// through this one interface and never sees protocol text.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "board.h"
#include "params.h"
#include "rules.h"

enum {
    PLAYER_NAME_MAX = 64,
    PLAYER_OPTIONS_MAX = 64,    // option.NAME=VALUE settings per player
    PLAYER_ARGS_MAX = 32,       // arguments of an external command
    PLAYER_ENV_MAX = 16,        // env.NAME=VALUE settings per player
    PLAYER_TEXT_MAX = 1024,     // command, paths, option names and values
    PLAYER_ADVERTISED_MAX = 256 // options an external engine advertises that are kept
};

typedef enum { PROTO_BUILTIN, PROTO_UCI, PROTO_UCCI, PROTO_XBOARD, PROTO_NB } Protocol;

typedef struct {
    char name[PLAYER_TEXT_MAX];
    char value[PLAYER_TEXT_MAX];
} PlayerOption;

typedef struct {
    char name[PLAYER_NAME_MAX];
    Protocol proto;
    // External engines
    char cmd[PLAYER_TEXT_MAX]; // program path, run without a shell
    char args[PLAYER_ARGS_MAX][PLAYER_TEXT_MAX];
    int argc;
    char workdir[PLAYER_TEXT_MAX]; // empty: inherit
    int rank_base;                 // 0 (ranks 0-9) or 1 (Fairy-Stockfish's UCI: 1-10)
    int startup_timeout_ms;        // time to answer uci/ucci/xboard handshake
    int ping_timeout_ms;           // time to answer isready/ping
    // The engine's environment (games/process.h: an allow-list of ours, then passenv's
    // names, then env) and limits (setrlimit in the engine's process; 0: none)
    char env[PLAYER_ENV_MAX][PLAYER_TEXT_MAX]; // "NAME=value", from env.NAME keys
    int env_count;
    char passenv[PLAYER_TEXT_MAX]; // names, blank-separated
    uint64_t rlimit_as;            // bytes of address space
    uint64_t rlimit_cpu_s;         // seconds of CPU time
    // Every kind: options (UCI setoption; for builtin: Threads, Hash, any weight, ...)
    PlayerOption options[PLAYER_OPTIONS_MAX];
    int option_count;
    // External engines: compare the option.NAME settings with the options the engine
    // advertises before a job starts (check_options = false turns it off; not part of a run's
    // identity: it changes what is checked, not what is played)
    bool skip_option_check;
    // Builtin only
    char weights_file[PLAYER_TEXT_MAX]; // empty: default weights
    // External engines: where the protocol lines are logged (games/englog.h), shared by every
    // process of this engine on this rank; NULL: nowhere. Not part of the engine: a run's
    // identity and the checks ignore it.
    struct EngineLog *log;
} PlayerConfig;

typedef enum {
    PLAYER_OPT_OTHER, // string, combo, file, path, ...: any value
    PLAYER_OPT_CHECK,
    PLAYER_OPT_SPIN, // a whole number in min..max (a slider of xboard too)
    PLAYER_OPT_BUTTON,
    PLAYER_OPT_TYPE_NB
} PlayerOptionType;

/// An option an external engine advertised in its handshake (UCI `option name N type T`, UCCI
/// `option N type T`, xboard `feature option="N -T ..."`).
typedef struct {
    const char *name; // valid as long as the player
    PlayerOptionType type;
    bool has_range; // spin: min and max were given
    long long min, max;
} PlayerOptionInfo;

/// What a player is told for one move: the clock, or a fixed budget.
typedef struct {
    int64_t time_ms[COLOR_NB]; // remaining; -1 when the game has no clock
    int64_t inc_ms[COLOR_NB];
    int movestogo;       // 0: sudden death
    int64_t movetime_ms; // fixed time per move; 0: none
    int depth;           // fixed depth; 0: none
    uint64_t nodes;      // fixed nodes; 0: none
} PlayerLimits;

/// A player's answer.
typedef struct {
    Move move;
    int score; // centipawns from the mover's view, as the engine reported it
    bool has_score;
    bool mate; // score is a mate distance (score holds +-moves)
    int depth;
    uint64_t nodes;
} PlayerMove;

typedef enum {
    PLAYER_OK,
    PLAYER_ERR_START,    // could not start, or no handshake in time
    PLAYER_ERR_CRASH,    // the process died or closed its pipes
    PLAYER_ERR_STALL,    // no answer to ping/isready in time
    PLAYER_ERR_TIMEOUT,  // no move within the hard deadline given to player_go
    PLAYER_ERR_ILLEGAL,  // a move that is not legal in the position
    PLAYER_ERR_PROTOCOL, // an unparsable move or reply
    PLAYER_ERR_CONFIG,   // a bad option or setting (named in the message)
    PLAYER_RESIGNED,     // the engine resigned (xboard `resign`): a loss, not a failure
    PLAYER_STATUS_NB
} PlayerStatus;

typedef struct Player Player;

const char *player_strerror(PlayerStatus st);
const char *player_proto_name(Protocol p);
bool player_proto_parse(const char *name, Protocol *out);

/// Starts a player (for external engines: spawn, handshake, options). On failure *out is
/// NULL and msg (if not NULL) explains.
PlayerStatus player_new(const PlayerConfig *cfg, Player **out, char *msg, size_t msg_len);
void player_free(Player *p);

/// Sets engine weights in-process (SPSA plays every pair with new values, no restart):
/// weight ids[i] (params.h) to values[i], each clipped to the weight's range. Builtin
/// players only: others get PLAYER_ERR_CONFIG.
PlayerStatus player_set_weights(Player *p, const uint16_t *ids, const int32_t *values, int n,
                                char *msg, size_t msg_len);
/// A new game is about to start (ucinewgame / new); rules tells the engine the rule set.
PlayerStatus player_new_game(Player *p, const RulesConfig *rules, char *msg, size_t msg_len);

/// Asks for a move in `game` (start FEN and moves so far: the board's history) under
/// limits. deadline_ms is the wall-clock time the player may take before it loses on time
/// (the clock plus margin); the call returns by then with PLAYER_ERR_TIMEOUT at the latest.
PlayerStatus player_go(Player *p, const Board *game, const PlayerLimits *limits,
                       int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len);
/// The options the engine advertised in its handshake, in its order: up to cap of them into
/// out (which may be NULL with cap 0); returns how many there are (0 for the builtin player,
/// whose options engine_set_option checks). At most PLAYER_ADVERTISED_MAX are kept.
int player_options(const Player *p, PlayerOptionInfo *out, int cap);
/// The name the engine gave itself (`id name`, `feature myname`); empty when it gave none or
/// for the builtin player.
const char *player_engine_name(const Player *p);
/// The nodes the player reported over all the moves it made since player_new (0 for NULL):
/// a worker's nodes per move, the figure that mixed hardware ([time] scale) keeps even.
uint64_t player_nodes(const Player *p);

/// The weights a builtin player searches with, the one resolution of them (the player, the run
/// identity, SPSA's start and the NNUE check all call it): the defaults, then its weights file,
/// then each option that names a weight, in order (the last wins; other options do not touch
/// the weights). False on the first fault, with why saying "weights: REASON" or "option
/// NAME=VALUE: bad option value" (the caller names the engine); out is then unspecified.
bool player_builtin_weights(const PlayerConfig *cfg, Weights *out, char *why, size_t why_len);
