// SPDX-License-Identifier: MIT
// What every rank derives from a game job (kind sprt, match, spsa): the pairings of its
// engines, the openings, and how unit ids map to games. Unit (pair) id = round * pairings +
// pairing, so every pairing plays each round's opening, and a pair replayed on any rank is
// the same pair.
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "job.h"
#include "match.h"
#include "openings.h"

enum { PLAN_PAIRINGS_MAX = JOB_PLAYERS_MAX * (JOB_PLAYERS_MAX - 1) / 2 };

/// One pairing of the job's engines (a gauntlet or round robin has several): its match
/// configuration with the two engines as players 0 and 1.
typedef struct {
    int a, b; // engine indices in the job
    MatchConfig m;
} Pairing;

typedef struct {
    Pairing pairings[PLAN_PAIRINGS_MAX];
    int pairing_count;
    int players; // engines rated jointly (2 for spsa: plus and minus)
    bool repeat;
    uint64_t pairs_total; // rounds x pairings
    Openings openings;
} GamePlan;

/// Builds the pairings (two engines play each other; more play a gauntlet, the first against
/// each other one, or a round robin; spsa: the engine against itself as "plus" and "minus")
/// and loads the openings (bad lines reported on warn, may be NULL). false with why on a bad
/// openings file.
bool plan_build(const JobConfig *job, FILE *warn, GamePlan *out, char *why, size_t why_len);
void plan_free(GamePlan *p);

static inline int plan_pairing_of(const GamePlan *p, uint64_t pair_id)
{
    return (int)(pair_id % (uint64_t)p->pairing_count);
}
static inline uint64_t plan_round_of(const GamePlan *p, uint64_t pair_id)
{
    return pair_id / (uint64_t)p->pairing_count;
}
