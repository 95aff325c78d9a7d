// SPDX-License-Identifier: MIT
// The WDL model (tuning/wdl): material, samples from games, the likelihood against a
// hand-computed value, the fit recovering known coefficients, the model file.
#include "wdl.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "move.h"

static int setup(void **state)
{
    (void)state;
    board_init();
    return 0;
}

/// The start position weighs 94 by either measure; captures take their piece's weight off.
static void test_material(void **state)
{
    (void)state;
    Board b;
    board_set_fen(&b, BOARD_START_FEN, NULL, 0);
    assert_int_equal(wdl_material(&b), WDL_MATERIAL_FULL);
    assert_int_equal(wdl_material_fen(BOARD_START_FEN), WDL_MATERIAL_FULL);
    // Black without a chariot (9), Red without a soldier (1): 84; two generals alone: 0.
    assert_int_equal(wdl_material_fen("1nbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P3P/1C5C1/9/"
                                      "RNBAKABNR w - - 0 1"),
                     84);
    assert_int_equal(wdl_material_fen("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1"), 0);
    assert_int_equal(wdl_material_fen("4k4/9/9/9/9/9/9/9/9/4K2x1 w"), -1);
}

/// A model of a and b constant (degree 0).
static WdlModel constant_model(double a, double b)
{
    WdlModel m = {.degree = 0, .material_min = 0, .material_max = WDL_MATERIAL_FULL};
    m.a[0] = a;
    m.b[0] = b;
    return m;
}

/// W(s) = 1/(1+exp((a-s)/b)) with the sign of the score the mover's: a positive score wins
/// more than it loses, W + D + L = 1, and the draw rate is the same at s and -s.
static void test_eval_sign(void **state)
{
    (void)state;
    WdlModel m = constant_model(100, 50);
    double w, d, l;
    wdl_eval(&m, 100, 94, &w, &d, &l);
    assert_true(fabs(w - 0.5) < 1e-12); // at s = a the win rate is one half
    assert_true(fabs(l - 1 / (1 + exp(4.0))) < 1e-12);
    assert_true(fabs(w + d + l - 1) < 1e-12);
    wdl_eval(&m, -100, 94, &w, &d, &l);
    assert_true(fabs(l - 0.5) < 1e-12 && w < l);
    assert_true(fabs(wdl_draw_rate(&m, 70, 60) - wdl_draw_rate(&m, -70, 60)) < 1e-15);
    assert_true(fabs(wdl_draw_rate(&m, 0, 60) - (1 - 2 / (1 + exp(2.0)))) < 1e-12);
}

/// The log-likelihood of three samples, by hand: a win at s = a (log 1/2), a loss at s = -a
/// (log 1/2) and a draw at 0 (log(1 - 2/(1+e^2))). A wrong sign or formula changes it.
static void test_log_likelihood(void **state)
{
    (void)state;
    WdlModel m = constant_model(100, 50);
    WdlSamples s;
    wdl_samples_init(&s);
    assert_int_equal(wdl_samples_add(&s, 100, 94, 1), WDL_OK);
    assert_int_equal(wdl_samples_add(&s, -100, 94, -1), WDL_OK);
    assert_int_equal(wdl_samples_add(&s, 0, 50, 0), WDL_OK);
    double want = 2 * log(0.5) + log(1 - 2 / (1 + exp(2.0)));
    assert_true(fabs(wdl_log_likelihood(&m, &s) - want) < 1e-12);
    // A win at a large negative score is very unlikely: log W(-300) = -log(1 + e^8).
    wdl_samples_destroy(&s);
    wdl_samples_init(&s);
    wdl_samples_add(&s, -300, 94, 1);
    assert_true(fabs(wdl_log_likelihood(&m, &s) + log1p(exp(8.0))) < 1e-9);
    // Out of range samples are refused.
    assert_int_equal(wdl_samples_add(&s, WDL_SCORE_MAX + 1, 94, 1), WDL_ERR_ARGUMENT);
    assert_int_equal(wdl_samples_add(&s, 0, 95, 1), WDL_ERR_ARGUMENT);
    assert_int_equal(wdl_samples_add(&s, 0, 94, 2), WDL_ERR_ARGUMENT);
    wdl_samples_destroy(&s);
}

/// xorshift64*, in [0, 1).
static double rnd(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/// Samples drawn from the model `truth`: material uniform in 20..94, score uniform in
/// -400..400, the result drawn with the model's W, D, L.
static void draw_samples(const WdlModel *truth, int n, uint64_t seed, WdlSamples *s)
{
    wdl_samples_init(s);
    for (int i = 0; i < n; i++) {
        int mat = 20 + (int)(rnd(&seed) * 75);
        int score = -400 + (int)(rnd(&seed) * 801);
        double w, d, u = rnd(&seed);
        wdl_eval(truth, score, mat, &w, &d, NULL);
        assert_int_equal(wdl_samples_add(s, score, mat, u < w ? 1 : u < w + d ? 0 : -1), WDL_OK);
    }
}

/// The fit recovers a known model of degree 1 from 60,000 samples it generated: a(m) and b(m)
/// within 6% over the data's range, and a likelihood at least the true model's (the maximum).
static void test_fit_recovers(void **state)
{
    (void)state;
    WdlModel truth = {.degree = 1, .material_min = 0, .material_max = WDL_MATERIAL_FULL};
    truth.a[0] = 120; // a(m) = 120 m + 60: wider draw band with more material
    truth.a[1] = 60;
    truth.b[0] = 40; // b(m) = 40 m + 50
    truth.b[1] = 50;
    WdlSamples s;
    draw_samples(&truth, 60000, 7, &s);
    WdlModel fit;
    char why[256] = "";
    assert_int_equal(wdl_fit(&s, 1, &fit, why, sizeof why), WDL_OK);
    assert_int_equal(fit.samples, 60000);
    assert_int_equal(fit.material_min, 20);
    assert_int_equal(fit.material_max, 94);
    for (int mat = 20; mat <= 94; mat += 37) {
        double ta = wdl_a(&truth, mat), tb = wdl_b(&truth, mat);
        assert_true(fabs(wdl_a(&fit, mat) - ta) < 0.06 * ta);
        assert_true(fabs(wdl_b(&fit, mat) - tb) < 0.06 * tb);
    }
    // Calibrated: in each |score| bucket the fit's mean draw and win rates are the data's.
    WdlBucket cal[WDL_BUCKET_NB];
    wdl_calibrate(&fit, &s, cal);
    uint64_t total = 0;
    for (int k = 0; k < WDL_BUCKET_NB; k++) {
        total += cal[k].n;
        if (cal[k].n > 2000) {
            assert_true(fabs(cal[k].draw_seen - cal[k].draw_model) < 0.03);
            assert_true(fabs(cal[k].win_seen - cal[k].win_model) < 0.03);
        }
    }
    assert_int_equal(total, s.count);
    double ll_truth = wdl_log_likelihood(&truth, &s);
    assert_true(fit.log_likelihood >= ll_truth);
    assert_true(fabs(fit.log_likelihood - wdl_log_likelihood(&fit, &s)) < 1e-6);
    // The cubic (the default) fits the same data as well as the line, and its a and b stay
    // close to the truth in the middle of the range.
    WdlModel cubic;
    assert_int_equal(wdl_fit(&s, 3, &cubic, why, sizeof why), WDL_OK);
    assert_true(cubic.log_likelihood >= fit.log_likelihood - 1e-6);
    assert_true(fabs(wdl_a(&cubic, 57) - wdl_a(&truth, 57)) < 0.08 * wdl_a(&truth, 57));
    // Mirrored results (every win a loss) flip the sign of the data, not the model: the draw
    // band is the same and a win is still likelier at a positive score.
    for (size_t i = 0; i < s.count; i++)
        s.items[i].score = (int16_t)-s.items[i].score,
        s.items[i].result = (int8_t)-s.items[i].result;
    WdlModel mirror;
    assert_int_equal(wdl_fit(&s, 1, &mirror, why, sizeof why), WDL_OK);
    assert_true(fabs(mirror.log_likelihood - fit.log_likelihood) < 1e-3);
    assert_true(fabs(wdl_a(&mirror, 60) - wdl_a(&fit, 60)) < 1e-3);
    wdl_samples_destroy(&s);
}

/// Too few samples, no draws, too few materials for the degree, a bad degree: refused by name.
static void test_fit_refuses(void **state)
{
    (void)state;
    WdlSamples s;
    WdlModel m;
    char why[256] = "";
    wdl_samples_init(&s);
    for (int i = 0; i < 100; i++)
        wdl_samples_add(&s, i - 50, 90, i % 3 - 1);
    assert_int_equal(wdl_fit(&s, 0, &m, why, sizeof why), WDL_ERR_FEW);
    assert_non_null(strstr(why, "100 samples: a fit needs at least 200"));
    for (int i = 100; i < 400; i++)
        wdl_samples_add(&s, i - 200, 90, i % 3 - 1);
    assert_int_equal(wdl_fit(&s, 2, &m, why, sizeof why), WDL_ERR_FEW);
    assert_non_null(strstr(why, "1 distinct material value: a degree-2 model needs at least 3"));
    assert_int_equal(wdl_fit(&s, 0, &m, why, sizeof why), WDL_OK);
    assert_int_equal(wdl_fit(&s, 4, &m, why, sizeof why), WDL_ERR_ARGUMENT);
    wdl_samples_destroy(&s);
    wdl_samples_init(&s);
    for (int i = 0; i < 300; i++)
        wdl_samples_add(&s, i - 150, 60 + i % 5, 0);
    assert_int_equal(wdl_fit(&s, 1, &m, why, sizeof why), WDL_ERR_FEW);
    assert_non_null(strstr(why, "all drawn"));
    wdl_samples_destroy(&s);
}

/// A move from its text (ranks 0..9).
static Move mv_text(const char *text)
{
    Move m = MOVE_NONE;
    assert_int_equal(move_parse(text, 0, &m), 0);
    return m;
}

/// A game's samples: each scored move gives one, with the result from its mover's view and the
/// material before the move; an illegal move refuses the whole game.
static void test_samples_from_game(void **state)
{
    (void)state;
    WdlMove mv[4] = {
        {mv_text("h2e2"), true, 30},  // Red, scored: Red won, so +1
        {mv_text("h7e7"), true, -25}, // Black: -1
        {mv_text("b2b9"), false, 0},  // Red takes a horse, unscored: no sample
        {mv_text("h9g7"), true, -150},
    };
    WdlSamples s;
    wdl_samples_init(&s);
    char why[128] = "";
    if (wdl_samples_add_game(&s, BOARD_START_FEN, mv, 4, 1, why, sizeof why) != WDL_OK)
        fail_msg("%s", why);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.games, 1);
    assert_int_equal(s.items[0].score, 30);
    assert_int_equal(s.items[0].result, 1);
    assert_int_equal(s.items[0].material, 94);
    assert_int_equal(s.items[1].result, -1);
    assert_int_equal(s.items[2].score, -150);
    assert_int_equal(s.items[2].result, -1);
    assert_int_equal(s.items[2].material, 90); // after the capture of a horse
    mv[3].move = mv_text("h9h5");              // a horse cannot go there
    assert_int_equal(wdl_samples_add_game(&s, BOARD_START_FEN, mv, 4, 0, why, sizeof why),
                     WDL_ERR_GAME);
    assert_non_null(strstr(why, "ply 4: an illegal move"));
    assert_int_equal(s.count, 3); // nothing of the bad game kept
    assert_int_equal(wdl_samples_add_game(&s, "nonsense", mv, 1, 0, why, sizeof why), WDL_ERR_GAME);
    wdl_samples_destroy(&s);
}

/// A model survives its file; files that are not models are refused naming the field.
static void test_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_wdl_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    WdlModel m = {.degree = 2, .material_min = 12, .material_max = 90, .samples = 1234};
    double a[] = {-10.5, 80.25, 90}, b[] = {3, 20.125, 40};
    memcpy(m.a, a, sizeof a);
    memcpy(m.b, b, sizeof b);
    m.log_likelihood = -987.5;
    WdlSource src = {"runs/one", "0123456789abcdef", "fedcba9876543210", 10, 1234};
    char why[512] = "";
    assert_int_equal(wdl_save(&m, &src, 1, NULL, path, why, sizeof why), WDL_OK);
    WdlModel r;
    assert_int_equal(wdl_load(&r, path, why, sizeof why), WDL_OK);
    assert_int_equal(r.degree, 2);
    assert_memory_equal(r.a, a, sizeof a);
    assert_memory_equal(r.b, b, sizeof b);
    assert_int_equal(r.material_min, 12);
    assert_int_equal(r.material_max, 90);
    assert_int_equal(r.samples, 1234);
    assert_true(r.log_likelihood == -987.5);
    // The clamp: below the data's material the model is the one at material_min.
    assert_true(wdl_a(&r, 0) == wdl_a(&r, 12));
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{", "not JSON"},
        {"[1]", "\"kind\" is not \"wdl_model\""},
        {"{\"kind\":\"wdl_model\",\"schema\":2}", "\"schema\" is not an integer in 1..1"},
        {"{\"kind\":\"wdl_model\",\"schema\":1,\"degree\":1,\"a\":[1],\"b\":[1,2]}",
         "\"a\" is not an array of degree+1 = 2 numbers"},
        {"{\"kind\":\"wdl_model\",\"schema\":1,\"degree\":0,\"a\":[1],\"b\":[\"x\"]}",
         "\"b\"[0] is not a finite number"},
        {"{\"kind\":\"wdl_model\",\"schema\":1,\"degree\":0,\"a\":[1],\"b\":[1],"
         "\"material_min\":50,\"material_max\":40}",
         "\"material_max\" is not an integer in 50..94"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        assert_int_equal(wdl_load(&r, path, why, sizeof why), WDL_ERR_FORMAT);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: got '%s'", bad[i].text, why);
    }
    unlink(path);
    assert_int_equal(wdl_load(&r, path, why, sizeof why), WDL_ERR_IO);
    assert_non_null(strstr(why, "No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_material),       cmocka_unit_test(test_eval_sign),
        cmocka_unit_test(test_log_likelihood), cmocka_unit_test(test_fit_recovers),
        cmocka_unit_test(test_fit_refuses),    cmocka_unit_test(test_samples_from_game),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
