// SPDX-License-Identifier: MIT
// Rank 0 of a job, from start to exit status: the kind's outputs opened, the journal replayed
// into them, the protocol loop run (coordinator.h), the final outputs written.
#pragma once

#include <stdatomic.h>

#include "bookgen.h"
#include "channel.h"
#include "job.h"
#include "journal.h"
#include "plan.h"

typedef struct {
    Channel *ch;
    const JobConfig *job;
    const char *dir;          // output directory (exists)
    const char *journal_path; // in dir
    JournalIdentity identity; // what defines the experiment (job/identity)
    uint64_t job_id;          // its hash: the job id on the wire
    uint64_t bench_signature;
    const atomic_bool *interrupted;
} CoordJob;

/// A game job (sprt, match, spsa) over the plan; returns the exit status.
int coord_job_games(const CoordJob *cj, const GamePlan *plan);
/// A book job; returns the exit status.
int coord_job_book(const CoordJob *cj, const BookgenConfig *gen, uint64_t units_total);
/// A datagen job; returns the exit status.
int coord_job_datagen(const CoordJob *cj);
