// SPDX-License-Identifier: MIT
#include "bookstore.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyset.h"
#include "movebook.h"

enum { TOP_MOVES = 20 }; // first moves listed in the reports

struct Bookstore {
    BookstoreConfig cfg;
    KeySet keys;
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
    if (bs->epd)
        fclose(bs->epd);
    keyset_destroy(&bs->keys);
    movebook_free(bs->moves);
    free(bs);
}

BookstoreStatus bookstore_exclude(Bookstore *bs, uint64_t key)
{
    int r = keyset_add(&bs->keys, key);
    if (r < 0)
        return BOOKSTORE_ERR_NOMEM;
    bs->st.existing += (uint64_t)r;
    return BOOKSTORE_OK;
}

bool bookstore_in_window(const BookstoreConfig *cfg, int score)
{
    return (score >= cfg->score_min && score <= cfg->score_max) ||
           (cfg->either_side && -score >= cfg->score_min && -score <= cfg->score_max);
}

bool bookstore_full(const Bookstore *bs) { return bs->st.accepted >= (uint64_t)bs->cfg.target; }

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
static BookstoreStatus add_moves(Bookstore *bs, const BookEntry *e)
{
    for (int i = 0; bs->moves && i < e->path_len; i++)
        if (movebook_add(bs->moves, e->keys[i], e->moves[i], e->move_scores[i]) != MOVEBOOK_OK)
            return BOOKSTORE_ERR_NOMEM;
    return BOOKSTORE_OK;
}

BookstoreStatus bookstore_offer(Bookstore *bs, const BookEntry *e, BookVerdict *verdict)
{
    if (bookstore_full(bs)) {
        *verdict = BOOK_FULL;
        return BOOKSTORE_OK;
    }
    bs->st.candidates++;
    bs->st.hist_all[bin_of(e->score)]++;
    if (!bookstore_in_window(&bs->cfg, e->score)) {
        bs->st.outside++;
        *verdict = BOOK_OUTSIDE;
        return BOOKSTORE_OK;
    }
    int added = keyset_add(&bs->keys, e->key);
    if (added < 0)
        return BOOKSTORE_ERR_NOMEM;
    if (added == 0) {
        bs->st.duplicates++;
        *verdict = BOOK_DUPLICATE;
        return BOOKSTORE_OK;
    }
    BookstoreStatus st = add_moves(bs, e);
    if (st)
        return st;
    // EPD's ce is from the side to move.
    if (fprintf(bs->epd, "%s ce %d; ply %d;\n", e->epd, e->black_to_move ? -e->score : e->score,
                e->ply) < 0)
        return BOOKSTORE_ERR_IO;
    bs->st.accepted++;
    bs->st.per_ply[e->ply < BOOKSTORE_PLY_MAX ? e->ply : BOOKSTORE_PLY_MAX]++;
    if (e->path_len > 0)
        bs->st.first_move[e->moves[0] % BOOKSTORE_MOVE_NB]++;
    bs->st.hist_accepted[bin_of(e->score)]++;
    *verdict = BOOK_ACCEPTED;
    return BOOKSTORE_OK;
}

const BookstoreStats *bookstore_stats(const Bookstore *bs) { return &bs->st; }

size_t bookstore_set_bytes(const Bookstore *bs) { return keyset_bytes(&bs->keys); }

size_t bookstore_moves_bytes(const Bookstore *bs)
{
    return bs->moves ? movebook_bytes(bs->moves) : 0;
}

void bookstore_flush(Bookstore *bs) { fflush(bs->epd); }

BookstoreStatus bookstore_finish(Bookstore *bs, const char *moves_path, char *why, size_t why_len)
{
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

void bookstore_move_text(uint16_t move, char out[8])
{
    int from = move & 0x7f, to = move >> 7 & 0x7f;
    snprintf(out, 8, "%c%d%c%d", 'a' + from % 9, from / 9 % 10, 'a' + to % 9, to / 9 % 10);
}

typedef struct {
    uint64_t count;
    int move;
} MoveCount;

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

void bookstore_report(const Bookstore *bs, FILE *out)
{
    const BookstoreStats *st = &bs->st;
    fprintf(out,
            "Book: %llu positions accepted of %llu candidates (%llu outside the window, %llu "
            "duplicates; %llu positions of an existing book excluded)\n",
            (unsigned long long)st->accepted, (unsigned long long)st->candidates,
            (unsigned long long)st->outside, (unsigned long long)st->duplicates,
            (unsigned long long)st->existing);
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
    fprintf(out, "\nVerification scores (Red's view, cp; accepted / all candidates):\n");
    for (int b = 0; b < BOOKSTORE_BINS; b++) {
        if (!st->hist_all[b])
            continue;
        char label[32];
        bin_label(b, label, sizeof label);
        fprintf(out, "  %-10s %8llu / %8llu\n", label, (unsigned long long)st->hist_accepted[b],
                (unsigned long long)st->hist_all[b]);
    }
}

/// An SVG bar chart of counts[0..n) with labels under every fifth bar.
static void svg_bars(FILE *f, const uint64_t *counts, const uint64_t *under, int n,
                     const char *const *labels)
{
    uint64_t max = 1;
    for (int i = 0; i < n; i++)
        max = counts[i] > max ? counts[i] : max;
    int w = 12, h = 160;
    fprintf(f, "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            n * w + 20, h + 40);
    for (int i = 0; i < n; i++) {
        int bh = (int)((double)counts[i] / (double)max * h), uh = 0;
        if (under)
            uh = (int)((double)under[i] / (double)max * h);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#bbb\"><title>%s: "
                "%llu</title></rect>\n",
                10 + i * w, h - bh, w - 2, bh, labels[i], (unsigned long long)counts[i]);
        if (under && uh)
            fprintf(f,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#c33\"><title>%s "
                    "accepted: %llu</title></rect>\n",
                    10 + i * w, h - uh, w - 2, uh, labels[i], (unsigned long long)under[i]);
        if (i % 5 == 0)
            fprintf(f,
                    "<text x=\"%d\" y=\"%d\" font-size=\"9\" transform=\"rotate(45 %d %d)\">%s"
                    "</text>\n",
                    10 + i * w, h + 12, 10 + i * w, h + 12, labels[i]);
    }
    fprintf(f, "</svg>\n");
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

/// Text safe inside HTML: <, >, & and " escaped, cut to fit out.
static void html_escape(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (; *in && n + 7 < len; in++) {
        const char *rep = *in == '<'   ? "&lt;"
                          : *in == '>' ? "&gt;"
                          : *in == '&' ? "&amp;"
                          : *in == '"' ? "&quot;"
                                       : NULL;
        n += rep ? (size_t)snprintf(out + n, len - n, "%s", rep) : (out[n] = *in, 1);
    }
    out[n] = '\0';
}

BookstoreStatus bookstore_write_html(const Bookstore *bs, const char *path, const char *name)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return BOOKSTORE_ERR_IO;
    char title[256];
    html_escape(name, title, sizeof title);
    const BookstoreStats *st = &bs->st;
    fprintf(f,
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n"
            "<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}"
            "</style></head><body>\n<h1>Opening book: %s</h1>\n<p>%llu positions accepted of "
            "%llu candidates: %llu outside the window %d..%d cp%s, %llu duplicates, %llu "
            "positions of an existing book excluded.</p>\n",
            title, title, (unsigned long long)st->accepted, (unsigned long long)st->candidates,
            (unsigned long long)st->outside, bs->cfg.score_min, bs->cfg.score_max,
            bs->cfg.either_side ? " (either side)" : "", (unsigned long long)st->duplicates,
            (unsigned long long)st->existing);
    fprintf(f,
            "<h2>Verification scores</h2>\n<p>Red's view, %d cp bins; grey: every candidate, "
            "red: accepted.</p>\n",
            BOOKSTORE_BIN_CP);
    char text[BOOKSTORE_BINS][32];
    const char *labels[BOOKSTORE_BINS];
    for (int b = 0; b < BOOKSTORE_BINS; b++) {
        bin_label(b, text[b], sizeof text[b]);
        labels[b] = text[b];
    }
    svg_bars(f, st->hist_all, st->hist_accepted, BOOKSTORE_BINS, labels);
    html_tables(bs, f);
    fprintf(f, "</body></html>\n");
    return fclose(f) == 0 ? BOOKSTORE_OK : BOOKSTORE_ERR_IO;
}
