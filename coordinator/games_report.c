// SPDX-License-Identifier: MIT
// What a game job shows: the progress line, the summary, the joint rating, result.json and
// the report. Every figure comes from the tallies, which come from the journal's pairs.
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "games_impl.h"
#include "report_code.h"
#include "timeman.h"
#include "upload.h"

// JSON has no NaN nor infinity (an Elo before any game, a ratio over zero): they become null.
static json_t *finite_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/// Games per minute of this session only: a resumed run's journaled games took no time now
/// and would make the rate (and the ETA) look better than it is.
static double session_rate(const GamesCoord *g)
{
    double mins = games_session_minutes(g);
    return mins > 0 ? g->session.games / mins : 0.0;
}

/// Side 0 is the pairing's first engine ("new", whose W/D/L every figure counts), 1 "base".
static const char *pair_name(const GamesCoord *g, int k, int side)
{
    return g->plan->pairings[k].m.players[side].name;
}

/// The rated engines: the job's, or "plus" and "minus" for SPSA.
static const char *player_name(const GamesCoord *g, int i)
{
    if (g->job->kind == JOB_SPSA)
        return i == 0 ? "plus" : "minus";
    return g->job->players[i].cfg.name;
}

/// running, interrupted, failed, the SPRT verdict, no verdict, or finished.
/// "no verdict": an SPRT that played all its games without reaching a bound.
static const char *state_name(const GamesCoord *g, const CoordState *st, bool final)
{
    if (!final)
        return "running";
    if (st->end == COORD_FAILED)
        return "failed";
    if (st->end == COORD_INTERRUPTED)
        return "interrupted";
    SprtResult s;
    if (games_sprt(g, &s))
        return s.decision == SPRT_CONTINUE ? "no verdict" : sprt_decision_name(s.decision);
    return "finished";
}

// ---- Console -------------------------------------------------------------------------------

void games_progress(GamesCoord *g, const CoordState *st, bool force)
{
    int64_t now = timeman_now_ms();
    bool tty = run_console_is_terminal();
    // A terminal gets a line rewritten every second; a log file one whole line every 10 s.
    if (!g->start_ms || (!force && now - g->last_progress_ms < (tty ? 1000 : 10000)))
        return;
    g->last_progress_ms = now;
    double rate = session_rate(g);
    // The games still to play: the game limit's, or fewer for an SPRT (sprt_games_left: from the
    // LLR's drift so far toward the bound it heads to); none once it has its verdict.
    double left = (double)((st->units_total - st->units_done) * (uint64_t)g->per_pair);
    bool verdict = false;
    char extra[300] = "";
    // One Elo (and one LLR) only for a single pairing: a round robin has no single difference to
    // show on one line; its figures are in the summary and the report.
    if (g->spsa) {
        // SPSA: the steps applied; plus and minus differ every pair, so no Elo between them.
        snprintf(extra, sizeof extra, ", iteration %lld of %lld",
                 (long long)spsa_tuner_iterations(g->spsa), (long long)g->spsa_cfg.iterations);
    } else if (g->plan->pairing_count == 1) {
        MatchResults r = summary_results(&g->tot[0], g->plan->repeat);
        EloEstimate e = {0};
        stats_elo(&r, &e);
        char elo[160] = "";
        int n = 0;
        if (e.estimate != STATS_ESTIMATE_NONE) { // no pair finished yet: no Elo to show
            stats_elo_text(&e, 1, "+/-", elo, sizeof elo);
            n = snprintf(extra, sizeof extra, ", Elo %s", elo);
        }
        SprtResult s;
        if (games_sprt(g, &s) && n >= 0 && (size_t)n < sizeof extra) {
            snprintf(extra + n, sizeof extra - (size_t)n, ", LLR %.2f (%.2f, %.2f)%s%s", s.llr,
                     s.lower, s.upper, s.decision != SPRT_CONTINUE ? ", " : "",
                     s.decision != SPRT_CONTINUE ? sprt_decision_name(s.decision) : "");
            verdict = s.decision != SPRT_CONTINUE;
            double need = sprt_games_left(&s, r.wins + r.draws + r.losses);
            if (need >= 0 && need < left)
                left = need;
        }
    }
    SummaryProgress p = {.games = g->all.games,
                         .games_total = st->units_total * (uint64_t)g->per_pair,
                         .games_per_min = rate,
                         .games_left = left,
                         .verdict = verdict,
                         .workers = st->workers_live,
                         .figures = extra};
    char line[512];
    summary_progress_text(&p, line, sizeof line);
    printf("%s%s%s", tty ? "\r" : "", line, tty ? "   " : "\n");
    fflush(stdout);
}

void games_print_summary(const GamesCoord *g)
{
    double rate = session_rate(g);
    if (games_has_roles(g)) {
        char n[PLAYER_NAME_MAX + 300], b[PLAYER_NAME_MAX + 300], roles[3 * PLAYER_NAME_MAX + 160];
        games_shown_name(g, 0, n, sizeof n);
        games_shown_name(g, 1, b, sizeof b);
        games_roles_text(g, roles, sizeof roles);
        summary_print_rate(stdout, n, b, roles, &g->tot[0], g->plan->repeat,
                           g->job->sprt.enabled ? &g->sprt : NULL, rate);
        return;
    }
    for (int k = 0; k < g->plan->pairing_count; k++)
        summary_print_rate(stdout, pair_name(g, k, 0), pair_name(g, k, 1), NULL, &g->tot[k],
                           g->plan->repeat, g->job->sprt.enabled ? &g->sprt : NULL, rate);
    if (g->plan->pairing_count > 1)
        printf("Total: %d game%s in %d pairings (%d draw%s), %.1f games/min\n", g->all.games,
               g->all.games == 1 ? "" : "s", g->plan->pairing_count, g->all.draws,
               g->all.draws == 1 ? "" : "s", rate);
}

/// The engine the joint rating puts at 0: [job] anchor (job_kinds.c checked that it names an
/// engine), else the first engine (a gauntlet's base).
static int anchor_index(const GamesCoord *g)
{
    for (int i = 0; g->job->anchor[0] && i < g->plan->players && i < g->job->player_count; i++)
        if (!strcmp(g->job->anchor, g->job->players[i].cfg.name))
            return i;
    return 0;
}

/// Fits the joint rating around the job's anchor.
static bool fit_ratings(const GamesCoord *g, RatingResult *rr)
{
    return rating_fit(&g->rating, anchor_index(g), rr);
}

/// What the rating says above its figures: the model, the anchor and the prior.
static void rating_basis_text(const GamesCoord *g, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "Bradley-Terry over all games, Elo relative to the anchor %s = 0; prior: %d virtual "
             "draw%s added to every pair that met",
             player_name(g, anchor_index(g)), RATING_PRIOR_DRAWS,
             RATING_PRIOR_DRAWS == 1 ? "" : "s");
}

/// Where an engine's rating sorts: out of reach above the anchor first, then the rated ones by
/// Elo, then those without a finite estimate below, then the ones not linked to the anchor.
static int kind_rank(RatingKind k)
{
    return k == RATING_ABOVE       ? 0
           : k == RATING_FINITE    ? 1
           : k == RATING_UNBOUNDED ? 2
           : k == RATING_BELOW     ? 3
                                   : 4;
}

/// Engine indices best first: by kind_rank, then by the fitted Elo.
/// An insertion sort (a few players, RATING_MAX_PLAYERS at most); stable, so engines of equal
/// Elo keep the job's order, in the console, result.json and the report alike.
static void rating_order(const GamesCoord *g, const RatingResult *rr, int *order)
{
    int n = g->plan->players;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = order[j], b = order[j - 1];
            int ka = kind_rank(rr->kind[a]), kb = kind_rank(rr->kind[b]);
            if (ka > kb || (ka == kb && rr->elo[a] <= rr->elo[b]))
                break;
            order[j] = b;
            order[j - 1] = a;
        }
}

/// An engine's rating as it may be read, into buf[cap]: "55.2 +/- 80.1" (pm), "0 (anchor)", or
/// why there is no number. An engine that met only the anchor and has no finite estimate gets
/// its match's own text (stats_elo_text: the one-sided bound against the anchor).
static void rating_text(const GamesCoord *g, const RatingResult *rr, int i, const char *pm,
                        char *buf, size_t cap)
{
    int a = rr->anchor;
    const RatingTable *t = &g->rating;
    switch (rr->kind[i]) {
    case RATING_FINITE:
        if (i == a)
            snprintf(buf, cap, "0 (anchor)");
        else
            snprintf(buf, cap, "%.1f %s %.1f", rr->elo[i], pm, rr->elo_error[i]);
        return;
    case RATING_UNLINKED:
        snprintf(buf, cap, "not connected to the anchor (no games link them)");
        return;
    case RATING_UNBOUNDED:
        snprintf(buf, cap,
                 "no finite estimate (linked to the anchor only through engines without one)");
        return;
    default: break;
    }
    uint64_t with_anchor = t->wins[i][a] + t->wins[a][i] + t->draws[i][a];
    if (with_anchor == rr->games[i]) {
        MatchResults r = {.has_wdl = true,
                          .wins = t->wins[i][a],
                          .draws = t->draws[i][a],
                          .losses = t->wins[a][i]};
        EloEstimate e = {0};
        if (stats_elo(&r, &e) == STATS_OK && e.estimate == STATS_ESTIMATE_BOUND) {
            stats_elo_text(&e, 1, pm, buf, cap);
            return;
        }
    }
    snprintf(
        buf, cap, "%s",
        rr->kind[i] == RATING_ABOVE
            ? "no finite estimate (above the anchor: its side never lost a point to this one's)"
            : "no finite estimate (below the anchor: never scored a point against its side)");
}

/// One row of the cross-table: a pairing's games, its first engine's W/D/L and score, draws.
typedef struct {
    int a, b;
    uint64_t games, wins, draws, losses;
    double score, draw_ratio; // fractions in [0, 1]; 0 without games
} CrossRow;

/// The cross-table's row of pairing k, from the rating's table (every counted game is there).
static CrossRow cross_row(const GamesCoord *g, int k)
{
    const Pairing *pg = &g->plan->pairings[k];
    const RatingTable *t = &g->rating;
    CrossRow c = {.a = pg->a,
                  .b = pg->b,
                  .wins = t->wins[pg->a][pg->b],
                  .draws = t->draws[pg->a][pg->b],
                  .losses = t->wins[pg->b][pg->a]};
    c.games = c.wins + c.draws + c.losses;
    if (c.games) {
        c.score = ((double)c.wins + 0.5 * (double)c.draws) / (double)c.games;
        c.draw_ratio = (double)c.draws / (double)c.games;
    }
    return c;
}

void games_print_ratings(const GamesCoord *g)
{
    RatingResult rr;
    char basis[300];
    rating_basis_text(g, basis, sizeof basis);
    // No fit while the anchor has no games: said plainly rather than printed as made-up numbers.
    if (!fit_ratings(g, &rr)) {
        printf("Joint rating: the anchor %s has no games yet\n", player_name(g, rr.anchor));
        return;
    }
    int order[RATING_MAX_PLAYERS];
    rating_order(g, &rr, order);
    printf("Joint rating (%s):\n", basis);
    printf("Rank Name                          Games   Points  Elo\n");
    for (int k = 0; k < g->plan->players; k++) {
        int i = order[k];
        char text[200];
        rating_text(g, &rr, i, "+/-", text, sizeof text);
        printf("%4d %-28s %6llu %8.1f  %s\n", k + 1, player_name(g, i),
               (unsigned long long)rr.games[i], rr.points[i], text);
    }
    printf("Cross-table (score of the pairing's first engine):\n");
    printf("%-40s %7s %7s %7s\n", "Pairing", "Score", "Games", "Draws");
    for (int k = 0; k < g->plan->pairing_count; k++) {
        CrossRow c = cross_row(g, k);
        char label[2 * PLAYER_NAME_MAX + 8];
        snprintf(label, sizeof label, "%s vs %s", player_name(g, c.a), player_name(g, c.b));
        if (c.games)
            printf("%-40s %6.1f%% %7llu %6.1f%%\n", label, 100 * c.score,
                   (unsigned long long)c.games, 100 * c.draw_ratio);
        else
            printf("%-40s %7s %7d %7s\n", label, "-", 0, "-");
    }
}

void games_spsa_games_line(const GamesCoord *g)
{
    const MatchTotals *t = &g->all;
    printf("Games: %d (%d draw%s), %.1f games/min; terminations:", t->games, t->draws,
           t->draws == 1 ? "" : "s", session_rate(g));
    const char *sep = " ";
    // From 1: TERM_NONE is not a way a game ended.
    for (int i = 1; i < TERM_NB; i++)
        if (t->terms[i]) {
            printf("%s%s %d", sep, game_termination_name((Termination)i), t->terms[i]);
            sep = ", ";
        }
    printf("%s\n", t->games ? "" : " none");
}

void games_spsa_finish(GamesCoord *g)
{
    const SpsaConfig *cfg = &g->spsa_cfg;
    const double *theta = spsa_tuner_theta(g->spsa);
    spsa_tuner_csv_row(g->spsa);
    Weights w = g->spsa_weights;
    printf("SPSA: %lld of %lld iterations applied\n", (long long)spsa_tuner_iterations(g->spsa),
           (long long)cfg->iterations);
    printf("%-28s %9s %9s %9s\n", "parameter", "start", "tuned", "change");
    for (int i = 0; i < cfg->count; i++) {
        // The engine's weights are integers: each tuned value is rounded to the nearest. A long
        // list is cut to 40 rows only when there are more than 50, so the cut always hides more
        // than 10.
        w.v[cfg->params[i].id] = (int32_t)lround(theta[i]);
        if (i < 40 || cfg->count <= 50)
            printf("%-28s %9.2f %9.2f %+9.2f\n", cfg->params[i].name, cfg->params[i].start,
                   theta[i], theta[i] - cfg->params[i].start);
    }
    if (cfg->count > 50)
        printf("... %d more in the trajectory file\n", cfg->count - 40);
    char path[GAMES_PATH_MAX];
    games_path(g, g->job->spsa.weights, path, sizeof path);
    if (weights_save(&w, path) != PARAMS_OK)
        fprintf(stderr, "xqforge run: cannot write %s\n", path);
    else
        printf("Tuned weights: %s (load with params = %s)\n", path, path);
}

// ---- JSON pieces ---------------------------------------------------------------------------

static json_t *totals_json(const MatchTotals *t, bool pairs, bool sides)
{
    json_t *terms = json_object(), *ptnml = json_array();
    // From 1: TERM_NONE is not a way a game ends. Only terminations that happened are listed.
    for (int i = 1; i < TERM_NB; i++)
        if (t->terms[i])
            json_object_set_new(terms, game_termination_name((Termination)i),
                                json_integer(t->terms[i]));
    for (int i = 0; i < STATS_PENTA_NB; i++)
        json_array_append_new(ptnml, json_integer(t->ptnml[i]));
    json_t *o =
        json_pack("{s:i, s:i, s:o, s:o, s:i, s:i, s:i, s:i}", "games", t->games, "draws", t->draws,
                  "ptnml", pairs ? ptnml : (json_decref(ptnml), json_null()), "terminations", terms,
                  "crashes", t->terms[TERM_CRASH], "time_losses", t->terms[TERM_TIME_FORFEIT],
                  "illegal_moves", t->terms[TERM_ILLEGAL_MOVE], "stalls", t->terms[TERM_STALL]);
    // Wins and losses are of the pairing's first engine; over several pairings they have no
    // single side, so the total says decisive games instead.
    if (sides) {
        json_object_set_new(o, "wins", json_integer(t->wins));
        json_object_set_new(o, "losses", json_integer(t->losses));
    } else {
        json_object_set_new(o, "decisive", json_integer(t->wins + t->losses));
    }
    return o;
}

/// Elo, nElo, LOS and score of one tally: from the pentanomial when games come in pairs
/// (STATS.md), else from W/D/L.
static json_t *elo_json(const MatchTotals *t, bool pairs)
{
    MatchResults r = summary_results(t, pairs);
    EloEstimate e = {0};
    stats_elo(&r, &e);
    char text[200];
    stats_elo_text(&e, 1, "+/-", text, sizeof text);
    // The first six keep their meaning (fishtest's formulas, whatever the sample); estimate,
    // elo_bound and text say which of them mean something (REPORT.md).
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:s}", "elo", finite_or_null(e.elo),
                     "error", finite_or_null(e.elo_error), "nelo", finite_or_null(e.nelo),
                     "nelo_error", finite_or_null(e.nelo_error), "los", finite_or_null(e.los),
                     "score", finite_or_null(e.score), "estimate", stats_estimate_name(e.estimate),
                     "elo_bound",
                     e.estimate == STATS_ESTIMATE_BOUND ? finite_or_null(e.elo_bound) : json_null(),
                     "text", text);
}

/// Each pairing with its totals and Elo, in the plan's order.
static json_t *pairings_json(const GamesCoord *g)
{
    json_t *list = json_array();
    for (int k = 0; k < g->plan->pairing_count; k++)
        json_array_append_new(list, json_pack("{s:s, s:s, s:o, s:o}", "new", pair_name(g, k, 0),
                                              "base", pair_name(g, k, 1), "totals",
                                              totals_json(&g->tot[k], g->plan->repeat, true), "elo",
                                              elo_json(&g->tot[k], g->plan->repeat)));
    return list;
}

/// The joint Bradley-Terry rating of every engine, best first, with its error bars relative
/// to the anchor; elo and elo_error are null where there is no finite estimate (status, text).
static json_t *ratings_json(const GamesCoord *g)
{
    RatingResult rr;
    json_t *list = json_array();
    bool fitted = fit_ratings(g, &rr);
    int order[RATING_MAX_PLAYERS];
    if (fitted)
        rating_order(g, &rr, order);
    for (int k = 0; k < g->plan->players; k++) {
        int i = fitted ? order[k] : k;
        bool finite = fitted && rr.kind[i] == RATING_FINITE;
        char text[200] = "not rated: the anchor has no games";
        if (fitted)
            rating_text(g, &rr, i, "+/-", text, sizeof text);
        json_array_append_new(
            list, json_pack("{s:s, s:o, s:o, s:I, s:f, s:s, s:s}", "name", player_name(g, i), "elo",
                            finite ? finite_or_null(rr.elo[i]) : json_null(), "elo_error",
                            finite ? finite_or_null(rr.elo_error[i]) : json_null(), "games",
                            (json_int_t)rr.games[i], "points", rr.points[i], "status",
                            fitted ? rating_kind_name(rr.kind[i]) : "not rated", "text", text));
    }
    return list;
}

/// What the ratings are relative to and the prior they assume (REPORT.md: rating).
static json_t *rating_basis_json(const GamesCoord *g)
{
    char basis[300];
    rating_basis_text(g, basis, sizeof basis);
    return json_pack("{s:s, s:s, s:i, s:s}", "model", "Bradley-Terry", "anchor",
                     player_name(g, anchor_index(g)), "prior_draws", RATING_PRIOR_DRAWS, "text",
                     basis);
}

/// The cross-table: one row per pairing, its first engine's score (REPORT.md: crosstable).
static json_t *crosstable_json(const GamesCoord *g)
{
    json_t *list = json_array();
    for (int k = 0; k < g->plan->pairing_count; k++) {
        CrossRow c = cross_row(g, k);
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:o, s:o}", "engine",
                            player_name(g, c.a), "opponent", player_name(g, c.b), "games",
                            (json_int_t)c.games, "wins", (json_int_t)c.wins, "draws",
                            (json_int_t)c.draws, "losses", (json_int_t)c.losses, "points",
                            (double)c.wins + 0.5 * (double)c.draws, "score",
                            c.games ? json_real(c.score) : json_null(), "draw_ratio",
                            c.games ? json_real(c.draw_ratio) : json_null()));
    }
    return list;
}

/// The SPRT's hypotheses and its current state; NULL for a job without one. The verdict text
/// is "no verdict" rather than "continue": this is what stays when the run ends there.
static json_t *sprt_json(const GamesCoord *g)
{
    SprtResult s;
    if (!games_sprt(g, &s))
        return NULL;
    return json_pack("{s:f, s:f, s:f, s:f, s:s, s:o, s:f, s:f, s:s}", "elo0", g->sprt.elo0, "elo1",
                     g->sprt.elo1, "alpha", g->sprt.alpha, "beta", g->sprt.beta, "model",
                     sprt_model_name(g->sprt.model), "llr", finite_or_null(s.llr), "lower", s.lower,
                     "upper", s.upper, "decision",
                     s.decision == SPRT_CONTINUE ? "no verdict" : sprt_decision_name(s.decision));
}

bool games_write_result(const GamesCoord *g, const CoordState *st)
{
    const JobConfig *job = g->job;
    if (!job->output.result[0])
        return true;
    // A single pairing is written flat (new, base, W/L, Elo at the top level); several pairings
    // get a "pairings" list, and the top-level totals cover every game.
    bool one = g->plan->pairing_count == 1;
    bool pairs = g->plan->repeat;
    json_t *o = totals_json(one ? &g->tot[0] : &g->all, pairs, one);
    json_object_set_new(o, "schema", json_integer(2));
    json_object_set_new(o, "job", json_string(job->name));
    json_object_set_new(o, "kind", json_string(job_kind_name(job->kind)));
    json_object_set_new(o, "run_id", json_string(g->run_id));
    json_object_set_new(o, "state", json_string(state_name(g, st, true)));
    if (st->end == COORD_FAILED)
        json_object_set_new(o, "reason", json_string(st->reason));
    json_object_set_new(o, "rules",
                        json_string(rules_set_name(g->plan->pairings[0].m.game.rules.set)));
    json_object_set_new(o, "pairs_total", json_integer((json_int_t)st->units_total));
    json_object_set_new(o, "pairs_done", json_integer((json_int_t)st->units_done));
    if (one) {
        json_object_set_new(o, "new", json_string(pair_name(g, 0, 0)));
        json_object_set_new(o, "base", json_string(pair_name(g, 0, 1)));
        if (games_has_roles(g))
            json_object_set_new(o, "roles", games_roles_json(g));
        json_t *elo = elo_json(&g->tot[0], pairs);
        json_object_update(o, elo);
        json_decref(elo);
    } else {
        json_object_set_new(o, "pairings", pairings_json(g));
    }
    if (g->plan->players > 2) {
        json_object_set_new(o, "ratings", ratings_json(g));
        json_object_set_new(o, "rating", rating_basis_json(g));
        json_object_set_new(o, "crosstable", crosstable_json(g));
    }
    json_t *s = sprt_json(g);
    if (s) {
        json_object_set_new(o, "llr", json_incref(json_object_get(s, "llr")));
        json_object_set_new(o, "lower", json_incref(json_object_get(s, "lower")));
        json_object_set_new(o, "upper", json_incref(json_object_get(s, "upper")));
        json_object_set_new(o, "decision", json_incref(json_object_get(s, "decision")));
        json_decref(s);
    }
    json_object_set_new(o, "interrupted", json_boolean(st->end == COORD_INTERRUPTED));
    json_object_set_new(o, "version", json_string(XQFORGE_VERSION));
    char path[GAMES_PATH_MAX];
    games_path(g, job->output.result, path, sizeof path);
    bool ok = run_write_json(path, o);
    json_decref(o);
    return ok;
}

// ---- The report ----------------------------------------------------------------------------

/// One engine as the job resolved it: how it is started, its options and its clock.
static json_t *engine_json(const GamesCoord *g, int i)
{
    const JobPlayer *p = &g->job->players[i];
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
                     builtin ? json_integer((json_int_t)g->bench_signature) : json_null());
}

/// The job as resolved (file and overrides), without secrets: URLs lose user info and query,
/// the token appears only as where it is read from.
static json_t *job_json(const GamesCoord *g)
{
    const JobConfig *j = g->job;
    json_t *engines = json_array(), *urls = json_array();
    for (int i = 0; i < j->player_count; i++)
        json_array_append_new(engines, engine_json(g, i));
    for (int i = 0; i < j->report.url_count; i++) {
        char u[JOB_TEXT_MAX];
        upload_url_for_log(j->report.urls[i], u, sizeof u);
        json_array_append_new(urls, json_string(u));
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:i, s:b, s:i, s:b, s:o, s:{s:s, s:b, s:i, s:I}, s:{s:{s:b, s:i, s:i, s:i}, "
        "s:{s:b, s:b, s:i, s:i}, s:i}, s:{s:s, s:s, s:s, s:s}}",
        "name", j->name, "kind", job_kind_name(j->kind), "rounds", j->rounds, "repeat", j->repeat,
        "concurrency", j->concurrency, "round_robin", j->round_robin, "engines", engines,
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
    json_t *s = sprt_json(g);
    if (s) {
        json_object_del(s, "llr");
        json_object_del(s, "lower");
        json_object_del(s, "upper");
        json_object_del(s, "decision");
        json_object_set_new(o, "sprt", s);
    }
    return o;
}

// The plots are declared once, in the order the page shows them; later reports only add
// points and bars. The Elo plot's bound at 0 marks equal strength.
void games_report_init(GamesCoord *g)
{
    char title[JOB_TEXT_MAX + 32];
    snprintf(title, sizeof title, "%s: %s", job_kind_name(g->job->kind), g->job->name);
    run_report_begin(&g->rr, g->job, g->dir, "", title);
    Report *r = g->rr.report;
    if (!r)
        return;
    if (g->job->sprt.enabled)
        report_plot(r, "llr", REPORT_PLOT_LINE, "SPRT log-likelihood ratio", "games", "LLR");
    // A plot holds REPORT_SERIES_MAX lines: the title says when the other pairings are left out.
    char elo_title[96] = "Elo with its 95% interval";
    if (g->plan->pairing_count > REPORT_SERIES_MAX)
        snprintf(elo_title, sizeof elo_title,
                 "Elo of each pairing's first engine (the first %d of %d pairings)",
                 REPORT_SERIES_MAX, g->plan->pairing_count);
    else if (g->plan->pairing_count > 1)
        snprintf(elo_title, sizeof elo_title, "Elo of each pairing's first engine");
    report_plot(r, "elo", REPORT_PLOT_LINE, elo_title, "games", "Elo");
    report_plot_bound(r, "elo", "0", 0);
    report_plot_settle(r, "elo", true); // the first games' Elo of +-1500 would squash the rest
    report_plot(r, "terminations", REPORT_PLOT_BARS, "Results by termination (all games)", "games",
                "");
    if (games_has_roles(g))
        report_set(r, "roles", games_roles_json(g));
    json_t *code = report_code_json(g->job); // git runs once, not at every refresh
    if (code)
        report_set(r, "code", code);
}

/// One history point per finished game pair (a game without repeat): LLR, Elo and its band;
/// on replay too, so a resumed run's plots hold the whole run.
void games_report_history(GamesCoord *g)
{
    Report *r = g->rr.report;
    if (!r || g->all.games < g->next_sample || g->all.games == 0)
        return;
    // One point per pair (a game without repeat): the figures move once per counted unit, so
    // denser points would only repeat them; report.c's halving bounds a long run's history.
    g->next_sample = g->all.games + g->per_pair;
    // A plot holds REPORT_SERIES_MAX series: further pairings get no Elo line (their figures are in
    // the facts and the record).
    for (int k = 0; k < g->plan->pairing_count && k < REPORT_SERIES_MAX; k++) {
        MatchResults mr = summary_results(&g->tot[k], g->plan->repeat);
        EloEstimate e = {0};
        // No point without a finite Elo (a score of 0 or 1: fishtest's clamp would draw +-1200),
        // and no band without an interval (StatsEstimate).
        if (g->tot[k].games == 0 || stats_elo(&mr, &e) != STATS_OK ||
            e.estimate == STATS_ESTIMATE_BOUND || e.estimate == STATS_ESTIMATE_NONE)
            continue;
        double half = e.estimate == STATS_ESTIMATE_INTERVAL ? e.elo_error : 0;
        if (g->plan->pairing_count == 1) {
            report_series_add_band(r, "elo", "Elo", g->tot[k].games, e.elo, e.elo - half,
                                   e.elo + half);
        } else {
            char name[2 * PLAYER_NAME_MAX + 8];
            snprintf(name, sizeof name, "%s vs %s", pair_name(g, k, 0), pair_name(g, k, 1));
            report_series_add(r, "elo", name, g->tot[k].games, e.elo);
        }
    }
    SprtResult s;
    if (games_sprt(g, &s)) {
        report_series_add(r, "llr", "LLR", g->tot[0].games, s.llr);
        // Set again each time under the same labels (moved, not added): the bounds are constant.
        report_plot_bound(r, "llr", "H1 accepted", s.upper);
        report_plot_bound(r, "llr", "H0 accepted", s.lower);
    }
}

/// The factor of rank k's clocks: the worker's own computation (job_time_scale) from its HELLO.
static double rank_scale(const GamesCoord *g, const CoordRank *k)
{
    const JobConfig *j = g->job;
    return job_time_scale(j->scale.bench ? j->scale.reference_nps : 0, k->bench_nps);
}

/// The facts of the page's summary tables (the record holds the same numbers).
static void report_facts(GamesCoord *g, const CoordState *st, const char *state)
{
    Report *r = g->rr.report;
    const MatchTotals *all = &g->all;
    // Rebuilt from scratch each time, in a fixed order, so that a line that no longer holds (a
    // "Why", a rank that left without games) does not linger.
    report_facts_clear(r);
    report_fact(r, "Result", "State", "%s", state);
    if (st->end == COORD_FAILED)
        report_fact(r, "Result", "Why", "%s", st->reason);
    if (g->plan->pairing_count == 1) {
        const MatchTotals *t = &g->tot[0];
        MatchResults mr = summary_results(t, g->plan->repeat);
        EloEstimate e = {0};
        stats_elo(&mr, &e);
        report_fact(r, "Result", "Engines", "%s vs %s", pair_name(g, 0, 0), pair_name(g, 0, 1));
        if (games_has_roles(g))
            report_fact(r, "Result", "Roles",
                        "new = %s, base = %s (chosen by %s); every figure is %s's",
                        g->job->players[0].cfg.name, g->job->players[1].cfg.name,
                        job_roles_text(g->job->roles), g->job->players[0].cfg.name);
        char elo[200], nelo[80];
        stats_elo_text(&e, 1, "\u00b1", elo, sizeof elo);
        stats_nelo_text(&e, 1, "\u00b1", nelo, sizeof nelo);
        report_fact(r, "Result", "Elo", "%s; nElo %s", elo, nelo);
        report_fact(r, "Result", "LOS", "%.1f%%", 100 * e.los);
        report_fact(r, "Result", "Games (W/D/L)", "%d (%d / %d / %d)", t->games, t->wins, t->draws,
                    t->losses);
        if (g->plan->repeat)
            report_fact(r, "Result", "Ptnml (0-2)", "%d, %d, %d, %d, %d", t->ptnml[0], t->ptnml[1],
                        t->ptnml[2], t->ptnml[3], t->ptnml[4]);
    } else {
        report_fact(r, "Result", "Games", "%d in %d pairings (%d draws)", all->games,
                    g->plan->pairing_count, all->draws);
        for (int k = 0; k < g->plan->pairing_count; k++) {
            const MatchTotals *t = &g->tot[k];
            char label[2 * PLAYER_NAME_MAX + 8];
            snprintf(label, sizeof label, "%s vs %s", pair_name(g, k, 0), pair_name(g, k, 1));
            report_fact(r, "Pairings (W/D/L of the first)", label, "%d games (%d / %d / %d)",
                        t->games, t->wins, t->draws, t->losses);
        }
    }
    RatingResult rr;
    if (g->plan->players > 2 && fit_ratings(g, &rr)) {
        int order[RATING_MAX_PLAYERS];
        rating_order(g, &rr, order);
        char basis[300];
        rating_basis_text(g, basis, sizeof basis);
        report_fact(r, "Joint rating (Elo)", "Basis", "%s", basis);
        for (int k = 0; k < g->plan->players; k++) {
            int i = order[k];
            char label[PLAYER_NAME_MAX + 8], text[200];
            snprintf(label, sizeof label, "%d. %s", k + 1, player_name(g, i));
            rating_text(g, &rr, i, "\u00b1", text, sizeof text);
            report_fact(r, "Joint rating (Elo)", label, "%s; %.1f points in %llu games", text,
                        rr.points[i], (unsigned long long)rr.games[i]);
        }
    }
    // The cross-table: a row per pairing, as in result.json's crosstable.
    for (int k = 0; g->plan->players > 2 && k < g->plan->pairing_count; k++) {
        CrossRow c = cross_row(g, k);
        char label[2 * PLAYER_NAME_MAX + 8];
        snprintf(label, sizeof label, "%s vs %s", player_name(g, c.a), player_name(g, c.b));
        if (c.games)
            report_fact(r, "Cross-table (score of the first engine)", label,
                        "%.1f%% in %llu games, %.1f%% draws (W/D/L %llu / %llu / %llu)",
                        100 * c.score, (unsigned long long)c.games, 100 * c.draw_ratio,
                        (unsigned long long)c.wins, (unsigned long long)c.draws,
                        (unsigned long long)c.losses);
        else
            report_fact(r, "Cross-table (score of the first engine)", label, "no games yet");
    }
    SprtResult s;
    if (games_sprt(g, &s)) {
        report_fact(r, "SPRT", "LLR", "%.2f (%.2f, %.2f)", s.llr, s.lower, s.upper);
        report_fact(r, "SPRT", "Hypotheses", "[%g, %g] %s Elo, alpha %g, beta %g", g->sprt.elo0,
                    g->sprt.elo1, sprt_model_name(g->sprt.model), g->sprt.alpha, g->sprt.beta);
        // While running the SPRT continues; once the run is done without a bound reached it
        // is "no verdict", as in result.json.
        report_fact(r, "SPRT", "Decision", "%s",
                    s.decision == SPRT_CONTINUE
                        ? (st->end == COORD_DONE ? "no verdict" : "continue")
                        : sprt_decision_name(s.decision));
    }
    char tc[64];
    game_format_tc(&g->plan->pairings[0].m.game.tc[0], tc, sizeof tc);
    double minutes = games_session_minutes(g);
    report_fact(r, "Run", "Run id", "%s", g->run_id);
    report_fact(r, "Run", "Rules", "%s", rules_set_name(g->plan->pairings[0].m.game.rules.set));
    report_fact(r, "Run", "Time control", "%s", tc);
    report_fact(r, "Run", "Pairs", "%llu of %llu (%llu from the journal)",
                (unsigned long long)st->units_done, (unsigned long long)st->units_total,
                (unsigned long long)st->units_at_start);
    report_fact(r, "Run", "This session", "%.1f min, %d games, %.1f games/min", minutes,
                g->session.games, session_rate(g));
    report_fact(r, "Run", "Failures", "%d crashes, %d time losses, %d illegal moves, %d stalls",
                all->terms[TERM_CRASH], all->terms[TERM_TIME_FORFEIT],
                all->terms[TERM_ILLEGAL_MOVE], all->terms[TERM_STALL]);
    const CoordLoad *ld = &st->load;
    if (ld->wall_s > 0) // coord_run has ended: the "Coordinator:" line of run --verbose
        report_fact(r, "Run", "Coordinator",
                    "%llu results in %.2f s, CPU %.3f s, fdatasync %.3f s, journal %llu syncs "
                    "%llu bytes, peak memory %ld KiB",
                    (unsigned long long)ld->results, ld->wall_s, ld->cpu_s, ld->journal.sync_s,
                    (unsigned long long)ld->journal.syncs, (unsigned long long)ld->journal.bytes,
                    ld->peak_kib);
    for (int w = 0; w < st->ranks; w++) {
        const CoordRank *k = &st->rank[w];
        if (k->state == COORD_RANK_UNKNOWN && !g->rank_games[w])
            continue;
        char label[WIRE_MAX_TEXT + 32], scale[32] = "", npm[48] = "";
        snprintf(label, sizeof label, "rank %d on %s", w, k->host[0] ? k->host : "?");
        if (g->job->scale.bench && k->bench_nps)
            snprintf(scale, sizeof scale, ", time x%.3f", rank_scale(g, k));
        if (g->rank_play[w].moves)
            snprintf(npm, sizeof npm, ", %.0f nodes/move",
                     (double)g->rank_play[w].nodes / (double)g->rank_play[w].moves);
        report_fact(r, "Workers", label, "%llu games, %llu nodes/s%s%s%s%s",
                    (unsigned long long)g->rank_games[w], (unsigned long long)k->bench_nps, scale,
                    npm, k->error[0] ? ": " : "", k->error);
    }
}

/// What the run cost rank 0 (coord_run's figures once it ended; `run --verbose` prints them as
/// the "Coordinator:" line).
static json_t *load_json(const CoordLoad *ld)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:I, s:I, s:I}", "results", (json_int_t)ld->results,
                     "wall_s", ld->wall_s, "cpu_s", ld->cpu_s, "fdatasync_s", ld->journal.sync_s,
                     "journal_syncs", (json_int_t)ld->journal.syncs, "journal_bytes",
                     (json_int_t)ld->journal.bytes, "peak_memory_kib", (json_int_t)ld->peak_kib);
}

/// Every rank that said HELLO or has games in the tallies (from the journal included).
static json_t *workers_json(const GamesCoord *g, const CoordState *st)
{
    // Indexed by CoordRankState: the same order as its enum in coordinator.h.
    static const char *const states[] = {"unknown", "member", "refused", "left"};
    json_t *workers = json_array();
    for (int w = 0; w < st->ranks; w++) {
        const CoordRank *k = &st->rank[w];
        if (k->state == COORD_RANK_UNKNOWN && !g->rank_games[w])
            continue;
        const GamesRankPlay *rp = &g->rank_play[w];
        json_t *o = json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:s}", "rank", w, "host", k->host,
                              "state", states[k->state], "games", (json_int_t)g->rank_games[w],
                              "pairs", (json_int_t)k->units, "bench_nps", (json_int_t)k->bench_nps,
                              "error", k->error);
        // The clock factor of this rank (1 without [time] scale = bench; null: no HELLO), and
        // what its engines searched this session.
        json_object_set_new(o, "scale", k->bench_nps ? json_real(rank_scale(g, k)) : json_null());
        json_object_set_new(o, "nodes", json_integer((json_int_t)rp->nodes));
        json_object_set_new(o, "moves", json_integer((json_int_t)rp->moves));
        json_object_set_new(o, "nodes_per_move",
                            rp->moves ? json_real((double)rp->nodes / (double)rp->moves)
                                      : json_null());
        json_array_append_new(workers, o);
    }
    return workers;
}

/// The iteration whose c_k and a_k the report shows: the next step's (iterations applied),
/// the last one's once every iteration is applied, where c_k = c_end and R_k = r_end.
static int64_t spsa_shown_k(const GamesCoord *g)
{
    int64_t k = spsa_tuner_iterations(g->spsa), last = g->spsa_cfg.iterations - 1;
    return k < last ? k : last;
}

/// Each parameter as STATS.md defines it: start, value (theta now), range, c_k, a_k and
/// R_k at spsa_shown_k, and the c_end and r_end they end at.
static json_t *spsa_json(const GamesCoord *g)
{
    const SpsaConfig *cfg = &g->spsa_cfg;
    const double *theta = spsa_tuner_theta(g->spsa);
    int64_t k = spsa_shown_k(g);
    json_t *params = json_array();
    for (int i = 0; i < cfg->count; i++) {
        const SpsaParam *p = &cfg->params[i];
        json_array_append_new(
            params, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "name", p->name,
                              "start", p->start, "value", theta[i], "min", p->min, "max", p->max,
                              "c", spsa_c_k(cfg, i, k), "a", spsa_a_k(cfg, i, k), "r",
                              spsa_r_k(cfg, i, k), "c_end", p->c_end, "r_end", p->r_end));
    }
    return json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:o}", "iterations",
                     (json_int_t)spsa_tuner_iterations(g->spsa), "iterations_total",
                     (json_int_t)cfg->iterations, "k", (json_int_t)k, "A",
                     cfg->a_ratio * (double)cfg->iterations, "alpha", cfg->alpha, "gamma",
                     cfg->gamma, "params", params);
}

static json_t *spsa_columns(void)
{
    return json_pack("[s, s, s, s, s, s, s]", "parameter", "start", "current", "min", "max", "c",
                     "a");
}

/// The page's parameter table: the figures of spsa_json, as text.
static json_t *spsa_rows(const GamesCoord *g)
{
    const SpsaConfig *cfg = &g->spsa_cfg;
    const double *theta = spsa_tuner_theta(g->spsa);
    int64_t k = spsa_shown_k(g);
    json_t *rows = json_array();
    for (int i = 0; i < cfg->count; i++) {
        const SpsaParam *p = &cfg->params[i];
        char v[6][32];
        snprintf(v[0], sizeof v[0], "%.2f", p->start);
        snprintf(v[1], sizeof v[1], "%.2f", theta[i]);
        snprintf(v[2], sizeof v[2], "%g", p->min);
        snprintf(v[3], sizeof v[3], "%g", p->max);
        snprintf(v[4], sizeof v[4], "%.3g", spsa_c_k(cfg, i, k));
        snprintf(v[5], sizeof v[5], "%.4g", spsa_a_k(cfg, i, k));
        json_array_append_new(
            rows, json_pack("[s, s, s, s, s, s, s]", p->name, v[0], v[1], v[2], v[3], v[4], v[5]));
    }
    return rows;
}

/// The SPSA state and one plot per parameter (the first PLOTS of them), read back from the
/// trajectory CSV, which holds the history this process would otherwise have to keep.
static void report_spsa(GamesCoord *g, Report *r)
{
    // ROWS: the CSV gets a row every iterations / 500 iterations (games.c), so about 500 rows; 1024
    // is room for those with a margin, and equals REPORT_POINTS_MAX, so nothing is thinned.
    enum { PLOTS = 16, ROWS = 1024 };
    const SpsaConfig *cfg = &g->spsa_cfg;
    int n = cfg->count < PLOTS ? cfg->count : PLOTS, rows = 0;
    SvgPoint *pts = malloc(sizeof *pts * ROWS * (size_t)n);
    char path[GAMES_PATH_MAX], line[65536];
    games_path(g, g->job->spsa.trajectory, path, sizeof path);
    // Flushed first: the rows written so far must be in the file before it is read back.
    if (g->spsa_csv)
        fflush(g->spsa_csv);
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
    report_set(r, "spsa", spsa_json(g));
    report_table(r, "spsa", "SPSA parameters", spsa_columns(), spsa_rows(g));
    for (int i = 0; pts && i < n; i++) {
        char id[80];
        snprintf(id, sizeof id, "spsa.%s", cfg->params[i].name);
        report_plot(r, id, REPORT_PLOT_LINE, cfg->params[i].name, "iteration", "value");
        report_plot_bound(r, id, "start", cfg->params[i].start);
        report_series_set(r, id, cfg->params[i].name, pts + (size_t)i * ROWS, (size_t)rows);
    }
    free(pts);
}

void games_report_refresh(GamesCoord *g, const CoordState *st, bool final)
{
    Report *r = g->rr.report;
    if (!r)
        return;
    const char *state = state_name(g, st, final);
    bool pairs = g->plan->repeat, one = g->plan->pairing_count == 1;
    report_set(r, "state", json_string(state));
    if (final && st->end == COORD_FAILED)
        report_set(r, "reason", json_string(st->reason));
    report_set(r, "job", job_json(g));
    report_set(r, "rules", json_string(rules_set_name(g->plan->pairings[0].m.game.rules.set)));
    char tc[64];
    game_format_tc(&g->plan->pairings[0].m.game.tc[0], tc, sizeof tc);
    report_set(r, "time_control", json_string(tc));
    report_set(r, "pairs",
               json_pack("{s:I, s:I}", "total", (json_int_t)st->units_total, "done",
                         (json_int_t)st->units_done));
    // totals: every game of every pairing (what the PGN holds).
    report_set(r, "totals", totals_json(one ? &g->tot[0] : &g->all, pairs, one));
    if (one)
        report_set(r, "elo", elo_json(&g->tot[0], pairs));
    json_t *s = sprt_json(g);
    if (s)
        report_set(r, "sprt", s);
    if (!one)
        report_set(r, "pairings", pairings_json(g));
    if (g->plan->players > 2) {
        report_set(r, "ratings", ratings_json(g));
        report_set(r, "rating", rating_basis_json(g));
        report_set(r, "crosstable", crosstable_json(g));
    }
    report_set(r, "workers", workers_json(g, st));
    double minutes = games_session_minutes(g);
    report_set(r, "timings",
               json_pack("{s:f, s:i, s:f, s:I, s:f, s:o}", "duration_s", minutes * 60,
                         "games_this_session", g->session.games, "games_per_minute",
                         session_rate(g), "games_from_journal",
                         (json_int_t)(g->all.games - g->session.games), "coordinator_cpu_s",
                         games_coordinator_cpu(g), "coordinator",
                         final ? load_json(&st->load) : json_null()));
    for (int i = 1; i < TERM_NB; i++)
        if (g->all.terms[i])
            report_bar_set(r, "terminations", game_termination_name((Termination)i),
                           g->all.terms[i]);
    report_facts(g, st, state);
    if (!g->spsa)
        bookprune_report(r, g->opening_exits, &g->plan->openings);
    if (g->spsa)
        report_spsa(g, r);
    // The PGN goes with the final report only: it is complete then, and a large file is uploaded
    // once rather than every interval.
    run_report_publish(&g->rr, final, final ? g->job->output.pgn : NULL);
}

void games_report_begin(GamesCoord *g) { (void)g; }
