// SPDX-License-Identifier: MIT
// How a fleet shares its ranks (run/share.c) against fishtest's calc_itp and
// OpenBench's band: the internal throughput of a long time control, an SPRT near its verdict
// and a long SPRT; rounded shares that sum to the fleet's workers with at least one rank each
// for the first W tests and none for the others; and the 25% band a test keeps its ranks in.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "share.h"

/// fishtest's figures: LTC (6 times STC) gets about 4 times the ranks; an SPRT's LLR adds up
/// to 5/3 (clamped to [0, 2]); past 200,000 games up to twice; a match gets no SPRT bonus.
static void test_itp(void **state)
{
    (void)state;
    assert_float_equal(share_itp(100, 1, false, NAN, NAN), 100, 1e-9);
    assert_float_equal(share_itp(100, 0.01, false, NAN, NAN), 100, 1e-9); // no boost below STC
    assert_float_equal(share_itp(100, 6, false, NAN, NAN), 400.3, 0.5);
    assert_float_equal(share_itp(100, 1, true, 1.5, 1000), 150, 1e-9);
    assert_float_equal(share_itp(100, 1, true, 5, 1000), 500.0 / 3, 1e-9);
    assert_float_equal(share_itp(100, 1, true, -2, 1000), 100, 1e-9);
    assert_float_equal(share_itp(100, 1, false, 2, 1000), 100, 1e-9);
    assert_float_equal(share_itp(100, 1, true, 0, 300000), 150, 1e-9);
    assert_float_equal(share_itp(100, 1, true, 0, 900000), 200, 1e-9);
    assert_float_equal(share_itp(300, 6, true, 2, 500000), 300 * pow(6, 0.774) * 5 / 3 * 2, 1e-6);
}

static void split(const double *itp, int n, int workers, const int *expect)
{
    double target[8];
    int want[8], sum = 0;
    share_split(itp, n, workers, target, want);
    for (int i = 0; i < n; i++) {
        assert_int_equal(want[i], expect[i]);
        sum += want[i];
    }
    assert_int_equal(sum, n < workers ? workers : (n ? workers : 0));
}

/// Shares in ratio of the itps, rounded, summing to W; beyond the first W tests none.
static void test_split(void **state)
{
    (void)state;
    split((double[]){100, 300}, 2, 4, (int[]){1, 3});
    split((double[]){100, 200}, 2, 3, (int[]){1, 2});
    split((double[]){100, 100}, 2, 3, (int[]){2, 1}); // a tie: the earlier test keeps more
    split((double[]){100}, 1, 5, (int[]){5});
    split((double[]){100, 100, 500}, 3, 10, (int[]){2, 1, 7});
    split((double[]){500, 100, 100}, 3, 3, (int[]){1, 1, 1}); // at least one each
    split((double[]){100, 100, 100, 100, 100}, 5, 3, (int[]){1, 1, 1, 0, 0});
}

/// A test keeps its ranks within 25% of its share, never with no share.
static void test_fair(void **state)
{
    (void)state;
    assert_true(share_fair(2, 2));
    assert_true(share_fair(5, 4));
    assert_true(share_fair(3, 4));
    assert_false(share_fair(3, 2));
    assert_false(share_fair(2, 4));
    assert_false(share_fair(1, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_itp),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_fair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
