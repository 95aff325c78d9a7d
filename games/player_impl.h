// SPDX-License-Identifier: MIT
// Internal to games/: how player.c dispatches to the builtin and external implementations.
#pragma once

#include "player.h"

struct Player {
    Protocol proto;
    char name[PLAYER_NAME_MAX];
    void *impl;     // BuiltinPlayer or ExternalPlayer
    uint64_t nodes; // over the moves it made, as it reported them (player_nodes)
};

PlayerStatus builtin_player_new(const PlayerConfig *cfg, void **impl, char *msg, size_t msg_len);
void builtin_player_free(void *impl);
PlayerStatus builtin_player_set_weights(void *impl, const uint16_t *ids, const int32_t *values,
                                        int n, char *msg, size_t msg_len);
PlayerStatus builtin_player_new_game(void *impl, const RulesConfig *rules, char *msg,
                                     size_t msg_len);
PlayerStatus builtin_player_go(void *impl, const Board *game, const PlayerLimits *limits,
                               int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len);

PlayerStatus external_player_new(const PlayerConfig *cfg, void **impl, char *msg, size_t msg_len);
void external_player_free(void *impl);
int external_player_options(const void *impl, PlayerOptionInfo *out, int cap);
const char *external_player_engine_name(const void *impl);
PlayerStatus external_player_new_game(void *impl, const RulesConfig *rules, char *msg,
                                      size_t msg_len);
PlayerStatus external_player_go(void *impl, const Board *game, const PlayerLimits *limits,
                                int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len);
