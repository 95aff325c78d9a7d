// SPDX-License-Identifier: MIT
// Fairy-Stockfish's training data "bin" format for xiangqi: one 72-byte PackedSfenValue a
// position, as Fairy-Stockfish's variant tools (variant-nnue-tools: gensfen, convert_bin,
// learn) read and write it for boards that fit 512 bits. Written from the format's
// description, so that positions files (.xqp) can train other tools' nets.
//
// Record (PSV_RECORD = 72 bytes, little-endian):
//   64 bytes: the packed position, a bit stream (bit k is bit k % 8 of byte k / 8; an n-bit
//     number is written lowest bit first), zero after its end:
//       1 bit side to move (0 Red, 1 Black); 7 bits Red's general, 7 bits Black's (the
//       point rank * 9 + file, a0 = 0); the points from rank 9 down to rank 0, files a..i,
//       generals left out: an empty point is one 0 bit, a piece 5 bits of Huffman code
//       (chariot 1, advisor 3, cannon 5, soldier 7, horse 9, elephant 11: the code of the
//       piece type's index in the variant plus one, 2 * index + 1) and 1 bit colour; 2 x 7 x
//       5 bits of pieces in hand (0); 4 bits castling (0); 1 bit en passant (0); 6 bits the
//       50-move counter (0: a record has no history); 8 + 8 bits the full move number,
//       1 + (ply - black to move) / 2; 1 bit the counter's 7th bit.
//   i16 score (centipawns, side to move: as convert_bin of the plain text keeps it),
//   u16 move (Fairy-Stockfish's move on its 12-file board: from << 7 | to, a point
//     rank * 12 + file), u16 ply, i8 result for the side to move (1, 0, -1), u8 0.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "posdata.h"

enum { PSV_RECORD = 72, PSV_SFEN_BYTES = 64 };

/// Writes r as one record. The score is clamped to int16; a ply past 65535 is 65535.
void psv_encode(const PosRecord *r, uint8_t out[PSV_RECORD]);

/// Reads one record back (depth and game are 0: the format has neither). Returns 0, or -1
/// with why: a stream that is not a xiangqi position (an unknown code, pieces in hand,
/// castling, a board that board_set_fen refuses), a move off the board or not a plain move,
/// a result other than 1, 0, -1.
int psv_decode(const uint8_t in[PSV_RECORD], PosRecord *out, char *why, size_t why_len);
