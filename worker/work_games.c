// SPDX-License-Identifier: MIT
#include "work_games.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

// `params = all` must fit: every row of the weight table in one WORK message too.
_Static_assert((int)PARAM_NB <= (int)WIRE_MAX_SPSA_PARAMS,
               "the WORK message's SPSA limit below the weight table's size");

typedef struct {
    GamesWorker *gw;
    // The job's engines by index, started on first use and kept for every later unit of the
    // thread: a pair does not pay for starting its engines.
    Player *seats[JOB_PLAYERS_MAX];
    GameRecord rec;
    WireResult *res;
    MatchConfig scaled; // a pairing's match with this worker's clocks ([time] scale = bench)
                        // and engine logs
} GamesThread;

/// A finished game as the wire carries it; what the wire holds in a byte (depth) is capped,
/// not wrapped, and a time below zero reads as 0.
static void game_to_wire(const GameRecord *r, WireGame *w)
{
    w->red = (uint8_t)r->red;
    w->outcome = (uint8_t)r->outcome;
    w->term = (uint8_t)r->term;
    snprintf(w->detail, sizeof w->detail, "%.*s", WIRE_MAX_TEXT, r->detail);
    snprintf(w->start_fen, sizeof w->start_fen, "%.*s", WIRE_MAX_FEN, r->start_fen);
    w->book_plies = r->book_plies;
    w->ply_count = r->ply_count;
    for (int i = 0; i < r->ply_count; i++) {
        const GameMove *m = &r->moves[i];
        uint8_t flags =
            (uint8_t)((m->has_score ? WIRE_MOVE_HAS_SCORE : 0) | (m->mate ? WIRE_MOVE_MATE : 0) |
                      (i < r->book_plies ? WIRE_MOVE_BOOK : 0));
        w->moves[i] = (WireGameMove){m->move, flags, (uint8_t)(m->depth > 255 ? 255 : m->depth),
                                     m->score, (uint32_t)(m->time_ms > 0 ? m->time_ms : 0)};
    }
}

/// No engine starts here: a thread starts only the engines its units need (games_unit_run).
static void *games_thread_new(void *ctx, char *why, size_t why_len)
{
    GamesThread *t = calloc(1, sizeof *t);
    if (t && !(t->res = wire_result_new())) {
        free(t);
        t = NULL;
    }
    if (!t)
        snprintf(why, why_len, "out of memory");
    else
        t->gw = ctx;
    return t;
}

static void games_thread_free(void *arg)
{
    GamesThread *t = arg;
    for (int i = 0; i < JOB_PLAYERS_MAX; i++)
        player_free(t->seats[i]);
    wire_result_free(t->res);
    free(t);
}

static WorkerUnitStatus games_unit_run(void *arg, const WireWork *work, uint64_t id,
                                       const atomic_bool *abort, msgpack_sbuffer *out, char *why,
                                       size_t why_len)
{
    GamesThread *t = arg;
    const GamePlan *plan = t->gw->plan;
    // The coordinator never hands out such a unit: the ranks would disagree on the job.
    if (id >= plan->pairs_total) {
        snprintf(why, why_len, "pair %llu is beyond the job's %llu pairs", (unsigned long long)id,
                 (unsigned long long)plan->pairs_total);
        return WORKER_UNIT_FAILED;
    }
    const Pairing *pg = &plan->pairings[plan_pairing_of(plan, id)];
    uint64_t round = plan_round_of(plan, id);
    const MatchConfig *m = &pg->m;
    bool scale = t->gw->scale > 0 && t->gw->scale != 1.0;
    EngineLog *logs[2] = {t->gw->logs[pg->a], t->gw->logs[pg->b]};
    // A copy with this rank's clocks and logs: the plan is shared by every thread and stays as
    // built.
    if (scale || logs[0] || logs[1]) {
        t->scaled = pg->m;
        for (int i = 0; i < 2 && scale; i++)
            t->scaled.game.tc[i] = job_scale_time_control(&pg->m.game.tc[i], t->gw->scale);
        for (int i = 0; i < 2; i++)
            t->scaled.players[i].log = logs[i];
        m = &t->scaled;
    }
    Player *two[2] = {t->seats[pg->a], t->seats[pg->b]};
    MatchStatus st = MATCH_OK;
    for (int i = 0; i < 2 && st == MATCH_OK; i++) {
        if (!two[i] && logs[i] && !englog_open(logs[i], why, why_len))
            st = MATCH_ERR_IO;
        if (!two[i] && st == MATCH_OK)
            st = match_seat_start(m, i, &two[i], why, why_len);
    }
    // SPSA: plus and minus are the same engine with the step's two weight sets.
    const WireSpsaStep *step = &work->spsa;
    for (int i = 0; step->count > 0 && i < 2 && st == MATCH_OK; i++)
        if (player_set_weights(two[i], step->param, i == 0 ? step->plus : step->minus, step->count,
                               why, why_len) != PLAYER_OK)
            st = MATCH_ERR_PLAYER;
    WireResult *res = t->res;
    WirePair *pair = &res->units[0];
    pair->pair_id = id;
    // Picked from the unit id as games_check picks it on rank 0: the two must agree.
    pair->opening = (uint32_t)openings_pick(m->openings, round, m->random_order, m->seed, m->start);
    pair->game_count = m->repeat ? 2 : 1;
    uint64_t nodes = 0;
    for (int g = 0; g < pair->game_count && st == MATCH_OK; g++) {
        uint64_t game_nodes = 0;
        st = match_play_game(m, two, round, g, abort, &t->rec, &game_nodes, why, why_len);
        nodes += game_nodes;
        if (st == MATCH_OK)
            game_to_wire(&t->rec, &pair->games[g]);
    }
    // Kept even after a failure: a started engine is freed with the thread.
    t->seats[pg->a] = two[0];
    t->seats[pg->b] = two[1];
    if (st == MATCH_ABORTED)
        return WORKER_UNIT_ABORTED;
    if (st != MATCH_OK)
        return WORKER_UNIT_FAILED;
    res->job_id = work->job_id;
    res->rank = t->gw->rank;
    res->unit_count = 1;
    // Running totals since HELLO (wire.h), so any one message carries the rank's whole count.
    res->games_played =
        atomic_fetch_add(&t->gw->games, (uint64_t)pair->game_count) + (uint64_t)pair->game_count;
    res->nodes = atomic_fetch_add(&t->gw->nodes, nodes) + nodes; // a running total, as games
    WireStatus ws = wire_pack_result(res, out);
    if (ws != WIRE_OK) {
        snprintf(why, why_len, "cannot pack pair %llu: %s", (unsigned long long)id,
                 wire_strerror(ws));
        return WORKER_UNIT_FAILED;
    }
    return WORKER_UNIT_OK;
}

static uint64_t games_done(void *ctx) { return atomic_load(&((GamesWorker *)ctx)->games); }

void games_worker_kind(GamesWorker *gw, WorkerKind *out)
{
    *out = (WorkerKind){.ctx = gw,
                        .thread_new = games_thread_new,
                        .thread_free = games_thread_free,
                        .unit_run = games_unit_run,
                        .done_count = games_done};
}

static void *games_plan_new(const JobConfig *job, FILE *warn, char *why, size_t why_len)
{
    GamePlan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    if (!plan_build(job, warn, plan, why, why_len)) {
        free(plan);
        return NULL;
    }
    return plan;
}

static void games_plan_free(void *plan)
{
    if (plan)
        plan_free(plan);
    free(plan);
}

static void games_kind_free(void *k)
{
    GamesWorker *gw = k;
    for (int i = 0; gw && i < JOB_PLAYERS_MAX; i++)
        englog_free(gw->logs[i]);
    free(gw);
}

/// [output] engine_log: a log per external engine, in dir as engine.rRANK.NAME.log (nothing
/// is opened yet: rank 0 may not have made the directory). False when out of memory.
static bool games_logs_new(GamesWorker *gw, const JobConfig *job, uint32_t rank)
{
    char base[JOB_TEXT_MAX + 16], path[ENGLOG_PATH_MAX];
    snprintf(base, sizeof base, "%s/engine.log", job->output.dir);
    for (int i = 0; i < job->player_count; i++) {
        const PlayerConfig *pc = &job->players[i].cfg;
        if (pc->proto == PROTO_BUILTIN) // in-process: no protocol to log
            continue;
        if (!englog_file_name(path, sizeof path, base, pc->name, (int)rank))
            continue; // never: dir is below JOB_TEXT_MAX bytes and a name below 64
        if (!(gw->logs[i] = englog_new(path, pc->name, job->output.engine_log_size)))
            return false;
    }
    return true;
}

/// [time] scale = bench: this rank's clocks, by the same factor the coordinator reports.
static void *games_kind_new(const WorkerSetup *s, WorkerKind *out)
{
    GamesWorker *gw = calloc(1, sizeof *gw);
    if (!gw)
        return NULL;
    const JobConfig *job = s->job;
    if (job->output.engine_log && !games_logs_new(gw, job, s->rank)) {
        games_kind_free(gw);
        return NULL;
    }
    gw->plan = s->plan;
    gw->rank = s->rank;
    gw->scale = job_time_scale(job->scale.bench ? job->scale.reference_nps : 0, s->bench_nps);
    games_worker_kind(gw, out);
    return gw;
}

const WorkerKindDef work_games_def = {.plan_new = games_plan_new,
                                      .plan_free = games_plan_free,
                                      .kind_new = games_kind_new,
                                      .kind_free = games_kind_free};
