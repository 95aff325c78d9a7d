// SPDX-License-Identifier: MIT
// Inside run/ only: the run every rank holds (Run), how each kind runs (RunKind, the table in
// session.c), and the steps of a session that a derived run ([verify]'s SPRT, a loop's step)
// and the loop's driver take again on the same ranks.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "coord_job.h"
#include "files.h"
#include "job.h"
#include "link.h"
#include "session.h"
#include "worker.h"

struct Run;

/// A collective kind: every rank fits together over the link, rank 0's result counts.
typedef int (*RunCollective)(Link *link, const JobConfig *job, const char *dir, uint64_t job_id,
                             const atomic_bool *stop);
/// A sequence kind: runs jobs of other kinds one after another on the same ranks (the loop).
typedef int (*RunDriver)(struct Run *run, Link *link);
/// Moves aside what a sequence kind keeps beside its own outputs (--fresh); false with why.
typedef bool (*RunMoveAside)(const char *dir, const char *moved, char *why, size_t why_len);

/// How a job kind runs: a worker kind and a rank-0 kind that hand out units over the wire, a
/// collective fit, or a driver of other kinds' jobs. The one place that joins kinds to ranks
/// (curl's protocol table): nothing above run/ names a kind.
typedef struct {
    const WorkerKindDef *worker;
    const CoordKindDef *coord;
    RunCollective collective;
    RunDriver driver;
    RunMoveAside move_aside; // with driver: its steps' directories (NULL: none)
} RunKind;

/// Every rank's view of the job.
typedef struct Run {
    JobConfig job;
    const RunKind *kind;
    char dir[JOB_TEXT_MAX];
    char journal[2 * JOB_TEXT_MAX + 2];
    void *plan; // the worker kind's plan
    uint64_t units_total, job_id, bench_signature, bench_nps;
    uint64_t engine_bench[JOB_PLAYERS_MAX]; // engines built from source (0: unchecked)
    int threads;
    Channel ch;
    char *identity; // rank 0: the experiment's identity, as text
    size_t identity_len;
    FilesLock lock;               // rank 0: the output directory's lock, held for the whole run
    bool verbose;                 // --verbose: the coordinator's diagnostics line on the console
    atomic_bool *stop;            // the drain flag its coordinator reads (a fleet's test: its own)
    const atomic_bool *abort_now; // the launcher's abort: the drain's grace ends at once
    bool resumed;                 // rank 0: the run went on from its journal or checkpoint
    bool busy;                    // rank 0: another run holds the output directory's lock
} Run;

/// The row of kind k.
const RunKind *run_kind(JobKind k);
/// Game threads per worker rank (the job's concurrency, or the node's cores shared).
int run_threads(const JobConfig *job, Link *l);
/// Every rank: the kind's plan and the bench. 0, or an exit status with why.
int run_prepare(Run *run, bool warn, char *why, size_t why_len);
/// Rank 0: the identity's text, hash and job id. 0, or an exit status with why.
int run_identity(Run *run, char *why, size_t why_len);
/// Rank 0: the output directory, its lock, and what to do with an earlier journal.
int run_outputs(Run *run, bool resume, bool fresh, char *why, size_t why_len);
/// Rank 0's part and a worker's, over run->ch.
int run_coordinator(Run *run);
int run_worker(Run *run);

/// Every rank, after a tuning job: [verify]'s SPRT of the tuned weights (derived.c); rc is the
/// tuning's status on this rank.
int run_verify(Run *run, Link *link, int rc);
/// kind = loop: its generations' steps, one derived run each (loop_driver.c).
int run_loop(Run *run, Link *link);
