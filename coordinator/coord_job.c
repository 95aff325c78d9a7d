// SPDX-License-Identifier: MIT
#include "coord_job.h"

#include <stdio.h>

#include "books.h"
#include "coordinator.h"
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

/// A coordinator that could not start still lets every worker say BYE, so mpirun ends.
static void stop_unstarted(Coordinator *c, const char *why)
{
    coord_fail(c, why);
    coord_run(c);
}

int coord_job_games(const CoordJob *cj, const GamePlan *plan)
{
    char why[1024];
    GamesSetup gs = {cj->job, plan, cj->dir, cj->bench_signature, cj->ch->size};
    GamesCoord *g = games_coord_new(&gs, why, sizeof why);
    CoordKind kind = {0};
    if (g)
        games_coord_kind(g, &kind);
    CoordConfig cfg = {cj->ch,          cj->job_id, plan->pairs_total, cj->bench_signature,
                       cj->interrupted, POLL_MS};
    Coordinator *c = g ? coord_new(&cfg, &kind) : NULL;
    int rc = 1;
    if (!g || !c) {
        fprintf(stderr, "xqforge run: %s\n", g ? "out of memory" : why);
    } else if (!open_and_run(c, cj, why, sizeof why, games_start, g)) {
        fprintf(stderr, "xqforge run: %s\n", why);
        stop_unstarted(c, why);
    } else {
        rc = games_coord_finish(g, coord_state(c));
    }
    coord_free(c);
    games_coord_free(g);
    return rc;
}

int coord_job_book(const CoordJob *cj, const BookgenConfig *gen, uint64_t units_total)
{
    char why[1024];
    BooksCoord *b = books_coord_new(cj->job, gen, cj->dir, why, sizeof why);
    CoordKind kind = {0};
    if (b)
        books_coord_kind(b, &kind);
    CoordConfig cfg = {cj->ch,          cj->job_id, units_total, cj->bench_signature,
                       cj->interrupted, POLL_MS};
    Coordinator *c = b ? coord_new(&cfg, &kind) : NULL;
    int rc = 1;
    if (!b || !c) {
        fprintf(stderr, "xqforge run: %s\n", b ? "out of memory" : why);
    } else if (!open_and_run(c, cj, why, sizeof why, books_start, b)) {
        fprintf(stderr, "xqforge run: %s\n", why);
        stop_unstarted(c, why);
    } else {
        rc = books_coord_finish(b, coord_state(c));
    }
    coord_free(c);
    books_coord_free(b);
    return rc;
}
