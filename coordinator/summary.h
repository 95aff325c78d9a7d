// SPDX-License-Identifier: MIT
// The fastchess-style summary block shared by `play` and `run`.
#pragma once

#include <stdio.h>

#include "match.h"
#include "stats.h"

/// The match so far as the statistics library sees it: W/D/L always, Ptnml with pairs.
MatchResults summary_results(const MatchTotals *t, bool pairs);

/// The fastchess-style block: "Results of NAME0 vs NAME1 (...)" (name0 the tested side, each
/// name possibly with its commit), then roles (a line saying whose every figure is; NULL:
/// none), the figures from name0's side, and the terminations.
void summary_print(FILE *out, const char *name0, const char *name1, const char *roles,
                   const MatchTotals *t, bool pairs, const SprtParams *sprt, double minutes);
/// The same with the rate given: a resumed run's rate is of this session's games only.
void summary_print_rate(FILE *out, const char *name0, const char *name1, const char *roles,
                        const MatchTotals *t, bool pairs, const SprtParams *sprt,
                        double games_per_min);

/// What run's progress line says (games_print_progress fills it in).
typedef struct {
    int games;            // played so far, the journal's included
    uint64_t games_total; // the game limit
    double games_per_min; // this session's rate (0: none yet, as at 0 games or after a resume)
    double games_left;    // expected games still to play (an SPRT's may be fewer than the limit's)
    bool verdict;         // the SPRT has decided: nothing is left to wait for
    int workers;          // live worker ranks
    const char *figures;  // ", Elo ..., LLR ..." or ""
} SummaryProgress;

/// The progress line, without the line end: "12/400 games, 5.1 games/min, ETA 76 min, Elo ...,
/// 1 worker". The ETA is left out without a rate, with nothing left, and after the verdict.
void summary_progress_text(const SummaryProgress *p, char *buf, size_t cap);
