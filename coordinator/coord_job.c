// SPDX-License-Identifier: MIT
#include "coord_job.h"

#include <stdio.h>

// The loop's longest idle sleep: a run with nothing arriving notices a signal or a late
// message within this.
enum { POLL_MS = 20 };

/// Opens the journal (its replay counts into the kind), lets the kind make its outputs whole,
/// then runs the loop. false with why when the journal cannot be used or the kind not start.
static bool open_and_run(Coordinator *c, const CoordJob *cj, const CoordKind *kind, char *why,
                         size_t why_len)
{
    JournalReplayStats js;
    if (!coord_open_journal(c, cj->journal_path, &cj->identity, &js, why, why_len))
        return false;
    // A resumed run says what it took over, so the operator sees the journal was the right one.
    if (!js.created)
        printf("Resuming run %s: %llu unit%s already done (%llu duplicate record%s, %llu torn "
               "byte%s dropped)\n",
               coord_run_id(c), (unsigned long long)coord_state(c)->units_done,
               coord_state(c)->units_done == 1 ? "" : "s", (unsigned long long)js.duplicates,
               js.duplicates == 1 ? "" : "s", (unsigned long long)js.torn_bytes,
               js.torn_bytes == 1 ? "" : "s");
    if (kind->start && !kind->start(kind->ctx, coord_state(c), coord_run_id(c), why, why_len))
        return false;
    coord_run(c);
    return true;
}

/// failed_kind's check: no result can count once the coordinator could not start.
static bool refuse_all(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t len)
{
    (void)ctx, (void)unit, (void)m;
    snprintf(why, len, "the coordinator could not start");
    return false;
}

/// failed_kind's completion: the run ends only when every worker has said BYE.
static bool never_done(void *ctx, const CoordState *st, bool *abandon, char *verdict, size_t len)
{
    (void)ctx, (void)st, (void)abandon, (void)verdict, (void)len;
    return false;
}

/// The kind of a coordinator whose own kind could not start: it counts nothing; the loop
/// only tells every worker to stop and waits for their BYE, so that mpirun (or the local
/// worker thread) ends instead of waiting for work forever.
static const CoordKind failed_kind = {
    .result_kind = WIRE_RESULT, .check = refuse_all, .complete = never_done};

/// Without a finish of its own, a kind's run succeeds exactly when the job is complete.
static int default_finish(const CoordState *st) { return st->end == COORD_DONE ? 0 : 1; }

int coord_job_run(const CoordJob *cj, const CoordKindDef *def)
{
    char why[1024] = "";
    const JobConfig *job = cj->job;
    CoordSetup setup = {.job = job,
                        .plan = cj->plan,
                        .dir = cj->dir,
                        .bench_signature = cj->bench_signature,
                        .ranks = cj->ch->size};
    CoordKind kind;
    void *ctx = def->kind_new(&setup, &kind, why, sizeof why);
    CoordConfig cfg = {cj->ch,
                       cj->job_id,
                       cj->units_total,
                       cj->bench_signature,
                       cj->interrupted,
                       POLL_MS,
                       job->scale.nps_floor,
                       job->scale.bench ? job->scale.reference_nps : 0};
    CoordEngines engines = {0};
    // The loop runs even when the kind could not start: the workers are waiting for it, and
    // only its STOP lets them (and so mpirun) end.
    for (int i = 0; cj->engine_bench && i < job->player_count && i < WIRE_MAX_ENGINES; i++) {
        const JobSource *s = &job->sources[i];
        if (!s->source[0] || s->bench_mode == JOB_BENCH_NONE)
            continue;
        engines.count = i + 1;
        engines.declared[i] = s->bench_mode == JOB_BENCH_VALUE;
        engines.bench[i] = engines.declared[i] ? s->bench : cj->engine_bench[i];
        snprintf(engines.name[i], sizeof engines.name[i], "%.63s", job->players[i].cfg.name);
    }
    Coordinator *c = coord_new(&cfg, ctx ? &kind : &failed_kind);
    if (c) {
        coord_set_drain(c, job->drain_grace * 1000);
        coord_set_engines(c, &engines);
        coord_set_rank0_plays(c, job->coordinator_plays);
        coord_set_verbose(c, cj->verbose);
        coord_set_hurry(c, cj->hurry);
    }
    int rc = 1;
    if (!c) {
        fprintf(stderr, "xqforge run: out of memory\n");
        // coord_fail records why and stops every rank; coord_run then collects their BYEs.
    } else if (!ctx) {
        coord_fail(c, why); // says why
        coord_run(c);
    } else if (!open_and_run(c, cj, &kind, why, sizeof why)) {
        coord_fail(c, why);
        coord_run(c);
    } else {
        rc = kind.finish ? kind.finish(kind.ctx, coord_state(c)) : default_finish(coord_state(c));
    }
    coord_free(c);
    // The kind outlives the coordinator's last call into it (finish), then goes.
    if (ctx)
        def->kind_free(ctx);
    return rc;
}
