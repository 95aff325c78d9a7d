// SPDX-License-Identifier: MIT
// The fleet's plan (fleet.c applies it every poll): which waiting tests start now on how many
// of the free worker ranks, and which one running test is drained because its share is no
// longer fair. A pure decision over the fleet's candidates: no queue, no MPI, no clock, no
// console, so a unit test drives it exactly as the fleet does.
//
// The order (fleet_plan_sort): higher priority, then holding ranks now, then left running by
// an earlier fleet, then the lower id. The first W tests (W worker ranks) get shares
// (share_split of their share_itp: share.h), the others none. The tests waiting with a share
// start on the free ranks in that order, each on its share; the last of them gets what is
// left, unless a running test holds under 75% of its share (it is drained and takes them).
// Then, after those starts, at most one drain: none while one is in progress, none under a
// signal, none in a test's first settle seconds, none of a test within OpenBench's band of its
// share (share_fair); else a test with no share while a test with a share waits, the test most
// above its share while one with a share waits (or one runs under 75% of its share and no rank
// is free), or the first test below its share while ranks are free and none waits.
// With no worker rank (W = 0) rank 0 plays each test itself, one at a time, and never drains.
#pragma once

#include <stdbool.h>

/// A test the fleet may give ranks to: running (on ranks of its own), or waiting.
typedef struct {
    const char *id;   // the queue's id ("0001"): the order's last key
    int priority;     // higher first
    bool running;     // it holds ranks now
    bool was_running; // its record said running when the fleet took it up (an earlier fleet's)
    int throughput;   // percent of a fair share (share_itp's inputs, with the next four)
    double tc_ratio;  // its time control against 10+0.1
    bool sprt;        // an SPRT: its llr and games weigh
    double llr, games;
    int ranks;  // worker ranks it holds (running)
    double age; // seconds since it started (running)
    int ref;    // the caller's: which of its tests this is (the plan never reads it)
} FleetPlanTest;

typedef struct {
    const FleetPlanTest *tests; // in the fleet's order (fleet_plan_sort)
    int n;
    int workers;    // W, the fleet's worker ranks
    int free_ranks; // worker ranks no running test holds
    double settle;  // seconds a test runs before it may be drained (--settle)
    bool draining;  // a test is being drained now
    bool signalled; // a signal drains the whole fleet
} FleetPlanIn;

/// The decision, for tests[0..n) of its input.
typedef struct {
    int *want;          // [n]: each test's share of the worker ranks (0: none)
    int *start;         // [n]: the worker ranks a waiting test starts on now (-1: it does not)
    int drain;          // the running test drained, to start again on its share (-1: none)
    const char *reason; // why it is drained (static text; NULL with no drain)
} FleetPlan;

/// Sorts tests[0..n) into the fleet's order (above).
void fleet_plan_sort(FleetPlanTest *tests, int n);

/// Plans the fleet's next step (above) into *plan, whose arrays it allocates
/// (fleet_plan_destroy frees them); false when out of memory (nothing then to free).
bool fleet_plan(const FleetPlanIn *in, FleetPlan *plan);

/// Decides plan's drain again from its shares and starts: fleet_plan's last step, for a
/// caller whose start failed (it sets that start and the later ones to -1 first).
void fleet_plan_drain(const FleetPlanIn *in, FleetPlan *plan);

/// Frees the arrays of a plan (one of zeroes, or fleet_plan's).
void fleet_plan_destroy(FleetPlan *plan);
