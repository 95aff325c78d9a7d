// SPDX-License-Identifier: MIT
// SPSA math pinned to hand-computed numbers (fishtest's parameterisation, STATS.md; values
// from an independent Python evaluation of the same formulas).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spsa.h"
#include "spsa_tuner.h"

#define assert_near(got, want, tol) check_near((got), (want), (tol), #got, __FILE__, __LINE__)

static void check_near(double got, double want, double tol, const char *what, const char *file,
                       int line)
{
    if (!(fabs(got - want) <= tol)) {
        print_error("%s = %.12f, expected %.12f +- %g\n", what, got, want, tol);
        _fail(file, line);
    }
}

/// 100 iterations, one parameter start 50 in [0, 100], c_end 10, r_end 0.002.
static SpsaConfig *one_param(void)
{
    static SpsaConfig cfg;
    spsa_config_init(&cfg, 100);
    cfg.count = 1;
    cfg.params[0] = (SpsaParam){"x", -1, 50, 0, 100, 10, 0.002};
    return &cfg;
}

/// c_k and R_k at the first, a middle and the last iteration; the last gives c_end, r_end.
static void test_schedule(void **state)
{
    (void)state;
    const SpsaConfig *cfg = one_param();
    assert_near(spsa_c_k(cfg, 0, 0), 15.922087270511703, 1e-9);
    assert_near(spsa_r_k(cfg, 0, 0), 0.0031552225393986963, 1e-12);
    assert_near(spsa_c_k(cfg, 0, 9), 12.618275345906708, 1e-9);
    assert_near(spsa_r_k(cfg, 0, 9), 0.003505325359070662, 1e-12);
    assert_near(spsa_c_k(cfg, 0, 99), 10.0, 1e-9);
    assert_near(spsa_r_k(cfg, 0, 99), 0.002, 1e-12);
}

/// a_k = a / (A + k + 1)^alpha, the gain the report shows: a_0 = 0.2 (110/11)^0.602, a_9 =
/// 0.2 (110/20)^0.602, r_end c_end^2 at the last iteration; R_k = a_k / c_k^2 throughout.
static void test_gain(void **state)
{
    (void)state;
    const SpsaConfig *cfg = one_param();
    assert_near(spsa_a_k(cfg, 0, 0), 0.799889499522195, 1e-12);
    assert_near(spsa_a_k(cfg, 0, 9), 0.5581209627866086, 1e-12);
    assert_near(spsa_a_k(cfg, 0, 99), 0.2, 1e-12);
    for (int64_t k = 0; k < 100; k += 11) {
        double c = spsa_c_k(cfg, 0, k);
        assert_true(spsa_r_k(cfg, 0, k) == spsa_a_k(cfg, 0, k) / (c * c));
    }
}

/// One update: theta + R_0 c_0 (W-L) phi, with W-L = 2 and phi = +1 moves 50 by 0.10047545...
static void test_update(void **state)
{
    (void)state;
    const SpsaConfig *cfg = one_param();
    SpsaStep st;
    double theta = 50;
    spsa_step_make(cfg, &theta, 0, 1, 7, &st);
    st.flip[0] = 1;
    spsa_step_apply(cfg, &st, 2, &theta);
    assert_near(theta, 50 + 0.10047545726038319, 1e-12);
    st.flip[0] = -1;
    spsa_step_apply(cfg, &st, 2, &theta);
    assert_near(theta, 50, 1e-12);
    spsa_step_apply(cfg, &st, 0, &theta); // a 1-1 pair changes nothing
    assert_near(theta, 50, 1e-12);
}

/// Updates and the played values stay inside [min, max].
static void test_clipping(void **state)
{
    (void)state;
    SpsaConfig *cfg = one_param();
    cfg->params[0].start = 99;
    double theta = 99;
    SpsaStep st;
    spsa_step_make(cfg, &theta, 0, 3, 1, &st);
    assert_true(st.plus[0] <= 100 && st.minus[0] <= 100);
    assert_true(st.plus[0] >= 83 && st.minus[0] >= 83); // 99 - 15.92, rounded down at most
    st.flip[0] = 1;
    for (int i = 0; i < 1000; i++)
        spsa_step_apply(cfg, &st, 2, &theta);
    assert_near(theta, 100, 0);
    st.flip[0] = -1;
    for (int i = 0; i < 5000; i++)
        spsa_step_apply(cfg, &st, 2, &theta);
    assert_near(theta, 0, 0);
    cfg->params[0].start = 50;
}

/// Stochastic rounding is unbiased: the mean of many roundings of 3.3 is 3.3, and exact
/// integers never move.
static void test_stochastic_rounding(void **state)
{
    (void)state;
    assert_int_equal(spsa_round_stochastic(3.3, 0.29), 4);
    assert_int_equal(spsa_round_stochastic(3.3, 0.31), 3);
    assert_int_equal(spsa_round_stochastic(-2.5, 0.4), -2);
    assert_int_equal(spsa_round_stochastic(-2.5, 0.6), -3);
    assert_int_equal(spsa_round_stochastic(7.0, 0.0), 7);
    assert_int_equal(spsa_round_stochastic(7.0, 0.999), 7);
    // Through spsa_step_make: theta 50.3 with c_k forced near zero by a huge iteration index.
    SpsaConfig *cfg = one_param();
    double theta = 50.3, sum = 0;
    int n = 20000, ups = 0;
    SpsaStep st;
    for (int i = 0; i < n; i++) {
        spsa_step_make(cfg, &theta, 0, 11, (uint64_t)i, &st);
        double want = 50.3 + st.c_k[0] * st.flip[0];
        sum += st.plus[0] - want;
        ups += st.flip[0] > 0;
        assert_true(fabs(st.plus[0] - want) < 1.0);
    }
    assert_near(sum / n, 0, 0.01);                 // unbiased
    assert_true(ups > n * 0.47 && ups < n * 0.53); // flips are fair coins
}

/// The same (seed, id) gives the same step; another id gives other flips.
static void test_step_determinism(void **state)
{
    (void)state;
    static SpsaConfig cfg;
    spsa_config_init(&cfg, 1000);
    cfg.count = 64;
    double theta[64];
    for (int i = 0; i < 64; i++) {
        cfg.params[i] = (SpsaParam){"p", i, 100, 0, 200, 5, 0.002};
        theta[i] = 100;
    }
    static SpsaStep a, b, c;
    spsa_step_make(&cfg, theta, 5, 42, 9, &a);
    spsa_step_make(&cfg, theta, 5, 42, 9, &b);
    spsa_step_make(&cfg, theta, 5, 42, 10, &c);
    assert_memory_equal(a.flip, b.flip, 64);
    assert_memory_equal(a.plus, b.plus, sizeof a.plus[0] * 64);
    assert_memory_not_equal(a.flip, c.flip, 64);
}

/// Bad settings are refused with the parameter named.
static void test_config_check(void **state)
{
    (void)state;
    SpsaConfig *cfg = one_param();
    char why[256];
    assert_int_equal(spsa_config_check(cfg, why, sizeof why), SPSA_OK);
    cfg->params[0].c_end = 0;
    assert_int_equal(spsa_config_check(cfg, why, sizeof why), SPSA_ERR_RANGE);
    assert_non_null(strstr(why, "x:"));
    cfg->params[0].c_end = 10;
    cfg->params[0].start = 101;
    assert_int_equal(spsa_config_check(cfg, why, sizeof why), SPSA_ERR_RANGE);
    cfg->params[0].start = 50;
    cfg->iterations = 0;
    assert_int_equal(spsa_config_check(cfg, why, sizeof why), SPSA_ERR_CONFIG);
    cfg->iterations = 100;
}

/// Replaying the journal (step records and pair results in the order they were written)
/// rebuilds theta bit for bit, a reassigned pair uses its latest step, and a pair's result
/// is applied once.
static void test_tuner_replay(void **state)
{
    (void)state;
    static SpsaConfig cfg;
    spsa_config_init(&cfg, 40);
    cfg.count = 3;
    for (int i = 0; i < 3; i++)
        cfg.params[i] = (SpsaParam){"p", i, 100 + i, 0, 300, 10, 0.01};
    SpsaTuner *live = spsa_tuner_new(&cfg, 5, 40), *again = spsa_tuner_new(&cfg, 5, 40);
    assert_non_null(live);
    assert_non_null(again);
    // The journal as a list of records: kind 0 = step (bytes), 1 = pair result.
    struct {
        int kind;
        void *data;
        size_t len;
        uint64_t pair;
        int wl;
    } log[64];
    int n = 0;
    uint64_t next = 0;
    for (int round = 0; round < 8; round++) {
        uint64_t pairs[4];
        for (int i = 0; i < 4; i++)
            pairs[i] = next + (uint64_t)i;
        const SpsaStep *st = spsa_tuner_step(live, pairs, 4);
        assert_non_null(st);
        log[n].kind = 0;
        log[n].data = spsa_tuner_encode(st, pairs, 4, &log[n].len);
        n++;
        // Three of the four pairs finish; the fourth goes back and joins the next step.
        for (int i = 0; i < 3; i++) {
            int wl = (int)((pairs[i] * 7 + 3) % 5) - 2;
            assert_true(spsa_tuner_pair_done(live, pairs[i], wl));
            log[n++] = (typeof(log[0])){1, NULL, 0, pairs[i], wl};
        }
        next += 3;
    }
    assert_false(spsa_tuner_pair_done(live, 0, 2)); // done already: not applied twice
    for (int i = 0; i < n; i++) {
        if (log[i].kind == 0) {
            char why[128];
            assert_true(spsa_tuner_replay_step(again, log[i].data, log[i].len, why, sizeof why));
        } else {
            assert_true(spsa_tuner_pair_done(again, log[i].pair, log[i].wl));
        }
    }
    assert_int_equal(spsa_tuner_iterations(again), spsa_tuner_iterations(live));
    assert_int_equal(spsa_tuner_iterations(live), 24);
    assert_memory_equal(spsa_tuner_theta(again), spsa_tuner_theta(live), sizeof(double) * 3);
    // A damaged record is refused with a reason.
    char why[128];
    assert_false(spsa_tuner_replay_step(again, log[0].data, log[0].len - 1, why, sizeof why));
    assert_non_null(strstr(why, "truncated"));
    for (int i = 0; i < n; i++)
        free(log[i].data);
    spsa_tuner_free(live);
    spsa_tuner_free(again);
}

/// The trajectory CSV has one row per iteration: the final row asked for at the end of a run
/// is not a repeat of the row the interval wrote for the same iteration.
static void test_csv_no_repeat(void **state)
{
    (void)state;
    static SpsaConfig cfg;
    spsa_config_init(&cfg, 4);
    cfg.count = 2;
    for (int i = 0; i < 2; i++)
        cfg.params[i] = (SpsaParam){"p", i, 100 + i, 0, 300, 10, 0.01};
    SpsaTuner *t = spsa_tuner_new(&cfg, 5, 4);
    assert_non_null(t);
    FILE *f = tmpfile();
    assert_non_null(f);
    spsa_tuner_set_csv(t, f, 2);
    uint64_t pairs[4] = {0, 1, 2, 3};
    assert_non_null(spsa_tuner_step(t, pairs, 4));
    for (uint64_t p = 0; p < 4; p++)
        assert_true(spsa_tuner_pair_done(t, p, 1));
    spsa_tuner_csv_row(t); // the end of the run: iteration 4 was written by the interval
    spsa_tuner_csv_row(t);
    rewind(f);
    char line[256];
    long iters[8];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < 8)
        if (line[0] >= '0' && line[0] <= '9')
            iters[n++] = strtol(line, NULL, 10);
    assert_int_equal(n, 3); // 0, 2, 4
    assert_int_equal(iters[0], 0);
    assert_int_equal(iters[1], 2);
    assert_int_equal(iters[2], 4);
    fclose(f);
    spsa_tuner_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_gain),
        cmocka_unit_test(test_update),
        cmocka_unit_test(test_clipping),
        cmocka_unit_test(test_stochastic_rounding),
        cmocka_unit_test(test_step_determinism),
        cmocka_unit_test(test_config_check),
        cmocka_unit_test(test_tuner_replay),
        cmocka_unit_test(test_csv_no_repeat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
