// SPDX-License-Identifier: MIT
// The fleet (fleet.h): one MPI allocation plays the tests of a queue (queue.c), several at
// once. Rank 0 coordinates every running test, each in a thread of its own; the worker ranks
// are split among the tests, each test on a group of its own (link_group: rank 0 and its
// workers), and each test is exactly a `xqforge run` of its job (session.c: run_session)
// with its outputs in QUEUE/tests/ID/ and resume = auto.
//
// Scheduling (every 2 s, and at once when ranks are freed), as fishtest and OpenBench do it,
// decided by fleet_plan.c and applied here; jobs/README.md gives the formula. The tests that
// may hold ranks are the first W (W worker ranks) in the order: higher priority, then holding
// ranks now, then left running by an earlier fleet, then older. Each gets W x itp / (sum of
// their itps) ranks, rounded, at least one, summing to W, its internal throughput itp being
// fishtest's calc_itp: the throughput times tc_ratio^0.774 for a time control longer than
// 10+0.1, times (3 + LLR in [0, 2]) / 3 for an SPRT near its verdict, times min(games /
// 200,000, 2) past 200,000 games. A test keeps its ranks while it has within 25% of its share
// (OpenBench), so engines are not restarted for nothing; otherwise, once it has run --settle
// seconds, it is drained (its games in flight finished, journaled) and started again on its
// share: a test above its share when another waits below, a test of lower priority than the W
// first, or a test below its share when ranks are free. A drained test resumes from its
// journal, exactly.
// Rank 0 names a worker's next test by LINK_TAG_FLEET (id, group tag, the group's ranks).
//
// Faults: one fleet per queue (QUEUE/fleet.lock, held for the fleet's life: a second one is
// refused naming the holder, or waits with --wait); a test is run only when the queue trusts
// it (queue_test_allowed, on every rank, before its job is read); a start that finds the
// test's output directory held by another run is tried again later, backing off, and fails
// the test only after FLEET_START_TRIES in a row; a test whose state cannot be recorded
// (a full disk) ends the fleet: the running tests drained (their games journaled), exit 1.
#include "fleet.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet_plan.h"
#include "fleet_upload.h"
#include "job_kinds.h"
#include "queue.h"
#include "queue_page.h"
#include "session.h"

enum {
    FLEET_TICK_MS = 100,   // the coordinating loop's pace
    FLEET_POLL_MS = 2000,  // how often the queue is read (new tests, stop, the page)
    FLEET_TAG_BASE = 1000, // a group's tag: this plus the test's number
    FLEET_MESSAGE_MAX = 16384,
    FLEET_START_TRIES = 6, // failed starts in a row (output directory held) before it fails
    FLEET_BACKOFF_S = 2,   // the first wait after a failed start; doubled each time
    FLEET_BACKOFF_MAX_S = 300,
    FLEET_RETRY_MAX = 256 // tests backing off at once (more are failed at once)
};

/// Whether a signal drains the fleet (the process then ends).
static bool signalled(const FleetArgs *a) { return a->signalled && atomic_load(a->signalled); }

/// A test that runs: rank 0's coordinator thread for it, and its ranks.
typedef struct {
    QueueTest test;
    int ranks[FLEET_RANKS_MAX];
    int n; // ranks[0] is 0, the coordinator
    atomic_bool stop, done;
    bool user_stopped; // `xqforge stop` drained it
    bool yielding;     // drained to be started again on its share
    double since;      // when it started (monotonic seconds)
    bool busy;         // its run found the output directory held by another run
    int rc;
    char why[1024];
    pthread_t thread;
    Link *world;
    const FleetArgs *a;
} Slot;

/// Every rank of a test's group: its job run as `xqforge run` would, outputs in its directory.
int fleet_run_test(Link *group, const FleetArgs *fa, const char *id, bool coordinator_plays,
                   atomic_bool *stop, bool *busy, char *why, size_t why_len)
{
    const char *dir = fa->dir;
    QueueTest *t = calloc(1, sizeof *t);
    char *path = malloc(QUEUE_PATH_MAX + 64), *out = malloc(QUEUE_PATH_MAX + 64),
         *set_out = malloc(QUEUE_PATH_MAX + 80), *abs_dir = malloc(QUEUE_PATH_MAX);
    int rc = 1;
    if (!t || !path || !out || !set_out || !abs_dir) {
        snprintf(why, why_len, "out of memory");
    } else if (!realpath(dir, abs_dir)) {
        snprintf(why, why_len, "queue %s cannot be resolved", dir);
    } else if (queue_test_allowed(dir, id, why, why_len) != QUEUE_OK) {
        // Checked again here, on every rank, right before the job is read: nothing of a test
        // the queue does not trust is read, built or started.
        fprintf(stderr, "xqforge fleet (rank %d): %s\n", link_rank(group), why);
    } else if (queue_read(dir, id, t, why, why_len) == QUEUE_OK) {
        queue_test_path(abs_dir, id, "job.ini", path, QUEUE_PATH_MAX + 64);
        queue_test_path(abs_dir, id, NULL, out, QUEUE_PATH_MAX + 64);
        // The test's overrides, the fleet's (the allocation's layout), whether rank 0 plays
        // (not while it coordinates several tests), then its outputs' place: the last wins.
        const char *sets[2 * QUEUE_SETS_MAX + 2];
        int n = 0;
        for (int i = 0; i < t->n_sets; i++)
            sets[n++] = t->sets[i];
        for (int i = 0; i < fa->n_sets; i++)
            sets[n++] = fa->sets[i];
        sets[n++] =
            coordinator_plays ? "job.coordinator_plays=true" : "job.coordinator_plays=false";
        snprintf(set_out, QUEUE_PATH_MAX + 80, "output.dir=%s", out);
        sets[n++] = set_out;
        RunArgs a = {.path = path,
                     .sets = sets,
                     .n_sets = n,
                     .file_dir = t->job_dir,
                     .set_dir = t->set_dir,
                     .resume_auto = true,
                     .verbose = fa->verbose,
                     .stop = stop,
                     .signalled = fa->signalled,
                     .abort_now = fa->abort_now,
                     .busy = busy};
        rc = run_session(group, &a, why, why_len);
    }
    free(t);
    free(path);
    free(out);
    free(set_out);
    free(abs_dir);
    return rc;
}

/// Rank 0: one test's coordinator, on its group.
static void *slot_main(void *arg)
{
    Slot *s = arg;
    Link *group = NULL;
    int tag = FLEET_TAG_BASE + (int)strtol(s->test.id, NULL, 10);
    if (link_group(s->world, s->ranks, s->n, tag, &group, s->why, sizeof s->why) != LINK_OK) {
        s->rc = 1;
    } else {
        FleetRunTest run = s->a->run_test ? s->a->run_test : fleet_run_test;
        s->rc = run(group, s->a, s->test.id, s->n == 1, &s->stop, &s->busy, s->why, sizeof s->why);
        link_group_free(group);
    }
    atomic_store(&s->done, true);
    return NULL;
}

typedef struct {
    TestState state;
    const char *reason;
    bool start;  // stamp the start time (first start only)
    int workers; // its worker ranks now
} Mark;

static bool change_mark(QueueTest *t, void *user, char *why, size_t why_len)
{
    const Mark *m = user;
    (void)why;
    (void)why_len;
    t->state = m->state;
    t->workers = m->workers;
    if (m->start && !t->started)
        t->started = (int64_t)time(NULL);
    if (m->state != TEST_RUNNING && m->state != TEST_QUEUED)
        t->finished = (int64_t)time(NULL);
    if (m->reason)
        snprintf(t->reason, sizeof t->reason, "%s", m->reason);
    return true;
}

/// Records a test's state; false (said, and kept in failed[cap]) when it cannot be recorded:
/// the fleet then stops, since a test it cannot record it would run again and again.
static bool fleet_mark(const char *dir, const char *id, TestState state, const char *reason,
                       bool start, int workers, char *failed, size_t cap)
{
    char why[512];
    Mark m = {state, reason, start, workers};
    bool ok = queue_update(dir, id, change_mark, &m, why, sizeof why) == QUEUE_OK;
    if (!ok) {
        fprintf(stderr, "xqforge fleet: cannot record test %s: %s\n", id, why);
        if (failed && !failed[0])
            snprintf(failed, cap, "cannot record test %s: %s", id, why);
    }
    if (!queue_page_write(dir, why, sizeof why))
        fprintf(stderr, "xqforge fleet: the queue page: %s\n", why);
    return ok;
}

/// The state of rank 0's coordination.
typedef struct {
    Link *world;
    const char *dir;
    const FleetArgs *a;
    int workers;  // ranks 1..workers
    bool *busy;   // [workers + 1]: a worker rank in a running test
    Slot **slots; // running tests
    int slot_count;
    char broken[640];      // the state that could not be recorded: the fleet drains and ends
    char said_record[512]; // the last bad test.json said
    struct {
        char id[QUEUE_ID_MAX + 1];
        int fails;         // failed starts in a row
        double not_before; // monotonic seconds
        bool warned;       // a test refused as foreign: said once
    } retry[FLEET_RETRY_MAX];
    int retry_count;
    bool backing_off; // a test waits for its next try: the queue is not empty
} Fleet;

static double fleet_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool fleet_running(const Fleet *f, const char *id)
{
    for (int i = 0; i < f->slot_count; i++)
        if (!strcmp(f->slots[i]->test.id, id))
            return true;
    return false;
}

/// Starts a test on rank 0 and the given workers: tells each worker, then its thread.
static bool fleet_start(Fleet *f, const QueueTest *t, const int *workers, int n)
{
    Slot *s = calloc(1, sizeof *s);
    if (!s)
        return false;
    s->test = *t;
    s->ranks[0] = 0;
    for (int i = 0; i < n; i++)
        s->ranks[1 + i] = workers[i];
    s->n = n + 1;
    s->world = f->world;
    s->a = f->a;
    s->since = fleet_now();
    printf("\nxqforge fleet: test %s (%s, %s) on %d worker rank%s%s\n", t->id, t->name, t->kind, n,
           n == 1 ? "" : "s", t->state == TEST_RUNNING ? ": resuming it" : "");
    fleet_mark(f->dir, t->id, TEST_RUNNING, NULL, true, n, f->broken, sizeof f->broken);
    // "ID TAG N R1 .. RN": the group, in the order every member passes to link_group.
    char msg[FLEET_MESSAGE_MAX];
    int len = snprintf(msg, sizeof msg, "%s %d", t->id, s->n);
    for (int i = 0; i < s->n && len < (int)sizeof msg - 16; i++)
        len += snprintf(msg + len, sizeof msg - (size_t)len, " %d", s->ranks[i]);
    for (int i = 1; i < s->n; i++) {
        if (link_send(f->world, s->ranks[i], LINK_TAG_FLEET, msg, (size_t)len + 1) != LINK_OK) {
            fprintf(stderr, "xqforge fleet: cannot reach rank %d\n", s->ranks[i]);
            free(s);
            return false;
        }
        f->busy[s->ranks[i]] = true;
    }
    if (pthread_create(&s->thread, NULL, slot_main, s) != 0) {
        fprintf(stderr, "xqforge fleet: cannot start a coordinator thread\n");
        free(s);
        return false;
    }
    f->slots[f->slot_count++] = s;
    return true;
}

/// A number member of a test's figures, or NAN.
static double figure(json_t *f, const char *key)
{
    json_t *v = json_object_get(f, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/// A test the fleet may give ranks to: running on a slot, or waiting.
typedef struct {
    QueueTest test;
    Slot *slot; // NULL: waiting
} Cand;

/// Drains a running test so that it starts again on its share.
static void fleet_yield(Slot *s, int want, const char *because)
{
    if (want > 0)
        printf("\nxqforge fleet: test %s drains its %d worker rank%s, to go on with %d: %s\n",
               s->test.id, s->n - 1, s->n == 2 ? "" : "s", want, because);
    else
        printf("\nxqforge fleet: test %s drains its %d worker rank%s and waits: %s\n", s->test.id,
               s->n - 1, s->n == 2 ? "" : "s", because);
    s->yielding = true;
    atomic_store(&s->stop, true);
}

/// The retry entry of a test (made when make is true); NULL when there is none (or no room).
static int fleet_retry(Fleet *f, const char *id, bool make)
{
    for (int i = 0; i < f->retry_count; i++)
        if (!strcmp(f->retry[i].id, id))
            return i;
    if (!make || f->retry_count == FLEET_RETRY_MAX)
        return -1;
    int i = f->retry_count++;
    memset(&f->retry[i], 0, sizeof f->retry[i]);
    snprintf(f->retry[i].id, sizeof f->retry[i].id, "%s", id);
    return i;
}

/// A test ended: its failed starts in a row are forgotten.
static void fleet_retry_clear(Fleet *f, const char *id)
{
    int i = fleet_retry(f, id, false);
    if (i >= 0)
        f->retry[i] = f->retry[--f->retry_count];
}

/// The tests that may hold ranks (fleet_plan_sort orders them); NULL when out of memory. A
/// test that may not run here is marked failed and left out (a foreign one only said, once:
/// its directory is not the queue's to write), and so is one backing off after a failed start
/// until its time comes.
static Cand *fleet_candidates(Fleet *f, int *count, bool *draining)
{
    QueueTest *tests = NULL;
    int n = 0, nc = 0;
    char why[512];
    // A bad record is said when it first appears (or changes), not at every poll.
    if (queue_list(f->dir, &tests, &n, why, sizeof why) == QUEUE_ERR_RECORD &&
        strcmp(why, f->said_record)) {
        fprintf(stderr, "xqforge fleet: %s (that test is skipped)\n", why);
        snprintf(f->said_record, sizeof f->said_record, "%s", why);
    }
    Cand *c = calloc((size_t)(n + f->slot_count + 1), sizeof *c);
    if (!c) {
        free(tests);
        return NULL;
    }
    *draining = false;
    f->backing_off = false;
    for (int i = 0; i < f->slot_count; i++) {
        Slot *sl = f->slots[i];
        *draining = *draining || atomic_load(&sl->stop); // a drain in progress
        if (!atomic_load(&sl->stop))
            c[nc++] = (Cand){.test = sl->test, .slot = sl};
    }
    for (int i = 0; i < n; i++) {
        if ((tests[i].state != TEST_RUNNING && tests[i].state != TEST_QUEUED) ||
            fleet_running(f, tests[i].id))
            continue;
        int r = fleet_retry(f, tests[i].id, false);
        if (r >= 0 && f->retry[r].warned)
            continue;
        if (r >= 0 && fleet_now() < f->retry[r].not_before) {
            f->backing_off = true;
            continue;
        }
        QueueStatus qs = queue_test_allowed(f->dir, tests[i].id, why, sizeof why);
        if (qs == QUEUE_ERR_FOREIGN) {
            fprintf(stderr, "xqforge fleet: %s\n", why);
            if ((r = fleet_retry(f, tests[i].id, true)) >= 0)
                f->retry[r].warned = true;
            continue;
        }
        if (qs != QUEUE_OK) {
            fprintf(stderr, "xqforge fleet: %s\n", why);
            fleet_mark(f->dir, tests[i].id, TEST_FAILED, why, false, 0, f->broken,
                       sizeof f->broken);
            continue;
        }
        c[nc++] = (Cand){.test = tests[i]};
    }
    free(tests);
    *count = nc;
    return c;
}

/// A candidate as the plan weighs it (its figures read only where shares are computed).
static FleetPlanTest cand_plan_test(const Fleet *f, const Cand *c, int ref, double now)
{
    const QueueTest *t = &c->test;
    FleetPlanTest p = {.id = t->id,
                       .priority = t->priority,
                       .running = c->slot != NULL,
                       .was_running = t->state == TEST_RUNNING,
                       .throughput = t->throughput,
                       .tc_ratio = t->tc_ratio,
                       .sprt = !strcmp(t->kind, job_kind_name(JOB_SPRT)),
                       .llr = NAN,
                       .games = NAN,
                       .ranks = c->slot ? c->slot->n - 1 : 0,
                       .age = c->slot ? now - c->slot->since : 0,
                       .ref = ref};
    if (f->workers > 0) {
        json_t *fig = queue_page_figures(f->dir, t->id);
        p.llr = figure(fig, "llr");
        p.games = figure(fig, "games");
        json_decref(fig);
    }
    return p;
}

/// Shares the worker ranks among the tests (fleet_plan.h): starts the tests waiting on the
/// free ranks, and drains at most one running test whose share is no longer fair.
static bool fleet_schedule(Fleet *f, bool *waiting)
{
    int nc = 0, free_n = 0;
    bool draining = false;
    Cand *c = fleet_candidates(f, &nc, &draining);
    FleetPlanTest *p = malloc((size_t)(nc + 1) * sizeof *p);
    int *free_ranks = malloc((size_t)(f->workers + 1) * sizeof *free_ranks);
    FleetPlan plan = {.drain = -1};
    bool ok = c && p && free_ranks;
    *waiting = false;
    double now = fleet_now();
    for (int i = 0; ok && i < nc; i++) {
        *waiting = *waiting || !c[i].slot;
        p[i] = cand_plan_test(f, &c[i], i, now);
    }
    for (int r = 1; ok && r <= f->workers; r++)
        if (!f->busy[r])
            free_ranks[free_n++] = r;
    if (ok) {
        fleet_plan_sort(p, nc);
        FleetPlanIn in = {.tests = p,
                          .n = nc,
                          .workers = f->workers,
                          .free_ranks = free_n,
                          .settle = f->a->settle,
                          .draining = draining,
                          .signalled = signalled(f->a)};
        ok = fleet_plan(&in, &plan);
        // The starts in the fleet's order; one that fails ends them, and the drain is decided
        // again as if they had not been planned.
        for (int k = 0, next = 0; ok && k < nc; k++) {
            Cand *ck = &c[p[k].ref];
            if (plan.start[k] < 0)
                continue;
            if (!fleet_start(f, &ck->test, free_ranks + next, plan.start[k])) {
                for (int j = k; j < nc; j++)
                    plan.start[j] = -1;
                fleet_plan_drain(&in, &plan);
                break;
            }
            ck->slot = f->slots[f->slot_count - 1];
            next += plan.start[k];
        }
    }
    if (ok && plan.drain >= 0)
        fleet_yield(c[p[plan.drain].ref].slot, plan.want[plan.drain], plan.reason);
    fleet_plan_destroy(&plan);
    free(c);
    free(p);
    free(free_ranks);
    return ok;
}

/// Ends the tests whose coordinator is done: their state recorded, their ranks free.
static void fleet_reap(Fleet *f, int *rc)
{
    for (int i = 0; i < f->slot_count;) {
        Slot *s = f->slots[i];
        if (!atomic_load(&s->done)) {
            i++;
            continue;
        }
        pthread_join(s->thread, NULL);
        const char *id = s->test.id;
        bool again = false;
        char *broken = f->broken;
        size_t bcap = sizeof f->broken;
        int r = -1;
        if (s->user_stopped && !signalled(f->a)) {
            fleet_mark(f->dir, id, TEST_STOPPED, "stopped by xqforge stop", false, 0, broken, bcap);
        } else if (s->rc == 130 && s->yielding && !signalled(f->a)) {
            // Drained to share the ranks again: it stays running, and starts on its share.
            fleet_mark(f->dir, id, TEST_RUNNING, NULL, false, 0, broken, bcap);
            again = true;
        } else if (s->rc == 130 || signalled(f->a)) {
            *rc = 130; // drained by a signal: it stays running, and the next fleet resumes it
            fleet_mark(f->dir, id, TEST_RUNNING, NULL, false, 0, broken, bcap);
        } else if (s->rc == 0) {
            fleet_mark(f->dir, id, TEST_FINISHED, "", false, 0, broken, bcap);
        } else if (s->busy && (r = fleet_retry(f, id, true)) >= 0 &&
                   ++f->retry[r].fails < FLEET_START_TRIES) {
            // Its output directory is another run's for now: never a reason to fail it. It
            // waits, 2, 4, 8 ... s (capped), and keeps the state it had.
            double wait = FLEET_BACKOFF_S * pow(2, f->retry[r].fails - 1);
            wait = wait < FLEET_BACKOFF_MAX_S ? wait : FLEET_BACKOFF_MAX_S;
            f->retry[r].not_before = fleet_now() + wait;
            char reason[1200];
            snprintf(reason, sizeof reason, "start %d of %d failed: %.1000s; tried again in %.0f s",
                     f->retry[r].fails, FLEET_START_TRIES, s->why, wait);
            printf("xqforge fleet: test %s: %s\n", id, reason);
            fleet_mark(f->dir, id, s->test.state, reason, false, 0, broken, bcap);
            again = true;
        } else {
            char reason[1200];
            if (r >= 0)
                snprintf(reason, sizeof reason, "%d starts in a row failed: %.1000s",
                         FLEET_START_TRIES, s->why);
            else
                snprintf(reason, sizeof reason, "exit %d: %.1000s", s->rc,
                         s->why[0] ? s->why : "see the fleet's output");
            fleet_mark(f->dir, id, TEST_FAILED, reason, false, 0, broken, bcap);
        }
        if (!again)
            fleet_retry_clear(f, id);
        printf("xqforge fleet: test %s %s\n", id,
               !again    ? "ended"
               : s->busy ? "not started"
                         : "drained, to go on on its share");
        for (int k = 1; k < s->n; k++)
            f->busy[s->ranks[k]] = false;
        free(s);
        f->slots[i] = f->slots[--f->slot_count];
    }
}

/// Applies `xqforge stop` to the running tests, and a signal's drain to all of them.
static void fleet_watch(Fleet *f, bool read_queue)
{
    char why[512];
    for (int i = 0; i < f->slot_count; i++) {
        Slot *s = f->slots[i];
        if (signalled(f->a))
            atomic_store(&s->stop, true);
        QueueTest t;
        if (read_queue && !s->user_stopped &&
            queue_read(f->dir, s->test.id, &t, why, sizeof why) == QUEUE_OK) {
            if (t.stop_requested) {
                printf("\nxqforge fleet: test %s: stop requested, draining it\n", t.id);
                s->user_stopped = true;
                atomic_store(&s->stop, true);
            }
            s->test.throughput = t.throughput; // `xqforge set`: weighs the next split
            s->test.priority = t.priority;
        }
    }
}

static int fleet_coordinate(Link *world, const FleetArgs *a)
{
    const char *dir = a->dir;
    int workers = link_size(world) - 1, rc = 0;
    Fleet f = {.world = world,
               .dir = dir,
               .a = a,
               .workers = workers,
               .busy = calloc((size_t)workers + 1, sizeof(bool)),
               .slots = calloc((size_t)workers + 1, sizeof(Slot *))};
    if (!f.busy || !f.slots) {
        fprintf(stderr, "xqforge fleet: out of memory\n");
        free(f.busy);
        free(f.slots);
        return 1;
    }
    bool said_waiting = false, waiting = false;
    char why[512];
    FleetUpload *up = fleet_upload_start(dir); // fleet.ini's [report]: the page uploaded
    for (long tick = 0;; tick++) {
        bool poll = tick % (FLEET_POLL_MS / FLEET_TICK_MS) == 0;
        int before = f.slot_count;
        fleet_reap(&f, &rc);
        poll = poll || f.slot_count < before; // ranks were freed: give them out at once
        fleet_watch(&f, poll);
        if (f.broken[0]) {
            // A state it cannot record: nothing more is started, the running tests drain
            // (their games journaled), and the fleet ends naming the cause.
            for (int i = 0; i < f.slot_count; i++)
                atomic_store(&f.slots[i]->stop, true);
            if (f.slot_count == 0) {
                fprintf(stderr,
                        "xqforge fleet: %s: the fleet stops (the tests' games are in their "
                        "journals; once the cause is fixed, `xqforge requeue %s ID` puts a test "
                        "back)\n",
                        f.broken, dir);
                rc = 1;
                break;
            }
        } else if (signalled(a)) {
            if (f.slot_count == 0)
                break;
        } else if (poll) {
            if (!fleet_schedule(&f, &waiting)) {
                rc = 1;
                break;
            }
            if (f.slot_count == 0 && !waiting && !f.backing_off) {
                if (a->until_empty) {
                    printf("xqforge fleet: no test left: the fleet ends\n");
                    break;
                }
                if (!said_waiting)
                    printf("xqforge fleet: waiting for tests (xqforge submit %s JOBFILE)\n", dir);
                said_waiting = true;
            } else {
                said_waiting = false;
            }
        }
        if (poll && f.slot_count > 0)
            queue_page_write(dir, why, sizeof why); // the running tests' figures move on
        fleet_upload_poll(up);
        nanosleep(&(struct timespec){.tv_nsec = FLEET_TICK_MS * 1000 * 1000}, NULL);
    }
    for (int r = 1; r <= workers; r++)
        if (link_send(world, r, LINK_TAG_FLEET, "end", 4) != LINK_OK)
            fprintf(stderr, "xqforge fleet: cannot reach rank %d to end it\n", r);
    queue_page_write(dir, why, sizeof why);
    fleet_upload_end(up);
    free(f.busy);
    free(f.slots);
    return rc ? rc : (signalled(a) ? RUN_EXIT_DRAINED : 0);
}

/// A worker rank: waits for rank 0's next test ("ID N R1..RN") and plays its part, until
/// "end". A signal only drains the test in progress (rank 0 ends the fleet).
static int fleet_work(Link *world, const FleetArgs *a)
{
    for (;;) {
        void *data = NULL;
        size_t len = 0;
        int src;
        LinkTag tag;
        LinkStatus st = link_wait(world, LINK_TAG_FLEET, 500, &src, &tag, &data, &len);
        if (st == LINK_NONE)
            continue;
        if (st != LINK_OK || !len || ((char *)data)[len - 1] != '\0' || !strcmp(data, "end")) {
            free(data);
            break;
        }
        char id[QUEUE_ID_MAX + 1] = "", *p = data, *end;
        int n = 0, ranks[FLEET_RANKS_MAX];
        if (sscanf(p, "%15s %d", id, &n) != 2 || n < 1 || n > FLEET_RANKS_MAX) {
            fprintf(stderr, "xqforge fleet (rank %d): a bad order from rank 0\n", link_rank(world));
            free(data);
            break;
        }
        p = strchr(strchr(p, ' ') + 1, ' ');
        for (int i = 0; i < n && p; i++, p = end)
            ranks[i] = (int)strtol(p, &end, 10);
        free(data);
        char why[1024] = "";
        Link *group = NULL;
        int tag_id = FLEET_TAG_BASE + (int)strtol(id, NULL, 10);
        if (link_group(world, ranks, n, tag_id, &group, why, sizeof why) != LINK_OK) {
            fprintf(stderr, "xqforge fleet (rank %d): test %s: %s\n", link_rank(world), id, why);
            continue;
        }
        FleetRunTest run = a->run_test ? a->run_test : fleet_run_test;
        run(group, a, id, false, a->drain, NULL, why, sizeof why);
        link_group_free(group);
        if (!signalled(a)) // a test's end, not a signal's: the next test starts undrained
            atomic_store(a->drain, false);
    }
    return signalled(a) ? RUN_EXIT_DRAINED : 0;
}

/// QUEUE/fleet.lock taken for the fleet's life (flock, or the O_EXCL file where the file
/// system has no flock); with wait, polled each second until the fleet holding it ends.
/// false with why naming the holder.
bool fleet_lock(const char *dir, bool wait, FilesLock *lock, char *why, size_t why_len)
{
    char path[QUEUE_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/fleet.lock", dir);
    bool said = false;
    for (;;) {
        FilesLockHolder h = {0};
        if (files_lock(path, lock, &h) == 0) {
            if (h.stale)
                printf("xqforge fleet: took over the lock of a fleet that is gone (pid %ld on "
                       "%s)\n",
                       h.pid, h.host);
            return true;
        }
        if (errno != EWOULDBLOCK) {
            snprintf(why, why_len, "cannot lock %.900s: %s", path, strerror(errno));
            return false;
        }
        char since[32] = "?";
        time_t t = (time_t)h.started;
        struct tm tm;
        if (h.started > 0 && gmtime_r(&t, &tm))
            strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S UTC", &tm);
        snprintf(why, why_len,
                 "queue %s is held by another fleet (pid %ld on host %s, since %s): one fleet "
                 "per queue (--wait waits for it to end)",
                 dir, h.pid, h.host[0] ? h.host : "?", since);
        if (!wait)
            return false;
        if (!said)
            printf("xqforge fleet: waiting: %s\n", why);
        said = true;
        sleep(1);
    }
}

int fleet_run(Link *world, const FleetArgs *a)
{
    return link_rank(world) == 0 ? fleet_coordinate(world, a) : fleet_work(world, a);
}
