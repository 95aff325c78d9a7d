// SPDX-License-Identifier: MIT
#define _GNU_SOURCE // RUSAGE_THREAD
#include "games.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "games_impl.h"
#include "pgn.h"
#include "timeman.h"

// Games between two summary blocks in the live output (games_count), fastchess's habit.
enum { SUMMARY_EVERY = 100 };

// ---- Setup ---------------------------------------------------------------------------------

/// SPSA: the engine plays itself as "plus" and "minus"; parameters without a start take the
/// engine's configured value (its weights file and options), as the games would.
static bool spsa_prepare(GamesCoord *g, char *why, size_t why_len)
{
    const JobConfig *job = g->job;
    const PlayerConfig *pc = &job->players[0].cfg;
    char msg[1024];
    if (!player_builtin_weights(pc, &g->spsa_weights, msg, sizeof msg)) {
        snprintf(why, why_len, "engine %s: %s", pc->name, msg);
        return false;
    }
    SpsaConfig *cfg = &g->spsa_cfg;
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
        sp->start = jp->has_start ? jp->start : g->spsa_weights.v[jp->id];
        sp->min = jp->min;
        sp->max = jp->max;
        sp->c_end = jp->c_end;
        sp->r_end = jp->r_end;
        // A start outside the range (an engine's configured value) begins at the nearest
        // bound, inside the range the job allows.
        if (sp->start < sp->min || sp->start > sp->max)
            sp->start = sp->start < sp->min ? sp->min : sp->max;
    }
    if (spsa_config_check(cfg, why, why_len) != SPSA_OK)
        return false;
    if (!(g->spsa = spsa_tuner_new(cfg, job->seed, g->plan->pairs_total))) {
        snprintf(why, why_len, "out of memory for SPSA");
        return false;
    }
    // The trajectory is rewritten from the start: the replay writes its rows again.
    char path[GAMES_PATH_MAX];
    games_path(g, job->spsa.trajectory, path, sizeof path);
    if (!(g->spsa_csv = fopen(path, "w"))) {
        snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    // About 500 rows whatever the run's length: the trajectory stays a small file to plot.
    int64_t every = cfg->iterations / 500;
    spsa_tuner_set_csv(g->spsa, g->spsa_csv, every > 0 ? every : 1);
    return true;
}

void games_path(const GamesCoord *g, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%.2000s/%.2000s", g->dir, name);
}

GamesCoord *games_coord_new(const GamesSetup *s, char *why, size_t why_len)
{
    GamesCoord *g = calloc(1, sizeof *g);
    if (!g || !(g->rec = malloc(sizeof *g->rec)) || !(g->board = malloc(sizeof *g->board)) ||
        !(g->rank_games = calloc((size_t)s->ranks, sizeof *g->rank_games)) ||
        !(g->rank_play = calloc((size_t)s->ranks, sizeof *g->rank_play))) {
        snprintf(why, why_len, "out of memory");
        games_coord_free(g);
        return NULL;
    }
    g->job = s->job;
    g->plan = s->plan;
    g->bench_signature = s->bench_signature;
    g->ranks = s->ranks;
    // A unit is a pair of games with colours swapped (repeat), else one game.
    g->per_pair = s->plan->repeat ? 2 : 1;
    snprintf(g->dir, sizeof g->dir, "%s", s->dir);
    _Static_assert((int)JOB_SPRT_NORMALIZED == (int)SPRT_NORMALIZED &&
                       (int)JOB_SPRT_LOGISTIC == (int)SPRT_LOGISTIC &&
                       (int)JOB_SPRT_MODEL_NB == (int)SPRT_MODEL_NB,
                   "JobSprtModel mirrors SprtModel");
    g->sprt =
        (SprtParams){s->job->sprt.elo0, s->job->sprt.elo1, s->job->sprt.alpha, s->job->sprt.beta,
                     s->job->sprt.model == JOB_SPRT_LOGISTIC ? SPRT_LOGISTIC : SPRT_NORMALIZED};
    // The joint ratings need two players at least.
    rating_init(&g->rating, s->plan->players < 2 ? 2 : s->plan->players);
    // Everything that can fail is opened here, before the journal: a run that cannot write its
    // outputs stops before any game is played.
    if (s->job->kind == JOB_SPSA && !spsa_prepare(g, why, why_len)) {
        games_coord_free(g);
        return NULL;
    }
    char path[GAMES_PATH_MAX];
    if (s->job->output.positions[0]) {
        games_path(g, s->job->output.positions, path, sizeof path);
        if (texel_writer_open(path, &g->positions, why, why_len) != TEXEL_OK) {
            games_coord_free(g);
            return NULL;
        }
    }
    // The PGN is rebuilt from the journal into a new file that replaces the old one once the
    // replay is complete: whatever a kill or a full disk left in the old one, the new one
    // holds exactly the journal's games.
    if (s->job->output.pgn[0]) {
        games_path(g, s->job->output.pgn, path, sizeof path);
        snprintf(g->pgn_tmp, sizeof g->pgn_tmp, "%.4100s.rebuild", path);
        if (!(g->pgn = fopen(g->pgn_tmp, "w"))) {
            snprintf(why, why_len, "cannot write %s: %s", g->pgn_tmp, strerror(errno));
            games_coord_free(g);
            return NULL;
        }
    }
    games_report_init(g);
    return g;
}

void games_coord_free(GamesCoord *g)
{
    if (!g)
        return;
    if (g->pgn)
        fclose(g->pgn);
    if (g->pgn_tmp[0])
        unlink(g->pgn_tmp); // only left behind when the start failed
    texel_writer_discard(g->positions);
    spsa_tuner_free(g->spsa);
    if (g->spsa_csv)
        fclose(g->spsa_csv);
    run_report_end(&g->rr, false);
    free(g->rank_games);
    free(g->rank_play);
    free(g->opening_exits);
    free(g->board);
    free(g->rec);
    free(g);
}

// ---- Results ------------------------------------------------------------------------------

/// A game as it came over the wire, as the record game_verify and pgn_write read. The names
/// are the plan's, never the worker's: a rank cannot rename the engines in the PGN.
static void wire_to_game(const WireGame *w, const MatchConfig *m, GameRecord *r)
{
    // Only the head is cleared: the moves array is large, and exactly ply_count of it is set.
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

/// A pair counts only whole (both games with repeat), from its own opening, with colours
/// swapped, and with every game holding by the rules.
static bool games_check(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t len)
{
    GamesCoord *g = ctx;
    const GamePlan *plan = g->plan;
    const WirePair *p = &m->result->units[0];
    const MatchConfig *mc = &plan->pairings[plan_pairing_of(plan, unit)].m;
    uint64_t round = plan_round_of(plan, unit);
    // The opening is derived here from the unit id, as the worker did: a rank cannot choose it.
    int want = openings_pick(mc->openings, round, mc->random_order, mc->seed, mc->start);
    if (p->game_count != g->per_pair) {
        snprintf(why, len, "an incomplete pair (%d of %d games)", p->game_count, g->per_pair);
        return false;
    }
    if ((int)p->opening != want || want < 0 || want >= mc->openings->count) {
        snprintf(why, len, "pair %llu played opening %u, not its own %d", (unsigned long long)unit,
                 p->opening, want + 1);
        return false;
    }
    if (p->game_count == 2 && p->games[0].red == p->games[1].red) {
        snprintf(why, len, "both games of the pair with the same colours");
        return false;
    }
    // Every move is replayed through the rules, and the ending must be the one the rules give.
    for (int i = 0; i < p->game_count; i++) {
        char gwhy[256];
        wire_to_game(&p->games[i], mc, g->rec);
        if (!game_verify(g->rec, &mc->game, &mc->openings->items[want], gwhy, sizeof gwhy)) {
            snprintf(why, len, "game %d: %s", i + 1, gwhy);
            return false;
        }
    }
    return true;
}

/// A Texel dataset from the games as they are counted (on replay too, so the file is always
/// the journal's games).
static void add_positions(GamesCoord *g, const WirePair *p)
{
    Move *moves = g->moves;
    for (int i = 0; i < p->game_count && g->positions; i++) {
        const WireGame *wg = &p->games[i];
        for (int m = 0; m < wg->ply_count; m++)
            moves[m] = wg->moves[m].move;
        double red = wg->outcome == WIRE_OUTCOME_RED_WINS ? 1
                     : wg->outcome == WIRE_OUTCOME_DRAW   ? 0.5
                                                          : 0;
        if (texel_writer_add_game(g->positions, g->board, wg->start_fen, moves, wg->ply_count,
                                  wg->book_plies, red, 8, &g->positions_seen) == TEXEL_ERR_IO) {
            fprintf(stderr, "\nxqforge run: cannot write the positions file; no more positions\n");
            texel_writer_discard(g->positions);
            g->positions = NULL;
        }
    }
}

/// Appends the pair's games to the PGN, flushed at once so the file follows the journal;
/// what a crash loses, --resume rebuilds. false stops the run.
static bool write_pgn(GamesCoord *g, uint64_t unit, const WirePair *p, char *why, size_t len)
{
    if (!g->pgn)
        return true;
    const MatchConfig *mc = &g->plan->pairings[plan_pairing_of(g->plan, unit)].m;
    char tc[64];
    game_format_tc(&mc->game.tc[0], tc, sizeof tc);
    PgnTags tags = {g->job->name,
                    "xqforge cluster",
                    (int)(unit + 1),
                    tc,
                    rules_set_name(mc->game.rules.set),
                    (PgnNotation)g->job->output.pgn_notation,
                    g->job->output.pgn_ranks};
    int rc = 0;
    for (int i = 0; i < p->game_count && rc == 0; i++) {
        wire_to_game(&p->games[i], mc, g->rec);
        rc = pgn_write(g->pgn, g->rec, &tags);
    }
    if (rc != 0 || fflush(g->pgn) != 0) {
        snprintf(why, len,
                 "cannot write the PGN: %s (the journal keeps every game; --resume "
                 "rebuilds the PGN)",
                 strerror(errno));
        return false;
    }
    return true;
}

/// The running total of nodes may arrive out of order (a rank's game threads): the largest.
static void rank_play_add(GamesRankPlay *rp, const WireResult *r, const WirePair *p)
{
    for (int i = 0; i < p->game_count; i++)
        rp->moves += (uint64_t)(p->games[i].ply_count - p->games[i].book_plies);
    if (r->nodes > rp->nodes)
        rp->nodes = r->nodes;
}

static bool games_count(void *ctx, uint64_t unit, const WireMessage *m, bool replay, char *why,
                        size_t len)
{
    GamesCoord *g = ctx;
    const WirePair *p = &m->result->units[0];
    int pi = plan_pairing_of(g->plan, unit);
    const Pairing *pg = &g->plan->pairings[pi];
    double points = 0, pts_of[2] = {0, 0};
    int before = g->all.games;
    for (int i = 0; i < p->game_count; i++) {
        const WireGame *wg = &p->games[i];
        // Points of the pairing's engine a (player 0): it won when the winner's colour is the one
        // it played (red == 0: player 0 had Red).
        double pts = wg->outcome == WIRE_OUTCOME_DRAW                           ? 0.5
                     : (wg->outcome == WIRE_OUTCOME_RED_WINS) == (wg->red == 0) ? 1.0
                                                                                : 0.0;
        match_totals_game(&g->tot[pi], pts, wg->term);
        match_totals_game(&g->all, pts, wg->term);
        if (!replay)
            match_totals_game(&g->session, pts, wg->term);
        if (i < 2)
            pts_of[i] = pts;
        rating_add(&g->rating, pg->a, pg->b, pts);
        points += pts;
    }
    // Per opening, for the report's section (games_check has checked the index).
    if (!g->opening_exits && g->plan->openings.count > 0)
        g->opening_exits = calloc((size_t)g->plan->openings.count, sizeof *g->opening_exits);
    if (g->opening_exits && p->opening < (uint32_t)g->plan->openings.count)
        bookprune_tally_pair(g->opening_exits, p);
    // A finished pair also counts as one pentanomial outcome (summary.c reads those for SPRT).
    if (p->game_count == 2) {
        match_totals_pair(&g->tot[pi], pts_of);
        match_totals_pair(&g->all, pts_of);
    }
    uint32_t rank = m->result->rank;
    // A rank beyond this run's size (a larger run's journal) is not in the per-rank tables.
    if ((int)rank < g->ranks)
        g->rank_games[rank] += (uint64_t)p->game_count;
    if ((int)rank < g->ranks && !replay) // nodes per move per rank ([time] scale keeps it even)
        rank_play_add(&g->rank_play[rank], m->result, p);
    // Replayed pairs too: the positions file, like the PGN, is rebuilt from the journal.
    if (g->positions)
        add_positions(g, p);
    // SPSA: plus (player 0) scored points of game_count; W - L = 2 * points - games.
    if (g->spsa)
        spsa_tuner_pair_done(g->spsa, unit, (int)lround(2 * points) - p->game_count);
    // The PGN last: a write error fails the run after the pair counted everywhere else, and
    // the journal still holds it.
    games_report_history(g);
    if (!write_pgn(g, unit, p, why, len))
        return false;
    // The summary block now and then (every SUMMARY_EVERY games), as fastchess does; not for
    // the last pair (the end prints it) nor when the SPRT has just decided. SPSA has none: plus
    // and minus change every pair, so their Elo says nothing (the progress line counts steps).
    if (g->spsa)
        return true;
    SprtResult s;
    bool last = (uint64_t)g->all.games >= g->plan->pairs_total * (uint64_t)g->per_pair ||
                (games_sprt(g, &s) && s.decision != SPRT_CONTINUE);
    if (!replay && !last && before / SUMMARY_EVERY != g->all.games / SUMMARY_EVERY) {
        printf("\n");
        games_print_summary(g);
    }
    return true;
}

/// A kind's own journal record: for games, only SPSA steps exist; anything else means the
/// journal belongs to another kind of job and the resume is refused.
static bool games_replay_extra(void *ctx, uint64_t key, const void *payload, size_t len, char *why,
                               size_t why_len)
{
    GamesCoord *g = ctx;
    if (!g->spsa) {
        snprintf(why, why_len,
                 "journal record %llu: an SPSA step in a journal of another kind "
                 "of job",
                 (unsigned long long)key);
        return false;
    }
    char swhy[256];
    if (spsa_tuner_replay_step(g->spsa, payload, len, swhy, sizeof swhy))
        return true;
    snprintf(why, why_len, "journal record %llu: %s", (unsigned long long)key, swhy);
    return false;
}

/// Makes an SPSA step for the pairs of a WORK and journals it before the WORK is sent, so
/// that a resumed run applies the results of these pairs with this very step.
static bool games_attach(void *ctx, Coordinator *c, WireWork *work, char *why, size_t len)
{
    GamesCoord *g = ctx;
    if (!g->spsa)
        return true;
    const SpsaStep *st = spsa_tuner_step(g->spsa, work->unit_ids, work->unit_count);
    size_t n = 0;
    void *rec = st ? spsa_tuner_encode(st, work->unit_ids, work->unit_count, &n) : NULL;
    if (!rec) {
        snprintf(why, len, "SPSA step: out of memory");
        return false;
    }
    bool ok = coord_journal_extra(c, st->id, rec, n);
    free(rec);
    if (!ok) {
        snprintf(why, len, "cannot journal an SPSA step");
        return false;
    }
    // The step is durable: only now does the WORK carry it to the worker.
    const SpsaConfig *cfg = spsa_tuner_config(g->spsa);
    work->spsa.id = st->id;
    work->spsa.count = cfg->count;
    for (int i = 0; i < cfg->count; i++) {
        work->spsa.param[i] = (uint16_t)cfg->params[i].id;
        work->spsa.plus[i] = st->plus[i];
        work->spsa.minus[i] = st->minus[i];
    }
    return true;
}

/// An SPRT has exactly two engines (validate_games), so one pairing: its totals, as pairs
/// when the games are paired.
bool games_sprt(const GamesCoord *g, SprtResult *out)
{
    if (!g->job->sprt.enabled)
        return false;
    MatchResults r = summary_results(&g->tot[0], g->plan->repeat);
    return sprt_evaluate(&r, &g->sprt, out) == STATS_OK;
}

static bool games_complete(void *ctx, const CoordState *st, bool *abandon, char *verdict,
                           size_t len)
{
    GamesCoord *g = ctx;
    (void)st;
    SprtResult s;
    if (!games_sprt(g, &s) || s.decision == SPRT_CONTINUE)
        return false;
    *abandon = true; // the games in progress cannot change the verdict
    snprintf(verdict, len, "SPRT %s", sprt_decision_name(s.decision));
    return true;
}

static void games_tick(void *ctx, const CoordState *st, bool force)
{
    GamesCoord *g = ctx;
    // The progress line every turn; the report file only at the [report] interval.
    games_progress(g, st, force);
    if (run_report_due(&g->rr))
        games_report_refresh(g, st, false);
}

static bool games_start(void *g, const CoordState *st, const char *run_id, char *why,
                        size_t why_len)
{
    return games_coord_start(g, st, run_id, why, why_len);
}

static int games_finish(void *g, const CoordState *st) { return games_coord_finish(g, st); }

void games_coord_kind(GamesCoord *g, CoordKind *out)
{
    *out = (CoordKind){.ctx = g,
                       .result_kind = WIRE_RESULT,
                       .check = games_check,
                       .count = games_count,
                       .replay_extra = games_replay_extra,
                       .attach = games_attach,
                       .complete = games_complete,
                       .tick = games_tick,
                       .start = games_start,
                       .finish = games_finish};
}

static void *games_kind_new(const CoordSetup *s, CoordKind *out, char *why, size_t why_len)
{
    GamesSetup gs = {.job = s->job,
                     .plan = s->plan,
                     .dir = s->dir,
                     .bench_signature = s->bench_signature,
                     .ranks = s->ranks};
    GamesCoord *g = games_coord_new(&gs, why, why_len);
    if (g)
        games_coord_kind(g, out);
    return g;
}

static void games_kind_free(void *g) { games_coord_free(g); }

const CoordKindDef coord_games_def = {.kind_new = games_kind_new, .kind_free = games_kind_free};

// ---- Start and end -------------------------------------------------------------------------

/// This thread's CPU time: the coordinator's own cost, without a worker thread rank 0 may
/// run alongside (coordinator_plays).
static double thread_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return 0;
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

bool games_coord_start(GamesCoord *g, const CoordState *st, const char *run_id, char *why,
                       size_t why_len)
{
    snprintf(g->run_id, sizeof g->run_id, "%s", run_id);
    if (g->rr.report)
        report_set_run_id(g->rr.report, run_id);
    // The PGN rebuilt from the journal replaces the old file only now, whole and synced: a
    // failed start leaves the old one as it was.
    if (g->pgn) {
        char path[GAMES_PATH_MAX];
        games_path(g, g->job->output.pgn, path, sizeof path);
        if (fflush(g->pgn) != 0 || fsync(fileno(g->pgn)) != 0 || rename(g->pgn_tmp, path) != 0) {
            snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
            return false;
        }
        g->pgn_tmp[0] = '\0';
    }
    g->start_ms = g->last_progress_ms = timeman_now_ms();
    g->cpu_at_start = thread_cpu_seconds();
    const GamePlan *plan = g->plan;
    int workers = st->workers_expected;
    // The roles said where the names do not say them ("new dev vs base master").
    bool roles = g->job->roles != JOB_ROLES_NONE && g->job->player_count == 2;
    const char *n = plan->pairings[0].m.players[0].name, *b = plan->pairings[0].m.players[1].name;
    if (plan->pairing_count == 1)
        printf("Job %s: %s%s vs %s%s, %llu %s, %d worker rank%s\n", g->job->name,
               roles && strcmp(n, "new") ? "new " : "", n,
               roles && strcmp(b, "base") ? "base " : "", b, (unsigned long long)plan->pairs_total,
               plan->repeat ? "game pairs" : "games", workers, workers == 1 ? "" : "s");
    else
        printf("Job %s: %d engines, %s, %d pairings x %d rounds (%llu %s), %d worker rank%s\n",
               g->job->name, g->job->player_count, g->job->round_robin ? "round robin" : "gauntlet",
               plan->pairing_count, g->job->rounds, (unsigned long long)plan->pairs_total,
               plan->repeat ? "game pairs" : "games", workers, workers == 1 ? "" : "s");
    games_report_begin(g);
    return true;
}

double games_session_minutes(const GamesCoord *g)
{
    return g->start_ms ? (timeman_now_ms() - g->start_ms) / 60000.0 : 0.0;
}

double games_coordinator_cpu(const GamesCoord *g) { return thread_cpu_seconds() - g->cpu_at_start; }

/// Whether every game this session ended with an engine failing before it could play: the
/// run played nothing.
static bool only_failures(const GamesCoord *g)
{
    const MatchTotals *t = &g->session;
    return t->games > 0 && t->terms[TERM_CRASH] + t->terms[TERM_STALL] == t->games;
}

int games_coord_finish(GamesCoord *g, const CoordState *st)
{
    CoordState end = *st;
    // A run whose every game failed "completes" by its count but measured nothing: it fails.
    if (end.end == COORD_DONE && only_failures(g)) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason,
                 "every game of this run ended with an engine crash or stall: no usable engine");
    }
    games_progress(g, &end, true);
    printf("\n");
    if (g->spsa)
        games_spsa_games_line(g);
    else if (g->all.games > 0) {
        games_print_summary(g);
        if (g->plan->players > 2)
            games_print_ratings(g);
    }
    SprtResult s;
    if (games_sprt(g, &s)) {
        if (s.decision != SPRT_CONTINUE)
            printf("SPRT: %s (LLR %.2f, bounds %.2f %.2f)\n", sprt_decision_name(s.decision), s.llr,
                   s.lower, s.upper);
        else if (end.end == COORD_DONE)
            printf("SPRT: no verdict: the game limit was reached first (LLR %.2f, bounds %.2f "
                   "%.2f)\n",
                   s.llr, s.lower, s.upper);
    }
    double wall = games_session_minutes(g) * 60;
    double cpu = games_coordinator_cpu(g);
    printf("coordinator CPU %.2f s in %.1f s (%.2f%% of one core)\n", cpu, wall,
           wall > 0 ? 100 * cpu / wall : 0.0);
    if (g->spsa)
        games_spsa_finish(g);
    if (g->positions) {
        char why[512];
        uint64_t kept = texel_writer_count(g->positions);
        if (texel_writer_close(g->positions, why, sizeof why) != TEXEL_OK)
            fprintf(stderr, "xqforge run: positions: %s\n", why);
        else
            printf("Positions: %llu quiet of %llu looked at, in %s/%s\n", (unsigned long long)kept,
                   (unsigned long long)g->positions_seen, g->dir, g->job->output.positions);
        g->positions = NULL;
    }
    // The PGN's last buffered bytes: a close error is a write error like any other.
    if (g->pgn) {
        if (fclose(g->pgn) != 0 && end.end != COORD_FAILED) {
            end.end = COORD_FAILED;
            snprintf(end.reason, sizeof end.reason, "cannot write the PGN: %s", strerror(errno));
        }
        g->pgn = NULL;
    }
    if (!games_write_result(g, &end) && end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "cannot write %.200s/%.200s", g->dir,
                 g->job->output.result);
    }
    // The report last, so it shows the end as decided above (a late write error included).
    games_report_refresh(g, &end, true);
    run_report_end(&g->rr, true);
    if (end.end == COORD_FAILED)
        fprintf(stderr, "xqforge run: failed: %s\n", end.reason);
    return coord_exit_status(&end);
}
