// SPDX-License-Identifier: MIT
// The coordinator's opening book as it grows: each candidate offered (in the fixed order of
// work units, so the book does not depend on which worker was faster) is refused when its side
// to move is in check, judged against the score window (Red's view or the side to move's) and
// the caller's verdict (BookEntry.outside: the draw-rate window of coordinator/books.c),
// deduplicated by position key and by the key of its left-right mirror against everything
// accepted and against an existing book, held to a cap per opening family (its first plies),
// and, if accepted, written to the EPD file at once and counted in the weighted move book and
// the diversity statistics. Memory: the key set (11.4 to 22.9 bytes a
// position) plus, when the move book is on, about 24 to 48 bytes per distinct (position,
// move) on the lines to the accepted positions.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    BOOKSTORE_PLY_MAX = 127,   // per-ply counts; later plies count in the last
    BOOKSTORE_BIN_CP = 10,     // histogram bin width
    BOOKSTORE_BIN_RANGE = 300, // bins cover -300..300 cp; two more hold what is outside
    BOOKSTORE_BINS = 2 * BOOKSTORE_BIN_RANGE / BOOKSTORE_BIN_CP + 2,
    BOOKSTORE_MOVE_NB = 1 << 14 // Move values (from | to << 7)
};

typedef enum {
    BOOK_VIEW_RED,          // the window applies to Red's score
    BOOK_VIEW_SIDE_TO_MOVE, // ... to the score of the side to move
    BOOK_VIEW_NB
} BookView;

typedef struct {
    int target;               // accepted positions wanted
    int score_min, score_max; // cp, in the view below
    bool either_side;         // also accept -score_max..-score_min
    BookView view;
    int family_plies; // a line's family: its first family_plies moves (0: no families)
    int family_cap;   // accepted lines per family at most (0: no cap)
} BookstoreConfig;

/// One candidate, replayed by the caller.
typedef struct {
    uint64_t key;
    const char *epd; // position part: board, side, "- -"
    bool black_to_move;
    int ply;
    int score; // verification score, Red's view
    int path_len;
    const uint64_t *keys;       // key before each move of the path
    const uint16_t *moves;      // the path
    const int32_t *move_scores; // shallow score of each move, mover's view
    uint64_t mirror_key;        // key of the left-right mirror of the position
    bool in_check;              // the side to move is in check
    bool outside;               // outside a window the caller judged (the draw-rate window)
} BookEntry;

typedef enum {
    BOOK_ACCEPTED,
    BOOK_DUPLICATE, // in the window, but the position is in the book already
    BOOK_OUTSIDE,   // outside the window
    BOOK_IN_CHECK,  // the side to move is in check
    BOOK_MIRROR,    // the position's mirror is in the book (or the existing one)
    BOOK_FAMILY,    // its opening family has family_cap lines already
    BOOK_FULL,      // the book has its target already: not looked at
    BOOK_VERDICT_NB
} BookVerdict;

typedef struct {
    uint64_t candidates, accepted, duplicates, outside, existing;
    uint64_t in_check, mirrors, family_capped; // rejected for those reasons
    uint64_t families;                         // distinct families among accepted lines
    uint64_t per_ply[BOOKSTORE_PLY_MAX + 1];   // accepted positions by ply
    uint64_t first_move[BOOKSTORE_MOVE_NB];    // accepted lines by their first move
    // Scores in the window's view
    uint64_t hist_accepted[BOOKSTORE_BINS]; // verification scores of accepted ones
    uint64_t hist_all[BOOKSTORE_BINS];      // ... of every candidate
} BookstoreStats;

typedef enum {
    BOOKSTORE_OK,
    BOOKSTORE_ERR_IO,
    BOOKSTORE_ERR_NOMEM,
    BOOKSTORE_STATUS_NB
} BookstoreStatus;

typedef struct Bookstore Bookstore;

const char *bookstore_strerror(BookstoreStatus st);

/// Creates (truncates) the EPD file at epd_path; with_moves builds the move book.
BookstoreStatus bookstore_open(Bookstore **out, const BookstoreConfig *cfg, const char *epd_path,
                               bool with_moves, char *why, size_t why_len);
/// Closes the EPD file and frees everything; bookstore_close(NULL) is a no-op.
void bookstore_close(Bookstore *bs);

/// A position of an existing book: never accepted again.
BookstoreStatus bookstore_exclude(Bookstore *bs, uint64_t key);
BookstoreStatus bookstore_offer(Bookstore *bs, const BookEntry *e, BookVerdict *verdict);
bool bookstore_full(const Bookstore *bs);
/// A score (Red's view) in the window's view.
int bookstore_view_score(const BookstoreConfig *cfg, int score, bool black_to_move);
/// Whether score (Red's view) of a position with that side to move lies in the window.
bool bookstore_in_window(const BookstoreConfig *cfg, int score, bool black_to_move);
/// The view's name in job files and reports: "red" or "side_to_move".
const char *bookstore_view_name(BookView v);
/// Distinct first moves of accepted lines.
int bookstore_distinct_first_moves(const BookstoreStats *st);

const BookstoreStats *bookstore_stats(const Bookstore *bs);
/// Heap bytes of the key set, and of the move book being built.
size_t bookstore_set_bytes(const Bookstore *bs);
size_t bookstore_moves_bytes(const Bookstore *bs);

/// Hands the EPD lines written so far to the kernel (no fsync: the journal is the record).
void bookstore_flush(Bookstore *bs);
/// Flushes the EPD file (and fsyncs it); writes the move book when one is built.
BookstoreStatus bookstore_finish(Bookstore *bs, const char *moves_path, char *why, size_t why_len);

/// The diversity report: positions per ply, first moves, families, rejections by reason,
/// verification scores.
void bookstore_report(const Bookstore *bs, FILE *out);
/// The same as a self-contained HTML page with SVG histograms.
BookstoreStatus bookstore_write_html(const Bookstore *bs, const char *path, const char *name);
/// A bin's lower bound in cp (INT32_MIN for the lowest).
int bookstore_bin_low(int bin);
/// Move text h2e2 (files a-i, ranks 0-9) of a Move value.
void bookstore_move_text(uint16_t move, char out[8]);
