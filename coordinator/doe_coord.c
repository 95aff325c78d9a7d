// SPDX-License-Identifier: MIT
#include "doe_coord.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bookgen.h"
#include "bookstore.h"
#include "doe.h"
#include "eebook.h"
#include "movebook.h"
#include "movegen.h"
#include "run_report.h"
#include "timeman.h"
#include "wdl.h"

enum { DOE_PATH_MAX = 2 * JOB_TEXT_MAX + 2, DOE_ROUND_MAX = 4096 };

/// A unit of the round: its leaf, and the children once its result is counted.
typedef struct {
    uint32_t leaf;
    bool done;
    int n;
    DoeChild *child;
} Slot;

typedef struct {
    const JobConfig *job;
    char dir[JOB_TEXT_MAX];
    char run_id[64];
    DoeTree *tree;
    Slot slot[DOE_ROUND_MAX];
    uint64_t round_start; // the round's first unit id
    int round_n, round_done;
    uint64_t rounds; // applied
    bool finished;   // the budget is spent or no leaf is left
    const char *why_finished;
    Board *board;
    int64_t start_ms, last_progress_ms;
    uint64_t scored_at_start;
    bool draw_window;
    WdlModel wdl;
    RunReport rr;
} DoeCoord;

static void doe_path(const DoeCoord *d, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%.1000s/%.1000s", d->dir, name);
}

/// The round's slot of a unit, or -1 when the unit is not one of the round's.
static int slot_of(const DoeCoord *d, uint64_t unit)
{
    if (unit < d->round_start || unit >= d->round_start + (uint64_t)d->round_n)
        return -1;
    return (int)(unit - d->round_start);
}

/// The next round's leaves; none left, or the budget spent, finishes the tree.
static void next_round(DoeCoord *d)
{
    d->round_start += (uint64_t)d->round_n;
    d->round_n = d->round_done = 0;
    if (doe_counts(d->tree)->scored >= (uint64_t)d->job->doe.nodes) {
        d->finished = true;
        d->why_finished = "the budget of scored positions is spent";
        return;
    }
    uint32_t leaves[DOE_ROUND_MAX];
    d->round_n = doe_select(d->tree, leaves, d->job->doe.round);
    for (int i = 0; i < d->round_n; i++)
        d->slot[i] = (Slot){leaves[i], false, 0, NULL};
    if (d->round_n == 0) {
        d->finished = true;
        d->why_finished = "no leaf is left to expand";
    }
}

/// The round is whole: its expansions in the order the leaves were chosen, then the next.
static bool apply_round(DoeCoord *d, char *why, size_t why_len)
{
    for (int i = 0; i < d->round_n; i++) {
        Slot *s = &d->slot[i];
        DoeStatus st = doe_expand(d->tree, s->leaf, s->child, s->n);
        free(s->child);
        s->child = NULL;
        if (st != DOE_OK) {
            snprintf(why, why_len, "doe tree: %s", doe_strerror(st));
            return false;
        }
    }
    doe_update(d->tree);
    d->rounds++;
    next_round(d);
    return true;
}

/// The leaf's legal moves must be exactly the candidates' moves, each once, each from the leaf.
static bool doe_check(void *ctx, uint64_t unit, const WireMessage *m, char *why, size_t why_len)
{
    DoeCoord *d = ctx;
    const WireBookResult *r = m->book;
    int s = slot_of(d, unit);
    if (s < 0 || d->slot[s].done) {
        snprintf(why, why_len, "unit %llu is not one of the round's (units %llu..%llu)",
                 (unsigned long long)unit, (unsigned long long)d->round_start,
                 (unsigned long long)(d->round_start + (uint64_t)d->round_n));
        return false;
    }
    const DoeNode *leaf = doe_node(d->tree, d->slot[s].leaf);
    board_set_fen(d->board, leaf->fen, NULL, 0);
    MoveList list;
    int n = movegen_legal(d->board, &list);
    if (r->candidate_count != n) {
        snprintf(why, why_len, "unit %llu: %d children for %d legal moves",
                 (unsigned long long)unit, r->candidate_count, n);
        return false;
    }
    for (int i = 0; i < n; i++) {
        const WireBookCandidate *k = &r->candidates[i];
        if (strcmp(k->start_fen, leaf->fen) || k->path_len != 1 ||
            k->path[0].move != list.moves[i]) {
            snprintf(why, why_len, "unit %llu: child %d is not the leaf's legal move %d",
                     (unsigned long long)unit, i, i);
            return false;
        }
    }
    return true;
}

static bool doe_count(void *ctx, uint64_t unit, const WireMessage *m, bool replay, char *why,
                      size_t why_len)
{
    (void)replay;
    DoeCoord *d = ctx;
    const WireBookResult *r = m->book;
    Slot *s = &d->slot[slot_of(d, unit)];
    s->child = calloc((size_t)(r->candidate_count ? r->candidate_count : 1), sizeof *s->child);
    if (!s->child) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    for (int i = 0; i < r->candidate_count; i++) {
        const WireBookCandidate *k = &r->candidates[i];
        BookgenLine line;
        Move mv = k->path[0].move;
        if (!bookgen_replay(k->start_fen, &mv, 1, &line, why, why_len))
            return false;
        DoeChild *c = &s->child[i];
        c->move = (uint16_t)mv;
        c->score = line.black_to_move ? -k->score : k->score;
        c->key = line.key;
        c->mirror_key = line.mirror_key;
        snprintf(c->fen, sizeof c->fen, "%s", line.epd);
        c->in_check = line.in_check;
        board_set_fen(d->board, line.epd, NULL, 0);
        c->terminal = movegen_count_legal(d->board) == 0 || rules_insufficient_material(d->board);
    }
    s->n = r->candidate_count;
    s->done = true;
    return ++d->round_done < d->round_n || apply_round(d, why, why_len);
}

static uint64_t doe_limit(void *ctx)
{
    const DoeCoord *d = ctx;
    return d->finished ? d->round_start : d->round_start + (uint64_t)d->round_n;
}

/// Each unit's leaf goes with it.
static bool doe_attach(void *ctx, Coordinator *c, WireWork *work, char *why, size_t why_len)
{
    (void)c;
    DoeCoord *d = ctx;
    for (int i = 0; i < work->unit_count; i++) {
        int s = slot_of(d, work->unit_ids[i]);
        if (s < 0) {
            snprintf(why, why_len, "unit %llu handed out outside its round",
                     (unsigned long long)work->unit_ids[i]);
            return false;
        }
        snprintf(work->fen[i], sizeof work->fen[i], "%.*s", WIRE_MAX_FEN,
                 doe_node(d->tree, d->slot[s].leaf)->fen);
    }
    work->fen_count = work->unit_count;
    return true;
}

static bool doe_complete(void *ctx, const CoordState *st, bool *abandon, char *verdict, size_t len)
{
    (void)st;
    DoeCoord *d = ctx;
    *abandon = false;
    if (d->finished)
        snprintf(verdict, len, "%s", d->why_finished);
    return d->finished;
}

static void progress(DoeCoord *d, const CoordState *st, bool force)
{
    int64_t now = timeman_now_ms();
    bool tty = run_console_is_terminal();
    if (!d->start_ms || (!force && now - d->last_progress_ms < (tty ? 1000 : 10000)))
        return;
    d->last_progress_ms = now;
    const DoeCounts *k = doe_counts(d->tree);
    double mins = (now - d->start_ms) / 60000.0;
    printf("%sround %llu: %u nodes, %llu/%lld scored, %llu expanded, %llu transpositions, "
           "%.0f scored/min, %d workers%s",
           tty ? "\r" : "", (unsigned long long)d->rounds, doe_node_count(d->tree),
           (unsigned long long)k->scored, (long long)d->job->doe.nodes,
           (unsigned long long)k->expansions, (unsigned long long)k->transpositions,
           mins > 0 ? (double)(k->scored - d->scored_at_start) / mins : 0.0, st->workers_live,
           tty ? "   " : "\n");
    fflush(stdout);
}

/// The page: the tree's figures, the ranks, the nodes per ply; written every [report]
/// interval and at the end (uploaded when [report] urls says so).
static void refresh(DoeCoord *d, const CoordState *st, bool final, const char *state,
                    uint64_t exits)
{
    Report *r = d->rr.report;
    if (!r)
        return;
    const DoeTree *t = d->tree;
    const DoeCounts *k = doe_counts(t);
    double mins = (timeman_now_ms() - d->start_ms) / 60000.0;
    report_set(r, "state", json_string(state));
    report_set(r, "doe",
               json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i}", "nodes",
                         (int)doe_node_count(t), "scored", (json_int_t)k->scored, "budget",
                         (json_int_t)d->job->doe.nodes, "expansions", (json_int_t)k->expansions,
                         "rounds", (json_int_t)d->rounds, "transpositions",
                         (json_int_t)k->transpositions, "mirrors", (json_int_t)k->mirrors,
                         "repetitions", (json_int_t)k->repetitions, "root_value",
                         doe_node(t, 0)->value));
    report_facts_clear(r);
    report_fact(r, "Tree", "State", "%s", state);
    if (final && st->end == COORD_FAILED)
        report_fact(r, "Tree", "Why", "%s", st->reason);
    report_fact(r, "Tree", "Scored", "%llu of %lld", (unsigned long long)k->scored,
                (long long)d->job->doe.nodes);
    report_fact(r, "Tree", "Nodes", "%u, %llu expanded in %llu rounds", doe_node_count(t),
                (unsigned long long)k->expansions, (unsigned long long)d->rounds);
    report_fact(r, "Tree", "Merged",
                "%llu transpositions (%llu mirrors), %llu repetitions left out",
                (unsigned long long)k->transpositions, (unsigned long long)k->mirrors,
                (unsigned long long)k->repetitions);
    report_fact(r, "Tree", "Root", "%+d cp", doe_node(t, 0)->value);
    report_fact(r, "Tree", "Settings",
                "alpha %.4g, width %d + 1 per %d visits, depth %d, plies < %d", d->job->doe.alpha,
                d->job->doe.width, d->job->doe.widen, d->job->doe.depth, d->job->doe.plies_max);
    if (final)
        report_fact(r, "Book", "Exits", "%llu at plies %d..%d in %d..%d cp%s",
                    (unsigned long long)exits, d->job->doe.plies_min, d->job->doe.plies_max,
                    d->job->doe.score_min, d->job->doe.score_max,
                    d->draw_window ? " and the draw-rate window" : "");
    report_fact(r, "Run", "Run id", "%s", d->run_id);
    report_fact(r, "Run", "This session", "%.1f min, %.0f scored/min", mins,
                mins > 0 ? (double)(k->scored - d->scored_at_start) / mins : 0.0);
    for (int w = 0; w < st->ranks; w++) {
        const CoordRank *rk = &st->rank[w];
        if (rk->state == COORD_RANK_UNKNOWN && !rk->units)
            continue;
        char label[WIRE_MAX_TEXT + 32];
        snprintf(label, sizeof label, "rank %d on %s", w, rk->host[0] ? rk->host : "?");
        report_fact(r, "Workers", label, "%llu leaves, %llu nodes/s%s%s",
                    (unsigned long long)rk->units, (unsigned long long)rk->bench_nps,
                    rk->error[0] ? ": " : "", rk->error);
    }
    int per_ply[BOOKGEN_MAX_PLIES + 1] = {0};
    for (uint32_t i = 0; i < doe_node_count(t); i++) {
        int p = doe_node(t, i)->ply;
        per_ply[p < BOOKGEN_MAX_PLIES ? p : BOOKGEN_MAX_PLIES]++;
    }
    for (int p = 0; p <= BOOKGEN_MAX_PLIES; p++)
        if (per_ply[p]) {
            char label[16];
            snprintf(label, sizeof label, "%d", p);
            report_bar_set(r, "plies", label, per_ply[p]);
        }
    run_report_publish(&d->rr, final, NULL);
}

static void doe_tick(void *ctx, const CoordState *st, bool force)
{
    DoeCoord *d = ctx;
    progress(d, st, force);
    if (d->start_ms && run_report_due(&d->rr))
        refresh(d, st, false, "running", 0);
}

static bool doe_start(void *ctx, const CoordState *st, const char *run_id, char *why,
                      size_t why_len)
{
    (void)why, (void)why_len;
    DoeCoord *d = ctx;
    const JobConfig *j = d->job;
    snprintf(d->run_id, sizeof d->run_id, "%s", run_id);
    if (d->rr.report)
        report_set_run_id(d->rr.report, run_id);
    const DoeCounts *k = doe_counts(d->tree);
    if (st->units_at_start)
        printf("Resuming: %llu unit%s journaled, %llu rounds applied, %u nodes\n",
               (unsigned long long)st->units_at_start, st->units_at_start == 1 ? "" : "s",
               (unsigned long long)d->rounds, doe_node_count(d->tree));
    d->scored_at_start = k->scored;
    d->start_ms = d->last_progress_ms = timeman_now_ms();
    printf("Job %s: drop-out expansion to %lld scored positions, %d leaves a round, alpha %.4g, "
           "width %d + 1 per %d visits, depth %d, plies < %d, %d worker rank%s\n",
           j->name, (long long)j->doe.nodes, j->doe.round, j->doe.alpha, j->doe.width, j->doe.widen,
           j->doe.depth, j->doe.plies_max, st->workers_expected,
           st->workers_expected == 1 ? "" : "s");
    if (j->doe.root[0])
        printf("Root: %s (plies count from it)\n", j->doe.root);
    return true;
}

/// The first-reach line of node i: its moves from the root and the key before each.
static int line_of(const DoeTree *t, uint32_t i, uint16_t *moves, uint64_t *keys, int max)
{
    int n = 0;
    for (uint32_t v = i; doe_node(t, v)->parent != UINT32_MAX && n < max; n++)
        v = doe_node(t, v)->parent;
    int len = n;
    for (uint32_t v = i; n > 0; v = doe_node(t, v)->parent) {
        n--;
        moves[n] = doe_node(t, v)->parent_move;
        keys[n] = doe_node(t, doe_node(t, v)->parent)->key;
    }
    return len;
}

/// The test exits: every node at plies_min..plies_max in the windows, in creation order.
static bool write_exits(DoeCoord *d, uint64_t *accepted, uint64_t *draw_outside, char *why,
                        size_t why_len)
{
    const JobConfig *j = d->job;
    const DoeTree *t = d->tree;
    char path[DOE_PATH_MAX];
    doe_path(d, j->doe.epd, path, sizeof path);
    BookstoreConfig cfg = {
        (int)doe_node_count(t), j->doe.score_min, j->doe.score_max, false, BOOK_VIEW_RED, 0, 0};
    Bookstore *bs = NULL;
    if (bookstore_open(&bs, &cfg, path, false, why, why_len))
        return false;
    bool ok = true;
    for (uint32_t i = 1; ok && i < doe_node_count(t); i++) {
        const DoeNode *n = doe_node(t, i);
        if (n->ply < j->doe.plies_min || n->ply > j->doe.plies_max || n->state == DOE_TERMINAL)
            continue;
        bool black = strchr(n->fen, ' ') && strchr(n->fen, ' ')[1] == 'b';
        int red = black ? -n->value : n->value;
        uint16_t moves[BOOKGEN_MAX_PLIES];
        uint64_t keys[BOOKGEN_MAX_PLIES];
        int32_t scores[BOOKGEN_MAX_PLIES] = {0};
        int len = line_of(t, i, moves, keys, BOOKGEN_MAX_PLIES);
        BookEntry e = {n->key, n->fen, black,  n->ply,        red,         len,
                       keys,   moves,  scores, n->mirror_key, n->in_check, false};
        if (d->draw_window) {
            double dr = wdl_draw_rate(&d->wdl, red, wdl_material_fen(n->fen));
            e.outside = dr < j->doe.draw_min || dr > j->doe.draw_max;
            *draw_outside += e.outside && bookstore_in_window(&cfg, red, black);
        }
        BookVerdict v;
        ok = bookstore_offer(bs, &e, &v) == BOOKSTORE_OK;
    }
    *accepted = bookstore_stats(bs)->accepted;
    if (!ok)
        snprintf(why, why_len, "out of memory for the exits");
    ok = ok && !bookstore_finish(bs, NULL, why, why_len);
    bookstore_close(bs);
    return ok;
}

/// The move books: from every expanded node, its moves within margin cp of the best, weighted
/// 1..100 by how close (100 for the best), for the node and for its mirror.
static bool write_moves(DoeCoord *d, uint64_t *entries, uint64_t *dat_entries, char *why,
                        size_t why_len)
{
    const JobConfig *j = d->job;
    const DoeTree *t = d->tree;
    if (!j->doe.moves[0] && !j->doe.dat[0])
        return true;
    Movebook *mb = movebook_new();
    bool ok = mb != NULL;
    for (uint32_t i = 0; ok && i < doe_node_count(t); i++) {
        const DoeNode *n = doe_node(t, i);
        const DoeEdge *e = doe_edges(t, i);
        for (uint32_t k = 0; ok && n->state == DOE_EXPANDED && k < n->edge_n; k++) {
            int cv = doe_node(t, e[k].child)->value, drop = n->value + cv;
            if (drop > j->doe.margin)
                continue;
            int w = j->doe.margin ? 1 + 99 * (j->doe.margin - drop) / j->doe.margin : 100;
            for (int x = 0; ok && x < w; x++) {
                ok = movebook_add(mb, n->key, e[k].move, -cv) == MOVEBOOK_OK;
                if (ok && n->mirror_key != n->key)
                    ok = movebook_add(mb, n->mirror_key, (uint16_t)eebook_move_mirror(e[k].move),
                                      -cv) == MOVEBOOK_OK;
            }
        }
    }
    if (!ok) {
        snprintf(why, why_len, "out of memory for the move book");
        movebook_free(mb);
        return false;
    }
    *entries = movebook_entries(mb);
    char path[DOE_PATH_MAX];
    // BOOK.DAT is made from the move book's file; without a moves name, from a scratch copy.
    doe_path(d, j->doe.moves[0] ? j->doe.moves : ".doe-moves.tmp", path, sizeof path);
    ok = movebook_write(mb, path, why, why_len) == MOVEBOOK_OK;
    movebook_free(mb);
    if (ok && j->doe.dat[0]) {
        MovebookEntry *me = NULL;
        EebookEntry *de = NULL;
        size_t mn = 0, dn = 0;
        EebookExportStats es;
        char dat[DOE_PATH_MAX];
        doe_path(d, j->doe.dat, dat, sizeof dat);
        board_set_fen(d->board, doe_node(t, 0)->fen, NULL, 0);
        ok = movebook_read(path, &me, &mn, why, why_len) == MOVEBOOK_OK &&
             eebook_from_movebook(me, mn, d->board, &de, &dn, &es) == EEBOOK_OK &&
             eebook_write(dat, de, dn, why, why_len) == EEBOOK_OK;
        *dat_entries = dn;
        free(me);
        free(de);
    }
    if (!j->doe.moves[0])
        unlink(path);
    return ok;
}

static bool write_tree(DoeCoord *d, char *why, size_t why_len)
{
    char path[DOE_PATH_MAX], tmp[DOE_PATH_MAX + 8];
    doe_path(d, d->job->doe.tree, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f && doe_write(d->tree, f);
    ok = f && !fclose(f) && ok && !rename(tmp, path);
    if (!ok)
        snprintf(why, why_len, "cannot write %.500s", path);
    return ok;
}

static const char *state_name(const CoordState *st)
{
    return st->end == COORD_FAILED        ? "failed"
           : st->end == COORD_INTERRUPTED ? "interrupted"
                                          : "complete";
}

static bool write_result(DoeCoord *d, const CoordState *st, double minutes, uint64_t exits,
                         uint64_t draw_outside, uint64_t entries, uint64_t dat_entries)
{
    const JobConfig *j = d->job;
    if (!j->output.result[0])
        return true;
    const DoeTree *t = d->tree;
    const DoeCounts *k = doe_counts(t);
    json_t *o = json_object(), *ply = json_object();
    int per_ply[BOOKGEN_MAX_PLIES + 2] = {0};
    for (uint32_t i = 0; i < doe_node_count(t); i++) {
        int p = doe_node(t, i)->ply;
        per_ply[p <= BOOKGEN_MAX_PLIES ? p : BOOKGEN_MAX_PLIES + 1]++;
    }
    for (int p = 0; p < BOOKGEN_MAX_PLIES + 2; p++)
        if (per_ply[p]) {
            char key[16];
            snprintf(key, sizeof key, "%d", p);
            json_object_set_new(ply, key, json_integer(per_ply[p]));
        }
    // Distinct first moves: the root's moves within the margin (the book's choices there).
    const DoeNode *root = doe_node(t, 0);
    int first = 0;
    for (uint32_t e = 0; root->state == DOE_EXPANDED && e < root->edge_n; e++)
        first += root->value + doe_node(t, doe_edges(t, 0)[e].child)->value <= j->doe.margin;
    const char *state = state_name(st);
    json_object_set_new(o, "schema", json_integer(1));
    json_object_set_new(o, "kind", json_string(job_kind_name(JOB_DOE)));
    json_object_set_new(o, "job", json_string(j->name));
    json_object_set_new(o, "run_id", json_string(d->run_id));
    json_object_set_new(o, "state", json_string(state));
    if (st->end == COORD_FAILED)
        json_object_set_new(o, "reason", json_string(st->reason));
    json_object_set_new(o, "nodes", json_integer(doe_node_count(t)));
    json_object_set_new(o, "scored", json_integer((json_int_t)k->scored));
    json_object_set_new(o, "budget", json_integer((json_int_t)j->doe.nodes));
    json_object_set_new(o, "expansions", json_integer((json_int_t)k->expansions));
    json_object_set_new(o, "rounds", json_integer((json_int_t)d->rounds));
    json_object_set_new(o, "transpositions", json_integer((json_int_t)k->transpositions));
    json_object_set_new(o, "mirrors", json_integer((json_int_t)k->mirrors));
    json_object_set_new(o, "repetitions", json_integer((json_int_t)k->repetitions));
    json_object_set_new(o, "root", json_string(root->fen));
    json_object_set_new(o, "root_value", json_integer(root->value));
    json_object_set_new(o, "first_moves_in_margin", json_integer(first));
    json_object_set_new(o, "exits", json_integer((json_int_t)exits));
    if (d->draw_window)
        json_object_set_new(o, "draw_outside", json_integer((json_int_t)draw_outside));
    json_object_set_new(o, "move_book_entries", json_integer((json_int_t)entries));
    json_object_set_new(o, "book_dat_entries", json_integer((json_int_t)dat_entries));
    json_object_set_new(o, "tree_bytes", json_integer((json_int_t)doe_bytes(t)));
    json_object_set_new(o, "minutes", json_real(minutes));
    json_object_set_new(
        o, "scored_per_minute",
        json_real(minutes > 0 ? (double)(k->scored - d->scored_at_start) / minutes : 0));
    json_object_set_new(o, "per_ply", ply);
    json_object_set_new(o, "version", json_string(XQFORGE_VERSION));
    char path[DOE_PATH_MAX];
    doe_path(d, j->output.result, path, sizeof path);
    bool ok = run_write_json(path, o);
    json_decref(o);
    return ok;
}

static int doe_finish(void *ctx, const CoordState *st)
{
    DoeCoord *d = ctx;
    CoordState end = *st;
    progress(d, &end, true);
    printf("\n");
    char why[600] = "";
    uint64_t exits = 0, draw_outside = 0, entries = 0, dat_entries = 0;
    // The outputs are the tree's as it stands: after an interrupt, a partial book that the
    // resumed run rewrites whole.
    bool ok = write_tree(d, why, sizeof why) &&
              write_exits(d, &exits, &draw_outside, why, sizeof why) &&
              write_moves(d, &entries, &dat_entries, why, sizeof why);
    if (!ok && end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "%.500s", why);
    }
    const DoeCounts *k = doe_counts(d->tree);
    double minutes = (timeman_now_ms() - d->start_ms) / 60000.0;
    printf("Tree: %u nodes, %llu scored, %llu expanded in %llu rounds, %llu transpositions "
           "(%llu mirrors), %llu repetitions left out, root %+d cp\n",
           doe_node_count(d->tree), (unsigned long long)k->scored,
           (unsigned long long)k->expansions, (unsigned long long)d->rounds,
           (unsigned long long)k->transpositions, (unsigned long long)k->mirrors,
           (unsigned long long)k->repetitions, doe_node(d->tree, 0)->value);
    printf("Exits: %llu positions at plies %d..%d in %d..%d cp%s; move book %llu entries, "
           "BOOK.DAT %llu entries\n",
           (unsigned long long)exits, d->job->doe.plies_min, d->job->doe.plies_max,
           d->job->doe.score_min, d->job->doe.score_max,
           d->draw_window ? " and the draw-rate window" : "", (unsigned long long)entries,
           (unsigned long long)dat_entries);
    printf("%llu positions scored in %.2f min: %.0f scored/min\n",
           (unsigned long long)(k->scored - d->scored_at_start), minutes,
           minutes > 0 ? (double)(k->scored - d->scored_at_start) / minutes : 0.0);
    if (!write_result(d, &end, minutes, exits, draw_outside, entries, dat_entries) &&
        end.end != COORD_FAILED) {
        end.end = COORD_FAILED;
        snprintf(end.reason, sizeof end.reason, "cannot write %.200s/%.200s", d->dir,
                 d->job->output.result);
    }
    // The report last, so that its final state includes any failure to write the others.
    refresh(d, &end, true, state_name(&end), exits);
    run_report_end(&d->rr, true);
    if (end.end == COORD_FAILED)
        fprintf(stderr, "xqforge run: failed: %s\n", end.reason);
    return coord_exit_status(&end);
}

static void doe_coord_free(void *ctx)
{
    DoeCoord *d = ctx;
    if (!d)
        return;
    for (int i = 0; i < d->round_n; i++)
        free(d->slot[i].child);
    run_report_end(&d->rr, false);
    doe_free(d->tree);
    free(d->board);
    free(d);
}

static void *doe_kind_new(const CoordSetup *s, CoordKind *out, char *why, size_t why_len)
{
    const JobConfig *j = s->job;
    DoeCoord *d = calloc(1, sizeof *d);
    if (!d || !(d->board = malloc(sizeof *d->board))) {
        snprintf(why, why_len, "out of memory");
        doe_coord_free(d);
        return NULL;
    }
    d->job = j;
    snprintf(d->dir, sizeof d->dir, "%s", s->dir);
    if (j->doe.round > DOE_ROUND_MAX) {
        snprintf(why, why_len, "doe.round %d: at most %d leaves a round", j->doe.round,
                 DOE_ROUND_MAX);
        doe_coord_free(d);
        return NULL;
    }
    if (j->doe.wdl_model[0]) {
        char wwhy[600];
        if (wdl_load(&d->wdl, j->doe.wdl_model, wwhy, sizeof wwhy)) {
            snprintf(why, why_len, "doe.wdl_model: %s", wwhy);
            doe_coord_free(d);
            return NULL;
        }
        d->draw_window = true;
    }
    // The root ([doe] root, else the start position) as an EPD position: its keys from the
    // replay of no move.
    BookgenLine root;
    if (!bookgen_replay(j->doe.root[0] ? j->doe.root : BOARD_START_FEN, NULL, 0, &root, why,
                        why_len)) {
        doe_coord_free(d);
        return NULL;
    }
    DoeConfig cfg = {j->doe.alpha, j->doe.width, j->doe.widen, j->doe.plies_max};
    d->tree = doe_new(&cfg, root.epd, root.key, root.mirror_key, root.in_check);
    if (!d->tree) {
        snprintf(why, why_len, "out of memory");
        doe_coord_free(d);
        return NULL;
    }
    char title[JOB_TEXT_MAX + 16];
    snprintf(title, sizeof title, "%s: %s", job_kind_name(JOB_DOE), j->name);
    run_report_begin(&d->rr, j, s->dir, "", title);
    if (d->rr.report)
        report_plot(d->rr.report, "plies", REPORT_PLOT_BARS, "Nodes by ply", "ply", "nodes");
    // Round 0 is the root alone; rounds are chosen only from here on, the same in every run.
    d->round_n = 0;
    next_round(d);
    *out = (CoordKind){.ctx = d,
                       .result_kind = WIRE_BOOK,
                       .check = doe_check,
                       .count = doe_count,
                       .attach = doe_attach,
                       .unit_limit = doe_limit,
                       .complete = doe_complete,
                       .tick = doe_tick,
                       .start = doe_start,
                       .finish = doe_finish};
    return d;
}

const CoordKindDef coord_doe_def = {.kind_new = doe_kind_new, .kind_free = doe_coord_free};
