// SPDX-License-Identifier: MIT
// The builtin player: our engine in-process, with its own options and weights.
#include <stdio.h>
#include <stdlib.h>

#include "movegen.h"
#include "player_impl.h"
#include "search.h"

bool player_builtin_weights(const PlayerConfig *cfg, Weights *out, char *why, size_t why_len)
{
    char reason[512];
    weights_default(out);
    if (cfg->weights_file[0] &&
        weights_load(out, cfg->weights_file, reason, sizeof reason) != PARAMS_OK) {
        snprintf(why, why_len, "weights: %s", reason);
        return false;
    }
    for (int i = 0; i < cfg->option_count; i++) {
        const PlayerOption *o = &cfg->options[i];
        ParamsStatus st = weights_set(out, o->name, o->value);
        if (st != PARAMS_OK && st != PARAMS_ERR_UNKNOWN) { // unknown: not a weight
            // The words engine_set_option's refusal of the weight gave before this function.
            snprintf(why, why_len, "option %s=%s: %s", o->name, o->value,
                     engine_strerror(ENGINE_ERR_VALUE));
            return false;
        }
    }
    return true;
}

PlayerStatus builtin_player_new(const PlayerConfig *cfg, void **impl, char *msg, size_t msg_len)
{
    Engine *e = engine_new();
    if (!e) {
        snprintf(msg, msg_len, "out of memory");
        return PLAYER_ERR_START;
    }
    char why[1024];
    if (!player_builtin_weights(cfg, engine_weights(e), why, sizeof why)) {
        snprintf(msg, msg_len, "%s: %s", cfg->name, why);
        engine_free(e);
        return PLAYER_ERR_CONFIG;
    }
    for (int i = 0; i < cfg->option_count; i++) {
        if (params_find(cfg->options[i].name) >= 0)
            continue; // set above
        EngineStatus st = engine_set_option(e, cfg->options[i].name, cfg->options[i].value);
        if (st != ENGINE_OK) {
            const char *reason = engine_error(e);
            snprintf(msg, msg_len, "%s: option %s=%s: %s", cfg->name, cfg->options[i].name,
                     cfg->options[i].value, reason[0] ? reason : engine_strerror(st));
            engine_free(e);
            return PLAYER_ERR_CONFIG;
        }
    }
    *impl = e;
    return PLAYER_OK;
}

void builtin_player_free(void *impl) { engine_free(impl); }

PlayerStatus builtin_player_set_weights(void *impl, const uint16_t *ids, const int32_t *values,
                                        int n, char *msg, size_t msg_len)
{
    Weights *w = engine_weights(impl);
    for (int i = 0; i < n; i++) {
        if (ids[i] >= PARAM_NB) {
            snprintf(msg, msg_len, "weight id %u is not in this engine's table", (unsigned)ids[i]);
            return PLAYER_ERR_CONFIG;
        }
        const ParamInfo *pi = &params_info[ids[i]];
        w->v[ids[i]] = values[i] < pi->min ? pi->min : values[i] > pi->max ? pi->max : values[i];
    }
    return PLAYER_OK;
}

PlayerStatus builtin_player_new_game(void *impl, const RulesConfig *rules, char *msg,
                                     size_t msg_len)
{
    Engine *e = impl;
    char value[16];
    snprintf(value, sizeof value, "%d", rules->counting_default);
    if (engine_set_option(e, "Rules", rules_set_name(rules->set)) != ENGINE_OK ||
        engine_set_option(e, "CountingDefault", value) != ENGINE_OK) {
        snprintf(msg, msg_len, "cannot set the rules");
        return PLAYER_ERR_CONFIG;
    }
    engine_new_game(e);
    return PLAYER_OK;
}

PlayerStatus builtin_player_go(void *impl, const Board *game, const PlayerLimits *limits,
                               int64_t deadline_ms, PlayerMove *out, char *msg, size_t msg_len)
{
    (void)deadline_ms; // the engine's own time manager keeps well inside the clock
    Engine *e = impl;
    SearchLimits l;
    limits_init(&l);
    for (Color c = RED; c < COLOR_NB; c++) {
        l.time[c] = limits->time_ms[c];
        l.inc[c] = limits->inc_ms[c];
    }
    l.movestogo = limits->movestogo;
    l.movetime = limits->movetime_ms;
    l.depth = limits->depth;
    l.nodes = limits->nodes;
    if (engine_set_position(e, game) != ENGINE_OK) {
        snprintf(msg, msg_len, "game too long for the engine (%d plies)", game->hist_len);
        return PLAYER_ERR_CONFIG;
    }
    SearchResult r = engine_search(e, &l, NULL, NULL);
    if (r.best == MOVE_NONE || !movegen_is_legal(game, r.best)) {
        snprintf(msg, msg_len, "builtin engine returned no legal move");
        return PLAYER_ERR_ILLEGAL;
    }
    out->move = r.best;
    out->has_score = true;
    out->depth = r.depth;
    out->nodes = r.nodes;
    if (r.score >= VALUE_MATE_IN_MAX || r.score <= -VALUE_MATE_IN_MAX) {
        out->mate = true;
        out->score = r.score > 0 ? (VALUE_MATE - r.score + 1) / 2 : -(VALUE_MATE + r.score) / 2;
    } else {
        out->score = r.score;
    }
    return PLAYER_OK;
}
