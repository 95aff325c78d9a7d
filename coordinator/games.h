// SPDX-License-Identifier: MIT
// The coordinator side of game jobs (kind sprt, match, spsa): every pair's games checked by
// the rules, tallied per pairing and in total, rated jointly (Bradley-Terry), written to the
// PGN, fed to SPSA and to a positions file; the SPRT verdict; the console, result.json and
// the report. Everything a user sees is derived from the journal's pairs: on resume the PGN,
// the positions, the SPSA trajectory and the report's history are rebuilt from it.
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "coord_job.h"
#include "coordinator.h"
#include "job.h"
#include "plan.h"

typedef struct GamesCoord GamesCoord;

typedef struct {
    const JobConfig *job;
    const GamePlan *plan;
    const char *dir; // the output directory
    uint64_t bench_signature;
    int ranks;
} GamesSetup;

/// Opens the outputs (the PGN is rebuilt into a temporary file during the replay); NULL with
/// why when they cannot be opened.
GamesCoord *games_coord_new(const GamesSetup *s, char *why, size_t why_len);
void games_coord_kind(GamesCoord *g, CoordKind *out);
/// After the journal's replay: the rebuilt PGN replaces the old one, the report starts.
bool games_coord_start(GamesCoord *g, const CoordState *st, const char *run_id, char *why,
                       size_t why_len);
/// The end: summary, verdict, result.json, final report. Returns the exit status (0 only
/// when the job did its work) and says why on stderr when it is not 0.
int games_coord_finish(GamesCoord *g, const CoordState *st);
void games_coord_free(GamesCoord *g);

/// Rank 0 of sprt, match and spsa jobs: the plan is a GamePlan (job/plan.h).
extern const CoordKindDef coord_games_def;
