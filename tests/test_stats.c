// SPDX-License-Identifier: MIT
// Match statistics pinned to golden numbers: STATS.md's worked example (fastchess output
// quoted by fishtest), fastchess summaries published by engine authors, and LLRs from an
// independent Python re-implementation of fishtest's LLRcalc.py (see the table below).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"
#include "summary.h"

/// Fails unless |got - want| <= tol (cmocka's assert_float_equal rounds to float).
#define assert_near(got, want, tol) check_near((got), (want), (tol), #got, __FILE__, __LINE__)

static void check_near(double got, double want, double tol, const char *what, const char *file,
                       int line)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.12f, expected %.12f +- %g\n", what, got, want, tol);
        _fail(file, line);
    }
}

static const SprtParams DEFAULT_SPRT = {0.0, 2.0, 0.05, 0.05, SPRT_NORMALIZED};

static MatchResults worked_example(void)
{
    return (MatchResults){.has_wdl = true,
                          .has_ptnml = true,
                          .wins = 248,
                          .draws = 166,
                          .losses = 266,
                          .ptnml = {43, 61, 144, 55, 37}};
}

/// alpha = beta = 0.05 gives the bounds +-2.9444389791664403 of STATS.md.
static void test_bounds(void **state)
{
    (void)state;
    double lower, upper;
    sprt_bounds(0.05, 0.05, &lower, &upper);
    assert_near(lower, -2.9444389791664403, 1e-15);
    assert_near(upper, 2.9444389791664403, 1e-15);
}

/// The worked example's Ptnml gives Elo -9.20 +- 20.93, nElo -11.50 +- 26.11, LOS 19.41 %.
static void test_elo_pentanomial(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_near(e.elo, -9.1989732734, 1e-6);
    assert_near(e.elo_error, 20.9272366753, 1e-6);
    assert_near(e.nelo, -11.4980509456, 1e-6);
    assert_near(e.nelo_error, 26.1136712839, 1e-6);
    assert_near(e.los, 0.1940722346, 1e-9);
    assert_near(e.draw_ratio, 144.0 / 340, 1e-12);
    assert_near(e.pairs_ratio, 92.0 / 104, 1e-12);
    assert_near(e.wl_dd_ratio, 119.0 / 25, 1e-12);
    assert_int_equal(e.games, 680);
    assert_near(e.points, 331.0, 0);
}

/// With only W/D/L the same games give the trinomial numbers (get_elo on [L, D, W]).
static void test_elo_trinomial(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    r.has_ptnml = false;
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_near(e.elo, -9.1989732734, 1e-6);
    assert_near(e.elo_error, 22.7414933378, 1e-6);
    assert_near(e.nelo, -10.5830822952, 1e-6);
    assert_near(e.nelo_error, 26.1136712839, 1e-6);
    assert_near(e.los, 0.2135062671, 1e-9);
    assert_near(e.draw_ratio, 166.0 / 680, 1e-12);
}

/// A second published fastchess summary: [4, 4, 58, 51, 198] is Elo 294.93 +- 33.71, nElo
/// 371.80 +- 27.13, LOS 100.00 %.
static void test_elo_strong(void **state)
{
    (void)state;
    MatchResults r = {.has_ptnml = true, .ptnml = {4, 4, 58, 51, 198}};
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_near(e.elo, 294.9259985649, 1e-6);
    assert_near(e.elo_error, 33.7107284256, 1e-6);
    assert_near(e.nelo, 371.7970692854, 1e-6);
    assert_near(e.nelo_error, 27.1301449803, 1e-6);
    assert_true(e.los > 0.99995);
}

typedef struct {
    SprtModel model;
    double elo0, elo1;
    int k; // 3: losses, draws, wins; 5: pentanomial
    uint64_t counts[STATS_PENTA_NB];
    double llr;
    SprtDecision decision;
} LlrCase;

// Golden numbers from a throwaway script (/tmp/xqstats/golden_final.py, not in the tree): a
// Python re-implementation of fishtest's LLRcalc.py and stat_util.get_elo (no scipy: the
// secular equation by bisection, not brentq), whose normalized LLRs are cross-checked by a
// second method, the maximum of the likelihood profile over sigma.
// "LLRcalc fails (no root)": fishtest's own iteration breaks down there (it asserts;
// fastchess returns NaN), and the profile value, the global maximum, is the golden one.
// [0,0,100000,0,0]: the profile search loses ~3e-8 per count at N = 1e5; LLRcalc is pinned.
// Its output:
//   bounds(0.05, 0.05) = -2.9444389791664403 2.9444389791664403
//   get_elo [43,61,144,55,37] elo=-9.1989732734 elo95=20.9272366753 los=0.1940722346
//       nelo=-11.4980509456 nelo95=26.1136712839
//   get_elo [266,166,248] elo=-9.1989732734 elo95=22.7414933378 los=0.2135062671
//       nelo=-10.5830822952 nelo95=26.1136712839
//   get_elo [4,4,58,51,198] elo=294.9259985649 elo95=33.7107284256 los=1.0000000000
//       nelo=371.7970692854 nelo95=27.1301449803
//   norm [0,2] [43,61,144,55,37] LLRcalc -0.140636304740 profile -0.140636304740
//   norm [0,2] [266,166,248] LLRcalc -0.130444355715 profile -0.130444355715
//   log [0,2] [43,61,144,55,37] LLRcalc -0.179035227656 profile -
//   log [0,2] [266,166,248] LLRcalc -0.151979736274 profile -
//   norm [0,2] [379,10170,21828,10640,343] LLRcalc 2.945495430907 profile 2.945495430899
//   log [-3,1] [10789,19328,33806,19402,10543] LLRcalc 2.131067811785 profile -
//   log [0.2,0.9] [39,2226,31451,2412,40] LLRcalc 2.162542580050 profile -
//   norm [0.764,3.439] [39,2226,31451,2412,40] LLRcalc 2.162940869584 profile 2.162940869583
//   norm [0,5] [585,735,1655,814,486] LLRcalc -2.959396703678 profile -2.959396703678
//   norm [0,10] [7,2,35,18,57] LLRcalc 2.944482932880 profile 2.944482932880
//   norm [0,2] [0,0,0,0,1] LLRcalc 0.008111564473 profile 0.008111564473
//   norm [0,2] [0,0,50,0,0] LLRcalc -0.002077353509 profile -0.002077353509
//   norm [0,2] [0,0,100000,0,0] LLRcalc -6.618165520439 profile -6.620936096711
//   norm [0,2] [0,0,0,0,200] LLRcalc 1.621532363611 profile 1.621532363611
//   norm [0,2] [0,0,0,0,400] LLRcalc 3.243060760548 profile 3.243060760548
//   log [0,2] [0,0,0,0,200] LLRcalc 1.147990324880 profile -
//   norm [0,2] [0,0,100] LLRcalc 0.573983371151 profile 0.573983371151
//   norm [0,2] [144,3,1,0,0] LLRcalc -1.199499473668 profile -1.199499473668
//   norm [-1500,-500] [144,3,1,0,0] LLRcalc fails(no root) profile -6.721260399622
//   log [-1500,-500] [144,3,1,0,0] LLRcalc 4.867799477446 profile -
//   norm [-1500,-500] [292,3,1] LLRcalc fails(no root) profile -21.454729461461
//   norm [300,302] [0,2,50,0,0] LLRcalc fails(no root) profile -0.414825459667
static const LlrCase LLR_CASES[] = {
    // The worked example, both models, both kinds of counts.
    {SPRT_NORMALIZED, 0, 2, 5, {43, 61, 144, 55, 37}, -0.140636304740, SPRT_CONTINUE},
    {SPRT_NORMALIZED, 0, 2, 3, {266, 166, 248}, -0.130444355715, SPRT_CONTINUE},
    {SPRT_LOGISTIC, 0, 2, 5, {43, 61, 144, 55, 37}, -0.179035227656, SPRT_CONTINUE},
    {SPRT_LOGISTIC, 0, 2, 3, {266, 166, 248}, -0.151979736274, SPRT_CONTINUE},
    // Runs that stopped: fastchess printed 2.94 (H1), -2.96 (H0), 2.94 (100.0%, H1).
    {SPRT_NORMALIZED, 0, 2, 5, {379, 10170, 21828, 10640, 343}, 2.945495430907, SPRT_H1},
    {SPRT_NORMALIZED, 0, 5, 5, {585, 735, 1655, 814, 486}, -2.959396703678, SPRT_H0},
    {SPRT_NORMALIZED, 0, 10, 5, {7, 2, 35, 18, 57}, 2.944482932880, SPRT_H1},
    // fishtest's own examples (stat_util.py), and the same bounds in the other model.
    {SPRT_LOGISTIC, -3, 1, 5, {10789, 19328, 33806, 19402, 10543}, 2.131067811785, SPRT_CONTINUE},
    {SPRT_LOGISTIC, 0.2, 0.9, 5, {39, 2226, 31451, 2412, 40}, 2.162542580050, SPRT_CONTINUE},
    {SPRT_NORMALIZED, 0.764, 3.439, 5, {39, 2226, 31451, 2412, 40}, 2.162940869584, SPRT_CONTINUE},
    // Degenerate counts: a single pair, all draws, all wins.
    {SPRT_NORMALIZED, 0, 2, 5, {0, 0, 0, 0, 1}, 0.008111564473, SPRT_CONTINUE},
    {SPRT_NORMALIZED, 0, 2, 5, {0, 0, 50, 0, 0}, -0.002077353509, SPRT_CONTINUE},
    {SPRT_NORMALIZED, 0, 2, 5, {0, 0, 100000, 0, 0}, -6.618165520439, SPRT_H0},
    {SPRT_NORMALIZED, 0, 2, 5, {0, 0, 0, 0, 200}, 1.621532363611, SPRT_CONTINUE},
    {SPRT_NORMALIZED, 0, 2, 5, {0, 0, 0, 0, 400}, 3.243060760548, SPRT_H1},
    {SPRT_LOGISTIC, 0, 2, 5, {0, 0, 0, 0, 200}, 1.147990324880, SPRT_CONTINUE},
    {SPRT_NORMALIZED, 0, 2, 3, {0, 0, 100}, 0.573983371151, SPRT_CONTINUE},
    // Lopsided: fastchess's NaN case (fishtest asserts on it: its iteration has no root),
    // the same in the logistic model and as W/D/L, and with ordinary bounds.
    {SPRT_NORMALIZED, 0, 2, 5, {144, 3, 1, 0, 0}, -1.199499473668, SPRT_CONTINUE},
    {SPRT_NORMALIZED, -1500, -500, 5, {144, 3, 1, 0, 0}, -6.721260399622, SPRT_H0},
    {SPRT_LOGISTIC, -1500, -500, 5, {144, 3, 1, 0, 0}, 4.867799477446, SPRT_H1},
    {SPRT_NORMALIZED, -1500, -500, 3, {292, 3, 1}, -21.454729461461, SPRT_H0},
    // fishtest fails here too; the global maximum (profile method), not a local one.
    {SPRT_NORMALIZED, 300, 302, 5, {0, 2, 50, 0, 0}, -0.414825459667, SPRT_CONTINUE},
};

/// Every LLR matches the reference to 1e-6 and leads to the expected decision.
static void test_llr_golden(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof LLR_CASES / sizeof LLR_CASES[0]; i++) {
        const LlrCase *c = &LLR_CASES[i];
        SprtParams p = {c->elo0, c->elo1, 0.05, 0.05, c->model};
        double llr = NAN, lower, upper;
        bool approx = true;
        assert_int_equal(sprt_llr(c->counts, c->k, &p, &llr, &approx), STATS_OK);
        sprt_bounds(p.alpha, p.beta, &lower, &upper);
        if (!(fabs(llr - c->llr) <= 1e-6) || approx ||
            sprt_decide(llr, lower, upper) != c->decision) {
            print_error("case %zu: llr %.12f (expected %.12f), approximate %d, decision %s\n", i,
                        llr, c->llr, approx, sprt_decision_name(sprt_decide(llr, lower, upper)));
            fail();
        }
    }
}

/// No games: LLR exactly 0 and the test continues, for both models and both kinds.
static void test_no_games(void **state)
{
    (void)state;
    MatchResults r = {.has_wdl = true, .has_ptnml = true};
    for (int model = 0; model < SPRT_MODEL_NB; model++)
        for (int kinds = 0; kinds < 2; kinds++) {
            SprtParams p = DEFAULT_SPRT;
            SprtResult s;
            p.model = (SprtModel)model;
            r.has_ptnml = kinds;
            assert_int_equal(sprt_evaluate(&r, &p, &s), STATS_OK);
            assert_true(s.llr == 0);
            assert_int_equal(s.decision, SPRT_CONTINUE);
        }
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_true(e.elo == 0 && e.elo_error == 0 && e.nelo == 0 && e.los == 0.5);
}

/// The data's own Elo in the model of p: regularised mean and deviation of the scores.
static double own_elo(const uint64_t *counts, int k, SprtModel model)
{
    double n = 0, mu = 0, var = 0, c[STATS_PENTA_NB];
    for (int i = 0; i < k; i++) {
        c[i] = counts[i] ? (double)counts[i] : 1e-3;
        n += c[i];
    }
    for (int i = 0; i < k; i++)
        mu += c[i] / n * i / (k - 1);
    for (int i = 0; i < k; i++)
        var += c[i] / n * (i / (k - 1.0) - mu) * (i / (k - 1.0) - mu);
    if (model == SPRT_LOGISTIC)
        return -400 * log10(1 / mu - 1);
    return (mu - 0.5) / sqrt(var) * 800 / log(10.0) / (k == 5 ? sqrt(2.0) : 1);
}

/// However lopsided the counts (all wins, all draws, all losses, from one pair up to the
/// cap) and wide the bounds, the LLR is finite, and positive when the data's own Elo is
/// above both bounds, negative when below both.
static void test_extremes_finite(void **state)
{
    (void)state;
    static const double BOUNDS[][2] = {{0, 2},       {-1500, -500},  {-3000, 3000},
                                       {2500, 3000}, {-3000, -2999}, {300, 302}};
    static const uint64_t N[] = {1, 3, 1000, 100000, STATS_COUNT_MAX};
    for (size_t b = 0; b < sizeof BOUNDS / sizeof BOUNDS[0]; b++)
        for (size_t n = 0; n < sizeof N / sizeof N[0]; n++)
            for (int model = 0; model < SPRT_MODEL_NB; model++)
                for (int k = 3; k <= 5; k += 2)
                    for (int cell = 0; cell < k; cell += (k - 1) / 2) {
                        SprtParams p = {BOUNDS[b][0], BOUNDS[b][1], 0.05, 0.05, (SprtModel)model};
                        uint64_t counts[STATS_PENTA_NB] = {0};
                        double llr;
                        counts[cell] = N[n];
                        assert_int_equal(sprt_llr(counts, k, &p, &llr, NULL), STATS_OK);
                        assert_true(isfinite(llr));
                        double own = own_elo(counts, k, p.model);
                        if (own > p.elo1 + 1)
                            assert_true(llr > 0);
                        if (own < p.elo0 - 1)
                            assert_true(llr < 0);
                    }
}

/// The decision is H1 from the upper bound up, H0 from the lower bound down.
static void test_decide(void **state)
{
    (void)state;
    assert_int_equal(sprt_decide(2.0, -2.0, 2.0), SPRT_H1);
    assert_int_equal(sprt_decide(-2.0, -2.0, 2.0), SPRT_H0);
    assert_int_equal(sprt_decide(1.99, -2.0, 2.0), SPRT_CONTINUE);
    assert_int_equal(sprt_decide(-1.99, -2.0, 2.0), SPRT_CONTINUE);
}

/// The formatter writes fastchess's block for the worked example, digit for digit.
static void test_format_worked_example(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    char buf[1024];
    assert_int_equal(stats_format(&r, &DEFAULT_SPRT, buf, sizeof buf), STATS_OK);
    assert_string_equal(buf, "Elo: -9.20 +/- 20.93, nElo: -11.50 +/- 26.11\n"
                             "LOS: 19.41 %, DrawRatio: 42.35 %, PairsRatio: 0.88\n"
                             "Games: 680, Wins: 248, Losses: 266, Draws: 166, Points: 331.0 "
                             "(48.68 %)\n"
                             "Ptnml(0-2): [43, 61, 144, 55, 37], WL/DD Ratio: 4.76\n"
                             "LLR: -0.14 (-4.8%) (-2.94, 2.94) [0.00, 2.00]\n");
}

/// With only W/D/L there is no Ptnml line and no PairsRatio; without SPRT no LLR line.
static void test_format_wdl_only(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    r.has_ptnml = false;
    char buf[1024];
    assert_int_equal(stats_format(&r, NULL, buf, sizeof buf), STATS_OK);
    assert_string_equal(buf, "Elo: -9.20 +/- 22.74, nElo: -10.58 +/- 26.11\n"
                             "LOS: 21.35 %, DrawRatio: 24.41 %\n"
                             "Games: 680, Wins: 248, Losses: 266, Draws: 166, Points: 331.0 "
                             "(48.68 %)\n");
}

/// The LLR percentage is relative to the bound the LLR heads to, as fastchess prints it.
static void test_format_llr_percent(void **state)
{
    (void)state;
    MatchResults r = {.has_ptnml = true, .ptnml = {585, 735, 1655, 814, 486}};
    SprtParams p = {0, 5, 0.05, 0.05, SPRT_NORMALIZED};
    char buf[1024];
    assert_int_equal(stats_format(&r, &p, buf, sizeof buf), STATS_OK);
    assert_non_null(strstr(buf, "LLR: -2.96 (-100.5%) (-2.94, 2.94) [0.00, 5.00]\n"));
}

/// A buffer too small is reported, and what was written is still a terminated string.
static void test_format_small_buffer(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    char buf[40];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(stats_format(&r, &DEFAULT_SPRT, buf, sizeof buf), STATS_ERR_BUFFER);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    assert_int_equal(stats_format(&r, &DEFAULT_SPRT, buf, 0), STATS_ERR_BUFFER);
}

/// W/D/L and Ptnml must describe the same games; counts past the cap are refused.
static void test_results_check(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    assert_int_equal(stats_results_check(&r), STATS_OK);
    r.wins++, r.losses--; // same total, but no split of the pairs gives it
    assert_int_equal(stats_results_check(&r), STATS_ERR_COUNTS);
    r = worked_example();
    r.draws += 2;
    assert_int_equal(stats_results_check(&r), STATS_ERR_COUNTS);
    r = worked_example();
    r.has_wdl = false;
    r.ptnml[0] = STATS_COUNT_MAX + 1;
    assert_int_equal(stats_results_check(&r), STATS_ERR_COUNTS);
    r.has_ptnml = false;
    assert_int_equal(stats_results_check(&r), STATS_ERR_COUNTS);
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_ERR_COUNTS);
}

/// Out-of-range SPRT parameters are an error, not a NaN.
static void test_params_check(void **state)
{
    (void)state;
    static const SprtParams BAD[] = {
        {0, 2, 0, 0.05, SPRT_NORMALIZED},      {0, 2, 0.05, 1, SPRT_NORMALIZED},
        {0, 2, 0.5, 0.5, SPRT_NORMALIZED},     {2, 2, 0.05, 0.05, SPRT_NORMALIZED},
        {3, 2, 0.05, 0.05, SPRT_LOGISTIC},     {0, 3001, 0.05, 0.05, SPRT_LOGISTIC},
        {NAN, 2, 0.05, 0.05, SPRT_NORMALIZED}, {0, 2, 0.05, 0.05, SPRT_MODEL_NB},
    };
    uint64_t counts[3] = {1, 2, 3};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        double llr;
        assert_int_equal(sprt_params_check(&BAD[i]), STATS_ERR_PARAMS);
        assert_int_equal(sprt_llr(counts, 3, &BAD[i], &llr, NULL), STATS_ERR_PARAMS);
    }
    assert_int_equal(sprt_params_check(&DEFAULT_SPRT), STATS_OK);
    double llr;
    assert_int_equal(sprt_llr(counts, 4, &DEFAULT_SPRT, &llr, NULL), STATS_ERR_COUNTS);
}

/// With pairs, the figures are the finished pairs' even while a game of an unfinished pair is
/// booked (play at concurrency 2): generation 1's SPRT, [1, 9, 24, 25, 43] with W 131 L 31
/// D 42, plus one won game of the next pair, gives the pentanomial's LLR (2.76 for [0, 10]),
/// not the trinomial's 3.15 that `play` printed before; the header says one game waits.
static void test_summary_counts_finished_pairs(void **state)
{
    (void)state;
    // {points of game 1, of game 2, how many such pairs}: the pair split of that match.
    static const double PAIRS[][3] = {{0, 0, 1},     {0.5, 0, 9},  {1, 0, 20},
                                      {0.5, 0.5, 4}, {1, 0.5, 25}, {1, 1, 43}};
    MatchTotals t = {0};
    for (size_t k = 0; k < sizeof PAIRS / sizeof PAIRS[0]; k++)
        for (int n = 0; n < (int)PAIRS[k][2]; n++) {
            double pts[2] = {PAIRS[k][0], PAIRS[k][1]};
            match_totals_game(&t, pts[0], TERM_CHECKMATE);
            match_totals_game(&t, pts[1], TERM_CHECKMATE);
            match_totals_pair(&t, pts);
        }
    match_totals_game(&t, 1.0, TERM_CHECKMATE); // the next pair's first game
    assert_int_equal(t.games, 205);
    MatchResults r = summary_results(&t, true);
    assert_true(r.has_ptnml);
    assert_true(r.has_wdl);
    assert_int_equal(r.wins, 131);
    assert_int_equal(r.draws, 42);
    assert_int_equal(r.losses, 31);
    static const uint64_t WANT[5] = {1, 9, 24, 25, 43};
    for (int i = 0; i < 5; i++)
        assert_int_equal(r.ptnml[i], WANT[i]);
    SprtParams p = {0.0, 10.0, 0.05, 0.05, SPRT_NORMALIZED};
    SprtResult s;
    assert_int_equal(sprt_evaluate(&r, &p, &s), STATS_OK);
    assert_near(s.llr, 2.76, 0.005);
    assert_int_equal(s.decision, SPRT_CONTINUE);

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    summary_print_rate(out, "gen1", "linear", NULL, &t, true, &p, 3.5);
    fclose(out);
    assert_non_null(
        strstr(text, "(205 games, 3.5 games/min; 1 game of unfinished pairs not yet counted)"));
    assert_non_null(strstr(text, "Games: 204, Wins: 131, Losses: 31, Draws: 42"));
    free(text);
    // Without pairs every game counts.
    r = summary_results(&t, false);
    assert_false(r.has_ptnml);
    assert_int_equal(r.wins + r.draws + r.losses, 205);

    // Games but no finished pair yet: no figures, and the block says why.
    MatchTotals first = {0};
    match_totals_game(&first, 1.0, TERM_CHECKMATE);
    r = summary_results(&first, true);
    assert_int_equal(r.wins + r.draws + r.losses, 0);
    assert_int_equal(sprt_evaluate(&r, &p, &s), STATS_OK);
    assert_int_equal(s.decision, SPRT_CONTINUE);
    out = open_memstream(&text, &len);
    assert_non_null(out);
    summary_print_rate(out, "gen1", "linear", NULL, &first, true, &p, 1.0);
    fclose(out);
    assert_non_null(strstr(text,
                           "(1 game, 1.0 games/min; 1 game of unfinished pairs not yet counted):\n"
                           "No game pair finished yet.\n"));
    free(text);
}

/// The first line of stats_format's block for r (without SPRT), into line.
static void first_line(const MatchResults *r, char *line, size_t cap)
{
    char buf[1024];
    assert_int_equal(stats_format(r, NULL, buf, sizeof buf), STATS_OK);
    char *nl = strchr(buf, '\n');
    assert_non_null(nl);
    *nl = '\0';
    assert_true((size_t)(nl - buf) < cap);
    memcpy(line, buf, (size_t)(nl - buf) + 1);
}

/// The LLR of r under DEFAULT_SPRT is finite (fishtest's regularisation keeps it defined at
/// every extreme) and has the sign want_sign (0: within 0.01 of 0).
static void check_llr_defined(const MatchResults *r, int want_sign)
{
    SprtResult s;
    assert_int_equal(sprt_evaluate(r, &DEFAULT_SPRT, &s), STATS_OK);
    assert_true(isfinite(s.llr));
    if (want_sign > 0)
        assert_true(s.llr > 0);
    else if (want_sign < 0)
        assert_true(s.llr < 0);
    else
        assert_true(fabs(s.llr) < 0.01);
}

/// All wins: no finite Elo (not fishtest's clamped 1199.83 +/- 0.00 and nElo 49134.59), but the
/// exact one-sided 95% bound on the games (Clopper-Pearson: 0.05^(1/n)), in Elo; README's
/// 30/30 reads 0.905, +391. The LLR stays defined.
static void test_edge_all_wins(void **state)
{
    (void)state;
    MatchResults r = {.has_ptnml = true, .ptnml = {0, 0, 0, 0, 300}};
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_BOUND);
    assert_near(e.elo_bound, 920.225444, 1e-5);
    char line[256];
    first_line(&r, line, sizeof line);
    assert_string_equal(line, "Elo: no finite estimate (score 100 %; one-sided 95% bound: above "
                              "+920.23), nElo: no finite estimate");
    check_llr_defined(&r, 1);
    // 6-0 as play counts it (3 pairs scoring 2, W/D/L too) and 30-0 as W/D/L only.
    r = (MatchResults){.has_wdl = true, .has_ptnml = true, .wins = 6, .ptnml = {0, 0, 0, 0, 3}};
    first_line(&r, line, sizeof line);
    assert_string_equal(line, "Elo: no finite estimate (score 100 %; one-sided 95% bound: above "
                              "+75.49), nElo: no finite estimate");
    r = (MatchResults){.has_wdl = true, .wins = 30};
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_BOUND);
    assert_near(e.elo_bound, 391.501599, 1e-5);
    check_llr_defined(&r, 1);
}

/// All losses: the mirror image, an upper bound.
static void test_edge_all_losses(void **state)
{
    (void)state;
    MatchResults r = {.has_ptnml = true, .ptnml = {3, 0, 0, 0, 0}};
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_BOUND);
    assert_near(e.elo_bound, -75.490953, 1e-5);
    char line[256];
    first_line(&r, line, sizeof line);
    assert_string_equal(line, "Elo: no finite estimate (score 0 %; one-sided 95% bound: below "
                              "-75.49), nElo: no finite estimate");
    check_llr_defined(&r, -1);
}

/// All draws: a finite Elo of 0 but no error bar, however many games (the sample has no
/// variance; regularisation would invent one: 4 drawn pairs read "0.00 +/- 17.00"), and no
/// nElo (it divides by that variance).
static void test_edge_all_draws(void **state)
{
    (void)state;
    MatchResults r = {.has_ptnml = true, .ptnml = {0, 0, 100, 0, 0}};
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_POINT);
    assert_true(e.no_variance);
    char line[256];
    first_line(&r, line, sizeof line);
    assert_string_equal(
        line,
        "Elo: 0.00 (no error bar: every pair scored the same), nElo: undefined (no variance)");
    check_llr_defined(&r, 0);
    r = (MatchResults){.has_ptnml = true, .ptnml = {0, 0, 2, 0, 0}};
    first_line(&r, line, sizeof line);
    assert_string_equal(
        line, "Elo: 0.00 (no error bar: 4 games, fewer than 10), nElo: undefined (no variance)");
    r = (MatchResults){.has_wdl = true, .draws = 10};
    first_line(&r, line, sizeof line);
    assert_string_equal(
        line,
        "Elo: 0.00 (no error bar: every game scored the same), nElo: undefined (no variance)");
    check_llr_defined(&r, 0);
}

/// One game: a win or a loss is a bound (0.05^(1/1): below +511.50 after a loss), a draw a
/// point estimate too small for an interval. The LLR is defined.
static void test_edge_one_game(void **state)
{
    (void)state;
    MatchResults r = {.has_wdl = true, .losses = 1};
    char line[256];
    first_line(&r, line, sizeof line);
    assert_string_equal(line, "Elo: no finite estimate (score 0 %; one-sided 95% bound: below "
                              "+511.50), nElo: no finite estimate");
    check_llr_defined(&r, -1);
    r = (MatchResults){.has_wdl = true, .draws = 1};
    first_line(&r, line, sizeof line);
    assert_string_equal(
        line, "Elo: 0.00 (no error bar: 1 game, fewer than 10), nElo: undefined (no variance)");
    check_llr_defined(&r, 0);
}

/// One pair: 1.5 of 2 is a finite Elo (+189.70, fishtest's on regularised counts) but no
/// interval. The boundary: 8 games give no error bar, 10 do.
static void test_edge_one_pair(void **state)
{
    (void)state;
    MatchResults r = {
        .has_wdl = true, .has_ptnml = true, .wins = 1, .draws = 1, .ptnml = {0, 0, 0, 1, 0}};
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_POINT);
    char line[256];
    first_line(&r, line, sizeof line);
    assert_string_equal(
        line, "Elo: 189.70 (no error bar: 2 games, fewer than 10), nElo: undefined (no variance)");
    check_llr_defined(&r, 1);
    r = (MatchResults){.has_ptnml = true, .ptnml = {0, 1, 2, 1, 0}};
    first_line(&r, line, sizeof line);
    assert_string_equal(line, "Elo: 0.00 (no error bar: 8 games, fewer than 10), nElo: 0.00 (no "
                              "error bar)");
    r.ptnml[2] = 3;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_INTERVAL);
    first_line(&r, line, sizeof line);
    assert_non_null(strstr(line, "Elo: 0.00 +/- "));
}

/// The texts of stats_elo_text and stats_nelo_text with another "+/-", and a buffer too small.
static void test_elo_text(void **state)
{
    (void)state;
    MatchResults r = worked_example();
    EloEstimate e;
    assert_int_equal(stats_elo(&r, &e), STATS_OK);
    assert_int_equal(e.estimate, STATS_ESTIMATE_INTERVAL);
    char buf[64];
    assert_int_equal(stats_elo_text(&e, 1, "\u00b1", buf, sizeof buf), STATS_OK);
    assert_string_equal(buf, "-9.2 \u00b1 20.9");
    assert_int_equal(stats_nelo_text(&e, 1, "+/-", buf, sizeof buf), STATS_OK);
    assert_string_equal(buf, "-11.5 +/- 26.1");
    EloEstimate none = {0};
    assert_int_equal(stats_elo_text(&none, 1, "+/-", buf, sizeof buf), STATS_OK);
    assert_string_equal(buf, "none (no games)");
    assert_int_equal(stats_elo_text(&e, 1, "+/-", buf, 4), STATS_ERR_BUFFER);
    assert_int_equal(strlen(buf), 3);
}

/// The SPRT's games still needed: from the LLR's drift so far toward the bound it heads to
/// (LLR 1 after 100 games heads up at 0.01 a game: (2.944 - 1) / 0.01 = 194.4 more), 0 once
/// decided, unknown (-1) without games or drift.
static void test_sprt_games_left(void **state)
{
    (void)state;
    SprtResult s = {.llr = 1.0, .lower = -2.9444389791664403, .upper = 2.9444389791664403};
    assert_near(sprt_games_left(&s, 100), 194.44389791664403, 1e-9);
    s.llr = -0.5;
    assert_near(sprt_games_left(&s, 100), 488.88779583328806, 1e-9);
    s.llr = 0;
    assert_near(sprt_games_left(&s, 100), -1, 0);
    s.llr = 1.0;
    assert_near(sprt_games_left(&s, 0), -1, 0);
    s.llr = 3.0, s.decision = SPRT_H1;
    assert_near(sprt_games_left(&s, 100), 0, 0);
}

/// run's progress line: no ETA at 0 games or just after a resume (no rate of this session),
/// none after the verdict; the ETA from the expected games left; singular for one worker and
/// one game.
static void test_progress_line(void **state)
{
    (void)state;
    char line[256];
    SummaryProgress p = {
        .games = 0, .games_total = 400, .games_left = 400, .workers = 1, .figures = ""};
    summary_progress_text(&p, line, sizeof line);
    assert_string_equal(line, "0/400 games, 0.0 games/min, 1 worker");
    // Resumed at 100 games: the journal's took no time now, so no rate and no ETA yet.
    p.games = 100, p.games_left = 300;
    summary_progress_text(&p, line, sizeof line);
    assert_string_equal(line, "100/400 games, 0.0 games/min, 1 worker");
    // An SPRT expected to need 50 more games at 10 a minute: 5 min, not the limit's 30.
    p.games_per_min = 10, p.games_left = 50, p.workers = 2, p.figures = ", Elo 12.0 +/- 3.0";
    summary_progress_text(&p, line, sizeof line);
    assert_string_equal(line, "100/400 games, 10.0 games/min, ETA 5 min, Elo 12.0 +/- 3.0, "
                              "2 workers");
    p.games_left = 5;
    summary_progress_text(&p, line, sizeof line);
    assert_non_null(strstr(line, ", ETA <1 min,"));
    p.games_left = 3000;
    summary_progress_text(&p, line, sizeof line);
    assert_non_null(strstr(line, ", ETA 5.0 h,"));
    p.verdict = true, p.games_left = 0, p.figures = "";
    summary_progress_text(&p, line, sizeof line);
    assert_string_equal(line, "100/400 games, 10.0 games/min, 2 workers");
    SummaryProgress one = {.games = 1, .games_total = 1, .games_per_min = 1, .workers = 0};
    summary_progress_text(&one, line, sizeof line);
    assert_string_equal(line, "1/1 game, 1.0 games/min, 0 workers");
}

/// Every status and name has a text, and an unknown status says so.
static void test_names(void **state)
{
    (void)state;
    for (int st = 0; st < STATS_STATUS_NB; st++)
        assert_true(strlen(stats_strerror((StatsStatus)st)) > 0);
    assert_string_equal(stats_strerror(STATS_STATUS_NB), "unknown statistics status");
    assert_string_equal(sprt_model_name(SPRT_LOGISTIC), "logistic");
    assert_string_equal(sprt_decision_name(SPRT_H1), "H1 accepted");
    assert_string_equal(stats_estimate_name(STATS_ESTIMATE_BOUND), "bound");
    assert_string_equal(stats_estimate_name(STATS_ESTIMATE_NB), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_elo_pentanomial),
        cmocka_unit_test(test_elo_trinomial),
        cmocka_unit_test(test_elo_strong),
        cmocka_unit_test(test_llr_golden),
        cmocka_unit_test(test_no_games),
        cmocka_unit_test(test_extremes_finite),
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_format_worked_example),
        cmocka_unit_test(test_format_wdl_only),
        cmocka_unit_test(test_format_llr_percent),
        cmocka_unit_test(test_format_small_buffer),
        cmocka_unit_test(test_results_check),
        cmocka_unit_test(test_params_check),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_summary_counts_finished_pairs),
        cmocka_unit_test(test_edge_all_wins),
        cmocka_unit_test(test_edge_all_losses),
        cmocka_unit_test(test_edge_all_draws),
        cmocka_unit_test(test_edge_one_game),
        cmocka_unit_test(test_edge_one_pair),
        cmocka_unit_test(test_elo_text),
        cmocka_unit_test(test_sprt_games_left),
        cmocka_unit_test(test_progress_line),
    };
    return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
