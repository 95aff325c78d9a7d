// SPDX-License-Identifier: MIT
// The worker side of datagen jobs (kind = datagen): a unit is one or a few self-play games of
// the job's builtin engine, each from an opening ([openings]) followed by random legal plies
// (a pure function of the job's seed and the unit), with every quiet position the engine
// searched sent back as a training record (tuning/posdata.h) in one DATAGEN message.
#pragma once

#include <pthread.h>

#include "job.h"
#include "openings.h"
#include "worker.h"

typedef struct {
    const JobConfig *job;
    const Openings *openings;
    uint32_t rank;
    pthread_mutex_t lock; // the running totals below
    uint64_t games, records, nodes, busy_ms;
} DatagenWorker;

/// The WorkerKind over dw (initialised here; it must outlive the worker run).
void datagen_worker_kind(DatagenWorker *dw, const JobConfig *job, const Openings *openings,
                         uint32_t rank, WorkerKind *out);
void datagen_worker_destroy(DatagenWorker *dw);

/// The worker kind of datagen jobs; its plan is the job's Openings.
extern const WorkerKindDef work_datagen_def;

/// Which of datagen's filters skips a position of a finished game (the first that applies, in
/// WireDatagenFilter's order), or WIRE_DG_SEEN when none does and it is recorded: before the
/// end of the opening and its random plies or before min_ply; no score or a mate score; the
/// side to move in check (skip_in_check); the best move a capture (skip_capture); the soft
/// early-ply filter (datagen_early_keeps); a score of at least skip_wdl centipawns for the side
/// that lost, or against the side that won (skip_wdl > 0). red_result is the game's (0, 0.5, 1).
WireDatagenFilter datagen_filter(const JobConfig *job, const Board *b, const GameMove *m, int ply,
                                 int book_plies, uint64_t game, double red_result);

/// The soft early-ply filter: a position at ply < plies is kept with probability
/// (ply + 1) / (plies + 1), drawn from a hash of the seed, the game and the ply (the same on
/// every rank and every run); every later one is kept.
bool datagen_early_keeps(uint64_t seed, uint64_t game, int ply, int plies);
