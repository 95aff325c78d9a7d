// SPDX-License-Identifier: MIT
// Static exchange evaluation: the material balance of the capture sequence on one point,
// each side recapturing with its least valuable piece. Xiangqi's screens make this subtle:
// removing a piece can give a cannon its screen or take it away, and can free a horse leg
// or elephant eye, so attackers are recomputed after every capture. Pins are ignored.
#pragma once

#include "board.h"

extern const int see_piece_value[PIECE_TYPE_NB];

/// Whether the exchange started by m gains at least threshold (centipawns).
bool see_ge(const Board *b, Move m, int threshold);
