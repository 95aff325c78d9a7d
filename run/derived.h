// SPDX-License-Identifier: MIT
// Inside run/ only: a derived run, a job made from another and run on the same ranks as a run
// of its own ([verify]'s SPRT after a tuning, a loop's step). The caller makes the job on
// every rank; run_derived then runs the session's steps 2 to 4 (session.h) for it: plan and
// bench (not for a collective kind), identity, outputs, and the roles. Every call on the link
// is made by every rank, in the same order.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "run_impl.h"

/// What makes one derived run differ from another; every member may be NULL (or false).
typedef struct {
    bool resume; // rank 0: its journal goes on (else it starts, or resume = auto says)
    /// Every rank, once every rank made the job: a check before the plan (0 or a status).
    int (*check)(Run *v, Link *link, char *why, size_t why_len);
    /// Rank 0, before it plays: what it is, on the console.
    void (*banner)(const Run *run, const Run *v, const void *ctx);
    /// Rank 0, after it played with status rc: the run's status.
    int (*done)(Run *run, Run *v, int rc, const void *ctx);
    const void *ctx;
} Derived;

/// A run to derive from run: the same flags, verbosity and bench; NULL when out of memory.
Run *run_derived_new(const Run *run);

/// Runs v (made from run on every rank: vrc 0, or the making's status with why) on the same
/// ranks, says a failure, and frees v. run takes v's bench (the first step's stands).
int run_derived(Run *run, Run *v, Link *link, int vrc, char *why, size_t why_len, const Derived *d);

/// Every rank moves to a fresh communicator between two runs on the same ranks, so that a
/// message the last one left in transit is never read by the next; false (said) on failure.
bool run_link_renew(Link *link);
