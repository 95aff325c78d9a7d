// SPDX-License-Identifier: MIT
// The run session (session.h): every rank loads the job, rank 0 resolves the commits of
// engines built from source and every rank builds them, every rank builds the kind's plan
// and proves with a bench that it runs the same engine, rank 0 computes the identity and
// prepares the output directory, and each rank takes its role: rank 0 coordinates
// (coordinator/coord_job), the others work (worker/worker). With one rank (no mpirun) rank 0
// also runs a worker thread, so the same job runs on a laptop. Texel and train jobs are
// collective; a tuning job with [verify] then runs the SPRT of its tuned weights on the same
// ranks (derived.c); a loop job runs its generations' steps (loop_driver.c).
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "books.h"
#include "coord_job.h"
#include "datagen.h"
#include "doe_coord.h"
#include "engine_build.h"
#include "games.h"
#include "identity.h"
#include "job_check.h"
#include "job_kinds.h"
#include "journal.h"
#include "loop.h"
#include "nnue_fit.h"
#include "run_impl.h"
#include "texel_fit.h"
#include "work_book.h"
#include "work_datagen.h"
#include "work_doe.h"
#include "work_games.h"

// Designated rows: adding a kind edits no other kind's row.
static const RunKind RUN_KINDS[JOB_KIND_NB] = {
    [JOB_SPRT] = {.worker = &work_games_def, .coord = &coord_games_def},
    [JOB_MATCH] = {.worker = &work_games_def, .coord = &coord_games_def},
    [JOB_SPSA] = {.worker = &work_games_def, .coord = &coord_games_def},
    [JOB_BOOK] = {.worker = &work_book_def, .coord = &coord_books_def},
    [JOB_DATAGEN] = {.worker = &work_datagen_def, .coord = &coord_datagen_def},
    [JOB_TEXEL] = {.collective = texel_fit_job},
    [JOB_TRAIN] = {.collective = nnue_fit_job},
    // Its steps are jobs of the kinds above; its generations move aside with it.
    [JOB_LOOP] = {.driver = run_loop, .move_aside = loop_move_aside},
    [JOB_DOE] = {.worker = &work_doe_def, .coord = &coord_doe_def},
};

static atomic_bool never; // the launcher's abort where the caller has none

const RunKind *run_kind(JobKind k) { return &RUN_KINDS[k]; }

const char *run_kind_whole(JobKind k)
{
    if (RUN_KINDS[k].driver)
        return "its steps are jobs of their own";
    return RUN_KINDS[k].collective ? "a fit on every rank" : NULL;
}

/// Game threads per worker rank: the job's concurrency, or (0) the node's cores shared among
/// the worker ranks on it, divided by the engines' own search threads.
int run_threads(const JobConfig *job, Link *l)
{
    if (job->concurrency > 0)
        return job->concurrency;
    long cores = sysconf(_SC_NPROCESSORS_ONLN), threads = 1;
    for (int i = 0; i < job->player_count; i++)
        for (int k = 0; k < job->players[i].cfg.option_count; k++)
            if (!strcasecmp(job->players[i].cfg.options[k].name, "Threads")) {
                long t = strtol(job->players[i].cfg.options[k].value, NULL, 10);
                threads = t > threads ? t : threads;
            }
    int workers = link_node_size(l);
    if (link_size(l) > 1 && link_node_has(l, 0) && !job->coordinator_plays)
        workers--; // the coordinator's rank plays no games
    long n = (cores > 0 ? cores : 1) / (workers > 0 ? workers : 1) / threads;
    return n > 0 ? (int)n : 1;
}

/// The kind's plan on every rank (pairings and openings, the book generator's settings), and
/// the bench that proves every rank runs the same engine.
int run_prepare(Run *run, bool warn, char *why, size_t why_len)
{
    const JobConfig *job = &run->job;
    // Every rank builds the plan from its own copy of the files (openings, seed book): a node
    // that sees another file fails here, by name, before any unit is handed out. Only rank 0
    // warns, so a skipped opening line is said once, not once per rank.
    if (!(run->plan = run->kind->worker->plan_new(job, warn ? stderr : NULL, why, why_len)))
        return 2;
    run->units_total = job_units_total(job);
    // [verify]'s SPRT after an SPSA job: the bench of the tuning stands.
    if (!run->bench_signature && !run_bench(&run->bench_signature, &run->bench_nps)) {
        snprintf(why, why_len, "cannot run the bench");
        return 1;
    }
    uint64_t nps[JOB_PLAYERS_MAX];
    if (!engine_build_bench(job, run->engine_bench, nps, why, why_len))
        return 1;
    // [time] scale = bench: the speed of the first engine built from source and benched is
    // the rank's (fishtest scales by the tested engine's own bench, not ours).
    for (int i = 0; job->scale.bench && i < job->player_count; i++)
        if (nps[i]) {
            run->bench_nps = nps[i];
            break;
        }
    return 0;
}

int run_plan_check(const JobConfig *job, char *why, size_t why_len)
{
    const RunKind *kind = run_kind(job->kind);
    if (!kind->worker)
        return 0;
    void *plan = kind->worker->plan_new(job, NULL, why, why_len);
    if (!plan)
        return RUN_EXIT_USAGE;
    kind->worker->plan_free(plan);
    return 0;
}

/// Engines built from source: the commits resolved once, on rank 0, and sent to every rank
/// (a branch that moves meanwhile is still one commit everywhere), then each rank's build (or
/// the cache's). Every rank calls it, loaded or not: the broadcast is collective.
static int run_sources(Run *run, Link *link, bool loaded, char *why, size_t why_len)
{
    JobConfig *job = &run->job;
    bool root = link_rank(link) == 0;
    RunSources rs = {0};
    if (root && !loaded)
        rs.status = RUN_EXIT_USAGE;
    else if (root && !engine_build_resolve(job, why, why_len))
        rs.status = RUN_EXIT_USAGE;
    for (int i = 0; root && i < job->player_count; i++) {
        memcpy(rs.commit[i], job->sources[i].commit_id, JOB_GIT_ID_MAX);
        memcpy(rs.tree[i], job->sources[i].tree_id, JOB_GIT_ID_MAX);
    }
    if (!link_bcast(link, &rs, sizeof rs, 0)) {
        snprintf(why, why_len, "MPI: cannot share the resolved commits");
        return 1;
    }
    if (rs.status || !loaded)
        return rs.status ? rs.status : RUN_EXIT_USAGE; // rank 0 said why
    for (int i = 0; i < job->player_count; i++) {
        memcpy(job->sources[i].commit_id, rs.commit[i], JOB_GIT_ID_MAX);
        memcpy(job->sources[i].tree_id, rs.tree[i], JOB_GIT_ID_MAX);
        job->sources[i].commit_id[JOB_GIT_ID_MAX - 1] = '\0';
        job->sources[i].tree_id[JOB_GIT_ID_MAX - 1] = '\0';
    }
    return engine_build_all(job, root, why, why_len) ? 0 : 1;
}

/// Rank 0: what defines the experiment (job/identity), its text and its hash.
int run_identity(Run *run, char *why, size_t why_len)
{
    Identity id;
    IdentityStatus st = identity_of_job(&run->job, run->bench_signature, &id, why, why_len);
    size_t n = st == IDENTITY_OK ? identity_encode(&id, NULL, 0) : 0;
    if (st == IDENTITY_OK && !(run->identity = malloc(n + 1)))
        st = IDENTITY_ERR_NOMEM;
    if (st == IDENTITY_OK) {
        // The text goes into the journal's header (what --resume compares); its hash is the
        // job id every message carries, so a result of another experiment never counts.
        identity_encode(&id, run->identity, n + 1);
        run->identity_len = n;
        run->job_id = identity_hash(&id);
    } else if (st == IDENTITY_ERR_NOMEM) {
        snprintf(why, why_len, "out of memory");
    }
    identity_destroy(&id);
    return st == IDENTITY_OK ? 0 : 2;
}

/// --resume: the journal's experiment must be this job's; says what changed when not.
static int run_same_experiment(Run *run, char *why, size_t why_len)
{
    size_t cap = IDENTITY_TEXT_MAX + 1, len = 0;
    char *text = malloc(cap), jwhy[512] = "";
    if (!text) {
        snprintf(why, why_len, "out of memory");
        return 1;
    }
    JournalStatus js = journal_peek(run->journal, text, cap, &len, NULL, jwhy, sizeof jwhy);
    int rc = 0;
    Identity then, now;
    identity_init(&then);
    identity_init(&now);
    if (js != JOURNAL_OK) {
        snprintf(why, why_len, "journal %.400s: %s (%.300s)", run->journal, journal_strerror(js),
                 jwhy);
        rc = 1;
    } else if (identity_decode(text, len, &then) != IDENTITY_OK ||
               identity_decode(run->identity, run->identity_len, &now) != IDENTITY_OK) {
        snprintf(why, why_len, "journal %.900s: its experiment cannot be read", run->journal);
        rc = 1;
    } else {
        char diff[900], was[PLAYER_NAME_MAX + 1], is[PLAYER_NAME_MAX + 1];
        if (identity_roles_swapped(&then, &now, was, is, sizeof was)) {
            // Never a silent flip: the journal's figures are from the other engine's side.
            snprintf(why, why_len,
                     "--resume: %.200s holds the figures of '%s', and this job tests '%s' "
                     "(a journal written before roles were chosen by name tested the file's "
                     "first engine). Start afresh with --fresh, or keep the journal's roles "
                     "with --set sprt.new=%s --set sprt.base=%s",
                     run->journal, was, is, was, is);
            rc = 2;
        } else if (identity_diff(&then, &now, diff, sizeof diff) != 0) {
            snprintf(why, why_len,
                     "--resume: %.200s is the journal of another experiment: %.600s (start afresh "
                     "with --fresh, or another output.dir)",
                     run->journal, diff);
            rc = 2;
        }
    }
    identity_destroy(&then);
    identity_destroy(&now);
    free(text);
    return rc;
}

/// A lock's start time as the console shows it (UTC); one static buffer.
static const char *run_clock(long long t)
{
    static char text[32];
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(text, sizeof text, "%lld", t);
    return text;
}

/// Rank 0: the output directory, and what to do with an earlier run's journal there.
int run_outputs(Run *run, bool resume, bool fresh, char *why, size_t why_len)
{
    bool auto_resume = run->job.resume_auto && !resume && !fresh;
    if (files_mkdir_p(run->dir) != 0) {
        snprintf(why, why_len, "cannot create %.900s: %s", run->dir, strerror(errno));
        return 1;
    }
    // Nothing in the directory is touched (moved aside, truncated, rebuilt) before the run
    // holds its lock: a second run of the same job stops here, the first one's files whole.
    char lock[2 * JOB_TEXT_MAX + 16];
    FilesLockHolder holder;
    snprintf(lock, sizeof lock, "%s/.xqforge.lock", run->dir);
    if (files_lock(lock, &run->lock, &holder) != 0) {
        run->busy = errno == EWOULDBLOCK; // a fleet tries again later, never fails it for this
        if (errno == EWOULDBLOCK && holder.pid > 0 && holder.host[0])
            snprintf(why, why_len,
                     "%.700s is in use by another xqforge run (pid %ld on host %.200s, since %s)",
                     run->dir, holder.pid, holder.host, run_clock(holder.started));
        else if (errno == EWOULDBLOCK && holder.pid > 0)
            snprintf(why, why_len, "%.900s is in use by another xqforge run (pid %ld)", run->dir,
                     holder.pid);
        else if (errno == EWOULDBLOCK)
            snprintf(why, why_len, "%.900s is in use by another xqforge run", run->dir);
        else
            snprintf(why, why_len, "cannot lock %.900s: %s", lock, strerror(errno));
        return 1;
    }
    // Said only for the fallback: flock is what a user expects and needs no word.
    if (run->lock.excl)
        printf("lock: %s (flock is not supported on this file system: an O_EXCL lock file, "
               "removed at the end)\n",
               run->lock.excl_path);
    if (holder.stale)
        printf("lock: took over the stale lock of pid %ld on %s (since %s): that process is "
               "gone\n",
               holder.pid, holder.host, run_clock(holder.started));
    bool exists = access(run->journal, F_OK) == 0;
    if (auto_resume && exists) {
        printf("resume = auto: continuing the journal %s\n", run->journal);
        resume = true;
    }
    if (resume && !exists) {
        snprintf(why, why_len, "--resume: no journal at %.900s", run->journal);
        return 2;
    }
    run->resumed = resume;
    // Collective runs (Texel, train) check their checkpoint's fingerprint themselves; a loop's
    // steps each check their own journal or checkpoint.
    if (exists && resume && !job_kind_def(run->job.kind)->collective)
        return run_same_experiment(run, why, why_len);
    if (exists && !resume && !fresh) {
        snprintf(why, why_len,
                 "%.700s holds the journal of an earlier run: continue it with --resume, or "
                 "start afresh with --fresh (its outputs are moved aside, not deleted)",
                 run->journal);
        return 2;
    }
    if (exists && fresh) {
        const char *names[16];
        char scratch[JOB_TEXT_MAX + 8], moved[2048];
        int n = job_output_files(&run->job, names, 16, scratch, sizeof scratch);
        if (journal_move_aside(run->dir, names, n, moved, sizeof moved, why, why_len) != 0)
            return 1;
        // A sequence's steps go with its record: their journals would resume otherwise.
        if (moved[0] && run->kind->move_aside &&
            !run->kind->move_aside(run->dir, moved, why, why_len))
            return 1;
        if (moved[0])
            printf("--fresh: the earlier run's outputs are in %s\n", moved);
    }
    return 0;
}

int run_worker(Run *run)
{
    WorkerConfig cfg = {&run->ch,        run->threads,      run->bench_signature, run->bench_nps,
                        XQFORGE_VERSION, run->engine_bench, run->job.player_count};
    WorkerSetup setup = {.job = &run->job,
                         .plan = run->plan,
                         .rank = (uint32_t)run->ch.rank,
                         .bench_nps = run->bench_nps};
    WorkerKind kind;
    const WorkerKindDef *def = run->kind->worker;
    void *k = def->kind_new(&setup, &kind);
    if (!k) {
        fprintf(stderr, "xqforge run (rank %d): out of memory\n", run->ch.rank);
        return 1;
    }
    int rc = worker_run(&cfg, &kind);
    def->kind_free(k);
    return rc;
}

static void *local_worker(void *arg)
{
    run_worker(arg);
    return NULL;
}

int run_coordinator(Run *run)
{
    CoordJob cj = {&run->ch,
                   &run->job,
                   run->plan,
                   run->units_total,
                   run->dir,
                   run->journal,
                   {run->identity, run->identity_len},
                   run->job_id,
                   run->bench_signature,
                   run->stop,
                   run->abort_now,
                   run->verbose,
                   run->engine_bench};
    // With one rank (a laptop, no mpirun) rank 0 is also a worker, as a thread over the same
    // Channel: the job then runs exactly as on a cluster, through the same protocol.
    pthread_t local;
    bool plays = run->ch.size == 1 || run->job.coordinator_plays;
    bool started = plays && pthread_create(&local, NULL, local_worker, run) == 0;
    if (plays && !started) {
        fprintf(stderr, "xqforge run: cannot start the local worker\n");
        return 1;
    }
    int rc = coord_job_run(&cj, run->kind->coord);
    if (started)
        pthread_join(local, NULL);
    return rc;
}

int run_session(Link *link, const RunArgs *a, char *why, size_t why_len)
{
    Run *run = calloc(1, sizeof *run);
    why[0] = '\0';
    if (!run) {
        snprintf(why, why_len, "out of memory");
        return 1;
    }
    run->lock.fd = -1;
    run->verbose = a->verbose;
    run->stop = a->stop;
    run->abort_now = a->abort_now ? a->abort_now : &never;
    int rank = link_rank(link), rc = 0;
    bool loaded = job_load_at(a->path, a->file_dir, a->set_dir, a->sets, a->n_sets, &run->job, why,
                              why_len) == JOB_OK;
    if (!loaded)
        rc = RUN_EXIT_USAGE;
    int src_rc = run_sources(run, link, loaded, why, why_len);
    if (rc == 0 && src_rc != 0)
        rc = src_rc;
    else if (rc == 0 && rank == 0 && job_check(&run->job, why, why_len) != JOB_CHECK_OK)
        rc = RUN_EXIT_USAGE; // the engines checked whole before anything is written
    run->job.resume_auto |= a->resume_auto;
    snprintf(run->dir, sizeof run->dir, "%s", run->job.output.dir[0] ? run->job.output.dir : ".");
    run->kind = run_kind(run->job.kind);
    bool collective = job_kind_def(run->job.kind) && job_kind_def(run->job.kind)->collective;
    snprintf(run->journal, sizeof run->journal, "%s/%s", run->dir, job_state_file(&run->job));
    // Set-up in the order that writes nothing until the job is known to be good: the job file
    // and its engines (job_check starts every external engine once), the plan and bench on
    // every rank, the identity, and only then the output directory, its lock and journal. A
    // job that fails before run_outputs leaves no trace, so the fixed job is a plain rerun.
    if (rc == 0 && !collective)
        rc = run_prepare(run, rank == 0, why, why_len);
    if (rc == 0 && rank == 0)
        rc = run_identity(run, why, why_len);
    if (rc == 0 && rank == 0)
        rc = run_outputs(run, a->resume, a->fresh, why, why_len);
    if (a->busy)
        *a->busy = run->busy;
    // The job file is the same everywhere (rank 0 says what is wrong with it); what fails
    // after it (an openings file missing on one node, the bench) is said by that rank.
    if (rc != 0 && rank == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    else if (rc != 0 && loaded && why[0])
        fprintf(stderr, "xqforge run (rank %d on %s): %s\n", rank, link_host(link), why);
    if (!link_all_ok(link, rc == 0)) {
        // Another rank failed and said why: a bad job (2), unless a rank failed to run it (1:
        // a build of an engine from source that fails on that rank's node type).
        double failed = rc == 1;
        if (!link_sum(link, &failed, 1))
            failed = 0;
        rc = rc ? rc : failed > 0 ? 1 : RUN_EXIT_USAGE;
    } else {
        // The caller's handlers only once every rank is ready: a signal during set-up ends the
        // process the default way, and nothing was written yet that a drain would have to keep
        // whole. The loops (and the collective fits) read the flag; only main touches signals.
        if (a->ready)
            a->ready(a->ready_ctx);
        channel_from_link(&run->ch, link);
        run->threads = run_threads(&run->job, link);
        if (run->kind->driver)
            rc = run->kind->driver(run, link);
        else if (run->kind->collective)
            rc = run->kind->collective(link, &run->job, run->dir, run->job_id,
                                       run->stop); // rank 0's counts
        else
            rc = rank == 0 ? run_coordinator(run) : run_worker(run);
        if (run->job.verify.enabled)
            rc = run_verify(run, link, rc);
    }
    free(run->identity);
    files_unlock(&run->lock); // released last: the outputs are whole before another run may start
    if (run->kind && run->kind->worker)
        run->kind->worker->plan_free(run->plan);
    free(run);
    return rc;
}
