// SPDX-License-Identifier: MIT
// The insides of the Texel tuner, shared by texel_data.c (datasets: writing, loading) and
// texel.c (loss, gradient, fit). Not for other modules: they see texel.h.
#pragma once

#include <stdint.h>

#include "texel.h"

/// One non-zero coefficient of a position's trace: its weight and how often it counts.
typedef struct {
    uint16_t id;
    int16_t coef;
} Term;

/// A rank's shard, as the fit reads it: the traces of all positions in one array (no
/// pointer per position: a million positions are a few allocations).
struct TexelSet {
    uint64_t n;
    uint64_t *start; // terms of position i: [start[i], start[i+1])
    Term *terms;
    uint8_t *phase, *result; // result: 0, 1, 2 (halves of a point for Red)
    uint32_t *game;          // the game of position i (texel_set_game)
};
