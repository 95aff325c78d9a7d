// SPDX-License-Identifier: MIT
#include "player.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "player_impl.h"

const char *player_strerror(PlayerStatus st)
{
    static const char *const text[PLAYER_STATUS_NB] = {
        [PLAYER_OK] = "no error",
        [PLAYER_ERR_START] = "engine did not start",
        [PLAYER_ERR_CRASH] = "engine crashed",
        [PLAYER_ERR_STALL] = "engine stalled",
        [PLAYER_ERR_TIMEOUT] = "engine lost on time",
        [PLAYER_ERR_ILLEGAL] = "engine sent an illegal move",
        [PLAYER_ERR_PROTOCOL] = "engine sent an unparsable reply",
        [PLAYER_ERR_CONFIG] = "bad engine configuration",
        [PLAYER_RESIGNED] = "engine resigned",
    };
    return (unsigned)st < PLAYER_STATUS_NB ? text[st] : "unknown player status";
}

static const char *const PROTO_NAMES[PROTO_NB] = {"builtin", "uci", "ucci", "xboard"};

const char *player_proto_name(Protocol p)
{
    return (unsigned)p < PROTO_NB ? PROTO_NAMES[p] : "unknown";
}

bool player_proto_parse(const char *name, Protocol *out)
{
    for (int i = 0; name && i < PROTO_NB; i++) {
        if (strcmp(name, PROTO_NAMES[i]) == 0) {
            *out = (Protocol)i;
            return true;
        }
    }
    if (name && strcmp(name, "cecp") == 0) {
        *out = PROTO_XBOARD;
        return true;
    }
    return false;
}

PlayerStatus player_new(const PlayerConfig *cfg, Player **out, char *msg, size_t msg_len)
{
    *out = NULL;
    Player *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, msg_len, "out of memory");
        return PLAYER_ERR_START;
    }
    p->proto = cfg->proto;
    snprintf(p->name, sizeof p->name, "%s", cfg->name);
    PlayerStatus st = cfg->proto == PROTO_BUILTIN
                          ? builtin_player_new(cfg, &p->impl, msg, msg_len)
                          : external_player_new(cfg, &p->impl, msg, msg_len);
    if (st != PLAYER_OK) {
        free(p);
        return st;
    }
    *out = p;
    return PLAYER_OK;
}

void player_free(Player *p)
{
    if (!p)
        return;
    if (p->proto == PROTO_BUILTIN)
        builtin_player_free(p->impl);
    else
        external_player_free(p->impl);
    free(p);
}

PlayerStatus player_set_weights(Player *p, const uint16_t *ids, const int32_t *values, int n,
                                char *msg, size_t msg_len)
{
    if (p->proto != PROTO_BUILTIN) {
        snprintf(msg, msg_len, "weights can be set in-process only for the builtin engine");
        return PLAYER_ERR_CONFIG;
    }
    return builtin_player_set_weights(p->impl, ids, values, n, msg, msg_len);
}

PlayerStatus player_new_game(Player *p, const RulesConfig *rules, char *msg, size_t msg_len)
{
    return p->proto == PROTO_BUILTIN ? builtin_player_new_game(p->impl, rules, msg, msg_len)
                                     : external_player_new_game(p->impl, rules, msg, msg_len);
}

PlayerStatus player_go(Player *p, const Board *game, const PlayerLimits *limits,
                       int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len)
{
    memset(out, 0, sizeof *out);
    PlayerStatus st =
        p->proto == PROTO_BUILTIN
            ? builtin_player_go(p->impl, game, limits, deadline_ms, out, msg, msg_len)
            : external_player_go(p->impl, game, limits, deadline_ms, out, msg, msg_len);
    if (st == PLAYER_OK)
        p->nodes += out->nodes;
    return st;
}

int player_options(const Player *p, PlayerOptionInfo *out, int cap)
{
    return p->proto == PROTO_BUILTIN ? 0 : external_player_options(p->impl, out, cap);
}

const char *player_engine_name(const Player *p)
{
    return p->proto == PROTO_BUILTIN ? "" : external_player_engine_name(p->impl);
}

uint64_t player_nodes(const Player *p) { return p ? p->nodes : 0; }
