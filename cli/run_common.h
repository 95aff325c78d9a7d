// SPDX-License-Identifier: MIT
// What `xqforge run` computes the same way on every rank before the roles split: the bench
// that proves every rank runs the same build.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "link.h"

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

/// One run of a job (cmd_run.c): the job file and overrides, where their relative paths are
/// taken from, and what to do with an earlier journal.
typedef struct {
    const char *path;
    const char *const *sets;
    int n_sets;
    const char *file_dir; // the file's relative paths are taken from here (NULL: its own dir)
    const char *set_dir;  // the overrides' (NULL: as typed, from the current directory)
    bool resume, fresh, resume_auto, verbose;
    atomic_bool *stop; // the drain flag (NULL: the process's, set by the signals and run_stop)
    bool *busy;        // rank 0: set when another run holds the output directory (NULL: not asked)
} RunArgs;

/// Runs one job on every rank of link, exactly as `xqforge run` does (load and check, plan and
/// bench, identity, outputs, then the coordinator or a worker): its exit status (0, 1, 2,
/// 130); why gets the reason of a failure this rank saw (already printed).
int run_session(Link *link, const RunArgs *a, char *why, size_t why_len);

/// The kind's plan built once and freed, as every rank builds it before a run: what run
/// would refuse with exit 2 after the job file (a missing openings file, a bad seed book).
int run_plan_check(const JobConfig *job, char *why, size_t why_len);

/// The drain of the run in progress: set by SIGINT, SIGTERM and SIGUSR1 once their handlers
/// are installed (run_signals_install; run_session installs them), or by run_stop (a fleet
/// stopping one test). run_signalled: whether a signal did it (the process then ends).
void run_signals_install(void);
void run_stop(void);
bool run_signalled(void);
/// Clears a run_stop before the next run (a signal's drain stays).
void run_stop_clear(void);
