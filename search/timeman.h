// SPDX-License-Identifier: MIT
// Time management: from the clock limits of `go`, a soft budget (do not start another
// iteration past it) and a hard budget (stop the search at once).
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "params.h"
#include "types.h"

typedef struct {
    int depth;              // 0: no limit
    uint64_t nodes;         // 0: no limit
    int64_t movetime;       // ms, 0: none
    int64_t time[COLOR_NB]; // ms left on each clock, -1: not given
    int64_t inc[COLOR_NB];
    int movestogo; // 0: sudden death
    bool infinite;
    int mate; // search for a mate in this many moves; 0: none
} SearchLimits;

typedef struct {
    int64_t soft_ms, hard_ms; // 0: unlimited
} TimeBudget;

void limits_init(SearchLimits *l);
/// Budget for the side to move; overhead_ms is kept in reserve per move for lag. The factors
/// are w's tm_* rows (search_params.def): by default soft = clock / 35 + 3/4 of the increment,
/// hard = 4 x soft, at most 40% of the clock (90% when one move is left).
TimeBudget timeman_budget(const SearchLimits *l, Color us, int overhead_ms, const Weights *w);
int64_t timeman_now_ms(void);

/// Test knob XQFORGE_SLOWDOWN=k (an integer 2..100; read once per process; anything else: 1):
/// the search spends about k times as long on every node, so a rank's bench nps and its play
/// are slowed alike (tests/run_scale.sh simulates slow hardware with it). Not for real runs.
int timeman_slowdown(void);

/// The slowdown's busy work, called by a search thread every few nodes: spins (k - 1) times
/// the thread's CPU time since since_ns (when its previous call ended; 0: none yet) and
/// returns the thread's CPU time when it ends.
int64_t timeman_slow(int64_t since_ns, int k);
