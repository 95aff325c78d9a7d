// SPDX-License-Identifier: MIT
// 90-point bitboards in one unsigned 128-bit integer (bit = square). Used for piece sets;
// sliding moves use the rank/file occupancy words of board.h instead (see attacks.h).
#pragma once

#include "types.h"

typedef unsigned __int128 Bitboard;

static inline Bitboard bb_square(Square s) { return (Bitboard)1 << s; }
static inline bool bb_test(Bitboard b, Square s) { return (b >> s) & 1; }

static inline int bb_count(Bitboard b)
{
    return __builtin_popcountll((uint64_t)b) + __builtin_popcountll((uint64_t)(b >> 64));
}

/// Index of the lowest set bit; b must not be empty.
static inline Square bb_lsb(Bitboard b)
{
    uint64_t lo = (uint64_t)b;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(b >> 64));
}

/// Removes and returns the lowest set bit; b must not be empty.
static inline Square bb_pop(Bitboard *b)
{
    Square s = bb_lsb(*b);
    *b &= *b - 1;
    return s;
}
