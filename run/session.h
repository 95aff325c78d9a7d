// SPDX-License-Identifier: MIT
// The run layer (run/): between the command line (cli/: arguments, signals, MPI's start) and
// the ranks (coordinator/, worker/, over job/). A run session is one job run on every rank of
// a link, exactly as `xqforge run` runs it; a fleet (fleet.h) runs many, each a session.
//
// The protocol of a session, every rank calling run_session with the same arguments:
//  1. every rank loads the job; rank 0 resolves the commits of engines built from source and
//     broadcasts them (RunSources); every rank builds them (or takes them from the cache);
//  2. rank 0 checks the engines whole (job_check starts each once); every rank builds the
//     kind's plan and runs the bench (run_bench) that proves it runs the same build;
//  3. rank 0 computes the identity and prepares the output directory: its lock (another run
//     holding it sets *busy), and --resume's same-experiment check or --fresh's move aside.
//     Nothing is written before this step, so a job refused earlier leaves no trace;
//  4. every rank agrees that all are ready (else the first failure's status is every rank's),
//     the ready hook runs (the caller installs its signal handlers there), and each rank takes
//     its role: rank 0 coordinates, the others work; a collective kind fits on every rank; a
//     sequence kind (the loop) runs its steps' jobs as derived runs on the same ranks; a
//     tuning with [verify] runs its SPRT after it.
// The drain flag (stop) ends a run early and cleanly: no new units, those in flight finish
// within [job] drain_grace or are played again on resume, every result journaled. Nothing in
// run/ touches signals; coordinator/ and worker/ never include run/ (rank 0 of a run does not
// know whether it is in a fleet or a loop).
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "link.h"

/// A run's exit status: 0 it did its work (its limit or its verdict).
enum {
    RUN_EXIT_FAILED = 1,   // no usable engine, every worker refused, an output not writable
    RUN_EXIT_USAGE = 2,    // a bad job file (or bad usage of the command)
    RUN_EXIT_DRAINED = 130 // drained by the stop flag (a signal): resume it
};

/// The bench of this build at the signature depth (BENCH_DEPTH_SIGNATURE, the `Bench: N` of
/// commits): its node count is the signature every rank must share. XQFORGE_BENCH_DEPTH
/// changes it for one rank (how the tests make a rank to refuse).
bool run_bench(uint64_t *signature, uint64_t *nps);

/// What rank 0 resolves for every rank: each built engine's commit and tree (run_session's
/// first broadcast; tests/sim_rank.c takes it too, so its size lives here once).
typedef struct {
    int status; // 0: resolved; else rank 0's exit status (it says why)
    char commit[JOB_PLAYERS_MAX][JOB_GIT_ID_MAX], tree[JOB_PLAYERS_MAX][JOB_GIT_ID_MAX];
} RunSources;

/// One run of a job: the job file and overrides, where their relative paths are taken from,
/// what to do with an earlier journal, and the caller's flags and hook.
typedef struct {
    const char *path;
    const char *const *sets;
    int n_sets;
    const char *file_dir; // the file's relative paths are taken from here (NULL: its own dir)
    const char *set_dir;  // the overrides' (NULL: as typed, from the current directory)
    bool resume, fresh, resume_auto, verbose;
    atomic_bool *stop;              // the drain flag (required)
    const atomic_bool *signalled;   // the drain is a signal's (NULL: never)
    const atomic_bool *abort_now;   // the MPI launcher aborts: no drain grace (NULL: never)
    void (*ready)(void *ready_ctx); // step 4, once every rank is ready (NULL: none)
    void *ready_ctx;
    bool *busy; // rank 0: set when another run holds the output directory (NULL: not asked)
} RunArgs;

/// Runs one job on every rank of link (the protocol above): its exit status (0, 1, 2, 130);
/// why gets the reason of a failure this rank saw (already printed).
int run_session(Link *link, const RunArgs *a, char *why, size_t why_len);

/// Why kind k holds every rank for its whole length ("a fit on every rank", "its steps are
/// jobs of their own"), so that a fleet cannot share its ranks; NULL when its units can be.
const char *run_kind_whole(JobKind k);

/// The kind's plan built once and freed, as every rank builds it before a run: what run
/// would refuse with exit 2 after the job file (a missing openings file, a bad seed book).
int run_plan_check(const JobConfig *job, char *why, size_t why_len);
