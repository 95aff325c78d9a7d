// SPDX-License-Identifier: MIT
#include "work_doe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bookgen.h"
#include "movegen.h"
#include "timeman.h"
#include "work_book.h"

// The rank's state is a book worker's (its totals count scored children as candidates).
typedef struct {
    BookWorker *dw;
    Bookgen *g;
    WireBookResult *res;
    Board *board;
} DoeThread;

static void doe_thread_free(void *arg)
{
    DoeThread *t = arg;
    bookgen_free(t->g);
    wire_book_result_free(t->res);
    free(t->board);
    free(t);
}

static void *doe_thread_new(void *ctx, char *why, size_t why_len)
{
    DoeThread *t = calloc(1, sizeof *t);
    BookgenStatus st = BOOKGEN_ERR_NOMEM;
    if (t) {
        t->dw = ctx;
        t->res = wire_book_result_new();
        t->board = malloc(sizeof *t->board);
        st = t->res && t->board ? bookgen_new(t->dw->gen, &t->g) : BOOKGEN_ERR_NOMEM;
    }
    if (st == BOOKGEN_OK)
        return t;
    snprintf(why, why_len, "doe search: %s", bookgen_strerror(st));
    if (t)
        doe_thread_free(t);
    return NULL;
}

static WorkerUnitStatus doe_unit_run(void *arg, const WireWork *work, uint64_t unit,
                                     const atomic_bool *abort, msgpack_sbuffer *out, char *why,
                                     size_t why_len)
{
    DoeThread *t = arg;
    int idx = -1;
    for (int i = 0; i < work->fen_count && idx < 0; i++)
        if (work->unit_ids[i] == unit)
            idx = i;
    // The coordinator sends a leaf with every unit of a DOE job; a WORK without is not ours.
    if (idx < 0 || board_set_fen(t->board, work->fen[idx], why, why_len) != FEN_OK) {
        if (idx < 0)
            snprintf(why, why_len, "unit %llu came without its position", (unsigned long long)unit);
        return WORKER_UNIT_FAILED;
    }
    int64_t t0 = timeman_now_ms();
    MoveList list;
    int n = movegen_legal(t->board, &list);
    WireBookResult *res = t->res;
    res->job_id = work->job_id;
    res->rank = t->dw->rank;
    res->unit_id = unit;
    res->candidate_count = 0;
    uint64_t nodes = 0;
    for (int i = 0; i < n && i < WIRE_MAX_BOOK_CANDS; i++) {
        if (atomic_load(abort))
            return WORKER_UNIT_ABORTED;
        Move m = list.moves[i];
        char fen[BOARD_FEN_MAX];
        board_make_move(t->board, m);
        board_fen(t->board, fen, sizeof fen);
        board_unmake_move(t->board);
        int red = 0;
        BookgenStatus st = bookgen_verify(t->g, fen, &red, &nodes);
        if (st != BOOKGEN_OK) {
            snprintf(why, why_len, "doe search: %s", bookgen_strerror(st));
            return WORKER_UNIT_FAILED;
        }
        WireBookCandidate *k = &res->candidates[res->candidate_count++];
        snprintf(k->start_fen, sizeof k->start_fen, "%.*s", WIRE_MAX_FEN, work->fen[idx]);
        k->path_len = 1;
        k->path[0] = (WireBookMove){m, t->board->side == RED ? red : -red};
        k->score = red;
    }
    return book_worker_send(t->dw, res, nodes, t0, out, why, why_len) ? WORKER_UNIT_OK
                                                                      : WORKER_UNIT_FAILED;
}

static void *doe_plan_new(const JobConfig *job, FILE *warn, char *why, size_t why_len)
{
    (void)warn;
    BookgenConfig *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    // Only the verification search is used: its depth, hash and the job's rules; the
    // sampling settings are set to values the generator accepts.
    *g = (BookgenConfig){.plies_min = 0,
                         .plies_max = 0,
                         .multipv = 1,
                         .select_depth = 1,
                         .verify_depth = job->doe.depth,
                         .hash_mb = job->doe.hash_mb,
                         .unit = 1,
                         .seed = 1,
                         .rules = job->rules.set};
    return g;
}

static void doe_plan_free(void *plan) { free(plan); }

static void *doe_kind_new(const WorkerSetup *s, WorkerKind *out)
{
    BookWorker *dw = calloc(1, sizeof *dw);
    if (!dw)
        return NULL;
    book_worker_init(dw, s->plan, s->rank);
    *out = (WorkerKind){.ctx = dw,
                        .thread_new = doe_thread_new,
                        .thread_free = doe_thread_free,
                        .unit_run = doe_unit_run,
                        .done_count = book_worker_done};
    return dw;
}

static void doe_kind_free(void *arg)
{
    if (arg)
        book_worker_destroy(arg);
    free(arg);
}

const WorkerKindDef work_doe_def = {.plan_new = doe_plan_new,
                                    .plan_free = doe_plan_free,
                                    .kind_new = doe_kind_new,
                                    .kind_free = doe_kind_free};
