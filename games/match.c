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
    case MATCH_ABORTED: return "interrupted";
    default: return "unknown match status";
    }
}

/// Records a thread's error and stops every thread; the first error is kept, since later ones
/// are usually its consequences.
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

/// Player 0's points, whichever colour it had: every tally is from player 0's view ("new").
static double points_for_player0(const GameRecord *r)
{
    if (r->outcome == OUTCOME_DRAW)
        return 0.5;
    bool red_won = r->outcome == OUTCOME_RED_WINS;
    return (red_won == (r->red == 0)) ? 1.0 : 0.0;
}

void match_totals_game(MatchTotals *t, double pts, int term)
{
    t->games++;
    // Exact comparisons are safe: 1, 0.5 and 0 are exact in binary floating point.
    t->wins += pts == 1.0;
    t->draws += pts == 0.5;
    t->losses += pts == 0.0;
    if (term >= 0 && term < TERM_NB)
        t->terms[term]++;
}

void match_totals_pair(MatchTotals *t, const double pts[2])
{
    // The pair's points 0, 0.5, ..., 2 times 2 index the pentanomial cell (STATS.md's p0..p4). The
    // pair_* counts take only the games of complete pairs, so they always agree with ptnml.
    t->ptnml[(int)((pts[0] + pts[1]) * 2 + 0.5)]++;
    for (int i = 0; i < 2; i++) {
        t->pair_wins += pts[i] == 1.0;
        t->pair_draws += pts[i] == 0.5;
        t->pair_losses += pts[i] == 0.0;
    }
}

/// Books a finished game (and, when it completes a pair, the pair) under the lock;
/// pair_points[g] keeps the pair's game g (pair_games: 1 or 2 with repeat, else 0).
static void record(MatchState *s, GameRecord *rec, int round, double pair_points[2], int pair_games)
{
    const MatchConfig *cfg = s->cfg;
    pthread_mutex_lock(&s->lock);
    MatchTotals *t = &s->totals;
    double pts = points_for_player0(rec);
    match_totals_game(t, pts, rec->term);
    if (pair_games > 0)
        pair_points[pair_games - 1] = pts;
    s->games_finished++;
    // Under the lock: each game goes to the PGN whole, never interleaved with another thread's.
    if (cfg->pgn) {
        char tc[64];
        game_format_tc(&cfg->game.tc[0], tc, sizeof tc);
        PgnTags tags = {
            cfg->event,    cfg->site,         round, tc, rules_set_name(cfg->game.rules.set),
            cfg->notation, cfg->pgn_rank_base};
        if (pgn_write(cfg->pgn, rec, &tags) != 0 || fflush(cfg->pgn) != 0) {
            s->error = MATCH_ERR_IO;
            snprintf(s->error_msg, sizeof s->error_msg, "writing the PGN file failed");
            atomic_store(&s->stop, true);
        }
    }
    if (pair_games == 2)
        match_totals_pair(t, pair_points);
    if (s->hooks && s->hooks->game_done)
        s->hooks->game_done(s->hooks->ctx, rec, s->games_finished, t);
    // should_stop is asked only when a pair completes (so only with repeat): a verdict is taken
    // on whole pairs.
    if (pair_games == 2 && s->hooks && s->hooks->should_stop &&
        s->hooks->should_stop(s->hooks->ctx, t))
        atomic_store(&s->stop, true);
    pthread_mutex_unlock(&s->lock);
}

MatchStatus match_seat_start(const MatchConfig *cfg, int i, Player **p, char *msg, size_t msg_len)
{
    char why[512];
    player_free(*p);
    *p = NULL;
    PlayerStatus st = player_new(&cfg->players[i], p, why, sizeof why);
    if (st != PLAYER_OK) {
        snprintf(msg, msg_len, "%s: %s: %s", cfg->players[i].name, player_strerror(st), why);
        return MATCH_ERR_PLAYER;
    }
    return MATCH_OK;
}

MatchStatus match_play_game(const MatchConfig *cfg, Player *players[2], uint64_t pair, int g,
                            const atomic_bool *stop, GameRecord *rec, uint64_t *nodes, char *msg,
                            size_t msg_len)
{
    uint64_t before = player_nodes(players[0]) + player_nodes(players[1]);
    // The opening is a function of the pair id alone: both games of a pair share it, and the match
    // plays the same openings on any number of threads or ranks.
    int opening = openings_pick(cfg->openings, pair, cfg->random_order, cfg->seed, cfg->start);
    // Without repeat, colours alternate by round so both engines get each colour.
    int red = cfg->repeat ? g : (int)(pair % 2);
    // Everything but the moves array (GAME_MAX_PLIES entries): only its first ply_count are read.
    memset(rec, 0, offsetof(GameRecord, moves));
    snprintf(rec->names[0], PLAYER_NAME_MAX, "%s", cfg->players[0].name);
    snprintf(rec->names[1], PLAYER_NAME_MAX, "%s", cfg->players[1].name);
    if (game_play(players, red, &cfg->game, &cfg->openings->items[opening], stop, rec) != 0) {
        snprintf(msg, msg_len, "opening %d is invalid", opening);
        return MATCH_ERR_PLAYER;
    }
    if (nodes) // before a failed player is restarted (its count goes with it)
        *nodes = player_nodes(players[0]) + player_nodes(players[1]) - before;
    if (rec->term == TERM_ABORTED) {
        if (stop && atomic_load(stop))
            return MATCH_ABORTED;
        snprintf(msg, msg_len, "game aborted: %s", rec->detail);
        return MATCH_ERR_PLAYER;
    }
    int failed = game_failed_player(rec);
    if (failed < 0)
        return MATCH_OK;
    // An engine that just crashed can crash again in its restart's handshake (the drills'
    // kills land there now and then): one more start before the unit fails.
    MatchStatus st = match_seat_start(cfg, failed, &players[failed], msg, msg_len);
    if (st == MATCH_ERR_PLAYER)
        st = match_seat_start(cfg, failed, &players[failed], msg, msg_len);
    return st;
}

/// One match thread: its own two engine processes (never shared between threads), taking pair
/// ids from the shared counter until none is left or the match stops.
static void *match_thread(void *arg)
{
    MatchState *s = arg;
    const MatchConfig *cfg = s->cfg;
    Player *players[2] = {NULL, NULL};
    char msg[1024];
    GameRecord *rec = malloc(sizeof *rec);
    MatchStatus st = rec ? MATCH_OK : MATCH_ERR_NOMEM;
    for (int i = 0; i < 2 && st == MATCH_OK; i++)
        st = match_seat_start(cfg, i, &players[i], msg, sizeof msg);
    while (st == MATCH_OK && !atomic_load(&s->stop) && !atomic_load(s->interrupt)) {
        int pair = atomic_fetch_add(&s->next_pair, 1);
        if (pair >= s->pairs_total)
            break;
        double pair_points[2] = {0, 0};
        for (int g = 0; g < (cfg->repeat ? 2 : 1) && st == MATCH_OK; g++) {
            st = match_play_game(cfg, players, (uint64_t)pair, g, s->interrupt, rec, NULL, msg,
                                 sizeof msg);
            // A finished game counts even if restarting the failed engine then fails.
            if ((st == MATCH_OK || st == MATCH_ERR_PLAYER) && rec->outcome != OUTCOME_NONE)
                record(s, rec, pair + 1, pair_points, cfg->repeat ? g + 1 : 0);
        }
    }
    if (st != MATCH_OK && st != MATCH_ABORTED)
        fail(s, st, st == MATCH_ERR_NOMEM ? "out of memory" : msg);
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
    // No thread could be created: the match still plays, in the calling thread.
    if (started == 0)
        match_thread(s);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    // Every thread has been joined: the totals need no lock now.
    *totals = s->totals;
    MatchStatus st = s->error;
    if (st != MATCH_OK)
        snprintf(msg, msg_len, "%s", s->error_msg);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return st;
}
