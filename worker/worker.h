// SPDX-License-Identifier: MIT
// A worker rank's life, for every job kind: HELLO, then REQUEST / WORK / result until the
// coordinator says STOP, then BYE. The loop is generic; a WorkerKind says how one unit of
// work (a game pair, a book unit) is done and packed as its result message.
//
// Protocol and invariants:
// - The communication thread (the caller's) sends HELLO, asks for at most 2 units per work
//   thread in flight, sends every finished unit as one message under LINK_TAG_RESULT, and
//   polls LINK_TAG_ORDER.
// - WORK and STOP share that tag, so MPI delivers them in the order sent (it orders messages
//   per tag only). A WORK taken after a STOP (not one our coordinator sends) is dropped.
// - STOP "done" lets the queued and running units finish and be sent; STOP "interrupted" or
//   "error", and REFUSE, abandon them (the coordinator does not count them).
// - A failing work thread (an engine that cannot start) ends the worker: its reason goes
//   into BYE, and the exit status is 1. Units not finished are given back by the coordinator.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <msgpack.h>

#include "channel.h"
#include "job.h"
#include "wire.h"

typedef enum { WORKER_UNIT_OK, WORKER_UNIT_ABORTED, WORKER_UNIT_FAILED } WorkerUnitStatus;

/// A kind's hooks, set by field name (`.unit_run = ...`); a hook that may be NULL is left out.
typedef struct {
    void *ctx;
    /// Per work thread state (engines, scratch), or NULL with why.
    void *(*thread_new)(void *ctx, char *why, size_t why_len);
    void (*thread_free)(void *t);
    /// Does unit `unit` of `work`; on WORKER_UNIT_OK the packed result message is in out.
    /// abort rises when the coordinator says stop now.
    WorkerUnitStatus (*unit_run)(void *t, const WireWork *work, uint64_t unit,
                                 const atomic_bool *abort, msgpack_sbuffer *out, char *why,
                                 size_t why_len);
    /// Units done by this worker so far (games for game jobs), for BYE (may be NULL: 0).
    uint64_t (*done_count)(void *ctx);
} WorkerKind;

typedef struct {
    Channel *ch;
    int threads; // work threads (concurrency)
    uint64_t bench_signature, bench_nps;
    const char *version;
    const uint64_t *engine_bench; // each engine's bench signature (NULL: none), engine_count
    int engine_count;
} WorkerConfig;

/// What a worker rank's kind is made from.
typedef struct {
    const JobConfig *job;
    const void *plan; // the kind's plan (WorkerKindDef.plan_new)
    uint32_t rank;
    uint64_t bench_nps; // this rank's bench: [time] scale = bench sets its clocks by it
} WorkerSetup;

/// A worker kind as a plug-in: its module exports one, initialised by field name, and
/// run/session.c's RUN_KINDS table joins it to the job kind (and to the rank-0 kind, which
/// reads the same plan).
typedef struct {
    /// Every rank, before the run: what the kind's units are made of (the pairings and
    /// openings, the book generator's settings), a pure function of the job and the files it
    /// names. NULL with why (a bad openings file: exit 2); warn (may be NULL) hears what was
    /// skipped.
    void *(*plan_new)(const JobConfig *job, FILE *warn, char *why, size_t why_len);
    void (*plan_free)(void *plan); // NULL-safe
    /// This rank's kind over the setup (which must outlive the run), or NULL when out of
    /// memory; kind_free (NULL-safe) ends it after worker_run.
    void *(*kind_new)(const WorkerSetup *s, WorkerKind *out);
    void (*kind_free)(void *k);
} WorkerKindDef;

/// Runs the worker until the coordinator stops it. 0 when it ended as told, 1 when it
/// failed (its reason printed on stderr and sent in BYE).
int worker_run(const WorkerConfig *cfg, const WorkerKind *kind);
