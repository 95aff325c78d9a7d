// SPDX-License-Identifier: MIT
#include "match.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pgn.h"

typedef struct {
    const MatchConfig *cfg;
    const MatchHooks *hooks;
    atomic_bool *interrupt;
    atomic_bool stop;     // set by a hook, an error or the interrupt
    atomic_int next_pair; // pair ids are handed out in order: each fixes opening and colours
    int pairs_total;
    pthread_mutex_t lock; // guards totals, the PGN file, the hooks, error
    MatchTotals totals;
    int games_finished;
    MatchStatus error;
    char error_msg[1024];
} MatchState;

const char *match_strerror(MatchStatus st)
{
    switch (st) {
    case MATCH_OK: return "no error";
    case MATCH_ERR_PLAYER: return "an engine could not be started";
    case MATCH_ERR_NOMEM: return "out of memory";
    case MATCH_ERR_IO: return "cannot write the PGN file";
    default: return "unknown match status";
    }
}

static void fail(MatchState *s, MatchStatus st, const char *msg)
{
    pthread_mutex_lock(&s->lock);
    if (s->error == MATCH_OK) {
        s->error = st;
        snprintf(s->error_msg, sizeof s->error_msg, "%s", msg);
    }
    pthread_mutex_unlock(&s->lock);
    atomic_store(&s->stop, true);
}

static double points_for_player0(const GameRecord *r)
{
    if (r->outcome == OUTCOME_DRAW)
        return 0.5;
    bool red_won = r->outcome == OUTCOME_RED_WINS;
    return (red_won == (r->red == 0)) ? 1.0 : 0.0;
}

/// Books a finished game (and, when it completes a pair, the pair) under the lock.
static void record(MatchState *s, GameRecord *rec, int round, double *pair_points, int pair_games)
{
    const MatchConfig *cfg = s->cfg;
    pthread_mutex_lock(&s->lock);
    MatchTotals *t = &s->totals;
    double pts = points_for_player0(rec);
    t->games++;
    t->wins += pts == 1.0;
    t->draws += pts == 0.5;
    t->losses += pts == 0.0;
    t->terms[rec->term]++;
    *pair_points += pts;
    s->games_finished++;
    if (cfg->pgn) {
        char tc[64];
        game_format_tc(&cfg->game.tc[0], tc, sizeof tc);
        PgnTags tags = {cfg->event, cfg->site, round, tc, rules_set_name(cfg->game.rules.set)};
        if (pgn_write(cfg->pgn, rec, &tags) != 0 || fflush(cfg->pgn) != 0) {
            s->error = MATCH_ERR_IO;
            snprintf(s->error_msg, sizeof s->error_msg, "writing the PGN file failed");
            atomic_store(&s->stop, true);
        }
    }
    if (pair_games == 2)
        t->ptnml[(int)(*pair_points * 2 + 0.5)]++;
    if (s->hooks && s->hooks->game_done)
        s->hooks->game_done(s->hooks->ctx, rec, s->games_finished, t);
    if (pair_games == 2 && s->hooks && s->hooks->should_stop &&
        s->hooks->should_stop(s->hooks->ctx, t))
        atomic_store(&s->stop, true);
    pthread_mutex_unlock(&s->lock);
}

static bool start_player(MatchState *s, int i, Player **p)
{
    char msg[512];
    player_free(*p);
    *p = NULL;
    PlayerStatus st = player_new(&s->cfg->players[i], p, msg, sizeof msg);
    if (st != PLAYER_OK) {
        char full[600];
        snprintf(full, sizeof full, "%s: %s: %s", s->cfg->players[i].name, player_strerror(st),
                 msg);
        fail(s, MATCH_ERR_PLAYER, full);
        return false;
    }
    return true;
}

static void *match_thread(void *arg)
{
    MatchState *s = arg;
    const MatchConfig *cfg = s->cfg;
    Player *players[2] = {NULL, NULL};
    GameRecord *rec = malloc(sizeof *rec);
    if (!rec) {
        fail(s, MATCH_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (!start_player(s, 0, &players[0]) || !start_player(s, 1, &players[1]))
        goto done;
    for (;;) {
        if (atomic_load(&s->stop) || atomic_load(s->interrupt))
            break;
        int pair = atomic_fetch_add(&s->next_pair, 1);
        if (pair >= s->pairs_total)
            break;
        int opening =
            openings_pick(cfg->openings, (uint64_t)pair, cfg->random_order, cfg->seed, cfg->start);
        int games = cfg->repeat ? 2 : 1;
        double pair_points = 0;
        for (int g = 0; g < games; g++) {
            // Without repeat, colours alternate by round so both engines get each colour.
            int red = cfg->repeat ? g : pair % 2;
            memset(rec, 0, offsetof(GameRecord, moves));
            snprintf(rec->names[0], PLAYER_NAME_MAX, "%s", cfg->players[0].name);
            snprintf(rec->names[1], PLAYER_NAME_MAX, "%s", cfg->players[1].name);
            game_play(players, red, &cfg->game, &cfg->openings->items[opening], s->interrupt, rec);
            if (rec->term == TERM_ABORTED && !atomic_load(s->interrupt)) {
                char full[GAME_DETAIL_MAX + 64];
                snprintf(full, sizeof full, "game aborted: %s", rec->detail);
                fail(s, MATCH_ERR_PLAYER, full);
            }
            if (rec->term == TERM_ABORTED || atomic_load(s->interrupt))
                goto done;
            record(s, rec, pair + 1, &pair_points, cfg->repeat ? g + 1 : 0);
            int failed = game_failed_player(rec);
            if (failed >= 0 && !start_player(s, failed, &players[failed]))
                goto done;
        }
    }
done:
    player_free(players[0]);
    player_free(players[1]);
    free(rec);
    return NULL;
}

MatchStatus match_run(const MatchConfig *cfg, const MatchHooks *hooks, atomic_bool *interrupt,
                      MatchTotals *totals, char *msg, size_t msg_len)
{
    MatchState *s = calloc(1, sizeof *s);
    if (!s)
        return MATCH_ERR_NOMEM;
    s->cfg = cfg;
    s->hooks = hooks;
    s->interrupt = interrupt;
    atomic_init(&s->stop, false);
    atomic_init(&s->next_pair, 0);
    s->pairs_total = cfg->rounds;
    pthread_mutex_init(&s->lock, NULL);
    int n = cfg->concurrency < 1                       ? 1
            : cfg->concurrency > MATCH_MAX_CONCURRENCY ? MATCH_MAX_CONCURRENCY
                                                       : cfg->concurrency;
    pthread_t tid[MATCH_MAX_CONCURRENCY];
    int started = 0;
    for (int i = 0; i < n; i++) {
        if (pthread_create(&tid[i], NULL, match_thread, s) != 0)
            break;
        started++;
    }
    if (started == 0)
        match_thread(s);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    *totals = s->totals;
    MatchStatus st = s->error;
    if (st != MATCH_OK)
        snprintf(msg, msg_len, "%s", s->error_msg);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return st;
}
