// SPDX-License-Identifier: MIT
#include "summary.h"

/// The figures a summary and the SPRT read: the games' W/D/L, or with pairs the finished
/// pairs' W/D/L and pentanomial counts.
MatchResults summary_results(const MatchTotals *t, bool pairs)
{
    MatchResults r = {0};
    r.has_wdl = true;
    r.wins = (uint64_t)t->wins;
    r.draws = (uint64_t)t->draws;
    r.losses = (uint64_t)t->losses;
    if (pairs) {
        // The figures are the finished pairs': a game whose pair is still being played
        // (concurrency > 1) waits for its partner, so W/D/L and the pentanomial always
        // describe the same games and the SPRT never falls back to the trinomial.
        uint64_t n = 0;
        for (int i = 0; i < STATS_PENTA_NB; i++)
            n += r.ptnml[i] = (uint64_t)t->ptnml[i];
        r.wins = (uint64_t)t->pair_wins;
        r.draws = (uint64_t)t->pair_draws;
        r.losses = (uint64_t)t->pair_losses;
        // Pentanomial only when the counts agree (two games per pair); else stats uses the
        // trinomial.
        r.has_ptnml = n > 0 && r.wins + r.draws + r.losses == 2 * n;
    }
    return r;
}

void summary_print(FILE *out, const char *name0, const char *name1, const char *roles,
                   const MatchTotals *t, bool pairs, const SprtParams *sprt, double minutes)
{
    summary_print_rate(out, name0, name1, roles, t, pairs, sprt,
                       minutes > 0 ? t->games / minutes : 0.0);
}

void summary_print_rate(FILE *out, const char *name0, const char *name1, const char *roles,
                        const MatchTotals *t, bool pairs, const SprtParams *sprt,
                        double games_per_min)
{
    MatchResults r = summary_results(t, pairs);
    char block[2048] = "";
    if (r.wins + r.draws + r.losses > 0)
        stats_format(&r, sprt, block, sizeof block);
    else if (t->games > 0)
        snprintf(block, sizeof block, "No game pair finished yet.\n");
    fprintf(out, "--------------------------------------------------\n");
    // Games played whose pair is not finished: shown, so the total does not look short.
    int waiting = t->games - (int)(r.wins + r.draws + r.losses);
    fprintf(out, "Results of %s vs %s (%d game%s, %.1f games/min", name0, name1, t->games,
            t->games == 1 ? "" : "s", games_per_min);
    if (waiting > 0)
        fprintf(out, "; %d game%s of unfinished pairs not yet counted", waiting,
                waiting == 1 ? "" : "s");
    fprintf(out, "):\n");
    if (roles && roles[0])
        fprintf(out, "%s\n", roles);
    fprintf(out, "%s", block);
    fprintf(out, "Terminations:");
    const char *sep = " ";
    // From 1: TERM_NONE is not a way a game ended.
    for (int i = 1; i < TERM_NB; i++)
        if (t->terms[i]) {
            fprintf(out, "%s%s %d", sep, game_termination_name((Termination)i), t->terms[i]);
            sep = ", ";
        }
    fprintf(out, "\n--------------------------------------------------\n");
    fflush(out);
}

void summary_progress_text(const SummaryProgress *p, char *buf, size_t cap)
{
    // No ETA without a rate of this session's own (none at 0 games, none just after a resume:
    // the journal's games took no time now) and none after the verdict (nothing is left).
    char eta[48] = "";
    if (!p->verdict && p->games_per_min > 0 && p->games_left > 0) {
        double min = p->games_left / p->games_per_min;
        if (min < 1)
            snprintf(eta, sizeof eta, ", ETA <1 min");
        else if (min < 120)
            snprintf(eta, sizeof eta, ", ETA %.0f min", min);
        else
            snprintf(eta, sizeof eta, ", ETA %.1f h", min / 60);
    }
    snprintf(buf, cap, "%d/%llu game%s, %.1f games/min%s%s, %d worker%s", p->games,
             (unsigned long long)p->games_total, p->games_total == 1 ? "" : "s", p->games_per_min,
             eta, p->figures ? p->figures : "", p->workers, p->workers == 1 ? "" : "s");
}
