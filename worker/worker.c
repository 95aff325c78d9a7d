// SPDX-License-Identifier: MIT
// A worker rank's protocol loop for every job kind: the communication thread (the caller's)
// and the work threads. The protocol and its invariants (a WORK after a STOP is dropped; STOP
// done finishes the queued units, interrupted abandons them) are stated in worker.h.
#include "worker.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The most work threads one rank starts (their ids live on worker_run's stack).
enum { THREADS_MAX = 256 };

/// A WORK shared by its queued units; freed by the last of them.
typedef struct {
    WireWork work;
    int refs;
} SharedWork;

/// A finished unit's packed message, waiting for the communication thread.
typedef struct Packet {
    struct Packet *next;
    size_t len;
    char data[];
} Packet;

typedef struct {
    const WorkerKind *kind;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t *queue;    // [queue_cap]: the comm loop never asks for more than fits
    SharedWork **qwork; // the WORK of each queued unit
    int qlen, queue_cap, busy;
    bool requested, no_more_work, failed;
    atomic_bool abort;
    Packet *out_head, *out_tail; // finished units, oldest first
    char error[WIRE_MAX_TEXT + 1];
} Worker;

/// Under the lock: the queue and the work threads share refs.
static void work_unref(SharedWork *s)
{
    if (s && --s->refs == 0)
        free(s);
}

/// Drops the queued units (the coordinator gives them to others). Under the lock.
static void queue_clear(Worker *w)
{
    for (int i = 0; i < w->qlen; i++)
        work_unref(w->qwork[i]);
    w->qlen = 0;
}

/// Records the first failure (its reason goes into BYE) and wakes every thread; the comm
/// loop ends at its next turn, and worker_run then stops the rest.
static void worker_fail(Worker *w, const char *why)
{
    pthread_mutex_lock(&w->lock);
    if (!w->failed)
        snprintf(w->error, sizeof w->error, "%.*s", WIRE_MAX_TEXT, why);
    w->failed = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/// Queues a finished unit's message for the communication thread: the work threads never
/// touch the channel. false when out of memory.
static bool post(Worker *w, const msgpack_sbuffer *buf)
{
    Packet *p = malloc(sizeof *p + buf->size);
    if (!p)
        return false;
    p->next = NULL;
    p->len = buf->size;
    memcpy(p->data, buf->data, buf->size);
    pthread_mutex_lock(&w->lock);
    if (w->out_tail)
        w->out_tail->next = p;
    else
        w->out_head = p;
    w->out_tail = p;
    pthread_mutex_unlock(&w->lock);
    return true;
}

/// A work thread: its own kind state (its engines), then queued units oldest first until no
/// more work comes or abort rises. A failed unit ends the thread and fails the worker.
static void *work_thread(void *arg)
{
    Worker *w = arg;
    char why[WIRE_MAX_TEXT + 1] = "";
    void *t = w->kind->thread_new(w->kind->ctx, why, sizeof why);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    WorkerUnitStatus st = t ? WORKER_UNIT_OK : WORKER_UNIT_FAILED;
    while (st == WORKER_UNIT_OK) {
        pthread_mutex_lock(&w->lock);
        while (w->qlen == 0 && !w->no_more_work && !atomic_load(&w->abort))
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->qlen == 0 || atomic_load(&w->abort)) {
            pthread_mutex_unlock(&w->lock);
            break;
        }
        uint64_t unit = w->queue[0];
        SharedWork *sw = w->qwork[0];
        w->qlen--;
        memmove(w->queue, w->queue + 1, sizeof *w->queue * (size_t)w->qlen);
        memmove(w->qwork, w->qwork + 1, sizeof *w->qwork * (size_t)w->qlen);
        // The unit stays counted busy until its packet is posted (post comes before busy--), so
        // the comm loop never sees no unit queued, none busy and no packet while a result is due.
        w->busy++;
        pthread_mutex_unlock(&w->lock);

        msgpack_sbuffer_clear(&buf);
        // Without the lock: a unit takes seconds to minutes, and the comm loop must keep polling.
        st = w->kind->unit_run(t, &sw->work, unit, &w->abort, &buf, why, sizeof why);
        if (st == WORKER_UNIT_OK && !post(w, &buf)) {
            snprintf(why, sizeof why, "out of memory");
            st = WORKER_UNIT_FAILED;
        }
        pthread_mutex_lock(&w->lock);
        work_unref(sw);
        w->busy--;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
    if (st == WORKER_UNIT_FAILED)
        worker_fail(w, why[0] ? why : "a work thread failed");
    msgpack_sbuffer_destroy(&buf);
    if (t)
        w->kind->thread_free(t);
    return NULL;
}

/// Applies one message of the coordinator. Under the lock.
static void on_message(Worker *w, const WireMessage *msg, int rank)
{
    if (msg->kind == WIRE_WORK && (w->no_more_work || atomic_load(&w->abort))) {
        // After a STOP (the coordinator sends none; WORK and STOP share a tag): dropped.
    } else if (msg->kind == WIRE_WORK) {
        SharedWork *sw = malloc(sizeof *sw);
        if (!sw) {
            w->failed = true;
            snprintf(w->error, sizeof w->error, "out of memory for a WORK");
            return;
        }
        *sw = (SharedWork){msg->work, 0};
        // comm_loop asks for no more than fits; a unit beyond it would go back at BYE.
        for (int i = 0; i < msg->work.unit_count && w->qlen < w->queue_cap; i++) {
            sw->refs++;
            w->qwork[w->qlen] = sw;
            w->queue[w->qlen++] = msg->work.unit_ids[i];
        }
        if (sw->refs == 0)
            free(sw);
        w->requested = false;
        // "done": the queue is played out. Otherwise abort rises (a running unit stops at once)
        // and the queue is dropped; the coordinator does not count those units.
    } else if (msg->kind == WIRE_STOP) {
        w->no_more_work = true;
        if (msg->stop.code != WIRE_STOP_DONE) {
            atomic_store(&w->abort, true);
            queue_clear(w);
        }
    } else if (msg->kind == WIRE_REFUSE) {
        // Not a failure of the job (it goes on without this rank): exit 0, or mpirun would
        // end every rank.
        fprintf(stderr, "rank %d refused: %s\n", rank, msg->refuse.reason);
        w->no_more_work = true;
        atomic_store(&w->abort, true);
        queue_clear(w);
    }
}

/// Sends the finished units, oldest first; false if the channel failed.
static bool send_packets(Channel *ch, Packet *p)
{
    bool ok = true;
    while (p) {
        Packet *next = p->next;
        // After a failed send the rest are only freed: the worker fails, its units go back.
        ok = ok && ch->ops->send(ch->impl, 0, LINK_TAG_RESULT, p->data, p->len) == LINK_OK;
        free(p);
        p = next;
    }
    return ok;
}

/// The communication loop: requests, sends results, applies WORK and STOP. Returns 1 when
/// the worker failed (w->error says why), else 0.
static int comm_loop(Worker *w, Channel *ch, int threads, msgpack_sbuffer *buf)
{
    for (;;) {
        // One REQUEST at a time: the next goes out only once a WORK answered it (requested), so
        // the coordinator's record of what this rank waits for is one request's.
        WireRequest req = {(uint32_t)ch->rank, 0};
        pthread_mutex_lock(&w->lock);
        // Two units per thread in flight, and never more than the queue holds.
        int room = 2 * threads - w->qlen - w->busy;
        if (room > w->queue_cap - w->qlen)
            room = w->queue_cap - w->qlen;
        if (!w->requested && !w->no_more_work && !w->failed && room > 0) {
            req.units = (uint32_t)(room < WIRE_MAX_PAIRS_PER_WORK ? room : WIRE_MAX_PAIRS_PER_WORK);
            w->requested = true;
        }
        Packet *out = w->out_head;
        w->out_head = w->out_tail = NULL;
        // Finished only with nothing queued, running or unsent: after STOP "done" every unit in
        // hand reaches the coordinator before BYE.
        bool finished = w->no_more_work && w->busy == 0 && w->qlen == 0 && !out;
        bool failed = w->failed;
        pthread_mutex_unlock(&w->lock);
        if (!send_packets(ch, out) ||
            (req.units &&
             !channel_send(ch, 0, LINK_TAG_CONTROL, wire_pack_request(&req, buf), buf))) {
            worker_fail(w, "cannot reach the coordinator");
            return 1;
        }
        if (failed)
            return 1;
        if (finished)
            return 0;
        WireMessage msg;
        int src;
        if (!channel_receive(ch, LINK_TAG_ORDER, LINK_TAG_ORDER, &src, &msg, NULL)) {
            // Nothing from the coordinator: a 2 ms nap keeps the comm thread off the cores the work
            // threads use, and delays a busy rank's next order very little.
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        pthread_mutex_lock(&w->lock);
        on_message(w, &msg, ch->rank);
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        wire_message_destroy(&msg);
    }
}

int worker_run(const WorkerConfig *cfg, const WorkerKind *kind)
{
    Channel *ch = cfg->ch;
    Worker *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "rank %d: out of memory\n", ch->rank);
        return 1;
    }
    w->kind = kind;
    // Room for what comm_loop asks (two units per thread) plus one WORK's most, so on_message
    // never has to drop a unit.
    w->queue_cap = 2 * (cfg->threads > 0 ? cfg->threads : 1) + WIRE_MAX_PAIRS_PER_WORK;
    w->queue = malloc(sizeof *w->queue * (size_t)w->queue_cap);
    w->qwork = malloc(sizeof *w->qwork * (size_t)w->queue_cap);
    if (!w->queue || !w->qwork) {
        free(w->queue);
        free(w->qwork);
        free(w);
        fprintf(stderr, "rank %d: out of memory\n", ch->rank);
        return 1;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    WireHello hello = {(uint32_t)ch->rank,
                       "",
                       1,
                       (uint32_t)(cfg->threads > 0 ? cfg->threads : 1),
                       cfg->bench_signature,
                       cfg->bench_nps,
                       "",
                       0,
                       {0}};
    snprintf(hello.hostname, sizeof hello.hostname, "%s", ch->host[0] ? ch->host : "?");
    snprintf(hello.version, sizeof hello.version, "%.*s", WIRE_MAX_VERSION_TEXT, cfg->version);
    for (int i = 0; cfg->engine_bench && i < cfg->engine_count && i < WIRE_MAX_ENGINES; i++)
        hello.engine_bench[hello.engine_count++] = cfg->engine_bench[i];
    int rc = 0;
    pthread_t tid[THREADS_MAX];
    int threads = 0;
    if (!channel_send(ch, 0, LINK_TAG_CONTROL, wire_pack_hello(&hello, &buf), &buf)) {
        fprintf(stderr, "rank %d: cannot reach the coordinator\n", ch->rank);
        rc = 1;
    } else {
        for (; threads < cfg->threads && threads < THREADS_MAX; threads++)
            if (pthread_create(&tid[threads], NULL, work_thread, w) != 0)
                break;
        if (threads == 0)
            worker_fail(w, "cannot start a work thread");
        rc = comm_loop(w, ch, threads, &buf);
    }
    // However the loop ended, the work threads stop and are joined before BYE: after BYE the
    // coordinator counts nothing from this rank.
    pthread_mutex_lock(&w->lock);
    w->no_more_work = true;
    atomic_store(&w->abort, true);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_lock(&w->lock);
    queue_clear(w);
    Packet *left = w->out_head;
    w->out_head = w->out_tail = NULL;
    bool failed = w->failed;
    pthread_mutex_unlock(&w->lock);
    // Units finished while the others stopped are still results: the coordinator decides.
    // Sent before BYE under the result tag: the coordinator takes them first (on_bye).
    send_packets(ch, left);
    WireBye bye = {(uint32_t)ch->rank, kind->done_count ? kind->done_count(kind->ctx) : 0, ""};
    if (failed) {
        snprintf(bye.error, sizeof bye.error, "%s", w->error);
        rc = 1;
    }
    // The coordinator prints the reason it receives; this rank says it only when it cannot.
    if (!channel_send(ch, 0, LINK_TAG_CONTROL, wire_pack_bye(&bye, &buf), &buf) && failed)
        fprintf(stderr, "rank %d: %s\n", ch->rank, w->error);
    msgpack_sbuffer_destroy(&buf);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w->queue);
    free(w->qwork);
    free(w);
    return rc;
}
