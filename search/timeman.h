// SPDX-License-Identifier: MIT
// Time management: from the clock limits of `go`, a soft budget (do not start another
// iteration past it) and a hard budget (stop the search at once).
#pragma once

#include <stdbool.h>
#include <stdint.h>

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
/// Budget for the side to move; overhead_ms is kept in reserve per move for lag.
TimeBudget timeman_budget(const SearchLimits *l, Color us, int overhead_ms);
int64_t timeman_now_ms(void);
