// SPDX-License-Identifier: MIT
// perft: counts the leaf nodes of the legal move tree. The last ply is bulk-counted (legal
// moves counted, not made), as Fairy-Stockfish and Pikafish count it.
#pragma once

#include "board.h"

uint64_t perft(Board *b, int depth);

/// Splits the root moves over `threads` threads (each with its own board copy) and stores
/// the count in *nodes. Returns 0, or an errno value if memory or threads ran out.
int perft_parallel(const Board *b, int depth, int threads, uint64_t *nodes);
