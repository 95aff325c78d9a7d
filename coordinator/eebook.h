// SPDX-License-Identifier: MIT
// ElephantEye's opening book, BOOK.DAT: export of a weighted move book (.xqb) and a reader,
// so that books grown here serve ElephantEye and the GUIs that read its format.
//
// File format (checked against xqbase/eleeye: eleeye/book.h `BookStruct`, eleeye/book.cpp
// `GetBookMoves`, BOOK/MAKEBOOK.CPP `MakeBook`/`ParseFile`): no header, a flat array of
// 8-byte entries, little-endian, sorted by lock (ascending):
//   0 u32 lock: `dwLock1` of the position's ElephantEye Zobrist triple (below)
//   4 u16 move: src | dst << 8 on ElephantEye's 16x16 board: square = x + 16 * y with
//         x = file + 3 (a..i -> 3..11) and y = 12 - rank (rank 9 -> 3, rank 0 -> 12)
//   6 u16 weight: the reader picks a move with probability weight / sum of weights
// Of a position and its left-right mirror only the one with the smaller (lock1, lock0) is
// stored (both when equal: a symmetric position); the reader probes the position, then its
// mirror, and mirrors the moves it finds there. Entries of one lock are ordered by lock0,
// then move. A 32-bit lock can collide: the reader keeps only moves legal in the position.
//
// Zobrist triple (eleeye/pregen.h `ZobristStruct`, pregen.cpp `PreGenInit`,
// base/rc4prng.h `RC4Struct`): RC4 keyed with four zero bytes; each u32 is four output
// bytes, the first the lowest; the triple is (key, lock0, lock1) in that order; drawn first
// for the side to move (`zobrPlayer`), then for piece types 0..13 by squares 0..255. Types
// 0..6 are Red general, advisor, elephant, horse, chariot, cannon, soldier; 7..13 the same
// for Black (position.cpp `cnPieceTypes`, `AddPiece`). A position's triple is the XOR of its
// pieces' triples, and of `zobrPlayer` when Black is to move.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "movebook.h"

enum {
    EEBOOK_ENTRY_SIZE = 8,
    EEBOOK_WEIGHT_MAX = 65535, // summed weights saturate here
    EEBOOK_PROBE_MAX = 128     // moves of one position at most (ElephantEye's MAX_GEN_MOVES)
};
#define EEBOOK_FILE_MAX (1ull << 31) // larger files are refused by eebook_read

typedef struct {
    uint32_t lock;
    uint16_t move; // ElephantEye's encoding
    uint16_t weight;
} EebookEntry;

/// One move a position has in the book, in our encoding.
typedef struct {
    Move move;
    uint32_t weight;
} EebookMove;

typedef enum {
    EEBOOK_OK,
    EEBOOK_ERR_IO,
    EEBOOK_ERR_NOMEM,
    EEBOOK_ERR_FORMAT, // size not a multiple of 8, or locks out of order
    EEBOOK_STATUS_NB
} EebookStatus;

/// What an export did.
typedef struct {
    size_t positions; // book positions reached from the root and exported
    size_t moves;     // (position, move) entries of the move book exported
    size_t unreached; // entries of the move book whose position the walk never reached
    size_t entries;   // BOOK.DAT entries written (mirrors and duplicates merged)
    size_t saturated; // entries whose weight was capped at EEBOOK_WEIGHT_MAX
} EebookExportStats;

const char *eebook_strerror(EebookStatus st);

/// ElephantEye's (lock0, lock1) of a position.
void eebook_locks(const Board *b, uint32_t *lock0, uint32_t *lock1);
/// The same for the position's left-right mirror (files a <-> i).
void eebook_mirror_locks(const Board *b, uint32_t *lock0, uint32_t *lock1);
/// A square (a0 = 0) on ElephantEye's 16x16 board, and back (SQ_NONE when off the board).
int eebook_square(Square s);
Square eebook_square_from(int sq);
/// Moves between our encoding and ElephantEye's; eebook_move_from gives MOVE_NONE for a
/// move with a square off the board.
uint16_t eebook_move(Move m);
Move eebook_move_from(uint16_t wmv);
Move eebook_move_mirror(Move m);

/// Walks a move book from root (depth first, through every book move, each position once)
/// and builds the sorted BOOK.DAT entries, weights = the move book's counts (saturating).
/// *out is malloc'd (free it).
EebookStatus eebook_from_movebook(const MovebookEntry *e, size_t n, const Board *root,
                                  EebookEntry **out, size_t *out_n, EebookExportStats *st);
/// Writes entries to path ("<path>.tmp" then renamed).
EebookStatus eebook_write(const char *path, const EebookEntry *e, size_t n, char *why,
                          size_t why_len);
/// Reads and checks a whole file; *entries is malloc'd (free it).
EebookStatus eebook_read(const char *path, EebookEntry **entries, size_t *n, char *why,
                         size_t why_len);
/// The legal moves the book holds for a position, as ElephantEye's GetBookMoves finds them
/// (the position, else its mirror), heaviest first; returns how many (at most
/// EEBOOK_PROBE_MAX). *mirrored tells whether they came from the mirror.
int eebook_probe(const EebookEntry *e, size_t n, const Board *b, EebookMove *out, bool *mirrored);
