// SPDX-License-Identifier: MIT
// The joint Bradley-Terry rating: two players reduce to the logistic Elo of the score, equal
// results give equal ratings, order follows results, ratings and error bars are relative to
// the anchor (hand-computed for a gauntlet), error bars shrink like 1/sqrt(games), a perfect
// score is flagged as no finite estimate, and engines not linked to the anchor are flagged.
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
    assert_true(rating_fit(&t, 0, &r));
    double p = (50 + 10 + 0.5) / 101.0, want = -400 * log10(1 / p - 1);
    assert_true(fabs((r.elo[0] - r.elo[1]) - want) < 1e-6);
    assert_true(fabs(r.elo[0]) < 1e-12); // the anchor
    assert_int_equal(r.games[0], 100);
    assert_true(fabs(r.points[0] - 60) < 1e-12);
    // The error of the difference: 1.96 / sqrt(n p (1 - p)) in log-strength, n with the prior.
    double err = 1.959964 * 400 / log(10) / sqrt(101 * p * (1 - p));
    assert_true(r.elo_error[0] == 0 && fabs(r.elo_error[1] - err) < 1e-6);
    assert_int_equal(r.kind[0], RATING_FINITE);
    assert_int_equal(r.kind[1], RATING_FINITE);
    // Anchored at the other engine: the same difference, the other way round.
    assert_true(rating_fit(&t, 1, &r));
    assert_true(fabs(r.elo[0] - want) < 1e-6 && fabs(r.elo[1]) < 1e-12);
    assert_true(fabs(r.elo_error[0] - err) < 1e-6 && r.elo_error[1] == 0);
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
    assert_true(rating_fit(&t, 0, &r));
    for (int i = 0; i < 3; i++)
        assert_true(fabs(r.elo[i]) < 1e-6);
    assert_true(r.elo_error[0] == 0 && r.elo_error[1] > 0);
    assert_true(fabs(r.elo_error[2] - r.elo_error[1]) < 1e-9);
}

/// Ratings follow the results; a pair that always won stays estimable when the rest of the
/// field links both ways.
static void test_order(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 3);
    add_many(&t, 0, 1, 30, 10, 10);
    add_many(&t, 1, 2, 30, 10, 10);
    add_many(&t, 2, 0, 1, 0, 49);
    assert_true(rating_fit(&t, 1, &r));
    assert_true(r.elo[0] > r.elo[1] && r.elo[1] > r.elo[2]);
    assert_true(fabs(r.elo[1]) < 1e-12);
    for (int i = 0; i < 3; i++) {
        assert_true(isfinite(r.elo[i]) && isfinite(r.elo_error[i]));
        assert_int_equal(r.kind[i], RATING_FINITE);
    }
    assert_true(r.connected);
}

/// A gauntlet (engines 1 and 2 each meet only the anchor 0): the tree's ratings are each pair's
/// own, computed by hand from the score with the prior's one virtual draw, and so are the
/// error bars (on a tree the variance of a difference is the edge's 1 / (n p (1 - p))).
static void test_gauntlet_by_hand(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 3);
    add_many(&t, 0, 1, 6, 2, 2); // the anchor scores 7/10 against 1: with the prior 7.5/11
    add_many(&t, 0, 2, 2, 2, 6); // and 3/10 against 2: 3.5/11
    assert_true(rating_fit(&t, 0, &r));
    double scale = 400 / log(10), p1 = 7.5 / 11, p2 = 3.5 / 11;
    assert_true(fabs(r.elo[1] - scale * log(3.5 / 7.5)) < 1e-6); // -132.40
    assert_true(fabs(r.elo[2] - scale * log(7.5 / 3.5)) < 1e-6); // +132.40
    assert_true(fabs(r.elo[1] + 132.3973) < 1e-3);
    assert_true(fabs(r.elo_error[1] - 1.959964 * scale / sqrt(11 * p1 * (1 - p1))) < 1e-6);
    assert_true(fabs(r.elo_error[2] - 1.959964 * scale / sqrt(11 * p2 * (1 - p2))) < 1e-6);
    assert_true(fabs(r.elo_error[1] - 220.406) < 1e-2);
}

/// A perfect score has no finite estimate: above (all won against the anchor), below (all
/// lost), and, in a round robin, relative to an anchor that won everything.
static void test_perfect_score(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r;
    rating_init(&t, 4);
    add_many(&t, 0, 1, 0, 0, 12); // 1 won 12 of 12 against the anchor
    add_many(&t, 0, 2, 12, 0, 0); // 2 lost all
    add_many(&t, 0, 3, 4, 4, 4);
    assert_true(rating_fit(&t, 0, &r));
    assert_int_equal(r.kind[0], RATING_FINITE);
    assert_int_equal(r.kind[1], RATING_ABOVE);
    assert_int_equal(r.kind[2], RATING_BELOW);
    assert_int_equal(r.kind[3], RATING_FINITE);
    assert_true(fabs(r.elo[3]) < 1e-6);
    assert_string_equal(rating_kind_name(RATING_ABOVE), "above");
    // Anchored at the engine that won everything: every other is below it.
    assert_true(rating_fit(&t, 1, &r));
    assert_int_equal(r.kind[0], RATING_BELOW);
    assert_int_equal(r.kind[2], RATING_BELOW);
    assert_int_equal(r.kind[3], RATING_BELOW);
    // Anchored at 3, linked to 1 and 2 through 0: 1 is still above, 2 below.
    assert_true(rating_fit(&t, 3, &r));
    assert_int_equal(r.kind[0], RATING_FINITE);
    assert_int_equal(r.kind[1], RATING_ABOVE);
    assert_int_equal(r.kind[2], RATING_BELOW);
    // Two engines that each won every game against a common opponent 0, anchored at one of
    // them: the other is neither above nor below, only unbounded.
    rating_init(&t, 3);
    add_many(&t, 1, 0, 5, 0, 0);
    add_many(&t, 2, 0, 5, 0, 0);
    assert_true(rating_fit(&t, 1, &r));
    assert_int_equal(r.kind[0], RATING_BELOW);
    assert_int_equal(r.kind[2], RATING_UNBOUNDED);
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
    assert_true(rating_fit(&a, 0, &ra) && rating_fit(&b, 0, &rb));
    double ratio = ra.elo_error[1] / rb.elo_error[1];
    assert_true(ratio > 1.95 && ratio < 2.05);
}

/// Engines without games linking them to the anchor are flagged, not rated; the anchor's group
/// is rated as if they were not there. An anchor without games rates nothing.
static void test_disconnected(void **state)
{
    (void)state;
    RatingTable t;
    RatingResult r, alone;
    rating_init(&t, 4);
    add_many(&t, 0, 1, 7, 2, 3);
    add_many(&t, 2, 3, 5, 5, 5);
    assert_true(rating_fit(&t, 0, &r));
    assert_false(r.connected);
    assert_int_equal(r.kind[1], RATING_FINITE);
    assert_int_equal(r.kind[2], RATING_UNLINKED);
    assert_int_equal(r.kind[3], RATING_UNLINKED);
    assert_string_equal(rating_kind_name(RATING_UNLINKED), "not connected");
    assert_int_equal(r.games[2], 15);
    rating_init(&t, 2);
    add_many(&t, 0, 1, 7, 2, 3);
    assert_true(rating_fit(&t, 0, &alone));
    assert_true(fabs(r.elo[1] - alone.elo[1]) < 1e-9);
    assert_true(fabs(r.elo_error[1] - alone.elo_error[1]) < 1e-9);
    rating_init(&t, 3);
    add_many(&t, 1, 2, 1, 1, 1);
    assert_false(rating_fit(&t, 0, &r));
    assert_int_equal(r.kind[1], RATING_UNLINKED);
    rating_init(&t, 2);
    assert_false(rating_fit(&t, 0, &r));
    rating_add(&t, 0, 0, 1.0); // a game against oneself is ignored
    rating_add(&t, 0, 5, 1.0); // so is an unknown player
    assert_false(rating_fit(&t, 0, &r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_players),   cmocka_unit_test(test_equal_field),
        cmocka_unit_test(test_order),         cmocka_unit_test(test_gauntlet_by_hand),
        cmocka_unit_test(test_perfect_score), cmocka_unit_test(test_error_shrinks),
        cmocka_unit_test(test_disconnected),
    };
    return cmocka_run_group_tests_name("rating", tests, NULL, NULL);
}
