// SPDX-License-Identifier: MIT
// Precomputed move tables.
//
// Why this representation: xiangqi's sliders (chariot, cannon) move along one rank or file of
// 9 or 10 points, so a lookup indexed by the point and the line's occupancy word (at most
// 2^10 entries) gives every chariot destination and every cannon capture at once, with no
// ray loops and no 128-bit magic multiplication (ElephantEye's approach, in a compact form).
// The stepping pieces (general, advisor, elephant, horse, soldier) use short per-point lists
// that carry the point that blocks them (elephant eye, horse leg). Piece sets are 128-bit
// bitboards (bitboard.h) so that whole sets can be counted and iterated cheaply.
#pragma once

#include "types.h"

/// One entry of a line table: bits 0-9 the empty points a chariot reaches (also a cannon's
/// quiet moves), bits 10-19 the first occupied point each way (chariot captures), bits 20-29
/// the second occupied point each way (cannon captures).
typedef uint32_t LineEntry;
#define LINE_QUIET(e)  ((e)&0x3ff)
#define LINE_HIT(e)    (((e) >> 10) & 0x3ff)
#define LINE_SCREEN(e) (((e) >> 20) & 0x3ff)

extern LineEntry attacks_rank[FILE_NB][1 << FILE_NB]; // along a rank: [file][rank occupancy]
extern LineEntry attacks_file[RANK_NB][1 << RANK_NB]; // along a file: [rank][file occupancy]

/// Points a stepping piece can go to from one point, each with the point that must be empty
/// (horse leg, elephant eye; equal to the target for pieces that cannot be blocked).
typedef struct {
    uint8_t n;
    uint8_t to[8];
    uint8_t via[8];
} StepList;

extern StepList attacks_king[SQUARE_NB];
extern StepList attacks_advisor[SQUARE_NB];
extern StepList attacks_elephant[SQUARE_NB];
extern StepList attacks_horse[SQUARE_NB];
extern StepList attacks_soldier[COLOR_NB][SQUARE_NB];
/// Horses that attack a point: to[] holds the horse's square, via[] its leg.
extern StepList attacks_horse_from[SQUARE_NB];

/// Fills the tables; called once before any other use (board_init() does it).
void attacks_init(void);

bool attacks_in_palace(Color c, Square s);
bool attacks_advisor_point(Color c, Square s);
bool attacks_elephant_point(Color c, Square s);

/// For a general on ksq: bit 0 set where a piece leaving that point may expose the general
/// (its rank, its file, the four horse-leg points around it); bit 1 set where a piece
/// arriving may do so (its rank and file: the arriving piece can become a cannon screen).
/// Moves touching neither need no legality test when the side to move is not in check.
/// Bit 2: a horse there is a jump away from ksq; bit 3: a soldier there is a step away.
extern uint8_t attacks_exposure[SQUARE_NB][SQUARE_NB];
