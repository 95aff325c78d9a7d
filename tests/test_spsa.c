// SPDX-License-Identifier: MIT
// SPSA math pinned to hand-computed numbers (fishtest's parameterisation, STATS.md; values
// from an independent Python evaluation of the same formulas).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "spsa.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),         cmocka_unit_test(test_update),
        cmocka_unit_test(test_clipping),         cmocka_unit_test(test_stochastic_rounding),
        cmocka_unit_test(test_step_determinism), cmocka_unit_test(test_config_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
