// SPDX-License-Identifier: MIT
// The fleet's scheduler (run/fleet_plan.c) driven on real queue files in a temporary
// directory, as fleet.c drives it: the queue's tests listed, those queued or running weighed,
// the ranks each holds given by the test (the fleet's slots). The order; the shares of three
// tests on 8 ranks; a test above its share drained for a waiting one after --settle, not
// before; a priority change draining a lower-priority test; a stopped idle test gone from the
// plan; no drain under a signal or during another; OpenBench's 25% band; a test started in
// the same plan holding its ranks; rank 0 alone with no worker.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fleet_plan.h"
#include "queue.h"
#include "scratch.h"

enum { MAX_TESTS = 8 };

typedef struct {
    char dir[64], queue[96], job[96];
    QueueTest *list; // the queue as last listed
    int n;
    FleetPlanTest tests[MAX_TESTS];
    int ranks[MAX_TESTS]; // by id - 1: worker ranks the fleet gave the test (0: waiting)
    double age[MAX_TESTS];
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    scratch_make(f->dir, sizeof f->dir, "plan");
    snprintf(f->queue, sizeof f->queue, "%s/q", f->dir);
    snprintf(f->job, sizeof f->job, "%s/a.ini", f->dir);
    scratch_write(f->job, "[job]\nkind = sprt\n");
    char why[1024];
    assert_int_equal(queue_open(f->queue, true, why, sizeof why), QUEUE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    scratch_remove(f->dir);
    free(f->list);
    free(f);
    return 0;
}

/// Submits a test (as `xqforge submit` records it) with its priority, throughput and time
/// control against 10+0.1.
static void submit(Fixture *f, const char *name, int priority, int throughput, double tc_ratio)
{
    QueueTest *t = calloc(1, sizeof *t);
    assert_non_null(t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->kind, sizeof t->kind, "sprt");
    snprintf(t->job_file, sizeof t->job_file, "%s", f->job);
    snprintf(t->job_dir, sizeof t->job_dir, "%s", f->dir);
    snprintf(t->set_dir, sizeof t->set_dir, "/");
    t->priority = priority;
    t->throughput = throughput;
    t->tc_ratio = tc_ratio;
    char why[1024];
    assert_int_equal(queue_add(f->queue, t, why, sizeof why), QUEUE_OK);
    free(t);
}

/// The fleet's mark of a test it starts: running, on its worker ranks.
static bool change_running(QueueTest *t, void *user, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    t->state = TEST_RUNNING;
    t->workers = *(const int *)user;
    return true;
}

/// `xqforge set ID priority=N` (cli/cmd_queue.c's change): a queued or running test only.
static bool change_priority(QueueTest *t, void *user, char *why, size_t why_len)
{
    if (t->state != TEST_QUEUED && t->state != TEST_RUNNING) {
        snprintf(why, why_len, "test %s has already ended", t->id);
        return false;
    }
    t->priority = *(const int *)user;
    return true;
}

/// `xqforge stop ID` of a test that is not running yet (cli/cmd_queue.c's change): stopped at
/// once.
static bool change_stop(QueueTest *t, void *user, char *why, size_t why_len)
{
    (void)user;
    if (t->state != TEST_QUEUED) {
        snprintf(why, why_len, "test %s is not queued", t->id);
        return false;
    }
    t->state = TEST_STOPPED;
    t->finished = (int64_t)time(NULL);
    snprintf(t->reason, sizeof t->reason, "stopped by xqforge stop before it started");
    return true;
}

static void update(Fixture *f, const char *id, QueueChange change, int value)
{
    char why[1024];
    assert_int_equal(queue_update(f->queue, id, change, &value, why, sizeof why), QUEUE_OK);
}

/// The fleet starts test id on ranks worker ranks, ago seconds ago.
static void run_on(Fixture *f, const char *id, int ranks, double ago)
{
    int k = (int)strtol(id, NULL, 10) - 1;
    assert_in_range(k, 0, MAX_TESTS - 1);
    f->ranks[k] = ranks;
    f->age[k] = ago;
    update(f, id, change_running, ranks);
}

/// Plans the queue as the fleet would now: its tests queued or running, in the fleet's order,
/// on workers ranks of which those the tests hold are not free.
static void plan(Fixture *f, int workers, FleetPlanIn *in, FleetPlan *out)
{
    char why[1024];
    free(f->list);
    f->list = NULL;
    assert_int_equal(queue_list(f->queue, &f->list, &f->n, why, sizeof why), QUEUE_OK);
    int nc = 0, held = 0;
    for (int i = 0; i < f->n; i++) {
        const QueueTest *t = &f->list[i];
        if (t->state != TEST_QUEUED && t->state != TEST_RUNNING)
            continue;
        int k = (int)strtol(t->id, NULL, 10) - 1;
        assert_in_range(k, 0, MAX_TESTS - 1);
        held += f->ranks[k];
        f->tests[nc++] = (FleetPlanTest){.id = t->id,
                                         .priority = t->priority,
                                         .running = f->ranks[k] > 0,
                                         .was_running = t->state == TEST_RUNNING,
                                         .throughput = t->throughput,
                                         .tc_ratio = t->tc_ratio,
                                         .sprt = true,
                                         .llr = NAN,
                                         .games = NAN,
                                         .ranks = f->ranks[k],
                                         .age = f->age[k],
                                         .ref = i};
    }
    fleet_plan_sort(f->tests, nc);
    *in = (FleetPlanIn){
        .tests = f->tests, .n = nc, .workers = workers, .free_ranks = workers - held, .settle = 30};
    assert_true(fleet_plan(in, out));
}

/// A test running alone on ranks of the 8 for ago seconds, and a second one submitted since:
/// the fleet's plan then (their shares are 4 and 4).
static void newcomer(Fixture *f, int ranks, double ago, FleetPlanIn *in, FleetPlan *out)
{
    submit(f, "first", 0, 100, 1);
    run_on(f, "0001", ranks, ago);
    submit(f, "second", 0, 100, 1);
    plan(f, 8, in, out);
    assert_int_equal(out->want[0], 4);
    assert_int_equal(out->want[1], 4);
}

/// The id of the test planned at i.
static const char *id_at(const Fixture *f, int i) { return f->tests[i].id; }

/// The plan drains test i, saying why.
static void assert_drain(const FleetPlan *p, int i, const char *reason)
{
    assert_int_equal(p->drain, i);
    assert_non_null(p->reason);
    assert_string_equal(p->reason, reason);
}

/// The fleet's order: a test left running by an earlier fleet (its record says running)
/// before an older queued one, a test holding ranks before both, a higher priority before all;
/// on one rank only the first has a share.
static void test_order(void **state)
{
    Fixture *f = *state;
    submit(f, "queued", 0, 100, 1);
    submit(f, "left", 0, 100, 1);
    submit(f, "holding", 0, 100, 1);
    submit(f, "urgent", 1, 100, 1);
    update(f, "0002", change_running, 0); // an earlier fleet's: no rank of this one
    run_on(f, "0003", 1, 5);
    FleetPlanIn in;
    FleetPlan p;
    plan(f, 1, &in, &p);
    const char *const ids[] = {"0004", "0003", "0002", "0001"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(id_at(f, i), ids[i]);
    assert_int_equal(p.want[0], 1);
    assert_int_equal(p.start[0], -1); // no free rank: it waits for the drain
    fleet_plan_destroy(&p);
}

/// Three tests on 8 ranks: throughput and a long time control weigh (100 at 10+0.1, 200 at
/// 10+0.1, 100 at six times that: itps 100, 200, 400), each gets at least one rank, the shares
/// sum to W, and all three start at once on them.
static void test_shares(void **state)
{
    Fixture *f = *state;
    submit(f, "short", 0, 100, 1);
    submit(f, "double", 0, 200, 1);
    submit(f, "long", 0, 100, 6);
    FleetPlanIn in;
    FleetPlan p;
    plan(f, 8, &in, &p);
    assert_int_equal(in.n, 3);
    const int want[] = {1, 2, 5};
    const char *const ids[] = {"0001", "0002", "0003"};
    int sum = 0;
    for (int i = 0; i < 3; i++) {
        assert_string_equal(id_at(f, i), ids[i]);
        assert_int_equal(p.want[i], want[i]);
        assert_int_equal(p.start[i], want[i]);
        sum += p.want[i];
    }
    assert_int_equal(sum, 8);
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    // On 3 ranks, the shortest test's 0.43 ranks are one all the same.
    plan(f, 3, &in, &p);
    for (int i = 0; i < 3; i++)
        assert_int_equal(p.want[i], 1);
    fleet_plan_destroy(&p);
    // On 2 ranks, each of the first two gets one and the third none: it waits.
    plan(f, 2, &in, &p);
    assert_int_equal(p.want[0] + p.want[1], 2);
    assert_int_equal(p.want[0], 1);
    assert_int_equal(p.want[2], 0);
    assert_int_equal(p.start[2], -1);
    fleet_plan_destroy(&p);
}

/// A test alone on all 8 ranks is drained when a second one arrives (their shares are 4 and
/// 4), but only once it has run --settle seconds; the newcomer starts on nothing meanwhile.
static void test_drain_above_share(void **state)
{
    Fixture *f = *state;
    FleetPlanIn in;
    FleetPlan p;
    newcomer(f, 8, 10, &in, &p);
    assert_string_equal(id_at(f, 0), "0001"); // running first
    assert_int_equal(p.start[1], -1);         // no free rank
    assert_int_equal(p.drain, -1);            // 10 s < --settle 30 s
    fleet_plan_destroy(&p);
    f->age[0] = 31;
    plan(f, 8, &in, &p);
    assert_drain(&p, 0, "a test waits for its share");
    fleet_plan_destroy(&p);
    // Drained (its ranks free, its record still running): both start on their shares.
    f->ranks[0] = 0;
    plan(f, 8, &in, &p);
    assert_int_equal(p.start[0], 4);
    assert_int_equal(p.start[1], 4);
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
}

/// `xqforge set` raising a waiting test's priority puts it first: the running test of lower
/// priority that has no share left is drained for it ("tests of higher priority wait").
static void test_priority_change(void **state)
{
    Fixture *f = *state;
    submit(f, "a", 0, 100, 1);
    submit(f, "b", 0, 100, 1);
    submit(f, "c", 0, 100, 1);
    run_on(f, "0001", 1, 60);
    run_on(f, "0002", 1, 60);
    FleetPlanIn in;
    FleetPlan p;
    plan(f, 2, &in, &p);
    assert_string_equal(id_at(f, 2), "0003");
    assert_int_equal(p.want[2], 0); // beyond the first W: it waits, nobody is drained
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    update(f, "0003", change_priority, 5);
    plan(f, 2, &in, &p);
    assert_string_equal(id_at(f, 0), "0003");
    assert_string_equal(id_at(f, 1), "0001");
    assert_string_equal(id_at(f, 2), "0002");
    assert_int_equal(p.want[0], 1);
    assert_int_equal(p.want[2], 0);
    assert_drain(&p, 2, "tests of higher priority wait");
    fleet_plan_destroy(&p);
}

/// A queued test stopped by `xqforge stop` leaves the plan: nothing starts, and the running
/// test, alone below its share with free ranks, is drained to take them.
static void test_stop_idle(void **state)
{
    Fixture *f = *state;
    submit(f, "running", 0, 100, 1);
    submit(f, "idle", 0, 100, 1);
    run_on(f, "0001", 2, 60);
    FleetPlanIn in;
    FleetPlan p;
    plan(f, 4, &in, &p);
    assert_int_equal(in.n, 2);
    assert_int_equal(p.start[1], 2); // the idle test would take the 2 free ranks
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    update(f, "0002", change_stop, 0);
    plan(f, 4, &in, &p);
    assert_int_equal(in.n, 1);
    assert_string_equal(id_at(f, 0), "0001");
    assert_int_equal(p.want[0], 4);
    assert_drain(&p, 0, "free ranks raise its share");
    fleet_plan_destroy(&p);
}

/// A test due to be drained is not while another drains (one at a time) nor under a signal
/// (the whole fleet drains then).
static void test_no_drain_signal_or_draining(void **state)
{
    Fixture *f = *state;
    FleetPlanIn in;
    FleetPlan p;
    newcomer(f, 8, 60, &in, &p);
    assert_int_equal(p.drain, 0);
    in.signalled = true;
    fleet_plan_drain(&in, &p);
    assert_int_equal(p.drain, -1);
    assert_null(p.reason);
    in.signalled = false, in.draining = true;
    fleet_plan_drain(&in, &p);
    assert_int_equal(p.drain, -1);
    in.draining = false;
    fleet_plan_drain(&in, &p);
    assert_int_equal(p.drain, 0);
    fleet_plan_destroy(&p);
}

/// OpenBench's band: with shares of 4 and 4, a test holding 3 keeps them (within 25%) and the
/// one waiting starts on the 5 left; holding 3 and 4 with a rank free, nobody is drained to
/// raise the first; on 7 ranks (shares 4 and 3) one holding 5 keeps them though the other
/// holds 2; holding 6 and 2 on 8, the one above is drained for the one below.
static void test_band(void **state)
{
    Fixture *f = *state;
    submit(f, "a", 0, 100, 1);
    submit(f, "b", 0, 100, 1);
    run_on(f, "0001", 3, 60);
    FleetPlanIn in;
    FleetPlan p;
    plan(f, 8, &in, &p);
    assert_int_equal(p.want[1], 4);
    assert_int_equal(p.start[1], 5);
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    run_on(f, "0002", 4, 60);
    plan(f, 8, &in, &p);
    assert_int_equal(in.free_ranks, 1);
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    run_on(f, "0001", 5, 60);
    run_on(f, "0002", 2, 60);
    plan(f, 7, &in, &p);
    assert_int_equal(p.want[0], 4);
    assert_int_equal(p.want[1], 3);
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    run_on(f, "0001", 6, 60);
    plan(f, 8, &in, &p);
    assert_drain(&p, 0, "a test runs below its share");
    fleet_plan_destroy(&p);
}

/// A test started in this plan holds its ranks: the one above its share is drained because a
/// test runs below its share (on the 2 ranks left), not because one waits.
static void test_drain_after_start(void **state)
{
    Fixture *f = *state;
    FleetPlanIn in;
    FleetPlan p;
    newcomer(f, 6, 60, &in, &p);
    assert_int_equal(p.start[1], 2);
    assert_drain(&p, 0, "a test runs below its share");
    // The start failed (fleet.c): the drain decided again, the second test still waiting.
    p.start[1] = -1;
    fleet_plan_drain(&in, &p);
    assert_drain(&p, 0, "a test waits for its share");
    fleet_plan_destroy(&p);
}

/// With no worker rank, rank 0 plays the first test itself, one at a time, and drains none.
static void test_no_workers(void **state)
{
    Fixture *f = *state;
    submit(f, "a", 0, 100, 1);
    submit(f, "b", 3, 100, 1);
    FleetPlanIn in;
    FleetPlan p;
    plan(f, 0, &in, &p);
    assert_string_equal(id_at(f, 0), "0002");
    assert_int_equal(p.start[0], 0);
    assert_int_equal(p.start[1], -1);
    assert_int_equal(p.drain, -1);
    fleet_plan_destroy(&p);
    f->tests[0].running = true;
    assert_true(fleet_plan(&in, &p));
    assert_int_equal(p.start[1], -1);
    fleet_plan_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shares, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_above_share, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_drain_signal_or_draining, setup, teardown),
        cmocka_unit_test_setup_teardown(test_band, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_after_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_workers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
