// SPDX-License-Identifier: MIT
// Internal to games/: the external player shared by player_ext.c (process, text, the
// common calls) and the protocols in player_uci.c (UCI, UCCI) and player_xboard.c (CECP).
// Each protocol is one ExtProtocol row (curl's protocol handlers); player_ext.c picks the row
// once, when the engine starts, and never asks which protocol it speaks.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "englog.h"
#include "move.h"
#include "player_impl.h"
#include "process.h"

enum {
    DEFAULT_STARTUP_MS = 10000,
    DEFAULT_PING_MS = 5000,
    XB_FEATURE_WAIT_MS = 2000, // CECP: how long to wait for features without done=0
    QUIT_GRACE_MS = 200,       // time an engine gets to exit after `quit`
    EXIT_WAIT_MS = 100,        // after EOF on its output: time the engine gets to be seen exit
    ERR_MAX = 512,
    SEND_MAX = 3 * PLAYER_TEXT_MAX,
    ADV_POOL_MAX = 16384, // bytes of advertised option names
    // `position fen <FEN> moves` and every move of the history
    CMD_MAX = BOARD_FEN_MAX + 64 + BOARD_HISTORY_MAX * MOVE_TEXT_MAX
};

/// How an xboard engine wants its FEN: bit 0 = letters H/E for horse/elephant instead of
/// N/B, bit 1 = four fields (board, side, halfmove, fullmove) instead of six.
enum { FEN_HE = 1, FEN_SHORT = 2, FEN_DIALECT_NB = 4 };

typedef struct ExternalPlayer ExternalPlayer;

/// What an engine protocol does for each of player_ext.c's calls, every hook set, designated
/// by field name. Each hook returns PLAYER_OK, or the status of the failure it recorded in
/// ep->err (ext_fail); none is called on a dead engine that would need to answer.
typedef struct {
    Protocol proto;
    /// The spawned engine greeted and its answer read (its name, its options) within
    /// timeout_ms of start, then made ready to take options.
    PlayerStatus (*handshake)(ExternalPlayer *ep, int64_t start, int timeout_ms);
    /// Before the job's options: what we set ourselves (the variant, no claims of its own).
    PlayerStatus (*configure)(ExternalPlayer *ep);
    /// One option of the job ("" value: an option without one, a button).
    PlayerStatus (*set_option)(ExternalPlayer *ep, const char *name, const char *value);
    /// The engine has taken everything sent so far (within ping_timeout_ms).
    PlayerStatus (*ping)(ExternalPlayer *ep);
    /// A new game, the engine pinged after it.
    PlayerStatus (*new_game)(ExternalPlayer *ep);
    /// The answer of a search abandoned at its deadline (ep->searching) collected by
    /// deadline, so that it is not taken for the next one.
    PlayerStatus (*settle)(ExternalPlayer *ep, int64_t deadline);
    /// A search of the game (ep->start_fen is its start) to a legal move, bounded by deadline.
    PlayerStatus (*go)(ExternalPlayer *ep, const Board *game, const PlayerLimits *limits,
                       int64_t deadline, PlayerMove *out);
    bool node_limit; // a search can be limited by nodes (xboard has no such limit)
} ExtProtocol;

extern const ExtProtocol ext_uci, ext_ucci; // player_uci.c
extern const ExtProtocol ext_xboard;        // player_xboard.c

struct ExternalPlayer {
    const ExtProtocol *pr; // chosen once, when the engine starts
    Protocol proto;
    int rank_base;
    int ping_timeout_ms;
    char label[PLAYER_NAME_MAX];       // the configured name, for messages
    char engine_name[PLAYER_NAME_MAX]; // from `id name` or `feature myname`
    bool dead;                         // the process is gone: every call answers CRASH
    bool searching;                    // a search was abandoned at the deadline
    char err[ERR_MAX];                 // the message of the last failure
    // The options it advertised (player_options); names in adv_pool
    PlayerOptionInfo adv[PLAYER_ADVERTISED_MAX];
    int adv_count;
    char adv_pool[ADV_POOL_MAX];
    size_t adv_used;
    // UCI / UCCI
    bool has_variant_option, has_newgame_option;
    // xboard features and state
    bool xb_setboard, xb_ping, xb_usermove, xb_done, xb_done0, xb_claim_option;
    bool xb_variants_seen, xb_variant_ok;
    bool xb_error_seen;        // an error line arrived (checked around setboard)
    int64_t xb_features_until; // the handshake's end: late features are taken until then
    char xb_error[160];        // the last one
    int ping_id;
    int fen_dialect;
    bool fen_dialect_sure;
    bool level_sent;
    // What the xboard engine has been told: start FEN and the moves sent since.
    bool view_valid;
    char view_fen[BOARD_FEN_MAX];
    int view_len;
    Move view_moves[BOARD_HISTORY_MAX];
    // Scratch space
    char start_fen[BOARD_FEN_MAX];
    Board *scratch;
    Process proc;
    EngineLog *log;  // NULL: not logged (the cost of logging off is this test)
    int log_session; // this process's number in the log
    char line[PROCESS_LINE_MAX];
    char cmd[CMD_MAX];
};

// player_ext.c: the process and text helpers every protocol uses.
void ext_copy_text(char *dst, size_t cap, const char *src, size_t len);
/// Records a failure message (prefixed with the player's name) and returns st.
__attribute__((format(printf, 3, 4))) PlayerStatus ext_fail(ExternalPlayer *ep, PlayerStatus st,
                                                            const char *fmt, ...);
/// The process is gone: marks it dead, says how it ended and returns PLAYER_ERR_CRASH.
PlayerStatus ext_crashed(ExternalPlayer *ep, ProcessStatus ps, const char *doing);
PlayerStatus ext_send_text(ExternalPlayer *ep, const char *text);
/// Sends one command line (the newline is added).
__attribute__((format(printf, 2, 3))) PlayerStatus ext_send_line(ExternalPlayer *ep,
                                                                 const char *fmt, ...);
/// Next line from the engine into ep->line, waiting at most until deadline (absolute ms).
ProcessStatus ext_next_line(ExternalPlayer *ep, int64_t deadline);
const char *ext_skip_ws(const char *s);
/// Whether s starts with the word w (followed by the end or a blank); returns what follows.
const char *ext_word_is(const char *s, const char *w);
/// Copies the next blank-separated token of *s into tok and advances *s past it.
bool ext_next_token(const char **s, char *tok, size_t cap);
bool ext_parse_ll(const char *tok, long long lo, long long hi, long long *out);
/// Whether the FEN has the standard start position's board and side to move.
bool ext_fen_is_start(const char *fen);
/// Keeps an advertised option (name: n bytes at name); false when there is no room left.
bool ext_advertise(ExternalPlayer *ep, const char *name, size_t n, PlayerOptionType type,
                   bool has_range, long long min, long long max);
/// A note in the engine log at a `go`: the side to move, both clocks (or the fixed limit) and
/// the time left to the deadline; nothing when the log is off.
void ext_log_go(ExternalPlayer *ep, const Board *game, const PlayerLimits *l, int64_t deadline);
/// Checks the engine's move text against the game position.
PlayerStatus ext_take_move(ExternalPlayer *ep, const Board *game, const char *text,
                           PlayerMove *out);
