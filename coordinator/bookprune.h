// SPDX-License-Identifier: MIT
// Books pruned by the games played on them (as Stockfish pruned its test books, official-
// stockfish/books PR #41): the journals of game runs that played an EPD book give each exit
// (opening line) its games, Red's score and draw rate; an exit with at least min_games games
// whose draw rate lies outside [draw_min, draw_max] is removed, every other exit is kept.
//
// A run is matched to the book by content: the "openings" item of its journal's identity is
// the 64-bit FNV-1a of the openings file's bytes (job/identity.c), and must equal the hash of
// the book given; a run of another book (or of a builtin set, or one that read the file as
// PGN or cut to plies) is refused by name. Result records carry the index of the opening in
// the book as the run loaded it (games/openings.c: blank, '#' and unparsable lines skipped),
// and the book is read here the same way, so an index names the same line.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "openings.h"
#include "report.h"
#include "wire.h"

typedef struct {
    uint64_t games, red_wins, draws, black_wins;
} PruneExit;

typedef enum {
    PRUNE_KEPT,      // enough games, draw rate in the window
    PRUNE_FEW_GAMES, // kept: fewer than min_games games
    PRUNE_LOW_DRAW,  // removed: draw rate below draw_min
    PRUNE_HIGH_DRAW, // removed: draw rate above draw_max
    PRUNE_VERDICT_NB
} PruneVerdict;

typedef enum {
    BOOKPRUNE_OK,
    BOOKPRUNE_ERR_IO,
    BOOKPRUNE_ERR_NOMEM,
    BOOKPRUNE_ERR_RUN, // a run that did not play this book, or whose journal cannot be read
    BOOKPRUNE_STATUS_NB
} BookpruneStatus;

typedef struct {
    char **lines;     // the book's exits: each parsed line as written (no newline)
    int *line_no;     // its line number in the file
    PruneExit *exits; // tallies, one per line
    int count;
    char hash[17]; // the file's identity hash (16 hex digits)
    uint64_t runs, games, pairs;
} BookPrune;

const char *bookprune_strerror(BookpruneStatus st);
const char *bookprune_verdict_name(PruneVerdict v);

/// Tallies one played pair into exits[pair->opening] (the caller checked the index); aborted
/// games (no outcome) are not counted. Returns the games counted.
int bookprune_tally_pair(PruneExit *exits, const WirePair *pair);
/// A game run's report section: the field "openings_played" (exits played, the pruning window
/// and how many exits it would remove, the REPORT_OPENING_ROWS most played exits) and the table
/// "openings" of the REPORT_OPENING_TABLE most played on the page. exits may be NULL (nothing
/// played yet).
enum { REPORT_OPENING_ROWS = 1000, REPORT_OPENING_TABLE = 20 };
void bookprune_report(Report *r, const PruneExit *exits, const Openings *o);

/// Reads an EPD book: its lines as a run loads them, and its content hash.
BookpruneStatus bookprune_open(BookPrune *p, const char *book, char *why, size_t why_len);
void bookprune_close(BookPrune *p);
/// Adds the games of one run: run is the run's directory (its journal.xqj) or a journal file.
BookpruneStatus bookprune_add_run(BookPrune *p, const char *run, char *why, size_t why_len);
PruneVerdict bookprune_verdict(const PruneExit *e, uint64_t min_games, double draw_min,
                               double draw_max);
/// Writes the kept lines to kept_path and the per-exit table (TSV) to table_path; counts
/// the verdicts into counts[PRUNE_VERDICT_NB].
BookpruneStatus bookprune_write(const BookPrune *p, uint64_t min_games, double draw_min,
                                double draw_max, const char *kept_path, const char *table_path,
                                uint64_t counts[PRUNE_VERDICT_NB], char *why, size_t why_len);
