// SPDX-License-Identifier: MIT
// The insides of the game jobs' coordinator, shared by games.c (results) and games_report.c
// (console, result.json, report). Not for other modules.
#pragma once

#include <stdio.h>

#include "search.h"
#include "bookprune.h"
#include "games.h"
#include "rating.h"
#include "run_report.h"
#include "spsa_tuner.h"
#include "stats.h"
#include "summary.h"
#include "texel.h"

enum { GAMES_PATH_MAX = 4200 };

/// What a rank's engines searched this session: the nodes (the rank's running total, as its
/// RESULTs say) over the moves they made (the counted games' moves past the book).
typedef struct {
    uint64_t nodes, moves;
} GamesRankPlay;

struct GamesCoord {
    const JobConfig *job;
    const GamePlan *plan;
    char dir[JOB_TEXT_MAX];
    char run_id[64];
    uint64_t bench_signature;
    int ranks, per_pair;
    SprtParams sprt;
    MatchTotals tot[PLAN_PAIRINGS_MAX]; // per pairing
    MatchTotals all;                    // every game of every pairing
    MatchTotals session;                // this session's games
    uint64_t *rank_games;               // per rank, the journal's included
    GamesRankPlay *rank_play;           // per rank, this session's
    RatingTable rating;
    FILE *pgn;
    char pgn_tmp[GAMES_PATH_MAX]; // the PGN being rebuilt from the journal ("" once renamed)
    GameRecord *rec;              // scratch
    Board *board;                 // scratch for positions
    Move moves[WIRE_MAX_PLIES];   // scratch for positions: one game's moves
    TexelWriter *positions;
    uint64_t positions_seen;
    SpsaConfig spsa_cfg;
    Weights spsa_weights; // the engine's configured weights (the SPSA base)
    SpsaTuner *spsa;
    FILE *spsa_csv;
    int64_t start_ms, last_progress_ms;
    double cpu_at_start;
    RunReport rr;
    int next_sample;          // games at which the history takes its next point
    PruneExit *opening_exits; // per opening of the plan: games, results (the report's section)
};

void games_path(const GamesCoord *g, const char *name, char *out, size_t len);
bool games_sprt(const GamesCoord *g, SprtResult *out);
double games_session_minutes(const GamesCoord *g);
double games_coordinator_cpu(const GamesCoord *g);

// games_report.c
void games_report_init(GamesCoord *g);
void games_report_begin(GamesCoord *g);
void games_report_history(GamesCoord *g);
void games_report_refresh(GamesCoord *g, const CoordState *st, bool final);
void games_progress(GamesCoord *g, const CoordState *st, bool force);
void games_print_summary(const GamesCoord *g);
/// Roles (games_roles.c): whether the run has them (one pairing of two engines: new, side 0,
/// against base), an engine's name as the summary shows it ("new 088b062 (HCE)" for one built
/// from source), the line saying whose figures these are, and the same for the JSON files.
bool games_has_roles(const GamesCoord *g);
void games_shown_name(const GamesCoord *g, int i, char *out, size_t cap);
void games_roles_text(const GamesCoord *g, char *out, size_t cap);
json_t *games_roles_json(const GamesCoord *g);
void games_print_ratings(const GamesCoord *g);
bool games_write_result(const GamesCoord *g, const CoordState *st);
void games_spsa_finish(GamesCoord *g);
/// SPSA's end of games: the count, draws and terminations, without plus's Elo.
void games_spsa_games_line(const GamesCoord *g);
