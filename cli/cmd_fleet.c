// SPDX-License-Identifier: MIT
// xqforge fleet QUEUE: one MPI allocation plays the tests of a queue (coordinator/queue.c),
// several at once. Rank 0 coordinates every running test, each in a thread of its own; the
// worker ranks are split among the tests, each test on a group of its own (link_group: rank
// 0 and its workers), and each test is exactly a `xqforge run` of its job (cli/cmd_run.c:
// run_session) with its outputs in QUEUE/tests/ID/ and resume = auto.
//
// Scheduling, at every change (a test submitted or ended, ranks freed): the tests waiting are
// taken in the queue's order (one left running by an earlier fleet first, then by priority,
// then oldest first), as many as there are free worker ranks; each gets the whole fleet's
// workers times its throughput over the sum of the throughputs of the running tests and
// these (at least one rank), and the last one taken gets what is left, so no rank idles while
// a test waits. A running test keeps its ranks to its end (its engines are not restarted for
// nothing: OpenBench's stickiness, to the end); ranks a test frees go to the tests waiting.
// Rank 0 names a worker's next test by LINK_TAG_FLEET (id, group tag, the group's ranks).
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "job.h"
#include "link.h"
#include "queue.h"
#include "queue_page.h"
#include "run_common.h"
#include "wire.h"

enum {
    FLEET_TICK_MS = 100,   // the coordinating loop's pace
    FLEET_POLL_MS = 2000,  // how often the queue is read (new tests, stop, the page)
    FLEET_TAG_BASE = 1000, // a group's tag: this plus the test's number
    FLEET_MESSAGE_MAX = 16384,
    FLEET_RANKS_MAX = 1024 // ranks of a fleet (a group's list travels as text)
};

static void fleet_usage(FILE *out)
{
    fprintf(
        out,
        "usage: mpirun -np N xqforge fleet QUEUE [--until-empty] [--set S.K=V]... [--verbose]\n\n"
        "Plays the tests of a queue made by `xqforge submit`, several at once, in one MPI\n"
        "allocation: rank 0 coordinates every running test, the other ranks are split among\n"
        "them by throughput (`submit --throughput`, `xqforge set`), each test on ranks of its\n"
        "own to its end. Tests are taken in order: one left running by an earlier fleet\n"
        "(killed, requeued) first, resumed from its journal; then higher priority first,\n"
        "older first. Each test is run exactly as `xqforge run` runs its job, with its outputs\n"
        "(journal, PGN, result.json, report) in QUEUE/tests/ID/. `xqforge stop QUEUE ID` ends\n"
        "a test within a few seconds (its games kept, recorded stopped); QUEUE/index.html\n"
        "shows the queue and refreshes itself. With one rank (no mpirun) the tests run one\n"
        "after another on it.\n\n"
        "  --until-empty  end when no test is left (default: wait for new tests)\n"
        "  --set S.K=V    a job key for every test, after the test's own (the allocation's\n"
        "                 layout: job.concurrency, job.drain_grace)\n"
        "  --verbose      the coordinator's diagnostics line after each test\n\n"
        "SIGINT, SIGTERM and SIGUSR1 drain every running test (each stays running, and a new\n"
        "fleet resumes it) and end the fleet. Exit status: 0 ended with --until-empty, 1 the\n"
        "queue cannot be used, 2 bad usage, 130 drained by a signal.\n");
}

/// The fleet's own overrides (--set), applied to every test after the test's.
typedef struct {
    const char *const *sets;
    int n;
} FleetSets;

/// A test that runs: rank 0's coordinator thread for it, and its ranks.
typedef struct {
    QueueTest test;
    int ranks[FLEET_RANKS_MAX];
    int n; // ranks[0] is 0, the coordinator
    atomic_bool stop, done;
    bool user_stopped; // `xqforge stop` drained it
    int rc;
    char why[1024];
    pthread_t thread;
    Link *world;
    const char *dir;
    const FleetSets *fs;
    bool verbose;
} Slot;

/// Every rank of a test's group: its job run as `xqforge run` would, outputs in its directory.
static int fleet_run_test(Link *group, const char *dir, const char *id, const FleetSets *fs,
                          bool coordinator_plays, atomic_bool *stop, bool verbose, char *why,
                          size_t why_len)
{
    QueueTest *t = calloc(1, sizeof *t);
    char *path = malloc(QUEUE_PATH_MAX + 64), *out = malloc(QUEUE_PATH_MAX + 64),
         *set_out = malloc(QUEUE_PATH_MAX + 80), *abs_dir = malloc(QUEUE_PATH_MAX);
    int rc = 1;
    if (!t || !path || !out || !set_out || !abs_dir) {
        snprintf(why, why_len, "out of memory");
    } else if (!realpath(dir, abs_dir)) {
        snprintf(why, why_len, "queue %s cannot be resolved", dir);
    } else if (queue_read(dir, id, t, why, why_len) == QUEUE_OK) {
        queue_test_path(abs_dir, id, "job.ini", path, QUEUE_PATH_MAX + 64);
        queue_test_path(abs_dir, id, NULL, out, QUEUE_PATH_MAX + 64);
        // The test's overrides, the fleet's (the allocation's layout), whether rank 0 plays
        // (not while it coordinates several tests), then its outputs' place: the last wins.
        const char *sets[2 * QUEUE_SETS_MAX + 2];
        int n = 0;
        for (int i = 0; i < t->n_sets; i++)
            sets[n++] = t->sets[i];
        for (int i = 0; i < fs->n; i++)
            sets[n++] = fs->sets[i];
        sets[n++] =
            coordinator_plays ? "job.coordinator_plays=true" : "job.coordinator_plays=false";
        snprintf(set_out, QUEUE_PATH_MAX + 80, "output.dir=%s", out);
        sets[n++] = set_out;
        RunArgs a = {path, sets, n, t->job_dir, t->set_dir, false, false, true, verbose, stop};
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
        s->rc = fleet_run_test(group, s->dir, s->test.id, s->fs, s->n == 1, &s->stop, s->verbose,
                               s->why, sizeof s->why);
        link_group_free(group);
    }
    atomic_store(&s->done, true);
    return NULL;
}

typedef struct {
    TestState state;
    const char *reason;
    bool start; // stamp the start time (first start only)
} Mark;

static bool change_mark(QueueTest *t, void *user, char *why, size_t why_len)
{
    const Mark *m = user;
    (void)why;
    (void)why_len;
    t->state = m->state;
    if (m->start && !t->started)
        t->started = (int64_t)time(NULL);
    if (m->state != TEST_RUNNING && m->state != TEST_QUEUED)
        t->finished = (int64_t)time(NULL);
    if (m->reason)
        snprintf(t->reason, sizeof t->reason, "%s", m->reason);
    return true;
}

static void fleet_mark(const char *dir, const char *id, TestState state, const char *reason,
                       bool start)
{
    char why[512];
    Mark m = {state, reason, start};
    if (queue_update(dir, id, change_mark, &m, why, sizeof why) != QUEUE_OK)
        fprintf(stderr, "xqforge fleet: test %s: %s\n", id, why);
    if (!queue_page_write(dir, why, sizeof why))
        fprintf(stderr, "xqforge fleet: the queue page: %s\n", why);
}

/// The queue's order: running (left by an earlier fleet) first, then priority, then age.
static int fleet_order(const void *pa, const void *pb)
{
    const QueueTest *a = pa, *b = pb;
    if ((a->state == TEST_RUNNING) != (b->state == TEST_RUNNING))
        return a->state == TEST_RUNNING ? -1 : 1;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    return strcmp(a->id, b->id);
}

/// The state of rank 0's coordination.
typedef struct {
    Link *world;
    const char *dir;
    const FleetSets *fs;
    bool verbose;
    int workers;  // ranks 1..workers
    bool *busy;   // [workers + 1]: a worker rank in a running test
    Slot **slots; // running tests
    int slot_count;
} Fleet;

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
    s->dir = f->dir;
    s->fs = f->fs;
    s->verbose = f->verbose;
    printf("\nxqforge fleet: test %s (%s, %s) on %d worker rank%s%s\n", t->id, t->name, t->kind, n,
           n == 1 ? "" : "s", t->state == TEST_RUNNING ? ": resuming it" : "");
    fleet_mark(f->dir, t->id, TEST_RUNNING, NULL, true);
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

/// Gives the free worker ranks to the tests waiting (see the file's head).
static bool fleet_schedule(Fleet *f, bool *waiting)
{
    int free_n = 0, *free_ranks = malloc((size_t)(f->workers + 1) * sizeof *free_ranks);
    if (!free_ranks)
        return false;
    for (int r = 1; r <= f->workers; r++)
        if (!f->busy[r])
            free_ranks[free_n++] = r;
    bool one_rank = f->workers == 0;
    QueueTest *tests = NULL;
    int n = 0;
    char why[512];
    *waiting = false;
    if ((free_n > 0 || (one_rank && f->slot_count == 0)) &&
        queue_list(f->dir, &tests, &n, why, sizeof why) == QUEUE_ERR_RECORD)
        fprintf(stderr, "xqforge fleet: %s (that test is skipped)\n", why);
    int cands = 0;
    for (int i = 0; i < n; i++)
        if ((tests[i].state == TEST_RUNNING || tests[i].state == TEST_QUEUED) &&
            !fleet_running(f, tests[i].id))
            tests[cands++] = tests[i];
    if (cands > 1)
        qsort(tests, (size_t)cands, sizeof *tests, fleet_order);
    *waiting = cands > 0;
    if (one_rank) {
        // No worker rank: rank 0 plays each test itself, one at a time.
        if (cands > 0 && f->slot_count == 0 &&
            queue_test_allowed(f->dir, tests[0].id, why, sizeof why) == QUEUE_OK)
            fleet_start(f, &tests[0], NULL, 0);
        else if (cands > 0 && f->slot_count == 0)
            fleet_mark(f->dir, tests[0].id, TEST_FAILED, why, false);
        free(tests);
        free(free_ranks);
        return true;
    }
    int take = cands < free_n ? cands : free_n;
    double sum = 0;
    for (int i = 0; i < f->slot_count; i++)
        sum += f->slots[i]->test.throughput;
    for (int i = 0; i < take; i++)
        sum += tests[i].throughput;
    int next = 0;
    for (int i = 0; i < take && next < free_n; i++) {
        if (queue_test_allowed(f->dir, tests[i].id, why, sizeof why) != QUEUE_OK) {
            fprintf(stderr, "xqforge fleet: %s\n", why);
            fleet_mark(f->dir, tests[i].id, TEST_FAILED, why, false);
            continue;
        }
        int want = (int)lround(f->workers * tests[i].throughput / sum);
        int left = free_n - next, later = take - 1 - i;
        // At least one rank each for the tests taken after it; the last takes what is left.
        int give = want < 1 ? 1 : want;
        if (give > left - later)
            give = left - later;
        if (i == take - 1)
            give = left;
        if (give < 1)
            break;
        if (!fleet_start(f, &tests[i], free_ranks + next, give))
            break;
        next += give;
    }
    free(tests);
    free(free_ranks);
    return true;
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
        if (s->user_stopped && !run_signalled()) {
            fleet_mark(f->dir, id, TEST_STOPPED, "stopped by xqforge stop", false);
        } else if (s->rc == 130 || run_signalled()) {
            *rc = 130; // drained by a signal: it stays running, and the next fleet resumes it
        } else if (s->rc == 0) {
            fleet_mark(f->dir, id, TEST_FINISHED, "", false);
        } else {
            char reason[1200];
            snprintf(reason, sizeof reason, "exit %d: %.1000s", s->rc,
                     s->why[0] ? s->why : "see the fleet's output");
            fleet_mark(f->dir, id, TEST_FAILED, reason, false);
        }
        printf("xqforge fleet: test %s ended\n", id);
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
        if (run_signalled())
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

static int fleet_coordinate(Link *world, const char *dir, const FleetSets *fs, bool until_empty,
                            bool verbose)
{
    int workers = link_size(world) - 1, rc = 0;
    Fleet f = {world,
               dir,
               fs,
               verbose,
               workers,
               calloc((size_t)workers + 1, sizeof(bool)),
               calloc((size_t)workers + 1, sizeof(Slot *)),
               0};
    if (!f.busy || !f.slots) {
        fprintf(stderr, "xqforge fleet: out of memory\n");
        free(f.busy);
        free(f.slots);
        return 1;
    }
    bool said_waiting = false, waiting = false;
    char why[512];
    for (long tick = 0;; tick++) {
        bool poll = tick % (FLEET_POLL_MS / FLEET_TICK_MS) == 0;
        int before = f.slot_count;
        fleet_reap(&f, &rc);
        poll = poll || f.slot_count < before; // ranks were freed: give them out at once
        fleet_watch(&f, poll);
        if (run_signalled()) {
            if (f.slot_count == 0)
                break;
        } else if (poll) {
            if (!fleet_schedule(&f, &waiting)) {
                rc = 1;
                break;
            }
            if (f.slot_count == 0 && !waiting) {
                if (until_empty) {
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
        nanosleep(&(struct timespec){.tv_nsec = FLEET_TICK_MS * 1000 * 1000}, NULL);
    }
    for (int r = 1; r <= workers; r++)
        if (link_send(world, r, LINK_TAG_FLEET, "end", 4) != LINK_OK)
            fprintf(stderr, "xqforge fleet: cannot reach rank %d to end it\n", r);
    queue_page_write(dir, why, sizeof why);
    free(f.busy);
    free(f.slots);
    return rc ? rc : (run_signalled() ? 130 : 0);
}

/// A worker rank: waits for rank 0's next test ("ID N R1..RN") and plays its part, until
/// "end". A signal only drains the test in progress (rank 0 ends the fleet).
static int fleet_work(Link *world, const char *dir, const FleetSets *fs, bool verbose)
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
        fleet_run_test(group, dir, id, fs, false, NULL, verbose, why, sizeof why);
        link_group_free(group);
        run_stop_clear();
    }
    return run_signalled() ? 130 : 0;
}

int cmd_fleet(int argc, char **argv)
{
    const char *dir = NULL, *sets[QUEUE_SETS_MAX];
    bool until_empty = false, verbose = false;
    FleetSets fs = {sets, 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fleet_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--until-empty")) {
            until_empty = true;
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc && fs.n < QUEUE_SETS_MAX) {
            sets[fs.n++] = argv[++i];
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else {
            fprintf(stderr, "xqforge fleet: unexpected argument '%s'\n", argv[i]);
            fleet_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!dir) {
        fleet_usage(stderr);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char why[1024] = "";
    Link *link = NULL;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge fleet: MPI: %s\n", why);
        return 1;
    }
    int rank = link_rank(link), rc = 0;
    if (link_size(link) > FLEET_RANKS_MAX) {
        if (rank == 0)
            fprintf(stderr, "xqforge fleet: at most %d ranks\n", FLEET_RANKS_MAX);
        link_finalize(link);
        return EXIT_USAGE;
    }
    // Every rank checks the queue (the shared file system seen alike everywhere).
    QueueStatus qs = queue_open(dir, false, why, sizeof why);
    if (qs != QUEUE_OK && rank == 0)
        fprintf(stderr, "xqforge fleet: %s\n", why);
    if (!link_all_ok(link, qs == QUEUE_OK)) {
        link_finalize(link);
        return qs == QUEUE_ERR_IO || qs == QUEUE_OK ? 1 : EXIT_USAGE;
    }
    run_signals_install();
    if (rank == 0) {
        printf("xqforge fleet: queue %s, %d rank%s\n", dir, link_size(link),
               link_size(link) == 1 ? "" : "s");
        rc = fleet_coordinate(link, dir, &fs, until_empty, verbose);
    } else {
        rc = fleet_work(link, dir, &fs, verbose);
    }
    link_finalize(link);
    return rc;
}
