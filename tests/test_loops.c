// SPDX-License-Identifier: MIT
// The coordinator and worker loops end to end over the in-memory channel: the coordinator on
// hub rank 0 in a thread of its own, workers as threads on ranks 1..N (with one rank, a worker
// thread on rank 0 beside it), and ranks driven by hand to send what a real worker never
// would, or to play the coordinator. Fake job kinds record every unit handed out, played and
// counted, so each property is checked unit by unit: counted once, never from garbage, given
// back when a rank leaves or is refused, journaled before it counts (a batch with one sync,
// counted only once durable), replayed on resume; and
// one small match of real node-limited games through the real game kinds.
// A run that does not end by itself within GUARD_MS (a lost unit, a missing STOP) is
// interrupted by the test so that the failure is reported instead of hanging.
#define _GNU_SOURCE // nftw
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel.h"
#include "coordinator.h"
#include "games.h"
#include "job.h"
#include "plan.h"
#include "work_games.h"
#include "worker.h"

enum {
    UNITS_MAX = 256,  // unit ids the fake kinds keep track of
    GUARD_MS = 30000, // a run not ended by then is stuck (generous: TSan on a loaded machine)
    QUIET_MS = 300,   // a worker that has not asked for work by then will not ask
    POLL_MS = 1,      // the coordinator's idle sleep
};

#define JOB_ID       0x10095ull // the job id on the wire
#define SIGNATURE    359534ull  // the coordinator's bench signature
#define MARK_GARBAGE 0xbadull   // in a result's nodes counter: it must never be counted
#define MARK_FORGED  0xf0full   // in a result's nodes counter: the kind's check refuses it
#define UNIT_FAILURE "engine crashed"
#define IDENTITY     "job = loops test"

// ---- Time, only to wait for other threads (never asserted on) -----------------------------

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void nap(void)
{
    struct timespec ts = {0, 500000};
    nanosleep(&ts, NULL);
}

/// Waits until *flag is set; false when GUARD_MS passed first.
static bool wait_flag(const atomic_bool *flag)
{
    for (uint64_t end = now_ms() + GUARD_MS; !atomic_load(flag); nap())
        if (now_ms() > end)
            return false;
    return true;
}

/// Waits until every message sent to rank r was taken; false when GUARD_MS passed first.
static bool wait_taken(ChannelHub *h, int r)
{
    for (uint64_t end = now_ms() + GUARD_MS; channel_hub_pending(h, r) > 0; nap())
        if (now_ms() > end)
            return false;
    return true;
}

// ---- Result messages ----------------------------------------------------------------------

/// Packs the result of one unit as the real kinds do (a BOOK unit or a one-pair RESULT); mark
/// goes into its nodes counter, where the fake coordinator kind looks for it.
static WireStatus pack_unit(WireKind kind, uint64_t job_id, uint32_t rank, uint64_t unit,
                            uint64_t mark, msgpack_sbuffer *out)
{
    WireStatus ws = WIRE_ERR_NOMEM;
    if (kind == WIRE_BOOK) {
        WireBookResult *b = wire_book_result_new();
        if (b) {
            b->job_id = job_id;
            b->rank = rank;
            b->unit_id = unit;
            b->candidates_done = 1;
            b->nodes = mark;
            ws = wire_pack_book(b, out);
        }
        wire_book_result_free(b);
        return ws;
    }
    WireResult *r = wire_result_new();
    if (r) {
        r->job_id = job_id;
        r->rank = rank;
        r->unit_count = 1;
        r->units[0].pair_id = unit;
        r->units[0].game_count = 1;
        r->units[0].games[0].outcome = WIRE_OUTCOME_DRAW;
        snprintf(r->units[0].games[0].start_fen, sizeof r->units[0].games[0].start_fen,
                 "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w");
        r->games_played = 1;
        r->nodes = mark;
        ws = wire_pack_result(r, out);
    }
    wire_result_free(r);
    return ws;
}

static uint64_t unit_mark(const WireMessage *m)
{
    return m->kind == WIRE_BOOK ? m->book->nodes : m->result->nodes;
}

// ---- A fake worker kind -------------------------------------------------------------------

typedef struct {
    WireKind result_kind;
    uint32_t rank;
    const char *thread_error;    // thread_new fails with this reason (NULL: it starts)
    const atomic_bool *gate_new; // thread_new waits for it (NULL: no wait)
    const atomic_bool *gate;     // every unit waits for it or the abort (NULL: no wait)
    int fail_at;                 // this call of unit_run (1-based) fails (0: none)
    atomic_bool started;         // a unit has started
    atomic_int calls;
    atomic_int runs[UNITS_MAX]; // units played to the end, by id
    atomic_uint_fast64_t done;
} FakeWorker;

static void *fake_thread_new(void *ctx, char *why, size_t why_len)
{
    FakeWorker *fw = ctx;
    if (fw->gate_new)
        wait_flag(fw->gate_new);
    if (!fw->thread_error)
        return fw;
    snprintf(why, why_len, "%s", fw->thread_error);
    return NULL;
}

static void fake_thread_free(void *t) { (void)t; }

static WorkerUnitStatus fake_unit_run(void *t, const WireWork *work, uint64_t unit,
                                      const atomic_bool *abort, msgpack_sbuffer *out, char *why,
                                      size_t why_len)
{
    FakeWorker *fw = t;
    int call = atomic_fetch_add(&fw->calls, 1) + 1;
    atomic_store(&fw->started, true);
    if (call == fw->fail_at || unit >= UNITS_MAX) {
        snprintf(why, why_len, "%s", UNIT_FAILURE);
        return WORKER_UNIT_FAILED;
    }
    while (fw->gate && !atomic_load(fw->gate) && !atomic_load(abort))
        nap();
    if (atomic_load(abort))
        return WORKER_UNIT_ABORTED;
    atomic_fetch_add(&fw->runs[unit], 1);
    atomic_fetch_add(&fw->done, 1);
    return pack_unit(fw->result_kind, work->job_id, fw->rank, unit, 0, out) == WIRE_OK
               ? WORKER_UNIT_OK
               : WORKER_UNIT_FAILED;
}

static uint64_t fake_done_count(void *ctx)
{
    FakeWorker *fw = ctx;
    return atomic_load(&fw->done);
}

typedef struct {
    FakeWorker fw;
    WorkerConfig cfg;
    WorkerKind kind;
    pthread_t tid;
    int rc;
} WorkerThread;

static void *worker_main(void *arg)
{
    WorkerThread *w = arg;
    w->rc = worker_run(&w->cfg, &w->kind);
    return NULL;
}

/// A worker of `threads` work threads on rank `rank` of the hub; configure w->fw, then start.
static WorkerThread *worker_new(ChannelHub *h, int rank, int threads, uint64_t signature,
                                WireKind kind)
{
    WorkerThread *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->fw.result_kind = kind;
    w->fw.rank = (uint32_t)rank;
    w->cfg = (WorkerConfig){channel_hub_rank(h, rank), threads, signature, 1000, "test", NULL, 0};
    w->kind = (WorkerKind){.ctx = &w->fw,
                           .thread_new = fake_thread_new,
                           .thread_free = fake_thread_free,
                           .unit_run = fake_unit_run,
                           .done_count = fake_done_count};
    w->rc = -1;
    return w;
}

static void worker_start(WorkerThread *w)
{
    assert_int_equal(pthread_create(&w->tid, NULL, worker_main, w), 0);
}

/// Waits for the worker to end; its worker_run status.
static int worker_join(WorkerThread *w)
{
    pthread_join(w->tid, NULL);
    return w->rc;
}

static int runs_of(WorkerThread *w, uint64_t unit) { return atomic_load(&w->fw.runs[unit]); }

static int runs_total(WorkerThread *w)
{
    int n = 0;
    for (int u = 0; u < UNITS_MAX; u++)
        n += runs_of(w, (uint64_t)u);
    return n;
}

// ---- A fake coordinator kind --------------------------------------------------------------

typedef struct {
    int live[UNITS_MAX], replayed[UNITS_MAX], handed[UNITS_MAX]; // per unit
    uint64_t order[UNITS_MAX];                                   // live counts, in order
    int counted, garbage, handed_after_verdict;
    int count_fail_at;     // this live count fails as a full disk would (0: none)
    uint64_t verdict_at;   // complete gives a verdict once this many are done (0: none)
    bool verdict_given;    // (the fields above: the coordinator's thread only)
    uint64_t interrupt_at; // tick raises *interrupt once this many are done (0: none)
    atomic_bool *interrupt;
    int watch;                          // tick sets parked once this rank waits for work (0: none)
    atomic_bool parked;                 // (read by the test while the run goes on)
    atomic_int turns;                   // loop turns (ticks)
    const atomic_bool *hold;            // the first check waits for it (NULL: no wait)
    atomic_int checked;                 // checks made
    const char *journal;                // the journal's path: each live count notes its size
    long long size_at_count[UNITS_MAX]; // the journal file's size when unit was counted
} FakeCoord;

static bool wait_flag(const atomic_bool *flag);

static bool fc_check(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t why_len)
{
    FakeCoord *fc = ctx;
    (void)unit;
    // Held, the first check lets the results behind it queue up: they make one batch.
    if (atomic_fetch_add(&fc->checked, 1) == 0 && fc->hold)
        wait_flag(fc->hold);
    if (unit_mark(m) != MARK_FORGED)
        return true;
    snprintf(why, why_len, "forged result");
    return false;
}

static bool fc_count(void *ctx, uint64_t unit, const WireMessage *m, bool replay, char *why,
                     size_t why_len)
{
    FakeCoord *fc = ctx;
    if (unit >= UNITS_MAX) {
        snprintf(why, why_len, "unit %llu beyond the test's table", (unsigned long long)unit);
        return false;
    }
    fc->garbage += unit_mark(m) == MARK_GARBAGE;
    if (replay) {
        fc->replayed[unit]++;
        return true;
    }
    fc->live[unit]++;
    struct stat sb;
    if (fc->journal)
        fc->size_at_count[unit] = stat(fc->journal, &sb) == 0 ? (long long)sb.st_size : -1;
    if (fc->counted < UNITS_MAX)
        fc->order[fc->counted] = unit;
    if (++fc->counted != fc->count_fail_at)
        return true;
    snprintf(why, why_len, "result file: disk full");
    return false;
}

static bool fc_attach(void *ctx, Coordinator *c, WireWork *work, char *why, size_t why_len)
{
    FakeCoord *fc = ctx;
    (void)c;
    (void)why;
    (void)why_len;
    for (int i = 0; i < work->unit_count; i++)
        if (work->unit_ids[i] < UNITS_MAX)
            fc->handed[work->unit_ids[i]]++;
    if (fc->verdict_given)
        fc->handed_after_verdict += work->unit_count;
    return true;
}

static bool fc_complete(void *ctx, const CoordState *st, bool *abandon, char *verdict,
                        size_t verdict_len)
{
    FakeCoord *fc = ctx;
    if (!fc->verdict_at || st->units_done < fc->verdict_at)
        return false;
    fc->verdict_given = true;
    *abandon = true;
    snprintf(verdict, verdict_len, "H1 accepted");
    return true;
}

static void fc_tick(void *ctx, const CoordState *st, bool force)
{
    FakeCoord *fc = ctx;
    (void)force;
    atomic_fetch_add(&fc->turns, 1);
    if (fc->watch && st->rank[fc->watch].waiting)
        atomic_store(&fc->parked, true);
    if (fc->interrupt_at && st->units_done >= fc->interrupt_at)
        atomic_store(fc->interrupt, true);
}

// ---- A run: the coordinator in a thread ---------------------------------------------------

typedef struct {
    char dir[64];
    struct rlimit fsize; // restored by the teardown
} Fixture;

typedef struct {
    ChannelHub *hub;
    Coordinator *c;
    FakeCoord fc;
    JournalReplayStats stats;
    atomic_bool interrupt, ended;
    bool stalled; // the test had to interrupt it
    CoordEnd end;
    pthread_t tid;
} Run;

static void journal_path(const Fixture *f, char *path, size_t len)
{
    snprintf(path, len, "%s/journal.xqj", f->dir);
}

/// A coordinator of `units` units on rank 0 of a hub of `size` ranks, its journal in the
/// fixture's directory opened and replayed; configure r->fc, then start.
static Run *run_new(const Fixture *f, int size, uint64_t units, WireKind kind)
{
    Run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->hub = channel_hub_new(size);
    assert_non_null(r->hub);
    r->fc.interrupt = &r->interrupt;
    CoordKind k = {.ctx = &r->fc,
                   .result_kind = kind,
                   .check = fc_check,
                   .count = fc_count,
                   .attach = fc_attach,
                   .complete = fc_complete,
                   .tick = fc_tick};
    CoordConfig cfg = {
        channel_hub_rank(r->hub, 0), JOB_ID, units, SIGNATURE, &r->interrupt, POLL_MS, 0, 0};
    r->c = coord_new(&cfg, &k);
    assert_non_null(r->c);
    char path[128], why[512];
    journal_path(f, path, sizeof path);
    JournalIdentity id = {IDENTITY, strlen(IDENTITY)};
    if (!coord_open_journal(r->c, path, &id, &r->stats, why, sizeof why))
        fail_msg("%s", why);
    return r;
}

static void *coord_main(void *arg)
{
    Run *r = arg;
    r->end = coord_run(r->c);
    atomic_store(&r->ended, true);
    return NULL;
}

static void run_start(Run *r) { assert_int_equal(pthread_create(&r->tid, NULL, coord_main, r), 0); }

/// Waits for coord_run to return. A run still going after GUARD_MS is stuck: it is
/// interrupted (r->stalled) so that the test can report it; one that cannot even be
/// interrupted ends the process.
static void run_wait(Run *r)
{
    if (!wait_flag(&r->ended)) {
        r->stalled = true;
        atomic_store(&r->interrupt, true);
        if (!wait_flag(&r->ended)) {
            fprintf(stderr, "test_loops: the run cannot even be interrupted\n");
            abort();
        }
    }
    pthread_join(r->tid, NULL);
}

static void run_free(Run *r)
{
    coord_free(r->c);
    channel_hub_free(r->hub);
    free(r);
}

/// Messages left for rank r besides STOP and REFUSE (a rank may leave before a second STOP,
/// sent when a REQUEST of its crossed the first one).
static int left_for(ChannelHub *h, int r)
{
    Channel *ch = channel_hub_rank(h, r);
    WireMessage m;
    int src, other = 0;
    while (channel_receive(ch, LINK_TAG_ORDER, LINK_TAG_ORDER, &src, &m, NULL)) {
        other += m.kind != WIRE_STOP && m.kind != WIRE_REFUSE;
        wire_message_destroy(&m);
    }
    return other + channel_hub_pending(h, r);
}

/// Every unit below n was counted exactly once (live or replayed), none from garbage.
static void assert_each_once(const FakeCoord *fc, uint64_t n)
{
    for (uint64_t u = 0; u < n; u++)
        if (fc->live[u] + fc->replayed[u] != 1)
            fail_msg("unit %llu counted %d times", (unsigned long long)u,
                     fc->live[u] + fc->replayed[u]);
    assert_int_equal(fc->garbage, 0);
}

// ---- Ranks driven by hand -----------------------------------------------------------------

static bool hand_send(Channel *ch, int dest, LinkTag tag, const WireMessage *m)
{
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    bool ok = channel_send(ch, dest, tag, wire_pack(m, &b), &b);
    msgpack_sbuffer_destroy(&b);
    return ok;
}

static bool hand_hello(Channel *ch, uint64_t signature)
{
    WireMessage m = {.kind = WIRE_HELLO};
    m.hello = (WireHello){(uint32_t)ch->rank, "hand", 1, 1, signature, 1000, "test", 0, {0}};
    return hand_send(ch, 0, LINK_TAG_CONTROL, &m);
}

static bool hand_request(Channel *ch, uint32_t units)
{
    WireMessage m = {.kind = WIRE_REQUEST};
    m.request = (WireRequest){(uint32_t)ch->rank, units};
    return hand_send(ch, 0, LINK_TAG_CONTROL, &m);
}

static bool hand_bye(Channel *ch)
{
    WireMessage m = {.kind = WIRE_BYE};
    m.bye = (WireBye){(uint32_t)ch->rank, 0, ""};
    return hand_send(ch, 0, LINK_TAG_CONTROL, &m);
}

static bool hand_result(Channel *ch, uint64_t job_id, uint32_t rank, uint64_t unit, uint64_t mark)
{
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    bool ok = channel_send(ch, 0, LINK_TAG_RESULT,
                           pack_unit(WIRE_BOOK, job_id, rank, unit, mark, &b), &b);
    msgpack_sbuffer_destroy(&b);
    return ok;
}

/// Rank 0 played by hand: a WORK of units first..first+n-1.
static bool hand_work(Channel *co, int dest, uint64_t first, uint32_t n)
{
    WireMessage m = {.kind = WIRE_WORK};
    m.work.job_id = JOB_ID;
    m.work.unit_count = (int)n;
    for (uint32_t i = 0; i < n; i++)
        m.work.unit_ids[i] = first + i;
    return hand_send(co, dest, LINK_TAG_ORDER, &m);
}

static bool hand_stop(Channel *co, int dest, WireStopCode code)
{
    WireMessage m = {.kind = WIRE_STOP};
    m.stop = (WireStop){(uint32_t)code, "stop"};
    return hand_send(co, dest, LINK_TAG_ORDER, &m);
}

/// The next message to ch under tag a or b; false (m->kind WIRE_KIND_NB) when none came
/// within ms milliseconds.
static bool hand_wait_ms(Channel *ch, LinkTag a, LinkTag b, WireMessage *m, uint64_t ms)
{
    uint64_t end = now_ms() + ms;
    int src;
    while (!channel_receive(ch, a, b, &src, m, NULL)) {
        if (now_ms() > end) {
            m->kind = WIRE_KIND_NB;
            return false;
        }
        nap();
    }
    return true;
}

static bool hand_wait(Channel *ch, LinkTag a, LinkTag b, WireMessage *m)
{
    return hand_wait_ms(ch, a, b, m, GUARD_MS);
}

/// Waits for the next message under tag a or b: true when it is of kind `kind`.
static bool hand_expect(Channel *ch, LinkTag a, LinkTag b, WireKind kind, WireMessage *m)
{
    return hand_wait(ch, a, b, m) && m->kind == kind;
}

// ---- The tests ----------------------------------------------------------------------------

/// A job on three workers: every unit is handed out, played and counted exactly once, the
/// run ends done (exit 0) with every worker stopped and gone, and no message is left unread
/// but a second STOP to a rank that had already left (no WORK to a departed rank).
static void test_normal_run(void **state)
{
    enum { UNITS = 40, WORKERS = 3 };
    Run *r = run_new(*state, WORKERS + 1, UNITS, WIRE_BOOK);
    WorkerThread *w[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        w[i] = worker_new(r->hub, i + 1, i + 1, SIGNATURE, WIRE_BOOK);
        worker_start(w[i]);
    }
    run_start(r);
    run_wait(r);
    int rc[WORKERS], played = 0;
    for (int i = 0; i < WORKERS; i++) {
        rc[i] = worker_join(w[i]);
        played += runs_total(w[i]);
    }
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(r->end, COORD_DONE);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_int_equal(st->units_done, UNITS);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(r->fc.counted, UNITS);
    assert_int_equal(played, UNITS);
    assert_int_equal(st->workers_admitted, WORKERS);
    uint64_t by_rank = 0;
    for (int i = 0; i < WORKERS; i++) {
        assert_int_equal(rc[i], 0);
        assert_int_equal(st->rank[i + 1].state, COORD_RANK_LEFT);
        assert_string_equal(st->rank[i + 1].error, "");
        by_rank += st->rank[i + 1].units;
    }
    assert_int_equal(by_rank, UNITS);
    assert_int_equal(channel_hub_pending(r->hub, 0), 0);
    for (int k = 1; k <= WORKERS; k++)
        assert_int_equal(left_for(r->hub, k), 0);
    for (int i = 0; i < WORKERS; i++)
        free(w[i]);
    run_free(r);
}

/// With one rank the coordinator's rank 0 also runs the worker: a job of game-pair results
/// (WIRE_RESULT) is played and counted once each, and nothing is left for rank 0.
static void test_single_rank(void **state)
{
    enum { UNITS = 10 };
    Run *r = run_new(*state, 1, UNITS, WIRE_RESULT);
    WorkerThread *w = worker_new(r->hub, 0, 2, SIGNATURE, WIRE_RESULT);
    worker_start(w);
    run_start(r);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(rc, 0);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_int_equal(st->workers_expected, 1);
    assert_int_equal(st->rank[0].units, UNITS);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(runs_total(w), UNITS);
    assert_int_equal(left_for(r->hub, 0), 0);
    free(w);
    run_free(r);
}

/// A worker of another bench signature is refused at HELLO (worker_run returns 0 and it
/// plays nothing); the job completes on the two others.
static void test_refused_signature(void **state)
{
    enum { UNITS = 20 };
    Run *r = run_new(*state, 4, UNITS, WIRE_BOOK);
    WorkerThread *w[3];
    for (int i = 0; i < 3; i++) {
        w[i] = worker_new(r->hub, i + 1, 1, i == 2 ? SIGNATURE + 1 : SIGNATURE, WIRE_BOOK);
        worker_start(w[i]);
    }
    run_start(r);
    run_wait(r);
    int rc[3];
    for (int i = 0; i < 3; i++)
        rc[i] = worker_join(w[i]);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(rc[0], 0);
    assert_int_equal(rc[1], 0);
    assert_int_equal(rc[2], 0);
    assert_int_equal(runs_total(w[2]), 0);
    assert_int_equal(st->rank[3].state, COORD_RANK_REFUSED);
    assert_non_null(strstr(st->rank[3].error, "bench signature"));
    assert_int_equal(st->workers_admitted, 2);
    assert_int_equal(st->rank[1].units + st->rank[2].units, UNITS);
    assert_int_equal(channel_hub_pending(r->hub, 0), 0);
    for (int i = 0; i < 3; i++)
        free(w[i]);
    run_free(r);
}

/// When every worker is refused (here one real, one by hand that sees the REFUSE and its
/// reason), the run fails with exit status 1 and a reason naming the refusal.
static void test_all_refused(void **state)
{
    Run *r = run_new(*state, 3, 10, WIRE_BOOK);
    WorkerThread *w = worker_new(r->hub, 1, 1, SIGNATURE + 1, WIRE_BOOK);
    worker_start(w);
    run_start(r);
    Channel *hand = channel_hub_rank(r->hub, 2);
    WireMessage m;
    hand_hello(hand, SIGNATURE + 2);
    bool refused = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_REFUSE, &m) &&
                   strstr(m.refuse.reason, "bench signature");
    wire_message_destroy(&m);
    hand_bye(hand);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_true(refused);
    assert_int_equal(rc, 0);
    assert_int_equal(runs_total(w), 0);
    assert_int_equal(st->end, COORD_FAILED);
    assert_int_equal(coord_exit_status(st), 1);
    assert_non_null(strstr(st->reason, "bench signature"));
    assert_int_equal(st->workers_admitted, 0);
    assert_int_equal(r->fc.counted, 0);
    free(w);
    run_free(r);
}

/// A worker whose work thread cannot start (an engine that will not run) leaves with the
/// reason in its BYE; as the only worker, the run fails (exit 1) naming that reason.
static void test_thread_start_fails(void **state)
{
    const char *err = "engine /opt/none: cannot start";
    Run *r = run_new(*state, 2, 10, WIRE_BOOK);
    WorkerThread *w = worker_new(r->hub, 1, 2, SIGNATURE, WIRE_BOOK);
    w->fw.thread_error = err;
    worker_start(w);
    run_start(r);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(rc, 1);
    assert_string_equal(st->rank[1].error, err);
    assert_int_equal(st->end, COORD_FAILED);
    assert_int_equal(coord_exit_status(st), 1);
    assert_non_null(strstr(st->reason, err));
    assert_int_equal(r->fc.counted, 0);
    assert_int_equal(channel_hub_pending(r->hub, 0), 0);
    free(w);
    run_free(r);
}

/// One worker of two cannot start: its reason is kept for its rank and the other worker
/// completes the job (exit 0), every unit once.
static void test_thread_start_fails_other_plays(void **state)
{
    enum { UNITS = 12 };
    const char *err = "engine /opt/none: cannot start";
    Run *r = run_new(*state, 3, UNITS, WIRE_BOOK);
    WorkerThread *bad = worker_new(r->hub, 1, 1, SIGNATURE, WIRE_BOOK);
    WorkerThread *good = worker_new(r->hub, 2, 2, SIGNATURE, WIRE_BOOK);
    bad->fw.thread_error = err;
    worker_start(bad);
    worker_start(good);
    run_start(r);
    run_wait(r);
    int rc_bad = worker_join(bad), rc_good = worker_join(good);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(rc_bad, 1);
    assert_int_equal(rc_good, 0);
    assert_string_equal(st->rank[1].error, err);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(st->rank[2].units, UNITS);
    free(bad);
    free(good);
    run_free(r);
}

/// A worker that fails after its first unit leaves with a unit it was handed; that unit goes
/// back and is played by the other worker, which was parked (nothing left to hand out) when
/// it came back; every unit is counted once and the run ends done.
static void test_departed_units_requeued(void **state)
{
    enum { UNITS = 6 };
    Run *r = run_new(*state, 3, UNITS, WIRE_BOOK);
    r->fc.watch = 2;
    WorkerThread *a = worker_new(r->hub, 1, 1, SIGNATURE, WIRE_BOOK);
    WorkerThread *b = worker_new(r->hub, 2, 1, SIGNATURE, WIRE_BOOK);
    a->fw.gate = &r->fc.parked;  // its first unit ends once b waits for work
    a->fw.fail_at = 2;           // its second one fails: the worker leaves with it
    b->fw.gate = &a->fw.started; // b plays only once a holds units
    worker_start(a);
    worker_start(b);
    run_start(r);
    run_wait(r);
    int rc_a = worker_join(a), rc_b = worker_join(b);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_true(atomic_load(&r->fc.parked));
    assert_int_equal(rc_a, 1);
    assert_int_equal(rc_b, 0);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(st->rank[1].state, COORD_RANK_LEFT);
    assert_non_null(strstr(st->rank[1].error, UNIT_FAILURE));
    assert_int_equal(st->rank[1].units, 1);
    assert_int_equal(st->rank[2].units, UNITS - 1);
    int twice = 0;
    for (uint64_t u = 0; u < UNITS; u++)
        if (r->fc.handed[u] == 2) {
            twice++;
            assert_int_equal(runs_of(a, u), 0);
            assert_int_equal(runs_of(b, u), 1);
        } else {
            assert_int_equal(r->fc.handed[u], 1);
        }
    assert_int_equal(twice, 1);
    free(a);
    free(b);
    run_free(r);
}

/// Results that are not a rank's to send are ignored, the rank kept: a duplicate, a unit it
/// was not handed, a unit out of range, and a result from a rank that never said HELLO.
/// Only the genuine results count, once each, in the order sent.
static void test_garbage_ignored(void **state)
{
    enum { UNITS = 4 };
    Run *r = run_new(*state, 3, UNITS, WIRE_BOOK);
    run_start(r);
    Channel *hand = channel_hub_rank(r->hub, 1), *stranger = channel_hub_rank(r->hub, 2);
    WireMessage m;
    hand_hello(hand, SIGNATURE);
    hand_request(hand, 2);
    bool first = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_WORK, &m) &&
                 m.work.unit_count == 2 && m.work.unit_ids[0] == 0 && m.work.unit_ids[1] == 1;
    wire_message_destroy(&m);
    hand_result(stranger, JOB_ID, 2, 1, MARK_GARBAGE); // unadmitted
    hand_result(hand, JOB_ID, 1, 0, 0);
    hand_result(hand, JOB_ID, 1, 0, MARK_GARBAGE);  // duplicate
    hand_result(hand, JOB_ID, 1, 2, MARK_GARBAGE);  // not handed to it (yet)
    hand_result(hand, JOB_ID, 1, 99, MARK_GARBAGE); // out of range
    hand_request(hand, 2);
    bool second = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_WORK, &m) &&
                  m.work.unit_count == 2 && m.work.unit_ids[0] == 2 && m.work.unit_ids[1] == 3;
    wire_message_destroy(&m);
    for (uint64_t u = 1; u < UNITS; u++)
        hand_result(hand, JOB_ID, 1, u, 0);
    bool stopped = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_STOP, &m) &&
                   m.stop.code == WIRE_STOP_DONE;
    wire_message_destroy(&m);
    hand_hello(stranger, SIGNATURE); // after its result: that one came from a stranger
    hand_bye(hand);
    hand_bye(stranger);
    run_wait(r);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_true(first);
    assert_true(second);
    assert_true(stopped);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(r->fc.counted, UNITS);
    for (int i = 0; i < UNITS; i++)
        assert_int_equal(r->fc.order[i], i);
    assert_int_equal(st->rank[1].state, COORD_RANK_LEFT);
    assert_int_equal(st->rank[1].units, UNITS);
    assert_int_equal(st->rank[2].state, COORD_RANK_LEFT);
    assert_int_equal(st->rank[2].units, 0);
    run_free(r);
}

typedef enum { BAD_JOB, BAD_RANK, BAD_BYTES, BAD_CHECK } Bad;

/// Rank 1 (by hand) holds one unit while the real worker on rank 2 plays all the others and
/// waits for more; rank 1 then sends `bad` about its unit. It must get REFUSE naming
/// `expect`, nothing of it counts, and its unit goes to the waiting worker: the run ends done.
static void refused_for(const Fixture *f, Bad bad, const char *expect)
{
    enum { UNITS = 6 };
    Run *r = run_new(f, 3, UNITS, WIRE_BOOK);
    r->fc.watch = 2;
    run_start(r);
    Channel *hand = channel_hub_rank(r->hub, 1);
    WireMessage m;
    hand_hello(hand, SIGNATURE);
    hand_request(hand, 1);
    bool got =
        hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_WORK, &m) && m.work.unit_count == 1;
    uint64_t unit = got ? m.work.unit_ids[0] : 0;
    wire_message_destroy(&m);
    WorkerThread *w = worker_new(r->hub, 2, 1, SIGNATURE, WIRE_BOOK);
    worker_start(w);
    bool parked = wait_flag(&r->fc.parked);
    if (bad == BAD_JOB)
        hand_result(hand, JOB_ID + 1, 1, unit, MARK_GARBAGE);
    else if (bad == BAD_RANK)
        hand_result(hand, JOB_ID, 2, unit, MARK_GARBAGE);
    else if (bad == BAD_BYTES)
        hand->ops->send(hand->impl, 0, LINK_TAG_RESULT, "\x94\xa2XQ\x04", 5);
    else
        hand_result(hand, JOB_ID, 1, unit, MARK_FORGED);
    bool refused = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_REFUSE, &m) &&
                   strstr(m.refuse.reason, expect);
    wire_message_destroy(&m);
    hand_bye(hand);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    if (r->stalled) {
        free(w);
        run_free(r);
        fail_msg("the run stalled: unit %llu, taken back from the refused rank 1, was never "
                 "handed to the waiting rank 2 (the test interrupted it)",
                 (unsigned long long)unit);
    }
    assert_true(got);
    assert_true(parked);
    assert_true(refused);
    assert_int_equal(rc, 0);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(st->rank[1].state, COORD_RANK_REFUSED);
    assert_non_null(strstr(st->rank[1].error, expect));
    assert_int_equal(st->rank[1].units, 0);
    assert_int_equal(st->rank[2].units, UNITS);
    assert_int_equal(runs_of(w, unit), 1);
    free(w);
    run_free(r);
}

/// A result of another job refuses its rank; its unit goes to the others.
static void test_refused_other_job(void **state) { refused_for(*state, BAD_JOB, "not one unit"); }

/// A result carrying another rank's number refuses its sender; its unit goes to the others.
static void test_refused_wrong_rank(void **state) { refused_for(*state, BAD_RANK, "not one unit"); }

/// Bytes that are not a wire message refuse their sender; its unit goes to the others.
static void test_refused_invalid_bytes(void **state)
{
    refused_for(*state, BAD_BYTES, "not valid");
}

/// A result the kind's check rejects (moves that do not replay) refuses its rank, and the
/// unit goes to the others even when it was the rank's last one and they are all parked.
static void test_refused_by_check(void **state) { refused_for(*state, BAD_CHECK, "forged"); }

/// A result that cannot be counted (the kind's output write fails) stops the run with an
/// error: every worker gets STOP "error", nothing more is counted, exit status 1.
static void test_count_failure_stops(void **state)
{
    enum { UNITS = 20 };
    Run *r = run_new(*state, 3, UNITS, WIRE_BOOK);
    r->fc.count_fail_at = 3;
    run_start(r);
    Channel *hand = channel_hub_rank(r->hub, 2);
    WireMessage m;
    hand_hello(hand, SIGNATURE);
    hand_request(hand, 1);
    bool got = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_WORK, &m);
    wire_message_destroy(&m);
    WorkerThread *w = worker_new(r->hub, 1, 1, SIGNATURE, WIRE_BOOK);
    worker_start(w);
    bool stopped = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_STOP, &m) &&
                   m.stop.code == WIRE_STOP_ERROR;
    wire_message_destroy(&m);
    hand_bye(hand);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_true(got);
    assert_true(stopped);
    assert_int_equal(rc, 0);
    assert_int_equal(st->end, COORD_FAILED);
    assert_int_equal(coord_exit_status(st), 1);
    assert_non_null(strstr(st->reason, "disk full"));
    assert_int_equal(r->fc.counted, 3);
    assert_int_equal(r->fc.garbage, 0);
    free(w);
    run_free(r);
}

/// A journal that cannot be written (the file size limit stops the first record) stops the
/// run with an error naming the journal before anything counts; reopened, the journal holds
/// no record, whole or torn.
static void test_journal_failure_stops(void **state)
{
    Fixture *f = *state;
    Run *r = run_new(f, 2, 10, WIRE_BOOK);
    char path[128];
    journal_path(f, path, sizeof path);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    WorkerThread *w = worker_new(r->hub, 1, 1, SIGNATURE, WIRE_BOOK);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = f->fsize;
    small.rlim_cur = (rlim_t)sb.st_size + 1; // one byte of the first record fits
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    worker_start(w);
    run_start(r);
    run_wait(r);
    int rc = worker_join(w);
    setrlimit(RLIMIT_FSIZE, &f->fsize);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(rc, 0);
    assert_int_equal(st->end, COORD_FAILED);
    assert_int_equal(coord_exit_status(st), 1);
    assert_memory_equal(st->reason, "journal:", 8);
    assert_int_equal(st->units_done, 0);
    assert_int_equal(r->fc.counted, 0);
    free(w);
    run_free(r);
    Run *again = run_new(f, 2, 10, WIRE_BOOK);
    assert_int_equal(again->stats.records, 0);
    assert_int_equal(again->stats.torn_bytes, 0);
    assert_int_equal(coord_state(again->c)->units_at_start, 0);
    run_free(again);
}

/// Rank 1 driven by hand: joins, takes a WORK of n units and sends their n results while
/// the coordinator's first check is held, so that they wait in one batch; then says BYE.
static void hand_batch(Run *r, int n, atomic_bool *hold, uint64_t *ids)
{
    Channel *hand = channel_hub_rank(r->hub, 1);
    WireMessage m;
    r->fc.hold = hold;
    assert_true(hand_hello(hand, SIGNATURE));
    assert_true(hand_request(hand, (uint32_t)n));
    assert_true(hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_WORK, &m));
    assert_int_equal(m.work.unit_count, n);
    for (int i = 0; i < n; i++) {
        ids[i] = m.work.unit_ids[i];
        assert_true(hand_result(hand, JOB_ID, 1, ids[i], 0));
    }
    atomic_store(hold, true);
    assert_true(hand_bye(hand));
}

/// Group commit: results that arrive together are journaled with one write and one fdatasync
/// before the first of them counts (each count finds all their records in the file), then
/// counted in the order they came; coord_load's figures are the journal's (4 records, one
/// sync, the bytes the file grew by).
static void test_batch_one_sync(void **state)
{
    enum { N = 4 };
    Fixture *f = *state;
    Run *r = run_new(f, 2, N, WIRE_BOOK);
    char path[128];
    journal_path(f, path, sizeof path);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    r->fc.journal = path;
    atomic_bool hold = false;
    uint64_t ids[N];
    run_start(r);
    hand_batch(r, N, &hold, ids);
    run_wait(r);
    assert_int_equal(stat(path, &after), 0);
    CoordLoad ld;
    coord_load(r->c, &ld);
    assert_false(r->stalled);
    assert_int_equal(r->end, COORD_DONE);
    assert_int_equal(r->fc.counted, N);
    assert_each_once(&r->fc, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r->fc.order[i], ids[i]);
        assert_int_equal(r->fc.size_at_count[ids[i]], after.st_size);
    }
    assert_int_equal(ld.results, N);
    assert_int_equal(ld.journal.records, N);
    assert_int_equal(ld.journal.commits, 1);
    assert_int_equal(ld.journal.syncs, 1);
    assert_int_equal(ld.journal.bytes, after.st_size - before.st_size);
    assert_true(ld.wall_s >= 0 && ld.cpu_s >= 0);
    run_free(r);
}

/// A batch whose journal write fails part way (the file size limit lets two and a half of its
/// four records through) counts none of its results, not even those written whole: the run
/// fails naming the journal, and the reopened journal holds no record, whole or torn.
static void test_batch_write_fails(void **state)
{
    enum { N = 4 };
    Fixture *f = *state;
    Run *r = run_new(f, 2, N, WIRE_BOOK);
    char path[128];
    journal_path(f, path, sizeof path);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    msgpack_sbuffer b;
    msgpack_sbuffer_init(&b);
    assert_int_equal(pack_unit(WIRE_BOOK, JOB_ID, 1, 0, 0, &b), WIRE_OK);
    size_t rec = JOURNAL_RECORD_HEAD + b.size; // every unit below 128 packs to the same size
    msgpack_sbuffer_destroy(&b);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = f->fsize;
    small.rlim_cur = (rlim_t)sb.st_size + 2 * rec + rec / 2;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    atomic_bool hold = false;
    uint64_t ids[N];
    run_start(r);
    hand_batch(r, N, &hold, ids);
    run_wait(r);
    setrlimit(RLIMIT_FSIZE, &f->fsize);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(st->end, COORD_FAILED);
    assert_memory_equal(st->reason, "journal:", 8);
    assert_int_equal(atomic_load(&r->fc.checked), N); // all four were in the batch
    assert_int_equal(st->units_done, 0);
    assert_int_equal(r->fc.counted, 0);
    run_free(r);
    Run *again = run_new(f, 2, N, WIRE_BOOK);
    assert_int_equal(again->stats.records, 0);
    assert_int_equal(again->stats.torn_bytes, 0);
    run_free(again);
}

/// A verdict given by the second result of a batch of four: the two after it are not counted
/// and are cut off the journal, so that a resumed run finds what the verdict saw.
static void test_verdict_inside_batch(void **state)
{
    enum { N = 4 };
    Fixture *f = *state;
    Run *r = run_new(f, 2, N, WIRE_BOOK);
    r->fc.verdict_at = 2;
    atomic_bool hold = false;
    uint64_t ids[N];
    run_start(r);
    hand_batch(r, N, &hold, ids);
    run_wait(r);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(st->end, COORD_DONE);
    assert_string_equal(st->reason, "H1 accepted");
    assert_int_equal(r->fc.counted, 2);
    assert_int_equal(r->fc.order[0], ids[0]);
    assert_int_equal(r->fc.order[1], ids[1]);
    assert_int_equal(st->units_done, 2);
    run_free(r);
    Run *again = run_new(f, 2, N, WIRE_BOOK);
    assert_int_equal(again->stats.records, 2);
    assert_int_equal(coord_state(again->c)->units_at_start, 2);
    run_free(again);
}

/// An early verdict (complete says so, abandoning the units in progress) sends STOP
/// "interrupted" with the verdict to every worker, hands out no unit after it, and ends done
/// (exit 0) with the verdict as its reason, before the job's last unit.
static void test_early_verdict(void **state)
{
    enum { UNITS = 40 };
    Run *r = run_new(*state, 4, UNITS, WIRE_BOOK);
    r->fc.verdict_at = 5;
    run_start(r);
    Channel *hand = channel_hub_rank(r->hub, 3);
    WireMessage m;
    hand_hello(hand, SIGNATURE);
    hand_request(hand, 1);
    bool got = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_WORK, &m);
    wire_message_destroy(&m);
    WorkerThread *w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = worker_new(r->hub, i + 1, 2, SIGNATURE, WIRE_BOOK);
        worker_start(w[i]);
    }
    bool stopped = hand_expect(hand, LINK_TAG_ORDER, LINK_TAG_ORDER, WIRE_STOP, &m) &&
                   m.stop.code == WIRE_STOP_INTERRUPTED && strstr(m.stop.text, "H1 accepted");
    wire_message_destroy(&m);
    hand_bye(hand);
    run_wait(r);
    int rc0 = worker_join(w[0]), rc1 = worker_join(w[1]);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_true(got);
    assert_true(stopped);
    assert_int_equal(rc0, 0);
    assert_int_equal(rc1, 0);
    assert_true(r->fc.verdict_given);
    assert_int_equal(r->fc.handed_after_verdict, 0);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_string_equal(st->reason, "H1 accepted");
    assert_true(st->units_done >= 5 && st->units_done < UNITS);
    for (int u = 0; u < UNITS; u++)
        assert_true(r->fc.live[u] <= 1);
    assert_int_equal(r->fc.garbage, 0);
    for (int i = 0; i < 2; i++)
        free(w[i]);
    run_free(r);
}

/// A rejected message under the first of two polled tags is reported (false, *rejected =
/// its sender) even when the second tag holds a valid message: the TSan CI failure of
/// test_refused_invalid_bytes, where rank 2's valid REQUEST hid rank 1's bad RESULT and
/// the coordinator never refused rank 1. The valid message is still taken next.
static void test_rejected_not_hidden(void **state)
{
    (void)state;
    ChannelHub *h = channel_hub_new(3);
    assert_non_null(h);
    Channel *co = channel_hub_rank(h, 0), *bad = channel_hub_rank(h, 1);
    assert_int_equal(bad->ops->send(bad->impl, 0, LINK_TAG_RESULT, "\x94\xa2XQ\x04", 5), LINK_OK);
    assert_true(hand_request(channel_hub_rank(h, 2), 1));
    int src = -1, rejected = -1;
    WireMessage m;
    assert_false(channel_receive(co, LINK_TAG_RESULT, LINK_TAG_CONTROL, &src, &m, &rejected));
    assert_int_equal(rejected, 1);
    assert_true(channel_receive(co, LINK_TAG_RESULT, LINK_TAG_CONTROL, &src, &m, &rejected));
    assert_int_equal(rejected, -1);
    assert_int_equal(src, 2);
    assert_int_equal(m.kind, WIRE_REQUEST);
    wire_message_destroy(&m);
    channel_hub_free(h);
}

/// A WORK taken after a STOP is dropped by the worker (rank 0 played by hand): the unit in
/// progress at the STOP ("done") is finished and sent, the late WORK's unit never runs, and
/// the worker says BYE without an error.
static void test_work_after_stop_dropped(void **state)
{
    (void)state;
    ChannelHub *h = channel_hub_new(2);
    assert_non_null(h);
    Channel *co = channel_hub_rank(h, 0);
    atomic_bool gate = false;
    WorkerThread *w = worker_new(h, 1, 1, SIGNATURE, WIRE_BOOK);
    w->fw.gate = &gate;
    worker_start(w);
    WireMessage m;
    bool hello = hand_expect(co, LINK_TAG_CONTROL, LINK_TAG_CONTROL, WIRE_HELLO, &m);
    wire_message_destroy(&m);
    bool asked = hand_expect(co, LINK_TAG_CONTROL, LINK_TAG_CONTROL, WIRE_REQUEST, &m);
    wire_message_destroy(&m);
    hand_work(co, 1, 0, 1);
    bool playing = wait_flag(&w->fw.started);
    hand_stop(co, 1, WIRE_STOP_DONE);
    bool stop_taken = wait_taken(h, 1);
    hand_work(co, 1, 1, 1);
    bool work_taken = wait_taken(h, 1);
    atomic_store(&gate, true);
    int results = 0, unit0 = 0, byes = 0;
    char error[WIRE_MAX_TEXT + 1] = "?";
    while (hand_wait(co, LINK_TAG_RESULT, LINK_TAG_CONTROL, &m)) {
        if (m.kind == WIRE_BOOK) {
            results++;
            unit0 += m.book->unit_id == 0;
        } else if (m.kind == WIRE_BYE) {
            byes++;
            snprintf(error, sizeof error, "%s", m.bye.error);
        }
        bool bye = m.kind == WIRE_BYE;
        wire_message_destroy(&m);
        if (bye)
            break;
    }
    int rc = worker_join(w);
    assert_true(hello);
    assert_true(asked);
    assert_true(playing);
    assert_true(stop_taken);
    assert_true(work_taken);
    assert_int_equal(rc, 0);
    assert_int_equal(byes, 1);
    assert_string_equal(error, "");
    assert_int_equal(results, 1);
    assert_int_equal(unit0, 1);
    assert_int_equal(runs_of(w, 0), 1);
    assert_int_equal(runs_of(w, 1), 0);
    assert_int_equal(channel_hub_pending(h, 1), 0);
    free(w);
    channel_hub_free(h);
}

/// A worker of more than 64 work threads, whose engines are slow to start, plays and reports
/// every unit it was handed, dropping none (rank 0 by hand answers each REQUEST in full: 64 +
/// 64 + 16 units for 72 threads asking 2 each; a worker that asks for less is as right).
static void test_wide_worker_keeps_units(void **state)
{
    (void)state;
    enum { THREADS = 72 };
    ChannelHub *h = channel_hub_new(2);
    assert_non_null(h);
    Channel *co = channel_hub_rank(h, 0);
    atomic_bool gate = false;
    WorkerThread *w = worker_new(h, 1, THREADS, SIGNATURE, WIRE_BOOK);
    w->fw.gate_new = &gate; // no unit is taken before the last WORK
    worker_start(w);
    WireMessage m;
    bool hello = hand_expect(co, LINK_TAG_CONTROL, LINK_TAG_CONTROL, WIRE_HELLO, &m);
    wire_message_destroy(&m);
    uint64_t handed = 0;
    int works = 0;
    // The first REQUEST must come; after that, one not sent within QUIET_MS is not coming
    // (no work thread can take a unit and make room before the gate opens).
    while (hello && handed < 2 * THREADS &&
           hand_wait_ms(co, LINK_TAG_CONTROL, LINK_TAG_CONTROL, &m, works ? QUIET_MS : GUARD_MS)) {
        uint32_t n = m.kind == WIRE_REQUEST ? m.request.units : 0;
        wire_message_destroy(&m);
        if (n && hand_work(co, 1, handed, n)) {
            handed += n;
            works++;
        }
    }
    bool taken = wait_taken(h, 1);
    hand_stop(co, 1, WIRE_STOP_DONE);
    atomic_store(&gate, true);
    bool seen[2 * THREADS] = {false};
    uint64_t reported = 0;
    while (hand_wait(co, LINK_TAG_RESULT, LINK_TAG_CONTROL, &m)) {
        bool bye = m.kind == WIRE_BYE;
        if (m.kind == WIRE_BOOK && m.book->unit_id < handed && !seen[m.book->unit_id]) {
            seen[m.book->unit_id] = true;
            reported++;
        }
        wire_message_destroy(&m);
        if (bye)
            break;
    }
    int rc = worker_join(w);
    assert_true(hello);
    assert_true(taken);
    assert_true(works >= 2);
    assert_int_equal(rc, 0);
    if (reported != handed) {
        free(w);
        channel_hub_free(h);
        fail_msg("the worker reported %llu of the %llu units it was handed in %d WORKs",
                 (unsigned long long)reported, (unsigned long long)handed, works);
    }
    for (uint64_t u = 0; u < handed; u++)
        assert_int_equal(runs_of(w, u), 1);
    free(w);
    channel_hub_free(h);
}

/// A run interrupted part way, then a second coordinator over the same journal: the
/// journaled units are replayed (units_at_start), only the rest is handed out and counted
/// live, and every unit counts exactly once over both runs; another job cannot open it.
static void test_resume(void **state)
{
    enum { UNITS = 12 };
    Fixture *f = *state;
    Run *r = run_new(f, 3, UNITS, WIRE_BOOK);
    assert_true(r->stats.created);
    r->fc.interrupt_at = 4;
    WorkerThread *w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = worker_new(r->hub, i + 1, 1, SIGNATURE, WIRE_BOOK);
        worker_start(w[i]);
    }
    run_start(r);
    run_wait(r);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(worker_join(w[i]), 0);
        free(w[i]);
    }
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(st->end, COORD_INTERRUPTED);
    uint64_t first = st->units_done;
    assert_true(first >= 4 && first < UNITS);
    int was[UNITS];
    for (int u = 0; u < UNITS; u++)
        was[u] = r->fc.live[u];
    run_free(r);

    Run *s = run_new(f, 3, UNITS, WIRE_BOOK);
    st = coord_state(s->c);
    assert_false(s->stats.created);
    assert_int_equal(s->stats.records, first);
    assert_int_equal(st->units_at_start, first);
    for (int u = 0; u < UNITS; u++)
        assert_int_equal(s->fc.replayed[u], was[u]);
    for (int i = 0; i < 2; i++) {
        w[i] = worker_new(s->hub, i + 1, 1, SIGNATURE, WIRE_BOOK);
        worker_start(w[i]);
    }
    run_start(s);
    run_wait(s);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(worker_join(w[i]), 0);
        free(w[i]);
    }
    assert_false(s->stalled);
    assert_int_equal(st->end, COORD_DONE);
    assert_int_equal(coord_exit_status(st), 0);
    assert_int_equal(st->units_done, UNITS);
    assert_int_equal(st->units_at_start, first);
    assert_int_equal(s->fc.counted, UNITS - first);
    assert_each_once(&s->fc, UNITS);
    for (int u = 0; u < UNITS; u++)
        assert_int_equal(s->fc.handed[u], !was[u]);
    run_free(s);

    ChannelHub *h = channel_hub_new(2);
    FakeCoord fc = {0};
    CoordKind k = {.ctx = &fc,
                   .result_kind = WIRE_BOOK,
                   .check = fc_check,
                   .count = fc_count,
                   .complete = fc_complete};
    CoordConfig cfg = {channel_hub_rank(h, 0), JOB_ID, UNITS, SIGNATURE, NULL, POLL_MS, 0, 0};
    Coordinator *c = coord_new(&cfg, &k);
    char path[128], why[512];
    journal_path(f, path, sizeof path);
    JournalIdentity other = {"job = another", 13};
    assert_false(coord_open_journal(c, path, &other, NULL, why, sizeof why));
    assert_true(why[0] != '\0');
    assert_int_equal(fc.counted + fc.replayed[0], 0);
    coord_free(c);
    channel_hub_free(h);
}

/// The interrupt flag raised mid-run stops every worker: the run ends interrupted with exit
/// status 130, having counted what arrived, once each, and not the whole job.
static void test_interrupted(void **state)
{
    enum { UNITS = 100 };
    Run *r = run_new(*state, 3, UNITS, WIRE_BOOK);
    r->fc.interrupt_at = 3;
    WorkerThread *w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = worker_new(r->hub, i + 1, 2, SIGNATURE, WIRE_BOOK);
        worker_start(w[i]);
    }
    run_start(r);
    run_wait(r);
    int rc0 = worker_join(w[0]), rc1 = worker_join(w[1]);
    const CoordState *st = coord_state(r->c);
    assert_false(r->stalled);
    assert_int_equal(rc0, 0);
    assert_int_equal(rc1, 0);
    assert_int_equal(st->end, COORD_INTERRUPTED);
    assert_int_equal(coord_exit_status(st), 130);
    assert_string_equal(st->reason, "interrupted");
    assert_true(st->units_done >= 3 && st->units_done < UNITS);
    for (int u = 0; u < UNITS; u++)
        assert_true(r->fc.live[u] <= 1);
    for (int i = 0; i < 2; i++)
        free(w[i]);
    run_free(r);
}

/// Interrupted before it starts: the worker that joins is stopped at its first REQUEST, no
/// unit is handed out, and the run ends interrupted (exit 130).
static void test_interrupted_before_start(void **state)
{
    Run *r = run_new(*state, 2, 10, WIRE_BOOK);
    atomic_store(&r->interrupt, true);
    WorkerThread *w = worker_new(r->hub, 1, 1, SIGNATURE, WIRE_BOOK);
    worker_start(w);
    run_start(r);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    assert_int_equal(rc, 0);
    assert_int_equal(st->end, COORD_INTERRUPTED);
    assert_int_equal(coord_exit_status(st), 130);
    assert_int_equal(runs_total(w), 0);
    for (int u = 0; u < 10; u++)
        assert_int_equal(r->fc.handed[u], 0);
    assert_int_equal(st->units_done, 0);
    free(w);
    run_free(r);
}

/// A rank that says BYE twice is still one worker leaving: the run goes on until the other
/// worker's BYE, and completes.
static void test_second_bye_is_not_another_worker(void **state)
{
    enum { UNITS = 4 };
    Run *r = run_new(*state, 3, UNITS, WIRE_BOOK);
    atomic_bool gate = false;
    WorkerThread *w = worker_new(r->hub, 2, 1, SIGNATURE, WIRE_BOOK);
    w->fw.gate = &gate;
    worker_start(w);
    run_start(r);
    bool playing = wait_flag(&w->fw.started);
    Channel *hand = channel_hub_rank(r->hub, 1);
    hand_hello(hand, SIGNATURE);
    hand_bye(hand);
    hand_bye(hand);
    bool read = wait_taken(r->hub, 0);
    // Two more loop turns after both BYEs were taken, unless the loop ended.
    int t0 = atomic_load(&r->fc.turns);
    uint64_t end = now_ms() + GUARD_MS;
    while (!atomic_load(&r->ended) && atomic_load(&r->fc.turns) < t0 + 2 && now_ms() < end)
        nap();
    bool early = atomic_load(&r->ended);
    if (early) // nobody else will stop the worker now
        hand_stop(channel_hub_rank(r->hub, 0), 2, WIRE_STOP_INTERRUPTED);
    atomic_store(&gate, true);
    run_wait(r);
    int rc = worker_join(w);
    const CoordState *st = coord_state(r->c);
    assert_true(playing);
    assert_true(read);
    if (early) {
        char why[600];
        snprintf(why, sizeof why, "end %d: %s", (int)st->end, st->reason);
        free(w);
        run_free(r);
        fail_msg("coord_run returned while rank 2 was still playing: rank 1's second BYE "
                 "counted as another worker's (%s)",
                 why);
    }
    assert_false(r->stalled);
    assert_int_equal(rc, 0);
    assert_int_equal(st->end, COORD_DONE);
    assert_each_once(&r->fc, UNITS);
    assert_int_equal(st->rank[2].units, UNITS);
    free(w);
    run_free(r);
}

/// A real match through the real game kinds (builtin engines at a few hundred nodes a move,
/// 2 game pairs): every pair is checked by the rules, journaled and counted, and the run
/// ends done with exit status 0.
static void test_real_games(void **state)
{
    Fixture *f = *state;
    char out[96];
    snprintf(out, sizeof out, "output.dir=%s", f->dir);
    const char *sets[] = {"job.kind=match",           "job.rounds=2",
                          "job.concurrency=2",        "time.nodes=300",
                          "adjudication.maxplies=40", out};
    JobConfig *job = calloc(1, sizeof *job);
    assert_non_null(job);
    char why[1024];
    if (job_load(XQ_JOBS_DIR "/sprt-weights.ini", sets, 6, job, why, sizeof why) != JOB_OK)
        fail_msg("%s", why);
    GamePlan *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    if (!plan_build(job, stderr, plan, why, sizeof why))
        fail_msg("%s", why);
    ChannelHub *h = channel_hub_new(2);
    GamesSetup gs = {job, plan, f->dir, SIGNATURE, 2};
    GamesCoord *g = games_coord_new(&gs, why, sizeof why);
    if (!g)
        fail_msg("%s", why);
    CoordKind kind;
    games_coord_kind(g, &kind);
    CoordConfig cfg = {channel_hub_rank(h, 0), JOB_ID, plan->pairs_total, SIGNATURE, NULL, 5, 0, 0};
    Coordinator *c = coord_new(&cfg, &kind);
    char path[128];
    journal_path(f, path, sizeof path);
    JournalIdentity id = {IDENTITY, strlen(IDENTITY)};
    assert_true(coord_open_journal(c, path, &id, NULL, why, sizeof why));
    assert_true(games_coord_start(g, coord_state(c), coord_run_id(c), why, sizeof why));
    GamesWorker gw = {.plan = plan, .rank = 1, .scale = 1.0};
    WorkerThread *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->cfg = (WorkerConfig){channel_hub_rank(h, 1), 2, SIGNATURE, 1000, "test", NULL, 0};
    games_worker_kind(&gw, &w->kind);
    worker_start(w);
    CoordEnd end = coord_run(c);
    int rc = worker_join(w);
    const CoordState *st = coord_state(c);
    int status = games_coord_finish(g, st);
    assert_int_equal(rc, 0);
    assert_int_equal(end, COORD_DONE);
    assert_int_equal(status, 0);
    assert_int_equal(plan->pairs_total, 2);
    assert_int_equal(st->units_done, plan->pairs_total);
    assert_int_equal(st->rank[1].units, plan->pairs_total);
    assert_int_equal(atomic_load(&gw.games), 2 * plan->pairs_total);
    assert_int_equal(channel_hub_pending(h, 0), 0);
    coord_free(c);
    games_coord_free(g);
    channel_hub_free(h);
    free(w);
    plan_free(plan);
    free(plan);
    free(job);
}

// ---- Fixture ------------------------------------------------------------------------------

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/xqloops-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    getrlimit(RLIMIT_FSIZE, &f->fsize);
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int teardown(void **state)
{
    Fixture *f = *state;
    setrlimit(RLIMIT_FSIZE, &f->fsize);
    nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_normal_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_single_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_signature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_start_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_start_fails_other_plays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_departed_units_requeued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_other_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_wrong_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_invalid_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_by_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_count_failure_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_journal_failure_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_one_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_write_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_inside_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_early_verdict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected_not_hidden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_work_after_stop_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wide_worker_keeps_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_before_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_bye_is_not_another_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_games, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
