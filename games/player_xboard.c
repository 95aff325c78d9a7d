// SPDX-License-Identifier: MIT
// External engines over xboard/CECP: features, ping/pong, the engine's view of the game
// (force mode, setboard in the FEN dialect it reads), limits and the wait for its move; its
// row ext_xboard is what player_ext.c calls.
#include "player_ext_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "movegen.h"
#include "timeman.h"

static bool xb_is_error(const char *s)
{
    return strncmp(s, "Error", 5) == 0 || strncmp(s, "Illegal", 7) == 0 ||
           ext_word_is(s, "tellusererror");
}

/// Keeps the option of `feature option="NAME -TYPE [VALUE [MIN MAX]]"`: the name ends at the
/// first blank-dash-word that is a CECP option type (a name may hold blanks and dashes).
static void xb_option_feature(ExternalPlayer *ep, const char *v, size_t vlen)
{
    static const char *const types[] = {"check", "spin",  "slider", "combo", "button",
                                        "save",  "reset", "string", "file",  "path"};
    char text[PLAYER_TEXT_MAX];
    ext_copy_text(text, sizeof text, v, vlen);
    for (char *d = strstr(text, " -"); d; d = strstr(d + 1, " -")) {
        char word[16];
        const char *s = d + 2;
        if (!ext_next_token(&s, word, sizeof word))
            continue;
        for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
            if (strcmp(word, types[i]) != 0)
                continue;
            PlayerOptionType kind = i == 0                       ? PLAYER_OPT_CHECK
                                    : i <= 2                     ? PLAYER_OPT_SPIN
                                    : i == 4 || i == 5 || i == 6 ? PLAYER_OPT_BUTTON
                                                                 : PLAYER_OPT_OTHER;
            long long def, min = 0, max = 0;
            bool range = kind == PLAYER_OPT_SPIN &&
                         sscanf(s, "%lld %lld %lld", &def, &min, &max) == 3 && min <= max;
            ext_advertise(ep, text, (size_t)(d - text), kind, range, min, max);
            return;
        }
    }
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
    ext_copy_text(key, sizeof key, name, nlen);
    bool on = vlen == 1 && v[0] == '1';
    if (strcmp(key, "done") == 0) {
        ep->xb_done = on;
        ep->xb_done0 = vlen == 1 && v[0] == '0';
    } else if (strcmp(key, "myname") == 0)
        ext_copy_text(ep->engine_name, sizeof ep->engine_name, v, vlen);
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
        xb_option_feature(ep, v, vlen);
    }
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        if (strcmp(key, known[i]) == 0)
            return ext_send_line(ep, "accepted %s", key);
    }
    return ext_send_line(ep, "rejected %s", key); // san, sjef, ...: not for us
}

/// Parses `feature a=1 b="quoted text" ...`.
static PlayerStatus xb_feature_line(ExternalPlayer *ep, const char *s)
{
    for (;;) {
        s = ext_skip_ws(s);
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
    if ((rest = ext_word_is(s, "feature")))
        return xb_feature_line(ep, rest);
    if (xb_is_error(s)) {
        ep->xb_error_seen = true;
        ext_copy_text(ep->xb_error, sizeof ep->xb_error, s, strlen(s));
    }
    return PLAYER_OK;
}

static PlayerStatus xb_handshake(ExternalPlayer *ep, int64_t start, int timeout_ms)
{
    if (ext_send_line(ep, "xboard") || ext_send_line(ep, "protover 2"))
        return PLAYER_ERR_START;
    int64_t hard = start + timeout_ms;
    int64_t soft = start + (timeout_ms < XB_FEATURE_WAIT_MS ? timeout_ms : XB_FEATURE_WAIT_MS);
    ep->xb_features_until = hard;
    while (!ep->xb_done) {
        ProcessStatus ps = ext_next_line(ep, ep->xb_done0 ? hard : soft);
        if (ps == PROCESS_ERR_TIMEOUT && ep->xb_done0)
            return ext_fail(ep, PLAYER_ERR_START, "no 'feature done=1' within %d ms", timeout_ms);
        if (ps == PROCESS_ERR_TIMEOUT)
            break; // an engine without features (protocol version 1)
        if (ps != PROCESS_OK) {
            ext_crashed(ep, ps, "during the handshake");
            return PLAYER_ERR_START;
        }
        if (xb_common_line(ep, ext_skip_ws(ep->line)))
            return PLAYER_ERR_START;
    }
    if (ep->xb_variants_seen && !ep->xb_variant_ok)
        return ext_fail(ep, PLAYER_ERR_START, "the engine does not offer variant xiangqi");
    return PLAYER_OK;
}

/// ping N / pong N (skipped for engines without feature ping=1).
static PlayerStatus xb_ping(ExternalPlayer *ep, int64_t deadline)
{
    if (!ep->xb_ping)
        return PLAYER_OK;
    int id = ++ep->ping_id;
    PlayerStatus st = ext_send_line(ep, "ping %d", id);
    if (st)
        return st;
    for (;;) {
        ProcessStatus ps = ext_next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return ext_fail(ep, PLAYER_ERR_STALL, "no 'pong %d' in time", id);
        if (ps != PROCESS_OK)
            return ext_crashed(ep, ps, "waiting for pong");
        const char *s = ext_skip_ws(ep->line), *rest;
        long long v;
        char tok[24];
        if ((rest = ext_word_is(s, "pong")) && ext_next_token(&rest, tok, sizeof tok) &&
            ext_parse_ll(tok, INT_MIN, INT_MAX, &v) && v == id)
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
    PlayerStatus st = ext_send_line(ep, "new");
    if (!st)
        st = ext_send_line(ep, "variant xiangqi");
    if (!st)
        st = ext_send_line(ep, "force");
    if (!st)
        st = ext_send_line(ep, "post");
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

/// Features that come after the 2 s an engine without done=0 is given: HoiXiangqi prints
/// them only once its tables are allocated, which a loaded machine can take past that wait.
/// An engine is refused for want of setboard only once done=1 came or the handshake's
/// startup time is over: the wait costs nothing to an engine with the feature (its line is
/// on its way) and only delays the error of one without it.
static void xb_late_features(ExternalPlayer *ep)
{
    while (!ep->xb_done && !ep->xb_setboard) {
        if (ext_next_line(ep, ep->xb_features_until) != PROCESS_OK)
            return; // the time is over, or the engine died: the next read says so
        if (xb_common_line(ep, ext_skip_ws(ep->line)))
            return;
    }
}

/// setboard, in the dialect known to work, else the guess first and then the others (an
/// engine that answers a FEN with an error line gets the next one).
static PlayerStatus xb_setboard(ExternalPlayer *ep, int64_t deadline)
{
    if (!ep->xb_setboard)
        xb_late_features(ep);
    if (!ep->xb_setboard)
        return ext_fail(ep, PLAYER_ERR_CONFIG,
                        "the engine cannot load a FEN (no feature setboard=1), so it can only play "
                        "games from the standard start position; this game starts from %s",
                        ep->start_fen);
    char fen[BOARD_FEN_MAX + 16];
    int tries = ep->fen_dialect_sure || !ep->xb_ping ? 1 : FEN_DIALECT_NB;
    for (int i = 0; i < tries; i++) {
        int d = i == 0 ? ep->fen_dialect : (ep->fen_dialect + i) % FEN_DIALECT_NB;
        xb_fen_dialect(ep->start_fen, d, fen, sizeof fen);
        ep->xb_error_seen = false;
        PlayerStatus st = ext_send_line(ep, "setboard %s", fen);
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
    return ext_fail(ep, PLAYER_ERR_CONFIG,
                    "the engine rejected the FEN %s in every dialect tried (%s)", ep->start_fen,
                    ep->xb_error);
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
        bool fresh = ep->view_valid && ep->view_len == 0 && ext_fen_is_start(ep->view_fen);
        if (!fresh && (st = xb_reset(ep)))
            return st;
        if (!ext_fen_is_start(ep->start_fen) && (st = xb_setboard(ep, deadline)))
            return st;
        snprintf(ep->view_fen, sizeof ep->view_fen, "%s", ep->start_fen);
        ep->view_valid = true;
        ep->view_len = 0;
    }
    for (int i = ep->view_len; i < game->hist_len; i++) {
        char mt[MOVE_TEXT_MAX];
        move_text(game->hist[i].move, ep->rank_base, mt);
        if ((st = ext_send_line(ep, "%s%s", ep->xb_usermove ? "usermove " : "", mt)))
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
            st = ext_send_line(ep, "level %d %s %s", l->movestogo > 0 ? l->movestogo : 0, base,
                               incs);
            ep->level_sent = true;
        }
        if (!st)
            st = ext_send_line(ep, "time %lld", (long long)(l->time_ms[us] / 10));
        if (!st && l->time_ms[them] >= 0)
            st = ext_send_line(ep, "otim %lld", (long long)(l->time_ms[them] / 10));
    }
    if (!st && l->movetime_ms > 0)
        st = ext_send_line(ep, "st %lld", (long long)((l->movetime_ms + 999) / 1000));
    if (!st && l->depth > 0)
        st = ext_send_line(ep, "sd %d", l->depth);
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
        ProcessStatus ps = ext_next_line(ep, ask ? question_at : deadline);
        if (ps == PROCESS_ERR_TIMEOUT && ask) {
            // A movetime that is not a whole number of seconds: `st` was rounded up.
            question_at = 0;
            if (ext_send_line(ep, "?"))
                return PLAYER_ERR_CRASH;
            continue;
        }
        if (ps == PROCESS_ERR_TIMEOUT) {
            ext_send_line(ep, "?"); // the answer is collected by settle() next time
            return ext_fail(ep, PLAYER_ERR_TIMEOUT, "no move by the deadline%s%s",
                            *claim ? " after claiming " : "", claim);
        }
        if (ps != PROCESS_OK)
            return ext_crashed(ep, ps, "waiting for its move");
        const char *s = ext_skip_ws(ep->line), *rest;
        if ((rest = ext_word_is(s, "move"))) {
            ep->searching = false;
            // It leaves force mode after moving; force again so the next go resends cleanly.
            PlayerStatus st = ext_send_line(ep, "force");
            char tok[MOVE_TEXT_MAX * 4];
            if (!ext_next_token(&rest, tok, sizeof tok))
                tok[0] = '\0';
            if (!st)
                st = ext_take_move(ep, game, tok, out);
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
        if (ext_word_is(s, "resign")) {
            ep->searching = false;
            ep->view_valid = false;
            return ext_fail(ep, PLAYER_RESIGNED, "resigns%s%s", *claim ? " after claiming " : "",
                            claim);
        }
        if (strncmp(s, "1-0", 3) == 0 || strncmp(s, "0-1", 3) == 0 ||
            strncmp(s, "1/2-1/2", 7) == 0) {
            ext_copy_text(claim, sizeof claim, s, strlen(s)); // ignored: our referee decides
            continue;
        }
        if (xb_thinking_line(s, out))
            continue;
        if (strncmp(s, "Illegal move", 12) == 0 || (xb_is_error(s) && strstr(s, "llegal move"))) {
            ext_send_line(ep, "?"); // it may be searching a wrong position: settle() waits it out
            ep->view_valid = false;
            return ext_fail(ep, PLAYER_ERR_PROTOCOL, "the engine rejected a move we sent: %.200s",
                            s);
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
    if (!st) {
        ext_log_go(ep, game, limits, deadline);
        st = ext_send_line(ep, "go");
    }
    if (st)
        return st;
    ep->searching = true;
    int64_t question_at = 0;
    if (limits->movetime_ms > 0 && limits->movetime_ms % 1000 != 0)
        question_at = timeman_now_ms() + limits->movetime_ms;
    return xb_wait_move(ep, game, question_at, deadline, out);
}

/// The handshake, then the FEN dialect guessed from the engine's name and a fresh game.
static PlayerStatus xb_start(ExternalPlayer *ep, int64_t start, int timeout_ms)
{
    PlayerStatus st = xb_handshake(ep, start, timeout_ms);
    if (st)
        return st;
    const char *n = ep->engine_name;
    if (strstr(n, "Sjaak"))
        ep->fen_dialect = FEN_HE;
    else if (strstr(n, "HoiXiangqi"))
        ep->fen_dialect = FEN_HE | FEN_SHORT;
    st = xb_reset(ep);
    if (!st)
        st = ext_send_line(ep, "easy"); // no pondering: the engine is idle between our calls
    return st;
}

static PlayerStatus xb_configure(ExternalPlayer *ep)
{
    // We are the referee.
    return ep->xb_claim_option ? ext_send_line(ep, "option Claim repetitions=0") : PLAYER_OK;
}

static PlayerStatus xb_set_option(ExternalPlayer *ep, const char *name, const char *value)
{
    return *value ? ext_send_line(ep, "option %s=%s", name, value)
                  : ext_send_line(ep, "option %s", name);
}

static PlayerStatus xb_ready(ExternalPlayer *ep)
{
    return xb_ping(ep, timeman_now_ms() + ep->ping_timeout_ms);
}

static PlayerStatus xb_new_game(ExternalPlayer *ep)
{
    PlayerStatus st = xb_reset(ep);
    return st ? st : xb_ready(ep);
}

/// Force mode ends the search; a ping then says its move (if any) has come and gone.
static PlayerStatus xb_settle(ExternalPlayer *ep, int64_t deadline)
{
    ep->view_valid = false;
    PlayerStatus st = ext_send_line(ep, "force");
    if (!st)
        st = xb_ping(ep, deadline);
    if (!st)
        ep->searching = false;
    return st;
}

const ExtProtocol ext_xboard = {.proto = PROTO_XBOARD,
                                .handshake = xb_start,
                                .configure = xb_configure,
                                .set_option = xb_set_option,
                                .ping = xb_ready,
                                .new_game = xb_new_game,
                                .settle = xb_settle,
                                .go = xb_go};
