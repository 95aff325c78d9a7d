// SPDX-License-Identifier: MIT
// External engines over UCI (the Pikafish / Fairy-Stockfish dialect) and UCCI: the handshake,
// options, isready, and a search from `position` to `bestmove`; their rows ext_uci and
// ext_ucci are what player_ext.c calls.
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

/// The type word of an advertised option (UCI, UCCI and xboard's without the dash).
static PlayerOptionType option_type(const char *word)
{
    if (!strcmp(word, "check"))
        return PLAYER_OPT_CHECK;
    if (!strcmp(word, "spin") || !strcmp(word, "slider"))
        return PLAYER_OPT_SPIN;
    if (!strcmp(word, "button"))
        return PLAYER_OPT_BUTTON;
    return PLAYER_OPT_OTHER;
}

/// Keeps the option of `option name N type T [default D] [min A] [max B] [var V]...` (UCI) or
/// `option N type T ...` (UCCI), and notes the ones that matter to us.
static void uci_option_line(ExternalPlayer *ep, const char *rest)
{
    const char *name = ep->proto == PROTO_UCI ? ext_word_is(rest, "name") : rest;
    if (!name)
        return;
    const char *type = strstr(name, " type");
    size_t n = type ? (size_t)(type - name) : strlen(name);
    if (n == strlen("UCI_Variant") && strncmp(name, "UCI_Variant", n) == 0)
        ep->has_variant_option = true;
    if (n == strlen("newgame") && strncmp(name, "newgame", n) == 0)
        ep->has_newgame_option = true;
    char tok[64], num[32];
    const char *s = type ? type + strlen(" type") : "";
    PlayerOptionType kind =
        ext_next_token(&s, tok, sizeof tok) ? option_type(tok) : PLAYER_OPT_OTHER;
    long long v, min = 0, max = 0;
    int bounds = 0;
    while (kind == PLAYER_OPT_SPIN && ext_next_token(&s, tok, sizeof tok)) {
        bool is_min = !strcmp(tok, "min"), is_max = !strcmp(tok, "max");
        if ((is_min || is_max) && ext_next_token(&s, num, sizeof num) &&
            ext_parse_ll(num, LLONG_MIN, LLONG_MAX, &v)) {
            *(is_min ? &min : &max) = v;
            bounds |= is_min ? 1 : 2;
        }
    }
    ext_advertise(ep, name, n, kind, bounds == 3 && min <= max, min, max);
}

static PlayerStatus uci_handshake(ExternalPlayer *ep, int64_t start, int timeout_ms)
{
    int64_t deadline = start + timeout_ms;
    bool uci = ep->proto == PROTO_UCI;
    const char *ok = uci ? "uciok" : "ucciok";
    PlayerStatus st = ext_send_line(ep, "%s", uci ? "uci" : "ucci");
    if (st)
        return PLAYER_ERR_START;
    for (;;) {
        ProcessStatus ps = ext_next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return ext_fail(ep, PLAYER_ERR_START, "no '%s' within %d ms", ok, timeout_ms);
        if (ps != PROCESS_OK) {
            ext_crashed(ep, ps, "during the handshake");
            return PLAYER_ERR_START;
        }
        const char *s = ext_skip_ws(ep->line), *rest;
        if (ext_word_is(s, ok))
            return PLAYER_OK;
        if ((rest = ext_word_is(s, "id")) && (rest = ext_word_is(rest, "name")))
            ext_copy_text(ep->engine_name, sizeof ep->engine_name, rest, strlen(rest));
        else if ((rest = ext_word_is(s, "option")))
            uci_option_line(ep, rest);
    }
}

static PlayerStatus uci_set_option(ExternalPlayer *ep, const char *name, const char *value)
{
    return *value ? ext_send_line(ep, "setoption name %s value %s", name, value)
                  : ext_send_line(ep, "setoption name %s", name);
}

static PlayerStatus ucci_set_option(ExternalPlayer *ep, const char *name, const char *value)
{
    return *value ? ext_send_line(ep, "setoption %s %s", name, value)
                  : ext_send_line(ep, "setoption %s", name);
}

/// UCI_Variant only where advertised (Fairy-Stockfish, in either dialect).
static PlayerStatus uci_configure(ExternalPlayer *ep)
{
    return ep->has_variant_option ? ep->pr->set_option(ep, "UCI_Variant", "xiangqi") : PLAYER_OK;
}

/// isready / readyok.
static PlayerStatus uci_ping(ExternalPlayer *ep)
{
    PlayerStatus st = ext_send_line(ep, "isready");
    if (st)
        return st;
    int64_t deadline = timeman_now_ms() + ep->ping_timeout_ms;
    for (;;) {
        ProcessStatus ps = ext_next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return ext_fail(ep, PLAYER_ERR_STALL, "no 'readyok' within %d ms", ep->ping_timeout_ms);
        if (ps != PROCESS_OK)
            return ext_crashed(ep, ps, "waiting for readyok");
        if (ext_word_is(ext_skip_ws(ep->line), "readyok"))
            return PLAYER_OK;
    }
}

/// Keeps the score, depth and nodes of an `info` line (only the first PV's).
static void uci_info_line(const char *s, PlayerMove *out)
{
    char tok[32];
    long long v;
    while (ext_next_token(&s, tok, sizeof tok)) {
        if (strcmp(tok, "pv") == 0 || strcmp(tok, "string") == 0)
            return;
        if (strcmp(tok, "multipv") == 0 && ext_next_token(&s, tok, sizeof tok) &&
            strcmp(tok, "1") != 0)
            return;
        if (strcmp(tok, "depth") == 0 && ext_next_token(&s, tok, sizeof tok) &&
            ext_parse_ll(tok, 0, INT_MAX, &v))
            out->depth = (int)v;
        else if (strcmp(tok, "nodes") == 0 && ext_next_token(&s, tok, sizeof tok) &&
                 ext_parse_ll(tok, 0, LLONG_MAX, &v))
            out->nodes = (uint64_t)v;
        else if (strcmp(tok, "score") == 0 && ext_next_token(&s, tok, sizeof tok)) {
            // UCI: score cp X / score mate N; the UCCI standard writes score X.
            bool mate = strcmp(tok, "mate") == 0;
            if ((mate || strcmp(tok, "cp") == 0) && !ext_next_token(&s, tok, sizeof tok))
                return;
            if (ext_parse_ll(tok, INT_MIN, INT_MAX, &v)) {
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
    return ext_send_text(ep, ep->cmd);
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
    return ext_send_line(ep, "%s", go);
}

static PlayerStatus uci_new_game(ExternalPlayer *ep)
{
    PlayerStatus st = ext_send_line(ep, "ucinewgame");
    return st ? st : uci_ping(ep);
}

/// UCCI has no new-game command: an engine may offer a `newgame` option (a button).
static PlayerStatus ucci_new_game(ExternalPlayer *ep)
{
    PlayerStatus st = ep->has_newgame_option ? ext_send_line(ep, "setoption newgame") : PLAYER_OK;
    return st ? st : uci_ping(ep);
}

/// The `bestmove` that answers the `stop` sent at the deadline.
static PlayerStatus uci_settle(ExternalPlayer *ep, int64_t deadline)
{
    for (;;) {
        ProcessStatus ps = ext_next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT)
            return ext_fail(ep, PLAYER_ERR_STALL, "no bestmove %d ms after 'stop'",
                            ep->ping_timeout_ms);
        if (ps != PROCESS_OK)
            return ext_crashed(ep, ps, "waiting for bestmove after 'stop'");
        if (ext_word_is(ext_skip_ws(ep->line), "bestmove")) {
            ep->searching = false;
            return PLAYER_OK;
        }
    }
}

static PlayerStatus uci_go(ExternalPlayer *ep, const Board *game, const PlayerLimits *limits,
                           int64_t deadline, PlayerMove *out)
{
    PlayerStatus st = uci_send_position(ep, game);
    if (!st) {
        ext_log_go(ep, game, limits, deadline);
        st = uci_send_go(ep, game->side, limits);
    }
    if (st)
        return st;
    ep->searching = true;
    for (;;) {
        ProcessStatus ps = ext_next_line(ep, deadline);
        if (ps == PROCESS_ERR_TIMEOUT) {
            ext_send_line(ep, "stop"); // the answer is collected by settle() next time
            return ext_fail(ep, PLAYER_ERR_TIMEOUT, "no bestmove by the deadline");
        }
        if (ps != PROCESS_OK)
            return ext_crashed(ep, ps, "waiting for bestmove");
        const char *s = ext_skip_ws(ep->line), *rest;
        if ((rest = ext_word_is(s, "info")))
            uci_info_line(rest, out);
        else if ((rest = ext_word_is(s, "bestmove"))) {
            ep->searching = false;
            char tok[MOVE_TEXT_MAX * 4];
            if (!ext_next_token(&rest, tok, sizeof tok))
                tok[0] = '\0';
            return ext_take_move(ep, game, tok, out);
        }
    }
}

const ExtProtocol ext_uci = {.proto = PROTO_UCI,
                             .handshake = uci_handshake,
                             .configure = uci_configure,
                             .set_option = uci_set_option,
                             .ping = uci_ping,
                             .new_game = uci_new_game,
                             .settle = uci_settle,
                             .go = uci_go,
                             .node_limit = true};

const ExtProtocol ext_ucci = {.proto = PROTO_UCCI,
                              .handshake = uci_handshake,
                              .configure = uci_configure,
                              .set_option = ucci_set_option,
                              .ping = uci_ping,
                              .new_game = ucci_new_game,
                              .settle = uci_settle,
                              .go = uci_go,
                              .node_limit = true};
