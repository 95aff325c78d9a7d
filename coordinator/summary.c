// SPDX-License-Identifier: MIT
#include "summary.h"

MatchResults summary_results(const MatchTotals *t, bool pairs)
{
    MatchResults r = {0};
    r.has_wdl = true;
    r.wins = (uint64_t)t->wins;
    r.draws = (uint64_t)t->draws;
    r.losses = (uint64_t)t->losses;
    if (pairs) {
        // Only finished pairs are in the pentanomial; W/D/L then covers the same games.
        uint64_t n = 0;
        for (int i = 0; i < STATS_PENTA_NB; i++)
            n += r.ptnml[i] = (uint64_t)t->ptnml[i];
        r.has_ptnml = n > 0 && 2 * n == (uint64_t)t->games;
    }
    return r;
}

void summary_print(FILE *out, const char *name0, const char *name1, const MatchTotals *t,
                   bool pairs, const SprtParams *sprt, double minutes)
{
    summary_print_rate(out, name0, name1, t, pairs, sprt, minutes > 0 ? t->games / minutes : 0.0);
}

void summary_print_rate(FILE *out, const char *name0, const char *name1, const MatchTotals *t,
                        bool pairs, const SprtParams *sprt, double games_per_min)
{
    MatchResults r = summary_results(t, pairs);
    char block[2048] = "";
    if (t->games > 0)
        stats_format(&r, sprt, block, sizeof block);
    fprintf(out, "--------------------------------------------------\n");
    fprintf(out, "Results of %s vs %s (%d games, %.1f games/min):\n", name0, name1, t->games,
            games_per_min);
    fprintf(out, "%s", block);
    fprintf(out, "Terminations:");
    const char *sep = " ";
    for (int i = 1; i < TERM_NB; i++)
        if (t->terms[i]) {
            fprintf(out, "%s%s %d", sep, game_termination_name((Termination)i), t->terms[i]);
            sep = ", ";
        }
    fprintf(out, "\n--------------------------------------------------\n");
    fflush(out);
}
