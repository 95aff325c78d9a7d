// SPDX-License-Identifier: MIT
// xqforge fleet QUEUE: one MPI allocation plays the tests of a queue (coordinator/queue.c),
// one after another in the order the queue gives them: a test left running by an earlier
// fleet first (it resumes from its journal), then the queued ones by priority, oldest first.
// Each test is exactly a `xqforge run` of its job (cli/cmd_run.c: run_session) with its
// outputs in QUEUE/tests/ID/ and resume = auto. Rank 0 picks the test and tells the others
// by LINK_TAG_FLEET between tests; while a test runs, a watcher thread on rank 0 applies
// `xqforge stop` (the test drains and is recorded stopped) and keeps the queue page fresh.
// Tests share the allocation one at a time: concurrent tests by throughput are still to come.
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
    FLEET_POLL_MS = 2000, // how often an idle fleet looks for new tests, and the watcher runs
    FLEET_END = -1        // the id rank 0 sends when the fleet ends
};

static void fleet_usage(FILE *out)
{
    fprintf(
        out,
        "usage: mpirun -np N xqforge fleet QUEUE [--until-empty] [--set S.K=V]... [--verbose]\n\n"
        "Plays the tests of a queue made by `xqforge submit`, in one MPI allocation:\n"
        "rank 0 coordinates, the others play. A test left running by an earlier fleet\n"
        "(killed, requeued) goes first and resumes from its journal; then the queued tests,\n"
        "higher priority first, older first. Each test is run exactly as `xqforge run` runs\n"
        "its job, with its outputs (journal, PGN, result.json, report) in QUEUE/tests/ID/.\n"
        "Tests run one at a time on every rank. `xqforge stop QUEUE ID` ends the running\n"
        "test within a few seconds (its games kept, recorded stopped); QUEUE/index.html\n"
        "shows the queue and refreshes itself.\n\n"
        "  --until-empty  end when no test is left (default: wait for new tests)\n"
        "  --set S.K=V    a job key for every test, after the test's own (the allocation's\n"
        "                 layout: job.concurrency, job.coordinator_plays, job.drain_grace)\n"
        "  --verbose      the coordinator's diagnostics line after each test\n\n"
        "SIGINT, SIGTERM and SIGUSR1 drain the running test (it stays running, and a new\n"
        "fleet resumes it) and end the fleet. Exit status: 0 ended with --until-empty, 1 the\n"
        "queue cannot be used, 2 bad usage, 130 drained by a signal.\n");
}

/// Rank 0: the test to run next, or false when none is waiting. A test still marked running
/// is one an earlier fleet did not finish (this fleet is the queue's only player).
static bool fleet_pick(const char *dir, QueueTest *out)
{
    QueueTest *tests;
    int n;
    char why[512];
    QueueStatus st = queue_list(dir, &tests, &n, why, sizeof why);
    if (st == QUEUE_ERR_RECORD)
        fprintf(stderr, "xqforge fleet: %s (that test is skipped)\n", why);
    int best = -1;
    for (int i = 0; i < n; i++) {
        const QueueTest *t = &tests[i];
        if (t->state != TEST_RUNNING && t->state != TEST_QUEUED)
            continue;
        if (best < 0) {
            best = i;
            continue;
        }
        const QueueTest *b = &tests[best];
        // Running first; then priority; then the older (ids grow with time).
        if ((t->state == TEST_RUNNING) != (b->state == TEST_RUNNING)) {
            if (t->state == TEST_RUNNING)
                best = i;
        } else if (t->priority > b->priority) {
            best = i;
        }
    }
    if (best >= 0)
        *out = tests[best];
    free(tests);
    return best >= 0;
}

typedef struct {
    const char *dir;
    const char *id;
    atomic_bool done;
    atomic_bool stopped; // the watcher saw `xqforge stop` and drained the test
} Watch;

/// Rank 0, while a test runs: applies a stop request and rewrites the page (the test's
/// report.json moves on).
static void *fleet_watch(void *arg)
{
    Watch *w = arg;
    char why[512];
    while (!atomic_load(&w->done)) {
        for (int waited = 0; waited < FLEET_POLL_MS && !atomic_load(&w->done); waited += 100)
            nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
        QueueTest t;
        if (!atomic_load(&w->stopped) &&
            queue_read(w->dir, w->id, &t, why, sizeof why) == QUEUE_OK && t.stop_requested) {
            printf("\nxqforge fleet: test %s: stop requested, draining it\n", w->id);
            atomic_store(&w->stopped, true);
            run_stop();
        }
        queue_page_write(w->dir, why, sizeof why);
    }
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

/// The fleet's own overrides (--set), applied to every test after the test's.
typedef struct {
    const char *const *sets;
    int n;
} FleetSets;

/// Every rank: runs test id of the queue as `xqforge run` would, outputs in its directory.
static int fleet_run_test(Link *link, const char *dir, const char *id, const FleetSets *fs,
                          bool verbose, char *why, size_t why_len)
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
        // The test's overrides, the fleet's (the allocation's layout: concurrency, the drain's
        // grace), then its outputs' place (last: it wins over the job's).
        const char *sets[2 * QUEUE_SETS_MAX + 1];
        int n = 0;
        for (int i = 0; i < t->n_sets; i++)
            sets[n++] = t->sets[i];
        for (int i = 0; i < fs->n; i++)
            sets[n++] = fs->sets[i];
        snprintf(set_out, QUEUE_PATH_MAX + 80, "output.dir=%s", out);
        sets[n++] = set_out;
        RunArgs a = {path, sets, n, t->job_dir, t->set_dir, false, false, true, verbose};
        rc = run_session(link, &a, why, why_len);
    }
    free(t);
    free(path);
    free(out);
    free(set_out);
    free(abs_dir);
    return rc;
}

/// Rank 0 tells every other rank the next test (its id as a number), or FLEET_END.
static bool fleet_tell(Link *link, long id)
{
    char text[32];
    int n = snprintf(text, sizeof text, "%ld", id);
    for (int r = 1; r < link_size(link); r++)
        if (link_send(link, r, LINK_TAG_FLEET, text, (size_t)n + 1) != LINK_OK)
            return false;
    return true;
}

/// A worker rank: the next test's id from rank 0 (FLEET_END to end); a signal while waiting
/// ends too (rank 0 ends the fleet as well).
static long fleet_hear(Link *link)
{
    for (;;) {
        void *data = NULL;
        size_t len = 0;
        int src;
        LinkTag tag;
        LinkStatus st = link_wait(link, LINK_TAG_FLEET, 500, &src, &tag, &data, &len);
        if (st == LINK_OK) {
            long id = len > 0 && len < 32 && ((char *)data)[len - 1] == '\0'
                          ? strtol(data, NULL, 10)
                          : FLEET_END;
            free(data);
            return id;
        }
        if (st != LINK_NONE)
            return FLEET_END;
    }
}

static int fleet_coordinate(Link *link, const char *dir, const FleetSets *fs, bool until_empty,
                            bool verbose)
{
    int rc = 0;
    bool said_waiting = false;
    char why[1024];
    while (!run_signalled()) {
        QueueTest t;
        if (!fleet_pick(dir, &t)) {
            if (until_empty) {
                printf("xqforge fleet: no test left: the fleet ends\n");
                break;
            }
            if (!said_waiting)
                printf("xqforge fleet: waiting for tests (xqforge submit %s JOBFILE)\n", dir);
            said_waiting = true;
            for (int w = 0; w < FLEET_POLL_MS && !run_signalled(); w += 100)
                nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
            continue;
        }
        said_waiting = false;
        if (queue_test_allowed(dir, t.id, why, sizeof why) != QUEUE_OK) {
            fprintf(stderr, "xqforge fleet: %s\n", why);
            fleet_mark(dir, t.id, TEST_FAILED, why, false);
            continue;
        }
        printf("\nxqforge fleet: test %s (%s, %s)%s\n", t.id, t.name, t.kind,
               t.state == TEST_RUNNING ? ": resuming it" : "");
        fleet_mark(dir, t.id, TEST_RUNNING, NULL, true);
        if (!fleet_tell(link, strtol(t.id, NULL, 10))) {
            fprintf(stderr, "xqforge fleet: cannot reach the worker ranks\n");
            rc = 1;
            break;
        }
        Watch w = {dir, t.id, false, false};
        pthread_t watcher;
        bool watching = pthread_create(&watcher, NULL, fleet_watch, &w) == 0;
        int trc = fleet_run_test(link, dir, t.id, fs, verbose, why, sizeof why);
        atomic_store(&w.done, true);
        if (watching)
            pthread_join(watcher, NULL);
        if (atomic_load(&w.stopped) && !run_signalled()) {
            fleet_mark(dir, t.id, TEST_STOPPED, "stopped by xqforge stop", false);
        } else if (trc == 130 || run_signalled()) {
            // Drained by a signal: it stays running, and the next fleet resumes it.
            rc = 130;
            break;
        } else if (trc == 0) {
            fleet_mark(dir, t.id, TEST_FINISHED, "", false);
        } else {
            char reason[600];
            snprintf(reason, sizeof reason, "exit %d: %.500s", trc,
                     why[0] ? why : "see the fleet's output");
            fleet_mark(dir, t.id, TEST_FAILED, reason, false);
        }
        run_stop_clear();
        printf("xqforge fleet: test %s ended\n", t.id);
    }
    if (!fleet_tell(link, FLEET_END))
        fprintf(stderr, "xqforge fleet: cannot reach the worker ranks to end them\n");
    queue_page_write(dir, why, sizeof why);
    return rc ? rc : (run_signalled() ? 130 : 0);
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
        for (long id; (id = fleet_hear(link)) != FLEET_END;) {
            char text[QUEUE_ID_MAX + 1];
            snprintf(text, sizeof text, "%04ld", id);
            fleet_run_test(link, dir, text, &fs, verbose, why, sizeof why);
            run_stop_clear();
        }
        rc = run_signalled() ? 130 : 0;
    }
    link_finalize(link);
    return rc;
}
