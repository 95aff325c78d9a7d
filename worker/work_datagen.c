// SPDX-License-Identifier: MIT
#include "work_datagen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game.h"
#include "movegen.h"
#include "posdata.h"
#include "rng.h"
#include "timeman.h"

// The wire carries posdata's records byte for byte, and rank 0 writes them to the file as
// they came (coordinator/datagen.c): the two sizes are one.
_Static_assert((int)WIRE_DATAGEN_RECORD == (int)POSDATA_RECORD, "one training record");

typedef struct {
    DatagenWorker *dw;
    Player *engine; // plays both sides
    GameConfig game;
    GameRecord rec;
    Board *board;
    WireDatagenResult *res;
} DatagenThread;

static void datagen_thread_free(void *arg)
{
    DatagenThread *t = arg;
    player_free(t->engine);
    free(t->board);
    wire_datagen_result_free(t->res);
    free(t);
}

/// One engine per thread, started once and playing both sides of every game of its units;
/// an engine that cannot start fails the worker (worker.h).
static void *datagen_thread_new(void *ctx, char *why, size_t why_len)
{
    DatagenWorker *dw = ctx;
    DatagenThread *t = calloc(1, sizeof *t);
    if (!t || !(t->res = wire_datagen_result_new()) || !(t->board = malloc(sizeof *t->board))) {
        snprintf(why, why_len, "out of memory");
        if (t)
            datagen_thread_free(t);
        return NULL;
    }
    t->dw = dw;
    job_game_config(dw->job, 0, 0, &t->game);
    if (player_new(&dw->job->players[0].cfg, &t->engine, why, why_len) != PLAYER_OK) {
        datagen_thread_free(t);
        return NULL;
    }
    return t;
}

/// splitmix64 of the job's seed and the game's number: every rank plays the same game.
static uint64_t game_seed(uint64_t seed, uint64_t game)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + game + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// The game's opening: the job's opening for this game, then random legal plies that do not
/// end the game (fewer when the position has no move or the line is full).
static void datagen_opening(const DatagenWorker *dw, Board *b, uint64_t game, Opening *out)
{
    const JobConfig *job = dw->job;
    int i = openings_pick(dw->openings, game, job->openings_random, job->seed, job->openings_start);
    *out = dw->openings->items[i];
    // Bad opening lines were skipped when the plan loaded them (openings_load).
    board_set_fen(b, out->fen, NULL, 0);
    for (int k = 0; k < out->move_count; k++)
        board_make_move(b, out->moves[k]);
    Rng r;
    // Seeded per game, not per thread: the plies depend on the game's number alone.
    rng_seed(&r, game_seed(job->datagen.seed, game));
    MoveList list;
    for (int p = 0; p < job->datagen.random_plies && out->move_count < OPENING_MAX_MOVES; p++) {
        if (movegen_legal(b, &list) == 0)
            break;
        Move m = list.moves[rng_below(&r, (uint32_t)list.count)];
        board_make_move(b, m);
        if (rules_game_end(b, &job->rules).outcome != OUTCOME_NONE || movegen_count_legal(b) == 0) {
            board_unmake_move(b); // the game must still be on
            break;
        }
        out->moves[out->move_count++] = m;
    }
}

bool datagen_early_keeps(uint64_t seed, uint64_t game, int ply, int plies)
{
    if (ply >= plies)
        return true;
    // Its own stream: the random plies' seed is game_seed(seed, game) itself.
    uint64_t h = game_seed(game_seed(seed ^ 0x5ca1ab1eull, game), (uint64_t)ply);
    return h % (uint64_t)(plies + 1) <= (uint64_t)ply;
}

WireDatagenFilter datagen_filter(const JobConfig *job, const Board *b, const GameMove *m, int ply,
                                 int book_plies, uint64_t game, double red_result)
{
    if (ply < book_plies || ply < job->datagen.min_ply)
        return WIRE_DG_OPENING;
    if (!m->has_score || m->mate)
        return WIRE_DG_UNSCORED;
    if (job->datagen.skip_in_check && board_in_check(b))
        return WIRE_DG_IN_CHECK;
    if (job->datagen.skip_capture && board_piece(b, move_to(m->move)) != NO_PIECE)
        return WIRE_DG_CAPTURE;
    if (!datagen_early_keeps(job->datagen.seed, game, ply, job->datagen.skip_early_plies))
        return WIRE_DG_EARLY;
    int w = job->datagen.skip_wdl;
    double stm = b->side == RED ? red_result : 1 - red_result;
    if (w > 0 && ((m->score >= w && stm == 0) || (m->score <= -w && stm == 1)))
        return WIRE_DG_WDL;
    return WIRE_DG_SEEN;
}

/// Plays game number `game` and appends its records to res.
static WorkerUnitStatus datagen_game(DatagenThread *t, uint64_t game, const atomic_bool *abort,
                                     uint64_t *nodes, char *why, size_t why_len)
{
    const JobConfig *job = t->dw->job;
    Opening o;
    datagen_opening(t->dw, t->board, game, &o);
    Player *two[2] = {t->engine, t->engine};
    uint64_t before = player_nodes(t->engine);
    if (game_play(two, 0, &t->game, &o, abort, &t->rec) != 0) {
        snprintf(why, why_len, "game %llu: its opening is not valid", (unsigned long long)game);
        return WORKER_UNIT_FAILED;
    }
    if (t->rec.outcome == OUTCOME_NONE && abort && atomic_load(abort))
        return WORKER_UNIT_ABORTED;
    if (t->rec.outcome == OUTCOME_NONE) { // the engine refused its settings
        snprintf(why, why_len, "game %llu: %s", (unsigned long long)game, t->rec.detail);
        return WORKER_UNIT_FAILED;
    }
    *nodes += player_nodes(t->engine) - before;
    double red = t->rec.outcome == OUTCOME_RED_WINS     ? 1.0
                 : t->rec.outcome == OUTCOME_BLACK_WINS ? 0.0
                                                        : 0.5;
    Board *b = t->board;
    board_set_fen(b, t->rec.start_fen, NULL, 0);
    // The records come from replaying the finished game: a position's result is the game's,
    // known only at its end.
    WireDatagenResult *res = t->res;
    for (int i = 0; i < t->rec.ply_count; i++) {
        const GameMove *m = &t->rec.moves[i];
        WireDatagenFilter f = datagen_filter(job, b, m, i, t->rec.book_plies, game, red);
        // Past what one result message holds, later positions are dropped, not the unit.
        if (f == WIRE_DG_SEEN && res->count >= WIRE_MAX_DATAGEN_RECORDS)
            f = WIRE_DG_OVERFLOW;
        res->filtered[WIRE_DG_SEEN]++;
        if (f != WIRE_DG_SEEN)
            res->filtered[f]++;
        else
            posdata_encode(b, m->score, m->move, i, m->depth, (uint32_t)game, red,
                           res->records + (size_t)res->count++ * POSDATA_RECORD);
        board_make_move(b, m->move);
    }
    return WORKER_UNIT_OK;
}

static WorkerUnitStatus datagen_unit_run(void *arg, const WireWork *work, uint64_t unit,
                                         const atomic_bool *abort, msgpack_sbuffer *out, char *why,
                                         size_t why_len)
{
    DatagenThread *t = arg;
    DatagenWorker *dw = t->dw;
    int64_t t0 = timeman_now_ms();
    uint64_t nodes = 0;
    WireDatagenResult *res = t->res;
    int games = dw->job->datagen.unit;
    res->count = 0;
    memset(res->filtered, 0, sizeof res->filtered);
    // Game ids unit * games + g: the ids rank 0's check expects in the unit's records.
    for (int g = 0; g < games; g++) {
        WorkerUnitStatus st =
            datagen_game(t, unit * (uint64_t)games + (uint64_t)g, abort, &nodes, why, why_len);
        if (st != WORKER_UNIT_OK)
            return st;
    }
    int64_t ms = timeman_now_ms() - t0;
    res->job_id = work->job_id;
    res->rank = dw->rank;
    res->unit_id = unit;
    res->games = (uint32_t)games;
    // Running totals since HELLO (wire.h), shared by the rank's threads.
    pthread_mutex_lock(&dw->lock);
    dw->games += (uint64_t)games;
    dw->records += (uint64_t)res->count;
    dw->nodes += nodes;
    dw->busy_ms += (uint64_t)(ms > 0 ? ms : 0);
    res->games_done = dw->games;
    res->nodes = dw->nodes;
    res->busy_ms = dw->busy_ms;
    pthread_mutex_unlock(&dw->lock);
    WireStatus ws = wire_pack_datagen(res, out);
    if (ws != WIRE_OK) {
        snprintf(why, why_len, "cannot pack unit %llu: %s", (unsigned long long)unit,
                 wire_strerror(ws));
        return WORKER_UNIT_FAILED;
    }
    return WORKER_UNIT_OK;
}

/// For BYE: the games this rank played.
static uint64_t datagen_done(void *ctx)
{
    DatagenWorker *dw = ctx;
    pthread_mutex_lock(&dw->lock);
    uint64_t n = dw->games;
    pthread_mutex_unlock(&dw->lock);
    return n;
}

void datagen_worker_kind(DatagenWorker *dw, const JobConfig *job, const Openings *openings,
                         uint32_t rank, WorkerKind *out)
{
    dw->job = job;
    dw->openings = openings;
    dw->rank = rank;
    dw->games = dw->records = dw->nodes = dw->busy_ms = 0;
    pthread_mutex_init(&dw->lock, NULL);
    *out = (WorkerKind){.ctx = dw,
                        .thread_new = datagen_thread_new,
                        .thread_free = datagen_thread_free,
                        .unit_run = datagen_unit_run,
                        .done_count = datagen_done};
}

void datagen_worker_destroy(DatagenWorker *dw) { pthread_mutex_destroy(&dw->lock); }

/// A datagen job's plan: its openings (builtin:balanced unless [openings] file says).
static void *datagen_plan_new(const JobConfig *job, FILE *warn, char *why, size_t why_len)
{
    Openings *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    const char *file = job->openings_file[0] ? job->openings_file : "builtin:balanced";
    if (openings_load(o, file, warn, why, why_len) != OPENINGS_OK) {
        openings_free(o);
        free(o);
        return NULL;
    }
    return o;
}

static void datagen_plan_free(void *o)
{
    if (o)
        openings_free(o);
    free(o);
}

static void *datagen_kind_new(const WorkerSetup *s, WorkerKind *out)
{
    DatagenWorker *dw = calloc(1, sizeof *dw);
    if (dw)
        datagen_worker_kind(dw, s->job, s->plan, s->rank, out);
    return dw;
}

static void datagen_kind_free(void *dw)
{
    if (dw)
        datagen_worker_destroy(dw);
    free(dw);
}

const WorkerKindDef work_datagen_def = {.plan_new = datagen_plan_new,
                                        .plan_free = datagen_plan_free,
                                        .kind_new = datagen_kind_new,
                                        .kind_free = datagen_kind_free};
