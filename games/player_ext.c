// SPDX-License-Identifier: MIT
// External engines over pipes: UCI (the Pikafish / Fairy-Stockfish dialect), UCCI and
// xboard/CECP. Every wait is bounded (the handshake by startup_timeout_ms, pings by
// ping_timeout_ms, a move by the caller's deadline), so a silent, crashing or flooding engine
// can never hang the game manager. The quirks of the Debian engines (../shared/ENGINES.md)
// handled here:
// - Fairy-Stockfish's UCI ranks 1-10 (cfg->rank_base), UCI_Variant set only when advertised;
//   in UCCI mode its options come before `ucciok`, so they are seen during the handshake.
// - Sjaak II and HoiXiangqi read FEN letters H/E for horse/elephant, HoiXiangqi only the
//   four-field FEN `board side halfmove fullmove`; the dialect is guessed from the engine's
//   name and, when the engine answers a bad setboard with an error line, the others are tried.
// - `new` resets Sjaak's variant, so it is always followed by `variant xiangqi`.
// - MaxQi has no setboard (feature setboard=0): a game from another position is refused.
// - MaxQi's result claims (`1/2-1/2 {...}`) are ignored: only a move (or `resign`, a loss
//   at once) ends the wait.
// - Sjaak's repetition claims are switched off (`option Claim repetitions=0`) when offered.
#include "player_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "movegen.h"
#include "process.h"
#include "timeman.h"

enum {
    DEFAULT_STARTUP_MS = 10000,
    DEFAULT_PING_MS = 5000,
    XB_FEATURE_WAIT_MS = 2000, // CECP: how long to wait for features without done=0
    QUIT_GRACE_MS = 200,       // time an engine gets to exit after `quit`
    EXIT_WAIT_MS = 100,        // after EOF on its output: time the engine gets to be seen exit
    ERR_MAX = 512,
    SEND_MAX = 3 * PLAYER_TEXT_MAX,
    // `position fen <FEN> moves` and every move of the history
    CMD_MAX = BOARD_FEN_MAX + 64 + BOARD_HISTORY_MAX * MOVE_TEXT_MAX
};

/// How an xboard engine wants its FEN: bit 0 = letters H/E for horse/elephant instead of
/// N/B, bit 1 = four fields (board, side, halfmove, fullmove) instead of six.
enum { FEN_HE = 1, FEN_SHORT = 2, FEN_DIALECT_NB = 4 };

typedef struct {
    Protocol proto;
    int rank_base;
    int ping_timeout_ms;
    char label[PLAYER_NAME_MAX];       // the configured name, for messages
    char engine_name[PLAYER_NAME_MAX]; // from `id name` or `feature myname`
    bool dead;                         // the process is gone: every call answers CRASH
    bool searching;                    // a search was abandoned at the deadline
    char err[ERR_MAX];                 // the message of the last failure
    // UCI / UCCI
    bool has_variant_option, has_newgame_option;
    // xboard features and state
    bool xb_setboard, xb_ping, xb_usermove, xb_done, xb_done0, xb_claim_option;
    bool xb_variants_seen, xb_variant_ok;
    bool xb_error_seen; // an error line arrived (checked around setboard)
    char xb_error[160]; // the last one
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
    char line[PROCESS_LINE_MAX];
    char cmd[CMD_MAX];
} ExternalPlayer;

static void copy_text(char *dst, size_t cap, const char *src, size_t len)
{
    if (!dst || cap == 0)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/// The caller's message buffer (which may be NULL).
static void put_msg(char *msg, size_t msg_len, const char *text)
{
    copy_text(msg, msg_len, text, strlen(text));
}

/// Records a failure message (prefixed with the player's name) and returns st.
__attribute__((format(printf, 3, 4))) static PlayerStatus fail(ExternalPlayer *ep, PlayerStatus st,
                                                               const char *fmt, ...)
{
    char text[ERR_MAX - PLAYER_NAME_MAX - 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(ep->err, sizeof ep->err, "%s: %s", ep->label, text);
    return st;
}

/// The process is gone (or its pipes failed): nothing more can be said to it. The message
/// says how it ended where it did (an exit status, a signal, a limit); its process group is
/// ended now, so nothing it started outlives it.
static PlayerStatus crashed(ExternalPlayer *ep, ProcessStatus ps, const char *doing)
{
    ep->dead = true;
    char how[160];
    int wait_ms = ps == PROCESS_ERR_EOF || ps == PROCESS_ERR_WRITE ? EXIT_WAIT_MS : 0;
    bool exited = process_exit_text(&ep->proc, wait_ms, how, sizeof how);
    process_close(&ep->proc);
    if (!exited)
        return fail(ep, PLAYER_ERR_CRASH, "%s: %s", doing, process_strerror(ps));
    return fail(ep, PLAYER_ERR_CRASH, "%s: the engine %s%s", doing, how,
                ps == PROCESS_ERR_EXITED ? "; a process it started held its output open" : "");
}

static PlayerStatus send_text(ExternalPlayer *ep, const char *text)
{
    if (ep->dead)
        return fail(ep, PLAYER_ERR_CRASH, "the engine has exited");
    ProcessStatus ps = process_write(&ep->proc, text);
    return ps == PROCESS_OK ? PLAYER_OK : crashed(ep, ps, "writing to the engine");
}

/// Sends one command line (the newline is added).
__attribute__((format(printf, 2, 3))) static PlayerStatus send_line(ExternalPlayer *ep,
                                                                    const char *fmt, ...)
{
    char text[SEND_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text - 1)
        return fail(ep, PLAYER_ERR_CONFIG, "command too long: %.40s...", text);
    text[n] = '\n';
    text[n + 1] = '\0';
    return send_text(ep, text);
}

/// Next line from the engine into ep->line, waiting at most until deadline (absolute ms).
/// Over-long lines are skipped; the deadline bounds the wait however much the engine writes.
static ProcessStatus next_line(ExternalPlayer *ep, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - timeman_now_ms();
        if (left <= 0)
            return PROCESS_ERR_TIMEOUT;
        if (left > INT_MAX)
            left = INT_MAX;
        ProcessStatus ps = process_read_line(&ep->proc, ep->line, sizeof ep->line, (int)left);
        if (ps != PROCESS_ERR_LINE_LONG)
            return ps;
    }
}

// ---------------------------------------------------------------------------------------
// Text helpers

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/// Whether s starts with the word w (followed by the end or a blank); returns what follows.
static const char *word_is(const char *s, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(s, w, n) != 0 || (s[n] && s[n] != ' ' && s[n] != '\t'))
        return NULL;
    return skip_ws(s + n);
}

/// Copies the next blank-separated token of *s into tok and advances *s past it.
static bool next_token(const char **s, char *tok, size_t cap)
{
    const char *p = skip_ws(*s);
    size_t n = strcspn(p, " \t");
    if (n == 0)
        return false;
    copy_text(tok, cap, p, n);
    *s = p + n;
    return true;
}

static bool parse_ll(const char *tok, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(tok, &end, 10);
    if (end == tok || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/// Whether the FEN has the standard start position's board and side to move.
static bool fen_is_start(const char *fen)
{
    size_t n = strcspn(BOARD_START_FEN, " ") + 2; // board, blank and side
    return strncmp(fen, BOARD_START_FEN, n) == 0 && (fen[n] == ' ' || fen[n] == '\0');
}

/// Start FEN of the game (undoing its whole history) into ep->start_fen.
static void game_start_fen(ExternalPlayer *ep, const Board *game)
{
    memcpy(ep->scratch, game, sizeof *game);
    for (int i = 0; i < game->hist_len; i++)
        board_unmake_move(ep->scratch);
    board_fen(ep->scratch, ep->start_fen, sizeof ep->start_fen);
}

/// Checks the engine's move text against the game position.
static PlayerStatus take_move(ExternalPlayer *ep, const Board *game, const char *text,
                              PlayerMove *out)
{
    if (!*text || strcmp(text, "(none)") == 0 || strcmp(text, "0000") == 0 ||
        strcmp(text, "none") == 0)
        return fail(ep, PLAYER_ERR_ILLEGAL, "no move ('%.32s') in a position with legal moves",
                    text);
    Move m;
    MoveTextStatus mt = move_parse(text, ep->rank_base, &m);
    if (mt != MOVE_TEXT_OK)
        return fail(ep, PLAYER_ERR_PROTOCOL, "unparsable move '%.32s'", text);
    mt = move_parse_legal(game, text, ep->rank_base, &m);
    if (mt != MOVE_TEXT_OK)
        return fail(ep, PLAYER_ERR_ILLEGAL, "illegal move '%.32s'", text);
    out->move = m;
    return PLAYER_OK;
}

// ---------------------------------------------------------------------------------------
// UCI and UCCI

/// Notes the options that matter to us from `option name N type ...` (UCI) or
/// `option N type ...` (UCCI).
static void uci_option_line(ExternalPlayer *ep, const char *rest)
{
    const char *name = ep->proto == PROTO_UCI ? word_is(rest, "name") : rest;
    if (!name)
        return;
    const char *type = strstr(name, " type");
    size_t n = type ? (size_t)(type - name) : strlen(name);
    if (n == strlen("UCI_Variant") && strncmp(name, "UCI_Variant", n) == 0)
        ep->has_variant_option = true;
    if (n == strlen("newgame") && strncmp(name, "newgame", n) == 0)
        ep->has_newgame_option = true;
}

static PlayerStatus uci_handshake(ExternalPlayer *ep, int64_t deadline, int timeout_ms)
{
    bool uci = ep->proto == PROTO_UCI;
    const char *ok = uci ? "uciok" : "ucciok";
    PlayerStatus st = send_line(ep, "%s", uci ? "uci" : "ucci");
    if (st)
        return PLAYER_ERR_START;
    for (;;) {
        ProcessStatus ps = next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return fail(ep, PLAYER_ERR_START, "no '%s' within %d ms", ok, timeout_ms);
        if (ps != PROCESS_OK) {
            crashed(ep, ps, "during the handshake");
            return PLAYER_ERR_START;
        }
        const char *s = skip_ws(ep->line), *rest;
        if (word_is(s, ok))
            return PLAYER_OK;
        if ((rest = word_is(s, "id")) && (rest = word_is(rest, "name")))
            copy_text(ep->engine_name, sizeof ep->engine_name, rest, strlen(rest));
        else if ((rest = word_is(s, "option")))
            uci_option_line(ep, rest);
    }
}

static PlayerStatus uci_set_option(ExternalPlayer *ep, const char *name, const char *value)
{
    if (ep->proto == PROTO_UCCI)
        return *value ? send_line(ep, "setoption %s %s", name, value)
                      : send_line(ep, "setoption %s", name);
    return *value ? send_line(ep, "setoption name %s value %s", name, value)
                  : send_line(ep, "setoption name %s", name);
}

/// isready / readyok.
static PlayerStatus uci_ping(ExternalPlayer *ep)
{
    PlayerStatus st = send_line(ep, "isready");
    if (st)
        return st;
    int64_t deadline = timeman_now_ms() + ep->ping_timeout_ms;
    for (;;) {
        ProcessStatus ps = next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return fail(ep, PLAYER_ERR_STALL, "no 'readyok' within %d ms", ep->ping_timeout_ms);
        if (ps != PROCESS_OK)
            return crashed(ep, ps, "waiting for readyok");
        if (word_is(skip_ws(ep->line), "readyok"))
            return PLAYER_OK;
    }
}

/// Keeps the score, depth and nodes of an `info` line (only the first PV's).
static void uci_info_line(const char *s, PlayerMove *out)
{
    char tok[32];
    long long v;
    while (next_token(&s, tok, sizeof tok)) {
        if (strcmp(tok, "pv") == 0 || strcmp(tok, "string") == 0)
            return;
        if (strcmp(tok, "multipv") == 0 && next_token(&s, tok, sizeof tok) && strcmp(tok, "1") != 0)
            return;
        if (strcmp(tok, "depth") == 0 && next_token(&s, tok, sizeof tok) &&
            parse_ll(tok, 0, INT_MAX, &v))
            out->depth = (int)v;
        else if (strcmp(tok, "nodes") == 0 && next_token(&s, tok, sizeof tok) &&
                 parse_ll(tok, 0, LLONG_MAX, &v))
            out->nodes = (uint64_t)v;
        else if (strcmp(tok, "score") == 0 && next_token(&s, tok, sizeof tok)) {
            // UCI: score cp X / score mate N; the UCCI standard writes score X.
            bool mate = strcmp(tok, "mate") == 0;
            if ((mate || strcmp(tok, "cp") == 0) && !next_token(&s, tok, sizeof tok))
                return;
            if (parse_ll(tok, INT_MIN, INT_MAX, &v)) {
                out->score = (int)v;
                out->mate = mate;
                out->has_score = true;
            }
        }
    }
}

/// `position ...` with the game's start and moves.
static PlayerStatus uci_send_position(ExternalPlayer *ep, const Board *game)
{
    size_t n;
    if (ep->proto == PROTO_UCI && strcmp(ep->start_fen, BOARD_START_FEN) == 0)
        n = (size_t)snprintf(ep->cmd, sizeof ep->cmd, "position startpos");
    else
        n = (size_t)snprintf(ep->cmd, sizeof ep->cmd, "position fen %s", ep->start_fen);
    if (game->hist_len > 0)
        n += (size_t)snprintf(ep->cmd + n, sizeof ep->cmd - n, " moves");
    for (int i = 0; i < game->hist_len; i++) {
        char mt[MOVE_TEXT_MAX];
        move_text(game->hist[i].move, ep->rank_base, mt);
        n += (size_t)snprintf(ep->cmd + n, sizeof ep->cmd - n, " %s", mt);
    }
    snprintf(ep->cmd + n, sizeof ep->cmd - n, "\n");
    return send_text(ep, ep->cmd);
}

static PlayerStatus uci_send_go(ExternalPlayer *ep, Color us, const PlayerLimits *l)
{
    char go[256];
    size_t n = (size_t)snprintf(go, sizeof go, "go");
    Color them = (Color)(us ^ 1);
    if (l->time_ms[us] >= 0) {
        if (ep->proto == PROTO_UCI) {
            for (Color c = RED; c < COLOR_NB; c++) {
                if (l->time_ms[c] >= 0)
                    n += (size_t)snprintf(go + n, sizeof go - n, " %ctime %lld %cinc %lld",
                                          c == RED ? 'w' : 'b', (long long)l->time_ms[c],
                                          c == RED ? 'w' : 'b', (long long)l->inc_ms[c]);
            }
            if (l->movestogo > 0)
                n += (size_t)snprintf(go + n, sizeof go - n, " movestogo %d", l->movestogo);
        } else {
            // UCCI: own clock, then movestogo or increment (the standard allows one of them).
            n += (size_t)snprintf(go + n, sizeof go - n, " time %lld", (long long)l->time_ms[us]);
            if (l->movestogo > 0)
                n += (size_t)snprintf(go + n, sizeof go - n, " movestogo %d", l->movestogo);
            else
                n += (size_t)snprintf(go + n, sizeof go - n, " increment %lld",
                                      (long long)l->inc_ms[us]);
            if (l->time_ms[them] >= 0)
                n += (size_t)snprintf(go + n, sizeof go - n, " opptime %lld",
                                      (long long)l->time_ms[them]);
            if (l->time_ms[them] >= 0 && l->movestogo <= 0)
                n += (size_t)snprintf(go + n, sizeof go - n, " oppincrement %lld",
                                      (long long)l->inc_ms[them]);
        }
    }
    if (l->movetime_ms > 0)
        n += (size_t)snprintf(go + n, sizeof go - n, " movetime %lld", (long long)l->movetime_ms);
    if (l->depth > 0)
        n += (size_t)snprintf(go + n, sizeof go - n, " depth %d", l->depth);
    if (l->nodes > 0)
        snprintf(go + n, sizeof go - n, " nodes %llu", (unsigned long long)l->nodes);
    return send_line(ep, "%s", go);
}

static PlayerStatus uci_go(ExternalPlayer *ep, const Board *game, const PlayerLimits *limits,
                           int64_t deadline, PlayerMove *out)
{
    PlayerStatus st = uci_send_position(ep, game);
    if (!st)
        st = uci_send_go(ep, game->side, limits);
    if (st)
        return st;
    ep->searching = true;
    for (;;) {
        ProcessStatus ps = next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT) {
            send_line(ep, "stop"); // the answer is collected by settle() next time
            return fail(ep, PLAYER_ERR_TIMEOUT, "no bestmove by the deadline");
        }
        if (ps != PROCESS_OK)
            return crashed(ep, ps, "waiting for bestmove");
        const char *s = skip_ws(ep->line), *rest;
        if ((rest = word_is(s, "info")))
            uci_info_line(rest, out);
        else if ((rest = word_is(s, "bestmove"))) {
            ep->searching = false;
            char tok[MOVE_TEXT_MAX * 4];
            if (!next_token(&rest, tok, sizeof tok))
                tok[0] = '\0';
            return take_move(ep, game, tok, out);
        }
    }
}

// ---------------------------------------------------------------------------------------
// xboard / CECP

static bool xb_is_error(const char *s)
{
    return strncmp(s, "Error", 5) == 0 || strncmp(s, "Illegal", 7) == 0 ||
           word_is(s, "tellusererror");
}

/// Handles one `name=value` of a feature line and answers accepted/rejected.
static PlayerStatus xb_feature(ExternalPlayer *ep, const char *name, size_t nlen, const char *v,
                               size_t vlen)
{
    static const char *const known[] = {
        "done",   "myname", "setboard", "ping",     "usermove", "variants",  "option",
        "time",   "sigint", "sigterm",  "colors",   "reuse",    "analyze",   "name",
        "memory", "smp",    "nps",      "debug",    "pause",    "highlight", "playother",
        "ics",    "draw",   "exclude",  "setscore", "myversion"};
    char key[32];
    copy_text(key, sizeof key, name, nlen);
    bool on = vlen == 1 && v[0] == '1';
    if (strcmp(key, "done") == 0) {
        ep->xb_done = on;
        ep->xb_done0 = vlen == 1 && v[0] == '0';
    } else if (strcmp(key, "myname") == 0)
        copy_text(ep->engine_name, sizeof ep->engine_name, v, vlen);
    else if (strcmp(key, "setboard") == 0)
        ep->xb_setboard = on;
    else if (strcmp(key, "ping") == 0)
        ep->xb_ping = on;
    else if (strcmp(key, "usermove") == 0)
        ep->xb_usermove = on;
    else if (strcmp(key, "variants") == 0) {
        ep->xb_variants_seen = true;
        for (size_t i = 0; i < vlen;) {
            size_t j = i;
            while (j < vlen && v[j] != ',')
                j++;
            if (j - i == 7 && strncmp(v + i, "xiangqi", 7) == 0)
                ep->xb_variant_ok = true;
            i = j + 1;
        }
    } else if (strcmp(key, "option") == 0) {
        const char *claim = "Claim repetitions -";
        if (vlen > strlen(claim) && strncmp(v, claim, strlen(claim)) == 0)
            ep->xb_claim_option = true;
    }
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        if (strcmp(key, known[i]) == 0)
            return send_line(ep, "accepted %s", key);
    }
    return send_line(ep, "rejected %s", key); // san, sjef, ...: not for us
}

/// Parses `feature a=1 b="quoted text" ...`.
static PlayerStatus xb_feature_line(ExternalPlayer *ep, const char *s)
{
    for (;;) {
        s = skip_ws(s);
        if (!*s)
            return PLAYER_OK;
        const char *name = s;
        size_t nlen = strcspn(s, "= \t");
        s += nlen;
        if (*s != '=')
            continue; // a bare word: nothing to answer
        s++;
        const char *v = s;
        size_t vlen;
        if (*s == '"') {
            v = ++s;
            const char *q = strchr(s, '"');
            vlen = q ? (size_t)(q - s) : strlen(s);
            s += vlen + (q != NULL);
        } else {
            vlen = strcspn(s, " \t");
            s += vlen;
        }
        PlayerStatus st = xb_feature(ep, name, nlen, v, vlen);
        if (st)
            return st;
    }
}

/// The part of xboard output every wait treats alike: features and error lines.
static PlayerStatus xb_common_line(ExternalPlayer *ep, const char *s)
{
    const char *rest;
    if ((rest = word_is(s, "feature")))
        return xb_feature_line(ep, rest);
    if (xb_is_error(s)) {
        ep->xb_error_seen = true;
        copy_text(ep->xb_error, sizeof ep->xb_error, s, strlen(s));
    }
    return PLAYER_OK;
}

static PlayerStatus xb_handshake(ExternalPlayer *ep, int64_t start, int timeout_ms)
{
    if (send_line(ep, "xboard") || send_line(ep, "protover 2"))
        return PLAYER_ERR_START;
    int64_t hard = start + timeout_ms;
    int64_t soft = start + (timeout_ms < XB_FEATURE_WAIT_MS ? timeout_ms : XB_FEATURE_WAIT_MS);
    while (!ep->xb_done) {
        ProcessStatus ps = next_line(ep, ep->xb_done0 ? hard : soft);
        if (ps == PROCESS_ERR_TIMEOUT && ep->xb_done0)
            return fail(ep, PLAYER_ERR_START, "no 'feature done=1' within %d ms", timeout_ms);
        if (ps == PROCESS_ERR_TIMEOUT)
            break; // an engine without features (protocol version 1)
        if (ps != PROCESS_OK) {
            crashed(ep, ps, "during the handshake");
            return PLAYER_ERR_START;
        }
        if (xb_common_line(ep, skip_ws(ep->line)))
            return PLAYER_ERR_START;
    }
    if (ep->xb_variants_seen && !ep->xb_variant_ok)
        return fail(ep, PLAYER_ERR_START, "the engine does not offer variant xiangqi");
    return PLAYER_OK;
}

/// ping N / pong N (skipped for engines without feature ping=1).
static PlayerStatus xb_ping(ExternalPlayer *ep, int64_t deadline)
{
    if (!ep->xb_ping)
        return PLAYER_OK;
    int id = ++ep->ping_id;
    PlayerStatus st = send_line(ep, "ping %d", id);
    if (st)
        return st;
    for (;;) {
        ProcessStatus ps = next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return fail(ep, PLAYER_ERR_STALL, "no 'pong %d' in time", id);
        if (ps != PROCESS_OK)
            return crashed(ep, ps, "waiting for pong");
        const char *s = skip_ws(ep->line), *rest;
        long long v;
        char tok[24];
        if ((rest = word_is(s, "pong")) && next_token(&rest, tok, sizeof tok) &&
            parse_ll(tok, INT_MIN, INT_MAX, &v) && v == id)
            return PLAYER_OK;
        st = xb_common_line(ep, s);
        if (st)
            return st;
    }
}

/// A fresh game in the start position, the engine in force mode (Sjaak: `new` resets the
/// variant, so `variant` comes after it).
static PlayerStatus xb_reset(ExternalPlayer *ep)
{
    PlayerStatus st = send_line(ep, "new");
    if (!st)
        st = send_line(ep, "variant xiangqi");
    if (!st)
        st = send_line(ep, "force");
    if (!st)
        st = send_line(ep, "post");
    ep->view_valid = true;
    snprintf(ep->view_fen, sizeof ep->view_fen, "%s", BOARD_START_FEN);
    ep->view_len = 0;
    ep->level_sent = false;
    return st;
}

/// The FEN in one of the dialects (see FEN_HE, FEN_SHORT).
static void xb_fen_dialect(const char *fen, int dialect, char *out, size_t cap)
{
    char board[BOARD_FEN_MAX], side[8] = "w";
    long long half = 0, full = 1;
    board[0] = '\0';
    sscanf(fen, "%127s %7s %*s %*s %lld %lld", board, side, &half, &full);
    for (char *c = board; (dialect & FEN_HE) && *c; c++) {
        static const char from[] = "NBnb", to[] = "HEhe";
        const char *k = strchr(from, *c);
        if (k)
            *c = to[k - from];
    }
    if (dialect & FEN_SHORT)
        snprintf(out, cap, "%s %s %lld %lld", board, side, half, full);
    else
        snprintf(out, cap, "%s %s - - %lld %lld", board, side, half, full);
}

/// setboard, in the dialect known to work, else the guess first and then the others (an
/// engine that answers a FEN with an error line gets the next one).
static PlayerStatus xb_setboard(ExternalPlayer *ep, int64_t deadline)
{
    if (!ep->xb_setboard)
        return fail(ep, PLAYER_ERR_CONFIG,
                    "the engine cannot load a FEN (no feature setboard=1), so it can only play "
                    "games from the standard start position; this game starts from %s",
                    ep->start_fen);
    char fen[BOARD_FEN_MAX + 16];
    int tries = ep->fen_dialect_sure || !ep->xb_ping ? 1 : FEN_DIALECT_NB;
    for (int i = 0; i < tries; i++) {
        int d = i == 0 ? ep->fen_dialect : (ep->fen_dialect + i) % FEN_DIALECT_NB;
        xb_fen_dialect(ep->start_fen, d, fen, sizeof fen);
        ep->xb_error_seen = false;
        PlayerStatus st = send_line(ep, "setboard %s", fen);
        if (!st)
            st = xb_ping(ep, deadline);
        if (st)
            return st;
        if (!ep->xb_error_seen) {
            ep->fen_dialect = d;
            ep->fen_dialect_sure = ep->xb_ping;
            return PLAYER_OK;
        }
    }
    return fail(ep, PLAYER_ERR_CONFIG, "the engine rejected the FEN %s in every dialect tried (%s)",
                ep->start_fen, ep->xb_error);
}

/// Brings the engine's board to the game: the moves it has not seen, or a fresh start when
/// what it was told is not a prefix of the game.
static PlayerStatus xb_sync(ExternalPlayer *ep, const Board *game, int64_t deadline)
{
    bool prefix = ep->view_valid && strcmp(ep->view_fen, ep->start_fen) == 0 &&
                  ep->view_len <= game->hist_len;
    for (int i = 0; prefix && i < ep->view_len; i++)
        prefix = ep->view_moves[i] == game->hist[i].move;
    PlayerStatus st;
    if (!prefix) {
        bool fresh = ep->view_valid && ep->view_len == 0 && fen_is_start(ep->view_fen);
        if (!fresh && (st = xb_reset(ep)))
            return st;
        if (!fen_is_start(ep->start_fen) && (st = xb_setboard(ep, deadline)))
            return st;
        snprintf(ep->view_fen, sizeof ep->view_fen, "%s", ep->start_fen);
        ep->view_valid = true;
        ep->view_len = 0;
    }
    for (int i = ep->view_len; i < game->hist_len; i++) {
        char mt[MOVE_TEXT_MAX];
        move_text(game->hist[i].move, ep->rank_base, mt);
        if ((st = send_line(ep, "%s%s", ep->xb_usermove ? "usermove " : "", mt)))
            return st;
        ep->view_moves[i] = game->hist[i].move;
    }
    ep->view_len = game->hist_len;
    return PLAYER_OK;
}

/// level / time / otim / st / sd before `go`. CECP counts the base in minutes (or min:sec),
/// the increment in seconds and the clocks in centiseconds.
static PlayerStatus xb_send_limits(ExternalPlayer *ep, Color us, const PlayerLimits *l)
{
    PlayerStatus st = PLAYER_OK;
    Color them = (Color)(us ^ 1);
    if (l->time_ms[us] >= 0) {
        if (!ep->level_sent) {
            long long base_s = l->time_ms[us] / 1000, inc = l->inc_ms[us];
            if (base_s < 1)
                base_s = 1;
            char base[32], incs[32];
            if (base_s % 60 == 0)
                snprintf(base, sizeof base, "%lld", base_s / 60);
            else
                snprintf(base, sizeof base, "%lld:%02lld", base_s / 60, base_s % 60);
            if (inc % 1000 == 0)
                snprintf(incs, sizeof incs, "%lld", inc / 1000);
            else
                snprintf(incs, sizeof incs, "%lld.%03lld", inc / 1000, inc % 1000);
            st = send_line(ep, "level %d %s %s", l->movestogo > 0 ? l->movestogo : 0, base, incs);
            ep->level_sent = true;
        }
        if (!st)
            st = send_line(ep, "time %lld", (long long)(l->time_ms[us] / 10));
        if (!st && l->time_ms[them] >= 0)
            st = send_line(ep, "otim %lld", (long long)(l->time_ms[them] / 10));
    }
    if (!st && l->movetime_ms > 0)
        st = send_line(ep, "st %lld", (long long)((l->movetime_ms + 999) / 1000));
    if (!st && l->depth > 0)
        st = send_line(ep, "sd %d", l->depth);
    return st;
}

/// Thinking output `ply score time nodes pv...`; the score is in centipawns.
static bool xb_thinking_line(const char *s, PlayerMove *out)
{
    int ply, score;
    long long time_cs, nodes;
    if (!(*s == '-' || (*s >= '0' && *s <= '9')))
        return false;
    if (sscanf(s, "%d %d %lld %lld", &ply, &score, &time_cs, &nodes) != 4)
        return false;
    if (ply >= 1) { // MaxQi also prints plies -1 and 0 (root probes)
        out->depth = ply;
        out->score = score;
        out->has_score = true;
        out->mate = false;
        out->nodes = nodes > 0 ? (uint64_t)nodes : 0;
    }
    return true;
}

static PlayerStatus xb_wait_move(ExternalPlayer *ep, const Board *game, int64_t question_at,
                                 int64_t deadline, PlayerMove *out)
{
    char claim[80] = "";
    for (;;) {
        bool ask = question_at > 0 && question_at < deadline;
        ProcessStatus ps = next_line(ep, ask ? question_at : deadline);
        if (ps == PROCESS_ERR_TIMEOUT && ask) {
            // A movetime that is not a whole number of seconds: `st` was rounded up.
            question_at = 0;
            if (send_line(ep, "?"))
                return PLAYER_ERR_CRASH;
            continue;
        }
        if (ps == PROCESS_ERR_TIMEOUT) {
            send_line(ep, "?"); // the answer is collected by settle() next time
            return fail(ep, PLAYER_ERR_TIMEOUT, "no move by the deadline%s%s",
                        *claim ? " after claiming " : "", claim);
        }
        if (ps != PROCESS_OK)
            return crashed(ep, ps, "waiting for its move");
        const char *s = skip_ws(ep->line), *rest;
        if ((rest = word_is(s, "move"))) {
            ep->searching = false;
            // It leaves force mode after moving; force again so the next go resends cleanly.
            PlayerStatus st = send_line(ep, "force");
            char tok[MOVE_TEXT_MAX * 4];
            if (!next_token(&rest, tok, sizeof tok))
                tok[0] = '\0';
            if (!st)
                st = take_move(ep, game, tok, out);
            if (st) {
                ep->view_valid = false;
                return st;
            }
            if (ep->view_len < BOARD_HISTORY_MAX)
                ep->view_moves[ep->view_len++] = out->move;
            else
                ep->view_valid = false;
            return PLAYER_OK;
        }
        if (word_is(s, "resign")) {
            ep->searching = false;
            ep->view_valid = false;
            return fail(ep, PLAYER_RESIGNED, "resigns%s%s", *claim ? " after claiming " : "",
                        claim);
        }
        if (strncmp(s, "1-0", 3) == 0 || strncmp(s, "0-1", 3) == 0 ||
            strncmp(s, "1/2-1/2", 7) == 0) {
            copy_text(claim, sizeof claim, s, strlen(s)); // ignored: our referee decides
            continue;
        }
        if (xb_thinking_line(s, out))
            continue;
        if (strncmp(s, "Illegal move", 12) == 0 || (xb_is_error(s) && strstr(s, "llegal move"))) {
            send_line(ep, "?"); // it may be searching a wrong position: settle() waits it out
            ep->view_valid = false;
            return fail(ep, PLAYER_ERR_PROTOCOL, "the engine rejected a move we sent: %.200s", s);
        }
        PlayerStatus st = xb_common_line(ep, s);
        if (st)
            return st;
    }
}

static PlayerStatus xb_go(ExternalPlayer *ep, const Board *game, const PlayerLimits *limits,
                          int64_t deadline, PlayerMove *out)
{
    PlayerStatus st = xb_sync(ep, game, deadline);
    if (!st)
        st = xb_send_limits(ep, game->side, limits);
    if (!st)
        st = send_line(ep, "go");
    if (st)
        return st;
    ep->searching = true;
    int64_t question_at = 0;
    if (limits->movetime_ms > 0 && limits->movetime_ms % 1000 != 0)
        question_at = timeman_now_ms() + limits->movetime_ms;
    return xb_wait_move(ep, game, question_at, deadline, out);
}

// ---------------------------------------------------------------------------------------
// Common

/// After a search abandoned at the deadline: collect its answer so that it is not taken
/// for the next one.
static PlayerStatus settle(ExternalPlayer *ep)
{
    if (ep->dead)
        return fail(ep, PLAYER_ERR_CRASH, "the engine has exited");
    if (!ep->searching)
        return PLAYER_OK;
    int64_t deadline = timeman_now_ms() + ep->ping_timeout_ms;
    if (ep->proto == PROTO_XBOARD) {
        ep->view_valid = false;
        PlayerStatus st = send_line(ep, "force");
        if (!st)
            st = xb_ping(ep, deadline);
        if (!st)
            ep->searching = false;
        return st;
    }
    for (;;) {
        ProcessStatus ps = next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return fail(ep, PLAYER_ERR_STALL, "no bestmove %d ms after 'stop'",
                        ep->ping_timeout_ms);
        if (ps != PROCESS_OK)
            return crashed(ep, ps, "waiting for bestmove after 'stop'");
        if (word_is(skip_ws(ep->line), "bestmove")) {
            ep->searching = false;
            return PLAYER_OK;
        }
    }
}

static PlayerStatus apply_options(ExternalPlayer *ep, const PlayerConfig *cfg)
{
    PlayerStatus st = PLAYER_OK;
    if (ep->proto != PROTO_XBOARD && ep->has_variant_option)
        st = uci_set_option(ep, "UCI_Variant", "xiangqi");
    if (ep->proto == PROTO_XBOARD && ep->xb_claim_option)
        st = send_line(ep, "option Claim repetitions=0"); // we are the referee
    for (int i = 0; !st && i < cfg->option_count; i++) {
        const PlayerOption *o = &cfg->options[i];
        if (ep->proto != PROTO_XBOARD)
            st = uci_set_option(ep, o->name, o->value);
        else if (*o->value)
            st = send_line(ep, "option %s=%s", o->name, o->value);
        else
            st = send_line(ep, "option %s", o->name);
    }
    return st;
}

static PlayerStatus start_engine(ExternalPlayer *ep, const PlayerConfig *cfg)
{
    char *argv[PLAYER_ARGS_MAX + 2];
    int argc = 0;
    argv[argc++] = (char *)cfg->cmd;
    for (int i = 0; i < cfg->argc && i < PLAYER_ARGS_MAX; i++)
        argv[argc++] = (char *)cfg->args[i];
    argv[argc] = NULL;
    const char *env[PLAYER_ENV_MAX + 1];
    int envc = 0;
    for (int i = 0; i < cfg->env_count && i < PLAYER_ENV_MAX; i++)
        env[envc++] = cfg->env[i];
    env[envc] = NULL;
    ProcessOptions opt = {cfg->workdir, env, cfg->passenv, cfg->rlimit_as, cfg->rlimit_cpu_s};
    int64_t start = timeman_now_ms();
    int timeout = cfg->startup_timeout_ms > 0 ? cfg->startup_timeout_ms : DEFAULT_STARTUP_MS;
    ProcessStatus ps = process_spawn(&ep->proc, argv, &opt);
    if (ps != PROCESS_OK) {
        int err = errno;
        ep->dead = true;
        return fail(ep, PLAYER_ERR_START, "cannot run %s%s%s: %s (%s)", cfg->cmd,
                    cfg->workdir[0] ? " in " : "", cfg->workdir, process_strerror(ps),
                    strerror(err));
    }
    PlayerStatus st = ep->proto == PROTO_XBOARD ? xb_handshake(ep, start, timeout)
                                                : uci_handshake(ep, start + timeout, timeout);
    if (!st && ep->proto == PROTO_XBOARD) {
        const char *n = ep->engine_name;
        if (strstr(n, "Sjaak"))
            ep->fen_dialect = FEN_HE;
        else if (strstr(n, "HoiXiangqi"))
            ep->fen_dialect = FEN_HE | FEN_SHORT;
        st = xb_reset(ep);
        if (!st)
            st = send_line(ep, "easy"); // no pondering: the engine is idle between our calls
    }
    if (!st)
        st = apply_options(ep, cfg);
    if (!st)
        st = ep->proto == PROTO_XBOARD ? xb_ping(ep, timeman_now_ms() + ep->ping_timeout_ms)
                                       : uci_ping(ep);
    return st;
}

PlayerStatus external_player_new(const PlayerConfig *cfg, void **impl, char *msg, size_t msg_len)
{
    *impl = NULL;
    if (cfg->proto != PROTO_UCI && cfg->proto != PROTO_UCCI && cfg->proto != PROTO_XBOARD) {
        put_msg(msg, msg_len, "not an external engine protocol");
        return PLAYER_ERR_CONFIG;
    }
    ExternalPlayer *ep = calloc(1, sizeof *ep);
    Board *scratch = malloc(sizeof *scratch);
    if (!ep || !scratch) {
        free(ep);
        free(scratch);
        put_msg(msg, msg_len, "out of memory");
        return PLAYER_ERR_START;
    }
    ep->scratch = scratch;
    ep->proto = cfg->proto;
    ep->rank_base = cfg->rank_base;
    ep->ping_timeout_ms = cfg->ping_timeout_ms > 0 ? cfg->ping_timeout_ms : DEFAULT_PING_MS;
    snprintf(ep->label, sizeof ep->label, "%s", cfg->name[0] ? cfg->name : "engine");
    ep->proc.pid = -1;
    ep->proc.in_fd = ep->proc.out_fd = ep->proc.pidfd = -1;
    PlayerStatus st = start_engine(ep, cfg);
    if (st) {
        put_msg(msg, msg_len, ep->err);
        process_close(&ep->proc);
        free(ep->scratch);
        free(ep);
        return st;
    }
    *impl = ep;
    return PLAYER_OK;
}

void external_player_free(void *impl)
{
    ExternalPlayer *ep = impl;
    if (!ep)
        return;
    if (!ep->dead && send_line(ep, "quit") == PLAYER_OK) {
        // Give it a moment to exit by itself (EOF on its output), then process_close kills.
        int64_t deadline = timeman_now_ms() + QUIT_GRACE_MS;
        while (next_line(ep, deadline) == PROCESS_OK)
            ;
    }
    process_close(&ep->proc);
    free(ep->scratch);
    free(ep);
}

PlayerStatus external_player_new_game(void *impl, const RulesConfig *rules, char *msg,
                                      size_t msg_len)
{
    (void)rules; // no protocol here can tell an engine our rule set
    ExternalPlayer *ep = impl;
    PlayerStatus st = settle(ep);
    if (!st && ep->proto == PROTO_UCI)
        st = send_line(ep, "ucinewgame");
    if (!st && ep->proto == PROTO_UCCI && ep->has_newgame_option)
        st = send_line(ep, "setoption newgame");
    if (!st && ep->proto != PROTO_XBOARD)
        st = uci_ping(ep);
    if (!st && ep->proto == PROTO_XBOARD) {
        st = xb_reset(ep);
        if (!st)
            st = xb_ping(ep, timeman_now_ms() + ep->ping_timeout_ms);
    }
    if (st)
        put_msg(msg, msg_len, ep->err);
    return st;
}

/// Whether the limits say when to stop: a clock, a movetime, a depth or (UCI/UCCI) nodes.
static PlayerStatus check_limits(ExternalPlayer *ep, const Board *game, const PlayerLimits *l)
{
    bool bounded = l->time_ms[game->side] >= 0 || l->movetime_ms > 0 || l->depth > 0;
    if (!bounded && l->nodes > 0 && ep->proto == PROTO_XBOARD)
        return fail(ep, PLAYER_ERR_CONFIG,
                    "xboard has no node limit: give a clock, a movetime or a depth");
    if (!bounded && l->nodes == 0)
        return fail(ep, PLAYER_ERR_CONFIG, "no clock, movetime, depth or nodes to search by");
    MoveList list;
    if (movegen_legal(game, &list) == 0)
        return fail(ep, PLAYER_ERR_CONFIG, "asked to move in a position without legal moves");
    return PLAYER_OK;
}

PlayerStatus external_player_go(void *impl, const Board *game, const PlayerLimits *limits,
                                int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len)
{
    ExternalPlayer *ep = impl;
    memset(out, 0, sizeof *out);
    PlayerStatus st = check_limits(ep, game, limits);
    if (!st)
        st = settle(ep);
    if (!st) {
        game_start_fen(ep, game);
        st = ep->proto == PROTO_XBOARD ? xb_go(ep, game, limits, deadline_ms, out)
                                       : uci_go(ep, game, limits, deadline_ms, out);
    }
    if (st)
        put_msg(msg, msg_len, ep->err);
    return st;
}
