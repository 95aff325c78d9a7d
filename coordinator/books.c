// SPDX-License-Identifier: MIT
#include "books.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bookstore.h"
#include "run_report.h"
#include "timeman.h"
#include "wdl.h"

// The output dir, a slash, a file name of the job and the NUL: every path books_path builds fits.
enum { PATH_MAX_LEN = 2 * JOB_TEXT_MAX + 2 };

/// A unit received (and journaled) ahead of the commit point, as packed bytes.
/// Kept packed because the WireMessage a callback sees belongs to the caller and is gone once
/// the callback returns; unpacked again when its turn to commit comes.
typedef struct {
    uint64_t unit;
    size_t len;
    char *data;
} Pending;

struct BooksCoord {
    const JobConfig *job;
    const BookgenConfig *gen;
    char dir[JOB_TEXT_MAX];
    char run_id[64];
    Bookstore *store;
    // Invariant: no unit >= next_commit has touched the book, and every pending unit is >= it.
    uint64_t next_commit; // every unit below it is in the book
    Pending *pending;
    size_t pending_n, pending_cap;
    bool failed;
    char error[512];
    int64_t start_ms, last_progress_ms;
    // The *_at_start counts are the book as the journal's replay left it: rates are this session's.
    uint64_t candidates_at_start, accepted_at_start, invalid;
    msgpack_sbuffer buf;
    RunReport rr;
    // The draw-rate window (book.wdl_model set): the model, and the candidates it refused.
    bool draw_window;
    WdlModel wdl;
    uint64_t draw_outside;
};

/// dir/name, each part cut at 1000 characters (so the compiler can bound the text); out of
/// PATH_MAX_LEN always holds it.
static void books_path(const BooksCoord *b, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%.1000s/%.1000s", b->dir, name);
}

/// Offers one candidate to the book: replayed here, so keys and FENs are the coordinator's.
static bool commit_candidate(BooksCoord *b, const WireBookCandidate *k, uint64_t unit, int i)
{
    BookgenLine line;
    Move moves[WIRE_MAX_BOOK_PATH];
    uint16_t mv16[WIRE_MAX_BOOK_PATH];
    int32_t scores[WIRE_MAX_BOOK_PATH];
    char why[256];
    for (int p = 0; p < k->path_len; p++) {
        moves[p] = k->path[p].move;
        mv16[p] = (uint16_t)k->path[p].move;
        scores[p] = k->path[p].score;
    }
    // An illegal path is the worker's fault, not the run's: counted as invalid and skipped. The
    // same unit always holds the same candidates, so a resumed run skips the same ones.
    if (!bookgen_replay(k->start_fen, moves, k->path_len, &line, why, sizeof why)) {
        fprintf(stderr, "\nunit %llu candidate %d: %s; skipped\n", (unsigned long long)unit, i,
                why);
        b->invalid++;
        return true;
    }
    // The verdict (accepted, duplicate, outside ...) is counted by the store itself; only an error
    // of the store (I/O, memory) returns false, and that ends the run.
    BookEntry e = {line.key, line.epd,        line.black_to_move, line.ply,
                   k->score, k->path_len,     line.keys,          mv16,
                   scores,   line.mirror_key, line.in_check,      false};
    // The draw-rate window applies besides the cp window: the model's draw rate at the
    // verification score and the position's material (the same from either side's view).
    if (b->draw_window) {
        double d = wdl_draw_rate(&b->wdl, k->score, wdl_material_fen(line.epd));
        e.outside = !(d >= b->job->book.draw_min && d <= b->job->book.draw_max);
    }
    BookVerdict v;
    BookstoreStatus st = bookstore_offer(b->store, &e, &v);
    if (st) {
        snprintf(b->error, sizeof b->error, "book: %s", bookstore_strerror(st));
        return false;
    }
    b->draw_outside += e.outside && v == BOOK_OUTSIDE;
    return true;
}

/// Commits the units that are next in order, as long as they have arrived.
/// This strict unit order is what makes the book independent of the number of ranks and of
/// which worker was faster. Once the book is full nothing more is committed, so the units that
/// arrive after that point never change it. A unit's slot in pending is taken by the last one
/// (order in pending does not matter: each commit searches it for next_commit).
static void drain(BooksCoord *b)
{
    for (bool found = true; found && !b->failed && !bookstore_full(b->store);) {
        found = false;
        for (size_t i = 0; i < b->pending_n; i++) {
            if (b->pending[i].unit != b->next_commit)
                continue;
            Pending p = b->pending[i];
            b->pending[i] = b->pending[--b->pending_n];
            WireMessage msg;
            char why[256];
            if (wire_unpack(p.data, p.len, &msg, why, sizeof why) == WIRE_OK) {
                for (int k = 0; k < msg.book->candidate_count && !bookstore_full(b->store); k++)
                    if (!commit_candidate(b, &msg.book->candidates[k], p.unit, k))
                        b->failed = true;
            }
            wire_message_destroy(&msg);
            free(p.data);
            b->next_commit++;
            found = true;
            break;
        }
    }
}

/// Queues a copy of a packed unit; false only when out of memory.
static bool pending_add(BooksCoord *b, uint64_t unit, const void *data, size_t len)
{
    if (b->pending_n == b->pending_cap) {
        size_t cap = b->pending_cap ? 2 * b->pending_cap : 64;
        Pending *p = realloc(b->pending, cap * sizeof *p);
        if (!p)
            return false;
        b->pending = p;
        b->pending_cap = cap;
    }
    char *copy = malloc(len);
    if (!copy)
        return false;
    memcpy(copy, data, len);
    b->pending[b->pending_n++] = (Pending){unit, len, copy};
    return true;
}

/// Candidates are replayed at commit (an illegal one is skipped there, as generated units
/// are a pure function of the job); here only the unit's shape is checked.
static bool books_check(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t len)
{
    BooksCoord *b = ctx;
    if (m->book->candidate_count != b->gen->unit) {
        snprintf(why, len, "unit %llu has %d candidates, not %d", (unsigned long long)unit,
                 m->book->candidate_count, b->gen->unit);
        return false;
    }
    return true;
}

/// Every unit, live or replayed, goes through pending: it is committed when all units below it
/// are, never on arrival.
static bool books_count(void *ctx, uint64_t unit, const WireMessage *m, bool replay, char *why,
                        size_t len)
{
    BooksCoord *b = ctx;
    bool ok = wire_pack(m, &b->buf) == WIRE_OK && pending_add(b, unit, b->buf.data, b->buf.size);
    msgpack_sbuffer_clear(&b->buf);
    if (!ok) {
        snprintf(why, len, "out of memory for a book unit");
        return false;
    }
    if (!replay) // the replay commits once it is complete (books_coord_start)
        drain(b);
    if (b->failed) {
        snprintf(why, len, "%s", b->error);
        return false;
    }
    return true;
}

/// Done when the book has its target (the units still out are abandoned: they could only add
/// to a full book), or when every unit is committed (the book may then be short of its target:
/// max_candidates was reached).
static bool books_complete(void *ctx, const CoordState *st, bool *abandon, char *verdict,
                           size_t len)
{
    BooksCoord *b = ctx;
    if (bookstore_full(b->store)) {
        *abandon = true; // the units in progress are beyond what the book needs
        snprintf(verdict, len, "book complete");
        return true;
    }
    if (b->next_commit == st->units_total) {
        snprintf(verdict, len, "every unit generated");
        return true;
    }
    return false;
}

/// One progress line: rewritten in place every second on a terminal, a new line every 10 s
/// otherwise, so a log file stays short. Nothing before books_coord_start (start_ms is 0).
static void progress(BooksCoord *b, const CoordState *st, bool force)
{
    int64_t now = timeman_now_ms();
    bool tty = run_console_is_terminal();
    if (!b->start_ms || (!force && now - b->last_progress_ms < (tty ? 1000 : 10000)))
        return;
    b->last_progress_ms = now;
    bookstore_flush(b->store); // readers of the EPD file see the book grow
    const BookstoreStats *bs = bookstore_stats(b->store);
    double mins = (now - b->start_ms) / 60000.0;
    double rate = mins > 0 ? (bs->accepted - b->accepted_at_start) / mins : 0;
    double crate = mins > 0 ? (bs->candidates - b->candidates_at_start) / mins : 0;
    printf("%s%llu/%d positions, rejected %llu (outside the window), duplicates %llu, mirrors "
           "%llu, in check %llu, family cap %llu, %.0f positions/min, %.0f candidates/min, %d "
           "workers%s",
           tty ? "\r" : "", (unsigned long long)bs->accepted, b->job->book.positions,
           (unsigned long long)bs->outside, (unsigned long long)bs->duplicates,
           (unsigned long long)bs->mirrors, (unsigned long long)bs->in_check,
           (unsigned long long)bs->family_capped, rate, crate, st->workers_live,
           tty ? "   " : "\n");
    fflush(stdout);
}

/// The state in the report and result.json: "finished short" is a run that ended normally with
/// every unit committed but fewer positions than its target.
static const char *state_name(const BooksCoord *b, const CoordState *st, bool final)
{
    if (!final)
        return "running";
    if (st->end == COORD_FAILED)
        return "failed";
    if (st->end == COORD_INTERRUPTED)
        return "interrupted";
    return bookstore_full(b->store) ? "complete" : "finished short";
}

/// Rewrites the report's book figures, facts and score histogram, then publishes it (written,
/// and uploaded when [report] urls says so, by run_report).
static void refresh(BooksCoord *b, const CoordState *st, bool final)
{
    Report *r = b->rr.report;
    if (!r)
        return;
    const BookstoreStats *bs = bookstore_stats(b->store);
    double mins = (timeman_now_ms() - b->start_ms) / 60000.0;
    report_set(r, "state", json_string(state_name(b, st, final)));
    if (final && st->end == COORD_FAILED)
        report_set(r, "reason", json_string(st->reason));
    report_set(r, "book",
               json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I}", "target",
                         b->job->book.positions, "accepted", (json_int_t)bs->accepted, "candidates",
                         (json_int_t)bs->candidates, "outside", (json_int_t)bs->outside,
                         "duplicates", (json_int_t)bs->duplicates, "mirrors",
                         (json_int_t)bs->mirrors, "in_check", (json_int_t)bs->in_check,
                         "family_capped", (json_int_t)bs->family_capped, "families",
                         (json_int_t)bs->families, "first_moves_distinct",
                         bookstore_distinct_first_moves(bs), "units_committed",
                         (json_int_t)b->next_commit));
    // The facts are rebuilt from scratch each time, in the same order: a "Why" or a rank's line
    // then appears only while it holds.
    report_facts_clear(r);
    report_fact(r, "Book", "State", "%s", state_name(b, st, final));
    if (final && st->end == COORD_FAILED)
        report_fact(r, "Book", "Why", "%s", st->reason);
    report_fact(r, "Book", "Positions", "%llu of %d", (unsigned long long)bs->accepted,
                b->job->book.positions);
    report_fact(r, "Book", "Window", "%d..%d cp, %s%s", b->job->book.score_min,
                b->job->book.score_max, b->job->book.side_to_move ? "side to move" : "Red",
                b->job->book.either_side ? " (either side)" : "");
    if (b->draw_window)
        report_fact(r, "Book", "Draw window", "%.3g..%.3g (model %s), %llu candidates outside",
                    b->job->book.draw_min, b->job->book.draw_max, b->job->book.wdl_model,
                    (unsigned long long)b->draw_outside);
    report_fact(r, "Book", "Candidates",
                "%llu (%llu outside the window, %llu duplicates, %llu mirrors, %llu in check, "
                "%llu over the family cap)",
                (unsigned long long)bs->candidates, (unsigned long long)bs->outside,
                (unsigned long long)bs->duplicates, (unsigned long long)bs->mirrors,
                (unsigned long long)bs->in_check, (unsigned long long)bs->family_capped);
    report_fact(r, "Book", "Variety", "%d distinct first moves, %llu families",
                bookstore_distinct_first_moves(bs), (unsigned long long)bs->families);
    report_fact(r, "Run", "Run id", "%s", b->run_id);
    report_fact(r, "Run", "This session", "%.1f min, %.0f positions/min", mins,
                mins > 0 ? (bs->accepted - b->accepted_at_start) / mins : 0.0);
    for (int w = 0; w < st->ranks; w++) {
        const CoordRank *k = &st->rank[w];
        if (k->state == COORD_RANK_UNKNOWN && !k->units)
            continue;
        char label[WIRE_MAX_TEXT + 32];
        snprintf(label, sizeof label, "rank %d on %s", w, k->host[0] ? k->host : "?");
        report_fact(r, "Workers", label, "%llu units, %llu nodes/s%s%s",
                    (unsigned long long)k->units, (unsigned long long)k->bench_nps,
                    k->error[0] ? ": " : "", k->error);
    }
    // Only non-empty bins get a bar; a bar keeps its slot once set, and report_bar_set updates it.
    for (int bin = 0; bin < BOOKSTORE_BINS; bin++)
        if (bs->hist_accepted[bin]) {
            char label[32];
            snprintf(label, sizeof label, "%d", bookstore_bin_low(bin));
            report_bar_set(r, "scores", label, (double)bs->hist_accepted[bin]);
        }
    run_report_publish(&b->rr, final, NULL);
}

/// The kind's tick: the progress line, and the report when run_report says one is due.
static void books_tick(void *ctx, const CoordState *st, bool force)
{
    BooksCoord *b = ctx;
    progress(b, st, force);
    if (b->start_ms && run_report_due(&b->rr))
        refresh(b, st, false);
}

static bool books_start(void *b, const CoordState *st, const char *run_id, char *why,
                        size_t why_len)
{
    return books_coord_start(b, st, run_id, why, why_len);
}

static int books_finish(void *b, const CoordState *st) { return books_coord_finish(b, st); }

void books_coord_kind(BooksCoord *b, CoordKind *out)
{
    *out = (CoordKind){.ctx = b,
                       .result_kind = WIRE_BOOK,
                       .check = books_check,
                       .count = books_count,
                       .complete = books_complete,
                       .tick = books_tick,
                       .start = books_start,
                       .finish = books_finish};
}

/// The plan of a book job is the generator's settings (worker/work_book.c makes it).
static void *books_kind_new(const CoordSetup *s, CoordKind *out, char *why, size_t why_len)
{
    BooksCoord *b = books_coord_new(s->job, s->plan, s->dir, why, why_len);
    if (b)
        books_coord_kind(b, out);
    return b;
}

static void books_kind_free(void *b) { books_coord_free(b); }

const CoordKindDef coord_books_def = {.kind_new = books_kind_new, .kind_free = books_kind_free};

/// The positions of an existing book: never emitted again.
/// Each line is replayed on the coordinator's board, so its key is computed the same way as
/// those of the candidates (bookgen_replay) and the two can be compared.
static bool exclude_existing(BooksCoord *b, char *why, size_t why_len)
{
    const char *path = b->job->book.existing;
    if (!path[0])
        return true;
    Openings ex;
    char owhy[512];
    if (openings_load(&ex, path, stderr, owhy, sizeof owhy) != OPENINGS_OK) {
        snprintf(why, why_len, "existing book %s", owhy);
        return false;
    }
    Board *bd = malloc(sizeof *bd);
    bool ok = bd != NULL;
    for (int i = 0; ok && i < ex.count; i++) {
        board_set_fen(bd, ex.items[i].fen, NULL, 0);
        for (int k = 0; k < ex.items[i].move_count; k++)
            board_make_move(bd, ex.items[i].moves[k]);
        ok = bookstore_exclude(b->store, bd->key) == BOOKSTORE_OK;
    }
    free(bd);
    openings_free(&ex);
    if (!ok)
        snprintf(why, why_len, "out of memory for the existing book");
    return ok;
}

BooksCoord *books_coord_new(const JobConfig *job, const BookgenConfig *gen, const char *dir,
                            char *why, size_t why_len)
{
    BooksCoord *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    b->job = job;
    b->gen = gen;
    snprintf(b->dir, sizeof b->dir, "%s", dir);
    msgpack_sbuffer_init(&b->buf);
    if (job->book.wdl_model[0]) {
        char wwhy[600];
        if (wdl_load(&b->wdl, job->book.wdl_model, wwhy, sizeof wwhy)) {
            snprintf(why, why_len, "book.wdl_model: %s", wwhy);
            books_coord_free(b);
            return NULL;
        }
        b->draw_window = true;
    }
    char path[PATH_MAX_LEN];
    // The job's [book] section, as the store's configuration (same order as BookstoreConfig).
    BookstoreConfig cfg = {job->book.positions,
                           job->book.score_min,
                           job->book.score_max,
                           job->book.either_side,
                           job->book.side_to_move ? BOOK_VIEW_SIDE_TO_MOVE : BOOK_VIEW_RED,
                           job->book.family_plies,
                           job->book.family_cap};
    books_path(b, job->book.epd, path, sizeof path);
    // Opening the book rewrites the EPD file from the start: the replay fills it again, so it
    // always ends as a prefix of the final book.
    if (bookstore_open(&b->store, &cfg, path, job->book.moves[0] != '\0', why, why_len) ||
        !exclude_existing(b, why, why_len)) {
        books_coord_free(b);
        return NULL;
    }
    char title[JOB_TEXT_MAX + 16];
    snprintf(title, sizeof title, "%s: %s", job_kind_name(JOB_BOOK), job->name);
    // The histogram plot is declared once here; refresh only sets its bars.
    run_report_begin(&b->rr, job, dir, "", title);
    if (b->rr.report)
        report_plot(b->rr.report, "scores", REPORT_PLOT_BARS,
                    job->book.side_to_move ? "Accepted positions by score (cp, side to move)"
                                           : "Accepted positions by score (cp, Red's view)",
                    "score", "positions");
    return b;
}

void books_coord_free(BooksCoord *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->pending_n; i++)
        free(b->pending[i].data);
    free(b->pending);
    run_report_end(&b->rr, false);
    bookstore_close(b->store);
    msgpack_sbuffer_destroy(&b->buf);
    free(b);
}

bool books_coord_start(BooksCoord *b, const CoordState *st, const char *run_id, char *why,
                       size_t why_len)
{
    snprintf(b->run_id, sizeof b->run_id, "%s", run_id);
    if (b->rr.report)
        report_set_run_id(b->rr.report, run_id);
    // The journal's units were queued by books_count during the replay; they are committed now, all
    // at once, before any live unit, and the book then stands where the killed run left it.
    drain(b);
    if (b->failed) {
        snprintf(why, why_len, "%s", b->error);
        return false;
    }
    const BookstoreStats *bs = bookstore_stats(b->store);
    if (st->units_at_start)
        printf("Resuming: %llu unit%s journaled, %llu committed, %llu position%s in the book\n",
               (unsigned long long)st->units_at_start, st->units_at_start == 1 ? "" : "s",
               (unsigned long long)b->next_commit, (unsigned long long)bs->accepted,
               bs->accepted == 1 ? "" : "s");
    b->accepted_at_start = bs->accepted;
    b->candidates_at_start = bs->candidates;
    b->start_ms = b->last_progress_ms = timeman_now_ms();
    const JobConfig *job = b->job;
    printf("Job %s: a book of %d positions, window %d..%d cp (%s)%s, plies %d..%d, %llu units "
           "of %d candidates at most, %d worker rank%s\n",
           job->name, job->book.positions, job->book.score_min, job->book.score_max,
           job->book.side_to_move ? "side to move" : "Red",
           job->book.either_side ? " (either side)" : "", job->book.plies_min, job->book.plies_max,
           (unsigned long long)st->units_total, b->gen->unit, st->workers_expected,
           st->workers_expected == 1 ? "" : "s");
    if (b->draw_window)
        printf("Draw-rate window %.3g..%.3g besides the cp window: model %s (degree %d, %llu "
               "samples)\n",
               job->book.draw_min, job->book.draw_max, job->book.wdl_model, b->wdl.degree,
               (unsigned long long)b->wdl.samples);
    return true;
}

/// The non-empty bins as {from, count}, from being the bin's lower bound in cp; the lowest bin
/// is open below, so its from is null.
static json_t *histogram_json(const uint64_t *bins)
{
    json_t *a = json_array();
    for (int i = 0; i < BOOKSTORE_BINS; i++) {
        if (!bins[i])
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "from", i == 0 ? json_null() : json_integer(bookstore_bin_low(i)));
        json_object_set_new(o, "count", json_integer((json_int_t)bins[i]));
        json_array_append_new(a, o);
    }
    return a;
}

/// The result file: counts, rates, memory and the diversity data, written atomically.
static bool write_result(BooksCoord *b, const CoordState *st, double minutes)
{
    const JobConfig *job = b->job;
    if (!job->output.result[0])
        return true;
    const BookstoreStats *bs = bookstore_stats(b->store);
    json_t *o = json_object(), *ply = json_object(), *first = json_object();
    for (int p = 0; p <= BOOKSTORE_PLY_MAX; p++)
        if (bs->per_ply[p]) {
            char k[16];
            snprintf(k, sizeof k, "%d", p);
            json_object_set_new(ply, k, json_integer((json_int_t)bs->per_ply[p]));
        }
    for (int m = 0; m < BOOKSTORE_MOVE_NB; m++)
        if (bs->first_move[m]) {
            char mv[8];
            bookstore_move_text((uint16_t)m, mv);
            json_object_set_new(first, mv, json_integer((json_int_t)bs->first_move[m]));
        }
    json_object_set_new(o, "schema", json_integer(2));
    json_object_set_new(o, "kind", json_string(job_kind_name(JOB_BOOK)));
    json_object_set_new(o, "job", json_string(job->name));
    json_object_set_new(o, "run_id", json_string(b->run_id));
    json_object_set_new(o, "state", json_string(state_name(b, st, true)));
    if (st->end == COORD_FAILED)
        json_object_set_new(o, "reason", json_string(st->reason));
    json_object_set_new(o, "complete", json_boolean(bookstore_full(b->store)));
    json_object_set_new(o, "target", json_integer(job->book.positions));
    json_object_set_new(o, "accepted", json_integer((json_int_t)bs->accepted));
    json_object_set_new(o, "candidates", json_integer((json_int_t)bs->candidates));
    json_object_set_new(o, "outside", json_integer((json_int_t)bs->outside));
    json_object_set_new(o, "duplicates", json_integer((json_int_t)bs->duplicates));
    json_object_set_new(o, "existing", json_integer((json_int_t)bs->existing));
    json_object_set_new(o, "mirrors", json_integer((json_int_t)bs->mirrors));
    json_object_set_new(o, "in_check", json_integer((json_int_t)bs->in_check));
    json_object_set_new(o, "family_capped", json_integer((json_int_t)bs->family_capped));
    json_object_set_new(o, "families", json_integer((json_int_t)bs->families));
    json_object_set_new(o, "first_moves_distinct",
                        json_integer(bookstore_distinct_first_moves(bs)));
    json_object_set_new(o, "score_view",
                        json_string(job->book.side_to_move ? "side_to_move" : "red"));
    json_object_set_new(o, "invalid", json_integer((json_int_t)b->invalid));
    if (b->draw_window)
        json_object_set_new(o, "draw_window",
                            json_pack("{s:s, s:f, s:f, s:I}", "model", job->book.wdl_model,
                                      "draw_min", job->book.draw_min, "draw_max",
                                      job->book.draw_max, "outside", (json_int_t)b->draw_outside));
    json_object_set_new(o, "units_committed", json_integer((json_int_t)b->next_commit));
    json_object_set_new(o, "minutes", json_real(minutes));
    json_object_set_new(
        o, "positions_per_minute",
        json_real(minutes > 0 ? (bs->accepted - b->accepted_at_start) / minutes : 0));
    json_object_set_new(o, "set_bytes", json_integer((json_int_t)bookstore_set_bytes(b->store)));
    json_object_set_new(o, "move_book_bytes",
                        json_integer((json_int_t)bookstore_moves_bytes(b->store)));
    json_object_set_new(o, "per_ply", ply);
    json_object_set_new(o, "first_moves", first);
    json_object_set_new(o, "scores_accepted", histogram_json(bs->hist_accepted));
    json_object_set_new(o, "scores_all", histogram_json(bs->hist_all));
    json_object_set_new(o, "version", json_string(XQFORGE_VERSION));
    char path[PATH_MAX_LEN];
    books_path(b, job->output.result, path, sizeof path);
    bool ok = run_write_json(path, o);
    json_decref(o);
    return ok;
}

int books_coord_finish(BooksCoord *b, const CoordState *st)
{
    CoordState end = *st;
    const JobConfig *job = b->job;
    char path[PATH_MAX_LEN], why[512];
    // A last, forced progress line, so the final counts are printed whatever the rate limit.
    progress(b, &end, true);
    printf("\n");
    books_path(b, job->book.moves, path, sizeof path);
    // A failure to finish the book fails a run that had not failed yet; an earlier failure keeps
    // its own reason, the first cause being the useful one.
    if (bookstore_finish(b->store, job->book.moves[0] ? path : NULL, why, sizeof why) &&
        end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "%s", why);
    }
    if (job->book.html[0]) {
        books_path(b, job->book.html, path, sizeof path);
        if (bookstore_write_html(b->store, path, job->name[0] ? job->name : "book"))
            fprintf(stderr, "xqforge run: cannot write %s\n", path);
    }
    bookstore_report(b->store, stdout);
    const BookstoreStats *bs = bookstore_stats(b->store);
    size_t keys = (size_t)(bs->accepted + bs->existing);
    printf("Dedup set: %zu bytes for %zu keys (%.1f bytes/position); move book in memory: %zu "
           "bytes\n",
           bookstore_set_bytes(b->store), keys,
           keys ? (double)bookstore_set_bytes(b->store) / (double)keys : 0.0,
           bookstore_moves_bytes(b->store));
    double minutes = (timeman_now_ms() - b->start_ms) / 60000.0;
    printf("%llu positions in %.2f min: %.0f positions/min\n",
           (unsigned long long)(bs->accepted - b->accepted_at_start), minutes,
           minutes > 0 ? (bs->accepted - b->accepted_at_start) / minutes : 0.0);
    if (end.end == COORD_DONE && !bookstore_full(b->store))
        printf("max_candidates reached: the book has fewer positions than asked (widen the "
               "window or raise max_candidates)\n");
    // result.json comes after the move book and the page, and the report last, so that the
    // report's final state includes any failure to write the others.
    if (!write_result(b, &end, minutes) && end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "cannot write %.200s/%.200s", b->dir,
                 job->output.result);
    }
    refresh(b, &end, true);
    run_report_end(&b->rr, true);
    if (end.end == COORD_FAILED)
        fprintf(stderr, "xqforge run: failed: %s\n", end.reason);
    return coord_exit_status(&end);
}
