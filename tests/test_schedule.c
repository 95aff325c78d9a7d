// SPDX-License-Identifier: MIT
// The schedule of game pairs: ids go out in order and once each, done pairs (from the
// journal) are skipped, duplicates and out-of-range ids are refused, completion is exact.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "schedule.h"

/// Every pair is handed out exactly once, in increasing order, in batches of any size.
static void test_each_pair_once(void **state)
{
    (void)state;
    Schedule s;
    assert_int_equal(schedule_init(&s, 10), 0);
    uint64_t ids[4], expect = 0;
    int n;
    while ((n = schedule_take(&s, ids, 3)) > 0)
        for (int i = 0; i < n; i++)
            assert_int_equal(ids[i], expect++);
    assert_int_equal(expect, 10);
    assert_int_equal(schedule_take(&s, ids, 4), 0);
    schedule_destroy(&s);
}

/// Pairs already done (replayed from the journal) are never handed out again; finishing
/// the rest completes the schedule; a pair finished twice counts once.
static void test_resume_and_duplicates(void **state)
{
    (void)state;
    Schedule s;
    assert_int_equal(schedule_init(&s, 6), 0);
    assert_true(schedule_finish(&s, 1));
    assert_true(schedule_finish(&s, 4));
    assert_false(schedule_finish(&s, 4)); // duplicate
    assert_false(schedule_finish(&s, 6)); // out of range
    uint64_t ids[8];
    int n = schedule_take(&s, ids, 8);
    assert_int_equal(n, 4);
    uint64_t want[] = {0, 2, 3, 5};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ids[i], want[i]);
    assert_false(schedule_complete(&s));
    for (int i = 0; i < 4; i++)
        assert_true(schedule_finish(&s, ids[i]));
    assert_true(schedule_complete(&s));
    assert_true(schedule_is_done(&s, 5));
    assert_false(schedule_is_done(&s, 99));
    schedule_destroy(&s);
}

/// A result for a pair never handed out (e.g. from before a restart) still counts once.
static void test_unhanded_result(void **state)
{
    (void)state;
    Schedule s;
    assert_int_equal(schedule_init(&s, 3), 0);
    assert_true(schedule_finish(&s, 2));
    uint64_t ids[3];
    assert_int_equal(schedule_take(&s, ids, 3), 2);
    assert_int_equal(ids[1], 1);
    schedule_destroy(&s);
}

/// A pair released by a departed worker goes out again, before later pairs; a done pair
/// cannot be released.
static void test_release(void **state)
{
    (void)state;
    Schedule s;
    assert_int_equal(schedule_init(&s, 5), 0);
    uint64_t ids[5];
    assert_int_equal(schedule_take(&s, ids, 3), 3);
    assert_true(schedule_finish(&s, 0));
    schedule_release(&s, 0); // done: stays done
    schedule_release(&s, 2);
    assert_int_equal(schedule_take(&s, ids, 5), 3);
    assert_int_equal(ids[0], 2);
    assert_int_equal(ids[1], 3);
    assert_int_equal(ids[2], 4);
    assert_true(schedule_is_done(&s, 0));
    schedule_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_pair_once),
        cmocka_unit_test(test_resume_and_duplicates),
        cmocka_unit_test(test_unhanded_result),
        cmocka_unit_test(test_release),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
