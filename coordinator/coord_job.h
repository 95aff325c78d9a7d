// SPDX-License-Identifier: MIT
// Rank 0 of a job, from start to exit status, for every kind that hands out units: the kind
// made from its CoordKindDef, the journal opened and replayed into it, the protocol loop run
// (coordinator.h), the kind's final outputs written. A kind is a plug-in: its module exports
// one CoordKindDef, and run/session.c's RUN_KINDS table joins it to the job kind; nothing
// here names a kind.
#pragma once

#include <stdatomic.h>

#include "channel.h"
#include "coordinator.h"
#include "job.h"
#include "journal.h"

/// What a kind's rank-0 state is made from.
typedef struct {
    const JobConfig *job;
    const void *plan; // the worker kind's plan (run/session.c: RUN_KINDS), built on every rank
    const char *dir;  // the output directory (exists)
    uint64_t bench_signature;
    int ranks; // the channel's size
} CoordSetup;

/// A rank-0 kind as a plug-in (the analogue of curl's protocol handler), initialised by field
/// name.
typedef struct {
    /// The kind's state over s, with its CoordKind in *out (start and finish included); NULL
    /// with why (an output that cannot be opened): the run then only stops its workers.
    void *(*kind_new)(const CoordSetup *s, CoordKind *out, char *why, size_t why_len);
    void (*kind_free)(void *ctx); // NULL-safe
} CoordKindDef;

typedef struct {
    Channel *ch;
    const JobConfig *job;
    const void *plan;         // as CoordSetup.plan
    uint64_t units_total;     // unit ids are 0..units_total-1 (job_units_total)
    const char *dir;          // output directory (exists)
    const char *journal_path; // in dir
    JournalIdentity identity; // what defines the experiment (job/identity)
    uint64_t job_id;          // its hash: the job id on the wire
    uint64_t bench_signature;
    const atomic_bool *interrupted;
    const atomic_bool *hurry; // the launcher kills the ranks soon (coord_set_hurry); may be NULL
    bool verbose;             // run --verbose: the "Coordinator:" diagnostics line on the console
    const uint64_t *engine_bench; // rank 0's bench of each engine (JOB_PLAYERS_MAX; NULL: none)
} CoordJob;

/// Runs the job's kind on rank 0 until its workers are gone; returns the exit status (0 the
/// job is complete, 1 it failed, 130 interrupted, as the kind's finish says).
int coord_job_run(const CoordJob *cj, const CoordKindDef *def);
