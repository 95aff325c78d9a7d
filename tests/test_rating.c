// SPDX-License-Identifier: MIT
// The joint Bradley-Terry rating: two players reduce to the logistic Elo of the score, equal
// results give equal ratings, order follows results, perfect scores stay finite, error bars
// shrink like 1/sqrt(games), and a field split into unconnected groups is refused.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rating.h"

static void add_many(RatingTable *t, int a, int b, int wins, int draws, int losses)
{
    for (int i = 0; i < wins; i++)
        rating_add(t, a, b, 1.0);
    for (int i = 0; i < draws; i++)
        rating_add(t, a, b, 0.5);
    for (int i = 0; i < losses; i++)
        rating_add(t, a, b, 0.0);
}

/// With two players the difference is the logistic Elo of the (regularised) score, split
/// evenly around the mean.
static void test_two_players(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 2);
    add_many(&t, 0, 1, 50, 20, 30);
    assert_true(rating_fit(&t, &r));
    double p = (50 + 10 + 0.5) / 101.0, want = -400 * log10(1 / p - 1);
    assert_true(fabs((r.elo[0] - r.elo[1]) - want) < 1e-6);
    assert_true(fabs(r.elo[0] + r.elo[1]) < 1e-9);
    assert_int_equal(r.games[0], 100);
    assert_true(fabs(r.points[0] - 60) < 1e-12);
    assert_true(r.elo_error[0] > 0 && fabs(r.elo_error[0] - r.elo_error[1]) < 1e-9);
}

/// Equal results all round give equal ratings (0) and equal error bars.
static void test_equal_field(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 3);
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++)
            add_many(&t, a, b, 10, 10, 10);
    assert_true(rating_fit(&t, &r));
    for (int i = 0; i < 3; i++) {
        assert_true(fabs(r.elo[i]) < 1e-6);
        assert_true(fabs(r.elo_error[i] - r.elo_error[0]) < 1e-9);
    }
}

/// Ratings follow the results, sum to zero, and a perfect score stays finite.
static void test_order_and_perfect_score(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 3);
    add_many(&t, 0, 1, 30, 10, 10);
    add_many(&t, 1, 2, 30, 10, 10);
    add_many(&t, 0, 2, 50, 0, 0);
    assert_true(rating_fit(&t, &r));
    assert_true(r.elo[0] > r.elo[1] && r.elo[1] > r.elo[2]);
    assert_true(fabs(r.elo[0] + r.elo[1] + r.elo[2]) < 1e-6);
    for (int i = 0; i < 3; i++)
        assert_true(isfinite(r.elo[i]) && isfinite(r.elo_error[i]));
}

/// Four times the games halve the error bar (to within the model's nonlinearity).
static void test_error_shrinks(void **state)
{
    (void)state;
    RatingTable a, b;
    RatingResult ra, rb;
    rating_init(&a, 2);
    rating_init(&b, 2);
    add_many(&a, 0, 1, 100, 100, 100);
    add_many(&b, 0, 1, 400, 400, 400);
    assert_true(rating_fit(&a, &ra) && rating_fit(&b, &rb));
    double ratio = ra.elo_error[0] / rb.elo_error[0];
    assert_true(ratio > 1.95 && ratio < 2.05);
}

/// Players without games linking them to the rest cannot be rated together.
static void test_disconnected(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 4);
    add_many(&t, 0, 1, 5, 5, 5);
    add_many(&t, 2, 3, 5, 5, 5);
    assert_false(rating_fit(&t, &r));
    assert_false(r.connected);
    rating_init(&t, 2);
    assert_false(rating_fit(&t, &r));
    rating_add(&t, 0, 0, 1.0); // a game against oneself is ignored
    rating_add(&t, 0, 5, 1.0); // so is an unknown player
    assert_false(rating_fit(&t, &r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_players),
        cmocka_unit_test(test_equal_field),
        cmocka_unit_test(test_order_and_perfect_score),
        cmocka_unit_test(test_error_shrinks),
        cmocka_unit_test(test_disconnected),
    };
    return cmocka_run_group_tests_name("rating", tests, NULL, NULL);
}
