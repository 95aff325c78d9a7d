// SPDX-License-Identifier: MIT
// xqforge run JOBFILE: a job spread over MPI ranks. Rank 0 coordinates (hands out game
// pairs in small batches, journals every result before it counts, keeps the statistics and
// the PGN); every other rank is a worker playing pairs in threads. With one rank (no
// mpirun) rank 0 also runs a worker thread, so the same job runs on a laptop.
#define _GNU_SOURCE // RUSAGE_THREAD
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "job.h"
#include "journal.h"
#include "link.h"
#include "match.h"
#include "pgn.h"
#include "run_common.h"
#include "rating.h"
#include "report.h"
#include "schedule.h"
#include "search.h"
#include "spsa_tuner.h"
#include "texel.h"
#include "summary.h"
#include "timeman.h"
#include "upload.h"
#include "wire.h"

enum { QUEUE_MAX = 2 * WIRE_MAX_PAIRS_PER_WORK, POLL_MS = 20, SUMMARY_EVERY = 100 };

enum { PAIRINGS_MAX = JOB_PLAYERS_MAX * (JOB_PLAYERS_MAX - 1) / 2 };

/// One pairing of the job's engines (a gauntlet or round robin has several): its match
/// configuration with the two engines as players 0 and 1.
typedef struct {
    int a, b; // engine indices in the job
    MatchConfig m;
} Pairing;

typedef struct {
    Link *link;
    JobConfig job;
    MatchConfig m; // the first pairing's: shared settings (openings, rounds, repeat)
    Pairing pairings[PAIRINGS_MAX];
    int pairing_count;
    Openings openings;
    SprtParams sprt;
    uint64_t job_id; // fingerprint of the job text and overrides
    int concurrency;
    uint64_t bench_signature, bench_nps;
    SpsaConfig *spsa;     // kind = spsa: the tuned parameters (NULL otherwise)
    Weights spsa_weights; // kind = spsa: the engine's configured weights (the base)
} Run;

static atomic_bool interrupted;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
}

// ---------------------------------------------------------------------------------------
// Records on the wire

static void game_to_wire(const GameRecord *r, WireGame *w)
{
    w->red = (uint8_t)r->red;
    w->outcome = (uint8_t)r->outcome;
    w->term = (uint8_t)r->term;
    snprintf(w->detail, sizeof w->detail, "%.*s", WIRE_MAX_TEXT, r->detail);
    snprintf(w->start_fen, sizeof w->start_fen, "%s", r->start_fen);
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

static void wire_to_game(const WireGame *w, const MatchConfig *m, GameRecord *r)
{
    memset(r, 0, offsetof(GameRecord, moves));
    snprintf(r->names[0], PLAYER_NAME_MAX, "%s", m->players[0].name);
    snprintf(r->names[1], PLAYER_NAME_MAX, "%s", m->players[1].name);
    r->red = w->red;
    r->outcome = (Outcome)w->outcome;
    r->term = (Termination)w->term;
    snprintf(r->detail, sizeof r->detail, "%s", w->detail);
    snprintf(r->start_fen, sizeof r->start_fen, "%s", w->start_fen);
    r->book_plies = w->book_plies;
    r->ply_count = w->ply_count;
    for (int i = 0; i < w->ply_count; i++) {
        const WireGameMove *wm = &w->moves[i];
        r->moves[i] = (GameMove){wm->move,
                                 wm->score,
                                 (wm->flags & WIRE_MOVE_HAS_SCORE) != 0,
                                 (wm->flags & WIRE_MOVE_MATE) != 0,
                                 wm->depth,
                                 wm->time_ms};
    }
}

// ---------------------------------------------------------------------------------------
// Worker

/// An SPSA step shared by the queued pairs of one WORK; freed by the last of them.
typedef struct {
    WireSpsaStep s;
    int refs;
} SharedStep;

typedef struct {
    Run *run;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t queue[QUEUE_MAX];
    SharedStep *qstep[QUEUE_MAX]; // the step of each queued pair, or NULL
    int qlen;
    bool requested, no_more_work, failed;
    atomic_bool abort; // the coordinator said stop now: abandon games in progress
    int busy;
    WireResult *out; // finished pairs not yet sent
    uint64_t games_played;
    char error[512];
} Worker;

/// Drops the queued pairs (the coordinator gives them to others), freeing their steps.
static void queue_clear(Worker *w)
{
    for (int i = 0; i < w->qlen; i++)
        if (w->qstep[i] && --w->qstep[i]->refs == 0)
            free(w->qstep[i]);
    w->qlen = 0;
}

static void *game_thread(void *arg)
{
    Worker *w = arg;
    const Run *run = w->run;
    Player *seats[JOB_PLAYERS_MAX] = {NULL};
    GameRecord *rec = malloc(sizeof *rec);
    WirePair *pair = malloc(sizeof *pair);
    char msg[512] = "out of memory";
    MatchStatus st = rec && pair ? MATCH_OK : MATCH_ERR_NOMEM;
    while (st == MATCH_OK) {
        pthread_mutex_lock(&w->lock);
        while (w->qlen == 0 && !w->no_more_work && !atomic_load(&w->abort))
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->qlen == 0 || atomic_load(&w->abort)) {
            pthread_mutex_unlock(&w->lock);
            break;
        }
        uint64_t id = w->queue[0];
        SharedStep *step = w->qstep[0];
        memmove(w->queue, w->queue + 1, sizeof(uint64_t) * (size_t)(w->qlen - 1));
        memmove(w->qstep, w->qstep + 1, sizeof(SharedStep *) * (size_t)--w->qlen);
        w->busy++;
        pthread_mutex_unlock(&w->lock);

        // Pair id = round * pairings + pairing: every pairing plays each round's opening.
        const Pairing *pg = &run->pairings[id % (uint64_t)run->pairing_count];
        uint64_t round = id / (uint64_t)run->pairing_count;
        const MatchConfig *m = &pg->m;
        Player *two[2] = {seats[pg->a], seats[pg->b]};
        for (int i = 0; i < 2 && st == MATCH_OK; i++)
            if (!two[i])
                st = match_seat_start(m, i, &two[i], msg, sizeof msg);
        // SPSA: plus and minus are the same engine with the step's two weight sets.
        for (int i = 0; step && i < 2 && st == MATCH_OK; i++)
            if (player_set_weights(two[i], step->s.param, i == 0 ? step->s.plus : step->s.minus,
                                   step->s.count, msg, sizeof msg) != PLAYER_OK)
                st = MATCH_ERR_PLAYER;
        if (step) {
            pthread_mutex_lock(&w->lock);
            if (--step->refs == 0)
                free(step);
            pthread_mutex_unlock(&w->lock);
        }
        pair->pair_id = id;
        pair->opening =
            (uint32_t)openings_pick(m->openings, round, m->random_order, m->seed, m->start);
        pair->game_count = m->repeat ? 2 : 1;
        for (int g = 0; g < pair->game_count && st == MATCH_OK; g++) {
            st = match_play_game(m, two, round, g, &w->abort, rec, msg, sizeof msg);
            if (st == MATCH_OK)
                game_to_wire(rec, &pair->games[g]);
        }
        seats[pg->a] = two[0];
        seats[pg->b] = two[1];
        pthread_mutex_lock(&w->lock);
        w->busy--;
        if (st == MATCH_OK) {
            // The communication thread sends finished pairs every few milliseconds.
            while (w->out->pair_count == WIRE_MAX_PAIRS_PER_WORK && !atomic_load(&w->abort))
                pthread_cond_wait(&w->cond, &w->lock);
            if (w->out->pair_count < WIRE_MAX_PAIRS_PER_WORK) {
                w->out->pairs[w->out->pair_count++] = *pair;
                w->games_played += (uint64_t)pair->game_count;
            }
        }
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    if (st != MATCH_OK && st != MATCH_ABORTED) {
        pthread_mutex_lock(&w->lock);
        w->failed = true;
        snprintf(w->error, sizeof w->error, "%s", msg);
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    free(pair);
    free(rec);
    for (int i = 0; i < JOB_PLAYERS_MAX; i++)
        player_free(seats[i]);
    return NULL;
}

/// A worker rank's life: HELLO, then REQUEST/WORK/RESULT until told to stop, then BYE.
static int worker_main(Run *run)
{
    Link *l = run->link;
    Worker *w = calloc(1, sizeof *w);
    WireResult *sending = wire_result_new();
    if (!w || !sending || !(w->out = wire_result_new())) {
        fprintf(stderr, "rank %d: out of memory\n", link_rank(l));
        return 1;
    }
    w->run = run;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    WireHello hello = {(uint32_t)link_rank(l),
                       "",
                       1,
                       (uint32_t)run->concurrency,
                       run->bench_signature,
                       run->bench_nps,
                       XQFORGE_VERSION};
    snprintf(hello.hostname, sizeof hello.hostname, "%.*s", WIRE_MAX_TEXT, link_host(l));
    int rc = 0;
    if (!run_send(l, 0, LINK_TAG_CONTROL, wire_pack_hello(&hello, &buf), &buf)) {
        fprintf(stderr, "rank %d: cannot reach the coordinator\n", link_rank(l));
        return 1;
    }
    pthread_t tid[256];
    int threads = 0;
    for (; threads < run->concurrency && threads < 256; threads++)
        if (pthread_create(&tid[threads], NULL, game_thread, w) != 0)
            break;
    for (;;) {
        WireRequest req = {(uint32_t)link_rank(l), 0};
        pthread_mutex_lock(&w->lock);
        int room = 2 * threads - w->qlen - w->busy;
        if (!w->requested && !w->no_more_work && room > 0) {
            req.pairs = (uint32_t)(room < WIRE_MAX_PAIRS_PER_WORK ? room : WIRE_MAX_PAIRS_PER_WORK);
            w->requested = true;
        }
        bool have_results = w->out->pair_count > 0;
        // Game threads add to games_played under the lock: read it here, not at the send.
        uint64_t games_played = w->games_played;
        if (have_results) {
            WireResult *t = sending;
            sending = w->out;
            w->out = t;
            w->out->pair_count = 0;
            pthread_cond_broadcast(&w->cond);
        }
        bool finished = w->no_more_work && w->busy == 0 && w->qlen == 0 && !have_results;
        bool failed = w->failed;
        char error[sizeof w->error];
        if (failed) // another thread may fail too and rewrite it once the lock is released
            snprintf(error, sizeof error, "%s", w->error);
        pthread_mutex_unlock(&w->lock);
        if (have_results) {
            sending->job_id = run->job_id;
            sending->rank = (uint32_t)link_rank(l);
            sending->games_played = games_played;
            if (!run_send(l, 0, LINK_TAG_RESULT, wire_pack_result(sending, &buf), &buf)) {
                fprintf(stderr, "rank %d: could not send results\n", link_rank(l));
                rc = 1;
                break;
            }
            sending->pair_count = 0;
        }
        if (req.pairs && !run_send(l, 0, LINK_TAG_CONTROL, wire_pack_request(&req, &buf), &buf)) {
            rc = 1;
            break;
        }
        if (failed) {
            fprintf(stderr, "rank %d: %s\n", link_rank(l), error);
            rc = 1;
            break;
        }
        if (finished)
            break;
        WireMessage msg;
        int src;
        if (!run_receive(l, LINK_TAG_WORK, LINK_TAG_STOP, &src, &msg)) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        pthread_mutex_lock(&w->lock);
        if (msg.kind == WIRE_WORK && atomic_load(&w->abort)) {
            // MPI orders messages per tag only: a WORK sent before a STOP can be taken after
            // it. The game threads have gone; queuing it would wait for them forever.
        } else if (msg.kind == WIRE_WORK) {
            SharedStep *step = NULL;
            if (msg.work.spsa.count > 0 && !(step = malloc(sizeof *step))) {
                w->failed = true;
                snprintf(w->error, sizeof w->error, "out of memory for an SPSA step");
            } else if (step) {
                *step = (SharedStep){msg.work.spsa, 0};
            }
            for (int i = 0; i < msg.work.pair_count && w->qlen < QUEUE_MAX && !w->failed; i++) {
                w->qstep[w->qlen] = step;
                if (step)
                    step->refs++;
                w->queue[w->qlen++] = msg.work.pair_ids[i];
            }
            if (step && step->refs == 0)
                free(step);
            w->requested = false;
        } else if (msg.kind == WIRE_STOP) {
            w->no_more_work = true;
            if (msg.stop.code != WIRE_STOP_DONE) {
                atomic_store(&w->abort, true);
                queue_clear(w);
            }
        } else if (msg.kind == WIRE_REFUSE) {
            // Not a failure of the job (it goes on without this rank): exit 0, or mpirun would
            // end every rank.
            fprintf(stderr, "rank %d refused: %s\n", link_rank(l), msg.refuse.reason);
            w->no_more_work = true;
            atomic_store(&w->abort, true);
            queue_clear(w);
        }
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        wire_message_destroy(&msg);
    }
    pthread_mutex_lock(&w->lock);
    w->no_more_work = true;
    atomic_store(&w->abort, true);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    queue_clear(w);
    WireBye bye = {(uint32_t)link_rank(l), w->games_played};
    run_send(l, 0, LINK_TAG_CONTROL, wire_pack_bye(&bye, &buf), &buf);
    msgpack_sbuffer_destroy(&buf);
    wire_result_free(w->out);
    wire_result_free(sending);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
    return rc;
}

static void *local_worker(void *arg)
{
    worker_main(arg);
    return NULL;
}

// ---------------------------------------------------------------------------------------
// Coordinator

/// What the report needs beyond the totals: per-worker counts, the history's next sample,
/// the delivery settings and thread.
typedef struct {
    char host[WIRE_MAX_TEXT + 1];
    uint64_t games, pairs; // received from this rank
} ReportWorker;

typedef struct {
    Report *report;        // NULL: no report (out of memory)
    ReportWorker *workers; // per rank
    char dir[JOB_TEXT_MAX];
    char spool[UPLOAD_TEXT_MAX];
    UploadTarget target; // url_count 0: no upload
    Uploader *uploader;
    uint64_t version;
    int64_t last_ms;
    int next_sample; // games at which the history takes its next point
    time_t started_unix;
} RunReport;

typedef struct {
    Run *run;
    Journal *journal;
    FILE *pgn;
    Schedule sched;
    int32_t *owner;  // per pair: the rank it was handed to
    uint8_t *member; // per rank: admitted after its HELLO
    int pairs_total, pairs_done;
    MatchTotals tot[PAIRINGS_MAX]; // per pairing; tot[0] is the match of a two-engine job
    int games_all;
    RatingTable rating;
    int workers_live, workers_seen;
    bool stopping;
    bool failed; // the journal could not be written: the run ends with an error
    int64_t start_ms, last_progress_ms;
    double cpu_at_start; // the coordinator thread's CPU seconds before coordinating
    int games_at_start;  // replayed from the journal
    WireResult *one;     // scratch: a single-pair result for the journal
    msgpack_sbuffer buf;
    RunReport rep;
    SpsaTuner *spsa; // kind = spsa
    FILE *spsa_csv;
    TexelWriter *positions; // [output] positions: quiet positions of every game counted
    Board *pos_board;
    uint64_t positions_seen;
} Coord;

/// Journal keys: pair ids for results; SPSA steps under this bit with their step id.
#define KEY_SPSA_STEP (1ull << 63)

/// A Texel dataset from the games as they are counted (on replay too, so the file is
/// always the journal's games: a resumed run writes it complete).
static void add_positions(Coord *c, const WirePair *p)
{
    Move moves[WIRE_MAX_PLIES];
    for (int g = 0; g < p->game_count; g++) {
        const WireGame *wg = &p->games[g];
        if (wg->outcome == WIRE_OUTCOME_NONE)
            continue;
        for (int m = 0; m < wg->ply_count; m++)
            moves[m] = wg->moves[m].move;
        double red = wg->outcome == WIRE_OUTCOME_RED_WINS ? 1
                     : wg->outcome == WIRE_OUTCOME_DRAW   ? 0.5
                                                          : 0;
        if (texel_writer_add_game(c->positions, c->pos_board, wg->start_fen, moves, wg->ply_count,
                                  wg->book_plies, red, 8, &c->positions_seen) == TEXEL_ERR_IO) {
            fprintf(stderr, "\nxqforge run: cannot write the positions file; no more positions\n");
            texel_writer_discard(c->positions);
            c->positions = NULL;
            return;
        }
    }
}

static void count_pair(Coord *c, const WirePair *p)
{
    int pi = (int)(p->pair_id % (uint64_t)c->run->pairing_count);
    const Pairing *pg = &c->run->pairings[pi];
    MatchTotals *t = &c->tot[pi];
    double points = 0;
    for (int g = 0; g < p->game_count; g++) {
        const WireGame *wg = &p->games[g];
        double pts = wg->outcome == WIRE_OUTCOME_DRAW                           ? 0.5
                     : (wg->outcome == WIRE_OUTCOME_RED_WINS) == (wg->red == 0) ? 1.0
                                                                                : 0.0;
        t->games++;
        t->wins += pts == 1.0;
        t->draws += pts == 0.5;
        t->losses += pts == 0.0;
        if (wg->term < TERM_NB)
            t->terms[wg->term]++;
        rating_add(&c->rating, pg->a, pg->b, pts);
        points += pts;
        c->games_all++;
    }
    if (p->game_count == 2)
        t->ptnml[(int)(points * 2 + 0.5)]++;
    if (c->positions)
        add_positions(c, p);
    // SPSA: plus (player 0) scored points of game_count; W - L = 2 * points - games.
    if (c->spsa)
        spsa_tuner_pair_done(c->spsa, p->pair_id, (int)lround(2 * points) - p->game_count);
    schedule_finish(&c->sched, p->pair_id);
    c->pairs_done++;
}

static int replay_record(void *ctx, uint64_t key, const void *payload, size_t len)
{
    Coord *c = ctx;
    WireMessage msg;
    char why[256];
    if (key & KEY_SPSA_STEP) {
        if (c->spsa && spsa_tuner_replay_step(c->spsa, payload, len, why, sizeof why))
            return 0;
        fprintf(stderr, "xqforge run: journal record %llu: %s\n", (unsigned long long)key,
                c->spsa ? why : "an SPSA step in a journal of another kind of job");
        return 1;
    }
    if (wire_unpack(payload, len, &msg, why, sizeof why) != WIRE_OK || msg.kind != WIRE_RESULT) {
        fprintf(stderr, "xqforge run: journal record %llu is not a result (%s)\n",
                (unsigned long long)key, why);
        return 1;
    }
    for (int i = 0; i < msg.result->pair_count; i++) {
        const WirePair *p = &msg.result->pairs[i];
        if (p->pair_id < (uint64_t)c->pairs_total && !schedule_is_done(&c->sched, p->pair_id))
            count_pair(c, p);
    }
    wire_message_destroy(&msg);
    return 0;
}

static bool sprt_decided(Coord *c)
{
    if (!c->run->job.sprt.enabled)
        return false;
    MatchResults r = summary_results(&c->tot[0], c->run->m.repeat);
    SprtResult res;
    if (sprt_evaluate(&r, &c->run->sprt, &res) != STATS_OK || res.decision == SPRT_CONTINUE)
        return false;
    printf("\nSPRT: %s (LLR %.2f, bounds %.2f %.2f)\n", sprt_decision_name(res.decision), res.llr,
           res.lower, res.upper);
    return true;
}

static void progress(Coord *c, bool force)
{
    int64_t now = timeman_now_ms();
    if (!force && now - c->last_progress_ms < 1000)
        return;
    c->last_progress_ms = now;
    double mins = (now - c->start_ms) / 60000.0;
    int played = c->games_all - c->games_at_start;
    double rate = mins > 0 ? played / mins : 0;
    int per_pair = c->run->m.repeat ? 2 : 1;
    int left = (c->pairs_total - c->pairs_done) * per_pair;
    char elo[160] = "";
    if (c->run->pairing_count == 1) {
        MatchResults r = summary_results(&c->tot[0], c->run->m.repeat);
        EloEstimate e = {0};
        stats_elo(&r, &e);
        SprtResult sr;
        int n = snprintf(elo, sizeof elo, ", Elo %.1f +/- %.1f", e.elo, e.elo_error);
        if (c->run->job.sprt.enabled && sprt_evaluate(&r, &c->run->sprt, &sr) == STATS_OK)
            snprintf(elo + n, sizeof elo - (size_t)n, ", LLR %.2f (%.2f, %.2f)", sr.llr, sr.lower,
                     sr.upper);
    }
    printf("%s%d/%d games, %.1f games/min, ETA %.0f min%s, %d workers%s",
           isatty(STDOUT_FILENO) ? "\r" : "", c->games_all, c->pairs_total * per_pair, rate,
           rate > 0 ? left / rate : 0.0, elo, c->workers_live,
           isatty(STDOUT_FILENO) ? "   " : "\n");
    fflush(stdout);
}

static void stop_workers(Coord *c, WireStopCode code, const char *why)
{
    WireStop stop = {(uint32_t)code, ""};
    snprintf(stop.text, sizeof stop.text, "%s", why);
    for (int r = 0; r < link_size(c->run->link); r++)
        run_send(c->run->link, r, LINK_TAG_STOP, wire_pack_stop(&stop, &c->buf), &c->buf);
}

/// Makes an SPSA step for the pairs of a WORK and journals it before the WORK is sent, so
/// that a resumed run applies the results of these pairs with this very step.
static bool spsa_attach(Coord *c, WireWork *work)
{
    const SpsaStep *st = spsa_tuner_step(c->spsa, work->pair_ids, work->pair_count);
    size_t len = 0;
    void *rec = st ? spsa_tuner_encode(st, work->pair_ids, work->pair_count, &len) : NULL;
    if (!rec || journal_append(c->journal, KEY_SPSA_STEP | st->id, rec, len) != JOURNAL_OK) {
        fprintf(stderr, "\nxqforge run: SPSA step: %s; stopping\n",
                rec ? journal_last_error(c->journal) : "out of memory");
        free(rec);
        for (int i = 0; i < work->pair_count; i++)
            schedule_release(&c->sched, work->pair_ids[i]);
        c->stopping = c->failed = true;
        stop_workers(c, WIRE_STOP_ERROR, "coordinator cannot journal an SPSA step");
        return false;
    }
    free(rec);
    const SpsaConfig *cfg = spsa_tuner_config(c->spsa);
    work->spsa.id = st->id;
    work->spsa.count = cfg->count;
    for (int i = 0; i < cfg->count; i++) {
        work->spsa.param[i] = (uint16_t)cfg->params[i].id;
        work->spsa.plus[i] = st->plus[i];
        work->spsa.minus[i] = st->minus[i];
    }
    return true;
}

static void on_request(Coord *c, int src, const WireRequest *req)
{
    WireWork work = {.job_id = c->run->job_id};
    if (!c->member[src]) {
        fprintf(stderr, "\nxqforge run: request from rank %d, which is not admitted; ignored\n",
                src);
        return;
    }
    if (!c->stopping)
        work.pair_count = schedule_take(
            &c->sched, work.pair_ids,
            (int)req->pairs < WIRE_MAX_PAIRS_PER_WORK ? (int)req->pairs : WIRE_MAX_PAIRS_PER_WORK);
    for (int i = 0; i < work.pair_count; i++)
        c->owner[work.pair_ids[i]] = src;
    if (work.pair_count > 0 && c->spsa && !spsa_attach(c, &work))
        return;
    if (work.pair_count > 0) {
        run_send(c->run->link, src, LINK_TAG_WORK, wire_pack_work(&work, &c->buf), &c->buf);
        return;
    }
    WireStop stop = {c->stopping ? WIRE_STOP_INTERRUPTED : WIRE_STOP_DONE, "no more work"};
    run_send(c->run->link, src, LINK_TAG_STOP, wire_pack_stop(&stop, &c->buf), &c->buf);
}

static void on_result(Coord *c, int src, const WireResult *res)
{
    for (int i = 0; i < res->pair_count; i++) {
        const WirePair *p = &res->pairs[i];
        if (p->pair_id >= (uint64_t)c->pairs_total || schedule_is_done(&c->sched, p->pair_id)) {
            fprintf(stderr,
                    "\nxqforge run: rank %d sent pair %llu again or out of range; ignored\n", src,
                    (unsigned long long)p->pair_id);
            continue;
        }
        // Journal first: a result counts only once it is durable.
        c->one->job_id = res->job_id;
        c->one->rank = res->rank;
        c->one->pair_count = 1;
        c->one->pairs[0] = *p;
        c->one->games_played = res->games_played;
        if (wire_pack_result(c->one, &c->buf) != WIRE_OK ||
            journal_append(c->journal, p->pair_id, c->buf.data, c->buf.size) != JOURNAL_OK) {
            fprintf(stderr, "\nxqforge run: journal: %s; stopping\n",
                    journal_last_error(c->journal));
            msgpack_sbuffer_clear(&c->buf);
            c->stopping = c->failed = true;
            stop_workers(c, WIRE_STOP_ERROR, "coordinator cannot write its journal");
            return;
        }
        msgpack_sbuffer_clear(&c->buf);
        int before = c->games_all;
        count_pair(c, p);
        // The summary block now and then (every SUMMARY_EVERY games), as fastchess does.
        if (before / SUMMARY_EVERY != c->games_all / SUMMARY_EVERY) {
            printf("\n");
            for (int k = 0; k < c->run->pairing_count; k++)
                summary_print(stdout, c->run->pairings[k].m.players[0].name,
                              c->run->pairings[k].m.players[1].name, &c->tot[k], c->run->m.repeat,
                              c->run->job.sprt.enabled ? &c->run->sprt : NULL,
                              (timeman_now_ms() - c->start_ms) / 60000.0);
        }
        if (c->pgn) {
            GameRecord *rec = malloc(sizeof *rec);
            for (int g = 0; rec && g < p->game_count; g++) {
                wire_to_game(&p->games[g],
                             &c->run->pairings[p->pair_id % (uint64_t)c->run->pairing_count].m,
                             rec);
                PgnTags tags = {c->run->job.name, "xqforge cluster", (int)p->pair_id + 1, NULL,
                                rules_set_name(c->run->m.game.rules.set)};
                char tc[64];
                game_format_tc(&c->run->m.game.tc[0], tc, sizeof tc);
                tags.time_control = tc;
                pgn_write(c->pgn, rec, &tags);
            }
            fflush(c->pgn);
            free(rec);
        }
    }
    if (!c->stopping && sprt_decided(c)) {
        c->stopping = true;
        stop_workers(c, WIRE_STOP_INTERRUPTED, "SPRT concluded");
    }
}

/// The joint rating of all engines (Bradley-Terry over every game), best first.
static void print_ratings(Coord *c)
{
    RatingResult rr;
    if (!rating_fit(&c->rating, &rr)) {
        printf("Joint rating: not every engine is linked to the others by games yet\n");
        return;
    }
    int order[RATING_MAX_PLAYERS], n = c->run->job.player_count;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && rr.elo[order[j]] > rr.elo[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    printf("Joint rating (Bradley-Terry over all games, Elo relative to the field):\n");
    printf("Rank Name                            Elo     +/-    Games   Points\n");
    for (int k = 0; k < n; k++) {
        int i = order[k];
        printf("%4d %-28s %7.1f %7.1f %8llu %8.1f\n", k + 1, c->run->job.players[i].cfg.name,
               rr.elo[i], rr.elo_error[i], (unsigned long long)rr.games[i], rr.points[i]);
    }
}

static json_t *finite_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/// The final result, machine-readable, written atomically (temp file + rename).
static void write_result(Coord *c, const char *dir, bool interrupted_run)
{
    const Run *run = c->run;
    if (!run->job.output.result[0])
        return;
    const MatchTotals *tt = &c->tot[0];
    MatchResults r = summary_results(tt, run->m.repeat);
    EloEstimate e = {0};
    stats_elo(&r, &e);
    json_t *o = json_object(), *terms = json_object(), *ptnml = json_array();
    for (int i = 1; i < TERM_NB; i++)
        if (tt->terms[i])
            json_object_set_new(terms, game_termination_name((Termination)i),
                                json_integer(tt->terms[i]));
    for (int i = 0; i < 5; i++)
        json_array_append_new(ptnml, json_integer(tt->ptnml[i]));
    json_object_set_new(o, "schema", json_integer(1));
    json_object_set_new(o, "job", json_string(run->job.name));
    json_object_set_new(o, "new", json_string(run->m.players[0].name));
    json_object_set_new(o, "base", json_string(run->m.players[1].name));
    json_object_set_new(o, "rules", json_string(rules_set_name(run->m.game.rules.set)));
    json_object_set_new(o, "pairs_total", json_integer(c->pairs_total));
    json_object_set_new(o, "pairs_done", json_integer(c->pairs_done));
    json_object_set_new(o, "games", json_integer(tt->games));
    json_object_set_new(o, "wins", json_integer(tt->wins));
    json_object_set_new(o, "draws", json_integer(tt->draws));
    json_object_set_new(o, "losses", json_integer(tt->losses));
    if (run->pairing_count > 1) {
        RatingResult rr;
        json_t *ratings = json_array();
        bool fitted = rating_fit(&c->rating, &rr);
        for (int i = 0; i < run->job.player_count; i++) {
            json_t *p = json_object();
            json_object_set_new(p, "name", json_string(run->job.players[i].cfg.name));
            json_object_set_new(p, "elo", fitted ? finite_or_null(rr.elo[i]) : json_null());
            json_object_set_new(p, "elo_error",
                                fitted ? finite_or_null(rr.elo_error[i]) : json_null());
            json_object_set_new(p, "games", json_integer((json_int_t)rr.games[i]));
            json_object_set_new(p, "points", json_real(rr.points[i]));
            json_array_append_new(ratings, p);
        }
        json_object_set_new(o, "ratings", ratings);
    }
    json_object_set_new(o, "ptnml", run->m.repeat ? ptnml : (json_decref(ptnml), json_null()));
    json_object_set_new(o, "terminations", terms);
    json_object_set_new(o, "elo", finite_or_null(e.elo));
    json_object_set_new(o, "elo_error", finite_or_null(e.elo_error));
    json_object_set_new(o, "nelo", finite_or_null(e.nelo));
    json_object_set_new(o, "los", finite_or_null(e.los));
    if (run->job.sprt.enabled) {
        SprtResult s;
        if (sprt_evaluate(&r, &run->sprt, &s) == STATS_OK) {
            json_object_set_new(o, "llr", finite_or_null(s.llr));
            json_object_set_new(o, "lower", json_real(s.lower));
            json_object_set_new(o, "upper", json_real(s.upper));
            json_object_set_new(o, "decision", json_string(sprt_decision_name(s.decision)));
        }
    }
    json_object_set_new(o, "interrupted", json_boolean(interrupted_run));
    json_object_set_new(o, "version", json_string(XQFORGE_VERSION));
    char path[JOB_TEXT_MAX * 2 + 8], tmp[JOB_TEXT_MAX * 2 + 16];
    snprintf(path, sizeof path, "%s/%s", dir, run->job.output.result);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (json_dump_file(o, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || rename(tmp, path) != 0)
        fprintf(stderr, "xqforge run: cannot write %s\n", path);
    json_decref(o);
}

static double thread_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// ---------------------------------------------------------------------------------------
// The report (report.json, report.html) and its delivery (issue 6): history sampled per game
// pair, refreshed every [report] interval and at the end, spooled and uploaded by its own
// thread. The Report is the coordinator's: other job kinds add plots and facts to
// c->rep.report (coordinator/report.h).

static const char *report_state(const Coord *c, bool final, bool interrupted_run)
{
    if (!final)
        return "running";
    if (interrupted_run)
        return "interrupted";
    MatchResults r = summary_results(&c->tot[0], c->run->m.repeat);
    SprtResult s;
    if (c->run->job.sprt.enabled && sprt_evaluate(&r, &c->run->sprt, &s) == STATS_OK &&
        s.decision != SPRT_CONTINUE)
        return sprt_decision_name(s.decision);
    return "finished";
}

/// Where a [report] path lies: absolute, or relative to the output directory.
static void report_path(const Coord *c, const char *name, char *out, size_t len)
{
    if (name[0] == '/')
        snprintf(out, len, "%s", name);
    else
        snprintf(out, len, "%.500s/%.500s", c->rep.dir, name);
}

static void report_begin(Coord *c, const char *dir)
{
    const Run *run = c->run;
    RunReport *rp = &c->rep;
    char run_id[32], title[JOB_TEXT_MAX + 32];
    snprintf(rp->dir, sizeof rp->dir, "%s", dir);
    snprintf(run_id, sizeof run_id, "%016llx", (unsigned long long)run->job_id);
    snprintf(title, sizeof title, "%s: %s", job_kind_name(run->job.kind), run->job.name);
    rp->report = report_new(run_id, title, XQFORGE_VERSION);
    rp->workers = calloc((size_t)link_size(run->link), sizeof *rp->workers);
    rp->started_unix = time(NULL);
    if (!rp->report || !rp->workers) {
        fprintf(stderr, "xqforge run: no report (out of memory)\n");
        return;
    }
    Report *r = rp->report;
    if (run->job.sprt.enabled) {
        report_plot(r, "llr", REPORT_PLOT_LINE, "SPRT log-likelihood ratio", "games", "LLR");
    }
    report_plot(r, "elo", REPORT_PLOT_LINE, "Elo with its 95% interval", "games", "Elo");
    report_plot_bound(r, "elo", "0", 0);
    report_plot(r, "terminations", REPORT_PLOT_BARS, "Results by termination", "games", "");
    const JobConfig *job = &run->job;
    if (job->report.url_count > 0) {
        UploadTarget *t = &rp->target;
        for (int i = 0; i < job->report.url_count; i++)
            snprintf(t->urls[i], sizeof t->urls[i], "%s", job->report.urls[i]);
        t->url_count = job->report.url_count;
        t->method = (UploadMethod)job->report.method;
        snprintf(t->token_env, sizeof t->token_env, "%s", job->report.token_env);
        snprintf(t->token_file, sizeof t->token_file, "%s", job->report.token_file);
        snprintf(t->ca_file, sizeof t->ca_file, "%s", job->report.ca_file);
        t->connect_timeout_s = job->report.connect_timeout_s;
        t->timeout_s = job->report.timeout_s;
        char spool[UPLOAD_TEXT_MAX];
        report_path(c, job->report.spool, spool, sizeof spool);
        UploadPolicy pol;
        upload_policy_default(&pol, spool);
        pol.attempts = job->report.attempts;
        pol.backoff_s = job->report.backoff_s;
        pol.backoff_max_s = job->report.backoff_max_s;
        // A missing token is said now, not only at the first upload; reports still spool.
        char why[512], token[UPLOAD_TOKEN_MAX];
        if (upload_token_load(t, token, sizeof token, why, sizeof why) != UPLOAD_OK)
            fprintf(stderr, "xqforge run: report upload: %s (reports are spooled)\n", why);
        memset(token, 0, sizeof token);
        if (!(rp->uploader = upload_start(&pol)))
            fprintf(stderr, "xqforge run: cannot start the upload thread (reports are spooled)\n");
        snprintf(rp->spool, sizeof rp->spool, "%s", spool);
    }
}

static void report_note_hello(Coord *c, int src, const WireHello *h)
{
    if (c->rep.workers && src >= 0 && src < link_size(c->run->link))
        snprintf(c->rep.workers[src].host, sizeof c->rep.workers[src].host, "%s", h->hostname);
}

static void report_note_result(Coord *c, int src, const WireResult *res)
{
    if (!c->rep.workers || src < 0 || src >= link_size(c->run->link))
        return;
    c->rep.workers[src].pairs += (uint64_t)res->pair_count;
    for (int i = 0; i < res->pair_count; i++)
        c->rep.workers[src].games += (uint64_t)res->pairs[i].game_count;
}

/// One history point per finished game pair (a game without repeat): LLR, Elo and its band.
static void report_history(Coord *c)
{
    RunReport *rp = &c->rep;
    if (!rp->report || c->games_all < rp->next_sample || c->games_all == 0)
        return;
    rp->next_sample = c->games_all + (c->run->m.repeat ? 2 : 1);
    for (int k = 0; k < c->run->pairing_count && k < REPORT_SERIES_MAX; k++) {
        MatchResults r = summary_results(&c->tot[k], c->run->m.repeat);
        EloEstimate e = {0};
        if (c->tot[k].games == 0 || stats_elo(&r, &e) != STATS_OK)
            continue;
        char name[2 * PLAYER_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s vs %s", c->run->pairings[k].m.players[0].name,
                 c->run->pairings[k].m.players[1].name);
        if (c->run->pairing_count == 1)
            report_series_add_band(rp->report, "elo", "Elo", c->tot[k].games, e.elo,
                                   e.elo - e.elo_error, e.elo + e.elo_error);
        else
            report_series_add(rp->report, "elo", name, c->tot[k].games, e.elo);
    }
    MatchResults r = summary_results(&c->tot[0], c->run->m.repeat);
    SprtResult s;
    if (c->run->job.sprt.enabled && sprt_evaluate(&r, &c->run->sprt, &s) == STATS_OK) {
        report_series_add(rp->report, "llr", "LLR", c->tot[0].games, s.llr);
        report_plot_bound(rp->report, "llr", "H1 accepted", s.upper);
        report_plot_bound(rp->report, "llr", "H0 accepted", s.lower);
    }
}

static json_t *engine_json(const Coord *c, int i)
{
    const JobPlayer *p = &c->run->job.players[i];
    json_t *options = json_object(), *args = json_array();
    for (int k = 0; k < p->cfg.option_count; k++)
        json_object_set_new(options, p->cfg.options[k].name, json_string(p->cfg.options[k].value));
    for (int k = 0; k < p->cfg.argc; k++)
        json_array_append_new(args, json_string(p->cfg.args[k]));
    char tc[64];
    game_format_tc(&p->tc, tc, sizeof tc);
    bool builtin = p->cfg.proto == PROTO_BUILTIN;
    // A builtin engine's signature is the bench node count every rank proved it shares.
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:o}", "name", p->cfg.name, "proto",
                     player_proto_name(p->cfg.proto), "cmd", p->cfg.cmd, "args", args, "options",
                     options, "weights_file", p->cfg.weights_file, "time_control", tc, "signature",
                     builtin ? json_integer((json_int_t)c->run->bench_signature) : json_null());
}

/// The job as resolved (file and overrides), without secrets: URLs lose user info and query,
/// the token appears only as where it is read from.
static json_t *job_json(const Coord *c)
{
    const JobConfig *j = &c->run->job;
    json_t *engines = json_array(), *urls = json_array();
    for (int i = 0; i < j->player_count; i++)
        json_array_append_new(engines, engine_json(c, i));
    for (int i = 0; i < j->report.url_count; i++) {
        char u[JOB_TEXT_MAX];
        upload_url_for_log(j->report.urls[i], u, sizeof u);
        json_array_append_new(urls, json_string(u));
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:i, s:b, s:i, s:b, s:o, s:{s:s, s:b, s:i, s:I}, s:{s:{s:b, s:i, s:i, s:i}, "
        "s:{s:b, s:b, s:i, s:i}, s:i}, s:{s:s, s:s, s:s, s:s}}",
        "name", j->name, "kind", job_kind_name(j->kind), "rounds", j->rounds, "repeat", j->repeat,
        "concurrency", c->run->concurrency, "round_robin", j->round_robin, "engines", engines,
        "openings", "file", j->openings_file[0] ? j->openings_file : "default", "random",
        j->openings_random, "start", j->openings_start + 1, "seed", (json_int_t)j->seed,
        "adjudication", "draw", "enabled", j->draw.enabled, "movenumber", j->draw.movenumber,
        "movecount", j->draw.movecount, "score", j->draw.score, "resign", "enabled",
        j->resign.enabled, "twosided", j->resign.twosided, "movecount", j->resign.movecount,
        "score", j->resign.score, "max_plies", j->max_plies, "output", "dir", j->output.dir, "pgn",
        j->output.pgn, "journal", j->output.journal, "result", j->output.result);
    if (!o)
        return json_null();
    json_object_set_new(o, "report",
                        json_pack("{s:o, s:s, s:s, s:s, s:i, s:s}", "urls", urls, "method",
                                  upload_method_name((UploadMethod)j->report.method), "token_env",
                                  j->report.token_env, "token_file", j->report.token_file,
                                  "interval", j->report.interval_s, "ca_file", j->report.ca_file));
    if (j->sprt.enabled)
        json_object_set_new(o, "sprt",
                            json_pack("{s:f, s:f, s:f, s:f, s:s}", "elo0", j->sprt.elo0, "elo1",
                                      j->sprt.elo1, "alpha", j->sprt.alpha, "beta", j->sprt.beta,
                                      "model", sprt_model_name(c->run->sprt.model)));
    return o;
}

static json_t *totals_json(const MatchTotals *t, bool pairs)
{
    json_t *terms = json_object(), *ptnml = json_array();
    for (int i = 1; i < TERM_NB; i++)
        if (t->terms[i])
            json_object_set_new(terms, game_termination_name((Termination)i),
                                json_integer(t->terms[i]));
    for (int i = 0; i < STATS_PENTA_NB; i++)
        json_array_append_new(ptnml, json_integer(t->ptnml[i]));
    return json_pack("{s:i, s:i, s:i, s:i, s:o, s:o, s:i, s:i, s:i, s:i}", "games", t->games,
                     "wins", t->wins, "draws", t->draws, "losses", t->losses, "ptnml",
                     pairs ? ptnml : (json_decref(ptnml), json_null()), "terminations", terms,
                     "crashes", t->terms[TERM_CRASH], "time_losses", t->terms[TERM_TIME_FORFEIT],
                     "illegal_moves", t->terms[TERM_ILLEGAL_MOVE], "stalls", t->terms[TERM_STALL]);
}

static json_t *elo_json(const MatchTotals *t, bool pairs)
{
    MatchResults r = summary_results(t, pairs);
    EloEstimate e = {0};
    stats_elo(&r, &e);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "elo", finite_or_null(e.elo), "error",
                     finite_or_null(e.elo_error), "nelo", finite_or_null(e.nelo), "nelo_error",
                     finite_or_null(e.nelo_error), "los", finite_or_null(e.los), "score",
                     finite_or_null(e.score));
}

/// The facts of the page's summary tables (the record holds the same numbers).
static void report_facts(Coord *c, const char *state, double minutes)
{
    Report *r = c->rep.report;
    const MatchTotals *t = &c->tot[0];
    MatchResults mr = summary_results(t, c->run->m.repeat);
    EloEstimate e = {0};
    stats_elo(&mr, &e);
    char tc[64];
    game_format_tc(&c->run->m.game.tc[0], tc, sizeof tc);
    report_fact(r, "Result", "State", "%s", state);
    if (c->run->pairing_count == 1) {
        report_fact(r, "Result", "Engines", "%s vs %s", c->run->m.players[0].name,
                    c->run->m.players[1].name);
        report_fact(r, "Result", "Elo", "%.1f \u00b1 %.1f (nElo %.1f \u00b1 %.1f)", e.elo,
                    e.elo_error, e.nelo, e.nelo_error);
        report_fact(r, "Result", "LOS", "%.1f%%", 100 * e.los);
        report_fact(r, "Result", "Games (W/D/L)", "%d (%d / %d / %d)", t->games, t->wins, t->draws,
                    t->losses);
        if (c->run->m.repeat)
            report_fact(r, "Result", "Ptnml (0-2)", "%d, %d, %d, %d, %d", t->ptnml[0], t->ptnml[1],
                        t->ptnml[2], t->ptnml[3], t->ptnml[4]);
    } else {
        report_fact(r, "Result", "Games", "%d in %d pairings", c->games_all, c->run->pairing_count);
    }
    SprtResult s;
    if (c->run->job.sprt.enabled && sprt_evaluate(&mr, &c->run->sprt, &s) == STATS_OK) {
        report_fact(r, "SPRT", "LLR", "%.2f (%.2f, %.2f)", s.llr, s.lower, s.upper);
        report_fact(r, "SPRT", "Hypotheses", "[%g, %g] %s Elo, alpha %g, beta %g",
                    c->run->sprt.elo0, c->run->sprt.elo1, sprt_model_name(c->run->sprt.model),
                    c->run->sprt.alpha, c->run->sprt.beta);
        report_fact(r, "SPRT", "Decision", "%s", sprt_decision_name(s.decision));
    }
    report_fact(r, "Run", "Rules", "%s", rules_set_name(c->run->m.game.rules.set));
    report_fact(r, "Run", "Time control", "%s", tc);
    report_fact(r, "Run", "Pairs", "%d of %d", c->pairs_done, c->pairs_total);
    report_fact(r, "Run", "Duration", "%.1f min, %.1f games/min", minutes,
                minutes > 0 ? (c->games_all - c->games_at_start) / minutes : 0.0);
    report_fact(r, "Run", "Failures", "%d crashes, %d time losses, %d illegal moves, %d stalls",
                t->terms[TERM_CRASH], t->terms[TERM_TIME_FORFEIT], t->terms[TERM_ILLEGAL_MOVE],
                t->terms[TERM_STALL]);
    for (int w = 0; c->rep.workers && w < link_size(c->run->link); w++)
        if (c->rep.workers[w].pairs)
            report_fact(r, "Workers", c->rep.workers[w].host[0] ? c->rep.workers[w].host : "?",
                        "rank %d: %llu games", w, (unsigned long long)c->rep.workers[w].games);
}

/// Rebuilds the record from the run's state, writes it, and hands a copy to the uploader.
/// SPSA: theta of each parameter against iterations (up to 16 plots, from the trajectory
/// file, which the journal's replay rewrites on resume) and the current values.
static void report_spsa(Coord *c, Report *r)
{
    enum { PLOTS = 16, ROWS = 1024 };
    const SpsaConfig *cfg = c->run->spsa;
    int n = cfg->count < PLOTS ? cfg->count : PLOTS, rows = 0;
    SvgPoint *pts = malloc(sizeof *pts * ROWS * (size_t)n);
    char path[JOB_TEXT_MAX * 2 + 2], line[65536];
    snprintf(path, sizeof path, "%s/%s", c->rep.dir, c->run->job.spsa.trajectory);
    FILE *f = pts ? fopen(path, "r") : NULL;
    while (f && rows < ROWS && fgets(line, sizeof line, f)) {
        char *p = line, *end;
        double it = strtod(p, &end);
        if (end == p)
            continue; // the header
        for (int i = 0; i < n && *end == ','; i++) {
            p = end + 1;
            pts[(size_t)i * ROWS + (size_t)rows] = (SvgPoint){it, strtod(p, &end)};
        }
        rows++;
    }
    if (f)
        fclose(f);
    const double *theta = spsa_tuner_theta(c->spsa);
    json_t *params = json_array();
    for (int i = 0; i < cfg->count; i++)
        json_array_append_new(params, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f}", "name",
                                                cfg->params[i].name, "start", cfg->params[i].start,
                                                "value", theta[i], "min", cfg->params[i].min, "max",
                                                cfg->params[i].max, "c_end", cfg->params[i].c_end));
    report_set(r, "spsa",
               json_pack("{s:I, s:I, s:o}", "iterations",
                         (json_int_t)spsa_tuner_iterations(c->spsa), "iterations_total",
                         (json_int_t)cfg->iterations, "params", params));
    for (int i = 0; pts && i < n; i++) {
        char id[80];
        snprintf(id, sizeof id, "spsa.%s", cfg->params[i].name);
        report_plot(r, id, REPORT_PLOT_LINE, cfg->params[i].name, "iteration", "value");
        report_plot_bound(r, id, "start", cfg->params[i].start);
        report_series_set(r, id, cfg->params[i].name, pts + (size_t)i * ROWS, (size_t)rows);
    }
    free(pts);
}

static void report_refresh(Coord *c, bool final, bool interrupted_run)
{
    RunReport *rp = &c->rep;
    Report *r = rp->report;
    if (!r)
        return;
    rp->last_ms = timeman_now_ms();
    double minutes = (rp->last_ms - c->start_ms) / 60000.0;
    const char *state = report_state(c, final, interrupted_run);
    bool pairs = c->run->m.repeat;
    report_set_version(r, ++rp->version, final);
    report_set(r, "state", json_string(state));
    report_set(r, "job", job_json(c));
    report_set(r, "rules", json_string(rules_set_name(c->run->m.game.rules.set)));
    char tc[64];
    game_format_tc(&c->run->m.game.tc[0], tc, sizeof tc);
    report_set(r, "time_control", json_string(tc));
    report_set(r, "pairs", json_pack("{s:i, s:i}", "total", c->pairs_total, "done", c->pairs_done));
    report_set(r, "totals", totals_json(&c->tot[0], pairs));
    report_set(r, "elo", elo_json(&c->tot[0], pairs));
    MatchResults mr = summary_results(&c->tot[0], pairs);
    SprtResult s;
    if (c->run->job.sprt.enabled && sprt_evaluate(&mr, &c->run->sprt, &s) == STATS_OK)
        report_set(r, "sprt",
                   json_pack("{s:f, s:f, s:f, s:f, s:s, s:o, s:f, s:f, s:s}", "elo0",
                             c->run->sprt.elo0, "elo1", c->run->sprt.elo1, "alpha",
                             c->run->sprt.alpha, "beta", c->run->sprt.beta, "model",
                             sprt_model_name(c->run->sprt.model), "llr", finite_or_null(s.llr),
                             "lower", s.lower, "upper", s.upper, "decision",
                             sprt_decision_name(s.decision)));
    if (c->run->pairing_count > 1) {
        json_t *list = json_array();
        for (int k = 0; k < c->run->pairing_count; k++)
            json_array_append_new(list, json_pack("{s:s, s:s, s:o, s:o}", "new",
                                                  c->run->pairings[k].m.players[0].name, "base",
                                                  c->run->pairings[k].m.players[1].name, "totals",
                                                  totals_json(&c->tot[k], pairs), "elo",
                                                  elo_json(&c->tot[k], pairs)));
        report_set(r, "pairings", list);
    }
    json_t *workers = json_array();
    for (int w = 0; rp->workers && w < link_size(c->run->link); w++)
        if (rp->workers[w].pairs || rp->workers[w].host[0])
            json_array_append_new(workers, json_pack("{s:i, s:s, s:I, s:I}", "rank", w, "host",
                                                     rp->workers[w].host, "games",
                                                     (json_int_t)rp->workers[w].games, "pairs",
                                                     (json_int_t)rp->workers[w].pairs));
    report_set(r, "workers", workers);
    char started[32];
    struct tm tm;
    gmtime_r(&rp->started_unix, &tm);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int played = c->games_all - c->games_at_start;
    report_set(r, "timings",
               json_pack("{s:s, s:f, s:i, s:f, s:f}", "started_at", started, "duration_s",
                         minutes * 60, "games_this_session", played, "games_per_minute",
                         minutes > 0 ? played / minutes : 0.0, "coordinator_cpu_s",
                         thread_cpu_seconds() - c->cpu_at_start));
    for (int i = 1; i < TERM_NB; i++)
        if (c->tot[0].terms[i])
            report_bar_set(r, "terminations", game_termination_name((Termination)i),
                           c->tot[0].terms[i]);
    report_facts(c, state, minutes);
    if (c->spsa)
        report_spsa(c, r);
    char why[1024];
    if (report_write(r, rp->dir, why, sizeof why) != REPORT_OK) {
        fprintf(stderr, "\nxqforge run: report: %s\n", why);
        return;
    }
    if (!rp->target.url_count)
        return;
    // POST sends the record; PUT and multipart the page too, and the PGN at the end.
    char files[3][JOB_TEXT_MAX * 2 + 2];
    const char *list[3] = {files[0], files[1], files[2]};
    int n = rp->target.method == UPLOAD_POST ? 1 : 2;
    snprintf(files[0], sizeof files[0], "%s/report.json", rp->dir);
    snprintf(files[1], sizeof files[1], "%s/report.html", rp->dir);
    snprintf(files[2], sizeof files[2], "%s/%s", rp->dir, c->run->job.output.pgn);
    if (final && n == 2 && c->run->job.output.pgn[0] && access(files[2], R_OK) == 0)
        n = 3;
    if (c->pgn)
        fflush(c->pgn);
    if (upload_spool_add(rp->spool, &rp->target, report_run_id(r), rp->version, final, list, n, why,
                         sizeof why) != UPLOAD_OK)
        fprintf(stderr, "\nxqforge run: report not spooled: %s\n", why);
    upload_kick(rp->uploader);
}

static void report_tick(Coord *c)
{
    if (c->rep.report &&
        timeman_now_ms() - c->rep.last_ms >= 1000LL * c->run->job.report.interval_s)
        report_refresh(c, false, false);
}

/// The final report, then up to final_wait seconds for its delivery; what is left stays in
/// the spool (a dead server never fails the run).
static void report_end(Coord *c, bool final, bool interrupted_run)
{
    RunReport *rp = &c->rep;
    if (final) {
        report_history(c);
        report_refresh(c, true, interrupted_run);
    }
    if (rp->uploader) {
        UploadStats st;
        upload_stop(rp->uploader, final ? c->run->job.report.final_wait_s : 0, &st);
        rp->uploader = NULL;
        int left = upload_spool_count(rp->spool);
        printf("Report upload: %d delivered, %d retries%s", st.delivered, st.retries,
               left ? "" : "\n");
        if (left)
            printf(", %d kept in %s (deliver with: xqforge upload --spool %s)\n", left, rp->spool,
                   rp->spool);
    }
    if (final && rp->report)
        printf("Report: %s/report.html\n", rp->dir);
    report_free(rp->report);
    rp->report = NULL;
    free(rp->workers);
    rp->workers = NULL;
}

/// The tuner, with its trajectory CSV rewritten from the start: replaying the journal
/// writes the rows of the iterations already applied again.
static int spsa_begin(Coord *c, const char *dir)
{
    const Run *run = c->run;
    if (!(c->spsa = spsa_tuner_new(run->spsa, run->job.seed, (uint64_t)c->pairs_total))) {
        fprintf(stderr, "xqforge run: out of memory for SPSA\n");
        return 1;
    }
    char path[JOB_TEXT_MAX * 2 + 2];
    snprintf(path, sizeof path, "%s/%s", dir, run->job.spsa.trajectory);
    if (!(c->spsa_csv = fopen(path, "w"))) {
        fprintf(stderr, "xqforge run: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    int64_t every = run->spsa->iterations / 500;
    spsa_tuner_set_csv(c->spsa, c->spsa_csv, every > 0 ? every : 1);
    return 0;
}

/// The tuned weights (the engine's weights with theta rounded in) and a table of changes.
static void spsa_finish(Coord *c, const char *dir)
{
    const Run *run = c->run;
    const SpsaConfig *cfg = run->spsa;
    const double *theta = spsa_tuner_theta(c->spsa);
    spsa_tuner_csv_row(c->spsa);
    Weights w = run->spsa_weights;
    printf("SPSA: %lld of %lld iterations applied\n", (long long)spsa_tuner_iterations(c->spsa),
           (long long)cfg->iterations);
    printf("%-28s %9s %9s %9s\n", "parameter", "start", "tuned", "change");
    for (int i = 0; i < cfg->count; i++) {
        w.v[cfg->params[i].id] = (int32_t)lround(theta[i]);
        if (i < 40 || cfg->count <= 50)
            printf("%-28s %9.2f %9.2f %+9.2f\n", cfg->params[i].name, cfg->params[i].start,
                   theta[i], theta[i] - cfg->params[i].start);
    }
    if (cfg->count > 50)
        printf("... %d more in the trajectory file\n", cfg->count - 40);
    char path[JOB_TEXT_MAX * 2 + 2];
    snprintf(path, sizeof path, "%s/%s", dir, run->job.spsa.weights);
    if (weights_save(&w, path) != PARAMS_OK)
        fprintf(stderr, "xqforge run: cannot write %s\n", path);
    else
        printf("Tuned weights: %s (load with params = %s)\n", path, path);
}

static int coordinator_main(Run *run, const char *dir, bool resume)
{
    Coord *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    c->run = run;
    c->pairs_total = run->m.rounds * run->pairing_count;
    rating_init(&c->rating, run->job.player_count < 2 ? 2 : run->job.player_count);
    int sched_ok = schedule_init(&c->sched, (uint64_t)c->pairs_total) == 0;
    c->owner = malloc(sizeof *c->owner * (size_t)(c->pairs_total > 0 ? c->pairs_total : 1));
    c->member = calloc((size_t)link_size(run->link), 1);
    for (int p = 0; c->owner && p < c->pairs_total; p++)
        c->owner[p] = -1;
    c->one = wire_result_new();
    msgpack_sbuffer_init(&c->buf);
    int rc = 1;
    if (!sched_ok || !c->one || !c->owner || !c->member)
        goto fail;
    char path[JOB_TEXT_MAX * 2 + 2], why[512];
    snprintf(path, sizeof path, "%s/%s", dir, run->job.output.journal);
    // Rerunning the same job resumes it (the journal's fingerprint refuses any other job);
    // --resume insists on a journal being there.
    if (resume && access(path, F_OK) != 0) {
        fprintf(stderr, "xqforge run: --resume: no journal at %s\n", path);
        goto fail;
    }
    if (run->spsa && spsa_begin(c, dir) != 0)
        goto fail;
    if (run->job.output.positions[0]) {
        char ppath[JOB_TEXT_MAX * 2 + 2];
        snprintf(ppath, sizeof ppath, "%s/%s", dir, run->job.output.positions);
        if (!(c->pos_board = malloc(sizeof *c->pos_board)) ||
            texel_writer_open(ppath, &c->positions, why, sizeof why) != TEXEL_OK) {
            fprintf(stderr, "xqforge run: positions: %s\n", c->pos_board ? why : "out of memory");
            goto fail;
        }
    }
    JournalReplayStats js;
    char jid[32]; // interim identity: the old fingerprint, until identity_of_job's text
    snprintf(jid, sizeof jid, "fingerprint=%016llx\n", (unsigned long long)run->job_id);
    JournalStatus jst = journal_open(&c->journal, path, &(JournalIdentity){jid, strlen(jid)},
                                     replay_record, c, &js, why, sizeof why);
    if (jst != JOURNAL_OK) {
        fprintf(stderr, "xqforge run: journal %s: %s (%s)\n", path, journal_strerror(jst), why);
        goto fail;
    }
    if (!js.created)
        printf(
            "Resuming: %d pairs already played (%llu duplicate records, %llu torn bytes dropped)\n",
            c->pairs_done, (unsigned long long)js.duplicates, (unsigned long long)js.torn_bytes);
    if (run->job.output.pgn[0]) {
        snprintf(path, sizeof path, "%s/%s", dir, run->job.output.pgn);
        if (!(c->pgn = fopen(path, "a")))
            fprintf(stderr, "xqforge run: cannot open %s: %s (no PGN)\n", path, strerror(errno));
    }
    c->games_at_start = c->games_all;
    c->start_ms = timeman_now_ms();
    c->cpu_at_start = thread_cpu_seconds();
    c->workers_live = 0;
    report_begin(c, dir);
    int expected = link_size(run->link) == 1 ? 1 : link_size(run->link) - 1;
    if (run->pairing_count == 1)
        printf("Job %s: %s vs %s, %d %s, %d worker rank%s\n", run->job.name, run->m.players[0].name,
               run->m.players[1].name, c->pairs_total, run->m.repeat ? "game pairs" : "games",
               expected, expected == 1 ? "" : "s");
    else
        printf("Job %s: %d engines, %s, %d pairings x %d rounds, %d worker rank%s\n", run->job.name,
               run->job.player_count, run->job.round_robin ? "round robin" : "gauntlet",
               run->pairing_count, run->m.rounds, expected, expected == 1 ? "" : "s");
    if (c->pairs_done == c->pairs_total || sprt_decided(c))
        c->stopping = true;
    int byes = 0;
    while (byes < expected) {
        if (atomic_load(&interrupted) && !c->stopping) {
            c->stopping = true;
            printf("\nInterrupted: finishing, keeping every result that arrives\n");
            stop_workers(c, WIRE_STOP_INTERRUPTED, "interrupted");
        }
        report_history(c);
        report_tick(c);
        int src;
        WireMessage msg;
        if (!run_receive(run->link, LINK_TAG_RESULT, LINK_TAG_CONTROL, &src, &msg)) {
            progress(c, false);
            struct timespec ts = {0, POLL_MS * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        switch (msg.kind) {
        case WIRE_HELLO:
            if (msg.hello.bench_signature != run->bench_signature) {
                WireRefuse ref;
                snprintf(
                    ref.reason, sizeof ref.reason,
                    "bench signature %llu differs from the coordinator's %llu: rebuild the same "
                    "xqforge everywhere",
                    (unsigned long long)msg.hello.bench_signature,
                    (unsigned long long)run->bench_signature);
                fprintf(stderr, "\nrank %d (%s) refused: %s\n", src, msg.hello.hostname,
                        ref.reason);
                run_send(run->link, src, LINK_TAG_STOP, wire_pack_refuse(&ref, &c->buf), &c->buf);
            } else {
                c->member[src] = 1;
                c->workers_live++;
                c->workers_seen++;
                report_note_hello(c, src, &msg.hello);
                printf("rank %d on %s joined: %u games at once, bench %llu nodes/s\n", src,
                       msg.hello.hostname, msg.hello.concurrency,
                       (unsigned long long)msg.hello.bench_nps);
            }
            break;
        case WIRE_REQUEST: on_request(c, src, &msg.request); break;
        case WIRE_RESULT:
            report_note_result(c, src, msg.result);
            on_result(c, src, msg.result);
            break;
        case WIRE_BYE:
            byes++;
            if (c->member[src]) {
                c->member[src] = 0;
                c->workers_live--;
                // Pairs it took but did not finish go out again to the others.
                int released = 0;
                for (int p = 0; p < c->pairs_total; p++)
                    if (c->owner[p] == src && !schedule_is_done(&c->sched, (uint64_t)p)) {
                        schedule_release(&c->sched, (uint64_t)p);
                        c->owner[p] = -1;
                        released++;
                    }
                if (released && !c->stopping)
                    printf("\nrank %d left with %d pairs unplayed: they go to the others\n", src,
                           released);
            }
            break;
        default:
            fprintf(stderr, "\nxqforge run: unexpected %s from rank %d\n", wire_kind_name(msg.kind),
                    src);
        }
        wire_message_destroy(&msg);
        if (!c->stopping && c->pairs_done == c->pairs_total)
            c->stopping = true;
    }
    progress(c, true);
    printf("\n");
    for (int i = 0; i < run->pairing_count; i++)
        summary_print(stdout, run->pairings[i].m.players[0].name,
                      run->pairings[i].m.players[1].name, &c->tot[i], run->m.repeat,
                      run->job.sprt.enabled ? &run->sprt : NULL,
                      (timeman_now_ms() - c->start_ms) / 60000.0);
    if (run->job.player_count > 2)
        print_ratings(c);
    double cpu = thread_cpu_seconds() - c->cpu_at_start;
    double wall = (timeman_now_ms() - c->start_ms) / 1000.0;
    printf("coordinator CPU %.2f s in %.1f s (%.2f%% of one core)\n", cpu, wall,
           wall > 0 ? 100 * cpu / wall : 0.0);
    if (c->spsa)
        spsa_finish(c, dir);
    if (c->positions) {
        uint64_t kept = texel_writer_count(c->positions);
        if (texel_writer_close(c->positions, why, sizeof why) != TEXEL_OK)
            fprintf(stderr, "xqforge run: positions: %s\n", why);
        else
            printf("Positions: %llu quiet of %llu looked at, in %s/%s\n", (unsigned long long)kept,
                   (unsigned long long)c->positions_seen, dir, run->job.output.positions);
        c->positions = NULL;
    }
    write_result(c, dir, atomic_load(&interrupted));
    report_end(c, true, atomic_load(&interrupted));
    // A journal that could not be written ends the run with an error: what it holds is
    // whole, and rerunning the job where there is room resumes from it.
    rc = c->failed ? 1 : atomic_load(&interrupted) ? 130 : 0;
    goto out;
fail:
    stop_workers(c, WIRE_STOP_ERROR, "the coordinator could not start");
out:
    report_end(c, false, false); // after a failed start: stop the uploader, free
    if (c->pgn)
        fclose(c->pgn);
    journal_close(c->journal);
    msgpack_sbuffer_destroy(&c->buf);
    wire_result_free(c->one);
    schedule_destroy(&c->sched);
    spsa_tuner_free(c->spsa);
    texel_writer_discard(c->positions); // after a failed start
    free(c->pos_board);
    if (c->spsa_csv)
        fclose(c->spsa_csv);
    free(c->owner);
    free(c->member);
    free(c);
    return rc;
}

// ---------------------------------------------------------------------------------------
// The command

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: [mpirun -np N] xqforge run JOBFILE [--set SECTION.KEY=VALUE]... [--resume]\n\n"
            "Runs a job file (see jobs/) over MPI ranks: rank 0 coordinates, the others\n"
            "play game pairs; with one rank, rank 0 plays too. Results are journaled before\n"
            "they count; --resume continues a stopped run exactly where it stopped.\n");
}

/// SPSA: the engine plays itself as "plus" and "minus"; parameters without a start take the
/// engine's configured value (its weights file and options), as the games would.
static int spsa_prepare(Run *run, char *why, size_t why_len)
{
    const JobConfig *job = &run->job;
    const PlayerConfig *pc = &job->players[0].cfg;
    Pairing *pg = &run->pairings[0];
    run->pairing_count = 1;
    *pg = (Pairing){.a = 0, .b = 1};
    MatchConfig *m = &pg->m;
    m->players[0] = m->players[1] = *pc;
    snprintf(m->players[0].name, sizeof m->players[0].name, "plus");
    snprintf(m->players[1].name, sizeof m->players[1].name, "minus");
    job_game_config(job, 0, 0, &m->game);
    m->openings = &run->openings;
    m->random_order = job->openings_random;
    m->seed = job->seed;
    m->start = job->openings_start;
    m->rounds = job->rounds;
    m->repeat = true;
    Engine *e = engine_new();
    if (!e) {
        snprintf(why, why_len, "out of memory");
        return 1;
    }
    ParamsStatus ps = pc->weights_file[0]
                          ? weights_load(engine_weights(e), pc->weights_file, why, why_len)
                          : PARAMS_OK;
    for (int i = 0; ps == PARAMS_OK && i < pc->option_count; i++)
        if (engine_set_option(e, pc->options[i].name, pc->options[i].value) != ENGINE_OK) {
            snprintf(why, why_len, "engine %s: option %s=%s refused", pc->name, pc->options[i].name,
                     pc->options[i].value);
            ps = PARAMS_ERR_VALUE;
        }
    run->spsa_weights = *engine_weights(e);
    engine_free(e);
    if (ps != PARAMS_OK)
        return 1;
    if (!(run->spsa = malloc(sizeof *run->spsa))) {
        snprintf(why, why_len, "out of memory");
        return 1;
    }
    SpsaConfig *cfg = run->spsa;
    spsa_config_init(cfg, job->rounds);
    cfg->a_ratio = job->spsa.a_ratio;
    cfg->alpha = job->spsa.alpha;
    cfg->gamma = job->spsa.gamma;
    cfg->count = job->spsa.param_count;
    for (int i = 0; i < cfg->count; i++) {
        const JobSpsaParam *jp = &job->spsa.params[i];
        SpsaParam *sp = &cfg->params[i];
        snprintf(sp->name, sizeof sp->name, "%s", params_info[jp->id].name);
        sp->id = jp->id;
        sp->start = jp->has_start ? jp->start : run->spsa_weights.v[jp->id];
        sp->min = jp->min;
        sp->max = jp->max;
        sp->c_end = jp->c_end;
        sp->r_end = jp->r_end;
        if (sp->start < sp->min || sp->start > sp->max)
            sp->start = sp->start < sp->min ? sp->min : sp->max;
    }
    return spsa_config_check(cfg, why, why_len) == SPSA_OK ? 0 : 2;
}

static int prepare(Run *run, const char *path, char **sets, int n_sets, char *why, size_t why_len)
{
    JobStatus js = job_load(path, (const char *const *)sets, n_sets, &run->job, why, why_len);
    if (js != JOB_OK)
        return 2;
    const JobConfig *job = &run->job;
    OpeningsStatus os = job->openings_file[0] ? openings_load(&run->openings, job->openings_file,
                                                              stderr, why, why_len)
                                              : openings_load_default(&run->openings);
    if (os != OPENINGS_OK) {
        if (!job->openings_file[0])
            snprintf(why, why_len, "%s", openings_strerror(os));
        return 2;
    }
    // The pairings: two engines play each other; more play a gauntlet (the first engine
    // against each other one) or a round robin.
    run->pairing_count = 0;
    for (int a = 0; a < job->player_count; a++) {
        for (int b = a + 1; b < job->player_count; b++) {
            if (a > 0 && !job->round_robin)
                continue;
            Pairing *pg = &run->pairings[run->pairing_count++];
            pg->a = a;
            pg->b = b;
            MatchConfig *m = &pg->m;
            m->players[0] = job->players[a].cfg;
            m->players[1] = job->players[b].cfg;
            job_game_config(job, a, b, &m->game);
            m->openings = &run->openings;
            m->random_order = job->openings_random;
            m->seed = job->seed;
            m->start = job->openings_start;
            m->rounds = job->rounds;
            m->repeat = job->repeat;
        }
    }
    if (job->kind == JOB_SPSA && spsa_prepare(run, why, why_len) != 0)
        return 2;
    run->m = run->pairings[0].m;
    // Default: one game per core, counting the engines' own search threads.
    long cores = sysconf(_SC_NPROCESSORS_ONLN), threads = 1;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < job->players[i].cfg.option_count; k++)
            if (!strcasecmp(job->players[i].cfg.options[k].name, "Threads"))
                threads = strtol(job->players[i].cfg.options[k].value, NULL, 10) > threads
                              ? strtol(job->players[i].cfg.options[k].value, NULL, 10)
                              : threads;
    long auto_games = (cores > 0 ? cores : 1) / (threads > 0 ? threads : 1);
    run->concurrency =
        job->concurrency > 0 ? job->concurrency : (int)(auto_games > 0 ? auto_games : 1);
    run->sprt =
        (SprtParams){job->sprt.elo0, job->sprt.elo1, job->sprt.alpha, job->sprt.beta,
                     job->sprt.model == JOB_SPRT_LOGISTIC ? SPRT_LOGISTIC : SPRT_NORMALIZED};
    run->job_id = run_fingerprint(path, sets, n_sets);
    // Every rank proves it runs the same engine: a short bench, its node count the signature.
    if (!run_bench(&run->bench_signature, &run->bench_nps)) {
        snprintf(why, why_len, "cannot run the bench");
        return 1;
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    const char *path = NULL;
    char *sets[64];
    int n_sets = 0;
    bool resume = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--resume")) {
            resume = true;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < 64) {
            sets[n_sets++] = argv[++i];
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "xqforge run: unexpected argument '%s'\n", argv[i]);
            run_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!path) {
        run_usage(stderr);
        return EXIT_USAGE;
    }
    if (book_job_is(path, sets, n_sets))
        return book_run(&argc, &argv, path, sets, n_sets, resume);
    if (texel_job_is(path, sets, n_sets))
        return texel_run(&argc, &argv, path, sets, n_sets, resume);
    setvbuf(stdout, NULL, _IOLBF, 0);
    Run *run = calloc(1, sizeof *run);
    if (!run)
        return 1;
    char why[1024];
    Link *link;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge run: MPI: %s\n", why);
        free(run);
        return 1;
    }
    run->link = link;
    int rank = link_rank(link), rc = prepare(run, path, sets, n_sets, why, sizeof why);
    if (rc == 0 && rank == 0 &&
        run_make_dirs(run->job.output.dir[0] ? run->job.output.dir : ".") != 0) {
        snprintf(why, sizeof why, "cannot create %.900s: %s", run->job.output.dir, strerror(errno));
        rc = 1;
    }
    if (rc != 0 && rank == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    if (!link_all_ok(link, rc == 0)) {
        if (rc == 0)
            rc = 1; // another rank failed and said why
    } else {
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        if (rank == 0) {
            const char *dir = run->job.output.dir[0] ? run->job.output.dir : ".";
            {
                pthread_t local;
                bool local_worker_started =
                    link_size(link) == 1 && pthread_create(&local, NULL, local_worker, run) == 0;
                if (link_size(link) == 1 && !local_worker_started) {
                    fprintf(stderr, "xqforge run: cannot start the local worker\n");
                    rc = 1;
                } else {
                    rc = coordinator_main(run, dir, resume);
                }
                if (local_worker_started)
                    pthread_join(local, NULL);
            }
        } else {
            rc = worker_main(run);
        }
    }
    openings_free(&run->openings);
    free(run->spsa);
    link_finalize(link);
    free(run);
    return rc;
}
