// SPDX-License-Identifier: MIT
#include "coord_job.h"

#include <stdio.h>

#include "books.h"
#include "coordinator.h"
#include "datagen.h"
#include "games.h"

enum { POLL_MS = 20 };

/// Opens the journal (its replay counts into the kind), then runs the loop. false with why
/// when the journal cannot be used.
static bool open_and_run(Coordinator *c, const CoordJob *cj, char *why, size_t why_len,
                         bool (*start)(void *, const CoordState *, const char *, char *, size_t),
                         void *kctx)
{
    JournalReplayStats js;
    if (!coord_open_journal(c, cj->journal_path, &cj->identity, &js, why, why_len))
        return false;
    if (!js.created)
        printf("Resuming run %s: %llu units already done (%llu duplicate records, %llu torn "
               "bytes dropped)\n",
               coord_run_id(c), (unsigned long long)coord_state(c)->units_done,
               (unsigned long long)js.duplicates, (unsigned long long)js.torn_bytes);
    if (!start(kctx, coord_state(c), coord_run_id(c), why, why_len))
        return false;
    coord_run(c);
    return true;
}

static bool games_start(void *g, const CoordState *st, const char *id, char *why, size_t len)
{
    return games_coord_start(g, st, id, why, len);
}

static bool books_start(void *b, const CoordState *st, const char *id, char *why, size_t len)
{
    return books_coord_start(b, st, id, why, len);
}

static bool datagen_start(void *d, const CoordState *st, const char *id, char *why, size_t len)
{
    return datagen_coord_start(d, st, id, why, len);
}

static bool refuse_all(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t len)
{
    (void)ctx, (void)unit, (void)m;
    snprintf(why, len, "the coordinator could not start");
    return false;
}

static bool never_done(void *ctx, const CoordState *st, bool *abandon, char *verdict, size_t len)
{
    (void)ctx, (void)st, (void)abandon, (void)verdict, (void)len;
    return false;
}

/// The kind of a coordinator whose own kind could not start: it counts nothing; the loop
/// only tells every worker to stop and waits for their BYE, so that mpirun (or the local
/// worker thread) ends instead of waiting for work forever.
static const CoordKind failed_kind = {NULL, WIRE_RESULT, refuse_all, NULL,
                                      NULL, NULL,        never_done, NULL};

/// One kind's run: the loop over the kind (or, when the kind could not be made, the loop
/// that stops the workers), then the kind's end. Returns the exit status.
static int run_kind(const CoordJob *cj, uint64_t units_total, const CoordKind *kind,
                    bool (*start)(void *, const CoordState *, const char *, char *, size_t),
                    int (*finish)(void *, const CoordState *), const char *kind_why)
{
    char why[1024];
    const JobConfig *job = cj->job;
    CoordConfig cfg = {cj->ch,
                       cj->job_id,
                       units_total,
                       cj->bench_signature,
                       cj->interrupted,
                       POLL_MS,
                       job->scale.nps_floor,
                       job->scale.bench ? job->scale.reference_nps : 0};
    Coordinator *c = coord_new(&cfg, kind ? kind : &failed_kind);
    if (c) {
        coord_set_drain(c, cj->job->drain_grace * 1000);
        coord_set_rank0_plays(c, cj->job->coordinator_plays);
    }
    int rc = 1;
    if (!c) {
        fprintf(stderr, "xqforge run: out of memory\n");
    } else if (!kind) {
        coord_fail(c, kind_why); // says why
        coord_run(c);
    } else if (!open_and_run(c, cj, why, sizeof why, start, kind->ctx)) {
        coord_fail(c, why);
        coord_run(c);
    } else {
        rc = finish(kind->ctx, coord_state(c));
    }
    coord_free(c);
    return rc;
}

static int games_finish(void *g, const CoordState *st) { return games_coord_finish(g, st); }
static int books_finish(void *b, const CoordState *st) { return books_coord_finish(b, st); }
static int datagen_finish(void *d, const CoordState *st) { return datagen_coord_finish(d, st); }

int coord_job_games(const CoordJob *cj, const GamePlan *plan)
{
    char why[1024];
    GamesSetup gs = {cj->job, plan, cj->dir, cj->bench_signature, cj->ch->size};
    GamesCoord *g = games_coord_new(&gs, why, sizeof why);
    CoordKind kind;
    if (g)
        games_coord_kind(g, &kind);
    int rc = run_kind(cj, plan->pairs_total, g ? &kind : NULL, games_start, games_finish, why);
    games_coord_free(g);
    return rc;
}

int coord_job_book(const CoordJob *cj, const BookgenConfig *gen, uint64_t units_total)
{
    char why[1024];
    BooksCoord *b = books_coord_new(cj->job, gen, cj->dir, why, sizeof why);
    CoordKind kind;
    if (b)
        books_coord_kind(b, &kind);
    int rc = run_kind(cj, units_total, b ? &kind : NULL, books_start, books_finish, why);
    books_coord_free(b);
    return rc;
}

int coord_job_datagen(const CoordJob *cj)
{
    char why[1024];
    DatagenCoord *d = datagen_coord_new(cj->job, cj->dir, why, sizeof why);
    CoordKind kind;
    if (d)
        datagen_coord_kind(d, &kind);
    int rc = run_kind(cj, datagen_units_total(cj->job), d ? &kind : NULL, datagen_start,
                      datagen_finish, why);
    datagen_coord_free(d);
    return rc;
}
