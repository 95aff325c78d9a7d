// SPDX-License-Identifier: MIT
// Derived runs (derived.h): a job made from another and run on the same ranks, as a run of its
// own (its output directory, identity, journal or checkpoint): [verify]'s SPRT after a tuning
// and each step of a loop. One function runs them all; what differs is a const Derived.
#include "derived.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job_verify.h"
#include "verify.h"

/// Leaves what a finished step left in transit behind: a worker that said BYE may still have a
/// STOP coming (the answer to its last REQUEST), which the next step's worker would read as
/// its own. Every rank moves to a fresh communicator (link_renew, a collective), where only
/// the next step's messages travel; MPI promises nothing about when the old ones arrive, so
/// no draining could be sure to catch them. False (said on stderr) when MPI fails.
bool run_link_renew(Link *link)
{
    char why[512] = "";
    if (link_renew(link, why, sizeof why) == LINK_OK)
        return true;
    fprintf(stderr, "xqforge run (rank %d): MPI: cannot start the next step clean: %s\n",
            link_rank(link), why);
    return false;
}

Run *run_derived_new(const Run *run)
{
    Run *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->lock.fd = -1;
    v->verbose = run->verbose;
    v->stop = run->stop;
    v->abort_now = run->abort_now;
    // The bench of the first run stands for the others (the same build on every rank).
    v->bench_signature = run->bench_signature;
    v->bench_nps = run->bench_nps;
    return v;
}

/// Frees a run made from another on the same ranks ([verify]'s SPRT, a loop's step); NULL: no-op.
static void run_derived_free(Run *v)
{
    if (!v)
        return;
    free(v->identity);
    files_unlock(&v->lock);
    if (v->plan)
        v->kind->worker->plan_free(v->plan);
    free(v);
}

int run_derived(Run *run, Run *v, Link *link, int vrc, char *why, size_t why_len, const Derived *d)
{
    int rank = link_rank(link);
    bool all = link_all_ok(link, vrc == 0);
    bool collective = all && v->kind->collective;
    if (all) {
        if (d->check)
            vrc = d->check(v, link, why, why_len);
        if (vrc == 0 && !collective)
            vrc = run_prepare(v, rank == 0, why, why_len);
        if (vrc == 0 && rank == 0)
            vrc = run_identity(v, why, why_len);
        if (vrc == 0 && rank == 0)
            vrc = run_outputs(v, d->resume, false, why, why_len);
    }
    if (vrc != 0 && rank == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    else if (vrc != 0)
        fprintf(stderr, "xqforge run (rank %d on %s): %s\n", rank, link_host(link), why);
    if (all && link_all_ok(link, vrc == 0)) {
        run->bench_signature = v->bench_signature;
        run->bench_nps = v->bench_nps;
        if (rank == 0 && d->banner)
            d->banner(run, v, d->ctx);
        channel_from_link(&v->ch, link);
        v->threads = run_threads(&v->job, link);
        if (collective)
            vrc = v->kind->collective(link, &v->job, v->dir, v->job_id, v->stop);
        else
            vrc = rank == 0 ? run_coordinator(v) : run_worker(v);
        if (rank == 0 && d->done)
            vrc = d->done(run, v, vrc, d->ctx);
    } else if (vrc == 0) {
        vrc = RUN_EXIT_USAGE; // another rank failed and said why
    }
    run_derived_free(v);
    return vrc;
}

// ---- [verify] -----------------------------------------------------------------------------

/// Every rank: the [verify] weights files read the same as on rank 0 (a node that does not
/// share output.dir's file system would play other weights).
static int verify_same_files(Run *v, Link *link, char *why, size_t why_len)
{
    uint64_t h = 0;
    bool ok = verify_weights_hash(&v->job, &h, why, why_len);
    // link_sum as a broadcast: rank 0's hash in 16-bit pieces (exact as doubles), 0 elsewhere.
    double piece[4];
    for (int i = 0; i < 4; i++)
        piece[i] = link_rank(link) == 0 ? (double)((h >> (16 * i)) & 0xffff) : 0;
    if (!link_sum(link, piece, 4)) {
        snprintf(why, why_len, "[verify]: MPI: cannot share rank 0's weights hash");
        return 1;
    }
    uint64_t h0 = 0;
    for (int i = 0; i < 4; i++)
        h0 |= (uint64_t)piece[i] << (16 * i);
    if (ok && h != h0)
        snprintf(why, why_len,
                 "[verify]: the weights files %.300s and %.300s differ from rank 0's: output.dir "
                 "must be on a file system every rank sees",
                 v->job.players[0].cfg.weights_file, v->job.players[1].cfg.weights_file);
    return ok && h == h0 ? 0 : 1;
}

/// Rank 0, before the SPRT plays: what it tests.
static void verify_banner(const Run *run, const Run *v, const void *ctx)
{
    (void)run;
    (void)ctx;
    printf("\nVerify: an SPRT of the tuned weights (%s) against the start weights (%s)\n",
           v->job.players[0].cfg.weights_file,
           v->job.players[1].cfg.weights_file[0] ? v->job.players[1].cfg.weights_file
                                                 : "the defaults");
}

/// Rank 0, after it: the verdict carried into the tuning's outputs.
static int verify_done(Run *run, Run *v, int rc, const void *ctx)
{
    (void)ctx;
    return verify_record(&run->job, &v->job, rc);
}

/// [verify]: once the tuning is complete on every rank, the SPRT of the tuned weights against
/// the start weights, as a sprt job in output.dir/verify on the same ranks (job_verify.h). Its
/// own journal resumes it: a run killed during the SPRT, resumed, replays the finished tuning
/// (the same weights, bit for bit; the SPRT's identity would refuse others) and goes on with
/// the SPRT. Every call on the link below is made by every rank, in the same order.
int run_verify(Run *run, Link *link, int rc)
{
    if (!link_all_ok(link, rc == 0))
        return rc ? rc : 1; // the tuning did not finish: nothing to verify
    if (!run_link_renew(link))
        return 1;
    char why[1024] = "";
    Run *v = run_derived_new(run);
    int vrc = 0;
    if (!v) {
        snprintf(why, sizeof why, "out of memory");
        vrc = 1;
    } else if (!job_verify_make(&run->job, &v->job, why, sizeof why)) {
        vrc = 2;
    }
    if (v) {
        v->kind = run_kind(v->job.kind);
        snprintf(v->dir, sizeof v->dir, "%s", v->job.output.dir);
        snprintf(v->journal, sizeof v->journal, "%s/%s", v->dir, v->job.output.journal);
    }
    // Rank 0 writes the start weights before any rank reads them.
    if (vrc == 0 && link_rank(link) == 0 && !verify_write_start(&run->job, why, sizeof why))
        vrc = 1;
    // The SPRT goes on from its journal exactly when the tuning did.
    Derived d = {.resume = v && run->resumed && access(v->journal, F_OK) == 0,
                 .check = verify_same_files,
                 .banner = verify_banner,
                 .done = verify_done};
    if (!v) {
        link_all_ok(link, false); // every rank takes part in run_derived's agreement
        fprintf(stderr, "xqforge run (rank %d): %s\n", link_rank(link), why);
        return vrc;
    }
    return run_derived(run, v, link, vrc, why, sizeof why, &d);
}
