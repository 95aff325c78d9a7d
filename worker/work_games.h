// SPDX-License-Identifier: MIT
// The worker side of game jobs: a unit is a game pair (two games on one opening with colours
// swapped, or one game without repeat), played by engines kept per thread between pairs, and
// sent as a RESULT holding that one pair. An SPSA step attached to the WORK sets "plus" and
// "minus" weights first.
#pragma once

#include <stdatomic.h>

#include "englog.h"
#include "plan.h"
#include "worker.h"

typedef struct {
    const GamePlan *plan;
    uint32_t rank;
    atomic_uint_fast64_t games; // played by this worker, for RESULT and BYE
    double scale;               // [time] scale: clocks x this (job_time_scale); 0 or 1: as written
    atomic_uint_fast64_t nodes; // searched in this worker's counted pairs, for RESULT
    // [output] engine_log: each external engine's log on this rank, by job engine index (NULL:
    // none), shared by the rank's threads; opened on the engine's first start
    EngineLog *logs[JOB_PLAYERS_MAX];
} GamesWorker;

/// The WorkerKind over gw (which must outlive the worker run).
void games_worker_kind(GamesWorker *gw, WorkerKind *out);

/// The worker kind of sprt, match and spsa jobs; its plan is a GamePlan (job/plan.h), which
/// rank 0's games kind reads too.
extern const WorkerKindDef work_games_def;
