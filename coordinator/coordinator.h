// SPDX-License-Identifier: MIT
// Rank 0's life, for every job kind that hands out units (game pairs, book units): admit the
// workers that say HELLO, hand out units on REQUEST, take each unit's result, journal it,
// count it, stop the workers when the job is complete, and end when every worker said BYE.
// The loop is generic; a CoordKind checks, counts and reports the results of its kind.
//
// Protocol and invariants:
// - MPI orders messages per tag only. Results travel under LINK_TAG_RESULT, HELLO/REQUEST/
//   BYE under LINK_TAG_CONTROL; WORK, STOP and REFUSE share LINK_TAG_ORDER, so a worker takes
//   every WORK sent before a STOP before that STOP, and a drain's "in progress" is exactly
//   what the workers will finish.
// - Journal before count: a result counts only after its journal record is durable; a
//   journal that cannot be written stops the run with an error (exit 1), what it holds whole.
//   Group commit: the results waiting (up to COORD_BATCH_MAX) are checked and staged, made
//   durable by one write and one fdatasync, and only then counted; a failed commit counts
//   none of them. No WORK goes out while a batch is staged (a REQUEST then waits for the
//   commit); a batch not full may wait a little for more results (COORD_HOLD_MAX_MS).
// - Trust nothing: a result counts only from an admitted rank, for a unit handed to that very
//   rank and not yet done, of this job, and only when the kind's check passes (the rules
//   replay every move). A rank that sends garbage is refused and its units go to others.
// - A rank that leaves (BYE) gives its unfinished units back; a rank asking when nothing is
//   left to hand out waits (parked) until a unit comes back or the job is complete.
// - STOP "done" lets the workers finish and send what they have; "interrupted" (an operator's
//   signal, after the drain's grace if any; an SPRT verdict, a full book) and "error" abandon
//   the units in progress. After a
//   verdict no result counts any more: the verdict, the totals and the journal stay as they
//   were when it was given (an operator's interrupt keeps what still arrives).
// - The run succeeds (exit 0) only when the job is complete: its limit or its verdict.
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "channel.h"
#include "journal.h"
#include "schedule.h"
#include "wire.h"

/// Results made durable by one journal sync at most (group commit): the coordinator takes
/// the results waiting, up to this many, checks them, stages their records, syncs once, and
/// only then counts them and answers the ranks' requests.
/// (A build may set it: 1 makes a sync per result, the benchmark's comparison.)
#ifndef COORD_BATCH_MAX
#define COORD_BATCH_MAX 64
#endif

/// A batch not yet full waits at most this long for more results once none is waiting (half
/// the mean fdatasync time so far, when that is less).
#ifndef COORD_HOLD_MAX_MS
#define COORD_HOLD_MAX_MS 10
#endif

/// Journal keys with this bit are the kind's own records (an SPSA step), not unit results.
#define COORD_KEY_EXTRA (1ull << 63)

typedef enum { COORD_RUNNING, COORD_DONE, COORD_INTERRUPTED, COORD_FAILED } CoordEnd;

typedef enum {
    COORD_RANK_UNKNOWN, // no HELLO yet
    COORD_RANK_MEMBER,  // admitted
    COORD_RANK_REFUSED, // refused at HELLO or for sending garbage
    COORD_RANK_LEFT,    // said BYE
} CoordRankState;

typedef struct {
    CoordRankState state;
    char host[WIRE_MAX_TEXT + 1];
    uint64_t bench_nps;
    int threads;
    uint64_t units;                // results counted from this rank, the journal's included
    uint64_t units_session;        // of them, this session's
    uint32_t waiting;              // units asked for and not yet given (none were left)
    char error[WIRE_MAX_TEXT + 1]; // refusal or failure reason
} CoordRank;

/// What a run cost rank 0 (the benchmark's figures): in CoordState.load once coord_run ends (the
/// report's), and printed as the "Coordinator:" line with CoordConfig.verbose.
typedef struct {
    uint64_t results;        // results counted live (replayed ones excluded)
    JournalCounters journal; // the journal's writes: records, syncs, bytes
    double cpu_s, wall_s;    // process CPU (user + system) and time spent in coord_run
    long peak_kib;           // the process's peak resident memory (VmHWM; 0 when unknown)
} CoordLoad;

/// What the kinds read of the run (never written by them).
typedef struct {
    uint64_t units_total, units_done, units_at_start; // at_start: replayed from the journal
    uint64_t units_earlier;                           // journaled by ranks beyond this run's size
    int ranks;                                        // the channel's size
    CoordRank *rank;                                  // [ranks]
    int workers_expected, workers_live, workers_admitted;
    bool stopping;
    CoordEnd end;
    char reason[512]; // why it failed, or the verdict
    CoordLoad load;   // set when coord_run ends (all 0 before)
} CoordState;

typedef struct Coordinator Coordinator;

/// A kind's hooks, set by field name (`.check = ...`): a hook that may be NULL is simply left
/// out, and adding a hook edits no kind that does not need it.
typedef struct {
    void *ctx;
    WireKind result_kind; // WIRE_RESULT (one pair per message) or WIRE_BOOK
    /// Checks a unit's result before it is journaled (replays the moves); false with why:
    /// the rank sent something that must not count.
    bool (*check)(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t why_len);
    /// Counts a journaled result (live, or replayed when replay). false with why: the run
    /// cannot go on (an output write error).
    bool (*count)(void *ctx, uint64_t unit, const WireMessage *m, bool replay, char *why,
                  size_t why_len);
    /// A journal record under COORD_KEY_EXTRA (may be NULL: such records are refused).
    bool (*replay_extra)(void *ctx, uint64_t key, const void *payload, size_t len, char *why,
                         size_t why_len);
    /// Before a WORK is sent (may be NULL): attach what it needs, journaling it first through
    /// coord_journal_extra. false with why: the run cannot go on.
    bool (*attach)(void *ctx, Coordinator *c, WireWork *work, char *why, size_t why_len);
    /// Units with this id or above are not handed out yet (may be NULL: none held back): a
    /// kind whose units are made as the run goes (a DOE book's rounds). Asked before every
    /// WORK; ranks that wait are served again after each counted batch.
    uint64_t (*unit_limit)(void *ctx);
    /// Whether the job is complete (by its limit or its verdict); *abandon: the units in
    /// progress are not needed (a verdict), else the workers finish them.
    bool (*complete)(void *ctx, const CoordState *st, bool *abandon, char *verdict,
                     size_t verdict_len);
    /// Every loop turn (force: something changed): progress line, periodic report (may be
    /// NULL: nothing to show).
    void (*tick)(void *ctx, const CoordState *st, bool force);
    /// After the journal's replay, before the first unit goes out (may be NULL): the kind's
    /// outputs made whole from what the replay counted (PGN, report header). false with why:
    /// the run cannot start.
    bool (*start)(void *ctx, const CoordState *st, const char *run_id, char *why, size_t why_len);
    /// After the loop: the final outputs (result file, report), and the exit status of the
    /// run (coord_job.c passes it on). NULL: 0 when the job is complete, else 1.
    int (*finish)(void *ctx, const CoordState *st);
} CoordKind;

typedef struct {
    Channel *ch;
    uint64_t job_id;          // on the wire: results of another job are refused
    uint64_t units_total;     // unit ids are 0..units_total-1
    uint64_t bench_signature; // a worker with another signature is refused
    const atomic_bool *interrupted;
    int poll_ms; // idle sleep between polls
    // Mixed hardware ([time] of the job): a worker whose bench nps is below min_bench_nps
    // is refused (0: none); reference_nps (0: no scaling) gives each rank's time scale.
    uint64_t min_bench_nps, reference_nps;
} CoordConfig;

/// Engines built from source ([engine NAME] bench): a worker whose bench signature of engine
/// i is not bench[i] (0: unchecked) is refused, both numbers named; declared[i]: the job's
/// bench = N (else rank 0's, bench = auto).
typedef struct {
    int count;
    uint64_t bench[WIRE_MAX_ENGINES];
    bool declared[WIRE_MAX_ENGINES];
    char name[WIRE_MAX_ENGINES][64];
} CoordEngines;

/// A coordinator; NULL when out of memory.
Coordinator *coord_new(const CoordConfig *cfg, const CoordKind *kind);
void coord_free(Coordinator *c);

/// Opens (or creates) the journal at path for the run of this identity (the text of
/// job/identity) and replays its records through the kind. false with why (a
/// journal of another experiment, a record that fails its check).
bool coord_open_journal(Coordinator *c, const char *path, const JournalIdentity *identity,
                        JournalReplayStats *stats, char *why, size_t why_len);
/// The run id the journal keeps (new for a new run, the same when resumed).
const char *coord_run_id(const Coordinator *c);

/// Journals a kind's own record (key gets COORD_KEY_EXTRA); false: the run is failing.
bool coord_journal_extra(Coordinator *c, uint64_t key, const void *payload, size_t len);

/// Before coord_run: how a signalled run drains. grace_ms ([job] drain_grace): the units in
/// hand may finish within it, no new ones are handed out; then the rest are dropped (0: at
/// once). rank0_plays ([job] coordinator_plays): rank 0 runs a worker too, one more BYE.
void coord_set_drain(Coordinator *c, int grace_ms);
/// The engines built from source whose bench signatures admission checks (none by default).
void coord_set_engines(Coordinator *c, const CoordEngines *e);
/// The flag that says the launcher is about to kill the ranks (Open MPI's mpirun SIGKILLs
/// them about a second after its SIGTERM; cli/signals.c's handler sets it on a SIGTERM from
/// the launcher): the drain's grace ends at once, the ranks' BYEs are awaited half a second,
/// then rank 0 ends without those still out (a dead rank), so result.json and the report
/// are written before the kill. NULL (the default): never.
void coord_set_hurry(Coordinator *c, const atomic_bool *hurry);
void coord_set_rank0_plays(Coordinator *c, bool plays);
/// verbose (run --verbose): coord_run prints the "Coordinator:" diagnostics line when it ends.
void coord_set_verbose(Coordinator *c, bool verbose);

/// Runs the protocol until every expected worker said BYE. Returns the end state.
CoordEnd coord_run(Coordinator *c);

/// Stops the run with an error (a kind's write failure), naming why.
void coord_fail(Coordinator *c, const char *why);

const CoordState *coord_state(const Coordinator *c);

void coord_load(const Coordinator *c, CoordLoad *out);

/// The exit status of an ended run: 0 done, 1 failed, 130 interrupted.
int coord_exit_status(const CoordState *st);
