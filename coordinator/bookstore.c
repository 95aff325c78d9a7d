// SPDX-License-Identifier: MIT
#include "bookstore.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyset.h"
#include "movebook.h"
#include "svg.h"

enum { TOP_MOVES = 20 }; // first moves listed in the reports

/// Accepted lines per opening family: open addressing on the family's hash, doubling at half
/// full (families are few: at most the accepted lines).
typedef struct {
    uint64_t key;
    uint32_t count; // 0: an empty slot
} FamilySlot;

typedef struct {
    FamilySlot *slots;
    size_t mask, used;
} FamilyMap;

// Invariant: keys holds every accepted position and every excluded one (an existing book), so
// one lookup answers both "duplicate" and "in the existing book"; st counts every offer made
// while the book was not full, each under exactly one verdict.
struct Bookstore {
    BookstoreConfig cfg;
    KeySet keys;
    FamilyMap families;
    Movebook *moves; // NULL: no move book
    FILE *epd;
    BookstoreStats st;
};

const char *bookstore_strerror(BookstoreStatus st)
{
    static const char *const text[BOOKSTORE_STATUS_NB] = {"ok", "input/output error",
                                                          "out of memory"};
    return (unsigned)st < BOOKSTORE_STATUS_NB ? text[st] : "unknown bookstore status";
}

// The key set's first table is sized for the target (it doubles past that, e.g. with an
// existing book).
// The EPD file is truncated: a resumed run replays its journal and writes every line again.
BookstoreStatus bookstore_open(Bookstore **out, const BookstoreConfig *cfg, const char *epd_path,
                               bool with_moves, char *why, size_t why_len)
{
    *out = NULL;
    Bookstore *bs = calloc(1, sizeof *bs);
    if (!bs || keyset_init(&bs->keys, (size_t)cfg->target) != 0 ||
        (with_moves && !(bs->moves = movebook_new()))) {
        if (bs)
            keyset_destroy(&bs->keys);
        free(bs);
        snprintf(why, why_len, "out of memory");
        return BOOKSTORE_ERR_NOMEM;
    }
    bs->cfg = *cfg;
    if (!(bs->epd = fopen(epd_path, "w"))) {
        snprintf(why, why_len, "%s: %s", epd_path, strerror(errno));
        bookstore_close(bs);
        return BOOKSTORE_ERR_IO;
    }
    *out = bs;
    return BOOKSTORE_OK;
}

void bookstore_close(Bookstore *bs)
{
    if (!bs)
        return;
    free(bs->families.slots);
    if (bs->epd)
        fclose(bs->epd);
    keyset_destroy(&bs->keys);
    movebook_free(bs->moves);
    free(bs);
}

// An existing book's position goes into the same key set as the accepted ones: it is then a
// duplicate (and its mirror a mirror) for every later candidate. Counted once per distinct key.
BookstoreStatus bookstore_exclude(Bookstore *bs, uint64_t key)
{
    int r = keyset_add(&bs->keys, key);
    if (r < 0)
        return BOOKSTORE_ERR_NOMEM;
    bs->st.existing += (uint64_t)r;
    return BOOKSTORE_OK;
}

const char *bookstore_view_name(BookView v)
{
    return v == BOOK_VIEW_SIDE_TO_MOVE ? "side_to_move" : "red";
}

// Scores arrive in Red's view; the side to move's view negates them when Black is to move.
int bookstore_view_score(const BookstoreConfig *cfg, int score, bool black_to_move)
{
    return cfg->view == BOOK_VIEW_SIDE_TO_MOVE && black_to_move ? -score : score;
}

// Both ends inclusive. either_side accepts the window mirrored around 0 as well, for a book of
// unbalanced positions that may favour either side.
bool bookstore_in_window(const BookstoreConfig *cfg, int score, bool black_to_move)
{
    int v = bookstore_view_score(cfg, score, black_to_move);
    return (v >= cfg->score_min && v <= cfg->score_max) ||
           (cfg->either_side && -v >= cfg->score_min && -v <= cfg->score_max);
}

/// The family of a line: its start position and first family_plies moves (all of a shorter
/// line).
static uint64_t family_of(const BookstoreConfig *cfg, const BookEntry *e)
{
    // An FNV-style step per move, with an xor-shift so that neighbouring move values spread over
    // the whole word (the map indexes by the low bits). Two lines share a family exactly when they
    // start from the same position with the same first moves, up to the rare hash collision.
    uint64_t h = e->path_len > 0 ? e->keys[0] : e->key;
    int n = e->path_len < cfg->family_plies ? e->path_len : cfg->family_plies;
    for (int i = 0; i < n; i++) {
        h = (h ^ e->moves[i]) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    return h;
}

/// The slot of key (found or empty); NULL when out of memory.
/// Linear probing; the map doubles before it would be more than half full, so a probe always
/// ends at an empty slot and stays short. A slot is empty while its count is 0: a family takes
/// a slot only once a line of it is accepted.
static FamilySlot *family_slot(FamilyMap *m, uint64_t key)
{
    if (2 * (m->used + 1) > m->mask + 1 || !m->slots) {
        size_t cap = m->slots ? 2 * (m->mask + 1) : 256;
        FamilySlot *grown = calloc(cap, sizeof *grown);
        if (!grown)
            return NULL;
        for (size_t i = 0; m->slots && i <= m->mask; i++) {
            if (!m->slots[i].count)
                continue;
            size_t k = m->slots[i].key & (cap - 1);
            while (grown[k].count)
                k = (k + 1) & (cap - 1);
            grown[k] = m->slots[i];
        }
        free(m->slots);
        m->slots = grown;
        m->mask = cap - 1;
    }
    size_t k = key & m->mask;
    while (m->slots[k].count && m->slots[k].key != key)
        k = (k + 1) & m->mask;
    return &m->slots[k];
}

// Full is final: accepted only grows, and bookstore_offer looks at nothing once it holds.
bool bookstore_full(const Bookstore *bs) { return bs->st.accepted >= (uint64_t)bs->cfg.target; }

/// Bin 0 holds scores below -BIN_RANGE, the last bin BIN_RANGE and above, and bins 1.. the
/// BIN_CP-wide steps between (score + BIN_RANGE is not negative there, so the division floors).
static int bin_of(int score)
{
    if (score < -BOOKSTORE_BIN_RANGE)
        return 0;
    if (score >= BOOKSTORE_BIN_RANGE)
        return BOOKSTORE_BINS - 1;
    return 1 + (score + BOOKSTORE_BIN_RANGE) / BOOKSTORE_BIN_CP;
}

int bookstore_bin_low(int bin)
{
    return bin == 0 ? INT_MIN : -BOOKSTORE_BIN_RANGE + (bin - 1) * BOOKSTORE_BIN_CP;
}

/// Counts the accepted line in the move book: every move of its path.
/// Each (position before the move, move) pair is counted with the move's shallow score, so
/// the move book weighs moves by how many accepted lines play them from that position.
static BookstoreStatus add_moves(Bookstore *bs, const BookEntry *e)
{
    for (int i = 0; bs->moves && i < e->path_len; i++)
        if (movebook_add(bs->moves, e->keys[i], e->moves[i], e->move_scores[i]) != MOVEBOOK_OK)
            return BOOKSTORE_ERR_NOMEM;
    return BOOKSTORE_OK;
}

/// ` c0 "m1 m2 ...";` and the line's end; negative on a write error.
static int write_path(FILE *f, const BookEntry *e)
{
    int r = 0;
    for (int i = 0; i < e->path_len && r >= 0; i++) {
        char mv[8];
        bookstore_move_text(e->moves[i], mv);
        r = fprintf(f, "%s%s", i ? " " : " c0 \"", mv);
    }
    return r < 0 ? r : fprintf(f, "%s\n", e->path_len ? "\";" : "");
}

/// Counts a rejection under its reason and returns the verdict, so that each verdict is
/// counted exactly once, where it is decided.
static BookVerdict reject(uint64_t *count, BookVerdict v)
{
    (*count)++;
    return v;
}

/// The verdict before the key sets and families are touched: check, then window.
/// The order fixes which reason a candidate is counted under when several apply: a position in
/// check is never looked up, a duplicate outside the window counts as outside. A symmetric
/// position (its own mirror) is judged as a duplicate only.
static BookVerdict screen(Bookstore *bs, const BookEntry *e)
{
    if (e->in_check)
        return reject(&bs->st.in_check, BOOK_IN_CHECK);
    if (e->outside || !bookstore_in_window(&bs->cfg, e->score, e->black_to_move))
        return reject(&bs->st.outside, BOOK_OUTSIDE);
    if (keyset_has(&bs->keys, e->key))
        return reject(&bs->st.duplicates, BOOK_DUPLICATE);
    if (e->mirror_key != e->key && keyset_has(&bs->keys, e->mirror_key))
        return reject(&bs->st.mirrors, BOOK_MIRROR);
    return BOOK_ACCEPTED;
}

BookstoreStatus bookstore_offer(Bookstore *bs, const BookEntry *e, BookVerdict *verdict)
{
    if (bookstore_full(bs)) {
        *verdict = BOOK_FULL;
        return BOOKSTORE_OK;
    }
    // Every candidate offered before the book is full enters hist_all, whatever its verdict:
    // the spread of the generator's scores against the window.
    bs->st.candidates++;
    int view = bookstore_view_score(&bs->cfg, e->score, e->black_to_move);
    bs->st.hist_all[bin_of(view)]++;
    *verdict = screen(bs, e);
    if (*verdict != BOOK_ACCEPTED)
        return BOOKSTORE_OK;
    // The family cap is checked last, after the screen: a capped line is not added to the key
    // set, so its position may still be accepted later through a line of another family.
    FamilySlot *fam = NULL;
    if (bs->cfg.family_plies > 0) {
        uint64_t key = family_of(&bs->cfg, e);
        if (!(fam = family_slot(&bs->families, key)))
            return BOOKSTORE_ERR_NOMEM;
        if (bs->cfg.family_cap > 0 && fam->count >= (uint32_t)bs->cfg.family_cap) {
            *verdict = reject(&bs->st.family_capped, BOOK_FAMILY);
            return BOOKSTORE_OK;
        }
        fam->key = key;
    }
    // From here the line is accepted: key, move book, EPD line, then the counts. A failure in
    // between is an error that ends the run, so nothing is built on a half-counted line.
    if (keyset_add(&bs->keys, e->key) < 0)
        return BOOKSTORE_ERR_NOMEM;
    BookstoreStatus st = add_moves(bs, e);
    if (st)
        return st;
    // EPD's ce is from the side to move; c0 (a comment) holds the line from the generator's
    // start, so a book from the start position can be given as "startpos moves ..." lines.
    if (fprintf(bs->epd, "%s ce %d; ply %d;", e->epd, e->black_to_move ? -e->score : e->score,
                e->ply) < 0 ||
        write_path(bs->epd, e) < 0)
        return BOOKSTORE_ERR_IO;
    // A family is counted (and fills the map) on its first accepted line only.
    if (fam && fam->count++ == 0) {
        bs->families.used++;
        bs->st.families++;
    }
    bs->st.accepted++;
    bs->st.per_ply[e->ply < BOOKSTORE_PLY_MAX ? e->ply : BOOKSTORE_PLY_MAX]++;
    if (e->path_len > 0)
        bs->st.first_move[e->moves[0] % BOOKSTORE_MOVE_NB]++;
    bs->st.hist_accepted[bin_of(view)]++;
    return BOOKSTORE_OK;
}

const BookstoreStats *bookstore_stats(const Bookstore *bs) { return &bs->st; }

size_t bookstore_set_bytes(const Bookstore *bs) { return keyset_bytes(&bs->keys); }

size_t bookstore_moves_bytes(const Bookstore *bs)
{
    return bs->moves ? movebook_bytes(bs->moves) : 0;
}

// No fsync here: the journal is the record, and the EPD file is rebuilt from it on resume.
void bookstore_flush(Bookstore *bs) { fflush(bs->epd); }

BookstoreStatus bookstore_finish(Bookstore *bs, const char *moves_path, char *why, size_t why_len)
{
    // At the end the EPD file is synced: a finished run's book survives a crash of the machine.
    if (fflush(bs->epd) != 0 || fsync(fileno(bs->epd)) != 0) {
        snprintf(why, why_len, "book EPD: %s", strerror(errno));
        return BOOKSTORE_ERR_IO;
    }
    if (!bs->moves || !moves_path || !moves_path[0])
        return BOOKSTORE_OK;
    MovebookStatus ms = movebook_write(bs->moves, moves_path, why, why_len);
    return ms == MOVEBOOK_OK          ? BOOKSTORE_OK
           : ms == MOVEBOOK_ERR_NOMEM ? BOOKSTORE_ERR_NOMEM
                                      : BOOKSTORE_ERR_IO;
}

// Square = file + 9 * rank (files a..i, ranks 0..9), 7 bits each. The % keep the text in 4
// characters for any 14-bit value, so out[8] always suffices.
void bookstore_move_text(uint16_t move, char out[8])
{
    int from = move & 0x7f, to = move >> 7 & 0x7f;
    snprintf(out, 8, "%c%d%c%d", 'a' + from % 9, from / 9 % 10, 'a' + to % 9, to / 9 % 10);
}

typedef struct {
    uint64_t count;
    int move;
} MoveCount;

/// Most played first; ties by move value, so that the order (and the reports) never depend on
/// qsort's instability.
static int count_cmp(const void *pa, const void *pb)
{
    const MoveCount *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return a->move - b->move;
}

/// The most played first moves, most first, into top[0..max); returns how many, and the
/// number of distinct first moves in *distinct.
static int top_first_moves(const BookstoreStats *st, MoveCount *top, int max, int *distinct)
{
    // 16384 entries (256 KiB): on the heap. Out of memory, the lists are empty, not wrong.
    MoveCount *all = malloc(sizeof *all * BOOKSTORE_MOVE_NB);
    int n = 0;
    for (int m = 0; all && m < BOOKSTORE_MOVE_NB; m++)
        if (st->first_move[m])
            all[n++] = (MoveCount){st->first_move[m], m};
    if (all)
        qsort(all, (size_t)n, sizeof *all, count_cmp);
    *distinct = n;
    n = n < max ? n : max;
    if (all)
        memcpy(top, all, sizeof *top * (size_t)n);
    free(all);
    return all ? n : 0;
}

/// A bin's range as text, both ends inclusive (-300..-291); the open bins say so in words.
static void bin_label(int bin, char *out, size_t len)
{
    if (bin == 0)
        snprintf(out, len, "under %d", -BOOKSTORE_BIN_RANGE); // no '<': it goes into HTML
    else if (bin == BOOKSTORE_BINS - 1)
        snprintf(out, len, "%d up", BOOKSTORE_BIN_RANGE);
    else
        snprintf(out, len, "%d..%d", bookstore_bin_low(bin),
                 bookstore_bin_low(bin) + BOOKSTORE_BIN_CP - 1);
}

int bookstore_distinct_first_moves(const BookstoreStats *st)
{
    int n = 0;
    for (int m = 0; m < BOOKSTORE_MOVE_NB; m++)
        n += st->first_move[m] != 0;
    return n;
}

static const char *view_text(BookView v)
{
    return v == BOOK_VIEW_SIDE_TO_MOVE ? "side to move's view" : "Red's view";
}

void bookstore_report(const Bookstore *bs, FILE *out)
{
    const BookstoreStats *st = &bs->st;
    fprintf(out,
            "Book: %llu positions accepted of %llu candidates (%llu outside the window, %llu "
            "duplicates, %llu mirrors, %llu in check, %llu over the family cap; %llu positions "
            "of an existing book excluded)\n",
            (unsigned long long)st->accepted, (unsigned long long)st->candidates,
            (unsigned long long)st->outside, (unsigned long long)st->duplicates,
            (unsigned long long)st->mirrors, (unsigned long long)st->in_check,
            (unsigned long long)st->family_capped, (unsigned long long)st->existing);
    fprintf(out, "Distinct positions per ply:");
    for (int p = 0; p <= BOOKSTORE_PLY_MAX; p++)
        if (st->per_ply[p])
            fprintf(out, " %d%s:%llu", p, p == BOOKSTORE_PLY_MAX ? "+" : "",
                    (unsigned long long)st->per_ply[p]);
    MoveCount top[TOP_MOVES];
    int distinct = 0, n = top_first_moves(st, top, TOP_MOVES, &distinct);
    fprintf(out, "\nFirst moves (%d distinct):", distinct);
    for (int i = 0; i < n; i++) {
        char mv[8];
        bookstore_move_text((uint16_t)top[i].move, mv);
        fprintf(out, " %s %.1f%%", mv, 100.0 * (double)top[i].count / (double)st->accepted);
    }
    if (bs->cfg.family_plies > 0)
        fprintf(out, "\nFamilies (first %d plies): %llu distinct, at most %d lines each%s",
                bs->cfg.family_plies, (unsigned long long)st->families, bs->cfg.family_cap,
                bs->cfg.family_cap ? "" : " (no cap)");
    fprintf(out, "\nVerification scores (%s, cp; accepted / all candidates):\n",
            view_text(bs->cfg.view));
    for (int b = 0; b < BOOKSTORE_BINS; b++) {
        if (!st->hist_all[b])
            continue;
        char label[32];
        bin_label(b, label, sizeof label);
        fprintf(out, "  %-10s %8llu / %8llu\n", label, (unsigned long long)st->hist_accepted[b],
                (unsigned long long)st->hist_all[b]);
    }
}

/// The score histogram as a line chart with axes: every candidate and the accepted ones per
/// bin, at the bin's centre (the two open-ended bins are left out; the text report has them).
static SvgStatus score_chart(const Bookstore *bs, SvgBuf *o)
{
    enum { N = BOOKSTORE_BINS - 2 };
    SvgPoint all[N], acc[N];
    for (int b = 1; b <= N; b++) {
        double x = bookstore_bin_low(b) + BOOKSTORE_BIN_CP / 2.0;
        all[b - 1] = (SvgPoint){x, (double)bs->st.hist_all[b]};
        acc[b - 1] = (SvgPoint){x, (double)bs->st.hist_accepted[b]};
    }
    SvgSeries series[2] = {{"every candidate", all, N, NULL, NULL},
                           {"accepted", acc, N, NULL, NULL}};
    char xlabel[64];
    snprintf(xlabel, sizeof xlabel, "verification score (cp, %s)", view_text(bs->cfg.view));
    SvgLineChart c = {"Candidates per 10 cp bin", xlabel, "positions", series, 2, NULL, 0, false};
    return svg_line_chart(&c, o);
}

/// The first-move distribution as a bar chart: the TOP_MOVES most played, lines each.
static SvgStatus first_move_chart(const BookstoreStats *st, SvgBuf *o)
{
    MoveCount top[TOP_MOVES];
    int distinct = 0, n = top_first_moves(st, top, TOP_MOVES, &distinct);
    char text[TOP_MOVES][8];
    SvgBar bars[TOP_MOVES];
    for (int i = 0; i < n; i++) {
        bookstore_move_text((uint16_t)top[i].move, text[i]);
        bars[i] = (SvgBar){text[i], (double)top[i].count};
    }
    char title[64];
    snprintf(title, sizeof title, "First moves (%d distinct)", distinct);
    SvgBarChart c = {title, "lines", bars, n};
    return svg_bar_chart(&c, o);
}

static void html_tables(const Bookstore *bs, FILE *f)
{
    const BookstoreStats *st = &bs->st;
    fprintf(f, "<h2>Distinct positions per ply</h2>\n<table><tr><th>ply</th><th>positions</th>"
               "</tr>\n");
    for (int p = 0; p <= BOOKSTORE_PLY_MAX; p++)
        if (st->per_ply[p])
            fprintf(f, "<tr><td>%d</td><td>%llu</td></tr>\n", p,
                    (unsigned long long)st->per_ply[p]);
    MoveCount top[TOP_MOVES];
    int distinct = 0, n = top_first_moves(st, top, TOP_MOVES, &distinct);
    fprintf(f,
            "</table>\n<h2>First moves (%d distinct)</h2>\n<table><tr><th>move</th>"
            "<th>lines</th><th>share</th></tr>\n",
            distinct);
    for (int i = 0; i < n; i++) {
        char mv[8];
        bookstore_move_text((uint16_t)top[i].move, mv);
        fprintf(f, "<tr><td>%s</td><td>%llu</td><td>%.1f%%</td></tr>\n", mv,
                (unsigned long long)top[i].count,
                100.0 * (double)top[i].count / (double)(st->accepted ? st->accepted : 1));
    }
    fprintf(f, "</table>\n");
}

/// The variety and rejection figures, one table row each (tests read them by their id).
static void html_figures(const Bookstore *bs, FILE *f)
{
    const BookstoreStats *st = &bs->st;
    const struct {
        const char *id, *label;
        uint64_t value;
    } rows[] = {
        {"accepted", "accepted", st->accepted},
        {"candidates", "candidates", st->candidates},
        {"first_moves", "distinct first moves", (uint64_t)bookstore_distinct_first_moves(st)},
        {"families", "distinct families", st->families},
        {"outside", "rejected: outside the window", st->outside},
        {"in_check", "rejected: side to move in check", st->in_check},
        {"duplicates", "rejected: duplicate position", st->duplicates},
        {"mirrors", "rejected: mirror of a book position", st->mirrors},
        {"family_capped", "rejected: family cap reached", st->family_capped},
        {"existing", "positions of an existing book excluded", st->existing},
    };
    fprintf(f, "<h2>Variety and rejections</h2>\n<table>\n");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "<tr id=\"%s\"><th>%s</th><td>%llu</td></tr>\n", rows[i].id, rows[i].label,
                (unsigned long long)rows[i].value);
    fprintf(f, "</table>\n");
}

// The charts are drawn into memory first, so that out of memory leaves no half-written page.
// The job's name is the only text from outside, and it is escaped (the rest are numbers).
BookstoreStatus bookstore_write_html(const Bookstore *bs, const char *path, const char *name)
{
    SvgBuf charts;
    svg_buf_init(&charts, 0);
    score_chart(bs, &charts);
    svg_buf_printf(&charts, "\n");
    first_move_chart(&bs->st, &charts);
    if (charts.status != SVG_OK) {
        svg_buf_destroy(&charts);
        return BOOKSTORE_ERR_NOMEM;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        svg_buf_destroy(&charts);
        return BOOKSTORE_ERR_IO;
    }
    SvgBuf title;
    svg_buf_init(&title, 1024);
    svg_buf_escaped(&title, name);
    const char *t = title.status == SVG_OK && title.data ? title.data : "book";
    const BookstoreConfig *c = &bs->cfg;
    fprintf(f,
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n"
            "<style>body{font-family:sans-serif;max-width:760px}td,th{padding:2px 8px;"
            "text-align:right}svg{max-width:100%%}</style></head><body>\n<h1>Opening book: %s"
            "</h1>\n<p>%llu positions accepted of %llu candidates. Window %d..%d cp, %s%s; "
            "families: the first %d plies, at most %d lines each (0: no cap); no position with "
            "the side to move in check, none whose left-right mirror is in the book.</p>\n",
            t, t, (unsigned long long)bs->st.accepted, (unsigned long long)bs->st.candidates,
            c->score_min, c->score_max, view_text(c->view), c->either_side ? " (either side)" : "",
            c->family_plies, c->family_cap);
    svg_buf_destroy(&title);
    html_figures(bs, f);
    fprintf(f, "<h2>Verification scores and first moves</h2>\n%s\n", charts.data);
    svg_buf_destroy(&charts);
    html_tables(bs, f);
    fprintf(f, "</body></html>\n");
    return fclose(f) == 0 ? BOOKSTORE_OK : BOOKSTORE_ERR_IO;
}
