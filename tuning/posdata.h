// SPDX-License-Identifier: MIT
// Training positions for NNUE (kind = datagen writes them, kind = train reads them): each a
// position with its search score, the best move, the game's result and the ply; by default a
// quiet one (side to move not in check, best move not a capture: [datagen] skip_in_check,
// skip_capture).
//
// File (".xqp"), little-endian:
//   header, 32 bytes: "XQPOS\0\0\0" (8), u32 version (POSDATA_VERSION), u32 record size
//     (POSDATA_RECORD), u64 record count, u32 records per block (POSDATA_BLOCK), u32 CRC-32 of
//     bytes 0..27
//   records of POSDATA_RECORD bytes; after every POSDATA_BLOCK records (and after the last),
//     u32 CRC-32 of the block's record bytes.
// Record (POSDATA_RECORD = 64 bytes):
//     45 bytes: the 90 points as nibbles (piece code as in types.h, low nibble first, points
//       rank-major from a0), u8 side to move (0 Red, 1 Black), u8 result for Red (0 loss,
//       1 draw, 2 win), u8 flags (0), i16 score (centipawns for the side to move, the search's
//       score at the position, clamped to +-POSDATA_SCORE_MAX), u16 best move (types.h
//       encoding), u16 ply (plies from the game's start position), u16 depth (the search's
//       completed depth), u32 game (the game's number in the run), zero padding to 64.
// Deduplication (per run) is by the position's Zobrist key, computed from the board.
// A damaged block is refused with its record range; a record whose board is not a legal
// position is refused by its index.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

enum {
    POSDATA_VERSION = 1,
    POSDATA_HEADER = 32,
    POSDATA_RECORD = 64,
    POSDATA_BLOCK = 1024,
    POSDATA_SCORE_MAX = 30000,
    POSDATA_MAX_RECORDS = 1 << 28
};

typedef enum {
    POSDATA_OK,
    POSDATA_ERR_IO,
    POSDATA_ERR_FORMAT, // bad magic, header CRC or record size
    POSDATA_ERR_VERSION,
    POSDATA_ERR_TRUNCATED, // fewer or more bytes than the header's count
    POSDATA_ERR_CHECKSUM,  // a block whose CRC-32 does not match
    POSDATA_ERR_POSITION,  // a record that is not a legal position (named by its index)
    POSDATA_ERR_NOMEM,
    POSDATA_STATUS_NB
} PosdataStatus;

const char *posdata_strerror(PosdataStatus st);

typedef struct {
    Board board; // the position (no history)
    int score;   // centipawns for the side to move
    Move move;   // the best move
    int ply, depth;
    uint32_t game;
    double red_result; // 0, 0.5, 1
} PosRecord;

/// Encodes/decodes one 64-byte record. Decoding validates the board as strictly as a FEN.
void posdata_encode(const Board *b, int score, Move best, int ply, int depth, uint32_t game,
                    double red_result, uint8_t out[POSDATA_RECORD]);
/// The FEN of a board in the format's 45 bytes of nibbles (also Texel datasets' board), side
/// 0 (Red) or 1 (Black) to move, counters 0 1; checking it is board_set_fen's work.
void posdata_board_fen(const uint8_t nibbles[45], int side, char *fen, size_t len);
PosdataStatus posdata_decode(const uint8_t in[POSDATA_RECORD], PosRecord *out, char *why,
                             size_t why_len);

// ---- Files ----------------------------------------------------------------------------

typedef struct PosWriter PosWriter;

/// Creates path (through "path.tmp", renamed on close), or with append = true reopens an
/// existing file to add records after its last (the file is checked first; a missing file
/// is created).
PosdataStatus posdata_writer_open(const char *path, bool append, PosWriter **out, char *why,
                                  size_t why_len);
PosdataStatus posdata_writer_add(PosWriter *w, const uint8_t rec[POSDATA_RECORD]);
uint64_t posdata_writer_count(const PosWriter *w);
/// Writes the last block's checksum and the header's count, syncs, renames; frees w.
PosdataStatus posdata_writer_close(PosWriter *w, char *why, size_t why_len);

/// Drops a new file's records (removes "path.tmp"; an appended file keeps what it had before
/// only if nothing was added); frees w.
void posdata_writer_discard(PosWriter *w);

/// Reads a file's records into memory after checking the header and every block's CRC:
/// the records i with i % shards == shard (shards = 1: all), in file order. *records is
/// malloc'd (free it); *count their number; *total (may be NULL) the file's count.
PosdataStatus posdata_read_file(const char *path, int shard, int shards, uint8_t **records,
                                uint64_t *count, uint64_t *total, char *why, size_t why_len);
