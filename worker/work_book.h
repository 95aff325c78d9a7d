// SPDX-License-Identifier: MIT
// The worker side of book jobs: a unit is a number whose candidates games/bookgen makes (a
// pure function of the job and the number), sent as one BOOK message.
#pragma once

#include <pthread.h>

#include "bookgen.h"
#include "worker.h"

typedef struct {
    const BookgenConfig *gen;
    uint32_t rank;
    pthread_mutex_t lock; // the running totals below
    uint64_t candidates, nodes, busy_ms;
} BookWorker;

/// The WorkerKind over bw (initialised here; it must outlive the worker run).
void book_worker_kind(BookWorker *bw, const BookgenConfig *gen, uint32_t rank, WorkerKind *out);
void book_worker_destroy(BookWorker *bw);

/// The worker kind of book jobs; its plan starts with the BookgenConfig that rank 0's book
/// kind reads.
extern const WorkerKindDef work_book_def;
