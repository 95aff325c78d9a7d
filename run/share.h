// SPDX-License-Identifier: MIT
// How a fleet shares its worker ranks among tests (run/fleet.c; the formula in
// jobs/README.md): each test's internal throughput as fishtest's calc_itp computes it, the
// split of W ranks by it, and OpenBench's fairness band within which a test keeps its ranks.
#pragma once

#include <stdbool.h>

/// A test's internal throughput (fishtest's calc_itp): throughput (percent) times
/// tc_ratio^0.774 when tc_ratio > 1, and for an SPRT times (3 + llr clamped to [0, 2]) / 3
/// and, past 200,000 games, min(games / 200,000, 2). llr and games: NAN when unknown.
double share_itp(int throughput, double tc_ratio, bool sprt, double llr, double games);

/// Splits workers ranks among n tests in the fleet's order: the first min(n, workers) get
/// target[i] = workers x itp[i] / (sum of their itps), want[i] that rounded, at least 1, the
/// wants summing to workers (taken from the most served, the later first on a tie; given to
/// the least served, the earlier first); the others get target 0 and want 0.
void share_split(const double *itp, int n, int workers, double *target, int *want);

/// OpenBench's band: a test with have ranks keeps them while want has a share (> 0) and
/// have is within 25% of it.
bool share_fair(int have, int want);
