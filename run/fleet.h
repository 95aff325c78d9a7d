// SPDX-License-Identifier: MIT
// The fleet: one MPI allocation plays the tests of a queue (queue.h), several at once, each
// test exactly a run session (session.h) on a group of ranks of its own, its outputs in
// QUEUE/tests/ID/ and resume = auto.
//
// The protocol: every rank calls fleet_run with the same arguments once the queue is checked
// (queue_open) and rank 0 holds QUEUE/fleet.lock (fleet_lock: one fleet per queue). Rank 0
// coordinates, each running test in a thread of its own: every FLEET poll it reads the queue,
// starts the tests that may hold ranks on their shares (share.h), drains one test whose
// share is no longer fair, applies `xqforge stop` and `set`, and records each test's state in
// its test.json. It names a worker's next test by LINK_TAG_FLEET ("ID N R1..RN": the group,
// in the order every member passes to link_group) and ends the workers with "end". A test
// runs only when the queue trusts it (queue_test_allowed, on every rank, right before its
// job is read); a start that finds its output directory held by another run is tried again,
// backing off, and fails the test only after several in a row; a state that cannot be
// recorded (a full disk) drains every test and ends the fleet (exit 1). A signal (the drain
// flag with signalled set) drains every running test (each stays running, and a new fleet
// resumes it) and ends the fleet with 130.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "files.h"
#include "link.h"

enum {
    FLEET_RANKS_MAX = 1024, // ranks of a fleet (a group's list travels as text)
    FLEET_SETTLE_S = 30     // a test's seconds before it may be drained to rebalance
};

struct FleetArgs;

/// Runs one test on its group, every rank of it (coordinator_plays: rank 0 plays too, when it
/// coordinates this test alone); stop is the test's drain flag; *busy (rank 0, may be NULL)
/// set when another run holds its output directory. Its exit status, with why.
typedef int (*FleetRunTest)(Link *group, const struct FleetArgs *a, const char *id,
                            bool coordinator_plays, atomic_bool *stop, bool *busy, char *why,
                            size_t why_len);

typedef struct FleetArgs {
    const char *dir;         // the queue
    const char *const *sets; // job keys for every test, after the test's own (--set)
    int n_sets;
    bool until_empty;             // end when no test is left (else wait for new ones)
    bool verbose;                 // each test's coordinator diagnostics line
    double settle;                // seconds a test runs before it may be drained to rebalance
    atomic_bool *drain;           // the process's drain flag (required)
    const atomic_bool *signalled; // the drain is a signal's: the fleet ends (NULL: never)
    const atomic_bool *abort_now; // the MPI launcher aborts (NULL: never)
    FleetRunTest run_test;        // NULL: fleet_run_test (a unit test injects its own)
} FleetArgs;

/// Plays the queue (the protocol above): rank 0 coordinates, the others work. The exit
/// status: 0 (ended with until_empty), 1 (a state that cannot be recorded, or out of memory),
/// 130 (drained by a signal).
int fleet_run(Link *world, const FleetArgs *a);

/// The run of one test: its job.ini with its overrides, the fleet's, and its output
/// directory, as a run session (exactly `xqforge run` of that job).
int fleet_run_test(Link *group, const FleetArgs *a, const char *id, bool coordinator_plays,
                   atomic_bool *stop, bool *busy, char *why, size_t why_len);

/// Rank 0: QUEUE/fleet.lock taken for the fleet's life (flock, or the O_EXCL file where the
/// file system has no flock); with wait, polled each second until the fleet holding it ends.
/// false with why naming the holder (host, pid, start).
bool fleet_lock(const char *dir, bool wait, FilesLock *lock, char *why, size_t why_len);
