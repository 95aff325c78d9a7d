// SPDX-License-Identifier: MIT
// xqforge run JOBFILE: parses the arguments, loads the job on every rank, prepares the output
// directory (rank 0), proves with a bench that every rank runs the same engine, installs the
// signal handlers and picks each rank's role: rank 0 coordinates (coordinator/coord_job),
// the others work (worker/worker). With one rank (no mpirun) rank 0 also runs a worker
// thread, so the same job runs on a laptop. Texel and train jobs are collective
// (coordinator/texel_fit.c, coordinator/nnue_fit.c). A tuning job with [verify] then runs a
// second job on the same ranks, the SPRT of its tuned weights (run_verify); a loop job runs
// its generations' datagen, train and gate jobs one after another on them (run_loop).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "books.h"
#include "doe_coord.h"
#include "commands.h"
#include "coord_job.h"
#include "datagen.h"
#include "engine_build.h"
#include "files.h"
#include "games.h"
#include "identity.h"
#include "job_check.h"
#include "job_kinds.h"
#include "job_loop.h"
#include "job_verify.h"
#include "journal.h"
#include "link.h"
#include "loop.h"
#include "nnue_fit.h"
#include "run_common.h"
#include "texel_fit.h"
#include "verify.h"
#include "work_book.h"
#include "work_doe.h"
#include "work_datagen.h"
#include "work_games.h"
#include "worker.h"

static atomic_bool interrupted;    // drain: a signal, or a fleet stopping one test (run_stop)
static atomic_bool signalled;      // the drain is a signal's: the process ends after it
static atomic_bool launcher_abort; // a SIGTERM from the MPI launcher: it kills us soon

/// Whether pid is an MPI launcher's process (Open MPI's mpirun/orterun or its node daemon
/// orted, PRRTE's prterun/prted): async-signal-safe (open, read, close).
static bool from_launcher(pid_t pid)
{
    static const char *const names[] = {"mpirun",  "mpiexec", "orterun", "orted",
                                        "prterun", "prted",   "prte"};
    char path[40] = "/proc/", digits[16], comm[32];
    int n = 0, len = 6;
    for (unsigned long v = (unsigned long)pid; v || !n; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    while (n > 0)
        path[len++] = digits[--n];
    memcpy(path + len, "/comm", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, comm, sizeof comm - 1);
    close(fd);
    if (got <= 0)
        return false;
    comm[got] = '\0';
    if (comm[got - 1] == '\n')
        comm[got - 1] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(comm, names[i]) == 0)
            return true;
    return false;
}

static void on_signal(int sig, siginfo_t *si, void *context)
{
    (void)context;
    // SIGTERM from an MPI launcher is its abort (Ctrl-C or kill to mpirun): Open MPI sends it
    // about a second before SIGKILL, whatever drain_grace says, so the grace ends at once and
    // rank 0 writes result.json in time. Its forwarded SIGUSR1, and Slurm's SIGTERM (from
    // slurmstepd, KillWait later SIGKILL) keep the grace.
    if (sig == SIGTERM && si && si->si_code == SI_USER && si->si_pid > 0 &&
        from_launcher(si->si_pid))
        atomic_store(&launcher_abort, true);
    atomic_store(&signalled, true);
    atomic_store(&interrupted, true);
}

void run_stop(void) { atomic_store(&interrupted, true); }
bool run_signalled(void) { return atomic_load(&signalled); }
void run_stop_clear(void)
{
    if (!atomic_load(&signalled))
        atomic_store(&interrupted, false);
}

void run_signals_install(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL); // Slurm's --signal=USR1@SECONDS: the time limit is near
}

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: [mpirun -np N] xqforge run JOBFILE [--set SECTION.KEY=VALUE]...\n"
            "                                  [--resume | --resume=auto | --fresh] [--verbose]\n\n"
            "Runs a job file (see jobs/) over MPI ranks: rank 0 coordinates, the others\n"
            "play game pairs (or generate book units, or training positions: kind =\n"
            "datagen); with one rank, rank 0 plays too. Texel and train jobs fit on every\n"
            "rank.\n"
            "Results are journaled before they count.\n\n"
            "  --resume   continue the run whose journal is in the output directory, exactly\n"
            "             where it stopped (refused, naming what changed, if the experiment\n"
            "             differs: engines, rules, openings, time control, adjudication)\n"
            "  --resume=auto  continue the journal when there is one, else start (as [job]\n"
            "             resume = auto: a requeued batch job goes on by itself)\n"
            "  --fresh    start afresh: the old run's outputs are moved aside, never deleted\n"
            "  --verbose  print rank 0's costs when the run ends (the \"Coordinator:\" line:\n"
            "             results, CPU, fdatasync, journal bytes, peak memory; always in the\n"
            "             report)\n\n"
            "SIGINT, SIGTERM and SIGUSR1 (Slurm's preemption and time-limit warnings) drain the\n"
            "run: no new games; those in progress finish within [job] drain_grace seconds or\n"
            "are dropped (played on resume); every result that arrives is journaled. Under\n"
            "Open MPI's mpirun send SIGUSR1 to mpirun: Ctrl-C or SIGTERM makes mpirun end\n"
            "the job itself (exit 1, the ranks killed 2 s later).\n\n"
            "Exit status: 0 the job did its work (its limit or its SPRT verdict), 1 it failed\n"
            "(no usable engine, every worker refused, an output that cannot be written), 2 bad\n"
            "usage or a bad job file, 130 drained by a signal (resume it with --resume or\n"
            "--resume=auto).\n");
}

/// A collective kind: every rank fits together over the link, rank 0's result counts.
typedef int (*RunCollective)(Link *link, const JobConfig *job, const char *dir, uint64_t job_id,
                             const atomic_bool *stop);

/// How a job kind runs: a worker kind and a rank-0 kind that hand out units over the wire,
/// or a collective fit. The one place in cli/ that names kinds (curl's protocol table).
typedef struct {
    const WorkerKindDef *worker;
    const CoordKindDef *coord;
    RunCollective collective;
} RunKind;

static const RunKind RUN_KINDS[JOB_KIND_NB] = {
    [JOB_SPRT] = {.worker = &work_games_def, .coord = &coord_games_def},
    [JOB_MATCH] = {.worker = &work_games_def, .coord = &coord_games_def},
    [JOB_SPSA] = {.worker = &work_games_def, .coord = &coord_games_def},
    [JOB_BOOK] = {.worker = &work_book_def, .coord = &coord_books_def},
    [JOB_DATAGEN] = {.worker = &work_datagen_def, .coord = &coord_datagen_def},
    [JOB_TEXEL] = {.collective = texel_fit_job},
    [JOB_TRAIN] = {.collective = nnue_fit_job},
    [JOB_LOOP] = {0}, // run_loop: its steps are jobs of the kinds above
    [JOB_DOE] = {.worker = &work_doe_def, .coord = &coord_doe_def},
};

/// Every rank's view of the job.
typedef struct {
    JobConfig job;
    const RunKind *kind;
    char dir[JOB_TEXT_MAX];
    char journal[2 * JOB_TEXT_MAX + 2];
    void *plan; // the worker kind's plan
    uint64_t units_total, job_id, bench_signature, bench_nps;
    uint64_t engine_bench[JOB_PLAYERS_MAX]; // engines built from source (0: unchecked)
    int threads;
    Channel ch;
    char *identity; // rank 0: the experiment's identity, as text
    size_t identity_len;
    FilesLock lock;    // rank 0: the output directory's lock, held for the whole run
    bool verbose;      // --verbose: the coordinator's diagnostics line on the console
    atomic_bool *stop; // the drain flag its coordinator reads (a fleet's test has its own)
    bool resumed;      // rank 0: the run went on from its journal or checkpoint
    bool busy;         // rank 0: another run holds the output directory's lock
} Run;

/// Game threads per worker rank: the job's concurrency, or (0) the node's cores shared among
/// the worker ranks on it, divided by the engines' own search threads.
static int run_threads(const JobConfig *job, Link *l)
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
static int run_prepare(Run *run, bool warn, char *why, size_t why_len)
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
    const RunKind *kind = &RUN_KINDS[job->kind];
    if (!kind->worker)
        return 0;
    void *plan = kind->worker->plan_new(job, NULL, why, why_len);
    if (!plan)
        return EXIT_USAGE;
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
        rs.status = EXIT_USAGE;
    else if (root && !engine_build_resolve(job, why, why_len))
        rs.status = EXIT_USAGE;
    for (int i = 0; root && i < job->player_count; i++) {
        memcpy(rs.commit[i], job->sources[i].commit_id, JOB_GIT_ID_MAX);
        memcpy(rs.tree[i], job->sources[i].tree_id, JOB_GIT_ID_MAX);
    }
    if (!link_bcast(link, &rs, sizeof rs, 0)) {
        snprintf(why, why_len, "MPI: cannot share the resolved commits");
        return 1;
    }
    if (rs.status || !loaded)
        return rs.status ? rs.status : EXIT_USAGE; // rank 0 said why
    for (int i = 0; i < job->player_count; i++) {
        memcpy(job->sources[i].commit_id, rs.commit[i], JOB_GIT_ID_MAX);
        memcpy(job->sources[i].tree_id, rs.tree[i], JOB_GIT_ID_MAX);
        job->sources[i].commit_id[JOB_GIT_ID_MAX - 1] = '\0';
        job->sources[i].tree_id[JOB_GIT_ID_MAX - 1] = '\0';
    }
    return engine_build_all(job, root, why, why_len) ? 0 : 1;
}

/// Rank 0: what defines the experiment (job/identity), its text and its hash.
static int run_identity(Run *run, char *why, size_t why_len)
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
static int run_outputs(Run *run, bool resume, bool fresh, char *why, size_t why_len)
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
        // A loop's generations go with its record: their journals would resume otherwise.
        if (moved[0] && run->job.kind == JOB_LOOP &&
            !loop_move_aside(run->dir, moved, why, why_len))
            return 1;
        if (moved[0])
            printf("--fresh: the earlier run's outputs are in %s\n", moved);
    }
    return 0;
}

static int run_worker(Run *run)
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

static int run_coordinator(Run *run)
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
                   &launcher_abort,
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

/// Leaves what a finished step left in transit behind: a worker that said BYE may still have a
/// STOP coming (the answer to its last REQUEST), which the next step's worker would read as
/// its own. Every rank moves to a fresh communicator (link_renew, a collective), where only
/// the next step's messages travel; MPI promises nothing about when the old ones arrive, so
/// no draining could be sure to catch them. False (said on stderr) when MPI fails.
static bool run_link_renew(Link *link)
{
    char why[512] = "";
    if (link_renew(link, why, sizeof why) == LINK_OK)
        return true;
    fprintf(stderr, "xqforge run (rank %d): MPI: cannot start the next step clean: %s\n",
            link_rank(link), why);
    return false;
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

/// [verify]: once the tuning is complete on every rank, the SPRT of the tuned weights against
/// the start weights, as a sprt job in output.dir/verify on the same ranks (job_verify.h). Its
/// own journal resumes it: a run killed during the SPRT, resumed, replays the finished tuning
/// (the same weights, bit for bit; the SPRT's identity would refuse others) and goes on with
/// the SPRT. Every call on the link below is made by every rank, in the same order.
static int run_verify(Run *run, Link *link, int rc)
{
    int rank = link_rank(link);
    if (!link_all_ok(link, rc == 0))
        return rc ? rc : 1; // the tuning did not finish: nothing to verify
    if (!run_link_renew(link))
        return 1;
    char why[1024] = "";
    Run *v = calloc(1, sizeof *v);
    int vrc = 0;
    if (!v) {
        snprintf(why, sizeof why, "out of memory");
        vrc = 1;
    } else {
        v->lock.fd = -1;
        v->verbose = run->verbose;
        v->stop = run->stop;
        v->kind = &RUN_KINDS[JOB_SPRT];
        v->bench_signature = run->bench_signature;
        v->bench_nps = run->bench_nps;
        if (!job_verify_make(&run->job, &v->job, why, sizeof why))
            vrc = 2;
        snprintf(v->dir, sizeof v->dir, "%s", v->job.output.dir);
        snprintf(v->journal, sizeof v->journal, "%s/%s", v->dir, v->job.output.journal);
    }
    // Rank 0 writes the start weights before any rank reads them.
    if (vrc == 0 && rank == 0 && !verify_write_start(&run->job, why, sizeof why))
        vrc = 1;
    bool all = link_all_ok(link, vrc == 0);
    if (all) {
        vrc = verify_same_files(v, link, why, sizeof why);
        if (vrc == 0)
            vrc = run_prepare(v, rank == 0, why, sizeof why);
        if (vrc == 0 && rank == 0)
            vrc = run_identity(v, why, sizeof why);
        // The SPRT goes on from its journal exactly when the tuning did.
        bool resume = run->resumed && access(v->journal, F_OK) == 0;
        if (vrc == 0 && rank == 0)
            vrc = run_outputs(v, resume, false, why, sizeof why);
    }
    if (vrc != 0 && rank == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    else if (vrc != 0)
        fprintf(stderr, "xqforge run (rank %d on %s): %s\n", rank, link_host(link), why);
    if (all && link_all_ok(link, vrc == 0)) {
        if (rank == 0)
            printf("\nVerify: an SPRT of the tuned weights (%s) against the start weights (%s)\n",
                   v->job.players[0].cfg.weights_file,
                   v->job.players[1].cfg.weights_file[0] ? v->job.players[1].cfg.weights_file
                                                         : "the defaults");
        channel_from_link(&v->ch, link);
        v->threads = run->threads;
        vrc = rank == 0 ? run_coordinator(v) : run_worker(v);
        if (rank == 0)
            vrc = verify_record(&run->job, &v->job, vrc);
    } else if (vrc == 0) {
        vrc = 2; // another rank failed and said why
    }
    run_derived_free(v);
    return vrc;
}

/// One step of a loop (job_loop.h) as a job of its own on every rank, as run_verify runs the
/// SPRT: its own output directory, identity and journal (or checkpoint), resume = auto, so a
/// killed step goes on from where it was. Rank 0 marks a finished train step (its result.json).
static int run_loop_step(Run *run, Link *link, const LoopNext *nx)
{
    int rank = link_rank(link);
    char why[1024] = "";
    Run *v = calloc(1, sizeof *v);
    int vrc = 0;
    if (!v) {
        snprintf(why, sizeof why, "out of memory");
        vrc = 1;
    } else {
        v->lock.fd = -1;
        v->verbose = run->verbose;
        v->stop = run->stop;
        v->bench_signature = run->bench_signature;
        v->bench_nps = run->bench_nps;
        if (!job_loop_make(&run->job, nx->gen, (JobLoopStep)nx->step, nx->best, &v->job, why,
                           sizeof why))
            vrc = 2;
        v->kind = &RUN_KINDS[v->job.kind];
        snprintf(v->dir, sizeof v->dir, "%s", v->job.output.dir);
        snprintf(v->journal, sizeof v->journal, "%s/%s", v->dir, job_state_file(&v->job));
    }
    bool all = link_all_ok(link, vrc == 0);
    bool collective = all && v->kind->collective;
    if (all) {
        if (!collective)
            vrc = run_prepare(v, rank == 0, why, sizeof why);
        if (vrc == 0 && rank == 0)
            vrc = run_identity(v, why, sizeof why);
        if (vrc == 0 && rank == 0)
            vrc = run_outputs(v, false, false, why, sizeof why);
    }
    if (vrc != 0 && rank == 0)
        fprintf(stderr, "xqforge run: %s\n", why);
    else if (vrc != 0)
        fprintf(stderr, "xqforge run (rank %d on %s): %s\n", rank, link_host(link), why);
    if (all && link_all_ok(link, vrc == 0)) {
        // The bench of the first step stands for the others (the same build on every rank).
        run->bench_signature = v->bench_signature;
        run->bench_nps = v->bench_nps;
        if (rank == 0)
            printf("\nLoop: generation %d of %d, %s (%s)\n", nx->gen, run->job.loop.generations,
                   job_loop_step_name((JobLoopStep)nx->step), v->dir);
        channel_from_link(&v->ch, link);
        v->threads = run_threads(&v->job, link);
        if (collective)
            vrc = v->kind->collective(link, &v->job, v->dir, v->job_id, v->stop);
        else
            vrc = rank == 0 ? run_coordinator(v) : run_worker(v);
        if (vrc == 0 && rank == 0 && nx->step == JOB_LOOP_TRAIN &&
            !loop_train_done(&v->job, why, sizeof why)) {
            fprintf(stderr, "xqforge run: %s\n", why);
            vrc = 1;
        }
    } else if (vrc == 0) {
        vrc = 2; // another rank failed and said why
    }
    run_derived_free(v);
    return vrc;
}

/// kind = loop: the next step derived on rank 0 from the steps' result files (loop_record,
/// which also promotes and writes history.json) and sent to every rank, run, and again, until
/// every generation's gate has finished. Nothing is kept in memory between steps, so a loop
/// killed anywhere and run again derives the same next step from the same files.
static int run_loop(Run *run, Link *link)
{
    int rank = link_rank(link);
    if (rank == 0)
        printf("Job %s: training loop, %d generation%s in %s (history.json)\n", run->job.name,
               run->job.loop.generations, run->job.loop.generations == 1 ? "" : "s", run->dir);
    for (;;) {
        struct {
            int status;
            LoopNext next;
        } msg;
        memset(&msg, 0, sizeof msg);
        char why[1024] = "";
        if (rank == 0 && !loop_record(&run->job, &msg.next, why, sizeof why)) {
            fprintf(stderr, "xqforge run: %s\n", why);
            msg.status = 1;
        }
        if (!link_bcast(link, &msg, sizeof msg, 0)) {
            fprintf(stderr, "xqforge run (rank %d): MPI: cannot share the loop's next step\n",
                    rank);
            return 1;
        }
        if (msg.status)
            return msg.status;
        if (msg.next.done) {
            if (rank == 0)
                printf("\nLoop: %d generation%s done; best net %s (%s/history.json)\n",
                       run->job.loop.generations, run->job.loop.generations == 1 ? "" : "s",
                       msg.next.best[0] ? msg.next.best : "the engine's own", run->dir);
            return 0;
        }
        int rc = run_loop_step(run, link, &msg.next);
        if (!run_link_renew(link))
            return 1;
        if (!link_all_ok(link, rc == 0)) {
            LoopNext ignored;
            if (rank == 0 && !loop_record(&run->job, &ignored, why, sizeof why))
                fprintf(stderr, "xqforge run: %s\n", why);
            return rc ? rc : 1;
        }
    }
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
    run->stop = a->stop ? a->stop : &interrupted;
    int rank = link_rank(link), rc = 0;
    bool loaded = job_load_at(a->path, a->file_dir, a->set_dir, a->sets, a->n_sets, &run->job, why,
                              why_len) == JOB_OK;
    if (!loaded)
        rc = EXIT_USAGE;
    int src_rc = run_sources(run, link, loaded, why, why_len);
    if (rc == 0 && src_rc != 0)
        rc = src_rc;
    else if (rc == 0 && rank == 0 && job_check(&run->job, why, why_len) != JOB_CHECK_OK)
        rc = EXIT_USAGE; // the engines checked whole before anything is written
    run->job.resume_auto |= a->resume_auto;
    snprintf(run->dir, sizeof run->dir, "%s", run->job.output.dir[0] ? run->job.output.dir : ".");
    run->kind = &RUN_KINDS[run->job.kind];
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
        rc = rc ? rc : failed > 0 ? 1 : EXIT_USAGE;
    } else {
        // Handlers only once every rank is ready: a signal during set-up ends the process the
        // default way, and nothing was written yet that a drain would have to keep whole. The
        // loops (and the collective fits) read the flag; only main touches signals.
        run_signals_install();
        channel_from_link(&run->ch, link);
        run->threads = run_threads(&run->job, link);
        if (run->job.kind == JOB_LOOP)
            rc = run_loop(run, link);
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

int cmd_run(int argc, char **argv)
{
    const char *path = NULL;
    char *sets[64];
    int n_sets = 0;
    bool resume = false, fresh = false, resume_auto = false, verbose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--resume")) {
            resume = true;
        } else if (!strcmp(argv[i], "--resume=auto")) {
            resume_auto = true;
        } else if (!strcmp(argv[i], "--fresh")) {
            fresh = true;
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < 64) {
            sets[n_sets++] = argv[++i];
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "xqforge run: unexpected argument '%s'\n", argv[i]);
            run_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!path || resume + fresh + resume_auto > 1) {
        if (path)
            fprintf(stderr,
                    "xqforge run: --resume, --resume=auto and --fresh exclude each other\n");
        run_usage(stderr);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char why[1024] = "";
    Link *link = NULL;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge run: MPI: %s\n", why);
        return 1;
    }
    RunArgs args = {.path = path,
                    .sets = (const char *const *)sets,
                    .n_sets = n_sets,
                    .resume = resume,
                    .fresh = fresh,
                    .resume_auto = resume_auto,
                    .verbose = verbose};
    int rc = run_session(link, &args, why, sizeof why);
    link_finalize(link);
    return rc;
}
