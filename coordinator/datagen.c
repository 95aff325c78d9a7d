// SPDX-License-Identifier: MIT
#include "datagen.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyset.h"
#include "posdata.h"
#include "run_report.h"
#include "timeman.h"

// A directory and a file name, both job texts, with the '/' and the NUL.
enum { PATH_MAX_LEN = 2 * JOB_TEXT_MAX + 2 };

/// A unit's figures and records, kept until its turn to commit comes.
typedef struct {
    uint64_t unit;
    uint32_t games;
    uint64_t filtered[WIRE_DATAGEN_FILTERS];
    int count;
    uint8_t *records;
} Pending;

struct DatagenCoord {
    const JobConfig *job;
    char dir[JOB_TEXT_MAX];
    char path[PATH_MAX_LEN]; // the positions file
    char run_id[64];
    PosWriter *w; // NULL once closed
    KeySet keys;  // every accepted position's key: the run's dedup
    uint64_t accepted, duplicates, records, games, units;
    uint64_t red_wins, draws, black_wins; // of the accepted records' games
    uint64_t accepted_at_start, games_at_start;
    // The workers' positions by filter (WireDatagenFilter), summed over the units, and the
    // records they sent: seen = sent + every skip.
    uint64_t filtered[WIRE_DATAGEN_FILTERS], sent;
    int64_t start_ms, last_progress_ms;
    int cores; // the most threads the admitted ranks had at once (throughput per core)
    // Units counted ahead of the commit point, kept until every unit below them is in: the
    // file is then the same on 1 or N ranks, and after a kill (coordinator/books.c does the same).
    uint64_t next_commit;
    Pending *pending;
    size_t pending_n, pending_cap;
    bool failed;
    char error[512];
    RunReport rr;
};

// The filters' names in result.json and the report, in WireDatagenFilter's order.
static const char *const filter_names[WIRE_DATAGEN_FILTERS] = {
    [WIRE_DG_SEEN] = "seen",         [WIRE_DG_OPENING] = "opening",
    [WIRE_DG_UNSCORED] = "unscored", [WIRE_DG_IN_CHECK] = "in_check",
    [WIRE_DG_CAPTURE] = "capture",   [WIRE_DG_EARLY] = "early",
    [WIRE_DG_WDL] = "wdl",           [WIRE_DG_OVERFLOW] = "overflow"};

/// The filters' counts as one object: seen, kept (the records sent), then each skip.
static json_t *filters_json(const DatagenCoord *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "seen", json_integer((json_int_t)d->filtered[WIRE_DG_SEEN]));
    json_object_set_new(o, "kept", json_integer((json_int_t)d->sent));
    for (int i = WIRE_DG_SEEN + 1; i < WIRE_DATAGEN_FILTERS; i++)
        json_object_set_new(o, filter_names[i], json_integer((json_int_t)d->filtered[i]));
    return o;
}

/// The filters' counts as one line: "seen N, kept N; skipped: opening N, ..." (the skips
/// that are not zero).
static void filters_text(const DatagenCoord *d, char *out, size_t len)
{
    size_t n = (size_t)snprintf(
        out, len, "%llu seen, %llu kept; skipped:", (unsigned long long)d->filtered[WIRE_DG_SEEN],
        (unsigned long long)d->sent);
    for (int i = WIRE_DG_SEEN + 1; i < WIRE_DATAGEN_FILTERS && n < len; i++)
        n += (size_t)snprintf(out + n, len - n, "%s %s %llu", i > 1 ? "," : "", filter_names[i],
                              (unsigned long long)d->filtered[i]);
}

/// The job's target counts accepted positions: deduplicated, not records nor games.
static bool reached(const DatagenCoord *d)
{
    return d->accepted >= (uint64_t)d->job->datagen.positions;
}

/// Every record must decode to a legal position (posdata_decode is as strict as a FEN).
static bool datagen_check(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t len)
{
    DatagenCoord *d = ctx;
    const WireDatagenResult *r = m->datagen;
    // A unit is a fixed number of games: that fixes the game ids a unit's records may name.
    if ((int)r->games != d->job->datagen.unit) {
        snprintf(why, len, "unit %llu has %u games, not %d", (unsigned long long)unit,
                 (unsigned)r->games, d->job->datagen.unit);
        return false;
    }
    for (int i = 0; i < r->count; i++) {
        PosRecord rec;
        char rwhy[256];
        if (posdata_decode(r->records + (size_t)i * POSDATA_RECORD, &rec, rwhy, sizeof rwhy)) {
            snprintf(why, len, "unit %llu record %d: %s", (unsigned long long)unit, i, rwhy);
            return false;
        }
        // A record names its game: it must be one of this unit's, past min_ply.
        uint64_t first = unit * (uint64_t)r->games;
        if (rec.game < first || rec.game >= first + r->games || rec.ply < d->job->datagen.min_ply) {
            snprintf(why, len, "unit %llu record %d: game %u ply %d is not one of the unit's",
                     (unsigned long long)unit, i, (unsigned)rec.game, rec.ply);
            return false;
        }
    }
    return true;
}

/// Adds one record unless its position was seen in this run.
/// Dedup by the position's Zobrist key, first come first kept: records are counted in unit
/// order, so any run of the same job, and a replay, keeps the very same ones. A write error fails
/// the run, since the file would no longer hold what the journal says was accepted.
static bool add_record(DatagenCoord *d, const uint8_t *raw)
{
    PosRecord rec;
    if (posdata_decode(raw, &rec, NULL, 0) != POSDATA_OK)
        return true; // checked before it was journaled: only a damaged journal gets here
    int added = keyset_add(&d->keys, board_compute_key(&rec.board));
    if (added < 0) {
        snprintf(d->error, sizeof d->error, "out of memory for the dedup set");
        return false;
    }
    if (added == 0) {
        d->duplicates++;
        return true;
    }
    PosdataStatus ps = posdata_writer_add(d->w, raw);
    if (ps) {
        snprintf(d->error, sizeof d->error, "%.400s: %s", d->path, posdata_strerror(ps));
        return false;
    }
    d->accepted++;
    *(rec.red_result == 1 ? &d->red_wins : rec.red_result == 0 ? &d->black_wins : &d->draws) += 1;
    return true;
}

/// Commits one unit: records past the target are dropped, so the file holds the first
/// `positions` new positions in unit order whatever the order the units came in.
static void commit_unit(DatagenCoord *d, uint32_t games, const uint64_t *filtered, int count,
                        const uint8_t *records)
{
    d->units++;
    d->games += games;
    for (int i = 0; i < WIRE_DATAGEN_FILTERS; i++)
        d->filtered[i] += filtered[i];
    d->sent += (uint64_t)count;
    for (int i = 0; i < count && !reached(d) && !d->failed; i++) {
        d->records++;
        d->failed = !add_record(d, records + (size_t)i * POSDATA_RECORD);
    }
    d->next_commit++;
}

/// Commits the pending units that are next in order.
static void drain_pending(DatagenCoord *d)
{
    for (bool moved = true; moved && !d->failed;) {
        moved = false;
        for (size_t i = 0; i < d->pending_n; i++) {
            Pending *p = &d->pending[i];
            if (p->unit != d->next_commit)
                continue;
            commit_unit(d, p->games, p->filtered, p->count, p->records);
            free(p->records);
            d->pending[i] = d->pending[--d->pending_n];
            moved = true;
            break;
        }
    }
}

/// Counts a unit (live, or replayed from the journal: the file is rebuilt at each start) in
/// unit order: a unit ahead of the commit point waits, with its records, for those below it.
static bool datagen_count(void *ctx, uint64_t unit, const WireMessage *m, bool replay, char *why,
                          size_t len)
{
    DatagenCoord *d = ctx;
    const WireDatagenResult *r = m->datagen;
    (void)replay;
    if (unit == d->next_commit) {
        commit_unit(d, r->games, r->filtered, r->count, r->records);
        drain_pending(d);
    } else if (unit > d->next_commit) {
        if (d->pending_n == d->pending_cap) {
            size_t cap = d->pending_cap ? 2 * d->pending_cap : 16;
            Pending *p = realloc(d->pending, cap * sizeof *p);
            if (!p) {
                snprintf(why, len, "out of memory for the units ahead of unit %llu",
                         (unsigned long long)d->next_commit);
                return false;
            }
            d->pending = p;
            d->pending_cap = cap;
        }
        Pending *p = &d->pending[d->pending_n];
        size_t bytes = (size_t)r->count * POSDATA_RECORD;
        *p = (Pending){unit, r->games, {0}, r->count, malloc(bytes ? bytes : 1)};
        if (!p->records) {
            snprintf(why, len, "out of memory for unit %llu's records", (unsigned long long)unit);
            return false;
        }
        memcpy(p->filtered, r->filtered, sizeof p->filtered);
        memcpy(p->records, r->records, bytes);
        d->pending_n++;
    }
    if (d->failed) {
        snprintf(why, len, "%s", d->error);
        return false;
    }
    return true;
}

static bool datagen_complete(void *ctx, const CoordState *st, bool *abandon, char *verdict,
                             size_t len)
{
    DatagenCoord *d = ctx;
    if (reached(d)) {
        *abandon = true; // the games in progress are beyond what the file needs
        snprintf(verdict, len, "%d positions", d->job->datagen.positions);
        return true;
    }
    // max_games spent before the target: complete (exit 0), and the file is "finished short".
    if (d->next_commit == st->units_total) {
        snprintf(verdict, len, "every game played (max_games)");
        return true;
    }
    return false;
}

/// Cores working: the threads of the ranks admitted and still there, at their most (at the
/// end the ranks have left).
static int cores_of(DatagenCoord *d, const CoordState *st)
{
    int n = 0;
    for (int r = 0; r < st->ranks; r++)
        if (st->rank[r].state == COORD_RANK_MEMBER)
            n += st->rank[r].threads;
    if (n > d->cores)
        d->cores = n;
    return d->cores;
}

/// Worker ranks admitted in this session (at least 1, for the rates).
static int workers_of(const CoordState *st)
{
    return st->workers_admitted > 0 ? st->workers_admitted : 1;
}

/// Accepted positions a second in this session: what the journal's replay brought is not
/// this session's work.
static double rate(const DatagenCoord *d)
{
    double s = (timeman_now_ms() - d->start_ms) / 1000.0;
    return s > 0 ? (double)(d->accepted - d->accepted_at_start) / s : 0;
}

static void progress(DatagenCoord *d, const CoordState *st, bool force)
{
    int64_t now = timeman_now_ms();
    bool tty = run_console_is_terminal();
    // A terminal's line is rewritten every second; a log gets a new line every 10 s at most.
    if (!d->start_ms || (!force && now - d->last_progress_ms < (tty ? 1000 : 10000)))
        return;
    d->last_progress_ms = now;
    int cores = cores_of(d, st);
    printf("%s%llu/%d positions, %llu duplicates, %llu games, %.0f positions/s, %.1f "
           "positions/s per core, %d workers%s",
           tty ? "\r" : "", (unsigned long long)d->accepted, d->job->datagen.positions,
           (unsigned long long)d->duplicates, (unsigned long long)d->games, rate(d),
           cores ? rate(d) / cores : 0.0, st->workers_live, tty ? "   " : "\n");
    fflush(stdout);
}

/// Closes the file whole (count, last checksum) and reopens it to append: readers of the
/// file see the positions so far.
static bool checkpoint(DatagenCoord *d)
{
    char why[512];
    PosdataStatus ps = posdata_writer_close(d->w, why, sizeof why);
    d->w = NULL;
    if (!ps)
        ps = posdata_writer_open(d->path, true, &d->w, why, sizeof why);
    // The run fails at the next datagen_count (d->failed), through the loop's usual path.
    if (ps) {
        snprintf(d->error, sizeof d->error, "%s", why);
        d->failed = true;
    }
    return !ps;
}

/// The file's state for the report and the result: "finished short" is a run that ended
/// done (max_games spent) without the target.
static const char *state_name(const DatagenCoord *d, const CoordState *st, bool final)
{
    if (!final)
        return "running";
    if (st->end == COORD_FAILED)
        return "failed";
    if (st->end == COORD_INTERRUPTED)
        return "interrupted";
    return reached(d) ? "complete" : "finished short";
}

static void refresh(DatagenCoord *d, const CoordState *st, bool final)
{
    Report *r = d->rr.report;
    if (!r)
        return;
    int cores = cores_of(d, st);
    double mins = (timeman_now_ms() - d->start_ms) / 60000.0;
    report_set(r, "state", json_string(state_name(d, st, final)));
    if (final && st->end == COORD_FAILED)
        report_set(r, "reason", json_string(st->reason));
    int workers = workers_of(st);
    report_set(r, "datagen",
               json_pack("{s:i, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:i, s:i, s:{s:I, s:I, s:I}}",
                         "target", d->job->datagen.positions, "positions", (json_int_t)d->accepted,
                         "duplicates", (json_int_t)d->duplicates, "records", (json_int_t)d->records,
                         "games", (json_int_t)d->games, "positions_per_s", rate(d),
                         "positions_per_s_per_worker", rate(d) / workers,
                         "positions_per_s_per_core", cores ? rate(d) / cores : 0.0, "workers",
                         workers, "cores", cores, "results", "red_wins", (json_int_t)d->red_wins,
                         "draws", (json_int_t)d->draws, "black_wins", (json_int_t)d->black_wins));
    report_set(r, "filters", filters_json(d));
    // The facts are written whole each time, so none is left from an earlier refresh.
    report_facts_clear(r);
    report_fact(r, "Positions", "State", "%s", state_name(d, st, final));
    if (final && st->end == COORD_FAILED)
        report_fact(r, "Positions", "Why", "%s", st->reason);
    report_fact(r, "Positions", "Accepted", "%llu of %d (%llu duplicates of %llu records)",
                (unsigned long long)d->accepted, d->job->datagen.positions,
                (unsigned long long)d->duplicates, (unsigned long long)d->records);
    report_fact(r, "Positions", "Games",
                "%llu (Red wins %llu, draws %llu, Black wins %llu of "
                "the accepted positions)",
                (unsigned long long)d->games, (unsigned long long)d->red_wins,
                (unsigned long long)d->draws, (unsigned long long)d->black_wins);
    char ftext[512];
    filters_text(d, ftext, sizeof ftext);
    report_fact(r, "Positions", "Filters", "%s", ftext);
    report_fact(r, "Positions", "File", "%s", d->job->datagen.file);
    report_fact(r, "Throughput", "This session", "%.1f min, %.1f positions/s", mins, rate(d));
    report_fact(r, "Throughput", "Per worker", "%.2f positions/s on %d worker ranks",
                rate(d) / workers, workers);
    report_fact(r, "Throughput", "Per core", "%.2f positions/s on %d cores",
                cores ? rate(d) / cores : 0.0, cores);
    report_fact(r, "Run", "Run id", "%s", d->run_id);
    for (int k = 0; k < st->ranks; k++) {
        const CoordRank *w = &st->rank[k];
        // Never said HELLO and has no journaled units: not a worker of this run.
        if (w->state == COORD_RANK_UNKNOWN && !w->units)
            continue;
        char label[WIRE_MAX_TEXT + 32];
        snprintf(label, sizeof label, "rank %d on %s", k, w->host[0] ? w->host : "?");
        report_fact(r, "Workers", label, "%llu units, %d threads, %llu bench nodes/s%s%s",
                    (unsigned long long)w->units, w->threads, (unsigned long long)w->bench_nps,
                    w->error[0] ? ": " : "", w->error);
    }
    report_series_add(r, "positions", "accepted", mins, (double)d->accepted);
    run_report_publish(&d->rr, final, NULL);
}

static void datagen_tick(void *ctx, const CoordState *st, bool force)
{
    DatagenCoord *d = ctx;
    cores_of(d, st); // keeps the most cores seen
    progress(d, st, force);
    // The file is made whole at the report's interval, so the report's count is the file's.
    if (d->start_ms && run_report_due(&d->rr) && !d->failed) {
        checkpoint(d);
        refresh(d, st, false);
    }
}

static bool datagen_start(void *d, const CoordState *st, const char *run_id, char *why,
                          size_t why_len)
{
    return datagen_coord_start(d, st, run_id, why, why_len);
}

static int datagen_finish(void *d, const CoordState *st) { return datagen_coord_finish(d, st); }

void datagen_coord_kind(DatagenCoord *d, CoordKind *out)
{
    *out = (CoordKind){.ctx = d,
                       .result_kind = WIRE_DATAGEN,
                       .check = datagen_check,
                       .count = datagen_count,
                       .complete = datagen_complete,
                       .tick = datagen_tick,
                       .start = datagen_start,
                       .finish = datagen_finish};
}

static void *datagen_kind_new(const CoordSetup *s, CoordKind *out, char *why, size_t why_len)
{
    DatagenCoord *d = datagen_coord_new(s->job, s->dir, why, why_len);
    if (d)
        datagen_coord_kind(d, out);
    return d;
}

static void datagen_kind_free(void *d) { datagen_coord_free(d); }

const CoordKindDef coord_datagen_def = {.kind_new = datagen_kind_new,
                                        .kind_free = datagen_kind_free};

DatagenCoord *datagen_coord_new(const JobConfig *job, const char *dir, char *why, size_t why_len)
{
    DatagenCoord *d = calloc(1, sizeof *d);
    // The dedup set starts sized for the target, at most 2^20 keys (16 MiB), and grows beyond
    // that only if the run gets there.
    size_t expected = job->datagen.positions < (1 << 20) ? (size_t)job->datagen.positions : 1 << 20;
    if (!d || keyset_init(&d->keys, expected) != 0) {
        snprintf(why, why_len, "out of memory");
        free(d);
        return NULL;
    }
    d->job = job;
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    snprintf(d->path, sizeof d->path, "%.1000s/%.1000s", dir, job->datagen.file);
    // A new file every start: the journal's replay refills it, so it never holds a record
    // the journal does not (a killed run's file may have had more, or a stale count).
    char pwhy[512];
    if (posdata_writer_open(d->path, false, &d->w, pwhy, sizeof pwhy)) {
        snprintf(why, why_len, "%s", pwhy);
        datagen_coord_free(d);
        return NULL;
    }
    char title[JOB_TEXT_MAX + 16];
    snprintf(title, sizeof title, "%s: %s", job_kind_name(JOB_DATAGEN), job->name);
    run_report_begin(&d->rr, job, dir, "", title);
    if (d->rr.report)
        report_plot(d->rr.report, "positions", REPORT_PLOT_LINE, "Positions accepted", "minutes",
                    "positions");
    return d;
}

void datagen_coord_free(DatagenCoord *d)
{
    if (!d)
        return;
    // What was counted is journaled: the file may keep it.
    if (d->w && posdata_writer_close(d->w, NULL, 0))
        fprintf(stderr, "xqforge run: cannot close %s\n", d->path);
    run_report_end(&d->rr, false);
    keyset_destroy(&d->keys);
    for (size_t i = 0; i < d->pending_n; i++)
        free(d->pending[i].records);
    free(d->pending);
    free(d);
}

bool datagen_coord_start(DatagenCoord *d, const CoordState *st, const char *run_id, char *why,
                         size_t why_len)
{
    // Nothing here can fail: the file was opened by datagen_coord_new, before the journal.
    (void)why, (void)why_len;
    snprintf(d->run_id, sizeof d->run_id, "%s", run_id);
    if (d->rr.report)
        report_set_run_id(d->rr.report, run_id);
    if (st->units_at_start)
        printf("Resuming: %llu unit%s journaled, %llu position%s rewritten to %s\n",
               (unsigned long long)st->units_at_start, st->units_at_start == 1 ? "" : "s",
               (unsigned long long)d->accepted, d->accepted == 1 ? "" : "s", d->path);
    // The replay has counted by now: what follows is this session's.
    d->accepted_at_start = d->accepted;
    d->games_at_start = d->games;
    d->start_ms = d->last_progress_ms = timeman_now_ms();
    // The plot starts where the session does (minute 0, the journal's count): a short run's one
    // report still draws a line, not a lone point.
    if (d->rr.report)
        report_series_add(d->rr.report, "positions", "accepted", 0, (double)d->accepted);
    const JobConfig *job = d->job;
    const TimeControl *tc = &job->players[0].tc;
    printf("Job %s: %d positions from self-play of %s (depth %d, nodes %llu), %d random plies, "
           "min ply %d, %d game%s a unit, at most %llu units, %d worker rank%s\n",
           job->name, job->datagen.positions, job->players[0].cfg.name, tc->depth,
           (unsigned long long)tc->nodes, job->datagen.random_plies, job->datagen.min_ply,
           job->datagen.unit, job->datagen.unit == 1 ? "" : "s",
           (unsigned long long)st->units_total, st->workers_expected,
           st->workers_expected == 1 ? "" : "s");
    return true;
}

static bool write_result(DatagenCoord *d, const CoordState *st, double seconds)
{
    const JobConfig *job = d->job;
    if (!job->output.result[0])
        return true;
    int cores = cores_of(d, st);
    // The rates are this session's, as on the progress line; the counts are the whole run's.
    double r = seconds > 0 ? (double)(d->accepted - d->accepted_at_start) / seconds : 0;
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_integer(1));
    json_object_set_new(o, "kind", json_string(job_kind_name(JOB_DATAGEN)));
    json_object_set_new(o, "job", json_string(job->name));
    json_object_set_new(o, "run_id", json_string(d->run_id));
    json_object_set_new(o, "state", json_string(state_name(d, st, true)));
    if (st->end == COORD_FAILED)
        json_object_set_new(o, "reason", json_string(st->reason));
    json_object_set_new(o, "complete", json_boolean(reached(d)));
    json_object_set_new(o, "file", json_string(job->datagen.file));
    json_object_set_new(o, "target", json_integer(job->datagen.positions));
    json_object_set_new(o, "positions", json_integer((json_int_t)d->accepted));
    json_object_set_new(o, "duplicates", json_integer((json_int_t)d->duplicates));
    json_object_set_new(o, "records", json_integer((json_int_t)d->records));
    json_object_set_new(o, "games", json_integer((json_int_t)d->games));
    json_object_set_new(o, "units", json_integer((json_int_t)d->units));
    json_object_set_new(o, "red_wins", json_integer((json_int_t)d->red_wins));
    json_object_set_new(o, "draws", json_integer((json_int_t)d->draws));
    json_object_set_new(o, "black_wins", json_integer((json_int_t)d->black_wins));
    json_object_set_new(o, "seconds", json_real(seconds));
    json_object_set_new(o, "positions_per_s", json_real(r));
    json_object_set_new(o, "workers", json_integer(workers_of(st)));
    json_object_set_new(o, "positions_per_s_per_worker", json_real(r / workers_of(st)));
    json_object_set_new(o, "cores", json_integer(cores));
    json_object_set_new(o, "positions_per_s_per_core", json_real(cores ? r / cores : 0));
    json_object_set_new(o, "filters", filters_json(d));
    json_object_set_new(o, "set_bytes", json_integer((json_int_t)keyset_bytes(&d->keys)));
    json_object_set_new(o, "version", json_string(XQFORGE_VERSION));
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "%.1000s/%.1000s", d->dir, job->output.result);
    bool ok = run_write_json(path, o);
    json_decref(o);
    return ok;
}

int datagen_coord_finish(DatagenCoord *d, const CoordState *st)
{
    CoordState end = *st;
    char why[512];
    progress(d, &end, true);
    printf("\n");
    // The file is closed whole (count, checksum) before the result file names it.
    PosdataStatus ps = d->w ? posdata_writer_close(d->w, why, sizeof why) : POSDATA_OK;
    d->w = NULL;
    if ((ps || d->failed) && end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "%s", ps ? why : d->error);
    }
    double seconds = (timeman_now_ms() - d->start_ms) / 1000.0;
    int cores = cores_of(d, st);
    printf("%llu positions in %s (%llu this session in %.1f s: %.1f positions/s, %.2f per core "
           "on %d cores); %llu duplicates, %llu games\n",
           (unsigned long long)d->accepted, d->path,
           (unsigned long long)(d->accepted - d->accepted_at_start), seconds, rate(d),
           cores ? rate(d) / cores : 0.0, cores, (unsigned long long)d->duplicates,
           (unsigned long long)d->games);
    char ftext[512];
    filters_text(d, ftext, sizeof ftext);
    printf("Filters: %s\n", ftext);
    if (end.end == COORD_DONE && !reached(d))
        printf("max_games reached: the file has fewer positions than asked\n");
    if (!write_result(d, &end, seconds) && end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "cannot write %.200s/%.200s", d->dir,
                 d->job->output.result);
    }
    refresh(d, &end, true);
    run_report_end(&d->rr, true);
    if (end.end == COORD_FAILED)
        fprintf(stderr, "xqforge run: failed: %s\n", end.reason);
    return coord_exit_status(&end);
}
