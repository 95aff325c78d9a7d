// SPDX-License-Identifier: MIT
// Report pages with N series per line plot, for tests/report_plots.sh to render in headless
// Chromium: an Elo plot like a gauntlet's (the first games' +-1500, long pairing names, two
// pairings of identical engines on one curve), an LLR plot with its bounds, a Texel loss
// whose first epochs are the highest, a datagen plot of one point per series, a bar chart
// of counts and one of long weight names. usage: report_pages N DIR (N 1..REPORT_SERIES_MAX):
// writes DIR/report.json and DIR/report.html.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

/// Pairing k's Elo after `games` games: noisy at first, then settling near its own level;
/// pairings 1 and 2 (when there are 3 or more) have the same results, hence the same curve.
static double elo_at(int k, int games)
{
    int level = k == 2 ? 1 : k;
    return (level * 23 - 60) + 1500.0 * (level % 2 ? -1 : 1) / games +
           9 * sin(games / 17.0 + level);
}

static void plots(Report *r, int n)
{
    static const char *const engines[] = {"xqforge-dev",     "cannon-plus",   "horse-plus",
                                          "fairy-stockfish", "chariot-heavy", "advisor-light",
                                          "pikafish-depth6", "elephant-eye",  "soldier-push"};
    report_plot(r, "llr", REPORT_PLOT_LINE, "SPRT log-likelihood ratio", "games", "LLR");
    report_plot_bound(r, "llr", "H1 accepted", 2.94);
    report_plot_bound(r, "llr", "H0 accepted", -2.94);
    report_plot(r, "elo", REPORT_PLOT_LINE,
                n == 1 ? "Elo with its 95% interval" : "Elo of each pairing's first engine",
                "games", "Elo");
    report_plot_bound(r, "elo", "0", 0);
    report_plot_settle(r, "elo", true);
    for (int games = 2; games <= 400; games += 2) {
        report_series_add(r, "llr", "LLR", games, 0.012 * games - 0.5 * sin(games / 30.0));
        for (int k = 0; k < n; k++) {
            double e = elo_at(k, games), half = 600.0 / sqrt(games);
            char name[96];
            snprintf(name, sizeof name, "%s vs %s", engines[0], engines[k + 1]);
            if (n == 1)
                report_series_add_band(r, "elo", "Elo", games, e, e - half, e + half);
            else
                report_series_add(r, "elo", name, games, e);
        }
    }
    // A loss falls fast over its first epochs: those are the highest points of the plot.
    report_plot(r, "loss", REPORT_PLOT_LINE, "Loss per epoch (mean squared error)", "epoch",
                "loss");
    for (int epoch = 0; epoch <= 40; epoch++)
        for (int k = 0; k < n; k++) {
            char name[32] = "loss";
            if (k)
                snprintf(name, sizeof name, "validation %d", k);
            report_series_add(r, "loss", name, epoch, 0.09 + 0.004 * k + 0.2 / (1 + epoch));
        }
    // A short datagen run reports once: one point per series, at a fraction of a minute.
    report_plot(r, "positions", REPORT_PLOT_LINE, "Positions accepted", "minutes", "positions");
    for (int k = 0; k < n; k++) {
        char name[32] = "accepted";
        if (k)
            snprintf(name, sizeof name, "rank %d", k);
        report_series_add(r, "positions", name, 0.4, 300 - 20 * k);
    }
    report_plot(r, "terminations", REPORT_PLOT_BARS, "Results by termination (all games)", "games",
                "");
    report_bar_set(r, "terminations", "checkmate", 3);
    report_bar_set(r, "terminations", "resign adjudication", 1);
    // Texel's weight changes: long names, one longer than any label's room.
    report_plot(r, "changes", REPORT_PLOT_BARS, "Largest weight changes (centipawns)", "weight",
                "");
    report_bar_set(r, "changes", "advisor_missing_attack_mg", -29);
    report_bar_set(r, "changes", "cannon_mobility_2_mg", 31.5);
    report_bar_set(r, "changes", "a_weight_name_far_longer_than_the_room_a_label_has_mg", 12);
}

int main(int argc, char **argv)
{
    int n = argc == 3 ? atoi(argv[1]) : 0;
    if (n < 1 || n > REPORT_SERIES_MAX) {
        fprintf(stderr, "usage: report_pages N DIR (N 1..%d)\n", REPORT_SERIES_MAX);
        return 2;
    }
    char title[64], why[512];
    snprintf(title, sizeof title, "plots: %d series", n);
    Report *r = report_new("0123456789abcdef", title, "test");
    if (!r)
        return 1;
    report_fact(r, "Test", "Series", "%d per line plot", n);
    plots(r, n);
    report_set_version(r, 1, true);
    ReportStatus st = report_write(r, argv[2], why, sizeof why);
    if (st != REPORT_OK)
        fprintf(stderr, "report_pages: %s\n", why);
    report_free(r);
    return st == REPORT_OK ? 0 : 1;
}
