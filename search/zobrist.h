// SPDX-License-Identifier: MIT
// Zobrist keys: one per (piece, point) and one for Black to move, fixed across runs and
// machines so that keys in books and journals stay valid.
#pragma once

#include "types.h"

extern uint64_t zobrist_psq[PIECE_NB][SQUARE_NB];
extern uint64_t zobrist_side;

void zobrist_init(void);
