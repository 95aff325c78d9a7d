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

/// Initialises bw: no totals yet (work_doe.c's kind shares it).
void book_worker_init(BookWorker *bw, const BookgenConfig *gen, uint32_t rank);
/// Adds a finished unit (res, filled but for the totals; nodes searched since t0, ms) to the
/// rank's running totals, copies them into res and packs it into out; false with why.
bool book_worker_send(BookWorker *bw, WireBookResult *res, uint64_t nodes, int64_t t0,
                      msgpack_sbuffer *out, char *why, size_t why_len);
/// For BYE: the candidates (or scored children) this rank made; ctx is a BookWorker.
uint64_t book_worker_done(void *ctx);
/// The WorkerKind over bw (initialised here; it must outlive the worker run).
void book_worker_kind(BookWorker *bw, const BookgenConfig *gen, uint32_t rank, WorkerKind *out);
void book_worker_destroy(BookWorker *bw);

/// The worker kind of book jobs; its plan starts with the BookgenConfig that rank 0's book
/// kind reads.
extern const WorkerKindDef work_book_def;
