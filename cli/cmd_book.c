// SPDX-License-Identifier: MIT
// Opening books on the cluster: `xqforge run JOB` for a job of kind = book, and
// `xqforge book probe FEN`. Rank 0 hands out work units (numbers), journals each unit's
// candidates as they arrive, and commits units strictly in unit order into the book
// (coordinator/bookstore): the window, deduplication by key, the EPD file, the move book.
// Because a unit's candidates depend only on the job and the unit number (worker/bookgen),
// and the commit order is fixed, the book is the same on 1 or 100 ranks, and a run killed
// and resumed ends with the book of an uninterrupted run. Workers run one generator per
// thread; with one rank (no mpirun), rank 0 runs a worker thread too.
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bookgen.h"
#include "bookstore.h"
#include "commands.h"
#include "job.h"
#include "journal.h"
#include "link.h"
#include "move.h"
#include "movebook.h"
#include "run_common.h"
#include "schedule.h"
#include "timeman.h"
#include "wire.h"

enum { POLL_MS = 20, QUEUE_MAX = 256, PATH_MAX_LEN = 2 * JOB_TEXT_MAX + 2 };

/// What every rank knows of the job.
typedef struct {
    Link *link;
    JobConfig job;
    Openings seeds; // empty: generation starts from the start position
    BookgenConfig gen;
    uint64_t job_id, units_total;
    int concurrency;
    uint64_t bench_signature, bench_nps;
} Book;

static atomic_bool interrupted;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

// ---------------------------------------------------------------------------------------
// Worker

/// A packed BOOK message waiting for the communication thread.
typedef struct Packet {
    struct Packet *next;
    size_t len;
    char data[];
} Packet;

typedef struct {
    Book *book;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t queue[QUEUE_MAX];
    int qlen, busy;
    bool requested, no_more_work, failed;
    atomic_bool abort; // the coordinator said stop: abandon the units in progress
    Packet *out;       // finished units, newest first
    uint64_t candidates, nodes, busy_ms;
    char error[256];
} Worker;

static void worker_fail(Worker *w, const char *what)
{
    pthread_mutex_lock(&w->lock);
    w->failed = true;
    snprintf(w->error, sizeof w->error, "%s", what);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/// Packs a finished unit, with the thread's running totals, for the communication thread.
static bool post_unit(Worker *w, uint64_t unit, const BookgenCandidate *c, WireBookResult *res,
                      uint64_t nodes, int64_t ms, msgpack_sbuffer *buf)
{
    int n = w->book->gen.unit;
    res->job_id = w->book->job_id;
    res->rank = (uint32_t)link_rank(w->book->link);
    res->unit_id = unit;
    res->candidate_count = n;
    for (int i = 0; i < n; i++) {
        WireBookCandidate *k = &res->candidates[i];
        snprintf(k->start_fen, sizeof k->start_fen, "%s", c[i].start_fen);
        k->path_len = c[i].path_len;
        for (int p = 0; p < c[i].path_len; p++)
            k->path[p] = (WireBookMove){c[i].path[p], c[i].path_scores[p]};
        k->score = c[i].score;
    }
    pthread_mutex_lock(&w->lock);
    w->candidates += (uint64_t)n;
    w->nodes += nodes;
    w->busy_ms += (uint64_t)(ms > 0 ? ms : 0);
    res->candidates_done = w->candidates;
    res->nodes = w->nodes;
    res->busy_ms = w->busy_ms;
    pthread_mutex_unlock(&w->lock);
    msgpack_sbuffer_clear(buf);
    Packet *p = NULL;
    if (wire_pack_book(res, buf) != WIRE_OK || !(p = malloc(sizeof *p + buf->size)))
        return false;
    p->len = buf->size;
    memcpy(p->data, buf->data, buf->size);
    pthread_mutex_lock(&w->lock);
    p->next = w->out;
    w->out = p;
    pthread_mutex_unlock(&w->lock);
    return true;
}

static void *gen_thread(void *arg)
{
    Worker *w = arg;
    Bookgen *g = NULL;
    BookgenStatus st = bookgen_new(&w->book->gen, &g);
    BookgenCandidate *cands = malloc(sizeof *cands * (size_t)w->book->gen.unit);
    WireBookResult *res = wire_book_result_new();
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    if (st == BOOKGEN_OK && (!cands || !res))
        st = BOOKGEN_ERR_NOMEM;
    while (st == BOOKGEN_OK) {
        pthread_mutex_lock(&w->lock);
        while (w->qlen == 0 && !w->no_more_work && !atomic_load(&w->abort))
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->qlen == 0 || atomic_load(&w->abort)) {
            pthread_mutex_unlock(&w->lock);
            break;
        }
        uint64_t unit = w->queue[0];
        memmove(w->queue, w->queue + 1, sizeof(uint64_t) * (size_t)--w->qlen);
        w->busy++;
        pthread_mutex_unlock(&w->lock);
        int64_t t0 = timeman_now_ms();
        uint64_t nodes = 0;
        st = bookgen_unit(g, unit, &w->abort, cands, &nodes);
        if (st == BOOKGEN_OK && !post_unit(w, unit, cands, res, nodes, timeman_now_ms() - t0, &buf))
            st = BOOKGEN_ERR_NOMEM;
        pthread_mutex_lock(&w->lock);
        w->busy--;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    if (st != BOOKGEN_OK && st != BOOKGEN_ABORTED)
        worker_fail(w, bookgen_strerror(st));
    msgpack_sbuffer_destroy(&buf);
    wire_book_result_free(res);
    free(cands);
    bookgen_free(g);
    return NULL;
}

/// Sends the finished units (oldest first); false if the link failed.
static bool send_units(Link *l, Packet *p)
{
    Packet *rev = NULL;
    while (p) {
        Packet *next = p->next;
        p->next = rev;
        rev = p;
        p = next;
    }
    bool ok = true;
    while (rev) {
        Packet *next = rev->next;
        ok = ok && link_send(l, 0, LINK_TAG_RESULT, rev->data, rev->len) == LINK_OK;
        free(rev);
        rev = next;
    }
    return ok;
}

/// Applies a message from the coordinator. In a book job any STOP means stop now: the
/// units still running are beyond what the book needs.
static void worker_on_message(Worker *w, const WireMessage *msg, int rank)
{
    pthread_mutex_lock(&w->lock);
    if (msg->kind == WIRE_WORK && w->no_more_work) {
        // MPI orders messages per tag only: a WORK sent before the STOP can be taken after
        // it. The generator threads have gone; queuing it would wait for them forever.
    } else if (msg->kind == WIRE_WORK) {
        for (int i = 0; i < msg->work.pair_count && w->qlen < QUEUE_MAX; i++)
            w->queue[w->qlen++] = msg->work.pair_ids[i];
        w->requested = false;
    } else if (msg->kind == WIRE_STOP || msg->kind == WIRE_REFUSE) {
        if (msg->kind == WIRE_REFUSE)
            fprintf(stderr, "rank %d refused: %s\n", rank, msg->refuse.reason);
        w->no_more_work = true;
        atomic_store(&w->abort, true);
        w->qlen = 0;
    }
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/// A worker rank's life: HELLO, then REQUEST/WORK/BOOK until told to stop, then BYE.
static int worker_main(Book *book)
{
    Link *l = book->link;
    Worker *w = calloc(1, sizeof *w);
    if (!w)
        return 1;
    w->book = book;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    WireHello hello = {(uint32_t)link_rank(l),
                       "",
                       1,
                       (uint32_t)book->concurrency,
                       book->bench_signature,
                       book->bench_nps,
                       XQFORGE_VERSION};
    snprintf(hello.hostname, sizeof hello.hostname, "%.*s", WIRE_MAX_TEXT, link_host(l));
    int rc = run_send(l, 0, LINK_TAG_CONTROL, wire_pack_hello(&hello, &buf), &buf) ? 0 : 1;
    pthread_t tid[256];
    int threads = 0;
    for (; rc == 0 && threads < book->concurrency && threads < 256; threads++)
        if (pthread_create(&tid[threads], NULL, gen_thread, w) != 0)
            break;
    while (rc == 0) {
        WireRequest req = {(uint32_t)link_rank(l), 0};
        pthread_mutex_lock(&w->lock);
        int room = 2 * threads - w->qlen - w->busy;
        if (!w->requested && !w->no_more_work && room > 0) {
            req.pairs = (uint32_t)(room < WIRE_MAX_PAIRS_PER_WORK ? room : WIRE_MAX_PAIRS_PER_WORK);
            w->requested = true;
        }
        Packet *out = w->out;
        w->out = NULL;
        bool finished = w->no_more_work && w->busy == 0 && w->qlen == 0 && !out;
        bool failed = w->failed;
        char error[sizeof w->error];
        if (failed) // another thread may fail too and rewrite it once the lock is released
            snprintf(error, sizeof error, "%s", w->error);
        pthread_mutex_unlock(&w->lock);
        if (!send_units(l, out) ||
            (req.pairs && !run_send(l, 0, LINK_TAG_CONTROL, wire_pack_request(&req, &buf), &buf))) {
            fprintf(stderr, "rank %d: cannot reach the coordinator\n", link_rank(l));
            rc = 1;
        } else if (failed) {
            fprintf(stderr, "rank %d: %s\n", link_rank(l), error);
            rc = 1;
        }
        if (rc || finished)
            break;
        WireMessage msg;
        int src;
        if (!run_receive(l, LINK_TAG_WORK, LINK_TAG_STOP, &src, &msg)) {
            sleep_ms(2);
            continue;
        }
        worker_on_message(w, &msg, link_rank(l));
        wire_message_destroy(&msg);
    }
    pthread_mutex_lock(&w->lock);
    w->no_more_work = true;
    atomic_store(&w->abort, true);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    send_units(l, NULL);
    for (Packet *p = w->out, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    WireBye bye = {(uint32_t)link_rank(l), w->candidates};
    run_send(l, 0, LINK_TAG_CONTROL, wire_pack_bye(&bye, &buf), &buf);
    msgpack_sbuffer_destroy(&buf);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
    return rc;
}

static void *local_worker(void *arg)
{
    worker_main(arg);
    return NULL;
}

// ---------------------------------------------------------------------------------------
// Coordinator

/// A unit received (and journaled) ahead of the commit point, as packed bytes.
typedef struct {
    uint64_t unit;
    size_t len;
    char *data;
} Pending;

typedef struct {
    uint64_t unit;
    int rank;
} InFlight;

typedef struct {
    Book *book;
    const char *dir;
    Journal *journal;
    Bookstore *store;
    Schedule sched;
    uint64_t next_commit; // every unit below it is in the book
    Pending *pending;
    size_t pending_n, pending_cap;
    InFlight *inflight;
    size_t inflight_n, inflight_cap;
    uint8_t *member;   // per rank: admitted after its HELLO
    uint32_t *waiting; // per rank: units asked for and not yet given (none were left)
    int workers_live;
    bool stopping, failed;
    int64_t start_ms, last_progress_ms;
    uint64_t candidates_at_start, accepted_at_start, invalid;
    WireBookResult *scratch;
    msgpack_sbuffer buf;
} Coord;

static void stop_workers(Coord *c, WireStopCode code, const char *why)
{
    WireStop stop = {(uint32_t)code, ""};
    snprintf(stop.text, sizeof stop.text, "%s", why);
    for (int r = 0; r < link_size(c->book->link); r++)
        run_send(c->book->link, r, LINK_TAG_STOP, wire_pack_stop(&stop, &c->buf), &c->buf);
}

/// Offers one candidate to the book: replayed here, so keys and FENs are the coordinator's.
static bool commit_candidate(Coord *c, const WireBookCandidate *k, uint64_t unit, int i)
{
    BookgenLine line;
    Move moves[WIRE_MAX_BOOK_PATH];
    uint16_t mv16[WIRE_MAX_BOOK_PATH];
    int32_t scores[WIRE_MAX_BOOK_PATH];
    char why[256];
    for (int p = 0; p < k->path_len; p++) {
        moves[p] = k->path[p].move;
        mv16[p] = (uint16_t)k->path[p].move;
        scores[p] = k->path[p].score;
    }
    if (!bookgen_replay(k->start_fen, moves, k->path_len, &line, why, sizeof why)) {
        fprintf(stderr, "\nunit %llu candidate %d: %s; skipped\n", (unsigned long long)unit, i,
                why);
        c->invalid++;
        return true;
    }
    BookEntry e = {line.key,  line.epd, line.black_to_move,
                   line.ply,  k->score, k->path_len,
                   line.keys, mv16,     scores};
    BookVerdict v;
    BookstoreStatus st = bookstore_offer(c->store, &e, &v);
    if (st) {
        fprintf(stderr, "\nxqforge run: book: %s\n", bookstore_strerror(st));
        return false;
    }
    return true;
}

/// Commits the units that are next in order, as long as they have arrived.
static void drain(Coord *c)
{
    for (bool found = true; found && !c->failed && !bookstore_full(c->store);) {
        found = false;
        for (size_t i = 0; i < c->pending_n; i++) {
            if (c->pending[i].unit != c->next_commit)
                continue;
            Pending p = c->pending[i];
            c->pending[i] = c->pending[--c->pending_n];
            WireMessage msg;
            char why[256];
            if (wire_unpack(p.data, p.len, &msg, why, sizeof why) == WIRE_OK) {
                for (int k = 0; k < msg.book->candidate_count && !bookstore_full(c->store); k++)
                    if (!commit_candidate(c, &msg.book->candidates[k], p.unit, k))
                        c->failed = true;
            }
            wire_message_destroy(&msg);
            free(p.data);
            c->next_commit++;
            found = true;
            break;
        }
    }
}

static bool pending_add(Coord *c, uint64_t unit, const void *data, size_t len)
{
    if (c->pending_n == c->pending_cap) {
        size_t cap = c->pending_cap ? 2 * c->pending_cap : 64;
        Pending *p = realloc(c->pending, cap * sizeof *p);
        if (!p)
            return false;
        c->pending = p;
        c->pending_cap = cap;
    }
    char *copy = malloc(len);
    if (!copy)
        return false;
    memcpy(copy, data, len);
    c->pending[c->pending_n++] = (Pending){unit, len, copy};
    return true;
}

static int replay_record(void *ctx, uint64_t key, const void *payload, size_t len)
{
    Coord *c = ctx;
    WireMessage msg;
    char why[256];
    if (wire_unpack(payload, len, &msg, why, sizeof why) != WIRE_OK || msg.kind != WIRE_BOOK ||
        msg.book->unit_id != key) {
        fprintf(stderr, "xqforge run: journal record %llu is not a book unit (%s)\n",
                (unsigned long long)key, why);
        wire_message_destroy(&msg);
        return 1;
    }
    wire_message_destroy(&msg);
    if (key < c->book->units_total && schedule_finish(&c->sched, key) &&
        !pending_add(c, key, payload, len))
        return 1;
    return 0;
}

static void inflight_remove(Coord *c, uint64_t unit)
{
    for (size_t i = 0; i < c->inflight_n; i++)
        if (c->inflight[i].unit == unit) {
            c->inflight[i] = c->inflight[--c->inflight_n];
            return;
        }
}

/// Hands out up to n units to rank src; true if any went.
static bool give_units(Coord *c, int src, int n)
{
    WireWork work = {.job_id = c->book->job_id};
    if (c->inflight_n + (size_t)n > c->inflight_cap) {
        size_t cap = (c->inflight_cap + (size_t)n) * 2;
        InFlight *p = realloc(c->inflight, cap * sizeof *p);
        if (!p)
            return false;
        c->inflight = p;
        c->inflight_cap = cap;
    }
    work.pair_count = schedule_take(&c->sched, work.pair_ids, n);
    for (int i = 0; i < work.pair_count; i++)
        c->inflight[c->inflight_n++] = (InFlight){work.pair_ids[i], src};
    if (work.pair_count == 0)
        return false;
    run_send(c->book->link, src, LINK_TAG_WORK, wire_pack_work(&work, &c->buf), &c->buf);
    return true;
}

static void on_request(Coord *c, int src, const WireRequest *req)
{
    if (!c->member[src])
        return;
    if (c->stopping) {
        WireStop stop = {WIRE_STOP_DONE, "book complete"};
        run_send(c->book->link, src, LINK_TAG_STOP, wire_pack_stop(&stop, &c->buf), &c->buf);
        return;
    }
    // None left to hand out now: the rank waits until a departing rank gives some back.
    if (!give_units(c, src, (int)req->pairs))
        c->waiting[src] = req->pairs;
}

static void on_book(Coord *c, int src, const WireBookResult *r)
{
    uint64_t unit = r->unit_id;
    if (r->job_id != c->book->job_id || unit >= c->book->units_total ||
        schedule_is_done(&c->sched, unit)) {
        fprintf(stderr,
                "\nxqforge run: rank %d sent unit %llu again, out of range or of another "
                "job; ignored\n",
                src, (unsigned long long)unit);
        return;
    }
    // Journal first: a unit counts only once it is durable.
    if (wire_pack_book(r, &c->buf) != WIRE_OK ||
        journal_append(c->journal, unit, c->buf.data, c->buf.size) != JOURNAL_OK ||
        !pending_add(c, unit, c->buf.data, c->buf.size)) {
        fprintf(stderr, "\nxqforge run: journal: %s; stopping\n", journal_last_error(c->journal));
        msgpack_sbuffer_clear(&c->buf);
        c->failed = c->stopping = true;
        stop_workers(c, WIRE_STOP_ERROR, "coordinator cannot write its journal");
        return;
    }
    msgpack_sbuffer_clear(&c->buf);
    schedule_finish(&c->sched, unit);
    inflight_remove(c, unit);
    drain(c);
}

static void on_bye(Coord *c, int src)
{
    if (!c->member[src])
        return;
    c->member[src] = 0;
    c->workers_live--;
    c->waiting[src] = 0;
    int released = 0;
    for (size_t i = 0; i < c->inflight_n;) {
        if (c->inflight[i].rank == src && !schedule_is_done(&c->sched, c->inflight[i].unit)) {
            schedule_release(&c->sched, c->inflight[i].unit);
            c->inflight[i] = c->inflight[--c->inflight_n];
            released++;
        } else {
            i++;
        }
    }
    if (!released || c->stopping)
        return;
    printf("\nrank %d left with %d units unfinished: they go to the others\n", src, released);
    for (int r = 0; r < link_size(c->book->link); r++)
        if (c->waiting[r] && give_units(c, r, (int)c->waiting[r]))
            c->waiting[r] = 0;
}

static void progress(Coord *c, bool force)
{
    int64_t now = timeman_now_ms();
    bool tty = isatty(STDOUT_FILENO);
    if (!c->store || (!force && now - c->last_progress_ms < (tty ? 1000 : 10000)))
        return;
    c->last_progress_ms = now;
    bookstore_flush(c->store); // readers of the EPD file see the book grow
    const BookstoreStats *st = bookstore_stats(c->store);
    double mins = (now - c->start_ms) / 60000.0;
    double rate = mins > 0 ? (st->accepted - c->accepted_at_start) / mins : 0;
    double crate = mins > 0 ? (st->candidates - c->candidates_at_start) / mins : 0;
    printf("%s%llu/%d positions, rejected %llu (outside the window), duplicates %llu, %.0f "
           "positions/min, %.0f candidates/min, %d workers%s",
           tty ? "\r" : "", (unsigned long long)st->accepted, c->book->job.book.positions,
           (unsigned long long)st->outside, (unsigned long long)st->duplicates, rate, crate,
           c->workers_live, tty ? "   " : "\n");
    fflush(stdout);
}

static json_t *histogram_json(const uint64_t *bins)
{
    json_t *a = json_array();
    for (int b = 0; b < BOOKSTORE_BINS; b++) {
        if (!bins[b])
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "from", b == 0 ? json_null() : json_integer(bookstore_bin_low(b)));
        json_object_set_new(o, "count", json_integer((json_int_t)bins[b]));
        json_array_append_new(a, o);
    }
    return a;
}

/// The result file: counts, rates, memory and the diversity data, written atomically.
static void write_result(Coord *c, double minutes, bool complete)
{
    const JobConfig *job = &c->book->job;
    if (!job->output.result[0])
        return;
    const BookstoreStats *st = bookstore_stats(c->store);
    json_t *o = json_object(), *ply = json_object(), *first = json_object();
    for (int p = 0; p <= BOOKSTORE_PLY_MAX; p++)
        if (st->per_ply[p]) {
            char k[16];
            snprintf(k, sizeof k, "%d", p);
            json_object_set_new(ply, k, json_integer((json_int_t)st->per_ply[p]));
        }
    for (int m = 0; m < BOOKSTORE_MOVE_NB; m++)
        if (st->first_move[m]) {
            char mv[8];
            bookstore_move_text((uint16_t)m, mv);
            json_object_set_new(first, mv, json_integer((json_int_t)st->first_move[m]));
        }
    json_object_set_new(o, "schema", json_integer(1));
    json_object_set_new(o, "kind", json_string("book"));
    json_object_set_new(o, "job", json_string(job->name));
    json_object_set_new(o, "complete", json_boolean(complete));
    json_object_set_new(o, "target", json_integer(job->book.positions));
    json_object_set_new(o, "accepted", json_integer((json_int_t)st->accepted));
    json_object_set_new(o, "candidates", json_integer((json_int_t)st->candidates));
    json_object_set_new(o, "outside", json_integer((json_int_t)st->outside));
    json_object_set_new(o, "duplicates", json_integer((json_int_t)st->duplicates));
    json_object_set_new(o, "existing", json_integer((json_int_t)st->existing));
    json_object_set_new(o, "units_committed", json_integer((json_int_t)c->next_commit));
    json_object_set_new(o, "minutes", json_real(minutes));
    json_object_set_new(
        o, "positions_per_minute",
        json_real(minutes > 0 ? (st->accepted - c->accepted_at_start) / minutes : 0));
    json_object_set_new(o, "set_bytes", json_integer((json_int_t)bookstore_set_bytes(c->store)));
    json_object_set_new(o, "move_book_bytes",
                        json_integer((json_int_t)bookstore_moves_bytes(c->store)));
    json_object_set_new(o, "per_ply", ply);
    json_object_set_new(o, "first_moves", first);
    json_object_set_new(o, "scores_accepted", histogram_json(st->hist_accepted));
    json_object_set_new(o, "scores_all", histogram_json(st->hist_all));
    json_object_set_new(o, "version", json_string(XQFORGE_VERSION));
    char path[PATH_MAX_LEN], tmp[PATH_MAX_LEN + 8];
    snprintf(path, sizeof path, "%s/%s", c->dir, job->output.result);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (json_dump_file(o, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || rename(tmp, path) != 0)
        fprintf(stderr, "xqforge run: cannot write %s\n", path);
    json_decref(o);
}

/// The positions of an existing book: never emitted again.
static bool exclude_existing(Coord *c)
{
    const char *path = c->book->job.book.existing;
    if (!path[0])
        return true;
    Openings ex;
    char why[512];
    if (openings_load(&ex, path, stderr, why, sizeof why) != OPENINGS_OK) {
        fprintf(stderr, "xqforge run: existing book %s\n", why);
        return false;
    }
    Board *b = malloc(sizeof *b);
    bool ok = b != NULL;
    for (int i = 0; ok && i < ex.count; i++) {
        board_set_fen(b, ex.items[i].fen, NULL, 0);
        for (int k = 0; k < ex.items[i].move_count; k++)
            board_make_move(b, ex.items[i].moves[k]);
        ok = bookstore_exclude(c->store, b->key) == BOOKSTORE_OK;
    }
    free(b);
    openings_free(&ex);
    return ok;
}

/// Opens the book, excludes an existing one, and replays the journal (which rewrites the
/// EPD file from the start: it always ends as a prefix of the final book).
static bool coord_open(Coord *c, bool resume)
{
    const Book *book = c->book;
    const JobConfig *job = &book->job;
    char path[PATH_MAX_LEN], why[512];
    BookstoreConfig cfg = {job->book.positions, job->book.score_min, job->book.score_max,
                           job->book.either_side};
    snprintf(path, sizeof path, "%s/%s", c->dir, job->book.epd);
    if (bookstore_open(&c->store, &cfg, path, job->book.moves[0] != '\0', why, sizeof why)) {
        fprintf(stderr, "xqforge run: %s\n", why);
        return false;
    }
    if (!exclude_existing(c))
        return false;
    snprintf(path, sizeof path, "%s/%s", c->dir, job->output.journal);
    if (resume && access(path, F_OK) != 0) {
        fprintf(stderr, "xqforge run: --resume: no journal at %s\n", path);
        return false;
    }
    JournalReplayStats js;
    char jid[32]; // interim identity: the old fingerprint, until identity_of_job's text
    snprintf(jid, sizeof jid, "fingerprint=%016llx\n", (unsigned long long)book->job_id);
    JournalStatus jst = journal_open(&c->journal, path, &(JournalIdentity){jid, strlen(jid)},
                                     replay_record, c, &js, why, sizeof why);
    if (jst != JOURNAL_OK) {
        fprintf(stderr, "xqforge run: journal %s: %s (%s)\n", path, journal_strerror(jst), why);
        return false;
    }
    drain(c);
    if (!js.created)
        printf("Resuming: %llu units journaled, %llu committed, %llu positions in the book (%llu "
               "torn bytes dropped)\n",
               (unsigned long long)js.records, (unsigned long long)c->next_commit,
               (unsigned long long)bookstore_stats(c->store)->accepted,
               (unsigned long long)js.torn_bytes);
    return !c->failed;
}

static void coord_hello(Coord *c, int src, const WireHello *h)
{
    if (h->bench_signature != c->book->bench_signature) {
        WireRefuse ref;
        snprintf(ref.reason, sizeof ref.reason,
                 "bench signature %llu differs from the coordinator's %llu: rebuild the same "
                 "xqforge everywhere",
                 (unsigned long long)h->bench_signature,
                 (unsigned long long)c->book->bench_signature);
        fprintf(stderr, "\nrank %d (%s) refused: %s\n", src, h->hostname, ref.reason);
        run_send(c->book->link, src, LINK_TAG_STOP, wire_pack_refuse(&ref, &c->buf), &c->buf);
        return;
    }
    c->member[src] = 1;
    c->workers_live++;
    printf("rank %d on %s joined: %u generator threads, bench %llu nodes/s\n", src, h->hostname,
           h->concurrency, (unsigned long long)h->bench_nps);
}

/// Stops the workers once the book is complete, or every unit is used up.
static void check_done(Coord *c)
{
    if (c->stopping || !c->store)
        return;
    if (bookstore_full(c->store)) {
        c->stopping = true;
        stop_workers(c, WIRE_STOP_DONE, "book complete");
    } else if (c->next_commit == c->book->units_total) {
        c->stopping = true;
        printf("\nmax_candidates reached: the book has fewer positions than asked (widen the "
               "window or raise max_candidates)\n");
        stop_workers(c, WIRE_STOP_DONE, "all units generated");
    }
}

/// The coordinator's loop: admissions, requests and units until every worker said BYE.
static void coord_loop(Coord *c)
{
    Link *l = c->book->link;
    int expected = link_size(l) == 1 ? 1 : link_size(l) - 1, byes = 0;
    while (byes < expected) {
        if (atomic_load(&interrupted) && !c->stopping) {
            c->stopping = true;
            printf("\nInterrupted: stopping; the journal keeps every unit received\n");
            stop_workers(c, WIRE_STOP_INTERRUPTED, "interrupted");
        }
        int src;
        WireMessage msg;
        if (!run_receive(l, LINK_TAG_RESULT, LINK_TAG_CONTROL, &src, &msg)) {
            progress(c, false);
            sleep_ms(POLL_MS);
            continue;
        }
        switch (msg.kind) {
        case WIRE_HELLO: coord_hello(c, src, &msg.hello); break;
        case WIRE_REQUEST: on_request(c, src, &msg.request); break;
        case WIRE_BOOK:
            if (!c->stopping)
                on_book(c, src, msg.book);
            break;
        case WIRE_BYE:
            byes++;
            on_bye(c, src);
            break;
        default:
            fprintf(stderr, "\nxqforge run: unexpected %s from rank %d\n", wire_kind_name(msg.kind),
                    src);
        }
        wire_message_destroy(&msg);
        check_done(c);
    }
}

/// Writes the move book, the report files and the summary.
static void coord_finish(Coord *c)
{
    const JobConfig *job = &c->book->job;
    char path[PATH_MAX_LEN], why[512];
    progress(c, true);
    printf("\n");
    snprintf(path, sizeof path, "%s/%s", c->dir, job->book.moves);
    if (bookstore_finish(c->store, job->book.moves[0] ? path : NULL, why, sizeof why)) {
        fprintf(stderr, "xqforge run: %s\n", why);
        c->failed = true;
    }
    if (job->book.html[0]) {
        snprintf(path, sizeof path, "%s/%s", c->dir, job->book.html);
        if (bookstore_write_html(c->store, path, job->name[0] ? job->name : "book"))
            fprintf(stderr, "xqforge run: cannot write %s\n", path);
    }
    bookstore_report(c->store, stdout);
    const BookstoreStats *st = bookstore_stats(c->store);
    size_t keys = (size_t)(st->accepted + st->existing);
    printf("Dedup set: %zu bytes for %zu keys (%.1f bytes/position); move book in memory: %zu "
           "bytes\n",
           bookstore_set_bytes(c->store), keys,
           keys ? (double)bookstore_set_bytes(c->store) / (double)keys : 0.0,
           bookstore_moves_bytes(c->store));
    double minutes = (timeman_now_ms() - c->start_ms) / 60000.0;
    printf("%llu positions in %.2f min: %.0f positions/min\n",
           (unsigned long long)(st->accepted - c->accepted_at_start), minutes,
           minutes > 0 ? (st->accepted - c->accepted_at_start) / minutes : 0.0);
    write_result(c, minutes, bookstore_full(c->store));
}

static int coordinator_main(Book *book, const char *dir, bool resume)
{
    Coord *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    c->book = book;
    c->dir = dir;
    msgpack_sbuffer_init(&c->buf);
    int rc = 1;
    c->member = calloc((size_t)link_size(book->link), 1);
    c->waiting = calloc((size_t)link_size(book->link), sizeof *c->waiting);
    if (!c->member || !c->waiting || schedule_init(&c->sched, book->units_total) != 0 ||
        !coord_open(c, resume)) {
        c->stopping = true;
        stop_workers(c, WIRE_STOP_ERROR, "the coordinator could not start");
        coord_loop(c); // every worker still says BYE
        goto out;
    }
    const BookstoreStats *st = bookstore_stats(c->store);
    c->accepted_at_start = st->accepted;
    c->candidates_at_start = st->candidates;
    c->start_ms = timeman_now_ms();
    printf("Job %s: a book of %d positions, window %d..%d cp%s, plies %d..%d, %llu units of %d "
           "candidates at most, %d worker rank%s\n",
           book->job.name, book->job.book.positions, book->job.book.score_min,
           book->job.book.score_max, book->job.book.either_side ? " (either side)" : "",
           book->job.book.plies_min, book->job.book.plies_max,
           (unsigned long long)book->units_total, book->gen.unit,
           link_size(book->link) == 1 ? 1 : link_size(book->link) - 1,
           link_size(book->link) <= 2 ? "" : "s");
    check_done(c);
    coord_loop(c);
    coord_finish(c);
    rc = c->failed ? 1 : atomic_load(&interrupted) ? 130 : 0;
out:
    for (size_t i = 0; i < c->pending_n; i++)
        free(c->pending[i].data);
    free(c->pending);
    free(c->inflight);
    journal_close(c->journal);
    bookstore_close(c->store);
    schedule_destroy(&c->sched);
    msgpack_sbuffer_destroy(&c->buf);
    free(c->member);
    free(c->waiting);
    free(c);
    return rc;
}

// ---------------------------------------------------------------------------------------
// The job

/// Loads the job and the seed book (bad lines reported on rank 0 with their line numbers),
/// and runs the bench that proves every rank searches alike.
static int prepare(Book *book, const char *path, char **sets, int n_sets, bool warn, char *why,
                   size_t why_len)
{
    if (job_load(path, (const char *const *)sets, n_sets, &book->job, why, why_len) != JOB_OK)
        return 2;
    const JobConfig *job = &book->job;
    if (job->book.seed_book[0] && openings_load(&book->seeds, job->book.seed_book,
                                                warn ? stderr : NULL, why, why_len) != OPENINGS_OK)
        return 2;
    book->gen = (BookgenConfig){job->book.plies_min,    job->book.plies_max, job->book.multipv,
                                job->book.select_depth, job->book.margin,    job->book.temperature,
                                job->book.verify_depth, job->book.hash_mb,   job->book.unit,
                                job->book.seed,         job->rules.set,      &book->seeds};
    int64_t max =
        job->book.max_candidates ? job->book.max_candidates : 100 * (int64_t)job->book.positions;
    book->units_total = (uint64_t)((max + job->book.unit - 1) / job->book.unit);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    book->concurrency = job->concurrency > 0 ? job->concurrency : (int)(cores > 0 ? cores : 1);
    book->job_id = run_fingerprint(path, sets, n_sets);
    if (!run_bench(&book->bench_signature, &book->bench_nps)) {
        snprintf(why, why_len, "cannot run the bench");
        return 1;
    }
    return 0;
}

bool book_job_is(const char *path, char **sets, int n_sets)
{
    return run_job_is(path, sets, n_sets, JOB_BOOK);
}

int book_run(int *argc, char ***argv, const char *path, char **sets, int n_sets, bool resume)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    Book *book = calloc(1, sizeof *book);
    if (!book)
        return 1;
    char why[1024];
    Link *link;
    if (link_init(argc, argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge run: MPI: %s\n", why);
        free(book);
        return 1;
    }
    book->link = link;
    int rank = link_rank(link);
    int rc = prepare(book, path, sets, n_sets, rank == 0, why, sizeof why);
    const char *dir = book->job.output.dir[0] ? book->job.output.dir : ".";
    if (rc == 0 && rank == 0 && run_make_dirs(dir) != 0) {
        snprintf(why, sizeof why, "cannot create %.900s: %s", dir, strerror(errno));
        rc = 1;
    }
    if (rc != 0 && rank == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    if (!link_all_ok(link, rc == 0)) {
        rc = rc ? rc : 1; // another rank failed and said why
    } else {
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        if (rank != 0) {
            rc = worker_main(book);
        } else {
            pthread_t local;
            bool started =
                link_size(link) == 1 && pthread_create(&local, NULL, local_worker, book) == 0;
            if (link_size(link) == 1 && !started) {
                fprintf(stderr, "xqforge run: cannot start the local worker\n");
                rc = 1;
            } else {
                rc = coordinator_main(book, dir, resume);
            }
            if (started)
                pthread_join(local, NULL);
        }
    }
    openings_free(&book->seeds);
    link_finalize(link);
    free(book);
    return rc;
}

// ---------------------------------------------------------------------------------------
// xqforge book probe FEN

static void book_usage(FILE *out)
{
    fprintf(out, "usage: xqforge book probe [--book FILE] FEN|startpos [moves m1 m2 ...]\n\n"
                 "Lists the moves a weighted move book (.xqb, written by a kind = book job)\n"
                 "holds for a position: how many book lines played each, and its mean score\n"
                 "(centipawns, mover's view). FILE defaults to book.xqb.\n");
}

int cmd_book(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        book_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "probe") != 0) {
        fprintf(stderr, "xqforge book: unknown subcommand '%s'\n", argv[1]);
        book_usage(stderr);
        return EXIT_USAGE;
    }
    const char *file = "book.xqb";
    char line[OPENINGS_LINE_MAX] = "";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--book") && i + 1 < argc) {
            file = argv[++i];
            continue;
        }
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, "%s%s", n ? " " : "", argv[i]);
    }
    Opening op;
    char why[256];
    if (!line[0] || !openings_parse_line(line, &op, why, sizeof why)) {
        fprintf(stderr, "xqforge book probe: %s\n", line[0] ? why : "no position given");
        return EXIT_USAGE;
    }
    Board *b = malloc(sizeof *b);
    MovebookEntry *e = NULL;
    size_t n = 0, first = 0;
    if (!b)
        return 1;
    board_set_fen(b, op.fen, NULL, 0);
    for (int i = 0; i < op.move_count; i++)
        board_make_move(b, op.moves[i]);
    uint64_t key = b->key;
    free(b);
    if (movebook_read(file, &e, &n, why, sizeof why) != MOVEBOOK_OK) {
        fprintf(stderr, "xqforge book probe: %s\n", why);
        return 1;
    }
    size_t k = movebook_probe(e, n, key, &first);
    uint64_t total = 0;
    for (size_t i = first; i < first + k; i++)
        total += e[i].count;
    printf("key %016llx: %zu move%s, %llu line%s\n", (unsigned long long)key, k, k == 1 ? "" : "s",
           (unsigned long long)total, total == 1 ? "" : "s");
    for (size_t i = first; i < first + k; i++) {
        char mv[MOVE_TEXT_MAX];
        move_text(e[i].move, 0, mv);
        printf("  %-6s count %8u  %5.1f%%  score %+d\n", mv, e[i].count,
               100.0 * e[i].count / (double)total, e[i].score);
    }
    free(e);
    return 0;
}
