// SPDX-License-Identifier: MIT
// The weighted move book: for each position key on the way to a book's positions, the moves
// played from it, how many accepted lines went through each, and the mean score the shallow
// search gave the move. Built in memory by the coordinator, written as one sorted file that
// `xqforge book probe FEN` searches by bisection.
//
// File format (.xqb; all integers little-endian):
//   header, 32 bytes:
//     0  "XQMOVES" and a zero byte (8 bytes)
//     8  u32 format version (MOVEBOOK_VERSION)
//     12 u32 entry size in bytes (16)
//     16 u64 entry count
//     24 u32 CRC-32 (zlib) of all entry bytes
//     28 u32 zero
//   then the entries, sorted by key, then by count (largest first), then by move:
//     0  u64 position key (the Zobrist key of search/zobrist.h)
//     8  u16 move, from | to << 7 (squares 0..89, a0 = 0, file-major within a rank)
//     10 i16 mean shallow-search score of the move, centipawns from the mover's view
//     12 u32 count: accepted book lines that played this move here
// The file is written to "<path>.tmp" and renamed, so a reader never sees half of one.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define MOVEBOOK_VERSION     1u
#define MOVEBOOK_HEADER_SIZE 32u
#define MOVEBOOK_ENTRY_SIZE  16u
#define MOVEBOOK_FILE_MAX    (1ull << 32) // larger files are refused by movebook_read

typedef struct {
    uint64_t key;
    uint16_t move;
    int16_t score;
    uint32_t count;
} MovebookEntry;

typedef enum {
    MOVEBOOK_OK,
    MOVEBOOK_ERR_IO,
    MOVEBOOK_ERR_NOMEM,
    MOVEBOOK_ERR_FORMAT, // not a move book, another version, or a CRC or order mismatch
    MOVEBOOK_STATUS_NB
} MovebookStatus;

typedef struct Movebook Movebook;

const char *movebook_strerror(MovebookStatus st);

/// An empty book being built, or NULL. movebook_free(NULL) is a no-op.
Movebook *movebook_new(void);
void movebook_free(Movebook *b);
/// Counts one line playing move from key with the given score.
MovebookStatus movebook_add(Movebook *b, uint64_t key, uint16_t move, int score);
/// Distinct (key, move) entries, and the heap bytes held.
size_t movebook_entries(const Movebook *b);
size_t movebook_bytes(const Movebook *b);
MovebookStatus movebook_write(const Movebook *b, const char *path, char *why, size_t why_len);

/// Reads and checks a whole file; *entries is malloc'd (free it).
MovebookStatus movebook_read(const char *path, MovebookEntry **entries, size_t *n, char *why,
                             size_t why_len);
/// The entries of key: returns how many, *first the index of the first.
size_t movebook_probe(const MovebookEntry *e, size_t n, uint64_t key, size_t *first);
