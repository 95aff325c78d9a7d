// SPDX-License-Identifier: MIT
// Rank 0's protocol loop for every job kind. The protocol and the invariants this file keeps
// (journal before count, trust nothing a rank sends, units back from a rank that leaves, STOP
// done versus interrupted) are stated at the top of coordinator.h.
#include "coordinator.h"

#include "job.h" // job_time_scale: a worker's clock factor, for its admission line

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/// A result checked and staged in the journal, counted once its batch is durable. It is kept
/// packed (a few KiB; an unpacked WireResult is about 1.9 MB) and unpacked again to count.
typedef struct {
    size_t off, len;    // its bytes in the coordinator's batch_bytes
    uint64_t unit, end; // end: where the journal ends with this record (a cut point)
    int src;
} Staged;

/// Units handed to one rank and not yet done.
typedef struct {
    uint64_t *ids;
    int n, cap;
} InFlight;

struct Coordinator {
    CoordConfig cfg;
    CoordEngines engines; // built from source: their bench signatures
    CoordKind kind;
    CoordState st;
    Schedule sched;
    InFlight *inflight; // per rank
    uint8_t *said_bye;  // per rank: a second BYE is not another worker leaving
    bool decided;       // a verdict ended the job: later results would change what it said
    Journal *journal;
    msgpack_sbuffer buf;
    int byes;
    Staged batch[COORD_BATCH_MAX]; // group commit: checked results not yet durable
    msgpack_sbuffer batch_bytes;   // their packed messages
    int staged, batch_max;
    uint64_t batch_from;      // where the journal ended before the batch
    bool serve_later;         // units came back while a batch was staged
    double wall_s, cpu_s;     // spent in coord_run
    WireStopCode stop_code;   // what stop_all said, repeated to a rank that asks after it
    int drain_grace_ms;       // a signal lets the units in hand finish within this
    const atomic_bool *hurry; // the launcher kills the ranks soon: no grace (may be NULL)
    int64_t drain_until_ms;   // while draining: when the units still in hand are dropped
    int64_t hurry_until_ms;   // the launcher's kill is coming: BYEs are awaited until then
    int drain_in_hand;        // units handed out and not counted when the signal came
    uint64_t drain_done0;     // st.units_done then
    bool verbose;             // print the "Coordinator:" line at the end
};

static int64_t drain_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

Coordinator *coord_new(const CoordConfig *cfg, const CoordKind *kind)
{
    Coordinator *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = *cfg;
    c->kind = *kind;
    int n = cfg->ch->size;
    c->st.ranks = n;
    c->st.units_total = cfg->units_total;
    c->st.workers_expected = n == 1 ? 1 : n - 1; // one rank: rank 0 runs a worker thread
    c->st.rank = calloc((size_t)n, sizeof *c->st.rank);
    c->inflight = calloc((size_t)n, sizeof *c->inflight);
    c->said_bye = calloc((size_t)n, 1);
    // A build's COORD_BATCH_MAX of 0 would stage forever: one result per commit at least.
    c->batch_max = COORD_BATCH_MAX > 0 ? COORD_BATCH_MAX : 1;
    msgpack_sbuffer_init(&c->buf);
    msgpack_sbuffer_init(&c->batch_bytes);
    if (!c->st.rank || !c->inflight || !c->said_bye ||
        schedule_init(&c->sched, cfg->units_total) != 0) {
        coord_free(c);
        return NULL;
    }
    return c;
}

void coord_free(Coordinator *c)
{
    if (!c)
        return;
    for (int r = 0; c->inflight && r < c->st.ranks; r++)
        free(c->inflight[r].ids);
    free(c->inflight);
    free(c->said_bye);
    free(c->st.rank);
    schedule_destroy(&c->sched);
    journal_close(c->journal);
    msgpack_sbuffer_destroy(&c->buf);
    msgpack_sbuffer_destroy(&c->batch_bytes);
    free(c);
}

const CoordState *coord_state(const Coordinator *c) { return &c->st; }

void coord_set_drain(Coordinator *c, int grace_ms) { c->drain_grace_ms = grace_ms; }

void coord_set_engines(Coordinator *c, const CoordEngines *e) { c->engines = *e; }

void coord_set_hurry(Coordinator *c, const atomic_bool *hurry) { c->hurry = hurry; }

/// Whether the launcher is about to kill the ranks (coord_set_hurry).
static bool hurried(const Coordinator *c) { return c->hurry && atomic_load(c->hurry); }

void coord_set_rank0_plays(Coordinator *c, bool plays)
{
    // With one rank, rank 0 is the only worker whatever the job says (coord_new counted it).
    if (c->st.ranks > 1)
        c->st.workers_expected = plays ? c->st.ranks : c->st.ranks - 1;
}

void coord_set_verbose(Coordinator *c, bool verbose) { c->verbose = verbose; }

int coord_exit_status(const CoordState *st)
{
    // 130 is the shell's status for SIGINT (128 + 2): a script tells an interrupt from a failure.
    return st->end == COORD_DONE ? 0 : st->end == COORD_INTERRUPTED ? 130 : 1;
}

// ---- Units in flight ----------------------------------------------------------------------

/// Adds id to a rank's units in hand; false when out of memory (give_units then takes the
/// units back).
static bool inflight_add(InFlight *f, uint64_t id)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        uint64_t *p = realloc(f->ids, sizeof *p * (size_t)cap);
        if (!p)
            return false;
        f->ids = p;
        f->cap = cap;
    }
    f->ids[f->n++] = id;
    return true;
}

/// Takes id out of a rank's units in hand (their order does not matter); false when the rank
/// did not hold it: the test that keeps a rank from sending a unit that is not its own.
static bool inflight_remove(InFlight *f, uint64_t id)
{
    for (int i = 0; i < f->n; i++)
        if (f->ids[i] == id) {
            f->ids[i] = f->ids[--f->n];
            return true;
        }
    return false;
}

/// Gives the units of rank r back to the schedule; returns how many.
static int release_rank(Coordinator *c, int r)
{
    // A unit already done stays done: it never goes back to the schedule to be played twice.
    InFlight *f = &c->inflight[r];
    int n = 0;
    for (int i = 0; i < f->n; i++)
        if (!schedule_is_done(&c->sched, f->ids[i])) {
            schedule_release(&c->sched, f->ids[i]);
            n++;
        }
    f->n = 0;
    return n;
}

// ---- Sending ------------------------------------------------------------------------------

/// STOP goes under LINK_TAG_ORDER, so r takes every WORK sent before it first (coordinator.h).
static void send_stop(Coordinator *c, int r, WireStopCode code, const char *text)
{
    WireStop stop = {(uint32_t)code, ""};
    snprintf(stop.text, sizeof stop.text, "%.*s", WIRE_MAX_TEXT, text);
    channel_send(c->cfg.ch, r, LINK_TAG_ORDER, wire_pack_stop(&stop, &c->buf), &c->buf);
}

/// Stops every admitted rank. The code is kept: a rank that asks for work later hears the
/// same one (on_request). A rank refused or gone has nothing to stop.
static void stop_all(Coordinator *c, WireStopCode code, const char *text)
{
    c->st.stopping = true;
    c->stop_code = code;
    for (int r = 0; r < c->st.ranks; r++)
        if (c->st.rank[r].state == COORD_RANK_MEMBER)
            send_stop(c, r, code, text);
}

void coord_fail(Coordinator *c, const char *why)
{
    // The first failure is the run's reason; later ones are its consequences.
    if (c->st.end == COORD_FAILED)
        return;
    fprintf(stderr, "\nxqforge run: %s; stopping\n", why);
    c->st.end = COORD_FAILED;
    snprintf(c->st.reason, sizeof c->st.reason, "%s", why);
    stop_all(c, WIRE_STOP_ERROR, "the coordinator failed");
}

/// Hands up to n units to rank r; false if none was left (or the run failed).
static bool give_units(Coordinator *c, int r, int n)
{
    // One WORK message holds at most WIRE_MAX_PAIRS_PER_WORK units (the wire's bound).
    WireWork work = {.job_id = c->cfg.job_id};
    if (c->kind.unit_limit)
        c->sched.limit = c->kind.unit_limit(c->kind.ctx);
    work.unit_count = schedule_take(&c->sched, work.unit_ids,
                                    n < WIRE_MAX_PAIRS_PER_WORK ? n : WIRE_MAX_PAIRS_PER_WORK);
    if (work.unit_count == 0)
        return false;
    char why[512] = "out of memory";
    bool ok = true;
    for (int i = 0; i < work.unit_count && ok; i++)
        ok = inflight_add(&c->inflight[r], work.unit_ids[i]);
    // attach journals what the WORK needs (an SPSA step) before the WORK exists; if anything
    // fails the units go back untouched and the run fails, so no unit is in hand half-made.
    if (ok && c->kind.attach)
        ok = c->kind.attach(c->kind.ctx, c, &work, why, sizeof why);
    if (!ok) {
        for (int i = 0; i < work.unit_count; i++) {
            inflight_remove(&c->inflight[r], work.unit_ids[i]);
            schedule_release(&c->sched, work.unit_ids[i]);
        }
        coord_fail(c, why);
        return false;
    }
    // A failed send leaves the units in r's hand: they go back when r leaves or is refused.
    if (!channel_send(c->cfg.ch, r, LINK_TAG_ORDER, wire_pack_work(&work, &c->buf), &c->buf))
        fprintf(stderr, "\nxqforge run: cannot send work to rank %d\n", r);
    return true;
}

/// Units came back: the ranks waiting for work get them first.
static void serve_waiting(Coordinator *c)
{
    // No WORK (nor the SPSA step it journals) while results are staged: it waits for them.
    if (c->staged) {
        c->serve_later = true;
        return;
    }
    for (int r = 0; r < c->st.ranks && !c->st.stopping; r++) {
        CoordRank *k = &c->st.rank[r];
        if (k->state == COORD_RANK_MEMBER && k->waiting && give_units(c, r, (int)k->waiting))
            k->waiting = 0;
    }
}

/// Refuses rank r (a bench mismatch, garbage sent): it is told why and its units go back.
static void refuse_rank(Coordinator *c, int r, const char *why)
{
    CoordRank *k = &c->st.rank[r];
    // Only a member counts as live; a rank refused or gone already is not refused twice.
    if (k->state == COORD_RANK_MEMBER)
        c->st.workers_live--;
    if (k->state == COORD_RANK_REFUSED || k->state == COORD_RANK_LEFT)
        return;
    k->state = COORD_RANK_REFUSED;
    k->waiting = 0;
    snprintf(k->error, sizeof k->error, "%s", why);
    fprintf(stderr, "\nrank %d (%s) refused: %s\n", r, k->host[0] ? k->host : "?", why);
    WireRefuse ref;
    snprintf(ref.reason, sizeof ref.reason, "%.*s", WIRE_MAX_TEXT, why);
    channel_send(c->cfg.ch, r, LINK_TAG_ORDER, wire_pack_refuse(&ref, &c->buf), &c->buf);
    // Its units go to the ranks that wait now, not at their next REQUEST.
    if (release_rank(c, r))
        serve_waiting(c);
}

// ---- The journal ---------------------------------------------------------------------------

/// The unit a result message reports, or false when it is not one unit of this kind.
static bool result_unit(const Coordinator *c, const WireMessage *m, uint64_t *unit,
                        uint64_t *job_id, uint32_t *rank)
{
    return m->kind == c->kind.result_kind && wire_unit_of(m, unit, job_id, rank);
}

/// The one place a unit counts: the schedule, the run's totals and the rank's figures move
/// together, then the kind counts it. A rank beyond this run's size (a journal of a larger
/// run, resumed on fewer ranks) is counted as earlier, not as a rank's.
/// Counts a journaled unit for rank r (live or replayed).
static bool count_unit(Coordinator *c, uint64_t unit, int r, const WireMessage *m, bool replay,
                       char *why, size_t why_len)
{
    schedule_finish(&c->sched, unit);
    c->st.units_done++;
    if (replay)
        c->st.units_at_start++;
    if (r >= 0 && r < c->st.ranks) {
        c->st.rank[r].units++;
        c->st.rank[r].units_session += !replay;
    } else {
        c->st.units_earlier++;
    }
    return c->kind.count(c->kind.ctx, unit, m, replay, why, why_len);
}

typedef struct {
    Coordinator *c;
    char *why;
    size_t why_len;
    uint64_t beyond; // records of units beyond this run's total
} Replay;

/// journal_open's callback, once per record in the order written. A journaled result is
/// trusted no more than a live one: it is unpacked, checked by the kind again and only then
/// counted (replayed). Non-zero stops the open, with the reason in rp->why.
static int replay_record(void *ctx, uint64_t key, const void *payload, size_t len)
{
    Replay *rp = ctx;
    Coordinator *c = rp->c;
    if (key & COORD_KEY_EXTRA) {
        if (c->kind.replay_extra &&
            c->kind.replay_extra(c->kind.ctx, key, payload, len, rp->why, rp->why_len))
            return 0;
        if (!c->kind.replay_extra)
            snprintf(rp->why, rp->why_len, "journal record %llu: a record of another kind of job",
                     (unsigned long long)key);
        return 1;
    }
    WireMessage m;
    char why[256] = "";
    uint64_t unit = 0, job_id = 0;
    uint32_t rank = 0;
    if (wire_unpack(payload, len, &m, why, sizeof why) != WIRE_OK ||
        !result_unit(c, &m, &unit, &job_id, &rank) || unit != key) {
        snprintf(rp->why, rp->why_len, "journal record %llu is not a result of this kind (%s)",
                 (unsigned long long)key, why[0] ? why : "another kind of message");
        wire_message_destroy(&m);
        return 1;
    }
    int rc = 0;
    if (unit >= c->st.units_total) {
        rp->beyond++; // a resumed run with fewer rounds: not counted
    } else if (!c->kind.check(c->kind.ctx, unit, &m, why, sizeof why)) {
        snprintf(rp->why, rp->why_len, "journal record %llu fails its check: %s",
                 (unsigned long long)key, why);
        rc = 1;
    } else if (!count_unit(c, unit, (int)rank, &m, true, why, sizeof why)) {
        snprintf(rp->why, rp->why_len, "%s", why);
        rc = 1;
    }
    wire_message_destroy(&m);
    return rc;
}

const char *coord_run_id(const Coordinator *c)
{
    return c->journal ? journal_run_id(c->journal) : "";
}

bool coord_open_journal(Coordinator *c, const char *path, const JournalIdentity *identity,
                        JournalReplayStats *stats, char *why, size_t why_len)
{
    char jwhy[512] = "";
    Replay rp = {c, why, why_len, 0};
    why[0] = '\0';
    JournalStatus js =
        journal_open(&c->journal, path, identity, replay_record, &rp, stats, jwhy, sizeof jwhy);
    // replay_record already said why.
    if (js == JOURNAL_ERR_CALLBACK)
        return false;
    if (js != JOURNAL_OK) {
        snprintf(why, why_len, "journal %s: %s (%s)", path, journal_strerror(js), jwhy);
        return false;
    }
    if (rp.beyond)
        printf("Journal: %llu results beyond this run's %llu units are not counted\n",
               (unsigned long long)rp.beyond, (unsigned long long)c->st.units_total);
    return true;
}

bool coord_journal_extra(Coordinator *c, uint64_t key, const void *payload, size_t len)
{
    if (c->st.end == COORD_FAILED)
        return false;
    // journal_append syncs at once and would commit a staged batch with it, uncounted: hence
    // no WORK (whose attach lands here) goes out while results are staged (serve_waiting).
    if (journal_append(c->journal, COORD_KEY_EXTRA | key, payload, len) == JOURNAL_OK)
        return true;
    char why[sizeof c->st.reason];
    snprintf(why, sizeof why, "journal: %.480s", journal_last_error(c->journal));
    coord_fail(c, why);
    return false;
}

// ---- Messages -----------------------------------------------------------------------------

/// Each engine built from source must give the signature the job declares (bench = N) or
/// rank 0's (bench = auto): another one is another build (build_env, compiler, CPU level).
static bool engines_agree(Coordinator *c, int src, const WireHello *h)
{
    for (int i = 0; i < c->engines.count; i++) {
        uint64_t want = c->engines.bench[i], got = i < h->engine_count ? h->engine_bench[i] : 0;
        if (!want || got == want)
            continue;
        char why[WIRE_MAX_TEXT + 1];
        snprintf(why, sizeof why, "engine '%s': bench signature %llu differs from %llu (%s)",
                 c->engines.name[i], (unsigned long long)got, (unsigned long long)want,
                 c->engines.declared[i] ? "the job's bench" : "rank 0's, bench = auto");
        refuse_rank(c, src, why);
        return false;
    }
    return true;
}

static void on_hello(Coordinator *c, int src, const WireHello *h)
{
    CoordRank *k = &c->st.rank[src];
    if (k->state != COORD_RANK_UNKNOWN)
        return; // a second HELLO changes nothing
    snprintf(k->host, sizeof k->host, "%s", h->hostname);
    k->bench_nps = h->bench_nps;
    k->threads = (int)h->concurrency;
    // Admission: the same bench signature means the same build, so the same rules and search on
    // every rank; a result from another build would not be comparable.
    if (h->bench_signature != c->cfg.bench_signature) {
        char why[WIRE_MAX_TEXT + 1];
        snprintf(why, sizeof why,
                 "bench signature %llu differs from the coordinator's %llu: rebuild the same "
                 "xqforge everywhere",
                 (unsigned long long)h->bench_signature,
                 (unsigned long long)c->cfg.bench_signature);
        refuse_rank(c, src, why);
        return;
    }
    if (!engines_agree(c, src, h))
        return;
    if (h->bench_nps < c->cfg.min_bench_nps) { // [time] nps_floor: too slow to be scaled
        char why[WIRE_MAX_TEXT + 1];
        snprintf(why, sizeof why,
                 "bench %llu nodes/s is below the job's [time] nps_floor of %llu nodes/s",
                 (unsigned long long)h->bench_nps, (unsigned long long)c->cfg.min_bench_nps);
        refuse_rank(c, src, why);
        return;
    }
    // Admitted: from now on its requests are served and its results may count.
    k->state = COORD_RANK_MEMBER;
    c->st.workers_live++;
    c->st.workers_admitted++;
    char scale[48] = ""; // the factor the worker gives its clocks, computed as it does
    if (c->cfg.reference_nps)
        snprintf(scale, sizeof scale, ", time x%.3f",
                 job_time_scale(c->cfg.reference_nps, h->bench_nps));
    printf("rank %d on %s joined: %u at once, bench %llu nodes/s%s\n", src, h->hostname,
           h->concurrency, (unsigned long long)h->bench_nps, scale);
}

static void on_request(Coordinator *c, int src, const WireRequest *req)
{
    CoordRank *k = &c->st.rank[src];
    if (k->state != COORD_RANK_MEMBER) {
        // A refused rank may have asked before its REFUSE arrived: nothing to say then.
        if (k->state != COORD_RANK_REFUSED)
            fprintf(stderr, "\nxqforge run: request from rank %d, which is not admitted; ignored\n",
                    src);
        return;
    }
    // A rank that asks after the stop hears the same STOP as the others (stop_all's code).
    if (c->st.stopping) {
        send_stop(c, src, c->stop_code, "no more work");
        return;
    }
    // Results are staged: the WORK waits for their commit (then serve_waiting hands it out).
    if (c->staged) {
        k->waiting = req->units;
        c->serve_later = true;
        return;
    }
    // Nothing left to hand out now: the rank waits until a unit comes back or the job ends.
    if (!give_units(c, src, (int)req->units) && c->st.end != COORD_FAILED)
        k->waiting = req->units;
}

static void check_complete(Coordinator *c);

/// Cuts the records of a batch that were not counted (a verdict given part way) off the
/// journal, which then holds what the verdict saw; end: where the batch's commit ended it.
static void cut_batch(Coordinator *c, uint64_t to, uint64_t end)
{
    char why[512];
    if (journal_staged_end(c->journal) != end) { // a record after the batch: keep it whole
        coord_fail(c, "journal: a record was written between a batch's commit and its cut");
        return;
    }
    if (journal_cut(c->journal, to) != JOURNAL_OK) {
        snprintf(why, sizeof why, "journal: %.480s", journal_last_error(c->journal));
        coord_fail(c, why);
    }
}

/// Group commit: makes the staged results durable with one write and one fdatasync, then
/// counts them in the order they came. A failed commit counts none of them and fails the
/// run. A verdict given part way ends the counting (the rest are cut off the journal).
/// The WORK that waited for the batch goes out last.
static void commit_batch(Coordinator *c)
{
    int n = c->staged, counted = 0;
    char why[512];
    c->staged = 0;
    if (n > 0 && journal_commit(c->journal) != JOURNAL_OK) {
        snprintf(why, sizeof why, "journal: %.480s", journal_last_error(c->journal));
        coord_fail(c, why);
    } else if (n > 0) {
        uint64_t end = journal_staged_end(c->journal);
        // One at a time, each followed by check_complete: a verdict sees exactly the results
        // counted before it, and the ones after it do not count.
        for (; counted < n && !c->decided && c->st.end != COORD_FAILED; counted++) {
            Staged *b = &c->batch[counted];
            WireMessage m;
            char wwhy[256];
            // The same bytes as the journal's record: they were unpacked and checked once.
            if (wire_unpack(c->batch_bytes.data + b->off, b->len, &m, wwhy, sizeof wwhy) !=
                WIRE_OK) {
                snprintf(why, sizeof why, "a staged result cannot be read back: %s", wwhy);
                coord_fail(c, why);
            } else if (!count_unit(c, b->unit, b->src, &m, false, why, sizeof why)) {
                coord_fail(c, why);
            }
            wire_message_destroy(&m);
            check_complete(c);
        }
        if (counted < n && c->decided)
            cut_batch(c, counted ? c->batch[counted - 1].end : c->batch_from, end);
    }
    // What was not counted (a failure, a verdict part way) is not done: back to the schedule.
    for (int i = counted; i < n; i++)
        schedule_release(&c->sched, c->batch[i].unit);
    msgpack_sbuffer_clear(&c->batch_bytes);
    if (counted && c->kind.tick)
        c->kind.tick(c->kind.ctx, &c->st, false);
    // A kind that holds units back may have let some go (a DOE round ended).
    if (c->serve_later || (counted && c->kind.unit_limit)) {
        c->serve_later = false;
        serve_waiting(c);
    }
}

/// Takes a result: checks it and stages its journal record; it counts once its batch is
/// durable (commit_batch).
static void stage_result(Coordinator *c, int src, const WireMessage *m)
{
    CoordRank *k = &c->st.rank[src];
    uint64_t unit = 0, job_id = 0;
    uint32_t rank = 0;
    char why[512];
    if (c->st.end == COORD_FAILED || c->decided)
        return; // nothing more can be journaled, or the verdict stands as it was given
    // Not admitted, refused or gone: what it sends does not count (a refused or leaving rank's
    // units went back already).
    if (k->state != COORD_RANK_MEMBER) {
        fprintf(stderr, "\nxqforge run: a result from rank %d, which is not admitted; ignored\n",
                src);
        return;
    }
    if (!result_unit(c, m, &unit, &job_id, &rank) || rank != (uint32_t)src ||
        job_id != c->cfg.job_id) {
        refuse_rank(c, src, "sent a result that is not one unit of this job");
        return;
    }
    // Only a unit handed to this very rank and not yet done may count (coordinator.h).
    if (unit >= c->st.units_total || schedule_is_done(&c->sched, unit) ||
        !inflight_remove(&c->inflight[src], unit)) {
        fprintf(stderr,
                "\nxqforge run: rank %d sent unit %llu, which is not its to send; ignored\n", src,
                (unsigned long long)unit);
        return;
    }
    if (!c->kind.check(c->kind.ctx, unit, m, why, sizeof why)) {
        char text[700];
        snprintf(text, sizeof text, "unit %llu: %s", (unsigned long long)unit, why);
        schedule_release(&c->sched, unit);
        refuse_rank(c, src, text);
        serve_waiting(c); // the unit may have been the rank's last: refuse_rank saw none
        return;
    }
    // Journal first: a result counts only once it is durable (commit_batch).
    if (!c->staged)
        c->batch_from = journal_staged_end(c->journal);
    size_t off = c->batch_bytes.size;
    JournalStatus js = JOURNAL_ERR_NOMEM;
    if (wire_pack(m, &c->buf) == WIRE_OK &&
        msgpack_sbuffer_write(&c->batch_bytes, c->buf.data, c->buf.size) == 0)
        js = journal_stage(c->journal, unit, c->buf.data, c->buf.size);
    size_t len = c->buf.size;
    msgpack_sbuffer_clear(&c->buf);
    if (js != JOURNAL_OK) {
        // This result is dropped; the ones staged before it are whole and are still committed.
        c->batch_bytes.size = off;
        schedule_release(&c->sched, unit);
        commit_batch(c); // the results staged before it are whole
        snprintf(why, sizeof why, "journal: %s",
                 js == JOURNAL_ERR_FAILED ? journal_last_error(c->journal) : journal_strerror(js));
        coord_fail(c, why);
        return;
    }
    c->batch[c->staged++] = (Staged){off, len, unit, journal_staged_end(c->journal), src};
    if (c->staged == c->batch_max)
        commit_batch(c);
}

/// Takes one message, first's tag before second's. A message that fails validation costs
/// its sender its admission: a rank that sends garbage may send wrong results too.
static bool poll_one(Coordinator *c, LinkTag first, LinkTag second, int *src, WireMessage *m)
{
    int rejected = -1;
    if (channel_receive(c->cfg.ch, first, second, src, m, &rejected))
        return true;
    if (rejected >= 0 && rejected < c->st.ranks)
        refuse_rank(c, rejected, "sent a message that is not valid");
    return false;
}

static void dispatch(Coordinator *c, int src, WireMessage *m);

static void on_bye(Coordinator *c, int src, const WireBye *b)
{
    // Its results were sent before its BYE, under another tag: take them first.
    int s;
    WireMessage m;
    while (poll_one(c, LINK_TAG_RESULT, LINK_TAG_RESULT, &s, &m)) {
        dispatch(c, s, &m);
        wire_message_destroy(&m);
    }
    commit_batch(c);
    // A repeated BYE is not another worker leaving.
    if (c->said_bye[src])
        return;
    c->said_bye[src] = 1;
    c->byes++;
    CoordRank *k = &c->st.rank[src];
    if (b->error[0]) {
        snprintf(k->error, sizeof k->error, "%s", b->error);
        fprintf(stderr, "\nrank %d (%s) failed: %s\n", src, k->host[0] ? k->host : "?", b->error);
    }
    // A refused rank's units went back when it was refused; nothing more to release.
    if (k->state != COORD_RANK_MEMBER)
        return;
    k->state = COORD_RANK_LEFT;
    k->waiting = 0;
    c->st.workers_live--;
    int released = release_rank(c, src);
    if (released && !c->st.stopping && c->st.workers_live > 0)
        printf("\nrank %d left with %d unit%s unfinished: %s to the others\n", src, released,
               released == 1 ? "" : "s", released == 1 ? "it goes" : "they go");
    serve_waiting(c);
}

/// Routes one message. Results are staged, a REQUEST may wait for the batch (on_request);
/// anything else (HELLO, BYE) first commits the batch, so state changes see every result
/// that came before them.
static void dispatch(Coordinator *c, int src, WireMessage *m)
{
    if (src < 0 || src >= c->st.ranks)
        return;
    if (!wire_is_unit_result(m->kind) && m->kind != WIRE_REQUEST)
        commit_batch(c); // the results that came before this message count first
    switch (m->kind) {
    case WIRE_HELLO: on_hello(c, src, &m->hello); break;
    case WIRE_REQUEST: on_request(c, src, &m->request); break;
    case WIRE_BYE: on_bye(c, src, &m->bye); break;
    default:
        if (wire_is_unit_result(m->kind))
            stage_result(c, src, m);
        else
            fprintf(stderr, "\nxqforge run: unexpected %s from rank %d\n", wire_kind_name(m->kind),
                    src);
    }
}

/// Asks the kind whether the job is complete; all units done completes it anyway. A verdict
/// that abandons the units in progress sets decided: from then on no result counts, and the
/// STOP is "interrupted" so the workers drop what they hold. Once stopping, nothing to ask.
static void check_complete(Coordinator *c)
{
    if (c->st.stopping)
        return;
    bool abandon = false;
    char verdict[256] = "";
    bool done = c->kind.complete(c->kind.ctx, &c->st, &abandon, verdict, sizeof verdict);
    if (!done && c->st.units_done < c->st.units_total)
        return;
    c->st.end = COORD_DONE;
    c->decided = abandon;
    snprintf(c->st.reason, sizeof c->st.reason, "%s", verdict);
    stop_all(c, abandon ? WIRE_STOP_INTERRUPTED : WIRE_STOP_DONE,
             verdict[0] ? verdict : "the job is complete");
}

/// Why a run whose workers all left before the job was complete failed.
static void explain_failure(Coordinator *c)
{
    CoordState *st = &c->st;
    st->end = COORD_FAILED;
    for (int r = 0; r < st->ranks; r++)
        if (st->rank[r].error[0]) {
            snprintf(st->reason, sizeof st->reason, "%s rank %d: %s",
                     st->workers_admitted == 0 ? "no worker could play:" : "workers failed:", r,
                     st->rank[r].error);
            return;
        }
    snprintf(st->reason, sizeof st->reason, "every worker left with %llu units unplayed",
             (unsigned long long)(st->units_total - st->units_done));
}

/// A signal (an operator's, Slurm's): no unit is handed out any more; with a grace the units
/// in hand may finish (STOP done) until it ends, then the rest are dropped (STOP interrupted).
/// A dropped unit is not journaled: a resumed run plays it.
static void drain(Coordinator *c)
{
    // The launcher SIGKILLs every rank about a second after its SIGTERM: BYEs are awaited
    // half of that, then rank 0 ends without the ranks still out (a dead one never says
    // BYE), so result.json and the report are written before the kill.
    if (!c->hurry_until_ms && hurried(c))
        c->hurry_until_ms = drain_now_ms() + 500;
    if (c->cfg.interrupted && atomic_load(c->cfg.interrupted) && !c->st.stopping) {
        c->st.end = COORD_INTERRUPTED;
        snprintf(c->st.reason, sizeof c->st.reason, "interrupted");
        c->drain_in_hand = c->staged; // taken, not yet durable
        for (int r = 0; r < c->st.ranks; r++)
            c->drain_in_hand += c->inflight[r].n;
        c->drain_done0 = c->st.units_done;
        bool hurry = hurried(c);
        if (c->drain_grace_ms > 0 && !hurry) {
            printf("\nInterrupted: no new units; those in progress may finish within %d s\n",
                   c->drain_grace_ms / 1000);
            c->drain_until_ms = drain_now_ms() + c->drain_grace_ms;
            stop_all(c, WIRE_STOP_DONE, "interrupted: finish the units in hand");
            return;
        }
        if (c->drain_grace_ms > 0)
            printf("\nInterrupted by the launcher, which kills the ranks a second later: no "
                   "grace; keeping every result that arrives\n");
        else
            printf("\nInterrupted: finishing, keeping every result that arrives\n");
        stop_all(c, WIRE_STOP_INTERRUPTED, "interrupted");
    } else if (c->drain_until_ms && hurried(c)) {
        c->drain_until_ms = 0;
        printf("\nThe launcher is ending the ranks: the grace ends now, the units in progress "
               "are dropped\n");
        stop_all(c, WIRE_STOP_INTERRUPTED, "interrupted");
    } else if (c->drain_until_ms && drain_now_ms() >= c->drain_until_ms) {
        c->drain_until_ms = 0;
        printf("\nThe drain's grace is over: the units in progress are dropped\n");
        stop_all(c, WIRE_STOP_INTERRUPTED, "interrupted");
    }
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/// The process's CPU time, user and system.
static double cpu_now(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/// The process's peak resident memory (VmHWM) in KiB; 0 when unknown.
static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

void coord_load(const Coordinator *c, CoordLoad *out)
{
    *out = (CoordLoad){.results = c->st.units_done - c->st.units_at_start,
                       .cpu_s = c->cpu_s,
                       .wall_s = c->wall_s,
                       .peak_kib = peak_kib()};
    if (c->journal)
        journal_counters(c->journal, &out->journal);
}

static void print_load(const Coordinator *c)
{
    CoordLoad ld;
    coord_load(c, &ld);
    double per = ld.results ? (double)ld.results : 1.0;
    printf("\nCoordinator: %llu results in %.2f s, CPU %.3f s, fdatasync %.3f s, journal %llu "
           "syncs %llu bytes (%.3f syncs and %.0f bytes per result), peak memory %ld KiB\n",
           (unsigned long long)ld.results, ld.wall_s, ld.cpu_s, ld.journal.sync_s,
           (unsigned long long)ld.journal.syncs, (unsigned long long)ld.journal.bytes,
           (double)ld.journal.syncs / per, (double)ld.journal.bytes / per, ld.peak_kib);
}

/// How long a batch not yet full may wait for more results once none is waiting: half the
/// mean fdatasync time so far, at most COORD_HOLD_MAX_MS (a sync costs more than the wait).
static int hold_ms(const Coordinator *c)
{
    JournalCounters jc;
    journal_counters(c->journal, &jc);
    int ms = jc.syncs ? (int)(500.0 * jc.sync_s / (double)jc.syncs) : 0;
    return ms < COORD_HOLD_MAX_MS ? ms : COORD_HOLD_MAX_MS;
}

CoordEnd coord_run(Coordinator *c)
{
    double wall0 = wall_now(), cpu0 = cpu_now();
    // A resumed run whose journal completes the job stops its workers at their first request.
    check_complete(c);
    int poll_ms = c->cfg.poll_ms > 0 ? c->cfg.poll_ms : 20, idle_ms = 1, held_ms = 0;
    // The loop ends when every expected worker said BYE, not when the job is complete: results
    // still on their way are taken, and a rank that leaves early gives its units to the others.
    while (c->byes < c->st.workers_expected) {
        drain(c);
        if (c->hurry_until_ms && c->st.stopping && drain_now_ms() >= c->hurry_until_ms) {
            printf("\n%d worker rank(s) did not say BYE before the launcher's kill: ending "
                   "without them\n",
                   c->st.workers_expected - c->byes);
            break;
        }
        if (c->kind.tick)
            c->kind.tick(c->kind.ctx, &c->st, false);
        int src;
        WireMessage m;
        if (!poll_one(c, LINK_TAG_RESULT, LINK_TAG_CONTROL, &src, &m)) {
            if (c->staged && c->staged < c->batch_max && held_ms < hold_ms(c)) {
                sleep_ms(1); // results may be on their way: they would share the sync
                held_ms++;
                continue;
            }
            if (c->staged) { // nothing more waiting: what was taken becomes durable, counts
                held_ms = 0;
                commit_batch(c);
                continue;
            }
            // A busy run's next message is a millisecond away: the sleep grows from 1 ms
            // to poll_ms only while nothing comes.
            sleep_ms(idle_ms);
            idle_ms = 2 * idle_ms < poll_ms ? 2 * idle_ms : poll_ms;
            continue;
        }
        idle_ms = 1;
        dispatch(c, src, &m);
        wire_message_destroy(&m);
        check_complete(c);
    }
    // Nothing stays staged after the loop: it counts (or fails the run) before the end is read.
    commit_batch(c);
    // Every worker left, and neither the job's end, an interrupt nor a failure was recorded.
    if (c->st.end == COORD_RUNNING)
        explain_failure(c);
    if (c->st.end == COORD_INTERRUPTED) { // no unit was handed out since: all were in hand
        int finished = (int)(c->st.units_done - c->drain_done0);
        printf("\nDrained: %d of the %d unit%s in progress finished, %d dropped (played on "
               "resume)\n",
               finished, c->drain_in_hand, c->drain_in_hand == 1 ? "" : "s",
               c->drain_in_hand - finished);
    }
    c->wall_s += wall_now() - wall0;
    c->cpu_s += cpu_now() - cpu0;
    coord_load(c, &c->st.load);
    if (c->verbose)
        print_load(c);
    return c->st.end;
}
