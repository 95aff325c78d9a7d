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

/// Whether a position of a finished game is recorded: past the opening and its random plies,
/// at or after min_ply, a searched score that is not a mate, the side to move not in check,
/// and the best move not a capture.
bool datagen_keeps(const Board *b, const GameMove *m, int ply, int book_plies, int min_ply);
