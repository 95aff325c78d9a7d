// SPDX-License-Identifier: MIT
// The fastchess-style summary block shared by `play` and `run`.
#pragma once

#include <stdio.h>

#include "match.h"
#include "stats.h"

/// The match so far as the statistics library sees it: W/D/L always, Ptnml with pairs.
MatchResults summary_results(const MatchTotals *t, bool pairs);

void summary_print(FILE *out, const char *name0, const char *name1, const MatchTotals *t,
                   bool pairs, const SprtParams *sprt, double minutes);
/// The same with the rate given: a resumed run's rate is of this session's games only.
void summary_print_rate(FILE *out, const char *name0, const char *name1, const MatchTotals *t,
                        bool pairs, const SprtParams *sprt, double games_per_min);
