// SPDX-License-Identifier: MIT
#include "work_book.h"

#include <stdio.h>
#include <stdlib.h>

#include "timeman.h"
#include "wdl.h"

/// One work thread's generator and scratch: a unit's candidates are built here and packed.
typedef struct {
    BookWorker *bw;
    Bookgen *g;
    BookgenCandidate *cands;
    WireBookResult *res;
} BookThread;

static void book_thread_free(void *arg)
{
    BookThread *t = arg;
    bookgen_free(t->g);
    free(t->cands);
    wire_book_result_free(t->res);
    free(t);
}

static void *book_thread_new(void *ctx, char *why, size_t why_len)
{
    BookWorker *bw = ctx;
    BookThread *t = calloc(1, sizeof *t);
    // A generator per thread (its own hash and search); a failure to make it ends the worker
    // (worker.h: a failing work thread).
    BookgenStatus st = BOOKGEN_ERR_NOMEM;
    if (t) {
        t->bw = bw;
        t->cands = malloc(sizeof *t->cands * (size_t)bw->gen->unit);
        t->res = wire_book_result_new();
        st = t->cands && t->res ? bookgen_new(bw->gen, &t->g) : BOOKGEN_ERR_NOMEM;
    }
    if (st == BOOKGEN_OK)
        return t;
    snprintf(why, why_len, "book generator: %s", bookgen_strerror(st));
    if (t)
        book_thread_free(t);
    return NULL;
}

static WorkerUnitStatus book_unit_run(void *arg, const WireWork *work, uint64_t unit,
                                      const atomic_bool *abort, msgpack_sbuffer *out, char *why,
                                      size_t why_len)
{
    BookThread *t = arg;
    BookWorker *bw = t->bw;
    int64_t t0 = timeman_now_ms();
    uint64_t nodes = 0;
    // The job's settings, its seed and the unit id fix the candidates (bookgen.h), so a unit
    // redone on another rank, or after a resume, gives the same ones.
    BookgenStatus st = bookgen_unit(t->g, unit, abort, t->cands, &nodes);
    if (st == BOOKGEN_ABORTED)
        return WORKER_UNIT_ABORTED;
    if (st != BOOKGEN_OK) {
        snprintf(why, why_len, "book generator: %s", bookgen_strerror(st));
        return WORKER_UNIT_FAILED;
    }
    WireBookResult *res = t->res;
    int n = bw->gen->unit;
    res->job_id = work->job_id;
    res->rank = bw->rank;
    res->unit_id = unit;
    res->candidate_count = n;
    for (int i = 0; i < n; i++) {
        WireBookCandidate *k = &res->candidates[i];
        const BookgenCandidate *c = &t->cands[i];
        snprintf(k->start_fen, sizeof k->start_fen, "%.*s", WIRE_MAX_FEN, c->start_fen);
        k->path_len = c->path_len;
        for (int p = 0; p < c->path_len; p++)
            k->path[p] = (WireBookMove){c->path[p], c->path_scores[p]};
        k->score = c->score;
    }
    return book_worker_send(bw, res, nodes, t0, out, why, why_len) ? WORKER_UNIT_OK
                                                                   : WORKER_UNIT_FAILED;
}

bool book_worker_send(BookWorker *bw, WireBookResult *res, uint64_t nodes, int64_t t0,
                      msgpack_sbuffer *out, char *why, size_t why_len)
{
    int64_t ms = timeman_now_ms() - t0;
    // Running totals since HELLO (wire.h), shared by the rank's threads: any one message
    // carries the rank's whole figures.
    pthread_mutex_lock(&bw->lock);
    bw->candidates += (uint64_t)res->candidate_count;
    bw->nodes += nodes;
    bw->busy_ms += (uint64_t)(ms > 0 ? ms : 0);
    res->candidates_done = bw->candidates;
    res->nodes = bw->nodes;
    res->busy_ms = bw->busy_ms;
    pthread_mutex_unlock(&bw->lock);
    WireStatus ws = wire_pack_book(res, out);
    if (ws != WIRE_OK)
        snprintf(why, why_len, "cannot pack unit %llu: %s", (unsigned long long)res->unit_id,
                 wire_strerror(ws));
    return ws == WIRE_OK;
}

uint64_t book_worker_done(void *ctx)
{
    BookWorker *bw = ctx;
    pthread_mutex_lock(&bw->lock);
    uint64_t n = bw->candidates;
    pthread_mutex_unlock(&bw->lock);
    return n;
}

void book_worker_init(BookWorker *bw, const BookgenConfig *gen, uint32_t rank)
{
    bw->gen = gen;
    bw->rank = rank;
    bw->candidates = bw->nodes = bw->busy_ms = 0;
    pthread_mutex_init(&bw->lock, NULL);
}

void book_worker_kind(BookWorker *bw, const BookgenConfig *gen, uint32_t rank, WorkerKind *out)
{
    book_worker_init(bw, gen, rank);
    *out = (WorkerKind){.ctx = bw,
                        .thread_new = book_thread_new,
                        .thread_free = book_thread_free,
                        .unit_run = book_unit_run,
                        .done_count = book_worker_done};
}

void book_worker_destroy(BookWorker *bw) { pthread_mutex_destroy(&bw->lock); }

/// A book job's plan: the generator's settings, first so that rank 0 reads them as a
/// BookgenConfig, and the seed positions they point to.
typedef struct {
    BookgenConfig gen;
    Openings seeds;
    // The early abort: the model, and the draw rates outside which a verification gives up.
    WdlModel wdl;
    double abort_lo, abort_hi;
} BookPlan;

/// Gives up on a position whose model draw rate is abort_margin outside the window.
static bool book_abort(void *ctx, const Board *b, int score)
{
    const BookPlan *p = ctx;
    double d = wdl_draw_rate(&p->wdl, score, wdl_material(b));
    return d < p->abort_lo || d > p->abort_hi;
}

static void book_plan_free(void *arg)
{
    BookPlan *p = arg;
    if (p)
        openings_free(&p->seeds);
    free(p);
}

static void *book_plan_new(const JobConfig *job, FILE *warn, char *why, size_t why_len)
{
    BookPlan *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    // No seed book: the seeds stay empty and the generator starts from the initial position.
    const __typeof__(job->book) *b = &job->book;
    if (b->seed_book[0] &&
        openings_load(&p->seeds, b->seed_book, warn, why, why_len) != OPENINGS_OK) {
        book_plan_free(p);
        return NULL;
    }
    // The settings point into the plan (seeds): the plan outlives every thread's generator.
    p->gen = (BookgenConfig){.plies_min = b->plies_min,
                             .plies_max = b->plies_max,
                             .multipv = b->multipv,
                             .select_depth = b->select_depth,
                             .margin = b->margin,
                             .temperature = b->temperature,
                             .verify_depth = b->verify_depth,
                             .hash_mb = b->hash_mb,
                             .unit = b->unit,
                             .seed = b->seed,
                             .rules = job->rules.set,
                             .starts = &p->seeds};
    // Every rank reads the model (as the seed book): it must be on every node.
    if (b->abort_margin > 0 && b->wdl_model[0]) {
        char wwhy[600];
        if (wdl_load(&p->wdl, b->wdl_model, wwhy, sizeof wwhy)) {
            snprintf(why, why_len, "book.wdl_model: %s", wwhy);
            book_plan_free(p);
            return NULL;
        }
        p->abort_lo = b->draw_min - b->abort_margin;
        p->abort_hi = b->draw_max + b->abort_margin;
        p->gen.abort = book_abort;
        p->gen.abort_ctx = p;
        p->gen.abort_depth = b->abort_depth;
    }
    return p;
}

static void *book_kind_new(const WorkerSetup *s, WorkerKind *out)
{
    BookWorker *bw = calloc(1, sizeof *bw);
    if (bw)
        book_worker_kind(bw, s->plan, s->rank, out);
    return bw;
}

static void book_kind_free(void *bw)
{
    if (bw)
        book_worker_destroy(bw);
    free(bw);
}

const WorkerKindDef work_book_def = {.plan_new = book_plan_new,
                                     .plan_free = book_plan_free,
                                     .kind_new = book_kind_new,
                                     .kind_free = book_kind_free};
